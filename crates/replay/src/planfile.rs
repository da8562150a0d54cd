//! Compiled replay plans (`reanimator compile`): a trace's calls placed once, stored compactly
//! with their data deduplicated, read back by replay through a memory map.
//!
//! A plan is one file (the format is documented in docs/REPLAY.md, "Plan format"):
//!
//! ```text
//! header    "RAPLAN\0\n", u32 version, u32 length, JSON (trace facts, source, registry)
//! chunk*    64-byte chunk header + payload:
//!             data   deduplicated buffers, back to back
//!             calls  placed calls (events, placement, gates), varint-encoded
//!             end    JSON totals and the planner's notes; always last
//! ```
//!
//! Every chunk header carries its payload's length and CRC-32 (accidental damage; a plan is
//! not tamper-evident). A calls chunk is checked
//! when it is decoded; a data chunk the first time a call refers to it (each once). Data
//! buffers of [`DEDUP_MIN`] bytes or more are stored once per distinct content (BLAKE3) and
//! referred to by their offset in the concatenated data chunks ("data space"); a data chunk
//! always precedes the first calls chunk that refers to it, so a plan is written in one
//! streaming pass. The writer's memory is bounded: the two chunk buffers being filled, at
//! most four queued for the writer thread and four of each kind kept for reuse, and a dedup
//! index of at most `dedup_memory` bytes (once full, new contents are stored without being
//! indexed).

use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use ra_syscalls::SyscallDef;
use ra_trace::{ArgValue, Bytes, Event, ExtraValue, IovValue};

use crate::planner::{Placed, PlanNotes, TraceFacts};
use crate::shadow::Placement;
use crate::sys::{self, DIRECT_ALIGN};

/// The plan file's magic.
pub const MAGIC: &[u8; 8] = b"RAPLAN\0\n";
/// The plan format's newest version: version 2 plans may hold lz4-compressed data chunks
/// (`compile --compress lz4`), version 1 plans do not (and are still written without it, so
/// that older reanimators read them). A plan of another version is refused (compile it
/// again).
pub const VERSION: u32 = 2;
/// The oldest plan version read.
pub const VERSION_OLDEST: u32 = 1;
/// Buffers at least this long go to the data chunks (deduplicated); shorter ones (paths,
/// small structs) are stored inline.
pub const DEDUP_MIN: usize = 256;
/// A calls chunk is written when its payload reaches this size ...
const CALLS_CHUNK: usize = 1 << 20;
/// ... or when this much new data was stored since the last one ...
const CALLS_DATA: usize = 16 << 20;
/// ... a data chunk when its payload reaches this size.
const DATA_CHUNK: usize = 4 << 20;
const CHUNK_MAGIC: &[u8; 8] = b"RACHUNK\0";
const CHUNK_HEADER: usize = 64;
const KIND_DATA: u32 = 1;
const KIND_CALLS: u32 = 2;
const KIND_END: u32 = 3;
/// A data chunk stored lz4-compressed (a block; `count` is its data's length).
const KIND_DATA_LZ4: u32 = 4;
/// Decompressed data chunks kept for the next calls (each at most DATA_CHUNK bytes: 32 MiB
/// in all). Two were not enough: the build's plan, whose deduplicated buffers (headers read
/// again and again) refer to older chunks, replayed in 0.79-0.83 s instead of 0.36-0.54 s
/// uncompressed; with eight, 0.34-0.41 s.
const UNPACKED_KEPT: usize = 8;
/// A reader alone (no replay behind it) keeps the plan's pages mapped this far behind it ...
const TRIM_WINDOW: usize = 32 << 20;
/// ... and pages are dropped in steps of at least this many bytes (a power of two).
const TRIM_EVERY: usize = 32 << 20;
/// The header's fixed part: magic, version, JSON length, JSON CRC-32.
const HEADER_FIXED: usize = 20;
/// The JSON header's size limit (a longer one is corrupt).
const HEADER_MAX: usize = 1 << 20;

/// Errors reading or writing a plan.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// Opening, mapping, reading or writing the plan file (or starting `compile`'s writer
    /// thread) failed.
    #[error("{path}: {source}")]
    Io {
        /// The plan file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is shorter than 16 bytes or does not start with the plan magic.
    #[error("{path} is not a reanimator plan (no plan header)")]
    NotPlan {
        /// The file that was opened.
        path: PathBuf,
    },
    /// The plan's format version is outside the versions this build reads.
    #[error(
        "{path} is a plan of format version {found}, this reanimator reads versions \
         {VERSION_OLDEST} to {VERSION}: compile the trace again (reanimator compile TRACE -o PLAN)"
    )]
    Version {
        /// The plan file.
        path: PathBuf,
        /// The version its header names.
        found: u32,
    },
    /// The plan's [`registry_fingerprint`] differs from this build's: its calls' registry
    /// indices would name other calls.
    #[error(
        "{path} was compiled by a reanimator with another system call registry: compile the \
         trace again (reanimator compile TRACE -o PLAN)"
    )]
    Registry {
        /// The plan file.
        path: PathBuf,
    },
    /// A checksum, length, offset or encoded call in the plan is wrong.
    #[error("{path} is corrupt: {what}")]
    Corrupt {
        /// The plan file.
        path: PathBuf,
        /// What was wrong, and where.
        what: String,
    },
    /// The plan ends early: its header or a chunk is cut, or the end chunk is missing.
    #[error("{path} is incomplete (no end chunk: was `reanimator compile` stopped?): {what}")]
    Incomplete {
        /// The plan file.
        path: PathBuf,
        /// What was cut.
        what: String,
    },
    /// `compile`: reading the source trace failed.
    #[error("reading the trace: {0}")]
    Trace(#[from] ra_trace::Error),
    /// `compile`: the stop flag was set (Ctrl-C) before every call was written.
    #[error("interrupted")]
    Interrupted,
}

/// A fingerprint of the system call registry: calls are stored by their index in it.
pub fn registry_fingerprint() -> String {
    let mut h = blake3::Hasher::new();
    for d in ra_syscalls::REGISTRY {
        h.update(d.name.as_bytes());
        h.update(b"\0");
        h.update(d.trace_name.as_bytes());
        h.update(format!("{:?}\0", d.args).as_bytes());
    }
    h.finalize().to_hex()[..16].to_string()
}

/// What `compile` wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileStats {
    /// Placed calls written to the plan.
    pub calls: u64,
    /// Bytes of buffers that went to the data chunks, before deduplication ...
    pub data_in: u64,
    /// ... and stored (after deduplication).
    pub data_stored: u64,
    /// Buffers of [`DEDUP_MIN`] bytes or more (those that go to the data chunks).
    pub buffers: u64,
    /// Of those, buffers whose content was new and stored (the rest refer to an earlier
    /// copy).
    pub unique_buffers: u64,
    /// Bytes of buffers stored inline (shorter than DEDUP_MIN).
    pub inline_bytes: u64,
    /// The dedup index filled up after this many contents (later new contents were stored
    /// without being indexed); None when it never filled.
    pub index_full_at: Option<u64>,
    /// The plan file's size in bytes, end chunk included.
    pub plan_bytes: u64,
}

impl CompileStats {
    /// The stats as the plan's end chunk and `compile`'s JSON report store them (one key per
    /// field; `index_full_at` null when the index never filled).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "calls": self.calls,
            "data_in": self.data_in,
            "data_stored": self.data_stored,
            "buffers": self.buffers,
            "unique_buffers": self.unique_buffers,
            "inline_bytes": self.inline_bytes,
            "index_full_at": self.index_full_at,
            "plan_bytes": self.plan_bytes,
        })
    }

    fn from_json(v: &serde_json::Value) -> Option<CompileStats> {
        let u = |k: &str| v.get(k).and_then(|x| x.as_u64());
        Some(CompileStats {
            calls: u("calls")?,
            data_in: u("data_in")?,
            data_stored: u("data_stored")?,
            buffers: u("buffers")?,
            unique_buffers: u("unique_buffers")?,
            inline_bytes: u("inline_bytes")?,
            index_full_at: u("index_full_at"),
            plan_bytes: u("plan_bytes")?,
        })
    }
}

/// Where a compiled plan came from (its header says; `info` shows it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanSource {
    /// The trace's path as given to `compile` (`-` for standard input).
    pub path: String,
    /// The trace's size in bytes when compiled ([`PlanSource::check`] compares it).
    pub size: u64,
    /// The trace's modification time when compiled, ns since the Unix epoch.
    pub mtime_ns: i64,
    /// Snapshots the trace stores (`record --snapshot`): `--init` restores them from the
    /// trace itself, which a plan does not copy.
    pub snapshots: u64,
}

impl PlanSource {
    /// The trace at `path` (holding `snapshots` snapshots), as a plan records it.
    pub fn of(path: &Path, snapshots: u64) -> std::io::Result<PlanSource> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok(PlanSource {
            path: path.display().to_string(),
            size: m.len(),
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            snapshots,
        })
    }

    /// Whether the trace is still where it was when compiled, unchanged (size and
    /// modification time); else why not.
    pub fn check(&self) -> Result<(), String> {
        if self.path == "-" {
            return Err("the trace was compiled from standard input, which is gone; give \
                        the trace as a file"
                .to_string());
        }
        let now = PlanSource::of(Path::new(&self.path), self.snapshots)
            .map_err(|e| format!("{} is gone ({e})", self.path))?;
        if (now.size, now.mtime_ns) != (self.size, self.mtime_ns) {
            return Err(format!("{} changed since it was compiled", self.path));
        }
        Ok(())
    }
}

fn facts_json(f: &TraceFacts) -> serde_json::Value {
    serde_json::json!({
        "arch": f.arch,
        "cwd": ra_hex::encode(&f.cwd),
        "umask": f.umask,
        "synthetic": f.synthetic,
        "std_fds": f.std_fds,
        "page_records": f.page_records,
        "data": f.data,
    })
}

