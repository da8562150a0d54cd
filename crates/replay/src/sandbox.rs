//! The replay root: every path a trace names is resolved beneath it, never outside.
//!
//! All resolution goes through `openat2(2)` on the root directory's fd with
//! `RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS`: absolute paths start at the root, `..` stops at
//! the root, symlinks (including ones the trace itself planted, with absolute targets) are
//! resolved as if the root were `/`, and `/proc/self/...`-style magic links are refused. Calls
//! that act on a path's last component without following it (`unlink`, `mkdir`, `rename`, ...)
//! resolve the parent that way and then use the `*at` form on a plain name; calls that follow
//! the last component resolve it to an `O_PATH` descriptor and act on that descriptor
//! (`AT_EMPTY_PATH`), so no path string is ever handed to the kernel relative to the
//! replayer's own root or cwd.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Flags `openat2` accepts (it rejects unknown bits where `open` ignores them).
pub(crate) const VALID_OPEN_FLAGS: i32 = libc::O_ACCMODE
    | libc::O_CREAT
    | libc::O_EXCL
    | libc::O_NOCTTY
    | libc::O_TRUNC
    | libc::O_APPEND
    | libc::O_NONBLOCK
    | libc::O_DSYNC
    | libc::O_ASYNC
    | libc::O_DIRECT
    | libc::O_LARGEFILE
    | libc::O_DIRECTORY
    | libc::O_NOFOLLOW
    | libc::O_NOATIME
    | libc::O_CLOEXEC
    | libc::O_PATH
    | libc::O_SYNC
    | libc::O_TMPFILE;

/// True when open flags create a file (`O_CREAT`, or all of `O_TMPFILE`): only then does the
/// mode count.
pub(crate) fn creates(flags: i32) -> bool {
    flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE
}

/// An open replay root.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    /// The root's canonical path, as `/proc/self/fd` links show it.
    real: Vec<u8>,
}

/// The errno of the last failed libc call.
pub fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// A C string from path bytes; an embedded NUL is `EINVAL` (the kernel would stop there, but a
/// trace with one is corrupt or hostile).
pub fn cstr(b: &[u8]) -> Result<CString, i32> {
    CString::new(b).map_err(|_| libc::EINVAL)
}

