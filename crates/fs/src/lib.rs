//! `reanimator fs`: a stackable tracing file system on FUSE, after Tracefs (FAST '04).
//!
//! [`mount`] serves a passthrough of a lower directory at a mountpoint and hands every
//! operation to the [`tracer`]: the input filter (`--filter`, the `dump --where` language),
//! the stream driver (one `Reanimator::FsOp` record per operation, data buffers at the chosen
//! verbosity) and the aggregate driver (per-interval counts, bytes, errors and log2 latency
//! histograms, `Reanimator::FsAggregate` rows). The passthrough itself is in [`passthrough`];
//! node ids and paths in [`inodes`]; file handles in [`handles`]; whose credentials a call
//! runs with and who may reach LOWER in [`access`]; what keeps a mount from tracing itself
//! (output and stacking checks, the daemon's own files) in [`guard`]; the live daemons, for
//! other mounts and `fs umount`, in [`registry`].
//!
//! Modes: *fidelity* (default) gives the kernel no attribute or entry cache and drops a
//! file's cached pages at every open, so every operation — page I/O of memory-mapped files
//! included — reaches the daemon; one worker thread, so the trace's order is the order the
//! operations were served in. *fast* gives the kernel one-second attribute and entry caches,
//! keeps file pages between opens, and serves requests on several threads: operations the
//! kernel answers from its caches are not seen (the trace header says so).
//!
//! # Parts
//!
//! `reanimator fs` (Tracefs on FUSE, docs/FS.md): `passthrough` (fuser `Filesystem`: every
//! operation on the lower directory through an `O_PATH` descriptor per node, default_permissions,
//! creating calls with the caller's fsuid/fsgid), `inodes` (node ids = lower inode numbers, paths
//! from parent + name), `handles` (descriptor-like numbers), `tracer` (input filter on a lazy view,
//! stream driver into `TraceWriter::append_fs`, aggregate driver with log2 histograms printed by
//! ra-profile), `mount`/`umount` (session, 1 s flush, signals, fusectl abort); `access` (callers
//! who could not reach LOWER through its ancestors are refused; ACLs are the kernel's,
//! FUSE_POSIX_ACL); `guard` (outputs beneath LOWER or a mount refused; the daemon's own files, by
//! device and inode, passed through untraced); `registry` (live mounts and their LOWER in
//! /run/reanimator/fs: stacking refused, how each trace ended for `fs umount`); `uring` (the
//! FUSE-over-io_uring transport: ring entries registered on the kernel's per-CPU queues, each
//! answer and the next request in one COMMIT_AND_FETCH, requests handed to fuser's dispatcher).
//! fuser is vendored with a small patch (vendor/fuser/PATCHED.md: a raw dispatcher and reply
//! sender, since fuser 0.18 has no io_uring transport and keeps its parsing private; separate entry
//! and attribute cache times), used through `[patch.crates-io]`, outside the workspace.
#![warn(missing_docs)]

pub mod access;
pub mod ctl;
pub mod guard;
pub mod handles;
pub mod inodes;
pub mod passthrough;
pub mod registry;
pub mod spec;
pub mod tracer;
pub mod uring;

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fuser::{Config, MountOption, SessionACL};
use ra_trace::{Destination, NetReport, TraceWriter, WriterConfig};

pub use tracer::{DataMode, GroupBy};

/// Errors that stop `fs mount` before or while serving.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request refused before anything is created, or a `fs umount` that cannot be done:
    /// the message says why and what to do (LOWER or the mountpoint missing or not a
    /// directory, already a mount point, the two nested, stacking on a live mount, an output
    /// beneath LOWER or a mount, too many or duplicate tracers, `--sync` without a trace
    /// file, `--transport uring` where the kernel has none; for `fs umount` and `fs ctl`: not
    /// a mount point, not ours, the wait interrupted or timed out, the daemon unreachable or
    /// refusing the command).
    #[error("{0}")]
    Usage(String),
    /// Creating a trace file (or connecting to the collector) failed; traces already created
    /// for other tracers are removed.
    #[error("cannot create the trace {path}: {source}")]
    Trace {
        /// The trace's destination (a file, or the collector's address).
        path: PathBuf,
        /// The trace writer's error.
        source: ra_trace::Error,
    },
    /// The FUSE mount itself failed (`fuser::Session::new`); the traces created are removed.
    #[error("cannot mount {mountpoint}: {source}{hint}")]
    Mount {
        /// The canonical mountpoint.
        mountpoint: PathBuf,
        /// The mount's error.
        source: std::io::Error,
        /// A hint appended to the message for `EPERM`/`EACCES` (needs root) and
        /// `ENODEV`/`ENOENT` (no `/dev/fuse`); empty otherwise.
        hint: &'static str,
    },
    /// A system call around the mount failed: opening LOWER, opening a trace again for
    /// `--sync`, starting the `--print` thread or the FUSE session (io_uring rings); in
    /// `fs umount`, signalling the daemon or removing its mount; in `fs ctl`, talking to the
    /// daemon.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path or pid.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// How requests reach the daemon: `fs mount --transport`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Transport {
    /// FUSE-over-io_uring where the kernel offers it (the fuse module's `enable_uring`),
    /// /dev/fuse otherwise (the reason is printed and put in the header).
    #[default]
    Auto,
    /// FUSE-over-io_uring; the kernel's switch is turned on if it is off; refused where the
    /// kernel has none.
    Uring,
    /// /dev/fuse reads and writes, one descriptor per worker thread.
    Dev,
}

/// How long the default mode lets the kernel keep a name (its dentry cache): the time within
/// which a name already looked up, created or listed is not looked up again.
pub const ENTRY_TTL: Duration = Duration::from_secs(1);