fn facts_from_json(v: &serde_json::Value) -> Option<TraceFacts> {
    Some(TraceFacts {
        arch: match v.get("arch")? {
            serde_json::Value::Null => None,
            a => Some(a.as_str()?.to_string()),
        },
        cwd: ra_hex::decode(v.get("cwd")?.as_str()?)?,
        umask: u32::try_from(v.get("umask")?.as_u64()?).ok()?,
        synthetic: v.get("synthetic")?.as_u64()?,
        std_fds: v.get("std_fds")?.as_bool()?,
        page_records: v.get("page_records")?.as_bool()?,
        // Plans written before the field: their traces' data mode was not kept.
        data: v.get("data").and_then(|d| d.as_bool()).unwrap_or(true),
    })
}

// ---------------------------------------------------------------------------------------
// Encoding primitives.

fn put_uv(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_iv(out: &mut Vec<u8>, v: i64) {
    put_uv(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_uv(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A cursor over a payload: every read is bounds-checked (a corrupt plan is an error, never
/// a panic or an allocation larger than the payload).
struct Cur<'a> {
    b: &'a [u8],
    at: usize,
    /// The previous call's unique_id and placed call time (deltas restart with each chunk).
    prev: (u64, i64),
}

type DecodeResult<T> = Result<T, String>;

impl<'a> Cur<'a> {
    fn uv(&mut self) -> DecodeResult<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let c = *self.b.get(self.at).ok_or("truncated varint")?;
            self.at += 1;
            if i == 9 && c > 1 {
                return Err("varint overflows 64 bits".into());
            }
            v |= u64::from(c & 0x7f) << (7 * i);
            if c & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint longer than 10 bytes".into())
    }
    fn iv(&mut self) -> DecodeResult<i64> {
        let u = self.uv()?;
        Ok((u >> 1) as i64 ^ -((u & 1) as i64))
    }
    fn i32(&mut self) -> DecodeResult<i32> {
        i32::try_from(self.iv()?).map_err(|_| "value out of range".to_string())
    }
    fn u8(&mut self) -> DecodeResult<u8> {
        let c = *self.b.get(self.at).ok_or("truncated")?;
        self.at += 1;
        Ok(c)
    }
    fn take(&mut self, n: u64) -> DecodeResult<&'a [u8]> {
        let n = usize::try_from(n).map_err(|_| "length out of range")?;
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or("truncated")?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn bytes(&mut self) -> DecodeResult<&'a [u8]> {
        let n = self.uv()?;
        self.take(n)
    }
    /// A count of items each at least one byte long (bounded by what is left).
    fn count(&mut self) -> DecodeResult<usize> {
        let n = self.uv()?;
        if n > (self.b.len() - self.at) as u64 {
            return Err(format!("count {n} exceeds the bytes left"));
        }
        Ok(n as usize)
    }
    fn done(&self) -> bool {
        self.at >= self.b.len()
    }
}

// Presence bits of a call record.
const F_CALLED: u64 = 1;
const F_RETURNED: u64 = 1 << 1;
const F_RECORDED: u64 = 1 << 2;
const F_PID: u64 = 1 << 3;
const F_TID: u64 = 1 << 4;
const F_PPID: u64 = 1 << 5;
const F_UID: u64 = 1 << 6;
const F_GID: u64 = 1 << 7;
const F_SID: u64 = 1 << 8;
const F_PGID: u64 = 1 << 9;
const F_RET: u64 = 1 << 10;
const F_ERRNO: u64 = 1 << 11;
const F_NOT_CAPTURED: u64 = 1 << 12;
const F_NAME: u64 = 1 << 13;
const F_NEW_PROC: u64 = 1 << 14;
const F_CHILD: u64 = 1 << 15;
const F_THREAD: u64 = 1 << 16;
const F_ENDS_PROC: u64 = 1 << 17;
const F_FIRST_SEEN: u64 = 1 << 18;
const F_INHERITED: u64 = 1 << 19;
const F_ALL: u64 = (1 << 20) - 1;

// Argument tags.
const A_ABSENT: u8 = 0;
const A_INT: u8 = 1;
const A_INLINE: u8 = 2;
const A_REF: u8 = 3;
const A_NOT_CAPTURED: u8 = 4;
const A_IOV: u8 = 5;
const A_STRINGS: u8 = 6;
const A_HASHED: u8 = 7;

// Extra-field tags.
const X_NULL: u8 = 0;
const X_BOOL: u8 = 1;
const X_INT: u8 = 2;
const X_DOUBLE: u8 = 3;
const X_BYTES: u8 = 4;

// ---------------------------------------------------------------------------------------
// Writing.

/// Writes a plan in one pass (see the module's documentation).
pub struct PlanWriter {
    path: PathBuf,
    /// Chunks go to a writer thread (the kernel's copy into the page cache overlaps the
    /// encoding); their buffers come back for reuse, data chunks' and calls chunks' each on
    /// their own channel (`[data, calls]`: a calls chunk's buffer is too small for data).
    tx: Option<crossbeam_channel::Sender<Vec<u8>>>,
    back: [crossbeam_channel::Receiver<Vec<u8>>; 2],
    thread: Option<std::thread::JoinHandle<std::io::Result<std::fs::File>>>,
    pos: u64,
    calls: Vec<u8>,
    calls_n: u64,
    calls_first_seq: u64,
    /// The previous call's unique_id and placed call time in this chunk (deltas).
    prev: (u64, i64),
    data: Vec<u8>,
    /// The data space offset of `data`'s first byte.
    data_at: u64,
    index: HashMap<[u8; 32], u64>,
    index_cap: usize,
    /// `stats.data_stored` when the last calls chunk was written.
    data_at_calls: u64,
    def_index: HashMap<usize, u64>,
    stats: CompileStats,
    /// Data chunks are stored lz4-compressed (when that makes them smaller).
    compress: bool,
}

impl PlanWriter {
    /// Create `path` (replacing it) and write the header. `compress`: store data chunks
    /// lz4-compressed (a version 2 plan; else version 1).
    pub fn create(
        path: &Path,
        facts: &TraceFacts,
        source: &PlanSource,
        dedup_memory: usize,
        compress: bool,
    ) -> Result<PlanWriter, PlanError> {
        let version: u32 = if compress { VERSION } else { VERSION_OLDEST };
        let io = |source| PlanError::Io { path: path.to_path_buf(), source };
        let f = ra_fsstate::private::create(path).map_err(io)?;
        let (tx, rx) = crossbeam_channel::bounded::<Vec<u8>>(4);
        let (data_back_tx, data_back) = crossbeam_channel::bounded::<Vec<u8>>(4);
        let (calls_back_tx, calls_back) = crossbeam_channel::bounded::<Vec<u8>>(4);
        let thread = std::thread::Builder::new()
            .name("plan-writer".into())
            .spawn(move || -> std::io::Result<std::fs::File> {
                let mut out = DirectWriter::new(f);
                for b in rx {
                    out.write(&b)?;
                    // Chunk buffers go back to be filled again (a chunk header's does not: a
                    // small buffer taken for a chunk would grow by reallocations).
                    if b.capacity() >= DATA_CHUNK {
                        let _ = data_back_tx.try_send(b);
                    } else if b.capacity() >= CALLS_CHUNK {
                        let _ = calls_back_tx.try_send(b);
                    }
                }
                out.finish()
            })
            .map_err(io)?;
        let mut w = PlanWriter {
            path: path.to_path_buf(),
            tx: Some(tx),
            back: [data_back, calls_back],
            thread: Some(thread),
            pos: 0,
            calls: Vec::with_capacity(CALLS_CHUNK + (64 << 10)),
            calls_n: 0,
            calls_first_seq: 0,
            prev: (0, 0),
            data: Vec::with_capacity(DATA_CHUNK),
            data_at: 0,
            index: HashMap::new(),
            data_at_calls: 0,
            // An entry: the key, the offset and the table's overhead (about 64 bytes).
            index_cap: dedup_memory / 64,
            def_index: ra_syscalls::REGISTRY
                .iter()
                .enumerate()
                .map(|(i, d)| (d as *const SyscallDef as usize, i as u64))
                .collect(),
            stats: CompileStats::default(),
            compress,
        };
        let header = serde_json::json!({
            "format": "reanimator-plan",
            "version": version,
            "reanimator": env!("CARGO_PKG_VERSION"),
            "registry": registry_fingerprint(),
            "facts": facts_json(facts),
            "source": {
                "path": source.path,
                "size": source.size,
                "mtime_ns": source.mtime_ns,
                "snapshots": source.snapshots,
            },
            "dedup_min": DEDUP_MIN,
        });
        let j = serde_json::to_vec(&header).expect("JSON of plain values");
        let mut h = Vec::with_capacity(HEADER_FIXED + j.len());
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&version.to_le_bytes());
        h.extend_from_slice(&(j.len() as u32).to_le_bytes());
        h.extend_from_slice(&crc32fast::hash(&j).to_le_bytes());
        h.extend_from_slice(&j);
        w.write(&h)?;
        Ok(w)
    }

    /// Hand bytes to the writer thread (its error, if it stopped, is reported here).
    fn send(&mut self, b: Vec<u8>) -> Result<(), PlanError> {
        self.pos += b.len() as u64;
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(b).is_ok());
        if sent {
            return Ok(());
        }
        Err(self.writer_error())
    }

    /// What stopped the writer thread.
    fn writer_error(&mut self) -> PlanError {
        self.tx = None;
        let source = match self.thread.take().map(|t| t.join()) {
            Some(Ok(Err(e))) => e,
            Some(Err(_)) => std::io::Error::other("the plan writer thread panicked"),
            _ => std::io::Error::other("the plan writer thread ended"),
        };
        PlanError::Io { path: self.path.clone(), source }
    }

    fn write(&mut self, b: &[u8]) -> Result<(), PlanError> {
        self.send(b.to_vec())
    }

    /// A chunk: its header, then the payload (the buffer goes to the writer thread; a
    /// recycled one of the same size replaces it).
    fn chunk(
        &mut self,
        kind: u32,
        count: u64,
        first: u64,
        payload: &mut Vec<u8>,
    ) -> Result<(), PlanError> {
        let mut h = [0u8; CHUNK_HEADER];
        h[0..8].copy_from_slice(CHUNK_MAGIC);
        h[8..12].copy_from_slice(&kind.to_le_bytes());
        h[16..24].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        h[24..32].copy_from_slice(&count.to_le_bytes());
        h[32..40].copy_from_slice(&first.to_le_bytes());
        h[40..44].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
        self.write(&h)?;
        let cap = payload.capacity();
        // A recycled buffer only if it holds a whole chunk: growing one would copy it.
        let mut next = match self.back[usize::from(cap < DATA_CHUNK)].try_recv() {
            Ok(v) if v.capacity() >= cap => v,
            _ => Vec::with_capacity(cap),
        };
        next.clear();
        let full = std::mem::replace(payload, next);
        self.send(full)
    }

    fn flush_data(&mut self) -> Result<(), PlanError> {
        if self.data.is_empty() {
            return Ok(());
        }
        let n = self.data.len() as u64;
        // (A chunk beyond DATA_CHUNK holds one large buffer: stored as it is, so that replay
        // writes it from the map rather than decompressing it whole.)
        if self.compress && self.data.len() <= DATA_CHUNK {
            let mut z = lz4_flex::block::compress(&self.data);
            if z.len() < self.data.len() {
                let at = self.data_at;
                self.data.clear();
                self.data_at += n;
                return self.chunk(KIND_DATA_LZ4, n, at, &mut z);
            }
        }
        let mut data = std::mem::take(&mut self.data);
        let r = self.chunk(KIND_DATA, 0, self.data_at, &mut data);
        self.data = data;
        self.data_at += n;
        r
    }

    fn flush_calls(&mut self) -> Result<(), PlanError> {
        if self.calls_n == 0 {
            return Ok(());
        }
        // The data the calls refer to goes first.
        self.flush_data()?;
        let mut calls = std::mem::take(&mut self.calls);
        let r = self.chunk(KIND_CALLS, self.calls_n, self.calls_first_seq, &mut calls);
        self.calls = calls;
        r?;
        self.calls_first_seq += self.calls_n;
        self.calls_n = 0;
        self.data_at_calls = self.stats.data_stored;
        self.prev = (0, 0);
        Ok(())
    }

    /// Store a buffer: inline when short, else by reference to its (deduplicated) content.
    fn buffer(&mut self, out: &mut Vec<u8>, b: &[u8]) -> Result<(), PlanError> {
        if b.len() < DEDUP_MIN {
            out.push(A_INLINE);
            put_bytes(out, b);
            self.stats.inline_bytes += b.len() as u64;
            return Ok(());
        }
        self.stats.buffers += 1;
        self.stats.data_in += b.len() as u64;
        let key = *blake3::hash(b).as_bytes();
        let at = match self.index.get(&key) {
            Some(&at) => at,
            None => {
                if self.data.len() + b.len() > DATA_CHUNK {
                    self.flush_data()?;
                }
                let at = self.data_at + self.data.len() as u64;
                self.data.extend_from_slice(b);
                if self.data.len() >= DATA_CHUNK {
                    self.flush_data()?;
                }
                self.stats.unique_buffers += 1;
                self.stats.data_stored += b.len() as u64;
                if self.index.len() < self.index_cap {
                    self.index.insert(key, at);
                } else if self.stats.index_full_at.is_none() {
                    self.stats.index_full_at = Some(self.stats.unique_buffers);
                }
                at
            }
        };
        out.push(A_REF);
        put_uv(out, at);
        put_uv(out, b.len() as u64);
        Ok(())
    }

    /// Append one placed call.
    pub fn push(&mut self, p: &Placed) -> Result<(), PlanError> {
        let mut out = std::mem::take(&mut self.calls);
        let r = self.encode(&mut out, p);
        self.calls = out;
        r?;
        self.calls_n += 1;
        self.stats.calls += 1;
        // A calls chunk also ends after CALLS_DATA of new data: replay drops the map's pages
        // behind it a calls chunk at a time, so this bounds what it keeps mapped.
        if self.calls.len() >= CALLS_CHUNK
            || self.stats.data_stored - self.data_at_calls >= CALLS_DATA as u64
        {
            self.flush_calls()?;
        }
        Ok(())
    }

    fn encode(&mut self, out: &mut Vec<u8>, p: &Placed) -> Result<(), PlanError> {
        let ev = &p.ev;
        let def = ev.def.ok_or_else(|| PlanError::Corrupt {
            path: self.path.clone(),
            what: format!("call {} has no registry entry", ev.name),
        })?;
        let idx = self.def_index[&(def as *const SyscallDef as usize)];
        let pl = &p.pl;
        let mut f = 0u64;
        let bit = |on: bool, b: u64| if on { b } else { 0 };
        f |= bit(ev.time_called.is_some(), F_CALLED);
        f |= bit(ev.time_returned.is_some(), F_RETURNED);
        f |= bit(ev.time_recorded.is_some(), F_RECORDED);
        f |= bit(ev.pid.is_some(), F_PID);
        f |= bit(ev.tid.is_some(), F_TID);
        f |= bit(ev.ppid.is_some(), F_PPID);
        f |= bit(ev.uid.is_some(), F_UID);
        f |= bit(ev.gid.is_some(), F_GID);
        f |= bit(ev.sid.is_some(), F_SID);
        f |= bit(ev.pgid.is_some(), F_PGID);
        f |= bit(ev.ret.is_some(), F_RET);
        f |= bit(ev.errno.is_some(), F_ERRNO);
        f |= bit(ev.buffer_not_captured, F_NOT_CAPTURED);
        f |= bit(ev.name != def.trace_name, F_NAME);
        f |= bit(p.new_proc.is_some(), F_NEW_PROC);
        f |= bit(pl.child.is_some(), F_CHILD);
        f |= bit(pl.thread.is_some(), F_THREAD);
        f |= bit(pl.ends_proc, F_ENDS_PROC);
        f |= bit(pl.first_seen, F_FIRST_SEEN);
        f |= bit(pl.inherited, F_INHERITED);
        put_uv(out, f);
        put_uv(out, idx);
        if f & F_NAME != 0 {
            put_bytes(out, ev.name.as_bytes());
        }
        put_iv(out, ev.unique_id.wrapping_sub(self.prev.0) as i64);
        put_iv(out, p.called.wrapping_sub(self.prev.1));
        put_iv(out, p.ret.wrapping_sub(p.called));
        self.prev = (ev.unique_id, p.called);
        for (on, v) in [
            (f & F_CALLED, ev.time_called),
            (f & F_RETURNED, ev.time_returned),
            (f & F_RECORDED, ev.time_recorded),
        ] {
            if on != 0 {
                put_iv(out, v.unwrap_or(0).wrapping_sub(p.called));
            }
        }
        for v in [ev.pid, ev.tid, ev.ppid, ev.uid, ev.gid, ev.sid, ev.pgid].into_iter().flatten() {
            put_iv(out, v.into());
        }
        if let Some(r) = ev.ret {
            put_iv(out, r);
        }
        if let Some(e) = ev.errno {
            put_iv(out, e.into());
        }
        // The placement and the gates.
        put_iv(out, p.tid.into());
        put_uv(out, pl.proc);
        if let Some((c, flags)) = pl.child {
            put_uv(out, c);
            put_uv(out, flags);
        }
        if let Some(t) = pl.thread {
            put_iv(out, t.into());
        }
        put_uv(out, pl.threads as u64);
        if let Some((cwd, umask)) = &p.new_proc {
            put_bytes(out, cwd);
            put_uv(out, (*umask).into());
        }
        put_uv(out, p.deps.len() as u64);
        for d in &p.deps {
            put_uv(out, p.seq - d);
        }
        put_uv(out, p.gone.len() as u64);
        for t in &p.gone {
            put_iv(out, (*t).into());
        }
        // The arguments.
        put_uv(out, ev.args.len() as u64);
        for a in &ev.args {
            match a {
                ArgValue::Absent => out.push(A_ABSENT),
                ArgValue::Int(v) => {
                    out.push(A_INT);
                    put_iv(out, *v);
                }
                ArgValue::Data(d) => self.buffer(out, d)?,
                ArgValue::NotCaptured => out.push(A_NOT_CAPTURED),
                ArgValue::Iov(v) => {
                    out.push(A_IOV);
                    put_uv(out, v.len() as u64);
                    for x in v {
                        put_uv(out, x.requested);
                        match &x.data {
                            None => out.push(A_ABSENT),
                            Some(d) => self.buffer(out, d)?,
                        }
                    }
                }
                ArgValue::Strings(v) => {
                    out.push(A_STRINGS);
                    put_uv(out, v.len() as u64);
                    for s in v {
                        put_bytes(out, s);
                    }
                }
                ArgValue::Hashed { len, blake3 } => {
                    out.push(A_HASHED);
                    put_uv(out, *len);
                    out.extend_from_slice(blake3);
                }
            }
        }
        put_uv(out, ev.extra.len() as u64);
        for (k, v) in &ev.extra {
            put_bytes(out, k.as_bytes());
            match v {
                ExtraValue::Null => out.push(X_NULL),
                ExtraValue::Bool(b) => {
                    out.push(X_BOOL);
                    out.push(u8::from(*b));
                }
                ExtraValue::Int(i) => {
                    out.push(X_INT);
                    put_iv(out, *i);
                }
                ExtraValue::DoubleBits(d) => {
                    out.push(X_DOUBLE);
                    out.extend_from_slice(&d.to_le_bytes());
                }
                ExtraValue::Bytes(b) => {
                    out.push(X_BYTES);
                    put_bytes(out, b);
                }
            }
        }
        Ok(())
    }

    /// Write the last chunks and the end chunk.
    pub fn finish(mut self, notes: &PlanNotes) -> Result<CompileStats, PlanError> {
        self.flush_calls()?;
        self.flush_data()?;
        let mut stats = self.stats.clone();
        // The plan's size counts the end chunk, whose length depends on the size's digits.
        let mut end: Vec<u8> = Vec::new();
        loop {
            stats.plan_bytes = self.pos + (CHUNK_HEADER + end.len()) as u64;
            let j = serde_json::json!({
                "stats": stats.to_json(),
                "unknown": notes.unknown,
                "warnings": notes.warnings,
            });
            let next = serde_json::to_vec(&j).expect("JSON of plain values");
            if next.len() == end.len() {
                end = next;
                break;
            }
            end = next;
        }
        self.chunk(KIND_END, stats.calls, 0, &mut end)?;
        // Close the channel; the writer thread ends with the file. (Not synced: a plan is
        // derived data, written under a temporary name and renamed when complete; its chunk
        // checksums catch a torn write.)
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(Ok(_))) => Ok(stats),
            _ => Err(self.writer_error()),
        }
    }
}