impl Root {
    /// Open `dir` as a replay root.
    pub fn new(dir: &Path) -> io::Result<Root> {
        let real = dir.canonicalize()?;
        let c = CString::new(real.as_os_str().as_bytes())
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: `c` is a valid NUL-terminated path; the result is checked.
        let fd =
            unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Root { fd, real: real.as_os_str().as_bytes().to_vec() })
    }

    /// The root's canonical path.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(std::ffi::OsStr::from_bytes(&self.real))
    }

    /// The root directory's descriptor (an `O_PATH` fd).
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// `openat2(root, path, flags, mode)` resolved in the root. `path` is a logical path
    /// (absolute or relative to the root: both start at the root). Always adds `O_CLOEXEC`
    /// (the replayer never execs; the recorded flag is tracked by the fd table). Errors are
    /// errno values, as the replayed call would report them.
    ///
    /// A path of `PATH_MAX` bytes or more, which the kernel takes from no program (a
    /// file-system trace names a deep tree's files by their whole path from the mount; a
    /// descriptor of a deep directory is known by the path it was opened by), is resolved in
    /// steps of whole components, each shorter than `PATH_MAX`: the first in the root, every
    /// further one beneath the directory the last step reached (`RESOLVE_BENEATH`: a `..` or
    /// an absolute symlink that would climb out of it fails with `EXDEV`).
    pub fn open(&self, path: &[u8], flags: i32, mode: u32) -> Result<OwnedFd, i32> {
        if path.is_empty() {
            return Err(libc::ENOENT);
        }
        let in_root = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS;
        if path.len() < PATH_MAX {
            return openat2(self.fd.as_raw_fd(), path, flags, mode, in_root);
        }
        let (dirs, last) = steps(path);
        let mut dir: Option<OwnedFd> = None;
        for step in dirs {
            let (at, resolve) = match &dir {
                None => (self.fd.as_raw_fd(), in_root),
                Some(d) => (d.as_raw_fd(), libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS),
            };
            dir = Some(openat2(at, step, libc::O_PATH | libc::O_DIRECTORY, 0, resolve)?);
        }
        let (at, resolve) = match &dir {
            None => (self.fd.as_raw_fd(), in_root),
            Some(d) => (d.as_raw_fd(), libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS),
        };
        openat2(at, last, flags, mode, resolve)
    }

    /// An `O_PATH` descriptor for `path`, following a final symlink when `follow`.
    pub fn locate(&self, path: &[u8], follow: bool) -> Result<OwnedFd, i32> {
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        self.open(path, libc::O_PATH | nofollow, 0)
    }

    /// The parent directory of `path` (an `O_PATH` directory fd) and the last component, for
    /// calls that act on a name without following it. Trailing slashes are dropped; the root
    /// itself has the parent root and the name `.`.
    pub fn parent(&self, path: &[u8]) -> Result<(OwnedFd, CString), i32> {
        if path.is_empty() {
            return Err(libc::ENOENT);
        }
        let mut p = path;
        while p.len() > 1 && p.ends_with(b"/") {
            p = &p[..p.len() - 1];
        }
        let (dir, name): (&[u8], &[u8]) = match p.iter().rposition(|&c| c == b'/') {
            None => (b".", p),
            Some(0) if p.len() == 1 => (b"/", b"."),
            Some(0) => (b"/", &p[1..]),
            Some(i) => (&p[..i], &p[i + 1..]),
        };
        let fd = self.open(dir, libc::O_PATH | libc::O_DIRECTORY, 0)?;
        Ok((fd, cstr(name)?))
    }

    /// [`Root::logical_path_of`], or `known` (the path the descriptor was opened by) where
    /// its path is too long for the kernel to show (`ENAMETOOLONG`: a directory deeper than
    /// `PATH_MAX`) and `known` still names that file.
    pub fn logical_path_or(&self, fd: RawFd, known: &[u8]) -> Option<Vec<u8>> {
        match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Err(e) if e.raw_os_error() == Some(libc::ENAMETOOLONG) && !known.is_empty() => {
                let id = |st: libc::stat| (st.st_dev, st.st_ino);
                let there = self.open(known, libc::O_PATH | libc::O_NOFOLLOW, 0).ok()?;
                let same = crate::sys::fstat_at(there.as_raw_fd()).ok().map(id)
                    == crate::sys::fstat_at(fd).ok().map(id);
                same.then(|| known.to_vec())
            }
            _ => self.logical_path_of(fd),
        }
    }

    /// The logical path (beneath the root, starting with `/`) of an open descriptor, from
    /// `/proc/self/fd`. `None` when the file is not beneath the root (or was deleted), or its
    /// path is longer than the kernel shows ([`Root::logical_path_or`]).
    pub fn logical_path_of(&self, fd: RawFd) -> Option<Vec<u8>> {
        let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
        let b = link.as_os_str().as_bytes();
        let rest = b.strip_prefix(self.real.as_slice())?;
        if rest.is_empty() {
            return Some(b"/".to_vec());
        }
        if rest.starts_with(b"/") && !rest.ends_with(b" (deleted)") {
            return Some(rest.to_vec());
        }
        None
    }
}

/// `PATH_MAX`: the longest path the kernel takes is one byte shorter (with its NUL, this).
pub(crate) const PATH_MAX: usize = 4096;

