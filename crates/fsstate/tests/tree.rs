//! Scan, manifest, diff and restore round trips on real trees holding every kind of entry.

mod common;

use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::*;
use ra_fsstate::{
    diff, restore, Attr, DiffOptions, Difference, DirStore, Entry, Kind, Manifest, ManifestFile,
    ManifestHeader, RestoreOptions, ScanOptions, Scanner,
};

fn open_dir(p: &Path) -> std::fs::File {
    std::fs::File::open(p).unwrap()
}

fn diff_trees(a: &Path, b: &Path, times: bool) -> Vec<Difference> {
    let opts = DiffOptions { times, ..Default::default() };
    let sa = Scanner::new(a, ScanOptions::default()).unwrap();
    let sb = Scanner::new(b, ScanOptions::default()).unwrap();
    diff(sa, sb, &opts).collect_all().unwrap().0
}

fn show(d: &[Difference]) -> String {
    d.iter()
        .map(|d| match d {
            Difference::Added(e) => format!("+ {}", ra_fsstate::escape(&e.path)),
            Difference::Removed(e) => format!("- {}", ra_fsstate::escape(&e.path)),
            Difference::Changed { a, attrs, .. } => {
                format!("~ {} {attrs:?}", ra_fsstate::escape(&a.path))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Scan `src` into a manifest and a store, restore into a fresh directory, return it.
fn snapshot_and_restore(s: &Scratch, src: &Path, name: &str) -> std::path::PathBuf {
    let store_dir = s.join(format!("{name}.store"));
    let mut store = DirStore::open(&store_dir).unwrap();
    let mut scanner = Scanner::new(src, ScanOptions::default()).unwrap();
    let mut entries = Vec::new();
    while let Some(e) = scanner.next_with(&mut store) {
        entries.push(e.unwrap());
    }
    let dest = s.mkdir(name);
    // The round trip is exact: devices, setuid bits and security xattrs too.
    let opts = RestoreOptions { special: true, ..RestoreOptions::default() };
    let stats = restore(&entries, &mut store, open_dir(&dest).as_fd(), &opts).unwrap();
    assert_eq!(stats.entries, entries.len() as u64);
    dest
}

#[test]
fn scan_sees_every_kind_and_attribute() {
    let s = Scratch::new("kinds");
    let src = s.mkdir("src");
    build_tree(&src);
    let v = scan(&src);
    // Path order, the root first.
    assert_eq!(v[0].path, b"");
    assert!(v.windows(2).all(|w| w[0].path < w[1].path));
    for e in &v {
        e.check().unwrap_or_else(|p| panic!("{}: {p}", ra_fsstate::escape(&e.path)));
    }
    let names: Vec<&[u8]> = v.iter().map(|e| e.path.as_slice()).collect();
    // Byte order puts a's siblings "a-" and "a.txt" before its contents.
    let pos = |p: &[u8]| names.iter().position(|n| *n == p).unwrap();
    assert!(pos(b"a") < pos(b"a-") && pos(b"a-") < pos(b"a.txt") && pos(b"a.txt") < pos(b"a/b"));
    assert_eq!(find(&v, b"big.bin").size, 3 * 1024 * 1024 + 17);
    assert_eq!(
        find(&v, b"big.bin").digest,
        Some(ra_fsstate::Digest::of(&pattern(3 * 1024 * 1024 + 17, 1)))
    );
    assert_eq!(
        find(&v, b"huge.bin").digest,
        Some(ra_fsstate::Digest::of(&pattern(5 * 1024 * 1024 + 3, 2)))
    );
    assert_eq!(find(&v, b"empty").digest, Some(ra_fsstate::Digest::of(b"")));
    assert_eq!(find(&v, b"sparse").size, 20 << 20);
    assert_eq!(find(&v, b"a").kind, Kind::Dir);
    assert_eq!(find(&v, b"rel").kind, Kind::Symlink);
    assert_eq!(find(&v, b"rel").target.as_deref(), Some(&b"small.txt"[..]));
    assert_eq!(find(&v, b"abs").target.as_deref(), Some(&b"/etc/passwd"[..]));
    assert_eq!(find(&v, b"dangling").size, 14);
    // The symlink to a directory is not followed: nothing beneath it.
    assert!(!names.iter().any(|n| n.starts_with(b"dirlink/")));
    assert_eq!(find(&v, b"fifo").kind, Kind::Fifo);
    assert_eq!(find(&v, b"fifo").mode, 0o640);
    assert_eq!(find(&v, b"sock").kind, Kind::Socket);
    assert_eq!(find(&v, b"suid").mode, 0o4755);
    assert_eq!(find(&v, b"sgid").mode, 0o2775);
    assert_eq!(find(&v, b"sticky").mode, 0o1777);
    assert_eq!(find(&v, b"ro").mode, 0o444);
    assert_eq!(find(&v, b"rodir").mode, 0o555);
    assert_eq!(find(&v, b"\xff\xfe.bin").kind, Kind::File);
    assert_eq!(find(&v, b"new\nline").kind, Kind::File);
    let x = &find(&v, b"small.txt").xattrs;
    assert_eq!(x.get(&b"user.comment"[..]).map(Vec::as_slice), Some(&b"a note"[..]));
    assert_eq!(x.get(&b"user.bin"[..]).map(Vec::as_slice), Some(&b"\x00\xff\x01"[..]));
    assert!(find(&v, b"a").xattrs.contains_key(&b"user.dir"[..]));
    // Hard links: the group key is the smallest path ("a/h3" < "h1" in byte order).
    assert_eq!(find(&v, b"a/h3").link, None);
    assert_eq!(find(&v, b"h1").link.as_deref(), Some(&b"a/h3"[..]));
    assert_eq!(find(&v, b"h2").link.as_deref(), Some(&b"a/h3"[..]));
    for p in [&b"a/h3"[..], b"h1", b"h2"] {
        assert_eq!(find(&v, p).link_group(), b"a/h3");
    }
    assert_eq!(find(&v, b"sl2").link.as_deref(), Some(&b"sl1"[..]));
    assert_eq!(find(&v, b"a/h3").digest, find(&v, b"h1").digest);
    assert_eq!(find(&v, b"dup1").link, None);
    assert_eq!(find(&v, b"a/dup2").link, None);
    if privileged("a character device, other owners, trusted xattrs") {
        let n = find(&v, b"null");
        assert_eq!((n.kind, n.rdev.map(|r| (r.major, r.minor))), (Kind::CharDevice, Some((1, 3))));
        assert_eq!((find(&v, b"nobody").uid, find(&v, b"nobody").gid), (1234, 5678));
        assert_eq!(find(&v, b"nobody").mode, 0);
        assert_eq!(find(&v, b"abs").uid, 42);
        assert!(find(&v, b"fifo").xattrs.contains_key(&b"trusted.t"[..]));
        assert!(find(&v, b"abs").xattrs.contains_key(&b"trusted.s"[..]));
    }
}

#[test]
fn manifest_round_trips_every_entry() {
    let s = Scratch::new("manifest");
    let src = s.mkdir("src");
    build_tree(&src);
    let m = Manifest::scan(&src, ScanOptions::default()).unwrap();
    let file = s.join("m.jsonl");
    m.write_to(std::fs::File::create(&file).unwrap()).unwrap();
    let back = Manifest::load(&file).unwrap();
    assert_eq!(back, m);
    assert_eq!(back.header.root.as_deref(), Some(src.as_os_str().as_encoded_bytes()));
    // Every line is one JSON object; the non-UTF-8 name is in hex, the newline escaped.
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), m.entries.len() + 2);
    assert!(text.contains("\"path\":{\"hex\":\"fffe2e62696e\"}"), "{text}");
    assert!(text.contains("\"path\":\"new\\nline\""));
    // The streaming reader gives the same entries, and diff of the file against the tree
    // is empty.
    let streamed: Vec<Entry> =
        ManifestFile::new(&file).open().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(streamed, m.entries);
    let d = diff(
        ManifestFile::new(&file).open().unwrap(),
        Scanner::new(&src, ScanOptions::default()).unwrap(),
        &DiffOptions { times: true, ..Default::default() },
    )
    .collect_all()
    .unwrap();
    assert!(d.0.is_empty(), "{}", show(&d.0));
    assert_eq!(d.1.a_entries, m.entries.len() as u64);
}

#[test]
fn restore_recreates_the_tree_exactly() {
    let s = Scratch::new("restore");
    let src = s.mkdir("src");
    build_tree(&src);
    let dest = snapshot_and_restore(&s, &src, "dest");
    let d = diff_trees(&src, &dest, true);
    assert!(d.is_empty(), "differences after restore:\n{}", show(&d));
    // Holes stay holes: the sparse file takes about its 1 MiB of data, not 20 MiB.
    let m = std::fs::metadata(dest.join("sparse")).unwrap();
    assert_eq!(m.len(), 20 << 20);
    assert!(m.blocks() * 512 < 4 << 20, "{} blocks", m.blocks());
    // Hard links are hard links; equal contents that were not linked are not.
    let ino = |p: &str| std::fs::symlink_metadata(dest.join(p)).unwrap().ino();
    assert_eq!(ino("h1"), ino("h2"));
    assert_eq!(ino("h1"), ino("a/h3"));
    assert_eq!(ino("sl1"), ino("sl2"));
    assert_ne!(ino("dup1"), ino("a/dup2"));
    assert_eq!(std::fs::read(dest.join("a/dup2")).unwrap(), pattern(100_000, 4));
    // The absolute symlink was created, not followed.
    assert_eq!(std::fs::read_link(dest.join("abs")).unwrap(), Path::new("/etc/passwd"));
}

#[test]
fn store_keeps_each_content_once() {
    let s = Scratch::new("store");
    let src = s.mkdir("src");
    build_tree(&src);
    let store_dir = s.join("store");
    let mut store = DirStore::open(&store_dir).unwrap();
    let mut scanner = Scanner::new(&src, ScanOptions::default()).unwrap();
    let mut files = std::collections::BTreeSet::new();
    while let Some(e) = scanner.next_with(&mut store) {
        if let Some(d) = e.unwrap().digest {
            files.insert(d);
        }
    }
    let objects: usize = std::fs::read_dir(&store_dir)
        .unwrap()
        .map(|d| std::fs::read_dir(d.unwrap().path()).unwrap().count())
        .sum();
    assert_eq!(objects, files.len(), "one object per distinct content");
    assert_eq!(scanner.stats().blobs, files.len() as u64);
    assert!(scanner.stats().files > files.len() as u64, "duplicates and links share objects");
}

#[test]
fn diff_detects_each_single_attribute_change() {
    let s = Scratch::new("diff1");
    let src = s.mkdir("src");
    build_tree(&src);
    type Change = (&'static str, Box<dyn Fn(&Path)>, Option<Vec<Attr>>, bool);
    let mut changes: Vec<Change> = vec![
        (
            "small.txt",
            Box::new(|d| chmod(&d.join("small.txt"), 0o600)),
            Some(vec![Attr::Mode]),
            false,
        ),
        ("sgid", Box::new(|d| chmod(&d.join("sgid"), 0o775)), Some(vec![Attr::Mode]), false),
        (
            "big.bin",
            Box::new(|d| {
                let mut b = std::fs::read(d.join("big.bin")).unwrap();
                b[2_000_000] ^= 1;
                std::fs::write(d.join("big.bin"), b).unwrap();
            }),
            Some(vec![Attr::Content]),
            false,
        ),
        (
            "small.txt",
            Box::new(|d| {
                let f = std::fs::OpenOptions::new().append(true).open(d.join("small.txt")).unwrap();
                std::io::Write::write_all(&mut &f, b"!").unwrap();
            }),
            Some(vec![Attr::Size, Attr::Content]),
            false,
        ),
        (
            "rel",
            Box::new(|d| {
                std::fs::remove_file(d.join("rel")).unwrap();
                std::os::unix::fs::symlink("empty", d.join("rel")).unwrap();
            }),
            Some(vec![Attr::Size, Attr::Target]),
            false,
        ),
        (
            "a",
            Box::new(|d| set_xattr(&d.join("a"), "user.dir", b"changed")),
            Some(vec![Attr::Xattrs]),
            false,
        ),
        (
            "h2",
            Box::new(|d| {
                // Same content, but no longer the same inode as h1.
                let b = std::fs::read(d.join("h2")).unwrap();
                std::fs::remove_file(d.join("h2")).unwrap();
                std::fs::write(d.join("h2"), b).unwrap();
            }),
            Some(vec![Attr::Link]),
            false,
        ),
        (
            "empty",
            Box::new(|d| {
                std::fs::remove_file(d.join("empty")).unwrap();
                std::fs::create_dir(d.join("empty")).unwrap();
            }),
            Some(vec![Attr::Kind]),
            false,
        ),
        (
            "ro",
            Box::new(|d| {
                let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000);
                std::fs::File::open(d.join("ro")).unwrap().set_modified(t).unwrap();
            }),
            Some(vec![Attr::Mtime]),
            true,
        ),
        ("new", Box::new(|d| std::fs::write(d.join("new"), b"x").unwrap()), None, false),
    ];
    if privileged("owner and device-number changes") {
        changes.push((
            "small.txt",
            Box::new(|d| std::os::unix::fs::chown(d.join("small.txt"), Some(777), None).unwrap()),
            Some(vec![Attr::Uid]),
            false,
        ));
        changes.push((
            "small.txt",
            Box::new(|d| std::os::unix::fs::chown(d.join("small.txt"), None, Some(777)).unwrap()),
            Some(vec![Attr::Gid]),
            false,
        ));
        changes.push((
            "null",
            Box::new(|d| {
                std::fs::remove_file(d.join("null")).unwrap();
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    d.join("null"),
                    rustix::fs::FileType::CharacterDevice,
                    rustix::fs::Mode::from_raw_mode(0o666),
                    rustix::fs::makedev(1, 5),
                )
                .unwrap();
            }),
            Some(vec![Attr::Rdev]),
            false,
        ));
    }
    for (i, (path, change, want, times)) in changes.into_iter().enumerate() {
        let dest = snapshot_and_restore(&s, &src, &format!("d{i}"));
        assert!(diff_trees(&src, &dest, true).is_empty());
        // Keep the parent directory's mtime as it was: only the entry itself changes.
        let parent = dest.join(path).parent().unwrap().to_path_buf();
        let pm = std::fs::metadata(&parent).unwrap().modified().unwrap();
        change(&dest);
        std::fs::File::open(&parent).unwrap().set_modified(pm).unwrap();
        if times {
            assert!(diff_trees(&src, &dest, false).is_empty(), "{path}: mtime ignored by default");
        }
        let d = diff_trees(&src, &dest, times);
        assert_eq!(d.len(), 1, "{path}: {}", show(&d));
        assert_eq!(d[0].path(), path.as_bytes());
        match (&d[0], want) {
            (Difference::Changed { attrs, .. }, Some(w)) => assert_eq!(attrs, &w, "{path}"),
            (Difference::Added(_), None) => {}
            (other, w) => panic!("{path}: got {other:?}, wanted {w:?}"),
        }
        // And the reverse direction reports the opposite.
        let back = diff_trees(&dest, &src, times);
        assert_eq!(back.len(), 1);
        if let Difference::Added(_) = d[0] {
            assert!(matches!(back[0], Difference::Removed(_)));
        }
    }
}

#[test]
fn diff_ignores_globs_and_their_subtrees() {
    let s = Scratch::new("ignore");
    let src = s.mkdir("src");
    build_tree(&src);
    let dest = snapshot_and_restore(&s, &src, "dest");
    std::fs::write(dest.join("a/b/c/deep.txt"), b"changed").unwrap();
    std::fs::write(dest.join("a/b/new"), b"new").unwrap();
    std::fs::write(dest.join("small.txt"), b"changed").unwrap();
    let pred: ra_fsstate::PathPredicate = std::sync::Arc::new(|p: &[u8]| p == b"a/b");
    let opts = DiffOptions { ignore: Some(pred), ..Default::default() };
    let (d, stats) = diff(
        Scanner::new(&src, ScanOptions::default()).unwrap(),
        Scanner::new(&dest, ScanOptions::default()).unwrap(),
        &opts,
    )
    .collect_all()
    .unwrap();
    assert_eq!(d.len(), 1, "{}", show(&d));
    assert_eq!(d[0].path(), b"small.txt");
    assert!(stats.ignored >= 6, "{stats:?}");
}

#[test]
fn restore_refuses_a_destination_that_is_not_empty() {
    let s = Scratch::new("nonempty");
    let src = s.mkdir("src");
    std::fs::write(src.join("f"), b"x").unwrap();
    let entries = scan(&src);
    let dest = s.mkdir("dest");
    std::fs::write(dest.join("already-here"), b"").unwrap();
    let err = restore(
        &entries,
        &mut ra_fsstate::NoContent,
        open_dir(&dest).as_fd(),
        &RestoreOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ra_fsstate::Error::DestinationNotEmpty { .. }), "{err}");
    assert!(err.to_string().contains("already-here"), "{err}");
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 1, "nothing added");
}