/// The plan writer thread's output: the bytes go to the file with direct I/O (`O_DIRECT`)
/// where the file system allows it, from an aligned buffer of [`DIRECT_BUFFER`] bytes, and
/// the last partial block without. A plan is written once and read later by replay: through
/// the page cache, its bytes would be copied into it (a tenth of a compile's CPU), fill
/// memory the kernel must first find or, in a VM whose freed memory goes back to the host,
/// fault in again (a 0.2 s compile took 0.3-0.4 s after ten idle seconds here), and evict
/// everything else's cached pages for a plan of hundreds of GB. Where direct I/O is refused
/// (tmpfs; a write it rejects) the rest goes through the page cache as before.
struct DirectWriter {
    f: std::fs::File,
    direct: bool,
    /// `DIRECT_BUFFER + DIRECT_ALIGN` bytes, of which `buf[at..at + DIRECT_BUFFER]` is used
    /// (aligned); `len` of them are filled.
    buf: Vec<u8>,
    at: usize,
    len: usize,
}

/// Bytes gathered before each direct write.
const DIRECT_BUFFER: usize = 8 << 20;

impl DirectWriter {
    fn new(f: std::fs::File) -> DirectWriter {
        let direct = sys::set_direct(f.as_raw_fd(), true).is_ok();
        let (buf, at) = if direct {
            let buf = vec![0u8; DIRECT_BUFFER + DIRECT_ALIGN];
            let at = buf.as_ptr().align_offset(DIRECT_ALIGN);
            (buf, at)
        } else {
            (Vec::new(), 0)
        };
        DirectWriter { f, direct, buf, at, len: 0 }
    }

