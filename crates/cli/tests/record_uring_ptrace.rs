//! io_uring requests recorded by the unprivileged ptrace recorder (`io_uring_op` events read
//! from the program's rings at its io_uring_enter calls, docs/TRACE_FORMAT.md 3.12): fio's
//! io_uring engine at iodepth 1 and 32, writes and reads, checked against fio's own counts
//! and against the file's bytes; an SQPOLL ring, which it cannot see, stated in the trace and
//! in record's summary; and `--io-uring deny`.
//!
//! Needs fio (REANIMATOR_REQUIRE_TESTDATA=1: fails without it) and io_uring enabled
//! (REANIMATOR_REQUIRE_PRIVILEGED=1: fails when it is not).

mod common;

use std::ffi::OsString;
use std::path::Path;

use ra_syscalls::uring::data_source;
use ra_trace::{ArgValue, Event, TraceReader};
use serde_json::Value;

use common::bin;

/// Whether this kernel lets us create a ring, and fio is there.
fn io_uring_available() -> bool {
    ra_testkit::io_uring_available() && ra_testkit::have_program("fio")
}

fn int(e: &Event, n: &str) -> Option<i64> {
    e.arg(n).and_then(ArgValue::as_int)
}

fn data<'a>(e: &'a Event, n: &str) -> &'a [u8] {
    match e.arg(n) {
        Some(ArgValue::Data(d)) => d,
        other => panic!("#{} {n}: {other:?}", e.unique_id),
    }
}

struct Recorded {
    events: Vec<Event>,
    facts: Vec<(String, String)>,
    fio: Value,
    stderr: String,
}

impl Recorded {
    fn ops(&self, opcodes: &[i64]) -> Vec<&Event> {
        self.events
            .iter()
            .filter(|e| e.name == "io_uring_op")
            .filter(|e| int(e, "opcode").is_some_and(|o| opcodes.contains(&o)))
            .collect()
    }

    fn fact(&self, k: &str) -> Option<&str> {
        self.facts.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    /// fio's count of operations in direction `dir` (`read`, `write`).
    fn fio_ios(&self, dir: &str) -> u64 {
        self.fio["jobs"][0][dir]["total_ios"].as_u64().unwrap()
    }
}

/// Record fio (`--ioengine=io_uring --bs=4k --size=4m`, `extra`) on `file` with `backend`.
fn record_fio(backend: &str, trace: &Path, file: &Path, extra: &[&str], opts: &[&str]) -> Recorded {
    let mut cmd: Vec<OsString> =
        ["fio", "--name=j", "--ioengine=io_uring", "--bs=4k", "--size=4m", "--output-format=json"]
            .iter()
            .map(Into::into)
            .collect();
    cmd.push(format!("--filename={}", file.display()).into());
    cmd.extend(extra.iter().map(Into::into));
    let o = bin()
        .args(["record", "-q", "--backend", backend, "-o"])
        .arg(trace)
        .args(opts)
        .arg("--")
        .args(&cmd)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "record {extra:?}: {stderr}");
    let fio: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("fio's JSON: {e}: {}", String::from_utf8_lossy(&o.stdout)));
    let r = TraceReader::open(trace).unwrap();
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    let facts = r
        .info()
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect();
    let events = r.events(None).map(|e| e.unwrap()).collect();
    Recorded { events, facts, fio, stderr }
}

/// Every op's enter_id names an earlier io_uring_enter of the same thread.
fn check_enters(events: &[Event], ops: &[&Event]) {
    let enters: std::collections::HashMap<u64, &Event> =
        events.iter().filter(|e| e.name == "io_uring_enter").map(|e| (e.unique_id, e)).collect();
    for e in ops {
        let id = int(e, "enter_id").unwrap();
        let call = enters.get(&(id as u64)).unwrap_or_else(|| {
            panic!("#{}: enter_id {id} is no io_uring_enter of the trace", e.unique_id)
        });
        assert_eq!(call.tid, e.tid, "#{}: submitted by another thread", e.unique_id);
        assert!(call.unique_id < e.unique_id, "#{} before its enter", e.unique_id);
        assert_eq!(int(e, "ring_fd"), int(call, "fd"), "#{}: ring_fd", e.unique_id);
        assert!(e.time_called <= e.time_returned, "#{}: completed before submitted", e.unique_id);
    }
}

