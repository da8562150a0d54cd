//! The streaming pass: a trace read once, in `unique_id` order, each event turned into a row
//! and handed to a [`Sink`] with the trace's facts, losses, snapshots and data buffers. Memory
//! is what the reader holds (one decoded extent per call type), the row being built, the
//! process model, the set of data digests already written, and what the sink buffers.

use std::collections::HashSet;

use ra_trace::{LostRecord, Phase, TraceKind, TraceReader};

use crate::columns::Table;
use crate::row::{Builder, Cell, Context, DataMode, Row};
use crate::{Error, Result};

/// Which trace a row belongs to: the values of the `host`, `trace_id` and `backend` columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceMeta {
    /// The `host` column and partition directory: `--host`, else the `hostname` fact, else
    /// `unknown`.
    pub host: String,
    /// The `trace_id` column and `trace=` directory: the trace file's name without `.ds`,
    /// as the caller chose it.
    pub trace_id: String,
    /// The `backend` column: `ptrace`, `ebpf`, `fs`, `re-animator` or `unknown`.
    pub backend: String,
}

impl TraceMeta {
    /// From the trace's facts: `hostname`, and the recorder (`backend`: ptrace or ebpf; `fs`
    /// for `reanimator fs` traces, `re-animator` for the original tool's); `host` overrides
    /// the fact (`unknown` when there is neither).
    pub fn of(tr: &TraceReader, trace_id: String, host: Option<&str>) -> TraceMeta {
        let fact = |k: &str| tr.info_value(k).map(|v| String::from_utf8_lossy(v).into_owned());
        let backend = if tr.kind() == TraceKind::ReAnimator {
            "re-animator".to_string()
        } else if let Some(b) = fact("backend") {
            b
        } else if fact("source").is_some_and(|s| s.starts_with("reanimator fs")) {
            "fs".to_string()
        } else {
            "unknown".to_string()
        };
        let host = host.map(str::to_string).or_else(|| fact("hostname"));
        TraceMeta { host: host.unwrap_or_else(|| "unknown".into()), trace_id, backend }
    }
}

