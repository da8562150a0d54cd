//! The tracing side of the file system: the input filter, the stream driver (one record per
//! operation into the trace) and the aggregate driver (per-interval counts, bytes, errors and
//! log2 latency histograms).

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use ra_filter::{FieldValue, Filter, Record};
use ra_trace::{FsData, FsRecord, TraceOutput, TraceWriter};

/// How much of a data buffer a record keeps, per direction (data read from the file,
/// data written to it): `fs mount --data`, `fs ctl MNT data` ([`DataMode::name`],
/// [`DataMode::from_name`]). The same type as `record --data`'s.
pub use ra_trace::{DataLevel, DataMode};

/// What a record keeps of `bytes` at level `l`.
fn keep(l: DataLevel, bytes: &[u8]) -> FsData<'_> {
    match l {
        DataLevel::Full => FsData::Full(Cow::Borrowed(bytes)),
        DataLevel::Hash => {
            FsData::Hashed { len: bytes.len() as u64, blake3: *blake3::hash(bytes).as_bytes() }
        }
        DataLevel::None => FsData::Length(bytes.len() as u64),
    }
}

/// An operation's data buffer and its direction, which says which half of the data mode
/// applies.
#[derive(Clone, Copy, Debug)]
pub enum Buf<'a> {
    /// Data read from the file (`read`, `getxattr`).
    Read(&'a [u8]),
    /// Data written to it (`write`, `setxattr`).
    Written(&'a [u8]),
}

/// The operation name of the records `fs ctl` leaves in the trace (TRACE_FORMAT.md 3.10).
pub const CTL_OP: &str = "ctl";

/// Why the operations of a pause are missing (the `reason` of their `Reanimator::Lost` row).
pub const PAUSED_REASON: &str = "tracing paused by `reanimator fs ctl pause`";

/// What the aggregate driver groups by, besides the operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupBy {
    /// Per operation only.
    Op,
    /// Per operation and calling uid.
    Uid,
    /// Per operation and the first `n` components of the path under the mountpoint.
    PathPrefix(usize),
}

/// The calling process, from /proc (cached per thread id for a second).
#[derive(Clone, Debug, Default)]
pub struct ProcInfo {
    /// The thread's process id (`Tgid:` of `/proc/<tid>/status`); None when /proc did not
    /// answer (the thread is gone, or the lookup timed out after 50 ms).
    pub pid: Option<i32>,
    /// Its session id as the daemon's /proc sees it (the first field of `NSsid:`); None as
    /// for `pid`.
    pub sid: Option<i32>,
    /// Its name (`/proc/<tid>/comm`, read again for every record since exec changes it);
    /// None when neither comm nor status could be read.
    pub comm: Option<Vec<u8>>,
    /// The thread's supplementary groups (`Groups:`), for the access check of
    /// [`crate::access::Reach`].
    pub groups: Option<Vec<u32>>,
}

struct ProcCache {
    /// Per thread id: when its pid and session were read, and an open `/proc/<tid>/comm`
    /// (read again for every record: a process's name changes at exec).
    map: HashMap<u32, (Instant, ProcInfo, Option<std::fs::File>)>,
    /// /proc reads that did not answer in time.
    timeouts: u64,
}

/// The pid (`Tgid`), session (`NSsid`), name and supplementary groups of a thread, from
/// /proc/<tid>/status.
///
/// Never /proc/<tid>/stat: reading it waits for locks a thread can hold while it waits for
/// this file system (seen here: `ps` stuck in do_task_stat behind a process in a FUSE
/// request), and the daemon must never wait for its own callers. status and comm take only
/// spinlocks; even so this runs on a thread of its own and the caller gives up after 50 ms.
fn read_proc(tid: u32) -> ProcInfo {
    let mut info = ProcInfo::default();
    if let Ok(status) = std::fs::read_to_string(format!("/proc/{tid}/status")) {
        for l in status.lines() {
            if let Some(v) = l.strip_prefix("Tgid:") {
                info.pid = v.trim().parse().ok();
            } else if let Some(v) = l.strip_prefix("NSsid:") {
                info.sid = v.split_whitespace().next().and_then(|s| s.parse().ok());
            } else if let Some(v) = l.strip_prefix("Name:") {
                info.comm = Some(v.trim_start_matches('\t').as_bytes().to_vec());
            } else if let Some(v) = l.strip_prefix("Groups:") {
                info.groups = v.split_whitespace().map(|g| g.parse().ok()).collect();
            }
        }
    }
    info
}

/// [`read_proc`] on a thread of its own, waiting at most 50 ms for it.
fn read_proc_bounded(tid: u32) -> Option<ProcInfo> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("fs-proc".into())
        .spawn(move || {
            let _ = tx.send(read_proc(tid));
        })
        .ok()?;
    rx.recv_timeout(Duration::from_millis(50)).ok()
}

