//! One replay from start to end, as `reanimator replay` and `reanimator compare` run it: the
//! initial state made beneath the root (`--init`: recorded snapshots restored, the rest
//! inferred from the calls), written back to the disk, the calls replayed ([`replay_from`]),
//! and the replayed tree compared with the recorded end states.
//!
//! Two steps, so that a caller can show progress for the replay alone:
//!
//! ```text
//! let prepared = Session::of_trace(&trace, opts).init(InitMode::Auto).final_check(check, describe).prepare(&progress)?;
//! let report = prepared.replay(progress, log)?;
//! ```
//!
//! What the caller keeps: parsing its options into [`Options`], progress bars, and printing
//! the [`Report`].

use std::collections::HashSet;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Arc;

use ra_fsstate::Difference;
use ra_trace::{SnapshotInfo, TraceReader};

use crate::sandbox::Root;
use crate::{init, replay_from, Error, Options, Plan, Progress, Report, Result, Source};

/// How the replay root's initial state is made (`--init`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InitMode {
    /// Nothing is made: the root is replayed into as it is.
    None,
    /// Every recorded snapshot's start state is restored; a trace without one is an error
    /// ([`Error::NoSnapshot`]).
    Snapshot,
    /// Inferred from the calls alone ([`init::infer`]).
    Infer,
    /// Snapshots restored where the trace has them, the rest inferred.
    #[default]
    Auto,
}

/// How the replayed tree is compared with the recorded end states of the trace's snapshots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FinalCheck {
    /// Not compared.
    #[default]
    None,
    /// Names, kinds, sizes, modes and links, not file contents (a trace whose data are
    /// digests or lengths only).
    Shape,
    /// Contents too.
    Full,
}

/// Differences of the final check listed in the report for each snapshot at most (the rest
/// are counted).
pub const FINAL_DIFFERENCES_LISTED: usize = 20;

/// A replay to run: what is replayed, its options, how the root is prepared and checked.
pub struct Session<'a> {
    plan: Option<&'a Plan>,
    trace: Option<&'a TraceReader>,
    snapshots_missing: Option<String>,
    opts: Options,
    init: InitMode,
    unknown: init::Unknown,
    final_check: FinalCheck,
    describe: fn(&Difference) -> String,
}

fn debug_difference(d: &Difference) -> String {
    format!("{d:?}")
}

impl<'a> Session<'a> {
    /// A replay of `trace` with `opts` (its root: [`Options::root`]); no `--init`, no final
    /// check until asked for.
    pub fn of_trace(trace: &'a TraceReader, opts: Options) -> Session<'a> {
        Session::new(None, Some(trace), None, opts)
    }

    /// A replay of a compiled plan; `source` is its trace when the plan's snapshots are needed
    /// (`--init`, the final check) and it could be opened, `missing` why it could not.
    pub fn of_plan(
        plan: &'a Plan,
        source: Option<&'a TraceReader>,
        missing: Option<String>,
        opts: Options,
    ) -> Session<'a> {
        Session::new(Some(plan), source, missing, opts)
    }

