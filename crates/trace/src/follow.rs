//! [`StreamReader`]: a trace read as it arrives — from a pipe (`reanimator dump -`) or from a
//! file still being written (`reanimator dump --follow`) — with its events in `unique_id`
//! order and its memory bounded in bytes.
//!
//! A trace holds one extent stream per call type, so the events of one moment are spread over
//! extents written at different times. [`TraceReader`](crate::TraceReader) merges them with
//! the file's index; a stream has none. The writer therefore says how far it has written:
//! `Reanimator::Watermark` records (TRACE_FORMAT 3.12), each saying that every event below
//! some `unique_id` is in an extent before it. The stream reader decodes each extent as it
//! arrives into its type's cursor and hands out, in order, the events below the last
//! watermark; it holds what the writer held in its buffers, no more. A stream without
//! watermarks (an older writer's, or a foreign one's) is merged at its end, within
//! [`StreamOptions::hold_bytes`]. The stream ends with the trailer (the writer finished), at
//! the end of the input (a pipe), or, following a file, when the writer that its watermarks
//! name is gone.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dataseries::stream::{FeedError, Framer, PartKind, Piece};
use dataseries::{Extent, ExtentType};
use ra_syscalls::by_trace_name;

use crate::event::Event;
use crate::fsop::FS_OP_TYPE;
use crate::reader::{decode_event, Ctx, Cursor, DecodeOpts, LostRecord, TraceKind};
use crate::schema::{CallLayout, INFO_TYPE, LOST_TYPE, PREFIX, WATERMARK_TYPE};
use crate::{Error, Result};

/// Default bound of the decoded extents a stream reader holds while it waits for the events
/// that come before them.
pub const HOLD_BYTES: usize = 256 << 20;

/// How a [`StreamReader`] reads.
pub struct StreamOptions {
    /// The input is a file being written: at its end, wait for more (polling every
    /// [`FOLLOW_POLL`]) until the trailer comes or the writer is gone.
    pub follow: bool,
    /// Most bytes of decoded extents held at once ([`HOLD_BYTES`]); beyond it the stream is
    /// refused ([`Error::StreamHold`]).
    pub hold_bytes: usize,
    /// Set (by a signal handler) to end the reading at the next poll.
    pub stop: Option<Arc<AtomicBool>>,
    /// Called before the reader waits for more input (a printer flushes what it holds).
    pub on_wait: Option<Box<dyn FnMut() + Send>>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions { follow: false, hold_bytes: HOLD_BYTES, stop: None, on_wait: None }
    }
}

/// How often a follower looks for more of the file.
pub const FOLLOW_POLL: Duration = Duration::from_millis(50);

/// How a stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// Not yet.
    Open,
    /// With its trailer: the writer finished.
    Complete,
    /// The input ended without a trailer (the writer stopped or was killed); `partial`
    /// bytes of an extent begun were left out.
    Cut {
        /// Bytes read after the last complete extent.
        partial: u64,
    },
    /// Following a file: its writer is gone without finishing it.
    WriterGone {
        /// The writer's process id, as the watermarks name it; no such process is alive.
        pid: i32,
        /// Bytes read after the last complete extent, as in `Cut`.
        partial: u64,
    },
    /// [`StreamOptions::stop`] was set.
    Stopped,
}

/// A trace read from a stream. Iterate it for the events.
pub struct StreamReader {
    src: Box<dyn Read + Send>,
    name: String,
    opts: StreamOptions,
    framer: Framer,
    /// The bytes of the extent being received.
    part: Vec<u8>,
    /// Extents received whole and not yet taken in: (type name, bytes).
    arrived: Vec<(String, Vec<u8>)>,
    types: HashMap<String, Arc<ExtentType>>,
    layouts: Vec<CallLayout>,
    by_name: HashMap<String, usize>,
    kind: TraceKind,
    cursors: Vec<Cursor>,
    /// Whether each cursor has an entry in `heap`.
    queued: Vec<bool>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// Every event below this id has arrived (the last watermark).
    below: u64,
    writer_pid: Option<i32>,
    info: Vec<(String, Vec<u8>)>,
    lost: Vec<LostRecord>,
    end: StreamEnd,
    failed: bool,
    decode: DecodeOpts,
}

impl StreamReader {
    /// Start reading `src` (`name` names it in messages): reads until the trace's type
    /// library has arrived.
    pub fn new(src: Box<dyn Read + Send>, name: &str, opts: StreamOptions) -> Result<Self> {
        let mut r = StreamReader {
            src,
            name: name.to_string(),
            framer: Framer::new().max_extent(opts.hold_bytes as u64),
            opts,
            part: Vec::new(),
            arrived: Vec::new(),
            types: HashMap::new(),
            layouts: Vec::new(),
            by_name: HashMap::new(),
            kind: TraceKind::Ours,
            cursors: Vec::new(),
            queued: Vec::new(),
            heap: BinaryHeap::new(),
            below: 0,
            writer_pid: None,
            info: Vec::new(),
            lost: Vec::new(),
            end: StreamEnd::Open,
            failed: false,
            decode: DecodeOpts::default(),
        };
        while r.types.is_empty() {
            if r.end != StreamEnd::Open {
                return Err(Error::StreamFrame {
                    name: r.name.clone(),
                    detail: "it ended before its type library (not a trace)".into(),
                });
            }
            r.read_more()?;
        }
        // The facts written with the file's creation (cwd, the recorder's) come next.
        while r.info.is_empty() && r.end == StreamEnd::Open && r.kind == TraceKind::Ours {
            r.read_more()?;
        }
        Ok(r)
    }