fn read_comm(f: &std::fs::File) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 64];
    let n = f.read_at(&mut buf, 0).ok().filter(|&n| n > 0)?;
    Some(buf[..n].strip_suffix(b"\n").unwrap_or(&buf[..n]).to_vec())
}

impl ProcCache {
    fn get(&mut self, tid: u32) -> ProcInfo {
        if tid == 0 {
            return ProcInfo::default();
        }
        let now = Instant::now();
        if let Some((t, i, f)) = self.map.get(&tid) {
            if now.duration_since(*t) < Duration::from_secs(1) {
                // A dead thread's file reads nothing (ESRCH): read everything again below,
                // the number may belong to a new thread.
                if let Some(comm) = f.as_ref().and_then(read_comm) {
                    return ProcInfo { comm: Some(comm), ..i.clone() };
                }
            }
        }
        if self.map.len() >= 1024 {
            self.map.retain(|_, (t, _, _)| now.duration_since(*t) < Duration::from_secs(1));
            if self.map.len() >= 1024 {
                self.map.clear();
            }
        }
        let f = std::fs::File::open(format!("/proc/{tid}/comm")).ok();
        let Some(mut i) = read_proc_bounded(tid) else {
            // Not cached: the next record of this thread tries again.
            self.timeouts += 1;
            return ProcInfo { comm: f.as_ref().and_then(read_comm), ..ProcInfo::default() };
        };
        if let Some(c) = f.as_ref().and_then(read_comm) {
            i.comm = Some(c);
        }
        self.map.insert(tid, (now, i.clone(), f));
        i
    }
}

pub use ra_trace::fsop::FsStats as Stats;

/// One interval's aggregate, ready to print or store.
pub struct Interval {
    /// When the interval began ([`now_ns`]: wall clock, ns since the Unix epoch).
    pub start_ns: i64,
    /// When it was closed ([`Tracer::rotate_interval`]); the next interval starts here.
    pub end_ns: i64,
    /// (operation, group, statistics), sorted by operation then group. The group is empty
    /// for [`GroupBy::Op`], the uid for [`GroupBy::Uid`], `/a/b` for [`GroupBy::PathPrefix`].
    pub rows: Vec<(String, String, Stats)>,
}

/// What an operation looks like to the input filter, before any record is built: cheap fields
/// directly, the path and the process's name only when the filter asks for them.
pub struct FilterView<'a> {
    /// The operation's name as its record names it (`lookup`, `read`, `setattr`, ...).
    pub op: &'static str,
    /// The caller's uid, as the FUSE request header gives it.
    pub uid: u32,
    /// The caller's gid, as the FUSE request header gives it.
    pub gid: u32,
    /// The calling thread's id (the FUSE request header's `pid`); 0 when the request carries
    /// none (no process is then looked up).
    pub tid: u32,
    /// The operation's errno; 0 on success.
    pub errno: i32,
    /// Bytes the operation moved (read, written), where it moves any.
    pub size: Option<u64>,
    /// The lower inode number, where the caller knows it. (The passthrough passes None, so
    /// the filter's `inode` field is absent there.)
    pub inode: Option<u64>,
    /// Computes the path under the mountpoint; called at most once ([`FilterView::path`]).
    pub path: &'a dyn Fn() -> Option<Vec<u8>>,
    /// Looks the calling process up in /proc; called at most once ([`FilterView::proc`]).
    pub proc_info: &'a dyn Fn() -> ProcInfo,
    path_cell: OnceCell<Option<Vec<u8>>>,
    proc_cell: OnceCell<ProcInfo>,
}

impl<'a> FilterView<'a> {
    /// A view of one finished operation; `path` and `proc_info` are not called until a filter
    /// or [`FilterView::take`] needs them.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        op: &'static str,
        uid: u32,
        gid: u32,
        tid: u32,
        errno: i32,
        size: Option<u64>,
        inode: Option<u64>,
        path: &'a dyn Fn() -> Option<Vec<u8>>,
        proc_info: &'a dyn Fn() -> ProcInfo,
    ) -> Self {
        FilterView {
            op,
            uid,
            gid,
            tid,
            errno,
            size,
            inode,
            path,
            proc_info,
            path_cell: OnceCell::new(),
            proc_cell: OnceCell::new(),
        }
    }
    /// The path under the mountpoint, computed on first use; None when the node is no longer
    /// known.
    pub fn path(&self) -> Option<&[u8]> {
        self.path_cell.get_or_init(|| (self.path)()).as_deref()
    }
    /// The calling process, looked up on first use.
    pub fn proc(&self) -> &ProcInfo {
        self.proc_cell.get_or_init(|| (self.proc_info)())
    }
    /// The path and process information, moved out (computed if the filter did not need them).
    pub fn take(self) -> (Option<Vec<u8>>, ProcInfo) {
        let p = match self.path_cell.into_inner() {
            Some(p) => p,
            None => (self.path)(),
        };
        let i = match self.proc_cell.into_inner() {
            Some(i) => i,
            None => (self.proc_info)(),
        };
        (p, i)
    }
}

