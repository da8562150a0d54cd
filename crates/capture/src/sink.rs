//! [`TraceSink`]: a trace writer on its own thread. Capture threads hand over events in
//! batches; the writer flushes at least once a second so that a killed recorder loses at most
//! the last second.
//!
//! Memory is bounded in bytes, whatever the events carry: a batch is handed over at [`BATCH`]
//! events or [`BATCH_BYTES`], the queue to the writer holds at most [`QUEUE_BYTES`] (the
//! producer waits beyond: the ptrace tracer with the traced thread stopped, the eBPF consumer
//! with the ring filling up, which its loss policy handles), and events held back for new
//! threads at most [`HOLD_BYTES`]. Bytes are [`Event::memory_bytes`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use ra_trace::{Event, TraceOutput, TraceWriter, WriterConfig};

use crate::common::IdMap;
use crate::{Error, Result};

/// Totals reported when the sink closes.
#[derive(Clone, Copy, Debug, Default)]
pub struct SinkStats {
    /// Events written.
    pub events: u64,
    /// Records written (a call that takes several records counts each).
    pub records: u64,
    /// Bytes of the trace file.
    pub file_bytes: u64,
}

enum Msg {
    /// Events and their [`Event::memory_bytes`], counted in the [`Gate`].
    Events(Vec<Event>, usize),
    Info(String, Vec<u8>),
    Lost(LostBatch),
}

/// One `Reanimator::Lost` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostBatch {
    /// Trace name of the call type ("" when unknown).
    pub syscall: String,
    /// Calls lost.
    pub count: i64,
    /// Bytes of data lost with them.
    pub bytes: i64,
    /// Wall-clock nanoseconds: the losses happened in this range.
    pub time_range: Option<(i64, i64)>,
    /// Why they were lost, in words (`BPF ring buffer full (--loss drop)`).
    pub reason: String,
}

/// What the writer thread gives back: the writer, not finished, and its totals.
type Stopped = Result<(TraceWriter<TraceOutput>, SinkStats)>;

/// Handle to the writer thread.
pub struct TraceSink {
    /// The trace file (named in write errors).
    path: PathBuf,
    tx: Option<Sender<Msg>>,
    thread: Option<JoinHandle<Stopped>>,
    gate: Arc<Gate>,
    batch: Vec<Event>,
    /// [`Event::memory_bytes`] of `batch`.
    batch_bytes: usize,
    /// New threads whose events wait for the call that created them (see [`TraceSink::push`]):
    /// child tid -> (creating thread, events held, their bytes).
    held: IdMap<i32, (i32, Vec<Event>, usize)>,
    /// Bytes of all events in `held`.
    held_bytes: usize,
    /// The same, by creating thread.
    creators: IdMap<i32, Vec<i32>>,
    /// Signals of a creating thread whose children are held, written after them: the
    /// kernel makes a vfork child's exit SIGCHLD (`signal_generate`, in the child's context)
    /// before the parent's vfork returns, and that record must not release the child's
    /// calls ahead of the vfork.
    after_kids: IdMap<i32, Vec<Event>>,
    /// `record --print`'s thread, ended after the writer's.
    printer: Option<ra_trace::live::LivePrinter>,
}

pub use ra_trace::live::Print;

/// Events handed to the writer at once...
pub const BATCH: usize = 256;
/// ... or fewer, once they hold this many bytes.
pub const BATCH_BYTES: usize = 1 << 20;
/// Bytes of events queued for the writer thread at most (beyond those of one batch larger
/// than this alone): the producer waits until the writer has taken enough. Together with the
/// trace writer's own buffers (`WriterConfig::buffer_budget_bytes`, the DataSeries writer's
/// `queue_bytes`, the file's blocks in flight) this bounds the recorder's memory; see
/// docs/ARCHITECTURE.md.
pub const QUEUE_BYTES: usize = 8 << 20;

/// Events one new thread may hold back before they are written anyway (bounded memory, e.g.
/// when the creator's call is not captured and it makes no other captured call for long)...
const HOLD_MAX: usize = 65_536;
/// ... and bytes all new threads together may hold back: beyond, the thread whose event
/// passed it has its events written.
pub const HOLD_BYTES: usize = 16 << 20;

