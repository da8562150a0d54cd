//! `reanimator record`: run a command and capture its storage system calls into a trace.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use ra_capture::ebpf::{self, EbpfBackend, LossPolicy};
use ra_capture::ptrace::{CpuPolicy, PtraceBackend};
use ra_capture::sink::TraceSink;
use ra_capture::{DataMode, Options, Selection, Target, STOP_REQUESTS, STOP_SIGNAL};
use ra_fsstate::ScanOptions;
use ra_trace::{Phase, PhaseInfo, TraceWriter, WriterConfig};

use crate::output::{ChainArgs, NetArgs};
use crate::progress::ScanProgress;

/// What `record` does with the program's io_uring rings (`--io-uring`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum IoUring {
    /// Let programs use io_uring and record its requests (`io_uring_op`).
    Record,
    /// Make every io_uring_setup fail with ENOSYS (ptrace backend), as sandboxes do, so that
    /// programs fall back to system calls or fail clearly.
    Deny,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// ebpf when its probe succeeds (root, BTF, a recent kernel), else ptrace; says why in one
    /// line when it falls back.
    Auto,
    /// In-kernel capture with BPF programs on the syscall tracepoints: needs root; lowest
    /// overhead; lossless by default (--loss); --cgroup.
    Ebpf,
    /// ptrace with a seccomp filter: unprivileged; the tracee stops only for captured calls.
    Ptrace,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Loss {
    /// Lose nothing: when the ring buffer fills past a quarter, the process that produced is
    /// stopped (SIGSTOP) until the recorder has drained it (SIGCONT). Slows the command to the
    /// recorder's speed when it must.
    Throttle,
    /// Never slow the command: calls that do not fit in the ring buffer are dropped and
    /// counted in the trace's Lost records (per call type, with their time range).
    Drop,
}