fn extension(path: &[u8]) -> Option<&[u8]> {
    let base = &path[path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1)..];
    let dot = base.iter().rposition(|&b| b == b'.')?;
    (dot > 0).then(|| &base[dot + 1..])
}

/// The fields `--filter` knows on a file-system operation.
pub const FILTER_FIELDS: &[&str] = &[
    "op", "call", "uid", "gid", "pid", "tid", "sid", "comm", "path", "ext", "size", "errno",
    "inode",
];

impl Record for FilterView<'_> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        let opt = |v: Option<i32>| Some(v.map_or(FieldValue::Null, |v| FieldValue::Int(v.into())));
        match field {
            "op" | "call" | "operation" => {
                Some(FieldValue::Bytes(Cow::Borrowed(self.op.as_bytes())))
            }
            "uid" => Some(FieldValue::UInt(self.uid.into())),
            "gid" => Some(FieldValue::UInt(self.gid.into())),
            "tid" => Some(FieldValue::UInt(self.tid.into())),
            "errno" => Some(FieldValue::Int(self.errno.into())),
            "size" => self.size.map(FieldValue::UInt),
            "inode" => self.inode.map(FieldValue::UInt),
            "pid" => opt(self.proc().pid),
            "sid" => opt(self.proc().sid),
            "comm" => Some(
                self.proc()
                    .comm
                    .as_deref()
                    .map_or(FieldValue::Null, |c| FieldValue::Bytes(Cow::Borrowed(c))),
            ),
            "path" => self.path().map(|p| FieldValue::Bytes(Cow::Borrowed(p))),
            "ext" => self.path().and_then(extension).map(|e| FieldValue::Bytes(Cow::Borrowed(e))),
            _ => None,
        }
    }
}

/// Parse a `--filter` (or `fs ctl filter`) expression and check that it names only fields an
/// operation has. The error begins `filter: `: the parser's message with the source and a
/// caret under the error, or one line for an unknown field (with a "did you mean").
pub fn parse_filter(src: &str) -> Result<Filter, String> {
    let f = Filter::parse(src).map_err(|e| e.render(src))?;
    for field in f.fields() {
        if !FILTER_FIELDS.contains(&field) {
            let hint = ra_filter::suggest(field, FILTER_FIELDS.iter().copied())
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            return Err(format!(
                "filter: unknown field `{field}`{hint}; fields: {}",
                FILTER_FIELDS.join(", ")
            ));
        }
    }
    Ok(f)
}

