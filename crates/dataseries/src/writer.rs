//! Writing DSv1 files: header, XmlType extent, user extents compressed on background threads
//! (queue bounded in extents and in bytes, written in submission order), index extent and
//! trailer.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use crate::codec::{encode_many, encode_owned, EncodeOptions, Encoded};
use crate::compress::Compression;
use crate::error::Error;
use crate::extent::ExtentBuilder;
use crate::hash::{bjhash, mix3};
use crate::types::{ExtentType, INDEX_NAME, XMLTYPE_NAME};
use crate::{Result, Value};

/// Writer settings.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// Compression modes tried in order for each section; the smallest output strictly smaller
    /// than the input wins. Empty or `[None]` stores sections raw.
    pub compression: Vec<Compression>,
    /// Compression level, 1-9 (default 6).
    pub level: u32,
    /// Background compressor threads (default 2); 0 compresses on the calling thread.
    pub threads: usize,
    /// Extents queued for compression beyond those being compressed (default 4; an encoder
    /// thread takes every queued extent, up to 8, at once).
    pub queue_depth: usize,
    /// Bytes of extents in flight (queued, being compressed, compressed and not yet written)
    /// at most, beyond one extent larger than this alone: `write_extent` waits beyond, as it
    /// does beyond `threads + queue_depth` extents (default 16 MiB).
    pub queue_bytes: usize,
    /// Seal the file: a keyed MAC chain over every extent, in `Reanimator::Seal` extents
    /// ([`crate::seal`]).
    pub seal: Option<crate::seal::SealOptions>,
    /// Encrypt the whole file ([`crate::crypt`]); applied to the bytes as they are written,
    /// after compression and sealing.
    pub encrypt: Option<crate::crypt::EncryptOptions>,
}

impl Default for WriterOptions {
    /// zlib, level 6, 2 threads, queue depth 4, 16 MiB in flight.
    fn default() -> Self {
        Self::zlib()
    }
}

impl WriterOptions {
    /// zlib compression (interoperable with every C++ DataSeries build).
    pub fn zlib() -> Self {
        WriterOptions {
            compression: vec![Compression::Zlib],
            level: 6,
            threads: 2,
            queue_depth: 4,
            queue_bytes: 16 << 20,
            seal: None,
            encrypt: None,
        }
    }

    /// No compression.
    pub fn uncompressed() -> Self {
        WriterOptions { compression: Vec::new(), ..Self::zlib() }
    }
}

/// Work for the encoder threads.
enum Job {
    /// An extent and its sequence number.
    Extent(u64, ExtentBuilder),
    /// The writer is waiting for results: encode what has been gathered without waiting for
    /// more.
    Hurry,
}

/// Extents one encoder thread takes at a time when sections are stored uncompressed (their
/// hashes are computed side by side, see
/// [`crate::hash::bjhash_many`]), when that many come within [`GATHER_WAIT`].
const BATCH: usize = 8;
const GATHER_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// One encoder thread's loop. `gather` lets one thread at a time collect a batch, so that
/// batches fill up instead of being split between threads.
fn encoder(
    jobs: Receiver<Job>,
    gather: &std::sync::Mutex<()>,
    batch_max: usize,
    results: Sender<Done>,
    o: &EncodeOptions<'_>,
    digest: bool,
) {
    loop {
        let mut batch = Vec::new();
        {
            let _turn = gather.lock().unwrap_or_else(|p| p.into_inner());
            match jobs.recv() {
                Ok(Job::Extent(seq, b)) => batch.push((seq, b)),
                Ok(Job::Hurry) => continue,
                Err(_) => return,
            }
            let deadline = std::time::Instant::now() + GATHER_WAIT;
            while batch.len() < batch_max {
                match jobs.recv_deadline(deadline) {
                    Ok(Job::Extent(seq, b)) => batch.push((seq, b)),
                    Ok(Job::Hurry) | Err(_) => break,
                }
            }
        }
        let (seqs, builders): (Vec<u64>, Vec<ExtentBuilder>) = batch.into_iter().unzip();
        let names: Vec<String> =
            builders.iter().map(|b| b.extent_type().name().to_string()).collect();
        let mut encoded = encode_many(builders, o);
        if digest {
            // A sealed file's MAC chain needs each extent's digest: computed here, beside
            // the compression, rather than on the writer's thread.
            for e in encoded.iter_mut().flatten() {
                e.digest = Some(crate::seal::digest_parts(&e.parts()));
            }
        }
        for ((seq, name), r) in seqs.into_iter().zip(names).zip(encoded) {
            if results.send((seq, name, r)).is_err() {
                return;
            }
        }
    }
}

