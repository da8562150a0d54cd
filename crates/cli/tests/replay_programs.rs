//! Record -> replay -> diff, end to end on real programs: each is recorded with `--snapshot` of
//! its working directory, once per capture backend (`<test>::ptrace`, `<test>::ebpf`; the eBPF
//! runs skip with a printed reason where eBPF cannot run, and fail instead under
//! REANIMATOR_REQUIRE_PRIVILEGED=1), replayed into an empty root with
//! `--init` (the snapshot, plus the inferred state of everything outside it), and must give
//! 100 % matched calls and a tree identical to the recorded run's (checked both by replay's own
//! final-state check against the recorded end state and by `reanimator diff` of the two trees).

mod common;

use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ra_testkit::{backend, both_backends, ebpf_available, have_program};

use common::bin;

both_backends!(
    sqlite3_inserts_replay_to_the_same_database,
    tar_x_replays_to_the_same_tree,
    git_init_add_commit_replays_to_the_same_repository,
    cp_r_replays_to_the_same_copy,
    multithreaded_writer_replays_to_the_same_files,
    fork_and_pipe_replay_through_a_real_pipe,
    a_vfork_child_s_calls_follow_the_vfork_and_replay,
    python_s_set_blocking_replays_its_nonblocking_flag,
    a_forked_child_s_fexecve_replays,
    kernel_side_copies_replay_from_a_source_the_trace_never_read,
    a_listing_of_the_root_replays_its_symlinks_as_symlinks,
    record_locks_of_parent_and_child_conflict_in_the_replay,
    a_lease_replays_as_recorded_without_signalling_the_replayer,
    a_child_killed_between_calls_closes_its_pipe_in_the_replay,
    a_pseudo_terminal_s_peer_descriptor_replays,
    a_fifo_writer_s_open_ends_when_a_reader_came_and_went,
    a_descriptor_passed_over_a_unix_socket_replays_as_the_file_it_named,
);

struct Case {
    base: PathBuf,
    /// The recorded program's working directory (snapshotted).
    work: PathBuf,
}

impl Case {
    fn new(name: &str) -> Case {
        let base = ra_testkit::case_dir("e2e", name);
        Case { work: base.join("work"), base }
    }

    /// Record `cmd` in the work directory, with its snapshot; stdin from `stdin` (a path) or
    /// nothing.
    fn record(&self, cmd: &[&OsStr], stdin: Option<&Path>, env: &[(&str, &str)]) -> PathBuf {
        self.record_with(&[], cmd, stdin, env)
    }

    /// [`Case::record`] of `python3 -c script`.
    fn record_python(&self, script: &str) -> PathBuf {
        self.record(&[os("python3"), os("-c"), os(script)], None, &[])
    }

