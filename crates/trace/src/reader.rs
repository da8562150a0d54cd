//! [`TraceReader`]: events out of a trace file, in `unique_id` order, in bounded memory.
//!
//! A trace holds one extent stream per call type, in the order the writer flushed them. The
//! reader keeps one cursor per call type (the type's extent offsets, from the file's index or,
//! for an unfinished file without trailer, from a scan of the extent headers) and merges the
//! cursors on `unique_id` with a heap. Memory: one decoded extent per call type in use.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;

use dataseries::{CutTail, DsReader, Extent, ExtentType, FieldType, TrailerStatus, Value};
use ra_syscalls::{by_trace_name, ArgKind};

use crate::event::{ArgValue, Bytes, Event, ExtraValue, IovValue};
use crate::fsop::FS_OP_TYPE;
use crate::quirks::normalize_time;
use crate::schema::{CallLayout, BLOB_TYPE, INFO_TYPE, LOST_TYPE, PREFIX, SNAPSHOT_TYPE};
use crate::{Error, Result};

/// Who wrote the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// reanimator (has a `Reanimator::TraceInfo` extent type).
    Ours,
    /// The original Re-Animator tool chain (see [`crate::quirks`]).
    ReAnimator,
}

/// One `Reanimator::Lost` record: a batch of events a capture backend had to drop
/// (TRACE_FORMAT 3.6). A trace with any is incomplete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostRecord {
    /// Trace name of the call type of the lost events (empty if unknown).
    pub syscall: String,
    /// Number of events lost.
    pub count: i64,
    /// Bytes of buffer data lost (0 if unknown).
    pub bytes: i64,
    /// Start of the loss's time range, ns since the Unix epoch; `None` if unknown.
    pub time_first: Option<i64>,
    /// End of the loss's time range, ns since the Unix epoch; `None` if unknown.
    pub time_last: Option<i64>,
    /// Free text, such as `ring buffer full`.
    pub reason: String,
}

/// An open trace.
pub struct TraceReader {
    ds: DsReader,
    kind: TraceKind,
    layouts: Vec<CallLayout>,
    /// Extent offsets per layout, in file order.
    offsets: Vec<Vec<u64>>,
    info: Vec<(String, Vec<u8>)>,
    lost: Vec<LostRecord>,
    complete: bool,
    /// See [`TraceReader::cut_tail`].
    cut_tail: Option<CutTail>,
    /// `Reanimator::Snapshot` and `Reanimator::Blob` extents, in file order.
    snapshot_offsets: Vec<u64>,
    blob_offsets: Vec<u64>,
}

impl TraceReader {
    /// Open a trace: check the file, read its schema, info and loss records, and locate every
    /// extent.
    pub fn open(path: impl AsRef<Path>) -> Result<TraceReader> {
        let ds = DsReader::open(path)?;
        TraceReader::from_ds(ds)
    }

