//! A light model of the traced processes, run over the trace in recorded order, without
//! touching the file system: which process each thread belongs to (from clone flags, or the
//! recorded pid), what each descriptor names (a normalized logical path) and its offset, and
//! each process's cwd. The dispatcher uses it to give every call its process and its ordering
//! keys; `--init=infer` uses it to know which file a `read` read from.

use foldhash::{HashMap, HashMapExt, HashSet};
use std::cell::RefCell;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use ra_syscalls::Handler as H;
use ra_trace::{ArgValue, Event};

use crate::sandbox::{join, normalize};
use crate::world::{Passed, ProcId};

/// An ordering key for a normalized logical path.
pub fn key_of(path: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    path.hash(&mut h);
    h.finish() | 1
}

/// The directory holding a normalized absolute path ("/" for a top-level name; None for "/").
fn parent_of(p: &[u8]) -> Option<&[u8]> {
    let i = p.iter().rposition(|&b| b == b'/')?;
    (p.len() > 1).then_some(if i == 0 { &p[..1] } else { &p[..i] })
}

/// Whether `ev` adds or removes names in the directories of its paths.
pub(crate) fn changes_names(def: &ra_syscalls::SyscallDef, ev: &Event) -> bool {
    use ra_syscalls::Handler as H;
    // An io_uring path request as the call it stands for (`ra_trace::uring`).
    let ev = &*ra_trace::uring::effective(ev);
    let def = ev.def.unwrap_or(def);
    match def.replay.handler() {
        Some(H::Mkdir | H::Unlink | H::Mknod | H::Link | H::Symlink | H::Rename) => true,
        Some(H::Open) => ev.open_flags().unwrap_or(0) & i64::from(libc::O_CREAT) != 0,
        _ => false,
    }
}

/// What a call did to names, or what its failure says about them, by ordering key: the facts
/// that order two overlapping calls on one name by their outcomes (two processes `mkdir` the
/// same directory: the one that failed with `EEXIST` ran after the one that made it, whichever
/// was called or returned first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameKeys {
    /// The name the call made (it succeeded).
    pub made: Option<u64>,
    /// The name the call removed (it succeeded).
    pub removed: Option<u64>,
    /// The call failed with `EEXIST`: the name that existed.
    pub existed: Option<u64>,
    /// The call failed with `ENOENT`: the names it looked up (one was missing).
    pub missing: Vec<u64>,
}

impl NameKeys {
    /// The call failed on a name another call may have made or removed.
    pub fn failed_on_a_name(&self) -> bool {
        self.existed.is_some() || !self.missing.is_empty()
    }

    /// `other` (which succeeded) made the name this call found existing, or removed a name
    /// this call found missing.
    pub fn explained_by(&self, other: &NameKeys) -> bool {
        (self.existed.is_some() && self.existed == other.made)
            || other.removed.is_some_and(|k| self.missing.contains(&k))
    }
}

/// What a call did to one directory's names, or what its result shows of them: the facts that
/// order two overlapping calls of different threads on one directory when their outcomes say
/// which ran first ([`DirFact::says`]; the planner's `outcome` rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirFact {
    /// The call made (`made`) or removed the name with key `name`; `subdir`: whether it was a
    /// directory (which changes the directory's link count), None when unknown (a rename).
    Change {
        /// The name's ordering key ([`key_of`] of its normalized path).
        name: u64,
        /// True when the call made the name, false when it removed it.
        made: bool,
        /// Whether the name is a directory; None when unknown (a rename).
        subdir: Option<bool>,
    },
    /// Names the call found existing (`present`) and missing (`absent`), by key; `whole`: a
    /// listing of the whole directory, which found every other name missing.
    Names {
        /// Keys of the names the call found existing.
        present: Vec<u64>,
        /// Keys of the names the call found missing (`ENOENT`).
        absent: Vec<u64>,
        /// The call listed the whole directory (a `getdents` from offset 0 that reached the
        /// end): every name not in `present` was missing.
        whole: bool,
    },
    /// The directory's link count, as a `stat` of it showed.
    Nlink(u64),
}

/// Which of two overlapping calls ran first, as an outcome shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The observing call ran before the change.
    Before,
    /// The observing call ran after the change.
    After,
}

impl DirFact {
    /// What this observation (a [`DirFact::Names`] or [`DirFact::Nlink`]) says of the
    /// change `ch` to the same directory: that it ran before it (it saw the name as the
    /// change found it, or the link count before it), after it, or nothing. `links`: the
    /// directory's link count before and after `ch`, where known.
    pub fn says(&self, ch: &DirFact, links: Option<(u64, u64)>) -> Option<Order> {
        let DirFact::Change { name, made, .. } = ch else { return None };
        match self {
            DirFact::Names { present, absent, whole } => {
                let there = if present.contains(name) {
                    true
                } else if *whole || absent.contains(name) {
                    false
                } else {
                    return None;
                };
                Some(if there == *made { Order::After } else { Order::Before })
            }
            DirFact::Nlink(n) => {
                let (before, after) = links?;
                if before == after {
                    None
                } else if *n == after {
                    Some(Order::After)
                } else if *n == before {
                    Some(Order::Before)
                } else {
                    None
                }
            }
            DirFact::Change { .. } => None,
        }
    }
}

/// Names listed in one `getdents` call, at most, that count as a fact about them (a larger
/// listing says nothing: the facts stay small).
const LISTED_MAX: usize = 1024;
/// The longest `linux_dirent64` record (a 255-byte name): a listing that left this much of its
/// buffer unused returned every entry left.
const DIRENT_MAX: i64 = 280;

