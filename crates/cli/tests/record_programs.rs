//! End-to-end tests of `reanimator record` on real programs — sqlite3, tar, git, cp — and on the
//! test kit's C programs (`mtwriter`: threads, `forkpipe`: a fork and a pipe).
//!
//! Each test records a program with `reanimator record -o T.ds -- CMD`, checks that the
//! recorder exits with the program's status and that `reanimator info` reads the trace, then
//! checks the decoded events against ground truth observed OUTSIDE the trace: the files the
//! program left behind, what it printed, its own JSON report.
//!
//! The link between events and files is [`Model`]: a small model of the kernel's descriptor
//! tables, rebuilt from the trace alone. Per process (threads share it, a fork copies it, the
//! copy shares open file descriptions) it maps descriptors to what they were opened on
//! (resolving `*at` directory descriptors and the working directory), follows positions,
//! O_APPEND, dup*, fcntl, pipes, close, close-on-exec, and keeps an image of every file the
//! trace writes (by inode, so renames and hard links carry the content). A correct recorder
//! makes each image equal to the file on disk.
//!
//! Programs missing from PATH make their test print `skip: <program> not installed` and pass,
//! unless REANIMATOR_REQUIRE_TESTDATA=1 (CI), which turns the skip into a failure.
//!
//! Every test runs once per capture backend (`<test>::ptrace`, `<test>::ebpf`): both must
//! produce traces that pass the same checks. The eBPF runs skip with a printed reason where
//! eBPF cannot run (not root, no BTF), and fail instead under REANIMATOR_REQUIRE_PRIVILEGED=1.

mod common;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use ra_testkit::{backend, both_backends, have_program};
use ra_trace::{ArgValue, Event, TraceReader};

use common::bin;

// ---- Linux x86_64 constants the model needs ----------------------------------------------------

const AT_FDCWD: i64 = -100;
const AT_EMPTY_PATH: i64 = 0x1000;
const O_ACCMODE: i64 = 0o3;
const O_WRONLY: i64 = 0o1;
const O_CREAT: i64 = 0o100;
const O_TRUNC: i64 = 0o1000;
const O_APPEND: i64 = 0o2000;
const O_CLOEXEC: i64 = 0o2000000;
const F_DUPFD: i64 = 0;
const F_SETFD: i64 = 2;
const F_SETFL: i64 = 4;
const F_DUPFD_CLOEXEC: i64 = 1030;
const FD_CLOEXEC: i64 = 1;
const CLOSE_RANGE_CLOEXEC: i64 = 4;
const CLONE_THREAD: i64 = 0x10000;
const RENAME_EXCHANGE: i64 = 2;
const PROT_WRITE: i64 = 0x2;
const MAP_SHARED: i64 = 0x1;
const FICLONE: u32 = 0x4004_9409;
const FICLONERANGE: u32 = 0x4020_940d;

/// A recording that takes longer than this is a hung recorder.
const RECORD_TIMEOUT: Duration = Duration::from_secs(300);

// ---- running things -----------------------------------------------------------------------------

both_backends!(
    sqlite3_inserts_rebuild_the_database_file,
    tar_x_writes_every_extracted_byte,
    tar_c_reads_every_source_byte,
    git_init_add_commit_writes_objects_and_index,
    cp_r_reads_and_writes_every_file,
    cp_r_with_kernel_copies_accounts_for_every_byte,
    mtwriter_threads_each_pwrite_their_pattern,
    forkpipe_child_and_parent_agree_on_the_pipe,
    fio_io_uring_records_and_finishes,
);

/// A scratch directory (canonical path), removed when the test passes and kept when it fails.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = ra_testkit::backend_scratch_dir("record", name);
        Scratch { dir: dir.canonicalize().expect("canonical scratch dir") }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for inspection", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Runs `cmd` with stdout and stderr captured, killing it after [`RECORD_TIMEOUT`].
fn run_with_timeout(mut cmd: Command, what: &str) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > RECORD_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {RECORD_TIMEOUT:?}; killed it");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output { status, stdout: t_out.join().expect("reader"), stderr: t_err.join().expect("reader") }
}

