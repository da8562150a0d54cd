//! `reanimator replay`: re-execute a trace into a sandboxed root and verify it.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use ra_replay::{
    compare::OutcomeSink, init, Fill, FinalCheck, InitMode, MmapMode, OnMismatch, Options,
    Progress, Report, Session, Timing, UringMode, Verify,
};
use ra_trace::TraceReader;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum VerifyArg {
    /// `full` when the trace holds its data; when it holds only digests or lengths (`record`
    /// or `fs` `--data hash|none`, `anonymize --data digest|drop`): return values and errnos,
    /// and the final tree without file contents (a replay cannot write bytes it was never
    /// given), said in a note.
    Auto,
    /// Replay only.
    None,
    /// Return values and errnos.
    Ret,
    /// Return values, errnos and returned data: read buffers, stat fields (not times, inode
    /// or device numbers), directory entries (as sets), link targets, xattr values.
    Full,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MismatchArg {
    /// Count and report mismatches, keep going.
    Warn,
    /// Stop at the first mismatch.
    Abort,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FillArg {
    /// A repeating text pattern.
    Pattern,
    /// Pseudo-random bytes (deterministic per call).
    Random,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MmapArg {
    /// Real mappings; page records copy through them.
    Map,
    /// No mappings; page records become pread/pwrite.
    Pread,
}

/// `--uring`: how io_uring requests (`io_uring_op` records) are replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UringArg {
    /// Through real rings where io_uring can be set up here, else as system calls (the
    /// report says so).
    Auto,
    /// Through a real ring per recorded ring: same opcodes, SQE flags, offsets, lengths and
    /// data; refused in one line where io_uring cannot be set up.
    Ring,
    /// Each request as the system call it stands for (`READ` as pread64, `FSYNC` as fsync or
    /// fdatasync, ...).
    AsSyscalls,
}

/// `--reads`: Replayfs' read cache modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReadsArg {
    /// Replay every read.
    All,
    /// Replay only the reads that missed the page cache when recorded (eBPF traces say which;
    /// reads of other traces are all replayed).
    AsRecorded,
    /// Replay no read of a regular file (their recorded results stand).
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InitArg {
    /// The trace's stored snapshots (record --snapshot) where it has them, inferred state for
    /// everything else.
    Auto,
    /// Only the trace's stored snapshots.
    Snapshot,
    /// Only what the trace shows existed before it started (see --help).
    Infer,
    /// Nothing: the root is used as it is.
    None,
}

/// Where a timed replay's threads run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TimingCpus {
    /// Workers and timer apart from the dispatcher and read-ahead.
    Split,
    /// Wherever the kernel puts them.
    Shared,
}

/// What --init puts in file bytes the trace never showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InitUnknown {
    /// Holes: no disk space, no time; reads of them return zeros without reaching the disk
    /// (the kernel allocates zeroed pages), unlike the recorded program's reads.
    Sparse,
    /// The --fill data: files take their recorded size on disk, and reads find data in the
    /// page cache or on the disk, as the recorded program's did (for timing and --reads).
    Fill,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    mkdir /tmp/r && reanimator replay trace.ds --root /tmp/r --init\n  \
    reanimator replay trace.ds --root /tmp/r --init=infer --report out.json -v --log replay.log\n  \
    reanimator replay trace.ds --root /mnt/ext4/r --compare /mnt/xfs/r --compare /mnt/btrfs/r --init\n  \
    reanimator replay trace.ds --root /tmp/r --force --verify ret --timing original\n\n\
    Every path in the trace is resolved beneath --root (absolute paths, `..` and symlinks \
    included); calls on /proc, /sys and /dev paths, sockets and descriptors inherited from \
    outside the trace are simulated from the recorded results.\n\n\
    --init=infer recreates what the trace shows existed before it started: files opened \
    without O_CREAT, stat'ed, read, listed, executed, removed or renamed, with the types, \
    sizes, modes and owners a stat showed and the content reads captured (zeros elsewhere). \
    Device nodes, setuid/setgid bits and security.* xattrs are not recreated from the trace \
    unless --allow-special.\n\n\
    The root may not be / nor hold the replayer's own executable or the trace.\n\n\
    Differential replay (--compare DIR, repeatable): the trace is replayed into --root, then \
    into each --compare root in turn (each prepared by the same --init), e.g. roots on ext4, \
    xfs, btrfs and tmpfs. The report gives each root's path, file system type and elapsed \
    time and its calls that differ from the recording; then the calls on which the roots \
    differ from each other (result, errno, returned data as verification compares it, or how \
    the call was replayed), counted per call, the first --max-mismatches listed; then each \
    --compare root's final tree against --root's (names, kinds, sizes, modes, owners, \
    contents, symlink targets, xattrs; not times, inode numbers or directory sizes). The \
    roots must be distinct directories, none inside another. Each root's outcomes are \
    spilled to an unlinked file in $TMPDIR (48 bytes per call).\n\n\
    Exit status: 0 when every verified call matched, 1 when something differed (or the replay \
    was stopped), 2 when the replay could not run. With --compare: 0 when every root matched \
    the recording and the roots agree on every call and on their trees, 1 otherwise, 2 when \
    a replay could not run.")]
pub struct ReplayArgs {
    #[command(flatten)]
    pub key: crate::output::ReadKeyArgs,
    /// The trace to replay (ours or an original Re-Animator trace), or a plan compiled from
    /// one (reanimator compile). `-` reads standard input: it is first copied to a private temporary
    /// file (mode 0600, unnamed, in $TMPDIR, gone when the command ends) and read from there.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Selective replay: only the calls these select (as `reanimator select` takes them,
    /// docs/SELECT.md); the report says how many calls of which classes were left out, and
    /// --init makes the initial state for what remains.
    #[command(flatten, next_help_heading = "Selection")]
    pub sel: crate::select::SelectionArgs,
    /// Directory to replay into; must exist and be empty unless --force or --clean.
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Differential replay: replay the trace again into DIR (repeatable; roots on different
    /// file systems) and report, call by call, where the roots' outcomes differ from each
    /// other and from the recording, their final trees' differences and each root's elapsed
    /// time (see below).
    #[arg(long, value_name = "DIR")]
    pub compare: Vec<PathBuf>,
    /// Replay into a root that is not empty: its files stay, and the replay's mix with them
    /// (where they differ from the recorded start state, verification can fail; --clean
    /// starts afresh instead).
    #[arg(long)]
    pub force: bool,
    /// Empty the root (and each --compare root) first: everything beneath it is removed,
    /// never crossing into another file system. Only for a root an earlier replay used
    /// (replay remembers its roots, by device and inode, in
    /// ~/.local/state/reanimator/replay-roots); any other non-empty directory is refused.
    #[arg(long, conflicts_with = "force")]
    pub clean: bool,
    /// Recreate the initial state under --root before replaying (`--init` alone = auto).
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "auto", default_value_t = InitArg::None, require_equals = true)]
    pub init: InitArg,
    /// Let --init create device nodes, setuid/setgid files and security.* xattrs (file
    /// capabilities) as the trace recorded them, and replayed mknod calls create device
    /// nodes; by default each becomes a harmless placeholder (an empty regular file, the mode
    /// without setuid/setgid, no xattr) listed in the report's initial-state notes or
    /// warnings.
    #[arg(long)]
    pub allow_special: bool,
    /// What --init puts in the bytes of files that the trace never showed (a file a stat
    /// showed 1 GB long, of which 4 KiB were read: 1 GB less 4 KiB): holes (`sparse`) or the
    /// --fill data written out (`fill`: costs the disk space and the time).
    #[arg(long, value_enum, default_value_t = InitUnknown::Sparse)]
    pub init_unknown: InitUnknown,
    /// What to verify.
    #[arg(long, value_enum, default_value_t = VerifyArg::Auto)]
    pub verify: VerifyArg,
    /// What to do at a mismatch.
    #[arg(long, value_enum, default_value_t = MismatchArg::Warn)]
    pub on_mismatch: MismatchArg,
    /// `afap` (as fast as possible), `original` (recorded pace) or `scale=K` (recorded time
    /// offsets times K: 0.5 = twice as fast).
    #[arg(long, default_value = "afap", value_name = "afap|original|scale=K", value_parser = parse_timing)]
    pub timing: Timing,
    /// Where a --timing replay's threads run: `split` (with two CPUs or more, the workers and
    /// the timer on all but the last eighth of the CPUs this process may use, the dispatcher
    /// and the read-ahead on the rest: the load balancer otherwise moves them onto a spinning
    /// worker's CPU, and due calls wait) or `shared` (wherever the kernel puts them).
    #[arg(long, value_enum, default_value_t = TimingCpus::Split)]
    pub timing_cpus: TimingCpus,
    /// Data for writes the trace holds no bytes for (traces recorded with --data hash|none).
    #[arg(long, value_enum, default_value_t = FillArg::Pattern)]
    pub fill: FillArg,
    /// How memory-mapped file I/O (mmap, mmappread/mmappwrite records) is replayed.
    #[arg(long, value_enum, default_value_t = MmapArg::Map)]
    pub mmap: MmapArg,
    /// Which reads of files to replay (the report says which ran): all, only those that
    /// missed the page cache when recorded, or none.
    #[arg(long, value_enum, default_value_t = ReadsArg::All)]
    pub reads: ReadsArg,
    /// How io_uring requests recorded by the eBPF recorder (`io_uring_op` records) are
    /// replayed and verified (docs/REPLAY.md, "io_uring requests").
    #[arg(long, value_enum, default_value_t = UringArg::Auto)]
    pub uring: UringArg,
    /// How far the trace is read ahead, on a thread of its own: at most N calls and BYTES of
    /// data, whichever is reached first, in batches of 256 calls or 1 MiB (the default,
    /// 4096,16M: 16 batches); the report gives the horizon used and whether replay ever
    /// waited for it.
    #[arg(long, value_name = "N[,BYTES]", value_parser = parse_prefetch, default_value = "4096,16M")]
    pub prefetch: (usize, usize),
    /// Seconds a call may block (pipe read, lock wait) before it is reported as stalled.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub stall_timeout: f64,
    /// Write the full report as JSON to this file.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Print the report as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// -v: log each mismatch; -vv: log every replayed call (to --log, or stderr).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Where -v/-vv lines go (default: stderr).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// How many mismatches the report lists (all are counted).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_mismatches: usize,
    /// No progress bar, no table (exit status and --report only).
    #[arg(short, long)]
    pub quiet: bool,
}

