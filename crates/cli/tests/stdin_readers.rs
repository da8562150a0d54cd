//! Every reader takes `-` (issue 40 item 5): a trace piped in answers as the same trace given
//! as a file — info, stats, export, profile, verify, compile and replay read standard input
//! through a private temporary file (crate `spool`), `dump -` streams it — under both
//! capture backends, on real programs (tar); `fs mount -o -` into `dump -`; Ctrl-C.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ra_testkit::{backend, both_backends, have_program};

use common::bin;

both_backends!(readers_given_dash_answer_as_given_the_file, a_recording_piped_into_stats);

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn exe() -> String {
    env!("CARGO_BIN_EXE_reanimator").to_string()
}

/// `reanimator ARGS FILE` and `cat FILE | reanimator ARGS -`, run by the shell in `d`: their
/// stdout, the direct run's naming of FILE (`named`, e.g. `"t.ds"`) replaced by how the piped
/// run names standard input (`shown`: `"-"` in JSON, `standard input` in text). Neither
/// stream of the piped run names the spooled copy (`/proc/self/fd/N`).
fn both_ways(d: &Path, args: &str, file: &str, (named, shown): (&str, &str)) -> (String, String) {
    let run = |script: String| {
        let o = Command::new("bash").arg("-c").arg(&script).current_dir(d).output().unwrap();
        assert!(o.status.success(), "{script}: {}", stderr(&o));
        o
    };
    let b = exe();
    let direct = run(format!("{b} {args} {file}"));
    let piped = run(format!("cat {file} | {b} {args} -"));
    let direct = String::from_utf8_lossy(&direct.stdout).replace(named, shown);
    let all = format!("{}{}", String::from_utf8_lossy(&piped.stdout), stderr(&piped));
    assert!(!all.contains("/proc/self/fd"), "{args} -: names the spooled copy: {all}");
    (direct, String::from_utf8_lossy(&piped.stdout).into_owned())
}

fn tree(d: &Path) {
    std::fs::create_dir_all(d.join("work/src")).unwrap();
    for i in 0..20u8 {
        std::fs::write(
            d.join(format!("work/src/f{i}")),
            vec![b'a' + i; 1000 + usize::from(i) * 300],
        )
        .unwrap();
    }
}