/// Runs a helper command (not traced) and returns its stdout; panics when it fails.
fn sh(cwd: &Path, args: &[&str]) -> Vec<u8> {
    let o = Command::new(args[0])
        .args(&args[1..])
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("run {args:?}: {e}"));
    assert!(o.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// One `reanimator record` run.
struct Recording {
    trace: PathBuf,
    cwd: PathBuf,
    command: String,
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// `reanimator record -o DIR/NAME.ds -- CMD...` in `cwd`, stdin from `stdin` (or /dev/null).
fn record(
    s: &Scratch,
    name: &str,
    cwd: &Path,
    cmd: &[&OsStr],
    stdin: Option<&Path>,
    env: &[(&str, &OsStr)],
) -> Recording {
    let trace = s.path(&format!("{name}.ds"));
    let mut c = bin();
    c.args(["record", "--backend", backend(), "-o"])
        .arg(&trace)
        .arg("--")
        .args(cmd)
        .current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(match stdin {
        Some(p) => Stdio::from(File::open(p).expect("open stdin file")),
        None => Stdio::null(),
    });
    let command = cmd.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let o = run_with_timeout(c, &format!("reanimator record --backend {} -- {command}", backend()));
    Recording {
        trace,
        cwd: cwd.to_path_buf(),
        command,
        status: o.status.code(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// The recorder exited with the program's status, and `reanimator info` reads the trace.
fn check_status_and_info(rec: &Recording, expected: i32) {
    assert_eq!(
        rec.status,
        Some(expected),
        "`reanimator record -- {}` should exit with the program's status {expected}; stderr:\n{}",
        rec.command,
        rec.stderr
    );
    assert!(
        rec.trace.exists(),
        "no trace written at {}; stderr:\n{}",
        rec.trace.display(),
        rec.stderr
    );
    let info = bin().arg("info").arg(&rec.trace).output().expect("run reanimator info");
    assert!(
        info.status.success(),
        "reanimator info {} failed: {}",
        rec.trace.display(),
        String::from_utf8_lossy(&info.stderr)
    );
    let json = bin()
        .args(["info", "--json"])
        .arg(&rec.trace)
        .output()
        .expect("run reanimator info --json");
    assert!(json.status.success(), "{}", String::from_utf8_lossy(&json.stderr));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("info --json is JSON");
    assert_eq!(v["kind"], "reanimator", "{v}");
    assert_eq!(v["complete"], true, "the recorder should finish the trace (trailer, index): {v}");
}

// ---- the model ----------------------------------------------------------------------------------

/// What a descriptor refers to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Target {
    /// Opened on this path (resolved to an absolute, lexically normal path).
    File(PathBuf),
    /// One end of pipe number n (numbered in trace order).
    Pipe(usize),
    /// 0, 1 or 2 inherited from the recorder.
    Std(i64),
    /// Made by another call (socket, eventfd, ...).
    Other(&'static str),
}

/// An open file description: shared by dup'ed descriptors and across fork.
#[derive(Debug)]
struct Ofd {
    target: Target,
    /// The inode image, for File targets.
    file: Option<usize>,
    pos: u64,
    append: bool,
}

#[derive(Clone, Debug)]
struct FdEntry {
    ofd: Rc<RefCell<Ofd>>,
    cloexec: bool,
}

#[derive(Clone, Debug)]
struct Proc {
    fds: HashMap<i64, FdEntry>,
    cwd: PathBuf,
}

/// The content of one inode as the trace's writes make it.
#[derive(Default, Debug)]
struct FileImage {
    data: Vec<u8>,
    /// Why the trace cannot reproduce this file's bytes (copy_file_range, shared writable
    /// mappings): such images are not compared byte for byte.
    opaque: Vec<String>,
}

/// One data transfer (read or write family) on a descriptor.
#[derive(Clone, Debug)]
struct Io {
    uid: u64,
    pid: i32,
    tid: i32,
    call: &'static str,
    fd: i64,
    target: Target,
    file: Option<usize>,
    /// The file position the data applies at (meaningless for pipes).
    offset: u64,
    data: Vec<u8>,
}

/// A successful open.
#[derive(Clone, Debug)]
struct Open {
    tid: i32,
    path: PathBuf,
    flags: i64,
    fd: i64,
    file: usize,
}

/// An in-kernel copy (no buffers in user space).
#[derive(Clone, Debug)]
struct Copy {
    from: Target,
    to: Target,
    bytes: u64,
}

struct Model {
    root_cwd: PathBuf,
    my_uid: u32,
    procs: HashMap<i32, Proc>,
    files: Vec<FileImage>,
    names: HashMap<PathBuf, usize>,
    events: Vec<Event>,
    reads: Vec<Io>,
    writes: Vec<Io>,
    opens: Vec<Open>,
    copies: Vec<Copy>,
    /// (source, destination) of reflinks (ioctl FICLONE / FICLONERANGE).
    clones: Vec<(Target, Target)>,
    /// (pid, read fd, write fd, pipe number)
    pipes: Vec<(i32, i64, i64, usize)>,
    /// (parent pid, child pid) for fork/vfork/clone of processes.
    spawns: Vec<(i32, i32)>,
    /// (pid, tid, new thread id)
    threads: Vec<(i32, i32, i32)>,
    /// (pid, argv) of successful execs.
    execs: Vec<(i32, Vec<String>)>,
    mkdirs: Vec<PathBuf>,
    renames: Vec<(PathBuf, PathBuf)>,
    links: Vec<(PathBuf, PathBuf)>,
    unlinks: Vec<PathBuf>,
    /// (target, link path)
    symlinks: Vec<(Vec<u8>, PathBuf)>,
    /// (pid, tid, call, target)
    syncs: Vec<(i32, i32, &'static str, Target)>,
    /// Things a correct recorder never produces (missing buffers, wrong lengths, disorder).
    problems: Vec<String>,
    /// Things worth showing when a test fails (descriptors the model doesn't know, ...).
    notes: Vec<String>,
    last_uid: Option<u64>,
}

fn strip_nul(d: &[u8]) -> &[u8] {
    d.strip_suffix(b"\0").unwrap_or(d)
}

fn int(e: &Event, name: &str) -> Option<i64> {
    e.arg(name).and_then(ArgValue::as_int)
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::RootDir => out.push("/"),
            Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(x) => out.push(x),
        }
    }
    out
}

impl Model {
    /// Reads the whole trace of `rec` into a model.
    fn of(rec: &Recording) -> Model {
        let r = TraceReader::open(&rec.trace)
            .unwrap_or_else(|e| panic!("TraceReader::open({}): {e}", rec.trace.display()));
        let my_uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX);
        let mut m = Model {
            root_cwd: rec.cwd.clone(),
            my_uid,
            procs: HashMap::new(),
            files: Vec::new(),
            names: HashMap::new(),
            events: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            opens: Vec::new(),
            copies: Vec::new(),
            clones: Vec::new(),
            pipes: Vec::new(),
            spawns: Vec::new(),
            threads: Vec::new(),
            execs: Vec::new(),
            mkdirs: Vec::new(),
            renames: Vec::new(),
            links: Vec::new(),
            unlinks: Vec::new(),
            symlinks: Vec::new(),
            syncs: Vec::new(),
            problems: Vec::new(),
            notes: Vec::new(),
            last_uid: None,
        };
        for l in r.lost() {
            m.problems.push(format!(
                "trace has a loss record: {} x{} ({} bytes): {}",
                l.syscall, l.count, l.bytes, l.reason
            ));
        }
        // The first records describe descriptors the command inherited (synthetic openat
        // records): the model treats those descriptors as the outside world.
        let synthetic: u64 = r
            .info_value("synthetic_ids")
            .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
            .unwrap_or(0);
        for ev in r.events(None) {
            let ev =
                ev.unwrap_or_else(|e| panic!("reading events of {}: {e}", rec.trace.display()));
            if ev.unique_id < synthetic {
                if ev.name != "openat" || ev.ret.is_none_or(|fd| fd < 0) {
                    m.problem(&ev, "a synthetic record that is not a successful openat");
                }
                continue;
            }
            m.apply(ev);
        }
        m
    }

    fn problem(&mut self, e: &Event, what: impl std::fmt::Display) {
        self.problems
            .push(format!("#{} {} [pid {:?} tid {:?}]: {what}", e.unique_id, e.name, e.pid, e.tid));
    }

    fn note(&mut self, e: &Event, what: impl std::fmt::Display) {
        if self.notes.len() < 50 {
            self.notes.push(format!(
                "#{} {} [pid {:?} tid {:?}]: {what}",
                e.unique_id, e.name, e.pid, e.tid
            ));
        }
    }

    fn apply(&mut self, e: Event) {
        // Common fields every recorded call must carry.
        if self.last_uid.is_some_and(|u| e.unique_id <= u) {
            self.problem(&e, format!("unique_id not increasing (previous {:?})", self.last_uid));
        }
        self.last_uid = Some(e.unique_id);
        if e.pid.is_none() || e.tid.is_none() {
            self.problem(&e, "no pid or tid");
        }
        match (e.time_called, e.time_returned) {
            (None, _) => self.problem(&e, "no time_called"),
            (Some(c), Some(r)) if r < c => {
                self.problem(&e, format!("time_returned {r} < time_called {c}"))
            }
            _ => {}
        }
        if e.uid.is_some_and(|u| u as u32 != self.my_uid) {
            self.problem(&e, format!("uid {:?}, expected {}", e.uid, self.my_uid));
        }
        if e.buffer_not_captured && !e.failed() {
            self.problem(&e, "buffer_not_captured set on a successful call under --data full");
        }
        if let (Some(def), Some(pid)) = (e.def, e.pid) {
            self.ensure_proc(pid, e.ppid);
            self.effect(def.name, pid, &e);
        }
        self.events.push(e);
    }

    fn ensure_proc(&mut self, pid: i32, ppid: Option<i32>) {
        if self.procs.contains_key(&pid) {
            return;
        }
        let p = match ppid.and_then(|pp| self.procs.get(&pp)) {
            Some(parent) => parent.clone(),
            None => {
                let mut fds = HashMap::new();
                for fd in 0..3 {
                    let ofd = Ofd { target: Target::Std(fd), file: None, pos: 0, append: false };
                    fds.insert(fd, FdEntry { ofd: Rc::new(RefCell::new(ofd)), cloexec: false });
                }
                Proc { fds, cwd: self.root_cwd.clone() }
            }
        };
        self.procs.insert(pid, p);
    }

    fn fd(&self, pid: i32, fd: i64) -> Option<Rc<RefCell<Ofd>>> {
        self.procs.get(&pid)?.fds.get(&fd).map(|f| f.ofd.clone())
    }

    /// What `fd` of `pid` refers to, and its inode image.
    fn target_of(&self, pid: i32, fd: i64) -> Option<(Target, Option<usize>)> {
        let entry = self.procs.get(&pid)?.fds.get(&fd)?;
        let o = entry.ofd.borrow();
        Some((o.target.clone(), o.file))
    }

    fn set_fd(&mut self, pid: i32, fd: i64, ofd: Rc<RefCell<Ofd>>, cloexec: bool) {
        self.procs.get_mut(&pid).expect("ensured").fds.insert(fd, FdEntry { ofd, cloexec });
    }

    /// Absolute path of `p` relative to `dirfd` in process `pid`.
    fn resolve(&mut self, e: &Event, pid: i32, dirfd: i64, p: &[u8]) -> PathBuf {
        let p = Path::new(OsStr::from_bytes(p));
        if p.is_absolute() {
            return normalize(p);
        }
        let base = if dirfd == AT_FDCWD {
            self.procs[&pid].cwd.clone()
        } else {
            match self.target_of(pid, dirfd).map(|(t, _)| t) {
                Some(Target::File(d)) => d,
                other => {
                    self.problem(e, format!("directory descriptor {dirfd} is {other:?}"));
                    PathBuf::from(format!("/<fd {dirfd}>"))
                }
            }
        };
        normalize(&base.join(p))
    }

    fn path_arg(&mut self, e: &Event, pid: i32, dirfd: i64, name: &str) -> Option<PathBuf> {
        match e.arg(name) {
            Some(ArgValue::Data(d)) => {
                let d = strip_nul(d).to_vec();
                Some(self.resolve(e, pid, dirfd, &d))
            }
            other => {
                self.problem(e, format!("path argument `{name}` is {other:?}"));
                None
            }
        }
    }

    /// The inode image for `path`, made on first use.
    fn file_for(&mut self, path: &Path) -> usize {
        if let Some(&id) = self.names.get(path) {
            return id;
        }
        self.files.push(FileImage::default());
        self.names.insert(path.to_path_buf(), self.files.len() - 1);
        self.files.len() - 1
    }

    /// The bytes a successful call moved through buffer `name`: `n` of them. Write buffers
    /// are captured at their requested length (the kernel took the first `n`); read buffers
    /// must hold exactly `n`.
    fn moved(&mut self, e: &Event, name: &str, n: usize, written: bool) -> Option<Vec<u8>> {
        let bytes = match e.arg(name) {
            Some(ArgValue::Data(d)) => d.clone(),
            Some(ArgValue::Iov(vs)) => {
                let mut out = Vec::new();
                for (i, v) in vs.iter().enumerate() {
                    match &v.data {
                        Some(d) => out.extend_from_slice(d),
                        None if out.len() >= n => break,
                        None => {
                            self.problem(e, format!("iovec {i} of `{name}` not captured"));
                            return None;
                        }
                    }
                }
                out.into()
            }
            other => {
                // A NotCaptured buffer was reported with the event's flag already.
                if !e.buffer_not_captured {
                    self.problem(
                        e,
                        format!("buffer `{name}` is {other:?}, expected the {n} bytes moved"),
                    );
                }
                return None;
            }
        };
        if written {
            if bytes.len() < n {
                self.problem(
                    e,
                    format!("buffer `{name}` holds {} bytes, the call wrote {n}", bytes.len()),
                );
                return None;
            }
            Some(bytes[..n].to_vec())
        } else {
            if bytes.len() != n {
                self.problem(
                    e,
                    format!("buffer `{name}` holds {} bytes, the call read {n}", bytes.len()),
                );
            }
            Some(bytes.to_vec())
        }
    }

    fn transfer(&mut self, e: &Event, pid: i32, call: &'static str, ret: i64) {
        let write = matches!(call, "write" | "pwrite64" | "writev" | "pwritev" | "pwritev2");
        let buf = if call.ends_with('v') || call.ends_with("v2") { "iov" } else { "buf" };
        let Some(fd) = int(e, "fd") else {
            self.problem(e, "no fd");
            return;
        };
        let Some(data) = self.moved(e, buf, ret as usize, write) else { return };
        let explicit = match call {
            "pread64" | "pwrite64" | "preadv" | "pwritev" => int(e, "offset"),
            "preadv2" | "pwritev2" => int(e, "offset").filter(|&o| o != -1),
            _ => None,
        };
        if matches!(call, "pread64" | "pwrite64" | "preadv" | "pwritev") && explicit.is_none() {
            self.problem(e, "no offset");
        }
        let Some(ofd) = self.fd(pid, fd) else {
            self.note(e, format!("fd {fd} unknown to the model ({} bytes)", data.len()));
            return;
        };
        let mut o = ofd.borrow_mut();
        let offset = match explicit {
            Some(off) => off as u64,
            None if write && o.append => o.file.map_or(o.pos, |f| self.files[f].data.len() as u64),
            None => o.pos,
        };
        if explicit.is_none() {
            o.pos = offset + data.len() as u64;
        }
        if write {
            if let Some(f) = o.file {
                let img = &mut self.files[f].data;
                let end = offset as usize + data.len();
                if img.len() < end {
                    img.resize(end, 0);
                }
                img[offset as usize..end].copy_from_slice(&data);
            }
        }
        let io = Io {
            uid: e.unique_id,
            pid,
            tid: e.tid.unwrap_or(-1),
            call,
            fd,
            target: o.target.clone(),
            file: o.file,
            offset,
            data,
        };
        drop(o);
        if write {
            self.writes.push(io);
        } else {
            self.reads.push(io);
        }
    }

    fn copy(&mut self, e: &Event, pid: i32, call: &'static str, ret: i64) {
        let (fin, fout, off_in, off_out) = match call {
            "sendfile" => (int(e, "in_fd"), int(e, "out_fd"), "offset", ""),
            _ => (int(e, "fd_in"), int(e, "fd_out"), "off_in", "off_out"),
        };
        let (Some(fin), Some(fout)) = (fin, fout) else {
            self.problem(e, "no descriptors");
            return;
        };
        let null =
            |name: &str| name.is_empty() || matches!(e.arg(name), Some(ArgValue::Absent) | None);
        let (a, b) = (self.fd(pid, fin), self.fd(pid, fout));
        let from = a.as_ref().map_or(Target::Other("unknown"), |o| o.borrow().target.clone());
        let to = b.as_ref().map_or(Target::Other("unknown"), |o| o.borrow().target.clone());
        if let Some(a) = a.filter(|_| null(off_in)) {
            a.borrow_mut().pos += ret as u64;
        }
        if let Some(b) = b {
            let mut b = b.borrow_mut();
            if call == "sendfile" || null(off_out) {
                b.pos += ret as u64;
            }
            if let Some(f) = b.file {
                self.files[f]
                    .opaque
                    .push(format!("#{} {call} moved {ret} bytes in the kernel", e.unique_id));
            }
        }
        self.copies.push(Copy { from, to, bytes: ret as u64 });
    }

    fn effect(&mut self, call: &'static str, pid: i32, e: &Event) {
        let ok = !e.failed() && e.ret.is_some_and(|r| r >= 0);
        let ret = e.ret.unwrap_or(-1);
        let tid = e.tid.unwrap_or(-1);
        match call {
            "open" | "openat" | "openat2" | "creat" => {
                if !ok {
                    return;
                }
                let dirfd = if call.starts_with("openat") {
                    int(e, "dirfd").unwrap_or(AT_FDCWD)
                } else {
                    AT_FDCWD
                };
                let Some(path) = self.path_arg(e, pid, dirfd, "pathname") else { return };
                let flags = match call {
                    "creat" => O_CREAT | O_WRONLY | O_TRUNC,
                    "openat2" => match e.arg("how") {
                        Some(ArgValue::Data(d)) if d.len() >= 8 => {
                            i64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
                        }
                        other => {
                            self.problem(e, format!("open_how is {other:?}"));
                            0
                        }
                    },
                    _ => int(e, "flags").unwrap_or_else(|| {
                        self.problem(e, "no flags");
                        0
                    }),
                };
                let file = self.file_for(&path);
                if flags & O_TRUNC != 0 && flags & O_ACCMODE != 0 {
                    self.files[file].data.clear();
                }
                self.opens.push(Open { tid, path: path.clone(), flags, fd: ret, file });
                let ofd = Ofd {
                    target: Target::File(path),
                    file: Some(file),
                    pos: 0,
                    append: flags & O_APPEND != 0,
                };
                self.set_fd(pid, ret, Rc::new(RefCell::new(ofd)), flags & O_CLOEXEC != 0);
            }
            "close" => {
                if let Some(fd) = int(e, "fd") {
                    self.procs.get_mut(&pid).expect("ensured").fds.remove(&fd);
                }
            }
            "close_range" => {
                if !ok {
                    return;
                }
                let first = int(e, "first").unwrap_or(0) as u32 as i64;
                let last = int(e, "last").unwrap_or(0) as u32 as i64;
                let cloexec = int(e, "flags").unwrap_or(0) & CLOSE_RANGE_CLOEXEC != 0;
                let fds = &mut self.procs.get_mut(&pid).expect("ensured").fds;
                if cloexec {
                    fds.iter_mut()
                        .filter(|(fd, _)| (first..=last).contains(*fd))
                        .for_each(|(_, f)| f.cloexec = true);
                } else {
                    fds.retain(|fd, _| !(first..=last).contains(fd));
                }
            }
            "dup" | "dup2" | "dup3" => {
                if !ok {
                    return;
                }
                let Some(old) = int(e, "oldfd") else { return };
                let cloexec = call == "dup3" && int(e, "flags").unwrap_or(0) & O_CLOEXEC != 0;
                match self.fd(pid, old) {
                    Some(ofd) => self.set_fd(pid, ret, ofd, cloexec),
                    None => {
                        self.note(e, format!("dup of fd {old} unknown to the model"));
                        self.procs.get_mut(&pid).expect("ensured").fds.remove(&ret);
                    }
                }
            }
            "fcntl" => {
                if !ok {
                    return;
                }
                let (Some(fd), Some(cmd)) = (int(e, "fd"), int(e, "cmd")) else { return };
                let arg = int(e, "arg").unwrap_or(0);
                match cmd {
                    F_DUPFD | F_DUPFD_CLOEXEC => match self.fd(pid, fd) {
                        Some(ofd) => self.set_fd(pid, ret, ofd, cmd == F_DUPFD_CLOEXEC),
                        None => self.note(e, format!("F_DUPFD of fd {fd} unknown to the model")),
                    },
                    F_SETFD => {
                        if let Some(f) = self.procs.get_mut(&pid).expect("ensured").fds.get_mut(&fd)
                        {
                            f.cloexec = arg & FD_CLOEXEC != 0;
                        }
                    }
                    F_SETFL => {
                        if let Some(o) = self.fd(pid, fd) {
                            o.borrow_mut().append = arg & O_APPEND != 0;
                        }
                    }
                    _ => {}
                }
            }
            "pipe" | "pipe2" => {
                if !ok {
                    return;
                }
                let fds = match e.arg("pipefd") {
                    Some(ArgValue::Data(d)) if d.len() == 8 => (
                        i32::from_le_bytes(d[..4].try_into().expect("4")) as i64,
                        i32::from_le_bytes(d[4..].try_into().expect("4")) as i64,
                    ),
                    other => {
                        self.problem(e, format!("pipefd is {other:?}, expected 8 bytes"));
                        return;
                    }
                };
                let cloexec = call == "pipe2" && int(e, "flags").unwrap_or(0) & O_CLOEXEC != 0;
                let n = self.pipes.len();
                self.pipes.push((pid, fds.0, fds.1, n));
                for fd in [fds.0, fds.1] {
                    let ofd = Ofd { target: Target::Pipe(n), file: None, pos: 0, append: false };
                    self.set_fd(pid, fd, Rc::new(RefCell::new(ofd)), cloexec);
                }
            }
            "read" | "pread64" | "readv" | "preadv" | "preadv2" | "write" | "pwrite64"
            | "writev" | "pwritev" | "pwritev2" => {
                if ok {
                    self.transfer(e, pid, call, ret);
                }
            }
            "lseek" => {
                if let (true, Some(fd)) = (ok, int(e, "fd")) {
                    if let Some(o) = self.fd(pid, fd) {
                        o.borrow_mut().pos = ret as u64;
                    }
                }
            }
            "ftruncate" | "truncate" => {
                if !ok {
                    return;
                }
                let file = if call == "ftruncate" {
                    int(e, "fd").and_then(|fd| self.target_of(pid, fd)).and_then(|(_, f)| f)
                } else {
                    self.path_arg(e, pid, AT_FDCWD, "path").map(|p| self.file_for(&p))
                };
                if let (Some(f), Some(len)) = (file, int(e, "length")) {
                    self.files[f].data.resize(len as usize, 0);
                }
            }
            "fallocate" => {
                if let (true, Some(0), Some(fd)) = (ok, int(e, "mode"), int(e, "fd")) {
                    let end = (int(e, "offset").unwrap_or(0) + int(e, "len").unwrap_or(0)) as usize;
                    if let Some((_, Some(f))) = self.target_of(pid, fd) {
                        if self.files[f].data.len() < end {
                            self.files[f].data.resize(end, 0);
                        }
                    }
                }
            }
            "copy_file_range" | "sendfile" | "splice" => {
                if ok && ret > 0 {
                    self.copy(e, pid, call, ret);
                }
            }
            "ioctl" => {
                // FICLONE / FICLONERANGE: a reflink (btrfs, XFS) shares the source's blocks.
                let request = int(e, "request").unwrap_or(0) as u32;
                if ok && (request == FICLONE || request == FICLONERANGE) {
                    let (Some(fd), Some(src)) = (int(e, "fd"), int(e, "argp")) else { return };
                    let from = self.target_of(pid, src).map_or(Target::Other("unknown"), |t| t.0);
                    if let Some((to, file)) = self.target_of(pid, fd) {
                        if let Some(f) = file {
                            self.files[f].opaque.push(format!("#{} reflinked", e.unique_id));
                        }
                        self.clones.push((from, to));
                    }
                }
            }
            "mmap" => {
                let prot = int(e, "prot").unwrap_or(0);
                let flags = int(e, "flags").unwrap_or(0);
                if !e.failed() && prot & PROT_WRITE != 0 && flags & MAP_SHARED != 0 {
                    if let Some((_, Some(f))) = int(e, "fd").and_then(|fd| self.target_of(pid, fd))
                    {
                        self.files[f]
                            .opaque
                            .push(format!("#{} shared writable mapping", e.unique_id));
                    }
                }
            }
            "clone" | "clone3" | "fork" | "vfork" => {
                if !ok || ret == 0 {
                    return;
                }
                let flags = match call {
                    "clone" => int(e, "flags").unwrap_or(0),
                    "clone3" => match e.arg("cl_args") {
                        Some(ArgValue::Data(d)) if d.len() >= 8 => {
                            i64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
                        }
                        other => {
                            self.problem(e, format!("cl_args is {other:?}"));
                            0
                        }
                    },
                    _ => 0,
                };
                if flags & CLONE_THREAD != 0 {
                    self.threads.push((pid, tid, ret as i32));
                } else {
                    self.spawns.push((pid, ret as i32));
                    if !self.procs.contains_key(&(ret as i32)) {
                        let copy = self.procs[&pid].clone();
                        self.procs.insert(ret as i32, copy);
                    }
                }
            }
            "execve" | "execveat" => {
                if e.failed() {
                    return;
                }
                let argv = match e.arg("argv") {
                    Some(ArgValue::Strings(v)) => {
                        v.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect()
                    }
                    other => {
                        self.problem(e, format!("argv is {other:?}"));
                        Vec::new()
                    }
                };
                self.execs.push((pid, argv));
                self.procs.get_mut(&pid).expect("ensured").fds.retain(|_, f| !f.cloexec);
            }
            "chdir" => {
                if ok {
                    if let Some(p) = self.path_arg(e, pid, AT_FDCWD, "path") {
                        self.procs.get_mut(&pid).expect("ensured").cwd = p;
                    }
                }
            }
            "fchdir" => {
                if ok {
                    match int(e, "fd").and_then(|fd| self.target_of(pid, fd)).map(|(t, _)| t) {
                        Some(Target::File(p)) => self.procs.get_mut(&pid).expect("ensured").cwd = p,
                        other => self.problem(e, format!("fchdir to {other:?}")),
                    }
                }
            }
            "mkdir" | "mkdirat" => {
                let dirfd =
                    if call == "mkdirat" { int(e, "dirfd").unwrap_or(AT_FDCWD) } else { AT_FDCWD };
                if let (true, Some(p)) = (ok, self.path_arg(e, pid, dirfd, "pathname")) {
                    self.mkdirs.push(p);
                }
            }
            "rename" | "renameat" | "renameat2" => {
                if !ok {
                    return;
                }
                let (od, nd) = if call == "rename" {
                    (AT_FDCWD, AT_FDCWD)
                } else {
                    (int(e, "olddirfd").unwrap_or(AT_FDCWD), int(e, "newdirfd").unwrap_or(AT_FDCWD))
                };
                let (Some(old), Some(new)) =
                    (self.path_arg(e, pid, od, "oldpath"), self.path_arg(e, pid, nd, "newpath"))
                else {
                    return;
                };
                let exchange =
                    call == "renameat2" && int(e, "flags").unwrap_or(0) & RENAME_EXCHANGE != 0;
                self.rename(&old, &new, exchange);
                self.renames.push((old, new));
            }
            "link" | "linkat" => {
                if !ok {
                    return;
                }
                let (od, nd, flags) = if call == "link" {
                    (AT_FDCWD, AT_FDCWD, 0)
                } else {
                    (
                        int(e, "olddirfd").unwrap_or(AT_FDCWD),
                        int(e, "newdirfd").unwrap_or(AT_FDCWD),
                        int(e, "flags").unwrap_or(0),
                    )
                };
                let Some(new) = self.path_arg(e, pid, nd, "newpath") else { return };
                let empty =
                    matches!(e.arg("oldpath"), Some(ArgValue::Data(d)) if strip_nul(d).is_empty());
                let (old, file) = if empty && flags & AT_EMPTY_PATH != 0 {
                    (
                        PathBuf::from(format!("<fd {od}>")),
                        self.target_of(pid, od).and_then(|(_, f)| f),
                    )
                } else {
                    let Some(old) = self.path_arg(e, pid, od, "oldpath") else { return };
                    let f = self.file_for(&old);
                    (old, Some(f))
                };
                if let Some(f) = file {
                    self.names.insert(new.clone(), f);
                }
                self.links.push((old, new));
            }
            "unlink" | "unlinkat" => {
                let dirfd =
                    if call == "unlinkat" { int(e, "dirfd").unwrap_or(AT_FDCWD) } else { AT_FDCWD };
                if let (true, Some(p)) = (ok, self.path_arg(e, pid, dirfd, "pathname")) {
                    self.names.remove(&p);
                    self.unlinks.push(p);
                }
            }
            "symlink" | "symlinkat" => {
                if !ok {
                    return;
                }
                let dirfd = if call == "symlinkat" {
                    int(e, "newdirfd").unwrap_or(AT_FDCWD)
                } else {
                    AT_FDCWD
                };
                let target = match e.arg("target") {
                    Some(ArgValue::Data(d)) => strip_nul(d).to_vec(),
                    other => {
                        self.problem(e, format!("symlink target is {other:?}"));
                        return;
                    }
                };
                if let Some(p) = self.path_arg(e, pid, dirfd, "linkpath") {
                    self.symlinks.push((target, p));
                }
            }
            "fsync" | "fdatasync" | "sync_file_range" => {
                if let (true, Some(fd)) = (ok, int(e, "fd")) {
                    let t = self.target_of(pid, fd).map_or(Target::Other("unknown"), |(t, _)| t);
                    self.syncs.push((pid, tid, call, t));
                }
            }
            _ => {
                // Any other call that makes a descriptor (socket, eventfd, memfd_create, ...).
                if ok && e.def.is_some_and(|d| d.ret == ra_syscalls::Ret::Fd) {
                    let ofd =
                        Ofd { target: Target::Other(call), file: None, pos: 0, append: false };
                    self.set_fd(pid, ret, Rc::new(RefCell::new(ofd)), false);
                }
            }
        }
    }

    fn rename(&mut self, old: &Path, new: &Path, exchange: bool) {
        let under = |p: &Path, root: &Path| p.starts_with(root);
        let moved: Vec<(PathBuf, usize)> = self
            .names
            .iter()
            .filter(|(p, _)| under(p, old))
            .map(|(p, &f)| (p.clone(), f))
            .collect();
        let displaced: Vec<(PathBuf, usize)> = self
            .names
            .iter()
            .filter(|(p, _)| under(p, new))
            .map(|(p, &f)| (p.clone(), f))
            .collect();
        self.names.retain(|p, _| !under(p, old) && !under(p, new));
        let rebase = |p: &Path, from: &Path, to: &Path| {
            let rel = p.strip_prefix(from).expect("under");
            if rel.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rel)
            }
        };
        for (p, f) in moved {
            self.names.insert(rebase(&p, old, new), f);
        }
        if exchange {
            for (p, f) in displaced {
                self.names.insert(rebase(&p, new, old), f);
            }
        }
    }

    // ---- queries --------------------------------------------------------------------------------

    fn image(&self, path: &Path) -> Option<&FileImage> {
        self.names.get(path).map(|&f| &self.files[f])
    }

    fn written_to_std(&self, fd: i64) -> Vec<u8> {
        self.writes
            .iter()
            .filter(|w| w.target == Target::Std(fd))
            .flat_map(|w| w.data.iter().copied())
            .collect()
    }

    fn summary(&self) -> String {
        let mut calls: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &self.events {
            *calls.entry(e.name.as_str()).or_default() += 1;
        }
        let pids: BTreeSet<i32> = self.events.iter().filter_map(|e| e.pid).collect();
        format!("{} events from pids {pids:?}; calls {calls:?}", self.events.len())
    }
}

fn concat<'a>(ios: impl Iterator<Item = &'a Io>) -> Vec<u8> {
    let mut v = Vec::new();
    for io in ios {
        v.extend_from_slice(&io.data);
    }
    v
}