/// `--data`'s value: a level for both directions or `write=LEVEL,read=LEVEL` (read here,
/// not by clap, for one line of error).
pub fn parse_data(s: &str) -> Result<DataMode> {
    DataMode::parse(s).map_err(|e| anyhow::anyhow!("--data {s}: {e}"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Cpu {
    /// Bind the command to the tracer's CPU while it runs one thread at a time, and unbind
    /// it (for the rest of the run) as soon as two of its threads are runnable at once: the
    /// speed of `same` for serial programs, the parallelism of `any` for parallel ones.
    Auto,
    /// Bind the command (and its children) to the tracer's CPU: every captured call hands
    /// control between them twice, and on a VM a hand-off across CPUs costs a wake-up of an
    /// idle CPU. Several times faster there; the command sees one CPU (like rr), so a
    /// parallel program runs serially.
    Same,
    /// Leave the command's CPU affinity alone.
    Any,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator record -o ls.ds -- ls -l /etc\n  \
    reanimator record -o db.ds --syscalls openat,pwrite64,fsync -- sqlite3 test.db < script.sql\n\n\
    Exit status: the command's (128 + N when killed by signal N); 2 when reanimator itself fails.\n\
    Ctrl-C or SIGTERM: the signal is passed to the command and the trace is finished when it \
    exits; a second one stops at once (the trace is still finished and readable).\n\n\
    --snapshot DIR: before the command starts, DIR's state (every entry's name, kind, size, \
    mode, owner, xattrs, hard links, symlink targets, mtime) and the content of its files \
    (each distinct content once) are stored in the trace; after the command ends (also after \
    Ctrl-C) DIR's state is stored again, without contents. `reanimator info` shows them, \
    `reanimator diff OUT.ds:start OUT.ds:end` compares them, replay recreates the start state. \
    Symlinks are never followed and other file systems are not entered.")]
pub struct RecordArgs {
    /// With `-o tcp://`: the host key (`reanimator keygen --host NAME --from MASTER`) this
    /// sender authenticates to the collector with; the trace is then sealed with it
    /// (docs/NETWORK.md).
    #[arg(long, value_name = "KEYFILE")]
    pub key: Option<PathBuf>,
    /// The trace file to write (replaced if it exists; created mode 0600, readable by you
    /// alone, whatever the umask: it holds every byte the command read), or
    /// tcp://HOST:PORT[/LABEL] to stream it to `reanimator collect` (see --spill; with the
    /// global `--key HOSTKEY` the sender authenticates and the trace is sealed with that host
    /// key, docs/NETWORK.md), or `-`: stream it to standard output, for a reader that takes
    /// `-` (`reanimator record -o - -- make | reanimator dump -`); what the command prints on
    /// its standard output then goes to standard error.
    #[arg(short = 'o', long, value_name = "OUT.ds")]
    pub output: PathBuf,
    /// Capture backend.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// How much of each data buffer to keep: `full` (every byte), `hash` (length and BLAKE3
    /// digest: enough to verify a replay's data), `none` (not read: lengths only); paths,
    /// struct results and argv are kept in full whatever it says. Per direction:
    /// `write=LEVEL,read=LEVEL` (an omitted direction is `full`), data the command writes
    /// (write, pwritev, sendmsg, io_uring writes, kernel-side copies, mmap pages written)
    /// apart from data read into it (read, recvmsg, getxattr, io_uring reads,
    /// mmap pages read). E.g. `--data write=full,read=hash`: a replay has every byte it must
    /// write and checks what it reads by digest, in a trace smaller by the data read.
    #[arg(long, value_name = "MODE", default_value = "full")]
    pub data: String,
    /// Calls to capture: `storage` (files, descriptors, memory maps, processes, sockets),
    /// `all`, or strace's `-e trace=` list: names (`openat,pwrite64`; kernel, trace and
    /// 32-bit names such as `_llseek`), strace's classes (`%file`, `%desc`, `%network`,
    /// `%memory`, `%process`, `%signal`, `%ipc`, `%creds`, `%clock`, `%stat`, `%%stat`,
    /// `%statfs`, ...), a leading `!` for every call but those (`!%memory`). Process
    /// lifecycle calls are always captured; delivered signals (`signal_deliver`, dump's
    /// `--- SIGCHLD {...} ---`) too, unless a `!` list leaves them out (`!%signal`).
    #[arg(long, default_value = "storage", value_name = "SET")]
    pub syscalls: String,
    /// Where the command runs relative to the tracer (ptrace backend; ignored with -p and by
    /// the ebpf backend, which has no tracer hand-offs).
    #[arg(long, value_enum, default_value_t = Cpu::Auto)]
    pub cpu: Cpu,
    /// What the ebpf backend does when the command produces faster than the trace is
    /// written.
    #[arg(long, value_enum, default_value_t = Loss::Throttle)]
    pub loss: Loss,
    /// Size of the ebpf backend's ring buffer (a power of two from 1M to 1G; K, M, G
    /// suffixes). Default: 64M, or 16M with `--data none` (call records only: ~200 bytes per
    /// call).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub ring_size: Option<u64>,
    /// Also record data read through private file mappings (`mmappread` page records, ebpf
    /// backend): files a program maps MAP_PRIVATE to read them, as git does its pack files.
    /// Program images are left out: executables and libraries (every mapping of a file that
    /// was mapped executable, or by the dynamic loader), their read-only data included.
    /// Writes to private mappings never reach the file and are never recorded. Shared file
    /// mappings are always recorded. The ptrace backend records no page records at all.
    #[arg(long)]
    pub mmap_private: bool,
    /// `deny`: every io_uring_setup fails with ENOSYS (recorded so, the trace's
    /// `io_uring_denied` fact counting them), so that programs such as fio fall back to system
    /// calls or stop with a clear error; ptrace backend (`auto` then picks it). `record`
    /// (the default): requests are recorded; the ptrace backend cannot see SQPOLL rings and
    /// says so.
    #[arg(long = "io-uring", value_enum, default_value_t = IoUring::Record, value_name = "MODE")]
    pub io_uring: IoUring,
    /// Record every process in this cgroup (v2 directory, e.g.
    /// /sys/fs/cgroup/system.slice/foo.service) and below, until Ctrl-C (ebpf backend).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["command", "pid"])]
    pub cgroup: Option<PathBuf>,
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub net: NetArgs,
    /// Store DIR's state (and its file contents) in the trace before the command starts, and
    /// its state again after it ends (repeatable).
    #[arg(long, value_name = "DIR")]
    pub snapshot: Vec<PathBuf>,
    /// Don't print the summary line.
    #[arg(short, long)]
    pub quiet: bool,
    /// Also print each call as it completes, as `reanimator dump` shows it (strace-like
    /// lines, buffers cut at --print-strsize bytes), on stderr or into FILE (created mode
    /// 0600: it quotes traced data). The lines are printed by a thread of their own that the
    /// recording never waits for: when they cannot be printed as fast as calls are recorded
    /// (a slow terminal), lines are left out and a line says how many; the trace has every
    /// call.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub print: Option<PathBuf>,
    /// With --print: show at most this many bytes of each buffer (0: all), as dump's -s.
    #[arg(long, value_name = "N", default_value_t = 32, requires = "print")]
    pub print_strsize: usize,
    /// Print the summary as JSON on stdout when the recording ends (calls, data bytes,
    /// processes, threads, lost calls, throttle stops, exit status, elapsed seconds, the
    /// trace's path and size or where a network trace went, snapshots), instead of the line
    /// on stderr.
    #[arg(long)]
    pub json: bool,
    /// Attach to this running process (every thread) instead of starting a command; Ctrl-C
    /// detaches and leaves it running. Its open descriptors are recorded first as synthetic
    /// `openat` records (trace info `synthetic_ids` says how many).
    #[arg(short = 'p', long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<i32>,
    /// The command to run, after `--`.
    #[arg(trailing_var_arg = true, required_unless_present_any = ["pid", "cgroup"], value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// `256M`, `1G`, `65536`.
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (
            &t[..i],
            match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(format!("`{s}`: unknown suffix `{c}` (use K, M or G)")),
            },
        ),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("`{s}` is not a size (e.g. 256M)"))
}

extern "C" fn on_stop_signal(sig: libc::c_int) {
    STOP_SIGNAL.store(sig, Ordering::Relaxed);
    STOP_REQUESTS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn install_stop_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a handler that only touches atomics; no SA_RESTART, so
        // the tracer's waitpid returns EINTR and notices the request.
        unsafe { crate::signals::set_handler(sig, on_stop_signal as *const () as usize, 0) };
    }
}

fn uname() -> [String; 4] {
    // SAFETY: uname fills the zeroed struct; its fields are NUL-terminated C strings.
    let u = unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        u
    };
    let s = |f: &[libc::c_char]| {
        let b: Vec<u8> = f.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&b).into_owned()
    };
    [s(&u.nodename), s(&u.release), s(&u.version), s(&u.machine)]
}