/// The queue's byte budget, shared by the producer and the writer thread.
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    /// Bytes sent and not yet taken by the writer.
    queued: usize,
    /// The writer thread has ended (it takes nothing more).
    writer_done: bool,
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wait until `n` more bytes fit in [`QUEUE_BYTES`] (into an empty queue, any `n` fits),
    /// and count them. False when the writer thread has ended.
    fn admit(&self, n: usize) -> bool {
        let mut s = self.lock();
        while !s.writer_done && s.queued > 0 && s.queued + n > QUEUE_BYTES {
            s = self.changed.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        if s.writer_done {
            return false;
        }
        s.queued += n;
        true
    }

    /// The writer has taken `n` bytes.
    fn release(&self, n: usize) {
        let mut s = self.lock();
        s.queued = s.queued.saturating_sub(n);
        self.changed.notify_all();
    }
}

/// Marks the [`Gate`] when the writer thread ends, however it ends (error, panic).
struct WriterDone(Arc<Gate>);

impl Drop for WriterDone {
    fn drop(&mut self) {
        self.0.lock().writer_done = true;
        self.0.changed.notify_all();
    }
}

impl TraceSink {
    /// Create the trace at `path` (header, schema and `info` are written at once).
    pub fn create(path: &Path, info: &[(&str, &[u8])], cfg: WriterConfig) -> Result<TraceSink> {
        TraceSink::from_writer(TraceWriter::create(path, info, cfg)?, path)
    }

    /// Run an open writer of the trace `path` (e.g. one that already holds directory
    /// snapshots) on the writer thread.
    pub fn from_writer(w: TraceWriter<TraceOutput>, path: &Path) -> Result<TraceSink> {
        TraceSink::with_printer(w, path, None)
    }

    /// [`TraceSink::from_writer`], and with `print` every call written to the trace is also
    /// printed as `reanimator dump` shows it, by a thread of its own fed without waiting
    /// (lines it cannot take in time are dropped and counted: [`ra_trace::live::PRINT_QUEUE_BYTES`]).
    pub fn with_printer(
        mut w: TraceWriter<TraceOutput>,
        path: &Path,
        print: Option<Print>,
    ) -> Result<TraceSink> {
        let printer = print
            .map(ra_trace::live::LivePrinter::start)
            .transpose()
            .map_err(|source| Error::Sys { call: "spawning the printer thread", source })?;
        let feed = printer.as_ref().map(ra_trace::live::LivePrinter::feed);
        // A bounded queue, in messages and in bytes (the gate): a tracer that outruns the
        // disk waits instead of growing memory.
        let (tx, rx) = bounded::<Msg>(64);
        let gate = Arc::new(Gate { state: Mutex::default(), changed: Condvar::new() });
        let done = WriterDone(Arc::clone(&gate));
        let p = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("trace-writer".into())
            .spawn(move || {
                run(&mut w, rx, &done.0, feed)
                    .map(|s| (w, s))
                    .map_err(|source| Error::TraceWrite { path: p, source })
            })
            .map_err(|source| Error::Sys { call: "spawning the writer thread", source })?;
        Ok(TraceSink {
            path: path.to_path_buf(),
            tx: Some(tx),
            thread: Some(thread),
            gate,
            batch: Vec::with_capacity(BATCH),
            batch_bytes: 0,
            held: IdMap::default(),
            held_bytes: 0,
            creators: IdMap::default(),
            after_kids: IdMap::default(),
            printer,
        })
    }

    /// Queue one event.
    ///
    /// Events are written in the order they are pushed, except that a new thread's events
    /// (announced by [`TraceSink::forked`]) come after the clone/fork/vfork call that created
    /// it. Capture backends learn of a call when it returns, and a creator's call returns
    /// after its child has started: for vfork only after the child's exec or exit, and on a
    /// busy machine a child may make hundreds of calls first. Replay needs the child's process
    /// (with its parent's descriptors) before the child's first call, so the child's events
    /// are held until the creator's next event (its clone call; or its next captured call when
    /// the clone is not captured) or the creator's end ([`TraceSink::thread_gone`]).
    pub fn push(&mut self, mut e: Event) -> Result<()> {
        e.canonical_vectors();
        let tid = e.tid.unwrap_or(0);
        if let Some((_, q, bytes)) = self.held.get_mut(&tid) {
            let n = e.memory_bytes();
            q.push(e);
            *bytes += n;
            self.held_bytes += n;
            if q.len() < HOLD_MAX && self.held_bytes < HOLD_BYTES {
                return Ok(());
            }
            return self.release(tid);
        }
        if e.def.is_some_and(|d| d.is_signal())
            && self.creators.get(&tid).is_some_and(|kids| !kids.is_empty())
        {
            let q = self.after_kids.entry(tid).or_default();
            if q.len() < HOLD_MAX {
                q.push(e);
                return Ok(());
            }
        }
        self.queue(e)?;
        self.release_children(tid)
    }

