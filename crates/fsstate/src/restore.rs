//! [`restore`]: recreate a tree's entries inside an empty directory, with content from a
//! [`ContentSource`] that delivers chunks keyed by digest in whatever order it stores them.
//!
//! Everything is created beneath the destination descriptor and nowhere else:
//!
//! * every path is checked ([`crate::check_path`]: no absolute paths, `.`, `..`, empty
//!   components or NUL) and entries must come in strictly increasing path order, the root
//!   first — in every pass, so a source that changes between passes gains nothing;
//! * parent directories are opened with `openat2(dest, parent, RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)` (component by component
//!   with `O_NOFOLLOW` where `openat2` is missing), and the last component is handled with
//!   `*at` calls on that descriptor that do not follow it (`O_CREAT|O_EXCL|O_NOFOLLOW`,
//!   `mkdirat`, `symlinkat`, `mknodat`, `linkat` without `AT_SYMLINK_FOLLOW`,
//!   `AT_SYMLINK_NOFOLLOW`). A symlink the tree contains is created, never followed.
//!
//! Passes over the entries ([`EntrySource`] gives a fresh stream each time):
//!
//! 0. **check**: every entry, before anything is created (a bad path or order leaves the
//!    destination empty);
//! 1. **structure**: directories (mode 0700 for now), regular files (0600, size set with
//!    `ftruncate`, so unwritten ranges are holes), symlinks, fifos, sockets, devices (`mknod`
//!    with [`RestoreOptions::special`], else an empty regular file in their place; without the
//!    privilege they are reported in [`RestoreStats::not_restored`]), hard links;
//! 2. **content**: the source's chunks are written into the first file of each digest;
//! 3. **copies** (only when several files share a digest without being hard links): the other
//!    files are copied from the first;
//! 4. **verify** ([`RestoreOptions::verify`]): each distinct content is read back and hashed;
//! 5. **metadata**: owner, xattrs, mode, mtime, in that order (`chown` clears setuid and
//!    capabilities); directories after everything beneath them, so modes such as 0555 or 0000
//!    and directory mtimes come out right. Without [`RestoreOptions::special`], setuid and
//!    setgid bits of non-directories and `security.*` xattrs (file capabilities, security
//!    labels) are left out.
//!
//! **What is withheld by default.** A tree's description is data from elsewhere (a trace, a
//! manifest): restoring it as it is would let that data create device nodes (a raw disk or
//! `/dev/mem` under another name), setuid/setgid programs and file capabilities. Unless
//! [`RestoreOptions::special`] is set, a device node becomes an empty regular file with the
//! device's permission bits (less setuid/setgid), a setuid/setgid file keeps its content and
//! loses those bits, and `security.*` xattrs are not set; each such entry is listed in
//! [`RestoreStats::withheld`].
//!
//! The root entry (empty path) describes `dest` itself: its owner, xattrs, mode and mtime are
//! applied to `dest`.
//!
//! Memory: one record (digest, path, size) per distinct content, plus one entry per directory
//! level (pass 5). Content is streamed. Time: the entries are read up to four times (passes 0,
//! 1, 3, 5) and, with `verify`, every distinct content is read back in full (its logical size,
//! holes included). If restore fails, the destination holds a partial tree.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileExt;

use rustix::fs::{self as rfs, AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags, XattrFlags};
use rustix::io::Errno;

use crate::entry::{is_beneath, path_cmp, split_parent, Digest, Entry, Kind, CHUNK_BYTES};
use crate::error::{Error, Result};
use crate::manifest::{Manifest, ManifestFile};
use crate::scan::{fstat, proc_path};

/// Entries that can be read more than once, each time from the start, in path order.
pub trait EntrySource {
    /// A fresh pass over the entries.
    fn entries(&self) -> Result<Box<dyn Iterator<Item = Result<Entry>> + '_>>;
}

