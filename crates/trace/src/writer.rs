//! [`TraceWriter`]: events in, DataSeries extents out, in bounded memory.
//!
//! Records are buffered per call type in an [`ExtentBuilder`]. A type's buffer is written as one
//! extent when it reaches `extent_target_bytes`; when all buffers together exceed
//! `buffer_budget_bytes` every non-empty one is written. [`TraceWriter::flush`] writes them all
//! (the recorder calls it at least once a second, so a killed tracer loses at most that much).
//! Compression happens on the DataSeries writer's background threads.

use crate::direct::TraceFile;
use crate::net::{Destination, NetStatus, TraceOutput};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use dataseries::{DsWriter, ExtentBuilder, ExtentType, FieldType, Value, WriterOptions};
use ra_syscalls::ArgKind;

use crate::event::{ArgValue, Event, ExtraValue};
use crate::schema::{CallLayout, Schema};
use crate::{Error, Result};

/// Tuning for [`TraceWriter`].
#[derive(Clone, Debug)]
pub struct WriterConfig {
    /// DataSeries options (compression, background threads).
    pub ds: WriterOptions,
    /// Write a call type's extent once its buffered records reach this size.
    pub extent_target_bytes: usize,
    /// Write every buffered extent once all buffers together reach this size.
    pub buffer_budget_bytes: usize,
    /// Largest single buffer stored in one record (a variable32 value must stay well below
    /// DataSeries' 512 MiB extent limit).
    pub max_buffer_bytes: usize,
    /// Declare [`crate::fsop::FS_OP_TYPE`] (traces of `reanimator fs`).
    pub fs_ops: bool,
    /// Further extent types to declare, written whole with [`TraceWriter::write_extent`]
    /// (`reanimator anonymize`'s pseudonym table).
    pub extra_types: Vec<std::sync::Arc<ExtentType>>,
    /// The process the watermarks name as the trace's writer (TRACE_FORMAT 3.12): this one
    /// by default; 0 names none (a scripted trace that must come out the same every time).
    pub writer_pid: u32,
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            ds: WriterOptions::default(),
            extent_target_bytes: 4 << 20,
            buffer_budget_bytes: 16 << 20,
            max_buffer_bytes: MAX_BUFFER_BYTES,
            fs_ops: false,
            extra_types: Vec::new(),
            writer_pid: std::process::id(),
        }
    }
}

/// The largest buffer one record stores by default ([`WriterConfig::max_buffer_bytes`]); a
/// recorder need not hold more of one buffer in memory: a larger one is kept as its length and
/// BLAKE3 digest.
pub const MAX_BUFFER_BYTES: usize = 256 << 20;

#[derive(Clone, Copy)]
enum Side {
    Snapshot,
    Blob,
}

struct CallState {
    layout: CallLayout,
    builder: ExtentBuilder,
    records: u64,
    /// The `unique_id` of the first record in `builder` (None: empty).
    first_id: Option<u64>,
}

/// Writes a trace: the schema's types, a [`crate::schema::INFO_TYPE`] extent, then the events.
pub struct TraceWriter<W: Write + Send + 'static> {
    ds: DsWriter<W>,
    calls: Vec<CallState>,
    info: ExtentBuilder,
    lost: ExtentBuilder,
    snapshot: ExtentBuilder,
    /// The (snapshot, phase) of the records in `snapshot`: an extent holds one.
    snapshot_key: Option<(u32, u8)>,
    blob: ExtentBuilder,
    /// File-system operation records (`cfg.fs_ops`).
    fs: Option<ExtentBuilder>,
    fs_agg: Option<ExtentBuilder>,
    /// The `unique_id` of the first record in `fs` (None: empty).
    fs_first: Option<u64>,
    /// The last watermark written (TRACE_FORMAT 3.12; None: none yet).
    marked: Option<u64>,
    /// Bytes of call extents written since the watermark last advanced: what a reader of the
    /// stream holds until it does (kept below `buffer_budget_bytes`).
    unmarked: usize,
    /// Digests of the contents stored so far (each is stored once per trace).
    blob_digests: HashSet<[u8; 32]>,
    cfg: WriterConfig,
    buffered: usize,
    next_id: u64,
    last_id: Option<u64>,
    records: u64,
    events: u64,
    /// Buffers over `cfg.max_buffer_bytes` kept as their digest or left out.
    oversized: u64,
}

