//! `--init=infer`: recreate beneath the root the files the trace shows to have existed before
//! it started — opened without creating them, stat'ed, read, listed, executed, removed or
//! renamed away — with their types, sizes, modes and owners where a `stat` showed them, and
//! their content where reads (and pages read through mappings: `mmappread`) captured it
//! (zeros elsewhere).
//!
//! One pass over the trace runs the [`Shadow`] model and keeps, per path, what the first
//! observation said, as long as nothing in the trace had changed that path before. Data read
//! from such a file before anything wrote to it is written into the root as it is met, so
//! memory holds metadata only. Paths under `/proc`, `/sys` and `/dev` (simulated by the
//! replay) and under `skip` (restored from a snapshot) are left alone.
//!
//! Every call is evidence: `access` (`X_OK`: executable), `readlink` (`EINVAL`: exists, no
//! symlink), xattr reads, the `#!` interpreter of an executed script, and `ENOENT` beneath a
//! path (whatever existed above it was a directory). Paths are recorded as the trace named
//! them; `create` then moves what was seen through symlinks to where it really was (beneath a
//! link's target; a link's followed attributes to the end of its chain), so link chains an
//! executed program resolves come back whole. Symlinks the trace itself makes are followed
//! while observing and never created beforehand.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use ra_syscalls::Handler as H;
use ra_syscalls::{ArgKind, IoClass, Struct, SyscallDef, XattrOp};
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
    /// Regular files the trace showed, created or found already there (device nodes and
    /// other special files the trace showed are created as regular files and counted here).
    pub files: u64,
    /// Directories the trace showed, created or found already there (`mkdir` giving
    /// `EEXIST` counts); the replay root itself not included.
    pub dirs: u64,
    /// Symbolic links the trace showed, created or found already there; a link whose target
    /// the trace never showed points at `(target not recorded)`.
    pub symlinks: u64,
    /// Bytes of file content taken from recorded reads.
    pub bytes_known: u64,
    /// Bytes of file size with no recorded content (holes, or `--fill` data: [`Unknown`]).
    pub bytes_unknown: u64,
    /// Of those, bytes written with `--fill` data ([`Unknown::Fill`]).
    pub bytes_filled: u64,
    /// (st_dev, st_ino) of the directories created: they hold only the entries the trace
    /// showed, so their link counts and sizes differ from the originals'.
    pub partial_dirs: Vec<(u64, u64)>,
    /// (st_dev, st_ino) of the files created: their link counts are unknown (a hard link
    /// elsewhere on the recording machine is not in the trace).
    pub files_created: Vec<(u64, u64)>,
    /// (st_dev, st_ino) of the files created with bytes no recorded read showed (a trace of
    /// `--data read=hash|none`: its reads hold digests or lengths, not the bytes): reads of
    /// them cannot be verified.
    pub files_unknown: Vec<(u64, u64)>,
    /// What was created in a safer form than the trace showed (setuid/setgid bits dropped,
    /// unless `special`): (path, what).
    pub withheld: Vec<(Vec<u8>, String)>,
}

/// What `infer` puts in the bytes of a file that the trace never showed (`--init-unknown`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unknown {
    /// Holes: no disk space and no time. Reading one returns zeros without reaching the disk
    /// (the kernel allocates and zeroes page-cache pages instead), unlike the recorded
    /// program's reads of real data.
    #[default]
    Sparse,
    /// Written with this data (`--fill`): the files take their space on disk, and reads of
    /// them find data in the page cache or on the disk, as the recorded program's did.
    Fill(crate::Fill),
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
    /// Extended attributes a `getxattr` returned (before anything set or removed one).
    xattrs: BTreeMap<Vec<u8>, Vec<u8>>,
    /// `readlink` said `EINVAL`: not a symlink.
    not_link: bool,
    /// A following `stat` showed a directory (the target, when this is a symlink).
    follow_dir: bool,
    /// The first bytes of the file, when a read from offset 0 showed them (`#!` lines).
    head: Vec<u8>,
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
    // /proc, /sys and /dev themselves are recreated as empty directories (a listing of `/`
    // shows them); nothing beneath them is (those calls are simulated, no device is made).
    [&b"/proc"[..], b"/sys", b"/dev"].iter().any(|d| p != *d && under(p, d))
        || skip.iter().any(|d| under(p, d))
}

struct Infer<'a> {
    root: &'a Root,
    skip: &'a [Vec<u8>],
    paths: HashMap<Vec<u8>, Status>,
    /// Initial files something in the trace has written (their later reads are not initial).
    written: std::collections::HashSet<Vec<u8>>,
    /// Paths that, if they existed, were directories (or links to one): an ancestor of a path
    /// a call found missing (`ENOENT`, not `ENOTDIR`).
    dir_if_exists: std::collections::HashSet<Vec<u8>>,
    /// Symlinks the trace made (path -> target), where the trace made them.
    trace_links: HashMap<Vec<u8>, Vec<u8>>,
    /// What the model calls the inherited pipes, sockets and terminals.
    not_files: std::collections::HashSet<Vec<u8>>,
    /// Restore setuid/setgid bits as recorded.
    special: bool,
    unknown: Unknown,
    /// Set by Ctrl-C: the pass over the calls and the filling of holes end early (EINTR).
    stop: &'a AtomicBool,
    /// Each process's file mappings: start address -> (length, the file's path), so that a
    /// page record names the file its mapping was made on.
    maps: HashMap<ProcId, BTreeMap<u64, (u64, Vec<u8>)>>,
    stats: InferStats,
}

