//! Shared helpers: scratch directories, a tree with every kind of entry, privilege checks.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use ra_fsstate::{Entry, ScanOptions, Scanner};
use rustix::fs::{self as rfs, FileType, Mode, XattrFlags};

pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// True when running as root. Otherwise prints the skip reason, or fails when
/// REANIMATOR_REQUIRE_PRIVILEGED=1 (CI runs as root and sets it).
pub fn privileged(what: &str) -> bool {
    if is_root() {
        return true;
    }
    if std::env::var("REANIMATOR_REQUIRE_PRIVILEGED").as_deref() == Ok("1") {
        panic!("{what} needs root and REANIMATOR_REQUIRE_PRIVILEGED=1");
    }
    eprintln!("skip: {what}: needs root");
    false
}

/// A scratch directory, removed when dropped unless the test failed.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("ra-fsstate-{}-{name}", std::process::id()));
        if d.exists() {
            make_writable(&d);
            let _ = std::fs::remove_dir_all(&d);
        }
        std::fs::create_dir_all(&d).unwrap();
        Scratch(std::fs::canonicalize(&d).unwrap())
    }
    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.0.join(p)
    }
    pub fn mkdir(&self, p: &str) -> PathBuf {
        let d = self.join(p);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            make_writable(&self.0);
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// chmod u+rwx every directory beneath `d` so the tree can be removed.
pub fn make_writable(d: &Path) {
    if let Ok(m) = std::fs::symlink_metadata(d) {
        if m.is_dir() {
            let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
            if let Ok(rd) = std::fs::read_dir(d) {
                for e in rd.flatten() {
                    make_writable(&e.path());
                }
            }
        }
    }
}

pub fn p(root: &Path, rel: &[u8]) -> PathBuf {
    root.join(OsStr::from_bytes(rel))
}

pub fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

pub fn set_xattr(path: &Path, name: &str, value: &[u8]) {
    rfs::lsetxattr(path, name, value, XattrFlags::empty()).unwrap();
}

pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// A tree with every kind of entry we can make here. With root: a character device, files
/// owned by other users, a `trusted.*` xattr.
pub fn build_tree(root: &Path) {
    let w = |rel: &[u8], data: &[u8]| std::fs::write(p(root, rel), data).unwrap();
    std::fs::create_dir_all(root.join("a/b/c")).unwrap();
    w(b"a/b/c/deep.txt", b"deep\n");
    w(b"empty", b"");
    w(b"small.txt", b"hello world\n");
    w(b"big.bin", &pattern(3 * 1024 * 1024 + 17, 1)); // > 1 MiB, several chunks
    w(b"huge.bin", &pattern(5 * 1024 * 1024 + 3, 2)); // > 4 MiB: the streaming path
                                                      // Sparse: 20 MiB with 1 MiB of data at 8 MiB and a few bytes at the end.
    {
        let f = std::fs::File::create(root.join("sparse")).unwrap();
        f.set_len(20 << 20).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &pattern(1 << 20, 3), 8 << 20).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, b"tail", (20 << 20) - 4).unwrap();
    }
    // Same content twice, not linked: stored once.
    w(b"dup1", &pattern(100_000, 4));
    w(b"a/dup2", &pattern(100_000, 4));
    // Symlinks: relative, dangling, absolute pointing outside, to a directory.
    symlink("small.txt", root.join("rel")).unwrap();
    symlink("does/not/exist", root.join("dangling")).unwrap();
    symlink("/etc/passwd", root.join("abs")).unwrap();
    symlink("a/b", root.join("dirlink")).unwrap();
    // Hard links: three names of one inode, one in a subdirectory.
    w(b"h1", b"linked content\n");
    std::fs::hard_link(root.join("h1"), root.join("h2")).unwrap();
    std::fs::hard_link(root.join("h1"), root.join("a/h3")).unwrap();
    // A hard-linked symlink.
    symlink("h1", root.join("sl1")).unwrap();
    rfs::linkat(rfs::CWD, root.join("sl1"), rfs::CWD, root.join("sl2"), rfs::AtFlags::empty())
        .unwrap();
    // Fifo and socket.
    rfs::mknodat(rfs::CWD, root.join("fifo"), FileType::Fifo, Mode::from_raw_mode(0o640), 0)
        .unwrap();
    drop(std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap());
    // xattrs on a file and a directory, one value not UTF-8.
    set_xattr(&root.join("small.txt"), "user.comment", b"a note");
    set_xattr(&root.join("small.txt"), "user.bin", b"\x00\xff\x01");
    set_xattr(&root.join("a"), "user.dir", b"on a directory");
    // Special mode bits and awkward permissions.
    w(b"suid", b"#!/bin/sh\n");
    chmod(&root.join("suid"), 0o4755);
    std::fs::create_dir(root.join("sgid")).unwrap();
    chmod(&root.join("sgid"), 0o2775);
    std::fs::create_dir(root.join("sticky")).unwrap();
    chmod(&root.join("sticky"), 0o1777);
    w(b"ro", b"read only\n");
    chmod(&root.join("ro"), 0o444);
    std::fs::create_dir(root.join("rodir")).unwrap();
    w(b"rodir/inside", b"inside a 0555 directory\n");
    chmod(&root.join("rodir/inside"), 0o600);
    chmod(&root.join("rodir"), 0o555);
    // Names: not UTF-8, with a newline, with a backslash, starting with a dash.
    w(b"\xff\xfe.bin", b"latin-1 name\n");
    w(b"new\nline", b"newline in the name\n");
    w(b"back\\slash", b"");
    w(b"-dash", b"x");
    // Siblings whose byte order interleaves with a directory's contents.
    w(b"a.txt", b"between a and a/");
    w(b"a-", b"before a.txt");
    if is_root() {
        w(b"nobody", b"0000 and someone else's\n");
        chmod(&root.join("nobody"), 0o000);
        rfs::chownat(
            rfs::CWD,
            root.join("nobody"),
            Some(rfs::Uid::from_raw(1234)),
            Some(rfs::Gid::from_raw(5678)),
            rfs::AtFlags::empty(),
        )
        .unwrap();
        rfs::chownat(
            rfs::CWD,
            root.join("abs"),
            Some(rfs::Uid::from_raw(42)),
            Some(rfs::Gid::from_raw(43)),
            rfs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .unwrap();
        rfs::mknodat(
            rfs::CWD,
            root.join("null"),
            FileType::CharacterDevice,
            Mode::from_raw_mode(0o666),
            rfs::makedev(1, 3),
        )
        .unwrap();
        set_xattr(&root.join("fifo"), "trusted.t", b"trusted on a fifo");
        set_xattr(&root.join("abs"), "trusted.s", b"trusted on a symlink");
    }
}

pub fn scan(root: &Path) -> Vec<Entry> {
    Scanner::new(root, ScanOptions::default())
        .unwrap()
        .collect::<ra_fsstate::Result<Vec<_>>>()
        .unwrap()
}

pub fn find<'a>(entries: &'a [Entry], path: &[u8]) -> &'a Entry {
    entries
        .iter()
        .find(|e| e.path == path)
        .unwrap_or_else(|| panic!("{} not in the scan", ra_fsstate::escape(path)))
}