    fn write(&mut self, mut b: &[u8]) -> std::io::Result<()> {
        if !self.direct {
            return self.f.write_all(b);
        }
        while !b.is_empty() {
            let n = (DIRECT_BUFFER - self.len).min(b.len());
            let at = self.at + self.len;
            self.buf[at..at + n].copy_from_slice(&b[..n]);
            self.len += n;
            b = &b[n..];
            if self.len == DIRECT_BUFFER {
                self.flush(DIRECT_BUFFER)?;
            }
        }
        Ok(())
    }

    /// Write the buffer's first `n` bytes (a multiple of [`DIRECT_ALIGN`]) and keep the rest.
    fn flush(&mut self, n: usize) -> std::io::Result<()> {
        let mut done = 0;
        while done < n {
            let chunk = &self.buf[self.at + done..self.at + n];
            match self.f.write(chunk) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(k) => done += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Refused (an alignment this device does not take, a short write that left
                // the offset unaligned): the rest through the page cache.
                Err(e) if self.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                    sys::set_direct(self.f.as_raw_fd(), false)?;
                    self.direct = false;
                }
                Err(e) => return Err(e),
            }
        }
        self.buf.copy_within(self.at + n..self.at + self.len, self.at);
        self.len -= n;
        Ok(())
    }

    /// Write what is left (its whole blocks directly, the last partial one without).
    fn finish(mut self) -> std::io::Result<std::fs::File> {
        if self.direct {
            let whole = self.len / DIRECT_ALIGN * DIRECT_ALIGN;
            self.flush(whole)?;
            if self.direct {
                sys::set_direct(self.f.as_raw_fd(), false)?;
            }
            let rest = &self.buf[self.at..self.at + self.len];
            self.f.write_all(rest)?;
        }
        Ok(self.f)
    }
}

/// Calls handed from the decoder to the planner, and from the planner to the encoder, at a
/// time.
const BATCH: usize = 256;
/// Batches of decoded calls the decoder may be ahead of the planner (their data buffers are
/// slices of the trace's extents, which stay in memory while a batch waits).
const DECODED_AHEAD: usize = 8;

/// The items of the batches received on `rx`, one at a time; each emptied batch goes back on
/// `back` to be filled again.
struct Unbatch<T> {
    rx: crossbeam_channel::Receiver<Vec<T>>,
    back: crossbeam_channel::Sender<Vec<T>>,
    cur: std::collections::VecDeque<T>,
}

impl<T> Iterator for Unbatch<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(x) = self.cur.pop_front() {
                return Some(x);
            }
            let next = self.rx.recv().ok()?;
            // (Both conversions keep the allocation: no item is moved.)
            let empty = std::mem::replace(&mut self.cur, next.into());
            let _ = self.back.try_send(Vec::from(empty));
        }
    }
}

/// Compile `trace` into a plan at `out`: place its calls ([`crate::planner::Planner`]) and
/// write them, with the data chunks lz4-compressed when `compress`. `progress` counts calls;
/// `stop` ends the compile early (an error).
/// `trace_name`: how the plan names its source trace (`-` for one read from standard
/// input, whose `trace_path` is a temporary file's).
#[allow(clippy::too_many_arguments)]
pub fn compile(
    trace: &ra_trace::TraceReader,
    trace_path: &Path,
    trace_name: &str,
    out: &Path,
    dedup_memory: usize,
    compress: bool,
    progress: &std::sync::atomic::AtomicU64,
    stop: &AtomicBool,
) -> Result<CompileStats, PlanError> {
    let facts = TraceFacts::of(trace);
    let mut source = PlanSource::of(trace_path, trace.snapshots().len() as u64)
        .map_err(|source| PlanError::Io { path: trace_path.to_path_buf(), source })?;
    source.path = trace_name.to_string();
    let mut w = PlanWriter::create(out, &facts, &source, dedup_memory, compress)?;
    // The planner runs here; the trace's calls are decoded on a thread of their own (its
    // extents are read and checked on another: the trace reader's prefetch), the encoder
    // (hashing, deduplication) runs on a third and the file writes on a fourth.
    let (tx, rx) = crossbeam_channel::bounded::<Vec<Placed>>(16);
    let (etx, erx) = crossbeam_channel::bounded::<Vec<ra_trace::Result<Event>>>(DECODED_AHEAD);
    // Emptied batches go back to be filled again: a fresh one would grow by copying its calls
    // (or be a fresh allocation whose pages the kernel zeroes).
    let (recycle, recycled) = crossbeam_channel::bounded::<Vec<Placed>>(16);
    let (erecycle_tx, erecycle) =
        crossbeam_channel::bounded::<Vec<ra_trace::Result<Event>>>(DECODED_AHEAD);
    std::thread::scope(|s| -> Result<CompileStats, PlanError> {
        let decoder = std::thread::Builder::new()
            .name("trace-decode".into())
            .spawn_scoped(s, move || {
                let events = trace.syscall_events(None).sharing_buffers().without_derived_columns();
                let mut batch = Vec::with_capacity(BATCH);
                for ev in events {
                    batch.push(ev);
                    // Ends when the planner is gone (the compile stopped) or after an error
                    // (the iterator's last item).
                    if batch.len() >= BATCH {
                        let next =
                            erecycle.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                        let full = std::mem::replace(&mut batch, next);
                        if etx.send(full).is_err() {
                            return;
                        }
                    }
                }
                let _ = etx.send(batch);
            })
            .map_err(|source| PlanError::Io { path: out.to_path_buf(), source })?;
        let calls = Unbatch { rx: erx, back: erecycle_tx, cur: Default::default() };
        let mut planner = crate::planner::Planner::new(calls, facts);
        let enc = std::thread::Builder::new()
            .name("plan-encode".into())
            .spawn_scoped(s, move || -> Result<PlanWriter, PlanError> {
                for mut batch in rx {
                    for p in &batch {
                        w.push(p)?;
                    }
                    batch.clear();
                    let _ = recycle.try_send(batch);
                }
                Ok(w)
            })
            .map_err(|source| PlanError::Io { path: out.to_path_buf(), source })?;
        let mut batch = Vec::with_capacity(BATCH);
        let mut failed = None;
        for p in planner.by_ref() {
            if stop.load(Ordering::Relaxed) {
                failed = Some(PlanError::Interrupted);
                break;
            }
            match p {
                Ok(p) => batch.push(p),
                Err(e) => {
                    failed = Some(e.into());
                    break;
                }
            }
            progress.fetch_add(1, Ordering::Relaxed);
            if batch.len() >= BATCH
                && tx
                    .send(std::mem::replace(
                        &mut batch,
                        recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH)),
                    ))
                    .is_err()
            {
                // The encoder stopped: its error is below.
                break;
            }
        }
        if failed.is_none() && !batch.is_empty() {
            let _ = tx.send(batch);
        }
        drop(tx);
        // A decoder that panicked ended its channel early: that is no end of the trace.
        let notes = std::mem::take(&mut planner.notes);
        drop(planner);
        if decoder.join().is_err() && failed.is_none() {
            failed = Some(PlanError::Io {
                path: out.to_path_buf(),
                source: std::io::Error::other("the trace decoder thread panicked"),
            });
        }
        let w = match enc.join() {
            Ok(r) => r?,
            Err(_) => {
                return Err(PlanError::Io {
                    path: out.to_path_buf(),
                    source: std::io::Error::other("the plan encoder thread panicked"),
                })
            }
        };
        if let Some(e) = failed {
            return Err(e);
        }
        w.finish(&notes)
    })
}