    /// [`Case::record`] with more options for `record`.
    fn record_with(
        &self,
        opts: &[&str],
        cmd: &[&OsStr],
        stdin: Option<&Path>,
        env: &[(&str, &str)],
    ) -> PathBuf {
        let trace = self.base.join("t.ds");
        let mut c = bin();
        c.args(["record", "-q", "--backend", backend()])
            .args(opts)
            .arg("-o")
            .arg(&trace)
            .arg("--snapshot")
            .arg(&self.work)
            .arg("--")
            .args(cmd);
        c.current_dir(&self.work);
        for (k, v) in env {
            c.env(k, v);
        }
        c.stdin(match stdin {
            Some(p) => Stdio::from(File::open(p).unwrap()),
            None => Stdio::null(),
        });
        let o = c.output().unwrap();
        assert!(o.status.success(), "record {cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
        trace
    }

    /// Replay into a fresh root and check everything; then compile the trace into a plan
    /// and check the plan's replay the same way: every call verified and matched again, with
    /// the same calls replayed, issued and matched per call as from the trace.
    fn replay_and_check(&self, trace: &Path) {
        let from_trace = self.replay_with(trace, &[]);
        let plan = self.base.join("t.plan");
        let o = bin().arg("compile").arg(trace).arg("-o").arg(&plan).arg("-q").output().unwrap();
        assert!(o.status.success(), "compile: {}", String::from_utf8_lossy(&o.stderr));
        let from_plan = self.replay_with(&plan, &[]);
        for k in ["per_call", "threads", "processes", "unknown_calls", "totals"] {
            assert_eq!(from_plan[k], from_trace[k], "{k}: the plan's replay and the trace's");
        }
        assert_eq!(from_plan["final_state"], from_trace["final_state"]);
    }

    /// Replay into a fresh root (`--init`) with extra options: the report and the output,
    /// unchecked.
    fn replay_report(&self, trace: &Path, extra: &[&str]) -> (serde_json::Value, Output) {
        let root = self.base.join("root");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let log = self.base.join("replay.log");
        let log = log.to_str().expect("scratch paths are UTF-8");
        let args: Vec<&str> =
            ["-v", "--log", log].into_iter().chain(extra.iter().copied()).collect();
        common::replay_json(trace, &root, &args)
    }

    /// Replay into a fresh root with extra options and check everything; returns the report.
    fn replay_with(&self, trace: &Path, extra: &[&str]) -> serde_json::Value {
        let (r, o) = self.replay_report(trace, extra);
        let root = self.base.join("root");
        let log = self.base.join("replay.log");
        let show = || {
            format!(
                "{}\nlog:\n{}",
                serde_json::to_string_pretty(&r).unwrap(),
                std::fs::read_to_string(&log)
                    .unwrap_or_default()
                    .lines()
                    .take(60)
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        };
        assert_eq!(r["mismatch_total"], 0, "every verified call matches: {}", show());
        let t = &r["totals"];
        assert!(t["issued"].as_u64().unwrap() > 0);
        assert_eq!(t["mismatched"], 0);
        let fs = r["final_state"].as_array().unwrap();
        assert_eq!(fs.len(), 1, "{}", show());
        assert_eq!(fs[0]["differences"], 0, "final state: {}", show());
        assert_eq!(o.status.code(), Some(0), "{}", show());
        // And the independent check: the replayed tree against the recorded run's tree.
        let replayed = root.join(self.work.strip_prefix("/").unwrap());
        let d = bin().arg("diff").arg(&self.work).arg(&replayed).output().unwrap();
        assert_eq!(
            d.status.code(),
            Some(0),
            "reanimator diff: {}{}",
            String::from_utf8_lossy(&d.stdout),
            String::from_utf8_lossy(&d.stderr)
        );
        r
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

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

fn content(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A small tree: nested directories, files of several sizes (one empty), a symlink.
fn make_tree(dir: &Path) {
    std::fs::create_dir_all(dir.join("a/b/c")).unwrap();
    std::fs::create_dir_all(dir.join("d")).unwrap();
    for (i, (p, n)) in [
        ("a/one", 10),
        ("a/b/two", 70_000),
        ("a/b/c/three", 300_000),
        ("d/empty", 0),
        ("top", 4096),
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(dir.join(p), content(i as u64 + 1, *n)).unwrap();
    }
    std::os::unix::fs::symlink("a/one", dir.join("link")).unwrap();
}

fn sqlite3_inserts_replay_to_the_same_database() {
    if !have_program("sqlite3") {
        return;
    }
    let c = Case::new("sqlite");
    let sql = c.base.join("ins.sql");
    let mut s = String::from("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);\n");
    for t in 0..40 {
        s.push_str("BEGIN;\n");
        for i in 0..50 {
            s.push_str(&format!(
                "INSERT INTO t VALUES({}, '{}');\n",
                t * 50 + i,
                "v".repeat(100 + i)
            ));
        }
        s.push_str("COMMIT;\n");
    }
    std::fs::write(&sql, s).unwrap();
    let trace = c.record(&[os("sqlite3"), os("db.sqlite")], Some(&sql), &[]);
    c.replay_and_check(&trace);
}

fn tar_x_replays_to_the_same_tree() {
    if !have_program("tar") {
        return;
    }
    let c = Case::new("tarx");
    let src = c.base.join("src");
    make_tree(&src);
    let o = Command::new("tar")
        .arg("cf")
        .arg(c.work.join("a.tar"))
        .arg("-C")
        .arg(&src)
        .arg(".")
        .output()
        .unwrap();
    assert!(o.status.success());
    let trace = c.record(&[os("tar"), os("xf"), os("a.tar")], None, &[]);
    c.replay_and_check(&trace);
}

fn git_init_add_commit_replays_to_the_same_repository() {
    if !have_program("git") {
        return;
    }
    let c = Case::new("git");
    make_tree(&c.work.join("proj"));
    let env = [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@example.invalid"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@example.invalid"),
        ("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z"),
        ("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z"),
    ];
    let trace = c.record(
        &[os("sh"), os("-c"), os("cd proj && git init -q . && git add . && git commit -qm first")],
        None,
        &env,
    );
    c.replay_and_check(&trace);
}

fn cp_r_replays_to_the_same_copy() {
    if !have_program("cp") {
        return;
    }
    let c = Case::new("cp");
    make_tree(&c.work.join("src"));
    let trace = c.record(&[os("cp"), os("-r"), os("src"), os("dst")], None, &[]);
    c.replay_and_check(&trace);
}

fn multithreaded_writer_replays_to_the_same_files() {
    let c = Case::new("mt");
    let p = ra_testkit::program("mtwriter");
    let w = c.work.clone();
    let trace = c.record(&[p.as_os_str(), w.as_os_str(), os("4"), os("32")], None, &[]);
    c.replay_and_check(&trace);
}

fn fork_and_pipe_replay_through_a_real_pipe() {
    let c = Case::new("forkpipe");
    let p = ra_testkit::program("forkpipe");
    let w = c.work.clone();
    let trace = c.record(&[p.as_os_str(), w.as_os_str()], None, &[]);
    c.replay_and_check(&trace);
}

/// I/O through shared file mappings, recorded by the eBPF backend as mmappread / mmappwrite
/// page records, replays through a real mapping and as pread/pwrite to the same files.
#[test]
fn mmap_page_records_replay_to_the_same_files() {
    if !ebpf_available() {
        return;
    }
    ra_testkit::set_backend("ebpf");
    let c = Case::new("mmapio");
    let p = ra_testkit::program("mmapio");
    let w = c.work.clone();
    let trace = c.record(&[p.as_os_str(), w.as_os_str()], None, &[]);
    for mode in ["map", "pread"] {
        let r = c.replay_with(&trace, &["--mmap", mode]);
        let calls = &r["per_call"];
        // 32 pages read, 9 written (6 before msync, 2 before munmap, 1 at exit).
        assert_eq!(calls["mmappread"]["matched"], 32, "--mmap {mode}: {calls}");
        assert_eq!(calls["mmappwrite"]["issued"], 9, "--mmap {mode}: {calls}");
    }
}

/// A vfork child writes a file and exits before its parent's vfork returns: the trace must
/// still hold the parent's vfork before every call of the child (the eBPF ring delivers it
/// after them; the recorder holds the child's events back), and the replay must match.
fn a_vfork_child_s_calls_follow_the_vfork_and_replay() {
    let c = Case::new("vfork");
    let p = ra_testkit::program("vforkio");
    let w = c.work.clone();
    let trace = c.record(&[p.as_os_str(), w.as_os_str()], None, &[]);
    let r = ra_trace::TraceReader::open(&trace).unwrap();
    let ev: Vec<_> = r.events(None).map(|e| e.unwrap()).collect();
    let vfork = ev.iter().find(|e| e.name == "vfork").expect("the vfork call is recorded");
    let child = vfork.ret.unwrap() as i32;
    let first_child = ev.iter().find(|e| e.tid == Some(child)).expect("the child's calls");
    assert!(
        vfork.unique_id < first_child.unique_id,
        "vfork #{} comes after the child's first call #{} ({})",
        vfork.unique_id,
        first_child.unique_id,
        first_child.name
    );
    let writes = ev.iter().filter(|e| e.tid == Some(child) && e.name == "write").count();
    assert_eq!(writes, 64, "the child's writes");
    c.replay_and_check(&trace);
}

/// CPython's `os.set_blocking` sets O_NONBLOCK with `ioctl(FIONBIO, &int)`, and
/// `os.get_blocking` reads it back with `fcntl(F_GETFL)`. Python's test_os found the replay
/// leaving the flag alone (ioctls were simulated and the int was not recorded): its F_GETFL
/// then returned another value than recorded.
fn python_s_set_blocking_replays_its_nonblocking_flag() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("setblocking");
    let script = "import os\n\
        fd = os.open('f', os.O_RDWR | os.O_CREAT, 0o644)\n\
        for b in (False, True, False, True):\n    \
            os.set_blocking(fd, b)\n    \
            assert os.get_blocking(fd) == b\n\
        os.close(fd)\n";
    let trace = c.record_python(script);
    let r = ra_trace::TraceReader::open(&trace).unwrap();
    let values: Vec<Vec<u8>> = r
        .events(None)
        .map(|e| e.unwrap())
        .filter(|e| e.name == "ioctl" && e.args[1].as_int() == Some(0x5421))
        .map(|e| {
            let v = e.extra.iter().find(|(n, _)| n == "ioctl_buffer");
            match v {
                Some((_, ra_trace::ExtraValue::Bytes(b))) => b.clone(),
                other => panic!("FIONBIO recorded without its int: {other:?}"),
            }
        })
        .collect();
    let ints: Vec<i32> =
        values.iter().map(|b| i32::from_le_bytes(b[..4].try_into().unwrap())).collect();
    assert_eq!(ints, [1, 0, 1, 0], "the FIONBIO values (1: non-blocking)");
    let report = c.replay_with(&trace, &[]);
    assert_eq!(report["per_call"]["ioctl"]["issued"], 4, "{}", report["per_call"]);
    c.replay_and_check(&trace);
}

/// POSIX record locks belong to a process (its descriptor table), not to an open file: a
/// forked child's lock makes its parent's `F_SETLK` on the same inherited descriptor fail, and
/// the child's `close` of any descriptor of the file drops it. A range from the file position
/// (SEEK_CUR) starts at the position of the descriptor the program used. Every replayed process lives in
/// the one replayer, where such locks never conflicted: Python's test_mailbox found the
/// parent's EAGAIN replayed as 0.
fn record_locks_of_parent_and_child_conflict_in_the_replay() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("posix-locks");
    let script = "import os, fcntl\n\
        fd = os.open('box', os.O_RDWR | os.O_CREAT, 0o644)\n\
        os.write(fd, b'mail')\n\
        r1, w1 = os.pipe()\n\
        r2, w2 = os.pipe()\n\
        pid = os.fork()\n\
        if pid == 0:\n    \
            fcntl.lockf(fd, fcntl.LOCK_EX)\n    \
            other = os.open('box', os.O_RDONLY)\n    \
            os.write(w1, b'L')\n    \
            os.read(r2, 1)\n    \
            os.close(other)\n    \
            os.write(w1, b'C')\n    \
            os.read(r2, 1)\n    \
            os._exit(0)\n\
        os.read(r1, 1)\n\
        try:\n    \
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    \
            raise SystemExit('the child held no lock')\n\
        except OSError:\n    \
            pass\n\
        os.write(w2, b'1')\n\
        os.read(r1, 1)\n\
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n\
        os.write(w2, b'2')\n\
        os.waitpid(pid, 0)\n\
        fcntl.lockf(fd, fcntl.LOCK_UN)\n\
        pid = os.fork()\n\
        if pid == 0:\n    \
            os.lseek(fd, 100, 0)\n    \
            fcntl.lockf(fd, fcntl.LOCK_EX, 8, 0, 1)\n    \
            os.write(w1, b'S')\n    \
            os.read(r2, 1)\n    \
            os._exit(0)\n\
        os.read(r1, 1)\n\
        os.lseek(fd, 0, 0)\n\
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 8, 0, 1)\n\
        os.write(w2, b'3')\n\
        os.waitpid(pid, 0)\n";
    let trace = c.record_python(script);
    let r = ra_trace::TraceReader::open(&trace).unwrap();
    let locks: Vec<(i64, Option<i32>)> = r
        .events(None)
        .map(|e| e.unwrap())
        .filter(|e| e.name == "fcntl" && e.args[1].as_int() == Some(libc::F_SETLK.into()))
        .map(|e| (e.ret.unwrap_or(0), e.errno.filter(|&n| n != 0)))
        .collect();
    // Refused while the child held its lock, then taken; and (after an unlock, F_SETLKW) 8
    // bytes from the file position (SEEK_CUR), beside the child's 8 bytes at 100.
    assert_eq!(
        locks,
        [(-1, Some(libc::EAGAIN)), (0, None), (0, None)],
        "the parent's F_SETLK calls"
    );
    let report = c.replay_with(&trace, &[]);
    assert_eq!(report["per_call"]["fcntl"]["mismatched"], 0, "{}", report["per_call"]);
    c.replay_and_check(&trace);
}

/// A lease (`fcntl(F_SETLEASE)`) notifies its holder, with SIGIO, of another process's open,
/// and a non-blocking open that would break it fails with EAGAIN. Taken for real, the lease
/// was the replayer's: the child's replayed open sent the replayer a SIGIO, which ended it
/// (stress-ng's lease stressor). Leases are simulated now, and the open's recorded EAGAIN
/// stands.
fn a_lease_replays_as_recorded_without_signalling_the_replayer() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("lease");
    let script = "import os, fcntl, signal\n\
        signal.signal(signal.SIGIO, signal.SIG_IGN)\n\
        with open('f', 'w') as f:\n    \
            f.write('data')\n\
        fd = os.open('f', os.O_RDONLY)\n\
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)\n\
        assert fcntl.fcntl(fd, fcntl.F_GETLEASE) == fcntl.F_RDLCK\n\
        pid = os.fork()\n\
        if pid == 0:\n    \
            try:\n        \
                os.open('f', os.O_WRONLY | os.O_NONBLOCK | os.O_TRUNC)\n        \
                os._exit(1)\n    \
            except BlockingIOError:\n        \
                os._exit(0)\n\
        assert os.waitpid(pid, 0)[1] == 0\n\
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)\n\
        os.close(fd)\n";
    let trace = c.record_python(script);
    let r = ra_trace::TraceReader::open(&trace).unwrap();
    let refused = r
        .events(None)
        .map(|e| e.unwrap())
        .filter(|e| e.name == "openat" && e.errno == Some(libc::EAGAIN))
        .count();
    assert_eq!(refused, 1, "the child's open was refused by the lease");
    let report = c.replay_with(&trace, &[]);
    assert_eq!(report["per_call"]["openat"]["mismatched"], 0, "{}", report["per_call"]);
    c.replay_and_check(&trace);
}

/// A child killed by a signal while it runs in user space makes no call on its way out: no
/// recorder wrote its death, so the replay kept the child, and its end of a pipe, open, and
/// the parent's read, recorded as end-of-file, waited out the stall timeout (Python's
/// test_subprocess). Both recorders now write a generated `exit` (Re-Animator's `generated`
/// column) with the wait status, and the replay ends the child there.
fn a_child_killed_between_calls_closes_its_pipe_in_the_replay() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("killed");
    let script = "import os, signal, time\n\
        r, w = os.pipe()\n\
        pid = os.fork()\n\
        if pid == 0:\n    \
            os.close(r)\n    \
            os.write(w, b'ready')\n    \
            while True:\n        \
                pass\n\
        os.close(w)\n\
        assert os.read(r, 5) == b'ready'\n\
        time.sleep(0.2)\n\
        os.kill(pid, signal.SIGKILL)\n\
        assert os.read(r, 5) == b''\n\
        assert os.waitpid(pid, 0)[1] == signal.SIGKILL\n\
        os.close(r)\n";
    let trace = c.record_python(script);
    let r = ra_trace::TraceReader::open(&trace).unwrap();
    let generated: Vec<_> =
        r.events(None).map(|e| e.unwrap()).filter(ra_trace::Event::generated).collect();
    assert_eq!(generated.len(), 1, "one generated exit: {generated:?}");
    let g = &generated[0];
    assert_eq!(g.name, "exit");
    assert_eq!(g.arg("status").and_then(|a| a.as_int()), Some(i64::from(libc::SIGKILL)));
    assert!(g.ppid.is_some_and(|p| p > 0) && g.uid.is_some(), "common fields: {g:?}");
    let report = c.replay_with(&trace, &["--stall-timeout", "5"]);
    assert_eq!(report["per_call"]["read"]["mismatched"], 0, "{}", report["per_call"]);
    c.replay_and_check(&trace);
}