/// None when equal, else a one-line description of the first difference.
fn diff(what: &str, got: &[u8], want: &[u8]) -> Option<String> {
    if got == want {
        return None;
    }
    let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
    Some(format!(
        "{what}: trace gives {} bytes, expected {}; first difference at byte {first}",
        got.len(),
        want.len()
    ))
}

/// Fails the test with every mismatch, the model's problems, and context; also checks what
/// every test checks: no problems in the trace and the program's stdout reproduced from its
/// writes to fd 1.
fn finish(test: &str, rec: &Recording, m: &Model, mut bad: Vec<String>) {
    let out = m.written_to_std(1);
    if let Some(d) = diff("the program's stdout (writes to the inherited fd 1)", &out, &rec.stdout)
    {
        bad.push(d);
    }
    if bad.is_empty() && m.problems.is_empty() {
        return;
    }
    let mut msg =
        format!("{test}: `reanimator record -- {}` recorded a wrong trace\n", rec.command);
    // Long lists are cut: the first lines name the pattern.
    const SHOW: usize = 60;
    let _ = writeln!(msg, "{} mismatch(es) against the ground truth:", bad.len());
    for b in bad.iter().take(SHOW) {
        let _ = writeln!(msg, "  - {b}");
    }
    if bad.len() > SHOW {
        let _ = writeln!(msg, "  ... and {} more", bad.len() - SHOW);
    }
    let _ = writeln!(msg, "{} problem(s) in the trace itself:", m.problems.len());
    for p in m.problems.iter().take(SHOW) {
        let _ = writeln!(msg, "  - {p}");
    }
    if m.problems.len() > SHOW {
        let _ = writeln!(msg, "  ... and {} more", m.problems.len() - SHOW);
    }
    if !m.notes.is_empty() {
        let _ = writeln!(msg, "notes:");
        for n in &m.notes {
            let _ = writeln!(msg, "  - {n}");
        }
    }
    let _ = writeln!(msg, "trace: {} — {}", rec.trace.display(), m.summary());
    let _ = writeln!(msg, "recorder stderr:\n{}", rec.stderr);
    panic!("{msg}");
}

