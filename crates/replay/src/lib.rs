//! Verified replay of a trace into a sandboxed root.
//!
//! [`replay`] reads a trace in `unique_id` order (streamed: memory stays bounded for traces
//! larger than RAM) and hands each call to an executor thread of its traced thread. Calls whose
//! recorded `[time_called, time_returned]` intervals don't overlap are issued in recorded
//! order; overlapping calls may run concurrently; calls on the same file keep their recorded
//! order; a child's first call waits for the clone that made it. Each executor issues its
//! calls against the replay root (every path resolved beneath it, see [`sandbox`]), keeping
//! per-process descriptor tables, cwd, umask and mappings ([`world`]), and verifies return
//! values, errnos and returned data against the trace ([`verify`]). Sockets and other
//! non-file resources are simulated from the trace. [`init`] recreates the state the trace
//! shows to have existed before it started.
//!
//! # Parts
//!
//! `session` runs one replay from start to end as `replay` and `compare` do (`Session`: the
//! initial state, `--init`'s snapshots restored and the rest inferred, written back; then
//! `Prepared::replay`: the calls, and the tree against the recorded end states).
//! Verified replay. The `planner` reads the trace in `unique_id` order on the read-ahead thread (on
//! the dispatcher for `--timing` replays, where placing on the read-ahead thread measurably
//! worsened the issue-time tail; streamed, bounded by calls and bytes in flight, `--prefetch`, its
//! waits reported), runs a `Shadow` model (which process each thread belongs to, from clone flags
//! or pids; what each descriptor names; ordering keys per file), brings late-recorded calls forward
//! and computes each call's ordering gates; `planfile` writes those placed calls as a compiled plan
//! (`reanimator compile`: one streaming pass, data buffers deduplicated by BLAKE3 into CRC-checked
//! chunks, lz4-compressed with `--compress lz4` (format version 2; replay keeps the eight chunks
//! decompressed last), an encoder and a writer thread, which writes with direct I/O where the file
//! system allows it) and reads plans back through a memory map, handing out data buffers as `Bytes`
//! slices of it (no copy; `sys` touches a buffer's pages before writing it, since a buffered write
//! from unmapped pages copies short and makes the kernel read a partial block first); the
//! dispatcher (`sched`) takes placed calls from either source (`Source::Trace`, `Source::Plan`);
//! each traced thread is a task whose calls a small pool of worker threads issues in order (M:N; a
//! call held at the ordering gate gives its worker back, workers are added while all are blocked)
//! beneath the replay root (`sandbox`: `openat2` with `RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS` on
//! the root fd for everything), against per-process descriptor tables with shared open file
//! descriptions, cwd, umask and mappings (`world`; descriptors passed over sockets (`SCM_RIGHTS`,
//! the trace's `scm_rights` column) move from the sender's table to the receiver's through
//! `world::InFlight`, each `recvmsg` matched with its `sendmsg` by the planner
//! (`planner::RIGHTS_FROM`); each table's POSIX record locks are OFD locks on a description of its
//! own per file, `world::PosixLocks`, since every replayed process lives in the one replayer), and
//! compares results with the trace (`verify`). io_uring requests (`io_uring_op` records):
//! `calls/uring.rs` submits each again to a real ring of the replay per recorded ring, with the
//! `io-uring` crate, or issues it as its system call (`--uring`); a path request (`OPENAT`,
//! `RENAMEAT`, ...) is issued in either mode as the system call it stands for
//! (`ra_trace::uring::as_call`), by that call's handler beneath the root, and the planner's
//! model (`shadow`) and `init` see it as that call; the planner places each after
//! the `io_uring_enter` that submitted it. `init` infers the initial state. `timing` paces
//! `--timing` (a timer thread holds tasks whose next call is not due, the worker sleeps then spins
//! the last margin; workers and timer run on CPUs apart from the dispatcher's and read-ahead's,
//! `CpuSplit`) and measures every call's issue-time error; `--reads all|as-recorded|none` leaves
//! out the reads a trace says were page-cache hits. `compare` is differential replay's half: an
//! optional outcome sink (`Options::outcomes`, fed by `sched::account`) spills each call's mode,
//! result, recorded result, verdict and returned-data digest as 48-byte records in sorted runs to
//! an unlinked file, reads them back merged in `unique_id` order, and merge-joins several roots'
//! streams.
#![warn(missing_docs)]

pub mod calls;
pub mod compare;
mod gate;
pub mod init;
pub mod planfile;
pub mod planner;
pub mod sandbox;
mod sched;
mod session;
pub mod shadow;
mod sys;
pub mod timing;
pub mod verify;
pub mod world;

/// What the unit tests of several modules build events and plans with.
#[cfg(test)]
mod testutil {
    use ra_trace::{ArgValue, Event};

    /// The facts of a small x86_64 trace recorded in /w.
    pub fn facts() -> crate::TraceFacts {
        crate::TraceFacts {
            arch: Some("x86_64".into()),
            cwd: b"/w".to_vec(),
            umask: 0o022,
            synthetic: 0,
            std_fds: true,
            page_records: false,
            data: true,
        }
    }