/// glibc's `openpty` opens a pseudo-terminal's peer with ioctl(TIOCGPTPEER), whose result is
/// a new descriptor: Python's test_pty found the replay's `close` of it failing with EBADF,
/// in the parent after `fork` and in a child that made it its stdout. (The terminal is not
/// reproduced: its reads and writes are simulated from the trace.)
fn a_pseudo_terminal_s_peer_descriptor_replays() {
    if !have_program("python3") || !Path::new("/dev/ptmx").exists() {
        return;
    }
    let c = Case::new("openpty");
    // forkpty: the parent closes the peer right after the fork, the child makes it its
    // stdin, stdout and stderr. openpty: Python then marks both ends close-on-exec (FIOCLEX).
    let script = "import os\n\
        pid, m = os.forkpty()\n\
        if pid == 0:\n    \
            os.write(1, b'hello')\n    \
            os._exit(0)\n\
        assert os.waitpid(pid, 0)[1] == 0\n\
        assert os.read(m, 5) == b'hello'\n\
        os.close(m)\n\
        m, s = os.openpty()\n\
        os.close(s)\n\
        os.close(m)\n";
    let trace = c.record_python(script);
    let report = c.replay_with(&trace, &[]);
    assert_eq!(report["per_call"]["close"]["mismatched"], 0, "{}", report["per_call"]);
    let warned = report["warnings"].as_object().unwrap();
    assert!(
        !warned.keys().any(|w| w.contains("never opened")),
        "the peer is a descriptor of the trace: {warned:?}"
    );
    c.replay_and_check(&trace);
}

