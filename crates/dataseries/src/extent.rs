//! In-memory extents: decoded [`Extent`]s (read side) and [`ExtentBuilder`]s (write side).
//!
//! Both keep the fixed records in the type's record layout with little-endian values and the
//! pack transforms undone, so reading a value is a bounds-checked slice read.

use std::sync::Arc;

use crate::error::Error;
use crate::types::{ExtentType, FieldLayout, FieldType};
use crate::Result;

/// One field value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// A null nullable field.
    Null,
    /// `bool`.
    Bool(bool),
    /// `byte`.
    Byte(u8),
    /// `int32`.
    Int32(i32),
    /// `int64`.
    Int64(i64),
    /// `double`.
    Double(f64),
    /// `variable32` and `fixedwidth`.
    Bytes(&'a [u8]),
}

impl Value<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Byte(_) => "byte",
            Value::Int32(_) => "int32",
            Value::Int64(_) => "int64",
            Value::Double(_) => "double",
            Value::Bytes(_) => "bytes",
        }
    }
}

#[inline]
pub(crate) fn rd4(buf: &[u8], pos: usize) -> [u8; 4] {
    let mut w = [0u8; 4];
    w.copy_from_slice(&buf[pos..pos + 4]);
    w
}

#[inline]
pub(crate) fn rd8(buf: &[u8], pos: usize) -> [u8; 8] {
    let mut w = [0u8; 8];
    w.copy_from_slice(&buf[pos..pos + 8]);
    w
}

/// Reads a value out of a record in the in-memory layout. `heap` resolves variable32 offsets.
#[inline]
pub(crate) fn read_value<'a>(
    rec: &'a [u8],
    l: &FieldLayout,
    heap: &dyn Fn(&'a [u8]) -> &'a [u8],
) -> Value<'a> {
    if let Some((o, m)) = l.null {
        if rec[o] & m != 0 {
            return Value::Null;
        }
    }
    let o = l.offset;
    match l.ftype {
        FieldType::Bool => Value::Bool(rec[o] & l.mask != 0),
        FieldType::Byte => Value::Byte(rec[o]),
        FieldType::Int32 => Value::Int32(i32::from_le_bytes(rd4(rec, o))),
        FieldType::Int64 => Value::Int64(i64::from_le_bytes(rd8(rec, o))),
        FieldType::Double => Value::Double(f64::from_le_bytes(rd8(rec, o))),
        FieldType::Variable32 => Value::Bytes(heap(&rec[o..o + 4])),
        FieldType::FixedWidth(n) => Value::Bytes(&rec[o..o + n]),
    }
}

/// The bytes of the heap entry at heap offset `off` (0 = empty); `vdata` is the heap from
/// offset 4. Out-of-range offsets (rejected at decode time) give an empty slice, not a panic.
#[inline]
pub(crate) fn heap_entry(vdata: &[u8], off: usize) -> &[u8] {
    let Some(p) = off.checked_sub(4) else { return &[] };
    let Some(lb) = vdata.get(p..p.saturating_add(4)) else { return &[] };
    let len = i32::from_le_bytes([lb[0], lb[1], lb[2], lb[3]]);
    let Ok(len) = usize::try_from(len) else { return &[] };
    vdata.get(p + 4..(p + 4).saturating_add(len)).unwrap_or(&[])
}

/// One decoded extent: records of one type, native values with the pack transforms undone.
#[derive(Clone, Debug)]
pub struct Extent {
    pub(crate) ty: Arc<ExtentType>,
    pub(crate) nrecords: usize,
    /// Holds the fixed records (`nrecords * record_size` bytes at `fixed_start`, little-endian
    /// values) and the variable32 heap from offset 4 (`vdata_len` bytes at `vdata_start`,
    /// little-endian lengths). For uncompressed extents this is the buffer read from the file.
    /// Shared ([`bytes::Bytes`]): [`Extent::shared_bytes`] hands out slices of it without
    /// copying.
    pub(crate) buf: bytes::Bytes,
    pub(crate) fixed_start: usize,
    /// The buffer holding the variable heap: `buf` itself (a clone of it), or, for a variable
    /// section stored uncompressed beside a compressed fixed one, the bytes it was read as.
    pub(crate) vbuf: bytes::Bytes,
    pub(crate) vdata_start: usize,
    pub(crate) vdata_len: usize,
    pub(crate) offset: Option<u64>,
}

impl Extent {
    /// The extent's type.
    pub fn extent_type(&self) -> &Arc<ExtentType> {
        &self.ty
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.nrecords
    }

    /// Whether the extent has no records.
    pub fn is_empty(&self) -> bool {
        self.nrecords == 0
    }

