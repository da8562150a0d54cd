//! `reanimator replay` on the original Re-Animator traces (verified, with the inferred initial
//! state) and on bad input: corrupt traces, a missing or non-empty root, another
//! architecture's trace, wrong flags — one clear line and a non-zero exit each.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ra_trace::{ArgValue, Event, TraceWriter, WriterConfig};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(rel: &str) -> Option<PathBuf> {
    let p = repo().join("../shared/testdata/dataseries").join(rel);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("REANIMATOR_REQUIRE_TESTDATA").as_deref() == Ok("1") {
        panic!("{} missing and REANIMATOR_REQUIRE_TESTDATA=1", p.display());
    }
    eprintln!("skip: {} not found (../shared/testdata is absent)", p.display());
    None
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ra-replay-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn replay(trace: &Path, root: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .arg("replay")
        .arg(trace)
        .arg("--root")
        .arg(root)
        .args(extra)
        .output()
        .unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The four original Re-Animator traces (ls, cat, a 4-thread program) replay with every
/// issued and emulated call matching once the initial state they show is recreated; without
/// it, the files they read are missing and replay says so.
#[test]
fn original_reanimator_traces_replay_verified() {
    for (name, threads) in
        [("mt.ds", 4), ("output-4ba1c4b.ds", 4), ("output-ee34491.ds", 1), ("output_lsR.ds", 1)]
    {
        let Some(trace) = fixture(&format!("reanimator-replayer/{name}")) else { return };
        let root = scratch(&format!("ra-{name}"));
        let o = replay(&trace, &root, &["--init", "--json"]);
        let r = json(&o);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            serde_json::to_string_pretty(&r).unwrap()
        );
        assert_eq!(r["mismatch_total"], 0, "{name}");
        assert_eq!(r["threads"], threads, "{name}");
        let t = &r["totals"];
        assert!(t["issued"].as_u64().unwrap() > 10, "{name}: {t}");
        assert_eq!(
            t["matched"].as_u64().unwrap(),
            t["issued"].as_u64().unwrap() + t["emulated"].as_u64().unwrap()
        );
        // Writes to the terminal (fd 1, inherited) are simulated, not issued.
        assert!(r["per_call"]["write"]["simulated"].as_u64().unwrap() >= 1, "{name}");

        // Without the initial state the shared libraries and inputs are missing: mismatches.
        let root2 = scratch(&format!("ra-noinit-{name}"));
        let o = replay(&trace, &root2, &["--json"]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        let r = json(&o);
        assert!(r["mismatch_total"].as_u64().unwrap() > 0);
        let first = &r["mismatches"][0];
        assert!(
            first["expected"].as_str().is_some()
                && first["actual"].as_str().unwrap().contains("ENOENT"),
            "{first}"
        );
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&root2);
    }
}

/// The report file and the text table tell the same story.
#[test]
fn report_file_and_table() {
    let Some(trace) = fixture("reanimator-replayer/output_lsR.ds") else { return };
    let d = scratch("report");
    let root = d.join("root");
    std::fs::create_dir(&root).unwrap();
    let rep = d.join("r.json");
    let log = d.join("replay.log");
    let o = replay(
        &trace,
        &root,
        &["--init=infer", "--report", rep.to_str().unwrap(), "-vv", "--log", log.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("verified: every call matched"), "{text}");
    assert!(text.contains("openat"), "{text}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    assert_eq!(r["mismatch_total"], 0);
    // -vv logs every call with what replay did.
    let l = std::fs::read_to_string(&log).unwrap();
    assert!(l.lines().filter(|x| x.contains("-> replay")).count() >= 30, "{l}");
    let _ = std::fs::remove_dir_all(&d);
}

fn one_line_error(o: &Output, needle: &str) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout {} stderr {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains(needle), "expected `{needle}` in: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let d = scratch("bad");
    let root = d.join("root");
    std::fs::create_dir(&root).unwrap();
    // Not a trace at all; a truncated trace; a corrupt one.
    std::fs::write(d.join("junk.ds"), b"this is not a DataSeries file").unwrap();
    one_line_error(&replay(&d.join("junk.ds"), &root, &[]), "junk.ds");
    if let Some(t) = fixture("reanimator-replayer/mt.ds") {
        let b = std::fs::read(&t).unwrap();
        std::fs::write(d.join("trunc.ds"), &b[..b.len() / 3]).unwrap();
        let o = replay(&d.join("trunc.ds"), &root, &["--force"]);
        // A truncated file is readable up to its last complete extent: replay runs what is there
        // or reports the damage; it never panics or hangs.
        assert!(matches!(o.status.code(), Some(1) | Some(2)), "{o:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
        let mut c = b.clone();
        let mid = c.len() / 2;
        for x in &mut c[mid..mid + 64] {
            *x ^= 0x5a;
        }
        std::fs::write(d.join("corrupt.ds"), &c).unwrap();
        let o = replay(&d.join("corrupt.ds"), &root, &["--force"]);
        assert!(matches!(o.status.code(), Some(1) | Some(2)), "{o:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    }
    // The root: missing, a file, not empty.
    let trace = d.join("small.ds");
    let def = ra_syscalls::lookup("umask").unwrap();
    let mut e = Event::new(def);
    e.time_called = Some(1);
    e.time_returned = Some(2);
    e.tid = Some(1);
    e.pid = Some(1);
    e.ret = Some(0o22);
    e.errno = Some(0);
    e.set_arg("mask", ArgValue::Int(0o22));
    let mut w =
        TraceWriter::create(&trace, &[("arch", b"x86_64")], WriterConfig::default()).unwrap();
    w.append(&e).unwrap();
    w.finish().unwrap();
    one_line_error(&replay(&trace, &d.join("missing"), &[]), "mkdir -p");
    one_line_error(&replay(&trace, &d.join("small.ds"), &[]), "not a directory");
    std::fs::write(root.join("x"), b"x").unwrap();
    one_line_error(&replay(&trace, &root, &[]), "not empty");
    let o = replay(&trace, &root, &["--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // Another architecture.
    let arm = d.join("arm.ds");
    let mut w =
        TraceWriter::create(&arm, &[("arch", b"aarch64")], WriterConfig::default()).unwrap();
    w.append(&e).unwrap();
    w.finish().unwrap();
    one_line_error(&replay(&arm, &root, &["--force"]), "aarch64");
    // Wrong flags.
    let o = replay(&trace, &root, &["--force", "--timing", "fast"]);
    one_line_error(&o, "afap");
    let o = replay(&trace, &root, &["--force", "--verify", "everything"]);
    assert_eq!(o.status.code(), Some(2));
    let o = replay(&trace, &root, &["--force", "--stall-timeout", "-1"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}