/// A write-open of a FIFO waits for a reader, and returns once one has opened it, even if
/// that reader closed it again before the writer ran (the kernel waits for the count of
/// read-opens to change). Python's test_eintr does this: the child opens the FIFO for reading
/// and closes it at once while the parent's open waits. The reader's open and close come
/// first in the trace (they returned first); the replay's write-open found no reader and
/// waited out the stall timeout (ETIMEDOUT, and EBADF for its close).
fn a_fifo_writer_s_open_ends_when_a_reader_came_and_went() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("fifo-rendezvous");
    let script = "import os, time\n\
        os.mkfifo('f')\n\
        pid = os.fork()\n\
        if pid == 0:\n    \
            time.sleep(0.3)\n    \
            os.close(os.open('f', os.O_RDONLY))\n    \
            os._exit(0)\n\
        fd = os.open('f', os.O_WRONLY)\n\
        os.close(fd)\n\
        assert os.waitpid(pid, 0)[1] == 0\n\
        os.unlink('f')\n";
    let trace = c.record_python(script);
    let report = c.replay_with(&trace, &["--stall-timeout", "5"]);
    assert_eq!(report["per_call"]["openat"]["mismatched"], 0, "{}", report["per_call"]);
    assert!(report["elapsed_s"].as_f64().unwrap() < 4.0, "the write-open waited: {report}");
    c.replay_and_check(&trace);
}

