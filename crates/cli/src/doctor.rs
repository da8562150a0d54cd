//! `reanimator doctor`: which backends and features work on this machine and, for each that
//! does not, why and what to do. Every answer comes from trying or reading the kernel's own
//! word (loading the BPF programs, seizing a child with ptrace, opening /dev/fuse, the sysctls
//! and /sys files), never from a version number alone.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

#[derive(Args, Debug)]
#[command(after_help = "Each line is one check: `ok`, `note` (works, but read this), `warn` \
    (works, with a limit you may hit) or `FAIL` (does not work here), what it found, and for \
    every note, warning and failure what to do.\n\n\
    Exit status: 0 when nothing failed, 1 when a check failed, 2 when doctor itself could not \
    run.")]
pub struct DoctorArgs {
    /// Print the checks as JSON on stdout (`{"checks": [{"name", "status", "found", "fix",
    /// "affects"}], "failed": N}`).
    #[arg(long)]
    pub json: bool,
}

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ok,
    Note,
    Warn,
    Fail,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Note => "note",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One check's answer.
#[derive(Clone, Debug)]
struct Check {
    name: &'static str,
    /// The commands and flags that depend on it.
    affects: &'static str,
    status: Status,
    found: String,
    fix: Option<String>,
}

fn check(
    name: &'static str,
    affects: &'static str,
    status: Status,
    found: impl Into<String>,
    fix: Option<String>,
) -> Check {
    Check { name, affects, status, found: found.into(), fix }
}

// linux/capability.h
const CAP_SYS_PTRACE: u32 = 19;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

fn effective_caps() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0)
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn mib(b: u64) -> String {
    format!("{} MiB", b >> 20)
}

