//! Test programs for reanimator's end-to-end tests, and small helpers shared by them.
//!
//! `build.rs` compiles every `c/*.c` of this crate with the system C compiler into
//! `$OUT_DIR/bin/<stem>`; [`program`] returns the path of one of them. The programs:
//!
//! - `workload`: makes every call of the default (`storage`) capture set directly through
//!   `syscall(2)` with sentinel arguments, in a scratch directory, and logs each call with its
//!   arguments, buffers and result as one JSON line (see the comment at the top of
//!   `c/workload.c`). `crates/cli/tests/record_conformance.rs` records it and compares the trace
//!   with the log.
//!
//! Tests that need the `reanimator` binary live in `crates/cli/tests` (only that crate's tests
//! get `CARGO_BIN_EXE_reanimator`) and use this crate as a dev-dependency.
//!
//! # Parts
//!
//! Test programs in C, built with the system `cc` by `build.rs` from `c/*.c`: the conformance
//! `workload` (every storage call with sentinel values, logged as JSON), `mtwriter`, `forkpipe`,
//! `sigrestart`, `threadexec`, `exitgroup`, `stress` (threaded writer/reader that reports its own
//! counts), `mmapio` (I/O through shared mappings), `mmapfolio` (stores to large folios one fault
//! maps whole), `mmapread` (reads through a read-only shared or private mapping), `mmapsync`
//! (stores after msync), `mmapkwrite` (`read(2)` into a mapping), `memfdname` (a name the kernel
//! never read), `fidelity` (one mode per replay-fidelity finding of issue 39: the kernel's checks
//! before a lookup, modes passed as given, 64-bit lock ranges and out-of-range times, xattr size
//! queries and lists, mapped reads, two processes racing on a directory, a tree deeper than
//! `PATH_MAX`). Helpers: `scratch_dir`, `privileged` (skip, or fail under
//! REANIMATOR_REQUIRE_PRIVILEGED=1), `both_backends!` / `backend()` / `ebpf_available()` (one test
//! per capture backend).

use std::cell::Cell;
use std::path::PathBuf;

/// Where `build.rs` put the compiled programs.
const BIN_DIR: &str = concat!(env!("OUT_DIR"), "/bin");

/// The path of the compiled test program `name` (the stem of `c/<name>.c`).
///
/// Panics, naming the programs that exist, when there is no such program.
pub fn program(name: &str) -> PathBuf {
    let p = PathBuf::from(BIN_DIR).join(name);
    if !p.is_file() {
        panic!("no test program `{name}` in {BIN_DIR}; built: {:?}", programs());
    }
    p
}

/// The names of all compiled test programs, sorted.
pub fn programs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(BIN_DIR)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A fresh, empty directory for one test: `$TMPDIR/ra-<tag>-<pid>`, removed first if a previous
/// run left it behind. The caller removes it when done (or keeps it to inspect a failure).
pub fn scratch_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ra-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("create {}: {e}", d.display()));
    d
}

/// Wait for `child` with `wait4`, which also gives its peak RSS: `Some((wait status, peak RSS
/// in KB))`, or `None` after killing and reaping it when it still runs after `limit`.
// The child is reaped by wait4 (which clippy does not know about).
#[allow(clippy::zombie_processes)]
pub fn wait_with_peak_rss(
    mut child: std::process::Child,
    limit: std::time::Duration,
) -> Option<(i32, u64)> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let mut st = 0;
        // SAFETY: an all-zero rusage is valid; wait4 fills it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: plain wait4 on our own child, pointers to live locals.
        let r = unsafe { libc::wait4(child.id() as i32, &mut st, libc::WNOHANG, &mut ru) };
        assert!(r >= 0, "wait4: {}", std::io::Error::last_os_error());
        if r > 0 {
            return Some((st, ru.ru_maxrss as u64));
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// True when CI asked for every fixture and program to be present
/// (`REANIMATOR_REQUIRE_TESTDATA=1`): a test that would skip fails instead.
pub fn require_testdata() -> bool {
    std::env::var("REANIMATOR_REQUIRE_TESTDATA").as_deref() == Ok("1")
}

/// `../shared/testdata/<rel>` beside the repository, or None: the test skips with a printed
/// reason, or fails under [`require_testdata`].
pub fn shared_testdata(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata").join(rel);
    if p.exists() {
        return Some(p);
    }
    assert!(!require_testdata(), "{} missing and REANIMATOR_REQUIRE_TESTDATA=1", p.display());
    eprintln!("skip: {} not found (../shared/testdata is absent)", p.display());
    None
}

/// True when `program` is an executable on PATH; otherwise prints the skip line, or fails
/// under [`require_testdata`].
pub fn have_program(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let found = std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            d.join(program)
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    });
    if !found {
        assert!(
            !require_testdata(),
            "{program} not installed and REANIMATOR_REQUIRE_TESTDATA=1 \
             (bash scripts/install-deps.sh installs it)"
        );
        eprintln!("skip: {program} not installed");
    }
    found
}