    /// Use an already open DataSeries file.
    pub fn from_ds(ds: DsReader) -> Result<TraceReader> {
        let kind = if ds.type_by_name(INFO_TYPE).is_some() {
            TraceKind::Ours
        } else {
            TraceKind::ReAnimator
        };
        let mut layouts = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for ty in ds.types() {
            if let Some(call) = ty.name().strip_prefix(PREFIX) {
                by_name.insert(ty.name().to_string(), layouts.len());
                layouts.push(CallLayout::resolve(by_trace_name(call), ty.clone()));
            } else if ty.name() == FS_OP_TYPE {
                by_name.insert(ty.name().to_string(), layouts.len());
                layouts.push(CallLayout::resolve(None, ty.clone()));
            }
        }
        if layouts.is_empty() {
            return Err(Error::NotATrace { prefix: PREFIX });
        }
        let mut offsets = vec![Vec::new(); layouts.len()];
        let mut info_offsets = Vec::new();
        let mut lost_offsets = Vec::new();
        let mut snapshot_offsets = Vec::new();
        let mut blob_offsets = Vec::new();
        let complete = matches!(ds.trailer_status(), TrailerStatus::Valid { .. });
        let mut cut_tail = None;
        let mut place = |off: u64, name: &str| {
            if let Some(&i) = by_name.get(name) {
                offsets[i].push(off);
            } else if name == INFO_TYPE {
                info_offsets.push(off);
            } else if name == LOST_TYPE {
                lost_offsets.push(off);
            } else if name == SNAPSHOT_TYPE {
                snapshot_offsets.push(off);
            } else if name == BLOB_TYPE {
                blob_offsets.push(off);
            }
        };
        match ds.index()? {
            Some(index) if complete => {
                for (off, name) in index {
                    place(off, &name);
                }
            }
            _ => {
                for h in ds.headers() {
                    match h {
                        Ok(h) => place(h.offset, &h.type_name),
                        // A recorder killed while writing: what came before is whole.
                        Err(e) => match e.cut_tail() {
                            Some(c) => {
                                cut_tail = Some(c);
                                break;
                            }
                            None => return Err(e.into()),
                        },
                    }
                }
            }
        }
        let mut info = Vec::new();
        for off in info_offsets {
            let e = ds.read_extent_of(off, INFO_TYPE)?;
            for r in 0..e.len() {
                let k = e.bytes(r, 0).unwrap_or_default();
                let v = e.bytes(r, 1).unwrap_or_default();
                info.push((String::from_utf8_lossy(k).into_owned(), v.to_vec()));
            }
        }
        let mut lost = Vec::new();
        for off in lost_offsets {
            let e = ds.read_extent_of(off, LOST_TYPE)?;
            for r in 0..e.len() {
                lost.push(LostRecord {
                    syscall: String::from_utf8_lossy(e.bytes(r, 0).unwrap_or_default()).into(),
                    count: e.i64(r, 1).unwrap_or(0),
                    bytes: e.i64(r, 2).unwrap_or(0),
                    time_first: e.i64(r, 3),
                    time_last: e.i64(r, 4),
                    reason: String::from_utf8_lossy(e.bytes(r, 5).unwrap_or_default()).into(),
                });
            }
        }
        Ok(TraceReader {
            ds,
            kind,
            layouts,
            offsets,
            info,
            lost,
            complete,
            cut_tail,
            snapshot_offsets,
            blob_offsets,
        })
    }

    /// Whose tool chain wrote the trace: ours, or the original Re-Animator's (whose quirks
    /// the reader then corrects, [`crate::quirks`]).
    pub fn kind(&self) -> TraceKind {
        self.kind
    }

    /// The underlying DataSeries file.
    pub fn dataseries(&self) -> &DsReader {
        &self.ds
    }

    /// Read the extents through a memory map of the file ([`DsReader::map_file`]): for a
    /// consumer that shares data buffers ([`EventIter::sharing_buffers`]), they are then
    /// slices of the page cache. False where the trace is read as before (encrypted, or the
    /// map refused). The file must not shrink meanwhile (SIGBUS).
    pub fn map_file(&mut self) -> bool {
        self.ds.map_file()
    }

    /// How many records the system call extents hold, from the extent headers (a few calls
    /// span several records: an estimate of the calls, for progress bars).
    pub fn syscall_records(&self) -> u64 {
        self.ds
            .headers()
            .filter_map(|h| h.ok())
            .filter(|h| h.type_name.starts_with(PREFIX))
            .map(|h| u64::from(h.nrecords))
            .sum()
    }

    /// False when the file has no valid trailer (the writer was killed): everything flushed is
    /// still readable.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// An unfinished trace that ends inside an extent (the recorder was killed while writing
    /// it): that extent, whose records are lost; every extent before it is read as usual.
    pub fn cut_tail(&self) -> Option<CutTail> {
        self.cut_tail
    }

    /// How the trace falls short of whole, for the note every reader gives: no trailer, cut
    /// inside an extent, encrypted without its last chunk, or (read with a seal key) cut
    /// before its final seal. `None` for a whole trace.
    pub fn incomplete(&self) -> Option<dataseries::Incomplete> {
        self.ds.incomplete_with(self.cut_tail)
    }

    /// The trace info records (key, value), in file order.
    pub fn info(&self) -> &[(String, Vec<u8>)] {
        &self.info
    }

