//! Live output (`record --print`, `fs mount --print`): calls printed as they are written to
//! the trace, as `reanimator dump` prints them ([`crate::format::format_event`]), by a thread
//! of their own that the recording never waits for.
//!
//! The producer (the trace writer's thread, or a FUSE worker right after its record is
//! appended) hands [`crate::format::preview`]s over with a non-blocking send: at most
//! [`PRINT_QUEUE_BYTES`] of them wait for the printer; beyond, lines are dropped, counted,
//! and a line says how many. [`LivePrinter::finish`] waits at most [`PRINT_DRAIN`] for what is
//! queued, so that an output nobody reads (a full pipe) cannot keep the recorder from exiting.

use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender, TrySendError};

use crate::fileio::FileIoTracker;
use crate::format::{format_event_fds, preview, FormatOptions};
use crate::Event;

/// Where the lines go, and how they look (dump's options).
pub struct Print {
    /// Where the printer thread writes its lines: standard error for `--print -`, else the
    /// file `--print` names.
    pub out: Box<dyn Write + Send>,
    /// dump's formatting options; their `strsize` (`-s`) also fixes how much of each buffer
    /// a preview keeps.
    pub format: FormatOptions,
    /// The recorded command's working directory (the trace's `cwd` fact), against which
    /// the descriptors' relative paths are named, as `dump` names them.
    pub cwd: Option<Vec<u8>>,
}

/// Bytes of previews waiting for the printer at most.
pub const PRINT_QUEUE_BYTES: usize = 4 << 20;

/// How long [`LivePrinter::finish`] waits for the printer.
pub const PRINT_DRAIN: Duration = Duration::from_secs(1);

struct Shared {
    /// Preview bytes queued.
    queued: AtomicUsize,
    /// Lines dropped since the printer last said so.
    dropped: AtomicU64,
}

/// The producers' end: cheap to clone, never blocks.
#[derive(Clone)]
pub struct Feed {
    tx: Sender<(Vec<Event>, usize)>,
    shared: Arc<Shared>,
    strsize: usize,
}

impl Feed {
    /// What the printer needs of `ev`, written with unique id `id`.
    pub fn preview(&self, ev: &Event, id: u64) -> Event {
        let mut p = preview(ev, self.strsize);
        p.unique_id = id;
        p
    }

    /// The bytes of a buffer a line shows (dump's `-s`; 0: all).
    pub fn strsize(&self) -> usize {
        self.strsize
    }

    /// Hand `batch` (previews) to the printer, or drop it when the printer is behind or gone.
    pub fn send(&self, batch: Vec<Event>) {
        if batch.is_empty() {
            return;
        }
        let n = batch.len() as u64;
        let bytes: usize = batch.iter().map(Event::memory_bytes).sum();
        if self.shared.queued.load(Ordering::Relaxed) + bytes > PRINT_QUEUE_BYTES {
            self.shared.dropped.fetch_add(n, Ordering::Relaxed);
            return;
        }
        self.shared.queued.fetch_add(bytes, Ordering::Relaxed);
        if let Err(TrySendError::Full((b, bytes)) | TrySendError::Disconnected((b, bytes))) =
            self.tx.try_send((batch, bytes))
        {
            self.shared.queued.fetch_sub(bytes, Ordering::Relaxed);
            self.shared.dropped.fetch_add(b.len() as u64, Ordering::Relaxed);
        }
    }
}

/// The printer thread.
pub struct LivePrinter {
    feed: Option<Feed>,
    done: Receiver<std::io::Result<()>>,
}

impl LivePrinter {
    /// Start the printer thread.
    pub fn start(p: Print) -> std::io::Result<LivePrinter> {
        let (tx, rx) = bounded::<(Vec<Event>, usize)>(4096);
        let shared = Arc::new(Shared { queued: AtomicUsize::new(0), dropped: AtomicU64::new(0) });
        let strsize = p.format.strsize;
        let sh = Arc::clone(&shared);
        let (done_tx, done) = bounded(1);
        std::thread::Builder::new().name("trace-print".into()).spawn(move || {
            let _ = done_tx.send(print_lines(rx, &sh, p));
        })?;
        Ok(LivePrinter { feed: Some(Feed { tx, shared, strsize }), done })
    }

    /// A producer's end.
    pub fn feed(&self) -> Feed {
        self.feed.clone().expect("fed until finished")
    }

    /// Wait (at most [`PRINT_DRAIN`], once every [`Feed`] is dropped) for the lines queued;
    /// a warning to give when the printer failed or did not finish (the trace is whole
    /// either way).
    pub fn finish(mut self) -> Option<String> {
        drop(self.feed.take());
        match self.done.recv_timeout(PRINT_DRAIN) {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!("--print stopped: {e} (the trace has every call)")),
            Err(RecvTimeoutError::Timeout) => Some(format!(
                "--print: its output took no lines for {} s; the last lines were not printed \
                 (the trace has every call)",
                PRINT_DRAIN.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Some("--print stopped (the trace has every call)".into())
            }
        }
    }
}

fn dropped_line(n: u64) -> String {
    format!("reanimator: --print fell behind the recording: {n} calls not shown (they are in the trace)")
}

/// Print `previews` ([`Feed::preview`]s) on this thread as the printer thread prints them (for
/// measuring its cost: bench/codec).
pub fn print_all(previews: Vec<Event>, p: Print) -> std::io::Result<()> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut it = previews.into_iter().peekable();
    while it.peek().is_some() {
        let batch: Vec<Event> = it.by_ref().take(256).collect();
        let _ = tx.send((batch, 0));
    }
    drop(tx);
    let shared = Shared { queued: AtomicUsize::new(0), dropped: AtomicU64::new(0) };
    print_lines(rx, &shared, p)
}

/// Format and write the lines handed over, until every producer is gone.
fn print_lines(
    rx: Receiver<(Vec<Event>, usize)>,
    shared: &Shared,
    mut p: Print,
) -> std::io::Result<()> {
    let mut failed: Option<std::io::Error> = None;
    let mut tracker = FileIoTracker::live(p.cwd.as_deref());
    let mut ops = Vec::new();
    let mut out = std::io::BufWriter::with_capacity(64 << 10, &mut p.out);
    while let Ok((batch, bytes)) = rx.recv() {
        shared.queued.fetch_sub(bytes, Ordering::Relaxed);
        if failed.is_some() {
            continue;
        }
        let r = (|| {
            let dropped = shared.dropped.swap(0, Ordering::Relaxed);
            if dropped > 0 {
                writeln!(out, "{}", dropped_line(dropped))?;
            }
            for e in &batch {
                // Descriptors named as dump names them (`read(3</etc/hostname>, ...)`): the
                // tracker steps every call shown (paths and structs come whole in previews).
                let mut fds = tracker.event_fds(e);
                tracker.apply(e, &mut |_, _| true, &mut ops);
                ops.clear();
                fds.ret = tracker.returned_fd(e);
                writeln!(out, "{}", format_event_fds(e, &p.format, Some(&fds)))?;
            }
            // Lines appear as their batch arrives; when more are already waiting, the flush
            // waits for them.
            if rx.is_empty() {
                out.flush()?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            failed = Some(e);
        }
    }
    let dropped = shared.dropped.swap(0, Ordering::Relaxed);
    if failed.is_none() && dropped > 0 {
        let _ = writeln!(out, "{}", dropped_line(dropped));
    }
    let flushed = out.flush();
    match failed {
        Some(e) => Err(e),
        None => flushed,
    }
}
