//! Directory-tree snapshots stored in a trace: entries equal a scan, contents are stored once
//! each, the start state restores exactly, a trace cut after the snapshot still has it.

use std::collections::BTreeSet;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use ra_fsstate::{diff, DiffOptions, Entry, ScanOptions, Scanner};
use ra_trace::{Error, Phase, TraceReader, TraceWriter, WriterConfig};

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ra-trace-snap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::canonicalize(d).unwrap()
}

fn scan(p: &Path) -> Vec<Entry> {
    Scanner::new(p, ScanOptions::default()).unwrap().collect::<Result<_, _>>().unwrap()
}

fn tree(root: &Path) {
    std::fs::create_dir_all(root.join("d/e")).unwrap();
    let big: Vec<u8> = (0..2_500_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(root.join("big"), &big).unwrap();
    std::fs::write(root.join("d/big-copy"), &big).unwrap();
    std::fs::write(root.join("d/e/same1"), b"same").unwrap();
    std::fs::write(root.join("same2"), b"same").unwrap();
    std::fs::write(root.join("old"), b"to be removed").unwrap();
    std::fs::write(root.join("empty"), b"").unwrap();
    std::os::unix::fs::symlink("/nowhere", root.join("link")).unwrap();
    std::fs::hard_link(root.join("old"), root.join("d/old-link")).unwrap();
}

fn distinct_blob_digests(r: &TraceReader) -> BTreeSet<Vec<u8>> {
    let mut out = BTreeSet::new();
    for &off in r.blob_offsets() {
        let e = r.dataseries().read_extent_at(off).unwrap();
        for i in 0..e.len() {
            out.insert(e.bytes(i, 0).unwrap().to_vec());
        }
    }
    out
}

#[test]
fn start_and_end_states_round_trip_and_restore() {
    let t = tempdir("roundtrip");
    let dir = t.join("tree");
    tree(&dir);
    let before = scan(&dir);
    let path = t.join("t.ds");
    // Small extents: entries and blobs span several extents each.
    let cfg = WriterConfig { extent_target_bytes: 64 << 10, ..WriterConfig::default() };
    let mut w = TraceWriter::create(&path, &[("command", b"test")], cfg).unwrap();
    let start = w.record_snapshot(0, Phase::Start, &dir, ScanOptions::default()).unwrap();
    std::fs::write(dir.join("new"), b"x").unwrap();
    std::fs::remove_file(dir.join("old")).unwrap();
    let after = scan(&dir);
    let end = w.record_snapshot(0, Phase::End, &dir, ScanOptions::default()).unwrap();
    w.finish().unwrap();

    assert_eq!(start.entries, before.len() as u64);
    assert_eq!(start.blobs, 3, "big, same, to be removed (and the empty content)");
    assert_eq!(end.blobs, 0, "the end state stores no contents");
    let r = TraceReader::open(&path).unwrap();
    assert_eq!(r.info_value("schema_version"), Some(&b"6"[..]));
    let snaps = r.snapshots();
    assert_eq!(snaps.len(), 1);
    assert_eq!(snaps[0].dir, dir.as_os_str().as_encoded_bytes());
    assert_eq!(snaps[0].start.as_ref(), Some(&start));
    assert_eq!(snaps[0].end.as_ref(), Some(&end));
    assert!(start.scan_began_ns <= start.scan_ended_ns && start.scan_ended_ns <= end.scan_began_ns);

    let got_start: Vec<Entry> =
        r.snapshot_entries(0, Phase::Start).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(got_start, before);
    let got_end: Vec<Entry> =
        r.snapshot_entries(0, Phase::End).unwrap().collect::<Result<_, _>>().unwrap();
    // The end state differs from the start by `new` and `old` (and the root's mtime).
    assert_eq!(got_end, after);
    let m = r.snapshot_manifest(0, Phase::End).unwrap();
    assert_eq!(m.entries, after);
    assert_eq!(m.header.root.as_deref(), Some(dir.as_os_str().as_encoded_bytes()));

    // Each distinct non-empty content once, the empty one too (4 = big, same, to be
    // removed, empty).
    let digests = distinct_blob_digests(&r);
    let want: BTreeSet<Vec<u8>> =
        before.iter().filter_map(|e| e.digest.map(|d| d.0.to_vec())).collect();
    let nonempty: BTreeSet<Vec<u8>> = before
        .iter()
        .filter(|e| e.size > 0)
        .filter_map(|e| e.digest.map(|d| d.0.to_vec()))
        .collect();
    assert_eq!(digests, nonempty, "every non-empty content, once");
    assert_eq!(want.len(), 4);

    // Restore the start state into an empty directory: identical to the tree before, times
    // included.
    let dest = t.join("restored");
    std::fs::create_dir(&dest).unwrap();
    let stats = r.restore_snapshot(0, std::fs::File::open(&dest).unwrap().as_fd()).unwrap();
    assert_eq!(stats.entries, before.len() as u64);
    assert_eq!(stats.unused_chunks, 0);
    assert_eq!(stats.copies, 2, "d/big-copy and one of the `same` files");
    let d = diff(
        before.iter().cloned().map(Ok),
        Scanner::new(&dest, ScanOptions::default()).unwrap(),
        &DiffOptions { times: true, ..Default::default() },
    )
    .collect_all()
    .unwrap();
    assert!(d.0.is_empty(), "{:?}", d.0);
    // The replay-verification helper: the end state against the tree now is equal, the start
    // state is not.
    let open = |p: &Path| std::os::fd::OwnedFd::from(std::fs::File::open(p).unwrap());
    let opts = DiffOptions { times: true, ..Default::default() };
    let (d, s) = r.diff_snapshot(0, Phase::End, open(&dir), &opts).unwrap().collect_all().unwrap();
    assert!(d.is_empty() && s.equal(), "{d:?}");
    let (d, _) =
        r.diff_snapshot(0, Phase::Start, open(&dir), &opts).unwrap().collect_all().unwrap();
    let paths: Vec<&[u8]> = d.iter().map(|x| x.path()).collect();
    assert_eq!(paths, [&b""[..], b"new", b"old"], "{d:?}");
    // Not the end state.
    assert_eq!(
        diff(
            after.iter().cloned().map(Ok),
            scan(&dest).into_iter().map(Ok),
            &DiffOptions::default()
        )
        .count(),
        2
    );
}

#[test]
fn two_snapshots_share_contents() {
    let t = tempdir("two");
    let (a, b) = (t.join("a"), t.join("b"));
    tree(&a);
    std::fs::create_dir(&b).unwrap();
    std::fs::write(b.join("same"), b"same").unwrap();
    std::fs::write(b.join("other"), b"other").unwrap();
    let path = t.join("t.ds");
    let mut w = TraceWriter::create(&path, &[], WriterConfig::default()).unwrap();
    w.record_snapshot(0, Phase::Start, &a, ScanOptions::default()).unwrap();
    let sb = w.record_snapshot(1, Phase::Start, &b, ScanOptions::default()).unwrap();
    assert_eq!(sb.blobs, 1, "only `other` is new");
    w.record_snapshot(1, Phase::End, &b, ScanOptions::default()).unwrap();
    w.record_snapshot(0, Phase::End, &a, ScanOptions::default()).unwrap();
    w.finish().unwrap();
    let r = TraceReader::open(&path).unwrap();
    assert_eq!(r.snapshots().len(), 2);
    assert_eq!(r.snapshot(1).unwrap().dir, b.as_os_str().as_encoded_bytes());
    let dest = t.join("restored-b");
    std::fs::create_dir(&dest).unwrap();
    r.restore_snapshot(1, std::fs::File::open(&dest).unwrap().as_fd()).unwrap();
    assert_eq!(std::fs::read(dest.join("same")).unwrap(), b"same");
    let got: Vec<Entry> =
        r.snapshot_entries(0, Phase::End).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, scan(&a));
    assert!(matches!(r.snapshot(2), Err(Error::NoSuchSnapshot { index: 2, count: 2 })));
}

