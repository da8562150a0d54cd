//! Signals delivered to traced threads (issue 40 item 4): recorded by both recorders as
//! `signal_deliver` records, shown by `dump` as strace shows them (`--- SIGCHLD {...} ---`),
//! selected by `--type` and `--where 'signal == ...'`, left out of `stats`, not replayed; the
//! signals each program gets compared with `strace -f -e trace=none` on the same program; the
//! eBPF throttle's own SIGSTOP/SIGCONT never appear as the program's.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ra_testkit::{both_backends, have_program};
use serde_json::Value as Json;

use common::{bin, dump, ok, record};

both_backends!(
    sh_wait_gets_sigchld_as_strace_shows_it,
    python3_handles_sigusr1_from_kill,
    python3_killed_by_sigterm,
    interrupted_call_then_its_signal_then_the_restart,
);

fn scratch(name: &str) -> PathBuf {
    ra_testkit::backend_scratch_dir("signals", name).canonicalize().unwrap()
}

/// The signal lines of a dump (`--- SIG... ---`), each without its id and time.
fn signal_lines(trace: &Path) -> Vec<String> {
    let out = dump(trace, &["--type", "signal_deliver"]);
    let lines: Vec<String> =
        out.lines().map(|l| l[l.find('[').expect("a [pid]")..].to_string()).collect();
    for l in &lines {
        assert!(l.contains("] --- SIG") && l.ends_with("} ---"), "{l}");
    }
    lines
}

/// `SIGCHLD CLD_EXITED`: a signal line's name and code (ours or strace's).
fn key(line: &str) -> String {
    let rest = &line[line.find("--- ").expect("a signal line") + 4..];
    let name = rest.split(' ').next().unwrap();
    let code = rest.split("si_code=").nth(1).unwrap();
    let code = code.split([',', '}']).next().unwrap();
    format!("{name} {code}")
}

/// The signals `strace -f -e trace=none` shows for `cmd`, as [`key`]s, sorted; None without
/// strace.
fn strace_signals(cwd: &Path, cmd: &[&str]) -> Option<Vec<String>> {
    if !have_program("strace") {
        return None;
    }
    let out = cwd.join("strace.out");
    let o = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=none", "-o"])
        .arg(&out)
        .args(cmd)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    // (Its status is the program's: strace kills itself with the program's signal.)
    assert!(o.stderr.is_empty() || o.status.signal().is_some(), "strace: {o:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    let mut v: Vec<String> = text.lines().filter(|l| l.contains("--- SIG")).map(key).collect();
    v.sort();
    Some(v)
}

fn sorted_keys(lines: &[String]) -> Vec<String> {
    let mut v: Vec<String> = lines.iter().map(|l| key(l)).collect();
    v.sort();
    v
}

/// The same kinds of signal as strace's, and as many of each but SIGCHLD (how many children
/// pyenv's `python3` shim forks varies from run to run).
fn same_signals_as(ours: &[String], theirs: &[String]) {
    let mine = sorted_keys(ours);
    let kinds = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    assert_eq!(kinds(&mine), kinds(theirs), "the signals strace -f shows");
    let others = |v: &[String]| v.iter().filter(|k| !k.starts_with("SIGCHLD ")).count();
    assert_eq!(others(&mine), others(theirs), "{mine:?}\nstrace: {theirs:?}");
}

/// The pids of a trace's events other than signals (`jsonl`).
fn pids(trace: &Path) -> Vec<i64> {
    let out = dump(trace, &["-f", "jsonl", "--type", "!signal_deliver"]);
    let mut v: Vec<i64> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).unwrap()["pid"].as_i64())
        .collect();
    v.sort();
    v.dedup();
    v
}