/// Everything `fs mount` is told.
pub struct MountConfig {
    /// LOWER: the directory served through the mount (canonicalized by [`check`]).
    pub lower: PathBuf,
    /// The directory the passthrough is mounted on; it must not be a mount point already,
    /// nor contain LOWER or lie beneath it.
    pub mountpoint: PathBuf,
    /// The trace's destination: a file or a collector.
    pub output: Destination,
    /// How much of each data buffer the first tracer's records keep, per direction
    /// (`--data`; `fs ctl data` changes it while mounted).
    pub data: DataMode,
    /// `--fast`: one-second attribute and entry caches, file pages kept between opens, and
    /// several worker threads; operations the kernel answers from its caches are not traced.
    pub fast: bool,
    /// `--every-lookup`: no entry cache either, so that every path walk's lookups reach the
    /// daemon (the default caches names for [`ENTRY_TTL`] and asks for attributes every time).
    pub every_lookup: bool,
    /// How requests reach the daemon.
    pub transport: Transport,
    /// Open files with FOPEN_DIRECT_IO: every read and write call reaches the tracer as the
    /// program made it (no page cache on the mount).
    pub direct_io: bool,
    /// FUSE worker threads (default: 1 in fidelity mode, the CPU count in fast mode).
    pub threads: Option<usize>,
    /// The filter's text and its parsed form.
    pub filter: Option<(String, ra_filter::Filter)>,
    /// Write one record per operation (off with `--aggregate-only`).
    pub stream: bool,
    /// Aggregate interval.
    pub aggregate: Option<Duration>,
    /// What aggregate rows are grouped by besides the operation; every tracer's aggregates
    /// use it.
    pub group_by: GroupBy,
    /// Facts the caller adds to the header (command line, ...).
    pub info: Vec<(String, Vec<u8>)>,
    /// The DataSeries writer's options (extent compression) for every tracer's trace.
    pub compression: dataseries::WriterOptions,
    /// Other files the daemon writes (`(flag, path)`: a profile, its log), checked as the
    /// trace is and passed through the mount untraced.
    pub other_outputs: Vec<(String, PathBuf)>,
    /// `--print`: each operation recorded is also printed, as `reanimator dump` shows it.
    pub print: Option<ra_trace::live::Print>,
    /// `--sync`: each record written to the trace file and `fdatasync`ed before its operation
    /// is answered (a file trace only; every tracer's).
    pub sync: bool,
    /// The first tracer's name (the fields above are its configuration).
    pub name: String,
    /// The other tracers (`--tracer`), each into a trace file of its own.
    pub more: Vec<TracerConfig>,
}

/// A tracer besides the first (`fs mount --tracer`): its own filter, data mode, drivers and
/// trace file.
pub struct TracerConfig {
    /// How `fs ctl --tracer` and the summary name it; unique on the mount.
    pub name: String,
    /// Its trace file: a local file (never a collector), not shared with another tracer.
    pub output: PathBuf,
    /// How much of each data buffer its records keep.
    pub data: DataMode,
    /// Its input filter's text and parsed form; None records every operation.
    pub filter: Option<(String, ra_filter::Filter)>,
    /// Write one record per operation (the stream driver).
    pub stream: bool,
    /// Its aggregate interval; None: no aggregate rows. Grouped by
    /// [`MountConfig::group_by`].
    pub aggregate: Option<Duration>,
}

/// One tracer's totals.
#[derive(Debug, Default, Clone)]
pub struct TracerSummary {
    /// The tracer's name ([`MountConfig::name`] or [`TracerConfig::name`]).
    pub name: String,
    /// Its trace file (or collector).
    pub trace: String,
    /// Operations offered to it (those on the daemon's own files not included).
    pub operations: u64,
    /// Records written to its trace (`ctl` records included).
    pub recorded: u64,
    /// Operations its filter refused.
    pub filtered_out: u64,
    /// Operations served while it was paused (`fs ctl pause`), not recorded.
    pub paused_out: u64,
    /// Its trace file's size at the end, bytes; 0 for a collector or standard output.
    pub trace_bytes: u64,
    /// Its first trace write failure (its recording stopped there); None when the trace is
    /// complete.
    pub failure: Option<String>,
}

impl MountConfig {
    /// Every local file the daemon writes, with the flag that names it.
    pub fn outputs(&self) -> Vec<(String, PathBuf)> {
        let mut v = Vec::new();
        match &self.output {
            Destination::File(p) => v.push(("-o".to_string(), p.clone())),
            Destination::Tcp(t) => {
                if let Some(p) = &t.spill {
                    v.push(("--spill".to_string(), p.clone()));
                }
            }
            Destination::Stdout => {}
        }
        for t in &self.more {
            v.push((format!("--tracer {}", t.name), t.output.clone()));
        }
        v.extend(self.other_outputs.iter().cloned());
        v
    }
}

/// The checks [`mount`] makes before it creates anything (see [`guard::preflight`]), for a
/// caller that creates files of its own first (a profile, a daemon's log).
pub fn check(cfg: &MountConfig) -> Result<guard::Checked, Error> {
    guard::preflight(&cfg.lower, &cfg.mountpoint, &cfg.outputs())
}

/// What a finished session did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Operations offered to the first tracer (those on the daemon's own files, counted in
    /// `untraced`, not included).
    pub operations: u64,
    /// Records the first tracer wrote (`ctl` records included).
    pub recorded: u64,
    /// Operations the first tracer's filter refused.
    pub filtered_out: u64,
    /// Operations served while `fs ctl pause` was in force (not recorded).
    pub paused_out: u64,
    /// The first trace file's size at the end, bytes; 0 for a collector or standard output.
    pub trace_bytes: u64,
    /// What became of a network trace.
    pub net: Option<NetReport>,
    /// The first trace write failure (recording stopped there).
    pub failure: Option<String>,
    /// Operations on the daemon's own files (the trace, its log, ...), passed through
    /// untraced.
    pub untraced: u64,
    /// Time from just before the FUSE mount until the session ended and the traces were
    /// finished.
    pub elapsed: Duration,
    /// Each tracer's totals (the fields above are the first's).
    pub tracers: Vec<TracerSummary>,
}