    /// The last value recorded for `key`.
    pub fn info_value(&self, key: &str) -> Option<&[u8]> {
        self.info.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_slice())
    }

    /// Loss records.
    pub fn lost(&self) -> &[LostRecord] {
        &self.lost
    }

    /// File offsets of the `Reanimator::Snapshot` extents (directory-tree entries), in file
    /// order.
    pub fn snapshot_offsets(&self) -> &[u64] {
        &self.snapshot_offsets
    }

    /// File offsets of the `Reanimator::Blob` extents (stored file contents), in file order.
    pub fn blob_offsets(&self) -> &[u64] {
        &self.blob_offsets
    }

    /// Call types present in the file with the number of extents of each.
    pub fn call_types(&self) -> impl Iterator<Item = (&CallLayout, usize)> {
        self.layouts.iter().zip(self.offsets.iter().map(Vec::len))
    }

    /// Every event as system calls, for replay: like [`TraceReader::events`], with each
    /// file-system operation (`reanimator fs` traces) replaced by the system calls that
    /// reproduce it ([`crate::fsop::to_syscalls`]).
    pub fn syscall_events(&self, only: Option<&[&str]>) -> EventIter<'_> {
        let mut it = self.events(only);
        it.expand_fs = true;
        it
    }

    /// Every event, merged into `unique_id` order. `only` restricts to these trace names
    /// (others are not even decoded).
    pub fn events(&self, only: Option<&[&str]>) -> EventIter<'_> {
        let mut cursors = Vec::new();
        for (i, l) in self.layouts.iter().enumerate() {
            let name = l.ty.name().strip_prefix(PREFIX).unwrap_or_default();
            if only.is_some_and(|o| !o.contains(&name)) || self.offsets[i].is_empty() {
                continue;
            }
            cursors.push(Cursor {
                layout: i,
                type_name: Arc::from(l.ty.name()),
                pending: self.offsets[i].iter().copied().collect(),
                ready: VecDeque::new(),
                extent: None,
                row: 0,
                next: VecDeque::new(),
            });
        }
        // Only worth a thread when some type has more than one extent to read ahead.
        let prefetch = cursors
            .iter()
            .any(|c| c.pending.len() > 1)
            .then(|| Prefetcher::start(&self.ds))
            .flatten();
        EventIter {
            r: self,
            cursors,
            prefetch,
            heap: BinaryHeap::new(),
            started: false,
            failed: false,
            last_id: None,
            out_of_order: 0,
            expand_fs: false,
            expanded: VecDeque::new(),
            opts: DecodeOpts::default(),
        }
    }
}

/// A decode of an extent running on the prefetch thread: its result arrives here.
type Prefetch = std::sync::mpsc::Receiver<dataseries::Result<Extent>>;

/// A request to the prefetch thread: decode these extents of this type, each answered on
/// its own channel.
struct PrefetchJob {
    extents: Vec<(u64, std::sync::mpsc::SyncSender<dataseries::Result<Extent>>)>,
    type_name: Arc<str>,
}

/// One long-lived thread that reads, checks and decodes the next extents of each call type
/// while the caller iterates the current ones. One thread serves every cursor: spawning a
/// thread per extent cost a fresh stack and a fresh allocator heap each time (their pages
/// zeroed by the kernel again and again; ~15% of a compile's CPU). The extents of a request,
/// with those of the requests waiting when it looks, are decoded together
/// ([`DsReader::read_extents_of`]: their checksums computed side by side), up to
/// [`PREFETCH_BATCH`] at a time.
pub(crate) struct Prefetcher {
    jobs: std::sync::mpsc::Sender<PrefetchJob>,
    /// Extents requested by all cursors and not yet taken (bounded by [`IN_FLIGHT`]).
    in_flight: std::sync::atomic::AtomicUsize,
}

/// Extents decoded together at most.
const PREFETCH_BATCH: usize = 8;