/// `openat2(at, path, flags | O_CLOEXEC, mode, resolve)`, with the flags `openat2` accepts
/// and the mode only where the flags create; retried on `EAGAIN` (a concurrent rename could
/// have let `..` escape: the man page asks for a retry) and `EINTR`.
fn openat2(at: RawFd, path: &[u8], flags: i32, mode: u32, resolve: u64) -> Result<OwnedFd, i32> {
    let c = cstr(path)?;
    let flags = (flags & VALID_OPEN_FLAGS) | libc::O_CLOEXEC;
    // SAFETY: open_how is plain data; all-zero is valid.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u32 as u64;
    how.mode = if creates(flags) { u64::from(mode & 0o7777) } else { 0 };
    how.resolve = resolve;
    for _ in 0..64 {
        // SAFETY: `how` is a valid open_how of the size passed; `c` is NUL-terminated.
        let r = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                at,
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if r >= 0 {
            // SAFETY: openat2 returned a new descriptor that nobody else owns.
            return Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) });
        }
        let e = errno();
        if e != libc::EAGAIN && e != libc::EINTR {
            return Err(e);
        }
    }
    Err(libc::EAGAIN)
}

/// A long path cut at component boundaries into steps shorter than `PATH_MAX` ([`Root::open`]):
/// the directories to walk, and the rest (the last component, with any trailing slashes),
/// which the last step opens. A component longer than a step stays whole (the kernel's
/// `ENAMETOOLONG`).
fn steps(path: &[u8]) -> (Vec<&[u8]>, &[u8]) {
    const STEP: usize = PATH_MAX / 2;
    let mut end = path.len();
    while end > 1 && path[end - 1] == b'/' {
        end -= 1;
    }
    let last_start = path[..end].iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1);
    let (dirs, last) = (&path[..last_start], &path[last_start..]);
    let mut out = Vec::new();
    let mut start = 0;
    while start < dirs.len() {
        // The longest run of whole components from `start` within a step.
        let mut cut = start;
        let mut at = start;
        while at < dirs.len() {
            let next =
                dirs[at..].iter().position(|&c| c == b'/').map_or(dirs.len(), |i| at + i + 1);
            if next - start > STEP && cut > start {
                break;
            }
            cut = next;
            at = next;
        }
        out.push(&dirs[start..cut]);
        start = cut;
    }
    (out, last)
}

/// `base` joined with `p`: `p` itself when absolute, else `base/p` (no normalization: the
/// kernel resolves `..` and symlinks, inside the root).
pub fn join(base: &[u8], p: &[u8]) -> Vec<u8> {
    if p.starts_with(b"/") {
        return p.to_vec();
    }
    let mut v = Vec::with_capacity(base.len() + 1 + p.len());
    v.extend_from_slice(base);
    if !v.ends_with(b"/") {
        v.push(b'/');
    }
    v.extend_from_slice(p);
    v
}