fn sh_wait_gets_sigchld_as_strace_shows_it() {
    let d = scratch("sh");
    let trace = d.join("t.ds");
    let cmd = ["sh", "-c", "sleep 0.1 & wait"];
    let o = record(&trace, &d, &[], &cmd);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = signal_lines(&trace);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let l = &lines[0];
    // The child's pid, as the trace's own events know it: the process that ran sleep.
    let sleep_pid = pids(&trace).into_iter().find(|p| !l.starts_with(&format!("[{p}]")));
    let sleep_pid = sleep_pid.expect("two processes");
    let want = format!(
        "--- SIGCHLD {{si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid={sleep_pid}, si_uid=0, \
         si_status=0, si_utime="
    );
    assert!(l.contains(&want), "{l}\nwant {want}");
    // Selected by name, by class, by `--where`; left out by negation.
    let by_where = dump(&trace, &["--where", "signal == SIGCHLD"]);
    assert_eq!(by_where.lines().count(), 1, "{by_where}");
    assert!(dump(&trace, &["--where", "signal == SIGUSR1"]).is_empty());
    assert!(dump(&trace, &["--type", "%signal"]).contains("--- SIGCHLD"));
    assert!(!dump(&trace, &["--type", "!%signal"]).contains("--- SIG"));
    assert!(!dump(&trace, &["--where", "signal == SIGCHLD"]).contains("wait4"));
    // jsonl: the siginfo members by their columns.
    let j: Json =
        serde_json::from_str(dump(&trace, &["-f", "jsonl", "--type", "signal_deliver"]).trim())
            .unwrap();
    assert_eq!(j["call"], "signal_deliver", "{j}");
    assert_eq!(j["args"]["signo"], 17, "{j}");
    assert_eq!(j["args"]["code"], 1, "{j}");
    assert_eq!(j["args"]["pid"], sleep_pid, "{j}");
    // strace -c counts no signals; nor does stats.
    let stats: Json = serde_json::from_str(&ok(
        bin().args(["stats", "--json"]).arg(&trace).output().unwrap(),
        "stats",
    ))
    .unwrap();
    assert!(!stats.to_string().contains("signal_deliver"), "{stats}");
    if let Some(theirs) = strace_signals(&d, &cmd) {
        assert_eq!(sorted_keys(&lines), theirs, "the same signals as strace -f");
    }
    // anonymize keeps the signal; its sender's pid becomes that process's pseudonym.
    let keyfile = common::keygen(&d.join("anon.key"));
    let anon = d.join("anon.ds");
    ok(
        bin().arg("anonymize").arg(&trace).arg(&anon).arg("--key").arg(&keyfile).output().unwrap(),
        "anonymize",
    );
    let a = signal_lines(&anon);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(key(&a[0]), key(l), "{a:?}");
    let sender =
        |l: &str| l.split("si_pid=").nth(1).unwrap().split(',').next().unwrap().to_string();
    let pseudonyms: Vec<String> = pids(&anon).iter().map(i64::to_string).collect();
    assert!(sender(&a[0]) != sleep_pid.to_string(), "the pid is replaced: {}", a[0]);
    assert!(pseudonyms.contains(&sender(&a[0])), "{} {pseudonyms:?}", a[0]);
    let _ = std::fs::remove_dir_all(&d);
}

fn python3_handles_sigusr1_from_kill() {
    if !have_program("python3") {
        return;
    }
    let d = scratch("usr1");
    let trace = d.join("t.ds");
    let script = "import os, signal\n\
                  got = []\n\
                  signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))\n\
                  os.system('kill -USR1 %d' % os.getpid())\n\
                  assert got == [signal.SIGUSR1], got\n";
    let cmd = ["python3", "-c", script];
    let o = record(&trace, &d, &[], &cmd);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = signal_lines(&trace);
    let usr1: Vec<&String> = lines.iter().filter(|l| l.contains("--- SIGUSR1 ")).collect();
    assert_eq!(usr1.len(), 1, "{lines:?}");
    // Sent by kill(1) (the shell of os.system), a traced process other than python's.
    let l = usr1[0];
    let to: i64 = l[1..l.find([']', '/']).unwrap()].parse().unwrap();
    let from: i64 = l.split("si_pid=").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    assert!(l.contains("si_code=SI_USER, si_pid=") && l.ends_with("si_uid=0} ---"), "{l}");
    let traced = pids(&trace);
    assert!(from != to && traced.contains(&from) && traced.contains(&to), "{l} {traced:?}");
    assert_eq!(dump(&trace, &["--where", "signal == SIGUSR1"]).lines().count(), 1);
    // The shell's end reaches python as SIGCHLD too (blocked by system(3), then taken).
    assert!(lines.iter().any(|l| l.contains("--- SIGCHLD ")), "{lines:?}");
    if let Some(theirs) = strace_signals(&d, &cmd) {
        same_signals_as(&lines, &theirs);
    }
    // Replay issues nothing for a signal: it is counted, not replayed.
    let root = d.join("root");
    std::fs::create_dir(&root).unwrap();
    let rep = bin()
        .arg("replay")
        .arg(&trace)
        .arg("--root")
        .arg(&root)
        .args(["--init", "--json"])
        .output()
        .unwrap();
    let r: Json = serde_json::from_slice(&rep.stdout).unwrap_or_else(|e| {
        panic!("replay report ({e}): {}", String::from_utf8_lossy(&rep.stderr))
    });
    let s = &r["per_call"]["signal_deliver"];
    assert_eq!(s["issued"].as_u64(), Some(0), "{s}");
    assert_eq!(s["skipped"].as_u64(), Some(lines.len() as u64), "{s}");
    let _ = std::fs::remove_dir_all(&d);
}

