//! `reanimator snapshot`, `reanimator diff` and `reanimator record --snapshot` end to end, on
//! real trees: manifests equal scans, diff's lines and exit status, the trace's start and end
//! states equal snapshots taken before and after the command, the start state restores
//! exactly, contents are stored once, a killed recorder leaves the start state readable.

mod common;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use ra_fsstate::{Entry, Manifest, ScanOptions, Scanner};
use ra_trace::{Phase, TraceReader};

use common::bin;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// True when running as root; otherwise prints the skip reason, or fails when
/// REANIMATOR_REQUIRE_PRIVILEGED=1 (CI runs as root and sets it).
fn privileged(what: &str) -> bool {
    if is_root() {
        return true;
    }
    if std::env::var("REANIMATOR_REQUIRE_PRIVILEGED").as_deref() == Ok("1") {
        panic!("{what} needs root and REANIMATOR_REQUIRE_PRIVILEGED=1");
    }
    eprintln!("skip: {what}: needs root");
    false
}

/// A scratch directory (canonical path), removed when the test passes and kept when it fails.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("ra-snapcli-{}-{name}", std::process::id()));
        if d.exists() {
            chmod_all(&d);
            let _ = std::fs::remove_dir_all(&d);
        }
        std::fs::create_dir_all(&d).unwrap();
        Scratch(std::fs::canonicalize(d).unwrap())
    }
    fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            chmod_all(&self.0);
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn chmod_all(d: &Path) {
    if std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()) {
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            chmod_all(&e.path());
        }
    }
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn run(args: &[&OsStr]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scan(p: &Path) -> Vec<Entry> {
    Scanner::new(p, ScanOptions::default()).unwrap().collect::<Result<_, _>>().unwrap()
}

/// A tree with most kinds of entries (root adds a device and foreign owners).
fn tree(root: &Path) {
    let w = |rel: &str, data: &[u8]| std::fs::write(root.join(rel), data).unwrap();
    std::fs::create_dir_all(root.join("src/deep/er")).unwrap();
    w("src/deep/er/file.c", b"int main() { return 0; }\n");
    let big: Vec<u8> =
        (0..3_000_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    w("big.bin", &big);
    w("src/big-copy.bin", &big);
    w("old", b"removed by the command\n");
    w("empty", b"");
    {
        let f = std::fs::File::create(root.join("sparse")).unwrap();
        f.set_len(9 << 20).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, b"data in the middle", 4 << 20).unwrap();
    }
    std::os::unix::fs::symlink("big.bin", root.join("link")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("outside")).unwrap();
    std::os::unix::fs::symlink("gone", root.join("dangling")).unwrap();
    std::fs::hard_link(root.join("old"), root.join("src/old-hardlink")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    rustix::fs::setxattr(
        root.join("big.bin"),
        "user.origin",
        b"test",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    w("setuid", b"#!/bin/sh\n");
    chmod(&root.join("setuid"), 0o4755);
    w("readonly", b"r\n");
    chmod(&root.join("readonly"), 0o444);
    std::fs::create_dir(root.join("ro-dir")).unwrap();
    w("ro-dir/in", b"in\n");
    chmod(&root.join("ro-dir"), 0o555);
    std::fs::write(root.join(OsStr::from_bytes(b"latin1-\xe9")), b"x").unwrap();
    w("new\nline", b"y");
    if is_root() {
        w("secret", b"0000\n");
        chmod(&root.join("secret"), 0);
        std::os::unix::fs::chown(root.join("secret"), Some(4321), Some(8765)).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("zero"),
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o666),
            rustix::fs::makedev(1, 5),
        )
        .unwrap();
    }
}

#[test]
fn snapshot_writes_a_manifest_equal_to_the_tree() {
    let s = Scratch::new("manifest");
    let dir = s.join("tree");
    std::fs::create_dir(&dir).unwrap();
    tree(&dir);
    let m = s.join("m.jsonl");
    let o = run(&[OsStr::new("snapshot"), dir.as_os_str(), OsStr::new("-o"), m.as_os_str()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("entries"), "{}", text(&o.stderr));
    let manifest = Manifest::load(&m).unwrap();
    assert_eq!(manifest.entries, scan(&dir));
    assert_eq!(manifest.header.root.as_deref(), Some(dir.as_os_str().as_bytes()));
    // To standard output, quietly: the same bytes apart from the header's creation time.
    let o = run(&[
        OsStr::new("snapshot"),
        dir.as_os_str(),
        OsStr::new("-o"),
        OsStr::new("-"),
        OsStr::new("-q"),
    ]);
    assert!(o.status.success());
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
    let from_stdout = Manifest::read_from(&o.stdout[..]).unwrap();
    assert_eq!(from_stdout.entries, manifest.entries);
    // diff of the manifest against the tree: equal, exit 0.
    let o = run(&[OsStr::new("diff"), m.as_os_str(), dir.as_os_str(), OsStr::new("--times")]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).starts_with("no differences ("), "{}", text(&o.stdout));
    // With --store: the store holds each distinct content once.
    let store = s.join("objects");
    let o = run(&[
        OsStr::new("snapshot"),
        dir.as_os_str(),
        OsStr::new("-o"),
        s.join("m2.jsonl").as_os_str(),
        OsStr::new("--store"),
        store.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let objects: usize = std::fs::read_dir(&store)
        .unwrap()
        .map(|d| std::fs::read_dir(d.unwrap().path()).unwrap().count())
        .sum();
    let distinct: BTreeSet<_> =
        manifest.entries.iter().filter(|e| e.size > 0).filter_map(|e| e.digest).collect();
    assert_eq!(objects, distinct.len() + 1, "distinct contents + the empty one");
    // A manifest and a store written inside the tree are left out of it.
    let o = run(&[
        OsStr::new("snapshot"),
        dir.as_os_str(),
        OsStr::new("-o"),
        dir.join("self.jsonl").as_os_str(),
        OsStr::new("--store"),
        dir.join("objs").as_os_str(),
        OsStr::new("-q"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let inner = Manifest::load(&dir.join("self.jsonl")).unwrap();
    assert_eq!(inner.entries.len(), manifest.entries.len());
    assert!(!inner
        .entries
        .iter()
        .any(|e| e.path.starts_with(b"self") || e.path.starts_with(b"objs")));
    // A directory that does not exist, an output that cannot be created: one line, exit 2.
    for (d, out, want) in [
        (s.join("nope"), s.join("x.jsonl"), "cannot scan"),
        (dir.clone(), s.join("no/such/x.jsonl"), "cannot create"),
    ] {
        let o = run(&[OsStr::new("snapshot"), d.as_os_str(), OsStr::new("-o"), out.as_os_str()]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.lines().count() == 1 && err.contains(want), "{err}");
    }
}

#[test]
fn diff_lines_json_quiet_ignore_and_exit_status() {
    let s = Scratch::new("diff");
    let (a, b) = (s.join("a"), s.join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("same"), b"same").unwrap();
        std::fs::write(d.join("grows"), b"0123456789").unwrap();
        std::fs::write(d.join("sub/x"), b"x").unwrap();
        std::os::unix::fs::symlink("same", d.join("l")).unwrap();
    }
    std::fs::write(a.join("only-a"), b"aaaa").unwrap();
    std::fs::write(b.join("only-b\n"), b"bb").unwrap();
    std::fs::write(b.join("grows"), b"0123456789ab").unwrap();
    chmod(&b.join("same"), 0o600);
    std::fs::remove_file(b.join("l")).unwrap();
    std::os::unix::fs::symlink("grows", b.join("l")).unwrap();
    std::fs::write(b.join("sub/x"), b"y").unwrap();
    let diff = |extra: &[&str]| {
        let mut c = bin();
        c.arg("diff").arg(&a).arg(&b).args(extra);
        c.output().unwrap()
    };
    let o = diff(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "~ grows: size 10 -> 12, content differs",
            "~ l: size 4 -> 5, target \"same\" -> \"grows\"",
            "- only-a (file, 4 B)",
            "+ only-b\\n (file, 2 B)",
            "~ same: mode 0644 -> 0600",
            "~ sub/x: content differs",
            "1 added, 1 removed, 4 changed (A: 7 entries, B: 7 entries)",
        ],
        "{out}"
    );
    // --json: one object per difference, then the summary.
    let o = diff(&["--json"]);
    assert_eq!(o.status.code(), Some(1));
    let objs: Vec<serde_json::Value> =
        text(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(objs.len(), 7);
    assert_eq!(objs[0]["change"], "changed");
    assert_eq!(objs[0]["attrs"]["size"], serde_json::json!([10, 12]));
    assert_eq!(objs[3]["path"], "only-b\n");
    assert_eq!(objs[4]["attrs"]["mode"], serde_json::json!(["0644", "0600"]));
    assert_eq!(objs[6]["summary"]["equal"], false);
    assert_eq!(objs[6]["summary"]["changed"], 4);
    // -q: nothing printed, the status tells.
    let o = diff(&["-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    let o = bin().args(["diff", "-q"]).arg(&a).arg(&a).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
    // --ignore: a glob leaves out its matches and everything beneath them.
    let o = diff(&["--ignore", "sub", "--ignore", "only-*", "--ignore", "[gls]*"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("no differences") && text(&o.stdout).contains("ignored"));
    // --times: mtimes differ for files written at different times.
    std::fs::File::open(a.join("sub/x"))
        .unwrap()
        .set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_000_000))
        .unwrap();
    let o = diff(&["--times"]);
    assert!(text(&o.stdout)
        .contains("~ sub/x: content differs, mtime 1970-01-12T13:46:40.000000000Z -> "));
    // A bad glob, a missing input, a trace without :start/:end, a damaged manifest: one
    // line each, exit 2.
    let bad = s.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"format\":\"reanimator-manifest\",\"version\":1}\n{\"path\":\"\",\"kind\":\"dir\"}\n",
    )
    .unwrap();
    let trace = s.join("t.ds");
    std::fs::write(&trace, b"DSv1 not really").unwrap();
    for (args, want) in [
        (
            vec![a.as_os_str(), b.as_os_str(), OsStr::new("--ignore"), OsStr::new("[a-")],
            "--ignore [a-",
        ),
        (vec![a.as_os_str(), s.join("nope").as_os_str()], "nope: no such file or directory"),
        (vec![a.as_os_str(), trace.as_os_str()], ":start or"),
        (vec![bad.as_os_str(), a.as_os_str()], "manifest line 2"),
    ] {
        let mut c = bin();
        c.arg("diff").args(&args);
        let o = c.output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("reanimator: error: ") && err.contains(want), "{err}");
    }
    let o = bin().args(["diff", "--help"]).output().unwrap();
    let help = text(&o.stdout);
    assert!(help.contains("Exit status") && help.contains("TRACE.ds:start"), "{help}");
}

fn record_with_snapshot(out: &Path, dir: &Path, cmd: &str) -> Output {
    bin()
        .args(["record", "-o"])
        .arg(out)
        .arg("--snapshot")
        .arg(dir)
        .args(["--", "sh", "-c", cmd])
        .output()
        .unwrap()
}

#[test]
fn record_snapshot_stores_start_and_end_states() {
    let s = Scratch::new("record");
    let dir = s.join("data");
    std::fs::create_dir(&dir).unwrap();
    tree(&dir);
    // Snapshots taken by `reanimator snapshot` right before and right after the command.
    let before = s.join("before.jsonl");
    let o = run(&[
        OsStr::new("snapshot"),
        dir.as_os_str(),
        OsStr::new("-o"),
        before.as_os_str(),
        OsStr::new("-q"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let trace = s.join("t.ds");
    let cmd = format!("echo x > '{0}/new'; rm '{0}/old'", dir.display());
    let o = record_with_snapshot(&trace, &dir, &cmd);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains(&format!("snapshot 0 of {}: start", dir.display())), "{err}");
    let after = s.join("after.jsonl");
    let o = run(&[
        OsStr::new("snapshot"),
        dir.as_os_str(),
        OsStr::new("-o"),
        after.as_os_str(),
        OsStr::new("-q"),
    ]);
    assert!(o.status.success());

    // The trace's states equal those snapshots, mtimes included.
    let ts = format!("{}:start", trace.display());
    let te = format!("{}:end", trace.display());
    for (x, y) in [(&ts, &before), (&te, &after)] {
        let o = bin().args(["diff", "--times"]).arg(x).arg(y).output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{x} vs {}: {}{}",
            y.display(),
            text(&o.stdout),
            text(&o.stderr)
        );
    }
    let r = TraceReader::open(&trace).unwrap();
    assert_eq!(
        r.snapshot_manifest(0, Phase::Start).unwrap().entries,
        Manifest::load(&before).unwrap().entries
    );
    assert_eq!(
        r.snapshot_manifest(0, Phase::End).unwrap().entries,
        Manifest::load(&after).unwrap().entries
    );
    // And the command's changes show between them.
    let o = bin().arg("diff").arg(&ts).arg(&te).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.contains("+ new (file, 2 B)") && out.contains("- old (file, 23 B)"), "{out}");
    // `old` was the first name of its inode; `src/old-hardlink` loses its partner.
    assert!(out.contains("~ src/old-hardlink: hard link to old -> no earlier hard link"), "{out}");
    assert!(out.contains("1 added, 1 removed, 1 changed ("), "{out}");

    // Each distinct non-empty content stored once: big.bin and its copy share one.
    let starts = r.snapshot(0).unwrap().start.unwrap();
    let entries = r.snapshot_manifest(0, Phase::Start).unwrap().entries;
    let distinct: BTreeSet<_> =
        entries.iter().filter(|e| e.size > 0).filter_map(|e| e.digest).collect();
    assert_eq!(starts.blobs, distinct.len() as u64);
    let mut stored = BTreeSet::new();
    for &off in r.blob_offsets() {
        let e = r.dataseries().read_extent_at(off).unwrap();
        for i in 0..e.len() {
            stored.insert(e.bytes(i, 0).unwrap().to_vec());
        }
    }
    assert_eq!(stored.len(), distinct.len());
    assert!(
        starts.blob_bytes < starts.file_bytes - 3_000_000,
        "the copy and the holes are not stored"
    );

    // Restoring the start state gives a tree equal to the state before the command.
    let dest = s.join("restored");
    std::fs::create_dir(&dest).unwrap();
    // As recorded: setuid bits, devices and security xattrs too (not withheld).
    let special = ra_fsstate::RestoreOptions { special: true, ..Default::default() };
    let stats =
        r.restore_snapshot_with(0, std::fs::File::open(&dest).unwrap().as_fd(), &special).unwrap();
    assert_eq!(stats.not_restored, vec![]);
    let o = bin().args(["diff", "--times"]).arg(&before).arg(&dest).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(std::fs::read(dest.join("old")).unwrap(), b"removed by the command\n");

    // info shows the snapshot, in text and JSON.
    let o = bin().arg("info").arg(&trace).output().unwrap();
    let out = text(&o.stdout);
    assert!(
        out.contains("Snapshots   1") && out.contains(&format!("  0  {}", dir.display())),
        "{out}"
    );
    assert!(out.contains("     start  ") && out.contains("     end    "), "{out}");
    let o = bin().args(["info", "--json"]).arg(&trace).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["snapshots"][0]["dir"], dir.to_str().unwrap());
    assert_eq!(v["snapshots"][0]["start"]["blobs"], starts.blobs);
    assert!(v["snapshots"][0]["end"]["entries"].as_u64().unwrap() > 0);
}

#[test]
fn record_snapshot_survives_a_killed_recorder() {
    let s = Scratch::new("killed");
    let dir = s.join("data");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a"), b"flushed before the kill").unwrap();
    std::fs::write(dir.join("b"), vec![7u8; 2 << 20]).unwrap();
    let before = scan(&dir);
    let trace = s.join("t.ds");
    let mut child = bin()
        .args(["record", "-q", "-o"])
        .arg(&trace)
        .arg("--snapshot")
        .arg(&dir)
        .args(["--", "sleep", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the start state is complete in the file, then SIGKILL the recorder.
    let t0 = Instant::now();
    loop {
        let done = TraceReader::open(&trace)
            .ok()
            .and_then(|r| r.snapshot(0).ok())
            .is_some_and(|s| s.start.is_some());
        if done {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "start state never written");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let r = TraceReader::open(&trace).expect("an unfinished trace opens");
    assert!(!r.is_complete());
    let snap = r.snapshot(0).unwrap();
    assert!(snap.start.is_some() && snap.end.is_none());
    let got: Vec<Entry> =
        r.snapshot_entries(0, Phase::Start).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, before);
    let dest = s.join("restored");
    std::fs::create_dir(&dest).unwrap();
    r.restore_snapshot(0, std::fs::File::open(&dest).unwrap().as_fd()).unwrap();
    assert_eq!(std::fs::read(dest.join("a")).unwrap(), b"flushed before the kill");
    // The end state is reported missing, the start state diffs fine.
    let o = bin().arg("diff").arg(format!("{}:end", trace.display())).arg(&dir).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("incomplete"), "{}", text(&o.stderr));
    let o = bin().arg("diff").arg(format!("{}:start", trace.display())).arg(&dir).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

#[test]
fn record_snapshot_stores_the_end_state_after_sigterm() {
    let s = Scratch::new("sigterm");
    let dir = s.join("data");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a"), b"a").unwrap();
    let trace = s.join("t.ds");
    let cmd = format!("echo started > '{}/marker'; exec sleep 30", dir.display());
    let child = bin()
        .args(["record", "-q", "-o"])
        .arg(&trace)
        .arg("--snapshot")
        .arg(&dir)
        .args(["--", "sh", "-c", &cmd])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !dir.join("marker").exists() {
        assert!(t0.elapsed() < Duration::from_secs(60), "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(25), "SIGTERM ended the recording");
    assert_eq!(o.status.code(), Some(128 + 15), "{}", text(&o.stderr));
    let r = TraceReader::open(&trace).unwrap();
    assert!(r.is_complete());
    let end: Vec<Entry> =
        r.snapshot_entries(0, Phase::End).unwrap().collect::<Result<_, _>>().unwrap();
    assert!(end.iter().any(|e| e.path == b"marker"), "the end state was scanned after the command");
    assert_eq!(end, scan(&dir));
}

#[test]
fn record_snapshot_rejects_bad_directories_in_one_line() {
    let s = Scratch::new("bad");
    let dir = s.join("data");
    std::fs::create_dir(&dir).unwrap();
    let file = s.join("file");
    std::fs::write(&file, b"").unwrap();
    let missing = s.join("missing");
    let cases: Vec<(Vec<&OsStr>, PathBuf, &str)> = vec![
        (vec![missing.as_os_str()], s.join("t.ds"), "cannot open it"),
        (vec![file.as_os_str()], s.join("t.ds"), "not a directory"),
        (vec![dir.as_os_str(), dir.as_os_str()], s.join("t.ds"), "given twice"),
        (vec![dir.as_os_str()], dir.join("t.ds"), "would be inside it"),
    ];
    for (dirs, out, want) in cases {
        let mut c = bin();
        c.args(["record", "-q", "-o"]).arg(&out);
        for d in &dirs {
            c.arg("--snapshot").arg(d);
        }
        let o = c.args(["--", "true"]).output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{want}: {err}");
        assert!(!out.exists(), "no trace written");
    }
}

#[test]
fn privileged_tree_restores_with_owners_and_devices() {
    if !privileged("restoring devices and foreign owners") {
        return;
    }
    let s = Scratch::new("priv");
    let dir = s.join("data");
    std::fs::create_dir(&dir).unwrap();
    tree(&dir);
    let trace = s.join("t.ds");
    let o = record_with_snapshot(&trace, &dir, "true");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let r = TraceReader::open(&trace).unwrap();
    let dest = s.join("restored");
    std::fs::create_dir(&dest).unwrap();
    let special = ra_fsstate::RestoreOptions { special: true, ..Default::default() };
    let stats =
        r.restore_snapshot_with(0, std::fs::File::open(&dest).unwrap().as_fd(), &special).unwrap();
    assert_eq!(stats.not_restored_count, 0, "{:?}", stats.not_restored);
    let o = bin()
        .args(["diff", "--times"])
        .arg(format!("{}:start", trace.display()))
        .arg(&dest)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let m = std::fs::symlink_metadata(dest.join("secret")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (4321, 8765, 0));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(dest.join("zero")).unwrap().file_type().is_char_device());
}

#[test]
fn record_snapshot_takes_several_directories() {
    let s = Scratch::new("several");
    let (a, b) = (s.join("a"), s.join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    std::fs::write(a.join("shared"), b"same content in both").unwrap();
    std::fs::write(b.join("shared"), b"same content in both").unwrap();
    std::fs::write(b.join("only-b"), b"b").unwrap();
    let trace = s.join("t.ds");
    let o = bin()
        .args(["record", "-q", "-o"])
        .arg(&trace)
        .arg("--snapshot")
        .arg(&a)
        .arg("--snapshot")
        .arg(&b)
        .args(["--", "rm"])
        .arg(b.join("only-b"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let info = text(&bin().arg("info").arg(&trace).output().unwrap().stdout);
    assert!(info.contains("Snapshots   2"), "{info}");
    let r = TraceReader::open(&trace).unwrap();
    assert_eq!(r.snapshot(1).unwrap().dir, b.as_os_str().as_bytes());
    assert_eq!(r.snapshot(1).unwrap().start.unwrap().blobs, 1, "`shared` was stored with a");
    // TRACE:N:start / TRACE:N:end name the N-th directory.
    let o = bin().arg("diff").arg(format!("{}:1:end", trace.display())).arg(&b).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let o = bin()
        .arg("diff")
        .arg(format!("{}:1:start", trace.display()))
        .arg(format!("{}:1:end", trace.display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("- only-b (file, 1 B)"), "{}", text(&o.stdout));
    let o = bin().arg("diff").arg(format!("{}:2:start", trace.display())).arg(&b).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no snapshot 2"), "{}", text(&o.stderr));
}