/// [`NameKeys`] of `ev`, whose resolved paths' keys (in argument order) are `paths`.
fn name_keys(def: &ra_syscalls::SyscallDef, ev: &Event, paths: &[u64]) -> NameKeys {
    use ra_syscalls::Handler as H;
    let mut nk = NameKeys::default();
    let (Some(&first), Some(&last)) = (paths.first(), paths.last()) else { return nk };
    let handler = def.replay.handler();
    let exchange = handler == Some(H::Rename)
        && int_arg(ev, "flags").unwrap_or(0) & i64::from(libc::RENAME_EXCHANGE) != 0;
    if ok(ev) {
        if changes_names(def, ev) && !exchange {
            match handler {
                Some(H::Unlink) => nk.removed = Some(first),
                Some(H::Rename) => {
                    nk.removed = Some(first);
                    nk.made = Some(last);
                }
                _ => nk.made = Some(last),
            }
        }
    } else if ev.errno == Some(libc::EEXIST) && changes_names(def, ev) {
        nk.existed = Some(last);
    } else if ev.errno == Some(libc::ENOENT) {
        nk.missing = paths.to_vec();
    }
    nk
}

/// An open that may create or empty its file (`O_CREAT`, `O_TMPFILE`, `O_TRUNC`): not a
/// plain lookup.
fn creates_or_truncates(ev: &Event) -> bool {
    let f = ev.open_flags().unwrap_or(0) as i32;
    f & (libc::O_CREAT | libc::O_TRUNC) != 0 || f & libc::O_TMPFILE == libc::O_TMPFILE
}

/// The link count a successful `stat`/`statx` recorded, when it stat'ed a directory.
fn dir_nlink(ev: &Event) -> Option<u64> {
    let def = ev.def?;
    def.args.iter().zip(&ev.args).find_map(|(a, v)| match (a.kind, v) {
        (ra_syscalls::ArgKind::OutStruct(ra_syscalls::Struct::Stat, _), ArgValue::Data(d)) => {
            let s = ra_trace::structs::Stat::decode(d)?;
            (s.mode & libc::S_IFMT == libc::S_IFDIR).then_some(s.nlink)
        }
        (ra_syscalls::ArgKind::OutStruct(ra_syscalls::Struct::Statx, _), ArgValue::Data(d)) => {
            let s = ra_trace::structs::Statx::decode(d)?;
            let mask = libc::STATX_TYPE | libc::STATX_NLINK;
            (s.mask & mask == mask && u32::from(s.mode) & libc::S_IFMT == libc::S_IFDIR)
                .then_some(u64::from(s.nlink))
        }
        _ => None,
    })
}

/// The descriptor numbers a successful call takes, as its record says: the new descriptors it
/// returned (one, or a pair), `dup2`/`dup3`'s target, or those a `recvmsg` received
/// (`SCM_RIGHTS`). Needs no model: the planner also asks it of calls read ahead.
pub fn taken_numbers(ev: &Event) -> impl Iterator<Item = i32> {
    let ev = &*ra_trace::uring::effective(ev);
    let mut v = [None, None];
    let mut received = Vec::new();
    if let Some(def) = ev.def.filter(|_| ok(ev)) {
        match def.replay.handler() {
            Some(H::Dup) if def.arg("newfd").is_some() => {
                v[0] = int_arg(ev, "newfd").and_then(|n| i32::try_from(n).ok());
            }
            _ => {
                if let Some((a, b)) = fd_pair(ev) {
                    v = [Some(a), Some(b)];
                } else if ev.makes_fd() {
                    v[0] = ev.ret.and_then(|r| i32::try_from(r).ok());
                } else if let Some((true, fds)) = passed_descriptors(ev) {
                    received = fds;
                }
            }
        }
    }
    v.into_iter().flatten().chain(received)
}

/// The descriptors a successful call passed in a message (`SCM_RIGHTS`, as recorded): whether
/// it received them (a `recvmsg`: the numbers it took for them) or sent them (a `sendmsg`: the
/// sender's numbers), and the numbers. None when it passed none.
pub fn passed_descriptors(ev: &Event) -> Option<(bool, Vec<i32>)> {
    let def = ev.def?;
    let m = def.msg_arg()?;
    let fds = ev.scm_rights();
    (ok(ev) && !fds.is_empty()).then(|| (def.args[m].kind.is_output(), fds))
}

/// The ordering key of descriptor number `fd` in descriptor table `fdt`.
fn fd_key(fdt: u64, fd: i32) -> u64 {
    let mut h = DefaultHasher::new();
    (b"fd", fdt, fd).hash(&mut h);
    h.finish() | 1
}

/// A path argument without its trailing NUL.
pub fn path_arg<'a>(ev: &'a Event, name: &str) -> Option<&'a [u8]> {
    match ev.arg(name)? {
        ArgValue::Data(d) => Some(d.strip_suffix(&[0]).unwrap_or(d)),
        _ => None,
    }
}

/// An integer argument.
pub fn int_arg(ev: &Event, name: &str) -> Option<i64> {
    ev.arg(name)?.as_int()
}

/// True when the recorded call succeeded.
pub fn ok(ev: &Event) -> bool {
    ev.errno.unwrap_or(0) == 0 && ev.ret.is_some_and(|r| r >= 0)
}

/// The two fds of a recorded `pipe`/`pipe2`/`socketpair` result.
pub fn fd_pair(ev: &Event) -> Option<(i32, i32)> {
    let d = ev.def?.args.iter().zip(&ev.args).find_map(|(a, v)| match (a.kind, v) {
        (ra_syscalls::ArgKind::OutStruct(ra_syscalls::Struct::FdPair, _), ArgValue::Data(d)) => {
            Some(d)
        }
        _ => None,
    })?;
    if d.len() < 8 {
        return None;
    }
    Some((
        i32::from_le_bytes(d[0..4].try_into().ok()?),
        i32::from_le_bytes(d[4..8].try_into().ok()?),
    ))
}