    /// Thread `child` was created by thread `creator`, whose call has not been pushed yet.
    pub fn forked(&mut self, creator: i32, child: i32) {
        self.held.insert(child, (creator, Vec::new(), 0));
        self.creators.entry(creator).or_default().push(child);
    }

    /// Thread `tid` ended: what it created is not waiting for any more of its calls.
    pub fn thread_gone(&mut self, tid: i32) -> Result<()> {
        self.release_children(tid)
    }

    fn queue(&mut self, e: Event) -> Result<()> {
        self.batch_bytes += e.memory_bytes();
        self.batch.push(e);
        if self.batch.len() >= BATCH || self.batch_bytes >= BATCH_BYTES {
            self.send_batch()?;
        }
        Ok(())
    }

    /// Queue the events `tid` holds, then release what it created.
    fn release(&mut self, tid: i32) -> Result<()> {
        let Some((creator, q, bytes)) = self.held.remove(&tid) else { return Ok(()) };
        self.held_bytes -= bytes;
        if let Some(kids) = self.creators.get_mut(&creator) {
            kids.retain(|&k| k != tid);
        }
        for e in q {
            self.queue(e)?;
        }
        self.release_children(tid)
    }

    fn release_children(&mut self, creator: i32) -> Result<()> {
        for k in self.creators.remove(&creator).unwrap_or_default() {
            self.release(k)?;
        }
        for e in self.after_kids.remove(&creator).unwrap_or_default() {
            self.queue(e)?;
        }
        Ok(())
    }

    /// Release everything still held (the recording ends), creators before their children.
    fn release_all(&mut self) -> Result<()> {
        while let Some(k) = self
            .held
            .iter()
            .find(|(_, (c, _, _))| !self.held.contains_key(c))
            .or_else(|| self.held.iter().next())
            .map(|(&k, _)| k)
        {
            self.release(k)?;
        }
        let creators: Vec<i32> = self.after_kids.keys().copied().collect();
        for c in creators {
            self.release_children(c)?;
        }
        Ok(())
    }

    /// Hand queued events to the writer now (the tracer calls this when it goes idle). Waits
    /// while the writer's queue is over its byte budget.
    pub fn send_batch(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let b = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        let bytes = std::mem::take(&mut self.batch_bytes);
        if !self.gate.admit(bytes) {
            return Err(self.writer_error());
        }
        self.send(Msg::Events(b, bytes))
    }

    /// Add a fact to the trace info.
    pub fn info(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.send(Msg::Info(key.to_string(), value.to_vec()))
    }

    /// Record a loss (after the events queued so far).
    pub fn lost(&mut self, l: LostBatch) -> Result<()> {
        self.send_batch()?;
        self.send(Msg::Lost(l))
    }

    fn send(&mut self, m: Msg) -> Result<()> {
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(m).is_ok());
        if sent {
            Ok(())
        } else {
            Err(self.writer_error())
        }
    }

    /// Why the writer thread ended (it ends early only on an error: the trace could not be
    /// written). The first call gives the writer's error; later ones [`Error::WriterGone`].
    fn writer_error(&mut self) -> Error {
        drop(self.tx.take());
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            _ => Error::WriterGone,
        }
    }

    /// Write everything and finish the file (index + trailer).
    pub fn close(self) -> Result<SinkStats> {
        let path = self.path.clone();
        let (w, s) = self.stop()?;
        finish(w, s).map_err(|source| Error::TraceWrite { path, source })
    }

    /// Hand every queued event to the writer, stop the writer thread and give the writer
    /// back, not finished (e.g. to store directory snapshots after the recording).
    pub fn into_writer(self) -> Result<TraceWriter<TraceOutput>> {
        self.stop().map(|(w, _)| w)
    }

    fn stop(mut self) -> Stopped {
        self.release_all()?;
        self.send_batch()?;
        drop(self.tx.take());
        let r = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err(Error::WriterGone),
        };
        self.stop_printer();
        r
    }

    /// Wait (at most a second) for the printer to print what it was given (the writer has
    /// ended, so nothing more comes); a failure of its is said once, here: it never stops
    /// the recording.
    fn stop_printer(&mut self) {
        if let Some(w) = self.printer.take().and_then(ra_trace::live::LivePrinter::finish) {
            eprintln!("reanimator: warning: {w}");
        }
    }
}