fn shell_quote(a: &std::ffi::OsStr) -> String {
    let s = a.to_string_lossy();
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Stop requests (Ctrl-C, SIGTERM) already counted when the end-state scans began.
static END_SCAN_BASE: AtomicI32 = AtomicI32::new(0);

fn stop_start_scan() -> bool {
    STOP_REQUESTS.load(Ordering::Relaxed) > 0
}

fn stop_end_scan() -> bool {
    STOP_REQUESTS.load(Ordering::Relaxed) > END_SCAN_BASE.load(Ordering::Relaxed)
}

/// The --snapshot directories, canonical, checked: existing directories, each once, not
/// holding the trace being written.
fn snapshot_dirs(dirs: &[PathBuf], output: &std::path::Path) -> Result<Vec<PathBuf>> {
    let out_dir =
        output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let out_dir = std::fs::canonicalize(out_dir).ok();
    let mut v: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let c = std::fs::canonicalize(d)
            .with_context(|| format!("--snapshot {}: cannot open it", d.display()))?;
        if !c.is_dir() {
            anyhow::bail!("--snapshot {}: not a directory", d.display());
        }
        if v.contains(&c) {
            anyhow::bail!("--snapshot {}: given twice", d.display());
        }
        if out_dir.as_ref().is_some_and(|o| o.starts_with(&c)) {
            anyhow::bail!(
                "--snapshot {}: the trace {} would be inside it; write the trace elsewhere",
                d.display(),
                output.display()
            );
        }
        v.push(c);
    }
    Ok(v)
}

fn scan_options(progress: &ScanProgress, dir: &std::path::Path, phase: Phase) -> ScanOptions {
    let stop = if phase == Phase::Start { stop_start_scan } else { stop_end_scan };
    ScanOptions {
        cross_mounts: false,
        skip: None,
        progress: Some(progress.callback(format!("snapshot of {} ({phase})", dir.display()), stop)),
    }
}

/// `key`: its `--key`, a host key to authenticate to the collector with `-o tcp://`.
pub fn run(a: RecordArgs, key: Option<&ra_trace::key::Key>) -> Result<ExitCode> {
    let to_stdout = a.output.as_os_str() == "-";
    match record(a, key) {
        // With -o - a closed pipe is the trace's reader gone (`| head -c1`), not the normal
        // end of a reader's output that main takes it for: an error, in one line.
        Err(e) if to_stdout && crate::broken_pipe(&e) => Err(anyhow::anyhow!(
            "{}: the reader of the trace on standard output went away (broken pipe): the \
             trace it read is cut",
            crate::one_line(&e)
        )),
        r => r,
    }
}