/// Lexically normalized absolute form of a logical path (`.` and empty components removed,
/// `..` popped, never above `/`). Used only for bookkeeping keys, never for resolution.
pub fn normalize(p: &[u8]) -> Vec<u8> {
    let mut parts: Vec<&[u8]> = Vec::new();
    for c in p.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let mut out = Vec::with_capacity(p.len() + 1);
    for c in parts {
        out.push(b'/');
        out.extend_from_slice(c);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_and_normalize() {
        assert_eq!(join(b"/a/b", b"c"), b"/a/b/c");
        assert_eq!(join(b"/", b"c"), b"/c");
        assert_eq!(join(b"/a", b"/etc/x"), b"/etc/x");
        assert_eq!(normalize(b"/a/./b/../../../c//d/"), b"/c/d");
        assert_eq!(normalize(b""), b"/");
    }

    /// A path longer than PATH_MAX is cut into steps of whole components, each shorter,
    /// which put together give the path again; the last component (with its trailing
    /// slashes) is the last step's.
    #[test]
    fn long_paths_are_cut_at_components() {
        let comp = [b'c'; 100];
        let mut p = b"/".to_vec();
        for _ in 0..90 {
            p.extend_from_slice(&comp);
            p.push(b'/');
        }
        p.extend_from_slice(b"last//");
        let (dirs, last) = steps(&p);
        assert_eq!(last, b"last//");
        assert!(dirs.len() >= 3, "{} steps", dirs.len());
        assert!(dirs.iter().all(|d| d.len() < PATH_MAX && d.ends_with(b"/")));
        assert_eq!([dirs.concat(), last.to_vec()].concat(), p);
    }

    /// A tree deeper than PATH_MAX opens through its whole path, beneath the root; a long
    /// path whose `..`s would climb out stays in (the first step) or fails (a later one).
    #[test]
    fn paths_longer_than_path_max_resolve_in_steps_beneath_the_root() {
        let base = std::env::temp_dir().join(format!("ra-sandbox-deep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(&root).unwrap();
        let r = Root::new(&root).unwrap();
        let mut logical = Vec::new();
        for _ in 0..30 {
            logical.push(b'/');
            logical.extend_from_slice(&[b'd'; 200]);
        }
        crate::init::mkdirs(&r, &logical).unwrap();
        logical.extend_from_slice(b"/f");
        assert!(logical.len() > PATH_MAX);
        let f = r.open(&logical, libc::O_CREAT | libc::O_WRONLY, 0o644).unwrap();
        let st = crate::sys::fstat_at(f.as_raw_fd()).unwrap();
        assert_eq!(st.st_mode & libc::S_IFMT, libc::S_IFREG);
        let (dir, n) = r.parent(&logical).unwrap();
        assert_eq!(n.as_bytes(), b"f");
        // The descriptor's path is too long for /proc/self/fd; the known one is checked.
        assert_eq!(r.logical_path_of(dir.as_raw_fd()), None);
        let known = &logical[..logical.len() - 2];
        assert_eq!(r.logical_path_or(dir.as_raw_fd(), known).as_deref(), Some(known));
        assert_eq!(r.logical_path_or(dir.as_raw_fd(), &logical[..logical.len() - 203]), None);
        std::fs::write(base.join("secret"), b"outside").unwrap();
        let climb = [b"/".to_vec(), b"../".repeat(2000), b"secret".to_vec()].concat();
        assert!(r.open(&climb, libc::O_RDONLY, 0).is_err());
        let up = [logical[..logical.len() - 2].to_vec(), b"/..".repeat(1400), b"/secret".to_vec()];
        assert!(r.open(&up.concat(), libc::O_RDONLY, 0).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn nothing_resolves_outside_the_root() {
        let base = std::env::temp_dir().join(format!("ra-sandbox-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(base.join("secret"), b"outside").unwrap();
        std::os::unix::fs::symlink("/", root.join("d/up")).unwrap();
        std::os::unix::fs::symlink("../../secret", root.join("d/rel")).unwrap();
        let r = Root::new(&root).unwrap();
        let secret = base.join("secret");
        let abs = secret.as_os_str().as_bytes();
        for p in [abs, b"../secret", b"/../../secret", b"d/rel", b"d/up/../secret"] {
            assert_eq!(r.open(p, libc::O_RDONLY, 0).err(), Some(libc::ENOENT), "{:?}", p);
        }
        // A symlink to / leads to the root, so creating through it stays inside.
        let fd = r.open(b"d/up/created", libc::O_CREAT | libc::O_WRONLY, 0o644).unwrap();
        drop(fd);
        assert!(root.join("created").is_file());
        assert_eq!(
            r.open(b"/proc/self/root/etc/passwd", libc::O_RDONLY, 0).err(),
            Some(libc::ENOENT)
        );
        let (_, name) = r.parent(b"/d/x/").unwrap();
        assert_eq!(name.as_bytes(), b"x");
        let d = r.locate(b"/d", true).unwrap();
        assert_eq!(r.logical_path_of(d.as_raw_fd()).as_deref(), Some(&b"/d"[..]));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
