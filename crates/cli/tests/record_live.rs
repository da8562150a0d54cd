//! `record` for scripts and for watching (issue 40 items 5 and 6): `--json`'s summary, checked
//! against the trace it names, under both capture backends, on real programs.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use ra_testkit::{backend, both_backends, have_program};

use common::bin;

both_backends!(record_json_summarizes_the_trace);

fn record(dir: &Path) -> Command {
    let mut c = bin();
    c.current_dir(dir).args(["record", "--backend", backend()]);
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The trace's events as `dump --format jsonl` gives them.
fn jsonl(trace: &Path) -> Vec<serde_json::Value> {
    let o = bin().arg("dump").arg(trace).args(["--format", "jsonl"]).output().unwrap();
    assert!(o.status.success(), "dump: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `record --json` on tar run by a shell that exits 3: the numbers are the trace's (its
/// calls, the bytes of its buffers, its processes), the exit status the command's, the
/// path and size those of the file; the summary line on stderr is left out.
fn record_json_summarizes_the_trace() {
    if !have_program("tar") {
        return;
    }
    let d = ra_testkit::case_dir("live-json", "tar");
    let w = d.join("work");
    std::fs::create_dir(w.join("src")).unwrap();
    for i in 0..20 {
        std::fs::write(w.join(format!("src/f{i}")), vec![b'a' + i as u8; 1000 + i * 100]).unwrap();
    }
    let o = record(&d)
        .args(["--json", "-o", "t.ds", "--", "sh", "-c", "tar cf work/a.tar -C work src; exit 3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!stderr(&o).contains("reanimator: recorded"), "no summary line: {}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    let n = |k: &str| j[k].as_u64().unwrap_or_else(|| panic!("{k}: {j:#}"));
    let trace = d.join("t.ds");
    let events = jsonl(&trace);
    assert_eq!(n("calls") + n("synthetic_ids"), events.len() as u64, "{j:#}");
    assert_eq!(j["exit_status"], 3, "{j:#}");
    assert_eq!(j["backend"], backend(), "{j:#}");
    let pids: std::collections::BTreeSet<u64> =
        events.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
    assert_eq!(n("processes"), pids.len() as u64, "{j:#}");
    assert!(n("processes") >= 2, "sh and tar: {j:#}");
    // tar read every source byte and wrote the archive: the buffers hold at least that.
    let archive = std::fs::metadata(w.join("a.tar")).unwrap().len();
    assert!(n("data_bytes") >= archive + (0..20).map(|i| 1000 + i * 100).sum::<u64>(), "{j:#}");
    assert_eq!(n("lost_calls"), 0, "{j:#}");
    match backend() {
        "ebpf" => assert_eq!(j["throttle_stops"].as_u64(), Some(0), "{j:#}"),
        _ => assert!(j["throttle_stops"].is_null(), "{j:#}"),
    }
    assert_eq!(j["trace"]["path"], "t.ds", "{j:#}");
    assert_eq!(j["trace"]["bytes"], std::fs::metadata(&trace).unwrap().len(), "{j:#}");
    assert!(j["elapsed_s"].as_f64().unwrap() > 0.0, "{j:#}");
    let _ = std::fs::remove_dir_all(&d);
}
