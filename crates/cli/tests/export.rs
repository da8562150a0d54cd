//! `reanimator export --format fio-iolog`: programs recorded here (ptrace, unprivileged),
//! exported, the iolog's lines checked, and the log replayed by fio into a scratch directory
//! (its JSON counts and the files it wrote checked against the trace); bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use common::bin;

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run reanimator")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    ra_testkit::scratch_dir(&format!("export-{name}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn record(trace: &Path, cmd: &[&str]) {
    let o = bin()
        .args(["record", "--backend", "ptrace", "-q", "-o", s(trace), "--"])
        .args(cmd)
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
}

/// The iolog's lines without their timestamps; checks the header and that timestamps never
/// go back.
fn body(log: &str) -> Vec<String> {
    let mut lines = log.lines();
    assert_eq!(lines.next(), Some("fio version 3 iolog"));
    let mut last = 0u64;
    lines
        .map(|l| {
            let (t, rest) = l.split_once(' ').expect("timestamp");
            let t: u64 = t.parse().expect("a number");
            assert!(t >= last, "timestamps go back: {log}");
            last = t;
            rest.to_string()
        })
        .collect()
}

const SCRIPT: &str = r#"
import os, sys
p = os.path.join(sys.argv[1], "f")
fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"a" * 4096)
os.write(fd, b"b" * 4096)
os.pwrite(fd, b"c" * 4096, 16384)
fd2 = os.dup(fd)
os.write(fd2, b"d" * 1000)
os.lseek(fd, 0, os.SEEK_SET)
os.read(fd, 8192)
os.pread(fd, 4096, 16384)
os.read(fd2, 100000)
os.fsync(fd)
os.fdatasync(fd2)
os.close(fd)
os.close(fd2)
a = os.open(os.path.join(sys.argv[1], "log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(a, b"x" * 300)
os.write(a, b"y" * 200)
os.close(a)
"#;

#[test]
fn python_file_io_exports_exactly_and_fio_replays_it() {
    if !ra_testkit::have_program("python3") || !ra_testkit::have_program("fio") {
        eprintln!("skipped: needs python3 and fio");
        return;
    }
    let d = scratch("py");
    let data = d.join("data");
    std::fs::create_dir(&data).unwrap();
    let script = d.join("w.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let trace = d.join("t.ds");
    record(&trace, &["python3", s(&script), s(&data)]);

    let only = format!("path ~ \"{}/**\"", s(&data));
    let o = run(&["export", s(&trace), "--format", "fio-iolog", "--where", &only]);
    let log = ok(&o);
    let f = format!("{}/f", s(&data));
    let l = format!("{}/log", s(&data));
    let want: Vec<String> = [
        format!("{f} add"),
        format!("{f} open"),
        format!("{f} write 0 4096"),
        format!("{f} write 4096 4096"),
        format!("{f} write 16384 4096"),
        format!("{f} write 8192 1000"),
        format!("{f} read 0 8192"),
        format!("{f} read 16384 4096"),
        // The dup shares the position (8192 after the read through the other descriptor);
        // the read returns what is left up to the end of the file.
        format!("{f} read 8192 12288"),
        format!("{f} sync 0 0"),
        format!("{f} datasync 0 0"),
        format!("{f} close"),
        format!("{l} add"),
        format!("{l} open"),
        format!("{l} write 0 300"),
        format!("{l} write 300 200"),
        format!("{l} close"),
    ]
    .into();
    assert_eq!(body(&log), want, "{log}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("exported 3 reads (24576 bytes), 6 writes (13788 bytes), 1 syncs, 1 datasyncs on 2 files"),
        "{err}"
    );
    assert!(err.contains("not matching --where"), "{err}");

    // Replay with fio beneath a scratch root.
    let root = d.join("root");
    let iolog = d.join("t.iolog");
    ok(&run(&[
        "export",
        s(&trace),
        "-f",
        "fio-iolog",
        "--where",
        &only,
        "--prefix",
        s(&root),
        "-o",
        s(&iolog),
    ]));
    let text = std::fs::read_to_string(&iolog).unwrap();
    assert!(text.lines().skip(1).all(|l| l.contains(&format!(" {}/", s(&root)))), "{text}");
    let fio = Command::new("fio")
        .args(["--name=replay", "--ioengine=psync", "--output-format=json"])
        .arg(format!("--read_iolog={}", s(&iolog)))
        .output()
        .unwrap();
    assert!(fio.status.success(), "fio: {}", String::from_utf8_lossy(&fio.stderr));
    let j: Value = serde_json::from_slice(&fio.stdout).expect("fio's JSON");
    let job = &j["jobs"][0];
    assert_eq!(job["error"], 0, "{job}");
    assert_eq!(job["read"]["total_ios"], 3, "{job}");
    assert_eq!(job["read"]["io_bytes"], 24576, "{job}");
    assert_eq!(job["write"]["total_ios"], 6, "{job}");
    assert_eq!(job["write"]["io_bytes"], 13788, "{job}");
    // fio counts fsyncs in total_ios and both kinds in the latency samples.
    assert_eq!(job["sync"]["total_ios"], 1, "{job}");
    assert_eq!(job["sync"]["lat_ns"]["N"], 2, "{job}");
    let replayed = root.join(data.strip_prefix("/").unwrap());
    assert_eq!(std::fs::metadata(replayed.join("f")).unwrap().len(), 20480);
    assert_eq!(std::fs::metadata(replayed.join("log")).unwrap().len(), 500);
}

/// A whole program's log, libraries and all, as the README's tour exports it: the files it
/// reads are laid out beneath the prefix at the size its reads need, so fio replays every
/// read (before: fio created them empty and failed with EIO on the first).
#[test]
fn a_whole_programs_log_replays_in_fio_with_its_reads_laid_out() {
    if !ra_testkit::have_program("fio") {
        eprintln!("skip: needs fio");
        return;
    }
    let d = scratch("layout");
    let trace = d.join("t.ds");
    std::fs::write(d.join("in.txt"), vec![b'x'; 10000]).unwrap();
    record(&trace, &["cat", s(&d.join("in.txt"))]);
    let root = d.join("scratch");
    let iolog = d.join("t.iolog");
    let o = run(&["export", s(&trace), "-f", "fio-iolog", "--prefix", s(&root), "-o", s(&iolog)]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("laid out"), "{err}");
    let text = std::fs::read_to_string(&iolog).unwrap();
    let reads = text.lines().filter(|l| l.contains(" read ")).count();
    let read_bytes: u64 = text
        .lines()
        .filter(|l| l.contains(" read "))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(reads >= 2, "the loader's reads of libc and cat's of in.txt: {text}");
    let laid = root.join(d.join("in.txt").strip_prefix("/").unwrap());
    assert_eq!(std::fs::metadata(&laid).unwrap().len(), 10000);
    let fio = Command::new("fio")
        .args(["--name=replay", "--ioengine=psync", "--output-format=json"])
        .arg(format!("--read_iolog={}", s(&iolog)))
        .output()
        .unwrap();
    assert!(fio.status.success(), "fio: {}", String::from_utf8_lossy(&fio.stderr));
    let j: Value = serde_json::from_slice(&fio.stdout).expect("fio's JSON");
    let job = &j["jobs"][0];
    assert_eq!(job["error"], 0, "{job}");
    assert_eq!(job["read"]["total_ios"], reads, "{job}");
    assert_eq!(job["read"]["io_bytes"], read_bytes, "{job}");
    // A second export into the same prefix leaves the laid-out files as they are.
    let o = run(&["export", s(&trace), "-f", "fio-iolog", "--prefix", s(&root), "-o", s(&iolog)]);
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("laid out"));
}

/// dd: reads from /dev/zero (not a file: left out), writes after a seek.
#[test]
fn dd_seeks_and_special_files() {
    let d = scratch("dd");
    let trace = d.join("t.ds");
    let out = d.join("g");
    record(
        &trace,
        &["dd", "if=/dev/zero", &format!("of={}", s(&out)), "bs=4096", "count=3", "seek=2"],
    );
    let o = run(&["export", s(&trace), "--format", "fio-iolog"]);
    let log = ok(&o);
    let g = s(&out);
    let mine: Vec<String> = body(&log).into_iter().filter(|l| l.starts_with(g)).collect();
    assert_eq!(
        mine,
        vec![
            format!("{g} add"),
            format!("{g} open"),
            format!("{g} write 8192 4096"),
            format!("{g} write 12288 4096"),
            format!("{g} write 16384 4096"),
            format!("{g} close"),
        ],
        "{log}"
    );
    assert!(!log.contains("/dev/zero"), "{log}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("on non-file descriptors"), "{err}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let d = scratch("bad");
    let text = d.join("t.txt");
    std::fs::write(&text, "not a trace at all").unwrap();
    ra_testkit::assert_clean_failure(&run(&["export", s(&text), "--format", "fio-iolog"]));
    ra_testkit::assert_clean_failure(&run(&[
        "export",
        s(&d.join("missing.ds")),
        "--format",
        "fio-iolog",
    ]));
    // An unknown format is a usage error (clap's message, exit status 2).
    let o = run(&["export", s(&text), "--format", "blktrace"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("invalid value 'blktrace'") && err.contains("fio-iolog"), "{err}");
    let trace = d.join("t.ds");
    record(&trace, &["true"]);
    let e = ra_testkit::assert_clean_failure(&run(&[
        "export",
        s(&trace),
        "--format",
        "fio-iolog",
        "--where",
        "nosuchfield == 1",
    ]));
    assert!(e.contains("--where"), "{e}");
}