fn record(a: RecordArgs, key: Option<&ra_trace::key::Key>) -> Result<ExitCode> {
    let selection = Selection::parse(&a.syscalls).context("--syscalls")?;
    if a.json && a.output.as_os_str() == "-" {
        anyhow::bail!(
            "--json prints on standard output, where -o - writes the trace: give -o FILE"
        );
    }
    let dest = a.net.destination(&a.chain, &a.output, key)?;
    let snapshot_dirs = snapshot_dirs(&a.snapshot, &a.output)?;
    let data = parse_data(&a.data)?;
    let [host, release, version, machine] = uname();
    let command = match (a.pid, &a.cgroup) {
        (_, Some(cg)) => format!("(cgroup {})", cg.display()),
        (Some(pid), _) => format!("(attached to pid {pid}) {}", attached_cmdline(pid)),
        (None, None) => {
            let v: Vec<String> = a.command.iter().map(|c| shell_quote(c)).collect();
            v.join(" ")
        }
    };
    // The command's cwd: ours for a command we start, the target's when attaching.
    let cwd = match a.pid {
        Some(pid) => std::fs::read_link(format!("/proc/{pid}/cwd")),
        None => std::env::current_dir(),
    }
    .map(|p| p.display().to_string())
    .unwrap_or_default();
    let start = crate::info::rfc3339(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64),
    );
    let target = match (a.pid, &a.cgroup) {
        (_, Some(cg)) => Target::Cgroup(cg.clone()),
        (Some(pid), _) => Target::Pid(pid),
        (None, None) => Target::Command(a.command.clone()),
    };
    let opts = Options {
        selection,
        data,
        mmap_private: a.mmap_private,
        uring_deny: a.io_uring == IoUring::Deny,
    };
    if let Some(n) = a.ring_size {
        ebpf::check_ring_size(n)?;
    }
    let mut backend = choose_backend(&a, &target, &opts)?;
    if a.mmap_private && backend.name() == "ptrace" {
        eprintln!(
            "reanimator: warning: --mmap-private does nothing with the ptrace backend: it \
             cannot see loads and stores to mapped memory, so it records no page records"
        );
    }
    let data_facts = data.facts();
    // The umask the command starts with (replay applies it to files the trace creates).
    let status = match a.pid {
        Some(pid) => std::fs::read_to_string(format!("/proc/{pid}/status")),
        None => std::fs::read_to_string("/proc/self/status"),
    };
    let umask = status
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string()))
        })
        .unwrap_or_default();
    let mut info: Vec<(&str, &[u8])> = vec![
        ("command", command.as_bytes()),
        ("cwd", cwd.as_bytes()),
        ("umask", umask.as_bytes()),
        ("backend", backend.name().as_bytes()),
        ("syscalls", a.syscalls.as_bytes()),
        ("hostname", host.as_bytes()),
        ("kernel", release.as_bytes()),
        ("kernel_version", version.as_bytes()),
        ("arch", machine.as_bytes()),
        ("start_time", start.as_bytes()),
    ];
    info.extend(data_facts.iter().map(|(k, v)| (*k, v.as_bytes())));
    let mut print = match &a.print {
        None => None,
        Some(p) => Some(ra_capture::sink::Print {
            out: if p.as_os_str() == "-" {
                Box::new(std::io::stderr())
            } else {
                Box::new(
                    ra_fsstate::private::create(p)
                        .with_context(|| format!("--print: cannot create {}", p.display()))?,
                )
            },
            format: ra_trace::format::FormatOptions {
                strsize: a.print_strsize,
                ..Default::default()
            },
            cwd: Some(cwd.as_bytes().to_vec()),
        }),
    };
    let ds = a.chain.writer_options_for(&dest)?;
    let cfg = WriterConfig { ds, ..WriterConfig::default() };
    install_stop_handlers();
    let mut starts: Vec<PhaseInfo> = Vec::new();
    let (w, net) = TraceWriter::open(&dest, &stream_label(&target), &info, cfg)
        .with_context(|| format!("cannot create the trace {}", a.output.display()))?;
    let mut sink = if snapshot_dirs.is_empty() {
        TraceSink::with_printer(w, &a.output, print.take()).context("starting the trace writer")?
    } else {
        let mut w = w;
        for (i, d) in snapshot_dirs.iter().enumerate() {
            let progress = ScanProgress::new();
            let r = w.record_snapshot(
                i as u32,
                Phase::Start,
                d,
                scan_options(&progress, d, Phase::Start),
            );
            progress.finish();
            match r {
                Ok(s) => starts.push(s),
                Err(e) => {
                    let _ = w.finish();
                    return Err(anyhow::Error::new(e).context(format!(
                        "storing the state of {} (the command was not started)",
                        d.display()
                    )));
                }
            }
        }
        TraceSink::with_printer(w, &a.output, print.take()).context("starting the trace writer")?
    };
    let t0 = Instant::now();
    let outcome = backend.record(&target, &opts, &mut sink);
    let elapsed = t0.elapsed();
    // Finish the file whatever happened to the command.
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            let _ = sink.close();
            return Err(anyhow::Error::new(e).context(format!("recording `{command}`")));
        }
    };
    sink.info("synthetic_ids", outcome.synthetic_ids.to_string().as_bytes())?;
    for (k, v) in &outcome.facts {
        sink.info(k, v.as_bytes())?;
    }
    sink.info("exit_status", outcome.exit_code.to_string().as_bytes())?;
    let affinity = match (outcome.pinned_cpu, &outcome.cpu_note) {
        (Some(c), None) => format!("command and tracer bound to CPU {c}"),
        (Some(c), Some(note)) => format!("command and tracer bound to CPU {c} {note}"),
        (None, _) => "unchanged".to_string(),
    };
    sink.info("cpu_affinity", affinity.as_bytes())?;
    sink.info(
        "end_time",
        crate::info::rfc3339(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64),
        )
        .as_bytes(),
    )?;
    let mut ends: Vec<Option<PhaseInfo>> = Vec::new();
    if snapshot_dirs.is_empty() {
        sink.close().with_context(|| format!("finishing {}", a.output.display()))?;
    } else {
        let mut w =
            sink.into_writer().with_context(|| format!("finishing {}", a.output.display()))?;
        END_SCAN_BASE.store(STOP_REQUESTS.load(Ordering::Relaxed), Ordering::Relaxed);
        for (i, d) in snapshot_dirs.iter().enumerate() {
            let progress = ScanProgress::new();
            let r =
                w.record_snapshot(i as u32, Phase::End, d, scan_options(&progress, d, Phase::End));
            progress.finish();
            match r {
                Ok(s) => ends.push(Some(s)),
                // The tree could not be scanned (gone, unreadable, interrupted): the trace is
                // still good, without this end state.
                Err(ra_trace::Error::FsState(e)) => {
                    eprintln!(
                        "reanimator: warning: the end state of {} is not stored: {e}",
                        d.display()
                    );
                    ends.push(None);
                }
                Err(e) => {
                    let _ = w.finish();
                    return Err(anyhow::Error::new(e)
                        .context(format!("storing the end state of {}", d.display())));
                }
            }
        }
        w.finish().with_context(|| format!("finishing {}", a.output.display()))?;
    }
    let file_bytes = std::fs::metadata(&a.output).map_or(0, |m| m.len());
    let written_to = match &net {
        Some(n) => crate::output::net_summary(&n.report()),
        None if dest == ra_trace::Destination::Stdout => "standard output".to_string(),
        None => format!("{} ({:.1} MB)", a.output.display(), file_bytes as f64 / 1e6),
    };
    if a.json {
        let summary = Summary {
            command: &command,
            backend: backend.name(),
            outcome: &outcome,
            elapsed_s: elapsed.as_secs_f64(),
            trace: match &net {
                Some(n) => crate::output::net_json(&n.report()),
                None => serde_json::json!({
                    "path": a.output.display().to_string(),
                    "bytes": file_bytes,
                }),
            },
            detached: a.pid.map(process_alive),
            snapshots: snapshot_dirs
                .iter()
                .zip(&starts)
                .enumerate()
                .map(|(i, (d, s))| (d.as_path(), s, ends.get(i).and_then(Option::as_ref)))
                .collect(),
        };
        // Through a String: a closed pipe is then an io::Error (main: a normal end).
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string_pretty(&summary.to_json())?)?;
        out.flush()?;
    } else if !a.quiet {
        let ended = match (a.pid, &a.cgroup) {
            (_, Some(cg)) => format!("stopped recording the cgroup {}", cg.display()),
            (Some(pid), _) if process_alive(pid) => {
                format!("detached from pid {pid} (still running): `{}`", attached_cmdline(pid))
            }
            (Some(pid), _) => format!("pid {pid} ended while it was recorded"),
            (None, None) => format!("`{command}` exited with status {}", outcome.exit_code),
        };
        eprintln!(
            "reanimator: recorded {} calls ({:.1} MB of data){} from {} process{}, {} thread{} in {:.2} s with {} -> {}; {}",
            outcome.events,
            outcome.data_bytes as f64 / 1e6,
            if outcome.lost_events > 0 {
                format!(", LOST {} calls (see `reanimator info`)", outcome.lost_events)
            } else {
                String::new()
            },
            outcome.processes,
            if outcome.processes == 1 { "" } else { "es" },
            outcome.threads,
            if outcome.threads == 1 { "" } else { "s" },
            elapsed.as_secs_f64(),
            backend.name(),
            written_to,
            ended
        );
        for (i, d) in snapshot_dirs.iter().enumerate() {
            let s = &starts[i];
            let end = match ends.get(i).and_then(Option::as_ref) {
                Some(e) => format!("end {} entries", e.entries),
                None => "no end state".to_string(),
            };
            eprintln!(
                "reanimator: snapshot {i} of {}: start {} entries ({} files, {:.1} MB; {} contents stored, {:.1} MB), {end}",
                d.display(),
                s.entries,
                s.files,
                s.file_bytes as f64 / 1e6,
                s.blobs,
                s.blob_bytes as f64 / 1e6,
            );
        }
    }
    let denied = outcome.facts.iter().find(|(k, _)| k == "io_uring_denied");
    if let Some((_, n)) = denied.filter(|(_, n)| n != "0" && !a.quiet) {
        eprintln!(
            "reanimator: {n} io_uring_setup call(s) made to fail with ENOSYS (--io-uring deny)"
        );
    }
    if let Some(line) = uring_unobserved_line(&outcome) {
        // (Also with --quiet: requests are missing from the trace.)
        eprintln!("reanimator: warning: {line}");
    }
    Ok(ExitCode::from(outcome.exit_code.clamp(0, 255) as u8))
}