/// A fresh, empty directory for one test case of the current backend:
/// `$TMPDIR/ra-<tag>-<pid>-<name>-<backend>`, removed first if a previous run left it behind.
/// The caller removes it when done (or keeps it to inspect a failure).
pub fn backend_scratch_dir(tag: &str, name: &str) -> PathBuf {
    let d =
        std::env::temp_dir().join(format!("ra-{tag}-{}-{name}-{}", std::process::id(), backend()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("create {}: {e}", d.display()));
    d
}

/// [`backend_scratch_dir`] with an empty `work/` in it, canonical (traces record canonical
/// paths).
pub fn case_dir(tag: &str, name: &str) -> PathBuf {
    let base = backend_scratch_dir(tag, name);
    std::fs::create_dir(base.join("work"))
        .unwrap_or_else(|e| panic!("create {}: {e}", base.display()));
    base.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", base.display()))
}

/// Whether a test that needs privileges or kernel features can run: `available` is the probe's
/// answer (`Err(reason)` when it cannot). When it cannot, prints `skip: <what>: <reason>` and
/// returns false, or panics when `REANIMATOR_REQUIRE_PRIVILEGED=1` (CI runs as root and must
/// run every such test).
pub fn privileged(what: &str, available: Result<(), String>) -> bool {
    match available {
        Ok(()) => true,
        Err(reason) => {
            if std::env::var("REANIMATOR_REQUIRE_PRIVILEGED").as_deref() == Ok("1") {
                panic!("{what} cannot run here: {reason} (REANIMATOR_REQUIRE_PRIVILEGED=1)");
            }
            eprintln!("skip: {what}: {reason}");
            false
        }
    }
}

/// Whether the `reanimator fs` tests can mount: root and `/dev/fuse` ([`privileged`]'s
/// skip or, in CI, failure otherwise).
pub fn can_mount_fuse() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let ok = if root && std::path::Path::new("/dev/fuse").exists() {
        Ok(())
    } else {
        Err("needs root and /dev/fuse".to_string())
    };
    privileged("reanimator fs", ok)
}

#[cfg(test)]
mod tests {
    #[test]
    fn workload_is_built() {
        let p = super::program("workload");
        assert!(p.is_file(), "{}", p.display());
        assert!(super::programs().iter().any(|n| n == "workload"));
    }
}

thread_local! {
    /// The capture backend this test thread records with (`ptrace` unless a
    /// [`both_backends!`] wrapper set it).
    static BACKEND: Cell<&'static str> = const { Cell::new("ptrace") };
}

/// The capture backend this test thread records with: `ptrace` or `ebpf`.
pub fn backend() -> &'static str {
    BACKEND.with(Cell::get)
}

