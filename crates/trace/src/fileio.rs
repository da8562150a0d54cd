//! The file I/O a trace shows: which file each read, write and sync moved data of, at which
//! offset and how many bytes. Descriptors are followed through the trace (per process tables,
//! shared open file descriptions after `dup` and `fork`, file positions moved by reads, writes
//! and `lseek`, `O_APPEND`), so calls without an offset get the one the kernel used. What
//! exporters (`reanimator export --format fio-iolog`) write is built from these operations.
//!
//! Opens are reported lazily: an open file description is announced ([`FileOpKind::Open`])
//! just before the first operation on it that the caller keeps, so directories, files opened
//! only for their metadata and descriptors of I/O a filter left out never appear; a path is
//! open while any announced description of it is, and [`FileOpKind::Close`] comes when the
//! last one is closed (or at [`FileIoTracker::finish`]).
//!
//! The same descriptor tables name what each descriptor refers to at any point of the trace,
//! as `strace -y` does ([`FileIoTracker::fd_target`], [`FileIoTracker::event_fds`]): a file's or
//! directory's path, `/dev/null`, `pipe`, `socket`, `anon_inode:[eventfd]`; the descriptors a
//! process had before the trace began (a `-p` attach, inherited ones) from the recorders'
//! synthetic opens. `dump`, `export --where` and `stats` see a call's file through them.

use std::collections::HashMap;
use std::sync::Arc;

use ra_syscalls::{Durability, Handler, IoClass};

use crate::{ArgValue, Event};

/// One operation on a file, in the order of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileOp {
    /// The call's `time_called` (ns since the epoch); for [`FileOpKind::Open`], the open's.
    pub time_ns: i64,
    /// The file's absolute path, normalized (no `.`, `..` or repeated `/`).
    pub path: Arc<[u8]>,
    /// What was done to the file.
    pub kind: FileOpKind,
}

/// What a [`FileOp`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOpKind {
    /// The file became open: one of its open descriptions was announced while none other
    /// was. It comes just before the first kept operation on that description, not at the
    /// `open` call (its `time_ns` is the open's; see the module's documentation).
    Open,
    /// Bytes read from the file.
    Read {
        /// The file offset the kernel read at, in bytes: the call's own, or the followed
        /// file position for calls without one.
        offset: u64,
        /// Bytes read (the call's return value).
        len: u64,
    },
    /// Bytes written to the file.
    Write {
        /// The file offset written at, in bytes (with `O_APPEND`, the file's size as far as
        /// the trace shows).
        offset: u64,
        /// Bytes written (the call's return value).
        len: u64,
    },
    /// An `fsync`.
    Sync,
    /// An `fdatasync`.
    DataSync,
    /// The last announced open description of the file was closed (or the trace ended:
    /// [`FileIoTracker::finish`]).
    Close,
}

/// Calls left out, by reason. Only calls of the kinds exported (opens, reads, writes, syncs,
/// hole punches) are counted; everything else a trace holds is ignored silently.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Failed calls (an errno recorded).
    pub failed: u64,
    /// I/O on descriptors that are not files: pipes, sockets, directories, `/dev`, `/proc`.
    pub not_file: u64,
    /// I/O on descriptors the trace never showed being opened (inherited, e.g. stdin).
    pub unknown_fd: u64,
    /// Reads and writes that moved no bytes (end of file).
    pub zero_bytes: u64,
    /// `fallocate(FALLOC_FL_PUNCH_HOLE)`: no file-level equivalent to export.
    pub punch_hole: u64,
    /// Opens of relative paths whose directory is unknown (no `cwd` fact, unknown dirfd).
    pub unresolved_path: u64,
    /// Operations whose path a filter refused (the caller's `keep`).
    pub filtered: u64,
}

/// What a descriptor names ([`FileIoTracker::fd_target`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdTarget<'a> {
    /// A file, by its absolute normalized path.
    File(&'a Arc<[u8]>),
    /// A directory or `O_PATH` descriptor.
    Dir(&'a Arc<[u8]>),
    /// Opened in the trace, but no file whose I/O is followed: under `/dev`, `/proc` or `/sys`
    /// (with its path), a pipe, socket or anonymous inode (with the kernel's name of it), or
    /// a path that did not resolve (no name).
    Other(Option<&'a Arc<[u8]>>),
    /// Never shown opened: a pipe, a socket, or inherited from outside the trace.
    Unknown,
}

impl<'a> FdTarget<'a> {
    /// The path of a file or directory (absolute, normalized); `None` for pipes, sockets,
    /// `/dev`, `/proc` and `/sys` files, and descriptors never seen opened.
    pub fn path(self) -> Option<&'a Arc<[u8]>> {
        match self {
            FdTarget::File(p) | FdTarget::Dir(p) => Some(p),
            FdTarget::Other(_) | FdTarget::Unknown => None,
        }
    }

    /// The name `strace -y` gives it: a path (files, directories, `/dev/null`), or `pipe`,
    /// `socket`, `anon_inode:[eventfd]`, `/memfd:NAME (deleted)`; `None` for a descriptor the
    /// trace never showed being made.
    pub fn name(self) -> Option<&'a Arc<[u8]>> {
        match self {
            FdTarget::File(p) | FdTarget::Dir(p) => Some(p),
            FdTarget::Other(n) => n,
            FdTarget::Unknown => None,
        }
    }
}

/// What a descriptor refers to.
#[derive(Clone, Debug)]
enum Entry {
    File(usize),
    /// A directory (or `O_PATH` descriptor) with its path, for `*at` calls and `fchdir`.
    Dir(Arc<[u8]>),
    /// Not a file whose I/O is followed: `/dev`, `/proc`, `/sys` (with the path), a pipe,
    /// socket or anonymous inode (with the kernel's name of it), or unknown (an open of a
    /// relative path whose directory is unknown).
    Other(Option<Arc<[u8]>>),
}

#[derive(Clone, Debug)]
struct Slot {
    entry: Entry,
    cloexec: bool,
}

#[derive(Debug)]
struct Ofd {
    path: Arc<[u8]>,
    pos: u64,
    append: bool,
    /// The open's status and access flags (without the creation flags `O_CREAT`, `O_EXCL`,
    /// `O_TRUNC`, which acted once).
    flags: i32,
    opened_ns: i64,
    announced: bool,
    /// Descriptors (in any process) that refer to it.
    refs: u32,
}

/// A ring's registered files and buffers as the trace's `io_uring_register` calls set them
/// (`IOSQE_FIXED_FILE` requests name a file by its slot, `READ_FIXED`/`WRITE_FIXED` a buffer
/// by `buf_index`).
#[derive(Clone, Debug, Default)]
struct Ring {
    /// Slot by slot: the descriptor the file was registered from and what it referred to
    /// then (the ring holds the file itself: closing the descriptor does not change the
    /// slot); None: empty. None for the whole table: not known (a registration the trace does
    /// not hold, or cut short).
    files: Option<Vec<Option<(i32, Entry)>>>,
    /// The registered buffers (address, length); None: not known.
    buffers: Option<Vec<(u64, u64)>>,
}

#[derive(Clone, Debug, Default)]
struct Proc {
    fds: HashMap<i32, Slot>,
    cwd: Option<Arc<[u8]>>,
}

#[derive(Debug, Default)]
struct PathState {
    /// Announced open file descriptions of this path.
    open: u32,
    /// The file's size as far as the trace shows (for `O_APPEND`): 0 after `O_TRUNC`, else the
    /// end of the furthest write or the last `ftruncate`.
    size: u64,
}

