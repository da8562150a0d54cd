//! The passthrough: every FUSE operation done on the lower directory through the node's
//! `O_PATH` descriptor, then handed to the tracer.
//!
//! Permissions: the mount uses `default_permissions` and `FUSE_POSIX_ACL`, so the kernel
//! checks every access against the attributes we return (the lower file's mode, owner and
//! group) and its POSIX ACL (fetched with getxattr of `system.posix_acl_access`, passed
//! through like any attribute) with the caller's full credentials, supplementary groups
//! included, exactly as it would on the lower file system; the daemon itself runs as root.
//! Calls that create a file (create, mkdir, mknod, symlink) run with the caller's
//! fsuid/fsgid and umask, so new files get the owner, group, mode and inherited ACL the lower
//! file system would give them (setgid directories and default ACLs included). What the
//! kernel cannot see — the search permission of LOWER's ancestors — [`crate::access::Reach`]
//! checks: callers who could not reach LOWER get EACCES for every request that names a file.
//!
//! Locks (`fcntl` and `flock`) are left to the kernel (the daemon does not announce
//! `FUSE_POSIX_LOCKS`/`FUSE_FLOCK_LOCKS`): they work between processes using the mount,
//! as with bindfs, but are not taken on the lower files and not traced.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    AccessFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation,
    INodeNo, KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyDirectoryPlus, ReplyEmpty, ReplyEntry, ReplyLseek, ReplyOpen, ReplyStatfs,
    ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};
use ra_trace::{FsData, FsRecord};
use rustix::fs::{AtFlags, Mode, OFlags};

use crate::access::Reach;
use crate::guard::OwnFiles;
use crate::handles::{DirStream, Handle, Handles};
use crate::inodes::{Inodes, NodeRef};
use crate::tracer::{now_ns, Buf, FilterView, Tracers};

/// The passthrough file system: fuser's `Filesystem`, serving every FUSE request on LOWER
/// and handing each finished operation to the [`Tracers`]. Built by [`crate::mount`].
pub struct TraceFs {
    /// FUSE node ids and the lower files they name (node id = lower inode number where it
    /// can be), and their paths under the mountpoint.
    pub inodes: Inodes,
    /// The file handles (`fh`) given to the kernel for open files and directories.
    pub handles: Handles,
    /// The mount's tracers: every traced operation is offered to each.
    pub tracers: Arc<Tracers>,
    /// Attribute cache time the kernel is given (zero but in `--fast`: attributes are asked
    /// for every time).
    pub attr_ttl: Duration,
    /// Entry (name) cache time: zero with `--every-lookup`, so that every path walk asks.
    pub entry_ttl: Duration,
    /// Ask the kernel for FUSE-over-io_uring at INIT (`--transport uring`).
    pub want_uring: bool,
    /// `--fast`: let the kernel keep file pages between opens.
    pub keep_cache: bool,
    /// `--direct-io`: no page cache on the mount; every read and write call is a request.
    pub direct_io: bool,
    /// Who may reach LOWER (its ancestors' search permission).
    pub reach: Arc<Reach>,
    /// The daemon's own files: passed through untraced.
    pub own: Arc<OwnFiles>,
    /// Whether the lower file system has POSIX ACLs (without, mode bits are all there is
    /// and the kernel is not asked to check ACLs).
    pub lower_acls: bool,
    /// What INIT settled.
    pub negotiated: Arc<Negotiated>,
    /// Set at INIT: the kernel sends modes unmasked with the caller's umask (FUSE_DONT_MASK).
    pub dont_mask: bool,
    /// Operations on [`TraceFs::own`] files, passed through untraced.
    pub untraced: Arc<AtomicU64>,
}

/// What the kernel and the daemon settled at INIT.
#[derive(Default)]
pub struct Negotiated {
    /// INIT was refused (the kernel cannot check ACLs the lower files have): nothing served.
    pub refused: AtomicBool,
    /// The kernel checks POSIX ACLs (FUSE_POSIX_ACL).
    pub posix_acl: AtomicBool,
    /// The kernel agreed to FUSE-over-io_uring (FUSE_OVER_IO_URING).
    pub uring: AtomicBool,
}

type Res<T> = Result<T, i32>;

/// The largest read and write request asked for at INIT (and with it `max_pages`): 1 MiB,
/// this kernel's `max_pages_limit` of 256 pages.
pub const MAX_WRITE: usize = 1 << 20;

fn errno(e: rustix::io::Errno) -> i32 {
    e.raw_os_error()
}

fn io_errno(e: std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

fn ts(secs: i64, nsec: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nsec as u32)
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + Duration::from_nanos(nsec as u64)
    }
}

fn kind_of(mode: u32) -> FileType {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => FileType::Directory,
        libc::S_IFLNK => FileType::Symlink,
        libc::S_IFIFO => FileType::NamedPipe,
        libc::S_IFSOCK => FileType::Socket,
        libc::S_IFCHR => FileType::CharDevice,
        libc::S_IFBLK => FileType::BlockDevice,
        _ => FileType::RegularFile,
    }
}

fn attr_of(st: &rustix::fs::Stat) -> FileAttr {
    FileAttr {
        ino: INodeNo(st.st_ino),
        size: st.st_size as u64,
        blocks: st.st_blocks as u64,
        atime: ts(st.st_atime, st.st_atime_nsec as i64),
        mtime: ts(st.st_mtime, st.st_mtime_nsec as i64),
        ctime: ts(st.st_ctime, st.st_ctime_nsec as i64),
        crtime: UNIX_EPOCH,
        kind: kind_of(st.st_mode),
        perm: (st.st_mode & 0o7777) as u16,
        nlink: st.st_nlink as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        rdev: st.st_rdev as u32,
        blksize: st.st_blksize as u32,
        flags: 0,
    }
}

fn stat_fd(fd: impl AsFd) -> Res<rustix::fs::Stat> {
    rustix::fs::statat(fd, c"", AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW).map_err(errno)
}

fn cname(name: &[u8]) -> Res<CString> {
    CString::new(name).map_err(|_| libc::EINVAL)
}

fn time_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i64,
        Err(e) => -(e.duration().as_nanos() as i64),
    }
}

/// Run `f` (a call that creates a file) with the calling user's fsuid/fsgid and, when the
/// kernel left it to us (`umask` is `Some`), the caller's umask: the lower file system then
/// gives the new file the owner, group and mode (or a default ACL's instead of the umask) it
/// would give it natively. Root's calls with no umask to apply run as they are.
fn as_caller<T>(req: &Request, umask: Option<u32>, f: impl FnOnce() -> T) -> T {
    crate::access::as_user(req.uid(), req.gid(), None, umask, f)
}