fn parse_prefetch(s: &str) -> std::result::Result<(usize, usize), String> {
    let (n, b) = s.split_once(',').unwrap_or((s, "16M"));
    let n: usize = n.trim().parse().map_err(|_| format!("`{n}` is not a number of calls"))?;
    let b = crate::record::parse_size(b.trim())? as usize;
    if n < 256 || b < (1 << 20) {
        return Err("the horizon is at least 256 calls and 1M of data".into());
    }
    Ok((n, b))
}

fn parse_timing(s: &str) -> std::result::Result<Timing, String> {
    match s {
        "afap" => Ok(Timing::Afap),
        "original" => Ok(Timing::Scaled(1.0)),
        _ => {
            let k = s
                .strip_prefix("scale=")
                .ok_or_else(|| format!("`{s}`: use afap, original or scale=K"))?;
            let k: f64 = k
                .parse()
                .map_err(|_| format!("`{k}` is not a number (scale=0.5 replays twice as fast)"))?;
            if !(k.is_finite() && k >= 0.0) {
                return Err(format!("scale={k}: the factor must be a non-negative number"));
            }
            Ok(Timing::Scaled(k))
        }
    }
}

static STOP: std::sync::OnceLock<Arc<Progress>> = std::sync::OnceLock::new();

extern "C" fn on_stop(_sig: libc::c_int) {
    if let Some(p) = STOP.get() {
        if p.stop.swap(true, Ordering::Relaxed) {
            // A second Ctrl-C: stop now.
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(130) };
        }
    }
}