    /// The file offset the extent was read from.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// Bytes of memory the decoded extent holds (its buffer), for readers that bound what
    /// they keep.
    pub fn memory_bytes(&self) -> usize {
        if self.vbuf.as_ptr() == self.buf.as_ptr() {
            self.buf.len()
        } else {
            self.buf.len() + self.vbuf.len()
        }
    }

    #[inline]
    fn record(&self, record: usize) -> &[u8] {
        assert!(
            record < self.nrecords,
            "record index {record} out of range ({} records)",
            self.nrecords
        );
        let rs = self.ty.record_size();
        let base = self.fixed_start + record * rs;
        &self.buf[base..base + rs]
    }

    /// The fixed records (little-endian values, transforms undone).
    pub(crate) fn fixed(&self) -> &[u8] {
        &self.buf[self.fixed_start..self.fixed_start + self.nrecords * self.ty.record_size()]
    }

    /// The variable heap from offset 4.
    pub(crate) fn vdata(&self) -> &[u8] {
        &self.vbuf[self.vdata_start..self.vdata_start + self.vdata_len]
    }

    /// The value of user field `field` in record `record`. Panics only if either index is out
    /// of range (a caller bug); file content was validated when the extent was decoded.
    #[inline]
    pub fn value(&self, record: usize, field: usize) -> Value<'_> {
        let l = &self.ty.layout[field];
        let rec = self.record(record);
        let heap = self.vdata();
        read_value(rec, l, &|slot: &[u8]| {
            heap_entry(heap, i32::from_le_bytes(rd4(slot, 0)).max(0) as usize)
        })
    }

    /// An integer or bool field widened to i64 (`None` if null or of another type): what
    /// [`Extent::value`] gives for those types, without building a [`Value`] (the fields a
    /// trace reader reads for every record).
    #[inline]
    pub fn int(&self, record: usize, field: usize) -> Option<i64> {
        let l = &self.ty.layout[field];
        let rec = self.record(record);
        if let Some((o, m)) = l.null {
            if rec[o] & m != 0 {
                return None;
            }
        }
        let o = l.offset;
        match l.ftype {
            FieldType::Bool => Some(i64::from(rec[o] & l.mask != 0)),
            FieldType::Byte => Some(i64::from(rec[o])),
            FieldType::Int32 => Some(i64::from(i32::from_le_bytes(rd4(rec, o)))),
            FieldType::Int64 => Some(i64::from_le_bytes(rd8(rec, o))),
            FieldType::Double | FieldType::Variable32 | FieldType::FixedWidth(_) => None,
        }
    }

    /// Whether the field is null in the record.
    pub fn is_null(&self, r: usize, f: usize) -> bool {
        let l = &self.ty.layout[f];
        match l.null {
            Some((o, m)) => self.record(r)[o] & m != 0,
            None => false,
        }
    }

    /// A bool field (`None` if null or not a bool).
    pub fn bool(&self, r: usize, f: usize) -> Option<bool> {
        match self.value(r, f) {
            Value::Bool(v) => Some(v),
            _ => None,
        }
    }

    /// A byte field (`None` if null or not a byte).
    pub fn byte(&self, r: usize, f: usize) -> Option<u8> {
        match self.value(r, f) {
            Value::Byte(v) => Some(v),
            _ => None,
        }
    }

    /// An int32 field (`None` if null or not an int32).
    pub fn i32(&self, r: usize, f: usize) -> Option<i32> {
        match self.value(r, f) {
            Value::Int32(v) => Some(v),
            _ => None,
        }
    }

    /// An int64 field (`None` if null or not an int64).
    pub fn i64(&self, r: usize, f: usize) -> Option<i64> {
        match self.value(r, f) {
            Value::Int64(v) => Some(v),
            _ => None,
        }
    }

    /// A double field (`None` if null or not a double).
    pub fn f64(&self, r: usize, f: usize) -> Option<f64> {
        match self.value(r, f) {
            Value::Double(v) => Some(v),
            _ => None,
        }
    }

    /// A variable32 or fixedwidth field (`None` if null or another type).
    pub fn bytes(&self, r: usize, f: usize) -> Option<&[u8]> {
        match self.value(r, f) {
            Value::Bytes(v) => Some(v),
            _ => None,
        }
    }

    /// A byte field as a slice of the extent's buffer that shares it (no copy; `None` if null
    /// or not a byte field). The slice keeps the whole extent's buffer alive: for values that
    /// live about as long as the extent, not for keeping a few bytes of each of many extents.
    pub fn shared_bytes(&self, r: usize, f: usize) -> Option<bytes::Bytes> {
        self.bytes(r, f).map(|b| {
            // Variable data live in `vbuf`, fixed-width ones in the record (`buf`).
            let within = |w: &bytes::Bytes| {
                let (lo, hi) = (w.as_ptr() as usize, w.as_ptr() as usize + w.len());
                (b.as_ptr() as usize) >= lo && (b.as_ptr() as usize + b.len()) <= hi
            };
            if !b.is_empty() && within(&self.vbuf) {
                self.vbuf.slice_ref(b)
            } else if within(&self.buf) {
                self.buf.slice_ref(b)
            } else {
                bytes::Bytes::copy_from_slice(b)
            }
        })
    }
}

