//! The Parquet sink: each table of each trace in a file of its own beneath
//! `DIR/TABLE/host=H/trace=T/`, so that the exports of many traces from many machines form one
//! hive-partitioned dataset. Rows of `calls` are grouped by I/O class into row groups (a row
//! group holds one class's calls over a stretch of time) and sorted by call, then
//! `time_called`, within each: row-group statistics prune by class and time, page statistics
//! by call.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{
    Compression, ConvertedType, LogicalType, Repetition, Type as Physical, ZstdLevel,
};
use parquet::data_type::{
    BoolType, ByteArray, ByteArrayType, FixedLenByteArray, FixedLenByteArrayType, Int32Type,
    Int64Type,
};
use parquet::file::metadata::{KeyValue, SortingColumn};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

use crate::buffer::{ColBuf, RowBuffer};
use crate::columns::{self, c, ColType, Column, Table, EXPORT_VERSION};
use crate::pass::{Sink, TraceMeta};
use crate::row::{Cell, Row};
use crate::{Error, Result};

/// Rows of `calls` held before the largest group is written as a row group.
const CALL_ROWS: u32 = 1 << 18;
/// Bytes of values held (all groups of a table) before a row group is written.
const HELD_BYTES: usize = 48 << 20;
/// Rows of the other tables per row group.
const OTHER_ROWS: u32 = 1 << 17;

/// Compression of the files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// zstd level 1 (the default: nearly level 3's size at a fraction of its time).
    Zstd,
    /// Snappy (`--compress snappy`).
    Snappy,
    /// Uncompressed pages (`--compress none`).
    None,
}

impl Codec {
    fn parquet(self) -> Compression {
        match self {
            // Level 1: nearly level 3's size on traces, at a fraction of its time.
            Codec::Zstd => Compression::ZSTD(ZstdLevel::try_new(1).expect("a valid level")),
            Codec::Snappy => Compression::SNAPPY,
            Codec::None => Compression::UNCOMPRESSED,
        }
    }
}

/// A partition directory's value: `host=H`, `trace=T`. Characters that engines unescape or
/// treat specially in directory names (`/`, `=`, `%`, spaces, ...) become `_`; a leading `.`
/// or `_` (hidden to Spark and Hive) becomes `-`.
pub fn partition_value(s: &str) -> String {
    let mut v: String =
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
    if v.is_empty() {
        v = "unknown".into();
    }
    if v.starts_with(['.', '_']) {
        v.replace_range(..1, "-");
    }
    v
}

/// The name of a table's file in its partition directory.
pub const PART_FILE: &str = "part-0.parquet";

/// `DIR/TABLE/host=H/trace=T`.
pub fn partition_dir(out: &Path, table: &str, meta: &TraceMeta) -> PathBuf {
    out.join(table).join(format!("host={}", meta.host)).join(format!("trace={}", meta.trace_id))
}

fn leaf(c: &Column) -> Type {
    let b = |p: Physical| {
        Type::primitive_type_builder(&c.name, p).with_repetition(Repetition::OPTIONAL)
    };
    let t = match c.ty {
        ColType::Int64 => b(Physical::INT64),
        ColType::Int32 => b(Physical::INT32),
        ColType::Bool => b(Physical::BOOLEAN),
        ColType::Text => b(Physical::BYTE_ARRAY)
            .with_logical_type(Some(LogicalType::String))
            .with_converted_type(ConvertedType::UTF8),
        ColType::Bytes => b(Physical::BYTE_ARRAY),
        ColType::Digest => b(Physical::FIXED_LEN_BYTE_ARRAY).with_length(32),
        ColType::TextList => {
            let element = Type::primitive_type_builder("element", Physical::BYTE_ARRAY)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(Some(LogicalType::String))
                .with_converted_type(ConvertedType::UTF8)
                .build()
                .expect("a valid element");
            let list = Type::group_type_builder("list")
                .with_repetition(Repetition::REPEATED)
                .with_fields(vec![Arc::new(element)])
                .build()
                .expect("a valid list");
            return Type::group_type_builder(&c.name)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(Some(LogicalType::List))
                .with_converted_type(ConvertedType::LIST)
                .with_fields(vec![Arc::new(list)])
                .build()
                .expect("a valid list column");
        }
    };
    t.build().expect("a valid column")
}

