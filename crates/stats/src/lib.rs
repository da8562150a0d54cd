//! `ra-stats`: what `reanimator stats` computes — strace `-c`'s summary of a trace and what a
//! storage researcher asks next (per process, thread, program, file, directory or errno:
//! calls, errors, time, latency quantiles, bytes read and written, I/O sizes; the busiest
//! files), in one streaming pass over a trace's events with bounded memory.
//!
//! Feed every event of a trace in order to [`Accumulator::add`] (those a filter leaves out
//! too, marked so: they still move the descriptor tables that say which file a call was on),
//! or an aggregate-only fs trace's rows to [`Accumulator::add_aggregate`]; then
//! [`Accumulator::finish`] gives a [`Summary`], which the caller prints.
//!
//! Memory is bounded whatever the trace: a group's latencies are counted in log-linear
//! buckets ([`hist::LatencyHist`], no samples kept), and a group table holds at most
//! [`Options::max_groups`] rows: when it is full, the half that weighs least (by the sort key)
//! is folded into one "other" row, whose size the summary states ([`Table::folded`]). Files
//! are found with [`ra_trace::fileio`] (descriptors followed per process, as `export` does);
//! its tables grow with the processes and paths a trace holds, not with its calls.
//!
//! # Parts
//!
//! What `reanimator stats` computes (docs/ANALYSIS.md): one streaming pass over a trace's events
//! (or an aggregate-only fs trace's rows) into bounded group tables (per call, strace call class,
//! pid, tid, program, file, directory or errno; full tables fold their lightest half into an
//! `other` row) of calls, errors, summed latency, log-linear latency histograms
//! (`hist::LatencyHist`: quantiles within 1/16, no samples), bytes read and written and log2 I/O
//! sizes; files found through `ra_trace::fileio` (`FileIoTracker::fd_target`). Computes only; the
//! CLI prints.
#![warn(missing_docs)]

pub mod hist;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ra_syscalls::{ArgKind, Handler};
use ra_trace::fileio::{FdTarget, FileIoTracker};
use ra_trace::fsop::FsAggregateRow;
use ra_trace::{ArgValue, Event};

pub use hist::{LatencyHist, SizeHist};

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// What rows of the table are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupBy {
    /// The call, by its kernel name (`pread64`, `newfstatat`, as strace names it); a file
    /// system operation by its FUSE name.
    Call,
    /// The process id.
    Pid,
    /// The thread id.
    Tid,
    /// The program: the process's name as the kernel would have it (the last component of
    /// the file it last executed, 15 bytes at most; inherited over fork and clone).
    Comm,
    /// The file the call was on: its path argument, or the file its descriptor names.
    File,
    /// The directory of that file; with a depth, its first `depth` components.
    Dir {
        /// Components kept from the root (`None`: the whole directory).
        depth: Option<usize>,
    },
    /// The error the call returned (`ENOENT`), `success` for calls that did not fail.
    Errno,
    /// strace's call classes (`%file`, `%desc`, ...; [`ra_syscalls::CallClasses`]): a call
    /// counts in every class it belongs to (rows overlap), `<none>` for calls in none.
    Class,
}

impl GroupBy {
    /// The `--by` name (`call`, `dir`, ...), as the JSON's `by` says it.
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Call => "call",
            GroupBy::Pid => "pid",
            GroupBy::Tid => "tid",
            GroupBy::Comm => "comm",
            GroupBy::File => "file",
            GroupBy::Dir { .. } => "dir",
            GroupBy::Errno => "errno",
            GroupBy::Class => "class",
        }
    }
}

/// The order of rows (strace's `-S` keys, plus bytes). Every key but `Name` and `Nothing`
/// sorts largest first, ties by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Summed latency (strace's default).
    Time,
    /// The shortest latency of the group.
    MinTime,
    /// The longest latency of the group.
    MaxTime,
    /// The mean latency.
    AvgTime,
    /// Calls made.
    Calls,
    /// Calls that failed.
    Errors,
    /// Bytes read and written.
    Bytes,
    /// By name, ascending.
    Name,
    /// The order in which groups first appeared.
    Nothing,
}

