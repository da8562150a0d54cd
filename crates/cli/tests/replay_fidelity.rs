//! Replay fidelity (issue 39): calls whose replay must give exactly what the kernel gave the
//! recorded program. Each test records one mode of the testkit's `fidelity` program (see
//! `crates/testkit/c/fidelity.c`), which exits 0 only when every call answered as intended,
//! once per capture backend (`<test>::ptrace`, `<test>::ebpf`), in a fresh directory without
//! `--snapshot`, replays it with `--init` into an empty root, and requires every verified call
//! to match and the calls the finding is about to have been issued (not simulated, which would
//! hide them). Each trace is also compiled into a plan, whose replay must match the same way.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use ra_testkit::{backend, both_backends, privileged, scratch_dir};
use serde_json::Value;

use common::bin;

both_backends!(
    flags_and_sizes_fail_before_any_lookup_as_the_kernel_fails_them,
    modes_and_flags_reach_the_kernel_as_the_program_passed_them,
    xattr_size_queries_and_the_three_list_calls_are_issued_and_verified,
    pages_read_through_a_mapping_are_evidence_of_the_initial_content,
    record_locks_beyond_32_bits_replay_at_their_offsets,
    out_of_range_fractions_of_a_second_replay_as_invalid,
    a_tree_deeper_than_path_max_replays_beneath_its_directories,
    overlapping_calls_on_one_directory_replay_in_the_order_their_results_show,
);

/// One recording of `fidelity MODE ARGS` in its own directory.
struct Case {
    base: PathBuf,
    work: PathBuf,
    trace: PathBuf,
}