/// coreutils' `cp` copies with `copy_file_range`, whose bytes never pass through the program's
/// memory; Python's `os.copy_file_range`, `os.sendfile` and `os.splice` do the same with and
/// without offsets, through a pipe, and read on from where a copy moved the file position.
/// The source lies outside the snapshot, so `--init` knows its content only from the trace:
/// both recorders read back what each copy moved (`data_copied`; eBPF with the thread
/// stopped by its throttle), and the replay then matches in every call and in the final
/// tree. Recorded with eBPF's `--loss drop`, nothing is read back, and the replay shows the
/// copies' data as unknown (mismatches).
fn kernel_side_copies_replay_from_a_source_the_trace_never_read() {
    if !have_program("cp") || !have_program("python3") {
        return;
    }
    let c = Case::new("copies");
    let outside = c.base.join("outside");
    std::fs::create_dir(&outside).unwrap();
    let (one, two) = (content(7, 300_000), content(8, 300_000));
    let put = |name: &str, b: &[u8]| -> String {
        let p = outside.join(name);
        std::fs::write(&p, b).unwrap();
        p.to_str().unwrap().to_string()
    };
    // What the program reads back to check its copies are files of their own (their reads
    // tell the inference nothing about the sources).
    let want_c2 =
        [&two[0..2000], &two[2010..2510], &two[100_000..100_300], &two[200_000..200_700]].concat();
    let hex = ra_hex::encode;
    let script = format!(
        "import os\n\
        a = os.open({two:?}, os.O_RDONLY)\n\
        b = os.open('c2.bin', os.O_WRONLY | os.O_CREAT, 0o644)\n\
        assert os.copy_file_range(a, b, 1000, 5000, 0) == 1000\n\
        assert os.copy_file_range(a, b, 2000) == 2000\n\
        assert os.read(a, 10) == bytes.fromhex('{head}')\n\
        assert os.sendfile(b, a, None, 500) == 500\n\
        assert os.sendfile(b, a, 100000, 300) == 300\n\
        r, w = os.pipe()\n\
        assert os.splice(a, w, 700, offset_src=200000) == 700\n\
        assert os.splice(r, b, 700) == 700\n\
        os.close(b)\n\
        assert os.read(a, 3) == bytes.fromhex('{tail}')\n\
        os.close(a)\n\
        assert open('c2.bin', 'rb').read() == open({want_c2:?}, 'rb').read()\n\
        assert open('dst.bin', 'rb').read() == open({want_dst:?}, 'rb').read()\n",
        two = put("two.bin", &two),
        head = hex(&two[2000..2010]),
        tail = hex(&two[2510..2513]),
        want_c2 = put("want_c2.bin", &want_c2),
        want_dst = put("want_dst.bin", &one),
    );
    let cmd = format!("cp {} dst.bin && python3 -c \"$0\"", put("one.bin", &one));
    let argv = [os("sh"), os("-c"), os(&cmd), os(&script)];
    let copies = |trace: &Path| -> Vec<(String, i64, Option<usize>)> {
        let r = ra_trace::TraceReader::open(trace).unwrap();
        let v: Vec<_> = r
            .events(None)
            .map(|e| e.unwrap())
            .filter(|e| e.ret.is_some_and(|n| n > 0))
            .filter_map(|e| {
                let k = e.copy()?;
                Some((e.name.clone(), k.moved, k.data.map(<[u8]>::len)))
            })
            .collect();
        let names: Vec<&str> = v.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "copy_file_range",
                "copy_file_range",
                "copy_file_range",
                "sendfile",
                "sendfile",
                "splice",
                "splice"
            ],
            "{v:?}"
        );
        v
    };
    // Both recorders read the moved bytes back (eBPF: with the thread stopped by its
    // throttle, `--loss throttle`, the default).
    let trace = c.record(&argv, None, &[]);
    for (name, moved, got) in &copies(&trace) {
        assert_eq!(*got, Some(*moved as usize), "{name}: the bytes it moved, read back");
    }
    c.replay_and_check(&trace);
    if backend() == "ebpf" {
        // `--loss drop` never stops the program, so nothing is read back. The replayed
        // splice from the source then reaches past what the trace shows of it, so the pipe
        // gets no data: the next splice, from that pipe, waits the stall timeout and fails
        // (it used to block for ever).
        let trace = c.record_with(&["--loss", "drop"], &argv, None, &[]);
        let v = copies(&trace);
        assert!(v.iter().all(|(_, _, d)| d.is_none()), "{v:?}");
        let (r, _) = c.replay_report(&trace, &["--stall-timeout", "1"]);
        assert!(r["mismatch_total"].as_u64().unwrap() > 0, "{}", r["mismatches"]);
        let w = r["warnings"].as_object().unwrap();
        assert!(w.keys().any(|k| k.contains("splice stalled on a pipe: no data")), "{w:?}");
    }
}

