//! `reanimator record` end to end: data captured exactly, exit status passed through, bad input
//! rejected in one line, and a recorder killed with SIGKILL leaves a readable trace holding
//! everything it flushed. The tests wrapped by `both_backends!` run once per backend
//! (`<test>::ptrace`, `<test>::ebpf`; the eBPF ones skip with a printed reason where eBPF cannot
//! run, and fail under REANIMATOR_REQUIRE_PRIVILEGED=1); the others are ptrace-specific.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ra_trace::{ArgValue, Event, TraceReader};

use ra_testkit::{backend, both_backends};

use common::bin;

both_backends!(
    captures_what_cat_reads_and_writes,
    follows_children_and_passes_the_exit_status_through,
    bad_input_is_one_line,
    a_recorder_killed_with_sigkill_leaves_a_readable_trace,
    attaches_to_a_running_process_and_detaches_on_ctrl_c,
    data_hash_and_none_keep_metadata_and_drop_bulk_bytes,
    dump_jsonl_writes_paths_as_strings_and_other_bytes_as_hex,
);

/// `reanimator record --backend <this thread's backend>`.
fn rec() -> Command {
    let mut c = bin();
    c.args(["record", "--backend", backend()]);
    c
}

fn scratch(name: &str) -> PathBuf {
    ra_testkit::backend_scratch_dir("rec", name)
}

fn events(path: &std::path::Path) -> Vec<Event> {
    TraceReader::open(path).expect("trace opens").events(None).map(|e| e.expect("event")).collect()
}

fn record(out: &std::path::Path, cmd: &[&str]) -> Output {
    rec().args(["-q", "-o"]).arg(out).arg("--").args(cmd).output().unwrap()
}