/// One operation in flight: what the tracer needs besides the operation's own fields.
struct Op<'a> {
    fs: &'a TraceFs,
    req: &'a Request,
    op: &'static str,
    t0: i64,
    node: u64,
    name: Option<&'a [u8]>,
}

impl TraceFs {
    fn op<'a>(
        &'a self,
        req: &'a Request,
        op: &'static str,
        node: INodeNo,
        name: Option<&'a OsStr>,
    ) -> Op<'a> {
        Op { fs: self, req, op, t0: now_ns(), node: node.0, name: name.map(OsStrExt::as_bytes) }
    }

    fn node(&self, id: INodeNo) -> Res<NodeRef> {
        self.inodes.get(id.0).ok_or(libc::ESTALE)
    }

    /// EACCES for a caller who could not reach LOWER on the lower file system (its ancestors'
    /// search permission, which the kernel does not see): checked by every request that names
    /// a file, not by those on descriptors the caller holds (as natively).
    fn reach(&self, req: &Request) -> Res<()> {
        if self.reach.is_open() || req.uid() == 0 {
            return Ok(());
        }
        let groups = self.tracers.proc_info(req.pid()).groups.ok_or(libc::EACCES)?;
        if self.reach.allows(req.uid(), req.gid(), &groups) {
            Ok(())
        } else {
            Err(libc::EACCES)
        }
    }

    /// The attribute cache time for a node: none for the root while some callers may not
    /// reach LOWER, so that every path walk into the mount asks (and meets [`TraceFs::reach`]).
    fn attr_ttl(&self, ino: INodeNo) -> Duration {
        if ino.0 == crate::inodes::ROOT && !self.reach.is_open() {
            Duration::ZERO
        } else {
            self.attr_ttl
        }
    }

    /// Whether the node is one of the daemon's own files (the trace, its log, ...).
    fn is_own(&self, id: u64) -> bool {
        !self.own.is_empty() && self.inodes.key(id).is_some_and(|(d, i)| self.own.contains(d, i))
    }

    /// The mode a creating call gives the lower file system and the umask it applies there
    /// (on the creating thread: the daemon's own umask is left alone): the mode as asked and
    /// the caller's umask when the kernel left the umask to us (FUSE_DONT_MASK: a directory's
    /// default ACL then replaces it, as natively), else the mode the kernel masked already
    /// and none.
    fn creation_mode(&self, mode: u32, umask: u32) -> (u32, Option<u32>) {
        if self.dont_mask {
            (mode, Some(umask))
        } else {
            (mode & !umask, Some(0))
        }
    }

    fn handle(&self, fh: FileHandle) -> Res<Arc<Handle>> {
        self.handles.get(fh.0).ok_or(libc::EBADF)
    }

    /// Look `name` up in `parent` and count a lookup on its node.
    fn lookup_entry(&self, parent: INodeNo, name: &[u8]) -> Res<(u64, FileAttr)> {
        let p = self.node(parent)?;
        let c = cname(name)?;
        let st = rustix::fs::statat(p.fd(), &c, AtFlags::SYMLINK_NOFOLLOW).map_err(errno)?;
        let is_symlink = st.st_mode & libc::S_IFMT == libc::S_IFLNK;
        let handle = || crate::inodes::handle_of(p.fd(), &c);
        let id = self
            .inodes
            .looked_up(parent.0, name, st.st_dev, st.st_ino, is_symlink, handle, || {
                rustix::fs::openat(
                    p.fd(),
                    &c,
                    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(Into::into)
            })
            .map_err(io_errno)?;
        Ok((id, attr_of(&st)))
    }

    /// Stream the directory of `fh` from `offset` (the lower file system's own `d_off`, so
    /// that seekdir and rewinddir work) into `add`, which returns `Some(true)` when the reply
    /// is full (the entry is kept for the next call), `Some(false)` when it took the entry and
    /// `None` to skip it. Returns the number of entries taken.
    fn walk_dir(
        &self,
        fh: FileHandle,
        offset: u64,
        mut add: impl FnMut(&rustix::fs::DirEntry, &OsStr) -> Res<Option<bool>>,
    ) -> Res<usize> {
        let h = self.handle(fh)?;
        let cell = h.dir.as_ref().ok_or(libc::ENOTDIR)?;
        let mut g = cell.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            let dir = rustix::fs::Dir::read_from(&h.fd).map_err(errno)?;
            *g = Some(DirStream { dir, pos: 0, pending: None });
        }
        let st = g.as_mut().expect("set above");
        if offset as i64 != st.pos {
            // A seekdir/rewinddir, or a retry.
            st.dir.seek(offset as i64).map_err(errno)?;
            st.pos = offset as i64;
            st.pending = None;
        }
        let mut n = 0;
        loop {
            let e = match st.pending.take() {
                Some(e) => e,
                None => match st.dir.read() {
                    Some(e) => e.map_err(errno)?,
                    None => break,
                },
            };
            let name = OsStr::from_bytes(e.file_name().to_bytes());
            match add(&e, name) {
                Ok(Some(true)) => {
                    st.pending = Some(e);
                    break;
                }
                Ok(Some(false)) => n += 1,
                Ok(None) => {}
                // An error after some entries: send those; the next call meets it again.
                Err(_) if n > 0 => {
                    st.pending = Some(e);
                    break;
                }
                Err(err) => return Err(err),
            }
            st.pos = e.offset();
        }
        Ok(n)
    }

    fn entry_reply(&self, r: &Res<(u64, FileAttr)>, reply: ReplyEntry) {
        match r {
            Ok((id, attr)) => {
                // The node id is ours; st_ino stays the lower file's.
                let mut a = *attr;
                a.ino = INodeNo(*id);
                reply.entry_with_ttls(&self.attr_ttl(a.ino), &self.entry_ttl, &a, Generation(0));
            }
            Err(e) => reply.error(Errno::from_i32(*e)),
        }
    }
}

fn kind_of_entry(t: rustix::fs::FileType) -> FileType {
    match t {
        rustix::fs::FileType::Directory => FileType::Directory,
        rustix::fs::FileType::Symlink => FileType::Symlink,
        rustix::fs::FileType::Fifo => FileType::NamedPipe,
        rustix::fs::FileType::Socket => FileType::Socket,
        rustix::fs::FileType::CharacterDevice => FileType::CharDevice,
        rustix::fs::FileType::BlockDevice => FileType::BlockDevice,
        _ => FileType::RegularFile,
    }
}