/// Extents of one call type requested ahead of the one being iterated: enough that the
/// prefetch thread has a full batch to decode together. A cursor asks for more once at most
/// [`REFILL_AT`] are left in flight, all in one request (asked for one at a time, each would
/// find the thread idle and be decoded alone).
const AHEAD: usize = PREFETCH_BATCH;
const REFILL_AT: usize = 1;
/// Extents in flight for all cursors together, so that memory stays a bounded number of
/// extents however many call types a trace has (each cursor may still have one).
const IN_FLIGHT: usize = 2 * PREFETCH_BATCH;

impl Prefetcher {
    /// None if no thread could be started (the cursors then decode on the caller's thread).
    fn start(ds: &DsReader) -> Option<Prefetcher> {
        let (jobs, rx) = std::sync::mpsc::channel::<PrefetchJob>();
        let ds = ds.clone();
        std::thread::Builder::new()
            .name("trace-prefetch".into())
            .spawn(move || {
                // Ends when the iterator (the only sender) is dropped.
                while let Ok(first) = rx.recv() {
                    let mut batch = vec![first];
                    let mut n = batch[0].extents.len();
                    while n < PREFETCH_BATCH {
                        match rx.try_recv() {
                            Ok(j) => {
                                n += j.extents.len();
                                batch.push(j);
                            }
                            Err(_) => break,
                        }
                    }
                    let which: Vec<(u64, &str)> = batch
                        .iter()
                        .flat_map(|j| j.extents.iter().map(|(off, _)| (*off, &*j.type_name)))
                        .collect();
                    let mut results = ds.read_extents_of(&which).into_iter();
                    for (_, reply) in batch.iter().flat_map(|j| &j.extents) {
                        if let Some(r) = results.next() {
                            let _ = reply.send(r);
                        }
                    }
                }
            })
            .ok()?;
        Some(Prefetcher { jobs, in_flight: std::sync::atomic::AtomicUsize::new(0) })
    }

    /// Queue the decode of these extents; None if the thread is gone (the caller decodes
    /// itself).
    fn request(&self, offsets: &[u64], type_name: &Arc<str>) -> Option<Vec<Prefetch>> {
        let mut rxs = Vec::with_capacity(offsets.len());
        let mut extents = Vec::with_capacity(offsets.len());
        for &off in offsets {
            let (reply, rx) = std::sync::mpsc::sync_channel(1);
            extents.push((off, reply));
            rxs.push(rx);
        }
        self.jobs.send(PrefetchJob { extents, type_name: Arc::clone(type_name) }).ok()?;
        self.in_flight.fetch_add(offsets.len(), std::sync::atomic::Ordering::Relaxed);
        Some(rxs)
    }

    /// How many more extents a cursor holding `own` in flight may ask for now.
    fn room(&self, own: usize) -> usize {
        let all = self.in_flight.load(std::sync::atomic::Ordering::Relaxed);
        let left = IN_FLIGHT.saturating_sub(all).max(usize::from(own == 0));
        AHEAD.saturating_sub(own).min(left)
    }

