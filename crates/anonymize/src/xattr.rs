//! Extended attributes: their names are names (`path`), their values data, except the
//! values the kernel reads as permissions.
//!
//! * A name keeps its namespace (`user.`, `trusted.`, `security.`, `system.`: the kernel's,
//!   which decides who may set it and how restore treats it); the rest, which programs
//!   choose (`user.checksum`, `user.<anything>`), is replaced by its pseudonym as one path
//!   component would be. Names the kernel or a security module defines and interprets
//!   ([`KERNEL_NAMES`]: ACLs, file capabilities, SELinux, Smack, AppArmor, IMA/EVM labels)
//!   stay, so that a replay sets what the program set.
//! * Values are data: `--data drop|digest` replaces them (in calls as any data buffer; in
//!   snapshots by zeros of the same length, as file contents are). POSIX ACLs
//!   (`system.posix_acl_access`, `system.posix_acl_default`) are permissions like mode bits,
//!   not data: they are kept whatever `--data` says, their user and group entries' ids
//!   replaced as owners are (`uid`, `gid`).

use std::collections::BTreeMap;

use ra_syscalls::Meaning;

use super::{DataMode, Field, Mapper};
use ra_trace::{ArgValue, Event};

/// Namespaces of extended attribute names (the part before and with the first dot).
const NAMESPACES: [&[u8]; 4] = [b"user.", b"trusted.", b"security.", b"system."];

/// Names the kernel or a security module defines, kept as they are.
pub const KERNEL_NAMES: &[&[u8]] = &[
    b"system.posix_acl_access",
    b"system.posix_acl_default",
    b"system.nfs4_acl",
    b"system.nfs4_dacl",
    b"system.nfs4_sacl",
    b"system.richacl",
    b"security.capability",
    b"security.selinux",
    b"security.apparmor",
    b"security.ima",
    b"security.evm",
    b"security.SMACK64",
    b"security.SMACK64EXEC",
    b"security.SMACK64MMAP",
    b"security.SMACK64TRANSMUTE",
    b"security.SMACK64IPIN",
    b"security.SMACK64IPOUT",
];

/// Whether `rest` after some namespace is a name [`KERNEL_NAMES`] holds (a pseudonym must
/// not become one: `security.<pseudonym>` would be read by the kernel).
pub fn is_kernel_rest(rest: &[u8]) -> bool {
    KERNEL_NAMES.iter().any(|k| {
        NAMESPACES.iter().any(|ns| k.len() == ns.len() + rest.len() && k.starts_with(ns))
            && k.ends_with(rest)
    })
}

/// One attribute name (without NUL) through `m`: the namespace kept, the rest replaced by a
/// pseudonym of its length ([`Mapper::xattr_name`]).
pub fn map_name(m: &mut dyn Mapper, name: &[u8]) -> Vec<u8> {
    if KERNEL_NAMES.contains(&name) || name.is_empty() {
        return name.to_vec();
    }
    match NAMESPACES.iter().find(|ns| name.starts_with(ns) && name.len() > ns.len()) {
        Some(ns) => [*ns, m.xattr_name(&name[ns.len()..]).as_slice()].concat(),
        None => m.xattr_name(name),
    }
}

/// Whether a `listxattr`-family call or `fs` operation answered with a size computed from a
/// file's names that the trace does not show: a size query (size 0: the list's length) or
/// `ERANGE` (the list is longer than the size given). Such an answer is right for the
/// pseudonyms because they keep every name's length; a name that had to be lengthened
/// (`xattr_lengthened`) could make it wrong.
pub fn is_size_answer(ev: &Event) -> bool {
    let size = if ra_trace::fsop::is_fs_event(ev) {
        if ev.name != "listxattr" {
            return false;
        }
        ev.extra_int("length")
    } else {
        let Some(def) = ev.def else { return false };
        let Some(capacity) = def.args.iter().find_map(|a| match a.meaning {
            Meaning::XattrNames { capacity } => Some(capacity),
            _ => None,
        }) else {
            return false;
        };
        match ev.args.get(capacity) {
            Some(ArgValue::Int(n)) => Some(*n),
            _ => None,
        }
    };
    ev.errno == Some(libc::ERANGE) || (size == Some(0) && ev.ret.is_some_and(|r| r > 0))
}

/// A name as calls store it, with its NUL.
pub fn map_c_name(m: &mut dyn Mapper, name: &[u8]) -> Vec<u8> {
    match name.strip_suffix(b"\0") {
        Some(n) => [map_name(m, n).as_slice(), b"\0"].concat(),
        None => map_name(m, name),
    }
}

/// A `listxattr` list: names, each NUL-terminated.
pub fn map_list(m: &mut dyn Mapper, list: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(list.len() + 32);
    let body = list.strip_suffix(b"\0").unwrap_or(list);
    if list.is_empty() {
        return out;
    }
    for n in body.split(|&b| b == 0) {
        out.extend_from_slice(&map_name(m, n));
        out.push(0);
    }
    if !list.ends_with(b"\0") {
        out.pop();
    }
    out
}

/// Whether an attribute (name with or without its NUL) holds a POSIX ACL.
pub fn is_acl(name: &[u8]) -> bool {
    let n = name.strip_suffix(b"\0").unwrap_or(name);
    n == b"system.posix_acl_access" || n == b"system.posix_acl_default"
}

/// A POSIX ACL's value (`posix_acl_xattr_header` and 8-byte entries: tag, permissions, id)
/// with the ids of its `ACL_USER` and `ACL_GROUP` entries replaced; `None` when malformed.
pub fn map_acl(m: &mut dyn Mapper, v: &[u8]) -> Option<Vec<u8>> {
    const ACL_USER: u16 = 0x02;
    const ACL_GROUP: u16 = 0x08;
    if v.len() < 4 || (v.len() - 4) % 8 != 0 {
        return None;
    }
    let mut out = v.to_vec();
    for e in out[4..].chunks_exact_mut(8) {
        let f = match u16::from_le_bytes([e[0], e[1]]) {
            ACL_USER => Field::Uid,
            ACL_GROUP => Field::Gid,
            _ => continue,
        };
        if m.on(f) {
            let id = u32::from_le_bytes(e[4..8].try_into().expect("4 bytes"));
            let id = if id == u32::MAX { -1 } else { i64::from(id) };
            e[4..8].copy_from_slice(&(m.id(f, id) as u32).to_le_bytes());
        }
    }
    Some(out)
}

/// A value as kept data (`--data keep`) or kernel-read permissions: ACL ids replaced.
pub fn map_value(m: &mut dyn Mapper, name: &[u8], v: &[u8]) -> Option<Vec<u8>> {
    if is_acl(name) && (m.on(Field::Uid) || m.on(Field::Gid)) {
        map_acl(m, v)
    } else {
        None
    }
}

/// A snapshot entry's attributes: names through `m`, values as `data` says (zeros of their
/// length unless kept; ACLs always kept, their ids replaced).
pub fn map_all(
    m: &mut dyn Mapper,
    x: BTreeMap<Vec<u8>, Vec<u8>>,
    data: DataMode,
) -> BTreeMap<Vec<u8>, Vec<u8>> {
    x.into_iter()
        .map(|(n, v)| {
            let v = match map_value(m, &n, &v) {
                Some(v) => v,
                None if data != DataMode::Keep && !is_acl(&n) => vec![0; v.len()],
                None => v,
            };
            let n = if m.on(Field::Path) { map_name(m, &n) } else { n };
            (n, v)
        })
        .collect()
}
