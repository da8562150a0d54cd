//! Names the kernel never read: a `memfd_create` name in a page nothing had touched, in a call
//! the kernel refused before reading it, is captured by both recorders; a name that was not
//! captured is never replayed (`memfdname`; issue 39, item 10).

mod common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use ra_testkit::{backend, both_backends};
use ra_trace::{ArgValue, Event, TraceReader};
use serde_json::Value;

use common::bin;

both_backends!(a_memfd_name_the_kernel_never_read_is_captured);

/// One recording in its own directory (`work/` is the command's cwd and snapshot).
struct Case {
    base: PathBuf,
    work: PathBuf,
    trace: PathBuf,
}

/// What a replay gave.
struct Replayed {
    code: Option<i32>,
    report: Value,
    stderr: String,
}

impl Replayed {
    fn mismatches(&self) -> u64 {
        self.report["mismatch_total"].as_u64().unwrap_or(u64::MAX)
    }
    fn warnings(&self) -> Vec<String> {
        self.report["warnings"].as_object().map_or_else(Vec::new, |m| m.keys().cloned().collect())
    }
    fn calls(&self, name: &str, what: &str) -> u64 {
        self.report["per_call"][name][what].as_u64().unwrap_or(0)
    }
    fn show(&self) -> String {
        format!(
            "exit {:?}\n{}\nstderr: {}",
            self.code,
            serde_json::to_string_pretty(&self.report).unwrap_or_default(),
            self.stderr
        )
    }
}

impl Case {
    fn new(name: &str) -> Case {
        let base = ra_testkit::case_dir("mmap", name);
        Case { work: base.join("work"), trace: base.join("t.ds"), base }
    }

    /// Record `cmd` (run in `work/`) with this test's backend, `extra` record options and a
    /// snapshot of `work/` (`snapshot`); returns what the command printed on stdout.
    fn record(&self, extra: &[&str], snapshot: bool, cmd: &[&std::ffi::OsStr]) -> String {
        let mut c = bin();
        c.args(["record", "-q", "--backend", backend(), "-o"]).arg(&self.trace).args(extra);
        if snapshot {
            c.arg("--snapshot").arg(&self.work);
        }
        let o = c.arg("--").args(cmd).current_dir(&self.work).stdin(Stdio::null()).output();
        let o = o.unwrap();
        assert!(o.status.success(), "record {cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    }

    fn events(&self, names: &[&str]) -> Vec<Event> {
        let r = TraceReader::open(&self.trace).unwrap();
        let v: Vec<Event> = r.events(Some(names)).map(|e| e.unwrap()).collect();
        v
    }

    /// `replay --init` into a fresh root (with `extra`), killed (and the test failed) after a
    /// minute.
    fn replay(&self, extra: &[&str]) -> Replayed {
        let root = self.base.join("root");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let report = self.base.join("report.json");
        let _ = std::fs::remove_file(&report);
        let child = bin()
            .arg("replay")
            .arg(&self.trace)
            .arg("--root")
            .arg(&root)
            .args(["--init", "-q", "--report"])
            .arg(&report)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_output(child, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        let code = o.status.code();
        let report = std::fs::read(&report)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_else(|| panic!("no replay report (exit {code:?}): {stderr}"));
        Replayed { code, report, stderr }
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for inspection", self.base.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.base);
        }
    }
}

/// The child's output, or a panic (after killing it) when it runs longer than `limit`.
fn wait_output(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let t0 = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// memfdname calls memfd_create with a name in a page nothing had touched, first with a flag
/// the kernel refuses before it reads the name. Before the fix the eBPF trace held "" for it
/// (buffer not captured).
fn a_memfd_name_the_kernel_never_read_is_captured() {
    let c = Case::new("memfd");
    let p = ra_testkit::program("memfdname");
    let out = c.record(&[], false, &[p.as_os_str()]);
    let j: Value = serde_json::from_str(&out).expect("memfdname prints JSON");
    let mut name = j["name"].as_str().unwrap().as_bytes().to_vec();
    name.push(0);
    let ev = c.events(&["memfd_create"]);
    assert_eq!(ev.len(), 2, "{ev:?}");
    for e in &ev {
        assert!(!e.buffer_not_captured, "#{}: {e:?}", e.unique_id);
        assert_eq!(e.arg("name").and_then(ArgValue::as_data), Some(&name[..]), "#{}", e.unique_id);
    }
    assert_eq!((ev[0].errno, ev[1].errno), (Some(libc::EINVAL), Some(0)));
    let x = c.replay(&[]);
    assert_eq!(x.mismatches(), 0, "{}", x.show());
    assert_eq!(x.calls("memfd_create", "issued"), 2, "{}", x.show());
}

/// With `--loss drop` the eBPF recorder never stops the program, so a name it could not read
/// stays uncaptured (the trace says so); the replay then does not issue the call with a name
/// it would have to invent, and says why.
#[test]
fn a_call_whose_name_was_not_captured_is_not_replayed() {
    if !ra_testkit::ebpf_available() {
        return;
    }
    ra_testkit::set_backend("ebpf");
    let c = Case::new("memfd-drop");
    let p = ra_testkit::program("memfdname");
    c.record(&["--loss", "drop"], false, &[p.as_os_str()]);
    let ev = c.events(&["memfd_create"]);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert!(ev[0].buffer_not_captured, "the refused call's name: {:?}", ev[0]);
    let x = c.replay(&[]);
    assert_eq!(x.mismatches(), 0, "{}", x.show());
    assert_eq!(x.calls("memfd_create", "simulated"), 1, "{}", x.show());
    assert_eq!(x.calls("memfd_create", "issued"), 1, "{}", x.show());
    assert!(
        x.warnings().iter().any(|w| w.contains("memfd_create: `name` cut short")),
        "{}",
        x.show()
    );
}