impl SortKey {
    /// The weight by which a full table folds its lightest groups.
    fn weight(self, g: &Group) -> u64 {
        match self {
            SortKey::Time | SortKey::Nothing | SortKey::Name => g.total_ns,
            SortKey::MinTime => g.latency.min().unwrap_or(0),
            SortKey::MaxTime => g.latency.max().unwrap_or(0),
            SortKey::AvgTime => g.avg_ns().unwrap_or(0),
            SortKey::Calls => g.calls,
            SortKey::Errors => g.errors,
            SortKey::Bytes => g.read_bytes + g.written_bytes,
        }
    }
}

/// The options of one summary.
#[derive(Clone, Debug)]
pub struct Options {
    /// What a row of the table is.
    pub by: GroupBy,
    /// Rows the group table holds before it folds the lightest half into "other".
    pub max_groups: usize,
    /// Also keep a table of files (for the busiest files).
    pub files: bool,
    /// Rows the file table holds before it folds.
    pub max_files: usize,
    /// What weighs in folding (the order the rows will be shown in).
    pub sort: SortKey,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            by: GroupBy::Call,
            max_groups: 10_000,
            files: false,
            max_files: 10_000,
            sort: SortKey::Time,
        }
    }
}

/// The statistics of one group of calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// Calls counted.
    pub calls: u64,
    /// Calls that returned an error.
    pub errors: u64,
    /// Summed latency (time_returned - time_called) of the calls that have one.
    pub total_ns: u64,
    /// Latencies of the calls that have one (`latency.count()` of them).
    pub latency: LatencyHist,
    /// Bytes moved by reads (read, pread64, readv, preadv, preadv2, the input of
    /// sendfile/copy_file_range/splice; a file system's `read`), and the calls.
    pub read_bytes: u64,
    /// Calls that read.
    pub reads: u64,
    /// Bytes moved by writes (write, pwrite64, writev, ..., the output side of the copies).
    pub written_bytes: u64,
    /// Calls that wrote.
    pub writes: u64,
    /// Sizes of the reads and writes (bytes moved, 0 for end of file).
    pub read_sizes: SizeHist,
    /// Sizes of the writes.
    pub write_sizes: SizeHist,
    /// The order in which the group first appeared (for [`SortKey::Nothing`]).
    pub first_seen: u64,
}

impl Group {
    /// Mean latency of the timed calls.
    pub fn avg_ns(&self) -> Option<u64> {
        let n = self.latency.count();
        (n > 0).then(|| self.total_ns / n)
    }

    /// Add `o`'s counts to these (histograms merged exactly).
    pub fn merge(&mut self, o: &Group) {
        if self.calls == 0 || o.first_seen < self.first_seen {
            self.first_seen = o.first_seen;
        }
        self.calls += o.calls;
        self.errors += o.errors;
        self.total_ns += o.total_ns;
        self.latency.merge(&o.latency);
        self.read_bytes += o.read_bytes;
        self.reads += o.reads;
        self.written_bytes += o.written_bytes;
        self.writes += o.writes;
        self.read_sizes.merge(&o.read_sizes);
        self.write_sizes.merge(&o.write_sizes);
    }

    fn add(&mut self, c: &CallFacts) {
        self.calls += c.calls;
        self.errors += c.errors;
        if let Some(ns) = c.latency_ns {
            self.total_ns += ns;
            self.latency.add(ns);
        }
        if let Some(n) = c.read {
            self.read_bytes += n;
            self.reads += 1;
            self.read_sizes.add(n);
        }
        if let Some(n) = c.written {
            self.written_bytes += n;
            self.writes += 1;
            self.write_sizes.add(n);
        }
    }
}