    fn new(
        plan: Option<&'a Plan>,
        trace: Option<&'a TraceReader>,
        snapshots_missing: Option<String>,
        opts: Options,
    ) -> Session<'a> {
        Session {
            plan,
            trace,
            snapshots_missing,
            opts,
            init: InitMode::None,
            unknown: init::Unknown::Sparse,
            final_check: FinalCheck::None,
            describe: debug_difference,
        }
    }

    /// How the initial state is made; `unknown`: what goes into the bytes of inferred files
    /// that the trace never showed.
    pub fn init(mut self, mode: InitMode, unknown: init::Unknown) -> Self {
        self.init = mode;
        self.unknown = unknown;
        self
    }

    /// Compare the replayed tree with the recorded end states; `describe` writes one
    /// difference as the report lists it.
    pub fn final_check(mut self, check: FinalCheck, describe: fn(&Difference) -> String) -> Self {
        self.final_check = check;
        self.describe = describe;
        self
    }

    /// The trace's snapshots that have a start state (what [`InitMode::Snapshot`] restores).
    pub fn snapshots(&self) -> Vec<SnapshotInfo> {
        self.trace.iter().flat_map(|t| t.snapshots()).filter(|s| s.start.is_some()).collect()
    }

    /// Make the initial state beneath the root (stopped early by `progress.stop`) and write it
    /// back to the disk; the notes it makes go into the report.
    pub fn prepare(self, progress: &Progress) -> Result<Prepared<'a>> {
        let mut notes = Vec::new();
        let mut partial_dirs = HashSet::new();
        let mut inferred = HashSet::new();
        let mut unknown_content = HashSet::new();
        if self.init != InitMode::None {
            let root = Root::new(&self.opts.root)
                .map_err(|source| Error::Root { path: self.opts.root.clone(), source })?;
            let snapshots = self.snapshots();
            let mut skip: Vec<Vec<u8>> = Vec::new();
            if matches!(self.init, InitMode::Auto | InitMode::Snapshot) {
                if self.init == InitMode::Snapshot && snapshots.is_empty() {
                    return Err(Error::NoSnapshot);
                }
                // (Snapshots come from a trace: none without one.)
                for (t, s) in self.trace.iter().flat_map(|t| snapshots.iter().map(move |s| (*t, s)))
                {
                    restore_snapshot(t, &root, s, self.opts.special, &mut notes)?;
                    skip.push(s.dir.clone());
                    // Its parents were made for it: they hold only what leads to it.
                    partial_dirs.extend(ancestors_dev_ino(&root, &s.dir));
                }
            }
            if matches!(self.init, InitMode::Auto | InitMode::Infer) {
                let o = init::InferOptions {
                    skip: &skip,
                    special: self.opts.special,
                    unknown: self.unknown,
                    stop: &progress.stop,
                };
                let st = match (self.plan, self.trace) {
                    (Some(p), _) => init::infer_from(
                        p.calls().map(|c| c.map(|c| c.ev)),
                        p.facts().cwd.clone(),
                        p.facts().synthetic,
                        &root,
                        &o,
                    ),
                    (None, Some(t)) => init::infer(t, &root, &o),
                    (None, None) => unreachable!("a session has a plan or a trace"),
                }
                .map_err(|e| Error::Context {
                    what: "inferring the initial state".into(),
                    source: Box::new(e),
                })?;
                partial_dirs.extend(st.partial_dirs.iter().copied());
                inferred.extend(st.files_created.iter().copied());
                unknown_content.extend(st.files_unknown.iter().copied());
                notes.push((
                    "inferred".to_string(),
                    format!(
                        "{} files, {} directories, {} symlinks; {} bytes of content from recorded reads, {} bytes not shown by the trace: {}",
                        st.files,
                        st.dirs,
                        st.symlinks,
                        st.bytes_known,
                        st.bytes_unknown,
                        if self.unknown == init::Unknown::Sparse {
                            "holes (--init-unknown fill writes them)".to_string()
                        } else {
                            format!("{} bytes of holes written with --fill data", st.bytes_filled)
                        }
                    ),
                ));
                for (p, what) in &st.withheld {
                    notes.push((
                        "withheld".to_string(),
                        format!(
                            "{}: {what}; --allow-special restores it as recorded",
                            String::from_utf8_lossy(p)
                        ),
                    ));
                }
            }
            // The recorded program found its files on disk, not dirty in the page cache: write
            // the restored state back before the replay starts (its time is the initial
            // state's, not the replay's; without it, a replayed fsync or fadvise(DONTNEED)
            // pays for writing back what --init just wrote).
            let d = std::fs::File::open(&self.opts.root)
                .map_err(|source| Error::Root { path: self.opts.root.clone(), source })?;
            // SAFETY: syncfs on a descriptor this function owns.
            if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
                return Err(Error::Init {
                    what: format!(
                        "writing back the initial state under {}",
                        self.opts.root.display()
                    ),
                    source: std::io::Error::last_os_error(),
                });
            }
        }
        let mut s = self;
        s.opts.partial_dirs = partial_dirs;
        s.opts.inferred_files = inferred;
        s.opts.unknown_content = unknown_content;
        Ok(Prepared { s, notes })
    }
}

/// A session whose root is ready: [`Prepared::replay`] runs it.
pub struct Prepared<'a> {
    s: Session<'a>,
    notes: Vec<(String, String)>,
}

impl Prepared<'_> {
    /// The calls the replay will issue, as far as known before it starts (records of call
    /// types: a few calls span several records), for a progress bar.
    pub fn total_calls(&self) -> u64 {
        match (self.s.plan, self.s.trace) {
            (Some(p), _) => p.stats().calls,
            (None, Some(t)) => t.syscall_records(),
            (None, None) => 0,
        }
    }

    /// Replay ([`replay_from`]), then compare the tree with the recorded end states.
    pub fn replay(
        self,
        progress: Arc<Progress>,
        log: Option<Box<dyn Write + Send>>,
    ) -> Result<Report> {
        let Prepared { s, notes } = self;
        let source = match (s.plan, s.trace) {
            (Some(p), _) => Source::Plan(p),
            (None, Some(t)) => Source::Trace(t),
            (None, None) => unreachable!("a session has a plan or a trace"),
        };
        let root_dir = s.opts.root.clone();
        let mut report = replay_from(source, s.opts, progress, log)?;
        report.init = notes;
        if s.final_check != FinalCheck::None && report.aborted.is_none() {
            let root = Root::new(&root_dir)
                .map_err(|source| Error::Root { path: root_dir.clone(), source })?;
            if let Some(t) = s.trace {
                for snap in t.snapshots().into_iter().filter(|x| x.end.is_some()) {
                    let contents = s.final_check == FinalCheck::Full;
                    report.final_state.push(final_state(t, &root, &snap, contents, s.describe)?);
                }
            }
            if let Some(why) = &s.snapshots_missing {
                report.warn(format!(
                    "the final tree was not compared with the recorded end state: the plan's \
                     trace stores it, but {why}"
                ));
            }
        }
        Ok(report)
    }
}