/// A descriptor open at some point of the trace ([`FileIoTracker::open_descriptors`]): what a
/// recorder's synthetic open of it says (TRACE_FORMAT.md, `synthetic_ids`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenDescriptor {
    /// The descriptor's number in its process.
    pub fd: i32,
    /// A file's or directory's absolute path, a `/dev` path, or a kernel object's name as
    /// `/proc/PID/fd` gives it (`pipe:[0]`: the trace does not know the inode).
    pub name: Arc<[u8]>,
    /// The open's flags (`O_CLOEXEC` as the descriptor has it now; no creation flags).
    pub flags: i32,
    /// A file's position (`None` for directories and kernel objects).
    pub pos: Option<u64>,
}

/// Follows descriptors through a trace and turns its calls into [`FileOp`]s.
#[derive(Debug, Default)]
pub struct FileIoTracker {
    procs: HashMap<i32, Proc>,
    /// Children created by a clone/fork whose first call has not been seen: child -> parent.
    pending_children: HashMap<i32, i32>,
    ofds: Vec<Option<Ofd>>,
    free_ofds: Vec<usize>,
    paths: HashMap<Arc<[u8]>, PathState>,
    initial_cwd: Option<Arc<[u8]>>,
    /// Records with a smaller `unique_id` are the recorder's synthetic opens of descriptors
    /// open before the trace began.
    synthetic_ids: u64,
    skipped: Skipped,
    /// Rings with registered files or buffers, by process and ring descriptor.
    rings: HashMap<(i32, i32), Ring>,
}

/// What the descriptors of one call refer to ([`FileIoTracker::event_fds`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventFds {
    /// Per argument (by position), for the descriptor arguments (`fd`, `dirfd` other than
    /// `AT_FDCWD`) whose target the trace shows: what it referred to when the call began.
    pub args: [Option<Arc<[u8]>>; 6],
    /// The descriptor the call returned (`openat`, `socket`, `dup`): what it refers to after.
    pub ret: Option<Arc<[u8]>>,
    /// An io_uring request on a registered file: the descriptor its slot was registered from
    /// (`args` has what it referred to then, at the request's `fd`).
    pub fixed_fd: Option<i32>,
    /// A `READ_FIXED`/`WRITE_FIXED` request's registered buffer (address, length).
    pub fixed_buffer: Option<(u64, u64)>,
}

impl EventFds {
    /// The first and second descriptor arguments' names, in argument order (`fd_path`,
    /// `fd_path2`: `copy_file_range`'s input and output, `renameat`'s two directories).
    pub fn first_two(&self) -> [Option<&Arc<[u8]>>; 2] {
        let mut it = self.args.iter().flatten();
        [it.next(), it.next()]
    }
}

const PATH_PREFIXES_NOT_FILES: [&[u8]; 3] = [b"/dev", b"/proc", b"/sys"];

/// How `/proc/PID/fd` names a descriptor of no file (the synthetic opens' "paths").
const KERNEL_OBJECTS: [&[u8]; 3] = [b"pipe:[", b"socket:[", b"anon_inode:"];

impl FileIoTracker {
    /// `cwd`: the working directory the recorded command started in (the trace's `cwd` fact),
    /// against which relative paths are resolved.
    pub fn new(cwd: Option<&[u8]>) -> FileIoTracker {
        FileIoTracker {
            initial_cwd: cwd.and_then(|c| normalize(c, None)).map(Arc::from),
            ..FileIoTracker::default()
        }
    }

    /// A tracker for `trace`: its `cwd` fact, and its synthetic opens (trace info
    /// `synthetic_ids`) naming pipes and sockets by the kernel's names.
    pub fn for_trace(trace: &crate::TraceReader) -> FileIoTracker {
        let synthetic_ids = match trace.kind() {
            crate::TraceKind::Ours => trace
                .info_value("synthetic_ids")
                .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
                .unwrap_or(0),
            crate::TraceKind::ReAnimator => 0,
        };
        FileIoTracker { synthetic_ids, ..FileIoTracker::new(trace.info_value("cwd")) }
    }

    /// A tracker for calls as a recorder prints them (`record --print`): how many synthetic
    /// opens come first is not known yet, so as [`FileIoTracker::for_stream`].
    pub fn live(cwd: Option<&[u8]>) -> FileIoTracker {
        FileIoTracker { synthetic_ids: u64::MAX, ..FileIoTracker::new(cwd) }
    }

    /// A tracker for a trace read as it arrives ([`crate::StreamReader`]): its `cwd` fact.
    /// How many synthetic opens the recorder wrote is known only at the stream's end (trace
    /// info `synthetic_ids`), so every open that names a kernel object as /proc/PID/fd does
    /// (`pipe:[1234]`, no `/`) is taken for one.
    pub fn for_stream(trace: &crate::StreamReader) -> FileIoTracker {
        let synthetic_ids = match trace.kind() {
            crate::TraceKind::Ours => u64::MAX,
            crate::TraceKind::ReAnimator => 0,
        };
        FileIoTracker { synthetic_ids, ..FileIoTracker::new(trace.info_value("cwd")) }
    }

    /// What the descriptor arguments of `ev` refer to, before [`FileIoTracker::apply`] is
    /// given it (call [`FileIoTracker::returned_fd`] after, for the descriptor it returns).
    pub fn event_fds(&self, ev: &Event) -> EventFds {
        if let Some(c) = crate::uring::as_call(ev) {
            // A path request: its descriptors as the call's it stands for.
            return self.event_fds(&c);
        }
        let mut out = EventFds::default();
        let Some(def) = ev.def else { return out };
        out.fixed_buffer = self.uring_fixed_buffer(ev);
        if ev.uring_fixed_file() {
            if let (Some((fd, t)), Some((i, _))) = (self.uring_fixed_target(ev), def.arg("fd")) {
                if let Some(slot) = out.args.get_mut(i) {
                    *slot = t.name().cloned();
                }
                out.fixed_fd = Some(fd);
            }
            return out;
        }
        let pid = ev.pid.unwrap_or(0);
        for (i, (a, v)) in def.args.iter().zip(&ev.args).enumerate().take(out.args.len()) {
            if matches!(a.kind, ra_syscalls::ArgKind::Fd | ra_syscalls::ArgKind::DirFd) {
                if let Some(fd) = v.as_int().filter(|&fd| fd >= 0) {
                    out.args[i] = self.fd_target(pid, fd).name().cloned();
                }
            }
        }
        out
    }

    /// The file an io_uring request on a registered file (`IOSQE_FIXED_FILE`) was on: the
    /// descriptor the ring's slot was registered from and what it referred to then, as the
    /// trace's `io_uring_register` calls show (per ring and process; updates, unregisters and
    /// sparse tables followed). None for other events, an empty slot, or a table the trace
    /// does not show.
    pub fn uring_fixed_target(&self, ev: &Event) -> Option<(i32, FdTarget<'_>)> {
        if !ev.uring_fixed_file() {
            return None;
        }
        let int = |n: &str| ev.arg(n).and_then(ArgValue::as_int);
        let (fd, slot) = self
            .ring(ev.pid.unwrap_or(0), int("ring_fd")?)?
            .files
            .as_ref()?
            .get(usize::try_from(int("fd")?).ok()?)?
            .as_ref()?;
        Some((*fd, self.entry_target(slot)))
    }

