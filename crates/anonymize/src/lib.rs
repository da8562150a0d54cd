//! Trace anonymization (`reanimator anonymize`, Tracefs' anonymizing output filter done
//! offline): a trace rewritten with chosen fields replaced by keyed pseudonyms, consistently
//! — the same value gives the same pseudonym in every call, snapshot entry and trace fact —
//! so that the anonymized trace still replays to a tree of the same shape.
//!
//! * Path components are replaced one by one ([`map_path`]), by a function of the component
//!   alone: absolute and relative paths, paths relative to a directory descriptor, symlink
//!   targets, `readlink`/`getcwd` results, `getdents` listings and snapshot paths all agree
//!   without following the program's working directory. `.`, `..` and empty components stay,
//!   and so do the kernel's names under `/proc`, `/sys` and `/dev` (replay treats them as the
//!   kernel's; `/proc/<pid>` gets the pid's pseudonym when pids are replaced); what follows a
//!   magic link (`/proc/self/cwd/…`, `/proc/<pid>/fd/<n>/…`) is the path it names there.
//! * Every fact has a rule ([`facts`]), every column of every extent type written one (docs/
//!   ANONYMIZE.md "Every column"); what no rule covers is left out. Extended attributes
//!   ([`xattr`]), socket addresses ([`sockaddr`]) and times ([`time`]) have modules of their
//!   own.
//! * Which arguments hold what comes from the registry only: [`ArgKind::Path`],
//!   [`ra_syscalls::Meaning`] (paths returned in buffers, listings, user/group/process ids),
//!   the structs that carry names or owners (`stat`, `statx`, `sockaddr_un`), and
//!   [`ArgKind::is_bulk`] for data.
//! * Pseudonyms are irreversible keyed hashes ([`pseudonym`]); for the fields asked to be
//!   reversible, the pseudonym → original table is stored in the output, encrypted
//!   ([`table`]), and [`reverse_trace`] puts the originals back.
//!
//! Memory: the pseudonym tables grow with the number of distinct values replaced (names,
//! ids, strings), and one snapshot state's entries are held to sort them again by their new
//! paths; events and data buffers stream. Format: docs/TRACE_FORMAT.md §3.11.
#![warn(missing_docs)]

pub mod facts;
pub mod pseudonym;
pub mod sockaddr;
pub mod table;
pub mod time;
pub mod xattr;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use ra_fsstate::{ContentSource, Digest, Entry, Kind};
use ra_syscalls::{ArgKind, Len, Meaning, Ret, Struct, SyscallDef};

use ra_trace::key::{Key, Purpose};
use ra_trace::snapshot::Phase;
use ra_trace::{ArgValue, Event, ExtraValue};
use ra_trace::{Error, Result, TraceReader, TraceWriter, WriterConfig};

pub use pseudonym::{extension, Pseudonymizer, Reverser, PSEUDONYM_CHARS};

/// A field `anonymize --fields` can replace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// Path components: call paths, symlink targets, returned paths, listings, snapshot
    /// paths, xattr names, names programs choose, the facts that are paths.
    Path,
    /// User ids: the caller's, `chown`'s owner, `stat` results' owner, snapshot owners.
    Uid,
    /// Group ids, likewise.
    Gid,
    /// Process and thread ids: the caller's pid, tid, ppid, session and group ids, pid
    /// arguments and results, `F_GETLK`'s lock owner, `/proc/<pid>`.
    Pid,
    /// The thread's command name (traces of `reanimator fs` record it; system-call traces
    /// do not).
    Comm,
    /// The `hostname` fact and network addresses.
    Hostname,
    /// Command lines: `execve`'s argv strings, the values of its environment strings, the
    /// `command` fact (word by word).
    Cmdline,
    /// Data buffers (see [`DataMode`]).
    Data,
    /// Times: the trace's clock shifted to start at a chosen origin, file times made during
    /// the recording shifted alike and older ones replaced ([`time`]). (Last: its code, the
    /// position in [`Field::ALL`], is stored in reverse tables.)
    Time,
}

impl Field {
    /// Every field, in code order: a field's position here is the code reverse tables store
    /// for it, so new fields go at the end.
    pub const ALL: [Field; 9] = [
        Field::Path,
        Field::Uid,
        Field::Gid,
        Field::Pid,
        Field::Comm,
        Field::Hostname,
        Field::Cmdline,
        Field::Data,
        Field::Time,
    ];