type AggMap = HashMap<(&'static str, String), Stats>;

/// Options of the tracing side (`data` and `filter` are where they start: `fs ctl` changes
/// them, [`Tracer::data_mode`] and [`Tracer::filter_text`] say what they are now).
pub struct TracerOptions {
    /// How `fs ctl --tracer` and `fs ctl stats` name it (`--tracer name=`, else its number).
    pub name: String,
    /// The data mode at the start (`--data`).
    pub data: DataMode,
    /// The filter and its text.
    pub filter: Option<(String, Filter)>,
    /// The stream driver: one record per operation into the trace (off with
    /// `--aggregate-only`); `ctl` records are written only with it.
    pub stream: bool,
    /// The aggregate driver and what it groups by; None: no aggregate statistics kept.
    pub aggregate: Option<GroupBy>,
    /// Mountpoint path as programs see it (prefix of every recorded path).
    pub mountpoint: Vec<u8>,
    /// `--sync`: the trace file, opened again for `fdatasync`: each record is written and
    /// made durable before its operation is answered.
    pub sync: Option<std::fs::File>,
}

/// The stream and aggregate drivers behind one lock each.
pub struct Tracer {
    /// Its configuration; `filter` has been moved out (the one in force is behind its own
    /// lock, [`Tracer::filter_text`]), `data` is the data mode it started with.
    pub opts: TracerOptions,
    writer: Mutex<Option<TraceWriter<TraceOutput>>>,
    procs: Mutex<ProcCache>,
    /// The current interval's start and statistics per (operation, group).
    agg: Mutex<(i64, AggMap)>,
    /// The first trace write error (recording stops; the file system keeps serving).
    pub failure: Mutex<Option<String>>,
    /// Set with `failure`: no record is written from then on (checked without the lock).
    pub failed: AtomicBool,
    /// Operations offered to the tracer ([`Tracer::passes`]), paused and filtered ones
    /// included.
    pub seen: AtomicU64,
    /// Records appended to the trace (`ctl` records included; discarded ones not).
    pub recorded: AtomicU64,
    /// Operations the filter refused.
    pub filtered_out: AtomicU64,
    /// `REANIMATOR_DISCARD_EVENTS=1` (benchmarks, as for record): records are built and then
    /// dropped instead of written, to measure the trace writer's share.
    pub discard: bool,
    /// Records built and dropped under `REANIMATOR_DISCARD_EVENTS=1`.
    pub discarded: AtomicU64,
    /// `fs mount --print`: each record written is also handed to the live printer (taken
    /// out when the trace is finished, so the printer sees its input end).
    print: Mutex<Option<ra_trace::live::Feed>>,
    /// The input filter in force (`fs ctl filter` replaces it) and its text.
    filter: RwLock<Option<(String, Filter)>>,
    /// The data mode in force ([`DataMode::to_u8`]; `fs ctl data` changes it).
    data: AtomicU8,
    /// `fs ctl pause`: no operation is recorded (nor aggregated) until `resume`.
    paused: AtomicBool,
    /// Operations served while paused, over the whole mount.
    pub paused_ops: AtomicU64,
    /// The pause in progress: when it began and `paused_ops` then.
    pause: Mutex<Option<(i64, u64)>>,
}

/// An error and its causes on one line (`a: b: c`), leaving out causes its text already ends with.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.ends_with(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

/// The wall clock in ns since the Unix epoch (0 before it): the time base of the records'
/// call and return times, `ctl` records and aggregate intervals.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

impl Tracer {
    /// A tracer writing into `writer`, recording with `opts`' filter and data mode until
    /// `fs ctl` changes them; `print` is the `--print` printer's feed (the first tracer's
    /// only). Reads `REANIMATOR_DISCARD_EVENTS` once, here.
    pub fn new(
        mut opts: TracerOptions,
        writer: TraceWriter<TraceOutput>,
        print: Option<ra_trace::live::Feed>,
    ) -> Tracer {
        Tracer {
            print: Mutex::new(print),
            filter: RwLock::new(opts.filter.take()),
            data: AtomicU8::new(opts.data.to_u8()),
            paused: AtomicBool::new(false),
            paused_ops: AtomicU64::new(0),
            pause: Mutex::new(None),
            opts,
            writer: Mutex::new(Some(writer)),
            procs: Mutex::new(ProcCache { map: HashMap::new(), timeouts: 0 }),
            agg: Mutex::new((now_ns(), HashMap::new())),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            seen: AtomicU64::new(0),
            recorded: AtomicU64::new(0),
            filtered_out: AtomicU64::new(0),
            discard: std::env::var_os("REANIMATOR_DISCARD_EVENTS").is_some_and(|v| v == "1"),
            discarded: AtomicU64::new(0),
        }
    }

    /// How many /proc lookups gave up (their records lack pid and session).
    pub fn proc_timeouts(&self) -> u64 {
        self.procs.lock().unwrap_or_else(|e| e.into_inner()).timeouts
    }

    /// Thread `tid`'s pid, session, name and groups: cached for a second per tid (the name
    /// read again each time); a /proc lookup that takes over 50 ms gives only the name and
    /// counts in [`Tracer::proc_timeouts`]. tid 0 gives nothing.
    pub fn proc_info(&self, tid: u32) -> ProcInfo {
        self.procs.lock().unwrap_or_else(|e| e.into_inner()).get(tid)
    }

    /// Whether this operation is to be recorded: not while paused (counted in
    /// `paused_ops`), else when the filter passes it (always without a filter).
    pub fn passes(&self, v: &FilterView<'_>) -> bool {
        self.seen.fetch_add(1, Ordering::Relaxed);
        if self.paused.load(Ordering::Relaxed) {
            self.paused_ops.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let ok = self
            .filter
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_none_or(|(_, f)| f.matches(v));
        if !ok {
            self.filtered_out.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }

    /// The data mode in force.
    pub fn data_mode(&self) -> DataMode {
        DataMode::from_u8(self.data.load(Ordering::Relaxed))
    }

    /// The filter in force, as its text (`None`: every operation is recorded).
    pub fn filter_text(&self) -> Option<String> {
        self.filter.read().unwrap_or_else(|e| e.into_inner()).as_ref().map(|(s, _)| s.clone())
    }

    /// Whether `fs ctl pause` is in force.
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }

    /// `fs ctl pause`: stop recording (operations still pass through, counted); the trace
    /// gets a `ctl` record now (`by`: the caller's uid, gid and pid). False when already paused.
    pub fn pause(&self, by: (u32, u32, i32)) -> bool {
        let mut p = self.pause.lock().unwrap_or_else(|e| e.into_inner());
        if p.is_some() {
            return false;
        }
        let t = now_ns();
        // The record first: every operation after it, up to the resume, is not recorded.
        self.ctl_record(t, by, "pause", 0);
        *p = Some((t, self.paused_ops.load(Ordering::Relaxed)));
        self.paused.store(true, Ordering::Relaxed);
        true
    }

    /// `fs ctl resume` (and the end of the trace while paused): record again. The operations
    /// served while paused become one `Reanimator::Lost` row (their count and the pause's time
    /// range) and the `ctl` resume record's return value. Returns that count, or None when
    /// not paused.
    pub fn resume(&self, by: (u32, u32, i32)) -> Option<u64> {
        self.end_pause(by, "resume")
    }

    fn end_pause(&self, by: (u32, u32, i32), what: &str) -> Option<u64> {
        let mut p = self.pause.lock().unwrap_or_else(|e| e.into_inner());
        let (t0, before) = p.take()?;
        self.paused.store(false, Ordering::Relaxed);
        let t = now_ns();
        let n = self.paused_ops.load(Ordering::Relaxed) - before;
        {
            let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(wr) = w.as_mut() {
                if let Err(e) = wr.add_lost("", n as i64, 0, Some((t0, t)), PAUSED_REASON) {
                    self.fail(&mut w, format!("cannot write the trace: {}", chain(&e)));
                }
            }
        }
        self.ctl_record(t, by, what, n as i64);
        Some(n)
    }

    /// `fs ctl filter`: record what `f` passes from now on (`None`: everything).
    pub fn set_filter(&self, f: Option<(String, Filter)>, by: (u32, u32, i32)) {
        let what = match &f {
            Some((s, _)) => format!("filter {s}"),
            None => "filter none".to_string(),
        };
        let mut cur = self.filter.write().unwrap_or_else(|e| e.into_inner());
        self.ctl_record(now_ns(), by, &what, 0);
        *cur = f;
    }

    /// `fs ctl data`: keep this much of each buffer from now on.
    pub fn set_data_mode(&self, m: DataMode, by: (u32, u32, i32)) {
        self.ctl_record(now_ns(), by, &format!("data {}", m.name()), 0);
        self.data.store(m.to_u8(), Ordering::Relaxed);
    }

    /// A `ctl` record: the command `what` (its text in `data`), given at `t` by `by` (uid,
    /// gid, pid); `ret` its result. Written whatever the filter says; never aggregated.
    pub fn ctl_record(&self, t: i64, by: (u32, u32, i32), what: &str, ret: i64) {
        if !self.opts.stream {
            return;
        }
        let r = FsRecord {
            op: CTL_OP,
            time_called: t,
            time_returned: t,
            pid: Some(by.2),
            tid: by.2,
            uid: by.0 as i32,
            gid: by.1 as i32,
            ret,
            data: FsData::Full(Cow::Borrowed(what.as_bytes())),
            ..FsRecord::default()
        };
        self.write(&r);
    }

    /// What a record keeps of `bytes`, data read from the file (`read`, `getxattr`).
    pub fn read_data<'a>(&self, bytes: &'a [u8]) -> FsData<'a> {
        keep(self.data_mode().read, bytes)
    }

    /// What a record keeps of an operation's buffer, by its direction, with the buffer's hash
    /// shared between the tracers that hash it.
    pub fn data_shared<'a>(&self, buf: Buf<'a>, hash: &OnceCell<[u8; 32]>) -> FsData<'a> {
        let mode = self.data_mode();
        let (level, bytes) = match buf {
            Buf::Read(b) => (mode.read, b),
            Buf::Written(b) => (mode.write, b),
        };
        match level {
            DataLevel::Hash => FsData::Hashed {
                len: bytes.len() as u64,
                blake3: *hash.get_or_init(|| *blake3::hash(bytes).as_bytes()),
            },
            l => keep(l, bytes),
        }
    }

    /// What a record keeps of `bytes`, data written to the file (`write`, `setxattr`).
    pub fn written_data<'a>(&self, bytes: &'a [u8]) -> FsData<'a> {
        keep(self.data_mode().write, bytes)
    }

    /// Hand one operation to the drivers.
    pub fn emit(&self, r: &FsRecord<'_>, agg_path: Option<&[u8]>) {
        if let Some(g) = &self.opts.aggregate {
            let ns = (r.time_returned - r.time_called).max(0) as u64;
            let bytes = match &r.data {
                FsData::Full(d) => d.len() as u64,
                FsData::Hashed { len, .. } | FsData::Length(len) => *len,
                FsData::None => 0,
            };
            let group = match g {
                GroupBy::Op => String::new(),
                GroupBy::Uid => r.uid.to_string(),
                GroupBy::PathPrefix(n) => {
                    let p = agg_path.or(r.path.as_deref()).unwrap_or_default();
                    let rel = p.strip_prefix(self.opts.mountpoint.as_slice()).unwrap_or(p);
                    let comps: Vec<&[u8]> =
                        rel.split(|&b| b == b'/').filter(|c| !c.is_empty()).take(*n).collect();
                    format!("/{}", String::from_utf8_lossy(&comps.join(&b'/')))
                }
            };
            let mut a = self.agg.lock().unwrap_or_else(|e| e.into_inner());
            a.1.entry((r.op, group)).or_default().add(ns, bytes, r.errno != 0);
        }
        if !self.opts.stream || self.failed.load(Ordering::Relaxed) {
            return;
        }
        if self.discard {
            self.discarded.fetch_add(1, Ordering::Relaxed);
            std::hint::black_box(r);
            return;
        }
        self.write(r);
    }

    /// Append one record to the trace (and hand it to the live printer).
    fn write(&self, r: &FsRecord<'_>) {
        if self.failed.load(Ordering::Relaxed) {
            return;
        }
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(wr) = w.as_mut() {
            let synced = |wr: &mut TraceWriter<TraceOutput>| -> Result<(), String> {
                if let Some(f) = &self.opts.sync {
                    wr.flush().map_err(|e| chain(&e))?;
                    rustix::fs::fdatasync(f).map_err(|e| format!("fdatasync: {e}"))?;
                }
                Ok(())
            };
            match wr.append_fs(r).map_err(|e| chain(&e)).and_then(|id| synced(wr).map(|()| id)) {
                Err(e) => self.fail(&mut w, format!("cannot write the trace: {e}")),
                Ok(id) => {
                    self.recorded.fetch_add(1, Ordering::Relaxed);
                    // Under the writer's lock: lines in trace order. The send never waits.
                    let p = self.print.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(f) = p.as_ref() {
                        let cut = match f.strsize() {
                            0 => usize::MAX,
                            n => n + 1,
                        };
                        f.send(vec![f.preview(&r.to_event_cut(id, cut), id)]);
                    }
                }
            }
        }
    }

    fn fail(&self, w: &mut Option<TraceWriter<TraceOutput>>, msg: String) {
        self.failed.store(true, Ordering::Relaxed);
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            eprintln!(
                "reanimator fs: {msg}; recording stopped, the file system keeps serving (the \
                 trace holds what was written before)"
            );
            *f = Some(msg);
        }
        // Drop the writer without finishing: the trace stays readable up to its last extent.
        *w = None;
    }

    /// Stop recording with this failure (the trace keeps what was written).
    pub fn fail_with(&self, msg: String) {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        self.fail(&mut w, msg);
    }

    /// Write buffered records (called once a second).
    pub fn flush(&self) {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(wr) = w.as_mut() {
            if let Err(e) = wr.flush() {
                self.fail(&mut w, format!("cannot write the trace: {}", chain(&e)));
            }
        }
    }

    /// Close the current aggregate interval: store its rows in the trace and return them.
    pub fn rotate_interval(&self) -> Interval {
        let now = now_ns();
        let (start, map) = {
            let mut a = self.agg.lock().unwrap_or_else(|e| e.into_inner());
            let start = std::mem::replace(&mut a.0, now);
            (start, std::mem::take(&mut a.1))
        };
        let mut rows: Vec<(String, String, Stats)> =
            map.into_iter().map(|((op, g), s)| (op.to_string(), g, s)).collect();
        rows.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let iv = Interval { start_ns: start, end_ns: now, rows };
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(wr) = w.as_mut() {
            for (op, g, s) in &iv.rows {
                let row = ra_trace::fsop::AggregateRow {
                    interval_start: iv.start_ns,
                    interval_end: iv.end_ns,
                    op,
                    group: g,
                    stats: s,
                };
                if let Err(e) = wr.append_fs_aggregate(&row) {
                    self.fail(&mut w, format!("cannot write the trace: {}", chain(&e)));
                    break;
                }
            }
        }
        iv
    }

    /// Finish the trace (index and trailer). Returns the first failure, if any. A pause
    /// still in force ends here (its operations are counted as at a resume).
    pub fn finish(&self) -> Option<String> {
        let me = (
            rustix::process::getuid().as_raw(),
            rustix::process::getgid().as_raw(),
            std::process::id() as i32,
        );
        let _ = self.end_pause(me, "resume (the trace ends while paused)");
        drop(self.print.lock().unwrap_or_else(|e| e.into_inner()).take());
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(wr) = w.take() {
            if let Err(e) = wr.finish() {
                self.fail(&mut None, format!("cannot finish the trace: {}", chain(&e)));
            }
        }
        drop(w);
        self.failure.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Add a fact to the trace header.
    pub fn add_info(&self, key: &str, value: &[u8]) {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(wr) = w.as_mut() {
            if let Err(e) = wr.add_info(key, value) {
                self.fail(&mut w, format!("cannot write the trace: {}", chain(&e)));
            }
        }
    }
}