/// Encoded extent (or the encoding error) with its sequence number and type name.
type Done = (u64, String, Result<Encoded>);

struct Pool {
    jobs: Option<Sender<Job>>,
    results: Receiver<Done>,
    handles: Vec<JoinHandle<()>>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// Writes a DSv1 file (always little-endian).
pub struct DsWriter<W: Write + Send + 'static> {
    out: Option<W>,
    modes: Vec<Compression>,
    level: u32,
    types: HashMap<String, Arc<ExtentType>>,
    offset: u64,
    chained: u32,
    index: Vec<(u64, String)>,
    pool: Option<Pool>,
    max_in_flight: usize,
    max_in_flight_bytes: usize,
    /// Sizes of the extents in flight (sequence `next_write` first), and their sum.
    in_flight: VecDeque<usize>,
    in_flight_bytes: usize,
    next_seq: u64,
    next_write: u64,
    pending: BTreeMap<u64, (String, Result<Encoded>)>,
    poisoned: bool,
    /// Section buffers of written extents, for [`DsWriter::new_builder`].
    spare: Vec<(Vec<u8>, Vec<u8>)>,
    /// The MAC chain of a sealed file.
    sealer: Option<crate::seal::Sealer>,
    /// The chunk encryptor of an encrypted file.
    crypt: Option<crate::crypt::Encryptor>,
}

/// Written extents' buffers kept for reuse (each up to an extent's size), when their variable
/// section's buffer holds at least `SPARE_MIN` bytes.
const SPARE_BUFFERS: usize = 4;
const SPARE_MIN: usize = 1 << 20;

impl DsWriter<std::fs::File> {
    /// Creates (truncates) `path` and writes the header and type library.
    pub fn create(
        path: impl AsRef<std::path::Path>,
        types: &[Arc<ExtentType>],
        opts: WriterOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        let f = std::fs::File::create(path)
            .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
        Self::new(f, types, opts)
    }
}

/// The 40-byte little-endian file header.
pub(crate) fn file_header() -> [u8; 40] {
    let mut h = [0u8; 40];
    h[0..4].copy_from_slice(b"DSv1");
    h[4..8].copy_from_slice(&0x1234_5678i32.to_le_bytes());
    h[8..16].copy_from_slice(&0x1234_5678_9ABC_DEF0i64.to_le_bytes());
    h[16..24].copy_from_slice(&std::f64::consts::PI.to_le_bytes());
    h[24..32].copy_from_slice(&f64::INFINITY.to_le_bytes());
    h[32..40].copy_from_slice(&0x7ff8_0000_0000_0000u64.to_le_bytes());
    h
}