/// Ctrl-C / SIGTERM stop the replay after the calls in flight; the report is still written.
pub(crate) fn install_stop_handler(p: Arc<Progress>) {
    let _ = STOP.set(p);
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches an atomic (and calls _exit).
        unsafe { crate::signals::set_handler(sig, on_stop as *const () as usize, 0) };
    }
}

/// `root` (canonical) is `p` or one of its ancestors.
fn holds(root: &Path, p: &Path) -> bool {
    p.canonicalize().is_ok_and(|p| p.starts_with(root))
}

pub(crate) fn check_root(root: &Path, force: bool, trace: &Path) -> Result<()> {
    let md = std::fs::metadata(root).with_context(|| {
        format!(
            "replay root {}: cannot use it (create it first: mkdir -p {})",
            root.display(),
            root.display()
        )
    })?;
    if !md.is_dir() {
        bail!("replay root {} is not a directory", root.display());
    }
    // The trace's paths all land beneath the root: a root that holds the system or the
    // replayer's own files would let a trace overwrite them. --force does not change that.
    let canon = root
        .canonicalize()
        .with_context(|| format!("resolving the replay root {}", root.display()))?;
    if canon == Path::new("/") {
        bail!(
            "replay root {}: refusing to replay into / (the trace's files would replace the \
             system's); replay into an empty directory: mkdir /tmp/r && reanimator replay ... \
             --root /tmp/r",
            root.display()
        );
    }
    let exe = std::env::current_exe().ok();
    for (what, p) in [("the reanimator executable", exe.as_deref()), ("the trace", Some(trace))] {
        if let Some(p) = p.filter(|p| holds(&canon, p)) {
            bail!(
                "replay root {}: refusing to replay into a directory that holds {what} ({}): \
                 the replay could overwrite it; pick an empty directory elsewhere",
                root.display(),
                p.display()
            );
        }
    }
    let mut entries = std::fs::read_dir(root)
        .with_context(|| format!("reading the replay root {}", root.display()))?;
    if entries.next().is_some() && !force {
        bail!(
            "replay root {} is not empty: replaying into it would mix its files with the trace's \
             (empty it, pick another directory, or pass --force)",
            root.display()
        );
    }
    Ok(())
}

