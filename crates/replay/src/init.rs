//! `--init=infer`: recreate beneath the root the files the trace shows to have existed before
//! it started — opened without creating them, stat'ed, read, listed, executed, removed or
//! renamed away — with their types, sizes, modes and owners where a `stat` showed them, and
//! their content where reads captured it (zeros elsewhere).
//!
//! One pass over the trace runs the [`Shadow`] model and keeps, per path, what the first
//! observation said, as long as nothing in the trace had changed that path before. Data read
//! from such a file before anything wrote to it is written into the root as it is met, so
//! memory holds metadata only. Paths under `/proc`, `/sys` and `/dev` (simulated by the
//! replay) and under `skip` (restored from a snapshot) are left alone.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::AsRawFd;

use ra_syscalls::ArgKind;
use ra_trace::structs::{parse_dirents, parse_dirents64, Stat, Statx};
use ra_trace::{ArgValue, Event, TraceReader};

use crate::sandbox::{join, Root};
use crate::shadow::{int_arg, ok, Shadow};
use crate::sys;
use crate::world::ProcId;
use crate::{Error, Result};

/// What `infer` created.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InferStats {
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    /// Bytes of file content taken from recorded reads.
    pub bytes_known: u64,
    /// Bytes of file size with no recorded content (zero-filled).
    pub bytes_unknown: u64,
    /// (st_dev, st_ino) of the directories created: they hold only the entries the trace
    /// showed, so their link counts and sizes differ from the originals'.
    pub partial_dirs: Vec<(u64, u64)>,
    /// (st_dev, st_ino) of the files created: their link counts are unknown (a hard link
    /// elsewhere on the recording machine is not in the trace).
    pub files_created: Vec<(u64, u64)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Symlink(Vec<u8>),
}

#[derive(Debug, Default)]
struct Node {
    kind: Option<Kind>,
    mode: Option<u32>,
    owner: Option<(u32, u32)>,
    size: Option<u64>,
    /// Largest offset+length read.
    read_end: u64,
    /// Extents written from recorded reads: (offset, length).
    known: BTreeMap<u64, u64>,
    exec: bool,
}

#[derive(Debug)]
enum Status {
    /// Existed before the trace; what we learned.
    Initial(Node),
    /// Changed by the trace before we learned anything: not initial state.
    Touched,
    /// Observed missing.
    Absent,
}

/// Paths the replay doesn't reproduce.
fn ignored(p: &[u8], skip: &[Vec<u8>]) -> bool {
    let under = |p: &[u8], d: &[u8]| {
        p == d || (p.starts_with(d) && (d.ends_with(b"/") || p.get(d.len()) == Some(&b'/')))
    };
    [&b"/proc"[..], b"/sys", b"/dev"].iter().any(|d| under(p, d))
        || skip.iter().any(|d| under(p, d))
}

struct Infer<'a> {
    root: &'a Root,
    skip: &'a [Vec<u8>],
    paths: HashMap<Vec<u8>, Status>,
    /// Initial files something in the trace has written (their later reads are not initial).
    written: std::collections::HashSet<Vec<u8>>,
    stats: InferStats,
}

