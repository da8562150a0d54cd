//! Extent framing and packing: header parsing, checksums, (de)compression, null compaction,
//! byte-order conversion and the pack transforms (spec 2.2, 2.6, 2.9).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use crate::compress::{self, Compression, DecodeError};
use crate::error::{Checksum, Error, Section};
use crate::extent::{rd4, rd8, Extent, ExtentBuilder, MAX_SECTION};
use crate::hash::{bjhash, bjhash_zero_prefixed, extent_adler32};
use crate::types::{ExtentType, FieldType, Relative};
use crate::Result;

/// Bytes of the fixed part of an extent header (before the type name).
pub(crate) const PREFIX_LEN: usize = 28;

/// A parsed extent header.
#[derive(Clone, Debug)]
pub(crate) struct RawHeader {
    pub cfix: usize,
    pub cvar: usize,
    pub nrecords: usize,
    pub varsize: usize,
    pub adler: u32,
    pub bjhash: u32,
    pub fmode: u8,
    pub vmode: u8,
    pub name_len: usize,
    /// The type name; `None` if it is not valid UTF-8.
    pub name: Option<String>,
    pub header_len: usize,
    pub total_len: u64,
}

impl RawHeader {
    pub fn name_lossy(&self) -> String {
        self.name.clone().unwrap_or_else(|| "<non-UTF-8 name>".to_string())
    }

    pub fn to_public(&self, offset: u64) -> crate::ExtentHeader {
        crate::ExtentHeader {
            offset,
            type_name: self.name_lossy(),
            nrecords: self.nrecords as u32,
            compressed_fixed: self.cfix as u32,
            compressed_variable: self.cvar as u32,
            variable_size: self.varsize as u32,
            fixed_mode: self.fmode,
            variable_mode: self.vmode,
            packed_len: self.total_len,
        }
    }
}

#[inline]
pub(crate) fn get_i32(b: &[u8], pos: usize, be: bool) -> i32 {
    let w = rd4(b, pos);
    if be {
        i32::from_be_bytes(w)
    } else {
        i32::from_le_bytes(w)
    }
}

#[inline]
pub(crate) fn get_u32(b: &[u8], pos: usize, be: bool) -> u32 {
    get_i32(b, pos, be) as u32
}

#[inline]
pub(crate) fn put_i32(v: i32, be: bool) -> [u8; 4] {
    if be {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    }
}

fn round4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// Bytes a heap entry of `len` data bytes occupies, length field included.
pub(crate) fn heap_entry_size(len: usize) -> usize {
    4 + len + (12 - len % 8) % 8
}

/// Parses the 28-byte prefix of an extent. Returns the header with `name` unset and the header
/// length (prefix + name + padding). `prefix` must hold at least 28 bytes.
pub(crate) fn parse_prefix(prefix: &[u8], be: bool, off: u64) -> Result<RawHeader> {
    let bad = |check: &'static str, value: i64| Error::BadExtentHeader {
        extent_offset: off,
        check,
        value,
    };
    let cf = get_i32(prefix, 0, be);
    let cv = get_i32(prefix, 4, be);
    let nrec = get_i32(prefix, 8, be);
    let vs = get_i32(prefix, 12, be);
    let max = MAX_SECTION as i32;
    if !(0..max).contains(&cf) {
        return Err(bad("0 <= compressed_fixed_size < 512 MiB", cf.into()));
    }
    if !(0..max).contains(&cv) {
        return Err(bad("0 <= compressed_variable_size < 512 MiB", cv.into()));
    }
    if nrec < 0 {
        return Err(bad("nrecords >= 0", nrec.into()));
    }
    if vs < 4 {
        return Err(bad("variable_size >= 4", vs.into()));
    }
    let name_len = usize::from(prefix[26]);
    if name_len == 0 {
        return Err(bad("type name length > 0", 0));
    }
    let header_len = round4(PREFIX_LEN + name_len);
    let total_len = (header_len + round4(cf as usize) + round4(cv as usize)) as u64;
    Ok(RawHeader {
        cfix: cf as usize,
        cvar: cv as usize,
        nrecords: nrec as usize,
        varsize: vs as usize,
        adler: get_u32(prefix, 16, be),
        bjhash: get_u32(prefix, 20, be),
        fmode: prefix[24],
        vmode: prefix[25],
        name_len,
        name: None,
        header_len,
        total_len,
    })
}

/// Parses a full extent header from `bytes` (which must hold at least the header).
pub(crate) fn parse_header(bytes: &[u8], be: bool, off: u64) -> Result<RawHeader> {
    let avail = bytes.len() as u64;
    if bytes.len() < PREFIX_LEN {
        return Err(Error::TruncatedExtent {
            extent_offset: off,
            what: "extent header",
            needed: PREFIX_LEN as u64,
            available: avail,
        });
    }
    let mut h = parse_prefix(bytes, be, off)?;
    let name = bytes.get(PREFIX_LEN..PREFIX_LEN + h.name_len).ok_or(Error::TruncatedExtent {
        extent_offset: off,
        what: "extent type name",
        needed: (PREFIX_LEN + h.name_len) as u64,
        available: avail,
    })?;
    h.name = String::from_utf8(name.to_vec()).ok();
    Ok(h)
}

fn section_error(
    e: DecodeError,
    off: u64,
    section: Section,
    mode: Compression,
    max: usize,
) -> Error {
    match e {
        DecodeError::Codec(detail) => {
            Error::Decompress { extent_offset: off, section, mode, detail }
        }
        DecodeError::TooLong => Error::SectionSize {
            extent_offset: off,
            section,
            expected: max as u64,
            found: max as u64 + 1,
        },
    }
}

