//! Hostile and damaged input: manifests with paths that try to leave the tree, manifests cut
//! short or corrupted, and entries that try to reach outside through symlinks and hard links.
//! Restore must refuse them and never write outside its destination.

mod common;

use std::collections::BTreeMap;
use std::os::fd::AsFd;
use std::path::Path;

use common::*;
use ra_fsstate::{
    restore, Digest, DirStore, Entry, Error, Kind, LineProblem, Manifest, ManifestReader,
    RestoreOptions,
};

fn dir(path: &[u8]) -> Entry {
    Entry {
        path: path.to_vec(),
        kind: Kind::Dir,
        mode: 0o755,
        uid: 0,
        gid: 0,
        size: 0,
        digest: None,
        target: None,
        rdev: None,
        xattrs: BTreeMap::new(),
        link: None,
        mtime_ns: 0,
    }
}

fn file(path: &[u8], content: &[u8]) -> Entry {
    Entry {
        kind: Kind::File,
        mode: 0o644,
        size: content.len() as u64,
        digest: Some(Digest::of(content)),
        ..dir(path)
    }
}

fn symlink(path: &[u8], target: &[u8]) -> Entry {
    Entry {
        kind: Kind::Symlink,
        mode: 0o777,
        size: target.len() as u64,
        target: Some(target.to_vec()),
        ..dir(path)
    }
}

/// A sandbox: `outside/` holds a sentinel tree that must not change; `dest/` is the restore
/// destination.
struct Sandbox {
    s: Scratch,
    before: Vec<Entry>,
}

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        let s = Scratch::new(name);
        let outside = s.mkdir("outside");
        std::fs::write(outside.join("sentinel"), b"keep me").unwrap();
        std::fs::create_dir(outside.join("sub")).unwrap();
        s.mkdir("dest");
        let before = scan(&s.0);
        Sandbox { s, before }
    }

    fn outside(&self) -> std::path::PathBuf {
        self.s.join("outside")
    }

    /// Restore `entries` (content for `f`-style files from `store`) into dest; the error.
    fn restore_err(&self, entries: &[Entry], store: Option<&Path>) -> Error {
        let dest = std::fs::File::open(self.s.join("dest")).unwrap();
        let r = match store {
            Some(p) => {
                restore(entries, &mut DirStore::open(p).unwrap(), dest.as_fd(), &Default::default())
            }
            None => restore(
                entries,
                &mut ra_fsstate::NoContent,
                dest.as_fd(),
                &RestoreOptions::default(),
            ),
        };
        r.expect_err("restore must refuse")
    }

    /// Nothing outside dest changed: the whole scratch tree, dest's contents left out, is
    /// as it was.
    fn assert_outside_untouched(&self) {
        let keep = |e: &Entry| !e.path.starts_with(b"dest/") && !e.path.starts_with(b"store");
        let after: Vec<Entry> = scan(&self.s.0).into_iter().filter(keep).collect();
        let before: Vec<Entry> = self.before.iter().filter(|e| keep(e)).cloned().collect();
        let strip = |v: Vec<Entry>| -> Vec<Entry> {
            v.into_iter()
                .map(|mut e| {
                    // dest's own mtime changes when the restore creates things in it.
                    if e.path == b"dest" || e.path.is_empty() {
                        e.mtime_ns = 0;
                    }
                    e
                })
                .collect()
        };
        assert_eq!(strip(after), strip(before));
        assert!(!Path::new("/x").exists() && !Path::new("/etc/x").exists());
    }
}