    /// The field's name in `--fields`/`--reversible` lists, in the `anonymized_fields` fact
    /// and in `anonymize --json`'s report.
    pub fn name(self) -> &'static str {
        match self {
            Field::Path => "path",
            Field::Uid => "uid",
            Field::Gid => "gid",
            Field::Pid => "pid",
            Field::Comm => "comm",
            Field::Hostname => "hostname",
            Field::Cmdline => "cmdline",
            Field::Data => "data",
            Field::Time => "time",
        }
    }

    /// The field [`Field::name`] calls `s`; `None` for any other string (`all` included:
    /// [`parse_fields`] expands that).
    pub fn from_name(s: &str) -> Option<Field> {
        Field::ALL.iter().copied().find(|f| f.name() == s)
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(c: u8) -> Option<Field> {
        Field::ALL.get(usize::from(c)).copied()
    }

    /// Fields whose values are ids (the others are byte strings); a time's table holds the
    /// replaced seconds of file times.
    fn is_id(self) -> bool {
        matches!(self, Field::Uid | Field::Gid | Field::Pid | Field::Time)
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parse a comma-separated field list (`path,uid,...`; `all` = every field but `data`).
pub fn parse_fields(s: &str) -> std::result::Result<Vec<Field>, String> {
    let mut out = Vec::new();
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if w == "all" {
            out.extend(Field::ALL.iter().copied().filter(|&f| f != Field::Data));
            continue;
        }
        match Field::from_name(w) {
            Some(f) => out.push(f),
            None => {
                let valid: Vec<&str> = Field::ALL.iter().map(|f| f.name()).collect();
                return Err(format!(
                    "unknown field `{w}`; valid fields: {}, all",
                    valid.join(", ")
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// What becomes of data buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataMode {
    /// Kept as they are.
    Keep,
    /// Left out, as `record --data none` leaves them (`buffer_not_captured`).
    Drop,
    /// Replaced by their length and BLAKE3 digest, as `record --data hash` stores them.
    Digest,
}

impl DataMode {
    /// `keep`, `drop` or `digest`: the value of the `anonymized_data` fact ([`INFO_DATA`]).
    pub fn name(self) -> &'static str {
        match self {
            DataMode::Keep => "keep",
            DataMode::Drop => "drop",
            DataMode::Digest => "digest",
        }
    }
}

/// How to anonymize.
#[derive(Clone, Debug)]
pub struct Options {
    /// Fields to replace (`Data` is governed by `data`).
    pub fields: Vec<Field>,
    /// Fields whose originals go into the encrypted reverse table.
    pub reversible: Vec<Field>,
    /// What becomes of data buffers; anything but [`DataMode::Keep`] adds [`Field::Data`] to
    /// the `anonymized_fields` fact.
    pub data: DataMode,
    /// Keep a file name's extension (`report.pdf` → `<pseudonym>.pdf`).
    pub keep_extensions: bool,
    /// Path components kept as they are wherever they occur (`usr`, `lib`, ...).
    pub keep_names: Vec<Vec<u8>>,
    /// With [`Field::Time`]: the instant (seconds since the Unix epoch) the trace's start
    /// becomes.
    pub time_origin: i64,
    /// How the output's extents are stored (compression).
    pub ds: dataseries::WriterOptions,
}

/// What a run replaced.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Events written to the output (system calls and `reanimator fs` operations).
    pub events: u64,
    /// Snapshot entries written, of the start and the end state together.
    pub snapshot_entries: u64,
    /// Per field: (occurrences replaced, distinct values).
    pub fields: BTreeMap<Field, (u64, u64)>,
    /// Data buffers dropped or digested.
    pub data_buffers: u64,
    /// Pseudonyms that had to be lengthened to stay distinct.
    pub collisions: u64,
    /// Extended attribute names whose pseudonym is longer than the name
    /// ([`Pseudonymizer::xattr_name`]).
    pub xattr_names_lengthened: u64,
    /// Size answers of the `listxattr` family ([`xattr::is_size_answer`]) in the trace; when
    /// a name was lengthened, any of them may no longer be what a replay gets.
    pub xattr_size_answers: u64,
    /// Entries stored in the reverse table.
    pub table_entries: u64,
    /// [`Key::fingerprint`] of the key file used (16 hex digits), as the
    /// `anonymized_key_fingerprint` fact records it.
    pub key_fingerprint: String,
}

impl Summary {
    /// The size answers that a replay of the output may see otherwise (an upper bound: the
    /// trace does not say which names a size query counted): all of them once a name was
    /// lengthened, none otherwise.
    pub fn xattr_size_answers_not_kept(&self) -> u64 {
        if self.xattr_names_lengthened > 0 {
            self.xattr_size_answers
        } else {
            0
        }
    }
}

/// Replaces values in one direction: a [`Pseudonymizer`] (anonymize) or a [`Reverser`].
pub trait Mapper {
    /// Whether field `f` is replaced.
    fn on(&self, f: Field) -> bool;
    /// One path component, or one string of field `f`.
    fn string(&mut self, f: Field, v: &[u8]) -> Vec<u8>;
    /// An extended attribute's name after its namespace (`path`), its length kept
    /// ([`Pseudonymizer::xattr_name`]).
    fn xattr_name(&mut self, v: &[u8]) -> Vec<u8>;
    /// An id of field `f` (user, group or process id, an IPv4 address as an integer for
    /// [`Field::Hostname`], a file time's seconds for [`Field::Time`]);
    /// [`Pseudonymizer::id`] says which values stay.
    fn id(&mut self, f: Field, v: i64) -> i64;
    /// An instant of the trace's own clock (ns; [`time`]).
    fn clock(&mut self, ns: i64) -> i64;
    /// The seconds of a file time ([`time`]).
    fn file_secs(&mut self, s: i64) -> i64;
    /// True when anonymizing (lengths grow by the rules of `grow`).
    fn forward(&self) -> bool;
    /// Whether replacements count in the summary (not during the look-ahead pass).
    fn set_counting(&mut self, on: bool);
}

/// Anonymizing mapper.
pub struct Forward {
    /// Makes the pseudonyms and holds their tables.
    pub p: Pseudonymizer,
    /// The fields replaced ([`Mapper::on`]); any other value passes through unchanged.
    pub fields: Vec<Field>,
}

impl Mapper for Forward {
    fn on(&self, f: Field) -> bool {
        self.fields.contains(&f)
    }
    fn string(&mut self, f: Field, v: &[u8]) -> Vec<u8> {
        self.p.string(f, v)
    }
    fn xattr_name(&mut self, v: &[u8]) -> Vec<u8> {
        self.p.xattr_name(v)
    }
    fn id(&mut self, f: Field, v: i64) -> i64 {
        self.p.id(f, v)
    }
    fn clock(&mut self, ns: i64) -> i64 {
        if self.on(Field::Time) {
            self.p.clock(ns)
        } else {
            ns
        }
    }
    fn file_secs(&mut self, s: i64) -> i64 {
        if self.on(Field::Time) {
            self.p.file_secs(s)
        } else {
            s
        }
    }
    fn forward(&self) -> bool {
        true
    }
    fn set_counting(&mut self, on: bool) {
        self.p.counting = on;
    }
}

/// Reversing mapper: the fields the table holds.
pub struct Backward {
    /// The reverse table, as [`table::open`] decrypted it.
    pub r: Reverser,
    /// The fields the reverse table holds; the others stay anonymized.
    pub fields: Vec<Field>,
}

impl Mapper for Backward {
    fn on(&self, f: Field) -> bool {
        self.fields.contains(&f)
    }
    fn string(&mut self, f: Field, v: &[u8]) -> Vec<u8> {
        if f == Field::Path && matches!(v, b"" | b"." | b"..") {
            return v.to_vec();
        }
        self.r.string(f, v)
    }
    fn xattr_name(&mut self, v: &[u8]) -> Vec<u8> {
        self.string(Field::Path, v)
    }
    fn id(&mut self, f: Field, v: i64) -> i64 {
        self.r.id(f, v)
    }
    fn clock(&mut self, ns: i64) -> i64 {
        match self.r.time {
            Some(t) if self.on(Field::Time) => t.clock(ns, false),
            _ => ns,
        }
    }
    fn file_secs(&mut self, s: i64) -> i64 {
        match self.r.time {
            Some(t) if self.on(Field::Time) => match t.unshifted_secs(s) {
                Some(o) => o,
                None => self.r.id(Field::Time, s),
            },
            _ => s,
        }
    }
    fn forward(&self) -> bool {
        false
    }
    fn set_counting(&mut self, on: bool) {
        self.r.counting = on;
    }
}

/// Names of descriptors that are no file (`pipe:[123]`), kept.
const KERNEL_OBJECTS: [&[u8]; 3] = [b"pipe:[", b"socket:[", b"anon_inode:"];

/// A path with each component replaced (a trailing NUL, as calls store paths, stays).
///
/// Absolute paths under `/proc`, `/sys` and `/dev` name the kernel's objects and stay, except
/// where they reach the file tree or names programs chose: after a magic link
/// (`/proc/<pid>/cwd/…`, `…/root/…`, `…/fd/<n>/…`, `…/exe/…`, `…/map_files/<range>/…`, for
/// `self`, `thread-self`, a pid and `task/<tid>`; `/dev/fd/<n>/…`, `/dev/std{in,out,err}/…`)
/// the rest is the path it names there: relative to the directory the link names, or, after
/// `root`, absolute, and replaced as such (so that `/proc/self/root/home/alice` and
/// `/home/alice` agree). Beneath `/dev/shm`, `/dev/mqueue` and `/sys/fs/cgroup` every name is
/// a program's or an administrator's and is replaced; so is everything after a `..` (which may
/// leave the kernel's directories). `/proc/<pid>` and `/proc/<pid>/task/<tid>` take the pids'
/// pseudonyms when pids are replaced.
pub fn map_path(m: &mut dyn Mapper, p: &[u8]) -> Vec<u8> {
    let (body, nul) = match p.strip_suffix(b"\0") {
        Some(b) => (b, true),
        None => (p, false),
    };
    // What /proc/<pid>/fd shows for a descriptor that is no file (the recorders' synthetic
    // opens of inherited descriptors): the kernel's name of a pipe, socket or anonymous inode.
    if KERNEL_OBJECTS.iter().any(|k| body.starts_with(k)) && !body.contains(&b'/') {
        return p.to_vec();
    }
    let mut out = Vec::with_capacity(body.len() + 16);
    let comps: Vec<&[u8]> = body.split(|&b| b == b'/').collect();
    if body.first() == Some(&b'/') {
        // comps[0] is the empty component before the leading slash.
        map_absolute(m, &comps[1..], &mut out);
    } else {
        map_names(m, &comps, &mut out);
    }
    if nul {
        out.push(0);
    }
    out
}

/// Components that are names, each replaced, joined by slashes.
fn map_names(m: &mut dyn Mapper, comps: &[&[u8]], out: &mut Vec<u8>) {
    for (i, c) in comps.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(&m.string(Field::Path, c));
    }
}

/// The components of an absolute path after its leading slash, each as [`map_path`] says.
fn map_absolute(m: &mut dyn Mapper, comps: &[&[u8]], out: &mut Vec<u8>) {
    out.push(b'/');
    // How many leading components are the kernel's, and what follows them.
    enum Rest {
        Names,
        Absolute,
    }
    let is_num = |c: &[u8]| !c.is_empty() && c.iter().all(u8::is_ascii_digit);
    let get = |i: usize| comps.get(i).copied();
    let mut pids: Vec<usize> = Vec::new();
    let (kept, rest) = match get(0) {
        Some(b"proc") => {
            let mut i = 1;
            match get(1) {
                Some(c) if is_num(c) => {
                    pids.push(1);
                    i = 2;
                }
                Some(b"self") => i = 2,
                Some(b"thread-self") => i = 2,
                _ => {}
            }
            if i == 2 && get(2) == Some(b"task") && get(3).is_some_and(is_num) {
                pids.push(3);
                i = 4;
            }
            match get(i) {
                _ if i == 1 => (comps.len(), Rest::Names),
                Some(b"root") => (i + 1, Rest::Absolute),
                Some(b"cwd" | b"exe") => (i + 1, Rest::Names),
                Some(b"fd" | b"map_files") if get(i + 1).is_some() => (i + 2, Rest::Names),
                _ => (comps.len(), Rest::Names),
            }
        }
        Some(b"dev") => match get(1) {
            Some(b"fd") if get(2).is_some() => (3, Rest::Names),
            Some(b"stdin" | b"stdout" | b"stderr" | b"shm" | b"mqueue") => (2, Rest::Names),
            _ => (comps.len(), Rest::Names),
        },
        Some(b"sys") if get(1) == Some(b"fs") && get(2) == Some(b"cgroup") => (3, Rest::Names),
        Some(b"sys") => (comps.len(), Rest::Names),
        _ => (0, Rest::Names),
    };
    // A `..` among the kernel's components may leave them: the rest is names from there on.
    let kept = comps[..kept.min(comps.len())].iter().position(|c| *c == b"..").unwrap_or(kept);
    let kept = kept.min(comps.len());
    for (i, c) in comps[..kept].iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        let pid = (pids.contains(&i) && m.on(Field::Pid))
            .then(|| std::str::from_utf8(c).ok()?.parse::<i64>().ok())
            .flatten();
        match pid {
            Some(v) => out.extend_from_slice(m.id(Field::Pid, v).to_string().as_bytes()),
            None => out.extend_from_slice(c),
        }
    }
    if kept == comps.len() {
        return;
    }
    if kept > 0 {
        out.push(b'/');
    }
    let after = &comps[kept..];
    match rest {
        // `/proc/self/root` + `/home/alice`: the process's absolute path.
        Rest::Absolute if kept > 0 && comps[kept - 1] == b"root" => {
            out.pop();
            map_absolute(m, after, out);
        }
        _ => map_names(m, after, out),
    }
}

/// How a capacity argument changes when a returned buffer goes from `old` to `new` bytes:
/// anonymizing grows it by what the buffer grew (a replay then has room for the longer
/// pseudonyms); reversing takes off what the original anonymization added. Invertible
/// because both directions see both lengths.
fn grow(forward: bool, cap: i64, old: usize, new: usize) -> i64 {
    if forward {
        cap + new.saturating_sub(old) as i64
    } else {
        cap - old.saturating_sub(new) as i64
    }
}

/// Rewrite directory records (`getdents`, `getdents64`) with each name replaced; record
/// lengths recomputed as the kernel computes them (padding zeroed).
fn map_dirents(m: &mut dyn Mapper, s: Struct, b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len() + 64);
    let mut o = 0;
    while o < b.len() {
        let reclen = usize::from(u16::from_le_bytes(b.get(o + 16..o + 18)?.try_into().ok()?));
        let rec = b.get(o..o + reclen)?;
        if reclen < 20 {
            return None;
        }
        let name_at = if s == Struct::Dirents64 { 19 } else { 18 };
        let name_end = rec[name_at..].iter().position(|&c| c == 0).map(|p| name_at + p)?;
        let name = m.string(Field::Path, &rec[name_at..name_end]);
        let (fixed, extra) = if s == Struct::Dirents64 { (19, 1) } else { (18, 2) };
        let new_len = (fixed + name.len() + extra).div_ceil(8) * 8;
        let start = out.len();
        out.extend_from_slice(&rec[..16]);
        out.extend_from_slice(&(new_len as u16).to_le_bytes());
        if s == Struct::Dirents64 {
            out.push(rec[18]);
        }
        out.extend_from_slice(&name);
        out.resize(start + new_len, 0);
        if s == Struct::Dirents {
            // d_type is the record's last byte.
            out[start + new_len - 1] = rec[reclen - 1];
        }
        o += reclen;
    }
    Some(out)
}

/// Owner fields in `stat`/`statx` results: (uid offset, gid offset, struct size).
fn owner_offsets(s: Struct) -> Option<(usize, usize, usize)> {
    match s {
        Struct::Stat => Some((28, 32, 144)),
        Struct::Statx => Some((20, 24, 256)),
        _ => None,
    }
}

fn map_u32_at(m: &mut dyn Mapper, f: Field, b: &mut [u8], at: usize) {
    let v = u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let v = if v == u32::MAX { -1 } else { i64::from(v) };
    let n = m.id(f, v) as u32;
    b[at..at + 4].copy_from_slice(&n.to_le_bytes());
}

/// Columns no argument fills that hold data: the bytes a kernel-side copy moved, and
/// Re-Animator's `ioctl` buffer.
const DATA_EXTRAS: [&str; 2] = [ra_trace::schema::COPIED_DATA, "ioctl_buffer"];

/// Replace data buffers as [`DataMode`] says; returns how many were replaced. `Digest` is
/// what `record --data hash` stores (length and BLAKE3 of the bytes; of the vectors' bytes
/// concatenated). Data in other columns (`DATA_EXTRAS`: the bytes a kernel-side copy moved)
/// goes in either case, as `record --data hash|none` leaves it out. A POSIX ACL's value is
/// no data but permissions, kept ([`xattr`]).
pub fn replace_data(def: &SyscallDef, ev: &mut Event, mode: DataMode) -> u64 {
    if mode == DataMode::Keep {
        return 0;
    }
    let before = ev.extra.len();
    ev.extra.retain(|(k, _)| !DATA_EXTRAS.contains(&k.as_str()));
    let mut n = (before - ev.extra.len()) as u64;
    let acl =
        def.args.iter().zip(&ev.args).any(|(a, v)| {
            a.meaning == Meaning::XattrName && v.as_data().is_some_and(xattr::is_acl)
        });
    for (a, v) in def.args.iter().zip(ev.args.iter_mut()) {
        if !a.kind.is_bulk() || !matches!(a.meaning, Meaning::Plain) || acl {
            continue;
        }
        // A digest (a `record --data hash` trace) stays a digest, or goes with `drop`.
        let replaced = match v {
            ArgValue::Data(_) | ArgValue::Iov(_) => true,
            ArgValue::Hashed { .. } => mode == DataMode::Drop,
            _ => false,
        };
        if !replaced {
            continue;
        }
        if mode == DataMode::Digest {
            v.hash_data();
        } else {
            *v = ArgValue::NotCaptured;
            ev.buffer_not_captured = true;
        }
        n += 1;
    }
    n
}

/// Symlink sizes: (link name, target length before) → target length after, from the
/// targets the trace shows (`readlink` results, `symlink` calls, snapshot entries).
pub type LinkSizes = HashMap<(Vec<u8>, u64), u64>;

/// The last component of a path as calls store it (NUL and trailing slashes off).
fn last_component(p: &[u8]) -> &[u8] {
    let p = p.strip_suffix(b"\0").unwrap_or(p);
    let mut p = p;
    while let Some(q) = p.strip_suffix(b"/") {
        p = q;
    }
    p.rsplit(|&b| b == b'/').next().unwrap_or(p)
}

/// What one event shows of symlink targets, into `sizes`.
pub fn note_links(m: &mut dyn Mapper, ev: &Event, sizes: &mut LinkSizes) {
    use ra_syscalls::Handler;
    let Some(def) = ev.def else { return };
    let paths: Vec<&[u8]> = def
        .args
        .iter()
        .zip(&ev.args)
        .filter(|(a, _)| a.kind == ArgKind::Path)
        .filter_map(|(_, v)| v.as_data())
        .collect();
    let (link, target): (&[u8], &[u8]) = match def.replay.handler() {
        // readlink(path, buf): the link is the path, its target the result.
        Some(Handler::Readlink) => {
            let Some(t) = def
                .args
                .iter()
                .zip(&ev.args)
                .find(|(a, _)| matches!(a.meaning, Meaning::PathResult { .. }))
                .and_then(|(_, v)| v.as_data())
            else {
                return;
            };
            let Some(p) = paths.first() else { return };
            (p, t)
        }
        // symlink(target, linkpath): prototype order.
        Some(Handler::Symlink) if paths.len() == 2 => (paths[1], paths[0]),
        _ => return,
    };
    let target = target.strip_suffix(b"\0").unwrap_or(target);
    let name = last_component(link);
    if name.is_empty() {
        return;
    }
    let new = map_path(m, target).len() as u64;
    let new_name = map_path(m, name);
    sizes.insert((new_name, target.len() as u64), new);
}

/// Replace every chosen field of one system-call event. `links` (from [`note_links`]) gives
/// symlinks' new sizes in `stat` results.
pub fn map_event(m: &mut dyn Mapper, ev: &mut Event, links: &LinkSizes) {
    if m.on(Field::Pid) {
        for x in [&mut ev.pid, &mut ev.tid, &mut ev.ppid, &mut ev.sid, &mut ev.pgid]
            .into_iter()
            .flatten()
        {
            *x = m.id(Field::Pid, i64::from(*x)) as i32;
        }
    }
    if m.on(Field::Uid) {
        if let Some(x) = &mut ev.uid {
            *x = m.id(Field::Uid, i64::from(*x)) as i32;
        }
    }
    if m.on(Field::Gid) {
        if let Some(x) = &mut ev.gid {
            *x = m.id(Field::Gid, i64::from(*x)) as i32;
        }
    }
    if m.on(Field::Time) {
        for t in [&mut ev.time_called, &mut ev.time_returned, &mut ev.time_recorded]
            .into_iter()
            .flatten()
        {
            *t = m.clock(*t);
        }
    }
    let forward = m.forward();
    for (k, v) in ev.extra.iter_mut() {
        match (k.as_str(), v) {
            ("lock_pid", ExtraValue::Int(x)) if m.on(Field::Pid) && *x > 0 => {
                *x = m.id(Field::Pid, *x);
            }
            // Re-Animator's resolved paths (TRACE_FORMAT.md 3.5).
            (k, ExtraValue::Bytes(b)) if k.starts_with("full_") && m.on(Field::Path) => {
                *b = map_path(m, b);
            }
            // Paths kept, data (`replace_data`), descriptor numbers.
            (k, ExtraValue::Bytes(_))
                if k.starts_with("full_")
                    || DATA_EXTRAS.contains(&k)
                    || k == ra_trace::schema::SCM_RIGHTS => {}
            // Bytes in a column no rule covers may hold anything: left out.
            (_, v @ ExtraValue::Bytes(_)) if forward => *v = ExtraValue::Null,
            _ => {}
        }
    }
    let Some(def) = ev.def else { return };
    if def.ret == Ret::Pid && m.on(Field::Pid) {
        if let Some(r) = ev.ret.filter(|&r| r > 0) {
            ev.ret = Some(m.id(Field::Pid, r));
        }
    }
    let mut len_changes: Vec<(usize, i64)> = Vec::new();
    for i in 0..def.args.len() {
        let a = &def.args[i];
        let fw = m.forward();
        match (a.kind, a.meaning, &mut ev.args[i]) {
            (ArgKind::Path, _, ArgValue::Data(d)) if m.on(Field::Path) => {
                *d = map_path(m, d).into();
            }
            (_, Meaning::PathResult { capacity }, ArgValue::Data(d)) if m.on(Field::Path) => {
                let old = d.len();
                let new = map_path(m, d);
                if ev.ret == Some(old as i64) {
                    ev.ret = Some(new.len() as i64);
                }
                len_changes.push((capacity, grow(fw, 0, old, new.len())));
                *d = new.into();
            }
            (
                ArgKind::OutStruct(s @ (Struct::Dirents | Struct::Dirents64), _),
                Meaning::Listing { capacity },
                ArgValue::Data(d),
            ) if m.on(Field::Path) => {
                if let Some(new) = map_dirents(m, s, d) {
                    let old = d.len();
                    if ev.ret == Some(old as i64) {
                        ev.ret = Some(new.len() as i64);
                    }
                    len_changes.push((capacity, grow(fw, 0, old, new.len())));
                    *d = new.into();
                }
            }
            (
                ArgKind::InStruct(Struct::Sockaddr, len)
                | ArgKind::OutStruct(Struct::Sockaddr, len)
                | ArgKind::InOutStruct(Struct::Sockaddr, len),
                _,
                ArgValue::Data(d),
            ) if m.forward() || m.on(Field::Path) || m.on(Field::Hostname) || m.on(Field::Pid) => {
                if let Some(new) = sockaddr::map(m, d) {
                    if let Len::Arg(n) | Len::DerefArg(n) = len {
                        len_changes.push((n, new.len() as i64 - d.len() as i64));
                    }
                    *d = new.into();
                }
            }
            (ArgKind::OutStruct(s, _), _, ArgValue::Data(d))
                if owner_offsets(s).is_some() && (m.on(Field::Uid) || m.on(Field::Gid)) =>
            {
                let (u, g, size) = owner_offsets(s).expect("checked");
                if d.len() >= size {
                    let mut b = d.to_vec();
                    if m.on(Field::Uid) {
                        map_u32_at(m, Field::Uid, &mut b, u);
                    }
                    if m.on(Field::Gid) {
                        map_u32_at(m, Field::Gid, &mut b, g);
                    }
                    *d = b.into();
                }
            }
            (_, Meaning::Uid, ArgValue::Int(x)) if m.on(Field::Uid) => {
                *x = m.id(Field::Uid, *x);
            }
            (_, Meaning::Gid, ArgValue::Int(x)) if m.on(Field::Gid) => {
                *x = m.id(Field::Gid, *x);
            }
            (_, Meaning::Pid, ArgValue::Int(x)) if m.on(Field::Pid) => {
                *x = m.id(Field::Pid, *x);
            }
            (ArgKind::StrArray, _, ArgValue::Strings(list)) if m.on(Field::Cmdline) => {
                let env = a.name == "envp";
                for s in list.iter_mut() {
                    *s = map_cmdline_string(m, s, env);
                }
            }
            (_, Meaning::XattrName, ArgValue::Data(d)) if m.on(Field::Path) => {
                *d = xattr::map_c_name(m, d).into();
            }
            (_, Meaning::XattrNames { capacity }, ArgValue::Data(d)) if m.on(Field::Path) => {
                let old = d.len();
                let new = xattr::map_list(m, d);
                if ev.ret == Some(old as i64) {
                    ev.ret = Some(new.len() as i64);
                }
                len_changes.push((capacity, grow(fw, 0, old, new.len())));
                *d = new.into();
            }
            (_, Meaning::Name, ArgValue::Data(d)) if m.on(Field::Path) => {
                *d = map_path(m, d).into();
            }
            _ => {}
        }
    }
    for (n, delta) in len_changes {
        if let Some(ArgValue::Int(x)) = ev.args.get_mut(n) {
            *x += delta;
        }
    }
    // File times in structs (`stat` results, `utimes` arguments).
    if m.on(Field::Time) {
        for (a, v) in def.args.iter().zip(ev.args.iter_mut()) {
            let (ArgKind::InStruct(s, _) | ArgKind::OutStruct(s, _) | ArgKind::InOutStruct(s, _)) =
                a.kind
            else {
                continue;
            };
            if let ArgValue::Data(d) = v {
                if let Some(new) = time::map_struct_times(m, s, d) {
                    *d = new.into();
                }
            }
        }
    }
    // A POSIX ACL's ids (the value of an xattr call naming one).
    let acl =
        def.args.iter().zip(&ev.args).any(|(a, v)| {
            a.meaning == Meaning::XattrName && v.as_data().is_some_and(xattr::is_acl)
        });
    if acl && (m.on(Field::Uid) || m.on(Field::Gid)) {
        for (a, v) in def.args.iter().zip(ev.args.iter_mut()) {
            if let (true, ArgValue::Data(d)) = (a.kind.is_bulk(), &mut *v) {
                if let Some(new) = xattr::map_acl(m, d) {
                    *d = new.into();
                }
            }
        }
    }
    if m.on(Field::Path) && !links.is_empty() {
        fix_link_sizes(def, ev, links);
    }
}

/// A `stat` of a symlink reports its target's length: the new target's, where the trace
/// shows the target (looked up by the link's name, already replaced, and the old length).
fn fix_link_sizes(def: &SyscallDef, ev: &mut Event, links: &LinkSizes) {
    const S_IFMT: u32 = 0o170000;
    const S_IFLNK: u32 = 0o120000;
    let Some(name) = def
        .args
        .iter()
        .zip(&ev.args)
        .find(|(a, _)| a.kind == ArgKind::Path)
        .and_then(|(_, v)| v.as_data())
        .map(|p| last_component(p).to_vec())
    else {
        return;
    };
    if name.is_empty() {
        return;
    }
    for (a, v) in def.args.iter().zip(ev.args.iter_mut()) {
        let (mode_at, mode_len, size_at) = match a.kind {
            ArgKind::OutStruct(Struct::Stat, _) => (24, 4, 48),
            ArgKind::OutStruct(Struct::Statx, _) => (28, 2, 40),
            _ => continue,
        };
        let ArgValue::Data(d) = v else { continue };
        if d.len() < size_at + 8 {
            continue;
        }
        let mut mode = [0u8; 4];
        mode[..mode_len].copy_from_slice(&d[mode_at..mode_at + mode_len]);
        if u32::from_le_bytes(mode) & S_IFMT != S_IFLNK {
            continue;
        }
        let size = u64::from_le_bytes(d[size_at..size_at + 8].try_into().expect("8 bytes"));
        if let Some(&new) = links.get(&(name.clone(), size)) {
            let mut b = d.to_vec();
            b[size_at..size_at + 8].copy_from_slice(&new.to_le_bytes());
            *d = b.into();
        }
    }
}

/// One argv string, or the value of one `NAME=value` environment string.
fn map_cmdline_string(m: &mut dyn Mapper, s: &[u8], env: bool) -> Vec<u8> {
    if env {
        if let Some(eq) = s.iter().position(|&b| b == b'=') {
            let mut out = s[..=eq].to_vec();
            if eq + 1 < s.len() {
                out.extend_from_slice(&m.string(Field::Cmdline, &s[eq + 1..]));
            }
            return out;
        }
    }
    if s.is_empty() {
        return Vec::new();
    }
    m.string(Field::Cmdline, s)
}

/// The digest of `size` zero bytes (what a snapshot file holds once its data is dropped).
fn zeros_digest(size: u64, cache: &mut HashMap<u64, Digest>) -> Digest {
    *cache.entry(size).or_insert_with(|| {
        let mut h = blake3::Hasher::new();
        let z = [0u8; 65536];
        let mut left = size;
        while left > 0 {
            let n = left.min(z.len() as u64) as usize;
            h.update(&z[..n]);
            left -= n as u64;
        }
        Digest(*h.finalize().as_bytes())
    })
}

/// One snapshot state's entries with paths, targets, owners, xattrs, mtimes (and, data
/// dropped, contents) replaced, sorted again by their new paths, hard-link groups renamed
/// after their new first path. Kind, mode, size (a symlink's follows its target) and device
/// numbers stay.
pub fn map_entries(
    m: &mut dyn Mapper,
    entries: Vec<Entry>,
    data: DataMode,
    zeros: &mut HashMap<u64, Digest>,
) -> Vec<Entry> {
    let path_on = m.on(Field::Path);
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    for mut e in entries {
        if path_on {
            e.path = map_path(m, &e.path);
            if let Some(t) = &e.target {
                let t = map_path(m, t);
                e.size = t.len() as u64;
                e.target = Some(t);
            }
            if let Some(l) = &e.link {
                e.link = Some(map_path(m, l));
            }
        }
        if m.on(Field::Uid) {
            e.uid = m.id(Field::Uid, i64::from(e.uid)) as u32;
        }
        if m.on(Field::Gid) {
            e.gid = m.id(Field::Gid, i64::from(e.gid)) as u32;
        }
        if data != DataMode::Keep && e.kind == Kind::File {
            e.digest = Some(zeros_digest(e.size, zeros));
        }
        if !e.xattrs.is_empty() {
            e.xattrs = xattr::map_all(m, std::mem::take(&mut e.xattrs), data);
        }
        e.mtime_ns = time::map_file_ns(m, e.mtime_ns);
        out.push(e);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    // Hard-link groups: the group's first path in the new order holds no `link`.
    let mut first: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    for e in &out {
        if let Some(l) = &e.link {
            let f = first.entry(l.clone()).or_insert_with(|| l.clone());
            if e.path < *f {
                *f = e.path.clone();
            }
        }
    }
    for e in out.iter_mut() {
        let group = e.link.clone().unwrap_or_else(|| e.path.clone());
        if let Some(f) = first.get(&group) {
            e.link = (*f != e.path).then(|| f.clone());
        }
    }
    out
}

/// Fact `anonymize` adds to its output: the fields replaced, by [`Field::name`], comma
/// separated (`data` among them unless data was kept). A reversal rewrites it to the fields
/// that stay anonymized, or leaves it out.
pub const INFO_FIELDS: &str = "anonymized_fields";
/// Fact: the fields whose originals the encrypted reverse table holds, comma separated
/// (empty when none).
pub const INFO_REVERSIBLE: &str = "anonymized_reversible";
/// Fact: [`DataMode::name`] of the run.
pub const INFO_DATA: &str = "anonymized_data";
/// Fact: the key file's [`Key::fingerprint`], so that a user can tell which key reverses
/// the trace ([`table::open`] names it when another key is given).
pub const INFO_KEY: &str = "anonymized_key_fingerprint";
/// Fact: `true` or `false`, [`Options::keep_extensions`].
pub const INFO_EXTENSIONS: &str = "anonymized_keep_extensions";
/// Fact: [`Options::keep_names`], comma separated (empty when none).
pub const INFO_KEPT_NAMES: &str = "anonymized_kept_names";

/// What the facts `anonymize` writes begin with (a trace anonymized again gets new ones).
pub const INFO_PREFIX: &str = "anonymized_";
/// How times were anonymized (with `time`).
pub const INFO_TIME: &str = "anonymized_time";

fn refuse_unsupported(tr: &TraceReader) -> Result<()> {
    let aggregate = tr
        .dataseries()
        .headers()
        .filter_map(|h| h.ok())
        .any(|h| h.type_name == ra_trace::fsop::FS_AGGREGATE_TYPE);
    if aggregate {
        return Err(Error::Anonymize(
            "the trace holds aggregate rows of `reanimator fs --aggregate` (their groups name \
             uids and paths): anonymizing them is not supported yet"
                .into(),
        ));
    }
    Ok(())
}

/// FUSE operations whose `data` is a symlink's target, not file data (TRACE_FORMAT.md 3.10).
const FS_TARGET_OPS: [&str; 2] = ["readlink", "symlink"];
/// FUSE operations whose `data` is a value named by `xattr_name`.
const FS_XATTR_VALUE_OPS: [&str; 2] = ["getxattr", "setxattr"];

/// Replace the chosen fields of one file-system operation (`reanimator fs` traces); returns
/// the data buffers replaced.
pub fn map_fs_event(m: &mut dyn Mapper, ev: &mut Event, data: DataMode) -> u64 {
    if m.on(Field::Pid) {
        for x in [&mut ev.pid, &mut ev.tid].into_iter().flatten() {
            *x = m.id(Field::Pid, i64::from(*x)) as i32;
        }
    }
    if m.on(Field::Uid) {
        if let Some(x) = &mut ev.uid {
            *x = m.id(Field::Uid, i64::from(*x)) as i32;
        }
    }
    if m.on(Field::Gid) {
        if let Some(x) = &mut ev.gid {
            *x = m.id(Field::Gid, i64::from(*x)) as i32;
        }
    }
    if m.on(Field::Time) {
        for t in [&mut ev.time_called, &mut ev.time_returned].into_iter().flatten() {
            *t = m.clock(*t);
        }
    }
    let target_op = FS_TARGET_OPS.contains(&ev.name.as_str());
    let list_op = ev.name == "listxattr";
    let acl = FS_XATTR_VALUE_OPS.contains(&ev.name.as_str())
        && ev.extra_bytes("xattr_name").is_some_and(xattr::is_acl);
    let mut new_len = None;
    let mut list_len = None;
    let mut replaced = 0;
    let mut digest = None;
    let mut drop_data = false;
    for (k, v) in ev.extra.iter_mut() {
        match (k.as_str(), v) {
            ("pathname" | "new_pathname", ExtraValue::Bytes(b)) if m.on(Field::Path) => {
                *b = map_path(m, b);
            }
            ("xattr_name", ExtraValue::Bytes(b)) if m.on(Field::Path) => {
                *b = xattr::map_name(m, b);
            }
            ("atime" | "mtime", ExtraValue::Int(t)) if m.on(Field::Time) => {
                *t = time::map_file_ns(m, *t);
            }
            // A link's target and a list of xattr names are never data.
            ("data", _) if (target_op || list_op) && !m.on(Field::Path) => {}
            ("data", ExtraValue::Bytes(b)) if target_op => {
                *b = map_path(m, b);
                new_len = Some(b.len() as i64);
            }
            ("data", ExtraValue::Bytes(b)) if list_op => {
                let old = b.len();
                *b = xattr::map_list(m, b);
                list_len = Some((old as i64, b.len() as i64));
            }
            // An ACL is permissions, not data: kept, its ids replaced.
            ("data", ExtraValue::Bytes(b)) if acl => {
                if let Some(n) = xattr::map_value(m, b"system.posix_acl_access", b) {
                    *b = n;
                }
            }
            ("data", ExtraValue::Bytes(b)) if data != DataMode::Keep => {
                if data == DataMode::Digest {
                    digest = Some(*blake3::hash(b).as_bytes());
                }
                drop_data = true;
                replaced += 1;
            }
            ("executing_comm", ExtraValue::Bytes(b)) if m.on(Field::Comm) => {
                *b = m.string(Field::Comm, b);
            }
            ("owner_uid", ExtraValue::Int(x)) if m.on(Field::Uid) => *x = m.id(Field::Uid, *x),
            ("owner_gid", ExtraValue::Int(x)) if m.on(Field::Gid) => *x = m.id(Field::Gid, *x),
            _ => {}
        }
    }
    if let Some(n) = new_len {
        for (k, v) in ev.extra.iter_mut() {
            if k == "data_length" {
                *v = ExtraValue::Int(n);
            }
        }
        if ev.name == "readlink" && ev.ret.is_some_and(|r| r > 0) {
            ev.ret = Some(n);
        }
    }
    // listxattr: the result is the list's length; the size asked for grows with it.
    if let Some((old, new)) = list_len {
        if ev.ret == Some(old) {
            ev.ret = Some(new);
        }
        let fw = m.forward();
        for (k, v) in ev.extra.iter_mut() {
            if let ("length", ExtraValue::Int(x)) = (k.as_str(), v) {
                if *x > 0 {
                    *x = grow(fw, *x, old as usize, new as usize);
                }
            }
        }
    }
    // A digest (`fs --data hash`) goes with `drop`.
    if data == DataMode::Drop && !target_op && !list_op && !acl {
        let before = ev.extra.len();
        ev.extra.retain(|(k, _)| k != "data_blake3");
        if ev.extra.len() < before {
            replaced += 1;
            ev.buffer_not_captured = true;
        }
    }
    if drop_data {
        ev.extra.retain(|(k, _)| k != "data");
        if let Some(d) = digest {
            ev.extra.push(("data_blake3".into(), ExtraValue::Bytes(d.to_vec())));
        }
        ev.buffer_not_captured = true;
    }
    replaced
}

/// The operation names as `&'static str` (FsRecord's type); unknown ones are interned once.
fn static_op(name: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static OPS: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut ops = OPS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = ops.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_string().into_boxed_str());
    ops.insert(name.to_string(), s);
    s
}

/// The record a file-system operation event was read from (the inverse of the reader's
/// decoding, TRACE_FORMAT.md 3.10).
pub fn fs_record(ev: &Event) -> ra_trace::fsop::FsRecord<'_> {
    use ra_trace::fsop::{FsData, FsRecord};
    let bytes = |k: &str| ev.extra_bytes(k);
    let int = |k: &str| ev.extra_int(k);
    let flag = |k: &str| ev.extra.iter().any(|(n, v)| n == k && *v == ExtraValue::Bool(true));
    let data = match (bytes("data"), bytes("data_blake3"), int("data_length")) {
        (Some(d), _, _) => FsData::Full(std::borrow::Cow::Borrowed(d)),
        (None, Some(h), len) if h.len() == 32 => {
            FsData::Hashed { len: len.unwrap_or(0) as u64, blake3: h.try_into().expect("32 bytes") }
        }
        (None, _, Some(len)) => FsData::Length(len as u64),
        _ => FsData::None,
    };
    FsRecord {
        op: static_op(&ev.name),
        time_called: ev.time_called.unwrap_or(0),
        time_returned: ev.time_returned.unwrap_or(0),
        pid: ev.pid,
        tid: ev.tid.unwrap_or(0),
        uid: ev.uid.unwrap_or(0),
        gid: ev.gid.unwrap_or(0),
        ret: ev.ret.unwrap_or(0),
        errno: ev.errno.unwrap_or(0),
        comm: bytes("executing_comm").map(<[u8]>::to_vec),
        fuse_unique: int("fuse_unique").unwrap_or(0) as u64,
        nodeid: int("nodeid").unwrap_or(0) as u64,
        inode: int("inode"),
        fh: int("fh"),
        path: bytes("pathname").map(<[u8]>::to_vec),
        new_path: bytes("new_pathname").map(<[u8]>::to_vec),
        name: bytes("xattr_name").map(<[u8]>::to_vec),
        offset: int("offset"),
        length: int("length"),
        flags: int("flags"),
        mode: int("mode").map(|v| v as i32),
        owner_uid: int("owner_uid").map(|v| v as i32),
        owner_gid: int("owner_gid").map(|v| v as i32),
        atime: int("atime"),
        mtime: int("mtime"),
        atime_now: flag("atime_now"),
        mtime_now: flag("mtime_now"),
        fh_out: int("fh_out"),
        offset_out: int("offset_out"),
        data,
        result_inode: int("result_inode"),
        result_size: int("result_size"),
    }
}