impl Case {
    /// A fresh case directory; `setup` prepares the work directory before the recording.
    fn record(name: &str, args: &[&str], setup: impl FnOnce(&Path)) -> Case {
        let base = ra_testkit::case_dir("fidelity", name);
        let c = Case { work: base.join("work"), trace: base.join("t.ds"), base };
        setup(&c.work);
        let o = bin()
            .args(["record", "-q", "--backend", backend(), "-o"])
            .arg(&c.trace)
            .arg("--")
            .arg(ra_testkit::program("fidelity"))
            .args(args)
            .current_dir(&c.work)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "record fidelity {args:?} (it says which call answered otherwise): {}",
            String::from_utf8_lossy(&o.stderr)
        );
        c
    }

    /// Replay `trace` (a trace or a plan) into the fresh root `name` with `--init`.
    fn replay(&self, trace: &Path, name: &str) -> Replayed {
        let root = self.base.join(name);
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let log = self.base.join(format!("{name}.log"));
        let o = bin()
            .arg("replay")
            .arg(trace)
            .arg("--root")
            .arg(&root)
            .args(["--init", "--json", "-v", "--log"])
            .arg(&log)
            .output()
            .unwrap();
        let report = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "replay report ({e}): {}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        });
        Replayed { code: o.status.code(), report, log }
    }

    /// Replay the trace, and its compiled plan, into fresh roots: every verified call must
    /// match in both, with the same counts per call. The trace's replay.
    fn replay_clean(&self) -> Replayed {
        let from_trace = self.replay(&self.trace, "root");
        from_trace.assert_clean();
        let plan = self.base.join("t.plan");
        let o = bin().arg("compile").arg(&self.trace).arg("-o").arg(&plan).arg("-q").output();
        let o = o.unwrap();
        assert!(o.status.success(), "compile: {}", String::from_utf8_lossy(&o.stderr));
        let from_plan = self.replay(&plan, "plan-root");
        from_plan.assert_clean();
        assert_eq!(from_plan.report["per_call"], from_trace.report["per_call"], "plan vs trace");
        from_trace
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

/// What one replay gave.
struct Replayed {
    code: Option<i32>,
    report: Value,
    log: PathBuf,
}

impl Replayed {
    fn show(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().take(80).collect();
        format!(
            "exit {:?}\n{}\nlog:\n{}",
            self.code,
            serde_json::to_string_pretty(&self.report).unwrap_or_default(),
            tail.join("\n")
        )
    }
    /// Every verified call matched; exit 0.
    fn assert_clean(&self) {
        assert_eq!(self.report["mismatch_total"], 0, "{}", self.show());
        assert_eq!(self.report["totals"]["mismatched"], 0, "{}", self.show());
        assert_eq!(self.code, Some(0), "{}", self.show());
    }
    /// How many calls `name` were replayed as `what` (`issued`, `simulated`, ...).
    fn calls(&self, name: &str, what: &str) -> u64 {
        self.report["per_call"][name][what].as_u64().unwrap_or(0)
    }
    /// Every call `name` was issued: at least `min` of them, none simulated or skipped.
    fn assert_issued(&self, name: &str, min: u64) {
        let issued = self.calls(name, "issued");
        assert!(issued >= min, "{name}: {issued} issued, want {min}: {}", self.show());
        for what in ["simulated", "skipped"] {
            assert_eq!(self.calls(name, what), 0, "{name} {what}: {}", self.show());
        }
    }
}

/// Item 7. Bad flags, names and sizes together with missing paths and bad descriptors: the
/// kernel refuses the flags or sizes first (`linkat`'s flags; `statx`'s mask, sync type and
/// flags, but a descriptor's lookup before the flags for an empty path; the xattr calls'
/// flags, names and sizes; `memfd_create`'s flags before its name). Replayed in another order
/// they gave `ENOENT`/`EBADF`/`EFAULT`, and `--init` took the calls that failed with `ERANGE`
/// for a bad name as evidence that their path existed.
fn flags_and_sizes_fail_before_any_lookup_as_the_kernel_fails_them() {
    let c = Case::record("flags", &["flags"], |_| {});
    let r = c.replay_clean();
    for (call, n) in [
        ("linkat", 3),
        ("statx", 6),
        ("setxattr", 2),
        ("lsetxattr", 1),
        ("fsetxattr", 2),
        ("getxattr", 2),
        ("lgetxattr", 1),
        ("fgetxattr", 2),
        ("removexattr", 1),
        ("lremovexattr", 1),
        ("fremovexattr", 1),
        ("listxattr", 1),
        ("flistxattr", 1),
        ("memfd_create", 3),
    ] {
        r.assert_issued(call, n);
    }
}

/// Item 8. `mknod` with mode 0 and `mknodat` with permission bits only make regular files
/// (the replay had turned the missing type into an invalid one: `EINVAL`); `O_TMPFILE` with
/// access mode 3 is accepted (the kernel counts it as writing), and its descriptor neither
/// reads nor writes.
fn modes_and_flags_reach_the_kernel_as_the_program_passed_them() {
    let c = Case::record("create", &["create"], |_| {});
    let r = c.replay_clean();
    r.assert_issued("mknodat", 3);
    r.assert_issued("openat", 3);
    r.assert_issued("write", 2);
}

/// Item 11. `getxattr`, `fgetxattr`, `listxattr` and `flistxattr` with size 0 return the
/// size of the value or list (the replay returned 0); `listxattr`, `llistxattr` and
/// `flistxattr` are issued and their names verified (a name-trimming bug had made them
/// simulated).
fn xattr_size_queries_and_the_three_list_calls_are_issued_and_verified() {
    let c = Case::record("xattr", &["xattr"], |_| {});
    let r = c.replay_clean();
    for (call, n) in [
        ("getxattr", 3),
        ("lgetxattr", 1),
        ("fgetxattr", 2),
        ("listxattr", 3),
        ("llistxattr", 3),
        ("flistxattr", 4),
    ] {
        r.assert_issued(call, n);
    }
}

/// Item 13. A file the program only reads through a shared mapping (16 pages and 1,000
/// bytes, never read with read(2), recorded without `--snapshot`): under eBPF its page records
/// hold its content, which `--init` restores (it had made the file of holes, and each of the
/// 17 `mmappread`s mismatched); the last page's zeros past the end do not extend it. Under
/// ptrace there are no page records and nothing to restore, and the replay matches as well.
fn pages_read_through_a_mapping_are_evidence_of_the_initial_content() {
    let len = 16 * 4096 + 1000;
    let content: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096 * 13) as u8 | 1).collect();
    let c = Case::record("mmap", &["mmap", "data"], |w| {
        // Written back, so that the program can drop it from the page cache.
        let mut f = std::fs::File::create(w.join("data")).unwrap();
        std::io::Write::write_all(&mut f, &content).unwrap();
        f.sync_all().unwrap();
    });
    let r = c.replay_clean();
    if backend() == "ebpf" {
        r.assert_issued("mmappread", 17);
        let root = c.base.join("root");
        let replayed = std::fs::read(root.join(c.work.strip_prefix("/").unwrap()).join("data"));
        assert!(replayed.unwrap() == content, "the restored file is the recorded one");
    }
}