fn python3_killed_by_sigterm() {
    if !have_program("python3") {
        return;
    }
    let d = scratch("term");
    let trace = d.join("t.ds");
    let cmd = ["python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"];
    let o = record(&trace, &d, &[], &cmd);
    assert_eq!(o.status.code(), Some(143), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = signal_lines(&trace);
    let term: Vec<&String> = lines.iter().filter(|l| l.contains("--- SIGTERM ")).collect();
    assert_eq!(term.len(), 1, "{lines:?}");
    let l = term[0];
    let pid = &l[1..l.find([']', '/']).unwrap()];
    let want =
        format!("] --- SIGTERM {{si_signo=SIGTERM, si_code=SI_USER, si_pid={pid}, si_uid=0}} ---");
    assert!(l.ends_with(&want), "{l}\nwant {want}");
    // The signal, then the process's end by it (the generated exit and strace's line).
    let all = dump(&trace, &[]);
    let tail: Vec<&str> = all.lines().rev().take(3).collect();
    assert!(tail[0].ends_with("+++ killed by SIGTERM +++"), "{all}");
    assert!(tail[1].contains("exit(15) = ? (generated"), "{all}");
    assert!(tail[2].contains("--- SIGTERM "), "{all}");
    if let Some(theirs) = strace_signals(&d, &cmd) {
        same_signals_as(&lines, &theirs);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The eBPF throttle stops the program with SIGSTOP and resumes it with SIGCONT: neither is
/// the program's, and neither is recorded.
#[test]
fn ebpf_throttle_signals_are_not_the_programs() {
    if !ra_testkit::ebpf_available() {
        return;
    }
    ra_testkit::set_backend("ebpf");
    let d = scratch("throttle");
    let trace = d.join("t.ds");
    let o = bin()
        .args(["record", "-q", "--backend", "ebpf", "--ring-size", "1M", "-o"])
        .arg(&trace)
        .args(["--", "dd", "if=/dev/zero", "of=big", "bs=256k", "count=256", "status=none"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let info = ok(bin().arg("info").arg(&trace).output().unwrap(), "info");
    let stops: u64 = info
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("ebpf_throttle_stops")?
                .trim_start_matches([':', ' ', '='])
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no ebpf_throttle_stops: {info}"));
    assert!(stops > 0, "the throttle did not act");
    let lines = signal_lines(&trace);
    assert!(lines.is_empty(), "{stops} throttle stops, recorded as signals: {lines:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The order of a signal among its thread's calls: a read interrupted by SIGALRM (the kernel's
/// ERESTARTSYS), the signal, the restarted read: as strace shows them.
fn interrupted_call_then_its_signal_then_the_restart() {
    let d = scratch("restart");
    let trace = d.join("t.ds");
    let o = record(&trace, &d, &[], &[ra_testkit::program("sigrestart").to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let evs: Vec<ra_trace::Event> =
        ra_trace::TraceReader::open(&trace).unwrap().events(None).map(|e| e.unwrap()).collect();
    let i = evs
        .iter()
        .position(|e| e.name == "read" && e.errno.is_some_and(ra_trace::format::is_restart_errno))
        .expect("an interrupted read");
    let tid = evs[i].tid;
    let next: Vec<&ra_trace::Event> =
        evs[i + 1..].iter().filter(|e| e.tid == tid).take(2).collect();
    let sig = |e: &ra_trace::Event| e.arg("signo").and_then(ra_trace::ArgValue::as_int);
    assert_eq!(next[0].name, "signal_deliver", "the signal follows the interrupted call");
    assert_eq!(sig(next[0]), Some(14), "SIGALRM");
    let line = ra_trace::format::signal_line(next[0]);
    assert!(line.starts_with("--- SIGALRM {si_signo=SIGALRM, si_code="), "{line}");
    let _ = std::fs::remove_dir_all(&d);
}