/// The most tracers one mount takes (`--tracer`).
pub const MAX_TRACERS: usize = 16;

/// One tracer of the set and its aggregate interval.
pub struct Member {
    /// The tracer, shared with the passthrough's workers and the `fs ctl` thread.
    pub tracer: Arc<Tracer>,
    /// Its aggregate interval: the mount's loop closes an interval this often
    /// ([`Tracer::rotate_interval`]); None: no aggregate rows.
    pub every: Option<Duration>,
}

/// The tracers of one mount (Tracefs' several tracers): each operation is traced once (its
/// path and process looked up once) and offered to each, which passes it through its own
/// filter, data mode and drivers into its own trace.
pub struct Tracers {
    /// The tracers in `--tracer` order, the mount's own first; at most [`MAX_TRACERS`]
    /// (a tracer is a bit of the `u32` masks of [`Tracers::passes`]).
    pub list: Vec<Member>,
}

impl Tracers {
    /// The mount's own tracer (from [`crate::MountConfig`], not `--tracer`); its /proc cache
    /// serves them all. Panics on an empty set, which [`crate::mount`] never builds.
    pub fn first(&self) -> &Tracer {
        &self.list[0].tracer
    }

    /// Whether any tracer wants operations at all.
    pub fn active(&self) -> bool {
        self.list.iter().any(|m| m.tracer.opts.stream || m.tracer.opts.aggregate.is_some())
    }