/// A program reads a file through a symlink in `/` (`/bin/sh`: `/bin -> usr/bin` on a
/// merged-/usr system; a plain directory elsewhere), then lists `/`. `--init` made `/bin` a
/// directory from the path alone, and the listing then replayed it as one (Python's test_os
/// found it): a listing's symlink now wins, and the directory replay makes for targets the
/// trace never resolved is not in the replayed listing of `/`.
fn a_listing_of_the_root_replays_its_symlinks_as_symlinks() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("rootlisting");
    let script = "import os\n\
        open('/bin/sh', 'rb').read(64)\n\
        names = os.listdir('/')\n\
        assert 'bin' in names, names\n";
    let trace = c.record_python(script);
    c.replay_and_check(&trace);
}

/// A forked child runs a program through `os.execve(fd, ...)` (fexecve: `execveat(fd, "",
/// AT_EMPTY_PATH)` of a descriptor opened O_CLOEXEC, which the exec closes; the new program's
/// first open then gets that number again). Python's test_posix found the eBPF recorder
/// writing the path as the kernel's "/dev/fd/3" where its copy of "" faulted in the child
/// (the replay then did not treat the call as an exec and kept descriptor 3 open).
fn a_forked_child_s_fexecve_replays() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("fexecve");
    let script = "import os, sys\n\
        fd = os.open(sys.executable, os.O_RDONLY | os.O_CLOEXEC)\n\
        pid = os.fork()\n\
        if pid == 0:\n    \
            os.execve(fd, [sys.executable, '-c', 'open(\"out\", \"w\").write(\"x\")'], dict(os.environ))\n\
        _, status = os.waitpid(pid, 0)\n\
        sys.exit(os.waitstatus_to_exitcode(status))\n";
    let trace = c.record_python(script);
    let r = ra_trace::TraceReader::open(&trace).unwrap();
    let exec = r
        .events(None)
        .map(|e| e.unwrap())
        .find(|e| e.name == "execveat")
        .expect("the fexecve is an execveat");
    let path = exec.args[1].as_data().map(|d| d.strip_suffix(&[0]).unwrap_or(d).to_vec());
    assert_eq!(path.as_deref(), Some(&b""[..]), "the path as passed: {exec:?}");
    c.replay_and_check(&trace);
}