/// Copy a trace through `m`: facts, snapshots, events, losses. `extra_facts` are added after
/// the copied ones; `keep_fact` filters the copied ones.
#[allow(clippy::too_many_arguments)]
fn rewrite(
    tr: &TraceReader,
    out: &Path,
    m: &mut dyn Mapper,
    data: DataMode,
    extra_facts: &[(String, Vec<u8>)],
    keep_fact: &dyn Fn(&str) -> bool,
    cfg: WriterConfig,
    summary: &mut Summary,
) -> Result<TraceWriter<ra_trace::TraceOutput>> {
    refuse_unsupported(tr)?;
    let mut cfg = cfg;
    cfg.fs_ops = tr.call_types().any(|(l, _)| l.ty.name() == ra_trace::fsop::FS_OP_TYPE);
    let mut facts: Vec<(String, Vec<u8>)> = Vec::new();
    for (k, v) in tr.info() {
        if !keep_fact(k) {
            continue;
        }
        if let Some(v) = facts::map_fact(m, k, v, data) {
            facts.push((k.clone(), v));
        }
    }
    facts.extend(extra_facts.iter().cloned());
    let refs: Vec<(&str, &[u8])> = facts.iter().map(|(k, v)| (k.as_str(), v.as_slice())).collect();
    let mut w = TraceWriter::create(out, &refs, cfg)?;
    let snapshots = tr.snapshots();
    // Look-ahead: the symlink targets the trace shows, for the sizes `stat` reports.
    let mut links = LinkSizes::new();
    if m.on(Field::Path) {
        m.set_counting(false);
        // Only the calls that show targets (readlink, symlink: by their replay handler).
        let names: Vec<&str> = ra_syscalls::REGISTRY
            .iter()
            .filter(|d| {
                matches!(
                    d.replay.handler(),
                    Some(ra_syscalls::Handler::Readlink | ra_syscalls::Handler::Symlink)
                )
            })
            .map(|d| d.trace_name)
            .collect();
        for ev in tr.events(Some(&names)) {
            note_links(m, &ev?, &mut links);
        }
        for s in &snapshots {
            for phase in [Phase::Start, Phase::End] {
                if s.phase(phase).is_none() {
                    continue;
                }
                for e in tr.snapshot_entries(s.index, phase)? {
                    let e = e?;
                    if let (Some(t), false) = (&e.target, e.path.is_empty()) {
                        let name = map_path(m, last_component(&e.path));
                        links.insert((name, t.len() as u64), map_path(m, t).len() as u64);
                    }
                }
            }
        }
        m.set_counting(true);
    }
    let mut zeros = HashMap::new();
    let mut copy_state = |w: &mut TraceWriter<ra_trace::TraceOutput>,
                          m: &mut dyn Mapper,
                          index: u32,
                          phase: Phase|
     -> Result<u64> {
        let entries = tr.snapshot_entries(index, phase)?.collect::<Result<Vec<_>>>()?;
        let entries = map_entries(m, entries, data, &mut zeros);
        for e in &entries {
            w.add_snapshot_entry(index, phase.code(), e)?;
        }
        Ok(entries.len() as u64)
    };
    for s in &snapshots {
        if s.start.is_some() {
            summary.snapshot_entries += copy_state(&mut w, m, s.index, Phase::Start)?;
        }
    }
    if data == DataMode::Keep && !tr.blob_offsets().is_empty() {
        let mut err = None;
        let r = tr.content().for_each_chunk(&mut |d, off, chunk| {
            if let Err(e) = w.add_blob_chunk(d, off, chunk) {
                err = Some(e);
                return Err(ra_fsstate::Error::Source { source: "trace write".into() });
            }
            Ok(())
        });
        if let Some(e) = err {
            return Err(e);
        }
        r?;
    }
    for ev in tr.events(None) {
        let mut ev = ev?;
        summary.xattr_size_answers += u64::from(m.on(Field::Path) && xattr::is_size_answer(&ev));
        if ra_trace::fsop::is_fs_event(&ev) {
            summary.data_buffers += map_fs_event(m, &mut ev, data);
            w.append_fs_preserving(&fs_record(&ev), ev.unique_id)?;
            summary.events += 1;
            continue;
        }
        let Some(def) = ev.def else {
            return Err(Error::Anonymize(format!(
                "record type `{}` has no registry entry: it cannot be rewritten",
                ev.name
            )));
        };
        map_event(m, &mut ev, &links);
        if data != DataMode::Keep {
            summary.data_buffers += replace_data(def, &mut ev, data);
        }
        w.append_preserving(&ev)?;
        summary.events += 1;
    }
    for s in &snapshots {
        if s.end.is_some() {
            summary.snapshot_entries += copy_state(&mut w, m, s.index, Phase::End)?;
        }
    }
    for l in tr.lost() {
        let range = l.time_first.zip(l.time_last).map(|(a, b)| (m.clock(a), m.clock(b)));
        w.add_lost(&l.syscall, l.count, l.bytes, range, &l.reason)?;
    }
    Ok(w)
}

