//! [`Entry`]: the logical state of one object in a tree, and the rules its paths obey.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

/// Content is stored, offered and restored in chunks of at most this many bytes.
pub const CHUNK_BYTES: usize = 1 << 20;

/// A BLAKE3 digest (32 bytes) of a regular file's content.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// The digest of `data`.
    pub fn of(data: &[u8]) -> Digest {
        Digest(*blake3::hash(data).as_bytes())
    }

    /// Lower-case hex, 64 characters.
    pub fn to_hex(&self) -> String {
        ra_hex::encode(&self.0)
    }

    /// Parse 64 hex digits (either case).
    pub fn from_hex(s: &str) -> Option<Digest> {
        ra_hex::decode_array(s).map(Digest)
    }

    /// From 32 raw bytes.
    pub fn from_slice(b: &[u8]) -> Option<Digest> {
        Some(Digest(b.try_into().ok()?))
    }
}

impl From<blake3::Hash> for Digest {
    fn from(h: blake3::Hash) -> Digest {
        Digest(*h.as_bytes())
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

/// What kind of object an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A regular file (`S_IFREG`; `file`).
    File,
    /// A directory (`S_IFDIR`; `dir`).
    Dir,
    /// A symbolic link (`S_IFLNK`; `symlink`), recorded and restored, never followed.
    Symlink,
    /// A named pipe (`S_IFIFO`; `fifo`).
    Fifo,
    /// A Unix domain socket's file (`S_IFSOCK`; `socket`).
    Socket,
    /// A character device node (`S_IFCHR`; `char`).
    CharDevice,
    /// A block device node (`S_IFBLK`; `block`).
    BlockDevice,
}

impl Kind {
    /// Every kind, in a fixed order.
    pub const ALL: [Kind; 7] = [
        Kind::File,
        Kind::Dir,
        Kind::Symlink,
        Kind::Fifo,
        Kind::Socket,
        Kind::CharDevice,
        Kind::BlockDevice,
    ];

    /// The name used in manifests and diff output: `file`, `dir`, `symlink`, `fifo`, `socket`,
    /// `char`, `block`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "dir",
            Kind::Symlink => "symlink",
            Kind::Fifo => "fifo",
            Kind::Socket => "socket",
            Kind::CharDevice => "char",
            Kind::BlockDevice => "block",
        }
    }

    /// Inverse of [`Kind::name`].
    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// One ASCII byte, as `ls -l` shows it (`-` file, `d`, `l`, `p`, `s`, `c`, `b`).
    pub fn code(self) -> u8 {
        match self {
            Kind::File => b'-',
            Kind::Dir => b'd',
            Kind::Symlink => b'l',
            Kind::Fifo => b'p',
            Kind::Socket => b's',
            Kind::CharDevice => b'c',
            Kind::BlockDevice => b'b',
        }
    }

    /// Inverse of [`Kind::code`].
    pub fn from_code(c: u8) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.code() == c)
    }

    /// From `st_mode`'s `S_IFMT` bits.
    pub fn from_mode(st_mode: u32) -> Option<Kind> {
        Some(match st_mode & 0o170000 {
            0o100000 => Kind::File,
            0o040000 => Kind::Dir,
            0o120000 => Kind::Symlink,
            0o010000 => Kind::Fifo,
            0o140000 => Kind::Socket,
            0o020000 => Kind::CharDevice,
            0o060000 => Kind::BlockDevice,
            _ => return None,
        })
    }

    /// Character or block device.
    pub fn is_device(self) -> bool {
        matches!(self, Kind::CharDevice | Kind::BlockDevice)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A device number (`st_rdev` split with `major(3)` and `minor(3)`); displayed and written in
/// manifests as `MAJOR:MINOR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DevNum {
    /// The major number: the driver (`1` for `/dev/null`'s `1:3`).
    pub major: u32,
    /// The minor number: the device of that driver.
    pub minor: u32,
}