/// One line of /proc/self/mountinfo.
pub struct MountInfo {
    /// Field 5, octal escapes (`\040`) undone.
    pub mountpoint: PathBuf,
    /// The file system type (`fuse.reanimator` for ours, `ext4`, ...).
    pub fstype: String,
    /// The mount source, escapes undone; ours are [`SOURCE_PREFIX`] and the daemon's pid.
    pub source: String,
    /// The per-mount options, a space, then the per-superblock options.
    pub options: String,
    /// The minor of the mount's device (`st_dev`): a FUSE mount's connection number under
    /// `/sys/fs/fuse/connections` ([`abort_connection`]).
    pub dev_minor: u32,
}

fn unescape_mountinfo(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() {
            if let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 4]).unwrap_or("x"), 8)
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mounts of this mount namespace.
pub fn mounts() -> Vec<MountInfo> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (a, b) = l.split_once(" - ")?;
            let f: Vec<&str> = a.split(' ').collect();
            let g: Vec<&str> = b.split(' ').collect();
            let minor = f.get(2)?.split(':').nth(1)?.parse().ok()?;
            Some(MountInfo {
                mountpoint: PathBuf::from(unescape_mountinfo(f.get(4)?)),
                fstype: g.first()?.to_string(),
                source: unescape_mountinfo(g.get(1)?),
                options: format!("{} {}", f.get(5)?, g.get(2).unwrap_or(&"")),
                dev_minor: minor,
            })
        })
        .collect()
}

/// The mount a path lives on (the longest mountpoint prefix).
pub fn mount_of(path: &Path) -> Option<MountInfo> {
    mounts()
        .into_iter()
        .filter(|m| path.starts_with(&m.mountpoint))
        .max_by_key(|m| m.mountpoint.as_os_str().len())
}

/// Source name of our mounts in /proc/mounts: `reanimator:<daemon pid>`.
pub const SOURCE_PREFIX: &str = "reanimator:";

fn host_facts() -> Vec<(String, String)> {
    let mut v = Vec::new();
    let u = rustix::system::uname();
    v.push(("hostname".into(), u.nodename().to_string_lossy().into_owned()));
    v.push(("kernel".into(), u.release().to_string_lossy().into_owned()));
    v.push(("kernel_version".into(), u.version().to_string_lossy().into_owned()));
    v.push(("arch".into(), u.machine().to_string_lossy().into_owned()));
    if let Ok(os) = std::fs::read_to_string("/etc/os-release") {
        if let Some(p) = os.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")) {
            v.push(("os".into(), p.trim_matches('"').to_string()));
        }
    }
    v.push((
        "cpus".into(),
        std::thread::available_parallelism().map_or(0, |n| n.get()).to_string(),
    ));
    if let Ok(m) = std::fs::read_to_string("/proc/meminfo") {
        if let Some(kb) = m.lines().find_map(|l| l.strip_prefix("MemTotal:")) {
            let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            v.push(("ram_bytes".into(), (kb * 1024).to_string()));
        }
    }
    v
}

/// The daemon holds one descriptor per inode the kernel remembers (it forgets them only
/// under memory pressure): raise the descriptor limit as far as the kernel allows
/// (`fs.nr_open`; root may raise the hard limit). Returns the limit in force.
fn raise_nofile() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let nr_open: u64 = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20);
    let cur = getrlimit(Resource::Nofile);
    let want = Rlimit { current: Some(nr_open), maximum: Some(nr_open) };
    if setrlimit(Resource::Nofile, want).is_ok() {
        return nr_open;
    }
    if let Some(max) = cur.maximum {
        let _ = setrlimit(Resource::Nofile, Rlimit { current: Some(max), maximum: Some(max) });
    }
    getrlimit(Resource::Nofile).current.unwrap_or(0)
}