/// The clone flags of a process-creating call, if `ev` is one.
pub fn clone_flags(ev: &Event) -> Option<u64> {
    let def = ev.def?;
    if def.replay.handler() != Some(H::Clone) {
        return None;
    }
    // fork and vfork imply theirs, clone3 has them first in its struct clone_args, clone
    // passes them.
    if let Some(f) = def.implied_flags {
        return Some(f as u64);
    }
    if def.has_struct(ra_syscalls::Struct::CloneArgs) {
        let d = ev.args.iter().find_map(ArgValue::as_data)?;
        return Some(u64::from_le_bytes(d.get(0..8)?.try_into().ok()?));
    }
    Some(int_arg(ev, "flags").unwrap_or(0) as u64)
}

/// A descriptor as the model sees it.
#[derive(Debug)]
pub struct SFile {
    /// Normalized logical path (empty for pipes, sockets, unknown).
    pub path: Vec<u8>,
    /// The file's ordering key ([`key_of`] of `path`); 0 when the path is unknown (pipes,
    /// sockets, inherited descriptors), which orders nothing.
    pub key: u64,
    /// The descriptor's file position as the recorded calls moved it (bytes; for a
    /// directory stream, the bytes `getdents` listed so far, so 0 means at its start).
    pub offset: i64,
}

type Fds = Rc<RefCell<HashMap<i32, Rc<RefCell<SFile>>>>>;

#[derive(Debug)]
struct SProc {
    fds: Fds,
    /// Identity of the descriptor table (shared by `CLONE_FILES` children).
    fdt: u64,
    cwd: Rc<RefCell<Vec<u8>>>,
    tids: HashSet<i32>,
}

/// Where the model puts one call.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// The replayed process the call runs in (the model's id, not the recorded pid).
    pub proc: ProcId,
    /// The call creates a process (not a thread): its id and the clone flags.
    pub child: Option<(ProcId, u64)>,
    /// The call creates a thread of the same process (its tid).
    pub thread: Option<i32>,
    /// After this call the process has no thread left (exit of the last one, exit_group).
    pub ends_proc: bool,
    /// The process is new (first seen here, not created by a recorded clone).
    pub first_seen: bool,
    /// Ordering keys of the files the call touches.
    pub keys: Vec<u64>,
    /// Ordering keys of the descriptor numbers the call takes or frees (kept in recorded
    /// order strictly: the kernel hands a number out only after it was freed).
    pub fd_keys: Vec<u64>,
    /// A synthetic record of a descriptor the process had before the trace began.
    pub inherited: bool,
    /// Threads the process has (as the model knows them) when the call is made.
    pub threads: usize,
    /// The names the call made or removed, or failed on.
    pub names: NameKeys,
}

/// The model.
#[derive(Debug)]
pub struct Shadow {
    procs: HashMap<ProcId, SProc>,
    tid_proc: HashMap<i32, ProcId>,
    pid_proc: HashMap<i32, ProcId>,
    next: ProcId,
    initial_cwd: Vec<u8>,
    /// The files of descriptors sent in messages (`SCM_RIGHTS`), by the sendmsg's unique_id,
    /// until the recvmsg that received them (the planner's [`crate::planner::RIGHTS_FROM`]).
    in_flight: Passed<Rc<RefCell<SFile>>>,
}

impl Shadow {
    /// An empty model whose processes, as they first appear, start in `initial_cwd` (the
    /// trace's starting directory; normalized here).
    pub fn new(initial_cwd: Vec<u8>) -> Shadow {
        Shadow {
            procs: HashMap::new(),
            tid_proc: HashMap::new(),
            pid_proc: HashMap::new(),
            next: 1,
            initial_cwd: normalize(&initial_cwd),
            in_flight: Passed::default(),
        }
    }

    /// True when `tid` is not (yet) part of any modelled process.
    pub fn knows(&self, tid: i32) -> bool {
        self.tid_proc.contains_key(&tid)
    }

    fn proc_of(&mut self, ev: &Event) -> (ProcId, bool) {
        let tid = ev.tid.or(ev.pid).unwrap_or(0);
        if let Some(&p) = self.tid_proc.get(&tid) {
            return (p, false);
        }
        if let Some(&p) = ev.pid.and_then(|pid| self.pid_proc.get(&pid)) {
            if let Some(sp) = self.procs.get_mut(&p) {
                sp.tids.insert(tid);
            }
            self.tid_proc.insert(tid, p);
            return (p, false);
        }
        let id = self.next;
        self.next += 1;
        let mut fds = HashMap::new();
        for fd in 0..3 {
            fds.insert(fd, Rc::new(RefCell::new(SFile { path: Vec::new(), key: 0, offset: 0 })));
        }
        self.procs.insert(
            id,
            SProc {
                fds: Rc::new(RefCell::new(fds)),
                fdt: id,
                cwd: Rc::new(RefCell::new(self.initial_cwd.clone())),
                tids: [tid].into_iter().collect(),
            },
        );
        self.tid_proc.insert(tid, id);
        if let Some(pid) = ev.pid {
            self.pid_proc.insert(pid, id);
        }
        (id, true)
    }

    /// The process `tid` belongs to, if known.
    pub fn proc_id_of(&self, tid: i32) -> Option<ProcId> {
        self.tid_proc.get(&tid).copied()
    }

    /// The process's cwd.
    pub fn cwd(&self, p: ProcId) -> Vec<u8> {
        self.procs.get(&p).map(|s| s.cwd.borrow().clone()).unwrap_or_else(|| b"/".to_vec())
    }

    /// The model's file behind `fd` in process `p`.
    pub fn file(&self, p: ProcId, fd: i32) -> Option<Rc<RefCell<SFile>>> {
        self.procs.get(&p)?.fds.borrow().get(&fd).cloned()
    }