    /// One requested extent was taken by its cursor.
    fn taken(&self) {
        self.in_flight.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

pub(crate) struct Cursor {
    pub(crate) layout: usize,
    /// The call type's extent type name, shared with prefetch requests.
    type_name: Arc<str>,
    pending: VecDeque<u64>,
    /// Extents already decoded, taken before `pending` (a stream's, [`crate::follow`]).
    pub(crate) ready: VecDeque<Extent>,
    pub(crate) extent: Option<Extent>,
    pub(crate) row: usize,
    /// The next extents of this type (up to [`AHEAD`]), decoding in the background while the
    /// current one is iterated (so reading, checking and decoding overlap with the caller's
    /// work).
    next: VecDeque<(u64, Prefetch)>,
}

impl Cursor {
    /// A cursor over extents handed to it as they arrive ([`Cursor::ready`]).
    pub(crate) fn streamed(layout: usize, type_name: &str) -> Cursor {
        Cursor {
            layout,
            type_name: Arc::from(type_name),
            pending: VecDeque::new(),
            ready: VecDeque::new(),
            extent: None,
            row: 0,
            next: VecDeque::new(),
        }
    }

    /// Make `extent`/`row` point at a record, loading extents as needed. False at the end.
    pub(crate) fn fill(
        &mut self,
        ds: Option<&DsReader>,
        prefetch: Option<&Prefetcher>,
    ) -> Result<bool> {
        loop {
            if let Some(e) = &self.extent {
                if self.row < e.len() {
                    return Ok(true);
                }
            }
            // Free the extent just finished before the next one is decoded into memory.
            self.extent = None;
            if let Some(e) = self.ready.pop_front() {
                self.extent = Some(e);
                self.row = 0;
                continue;
            }
            let Some(ds) = ds else { return Ok(false) };
            let extent = match self.next.pop_front() {
                Some((off, rx)) => {
                    if let Some(p) = prefetch {
                        p.taken();
                    }
                    match rx.recv() {
                        Ok(r) => r?,
                        // The prefetch thread died (a panic): decode here, which reports the
                        // problem.
                        Err(_) => ds.read_extent_of(off, &self.type_name)?,
                    }
                }
                None => match self.pending.pop_front() {
                    Some(off) => ds.read_extent_of(off, &self.type_name)?,
                    None => return Ok(false),
                },
            };
            if self.next.len() <= REFILL_AT {
                self.request_ahead(prefetch);
            }
            self.extent = Some(extent);
            self.row = 0;
        }
    }

    /// Queue the next extents of `pending` with the prefetch thread, up to [`AHEAD`] in
    /// flight, in one request.
    fn request_ahead(&mut self, prefetch: Option<&Prefetcher>) {
        let Some(p) = prefetch else { return };
        let n = p.room(self.next.len()).min(self.pending.len());
        if n == 0 {
            return;
        }
        let offs: Vec<u64> = self.pending.iter().take(n).copied().collect();
        if let Some(rxs) = p.request(&offs, &self.type_name) {
            self.pending.drain(..n);
            self.next.extend(offs.into_iter().zip(rxs));
        }
    }
}

/// Iterator over events in `unique_id` order. After an error it ends.
pub struct EventIter<'a> {
    r: &'a TraceReader,
    cursors: Vec<Cursor>,
    /// The thread decoding the cursors' next extents (None: they decode on this thread).
    prefetch: Option<Prefetcher>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    started: bool,
    failed: bool,
    last_id: Option<u64>,
    out_of_order: u64,
    /// See [`TraceReader::syscall_events`].
    expand_fs: bool,
    expanded: VecDeque<Event>,
    opts: DecodeOpts,
}

/// How [`EventIter`] decodes (see its builder methods).
#[derive(Clone, Copy, Default)]
pub(crate) struct DecodeOpts {
    /// [`EventIter::sharing_buffers`].
    pub(crate) share: bool,
    /// [`EventIter::without_derived_columns`].
    pub(crate) drop_derived: bool,
}

impl EventIter<'_> {
    /// Data buffers as slices of the extent they were read in ([`Extent::shared_bytes`]),
    /// not copies: no copy and no allocation per buffer, but each event keeps its whole
    /// extent in memory for as long as its data lives. For consumers that drop events in
    /// about the order they come (a compile); a replay's queues can keep an event of a
    /// blocked thread for long, so it copies.
    pub fn sharing_buffers(mut self) -> Self {
        self.opts.share = true;
        self
    }

    /// Leave out of [`Event::extra`] the columns the writer computes from an argument
    /// (Re-Animator's decoded flag bits, `stat_result_*`, ...) wherever the recorded value is
    /// the one the argument gives, and non-nullable bool columns that hold false: they hold
    /// nothing more, and writing the event stores the same values again. A value that differs
    /// (a foreign writer's) is kept. For consumers that act on the arguments (compile,
    /// replay): an fcntl record carries 53 such columns, each an allocated name and value per
    /// call.
    pub fn without_derived_columns(mut self) -> Self {
        self.opts.drop_derived = true;
        self
    }