#[test]
fn a_trace_cut_after_the_start_state_keeps_it() {
    let t = tempdir("cut");
    let dir = t.join("tree");
    tree(&dir);
    let before = scan(&dir);
    let path = t.join("t.ds");
    let mut w = TraceWriter::create(&path, &[], WriterConfig::default()).unwrap();
    w.record_snapshot(0, Phase::Start, &dir, ScanOptions::default()).unwrap();
    // As if the recorder were killed now: the file as it is, without index and trailer.
    let cut = t.join("cut.ds");
    std::fs::copy(&path, &cut).unwrap();
    drop(w);
    let r = TraceReader::open(&cut).unwrap();
    assert!(!r.is_complete());
    let s = r.snapshot(0).unwrap();
    assert!(s.start.is_some() && s.end.is_none());
    let got: Vec<Entry> =
        r.snapshot_entries(0, Phase::Start).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, before);
    assert!(matches!(
        r.snapshot_entries(0, Phase::End),
        Err(Error::SnapshotIncomplete { index: 0, phase: "end" })
    ));
    let dest = t.join("restored");
    std::fs::create_dir(&dest).unwrap();
    r.restore_snapshot(0, std::fs::File::open(&dest).unwrap().as_fd()).unwrap();
    assert_eq!(scan(&dest).len(), before.len());
}