    /// The normalized logical path `dirfd`+`path` names in process `p` (None: unknown dirfd).
    pub fn resolve(&self, p: ProcId, dirfd: Option<i64>, path: &[u8]) -> Option<Vec<u8>> {
        if path.starts_with(b"/") {
            return Some(normalize(path));
        }
        let base = match dirfd {
            None | Some(-100) => self.cwd(p),
            Some(fd) => {
                let f = self.file(p, fd as i32)?;
                let b = f.borrow().path.clone();
                if b.is_empty() {
                    return None;
                }
                b
            }
        };
        Some(normalize(&join(&base, path)))
    }

    /// [`NameKeys`] of `ev`, a call of process `p`, as the model stands.
    pub fn name_keys(&self, p: ProcId, ev: &Event) -> NameKeys {
        let ev = &*ra_trace::uring::effective(ev);
        let Some(def) = ev.def else { return NameKeys::default() };
        let keys: Vec<u64> = self.paths(p, ev).iter().map(|p| key_of(p)).collect();
        name_keys(def, ev, &keys)
    }

    /// [`DirFact`]s of `ev`, a call of process `p`, as the model stands before it: each with
    /// the key of its directory. Names a call made or removed (a rename: both); what a
    /// successful lookup (`stat`, `access`, `readlink`, `statfs`, an open that creates
    /// nothing) found, or one failed with `ENOENT` missed, in the directory above its path; a
    /// directory's link count from a `stat` of it; the names a `getdents` listed (a whole
    /// listing: the stream's first call, with room left in its buffer).
    pub fn dir_facts(&self, p: ProcId, ev: &Event) -> Vec<(u64, DirFact)> {
        let ev = &*ra_trace::uring::effective(ev);
        let mut out = Vec::new();
        let Some(def) = ev.def else { return out };
        let handler = def.replay.handler();
        let under = |path: &[u8]| parent_of(path).map(key_of);
        if matches!(handler, Some(H::Getdents)) {
            let Some(f) = int_arg(ev, "fd").and_then(|fd| self.file(p, fd as i32)) else {
                return out;
            };
            let f = f.borrow();
            let ret = ev.ret.unwrap_or(0);
            if !ok(ev) || f.path.is_empty() || (ret == 0 && f.offset != 0) {
                return out;
            }
            let ents = match ev.arg("dirp").and_then(ArgValue::as_data) {
                Some(d) if def.has_struct(ra_syscalls::Struct::Dirents) => {
                    ra_trace::structs::parse_dirents(d)
                }
                Some(d) => ra_trace::structs::parse_dirents64(d),
                None if ret == 0 => Vec::new(),
                None => return out,
            };
            if ents.len() > LISTED_MAX {
                return out;
            }
            // An entry's path: the directory's (normalized) and its name (one component).
            let mut p = f.path.clone();
            if !p.ends_with(b"/") {
                p.push(b'/');
            }
            let at = p.len();
            let present = ents
                .iter()
                .filter(|e| e.name != b"." && e.name != b"..")
                .map(|e| {
                    p.truncate(at);
                    p.extend_from_slice(&e.name);
                    key_of(&p)
                })
                .collect();
            let count = int_arg(ev, "count").unwrap_or(0);
            let whole = f.offset == 0 && ret + DIRENT_MAX <= count;
            out.push((f.key, DirFact::Names { present, absent: Vec::new(), whole }));
            return out;
        }
        let lookup = match handler {
            Some(H::Stat | H::Access | H::Readlink | H::Statfs) => true,
            Some(H::Open) => !creates_or_truncates(ev),
            _ => false,
        };
        let change = ok(ev) && changes_names(def, ev);
        if !change && !lookup {
            return out;
        }
        let paths = self.paths(p, ev);
        if change {
            let exchange = handler == Some(H::Rename)
                && int_arg(ev, "flags").unwrap_or(0) & i64::from(libc::RENAME_EXCHANGE) != 0;
            let flags = def.implied_flags.or_else(|| int_arg(ev, "flags")).unwrap_or(0);
            let dir_removed = flags & i64::from(libc::AT_REMOVEDIR) != 0;
            let change = |path: &Vec<u8>, made: bool, subdir: Option<bool>| {
                under(path).map(|d| (d, DirFact::Change { name: key_of(path), made, subdir }))
            };
            match (handler, paths.first(), paths.last()) {
                (_, None, _) | (_, _, None) => {}
                (Some(H::Rename), Some(a), Some(b)) if !exchange => {
                    out.extend(change(a, false, None));
                    out.extend(change(b, true, None));
                }
                (Some(H::Rename), ..) => {}
                (Some(H::Unlink), Some(a), _) => out.extend(change(a, false, Some(dir_removed))),
                (Some(H::Mkdir), _, Some(b)) => out.extend(change(b, true, Some(true))),
                (_, _, Some(b)) => out.extend(change(b, true, Some(false))),
            }
            return out;
        }
        if paths.len() != 1 {
            // fstat of a directory's descriptor: its link count.
            if ok(ev) && handler == Some(H::Stat) && def.arg("fd").is_some() {
                let f = int_arg(ev, "fd").and_then(|fd| self.file(p, fd as i32));
                if let (Some(f), Some(n)) = (f, dir_nlink(ev)) {
                    let k = f.borrow().key;
                    if k != 0 {
                        out.push((k, DirFact::Nlink(n)));
                    }
                }
            }
            return out;
        }
        let path = &paths[0];
        let Some(dir) = under(path) else { return out };
        if ok(ev) {
            out.push((
                dir,
                DirFact::Names { present: vec![key_of(path)], absent: Vec::new(), whole: false },
            ));
            if let Some(n) = dir_nlink(ev) {
                out.push((key_of(path), DirFact::Nlink(n)));
            }
        } else if ev.errno == Some(libc::ENOENT) {
            out.push((
                dir,
                DirFact::Names { present: Vec::new(), absent: vec![key_of(path)], whole: false },
            ));
        }
        out
    }

