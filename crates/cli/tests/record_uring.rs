//! io_uring requests recorded by the eBPF recorder (`io_uring_op` events, docs/EBPF.md):
//! the testkit's `uring` program (raw rings: a linked write and fdatasync, a write and a read
//! with registered buffers and files, a plain read, a NOP and an opcode the recorder keeps as
//! its SQE), with and without an SQPOLL thread, checked against what the program reports;
//! and fio's io_uring engine (iodepth 1 and 32, SQPOLL, registered files and fixed buffers)
//! checked against fio's own counts of operations and bytes. `dump` and `stats` show them.
//! Both are replayed, through real rings and as system calls (`replay --uring`), verified
//! (every request's result and data, and the final tree against the recorded one); a
//! request whose recorded read data was altered is a mismatch, and a damaged record stops
//! the replay in one line.
//!
//! Every test needs root and a BPF-capable kernel: it skips with a printed reason otherwise,
//! and fails instead under REANIMATOR_REQUIRE_PRIVILEGED=1 (CI).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use ra_syscalls::uring::{data_source, IORING_FSYNC_DATASYNC, IOSQE_FIXED_FILE, IOSQE_IO_LINK};
use ra_testkit::ebpf_available;
use ra_trace::{ArgValue, Event, TraceReader};
use serde_json::Value;

use common::bin;