    /// Events whose id was smaller than one already returned (only possible in files whose
    /// writer did not keep each type's records in id order).
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    fn push(&mut self, ci: usize) -> Result<()> {
        let ds = &self.r.ds;
        let c = &mut self.cursors[ci];
        let l = &self.r.layouts[c.layout];
        if c.fill(Some(ds), self.prefetch.as_ref())? {
            let e = c.extent.as_ref().expect("filled");
            let id = l.common.unique_id.and_then(|f| e.i64(c.row, f)).unwrap_or(0) as u64;
            self.heap.push(Reverse((id, ci)));
        }
        Ok(())
    }

    fn step(&mut self) -> Result<Option<Event>> {
        if !self.started {
            self.started = true;
            for ci in 0..self.cursors.len() {
                self.push(ci)?;
            }
        }
        let Some(Reverse((id, ci))) = self.heap.pop() else { return Ok(None) };
        if self.last_id.is_some_and(|l| id < l) {
            self.out_of_order += 1;
        }
        self.last_id = Some(id);
        let ctx = Ctx { layouts: &self.r.layouts, kind: self.r.kind, ds: Some(&self.r.ds) };
        let ev = decode_event(&ctx, &mut self.cursors[ci], self.prefetch.as_ref(), self.opts)?;
        self.push(ci)?;
        Ok(Some(ev))
    }
}

impl Iterator for EventIter<'_> {
    type Item = Result<Event>;
    fn next(&mut self) -> Option<Result<Event>> {
        loop {
            if let Some(e) = self.expanded.pop_front() {
                return Some(Ok(e));
            }
            if self.failed {
                return None;
            }
            return match self.step() {
                Ok(Some(e)) if self.expand_fs && crate::fsop::is_fs_event(&e) => {
                    // Operations with nothing to replay (forget, readdir) expand to nothing.
                    self.expanded.extend(crate::fsop::to_syscalls(&e));
                    continue;
                }
                Ok(Some(e)) => Some(Ok(e)),
                Ok(None) => None,
                Err(e) => {
                    self.failed = true;
                    Some(Err(e))
                }
            };
        }
    }
}

fn int_of(e: &Extent, r: usize, f: usize) -> Option<i64> {
    e.int(r, f)
}

fn time_of(e: &Extent, r: usize, f: Option<usize>) -> Option<i64> {
    let f = f?;
    let v = int_of(e, r, f)?;
    Some(normalize_time(v, e.extent_type().fields()[f].units.as_deref()))
}

fn extra_of(v: Value<'_>) -> ExtraValue {
    match v {
        Value::Null => ExtraValue::Null,
        Value::Bool(b) => ExtraValue::Bool(b),
        Value::Byte(b) => ExtraValue::Int(b.into()),
        Value::Int32(i) => ExtraValue::Int(i.into()),
        Value::Int64(i) => ExtraValue::Int(i),
        Value::Double(d) => ExtraValue::DoubleBits(d.to_bits()),
        Value::Bytes(b) => ExtraValue::Bytes(b.to_vec()),
    }
}

/// What decoding an event needs of its reader: the layouts its cursors index, who wrote the
/// trace, and the file further extents come from (None: a stream's cursors hold them).
pub(crate) struct Ctx<'a> {
    pub(crate) layouts: &'a [CallLayout],
    pub(crate) kind: TraceKind,
    pub(crate) ds: Option<&'a DsReader>,
}