    /// Who wrote the trace.
    pub fn kind(&self) -> TraceKind {
        self.kind
    }

    /// The call types the trace declares.
    pub fn layouts(&self) -> &[CallLayout] {
        &self.layouts
    }

    /// The trace info records received so far.
    pub fn info(&self) -> &[(String, Vec<u8>)] {
        &self.info
    }

    /// The last value received for `key`.
    pub fn info_value(&self, key: &str) -> Option<&[u8]> {
        self.info.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_slice())
    }

    /// Loss records received so far.
    pub fn lost(&self) -> &[LostRecord] {
        &self.lost
    }

    /// How the stream ended (after the iteration).
    pub fn end(&self) -> StreamEnd {
        self.end
    }

    /// Share data buffers with their extents ([`crate::EventIter::sharing_buffers`]).
    pub fn sharing_buffers(mut self) -> Self {
        self.decode.share = true;
        self
    }

    /// Bytes of decoded extents held now.
    fn held(&self) -> usize {
        self.cursors
            .iter()
            .map(|c| {
                c.extent.as_ref().map_or(0, Extent::memory_bytes)
                    + c.ready.iter().map(Extent::memory_bytes).sum::<usize>()
            })
            .sum()
    }

    /// Read more of the input: take in the extents that completed, or note the end.
    fn read_more(&mut self) -> Result<()> {
        let mut buf = [0u8; 64 << 10];
        let n = loop {
            if self.opts.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
                self.end = StreamEnd::Stopped;
                return Ok(());
            }
            match self.src.read(&mut buf) {
                Ok(0) if self.opts.follow && !self.framer.complete() => {
                    if let Some(pid) = self.writer_pid.filter(|&p| !process_alive(p)) {
                        // Whatever it wrote before it went is there by now.
                        match self.src.read(&mut buf) {
                            Ok(0) => {}
                            Ok(n) => break n,
                            Err(e) => return Err(self.io_error(e)),
                        }
                        let partial = self.framer.partial();
                        self.end = StreamEnd::WriterGone { pid, partial };
                        return Ok(());
                    }
                    std::thread::sleep(FOLLOW_POLL);
                }
                Ok(0) => {
                    self.end = if self.framer.complete() {
                        StreamEnd::Complete
                    } else {
                        StreamEnd::Cut { partial: self.framer.partial() }
                    };
                    return Ok(());
                }
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e)),
            }
        };
        let chunk = &buf[..n];
        if self.framer.offset() == 0 && chunk.starts_with(&dataseries::crypt::MAGIC[..1]) {
            let head = &chunk[..chunk.len().min(dataseries::crypt::MAGIC.len())];
            if dataseries::crypt::MAGIC.starts_with(head) {
                return Err(Error::StreamEncrypted { name: self.name.clone() });
            }
        }
        let (part, arrived) = (&mut self.part, &mut self.arrived);
        let mut trailer = false;
        let fed = self.framer.feed(chunk, |p| {
            match p {
                Piece::Data { part: pt, bytes } if pt.kind == PartKind::Extent => {
                    part.extend_from_slice(bytes)
                }
                Piece::Data { .. } => {}
                Piece::End { part: pt } if pt.kind == PartKind::Extent => {
                    arrived.push((pt.type_name.clone(), std::mem::take(part)));
                }
                Piece::End { part: pt } if pt.kind == PartKind::Trailer => trailer = true,
                Piece::End { .. } => {}
            }
            Ok::<(), std::convert::Infallible>(())
        });
        if let Err(FeedError::Frame(e)) = fed {
            return Err(Error::StreamFrame { name: self.name.clone(), detail: e.to_string() });
        }
        for (ty, bytes) in std::mem::take(&mut self.arrived) {
            self.take_in(&ty, &bytes)?;
        }
        if trailer {
            self.end = StreamEnd::Complete;
        }
        Ok(())
    }

    fn io_error(&self, source: std::io::Error) -> Error {
        Error::Io { path: self.name.clone().into(), source }
    }

    fn decode(&self, bytes: &[u8]) -> Result<Extent> {
        let be = self.framer.is_big_endian();
        let types = &self.types;
        let lookup = |n: &str| match n {
            dataseries::raw::XMLTYPE => Some(dataseries::raw::xmltype_type()),
            dataseries::raw::INDEX => Some(dataseries::raw::index_type()),
            _ => types.get(n).cloned(),
        };
        Ok(dataseries::raw::decode_extent_bytes(bytes, be, &lookup)?)
    }

    /// One whole extent of the stream.
    fn take_in(&mut self, ty: &str, bytes: &[u8]) -> Result<()> {
        if ty == dataseries::raw::XMLTYPE {
            let e = self.decode(bytes)?;
            for i in 0..e.len() {
                let Some(x) = e.bytes(i, 0) else { continue };
                let xml = std::str::from_utf8(x).map_err(|e| dataseries::Error::XmlParse {
                    detail: format!("not UTF-8: {e}"),
                })?;
                let t = Arc::new(ExtentType::from_xml(xml)?);
                self.types.insert(t.name().to_string(), t);
            }
            let mut names: Vec<&String> = self.types.keys().collect();
            names.sort();
            for n in names {
                let t = &self.types[n];
                let layout = if let Some(call) = n.strip_prefix(PREFIX) {
                    CallLayout::resolve(by_trace_name(call), t.clone())
                } else if n == FS_OP_TYPE {
                    CallLayout::resolve(None, t.clone())
                } else {
                    continue;
                };
                self.by_name.insert(n.clone(), self.layouts.len());
                self.cursors.push(Cursor::streamed(self.layouts.len(), n));
                self.queued.push(false);
                self.layouts.push(layout);
            }
            if self.layouts.is_empty() {
                return Err(Error::NotATrace { prefix: PREFIX });
            }
            self.kind = if self.types.contains_key(INFO_TYPE) {
                TraceKind::Ours
            } else {
                TraceKind::ReAnimator
            };
            return Ok(());
        }
        if self.types.is_empty() {
            return Err(Error::StreamFrame {
                name: self.name.clone(),
                detail: "its first extent is not the type library".into(),
            });
        }
        if let Some(&ci) = self.by_name.get(ty) {
            let e = self.decode(bytes)?;
            let c = &mut self.cursors[ci];
            c.ready.push_back(e);
            if !self.queued[ci] {
                self.queue(ci)?;
            }
            let held = self.held();
            if held > self.opts.hold_bytes {
                return Err(Error::StreamHold {
                    name: self.name.clone(),
                    held,
                    limit: self.opts.hold_bytes,
                });
            }
        } else if ty == WATERMARK_TYPE {
            let e = self.decode(bytes)?;
            for r in 0..e.len() {
                if let Some(b) = e.i64(r, 0) {
                    self.below = self.below.max(b.max(0) as u64);
                }
                self.writer_pid = e.i32(r, 1).filter(|&p| p > 0).or(self.writer_pid);
            }
        } else if ty == INFO_TYPE {
            let e = self.decode(bytes)?;
            for r in 0..e.len() {
                let k = e.bytes(r, 0).unwrap_or_default();
                let v = e.bytes(r, 1).unwrap_or_default();
                self.info.push((String::from_utf8_lossy(k).into_owned(), v.to_vec()));
            }
        } else if ty == LOST_TYPE {
            let e = self.decode(bytes)?;
            for r in 0..e.len() {
                self.lost.push(LostRecord {
                    syscall: String::from_utf8_lossy(e.bytes(r, 0).unwrap_or_default()).into(),
                    count: e.i64(r, 1).unwrap_or(0),
                    bytes: e.i64(r, 2).unwrap_or(0),
                    time_first: e.i64(r, 3),
                    time_last: e.i64(r, 4),
                    reason: String::from_utf8_lossy(e.bytes(r, 5).unwrap_or_default()).into(),
                });
            }
        }
        // Other types (snapshots, blobs, seals, the index) are not events.
        Ok(())
    }

    /// Put cursor `ci`'s next record on the heap, if it has one.
    fn queue(&mut self, ci: usize) -> Result<()> {
        let c = &mut self.cursors[ci];
        if c.fill(None, None)? {
            let l = &self.layouts[c.layout];
            let e = c.extent.as_ref().expect("filled");
            let id = l.common.unique_id.and_then(|f| e.i64(c.row, f)).unwrap_or(0) as u64;
            self.heap.push(Reverse((id, ci)));
            self.queued[ci] = true;
        } else {
            self.queued[ci] = false;
        }
        Ok(())
    }

    fn step(&mut self) -> Result<Option<Event>> {
        loop {
            let ended = self.end != StreamEnd::Open;
            if let Some(&Reverse((id, ci))) = self.heap.peek() {
                // Below the watermark nothing can still come before it; at the end, nothing.
                if id < self.below || (ended && self.end != StreamEnd::Stopped) {
                    self.heap.pop();
                    let ctx = Ctx { layouts: &self.layouts, kind: self.kind, ds: None };
                    let ev = decode_event(&ctx, &mut self.cursors[ci], None, self.decode)?;
                    self.queue(ci)?;
                    return Ok(Some(ev));
                }
            }
            if ended {
                return Ok(None);
            }
            if let Some(f) = self.opts.on_wait.as_mut() {
                f();
            }
            self.read_more()?;
        }
    }
}

impl Iterator for StreamReader {
    type Item = Result<Event>;
    fn next(&mut self) -> Option<Result<Event>> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(e) => e.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Whether process `pid` exists (on this host: a follower and its writer share it).
fn process_alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
