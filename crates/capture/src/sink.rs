//! [`TraceSink`]: a trace writer on its own thread. Capture threads hand over events in
//! batches; the writer flushes at least once a second so that a killed recorder loses at most
//! the last second.

use std::path::Path;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use ra_trace::{Event, TraceFile, TraceWriter, WriterConfig};

use crate::common::IdMap;
use crate::{Error, Result};

/// Totals reported when the sink closes.
#[derive(Clone, Copy, Debug, Default)]
pub struct SinkStats {
    pub events: u64,
    pub records: u64,
    pub file_bytes: u64,
}

enum Msg {
    Events(Vec<Event>),
    Info(String, Vec<u8>),
    Lost(LostBatch),
}

/// One `Reanimator::Lost` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostBatch {
    /// Trace name of the call type ("" when unknown).
    pub syscall: String,
    pub count: i64,
    pub bytes: i64,
    /// Wall-clock nanoseconds: the losses happened in this range.
    pub time_range: Option<(i64, i64)>,
    pub reason: String,
}

/// What the writer thread gives back: the writer, not finished, and its totals.
type Stopped = Result<(TraceWriter<TraceFile>, SinkStats)>;

/// Handle to the writer thread.
pub struct TraceSink {
    tx: Option<Sender<Msg>>,
    thread: Option<JoinHandle<Stopped>>,
    batch: Vec<Event>,
    /// New threads whose events wait for the call that created them (see [`TraceSink::push`]):
    /// child tid -> (creating thread, events held).
    held: IdMap<i32, (i32, Vec<Event>)>,
    /// The same, by creating thread.
    creators: IdMap<i32, Vec<i32>>,
}

const BATCH: usize = 256;

/// Events one new thread may hold back before they are written anyway (bounded memory, e.g.
/// when the creator's call is not captured and it makes no other captured call for long).
const HOLD_MAX: usize = 65_536;

impl TraceSink {
    /// Create the trace at `path` (header, schema and `info` are written at once).
    pub fn create(path: &Path, info: &[(&str, &[u8])], cfg: WriterConfig) -> Result<TraceSink> {
        TraceSink::from_writer(TraceWriter::create(path, info, cfg)?)
    }

    /// Run an open writer (e.g. one that already holds directory snapshots) on the writer
    /// thread.
    pub fn from_writer(mut w: TraceWriter<TraceFile>) -> Result<TraceSink> {
        // A bounded queue: a tracer that outruns the disk waits instead of growing memory.
        let (tx, rx) = bounded::<Msg>(64);
        let thread = std::thread::Builder::new()
            .name("trace-writer".into())
            .spawn(move || run(&mut w, rx).map(|s| (w, s)))
            .map_err(|source| Error::Sys { call: "spawning the writer thread", source })?;
        Ok(TraceSink {
            tx: Some(tx),
            thread: Some(thread),
            batch: Vec::with_capacity(BATCH),
            held: IdMap::default(),
            creators: IdMap::default(),
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
        if let Some((_, q)) = self.held.get_mut(&tid) {
            q.push(e);
            if q.len() < HOLD_MAX {
                return Ok(());
            }
            return self.release(tid);
        }
        self.queue(e)?;
        self.release_children(tid)
    }

    /// Thread `child` was created by thread `creator`, whose call has not been pushed yet.
    pub fn forked(&mut self, creator: i32, child: i32) {
        self.held.insert(child, (creator, Vec::new()));
        self.creators.entry(creator).or_default().push(child);
    }

    /// Thread `tid` ended: what it created is not waiting for any more of its calls.
    pub fn thread_gone(&mut self, tid: i32) -> Result<()> {
        self.release_children(tid)
    }

    fn queue(&mut self, e: Event) -> Result<()> {
        self.batch.push(e);
        if self.batch.len() >= BATCH {
            self.send_batch()?;
        }
        Ok(())
    }

    /// Queue the events `tid` holds, then release what it created.
    fn release(&mut self, tid: i32) -> Result<()> {
        let Some((creator, q)) = self.held.remove(&tid) else { return Ok(()) };
        if let Some(kids) = self.creators.get_mut(&creator) {
            kids.retain(|&k| k != tid);
        }
        for e in q {
            self.queue(e)?;
        }
        self.release_children(tid)
    }

    fn release_children(&mut self, creator: i32) -> Result<()> {
        let Some(kids) = self.creators.remove(&creator) else { return Ok(()) };
        for k in kids {
            self.release(k)?;
        }
        Ok(())
    }

    /// Release everything still held (the recording ends), creators before their children.
    fn release_all(&mut self) -> Result<()> {
        while let Some(k) = self
            .held
            .iter()
            .find(|(_, (c, _))| !self.held.contains_key(c))
            .or_else(|| self.held.iter().next())
            .map(|(&k, _)| k)
        {
            self.release(k)?;
        }
        Ok(())
    }

    /// Hand queued events to the writer now (the tracer calls this when it goes idle).
    pub fn send_batch(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let b = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        self.tx
            .as_ref()
            .ok_or(Error::WriterGone)?
            .send(Msg::Events(b))
            .map_err(|_| Error::WriterGone)
    }

    /// Add a fact to the trace info.
    pub fn info(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.tx
            .as_ref()
            .ok_or(Error::WriterGone)?
            .send(Msg::Info(key.to_string(), value.to_vec()))
            .map_err(|_| Error::WriterGone)
    }

    /// Record a loss (after the events queued so far).
    pub fn lost(&mut self, l: LostBatch) -> Result<()> {
        self.send_batch()?;
        self.tx.as_ref().ok_or(Error::WriterGone)?.send(Msg::Lost(l)).map_err(|_| Error::WriterGone)
    }

    /// Write everything and finish the file (index + trailer).
    pub fn close(self) -> Result<SinkStats> {
        let (w, s) = self.stop()?;
        finish(w, s)
    }

    /// Hand every queued event to the writer, stop the writer thread and give the writer
    /// back, not finished (e.g. to store directory snapshots after the recording).
    pub fn into_writer(self) -> Result<TraceWriter<TraceFile>> {
        self.stop().map(|(w, _)| w)
    }

    fn stop(mut self) -> Stopped {
        self.release_all()?;
        self.send_batch()?;
        drop(self.tx.take());
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err(Error::WriterGone),
        }
    }
}

fn run<W: std::io::Write + Send + 'static>(
    w: &mut TraceWriter<W>,
    rx: Receiver<Msg>,
) -> Result<SinkStats> {
    let mut last_flush = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(Msg::Events(v)) => {
                for e in &v {
                    w.append(e)?;
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

fn finish<W: std::io::Write + Send + 'static>(
    w: TraceWriter<W>,
    s: SinkStats,
) -> Result<SinkStats> {
    let bytes = w.bytes_written();
    w.finish()?;
    Ok(SinkStats { file_bytes: bytes, ..s })
}