impl EntrySource for [Entry] {
    fn entries(&self) -> Result<Box<dyn Iterator<Item = Result<Entry>> + '_>> {
        Ok(Box::new(self.iter().cloned().map(Ok)))
    }
}

impl EntrySource for Vec<Entry> {
    fn entries(&self) -> Result<Box<dyn Iterator<Item = Result<Entry>> + '_>> {
        self.as_slice().entries()
    }
}

impl EntrySource for Manifest {
    fn entries(&self) -> Result<Box<dyn Iterator<Item = Result<Entry>> + '_>> {
        self.entries.entries()
    }
}

impl EntrySource for ManifestFile {
    fn entries(&self) -> Result<Box<dyn Iterator<Item = Result<Entry>> + '_>> {
        Ok(Box::new(self.open()?))
    }
}

/// The callback a [`ContentSource`] feeds: `(digest, offset, data)`.
pub type ChunkFn<'a> = dyn FnMut(&Digest, u64, &[u8]) -> Result<()> + 'a;

/// Content chunks keyed by digest.
pub trait ContentSource {
    /// Call `f` with every chunk the source holds, in the source's own order: `(digest,
    /// offset, data)`, at most [`CHUNK_BYTES`] each; ranges without a chunk are zeros. Errors
    /// returned by `f` must be passed back unchanged; the source's own as [`Error::Source`].
    fn for_each_chunk(&mut self, f: &mut ChunkFn<'_>) -> Result<()>;
}

/// A source without content: enough for trees whose files are all empty.
pub struct NoContent;

impl ContentSource for NoContent {
    fn for_each_chunk(&mut self, _: &mut ChunkFn<'_>) -> Result<()> {
        Ok(())
    }
}

/// How to restore.
#[derive(Clone, Debug)]
pub struct RestoreOptions {
    /// Read every distinct content back and check its digest (default true): a source that
    /// lacks a chunk is an error instead of a file with zeros in it.
    pub verify: bool,
    /// Restore device nodes, setuid/setgid bits of non-directories and `security.*` xattrs as
    /// described (default false: placeholders and plain modes instead, each listed in
    /// [`RestoreStats::withheld`]; see the module documentation).
    pub special: bool,
}

impl Default for RestoreOptions {
    fn default() -> Self {
        RestoreOptions { verify: true, special: false }
    }
}

/// Something restored in a safer form than described, because [`RestoreOptions::special`]
/// was not set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Withheld {
    /// The entry's path, relative to the destination.
    pub path: Vec<u8>,
    /// What was left out and what is there instead, e.g. `character device 1:3 (an empty
    /// regular file in its place)`.
    pub what: String,
}

/// Something the restore could not recreate (for lack of privilege or file-system support).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotRestored {
    /// The entry's path, relative to the destination.
    pub path: Vec<u8>,
    /// `device node`, `owner`, `xattr user.foo`, ...
    pub what: String,
    /// The errno of the failed call.
    pub errno: i32,
}

/// At most this many [`NotRestored`] records are kept ([`RestoreStats::not_restored_count`]
/// counts them all).
pub const MAX_NOT_RESTORED: usize = 1000;

/// What a restore did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreStats {
    /// Entries read (the root included).
    pub entries: u64,
    /// Directories: those made, and the root (the destination itself).
    pub dirs: u64,
    /// Regular files created, device placeholders (without [`RestoreOptions::special`])
    /// included; extra hard links not.
    pub files: u64,
    /// Symlinks created.
    pub symlinks: u64,
    /// Fifos, sockets and devices created.
    pub specials: u64,
    /// Extra names of hard-linked objects.
    pub hardlinks: u64,
    /// Distinct contents (non-empty).
    pub contents: u64,
    /// Chunks the source delivered.
    pub chunks: u64,
    /// Delivered chunks of a digest no file to restore has (skipped).
    pub unused_chunks: u64,
    /// Bytes written from chunks.
    pub bytes: u64,
    /// Files filled by copying another file with the same content.
    pub copies: u64,
    /// Contents read back and checked.
    pub verified: u64,
    /// What could not be recreated for lack of privilege or file-system support (device
    /// nodes, owners, xattrs), at most [`MAX_NOT_RESTORED`] records.
    pub not_restored: Vec<NotRestored>,
    /// How many things could not be recreated, every one counted (also those past
    /// [`MAX_NOT_RESTORED`]).
    pub not_restored_count: u64,
    /// Device nodes replaced by empty regular files, setuid/setgid bits and `security.*`
    /// xattrs left out (at most [`MAX_NOT_RESTORED`] kept; `withheld_count` counts them all).
    pub withheld: Vec<Withheld>,
    /// How many things were withheld, every one counted.
    pub withheld_count: u64,
}