impl Infer<'_> {
    /// Note that `p` existed (as `kind` when known), unless the trace changed it first.
    fn exists(&mut self, p: &[u8], kind: Option<Kind>) -> Option<&mut Node> {
        if ignored(p, self.skip) || self.written.contains(p) {
            return None;
        }
        // Every ancestor is a directory that existed too (unless the trace made it).
        let mut anc = p.to_vec();
        while let Some(i) = anc.iter().rposition(|&c| c == b'/') {
            anc.truncate(i);
            let a = if anc.is_empty() { b"/".to_vec() } else { anc.clone() };
            match self.paths.get_mut(&a) {
                Some(Status::Initial(n)) => {
                    n.kind = Some(Kind::Dir);
                }
                Some(_) => {}
                None => {
                    self.paths.insert(
                        a.clone(),
                        Status::Initial(Node { kind: Some(Kind::Dir), ..Default::default() }),
                    );
                }
            }
            if a == b"/" {
                break;
            }
        }
        let st = self.paths.entry(p.to_vec()).or_insert_with(|| Status::Initial(Node::default()));
        match st {
            Status::Initial(n) => {
                if (n.kind.is_none() || matches!(kind, Some(Kind::Dir) | Some(Kind::Symlink(_))))
                    && kind.is_some()
                {
                    n.kind = kind;
                }
                Some(n)
            }
            Status::Absent => {
                // Observed missing, then present without the trace making it: someone else
                // made it; not initial state.
                None
            }
            Status::Touched => None,
        }
    }
    fn touch(&mut self, p: &[u8]) {
        self.paths.entry(p.to_vec()).or_insert(Status::Touched);
        self.written.insert(p.to_vec());
    }
    fn absent(&mut self, p: &[u8]) {
        self.paths.entry(p.to_vec()).or_insert(Status::Absent);
    }
    fn stat(&mut self, p: &[u8], ev: &Event, nofollow: bool) {
        let raw = ev.def.and_then(|d| {
            d.args.iter().zip(&ev.args).find_map(|(a, v)| match (a.kind, v) {
                (ArgKind::OutStruct(ra_syscalls::Struct::Stat, _), ArgValue::Data(d)) => {
                    Stat::decode(d).map(|s| (s.mode, s.uid, s.gid, s.size as u64))
                }
                (ArgKind::OutStruct(ra_syscalls::Struct::Statx, _), ArgValue::Data(d)) => {
                    Statx::decode(d).map(|s| (u32::from(s.mode), s.uid, s.gid, s.size))
                }
                _ => None,
            })
        });
        let written = self.written.contains(p);
        let Some((mode, uid, gid, size)) = raw else {
            self.exists(p, None);
            return;
        };
        let kind = match mode & libc::S_IFMT {
            libc::S_IFDIR => Some(Kind::Dir),
            libc::S_IFLNK if nofollow => Some(Kind::Symlink(Vec::new())),
            libc::S_IFREG => Some(Kind::File),
            _ => None,
        };
        let is_link = matches!(kind, Some(Kind::Symlink(_)));
        if let Some(n) = self.exists(p, kind) {
            if n.mode.is_none() && !written {
                n.mode = Some(mode & 0o7777);
                n.owner = Some((uid, gid));
                if !is_link && mode & libc::S_IFMT == libc::S_IFREG {
                    n.size = Some(size);
                }
            }
        }
    }

    /// Content read from an initial file: write it into the root now.
    fn content(&mut self, p: &[u8], off: u64, data: &[u8], count: u64) -> Result<()> {
        if self.written.contains(p) || data.is_empty() && count == 0 {
            return Ok(());
        }
        let root = self.root;
        let Some(n) = self.exists(p, Some(Kind::File)) else { return Ok(()) };
        if n.kind != Some(Kind::File) {
            return Ok(());
        }
        let end = off + data.len() as u64;
        n.read_end = n.read_end.max(end);
        if (data.len() as u64) < count && n.size.is_none() {
            // A short read of a regular file: the end of the file.
            n.size = Some(end);
        }
        if data.is_empty() {
            return Ok(());
        }
        if n.known.range(..=off).next_back().is_some_and(|(&o, &l)| o + l >= end) {
            return Ok(());
        }
        n.known.insert(off, data.len() as u64);
        mkdirs(root, parent_of(p))?;
        let fd = root
            .open(p, libc::O_WRONLY | libc::O_CREAT, 0o600)
            .map_err(|e| init_err(p, "create", e))?;
        sys::pwrite(fd.as_raw_fd(), data, off as i64).map_err(|e| init_err(p, "write", e))?;
        self.stats.bytes_known += data.len() as u64;
        Ok(())
    }
}

fn parent_of(p: &[u8]) -> &[u8] {
    match p.iter().rposition(|&c| c == b'/') {
        Some(0) | None => b"/",
        Some(i) => &p[..i],
    }
}

fn init_err(p: &[u8], what: &str, e: i32) -> Error {
    Error::Init {
        what: format!("{what} {}", String::from_utf8_lossy(p)),
        source: std::io::Error::from_raw_os_error(e),
    }
}

/// `mkdir -p` beneath the root.
pub fn mkdirs(root: &Root, p: &[u8]) -> Result<()> {
    let mut cur = Vec::new();
    for c in p.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
        cur.push(b'/');
        cur.extend_from_slice(c);
        let (dir, name) = root.parent(&cur).map_err(|e| init_err(&cur, "resolve", e))?;
        match sys::mkdirat(dir.as_raw_fd(), &name, 0o755) {
            Ok(_) | Err(libc::EEXIST) => {}
            Err(e) => return Err(init_err(&cur, "mkdir", e)),
        }
    }
    Ok(())
}