/// fio's random 4 KiB writes at `iodepth`: every write in the trace, each with the bytes the
/// file holds at its offset (fio's random map writes each block once); the same count as
/// the eBPF recorder's where it can run.
fn writes(iodepth: &str) {
    if !io_uring_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir(&format!("uring-pt-w{iodepth}"));
    let (trace, file) = (dir.join("t.ds"), dir.join("f"));
    let extra = ["--rw=randwrite", iodepth];
    let r = record_fio("ptrace", &trace, &file, &extra, &[]);
    let ios = r.fio_ios("write");
    assert_eq!(ios, 1024, "fio's writes: {}", r.fio["jobs"][0]["write"]);
    let writes = r.ops(&[23, 5]);
    assert_eq!(writes.len() as u64, ios, "fio's writes vs the trace's ({iodepth})");
    assert_eq!(r.fact("uring_ops"), Some("1024"), "{:?}", r.facts);
    assert_eq!(r.fact("uring_unobserved"), Some("0"));
    let content = std::fs::read(&file).unwrap();
    for e in &writes {
        assert_eq!(e.ret, Some(4096), "#{}", e.unique_id);
        assert_eq!(int(e, "data_source"), Some(data_source::AT_SUBMISSION));
        let off = int(e, "offset").unwrap() as usize;
        assert!(
            data(e, "buf_in") == &content[off..off + 4096],
            "#{}: the write's data is not the file's bytes at {off}",
            e.unique_id
        );
    }
    check_enters(&r.events, &writes);
    if ra_testkit::ebpf_available() {
        let t2 = dir.join("e.ds");
        let e = record_fio("ebpf", &t2, &dir.join("f2"), &extra, &[]);
        assert_eq!(e.ops(&[23, 5]).len(), writes.len(), "ebpf's writes vs ptrace's");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fio_randwrite_iodepth_1() {
    writes("--iodepth=1");
}

#[test]
fn fio_randwrite_iodepth_32() {
    writes("--iodepth=32");
}

/// fio's random reads of a file we wrote: each read's data is the file's bytes at its
/// offset, read from its buffer at the completion.
#[test]
fn fio_randread_data_matches_the_file() {
    if !io_uring_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("uring-pt-r");
    let (trace, file) = (dir.join("t.ds"), dir.join("f"));
    let content: Vec<u8> = (0..4usize << 20).map(|i| (i * 31 + i / 4096) as u8).collect();
    std::fs::write(&file, &content).unwrap();
    let r = record_fio("ptrace", &trace, &file, &["--rw=randread", "--iodepth=32"], &[]);
    let reads = r.ops(&[22, 4]);
    assert_eq!(reads.len() as u64, r.fio_ios("read"), "fio's reads vs the trace's");
    assert_eq!(reads.len(), 1024);
    for e in &reads {
        let off = int(e, "offset").unwrap() as usize;
        assert!(
            data(e, "buf_out") == &content[off..off + 4096],
            "#{}: the read's data is not the file's bytes at {off}",
            e.unique_id
        );
        let source = int(e, "data_source").unwrap();
        assert!(
            [data_source::AT_COMPLETION, data_source::AFTER_COMPLETION].contains(&source),
            "#{}: data_source {source}",
            e.unique_id
        );
    }
    check_enters(&r.events, &reads);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An SQPOLL ring: its submissions make no call, so the recorder cannot see them; it says so
/// in the trace's facts and in record's summary instead of leaving them silently out.
#[test]
fn sqpoll_is_detected_and_stated() {
    if !io_uring_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("uring-pt-sqpoll");
    let (trace, file) = (dir.join("t.ds"), dir.join("f"));
    let extra = ["--rw=randwrite", "--iodepth=32", "--sqthread_poll=1"];
    let r = record_fio("ptrace", &trace, &file, &extra, &[]);
    assert_eq!(r.fio_ios("write"), 1024);
    assert_eq!(r.fact("uring_rings_unobserved"), Some("1"), "{:?}", r.facts);
    assert_eq!(r.fact("uring_unobserved_why"), Some("SQPOLL"), "{:?}", r.facts);
    let unseen: u64 = r.fact("uring_unobserved").unwrap().parse().unwrap();
    let seen = r.ops(&[23, 5]).len() as u64;
    assert!(unseen > 0, "no request counted as unobserved: {:?}", r.facts);
    assert!(seen + unseen <= 1024 && seen + unseen >= 1024 - 32, "{seen} seen, {unseen} not");
    assert!(
        r.stderr.contains("could not be seen by the ptrace recorder")
            && r.stderr.contains("--backend ebpf"),
        "record's summary does not say so: {}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--io-uring deny`: fio's io_uring_setup fails with ENOSYS, as the trace shows; fio stops
/// with its error and no request is recorded. The eBPF backend refuses the option.
#[test]
fn io_uring_deny_fails_setup_with_enosys() {
    if !io_uring_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("uring-pt-deny");
    let (trace, file) = (dir.join("t.ds"), dir.join("f"));
    let o = bin()
        .args(["record", "--backend", "ptrace", "--io-uring", "deny", "-o"])
        .arg(&trace)
        .args(["--", "fio", "--name=j", "--ioengine=io_uring", "--rw=randwrite", "--bs=4k"])
        .args(["--size=1m", &format!("--filename={}", file.display())])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
    assert!(!o.status.success(), "fio ran without io_uring: {said}");
    assert!(said.contains("made to fail with ENOSYS (--io-uring deny)"), "{said}");
    let r = TraceReader::open(&trace).unwrap();
    assert!(
        r.info_value("io_uring_denied").is_some_and(|v| v != b"0"),
        "no io_uring_denied fact: {:?}",
        r.info_value("io_uring_denied")
    );
    let ev: Vec<Event> = r.events(None).map(|e| e.unwrap()).collect();
    let setups: Vec<&Event> = ev.iter().filter(|e| e.name == "io_uring_setup").collect();
    assert!(!setups.is_empty(), "no io_uring_setup in the trace");
    for e in &setups {
        assert_eq!((e.ret, e.errno), (Some(-1), Some(libc::ENOSYS)), "#{}", e.unique_id);
    }
    assert!(!ev.iter().any(|e| e.name == "io_uring_op" || e.name == "io_uring_enter"));
    let o = bin()
        .args(["record", "--backend", "ebpf", "--io-uring", "deny", "-o"])
        .arg(dir.join("e.ds"))
        .args(["--", "true"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && said.contains("--io-uring deny needs the ptrace backend"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The testkit's `uring` program (raw rings: a linked write and fdatasync, a write and a read
/// with registered buffers and files, a plain read, a NOP, an opcode kept as its SQE): every
/// request with the result the program reports and its data; with an SQPOLL ring, none
/// recorded and all 7 counted as unobserved.
fn uring_program(sqpoll: bool) {
    if !io_uring_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir(if sqpoll { "uring-pt-prog-sq" } else { "uring-pt-prog" });
    let trace = dir.join("t.ds");
    let prog = ra_testkit::program("uring");
    let mut cmd = vec![prog.as_os_str(), dir.as_os_str()];
    if sqpoll {
        cmd.push("sqpoll".as_ref());
    }
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o"])
        .arg(&trace)
        .arg("--")
        .args(&cmd)
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = TraceReader::open(&trace).unwrap();
    let unobserved = r.info_value("uring_unobserved").map(|v| v.to_vec());
    let ev: Vec<Event> = r.events(None).map(|e| e.unwrap()).collect();
    let ops: std::collections::BTreeMap<i64, &Event> = ev
        .iter()
        .filter(|e| e.name == "io_uring_op")
        .map(|e| (int(e, "user_data").unwrap(), e))
        .collect();
    if sqpoll {
        assert!(ops.is_empty(), "an SQPOLL ring's requests cannot be read at calls");
        assert_eq!(unobserved.as_deref(), Some(&b"7"[..]), "all 7 counted as unobserved");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--backend ebpf"));
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    assert_eq!(unobserved.as_deref(), Some(&b"0"[..]));
    assert_eq!(ops.len(), 7, "one event per request");
    for o in j["ops"].as_array().unwrap() {
        let ud = o["user_data"].as_i64().unwrap();
        let e = ops.get(&ud).unwrap_or_else(|| panic!("request {ud} not in the trace"));
        let got = if e.failed() { -i64::from(e.errno.unwrap()) } else { e.ret.unwrap() };
        assert_eq!(got, o["res"].as_i64().unwrap(), "request {ud}'s result");
        assert_eq!(int(e, "ring_fd"), j["ring_fd"].as_i64(), "request {ud}'s ring");
    }
    let pattern = |k: usize, a: usize| (0..4096).map(|j| (j * k + a) as u8).collect::<Vec<u8>>();
    let (a, b) = (pattern(7, 1), pattern(11, 3));
    assert_eq!(data(ops[&1], "buf_in"), &a[..], "the write's data");
    assert_eq!(int(ops[&2], "opcode"), Some(3), "the linked fdatasync");
    assert_eq!(data(ops[&3], "buf_in"), &b[..], "the fixed write's data");
    assert_eq!(data(ops[&4], "buf_out"), &[a, b.clone()].concat()[..], "the read's data");
    assert_eq!(data(ops[&5], "buf_out"), &b[..], "the fixed read's data");
    let sqe = data(ops[&7], "sqe");
    assert_eq!((sqe.len(), sqe[0], sqe[32]), (64, 52, 7), "the unknown opcode's SQE");
    check_enters(&ev, &ops.values().copied().collect::<Vec<_>>());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn raw_ring_requests_are_recorded_with_their_data() {
    uring_program(false);
}

#[test]
fn sqpoll_ring_requests_are_counted_as_unobserved() {
    uring_program(true);
}

/// `--data` per direction applies to requests as to calls: `write=hash,read=none` keeps each
/// write's length and digest and no read data (marked not captured, not lost).
#[test]
fn data_mode_applies_per_direction() {
    if !io_uring_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("uring-pt-data");
    let (trace, file) = (dir.join("t.ds"), dir.join("f"));
    let extra = ["--rw=randrw", "--iodepth=8", "--size=1m"];
    let r = record_fio("ptrace", &trace, &file, &extra, &["--data", "write=hash,read=none"]);
    let (writes, reads) = (r.ops(&[23]), r.ops(&[22]));
    assert_eq!(writes.len() as u64, r.fio_ios("write"));
    assert_eq!(reads.len() as u64, r.fio_ios("read"));
    assert!(!writes.is_empty() && !reads.is_empty());
    for e in &writes {
        assert!(
            matches!(e.arg("buf_in"), Some(ArgValue::Hashed { len: 4096, .. })),
            "#{}: {:?}",
            e.unique_id,
            e.arg("buf_in")
        );
        assert_eq!(int(e, "data_source"), Some(data_source::AT_SUBMISSION));
    }
    for e in &reads {
        assert!(matches!(e.arg("buf_out"), Some(ArgValue::NotCaptured)), "#{}", e.unique_id);
        assert!(e.buffer_not_captured);
        assert_eq!(int(e, "data_source"), Some(data_source::NONE));
    }
    assert_eq!(r.fact("uring_data_not_captured"), Some("0"));
    let _ = std::fs::remove_dir_all(&dir);
}