impl TraceFs {
    /// Answer the request (`reply`) and hand the operation to the tracer (`trace`): with
    /// `--sync` the record first, durable before the answer goes out; otherwise the answer
    /// first, so that a program waits for no trace write.
    fn answer(&self, reply: impl FnOnce(), trace: impl FnOnce()) {
        if self.tracers.sync() {
            trace();
            reply();
        } else {
            reply();
            trace();
        }
    }
}

impl Op<'_> {
    /// An operation on one of the daemon's own files: counted, never recorded (reading the
    /// trace through the mount would otherwise record it into itself).
    fn untraced(self) {
        self.fs.untraced.fetch_add(1, Ordering::Relaxed);
    }

    /// Hand the finished operation to the tracer: `ret` its result (or 0), `err` its errno
    /// (0 on success), `size` the bytes it moved (for the filter), `fill` its own fields.
    fn done<'d>(self, err: i32, ret: i64, size: Option<u64>, fill: impl FnOnce(&mut FsRecord<'d>)) {
        self.done_with(err, ret, size, None, fill)
    }

    /// [`Op::done`] for an operation that moves a data buffer (`buf`): each tracer keeps of it
    /// what its data mode says.
    fn done_with<'d>(
        self,
        err: i32,
        ret: i64,
        size: Option<u64>,
        buf: Option<Buf<'_>>,
        fill: impl FnOnce(&mut FsRecord<'d>),
    ) {
        let t1 = now_ns();
        let tr = &self.fs.tracers;
        if !tr.active() {
            return;
        }
        if self.name.is_none() && self.fs.is_own(self.node) {
            self.untraced();
            return;
        }
        let inodes = &self.fs.inodes;
        let (node, name) = (self.node, self.name);
        let path = || inodes.path(node, name);
        let tid = self.req.pid();
        let proc_info = || tr.proc_info(tid);
        let view = FilterView::new(
            self.op,
            self.req.uid(),
            self.req.gid(),
            tid,
            err,
            size,
            None,
            &path,
            &proc_info,
        );
        let mask = tr.passes(&view);
        if mask == 0 {
            return;
        }
        let (path, info) = view.take();
        let mut r = FsRecord {
            op: self.op,
            time_called: self.t0,
            time_returned: t1,
            pid: info.pid,
            tid: tid as i32,
            uid: self.req.uid() as i32,
            gid: self.req.gid() as i32,
            ret: if err != 0 { -1 } else { ret },
            errno: err,
            comm: info.comm,
            fuse_unique: self.req.unique().0,
            nodeid: self.node,
            path,
            ..FsRecord::default()
        };
        fill(&mut r);
        if r.inode.is_none() && self.name.is_none() {
            r.inode = inodes.ino(node).map(|i| i as i64);
        }
        tr.emit(r, buf, mask);
    }
}

/// `_IOR('v', 1, long)`, `_IOR('X', 31, struct fsxattr)`, `_IOW('X', 32, struct fsxattr)`.
const FS_IOC_GETVERSION: libc::Ioctl = 0x8008_7601;
const FS_IOC_FSGETXATTR: libc::Ioctl = 0x801c_581f;
const FS_IOC_FSSETXATTR: libc::Ioctl = 0x401c_5820;

/// Answer a request that returns nothing but success or an errno.
fn reply_empty(r: &Res<()>, reply: ReplyEmpty) {
    match r {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(Errno::from_i32(*e)),
    }
}

fn split<T>(r: &Res<T>) -> i32 {
    match r {
        Ok(_) => 0,
        Err(e) => *e,
    }
}