impl RestoreStats {
    fn report(&mut self, path: &[u8], what: String, e: Errno) {
        self.not_restored_count += 1;
        if self.not_restored.len() < MAX_NOT_RESTORED {
            self.not_restored.push(NotRestored {
                path: path.to_vec(),
                what,
                errno: e.raw_os_error(),
            });
        }
    }
    fn withhold(&mut self, path: &[u8], what: String) {
        self.withheld_count += 1;
        if self.withheld.len() < MAX_NOT_RESTORED {
            self.withheld.push(Withheld { path: path.to_vec(), what });
        }
    }
}

impl std::fmt::Display for RestoreStats {
    /// One readable sentence: what was created, and what was not.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        write!(
            f,
            "{} ({}, {}, {}, {}, {}); {} of content",
            n(self.entries, "entry", "entries"),
            n(self.dirs, "directory", "directories"),
            n(self.files, "file", "files"),
            n(self.symlinks, "symlink", "symlinks"),
            n(self.specials, "fifo, socket or device", "fifos, sockets or devices"),
            n(self.hardlinks, "extra hard link", "extra hard links"),
            n(self.bytes, "byte", "bytes"),
        )?;
        if self.withheld_count > 0 {
            write!(f, "; {} withheld for safety", n(self.withheld_count, "entry", "entries"))?;
        }
        if self.not_restored_count > 0 {
            write!(f, "; {} not restored", n(self.not_restored_count, "attribute", "attributes"))?;
        }
        Ok(())
    }
}

fn io_err(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

fn rerr(path: &[u8], call: &'static str, e: Errno) -> Error {
    Error::Restore { path: path.to_vec(), call, source: io_err(e) }
}

/// Open `rel` (a checked relative path, "" for `root` itself) beneath `root` without following
/// any symlink and without leaving `root`.
pub(crate) fn open_beneath(root: BorrowedFd<'_>, rel: &[u8], flags: OFlags) -> Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let rel_or_dot: &[u8] = if rel.is_empty() { b"." } else { rel };
    let how = ResolveFlags::BENEATH
        | ResolveFlags::NO_SYMLINKS
        | ResolveFlags::NO_MAGICLINKS
        | ResolveFlags::NO_XDEV;
    for _ in 0..16 {
        match rfs::openat2(root, rel_or_dot, flags, Mode::empty(), how) {
            Ok(fd) => return Ok(fd),
            // A concurrent rename somewhere in the file system: try again.
            Err(Errno::AGAIN) => continue,
            // No openat2 (Linux < 5.6, some sandboxes), or a path longer than PATH_MAX.
            Err(Errno::NOSYS | Errno::NAMETOOLONG | Errno::PERM) => break,
            Err(e) => return Err(rerr(rel, "openat2", e)),
        }
    }
    // One component at a time; every component is a plain name (checked), opened without
    // following symlinks.
    let dir = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut cur = rfs::openat(root, ".", dir, Mode::empty()).map_err(|e| rerr(b"", "openat", e))?;
    let comps: Vec<&[u8]> = rel.split(|&b| b == b'/').filter(|c| !c.is_empty()).collect();
    for (i, c) in comps.iter().enumerate() {
        let f = if i + 1 == comps.len() { flags } else { dir };
        cur = rfs::openat(&cur, *c, f, Mode::empty()).map_err(|e| rerr(rel, "openat", e))?;
    }
    Ok(cur)
}

/// The destination and a one-entry cache of the last parent directory opened.
struct Dirs {
    root: OwnedFd,
    cached: Option<(Vec<u8>, OwnedFd)>,
}

impl Dirs {
    fn get(&mut self, parent: &[u8]) -> Result<BorrowedFd<'_>> {
        if parent.is_empty() {
            return Ok(self.root.as_fd());
        }
        if self.cached.as_ref().is_none_or(|(p, _)| p != parent) {
            let fd = open_beneath(self.root.as_fd(), parent, OFlags::RDONLY | OFlags::DIRECTORY)?;
            self.cached = Some((parent.to_vec(), fd));
        }
        Ok(self.cached.as_ref().map(|(_, fd)| fd.as_fd()).unwrap_or(self.root.as_fd()))
    }
}

