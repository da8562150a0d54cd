//! Traces as streams (issue 40 item 5): `record -o -` into `dump -`, `dump --follow` on a
//! trace being written, a reader that goes away, Ctrl-C — under both capture backends, on
//! real programs (tar, python3).

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ra_testkit::{backend, both_backends, have_program};

use common::bin;

both_backends!(
    piped_dump_is_the_dump_of_the_file,
    follow_prints_calls_while_recording_and_ends_with_it,
    follow_ends_when_the_writer_is_killed,
    a_closed_pipe_is_one_line_and_the_command_runs_on,
    ctrl_c_ends_a_piped_recording_and_its_reader,
    json_into_a_closed_pipe_ends_as_dump_does,
);

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn exe() -> String {
    env!("CARGO_BIN_EXE_reanimator").to_string()
}

/// A tree for tar to archive.
fn tree(d: &Path) {
    std::fs::create_dir(d.join("work/src")).unwrap();
    for i in 0..20u8 {
        std::fs::write(
            d.join(format!("work/src/f{i}")),
            vec![b'a' + i; 1000 + usize::from(i) * 300],
        )
        .unwrap();
    }
}

fn dump(args: &[&str], trace: &Path) -> String {
    let o = bin().arg("dump").args(args).arg(trace).output().unwrap();
    assert!(o.status.success(), "dump: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn wait_or_kill(mut child: std::process::Child, limit: Duration) -> Output {
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("still running after {limit:?}: {}", stderr(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `reanimator record -o - -- tar ... | reanimator dump -`, exactly so (a shell pipeline),
/// with `tee` keeping the bytes that went through the pipe: the piped dump is, line for
/// line, `dump` of that file, in text and in JSON lines; and the calls are those a
/// recording of the same command with `-o FILE` holds.
fn piped_dump_is_the_dump_of_the_file() {
    if !have_program("tar") {
        return;
    }
    let d = ra_testkit::case_dir("stream-pipe", "tar");
    tree(&d);
    let b = exe();
    let be = backend();
    for (fmt, out) in [("text", "piped.txt"), ("jsonl", "piped.jsonl")] {
        let script = format!(
            "{b} record -q --backend {be} -o - -- tar cf work/a.tar -C work src | tee t-{fmt}.ds \
             | {b} dump -f {fmt} - > {out}"
        );
        let o = Command::new("sh").arg("-c").arg(&script).current_dir(&d).output().unwrap();
        assert!(o.status.success(), "{script}: {}", stderr(&o));
        let piped = std::fs::read_to_string(d.join(out)).unwrap();
        let file = dump(&["-f", fmt], &d.join(format!("t-{fmt}.ds")));
        assert!(file.lines().count() > 100, "{file}");
        assert_eq!(piped, file, "{fmt}: the piped dump differs from the file's");
        // The file that went through the pipe is a whole trace.
        let info = bin().arg("info").arg(d.join(format!("t-{fmt}.ds"))).output().unwrap();
        assert!(info.status.success(), "{}", stderr(&info));
        assert!(!String::from_utf8_lossy(&info.stdout).contains("unfinished"));
    }
    // The same command recorded to a file: the same calls of tar on its files.
    let o = bin()
        .current_dir(&d)
        .args(["record", "-q", "--backend", be, "-o", "f.ds", "--", "tar", "cf", "work/b.tar"])
        .args(["-C", "work", "src"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let calls = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("work/src/f") || l.contains("/a.tar") || l.contains("/b.tar"))
            .map(|l| {
                let call = l.split(']').nth(1).unwrap_or("").trim();
                call.split('(').next().unwrap_or("").to_string()
            })
            .collect()
    };
    let piped = std::fs::read_to_string(d.join("piped.txt")).unwrap();
    let file = dump(&[], &d.join("f.ds"));
    assert!(calls(&file).len() > 40, "{file}");
    assert_eq!(calls(&piped), calls(&file));
    let _ = std::fs::remove_dir_all(&d);
}

/// `dump --follow` started on a recording in progress: it prints tar's calls while the
/// command still runs (a sleep after tar), ends by itself when the recording ends, and what
/// it printed is `dump` of the finished trace.
fn follow_prints_calls_while_recording_and_ends_with_it() {
    if !have_program("tar") {
        return;
    }
    let d = ra_testkit::case_dir("stream-follow", "tar");
    tree(&d);
    let rec = bin()
        .current_dir(&d)
        .args(["record", "-q", "--backend", backend(), "-o", "t.ds", "--", "sh", "-c"])
        .arg("tar cf work/a.tar -C work src; sleep 3; cat work/src/f1 > /dev/null")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut follow = bin()
        .current_dir(&d)
        .args(["dump", "--follow", "t.ds"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(follow.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let mut rec = Some(rec);
    let mut live = false;
    for l in lines.by_ref() {
        let l = l.unwrap();
        // tar's archive written while the command still sleeps: the line came live.
        if l.contains("a.tar") && l.contains("close(") {
            let r = rec.as_mut().unwrap();
            live = r.try_wait().unwrap().is_none();
            break;
        }
        seen.push(l);
    }
    assert!(live, "no close of a.tar before the recording ended: {seen:?}");
    let r = wait_or_kill(rec.take().unwrap(), Duration::from_secs(60));
    assert!(r.status.success(), "{}", stderr(&r));
    let t0 = Instant::now();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let f = wait_or_kill(follow, Duration::from_secs(10));
    assert!(t0.elapsed() < Duration::from_secs(3), "follow ended {:?} late", t0.elapsed());
    assert!(f.status.success(), "{}", stderr(&f));
    assert_eq!(stderr(&f), "");
    let file = dump(&[], &d.join("t.ds"));
    let mut lines_file = file.lines();
    for l in &seen {
        assert_eq!(Some(l.as_str()), lines_file.next());
    }
    lines_file.next(); // the close of a.tar
    let rest_file: Vec<&str> = lines_file.collect();
    assert_eq!(rest, rest_file);
    assert!(rest.iter().any(|l| l.contains("work/src/f1")), "{rest:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A recorder killed (SIGKILL) while `dump --follow` reads its trace: the follower shows
/// what was written, says in one note that the writer is gone, and ends within a second or
/// two — it does not wait forever for a trailer that never comes.
fn follow_ends_when_the_writer_is_killed() {
    if !have_program("python3") {
        return;
    }
    let d = ra_testkit::case_dir("stream-killed", "python3");
    let mut rec = bin()
        .current_dir(&d)
        .args(["record", "-q", "--backend", backend(), "-o", "t.ds", "--", "python3", "-c"])
        .arg("import os, time\nopen('pid', 'w').write(str(os.getpid()))\ntime.sleep(60)")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let follow = bin()
        .current_dir(&d)
        .args(["dump", "--follow", "t.ds"])
        .stdout(std::fs::File::create(d.join("out.txt")).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    rec.kill().unwrap();
    rec.wait().unwrap();
    let t0 = Instant::now();
    let o = wait_or_kill(follow, Duration::from_secs(10));
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("is gone without finishing it"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = std::fs::read_to_string(d.join("out.txt")).unwrap();
    assert!(out.contains("execve("), "{out}");
    // The python process may outlive its killed recorder (eBPF lets it run): end it.
    if let Some(pid) = std::fs::read_to_string(d.join("pid")).ok().and_then(|p| p.parse().ok()) {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid).unwrap(),
            rustix::process::Signal::KILL,
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `-o -` into a reader that goes away: `record -o - -- true | head -c1` gives one line on
/// stderr and exit status 2; a command whose recording is cut mid-way by the reader's going
/// runs on to its end, unrecorded, not left stopped.
fn a_closed_pipe_is_one_line_and_the_command_runs_on() {
    let d = ra_testkit::case_dir("stream-epipe", "true");
    let b = exe();
    let be = backend();
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; {b} record --backend {be} -o - -- true | head -c1 > /dev/null"
        ))
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("broken pipe"), "{line}");
    // A reader that reads 100 kB and goes: the command goes on and finishes.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; {b} record --backend {be} -o - -- sh -c 'seq 1 300000 > /dev/null; \
             sleep 1; seq 1 300000 > /dev/null; echo done > finished' | head -c 100000 > /dev/null"
        ))
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("broken pipe"), "{line}");
    assert_eq!(std::fs::read_to_string(d.join("finished")).unwrap(), "done\n");
    let _ = std::fs::remove_dir_all(&d);
}

/// Ctrl-C (SIGINT to the pipeline's process group) on `record -o - -- python3 … | dump -`:
/// both end within a second, and the reader has shown the calls made before.
fn ctrl_c_ends_a_piped_recording_and_its_reader() {
    if !have_program("python3") {
        return;
    }
    let d = ra_testkit::case_dir("stream-ctrlc", "python3");
    let b = exe();
    let script = format!(
        "{b} record -q --backend {} -o - -- python3 -c 'import os, time\nos.stat(\"/tmp\")\n\
         while True: time.sleep(0.01)' | {b} dump - > out.txt",
        backend()
    );
    use std::os::unix::process::CommandExt;
    let child = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(&d)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let pg = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process_group(pg, rustix::process::Signal::INT).unwrap();
    let t0 = Instant::now();
    let _ = wait_or_kill(child, Duration::from_secs(20));
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    let out = std::fs::read_to_string(d.join("out.txt")).unwrap();
    assert!(out.contains("\"/tmp\""), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `compile --json` and `replay --json` whose reader has gone (`| head`) end as `dump` does
/// on a closed pipe: status 0, nothing on stderr (they said `Broken pipe`, status 2, when
/// serde_json's error wrapped the EPIPE).
fn json_into_a_closed_pipe_ends_as_dump_does() {
    if !have_program("tar") {
        return;
    }
    let d = ra_testkit::case_dir("stream-json-epipe", "tar");
    tree(&d);
    let o = bin()
        .current_dir(&d)
        .args(["record", "-q", "--backend", backend(), "-o", "t.ds", "--", "tar", "cf"])
        .args(["work/a.tar", "-C", "work", "src"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::create_dir(d.join("root")).unwrap();
    let runs: [&[&str]; 3] = [
        &["compile", "t.ds", "-o", "p.rp", "--json"],
        &["replay", "t.ds", "--root", "root", "--init=infer", "--json"],
        &["dump", "t.ds", "--format", "jsonl"],
    ];
    for args in runs {
        let _ = std::fs::remove_file(d.join("p.rp"));
        let mut c = bin()
            .current_dir(&d)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes before anything is written.
        drop(c.stdout.take());
        let o = wait_or_kill(c, Duration::from_secs(60));
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
        let _ = std::fs::remove_dir_all(d.join("root"));
        std::fs::create_dir(d.join("root")).unwrap();
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Bad input on standard input: not a trace, and the readers that do not stream it, each
/// one line and status 2.
#[test]
fn bad_streams_and_readers_that_do_not_stream_are_one_line() {
    use std::io::Write;
    for (args, input) in [
        (&["dump", "-"][..], &b"not a trace at all, just some words"[..]),
        (&["dump", "-"][..], &b""[..]),
        (&["stats", "-"][..], &b"x"[..]),
        (&["info", "-"][..], &b"x"[..]),
        (&["dump", "--follow", "-"][..], &b"x"[..]),
    ] {
        let mut c = bin()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = c.stdin.take().unwrap().write_all(input);
        let o = wait_or_kill(c, Duration::from_secs(20));
        let line = ra_testkit::assert_clean_failure(&o);
        assert!(!line.is_empty(), "{args:?}");
    }
}