/// Restore snapshot `s`'s start state into its directory beneath the root, its notes (what
/// was withheld or could not be restored) added to `notes`.
fn restore_snapshot(
    trace: &TraceReader,
    root: &Root,
    s: &SnapshotInfo,
    special: bool,
    notes: &mut Vec<(String, String)>,
) -> Result<()> {
    let shown = String::from_utf8_lossy(&s.dir).into_owned();
    let dir = restore_dir(root, &s.dir).map_err(|e| Error::Context {
        what: format!("preparing {shown} in the replay root"),
        source: Box::new(e),
    })?;
    let ropts = ra_fsstate::RestoreOptions { special, ..Default::default() };
    let st =
        trace.restore_snapshot_with(s.index, dir.as_fd(), &ropts).map_err(|e| Error::Context {
            what: format!("restoring the recorded state of {shown}"),
            source: Box::new(Error::Trace(e)),
        })?;
    notes.push((format!("snapshot {}", s.index), format!("{shown}: restored {st}")));
    let under = |p: &[u8]| {
        let mut v = s.dir.clone();
        if !p.is_empty() {
            v.push(b'/');
            v.extend_from_slice(p);
        }
        String::from_utf8_lossy(&v).into_owned()
    };
    for w in &st.withheld {
        notes.push((
            "withheld".to_string(),
            format!("{}: {}; --allow-special restores it as recorded", under(&w.path), w.what),
        ));
    }
    if st.withheld_count > st.withheld.len() as u64 {
        notes.push((
            "withheld".to_string(),
            format!("{} more not listed", st.withheld_count - st.withheld.len() as u64),
        ));
    }
    for n in &st.not_restored {
        notes.push((
            "not restored".to_string(),
            format!(
                "{}: {}: {}",
                under(&n.path),
                n.what,
                std::io::Error::from_raw_os_error(n.errno)
            ),
        ));
    }
    if st.not_restored_count > st.not_restored.len() as u64 {
        notes.push((
            "not restored".to_string(),
            format!("{} more not listed", st.not_restored_count - st.not_restored.len() as u64),
        ));
    }
    Ok(())
}

/// The directory a snapshot restores into: made beneath the root (parents too), empty.
fn restore_dir(root: &Root, dir: &[u8]) -> Result<OwnedFd> {
    init::mkdirs(root, dir)?;
    root.open(dir, libc::O_RDONLY | libc::O_DIRECTORY, 0).map_err(|e| Error::Init {
        what: format!("open {}", String::from_utf8_lossy(dir)),
        source: std::io::Error::from_raw_os_error(e),
    })
}

/// (st_dev, st_ino) of the strict ancestors of `dir` beneath the root (and the root itself).
fn ancestors_dev_ino(root: &Root, dir: &[u8]) -> Vec<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut p = dir.to_vec();
    while let Some(i) = p.iter().rposition(|&c| c == b'/') {
        p.truncate(i);
        let q = if p.is_empty() { b"/".to_vec() } else { p.clone() };
        if let Ok(fd) = root.locate(&q, false) {
            if let Ok(m) = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
                out.push((m.dev(), m.ino()));
            }
        }
        if p.is_empty() {
            break;
        }
    }
    out
}

/// The recorded end state `s` against its directory in the root; `contents`: compare file
/// contents too. What the report holds: what was compared, the number of differences, the
/// first [`FINAL_DIFFERENCES_LISTED`] as `describe` writes them.
fn final_state(
    trace: &TraceReader,
    root: &Root,
    s: &SnapshotInfo,
    contents: bool,
    describe: fn(&Difference) -> String,
) -> Result<(String, u64, Vec<String>)> {
    let shown = String::from_utf8_lossy(&s.dir).into_owned();
    let what = format!("{shown} against its recorded end state");
    let dir = match root.open(&s.dir, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
        Ok(d) => d,
        Err(e) => {
            let why = std::io::Error::from_raw_os_error(e);
            return Ok((
                what,
                1,
                vec![format!("{shown} cannot be opened in the replay root: {why}")],
            ));
        }
    };
    let opts = ra_fsstate::DiffOptions { skip_contents: !contents, ..Default::default() };
    let mut n = 0u64;
    let mut first = Vec::new();
    let context = |e: ra_trace::Error| Error::Context {
        what: format!("comparing {shown} with its recorded end state"),
        source: Box::new(Error::Trace(e)),
    };
    for d in trace.diff_snapshot(s.index, ra_trace::Phase::End, dir, &opts).map_err(context)? {
        let d = d.map_err(|e| context(e.into()))?;
        n += 1;
        if first.len() < FINAL_DIFFERENCES_LISTED {
            first.push(describe(&d));
        }
    }
    Ok((what, n, first))
}