impl TraceWriter<TraceOutput> {
    /// Create `path` and write the header, the schema and the trace info. The file is written
    /// with `O_DIRECT` where the file system allows it (see [`TraceFile`]).
    pub fn create(
        path: impl AsRef<Path>,
        info: &[(&str, &[u8])],
        cfg: WriterConfig,
    ) -> Result<Self> {
        let path = path.as_ref();
        let f = TraceFile::create(path)
            .map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        TraceWriter::new(TraceOutput::File(f), info, cfg)
    }

    /// [`TraceWriter::create`] for any destination: a file, or a collector over TCP
    /// (`label` names the stream when the destination does not). Also returns a handle on
    /// the network side's state (for a collector).
    pub fn open(
        dest: &Destination,
        label: &str,
        info: &[(&str, &[u8])],
        cfg: WriterConfig,
    ) -> Result<(Self, Option<NetStatus>)> {
        let out = TraceOutput::open(dest, label)
            .map_err(|source| Error::Io { path: dest.to_string().into(), source })?;
        let status = out.net_status();
        Ok((TraceWriter::new(out, info, cfg)?, status))
    }
}

impl<W: Write + Send + 'static> TraceWriter<W> {
    /// Start a trace on `out`. `info` becomes the first records of the info extent (the schema
    /// version and time unit are added automatically) and is written at once.
    pub fn new(out: W, info: &[(&str, &[u8])], cfg: WriterConfig) -> Result<Self> {
        let schema = Schema::ours();
        let mut types = schema.all_types();
        if cfg.fs_ops {
            types.push(crate::fsop::fs_op_type());
            types.push(crate::fsop::fs_aggregate_type());
        }
        types.extend(cfg.extra_types.iter().cloned());
        let ds = DsWriter::new(out, &types, cfg.ds.clone())?;
        let calls = schema
            .calls()
            .iter()
            .map(|l| CallState {
                builder: ExtentBuilder::new(l.ty.clone()),
                layout: l.clone(),
                records: 0,
                first_id: None,
            })
            .collect();
        let mut w = TraceWriter {
            ds,
            calls,
            info: ExtentBuilder::new(schema.info_type().clone()),
            lost: ExtentBuilder::new(schema.lost_type().clone()),
            snapshot: ExtentBuilder::new(schema.snapshot_type().clone()),
            snapshot_key: None,
            blob: ExtentBuilder::new(schema.blob_type().clone()),
            blob_digests: HashSet::new(),
            fs: cfg.fs_ops.then(|| ExtentBuilder::new(crate::fsop::fs_op_type())),
            fs_agg: cfg.fs_ops.then(|| ExtentBuilder::new(crate::fsop::fs_aggregate_type())),
            fs_first: None,
            marked: None,
            unmarked: 0,
            cfg,
            buffered: 0,
            next_id: 0,
            last_id: None,
            records: 0,
            events: 0,
            oversized: 0,
        };
        w.add_info("schema_version", crate::schema::SCHEMA_VERSION.as_bytes())?;
        w.add_info("time_unit", b"nanoseconds since the Unix epoch")?;
        w.add_info("writer", concat!("reanimator ", env!("CARGO_PKG_VERSION")).as_bytes())?;
        for (k, v) in info {
            w.add_info(k, v)?;
        }
        w.flush()?;
        Ok(w)
    }

    /// Add one key/value fact about the recording (written with the next flush).
    pub fn add_info(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.info.start_record();
        self.info.set(0, Value::Bytes(key.as_bytes()))?;
        self.info.set(1, Value::Bytes(value))?;
        Ok(())
    }

    /// Record that `count` events (`bytes` of data) of `syscall` were lost, and why.
    pub fn add_lost(
        &mut self,
        syscall: &str,
        count: i64,
        bytes: i64,
        time_range: Option<(i64, i64)>,
        reason: &str,
    ) -> Result<()> {
        let b = &mut self.lost;
        b.start_record();
        b.set(0, Value::Bytes(syscall.as_bytes()))?;
        b.set(1, Value::Int64(count))?;
        b.set(2, Value::Int64(bytes))?;
        if let Some((a, z)) = time_range {
            b.set(3, Value::Int64(a))?;
            b.set(4, Value::Int64(z))?;
        }
        b.set(5, Value::Bytes(reason.as_bytes()))?;
        Ok(())
    }

    /// Append one entry of a tree's recorded state: snapshot `snapshot` (0, 1, ... per
    /// directory), `phase` 0 (start) or 1 (end). The entries of one (snapshot, phase) must be
    /// appended together, in path order; each such run gets extents of its own.
    pub fn add_snapshot_entry(
        &mut self,
        snapshot: u32,
        phase: u8,
        e: &ra_fsstate::Entry,
    ) -> Result<()> {
        if self.snapshot_key.is_some_and(|k| k != (snapshot, phase)) {
            self.write_side(Side::Snapshot)?;
        }
        self.snapshot_key = Some((snapshot, phase));
        let before = self.snapshot.approx_bytes();
        let b = &mut self.snapshot;
        b.start_record();
        b.set(0, Value::Int32(snapshot as i32))?;
        b.set(1, Value::Byte(phase))?;
        b.set(2, Value::Bytes(&e.path))?;
        b.set(3, Value::Byte(e.kind.code()))?;
        b.set(4, Value::Int32(e.mode as i32))?;
        b.set(5, Value::Int64(i64::from(e.uid)))?;
        b.set(6, Value::Int64(i64::from(e.gid)))?;
        b.set(7, Value::Int64(e.size as i64))?;
        if let Some(d) = &e.digest {
            b.set(8, Value::Bytes(&d.0))?;
        }
        if let Some(t) = &e.target {
            b.set(9, Value::Bytes(t))?;
        }
        if let Some(r) = e.rdev {
            b.set(10, Value::Int64(i64::from(r.major)))?;
            b.set(11, Value::Int64(i64::from(r.minor)))?;
        }
        if !e.xattrs.is_empty() {
            b.set(12, Value::Bytes(&crate::snapshot::encode_xattrs(&e.xattrs)))?;
        }
        if let Some(l) = &e.link {
            b.set(13, Value::Bytes(l))?;
        }
        b.set(14, Value::Int64(e.mtime_ns))?;
        let after = self.snapshot.approx_bytes();
        self.side_grew(Side::Snapshot, before, after)
    }

    /// Whether content `digest` is stored in this trace already.
    pub fn has_blob(&self, digest: &ra_fsstate::Digest) -> bool {
        self.blob_digests.contains(&digest.0)
    }

    /// Note that content `digest` is being stored (its chunks follow with
    /// [`TraceWriter::add_blob_chunk`]). False if it was stored before.
    pub fn claim_blob(&mut self, digest: &ra_fsstate::Digest) -> bool {
        self.blob_digests.insert(digest.0)
    }

    /// Append one chunk (at most [`ra_fsstate::CHUNK_BYTES`]) of content `digest` at `offset`.
    pub fn add_blob_chunk(
        &mut self,
        digest: &ra_fsstate::Digest,
        offset: u64,
        data: &[u8],
    ) -> Result<()> {
        if data.len() > ra_fsstate::CHUNK_BYTES {
            return Err(Error::BufferTooLarge {
                call: "snapshot blob",
                field: "data",
                len: data.len(),
                limit: ra_fsstate::CHUNK_BYTES,
            });
        }
        self.blob_digests.insert(digest.0);
        let before = self.blob.approx_bytes();
        let b = &mut self.blob;
        b.start_record();
        b.set(0, Value::Bytes(&digest.0))?;
        b.set(1, Value::Int64(offset as i64))?;
        b.set(2, Value::Bytes(data))?;
        let after = self.blob.approx_bytes();
        self.side_grew(Side::Blob, before, after)
    }

    fn side_builder(&mut self, side: Side) -> &mut ExtentBuilder {
        match side {
            Side::Snapshot => &mut self.snapshot,
            Side::Blob => &mut self.blob,
        }
    }

    /// Bookkeeping after a side record: write the extent once it is big enough.
    fn side_grew(&mut self, side: Side, before: usize, after: usize) -> Result<()> {
        self.buffered += after.saturating_sub(before);
        if after >= self.cfg.extent_target_bytes {
            self.write_side(side)?;
        }
        if self.buffered >= self.cfg.buffer_budget_bytes {
            self.write_all_buffers()?;
        }
        Ok(())
    }

    fn write_side(&mut self, side: Side) -> Result<()> {
        let b = self.side_builder(side);
        if b.is_empty() {
            return Ok(());
        }
        let size = b.approx_bytes();
        let ty = b.extent_type().clone();
        let full = std::mem::replace(b, ExtentBuilder::new(ty));
        self.buffered = self.buffered.saturating_sub(size);
        self.ds.write_extent(full)?;
        Ok(())
    }

    /// Append an event, assigning it the next unique ids (one per record it takes). Returns
    /// the first id.
    pub fn append(&mut self, ev: &Event) -> Result<u64> {
        let id = self.next_id;
        self.write_event(ev, id)?;
        Ok(id)
    }

    /// Append an event keeping its `unique_id`, which must be larger than every id written.
    pub fn append_preserving(&mut self, ev: &Event) -> Result<()> {
        if let Some(prev) = self.last_id {
            if ev.unique_id <= prev {
                return Err(Error::NonMonotonicId { previous: prev, got: ev.unique_id });
            }
        }
        self.write_event(ev, ev.unique_id)
    }

    /// Append a file-system operation record (the writer must have been created with
    /// `fs_ops`), assigning it the next unique id, which it returns.
    pub fn append_fs(&mut self, r: &crate::fsop::FsRecord<'_>) -> Result<u64> {
        let id = self.next_id;
        self.write_fs(r, id)?;
        Ok(id)
    }

    /// Append a file-system operation record keeping the `unique_id` it had in another
    /// trace, which must be larger than every id written (copies: `reanimator anonymize`).
    pub fn append_fs_preserving(&mut self, r: &crate::fsop::FsRecord<'_>, id: u64) -> Result<()> {
        if let Some(prev) = self.last_id {
            if id <= prev {
                return Err(Error::NonMonotonicId { previous: prev, got: id });
            }
        }
        self.write_fs(r, id)
    }

    fn write_fs(&mut self, r: &crate::fsop::FsRecord<'_>, id: u64) -> Result<()> {
        use crate::fsop::FsData;
        let max = self.cfg.max_buffer_bytes;
        let Some(b) = self.fs.as_mut() else {
            return Err(Error::UnknownCall(format!("{} (writer without fs_ops)", r.op)));
        };
        if let FsData::Full(d) = &r.data {
            if d.len() > max {
                return Err(Error::BufferTooLarge {
                    call: r.op,
                    field: "data",
                    len: d.len(),
                    limit: max,
                });
            }
        }
        let before = b.approx_bytes();
        if b.is_empty() {
            self.fs_first = Some(id);
        }
        b.start_record();
        for (c, v) in r.columns(id) {
            b.set(c, v)?;
        }
        let after = b.approx_bytes();
        self.records += 1;
        self.events += 1;
        self.last_id = Some(id);
        self.next_id = id + 1;
        self.buffered += after.saturating_sub(before);
        if after >= self.cfg.extent_target_bytes {
            let fresh =
                self.ds.new_builder_sized(crate::fsop::fs_op_type(), self.cfg.extent_target_bytes);
            let full = std::mem::replace(b, fresh);
            self.fs_first = None;
            self.buffered = self.buffered.saturating_sub(after);
            self.ds.write_extent(full)?;
            self.unmarked += after;
            self.mark_or_write_all()?;
        }
        if self.buffered >= self.cfg.buffer_budget_bytes {
            self.write_all_buffers()?;
        }
        Ok(())
    }

    /// Append one row of the file-system aggregate driver (written with the next flush).
    pub fn append_fs_aggregate(&mut self, r: &crate::fsop::AggregateRow<'_>) -> Result<()> {
        let Some(b) = self.fs_agg.as_mut() else {
            return Err(Error::UnknownCall("aggregate (writer without fs_ops)".into()));
        };
        let st = r.stats;
        b.start_record();
        let clamp = |v: u64| Value::Int64(v.min(i64::MAX as u64) as i64);
        b.set(0, Value::Int64(r.interval_start))?;
        b.set(1, Value::Int64(r.interval_end))?;
        b.set(2, Value::Bytes(r.op.as_bytes()))?;
        b.set(3, Value::Bytes(r.group.as_bytes()))?;
        b.set(4, clamp(st.count))?;
        b.set(5, clamp(st.errors))?;
        b.set(6, clamp(st.bytes))?;
        b.set(7, clamp(st.total_ns))?;
        b.set(8, clamp(if st.count == 0 { 0 } else { st.min_ns }))?;
        b.set(9, clamp(st.max_ns))?;
        let used = st.hist.iter().rposition(|&c| c > 0).map_or(0, |i| i + 1);
        let mut h = Vec::with_capacity(used * 8);
        for c in &st.hist[..used] {
            h.extend_from_slice(&c.to_le_bytes());
        }
        b.set(10, Value::Bytes(&h))?;
        Ok(())
    }

    /// Write a whole extent of one of [`WriterConfig::extra_types`] (after every record
    /// buffered so far).
    pub fn write_extent(&mut self, b: ExtentBuilder) -> Result<()> {
        self.write_all_buffers()?;
        self.ds.write_extent(b)?;
        Ok(())
    }

    /// Events appended so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Buffers larger than one record holds (`WriterConfig::max_buffer_bytes`) so far: an
    /// argument's kept as its length and BLAKE3 digest, a column's of bytes left out. The
    /// trace's info says how many (`oversized_buffers`).
    pub fn oversized(&self) -> u64 {
        self.oversized
    }

    /// Records appended so far (multi-record calls count each record).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bytes handed to the file so far.
    pub fn bytes_written(&self) -> u64 {
        self.ds.bytes_written()
    }

    fn write_event(&mut self, ev: &Event, first_id: u64) -> Result<()> {
        let def = ev.def.ok_or_else(|| Error::UnknownCall(ev.name.clone()))?;
        let idx = Schema::ours()
            .index_of(def.trace_name)
            .ok_or_else(|| Error::UnknownCall(def.name.to_string()))?;
        if ev.args.len() != def.args.len() {
            return Err(Error::ArgCount {
                call: def.name,
                expected: def.args.len(),
                got: ev.args.len(),
            });
        }
        let max = self.cfg.max_buffer_bytes;
        let arg_len = |v: &ArgValue| match v {
            ArgValue::Data(d) => d.len(),
            ArgValue::Iov(v) => {
                v.iter().map(|i| i.data.as_ref().map_or(0, |d| d.len())).max().unwrap_or(0)
            }
            ArgValue::Strings(s) => s.iter().map(Vec::len).max().unwrap_or(0),
            _ => 0,
        };
        let big_extra =
            |(_, v): &(String, ExtraValue)| matches!(v, ExtraValue::Bytes(b) if b.len() > max);
        // A recorder may have digested a buffer this large itself (reading it in pieces).
        let digested = ev
            .args
            .iter()
            .filter(|v| matches!(v, ArgValue::Hashed { len, .. } if *len > max as u64))
            .count();
        self.oversized += digested as u64;
        let oversized;
        let ev = if ev.args.iter().any(|v| arg_len(v) > max) || ev.extra.iter().any(big_extra) {
            // A buffer no record can hold (a value stays well below DataSeries' 512 MiB
            // extent limit): kept as its length and BLAKE3 digest, which still verifies a
            // replay's data, rather than ending the recording. A column of bytes that large
            // (a copy's read-back data) is left out.
            let mut e = ev.clone();
            for (a, v) in def.args.iter().zip(e.args.iter_mut()) {
                if arg_len(v) > max {
                    if !v.hash_data() {
                        return Err(Error::BufferTooLarge {
                            call: def.name,
                            field: a.field,
                            len: arg_len(v),
                            limit: max,
                        });
                    }
                    self.oversized += 1;
                }
            }
            let before = e.extra.len();
            e.extra.retain(|x| !big_extra(x));
            self.oversized += (before - e.extra.len()) as u64;
            oversized = e;
            &oversized
        } else {
            ev
        };
        let st = &mut self.calls[idx];
        let before = st.builder.approx_bytes();
        if st.builder.is_empty() {
            st.first_id = Some(first_id);
        }
        let n = write_records(st, ev, first_id)?;
        let after = st.builder.approx_bytes();
        st.records += n;
        self.records += n;
        self.events += 1;
        self.last_id = Some(first_id + n - 1);
        self.next_id = first_id + n;
        self.buffered += after.saturating_sub(before);
        if after >= self.cfg.extent_target_bytes {
            // Full: its successor will likely fill up too, so it gets reused buffers.
            let fresh =
                self.ds.new_builder_sized(st.layout.ty.clone(), self.cfg.extent_target_bytes);
            let b = std::mem::replace(&mut st.builder, fresh);
            st.first_id = None;
            self.buffered = self.buffered.saturating_sub(after);
            self.ds.write_extent(b)?;
            self.unmarked += after;
            self.mark_or_write_all()?;
        }
        if self.buffered >= self.cfg.buffer_budget_bytes {
            self.write_all_buffers()?;
        }
        Ok(())
    }

    /// After one call type's extent is written: a watermark if it advanced; and if what was
    /// written since it last advanced reaches the budget (a slow type's first record holds it
    /// back), every buffer, so that a reader of the stream holds no more than that.
    fn mark_or_write_all(&mut self) -> Result<()> {
        self.mark()?;
        if self.unmarked >= self.cfg.buffer_budget_bytes
            && self.buffered < self.cfg.buffer_budget_bytes
        {
            self.write_all_buffers()?;
        }
        Ok(())
    }

    /// Write a watermark (TRACE_FORMAT 3.12) when the events written whole have advanced
    /// since the last one: every id below the lowest id still buffered (or below the next id,
    /// with nothing buffered) is in an extent already handed to the file. A reader of a
    /// stream then merges what came before it, holding no more than this writer buffers.
    fn mark(&mut self) -> Result<()> {
        let held = self.calls.iter().filter_map(|c| c.first_id).chain(self.fs_first).min();
        let below = held.unwrap_or(self.next_id);
        if self.marked.is_some_and(|m| m >= below) {
            return Ok(());
        }
        self.marked = Some(below);
        self.unmarked = 0;
        let mut b = ExtentBuilder::new(Schema::ours().watermark_type().clone());
        b.start_record();
        b.set(0, Value::Int64(below as i64))?;
        b.set(1, Value::Int32(self.cfg.writer_pid as i32))?;
        self.ds.write_extent(b)?;
        Ok(())
    }

    fn write_all_buffers(&mut self) -> Result<()> {
        for st in &mut self.calls {
            if !st.builder.is_empty() {
                let ty = st.layout.ty.clone();
                // A type that was filling extents gets reused buffers (see append).
                let fresh = if st.builder.approx_bytes() >= 1 << 20 {
                    self.ds.new_builder_sized(ty, self.cfg.extent_target_bytes)
                } else {
                    ExtentBuilder::new(ty)
                };
                let b = std::mem::replace(&mut st.builder, fresh);
                st.first_id = None;
                self.ds.write_extent(b)?;
            }
        }
        self.fs_first = None;
        let fs = self.fs.iter_mut().chain(self.fs_agg.iter_mut());
        for b in [&mut self.info, &mut self.lost, &mut self.snapshot, &mut self.blob]
            .into_iter()
            .chain(fs)
        {
            if !b.is_empty() {
                let ty = b.extent_type().clone();
                let full = std::mem::replace(b, ExtentBuilder::new(ty));
                self.ds.write_extent(full)?;
            }
        }
        self.buffered = 0;
        self.mark()
    }

    /// Write every buffered record and hand the bytes to the operating system: after this
    /// returns, a crash of this process loses nothing written so far (the trace is readable
    /// without its trailer).
    pub fn flush(&mut self) -> Result<()> {
        self.write_all_buffers()?;
        self.ds.flush()?;
        Ok(())
    }

    /// Flush, then write the index and trailer. Returns the output.
    pub fn finish(mut self) -> Result<W> {
        if self.oversized > 0 {
            self.add_info("oversized_buffers", self.oversized.to_string().as_bytes())?;
        }
        self.write_all_buffers()?;
        Ok(self.ds.finish()?)
    }
}