/// What one event adds to its group.
struct CallFacts {
    calls: u64,
    errors: u64,
    latency_ns: Option<u64>,
    read: Option<u64>,
    written: Option<u64>,
}

/// A group table bounded in rows: when full, the lightest half (by [`SortKey`]) is folded
/// into [`Table::other`].
#[derive(Clone, Debug)]
pub struct Table {
    rows: Map<Box<[u8]>, Group>,
    cap: usize,
    sort: SortKey,
    seq: u64,
    /// The groups folded away, summed.
    pub other: Group,
    /// How many groups were folded into `other` (a key seen again after it was folded
    /// starts a new row and may be folded again: counted each time).
    pub folded: u64,
}

impl Table {
    fn new(cap: usize, sort: SortKey) -> Table {
        Table {
            rows: Map::default(),
            cap: cap.max(2),
            sort,
            seq: 0,
            other: Group::default(),
            folded: 0,
        }
    }

    fn row(&mut self, key: &[u8]) -> &mut Group {
        if !self.rows.contains_key(key) {
            if self.rows.len() >= self.cap {
                self.fold();
            }
            self.seq += 1;
            let g = Group { first_seen: self.seq, ..Group::default() };
            self.rows.insert(key.into(), g);
        }
        self.rows.get_mut(key).expect("inserted")
    }

    /// Fold the lighter half of the rows into `other`.
    fn fold(&mut self) {
        let mut w: Vec<(u64, u64, Box<[u8]>)> =
            self.rows.iter().map(|(k, g)| (self.sort.weight(g), g.first_seen, k.clone())).collect();
        w.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        for (_, _, k) in w.into_iter().take(self.rows.len() - self.cap / 2) {
            if let Some(g) = self.rows.remove(&k) {
                self.other.merge(&g);
                self.folded += 1;
            }
        }
    }

    /// The rows, in no particular order.
    pub fn rows(&self) -> impl Iterator<Item = (&[u8], &Group)> {
        self.rows.iter().map(|(k, g)| (&k[..], g))
    }

    /// Groups held (the folded `other` row not among them).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table holds no group.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows in `key` order; with `top`, the first `top` of them and the rest (with
    /// `other`) summed, and how many groups that sum holds.
    pub fn sorted(&self, key: SortKey, top: Option<usize>) -> Sorted<'_> {
        let mut v: Vec<(&[u8], &Group)> = self.rows().collect();
        let desc = |f: fn(&Group) -> u64| {
            move |a: &(&[u8], &Group), b: &(&[u8], &Group)| f(b.1).cmp(&f(a.1)).then(a.0.cmp(b.0))
        };
        match key {
            SortKey::Name => v.sort_unstable_by(|a, b| a.0.cmp(b.0)),
            SortKey::Nothing => v.sort_unstable_by_key(|r| r.1.first_seen),
            SortKey::Time => v.sort_unstable_by(desc(|g| g.total_ns)),
            SortKey::MinTime => v.sort_unstable_by(desc(|g| g.latency.min().unwrap_or(0))),
            SortKey::MaxTime => v.sort_unstable_by(desc(|g| g.latency.max().unwrap_or(0))),
            SortKey::AvgTime => v.sort_unstable_by(desc(|g| g.avg_ns().unwrap_or(0))),
            SortKey::Calls => v.sort_unstable_by(desc(|g| g.calls)),
            SortKey::Errors => v.sort_unstable_by(desc(|g| g.errors)),
            SortKey::Bytes => v.sort_unstable_by(desc(|g| g.read_bytes + g.written_bytes)),
        }
        let mut rest = self.other.clone();
        let mut rest_groups = self.folded;
        if let Some(n) = top {
            for (_, g) in v.iter().skip(n) {
                rest.merge(g);
                rest_groups += 1;
            }
            v.truncate(n);
        }
        Sorted { rows: v, rest: (rest_groups > 0).then_some((rest_groups, rest)) }
    }
}

