//! `reanimator replay` on the original Re-Animator traces (verified, with the inferred initial
//! state) and on bad input: corrupt traces, a missing or non-empty root, another
//! architecture's trace, wrong flags — one clear line and a non-zero exit each.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use ra_trace::{ArgValue, Event, TraceWriter, WriterConfig};

use common::bin;

fn fixture(rel: &str) -> Option<PathBuf> {
    ra_testkit::shared_testdata(&format!("dataseries/{rel}"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ra-replay-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn replay(trace: &Path, root: &Path, extra: &[&str]) -> Output {
    bin().arg("replay").arg(trace).arg("--root").arg(root).args(extra).output().unwrap()
}

/// Replay `trace` into `root`, made here (it must not exist): the output and its JSON report.
fn replay_fresh(trace: &Path, root: &Path, extra: &[&str]) -> (Output, serde_json::Value) {
    std::fs::create_dir(root).unwrap();
    let o = replay(trace, root, extra);
    let r = json(&o);
    (o, r)
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The four original Re-Animator traces (ls, cat, a 4-thread program) replay with every
/// issued and emulated call matching once the initial state they show is recreated; without
/// it, the files they read are missing and replay says so.
#[test]
fn original_reanimator_traces_replay_verified() {
    for (name, threads) in
        [("mt.ds", 4), ("output-4ba1c4b.ds", 4), ("output-ee34491.ds", 1), ("output_lsR.ds", 1)]
    {
        let Some(trace) = fixture(&format!("reanimator-replayer/{name}")) else { return };
        let root = scratch(&format!("ra-{name}"));
        let o = replay(&trace, &root, &["--init", "--json"]);
        let r = json(&o);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            serde_json::to_string_pretty(&r).unwrap()
        );
        assert_eq!(r["mismatch_total"], 0, "{name}");
        assert_eq!(r["threads"], threads, "{name}");
        let t = &r["totals"];
        assert!(t["issued"].as_u64().unwrap() > 10, "{name}: {t}");
        assert_eq!(
            t["matched"].as_u64().unwrap(),
            t["issued"].as_u64().unwrap() + t["emulated"].as_u64().unwrap()
        );
        // Writes to the terminal (fd 1, inherited) are simulated, not issued.
        assert!(r["per_call"]["write"]["simulated"].as_u64().unwrap() >= 1, "{name}");

        // Without the initial state the shared libraries and inputs are missing: mismatches.
        let root2 = scratch(&format!("ra-noinit-{name}"));
        let o = replay(&trace, &root2, &["--json"]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        let r = json(&o);
        assert!(r["mismatch_total"].as_u64().unwrap() > 0);
        let first = &r["mismatches"][0];
        assert!(
            first["expected"].as_str().is_some()
                && first["actual"].as_str().unwrap().contains("ENOENT"),
            "{first}"
        );
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&root2);
    }
}

/// The report file and the text table tell the same story.
#[test]
fn report_file_and_table() {
    let Some(trace) = fixture("reanimator-replayer/output_lsR.ds") else { return };
    let d = scratch("report");
    let root = d.join("root");
    std::fs::create_dir(&root).unwrap();
    let rep = d.join("r.json");
    let log = d.join("replay.log");
    let o = replay(
        &trace,
        &root,
        &["--init=infer", "--report", rep.to_str().unwrap(), "-vv", "--log", log.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("verified: every call matched"), "{text}");
    assert!(text.contains("openat"), "{text}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    assert_eq!(r["mismatch_total"], 0);
    // -vv logs every call with what replay did.
    let l = std::fs::read_to_string(&log).unwrap();
    assert!(l.lines().filter(|x| x.contains("-> replay")).count() >= 30, "{l}");
    let _ = std::fs::remove_dir_all(&d);
}

fn one_line_error(o: &Output, needle: &str) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout {} stderr {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains(needle), "expected `{needle}` in: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let d = scratch("bad");
    let root = d.join("root");
    std::fs::create_dir(&root).unwrap();
    // Not a trace at all; a truncated trace; a corrupt one.
    std::fs::write(d.join("junk.ds"), b"this is not a DataSeries file").unwrap();
    one_line_error(&replay(&d.join("junk.ds"), &root, &[]), "junk.ds");
    if let Some(t) = fixture("reanimator-replayer/mt.ds") {
        let b = std::fs::read(&t).unwrap();
        std::fs::write(d.join("trunc.ds"), &b[..b.len() / 3]).unwrap();
        let o = replay(&d.join("trunc.ds"), &root, &["--force"]);
        // A truncated file is readable up to its last complete extent: replay runs what is there
        // or reports the damage; it never panics or hangs.
        assert!(matches!(o.status.code(), Some(1) | Some(2)), "{o:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
        let mut c = b.clone();
        let mid = c.len() / 2;
        for x in &mut c[mid..mid + 64] {
            *x ^= 0x5a;
        }
        std::fs::write(d.join("corrupt.ds"), &c).unwrap();
        let o = replay(&d.join("corrupt.ds"), &root, &["--force"]);
        assert!(matches!(o.status.code(), Some(1) | Some(2)), "{o:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    }
    // A trace the recorder was killed while writing (cut inside its last extent): replayed, with
    // a note saying what is missing.
    let b = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/example.ds"))
        .unwrap();
    std::fs::write(d.join("cut.ds"), &b[..b.len() - 200]).unwrap();
    std::fs::create_dir(d.join("cut-root")).unwrap();
    let o = replay(&d.join("cut.ds"), &d.join("cut-root"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ends inside the extent at offset") && err.contains("replayed"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("replayed 10 calls"), "{o:?}");
    // The root: missing, a file, not empty.
    let trace = d.join("small.ds");
    let def = ra_syscalls::lookup("umask").unwrap();
    let mut e = Event::new(def);
    e.time_called = Some(1);
    e.time_returned = Some(2);
    e.tid = Some(1);
    e.pid = Some(1);
    e.ret = Some(0o22);
    e.errno = Some(0);
    e.set_arg("mask", ArgValue::Int(0o22));
    let mut w =
        TraceWriter::create(&trace, &[("arch", b"x86_64")], WriterConfig::default()).unwrap();
    w.append(&e).unwrap();
    w.finish().unwrap();
    one_line_error(&replay(&trace, &d.join("missing"), &[]), "mkdir -p");
    one_line_error(&replay(&trace, &d.join("small.ds"), &[]), "not a directory");
    std::fs::write(root.join("x"), b"x").unwrap();
    one_line_error(&replay(&trace, &root, &[]), "not empty");
    let o = replay(&trace, &root, &["--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // Another architecture.
    let arm = d.join("arm.ds");
    let mut w =
        TraceWriter::create(&arm, &[("arch", b"aarch64")], WriterConfig::default()).unwrap();
    w.append(&e).unwrap();
    w.finish().unwrap();
    one_line_error(&replay(&arm, &root, &["--force"]), "aarch64");
    // Wrong flags.
    let o = replay(&trace, &root, &["--force", "--timing", "fast"]);
    one_line_error(&o, "afap");
    let o = replay(&trace, &root, &["--force", "--verify", "everything"]);
    assert_eq!(o.status.code(), Some(2));
    let o = replay(&trace, &root, &["--force", "--stall-timeout", "-1"]);
    assert_eq!(o.status.code(), Some(2));
    // Beyond what a Duration holds (it panicked): one line, exit 2.
    one_line_error(&replay(&trace, &root, &["--force", "--stall-timeout", "1e30"]), "at most");
    let _ = std::fs::remove_dir_all(&d);
}

/// Two threads' pipe2 calls overlapped (test_subprocess): the one called first got the
/// higher numbers, 2 and 3, because the other, called while it ran, took 0 and 1 first.
/// Replayed with the recorded timing (so that the first runs first), the first finds 0 and 1
/// free: threads allocating at the same time get numbers in either order, so the recorded
/// ones, being free, are not a mismatch (they were: "pipe descriptors: expected [2, 3],
/// replayed [0, 1]"), as for an open.
#[test]
fn overlapping_pipe2_calls_of_two_threads_take_their_recorded_numbers() {
    let d = scratch("pipe2-threads");
    let mut s = Script::new();
    let thread = libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD
        | libc::CLONE_SYSVSEM;
    s.clone_child(thread.into(), 901);
    s.pipe2(2, 3);
    s.pipe2(0, 1);
    let n = s.events.len();
    let t0 = s.events[n - 2].time_called.unwrap();
    // Thread 901's pipe2 runs 3 ms; thread 900's is called 2 ms into it.
    let first = &mut s.events[n - 2];
    first.tid = Some(901);
    first.time_returned = Some(t0 + 3_000_000);
    let second = &mut s.events[n - 1];
    second.time_called = Some(t0 + 2_000_000);
    second.time_returned = Some(t0 + 4_000_000);
    s.t = t0 + 4_000_000;
    for fd in 0..4 {
        s.call("close", 0, &[("fd", ArgValue::Int(fd))]);
    }
    let trace = d.join("t.ds");
    s.write(&trace);
    let (_, r) = replay_fresh(&trace, &d.join("root"), &["--json", "--timing", "original"]);
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert_eq!(r["per_call"]["pipe2"]["matched"], 2, "{r}");
    assert_eq!(r["per_call"]["close"]["matched"], 4, "{r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A child wrote "x\n" to a pipe and was killed before ptrace saw the write return (no
/// result recorded); its parent read the two bytes (test_subprocess). The write is replayed
/// (the pipe has room), uncompared, and the parent's read gets the bytes: the write was left
/// out before, and the read got 0 bytes (end of file).
#[test]
fn a_pipe_write_without_a_recorded_result_still_feeds_its_reader() {
    let d = scratch("unfinished-pipe-write");
    let mut s = Script::new();
    s.pipe2(0, 1);
    s.fork(901);
    s.call(
        "write",
        0,
        &[
            ("fd", ArgValue::Int(1)),
            ("buf", ArgValue::data(b"x\n".to_vec())),
            ("count", ArgValue::Int(2)),
        ],
    );
    let w = s.events.last_mut().unwrap();
    (w.pid, w.tid, w.ret, w.errno, w.time_returned) = (Some(901), Some(901), None, None, None);
    s.call(
        "read",
        2,
        &[
            ("fd", ArgValue::Int(0)),
            ("buf", ArgValue::data(b"x\n".to_vec())),
            ("count", ArgValue::Int(4096)),
        ],
    );
    let trace = d.join("t.ds");
    s.write(&trace);
    let (_, r) = replay_fresh(&trace, &d.join("root"), &["--json"]);
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert_eq!(r["per_call"]["write"]["issued"], 1, "{r}");
    assert_eq!(r["per_call"]["read"]["matched"], 1, "{r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A scripted trace: one thread, calls 10 µs apart unless `at` says otherwise.
struct Script {
    t: i64,
    events: Vec<Event>,
}

impl Script {
    fn new() -> Script {
        Script { t: 1_763_800_000_000_000_000, events: Vec::new() }
    }
    fn call(&mut self, name: &str, ret: i64, args: &[(&str, ArgValue)]) {
        let def = ra_syscalls::lookup(name).unwrap_or_else(|| panic!("{name}"));
        let mut e = Event::new(def);
        self.t += 10_000;
        e.time_called = Some(self.t);
        e.time_returned = Some(self.t + 2_000);
        e.pid = Some(900);
        e.tid = Some(900);
        e.ret = Some(ret);
        e.errno = Some(0);
        for (n, v) in args {
            assert!(e.set_arg(n, v.clone()), "{name}: {n}");
        }
        self.events.push(e);
    }
    /// A call recorded as failing with `errno`.
    fn failed(&mut self, name: &str, errno: i32, args: &[(&str, ArgValue)]) {
        self.call(name, -1, args);
        self.events.last_mut().unwrap().errno = Some(errno);
    }
    /// `clone(flags)`, recorded as returning the child's id.
    fn clone_child(&mut self, flags: i64, child: i64) {
        self.call(
            "clone",
            child,
            &[
                ("flags", ArgValue::Int(flags)),
                ("stack", ArgValue::Int(0)),
                ("parent_tid", ArgValue::Int(0)),
                ("child_tid", ArgValue::Int(0)),
                ("tls", ArgValue::Int(0)),
            ],
        );
    }
    /// A fork: `clone(SIGCHLD)`, recorded as returning the child's id.
    fn fork(&mut self, child: i64) {
        self.clone_child(libc::SIGCHLD.into(), child);
    }
    /// `pipe2(fds, 0)`, recorded as returning the descriptors `[r, w]`.
    fn pipe2(&mut self, r: i32, w: i32) {
        let fds: Vec<u8> = [r, w].iter().flat_map(|f| f.to_le_bytes()).collect();
        self.call("pipe2", 0, &[("pipefd", ArgValue::data(fds)), ("flags", ArgValue::Int(0))]);
    }
    fn write(&self, path: &Path) {
        common::write_scripted_trace(path, b"/", &self.events);
    }
    /// `mmap(NULL, len, PROT_READ|PROT_WRITE, flags, fd, 0)`, recorded as returning `addr`.
    fn mmap(&mut self, addr: i64, len: i64, flags: i32, fd: i64) {
        self.call(
            "mmap",
            addr,
            &[
                ("addr", ArgValue::Int(0)),
                ("length", ArgValue::Int(len)),
                ("prot", ArgValue::Int((libc::PROT_READ | libc::PROT_WRITE).into())),
                ("flags", ArgValue::Int(flags.into())),
                ("fd", ArgValue::Int(fd)),
                ("offset", ArgValue::Int(0)),
            ],
        );
    }
    /// A page record (`mmappread` or `mmappwrite`) of `data` at file offset `off`, made through
    /// a mapping of descriptor `fd`, at `address` when the record has one.
    fn page(&mut self, name: &str, fd: i64, data: &[u8], off: i64, address: Option<i64>) {
        let mut args = vec![
            ("fd", ArgValue::Int(fd)),
            ("buf", ArgValue::data(data.to_vec())),
            ("count", ArgValue::Int(data.len() as i64)),
            ("offset", ArgValue::Int(off)),
        ];
        if let Some(a) = address {
            args.push(("address", ArgValue::Int(a)));
        }
        self.call(name, data.len() as i64, &args);
    }
}

fn p(s: &str) -> ArgValue {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    ArgValue::data(v)
}

/// `--init-unknown fill` writes the `--fill` data where the trace showed a file's size but not
/// its bytes; by default those bytes are holes. Either way the replay's read verifies.
#[test]
fn init_unknown_bytes_are_holes_or_fill_data() {
    use std::os::unix::fs::MetadataExt;
    let d = scratch("init-unknown");
    let size: i64 = 2 << 20;
    let mut st = vec![0u8; ra_trace::structs::STAT_SIZE];
    st[24..28].copy_from_slice(&0o100644u32.to_le_bytes());
    st[48..56].copy_from_slice(&size.to_le_bytes());
    let mut s = Script::new();
    s.call("stat", 0, &[("pathname", p("/big")), ("statbuf", ArgValue::data(st))]);
    let open =
        [("dirfd", ArgValue::Int(-100)), ("pathname", p("/big")), ("flags", ArgValue::Int(0))];
    // (The script's process has no inherited descriptors: its first one is 0.)
    s.call("openat", 0, &open);
    let read = [
        ("fd", ArgValue::Int(0)),
        ("buf", ArgValue::data(b"DATA".to_vec())),
        ("count", ArgValue::Int(4)),
        ("offset", ArgValue::Int(4096)),
    ];
    s.call("pread64", 4, &read);
    let trace = d.join("t.ds");
    s.write(&trace);
    for (mode, filled) in [(None, false), (Some("fill"), true)] {
        let root = d.join(format!("root-{filled}"));
        std::fs::create_dir(&root).unwrap();
        let mut args = vec!["--init", "--json", "--fill", "random"];
        if let Some(m) = mode {
            args.extend(["--init-unknown", m]);
        }
        let o = replay(&trace, &root, &args);
        let r = json(&o);
        assert_eq!(r["mismatch_total"], 0, "{r}");
        let note = r["init"].as_array().unwrap().iter().find(|n| n["what"] == "inferred").unwrap();
        let m = std::fs::metadata(root.join("big")).unwrap();
        assert_eq!(m.len(), size as u64);
        let b = std::fs::read(root.join("big")).unwrap();
        assert_eq!(&b[4096..4100], b"DATA");
        if filled {
            assert!(m.blocks() * 512 >= size as u64, "{} blocks", m.blocks());
            assert!(b[8192..].iter().any(|&c| c != 0), "random fill data after the read block");
            let want = format!("{} bytes of holes written", size - 4096);
            assert!(note["detail"].as_str().unwrap().contains(&want), "{note}");
        } else {
            assert!(m.blocks() * 512 < 1 << 20, "{} blocks", m.blocks());
            assert!(
                note["detail"].as_str().unwrap().contains("holes (--init-unknown fill"),
                "{note}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// mmap I/O records (`mmappwrite`/`mmappread`, what the eBPF backend writes) replay through a
/// real shared mapping (`--mmap map`) or as pwrite/pread (`--mmap pread`): either way the file
/// ends with the data and the read verifies.
#[test]
fn mmap_page_records_replay_both_ways() {
    let d = scratch("mmap");
    let page: Vec<u8> = (0..4096u32).map(|i| (i * 13 % 251) as u8).collect();
    let mut s = Script::new();
    let rdwr = libc::O_RDWR | libc::O_CREAT;
    s.call(
        "openat",
        0,
        &[
            ("dirfd", ArgValue::Int(-100)),
            ("pathname", p("/m.dat")),
            ("flags", ArgValue::Int(rdwr.into())),
            ("mode", ArgValue::Int(0o644)),
        ],
    );
    s.call("ftruncate", 0, &[("fd", ArgValue::Int(0)), ("length", ArgValue::Int(8192))]);
    let addr: i64 = 0x7f00_0000_0000;
    s.mmap(addr, 8192, libc::MAP_SHARED, 0);
    s.page("mmappwrite", 0, &page, 4096, None);
    s.call(
        "msync",
        0,
        &[
            ("addr", ArgValue::Int(addr)),
            ("length", ArgValue::Int(8192)),
            ("flags", ArgValue::Int(libc::MS_SYNC.into())),
        ],
    );
    s.page("mmappread", 0, &page, 4096, Some(addr + 4096));
    s.call("munmap", 0, &[("addr", ArgValue::Int(addr)), ("length", ArgValue::Int(8192))]);
    s.call("close", 0, &[("fd", ArgValue::Int(0))]);
    let trace = d.join("mmap.ds");
    s.write(&trace);
    for mode in ["map", "pread"] {
        let root = d.join(format!("root-{mode}"));
        let (o, r) = replay_fresh(&trace, &root, &["--mmap", mode, "--json"]);
        assert_eq!(o.status.code(), Some(0), "{mode}: {r}");
        assert_eq!(r["per_call"]["mmappread"]["matched"], 1, "{mode}: {r}");
        let f = std::fs::read(root.join("m.dat")).unwrap();
        assert_eq!(f.len(), 8192);
        assert!(f[4096..] == page[..], "{mode}: the page reached the file");
        assert!(f[..4096].iter().all(|&b| b == 0));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The last page of a file that ends inside it (Python's test_mmap: a 10-byte file mapped,
/// written and flushed): the recorder records the whole page, but the kernel writes back only
/// the bytes within the file and shows zeros past its end to a mapped read. The replay had
/// written the whole page, which made the file 4096 bytes long, and compared a read of the
/// 10 bytes there with the recorded page.
#[test]
fn page_records_past_the_end_of_the_file_keep_its_size() {
    let d = scratch("mmap-eof");
    let mut page = vec![0u8; 4096];
    page[..10].copy_from_slice(b"cccccccccc");
    // A program's stray byte past the end of the file, in the mapped page: never written back.
    page[100] = b'x';
    let mut s = Script::new();
    let rdwr = libc::O_RDWR | libc::O_CREAT;
    s.call(
        "openat",
        0,
        &[
            ("dirfd", ArgValue::Int(-100)),
            ("pathname", p("/m.dat")),
            ("flags", ArgValue::Int(rdwr.into())),
            ("mode", ArgValue::Int(0o644)),
        ],
    );
    s.call(
        "write",
        10,
        &[
            ("fd", ArgValue::Int(0)),
            ("buf", ArgValue::data(b"aaaaaaaaaa".to_vec())),
            ("count", ArgValue::Int(10)),
        ],
    );
    let addr: i64 = 0x7f00_0000_0000;
    s.mmap(addr, 10, libc::MAP_SHARED, 0);
    s.page("mmappwrite", 0, &page, 0, None);
    let mut shown = page.clone();
    shown[100] = 0;
    s.page("mmappread", 0, &shown, 0, Some(addr));
    s.call("munmap", 0, &[("addr", ArgValue::Int(addr)), ("length", ArgValue::Int(10))]);
    s.call("close", 0, &[("fd", ArgValue::Int(0))]);
    let trace = d.join("eof.ds");
    s.write(&trace);
    for mode in ["map", "pread"] {
        let root = d.join(format!("root-{mode}"));
        let (o, r) = replay_fresh(&trace, &root, &["--mmap", mode, "--json"]);
        assert_eq!(o.status.code(), Some(0), "{mode}: {r}");
        assert_eq!(r["mismatch_total"], 0, "{mode}: {r}");
        assert_eq!(r["per_call"]["mmappread"]["matched"], 1, "{mode}: {r}");
        assert_eq!(std::fs::read(root.join("m.dat")).unwrap(), b"cccccccccc", "{mode}");
    }
    // A record whose count says 2^60 bytes (a damaged or hostile trace): at most the recorded
    // bytes are held, the count is a mismatch, and the replay ends normally.
    let mut s2 = Script { t: s.t, events: s.events[..3].to_vec() };
    s2.page("mmappread", 0, &shown, 0, Some(addr));
    s2.events.last_mut().unwrap().set_arg("count", ArgValue::Int(1 << 60));
    let trace = d.join("huge.ds");
    s2.write(&trace);
    let root = d.join("root-huge");
    let (o, r) = replay_fresh(&trace, &root, &["--mmap", "pread", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{r}");
    assert_eq!(r["mismatch_total"], 1, "{r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// mknodat checks the kind of node before it looks at dirfd or the path: a directory is
/// EPERM and an unknown kind EINVAL even with a bad dirfd (stress-ng's mknod stressor). The
/// replay had looked the descriptor up first: EBADF.
#[test]
fn mknod_checks_the_kind_of_node_before_dirfd() {
    let d = scratch("mknod-kind");
    let mut s = Script::new();
    for (mode, errno) in [(libc::S_IFDIR | 0o600, libc::EPERM), (0o170600, libc::EINVAL)] {
        s.failed(
            "mknodat",
            errno,
            &[
                ("dirfd", ArgValue::Int(20001)),
                ("pathname", p("n")),
                ("mode", ArgValue::Int(mode.into())),
                ("dev", ArgValue::Int(0)),
            ],
        );
    }
    let trace = d.join("t.ds");
    s.write(&trace);
    let root = d.join("root");
    let (_, r) = replay_fresh(&trace, &root, &["--json"]);
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert_eq!(r["per_call"]["mknodat"]["matched"], 2, "{r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// close_range with a range that ends before it starts (Python's test_subprocess:
/// `close_range(3, 2, 0)`) is EINVAL, as recorded; the replayer's descriptor table had
/// panicked on it ("range start is greater than range end").
#[test]
fn close_range_that_ends_before_it_starts_is_einval() {
    let d = scratch("close-range");
    let mut s = Script::new();
    for (first, last, flags, errno) in
        [(3, 2, 0, libc::EINVAL), (3, 2, 4, libc::EINVAL), (0, 9, 8, libc::EINVAL)]
    {
        s.failed(
            "close_range",
            errno,
            &[
                ("first", ArgValue::Int(first)),
                ("last", ArgValue::Int(last)),
                ("flags", ArgValue::Int(flags)),
            ],
        );
    }
    let trace = d.join("t.ds");
    s.write(&trace);
    let root = d.join("root");
    let (_, r) = replay_fresh(&trace, &root, &["--json"]);
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert_eq!(r["per_call"]["close_range"]["matched"], 3, "{r}");
    assert_eq!(r["warnings"], serde_json::json!({}), "{r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// readlink of an empty path is ENOENT (the kernel's do_readlinkat: "not a symlink" is
/// EINVAL except for an empty path), for readlink as for readlinkat; the replay answered
/// EINVAL (Python's test_subprocess).
#[test]
fn readlink_of_an_empty_path_is_enoent_and_of_a_directory_einval() {
    let d = scratch("readlink-empty");
    let mut s = Script::new();
    let buf = |s: &mut Script, name: &str, errno: i32, path: &[u8], dirfd: Option<i64>| {
        let mut args = vec![("pathname", ArgValue::data(path.to_vec()))];
        args.push(("bufsiz", ArgValue::Int(4096)));
        if let Some(fd) = dirfd {
            args.push(("dirfd", ArgValue::Int(fd)));
        }
        s.failed(name, errno, &args);
    };
    buf(&mut s, "readlink", libc::ENOENT, b"", None);
    buf(&mut s, "readlinkat", libc::ENOENT, b"", Some(-100));
    buf(&mut s, "readlink", libc::EINVAL, b".", None);
    let trace = d.join("t.ds");
    s.write(&trace);
    let (_, r) = replay_fresh(&trace, &d.join("root"), &["--json"]);
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert_eq!(r["per_call"]["readlink"]["matched"], 2, "{r}");
    assert_eq!(r["per_call"]["readlinkat"]["matched"], 1, "{r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Page records of shared memory that is no file (MAP_SHARED|MAP_ANONYMOUS, System V shm):
/// the eBPF recorder wrote them, with descriptor -1, before it learnt to tell such memory from
/// a file (fio and dbench use it between their processes). They are no file I/O: replayed as
/// simulated, not as a descriptor -1 that fails with EBADF.
#[test]
fn page_records_of_anonymous_shared_memory_are_simulated() {
    let d = scratch("mmap-anon");
    let page = vec![7u8; 4096];
    let mut s = Script::new();
    let addr: i64 = 0x7f00_0000_0000;
    // One made in the trace, and one the trace never showed (System V shm, an inherited map).
    s.mmap(addr, 8192, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1);
    for (name, at) in
        [("mmappread", addr), ("mmappwrite", addr + 4096), ("mmappread", 0x7e00_0000_0000)]
    {
        s.page(name, -1, &page, 0, Some(at));
    }
    let trace = d.join("anon.ds");
    s.write(&trace);
    let root = d.join("root");
    let (o, r) = replay_fresh(&trace, &root, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{r}");
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert_eq!(r["per_call"]["mmappread"]["simulated"], 2, "{r}");
    assert_eq!(r["per_call"]["mmappwrite"]["simulated"], 1, "{r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// io_uring's calls are recorded (a trace shows the program used it): the ring is set up
/// again (through the kernel with `--uring ring`, on the model with `as-syscalls`), its
/// descriptor exists for the calls after it, and the report says that an `io_uring_enter` is
/// simulated and that a trace without `io_uring_op` records does not hold its I/O.
#[test]
fn io_uring_calls_are_replayed_with_a_warning() {
    let d = scratch("uring");
    let mut s = Script::new();
    s.call("io_uring_setup", 5, &[("entries", ArgValue::Int(4)), ("p", ArgValue::Int(0x1000))]);
    s.call(
        "io_uring_enter",
        1,
        &[
            ("fd", ArgValue::Int(5)),
            ("to_submit", ArgValue::Int(1)),
            ("min_complete", ArgValue::Int(1)),
            ("flags", ArgValue::Int(1)),
            ("argp", ArgValue::Int(0)),
            ("argsz", ArgValue::Int(0)),
        ],
    );
    s.call("close", 0, &[("fd", ArgValue::Int(5))]);
    let trace = d.join("uring.ds");
    s.write(&trace);
    for (mode, setup) in [("ring", "issued"), ("as-syscalls", "emulated")] {
        let root = d.join(format!("root-{mode}"));
        let (o, r) = replay_fresh(&trace, &root, &["--json", "--uring", mode]);
        assert_eq!(o.status.code(), Some(0), "{r}");
        assert_eq!(r["per_call"]["io_uring_setup"][setup], 1, "--uring {mode}: {r}");
        assert_eq!(r["per_call"]["io_uring_setup"]["matched"], 1, "--uring {mode}: {r}");
        assert_eq!(r["per_call"]["io_uring_enter"]["simulated"], 1, "{r}");
        assert_eq!(r["per_call"]["close"]["matched"], 1, "{r}");
        assert_eq!(r["mismatch_total"], 0, "{r}");
        let warned = r["warnings"].as_object().unwrap().keys().any(|k| {
            k.starts_with("io_uring_enter: simulated") && k.contains("a trace without them")
        });
        assert!(warned, "{r}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A child killed inside its execve (Python's test_subprocess kills children it has just
/// spawned) has no recorded result there, and nothing after it. Its process ends with that
/// call, so the pipe's write end it inherited closes and the parent's read sees the end of
/// the pipe, as recorded. The child's process had stayed in the replay for ever, and the
/// parent's read waited out the stall timeout (ETIMEDOUT).
#[test]
fn a_child_that_died_inside_a_call_closes_its_descriptors() {
    let d = scratch("died-inside");
    let mut s = Script::new();
    // (The script's process has no inherited descriptors: its first one is 0.)
    s.pipe2(0, 1);
    s.fork(901);
    s.call("execve", 0, &[("pathname", p("/bin/true"))]);
    {
        let e = s.events.last_mut().unwrap();
        (e.pid, e.tid, e.ret, e.errno, e.time_returned) = (Some(901), Some(901), None, None, None);
    }
    s.call("close", 0, &[("fd", ArgValue::Int(1))]);
    s.call(
        "read",
        0,
        &[
            ("fd", ArgValue::Int(0)),
            ("buf", ArgValue::data(Vec::new())),
            ("count", ArgValue::Int(100)),
        ],
    );
    let trace = d.join("t.ds");
    s.write(&trace);
    let root = d.join("root");
    let (_, r) = replay_fresh(&trace, &root, &["--stall-timeout", "3", "--json"]);
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert_eq!(r["per_call"]["read"]["matched"], 1, "{r}");
    assert!(r["elapsed_s"].as_f64().unwrap() < 2.0, "the read did not wait: {r}");
    assert_eq!(r["per_call"]["execve"]["skipped"], 1, "not replayed: {r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A pipe the replay does not drain (its reader is not in the trace): the first write that
/// finds no room waits the stall timeout, and the writes after it fail at once instead of
/// after a timeout each (fio's splice engine: 240 calls, 40 minutes before this).
#[test]
fn writes_into_a_stalled_pipe_fail_fast() {
    let d = scratch("pipe-stall");
    let mut s = Script::new();
    s.pipe2(3, 4);
    let page = vec![1u8; 4096];
    for _ in 0..24 {
        s.call(
            "write",
            4096,
            &[
                ("fd", ArgValue::Int(4)),
                ("buf", ArgValue::data(page.clone())),
                ("count", ArgValue::Int(4096)),
            ],
        );
    }
    let trace = d.join("pipe.ds");
    s.write(&trace);
    let root = d.join("root");
    let (_, r) = replay_fresh(&trace, &root, &["--stall-timeout", "1", "--json"]);
    // 16 writes fill the pipe (64 KiB), the 17th waits 1 s, the 7 after it fail at once.
    assert_eq!(r["per_call"]["write"]["matched"], 16, "{r}");
    assert_eq!(r["per_call"]["write"]["mismatched"], 8, "{r}");
    assert_eq!(r["warnings"]["pipe write stalled: no reader made room"], 1, "{r}");
    let took = r["elapsed_s"].as_f64().unwrap();
    assert!(took < 4.0, "{took} s: each write after the stall waited (8 s with a second each)");
    let _ = std::fs::remove_dir_all(&d);
}

/// A FIFO's write-open waits in the kernel until a reader opens it. Here the reader (another
/// process) opens and closes it while the writer waits, and the writer's open, called first,
/// is recorded first: the reader's open is ordered after it (one file: called order), so the
/// replay's writer cannot wait for that reader. It waited out the stall timeout (ETIMEDOUT,
/// then EBADF for its close: Python's test_eintr); it now opens the FIFO at once, as the
/// kernel let it, and the reader's calls follow.
#[test]
fn a_fifo_write_open_that_a_later_reader_let_go_replays() {
    let d = scratch("fifo-rendezvous");
    let mut s = Script::new();
    // (The script's processes have no inherited descriptors: their first one is 0.)
    let at = |s: &mut Script, i: usize, pid: i32, called: i64, returned: i64| {
        let e = &mut s.events[i];
        (e.pid, e.tid) = (Some(pid), Some(pid));
        (e.time_called, e.time_returned) = (Some(s.t + called), Some(s.t + returned));
    };
    let mode = i64::from(libc::S_IFIFO | 0o644);
    s.call(
        "mknodat",
        0,
        &[
            ("dirfd", ArgValue::Int(-100)),
            ("pathname", p("/f")),
            ("mode", ArgValue::Int(mode)),
            ("dev", ArgValue::Int(0)),
        ],
    );
    s.fork(901);
    let open = |flags: i32| {
        [
            ("dirfd", ArgValue::Int(-100)),
            ("pathname", p("/f")),
            ("flags", ArgValue::Int(flags.into())),
            ("mode", ArgValue::Int(0)),
        ]
    };
    s.call("openat", 0, &open(libc::O_WRONLY)); // the writer: waits 300 ms for a reader
    s.call("openat", 0, &open(libc::O_RDONLY)); // the reader, 250 ms in
    s.call("close", 0, &[("fd", ArgValue::Int(0))]); // the reader's
    s.call("close", 0, &[("fd", ArgValue::Int(0))]); // the writer's
    let n = s.events.len();
    at(&mut s, n - 4, 900, 0, 300_000_000);
    at(&mut s, n - 3, 901, 250_000_000, 300_010_000);
    at(&mut s, n - 2, 901, 300_020_000, 300_030_000);
    at(&mut s, n - 1, 900, 300_040_000, 300_050_000);
    let trace = d.join("t.ds");
    s.write(&trace);
    let (_, r) = replay_fresh(&trace, &d.join("root"), &["--stall-timeout", "5", "--json"]);
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert_eq!(r["per_call"]["openat"]["matched"], 2, "{r}");
    let took = r["elapsed_s"].as_f64().unwrap();
    assert!(took < 4.0, "{took} s: the write-open waited out the stall timeout");
    let _ = std::fs::remove_dir_all(&d);
}

/// `-vv` shows a call without a result (`exit_group`) as the trace does, `?`; it showed the
/// errno that stands for an unknown result (`-1 EIO`).
#[test]
fn the_log_shows_no_result_for_a_call_without_one() {
    let d = scratch("log-no-result");
    let mut s = Script::new();
    s.call("mkdir", 0, &[("pathname", p("/a")), ("mode", ArgValue::Int(0o755))]);
    s.call("exit_group", 0, &[("status", ArgValue::Int(3))]);
    (s.events[1].ret, s.events[1].errno) = (None, None);
    let trace = d.join("t.ds");
    s.write(&trace);
    let log = d.join("replay.log");
    let (o, _) =
        replay_fresh(&trace, &d.join("root"), &["--json", "-vv", "--log", log.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let l = std::fs::read_to_string(&log).unwrap();
    let exit: Vec<&str> = l.lines().filter(|x| x.contains("exit_group(")).collect();
    assert_eq!(exit.len(), 1, "{l}");
    assert!(exit[0].ends_with("-> replay Emulated: ?"), "{l}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A write to a pipe's read end, and a read from its write end, fail with EBADF at once (the
/// kernel checks the open mode first): the replay issues them rather than waiting for the
/// pipe to become ready, which it never would (Python's test_signal: ETIMEDOUT after the
/// stall timeout instead of the recorded EBADF).
#[test]
fn a_pipe_end_used_the_wrong_way_fails_at_once() {
    let d = scratch("pipe-wrong-end");
    let mut s = Script::new();
    s.pipe2(3, 4);
    s.failed(
        "write",
        libc::EBADF,
        &[
            ("fd", ArgValue::Int(3)),
            ("buf", ArgValue::data(b"x".to_vec())),
            ("count", ArgValue::Int(1)),
        ],
    );
    s.failed(
        "read",
        libc::EBADF,
        &[("fd", ArgValue::Int(4)), ("buf", ArgValue::Absent), ("count", ArgValue::Int(1))],
    );
    let trace = d.join("t.ds");
    s.write(&trace);
    let (_, r) = replay_fresh(&trace, &d.join("root"), &["--stall-timeout", "5", "--json"]);
    assert_eq!(r["per_call"]["write"]["matched"], 1, "{r}");
    assert_eq!(r["per_call"]["read"]["matched"], 1, "{r}");
    let took = r["elapsed_s"].as_f64().unwrap();
    assert!(took < 4.0, "{took} s: a call waited out the stall timeout");
    let _ = std::fs::remove_dir_all(&d);
}

/// `--timing original` keeps the recorded gaps (a lower bound only: machines are noisy);
/// `--timing scale=0.1` shortens them; `--on-mismatch abort` stops at the first difference.
#[test]
fn timing_and_abort() {
    let d = scratch("timing");
    let mut s = Script::new();
    s.call("mkdir", 0, &[("pathname", p("/a")), ("mode", ArgValue::Int(0o755))]);
    s.t += 400_000_000; // 0.4 s later
    s.call("mkdir", 0, &[("pathname", p("/b")), ("mode", ArgValue::Int(0o755))]);
    s.call("rmdir", 0, &[("pathname", p("/nonexistent"))]); // recorded success, replays ENOENT
    s.call("mkdir", 0, &[("pathname", p("/c")), ("mode", ArgValue::Int(0o755))]);
    let trace = d.join("t.ds");
    s.write(&trace);
    let run = |name: &str, extra: &[&str]| {
        let root = d.join(name);
        std::fs::create_dir(&root).unwrap();
        let t0 = std::time::Instant::now();
        let o = replay(&trace, &root, extra);
        (o, t0.elapsed(), root)
    };
    let (o, took, _) = run("orig", &["--timing", "original", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(took >= std::time::Duration::from_millis(400), "original pace took {took:?}");
    let r = json(&o);
    assert_eq!(r["mismatch_total"], 1);
    assert_eq!(r["mismatches"][0]["call"], "rmdir");
    // The report says how close to their due times the calls were issued: all four, none
    // early, the one 0.4 s later in its own second of the trace.
    let t = &r["timing"];
    assert_eq!(t["scale"], 1.0);
    assert_eq!(t["calls"], 4);
    let e = &t["issue_error_us"];
    assert!(
        e["median"].as_f64().unwrap() >= 0.0
            && e["max"].as_f64().unwrap() >= e["p99"].as_f64().unwrap() - 1.0,
        "{t}"
    );
    assert_eq!(
        t["per_second"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["calls"].as_u64().unwrap())
            .sum::<u64>(),
        4
    );
    // With two CPUs or more the workers and the other threads ran on CPUs of their own.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus >= 2 {
        let (w, o) =
            (t["cpus"]["workers"].as_str().unwrap(), t["cpus"]["others"].as_str().unwrap());
        assert!(!w.is_empty() && !o.is_empty() && w != o, "{t}");
    } else {
        assert!(t["cpus"].is_null(), "{t}");
    }
    // More calls than the queues hold before a timed replay starts its workers (4,096): they
    // start once the queues are full, and every call is issued and timed.
    let mut burst = Script::new();
    for i in 0..5000 {
        burst.call(
            "mkdir",
            0,
            &[("pathname", p(&format!("/d{i}"))), ("mode", ArgValue::Int(0o755))],
        );
    }
    let many = d.join("many.ds");
    burst.write(&many);
    let root = d.join("many");
    std::fs::create_dir(&root).unwrap();
    let o = replay(&many, &root, &["--timing", "original", "--verify", "ret", "--json"]);
    let r = json(&o);
    assert_eq!(
        (r["mismatch_total"].as_u64(), r["timing"]["calls"].as_u64()),
        (Some(0), Some(5000)),
        "{r}"
    );
    assert!(root.join("d4999").is_dir());
    // --timing-cpus shared leaves placement to the kernel.
    let (o, _, _) = run("shared", &["--timing", "scale=0.01", "--timing-cpus", "shared", "--json"]);
    let r = json(&o);
    assert!(r["timing"]["cpus"].is_null() && r["timing"]["calls"] == 4, "{r}");
    let (o, _, _) = run("afap", &["--json"]);
    assert!(json(&o)["timing"].is_null(), "AFAP has no timing section");
    // The trace is read ahead on its own thread; the report gives the horizon and the waits.
    let (o, _, _) = run("ahead", &["--json", "--prefetch", "512,2M"]);
    let p = &json(&o)["prefetch"];
    assert_eq!(
        (p["horizon_calls"].as_u64(), p["horizon_bytes"].as_u64()),
        (Some(512), Some(2 << 20)),
        "{p}"
    );
    assert!(p["stalls"].as_u64().unwrap() >= p["starved"].as_u64().unwrap(), "{p}");
    let (o, _, _) = run("ahead-bad", &["--prefetch", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("at least 256 calls"));
    // A recorded gap longer than the stall timeout is a wait for the due time, not a stall.
    let (o, took, _) = run("gap", &["--timing", "original", "--stall-timeout", "0.2", "--json"]);
    assert!(took >= std::time::Duration::from_millis(400));
    let r = json(&o);
    assert!(r["aborted"].is_null(), "{r}");
    assert_eq!(r["timing"]["calls"], 4);
    let (o, _, root) = run("abort", &["--on-mismatch", "abort", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let r = json(&o);
    assert!(r["aborted"].as_str().unwrap().contains("rmdir"), "{r}");
    assert!(root.join("b").is_dir() && !root.join("c").exists(), "stopped at the mismatch");
    let _ = std::fs::remove_dir_all(&d);
}

/// Paths the recorder could not capture (not captured, or cut short where the copy faulted)
/// are never issued with what was captured: a successful mkdir of "/dir-cut" recorded as
/// "/dir-c" (no NUL, buffer_not_captured) would create a directory the program never made.
#[test]
fn calls_whose_path_was_not_captured_are_not_issued() {
    let d = scratch("uncaptured");
    let mut s = Script::new();
    s.call(
        "mkdir",
        0,
        &[("pathname", ArgValue::data(b"/dir-c".to_vec())), ("mode", ArgValue::Int(0o755))],
    );
    s.events.last_mut().unwrap().buffer_not_captured = true;
    s.call("mkdir", 0, &[("pathname", ArgValue::NotCaptured), ("mode", ArgValue::Int(0o755))]);
    s.events.last_mut().unwrap().buffer_not_captured = true;
    s.call("mkdir", 0, &[("pathname", p("/whole")), ("mode", ArgValue::Int(0o755))]);
    let trace = d.join("t.ds");
    s.write(&trace);
    let root = d.join("root");
    let (_, r) = replay_fresh(&trace, &root, &["--json"]);
    assert!(!root.join("dir-c").exists(), "{r}");
    assert!(root.join("whole").is_dir(), "{r}");
    let w = r["warnings"].to_string();
    assert!(w.contains("cut short (its copy faulted)"), "{w}");
    assert!(w.contains("`pathname` not captured"), "{w}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `sh -c SCRIPT` recorded with ptrace in `d` (with `--snapshot data` and `extra`).
fn record_job(d: &Path, trace: &Path, script: &str, extra: &[&str]) {
    let o = bin()
        .args(["record", "--backend", "ptrace", "-q", "--snapshot", "data", "-o"])
        .arg(trace)
        .args(extra)
        .args(["--", "sh", "-c", script])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
}

const JOB: &str =
    "echo more >> data/notes.txt; mkdir -p data/out; cp data/notes.txt data/out/copy; \
                   cat data/out/copy";

/// A trace that holds its data as digests only (`record --data hash`, `anonymize --data
/// digest`) replays verified by default: return values, errnos and the final tree without
/// contents, said in a note; `--verify full` still compares the data, and finds it cannot
/// match. Before, the default was full: "verification FAILED" unless `--verify ret`, which the
/// README's tour did not say.
#[test]
fn a_trace_of_digests_replays_verified_by_results_and_tree_shape() {
    let d = scratch("digests");
    std::fs::create_dir(d.join("data")).unwrap();
    std::fs::write(d.join("data/notes.txt"), b"hello\n").unwrap();
    let trace = d.join("h.ds");
    record_job(&d, &trace, JOB, &["--data", "hash"]);
    let (o, r) = replay_fresh(&trace, &d.join("r1"), &["--init", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{r}");
    assert_eq!(r["mismatch_total"], 0, "{r}");
    let notes = r["warnings"].to_string();
    assert!(notes.contains("digests or lengths only"), "{notes}");
    assert!(
        r["final_state"].to_string().contains("identical")
            || r["final_state"][0]["differences"] == 0,
        "{r}"
    );
    let (o, _) = replay_fresh(&trace, &d.join("r2"), &["--init", "--verify", "full", "--json"]);
    assert_eq!(o.status.code(), Some(1), "the data cannot match");
    // A full trace is still verified in full: its data and contents are compared.
    let full = d.join("f.ds");
    record_job(&d, &full, JOB, &[]);
    let (o, r) = replay_fresh(&full, &d.join("r3"), &["--init", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{r}");
    assert!(!r["warnings"].to_string().contains("digests or lengths only"), "{r}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `--clean` empties a root an earlier replay used, so the same line can run again (the
/// README's second replay line reused the first's root and failed: `--force` keeps the old
/// files); any other non-empty directory is refused, and nothing in it is removed.
#[test]
fn clean_empties_a_replay_root_and_refuses_any_other_directory() {
    let d = scratch("clean");
    std::fs::create_dir(d.join("data")).unwrap();
    std::fs::write(d.join("data/notes.txt"), b"hello\n").unwrap();
    let trace = d.join("t.ds");
    record_job(&d, &trace, JOB, &[]);
    let root = d.join("r");
    let (o, _) = replay_fresh(&trace, &root, &["--init", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    // A read-only directory among the replayed files, as programs leave them.
    let ro = root.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("f"), b"x").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    // --force keeps the first replay's files: the recorded start state cannot be restored
    // over them.
    let o = replay(&trace, &root, &["--init", "--force", "--json"]);
    assert_ne!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not empty"));
    for _ in 0..2 {
        let o = replay(&trace, &root, &["--init", "--clean", "--json"]);
        let r = json(&o);
        assert_eq!(o.status.code(), Some(0), "{r}");
        assert_eq!(r["mismatch_total"], 0, "{r}");
        assert!(!ro.exists(), "--clean left {}", ro.display());
    }
    let other = d.join("other");
    std::fs::create_dir_all(other.join("keep")).unwrap();
    let o = replay(&trace, &other, &["--init", "--clean"]);
    one_line_error(&o, "--clean empties only a root an earlier replay used");
    assert!(other.join("keep").is_dir(), "nothing removed");
    let _ = std::fs::remove_dir_all(&d);
}
