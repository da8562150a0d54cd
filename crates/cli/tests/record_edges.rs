//! The recorder on the hard cases of process tracing: signals interrupting calls and restarted
//! calls, execve from a non-leader thread (the tid changes), exit_group while other threads are
//! blocked in captured calls. Programs: crates/testkit/c/{sigrestart,threadexec,exitgroup}.c.
//! Every test runs with both backends (`<test>::ptrace`, `<test>::ebpf`; the eBPF ones skip
//! with a printed reason where eBPF cannot run, and fail under REANIMATOR_REQUIRE_PRIVILEGED=1).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use ra_trace::{ArgValue, Event, TraceReader};

use ra_testkit::{backend, both_backends};

use common::bin;

both_backends!(
    interrupted_and_restarted_calls_are_recorded_as_the_kernel_reports_them,
    exec_from_a_thread_is_followed,
    exit_group_with_threads_blocked_in_calls_neither_hangs_nor_loses_them,
    fcntl_locks_keep_their_struct_flock,
    thirty_two_bit_arguments_are_recorded_as_the_kernel_reads_them,
    short_lived_children_are_counted_once,
);

fn record(name: &str) -> (std::process::Output, Vec<Event>) {
    let dir = ra_testkit::backend_scratch_dir("edge", name);
    let trace = dir.join("t.ds");
    let t0 = Instant::now();
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "-o"])
        .arg(&trace)
        .arg("--")
        .arg(ra_testkit::program(name))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(30), "{name}: the recording ended");
    let ev = TraceReader::open(&trace).unwrap().events(None).map(|e| e.unwrap()).collect();
    (o, ev)
}

fn json(o: &std::process::Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(out.lines().last().expect("the program's JSON line")).unwrap()
}

fn interrupted_and_restarted_calls_are_recorded_as_the_kernel_reports_them() {
    let (o, ev) = record("sigrestart");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&o);
    let fd = ArgValue::Int(j["read_fd"].as_i64().unwrap());
    let reads: Vec<&Event> =
        ev.iter().filter(|e| e.name == "read" && e.arg("fd") == Some(&fd)).collect();
    // The program's own read on the pipe: interrupted by SIGALRM (the tracer sees the
    // kernel-internal ERESTARTSYS), restarted by the kernel (SA_RESTART), then "late".
    let last = reads.last().unwrap();
    assert_eq!(
        (last.ret, last.arg("buf").and_then(ArgValue::as_data)),
        (Some(4), Some(&b"late"[..]))
    );
    assert!(
        reads.iter().any(|e| e.errno.is_some_and(ra_trace::format::is_restart_errno)),
        "the interruption is recorded"
    );
    // Without SA_RESTART the same happens at the syscall boundary; the program sees EINTR.
    let fd2 = ArgValue::Int(j["eintr_fd"].as_i64().unwrap());
    let r2: Vec<&Event> =
        ev.iter().filter(|e| e.name == "read" && e.arg("fd") == Some(&fd2)).collect();
    assert!(!r2.is_empty() && r2.iter().all(|e| e.ret == Some(-1)));
    assert_eq!(j["eintr_errno"], 4);
}

fn exec_from_a_thread_is_followed() {
    let (o, ev) = record("threadexec");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&o);
    let pid = j["pid"].as_i64().unwrap() as i32;
    let tid = j["exec_tid"].as_i64().unwrap() as i32;
    assert_ne!(pid, tid);
    let exec = ev
        .iter()
        .find(|e| {
            e.name == "execve"
                && e.arg("pathname").and_then(ArgValue::as_data) == Some(b"/bin/true\0")
        })
        .expect("the thread's execve");
    assert_eq!((exec.pid, exec.tid, exec.ret), (Some(pid), Some(tid), Some(0)));
    // After the exec the program runs as the process's leader id.
    let after: Vec<&Event> = ev.iter().filter(|e| e.unique_id > exec.unique_id).collect();
    assert!(!after.is_empty());
    assert!(after.iter().all(|e| e.pid == Some(pid) && e.tid == Some(pid)), "tid became the pid");
    assert_eq!(after.last().map(|e| e.name.as_str()), Some("exit_group"));
}

fn exit_group_with_threads_blocked_in_calls_neither_hangs_nor_loses_them() {
    let (o, ev) = record("exitgroup");
    assert_eq!(o.status.code(), Some(7));
    let j = json(&o);
    let fd = ArgValue::Int(j["pipe_read_fd"].as_i64().unwrap());
    let eg = ev.iter().find(|e| e.name == "exit_group").expect("exit_group");
    assert_eq!(eg.arg("status"), Some(&ArgValue::Int(7)));
    // Each of the four threads' reads is in the trace, cut short by the exit: no result.
    let unfinished: std::collections::BTreeSet<i32> = ev
        .iter()
        .filter(|e| e.name == "read" && e.arg("fd") == Some(&fd) && e.ret.is_none())
        .filter_map(|e| e.tid)
        .collect();
    assert_eq!(unfinished.len(), 4, "{unfinished:?}");
}