    /// The registered buffer a `READ_FIXED` or `WRITE_FIXED` request used (its `buf_index`'s
    /// address and length), as the trace's `io_uring_register` calls show; None for other
    /// events or a table the trace does not show.
    pub fn uring_fixed_buffer(&self, ev: &Event) -> Option<(u64, u64)> {
        let op = ev.uring_op()?;
        if !matches!(op.name, "read_fixed" | "write_fixed" | "readv_fixed" | "writev_fixed") {
            return None;
        }
        let int = |n: &str| ev.arg(n).and_then(ArgValue::as_int);
        let ring = self.ring(ev.pid.unwrap_or(0), int("ring_fd")?)?;
        ring.buffers.as_ref()?.get(usize::try_from(int("buf_index")?).ok()?).copied()
    }

    /// The ring of descriptor `ring_fd` of `pid` (a child not seen yet: its parent's).
    fn ring(&self, pid: i32, ring_fd: i64) -> Option<&Ring> {
        let fd = i32::try_from(ring_fd).ok()?;
        self.rings
            .get(&(pid, fd))
            .or_else(|| self.rings.get(&(*self.pending_children.get(&pid)?, fd)))
    }

    /// What the descriptor `ev` returned refers to, after [`FileIoTracker::apply`] was given
    /// it: `None` for calls that return no descriptor, and failed ones.
    pub fn returned_fd(&self, ev: &Event) -> Option<Arc<[u8]>> {
        if let Some(c) = crate::uring::as_call(ev) {
            return self.returned_fd(&c);
        }
        let def = ev.def?;
        if def.ret != ra_syscalls::Ret::Fd || ev.failed() {
            return None;
        }
        let fd = ev.ret.filter(|&r| r >= 0)?;
        self.fd_target(ev.pid.unwrap_or(0), fd).name().cloned()
    }

    /// The calls left out so far, by reason.
    pub fn skipped(&self) -> &Skipped {
        &self.skipped
    }

    /// Apply one event (in trace order) and append the operations it makes to `out`. `keep`
    /// is asked about every read, write and sync (with the file's path); those it refuses are
    /// left out (counted as `filtered`) and do not announce their file.
    pub fn apply(
        &mut self,
        ev: &Event,
        keep: &mut dyn FnMut(&Event, &[u8]) -> bool,
        out: &mut Vec<FileOp>,
    ) {
        if let Some(c) = crate::uring::as_call(ev) {
            // OPENAT, CLOSE, RENAMEAT, ...: as their calls, so that a descriptor a request
            // opened names its file for the requests and calls on it.
            return self.apply(&c, keep, out);
        }
        let Some(def) = ev.def else { return };
        let pid = ev.pid.unwrap_or(0);
        self.enter(pid);
        let time = ev.time_called.unwrap_or(0);
        let ok = !ev.failed() && ev.ret.is_some_and(|r| r >= 0);
        if ok {
            self.new_objects(ev, pid, time, out);
        }
        let Some(handler) = def.replay.handler() else { return };
        let int = |name: &str| ev.arg(name).and_then(ArgValue::as_int);
        match handler {
            Handler::Open => {
                if !ok {
                    self.skipped.failed += 1;
                    return;
                }
                self.open(ev, pid, time, out);
            }
            Handler::Read | Handler::Write | Handler::ReadV | Handler::WriteV => {
                let write = matches!(handler, Handler::Write | Handler::WriteV);
                // pread64/pwrite64/preadv/pwritev; preadv2/pwritev2 with offset -1 use the
                // file position like read/write.
                let given = int("offset").filter(|&o| o >= 0).map(|o| o as u64);
                self.transfer(ev, pid, int("fd"), given, write, ok, time, keep, out);
            }
            // sendfile / copy_file_range / splice: a read of the input and a write of the
            // output, each end that is a file (the other may be a pipe or socket).
            Handler::Copy => {
                if let Some(c) = ev.copy() {
                    let at = |o: Option<i64>| o.map(|o| o.max(0) as u64);
                    let (fin, fout) = (Some(c.fd_in.into()), Some(c.fd_out.into()));
                    self.transfer(ev, pid, fin, at(c.off_in), false, ok, time, keep, out);
                    self.transfer(ev, pid, fout, at(c.off_out), true, ok, time, keep, out);
                }
            }
            Handler::Seek => {
                if let Some(Entry::File(ofd)) = self.entry(pid, int("fd")) {
                    if ok {
                        self.ofds[ofd].as_mut().expect("live ofd").pos = ev.ret.unwrap_or(0) as u64;
                    }
                }
            }
            // The descriptor calls of this family: fsync, fdatasync, fallocate, ftruncate
            // (the registry gives them one replay handler; their effects differ).
            // (By the entry's durability, and its arguments: fallocate's mode, ftruncate's
            // length.)
            Handler::FdInts => match def.durability {
                Some(d @ (Durability::File | Durability::Data)) => {
                    let Some(ofd) = self.file_of(pid, int("fd"), ok) else { return };
                    let kind =
                        if d == Durability::File { FileOpKind::Sync } else { FileOpKind::DataSync };
                    self.emit(ev, ofd, kind, time, keep, out);
                }
                Some(_) => {}
                None if def.io_class == IoClass::Write && def.arg("mode").is_some() => {
                    let punch =
                        int("mode").is_some_and(|m| m & i64::from(libc::FALLOC_FL_PUNCH_HOLE) != 0);
                    if punch && self.file_of(pid, int("fd"), ok).is_some() {
                        self.skipped.punch_hole += 1;
                    }
                }
                None if ok && def.io_class == IoClass::Write && def.arg("length").is_some() => {
                    if let (Some(Entry::File(ofd)), Some(len)) =
                        (self.entry(pid, int("fd")), int("length"))
                    {
                        let path = self.ofds[ofd].as_ref().expect("live ofd").path.clone();
                        self.paths.entry(path).or_default().size = len.max(0) as u64;
                    }
                }
                None => {}
            },
            Handler::AsyncIo => {
                if let Some(reg) = ev.uring_registration() {
                    self.register(pid, int("fd"), reg.ok().flatten(), ok, time, out);
                } else if ok
                    && def.args.iter().any(|a| {
                        matches!(
                            a.kind,
                            ra_syscalls::ArgKind::InStruct(ra_syscalls::Struct::UringRegister, _)
                        )
                    })
                    && int("opcode")
                        .is_some_and(|o| ra_syscalls::uring::register::resource(o as u64).is_some())
                {
                    // A registration the trace does not hold (before schema 6, not captured):
                    // the ring's table is not known from here on.
                    self.register(pid, int("fd"), None, ok, time, out);
                }
            }
            Handler::Close if ok => {
                if let Some(fd) = int("fd") {
                    self.close(pid, fd as i32, time, out);
                }
            }
            Handler::CloseRange if ok => {
                let (Some(first), Some(last)) = (int("first"), int("last")) else { return };
                let cloexec_only = int("flags").is_some_and(|f| f & 4 != 0); // CLOSE_RANGE_CLOEXEC
                let mut fds: Vec<i32> = self.procs[&pid]
                    .fds
                    .keys()
                    .copied()
                    .filter(|&fd| i64::from(fd) >= first && (fd as u32 as i64) <= last)
                    .collect();
                fds.sort_unstable();
                for fd in fds {
                    if cloexec_only {
                        if let Some(s) = self.proc(pid).fds.get_mut(&fd) {
                            s.cloexec = true;
                        }
                    } else {
                        self.close(pid, fd, time, out);
                    }
                }
            }
            Handler::Dup if ok => {
                let new = ev.ret.unwrap_or(-1) as i32;
                let old = int("oldfd").unwrap_or(-1) as i32;
                let cloexec = int("flags").is_some_and(|f| f & i64::from(libc::O_CLOEXEC) != 0);
                if new != old {
                    self.dup(pid, old, new, cloexec, time, out);
                }
            }
            Handler::Fcntl if ok => {
                let (Some(fd), Some(cmd)) = (int("fd"), int("cmd")) else { return };
                let cmd = cmd as i32;
                if cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC {
                    let new = ev.ret.unwrap_or(-1) as i32;
                    self.dup(pid, fd as i32, new, cmd == libc::F_DUPFD_CLOEXEC, time, out);
                } else if cmd == libc::F_SETFD {
                    let on = int("arg").is_some_and(|a| a & i64::from(libc::FD_CLOEXEC) != 0);
                    if let Some(s) = self.proc(pid).fds.get_mut(&(fd as i32)) {
                        s.cloexec = on;
                    }
                }
            }
            Handler::Clone if ok => {
                let child = ev.ret.unwrap_or(0) as i32;
                if child > 0 && child != pid && !self.procs.contains_key(&child) {
                    self.pending_children.insert(child, pid);
                }
            }
            Handler::Exec if !ev.failed() => {
                let fds: Vec<i32> = self.procs[&pid]
                    .fds
                    .iter()
                    .filter(|(_, s)| s.cloexec)
                    .map(|(f, _)| *f)
                    .collect();
                for fd in fds {
                    self.close(pid, fd, time, out);
                }
            }
            Handler::Chdir if ok => {
                let cwd = self.procs[&pid].cwd.clone();
                let p = ev.arg("path").and_then(ArgValue::as_data).map(strip_nul);
                if let Some(p) = p.and_then(|p| normalize(p, cwd.as_deref())) {
                    self.proc(pid).cwd = Some(p.into());
                }
            }
            Handler::Fchdir if ok => {
                // The call succeeded, so the descriptor is a directory, whatever its open
                // said (`open(".", O_RDONLY)` without O_DIRECTORY is a common way to save the
                // working directory); where its path is unknown, so is the new one.
                let cwd = match self.entry(pid, int("fd")) {
                    Some(Entry::Dir(d)) => Some(d),
                    Some(Entry::File(o)) => {
                        self.ofds.get(o).and_then(Option::as_ref).map(|f| f.path.clone())
                    }
                    _ => None,
                };
                self.proc(pid).cwd = cwd;
            }
            // The other calls open, move or close no file.
            Handler::Vmsplice
            | Handler::Tee
            | Handler::UringOp
            | Handler::Sync
            | Handler::Truncate
            | Handler::Flock
            | Handler::Ioctl
            | Handler::MemfdCreate
            | Handler::Stat
            | Handler::Statfs
            | Handler::Access
            | Handler::Getdents
            | Handler::Mkdir
            | Handler::Unlink
            | Handler::Mknod
            | Handler::Link
            | Handler::Symlink
            | Handler::Readlink
            | Handler::Rename
            | Handler::Chmod
            | Handler::Fchmod
            | Handler::Chown
            | Handler::Fchown
            | Handler::Utimes
            | Handler::Xattr
            | Handler::Close
            | Handler::CloseRange
            | Handler::Dup
            | Handler::Fcntl
            | Handler::Pipe
            | Handler::Mmap
            | Handler::Munmap
            | Handler::MemAsRecorded
            | Handler::Msync
            | Handler::Mremap
            | Handler::MmapPage
            | Handler::Clone
            | Handler::Exec
            | Handler::Exit
            | Handler::Chdir
            | Handler::Fchdir
            | Handler::Chroot
            | Handler::Umask
            | Handler::Bind => {}
        }
    }