/// [`check_root`], then with `--clean` the root emptied (only a root an earlier replay used,
/// as [`ReplayRoots`] remembers), and the root remembered.
pub(crate) fn prepare_root(root: &Path, a: &ReplayArgs, trace: &Path) -> Result<()> {
    check_root(root, a.force || a.clean, trace)?;
    let non_empty = std::fs::read_dir(root)
        .with_context(|| format!("reading the replay root {}", root.display()))?
        .next()
        .is_some();
    let roots = ReplayRoots::new();
    if a.clean && non_empty {
        if !roots.contains(root) {
            bail!(
                "replay root {}: --clean empties only a root an earlier replay used ({} lists \
                 them), and this directory is not one; empty it yourself or pick an empty \
                 directory",
                root.display(),
                roots
                    .path
                    .as_ref()
                    .map_or("$HOME/.local/state/reanimator/replay-roots".into(), |p| p
                        .display()
                        .to_string())
            );
        }
        let removed = empty_dir(root)
            .with_context(|| format!("--clean: emptying the replay root {}", root.display()))?;
        eprintln!("reanimator: --clean: removed {removed} entries beneath {}", root.display());
    }
    if let Err(e) = roots.add(root) {
        if a.clean {
            eprintln!(
                "reanimator: note: cannot remember {} as a replay root ({e:#}): a later --clean \
                 of it will be refused",
                root.display()
            );
        }
    }
    Ok(())
}

/// The directories replays have used as roots, by device and inode (nothing is written into
/// a root to mark it: a scan or diff of it would show the mark), in
/// `$XDG_STATE_HOME/reanimator/replay-roots` (else `~/.local/state/...`), one `DEV INO PATH`
/// line each, the newest [`ReplayRoots::KEEP`].
struct ReplayRoots {
    path: Option<PathBuf>,
}

impl ReplayRoots {
    const KEEP: usize = 1000;

    fn new() -> ReplayRoots {
        let base = std::env::var_os("XDG_STATE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")));
        ReplayRoots { path: base.map(|b| b.join("reanimator/replay-roots")) }
    }

    fn id(root: &Path) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(root).ok()?;
        Some(format!("{} {}", m.dev(), m.ino()))
    }

    fn lines(&self) -> Vec<String> {
        let Some(p) = &self.path else { return Vec::new() };
        std::fs::read_to_string(p)
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    fn contains(&self, root: &Path) -> bool {
        let Some(id) = Self::id(root) else { return false };
        let canon = root.canonicalize().ok();
        self.lines().iter().any(|l| {
            let mut f = l.splitn(3, ' ');
            let (Some(d), Some(i), Some(p)) = (f.next(), f.next(), f.next()) else { return false };
            format!("{d} {i}") == id && canon.as_deref() == Some(Path::new(p))
        })
    }

    fn add(&self, root: &Path) -> Result<()> {
        let p = self.path.as_ref().context("neither XDG_STATE_HOME nor HOME is set")?;
        let id = Self::id(root).context("cannot stat the root")?;
        let canon = root.canonicalize()?;
        let line = format!("{id} {}", canon.display());
        let mut lines: Vec<String> = self.lines().into_iter().filter(|l| *l != line).collect();
        lines.push(line);
        let skip = lines.len().saturating_sub(Self::KEEP);
        if let Some(dir) = p.parent() {
            ra_fsstate::private::create_dir_all(dir)?;
        }
        ra_fsstate::private::write(p, (lines[skip..].join("\n") + "\n").as_bytes())?;
        Ok(())
    }
}

