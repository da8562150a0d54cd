//! Socket addresses (`struct sockaddr` arguments and results: `bind`, `connect`, `accept`,
//! `getsockname`, `sendto`, `recvfrom`, ...), by family:
//!
//! * `AF_UNIX`: a path is a path (`path`); an abstract name (a leading NUL) is a name, one
//!   pseudonym (`path`); unnamed addresses stay. The bytes after a path's NUL (the caller's
//!   memory, never read by the kernel) are zeroed whatever the fields.
//! * `AF_INET`: the address (`hostname`), unless it is unspecified, loopback (127/8) or the
//!   broadcast address, becomes a keyed, collision-free one in 10.0.0.0/8; the port stays.
//! * `AF_INET6`: likewise; `::`, `::1` stay, an IPv4-mapped address maps its IPv4 part, any
//!   other becomes `fd00::/32` followed by the address's 12-character pseudonym.
//! * `AF_NETLINK`: a nonzero port id is a process id (`pid`).
//! * Other families (packet sockets carry hardware addresses): everything after the family
//!   is zeroed (`hostname`), the length kept.
//!
//! IPv4 addresses are not stored in the reverse table; the others follow their field.

use super::{map_path, Field, Mapper, PSEUDONYM_CHARS};

const AF_UNIX: u16 = 1;
const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;
const AF_NETLINK: u16 = 16;

/// The prefix of a replaced IPv6 address (a unique local address).
const V6_PREFIX: [u8; 4] = [0xfd, 0, 0, 0];

/// An address rewritten; `None` when nothing changes.
pub fn map(m: &mut dyn Mapper, b: &[u8]) -> Option<Vec<u8>> {
    let family = u16::from_le_bytes(b.get(..2)?.try_into().ok()?);
    let mut out = b.to_vec();
    match family {
        AF_UNIX if b.len() > 2 && m.on(Field::Path) => {
            out.truncate(2);
            if b[2] == 0 {
                out.push(0);
                out.extend_from_slice(&m.string(Field::Path, &b[3..]));
            } else {
                let path = &b[2..];
                let end = path.iter().position(|&c| c == 0).unwrap_or(path.len());
                out.extend_from_slice(&map_path(m, &path[..end]));
                out.extend_from_slice(&tail(m, &path[end..]));
            }
        }
        // A path kept: what follows its NUL still goes.
        AF_UNIX if b.len() > 2 && b[2] != 0 && m.forward() => {
            let end = 2 + b[2..].iter().position(|&c| c == 0).unwrap_or(b.len() - 2);
            out.truncate(end);
            out.extend_from_slice(&tail(m, &b[end..]));
        }
        AF_INET if b.len() >= 8 && m.on(Field::Hostname) => {
            let a: [u8; 4] = b[4..8].try_into().expect("4 bytes");
            out[4..8].copy_from_slice(&map_v4(m, a));
        }
        AF_INET6 if b.len() >= 24 && m.on(Field::Hostname) => {
            let a: [u8; 16] = b[8..24].try_into().expect("16 bytes");
            out[8..24].copy_from_slice(&map_v6(m, a));
        }
        AF_NETLINK if b.len() >= 8 && m.on(Field::Pid) => {
            let p = u32::from_le_bytes(b[4..8].try_into().expect("4 bytes"));
            if p > 0 && p <= i32::MAX as u32 {
                out[4..8].copy_from_slice(&(m.id(Field::Pid, i64::from(p)) as u32).to_le_bytes());
            }
        }
        AF_UNIX | AF_INET | AF_INET6 | AF_NETLINK => return None,
        _ if m.forward() && m.on(Field::Hostname) => out[2..].iter_mut().for_each(|x| *x = 0),
        _ => return None,
    }
    (out != b).then_some(out)
}

/// What follows a socket path's NUL, up to the length the caller passed: the caller's memory
/// (a `sockaddr_un` on its stack, 108 bytes of path whatever the path's length), which the
/// kernel never reads, and in which a recording was seen to carry a file time and pointers.
/// Anonymized, it is zeros (the NUL and the length stay); back, it stays as it is.
fn tail(m: &dyn Mapper, t: &[u8]) -> Vec<u8> {
    if m.forward() {
        vec![0; t.len()]
    } else {
        t.to_vec()
    }
}

fn map_v4(m: &mut dyn Mapper, a: [u8; 4]) -> [u8; 4] {
    let v = u32::from_be_bytes(a);
    if v == 0 || v == u32::MAX || a[0] == 127 || !m.forward() {
        return a;
    }
    (m.id(Field::Hostname, i64::from(v)) as u32).to_be_bytes()
}

fn map_v6(m: &mut dyn Mapper, a: [u8; 16]) -> [u8; 16] {
    let loopback = u128::from_be_bytes(a) <= 1;
    if loopback {
        return a;
    }
    if a[..10].iter().all(|&x| x == 0) && a[10..12] == [0xff, 0xff] {
        let mut out = a;
        out[12..].copy_from_slice(&map_v4(m, a[12..].try_into().expect("4 bytes")));
        return out;
    }
    let mut out = [0u8; 16];
    if m.forward() {
        let p = m.string(Field::Hostname, &a);
        if p.len() != PSEUDONYM_CHARS {
            // A lengthened pseudonym (a collision) does not fit: its first characters do,
            // and its hash makes them as unlikely to collide.
            out[..4].copy_from_slice(&V6_PREFIX);
            out[4..].copy_from_slice(&blake3::hash(&p).as_bytes()[..12]);
            return out;
        }
        out[..4].copy_from_slice(&V6_PREFIX);
        out[4..].copy_from_slice(&p);
        out
    } else if a[..4] == V6_PREFIX {
        let o = m.string(Field::Hostname, &a[4..]);
        o.try_into().unwrap_or(a)
    } else {
        a
    }
}
