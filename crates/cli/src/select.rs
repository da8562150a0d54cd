//! `reanimator select`, `split` and `merge`: traces cut and combined (docs/SELECT.md). Each
//! reads its inputs once per pass, event by event, and writes with [`TraceWriter`]: memory is
//! the reader's and the writer's bounded buffers, plus a few bytes per process of the trace.
//! `--where` is dump's language through dump's own parser ([`crate::dump::event_filter`]) and
//! records ([`FdEventRecord`]), with descriptors followed by [`FileIoTracker`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use ra_filter::Filter;
use ra_fsstate::ContentSource;
use ra_trace::fileio::{EventFds, FileIoTracker};
use ra_trace::snapshot::Phase;
use ra_trace::time::{parse_rfc3339, rfc3339, trace_start};
use ra_trace::{Event, TraceReader, TraceWriter, WriterConfig};

use crate::output::{ChainArgs, ReadKeyArgs};
use crate::partial::Partial;
use crate::records::{EventRecord, FdEventRecord};

/// The fact a selected trace says what it was selected from, and how (JSON).
pub const FACT_SELECTED: &str = "selected_from";
/// The fact a part of a split says which part of what it is (JSON).
pub const FACT_SPLIT: &str = "split_from";
/// The fact a merged trace lists its inputs in (JSON: host, trace, pid offset each).
pub const FACT_MERGED: &str = "merged_from";

/// The selection options `select`, `replay` and `compile` share.
#[derive(Args, Debug, Clone, Default)]
pub struct SelectionArgs {
    /// Only the calls matching this expression (the `dump --where` language: `path` is the
    /// file a call acts on, also for calls given a descriptor; `fd_path`, `call in %file`).
    #[arg(long = "where", short = 'w', value_name = "EXPR")]
    pub filter: Option<String>,
    /// Only the calls made in this time range, `A..B` (from A up to, not including, B; either
    /// side may be left out): durations from the trace's first call (`2s..5.5s`, `500ms..`,
    /// `..1m`; units ns, us, ms, s, m, h; a bare number is seconds), instants in RFC 3339
    /// (`2026-12-02T06:00:00Z`) or seconds since the epoch after `@` (`@1764655200.5`).
    #[arg(long, value_name = "A..B")]
    pub time: Option<String>,
    /// Only the calls of these processes and of the processes they created, as the trace's
    /// clone, fork and vfork calls show (comma-separated or repeated).
    #[arg(long, value_name = "PID", value_delimiter = ',')]
    pub pid: Vec<i32>,
    /// Only the calls of these threads and of the threads and processes they created.
    #[arg(long, value_name = "TID", value_delimiter = ',')]
    pub tid: Vec<i32>,
}