/// Remove everything beneath `dir`, not crossing into other file systems (a mount point
/// beneath it is an error, left in place). Returns how many entries were removed.
fn empty_dir(dir: &Path) -> Result<u64> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dev = std::fs::symlink_metadata(dir)?.dev();
    let mut n = 0;
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        let md = std::fs::symlink_metadata(&p)?;
        if md.is_dir() {
            if md.dev() != dev {
                bail!("{} is a mount point: unmount it first", p.display());
            }
            // A replayed 0555 directory: its entries can go only once it is writable.
            if md.mode() & 0o700 != 0o700 {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))
                    .with_context(|| format!("chmod {}", p.display()))?;
            }
            n += empty_dir(&p)?;
            std::fs::remove_dir(&p).with_context(|| format!("rmdir {}", p.display()))?;
        } else {
            std::fs::remove_file(&p).with_context(|| format!("unlink {}", p.display()))?;
        }
        n += 1;
    }
    Ok(n)
}

/// What is replayed: a compiled plan or a trace; with a plan, its source trace when the plan
/// needs it for snapshots (or why it is not there).
pub(crate) struct Input {
    pub plan: Option<ra_replay::Plan>,
    pub trace: Option<TraceReader>,
    pub snapshots_missing: Option<String>,
}

pub fn run(a: ReplayArgs) -> Result<ExitCode> {
    // At most a day: a longer wait is no stall detection at all (and Duration has a limit).
    if !(a.stall_timeout.is_finite() && a.stall_timeout > 0.0 && a.stall_timeout <= 86_400.0) {
        bail!(
            "--stall-timeout {}: give a positive number of seconds, at most 86400 (a day)",
            a.stall_timeout
        );
    }
    // A compiled plan (reanimator compile) or a trace.
    let plan = if ra_replay::planfile::is_plan(&a.trace) {
        Some(ra_replay::Plan::open(&a.trace).context("opening the plan")?)
    } else {
        None
    };
    // The trace: the one given, or the plan's source trace when it stores snapshots (which a
    // plan does not copy) and it is still there, unchanged.
    let mut snapshots_missing: Option<String> = None;
    if plan.is_some() && !a.sel.is_empty() {
        bail!(
            "{} is a plan: give the selection to compile (or replay the trace with it)",
            crate::spool::shown(&a.trace)
        );
    }
    let mut selected: Option<crate::select::Selected> = None;
    let trace: Option<TraceReader> = match &plan {
        None => {
            let t = TraceReader::open(&a.trace)
                .with_context(|| format!("opening the trace {}", crate::spool::shown(&a.trace)))?;
            if a.sel.is_empty() {
                Some(t)
            } else {
                crate::note_incomplete(&a.trace, t.incomplete(), "the calls it holds are read");
                let s = crate::select::select_scratch(&t, &a.trace, &a.sel)?;
                if !a.quiet {
                    eprintln!("{}", s.line("replaying"));
                }
                let t = TraceReader::open(&s.path)
                    .with_context(|| format!("opening the selection {}", s.path.display()))?;
                selected = Some(s);
                Some(t)
            }
        }
        Some(p) if p.source().snapshots > 0 => match source_trace(p) {
            Ok(t) => Some(t),
            Err(why) => {
                snapshots_missing = Some(why);
                None
            }
        },
        Some(_) => None,
    };
    if let (None, Some(t)) = (&plan, &trace) {
        crate::note_incomplete(
            &a.trace,
            t.incomplete(),
            "the calls it holds are replayed, and end-state checks may differ",
        );
        // One line per reason: what is missing from the trace is not replayed.
        // (count, rows, first, last) per reason.
        type Gap = (i64, usize, Option<i64>, Option<i64>);
        let mut gaps: std::collections::BTreeMap<&str, Gap> = Default::default();
        for l in t.lost() {
            let g = gaps.entry(&l.reason).or_insert((0, 0, None, None));
            g.0 += l.count;
            g.1 += 1;
            g.2 = match (g.2, l.time_first) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            g.3 = g.3.max(l.time_last);
        }
        for (reason, (count, n, first, last)) in gaps {
            let span = match (first, last) {
                (Some(x), Some(z)) => format!(
                    " between {} and {}",
                    ra_trace::time::rfc3339(x),
                    ra_trace::time::rfc3339(z)
                ),
                _ => String::new(),
            };
            eprintln!(
                "reanimator: note: {} lacks {count} operations{span} ({reason}; {n} gap(s)): \
                 they are not replayed",
                crate::spool::shown(&a.trace)
            );
        }
    }
    if let Some(why) = &snapshots_missing {
        if matches!(a.init, InitArg::Auto | InitArg::Snapshot) {
            bail!(
                "--init: the plan's trace stores snapshots, but {why}; replay the trace, or \
                 use --init=infer"
            );
        }
    }
    let input = Input { plan, trace, snapshots_missing };
    if !a.compare.is_empty() {
        return crate::compare::run(&a, &input);
    }
    prepare_root(&a.root, &a, &a.trace)?;
    let log = open_log(&a)?;
    let progress = Arc::new(Progress::default());
    install_stop_handler(progress.clone());
    let report = replay_into(&a, &input, &a.root, None, &progress, log)?;
    let report_json = || {
        let mut j = report.to_json();
        if let Some(s) = &selected {
            j["selection"] = s.to_json();
        }
        j
    };
    if let Some(p) = &a.report {
        let j = serde_json::to_string_pretty(&report_json())?;
        ra_fsstate::private::write(p, (j + "\n").as_bytes())
            .with_context(|| format!("writing the report {}", p.display()))?;
    }
    if a.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &report_json())?;
        writeln!(out)?;
    } else if !a.quiet {
        print_report(&report, &a.trace)?;
    }
    Ok(if report.clean() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Where -v/-vv lines go: --log FILE (created), stderr, or nowhere without -v.
pub(crate) fn open_log(a: &ReplayArgs) -> Result<Option<Box<dyn Write + Send>>> {
    Ok(match (&a.log, a.verbose) {
        (_, 0) => None,
        (Some(p), _) => Some(Box::new(std::io::BufWriter::new(
            ra_fsstate::private::create(p)
                .with_context(|| format!("creating the log {}", p.display()))?,
        ))),
        (None, _) => Some(Box::new(std::io::stderr())),
    })
}

/// One replay of `input` into `root_dir` with the command line's options: the initial state
/// (`--init`), the replay (its outcomes to `outcomes` when given), and the final-state check.
/// `progress` must have its counters at zero; its `stop` ends the replay early.
pub(crate) fn replay_into(
    a: &ReplayArgs,
    input: &Input,
    root_dir: &Path,
    outcomes: Option<OutcomeSink>,
    progress: &Arc<Progress>,
    log: Option<Box<dyn Write + Send>>,
) -> Result<Report> {
    let (plan, trace) = (&input.plan, &input.trace);
    let mut opts = Options::new(root_dir.to_path_buf());
    let verify = verification(a, input);
    opts.verify = match verify {
        Verification::None => Verify::None,
        Verification::Ret | Verification::RetAndShape => Verify::Ret,
        Verification::Full => Verify::Full,
    };
    opts.on_mismatch =
        if a.on_mismatch == MismatchArg::Abort { OnMismatch::Abort } else { OnMismatch::Warn };
    opts.timing = a.timing;
    opts.split_cpus = a.timing_cpus == TimingCpus::Split;
    opts.fill = if a.fill == FillArg::Random { Fill::Random } else { Fill::Pattern };
    opts.special = a.allow_special;
    opts.mmap = if a.mmap == MmapArg::Pread { MmapMode::Pread } else { MmapMode::Map };
    (opts.prefetch_events, opts.prefetch_bytes) = a.prefetch;
    opts.reads = match a.reads {
        ReadsArg::All => ra_replay::Reads::All,
        ReadsArg::AsRecorded => ra_replay::Reads::AsRecorded,
        ReadsArg::None => ra_replay::Reads::None,
    };
    opts.uring = match (a.uring, ra_replay::probe_uring()) {
        (UringArg::AsSyscalls, _) => UringMode::AsSyscalls { fallback: None },
        (_, Ok(())) => UringMode::Ring,
        (UringArg::Auto, Err(why)) => UringMode::AsSyscalls { fallback: Some(why) },
        (UringArg::Ring, Err(why)) => bail!(
            "--uring ring: io_uring cannot be set up here ({why}; kernel.io_uring_disabled, or \
             a seccomp filter): replay with --uring as-syscalls"
        ),
    };
    opts.stall_timeout = Duration::from_secs_f64(a.stall_timeout);
    opts.keep_mismatches = a.max_mismatches;
    opts.log_level = a.verbose.min(2);

    opts.outcomes = outcomes;
    let fill = opts.fill;
    let session = match (&plan, &trace) {
        (Some(p), t) => Session::of_plan(p, t.as_ref(), input.snapshots_missing.clone(), opts),
        (None, Some(t)) => Session::of_trace(t, opts),
        (None, None) => unreachable!("a trace is open when no plan is"),
    };
    let init = match a.init {
        InitArg::None => InitMode::None,
        InitArg::Snapshot => InitMode::Snapshot,
        InitArg::Infer => InitMode::Infer,
        InitArg::Auto => InitMode::Auto,
    };
    let unknown = match a.init_unknown {
        InitUnknown::Sparse => init::Unknown::Sparse,
        InitUnknown::Fill => init::Unknown::Fill(fill),
    };
    let check = match verify {
        Verification::None | Verification::Ret => FinalCheck::None,
        Verification::RetAndShape => FinalCheck::Shape,
        Verification::Full => FinalCheck::Full,
    };
    let session = session.init(init, unknown).final_check(check, crate::diff::diff_line);
    if init == InitMode::Snapshot && session.snapshots().is_empty() {
        bail!(
            "--init=snapshot: {} holds no snapshot (record with --snapshot DIR, or use --init=infer)",
            crate::spool::shown(&a.trace)
        );
    }
    let prepared = session.prepare(progress).map_err(anyhow::Error::new)?;
    let total = prepared.total_calls();
    let bar = (!a.quiet && std::io::stderr().is_terminal())
        .then(|| crate::progress::Progress::calls("replaying", total));
    let worker = {
        let bar_progress = progress.clone();
        // Ends the bar's ticker (not the replay's `stop`: another replay may follow).
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ticker_finished = finished.clone();
        let ticker = bar.map(|b| {
            std::thread::spawn(move || {
                while !ticker_finished.load(Ordering::Relaxed)
                    && !bar_progress.stop.load(Ordering::Relaxed)
                    && !b.is_done()
                {
                    b.set(bar_progress.done.load(Ordering::Relaxed));
                    std::thread::sleep(Duration::from_millis(100));
                }
                b.finish();
            })
        });
        let r = prepared.replay(progress.clone(), log);
        if let Some(t) = ticker {
            finished.store(true, Ordering::Relaxed);
            let _ = t.join();
        }
        r
    };
    let mut report =
        worker.with_context(|| format!("replaying {}", crate::spool::shown(&a.trace)))?;
    if verify == Verification::RetAndShape {
        report.warn(
            "the trace holds its data as digests or lengths only (its data_mode): return values \
             and errnos were verified, and the final tree without file contents (pass --verify \
             full to compare the data anyway)"
                .to_string(),
        );
    }
    Ok(report)
}

/// A plan's source trace, when it is where it was when compiled and unchanged (size and
/// modification time); else why not.
fn source_trace(p: &ra_replay::Plan) -> std::result::Result<TraceReader, String> {
    let src = p.source();
    src.check()?;
    TraceReader::open(&src.path).map_err(|e| format!("{} cannot be read ({e})", src.path))
}

/// What a replay verifies, `--verify auto` resolved against the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verification {
    None,
    Ret,
    /// Return values and errnos, and the final tree without contents.
    RetAndShape,
    Full,
}