// ---- test data ----------------------------------------------------------------------------------

/// Deterministic bytes: text-like for small sizes, xorshift noise for large ones.
fn content(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if len < 4096 {
                b"abcdefghijklmnopqrstuvwxyz \n"[(x % 28) as usize]
            } else if i % 4096 < 8 {
                b'#'
            } else {
                x as u8
            }
        })
        .collect()
}

/// Writes a tree of regular files `(relative path, size)` plus symlinks `(relative path, target)`
/// under `root`; returns the files with their contents.
fn make_tree(
    root: &Path,
    files: &[(&str, usize)],
    links: &[(&str, &str)],
) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for (i, (rel, size)) in files.iter().enumerate() {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        let c = content(i as u64 + 1, *size);
        std::fs::write(&p, &c).expect("write test file");
        out.insert(PathBuf::from(rel), c);
    }
    for (rel, target) in links {
        std::os::unix::fs::symlink(target, root.join(rel)).expect("symlink");
    }
    out
}

/// Every directory under `root` (inclusive), absolute.
fn dirs_under(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        let mut sub: Vec<PathBuf> = std::fs::read_dir(&out[i])
            .expect("read_dir")
            .map(|d| d.expect("entry").path())
            .filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_dir()))
            .collect();
        sub.sort();
        out.extend(sub);
        i += 1;
    }
    out
}

