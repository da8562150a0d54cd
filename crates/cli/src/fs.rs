//! `reanimator fs`: mount and unmount the tracing file system (crates/fs).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use ra_capture::STOP_REQUESTS;
use ra_fs::{GroupBy, MountConfig, Unmounted};
use ra_profile::ProfileSink;

use crate::output::{ChainArgs, NetArgs};

#[derive(Args, Debug)]
pub struct FsArgs {
    #[command(subcommand)]
    cmd: FsCmd,
}

impl FsArgs {
    /// `fs mount --key`: the host key of a `-o tcp://` trace.
    pub fn key(&self) -> Option<&std::path::Path> {
        match &self.cmd {
            FsCmd::Mount(m) => m.key.as_deref(),
            _ => None,
        }
    }
}

// (Parsed once per run: the size of the mount variant does not matter.)
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum FsCmd {
    /// Mount a tracing passthrough of LOWER at MOUNTPOINT and record every file-system
    /// operation into a trace. Runs in the foreground until Ctrl-C, SIGTERM, `reanimator fs
    /// umount MOUNTPOINT` or `umount MOUNTPOINT`; then finishes the trace.
    Mount(MountArgs),
    /// Unmount a tracing file system: the daemon flushes and closes its trace, and this waits
    /// for it. Exit status 0 when the trace was finished, 2 when the daemon's trace is
    /// incomplete (a write failed) or it did not finish in time.
    Umount(UmountArgs),
    /// Control a live mount without unmounting it (Tracefs' run-time control): pause and
    /// resume tracing, change the filter or the data mode, read the counters, flush the trace.
    /// Only the mount's owner (who started its daemon) and root may. Each change is a `ctl`
    /// record in the trace at the moment it took effect.
    Ctl(CtlArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TransportArg {
    /// io_uring where the kernel offers it, else /dev/fuse.
    Auto,
    /// FUSE-over-io_uring.
    Uring,
    /// /dev/fuse.
    Dev,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum By {
    /// Per operation.
    Op,
    /// Per operation and calling uid.
    Uid,
    /// Per operation and top-level directory under the mountpoint (`path1`, `path2`, ...:
    /// that many leading path components).
    Path,
}

#[derive(Args, Debug)]
#[command(after_help = "Modes:\n  \
    --fidelity (default): the kernel keeps names for 1 s (its dentry cache) but no attributes, \
    and drops a file's cached pages at each open: every stat, permission check, open, read and \
    write reaches the tracer, page I/O of memory-mapped files included; a lookup of a name \
    looked up, created or listed in the last second is answered by the kernel (as under a \
    stackable file system such as Tracefs). One worker thread, so that the trace's order is \
    the order operations were answered in.\n  \
    --every-lookup: no name cache either: each path walk's lookups reach the tracer too; one \
    worker thread. Slower: each path component costs a round trip.\n  \
    --fast: attributes and names cached for 1 s, file pages kept between opens, one worker per \
    CPU. Fastest for metadata-heavy work, but operations the kernel answers from its caches \
    never reach the tracer.\n  \
    In every mode writeback caching and FUSE passthrough stay off (they would take reads and \
    writes out of the daemon's view); the trace header (fs_mode, fs_kernel_cache) says what \
    the mode could not see.\n\n\
Transport (--transport): `uring` serves requests over FUSE-over-io_uring (Linux 6.14+: one \
ring per CPU, each answer and the next request in one command); `dev` reads and writes \
/dev/fuse; `auto` (the default) takes io_uring where the kernel offers it (the fuse module's \
enable_uring parameter) and says why when it falls back to /dev/fuse. `uring` turns that \
parameter on when it is off, and is refused where the kernel has none. \
REANIMATOR_FS_TRANSPORT=auto|uring|dev sets the default.\n\n\
Permissions: the mount grants no access the lower file system would refuse. The kernel checks \
every access with the caller's credentials against the lower files' modes, owners and POSIX \
ACLs; the daemon refuses callers who could not search LOWER's ancestors; files are created \
with the caller's uid, gid and umask. Needs root (FUSE mount).\n\n\
Outputs: the trace, a spill file, --profile and --log must not lie beneath LOWER, MOUNTPOINT or \
any other reanimator fs mount (refused before anything is created); whatever the paths say, \
operations on the daemon's own files pass through the mount untraced. A mount is refused \
when LOWER or MOUNTPOINT is, contains or lies beneath another live mount's LOWER or \
MOUNTPOINT.\n\n\
Filters (--filter) use the `dump --where` language over: op, uid, gid, pid, tid, sid, comm, \
path (glob), ext, size, errno, inode. An operation that does not match is passed through and \
not recorded.\n\n\
Tracers (Tracefs' several tracers): -o, --filter, --data and --aggregate configure the first \
tracer; each --tracer SPEC adds one more, with a trace file of its own (mode 0600; no two \
tracers write one file) and its own filter, data mode, driver and counters. SPEC is \
comma-separated KEY=VALUE: out=FILE (required), name=NAME (default: its number, the first \
being 1 or --tracer-name), filter=EXPR, data=full|hash|none or 'write=LEVEL,read=LEVEL' (default full), \
driver=stream|aggregate:SECS|stream+aggregate:SECS (default stream). A value holding a comma \
is quoted in single quotes, filter='op in {read, write}'; inside the quotes '' stands for one \
'. Each operation is traced once and offered to every tracer; a buffer is hashed once for \
all tracers that hash. --sync, --aggregate-by and --chain apply to every tracer; --print, \
--print-aggregate and --profile show the first. `fs ctl --tracer N|NAME` addresses one.\n\n\
Examples:\n  \
    reanimator fs mount /srv/data /mnt/traced -o data.ds\n  \
    reanimator fs mount /srv/data /mnt/traced -o all.ds --data hash --tracer \"name=w,out=w.ds,filter='op in {write, unlink}'\" --tracer out=agg.ds,driver=aggregate:5\n  \
    reanimator fs mount /srv/data /mnt/traced -o t.ds --data hash --filter 'ext in {c, h} || op == unlink'\n  \
    reanimator fs mount /srv/data /mnt/traced -o t.ds --aggregate=5 --print-aggregate\n  \
    reanimator fs umount /mnt/traced")]
pub struct MountArgs {
    /// With `-o tcp://`: the host key (`reanimator keygen --host NAME --from MASTER`) the
    /// daemon authenticates to the collector with; the trace is then sealed with it
    /// (docs/NETWORK.md).
    #[arg(long, value_name = "KEYFILE")]
    pub key: Option<PathBuf>,
    /// The directory to trace (any file system).
    lower: PathBuf,
    /// An empty directory to mount the traced view on.
    mountpoint: PathBuf,
    /// The trace file to write (not inside MOUNTPOINT; created mode 0600, readable by you
    /// alone, as is its .log), or tcp://HOST:PORT[/LABEL] to stream it to `reanimator
    /// collect` (with `--key HOSTKEY` the sender authenticates and the trace is
    /// sealed with that host key, docs/NETWORK.md).
    #[arg(short = 'o', long = "output", value_name = "TRACE")]
    output: PathBuf,
    /// How much of each read's and write's data to keep: full, hash (length and digest) or
    /// none, both ways, or per direction `write=LEVEL,read=LEVEL` (an omitted direction is
    /// full), e.g. `--data write=full,read=none` keeps what was written (write, setxattr) and
    /// only the length of what was read (read, getxattr). Paths, names and link targets are
    /// always kept.
    #[arg(long, value_name = "MODE", default_value = "full")]
    data: String,
    /// Kernel caches on, several threads (see Modes below).
    #[arg(long, conflicts_with_all = ["fidelity", "every_lookup"])]
    fast: bool,
    /// Names cached 1 s, attributes asked every time (the default; see Modes below).
    #[arg(long, conflicts_with = "every_lookup")]
    fidelity: bool,
    /// No kernel cache at all: every lookup of every path walk reaches the tracer; one
    /// worker thread (see Modes below).
    #[arg(long)]
    every_lookup: bool,
    /// How requests reach the daemon: auto (io_uring where the kernel offers it, else
    /// /dev/fuse), uring, dev (default: REANIMATOR_FS_TRANSPORT, else auto; see Transport
    /// below).
    #[arg(long, value_enum)]
    transport: Option<TransportArg>,
    /// No page cache on the mount (FOPEN_DIRECT_IO): each read and write call a program makes
    /// reaches the tracer as one operation (split at 1 MiB), even rereads of cached data;
    /// shared mmaps still work. Slower for programs that reread.
    #[arg(long)]
    direct_io: bool,
    /// FUSE worker threads (default: 1, the CPU count with --fast; more than one on io_uring
    /// means one per CPU, each pinned to its CPU).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Option<u32>,
    /// Record only operations for which this expression holds (see Filters below).
    #[arg(long, value_name = "EXPR")]
    filter: Option<String>,
    /// One more tracer on this mount, with its own trace file, filter, data mode and driver
    /// (repeatable; see Tracers below): `out=FILE[,name=NAME][,filter=EXPR]
    /// [,data=full|hash|none][,driver=stream|aggregate:SECS|stream+aggregate:SECS]`.
    #[arg(long = "tracer", value_name = "SPEC")]
    tracers: Vec<String>,
    /// The name of the first tracer (the one -o, --filter, --data and --aggregate configure),
    /// for `fs ctl --tracer` (default: 1).
    #[arg(long, value_name = "NAME", default_value = "1")]
    tracer_name: String,
    /// Aggregate driver: per interval and operation, counts, bytes, errors and a log2 latency
    /// histogram, stored in the trace (`Reanimator::FsAggregate`). Default interval 1 s.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "1")]
    aggregate: Option<f64>,
    /// Group the aggregate by operation and this key as well.
    #[arg(long, value_enum, default_value_t = By::Op, requires = "aggregate")]
    aggregate_by: By,
    /// With --aggregate-by path: how many leading path components form a group.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "aggregate")]
    aggregate_depth: usize,
    /// Print each aggregate interval on stderr as it closes (bcc-style histograms).
    #[arg(long, requires = "aggregate")]
    print_aggregate: bool,
    /// Write the aggregate as a latency profile to FILE (JSON Lines, docs/PROFILE.md: FSprof's
    /// stackable mode): per interval and operation, the daemon's service time of every
    /// request (lower calls included) in log2 histograms. Turns on --aggregate=1 unless it is
    /// given. `reanimator profile FILE` shows it as text or pictures (--svg).
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// With --aggregate: record no per-operation records, only the aggregates.
    #[arg(long, requires = "aggregate")]
    aggregate_only: bool,
    #[command(flatten)]
    chain: ChainArgs,
    #[command(flatten)]
    net: NetArgs,
    /// Detach once the mount is up (the daemon keeps running; stop it with `fs umount`).
    #[arg(long)]
    daemon: bool,
    /// Also print each operation recorded, as `reanimator dump` shows it, on stderr or into
    /// FILE (created mode 0600; not beneath LOWER or MOUNTPOINT), by a thread the file system
    /// never waits for: lines it cannot print in time are left out and counted (the trace
    /// has every operation).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    print: Option<PathBuf>,
    /// When the mount ends, print its summary as JSON on stdout (operations, recorded,
    /// filtered out, untraced, elapsed seconds, the trace's path and size, and whether it is
    /// complete), as `fs umount --json` does.
    #[arg(long, conflicts_with = "daemon")]
    json: bool,
    /// Each record is written to the trace file and made durable (fdatasync) before its
    /// operation is answered (Tracefs' unbuffered mode, for debugging): a daemon killed or a
    /// machine that crashes loses no operation a program saw answered. Costs a disk flush per
    /// operation (docs/PERFORMANCE.md, bench/fs `reanimator-sync`). Needs `-o FILE`.
    #[arg(long)]
    sync: bool,
    /// With --daemon: the daemon's log (default: the trace's name with `.log`, or
    /// reanimator-fs-PID.log in the temporary directory for a tcp:// trace).
    #[arg(long, value_name = "FILE", requires = "daemon")]
    log: Option<PathBuf>,
}

#[derive(Args, Debug)]
#[command(after_help = "Commands:\n  \
    pause: record nothing from now on (operations still pass through; they are counted). The \
    trace gets a `ctl` record `pause` now, and at the resume one `ctl` record `resume` whose \
    return value is the number of operations served while paused, and a Lost row (reanimator \
    info) with that count and the pause's time range.\n  \
    resume: record again.\n  \
    filter EXPR: record what EXPR passes from now on (the --filter language); `filter none` \
    records everything.\n  \
    data full|hash|none|write=LEVEL,read=LEVEL: how much of each buffer the records keep from \
    now on (e.g. `data write=full,read=hash`).\n  \
    stats: the daemon's counters (operations, recorded, filtered_out, paused_out, untraced, \
    the data mode and filter in force); --json for scripts.\n  \
    flush: write every buffered record to the trace file now.\n\n\
The daemon listens on /run/reanimator/fs/PID.ctl (root's directory, socket 0600) and checks \
each caller's credentials (SO_PEERCRED); a request is one line of at most 4096 bytes, and at \
most 50 are served a second.\n\n\
Examples:\n  \
    reanimator fs ctl /mnt/traced pause\n  \
    reanimator fs ctl /mnt/traced filter 'op in {read, write} && ext == db'\n  \
    reanimator fs ctl /mnt/traced stats --json")]
pub struct CtlArgs {
    /// Where the tracing file system is mounted.
    mountpoint: PathBuf,
    /// pause, resume, filter EXPR|none, data full|hash|none, stats or flush (see below).
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
    /// Print the answer as JSON on stdout (`stats`: its counters, numbers as numbers); may
    /// also come last, after the command.
    #[arg(long)]
    json: bool,
    /// Address one tracer of the mount (its number, from 1, or its `name=`); default: all of
    /// them (`stats`: the first's counters, then each's as `tracer.N.*`). May also come
    /// right after MOUNTPOINT.
    #[arg(long, value_name = "N|NAME")]
    tracer: Option<String>,
}

#[derive(Args, Debug)]
pub struct UmountArgs {
    /// Where the tracing file system is mounted.
    mountpoint: PathBuf,
    /// Cut the connection off (pending and future operations fail with ENOTCONN) and detach
    /// the mount: for a daemon that was killed or hangs. The trace keeps what was written.
    #[arg(long)]
    force: bool,
    /// How long to wait for the daemon to finish its trace (what it waits for is said every
    /// 5 s).
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
    /// Print how the trace ended as JSON on stdout: `ended` (finished, incomplete, unknown,
    /// stale, forced), the daemon, and what it did (operations, recorded, filtered out,
    /// untraced, elapsed seconds, the trace's path and size) when it said.
    #[arg(long)]
    json: bool,
}

/// The `--json` summary of a mount (`fs mount --json`, `fs umount --json`); `totals` is what
/// the daemon did, when known.
fn summary_json(
    mountpoint: &std::path::Path,
    daemon: Option<u32>,
    ended: &str,
    reason: Option<&str>,
    totals: Option<&ra_fs::registry::Totals>,
) -> serde_json::Value {
    let mut j = serde_json::json!({
        "mountpoint": mountpoint.display().to_string(),
        "daemon": daemon,
        "ended": ended,
        "reason": reason,
    });
    if let Some(t) = totals {
        for (k, v) in [
            ("operations", serde_json::json!(t.operations)),
            ("recorded", t.recorded.into()),
            ("filtered_out", t.filtered_out.into()),
            ("untraced", t.untraced.into()),
            ("elapsed_s", (t.elapsed_ns as f64 / 1e9).into()),
            ("trace", serde_json::json!({"path": t.trace, "bytes": t.trace_bytes})),
        ] {
            j[k] = v;
        }
        if !t.tracers.is_empty() {
            j["tracers"] = t
                .tracers
                .iter()
                .map(|tt| {
                    serde_json::json!({
                        "name": tt.name,
                        "operations": tt.operations,
                        "recorded": tt.recorded,
                        "filtered_out": tt.filtered_out,
                        "trace": {"path": tt.trace, "bytes": tt.trace_bytes},
                    })
                })
                .collect();
        }
    }
    j
}

/// `j` on stdout, through a String (a closed pipe is then an io::Error: a normal end).
fn print_json(j: &serde_json::Value) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", serde_json::to_string_pretty(j)?)?;
    out.flush()?;
    Ok(())
}

/// Stop requests (Ctrl-C, SIGTERM, SIGHUP), counted by record's handlers.
fn stops() -> u32 {
    STOP_REQUESTS.load(Ordering::Relaxed).max(0) as u32
}

/// `key`: its `--key`, a host key to authenticate to the collector with `-o tcp://`.
pub fn run(a: FsArgs, key: Option<&ra_trace::key::Key>) -> Result<ExitCode> {
    match a.cmd {
        FsCmd::Mount(m) => mount(m, key),
        FsCmd::Umount(u) => umount(u),
        FsCmd::Ctl(c) => ctl(c),
    }
}

fn mount(a: MountArgs, key: Option<&ra_trace::key::Key>) -> Result<ExitCode> {
    let transport = match a.transport {
        Some(t) => t,
        None => match std::env::var("REANIMATOR_FS_TRANSPORT") {
            Err(_) => TransportArg::Auto,
            Ok(v) => TransportArg::from_str(&v, true).map_err(|_| {
                anyhow::anyhow!("REANIMATOR_FS_TRANSPORT={v:?}: expected auto, uring or dev")
            })?,
        },
    };
    let filter = match &a.filter {
        Some(src) => Some((
            src.clone(),
            ra_fs::tracer::parse_filter(src).map_err(|e| anyhow::anyhow!("--{e}"))?,
        )),
        None => None,
    };
    let aggregate = match a.aggregate {
        Some(s) if !(0.05..=86400.0).contains(&s) => {
            anyhow::bail!("--aggregate {s}: the interval must be between 0.05 and 86400 seconds")
        }
        Some(s) => Some(Duration::from_secs_f64(s)),
        None if a.profile.is_some() => Some(Duration::from_secs(1)),
        None => None,
    };
    let group_by = match a.aggregate_by {
        By::Op => GroupBy::Op,
        By::Uid => GroupBy::Uid,
        By::Path => GroupBy::PathPrefix(a.aggregate_depth.max(1)),
    };
    let profile_group = group_by.clone();
    let command: Vec<String> = std::env::args().collect();
    let output = a.net.destination(&a.chain, &a.output, key)?;
    let log = a.daemon.then(|| daemon_log(&a, &output));
    let mut other_outputs = Vec::new();
    if let Some(p) = &a.profile {
        other_outputs.push(("--profile".to_string(), p.clone()));
    }
    if let Some((p, _)) = &log {
        other_outputs.push(("--log".to_string(), p.clone()));
    }
    if let Some(p) = a.print.as_ref().filter(|p| p.as_os_str() != "-") {
        other_outputs.push(("--print".to_string(), p.clone()));
    }
    let mut more = Vec::new();
    for (i, spec) in a.tracers.iter().enumerate() {
        more.push(
            ra_fs::spec::parse(spec, i + 2)
                .map_err(|e| anyhow::anyhow!("--tracer {spec:?}: {e}"))?,
        );
    }
    let cfg = MountConfig {
        lower: a.lower.clone(),
        mountpoint: a.mountpoint.clone(),
        compression: a.chain.writer_options_for(&output)?,
        output,
        data: crate::record::parse_data(&a.data)?,
        fast: a.fast,
        every_lookup: a.every_lookup,
        transport: match transport {
            TransportArg::Auto => ra_fs::Transport::Auto,
            TransportArg::Uring => ra_fs::Transport::Uring,
            TransportArg::Dev => ra_fs::Transport::Dev,
        },
        direct_io: a.direct_io,
        threads: a.threads.map(|t| t as usize),
        filter,
        stream: !a.aggregate_only,
        aggregate,
        group_by,
        info: vec![("command".into(), command.join(" ").into_bytes())],
        other_outputs,
        print: None,
        sync: a.sync,
        name: a.tracer_name.clone(),
        more,
    };
    // Refused before any file (log, profile, trace) is created.
    ra_fs::check(&cfg)?;
    if let Some(log) = log {
        return daemonize(&a, &log.0, log.1);
    }
    let mut cfg = cfg;
    cfg.print = match &a.print {
        None => None,
        Some(p) => Some(ra_trace::live::Print {
            out: if p.as_os_str() == "-" {
                Box::new(std::io::stderr())
            } else {
                Box::new(
                    ra_fsstate::private::create(p)
                        .with_context(|| format!("--print: cannot create {}", p.display()))?,
                )
            },
            format: ra_trace::format::FormatOptions::default(),
            cwd: None,
        }),
    };
    let mut profile = match &a.profile {
        Some(p) => {
            let f = ra_fsstate::private::create(p)
                .with_context(|| format!("--profile: cannot create {}", p.display()))?;
            let mut sink = ra_profile::sink::JsonSink::new(std::io::BufWriter::new(f));
            let meta = ra_profile::Meta::local(
                "fs",
                format!("{} at {}", a.lower.display(), a.mountpoint.display()),
                aggregate.map_or(0, |d| d.as_nanos() as u64),
                match a.aggregate_by {
                    By::Op => "call",
                    By::Uid => "uid",
                    By::Path => "path",
                },
            );
            if let Err(e) = sink.meta(&meta) {
                let _ = std::fs::remove_file(p);
                return Err(e).with_context(|| format!("--profile: writing {}", p.display()));
            }
            Some((p.clone(), sink))
        }
        None => None,
    };
    let mut profile_error: Option<String> = None;
    let print_aggregate = a.print_aggregate;
    crate::record::install_stop_handlers();
    let summary = ra_fs::mount(
        cfg,
        |lower, mnt| {
            eprintln!(
                "reanimator fs: mounted {} at {} (pid {}); Ctrl-C or `reanimator fs umount {}` \
                 finishes the trace",
                lower.display(),
                mnt.display(),
                std::process::id(),
                mnt.display()
            );
        },
        &stops,
        |iv, last| {
            if print_aggregate {
                eprint!("{}", ra_fs::tracer::format_interval(iv, true));
            }
            if let Some((path, sink)) = profile.as_mut() {
                let piv = ra_fs::tracer::to_profile_interval(iv, last, &profile_group);
                let r =
                    sink.interval(&piv).and_then(|()| if last { sink.finish() } else { Ok(()) });
                if let Err(e) = r {
                    if profile_error.is_none() {
                        eprintln!(
                            "reanimator fs: --profile: cannot write {}: {e}; the file system \
                             keeps serving",
                            path.display()
                        );
                        profile_error = Some(e.to_string());
                    }
                }
            }
        },
    );
    let summary = match summary {
        Ok(s) => s,
        Err(e) => {
            ra_fs::registry::finish(ra_fs::registry::Outcome::Failed(e.to_string()), None);
            if let (Some((p, _)), ra_fs::Error::Usage(_) | ra_fs::Error::Mount { .. }) =
                (&profile, &e)
            {
                // Never mounted: leave nothing behind.
                let _ = std::fs::remove_file(p);
            }
            return Err(e.into());
        }
    };
    let trace = match &summary.net {
        Some(r) => crate::output::net_summary(r),
        None => format!("{} ({:.1} MB)", a.output.display(), summary.trace_bytes as f64 / 1e6),
    };
    let paused = if summary.paused_out > 0 {
        format!(", {} not recorded while paused (fs ctl)", summary.paused_out)
    } else {
        String::new()
    };
    eprintln!(
        "reanimator fs: {} operations in {:.1} s, {} recorded, {} filtered out{paused}; trace \
         {trace}",
        summary.operations,
        summary.elapsed.as_secs_f64(),
        summary.recorded,
        summary.filtered_out,
    );
    if summary.untraced > 0 {
        eprintln!(
            "reanimator fs: {} operations on the daemon's own files (its trace, log or profile, \
             reached through the mount) passed through untraced",
            summary.untraced
        );
    }
    if let Some((p, _)) = &profile {
        eprintln!("reanimator fs: profile {}", p.display());
    }
    if summary.tracers.len() > 1 {
        for t in &summary.tracers {
            eprintln!(
                "reanimator fs: tracer {}: {} recorded, {} filtered out; trace {} ({:.1} MB){}",
                t.name,
                t.recorded,
                t.filtered_out,
                t.trace,
                t.trace_bytes as f64 / 1e6,
                t.failure.as_ref().map_or(String::new(), |f| format!(", incomplete: {f}"))
            );
        }
    }
    let failure = summary
        .tracers
        .iter()
        .skip(1)
        .find_map(|t| t.failure.as_ref().map(|f| format!("tracer {}: {f}", t.name)));
    let summary = ra_fs::Summary { failure: summary.failure.clone().or(failure), ..summary };
    let totals = ra_fs::registry::Totals {
        operations: summary.operations,
        recorded: summary.recorded,
        filtered_out: summary.filtered_out,
        untraced: summary.untraced,
        elapsed_ns: summary.elapsed.as_nanos().min(u64::MAX as u128) as u64,
        trace: match &summary.net {
            Some(r) => format!("tcp://{}", r.addr),
            None => {
                std::path::absolute(&a.output).unwrap_or(a.output.clone()).display().to_string()
            }
        },
        trace_bytes: summary.net.as_ref().map_or(summary.trace_bytes, |r| r.acked),
        tracers: summary
            .tracers
            .iter()
            .enumerate()
            .map(|(i, t)| ra_fs::registry::TracerTotals {
                name: t.name.clone(),
                operations: t.operations,
                recorded: t.recorded,
                filtered_out: t.filtered_out,
                trace_bytes: if i == 0 {
                    summary.net.as_ref().map_or(summary.trace_bytes, |r| r.acked)
                } else {
                    t.trace_bytes
                },
                trace: if i == 0 {
                    match &summary.net {
                        Some(r) => format!("tcp://{}", r.addr),
                        None => std::path::absolute(&a.output)
                            .unwrap_or(a.output.clone())
                            .display()
                            .to_string(),
                    }
                } else {
                    std::path::absolute(&t.trace)
                        .map_or(t.trace.clone(), |p| p.display().to_string())
                },
            })
            .collect(),
    };
    let failure = summary.failure.or(profile_error);
    if a.json {
        let ended = if failure.is_some() { "incomplete" } else { "finished" };
        let j = summary_json(
            &a.mountpoint,
            Some(std::process::id()),
            ended,
            failure.as_deref(),
            Some(&totals),
        );
        if let Err(e) = print_json(&j) {
            eprintln!("reanimator fs: --json: {e}");
        }
    }
    if let Some(f) = failure {
        eprintln!("reanimator fs: the trace is incomplete: {f}");
        ra_fs::registry::finish(ra_fs::registry::Outcome::Failed(f), Some(totals));
        return Ok(ExitCode::from(2));
    }
    ra_fs::registry::finish(ra_fs::registry::Outcome::Finished, Some(totals));
    Ok(ExitCode::SUCCESS)
}

/// The daemon's log: `--log`, else the trace's name with `.log`, or for a network trace a
/// file in the temporary directory (then `true`: it is made exclusively, so that a name
/// planted there by somebody else, a symlink among them, is never opened).
fn daemon_log(a: &MountArgs, output: &ra_trace::Destination) -> (PathBuf, bool) {
    if let Some(p) = &a.log {
        return (p.clone(), false);
    }
    match output {
        ra_trace::Destination::File(p) => (p.with_extension("log"), false),
        ra_trace::Destination::Tcp(_) | ra_trace::Destination::Stdout => {
            (std::env::temp_dir().join(format!("reanimator-fs-{}.log", std::process::id())), true)
        }
    }
}

/// `--daemon`: start ourselves again without it (and without `--log`: the log is the child's
/// stdout and stderr), in a new session with no terminal, and wait until the mount is up (or
/// the child failed: then its message is ours and its log is removed).
fn daemonize(a: &MountArgs, log: &std::path::Path, exclusive: bool) -> Result<ExitCode> {
    let mut args: Vec<OsString> = Vec::new();
    let mut skip_next = false;
    for s in std::env::args_os().skip(1) {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if s == "--daemon" || s.to_str().is_some_and(|t| t.starts_with("--log=")) {
            continue;
        }
        if s == "--log" {
            skip_next = true;
            continue;
        }
        args.push(s);
    }
    // The log quotes paths and errors of the traced tree: private, as the trace is.
    let made = if exclusive {
        ra_fsstate::private::create_new(log)
    } else {
        ra_fsstate::private::create(log)
    };
    let logf = made.with_context(|| format!("cannot create the daemon's log {}", log.display()))?;
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.args(&args).stdin(std::process::Stdio::null()).stdout(logf.try_clone()?).stderr(logf);
    // SAFETY: setsid in the child between fork and exec is async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_file(log);
            return Err(e).context("cannot start the daemon");
        }
    };
    let mnt = std::fs::canonicalize(&a.mountpoint).unwrap_or_else(|_| a.mountpoint.clone());
    let want = format!("{}{}", ra_fs::SOURCE_PREFIX, child.id());
    let t0 = std::time::Instant::now();
    loop {
        if ra_fs::mounts().iter().any(|m| m.mountpoint == mnt && m.source == want) {
            eprintln!(
                "reanimator fs: daemon {} serves {}; log {}; `reanimator fs umount {}` finishes the trace",
                child.id(),
                mnt.display(),
                log.display(),
                mnt.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(st) = child.try_wait()? {
            let msg = std::fs::read_to_string(log).unwrap_or_default();
            let _ = std::fs::remove_file(log);
            let msg = msg.trim();
            let msg = msg.strip_prefix("reanimator: error: ").unwrap_or(msg);
            anyhow::bail!("the daemon exited ({st}) before mounting: {msg}");
        }
        if t0.elapsed() > Duration::from_secs(30) {
            anyhow::bail!("the daemon did not mount within 30 s (log {})", log.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn umount(a: UmountArgs) -> Result<ExitCode> {
    crate::record::install_stop_handlers();
    let r = ra_fs::umount(
        &a.mountpoint,
        a.force,
        Duration::from_secs(a.timeout),
        &|| stops() > 0,
        &|m| eprintln!("reanimator fs: {m}"),
    )?;
    if a.json {
        let j = match &r {
            Unmounted::Clean { daemon, totals } => {
                summary_json(&a.mountpoint, Some(*daemon), "finished", None, totals.as_ref())
            }
            Unmounted::Failed { daemon, reason, totals } => summary_json(
                &a.mountpoint,
                Some(*daemon),
                "incomplete",
                Some(reason),
                totals.as_ref(),
            ),
            Unmounted::Unknown { daemon } => {
                summary_json(&a.mountpoint, Some(*daemon), "unknown", None, None)
            }
            Unmounted::Stale => summary_json(&a.mountpoint, None, "stale", None, None),
            Unmounted::Forced => summary_json(&a.mountpoint, None, "forced", None, None),
        };
        print_json(&j)?;
    }
    match r {
        Unmounted::Clean { daemon, .. } => {
            eprintln!("reanimator fs: unmounted; daemon {daemon} finished its trace")
        }
        Unmounted::Failed { daemon, reason, .. } => {
            eprintln!("reanimator fs: unmounted; daemon {daemon}'s trace is incomplete: {reason}");
            return Ok(ExitCode::from(2));
        }
        Unmounted::Unknown { daemon } => eprintln!(
            "reanimator fs: unmounted; daemon {daemon} exited without saying how its trace ended \
             (its log or terminal does)"
        ),
        Unmounted::Stale => eprintln!(
            "reanimator fs: the daemon was gone; removed the stale mount (its trace ends at the \
             last extent it flushed, at most about a second before it died)"
        ),
        Unmounted::Forced => eprintln!(
            "reanimator fs: connection aborted and mount detached (a running daemon finishes \
             its trace when it notices)"
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn ctl(mut a: CtlArgs) -> Result<ExitCode> {
    // `fs ctl MNT stats --json`: the command's words take the rest of the line.
    if a.command.len() > 1 && a.command.last().is_some_and(|w| w == "--json") {
        a.command.pop();
        a.json = true;
    }
    // `fs ctl MNT --tracer N CMD`: the flag among the command's words.
    if let Some(w) = a.command.first().cloned() {
        if let Some(v) = w.strip_prefix("--tracer=") {
            a.tracer = Some(v.to_string());
            a.command.remove(0);
        } else if w == "--tracer" {
            a.command.remove(0);
            if a.command.is_empty() {
                anyhow::bail!("--tracer needs a tracer's number or name");
            }
            a.tracer = Some(a.command.remove(0));
        }
    }
    if a.command.is_empty() {
        anyhow::bail!("no command; commands: {}", ra_fs::ctl::COMMANDS);
    }
    let mut command = a.command.join(" ");
    if let Some(t) = &a.tracer {
        if t.is_empty() || t.contains(char::is_whitespace) {
            anyhow::bail!("--tracer {t:?}: a tracer's number or name (one word)");
        }
        command = format!("--tracer {t} {command}");
    }
    let reply = ra_fs::ctl::send(&a.mountpoint, &command)?;
    if a.json {
        let mut j = serde_json::Map::new();
        for (k, v) in &reply {
            let val = match v.as_str() {
                "true" => serde_json::Value::Bool(true),
                "false" => serde_json::Value::Bool(false),
                _ if !k.ends_with("filter")
                    && !k.ends_with("name")
                    && k != "mountpoint"
                    && k != "message" =>
                {
                    v.parse::<u64>()
                        .map(serde_json::Value::from)
                        .or_else(|_| v.parse::<f64>().map(serde_json::Value::from))
                        .unwrap_or_else(|_| v.clone().into())
                }
                _ => v.clone().into(),
            };
            j.insert(k.clone(), val);
        }
        print_json(&serde_json::Value::Object(j))?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = format_ctl_reply(&reply);
    if reply.iter().any(|(k, _)| k == "message") {
        eprint!("{text}");
    } else {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// An `fs ctl` answer as text: a command's message as one line, `stats` as aligned
/// `key value` lines.
fn format_ctl_reply(reply: &[(String, String)]) -> String {
    let w = reply.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut s = String::new();
    for (k, v) in reply {
        if k == "message" {
            s.push_str(&format!("reanimator fs: {v}\n"));
        } else {
            s.push_str(&format!("{k:<w$}  {v}\n"));
        }
    }
    s
}