    /// Close every announced file still open (the end of the trace).
    pub fn finish(&mut self, time_ns: i64, out: &mut Vec<FileOp>) {
        let mut pids: Vec<i32> = self.procs.keys().copied().collect();
        pids.sort_unstable();
        for pid in pids {
            let mut fds: Vec<i32> = self.procs[&pid].fds.keys().copied().collect();
            fds.sort_unstable();
            for fd in fds {
                self.close(pid, fd, time_ns, out);
            }
        }
        let mut rings: Vec<(i32, i32)> = self.rings.keys().copied().collect();
        rings.sort_unstable();
        for k in rings {
            let r = self.rings.remove(&k);
            self.release_ring(r, time_ns, out);
        }
    }

    /// What descriptor `fd` of process `pid` names at this point of the trace, as far as the
    /// trace has shown: the one lookup of a descriptor for every reader (dump's `strace -y`
    /// names through [`FdTarget::name`], export's and stats' files through
    /// [`FdTarget::path`]). Ask before applying the call (a close forgets its descriptor). A
    /// child not seen yet has the table it inherits from its parent.
    pub fn fd_target(&self, pid: i32, fd: i64) -> FdTarget<'_> {
        let proc =
            self.procs.get(&pid).or_else(|| self.procs.get(self.pending_children.get(&pid)?));
        let slot = i32::try_from(fd).ok().and_then(|fd| proc?.fds.get(&fd));
        match slot {
            None => FdTarget::Unknown,
            Some(s) => self.entry_target(&s.entry),
        }
    }

    fn entry_target<'a>(&'a self, e: &'a Entry) -> FdTarget<'a> {
        match e {
            Entry::File(o) => match self.ofds.get(*o).and_then(Option::as_ref) {
                Some(o) => FdTarget::File(&o.path),
                None => FdTarget::Unknown,
            },
            Entry::Dir(d) => FdTarget::Dir(d),
            Entry::Other(name) => FdTarget::Other(name.as_ref()),
        }
    }

    /// The processes the trace has shown so far (sorted), whose descriptors
    /// [`FileIoTracker::open_descriptors`] lists.
    pub fn processes(&self) -> Vec<i32> {
        let mut v: Vec<i32> = self.procs.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// The descriptors process `pid` has open at this point of the trace (a child not seen
    /// yet: those it inherits), sorted by number: what synthetic opens at a selection's start
    /// write (`reanimator select`). Descriptors whose target did not resolve are left out.
    pub fn open_descriptors(&self, pid: i32) -> Vec<OpenDescriptor> {
        let Some(proc) =
            self.procs.get(&pid).or_else(|| self.procs.get(self.pending_children.get(&pid)?))
        else {
            return Vec::new();
        };
        let mut out: Vec<OpenDescriptor> = proc
            .fds
            .iter()
            .filter_map(|(&fd, s)| {
                let cloexec = if s.cloexec { libc::O_CLOEXEC } else { 0 };
                let (name, flags, pos) = match &s.entry {
                    Entry::File(o) => {
                        let o = self.ofds.get(*o)?.as_ref()?;
                        (o.path.clone(), o.flags & !libc::O_CLOEXEC, Some(o.pos))
                    }
                    Entry::Dir(d) => (d.clone(), libc::O_RDONLY | libc::O_DIRECTORY, None),
                    Entry::Other(Some(n)) if n.starts_with(b"/dev/") => {
                        (n.clone(), libc::O_RDWR, None)
                    }
                    Entry::Other(Some(n)) if !n.contains(&b'/') => {
                        let n: Arc<[u8]> = if KERNEL_OBJECTS.iter().any(|k| n.starts_with(k)) {
                            n.clone()
                        } else {
                            [&n[..], b":[0]"].concat().into()
                        };
                        (n, libc::O_RDWR, None)
                    }
                    Entry::Other(_) => return None,
                };
                Some(OpenDescriptor { fd, name, flags: flags | cloexec, pos })
            })
            .collect();
        out.sort_by_key(|d| d.fd);
        out
    }

    /// The working directory of process `pid` as the trace shows it (the recorded command's
    /// for a process not seen yet), when known.
    pub fn cwd(&self, pid: i32) -> Option<&[u8]> {
        match self.procs.get(&pid) {
            Some(p) => p.cwd.as_deref(),
            None => self.initial_cwd.as_deref(),
        }
    }

    /// Descriptors of kernel objects a call made (pipes, sockets, event fds, memfds): named,
    /// so that later calls on them show what they are, and the numbers they take no longer
    /// refer to what they referred to before.
    fn new_objects(&mut self, ev: &Event, pid: i32, time: i64, out: &mut Vec<FileOp>) {
        let Some(def) = ev.def else { return };
        let int = |name: &str| ev.arg(name).and_then(ArgValue::as_int);
        let memfd = def.replay.handler() == Some(Handler::MemfdCreate);
        let cloexec_bit = if memfd { 1 } else { i64::from(libc::O_CLOEXEC) }; // MFD_CLOEXEC
                                                                              // socket and socketpair say SOCK_CLOEXEC in their type, the others in their flags.
        let cloexec = int(if def.arg("type").is_some() { "type" } else { "flags" })
            .is_some_and(|f| f & cloexec_bit != 0);
        let (name, fds): (Arc<[u8]>, Vec<i64>) = match (memfd, def.fd_object()) {
            (true, _) => {
                let n = ev.arg("name").and_then(ArgValue::as_data).map(strip_nul).unwrap_or(b"");
                let mut p = b"/memfd:".to_vec();
                p.extend_from_slice(n);
                p.extend_from_slice(b" (deleted)");
                (p.into(), ev.ret.into_iter().collect())
            }
            // signalfd on an existing descriptor changes its mask; it makes none.
            (_, Some("anon_inode:[signalfd]")) if int("fd").is_some_and(|f| f >= 0) => return,
            (_, Some(obj)) => {
                let fds = match def.ret {
                    ra_syscalls::Ret::Fd => ev.ret.into_iter().collect(),
                    // pipe, pipe2, socketpair: the two in the out argument.
                    _ => def
                        .args
                        .iter()
                        .zip(&ev.args)
                        .find(|(a, _)| {
                            matches!(
                                a.kind,
                                ra_syscalls::ArgKind::OutStruct(ra_syscalls::Struct::FdPair, _)
                            )
                        })
                        .and_then(|(_, v)| v.as_data())
                        .filter(|d| d.len() >= 8)
                        .map(|d| {
                            [&d[..4], &d[4..8]]
                                .iter()
                                .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                                .collect()
                        })
                        .unwrap_or_default(),
                };
                (Arc::from(obj.as_bytes()), fds)
            }
            _ => return,
        };
        for fd in fds {
            let Ok(fd) = i32::try_from(fd) else { continue };
            self.close(pid, fd, time, out);
            let entry = Entry::Other(Some(name.clone()));
            self.proc(pid).fds.insert(fd, Slot { entry, cloexec });
        }
    }

    /// A process's first call: a child takes a copy of its parent's table and cwd.
    fn enter(&mut self, pid: i32) {
        if self.procs.contains_key(&pid) {
            return;
        }
        let parent = self.pending_children.remove(&pid);
        let p = match parent.and_then(|pp| self.procs.get(&pp)) {
            Some(parent) => parent.clone(),
            None => Proc { fds: HashMap::new(), cwd: self.initial_cwd.clone() },
        };
        for s in p.fds.values() {
            if let Entry::File(o) = s.entry {
                self.ofds[o].as_mut().expect("live ofd").refs += 1;
            }
        }
        // The rings it inherits with their registered files (the kernel shares a ring; the
        // copy follows the child's own registrations only).
        if let Some(pp) = parent {
            let inherited: Vec<(i32, Ring)> = self
                .rings
                .iter()
                .filter(|((q, _), _)| *q == pp)
                .map(|((_, fd), r)| (*fd, r.clone()))
                .collect();
            for (fd, r) in inherited {
                for (_, e) in r.files.iter().flatten().flatten() {
                    if let Entry::File(o) = e {
                        self.ofds[*o].as_mut().expect("live ofd").refs += 1;
                    }
                }
                self.rings.insert((pid, fd), r);
            }
        }
        self.procs.insert(pid, p);
    }

    /// An `io_uring_register` of files or buffers on ring descriptor `ring_fd` (`reg` None:
    /// one the trace does not hold, after which the table is not known). Failed calls change
    /// nothing.
    fn register(
        &mut self,
        pid: i32,
        ring_fd: Option<i64>,
        reg: Option<ra_syscalls::uring::register::Registration>,
        ok: bool,
        time: i64,
        out: &mut Vec<FileOp>,
    ) {
        use ra_syscalls::uring::register::{Resource, FILES_SKIP};
        let Some(ring_fd) = ring_fd.and_then(|f| i32::try_from(f).ok()) else { return };
        if !ok {
            return;
        }
        let Some(reg) = reg else {
            // Which resource is unknown too: both tables are unknown from here on.
            let old = self.rings.insert((pid, ring_fd), Ring::default());
            self.release_ring(old, time, out);
            return;
        };
        let mut ring = self.rings.remove(&(pid, ring_fd)).unwrap_or_default();
        match reg.resource {
            Some(Resource::Buffers) => {
                let table = if reg.unregister || reg.cut {
                    if reg.unregister {
                        Some(Vec::new())
                    } else {
                        None
                    }
                } else if reg.update {
                    ring.buffers.take().map(|mut t| {
                        for (i, b) in reg.buffers.iter().enumerate() {
                            if let Some(s) = t.get_mut(reg.offset as usize + i) {
                                *s = *b;
                            }
                        }
                        t
                    })
                } else if reg.sparse {
                    Some(vec![(0, 0); reg.count as usize])
                } else {
                    Some(reg.buffers.clone())
                };
                ring.buffers = table;
            }
            Some(Resource::Files) => {
                let mut old: Vec<Entry> = Vec::new();
                let new_slot = |me: &mut Self, fd: i32| -> Option<(i32, Entry)> {
                    let e = me.entry(pid, Some(i64::from(fd)))?;
                    if let Entry::File(o) = e {
                        me.ofds[o].as_mut().expect("live ofd").refs += 1;
                    }
                    Some((fd, e))
                };
                let table = if reg.unregister {
                    old.extend(ring.files.take().into_iter().flatten().flatten().map(|(_, e)| e));
                    Some(Vec::new())
                } else if reg.update {
                    match ring.files.take() {
                        Some(mut t) => {
                            for (i, &fd) in reg.fds.iter().enumerate() {
                                let at = reg.offset as usize + i;
                                if fd == FILES_SKIP || at >= t.len() {
                                    continue;
                                }
                                let slot = if fd < 0 { None } else { new_slot(self, fd) };
                                if let Some((_, e)) = std::mem::replace(&mut t[at], slot) {
                                    old.push(e);
                                }
                            }
                            // Slots past what the recorder read are not known.
                            (!reg.cut).then_some(t)
                        }
                        None => None,
                    }
                } else {
                    old.extend(ring.files.take().into_iter().flatten().flatten().map(|(_, e)| e));
                    if reg.cut {
                        None
                    } else if reg.sparse {
                        Some(vec![None; reg.count as usize])
                    } else {
                        Some(
                            reg.fds
                                .iter()
                                .map(|&fd| if fd < 0 { None } else { new_slot(self, fd) })
                                .collect(),
                        )
                    }
                };
                ring.files = table;
                for e in old {
                    self.release(e, time, out);
                }
            }
            None => {}
        }
        self.rings.insert((pid, ring_fd), ring);
    }

    /// Let go of a ring's registered files.
    fn release_ring(&mut self, ring: Option<Ring>, time: i64, out: &mut Vec<FileOp>) {
        let entries: Vec<Entry> =
            ring.and_then(|r| r.files).into_iter().flatten().flatten().map(|(_, e)| e).collect();
        for e in entries {
            self.release(e, time, out);
        }
    }

    fn proc(&mut self, pid: i32) -> &mut Proc {
        self.procs.entry(pid).or_default()
    }

    fn entry(&self, pid: i32, fd: Option<i64>) -> Option<Entry> {
        let fd = i32::try_from(fd?).ok()?;
        self.procs.get(&pid)?.fds.get(&fd).map(|s| s.entry.clone())
    }

    /// A read or write of `ret` bytes through descriptor `fd`, at `given` or (None) at and
    /// moving the file position.
    #[allow(clippy::too_many_arguments)]
    fn transfer(
        &mut self,
        ev: &Event,
        pid: i32,
        fd: Option<i64>,
        given: Option<u64>,
        write: bool,
        ok: bool,
        time: i64,
        keep: &mut dyn FnMut(&Event, &[u8]) -> bool,
        out: &mut Vec<FileOp>,
    ) {
        let Some(ofd) = self.file_of(pid, fd, ok) else { return };
        let len = ev.ret.unwrap_or(0) as u64;
        let o = self.ofds[ofd].as_mut().expect("live ofd");
        let offset = match given {
            Some(off) => off,
            None if write && o.append => {
                let size = self.paths.get(&o.path).map_or(0, |p| p.size);
                o.pos = size + len;
                size
            }
            None => {
                let p = o.pos;
                o.pos += len;
                p
            }
        };
        if write {
            let st = self.paths.entry(o.path.clone()).or_default();
            st.size = st.size.max(offset + len);
        }
        if len == 0 {
            self.skipped.zero_bytes += 1;
            return;
        }
        let kind = if write {
            FileOpKind::Write { offset, len }
        } else {
            FileOpKind::Read { offset, len }
        };
        self.emit(ev, ofd, kind, time, keep, out);
    }

    /// The open file description behind a data call's descriptor, or `None` (counted).
    fn file_of(&mut self, pid: i32, fd: Option<i64>, ok: bool) -> Option<usize> {
        if !ok {
            self.skipped.failed += 1;
            return None;
        }
        match self.entry(pid, fd) {
            Some(Entry::File(o)) => Some(o),
            Some(_) => {
                self.skipped.not_file += 1;
                None
            }
            None => {
                self.skipped.unknown_fd += 1;
                None
            }
        }
    }

    fn emit(
        &mut self,
        ev: &Event,
        ofd: usize,
        kind: FileOpKind,
        time: i64,
        keep: &mut dyn FnMut(&Event, &[u8]) -> bool,
        out: &mut Vec<FileOp>,
    ) {
        let o = self.ofds[ofd].as_mut().expect("live ofd");
        if !keep(ev, &o.path) {
            self.skipped.filtered += 1;
            return;
        }
        if !o.announced {
            o.announced = true;
            let st = self.paths.entry(o.path.clone()).or_default();
            st.open += 1;
            if st.open == 1 {
                out.push(FileOp {
                    time_ns: o.opened_ns,
                    path: o.path.clone(),
                    kind: FileOpKind::Open,
                });
            }
        }
        out.push(FileOp { time_ns: time, path: o.path.clone(), kind });
    }

    fn open(&mut self, ev: &Event, pid: i32, time: i64, out: &mut Vec<FileOp>) {
        let fd = ev.ret.unwrap_or(-1) as i32;
        let flags = ev.open_flags().unwrap_or(0) as i32;
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let given = ev.arg("pathname").and_then(ArgValue::as_data).map(strip_nul).unwrap_or(b"");
        let base: Option<Arc<[u8]>> = match ev.arg("dirfd").and_then(ArgValue::as_int) {
            None | Some(-100) => self.procs[&pid].cwd.clone(),
            dirfd => match self.entry(pid, dirfd) {
                Some(Entry::Dir(d)) => Some(d),
                // A directory opened without O_DIRECTORY (tar and find open them with
                // O_NOFOLLOW|O_NONBLOCK and look with fstat): a directory all the same, since
                // a call used it as one.
                Some(Entry::File(o)) => {
                    self.ofds.get(o).and_then(Option::as_ref).map(|f| f.path.clone())
                }
                _ => None,
            },
        };
        // Re-Animator's own traces may carry the resolved path.
        let full = ev.extra.iter().find_map(|(k, v)| match v {
            crate::ExtraValue::Bytes(b) if k == "full_pathname" && b.first() == Some(&b'/') => {
                Some(strip_nul(b))
            }
            _ => None,
        });
        // The recorders' synthetic opens of descriptors made before the trace began name a
        // pipe, socket or anonymous inode as /proc/PID/fd does (`pipe:[1234]`): no path.
        let kernel_object = ev.unique_id < self.synthetic_ids
            && KERNEL_OBJECTS.iter().any(|k| given.starts_with(k))
            && !given.contains(&b'/');
        let path = if kernel_object {
            None
        } else {
            full.and_then(|f| normalize(f, None)).or_else(|| normalize(given, base.as_deref()))
        };
        let entry = match path {
            None if kernel_object => Entry::Other(Some(given.into())),
            None => {
                self.skipped.unresolved_path += 1;
                Entry::Other(None)
            }
            Some(p) => {
                let p: Arc<[u8]> = match self.paths.get_key_value(p.as_slice()) {
                    Some((k, _)) => k.clone(),
                    None => p.into(),
                };
                if flags & (libc::O_DIRECTORY | libc::O_PATH) != 0 {
                    Entry::Dir(p)
                } else if PATH_PREFIXES_NOT_FILES.iter().any(|d| under(&p, d)) {
                    Entry::Other(Some(p))
                } else {
                    let st = self.paths.entry(p.clone()).or_default();
                    if flags & libc::O_TRUNC != 0 {
                        st.size = 0;
                    }
                    let ofd = Ofd {
                        path: p,
                        pos: 0,
                        append: flags & libc::O_APPEND != 0,
                        flags: flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC),
                        opened_ns: time,
                        announced: false,
                        refs: 1,
                    };
                    let id = match self.free_ofds.pop() {
                        Some(i) => {
                            self.ofds[i] = Some(ofd);
                            i
                        }
                        None => {
                            self.ofds.push(Some(ofd));
                            self.ofds.len() - 1
                        }
                    };
                    Entry::File(id)
                }
            }
        };
        // A descriptor number the trace shows reused without a close (exec, or a close not
        // recorded) was closed.
        self.close(pid, fd, time, out);
        self.proc(pid).fds.insert(fd, Slot { entry, cloexec });
    }

    fn dup(
        &mut self,
        pid: i32,
        old: i32,
        new: i32,
        cloexec: bool,
        time: i64,
        out: &mut Vec<FileOp>,
    ) {
        let Some(slot) = self.procs[&pid].fds.get(&old).cloned() else {
            // Unknown source: the new number is unknown too.
            self.close(pid, new, time, out);
            return;
        };
        self.close(pid, new, time, out);
        if let Entry::File(o) = slot.entry {
            self.ofds[o].as_mut().expect("live ofd").refs += 1;
        }
        self.proc(pid).fds.insert(new, Slot { entry: slot.entry, cloexec });
    }

    fn close(&mut self, pid: i32, fd: i32, time: i64, out: &mut Vec<FileOp>) {
        let Some(slot) = self.proc(pid).fds.remove(&fd) else { return };
        // A ring descriptor: its registered files go with it.
        let ring = self.rings.remove(&(pid, fd));
        self.release_ring(ring, time, out);
        self.release(slot.entry, time, out);
    }

    /// One reference fewer to what a descriptor or a ring slot referred to: the last closes
    /// the open file description.
    fn release(&mut self, e: Entry, time: i64, out: &mut Vec<FileOp>) {
        let Entry::File(id) = e else { return };
        let o = self.ofds[id].as_mut().expect("live ofd");
        o.refs -= 1;
        if o.refs > 0 {
            return;
        }
        let o = self.ofds[id].take().expect("live ofd");
        self.free_ofds.push(id);
        if o.announced {
            let st = self.paths.get_mut(&o.path).expect("announced path");
            st.open -= 1;
            if st.open == 0 {
                out.push(FileOp { time_ns: time, path: o.path, kind: FileOpKind::Close });
            }
        }
    }
}