/// Checks every entry of one pass: consistent fields, safe path, strictly increasing order,
/// the root first.
struct Checked<'a> {
    it: Box<dyn Iterator<Item = Result<Entry>> + 'a>,
    prev: Option<Vec<u8>>,
}

impl Iterator for Checked<'_> {
    type Item = Result<Entry>;
    fn next(&mut self) -> Option<Result<Entry>> {
        let e = match self.it.next()? {
            Ok(e) => e,
            Err(e) => return Some(Err(e)),
        };
        if let Err(problem) = e.check() {
            return Some(Err(match problem {
                crate::EntryProblem::Path(problem) => Error::BadPath { path: e.path, problem },
                problem => Error::BadEntry { path: e.path, problem },
            }));
        }
        match &self.prev {
            None if !e.path.is_empty() => return Some(Err(Error::NoRoot { path: e.path })),
            Some(p) if path_cmp(p, &e.path).is_ge() => {
                return Some(Err(Error::RestoreOrder { path: e.path, previous: p.clone() }))
            }
            _ => {}
        }
        self.prev = Some(e.path.clone());
        Some(Ok(e))
    }
}

fn checked<S: EntrySource + ?Sized>(src: &S) -> Result<Checked<'_>> {
    Ok(Checked { it: src.entries()?, prev: None })
}

struct First {
    path: Vec<u8>,
    size: u64,
}

/// Recreate the tree `entries` describe inside `dest`, an open, **empty** directory, taking
/// file contents from `content`. See the module documentation for the guarantees.
pub fn restore<S: EntrySource + ?Sized>(
    entries: &S,
    content: &mut dyn ContentSource,
    dest: BorrowedFd<'_>,
    opts: &RestoreOptions,
) -> Result<RestoreStats> {
    let dir = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let root = rfs::openat(dest, ".", dir, Mode::empty()).map_err(|e| rerr(b"", "openat", e))?;
    let mut listing = Dir::read_from(&root).map_err(|e| rerr(b"", "open", e))?;
    while let Some(d) = listing.read() {
        let d = d.map_err(|e| rerr(b"", "getdents64", e))?;
        let n = d.file_name().to_bytes();
        if n != b"." && n != b".." {
            return Err(Error::DestinationNotEmpty { first: n.to_vec() });
        }
    }
    let mut r = Restorer {
        dirs: Dirs { root, cached: None },
        firsts: HashMap::new(),
        dups: 0,
        missing: HashSet::new(),
        placeholders: HashSet::new(),
        special: opts.special,
        stats: RestoreStats::default(),
    };
    // Pass 0: every entry is checked before anything is created, so a manifest with a bad path
    // or order leaves the destination empty.
    for e in checked(entries)? {
        e?;
    }
    r.structure(entries, opts)?;
    r.content(content)?;
    if r.dups > 0 {
        r.copies(entries)?;
    }
    if opts.verify {
        r.verify()?;
    }
    r.metadata(entries)?;
    Ok(r.stats)
}