/// Every regular file under `root`, absolute, sorted.
fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dirs_under(root)
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("read_dir").map(|e| e.expect("entry").path()))
        .filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_file()))
        .collect();
    out.sort();
    out
}

fn program(name: &str) -> PathBuf {
    ra_testkit::program(name)
}

// ---- (1) sqlite3 --------------------------------------------------------------------------------

const SQLITE_PAGE: usize = 4096;

fn sqlite3_inserts_rebuild_the_database_file() {
    if !have_program("sqlite3") {
        return;
    }
    let s = Scratch::new("sqlite");
    let mut sql = String::from("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT NOT NULL);\n");
    for txn in 0..3 {
        sql.push_str("BEGIN;\n");
        for i in 0..100 {
            let k = txn * 100 + i;
            let v = format!("row-{k:05}-{}", "xyz".repeat(k % 40 + 10));
            let _ = writeln!(sql, "INSERT INTO t(k, v) VALUES({k}, '{v}');");
        }
        sql.push_str("COMMIT;\n");
    }
    let script = s.path("script.sql");
    std::fs::write(&script, &sql).expect("write script");
    let rec = record(&s, "sqlite", &s.dir, &[os("sqlite3"), os("db.sqlite")], Some(&script), &[]);
    check_status_and_info(&rec, 0);
    let m = Model::of(&rec);
    let db_path = s.path("db.sqlite");
    let journal = s.path("db.sqlite-journal");
    let db = std::fs::read(&db_path).expect("the database file");
    // The workload itself did what we think (checked without tracing).
    let rows = sh(&s.dir, &["sqlite3", "db.sqlite", "SELECT count(*) FROM t;"]);
    assert_eq!(String::from_utf8_lossy(&rows).trim(), "300", "the workload should insert 300 rows");

    let mut bad = Vec::new();
    if let Some(d) = diff(
        "the SQL script read from stdin",
        &concat(m.reads.iter().filter(|r| r.target == Target::Std(0))),
        sql.as_bytes(),
    ) {
        bad.push(d);
    }
    let db_opens: Vec<&Open> = m.opens.iter().filter(|o| o.path == db_path).collect();
    if db_opens.is_empty() {
        bad.push(format!("no successful open of {}", db_path.display()));
    }
    let journal_opens =
        m.opens.iter().filter(|o| o.path == journal && o.flags & O_CREAT != 0).count();
    if journal_opens < 3 {
        bad.push(format!(
            "{journal_opens} creating opens of {}, expected one per transaction (>= 3)",
            journal.display()
        ));
    }
    let journal_unlinks = m.unlinks.iter().filter(|p| **p == journal).count();
    if journal_unlinks < 3 {
        bad.push(format!(
            "{journal_unlinks} unlinks of the journal, expected one per commit (>= 3)"
        ));
    }
    let db_file = db_opens.first().map(|o| o.file);
    let db_pwrites: Vec<&Io> = m
        .writes
        .iter()
        .filter(|w| w.call == "pwrite64" && w.file == db_file && db_file.is_some())
        .collect();
    if db_pwrites.is_empty() {
        bad.push("no pwrite64 to the database file".into());
    }
    let journal_writes =
        m.writes.iter().filter(|w| w.target == Target::File(journal.clone())).count();
    if journal_writes == 0 {
        bad.push("no writes to the journal".into());
    }
    let syncs = |p: &Path| {
        m.syncs.iter().filter(|(_, _, _, t)| *t == Target::File(p.to_path_buf())).count()
    };
    if syncs(&db_path) < 4 {
        bad.push(format!(
            "{} fsync/fdatasync of the database, expected one per commit (>= 4)",
            syncs(&db_path)
        ));
    }
    if syncs(&journal) == 0 {
        bad.push("no fsync/fdatasync of the journal".into());
    }
    // Strong check: every write, ftruncate, rename and unlink replayed on an empty file gives
    // the database byte for byte.
    match m.image(&db_path) {
        None => bad.push("the trace never names the database file".into()),
        Some(img) => {
            if let Some(d) = diff("database rebuilt from the trace's writes", &img.data, &db) {
                let pages: Vec<usize> = (0..db.len().max(img.data.len()).div_ceil(SQLITE_PAGE))
                    .filter(|&p| {
                        let r = |v: &[u8]| {
                            v.get(p * SQLITE_PAGE..((p + 1) * SQLITE_PAGE).min(v.len()))
                                .map(<[u8]>::to_vec)
                        };
                        r(&img.data) != r(&db)
                    })
                    .collect();
                bad.push(format!("{d}; differing pages {pages:?}"));
            }
        }
    }
    // Simpler check, independent of the descriptor model's position tracking: every page of
    // the database equals the data of the LAST pwrite64 at its offset.
    let mut last: HashMap<u64, &Io> = HashMap::new();
    for w in &db_pwrites {
        last.insert(w.offset, w);
    }
    for (p, page) in db.chunks(SQLITE_PAGE).enumerate() {
        match last.get(&((p * SQLITE_PAGE) as u64)) {
            None => bad.push(format!("page {p}: no pwrite64 at offset {}", p * SQLITE_PAGE)),
            Some(w) => {
                if let Some(d) = diff(
                    &format!("page {p} vs the last pwrite64 at its offset (#{})", w.uid),
                    &w.data,
                    page,
                ) {
                    bad.push(d);
                }
            }
        }
    }
    finish("sqlite3", &rec, &m, bad);
}