fn fcntl_locks_keep_their_struct_flock() {
    if Command::new("sqlite3").arg("-version").output().is_err() {
        assert!(
            std::env::var("REANIMATOR_REQUIRE_TESTDATA").as_deref() != Ok("1"),
            "sqlite3 missing"
        );
        eprintln!("skip: sqlite3 not installed");
        return;
    }
    let dir = ra_testkit::backend_scratch_dir("edge", "flock");
    let trace = dir.join("t.ds");
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "-o"])
        .arg(&trace)
        .args(["--", "sqlite3"])
        .arg(dir.join("db"))
        .arg("create table t(x); insert into t values (1);")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ev: Vec<Event> =
        TraceReader::open(&trace).unwrap().events(None).map(|e| e.unwrap()).collect();
    let col = |e: &Event, n: &str| e.extra.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    // sqlite takes its locks with F_SETLK (6) around the lock bytes at 1 GiB.
    let locks: Vec<&Event> = ev
        .iter()
        .filter(|e| e.name == "fcntl" && e.arg("cmd") == Some(&ArgValue::Int(6)))
        .collect();
    assert!(!locks.is_empty(), "sqlite3 used F_SETLK");
    for e in &locks {
        let t = col(e, "lock_type");
        assert!(matches!(t, Some(ra_trace::ExtraValue::Int(0..=2))), "lock_type recorded: {t:?}");
        // Its decoded bool columns agree (they were left false).
        let ra_trace::ExtraValue::Int(t) = t.unwrap() else { unreachable!() };
        let bools = ["lock_type_read", "lock_type_write", "lock_type_unlocked"]
            .map(|n| col(e, n) == Some(ra_trace::ExtraValue::Bool(true)));
        let mut want = [false; 3];
        want[t as usize] = true;
        assert_eq!(bools, want, "lock_type {t}: the lock_type_* columns");
        assert_eq!(col(e, "lock_whence_start"), Some(ra_trace::ExtraValue::Bool(true)));
    }
    assert!(locks
        .iter()
        .any(|e| col(e, "lock_start") == Some(ra_trace::ExtraValue::Int(0x4000_0000))));
}

/// highbits.c passes `int`-sized arguments with garbage in the upper half of their registers.
/// The trace holds what the kernel read: F_SETLK with its struct flock (the command check
/// missed it), SEEK_END, getdents64's count (a replay of the garbage fails with EINVAL), the
/// open mode's 16 bits; and a replay of the trace is clean.
fn thirty_two_bit_arguments_are_recorded_as_the_kernel_reads_them() {
    let (o, ev) = record("highbits");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&o);
    assert_eq!(
        (j["lock_ok"].as_i64(), j["end"].as_i64(), j["mode"].as_i64()),
        (Some(1), Some(10), Some(0o640))
    );
    let int = |e: &Event, a: &str| e.arg(a).and_then(ArgValue::as_int);
    let open = ev
        .iter()
        .find(|e| {
            e.name == "openat"
                && e.arg("pathname").and_then(ArgValue::as_data) == Some(&b"data\0"[..])
        })
        .expect("openat of data");
    assert_eq!(int(open, "dirfd"), Some(-100));
    assert_eq!(int(open, "flags"), Some(i64::from(libc::O_CREAT | libc::O_RDWR | libc::O_TRUNC)));
    assert_eq!(int(open, "mode"), Some(0o640));
    let lock = ev.iter().find(|e| e.name == "fcntl" && e.ret == Some(0)).expect("fcntl");
    assert_eq!(int(lock, "cmd"), Some(i64::from(libc::F_SETLK)));
    let col = |e: &Event, n: &str| e.extra.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    assert_eq!(col(lock, "lock_start"), Some(ra_trace::ExtraValue::Int(2)), "the struct flock");
    assert_eq!(col(lock, "lock_length"), Some(ra_trace::ExtraValue::Int(3)));
    let seek = ev.iter().find(|e| e.name == "lseek").expect("lseek");
    assert_eq!(int(seek, "whence"), Some(i64::from(libc::SEEK_END)));
    let dents = ev.iter().find(|e| e.name == "getdents64").expect("getdents64");
    assert_eq!(int(dents, "count"), Some(4096));
    let dir = ev
        .iter()
        .find(|e| {
            e.name == "openat" && e.arg("pathname").and_then(ArgValue::as_data) == Some(&b".\0"[..])
        })
        .expect("openat of .");
    assert_eq!(int(dents, "fd"), dir.ret);
    assert!(dents.ret.is_some_and(|n| n > 0));
}

/// 100 children that end at once, several times over: the summary counts each once. (ptrace
/// counted a child again when its parent's fork event was reported after the child had ended:
/// "168 processes, 169 threads".)
fn short_lived_children_are_counted_once() {
    for _ in 0..4 {
        let dir = ra_testkit::backend_scratch_dir("edge", "count");
        let o = bin()
            .args(["record", "--backend", backend(), "-o"])
            .arg(dir.join("t.ds"))
            .args(["--", "sh", "-c", "for i in $(seq 100); do /bin/true & done; wait"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        // sh, seq and the 100 children.
        assert!(err.contains("from 102 processes, 102 threads"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