fn mode_of(mode_byte: u8, off: u64, section: Section) -> Result<Compression> {
    Compression::from_mode(mode_byte).ok_or(Error::UnknownCompression {
        extent_offset: off,
        section,
        mode: mode_byte,
    })
}

/// Decompresses a section, appending it to `out`.
fn decompress_section(
    data: &[u8],
    mode: Compression,
    max_len: usize,
    off: u64,
    section: Section,
    out: &mut Vec<u8>,
) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    compress::decompress_into(mode, data, max_len, out)
        .map_err(|e| section_error(e, off, section, mode, max_len))
}

/// Which checksums to verify when decoding (both by default). Turning them off is only for
/// fuzzing and recovery tools: every structural check stays on, so decoding still never panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checks {
    /// Verify the adler32 of the stored bytes.
    pub adler32: bool,
    /// Verify the bjhash of the uncompressed sections.
    pub bjhash: bool,
}

impl Default for Checks {
    fn default() -> Self {
        Checks { adler32: true, bjhash: true }
    }
}

/// An extent's bytes as read: borrowed or owned, or a shared slice (of a memory-mapped file,
/// [`crate::DsReader::map_file`]).
pub(crate) enum Stored<'a> {
    Cow(Cow<'a, [u8]>),
    Shared(bytes::Bytes),
}

impl std::ops::Deref for Stored<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Stored::Cow(c) => c,
            Stored::Shared(b) => b,
        }
    }
}

/// The buffer of [`Sections`]: owned, or the shared bytes an extent stored uncompressed was
/// read as, taken without a copy until something must be changed in it
/// ([`std::ops::DerefMut`] makes it owned first).
pub(crate) enum SecBuf {
    Owned(Vec<u8>),
    Shared(bytes::Bytes),
}

impl std::ops::Deref for SecBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SecBuf::Owned(v) => v,
            SecBuf::Shared(b) => b,
        }
    }
}

impl std::ops::DerefMut for SecBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        if let SecBuf::Shared(b) = self {
            *self = SecBuf::Owned(b.to_vec());
        }
        match self {
            SecBuf::Owned(v) => v,
            SecBuf::Shared(_) => unreachable!("made owned above"),
        }
    }
}

impl SecBuf {
    /// As shared bytes; an owned buffer goes back to `pool` when the last slice is dropped.
    fn into_bytes(self, pool: Option<&Arc<crate::pool::BufPool>>) -> bytes::Bytes {
        match (self, pool) {
            (SecBuf::Shared(b), _) => b,
            (SecBuf::Owned(v), Some(p)) => crate::pool::shared(v, p),
            (SecBuf::Owned(v), None) => bytes::Bytes::from(v),
        }
    }
}

/// The uncompressed sections of an extent in file byte order (null compaction undone). For
/// extents stored uncompressed both are the extent's own buffer (no copy); a variable section
/// stored uncompressed beside a compressed fixed one is a slice of the stored bytes (no copy)
/// in `vbuf`.
pub(crate) struct Sections {
    pub header: RawHeader,
    pub ty: Arc<ExtentType>,
    pub buf: SecBuf,
    /// Start of the fixed section in `buf` (its length is `nrecords * record_size`).
    pub fixed_start: usize,
    /// The buffer holding the variable data, when it is not `buf`.
    pub vbuf: Option<SecBuf>,
    /// Position in `vbuf` (or `buf`) of heap offset 4: the stored variable data. The heap's
    /// first 4 bytes are implicit zeros and are not held.
    pub vdata_start: usize,
    /// Length of the stored variable data (`variable_size - 4`).
    pub vdata_len: usize,
}

impl Sections {
    pub fn fixed(&self) -> &[u8] {
        &self.buf[self.fixed_start..self.fixed_start + self.header.nrecords * self.ty.record_size()]
    }

    /// The variable heap from offset 4.
    pub fn vdata(&self) -> &[u8] {
        let b = self.vbuf.as_ref().unwrap_or(&self.buf);
        &b[self.vdata_start..self.vdata_start + self.vdata_len]
    }

    fn vdata_mut(&mut self) -> &mut [u8] {
        let r = self.vdata_start..self.vdata_start + self.vdata_len;
        match &mut self.vbuf {
            Some(v) => &mut v[r],
            None => &mut self.buf[r],
        }
    }
}

/// Checks framing and adler32, decompresses, undoes null compaction and verifies the bjhash.
/// If `to_le` is set and the file is big-endian, heap lengths are converted to little-endian
/// while walking the heap.
pub(crate) fn unpack_sections(
    bytes: Cow<'_, [u8]>,
    be: bool,
    off: u64,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
    to_le: bool,
    checks: Checks,
) -> Result<Sections> {
    let s = unpack_unhashed(Stored::Cow(bytes), be, off, lookup, checks, None)?;
    let h = sections_hash(&s);
    finish_sections(s, h, be, to_le, checks, off)
}

/// The lookup2 hash of an extent's sections before the heap's length fields (spec 2.6.2
/// steps 1-2; [`finish_sections`] adds the rest).
fn sections_hash(s: &Sections) -> u32 {
    bjhash_zero_prefixed(bjhash(1972, s.fixed()), s.vdata())
}