fn verification(a: &ReplayArgs, input: &Input) -> Verification {
    let data = match (&input.plan, &input.trace) {
        (Some(p), _) => p.facts().data,
        (None, Some(t)) => ra_replay::TraceFacts::of(t).data,
        (None, None) => true,
    };
    match a.verify {
        VerifyArg::None => Verification::None,
        VerifyArg::Ret => Verification::Ret,
        VerifyArg::Full => Verification::Full,
        VerifyArg::Auto if data => Verification::Full,
        VerifyArg::Auto => Verification::RetAndShape,
    }
}

fn print_report(r: &Report, trace: &Path) -> Result<()> {
    let mut o = std::io::stdout().lock();
    let t = r.totals();
    writeln!(
        o,
        "replayed {} calls of {} ({} threads, {} processes) in {:.3} s (recorded run: {:.3} s)",
        t.replayed,
        crate::spool::shown(trace),
        r.threads,
        r.processes,
        r.elapsed_ns as f64 / 1e9,
        r.trace_span_ns as f64 / 1e9
    )?;
    if let Some((_, from)) = &r.plan {
        writeln!(o, "(a plan compiled from {from})")?;
    }
    for (what, detail) in &r.init {
        writeln!(o, "initial state ({what}): {detail}")?;
    }
    if let Some(p) = &r.prefetch {
        writeln!(
            o,
            "trace read ahead (up to {} calls / {} MiB): the dispatcher waited for it {} times \
             ({:.1} ms), {} of them with the workers idle ({:.1} ms); the workers waited for \
             the disk in {} page faults",
            p.horizon_events,
            p.horizon_bytes >> 20,
            p.stalls,
            p.stalled_ns as f64 / 1e6,
            p.starved,
            p.starved_ns as f64 / 1e6,
            r.worker_major_faults
        )?;
    }
    if let Some(m) = r.reads.filter(|m| *m != ra_replay::Reads::All) {
        writeln!(o, "reads replayed: {} (--reads)", m.name())?;
    }
    writeln!(o)?;
    writeln!(
        o,
        "{:<18} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "call", "replayed", "issued", "emulated", "simulated", "skipped", "matched", "mismatched"
    )?;
    for (name, s) in &r.per_call {
        writeln!(
            o,
            "{:<18} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
            name, s.replayed, s.issued, s.emulated, s.simulated, s.skipped, s.matched, s.mismatched
        )?;
    }
    writeln!(
        o,
        "{:<18} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "total", t.replayed, t.issued, t.emulated, t.simulated, t.skipped, t.matched, t.mismatched
    )?;
    if let Some(k) = r.timing {
        let e = &r.pacer.errors;
        let us = |ns: u64| ns as f64 / 1e3;
        writeln!(
            o,
            "\ntiming (recorded offsets x {k}): {} calls issued; issue-time error median {:.1} us, \
             p90 {:.1} us, p99 {:.1} us, max {:.1} us",
            e.count,
            us(e.quantile(0.5)),
            us(e.quantile(0.9)),
            us(e.quantile(0.99)),
            us(e.max_ns)
        )?;
        let worst: Vec<String> = r
            .pacer
            .worst_seconds(3)
            .iter()
            .map(|(s, h)| format!("{s} s: p99 {:.1} us of {} calls", us(h.quantile(0.99)), h.count))
            .collect();
        if !worst.is_empty() {
            writeln!(o, "worst seconds of the trace: {}", worst.join("; "))?;
        }
        if let Some((w, others)) = &r.pacer.cpus {
            writeln!(o, "CPUs: workers and timer on {w}, dispatcher and read-ahead on {others}")?;
        }
    }
    if !r.unknown.is_empty() {
        let v: Vec<String> = r.unknown.iter().map(|(k, n)| format!("{k} ({n})")).collect();
        writeln!(o, "\nskipped, unknown to replay: {}", v.join(", "))?;
    }
    if !r.warnings.is_empty() {
        writeln!(o, "\nnotes:")?;
        for (w, n) in &r.warnings {
            writeln!(o, "  {w}{}", if *n > 1 { format!(" (x{n})") } else { String::new() })?;
        }
    }
    if !r.mismatches.is_empty() {
        writeln!(o, "\nfirst mismatches ({} calls differ in all):", r.mismatch_total)?;
        for m in &r.mismatches {
            writeln!(
                o,
                "  #{} {} [tid {}]: {}: expected {}, got {}",
                m.unique_id,
                m.call,
                m.tid.map_or("?".into(), |t| t.to_string()),
                m.diff.what,
                m.diff.expected,
                m.diff.actual
            )?;
        }
    }
    for (what, n, first) in &r.final_state {
        if *n == 0 {
            writeln!(o, "\nfinal state: {what}: identical")?;
        } else {
            writeln!(o, "\nfinal state: {what}: {n} differences")?;
            for d in first {
                writeln!(o, "  {d}")?;
            }
        }
    }
    if let Some(why) = &r.aborted {
        writeln!(o, "\nstopped early: {why}")?;
    }
    writeln!(
        o,
        "\n{}",
        if r.clean() { "verified: every call matched" } else { "verification FAILED" }
    )?;
    Ok(())
}