// ---- (2) tar x ----------------------------------------------------------------------------------

const TREE: &[(&str, usize)] = &[
    ("src/empty", 0),
    ("src/one", 1),
    ("src/small.txt", 100),
    ("src/page", 4096),
    ("src/record", 10240),
    ("src/a/mid.bin", 70_000),
    ("src/a/b/big.bin", 300_000),
    ("src/a/b/c/deep.txt", 2_000),
    ("src/a/empty2", 0),
    ("src/z/last.txt", 513),
];

fn tar_x_writes_every_extracted_byte() {
    if !have_program("tar") {
        return;
    }
    let s = Scratch::new("tarx");
    let files = make_tree(&s.dir, TREE, &[("src/link", "a/mid.bin")]);
    sh(&s.dir, &["tar", "cf", "archive.tar", "src"]);
    let archive = std::fs::read(s.path("archive.tar")).expect("archive");
    let out = s.path("out");
    std::fs::create_dir(&out).expect("mkdir out");
    let rec = record(&s, "tarx", &out, &[os("tar"), os("xf"), os("../archive.tar")], None, &[]);
    check_status_and_info(&rec, 0);
    let m = Model::of(&rec);
    let mut bad = Vec::new();
    for (rel, want) in &files {
        let p = out.join(rel);
        assert_eq!(
            &std::fs::read(&p).expect("extracted"),
            want,
            "tar itself extracted {rel:?} wrong"
        );
        if !m.opens.iter().any(|o| o.path == p && o.flags & O_CREAT != 0) {
            bad.push(format!("{}: no creating open", p.display()));
        }
        let written = concat(m.writes.iter().filter(|w| w.target == Target::File(p.clone())));
        if let Some(d) = diff(
            &format!("{}: concatenated writes to its descriptors", p.display()),
            &written,
            want,
        ) {
            bad.push(d);
        }
        if let Some(d) = m
            .image(&p)
            .and_then(|img| diff(&format!("{}: rebuilt file", p.display()), &img.data, want))
        {
            bad.push(d);
        }
    }
    for d in dirs_under(&out.join("src")) {
        if !m.mkdirs.contains(&d) {
            bad.push(format!("{}: no mkdir/mkdirat", d.display()));
        }
    }
    let link = out.join("src/link");
    if !m.symlinks.iter().any(|(t, p)| *p == link && t == b"a/mid.bin") {
        bad.push(format!("no symlink \"a/mid.bin\" -> {}; saw {:?}", link.display(), m.symlinks));
    }
    // The archive as read: every read holds the archive's bytes at its position, and tar read
    // at least everything but the last record.
    let arch = s.path("archive.tar");
    let reads: Vec<&Io> =
        m.reads.iter().filter(|r| r.target == Target::File(arch.clone())).collect();
    for r in &reads {
        let want = archive.get(r.offset as usize..r.offset as usize + r.data.len()).unwrap_or(&[]);
        if let Some(d) =
            diff(&format!("read #{} of the archive at {}", r.uid, r.offset), &r.data, want)
        {
            bad.push(d);
        }
    }
    let total: usize = reads.iter().map(|r| r.data.len()).sum();
    if total + 10240 < archive.len() {
        bad.push(format!("reads of the archive total {total} bytes of {}", archive.len()));
    }
    finish("tar x", &rec, &m, bad);
}

// ---- (3) tar c ----------------------------------------------------------------------------------

fn tar_c_reads_every_source_byte() {
    if !have_program("tar") {
        return;
    }
    let s = Scratch::new("tarc");
    let files = make_tree(&s.dir, TREE, &[("src/link", "small.txt")]);
    let rec =
        record(&s, "tarc", &s.dir, &[os("tar"), os("cf"), os("archive.tar"), os("src")], None, &[]);
    check_status_and_info(&rec, 0);
    let m = Model::of(&rec);
    let mut bad = Vec::new();
    for (rel, want) in &files {
        let p = s.dir.join(rel);
        let opened: Vec<usize> = m.opens.iter().filter(|o| o.path == p).map(|o| o.file).collect();
        if opened.is_empty() {
            // GNU tar doesn't open empty files.
            if !want.is_empty() {
                bad.push(format!("{}: never opened", p.display()));
            }
            continue;
        }
        let reads: Vec<&Io> =
            m.reads.iter().filter(|r| r.file.is_some_and(|f| opened.contains(&f))).collect();
        for r in &reads {
            let w = want.get(r.offset as usize..r.offset as usize + r.data.len()).unwrap_or(&[]);
            if let Some(d) =
                diff(&format!("{}: read #{} at {}", p.display(), r.uid, r.offset), &r.data, w)
            {
                bad.push(d);
            }
        }
        if let Some(d) =
            diff(&format!("{}: concatenated reads", p.display()), &concat(reads.into_iter()), want)
        {
            bad.push(d);
        }
    }
    // tar's own output, rebuilt from its writes.
    let arch = s.path("archive.tar");
    let archive = std::fs::read(&arch).expect("archive");
    match m.image(&arch) {
        Some(img) => {
            bad.extend(diff("archive.tar rebuilt from the trace's writes", &img.data, &archive))
        }
        None => bad.push("the trace never names archive.tar".into()),
    }
    finish("tar c", &rec, &m, bad);
}

// ---- (4) git ------------------------------------------------------------------------------------

fn git_init_add_commit_writes_objects_and_index() {
    if !have_program("git") || !have_program("sh") {
        return;
    }
    let s = Scratch::new("git");
    let home = s.path("home");
    let repo = s.path("repo");
    std::fs::create_dir_all(&home).expect("home");
    make_tree(&repo, &[("a.txt", 100), ("sub/b.txt", 3000), ("sub/deeper/c.bin", 50_000)], &[]);
    let script = "git init -q && git add . && git -c user.name=Rec -c user.email=rec@example.com commit -q -m first";
    let env = [
        ("HOME", home.as_os_str()),
        ("GIT_CONFIG_NOSYSTEM", os("1")),
        ("GIT_CONFIG_GLOBAL", os("/dev/null")),
        ("LC_ALL", os("C")),
    ];
    let rec = record(&s, "git", &repo, &[os("sh"), os("-c"), os(script)], None, &env);
    check_status_and_info(&rec, 0);
    let m = Model::of(&rec);
    let git = repo.join(".git");
    let mut bad = Vec::new();
    // Processes: sh and its three git children, each a child of sh.
    let gits: Vec<i32> = m
        .execs
        .iter()
        .filter(|(_, a)| a.first().is_some_and(|a| a == "git"))
        .map(|(p, _)| *p)
        .collect();
    if gits.len() < 3 {
        bad.push(format!(
            "{} execs of git, expected 3 (init, add, commit); execs {:?}",
            gits.len(),
            m.execs
        ));
    }
    for g in &gits {
        let parent = m.events.iter().find(|e| e.pid == Some(*g)).and_then(|e| e.ppid);
        if !m.spawns.iter().any(|(p, c)| c == g && Some(*p) == parent) {
            bad.push(format!(
                "git pid {g}: no fork/clone event in its parent {parent:?} returning it"
            ));
        }
    }
    // Directories.
    for d in [git.clone(), git.join("objects"), git.join("refs")] {
        if !m.mkdirs.contains(&d) {
            bad.push(format!("{}: no mkdir", d.display()));
        }
    }
    let object_dirs: Vec<PathBuf> = std::fs::read_dir(git.join("objects"))
        .expect("objects")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n.len() == 2))
        .collect();
    assert!(!object_dirs.is_empty(), "git wrote no loose objects");
    for d in &object_dirs {
        if !m.mkdirs.contains(d) {
            bad.push(format!("{}: no mkdir", d.display()));
        }
    }
    // Loose objects: created under a temporary name, written, then linked or renamed.
    for obj in object_dirs.iter().flat_map(|d| files_under(d)) {
        let want = std::fs::read(&obj).expect("object");
        let Some(&f) = m.names.get(&obj) else {
            bad.push(format!("{}: no link/rename gives this name", obj.display()));
            continue;
        };
        if !m.opens.iter().any(|o| o.file == f && o.flags & O_CREAT != 0) {
            bad.push(format!("{}: its inode was never created by an open", obj.display()));
        }
        if !m.writes.iter().any(|w| w.file == Some(f)) {
            bad.push(format!("{}: no writes", obj.display()));
        }
        bad.extend(diff(&format!("{}: rebuilt object", obj.display()), &m.files[f].data, &want));
    }
    let (lock, index) = (git.join("index.lock"), git.join("index"));
    if !m.renames.iter().any(|(a, b)| *a == lock && *b == index) {
        bad.push(format!("no rename {} -> {}", lock.display(), index.display()));
    }
    // Every file git left in .git, rebuilt from the trace.
    for f in files_under(&git) {
        let want = std::fs::read(&f).expect("git file");
        match m.image(&f) {
            None => bad.push(format!("{}: not created in the trace", f.display())),
            Some(img) if !img.opaque.is_empty() => opaque_writes(&mut bad, &f, &img.opaque),
            Some(img) => {
                bad.extend(diff(&format!("{}: rebuilt file", f.display()), &img.data, &want))
            }
        }
    }
    finish("git", &rec, &m, bad);
}