/// What `dump --format jsonl` shows at JSON pointer `at` of each of the trace's `call`s.
fn dumped(trace: &Path, call: &str, at: &str) -> Vec<Value> {
    let o = bin()
        .arg("dump")
        .arg(trace)
        .args(["--format", "jsonl", "--where"])
        .arg(format!("call == {call}"))
        .output()
        .unwrap();
    assert!(o.status.success(), "dump: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap().pointer(at).cloned().unwrap_or_default())
        .collect()
}

/// Item 9. A parent's record locks at 5 GiB (3 GiB long), from 40 GiB to the end, and an OFD
/// lock at 6 GiB, which a forked child's locks below and between them miss and inside them
/// meet: Re-Animator's int32 `lock_start`/`lock_length` hold none of these values (null), and
/// the replay locked from 0 instead, so the child's locks below them were refused (`EAGAIN`
/// for 0) and its `F_GETLK` below them found a lock. Both recorders write `lock_start64` and
/// `lock_length64` (trace schema 3), which the replay uses.
fn record_locks_beyond_32_bits_replay_at_their_offsets() {
    let c = Case::record("locks", &["locks"], |_| {});
    let starts = dumped(&c.trace, "fcntl", "/extra/lock_start64");
    assert!(starts.contains(&Value::from(5i64 << 32)), "lock_start64 holds 5 GiB: {starts:?}");
    let old = dumped(&c.trace, "fcntl", "/extra/lock_start");
    assert!(!old.contains(&Value::from(5i64 << 32)), "Re-Animator's int32 column: {old:?}");
    let r = c.replay_clean();
    r.assert_issued("fcntl", 12);
}

/// Item 9. `utimes` with `tv_usec` = 1,000,000 or -1, `futimesat` and `utimensat` with
/// `tv_nsec` = 10^9 or -5: `EINVAL`. Re-Animator's nanosecond columns (`access_time`,
/// `mod_time`) fold such a fraction into the seconds, and the call replayed as a valid one
/// (0); `times_raw` (trace schema 3) holds the struct as the program passed it.
fn out_of_range_fractions_of_a_second_replay_as_invalid() {
    let c = Case::record("times", &["times"], |_| {});
    // The struct as passed: 1,000,000 µs (0x0f4240) after the 8 bytes of tv_sec.
    let times = dumped(&c.trace, "utimes", "/args/times/hex");
    let usec = |t: &Value| t.as_str().and_then(|h| h.get(16..32)).map(str::to_string);
    let kept = times.iter().filter_map(usec).any(|u| u == "40420f0000000000");
    assert!(kept, "utimes' times as the program passed them: {times:?}");
    let r = c.replay_clean();
    r.assert_issued("utimes", 3);
    r.assert_issued("futimesat", 2);
    r.assert_issued("utimensat", 4);
}

/// Item 12. A parent and its child race 300 rounds on one directory: the child makes and
/// removes a subdirectory and a file, the parent stats the directory (its link count), looks
/// the names up and lists it. Under ptrace a call's recorded interval is long, many overlap,
/// and the replay ran overlapping calls in the order they were called (or at once), which
/// their recorded results often contradict (177 of 3,634 calls mismatched in one recording:
/// link counts, listings, `ENOENT`s). The planner now orders overlapping calls on one
/// directory as their results show. (Under eBPF the intervals are short and the calls kept
/// their order before too.)
fn overlapping_calls_on_one_directory_replay_in_the_order_their_results_show() {
    let c = Case::record("race", &["race", "300"], |_| {});
    let r = c.replay_clean();
    for (call, n) in [("mkdir", 301), ("rmdir", 300), ("unlink", 300), ("getdents64", 600)] {
        r.assert_issued(call, n);
    }
    r.assert_issued("fstatat", 301);
    r.assert_issued("access", 600);
}

/// Item 16, a system-call trace: 50 directories of 100-byte names (5 KB deep) made and
/// entered with `mkdirat`/`openat` relative to the last, a file written, read and removed at
/// the bottom, the tree removed again. Each call names a short path, but its directory's path
/// is longer than `PATH_MAX`, which `/proc/self/fd` cannot show and `openat2` does not take:
/// the replay failed `ENAMETOOLONG` from the 40th level and simulated the rest.
fn a_tree_deeper_than_path_max_replays_beneath_its_directories() {
    let c = Case::record("deep", &["deep", "50"], |_| {});
    let r = c.replay_clean();
    r.assert_issued("mkdirat", 50);
    r.assert_issued("openat", 52);
    r.assert_issued("unlinkat", 51);
    r.assert_issued("read", 1);
}

/// Item 16, a file-system trace: the same tree made on a `reanimator fs` mount (root),
/// whose trace names every file by its whole path from the mount (up to 5 KB), replayed into
/// an empty root: every operation issued and matched (113 failed `ENAMETOOLONG` before), and
/// the replayed tree equals the lower directory's.
#[test]
fn a_file_system_trace_of_a_tree_deeper_than_path_max_replays() {
    let ok = if rustix::process::geteuid().is_root() && Path::new("/dev/fuse").exists() {
        Ok(())
    } else {
        Err("needs root and /dev/fuse".to_string())
    };
    if !privileged("reanimator fs", ok) {
        return;
    }
    let d = scratch_dir("fidelity-fs-deep");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace);
    let o = std::process::Command::new(ra_testkit::program("fidelity"))
        .args(["deep", "50", "keep"])
        .current_dir(&m.mnt)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fidelity deep on the mount: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    m.finish();
    let c = Case { base: d.clone(), work: d.join("mnt"), trace };
    let r = c.replay_clean();
    r.assert_issued("mkdirat", 50);
    let replayed = d.join("root").join(c.work.canonicalize().unwrap().strip_prefix("/").unwrap());
    let diff = bin().arg("diff").arg(&lower).arg(&replayed).output().unwrap();
    assert!(
        diff.status.success(),
        "lower vs replayed: {}{}",
        String::from_utf8_lossy(&diff.stdout),
        String::from_utf8_lossy(&diff.stderr)
    );
}