struct Restorer {
    dirs: Dirs,
    /// The first file of each distinct non-empty content.
    firsts: HashMap<Digest, First>,
    /// Files whose content is a copy of an earlier file's.
    dups: u64,
    /// Entries that could not be created (devices without privilege, links to them).
    missing: HashSet<Vec<u8>>,
    /// Device nodes restored as empty regular files (without `special`).
    placeholders: HashSet<Vec<u8>>,
    special: bool,
    stats: RestoreStats,
}

impl Restorer {
    fn structure<S: EntrySource + ?Sized>(
        &mut self,
        entries: &S,
        opts: &RestoreOptions,
    ) -> Result<()> {
        for e in checked(entries)? {
            let e = e?;
            self.stats.entries += 1;
            if e.path.is_empty() {
                self.stats.dirs += 1;
                continue;
            }
            let (parent, name) = split_parent(&e.path);
            if let Some(l) = &e.link {
                if self.missing.contains(l.as_slice()) {
                    self.missing.insert(e.path.clone());
                    continue;
                }
                let (lp, ln) = split_parent(l);
                let lfd =
                    open_beneath(self.dirs.root.as_fd(), lp, OFlags::RDONLY | OFlags::DIRECTORY)?;
                let pfd = self.dirs.get(parent)?;
                // No AT_SYMLINK_FOLLOW: a symlink gets a second name, it is not followed.
                rfs::linkat(&lfd, ln, pfd, name, AtFlags::empty())
                    .map_err(|er| rerr(&e.path, "linkat", er))?;
                self.stats.hardlinks += 1;
                continue;
            }
            let pfd = self.dirs.get(parent)?;
            let private = Mode::from_raw_mode(0o600);
            match e.kind {
                Kind::Dir => {
                    rfs::mkdirat(pfd, name, Mode::from_raw_mode(0o700))
                        .map_err(|er| rerr(&e.path, "mkdirat", er))?;
                    self.stats.dirs += 1;
                }
                Kind::File => {
                    let flags = OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC;
                    let fd = rfs::openat(pfd, name, flags, private)
                        .map_err(|er| rerr(&e.path, "openat", er))?;
                    if e.size > 0 {
                        rfs::ftruncate(&fd, e.size).map_err(|er| rerr(&e.path, "ftruncate", er))?;
                    }
                    self.stats.files += 1;
                    let digest = e.digest.unwrap_or(Digest([0; 32]));
                    if e.size == 0 {
                        let empty = Digest::of(b"");
                        if opts.verify && digest != empty {
                            return Err(Error::ContentMismatch {
                                path: e.path,
                                expected: digest,
                                found: empty,
                            });
                        }
                    } else {
                        match self.firsts.entry(digest) {
                            std::collections::hash_map::Entry::Occupied(_) => self.dups += 1,
                            std::collections::hash_map::Entry::Vacant(v) => {
                                v.insert(First { path: e.path, size: e.size });
                                self.stats.contents += 1;
                            }
                        }
                    }
                }
                Kind::Symlink => {
                    let target = e.target.as_deref().unwrap_or_default();
                    rfs::symlinkat(target, pfd, name)
                        .map_err(|er| rerr(&e.path, "symlinkat", er))?;
                    self.stats.symlinks += 1;
                }
                Kind::CharDevice | Kind::BlockDevice if !opts.special => {
                    let flags = OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC;
                    rfs::openat(pfd, name, flags, private)
                        .map_err(|er| rerr(&e.path, "openat", er))?;
                    let dev = e.rdev.map_or("?:?".into(), |d| format!("{}:{}", d.major, d.minor));
                    let kind = if e.kind == Kind::CharDevice { "character" } else { "block" };
                    self.stats.withhold(
                        &e.path,
                        format!("{kind} device {dev} (an empty regular file in its place)"),
                    );
                    self.placeholders.insert(e.path);
                    self.stats.files += 1;
                }
                Kind::Fifo | Kind::Socket | Kind::CharDevice | Kind::BlockDevice => {
                    let (ft, dev) = match e.kind {
                        Kind::Fifo => (FileType::Fifo, 0),
                        Kind::Socket => (FileType::Socket, 0),
                        Kind::CharDevice => (FileType::CharacterDevice, rdev(&e)),
                        _ => (FileType::BlockDevice, rdev(&e)),
                    };
                    match rfs::mknodat(pfd, name, ft, private, dev) {
                        Ok(()) => self.stats.specials += 1,
                        Err(er @ (Errno::PERM | Errno::ACCESS)) if e.kind.is_device() => {
                            self.stats.report(&e.path, "device node".into(), er);
                            self.missing.insert(e.path);
                        }
                        Err(er) => return Err(rerr(&e.path, "mknodat", er)),
                    }
                }
            }
        }
        Ok(())
    }