fn strip_nul(b: &[u8]) -> &[u8] {
    b.strip_suffix(&[0]).unwrap_or(b)
}

fn under(p: &[u8], dir: &[u8]) -> bool {
    p.strip_prefix(dir).is_some_and(|r| r.is_empty() || r[0] == b'/')
}

/// `path` made absolute against `base` and normalized lexically (`.` and empty components
/// dropped, `..` removing the previous component; `/..` is `/`, as the kernel has it). `None`
/// for an empty path or a relative one without a base.
pub fn normalize(path: &[u8], base: Option<&[u8]>) -> Option<Vec<u8>> {
    if path.is_empty() {
        return None;
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    let start: &[u8] = if path[0] == b'/' { b"" } else { base? };
    for c in start.split(|&b| b == b'/').chain(path.split(|&b| b == b'/')) {
        match c {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let mut out = Vec::with_capacity(path.len() + start.len() + 1);
    for c in &parts {
        out.push(b'/');
        out.extend_from_slice(c);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, args: &[(&str, ArgValue)], ret: i64, t: i64) -> Event {
        let mut e = Event::new(ra_syscalls::lookup(name).expect(name));
        for (n, v) in args {
            assert!(e.set_arg(n, v.clone()), "{name} {n}");
        }
        e.ret = Some(ret);
        e.pid = Some(10);
        e.time_called = Some(t);
        e
    }

    fn path(p: &str) -> ArgValue {
        let mut v = p.as_bytes().to_vec();
        v.push(0);
        ArgValue::data(v)
    }

    /// `openat(AT_FDCWD, p, flags)` returning `fd`, at time `t`.
    fn openat(p: &str, flags: i32, fd: i64, t: i64) -> Event {
        let flags = ArgValue::Int(i64::from(flags));
        ev(
            "openat",
            &[("dirfd", ArgValue::Int(-100)), ("pathname", path(p)), ("flags", flags)],
            fd,
            t,
        )
    }

    fn run(events: &[Event]) -> (Vec<(String, FileOpKind)>, Skipped) {
        let mut t = FileIoTracker::new(Some(b"/home/u"));
        let mut out = Vec::new();
        for e in events {
            t.apply(e, &mut |_, _| true, &mut out);
        }
        t.finish(1000, &mut out);
        let ops =
            out.into_iter().map(|o| (String::from_utf8_lossy(&o.path).into(), o.kind)).collect();
        (ops, t.skipped().clone())
    }

    use ArgValue::Int;
    use FileOpKind::*;

    #[test]
    fn positions_dups_and_lazy_opens() {
        let flags = i64::from(libc::O_RDWR | libc::O_CREAT);
        let (ops, sk) = run(&[
            ev(
                "openat",
                &[("dirfd", Int(-100)), ("pathname", path("d/./f")), ("flags", Int(flags))],
                3,
                1,
            ),
            ev("write", &[("fd", Int(3)), ("count", Int(100))], 100, 2),
            ev("pwrite64", &[("fd", Int(3)), ("count", Int(10)), ("offset", Int(500))], 10, 3),
            ev("dup", &[("oldfd", Int(3))], 4, 4),
            ev("write", &[("fd", Int(4)), ("count", Int(50))], 50, 5),
            ev("lseek", &[("fd", Int(3)), ("offset", Int(0)), ("whence", Int(0))], 0, 6),
            ev("read", &[("fd", Int(3)), ("count", Int(4096))], 150, 7),
            ev("read", &[("fd", Int(3)), ("count", Int(4096))], 0, 8),
            ev("fsync", &[("fd", Int(4))], 0, 9),
            ev("close", &[("fd", Int(3))], 0, 10),
            ev("fdatasync", &[("fd", Int(4))], 0, 11),
            ev("close", &[("fd", Int(4))], 0, 12),
            ev("read", &[("fd", Int(0)), ("count", Int(1))], 1, 13),
            ev(
                "openat",
                &[
                    ("dirfd", Int(-100)),
                    ("pathname", path("/etc")),
                    ("flags", Int(i64::from(libc::O_DIRECTORY))),
                ],
                5,
                14,
            ),
            ev("read", &[("fd", Int(5)), ("count", Int(1))], -1, 15),
        ]);
        let f = "/home/u/d/f".to_string();
        assert_eq!(
            ops,
            vec![
                (f.clone(), Open),
                (f.clone(), Write { offset: 0, len: 100 }),
                (f.clone(), Write { offset: 500, len: 10 }),
                (f.clone(), Write { offset: 100, len: 50 }),
                (f.clone(), Read { offset: 0, len: 150 }),
                (f.clone(), Sync),
                (f.clone(), DataSync),
                (f.clone(), Close),
            ]
        );
        assert_eq!(sk.zero_bytes, 1);
        assert_eq!(sk.unknown_fd, 1);
        assert_eq!(sk.failed, 1, "{sk:?}");
    }

    /// Kernel-side copies read their input and write their output: at the offsets they were
    /// given (the trace holds them after the call: advanced by the bytes moved), or at and
    /// moving the file positions; an end that is no file is left out.
    #[test]
    fn copies_read_one_file_and_write_another() {
        let loff = |v: i64| ArgValue::data(v.to_le_bytes().to_vec());
        let (ops, sk) = run(&[
            openat("a", libc::O_RDONLY, 3, 1),
            openat("b", libc::O_WRONLY | libc::O_CREAT, 4, 2),
            ev("copy_file_range", &[("fd_in", Int(3)), ("fd_out", Int(4))], 100, 3),
            ev(
                "copy_file_range",
                &[("fd_in", Int(3)), ("off_in", loff(5100)), ("fd_out", Int(4))],
                100,
                4,
            ),
            ev("sendfile", &[("out_fd", Int(4)), ("in_fd", Int(3))], 10, 5),
            ev("splice", &[("fd_in", Int(3)), ("off_in", loff(9000)), ("fd_out", Int(7))], 1000, 7),
        ]);
        let (a, b) = ("/home/u/a".to_string(), "/home/u/b".to_string());
        assert_eq!(
            ops,
            vec![
                (a.clone(), Open),
                (a.clone(), Read { offset: 0, len: 100 }),
                (b.clone(), Open),
                (b.clone(), Write { offset: 0, len: 100 }),
                (a.clone(), Read { offset: 5000, len: 100 }),
                (b.clone(), Write { offset: 100, len: 100 }),
                (a.clone(), Read { offset: 100, len: 10 }),
                (b.clone(), Write { offset: 200, len: 10 }),
                (a.clone(), Read { offset: 8000, len: 1000 }),
                (a.clone(), Close),
                (b.clone(), Close),
            ]
        );
        assert_eq!(sk.unknown_fd, 1, "the splice's output (a pipe the trace never made): {sk:?}");
    }

    /// fio's start-up: the working directory saved by `open(".")` without O_DIRECTORY, a
    /// `fchdir` elsewhere and a `fchdir` back: relative paths resolve where they did.
    #[test]
    fn fchdir_back_to_a_directory_opened_without_o_directory() {
        let (rd, dir) = (libc::O_RDONLY, libc::O_RDONLY | libc::O_DIRECTORY);
        let (ops, _) = run(&[
            openat(".", rd, 3, 1),
            openat("/sys/bus/nd/devices", dir, 4, 2),
            ev("fchdir", &[("fd", Int(4))], 0, 3),
            ev("fchdir", &[("fd", Int(3))], 0, 4),
            openat("w/f.dat", rd, 5, 5),
            ev("read", &[("fd", Int(5)), ("count", Int(4096))], 4096, 6),
        ]);
        assert_eq!(
            ops,
            vec![
                ("/home/u/w/f.dat".to_string(), Open),
                ("/home/u/w/f.dat".to_string(), Read { offset: 0, len: 4096 }),
                ("/home/u/w/f.dat".to_string(), Close),
            ]
        );
    }

    #[test]
    fn append_and_unannounced_files() {
        let (ops, _) = run(&[
            ev(
                "open",
                &[
                    ("pathname", path("/a")),
                    ("flags", Int(i64::from(libc::O_WRONLY | libc::O_TRUNC))),
                ],
                3,
                1,
            ),
            ev("write", &[("fd", Int(3)), ("count", Int(10))], 10, 2),
            ev(
                "open",
                &[
                    ("pathname", path("/a")),
                    ("flags", Int(i64::from(libc::O_WRONLY | libc::O_APPEND))),
                ],
                4,
                3,
            ),
            ev("write", &[("fd", Int(4)), ("count", Int(5))], 5, 4),
            ev("close", &[("fd", Int(3))], 0, 5),
            ev("open", &[("pathname", path("/b")), ("flags", Int(0))], 5, 6),
            ev("close", &[("fd", Int(5))], 0, 7),
        ]);
        assert_eq!(
            ops,
            vec![
                ("/a".into(), Open),
                ("/a".into(), Write { offset: 0, len: 10 }),
                ("/a".into(), Write { offset: 10, len: 5 }),
                ("/a".into(), Close),
            ]
        );
    }

    #[test]
    fn normalizing() {
        assert_eq!(normalize(b"/a//b/./c/..", None).unwrap(), b"/a/b");
        assert_eq!(normalize(b"../../x", Some(b"/a")).unwrap(), b"/x");
        assert_eq!(normalize(b"x", None), None);
        assert_eq!(normalize(b"/..", None).unwrap(), b"/");
    }
}

#[cfg(test)]
mod names {
    use super::*;
    use ArgValue::Int;

    fn ev(name: &str, args: &[(&str, ArgValue)], ret: i64, id: u64) -> Event {
        let mut e = Event::new(ra_syscalls::lookup(name).expect(name));
        for (n, v) in args {
            assert!(e.set_arg(n, v.clone()), "{name} {n}");
        }
        e.ret = Some(ret);
        e.errno = Some(0);
        e.pid = Some(10);
        e.unique_id = id;
        e
    }

    fn cstr(p: &str) -> ArgValue {
        ArgValue::data([p.as_bytes(), b"\0"].concat())
    }

    /// What each call's descriptors are named, before and after it, as dump shows them.
    fn names(synthetic: u64, events: &[Event]) -> Vec<(Vec<Option<String>>, Option<String>)> {
        let mut t = FileIoTracker { synthetic_ids: synthetic, ..FileIoTracker::new(Some(b"/w")) };
        let s = |p: Option<Arc<[u8]>>| p.map(|p| String::from_utf8_lossy(&p).into_owned());
        let mut ops = Vec::new();
        events
            .iter()
            .map(|e| {
                let f = t.event_fds(e);
                t.apply(e, &mut |_, _| true, &mut ops);
                let ret = s(t.returned_fd(e));
                (f.args.iter().cloned().map(s).collect::<Vec<_>>()[..2].to_vec(), ret)
            })
            .collect()
    }

    /// Pipes, event fds, memfds and the synthetic opens' kernel names; a number reused by a
    /// new object no longer names the file it was.
    #[test]
    fn kernel_objects_are_named_as_strace_names_them() {
        let pair: Vec<u8> = [5i32, 6].iter().flat_map(|n| n.to_le_bytes()).collect();
        let open = |p: &str, fd: i64, id: u64| {
            ev("openat", &[("dirfd", Int(-100)), ("pathname", cstr(p)), ("flags", Int(1))], fd, id)
        };
        let n = names(
            2,
            &[
                open("pipe:[1234]", 1, 0),
                open("rel/file", 3, 1),
                ev("write", &[("fd", Int(1))], 1, 2),
                ev("pipe2", &[("pipefd", ArgValue::data(pair)), ("flags", Int(0))], 0, 3),
                ev("write", &[("fd", Int(6))], 1, 4),
                ev("eventfd2", &[("initval", Int(0)), ("flags", Int(0))], 3, 5),
                ev("read", &[("fd", Int(3))], 8, 6),
                ev("memfd_create", &[("name", cstr("jit")), ("flags", Int(1))], 7, 7),
                ev("write", &[("fd", Int(7))], 1, 8),
                open("pipe:[99]", 8, 9),
            ],
        );
        let some = |s: &str| Some(s.to_string());
        assert_eq!(n[0].1, some("pipe:[1234]"), "a synthetic open names the kernel's object");
        assert_eq!(n[1].1, some("/w/rel/file"));
        assert_eq!(n[2].0[0], some("pipe:[1234]"));
        assert_eq!(n[4].0[0], some("pipe"));
        assert_eq!(n[5].1, some("anon_inode:[eventfd]"));
        assert_eq!(n[6].0[0], some("anon_inode:[eventfd]"), "3 is no longer the file");
        assert_eq!(n[8].0[0], some("/memfd:jit (deleted)"));
        assert_eq!(n[9].1, some("/w/pipe:[99]"), "after the synthetic records, a relative path");
    }
}
