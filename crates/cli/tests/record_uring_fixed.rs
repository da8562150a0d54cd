//! io_uring's registered files and buffers (issue 43): the testkit's `uring_fixed` program
//! registers files (a table with an empty slot, an update, an unregister, a sparse table and
//! an update of it) and buffers, and submits `WRITE_FIXED`, `READ_FIXED` and
//! `IOSQE_FIXED_FILE` requests on two files, one after its descriptor was closed. Recorded by
//! both recorders: every fixed request's file in `dump`, jsonl `fd_path` and `stats --by file`
//! is the one the program used (its own account), each file's bytes are the program's, the
//! fixed buffers are named; replayed through a ring and as system calls with 0 mismatches and
//! the files identical. A corrupt `io_uring_register` record is refused in one line. fio's
//! `--registerfiles --fixedbufs` requests resolve to fio's file.
//!
//! Needs root and io_uring (eBPF: a BPF-capable kernel); skips with a printed reason
//! otherwise, and fails instead under REANIMATOR_REQUIRE_PRIVILEGED=1 (CI).

mod common;

use std::path::Path;

use ra_trace::{ArgValue, Event, TraceReader};
use serde_json::Value;

use common::bin;

fn int(e: &Event, n: &str) -> Option<i64> {
    e.arg(n).and_then(ArgValue::as_int)
}

fn events(trace: &Path) -> Vec<Event> {
    let r = TraceReader::open(trace).unwrap();
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    r.events(None).map(|e| e.unwrap()).collect()
}

fn record(backend: &str, trace: &Path, work: &Path, prog: &[&str]) -> std::process::Output {
    let o = bin()
        .args(["record", "-q", "--backend", backend, "-o"])
        .arg(trace)
        .arg("--snapshot")
        .arg(work)
        .arg("--")
        .args(prog)
        .current_dir(work)
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
    o
}

/// Events of `trace` rewritten by `f` into `out` (ids and trace info kept; no snapshots).
fn rewrite(trace: &Path, out: &Path, mut f: impl FnMut(&mut Event)) {
    let info: Vec<(String, Vec<u8>)> = TraceReader::open(trace).unwrap().info().to_vec();
    let info: Vec<(&str, &[u8])> = info
        .iter()
        .filter(|(k, _)| !k.starts_with("snapshot"))
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    let mut w =
        ra_trace::TraceWriter::create(out, &info, ra_trace::WriterConfig::default()).unwrap();
    for mut e in events(trace) {
        f(&mut e);
        w.append_preserving(&e).unwrap();
    }
    w.finish().unwrap();
}