/// Decode the event at the cursor (consuming every record it spans) and advance past it.
pub(crate) fn decode_event(
    r: &Ctx<'_>,
    c: &mut Cursor,
    prefetch: Option<&Prefetcher>,
    opts: DecodeOpts,
) -> Result<Event> {
    let share = opts.share;
    let l = &r.layouts[c.layout];
    let ty: &Arc<ExtentType> = &l.ty;
    let e = c.extent.as_ref().expect("cursor filled before decode");
    let row = c.row;
    let cm = l.common;
    let fs_op = ty.name() == FS_OP_TYPE;
    let name = match ty.name().strip_prefix(PREFIX) {
        Some(n) => n.to_string(),
        None if fs_op => e
            .bytes(row, crate::fsop::col::OPERATION)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default(),
        None => ty.name().to_string(),
    };
    let opt_i32 = |f: Option<usize>| f.and_then(|f| int_of(e, row, f)).map(|v| v as i32);
    let mut ev = Event {
        def: l.def,
        name,
        unique_id: cm.unique_id.and_then(|f| int_of(e, row, f)).unwrap_or(0) as u64,
        time_called: time_of(e, row, cm.time_called),
        time_returned: time_of(e, row, cm.time_returned),
        time_recorded: time_of(e, row, cm.time_recorded),
        pid: opt_i32(cm.pid),
        tid: opt_i32(cm.tid),
        ppid: opt_i32(cm.ppid),
        uid: opt_i32(cm.uid),
        gid: opt_i32(cm.gid),
        sid: opt_i32(cm.sid),
        pgid: opt_i32(cm.pgid),
        ret: cm.return_value.and_then(|f| int_of(e, row, f)),
        errno: opt_i32(cm.errno_number),
        buffer_not_captured: cm.buffer_not_captured.and_then(|f| e.bool(row, f)).unwrap_or(false),
        args: Vec::with_capacity(l.def.map_or(0, |d| d.args.len())),
        extra: Vec::new(),
    };
    if r.kind == TraceKind::ReAnimator {
        ev.tid = ev.tid.or(ev.pid);
        ev.pid = None;
        let umask = l.def.is_some_and(|d| d.replay.handler() == Some(ra_syscalls::Handler::Umask));
        if ev.unique_id == 0 && umask && opt_i32(cm.tid).is_none() {
            ev.ret = None;
            ev.errno = None;
            ev.extra.push(("synthetic".into(), ExtraValue::Bool(true)));
        }
    }
    // Scalars and single buffers from the first record.
    if let Some(def) = l.def {
        for (i, a) in def.args.iter().enumerate() {
            let f = l.arg_fields.get(i).copied().flatten();
            let cols = l.struct_columns.get(i).and_then(Option::as_ref);
            let v = match (a.kind, f) {
                (_, None) => ArgValue::Absent,
                (
                    ArgKind::InStruct(s, _) | ArgKind::OutStruct(s, _) | ArgKind::InOutStruct(s, _),
                    Some(_),
                ) if cols.is_some() => {
                    let cols = cols.expect("checked");
                    // The raw bytes where the trace has them (schema 3: the columns cannot
                    // hold every value), else the struct rebuilt from its columns.
                    let raw = l.struct_raw.get(i).copied().flatten().and_then(|f| e.bytes(row, f));
                    let vals: Option<Vec<i64>> = cols.iter().map(|&c| int_of(e, row, c)).collect();
                    let rebuilt = || vals.and_then(|v| crate::structs::columns_to_struct(s, &v));
                    match raw.map(<[u8]>::to_vec).or_else(rebuilt) {
                        Some(bytes) => ArgValue::data(bytes),
                        None if ev.buffer_not_captured => ArgValue::NotCaptured,
                        None => ArgValue::Absent,
                    }
                }
                (k, _) if k.is_vector() || k == ArgKind::StrArray => ArgValue::Absent,
                (k, Some(f)) if k.is_pointer_data() => match e.value(row, f) {
                    Value::Bytes(_) if share => {
                        ArgValue::Data(e.shared_bytes(row, f).expect("a byte field"))
                    }
                    Value::Bytes(b) => ArgValue::data(b.to_vec()),
                    _ if ev.buffer_not_captured => ArgValue::NotCaptured,
                    _ => ArgValue::Absent,
                },
                (_, Some(f)) => int_of(e, row, f).map_or(ArgValue::Absent, ArgValue::Int),
            };
            ev.args.push(v);
        }
    }
    if let Some(b) = cm.data_digests.and_then(|f| e.bytes(row, f)) {
        for rec in b.chunks_exact(42) {
            let i = usize::from(u16::from_le_bytes([rec[0], rec[1]]));
            let len = u64::from_le_bytes(rec[2..10].try_into().unwrap_or([0; 8]));
            let mut blake3 = [0u8; 32];
            blake3.copy_from_slice(&rec[10..42]);
            if let Some(slot) = ev.args.get_mut(i) {
                *slot = ArgValue::Hashed { len, blake3 };
            }
        }
    }
    for (&fi, derived) in l.extra_fields.iter().zip(&l.derived) {
        let fd = &ty.fields()[fi];
        // Re-Animator's bool columns are unreliable (see quirks): leave them out.
        if r.kind == TraceKind::ReAnimator && fd.ftype == FieldType::Bool {
            continue;
        }
        let v = e.value(row, fi);
        if opts.drop_derived {
            let recorded = match v {
                Value::Bool(b) => Some(i64::from(b)),
                Value::Byte(b) => Some(b.into()),
                Value::Int32(i) => Some(i.into()),
                Value::Int64(i) => Some(i),
                _ => None,
            };
            let same = match derived {
                Some(d) => recorded.is_some() && recorded == d.value(&ev.args),
                // A flag column nothing fills (fcntl's `argument_*` bits: which apply depends
                // on the command) holds false, which writing the event stores again.
                None => v == Value::Bool(false) && !fd.nullable,
            };
            if same {
                continue;
            }
        }
        // File-system records: most columns are null for most operations; `operation` is
        // the event's name.
        if fs_op
            && (matches!(v, Value::Null | Value::Bool(false)) || fi == crate::fsop::col::OPERATION)
        {
            continue;
        }
        ev.extra.push((fd.name.clone(), extra_of(v)));
    }
    c.row += 1;
    // Multi-record calls.
    if let Some(def) = l.def {
        if let Some(f_iov) = l.iov_number {
            let header = e.i32(row, f_iov) == Some(-1);
            let ai = def.args.iter().position(|a| a.kind.is_vector());
            if let (true, Some(ai)) = (header, ai) {
                let data_f = l.arg_fields[ai];
                let mut vecs = Vec::new();
                while c.fill(r.ds, prefetch)? {
                    let e = c.extent.as_ref().expect("filled");
                    let n = e.i32(c.row, f_iov).unwrap_or(-1);
                    if n < 0 || n as usize != vecs.len() {
                        break;
                    }
                    let requested =
                        l.bytes_requested.and_then(|f| int_of(e, c.row, f)).unwrap_or(0);
                    let data = match data_f {
                        Some(f) if share => e.shared_bytes(c.row, f),
                        Some(f) => e.bytes(c.row, f).map(Bytes::copy_from_slice),
                        None => None,
                    };
                    vecs.push(IovValue { requested: requested.max(0) as u64, data });
                    c.row += 1;
                }
                ev.args[ai] = if vecs.is_empty() && ev.buffer_not_captured {
                    ArgValue::NotCaptured
                } else {
                    ArgValue::Iov(vecs)
                };
            }
        } else if let Some(f_cont) = l.continuation {
            let string_args: Vec<usize> = def
                .args
                .iter()
                .enumerate()
                .filter(|(_, a)| a.kind == ArgKind::StrArray)
                .map(|(i, _)| i)
                .collect();
            let mut lists: Vec<Vec<Vec<u8>>> = vec![Vec::new(); string_args.len()];
            let started = e.i32(row, f_cont) == Some(0);
            while started && c.fill(r.ds, prefetch)? {
                let e = c.extent.as_ref().expect("filled");
                let k = e.i32(c.row, f_cont).unwrap_or(0);
                if k == 0 {
                    break;
                }
                if k == -1 {
                    if let Some(f) = cm.return_value {
                        ev.ret = int_of(e, c.row, f).or(ev.ret);
                    }
                    if let Some(f) = cm.errno_number {
                        ev.errno = e.i32(c.row, f).or(ev.errno);
                    }
                    ev.time_returned = time_of(e, c.row, cm.time_returned).or(ev.time_returned);
                    c.row += 1;
                    break;
                }
                for (j, &ai) in string_args.iter().enumerate() {
                    if let Some(b) = l.arg_fields[ai].and_then(|f| e.bytes(c.row, f)) {
                        let s = b.strip_suffix(&[0]).unwrap_or(b);
                        lists[j].push(s.to_vec());
                    }
                }
                c.row += 1;
            }
            for (j, ai) in string_args.into_iter().enumerate() {
                ev.args[ai] = ArgValue::Strings(std::mem::take(&mut lists[j]));
            }
        }
    }
    Ok(ev)
}