/// A `reanimator fs` mount of `lower` at `mnt`, tracing into `trace`; unmounted when dropped.
struct Mount {
    child: Option<Child>,
    mnt: PathBuf,
}

impl Mount {
    fn start(lower: &Path, mnt: &Path, trace: &Path) -> Mount {
        std::fs::create_dir_all(lower).unwrap();
        std::fs::create_dir_all(mnt).unwrap();
        let child = bin()
            .args(["fs", "mount"])
            .arg(lower)
            .arg(mnt)
            .arg("-o")
            .arg(trace)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start reanimator fs");
        let mut m = Mount { mnt: mnt.canonicalize().unwrap(), child: Some(child) };
        let want = format!("reanimator:{}", m.child.as_ref().unwrap().id());
        let mounted = |mnt: &Path| {
            std::fs::read_to_string("/proc/self/mountinfo")
                .unwrap_or_default()
                .lines()
                .any(|l| l.split(' ').nth(4) == mnt.to_str() && l.contains(&want))
        };
        let t0 = Instant::now();
        while !mounted(&m.mnt) {
            if let Some(st) = m.child.as_mut().unwrap().try_wait().unwrap() {
                let out = m.child.take().unwrap().wait_with_output().unwrap();
                panic!("fs mount exited ({st}): {}", String::from_utf8_lossy(&out.stderr));
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "mount did not come up in 10 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        m
    }

    /// `fs umount`; the daemon must finish its trace.
    fn finish(mut self) {
        let out = bin().args(["fs", "umount"]).arg(&self.mnt).output().unwrap();
        assert!(out.status.success(), "fs umount: {}", String::from_utf8_lossy(&out.stderr));
        let out = self.child.take().unwrap().wait_with_output().unwrap();
        assert!(out.status.success(), "fs daemon: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = bin().args(["fs", "umount", "--force"]).arg(&self.mnt).output();
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