/// [`sections_hash`] of several extents at once ([`crate::hash::bjhash_many`]: lookup2 is one
/// chain of dependent operations per input, so several inputs side by side use the core's
/// idle units; the largest single cost of reading a trace whose calls carry data).
fn sections_hashes(s: &[&Sections]) -> Vec<u32> {
    let fixed: Vec<(u32, &[u8])> = s.iter().map(|s| (1972, s.fixed())).collect();
    let h = crate::hash::bjhash_many(&fixed);
    let var: Vec<(u32, &[u8])> = s.iter().zip(h).map(|(s, h)| (h, s.vdata())).collect();
    crate::hash::bjhash_many_zero_prefixed(&var)
}

/// The stored extent checked (framing, adler32) and its sections decompressed, not yet
/// hashed: [`sections_hash`] and [`finish_sections`] complete it. Buffers come from `pool`
/// when given.
fn unpack_unhashed(
    bytes: Stored<'_>,
    be: bool,
    off: u64,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
    checks: Checks,
    pool: Option<&Arc<crate::pool::BufPool>>,
) -> Result<Sections> {
    let h = parse_header(&bytes, be, off)?;
    if (bytes.len() as u64) < h.total_len {
        return Err(Error::TruncatedExtent {
            extent_offset: off,
            what: "extent",
            needed: h.total_len,
            available: bytes.len() as u64,
        });
    }
    if bytes.len() as u64 != h.total_len {
        return Err(Error::BadExtentHeader {
            extent_offset: off,
            check: "extent length equals header + sections",
            value: bytes.len() as i64,
        });
    }
    let found = extent_adler32(&bytes);
    if checks.adler32 && found != h.adler {
        return Err(Error::BadChecksum {
            extent_offset: off,
            check: Checksum::Adler32,
            expected: h.adler,
            found,
        });
    }
    let name = h
        .name
        .as_deref()
        .ok_or_else(|| Error::UnknownType { extent_offset: off, type_name: h.name_lossy() })?;
    let ty = lookup(name)
        .ok_or_else(|| Error::UnknownType { extent_offset: off, type_name: name.to_string() })?;
    let rs = ty.record_size();
    // DataSeries sizes are int32: the uncompressed fixed section is below 2 GiB. (Decoders
    // grow their output as data arrives, so only data really present is ever allocated.)
    let expected_fixed = h.nrecords.checked_mul(rs).filter(|&n| n <= i32::MAX as usize).ok_or(
        Error::BadExtentHeader {
            extent_offset: off,
            check: "nrecords * record size < 2 GiB",
            value: h.nrecords as i64,
        },
    )?;
    let fmode = mode_of(h.fmode, off, Section::Fixed)?;
    let vmode = mode_of(h.vmode, off, Section::Variable)?;
    let var_expected = h.varsize - 4;
    let size_err = |section, expected: usize, found: usize| Error::SectionSize {
        extent_offset: off,
        section,
        expected: expected as u64,
        found: found as u64,
    };
    let vstart = h.header_len + round4(h.cfix);
    let (buf, fixed_start, vbuf, vdata_start) =
        if fmode == Compression::None && vmode == Compression::None && !ty.null_compact {
            // Stored raw: decode in place.
            if h.cfix != expected_fixed {
                return Err(size_err(Section::Fixed, expected_fixed, h.cfix));
            }
            if h.cvar != var_expected {
                return Err(size_err(Section::Variable, var_expected, h.cvar));
            }
            let buf = match bytes {
                Stored::Cow(c) => SecBuf::Owned(c.into_owned()),
                Stored::Shared(b) => SecBuf::Shared(b),
            };
            (buf, h.header_len, None, vstart)
        } else if vmode == Compression::None {
            // The fixed section compressed, the variable one stored as it is (data that did
            // not compress): the variable data stay where they were read, shared.
            if h.cvar != var_expected {
                return Err(size_err(Section::Variable, var_expected, h.cvar));
            }
            let fixed = unpack_fixed(&bytes, &h, &ty, fmode, expected_fixed, off, pool)?;
            let vbuf = match bytes {
                Stored::Cow(c) => SecBuf::Owned(c.into_owned()),
                Stored::Shared(b) => SecBuf::Shared(b),
            };
            (SecBuf::Owned(fixed), 0, Some(vbuf), vstart)
        } else {
            let vdata = &bytes[vstart..vstart + h.cvar];
            let mut buf = unpack_fixed(&bytes, &h, &ty, fmode, expected_fixed, off, pool)?;
            let vdata_start = buf.len();
            decompress_section(vdata, vmode, var_expected, off, Section::Variable, &mut buf)?;
            if buf.len() - vdata_start != var_expected {
                return Err(size_err(Section::Variable, var_expected, buf.len() - vdata_start));
            }
            (SecBuf::Owned(buf), 0, None, vdata_start)
        };
    Ok(Sections { header: h, ty, buf, fixed_start, vbuf, vdata_start, vdata_len: var_expected })
}

/// The rest of the checks of unpacked sections whose [`sections_hash`] is `hash`: the heap's
/// structure and length fields (hashed too), then the bjhash; big-endian lengths converted
/// with `to_le`.
fn finish_sections(
    mut s: Sections,
    hash: u32,
    be: bool,
    to_le: bool,
    checks: Checks,
    off: u64,
) -> Result<Sections> {
    let mut swaps = Vec::new();
    let swap = to_le && be;
    let (hash, problem) = walk_heap(s.vdata(), be, swap.then_some(&mut swaps), hash, off);
    if swap {
        let vdata = s.vdata_mut();
        for (p, len) in swaps {
            vdata[p..p + 4].copy_from_slice(&len.to_le_bytes());
        }
    }
    if checks.bjhash && hash != s.header.bjhash {
        return Err(Error::BadChecksum {
            extent_offset: off,
            check: Checksum::BjHash,
            expected: s.header.bjhash,
            found: hash,
        });
    }
    if let Some(e) = problem {
        return Err(e);
    }
    Ok(s)
}