impl Filesystem for TraceFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // 1 MiB per request: this kernel's max_pages_limit (256 pages).
        let _ = config.set_max_write(MAX_WRITE as u32);
        let _ = config.set_max_readahead(MAX_WRITE as u32);
        // POSIX ACLs checked by the kernel (with default_permissions) from the
        // system.posix_acl_* attributes getxattr passes through; the kernel then leaves the
        // umask to us (DONT_MASK), and the lower file system applies it — or a directory's
        // default ACL instead — with the caller's umask on the creating thread.
        // A lower file system without ACLs has nothing to check (and the kernel's ACL
        // lookups would cost a request each).
        if self.lower_acls {
            if config.add_capabilities(fuser::InitFlags::FUSE_POSIX_ACL).is_err() {
                eprintln!(
                    "reanimator fs: this kernel cannot check POSIX ACLs on a FUSE mount \
                     (FUSE_POSIX_ACL): refusing to serve a mount that would ignore them"
                );
                self.negotiated.refused.store(true, Ordering::Relaxed);
                return Err(std::io::Error::from_raw_os_error(libc::EPROTO));
            }
            self.negotiated.posix_acl.store(true, Ordering::Relaxed);
            self.dont_mask = config.add_capabilities(fuser::InitFlags::FUSE_DONT_MASK).is_ok();
        }
        if self.direct_io {
            // Shared mappings of direct-I/O files (kernel 6.6+); without it mmap fails.
            let _ = config.add_capabilities(fuser::InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP);
        }
        if self.want_uring {
            // Granted only where the kernel offers it (the fuse module's enable_uring).
            let ok = config.add_capabilities(fuser::InitFlags::FUSE_OVER_IO_URING).is_ok();
            self.negotiated.uring.store(ok, Ordering::Relaxed);
        }
        if !self.entry_ttl.is_zero() {
            // With an entry cache, READDIRPLUS's entries are kept and spare the lookups that
            // follow a listing; AUTO lets the kernel use it only when they do follow (ls -l).
            // Without one (--every-lookup) the kernel would look every name up again anyway.
            let _ = config.add_capabilities(
                fuser::InitFlags::FUSE_DO_READDIRPLUS | fuser::InitFlags::FUSE_READDIRPLUS_AUTO,
            );
        }
        Ok(())
    }

    fn lookup(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let op = self.op(req, "lookup", parent, Some(name));
        let r = self.reach(req).and_then(|()| self.lookup_entry(parent, name.as_bytes()));
        let answer = || self.entry_reply(&r, reply);
        if r.as_ref().is_ok_and(|(id, _)| self.is_own(*id)) {
            answer();
            return op.untraced();
        }
        let ino = r.as_ref().ok().map(|(_, a)| a.ino.0 as i64);
        self.answer(answer, || op.done(split(&r), 0, None, |rec| rec.result_inode = ino));
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        self.inodes.forget(ino.0, nlookup);
    }

    fn getattr(&self, req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let op = self.op(req, "getattr", ino, None);
        let r = (|| -> Res<FileAttr> {
            if let Some(fh) = fh {
                if let Ok(h) = self.handle(fh) {
                    return rustix::fs::fstat(&h.fd).map(|s| attr_of(&s)).map_err(errno);
                }
            }
            self.reach(req)?;
            let n = self.node(ino)?;
            stat_fd(n.fd()).map(|s| attr_of(&s))
        })();
        let answer = || match &r {
            Ok(a) => reply.attr(&self.attr_ttl(ino), &FileAttr { ino, ..*a }),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.fh = fh.map(|f| f.0 as i64);
                if let Ok(a) = &r {
                    rec.inode = Some(a.ino.0 as i64);
                    rec.result_size = Some(a.size as i64);
                    rec.mode = Some(i32::from(a.perm));
                }
            })
        });
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let op = self.op(req, "setattr", ino, None);
        let r = (|| -> Res<FileAttr> {
            if fh.is_none() {
                self.reach(req)?;
            }
            let n = self.node(ino)?;
            let h = fh.and_then(|f| self.handles.get(f.0));
            if let Some(m) = mode {
                if n.is_symlink {
                    return Err(libc::EOPNOTSUPP);
                }
                let m = Mode::from_raw_mode(m & 0o7777);
                match &h {
                    Some(h) => rustix::fs::fchmod(&h.fd, m),
                    None => rustix::fs::chmod(n.proc_path(), m),
                }
                .map_err(errno)?;
            }
            if uid.is_some() || gid.is_some() {
                let u = uid.map(rustix::fs::Uid::from_raw);
                let g = gid.map(rustix::fs::Gid::from_raw);
                rustix::fs::chownat(
                    n.fd(),
                    c"",
                    u,
                    g,
                    AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW,
                )
                .map_err(errno)?;
            }
            if let Some(len) = size {
                match &h {
                    Some(h) => rustix::fs::ftruncate(&h.fd, len).map_err(errno)?,
                    None => {
                        let f = rustix::fs::open(
                            n.proc_path(),
                            OFlags::WRONLY | OFlags::CLOEXEC,
                            Mode::empty(),
                        )
                        .map_err(errno)?;
                        rustix::fs::ftruncate(&f, len).map_err(errno)?;
                    }
                }
            }
            if atime.is_some() || mtime.is_some() {
                let spec = |t: Option<TimeOrNow>| match t {
                    None => rustix::fs::Timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT },
                    Some(TimeOrNow::Now) => {
                        rustix::fs::Timespec { tv_sec: 0, tv_nsec: libc::UTIME_NOW }
                    }
                    Some(TimeOrNow::SpecificTime(t)) => {
                        let ns = time_ns(t);
                        rustix::fs::Timespec {
                            tv_sec: ns.div_euclid(1_000_000_000),
                            tv_nsec: ns.rem_euclid(1_000_000_000),
                        }
                    }
                };
                let times = rustix::fs::Timestamps {
                    last_access: spec(atime),
                    last_modification: spec(mtime),
                };
                if n.is_symlink {
                    // The node's O_PATH descriptor is the symlink itself.
                    rustix::fs::utimensat(
                        n.fd(),
                        c"",
                        &times,
                        AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW,
                    )
                    .map_err(errno)?;
                } else {
                    rustix::fs::utimensat(rustix::fs::CWD, n.proc_path(), &times, AtFlags::empty())
                        .map_err(errno)?;
                }
            }
            stat_fd(n.fd()).map(|s| attr_of(&s))
        })();
        let answer = || match &r {
            Ok(a) => reply.attr(&self.attr_ttl(ino), &FileAttr { ino, ..*a }),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.fh = fh.map(|f| f.0 as i64);
                rec.mode = mode.map(|m| (m & 0o7777) as i32);
                rec.owner_uid = uid.map(|u| u as i32);
                rec.owner_gid = gid.map(|g| g as i32);
                rec.length = size.map(|s| s as i64);
                let t = |v: Option<TimeOrNow>| match v {
                    Some(TimeOrNow::SpecificTime(t)) => (Some(time_ns(t)), false),
                    Some(TimeOrNow::Now) => (None, true),
                    None => (None, false),
                };
                (rec.atime, rec.atime_now) = t(atime);
                (rec.mtime, rec.mtime_now) = t(mtime);
                if let Ok(a) = &r {
                    rec.inode = Some(a.ino.0 as i64);
                }
            })
        });
    }

    fn readlink(&self, req: &Request, ino: INodeNo, reply: ReplyData) {
        let op = self.op(req, "readlink", ino, None);
        let r = self
            .reach(req)
            .and_then(|()| self.node(ino))
            .and_then(|n| rustix::fs::readlinkat(n.fd(), c"", Vec::new()).map_err(errno));
        let answer = || match &r {
            Ok(t) => reply.data(t.as_bytes()),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        let len = r.as_ref().map_or(0, |t| t.as_bytes().len() as i64);
        self.answer(answer, || {
            op.done(split(&r), len, None, |rec| {
                if let Ok(t) = &r {
                    // Link targets are metadata: kept whole whatever --data says.
                    rec.data = FsData::Full(t.as_bytes().to_vec().into());
                }
            })
        });
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let op = self.op(req, "mknod", parent, Some(name));
        let (lower_mode, mask) = self.creation_mode(mode, umask);
        let mode = mode & !umask;
        let r = (|| {
            self.reach(req)?;
            let p = self.node(parent)?;
            let c = cname(name.as_bytes())?;
            let ft = rustix::fs::FileType::from_raw_mode(mode);
            as_caller(req, mask, || {
                rustix::fs::mknodat(
                    p.fd(),
                    &c,
                    ft,
                    Mode::from_raw_mode(lower_mode & 0o7777),
                    u64::from(rdev),
                )
            })
            .map_err(errno)?;
            self.lookup_entry(parent, name.as_bytes())
        })();
        let answer = || self.entry_reply(&r, reply);
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.mode = Some(mode as i32);
                rec.flags = Some(i64::from(rdev));
                rec.result_inode = r.as_ref().ok().map(|(_, a)| a.ino.0 as i64);
            })
        });
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let op = self.op(req, "mkdir", parent, Some(name));
        let (lower_mode, mask) = self.creation_mode(mode & 0o7777, umask);
        let mode = mode & !umask & 0o7777;
        let r = (|| {
            self.reach(req)?;
            let p = self.node(parent)?;
            let c = cname(name.as_bytes())?;
            as_caller(req, mask, || {
                rustix::fs::mkdirat(p.fd(), &c, Mode::from_raw_mode(lower_mode))
            })
            .map_err(errno)?;
            self.lookup_entry(parent, name.as_bytes())
        })();
        let answer = || self.entry_reply(&r, reply);
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.mode = Some(mode as i32);
                rec.result_inode = r.as_ref().ok().map(|(_, a)| a.ino.0 as i64);
            })
        });
    }

    fn unlink(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(req, "unlink", parent, name, AtFlags::empty(), reply);
    }

    fn rmdir(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(req, "rmdir", parent, name, AtFlags::REMOVEDIR, reply);
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &std::path::Path,
        reply: ReplyEntry,
    ) {
        let op = self.op(req, "symlink", parent, Some(link_name));
        let r = (|| {
            self.reach(req)?;
            let p = self.node(parent)?;
            let c = cname(link_name.as_bytes())?;
            let t = cname(target.as_os_str().as_bytes())?;
            as_caller(req, None, || rustix::fs::symlinkat(&t, p.fd(), &c)).map_err(errno)?;
            self.lookup_entry(parent, link_name.as_bytes())
        })();
        let answer = || self.entry_reply(&r, reply);
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.data = FsData::Full(target.as_os_str().as_bytes().into());
                rec.result_inode = r.as_ref().ok().map(|(_, a)| a.ino.0 as i64);
            })
        });
    }

    fn rename(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let op = self.op(req, "rename", parent, Some(name));
        let r = (|| -> Res<()> {
            self.reach(req)?;
            let p = self.node(parent)?;
            let np = self.node(newparent)?;
            let c = cname(name.as_bytes())?;
            let nc = cname(newname.as_bytes())?;
            let moved = rustix::fs::statat(p.fd(), &c, AtFlags::SYMLINK_NOFOLLOW).ok();
            let target = rustix::fs::statat(np.fd(), &nc, AtFlags::SYMLINK_NOFOLLOW).ok();
            let fl = rustix::fs::RenameFlags::from_bits_retain(flags.bits());
            rustix::fs::renameat_with(p.fd(), &c, np.fd(), &nc, fl).map_err(errno)?;
            if let Some(st) = moved {
                self.inodes.renamed(st.st_dev, st.st_ino, newparent.0, newname.as_bytes());
            }
            if fl.contains(rustix::fs::RenameFlags::EXCHANGE) {
                if let Some(st) = target {
                    self.inodes.renamed(st.st_dev, st.st_ino, parent.0, name.as_bytes());
                }
            }
            Ok(())
        })();
        let answer = || reply_empty(&r, reply);
        let new_path = self.inodes.path(newparent.0, Some(newname.as_bytes()));
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.new_path = new_path;
                rec.flags = Some(i64::from(flags.bits()));
            })
        });
    }

    fn link(
        &self,
        req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let op = self.op(req, "link", ino, None);
        // The path it was reached by before the link (the lookup below renames the node).
        let old_path = self.inodes.path(ino.0, None);
        let r = (|| {
            self.reach(req)?;
            let n = self.node(ino)?;
            let np = self.node(newparent)?;
            let nc = cname(newname.as_bytes())?;
            rustix::fs::linkat(n.fd(), c"", np.fd(), &nc, AtFlags::EMPTY_PATH).map_err(errno)?;
            self.lookup_entry(newparent, newname.as_bytes())
        })();
        let answer = || self.entry_reply(&r, reply);
        let new_path = self.inodes.path(newparent.0, Some(newname.as_bytes()));
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.path = old_path;
                rec.new_path = new_path;
                rec.inode = r.as_ref().ok().map(|(_, a)| a.ino.0 as i64);
            })
        });
    }

    fn open(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let op = self.op(req, "open", ino, None);
        // O_NOFOLLOW would refuse the /proc/self/fd magic link; the node is resolved already.
        let fl = flags.0 & !(libc::O_CREAT | libc::O_EXCL | libc::O_NOCTTY | libc::O_NOFOLLOW);
        let r = (|| -> Res<u64> {
            self.reach(req)?;
            let n = self.node(ino)?;
            let fd = rustix::fs::open(
                n.proc_path(),
                OFlags::from_bits_retain(fl as u32) | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(errno)?;
            Ok(self.handles.insert(Handle { fd, dir: None }))
        })();
        let answer = || match &r {
            Ok(fh) => reply.opened(FileHandle(*fh), self.fopen_flags()),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.flags = Some(i64::from(flags.0));
                rec.fh = r.as_ref().ok().map(|f| *f as i64);
            })
        });
    }

    fn read(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let op = self.op(req, "read", ino, None);
        let r = (|| -> Res<Vec<u8>> {
            let h = self.handle(fh)?;
            let mut buf = vec![0u8; size as usize];
            let n = rustix::io::pread(&h.fd, &mut buf, offset).map_err(errno)?;
            buf.truncate(n);
            Ok(buf)
        })();
        let answer = || match &r {
            Ok(b) => reply.data(b),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        let err = split(&r);
        let len = r.as_ref().map_or(0, Vec::len);
        let buf = r.as_ref().ok().map(|b| Buf::Read(b));
        self.answer(answer, || {
            op.done_with(err, len as i64, Some(len as u64), buf, |rec| {
                rec.fh = Some(fh.0 as i64);
                rec.offset = Some(offset as i64);
                rec.length = Some(i64::from(size));
            })
        });
    }

    fn write(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let op = self.op(req, "write", ino, None);
        let r = (|| -> Res<usize> {
            let h = self.handle(fh)?;
            rustix::io::pwrite(&h.fd, data, offset).map_err(errno)
        })();
        let answer = || match &r {
            Ok(n) => reply.written(*n as u32),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        let n = *r.as_ref().unwrap_or(&0);
        self.answer(answer, || {
            op.done_with(
                split(&r),
                n as i64,
                Some(data.len() as u64),
                Some(Buf::Written(data)),
                |rec| {
                    rec.fh = Some(fh.0 as i64);
                    rec.offset = Some(offset as i64);
                    rec.length = Some(data.len() as i64);
                },
            )
        });
    }

    fn flush(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        let op = self.op(req, "flush", ino, None);
        // A close of a duplicate: what the lower file system sees when a program closes a
        // descriptor (NFS and friends write back here).
        let r = self.handle(fh).and_then(|h| rustix::io::dup(&h.fd).map(drop).map_err(errno));
        let answer = || reply_empty(&r, reply);
        self.answer(answer, || op.done(split(&r), 0, None, |rec| rec.fh = Some(fh.0 as i64)));
    }

    fn release(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.close_handle(req, "release", ino, fh, reply);
    }

    fn fsync(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.sync(req, "fsync", ino, fh, datasync, reply);
    }

    fn opendir(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let op = self.op(req, "opendir", ino, None);
        let r = (|| -> Res<u64> {
            self.reach(req)?;
            let n = self.node(ino)?;
            let fd = rustix::fs::open(
                n.proc_path(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(errno)?;
            Ok(self.handles.insert(Handle { fd, dir: Some(Default::default()) }))
        })();
        let answer = || match &r {
            Ok(fh) => reply.opened(FileHandle(*fh), FopenFlags::empty()),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.flags = Some(i64::from(flags.0));
                rec.fh = r.as_ref().ok().map(|f| *f as i64);
            })
        });
    }

    fn readdir(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let op = self.op(req, "readdir", ino, None);
        let r = self.walk_dir(fh, offset, |e, name| {
            Ok(Some(reply.add(
                INodeNo(e.ino()),
                e.offset() as u64,
                kind_of_entry(e.file_type()),
                name,
            )))
        });
        let answer = || match &r {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        let n = *r.as_ref().unwrap_or(&0);
        self.answer(answer, || {
            op.done(split(&r), n as i64, None, |rec| {
                rec.fh = Some(fh.0 as i64);
                rec.offset = Some(offset as i64);
            })
        });
    }

    /// READDIRPLUS (announced with `--fast`, whose caches keep what it returns): each entry
    /// comes with its attributes and counts as a lookup, sparing `ls -l` one LOOKUP per name.
    fn readdirplus(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let op = self.op(req, "readdirplus", ino, None);
        let r = self.walk_dir(fh, offset, |e, name| {
            let bytes = name.as_bytes();
            if bytes == b"." || bytes == b".." {
                // The kernel links no dentry for these and counts no lookup.
                let attr = FileAttr {
                    ino: INodeNo(e.ino()),
                    kind: kind_of_entry(e.file_type()),
                    ..attr_of(&stat_fd(self.node(ino)?.fd())?)
                };
                return Ok(Some(reply.add(
                    INodeNo(e.ino()),
                    e.offset() as u64,
                    name,
                    &Duration::ZERO,
                    &attr,
                    Generation(0),
                )));
            }
            let (id, attr) = match self.lookup_entry(ino, bytes) {
                Ok(x) => x,
                // Removed since the directory was read: leave it out, as a new readdir would.
                Err(libc::ENOENT) => return Ok(None),
                Err(e) => return Err(e),
            };
            let full = reply.add_with_ttls(
                INodeNo(id),
                e.offset() as u64,
                name,
                &self.attr_ttl,
                &self.entry_ttl,
                &FileAttr { ino: INodeNo(id), ..attr },
                Generation(0),
            );
            if full {
                // Not sent: the kernel will not count this lookup.
                self.inodes.forget(id, 1);
            }
            Ok(Some(full))
        });
        let answer = || match &r {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        let n = *r.as_ref().unwrap_or(&0);
        self.answer(answer, || {
            op.done(split(&r), n as i64, None, |rec| {
                rec.fh = Some(fh.0 as i64);
                rec.offset = Some(offset as i64);
            })
        });
    }

    fn releasedir(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.close_handle(req, "releasedir", ino, fh, reply);
    }

    fn fsyncdir(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.sync(req, "fsyncdir", ino, fh, datasync, reply);
    }

    fn statfs(&self, req: &Request, ino: INodeNo, reply: ReplyStatfs) {
        let op = self.op(req, "statfs", ino, None);
        let r = self
            .reach(req)
            .and_then(|()| self.node(ino))
            .and_then(|n| rustix::fs::fstatfs(n.fd()).map_err(errno));
        let answer = || match &r {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                s.f_bsize as u32,
                s.f_namelen as u32,
                s.f_frsize as u32,
            ),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || op.done(split(&r), 0, None, |_| {}));
    }

    fn setxattr(
        &self,
        req: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        let op = self.op(req, "setxattr", ino, None);
        let r = (|| -> Res<()> {
            self.reach(req)?;
            let t = self.xattr_target(ino)?;
            let c = cname(name.as_bytes())?;
            let fl = rustix::fs::XattrFlags::from_bits_retain(flags as u32);
            if t.symlink {
                rustix::fs::lsetxattr(&t.path, &c, value, fl)
            } else {
                rustix::fs::setxattr(&t.path, &c, value, fl)
            }
            .map_err(errno)
        })();
        let answer = || reply_empty(&r, reply);
        self.answer(answer, || {
            op.done_with(split(&r), 0, Some(value.len() as u64), Some(Buf::Written(value)), |rec| {
                rec.name = Some(name.as_bytes().to_vec());
                rec.flags = Some(i64::from(flags));
                rec.length = Some(value.len() as i64);
            })
        });
    }

    fn getxattr(&self, req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let op = self.op(req, "getxattr", ino, None);
        let r = (|| -> Res<Vec<u8>> {
            self.reach(req)?;
            let t = self.xattr_target(ino)?;
            let c = cname(name.as_bytes())?;
            xattr_call(size, |buf| {
                if t.symlink {
                    rustix::fs::lgetxattr(&t.path, &c, buf)
                } else {
                    rustix::fs::getxattr(&t.path, &c, buf)
                }
            })
        })();
        let answer = || reply_xattr(&r, size, reply);
        let buf = r.as_ref().ok().filter(|_| size > 0).map(|b| Buf::Read(b));
        self.answer(answer, || {
            op.done_with(split(&r), r.as_ref().map_or(0, |v| v.len() as i64), None, buf, |rec| {
                rec.name = Some(name.as_bytes().to_vec());
                rec.length = Some(i64::from(size));
                if let Ok(v) = &r {
                    if size == 0 {
                        rec.result_size = Some(v.len() as i64);
                    }
                }
            })
        });
    }

    fn listxattr(&self, req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let op = self.op(req, "listxattr", ino, None);
        let r = (|| -> Res<Vec<u8>> {
            self.reach(req)?;
            let t = self.xattr_target(ino)?;
            xattr_call(size, |buf| {
                if t.symlink {
                    rustix::fs::llistxattr(&t.path, buf)
                } else {
                    rustix::fs::listxattr(&t.path, buf)
                }
            })
        })();
        let answer = || reply_xattr(&r, size, reply);
        self.answer(answer, || {
            op.done(split(&r), r.as_ref().map_or(0, |v| v.len() as i64), None, |rec| {
                rec.length = Some(i64::from(size));
                if let Ok(v) = &r {
                    if size > 0 {
                        rec.data = FsData::Full(std::borrow::Cow::Borrowed(v.as_slice()));
                    } else {
                        rec.result_size = Some(v.len() as i64);
                    }
                }
            })
        });
    }

    fn removexattr(&self, req: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let op = self.op(req, "removexattr", ino, None);
        let r = (|| -> Res<()> {
            self.reach(req)?;
            let t = self.xattr_target(ino)?;
            let c = cname(name.as_bytes())?;
            if t.symlink {
                rustix::fs::lremovexattr(&t.path, &c)
            } else {
                rustix::fs::removexattr(&t.path, &c)
            }
            .map_err(errno)
        })();
        let answer = || reply_empty(&r, reply);
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| rec.name = Some(name.as_bytes().to_vec()))
        });
    }

    fn access(&self, req: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        let op = self.op(req, "access", ino, None);
        let r = self.reach(req).and_then(|()| self.node(ino)).and_then(|n| {
            rustix::fs::accessat(
                rustix::fs::CWD,
                n.proc_path(),
                rustix::fs::Access::from_bits_retain(mask.bits() as u32),
                AtFlags::empty(),
            )
            .map_err(errno)
        });
        let answer = || reply_empty(&r, reply);
        self.answer(answer, || op.done(split(&r), 0, None, |rec| rec.mode = Some(mask.bits())));
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let op = self.op(req, "create", parent, Some(name));
        let (lower_mode, mask) = self.creation_mode(mode & 0o7777, umask);
        let mode = mode & !umask & 0o7777;
        let r = (|| -> Res<(u64, FileAttr, u64)> {
            self.reach(req)?;
            let p = self.node(parent)?;
            let c = cname(name.as_bytes())?;
            let fl = OFlags::from_bits_retain((flags & !libc::O_NOCTTY) as u32)
                | OFlags::CREATE
                | OFlags::CLOEXEC;
            let fd = as_caller(req, mask, || {
                rustix::fs::openat(p.fd(), &c, fl, Mode::from_raw_mode(lower_mode))
            })
            .map_err(errno)?;
            let (id, attr) = self.lookup_entry(parent, name.as_bytes())?;
            let fh = self.handles.insert(Handle { fd, dir: None });
            Ok((id, attr, fh))
        })();
        let answer = || match &r {
            Ok((id, attr, fh)) => reply.created_with_ttls(
                &self.attr_ttl,
                &self.entry_ttl,
                &FileAttr { ino: INodeNo(*id), ..*attr },
                Generation(0),
                FileHandle(*fh),
                self.fopen_flags(),
            ),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.flags = Some(i64::from(flags));
                rec.mode = Some(mode as i32);
                if let Ok((_, a, fh)) = &r {
                    rec.fh = Some(*fh as i64);
                    rec.result_inode = Some(a.ino.0 as i64);
                }
            })
        });
    }

    /// The ioctls that only read or set a file's attribute flags, passed to the lower file
    /// (the kernel sends chattr/lsattr's requests here): `FS_IOC_GETFLAGS`, `FS_IOC_SETFLAGS`,
    /// `FS_IOC_FSGETXATTR`, `FS_IOC_FSSETXATTR`, `FS_IOC_GETVERSION`. Others get ENOTTY: FUSE
    /// gives the daemon only as many bytes as the request's number declares, so calls with
    /// variable-size results (`FS_IOC_FIEMAP`'s extent array) cannot be passed through.
    fn ioctl(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _flags: fuser::IoctlFlags,
        cmd: u32,
        in_data: &[u8],
        out_size: u32,
        reply: fuser::ReplyIoctl,
    ) {
        let op = self.op(req, "ioctl", ino, None);
        let r = (|| -> Res<Vec<u8>> {
            let h = self.handle(fh)?;
            let size = match cmd as libc::Ioctl {
                libc::FS_IOC_GETFLAGS | libc::FS_IOC_SETFLAGS => 4,
                FS_IOC_GETVERSION => 4,
                FS_IOC_FSGETXATTR | FS_IOC_FSSETXATTR => 28,
                _ => return Err(libc::ENOTTY),
            };
            let mut buf = [0u8; 32];
            let n = in_data.len().min(size);
            buf[..n].copy_from_slice(&in_data[..n]);
            // SAFETY: every accepted request reads or writes at most `size` <= 32 bytes at
            // the pointer, which points into `buf`; the descriptor is the handle's.
            let rc = unsafe {
                use std::os::fd::AsRawFd;
                libc::ioctl(h.fd.as_raw_fd(), cmd as libc::Ioctl, buf.as_mut_ptr())
            };
            if rc < 0 {
                return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
            }
            Ok(buf[..(out_size as usize).min(size)].to_vec())
        })();
        let answer = || match &r {
            Ok(out) => reply.ioctl(0, out),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.fh = Some(fh.0 as i64);
                rec.flags = Some(i64::from(cmd));
                rec.length = Some(in_data.len() as i64);
            })
        });
    }

    fn fallocate(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let op = self.op(req, "fallocate", ino, None);
        let r = self.handle(fh).and_then(|h| {
            rustix::fs::fallocate(
                &h.fd,
                rustix::fs::FallocateFlags::from_bits_retain(mode as u32),
                offset,
                length,
            )
            .map_err(errno)
        });
        let answer = || reply_empty(&r, reply);
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.fh = Some(fh.0 as i64);
                rec.offset = Some(offset as i64);
                rec.length = Some(length as i64);
                rec.flags = Some(i64::from(mode));
            })
        });
    }

    fn lseek(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: i64,
        whence: i32,
        reply: ReplyLseek,
    ) {
        let op = self.op(req, "lseek", ino, None);
        let r = self.handle(fh).and_then(|h| {
            let from = match whence {
                libc::SEEK_SET => rustix::fs::SeekFrom::Start(offset as u64),
                libc::SEEK_CUR => rustix::fs::SeekFrom::Current(offset),
                libc::SEEK_END => rustix::fs::SeekFrom::End(offset),
                libc::SEEK_DATA => rustix::fs::SeekFrom::Data(offset as u64),
                libc::SEEK_HOLE => rustix::fs::SeekFrom::Hole(offset as u64),
                _ => return Err(libc::EINVAL),
            };
            rustix::fs::seek(&h.fd, from).map_err(errno)
        });
        let answer = || match &r {
            Ok(o) => reply.offset(*o as i64),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || {
            op.done(split(&r), r.as_ref().map_or(0, |o| *o as i64), None, |rec| {
                rec.fh = Some(fh.0 as i64);
                rec.offset = Some(offset);
                rec.flags = Some(i64::from(whence));
            })
        });
    }

    fn copy_file_range(
        &self,
        req: &Request,
        ino_in: INodeNo,
        fh_in: FileHandle,
        offset_in: u64,
        _ino_out: INodeNo,
        fh_out: FileHandle,
        offset_out: u64,
        len: u64,
        flags: fuser::CopyFileRangeFlags,
        reply: ReplyWrite,
    ) {
        let op = self.op(req, "copy_file_range", ino_in, None);
        let r = (|| -> Res<usize> {
            let a = self.handle(fh_in)?;
            let b = self.handle(fh_out)?;
            let (mut oi, mut oo) = (offset_in, offset_out);
            let _ = flags;
            rustix::fs::copy_file_range(&a.fd, Some(&mut oi), &b.fd, Some(&mut oo), len as usize)
                .map_err(errno)
        })();
        let answer = || match &r {
            Ok(n) => reply.written(*n as u32),
            Err(e) => reply.error(Errno::from_i32(*e)),
        };
        self.answer(answer, || {
            op.done(split(&r), *r.as_ref().unwrap_or(&0) as i64, None, |rec| {
                rec.fh = Some(fh_in.0 as i64);
                rec.offset = Some(offset_in as i64);
                rec.fh_out = Some(fh_out.0 as i64);
                rec.offset_out = Some(offset_out as i64);
                rec.length = Some(len as i64);
            })
        });
    }
}