/// Anonymize the trace `input` into `out` (created; must not be `input`).
pub fn anonymize_trace(input: &Path, out: &Path, key: &Key, opts: &Options) -> Result<Summary> {
    let tr = TraceReader::open(input)?;
    let mut fields = opts.fields.clone();
    fields.retain(|&f| f != Field::Data);
    let data = opts.data;
    let mut m = Forward {
        p: Pseudonymizer::new(
            &key.derive(Purpose::Pseudonym),
            opts.keep_extensions,
            opts.keep_names.iter().cloned(),
        ),
        fields: fields.clone(),
    };
    if fields.contains(&Field::Time) {
        let origin_s = opts.time_origin;
        if origin_s.checked_abs().is_none_or(|a| a > 1 << 40) {
            return Err(Error::Anonymize(format!(
                "the time origin {origin_s} is out of range (seconds since the Unix epoch, at \
                 most 2^40 either way)"
            )));
        }
        let t0_s = time::trace_start(&tr)?.map_or(0, |ns| ns.div_euclid(1_000_000_000));
        m.p.time = Some(time::TimeShift { t0_s, origin_s });
    }
    let mut reversible = opts.reversible.clone();
    reversible.sort();
    reversible.dedup();
    for f in &reversible {
        if *f == Field::Data || !fields.contains(f) {
            return Err(Error::Anonymize(format!(
                "`{f}` cannot be reversible: {}",
                if *f == Field::Data { "data is never stored" } else { "it is not replaced" }
            )));
        }
    }
    let names = |v: &[Field]| v.iter().map(|f| f.name()).collect::<Vec<_>>().join(",");
    let mut all_fields = fields.clone();
    if data != DataMode::Keep {
        all_fields.push(Field::Data);
    }
    let kept: Vec<u8> = opts.keep_names.join(&b',');
    let mut facts = vec![
        (INFO_FIELDS.to_string(), names(&all_fields).into_bytes()),
        (INFO_REVERSIBLE.to_string(), names(&reversible).into_bytes()),
        (INFO_DATA.to_string(), data.name().as_bytes().to_vec()),
        (INFO_KEY.to_string(), key.fingerprint().into_bytes()),
        (INFO_EXTENSIONS.to_string(), opts.keep_extensions.to_string().into_bytes()),
        (INFO_KEPT_NAMES.to_string(), kept),
    ];
    if let Some(t) = m.p.time {
        let what = format!(
            "the trace's clock shifted by a whole number of seconds to start at {} (intervals \
             kept); file times from its start on shifted alike, earlier ones replaced",
            time::rfc3339(t.origin_s.saturating_mul(1_000_000_000))
        );
        facts.push((INFO_TIME.to_string(), what.into_bytes()));
    }
    let mut summary = Summary { key_fingerprint: key.fingerprint(), ..Summary::default() };
    let cfg = WriterConfig {
        ds: opts.ds.clone(),
        extra_types: if reversible.is_empty() { Vec::new() } else { vec![table::table_type()] },
        ..WriterConfig::default()
    };
    let mut w = rewrite(&tr, out, &mut m, data, &facts, &|_| true, cfg, &mut summary)?;
    if !reversible.is_empty() {
        let entries = table::entries(&m.p, &reversible);
        summary.table_entries = entries.len() as u64;
        for b in table::seal(&key.derive(Purpose::Reverse), &reversible, &entries)? {
            w.write_extent(b)?;
        }
    }
    w.finish()?;
    for f in &fields {
        let (mut rep, distinct, coll) = if f.is_id() {
            m.p.ids(*f).map_or((0, 0, 0), |t| (t.replaced, t.distinct() as u64, t.collisions))
        } else {
            m.p.strings(*f).map_or((0, 0, 0), |t| (t.replaced, t.distinct() as u64, t.collisions))
        };
        if *f == Field::Time {
            rep += m.p.times_shifted;
        }
        summary.fields.insert(*f, (rep, distinct));
        summary.collisions += coll;
    }
    summary.xattr_names_lengthened = m.p.strings(Field::Path).map_or(0, |t| t.xattr_lengthened);
    Ok(summary)
}

