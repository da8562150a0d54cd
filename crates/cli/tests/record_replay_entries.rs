//! Record → replay conformance, entry by entry (issue 42 item 4), as rr's compare tests do:
//! the conformance workload (`crates/testkit/c/workload.c`: every storage-set registry call
//! with sentinel values) is recorded under each backend, replayed with `--init=infer` into an
//! empty root and verified, and the replay's report is checked call by call against the
//! registry:
//!
//! - every storage-set entry the workload makes is replayed (a registry entry without a
//!   replayed workload call fails, as one without a recorded call fails record_conformance);
//! - an entry whose policy is `Reissue` or `Emulate` was issued or emulated at least once,
//!   unless `NOT_ISSUED` says why not; `Simulate` and `Skip` entries were never issued;
//! - no call mismatches, but those in `KNOWN_MISMATCHES` (each with its cause); both lists
//!   are exact, so that a fix shows up here as a list to shorten.

mod common;

use std::collections::BTreeMap;

use ra_syscalls::{ReplayPolicy, REGISTRY};
use serde_json::Value;

use common::bin;

/// Storage-set calls the workload does not make (as record_conformance's EXCLUDED).
const NOT_MADE: &[&str] = &["mmappread", "mmappwrite", "io_uring_op", "signal_deliver"];

/// Reissued or emulated entries whose workload calls the replay does not issue, and why.
const NOT_ISSUED: &[(&str, &str)] = &[
    ("chroot", "the replayed processes share the replayer's root: the recorded result is used"),
    (
        "ioctl",
        "the workload's requests (FIONREAD, FS_IOC_GETFLAGS, TCGETS) are queries: only FICLONE, \
         FIOCLEX/FIONCLEX and integer-argument requests are issued",
    ),
    ("io_setup", "Linux AIO is not replayed (its reads and writes are outside any call)"),
    ("io_submit", "Linux AIO is not replayed"),
    ("io_getevents", "Linux AIO is not replayed"),
    ("io_pgetevents", "Linux AIO is not replayed"),
    ("io_destroy", "Linux AIO is not replayed"),
    ("io_cancel", "Linux AIO is not replayed (and the workload's call fails with EFAULT)"),
    ("io_uring_enter", "the workload makes no io_uring requests: record_uring.rs replays them"),
    ("io_uring_register", "the workload makes no io_uring requests"),
];

/// Calls that differ on replay, and why (the unique calls, not counts). Empty since tee is
/// replayed (its pipe held nothing for the splice that followed it).
const KNOWN_MISMATCHES: &[(&str, &str)] = &[];

#[test]
fn ptrace_recorded_workload_replays_entry_by_entry() {
    entries("ptrace");
}

#[test]
fn ebpf_recorded_workload_replays_entry_by_entry() {
    if ra_testkit::ebpf_available() {
        entries("ebpf");
    }
}

fn entries(backend: &str) {
    let base = ra_testkit::scratch_dir(&format!("entries-{backend}"));
    let trace = base.join("workload.ds");
    let root = base.join("root");
    let report = base.join("report.json");
    std::fs::create_dir_all(&root).unwrap();
    let out = bin()
        .args(["record", "--backend", backend, "-q", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(ra_testkit::program("workload"))
        .arg(base.join("scratch"))
        .arg(base.join("workload.jsonl"))
        .output()
        .expect("run reanimator record");
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    let out = bin()
        .arg("replay")
        .arg(&trace)
        .arg("--root")
        .arg(&root)
        .args(["--init=infer", "-q", "--report"])
        .arg(&report)
        .output()
        .expect("run reanimator replay");
    // Exit 1: mismatches (the known ones); anything else is a failure to replay.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "replay: {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let problems = check(&r);
    assert!(
        problems.is_empty(),
        "{backend}: {} problem(s) (files kept in {}):\n  {}",
        problems.len(),
        base.display(),
        problems.join("\n  ")
    );
    let _ = std::fs::remove_dir_all(&base);
}

fn check(r: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let per_call = r["per_call"].as_object().expect("report has per_call");
    let n = |c: &Value, k: &str| c[k].as_u64().unwrap_or(0);
    assert!(r["aborted"].is_null(), "replay aborted: {}", r["aborted"]);
    for d in REGISTRY.iter().filter(|d| d.class.is_storage() && !NOT_MADE.contains(&d.name)) {
        let Some(c) = per_call.get(d.trace_name) else {
            problems.push(format!(
                "`{}` (trace name `{}`) is not replayed: the workload's call is missing from \
                 the replay",
                d.name, d.trace_name
            ));
            continue;
        };
        let acted = n(c, "issued") + n(c, "emulated");
        let why_not = NOT_ISSUED.iter().find(|(k, _)| *k == d.name).map(|(_, w)| *w);
        match (d.replay, why_not) {
            (ReplayPolicy::Reissue(_) | ReplayPolicy::Emulate(_), None) if acted == 0 => {
                problems.push(format!(
                    "`{}` ({:?}) was replayed {} time(s) and never issued or emulated",
                    d.name,
                    d.replay,
                    n(c, "replayed")
                ));
            }
            (ReplayPolicy::Reissue(_) | ReplayPolicy::Emulate(_), Some(_)) if acted > 0 => {
                problems.push(format!("`{}` is issued now: drop it from NOT_ISSUED", d.name));
            }
            (ReplayPolicy::Simulate | ReplayPolicy::Skip, w) => {
                if n(c, "issued") > 0 {
                    problems.push(format!("`{}` is {:?} but was issued", d.name, d.replay));
                }
                if w.is_some() {
                    problems.push(format!(
                        "`{}` is {:?}: no NOT_ISSUED entry needed",
                        d.name, d.replay
                    ));
                }
            }
            _ => {}
        }
    }
    for (k, _) in NOT_ISSUED {
        if !REGISTRY.iter().any(|d| d.name == *k) {
            problems.push(format!("NOT_ISSUED names `{k}`, which is no registry call"));
        }
    }
    // Mismatches: exactly the known ones.
    let mut differing: BTreeMap<String, u64> = BTreeMap::new();
    for (k, c) in per_call {
        if n(c, "mismatched") > 0 {
            differing.insert(k.clone(), n(c, "mismatched"));
        }
    }
    for (k, count) in &differing {
        if !KNOWN_MISMATCHES.iter().any(|(m, _)| m == k) {
            let first: Vec<String> = r["mismatches"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|m| m["call"] == k.as_str())
                .take(3)
                .map(|m| {
                    format!(
                        "#{} {}: expected {}, got {}",
                        m["unique_id"], m["what"], m["expected"], m["actual"]
                    )
                })
                .collect();
            problems.push(format!("`{k}`: {count} mismatch(es): {}", first.join("; ")));
        }
    }
    for (k, why) in KNOWN_MISMATCHES {
        if !differing.contains_key(*k) {
            problems.push(format!(
                "`{k}` replays without a mismatch now ({why}): drop it from KNOWN_MISMATCHES"
            ));
        }
    }
    for f in r["final_state"].as_array().into_iter().flatten() {
        if f["differences"].as_u64() != Some(0) {
            problems.push(format!("final state: {} differs: {}", f["compared"], f["first"]));
        }
    }
    problems
}