/// A device node made by the recorded program (Python's test_tarfile extracts some as root):
/// by default the replay makes an empty regular file in its place, so that the calls on it
/// (chmod, chown, rename, unlink) replay and only what shows the node's type differs; with
/// `--allow-special` it is made as recorded and everything matches. (The replay made
/// neither before: mknod failed with EPERM and every later call on the node with ENOENT.)
#[test]
fn a_device_node_replays_as_a_placeholder_or_with_allow_special() {
    if !have_program("python3") {
        return;
    }
    let root_ok = if rustix::process::geteuid().is_root() {
        Ok(())
    } else {
        Err("mknod of a character device needs root".to_string())
    };
    if !ra_testkit::privileged("device nodes", root_ok) {
        return;
    }
    let c = Case::new("devnode");
    let script = "import os, stat\n\
        os.mknod('node', 0o600 | stat.S_IFCHR, os.makedev(1, 3))\n\
        os.chmod('node', 0o640)\n\
        os.chown('node', 0, 0)\n\
        os.rename('node', 'node2')\n\
        assert stat.S_ISCHR(os.stat('node2').st_mode)\n\
        os.unlink('node2')\n";
    let trace = c.record_python(script);
    let (r, _) = c.replay_report(&trace, &[]);
    let calls = &r["per_call"];
    assert_eq!(calls["mknodat"]["emulated"], 1, "{calls}");
    for k in ["fchmodat", "fchownat", "rename", "unlink"] {
        if !calls[k].is_null() {
            assert_eq!(calls[k]["mismatched"], 0, "{k}: {calls}");
        }
    }
    let m = r["mismatches"].as_array().unwrap();
    // Only the stat that shows the node's type and device number differs.
    let whats: Vec<_> = m.iter().map(|x| x["what"].as_str().unwrap()).collect();
    assert_eq!(whats, ["stat.st_mode", "stat.st_rdev"], "{m:?}");
    assert!(m.iter().all(|x| x["unique_id"] == m[0]["unique_id"]), "one call: {m:?}");
    let warned = r["warnings"].as_object().unwrap().keys().any(|k| k.contains("device node"));
    assert!(warned, "the placeholder is reported: {}", r["warnings"]);
    let (r, _) = c.replay_report(&trace, &["--allow-special"]);
    assert_eq!(r["mismatch_total"], 0, "{}", r["mismatches"]);
    assert_eq!(r["per_call"]["mknodat"]["issued"], 1, "{}", r["per_call"]);
}