/// Rows in order ([`Table::sorted`]).
pub struct Sorted<'a> {
    /// Each row's label and its group, in the order asked for.
    pub rows: Vec<(&'a [u8], &'a Group)>,
    /// The groups beyond `top` and those folded away: how many, and their sum.
    pub rest: Option<(u64, Group)>,
}

/// Everything one pass found.
#[derive(Clone, Debug)]
pub struct Summary {
    /// What the rows of `groups` are.
    pub by: GroupBy,
    /// The group table.
    pub groups: Table,
    /// Every counted call.
    pub total: Group,
    /// Per file, when [`Options::files`] asked for them.
    pub files: Option<Table>,
    /// Events read, and those counted (the rest a filter left out).
    pub events: u64,
    /// Events counted.
    pub counted: u64,
    /// Counted calls without a latency: no time_returned (exit_group, a call the trace ends
    /// inside), or returned before called (a clock step).
    pub untimed: u64,
    /// Of those, the calls that returned before they were called.
    pub negative: u64,
    /// Aggregate rows of `fs mount --aggregate-only` traces counted (their calls are in the
    /// groups by operation).
    pub aggregate_rows: u64,
    /// First time_called and last time_returned of the counted calls (ns since the epoch).
    pub first_ns: Option<i64>,
    /// The last time_returned.
    pub last_ns: Option<i64>,
    /// Distinct processes and threads among the counted calls.
    pub processes: u64,
    /// Distinct threads.
    pub threads: u64,
    /// Traces summed.
    pub traces: u64,
}