    /// A recorded call of the registry's `name` by single-threaded process `pid`, with its
    /// result, errno and arguments (by man-page name).
    pub fn event(name: &str, pid: i32, ret: i64, errno: i32, args: &[(&str, ArgValue)]) -> Event {
        let def = ra_syscalls::lookup(name).unwrap_or_else(|| panic!("no call {name}"));
        let mut e = Event::new(def);
        e.pid = Some(pid);
        e.tid = Some(pid);
        e.ret = Some(ret);
        e.errno = Some(errno);
        for (n, v) in args {
            assert!(e.set_arg(n, v.clone()), "{name} has no argument {n}");
        }
        e
    }
}

use std::path::PathBuf;
use std::time::Duration;

pub use calls::{probe_uring, UringMode};
pub use planfile::{compile, CompileStats, Plan, PlanError};
pub use planner::{PlanNotes, TraceFacts};
pub use sched::{replay, replay_from, Progress, Source};
pub use session::{FinalCheck, InitMode, Prepared, Session, FINAL_DIFFERENCES_LISTED};
pub use verify::{CallStats, Diff, Mismatch, PrefetchStats, Report};

/// What to verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// Nothing: replay only.
    None,
    /// Return values and errnos.
    Ret,
    /// Return values, errnos and returned data (read buffers, stat fields, directory
    /// entries, link targets, xattr values).
    Full,
}

/// What to do at a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnMismatch {
    /// Count and list the mismatch in the [`Report`] and go on (`--on-mismatch warn`).
    Warn,
    /// Stop the replay at the first mismatch (`--on-mismatch abort`): every executor sees the
    /// abort flag and [`Report::aborted`] names the call.
    Abort,
}

/// When to issue each call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timing {
    /// As fast as possible (only the ordering rules hold calls back).
    Afap,
    /// At the recorded time offsets (from the first call's `time_called`) multiplied by the
    /// factor: 1.0 is the original pace, 0.5 twice as fast; the CLI accepts only finite,
    /// non-negative factors.
    Scaled(f64),
}

/// Data for writes whose buffers the trace doesn't hold (`--data hash|none` traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// A repeating, compressible text pattern.
    Pattern,
    /// Pseudo-random bytes (incompressible, deterministic per call).
    Random,
}

/// Which reads of regular files replay issues (Replayfs' cache modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Every read.
    All,
    /// Only the reads that missed the page cache when recorded (the eBPF recorder's
    /// `cache_miss_pages` column: pages added during the call); reads whose trace does not
    /// say are replayed.
    AsRecorded,
    /// None: reads of regular files are skipped (their recorded results stand; a read
    /// without an offset moves the descriptor's position as the recorded one did).
    None,
}

impl Reads {
    /// The `--reads` spelling of this mode (`all`, `as-recorded`, `none`), as the CLI's report
    /// prints it.
    pub fn name(self) -> &'static str {
        match self {
            Reads::All => "all",
            Reads::AsRecorded => "as-recorded",
            Reads::None => "none",
        }
    }
}

/// How memory-mapped file I/O is replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmapMode {
    /// Real mappings of the replayed files; page records copy through them.
    Map,
    /// No mappings; page records become pread/pwrite at their file offsets.
    Pread,
}

/// Replay options.
#[derive(Clone, Debug)]
pub struct Options {
    /// The replay root: every path the trace names is resolved beneath it ([`sandbox`]). It must
    /// exist and be a directory; otherwise [`replay_from`] fails with [`Error::Root`].
    pub root: PathBuf,
    /// What is compared with the trace (`--verify`).
    pub verify: Verify,
    /// Whether a mismatch stops the replay (`--on-mismatch`).
    pub on_mismatch: OnMismatch,
    /// When each call is issued: as fast as possible or paced (`--timing`).
    pub timing: Timing,
    /// `--timing`: run the workers and the timer on CPUs apart from the other threads'
    /// (`--timing-cpus split`, [`crate::timing`]); false leaves placement to the kernel.
    pub split_cpus: bool,
    /// What replayed writes write where the trace holds only a digest of the data or none
    /// (`--fill`).
    pub fill: Fill,
    /// Whether memory-mapped file I/O is replayed through real mappings (`--mmap`).
    pub mmap: MmapMode,
    /// Which reads of regular files are issued (`--reads`).
    pub reads: Reads,
    /// The trace's read-ahead horizon (`--prefetch`): at most this many calls and this many
    /// bytes of data decoded ahead of the dispatcher, on a thread of its own.
    pub prefetch_events: usize,
    /// The byte half of the read-ahead horizon: data bytes decoded ahead of the dispatcher
    /// (see [`Options::prefetch_events`]).
    pub prefetch_bytes: usize,
    /// How long a call may block (pipe read/write, lock wait) before it is reported as
    /// stalled and given up.
    pub stall_timeout: Duration,
    /// How many mismatches the report lists (all are counted).
    pub keep_mismatches: usize,
    /// Calls held in executor queues before the reader waits.
    pub queue_events: usize,
    /// Data bytes held in executor queues before the reader waits (replay memory stays
    /// bounded whatever the trace's size).
    pub queue_bytes: usize,
    /// Log every replayed call (level 2) or every mismatch (level 1) to this sink.
    pub log_level: u8,
    /// (st_dev, st_ino) of directories recreated only in part (`--init=infer`): their link
    /// counts and sizes are not compared.
    pub partial_dirs: std::collections::HashSet<(u64, u64)>,
    /// (st_dev, st_ino) of files `--init=infer` created: their link counts are not compared.
    pub inferred_files: std::collections::HashSet<(u64, u64)>,
    /// Files `--init=infer` created with contents the trace does not hold
    /// ([`init::InferStats::files_unknown`]): a read of one recorded as a digest is not
    /// compared (a warning says so).
    pub unknown_content: std::collections::HashSet<(u64, u64)>,
    /// Differential replay: where each call's outcome goes ([`compare`]). None: nowhere.
    pub outcomes: Option<compare::OutcomeSink>,
    /// Replayed `mknod`s of device nodes create them (`--allow-special`); otherwise each
    /// becomes an empty regular file with the node's permissions.
    pub special: bool,
    /// How io_uring requests (`io_uring_op` records) are replayed (`--uring`).
    pub uring: UringMode,
}

