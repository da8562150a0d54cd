//! [`Scanner`]: the entries of a directory tree, streamed in path order, in bounded memory.
//!
//! * **Order.** Entries come out sorted by path bytes ([`crate::path_cmp`]), the root (empty
//!   path) first. Each directory's names are read and sorted when the scan enters it; a
//!   subdirectory `d` is emitted at key `d` and entered at key `d/`, so that siblings such as
//!   `d.txt` (`.` < `/`) come out before `d`'s contents, as byte order wants.
//! * **Memory.** One open directory and one sorted name list per level of the current path,
//!   plus, for hard links, one record per inode with more than one name whose other names have
//!   not all been seen yet. File content is streamed (small files are read whole, up to 4 MiB).
//! * **Never following symlinks, never leaving the tree.** Every object is reached with `*at`
//!   calls relative to its parent's descriptor and `O_NOFOLLOW`; a symlink is recorded, never
//!   resolved. A directory is re-checked (device and inode) when entered, so a directory
//!   swapped for another object during the scan is an error, not a detour.
//! * **Mount points.** By default the scan stays on the root's file system (like `find
//!   -xdev`): a directory on another file system is recorded (its own attributes) but not
//!   entered, and [`ScanStats::mount_points`] counts it. [`ScanOptions::cross_mounts`] enters
//!   them.
//! * **Content.** Regular files are hashed with BLAKE3. With a [`BlobSink`], content the sink
//!   asks for is offered in chunks of at most [`CHUNK_BYTES`], in offset order; chunks that are
//!   all zero bytes are not offered (a restorer sets the size first, so they read back as
//!   zeros, holes in sparse files stay holes). Files up to 4 MiB are read once; larger files
//!   whose content the sink wants are read twice (hash, then store), and the second read must
//!   give the same digest.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fs::File;
use std::io;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use rustix::fs::{self as rfs, AtFlags, Dir, Mode, OFlags};
use rustix::io::Errno;

use crate::entry::{join, DevNum, Digest, Entry, Kind, CHUNK_BYTES};
use crate::error::{BoxError, Error, Result};

/// Files up to this size are read into memory once; larger ones are streamed.
const INLINE_BYTES: usize = 4 << 20;

/// Receives the content of regular files during a scan (content-addressed: each digest at
/// most once if the sink says so).
pub trait BlobSink {
    /// Called for every regular file once its digest is known. Return true to receive its
    /// content now through [`BlobSink::chunk`] and [`BlobSink::finish`].
    fn wants(&mut self, digest: &Digest, size: u64) -> bool;
    /// One chunk (at most [`CHUNK_BYTES`], never all zeros) at `offset`, in offset order.
    fn chunk(&mut self, digest: &Digest, offset: u64, data: &[u8]) -> Result<(), BoxError>;
    /// Every non-zero chunk of `digest` (`size` bytes in all) has been given.
    fn finish(&mut self, digest: &Digest, size: u64) -> Result<(), BoxError>;
}

/// A sink that wants nothing: hash only.
pub struct NoBlobs;

impl BlobSink for NoBlobs {
    fn wants(&mut self, _: &Digest, _: u64) -> bool {
        false
    }
    fn chunk(&mut self, _: &Digest, _: u64, _: &[u8]) -> Result<(), BoxError> {
        Ok(())
    }
    fn finish(&mut self, _: &Digest, _: u64) -> Result<(), BoxError> {
        Ok(())
    }
}

/// Counters of a scan so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Entries emitted (the root included).
    pub entries: u64,
    /// Regular files emitted (each name of a hard-linked file counted).
    pub files: u64,
    /// Directories emitted, the root and unentered mount points included.
    pub dirs: u64,
    /// Symlinks emitted.
    pub symlinks: u64,
    /// Fifos, sockets and devices.
    pub others: u64,
    /// Sum of the sizes of regular files (each name counted).
    pub file_bytes: u64,
    /// Bytes read from files (hashing and storing).
    pub bytes_read: u64,
    /// Contents given to the sink (distinct digests it wanted).
    pub blobs: u64,
    /// Bytes given to the sink (zero chunks not counted).
    pub blob_bytes: u64,
    /// Directories on other file systems recorded but not entered.
    pub mount_points: u64,
    /// Entries left out by [`ScanOptions::skip`].
    pub skipped: u64,
    /// Names that disappeared between the directory listing and their `stat`.
    pub vanished: u64,
}