/// Where an xattr call reaches a node: the node itself through /proc/self/fd (following the
/// magic link), or, for a symlink, `/proc/self/fd/<parent>/<name>` with the `l*` calls (the
/// symlink itself: root may set `trusted.*` attributes on symlinks).
struct XattrTarget {
    path: CString,
    symlink: bool,
    /// Keeps the descriptor in `path` open.
    _node: NodeRef,
}

impl TraceFs {
    fn xattr_target(&self, ino: INodeNo) -> Res<XattrTarget> {
        let n = self.node(ino)?;
        if !n.is_symlink {
            return Ok(XattrTarget {
                path: cname(n.proc_path().as_bytes())?,
                symlink: false,
                _node: n,
            });
        }
        let (parent, name) = self.inodes.parent_name(ino.0).ok_or(libc::ESTALE)?;
        let p = self.inodes.get(parent).ok_or(libc::ESTALE)?;
        let mut path = p.proc_path().into_bytes();
        path.push(b'/');
        path.extend_from_slice(&name);
        Ok(XattrTarget { path: cname(&path)?, symlink: true, _node: p })
    }
}

/// Call a get/list xattr function with a buffer of `size`; 0 asks for the length (with a
/// buffer of the largest size the kernel allows: rustix reports at most the buffer's
/// length, so an empty buffer would say 0).
fn xattr_call(size: u32, f: impl Fn(&mut [u8]) -> rustix::io::Result<usize>) -> Res<Vec<u8>> {
    if size == 0 {
        let mut buf = vec![0u8; 65536];
        let n = f(&mut buf).map_err(errno)?;
        buf.truncate(n);
        return Ok(buf);
    }
    let mut buf = vec![0u8; size as usize];
    let n = f(&mut buf).map_err(errno)?;
    buf.truncate(n);
    Ok(buf)
}