fn set_int(b: &mut ExtentBuilder, ty: &ExtentType, field: usize, v: i64) -> Result<()> {
    let val = match ty.fields()[field].ftype {
        FieldType::Int32 => Value::Int32(v as i32),
        FieldType::Int64 => Value::Int64(v),
        FieldType::Byte => Value::Byte(v as u8),
        FieldType::Bool => Value::Bool(v != 0),
        FieldType::Double => Value::Double(v as f64),
        // An integer argument stored in a bytes field: its decimal text.
        FieldType::Variable32 | FieldType::FixedWidth(_) => {
            return Ok(b.set(field, Value::Bytes(v.to_string().as_bytes()))?)
        }
    };
    Ok(b.set(field, val)?)
}

fn set_opt_int(
    b: &mut ExtentBuilder,
    ty: &ExtentType,
    field: Option<usize>,
    v: Option<i64>,
) -> Result<()> {
    match (field, v) {
        (Some(f), Some(v)) => set_int(b, ty, f, v),
        _ => Ok(()),
    }
}

fn set_bytes(b: &mut ExtentBuilder, ty: &ExtentType, field: usize, data: &[u8]) -> Result<()> {
    match ty.fields()[field].ftype {
        FieldType::Variable32 => Ok(b.set(field, Value::Bytes(data))?),
        // A buffer mapped to a numeric column (never in our schema): store its length.
        _ => set_int(b, ty, field, data.len() as i64),
    }
}