impl Summary {
    /// The time from the first call to the last return, when known.
    pub fn span_ns(&self) -> Option<u64> {
        Some(u64::try_from(self.last_ns? - self.first_ns?).unwrap_or(0))
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Where a call's file was, for grouping by file or directory.
enum FileKey<'a> {
    Path(&'a [u8]),
    Owned(Vec<u8>),
    /// A descriptor on something else, by the kernel's name of it (`pipe:[1234]`, a `/dev`
    /// path).
    Object(&'a [u8]),
    /// A descriptor opened in the trace on a path that did not resolve.
    Other,
    /// A descriptor never shown opened (pipe, socket, inherited).
    Unknown,
    /// The call names no file.
    None,
}

/// Labels of calls whose file is not a path.
pub const NO_FILE: &str = "<no file>";
/// A descriptor opened in the trace on a path that did not resolve to a file.
pub const NOT_A_FILE: &str = "<unresolved path>";
/// A descriptor the trace never saw opened (inherited, or not a file).
pub const UNKNOWN_FD: &str = "<pipe, socket or inherited descriptor>";

/// One streaming pass over one or more traces.
pub struct Accumulator {
    opts: Options,
    tracker: Option<FileIoTracker>,
    /// Process -> program name (for `--by comm`), from execs and inherited over clones.
    comms: Map<i32, Arc<[u8]>>,
    pending_comm: Map<i32, Arc<[u8]>>,
    groups: Table,
    files: Option<Table>,
    total: Group,
    pids: HashSet<i32, foldhash::fast::RandomState>,
    tids: HashSet<i32, foldhash::fast::RandomState>,
    events: u64,
    counted: u64,
    untimed: u64,
    negative: u64,
    aggregate_rows: u64,
    first_ns: Option<i64>,
    last_ns: Option<i64>,
    key: Vec<u8>,
    path: Vec<u8>,
    traces: u64,
}

impl Accumulator {
    /// An empty accumulator counting as `opts` say.
    pub fn new(opts: Options) -> Accumulator {
        let files = opts.files.then(|| Table::new(opts.max_files, SortKey::Bytes));
        Accumulator {
            groups: Table::new(opts.max_groups, opts.sort),
            files,
            tracker: None,
            comms: Map::default(),
            pending_comm: Map::default(),
            total: Group::default(),
            pids: Default::default(),
            tids: Default::default(),
            events: 0,
            counted: 0,
            untimed: 0,
            negative: 0,
            aggregate_rows: 0,
            first_ns: None,
            last_ns: None,
            key: Vec::new(),
            path: Vec::new(),
            traces: 0,
            opts,
        }
    }

    /// Start a trace: `cwd` is the directory its command started in (the `cwd` fact), against
    /// which relative paths resolve; `command` its command line (the `command` fact), whose
    /// program names the first process until it executes another. Process ids of one trace
    /// mean nothing in the next: descriptor tables and names start afresh.
    pub fn begin_trace(&mut self, cwd: Option<&[u8]>, command: Option<&[u8]>) {
        self.traces += 1;
        let wants_files =
            self.opts.files || matches!(self.opts.by, GroupBy::File | GroupBy::Dir { .. });
        self.tracker = wants_files.then(|| FileIoTracker::new(cwd));
        self.comms.clear();
        self.pending_comm.clear();
        if let Some(prog) = command.and_then(|c| c.split(|&b| b == b' ').find(|w| !w.is_empty())) {
            // The first process seen takes the command's name (a `0` key: see `comm_of`).
            self.pending_comm.insert(0, comm_name(prog));
        }
    }

    /// One event of the trace, in order. `counted`: false for an event a filter leaves out
    /// (it still moves descriptor tables and program names).
    pub fn add(&mut self, ev: &Event, counted: bool) {
        if self.traces == 0 {
            self.begin_trace(None, None);
        }
        self.events += 1;
        let pid = ev.pid.unwrap_or(0);
        let comm = self.comm_of(ev, pid);
        // A delivered signal is no call: strace -c does not count signals either.
        if !counted || ev.def.is_some_and(|d| d.is_signal()) {
            self.step(ev, pid, comm);
            return;
        }
        self.counted += 1;
        if let Some(p) = ev.pid {
            self.pids.insert(p);
        }
        if let Some(t) = ev.tid.or(ev.pid) {
            self.tids.insert(t);
        }
        let latency_ns = match ev.duration_ns() {
            Some(d) if d >= 0 => Some(d as u64),
            Some(_) => {
                self.negative += 1;
                None
            }
            None => {
                self.untimed += 1;
                None
            }
        };
        if let Some(t) = ev.time_called {
            self.first_ns = min_opt(self.first_ns, Some(t));
        }
        if let Some(t) = ev.time_returned.or(ev.time_called) {
            self.last_ns = self.last_ns.max(Some(t));
        }
        let (read, written) = data_moved(ev);
        let facts =
            CallFacts { calls: 1, errors: u64::from(ev.failed()), latency_ns, read, written };
        self.total.add(&facts);
        let need_file =
            self.files.is_some() || matches!(self.opts.by, GroupBy::File | GroupBy::Dir { .. });
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        if need_file {
            let mut path = std::mem::take(&mut self.path);
            path.clear();
            // A path request's file as its call's (OPENAT's path beneath its directory).
            let eff = ra_trace::uring::effective(ev);
            let is_path = match self.file_of(&eff, pid) {
                FileKey::Path(p) => {
                    path.extend_from_slice(p);
                    true
                }
                FileKey::Owned(p) => {
                    path = p;
                    true
                }
                FileKey::Object(p) => {
                    path.extend_from_slice(p);
                    false
                }
                FileKey::Other => {
                    path.extend_from_slice(NOT_A_FILE.as_bytes());
                    false
                }
                FileKey::Unknown => {
                    path.extend_from_slice(UNKNOWN_FD.as_bytes());
                    false
                }
                FileKey::None => {
                    path.extend_from_slice(NO_FILE.as_bytes());
                    false
                }
            };
            if let Some(files) = self.files.as_mut() {
                if is_path {
                    files.row(&path).add(&facts);
                }
            }
            match self.opts.by {
                GroupBy::File => key.extend_from_slice(&path),
                GroupBy::Dir { depth } if is_path => dir_of(&path, depth, &mut key),
                GroupBy::Dir { .. } => key.extend_from_slice(&path),
                _ => {}
            }
            self.path = path;
        }
        match self.opts.by {
            GroupBy::Call => key.extend_from_slice(call_name(ev).as_bytes()),
            GroupBy::Pid => push_id(&mut key, ev.pid),
            GroupBy::Tid => push_id(&mut key, ev.tid.or(ev.pid)),
            GroupBy::Comm => key.extend_from_slice(comm.as_deref().unwrap_or(b"?")),
            GroupBy::Errno => match ev.errno.filter(|&e| e != 0) {
                None => key.extend_from_slice(b"success"),
                Some(e) => match ra_trace::format::errno_name(e) {
                    Some(n) => key.extend_from_slice(n.as_bytes()),
                    None => key.extend_from_slice(format!("errno {e}").as_bytes()),
                },
            },
            GroupBy::Class => {
                let classes = ev.def.map(|d| d.classes()).unwrap_or(ra_syscalls::CallClasses::NONE);
                let mut any = false;
                for c in classes.names() {
                    any = true;
                    key.clear();
                    key.extend_from_slice(c.as_bytes());
                    self.groups.row(&key).add(&facts);
                }
                key.clear();
                if !any {
                    key.extend_from_slice(b"<none>");
                    self.groups.row(&key).add(&facts);
                }
                self.key = key;
                self.step(ev, pid, comm);
                return;
            }
            GroupBy::File | GroupBy::Dir { .. } => {}
        }
        self.groups.row(&key).add(&facts);
        self.key = key;
        self.step(ev, pid, comm);
    }

    /// One row of an aggregate-only fs trace (`fs mount --aggregate-only`): its calls count
    /// under the operation's name (the rows carry no processes or single files; grouped by
    /// anything else, they go to one `<aggregate rows>` group). Its read and write bytes are
    /// summed, without sizes (the rows hold none).
    pub fn add_aggregate(&mut self, row: &FsAggregateRow) {
        if self.traces == 0 {
            self.begin_trace(None, None);
        }
        self.aggregate_rows += 1;
        let st = &row.stats;
        let mut g =
            Group { calls: st.count, errors: st.errors, total_ns: st.total_ns, ..Group::default() };
        g.latency.add_log2(&st.hist, st.min_ns, st.max_ns);
        match ra_syscalls::io_class(&row.operation) {
            ra_syscalls::IoClass::Read => {
                g.read_bytes = st.bytes;
                g.reads = st.count;
            }
            ra_syscalls::IoClass::Write => {
                g.written_bytes = st.bytes;
                g.writes = st.count;
            }
            _ => {}
        }
        self.counted += st.count;
        self.events += st.count;
        if st.count > 0 {
            self.first_ns = min_opt(self.first_ns, Some(row.interval_start_ns));
            self.last_ns = self.last_ns.max(Some(row.interval_end_ns));
        }
        self.total.merge(&g);
        let key: &[u8] = match self.opts.by {
            GroupBy::Call => row.operation.as_bytes(),
            _ => b"<aggregate rows>",
        };
        let row_g = self.groups.row(key);
        let first = row_g.first_seen;
        row_g.merge(&g);
        row_g.first_seen = first;
    }

    /// Events (and aggregate rows' calls) added so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The summary of everything added.
    pub fn finish(self) -> Summary {
        Summary {
            by: self.opts.by,
            groups: self.groups,
            total: self.total,
            files: self.files,
            events: self.events,
            counted: self.counted,
            untimed: self.untimed,
            negative: self.negative,
            aggregate_rows: self.aggregate_rows,
            first_ns: self.first_ns,
            last_ns: self.last_ns,
            processes: self.pids.len() as u64,
            threads: self.tids.len() as u64,
            traces: self.traces.max(1),
        }
    }

    /// Move the process model past the event: descriptor tables, program names.
    fn step(&mut self, ev: &Event, pid: i32, comm: Option<Arc<[u8]>>) {
        if let Some(t) = self.tracker.as_mut() {
            t.apply(ev, &mut |_, _| true, &mut Vec::new());
        }
        if !matches!(self.opts.by, GroupBy::Comm) {
            return;
        }
        let Some(h) = ev.def.and_then(|d| d.replay.handler()) else { return };
        let ok = !ev.failed();
        match h {
            Handler::Exec if ok => {
                let prog = ev.def.and_then(|d| {
                    d.args.iter().zip(&ev.args).find_map(|(a, v)| match (a.kind, v) {
                        (ArgKind::Path, ArgValue::Data(d)) => Some(d.clone()),
                        _ => None,
                    })
                });
                if let Some(p) = prog {
                    self.comms.insert(pid, comm_name(strip_nul(&p)));
                }
            }
            Handler::Clone if ok => {
                let child = ev.ret.unwrap_or(0) as i32;
                if child > 0 && child != pid {
                    if let Some(c) = comm {
                        self.pending_comm.insert(child, c);
                    }
                }
            }
            Handler::Exit if ev.def.is_some_and(|d| d.ends_process) => {
                self.comms.remove(&pid);
            }
            _ => {}
        }
    }

    /// The program name of the event's process (fs events carry their own).
    fn comm_of(&mut self, ev: &Event, pid: i32) -> Option<Arc<[u8]>> {
        if !matches!(self.opts.by, GroupBy::Comm) {
            return None;
        }
        if ev.def.is_none() {
            return ev.extra_bytes("executing_comm").map(Arc::from);
        }
        if let Some(c) = self.comms.get(&pid) {
            return Some(c.clone());
        }
        // A new process: its creator's name, else its parent's, else (the first process of
        // the trace) the command's.
        let c = self
            .pending_comm
            .remove(&pid)
            .or_else(|| ev.ppid.and_then(|pp| self.comms.get(&pp).cloned()))
            .or_else(|| self.pending_comm.remove(&0));
        if let Some(c) = &c {
            self.comms.insert(pid, c.clone());
        }
        c
    }

    /// The file a call was on: its path argument (resolved against its directory descriptor
    /// or the working directory), else the file its descriptor names.
    fn file_of<'a>(&'a self, ev: &'a Event, pid: i32) -> FileKey<'a> {
        let Some(def) = ev.def else {
            // A file-system operation names its file.
            return match ev.extra_bytes("pathname") {
                Some(p) if !p.is_empty() => FileKey::Path(p),
                _ => FileKey::None,
            };
        };
        let Some(t) = self.tracker.as_ref() else { return FileKey::None };
        if ev.uring_fixed_file() {
            // An index into the ring's registered files: the file its slot was registered
            // from, when the trace shows the registration.
            return match t.uring_fixed_target(ev) {
                Some((_, target)) => fd_key(target),
                None => FileKey::Unknown,
            };
        }
        let mut dirfd = None;
        let mut fd = None;
        for (a, v) in def.args.iter().zip(&ev.args) {
            match a.kind {
                ArgKind::DirFd if dirfd.is_none() => dirfd = v.as_int(),
                ArgKind::Fd if fd.is_none() => fd = v.as_int(),
                // (An absent path: an io_uring request of an opcode without one.)
                ArgKind::Path if !matches!(v, ArgValue::Absent) => {
                    let p = v.as_data().map(strip_nul).unwrap_or_default();
                    let base: Option<&[u8]> = match dirfd {
                        None | Some(-100) => t.cwd(pid),
                        Some(d) => match t.fd_target(pid, d) {
                            FdTarget::Dir(p) | FdTarget::File(p) => Some(&**p),
                            _ => None,
                        },
                    };
                    if p.is_empty() {
                        // AT_EMPTY_PATH: the directory descriptor itself.
                        if let Some(d) = dirfd.filter(|&d| d != -100) {
                            return fd_key(t.fd_target(pid, d));
                        }
                        return FileKey::None;
                    }
                    return match ra_trace::fileio::normalize(p, base) {
                        Some(n) => FileKey::Owned(n),
                        None => FileKey::Unknown,
                    };
                }
                _ => {}
            }
        }
        match fd {
            Some(fd) => fd_key(t.fd_target(pid, fd)),
            None => FileKey::None,
        }
    }
}

fn fd_key(t: FdTarget<'_>) -> FileKey<'_> {
    match t {
        FdTarget::File(p) | FdTarget::Dir(p) => FileKey::Path(p),
        FdTarget::Other(Some(name)) => FileKey::Object(name),
        FdTarget::Other(None) => FileKey::Other,
        FdTarget::Unknown => FileKey::Unknown,
    }
}

/// The name a call is counted under: the kernel's name (strace's), else the trace's.
pub fn call_name(ev: &Event) -> &str {
    if let Some(op) = ev.uring_op() {
        // An io_uring request is counted under its operation (`io_uring:write`).
        return op.call_name();
    }
    match ev.def {
        Some(d) => d.name,
        None => &ev.name,
    }
}

/// Bytes a call moved from a file or descriptor to the caller and the other way: `(read,
/// written)`. Reads and writes of the registry's read and write handlers and the two ends of
/// kernel-side copies; a file system's `read` and `write` operations. A failed call moved
/// nothing but still counts as an I/O of size 0.
pub fn data_moved(ev: &Event) -> (Option<u64>, Option<u64>) {
    let moved = || match (ev.failed(), ev.ret) {
        (false, Some(r)) if r > 0 => r as u64,
        _ => 0,
    };
    let Some(def) = ev.def else {
        if !ra_trace::fsop::is_fs_event(ev) {
            return (None, None);
        }
        let n = ev.extra_int("data_length").map_or_else(moved, |n| n.max(0) as u64);
        return match ev.name.as_str() {
            "read" => (Some(n), None),
            "write" => (None, Some(n)),
            _ => (None, None),
        };
    };
    match def.replay.handler() {
        Some(Handler::Read | Handler::ReadV) => (Some(moved()), None),
        Some(Handler::Write | Handler::WriteV) => (None, Some(moved())),
        Some(Handler::Copy) => (Some(moved()), Some(moved())),
        Some(Handler::UringOp) => {
            use ra_syscalls::uring::UringData;
            match ev.uring_op().map(|o| o.data) {
                Some(UringData::Out | UringData::OutVec) => (Some(moved()), None),
                Some(UringData::In | UringData::InVec) => (None, Some(moved())),
                _ => (None, None),
            }
        }
        _ => (None, None),
    }
}

fn push_id(key: &mut Vec<u8>, id: Option<i32>) {
    match id {
        Some(i) => key.extend_from_slice(i.to_string().as_bytes()),
        None => key.push(b'?'),
    }
}

fn strip_nul(b: &[u8]) -> &[u8] {
    b.strip_suffix(&[0]).unwrap_or(b)
}

/// The kernel's name for a program executed from `path`: its last component, 15 bytes at most.
fn comm_name(path: &[u8]) -> Arc<[u8]> {
    let base = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    Arc::from(&base[..base.len().min(15)])
}

/// The directory of `path` (absolute), cut to its first `depth` components.
fn dir_of(path: &[u8], depth: Option<usize>, out: &mut Vec<u8>) {
    let dir = match path.iter().rposition(|&b| b == b'/') {
        Some(0) | None => &b"/"[..],
        Some(i) => &path[..i],
    };
    match depth {
        None => out.extend_from_slice(dir),
        Some(d) => {
            for c in dir.split(|&b| b == b'/').filter(|c| !c.is_empty()).take(d) {
                out.push(b'/');
                out.extend_from_slice(c);
            }
            if out.is_empty() {
                out.push(b'/');
            }
        }
    }
}

#[cfg(test)]
mod tests;