#[test]
fn restore_without_content_fails_verification() {
    let s = Scratch::new("nocontent");
    let src = s.mkdir("src");
    std::fs::write(src.join("f"), b"some content").unwrap();
    let entries = scan(&src);
    let dest = s.mkdir("dest");
    let err = restore(
        &entries,
        &mut ra_fsstate::NoContent,
        open_dir(&dest).as_fd(),
        &RestoreOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ra_fsstate::Error::ContentMismatch { .. }), "{err}");
}

#[test]
fn scan_of_a_missing_directory_is_one_clear_error() {
    let err = Scanner::new(Path::new("/no/such/dir"), ScanOptions::default()).err().unwrap();
    assert!(err.to_string().contains("/no/such/dir"), "{err}");
}

#[test]
fn manifest_header_defaults() {
    let m = Manifest { header: ManifestHeader::default(), entries: Vec::new() };
    let out = m.write_to(Vec::new()).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"format\":\"reanimator-manifest\",\"version\":2}\n{\"end\":{\"entries\":0}}\n"
    );
}

#[test]
fn mount_points_are_recorded_but_not_entered() {
    if !privileged("mounting a tmpfs") {
        return;
    }
    let s = Scratch::new("mounts");
    let src = s.mkdir("src");
    std::fs::write(src.join("top"), b"top").unwrap();
    let mnt = s.mkdir("src/mnt");
    let o = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m,mode=0750", "reanimator-test"])
        .arg(&mnt)
        .output();
    match o {
        Ok(o) if o.status.success() => {}
        // Root without CAP_SYS_ADMIN (some containers): not a privilege this test can get.
        other => {
            eprintln!("skip: mount -t tmpfs failed here: {other:?}");
            return;
        }
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    std::fs::write(mnt.join("inside"), b"on another file system").unwrap();
    let mut sc = Scanner::new(&src, ScanOptions::default()).unwrap();
    let v: Vec<Entry> = (&mut sc).collect::<Result<_, _>>().unwrap();
    let names: Vec<&[u8]> = v.iter().map(|e| e.path.as_slice()).collect();
    assert_eq!(names, [&b""[..], b"mnt", b"top"]);
    assert_eq!(find(&v, b"mnt").mode, 0o750, "the mounted root's attributes");
    assert_eq!(sc.stats().mount_points, 1);
    let opts = ScanOptions { cross_mounts: true, ..Default::default() };
    let v: Vec<Entry> = Scanner::new(&src, opts).unwrap().collect::<Result<_, _>>().unwrap();
    assert!(v.iter().any(|e| e.path == b"mnt/inside"));
}

/// By default a restore withholds what could grant privileges: a setuid/setgid file keeps its
/// content without those bits, a device node becomes an empty regular file, `security.*`
/// xattrs are not set — each listed in `withheld`; `special` restores them as described.
#[test]
fn restore_withholds_devices_setuid_and_security_xattrs_by_default() {
    let s = Scratch::new("withheld");
    let src = s.mkdir("src");
    std::fs::write(src.join("suid"), b"#!/bin/sh\n").unwrap();
    std::fs::set_permissions(
        src.join("suid"),
        std::os::unix::fs::PermissionsExt::from_mode(0o6755),
    )
    .unwrap();
    let root = is_root();
    if root {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            src.join("zero"),
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o4666),
            rustix::fs::makedev(1, 5),
        )
        .unwrap();
        std::fs::set_permissions(
            src.join("zero"),
            std::os::unix::fs::PermissionsExt::from_mode(0o4666),
        )
        .unwrap();
        // A file capability (cap_net_raw+ep), as setcap writes it (VFS_CAP_REVISION_2).
        let cap = [0x01, 0, 0, 0x02, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        std::fs::write(src.join("capped"), b"x").unwrap();
        rustix::fs::setxattr(
            src.join("capped"),
            "security.capability",
            &cap,
            rustix::fs::XattrFlags::empty(),
        )
        .unwrap();
    } else {
        eprintln!("skip (part): device node and security.capability need root");
    }
    let store_dir = s.join("store");
    let mut store = DirStore::open(&store_dir).unwrap();
    let mut scanner = Scanner::new(&src, ScanOptions::default()).unwrap();
    let mut entries = Vec::new();
    while let Some(e) = scanner.next_with(&mut store) {
        entries.push(e.unwrap());
    }

    let dest = s.mkdir("safe");
    let st =
        restore(&entries, &mut store, open_dir(&dest).as_fd(), &RestoreOptions::default()).unwrap();
    let what = |p: &str| -> Vec<String> {
        st.withheld.iter().filter(|w| w.path == p.as_bytes()).map(|w| w.what.clone()).collect()
    };
    let m = std::fs::metadata(dest.join("suid")).unwrap();
    assert_eq!(m.mode() & 0o7777, 0o755);
    assert_eq!(std::fs::read(dest.join("suid")).unwrap(), b"#!/bin/sh\n");
    assert_eq!(what("suid"), ["setuid and setgid bits (mode 6755 restored as 0755)"]);
    if root {
        let m = std::fs::symlink_metadata(dest.join("zero")).unwrap();
        assert!(m.file_type().is_file() && m.len() == 0, "{m:?}");
        assert_eq!(m.mode() & 0o7777, 0o666);
        assert_eq!(what("zero"), ["character device 1:5 (an empty regular file in its place)"]);
        assert!(rustix::fs::getxattr(dest.join("capped"), "security.capability", &mut [0u8; 64])
            .is_err());
        assert_eq!(what("capped"), ["xattr security.capability (not set)"]);
        assert_eq!(st.withheld_count, 3);
    } else {
        assert_eq!(st.withheld_count, 1);
    }
    assert!(st.to_string().contains("withheld for safety"), "{st}");

    let dest = s.mkdir("special");
    let opts = RestoreOptions { special: true, ..RestoreOptions::default() };
    let st = restore(&entries, &mut store, open_dir(&dest).as_fd(), &opts).unwrap();
    assert_eq!(st.withheld_count, 0);
    assert!(diff_trees(&src, &dest, false).is_empty(), "{}", show(&diff_trees(&src, &dest, false)));
}