/// The fixed section of a stored extent, decompressed, null compaction undone; its size
/// checked.
fn unpack_fixed(
    bytes: &[u8],
    h: &RawHeader,
    ty: &ExtentType,
    fmode: Compression,
    expected_fixed: usize,
    off: u64,
    pool: Option<&Arc<crate::pool::BufPool>>,
) -> Result<Vec<u8>> {
    let fdata = &bytes[h.header_len..h.header_len + h.cfix];
    // Null compaction usually shrinks the fixed section, but its alignment padding
    // (measured from the start of the section) can add up to 11 bytes per record, and
    // with big_to_small ordering values inside the bool bytes are stored twice.
    let max_fixed = if ty.null_compact {
        ty.record_size()
            .checked_add(ty.bool_bytes + 11)
            .and_then(|per| per.checked_mul(h.nrecords))
            .unwrap_or(usize::MAX)
    } else {
        expected_fixed
    };
    // A pooled buffer of the final size: decompressing into a fresh one grew it by doubling,
    // each step a copy and new pages for the kernel to zero.
    let mut buf = match pool {
        Some(p) if !ty.null_compact => p.take_empty(expected_fixed),
        _ => Vec::new(),
    };
    decompress_section(fdata, fmode, max_fixed, off, Section::Fixed, &mut buf)?;
    if ty.null_compact {
        buf = uncompact_nulls(ty, &buf, h.nrecords, off)?;
    } else if buf.len() != expected_fixed {
        return Err(Error::SectionSize {
            extent_offset: off,
            section: Section::Fixed,
            expected: expected_fixed as u64,
            found: buf.len() as u64,
        });
    }
    Ok(buf)
}

/// Walks the heap entries (`vdata` = the heap from offset 4), hashing the raw length fields in
/// batches of 1024 (spec 2.6.2 steps 3-4) and validating the structure. Converts lengths to
/// little-endian if `swap` is set. A structural problem stops the walk; it is returned beside
/// the hash of what was walked so that the caller can report a checksum mismatch first
/// (corruption) and the structural problem only when the checksum matches (a forged file).
/// With `swaps`, each entry's position and length are pushed there (for a big-endian file
/// read into little-endian order: the caller rewrites the length fields).
fn walk_heap(
    vdata: &[u8],
    be: bool,
    mut swaps: Option<&mut Vec<(usize, i32)>>,
    mut h: u32,
    off: u64,
) -> (u32, Option<Error>) {
    let mut batch = [0u8; 4096];
    let mut n = 0usize;
    let mut p = 0usize;
    let mut problem = None;
    while p < vdata.len() {
        let bad =
            |check| Some(Error::BadHeap { extent_offset: off, heap_offset: p as u64 + 4, check });
        let Some(raw) = vdata.get(p..p + 4) else {
            problem = bad("entry length field inside the heap");
            break;
        };
        let raw = [raw[0], raw[1], raw[2], raw[3]];
        batch[n..n + 4].copy_from_slice(&raw);
        n += 4;
        if n == batch.len() {
            h = bjhash(h, &batch);
            n = 0;
        }
        let len = if be { i32::from_be_bytes(raw) } else { i32::from_le_bytes(raw) };
        let Ok(len) = usize::try_from(len) else {
            problem = bad("entry length >= 0");
            break;
        };
        let step = heap_entry_size(len);
        if step > vdata.len() - p {
            problem = bad("entry inside the heap");
            break;
        }
        if let Some(s) = swaps.as_deref_mut() {
            s.push((p, len as i32));
        }
        p += step;
    }
    (bjhash(h, &batch[..n]), problem)
}

/// Minimum bytes one null-compacted record occupies.
fn min_compacted_record(ty: &ExtentType) -> usize {
    let mut n = ty.bool_bytes;
    for l in &ty.layout {
        if l.null.is_none() && l.ftype != FieldType::Bool {
            n += l.width();
        }
    }
    n
}

const COMPACT_SIZES: [usize; 3] = [1, 4, 8];

fn uncompact_nulls(ty: &ExtentType, data: &[u8], nrec: usize, off: u64) -> Result<Vec<u8>> {
    let bad = |check: &'static str| Error::BadNullCompaction { extent_offset: off, check };
    let rs = ty.record_size();
    if rs == 0 {
        return if data.is_empty() {
            Ok(Vec::new())
        } else {
            Err(bad("compacted data is empty for an empty record"))
        };
    }
    let min = min_compacted_record(ty).max(1);
    if nrec > data.len() / min {
        return Err(bad("nrecords fits in the compacted data"));
    }
    let mut out = vec![0u8; nrec * rs];
    let mut ip = 0usize;
    let bb = ty.bool_bytes;
    for rec in out.chunks_exact_mut(rs) {
        let src = data.get(ip..ip + bb).ok_or(bad("record inside the compacted data"))?;
        rec[..bb].copy_from_slice(src);
        ip += bb;
        for (g, &sz) in COMPACT_SIZES.iter().enumerate() {
            let mut first = true;
            for &fi in &ty.compact_groups[g] {
                let l = &ty.layout[fi];
                if let Some((o, m)) = l.null {
                    if rec[o] & m != 0 {
                        continue;
                    }
                }
                if first && sz > 1 {
                    ip = ip.next_multiple_of(sz);
                }
                first = false;
                let src = data.get(ip..ip + sz).ok_or(bad("record inside the compacted data"))?;
                rec[l.offset..l.offset + sz].copy_from_slice(src);
                ip += sz;
            }
        }
    }
    if ip != data.len() {
        return Err(bad("compacted data ends after the last record"));
    }
    Ok(out)
}