    fn content(&mut self, content: &mut dyn ContentSource) -> Result<()> {
        let firsts = &self.firsts;
        let root = self.dirs.root.as_fd();
        let stats = &mut self.stats;
        let mut open: Option<(Digest, File)> = None;
        content.for_each_chunk(&mut |d: &Digest, off: u64, data: &[u8]| {
            stats.chunks += 1;
            let Some(first) = firsts.get(d) else {
                stats.unused_chunks += 1;
                return Ok(());
            };
            let end = off.checked_add(data.len() as u64);
            if data.len() > CHUNK_BYTES || end.is_none_or(|end| end > first.size) {
                return Err(Error::ChunkOutOfRange {
                    digest: *d,
                    offset: off,
                    len: data.len(),
                    size: first.size,
                    path: first.path.clone(),
                });
            }
            if open.as_ref().is_none_or(|(od, _)| od != d) {
                let fd = open_beneath(root, &first.path, OFlags::WRONLY)?;
                open = Some((*d, File::from(fd)));
            }
            if let Some((_, f)) = &open {
                f.write_all_at(data, off).map_err(|source| Error::Restore {
                    path: first.path.clone(),
                    call: "pwrite",
                    source,
                })?;
            }
            stats.bytes += data.len() as u64;
            Ok(())
        })
    }

    fn copies<S: EntrySource + ?Sized>(&mut self, entries: &S) -> Result<()> {
        let root = self.dirs.root.as_fd();
        let mut buf = vec![0u8; CHUNK_BYTES];
        for e in checked(entries)? {
            let e = e?;
            if e.kind != Kind::File || e.link.is_some() || e.size == 0 {
                continue;
            }
            let Some(first) = e.digest.and_then(|d| self.firsts.get(&d)) else {
                return Err(Error::BadEntry {
                    path: e.path,
                    problem: crate::EntryProblem::Field { field: "blake3", kind: Kind::File },
                });
            };
            if first.path == e.path {
                continue;
            }
            let src = File::from(open_beneath(root, &first.path, OFlags::RDONLY)?);
            let dst = File::from(open_beneath(root, &e.path, OFlags::WRONLY)?);
            let mut off = 0u64;
            while off < e.size {
                let want = ((e.size - off) as usize).min(CHUNK_BYTES);
                let n = read_full(&src, &mut buf[..want], off).map_err(|source| {
                    Error::Restore { path: first.path.clone(), call: "pread", source }
                })?;
                if n == 0 {
                    break;
                }
                if buf[..n].iter().any(|&b| b != 0) {
                    dst.write_all_at(&buf[..n], off).map_err(|source| Error::Restore {
                        path: e.path.clone(),
                        call: "pwrite",
                        source,
                    })?;
                }
                off += n as u64;
            }
            self.stats.copies += 1;
        }
        Ok(())
    }