// ---------------------------------------------------------------------------------------
// Reading.

struct DataChunk {
    /// Data space offset and length.
    at: u64,
    len: u64,
    /// Where its payload is in the file, and its length there.
    file_at: usize,
    stored: usize,
    /// The payload is an lz4 block of the data.
    lz4: bool,
    digest: u32,
    checked: AtomicBool,
}

struct CallsChunk {
    file_at: usize,
    len: usize,
    count: u64,
    first_seq: u64,
    digest: u32,
}

/// An open plan.
pub struct Plan {
    path: PathBuf,
    /// The file's bytes: a read-only memory map (or, for tests and the fuzzer, owned bytes).
    /// Data buffers are slices of it: replay writes from the map, no copy.
    map: Bytes,
    facts: TraceFacts,
    source: PlanSource,
    reanimator: String,
    data: Vec<DataChunk>,
    calls: Vec<CallsChunk>,
    stats: CompileStats,
    notes: PlanNotes,
    defs: &'static [SyscallDef],
    /// Check chunk checksums (always, but for the fuzzer).
    checksums: bool,
    /// `map` is a memory map of the file (not owned bytes): its pages are trimmed behind the
    /// replay.
    mapped: bool,
    /// How much of the map has been dropped from the address space ([`Plan::trim_to`]).
    trimmed: std::sync::atomic::AtomicUsize,
    /// Recently decompressed data chunks (index, data): see [`Plan::unpacked`].
    unpacked: Mutex<Vec<(usize, Bytes)>>,
    /// The format version it was written in.
    version: u32,
}

/// How a plan is laid out ([`Plan::layout`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanLayout {
    /// The format version (1, or 2 with lz4 data chunks).
    pub version: u32,
    /// Chunks of encoded calls.
    pub calls_chunks: usize,
    /// Chunks of deduplicated data buffers, compressed or not.
    pub data_chunks: usize,
    /// ... of which lz4-compressed.
    pub lz4_chunks: usize,
    /// The data chunks' bytes as stored in the file (compressed ones compressed).
    pub data_stored_bytes: u64,
}

/// True when the file at `path` starts with the plan magic.
pub fn is_plan(path: &Path) -> bool {
    use std::io::Read;
    let mut m = [0u8; 8];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut m)).is_ok() && &m == MAGIC
}

impl Plan {
    /// Open and check a plan: its header, version, registry, every chunk header, and the end
    /// chunk. Calls and data are checked as they are read.
    pub fn open(path: &Path) -> Result<Plan, PlanError> {
        let io = |source| PlanError::Io { path: path.to_path_buf(), source };
        let f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        if len < 16 {
            return Err(PlanError::NotPlan { path: path.to_path_buf() });
        }
        // SAFETY: the map is read-only and private to this process; the plan is not expected to
        // change while it is replayed (a concurrent writer could make bytes change under us,
        // which the chunk checksums catch for calls and for data before first use).
        let map = unsafe { memmap2::Mmap::map(&f) }.map_err(io)?;
        let _ = map.advise(memmap2::Advice::Sequential);
        // The chunk headers are read with pread, not through the map: a fault per chunk would
        // map a page (with large folios, a whole folio) per chunk of the plan.
        let mut p = Plan::from_backing(path, Bytes::from_owner(map), true, Some(&f))?;
        p.mapped = true;
        Ok(p)
    }

    /// A plan held in memory (tests, fuzzing).
    pub fn from_bytes(path: &Path, b: Vec<u8>) -> Result<Plan, PlanError> {
        Plan::from_backing(path, Bytes::from(b), true, None)
    }

    /// [`Plan::from_bytes`] with the chunk checksums not checked, so that a fuzzer's mutations
    /// reach the decoder (never for real plans).
    #[doc(hidden)]
    pub fn from_bytes_unchecked(path: &Path, b: Vec<u8>) -> Result<Plan, PlanError> {
        Plan::from_backing(path, Bytes::from(b), false, None)
    }