/// A command that was refused for bad input: exit status 2 and exactly one line on stderr,
/// `reanimator: error: ...`, no panic. Returns that line.
pub fn assert_clean_failure(o: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "exit status; stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("reanimator: error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The cgroup2 mount point, if any.
pub fn cgroup2_root() -> Option<PathBuf> {
    let m = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    m.lines()
        .find(|l| l.contains(" - cgroup2 "))
        .and_then(|l| l.split(' ').nth(4))
        .map(PathBuf::from)
}

/// Make this test thread record with `backend`.
pub fn set_backend(backend: &'static str) {
    BACKEND.with(|b| b.set(backend));
}

/// Whether the eBPF backend can run here (see [`privileged`]: skips with the probe's reason,
/// or fails under REANIMATOR_REQUIRE_PRIVILEGED=1).
pub fn ebpf_available() -> bool {
    privileged("eBPF backend", ra_capture::ebpf::probe().map(|_| ()).map_err(|e| e.to_string()))
}

/// Whether this kernel lets a process create an io_uring ring (`kernel.io_uring_disabled`,
/// a seccomp filter, ...): [`privileged`]'s skip, or failure in CI, otherwise.
pub fn io_uring_available() -> bool {
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup reads and writes the 120-byte params struct we own.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, params.as_mut_ptr()) };
    let ok = if fd >= 0 {
        // SAFETY: closing the descriptor just returned.
        unsafe { libc::close(fd as i32) };
        Ok(())
    } else {
        Err(format!("io_uring_setup: {}", std::io::Error::last_os_error()))
    };
    privileged("io_uring", ok)
}

/// Whether `backend` can record io_uring programs here: a ring can be made, and for `ebpf`
/// the eBPF backend runs ([`io_uring_available`], [`ebpf_available`]).
pub fn uring_backend_available(backend: &str) -> bool {
    io_uring_available() && (backend == "ptrace" || ebpf_available())
}

/// `name::ptrace` and `name::ebpf` tests that run the test file's `name()` with
/// [`backend`] set to that backend; the eBPF one only where [`ebpf_available`].
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn ptrace() {
                $crate::set_backend("ptrace");
                super::$name()
            }
            #[test]
            fn ebpf() {
                if $crate::ebpf_available() {
                    $crate::set_backend("ebpf");
                    super::$name()
                }
            }
        }
    )*};
}

/// A file system on a loop device over a sparse image (`mkfs` is the command and its
/// arguments, the image path appended), mounted at a directory; unmounted (lazily when busy,
/// as after a failed test) and detached on drop. Needs root and `losetup`.
pub struct LoopFs {
    /// The mount point.
    pub dir: PathBuf,
    /// The loop device (`/dev/loopN`).
    pub dev: String,
}

impl LoopFs {
    /// Make `fs` (a `mount -t` type) on a `size` (`truncate -s`) image at `img` and mount it at
    /// `dir` (created).
    pub fn new(fs: &str, size: &str, mkfs: &[&str], img: &std::path::Path, dir: PathBuf) -> LoopFs {
        let ok = |c: &mut std::process::Command| {
            let o = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
            assert!(o.status.success(), "{c:?}: {}", String::from_utf8_lossy(&o.stderr));
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        };
        ok(std::process::Command::new("truncate").args(["-s", size]).arg(img));
        ok(std::process::Command::new(mkfs[0]).args(&mkfs[1..]).arg(img));
        let dev = ok(std::process::Command::new("losetup").args(["--find", "--show"]).arg(img));
        // Made before the mount: a failed mount panics here, and the drop detaches the device.
        let l = LoopFs { dir, dev };
        std::fs::create_dir_all(&l.dir).unwrap();
        ok(std::process::Command::new("mount").args(["-t", fs, &l.dev]).arg(&l.dir));
        l
    }

    /// Reads the device completed since it was attached (`/sys/block/loopN/stat`, field 1).
    pub fn reads(&self) -> u64 {
        let name = self.dev.trim_start_matches("/dev/");
        let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat"))
            .unwrap_or_else(|e| panic!("/sys/block/{name}/stat: {e}"));
        stat.split_whitespace().next().and_then(|v| v.parse().ok()).expect("stat field 1")
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let o = std::process::Command::new("umount").arg(&self.dir).output();
        if !o.as_ref().is_ok_and(|o| o.status.success()) {
            let _ = std::process::Command::new("umount").arg("-l").arg(&self.dir).output();
        }
        let _ = std::process::Command::new("losetup").arg("-d").arg(&self.dev).output();
    }
}