    fn verify(&mut self) -> Result<()> {
        let root = self.dirs.root.as_fd();
        let mut buf = vec![0u8; CHUNK_BYTES];
        for (d, first) in &self.firsts {
            let f = File::from(open_beneath(root, &first.path, OFlags::RDONLY)?);
            let mut h = blake3::Hasher::new();
            let mut off = 0u64;
            loop {
                let n = read_full(&f, &mut buf, off).map_err(|source| Error::Restore {
                    path: first.path.clone(),
                    call: "pread",
                    source,
                })?;
                if n == 0 {
                    break;
                }
                h.update(&buf[..n]);
                off += n as u64;
            }
            let found = Digest::from(h.finalize());
            if found != *d {
                return Err(Error::ContentMismatch {
                    path: first.path.clone(),
                    expected: *d,
                    found,
                });
            }
            self.stats.verified += 1;
        }
        Ok(())
    }

    fn metadata<S: EntrySource + ?Sized>(&mut self, entries: &S) -> Result<()> {
        // Directories wait until everything beneath them is done.
        let mut pending: Vec<Entry> = Vec::new();
        for e in checked(entries)? {
            let e = e?;
            while pending.last().is_some_and(|d| !is_beneath(&e.path, &d.path)) {
                if let Some(d) = pending.pop() {
                    self.apply(&d)?;
                }
            }
            if e.kind == Kind::Dir {
                pending.push(e);
            } else if e.link.is_none() && !self.missing.contains(&e.path) {
                self.apply(&e)?;
            }
        }
        while let Some(d) = pending.pop() {
            self.apply(&d)?;
        }
        Ok(())
    }