    fn from_backing(
        path: &Path,
        map: Bytes,
        checksums: bool,
        file: Option<&std::fs::File>,
    ) -> Result<Plan, PlanError> {
        let corrupt = |what: String| PlanError::Corrupt { path: path.to_path_buf(), what };
        let b = &map[..];
        if b.len() < 16 || &b[0..8] != MAGIC {
            return Err(PlanError::NotPlan { path: path.to_path_buf() });
        }
        let version = u32::from_le_bytes(b[8..12].try_into().expect("4 bytes"));
        if !(VERSION_OLDEST..=VERSION).contains(&version) {
            return Err(PlanError::Version { path: path.to_path_buf(), found: version });
        }
        if b.len() < HEADER_FIXED {
            return Err(PlanError::Incomplete {
                path: path.to_path_buf(),
                what: "the header is cut".into(),
            });
        }
        let hlen = u32::from_le_bytes(b[12..16].try_into().expect("4 bytes")) as usize;
        if hlen > HEADER_MAX || HEADER_FIXED + hlen > b.len() {
            return Err(corrupt(format!("header length {hlen} out of range")));
        }
        let hjson = &b[HEADER_FIXED..HEADER_FIXED + hlen];
        let hcrc = u32::from_le_bytes(b[16..20].try_into().expect("4 bytes"));
        if checksums && crc32fast::hash(hjson) != hcrc {
            return Err(corrupt("the header's checksum does not match".into()));
        }
        let header: serde_json::Value =
            serde_json::from_slice(hjson).map_err(|e| corrupt(format!("header: {e}")))?;
        if header.get("format").and_then(|f| f.as_str()) != Some("reanimator-plan") {
            return Err(corrupt("the header does not name the plan format".into()));
        }
        if header.get("registry").and_then(|r| r.as_str()) != Some(&registry_fingerprint()) {
            return Err(PlanError::Registry { path: path.to_path_buf() });
        }
        let facts = header
            .get("facts")
            .and_then(facts_from_json)
            .ok_or_else(|| corrupt("header: trace facts missing or malformed".into()))?;
        let src = header.get("source");
        let source = PlanSource {
            path: src.and_then(|s| s.get("path")?.as_str()).unwrap_or("").to_string(),
            size: src.and_then(|s| s.get("size")?.as_u64()).unwrap_or(0),
            mtime_ns: src.and_then(|s| s.get("mtime_ns")?.as_i64()).unwrap_or(0),
            snapshots: src.and_then(|s| s.get("snapshots")?.as_u64()).unwrap_or(0),
        };
        let reanimator =
            header.get("reanimator").and_then(|r| r.as_str()).unwrap_or("?").to_string();
        // Walk the chunk headers.
        let mut at = HEADER_FIXED + hlen;
        let mut data = Vec::new();
        let mut calls = Vec::new();
        let mut end: Option<(usize, usize, u32)> = None;
        let mut data_space = 0u64;
        let mut seq = 0u64;
        while at < b.len() {
            if end.is_some() {
                return Err(corrupt(format!("bytes after the end chunk at offset {at}")));
            }
            let cut = || PlanError::Incomplete {
                path: path.to_path_buf(),
                what: format!("a chunk header is cut at offset {at}"),
            };
            let mut hb = [0u8; CHUNK_HEADER];
            match file {
                Some(f) if at + CHUNK_HEADER <= b.len() => {
                    use std::os::unix::fs::FileExt;
                    f.read_exact_at(&mut hb, at as u64)
                        .map_err(|source| PlanError::Io { path: path.to_path_buf(), source })?;
                }
                _ => hb.copy_from_slice(b.get(at..at + CHUNK_HEADER).ok_or_else(cut)?),
            }
            let h = &hb[..];
            if &h[0..8] != CHUNK_MAGIC {
                return Err(corrupt(format!("no chunk header at offset {at}")));
            }
            let kind = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes"));
            let plen = u64::from_le_bytes(h[16..24].try_into().expect("8 bytes"));
            let count = u64::from_le_bytes(h[24..32].try_into().expect("8 bytes"));
            let first = u64::from_le_bytes(h[32..40].try_into().expect("8 bytes"));
            let digest = u32::from_le_bytes(h[40..44].try_into().expect("4 bytes"));
            let pat = at + CHUNK_HEADER;
            let plen_us =
                usize::try_from(plen).ok().filter(|&l| l <= b.len() - pat).ok_or_else(|| {
                    PlanError::Incomplete {
                        path: path.to_path_buf(),
                        what: format!("the chunk at offset {at} is cut ({plen} bytes announced)"),
                    }
                })?;
            match kind {
                KIND_DATA | KIND_DATA_LZ4 => {
                    if first != data_space {
                        return Err(corrupt(format!(
                            "data chunk at offset {at} starts at data offset {first}, expected {data_space}"
                        )));
                    }
                    let lz4 = kind == KIND_DATA_LZ4;
                    if lz4 && version < 2 {
                        return Err(corrupt(format!(
                            "compressed data chunk at offset {at} in a version {version} plan"
                        )));
                    }
                    // Compressed chunks hold at most DATA_CHUNK bytes (larger ones are stored
                    // as they are), and an lz4 block expands at most 255-fold: a larger length
                    // is corrupt (and would be an allocation the file does not justify).
                    let len = if lz4 { count } else { plen };
                    if lz4
                        && (len == 0
                            || len > DATA_CHUNK as u64
                            || len > plen.saturating_mul(255).saturating_add(64))
                    {
                        return Err(corrupt(format!(
                            "compressed data chunk at offset {at}: {len} bytes from {plen}"
                        )));
                    }
                    data.push(DataChunk {
                        at: first,
                        len,
                        file_at: pat,
                        stored: plen_us,
                        lz4,
                        digest,
                        checked: AtomicBool::new(false),
                    });
                    data_space = data_space.checked_add(len).ok_or_else(|| {
                        corrupt(format!("data chunk at offset {at}: data space overflows"))
                    })?;
                }
                KIND_CALLS => {
                    if first != seq {
                        return Err(corrupt(format!(
                            "calls chunk at offset {at} starts at call {first}, expected {seq}"
                        )));
                    }
                    if count > plen {
                        return Err(corrupt(format!(
                            "calls chunk at offset {at}: {count} calls in {plen} bytes"
                        )));
                    }
                    calls.push(CallsChunk {
                        file_at: pat,
                        len: plen_us,
                        count,
                        first_seq: first,
                        digest,
                    });
                    seq += count;
                }
                KIND_END => end = Some((pat, plen_us, digest)),
                k => return Err(corrupt(format!("unknown chunk kind {k} at offset {at}"))),
            }
            at = pat + plen_us;
        }
        let Some((eat, elen, edigest)) = end else {
            return Err(PlanError::Incomplete {
                path: path.to_path_buf(),
                what: format!("{} calls in {} chunks before the cut", seq, calls.len()),
            });
        };
        let epay = &b[eat..eat + elen];
        if checksums && crc32fast::hash(epay) != edigest {
            return Err(corrupt("the end chunk's checksum does not match".into()));
        }
        let ej: serde_json::Value =
            serde_json::from_slice(epay).map_err(|e| corrupt(format!("end chunk: {e}")))?;
        let stats = ej
            .get("stats")
            .and_then(CompileStats::from_json)
            .ok_or_else(|| corrupt("end chunk: totals missing".into()))?;
        if stats.calls != seq {
            return Err(corrupt(format!(
                "the end chunk counts {} calls, the chunks hold {seq}",
                stats.calls
            )));
        }
        let counts = |k: &str| -> BTreeMap<String, u64> {
            ej.get(k)
                .and_then(|m| m.as_object())
                .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_u64()?))).collect())
                .unwrap_or_default()
        };
        let notes = PlanNotes { unknown: counts("unknown"), warnings: counts("warnings") };
        Ok(Plan {
            path: path.to_path_buf(),
            map,
            facts,
            source,
            reanimator,
            data,
            calls,
            stats,
            notes,
            defs: ra_syscalls::REGISTRY,
            checksums,
            mapped: false,
            trimmed: Default::default(),
            unpacked: Mutex::new(Vec::new()),
            version,
        })
    }

    /// The plan file's path, as passed to [`Plan::open`].
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The source trace's facts (architecture, initial cwd and umask, data mode), as
    /// `compile` read them from its header.
    pub fn facts(&self) -> &TraceFacts {
        &self.facts
    }
    /// What the planner skipped or noticed while compiling (unknown record types, warnings);
    /// a replay from the plan reports them as a replay from the trace would.
    pub fn notes(&self) -> &PlanNotes {
        &self.notes
    }
    /// What `compile` wrote, from the end chunk.
    pub fn stats(&self) -> &CompileStats {
        &self.stats
    }
    /// The trace the plan was compiled from (path, size, mtime), for `info` and for a
    /// replay that restores the trace's snapshots, which the plan does not copy.
    pub fn source(&self) -> &PlanSource {
        &self.source
    }
    /// The reanimator version that compiled it.
    pub fn compiled_by(&self) -> &str {
        &self.reanimator
    }

    /// Its format version and chunks.
    pub fn layout(&self) -> PlanLayout {
        PlanLayout {
            version: self.version,
            calls_chunks: self.calls.len(),
            data_chunks: self.data.len(),
            lz4_chunks: self.data.iter().filter(|c| c.lz4).count(),
            data_stored_bytes: self.data.iter().map(|c| c.stored as u64).sum(),
        }
    }

    /// Read the whole plan as a replay would, without replaying: every calls chunk's checksum,
    /// every call decoded, every data chunk a call refers to checked (and decompressed).
    /// Returns the number of calls.
    pub fn check(&self) -> crate::Result<u64> {
        self.calls().try_fold(0u64, |n, c| c.map(|_| n + 1))
    }

    fn corrupt(&self, what: String) -> PlanError {
        PlanError::Corrupt { path: self.path.clone(), what }
    }

    /// The buffer at data space offset `at`, `len` bytes (its chunk checked on first use).
    fn data(&self, at: u64, len: u64) -> Result<Bytes, String> {
        let i = self.data.partition_point(|c| c.at + c.len <= at);
        let c = self
            .data
            .get(i)
            .filter(|c| c.at <= at && at.checked_add(len).is_some_and(|e| e <= c.at + c.len))
            .ok_or_else(|| format!("data reference {at}+{len} out of range"))?;
        let b = &self.map[c.file_at..c.file_at + c.stored];
        if !c.checked.load(Ordering::Relaxed) {
            if self.checksums && crc32fast::hash(b) != c.digest {
                return Err(format!(
                    "the data chunk at data offset {} is damaged (checksum)",
                    c.at
                ));
            }
            c.checked.store(true, Ordering::Relaxed);
        }
        if c.lz4 {
            let data = self.unpacked(i, c, b)?;
            let o = (at - c.at) as usize;
            return Ok(data.slice(o..o + len as usize));
        }
        let o = c.file_at + (at - c.at) as usize;
        Ok(self.map.slice(o..o + len as usize))
    }

    /// Data chunk `i` (lz4, stored as `b`) decompressed: kept for the next calls, which mostly
    /// use the same chunk or, for deduplicated buffers, one used recently (the
    /// [`UNPACKED_KEPT`] chunks used last are kept; another decompresses again).
    fn unpacked(&self, i: usize, c: &DataChunk, b: &[u8]) -> Result<Bytes, String> {
        let mut kept = self.unpacked.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = kept.iter().position(|(k, _)| *k == i) {
            // Most recently used last.
            let hit = kept.remove(at);
            let d = hit.1.clone();
            kept.push(hit);
            return Ok(d);
        }
        let d = lz4_flex::block::decompress(b, c.len as usize).map_err(|e| {
            format!("the data chunk at data offset {} does not decompress: {e}", c.at)
        })?;
        if d.len() as u64 != c.len {
            return Err(format!(
                "the data chunk at data offset {} decompresses to {} bytes, not {}",
                c.at,
                d.len(),
                c.len
            ));
        }
        let d = Bytes::from(d);
        if kept.len() >= UNPACKED_KEPT {
            kept.remove(0);
        }
        kept.push((i, d.clone()));
        Ok(d)
    }

    /// The placed calls, in order (the map's pages dropped behind the reader as it goes:
    /// for a reader that does not keep the calls, like `--init=infer`'s pass).
    pub fn calls(&self) -> impl Iterator<Item = crate::Result<Placed>> + '_ {
        self.calls_from(true)
    }

    /// The placed calls, in order, for a replay: the map's pages are dropped behind the
    /// oldest call not yet replayed ([`Plan::release_before`]), not behind the reader, which
    /// runs ahead of the replay by its queues.
    pub fn calls_for_replay(&self) -> impl Iterator<Item = crate::Result<Placed>> + '_ {
        self.calls_from(false)
    }

    fn calls_from(&self, trim: bool) -> impl Iterator<Item = crate::Result<Placed>> + '_ {
        // A new pass over the plan (--init=infer's, then the replay's) touches the pages again.
        self.trimmed.store(0, Ordering::Relaxed);
        let mut chunk = 0usize;
        let mut cur: Option<(Cur<'_>, u64, u64)> = None;
        let mut failed = false;
        std::iter::from_fn(move || {
            if failed {
                return None;
            }
            loop {
                if let Some((c, left, seq)) = &mut cur {
                    if *left > 0 {
                        let r = self.decode(c, *seq);
                        *left -= 1;
                        *seq += 1;
                        if r.is_err() {
                            failed = true;
                        }
                        if *left == 0 && r.is_ok() && !c.done() {
                            failed = true;
                            return Some(Err(crate::Error::Plan(self.corrupt(format!(
                                "calls chunk {chunk} has bytes after its last call"
                            )))));
                        }
                        return Some(r.map_err(crate::Error::Plan));
                    }
                    cur = None;
                }
                let ch = self.calls.get(chunk)?;
                chunk += 1;
                if trim {
                    self.trim_to(ch.file_at.saturating_sub(TRIM_WINDOW));
                }
                // Read the next chunks' bytes (the calls and the data they refer to) ahead
                // of the faults: a plan not in the page cache is otherwise read a fault's
                // readahead at a time.
                let ahead = self.calls.get(chunk + 1).map_or(self.map.len(), |c| c.file_at);
                self.will_need(ch.file_at, ahead);
                let b = &self.map[ch.file_at..ch.file_at + ch.len];
                if self.checksums && crc32fast::hash(b) != ch.digest {
                    failed = true;
                    return Some(Err(crate::Error::Plan(self.corrupt(format!(
                        "the calls chunk of calls {}.. is damaged (checksum)",
                        ch.first_seq
                    )))));
                }
                cur = Some((Cur { b, at: 0, prev: (0, 0) }, ch.count, ch.first_seq));
            }
        })
    }

    /// Ask the kernel to read `[from, to)` of the plan into the page cache now
    /// (asynchronously).
    fn will_need(&self, from: usize, to: usize) {
        if !self.mapped || to <= from {
            return;
        }
        let start = from & !4095;
        let len = to.min(self.map.len()) - start;
        // SAFETY: the range lies within the live read-only file mapping and starts on a page
        // boundary; MADV_WILLNEED only starts reading the file's pages into the page cache.
        unsafe {
            libc::madvise(
                self.map.as_ptr().add(start) as *mut libc::c_void,
                len,
                libc::MADV_WILLNEED,
            );
        }
    }

    /// Replay has finished every call before `seq`: drop the map's pages before the calls
    /// chunk that precedes `seq`'s (the data of `seq`'s chunk and later ones was written after
    /// it, or is a deduplicated older buffer, which faults back in if used again).
    pub fn release_before(&self, seq: u64) {
        let k = self.calls.partition_point(|c| c.first_seq + c.count <= seq);
        if let Some(prev) = k.checked_sub(1).and_then(|i| self.calls.get(i)) {
            self.trim_to(prev.file_at);
        }
    }

    /// Drop the memory map's pages before `cut` from this process, in steps of at least
    /// [`TRIM_EVERY`]: resident memory then stays bounded whatever the plan's size (mapped
    /// file pages count in it). Nothing is lost: the map is read-only and shared, a later
    /// access (a deduplicated buffer used again) faults the same bytes back in from the page
    /// cache.
    fn trim_to(&self, cut: usize) {
        if !self.mapped {
            return;
        }
        let cut = cut & !(TRIM_EVERY - 1);
        let done = self.trimmed.load(Ordering::Relaxed);
        if cut < done + TRIM_EVERY
            || self
                .trimmed
                .compare_exchange(done, cut, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        // SAFETY: the range lies within the live read-only shared file mapping (map is its
        // whole length and page-aligned at its start); MADV_DONTNEED on such a mapping only
        // unmaps pages from this process, and later reads of them fault in the file's
        // unchanged content, so every slice handed out stays valid.
        unsafe {
            libc::madvise(
                self.map.as_ptr() as *mut libc::c_void,
                cut.min(self.map.len()),
                libc::MADV_DONTNEED,
            );
        }
    }

    fn decode(&self, c: &mut Cur<'_>, seq: u64) -> Result<Placed, PlanError> {
        self.decode_inner(c, seq).map_err(|what| self.corrupt(format!("call {seq}: {what}")))
    }

    fn decode_inner(&self, c: &mut Cur<'_>, seq: u64) -> Result<Placed, String> {
        let f = c.uv()?;
        if f & !F_ALL != 0 {
            return Err(format!("unknown flags {f:#x}"));
        }
        let idx = c.uv()?;
        let def: &'static SyscallDef = usize::try_from(idx)
            .ok()
            .and_then(|i| self.defs.get(i))
            .ok_or_else(|| format!("call number {idx} not in the registry"))?;
        let mut ev = Event::new(def);
        if f & F_NAME != 0 {
            ev.name = String::from_utf8(c.bytes()?.to_vec()).map_err(|_| "name not UTF-8")?;
        }
        // Deltas restart with each chunk; the chunk's first call is relative to zero.
        let uid_delta = c.iv()?;
        let called_delta = c.iv()?;
        let ret_delta = c.iv()?;
        let (prev_uid, prev_called) = c.prev;
        ev.unique_id = prev_uid.wrapping_add(uid_delta as u64);
        let called = prev_called.wrapping_add(called_delta);
        let ret = called.wrapping_add(ret_delta);
        c.prev = (ev.unique_id, called);
        if f & F_CALLED != 0 {
            ev.time_called = Some(called.wrapping_add(c.iv()?));
        }
        if f & F_RETURNED != 0 {
            ev.time_returned = Some(called.wrapping_add(c.iv()?));
        }
        if f & F_RECORDED != 0 {
            ev.time_recorded = Some(called.wrapping_add(c.iv()?));
        }
        for (bit, slot) in [
            (F_PID, &mut ev.pid),
            (F_TID, &mut ev.tid),
            (F_PPID, &mut ev.ppid),
            (F_UID, &mut ev.uid),
            (F_GID, &mut ev.gid),
            (F_SID, &mut ev.sid),
            (F_PGID, &mut ev.pgid),
        ] {
            if f & bit != 0 {
                *slot = Some(c.i32()?);
            }
        }
        if f & F_RET != 0 {
            ev.ret = Some(c.iv()?);
        }
        if f & F_ERRNO != 0 {
            ev.errno = Some(c.i32()?);
        }
        ev.buffer_not_captured = f & F_NOT_CAPTURED != 0;
        let tid = c.i32()?;
        let proc = c.uv()?;
        let child = if f & F_CHILD != 0 { Some((c.uv()?, c.uv()?)) } else { None };
        let thread = if f & F_THREAD != 0 { Some(c.i32()?) } else { None };
        let threads = usize::try_from(c.uv()?).map_err(|_| "thread count out of range")?;
        let new_proc = if f & F_NEW_PROC != 0 {
            let cwd = c.bytes()?.to_vec();
            let umask = u32::try_from(c.uv()?).map_err(|_| "umask out of range")?;
            Some((cwd, umask))
        } else {
            None
        };
        let nd = c.count()?;
        let mut deps = Vec::with_capacity(nd);
        for _ in 0..nd {
            let d = c.uv()?;
            if d == 0 || d > seq {
                return Err(format!("gate {d} calls back is not an earlier call"));
            }
            deps.push(seq - d);
        }
        let ng = c.count()?;
        let mut gone = Vec::with_capacity(ng);
        for _ in 0..ng {
            gone.push(c.i32()?);
        }
        let na = c.count()?;
        if na != def.args.len() {
            return Err(format!("{} arguments for {}, which has {}", na, def.name, def.args.len()));
        }
        for slot in ev.args.iter_mut() {
            *slot = match c.u8()? {
                A_ABSENT => ArgValue::Absent,
                A_INT => ArgValue::Int(c.iv()?),
                t @ (A_INLINE | A_REF) => ArgValue::data(self.buf(c, t)?),
                A_NOT_CAPTURED => ArgValue::NotCaptured,
                A_IOV => {
                    let n = c.count()?;
                    let mut v = Vec::with_capacity(n);
                    for _ in 0..n {
                        let requested = c.uv()?;
                        let data = match c.u8()? {
                            A_ABSENT => None,
                            t @ (A_INLINE | A_REF) => Some(self.buf(c, t)?),
                            t => return Err(format!("unknown iovec tag {t}")),
                        };
                        v.push(IovValue { requested, data });
                    }
                    ArgValue::Iov(v)
                }
                A_STRINGS => {
                    let n = c.count()?;
                    let mut v = Vec::with_capacity(n);
                    for _ in 0..n {
                        v.push(c.bytes()?.to_vec());
                    }
                    ArgValue::Strings(v)
                }
                A_HASHED => {
                    let len = c.uv()?;
                    let blake3: [u8; 32] = c.take(32)?.try_into().expect("32 bytes");
                    ArgValue::Hashed { len, blake3 }
                }
                t => return Err(format!("unknown argument tag {t}")),
            };
        }
        let nx = c.count()?;
        for _ in 0..nx {
            let k = String::from_utf8(c.bytes()?.to_vec()).map_err(|_| "field name not UTF-8")?;
            let v = match c.u8()? {
                X_NULL => ExtraValue::Null,
                X_BOOL => ExtraValue::Bool(c.u8()? != 0),
                X_INT => ExtraValue::Int(c.iv()?),
                X_DOUBLE => ExtraValue::DoubleBits(u64::from_le_bytes(
                    c.take(8)?.try_into().expect("8 bytes"),
                )),
                X_BYTES => ExtraValue::Bytes(c.bytes()?.to_vec()),
                t => return Err(format!("unknown field tag {t}")),
            };
            ev.extra.push((k, v));
        }
        let pl = Placement {
            proc,
            child,
            thread,
            ends_proc: f & F_ENDS_PROC != 0,
            first_seen: f & F_FIRST_SEEN != 0,
            keys: Vec::new(),
            fd_keys: Vec::new(),
            inherited: f & F_INHERITED != 0,
            threads,
            names: Default::default(),
        };
        Ok(Placed { seq, tid, ev, pl, called, ret, deps, new_proc, gone })
    }

    fn buf(&self, c: &mut Cur<'_>, tag: u8) -> Result<Bytes, String> {
        if tag == A_INLINE {
            return Ok(Bytes::copy_from_slice(c.bytes()?));
        }
        let at = c.uv()?;
        let len = c.uv()?;
        self.data(at, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::Planner;
    use crate::testutil::{event, facts};

    /// The plan writer's output is the bytes it was given, in order, whether the file system
    /// takes direct I/O (ext4 here: whole blocks direct, the last partial one not) or not
    /// (tmpfs: all through the page cache); pieces of every size, one larger than the buffer.
    #[test]
    fn the_direct_writer_writes_every_byte_in_order() {
        let mut want = Vec::new();
        let mut pieces = Vec::new();
        let mut x = 0x9e37_79b9u32;
        for n in [64, 1, 4095, 4096, 4097, 3 * DIRECT_BUFFER / 2, 17, DIRECT_BUFFER, 100_000, 5] {
            let v: Vec<u8> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            want.extend_from_slice(&v);
            pieces.push(v);
        }
        let mut dirs = vec![std::env::temp_dir()];
        if std::path::Path::new("/dev/shm").is_dir() {
            dirs.push("/dev/shm".into());
        }
        for d in dirs {
            let path = d.join(format!("ra-direct-{}", std::process::id()));
            let mut w = DirectWriter::new(std::fs::File::create(&path).unwrap());
            let direct = w.direct;
            for p in &pieces {
                w.write(p).unwrap();
            }
            drop(w.finish().unwrap());
            let got = std::fs::read(&path).unwrap();
            let _ = std::fs::remove_file(&path);
            assert!(
                got == want,
                "{} (direct: {direct}): {} bytes, {} wanted",
                d.display(),
                got.len(),
                want.len()
            );
        }
    }

    /// A small program's calls: files opened, written (the same 4 KiB twice, and a short
    /// buffer), read back through an iovec, a child process made.
    fn events() -> Vec<Event> {
        let big = vec![7u8; 4096];
        let mut v = vec![
            event(
                "openat",
                10,
                3,
                0,
                &[
                    ("dirfd", ArgValue::Int(-100)),
                    ("pathname", ArgValue::data(&b"f\0"[..])),
                    ("flags", ArgValue::Int(0o101)),
                    ("mode", ArgValue::Int(0o644)),
                ],
            ),
            event(
                "write",
                10,
                4096,
                0,
                &[
                    ("fd", ArgValue::Int(3)),
                    ("buf", ArgValue::data(big.clone())),
                    ("count", ArgValue::Int(4096)),
                ],
            ),
            event(
                "write",
                10,
                4096,
                0,
                &[
                    ("fd", ArgValue::Int(3)),
                    ("buf", ArgValue::data(big)),
                    ("count", ArgValue::Int(4096)),
                ],
            ),
            event(
                "write",
                10,
                3,
                0,
                &[
                    ("fd", ArgValue::Int(3)),
                    ("buf", ArgValue::data(&b"abc"[..])),
                    ("count", ArgValue::Int(3)),
                ],
            ),
            event(
                "readv",
                10,
                5,
                0,
                &[
                    ("fd", ArgValue::Int(3)),
                    (
                        "iov",
                        ArgValue::Iov(vec![
                            IovValue { requested: 2, data: Some(Bytes::from_static(b"ab")) },
                            IovValue { requested: 300, data: Some(vec![1u8; 300].into()) },
                            IovValue { requested: 9, data: None },
                        ]),
                    ),
                    ("iovcnt", ArgValue::Int(3)),
                ],
            ),
            event(
                "openat",
                10,
                -1,
                2,
                &[
                    ("dirfd", ArgValue::Int(-100)),
                    ("pathname", ArgValue::data(&b"/nope\0"[..])),
                    ("flags", ArgValue::Int(0)),
                    ("mode", ArgValue::Absent),
                ],
            ),
            event("close", 10, 0, 0, &[("fd", ArgValue::Int(3))]),
        ];
        for (i, e) in v.iter_mut().enumerate() {
            e.unique_id = 5 + 2 * i as u64;
            e.time_called = Some(1_000_000 + 1000 * i as i64);
            e.time_returned = Some(1_000_500 + 1000 * i as i64);
            e.uid = Some(1000);
            e.extra.push(("note".into(), ExtraValue::Bytes(b"x".to_vec())));
            e.extra.push(("d".into(), ExtraValue::DoubleBits(1.5f64.to_bits())));
        }
        v[5].buffer_not_captured = true;
        v
    }

    /// `evs` placed by the planner, and its notes.
    fn place(evs: Vec<Event>) -> (Vec<Placed>, PlanNotes) {
        let mut p = Planner::new(evs.into_iter().map(Ok), facts());
        let v: Vec<Placed> = p.by_ref().map(|r| r.expect("placed")).collect();
        (v, p.notes)
    }

    /// A plan of `events()`, its data chunks lz4-compressed when `compress` (the test data
    /// compresses).
    fn write_plan(dir: &Path, compress: bool) -> PathBuf {
        let path = dir.join(if compress { "z.plan" } else { "t.plan" });
        let (v, st) = plan_of(&path, events(), compress);
        assert_eq!(st.calls, v.len() as u64);
        assert_eq!(st.buffers, 3, "two 4 KiB writes and the 300-byte vector");
        assert_eq!(st.unique_buffers, 2, "the second 4 KiB write is the first one's content");
        assert_eq!(st.data_stored, 4096 + 300);
        assert_eq!(st.plan_bytes, std::fs::metadata(&path).unwrap().len());
        path
    }

    /// `evs` placed and written as a plan at `path` (data chunks lz4-compressed when
    /// `compress`): the placed calls and what the writer says it wrote.
    fn plan_of(path: &Path, evs: Vec<Event>, compress: bool) -> (Vec<Placed>, CompileStats) {
        let src = PlanSource { path: "t.ds".into(), size: 1, mtime_ns: 2, snapshots: 0 };
        let mut w = PlanWriter::create(path, &facts(), &src, 1 << 20, compress).expect("create");
        let (v, notes) = place(evs);
        for c in &v {
            w.push(c).expect("push");
        }
        let st = w.finish(&notes).expect("finish");
        (v, st)
    }

    /// A `write` of `b` to descriptor 3.
    fn write_of(b: Vec<u8>) -> Event {
        let n = b.len() as i64;
        event(
            "write",
            10,
            n,
            0,
            &[("fd", ArgValue::Int(3)), ("buf", ArgValue::data(b)), ("count", ArgValue::Int(n))],
        )
    }

    /// The plan gives back `v`'s events, call by call.
    fn assert_same_events(plan: &Plan, v: &[Placed]) {
        let back: Vec<Placed> = plan.calls().map(|r| r.expect("decoded")).collect();
        assert_eq!(back.len(), v.len());
        for (b, w) in back.iter().zip(v) {
            assert_eq!(b.ev, w.ev);
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ra-plan-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_plan_gives_back_every_placed_call_exactly() {
        let d = scratch("roundtrip");
        for compress in [false, true] {
            roundtrip(&write_plan(&d, compress));
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    fn roundtrip(path: &Path) {
        let plan = Plan::open(path).expect("open");
        assert_eq!(plan.facts(), &facts());
        let back: Vec<Placed> = plan.calls().map(|r| r.expect("decoded")).collect();
        let (want, _) = place(events());
        assert_eq!(back.len(), want.len());
        for (b, w) in back.iter().zip(&want) {
            assert_eq!(b.ev, w.ev);
            assert_eq!(
                (b.seq, b.tid, b.called, b.ret, &b.deps, &b.new_proc, &b.gone),
                (w.seq, w.tid, w.called, w.ret, &w.deps, &w.new_proc, &w.gone)
            );
            assert_eq!(
                (b.pl.proc, b.pl.child, b.pl.thread, b.pl.ends_proc, b.pl.first_seen),
                (w.pl.proc, w.pl.child, w.pl.thread, w.pl.ends_proc, w.pl.first_seen)
            );
            assert_eq!((b.pl.inherited, b.pl.threads), (w.pl.inherited, w.pl.threads));
        }
        // The calls on the file are gated on each other.
        assert!(want[2].deps.contains(&1), "{:?}", want[2].deps);
    }

    /// With compression, a buffer larger than a data chunk gets a chunk of its own stored as
    /// it is (written from the map, never decompressed whole); the small ones are compressed.
    #[test]
    fn a_large_buffer_is_stored_uncompressed_in_a_compressed_plan() {
        let d = scratch("large");
        let path = d.join("l.plan");
        let mut evs = events();
        let large = DATA_CHUNK + 1;
        evs.insert(1, write_of(vec![3u8; large]));
        let (v, _) = plan_of(&path, evs, true);
        let plan = Plan::open(&path).expect("open");
        let kinds: Vec<(bool, u64)> = plan.data.iter().map(|c| (c.lz4, c.len)).collect();
        assert!(kinds.contains(&(false, large as u64)), "{kinds:?}");
        assert!(kinds.iter().any(|k| k.0), "{kinds:?}");
        assert_same_events(&plan, &v);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A compressed plan with more data chunks than replay keeps decompressed, and buffers
    /// deduplicated against the first chunk at the end: every buffer comes back right (chunks
    /// evicted and decompressed again).
    #[test]
    fn deduplicated_buffers_in_evicted_compressed_chunks_come_back_right() {
        let d = scratch("evict");
        let path = d.join("e.plan");
        let buf = |k: usize| -> Vec<u8> {
            (0..1 << 20).map(|i| ((i / 4096 + k) % 7) as u8 + k as u8).collect()
        };
        let mut evs = events();
        let order: Vec<usize> = (0..48).chain([0, 1, 47, 0]).collect();
        for (n, &k) in order.iter().enumerate() {
            evs.insert(1 + n, write_of(buf(k)));
        }
        let (v, st) = plan_of(&path, evs, true);
        assert_eq!(st.unique_buffers, 48 + 2, "{st:?}");
        let plan = Plan::open(&path).expect("open");
        let lz4 = plan.data.iter().filter(|c| c.lz4).count();
        assert!(lz4 > UNPACKED_KEPT, "{lz4} compressed chunks");
        assert_same_events(&plan, &v);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn damaged_cut_or_stale_plans_are_refused_with_the_reason() {
        let d = scratch("damage");
        for compress in [false, true] {
            damaged(&write_plan(&d, compress), compress);
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    fn damaged(path: &Path, compress: bool) {
        let good = std::fs::read(path).unwrap();
        let p = Path::new("x.plan");
        let err = |b: Vec<u8>| -> String {
            match Plan::from_bytes(p, b) {
                Err(e) => e.to_string(),
                Ok(plan) => match plan.calls().find_map(|r| r.err()) {
                    Some(e) => e.to_string(),
                    None => "accepted".into(),
                },
            }
        };
        assert!(err(good[..good.len() - 10].to_vec()).contains("incomplete"));
        assert!(err(b"hello world, no plan".to_vec()).contains("not a reanimator plan"));
        let mut v = good.clone();
        v[8] = 9;
        assert!(err(v).contains("version 9"));
        // A byte of each chunk's payload flipped: the checksum catches it.
        let calls_at = good.windows(8).position(|w| w == CHUNK_MAGIC).unwrap();
        let mut v = good.clone();
        let kind = u32::from_le_bytes(v[calls_at + 8..calls_at + 12].try_into().unwrap());
        let want = if compress { KIND_DATA_LZ4 } else { KIND_DATA };
        assert_eq!(kind, want, "data comes before the calls that use it");
        assert_eq!(
            u32::from_le_bytes(good[8..12].try_into().unwrap()),
            if compress { 2 } else { 1 }
        );
        if compress {
            // Compressed chunks in a version 1 plan: corrupt (version 1 has none).
            let mut v1 = good.clone();
            v1[8..12].copy_from_slice(&1u32.to_le_bytes());
            assert!(err(v1).contains("in a version 1 plan"));
        }
        v[calls_at + CHUNK_HEADER + 5] ^= 1;
        assert!(err(v).contains("data chunk"), "data damage");
        let second = calls_at
            + CHUNK_HEADER
            + u64::from_le_bytes(good[calls_at + 16..calls_at + 24].try_into().unwrap()) as usize;
        let mut v = good.clone();
        v[second + CHUNK_HEADER + 3] ^= 0x40;
        assert!(err(v).contains("checksum"));
        // Every truncation and every single-byte change: an error or the same calls, no panic.
        for cut in (0..good.len()).step_by(7) {
            let _ = err(good[..cut].to_vec());
        }
        for i in 0..good.len() {
            let mut v = good.clone();
            v[i] ^= 0xff;
            if let Ok(plan) = Plan::from_bytes_unchecked(p, v) {
                for r in plan.calls() {
                    let _ = r;
                }
            }
        }
    }
}