/// The ptrace recorder's io_uring requests it could not see (facts `uring_unobserved`,
/// `uring_rings_unobserved`, `uring_unobserved_why`), in one line; None when it saw all.
fn uring_unobserved_line(o: &ra_capture::Outcome) -> Option<String> {
    let fact = |k: &str| o.facts.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let n = |k: &str| fact(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let (ops, rings) = (n("uring_unobserved"), n("uring_rings_unobserved"));
    if ops == 0 && rings == 0 {
        return None;
    }
    Some(format!(
        "{ops} io_uring operation{} could not be seen by the ptrace recorder ({} ring{}: {}) \
         and are not in the trace; record with --backend ebpf to capture them",
        if ops == 1 { "" } else { "s" },
        rings,
        if rings == 1 { "" } else { "s" },
        fact("uring_unobserved_why").unwrap_or("completions whose submission was not seen"),
    ))
}

/// What `record --json` prints.
struct Summary<'a> {
    command: &'a str,
    backend: &'static str,
    outcome: &'a ra_capture::Outcome,
    elapsed_s: f64,
    /// The file (`path`, `bytes`) or where the network trace went (`output::net_json`).
    trace: serde_json::Value,
    /// With -p: whether the process still runs (detached) or ended while recorded.
    detached: Option<bool>,
    snapshots: Vec<(&'a std::path::Path, &'a PhaseInfo, Option<&'a PhaseInfo>)>,
}

impl Summary<'_> {
    fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let o = self.outcome;
        let fact =
            |k: &str| o.facts.iter().find(|(n, _)| n == k).and_then(|(_, v)| v.parse::<u64>().ok());
        json!({
            "command": self.command,
            "backend": self.backend,
            "exit_status": o.exit_code,
            "calls": o.events,
            "data_bytes": o.data_bytes,
            "processes": o.processes,
            "threads": o.threads,
            "lost_calls": o.lost_events,
            // The eBPF backend with --loss throttle stops producers; null where nothing can
            // be throttled (ptrace, --loss drop).
            "throttle_stops": fact("ebpf_throttle_stops"),
            "synthetic_ids": o.synthetic_ids,
            "elapsed_s": self.elapsed_s,
            "detached": self.detached,
            "trace": self.trace,
            "snapshots": self.snapshots.iter().map(|(d, s, e)| json!({
                "dir": d.display().to_string(),
                "start": {"entries": s.entries, "files": s.files, "file_bytes": s.file_bytes,
                          "contents_stored": s.blobs, "contents_bytes": s.blob_bytes},
                "end": e.map(|e| json!({"entries": e.entries})),
            })).collect::<Vec<_>>(),
        })
    }
}