fn write_common(st: &mut CallState, ev: &Event, id: u64) -> Result<()> {
    let ty = st.layout.ty.clone();
    let c = st.layout.common;
    let b = &mut st.builder;
    set_opt_int(b, &ty, c.unique_id, Some(id as i64))?;
    set_opt_int(b, &ty, c.time_called, ev.time_called)?;
    set_opt_int(b, &ty, c.time_returned, ev.time_returned)?;
    set_opt_int(b, &ty, c.time_recorded, ev.time_recorded)?;
    set_opt_int(b, &ty, c.pid, ev.pid.map(i64::from))?;
    set_opt_int(b, &ty, c.tid, ev.tid.map(i64::from))?;
    set_opt_int(b, &ty, c.ppid, ev.ppid.map(i64::from))?;
    set_opt_int(b, &ty, c.uid, ev.uid.map(i64::from))?;
    set_opt_int(b, &ty, c.gid, ev.gid.map(i64::from))?;
    set_opt_int(b, &ty, c.sid, ev.sid.map(i64::from))?;
    set_opt_int(b, &ty, c.pgid, ev.pgid.map(i64::from))?;
    set_opt_int(b, &ty, c.errno_number, Some(i64::from(ev.errno.unwrap_or(0))))?;
    set_opt_int(b, &ty, c.return_value, ev.ret)?;
    if let Some(f) = c.buffer_not_captured {
        b.set(f, Value::Bool(ev.buffer_not_captured))?;
    }
    if let Some(f) = c.data_digests {
        let mut d = Vec::new();
        for (i, a) in ev.args.iter().enumerate() {
            if let ArgValue::Hashed { len, blake3 } = a {
                d.extend_from_slice(&(i as u16).to_le_bytes());
                d.extend_from_slice(&len.to_le_bytes());
                d.extend_from_slice(blake3);
            }
        }
        if !d.is_empty() {
            b.set(f, Value::Bytes(&d))?;
        }
    }
    Ok(())
}