fn record(trace: &Path, cmd: &[&std::ffi::OsStr]) -> std::process::Output {
    let o = bin()
        .args(["record", "-q", "--backend", "ebpf", "-o"])
        .arg(trace)
        .arg("--")
        .args(cmd)
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn int(e: &Event, n: &str) -> Option<i64> {
    e.arg(n).and_then(ArgValue::as_int)
}

fn data(e: &Event, n: &str) -> Vec<u8> {
    match e.arg(n) {
        Some(ArgValue::Data(d)) => d.to_vec(),
        other => panic!("#{} {n}: {other:?}", e.unique_id),
    }
}

fn events(trace: &Path) -> Vec<Event> {
    let r = TraceReader::open(trace).unwrap();
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    r.events(None).map(|e| e.unwrap()).collect()
}

fn uring_program(sqpoll: bool) {
    if !ebpf_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir(if sqpoll { "uring-sqpoll" } else { "uring" });
    let trace = dir.join("t.ds");
    let prog = ra_testkit::program("uring");
    let mut cmd = vec![prog.as_os_str(), dir.as_os_str()];
    if sqpoll {
        cmd.push("sqpoll".as_ref());
    }
    let o = record(&trace, &cmd);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ev = events(&trace);
    let ops: BTreeMap<i64, &Event> = ev
        .iter()
        .filter(|e| e.name == "io_uring_op")
        .map(|e| (int(e, "user_data").unwrap(), e))
        .collect();
    let reported: BTreeMap<i64, i64> = j["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["user_data"].as_i64().unwrap(), o["res"].as_i64().unwrap()))
        .collect();
    assert_eq!(ev.iter().filter(|e| e.name == "io_uring_op").count(), 7, "one event per request");
    for (ud, res) in &reported {
        let e = ops.get(ud).unwrap_or_else(|| panic!("request {ud} not in the trace"));
        let got = if e.failed() { -i64::from(e.errno.unwrap()) } else { e.ret.unwrap() };
        assert_eq!(got, *res, "request {ud}'s result");
        assert_eq!(e.pid, j["pid"].as_i64().map(|p| p as i32), "request {ud}'s process");
        // (A ring only its SQPOLL thread submits to is never named by a call's descriptor.)
        let ring_fd = if sqpoll { Some(-1) } else { j["ring_fd"].as_i64() };
        assert_eq!(int(e, "ring_fd"), ring_fd, "request {ud}'s ring");
        assert!(e.time_called <= e.time_returned, "request {ud}: completed before submitted");
        // Submitted by an io_uring_enter of the same thread, or by the SQPOLL thread.
        let flags = int(e, "uring_flags").unwrap();
        match int(e, "enter_id").filter(|&id| id >= 0) {
            Some(id) => {
                assert!(!sqpoll, "request {ud}: an SQPOLL ring's request names an enter");
                let call = ev.iter().find(|c| c.unique_id == id as u64).unwrap();
                assert_eq!(call.name, "io_uring_enter", "request {ud}'s enter_id");
                assert_eq!(call.tid, e.tid, "request {ud} was submitted by another thread");
                assert!(call.unique_id < e.unique_id, "request {ud} before its enter");
            }
            None => assert!(sqpoll && flags & 1 != 0, "request {ud} has no enter_id"),
        }
    }
    let pattern = |k: usize, a: usize| (0..4096).map(|j| (j * k + a) as u8).collect::<Vec<u8>>();
    let (a, b) = (pattern(7, 1), pattern(11, 3));
    let fd = j["file_fd"].as_i64();
    let op = |ud: i64| ops[&ud];
    // 1: write, linked to 2: fdatasync.
    assert_eq!(int(op(1), "opcode"), Some(23));
    assert_eq!(int(op(1), "fd"), fd);
    assert_eq!((int(op(1), "offset"), int(op(1), "len")), (Some(0), Some(4096)));
    assert_eq!(data(op(1), "buf_in"), a, "the write's data");
    assert_eq!(int(op(1), "data_source"), Some(data_source::AT_SUBMISSION));
    assert!(int(op(1), "sqe_flags").unwrap() & i64::from(IOSQE_IO_LINK) != 0);
    assert_eq!(int(op(2), "opcode"), Some(3));
    assert!(int(op(2), "op_flags").unwrap() & i64::from(IORING_FSYNC_DATASYNC) != 0);
    // 3: write_fixed on registered file 0 from registered buffer 0.
    assert_eq!(int(op(3), "opcode"), Some(5));
    assert!(int(op(3), "sqe_flags").unwrap() & i64::from(IOSQE_FIXED_FILE) != 0);
    assert_eq!((int(op(3), "fd"), int(op(3), "buf_index")), (Some(0), Some(0)));
    assert_eq!(data(op(3), "buf_in"), b, "the fixed write's data");
    // 4: read of both pages; 5: read_fixed of the second.
    assert_eq!(data(op(4), "buf_out"), [a.clone(), b.clone()].concat(), "the read's data");
    assert_eq!(int(op(4), "data_source"), Some(data_source::AT_COMPLETION));
    assert_eq!(data(op(5), "buf_out"), b, "the fixed read's data");
    // The written file is what the requests said.
    assert_eq!(std::fs::read(dir.join("u.dat")).unwrap(), [a, b].concat());
    // 6: nop; 7: an opcode kept as its SQE.
    assert_eq!(int(op(6), "opcode"), Some(0));
    assert_eq!(int(op(7), "opcode"), Some(52));
    let sqe = data(op(7), "sqe");
    assert_eq!((sqe.len(), sqe[0], sqe[32]), (64, 52, 7), "the SQE as the kernel read it");

    // dump: the calls they stand for.
    let o = bin().arg("dump").arg(&trace).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let ring = if sqpoll { "?".to_string() } else { j["ring_fd"].to_string() };
    let path = dir.join("u.dat");
    for want in [
        format!("[uring {ring}] write({}<{}>, \"", fd.unwrap(), path.display()),
        format!("[uring {ring}] fdatasync({}<{}>", fd.unwrap(), path.display()),
        // The registered file named from the trace's io_uring_register (an SQPOLL ring's
        // requests come from no io_uring_enter: their ring's descriptor, and so its table,
        // is not known).
        if sqpoll {
            "[uring ?] write_fixed([fixed 0], ".to_string()
        } else {
            format!("[uring {ring}] write_fixed({}<{}>[fixed 0], ", fd.unwrap(), path.display())
        },
        format!("[uring {ring}] futex_wake(2, sqe=\"\\x34"),
    ] {
        assert!(text.contains(&want), "dump lacks {want:?}:\n{text}");
    }
    assert!(text.contains(") = 4096 <"), "dump shows no request latency:\n{text}");

    // stats: counted as the reads and writes they are.
    let o = bin().args(["stats", "--json"]).arg(&trace).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    let group = |g: &str| {
        s["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["group"] == g)
            .cloned()
            .unwrap_or_else(|| panic!("stats has no {g} row: {s}"))
    };
    assert_eq!(group("io_uring:write")["written_bytes"], 4096);
    assert_eq!(group("io_uring:write_fixed")["written_bytes"], 4096);
    assert_eq!(group("io_uring:read")["read_bytes"], 8192);
    assert_eq!(group("io_uring:read_fixed")["read_bytes"], 4096);

    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn raw_ring_requests_are_recorded_with_their_data() {
    uring_program(false);
}

#[test]
fn sqpoll_ring_requests_are_recorded_with_their_data() {
    uring_program(true);
}

/// fio with its io_uring engine: every write fio reports, with its bytes, is in the trace.
fn fio(extra: &[&str]) {
    if !ebpf_available() {
        return;
    }
    if std::process::Command::new("fio").arg("--version").output().is_err() {
        ra_testkit::privileged("fio", Err("fio is not installed".into()));
        return;
    }
    let dir = ra_testkit::scratch_dir(&format!("uring-fio{}", extra.join("").replace('=', "")));
    let trace = dir.join("t.ds");
    let file = dir.join("f");
    let mut args: Vec<std::ffi::OsString> = [
        "fio",
        "--name=w",
        "--ioengine=io_uring",
        "--rw=randwrite",
        "--bs=4k",
        "--size=2m",
        "--output-format=json",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.push(format!("--filename={}", file.display()).into());
    args.extend(extra.iter().map(Into::into));
    let argv: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let o = record(&trace, &argv);
    let j: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("fio's JSON: {e}: {}", String::from_utf8_lossy(&o.stdout)));
    let w = &j["jobs"][0]["write"];
    let (ios, bytes) = (w["total_ios"].as_u64().unwrap(), w["io_bytes"].as_u64().unwrap());
    assert!(ios > 0 && bytes > 0, "fio wrote nothing: {w}");
    let ev = events(&trace);
    let writes: Vec<&Event> = ev
        .iter()
        .filter(|e| e.name == "io_uring_op" && matches!(int(e, "opcode"), Some(23 | 5)))
        .collect();
    let size = |e: &Event| match e.arg("buf_in") {
        Some(ArgValue::Data(d)) => d.len() as u64,
        other => panic!("#{}: a write without its data: {other:?}", e.unique_id),
    };
    assert_eq!(writes.len() as u64, ios, "fio's writes vs the trace's ({extra:?})");
    let recorded: u64 = writes.iter().map(|e| e.ret.unwrap().max(0) as u64).sum();
    assert_eq!(recorded, bytes, "fio's bytes vs the trace's results ({extra:?})");
    assert_eq!(writes.iter().map(|e| size(e)).sum::<u64>(), bytes, "data captured ({extra:?})");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fio_io_uring_iodepth_1() {
    fio(&["--iodepth=1"]);
}

#[test]
fn fio_io_uring_iodepth_32() {
    fio(&["--iodepth=32"]);
}

#[test]
fn fio_io_uring_sqpoll_registered_files_fixed_buffers() {
    fio(&["--iodepth=32", "--sqthread_poll=1", "--registerfiles", "--fixedbufs"]);
}

/// Record `cmd` with the eBPF recorder and a snapshot of `work` (its start and end state).
fn record_snapshot(trace: &Path, work: &Path, cmd: &[&std::ffi::OsStr]) -> std::process::Output {
    let o = bin()
        .args(["record", "-q", "--backend", "ebpf", "-o"])
        .arg(trace)
        .arg("--snapshot")
        .arg(work)
        .arg("--")
        .args(cmd)
        .current_dir(work)
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
    o
}

/// Replay `trace` into a fresh `root` with `--init` and `extra` options: the JSON report,
/// and the exit status.
fn replay(trace: &Path, root: &Path, extra: &[&str]) -> (Value, std::process::Output) {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).unwrap();
    common::replay_json(trace, root, extra)
}

/// Replay in both modes: every call matched, the final tree the recorded one (replay's own
/// check, and the files compared here), `issued` requests issued (through the ring) and the
/// io_uring_op counts of each mode returned.
fn replay_verified(dir: &Path, trace: &Path, work: &Path, files: &[&str]) -> Vec<Value> {
    let mut per_mode = Vec::new();
    for mode in ["ring", "as-syscalls"] {
        let root = dir.join(format!("root-{mode}"));
        let (r, o) = replay(trace, &root, &["--uring", mode]);
        let show = || serde_json::to_string_pretty(&r).unwrap();
        assert_eq!(r["mismatch_total"], 0, "--uring {mode}: {}", show());
        let fs = r["final_state"].as_array().unwrap();
        assert_eq!(fs.len(), 1, "{}", show());
        assert_eq!(fs[0]["differences"], 0, "--uring {mode}: final state: {}", show());
        assert_eq!(o.status.code(), Some(0), "--uring {mode}: {}", show());
        let replayed = root.join(work.strip_prefix("/").unwrap());
        for f in files {
            assert_eq!(
                std::fs::read(replayed.join(f)).unwrap(),
                std::fs::read(work.join(f)).unwrap(),
                "--uring {mode}: {f} differs from the recorded run's"
            );
        }
        let d = bin().arg("diff").arg(work).arg(&replayed).output().unwrap();
        assert_eq!(d.status.code(), Some(0), "diff: {}", String::from_utf8_lossy(&d.stdout));
        per_mode.push(r["per_call"]["io_uring_op"].clone());
    }
    // A compiled plan replays the same (its planner placed the requests the same way).
    let plan = dir.join("t.plan");
    let o = bin().arg("compile").arg(trace).arg("-o").arg(&plan).arg("-q").output().unwrap();
    assert!(o.status.success(), "compile: {}", String::from_utf8_lossy(&o.stderr));
    let (r, o) = replay(&plan, &dir.join("root-plan"), &[]);
    assert_eq!((r["mismatch_total"].as_u64(), o.status.code()), (Some(0), Some(0)), "plan: {r}");
    assert_eq!(r["per_call"]["io_uring_op"], per_mode[0], "the plan's requests and the trace's");
    assert_eq!(r["final_state"][0]["differences"], 0, "plan: {r}");
    per_mode
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

fn uring_program_replay(sqpoll: bool) {
    if !ebpf_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir(if sqpoll { "uring-replay-sqpoll" } else { "uring-replay" });
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    let trace = dir.join("t.ds");
    let prog = ra_testkit::program("uring");
    let mut cmd = vec![prog.as_os_str(), work.as_os_str()];
    if sqpoll {
        cmd.push("sqpoll".as_ref());
    }
    record_snapshot(&trace, &work, &cmd);
    let modes = replay_verified(&dir, &trace, &work, &["u.dat"]);
    // Through the ring: write, fsync, write_fixed, read, read_fixed and nop issued and
    // matched; futex_wake (kept as its SQE) not replayed, and counted. As system calls, the
    // nop is done on the model.
    for (m, issued, emulated) in [(&modes[0], 6, 0), (&modes[1], 5, 1)] {
        assert_eq!((&m["issued"], &m["emulated"]), (&issued.into(), &emulated.into()), "{m}");
        assert_eq!(
            (&m["matched"], &m["simulated"], &m["mismatched"]),
            (&6.into(), &1.into(), &0.into()),
            "{m}"
        );
    }

    // --reads none leaves the two reads out, as it does calls' reads.
    let (r, _) = replay(&trace, &dir.join("root-noreads"), &["--reads", "none"]);
    let ops = &r["per_call"]["io_uring_op"];
    assert_eq!((&ops["skipped"], &ops["issued"]), (&2.into(), &4.into()), "--reads none: {r}");
    assert_eq!(r["mismatch_total"], 0, "--reads none: {r}");

    // Verification is real: a read whose recorded bytes were altered is a mismatch, in
    // both modes.
    let altered = dir.join("altered.ds");
    rewrite(&trace, &altered, |e| {
        if e.name == "io_uring_op" && int(e, "user_data") == Some(4) {
            let mut d = data(e, "buf_out");
            d[100] ^= 0xff;
            e.set_arg("buf_out", ArgValue::Data(d.into()));
        }
    });
    for mode in ["ring", "as-syscalls"] {
        let (r, o) = replay(&altered, &dir.join("root-altered"), &["--uring", mode]);
        assert_eq!(r["per_call"]["io_uring_op"]["mismatched"], 1, "--uring {mode}: {r}");
        let m: Vec<&Value> = r["mismatches"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["call"] == "io_uring_op")
            .collect();
        assert!(
            m.len() == 1
                && m[0]["what"]
                    .as_str()
                    .unwrap()
                    .contains("buf_out (first difference at byte 100)"),
            "--uring {mode}: {m:?}"
        );
        assert_ne!(o.status.code(), Some(0));
    }

    // A damaged record (an opcode no SQE can hold): one line, a non-zero exit, nothing
    // replayed past it.
    let bad = dir.join("bad.ds");
    rewrite(&trace, &bad, |e| {
        if e.name == "io_uring_op" && int(e, "user_data") == Some(3) {
            e.set_arg("opcode", ArgValue::Int(1000));
        }
    });
    let root = dir.join("root-bad");
    std::fs::create_dir(&root).unwrap();
    let o = bin().arg("replay").arg(&bad).arg("--root").arg(&root).arg("-q").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(1) | Some(2)), "{o:?}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("(io_uring_op): `opcode` 1000 is out of range"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where io_uring cannot be set up (here: a seccomp filter failing io_uring_setup with EPERM,
/// as kernel.io_uring_disabled=2 does), the default replays the requests as system calls
/// and says so, verified all the same; `--uring ring` is refused in one line.
#[test]
fn without_io_uring_the_replay_falls_back_to_system_calls_or_refuses_in_one_line() {
    if !ebpf_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("uring-disabled");
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    let trace = dir.join("t.ds");
    let prog = ra_testkit::program("uring");
    record_snapshot(&trace, &work, &[prog.as_os_str(), work.as_os_str()]);
    let nouring = ra_testkit::program("nouring");
    let run = |root: &Path, extra: &[&str]| {
        std::fs::create_dir(root).unwrap();
        std::process::Command::new(&nouring)
            .arg(env!("CARGO_BIN_EXE_reanimator"))
            .arg("replay")
            .arg(&trace)
            .arg("--root")
            .arg(root)
            .args(["--init", "--json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&dir.join("root-auto"), &[]);
    let r: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!((r["mismatch_total"].as_u64(), o.status.code()), (Some(0), Some(0)), "{r}");
    assert_eq!(r["final_state"][0]["differences"], 0, "{r}");
    let ops = &r["per_call"]["io_uring_op"];
    assert_eq!((&ops["issued"], &ops["matched"]), (&5.into(), &6.into()), "as system calls: {r}");
    let said = r["warnings"].as_object().unwrap().keys().any(|k| {
        k.starts_with("io_uring cannot be set up here (io_uring_setup: Operation not permitted")
            && k.contains("replayed as the system calls they stand for")
    });
    assert!(said, "the fallback is not stated: {r}");
    let o = run(&dir.join("root-ring"), &["--uring", "ring"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(1) | Some(2)), "{o:?}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("io_uring cannot be set up here") && err.contains("--uring as-syscalls"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn uring_program_replays_verified_through_a_ring_and_as_syscalls() {
    uring_program_replay(false);
}

#[test]
fn sqpoll_uring_program_replays_verified_through_a_ring_and_as_syscalls() {
    uring_program_replay(true);
}

/// fio's io_uring engine, 4 KiB random writes at iodepth 32 (and `extra`): every write
/// replayed, through the ring and as pwrite64, with 0 mismatches and the file fio wrote.
fn fio_replay(tag: &str, extra: &[&str]) {
    if !ebpf_available() {
        return;
    }
    if std::process::Command::new("fio").arg("--version").output().is_err() {
        ra_testkit::privileged("fio", Err("fio is not installed".into()));
        return;
    }
    let dir = ra_testkit::scratch_dir(&format!("uring-fio-replay{tag}"));
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    let trace = dir.join("t.ds");
    let file = work.join("f");
    let filename = format!("--filename={}", file.display());
    let args = [
        "fio",
        "--name=w",
        "--ioengine=io_uring",
        "--rw=randwrite",
        "--bs=4k",
        "--iodepth=32",
        "--size=8M",
        "--output-format=json",
        &filename,
    ];
    let cmd: Vec<&std::ffi::OsStr> = args.iter().chain(extra).map(|s| s.as_ref()).collect();
    let o = record_snapshot(&trace, &work, &cmd);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ios = j["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(ios, 2048, "8 MiB in 4 KiB writes");
    let modes = replay_verified(&dir, &trace, &work, &["f"]);
    for m in &modes {
        assert_eq!(m["issued"], ios, "every write issued: {m}");
        assert_eq!(m["matched"], ios, "{m}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fio_io_uring_randwrite_iodepth_32_replays_to_the_same_file() {
    fio_replay("", &[]);
}

/// With an SQPOLL thread (its requests name no io_uring_enter), a registered file and fixed
/// buffers (registered again as the replay's own: the trace has only their count).
#[test]
fn fio_io_uring_sqpoll_registered_files_fixed_buffers_replay_to_the_same_file() {
    fio_replay("-sqpoll", &["--sqthread_poll=1", "--registerfiles", "--fixedbufs"]);
}