/// Put back the originals of the reversible fields of an anonymized trace.
pub fn reverse_trace(
    input: &Path,
    out: &Path,
    key: &Key,
    ds: dataseries::WriterOptions,
) -> Result<Summary> {
    let tr = TraceReader::open(input)?;
    let (fields, r) = table::open(&tr, key)?;
    let mut m = Backward { r, fields: fields.clone() };
    let mut summary = Summary { key_fingerprint: key.fingerprint(), ..Summary::default() };
    // What stays anonymized is still said; the rest of the anonymization facts go.
    let all: Vec<Field> = tr
        .info_value(INFO_FIELDS)
        .map(|v| String::from_utf8_lossy(v).split(',').filter_map(Field::from_name).collect())
        .unwrap_or_default();
    let remaining: Vec<Field> = all.into_iter().filter(|f| !fields.contains(f)).collect();
    let mut facts = Vec::new();
    if !remaining.is_empty() {
        let names = remaining.iter().map(|f| f.name()).collect::<Vec<_>>().join(",");
        facts.push((INFO_FIELDS.to_string(), names.into_bytes()));
        if let Some(v) = tr.info_value(INFO_KEY) {
            facts.push((INFO_KEY.to_string(), v.to_vec()));
        }
        if let (true, Some(v)) = (remaining.contains(&Field::Time), tr.info_value(INFO_TIME)) {
            facts.push((INFO_TIME.to_string(), v.to_vec()));
        }
    }
    let keep = |k: &str| !k.starts_with("anonymized_");
    let cfg = WriterConfig { ds, ..WriterConfig::default() };
    let w = rewrite(&tr, out, &mut m, DataMode::Keep, &facts, &keep, cfg, &mut summary)?;
    w.finish()?;
    for f in fields {
        let n = m.r.replaced.get(&f).copied().unwrap_or(0);
        let distinct = if f.is_id() {
            m.r.ids.get(&f).map_or(0, HashMap::len)
        } else {
            m.r.strings.get(&f).map_or(0, HashMap::len)
        };
        summary.fields.insert(f, (n, distinct as u64));
    }
    Ok(summary)
}

#[cfg(test)]
mod tests;