/// The Parquet schema of a table.
pub fn schema(columns: &[Column]) -> Type {
    Type::group_type_builder("schema")
        .with_fields(columns.iter().map(|c| Arc::new(leaf(c))).collect())
        .build()
        .expect("a valid schema")
}

fn properties(table: Table, columns: &[Column], codec: Codec) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(codec.parquet())
        .set_created_by(concat!("reanimator ", env!("CARGO_PKG_VERSION")).to_string())
        .set_key_value_metadata(Some(vec![
            KeyValue::new("reanimator.export_version".into(), EXPORT_VERSION.to_string()),
            KeyValue::new("reanimator.table".into(), table.name().to_string()),
        ]));
    for col in columns {
        // Values that rarely repeat: a dictionary would only be dropped again.
        let unique = col.ty == ColType::Digest
            || matches!(
                col.name.as_str(),
                "unique_id" | "time_called" | "time_returned" | "time_recorded" | "bytes"
            );
        if unique {
            b = b.set_column_dictionary_enabled(ColumnPath::from(col.name.as_str()), false);
        }
    }
    if table == Table::Calls {
        b = b.set_sorting_columns(Some(vec![
            SortingColumn { column_idx: c::CALL.into(), descending: false, nulls_first: false },
            SortingColumn {
                column_idx: c::TIME_CALLED.into(),
                descending: false,
                nulls_first: false,
            },
        ]));
    }
    b.build()
}

/// One table's file of one trace, written as `.part-0.parquet.partial` and renamed to
/// `part-0.parquet` when finished (removed if dropped before).
struct PqFile {
    tmp: PathBuf,
    dest: PathBuf,
    w: Option<SerializedFileWriter<BufWriter<File>>>,
    columns: Vec<Column>,
    /// Columns whose value is the same in every row (`host`, `trace_id`, `backend`).
    consts: Vec<(usize, Bytes)>,
    /// Buffers used again for every column of every row group.
    scratch: Scratch,
}

/// What writing a column needs beyond the values, kept between columns and row groups: made
/// afresh for each of a table's ~200 columns, the level arrays alone were tens of MB per row
/// group for the allocator to map and the kernel to zero.
#[derive(Default)]
struct Scratch {
    /// Definition levels.
    defs: Vec<i16>,
    /// All-zero levels (a column null in every row; repetition levels of a list's firsts).
    zeros: Vec<i16>,
    /// All-one definition levels (a constant column).
    ones: Vec<i16>,
    /// Each row's entry in a column's values (see [`levels`]).
    pos: Vec<u32>,
    /// The values of each constant column, one per row (made once, not per row group).
    consts: Vec<Vec<ByteArray>>,
}

/// `v` holding at least `n` copies of `x`.
fn filled<T: Clone>(v: &mut Vec<T>, n: usize, x: T) -> &[T] {
    if v.len() < n {
        v.resize(n, x);
    }
    &v[..n]
}

impl PqFile {
    fn create(
        dir: &Path,
        table: Table,
        columns: Vec<Column>,
        consts: Vec<(usize, Bytes)>,
        codec: Codec,
    ) -> Result<PqFile> {
        ra_fsstate::private::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let dest = dir.join(PART_FILE);
        let tmp = dir.join(".part-0.parquet.partial");
        let f = ra_fsstate::private::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let props = properties(table, &columns, codec);
        let w = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 20, f),
            Arc::new(schema(&columns)),
            Arc::new(props),
        )
        .map_err(|e| Error::parquet(&tmp, e))?;
        Ok(PqFile { tmp, dest, w: Some(w), columns, consts, scratch: Scratch::default() })
    }

    /// Write the buffer's rows as one row group (in `order`: new position -> row, when given)
    /// and clear it.
    fn write(&mut self, buf: &mut RowBuffer, order: Option<&[u32]>) -> Result<()> {
        if buf.rows == 0 {
            return Ok(());
        }
        let n = buf.rows as usize;
        let w = self.w.as_mut().expect("an open file");
        let tmp = &self.tmp;
        let pe = |e| Error::parquet(tmp, e);
        let mut rg = w.next_row_group().map_err(pe)?;
        let mut i = 0;
        let sc = &mut self.scratch;
        while let Some(mut cw) = rg.next_column().map_err(pe)? {
            let ty = self.columns[i].ty;
            if let Some(k) = self.consts.iter().position(|(c, _)| *c == i) {
                if sc.consts.len() <= k {
                    sc.consts.resize_with(k + 1, Vec::new);
                }
                let v = ByteArray::from(self.consts[k].1.clone());
                let vals = filled(&mut sc.consts[k], n, v);
                let defs = filled(&mut sc.ones, n, 1);
                cw.typed::<ByteArrayType>().write_batch(vals, Some(defs), None).map_err(pe)?;
            } else {
                write_column(&mut cw, ty, &mut buf.cols[i], n, order, sc).map_err(pe)?;
            }
            cw.close().map_err(pe)?;
            i += 1;
        }
        rg.close().map_err(pe)?;
        buf.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<PathBuf> {
        let w = self.w.take().expect("an open file");
        let bw = w.into_inner().map_err(|e| Error::parquet(&self.tmp, e))?;
        let f = bw.into_inner().map_err(|e| Error::io(&self.tmp, e.into_error()))?;
        drop(f);
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| Error::io(&self.dest, e))?;
        Ok(self.dest.clone())
    }
}