impl<W: Write + Send + 'static> DsWriter<W> {
    /// Writes the file header and the XmlType extent (types sorted by name) at once.
    pub fn new(out: W, types: &[Arc<ExtentType>], opts: WriterOptions) -> Result<Self> {
        let modes: Vec<Compression> =
            opts.compression.iter().copied().filter(|&m| m != Compression::None).collect();
        if let Some(&m) = modes.iter().find(|m| !m.can_encode()) {
            return Err(Error::Compress {
                mode: m,
                detail: "this crate cannot encode this mode".into(),
            });
        }
        let mut by_name: HashMap<String, Arc<ExtentType>> = HashMap::new();
        let seal_ty = opts.seal.as_ref().map(|_| Arc::new(crate::seal::seal_type()));
        for t in types.iter().chain(seal_ty.as_ref()) {
            if let Some(old) = by_name.get(t.name()) {
                if old.xml() != t.xml() {
                    return Err(Error::TypeConflict { name: t.name().to_string() });
                }
                continue;
            }
            by_name.insert(t.name().to_string(), Arc::clone(t));
        }
        let mut w = DsWriter {
            out: Some(out),
            modes,
            level: opts.level,
            types: by_name,
            offset: 0,
            chained: 0,
            index: Vec::new(),
            pool: None,
            max_in_flight: opts.threads + opts.queue_depth.max(1),
            max_in_flight_bytes: opts.queue_bytes,
            in_flight: VecDeque::new(),
            in_flight_bytes: 0,
            next_seq: 0,
            next_write: 0,
            pending: BTreeMap::new(),
            poisoned: false,
            spare: Vec::new(),
            sealer: opts.seal.zip(seal_ty).map(|(o, t)| crate::seal::Sealer::new(o, t)),
            crypt: match &opts.encrypt {
                Some(o) => Some(
                    crate::crypt::Encryptor::new(o, opts.threads)
                        .map_err(|e| Error::io("spawning an encryptor thread", e))?,
                ),
                None => None,
            },
        };
        w.write_bytes(&file_header())?;

        let xt = Arc::new(ExtentType::xmltype());
        let mut lib: Vec<&Arc<ExtentType>> = w
            .types
            .values()
            .filter(|t| t.name() != XMLTYPE_NAME && t.name() != INDEX_NAME)
            .collect();
        lib.sort_by(|a, b| a.name().cmp(b.name()));
        let mut b = ExtentBuilder::new(xt);
        for t in lib {
            b.start_record();
            b.set(0, Value::Bytes(t.xml().as_bytes()))?;
        }
        let enc = encode_owned(b, &w.encode_options())?;
        w.append_extent(XMLTYPE_NAME.to_string(), enc)?;

        if opts.threads > 0 {
            let (job_tx, job_rx) = bounded::<Job>(opts.queue_depth.max(1));
            let (res_tx, res_rx) = unbounded::<Done>();
            let gather = Arc::new(std::sync::Mutex::new(()));
            let mut handles = Vec::new();
            for _ in 0..opts.threads {
                let job_rx = job_rx.clone();
                let res_tx = res_tx.clone();
                let gather = Arc::clone(&gather);
                // Batches pay off when the hash is the work (uncompressed sections); with
                // compression, extents are better spread over the threads one by one.
                let batch_max =
                    if w.modes.iter().all(|m| *m == Compression::None) { BATCH } else { 1 };
                let modes = w.modes.clone();
                let level = w.level;
                let digest = w.sealer.is_some();
                let h = std::thread::Builder::new()
                    .name("ds-compress".into())
                    .spawn(move || {
                        let o = EncodeOptions {
                            fixed_modes: &modes,
                            var_modes: &modes,
                            level,
                            big_endian: false,
                        };
                        encoder(job_rx, &gather, batch_max, res_tx, &o, digest);
                    })
                    .map_err(|e| Error::io("spawning a compressor thread", e))?;
                handles.push(h);
            }
            w.pool = Some(Pool { jobs: Some(job_tx), results: res_rx, handles });
        }
        Ok(w)
    }

    fn encode_options(&self) -> EncodeOptions<'_> {
        EncodeOptions {
            fixed_modes: &self.modes,
            var_modes: &self.modes,
            level: self.level,
            big_endian: false,
        }
    }

    /// Uncompressed (the final seal and the index of a sealed file: see `write_seal`).
    fn raw_options(&self) -> EncodeOptions<'_> {
        EncodeOptions { fixed_modes: &[], var_modes: &[], level: self.level, big_endian: false }
    }

    fn write_bytes(&mut self, b: &[u8]) -> Result<()> {
        let at = self.offset;
        let out = self.out.as_mut().ok_or(Error::WriterPoisoned)?;
        let r = match self.crypt.as_mut() {
            Some(c) => c.write(out, b),
            None => out.write_all(b),
        };
        if let Err(e) = r {
            self.poisoned = true;
            return Err(Error::io(format!("writing {} bytes at offset {at}", b.len()), e));
        }
        self.offset += b.len() as u64;
        Ok(())
    }

    fn append_extent(&mut self, name: String, enc: Encoded) -> Result<()> {
        let at = self.offset;
        for p in enc.parts() {
            if !p.is_empty() {
                self.write_bytes(p)?;
            }
        }
        self.chained = mix3(enc.check, self.chained, 1972);
        if let Some(s) = self.sealer.as_mut() {
            let d = enc.digest.unwrap_or_else(|| crate::seal::digest_parts(&enc.parts()));
            s.add(enc.len() as u64, &d);
        }
        let due = self.sealer.as_ref().is_some_and(|s| s.unsealed() >= crate::seal::SEAL_EVERY);
        self.index.push((at, name));
        let (fixed, var) = enc.into_buffers();
        if self.spare.len() < SPARE_BUFFERS && var.capacity() >= SPARE_MIN {
            self.spare.push((fixed, var));
        }
        if due {
            self.write_seal(false)?;
        }
        Ok(())
    }

    /// Writes out the encryptor's partial chunk (with `last`, the last chunk).
    fn flush_crypt(&mut self, last: bool) -> Result<()> {
        let (Some(c), Some(out)) = (self.crypt.as_mut(), self.out.as_mut()) else {
            return Ok(());
        };
        c.flush(out, last).map_err(|e| {
            self.poisoned = true;
            Error::io("writing an encrypted chunk", e)
        })
    }

    /// Writes a seal extent listing the extents written since the last one (with `last`,
    /// also the end record). Nothing when not sealing, or when there is nothing to list.
    fn write_seal(&mut self, last: bool) -> Result<()> {
        let Some(s) = self.sealer.as_mut() else { return Ok(()) };
        if s.unsealed() == 0 && !last {
            return Ok(());
        }
        let b = s.build(last)?;
        // No MAC covers the final seal's own bytes: it is stored uncompressed, so that a
        // verifier can require exactly the bytes it rebuilds from the records it checked.
        let opts = if last { self.raw_options() } else { self.encode_options() };
        let enc = encode_owned(b, &opts);
        let enc = enc.inspect_err(|_| self.poisoned = true)?;
        self.append_extent(crate::seal::SEAL_TYPE_NAME.to_string(), enc)
    }

    /// Writes every finished result that is next in submission order.
    fn drain_ready(&mut self) -> Result<()> {
        while let Some((name, r)) = self.pending.remove(&self.next_write) {
            self.next_write += 1;
            self.in_flight_bytes -= self.in_flight.pop_front().unwrap_or(0);
            match r {
                Ok(enc) => self.append_extent(name, enc)?,
                Err(e) => {
                    self.poisoned = true;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn receive(&mut self, block: bool) -> Result<bool> {
        let Some(pool) = &self.pool else { return Ok(false) };
        let msg = if block {
            if let Some(j) = &pool.jobs {
                // Full queue: a thread will take from it at once anyway.
                let _ = j.try_send(Job::Hurry);
            }
            match pool.results.recv() {
                Ok(m) => m,
                Err(_) => {
                    self.poisoned = true;
                    return Err(Error::ThreadFailed { what: "compressor" });
                }
            }
        } else {
            match pool.results.try_recv() {
                Ok(m) => m,
                Err(_) => return Ok(false),
            }
        };
        self.pending.insert(msg.0, (msg.1, msg.2));
        Ok(true)
    }

    /// An empty builder for `ty` that reuses the buffers of an extent already written, if one
    /// is spare: for a type whose extents keep filling up, this saves growing fresh buffers
    /// (copies and page faults) for each.
    pub fn new_builder(&mut self, ty: Arc<ExtentType>) -> ExtentBuilder {
        self.new_builder_sized(ty, 0)
    }

    /// [`DsWriter::new_builder`] for a type expected to fill `var_bytes` of variable data:
    /// without a spare, its buffers are reserved at that size at once. Grown from empty by
    /// doubling, a 4 MiB heap is copied whole on the way (4 MiB more copying per extent: a
    /// sixth of a recorder's user time at 600 MB/s of 4 KiB writes, perf). Reserved memory
    /// is only touched as it is filled.
    pub fn new_builder_sized(&mut self, ty: Arc<ExtentType>, var_bytes: usize) -> ExtentBuilder {
        let (mut fixed, mut var) = self.spare.pop().unwrap_or_default();
        // (Emptied first: `reserve` counts from the length.)
        var.clear();
        var.reserve(var_bytes);
        fixed.clear();
        fixed.reserve(var_bytes / 16);
        ExtentBuilder::with_buffers(ty, fixed, var)
    }

    /// Queues an extent for compression and writing. Its type must have been given to
    /// [`DsWriter::new`]. Extents are written in submission order; an empty builder writes
    /// nothing.
    pub fn write_extent(&mut self, b: ExtentBuilder) -> Result<()> {
        if self.poisoned {
            return Err(Error::WriterPoisoned);
        }
        match self.types.get(b.extent_type().name()) {
            Some(t) if Arc::ptr_eq(t, b.extent_type()) || t.xml() == b.extent_type().xml() => {}
            _ => {
                return Err(Error::TypeNotDeclared {
                    type_name: b.extent_type().name().to_string(),
                })
            }
        }
        if b.is_empty() {
            return Ok(());
        }
        if self.pool.is_none() {
            let name = b.extent_type().name().to_string();
            let enc = encode_owned(b, &self.encode_options());
            let enc = enc.inspect_err(|_| self.poisoned = true)?;
            return self.append_extent(name, enc);
        }
        let size = b.approx_bytes();
        while self.next_seq - self.next_write >= self.max_in_flight as u64
            || (self.next_seq > self.next_write
                && self.in_flight_bytes + size > self.max_in_flight_bytes)
        {
            self.receive(true)?;
            self.drain_ready()?;
        }
        let seq = self.next_seq;
        let sent = self
            .pool
            .as_ref()
            .and_then(|p| p.jobs.as_ref())
            .map(|j| j.send(Job::Extent(seq, b)).is_ok());
        if sent != Some(true) {
            self.poisoned = true;
            return Err(Error::ThreadFailed { what: "compressor" });
        }
        self.next_seq += 1;
        self.in_flight.push_back(size);
        self.in_flight_bytes += size;
        while self.receive(false)? {}
        self.drain_ready()
    }

    fn wait_all(&mut self) -> Result<()> {
        if self.poisoned {
            return Err(Error::WriterPoisoned);
        }
        while self.next_write < self.next_seq {
            self.drain_ready()?;
            if self.next_write < self.next_seq {
                self.receive(true)?;
            }
        }
        Ok(())
    }

    /// Returns once every submitted extent has been written to the output and the output
    /// has been flushed.
    pub fn flush(&mut self) -> Result<()> {
        self.wait_all()?;
        self.write_seal(false)?;
        self.flush_crypt(false)?;
        let out = self.out.as_mut().ok_or(Error::WriterPoisoned)?;
        out.flush().map_err(|e| Error::io("flushing the output", e))
    }

    /// Bytes written to the output so far.
    pub fn bytes_written(&self) -> u64 {
        self.offset
    }

    /// Writes the index extent and the trailer, flushes, and returns the output.
    pub fn finish(mut self) -> Result<W> {
        self.wait_all()?;
        self.pool = None;
        self.write_seal(true)?;
        let index_offset = self.offset;
        self.index.push((index_offset, INDEX_NAME.to_string()));
        let it = Arc::new(ExtentType::index_type());
        let mut b = ExtentBuilder::new(it);
        for (off, name) in &self.index {
            b.start_record();
            b.set(0, Value::Int64(*off as i64))?;
            b.set(1, Value::Bytes(name.as_bytes()))?;
        }
        // A sealed file's index is checked byte for byte against the one a verifier builds
        // from the extents (it carries no MAC): stored uncompressed, as the final seal.
        let opts = if self.sealer.is_some() { self.raw_options() } else { self.encode_options() };
        let enc = encode_owned(b, &opts)?;
        let packed = enc.len() as i32;
        for p in enc.parts() {
            if !p.is_empty() {
                self.write_bytes(p)?;
            }
        }
        self.chained = mix3(enc.check, self.chained, 1972);
        let mut t = [0u8; 28];
        t[0..4].copy_from_slice(&[0xff; 4]);
        t[4..8].copy_from_slice(&packed.to_le_bytes());
        t[8..12].copy_from_slice(&(!packed).to_le_bytes());
        t[12..16].copy_from_slice(&self.chained.to_le_bytes());
        t[16..24].copy_from_slice(&(index_offset as i64).to_le_bytes());
        let h = bjhash(1776, &t[..24]);
        t[24..28].copy_from_slice(&h.to_le_bytes());
        self.write_bytes(&t)?;
        self.flush_crypt(true)?;
        let mut out = self.out.take().ok_or(Error::WriterPoisoned)?;
        out.flush().map_err(|e| Error::io("flushing the output", e))?;
        Ok(out)
    }
}