impl SelectionArgs {
    pub fn is_empty(&self) -> bool {
        self.filter.is_none() && self.time.is_none() && self.pid.is_empty() && self.tid.is_empty()
    }
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator select t.ds -o writes.ds --where 'call in {write, pwrite64} && path ~ \"/srv/**\"'\n  \
    reanimator select t.ds -o window.ds --time 2s..5.5s\n  \
    reanimator select t.ds -o make.ds --pid 4242\n  \
    reanimator replay window.ds --root /tmp/r --init\n\n\
OUT is a trace like any other (mode 0600), holding the selected calls with their unique_ids, \
the input's facts, and the fact `selected_from` saying what was selected from what (input, \
criteria, calls kept and left out). Snapshots: the start state is kept when no call before \
the first selected one was left out (else it is not the state the selection starts from: \
`replay --init` infers one), the end state only when no call was left out. Losses are kept \
when their time range meets the selection's (a loss without one is kept). An empty \
selection, an inverted time range, a pid or tid the trace has no call of, or an unreadable \
input: one line and exit status 2, and no OUT; stopped (Ctrl-C, SIGTERM, SIGHUP): one line, \
no OUT, exit status 128 + the signal's number. See docs/SELECT.md.")]
pub struct SelectArgs {
    #[command(flatten)]
    pub key: ReadKeyArgs,
    /// The trace to read.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// The trace to write (must not exist).
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: PathBuf,
    #[command(flatten)]
    pub sel: SelectionArgs,
    #[command(flatten)]
    pub chain: ChainArgs,
    /// No progress bar and no summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator split t.ds --by time=60s -o parts/\n  \
    reanimator split t.ds --by size=1G -o parts/\n  \
    reanimator split t.ds --by pid -o parts/\n\n\
Parts: --by time=D: DIR/time-NNNNNN.ds, NNNNNN the D-long window (from the trace's first call) \
its first call returned in; --by size=S: DIR/part-NNNNNN.ds, each about S of calls and data; \
both cut the trace in its own order (a part is a run of consecutive unique_ids, a call \
belongs to the part it was recorded in), so that the parts together hold every call once. \
--by pid: DIR/pid-PID.ds, each process's calls (its threads' included, not its children's). \
Every part keeps the input's facts and says in `split_from` which part of what it is; the \
start snapshot goes to the first part (by time or size), the end snapshot to the last; \
losses go to the part their time falls in (the first without a time). DIR is created (0700) \
and must not hold parts already. `stats` of the parts adds up to the input's. Each part is \
written as DIR/.NAME.partial and renamed when finished; stopped (Ctrl-C, SIGTERM, SIGHUP) or \
failed, split keeps no part (nor DIR, if it made it), says so in one line and exits non-zero \
(128 + the signal's number when stopped).")]
pub struct SplitArgs {
    #[command(flatten)]
    pub key: ReadKeyArgs,
    /// The trace to read.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// How to cut: `pid`, `time=DURATION` (`60s`, `500ms`, `1h`) or `size=BYTES` (`1G`,
    /// `256M`).
    #[arg(long, value_name = "pid|time=D|size=S", value_parser = parse_by)]
    pub by: By,
    /// The directory of the parts.
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub chain: ChainArgs,
    /// No summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator merge host1/run.ds host2/run.ds -o all.ds\n  \
    reanimator stats all.ds --by pid\n\n\
Calls are interleaved by the time they were made (each input's own order kept) and numbered \
afresh. Process and thread ids of the Nth input (from 0) are offset by N * 4194304 (Linux's \
largest pid + 1) wherever the trace holds one (pid, tid, ppid, clone's result, kill's \
argument, ...), so that no two inputs' ids collide; the fact `merged_from` lists each input \
with its host (its `hostname` fact), trace file, pid offset and calls, which is how a call's \
host is known: by its pid's range. Facts all inputs agree on are kept as they are; every \
input's facts are also kept as `input.N.KEY`. Snapshots are left out (each input's states \
are of its own machine), and said so. Losses are kept, their reason prefixed by the host. \
Stopped (Ctrl-C, SIGTERM, SIGHUP): one line, no OUT, exit status 128 + the signal's number.")]
pub struct MergeArgs {
    #[command(flatten)]
    pub key: ReadKeyArgs,
    /// The traces to join (two or more).
    #[arg(value_name = "TRACE", required = true, num_args = 2..)]
    pub inputs: Vec<PathBuf>,
    /// The trace to write (must not exist).
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: PathBuf,
    #[command(flatten)]
    pub chain: ChainArgs,
    /// No summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

/// How `split` cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    Pid,
    Time(i64),
    Size(u64),
}

fn parse_by(s: &str) -> Result<By, String> {
    if s == "pid" {
        return Ok(By::Pid);
    }
    if let Some(d) = s.strip_prefix("time=") {
        let ns = parse_duration_ns(d).ok_or_else(|| format!("`{d}` is not a duration (60s)"))?;
        if ns <= 0 {
            return Err("time=D: the duration must be positive".into());
        }
        return Ok(By::Time(ns));
    }
    if let Some(z) = s.strip_prefix("size=") {
        let b = crate::record::parse_size(z)?;
        if b == 0 {
            return Err("size=S: the size must be positive".into());
        }
        return Ok(By::Size(b));
    }
    Err(format!("`{s}`: use pid, time=DURATION (60s) or size=BYTES (1G)"))
}

/// `1.5s`, `200ms`, `3m`, `10` (seconds) in ns; `None` if not a duration.
pub fn parse_duration_ns(s: &str) -> Option<i64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() || num.starts_with('.') && num.len() == 1 {
        return None;
    }
    let mul: f64 = match unit {
        "" | "s" => 1e9,
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return None,
    };
    let v: f64 = num.parse().ok()?;
    let ns = v * mul;
    (ns.is_finite() && ns < 9e18).then_some(ns.round() as i64)
}

/// One end of `--time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    /// ns from the trace's start.
    Rel(i64),
    /// ns since the epoch.
    Abs(i64),
}

fn parse_bound(s: &str) -> Result<Option<Bound>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    if let Some(e) = s.strip_prefix('@') {
        let secs: f64 = e.parse().map_err(|_| format!("`{s}`: seconds since the epoch after @"))?;
        return Ok(Some(Bound::Abs((secs * 1e9).round() as i64)));
    }
    if s.contains('T') {
        return parse_rfc3339(s)
            .map(|ns| Some(Bound::Abs(ns)))
            .ok_or_else(|| format!("`{s}` is not an RFC 3339 instant (2026-12-02T06:00:00Z)"));
    }
    parse_duration_ns(s)
        .map(|ns| Some(Bound::Rel(ns)))
        .ok_or_else(|| format!("`{s}` is not a duration (2s, 500ms) or an instant"))
}

/// `A..B` as two optional bounds.
fn parse_range(s: &str) -> Result<(Option<Bound>, Option<Bound>)> {
    let Some((a, b)) = s.split_once("..") else {
        bail!("--time {s}: give a range A..B (e.g. 2s..5.5s; either side may be left out)")
    };
    let lo = parse_bound(a).map_err(|e| anyhow::anyhow!("--time: {e}"))?;
    let hi = parse_bound(b).map_err(|e| anyhow::anyhow!("--time: {e}"))?;
    Ok((lo, hi))
}

/// A selection made concrete for one trace: every criterion resolved.
pub struct Selection {
    filter: Option<Filter>,
    /// [lo, hi) in ns since the epoch.
    lo: Option<i64>,
    hi: Option<i64>,
    /// Processes (with their descendants) and threads (with theirs) selected.
    pids: Option<HashSet<i32>>,
    tids: Option<HashSet<i32>>,
    asked_pids: Vec<i32>,
    asked_tids: Vec<i32>,
    /// What the criteria were, for the fact.
    pub describe: serde_json::Value,
}

impl Selection {
    /// Resolve `a` against `tr` (its start, its process tree); reads the trace's clone calls.
    pub fn resolve(a: &SelectionArgs, tr: &TraceReader) -> Result<Selection> {
        let filter =
            a.filter.as_deref().map(|src| crate::dump::event_filter(src, tr)).transpose()?;
        let start = first_call_ns(tr)?;
        let (mut lo, mut hi) = (None, None);
        if let Some(t) = &a.time {
            let (l, h) = parse_range(t)?;
            let abs = |b: Bound| -> Result<i64> {
                match b {
                    Bound::Abs(ns) => Ok(ns),
                    Bound::Rel(d) => match start {
                        Some(s) => Ok(s.saturating_add(d)),
                        None => bail!("--time {t}: the trace holds no time to count from"),
                    },
                }
            };
            lo = l.map(abs).transpose()?;
            hi = h.map(abs).transpose()?;
            if let (Some(l), Some(h)) = (lo, hi) {
                if h <= l {
                    bail!("--time {t}: the range is empty or inverted (its end is not after its start)");
                }
            }
        }
        let (pids, tids) = if a.pid.is_empty() && a.tid.is_empty() {
            (None, None)
        } else {
            let edges = clone_edges(tr)?;
            let close = |seed: &[i32], by_tid: bool| -> HashSet<i32> {
                let mut s: HashSet<i32> = seed.iter().copied().collect();
                loop {
                    let n = s.len();
                    for &(cp, ct, child) in &edges {
                        if s.contains(if by_tid { &ct } else { &cp }) {
                            s.insert(child);
                        }
                    }
                    if s.len() == n {
                        return s;
                    }
                }
            };
            (
                (!a.pid.is_empty()).then(|| close(&a.pid, false)),
                (!a.tid.is_empty()).then(|| close(&a.tid, true)),
            )
        };
        let describe = serde_json::json!({
            "where": a.filter,
            "time": a.time,
            "time_from_ns": lo,
            "time_to_ns": hi,
            "from": lo.map(rfc3339),
            "to": hi.map(rfc3339),
            "pids": a.pid,
            "tids": a.tid,
            "with_descendants": !(a.pid.is_empty() && a.tid.is_empty()),
        });
        Ok(Selection {
            filter,
            lo,
            hi,
            pids,
            tids,
            asked_pids: a.pid.clone(),
            asked_tids: a.tid.clone(),
            describe,
        })
    }

    /// Whether `ev` meets the time and process criteria (all but `--where`).
    fn keeps_in_window(&self, ev: &Event) -> bool {
        if self.lo.is_some() || self.hi.is_some() {
            let Some(t) = ev.time_called.or(ev.time_returned) else { return false };
            if self.lo.is_some_and(|l| t < l) || self.hi.is_some_and(|h| t >= h) {
                return false;
            }
        }
        if self.pids.is_some() || self.tids.is_some() {
            let pid = ev.pid.or(ev.tid);
            let by_pid = self.pids.as_ref().is_some_and(|s| pid.is_some_and(|p| s.contains(&p)));
            let by_tid = self
                .tids
                .as_ref()
                .is_some_and(|s| ev.tid.or(ev.pid).is_some_and(|t| s.contains(&t)));
            if !(by_pid || by_tid) {
                return false;
            }
        }
        true
    }

    /// Whether `ev` is selected (`fds`: what its descriptors refer to, for `--where`).
    pub fn keeps(&self, ev: &Event, fds: Option<&EventFds>) -> bool {
        if !self.keeps_in_window(ev) {
            return false;
        }
        match &self.filter {
            Some(f) => f.matches(&FdEventRecord { ev: EventRecord(ev), fds }),
            None => true,
        }
    }

    /// Whether a loss with this time range may concern the selected calls.
    fn keeps_loss(&self, range: Option<(i64, i64)>) -> bool {
        match range {
            Some((a, z)) => !(self.lo.is_some_and(|l| z < l) || self.hi.is_some_and(|h| a >= h)),
            None => true,
        }
    }
}

/// (creator pid, creator tid, child) for every successful clone, fork and vfork of `tr`.
fn clone_edges(tr: &TraceReader) -> Result<Vec<(i32, i32, i32)>> {
    let names: Vec<&str> = ra_syscalls::REGISTRY
        .iter()
        .filter(|d| d.replay.handler() == Some(ra_syscalls::Handler::Clone))
        .map(|d| d.trace_name)
        .collect();
    let mut edges = Vec::new();
    for ev in tr.events(Some(&names)) {
        let ev = ev.context("reading the trace's process tree")?;
        let child = ev.ret.unwrap_or(0);
        if ev.failed() || child <= 0 || child > i64::from(i32::MAX) {
            continue;
        }
        let pid = ev.pid.or(ev.tid).unwrap_or(0);
        edges.push((pid, ev.tid.unwrap_or(pid), child as i32));
    }
    Ok(edges)
}

/// Open `path` as a trace, with the note every reader gives when it is not whole.
fn open(path: &Path) -> Result<TraceReader> {
    let tr =
        TraceReader::open(path).with_context(|| format!("cannot read trace {}", path.display()))?;
    crate::note_incomplete(path, tr.incomplete(), "its calls up to there are read");
    let aggregate = tr
        .dataseries()
        .headers()
        .filter_map(|h| h.ok())
        .any(|h| h.type_name == ra_trace::fsop::FS_AGGREGATE_TYPE);
    if aggregate {
        bail!("{}: an aggregate trace (`fs --aggregate`) holds no calls to select", path.display());
    }
    Ok(tr)
}

/// When the trace's first call was made (ns since the epoch): what `--time` and `split --by
/// time` count from. Synthetic records are not calls; a trace without times: its start facts.
fn first_call_ns(tr: &TraceReader) -> Result<Option<i64>> {
    let below = synthetic_ids(tr);
    for ev in tr.events(None) {
        let ev = ev.context("reading the trace's first call")?;
        if ev.unique_id >= below {
            if let Some(t) = ev.time_called {
                return Ok(Some(t));
            }
        }
    }
    trace_start(tr).context("reading the trace's start")
}

/// The ids below which a trace's records are synthetic: the descriptors its program started
/// with (the `synthetic_ids` fact).
fn synthetic_ids(tr: &TraceReader) -> u64 {
    if tr.kind() == ra_trace::TraceKind::ReAnimator {
        return 0;
    }
    tr.info_value("synthetic_ids")
        .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse().ok())
        .unwrap_or(0)
}

fn is_fs_trace(tr: &TraceReader) -> bool {
    tr.call_types().any(|(l, _)| l.ty.name() == ra_trace::fsop::FS_OP_TYPE)
}

/// Write one event keeping its id.
fn put(w: &mut TraceWriter<ra_trace::TraceOutput>, ev: &Event) -> ra_trace::Result<()> {
    if ra_trace::fsop::is_fs_event(ev) {
        w.append_fs_preserving(&ra_anonymize::fs_record(ev), ev.unique_id)
    } else {
        w.append_preserving(ev)
    }
}

/// Write one event numbered afresh.
fn put_new(w: &mut TraceWriter<ra_trace::TraceOutput>, ev: &Event) -> ra_trace::Result<()> {
    if ra_trace::fsop::is_fs_event(ev) {
        w.append_fs(&ra_anonymize::fs_record(ev)).map(drop)
    } else {
        w.append(ev).map(drop)
    }
}

fn is_snapshot_fact(k: &str) -> bool {
    k.starts_with("snapshot.")
}

/// Whether fact `k` describes phase `p` of a snapshot (`snapshot.N.start.*`).
fn snapshot_phase_of(k: &str) -> Option<Phase> {
    let rest = k.strip_prefix("snapshot.")?;
    let (_, rest) = rest.split_once('.')?;
    match rest.split_once('.')?.0 {
        "start" => Some(Phase::Start),
        "end" => Some(Phase::End),
        _ => None,
    }
}

/// Copy the snapshot phases `phases` of `tr` (their entries, the facts that describe them,
/// the contents they name) into `w`.
fn copy_snapshots(
    tr: &TraceReader,
    w: &mut TraceWriter<ra_trace::TraceOutput>,
    phases: &[Phase],
) -> Result<u64> {
    let snaps = tr.snapshots();
    let mut entries = 0u64;
    let mut any = false;
    for s in &snaps {
        for &p in phases {
            if s.phase(p).is_none() {
                continue;
            }
            any = true;
            for e in tr.snapshot_entries(s.index, p)? {
                crate::interrupt::check()?;
                w.add_snapshot_entry(s.index, p.code(), &e?)?;
                entries += 1;
            }
        }
    }
    for (k, v) in tr.info() {
        let ok = match snapshot_phase_of(k) {
            Some(p) => phases.contains(&p),
            None => is_snapshot_fact(k) && any,
        };
        if ok {
            w.add_info(k, v)?;
        }
    }
    if any && !tr.blob_offsets().is_empty() {
        let mut err = None;
        let r = tr.content().for_each_chunk(&mut |d, off, chunk| {
            if let Err(e) =
                crate::interrupt::check().and_then(|()| Ok(w.add_blob_chunk(d, off, chunk)?))
            {
                err = Some(e);
                return Err(ra_fsstate::Error::Source { source: "trace write".into() });
            }
            Ok(())
        });
        if let Some(e) = err {
            return Err(e);
        }
        r?;
    }
    Ok(entries)
}

/// The input's facts other than its snapshots' (those go with the snapshots they describe).
fn plain_facts(tr: &TraceReader) -> Vec<(&str, &[u8])> {
    tr.info()
        .iter()
        .filter(|(k, _)| !is_snapshot_fact(k))
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect()
}

fn writer_config(tr: &TraceReader, chain: &ChainArgs) -> Result<WriterConfig> {
    Ok(WriterConfig {
        ds: chain.writer_options()?,
        fs_ops: is_fs_trace(tr),
        ..WriterConfig::default()
    })
}

/// Calls kept and left out, per registry class.
#[derive(Default, Debug, Clone)]
pub struct Tally {
    pub kept: u64,
    pub left_out: u64,
    pub left_out_by_class: BTreeMap<String, u64>,
}

impl Tally {
    fn leave_out(&mut self, ev: &Event) {
        self.left_out += 1;
        *self.left_out_by_class.entry(class_name(ev)).or_default() += 1;
    }