impl fmt::Display for DevNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// The logical POSIX state of one object of a tree.
///
/// What is deliberately **not** here: inode numbers, link counts, block counts, directory sizes,
/// atime and ctime (none of them survives a copy). `mtime_ns` is kept, but [`crate::diff()`]
/// compares it only when asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Path relative to the tree's root, as bytes; the root itself has the empty path.
    /// Components are separated by `/` (see [`check_path`]).
    pub path: Vec<u8>,
    /// What the object is (`st_mode & S_IFMT`); the fields below that apply depend on it.
    pub kind: Kind,
    /// Permission bits including setuid, setgid and sticky (`st_mode & 0o7777`).
    pub mode: u32,
    /// The owner's numeric user id (`st_uid`); never `u32::MAX` (-1, "no change" to `chown`).
    pub uid: u32,
    /// The numeric group id (`st_gid`); never `u32::MAX`.
    pub gid: u32,
    /// Regular files: content length. Symlinks: length of the target. Others: 0.
    pub size: u64,
    /// Regular files: BLAKE3 of the content. Others: `None`.
    pub digest: Option<Digest>,
    /// Symlinks: the target, never followed. Others: `None`.
    pub target: Option<Vec<u8>>,
    /// Character and block devices: the device number. Others: `None`.
    pub rdev: Option<DevNum>,
    /// Extended attributes, every namespace the scanner could read, sorted by name.
    pub xattrs: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Hard links: the path of the first (smallest) entry of this tree that shares this
    /// entry's inode; `None` for that first entry and for objects with one name in the tree.
    /// The hard-link group of an entry is therefore `link.unwrap_or(path)`.
    pub link: Option<Vec<u8>>,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
}

impl Entry {
    /// The key of the entry's hard-link group: [`Entry::link`] if set, else its own path.
    pub fn link_group(&self) -> &[u8] {
        self.link.as_deref().unwrap_or(&self.path)
    }

    /// Last path component (empty for the root).
    pub fn name(&self) -> &[u8] {
        split_parent(&self.path).1
    }

    /// Check that the fields fit the kind and the path rules. Readers of manifests and traces
    /// call this on every entry; the scanner only produces consistent entries.
    pub fn check(&self) -> Result<(), EntryProblem> {
        check_path(&self.path).map_err(EntryProblem::Path)?;
        if self.path.is_empty() && self.kind != Kind::Dir {
            return Err(EntryProblem::RootNotADirectory);
        }
        if self.mode > 0o7777 {
            return Err(EntryProblem::BadMode(self.mode));
        }
        if self.uid == u32::MAX || self.gid == u32::MAX {
            return Err(EntryProblem::BadOwner);
        }
        let want = |ok: bool, field: &'static str, kind: Kind| {
            if ok {
                Ok(())
            } else {
                Err(EntryProblem::Field { field, kind })
            }
        };
        let k = self.kind;
        want(self.digest.is_some() == (k == Kind::File), "blake3", k)?;
        want(self.target.is_some() == (k == Kind::Symlink), "target", k)?;
        want(self.rdev.is_some() == k.is_device(), "rdev", k)?;
        match (&self.target, k) {
            (Some(t), _) if t.is_empty() || t.contains(&0) => return Err(EntryProblem::BadTarget),
            (Some(t), _) if t.len() as u64 != self.size => return Err(EntryProblem::BadSize),
            (None, Kind::File) => {}
            (None, _) if self.size != 0 => return Err(EntryProblem::BadSize),
            _ => {}
        }
        for name in self.xattrs.keys() {
            if name.is_empty() || name.contains(&0) {
                return Err(EntryProblem::BadXattrName);
            }
        }
        if let Some(l) = &self.link {
            check_path(l).map_err(EntryProblem::Path)?;
            if k == Kind::Dir || l.is_empty() {
                return Err(EntryProblem::LinkToDirectory);
            }
            if path_cmp(l, &self.path) != Ordering::Less {
                return Err(EntryProblem::LinkNotEarlier);
            }
        }
        Ok(())
    }
}

