//! io_uring's vectored requests (`READV`, `WRITEV`) recorded with their data by both
//! recorders: fio's io_uring engine with `--nonvectored=0` (one iovec per request) writing a
//! file and reading it back at random, iodepth 8: as many requests as fio counts, their bytes
//! as many as fio's, each write's and read's data the file's bytes at its offset, under
//! `--data full`, `hash` (the digests of those bytes) and `none`; replayed through a ring and
//! as system calls with the reads' data verified, and a read whose recorded bytes were altered
//! a mismatch.
//!
//! Needs fio (REANIMATOR_REQUIRE_TESTDATA=1: fails without it), root and io_uring (eBPF: a
//! BPF-capable kernel; REANIMATOR_REQUIRE_PRIVILEGED=1: fails when they are not).

mod common;

use std::path::Path;

use ra_syscalls::uring::data_source;
use ra_trace::{ArgValue, Event, TraceReader};
use serde_json::Value;

use common::bin;

fn available(backend: &str) -> bool {
    ra_testkit::io_uring_available()
        && ra_testkit::have_program("fio")
        && (backend == "ptrace" || ra_testkit::ebpf_available())
}

fn int(e: &Event, n: &str) -> Option<i64> {
    e.arg(n).and_then(ArgValue::as_int)
}

/// Record fio's `rw` job on `file` (1 MiB, 4 KiB blocks, iodepth 8, vectored requests).
fn record_fio(backend: &str, trace: &Path, work: &Path, rw: &str, opts: &[&str]) -> Value {
    let o = bin()
        .args(["record", "-q", "--backend", backend, "-o"])
        .arg(trace)
        .args(opts)
        .args(["--", "fio", "--name=j", "--ioengine=io_uring", "--nonvectored=0", "--bs=4k"])
        .args(["--size=1m", "--iodepth=8", "--output-format=json", "--filename=v.dat"])
        .arg(format!("--rw={rw}"))
        .current_dir(work)
        .output()
        .unwrap();
    assert!(o.status.success(), "record {rw}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn requests(trace: &Path, opcode: i64) -> Vec<Event> {
    let r = TraceReader::open(trace).unwrap();
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    r.events(None)
        .map(|e| e.unwrap())
        .filter(|e| e.name == "io_uring_op" && int(e, "opcode") == Some(opcode))
        .collect()
}

/// Each request's bytes (or their digest) are the file's at its offset.
fn check_data(ops: &[Event], arg: &str, file: &[u8], level: &str) {
    for e in ops {
        let (off, n) = (int(e, "offset").unwrap() as usize, e.ret.unwrap() as usize);
        let want = &file[off..off + n];
        let src = int(e, "data_source");
        match (level, e.arg(arg)) {
            ("full", Some(ArgValue::Data(d))) => {
                assert_eq!(&d[..], want, "#{} at {off}: other bytes than the file's", e.unique_id);
                let s = if arg == "buf_in" {
                    data_source::AT_SUBMISSION
                } else {
                    data_source::AT_COMPLETION
                };
                assert_eq!(src, Some(s), "#{}", e.unique_id);
            }
            ("hash", Some(ArgValue::Hashed { len, blake3 })) => {
                assert_eq!(*len as usize, n, "#{}", e.unique_id);
                assert_eq!(blake3, blake3::hash(want).as_bytes(), "#{} digest", e.unique_id);
            }
            ("none", Some(ArgValue::NotCaptured)) => {
                assert_eq!(src, Some(data_source::NONE), "#{}", e.unique_id);
            }
            (l, v) => panic!("--data {l}: #{} {arg}: {v:?}", e.unique_id),
        }
    }
}

fn vectored(backend: &str) {
    if !available(backend) {
        return;
    }
    let dir = ra_testkit::scratch_dir(&format!("uring-vec-{backend}")).canonicalize().unwrap();
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    let file = work.join("v.dat");
    for level in ["full", "hash", "none"] {
        let _ = std::fs::remove_file(&file);
        let data = ["--data", level];
        let wt = dir.join(format!("w-{level}.ds"));
        let fio = record_fio(backend, &wt, &work, "write", &data);
        let bytes = std::fs::read(&file).unwrap();
        let writes = requests(&wt, 2);
        let w = &fio["jobs"][0]["write"];
        assert_eq!(writes.len() as u64, w["total_ios"].as_u64().unwrap(), "--data {level}");
        let sum: i64 = writes.iter().map(|e| e.ret.unwrap()).sum();
        assert_eq!(sum as u64, w["io_bytes"].as_u64().unwrap(), "written bytes");
        check_data(&writes, "buf_in", &bytes, level);

        let rt = dir.join(format!("r-{level}.ds"));
        let fio = record_fio(backend, &rt, &work, "randread", &data);
        let reads = requests(&rt, 1);
        let r = &fio["jobs"][0]["read"];
        assert_eq!(reads.len() as u64, r["total_ios"].as_u64().unwrap(), "--data {level}");
        let sum: i64 = reads.iter().map(|e| e.ret.unwrap()).sum();
        assert_eq!(sum as u64, r["io_bytes"].as_u64().unwrap(), "read bytes");
        check_data(&reads, "buf_out", &bytes, level);
    }

    // Replayed: the writes' bytes written, the reads' compared, in both modes.
    let _ = std::fs::remove_file(&file);
    let t = dir.join("rw.ds");
    let snap = ["--snapshot", work.to_str().unwrap()];
    record_fio(backend, &t, &work, "randrw", &snap);
    for mode in ["ring", "as-syscalls"] {
        let root = dir.join(format!("root-{mode}"));
        std::fs::create_dir(&root).unwrap();
        let (r, o) = common::replay_json(&t, &root, &["--uring", mode]);
        let show = || serde_json::to_string_pretty(&r).unwrap();
        assert_eq!(r["mismatch_total"], 0, "--uring {mode}: {}", show());
        assert_eq!(r["final_state"][0]["differences"], 0, "--uring {mode}: {}", show());
        assert_eq!(o.status.code(), Some(0), "--uring {mode}: {}", show());
        let m = &r["per_call"]["io_uring_op"];
        assert_eq!(m["simulated"], 0, "{mode}: {m}");
        assert!(!r.to_string().contains("holds neither its iovecs"), "{}", show());
        let replayed = root.join(work.strip_prefix("/").unwrap()).join("v.dat");
        assert_eq!(std::fs::read(replayed).unwrap(), std::fs::read(&file).unwrap());
    }
    // A read whose recorded bytes were altered is a mismatch.
    let altered = dir.join("altered.ds");
    let info: Vec<(String, Vec<u8>)> = TraceReader::open(&t).unwrap().info().to_vec();
    let info: Vec<(&str, &[u8])> = info
        .iter()
        .filter(|(k, _)| !k.starts_with("snapshot"))
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    let mut w =
        ra_trace::TraceWriter::create(&altered, &info, ra_trace::WriterConfig::default()).unwrap();
    let mut done = false;
    for e in TraceReader::open(&t).unwrap().events(None) {
        let mut e = e.unwrap();
        if !done && e.name == "io_uring_op" && int(&e, "opcode") == Some(1) && e.ret > Some(100) {
            if let Some(ArgValue::Data(d)) = e.arg("buf_out") {
                let mut d = d.to_vec();
                d[100] ^= 0xff;
                e.set_arg("buf_out", ArgValue::data(d));
                done = true;
            }
        }
        w.append_preserving(&e).unwrap();
    }
    w.finish().unwrap();
    assert!(done, "no read to alter");
    let root = dir.join("root-altered");
    std::fs::create_dir(&root).unwrap();
    let (r, _) = common::replay_json(&altered, &root, &[]);
    assert_eq!(r["per_call"]["io_uring_op"]["mismatched"], 1, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vectored_requests_recorded_with_their_data_ptrace() {
    vectored("ptrace");
}

#[test]
fn vectored_requests_recorded_with_their_data_ebpf() {
    vectored("ebpf");
}