#[test]
fn hostile_paths_in_a_manifest_are_rejected_with_their_line() {
    for (path, why) in [
        ("../x", "`..`"),
        ("/etc/x", "absolute"),
        ("a/../../x", "`..`"),
        ("a\\u0000b", "NUL"),
        ("a//b", "empty component"),
        ("./a", "`.`"),
        ("a/", "empty component"),
    ] {
        let text = format!(
            "{{\"format\":\"reanimator-manifest\",\"version\":1}}\n\
             {{\"path\":\"\",\"kind\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,\"size\":0,\"mtime_ns\":0}}\n\
             {{\"path\":\"{path}\",\"kind\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,\"size\":0,\"mtime_ns\":0}}\n\
             {{\"end\":{{\"entries\":2}}}}\n"
        );
        let err = Manifest::read_from(text.as_bytes()).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::ManifestEntry { line: 3, .. }), "{path}: {msg}");
        assert!(msg.contains("line 3") && msg.contains(why), "{path}: {msg}");
    }
    // The same for hex paths and for hard-link paths.
    let text = "{\"format\":\"reanimator-manifest\",\"version\":1}\n\
        {\"path\":\"\",\"kind\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,\"size\":0,\"mtime_ns\":0}\n\
        {\"path_hex\":\"2e2e2f78\",\"kind\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,\"size\":0,\"mtime_ns\":0}\n";
    assert!(matches!(
        Manifest::read_from(text.as_bytes()),
        Err(Error::ManifestEntry { line: 3, .. })
    ));
    let text = format!(
        "{{\"format\":\"reanimator-manifest\",\"version\":1}}\n\
         {{\"path\":\"\",\"kind\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,\"size\":0,\"mtime_ns\":0}}\n\
         {{\"path\":\"x\",\"kind\":\"file\",\"mode\":\"0644\",\"uid\":0,\"gid\":0,\"size\":0,\"blake3\":\"{}\",\"link\":\"../etc/passwd\",\"mtime_ns\":0}}\n",
        Digest::of(b"")
    );
    let err = Manifest::read_from(text.as_bytes()).unwrap_err();
    assert!(matches!(err, Error::ManifestEntry { line: 3, .. }), "{err}");
}

#[test]
fn restore_rejects_hostile_paths_and_writes_nothing_outside() {
    let sb = Sandbox::new("hostile-paths");
    for bad in [&b"../x"[..], b"/etc/x", b"a/../../x", b"a\0b", b"a/./b", b"a//b"] {
        let entries = vec![dir(b""), dir(b"a"), file(bad, b"")];
        let err = sb.restore_err(&entries, None);
        assert!(matches!(err, Error::BadPath { .. }), "{}: {err}", ra_fsstate::escape(bad));
        assert_eq!(std::fs::read_dir(sb.s.join("dest")).unwrap().count(), 0, "nothing created");
    }
    // Out of order, duplicated, or without the root first.
    let err = sb.restore_err(&[dir(b""), dir(b"b"), dir(b"a")], None);
    assert!(matches!(err, Error::RestoreOrder { .. }), "{err}");
    let err = sb.restore_err(&[dir(b""), dir(b"a"), dir(b"a")], None);
    assert!(matches!(err, Error::RestoreOrder { .. }), "{err}");
    let err = sb.restore_err(&[dir(b"a")], None);
    assert!(matches!(err, Error::NoRoot { .. }), "{err}");
    sb.assert_outside_untouched();
}