fn captures_what_cat_reads_and_writes() {
    let d = scratch("cat");
    let input = d.join("input.bin");
    let content: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&input, &content).unwrap();
    let trace = d.join("t.ds");
    let o = record(&trace, &["cat", input.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, content, "the command's output is untouched");
    let ev = events(&trace);
    // The open of the input, with its path (NUL included) and the fd it returned.
    let mut want_path = input.to_str().unwrap().as_bytes().to_vec();
    want_path.push(0);
    let open = ev
        .iter()
        .find(|e| {
            e.name == "openat"
                && e.arg("pathname").and_then(ArgValue::as_data) == Some(&want_path[..])
        })
        .expect("openat of the input");
    let fd = open.ret.unwrap();
    assert!(fd >= 3);
    // Every byte read from that fd while it was open, in order, is the file's content.
    let close = ev
        .iter()
        .find(|e| {
            e.unique_id > open.unique_id
                && e.name == "close"
                && e.arg("fd") == Some(&ArgValue::Int(fd))
        })
        .expect("close of the input");
    let read: Vec<u8> = ev
        .iter()
        .filter(|e| e.unique_id > open.unique_id && e.unique_id < close.unique_id)
        .filter(|e| {
            matches!(e.name.as_str(), "read" | "pread") && e.arg("fd") == Some(&ArgValue::Int(fd))
        })
        .filter_map(|e| e.arg("buf").and_then(ArgValue::as_data))
        .flatten()
        .copied()
        .collect();
    assert_eq!(read.len(), content.len());
    assert!(read == content, "read data equals the file");
    // And every byte written to stdout.
    let written: Vec<u8> = ev
        .iter()
        .filter(|e| e.name == "write" && e.arg("fd") == Some(&ArgValue::Int(1)))
        .filter_map(|e| e.arg("buf").and_then(ArgValue::as_data))
        .flatten()
        .copied()
        .collect();
    assert!(written == content, "written data equals the output");
    // Common fields on every record.
    let pid = ev[0].pid.unwrap();
    for e in &ev {
        assert_eq!(e.pid, Some(pid), "{}", e.name);
        assert!(e.tid.is_some() && e.ppid.is_some() && e.uid.is_some() && e.gid.is_some());
        assert!(e.time_called.unwrap() > 1_700_000_000_000_000_000);
        if let (Some(a), Some(b)) = (e.time_called, e.time_returned) {
            assert!(b >= a, "{}: returned before called", e.name);
        }
    }
    let ids: Vec<u64> = ev.iter().map(|e| e.unique_id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    // The descriptors the command inherited come first, as synthetic openat records: here the
    // test's stdin (/dev/null) and its stdout and stderr pipes.
    let r = TraceReader::open(&trace).unwrap();
    let n: usize =
        std::str::from_utf8(r.info_value("synthetic_ids").unwrap()).unwrap().parse().unwrap();
    let inherited: Vec<i64> = ev[..n].iter().map(|e| e.ret.unwrap()).collect();
    assert!(ev[..n].iter().all(|e| e.name == "openat"), "{:?}", &ev[..n]);
    for fd in [0, 1, 2] {
        assert!(inherited.contains(&fd), "inherited fds {inherited:?}");
    }
    let stdout = &ev[inherited.iter().position(|&f| f == 1).unwrap()];
    assert!(stdout.arg("pathname").and_then(ArgValue::as_data).unwrap().starts_with(b"pipe:["));
    assert_eq!(ev.get(n).map(|e| e.name.as_str()), Some("execve"));
    assert_eq!(ev.last().map(|e| e.name.as_str()), Some("exit_group"));
    assert_eq!(r.info_value("backend"), Some(backend().as_bytes()));
    assert_eq!(r.info_value("exit_status"), Some(&b"0"[..]));
    assert!(r.info_value("kernel").is_some() && r.info_value("hostname").is_some());
    assert!(std::str::from_utf8(r.info_value("command").unwrap()).unwrap().starts_with("cat "));
}

fn follows_children_and_passes_the_exit_status_through() {
    let d = scratch("tree");
    let trace = d.join("t.ds");
    let f = d.join("x");
    let script = format!("echo hi > {0}; cat {0} | wc -c > /dev/null; exit 3", f.display());
    let o = record(&trace, &["sh", "-c", &script]);
    assert_eq!(o.status.code(), Some(3));
    let ev = events(&trace);
    let pids: std::collections::BTreeSet<i32> = ev.iter().filter_map(|e| e.pid).collect();
    assert!(pids.len() >= 3, "sh, cat and wc: {pids:?}");
    let root = ev[0].pid.unwrap();
    // The children's ppid is the shell.
    for e in ev.iter().filter(|e| e.name == "execve" && e.pid != Some(root)) {
        assert_eq!(e.ppid, Some(root));
    }
    // The shell's write of "hi\n" into the file, and cat's read of it.
    assert!(ev
        .iter()
        .any(|e| e.name == "write" && e.arg("buf").and_then(ArgValue::as_data) == Some(b"hi\n")));
    assert!(ev
        .iter()
        .any(|e| e.name == "read" && e.arg("buf").and_then(ArgValue::as_data) == Some(b"hi\n")));
    // Killed by a signal: 128 + N, like a shell.
    let o = record(&d.join("k.ds"), &["sh", "-c", "kill -9 $$"]);
    assert_eq!(o.status.code(), Some(128 + 9));
}

fn bad_input_is_one_line() {
    let d = scratch("bad");
    let o = record(&d.join("t.ds"), &["/no/such/program"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/no/such/program") && err.contains("not found"), "{err}");
    let o = record(std::path::Path::new("/no/such/dir/t.ds"), &["true"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/no/such/dir/t.ds") && err.lines().count() == 1, "{err}");
    let o = rec()
        .args(["-o"])
        .arg(d.join("t.ds"))
        .args(["--syscalls", "opnat", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("did you mean `openat`"), "{err}");
    // No command at all: a usage error.
    let o = rec().args(["-o"]).arg(d.join("t.ds")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

fn a_recorder_killed_with_sigkill_leaves_a_readable_trace() {
    let d = scratch("kill");
    let trace = d.join("t.ds");
    let f = d.join("data");
    std::fs::write(&f, b"flushed before the kill\n").unwrap();
    // cat runs at once; the sleep keeps the recording open well past the writer's 1 s flush.
    // (exec: the shell's own process sleeps, so it dies with the recorder under both backends.)
    let script = format!("cat {}; exec sleep 30", f.display());
    let mut child = rec()
        .args(["-q", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    // The writer flushes at least once a second: wait (on a loaded machine, longer) until
    // cat's read is in the file, then kill the recorder.
    let has_read = || {
        TraceReader::open(&trace).is_ok_and(|r| {
            r.events(None).filter_map(Result::ok).any(|e| {
                e.name == "read"
                    && e.arg("buf").and_then(ArgValue::as_data)
                        == Some(b"flushed before the kill\n")
            })
        })
    };
    while !has_read() && t0.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(200));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(25), "the traced sleep died with the tracer");
    let r = TraceReader::open(&trace).expect("an unfinished trace opens");
    assert!(!r.is_complete());
    let ev: Vec<Event> = r.events(None).map(|e| e.unwrap()).collect();
    assert!(
        ev.iter().any(|e| e.name == "read"
            && e.arg("buf").and_then(ArgValue::as_data) == Some(b"flushed before the kill\n")),
        "cat's read was flushed"
    );
    let o = bin().arg("info").arg(&trace).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("unfinished"));
}

fn attaches_to_a_running_process_and_detaches_on_ctrl_c() {
    let d = scratch("attach");
    let log = d.join("ticks.log");
    let script = format!(
        "exec 7>{}; i=0; while [ $i -lt 60 ]; do echo tick$i >&7; i=$((i+1)); sleep 0.05; done",
        log.display()
    );
    let mut target = Command::new("sh").args(["-c", &script]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let trace = d.join("t.ds");
    let rec = rec()
        .args(["-o"])
        .arg(&trace)
        .args(["-p", &target.id().to_string()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    // Ctrl-C, as a terminal would send it.
    assert!(Command::new("kill").args(["-INT", &rec.id().to_string()]).status().unwrap().success());
    let out = rec.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    // The summary says the process was let go, not that it exited (it had not).
    let said = format!("detached from pid {} (still running)", target.id());
    assert!(err.contains(&said) && !err.contains("exited with status"), "{err}");
    // The target was left running and finishes its loop normally.
    let st = target.wait().unwrap();
    assert!(st.success());
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 60);
    let r = TraceReader::open(&trace).unwrap();
    let synthetic: u64 =
        std::str::from_utf8(r.info_value("synthetic_ids").unwrap()).unwrap().parse().unwrap();
    let ev: Vec<Event> = r.events(None).map(|e| e.unwrap()).collect();
    let mut log_path = log.to_str().unwrap().as_bytes().to_vec();
    log_path.push(0);
    // The descriptor opened before we attached is a synthetic openat returning 7.
    assert!(
        ev[..synthetic as usize].iter().any(|e| e.name == "openat"
            && e.ret == Some(7)
            && e.arg("pathname").and_then(ArgValue::as_data) == Some(&log_path[..])),
        "synthetic record of fd 7"
    );
    // Live writes of the loop were captured with their data.
    let ticks = ev
        .iter()
        .filter(|e| e.name == "write")
        .filter_map(|e| e.arg("buf").and_then(ArgValue::as_data))
        .filter(|d| d.starts_with(b"tick"))
        .count();
    assert!(ticks >= 5, "captured {ticks} tick writes");
}

#[test]
fn attach_errors_say_why() {
    let o = rec().args(["-o", "/tmp/never.ds", "-p", "999999999"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("999999999") && err.contains("no such process"), "{err}");
    // A process that is already traced (by a recording of its own) cannot be attached to.
    let d = scratch("attach2");
    let mut first =
        rec().args(["-q", "-o"]).arg(d.join("a.ds")).args(["--", "sleep", "5"]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let sleeper = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|p| {
            std::fs::read_to_string(format!("/proc/{p}/status")).is_ok_and(|s| {
                s.contains(&format!("PPid:\t{}", first.id())) && s.contains("Name:\tsleep")
            })
        })
        .expect("the traced sleep");
    let o =
        rec().args(["-o"]).arg(d.join("b.ds")).args(["-p", &sleeper.to_string()]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("already traced"), "{err}");
    let _ = first.kill();
    let _ = first.wait();
}

fn data_hash_and_none_keep_metadata_and_drop_bulk_bytes() {
    let d = scratch("modes");
    let input = d.join("in.txt");
    let content = b"a line that cat reads and writes\n".repeat(100);
    std::fs::write(&input, &content).unwrap();
    let mut want_path = input.to_str().unwrap().as_bytes().to_vec();
    want_path.push(0);
    for mode in ["hash", "none"] {
        let trace = d.join(format!("{mode}.ds"));
        let o = rec()
            .args(["-q", "--data", mode, "-o"])
            .arg(&trace)
            .args(["--", "cat", input.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success());
        let ev = events(&trace);
        // Paths are metadata: kept in full.
        let open = ev
            .iter()
            .find(|e| {
                e.name == "openat"
                    && e.arg("pathname").and_then(ArgValue::as_data) == Some(&want_path[..])
            })
            .unwrap_or_else(|| panic!("{mode}: openat with its path"));
        let fd = ArgValue::Int(open.ret.unwrap());
        let reads: Vec<&Event> = ev
            .iter()
            .filter(|e| {
                e.unique_id > open.unique_id && e.name == "read" && e.arg("fd") == Some(&fd)
            })
            .collect();
        assert!(!reads.is_empty());
        let first = reads[0];
        assert_eq!(first.ret, Some(content.len() as i64));
        match (mode, first.arg("buf").unwrap()) {
            ("hash", ArgValue::Hashed { len, blake3 }) => {
                assert_eq!(*len, content.len() as u64);
                assert_eq!(blake3, blake3::hash(&content).as_bytes());
            }
            ("none", ArgValue::NotCaptured) => assert!(first.buffer_not_captured),
            (m, other) => panic!("{m}: read buffer recorded as {other:?}"),
        }
        // Struct results (fstat) stay: they are metadata.
        assert!(ev.iter().any(|e| matches!(e.name.as_str(), "fstat" | "fstatat")
            && e.arg("statbuf").and_then(ArgValue::as_data).is_some_and(|b| b.len() == 144)));
        // A failed read has no output buffer at all (not "not captured"): `cat DIR` reads the
        // directory and gets EISDIR.
        let trace = d.join(format!("{mode}-dir.ds"));
        let o = rec()
            .args(["-q", "--data", mode, "-o"])
            .arg(&trace)
            .args(["--", "cat", d.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{mode}: cat of a directory fails");
        let ev = events(&trace);
        let failed = ev
            .iter()
            .find(|e| e.name == "read" && e.errno == Some(21))
            .unwrap_or_else(|| panic!("{mode}: a read failing with EISDIR"));
        assert_eq!(failed.arg("buf"), Some(&ArgValue::Absent), "{mode}: failed read's buffer");
    }
}

#[test]
fn cpu_binding_is_the_default_and_can_be_turned_off() {
    let d = scratch("cpu");
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    // A serial command stays bound under the default (auto) as under same.
    for (mode, want) in [("auto", 1), ("same", 1), ("any", online)] {
        let trace = d.join(format!("{mode}.ds"));
        let o = rec()
            .args(["-q", "--cpu", mode, "-o"])
            .arg(&trace)
            .args(["--", "nproc"])
            .output()
            .unwrap();
        assert!(o.status.success());
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), want.to_string(), "--cpu {mode}");
        let r = TraceReader::open(&trace).unwrap();
        let aff = String::from_utf8_lossy(r.info_value("cpu_affinity").unwrap()).into_owned();
        assert_eq!(aff.starts_with("command and tracer bound to CPU"), mode != "any", "{aff}");
        assert!(!aff.contains("unbound"), "{aff}");
    }
}

/// The default does not take a parallel program's parallelism away: two threads computing at
/// once get the command unbound (`xz -T2` ran 48 s bound, 25 s untraced); `--cpu same` keeps
/// the binding when asked for.
#[test]
fn the_default_unbinds_a_program_that_runs_threads_in_parallel() {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    if online < 2 {
        eprintln!("skip: one CPU: nothing to unbind");
        return;
    }
    let d = scratch("cpu-parallel");
    for (mode, unbound) in [("auto", true), ("same", false)] {
        let trace = d.join(format!("{mode}.ds"));
        let o = rec()
            .args(["-q", "--cpu", mode, "-o"])
            .arg(&trace)
            .arg("--")
            .arg(ra_testkit::program("spin2"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
        let want = if unbound { online } else { 1 };
        assert_eq!(j["cpus"], serde_json::json!([want, want]), "--cpu {mode}: {j}");
        let r = TraceReader::open(&trace).unwrap();
        let aff = String::from_utf8_lossy(r.info_value("cpu_affinity").unwrap()).into_owned();
        assert_eq!(
            aff.contains("then unbound: 2 traced threads were runnable at once"),
            unbound,
            "{aff}"
        );
    }
}

/// `dump --format jsonl`: a path is a JSON string without the NUL the trace stores (it was
/// `{"hex": "2f…00"}` for every path); bytes that are not UTF-8 or hold a NUL are `{"hex": …}`; data
/// buffers keep every byte.
fn dump_jsonl_writes_paths_as_strings_and_other_bytes_as_hex() {
    let d = scratch("jsonl");
    let trace = d.join("t.ds");
    let o = rec()
        .args(["-q", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", "printf 'a\\000b' > plain.txt; printf x > \"$(printf '\\377')\""])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin()
        .args(["dump", "--format", "jsonl", "--type", "openat,write"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let objs: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let paths: Vec<&serde_json::Value> =
        objs.iter().filter(|o| o["call"] == "openat").map(|o| &o["args"]["pathname"]).collect();
    assert!(paths.contains(&&serde_json::json!("plain.txt")), "{paths:?}");
    assert!(paths.contains(&&serde_json::json!({"hex": "ff"})), "{paths:?}");
    let data: Vec<&serde_json::Value> =
        objs.iter().filter(|o| o["call"] == "write").map(|o| &o["args"]["buf"]).collect();
    // A NUL makes a buffer binary: hex (TRACE_FORMAT.md 10).
    assert!(data.contains(&&serde_json::json!({"hex": "610062"})), "{data:?}");
    assert!(data.contains(&&serde_json::json!("x")), "{data:?}");
}

/// As root the ptrace recorder installs its seccomp filter without no_new_privs: a set-uid
/// program gains its privileges as it does unrecorded (it ran unprivileged: the ebpf backend
/// and the plain run differed). Unprivileged, the recorder says before the run that a set-uid
/// command will lose them.
#[test]
fn set_uid_programs_keep_their_privileges_when_root_records_them() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !ra_testkit::privileged(
        "set-uid recording",
        if root { Ok(()) } else { Err("needs root".into()) },
    ) {
        return;
    }
    let d = ra_testkit::scratch_dir("suid");
    let id = d.join("id");
    std::fs::copy("/usr/bin/id", &id).unwrap();
    // Set-user-ID to nobody (65534).
    std::os::unix::fs::chown(&id, Some(65534), None).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&id, std::fs::Permissions::from_mode(0o4755)).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plain = Command::new(&id).arg("-u").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&plain.stdout).trim(), "65534");
    let trace = d.join("t.ds");
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&id)
        .arg("-u")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "65534", "the effective uid");
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o"])
        .arg(&trace)
        .args(["--", "grep", "NoNewPrivs", "/proc/self/status"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).split_whitespace().nth(1), Some("0"));
    // The recorder without root: a warning naming the program, before it runs.
    if ra_testkit::have_program("setpriv") {
        let o = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_reanimator"))
            .args(["record", "-q", "--backend", "ptrace", "-o", "/dev/null", "--"])
            .arg(&id)
            .arg("-u")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!(
                "warning: {} is set-user-ID: recorded with ptrace",
                id.display()
            )),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}