/// A file written through a shared mapping or an in-kernel copy can't be rebuilt from the
/// trace; git is not expected to write any that way.
fn opaque_writes(bad: &mut Vec<String>, f: &Path, why: &[String]) {
    bad.push(format!("{}: written outside read/write calls: {why:?}", f.display()));
}

// ---- (5) cp -r ----------------------------------------------------------------------------------

/// 20 regular files (three empty, one of 1 MiB) and a symlink.
const CP_TREE: &[(&str, usize)] = &[
    ("src/e0", 0),
    ("src/e1", 0),
    ("src/d/e2", 0),
    ("src/one", 1),
    ("src/two", 2),
    ("src/s100", 100),
    ("src/s4095", 4095),
    ("src/s4096", 4096),
    ("src/s4097", 4097),
    ("src/d/a", 1000),
    ("src/d/b", 20_000),
    ("src/d/c", 65_536),
    ("src/d/d", 131_073),
    ("src/d/x/1", 7),
    ("src/d/x/2", 300),
    ("src/d/x/3", 9000),
    ("src/d/x/y/4", 50_000),
    ("src/d/x/y/5", 12),
    ("src/m/mib", 1 << 20),
    ("src/m/z", 77),
];

fn cp_r_reads_and_writes_every_file() {
    if !have_program("cp") {
        return;
    }
    let s = Scratch::new("cp");
    let files = make_tree(&s.dir, CP_TREE, &[("src/d/link", "../s100")]);
    assert_eq!(files.len(), 20);
    // --reflink=never: coreutils >= 9 otherwise copies with copy_file_range, which moves the
    // bytes inside the kernel (no buffers to record; see the next test).
    let rec = record(
        &s,
        "cp",
        &s.dir,
        &[os("cp"), os("-r"), os("--reflink=never"), os("src"), os("dst")],
        None,
        &[],
    );
    check_status_and_info(&rec, 0);
    let m = Model::of(&rec);
    let mut bad = Vec::new();
    for (rel, want) in &files {
        let src = s.dir.join(rel);
        let dst = s.path("dst").join(rel.strip_prefix("src").expect("under src"));
        assert_eq!(&std::fs::read(&dst).expect("copied"), want, "cp itself copied {rel:?} wrong");
        let read = concat(m.reads.iter().filter(|r| r.target == Target::File(src.clone())));
        bad.extend(diff(&format!("{}: concatenated reads", src.display()), &read, want));
        if !m.opens.iter().any(|o| o.path == src) {
            bad.push(format!("{}: never opened", src.display()));
        }
        if !m.opens.iter().any(|o| o.path == dst && o.flags & O_CREAT != 0) {
            bad.push(format!("{}: no creating open", dst.display()));
        }
        let written = concat(m.writes.iter().filter(|w| w.target == Target::File(dst.clone())));
        bad.extend(diff(&format!("{}: concatenated writes", dst.display()), &written, want));
        if let Some(img) = m.image(&dst) {
            bad.extend(diff(&format!("{}: rebuilt file", dst.display()), &img.data, want));
        }
    }
    for d in dirs_under(&s.path("dst")) {
        if !m.mkdirs.contains(&d) {
            bad.push(format!("{}: no mkdir/mkdirat", d.display()));
        }
    }
    let link = s.path("dst/d/link");
    if !m.symlinks.iter().any(|(t, p)| *p == link && t == b"../s100") {
        bad.push(format!("no symlink \"../s100\" -> {}; saw {:?}", link.display(), m.symlinks));
    }
    finish("cp -r", &rec, &m, bad);
}

fn cp_r_with_kernel_copies_accounts_for_every_byte() {
    if !have_program("cp") {
        return;
    }
    let s = Scratch::new("cpk");
    let files = make_tree(&s.dir, CP_TREE, &[("src/d/link", "../s100")]);
    let rec = record(&s, "cpk", &s.dir, &[os("cp"), os("-r"), os("src"), os("dst")], None, &[]);
    check_status_and_info(&rec, 0);
    let m = Model::of(&rec);
    let mut bad = Vec::new();
    for (rel, want) in &files {
        let src = s.dir.join(rel);
        let dst = s.path("dst").join(rel.strip_prefix("src").expect("under src"));
        let (from, to) = (Target::File(src.clone()), Target::File(dst.clone()));
        if !m.opens.iter().any(|o| o.path == dst && o.flags & O_CREAT != 0) {
            bad.push(format!("{}: no creating open", dst.display()));
        }
        // On a file system with reflinks (btrfs, XFS) cp clones: no bytes move at all.
        if m.clones.iter().any(|(a, b)| *a == from && *b == to) {
            continue;
        }
        // Bytes moved by copy_file_range / sendfile / splice between the two, plus any
        // read/write fallback (whose data must be the file's).
        let kernel: u64 =
            m.copies.iter().filter(|c| c.from == from && c.to == to).map(|c| c.bytes).sum();
        let written = concat(m.writes.iter().filter(|w| w.target == to));
        if kernel as usize + written.len() != want.len() {
            bad.push(format!(
                "{}: {kernel} bytes copied in the kernel + {} written = {}, file has {}",
                dst.display(),
                written.len(),
                kernel as usize + written.len(),
                want.len()
            ));
        }
        if kernel == 0 {
            bad.extend(diff(&format!("{}: concatenated writes", dst.display()), &written, want));
        }
    }
    finish("cp -r (kernel copies)", &rec, &m, bad);
}

// ---- (6) mtwriter -------------------------------------------------------------------------------