fn compact_nulls(ty: &ExtentType, fixed: &[u8], nrec: usize) -> Vec<u8> {
    let rs = ty.record_size();
    let mut out = Vec::with_capacity(fixed.len());
    let bb = ty.bool_bytes;
    for r in 0..nrec {
        let rec = &fixed[r * rs..(r + 1) * rs];
        out.extend_from_slice(&rec[..bb]);
        for (g, &sz) in COMPACT_SIZES.iter().enumerate() {
            let mut first = true;
            for &fi in &ty.compact_groups[g] {
                let l = &ty.layout[fi];
                if let Some((o, m)) = l.null {
                    if rec[o] & m != 0 {
                        continue;
                    }
                }
                if first && sz > 1 {
                    out.resize(out.len().next_multiple_of(sz), 0);
                }
                first = false;
                out.extend_from_slice(&rec[l.offset..l.offset + sz]);
            }
        }
    }
    out
}

/// Reverses the byte order of every multi-byte field of every record.
fn swap_fixed(ty: &ExtentType, fixed: &mut [u8]) {
    let rs = ty.record_size();
    if rs == 0 {
        return;
    }
    for rec in fixed.chunks_exact_mut(rs) {
        for &o in &ty.swap4 {
            rec[o..o + 4].reverse();
        }
        for &o in &ty.swap8 {
            rec[o..o + 8].reverse();
        }
    }
}

#[inline]
fn is_null(rec: &[u8], null: Option<(usize, u8)>) -> bool {
    matches!(null, Some((o, m)) if rec[o] & m != 0)
}

#[inline]
fn get_num(rec: &[u8], o: usize, t: FieldType) -> Num {
    match t {
        FieldType::Int32 => Num::I(i64::from(i32::from_le_bytes(rd4(rec, o)))),
        FieldType::Int64 => Num::I(i64::from_le_bytes(rd8(rec, o))),
        _ => Num::F(f64::from_le_bytes(rd8(rec, o))),
    }
}

#[inline]
fn put_num(rec: &mut [u8], o: usize, t: FieldType, v: Num) {
    match (t, v) {
        (FieldType::Int32, Num::I(x)) => rec[o..o + 4].copy_from_slice(&(x as i32).to_le_bytes()),
        (FieldType::Int64, Num::I(x)) => rec[o..o + 8].copy_from_slice(&x.to_le_bytes()),
        (_, Num::F(x)) => rec[o..o + 8].copy_from_slice(&x.to_le_bytes()),
        (_, Num::I(_)) => {}
    }
}

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

impl Num {
    fn add(self, o: Num, t: FieldType) -> Num {
        match (self, o) {
            (Num::I(a), Num::I(b)) => Num::I(wrap(a.wrapping_add(b), t)),
            (Num::F(a), Num::F(b)) => Num::F(a + b),
            _ => self,
        }
    }
    fn sub(self, o: Num, t: FieldType) -> Num {
        match (self, o) {
            (Num::I(a), Num::I(b)) => Num::I(wrap(a.wrapping_sub(b), t)),
            (Num::F(a), Num::F(b)) => Num::F(a - b),
            _ => self,
        }
    }
}

fn wrap(v: i64, t: FieldType) -> i64 {
    if t == FieldType::Int32 {
        i64::from(v as i32)
    } else {
        v
    }
}