/// Where rows go: one sink per format (Parquet, CSV, Chrome trace-event JSON, CTF).
pub trait Sink {
    /// A row of `calls`.
    fn call(&mut self, row: &Row<'_>) -> Result<()>;
    /// A row of another table: cells sorted by column index (of [`Table::columns`]); `host`
    /// and `trace_id` are the sink's to add.
    fn row(&mut self, table: Table, cells: &[(u16, Cell<'_>)]) -> Result<()>;
    /// Everything has been handed over: write what is buffered, put the files in place.
    fn finish(&mut self) -> Result<()>;
}

/// How [`export_trace`] reads a trace; the default keeps digests and remembers 4 Mi of them.
#[derive(Clone, Debug)]
pub struct PassOptions {
    /// Which data buffers go into `calls` (lengths, digests) and the `data` table (bytes).
    pub data: DataMode,
    /// The most distinct data digests remembered, so that each buffer's bytes go into the
    /// `data` table once (beyond it, a buffer seen before may be written again; counted).
    pub max_digests: usize,
}

impl Default for PassOptions {
    fn default() -> Self {
        PassOptions { data: DataMode::Digest, max_digests: 4 << 20 }
    }
}

/// What a pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassSummary {
    /// Rows handed to [`Sink::call`]: one per event.
    pub calls: u64,
    /// Rows of the `data` table (distinct buffers, `--data full`).
    pub data_rows: u64,
    /// Bytes of those buffers.
    pub data_bytes: u64,
    /// Data rows written although a row of the same digest was written before (the digest
    /// set was full).
    pub data_repeated: u64,
    /// Rows of `facts` (the trace's TraceInfo facts).
    pub facts: u64,
    /// Rows of `losses` (the trace's `Reanimator::Lost` records).
    pub losses: u64,
    /// Rows of `snapshots`, over every snapshot and both states.
    pub snapshot_entries: u64,
    /// Text values that were not UTF-8, escaped (the sink's count: set by the caller).
    pub escaped: u64,
    /// Calls a timeline (`chrome-trace`, `ctf`) left out: without a `time_called` (nowhere to
    /// put them on a time axis), or, for CTF, of a call type the registry does not know (no
    /// event class describes its fields). The sink's count: set by the caller.
    pub not_on_timeline: u64,
}

/// Export one trace into `sink`. `progress` is told the number of calls so far every 4,096;
/// `stop` is asked as often, and a true answer ends the pass with [`Error::Stopped`].
pub fn export_trace(
    tr: &TraceReader,
    opts: &PassOptions,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(u64),
    stop: &dyn Fn() -> bool,
) -> Result<PassSummary> {
    let mut s = PassSummary::default();
    for (k, v) in tr.info() {
        sink.row(Table::Facts, &[(2, Cell::Text(k.as_bytes())), (3, Cell::Text(v))])?;
        s.facts += 1;
    }
    for l in tr.lost() {
        sink.row(Table::Losses, &loss_cells(l))?;
        s.losses += 1;
    }
    let mut ctx = Context::new(tr.info_value("cwd"), tr.info_value("command"));
    let b = Builder::new(opts.data);
    let mut seen: HashSet<[u8; 16], foldhash::fast::RandomState> = HashSet::default();
    for ev in tr.events(None).sharing_buffers() {
        let ev = ev?;
        let d = b.prepare(&mut ctx, &ev);
        let row = b.row(&ev, &d);
        for (digest, bytes) in &row.data {
            let key: [u8; 16] = digest[..16].try_into().expect("16 bytes");
            if seen.contains(&key) {
                continue;
            }
            if seen.len() < opts.max_digests {
                seen.insert(key);
            } else {
                s.data_repeated += 1;
            }
            sink.row(
                Table::Data,
                &[
                    (2, Cell::Digest(*digest)),
                    (3, Cell::Int(bytes.len() as i64)),
                    (4, Cell::Bytes(bytes)),
                ],
            )?;
            s.data_rows += 1;
            s.data_bytes += bytes.len() as u64;
        }
        sink.call(&row)?;
        s.calls += 1;
        if s.calls % 4096 == 0 {
            progress(s.calls);
            if stop() {
                return Err(Error::Stopped);
            }
        }
    }
    progress(s.calls);
    s.snapshot_entries = snapshots(tr, sink, stop)?;
    sink.finish()?;
    Ok(s)
}

fn loss_cells(l: &LostRecord) -> Vec<(u16, Cell<'_>)> {
    let mut v = vec![
        (2, Cell::Text(l.syscall.as_bytes())),
        (3, Cell::Int(l.count)),
        (4, Cell::Int(l.bytes)),
    ];
    v.extend(l.time_first.map(|t| (5, Cell::Int(t))));
    v.extend(l.time_last.map(|t| (6, Cell::Int(t))));
    v.push((7, Cell::Text(l.reason.as_bytes())));
    v
}

/// One row per entry of every stored state of every recorded directory.
fn snapshots(tr: &TraceReader, sink: &mut dyn Sink, stop: &dyn Fn() -> bool) -> Result<u64> {
    let mut n = 0;
    for info in tr.snapshots() {
        for phase in [Phase::Start, Phase::End] {
            if info.phase(phase).is_none() {
                continue;
            }
            for e in tr.snapshot_entries(info.index, phase)? {
                let e = e?;
                let mut v: Vec<(u16, Cell<'_>)> = vec![
                    (2, Cell::Int(info.index.into())),
                    (3, Cell::Text(&info.dir)),
                    (4, Cell::Text(phase.name().as_bytes())),
                    (5, Cell::Text(&e.path)),
                    (6, Cell::Text(e.kind.name().as_bytes())),
                    (7, Cell::Int(e.mode.into())),
                    (8, Cell::Int(e.uid.into())),
                    (9, Cell::Int(e.gid.into())),
                    (10, Cell::Int(e.size as i64)),
                ];
                v.extend(e.digest.map(|d| (11, Cell::Digest(d.0))));
                v.extend(e.target.as_deref().map(|t| (12, Cell::Text(t))));
                if let Some(r) = e.rdev {
                    v.push((13, Cell::Int(r.major.into())));
                    v.push((14, Cell::Int(r.minor.into())));
                }
                v.extend(e.link.as_deref().map(|l| (15, Cell::Text(l))));
                v.push((16, Cell::Int(e.xattrs.len() as i64)));
                v.push((17, Cell::Int(e.mtime_ns)));
                sink.row(Table::Snapshots, &v)?;
                n += 1;
                if n % 4096 == 0 && stop() {
                    return Err(Error::Stopped);
                }
            }
        }
    }
    Ok(n)
}

/// A JSON profile (`reanimator profile --json`) into the `profiles` table: one row per
/// interval, key and non-empty bucket (a histogram without any counts gives one row with null
/// bucket columns). Returns the rows.
pub fn export_profile(p: &ra_profile::Profile, sink: &mut dyn Sink) -> Result<u64> {
    let mut n = 0;
    for iv in &p.intervals {
        for (k, h) in &iv.hists {
            let mut v = Vec::with_capacity(16);
            let mut any = false;
            for (b, &count) in h.buckets.iter().enumerate() {
                if count == 0 {
                    continue;
                }
                any = true;
                let (lo, hi) = ra_profile::bucket_bounds(b);
                profile_head(&mut v, k, iv, h);
                v.push((13, Cell::Int(b as i64)));
                v.push((14, Cell::Int(lo as i64)));
                v.push((15, Cell::Int(hi as i64)));
                v.push((16, Cell::Int(count as i64)));
                sink.row(Table::Profiles, &v)?;
                n += 1;
            }
            if !any {
                profile_head(&mut v, k, iv, h);
                sink.row(Table::Profiles, &v)?;
                n += 1;
            }
        }
    }
    sink.finish()?;
    Ok(n)
}

/// The columns of a `profiles` row before its bucket's.
fn profile_head<'a>(
    v: &mut Vec<(u16, Cell<'a>)>,
    k: &'a ra_profile::Key,
    iv: &ra_profile::Interval,
    h: &ra_profile::Hist,
) {
    v.clear();
    v.push((2, Cell::Text(k.layer.as_bytes())));
    v.push((3, Cell::Text(k.op.as_bytes())));
    v.push((4, Cell::Text(k.group.as_bytes())));
    v.push((5, Cell::Int(iv.start_ns as i64)));
    v.push((6, Cell::Int(iv.end_ns as i64)));
    v.push((7, Cell::Bool(iv.partial)));
    v.push((8, Cell::Int(h.count as i64)));
    v.push((9, Cell::Int(h.errors as i64)));
    v.push((10, Cell::Int(h.total_ns as i64)));
    if h.count > 0 {
        v.push((11, Cell::Int(h.min_ns as i64)));
    }
    v.push((12, Cell::Int(h.max_ns as i64)));
}