impl Drop for PqFile {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Definition levels of a column (in `defs`) and the indices of its values in output order
/// (None: the rows' own order).
fn levels(
    cb: &ColBuf,
    n: usize,
    order: Option<&[u32]>,
    defs: &mut Vec<i16>,
    pos: &mut Vec<u32>,
) -> Option<Vec<u32>> {
    defs.clear();
    defs.resize(n, 0);
    match order {
        None => {
            for &r in &cb.rows {
                defs[r as usize] = 1;
            }
            None
        }
        Some(order) => {
            pos.clear();
            pos.resize(n, u32::MAX);
            for (k, &r) in cb.rows.iter().enumerate() {
                pos[r as usize] = k as u32;
            }
            let mut idx = Vec::with_capacity(cb.rows.len());
            for (i, &old) in order.iter().enumerate() {
                let k = pos[old as usize];
                if k != u32::MAX {
                    defs[i] = 1;
                    idx.push(k);
                }
            }
            Some(idx)
        }
    }
}

fn gather<T: Copy>(v: &[T], idx: &Option<Vec<u32>>) -> Vec<T> {
    match idx {
        None => v.to_vec(),
        Some(idx) => idx.iter().map(|&k| v[k as usize]).collect(),
    }
}

fn write_column(
    cw: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    ty: ColType,
    cb: &mut ColBuf,
    n: usize,
    order: Option<&[u32]>,
    sc: &mut Scratch,
) -> parquet::errors::Result<()> {
    if cb.rows.is_empty() {
        // All null: only the levels.
        let defs = filled(&mut sc.zeros, n, 0);
        match ty {
            ColType::Int64 => cw.typed::<Int64Type>().write_batch(&[], Some(defs), None)?,
            ColType::Int32 => cw.typed::<Int32Type>().write_batch(&[], Some(defs), None)?,
            ColType::Bool => cw.typed::<BoolType>().write_batch(&[], Some(defs), None)?,
            ColType::Text | ColType::Bytes => {
                cw.typed::<ByteArrayType>().write_batch(&[], Some(defs), None)?
            }
            ColType::Digest => {
                cw.typed::<FixedLenByteArrayType>().write_batch(&[], Some(defs), None)?
            }
            ColType::TextList => {
                cw.typed::<ByteArrayType>().write_batch(&[], Some(defs), Some(defs))?
            }
        };
        return Ok(());
    }
    if ty == ColType::TextList {
        return write_list(cw, cb, n, order, &mut sc.pos);
    }
    let idx = levels(cb, n, order, &mut sc.defs, &mut sc.pos);
    let defs = &sc.defs;
    match ty {
        ColType::Int64 => {
            let v = gather(&cb.ints, &idx);
            cw.typed::<Int64Type>().write_batch(&v, Some(defs), None)?;
        }
        ColType::Int32 => {
            let v: Vec<i32> = gather(&cb.ints, &idx).into_iter().map(|x| x as i32).collect();
            cw.typed::<Int32Type>().write_batch(&v, Some(defs), None)?;
        }
        ColType::Bool => {
            let v = gather(&cb.bools, &idx);
            cw.typed::<BoolType>().write_batch(&v, Some(defs), None)?;
        }
        ColType::Text | ColType::Bytes => {
            // A copy, one allocation of the exact size, so that `cb.bytes` keeps its capacity
            // for the next row group (taken, it grew again from nothing each time); the
            // values' slices and the writer's statistics share the copy.
            let all = Bytes::copy_from_slice(&cb.bytes);
            // A program-lifetime value is no reference to count (cloning and dropping a slice
            // of `all` is an atomic operation each, per row and column).
            let item = |k: usize| match cb.statics.get(k) {
                Some(Some(s)) => ByteArray::from(Bytes::from_static(s.as_bytes())),
                _ => {
                    let start = if k == 0 { 0 } else { cb.ends[k - 1] as usize };
                    ByteArray::from(all.slice(start..cb.ends[k] as usize))
                }
            };
            let v: Vec<ByteArray> = match &idx {
                None => (0..cb.ends.len()).map(item).collect(),
                Some(idx) => idx.iter().map(|&k| item(k as usize)).collect(),
            };
            cw.typed::<ByteArrayType>().write_batch(&v, Some(defs), None)?;
        }
        ColType::Digest => {
            let flat: Vec<u8> = gather(&cb.digests, &idx).concat();
            let all = Bytes::from(flat);
            let v: Vec<FixedLenByteArray> = (0..all.len() / 32)
                .map(|k| FixedLenByteArray::from(ByteArray::from(all.slice(k * 32..k * 32 + 32))))
                .collect();
            cw.typed::<FixedLenByteArrayType>().write_batch(&v, Some(defs), None)?;
        }
        ColType::TextList => unreachable!("lists are written above"),
    }
    Ok(())
}

/// A LIST<STRING> column: levels 0 (null list), 1 (empty list), 3 (an item); repetition 1 for
/// the items after a list's first.
fn write_list(
    cw: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    cb: &mut ColBuf,
    n: usize,
    order: Option<&[u32]>,
    pos: &mut Vec<u32>,
) -> parquet::errors::Result<()> {
    pos.clear();
    pos.resize(n, u32::MAX);
    for (k, &r) in cb.rows.iter().enumerate() {
        pos[r as usize] = k as u32;
    }
    let all = Bytes::from(std::mem::take(&mut cb.bytes));
    let (mut defs, mut reps, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let row = order.map_or(i as u32, |o| o[i]);
        let k = pos[row as usize];
        if k == u32::MAX {
            defs.push(0);
            reps.push(0);
            continue;
        }
        let first = if k == 0 { 0 } else { cb.list_ends[k as usize - 1] as usize };
        let last = cb.list_ends[k as usize] as usize;
        if first == last {
            defs.push(1);
            reps.push(0);
        }
        for j in first..last {
            let start = if j == 0 { 0 } else { cb.ends[j - 1] as usize };
            vals.push(ByteArray::from(all.slice(start..cb.ends[j] as usize)));
            defs.push(3);
            reps.push(if j == first { 0 } else { 1 });
        }
    }
    cw.typed::<ByteArrayType>().write_batch(&vals, Some(&defs), Some(&reps))?;
    Ok(())
}

/// A table being written: its file and the rows held for it.
struct Part {
    file: PqFile,
    buf: RowBuffer,
}

/// The Parquet sink of one trace (or one profile).
pub struct ParquetSink {
    codec: Codec,
    calls: Option<PqFile>,
    /// Rows of `calls` per I/O class.
    groups: Vec<(&'static str, RowBuffer)>,
    held_rows: u32,
    held_bytes: usize,
    /// Call names seen, for the sort key.
    names: Vec<Vec<u8>>,
    name_ids: std::collections::HashMap<Vec<u8>, u32>,
    others: Vec<(Table, Part)>,
    /// The files written, once finished.
    pub files: Vec<PathBuf>,
    /// Text values that were not UTF-8 (escaped).
    pub escaped: u64,
}

impl ParquetSink {
    /// A sink writing `tables` of the trace `meta` beneath `out`.
    pub fn new(
        out: &Path,
        meta: &TraceMeta,
        tables: &[Table],
        codec: Codec,
    ) -> Result<ParquetSink> {
        let host = Bytes::from(meta.host.clone().into_bytes());
        let trace = Bytes::from(meta.trace_id.clone().into_bytes());
        let mut s = ParquetSink {
            codec,
            calls: None,
            groups: Vec::new(),
            held_rows: 0,
            held_bytes: 0,
            names: Vec::new(),
            name_ids: Default::default(),
            others: Vec::new(),
            files: Vec::new(),
            escaped: 0,
        };
        for &t in tables {
            let dir = partition_dir(out, t.name(), meta);
            let mut consts = vec![(0, host.clone()), (1, trace.clone())];
            if t == Table::Calls {
                consts.push((c::BACKEND as usize, Bytes::from(meta.backend.clone().into_bytes())));
                s.calls = Some(PqFile::create(&dir, t, t.columns(), consts, codec)?);
            } else {
                let cols = t.columns();
                let buf = RowBuffer::new(&cols);
                s.others
                    .push((t, Part { file: PqFile::create(&dir, t, cols, consts, codec)?, buf }));
            }
        }
        Ok(s)
    }