/// Called after every entry and every chunk read; `Break` stops the scan with
/// [`Error::Interrupted`].
pub type ProgressFn = Box<dyn FnMut(&ScanStats) -> ControlFlow<()> + Send>;

/// A predicate on paths relative to the root.
pub type PathPredicate = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// How to scan.
#[derive(Default)]
pub struct ScanOptions {
    /// Enter directories on other file systems (default: record them, don't enter).
    pub cross_mounts: bool,
    /// Entries for which this returns true are left out, with everything beneath them.
    pub skip: Option<PathPredicate>,
    /// Progress reports (see [`ProgressFn`]).
    pub progress: Option<ProgressFn>,
}

/// A directory's (device, inode).
type DirId = (u64, u64);

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Item {
    /// The name, or for a directory to enter, the name followed by `/`.
    key: Vec<u8>,
    /// Set when this item enters a directory: its (device, inode) as emitted.
    dir: Option<DirId>,
}

struct Frame {
    fd: OwnedFd,
    path: Vec<u8>,
    items: BinaryHeap<Reverse<Item>>,
}

struct LinkGroup {
    first: Vec<u8>,
    digest: Option<Digest>,
    remaining: u64,
}

/// A streaming scan of one directory tree; an iterator of [`Entry`] in path order. After an
/// error it ends.
pub struct Scanner {
    opts: ScanOptions,
    root: Option<OwnedFd>,
    root_dev: u64,
    stack: Vec<Frame>,
    links: HashMap<(u64, u64), LinkGroup>,
    stats: ScanStats,
    buf: Vec<u8>,
    failed: bool,
}

fn io_err(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

fn scan_err(path: &[u8], call: &'static str, e: Errno) -> Error {
    Error::Scan { path: path.to_vec(), call, source: io_err(e) }
}

/// The `stat` fields we use, in fixed types (the raw struct's types differ by architecture).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meta {
    pub dev: u64,
    pub ino: u64,
    pub mode: u32,
    pub nlink: u64,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub rdev: u64,
    pub mtime_ns: i64,
}

impl Meta {
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_mode(self.mode)
    }
}

#[allow(clippy::unnecessary_cast)]
pub(crate) fn meta(st: &rfs::Stat) -> Meta {
    Meta {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        mode: st.st_mode as u32,
        nlink: st.st_nlink as u64,
        uid: st.st_uid as u32,
        gid: st.st_gid as u32,
        size: st.st_size.max(0) as u64,
        rdev: st.st_rdev as u64,
        mtime_ns: (st.st_mtime as i64)
            .saturating_mul(1_000_000_000)
            .saturating_add(st.st_mtime_nsec as i64),
    }
}

pub(crate) fn fstat(fd: impl AsFd, path: &[u8]) -> Result<Meta> {
    rfs::fstat(fd).map(|st| meta(&st)).map_err(|e| scan_err(path, "fstat", e))
}

impl Scanner {
    /// Scan the directory at `root` (symlinks in `root` itself are followed; nothing beneath).
    pub fn new(root: &Path, opts: ScanOptions) -> Result<Scanner> {
        let fd =
            rfs::open(root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| Error::OpenRoot { path: root.to_path_buf(), source: io_err(e) })?;
        Scanner::from_fd(fd, opts)
    }

