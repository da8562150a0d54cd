//! The recorder at its limits, with both backends (`<test>::ptrace`, `<test>::ebpf`):
//! - a trace disk that fills up (ENOSPC) stops the recording with one error naming the cause
//!   and the trace, lets the command run on to its end, and leaves the trace readable up to
//!   its last complete extent (needs root for a small tmpfs: skips with a printed reason
//!   otherwise, fails instead under REANIMATOR_REQUIRE_PRIVILEGED=1);
//! - recording a large write keeps the recorder's memory bounded (its queues count bytes, not
//!   events);
//! - a single buffer larger than a trace record holds (256 MiB) is kept as its length and
//!   BLAKE3 digest, and the recording goes on.

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use ra_testkit::{backend, both_backends};
use ra_trace::TraceReader;

use common::bin;

both_backends!(
    a_full_trace_disk_stops_the_recording_and_the_command_runs_to_its_end,
    recording_a_large_write_keeps_the_recorder_under_256_mb,
    a_buffer_larger_than_a_record_holds_is_kept_as_its_digest,
);

/// A tmpfs of `size` mounted on `dir`, unmounted when dropped (also when the test fails).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let target = CString::new(dir.as_os_str().as_bytes()).unwrap();
        let opts = CString::new(format!("size={size}")).unwrap();
        // SAFETY: NUL-terminated strings that outlive the call.
        let r = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                opts.as_ptr().cast(),
            )
        };
        if r != 0 {
            return Err(format!("mounting a tmpfs: {}", std::io::Error::last_os_error()));
        }
        Ok(Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let target = CString::new(self.0.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        if unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) } != 0 {
            eprintln!("umount {}: {}", self.0.display(), std::io::Error::last_os_error());
        }
    }
}