    fn name_id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.name_ids.get(name.as_bytes()) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.as_bytes().to_vec());
        self.name_ids.insert(name.as_bytes().to_vec(), i);
        i
    }

    /// Write the group holding the most rows.
    fn flush_largest(&mut self) -> Result<()> {
        let Some(g) = (0..self.groups.len()).max_by_key(|&g| self.groups[g].1.rows) else {
            return Ok(());
        };
        self.flush_group(g)
    }

    fn flush_group(&mut self, g: usize) -> Result<()> {
        let buf = &mut self.groups[g].1;
        if buf.rows == 0 {
            return Ok(());
        }
        self.held_rows -= buf.rows;
        self.held_bytes -= buf.bytes;
        self.escaped += buf.escaped;
        buf.escaped = 0;
        // Sort by call (name order), then time_called, then trace order.
        let mut rank = vec![0u32; self.names.len()];
        let mut by_name: Vec<u32> = (0..self.names.len() as u32).collect();
        by_name.sort_by(|&a, &b| self.names[a as usize].cmp(&self.names[b as usize]));
        for (r, &id) in by_name.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        let mut keys: Vec<(u32, i64, u32)> = buf
            .keys
            .iter()
            .enumerate()
            .map(|(i, &(id, t))| (rank[id as usize], t, i as u32))
            .collect();
        let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
        let order: Option<Vec<u32>> = if sorted {
            None
        } else {
            keys.sort_unstable();
            Some(keys.iter().map(|k| k.2).collect())
        };
        self.calls.as_mut().expect("a calls table").write(buf, order.as_deref())
    }
}