/// Check the paths, create the trace, mount, and serve until `stop()` says so (or someone
/// unmounts the mountpoint). `ready` is called once the mount is up. `tick` is called about
/// ten times a second with the tracer (for progress). `on_interval` gets each aggregate
/// interval as it closes, and `true` with the last one (cut short by the unmount).
pub fn mount(
    cfg: MountConfig,
    ready: impl FnOnce(&Path, &Path),
    stop: &dyn Fn() -> u32,
    mut on_interval: impl FnMut(&tracer::Interval, bool),
) -> Result<Summary, Error> {
    // Held until this mount is registered: two mounts started at once see each other.
    let registry_lock = match registry::lock() {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!(
                "reanimator fs: cannot use the registry {} ({e}): other mounts cannot see this \
                 one, and `fs umount` cannot tell how its trace ended",
                registry::DIR
            );
            None
        }
    };
    let guard::Checked { lower, mountpoint } = check(&cfg)?;
    if cfg.more.len() + 1 > tracer::MAX_TRACERS {
        return Err(Error::Usage(format!(
            "{} tracers: at most {} on one mount",
            cfg.more.len() + 1,
            tracer::MAX_TRACERS
        )));
    }
    {
        let mut names = vec![cfg.name.as_str()];
        let mut files: Vec<PathBuf> = match &cfg.output {
            Destination::File(p) => vec![std::path::absolute(p).unwrap_or_else(|_| p.clone())],
            _ => Vec::new(),
        };
        for t in &cfg.more {
            if names.contains(&t.name.as_str()) {
                return Err(Error::Usage(format!("two tracers are named `{}`", t.name)));
            }
            names.push(&t.name);
            let a = std::path::absolute(&t.output).unwrap_or_else(|_| t.output.clone());
            if files.contains(&a) {
                return Err(Error::Usage(format!(
                    "two tracers write {}: each needs a trace file of its own",
                    t.output.display()
                )));
            }
            files.push(a);
        }
    }
    if cfg.sync && !matches!(cfg.output, Destination::File(_)) {
        return Err(Error::Usage(
            "--sync makes each record durable in a trace file: it needs -o FILE, not a collector"
                .into(),
        ));
    }
    let (root_fd, mount_fd, root_st) = passthrough::open_root(&lower)
        .map_err(|e| Error::Io { what: format!("cannot open {}", lower.display()), source: e })?;
    let lower_mount = mount_of(&lower);
    // One thread but with --fast, so that the trace's order is the order the operations were
    // answered in (each reply goes out before its record is written: with two threads, a
    // program's next operation could be written before the one it waited for).
    let threads = cfg.threads.unwrap_or(if cfg.fast {
        std::thread::available_parallelism().map_or(2, |n| n.get()).max(2)
    } else {
        1
    });
    // The transport: io_uring where the kernel offers it (or as asked), else /dev/fuse.
    let uring_refused = match cfg.transport {
        Transport::Dev => Some("/dev/fuse as asked (--transport dev)".to_string()),
        Transport::Auto => uring::unavailable(),
        Transport::Uring => {
            if uring::unavailable().is_some() && std::fs::write(uring::ENABLE_PARAM, b"1").is_ok() {
                eprintln!(
                    "reanimator fs: turned the kernel's FUSE-over-io_uring on ({} = Y) for \
                     --transport uring",
                    uring::ENABLE_PARAM
                );
            }
            if let Some(why) = uring::unavailable() {
                return Err(Error::Usage(format!("--transport uring: {why}")));
            }
            None
        }
    };
    if let (Transport::Auto, Some(why)) = (cfg.transport, &uring_refused) {
        eprintln!("reanimator fs: serving over /dev/fuse: {why}");
    }
    let mode = if cfg.fast {
        "fast"
    } else if cfg.every_lookup {
        "every-lookup"
    } else {
        "fidelity"
    };
    let mut facts: Vec<(String, String)> = vec![
        ("source".into(), "reanimator fs (FUSE)".into()),
        ("fs_lower".into(), lower.display().to_string()),
        ("fs_mountpoint".into(), mountpoint.display().to_string()),
        ("fs_mode".into(), mode.into()),
        (
            "fs_kernel_cache".into(),
            if cfg.fast {
                "attributes and entries cached 1 s, file pages kept between opens: operations the \
                 kernel answers from its caches are not in the trace"
                    .into()
            } else if cfg.every_lookup {
                "none: every operation reaches the daemon, each path walk's lookups included".into()
            } else {
                format!(
                    "names cached {} s (the dentry cache), attributes asked every time, file pages \
                     dropped at each open: a lookup of a name looked up, created or listed in \
                     the last {0} s is answered by the kernel and not in the trace (what a \
                     stackable file system such as Tracefs does not see either); every stat, \
                     permission check, open, read and write reaches the daemon",
                    ENTRY_TTL.as_secs()
                )
            },
        ),
        ("fs_threads".into(), threads.to_string()),
        (
            "fs_direct_io".into(),
            if cfg.direct_io {
                "on: no page cache on the mount; each read and write call is one operation (split at 1 MiB)".into()
            } else {
                "off: reads within one open may be served from the page cache".into()
            },
        ),
        ("fs_filter".into(), cfg.filter.as_ref().map_or("none".into(), |(s, _)| s.clone())),
        ("fs_stream".into(), cfg.stream.to_string()),
        (
            "fs_aggregate".into(),
            match cfg.aggregate {
                Some(d) => {
                    format!("every {} s, by {:?}", d.as_secs_f64(), cfg.group_by).to_lowercase()
                }
                None => "off".into(),
            },
        ),
        (
            "fs_permissions".into(),
            "default_permissions and POSIX ACLs (the kernel checks modes and ACLs with the \
             caller's credentials); LOWER's ancestors' search permission checked by the daemon \
             with the caller's credentials"
                .into(),
        ),
        (
            "fs_locks".into(),
            "kernel-local (not passed to the lower file system, not traced)".into(),
        ),
        (
            "fs_sync".into(),
            if cfg.sync {
                "on: each record written and fdatasync'ed before its operation was answered".into()
            } else {
                "off: records buffered, written about once a second and at the end".into()
            },
        ),
        ("start_time".into(), format!("{}", tracer::now_ns())),
    ];
    facts.extend(cfg.data.facts().into_iter().map(|(k, v)| (k.to_string(), v)));
    if let Some(m) = &lower_mount {
        facts.push(("fs_lower_type".into(), m.fstype.clone()));
        facts.push(("fs_lower_device".into(), m.source.clone()));
        facts.push(("fs_lower_mount".into(), m.mountpoint.display().to_string()));
        facts.push(("fs_lower_options".into(), m.options.clone()));
    }
    if let Ok(s) = rustix::fs::fstatvfs(&root_fd) {
        facts.push(("fs_lower_capacity_bytes".into(), (s.f_blocks * s.f_frsize).to_string()));
        facts.push(("fs_lower_free_bytes".into(), (s.f_bavail * s.f_frsize).to_string()));
    }
    facts.extend(host_facts());
    let mut info: Vec<(&str, &[u8])> =
        facts.iter().map(|(k, v)| (k.as_str(), v.as_bytes())).collect();
    for (k, v) in &cfg.info {
        info.push((k.as_str(), v.as_slice()));
    }
    let n_tracers = cfg.more.len() + 1;
    let tracer_fact = |i: usize, name: &str| format!("{name} ({} of {n_tracers})", i + 1);
    let first_fact = tracer_fact(0, &cfg.name);
    info.push(("fs_tracer", first_fact.as_bytes()));
    let wcfg =
        WriterConfig { ds: cfg.compression.clone(), fs_ops: true, ..WriterConfig::default() };
    let (writer, net) = TraceWriter::open(&cfg.output, "fs", &info, wcfg.clone())
        .map_err(|source| Error::Trace { path: cfg.output.to_string().into(), source })?;
    // From here a mount that does not come up leaves no trace behind.
    let mut created: Vec<PathBuf> = match &cfg.output {
        Destination::File(p) => vec![p.clone()],
        Destination::Tcp(_) | Destination::Stdout => Vec::new(),
    };
    // The other tracers' traces: the same facts but their own configuration's.
    let mut more_writers = Vec::new();
    for (i, t) in cfg.more.iter().enumerate() {
        let own: Vec<(&str, String)> = vec![
            ("data_mode", t.data.name().to_string()),
            ("fs_filter", t.filter.as_ref().map_or("none".into(), |(s, _)| s.clone())),
            ("fs_stream", t.stream.to_string()),
            (
                "fs_aggregate",
                match t.aggregate {
                    Some(d) => {
                        format!("every {} s, by {:?}", d.as_secs_f64(), cfg.group_by).to_lowercase()
                    }
                    None => "off".into(),
                },
            ),
            ("fs_tracer", tracer_fact(i + 1, &t.name)),
        ];
        let mut tinfo: Vec<(&str, &[u8])> =
            info.iter().filter(|(k, _)| !own.iter().any(|(o, _)| o == k)).copied().collect();
        tinfo.extend(own.iter().map(|(k, v)| (*k, v.as_bytes())));
        let dest = Destination::File(t.output.clone());
        match TraceWriter::open(&dest, "fs", &tinfo, wcfg.clone()) {
            Ok((w, _)) => {
                created.push(t.output.clone());
                more_writers.push(w);
            }
            Err(source) => {
                for p in &created {
                    let _ = std::fs::remove_file(p);
                }
                return Err(Error::Trace { path: t.output.clone(), source });
            }
        }
    }
    // Registered before mounting, so that a mount checking while this one comes up sees its
    // LOWER; the lock is let go once the mount is there (in the mount table).
    let registered = registry_lock.is_some()
        && match registry::register(&lower, &mountpoint) {
            Ok(()) => true,
            Err(e) => {
                eprintln!(
                    "reanimator fs: cannot register in {} ({e}): other mounts cannot see this \
                     one, and `fs umount` cannot tell how its trace ended",
                    registry::DIR
                );
                false
            }
        };
    let undo = |e: Error| {
        for p in &created {
            let _ = std::fs::remove_file(p);
        }
        if registered {
            registry::forget();
        }
        e
    };
    let own = Arc::new(guard::OwnFiles::default());
    for (_, p) in cfg.outputs() {
        own.add_path(&p);
    }
    own.add_fd(std::io::stdout());
    own.add_fd(std::io::stderr());
    let reach = Arc::new(access::Reach::new(&lower, (root_st.st_dev, root_st.st_ino)));
    let negotiated = Arc::new(passthrough::Negotiated::default());
    let lower_acls = !matches!(
        rustix::fs::lgetxattr(&lower, c"system.posix_acl_access", &mut [0u8; 0][..]),
        Err(rustix::io::Errno::OPNOTSUPP)
    );
    let untraced = Arc::new(AtomicU64::new(0));
    let mp_bytes = {
        use std::os::unix::ffi::OsStrExt;
        mountpoint.as_os_str().as_bytes().to_vec()
    };
    let mp_prefix = if mp_bytes == b"/" { Vec::new() } else { mp_bytes.clone() };
    let sync = match (&cfg.output, cfg.sync) {
        (Destination::File(p), true) => Some(std::fs::File::open(p).map_err(|e| {
            undo(Error::Io { what: format!("--sync: cannot open {}", p.display()), source: e })
        })?),
        _ => None,
    };
    let printer = match cfg.print {
        Some(p) => Some(ra_trace::live::LivePrinter::start(p).map_err(|e| Error::Io {
            what: "cannot start the --print thread".into(),
            source: e,
        })?),
        None => None,
    };
    let tracer = Arc::new(tracer::Tracer::new(
        tracer::TracerOptions {
            name: cfg.name.clone(),
            data: cfg.data,
            filter: cfg.filter,
            stream: cfg.stream,
            aggregate: cfg.aggregate.map(|_| cfg.group_by.clone()),
            mountpoint: mp_prefix.clone(),
            sync,
        },
        writer,
        printer.as_ref().map(ra_trace::live::LivePrinter::feed),
    ));
    let mut members = vec![tracer::Member { tracer: tracer.clone(), every: cfg.aggregate }];
    for (t, w) in cfg.more.into_iter().zip(more_writers) {
        let sync = if cfg.sync {
            Some(std::fs::File::open(&t.output).map_err(|e| {
                undo(Error::Io {
                    what: format!("--sync: cannot open {}", t.output.display()),
                    source: e,
                })
            })?)
        } else {
            None
        };
        members.push(tracer::Member {
            tracer: Arc::new(tracer::Tracer::new(
                tracer::TracerOptions {
                    name: t.name,
                    data: t.data,
                    filter: t.filter,
                    stream: t.stream,
                    aggregate: t.aggregate.map(|_| cfg.group_by.clone()),
                    mountpoint: mp_prefix.clone(),
                    sync,
                },
                w,
                None,
            )),
            every: t.aggregate,
        });
    }
    let outputs: Vec<String> = std::iter::once(cfg.output.to_string())
        .chain(
            created
                .iter()
                .skip(usize::from(matches!(cfg.output, Destination::File(_))))
                .map(|p| p.display().to_string()),
        )
        .collect();
    let tracers = Arc::new(tracer::Tracers { list: members });
    // `fs ctl`: next to the registry file, so only where the registry is usable.
    let ctl = if registered {
        match ctl::Server::start(ctl::Context {
            tracers: tracers.clone(),
            untraced: untraced.clone(),
            mountpoint: mountpoint.clone(),
            started: Instant::now(),
        }) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!(
                    "reanimator fs: cannot listen on {} ({e}): `fs ctl` cannot reach this mount",
                    ctl::socket_path(std::process::id()).display()
                );
                None
            }
        }
    } else {
        None
    };
    // Files created for callers get their mode and umask on the creating thread
    // (passthrough::TraceFs::creation_mode); the daemon's own umask stays as it was.
    // Half the descriptors for nodes, the rest for open files, directories and the trace.
    let nofile = raise_nofile();
    let max_cached = (nofile.saturating_sub(1024) / 2) as usize;
    tracers.add_info("fs_node_descriptors", max_cached.to_string().as_bytes());
    let fs = passthrough::TraceFs {
        inodes: inodes::Inodes::new(
            root_fd,
            mount_fd,
            root_st.st_dev,
            root_st.st_ino,
            mp_prefix,
            max_cached,
        ),
        handles: handles::Handles::default(),
        tracers: tracers.clone(),
        attr_ttl: if cfg.fast { Duration::from_secs(1) } else { Duration::ZERO },
        entry_ttl: if cfg.fast {
            Duration::from_secs(1)
        } else if cfg.every_lookup {
            Duration::ZERO
        } else {
            ENTRY_TTL
        },
        want_uring: uring_refused.is_none(),
        keep_cache: cfg.fast,
        direct_io: cfg.direct_io,
        reach: reach.clone(),
        own: own.clone(),
        lower_acls,
        negotiated: negotiated.clone(),
        dont_mask: false,
        untraced: untraced.clone(),
    };
    let mut fcfg = Config::default();
    fcfg.mount_options = vec![
        MountOption::FSName(format!("{SOURCE_PREFIX}{}", std::process::id())),
        MountOption::Subtype("reanimator".into()),
        MountOption::DefaultPermissions,
        MountOption::Dev,
        MountOption::Suid,
    ];
    fcfg.acl = SessionACL::All;
    // With io_uring, /dev/fuse carries only FORGET and INTERRUPT (and what comes before the
    // rings are up): one thread.
    let dev_threads = if uring_refused.is_none() { 1 } else { threads };
    fcfg.n_threads = Some(dev_threads);
    fcfg.clone_fd = dev_threads > 1;
    let t0 = Instant::now();
    let session = fuser::Session::new(fs, &mountpoint, &fcfg).map_err(|e| {
        let hint = match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => {
                " (mounting FUSE needs root here: run as root)"
            }
            Some(libc::ENODEV) | Some(libc::ENOENT) => {
                " (no /dev/fuse: is the fuse module loaded?)"
            }
            _ => "",
        };
        undo(Error::Mount { mountpoint: mountpoint.clone(), source: e, hint })
    })?;
    drop(registry_lock);
    // The connection's number (fusectl), for cutting it off when a detached mount stays busy.
    let minor = mounts().into_iter().find(|m| m.mountpoint == mountpoint).map(|m| m.dev_minor);
    let start_err = |e: std::io::Error| {
        // The kernel holds every request until the rings are up: cut the connection off
        // rather than leave a mount that hangs its users.
        if let Some(m) = minor {
            let _ = abort_connection(m);
        }
        let _ = rustix::mount::unmount(&mountpoint, rustix::mount::UnmountFlags::DETACH);
        undo(Error::Io { what: "cannot start the FUSE session".into(), source: e })
    };
    let (bg, rings, transport) = if negotiated.uring.load(std::sync::atomic::Ordering::Relaxed) {
        let dev = rustix::io::fcntl_dupfd_cloexec(&session, 0).map_err(|e| start_err(e.into()))?;
        let (bg, dispatcher) = session.spawn_with_dispatcher().map_err(start_err)?;
        let payload = uring::payload_size(passthrough::MAX_WRITE);
        let rings = uring::start(dev.as_fd(), dispatcher, uring::QUEUE_DEPTH, payload, threads > 1)
            .map_err(|e| {
                let e = std::io::Error::new(e.kind(), format!("FUSE-over-io_uring: {e}"));
                start_err(e)
            })?;
        let served_by = if rings.threads() > 1 {
            "each served by a thread pinned to its CPU"
        } else {
            "all served by one thread"
        };
        let t = format!(
            "io_uring: {} queues (one per possible CPU, {served_by}) of {} entries, {} KiB \
             payload each; FORGET and INTERRUPT on /dev/fuse",
            rings.queues,
            rings.depth,
            rings.payload / 1024
        );
        (bg, Some(rings), t)
    } else {
        let why = uring_refused.clone().unwrap_or_else(|| {
            let w = "the kernel did not agree to FUSE_OVER_IO_URING at INIT".to_string();
            eprintln!("reanimator fs: serving over /dev/fuse with one thread: {w}");
            w
        });
        let bg = session.spawn().map_err(start_err)?;
        (bg, None, format!("/dev/fuse: {dev_threads} thread(s); not io_uring: {why}"))
    };
    tracers.add_info("fs_transport", transport.as_bytes());
    if registered {
        registry::set_minor(minor.unwrap_or(0));
    }
    ready(&lower, &mountpoint);
    let mut last_flush = Instant::now();
    let mut last_interval = vec![Instant::now(); tracers.list.len()];
    let mut stops_seen = 0;
    let mut detached = false;
    loop {
        std::thread::sleep(Duration::from_millis(50));
        if bg.guard.is_finished() && rings.as_ref().is_none_or(uring::Rings::finished) {
            break;
        }
        let stops = stop();
        if stops > stops_seen {
            stops_seen = stops;
            if !detached {
                match rustix::mount::unmount(&mountpoint, rustix::mount::UnmountFlags::empty()) {
                    Ok(()) => {}
                    Err(rustix::io::Errno::BUSY) => {
                        eprintln!(
                            "reanimator fs: {} is busy (a process has a file or its working \
                             directory there): detached it; tracing goes on until the last user \
                             lets go. Interrupt again to cut it off (its users get ENOTCONN).",
                            mountpoint.display()
                        );
                        let _ = rustix::mount::unmount(
                            &mountpoint,
                            rustix::mount::UnmountFlags::DETACH,
                        );
                        detached = true;
                    }
                    Err(e) => {
                        eprintln!("reanimator fs: cannot unmount {}: {e}", mountpoint.display())
                    }
                }
            } else if let Some(minor) = minor {
                let _ = abort_connection(minor);
            }
        }
        if last_flush.elapsed() >= Duration::from_secs(1) {
            tracers.flush();
            own.refresh();
            reach.refresh();
            last_flush = Instant::now();
        }
        // Each tracer's intervals into its trace; the first's also to the caller.
        for (k, m) in tracers.list.iter().enumerate() {
            if let Some(iv) = m.every {
                if last_interval[k].elapsed() >= iv {
                    let i = m.tracer.rotate_interval();
                    if k == 0 {
                        on_interval(&i, false);
                    }
                    last_interval[k] = Instant::now();
                }
            }
        }
    }
    let session_result = bg.join();
    if let Some(r) = rings {
        let (served, err) = r.stop();
        tracers.add_info("fs_uring_requests", served.to_string().as_bytes());
        if let Some(e) = err {
            eprintln!("reanimator fs: {e}");
        }
    }
    for (k, m) in tracers.list.iter().enumerate() {
        if m.every.is_some() {
            // Cut short by the unmount: partial.
            let i = m.tracer.rotate_interval();
            if k == 0 {
                on_interval(&i, true);
            }
        }
    }
    use std::sync::atomic::Ordering;
    if tracer.discard {
        let n = tracer.discarded.load(Ordering::Relaxed);
        eprintln!("reanimator fs: REANIMATOR_DISCARD_EVENTS=1: {n} records built and not written to the trace");
        tracer.add_info("fs_discarded_records", n.to_string().as_bytes());
    }
    let timeouts = tracer.proc_timeouts();
    if timeouts > 0 {
        tracer.add_info("fs_proc_lookups_timed_out", timeouts.to_string().as_bytes());
    }
    let untraced = untraced.load(Ordering::Relaxed);
    tracers.add_info("fs_own_files_untraced", untraced.to_string().as_bytes());
    if negotiated.refused.load(Ordering::Relaxed) {
        let e = session_result.err().map(|e| e.to_string()).unwrap_or_default();
        tracers.fail_with(format!(
            "the kernel cannot check POSIX ACLs on a FUSE mount (FUSE_POSIX_ACL), so the mount \
             served nothing ({e})"
        ));
    }
    tracers.add_info(
        "fs_posix_acl",
        if negotiated.posix_acl.load(Ordering::Relaxed) {
            b"checked by the kernel (FUSE_POSIX_ACL)".as_slice()
        } else {
            b"none: the lower file system has no POSIX ACLs".as_slice()
        },
    );
    // No control once the trace is being finished.
    drop(ctl);
    let failures: Vec<Option<String>> = tracers.list.iter().map(|m| m.tracer.finish()).collect();
    let failure = failures[0].clone();
    if let Some(w) = printer.and_then(ra_trace::live::LivePrinter::finish) {
        eprintln!("reanimator fs: warning: {w}");
    }
    let trace_bytes = match &cfg.output {
        Destination::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
        Destination::Tcp(_) | Destination::Stdout => 0,
    };
    Ok(Summary {
        operations: tracer.seen.load(Ordering::Relaxed),
        recorded: tracer.recorded.load(Ordering::Relaxed),
        filtered_out: tracer.filtered_out.load(Ordering::Relaxed),
        paused_out: tracer.paused_ops.load(Ordering::Relaxed),
        trace_bytes,
        net: net.map(|n| n.report()),
        failure,
        untraced,
        elapsed: t0.elapsed(),
        tracers: tracers
            .list
            .iter()
            .zip(outputs)
            .zip(failures)
            .enumerate()
            .map(|(k, ((m, trace), failure))| {
                let t = &m.tracer;
                TracerSummary {
                    name: t.opts.name.clone(),
                    trace_bytes: if k == 0 {
                        trace_bytes
                    } else {
                        std::fs::metadata(&trace).map_or(0, |m| m.len())
                    },
                    trace,
                    operations: t.seen.load(Ordering::Relaxed),
                    recorded: t.recorded.load(Ordering::Relaxed),
                    filtered_out: t.filtered_out.load(Ordering::Relaxed),
                    paused_out: t.paused_ops.load(Ordering::Relaxed),
                    failure,
                }
            })
            .collect(),
    })
}