/// Every check, in the order they are printed.
fn checks() -> Vec<Check> {
    let caps = effective_caps();
    let has = |c: u32| caps & (1u64 << c) != 0;
    // SAFETY: geteuid takes no arguments.
    let uid = unsafe { libc::geteuid() };
    let mut v = Vec::new();

    // eBPF: the real thing (load and attach the recorder's programs), else why not.
    v.push(match ra_capture::ebpf::probe() {
        Ok(c) => check(
            "ebpf backend",
            "record --backend ebpf, record --cgroup, profile --live",
            Status::Ok,
            format!("programs load and attach: {}", c.summary),
            None,
        ),
        Err(why) => check(
            "ebpf backend",
            "record --backend ebpf, record --cgroup, profile --live",
            Status::Fail,
            why.missing,
            Some(why.fix),
        ),
    });
    v.push(if Path::new("/sys/kernel/btf/vmlinux").exists() {
        check("kernel BTF", "the ebpf backend", Status::Ok, "/sys/kernel/btf/vmlinux", None)
    } else {
        check(
            "kernel BTF",
            "the ebpf backend",
            Status::Fail,
            "/sys/kernel/btf/vmlinux does not exist (kernel without CONFIG_DEBUG_INFO_BTF)",
            Some("boot a kernel built with BTF (most distribution kernels are)".into()),
        )
    });
    let named: Vec<&str> = [
        (CAP_SYS_ADMIN, "CAP_SYS_ADMIN"),
        (CAP_BPF, "CAP_BPF"),
        (CAP_PERFMON, "CAP_PERFMON"),
        (CAP_SYS_PTRACE, "CAP_SYS_PTRACE"),
    ]
    .iter()
    .filter(|(c, _)| has(*c))
    .map(|&(_, n)| n)
    .collect();
    let bpf_ok = has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON));
    v.push(check(
        "capabilities",
        "the ebpf backend, fs mount, record -p",
        if bpf_ok && has(CAP_SYS_ADMIN) { Status::Ok } else { Status::Note },
        format!(
            "uid {uid}, effective {} (CapEff {caps:#x})",
            if named.is_empty() {
                "none of the ones reanimator uses".into()
            } else {
                named.join(" ")
            }
        ),
        (!(bpf_ok && has(CAP_SYS_ADMIN))).then(|| {
            "the ebpf backend needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), fs mount \
             CAP_SYS_ADMIN: run those as root (sudo); record --backend ptrace needs none"
                .into()
        }),
    ));

    // ptrace: seize a child of ours, as the ptrace backend does with the command it starts.
    let yama = read_trim("/proc/sys/kernel/yama/ptrace_scope");
    v.push(match seize_child() {
        Ok(()) => check(
            "ptrace backend",
            "record --backend ptrace (the default without eBPF)",
            Status::Ok,
            "a child process was seized and traced (PTRACE_SEIZE)",
            None,
        ),
        Err(e) => check(
            "ptrace backend",
            "record --backend ptrace (the default without eBPF)",
            Status::Fail,
            format!("PTRACE_SEIZE of a child failed: {e}"),
            Some(match yama.as_deref() {
                Some("3") => "kernel.yama.ptrace_scope is 3 (no ptrace at all); it cannot be \
                              lowered without a reboot: boot with a lower value"
                    .into(),
                Some("2") => "kernel.yama.ptrace_scope is 2: run as root, or `sysctl \
                              kernel.yama.ptrace_scope=1`"
                    .into(),
                _ => "a seccomp policy or security module of this container refuses ptrace: \
                      allow it (e.g. docker --cap-add SYS_PTRACE) or use the ebpf backend"
                    .into(),
            }),
        ),
    });
    v.push(match yama.as_deref() {
        None => check(
            "kernel.yama.ptrace_scope",
            "record -p",
            Status::Ok,
            "no Yama module: any process of yours may be attached to",
            None,
        ),
        Some("0") => check(
            "kernel.yama.ptrace_scope",
            "record -p",
            Status::Ok,
            "0: any process of yours may be attached to",
            None,
        ),
        Some("1") if has(CAP_SYS_PTRACE) => check(
            "kernel.yama.ptrace_scope",
            "record -p",
            Status::Ok,
            "1 (descendants only), but CAP_SYS_PTRACE attaches to any process",
            None,
        ),
        Some("1") => check(
            "kernel.yama.ptrace_scope",
            "record -p",
            Status::Note,
            "1: record -p attaches only to descendants of the recorder",
            Some(
                "to attach to another of your processes run record -p as root, or `sysctl \
                 kernel.yama.ptrace_scope=0`"
                    .into(),
            ),
        ),
        Some("2") if has(CAP_SYS_PTRACE) => check(
            "kernel.yama.ptrace_scope",
            "record -p, record --backend ptrace",
            Status::Ok,
            "2 (admin only), and this process has CAP_SYS_PTRACE",
            None,
        ),
        Some(s) => check(
            "kernel.yama.ptrace_scope",
            "record -p, record --backend ptrace",
            Status::Fail,
            format!("{s}: ptrace is limited to {}", if s == "2" { "root" } else { "nobody" }),
            Some(if s == "2" {
                "run as root, or `sysctl kernel.yama.ptrace_scope=1`".into()
            } else {
                "3 cannot be lowered without a reboot; use the ebpf backend".into()
            }),
        ),
    });
    if let Some(p) = read_trim("/proc/sys/kernel/perf_event_paranoid") {
        let (status, fix) = if bpf_ok {
            (Status::Ok, None)
        } else {
            (
                Status::Note,
                Some(
                    "whatever its value, tracing BPF programs need CAP_BPF and CAP_PERFMON: \
                     lowering it does not let an unprivileged user run the ebpf backend; run \
                     as root"
                        .to_string(),
                ),
            )
        };
        v.push(check(
            "kernel.perf_event_paranoid",
            "the ebpf backend (unprivileged users)",
            status,
            format!(
                "{p}{}",
                if bpf_ok {
                    " (does not matter: this process has CAP_PERFMON or CAP_SYS_ADMIN)"
                } else {
                    ""
                }
            ),
            fix,
        ));
    }

    // FUSE: the device, and the privilege to mount.
    let fuse_dev = std::fs::OpenOptions::new().read(true).write(true).open("/dev/fuse");
    v.push(match (fuse_dev, has(CAP_SYS_ADMIN)) {
        (Ok(_), true) => check(
            "FUSE",
            "fs mount",
            Status::Ok,
            "/dev/fuse opens read-write, and this process may mount",
            None,
        ),
        (Ok(_), false) => check(
            "FUSE",
            "fs mount",
            Status::Fail,
            "/dev/fuse opens, but mounting needs CAP_SYS_ADMIN, which this process lacks",
            Some("run fs mount as root (sudo)".into()),
        ),
        (Err(e), _) => check(
            "FUSE",
            "fs mount",
            Status::Fail,
            format!("cannot open /dev/fuse: {e}"),
            Some(if e.kind() == std::io::ErrorKind::NotFound {
                "load the module (`modprobe fuse`), or in a container pass the device \
                 (docker --device /dev/fuse)"
                    .into()
            } else {
                "run fs mount as root (it needs CAP_SYS_ADMIN to mount, too)".into()
            }),
        ),
    });
    v.push(match read_trim("/sys/module/fuse/parameters/enable_uring").as_deref() {
        Some("Y") => check(
            "FUSE over io_uring",
            "fs mount --transport auto|uring",
            Status::Ok,
            "enabled (fuse.enable_uring=Y): fs mount serves requests over io_uring rings by \
             default (--transport auto)",
            None,
        ),
        Some(s) => check(
            "FUSE over io_uring",
            "fs mount --transport auto|uring",
            Status::Ok,
            format!(
                "off (fuse.enable_uring={s}): fs mount --transport auto reads /dev/fuse; \
                 --transport uring turns the parameter on (as root) and uses the rings"
            ),
            None,
        ),
        None => check(
            "FUSE over io_uring",
            "fs mount --transport uring",
            Status::Ok,
            "this kernel has no fuse.enable_uring (Linux 6.14+, CONFIG_FUSE_IO_URING): fs mount \
             reads /dev/fuse (--transport dev), which works everywhere",
            None,
        ),
    });

    // cgroup v2, for record --cgroup.
    let cg2 = std::fs::read_to_string("/proc/self/mountinfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.contains(" - cgroup2 "))
            .and_then(|l| l.split(' ').nth(4))
            .map(String::from)
    });
    v.push(match cg2 {
        Some(at) => {
            check("cgroup v2", "record --cgroup", Status::Ok, format!("mounted at {at}"), None)
        }
        None => check(
            "cgroup v2",
            "record --cgroup",
            Status::Fail,
            "no cgroup2 file system is mounted",
            Some(
                "mount it (`mount -t cgroup2 none /sys/fs/cgroup`), or boot with \
                 systemd.unified_cgroup_hierarchy=1"
                    .into(),
            ),
        ),
    });

    // The eBPF ring: its pages are allocated (and locked) when recording starts.
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|k| k << 10)
    });
    let ring = ra_capture::ebpf::DEFAULT_RING_BYTES;
    let small = ra_capture::ebpf::DEFAULT_RING_BYTES_NO_DATA;
    let found = |a: u64| {
        format!(
            "default {} ({} with --data none), up to 1 GiB with --ring-size; {} of memory \
             available",
            mib(ring),
            mib(small),
            mib(a)
        )
    };
    v.push(match avail {
        Some(a) if a >= 8 * ring => {
            check("ring buffer", "record --backend ebpf", Status::Ok, found(a), None)
        }
        Some(a) => check(
            "ring buffer",
            "record --backend ebpf",
            Status::Warn,
            found(a),
            Some(format!(
                "memory is short for the default ring and the recorder's queues (~{} with it): \
                 record with --ring-size 16M, or --data hash",
                mib(4 * ring)
            )),
        ),
        None => check(
            "ring buffer",
            "record --backend ebpf",
            Status::Warn,
            "cannot read MemAvailable in /proc/meminfo",
            Some("the default ring takes 64 MiB of unswappable memory".into()),
        ),
    });

    // Free space where traces go by default (here) and for scratch files.
    let tmp = std::env::temp_dir();
    for (what, dir) in [("the current directory", Path::new(".")), ("TMPDIR", tmp.as_path())] {
        let d = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        v.push(match rustix_free(&d) {
            Some(free) if free >= 1 << 30 => check(
                "free space",
                "record, fs mount, compile",
                Status::Ok,
                format!("{} free in {what} ({})", mib(free), d.display()),
                None,
            ),
            Some(free) => check(
                "free space",
                "record, fs mount, compile",
                Status::Warn,
                format!("only {} free in {what} ({})", mib(free), d.display()),
                Some(
                    "a full-data trace holds about every byte the command reads and writes: \
                     write it elsewhere (-o), or record with --data hash or --data none"
                        .into(),
                ),
            ),
            None => check(
                "free space",
                "record, fs mount, compile",
                Status::Warn,
                format!("cannot measure the free space of {what} ({})", d.display()),
                None,
            ),
        });
    }
    v
}