impl Sink for ParquetSink {
    fn call(&mut self, row: &Row<'_>) -> Result<()> {
        let class = crate::row::io_class(row.ev);
        let id = self.name_id(&row.ev.name);
        let g = match self.groups.iter().position(|(c, _)| *c == class) {
            Some(g) => g,
            None => {
                self.groups.push((class, RowBuffer::new(&columns::calls().columns)));
                self.groups.len() - 1
            }
        };
        let buf = &mut self.groups[g].1;
        let before = buf.bytes;
        buf.push(&row.cells);
        buf.keys.push((id, row.ev.time_called.unwrap_or(i64::MAX)));
        self.held_bytes += buf.bytes - before;
        self.held_rows += 1;
        if self.held_rows >= CALL_ROWS || self.held_bytes >= HELD_BYTES {
            self.flush_largest()?;
        }
        Ok(())
    }

    fn row(&mut self, table: Table, cells: &[(u16, Cell<'_>)]) -> Result<()> {
        let Some((_, p)) = self.others.iter_mut().find(|(t, _)| *t == table) else {
            return Ok(());
        };
        p.buf.push(cells);
        if p.buf.rows >= OTHER_ROWS || p.buf.bytes >= HELD_BYTES {
            self.escaped += p.buf.escaped;
            p.buf.escaped = 0;
            p.file.write(&mut p.buf, None)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let mut order: Vec<usize> = (0..self.groups.len()).collect();
        order.sort_by_key(|&g| self.groups[g].0);
        for g in order {
            self.flush_group(g)?;
        }
        if let Some(f) = self.calls.take() {
            self.files.push(f.finish()?);
        }
        for (_, mut p) in std::mem::take(&mut self.others) {
            self.escaped += p.buf.escaped;
            p.file.write(&mut p.buf, None)?;
            self.files.push(p.file.finish()?);
        }
        let _ = self.codec;
        Ok(())
    }
}