impl Options {
    /// Options for a replay into `root`, with these defaults: full verification, warn at
    /// mismatches, as fast as possible, pattern fill, real mappings, every read, a 4096-call /
    /// 16 MiB read-ahead, 4096 calls / 256 MiB queued, a 10 s stall timeout, 50 mismatches
    /// listed, no log, no outcome sink, device nodes not created, io_uring requests on real
    /// rings.
    pub fn new(root: PathBuf) -> Options {
        Options {
            root,
            verify: Verify::Full,
            on_mismatch: OnMismatch::Warn,
            timing: Timing::Afap,
            split_cpus: true,
            fill: Fill::Pattern,
            mmap: MmapMode::Map,
            reads: Reads::All,
            prefetch_events: 4096,
            prefetch_bytes: 16 << 20,
            stall_timeout: Duration::from_secs(10),
            keep_mismatches: 50,
            queue_events: 4096,
            queue_bytes: 256 << 20,
            log_level: 0,
            partial_dirs: Default::default(),
            inferred_files: Default::default(),
            unknown_content: Default::default(),
            outcomes: None,
            special: false,
            uring: UringMode::Ring,
        }
    }
}

/// Errors that stop a replay before or while it runs (a call's errno is data, not an error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// [`Options::root`] could not be canonicalized or opened as a directory.
    #[error("replay root {path}: {source}")]
    Root {
        /// The root as given in [`Options::root`].
        path: PathBuf,
        /// Why `canonicalize` or `open(O_PATH | O_DIRECTORY)` failed.
        #[source]
        source: std::io::Error,
    },
    /// Reading or decoding the trace failed.
    #[error("reading the trace: {0}")]
    Trace(#[from] ra_trace::Error),
    /// Reading a compiled plan ([`Plan`]) failed.
    #[error("reading the plan: {0}")]
    Plan(#[from] planfile::PlanError),
    /// The trace's header names an architecture other than x86_64; checked before anything
    /// is replayed.
    #[error(
        "the trace was recorded on {arch}; this replayer runs on x86_64 and replays only \
         traces of the same architecture (syscall numbers and struct layouts differ)"
    )]
    Arch {
        /// The architecture the trace's header names.
        arch: String,
    },
    /// Recreating the initial state ([`init`]) failed on a file or directory.
    #[error("initial state: {what}: {source}")]
    Init {
        /// What was being done and to which path (e.g. `mkdir /w/src`).
        what: String,
        /// The errno of the failed call.
        #[source]
        source: std::io::Error,
    },
    /// `--init=snapshot` ([`InitMode::Snapshot`]) of a trace that holds no snapshot.
    #[error("the trace holds no snapshot (record with --snapshot DIR, or use --init=infer)")]
    NoSnapshot,
    /// A step of a [`Session`] failed: what it was doing, and why.
    #[error("{what}: {source}")]
    Context {
        /// The step, e.g. `restoring the recorded state of /srv`.
        what: String,
        /// Its error.
        #[source]
        source: Box<Error>,
    },
    /// Spawning one of the replay's threads (watchdog, timer, read-ahead, workers) failed.
    #[error("starting executor thread: {0}")]
    Thread(#[source] std::io::Error),
    /// Writing the replay log failed. Not raised by this crate today: writes to the log sink
    /// passed to [`replay_from`] ignore their errors.
    #[error("writing the replay log: {0}")]
    Log(#[source] std::io::Error),
}

/// This crate's result type; the error defaults to [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