impl Infer<'_> {
    /// The file mapped at `addr` in process `p`, if the trace showed the mapping made.
    fn mapped_file(&self, p: ProcId, addr: u64) -> Option<&[u8]> {
        let (&start, (len, path)) = self.maps.get(&p)?.range(..=addr).next_back()?;
        (addr < start.saturating_add(*len)).then_some(path.as_slice())
    }
    /// Forget the mappings of `p` that start in `[addr, addr + len)` (munmap, or mmap with
    /// MAP_FIXED over them).
    fn unmap(&mut self, p: ProcId, addr: u64, len: u64) {
        if let Some(m) = self.maps.get_mut(&p) {
            let gone: Vec<u64> = m.range(addr..addr.saturating_add(len)).map(|(&a, _)| a).collect();
            for a in gone {
                m.remove(&a);
            }
        }
    }
    /// A page a program read through a mapping of `p`'s file at offset `off` (a whole page:
    /// past the file's end it shows zeros). The page existed, so the file reaches into it;
    /// its bytes within the file are the file's content, like a read's. Where the file's size
    /// is unknown, a run of zeros ending the page may lie past the end and is left out.
    fn mapped_content(&mut self, p: &[u8], off: u64, data: &[u8]) -> Result<()> {
        let Some(q) = self.beneath_trace_links(p) else { return Ok(()) };
        if self.written.contains(&q) {
            return Ok(());
        }
        let Some(n) = self.exists(&q, Some(Kind::File)) else { return Ok(()) };
        n.read_end = n.read_end.max(off + 1);
        let keep = match n.size {
            Some(size) => usize::try_from(size.saturating_sub(off)).unwrap_or(usize::MAX),
            None => data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1),
        };
        let data = &data[..keep.min(data.len())];
        self.content(&q, off, data, data.len() as u64)
    }
    /// Note that `p` existed (as `kind` when known), unless the trace changed it first.
    fn exists(&mut self, p: &[u8], kind: Option<Kind>) -> Option<&mut Node> {
        let p = self.beneath_trace_links(p)?;
        let p = p.as_slice();
        if ignored(p, self.skip) || self.written.contains(p) || self.not_files.contains(p) {
            return None;
        }
        // /proc, /sys, /dev: directories, whatever a call said of them.
        let kind =
            if [&b"/proc"[..], b"/sys", b"/dev"].contains(&p) { Some(Kind::Dir) } else { kind };
        // Every ancestor is a directory that existed too (unless the trace made it), or a
        // symlink to one (placed at its target by `create`).
        let mut anc = p.to_vec();
        while let Some(i) = anc.iter().rposition(|&c| c == b'/') {
            anc.truncate(i);
            let a = if anc.is_empty() { b"/".to_vec() } else { anc.clone() };
            match self.paths.get_mut(&a) {
                Some(Status::Initial(n)) => {
                    if !matches!(n.kind, Some(Kind::Symlink(_))) {
                        n.kind = Some(Kind::Dir);
                    }
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
                // A symlink is what lstat, readlink or a listing saw; a following call sees
                // its target, which says nothing against it.
                let replace = match (&n.kind, &kind) {
                    (_, None) => false,
                    (None, _) => true,
                    (Some(Kind::Symlink(t)), Some(Kind::Symlink(u))) => {
                        t.is_empty() && !u.is_empty()
                    }
                    (_, Some(Kind::Symlink(_))) => true,
                    (Some(Kind::File), Some(Kind::Dir)) => true,
                    _ => false,
                };
                if replace {
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
    /// `p` as it was before the trace began: a path beneath a symlink the trace made is
    /// beneath that symlink's target (the link itself did not exist); a path beneath anything
    /// else the trace made, removed or renamed names nothing initial (None).
    fn beneath_trace_links(&self, p: &[u8]) -> Option<Vec<u8>> {
        let mut p = p.to_vec();
        'again: for _ in 0..40 {
            let mut end = 0;
            while let Some(i) = p[end + 1..].iter().position(|&c| c == b'/') {
                end += 1 + i;
                let a = &p[..end];
                if let Some(t) = self.trace_links.get(a) {
                    let mut q = link_target(a, t);
                    q.extend_from_slice(&p[end..]);
                    p = crate::sandbox::normalize(&q);
                    continue 'again;
                }
                if self.written.contains(a) {
                    return None;
                }
            }
            return Some(p);
        }
        None
    }
    fn touch(&mut self, p: &[u8]) {
        // The call that made, removed or renamed `p` found its directory: unless the trace
        // made that directory or saw it missing first, it existed from the start (a file
        // created in a directory nothing else names: `echo > /srv/out/log`).
        let parent = parent_of(p).to_vec();
        if parent != p && !self.paths.contains_key(&parent) {
            self.exists(&parent, Some(Kind::Dir));
        }
        self.paths.entry(p.to_vec()).or_insert(Status::Touched);
        self.written.insert(p.to_vec());
    }
    fn absent(&mut self, p: &[u8]) {
        self.paths.entry(p.to_vec()).or_insert(Status::Absent);
    }
    /// A call found `p` missing (`ENOENT`): every ancestor of it that existed was a directory
    /// (a file there would have given `ENOTDIR`).
    fn missing_beneath(&mut self, p: &[u8]) {
        let mut a = p.to_vec();
        while let Some(i) = a.iter().rposition(|&c| c == b'/') {
            a.truncate(i);
            if a.is_empty() {
                break;
            }
            if matches!(self.paths.get(&a), None | Some(Status::Initial(_))) {
                self.dir_if_exists.insert(a.clone());
            }
        }
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
            // A symlink's own mode and owner are not recreated; what a following stat showed
            // describes the link's target (`create` gives it to the target).
            if !nofollow && mode & libc::S_IFMT == libc::S_IFDIR {
                n.follow_dir = true;
            }
            if n.mode.is_none() && !written && !is_link {
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
        let Some(p) = self.beneath_trace_links(p) else { return Ok(()) };
        let p = p.as_slice();
        if self.written.contains(p) || data.is_empty() && count == 0 {
            return Ok(());
        }
        let root = self.root;
        let Some(n) = self.exists(p, Some(Kind::File)) else { return Ok(()) };
        // Read through a symlink (one a listing or lstat showed): the content is the end of
        // its chain's; it is written at the link's name for now and moves there with the
        // node (`through_symlinks`).
        if !matches!(n.kind, Some(Kind::File) | Some(Kind::Symlink(_))) {
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
        if off == 0 && n.head.is_empty() {
            n.head = data[..data.len().min(256)].to_vec();
        }
        mkdirs(root, parent_of(p))?;
        let fd = root
            .open(p, libc::O_WRONLY | libc::O_CREAT, 0o600)
            .map_err(|e| init_err(p, "create", e))?;
        sys::pwrite(fd.as_raw_fd(), data, off as i64).map_err(|e| init_err(p, "write", e))?;
        self.stats.bytes_known += data.len() as u64;
        Ok(())
    }
}

/// Where the targets of symlinks whose targets the trace did not record are made, beneath
/// the root (`/usr/lib/x.py -> /.reanimator-link-targets/usr/lib/x.py`).
pub const LINK_TARGETS: &[u8] = b"/.reanimator-link-targets";

/// The normalized path a symlink at `link` with target `t` points at.
fn link_target(link: &[u8], t: &[u8]) -> Vec<u8> {
    crate::sandbox::normalize(&join(parent_of(link), t))
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

/// Write `kind` data into every hole of the first `size` bytes of `fd` (found with
/// SEEK_HOLE/SEEK_DATA, so content already there, recorded or not, stays); the bytes written.
/// EINTR once `stop` is set (Ctrl-C: a file may be gigabytes long).
fn fill_holes(
    fd: std::os::fd::BorrowedFd<'_>,
    size: u64,
    kind: crate::Fill,
    stop: &AtomicBool,
) -> std::result::Result<u64, i32> {
    use rustix::fs::{seek, SeekFrom};
    const BLOCK: usize = 1 << 20;
    let block = crate::calls::fill(kind, size, BLOCK);
    let (enxio, einval) = (rustix::io::Errno::NXIO, rustix::io::Errno::INVAL);
    let mut written = 0;
    let mut at = 0;
    while at < size {
        let hole = match seek(fd, SeekFrom::Hole(at)) {
            Ok(h) => h.min(size),
            // No holes to look for on this file system: nothing to fill.
            Err(e) if e == einval || e == enxio => break,
            Err(e) => return Err(e.raw_os_error()),
        };
        if hole >= size {
            break;
        }
        let end = match seek(fd, SeekFrom::Data(hole)) {
            Ok(d) => d.min(size),
            // No data after the hole: it runs to the end of the file.
            Err(e) if e == enxio => size,
            Err(e) => return Err(e.raw_os_error()),
        };
        let mut o = hole;
        while o < end {
            if stop.load(Ordering::Relaxed) {
                return Err(libc::EINTR);
            }
            let n = ((end - o) as usize).min(BLOCK);
            let w = sys::pwrite(fd.as_raw_fd(), &block[..n], o as i64)?;
            if w == 0 {
                return Err(libc::EIO);
            }
            o += w as u64;
            written += w as u64;
        }
        at = end;
    }
    Ok(written)
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

/// How [`infer`] creates the initial state.
pub struct InferOptions<'a> {
    /// Paths left alone (restored from snapshots already).
    pub skip: &'a [Vec<u8>],
    /// Restore setuid/setgid bits as a `stat` showed them; without it they are left out of
    /// the files' modes and listed in [`InferStats::withheld`].
    pub special: bool,
    /// What goes in the bytes of files that the trace never showed.
    pub unknown: Unknown,
    /// Set by Ctrl-C: the pass over the calls and the filling of holes end early (EINTR).
    pub stop: &'a AtomicBool,
}

/// Infer the initial state from `trace` and create it beneath `root`.
///
/// Device nodes are never created (a device the trace showed becomes a regular file).
pub fn infer(trace: &TraceReader, root: &Root, o: &InferOptions<'_>) -> Result<InferStats> {
    let events =
        trace.syscall_events(None).without_derived_columns().map(|e| e.map_err(Error::Trace));
    infer_from(events, initial_cwd(trace), synthetic_ids(trace), root, o)
}

/// [`infer`] from the calls of a trace or a compiled plan (the trace's starting cwd and its
/// number of synthetic records of inherited descriptors given).
pub fn infer_from(
    events: impl Iterator<Item = Result<Event>>,
    cwd: Vec<u8>,
    synthetic: u64,
    root: &Root,
    o: &InferOptions<'_>,
) -> Result<InferStats> {
    let stop = o.stop;
    let mut sh = Shadow::new(cwd.clone());
    let mut st = Infer {
        root,
        skip: o.skip,
        paths: HashMap::new(),
        written: Default::default(),
        dir_if_exists: Default::default(),
        trace_links: HashMap::new(),
        not_files: Default::default(),
        special: o.special,
        unknown: o.unknown,
        stop,
        maps: HashMap::new(),
        stats: InferStats::default(),
    };
    st.exists(&crate::sandbox::normalize(&cwd), Some(Kind::Dir));
    for ev in events {
        if stop.load(Ordering::Relaxed) {
            return Err(init_err(b"(the trace's calls)", "read", libc::EINTR));
        }
        let ev = ev?;
        // An io_uring path request as the call it stands for (`ra_trace::uring`).
        let ev = ra_trace::uring::as_call(&ev).unwrap_or(ev);
        let Some(def) = ev.def else { continue };
        let Some(tid) = ev.tid.or(ev.pid) else { continue };
        if ev.unique_id < synthetic
            && def.replay.handler() == Some(H::Open)
            && !crate::shadow::path_arg(&ev, "pathname").is_some_and(|p| p.starts_with(b"/"))
        {
            // An inherited pipe, socket or terminal ("pipe:[123]"): not a file. The model
            // names it by that text beneath the cwd: calls on its descriptor show no file.
            if let Some(p) = sh.proc_id_of(tid) {
                st.not_files.extend(sh.paths(p, &ev));
            }
            let pl = sh.step(&ev);
            st.not_files.extend(sh.paths(pl.proc, &ev));
            continue;
        }
        // Paths resolve against the model as it was before the call (chdir changes it).
        let before = sh.proc_id_of(tid).map(|p| sh.paths(p, &ev));
        let pl = sh.step(&ev);
        let paths = before.unwrap_or_else(|| sh.paths(pl.proc, &ev));
        observe(&mut st, &sh, &ev, def, pl.proc, paths)?;
        // A new process has its parent's mappings (a thread shares them: same process).
        if let Some((child, _)) = pl.child {
            if let Some(m) = st.maps.get(&pl.proc).cloned() {
                st.maps.insert(child, m);
            }
        }
    }
    interpreters(&mut st);
    create(&mut st)?;
    Ok(st.stats)
}

/// A failed xattr read that found its file: no such attribute (`ENODATA`), none supported
/// (`ENOTSUP`), or a buffer too small for it (`ERANGE`, unless the name itself is one the
/// kernel refuses with `ERANGE` before it looks the file up).
fn xattr_found(ev: &Event) -> bool {
    match ev.errno {
        Some(libc::ENODATA | libc::ENOTSUP) => true,
        Some(libc::ERANGE) => {
            crate::shadow::path_arg(ev, "name").is_none_or(crate::calls::xattr_name_valid)
        }
        _ => false,
    }
}

/// What one call shows about the initial state. `paths` were resolved before the model
/// stepped over the call; descriptors are looked up after it (reads leave the offset after the
/// data they read).
fn observe(
    st: &mut Infer<'_>,
    sh: &Shadow,
    ev: &Event,
    def: &SyscallDef,
    proc: ProcId,
    paths: Vec<Vec<u8>>,
) -> Result<()> {
    let success = ok(ev) || (ev.errno.unwrap_or(0) == 0 && ev.ret.is_none());
    let first = paths.first().cloned();
    let enoent = ev.errno == Some(libc::ENOENT);
    if enoent && paths.len() == 1 {
        st.missing_beneath(&paths[0]);
    }
    let fd_path = |sh: &Shadow, arg: &str| -> Option<Vec<u8>> {
        let f = sh.file(proc, int_arg(ev, arg)? as i32)?;
        let p = f.borrow().path.clone();
        (!p.is_empty()).then_some(p)
    };
    let Some(handler) = def.replay.handler() else { return Ok(()) };
    let has = |arg: &str| def.arg(arg).is_some();
    let xattr_op = def.xattr_op();
    match handler {
        H::Open => {
            let flags = ev.open_flags().unwrap_or(0) as i32;
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
        H::Stat if has("pathname") => {
            let Some(p) = first else { return Ok(()) };
            if success {
                let flags = int_arg(ev, "flags").unwrap_or(0) as i32;
                st.stat(&p, ev, def.nofollow || flags & libc::AT_SYMLINK_NOFOLLOW != 0);
            } else if enoent {
                st.absent(&p);
            }
        }
        H::Stat if success => {
            if let Some(p) = fd_path(sh, "fd") {
                st.stat(&p, ev, false);
            }
        }
        H::Xattr if has("fd") && matches!(xattr_op, Some(XattrOp::Get | XattrOp::List)) => {
            let found = xattr_found(ev);
            if let Some(p) = fd_path(sh, "fd").filter(|_| success || found) {
                st.exists(&p, None);
            }
        }
        H::Access => {
            let Some(p) = first else { return Ok(()) };
            if success {
                let mode = int_arg(ev, "mode").unwrap_or(0) as i32;
                if let Some(n) = st.exists(&p, None) {
                    // X_OK succeeded: some execute bit is set (a file made 0644 would fail).
                    n.exec |= mode & libc::X_OK != 0;
                }
            } else if enoent {
                st.absent(&p);
            } else if matches!(ev.errno, Some(libc::EACCES | libc::EROFS | libc::ETXTBSY)) {
                // Found, but not accessible that way.
                st.exists(&p, None);
            }
        }
        H::Xattr if matches!(xattr_op, Some(XattrOp::Get | XattrOp::List)) => {
            let Some(p) = first else { return Ok(()) };
            if success || xattr_found(ev) {
                let written = st.written.contains(&p);
                if let Some(n) = st.exists(&p, None) {
                    if success && xattr_op == Some(XattrOp::Get) && !written {
                        let xname = ev.arg("name").and_then(ArgValue::as_data);
                        let value = ev.arg("value").and_then(ArgValue::as_data);
                        if let (Some(xn), Some(v)) = (xname, value) {
                            let xn = xn.strip_suffix(&[0]).unwrap_or(xn).to_vec();
                            n.xattrs.entry(xn).or_insert_with(|| v.to_vec());
                        }
                    }
                }
            } else if enoent {
                st.absent(&p);
            }
        }
        // Calls that name an existing path and change nothing of what inference records.
        H::Statfs | H::Chdir | H::Utimes | H::Chmod | H::Chown => {
            let Some(p) = first else { return Ok(()) };
            if success {
                let kind = if handler == H::Chdir { Some(Kind::Dir) } else { None };
                st.exists(&p, kind);
            } else if enoent {
                st.absent(&p);
            }
        }
        H::Exec => {
            if success {
                // A new address space.
                st.maps.remove(&proc);
            }
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
        H::Readlink => {
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
                } else if ev.errno == Some(libc::EINVAL) {
                    // Exists, and is not a symlink.
                    if let Some(n) = st.exists(&p, None) {
                        n.not_link = true;
                    }
                }
            }
        }
        H::Unlink => {
            if let Some(p) = first {
                if success {
                    let flags = def.implied_flags.or_else(|| int_arg(ev, "flags")).unwrap_or(0);
                    let dir = flags as i32 & libc::AT_REMOVEDIR != 0;
                    st.exists(&p, Some(if dir { Kind::Dir } else { Kind::File }));
                    st.touch(&p);
                    st.trace_links.remove(&p);
                }
            }
        }
        H::Rename | H::Link if success => {
            if let Some(old) = paths.first() {
                st.exists(old, None);
                if handler == H::Rename {
                    st.touch(old);
                    st.trace_links.remove(old);
                }
            }
            if let Some(new) = paths.get(1) {
                st.touch(new);
            }
        }
        H::Mkdir | H::Symlink | H::Mknod | H::Truncate => {
            if let Some(p) = first {
                if success {
                    if handler == H::Truncate {
                        st.exists(&p, Some(Kind::File));
                    }
                    st.touch(&p);
                    if handler == H::Symlink {
                        if let Some(t) = ev.arg("target").and_then(ArgValue::as_data) {
                            let t = t.strip_suffix(&[0]).unwrap_or(t);
                            st.trace_links.insert(p, t.to_vec());
                        }
                    }
                } else if enoent && handler == H::Truncate {
                    st.absent(&p);
                }
            }
        }
        H::Read | H::ReadV if success => {
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
            // read and readv read at the file position (now past what they read), the others
            // at their offset.
            let off =
                if def.positional() { int_arg(ev, "offset").unwrap_or(0) } else { off_after - ret };
            let (data, count): (Vec<u8>, i64) = match ev.arg("buf").or_else(|| ev.arg("iov")) {
                Some(ArgValue::Data(d)) => (d.to_vec(), int_arg(ev, "count").unwrap_or(0)),
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
        H::Getdents if success => {
            let Some(p) = fd_path(sh, "fd") else { return Ok(()) };
            if st.written.contains(&p) {
                return Ok(());
            }
            if st.exists(&p, Some(Kind::Dir)).is_none() {
                return Ok(());
            }
            let Some(d) = ev.arg("dirp").and_then(ArgValue::as_data) else { return Ok(()) };
            let ents =
                if def.has_struct(Struct::Dirents) { parse_dirents(d) } else { parse_dirents64(d) };
            for e in ents {
                if e.name == b"." || e.name == b".." {
                    continue;
                }
                let child = join(&p, &e.name);
                let kind = match e.d_type {
                    4 => Kind::Dir,
                    10 => Kind::Symlink(Vec::new()),
                    _ => Kind::File,
                };
                // What other calls showed of a name stands, except that it was a symlink:
                // calls that resolved through it (`/bin/ls` with `/bin -> usr/bin`) made it
                // a directory, and only a listing (or lstat) tells.
                if st.paths.contains_key(&child) && !matches!(kind, Kind::Symlink(_)) {
                    continue;
                }
                st.exists(&child, Some(kind));
            }
        }
        // A kernel-side copy: the bytes it moved (when the recorder read them back) are the
        // source's content, like a read's; the destination's content changes.
        H::Copy if success => {
            let Some(c) = ev.copy() else { return Ok(()) };
            let at = |fd: i32| -> Option<(Vec<u8>, i64)> {
                let f = sh.file(proc, fd)?;
                let b = f.borrow();
                (!b.path.is_empty()).then(|| (b.path.clone(), b.offset))
            };
            if let (Some(d), Some((p, off_after))) = (c.data, at(c.fd_in)) {
                let off = c.off_in.unwrap_or(off_after - c.moved);
                // (A short copy need not be the end of the file: a pipe at the other end may
                // have been full.)
                if off >= 0 && d.len() as i64 == c.moved {
                    st.content(&p, off as u64, d, d.len() as u64)?;
                }
            }
            if let Some((p, _)) = at(c.fd_out) {
                st.written.insert(p);
            }
        }
        // Calls that change a file's content.
        H::Write | H::WriteV => {
            if let Some(p) = fd_path(sh, "fd") {
                st.written.insert(p);
            }
        }
        // ftruncate, fallocate.
        H::FdInts if def.io_class == IoClass::Write => {
            if let Some(p) = fd_path(sh, "fd") {
                st.written.insert(p);
            }
        }
        H::Mmap if success => {
            let (addr, len) = (ev.ret.unwrap_or(0) as u64, int_arg(ev, "length").unwrap_or(0));
            let flags = int_arg(ev, "flags").unwrap_or(0) as i32;
            if flags & libc::MAP_FIXED != 0 {
                st.unmap(proc, addr, len as u64);
            }
            if flags & libc::MAP_ANONYMOUS == 0 {
                if let Some(p) = fd_path(sh, "fd") {
                    st.maps.entry(proc).or_default().insert(addr, (len as u64, p));
                }
            }
        }
        H::Munmap if success => {
            let (addr, len) = (int_arg(ev, "addr"), int_arg(ev, "length"));
            st.unmap(proc, addr.unwrap_or(0) as u64, len.unwrap_or(0) as u64);
        }
        H::Mremap if success => {
            let old = int_arg(ev, "old_address").unwrap_or(0) as u64;
            let moved = st.maps.get_mut(&proc).and_then(|m| m.remove(&old));
            if let Some((_, p)) = moved {
                let len = int_arg(ev, "new_size").unwrap_or(0) as u64;
                st.maps.entry(proc).or_default().insert(ev.ret.unwrap_or(0) as u64, (len, p));
            }
        }
        // A page record: bytes read or written through a file mapping, of the file the mapping
        // was made on (by address; the descriptor may have been closed and reused since), else
        // of the path the recorder named, else of the descriptor's file.
        H::MmapPage if success => {
            let mapped = int_arg(ev, "address")
                .filter(|&a| a != 0)
                .and_then(|a| st.mapped_file(proc, a as u64))
                .map(<[u8]>::to_vec);
            let named = || {
                crate::shadow::path_arg(ev, "pathname")
                    .filter(|p| p.starts_with(b"/"))
                    .map(crate::sandbox::normalize)
            };
            let Some(p) = mapped.or_else(named).or_else(|| fd_path(sh, "fd")) else {
                return Ok(());
            };
            let read = ev.def.and_then(|d| d.arg("buf")).is_some_and(|(_, a)| a.kind.is_output());
            if !read {
                st.written.insert(p);
                return Ok(());
            }
            let off = int_arg(ev, "offset").unwrap_or(-1);
            if let (Some(ArgValue::Data(d)), true) = (ev.arg("buf"), off >= 0) {
                st.mapped_content(&p, off as u64, d)?;
            }
        }

        // What the other calls do is not evidence of the tree before the trace (or, for
        // the guarded arms above, is not evidence when the guard fails).
        H::Read
        | H::ReadV
        | H::Vmsplice
        | H::Tee
        | H::AsyncIo
        | H::UringOp
        | H::Seek
        | H::FdInts
        | H::Sync
        | H::Flock
        | H::Ioctl
        | H::Copy
        | H::MemfdCreate
        | H::Stat
        | H::Getdents
        | H::Link
        | H::Rename
        | H::Fchmod
        | H::Fchown
        | H::Xattr
        | H::Close
        | H::CloseRange
        | H::Dup
        | H::Fcntl
        | H::Pipe
        | H::Mmap
        | H::Munmap
        | H::MemAsRecorded
        | H::Msync
        | H::Mremap
        | H::MmapPage
        | H::Clone
        | H::Exit
        | H::Fchdir
        | H::Chroot
        | H::Umask
        | H::Bind => {}
    }
    Ok(())
}

/// A script the trace executed names its interpreter on its `#!` line (the kernel opens it,
/// so no recorded call does): it existed, and it was executable.
fn interpreters(st: &mut Infer<'_>) {
    let interps: Vec<Vec<u8>> = st
        .paths
        .values()
        .filter_map(|s| match s {
            Status::Initial(n) if n.exec => shebang(&n.head),
            _ => None,
        })
        .collect();
    for i in interps {
        if let Some(n) = st.exists(&i, None) {
            n.exec = true;
        }
    }
}

/// The interpreter a `#!` line names (absolute paths only).
fn shebang(head: &[u8]) -> Option<Vec<u8>> {
    let rest = head.strip_prefix(b"#!")?;
    let line = rest.split(|&c| c == b'\n').next()?;
    if !head[2..].contains(&b'\n') && head.len() >= 256 {
        return None;
    }
    let word = line.split(|&c| c == b' ' || c == b'\t').find(|w| !w.is_empty())?;
    let word = word.strip_suffix(b"\r").unwrap_or(word);
    word.starts_with(b"/").then(|| crate::sandbox::normalize(word))
}

/// The path `p` names once every symlink among `links` on the way is followed (the last
/// component too when `follow_last`); None for a loop.
fn resolve_links(
    p: &[u8],
    links: &HashMap<Vec<u8>, Vec<u8>>,
    follow_last: bool,
) -> Option<Vec<u8>> {
    let mut p = p.to_vec();
    'again: for _ in 0..40 {
        let mut end = 0;
        loop {
            let next = p[end + 1..].iter().position(|&c| c == b'/').map(|i| end + 1 + i);
            let last = next.is_none();
            let stop = next.unwrap_or(p.len());
            if last && !follow_last {
                return Some(p);
            }
            if let Some(t) = links.get(&p[..stop]) {
                let mut q = link_target(&p[..stop], t);
                q.extend_from_slice(&p[stop..]);
                p = crate::sandbox::normalize(&q);
                continue 'again;
            }
            match next {
                Some(n) => end = n,
                None => return Some(p),
            }
        }
    }
    None
}

/// Fill what `to` lacks from `from` (the same object seen under another name).
fn merge(to: &mut Node, from: Node) {
    if to.kind.is_none() {
        to.kind = from.kind;
    }
    if to.mode.is_none() {
        to.mode = from.mode;
        to.owner = from.owner;
    }
    if to.size.is_none() {
        to.size = from.size;
    }
    to.read_end = to.read_end.max(from.read_end);
    to.exec |= from.exec;
    to.not_link |= from.not_link;
    to.follow_dir |= from.follow_dir;
    for (k, v) in from.xattrs {
        to.xattrs.entry(k).or_insert(v);
    }
    if to.head.is_empty() {
        to.head = from.head;
    }
    for (o, l) in from.known {
        to.known.entry(o).or_insert(l);
    }
}

/// Place what was seen through symlinks where it really was: a path beneath an initial
/// symlink (`/lib/x` with `/lib -> usr/lib`) is beneath the link's target, and what a
/// following call showed of a symlink itself (the type, mode and size `stat` showed, that it
/// was executed, content read through it) belongs to the end of its chain (`/usr/bin/cc ->
/// /etc/alternatives/cc -> /usr/bin/gcc -> gcc-12 -> x86_64-linux-gnu-gcc-12`), which is
/// created if the trace showed nothing else of it. Content already written beneath the root
/// at the link's name moves with it.
fn through_symlinks(
    root: &Root,
    all: Vec<(Vec<u8>, Node)>,
    not_initial: &std::collections::HashSet<Vec<u8>>,
    skip: &[Vec<u8>],
) -> Result<Vec<(Vec<u8>, Node)>> {
    // A symlink seen only in a listing has no recorded target, yet calls through it found a
    // file or a directory: it points at one made for it beneath LINK_TARGETS.
    let mut all = all;
    let dirs_with_children: std::collections::HashSet<Vec<u8>> =
        all.iter().map(|(p, _)| parent_of(p).to_vec()).collect();
    for (p, n) in all.iter_mut() {
        if matches!(&n.kind, Some(Kind::Symlink(t)) if t.is_empty()) {
            let used = n.mode.is_some()
                || n.size.is_some()
                || n.exec
                || n.follow_dir
                || !n.known.is_empty()
                || dirs_with_children.contains(p.as_slice());
            if used {
                let mut t = LINK_TARGETS.to_vec();
                t.extend_from_slice(p);
                n.kind = Some(Kind::Symlink(t));
            }
        }
    }
    let links: HashMap<Vec<u8>, Vec<u8>> = all
        .iter()
        .filter_map(|(p, n)| match &n.kind {
            Some(Kind::Symlink(t)) if !t.is_empty() => Some((p.clone(), t.clone())),
            _ => None,
        })
        .collect();
    if links.is_empty() {
        return Ok(all);
    }
    let mut out: BTreeMap<Vec<u8>, Node> = BTreeMap::new();
    let mut moved: Vec<(Vec<u8>, Vec<u8>, Node)> = Vec::new();
    for (p, n) in all {
        let real = resolve_links(&p, &links, false).unwrap_or_else(|| p.clone());
        if real != p {
            if ignored(&real, skip) || not_initial.contains(&real) {
                continue;
            }
            moved.push((p, real, n));
            continue;
        }
        out.insert(p, n);
    }
    for (p, real, n) in moved {
        relocate(root, &p, &real, !n.known.is_empty())?;
        match out.get_mut(&real) {
            Some(to) => merge(to, n),
            None => {
                out.insert(real, n);
            }
        }
    }
    // What following calls showed of each symlink goes to the end of its chain.
    let link_paths: Vec<Vec<u8>> = links.keys().cloned().collect();
    for l in link_paths {
        let Some(n) = out.get_mut(&l) else { continue };
        let seen =
            n.mode.is_some() || n.size.is_some() || n.exec || n.follow_dir || !n.known.is_empty();
        if !seen {
            continue;
        }
        let Some(end) = resolve_links(&l, &links, true) else { continue };
        if end == l || ignored(&end, skip) || not_initial.contains(&end) {
            continue;
        }
        let info = Node {
            kind: Some(if n.follow_dir { Kind::Dir } else { Kind::File }),
            follow_dir: n.follow_dir,
            mode: n.mode.take(),
            owner: n.owner.take(),
            size: n.size.take(),
            read_end: std::mem::take(&mut n.read_end),
            known: std::mem::take(&mut n.known),
            exec: std::mem::take(&mut n.exec),
            xattrs: BTreeMap::new(),
            not_link: true,
            head: std::mem::take(&mut n.head),
        };
        relocate(root, &l, &end, !info.known.is_empty())?;
        match out.get_mut(&end) {
            Some(to) if !matches!(to.kind, Some(Kind::Symlink(_))) => merge(to, info),
            Some(_) => {}
            None => {
                out.insert(end, info);
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// Content written beneath the root at `from` (a name that turned out to be, or to lie
/// beneath, a symlink) moves to `to`; whatever `from` left behind (the file, directories made
/// for it) is removed so the symlink can take its place.
fn relocate(root: &Root, from: &[u8], to: &[u8], has_content: bool) -> Result<()> {
    if !has_content {
        return Ok(());
    }
    let Ok((fdir, fname)) = root.parent(from) else { return Ok(()) };
    mkdirs(root, parent_of(to))?;
    let (tdir, tname) = root.parent(to).map_err(|e| init_err(to, "resolve", e))?;
    // RENAME_NOREPLACE: content already at `to` wins.
    match sys::renameat2(fdir.as_raw_fd(), &fname, tdir.as_raw_fd(), &tname, 1) {
        Ok(_) | Err(libc::ENOENT) => {}
        Err(libc::EEXIST) => {
            let _ = sys::unlinkat(fdir.as_raw_fd(), &fname, 0);
        }
        Err(e) => return Err(init_err(from, "move", e)),
    }
    Ok(())
}

/// Remove `p` beneath the root if it is a directory holding only (empty) directories; true
/// when it is gone.
fn remove_empty_dirs(root: &Root, p: &[u8]) -> bool {
    fn rm(dir: &std::path::Path) -> bool {
        let Ok(m) = std::fs::symlink_metadata(dir) else { return false };
        if !m.file_type().is_dir() {
            return false;
        }
        let Ok(rd) = std::fs::read_dir(dir) else { return false };
        for e in rd.flatten() {
            if !rm(&e.path()) {
                return false;
            }
        }
        std::fs::remove_dir(dir).is_ok()
    }
    use std::os::unix::ffi::OsStrExt;
    let rel = std::ffi::OsStr::from_bytes(p.strip_prefix(b"/").unwrap_or(p));
    // Every component below the root is a real directory made by `mkdirs` (nothing else has
    // run in the root yet); symlink_metadata refuses to descend into anything else.
    let mut real = root.path();
    for c in std::path::Path::new(rel).components() {
        real.push(c);
        if !std::fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_dir()) {
            return false;
        }
    }
    rm(&real)
}

/// Create what was learned (files' content is already in place).
fn create(st: &mut Infer<'_>) -> Result<()> {
    let root = st.root;
    let initial: Vec<Vec<u8>> = st
        .paths
        .iter()
        .filter(|(_, s)| matches!(s, Status::Initial(_)))
        .map(|(p, _)| p.clone())
        .collect();
    let mut all: Vec<(Vec<u8>, Node)> = initial
        .into_iter()
        .filter_map(|p| match st.paths.remove(&p) {
            Some(Status::Initial(n)) => Some((p, n)),
            _ => None,
        })
        .collect();
    let not_initial: std::collections::HashSet<Vec<u8>> = st.paths.keys().cloned().collect();
    st.paths.clear();
    for (p, n) in &mut all {
        if n.kind.is_none() && st.dir_if_exists.contains(p.as_slice()) {
            n.kind = Some(Kind::Dir);
        }
    }
    let all = through_symlinks(root, all, &not_initial, st.skip)?;
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
                let mut r = sys::symlinkat(&t, dir.as_raw_fd(), &name);
                if r == Err(libc::EEXIST) && remove_empty_dirs(root, p) {
                    // Directories made for content found through the link (now moved to
                    // its target) stood in its place.
                    r = sys::symlinkat(&t, dir.as_raw_fd(), &name);
                }
                match r {
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
                if size > known {
                    if let Ok(s) = sys::fstat_at(fd.as_raw_fd()) {
                        st.stats.files_unknown.push((s.st_dev, s.st_ino));
                    }
                }
                if let Unknown::Fill(kind) = st.unknown {
                    st.stats.bytes_filled += fill_holes(fd.as_fd(), size, kind, st.stop)
                        .map_err(|e| init_err(p, "fill", e))?;
                }
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
        let mut mode = n.mode.unwrap_or(default);
        if n.exec && mode & 0o111 == 0 && n.mode.is_some() {
            // Executed or found executable, though the stat said otherwise (it changed).
            mode |= 0o100;
        }
        if !st.special && n.kind != Some(Kind::Dir) && mode & 0o6000 != 0 {
            let what =
                format!("setuid/setgid bits (mode {:04o} created as {:04o})", mode, mode & !0o6000);
            st.stats.withheld.push((p.clone(), what));
            mode &= !0o6000;
        }
        if is_root {
            if let Some((u, g)) = n.owner {
                let _ = sys::fchownat(fd.as_raw_fd(), u, g, 0);
            }
        }
        if !n.xattrs.is_empty() {
            let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
            let Ok(proc) = crate::sandbox::cstr(proc.as_bytes()) else { continue };
            for (xn, v) in &n.xattrs {
                if !st.special && xn.starts_with(b"security.") {
                    let what = format!("xattr {} (not set)", String::from_utf8_lossy(xn));
                    st.stats.withheld.push((p.clone(), what));
                    continue;
                }
                if let Ok(c) = crate::sandbox::cstr(xn) {
                    let _ = sys::setxattr_path(&proc, &c, v, 0);
                }
            }
        }
        // After chown, which clears setuid/setgid bits.
        let _ = sys::fchmodat2(fd.as_raw_fd(), mode, 0);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ra_trace::{TraceWriter, WriterConfig};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::PathBuf;

    /// A scripted one-thread trace, started in `/w`.
    struct Script {
        t: i64,
        events: Vec<Event>,
        unknown: Unknown,
    }

    impl Script {
        fn new() -> Script {
            Script { t: 1_763_800_000_000_000_000, events: Vec::new(), unknown: Unknown::Sparse }
        }
        fn call(&mut self, name: &str, ret: i64, errno: i32, args: &[(&str, ArgValue)]) {
            let mut e = crate::testutil::event(name, 900, ret, errno, args);
            self.t += 10_000;
            e.time_called = Some(self.t);
            e.time_returned = Some(self.t + 2_000);
            self.events.push(e);
        }
        /// Write the trace, infer into a fresh root; the root's real path and the stats.
        fn infer(&self, tag: &str, special: bool) -> (PathBuf, InferStats) {
            let d = std::env::temp_dir().join(format!("ra-init-unit-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(d.join("root")).unwrap();
            let trace = d.join("t.ds");
            let info: Vec<(&str, &[u8])> =
                vec![("cwd", b"/w"), ("arch", b"x86_64"), ("synthetic_ids", b"0")];
            let mut w = TraceWriter::create(&trace, &info, WriterConfig::default()).unwrap();
            for e in &self.events {
                w.append(e).unwrap();
            }
            w.finish().unwrap();
            let r = TraceReader::open(&trace).unwrap();
            let root = Root::new(&d.join("root")).unwrap();
            let stop = AtomicBool::new(false);
            let o = InferOptions { skip: &[], special, unknown: self.unknown, stop: &stop };
            let st = infer(&r, &root, &o).unwrap();
            (d.join("root"), st)
        }
    }

    fn p(s: &str) -> ArgValue {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        ArgValue::data(v)
    }

    fn data(s: &[u8]) -> ArgValue {
        ArgValue::data(s.to_vec())
    }

    fn stat_buf(mode: u32, size: i64) -> ArgValue {
        let mut b = vec![0u8; ra_trace::structs::STAT_SIZE];
        b[24..28].copy_from_slice(&mode.to_le_bytes());
        b[48..56].copy_from_slice(&size.to_le_bytes());
        ArgValue::data(b)
    }

    fn lmeta(root: &std::path::Path, p: &str) -> std::fs::Metadata {
        std::fs::symlink_metadata(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    /// shared/testdata/repro/inferdir.c: access("d") = 0 shows d exists; open("d/missing") =
    /// ENOENT shows it is a directory (a file would give ENOTDIR).
    #[test]
    fn enoent_beneath_an_existing_path_makes_it_a_directory() {
        let mut s = Script::new();
        s.call("access", 0, 0, &[("pathname", p("d")), ("mode", ArgValue::Int(0))]);
        s.call(
            "openat",
            -1,
            libc::ENOENT,
            &[
                ("dirfd", ArgValue::Int(-100)),
                ("pathname", p("d/missing")),
                ("flags", ArgValue::Int(0)),
            ],
        );
        // Missing beneath something that never showed up: no guess at all.
        s.call(
            "access",
            -1,
            libc::ENOENT,
            &[("pathname", p("/nope/x")), ("mode", ArgValue::Int(0))],
        );
        let (root, _) = s.infer("enoent", false);
        assert!(lmeta(&root, "w/d").is_dir());
        assert!(!root.join("w/d/missing").exists());
        assert!(!root.join("nope").exists());
    }

    /// A file created (O_CREAT) and a directory made (mkdir) in directories no other call
    /// names: those directories existed at the start (the call found them), so they are made;
    /// a directory the trace made itself is not, nor one a call found missing first.
    #[test]
    fn creating_in_a_directory_shows_that_the_directory_existed() {
        let mut s = Script::new();
        let creat = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
        s.call(
            "openat",
            3,
            0,
            &[
                ("dirfd", ArgValue::Int(-100)),
                ("pathname", p("/srv/out/log")),
                ("flags", ArgValue::Int(i64::from(creat))),
                ("mode", ArgValue::Int(0o644)),
            ],
        );
        s.call("mkdir", 0, 0, &[("pathname", p("/srv/new")), ("mode", ArgValue::Int(0o755))]);
        s.call("mkdir", 0, 0, &[("pathname", p("/srv/new/sub")), ("mode", ArgValue::Int(0o755))]);
        s.call(
            "access",
            -1,
            libc::ENOENT,
            &[("pathname", p("/later")), ("mode", ArgValue::Int(0))],
        );
        s.call("mkdir", 0, 0, &[("pathname", p("/later")), ("mode", ArgValue::Int(0o755))]);
        s.call("mkdir", 0, 0, &[("pathname", p("/later/x")), ("mode", ArgValue::Int(0o755))]);
        let (root, _) = s.infer("created", false);
        assert!(lmeta(&root, "srv/out").is_dir());
        assert!(!root.join("srv/out/log").exists(), "the created file is the trace's");
        assert!(!root.join("srv/new").exists(), "the trace made /srv/new");
        assert!(!root.join("later").exists(), "/later was missing at first");
    }

    /// access(X_OK) = 0: the file was executable; readlink = EINVAL: it exists, no symlink.
    #[test]
    fn access_x_ok_and_readlink_einval_shape_files() {
        let mut s = Script::new();
        s.call("access", 0, 0, &[("pathname", p("/bin/tool")), ("mode", ArgValue::Int(1))]);
        s.call(
            "readlink",
            -1,
            libc::EINVAL,
            &[("pathname", p("/etc/conf")), ("bufsiz", ArgValue::Int(100))],
        );
        let (root, _) = s.infer("access", false);
        assert!(lmeta(&root, "bin/tool").mode() & 0o111 != 0);
        let m = lmeta(&root, "etc/conf");
        assert!(m.is_file() && !m.file_type().is_symlink());
    }

    /// An executed program found through a chain of symlinks (as gcc resolves /usr/bin/cc):
    /// the links are recreated, and what exec and stat showed of the program lands at the
    /// chain's end; the `#!` interpreter of an executed script exists and is executable.
    #[test]
    fn symlink_chains_lead_to_the_executed_program() {
        let mut s = Script::new();
        s.call("stat", 0, 0, &[("pathname", p("/bin/cc")), ("statbuf", stat_buf(0o100755, 77))]);
        s.call("execve", 0, 0, &[("pathname", p("/bin/cc"))]);
        let rl = |s: &mut Script, path: &str, t: &str| {
            let args =
                [("pathname", p(path)), ("buf", data(t.as_bytes())), ("bufsiz", ArgValue::Int(99))];
            s.call("readlink", t.len() as i64, 0, &args);
        };
        rl(&mut s, "/bin/cc", "/etc/alt/cc");
        rl(&mut s, "/etc/alt/cc", "gcc");
        rl(&mut s, "/etc/alt/gcc", "../../bin/gcc-12");
        s.call(
            "readlink",
            -1,
            libc::EINVAL,
            &[("pathname", p("/bin/gcc-12")), ("bufsiz", ArgValue::Int(9))],
        );
        // A script run through its #! line.
        s.call("execve", 0, 0, &[("pathname", p("/w/shim"))]);
        s.call(
            "openat",
            3,
            0,
            &[
                ("dirfd", ArgValue::Int(-100)),
                ("pathname", p("/w/shim")),
                ("flags", ArgValue::Int(0)),
            ],
        );
        let script = b"#!/bin/dash -e\nexec python3\n";
        s.call(
            "read",
            script.len() as i64,
            0,
            &[("fd", ArgValue::Int(3)), ("buf", data(script)), ("count", ArgValue::Int(8192))],
        );
        let (root, _) = s.infer("chain", false);
        assert_eq!(std::fs::read_link(root.join("bin/cc")).unwrap(), PathBuf::from("/etc/alt/cc"));
        assert_eq!(std::fs::read_link(root.join("etc/alt/cc")).unwrap(), PathBuf::from("gcc"));
        let m = lmeta(&root, "bin/gcc-12");
        assert!(m.is_file());
        assert_eq!((m.mode() & 0o7777, m.len()), (0o755, 77));
        let end = std::fs::read_link(root.join("etc/alt/gcc")).unwrap();
        assert_eq!(end, PathBuf::from("../../bin/gcc-12"), "the chain ends at the program");
        let m = lmeta(&root, "bin/dash");
        assert!(m.is_file() && m.mode() & 0o111 != 0, "the interpreter: {m:?}");
        assert_eq!(std::fs::read(root.join("w/shim")).unwrap(), script);
    }

    /// A symlink the trace itself makes is not pre-created (as a directory or anything else):
    /// what is found beneath it was beneath its target.
    #[test]
    fn symlinks_the_trace_makes_are_not_precreated() {
        let mut s = Script::new();
        s.call("symlink", 0, 0, &[("target", p("real")), ("linkpath", p("/w/lnk"))]);
        s.call(
            "openat",
            3,
            0,
            &[
                ("dirfd", ArgValue::Int(-100)),
                ("pathname", p("/w/lnk/f")),
                ("flags", ArgValue::Int(0)),
            ],
        );
        s.call(
            "read",
            2,
            0,
            &[("fd", ArgValue::Int(3)), ("buf", data(b"hi")), ("count", ArgValue::Int(100))],
        );
        let (root, _) = s.infer("tracelink", false);
        assert!(
            !root.join("w/lnk").exists() && std::fs::symlink_metadata(root.join("w/lnk")).is_err()
        );
        assert_eq!(std::fs::read(root.join("w/real/f")).unwrap(), b"hi");
    }

    /// Content read through a path whose directory turns out (later in the trace) to be a
    /// symlink is moved beneath the link's target, and the link takes its place.
    #[test]
    fn content_read_beneath_a_symlink_moves_to_its_target() {
        let mut s = Script::new();
        s.call(
            "openat",
            3,
            0,
            &[
                ("dirfd", ArgValue::Int(-100)),
                ("pathname", p("/lib/x/libc.so")),
                ("flags", ArgValue::Int(0)),
            ],
        );
        s.call(
            "read",
            4,
            0,
            &[("fd", ArgValue::Int(3)), ("buf", data(b"\x7fELF")), ("count", ArgValue::Int(4))],
        );
        let args =
            [("pathname", p("/lib")), ("buf", data(b"usr/lib")), ("bufsiz", ArgValue::Int(99))];
        s.call("readlink", 7, 0, &args);
        let (root, _) = s.infer("prefixlink", false);
        assert_eq!(std::fs::read_link(root.join("lib")).unwrap(), PathBuf::from("usr/lib"));
        assert_eq!(std::fs::read(root.join("usr/lib/x/libc.so")).unwrap(), b"\x7fELF");
    }

    /// `/bin/ls` read through `/bin -> usr/bin` (merged /usr) made `/bin` a directory; a
    /// later listing of `/` saying `bin` is a symlink (its target never resolved by the
    /// trace) makes it one, pointing where replay makes such targets, with the content there.
    /// (Python's test_os lists `/`.)
    #[test]
    fn a_listing_s_symlink_beats_a_directory_inferred_through_it() {
        let mut s = Script::new();
        let flags = ("flags", ArgValue::Int(0));
        s.call(
            "openat",
            3,
            0,
            &[("dirfd", ArgValue::Int(-100)), ("pathname", p("/bin/ls")), flags],
        );
        let read =
            [("fd", ArgValue::Int(3)), ("buf", data(b"\x7fELF")), ("count", ArgValue::Int(4))];
        s.call("read", 4, 0, &read);
        let dir = ("flags", ArgValue::Int(i64::from(libc::O_DIRECTORY)));
        s.call("openat", 4, 0, &[("dirfd", ArgValue::Int(-100)), ("pathname", p("/")), dir]);
        // ".", "..", "bin" (DT_LNK), "etc" (DT_DIR).
        let ents: Vec<ra_trace::structs::Dirent> =
            [(&b"."[..], 4u8), (b"..", 4), (b"bin", 10), (b"etc", 4)]
                .iter()
                .enumerate()
                .map(|(i, (n, t))| ra_trace::structs::Dirent {
                    ino: 100 + i as u64,
                    off: i as i64 + 1,
                    d_type: *t,
                    name: n.to_vec(),
                })
                .collect();
        let ents = ra_trace::structs::encode_dirents64(&ents);
        let n = ents.len() as i64;
        let args = [
            ("fd", ArgValue::Int(4)),
            ("dirp", ArgValue::data(ents)),
            ("count", ArgValue::Int(4096)),
        ];
        s.call("getdents64", n, 0, &args);
        let (root, _) = s.infer("listedlink", false);
        let target = format!("{}/bin", String::from_utf8_lossy(LINK_TARGETS));
        assert_eq!(std::fs::read_link(root.join("bin")).unwrap(), PathBuf::from(&target));
        assert_eq!(std::fs::read(root.join(&target[1..]).join("ls")).unwrap(), b"\x7fELF");
        assert!(lmeta(&root, "etc").is_dir());
    }

    /// The bytes of a file the trace never showed are holes, or `--fill` data around the
    /// recorded content with `Unknown::Fill`.
    #[test]
    fn unknown_bytes_are_holes_or_fill_data() {
        use std::os::unix::fs::MetadataExt;
        let mut s = Script::new();
        let size = 3 << 20;
        s.call("stat", 0, 0, &[("pathname", p("/d/big")), ("statbuf", stat_buf(0o100644, size))]);
        let args = [
            ("dirfd", ArgValue::Int(-100)),
            ("pathname", p("/d/big")),
            ("flags", ArgValue::Int(0)),
        ];
        s.call("openat", 3, 0, &args);
        let args = [
            ("fd", ArgValue::Int(3)),
            ("buf", data(b"RECORDED")),
            ("count", ArgValue::Int(8)),
            ("offset", ArgValue::Int(1 << 20)),
        ];
        s.call("pread64", 8, 0, &args);
        let (root, st) = s.infer("sparse", false);
        let sparse_root = root.clone();
        let m = std::fs::metadata(root.join("d/big")).unwrap();
        assert_eq!(m.len(), size as u64);
        assert!(m.blocks() * 512 < 1 << 20, "sparse: {} blocks", m.blocks());
        assert_eq!((st.bytes_known, st.bytes_unknown, st.bytes_filled), (8, size as u64 - 8, 0));
        s.unknown = Unknown::Fill(crate::Fill::Pattern);
        let (root, st) = s.infer("fill", false);
        let m = std::fs::metadata(root.join("d/big")).unwrap();
        assert_eq!(m.len(), size as u64);
        assert!(m.blocks() * 512 >= size as u64, "filled: {} blocks", m.blocks());
        let b = std::fs::read(root.join("d/big")).unwrap();
        assert_eq!(&b[1 << 20..(1 << 20) + 8], b"RECORDED", "recorded content kept");
        assert_eq!(&b[..9], b"reanimato");
        // The block holding the recorded bytes was not a hole: it keeps the zeros around them;
        // every other byte is fill data.
        let block = (1 << 20)..(1 << 20) + 4096;
        assert!(b.iter().enumerate().all(|(i, &c)| c != 0 || block.contains(&i)), "a hole left");
        assert_eq!(st.bytes_filled, size as u64 - 4096);
        for r in [sparse_root, root] {
            let _ = std::fs::remove_dir_all(r.parent().unwrap());
        }
    }

    /// A stop (Ctrl-C) ends the filling of holes at once: EINTR, nothing more written.
    #[test]
    fn filling_holes_stops_on_ctrl_c() {
        let d = std::env::temp_dir().join(format!("ra-init-unit-{}-stop", std::process::id()));
        let f = std::fs::File::create(&d).unwrap();
        f.set_len(8 << 20).unwrap();
        let stop = AtomicBool::new(true);
        assert_eq!(fill_holes(f.as_fd(), 8 << 20, crate::Fill::Pattern, &stop), Err(libc::EINTR));
        assert_eq!(std::os::unix::fs::MetadataExt::blocks(&f.metadata().unwrap()), 0);
        stop.store(false, Ordering::Relaxed);
        assert_eq!(fill_holes(f.as_fd(), 8 << 20, crate::Fill::Pattern, &stop), Ok(8 << 20));
        let _ = std::fs::remove_file(&d);
    }

    /// Setuid/setgid bits a stat showed are withheld unless `special`, and reported.
    #[test]
    fn setuid_bits_are_withheld_unless_special() {
        let mut s = Script::new();
        s.call("stat", 0, 0, &[("pathname", p("/bin/su")), ("statbuf", stat_buf(0o104755, 3))]);
        let (root, st) = s.infer("suid", false);
        assert_eq!(lmeta(&root, "bin/su").mode() & 0o7777, 0o755);
        assert_eq!(st.withheld.len(), 1);
        assert_eq!(st.withheld[0].0, b"/bin/su");
        assert!(st.withheld[0].1.contains("4755"), "{}", st.withheld[0].1);
        let (root, st) = s.infer("suid-special", true);
        assert_eq!(lmeta(&root, "bin/su").mode() & 0o7777, 0o4755);
        assert!(st.withheld.is_empty());
        let _ =
            std::fs::set_permissions(root.join("bin/su"), std::fs::Permissions::from_mode(0o755));
    }

    #[test]
    fn link_resolution_and_shebang_lines() {
        let links: HashMap<Vec<u8>, Vec<u8>> = [
            (b"/a".to_vec(), b"b/c".to_vec()),
            (b"/b/c/d".to_vec(), b"/e".to_vec()),
            (b"/loop".to_vec(), b"/loop".to_vec()),
        ]
        .into_iter()
        .collect();
        assert_eq!(resolve_links(b"/a/d/f", &links, false).unwrap(), b"/e/f");
        assert_eq!(resolve_links(b"/a/d", &links, false).unwrap(), b"/b/c/d");
        assert_eq!(resolve_links(b"/a/d", &links, true).unwrap(), b"/e");
        assert_eq!(resolve_links(b"/loop/x", &links, false), None);
        assert_eq!(shebang(b"#!/bin/sh\necho").unwrap(), b"/bin/sh");
        assert_eq!(shebang(b"#! /usr/bin/env python3\n").unwrap(), b"/usr/bin/env");
        assert_eq!(shebang(b"#!relative\n"), None);
        assert_eq!(shebang(b"\x7fELF"), None);
    }
}