/// Why an entry is inconsistent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryProblem {
    /// The entry's path, or its hard-link path, breaks [`check_path`]'s rules.
    #[error("{0}")]
    Path(PathProblem),
    /// The entry with the empty path is not a [`Kind::Dir`].
    #[error("the root (empty path) must be a directory")]
    RootNotADirectory,
    /// `mode` (the value given) has bits beyond the permission bits (`0o7777`).
    #[error("mode {0:o} has bits beyond 07777")]
    BadMode(u32),
    /// `uid` or `gid` is `u32::MAX`, which `chown` reads as "leave unchanged".
    #[error("uid or gid 4294967295 (-1) is not an owner")]
    BadOwner,
    /// A kind-specific field is missing for its kind or present for another: `blake3`
    /// ([`Entry::digest`], files), `target` (symlinks), `rdev` (devices).
    #[error("field `{field}` is required for a {kind} and only for it")]
    Field {
        /// The field's manifest name: `blake3`, `target` or `rdev`.
        field: &'static str,
        /// The entry's kind.
        kind: Kind,
    },
    /// A symlink's target is empty or holds a NUL byte.
    #[error("symlink target is empty or holds a NUL byte")]
    BadTarget,
    /// `size` is not the target's length for a symlink, or not 0 for a kind other than a file
    /// or a symlink.
    #[error(
        "size does not fit the kind (symlinks: target length; only files and symlinks have one)"
    )]
    BadSize,
    /// An xattr name is empty or holds a NUL byte.
    #[error("xattr name is empty or holds a NUL byte")]
    BadXattrName,
    /// A directory has a [`Entry::link`], or the link names the root.
    #[error("a hard link must be to a non-directory entry")]
    LinkToDirectory,
    /// [`Entry::link`] does not sort before the entry's own path.
    #[error("a hard link must name an entry that comes earlier in path order")]
    LinkNotEarlier,
}

/// Why a path is not acceptable in a tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathProblem {
    /// The path starts with `/`.
    #[error("path is absolute")]
    Absolute,
    /// The path has `//` or ends with `/`.
    #[error("path has an empty component (`//` or a trailing `/`)")]
    EmptyComponent,
    /// A component is `.`.
    #[error("path has a `.` component")]
    Dot,
    /// A component is `..`, which could leave the tree.
    #[error("path has a `..` component")]
    DotDot,
    /// The path holds a NUL byte, which no system call can pass.
    #[error("path holds a NUL byte")]
    Nul,
    /// A component is longer than 255 bytes (`NAME_MAX`).
    #[error("path has a component longer than 255 bytes")]
    ComponentTooLong,
}

/// Check a path relative to a tree's root: empty (the root), or `/`-separated components that
/// are each 1..=255 bytes, not `.` or `..`, without NUL. Nothing else can name an object
/// beneath the root without leaving it.
pub fn check_path(p: &[u8]) -> Result<(), PathProblem> {
    if p.is_empty() {
        return Ok(());
    }
    if p[0] == b'/' {
        return Err(PathProblem::Absolute);
    }
    if p.contains(&0) {
        return Err(PathProblem::Nul);
    }
    for c in p.split(|&b| b == b'/') {
        match c {
            b"" => return Err(PathProblem::EmptyComponent),
            b"." => return Err(PathProblem::Dot),
            b".." => return Err(PathProblem::DotDot),
            c if c.len() > 255 => return Err(PathProblem::ComponentTooLong),
            _ => {}
        }
    }
    Ok(())
}

/// The order of entries in a manifest and in every stream of entries: plain byte order of the
/// paths (`"a" < "a.txt" < "a/b"`). The entries of a subtree are contiguous in it, and a
/// directory comes before everything beneath it.
pub fn path_cmp(a: &[u8], b: &[u8]) -> Ordering {
    a.cmp(b)
}

/// `(parent, name)`: `"a/b/c"` → `("a/b", "c")`, `"c"` → `("", "c")`, `""` → `("", "")`.
pub fn split_parent(p: &[u8]) -> (&[u8], &[u8]) {
    match p.iter().rposition(|&b| b == b'/') {
        Some(i) => (&p[..i], &p[i + 1..]),
        None => (&p[..0], p),
    }
}