fn a_full_trace_disk_stops_the_recording_and_the_command_runs_to_its_end() {
    // SAFETY: geteuid takes no arguments.
    let root = if unsafe { libc::geteuid() } == 0 {
        Ok(())
    } else {
        Err("mounting a small tmpfs needs root".to_string())
    };
    if !ra_testkit::privileged("a full trace disk", root) {
        return;
    }
    let base = ra_testkit::case_dir("limits", "enospc");
    let mnt = base.join("mnt");
    let fs = Tmpfs::mount(&mnt, "8m").unwrap();
    let trace = mnt.join("t.ds");
    let out = base.join("work/out");
    // 250 MiB written (and as much read) through a trace disk of 8 MiB (uncompressed: lz4,
    // the default, would store these zeros in a few MB).
    let o = bin()
        .args(["record", "--backend", backend(), "--compress", "none", "-o"])
        .arg(&trace)
        .args(["--", "dd", "if=/dev/zero", "bs=64k", "count=4000"])
        .arg(format!("of={}", out.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // One line of ours: the cause (ENOSPC), the trace, what became of the command.
    let ours: Vec<&str> = stderr.lines().filter(|l| l.starts_with("reanimator:")).collect();
    assert_eq!(ours.len(), 1, "{stderr}");
    let line = ours[0];
    assert!(line.starts_with("reanimator: error: "), "{line}");
    for part in [
        format!("cannot write the trace {}", trace.display()),
        "No space left on device".into(),
        "`dd` ran on unrecorded to its end (exit status 0)".into(),
        "the trace holds what was written before (unfinished)".into(),
    ] {
        assert!(line.contains(&part), "{part:?} not in: {line}");
    }
    // The command was neither killed nor cut short.
    assert!(stderr.contains("4000+0 records out"), "{stderr}");
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 4000 * 65536);
    // The trace reads up to its last complete extent, and says it is unfinished.
    let info = bin().arg("info").arg(&trace).output().unwrap();
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
    assert!(text.contains("unfinished"), "{text}");
    let r = TraceReader::open(&trace).unwrap();
    assert!(r.cut_tail().is_some());
    assert_eq!(r.info_value("backend"), Some(backend().as_bytes()));
    let events: Vec<_> = r.events(None).collect::<Result<_, _>>().unwrap();
    assert!(events.iter().all(|e| e.def.is_some()));
    drop(fs);
    let _ = std::fs::remove_dir_all(&base);
}

/// Record `dd` writing 1 GiB in 1 MiB blocks; the recorder's peak RSS (wait4) stays under
/// 256 MB. Before its queues were bounded in bytes it held thousands of 1 MiB events (GBs).
fn recording_a_large_write_keeps_the_recorder_under_256_mb() {
    let base = ra_testkit::case_dir("limits", "bigwrite");
    let trace = base.join("t.ds");
    let out = base.join("work/out");
    let mut cmd = bin();
    cmd.args(["record", "-q", "--backend", backend(), "--syscalls", "write", "-o"]).arg(&trace);
    if backend() == "ebpf" {
        // The ring's pages are mapped into the recorder twice: 2 x --ring-size of RSS from
        // the start, however much is recorded (128 MiB for the default 64M). A small ring
        // leaves what this test is about, memory that grows with the data.
        cmd.args(["--ring-size", "16M"]);
    }
    let child = cmd
        .args(["--", "dd", "if=/dev/zero", "bs=1M", "count=1024"])
        .arg(format!("of={}", out.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (status, max_rss_kb) = ra_testkit::wait_with_peak_rss(child, Duration::from_secs(300))
        .expect("the recording still runs after 300 s");
    let events = TraceReader::open(&trace).map(|r| r.events(None).count());
    let _ = std::fs::remove_dir_all(&base);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "status {status:#x}");
    // 1024 writes of 1 MiB (and dd's final messages, which go to /dev/null).
    assert!(events.unwrap() >= 1024);
    assert!(
        max_rss_kb < 256 * 1000,
        "the recorder's peak RSS was {} MB recording 1 GiB of writes",
        max_rss_kb / 1000
    );
}

/// `dd bs=300M count=1`: one read and one write of 300 MiB, more than a trace record holds
/// (256 MiB). Each is kept as its length and BLAKE3 digest, the recording goes on to its end,
/// the trace's info counts them, and a replay says that the written bytes were not in the
/// trace. Before, the writer refused the record and the recording stopped there (Python's
/// test_largefile found it with a 2 GiB copy's read-back data, which is now not read back).
fn a_buffer_larger_than_a_record_holds_is_kept_as_its_digest() {
    let base = ra_testkit::case_dir("limits", "digest");
    let trace = base.join("t.ds");
    let out = base.join("work/out");
    std::fs::create_dir_all(base.join("work")).unwrap();
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "--syscalls", "read,write", "-o"])
        .arg(&trace)
        .args(["--", "dd", "if=/dev/zero", "bs=300M", "count=1", "status=none"])
        .arg(format!("of={}", out.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("BLAKE3 digest"), "the recorder says so: {err}");
    let r = TraceReader::open(&trace).unwrap();
    let info = r.info_value("oversized_buffers").map(|v| String::from_utf8_lossy(v).into_owned());
    assert_eq!(info.as_deref(), Some("2"), "the trace's info counts the read and the write");
    let n = 300u64 << 20;
    let zeros = *blake3::hash(&vec![0u8; n as usize]).as_bytes();
    let mut seen = 0;
    for e in r.events(None).map(|e| e.unwrap()) {
        if (e.name == "read" || e.name == "write") && e.ret == Some(n as i64) {
            assert_eq!(
                e.arg("buf"),
                Some(&ra_trace::ArgValue::Hashed { len: n, blake3: zeros }),
                "{}",
                e.name
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 2, "dd's read and write of 300 MiB");
    let root = base.join("root");
    std::fs::create_dir(&root).unwrap();
    let o = bin()
        .arg("replay")
        .arg(&trace)
        .arg("--root")
        .arg(&root)
        .args(["--init", "--json"])
        .output()
        .unwrap();
    let rep: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let warned = rep["warnings"]
        .as_object()
        .unwrap()
        .keys()
        .any(|w| w.starts_with("written data not in the trace"));
    assert!(warned, "{}", rep["warnings"]);
    let _ = std::fs::remove_dir_all(&base);
}
