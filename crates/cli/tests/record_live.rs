//! `record` for scripts and for watching (issue 40 items 5 and 6): `--json`'s summary, checked
//! against the trace it names, under both capture backends, on real programs.

mod common;

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Command, Output};

use ra_testkit::{backend, both_backends, have_program};

use common::bin;

both_backends!(
    record_json_summarizes_the_trace,
    print_shows_each_call_as_dump_does,
    print_to_an_output_nobody_reads_never_holds_the_recording,
    ctrl_c_ends_a_printing_recording_within_seconds,
);

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

/// A line's parts that do not depend on how an argument is stored: `ID TIME [TID] call(` and
/// `) = RET ERRNO <DURATION>` (the live line shows the registers as captured; the trace
/// stores some arguments narrower, e.g. fcntl's third as an int).
fn ends(line: &str) -> (String, String) {
    let open = line.find('(').unwrap_or(line.len());
    let close = line.rfind(") = ").unwrap_or(line.len());
    (line[..open].to_string(), line[close..].to_string())
}

/// `record --print=FILE` on a real program (python3 writing, renaming and reading files,
/// under sh): a line per call the trace holds, in its order, as `reanimator dump` prints
/// them, and the file is private.
fn print_shows_each_call_as_dump_does() {
    if !have_program("python3") {
        return;
    }
    let d = ra_testkit::case_dir("live-print", "python3");
    let script = "import os\nfor i in range(50):\n    p = f'work/f{i}'\n    open(p, 'w').write('x' * (i * 100))\n    os.rename(p, p + '.txt')\n    open(p + '.txt').read()\n";
    std::fs::write(d.join("s.py"), script).unwrap();
    let o = record(&d)
        .args(["--print=live.txt", "-q", "-o", "t.ds", "--", "sh", "-c", "python3 s.py"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let live = std::fs::read_to_string(d.join("live.txt")).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(d.join("live.txt")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    // The live lines name descriptors' files as dump does (`read(3</…/f49.txt>, …)`); they
    // do not print dump's `+++ exited +++` lines: compared with dump's lines of calls.
    let dump = bin().arg("dump").arg(d.join("t.ds")).output().unwrap();
    assert!(dump.status.success(), "{}", stderr(&dump));
    let dump = String::from_utf8_lossy(&dump.stdout).into_owned();
    let exit_line = |l: &&str| l.trim_start().starts_with('[') && l.contains(" +++");
    let (live, dump): (Vec<&str>, Vec<&str>) =
        (live.lines().collect(), dump.lines().filter(|l| !exit_line(l)).collect());
    assert!(live.len() > 50 * 6, "{} lines", live.len());
    assert_eq!(live.len(), dump.len(), "a line per call");
    let mut same = 0;
    for (l, t) in live.iter().zip(&dump) {
        assert_eq!(ends(l), ends(t), "\nlive: {l}\ndump: {t}");
        same += usize::from(l == t);
    }
    // Nearly every line is the very same text.
    assert!(same * 100 >= live.len() * 95, "{same} of {} lines identical", live.len());
    assert!(live.iter().any(|l| l.contains("rename(") && l.contains("work/f49\", ")), "{live:?}");
    let named = format!("read(3<{}/work/f49.txt>, ", d.display());
    assert!(live.iter().any(|l| l.contains(&named)), "no {named} in {live:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `--print` into a FIFO that is open but never read: the printer blocks once the pipe is
/// full, and the recording neither waits for it nor loses a call: record ends in time, the
/// trace holds every call, and a warning says lines were not printed.
fn print_to_an_output_nobody_reads_never_holds_the_recording() {
    if !have_program("python3") {
        return;
    }
    let d = ra_testkit::case_dir("live-stuck", "python3");
    let _reader = unread_fifo(&d);
    let child = record(&d)
        .args(["--json", "--print=fifo", "-o", "t.ds", "--", "python3", "-c"])
        .arg("import os\nfor i in range(20000): os.stat('/')")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_or_kill(child, std::time::Duration::from_secs(120));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--print") && err.contains("the trace has every call"), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = jsonl(&d.join("t.ds"));
    let stats =
        events.iter().filter(|e| e["call"].as_str().is_some_and(|c| c.contains("stat"))).count();
    assert!(stats >= 20000, "{stats} stat calls");
    assert_eq!(
        j["calls"].as_u64().unwrap() + j["synthetic_ids"].as_u64().unwrap(),
        events.len() as u64
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A FIFO `DIR/fifo` opened for reading (so the recorder's open for writing succeeds) and
/// never read: keep the returned file while the recording runs.
fn unread_fifo(d: &Path) -> std::fs::File {
    let fifo = d.join("fifo");
    let made = Command::new("mkfifo").arg("-m600").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(&fifo)
        .unwrap()
}

/// The child's output once it exits; killed (and the test failed) when it runs past
/// `limit`, a recorder that waits for its printer.
fn wait_or_kill(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("still running after {limit:?}: {}", stderr(&o));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Ctrl-C (SIGINT to the recorder) while it prints into an output nobody reads: the command
/// is stopped and the recorder exits within seconds (it waits at most a second for its
/// printer), its trace finished.
fn ctrl_c_ends_a_printing_recording_within_seconds() {
    if !have_program("python3") {
        return;
    }
    let d = ra_testkit::case_dir("live-ctrlc", "python3");
    let _reader = unread_fifo(&d);
    let child = record(&d)
        .args(["-q", "--print=fifo", "-o", "t.ds", "--", "python3", "-c"])
        .arg("import os, time\nwhile True: os.stat('/')")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Long enough for the FIFO to fill (64 KiB of lines) and the printer to block.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let t0 = std::time::Instant::now();
    let o = wait_or_kill(child, std::time::Duration::from_secs(30));
    let took = t0.elapsed();
    assert!(took < std::time::Duration::from_secs(4), "{took:?}: {}", stderr(&o));
    let info = bin().arg("info").arg(d.join("t.ds")).output().unwrap();
    assert!(info.status.success(), "{}", stderr(&info));
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(!text.contains("unfinished"), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}