/// Collects records of one type for writing.
#[derive(Clone, Debug)]
pub struct ExtentBuilder {
    pub(crate) ty: Arc<ExtentType>,
    pub(crate) nrecords: usize,
    /// Logical values in the record layout (little-endian); variable32 slots unused.
    pub(crate) fixed: Vec<u8>,
    /// The variable32 heap as stored on disk (spec 2.9.3; little-endian lengths): 4 zero
    /// bytes, then one entry per non-empty value set (a value set twice leaves an entry no
    /// record refers to, which is valid). Empty until the first non-empty value.
    pub(crate) vdata: Vec<u8>,
    /// `(start, len)` of each value's bytes in `vdata` per record and variable32 field;
    /// `(0, 0)` for empty and null values.
    pub(crate) vspans: Vec<(usize, usize)>,
}

/// Appends `v` to `heap` as an on-disk entry (creating the heap's 4 leading zero bytes first)
/// and returns the span of its bytes; an empty value takes no entry: `(0, 0)`.
fn push_heap(heap: &mut Vec<u8>, v: &[u8]) -> (usize, usize) {
    if v.is_empty() {
        return (0, 0);
    }
    if heap.is_empty() {
        heap.extend_from_slice(&[0; 4]);
    }
    let at = heap.len();
    heap.extend_from_slice(&(v.len() as i32).to_le_bytes());
    heap.extend_from_slice(v);
    heap.resize(at + crate::codec::heap_entry_size(v.len()), 0);
    (at + 4, v.len())
}

/// Largest variable32 value accepted (the heap must stay below the 512 MiB section limit).
pub(crate) const MAX_SECTION: usize = 512 * 1024 * 1024;

impl ExtentBuilder {
    /// An empty builder for `ty`.
    pub fn new(ty: Arc<ExtentType>) -> Self {
        ExtentBuilder { ty, nrecords: 0, fixed: Vec::new(), vdata: Vec::new(), vspans: Vec::new() }
    }

    /// An empty builder for `ty` that fills the given buffers (their contents are dropped,
    /// their capacity kept): see [`crate::DsWriter::new_builder`].
    pub fn with_buffers(ty: Arc<ExtentType>, mut fixed: Vec<u8>, mut vdata: Vec<u8>) -> Self {
        fixed.clear();
        vdata.clear();
        ExtentBuilder { ty, nrecords: 0, fixed, vdata, vspans: Vec::new() }
    }

    /// The type being built.
    pub fn extent_type(&self) -> &Arc<ExtentType> {
        &self.ty
    }

    /// Appends a record: non-nullable fields zero/empty, nullable fields null.
    pub fn start_record(&mut self) {
        let rs = self.ty.record_size();
        let base = self.fixed.len();
        self.fixed.resize(base + rs, 0);
        for l in &self.ty.layout {
            if let Some((o, m)) = l.null {
                self.fixed[base + o] |= m;
            }
        }
        let nvar = self.ty.var_fields.len();
        self.vspans.resize(self.vspans.len() + nvar, (0, 0));
        self.nrecords += 1;
    }

