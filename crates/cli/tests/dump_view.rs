//! Reading a trace the way strace users do (issue 40): descriptor paths (`strace -y`) in every
//! output format and in `--where`, strace's call classes and the kernel's names of calls
//! wherever a call is named, time and string formats, exit lines. Each on real programs
//! (sqlite3, tar, python3) recorded by both recorders.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use ra_testkit::{backend, both_backends, have_program};
use serde_json::Value as Json;

use common::{bin, dump, ok, record};

both_backends!(
    sqlite3_descriptors_name_the_database_file,
    tar_with_strace_classes_records_and_selects_them,
    python3_time_string_and_flag_formats_and_exit_lines,
    attach_names_descriptors_opened_before_it,
);

fn scratch(name: &str) -> PathBuf {
    let d = ra_testkit::backend_scratch_dir("view", name);
    d.canonicalize().unwrap()
}

fn jsonl(trace: &Path, args: &[&str]) -> Vec<Json> {
    let out = dump(trace, &[&["-f", "jsonl"], args].concat());
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The calls of one line of text output (`  12 TIME [PID] name(...`).
fn call_of(line: &str) -> &str {
    let rest = line.split("] ").nth(1).unwrap_or("");
    rest.split('(').next().unwrap_or("")
}

fn sqlite3_descriptors_name_the_database_file() {
    if !have_program("sqlite3") {
        return;
    }
    let d = scratch("sqlite3");
    let trace = d.join("t.ds");
    let sql = "create table t(x); insert into t values (1),(2),(3); select count(*) from t;";
    let o = record(&trace, &d, &[], &["sqlite3", "shop.db", sql]);
    ok(o, "record sqlite3");
    let db = d.join("shop.db");
    let db = db.to_str().unwrap();
    // Text: every use of the database's descriptor names it, as strace -y does.
    let all = dump(&trace, &[]);
    let tagged = format!("</{}>", db.trim_start_matches('/'));
    let on_db: Vec<&str> = all.lines().filter(|l| l.contains(&tagged)).collect();
    let calls: Vec<&str> = on_db.iter().map(|l| call_of(l)).collect();
    assert!(calls.contains(&"openat"), "{all}");
    assert!(calls.contains(&"pwrite"), "{calls:?}\n{all}");
    assert!(calls.contains(&"close"), "{calls:?}");
    // --where path follows the descriptor: the writes and the close of the file, not only
    // the open that named it.
    let by_path = dump(&trace, &["--where", &format!("path == \"{db}\"")]);
    let calls: Vec<&str> = by_path.lines().map(call_of).collect();
    assert!(calls.contains(&"pwrite") && calls.contains(&"close"), "{by_path}");
    assert!(calls.contains(&"fsync") || calls.contains(&"fdatasync"), "{by_path}");
    let glob = dump(&trace, &["--where", r#"path ~ "**/shop.db" && call == pwrite64"#]);
    assert!(glob.lines().count() >= 2, "the kernel's name matches the trace's pwrite: {glob}");
    assert_eq!(glob.lines().count(), calls.iter().filter(|c| **c == "pwrite").count());
    // JSON lines and CSV carry the paths.
    let writes = jsonl(&trace, &["--type", "pwrite64", "--where", "path ~ \"**/shop.db\""]);
    assert!(!writes.is_empty());
    for w in &writes {
        assert_eq!(w["fd_path"], db, "{w}");
        assert_eq!(w["fd_path2"], Json::Null, "{w}");
    }
    let csv = dump(&trace, &["-f", "csv", "--where", &format!("fd_path == \"{db}\"")]);
    assert!(csv.lines().skip(1).all(|l| l.contains(&format!(",{db},"))), "{csv}");
    assert!(csv.lines().count() > writes.len(), "{csv}");
    // Without following descriptors, only the calls that name the path.
    let plain = dump(&trace, &["--no-decode-fds", "--where", "path ~ \"**/shop.db\""]);
    assert!(!plain.lines().any(|l| call_of(l) == "pwrite"), "{plain}");
    assert!(!plain.contains(&tagged), "{plain}");
    let _ = std::fs::remove_dir_all(&d);
}

fn tar_with_strace_classes_records_and_selects_them() {
    if !have_program("tar") {
        return;
    }
    let d = scratch("tar");
    std::fs::create_dir(d.join("src")).unwrap();
    for i in 0..3 {
        std::fs::write(d.join(format!("src/f{i}")), vec![b'a' + i; 5000]).unwrap();
    }
    // Only strace's %file class (and the process lifecycle, always).
    let trace = d.join("file.ds");
    ok(record(&trace, &d, &["--syscalls", "%file"], &["tar", "cf", "a.tar", "src"]), "record");
    let file = ra_syscalls::Selection::parse("%file").unwrap();
    let life = ra_syscalls::Selection::parse("%process").unwrap();
    let evs = jsonl(&trace, &[]);
    let names: Vec<&str> = evs.iter().map(|e| e["syscall"].as_str().unwrap()).collect();
    assert!(names.contains(&"openat"), "{names:?}");
    for n in &names {
        let def = ra_syscalls::lookup(n).unwrap();
        assert!(file.contains(def) || life.contains(def), "{n} is neither %file nor %process");
    }
    assert!(!names.contains(&"read") && !names.contains(&"write"), "{names:?}");
    // A whole recording, selected by class, by negated class, by alias.
    let trace = d.join("all.ds");
    ok(record(&trace, &d, &[], &["tar", "cf", "b.tar", "src"]), "record");
    // tar opens directories without O_DIRECTORY and the files in them relative to those
    // descriptors: the files' reads name them all the same.
    let src = d.join("src");
    let reads = jsonl(&trace, &["--type", "read", "--where", "path ~ \"**/src/f*\""]);
    let files: std::collections::BTreeSet<&str> =
        reads.iter().map(|r| r["fd_path"].as_str().unwrap()).collect();
    let want: Vec<String> = (0..3).map(|i| format!("{}/f{i}", src.display())).collect();
    assert_eq!(files.into_iter().collect::<Vec<_>>(), want, "{reads:?}");
    let desc = dump(&trace, &["--type", "%desc"]);
    let calls: Vec<&str> = desc.lines().map(call_of).collect();
    assert!(calls.contains(&"read") && calls.contains(&"openat"), "{calls:?}");
    assert!(!calls.contains(&"execve") && !calls.contains(&"exit_group"), "{calls:?}");
    assert_eq!(desc, dump(&trace, &["-e", "trace=%desc"]), "strace's spelling");
    let not_desc = dump(&trace, &["--type", "!%desc"]);
    let calls2: Vec<&str> = not_desc.lines().filter(|l| !l.contains("+++")).map(call_of).collect();
    assert!(calls2.contains(&"execve") && !calls2.contains(&"read"), "{calls2:?}");
    let total = dump(&trace, &[]).lines().filter(|l| !l.contains("+++")).count();
    assert_eq!(calls.len() + calls2.len(), total);
    let w = dump(&trace, &["--where", "call in %desc && call not in %file"]);
    let calls3: Vec<&str> = w.lines().map(call_of).collect();
    assert!(calls3.contains(&"read") && !calls3.contains(&"openat"), "{calls3:?}");
    let stat = dump(&trace, &["--where", "call == fstatat64 || call == newfstatat"]);
    let stat2 = dump(&trace, &["--type", "newfstatat"]);
    assert_eq!(stat, stat2);
    // Bad names: one line, a suggestion, a non-zero exit.
    let e = ra_testkit::assert_clean_failure(
        &bin()
            .args(["record", "-o"])
            .arg(d.join("x.ds"))
            .args(["--syscalls", "%fiel", "--", "true"])
            .output()
            .unwrap(),
    );
    assert!(e.contains("`%fiel` is no call class; did you mean `%file`?"), "{e}");
    let e = ra_testkit::assert_clean_failure(
        &bin().arg("dump").arg(&trace).args(["--where", "call == opnat"]).output().unwrap(),
    );
    assert!(
        e.contains("`opnat` is no system call reanimator knows; did you mean `openat`?"),
        "{e}"
    );
    let e = ra_testkit::assert_clean_failure(
        &bin().arg("dump").arg(&trace).args(["--where", "call in %fstats"]).output().unwrap(),
    );
    assert!(e.contains("did you mean `%fstat`?"), "{e}");
    let e = ra_testkit::assert_clean_failure(
        &bin().arg("dump").arg(&trace).args(["--type", "reed"]).output().unwrap(),
    );
    assert!(e.contains("did you mean `read`?"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

fn python3_time_string_and_flag_formats_and_exit_lines() {
    if !have_program("python3") {
        return;
    }
    let d = scratch("python3");
    let trace = d.join("t.ds");
    let script = "import os, sys\n\
                  fd = os.open('bin.dat', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)\n\
                  os.write(fd, bytes([0, 1, 2, 0xff]) + b'text')\n\
                  os.close(fd)\n\
                  sys.exit(3)\n";
    let o = record(&trace, &d, &[], &["python3", "-c", script]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let evs = jsonl(&trace, &[]);
    let times: Vec<i64> = evs.iter().map(|e| e["time_called"].as_i64().unwrap()).collect();
    let field = |out: &str, i: usize| -> Vec<String> {
        out.lines()
            .filter(|l| !l.contains("+++"))
            .map(|l| l.split_whitespace().nth(i).unwrap().to_string())
            .collect()
    };
    // -ttt: seconds.microseconds since the epoch, each the call's time.
    let ttt = field(&dump(&trace, &["-ttt"]), 1);
    assert_eq!(ttt.len(), times.len());
    for (s, t) in ttt.iter().zip(&times) {
        assert_eq!(*s, format!("{}.{:06}", t / 1_000_000_000, t % 1_000_000_000 / 1000));
    }
    // -tt: the wall clock with microseconds; -t: to the second.
    let tt = field(&dump(&trace, &["-tt"]), 1);
    let t1 = field(&dump(&trace, &["-t"]), 1);
    for ((a, b), t) in tt.iter().zip(&t1).zip(&times) {
        assert_eq!(a.len(), 15, "{a}");
        assert!(a.starts_with(b.as_str()) && b.len() == 8 && b.as_bytes()[2] == b':', "{a} {b}");
        assert!(a.ends_with(&format!("{:06}", t % 1_000_000_000 / 1000)), "{a}");
    }
    // -r: the time since the previous call shown.
    let r = field(&dump(&trace, &["-r"]), 1);
    assert_eq!(r[0], "0.000000");
    for (i, s) in r.iter().enumerate().skip(1) {
        // (Calls are in the order they returned: a delta may be negative.)
        let d = times[i] - times[i - 1];
        let us = d.unsigned_abs() / 1000;
        let sign = if d < 0 { "-" } else { "" };
        assert_eq!(*s, format!("{sign}{}.{:06}", us / 1_000_000, us % 1_000_000));
    }
    // -T is on by default; --no-duration leaves it out.
    assert!(dump(&trace, &["-T", "--type", "close"]).trim_end().ends_with('>'));
    assert!(!dump(&trace, &["--no-duration", "--type", "close"]).contains(" <0."));
    // Strings: as they are, -x (a string with a non-ASCII byte whole in hex), -xx (all).
    let w = |args: &[&str]| {
        let out =
            dump(&trace, &[args, &["--where", "call == write && path ~ \"**/bin.dat\""]].concat());
        assert_eq!(out.lines().count(), 1, "{out}");
        out
    };
    assert!(w(&[]).contains(r#"(3</"#) && w(&[]).contains(r#""\x00\x01\x02\xfftext""#));
    assert!(w(&["-x"]).contains(r#""\x00\x01\x02\xff\x74\x65\x78\x74""#), "{}", w(&["-x"]));
    let open = |args: &[&str]| {
        dump(&trace, &[args, &["--where", "path ~ \"**/bin.dat\" && call == openat"]].concat())
    };
    assert!(open(&["-xx"]).contains(r#""\x62\x69\x6e\x2e\x64\x61\x74""#), "{}", open(&["-xx"]));
    assert!(open(&["-x"]).contains(r#""bin.dat""#), "a path of ASCII stays text under -x");
    // -X: flags as names, numbers, or both.
    assert!(open(&[]).contains("AT_FDCWD") && open(&[]).contains("O_WRONLY|O_CREAT|O_TRUNC"));
    let raw = open(&["-X", "raw"]);
    assert!(raw.contains("(-100, ") && raw.contains(", 0x80241, ") && !raw.contains("O_"), "{raw}");
    let verbose = open(&["-X", "verbose"]);
    assert!(verbose.contains("0x80241 /* O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC */"), "{verbose}");
    // The end of the process, as strace shows it.
    let all = dump(&trace, &[]);
    let last = all.lines().last().unwrap();
    assert!(
        last.trim_start().starts_with('[') && last.ends_with("] +++ exited with 3 +++"),
        "{all}"
    );
    // A process killed by a signal ends with strace's line for it.
    let killed = d.join("killed.ds");
    let o = record(&killed, &d, &[], &["python3", "-c", "import os; os.kill(os.getpid(), 9)"]);
    assert_eq!(o.status.code(), Some(137), "{}", String::from_utf8_lossy(&o.stderr));
    let all = dump(&killed, &[]);
    assert!(all.trim_end().ends_with("] +++ killed by SIGKILL +++"), "{}", &all[all.len() - 500..]);
    let bad = bin().arg("dump").arg(&trace).args(["-X", "fancy"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    // info --json: numbers as numbers, every time as nanoseconds since the epoch.
    let info: Json = serde_json::from_str(&ok(
        bin().args(["info", "--json"]).arg(&trace).output().unwrap(),
        "info --json",
    ))
    .unwrap();
    let facts = &info["info"];
    assert_eq!(facts["exit_status"], 3, "{facts}");
    assert!(facts["synthetic_ids"].is_u64(), "{facts}");
    assert!(facts["umask"].is_string(), "octal stays text: {facts}");
    let (start, end) = (facts["start_time_ns"].as_i64(), facts["end_time_ns"].as_i64());
    let (start, end) = (start.expect("start_time_ns"), end.expect("end_time_ns"));
    let first = info["time_span"]["first_ns"].as_i64().unwrap();
    assert!(start <= first && first <= end, "{info}");
    let _ = std::fs::remove_dir_all(&d);
}

fn attach_names_descriptors_opened_before_it() {
    if !have_program("python3") {
        return;
    }
    let d = scratch("attach");
    let log = d.join("before.log");
    // Opens a file and a pipe, says so, then writes to both for a while.
    let script = format!(
        "import os, sys, time\n\
         fd = os.open('{}', os.O_WRONLY | os.O_CREAT, 0o600)\n\
         r, w = os.pipe()\n\
         print(fd, w, flush=True)\n\
         for i in range(60):\n    os.write(fd, b'tick\\n'); os.write(w, b'x'); os.read(r, 1); time.sleep(0.05)\n",
        log.display()
    );
    let mut target =
        Command::new("python3").args(["-c", &script]).stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(target.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let fds: Vec<i64> = line.split_whitespace().map(|s| s.parse().unwrap()).collect();
    let trace = d.join("t.ds");
    let rec = bin()
        .args(["record", "-q", "--backend", backend(), "-o"])
        .arg(&trace)
        .args(["-p", &target.id().to_string()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    assert!(Command::new("kill").args(["-INT", &rec.id().to_string()]).status().unwrap().success());
    let out = rec.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = target.wait();
    let writes = jsonl(&trace, &["--type", "write"]);
    let on = |fd: i64| writes.iter().filter(move |w| w["args"]["fd"] == fd);
    assert!(on(fds[0]).count() >= 3, "{writes:?}");
    for w in on(fds[0]) {
        assert_eq!(w["fd_path"], log.to_str().unwrap(), "{w}");
    }
    for w in on(fds[1]) {
        let p = w["fd_path"].as_str().unwrap_or_else(|| panic!("{w}"));
        assert!(p.starts_with("pipe:[") && p.ends_with(']'), "{w}");
    }
    let text = dump(&trace, &["--type", "write", "-n", "4"]);
    assert!(text.contains(&format!("write({}<{}>, \"tick\\n\"", fds[0], log.display())), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}