#[test]
fn restore_never_follows_a_symlink_it_created() {
    let sb = Sandbox::new("hostile-symlinks");
    let outside = sb.outside();
    let out = outside.as_os_str().as_encoded_bytes();
    // A symlink to the outside directory, then a file "beneath" it.
    let store = sb.s.join("store");
    {
        // Put the content in a store so the only thing stopping the write is the symlink.
        use ra_fsstate::BlobSink;
        let mut st = DirStore::open(&store).unwrap();
        let d = Digest::of(b"evil");
        assert!(st.wants(&d, 4));
        st.chunk(&d, 0, b"evil").unwrap();
        st.finish(&d, 4).unwrap();
    }
    let attempts: Vec<Vec<Entry>> = vec![
        vec![dir(b""), symlink(b"l", out), file(b"l/evil", b"evil")],
        vec![dir(b""), symlink(b"l", out), dir(b"l/sub2")],
        vec![dir(b""), symlink(b"l", out), symlink(b"l/sl", b"x")],
        vec![dir(b""), symlink(b"l", b".."), file(b"l/evil", b"evil")],
        vec![
            dir(b""),
            symlink(b"l", out),
            Entry { link: Some(b"l/sentinel".to_vec()), ..file(b"m", b"keep me") },
        ],
    ];
    for entries in attempts {
        let dest = sb.s.join("dest");
        make_writable(&dest);
        std::fs::remove_dir_all(&dest).unwrap();
        std::fs::create_dir(&dest).unwrap();
        let err = sb.restore_err(&entries, Some(&store));
        assert!(matches!(err, Error::Restore { .. }), "{err}");
        assert!(!outside.join("evil").exists() && !outside.join("sub2").exists());
        assert!(!outside.join("sl").exists());
    }
    // A hard link to a symlink that points outside gives a second symlink, never a write
    // through it; the content goes nowhere because that entry is a link.
    let dest = sb.s.join("dest");
    std::fs::remove_dir_all(&dest).unwrap();
    std::fs::create_dir(&dest).unwrap();
    let sentinel = outside.join("sentinel");
    let entries = vec![
        dir(b""),
        symlink(b"l", sentinel.as_os_str().as_encoded_bytes()),
        Entry { link: Some(b"l".to_vec()), ..file(b"m", b"evil") },
    ];
    let d = std::fs::File::open(&dest).unwrap();
    restore(&entries, &mut DirStore::open(&store).unwrap(), d.as_fd(), &Default::default())
        .unwrap();
    assert!(std::fs::symlink_metadata(dest.join("m")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&sentinel).unwrap(), b"keep me");
    // Restore has not followed anything and the sentinel tree is as it was.
    std::fs::remove_dir_all(&dest).unwrap();
    std::fs::create_dir(&dest).unwrap();
    sb.assert_outside_untouched();
}

#[test]
fn content_chunks_past_the_end_are_rejected() {
    struct Bad;
    impl ra_fsstate::ContentSource for Bad {
        fn for_each_chunk(&mut self, f: &mut ra_fsstate::ChunkFn<'_>) -> ra_fsstate::Result<()> {
            f(&Digest::of(b"abc"), 2, b"xyz")
        }
    }
    let sb = Sandbox::new("bad-chunk");
    let dest = std::fs::File::open(sb.s.join("dest")).unwrap();
    let err =
        restore(&vec![dir(b""), file(b"f", b"abc")], &mut Bad, dest.as_fd(), &Default::default())
            .unwrap_err();
    assert!(matches!(err, Error::ChunkOutOfRange { .. }), "{err}");
}

fn manifest_lines(n_files: usize) -> Vec<String> {
    let s = Scratch::new(&format!("lines{n_files}"));
    let src = s.mkdir("src");
    for i in 0..n_files {
        std::fs::write(src.join(format!("f{i}")), format!("{i}")).unwrap();
    }
    let m = Manifest::scan(&src, Default::default()).unwrap();
    let out = m.write_to(Vec::new()).unwrap();
    String::from_utf8(out).unwrap().lines().map(str::to_string).collect()
}

fn read(lines: &[String], trailing_newline: bool) -> Result<Manifest, Error> {
    let mut t = lines.join("\n");
    if trailing_newline {
        t.push('\n');
    }
    Manifest::read_from(t.as_bytes())
}