    /// The (dirfd, path) pairs a call names, resolved: first the call's own path, then (for
    /// two-path calls) the second.
    pub fn paths(&self, p: ProcId, ev: &Event) -> Vec<Vec<u8>> {
        let ev = &*ra_trace::uring::effective(ev);
        let Some(def) = ev.def else { return Vec::new() };
        let mut out = Vec::new();
        let mut dirfd: Option<i64> = None;
        for (a, v) in def.args.iter().zip(&ev.args) {
            match a.kind {
                ra_syscalls::ArgKind::DirFd => dirfd = v.as_int(),
                ra_syscalls::ArgKind::Path => {
                    if let ArgValue::Data(d) = v {
                        let d = d.strip_suffix(&[0]).unwrap_or(d);
                        // symlink's target is not a path the call resolves.
                        if def.replay.handler() == Some(H::Symlink) && (a.name == "target") {
                            continue;
                        }
                        if let Some(r) = self.resolve(p, dirfd, d) {
                            out.push(r);
                        }
                    }
                    dirfd = None;
                }
                _ => {}
            }
        }
        out
    }

    /// Advance the model over one recorded call.
    pub fn step(&mut self, ev: &Event) -> Placement {
        // An io_uring path request (OPENAT, RENAMEAT, CLOSE, ...) as the call it stands for.
        let ev = &*ra_trace::uring::effective(ev);
        let (proc, first_seen) = self.proc_of(ev);
        let threads = self.procs.get(&proc).map_or(1, |p| p.tids.len());
        let mut pl = Placement { proc, first_seen, threads, ..Default::default() };
        let Some(def) = ev.def else { return pl };
        let success = ok(ev);
        let ret = ev.ret.unwrap_or(-1);
        let tid = ev.tid.or(ev.pid).unwrap_or(0);
        // Ordering keys: the files named by fd arguments and by paths.
        for (a, v) in def.args.iter().zip(&ev.args) {
            if matches!(a.kind, ra_syscalls::ArgKind::Fd) {
                if let Some(f) = v.as_int().and_then(|fd| self.file(proc, fd as i32)) {
                    let k = f.borrow().key;
                    if k != 0 {
                        pl.keys.push(k);
                    }
                }
            }
        }
        let paths = self.paths(proc, ev);
        let path_keys: Vec<u64> = paths.iter().map(|p| key_of(p)).collect();
        pl.keys.extend(&path_keys);
        // A call that adds or removes a name in a directory also keys that directory: a
        // listing of it (getdents on a descriptor of it) by another process keeps its order
        // with the change (stress-ng's dir stressor: one process makes and removes
        // directories while another lists them).
        if changes_names(def, ev) {
            pl.keys.extend(paths.iter().filter_map(|p| parent_of(p)).map(key_of));
        }
        pl.names = name_keys(def, ev, &path_keys);
        // Descriptor numbers: a call that frees number N and a later one that takes it keep
        // their order (threads of one process share the table; the kernel hands out N only
        // after the close).
        if let Some(sp) = self.procs.get(&proc) {
            let fdt = sp.fdt;
            let (made, freed) = self.fd_numbers(proc, ev);
            pl.fd_keys.extend(made.iter().chain(&freed).map(|&n| fd_key(fdt, n)));
        }
        if let Some(flags) = clone_flags(ev) {
            if success && ret > 0 {
                let child = ret as i32;
                if flags & libc::CLONE_THREAD as u64 != 0 {
                    self.tid_proc.insert(child, proc);
                    if let Some(sp) = self.procs.get_mut(&proc) {
                        sp.tids.insert(child);
                    }
                    pl.thread = Some(child);
                } else if let Some(&known) =
                    self.tid_proc.get(&child).filter(|&&k| k != proc && self.procs.contains_key(&k))
                {
                    // The child's calls came before the clone that made it (a vfork returns
                    // after the child's exec; a ring buffer may deliver it late): the child is
                    // already modelled, from its own calls. It also has what it inherited: the
                    // parent's descriptors it has not replaced since.
                    let inherited: Vec<(i32, Rc<RefCell<SFile>>)> =
                        if flags & libc::CLONE_FILES as u64 == 0 {
                            self.procs[&proc]
                                .fds
                                .borrow()
                                .iter()
                                .map(|(k, v)| (*k, v.clone()))
                                .collect()
                        } else {
                            Vec::new()
                        };
                    let child_fds = self.procs[&known].fds.clone();
                    let mut t = child_fds.borrow_mut();
                    for (fd, f) in inherited {
                        t.entry(fd).or_insert(f);
                    }
                } else {
                    let id = self.next;
                    self.next += 1;
                    let parent = &self.procs[&proc];
                    let (fds, fdt) = if flags & libc::CLONE_FILES as u64 != 0 {
                        (parent.fds.clone(), parent.fdt)
                    } else {
                        (Rc::new(RefCell::new(parent.fds.borrow().clone())), id)
                    };
                    let cwd = if flags & libc::CLONE_FS as u64 != 0 {
                        parent.cwd.clone()
                    } else {
                        Rc::new(RefCell::new(parent.cwd.borrow().clone()))
                    };
                    self.procs
                        .insert(id, SProc { fds, fdt, cwd, tids: [child].into_iter().collect() });
                    self.tid_proc.insert(child, id);
                    self.pid_proc.insert(child, id);
                    pl.child = Some((id, flags));
                }
            }
            return pl;
        }
        let handler = def.replay.handler();
        // A call with a descriptor pair result (pipe, pipe2, socketpair).
        let pair = if success { fd_pair(ev) } else { None };
        // Descriptors passed in a message (`SCM_RIGHTS`).
        let passed = passed_descriptors(ev);
        match handler {
            Some(H::Open) if success => {
                let path = paths.first().cloned().unwrap_or_default();
                let key = if path.is_empty() { 0 } else { key_of(&path) };
                self.set_fd(proc, ret as i32, SFile { path, key, offset: 0 });
            }
            Some(H::Close) if success || ev.errno == Some(libc::EINTR) => {
                if let Some(fd) = int_arg(ev, "fd") {
                    self.fds(proc).borrow_mut().remove(&(fd as i32));
                }
            }
            Some(H::CloseRange) => {
                let first = int_arg(ev, "first").unwrap_or(0);
                let last = int_arg(ev, "last").unwrap_or(0).min(i32::MAX as i64);
                let flags = int_arg(ev, "flags").unwrap_or(0);
                if success && flags & 4 == 0 {
                    self.fds(proc)
                        .borrow_mut()
                        .retain(|&k, _| (k as i64) < first || (k as i64) > last);
                }
            }
            Some(H::Dup | H::Fcntl) if success => {
                let old = int_arg(ev, "oldfd").or_else(|| int_arg(ev, "fd")).unwrap_or(-1);
                let is_dup = handler == Some(H::Dup)
                    || matches!(
                        int_arg(ev, "cmd").unwrap_or(-1) as u64,
                        ra_syscalls::flags::F_DUPFD | ra_syscalls::flags::F_DUPFD_CLOEXEC
                    );
                if is_dup {
                    if let Some(f) = self.file(proc, old as i32) {
                        self.fds(proc).borrow_mut().insert(ret as i32, f);
                    }
                }
            }
            _ if pair.is_some() => {
                if let Some((a, b)) = pair {
                    // No ordering key: a read and the write that feeds it are often recorded
                    // in the "wrong" order (the read returns first) and must be able to
                    // overlap; the interval rule orders those that didn't.
                    self.set_fd(proc, a, SFile { path: Vec::new(), key: 0, offset: 0 });
                    self.set_fd(proc, b, SFile { path: Vec::new(), key: 0, offset: 0 });
                }
            }
            // Descriptors passed in a message: the receiver's new numbers name the files the
            // sender's named.
            _ if passed.is_some() => {
                let (received, fds) = passed.unwrap_or_default();
                if received {
                    let sent = ev
                        .extra_int(crate::planner::RIGHTS_FROM)
                        .map(|id| self.in_flight.receive(id as u64))
                        .unwrap_or_default();
                    for (i, n) in fds.into_iter().enumerate() {
                        let f = sent.get(i).cloned().flatten().unwrap_or_else(|| {
                            Rc::new(RefCell::new(SFile { path: Vec::new(), key: 0, offset: 0 }))
                        });
                        self.fds(proc).borrow_mut().insert(n, f);
                    }
                } else {
                    let files = fds.into_iter().map(|n| self.file(proc, n)).collect();
                    self.in_flight.send(ev.unique_id, files);
                }
            }
            Some(H::Chdir) if success => {
                if let Some(p) = paths.first() {
                    *self.procs[&proc].cwd.borrow_mut() = p.clone();
                }
            }
            Some(H::Fchdir) if success => {
                if let Some(f) = int_arg(ev, "fd").and_then(|fd| self.file(proc, fd as i32)) {
                    let p = f.borrow().path.clone();
                    if !p.is_empty() {
                        *self.procs[&proc].cwd.borrow_mut() = p;
                    }
                }
            }
            // Calls that move the offset (not the positional forms; a directory stream's
            // position counts the bytes listed, so that 0 says the stream starts).
            Some(H::Read | H::Write | H::ReadV | H::WriteV | H::Getdents)
                if success && def.arg("offset").is_none() =>
            {
                if let Some(f) = int_arg(ev, "fd").and_then(|fd| self.file(proc, fd as i32)) {
                    f.borrow_mut().offset += ret;
                }
            }
            // A copy's end without an offset pointer uses and moves the file position.
            Some(H::Copy) if success => {
                if let Some(c) = ev.copy() {
                    for (fd, off) in [(c.fd_in, c.off_in), (c.fd_out, c.off_out)] {
                        if let (None, Some(f)) = (off, self.file(proc, fd)) {
                            f.borrow_mut().offset += c.moved;
                        }
                    }
                }
            }
            Some(H::Seek) if success => {
                if let Some(f) = int_arg(ev, "fd").and_then(|fd| self.file(proc, fd as i32)) {
                    f.borrow_mut().offset = ret;
                }
            }
            Some(H::Exec) if success => {
                // Close-on-exec isn't modelled precisely here; the executors track it. Drop the
                // other threads of the process.
                if let Some(sp) = self.procs.get_mut(&proc) {
                    let others: Vec<i32> = sp.tids.iter().copied().filter(|&t| t != tid).collect();
                    for t in others {
                        sp.tids.remove(&t);
                        self.tid_proc.remove(&t);
                    }
                }
                if let Some(pid) = ev.pid {
                    if pid != tid {
                        // The exec'ing thread takes over the leader's id.
                        self.tid_proc.remove(&tid);
                        self.tid_proc.insert(pid, proc);
                        if let Some(sp) = self.procs.get_mut(&proc) {
                            sp.tids.remove(&tid);
                            sp.tids.insert(pid);
                        }
                    }
                }
            }
            // exit ends its thread, exit_group the process.
            Some(H::Exit) if !def.ends_process => self.thread_gone(proc, tid, &mut pl),
            Some(H::Exit) => {
                self.end(proc);
                pl.ends_proc = true;
            }
            // A call without a recorded result: its thread ended inside it (killed, as
            // Python's test_subprocess kills a child in its execve; or another thread's
            // exit_group while it blocked), or the trace ends there. The thread is gone after
            // it, as after exit, and so is its process when it was the last: its descriptors
            // close (a parent's read of the child's pipe then sees its end, as recorded).
            _ if ev.ended_inside() => self.thread_gone(proc, tid, &mut pl),
            // The other calls change nothing the model keeps.
            None
            | Some(H::Read)
            | Some(H::Write)
            | Some(H::ReadV)
            | Some(H::WriteV)
            | Some(H::Vmsplice)
            | Some(H::Tee)
            | Some(H::AsyncIo)
            | Some(H::UringOp)
            | Some(H::Seek)
            | Some(H::FdInts)
            | Some(H::Sync)
            | Some(H::Truncate)
            | Some(H::Flock)
            | Some(H::Ioctl)
            | Some(H::Copy)
            | Some(H::Open)
            | Some(H::MemfdCreate)
            | Some(H::Stat)
            | Some(H::Statfs)
            | Some(H::Access)
            | Some(H::Getdents)
            | Some(H::Mkdir)
            | Some(H::Unlink)
            | Some(H::Mknod)
            | Some(H::Link)
            | Some(H::Symlink)
            | Some(H::Readlink)
            | Some(H::Rename)
            | Some(H::Chmod)
            | Some(H::Fchmod)
            | Some(H::Chown)
            | Some(H::Fchown)
            | Some(H::Utimes)
            | Some(H::Xattr)
            | Some(H::Close)
            | Some(H::Dup)
            | Some(H::Fcntl)
            | Some(H::Pipe)
            | Some(H::Mmap)
            | Some(H::Munmap)
            | Some(H::MemAsRecorded)
            | Some(H::Msync)
            | Some(H::Mremap)
            | Some(H::MmapPage)
            | Some(H::Clone)
            | Some(H::Exec)
            | Some(H::Chdir)
            | Some(H::Fchdir)
            | Some(H::Chroot)
            | Some(H::Umask)
            | Some(H::Bind) => {}
        }
        // A new descriptor from a simulated call (socket, accept, eventfd, ...).
        if success && ev.makes_fd() && !matches!(handler, Some(H::Open | H::Dup)) {
            self.set_fd(proc, ret as i32, SFile { path: Vec::new(), key: 0, offset: 0 });
        }
        pl
    }