fn mtwriter_threads_each_pwrite_their_pattern() {
    let s = Scratch::new("mtwriter");
    let dir = s.path("out");
    std::fs::create_dir(&dir).expect("out");
    let (threads, blocks) = (4usize, 16usize);
    let exe = program("mtwriter");
    let rec = record(
        &s,
        "mtwriter",
        &s.dir,
        &[exe.as_os_str(), dir.as_os_str(), os(&threads.to_string()), os(&blocks.to_string())],
        None,
        &[],
    );
    check_status_and_info(&rec, 0);
    let report: serde_json::Value = serde_json::from_slice(&rec.stdout).unwrap_or_else(|e| {
        panic!("mtwriter's JSON ({e}): {}", String::from_utf8_lossy(&rec.stdout))
    });
    let m = Model::of(&rec);
    let mut bad = Vec::new();
    let pid = report["pid"].as_i64().expect("pid") as i32;
    let bs = report["block_size"].as_u64().expect("block_size") as usize;
    let others: BTreeSet<i32> =
        m.events.iter().filter_map(|e| e.pid).filter(|&p| p != pid).collect();
    if !others.is_empty() {
        bad.push(format!("events from pids {others:?} besides mtwriter's {pid}"));
    }
    let ppids: BTreeSet<Option<i32>> = m.events.iter().map(|e| e.ppid).collect();
    if ppids.len() != 1 || ppids.contains(&None) {
        bad.push(format!("all events of one process should carry one ppid; saw {ppids:?}"));
    }
    let pwriters: BTreeSet<i32> =
        m.writes.iter().filter(|w| w.call == "pwrite64").map(|w| w.tid).collect();
    let reported: BTreeSet<i32> = report["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| t["tid"].as_i64().expect("tid") as i32)
        .collect();
    if pwriters.len() != threads || pwriters != reported {
        bad.push(format!("pwrite64 from tids {pwriters:?}; mtwriter's threads are {reported:?}"));
    }
    let created: BTreeSet<i32> =
        m.threads.iter().filter(|(p, _, _)| *p == pid).map(|(_, _, t)| *t).collect();
    if created != reported {
        bad.push(format!(
            "clone/clone3 (CLONE_THREAD) returned {created:?}; threads are {reported:?}"
        ));
    }
    for t in report["threads"].as_array().expect("threads") {
        let (index, tid) =
            (t["index"].as_u64().expect("index") as usize, t["tid"].as_i64().expect("tid") as i32);
        let path = PathBuf::from(t["file"].as_str().expect("file"));
        let fd = t["fd"].as_i64().expect("fd");
        let pattern = |b: usize| -> Vec<u8> {
            (0..bs).map(|k| ((index + 1) * 37 + b * 11 + k) as u8).collect()
        };
        if !m.opens.iter().any(|o| o.tid == tid && o.path == path && o.fd == fd) {
            bad.push(format!("thread {tid}: no open of {} returning fd {fd}", path.display()));
        }
        let mine: Vec<&Io> =
            m.writes.iter().filter(|w| w.tid == tid && w.call == "pwrite64").collect();
        let n = t["pwrites"].as_u64().expect("pwrites") as usize;
        let bytes: usize = mine.iter().map(|w| w.data.len()).sum();
        if mine.len() != n || bytes as u64 != t["bytes"].as_u64().expect("bytes") {
            bad.push(format!(
                "thread {tid}: {} pwrite64 of {bytes} bytes in the trace; it reports {n} of {}",
                mine.len(),
                t["bytes"]
            ));
        }
        let mut offsets = BTreeSet::new();
        for w in &mine {
            if w.fd != fd || w.target != Target::File(path.clone()) {
                bad.push(format!(
                    "thread {tid}: pwrite64 #{} on fd {} ({:?}), expected fd {fd} ({})",
                    w.uid,
                    w.fd,
                    w.target,
                    path.display()
                ));
            }
            let b = w.offset as usize / bs;
            if w.offset as usize % bs != 0 || b >= blocks {
                bad.push(format!("thread {tid}: pwrite64 #{} at offset {}", w.uid, w.offset));
                continue;
            }
            offsets.insert(b);
            bad.extend(diff(
                &format!("thread {tid}: pwrite64 #{} (block {b})", w.uid),
                &w.data,
                &pattern(b),
            ));
        }
        if offsets.len() != blocks {
            bad.push(format!("thread {tid}: blocks written {offsets:?}, expected 0..{blocks}"));
        }
        let fsyncs = m
            .syncs
            .iter()
            .filter(|(_, t2, c, tg)| {
                *t2 == tid && *c == "fsync" && *tg == Target::File(path.clone())
            })
            .count();
        if fsyncs != t["fsyncs"].as_u64().expect("fsyncs") as usize {
            bad.push(format!(
                "thread {tid}: {fsyncs} fsync in the trace, it reports {}",
                t["fsyncs"]
            ));
        }
        let want: Vec<u8> = (0..blocks).flat_map(pattern).collect();
        assert_eq!(
            std::fs::read(&path).expect("mtwriter file"),
            want,
            "mtwriter itself wrote {} wrong",
            path.display()
        );
        if let Some(img) = m.image(&path) {
            bad.extend(diff(&format!("{}: rebuilt file", path.display()), &img.data, &want));
        }
    }
    finish("mtwriter", &rec, &m, bad);
}

// ---- (7) forkpipe -------------------------------------------------------------------------------

fn forkpipe_child_and_parent_agree_on_the_pipe() {
    let s = Scratch::new("forkpipe");
    let dir = s.path("out");
    std::fs::create_dir(&dir).expect("out");
    let exe = program("forkpipe");
    // The parent exits 3 on success: the recorder must pass that status on.
    let rec =
        record(&s, "forkpipe", &s.dir, &[exe.as_os_str(), dir.as_os_str(), os("3")], None, &[]);
    check_status_and_info(&rec, 3);
    let r: serde_json::Value = serde_json::from_slice(&rec.stdout).unwrap_or_else(|e| {
        panic!("forkpipe's JSON ({e}): {}", String::from_utf8_lossy(&rec.stdout))
    });
    let m = Model::of(&rec);
    let mut bad = Vec::new();
    let num = |k: &str| r[k].as_i64().unwrap_or_else(|| panic!("{k} in {r}"));
    let (parent, child) = (num("parent_pid") as i32, num("child_pid") as i32);
    let pids: BTreeSet<i32> = m.events.iter().filter_map(|e| e.pid).collect();
    if pids != BTreeSet::from([parent, child]) {
        bad.push(format!("events from pids {pids:?}, expected parent {parent} and child {child}"));
    }
    let child_ppids: BTreeSet<Option<i32>> =
        m.events.iter().filter(|e| e.pid == Some(child)).map(|e| e.ppid).collect();
    if child_ppids != BTreeSet::from([Some(parent)]) {
        bad.push(format!("the child's events carry ppid {child_ppids:?}, expected {parent}"));
    }
    if !m.spawns.contains(&(parent, child)) {
        bad.push(format!("no fork/clone in {parent} returning {child}; saw {:?}", m.spawns));
    }
    let (rfd, wfd) = (num("pipe_read_fd"), num("pipe_write_fd"));
    let Some(&(_, _, _, pipe)) =
        m.pipes.iter().find(|(p, a, b, _)| *p == parent && *a == rfd && *b == wfd)
    else {
        bad.push(format!("no pipe/pipe2 in {parent} returning [{rfd}, {wfd}]; saw {:?}", m.pipes));
        finish("forkpipe", &rec, &m, bad);
        return;
    };
    let message: Vec<u8> =
        (0..5000).flat_map(|i| format!("forkpipe line {i:05}\n").into_bytes()).collect();
    let sent: Vec<&Io> = m.writes.iter().filter(|w| w.target == Target::Pipe(pipe)).collect();
    let got: Vec<&Io> = m.reads.iter().filter(|w| w.target == Target::Pipe(pipe)).collect();
    if let Some(w) = sent.iter().find(|w| w.pid != child || w.fd != wfd) {
        bad.push(format!(
            "pipe write #{} by pid {} on fd {}, expected the child {child} on fd {wfd}",
            w.uid, w.pid, w.fd
        ));
    }
    if let Some(w) = got.iter().find(|w| w.pid != parent || w.fd != rfd) {
        bad.push(format!(
            "pipe read #{} by pid {} on fd {}, expected the parent {parent} on fd {rfd}",
            w.uid, w.pid, w.fd
        ));
    }
    let (sent, got) = (concat(sent.into_iter()), concat(got.iter().copied()));
    bad.extend(diff("the child's writes to the pipe", &sent, &message));
    bad.extend(diff("the parent's reads from the pipe vs the child's writes", &got, &sent));
    if got.len() as i64 != num("pipe_bytes_read") || sent.len() as i64 != num("pipe_bytes_written")
    {
        bad.push(format!(
            "pipe bytes: trace {} written / {} read; forkpipe reports {r}",
            sent.len(),
            got.len()
        ));
    }
    let nonempty_reads =
        m.reads.iter().filter(|w| w.target == Target::Pipe(pipe) && !w.data.is_empty()).count();
    if nonempty_reads as i64 != num("pipe_reads") {
        bad.push(format!(
            "{nonempty_reads} non-empty pipe reads in the trace; forkpipe made {}",
            num("pipe_reads")
        ));
    }
    for (key, who) in [("child_file", child), ("parent_file", parent)] {
        let p = PathBuf::from(r[key].as_str().expect("file"));
        let want = std::fs::read(&p).expect("forkpipe's file");
        let w: Vec<&Io> = m.writes.iter().filter(|w| w.target == Target::File(p.clone())).collect();
        if let Some(x) = w.iter().find(|x| x.pid != who) {
            bad.push(format!(
                "{}: written by pid {} (#{}), expected {who}",
                p.display(),
                x.pid,
                x.uid
            ));
        }
        bad.extend(diff(
            &format!("{}: concatenated writes", p.display()),
            &concat(w.into_iter()),
            &want,
        ));
    }
    bad.extend(diff(
        "parent.txt vs the pipe's bytes",
        &std::fs::read(dir.join("parent.txt")).unwrap_or_default(),
        &message,
    ));
    finish("forkpipe", &rec, &m, bad);
}

// ---- (8) fio's io_uring engine -------------------------------------------------------------------

/// fio's io_uring engine: its job process gets io_uring worker threads, which no tracer can
/// trace. The recording must finish and hold the job's calls: the open of its file and the
/// io_uring calls (the ring's reads and writes are no system calls). (The ptrace backend once let
/// a new child's first SIGSTOP through when the child's creation event came first: the whole
/// process entered a group stop, the traced threads were resumed from it, the worker stayed
/// stopped, and fio waited for its completions for ever.)
fn fio_io_uring_records_and_finishes() {
    if !have_program("fio") {
        return;
    }
    let s = Scratch::new("fio-uring");
    let dir = format!("--directory={}", s.dir.display());
    let args = [
        "fio",
        "--name=u",
        &dir,
        "--size=1M",
        "--bs=4k",
        "--rw=randwrite",
        "--ioengine=io_uring",
        "--iodepth=4",
        "--output=/dev/null",
    ];
    let cmd: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let rec = record(&s, "fio", &s.dir, &cmd, None, &[]);
    check_status_and_info(&rec, 0);
    let r = TraceReader::open(&rec.trace).expect("open the trace");
    let job = s.path("u.0.0").into_os_string().into_encoded_bytes();
    let opened = r.events(Some(&["openat"])).map(|e| e.expect("event")).any(|e| {
        e.arg("pathname").and_then(ArgValue::as_data).is_some_and(|p| strip_nul(p) == &job[..])
    });
    assert!(opened, "no openat of fio's job file in the trace of {}", rec.command);
    let names: BTreeSet<String> = r.events(None).map(|e| e.expect("event").name).collect();
    for call in ["io_uring_setup", "io_uring_enter"] {
        assert!(names.contains(call), "no {call} in the trace of {}", rec.command);
    }
}