/// The cwd the traced program started in: the trace info's `cwd` (our traces), else the
/// `PWD` of the first recorded execve's environment (original Re-Animator traces record no
/// cwd), else `/`.
pub fn initial_cwd(trace: &TraceReader) -> Vec<u8> {
    if let Some(c) = trace.info_value("cwd") {
        return c.to_vec();
    }
    let first_exec = trace.events(Some(&["execve"])).next().and_then(|e| e.ok());
    if let Some(ArgValue::Strings(env)) = first_exec.as_ref().and_then(|e| e.arg("envp")) {
        if let Some(pwd) = env.iter().find_map(|v| v.strip_prefix(b"PWD=")) {
            if pwd.starts_with(b"/") {
                return pwd.to_vec();
            }
        }
    }
    b"/".to_vec()
}

/// How many synthetic records of inherited descriptors our trace starts with.
pub fn synthetic_ids(trace: &TraceReader) -> u64 {
    match trace.kind() {
        ra_trace::TraceKind::Ours => trace
            .info_value("synthetic_ids")
            .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
            .unwrap_or(0),
        ra_trace::TraceKind::ReAnimator => 0,
    }
}

/// Infer the initial state from `trace` and create it beneath `root`.
pub fn infer(trace: &TraceReader, root: &Root, skip: &[Vec<u8>]) -> Result<InferStats> {
    let cwd = initial_cwd(trace);
    let mut sh = Shadow::new(cwd.clone());
    let mut st = Infer {
        root,
        skip,
        paths: HashMap::new(),
        written: Default::default(),
        stats: InferStats::default(),
    };
    st.exists(&crate::sandbox::normalize(&cwd), Some(Kind::Dir));
    let synthetic = synthetic_ids(trace);
    for ev in trace.events(None) {
        let ev = ev?;
        let Some(def) = ev.def else { continue };
        let Some(tid) = ev.tid.or(ev.pid) else { continue };
        if ev.unique_id < synthetic
            && !crate::shadow::path_arg(&ev, "pathname").is_some_and(|p| p.starts_with(b"/"))
        {
            // An inherited pipe, socket or terminal ("pipe:[123]"): not a file.
            sh.step(&ev);
            continue;
        }
        // Paths resolve against the model as it was before the call (chdir changes it).
        let before = sh.proc_id_of(tid).map(|p| sh.paths(p, &ev));
        let pl = sh.step(&ev);
        let paths = before.unwrap_or_else(|| sh.paths(pl.proc, &ev));
        observe(&mut st, &sh, &ev, def.name, pl.proc, paths)?;
    }
    create(&mut st)?;
    Ok(st.stats)
}