/// Abort a FUSE connection through the fusectl file system (mounted on demand): every
/// pending and future request of the mount fails with ENOTCONN.
pub fn abort_connection(dev_minor: u32) -> std::io::Result<()> {
    let dir = Path::new("/sys/fs/fuse/connections");
    if !dir.join(dev_minor.to_string()).exists() {
        let _ = rustix::mount::mount(
            "fusectl",
            dir,
            "fusectl",
            rustix::mount::MountFlags::empty(),
            None,
        );
    }
    std::fs::write(dir.join(dev_minor.to_string()).join("abort"), b"1")
}

/// How `fs umount` went.
pub enum Unmounted {
    /// The daemon finished its trace and exited (`totals`: what it did, when it said).
    Clean {
        /// The daemon's pid.
        daemon: u32,
        /// Its counts from the registry; None when it wrote none.
        totals: Option<registry::Totals>,
    },
    /// The daemon exited and says its trace is incomplete (a write failed: full disk, lost
    /// collector, ...).
    Failed {
        /// The daemon's pid.
        daemon: u32,
        /// The failure, as the daemon wrote it to the registry.
        reason: String,
        /// Its counts from the registry; None when it wrote none.
        totals: Option<registry::Totals>,
    },
    /// The daemon exited without saying how its trace ended (it could not use the registry).
    Unknown {
        /// The daemon's pid.
        daemon: u32,
    },
    /// The daemon was gone; the stale mount was removed.
    Stale,
    /// `--force`: the connection was aborted and the mount detached.
    Forced,
}