    /// The descriptor numbers `ev` takes (new descriptors it returns, `dup2`'s target,
    /// [`taken_numbers`]) and frees (`close`, `close_range`, the old occupant of `dup2`'s
    /// target), in process `p`.
    pub fn fd_numbers(&self, p: ProcId, ev: &Event) -> (Vec<i32>, Vec<i32>) {
        let ev = &*ra_trace::uring::effective(ev);
        let made = taken_numbers(ev).collect();
        let mut freed = Vec::new();
        let Some(def) = ev.def else { return (made, freed) };
        match def.replay.handler() {
            Some(H::Close) => freed.extend(int_arg(ev, "fd").and_then(|v| i32::try_from(v).ok())),
            Some(H::CloseRange) if ok(ev) && int_arg(ev, "flags").unwrap_or(0) & 4 == 0 => {
                let first = int_arg(ev, "first").unwrap_or(0);
                let last = int_arg(ev, "last").unwrap_or(0);
                if let Some(sp) = self.procs.get(&p) {
                    freed.extend(
                        sp.fds.borrow().keys().filter(|&&k| (first..=last).contains(&i64::from(k))),
                    );
                }
            }
            _ => {}
        }
        (made, freed)
    }

    /// True when descriptor `fd` of process `p` is open in the model.
    pub fn fd_open(&self, p: ProcId, fd: i32) -> bool {
        self.procs.get(&p).is_some_and(|sp| sp.fds.borrow().contains_key(&fd))
    }