fn reply_xattr(r: &Res<Vec<u8>>, size: u32, reply: ReplyXattr) {
    match r {
        Ok(v) if size == 0 => reply.size(v.len() as u32),
        Ok(v) => reply.data(v),
        Err(e) => reply.error(Errno::from_i32(*e)),
    }
}

impl TraceFs {
    fn fopen_flags(&self) -> FopenFlags {
        let mut f = FopenFlags::empty();
        if self.keep_cache {
            f |= FopenFlags::FOPEN_KEEP_CACHE;
        }
        if self.direct_io {
            f |= FopenFlags::FOPEN_DIRECT_IO;
        }
        f
    }

    fn remove(
        &self,
        req: &Request,
        what: &'static str,
        parent: INodeNo,
        name: &OsStr,
        flags: AtFlags,
        reply: ReplyEmpty,
    ) {
        let op = self.op(req, what, parent, Some(name));
        let r = (|| -> Res<()> {
            self.reach(req)?;
            let p = self.node(parent)?;
            let c = cname(name.as_bytes())?;
            rustix::fs::unlinkat(p.fd(), &c, flags).map_err(errno)
        })();
        let answer = || reply_empty(&r, reply);
        self.answer(answer, || op.done(split(&r), 0, None, |_| {}));
    }

    /// `release` and `releasedir`: the handle's descriptor closes.
    fn close_handle(
        &self,
        req: &Request,
        what: &'static str,
        ino: INodeNo,
        fh: FileHandle,
        reply: ReplyEmpty,
    ) {
        let op = self.op(req, what, ino, None);
        let r = self.handles.remove(fh.0).map(drop).ok_or(libc::EBADF);
        let answer = || reply_empty(&r, reply);
        self.answer(answer, || op.done(split(&r), 0, None, |rec| rec.fh = Some(fh.0 as i64)));
    }

    fn sync(
        &self,
        req: &Request,
        what: &'static str,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let op = self.op(req, what, ino, None);
        let r = self.handle(fh).and_then(|h| {
            if datasync { rustix::fs::fdatasync(&h.fd) } else { rustix::fs::fsync(&h.fd) }
                .map_err(errno)
        });
        let answer = || reply_empty(&r, reply);
        self.answer(answer, || {
            op.done(split(&r), 0, None, |rec| {
                rec.fh = Some(fh.0 as i64);
                rec.flags = Some(i64::from(datasync));
            })
        });
    }
}

/// Open the lower directory's root as the mount's root node (`O_PATH`), and plainly (for
/// `open_by_handle_at`, which refuses `O_PATH` descriptors).
pub fn open_root(lower: &std::path::Path) -> std::io::Result<(OwnedFd, OwnedFd, rustix::fs::Stat)> {
    let fd =
        rustix::fs::open(lower, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    let plain = rustix::fs::open(
        lower,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&fd)?;
    Ok((fd, plain, st))
}