    /// `12 file, 3 descriptor` (or `none`).
    pub fn classes(&self) -> String {
        if self.left_out_by_class.is_empty() {
            return "none".into();
        }
        self.left_out_by_class
            .iter()
            .map(|(c, n)| format!("{n} {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn class_name(ev: &Event) -> String {
    match ev.def {
        Some(d) => format!("{:?}", d.class).to_lowercase(),
        None if ra_trace::fsop::is_fs_event(ev) => "fs".into(),
        None => "other".into(),
    }
}

/// Select from `tr` into `out` (a new file): the summary of what was kept.
pub fn select_into(
    tr: &TraceReader,
    input: &Path,
    sel: &Selection,
    out: &Path,
    cfg: WriterConfig,
    progress: Option<&crate::progress::Progress>,
) -> Result<Tally> {
    let synthetic = synthetic_ids(tr);
    // `synthetic_ids` and `cwd` are written at the end: a selection starting mid-trace has
    // synthetic opens of its own, and the cwd its first call ran in.
    let facts: Vec<(&str, &[u8])> =
        plain_facts(tr).into_iter().filter(|(k, _)| *k != "synthetic_ids" && *k != "cwd").collect();
    let mut cwd: Option<Vec<u8>> = tr.info_value("cwd").map(<[u8]>::to_vec);
    let mut w = TraceWriter::create(out, &facts, cfg)?;
    // The start state is the selection's when no call before its first was left out.
    let mut left_out_first = false;
    // Descriptors are followed always: a selection starting mid-trace begins with the
    // descriptors open at its start (synthetic opens, as the recorders write for `-p`).
    let mut tracker = FileIoTracker::for_trace(tr);
    let mut ops = Vec::new();
    let mut t = Tally::default();
    let (mut seen_pids, mut seen_tids) = (HashSet::new(), HashSet::new());
    // Processes that exited before the selection's first call (no descriptors to open).
    let mut exited: HashSet<i32> = HashSet::new();
    let mut window = WindowStart::default();
    for (i, ev) in tr.events(None).enumerate() {
        let ev = ev.with_context(|| format!("reading {}", input.display()))?;
        crate::interrupt::check()?;
        if let Some(p) = progress {
            if i % 4096 == 0 {
                p.set(i as u64);
            }
        }
        if !sel.asked_pids.is_empty() {
            seen_pids.extend(ev.pid);
        }
        if !sel.asked_tids.is_empty() {
            seen_tids.extend(ev.tid);
        }
        let mut fds = tracker.event_fds(&ev);
        // The time and process criteria are known before the call is applied; the window's
        // start state must be taken before it is (a `--where` decides after).
        let pre = ev.unique_id >= synthetic && sel.keeps_in_window(&ev);
        let pending = (pre && t.kept == 0 && left_out_first)
            .then(|| synthetic_window(&tracker, sel, &ev, &exited))
            .transpose()?;
        let start_cwd = ev.pid.and_then(|p| tracker.cwd(p)).map(<[u8]>::to_vec);
        if t.kept == 0 {
            if let Some(pid) = ev.pid {
                // exit_group ends the process, exit the thread (the process when it is its
                // leader's).
                let exit =
                    ev.def.filter(|d| d.replay.handler() == Some(ra_syscalls::Handler::Exit));
                if exit.is_some_and(|d| d.ends_process || ev.tid == Some(pid)) {
                    exited.insert(pid);
                } else {
                    exited.remove(&pid);
                }
            }
        }
        tracker.apply(&ev, &mut |_, _| true, &mut ops);
        ops.clear();
        fds.ret = tracker.returned_fd(&ev);
        let keep = pre && sel.keeps(&ev, Some(&fds));
        if let (true, Some(evs)) = (keep, pending) {
            // The selection starts mid-trace: what its processes had open then, first.
            window = write_window(evs, ev.unique_id, synthetic, &mut w)?;
            if start_cwd.is_some() {
                cwd = start_cwd;
            }
        }
        if ev.unique_id < synthetic {
            // A descriptor the traced program started with (TRACE_FORMAT.md): state, not a
            // call; every selection keeps it.
            put(&mut w, &ev)?;
        } else if keep {
            if window.shift > 0 {
                let mut e = ev.clone();
                e.unique_id += window.shift;
                put(&mut w, &e)?;
            } else {
                put(&mut w, &ev)?;
            }
            t.kept += 1;
        } else {
            left_out_first |= t.kept == 0;
            t.leave_out(&ev);
        }
    }
    for p in &sel.asked_pids {
        if !seen_pids.contains(p) {
            bail!("--pid {p}: {} holds no call of process {p}", input.display());
        }
    }
    for p in &sel.asked_tids {
        if !seen_tids.contains(p) {
            bail!("--tid {p}: {} holds no call of thread {p}", input.display());
        }
    }
    if t.kept == 0 {
        bail!(
            "the selection is empty: none of the {} calls of {} matches it",
            t.left_out,
            input.display()
        );
    }
    let start_kept = !left_out_first;
    let end_kept = t.left_out == 0;
    let phases: &[Phase] = match (start_kept, end_kept) {
        (true, true) => &[Phase::Start, Phase::End],
        (true, false) => &[Phase::Start],
        (false, _) => &[],
    };
    copy_snapshots(tr, &mut w, phases)?;
    let mut losses_left = 0u64;
    for l in tr.lost() {
        let range = l.time_first.zip(l.time_last);
        if sel.keeps_loss(range) {
            w.add_lost(&l.syscall, l.count, l.bytes, range, &l.reason)?;
        } else {
            losses_left += 1;
        }
    }
    let has_snap = !tr.snapshots().is_empty();
    let fact = serde_json::json!({
        "input": input.display().to_string(),
        "input_serial": tr.info_value("serial").map(|v| String::from_utf8_lossy(v).into_owned()),
        "criteria": sel.describe,
        "calls_kept": t.kept,
        "calls_left_out": t.left_out,
        "left_out_by_class": t.left_out_by_class,
        "start_snapshot": if !has_snap { "none" } else if start_kept { "kept" } else {
            "left out: calls before the selection's first were left out" },
        "end_snapshot": if !has_snap { "none" } else if end_kept { "kept" } else {
            "left out: calls were left out" },
        "losses_left_out": losses_left,
        "losses_kept": "those whose time range meets the selection's, and those without one",
        "window_start": {
            "synthetic_records": window.records,
            "processes": window.processes,
            "id_shift": window.shift,
        },
    });
    w.add_info(FACT_SELECTED, fact.to_string().as_bytes())?;
    if synthetic > 0 || window.ids > synthetic {
        w.add_info("synthetic_ids", window.ids.max(synthetic).to_string().as_bytes())?;
    } else if let Some(v) = tr.info_value("synthetic_ids") {
        w.add_info("synthetic_ids", v)?;
    }
    if let Some(c) = &cwd {
        w.add_info("cwd", c)?;
    }
    w.finish()?;
    Ok(t)
}

/// The synthetic records written at a selection's start ([`synthetic_window`]).
#[derive(Default, Debug, Clone, Copy)]
struct WindowStart {
    /// The ids below this are synthetic (the input's and the window's).
    ids: u64,
    /// How many records: opens, and seeks to the files' positions.
    records: u64,
    /// Added to the kept calls' ids when the ids left out before the first kept call were
    /// too few for the window's synthetic records.
    shift: u64,
    processes: u64,
}

/// Write, before `first` (the selection's first call, which starts after calls left out),
/// the descriptors its processes had open then as the recorders' synthetic opens (`openat`
/// of the path with the open's flags, as `-p` attaches write them, TRACE_FORMAT.md), each
/// file's position as a synthetic `lseek` after its open. Their ids follow the input's
/// synthetic ones, in the ids the left-out calls had (or the kept calls' ids are shifted).
fn synthetic_window(
    tracker: &FileIoTracker,
    sel: &Selection,
    first: &Event,
    exited: &HashSet<i32>,
) -> Result<Vec<Event>> {
    let (Some(openat), Some(lseek)) = (ra_syscalls::lookup("openat"), ra_syscalls::lookup("lseek"))
    else {
        bail!("the syscall registry has no openat or lseek");
    };
    let mut pids: Vec<i32> = tracker.processes();
    pids.extend(sel.asked_pids.iter().chain(&sel.asked_tids));
    pids.extend(first.pid);
    pids.sort_unstable();
    pids.dedup();
    let selected = |p: i32| match (&sel.pids, &sel.tids) {
        (None, None) => true,
        (a, b) => {
            a.as_ref().is_some_and(|s| s.contains(&p)) || b.as_ref().is_some_and(|s| s.contains(&p))
        }
    };
    let time = sel.lo.or(first.time_called).or(first.time_returned);
    let mut evs = Vec::new();
    for pid in pids.into_iter().filter(|&p| selected(p) && !exited.contains(&p)) {
        for d in tracker.open_descriptors(pid) {
            let mut ev = Event::new(openat);
            ev.time_called = time;
            ev.time_returned = time;
            ev.pid = Some(pid);
            ev.tid = Some(pid);
            ev.ret = Some(i64::from(d.fd));
            ev.errno = Some(0);
            let mut path = d.name.to_vec();
            path.push(0);
            ev.set_arg("dirfd", ra_trace::ArgValue::Int(-100));
            ev.set_arg("pathname", ra_trace::ArgValue::data(path));
            ev.set_arg("flags", ra_trace::ArgValue::Int(i64::from(d.flags)));
            ev.set_arg("mode", ra_trace::ArgValue::Int(0));
            evs.push(ev);
            if let Some(pos) = d.pos.filter(|&p| p > 0 && d.flags & libc::O_APPEND == 0) {
                let mut ev = Event::new(lseek);
                ev.time_called = time;
                ev.time_returned = time;
                ev.pid = Some(pid);
                ev.tid = Some(pid);
                ev.ret = Some(pos as i64);
                ev.errno = Some(0);
                ev.set_arg("fd", ra_trace::ArgValue::Int(i64::from(d.fd)));
                ev.set_arg("offset", ra_trace::ArgValue::Int(pos as i64));
                ev.set_arg("whence", ra_trace::ArgValue::Int(i64::from(libc::SEEK_SET)));
                evs.push(ev);
            }
        }
    }
    Ok(evs)
}

/// Write the window's synthetic records before the call `first_id`, their ids after the
/// input's `synthetic` ones.
fn write_window(
    evs: Vec<Event>,
    first_id: u64,
    synthetic: u64,
    w: &mut TraceWriter<ra_trace::TraceOutput>,
) -> Result<WindowStart> {
    let processes = evs.iter().filter_map(|e| e.pid).collect::<HashSet<_>>().len() as u64;
    let n = evs.len() as u64;
    let room = first_id.saturating_sub(synthetic);
    let shift = n.saturating_sub(room);
    for (i, mut ev) in evs.into_iter().enumerate() {
        ev.unique_id = synthetic + i as u64;
        w.append_preserving(&ev)?;
    }
    Ok(WindowStart { ids: synthetic + n, records: n, shift, processes })
}

/// What a stopped `select` or `merge` says.
fn one_output_stopped(what: &str, out: &Path, signal: &str) -> String {
    format!("{what} interrupted by {signal}: {} not written (nothing of it left)", out.display())
}

pub fn run_select(a: SelectArgs) -> Result<ExitCode> {
    refuse_same(&a.input, &a.output)?;
    let out = a.output.clone();
    crate::interrupt::install(move |sig| one_output_stopped("select", &out, sig))?;
    crate::interrupt::outcome(select(a))
}

fn select(a: SelectArgs) -> Result<ExitCode> {
    let tr = open(&a.input)?;
    let sel = Selection::resolve(&a.sel, &tr)?;
    let cfg = writer_config(&tr, &a.chain)?;
    let tmp = Partial::create(&a.output, "-o")?;
    let bar =
        (!a.quiet).then(|| crate::progress::Progress::calls("selecting", tr.syscall_records()));
    let t = select_into(&tr, &a.input, &sel, tmp.path(), cfg, bar.as_ref())?;
    if let Some(b) = &bar {
        b.finish();
    }
    crate::interrupt::check()?;
    tmp.persist()?;
    crate::interrupt::commit();
    if !a.quiet {
        eprintln!(
            "reanimator: selected {} of {} calls into {}; left out: {}",
            t.kept,
            t.kept + t.left_out,
            a.output.display(),
            t.classes()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn refuse_same(input: &Path, output: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(i), Ok(o)) = (std::fs::metadata(input), std::fs::metadata(output)) {
        if i.dev() == o.dev() && i.ino() == o.ino() {
            bail!("-o {} is the input: write to another file", output.display());
        }
    }
    if output.exists() {
        bail!("{} exists: give a new file", output.display());
    }
    Ok(())
}

/// A part being written by `split`.
struct Part {
    w: TraceWriter<ra_trace::TraceOutput>,
    tmp: Partial,
    name: String,
    calls: u64,
    first_id: u64,
    last_id: u64,
    first_ns: Option<i64>,
    last_ns: Option<i64>,
}

/// Approximately what a call costs a part: its data and a record's fields.
fn event_bytes(ev: &Event) -> u64 {
    let data: usize = ev.args.iter().filter_map(|a| a.as_data()).map(<[u8]>::len).sum();
    let extra: usize = ev
        .extra
        .iter()
        .map(|(_, v)| match v {
            ra_trace::ExtraValue::Bytes(b) => b.len(),
            _ => 8,
        })
        .sum();
    (data + extra + 96) as u64
}

/// Writers `split --by pid` holds open at once; the rest wait for another pass.
const PID_WRITERS: usize = 32;

/// Whether `name` is the name of a part `split` writes.
fn is_part_name(name: &std::ffi::OsStr) -> bool {
    let n = name.to_string_lossy();
    n.ends_with(".ds")
        && (n.starts_with("part-") || n.starts_with("time-") || n.starts_with("pid-"))
}

/// The parts in `dir`.
fn parts_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if is_part_name(&e.file_name()) {
            v.push(e.path());
        }
    }
    Ok(v)
}

/// Remove the parts in `dir`, and `dir` if this run made it and it is left empty: how many
/// parts, and whether `dir` went too; or what could not be removed.
fn remove_parts(dir: &Path, made_dir: bool) -> std::result::Result<(usize, bool), String> {
    let mut removed = 0;
    let mut left = Vec::new();
    match parts_in(dir) {
        Ok(parts) => {
            for p in parts {
                match std::fs::remove_file(&p) {
                    Ok(()) => removed += 1,
                    Err(e) => left.push(format!("{}: {e}", p.display())),
                }
            }
        }
        Err(e) => left.push(format!("cannot read {}: {e}", dir.display())),
    }
    if !left.is_empty() {
        return Err(left.join("; "));
    }
    // (Not empty: something else was put there meanwhile, and stays.)
    Ok((removed, made_dir && std::fs::remove_dir(dir).is_ok()))
}

/// What a stopped split does: the parts it finished are removed too (they would not add up
/// to the trace, and DIR must hold no parts to split again), and DIR if it made it.
fn split_stopped(dir: &Path, made_dir: bool, signal: &str) -> String {
    match remove_parts(dir, made_dir) {
        Ok((n, gone)) => format!(
            "split interrupted by {signal}: no part kept (the {n} finished removed, and the \
             ones being written); {}",
            if gone {
                format!("{}, which it had made, removed", dir.display())
            } else {
                format!("{} holds no part", dir.display())
            }
        ),
        Err(left) => format!(
            "split interrupted by {signal}: parts removed but for {left} (remove them before \
             splitting again)"
        ),
    }
}

pub fn run_split(a: SplitArgs) -> Result<ExitCode> {
    let tr = open(&a.input)?;
    let made_dir = !a.output.exists();
    ra_fsstate::private::create_dir_all(&a.output)
        .with_context(|| format!("cannot create {}", a.output.display()))?;
    let exists = !parts_in(&a.output)
        .with_context(|| format!("cannot read {}", a.output.display()))?
        .is_empty();
    if exists {
        bail!("{} holds parts already: split into an empty directory", a.output.display());
    }
    let dir = a.output.clone();
    crate::interrupt::install(move |sig| split_stopped(&dir, made_dir, sig))?;
    let r = crate::interrupt::outcome(split(&tr, &a));
    if let Err(e) = &r {
        if e.downcast_ref::<crate::interrupt::Interrupted>().is_none() {
            // Another error: no part kept either.
            if let Err(left) = remove_parts(&a.output, made_dir) {
                eprintln!("reanimator: warning: not removed after the error below: {left}");
            }
        }
    }
    r
}

fn split(tr: &TraceReader, a: &SplitArgs) -> Result<ExitCode> {
    let start = first_call_ns(tr)?;
    let base_cfg = writer_config(tr, &a.chain)?;
    let facts = plain_facts(tr);
    let open_part = |name: String, cfg: WriterConfig| -> Result<Part> {
        let dest = a.output.join(&name);
        let tmp = Partial::create(&dest, "-o")?;
        let w = TraceWriter::create(tmp.path(), &facts, cfg)?;
        Ok(Part { w, tmp, name, calls: 0, first_id: 0, last_id: 0, first_ns: None, last_ns: None })
    };
    let by_name = match a.by {
        By::Pid => "pid".to_string(),
        By::Time(ns) => format!("time={}s", ns as f64 / 1e9),
        By::Size(b) => format!("size={b}"),
    };
    // Parts finished (each renamed into place as it is).
    let mut done = 0usize;
    let mut total = 0u64;
    match a.by {
        By::Time(_) | By::Size(_) => {
            let mut cur: Option<(Part, u64)> = None;
            let mut key = 0u64;
            let mut bytes = 0u64;
            for ev in tr.events(None) {
                let ev = ev.with_context(|| format!("reading {}", a.input.display()))?;
                crate::interrupt::check()?;
                total += 1;
                let next = match a.by {
                    By::Time(d) => {
                        let t = ev.time_returned.or(ev.time_called).unwrap_or(0);
                        let k = (t.saturating_sub(start.unwrap_or(t)).max(0) / d) as u64;
                        k.max(key)
                    }
                    _ => {
                        let b = event_bytes(&ev);
                        if cur.is_some()
                            && bytes + b
                                > match a.by {
                                    By::Size(s) => s,
                                    _ => 0,
                                }
                        {
                            bytes = 0;
                            key + 1
                        } else {
                            key
                        }
                    }
                };
                if let By::Size(_) = a.by {
                    bytes += event_bytes(&ev);
                }
                if cur.as_ref().is_none_or(|(_, k)| *k != next) {
                    if let Some((p, _)) = cur.take() {
                        finish_part(tr, p, a, &by_name, done == 0, false)?;
                        done += 1;
                    }
                    let first = done == 0;
                    let name = match a.by {
                        By::Time(_) => format!("time-{next:06}.ds"),
                        _ => format!("part-{next:06}.ds"),
                    };
                    let mut p = open_part(name, base_cfg.clone())?;
                    if first {
                        copy_snapshots(tr, &mut p.w, &[Phase::Start])?;
                    }
                    cur = Some((p, next));
                }
                key = next;
                let (p, _) = cur.as_mut().expect("opened");
                note(p, &ev);
                put(&mut p.w, &ev)?;
            }
            if let Some((p, _)) = cur.take() {
                finish_part(tr, p, a, &by_name, done == 0, true)?;
                done += 1;
            }
        }
        By::Pid => {
            let mut finished: HashSet<i32> = HashSet::new();
            let small = WriterConfig {
                extent_target_bytes: 256 << 10,
                buffer_budget_bytes: 1 << 20,
                ..base_cfg.clone()
            };
            loop {
                let mut open: HashMap<i32, Part> = HashMap::new();
                let mut more = false;
                let mut count = 0u64;
                for ev in tr.events(None) {
                    let ev = ev.with_context(|| format!("reading {}", a.input.display()))?;
                    crate::interrupt::check()?;
                    count += 1;
                    let pid = ev.pid.or(ev.tid).unwrap_or(0);
                    if finished.contains(&pid) {
                        continue;
                    }
                    if !open.contains_key(&pid) {
                        if open.len() >= PID_WRITERS {
                            more = true;
                            continue;
                        }
                        open.insert(pid, open_part(format!("pid-{pid}.ds"), small.clone())?);
                    }
                    let p = open.get_mut(&pid).expect("opened");
                    note(p, &ev);
                    put(&mut p.w, &ev)?;
                }
                total = count;
                let mut pids: Vec<i32> = open.keys().copied().collect();
                pids.sort();
                for pid in pids {
                    finished.insert(pid);
                    let p = open.remove(&pid).expect("listed");
                    finish_part(tr, p, a, &by_name, false, false)?;
                    done += 1;
                }
                if !more {
                    break;
                }
            }
        }
    }
    if total == 0 {
        bail!("{} holds no calls to split", a.input.display());
    }
    crate::interrupt::commit();
    if !a.quiet {
        eprintln!("reanimator: split {total} calls into {done} parts in {}", a.output.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn note(p: &mut Part, ev: &Event) {
    if p.calls == 0 {
        p.first_id = ev.unique_id;
    }
    p.calls += 1;
    p.last_id = ev.unique_id;
    if let Some(t) = ev.time_called {
        p.first_ns = Some(p.first_ns.map_or(t, |x| x.min(t)));
        p.last_ns = Some(p.last_ns.map_or(t, |x| x.max(t)));
    }
}

/// Finish a part's trace (its losses, its end snapshot if `last`, its fact) and move it into
/// place.
fn finish_part(
    tr: &TraceReader,
    mut p: Part,
    a: &SplitArgs,
    by: &str,
    first: bool,
    last: bool,
) -> Result<()> {
    if last {
        copy_snapshots(tr, &mut p.w, &[Phase::End])?;
    }
    for l in tr.lost() {
        let range = l.time_first.zip(l.time_last);
        let here = match (a.by, range) {
            (By::Pid, _) => false,
            (_, Some((t, _))) => {
                p.first_ns.is_some_and(|f| t >= f) && p.last_ns.is_some_and(|z| t <= z)
                    || (first && p.first_ns.is_none_or(|f| t < f))
                    || (last && p.last_ns.is_some_and(|z| t > z))
            }
            (_, None) => first,
        };
        if here {
            p.w.add_lost(&l.syscall, l.count, l.bytes, range, &l.reason)?;
        }
    }
    let fact = serde_json::json!({
        "input": a.input.display().to_string(),
        "by": by,
        "part": p.name,
        "calls": p.calls,
        "first_unique_id": p.first_id,
        "last_unique_id": p.last_id,
        "start_snapshot": first && a.by != By::Pid,
        "end_snapshot": last && a.by != By::Pid,
    });
    p.w.add_info(FACT_SPLIT, fact.to_string().as_bytes())?;
    p.w.finish()?;
    crate::interrupt::check()?;
    p.tmp.persist()
}

/// Linux's largest pid + 1 (PID_MAX_LIMIT): input N's ids are offset by N times this.
pub const PID_STRIDE: i64 = 1 << 22;

/// Maps process and thread ids of one input into its own range (anonymize's pid rules say
/// where the trace holds ids).
struct PidShift(i64);

impl ra_anonymize::Mapper for PidShift {
    fn on(&self, f: ra_anonymize::Field) -> bool {
        f == ra_anonymize::Field::Pid
    }
    fn string(&mut self, _: ra_anonymize::Field, v: &[u8]) -> Vec<u8> {
        v.to_vec()
    }
    fn xattr_name(&mut self, v: &[u8]) -> Vec<u8> {
        v.to_vec()
    }
    fn id(&mut self, _: ra_anonymize::Field, v: i64) -> i64 {
        // 0 (none), -1 (any) stay; a negative id is a process group.
        match v {
            v if v > 0 => v + self.0,
            v if v < -1 => v - self.0,
            v => v,
        }
    }
    fn clock(&mut self, ns: i64) -> i64 {
        ns
    }
    fn file_secs(&mut self, s: i64) -> i64 {
        s
    }
    fn forward(&self) -> bool {
        false
    }
    fn set_counting(&mut self, _: bool) {}
}

pub fn run_merge(a: MergeArgs) -> Result<ExitCode> {
    for i in &a.inputs {
        refuse_same(i, &a.output)?;
    }
    let out = a.output.clone();
    crate::interrupt::install(move |sig| one_output_stopped("merge", &out, sig))?;
    crate::interrupt::outcome(merge(a))
}

fn merge(a: MergeArgs) -> Result<ExitCode> {
    if a.inputs.len() as i64 > i64::from(i32::MAX) / PID_STRIDE {
        bail!("merge joins at most {} traces at once", i64::from(i32::MAX) / PID_STRIDE);
    }
    let trs: Vec<TraceReader> = a.inputs.iter().map(|p| open(p)).collect::<Result<_>>()?;
    let fs = trs.iter().map(is_fs_trace).collect::<Vec<_>>();
    // Facts: those every input agrees on, and each input's as `input.N.KEY`.
    let mut facts: Vec<(String, Vec<u8>)> = Vec::new();
    for (k, v) in plain_facts(&trs[0]) {
        if k == "serial" || k == "synthetic_ids" {
            continue;
        }
        if trs[1..].iter().all(|t| t.info_value(k) == Some(v)) {
            facts.push((k.to_string(), v.to_vec()));
        }
    }
    let mut sources = Vec::new();
    for (i, (t, p)) in trs.iter().zip(&a.inputs).enumerate() {
        for (k, v) in t.info() {
            facts.push((format!("input.{i}.{k}"), v.clone()));
        }
        let host = t.info_value("hostname").map(|v| String::from_utf8_lossy(v).into_owned());
        sources.push(serde_json::json!({
            "index": i,
            "trace": p.display().to_string(),
            "host": host.unwrap_or_else(|| "unknown".into()),
            "pid_offset": i as i64 * PID_STRIDE,
            "pid_range": [i as i64 * PID_STRIDE, (i as i64 + 1) * PID_STRIDE - 1],
            "snapshots_left_out": t.snapshots().len(),
        }));
    }
    let refs: Vec<(&str, &[u8])> = facts.iter().map(|(k, v)| (k.as_str(), v.as_slice())).collect();
    let cfg = WriterConfig {
        ds: a.chain.writer_options()?,
        fs_ops: fs.iter().any(|&f| f),
        ..WriterConfig::default()
    };
    let tmp = Partial::create(&a.output, "-o")?;
    let mut w = TraceWriter::create(tmp.path(), &refs, cfg)?;
    let mut iters: Vec<_> = trs.iter().map(|t| t.events(None)).collect();
    let mut heads: Vec<Option<Event>> = Vec::with_capacity(iters.len());
    let next = |it: &mut ra_trace::EventIter<'_>, p: &Path| -> Result<Option<Event>> {
        crate::interrupt::check()?;
        it.next().transpose().with_context(|| format!("reading {}", p.display()))
    };
    for (it, p) in iters.iter_mut().zip(&a.inputs) {
        heads.push(next(it, p)?);
    }
    let mut counts = vec![0u64; heads.len()];
    let links = ra_anonymize::LinkSizes::new();
    let shift = |i: usize, ev: &mut Event| {
        if i > 0 {
            let mut m = PidShift(i as i64 * PID_STRIDE);
            if ra_trace::fsop::is_fs_event(ev) {
                let keep = ra_anonymize::DataMode::Keep;
                ra_anonymize::map_fs_event(&mut m, ev, keep);
            } else {
                ra_anonymize::map_event(&mut m, ev, &links);
            }
        }
    };
    // Each input's synthetic records (the descriptors its program started with) first, so
    // that they stay below the merged trace's `synthetic_ids`.
    let mut synthetic = 0u64;
    for i in 0..heads.len() {
        let below = synthetic_ids(&trs[i]);
        while heads[i].as_ref().is_some_and(|e| e.unique_id < below) {
            let mut ev = heads[i].take().expect("some");
            shift(i, &mut ev);
            put_new(&mut w, &ev)?;
            synthetic += 1;
            counts[i] += 1;
            heads[i] = next(&mut iters[i], &a.inputs[i])?;
        }
    }
    w.add_info("synthetic_ids", synthetic.to_string().as_bytes())?;
    // The input whose next call was made first (ties: the lower input).
    let first = |heads: &[Option<Event>]| {
        (0..heads.len())
            .filter(|&i| heads[i].is_some())
            .min_by_key(|&i| (heads[i].as_ref().and_then(|e| e.time_called).unwrap_or(i64::MIN), i))
    };
    while let Some(i) = first(&heads) {
        let mut ev = heads[i].take().expect("some");
        shift(i, &mut ev);
        put_new(&mut w, &ev)?;
        counts[i] += 1;
        heads[i] = next(&mut iters[i], &a.inputs[i])?;
    }
    for (i, t) in trs.iter().enumerate() {
        let host = sources[i]["host"].as_str().unwrap_or("unknown").to_string();
        for l in t.lost() {
            let range = l.time_first.zip(l.time_last);
            w.add_lost(&l.syscall, l.count, l.bytes, range, &format!("{host}: {}", l.reason))?;
        }
        sources[i]["calls"] = counts[i].into();
    }
    let fact = serde_json::json!({
        "inputs": sources,
        "snapshots": "left out: each input's states are of its own machine",
    });
    w.add_info(FACT_MERGED, fact.to_string().as_bytes())?;
    w.finish()?;
    crate::interrupt::check()?;
    tmp.persist()?;
    crate::interrupt::commit();
    if !a.quiet {
        eprintln!(
            "reanimator: merged {} calls of {} traces into {}",
            counts.iter().sum::<u64>(),
            trs.len(),
            a.output.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A selection written to a private scratch file for `replay` and `compile` (removed with
/// this value), and what it left out.
pub struct Selected {
    pub trace: TraceReader,
    pub tally: Tally,
    pub describe: serde_json::Value,
    dir: PathBuf,
    pub path: PathBuf,
}

impl Drop for Selected {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Selected {
    /// What `replay --json` and `compile --json` report of the selection.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "criteria": self.describe,
            "calls_kept": self.tally.kept,
            "calls_left_out": self.tally.left_out,
            "left_out_by_class": self.tally.left_out_by_class,
        })
    }

    /// One line for stderr.
    pub fn line(&self, what: &str) -> String {
        format!(
            "reanimator: {what} {} of {} calls (the selection); left out: {}",
            self.tally.kept,
            self.tally.kept + self.tally.left_out,
            self.tally.classes()
        )
    }
}

/// `tr` (read from `input`) selected by `a` into a private scratch trace, opened.
pub fn select_scratch(tr: &TraceReader, input: &Path, a: &SelectionArgs) -> Result<Selected> {
    let sel = Selection::resolve(a, tr)?;
    let dir = std::env::temp_dir().join(format!(
        "reanimator-select-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    ra_fsstate::private::create_dir_all(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join("selection.ds");
    let cfg = WriterConfig {
        ds: dataseries::WriterOptions::uncompressed(),
        fs_ops: is_fs_trace(tr),
        ..WriterConfig::default()
    };
    let guard = DirGuard(dir.clone());
    let tally = select_into(tr, input, &sel, &path, cfg, None)?;
    let trace = TraceReader::open(&path)
        .with_context(|| format!("cannot read the selection {}", path.display()))?;
    std::mem::forget(guard);
    Ok(Selected { trace, tally, describe: sel.describe, dir, path })
}

struct DirGuard(PathBuf);

impl Drop for DirGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("2s"), Some(2_000_000_000));
        assert_eq!(parse_duration_ns("5.5s"), Some(5_500_000_000));
        assert_eq!(parse_duration_ns("500ms"), Some(500_000_000));
        assert_eq!(parse_duration_ns("3"), Some(3_000_000_000));
        assert_eq!(parse_duration_ns("1m"), Some(60_000_000_000));
        assert_eq!(parse_duration_ns("2x"), None);
        assert_eq!(parse_duration_ns(""), None);
    }

    #[test]
    fn ranges() {
        assert_eq!(
            parse_range("2s..5.5s").unwrap(),
            (Some(Bound::Rel(2_000_000_000)), Some(Bound::Rel(5_500_000_000)))
        );
        assert_eq!(parse_range("..1s").unwrap(), (None, Some(Bound::Rel(1_000_000_000))));
        assert_eq!(parse_range("@10..").unwrap(), (Some(Bound::Abs(10_000_000_000)), None));
        assert!(parse_range("2s").is_err());
        assert!(parse_range("x..").is_err());
        assert_eq!(parse_by("time=60s").unwrap(), By::Time(60_000_000_000));
        assert_eq!(parse_by("size=1G").unwrap(), By::Size(1 << 30));
        assert!(parse_by("size=0").is_err());
        assert!(parse_by("host").is_err());
    }
}