    /// Whether a thread other than `tid` can use process `p`'s descriptor table: another
    /// thread of the process, or a process sharing the table (`CLONE_FILES`).
    pub fn fd_table_shared(&self, p: ProcId, tid: i32) -> bool {
        self.procs
            .get(&p)
            .is_some_and(|sp| sp.tids.iter().any(|&t| t != tid) || Rc::strong_count(&sp.fds) > 1)
    }

    /// The descriptor table identity of process `p`.
    pub fn fd_table(&self, p: ProcId) -> Option<u64> {
        self.procs.get(&p).map(|sp| sp.fdt)
    }

    fn fds(&self, p: ProcId) -> Fds {
        self.procs[&p].fds.clone()
    }

    fn set_fd(&mut self, p: ProcId, fd: i32, f: SFile) {
        self.fds(p).borrow_mut().insert(fd, Rc::new(RefCell::new(f)));
    }

    /// Thread `tid` of `p` is gone (its exit, or a call it ended inside): so is the process
    /// when it was its last thread.
    fn thread_gone(&mut self, p: ProcId, tid: i32, pl: &mut Placement) {
        let last = self.procs.get_mut(&p).map(|sp| {
            sp.tids.remove(&tid);
            sp.tids.is_empty()
        });
        self.tid_proc.remove(&tid);
        if last == Some(true) {
            self.end(p);
            pl.ends_proc = true;
        }
    }