    /// Sets user field `field` of the last record. The value must match the field's type
    /// (`Value::Bytes` for variable32 and fixedwidth); `Value::Null` only for nullable fields.
    pub fn set(&mut self, field: usize, v: Value<'_>) -> Result<()> {
        // Borrows of the fields apart (no clone of the type's Arc per value: this runs for
        // every field of every record a recorder writes).
        let ExtentBuilder { ty, nrecords, fixed, vdata, vspans } = self;
        let ty: &ExtentType = ty;
        let count = ty.fields().len();
        let l = ty.layout.get(field).ok_or(Error::NoSuchField { index: field, count })?;
        if *nrecords == 0 {
            return Err(Error::NoRecord);
        }
        let base = (*nrecords - 1) * ty.record_size();
        let o = base + l.offset;
        let var_slot = || -> usize {
            let k = ty.var_fields.iter().position(|&i| i == field).unwrap_or(0);
            (*nrecords - 1) * ty.var_fields.len() + k
        };
        match (l.ftype, v) {
            (_, Value::Null) => {
                let Some((no, nm)) = l.null else {
                    return Err(Error::NotNullable { field: ty.fields()[field].name.clone() });
                };
                fixed[base + no] |= nm;
                match l.ftype {
                    FieldType::Bool => fixed[o] &= !l.mask,
                    FieldType::Variable32 => vspans[var_slot()] = (0, 0),
                    _ => fixed[o..o + l.width()].fill(0),
                }
                return Ok(());
            }
            (FieldType::Bool, Value::Bool(b)) => {
                if b {
                    fixed[o] |= l.mask;
                } else {
                    fixed[o] &= !l.mask;
                }
            }
            (FieldType::Byte, Value::Byte(b)) => fixed[o] = b,
            (FieldType::Int32, Value::Int32(x)) => {
                fixed[o..o + 4].copy_from_slice(&x.to_le_bytes())
            }
            (FieldType::Int64, Value::Int64(x)) => {
                fixed[o..o + 8].copy_from_slice(&x.to_le_bytes())
            }
            (FieldType::Double, Value::Double(x)) => {
                fixed[o..o + 8].copy_from_slice(&x.to_le_bytes())
            }
            (FieldType::FixedWidth(n), Value::Bytes(b)) => {
                if b.len() != n {
                    return Err(Error::WrongWidth {
                        field: ty.fields()[field].name.clone(),
                        expected: n,
                        found: b.len(),
                    });
                }
                fixed[o..o + n].copy_from_slice(b);
            }
            (FieldType::Variable32, Value::Bytes(b)) => {
                if b.len() > MAX_SECTION {
                    return Err(Error::TooLarge {
                        what: "variable32 value",
                        size: b.len() as u64,
                        limit: MAX_SECTION as u64,
                    });
                }
                let s = var_slot();
                vspans[s] = push_heap(vdata, b);
            }
            (_, v) => {
                return Err(Error::WrongValueType {
                    field: ty.fields()[field].name.clone(),
                    expected: ty.fields()[field].ftype,
                    got: v.kind(),
                })
            }
        }
        if let Some((no, nm)) = l.null {
            fixed[base + no] &= !nm;
        }
        Ok(())
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.nrecords
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.nrecords == 0
    }

    /// Fixed plus variable bytes so far (for flush decisions).
    pub fn approx_bytes(&self) -> usize {
        self.fixed.len() + self.vdata.len()
    }

    /// A builder holding copies of all records of `e` (for re-encoding and filters).
    pub fn from_extent(e: &Extent) -> Self {
        let mut b = ExtentBuilder::new(Arc::clone(&e.ty));
        b.nrecords = e.nrecords;
        b.fixed = e.fixed().to_vec();
        let nvar = e.ty.var_fields.len();
        b.vspans.reserve(e.nrecords * nvar);
        for r in 0..e.nrecords {
            for &fi in &e.ty.var_fields {
                match e.value(r, fi) {
                    Value::Bytes(v) if !v.is_empty() => {
                        let span = push_heap(&mut b.vdata, v);
                        b.vspans.push(span);
                    }
                    _ => b.vspans.push((0, 0)),
                }
            }
        }
        b
    }

    /// Appends record `r` of `e` (same type required; checked by name and XML).
    pub fn push_record_from(&mut self, e: &Extent, r: usize) -> Result<()> {
        if *e.ty != *self.ty {
            return Err(Error::TypeNotDeclared { type_name: e.ty.name().to_string() });
        }
        self.fixed.extend_from_slice(e.record(r));
        for &fi in &e.ty.var_fields {
            match e.value(r, fi) {
                Value::Bytes(v) if !v.is_empty() => {
                    let span = push_heap(&mut self.vdata, v);
                    self.vspans.push(span);
                }
                _ => self.vspans.push((0, 0)),
            }
        }
        self.nrecords += 1;
        Ok(())
    }

    /// The value of a field in a record added so far.
    pub fn value(&self, record: usize, field: usize) -> Value<'_> {
        assert!(record < self.nrecords, "record index {record} out of range");
        let l = &self.ty.layout[field];
        let rs = self.ty.record_size();
        let rec = &self.fixed[record * rs..(record + 1) * rs];
        if l.ftype == FieldType::Variable32 {
            if let Some((o, m)) = l.null {
                if rec[o] & m != 0 {
                    return Value::Null;
                }
            }
            let k = self.ty.var_fields.iter().position(|&i| i == field).unwrap_or(0);
            let (s, n) = self.vspans[record * self.ty.var_fields.len() + k];
            return Value::Bytes(&self.vdata[s..s + n]);
        }
        read_value(rec, l, &|_| &[])
    }

    /// Removes all records, keeping the allocations.
    pub fn clear(&mut self) {
        self.nrecords = 0;
        self.fixed.clear();
        self.vdata.clear();
        self.vspans.clear();
    }
}