/// Scalars, plain buffers and derived columns of one record.
fn write_args(st: &mut CallState, ev: &Event) -> Result<()> {
    let ty = st.layout.ty.clone();
    for (i, v) in ev.args.iter().enumerate() {
        let Some(f) = st.layout.arg_fields.get(i).copied().flatten() else { continue };
        if let (Some(Some(cols)), ArgValue::Data(d)) = (st.layout.struct_columns.get(i), v) {
            let s = match st.layout.def.map(|d| d.args[i].kind) {
                Some(
                    ArgKind::InStruct(s, _) | ArgKind::OutStruct(s, _) | ArgKind::InOutStruct(s, _),
                ) => s,
                _ => continue,
            };
            if let Some(vals) = crate::structs::struct_to_columns(s, d) {
                for (c, x) in cols.iter().zip(vals) {
                    set_int(&mut st.builder, &ty, *c, x)?;
                }
            }
            if let Some(Some(raw)) = st.layout.struct_raw.get(i) {
                set_bytes(&mut st.builder, &ty, *raw, d)?;
            }
            continue;
        }
        match v {
            ArgValue::Int(x) => set_int(&mut st.builder, &ty, f, *x)?,
            ArgValue::Data(d) => set_bytes(&mut st.builder, &ty, f, d)?,
            ArgValue::Absent
            | ArgValue::NotCaptured
            | ArgValue::Iov(_)
            | ArgValue::Strings(_)
            | ArgValue::Hashed { .. } => {}
        }
    }
    for (name, v) in &ev.extra {
        let Some(f) = ty.field_index(name) else { continue };
        if st.layout.extra_fields.binary_search(&f).is_err() {
            continue;
        }
        match (v, ty.fields()[f].ftype) {
            // A value the column cannot hold stays null rather than being cut.
            (ExtraValue::Int(x), FieldType::Int32) if i32::try_from(*x).is_err() => {}
            (ExtraValue::Int(x), _) => set_int(&mut st.builder, &ty, f, *x)?,
            (ExtraValue::Bool(b), _) => set_int(&mut st.builder, &ty, f, i64::from(*b))?,
            (ExtraValue::Bytes(b), _) => set_bytes(&mut st.builder, &ty, f, b)?,
            (ExtraValue::DoubleBits(b), FieldType::Double) => {
                st.builder.set(f, Value::Double(f64::from_bits(*b)))?
            }
            _ => {}
        }
    }
    for d in st.layout.derived.iter().flatten() {
        let Some(value) = d.value(&ev.args) else { continue };
        set_int(&mut st.builder, &ty, d.field(), value)?;
    }
    Ok(())
}