    /// Whether a record must be durable before its operation is answered (`--sync`).
    pub fn sync(&self) -> bool {
        self.list.iter().any(|m| m.tracer.opts.sync.is_some())
    }

    /// The calling process (one cache for the mount: the first tracer's).
    pub fn proc_info(&self, tid: u32) -> ProcInfo {
        self.first().proc_info(tid)
    }

    /// Which tracers take this operation (bit i: tracer i).
    pub fn passes(&self, v: &FilterView<'_>) -> u32 {
        let mut mask = 0;
        for (i, m) in self.list.iter().enumerate() {
            if m.tracer.passes(v) {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// Hand the record to the tracers in `mask`, each keeping of `buf` (the operation's data
    /// buffer, if it has one) what its data mode says; the hash is computed at most once.
    pub fn emit<'a>(&self, mut r: FsRecord<'a>, buf: Option<Buf<'a>>, mask: u32) {
        let hash = OnceCell::new();
        for (i, m) in self.list.iter().enumerate() {
            if mask & (1 << i) == 0 {
                continue;
            }
            if let Some(b) = buf {
                r.data = m.tracer.data_shared(b, &hash);
            }
            m.tracer.emit(&r, None);
        }
    }

    /// The tracer `fs ctl --tracer` names: its number (from 1) or its name.
    pub fn find(&self, which: &str) -> Result<&Tracer, String> {
        self.list
            .iter()
            .enumerate()
            .find(|(i, m)| m.tracer.opts.name == which || (i + 1).to_string() == which)
            .map(|(_, m)| &*m.tracer)
            .ok_or_else(|| {
                let names: Vec<String> = self
                    .list
                    .iter()
                    .enumerate()
                    .map(|(i, m)| format!("{} ({})", i + 1, m.tracer.opts.name))
                    .collect();
                format!("no tracer `{which}` on this mount; tracers: {}", names.join(", "))
            })
    }

    /// Every tracer's buffered records written ([`Tracer::flush`]; the mount's loop, once a
    /// second).
    pub fn flush(&self) {
        for m in &self.list {
            m.tracer.flush();
        }
    }

    /// Adds the fact `key` = `value` to every tracer's trace header.
    pub fn add_info(&self, key: &str, value: &[u8]) {
        for m in &self.list {
            m.tracer.add_info(key, value);
        }
    }

    /// Stops every tracer's recording with the failure `msg` (their traces keep what was
    /// written).
    pub fn fail_with(&self, msg: String) {
        for m in &self.list {
            m.tracer.fail_with(msg.clone());
        }
    }
}

/// An interval as bcc-style text: one line per operation with count, errors, bytes, mean and
/// max latency, then its log2 histogram in nanoseconds (bcc's layout).
pub fn format_interval(iv: &Interval, histograms: bool) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let secs = (iv.end_ns - iv.start_ns) as f64 / 1e9;
    let _ = writeln!(s, "--- {} .. {} ({secs:.1} s)", fmt_time(iv.start_ns), fmt_time(iv.end_ns));
    let _ = writeln!(
        s,
        "{:<16} {:<16} {:>9} {:>7} {:>12} {:>10} {:>10}",
        "op", "group", "count", "errors", "bytes", "avg_us", "max_us"
    );
    for (op, g, st) in &iv.rows {
        let avg = if st.count > 0 { st.total_ns as f64 / st.count as f64 / 1e3 } else { 0.0 };
        let _ = writeln!(
            s,
            "{op:<16} {:<16} {:>9} {:>7} {:>12} {avg:>10.1} {:>10.1}",
            if g.is_empty() { "-" } else { g },
            st.count,
            st.errors,
            st.bytes,
            st.max_ns as f64 / 1e3
        );
        if histograms {
            s.push_str(&log2_histogram(st));
        }
    }
    s
}

fn fmt_time(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let (h, m, sec) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    format!("{h:02}:{m:02}:{sec:02}")
}

/// An aggregate row's latencies as the profile model's histogram (the one histogram concept:
/// `ra_profile::Hist`, whose buckets `Stats` shares).
pub fn to_hist(st: &Stats) -> ra_profile::Hist {
    ra_profile::Hist {
        buckets: st.hist,
        count: st.count,
        total_ns: st.total_ns,
        min_ns: st.min_ns,
        max_ns: st.max_ns,
        errors: st.errors,
    }
}

/// An aggregate interval as a latency profile's (`reanimator fs mount --profile`): layer `fs`,
/// one histogram per operation and group (`uid=N`, `path=/a/b`, as `group_by` made them).
pub fn to_profile_interval(
    iv: &Interval,
    partial: bool,
    group_by: &GroupBy,
) -> ra_profile::Interval {
    let hists = iv
        .rows
        .iter()
        .map(|(op, g, st)| {
            let group = match group_by {
                GroupBy::Op => String::new(),
                GroupBy::Uid => format!("uid={g}"),
                GroupBy::PathPrefix(_) => format!("path={g}"),
            };
            (ra_profile::Key { layer: "fs".into(), op: op.clone(), group }, to_hist(st))
        })
        .collect();
    ra_profile::Interval {
        start_ns: iv.start_ns.max(0) as u64,
        end_ns: iv.end_ns.max(0) as u64,
        partial,
        hists,
        counters: Default::default(),
    }
}

/// bcc's `print_log2_hist` layout in nanoseconds, exactly the buckets counted, and the
/// histogram's consistency check (ra_profile's printer).
pub fn log2_histogram(st: &Stats) -> String {
    let h = to_hist(st);
    let mut out = Vec::new();
    let rows = ra_profile::rows::hist_rows(&h.buckets);
    // Writing into a Vec cannot fail.
    let _ = ra_profile::text::write_log2_hist(&mut out, &rows);
    if !rows.rows.is_empty() {
        let _ = ra_profile::text::write_check(&mut out, &h.check());
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_of_paths() {
        assert_eq!(extension(b"/a/b.txt"), Some(&b"txt"[..]));
        assert_eq!(extension(b"/a.d/b"), None);
        assert_eq!(extension(b"/a/.bashrc"), None);
        assert_eq!(extension(b"x.tar.gz"), Some(&b"gz"[..]));
    }

    #[test]
    fn stats_buckets_add_up() {
        let mut s = Stats::default();
        for ns in [0, 1, 2, 3, 999, 1000, 1_000_000, u64::MAX / 2] {
            s.add(ns, 1, false);
        }
        assert_eq!(s.hist.iter().sum::<u64>(), s.count);
        assert_eq!(s.hist[0], 1);
        assert_eq!(s.hist[1], 1);
        assert_eq!(s.hist[2], 2);
        let h = log2_histogram(&s);
        assert!(h.contains("nsecs                         : count    distribution"), "{h}");
        assert!(h.contains("                   2 -> 3                    : 2 "), "{h}");
        assert!(h.contains("check: ok (buckets 8 = count 8;"), "{h}");
    }

    #[test]
    fn filter_view_reads_lazily() {
        let f: Filter = "path ~ \"/m/**.log\" && op == write".parse().unwrap();
        let calls = std::cell::Cell::new(0);
        let path = || {
            calls.set(calls.get() + 1);
            Some(b"/m/x/a.log".to_vec())
        };
        let proc_info = ProcInfo::default;
        let v = FilterView::new("read", 0, 0, 1, 0, None, None, &path, &proc_info);
        assert!(!f.matches(&v));
        let v = FilterView::new("write", 0, 0, 1, 0, Some(3), None, &path, &proc_info);
        assert!(f.matches(&v));
        let (p, _) = v.take();
        assert_eq!(p.as_deref(), Some(&b"/m/x/a.log"[..]));
        assert_eq!(calls.get(), 2, "path computed once per view that needed it");
    }
}