/// Undoes the pack transforms on little-endian records (read order, spec 2.9.5).
fn untransform(ty: &ExtentType, fixed: &mut [u8], nrec: usize) {
    let rs = ty.record_size();
    let compact = ty.null_compact;
    let mut prev: Vec<Num> = ty
        .layout
        .iter()
        .map(|l| if l.ftype == FieldType::Double { Num::F(0.0) } else { Num::I(0) })
        .collect();
    for rec in fixed.chunks_exact_mut(rs).take(nrec) {
        for l in &ty.layout {
            if let Some((s, _)) = l.scale {
                if compact && is_null(rec, l.null) {
                    continue;
                }
                let v = f64::from_le_bytes(rd8(rec, l.offset)) * s;
                rec[l.offset..l.offset + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        for (i, l) in ty.layout.iter().enumerate() {
            if l.relative == Relative::SelfRel {
                if compact && is_null(rec, l.null) {
                    continue;
                }
                let mut v = get_num(rec, l.offset, l.ftype).add(prev[i], l.ftype);
                if let (Num::F(x), Some((s, m))) = (v, l.scale) {
                    v = Num::F((x * m).round() * s);
                }
                put_num(rec, l.offset, l.ftype, v);
                prev[i] = v;
            }
        }
        for l in &ty.layout {
            if let Relative::Other(b) = l.relative {
                if compact && is_null(rec, l.null) {
                    continue;
                }
                let base = get_num(rec, ty.layout[b].offset, l.ftype);
                let v = get_num(rec, l.offset, l.ftype).add(base, l.ftype);
                put_num(rec, l.offset, l.ftype, v);
            }
        }
    }
}

/// Applies the pack transforms to little-endian records (write order, spec 2.9.5).
fn transform(ty: &ExtentType, fixed: &mut [u8], nrec: usize) {
    let rs = ty.record_size();
    let compact = ty.null_compact;
    let mut prev: Vec<Num> = ty
        .layout
        .iter()
        .map(|l| if l.ftype == FieldType::Double { Num::F(0.0) } else { Num::I(0) })
        .collect();
    for rec in fixed.chunks_exact_mut(rs).take(nrec) {
        for l in ty.layout.iter().rev() {
            if let Relative::Other(b) = l.relative {
                if compact && is_null(rec, l.null) {
                    continue;
                }
                let base = get_num(rec, ty.layout[b].offset, l.ftype);
                let v = get_num(rec, l.offset, l.ftype).sub(base, l.ftype);
                put_num(rec, l.offset, l.ftype, v);
            }
        }
        for (i, l) in ty.layout.iter().enumerate() {
            if l.relative == Relative::SelfRel {
                if compact && is_null(rec, l.null) {
                    continue;
                }
                let v = get_num(rec, l.offset, l.ftype);
                put_num(rec, l.offset, l.ftype, v.sub(prev[i], l.ftype));
                prev[i] = v;
            }
        }
        for l in &ty.layout {
            if let Some((_, m)) = l.scale {
                if compact && is_null(rec, l.null) {
                    continue;
                }
                let v = (f64::from_le_bytes(rd8(rec, l.offset)) * m).round();
                rec[l.offset..l.offset + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// Checks every non-null variable32 offset against the heap (`vdata` = heap from offset 4).
fn check_var_offsets(
    ty: &ExtentType,
    fixed: &[u8],
    vdata: &[u8],
    nrec: usize,
    off: u64,
) -> Result<()> {
    if ty.var_fields.is_empty() {
        return Ok(());
    }
    let rs = ty.record_size();
    for (r, rec) in fixed.chunks_exact(rs).take(nrec).enumerate() {
        for &fi in &ty.var_fields {
            let l = &ty.layout[fi];
            if is_null(rec, l.null) {
                continue;
            }
            let o = i32::from_le_bytes(rd4(rec, l.offset));
            if o == 0 {
                continue;
            }
            let bad = |check: &'static str| Error::BadVariable32 {
                extent_offset: off,
                record: r as u64,
                field: ty.fields()[fi].name.clone(),
                heap_offset: o.into(),
                check,
            };
            if o < 4 || (o as usize + 4) % 8 != 0 {
                return Err(bad("offset is at an entry boundary"));
            }
            let p = o as usize - 4;
            let lb = vdata.get(p..p + 4).ok_or_else(|| bad("offset inside the heap"))?;
            let len = i32::from_le_bytes([lb[0], lb[1], lb[2], lb[3]]);
            let ok = usize::try_from(len)
                .ok()
                .and_then(|n| (p + 4).checked_add(n))
                .is_some_and(|end| end <= vdata.len());
            if !ok {
                return Err(bad("value inside the heap"));
            }
        }
    }
    Ok(())
}

/// Fully decodes one on-disk extent (`bytes` = exactly the extent) into an [`Extent`].
pub(crate) fn decode_extent(
    bytes: Cow<'_, [u8]>,
    be: bool,
    off: u64,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
) -> Result<Extent> {
    decode_extent_checked(Stored::Cow(bytes), be, off, lookup, Checks::default(), None)
}

/// [`decode_extent`] with selectable checksum verification.
pub(crate) fn decode_extent_checked(
    bytes: Stored<'_>,
    be: bool,
    off: u64,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
    checks: Checks,
    pool: Option<&Arc<crate::pool::BufPool>>,
) -> Result<Extent> {
    let s = unpack_unhashed(bytes, be, off, lookup, checks, pool)?;
    let h = sections_hash(&s);
    let s = finish_sections(s, h, be, true, checks, off)?;
    build_extent(s, be, off, pool)
}

/// [`decode_extent_checked`] of several extents at once, hashed side by side
/// ([`sections_hashes`]); one result per input, in order.
pub(crate) fn decode_extents_checked(
    inputs: Vec<(u64, Result<Stored<'_>>)>,
    be: bool,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
    checks: Checks,
    pool: Option<&Arc<crate::pool::BufPool>>,
) -> Vec<Result<Extent>> {
    let unpacked: Vec<(u64, Result<Sections>)> = inputs
        .into_iter()
        .map(|(off, b)| (off, b.and_then(|b| unpack_unhashed(b, be, off, lookup, checks, pool))))
        .collect();
    let ok: Vec<&Sections> = unpacked.iter().filter_map(|(_, r)| r.as_ref().ok()).collect();
    let mut hashes = sections_hashes(&ok).into_iter();
    unpacked
        .into_iter()
        .map(|(off, r)| {
            let s = r?;
            let h = hashes.next().expect("one hash per unpacked extent");
            let s = finish_sections(s, h, be, true, checks, off)?;
            build_extent(s, be, off, pool)
        })
        .collect()
}

/// The decoded extent of checked sections: big-endian fields swapped, transforms undone,
/// variable offsets checked.
fn build_extent(
    mut s: Sections,
    be: bool,
    off: u64,
    pool: Option<&Arc<crate::pool::BufPool>>,
) -> Result<Extent> {
    let n = s.header.nrecords;
    let ty = Arc::clone(&s.ty);
    let fixed_len = n * ty.record_size();
    if fixed_len > 0 {
        let fixed = s.fixed_start..s.fixed_start + fixed_len;
        // (Only a big-endian file or transformed fields change the buffer: shared bytes are
        // copied for that, and only for that.)
        if be || ty.has_transforms {
            let fixed = &mut s.buf[fixed.clone()];
            if be {
                swap_fixed(&ty, fixed);
            }
            if ty.has_transforms {
                untransform(&ty, fixed, n);
            }
        }
        check_var_offsets(&ty, &s.buf[fixed], s.vdata(), n, off)?;
    }
    let buf = s.buf.into_bytes(pool);
    let vbuf = s.vbuf.map(|v| v.into_bytes(pool));
    Ok(Extent {
        ty,
        nrecords: n,
        vbuf: vbuf.unwrap_or_else(|| buf.clone()),
        buf,
        fixed_start: s.fixed_start,
        vdata_start: s.vdata_start,
        vdata_len: s.vdata_len,
        offset: Some(off),
    })
}

/// How to encode an extent.
#[derive(Clone, Debug)]
pub struct EncodeOptions<'a> {
    /// Modes tried for the fixed section (in order; the smallest strictly smaller output wins).
    pub fixed_modes: &'a [Compression],
    /// Modes tried for the variable section.
    pub var_modes: &'a [Compression],
    /// Compression level (1-9).
    pub level: u32,
    /// Write big-endian (only for tests that compare with big-endian files).
    pub big_endian: bool,
}

/// Packs a builder into on-disk extent bytes. Returns the bytes and `bjhash ^ adler32` (the
/// value chained into the trailer checksum).
pub(crate) fn encode_extent(b: &ExtentBuilder, o: &EncodeOptions<'_>) -> Result<(Vec<u8>, u32)> {
    let e = encode_owned(b.clone(), o)?;
    let check = e.check;
    Ok((e.into_vec(), check))
}

/// An encoded extent in pieces, so that writing it takes no further copy of its sections:
/// the header (with the type name and its padding), the fixed section, the variable section
/// (from `var_start`), each section followed by zero padding to a multiple of 4.
pub(crate) struct Encoded {
    head: Vec<u8>,
    fixed: Vec<u8>,
    var: Vec<u8>,
    var_start: usize,
    /// `bjhash ^ adler32`: the value chained into the trailer checksum.
    pub check: u32,
    /// BLAKE3 of the on-disk bytes, when computed on an encoder thread for a sealed file.
    pub digest: Option<[u8; 32]>,
}

const ZEROS: [u8; 4] = [0; 4];

impl Encoded {
    fn var(&self) -> &[u8] {
        &self.var[self.var_start..]
    }

    /// The on-disk bytes, in order (some may be empty).
    pub(crate) fn parts(&self) -> [&[u8]; 5] {
        let fl = self.fixed.len();
        let vl = self.var().len();
        [&self.head, &self.fixed, &ZEROS[..round4(fl) - fl], self.var(), &ZEROS[..round4(vl) - vl]]
    }

    /// Size on disk.
    pub(crate) fn len(&self) -> usize {
        self.parts().iter().map(|p| p.len()).sum()
    }

    /// The buffers of the two sections, for reuse once written.
    pub(crate) fn into_buffers(self) -> (Vec<u8>, Vec<u8>) {
        (self.fixed, self.var)
    }

    /// The on-disk bytes in one buffer.
    pub(crate) fn into_vec(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        for p in self.parts() {
            out.extend_from_slice(p);
        }
        out
    }
}

/// Packs a builder into an [`Encoded`] extent, reusing the builder's buffers: with
/// little-endian output and no `pack_unique` field its variable heap is already in on-disk
/// form, so nothing of the (usually bulky) variable data is copied.
pub(crate) fn encode_owned(b: ExtentBuilder, o: &EncodeOptions<'_>) -> Result<Encoded> {
    let p = prepare(b, o)?;
    let h = bjhash(bjhash(1972, &p.fixed), &p.var);
    finish(p, h, o)
}

/// [`encode_owned`] of several builders, hashing their variable sections side by side
/// ([`crate::hash::bjhash_many`]): the lookup2 hash of the data is most of the work of
/// encoding bulky uncompressed extents.
pub(crate) fn encode_many(bs: Vec<ExtentBuilder>, o: &EncodeOptions<'_>) -> Vec<Result<Encoded>> {
    let preps: Vec<Result<Prepared>> = bs.into_iter().map(|b| prepare(b, o)).collect();
    let inputs: Vec<(u32, &[u8])> =
        preps.iter().flatten().map(|p| (bjhash(1972, &p.fixed), &p.var[..])).collect();
    let mut hashes = crate::hash::bjhash_many(&inputs).into_iter();
    preps
        .into_iter()
        .map(|p| {
            let p = p?;
            let h = hashes.next().expect("one hash per prepared extent");
            finish(p, h, o)
        })
        .collect()
}

/// An extent ready to be hashed: fixed records as stored before null compaction, the
/// variable heap with its 4 leading zero bytes.
pub(crate) struct Prepared {
    ty: Arc<ExtentType>,
    n: usize,
    fixed: Vec<u8>,
    var: Vec<u8>,
}

fn prepare(b: ExtentBuilder, o: &EncodeOptions<'_>) -> Result<Prepared> {
    let ExtentBuilder { ty: tya, nrecords: n, mut fixed, vdata, vspans } = b;
    let ty = &*tya;
    let rs = ty.record_size();
    let be = o.big_endian;
    let too_large = |what: &'static str, size: usize| Error::TooLarge {
        what,
        size: size as u64,
        limit: MAX_SECTION as u64 - 1,
    };
    if n > i32::MAX as usize {
        return Err(Error::TooLarge {
            what: "record count",
            size: n as u64,
            limit: i32::MAX as u64,
        });
    }
    if ty.null_compact && rs > 0 {
        for rec in fixed.chunks_exact_mut(rs) {
            for l in &ty.layout {
                if l.ftype != FieldType::Bool && is_null(rec, l.null) {
                    rec[l.offset..l.offset + l.width()].fill(0);
                }
            }
        }
    }
    // Variable heap (spec 2.9.3).
    let nvar = ty.var_fields.len();
    let unique = ty.var_fields.iter().any(|&fi| ty.layout[fi].unique);
    let var = if nvar > 0 && !unique && !be {
        // The builder's heap as it is: each value's offset is its entry's.
        if vdata.len() >= MAX_SECTION {
            return Err(too_large("variable section", vdata.len()));
        }
        for r in 0..n {
            for (k, &fi) in ty.var_fields.iter().enumerate() {
                let (s, len) = vspans[r * nvar + k];
                let voff = if len == 0 { 0 } else { (s - 4) as i32 };
                let p = r * rs + ty.layout[fi].offset;
                fixed[p..p + 4].copy_from_slice(&voff.to_le_bytes());
            }
        }
        if vdata.is_empty() {
            vec![0u8; 4]
        } else {
            vdata
        }
    } else if nvar > 0 {
        // Rebuilt: big-endian lengths, or identical values of pack_unique fields shared.
        let mut var = vec![0u8; 4];
        let mut dedup: HashMap<&[u8], i32> = HashMap::new();
        for r in 0..n {
            for (k, &fi) in ty.var_fields.iter().enumerate() {
                let l = &ty.layout[fi];
                let (s, len) = vspans[r * nvar + k];
                let data = &vdata[s..s + len];
                let voff = if data.is_empty() {
                    0
                } else if let Some(&v) = l.unique.then(|| dedup.get(data)).flatten() {
                    // (Only unique fields are looked up: hashing every data buffer cost the
                    // fs tracer 5% of its time.)
                    v
                } else {
                    let at = var.len();
                    let size = heap_entry_size(len);
                    if at + size >= MAX_SECTION {
                        return Err(too_large("variable section", at + size));
                    }
                    var.extend_from_slice(&put_i32(len as i32, be));
                    var.extend_from_slice(data);
                    var.resize(at + size, 0);
                    if l.unique {
                        dedup.insert(data, at as i32);
                    }
                    at as i32
                };
                let p = r * rs + l.offset;
                fixed[p..p + 4].copy_from_slice(&voff.to_le_bytes());
            }
        }
        var
    } else {
        vec![0u8; 4]
    };
    if ty.has_transforms && rs > 0 {
        transform(ty, &mut fixed, n);
    }
    if be && rs > 0 {
        swap_fixed(ty, &mut fixed);
    }
    Ok(Prepared { ty: tya, n, fixed, var })
}

/// The rest of [`encode_owned`] once `hash` = bjhash(bjhash(1972, fixed), var) is known.
fn finish(p: Prepared, hash: u32, o: &EncodeOptions<'_>) -> Result<Encoded> {
    let Prepared { ty, n, fixed, var } = p;
    let ty = &*ty;
    let rs = ty.record_size();
    let be = o.big_endian;
    let too_large = |what: &'static str, size: usize| Error::TooLarge {
        what,
        size: size as u64,
        limit: MAX_SECTION as u64 - 1,
    };
    let (hash, problem) = walk_heap(&var[4..], be, None, hash, 0);
    if let Some(e) = problem {
        return Err(e);
    }
    let stored_fixed = if ty.null_compact && rs > 0 { compact_nulls(ty, &fixed, n) } else { fixed };
    let (fmode, fdata) = compress::compress_best(&stored_fixed, o.fixed_modes, o.level)?;
    let fdata = match fdata {
        Cow::Owned(v) => Some(v),
        Cow::Borrowed(_) => None,
    };
    let fdata = fdata.unwrap_or(stored_fixed);
    let var_size = var.len();
    let (vmode, vdata) = compress::compress_best(&var[4..], o.var_modes, o.level)?;
    let vdata = match vdata {
        Cow::Owned(v) => Some(v),
        Cow::Borrowed(_) => None,
    };
    let (var, var_start) = match vdata {
        Some(v) => (v, 0),
        None => (var, 4),
    };
    let vlen = var.len() - var_start;
    if fdata.len() >= MAX_SECTION {
        return Err(too_large("compressed fixed section", fdata.len()));
    }
    if vlen >= MAX_SECTION {
        return Err(too_large("compressed variable section", vlen));
    }
    let name = ty.name().as_bytes();
    let header_len = round4(PREFIX_LEN + name.len());
    let mut head = Vec::with_capacity(header_len);
    head.extend_from_slice(&put_i32(fdata.len() as i32, be));
    head.extend_from_slice(&put_i32(vlen as i32, be));
    head.extend_from_slice(&put_i32(n as i32, be));
    head.extend_from_slice(&put_i32(var_size as i32, be));
    head.extend_from_slice(&[0u8; 4]);
    head.extend_from_slice(&put_i32(hash as i32, be));
    head.extend_from_slice(&[fmode.mode(), vmode.mode(), name.len() as u8, 0]);
    head.extend_from_slice(name);
    head.resize(header_len, 0);
    let mut e = Encoded { head, fixed: fdata, var, var_start, check: 0, digest: None };
    let mut a = simd_adler32::Adler32::new();
    for (i, p) in e.parts().iter().enumerate() {
        if i == 0 {
            a.write(&p[..16]);
            a.write(&p[20..]);
        } else {
            a.write(p);
        }
    }
    let adler = a.finish();
    e.head[16..20].copy_from_slice(&put_i32(adler as i32, be));
    e.check = hash ^ adler;
    Ok(e)
}