#[test]
fn damaged_manifests_name_the_line() {
    let good = manifest_lines(4); // header, root, 4 files, end = 7 lines
    assert_eq!(good.len(), 7);
    assert_eq!(read(&good, true).unwrap().entries.len(), 5);
    // Truncated at a line boundary: no closing line.
    let err = read(&good[..5], true).unwrap_err();
    assert!(matches!(err, Error::ManifestTruncated { line: 5 }), "{err}");
    assert!(err.to_string().contains("truncated"), "{err}");
    // Truncated inside a line.
    let mut cut = good[..4].to_vec();
    cut.push(good[4][..good[4].len() / 2].to_string());
    let err = read(&cut, false).unwrap_err();
    assert!(matches!(err, Error::ManifestJson { line: 5, .. }), "{err}");
    assert!(err.to_string().starts_with("manifest line 5: not valid JSON"), "{err}");
    // A corrupt line in the middle.
    let mut bad = good.clone();
    bad[3] = bad[3].replace("\"kind\":\"file\"", "\"kind\":\"flie\"");
    let err = read(&bad, true).unwrap_err();
    assert!(
        matches!(err, Error::ManifestLine { line: 4, problem: LineProblem::BadValue("kind") }),
        "{err}"
    );
    let mut bad = good.clone();
    bad[3] = bad[3].replace("\"blake3\":\"", "\"blake3\":\"zz");
    assert!(matches!(read(&bad, true), Err(Error::ManifestLine { line: 4, .. })));
    let mut bad = good.clone();
    bad[3] = bad[3].replace("\"uid\":", "\"uid\":-");
    assert!(matches!(read(&bad, true), Err(Error::ManifestJson { line: 4, .. })));
    let mut bad = good.clone();
    bad[3] = bad[3].replace("\"mode\":\"0644\"", "\"mode\":\"0999\"");
    assert!(matches!(read(&bad, true), Err(Error::ManifestLine { line: 4, .. })));
    // Out of order, duplicated.
    let mut bad = good.clone();
    bad.swap(3, 4);
    assert!(matches!(read(&bad, true), Err(Error::ManifestOrder { line: 5, .. })));
    let mut bad = good.clone();
    bad[4] = bad[3].clone();
    assert!(matches!(read(&bad, true), Err(Error::ManifestOrder { line: 5, .. })));
    // The closing count disagrees; text after the closing line.
    let mut bad = good.clone();
    bad[6] = "{\"end\":{\"entries\":9}}".into();
    assert!(matches!(
        read(&bad, true),
        Err(Error::ManifestLine { line: 7, problem: LineProblem::Count { .. } })
    ));
    let mut bad = good.clone();
    bad.push("{}".into());
    assert!(matches!(
        read(&bad, true),
        Err(Error::ManifestLine { line: 8, problem: LineProblem::AfterEnd })
    ));
    // Not a manifest at all, a newer version, an empty file, a missing root.
    assert!(matches!(
        Manifest::read_from(&b"hello\n"[..]),
        Err(Error::ManifestLine { line: 1, problem: LineProblem::NotAManifest })
    ));
    assert!(matches!(
        Manifest::read_from(&b""[..]),
        Err(Error::ManifestLine { line: 1, problem: LineProblem::NotAManifest })
    ));
    let mut bad = good.clone();
    bad[0] = bad[0].replace("\"version\":2", "\"version\":3");
    assert!(matches!(
        read(&bad, true),
        Err(Error::ManifestLine { line: 1, problem: LineProblem::Version(3) })
    ));
    let mut bad = good.clone();
    bad.remove(1);
    assert!(matches!(
        read(&bad, true),
        Err(Error::ManifestLine { line: 2, problem: LineProblem::NoRoot })
    ));
    // Garbage bytes.
    let mut bytes = good.join("\n").into_bytes();
    bytes[good[0].len() + 10] = 0xff;
    assert!(matches!(Manifest::read_from(&bytes[..]), Err(Error::ManifestJson { line: 2, .. })));
}

#[test]
fn a_very_long_line_is_an_error_not_a_memory_hog() {
    let mut t = b"{\"format\":\"reanimator-manifest\",\"version\":1}\n".to_vec();
    t.extend(std::iter::repeat_n(b'x', ra_fsstate::manifest::MAX_LINE_BYTES + 10));
    let mut rd = ManifestReader::new(&t[..]).unwrap();
    let err = rd.next().unwrap().unwrap_err();
    assert!(
        matches!(err, Error::ManifestLine { line: 2, problem: LineProblem::TooLong(_) }),
        "{err}"
    );
}
