//! Files that hold traced data are their writer's alone: every output of every command that
//! carries what a traced program read or named is created mode 0600 (directories 0700)
//! whatever the umask, owned by the user who ran the command (docs/TRACE_FORMAT.md 11, "Who
//! can read a trace"). Each command runs under umask 000, the worst a user could have set.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ra_testkit::{have_program, privileged, scratch_dir};

use common::{bin, keygen};

/// `reanimator ARGS` under umask 000, in `cwd`; must succeed.
fn run(cwd: &Path, args: &[&str]) -> Output {
    let o = umask0(cwd, args).output().unwrap();
    assert!(
        o.status.success(),
        "reanimator {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn umask0(cwd: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("umask 000; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_reanimator"))
        .args(args)
        .current_dir(cwd);
    c
}

/// Every file beneath `p` (or `p` itself) has mode 0600 and every directory 0700, owned by
/// this process's user; returns how many files were checked.
fn assert_private(p: &Path) -> usize {
    let md = std::fs::symlink_metadata(p).unwrap();
    let me = rustix::process::geteuid().as_raw();
    assert_eq!(md.uid(), me, "{} is owned by uid {}", p.display(), md.uid());
    if md.is_dir() {
        assert_eq!(md.mode() & 0o7777, 0o700, "{}: mode {:o}", p.display(), md.mode() & 0o7777);
        std::fs::read_dir(p).unwrap().map(|e| assert_private(&e.unwrap().path())).sum()
    } else {
        assert_eq!(md.mode() & 0o7777, 0o600, "{}: mode {:o}", p.display(), md.mode() & 0o7777);
        1
    }
}

#[test]
fn every_output_that_holds_traced_data_is_mode_0600_whatever_the_umask() {
    let d = scratch_dir("private-outputs");
    let data = d.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("secret.txt"), b"the secret contents\n").unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let key = keygen(&d.join("k.key"));
    // An earlier, world-readable trace of the same name is replaced, not reused.
    std::fs::write(d.join("t.ds"), b"old").unwrap();
    std::fs::set_permissions(d.join("t.ds"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let cat = format!("cat {}", data.join("secret.txt").display());
    run(
        &d,
        &[
            "record",
            "--backend",
            "ptrace",
            "--snapshot",
            "data",
            "-o",
            "t.ds",
            "--",
            "sh",
            "-c",
            &cat,
        ],
    );
    let key = key.to_str().unwrap();
    run(&d, &["compile", "t.ds", "-o", "t.plan"]);
    run(&d, &["anonymize", "t.ds", "a.ds", "--key", key]);
    run(&d, &["export", "t.ds", "--format", "fio-iolog", "-o", "t.iolog"]);
    run(&d, &["profile", "t.ds", "--json", "-o", "p.json", "--svg", "p.svg"]);
    run(&d, &["profile", "merge", "p.json", "-o", "m.json"]);
    run(&d, &["snapshot", "data", "-o", "data.jsonl"]);
    std::fs::create_dir(d.join("r")).unwrap();
    run(
        &d,
        &["replay", "t.ds", "--root", "r", "--init", "-v", "--log", "r.log", "--report", "r.json"],
    );
    for f in [
        "t.ds",
        "t.plan",
        "a.ds",
        "t.iolog",
        "p.json",
        "p.svg",
        "m.json",
        "data.jsonl",
        "r.log",
        "r.json",
    ] {
        assert_private(&d.join(f));
    }
    // Nothing else was left beside them (no temporary or .partial file).
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    names.sort();
    assert!(names.is_empty(), "left behind: {names:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `collect`'s directory and streams, and the sender's spill file once the collector is gone.
#[test]
fn collected_streams_and_spill_files_are_private() {
    let d = scratch_dir("private-collect");
    let mut collector = umask0(&d, &["collect", "--listen", "127.0.0.1:0", "--dir", "in"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(collector.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .split_whitespace()
        .find(|w| w.starts_with("127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .trim_end_matches([',', '.', ')'])
        .to_string();
    // A recording that goes on after the collector is killed: the rest goes to the spill file.
    let dest = format!("tcp://{addr}/job");
    let rec = umask0(
        &d,
        &[
            "record",
            "--backend",
            "ptrace",
            "-o",
            &dest,
            "--spill",
            "spill.ds",
            "--",
            "sh",
            "-c",
            "cat /etc/hostname; sleep 2; cat /etc/hostname; sleep 1; cat /etc/hostname",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Wait for the stream's first line, then stop the collector.
    let t0 = Instant::now();
    let started = lines.next().unwrap().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10), "{started}");
    std::thread::sleep(Duration::from_millis(500));
    collector.kill().unwrap();
    let _ = collector.wait();
    let out = rec.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(d.join("spill.ds").exists(), "no spill file: {err}");
    assert_private(&d.join("spill.ds"));
    let n = assert_private(&d.join("in"));
    assert!(n >= 1, "no collected stream");
    let _ = std::fs::remove_dir_all(&d);
}

/// A root recording of `cat /etc/shadow`, and a tracing mount's trace and log: other users
/// cannot read them (before: 0644 under the usual umask, readable by all).
#[test]
fn what_root_records_other_users_cannot_read() {
    let root = rustix::process::geteuid().is_root();
    let ok = if root && have_program("setpriv") && Path::new("/dev/fuse").exists() {
        Ok(())
    } else {
        Err("needs root, setpriv and /dev/fuse".to_string())
    };
    if !privileged("private traces of root", ok) {
        return;
    }
    let d = scratch_dir("private-root");
    // Other users may enter the directory: only the files' modes keep them out.
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg("umask 022; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_reanimator"))
        .args(["record", "-o", "shadow.ds", "--", "cat", "/etc/shadow"])
        .current_dir(&d)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The tracing file system's trace and daemon log.
    let (lower, mnt) = (d.join("lower"), d.join("mnt"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    std::fs::write(lower.join("mine"), b"user data\n").unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg("umask 022; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_reanimator"))
        .args(["fs", "mount", "lower", "mnt", "-o", "fs.ds", "--daemon"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = std::fs::read(mnt.join("mine"));
    let u = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
    assert!(u.status.success(), "{}", String::from_utf8_lossy(&u.stderr));
    assert_eq!(read.unwrap(), b"user data\n");
    for f in ["shadow.ds", "fs.ds", "fs.log"] {
        let p: PathBuf = d.join(f);
        assert_private(&p);
        let r = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
            .arg(&p)
            .output()
            .unwrap();
        assert!(!r.status.success(), "nobody read {f}");
        assert!(String::from_utf8_lossy(&r.stderr).contains("Permission denied"), "{r:?}");
        let r = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_reanimator"))
            .arg("dump")
            .arg(&p)
            .output()
            .unwrap();
        assert!(!r.status.success(), "nobody dumped {f}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