/// The stream's name at a collector: the command's file name, or what is attached to.
fn stream_label(target: &Target) -> String {
    match target {
        Target::Command(argv) => argv
            .first()
            .and_then(|p| std::path::Path::new(p).file_name())
            .map_or_else(|| "record".to_string(), |n| n.to_string_lossy().into_owned()),
        Target::Pid(pid) => format!("pid{pid}"),
        Target::Cgroup(cg) => cg
            .file_name()
            .map_or_else(|| "cgroup".to_string(), |n| n.to_string_lossy().into_owned()),
    }
}

/// The backend to record with: `--backend auto` tries ebpf and falls back to ptrace, saying
/// why in one line.
fn choose_backend(
    a: &RecordArgs,
    target: &Target,
    opts: &Options,
) -> Result<Box<dyn ra_capture::Backend>> {
    // The programs are loaded (verified) here, before the trace file exists: whatever the
    // kernel refuses leaves no file behind, and `auto` loads them once, not once to probe
    // and again to record.
    let ebpf = || -> std::result::Result<Box<dyn ra_capture::Backend>, ra_capture::Unavailable> {
        let config = ebpf::Config {
            loss: match a.loss {
                Loss::Throttle => LossPolicy::Throttle,
                Loss::Drop => LossPolicy::Drop,
            },
            ring_bytes: a.ring_size.unwrap_or(if opts.data == DataMode::NONE {
                ebpf::DEFAULT_RING_BYTES_NO_DATA
            } else {
                ebpf::DEFAULT_RING_BYTES
            }),
        };
        let mut b = EbpfBackend::new(config);
        b.prepare(target, opts)?;
        Ok(Box::new(b))
    };
    let ptrace: Box<dyn ra_capture::Backend> = Box::new(PtraceBackend {
        cpu: match a.cpu {
            Cpu::Auto => CpuPolicy::Auto,
            Cpu::Same => CpuPolicy::Same,
            Cpu::Any => CpuPolicy::Any,
        },
    });
    let warn_privileges = || {
        if let Target::Command(argv) = target {
            if let Some(w) = argv.first().and_then(|p| ra_capture::ptrace::privilege_loss(p)) {
                eprintln!("reanimator: warning: {w}");
            }
        }
    };
    if a.io_uring == IoUring::Deny {
        // Only a tracer that stops the call can change its result.
        return match a.backend {
            Backend::Ebpf => anyhow::bail!(
                "--io-uring deny needs the ptrace backend (the ebpf recorder cannot make a \
                 call fail): use --backend ptrace"
            ),
            _ if matches!(target, Target::Cgroup(_)) => {
                anyhow::bail!(
                    "--io-uring deny needs the ptrace backend, which cannot record a cgroup"
                )
            }
            _ => {
                warn_privileges();
                Ok(ptrace)
            }
        };
    }
    match a.backend {
        Backend::Ebpf => {
            ebpf().map_err(|why| anyhow::anyhow!("the ebpf backend cannot run here: {why}"))
        }
        Backend::Ptrace => {
            warn_privileges();
            Ok(ptrace)
        }
        Backend::Auto => match ebpf() {
            Ok(b) => Ok(b),
            Err(why) if matches!(target, Target::Cgroup(_)) => {
                anyhow::bail!("--cgroup needs the ebpf backend, which cannot run here: {why}")
            }
            Err(why) => {
                if !a.quiet {
                    eprintln!("reanimator: using the ptrace backend (ebpf unavailable: {why})");
                }
                warn_privileges();
                Ok(ptrace)
            }
        },
    }
}

/// The command line of process `pid`, shell-quoted ("" when it cannot be read).
fn attached_cmdline(pid: i32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let args: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| shell_quote(std::ffi::OsStr::from_bytes(a)))
        .collect();
    args.join(" ")
}

/// Whether `pid` is still a running process (not gone, not a zombie).
fn process_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])))
        .is_some_and(|dead| !dead)
}