/// `parent/name` (or `name` when the parent is the root).
pub fn join(parent: &[u8], name: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(parent.len() + 1 + name.len());
    v.extend_from_slice(parent);
    if !parent.is_empty() {
        v.push(b'/');
    }
    v.extend_from_slice(name);
    v
}

/// True when `path` lies strictly beneath directory `dir` (every path but the root lies
/// beneath the root).
pub fn is_beneath(path: &[u8], dir: &[u8]) -> bool {
    if dir.is_empty() {
        return !path.is_empty();
    }
    path.len() > dir.len() && path.starts_with(dir) && path[dir.len()] == b'/'
}

/// A path for humans, one line, unambiguous: the root is `.`; backslash, control characters,
/// DEL and bytes that are not UTF-8 are escaped (`\\`, `\n`, `\t`, `\r`, `\xNN`).
pub fn escape(p: &[u8]) -> String {
    if p.is_empty() {
        return ".".to_string();
    }
    escape_bytes(p)
}

/// [`escape`] without the special case for the empty string.
pub fn escape_bytes(p: &[u8]) -> String {
    let mut out = String::with_capacity(p.len());
    for chunk in p.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        for ok in [&b""[..], b"a", b"a/b", b"a b/\xff\n", b".a/..b/...", b"a/.git"] {
            assert_eq!(check_path(ok), Ok(()), "{}", escape(ok));
        }
        for (bad, why) in [
            (&b"/etc/x"[..], PathProblem::Absolute),
            (b"../x", PathProblem::DotDot),
            (b"a/../../x", PathProblem::DotDot),
            (b"a/./x", PathProblem::Dot),
            (b".", PathProblem::Dot),
            (b"a//b", PathProblem::EmptyComponent),
            (b"a/", PathProblem::EmptyComponent),
            (b"a\0b", PathProblem::Nul),
        ] {
            assert_eq!(check_path(bad), Err(why), "{}", escape(bad));
        }
        assert_eq!(check_path(&[b'x'; 256]), Err(PathProblem::ComponentTooLong));
        assert_eq!(split_parent(b"a/b/c"), (&b"a/b"[..], &b"c"[..]));
        assert_eq!(split_parent(b"c"), (&b""[..], &b"c"[..]));
        assert_eq!(join(b"", b"c"), b"c");
        assert_eq!(join(b"a", b"c"), b"a/c");
        assert!(is_beneath(b"a/b", b"a") && !is_beneath(b"ab", b"a") && !is_beneath(b"a", b"a"));
        assert!(is_beneath(b"a", b"") && !is_beneath(b"", b""));
    }

    #[test]
    fn escaping_is_one_line_and_unambiguous() {
        assert_eq!(escape(b""), ".");
        assert_eq!(escape(b"a b/c"), "a b/c");
        assert_eq!(escape(b"a\nb\\\xff\x01\x7f"), "a\\nb\\\\\\xff\\x01\\x7f");
        assert_eq!(escape("é".as_bytes()), "é");
    }

    #[test]
    fn hex_round_trip() {
        let d = Digest::of(b"abc");
        assert_eq!(Digest::from_hex(&d.to_hex()), Some(d));
        assert_eq!(Digest::from_hex(&d.to_hex().to_uppercase()), Some(d));
        assert_eq!(Digest::from_hex(&d.to_hex()[..62]), None, "31 bytes");
        assert_eq!(Digest::from_hex(&format!("{}00", d.to_hex())), None, "33 bytes");
        assert_eq!(Digest::from_hex(&"0g".repeat(32)), None);
    }

    #[test]
    fn kinds() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
            assert_eq!(Kind::from_code(k.code()), Some(k));
        }
        assert_eq!(Kind::from_mode(0o100644), Some(Kind::File));
        assert_eq!(Kind::from_mode(0o020644), Some(Kind::CharDevice));
    }
}