/// How often `fs umount` says what it waits for.
const UMOUNT_PROGRESS: Duration = Duration::from_secs(5);

/// `reanimator fs umount`: ask the daemon serving `mountpoint` to unmount and finish its trace,
/// and wait for it (up to `timeout`, or until `interrupted()`), telling `progress` every few
/// seconds what it waits for. A mount the daemon detached because it was busy (gone from the
/// mount table, still served) is found through the registry.
pub fn umount(
    mountpoint: &Path,
    force: bool,
    timeout: Duration,
    interrupted: &dyn Fn() -> bool,
    progress: &dyn Fn(&str),
) -> Result<Unmounted, Error> {
    let mp = std::fs::canonicalize(mountpoint).unwrap_or_else(|_| mountpoint.to_path_buf());
    let Some(m) = mounts().into_iter().rev().find(|m| m.mountpoint == mp) else {
        // Detached while busy, and still serving its last users?
        if let Some(e) = registry::entries()
            .into_iter()
            .find(|e| e.mountpoint == mp && e.outcome.is_none() && e.alive())
        {
            if force {
                let _ = abort_connection(e.dev_minor);
                return Ok(Unmounted::Forced);
            }
            return wait_for_daemon(&mp, e.pid, true, timeout, interrupted, progress);
        }
        return Err(Error::Usage(format!("{} is not a mount point", mp.display())));
    };
    let Some(pid) = m.source.strip_prefix(SOURCE_PREFIX).and_then(|p| p.parse::<u32>().ok()) else {
        return Err(Error::Usage(format!(
            "{} is not a reanimator fs mount ({} from {}); use umount(8)",
            mp.display(),
            m.fstype,
            m.source
        )));
    };
    if force {
        let _ = abort_connection(m.dev_minor);
        rustix::mount::unmount(&mp, rustix::mount::UnmountFlags::DETACH).map_err(|e| {
            Error::Io { what: format!("cannot detach {}", mp.display()), source: e.into() }
        })?;
        return Ok(Unmounted::Forced);
    }
    if !alive(pid) {
        rustix::mount::unmount(&mp, rustix::mount::UnmountFlags::empty()).map_err(|e| {
            Error::Io {
                what: format!(
                "the daemon (pid {pid}) of {} is gone and the stale mount cannot be removed (use \
                 --force to detach it)",
                mp.display()
            ),
                source: e.into(),
            }
        })?;
        let _ = registry::take_outcome(pid);
        return Ok(Unmounted::Stale);
    }
    // SAFETY: kill takes no pointers; the pid is the daemon named by the mount's source.
    if unsafe { libc::kill(pid as i32, libc::SIGTERM) } != 0 {
        return Err(Error::Io {
            what: format!("cannot signal the daemon (pid {pid})"),
            source: std::io::Error::last_os_error(),
        });
    }
    wait_for_daemon(&mp, pid, false, timeout, interrupted, progress)
}