fn fixed_recorded(backend: &str) {
    if !ra_testkit::uring_backend_available(backend) {
        return;
    }
    let dir = ra_testkit::scratch_dir(&format!("uring-fixed-{backend}")).canonicalize().unwrap();
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    let trace = dir.join("t.ds");
    let prog = ra_testkit::program("uring_fixed");
    let w = work.display().to_string();
    let o = record(backend, &trace, &work, &[prog.to_str().unwrap(), &w]);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let path_of = |f: &str| j[f].as_str().unwrap().to_string();
    let ev = events(&trace);
    // The registrations as the program made them.
    let regs: Vec<&Event> = ev.iter().filter(|e| e.name == "io_uring_register").collect();
    assert_eq!(regs.len(), 6, "{regs:?}");
    let (fa, fb) = (j["a_fd"].as_i64().unwrap() as i32, j["b_fd"].as_i64().unwrap() as i32);
    let r0 = regs[0].uring_registration().unwrap().unwrap().unwrap();
    assert_eq!(r0.fds, vec![fa, -1, fb]);
    let r1 = regs[1].uring_registration().unwrap().unwrap().unwrap();
    assert_eq!(r1.buffers.iter().map(|b| b.1).collect::<Vec<_>>(), [4096, 8192]);
    let r2 = regs[2].uring_registration().unwrap().unwrap().unwrap();
    assert_eq!((r2.update, r2.offset, r2.fds.clone()), (true, 1, vec![fb]));
    let r4 = regs[4].uring_registration().unwrap().unwrap().unwrap();
    assert_eq!((r4.sparse, r4.count), (true, 4));
    let r5 = regs[5].uring_registration().unwrap().unwrap().unwrap();
    assert_eq!((r5.update, r5.offset, r5.fds.clone()), (true, 3, vec![fb]));
    let setup = ev.iter().find(|e| e.name == "io_uring_setup").unwrap();
    let params = match setup.arg("p") {
        Some(ArgValue::Data(d)) => d.to_vec(),
        other => panic!("params: {other:?}"),
    };
    assert_eq!(ra_syscalls::uring::params::field(&params, 0), Some(8), "sq_entries");

    // Every request on the file the program used: dump, jsonl fd_path.
    let lines = common::dump(&trace, &[]);
    let ops: Vec<&str> = lines.lines().filter(|l| l.contains("[uring ")).collect();
    let want = j["ops"].as_array().unwrap();
    assert_eq!(ops.len(), want.len(), "{lines}");
    for (line, o) in ops.iter().zip(want) {
        let file = path_of(o["file"].as_str().unwrap());
        assert!(line.contains(&format!("</{}>", file.trim_start_matches('/'))), "{line}");
        assert!(line.contains(&format!(" = {}", o["res"])), "{line}");
    }
    assert!(ops[0].contains(&format!("write_fixed({fa}<{}>[fixed 0]", path_of("a"))), "{}", ops[0]);
    assert!(ops[0].contains("buf 0={0x") && ops[0].contains(", 4096}"), "{}", ops[0]);
    assert!(ops[3].contains("buf 1={0x") && ops[3].contains(", 8192}"), "{}", ops[3]);
    assert!(lines.contains(&format!("{{fds=[{fa}, -1, {fb}]}}")), "{lines}");
    assert!(lines.contains("{sparse, 4 slots}"), "{lines}");
    let jl = common::dump(&trace, &["--format", "jsonl"]);
    let paths: Vec<String> = jl
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["call"] == "io_uring_op")
        .map(|v| v["fd_path"].as_str().unwrap_or("").to_string())
        .collect();
    let want_paths: Vec<String> =
        want.iter().map(|o| path_of(o["file"].as_str().unwrap())).collect();
    assert_eq!(paths, want_paths);

    // stats: each file's bytes, the program's.
    let o = bin().args(["stats", "--by", "file", "--json"]).arg(&trace).output().unwrap();
    let s: Value = serde_json::from_str(&common::ok(o, "stats")).unwrap();
    let row = |p: &str| {
        s["files"]["rows"].as_array().unwrap().iter().find(|r| r["file"] == p).cloned().unwrap()
    };
    let sum = |f: &str, write: bool| -> i64 {
        want.iter()
            .enumerate()
            .filter(|(i, o)| o["file"] == f && (matches!(i, 0..=2) == write))
            .map(|(_, o)| o["res"].as_i64().unwrap())
            .sum()
    };
    for f in ["a", "b"] {
        let r = row(&path_of(f));
        assert_eq!(r["written_bytes"].as_i64(), Some(sum(f, true)), "{f}: {r}");
        assert_eq!(r["read_bytes"].as_i64(), Some(sum(f, false)), "{f}: {r}");
    }

    // Replayed as recorded, both ways: verified, the files identical.
    for mode in ["ring", "as-syscalls"] {
        let root = dir.join(format!("root-{mode}"));
        std::fs::create_dir(&root).unwrap();
        let (r, _) = common::replay_json(&trace, &root, &["--uring", mode]);
        assert_eq!(r["mismatch_total"], 0, "--uring {mode}: {r}");
        assert_eq!(r["per_call"]["io_uring_op"]["matched"], 7, "--uring {mode}: {r}");
        assert_eq!(r["per_call"]["io_uring_register"]["matched"], 6, "--uring {mode}: {r}");
        assert!(!r["warnings"].to_string().contains("does not hold which"), "{r}");
        for f in ["a", "b"] {
            let p = path_of(f);
            let got = std::fs::read(root.join(p.trim_start_matches('/'))).unwrap();
            assert_eq!(got, std::fs::read(&p).unwrap(), "--uring {mode}: {p}");
        }
    }

    // A registration no recorder writes: one line, a non-zero exit.
    let bad = dir.join("bad.ds");
    rewrite(&trace, &bad, |e| {
        if e.name == "io_uring_register" && int(e, "opcode") == Some(6) {
            e.set_arg("arg", ArgValue::data(vec![0u8; 7]));
        }
    });
    let root = dir.join("root-bad");
    std::fs::create_dir(&root).unwrap();
    let o = bin().arg("replay").arg(&bad).arg("--root").arg(&root).arg("-q").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(1) | Some(2)), "{o:?}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("(io_uring_register): its register_data is 7 bytes"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// fio with registered files and fixed buffers: every request resolves to fio's file.
fn fio_fixed(backend: &str) {
    if !ra_testkit::uring_backend_available(backend) {
        return;
    }
    if std::process::Command::new("fio").arg("--version").output().is_err() {
        ra_testkit::privileged("fio", Err("fio is not installed".into()));
        return;
    }
    let dir =
        ra_testkit::scratch_dir(&format!("uring-fio-fixed-{backend}")).canonicalize().unwrap();
    let trace = dir.join("t.ds");
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    let file = work.join("fio.dat");
    let f = file.display().to_string();
    record(
        backend,
        &trace,
        &work,
        &[
            "fio",
            "--name=fixed",
            &format!("--filename={f}"),
            "--ioengine=io_uring",
            "--registerfiles",
            "--fixedbufs",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--iodepth=4",
            "--output-format=terse",
        ],
    );
    let jl = common::dump(&trace, &["--format", "jsonl"]);
    let mut fixed = 0;
    for v in jl.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()) {
        if v["call"] == "io_uring_op" && v["args"]["opcode"] == 5 {
            assert_eq!(v["args"]["sqe_flags"].as_i64().unwrap() & 1, 1, "{v}");
            assert_eq!(v["fd_path"].as_str(), Some(f.as_str()), "{v}");
            fixed += 1;
        }
    }
    assert_eq!(fixed, 64, "256 KiB in 4 KiB WRITE_FIXED requests");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fixed_files_and_buffers_ptrace() {
    fixed_recorded("ptrace");
}

#[test]
fn fixed_files_and_buffers_ebpf() {
    fixed_recorded("ebpf");
}

#[test]
fn fio_registered_files_ptrace() {
    fio_fixed("ptrace");
}

#[test]
fn fio_registered_files_ebpf() {
    fio_fixed("ebpf");
}