    fn end(&mut self, p: ProcId) {
        if let Some(sp) = self.procs.remove(&p) {
            for t in sp.tids {
                if self.tid_proc.get(&t) == Some(&p) {
                    self.tid_proc.remove(&t);
                }
            }
        }
        self.pid_proc.retain(|_, v| *v != p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, pid: i32, ret: i64, args: &[(&str, ArgValue)]) -> Event {
        crate::testutil::event(name, pid, ret, 0, args)
    }

    fn open(pid: i32, path: &str, fd: i64) -> Event {
        let mut p = path.as_bytes().to_vec();
        p.push(0);
        ev(
            "openat",
            pid,
            fd,
            &[
                ("dirfd", ArgValue::Int(-100)),
                ("pathname", ArgValue::data(p)),
                ("flags", ArgValue::Int(0)),
            ],
        )
    }

    /// A vfork child whose calls were recorded before the vfork (it returns after the child's
    /// exec): the child keeps what it opened itself and gains what it inherited.
    #[test]
    fn a_child_recorded_before_its_clone_keeps_its_own_and_its_inherited_descriptors() {
        let mut s = Shadow::new(b"/w".to_vec());
        s.step(&open(10, "/w/parent", 3));
        let c = s.step(&open(11, "/w/child", 4));
        assert!(c.first_seen);
        let v = s.step(&ev("vfork", 10, 11, &[]));
        assert_eq!(v.child, None, "the child exists already: no second process");
        let child = s.proc_id_of(11).unwrap();
        assert_eq!(s.file(child, 4).unwrap().borrow().path, b"/w/child");
        assert_eq!(s.file(child, 3).unwrap().borrow().path, b"/w/parent");
    }

    /// Another thread of the process, or a process sharing the table, can use a descriptor
    /// table; a process alone with it, or one whose child only copied it, cannot.
    #[test]
    fn a_descriptor_table_is_shared_by_threads_and_clone_files_children() {
        let mut s = Shadow::new(b"/w".to_vec());
        s.step(&open(10, "/w/a", 3));
        let p = s.proc_id_of(10).unwrap();
        assert!(!s.fd_table_shared(p, 10), "one thread");
        let clone = |pid: i32, flags: i64, child: i64| {
            ev("clone", pid, child, &[("flags", ArgValue::Int(flags))])
        };
        s.step(&clone(10, i64::from(libc::SIGCHLD), 11));
        assert!(!s.fd_table_shared(p, 10), "a forked child has a copy");
        let forked = s.proc_id_of(11).unwrap();
        assert!(!s.fd_table_shared(forked, 11));
        s.step(&clone(10, i64::from(libc::CLONE_FILES | libc::SIGCHLD), 12));
        assert!(s.fd_table_shared(p, 10), "a CLONE_FILES child shares it");
        let mut s = Shadow::new(b"/w".to_vec());
        s.step(&open(20, "/w/a", 3));
        let p = s.proc_id_of(20).unwrap();
        s.step(&clone(
            20,
            i64::from(libc::CLONE_VM | libc::CLONE_FS | libc::CLONE_FILES | libc::CLONE_SIGHAND)
                | i64::from(libc::CLONE_THREAD),
            21,
        ));
        assert!(s.fd_table_shared(p, 20), "a thread shares it");
        assert!(s.fd_table_shared(p, 21));
    }

    /// A mkdir in a directory and a listing of that directory through a descriptor share a
    /// key (their order holds across processes); a plain open of a file does not key its
    /// directory.
    #[test]
    fn a_name_change_keys_its_directory() {
        assert_eq!(parent_of(b"/a/b"), Some(&b"/a"[..]));
        assert_eq!(parent_of(b"/a"), Some(&b"/"[..]));
        assert_eq!(parent_of(b"/"), None);
        let mut s = Shadow::new(b"/w".to_vec());
        let mk = s.step(&ev(
            "mkdir",
            1,
            0,
            &[("pathname", ArgValue::data(b"/w/d/x".to_vec())), ("mode", ArgValue::Int(0o755))],
        ));
        assert_eq!(mk.keys, [key_of(b"/w/d/x"), key_of(b"/w/d")]);
        s.step(&open(2, "/w/d", 3));
        let ls = s.step(&ev("getdents64", 2, 0, &[("fd", ArgValue::Int(3))]));
        assert!(ls.keys.contains(&key_of(b"/w/d")), "{:?}", ls.keys);
        let o = s.step(&open(2, "/w/d/y", 4));
        assert_eq!(o.keys, [key_of(b"/w/d/y")], "opening without O_CREAT");
        // openat2's flags are in its struct open_how.
        let how = |flags: i32| {
            let mut h = i64::from(flags).to_le_bytes().to_vec();
            h.extend([0u8; 16]);
            ArgValue::data(h)
        };
        for (flags, keys) in [
            (libc::O_WRONLY | libc::O_CREAT, vec![key_of(b"/w/d/z"), key_of(b"/w/d")]),
            (libc::O_RDONLY, vec![key_of(b"/w/d/z")]),
        ] {
            let o2 = s.step(&ev(
                "openat2",
                2,
                5,
                &[
                    ("dirfd", ArgValue::Int(-100)),
                    ("pathname", ArgValue::data(b"/w/d/z\0".to_vec())),
                    ("how", how(flags)),
                    ("size", ArgValue::Int(24)),
                ],
            ));
            assert_eq!(o2.keys, keys, "openat2 with flags {flags:#o}");
            s.step(&ev("close", 2, 0, &[("fd", ArgValue::Int(5))]));
        }
    }

    /// dup2(fd, fd) names one file twice; descriptor numbers get their own keys.
    #[test]
    fn keys_name_files_and_descriptor_numbers() {
        let mut s = Shadow::new(b"/".to_vec());
        s.step(&open(1, "/f", 3));
        let d =
            s.step(&ev("dup2", 1, 3, &[("oldfd", ArgValue::Int(3)), ("newfd", ArgValue::Int(3))]));
        assert_eq!(d.keys, [key_of(b"/f"), key_of(b"/f")]);
        assert_eq!(d.fd_keys.len(), 1);
        let c = s.step(&ev("close", 1, 0, &[("fd", ArgValue::Int(3))]));
        assert_eq!(c.fd_keys, d.fd_keys, "close frees the number dup2 took");
        assert!(!s.fd_open(s.proc_id_of(1).unwrap(), 3));
    }
}