/// What one call shows about the initial state. `paths` were resolved before the model
/// stepped over the call; descriptors are looked up after it (reads leave the offset after the
/// data they read).
fn observe(
    st: &mut Infer<'_>,
    sh: &Shadow,
    ev: &Event,
    name: &str,
    proc: ProcId,
    paths: Vec<Vec<u8>>,
) -> Result<()> {
    let success = ok(ev) || (ev.errno.unwrap_or(0) == 0 && ev.ret.is_none());
    let first = paths.first().cloned();
    let enoent = ev.errno == Some(libc::ENOENT);
    let fd_path = |sh: &Shadow, arg: &str| -> Option<Vec<u8>> {
        let f = sh.file(proc, int_arg(ev, arg)? as i32)?;
        let p = f.borrow().path.clone();
        (!p.is_empty()).then_some(p)
    };
    match name {
        "open" | "openat" | "openat2" | "creat" => {
            let flags = match name {
                "creat" => libc::O_CREAT | libc::O_TRUNC,
                "openat2" => ev
                    .arg("how")
                    .and_then(ArgValue::as_data)
                    .and_then(|d| d.get(0..8))
                    .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as i32),
                _ => int_arg(ev, "flags").unwrap_or(0) as i32,
            };
            let Some(p) = first else { return Ok(()) };
            if !success {
                if enoent {
                    st.absent(&p);
                }
                return Ok(());
            }
            if flags & libc::O_CREAT != 0 {
                if flags & libc::O_EXCL != 0 || !st.paths.contains_key(&p) {
                    st.touch(&p);
                }
            } else {
                let kind = if flags & libc::O_DIRECTORY != 0 { Some(Kind::Dir) } else { None };
                st.exists(&p, kind);
            }
            if flags & libc::O_TRUNC != 0 {
                st.written.insert(p);
            }
        }
        "stat" | "newfstatat" | "statx" | "lstat" => {
            let Some(p) = first else { return Ok(()) };
            if success {
                let flags = int_arg(ev, "flags").unwrap_or(0) as i32;
                st.stat(&p, ev, name == "lstat" || flags & libc::AT_SYMLINK_NOFOLLOW != 0);
            } else if enoent {
                st.absent(&p);
            }
        }
        "fstat" if success => {
            if let Some(p) = fd_path(sh, "fd") {
                st.stat(&p, ev, false);
            }
        }
        "access" | "faccessat" | "faccessat2" | "statfs" | "getxattr" | "listxattr" | "chdir"
        | "utime" | "utimes" | "utimensat" | "futimesat" | "chmod" | "fchmodat" | "chown"
        | "fchownat" | "lchown" => {
            let Some(p) = first else { return Ok(()) };
            if success {
                let kind = if name == "chdir" { Some(Kind::Dir) } else { None };
                st.exists(&p, kind);
            } else if enoent {
                st.absent(&p);
            }
        }
        "execve" | "execveat" => {
            if let Some(p) = first {
                if success {
                    if let Some(n) = st.exists(&p, Some(Kind::File)) {
                        n.exec = true;
                    }
                } else if enoent {
                    st.absent(&p);
                }
            }
        }
        "readlink" | "readlinkat" => {
            if let Some(p) = first {
                if success {
                    let target = ev
                        .arg("buf")
                        .and_then(ArgValue::as_data)
                        .map(<[u8]>::to_vec)
                        .unwrap_or_default();
                    st.exists(&p, Some(Kind::Symlink(target)));
                } else if enoent {
                    st.absent(&p);
                }
            }
        }
        "unlink" | "unlinkat" | "rmdir" => {
            if let Some(p) = first {
                if success {
                    let dir = name == "rmdir"
                        || int_arg(ev, "flags").unwrap_or(0) as i32 & libc::AT_REMOVEDIR != 0;
                    st.exists(&p, Some(if dir { Kind::Dir } else { Kind::File }));
                    st.touch(&p);
                }
            }
        }
        "rename" | "renameat" | "renameat2" | "link" | "linkat" if success => {
            if let Some(old) = paths.first() {
                st.exists(old, None);
                if name.starts_with("rename") {
                    st.touch(old);
                }
            }
            if let Some(new) = paths.get(1) {
                st.touch(new);
            }
        }
        "mkdir" | "mkdirat" | "symlink" | "symlinkat" | "mknod" | "mknodat" | "truncate" => {
            if let Some(p) = first {
                if success {
                    if name == "truncate" {
                        st.exists(&p, Some(Kind::File));
                    }
                    st.touch(&p);
                } else if enoent && name == "truncate" {
                    st.absent(&p);
                }
            }
        }
        "read" | "pread64" | "readv" | "preadv" | "preadv2" if success => {
            let Some(f) = int_arg(ev, "fd").and_then(|fd| sh.file(proc, fd as i32)) else {
                return Ok(());
            };
            let (p, off_after) = {
                let b = f.borrow();
                (b.path.clone(), b.offset)
            };
            if p.is_empty() {
                return Ok(());
            }
            let ret = ev.ret.unwrap_or(0).max(0);
            let off = match name {
                "read" | "readv" => off_after - ret,
                _ => int_arg(ev, "offset").unwrap_or(0),
            };
            let (data, count): (Vec<u8>, i64) = match ev.arg("buf").or_else(|| ev.arg("iov")) {
                Some(ArgValue::Data(d)) => (d.clone(), int_arg(ev, "count").unwrap_or(0)),
                Some(ArgValue::Iov(v)) => (
                    v.iter().filter_map(|x| x.data.as_deref()).flatten().copied().collect(),
                    v.iter().map(|x| x.requested as i64).sum(),
                ),
                _ => (Vec::new(), int_arg(ev, "count").unwrap_or(0)),
            };
            if off >= 0 && data.len() as i64 == ret {
                st.content(&p, off as u64, &data, count.max(0) as u64)?;
            } else if let Some(n) = st.exists(&p, Some(Kind::File)) {
                n.read_end = n.read_end.max((off.max(0) + ret) as u64);
            }
        }
        "getdents" | "getdents64" if success => {
            let Some(p) = fd_path(sh, "fd") else { return Ok(()) };
            if st.written.contains(&p) {
                return Ok(());
            }
            if st.exists(&p, Some(Kind::Dir)).is_none() {
                return Ok(());
            }
            let Some(d) = ev.arg("dirp").and_then(ArgValue::as_data) else { return Ok(()) };
            let ents = if name == "getdents" { parse_dirents(d) } else { parse_dirents64(d) };
            for e in ents {
                if e.name == b"." || e.name == b".." {
                    continue;
                }
                let child = join(&p, &e.name);
                if st.paths.contains_key(&child) {
                    continue;
                }
                let kind = match e.d_type {
                    4 => Kind::Dir,
                    10 => Kind::Symlink(Vec::new()),
                    _ => Kind::File,
                };
                st.exists(&child, Some(kind));
            }
        }
        "write" | "pwrite64" | "writev" | "pwritev" | "pwritev2" | "ftruncate" | "fallocate"
        | "mmappwrite" => {
            if let Some(p) = fd_path(sh, "fd") {
                st.written.insert(p);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Create what was learned (files' content is already in place).
fn create(st: &mut Infer<'_>) -> Result<()> {
    let root = st.root;
    let mut all: Vec<(Vec<u8>, Node)> = st
        .paths
        .drain()
        .filter_map(|(p, s)| match s {
            Status::Initial(n) => Some((p, n)),
            _ => None,
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    for (p, n) in &all {
        if ignored(p, st.skip) || p.as_slice() == b"/" {
            continue;
        }
        mkdirs(root, parent_of(p))?;
        let (dir, name) = root.parent(p).map_err(|e| init_err(p, "resolve", e))?;
        match n.kind.clone().unwrap_or(Kind::File) {
            Kind::Dir => {
                match sys::mkdirat(dir.as_raw_fd(), &name, 0o755) {
                    Ok(_) | Err(libc::EEXIST) => {}
                    Err(e) => return Err(init_err(p, "mkdir", e)),
                }
                st.stats.dirs += 1;
            }
            Kind::Symlink(t) => {
                let target = if t.is_empty() { b"(target not recorded)".to_vec() } else { t };
                let t = crate::sandbox::cstr(&target).map_err(|e| init_err(p, "symlink", e))?;
                match sys::symlinkat(&t, dir.as_raw_fd(), &name) {
                    Ok(_) | Err(libc::EEXIST) => {}
                    Err(e) => return Err(init_err(p, "symlink", e)),
                }
                st.stats.symlinks += 1;
            }
            Kind::File => {
                let fd = root
                    .open(p, libc::O_WRONLY | libc::O_CREAT, 0o600)
                    .map_err(|e| init_err(p, "create", e))?;
                let size = n.size.unwrap_or(n.read_end).max(n.read_end);
                let cur = sys::fstat_at(fd.as_raw_fd()).map_err(|e| init_err(p, "stat", e))?.st_size
                    as u64;
                if size > cur {
                    sys::raw(libc::SYS_ftruncate, &[fd.as_raw_fd().into(), size as i64])
                        .map_err(|e| init_err(p, "size", e))?;
                }
                let known: u64 = n.known.values().sum();
                st.stats.bytes_unknown += size.saturating_sub(known);
                st.stats.files += 1;
            }
        }
    }
    for (p, n) in &all {
        if !ignored(p, st.skip) {
            if let Ok(fd) = root.locate(p, false) {
                if let Ok(s) = sys::fstat_at(fd.as_raw_fd()) {
                    match n.kind {
                        Some(Kind::Dir) => st.stats.partial_dirs.push((s.st_dev, s.st_ino)),
                        Some(Kind::File) | None => {
                            st.stats.files_created.push((s.st_dev, s.st_ino))
                        }
                        Some(Kind::Symlink(_)) => {}
                    }
                }
            }
        }
    }
    // Modes and owners last, deepest first, so directories stay writable while filling.
    for (p, n) in all.iter().rev() {
        if ignored(p, st.skip) || p.as_slice() == b"/" || matches!(n.kind, Some(Kind::Symlink(_))) {
            continue;
        }
        let Ok(fd) = root.locate(p, false) else { continue };
        let default = match n.kind {
            Some(Kind::Dir) => 0o755,
            _ if n.exec => 0o755,
            _ => 0o644,
        };
        let _ = sys::fchmodat2(fd.as_raw_fd(), n.mode.unwrap_or(default), 0);
        if is_root {
            if let Some((u, g)) = n.owner {
                let _ = sys::fchownat(fd.as_raw_fd(), u, g, 0);
            }
        }
    }
    Ok(())
}