/// Write the records of one event; returns how many.
fn write_records(st: &mut CallState, ev: &Event, first_id: u64) -> Result<u64> {
    let ty = st.layout.ty.clone();
    // A vector call is always a header record and one record per vector; a vector argument
    // not read (not captured, or absent in an event that skipped canonical_vectors) has none.
    let iov =
        ev.def.and_then(|d| d.args.iter().position(|a| a.kind.is_vector())).and_then(|i| match ev
            .args
            .get(i)?
        {
            ArgValue::Iov(v) => Some((i, v.as_slice())),
            ArgValue::Absent | ArgValue::NotCaptured => Some((i, &[][..])),
            _ => None,
        });
    let strings: Vec<(usize, &Vec<Vec<u8>>)> = ev
        .args
        .iter()
        .enumerate()
        .filter_map(|(i, v)| match v {
            ArgValue::Strings(s) => Some((i, s)),
            _ => None,
        })
        .collect();
    if let Some((ai, vecs)) = iov {
        // Re-Animator's layout: a header record (iov_number -1, total bytes requested), then
        // one record per vector.
        st.builder.start_record();
        write_common(st, ev, first_id)?;
        write_args(st, ev)?;
        set_opt_int(&mut st.builder, &ty, st.layout.iov_number, Some(-1))?;
        let total: u64 = vecs.iter().map(|v| v.requested).sum();
        set_opt_int(&mut st.builder, &ty, st.layout.bytes_requested, Some(total as i64))?;
        let data_field = st.layout.arg_fields[ai];
        for (k, v) in vecs.iter().enumerate() {
            st.builder.start_record();
            write_common(st, ev, first_id + 1 + k as u64)?;
            write_args(st, ev)?;
            set_opt_int(&mut st.builder, &ty, st.layout.iov_number, Some(k as i64))?;
            set_opt_int(&mut st.builder, &ty, st.layout.bytes_requested, Some(v.requested as i64))?;
            if let (Some(f), Some(d)) = (data_field, &v.data) {
                set_bytes(&mut st.builder, &ty, f, d)?;
            }
        }
        return Ok(1 + vecs.len() as u64);
    }
    if !strings.is_empty() {
        // Re-Animator's execve layout: continuation 0 (the path and scalars), one record per
        // string (argv first, then envp), continuation -1 (the return value).
        let mut id = first_id;
        st.builder.start_record();
        write_common(st, ev, id)?;
        write_args(st, ev)?;
        set_opt_int(&mut st.builder, &ty, st.layout.continuation, Some(0))?;
        let mut k = 1i64;
        for (ai, list) in &strings {
            let f = st.layout.arg_fields[*ai];
            for s in list.iter() {
                id += 1;
                st.builder.start_record();
                write_common(st, ev, id)?;
                set_opt_int(&mut st.builder, &ty, st.layout.continuation, Some(k))?;
                if let Some(f) = f {
                    set_bytes(&mut st.builder, &ty, f, s)?;
                }
                k += 1;
            }
        }
        id += 1;
        st.builder.start_record();
        write_common(st, ev, id)?;
        set_opt_int(&mut st.builder, &ty, st.layout.continuation, Some(-1))?;
        return Ok(id - first_id + 1);
    }
    st.builder.start_record();
    write_common(st, ev, first_id)?;
    write_args(st, ev)?;
    Ok(1)
}