fn run<W: std::io::Write + Send + 'static>(
    w: &mut TraceWriter<W>,
    rx: Receiver<Msg>,
    gate: &Gate,
    print: Option<ra_trace::live::Feed>,
) -> ra_trace::Result<SinkStats> {
    let mut last_flush = Instant::now();
    let mut warned = false;
    let mut enters = EnterIds::default();
    loop {
        match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(Msg::Events(mut v, bytes)) => {
                match &print {
                    None => {
                        for e in &mut v {
                            let key = enters.resolve(e);
                            let id = w.append(e)?;
                            enters.note(key, id);
                        }
                    }
                    Some(p) => {
                        let mut previews = Vec::with_capacity(v.len());
                        for e in &mut v {
                            let key = enters.resolve(e);
                            let id = w.append(e)?;
                            enters.note(key, id);
                            previews.push(p.preview(e, id));
                        }
                        p.send(previews);
                    }
                }
                drop(v);
                gate.release(bytes);
                if !warned && w.oversized() > 0 {
                    warned = true;
                    eprintln!(
                        "reanimator: warning: a call moved a buffer larger than a trace record \
                         holds ({} MiB): it is kept as its length and BLAKE3 digest (a replay \
                         verifies it; its bytes are not in the trace). The trace's info \
                         `oversized_buffers` counts them.",
                        ra_trace::MAX_BUFFER_BYTES >> 20
                    );
                }
            }
            Ok(Msg::Info(k, v)) => w.add_info(&k, &v)?,
            Ok(Msg::Lost(l)) => {
                w.add_lost(&l.syscall, l.count, l.bytes, l.time_range, &l.reason)?
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if last_flush.elapsed() >= Duration::from_secs(1) {
            w.flush()?;
            last_flush = Instant::now();
        }
    }
    Ok(SinkStats { events: w.events(), records: w.records(), file_bytes: 0 })
}

/// The extra field through which a recorder ties an io_uring request (`io_uring_op`) to the
/// `io_uring_enter` that submitted it: both carry the same key (the call's thread and
/// per-thread number), and the writer thread, which assigns unique ids, turns the request's
/// into its `enter_id` argument. The recorder hands a request over after its call.
pub(crate) const ENTER_REF: &str = "uring_enter_ref";

/// The unique ids of the last [`EnterIds::KEEP`] submitting calls, by key.
#[derive(Default)]
struct EnterIds {
    ids: std::collections::HashMap<i64, u64>,
    order: std::collections::VecDeque<i64>,
}

impl EnterIds {
    const KEEP: usize = 1 << 14;

    /// Take the key off `e`: a submitting call's is returned (to be noted with its id), a
    /// request's becomes its `enter_id` when the call is known.
    fn resolve(&mut self, e: &mut Event) -> Option<i64> {
        let at = e.extra.iter().position(|(k, _)| k == ENTER_REF)?;
        let (_, v) = e.extra.remove(at);
        let ra_trace::ExtraValue::Int(key) = v else { return None };
        if e.def.and_then(|d| d.replay.handler()) == Some(ra_syscalls::Handler::UringOp) {
            if let Some(&id) = self.ids.get(&key) {
                e.set_arg("enter_id", ra_trace::ArgValue::Int(id as i64));
            }
            return None;
        }
        Some(key)
    }

    fn note(&mut self, key: Option<i64>, id: u64) {
        let Some(key) = key else { return };
        if self.ids.insert(key, id).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > Self::KEEP {
            if let Some(k) = self.order.pop_front() {
                self.ids.remove(&k);
            }
        }
    }
}

fn finish<W: std::io::Write + Send + 'static>(
    w: TraceWriter<W>,
    s: SinkStats,
) -> ra_trace::Result<SinkStats> {
    let bytes = w.bytes_written();
    w.finish()?;
    Ok(SinkStats { file_bytes: bytes, ..s })
}