/// A descriptor passed over a Unix socket (`SCM_RIGHTS`), as multiprocessing's forkserver
/// hands pipes to the processes it forks (Python's test_concurrent_futures): the recorders
/// keep the numbers sent and received (the `scm_rights` column), and the replay gives the
/// receiver the open file the sender's number named. Before, the child's write went to a
/// simulated descriptor, and the parent's read of the pipe replayed as end-of-file.
fn a_descriptor_passed_over_a_unix_socket_replays_as_the_file_it_named() {
    if !have_program("python3") {
        return;
    }
    let c = Case::new("scm-rights");
    let script = "import os, socket\n\
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)\n\
        pid = os.fork()\n\
        if pid == 0:\n    \
            a.close()\n    \
            msg, fds, _, _ = socket.recv_fds(b, 16, 4)\n    \
            assert msg == b'pipe' and len(fds) == 1, (msg, fds)\n    \
            os.write(fds[0], b'through the passed descriptor')\n    \
            os._exit(0)\n\
        b.close()\n\
        r, w = os.pipe()\n\
        socket.send_fds(a, [b'pipe'], [w])\n\
        os.close(w)\n\
        assert os.read(r, 100) == b'through the passed descriptor'\n\
        assert os.read(r, 100) == b''\n\
        os.waitpid(pid, 0)\n";
    let trace = c.record_python(script);
    let r = ra_trace::TraceReader::open(&trace).unwrap();
    let rights: Vec<(String, Vec<i32>)> = r
        .events(None)
        .map(|e| e.unwrap())
        .filter(|e| e.name.ends_with("msg"))
        .map(|e| (e.name.clone(), e.scm_rights()))
        .filter(|(_, fds)| !fds.is_empty())
        .collect();
    assert_eq!(rights.len(), 2, "a sendmsg and a recvmsg with descriptors: {rights:?}");
    assert!(
        rights.iter().any(|(n, _)| n == "sendmsg") && rights.iter().any(|(n, _)| n == "recvmsg")
    );
    let dump = bin().arg("dump").arg(&trace).output().unwrap();
    let text = String::from_utf8_lossy(&dump.stdout);
    for (name, fds) in &rights {
        let line = format!("(SCM_RIGHTS [{}])", fds[0]);
        assert!(
            text.lines().any(|l| l.contains(&format!("] {name}(")) && l.contains(&line)),
            "dump shows {name}'s {line}:\n{text}"
        );
    }
    let report = c.replay_with(&trace, &["--stall-timeout", "5"]);
    assert_eq!(report["per_call"]["read"]["mismatched"], 0, "{}", report["per_call"]);
    c.replay_and_check(&trace);
}

/// Two children posix_spawn()ed (glibc: clone with CLONE_VM|CLONE_VFORK) by one parent share its
/// address space until they exec. Found by replay-conformance's mp-main (Python's
/// multiprocessing): the replay's exec cleared the one address space the parent and all its
/// vfork children shared, so the second child's exec took the first child's mapping; the first
/// child's page records then found no mapping, fell back to the descriptor the mapping was made
/// with (closed long since), and made up an entry at its number, so that the child's next open
/// got the number after the recorded one. The replay must find every page's mapping and give
/// the open its recorded number.
#[test]
fn vfork_siblings_execs_keep_each_other_s_mappings() {
    if !ebpf_available() {
        return;
    }
    ra_testkit::set_backend("ebpf");
    let c = Case::new("vforksibs");
    std::fs::write(c.work.join("data"), content(7, 16 * 4096)).unwrap();
    // The first child maps the file, closes its descriptor, waits for the second child's exec,
    // reads the pages, and opens a file (which must get the number the mapping's had).
    let first = "import mmap, os, time\n\
        fd = os.open('data', os.O_RDONLY)\n\
        m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)\n\
        os.close(fd)\n\
        time.sleep(0.6)\n\
        s = sum(m[i * 4096] for i in range(16))\n\
        out = os.open('out', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n\
        assert out == fd, (out, fd)\n\
        os.write(out, str(s).encode())\n\
        os.close(out)\n";
    let parent = format!(
        "import os, time\n\
         a = os.posix_spawn('/usr/bin/python3', ['python3', '-c', {first:?}], os.environ)\n\
         time.sleep(0.2)\n\
         b = os.posix_spawn('/bin/true', ['true'], os.environ)\n\
         for p in (b, a):\n    _, st = os.waitpid(p, 0)\n    assert st == 0, st\n"
    );
    let trace = c.record_python(&parent);
    let r = c.replay_with(&trace, &[]);
    // (The interpreter's own shared mappings, such as glibc's gconv cache, have page records too.)
    let pages = &r["per_call"]["mmappread"];
    assert!(pages["matched"].as_u64().unwrap() >= 16, "{}", r["per_call"]);
    assert_eq!(pages["matched"], pages["replayed"], "{}", r["per_call"]);
    c.replay_and_check(&trace);
}