    /// Scan the directory open as `fd` (opened for reading, not `O_PATH`).
    pub fn from_fd(fd: OwnedFd, opts: ScanOptions) -> Result<Scanner> {
        let st = fstat(&fd, b"")?;
        if st.kind() != Some(Kind::Dir) {
            return Err(scan_err(b"", "fstat", Errno::NOTDIR));
        }
        Ok(Scanner {
            opts,
            root: Some(fd),
            root_dev: st.dev,
            stack: Vec::new(),
            links: HashMap::new(),
            stats: ScanStats::default(),
            buf: Vec::new(),
            failed: false,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> &ScanStats {
        &self.stats
    }

    /// The next entry, offering content to `sink`.
    pub fn next_with(&mut self, sink: &mut dyn BlobSink) -> Option<Result<Entry>> {
        if self.failed {
            return None;
        }
        match self.step(sink) {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }

    fn progress(&mut self, path: &[u8]) -> Result<()> {
        if let Some(p) = &mut self.opts.progress {
            if p(&self.stats).is_break() {
                return Err(Error::Interrupted { path: path.to_vec() });
            }
        }
        Ok(())
    }

    fn count(&mut self, e: &Entry) {
        let s = &mut self.stats;
        s.entries += 1;
        match e.kind {
            Kind::File => {
                s.files += 1;
                s.file_bytes += e.size;
            }
            Kind::Dir => s.dirs += 1,
            Kind::Symlink => s.symlinks += 1,
            _ => s.others += 1,
        }
    }

    fn step(&mut self, sink: &mut dyn BlobSink) -> Result<Option<Entry>> {
        if let Some(fd) = self.root.take() {
            let st = fstat(&fd, b"")?;
            let xattrs = read_xattrs(XTarget::Fd(fd.as_fd()), b"")?;
            let entry = base_entry(Vec::new(), Kind::Dir, &st, xattrs);
            let items = list(&fd, b"")?;
            self.stack.push(Frame { fd, path: Vec::new(), items });
            self.count(&entry);
            self.progress(b"")?;
            return Ok(Some(entry));
        }
        loop {
            let Some(mut frame) = self.stack.pop() else { return Ok(None) };
            let Some(Reverse(item)) = frame.items.pop() else { continue };
            if let Some(id) = item.dir {
                let name = &item.key[..item.key.len() - 1];
                let path = join(&frame.path, name);
                let flags = OFlags::RDONLY
                    | OFlags::DIRECTORY
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC
                    | OFlags::NONBLOCK;
                let fd = match rfs::openat(&frame.fd, name, flags, Mode::empty()) {
                    Ok(fd) => fd,
                    Err(Errno::NOENT) => {
                        self.stats.vanished += 1;
                        self.stack.push(frame);
                        continue;
                    }
                    Err(Errno::LOOP | Errno::NOTDIR) => {
                        return Err(Error::Changed { path, what: "a directory was replaced" })
                    }
                    Err(e) => return Err(scan_err(&path, "openat", e)),
                };
                let st = fstat(&fd, &path)?;
                if (st.dev, st.ino) != id {
                    return Err(Error::Changed { path, what: "a directory was replaced" });
                }
                let items = list(&fd, &path)?;
                self.stack.push(frame);
                self.stack.push(Frame { fd, path, items });
                continue;
            }
            let name = item.key;
            let path = join(&frame.path, &name);
            if self.opts.skip.as_ref().is_some_and(|s| s(&path)) {
                self.stats.skipped += 1;
                self.stack.push(frame);
                continue;
            }
            let got = self.entry_at(frame.fd.as_fd(), &name, path, sink);
            let (entry, dir) = match got {
                Ok(Some(x)) => x,
                Ok(None) => {
                    self.stats.vanished += 1;
                    self.stack.push(frame);
                    continue;
                }
                Err(e) => {
                    self.stack.push(frame);
                    return Err(e);
                }
            };
            if let Some(id) = dir {
                if self.opts.cross_mounts || id.0 == self.root_dev {
                    let mut key = name;
                    key.push(b'/');
                    frame.items.push(Reverse(Item { key, dir: Some(id) }));
                } else {
                    self.stats.mount_points += 1;
                }
            }
            self.stack.push(frame);
            self.count(&entry);
            self.progress(&entry.path)?;
            return Ok(Some(entry));
        }
    }

    /// The entry for `name` in `dirfd`; `None` if it vanished. For a directory, also its
    /// (device, inode).
    fn entry_at(
        &mut self,
        dirfd: BorrowedFd<'_>,
        name: &[u8],
        path: Vec<u8>,
        sink: &mut dyn BlobSink,
    ) -> Result<Option<(Entry, Option<DirId>)>> {
        let st = match rfs::statat(dirfd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => meta(&st),
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(scan_err(&path, "fstatat", e)),
        };
        let Some(kind) = st.kind() else {
            return Err(Error::Scan {
                path,
                call: "fstatat",
                source: io::Error::other(format!("unknown file type {:o}", st.mode)),
            });
        };
        let replaced = |path: Vec<u8>| Error::Changed { path, what: "replaced while it was read" };
        match kind {
            Kind::File => {
                let base = OFlags::RDONLY
                    | OFlags::NOFOLLOW
                    | OFlags::NONBLOCK
                    | OFlags::NOCTTY
                    | OFlags::CLOEXEC;
                // O_NOATIME keeps the scan from touching atimes; allowed for the owner and root.
                let fd = match rfs::openat(dirfd, name, base | OFlags::NOATIME, Mode::empty()) {
                    Err(Errno::PERM) => rfs::openat(dirfd, name, base, Mode::empty()),
                    r => r,
                };
                let fd = match fd {
                    Ok(fd) => fd,
                    Err(Errno::NOENT) => return Ok(None),
                    Err(Errno::LOOP) => return Err(replaced(path)),
                    Err(e) => return Err(scan_err(&path, "openat", e)),
                };
                let st = fstat(&fd, &path)?;
                if st.kind() != Some(Kind::File) {
                    return Err(replaced(path));
                }
                let key = (st.dev, st.ino);
                let mut link = None;
                let mut digest = None;
                let mut size = st.size;
                if st.nlink > 1 {
                    if let Some(g) = self.links.get(&key) {
                        link = Some(g.first.clone());
                        digest = g.digest;
                    }
                }
                let file = File::from(fd);
                if digest.is_none() {
                    let (d, n) = self.hash_file(&file, size, &path, sink)?;
                    digest = Some(d);
                    size = n;
                }
                let xattrs = read_xattrs(XTarget::Fd(file.as_fd()), &path)?;
                let mut e = base_entry(path, kind, &st, xattrs);
                e.size = size;
                e.digest = digest;
                self.note_link(&st, &mut e, link);
                Ok(Some((e, None)))
            }
            Kind::Dir => {
                let flags = OFlags::RDONLY
                    | OFlags::DIRECTORY
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC
                    | OFlags::NONBLOCK;
                let fd = match rfs::openat(dirfd, name, flags, Mode::empty()) {
                    Ok(fd) => fd,
                    Err(Errno::NOENT) => return Ok(None),
                    Err(Errno::LOOP | Errno::NOTDIR) => return Err(replaced(path)),
                    Err(e) => return Err(scan_err(&path, "openat", e)),
                };
                let st = fstat(&fd, &path)?;
                if st.kind() != Some(Kind::Dir) {
                    return Err(replaced(path));
                }
                let xattrs = read_xattrs(XTarget::Fd(fd.as_fd()), &path)?;
                let id = (st.dev, st.ino);
                Ok(Some((base_entry(path, kind, &st, xattrs), Some(id))))
            }
            _ => {
                let target = if kind == Kind::Symlink {
                    match rfs::readlinkat(dirfd, name, Vec::new()) {
                        Ok(t) => Some(t.into_bytes()),
                        Err(Errno::NOENT) => return Ok(None),
                        Err(Errno::INVAL) => return Err(replaced(path)),
                        Err(e) => return Err(scan_err(&path, "readlinkat", e)),
                    }
                } else {
                    None
                };
                let proc = proc_path(dirfd, name);
                let xattrs = read_xattrs(XTarget::Path(&proc), &path)?;
                let mut e = base_entry(path, kind, &st, xattrs);
                if let Some(t) = target {
                    e.size = t.len() as u64;
                    e.target = Some(t);
                }
                if kind.is_device() {
                    e.rdev =
                        Some(DevNum { major: rfs::major(st.rdev), minor: rfs::minor(st.rdev) });
                }
                self.note_link(&st, &mut e, None);
                Ok(Some((e, None)))
            }
        }
    }

    /// Hard-link bookkeeping for a non-directory: the first name of an inode starts a group,
    /// later names point at it. A group is forgotten once all its names were seen.
    fn note_link(&mut self, st: &Meta, e: &mut Entry, known: Option<Vec<u8>>) {
        if st.nlink <= 1 {
            return;
        }
        let key = (st.dev, st.ino);
        match self.links.get_mut(&key) {
            Some(g) => {
                e.link = Some(known.unwrap_or_else(|| g.first.clone()));
                g.remaining = g.remaining.saturating_sub(1);
                if g.remaining == 0 {
                    self.links.remove(&key);
                }
            }
            None => {
                self.links.insert(
                    key,
                    LinkGroup {
                        first: e.path.clone(),
                        digest: e.digest,
                        remaining: st.nlink.saturating_sub(1),
                    },
                );
            }
        }
    }

    /// Hash `file` (and offer its content to `sink` if it wants it). Returns the digest and the
    /// number of bytes the content has.
    fn hash_file(
        &mut self,
        file: &File,
        size_hint: u64,
        path: &[u8],
        sink: &mut dyn BlobSink,
    ) -> Result<(Digest, u64)> {
        let read_err = |e: io::Error| Error::Scan { path: path.to_vec(), call: "pread", source: e };
        if size_hint <= INLINE_BYTES as u64 {
            // One byte more than expected tells whether the file grew while we read it.
            let want = size_hint as usize + 1;
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            buf.resize(want, 0);
            let n = read_full(file, &mut buf, 0);
            let n = match n {
                Ok(n) => n,
                Err(e) => {
                    self.buf = buf;
                    return Err(read_err(e));
                }
            };
            if n < want {
                buf.truncate(n);
                self.stats.bytes_read += n as u64;
                let d = Digest::of(&buf);
                let r = self.offer(sink, d, &buf, path);
                self.buf = buf;
                r?;
                return Ok((d, n as u64));
            }
            // The file grew while we read it: stream it.
            self.buf = buf;
        }
        let mut buf = vec![0u8; CHUNK_BYTES];
        let mut h = blake3::Hasher::new();
        let mut off = 0u64;
        loop {
            let n = read_full(file, &mut buf, off).map_err(read_err)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
            off += n as u64;
            self.stats.bytes_read += n as u64;
            self.progress(path)?;
        }
        let d = Digest::from(h.finalize());
        let size = off;
        if sink.wants(&d, size) {
            let mut h = blake3::Hasher::new();
            let mut off = 0u64;
            while off < size {
                let want = ((size - off) as usize).min(CHUNK_BYTES);
                let n = read_full(file, &mut buf[..want], off).map_err(read_err)?;
                if n == 0 {
                    break;
                }
                let c = &buf[..n];
                h.update(c);
                if c.iter().any(|&b| b != 0) {
                    sink.chunk(&d, off, c)
                        .map_err(|source| Error::Sink { path: path.to_vec(), source })?;
                    self.stats.blob_bytes += n as u64;
                }
                off += n as u64;
                self.stats.bytes_read += n as u64;
                self.progress(path)?;
            }
            if off != size || Digest::from(h.finalize()) != d {
                return Err(Error::Changed {
                    path: path.to_vec(),
                    what: "the content changed between two reads",
                });
            }
            sink.finish(&d, size).map_err(|source| Error::Sink { path: path.to_vec(), source })?;
            self.stats.blobs += 1;
        }
        Ok((d, size))
    }

    fn offer(
        &mut self,
        sink: &mut dyn BlobSink,
        d: Digest,
        data: &[u8],
        path: &[u8],
    ) -> Result<()> {
        if !sink.wants(&d, data.len() as u64) {
            return Ok(());
        }
        let err = |source| Error::Sink { path: path.to_vec(), source };
        for (i, c) in data.chunks(CHUNK_BYTES).enumerate() {
            if c.iter().any(|&b| b != 0) {
                sink.chunk(&d, (i * CHUNK_BYTES) as u64, c).map_err(err)?;
                self.stats.blob_bytes += c.len() as u64;
            }
        }
        sink.finish(&d, data.len() as u64).map_err(err)?;
        self.stats.blobs += 1;
        Ok(())
    }
}

impl Iterator for Scanner {
    type Item = Result<Entry>;
    fn next(&mut self) -> Option<Result<Entry>> {
        self.next_with(&mut NoBlobs)
    }
}

/// Read until `buf` is full or end of file.
fn read_full(f: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], off + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn base_entry(path: Vec<u8>, kind: Kind, st: &Meta, xattrs: BTreeMap<Vec<u8>, Vec<u8>>) -> Entry {
    Entry {
        path,
        kind,
        mode: st.mode & 0o7777,
        uid: st.uid,
        gid: st.gid,
        size: 0,
        digest: None,
        target: None,
        rdev: None,
        xattrs,
        link: None,
        mtime_ns: st.mtime_ns,
    }
}

/// The names in a directory, as items sorted by the heap.
fn list(fd: &OwnedFd, path: &[u8]) -> Result<BinaryHeap<Reverse<Item>>> {
    let mut dir = Dir::read_from(fd).map_err(|e| scan_err(path, "open", e))?;
    let mut v = Vec::new();
    while let Some(e) = dir.read() {
        let e = e.map_err(|e| scan_err(path, "getdents64", e))?;
        let n = e.file_name().to_bytes();
        if n == b"." || n == b".." {
            continue;
        }
        v.push(Reverse(Item { key: n.to_vec(), dir: None }));
    }
    Ok(BinaryHeap::from(v))
}

/// `/proc/self/fd/<dirfd>/<name>`: names an object by its parent's descriptor, for the calls
/// that have no `*at` form (`lgetxattr`, `lsetxattr`). The magic link resolves to the parent
/// directory itself; `name` is one component and the `l*` calls do not follow it.
pub(crate) fn proc_path(dirfd: BorrowedFd<'_>, name: &[u8]) -> Vec<u8> {
    let mut p = format!("/proc/self/fd/{}/", dirfd.as_raw_fd()).into_bytes();
    p.extend_from_slice(name);
    p
}

pub(crate) enum XTarget<'a> {
    Fd(BorrowedFd<'a>),
    /// A path whose last component is not followed.
    Path(&'a [u8]),
}

/// Every extended attribute of the object, by name.
pub(crate) fn read_xattrs(t: XTarget<'_>, path: &[u8]) -> Result<BTreeMap<Vec<u8>, Vec<u8>>> {
    let xerr = |call, name: &[u8], e: Errno| Error::Xattr {
        path: path.to_vec(),
        call,
        name: name.to_vec(),
        source: io_err(e),
    };
    let mut out = BTreeMap::new();
    let mut names = vec![0u8; 1024];
    let n = loop {
        let r = match &t {
            XTarget::Fd(fd) => rfs::flistxattr(fd, &mut names[..]),
            XTarget::Path(p) => rfs::llistxattr(*p, &mut names[..]),
        };
        match r {
            Ok(n) => break n,
            Err(Errno::RANGE) => {
                let need = match &t {
                    XTarget::Fd(fd) => rfs::flistxattr_query(fd),
                    XTarget::Path(p) => rfs::llistxattr_query(*p),
                }
                .map_err(|e| xerr("listxattr", b"", e))?;
                names.resize(need.max(names.len() * 2), 0);
            }
            Err(Errno::NOTSUP) => return Ok(out),
            Err(e) => return Err(xerr("listxattr", b"", e)),
        }
    };
    let mut value = vec![0u8; 256];
    for name in names[..n].split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let len = loop {
            let r = match &t {
                XTarget::Fd(fd) => rfs::fgetxattr(fd, name, &mut value[..]),
                XTarget::Path(p) => rfs::lgetxattr(*p, name, &mut value[..]),
            };
            match r {
                Ok(n) => break Some(n),
                Err(Errno::NODATA) => break None,
                Err(Errno::RANGE) => {
                    let need = match &t {
                        XTarget::Fd(fd) => rfs::fgetxattr_query(fd, name),
                        XTarget::Path(p) => rfs::lgetxattr_query(*p, name),
                    }
                    .map_err(|e| xerr("getxattr", name, e))?;
                    value.resize(need.max(value.len() * 2), 0);
                }
                Err(e) => return Err(xerr("getxattr", name, e)),
            }
        };
        if let Some(len) = len {
            out.insert(name.to_vec(), value[..len].to_vec());
        }
    }
    Ok(out)
}