fn alive(pid: u32) -> bool {
    registry::start_time(pid).is_some()
}

/// Wait for daemon `pid` (told to finish) to exit; then how its trace ended.
fn wait_for_daemon(
    mp: &Path,
    pid: u32,
    detached: bool,
    timeout: Duration,
    interrupted: &dyn Fn() -> bool,
    progress: &dyn Fn(&str),
) -> Result<Unmounted, Error> {
    let t0 = Instant::now();
    let mut next_report = UMOUNT_PROGRESS.min(timeout);
    while alive(pid) {
        if interrupted() {
            return Err(Error::Usage(format!(
                "interrupted while waiting for the daemon (pid {pid}) to finish its trace"
            )));
        }
        let waited = t0.elapsed();
        if waited > timeout {
            return Err(Error::Usage(format!(
                "the daemon (pid {pid}) did not finish within {} s (is the mount busy? `fuser -m \
                 {}` lists its users; `reanimator fs umount --force {1}` cuts them off)",
                timeout.as_secs(),
                mp.display()
            )));
        }
        if waited >= next_report {
            next_report += UMOUNT_PROGRESS;
            let attached = mounts()
                .iter()
                .any(|m| m.mountpoint == mp && m.source == format!("{SOURCE_PREFIX}{pid}"));
            progress(&if attached && !detached {
                format!(
                    "waiting {} s for the daemon (pid {pid}) to unmount {} and finish its trace",
                    waited.as_secs(),
                    mp.display()
                )
            } else {
                format!(
                    "waiting {} s for the daemon (pid {pid}): {} is busy (a process has a file or \
                     its working directory there) and was detached; the trace is finished when \
                     the last user lets go, or now with `reanimator fs umount --force {1}` (its \
                     users get ENOTCONN); giving up after {} s",
                    waited.as_secs(),
                    mp.display(),
                    timeout.as_secs()
                )
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(match registry::take_outcome(pid) {
        Some((registry::Outcome::Finished, totals)) => Unmounted::Clean { daemon: pid, totals },
        Some((registry::Outcome::Failed(reason), totals)) => {
            Unmounted::Failed { daemon: pid, reason, totals }
        }
        None => Unmounted::Unknown { daemon: pid },
    })
}