/// Bytes an unprivileged writer may still use on the file system of `dir`.
fn rustix_free(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct from a NUL-terminated path.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        st
    };
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Fork a child that stops itself, and seize it with ptrace as the ptrace backend seizes the
/// command it starts.
fn seize_child() -> std::io::Result<()> {
    // SAFETY: the child calls only async-signal-safe functions (raise, _exit).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: async-signal-safe calls in the forked child.
        unsafe {
            libc::raise(libc::SIGSTOP);
            libc::_exit(0);
        }
    }
    let mut st = 0;
    // SAFETY: waits for our own child; st is a valid out pointer.
    unsafe { libc::waitpid(pid, &mut st, libc::WUNTRACED) };
    // SAFETY: PTRACE_SEIZE takes the pid and no pointers (addr and data 0).
    let r = unsafe { libc::ptrace(libc::PTRACE_SEIZE, pid, 0, 0) };
    let err = std::io::Error::last_os_error();
    // SAFETY: kill and reap our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, &mut st, 0);
    }
    if r != 0 {
        return Err(err);
    }
    Ok(())
}

fn to_json(checks: &[Check]) -> serde_json::Value {
    serde_json::json!({
        "checks": checks.iter().map(|c| serde_json::json!({
            "name": c.name,
            "status": c.status.name(),
            "found": c.found,
            "fix": c.fix,
            "affects": c.affects,
        })).collect::<Vec<_>>(),
        "failed": checks.iter().filter(|c| c.status == Status::Fail).count(),
    })
}

fn print(checks: &[Check], out: &mut impl Write) -> std::io::Result<()> {
    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in checks {
        let status = if c.status == Status::Fail { "FAIL" } else { c.status.name() };
        writeln!(out, "{status:<4}  {:<width$}  {}", c.name, c.found)?;
        writeln!(out, "      {:<width$}  for: {}", "", c.affects)?;
        if let Some(f) = &c.fix {
            writeln!(out, "      {:<width$}  do: {f}", "")?;
        }
    }
    Ok(())
}

pub fn run(a: DoctorArgs) -> Result<ExitCode> {
    let checks = checks();
    let mut out = std::io::stdout().lock();
    if a.json {
        // Through a String: a closed pipe is then an io::Error, which main takes as the
        // reader's normal way to stop.
        writeln!(out, "{}", serde_json::to_string_pretty(&to_json(&checks))?)?;
    } else {
        print(&checks, &mut out)?;
    }
    out.flush()?;
    Ok(if checks.iter().any(|c| c.status == Status::Fail) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