    /// Owner, xattrs, mode, mtime of one object.
    fn apply(&mut self, e: &Entry) -> Result<()> {
        let times = rfs::Timestamps {
            last_access: rfs::Timespec { tv_sec: 0, tv_nsec: rfs::UTIME_OMIT },
            last_modification: rfs::Timespec {
                tv_sec: e.mtime_ns.div_euclid(1_000_000_000),
                tv_nsec: e.mtime_ns.rem_euclid(1_000_000_000),
            },
        };
        let uid = rfs::Uid::from_raw_unchecked(e.uid);
        let gid = rfs::Gid::from_raw_unchecked(e.gid);
        let placeholder = self.placeholders.contains(&e.path);
        let kind = if placeholder { Kind::File } else { e.kind };
        let mut mode = e.mode;
        if !self.special && kind != Kind::Dir && mode & 0o6000 != 0 {
            mode &= !0o6000;
            if !placeholder {
                let bits = match e.mode & 0o6000 {
                    0o4000 => "setuid bit",
                    0o2000 => "setgid bit",
                    _ => "setuid and setgid bits",
                };
                self.stats.withhold(
                    &e.path,
                    format!("{bits} (mode {:04o} restored as {mode:04o})", e.mode & 0o7777),
                );
            }
        }
        let mode = Mode::from_raw_mode(mode);
        let special = self.special;
        let xattrs: Vec<(&Vec<u8>, &Vec<u8>)> = e
            .xattrs
            .iter()
            .filter(|(n, _)| {
                let keep = special || !n.starts_with(b"security.");
                if !keep {
                    let what = format!("xattr {} (not set)", crate::escape_bytes(n));
                    self.stats.withhold(&e.path, what);
                }
                keep
            })
            .collect();
        match kind {
            Kind::File | Kind::Dir => {
                let fd = if e.path.is_empty() {
                    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
                    rfs::openat(&self.dirs.root, ".", flags, Mode::empty())
                        .map_err(|er| rerr(b"", "openat", er))?
                } else {
                    let (parent, name) = split_parent(&e.path);
                    let pfd = self.dirs.get(parent)?;
                    let mut flags = OFlags::RDONLY
                        | OFlags::NOFOLLOW
                        | OFlags::NONBLOCK
                        | OFlags::NOCTTY
                        | OFlags::CLOEXEC;
                    if kind == Kind::Dir {
                        flags |= OFlags::DIRECTORY;
                    }
                    rfs::openat(pfd, name, flags, Mode::empty())
                        .map_err(|er| rerr(&e.path, "openat", er))?
                };
                if fstat(&fd, &e.path)?.kind() != Some(kind) {
                    return Err(Error::Replaced { path: e.path.clone() });
                }
                if let Err(er) = rfs::fchown(&fd, Some(uid), Some(gid)) {
                    self.owner_failed(e, er)?;
                }
                for (n, v) in xattrs {
                    if let Err(er) = rfs::fsetxattr(&fd, n.as_slice(), v, XattrFlags::empty()) {
                        self.xattr_failed(e, n, er)?;
                    }
                }
                rfs::fchmod(&fd, mode).map_err(|er| rerr(&e.path, "fchmod", er))?;
                rfs::futimens(&fd, &times).map_err(|er| rerr(&e.path, "futimens", er))?;
            }
            _ => {
                let (parent, name) = split_parent(&e.path);
                let pfd = self.dirs.get(parent)?;
                let r = rfs::chownat(pfd, name, Some(uid), Some(gid), AtFlags::SYMLINK_NOFOLLOW);
                let proc = proc_path(pfd, name);
                let mut xattr_errs = Vec::new();
                for (n, v) in xattrs {
                    if let Err(er) =
                        rfs::lsetxattr(proc.as_slice(), n.as_slice(), v, XattrFlags::empty())
                    {
                        xattr_errs.push((n.clone(), er));
                    }
                }
                let mut chmod = Ok(());
                if e.kind != Kind::Symlink {
                    // No fchmodat(AT_SYMLINK_NOFOLLOW) before Linux 6.6: chmod the object
                    // through its O_PATH descriptor after checking it is what we created.
                    let o = rfs::openat(
                        pfd,
                        name,
                        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|er| rerr(&e.path, "openat", er))?;
                    if fstat(&o, &e.path)?.kind() != Some(e.kind) {
                        return Err(Error::Replaced { path: e.path.clone() });
                    }
                    let fdpath = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&o));
                    chmod = rfs::chmod(fdpath.as_str(), mode);
                }
                let ut = rfs::utimensat(pfd, name, &times, AtFlags::SYMLINK_NOFOLLOW);
                if let Err(er) = r {
                    self.owner_failed(e, er)?;
                }
                for (n, er) in xattr_errs {
                    self.xattr_failed(e, &n, er)?;
                }
                chmod.map_err(|er| rerr(&e.path, "chmod", er))?;
                ut.map_err(|er| rerr(&e.path, "utimensat", er))?;
            }
        }
        Ok(())
    }

    fn owner_failed(&mut self, e: &Entry, er: Errno) -> Result<()> {
        match er {
            Errno::PERM | Errno::INVAL => {
                self.stats.report(&e.path, format!("owner {}:{}", e.uid, e.gid), er);
                Ok(())
            }
            er => Err(rerr(&e.path, "fchown", er)),
        }
    }

    fn xattr_failed(&mut self, e: &Entry, name: &[u8], er: Errno) -> Result<()> {
        match er {
            Errno::PERM
            | Errno::ACCESS
            | Errno::NOTSUP
            | Errno::INVAL
            | Errno::NOSPC
            | Errno::TOOBIG => {
                let what = format!("xattr {}", crate::escape_bytes(name));
                self.stats.report(&e.path, what, er);
                Ok(())
            }
            er => Err(Error::Xattr {
                path: e.path.clone(),
                call: "setxattr",
                name: name.to_vec(),
                source: io_err(er),
            }),
        }
    }
}

fn rdev(e: &Entry) -> u64 {
    e.rdev.map_or(0, |d| rfs::makedev(d.major, d.minor))
}

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