/// A trace recorded once to a file; each reader given it as a file and piped (`cat FILE |
/// reanimator X -`) prints the same; compile of the piped trace makes a plan that replays.
fn readers_given_dash_answer_as_given_the_file() {
    if !have_program("tar") {
        return;
    }
    let d = ra_testkit::case_dir("stdin-readers", "tar");
    tree(&d);
    let o = bin()
        .current_dir(&d)
        .args(["record", "-q", "--backend", backend(), "-o", "t.ds", "--", "tar", "cf"])
        .args(["work/a.tar", "-C", "work", "src"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for (args, shown) in [
        ("info --json", "\"-\""),
        ("info", "standard input"),
        ("stats --json", "\"-\""),
        ("stats", ""),
        ("profile --json", "trace:-"),
        ("profile", "trace:-"),
        ("dump", ""),
    ] {
        let named = match shown {
            "\"-\"" => "\"t.ds\"",
            "trace:-" => "trace:t.ds",
            _ => "t.ds",
        };
        let (direct, piped) = both_ways(&d, args, "t.ds", (named, shown));
        assert!(direct.len() > 20, "{args}: {direct}");
        assert_eq!(direct, piped, "{args}: the piped trace answers differently");
        assert!(shown.is_empty() || piped.contains(shown), "{args}: no {shown} in {piped}");
    }
    // Several traces, one of them piped: stats heads each table with its trace's name, as
    // head and tail do.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("cat t.ds | {} stats t.ds -", exe()))
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("==> t.ds <==") && text.contains("==> standard input <=="), "{text}");
    // verify of a sealed trace, piped: intact, as given the file.
    let b = exe();
    let sealed = format!(
        "{b} keygen k >/dev/null 2>&1 && {b} record -q --backend {} --seal k -o s.ds -- true",
        backend()
    );
    let o = Command::new("bash").arg("-c").arg(&sealed).current_dir(&d).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (direct, piped) = both_ways(&d, "verify --key k", "s.ds", ("s.ds", "standard input"));
    assert!(direct.contains("intact"), "{direct}");
    assert_eq!(direct, piped);
    // stats counts tar's calls (not an empty table).
    let (stats, _) = both_ways(&d, "stats --json", "t.ds", ("t.ds", "-"));
    let j: serde_json::Value = serde_json::from_str(stats.lines().next().unwrap()).unwrap();
    assert!(j.to_string().contains("\"openat\""), "{j}");
    // export: the same CSV tables, row for row, but for the trace id (`stdin` for a trace
    // read from `-`); and a Parquet dataset partitioned `trace=stdin`.
    let sh = |script: &str| {
        let o = Command::new("bash").arg("-c").arg(script).current_dir(&d).output().unwrap();
        assert!(o.status.success(), "{script}: {}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    sh(&format!("{b} export -f csv -o f t.ds && cat t.ds | {b} export -f csv -o p -"));
    let part = |root: &str, id: &str| {
        let host = std::fs::read_dir(d.join(root)).unwrap().next().unwrap().unwrap().path();
        host.join(format!("trace={id}"))
    };
    let (f, p) = (part("f", "t"), part("p", "stdin"));
    let mut tables = 0;
    for e in std::fs::read_dir(&f).unwrap() {
        let name = e.unwrap().file_name();
        let without_id = |path: &Path| -> Vec<String> {
            std::fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .lines()
                .map(|l| {
                    let mut cols: Vec<&str> = l.splitn(3, ',').collect();
                    if cols.len() > 1 && cols[1] != "trace_id" {
                        cols[1] = "ID";
                    }
                    cols.join(",")
                })
                .collect()
        };
        let (a, z) = (without_id(&f.join(&name)), without_id(&p.join(&name)));
        assert_eq!(a, z, "{name:?}: the piped trace exports differently");
        tables += 1;
    }
    assert!(tables >= 5, "{tables} tables");
    sh(&format!("cat t.ds | {b} export -f parquet -o pq -"));
    let found = sh("find pq -type d -name trace=stdin -path '*calls*'");
    assert!(!found.trim().is_empty(), "no calls partition trace=stdin");
    // compile of the piped trace: a plan that replays as the trace does.
    sh(&format!("cat t.ds | {b} compile -o plan.rp - && mkdir -p r1 r2 r3"));
    // The plan names its source `-`, not the temporary file it was read from.
    let plan: serde_json::Value = serde_json::from_str(&sh(&format!("{b} info --json plan.rp")))
        .expect("info --json of the plan");
    assert_eq!(plan["source"]["path"], "-", "{plan}");
    // Replays of the plan, of the trace, and of the trace piped: the same tar written, all
    // calls matched.
    for (script, root) in [
        (format!("{b} replay --report r1.json --root r1 --init plan.rp"), "r1"),
        (format!("{b} replay --report r2.json --root r2 --init t.ds"), "r2"),
        (format!("cat t.ds | {b} replay --report r3.json --root r3 --init -"), "r3"),
    ] {
        sh(&script);
        let rep: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join(format!("{root}.json"))).unwrap())
                .unwrap();
        assert_eq!(rep["mismatch_total"], 0, "{script}: {rep}");
        let tar = d.join(root).join(d.strip_prefix("/").unwrap()).join("work/a.tar");
        assert!(std::fs::metadata(&tar).is_ok_and(|m| m.len() > 10_000), "{}", tar.display());
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `record -o - -- tar ... | stats --json -` (tee keeping the bytes): the counts of `stats`
/// of that file.
fn a_recording_piped_into_stats() {
    if !have_program("tar") {
        return;
    }
    let d = ra_testkit::case_dir("stdin-stats", "tar");
    let b = exe();
    let script = format!(
        "set -o pipefail; {b} record -q --backend {} -o - -- tar cf /dev/null /usr/share/doc \
         | tee t.ds | {b} stats --json - > piped.json",
        backend()
    );
    let o = Command::new("bash").arg("-c").arg(&script).current_dir(&d).output().unwrap();
    assert!(o.status.success(), "{script}: {}", stderr(&o));
    let counts = |s: &str| {
        let mut j: serde_json::Value = serde_json::from_str(s.lines().next().unwrap()).unwrap();
        j.as_object_mut().unwrap().remove("traces");
        j
    };
    let piped = counts(&std::fs::read_to_string(d.join("piped.json")).unwrap());
    let o = bin().current_dir(&d).args(["stats", "--json", "t.ds"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let file = counts(&String::from_utf8_lossy(&o.stdout));
    assert!(file.to_string().contains("\"openat\""), "{file}");
    assert_eq!(piped, file);
    let _ = std::fs::remove_dir_all(&d);
}

/// Bad input: `-` twice, an empty standard input: one line each, exit status 2.
#[test]
fn one_dash_at_most_and_an_empty_input_is_no_trace() {
    let d = ra_testkit::case_dir("stdin-bad", "none");
    std::fs::write(d.join("a.ds"), b"x").unwrap();
    for args in [vec!["stats", "-", "-"], vec!["export", "-f", "csv", "-o", "o", "-", "-"]] {
        let o = bin().args(&args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let line = ra_testkit::assert_clean_failure(&o);
        assert!(line.contains("given 2 times"), "{line}");
    }
    for c in ["info", "stats", "verify", "profile"] {
        let o = bin().args([c, "-"]).stdin(Stdio::null()).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{c}");
        let line = ra_testkit::assert_clean_failure(&o);
        assert!(line.contains("standard input is empty"), "{c}: {line}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A damaged trace piped in: each reader's note (a trace cut inside its last extent) and
/// error (one cut inside its first) names it `standard input`, never the spooled copy.
#[test]
fn a_damaged_piped_trace_is_named_standard_input() {
    let d = ra_testkit::case_dir("stdin-damaged", "example");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/example.ds");
    let bytes = std::fs::read(&example).unwrap();
    let readers: [&[&str]; 5] = [
        &["info", "-"],
        &["stats", "-"],
        &["profile", "-"],
        &["export", "-f", "csv", "-o", "out", "-"],
        &["compile", "-o", "plan.rp", "-"],
    ];
    for args in readers {
        for (cut, fails) in [(12_000, false), (3_000, true)] {
            std::fs::write(d.join("cut.ds"), &bytes[..cut]).unwrap();
            let o = bin()
                .current_dir(&d)
                .args(args)
                .stdin(std::fs::File::open(d.join("cut.ds")).unwrap())
                .output()
                .unwrap();
            let err = stderr(&o);
            assert_eq!(!o.status.success(), fails, "{args:?} of {cut} bytes: {err}");
            let said =
                if fails { "reanimator: error:" } else { "reanimator: note: standard input" };
            assert!(err.contains(said), "{args:?} of {cut} bytes: {err}");
            assert!(err.contains("standard input"), "{args:?} of {cut} bytes: {err}");
            assert!(!err.contains("/proc/self/fd"), "{args:?} of {cut} bytes: {err}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Ctrl-C of `stats -` reading a stream that never ends (a FIFO held open by its writer):
/// it ends within a second and leaves no temporary file in its TMPDIR.
#[test]
fn ctrl_c_ends_stats_of_a_never_ending_stream_and_leaves_no_file() {
    let d = ra_testkit::case_dir("stdin-ctrlc", "fifo");
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let fifo = d.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Held open for reading and writing: the stream never ends.
    let writer = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let mut cmd = bin();
    // SIGINT as a terminal's Ctrl-C finds it: a test run in the background of a
    // non-interactive shell inherits it ignored, which `stats -` (no handler of its own,
    // the default action is the right one) would keep.
    // SAFETY: only an async-signal-safe call between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd
        .args(["stats", "-"])
        .env("TMPDIR", &tmp)
        .stdin(std::fs::File::open(&fifo).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut &writer, &[0u8; 100_000]).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "stats - ended before the stream did");
    // SAFETY: signalling our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(1), "stats - still runs 1 s after Ctrl-C");
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.wait();
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "a file was left in TMPDIR");
    drop(writer);
    let _ = std::fs::remove_dir_all(&d);
}

/// `fs mount LOWER MNT -o - | dump -`: the dump shows tar's operations on the mount while it
/// is mounted, and ends when it is unmounted.
#[test]
fn fs_mount_streams_its_trace_into_dump() {
    if !ra_testkit::can_mount_fuse() || !have_program("tar") {
        return;
    }
    let d = ra_testkit::case_dir("stdin-fs", "tar");
    let (lower, mnt) = (d.join("lower"), d.join("mnt"));
    std::fs::create_dir_all(&mnt).unwrap();
    tree(&lower);
    let b = exe();
    let mut pipeline = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{b} fs mount {} {} -o - | {b} dump --format jsonl - > dump.txt",
            lower.display(),
            mnt.display()
        ))
        .current_dir(&d)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !mnt.join("work").exists() {
        assert!(t0.elapsed() < Duration::from_secs(20), "the mount did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Through a pipe: GNU tar writing to /dev/null itself does not read the files.
    let o = Command::new("bash")
        .arg("-c")
        .arg("tar cf - -C \"$1\" src | cat > /dev/null")
        .arg("bash")
        .arg(mnt.join("work"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Live: tar's reads are in the dump before the umount.
    let t0 = Instant::now();
    while !std::fs::read_to_string(d.join("dump.txt")).unwrap_or_default().contains("src/f19\"") {
        assert!(t0.elapsed() < Duration::from_secs(10), "no live lines of tar's files");
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = pipeline.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "the pipeline runs on after umount");
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = pipeline.wait_with_output().unwrap();
    assert!(status.success(), "{}", stderr(&err));
    assert!(!stderr(&err).contains("without its trailer"), "{}", stderr(&err));
    let dump = std::fs::read_to_string(d.join("dump.txt")).unwrap();
    let reads = dump.lines().filter(|l| l.contains("\"call\":\"read\"")).count();
    assert!(reads >= 20, "{reads} reads: {dump}");
    let _ = std::fs::remove_dir_all(&d);
}
