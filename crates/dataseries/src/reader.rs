//! Reading DSv1 files: header and trailer checks, the type library, header scans, random access
//! and the streaming extent iterator with background decoding (bounded read-ahead).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{bounded, Receiver, Sender};

use crate::codec::{self, parse_prefix, RawHeader, PREFIX_LEN};
use crate::error::Error;
use crate::extent::Extent;
use crate::hash::bjhash;
use crate::types::{ExtentType, INDEX_NAME, XMLTYPE_NAME};
use crate::{Result, Value};

/// Length of the file header.
pub(crate) const FILE_HEADER_LEN: u64 = 40;
/// Length of the trailer.
pub(crate) const TRAILER_LEN: u64 = 28;

/// One extent's header, read without decompressing anything.
#[derive(Clone, Debug)]
pub struct ExtentHeader {
    /// File offset of the extent.
    pub offset: u64,
    /// Type name.
    pub type_name: String,
    /// Number of records.
    pub nrecords: u32,
    /// Stored size of the fixed section.
    pub compressed_fixed: u32,
    /// Stored size of the variable section.
    pub compressed_variable: u32,
    /// Uncompressed size of the variable section, including its 4 leading zero bytes.
    pub variable_size: u32,
    /// Compression mode byte of the fixed section.
    pub fixed_mode: u8,
    /// Compression mode byte of the variable section.
    pub variable_mode: u8,
    /// On-disk length of the whole extent.
    pub packed_len: u64,
}

/// State of the file's trailer, determined when the file is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrailerStatus {
    /// The trailer passed every check.
    Valid {
        /// File offset of the index extent.
        index_offset: u64,
    },
    /// The file does not end with a trailer marker: an unfinished file (writer killed) or a
    /// file whose tail was overwritten. Sequential reading tells which.
    Missing,
    /// The trailer marker is there but a check failed (the message says which).
    Corrupt(String),
}

/// How a file falls short of whole, for the note every reader gives ([`DsReader::incomplete`]).
/// `Display` is one phrase that follows the file's name: "t.ds is unfinished: ...".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incomplete {
    /// Encrypted and without its last chunk: the whole chunks it has.
    pub chunks: Option<u64>,
    /// Read with a seal key and cut before its final seal, index or trailer: why, and the
    /// bytes after the verified part, which are left out.
    pub seal_cut: Option<(String, u64)>,
    /// It ends inside an extent (the extents before it are whole).
    pub cut_tail: Option<crate::CutTail>,
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("is unfinished")?;
        let mut sep = ": ";
        if let Some(n) = self.chunks {
            let s = if n == 1 { "" } else { "s" };
            write!(
                f,
                "{sep}it is encrypted and lacks its last chunk (it ends after {n} whole chunk{s})"
            )?;
            sep = "; ";
        }
        match &self.seal_cut {
            Some((_, left)) if *left > 0 => {
                write!(
                    f,
                    "{sep}its seal verifies what comes before its last seal, and the {left} bytes \
                     after it, which no seal covers, are left out"
                )?;
            }
            Some((why, _)) => write!(f, "{sep}{why}; everything in it is verified")?,
            None => match &self.cut_tail {
                Some(c) => write!(f, "{sep}it {c}")?,
                None => write!(
                    f,
                    "{sep}it has no trailer (its writer was stopped, or it was cut after an extent)"
                )?,
            },
        }
        Ok(())
    }
}

/// The types known to a reader: the two built-ins plus the file's XmlType records.
#[derive(Debug)]
pub(crate) struct TypeLibrary {
    user: Vec<Arc<ExtentType>>,
    by_name: HashMap<String, Arc<ExtentType>>,
}

impl TypeLibrary {
    pub(crate) fn builtin() -> Self {
        let mut by_name = HashMap::new();
        by_name.insert(XMLTYPE_NAME.to_string(), Arc::new(ExtentType::xmltype()));
        by_name.insert(INDEX_NAME.to_string(), Arc::new(ExtentType::index_type()));
        TypeLibrary { user: Vec::new(), by_name }
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<ExtentType>> {
        self.by_name.get(name).cloned()
    }

    fn register(&mut self, t: Arc<ExtentType>) -> Result<()> {
        if t.name() == XMLTYPE_NAME || t.name() == INDEX_NAME {
            // The built-in definitions always win (C++ resolves these names without a lookup).
            return Ok(());
        }
        match self.by_name.get(t.name()) {
            Some(old) if old.xml() == t.xml() => Ok(()),
            Some(_) => Err(Error::TypeConflict { name: t.name().to_string() }),
            None => {
                self.by_name.insert(t.name().to_string(), Arc::clone(&t));
                self.user.push(t);
                Ok(())
            }
        }
    }
}

/// Types parsed from their XML text, shared by every reader of the process: one program's
/// traces (and every open of one trace) declare the same types, and parsing a trace's ~175
/// descriptions was most of the cost of opening it. At most [`PARSED_MAX`] entries (the map is
/// emptied when full), so hostile files cannot grow it.
static PARSED: std::sync::Mutex<Option<HashMap<String, Arc<ExtentType>>>> =
    std::sync::Mutex::new(None);
const PARSED_MAX: usize = 2048;

fn parse_type(xml: &str) -> Result<Arc<ExtentType>> {
    let lock = || PARSED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(t) = lock().as_ref().and_then(|m| m.get(xml)) {
        return Ok(Arc::clone(t));
    }
    let t = Arc::new(ExtentType::from_xml(xml)?);
    let mut m = lock();
    let m = m.get_or_insert_with(HashMap::new);
    if m.len() >= PARSED_MAX {
        m.clear();
    }
    m.insert(xml.to_string(), Arc::clone(&t));
    Ok(t)
}

/// What a reader reads from: a DataSeries file, or an encrypted one ([`crate::crypt`]) read
/// through its decryptor.
#[derive(Debug)]
pub(crate) enum Input {
    Plain(File),
    Encrypted(crate::crypt::Decryptor),
}

impl Input {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        match self {
            Input::Plain(f) => read_at(f, buf, offset),
            Input::Encrypted(d) => d.read_at(buf, offset),
        }
    }
}

/// Positioned read of exactly `buf.len()` bytes.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0usize;
        while done < buf.len() {
            let n = file.seek_read(&mut buf[done..], offset + done as u64)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += n;
        }
        Ok(())
    }
}

fn read_vec(file: &Input, offset: u64, len: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    file.read_at(&mut buf, offset)
        .map_err(|e| Error::io(format!("reading {len} bytes at offset {offset}"), e))?;
    Ok(buf)
}

/// The error for a file that does not begin with `DSv1` (`head`: its first bytes, up to 40).
fn not_dataseries(head: &[u8]) -> Error {
    let shown = &head[..head.len().min(16)];
    let mut begins = String::from("\"");
    crate::text::escape_bytes(&mut begins, shown);
    begins.push('"');
    if head.len() > shown.len() {
        begins.push_str("...");
    }
    // (A multi-byte character cut at the end of the bytes read is still text.)
    let valid = match std::str::from_utf8(head) {
        Ok(t) => Some(t),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok(),
        Err(_) => None,
    };
    let text = valid.is_some_and(|t| !t.chars().any(|c| c.is_control() && !c.is_whitespace()));
    if head.is_empty() {
        return Error::NotDataSeries { detail: "the file is empty".to_string() };
    }
    let kind = if text { "a text file" } else { "a binary file" };
    Error::NotDataSeries { detail: format!("it begins with {begins} ({kind}), not \"DSv1\"") }
}

/// Checks the 40-byte file header; returns whether the file is big-endian.
pub(crate) fn check_file_header(h: &[u8]) -> Result<bool> {
    let bad = |check| Error::BadFileHeader { check };
    if !h.starts_with(b"DSv1") {
        return Err(not_dataseries(h));
    }
    if h.len() < FILE_HEADER_LEN as usize {
        return Err(bad("file length >= 40"));
    }
    let be = match codec::get_i32(h, 4, false) {
        0x1234_5678 => false,
        0x7856_3412 => true,
        _ => return Err(bad("int32 0x12345678")),
    };
    let w8 = |pos: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&h[pos..pos + 8]);
        if be {
            u64::from_be_bytes(w)
        } else {
            u64::from_le_bytes(w)
        }
    };
    if w8(8) != 0x1234_5678_9ABC_DEF0 {
        return Err(bad("int64 0x123456789ABCDEF0"));
    }
    let pi = f64::from_bits(w8(16));
    if pi.is_nan() || (pi - std::f64::consts::PI).abs() > 1e-18 {
        return Err(bad("double pi"));
    }
    if f64::from_bits(w8(24)) != f64::INFINITY {
        return Err(bad("double +infinity"));
    }
    if !f64::from_bits(w8(32)).is_nan() {
        return Err(bad("double NaN"));
    }
    Ok(be)
}

/// Checks a trailer; on failure returns the check that failed.
fn check_trailer(t: &[u8], be: bool, file_len: u64) -> std::result::Result<u64, &'static str> {
    if t[0..4] != [0xff; 4] {
        return Err("marker");
    }
    let packed = codec::get_i32(t, 4, be);
    if packed != !codec::get_i32(t, 8, be) {
        return Err("packed size complement");
    }
    if bjhash(1776, &t[..24]) != codec::get_u32(t, 24, be) {
        return Err("trailer hash");
    }
    let mut w = [0u8; 8];
    w.copy_from_slice(&t[16..24]);
    let index_offset = if be { i64::from_be_bytes(w) } else { i64::from_le_bytes(w) };
    let expected = i64::try_from(file_len)
        .ok()
        .and_then(|l| l.checked_sub(TRAILER_LEN as i64 + i64::from(packed)));
    if packed < 0 || expected != Some(index_offset) || index_offset < FILE_HEADER_LEN as i64 {
        return Err("index offset");
    }
    Ok(index_offset as u64)
}

/// A DSv1 file opened for reading. Owns the file and reads with positioned reads, so it can be
/// shared between threads and iterated several times at once; clones share the open file.
#[derive(Clone, Debug)]
pub struct DsReader {
    file: Arc<Input>,
    len: u64,
    be: bool,
    lib: Arc<TypeLibrary>,
    trailer: TrailerStatus,
    /// Where the trailer check failed: (offset, check).
    trailer_err: Option<(u64, &'static str)>,
    /// First offset after the XmlType extent.
    data_start: u64,
    /// Buffers [`DsReader::read_extent_at`] reads into, used again (shared by clones).
    pool: Arc<crate::pool::BufPool>,
    /// The whole file memory-mapped ([`DsReader::map_file`]), if it is.
    map: Option<Arc<memmap2::Mmap>>,
    /// Opened with a seal key: every extent the check at open verified. Headers come from
    /// here, and every extent read is checked against its digest.
    sealed: Option<Arc<SealTable>>,
    /// What the seal check at open established.
    seal: Option<crate::seal::SealStatus>,
}

/// The extents a seal check verified, in file order, for the reads that follow.
#[derive(Debug)]
pub(crate) struct SealTable {
    extents: Vec<crate::seal::SealedExtent>,
}

impl SealTable {
    fn find(&self, offset: u64) -> Option<(usize, &crate::seal::SealedExtent)> {
        let i = self.extents.binary_search_by_key(&offset, |e| e.offset).ok()?;
        Some((i, &self.extents[i]))
    }

    fn failure(seq: Option<usize>, offset: u64, why: &str) -> Error {
        Error::Seal(crate::seal::SealFailure {
            seq: seq.map(|s| s as u64),
            offset: Some(offset),
            why: why.to_string(),
            kind: crate::seal::FailureKind::Tampered,
        })
    }

    /// The verified header of the extent at `offset`.
    fn header(&self, offset: u64) -> Result<RawHeader> {
        match self.find(offset) {
            Some((_, e)) => Ok(e.header.clone()),
            None => Err(Self::failure(None, offset, "no extent the seal verified starts here")),
        }
    }

    /// Checks that `bytes`, read at `offset`, are the extent the seal verified there.
    fn check(&self, offset: u64, bytes: &[u8]) -> Result<()> {
        let Some((i, e)) = self.find(offset) else {
            return Err(Self::failure(None, offset, "no extent the seal verified starts here"));
        };
        if bytes.len() as u64 != e.header.total_len || *blake3::hash(bytes).as_bytes() != e.digest {
            return Err(Self::failure(
                Some(i),
                offset,
                "its bytes are not those its seal verified when the file was opened: the file \
                 changed while being read",
            ));
        }
        Ok(())
    }
}

/// One extent's bytes in a memory map, as the owner of shared bytes. When the last slice is
/// dropped, the pages wholly inside the extent are unmapped from the process
/// (`MADV_DONTNEED`): resident memory then holds the extents still in use, not every page
/// read so far (mapped file pages count in RSS). Nothing is lost: the map is read-only and
/// shared, so a later read of those pages faults the file's unchanged bytes back in.
struct MappedExtent {
    map: Arc<memmap2::Mmap>,
    at: usize,
    len: usize,
}

impl AsRef<[u8]> for MappedExtent {
    fn as_ref(&self) -> &[u8] {
        &self.map[self.at..self.at + self.len]
    }
}

impl Drop for MappedExtent {
    fn drop(&mut self) {
        const PAGE: usize = 4096;
        let from = self.at.div_ceil(PAGE) * PAGE;
        let to = (self.at + self.len) / PAGE * PAGE;
        if to > from {
            // SAFETY: MADV_DONTNEED on a read-only shared file mapping only unmaps the pages
            // from this process; a later read faults in the file's same bytes, so any slice
            // still pointing there stays valid. (A failure leaves them mapped: harmless.)
            let _ = unsafe {
                self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
            };
        }
    }
}

/// Options for [`DsReader::extents_with`].
#[derive(Clone, Debug)]
pub struct StreamOptions {
    /// Background decoder threads; 0 decodes on the iterating thread.
    pub threads: usize,
    /// Extents read ahead of the consumer (bounds memory to about this many extents).
    pub readahead: usize,
    /// Only extents of this type.
    pub type_filter: Option<String>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        StreamOptions { threads: cores.clamp(1, 4), readahead: 4, type_filter: None }
    }
}

impl DsReader {
    /// Opens a file: checks the header, reads, decodes and registers the XmlType extent, and
    /// determines the trailer status (without failing on a bad trailer). When the process
    /// set a seal key ([`crate::seal::set_check_key`]), checks the file's seal as
    /// [`DsReader::open_with`] does.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, crate::seal::check_key())
    }

    /// [`DsReader::open`], checking the file's seal with `seal` (none: not checked).
    ///
    /// With a key, the whole file is read once at open: every extent's MAC in file order,
    /// the final seal, and the header, index and trailer, which must be exactly those a
    /// sealing writer writes ([`crate::seal`]). A failure is [`Error::Seal`], naming the first
    /// extent that does not verify. Afterwards headers come from what was verified and every
    /// extent read is checked against the digest verified at open (48 bytes and a header
    /// per extent are kept). A file cut before its final seal opens as the part its seals
    /// verify, unfinished ([`DsReader::incomplete`] says what was left out); one cut before
    /// its first seal does not open. A file that declares no seal is [`Error::Seal`] of kind
    /// [`crate::seal::FailureKind::NotSealed`] — unless it is encrypted: its chunks are then
    /// authenticated by the encryption (and its last chunk proves where it ends).
    pub fn open_with(path: impl AsRef<Path>, seal: Option<&crate::seal::SealKey>) -> Result<Self> {
        let path = path.as_ref();
        let file =
            File::open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        let len =
            file.metadata().map_err(|e| Error::io(format!("stat {}", path.display()), e))?.len();
        let mut magic = [0u8; 8];
        let file =
            if len >= 8 && read_at(&file, &mut magic, 0).is_ok() && &magic == crate::crypt::MAGIC {
                Input::Encrypted(crate::crypt::Decryptor::open(file, &path.display().to_string())?)
            } else {
                Input::Plain(file)
            };
        let len = match &file {
            Input::Plain(_) => len,
            Input::Encrypted(d) => d.len(),
        };
        let header = read_vec(&file, 0, len.min(FILE_HEADER_LEN) as usize)?;
        let be = check_file_header(&header)?;

        let (trailer, trailer_err) = if len >= FILE_HEADER_LEN + TRAILER_LEN {
            let off = len - TRAILER_LEN;
            let t = read_vec(&file, off, TRAILER_LEN as usize)?;
            match check_trailer(&t, be, len) {
                Ok(index_offset) => (TrailerStatus::Valid { index_offset }, None),
                Err("marker") => (TrailerStatus::Missing, Some((off, "marker"))),
                Err(check) => {
                    let msg = Error::BadTrailer { trailer_offset: off, check }.to_string();
                    (TrailerStatus::Corrupt(msg), Some((off, check)))
                }
            }
        } else {
            (TrailerStatus::Missing, Some((len, "marker")))
        };

        let mut r = DsReader {
            file: Arc::new(file),
            len,
            be,
            lib: Arc::new(TypeLibrary::builtin()),
            trailer,
            trailer_err,
            data_start: FILE_HEADER_LEN,
            pool: Arc::default(),
            map: None,
            sealed: None,
            seal: None,
        };
        let (h, bytes) = r.read_raw_extent(FILE_HEADER_LEN)?;
        let xml_digest = seal.map(|_| *blake3::hash(&bytes).as_bytes());
        if h.name.as_deref() != Some(XMLTYPE_NAME) {
            return Err(Error::BadTypeLibrary {
                extent_offset: FILE_HEADER_LEN,
                check: "the first extent is the XmlType extent",
            });
        }
        let lib0 = TypeLibrary::builtin();
        let ext = codec::decode_extent(Cow::Owned(bytes), be, FILE_HEADER_LEN, &|n| lib0.get(n))?;
        let mut lib = TypeLibrary::builtin();
        for i in 0..ext.len() {
            let Value::Bytes(x) = ext.value(i, 0) else { continue };
            let xml = std::str::from_utf8(x).map_err(|e| Error::XmlParse {
                detail: format!("type description is not UTF-8: {e}"),
            })?;
            lib.register(parse_type(xml)?)?;
        }
        r.lib = Arc::new(lib);
        r.data_start = FILE_HEADER_LEN + h.total_len;
        if matches!(r.trailer, TrailerStatus::Corrupt(_)) && !r.extents_end_at_trailer() {
            // The last 28 bytes begin with the trailer's marker, but the extents do not end
            // where a trailer would start: those bytes are the data of a file without a
            // trailer (0xffffffff is common in records: any field holding -1), so the file is
            // unfinished, not one with a damaged trailer.
            r.trailer = TrailerStatus::Missing;
            r.trailer_err = Some((len - TRAILER_LEN, "marker"));
        }
        if let (Some(key), Some(d)) = (seal, xml_digest) {
            r.check_seal(key, d)?;
        }
        Ok(r)
    }

    /// The seal check of [`DsReader::open_with`]; `xml_digest` is the digest of the type
    /// library's bytes as read to build the library.
    fn check_seal(&mut self, key: &crate::seal::SealKey, xml_digest: [u8; 32]) -> Result<()> {
        use crate::seal::{FailureKind, SealFailure, SEAL_TYPE_NAME};
        let declared =
            self.lib.get(SEAL_TYPE_NAME).is_some_and(|t| t.xml() == crate::seal::seal_type().xml());
        if !declared {
            if matches!(*self.file, Input::Encrypted(_)) {
                return Ok(());
            }
            return Err(Error::Seal(SealFailure {
                seq: None,
                offset: None,
                why: format!(
                    "not sealed: the file declares no `{SEAL_TYPE_NAME}` extent type (it was \
                     written without a seal, or its seal was removed), and a reader given a seal \
                     key reads sealed files only"
                ),
                kind: FailureKind::NotSealed,
            }));
        }
        let c = crate::seal::check(self, key, true);
        let cut = match c.failure {
            Some(f) if !f.is_cut() => return Err(Error::Seal(f)),
            cut => cut,
        };
        match c.extents.first() {
            None => {
                let why = cut.map_or_else(String::new, |f| format!(": {}", f.why));
                return Err(Error::Seal(SealFailure {
                    seq: None,
                    offset: None,
                    why: format!("cut before its first seal, nothing in it is verified{why}"),
                    kind: FailureKind::Cut,
                }));
            }
            Some(e) if e.digest != xml_digest => {
                return Err(SealTable::failure(
                    Some(0),
                    FILE_HEADER_LEN,
                    "the type library changed while the file was opened",
                ))
            }
            Some(_) => {}
        }
        let left_out = if cut.is_some() {
            let left = self.len - c.end;
            // The reader sees the verified part only: an unfinished file ending there.
            self.len = c.end;
            self.trailer = TrailerStatus::Missing;
            self.trailer_err = Some((c.end, "marker"));
            left
        } else {
            0
        };
        self.seal = Some(crate::seal::SealStatus { summary: c.summary, cut, left_out, end: c.end });
        self.sealed = Some(Arc::new(SealTable { extents: c.extents }));
        Ok(())
    }

    /// Whether (and how) the file falls short of whole: no trailer, cut inside an extent, an
    /// encrypted file without its last chunk, a sealed one read with its key and cut before
    /// its final seal. `None` for a whole file. Walks the extent headers of a file without
    /// trailer (to find a cut extent).
    pub fn incomplete(&self) -> Option<Incomplete> {
        let cut_tail = match self.trailer {
            TrailerStatus::Missing if self.sealed.is_none() => {
                self.headers().find_map(|h| h.err().and_then(|e| e.cut_tail()))
            }
            _ => None,
        };
        self.incomplete_with(cut_tail)
    }

    /// [`DsReader::incomplete`] for a caller that walked the headers itself and found the
    /// file cut inside this extent (or not).
    pub fn incomplete_with(&self, cut_tail: Option<crate::CutTail>) -> Option<Incomplete> {
        let chunks = self.encryption().filter(|e| !e.complete).map(|e| e.chunks);
        let seal_cut =
            self.seal.as_ref().and_then(|s| s.cut.as_ref().map(|f| (f.why.clone(), s.left_out)));
        let missing = matches!(self.trailer, TrailerStatus::Missing);
        (missing || chunks.is_some() || seal_cut.is_some()).then_some(Incomplete {
            chunks,
            seal_cut,
            cut_tail,
        })
    }

    /// What the seal check at open established (opened with a seal key, and sealed).
    pub fn seal_status(&self) -> Option<&crate::seal::SealStatus> {
        self.seal.as_ref()
    }

    /// The bytes at `offset` (for the seal check).
    pub(crate) fn read_bytes(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        read_vec(&self.file, offset, len)
    }

    /// The header of the extent at `offset`: the verified one for a sealed reader, else read
    /// and checked to fit in the file.
    pub(crate) fn header_at(&self, offset: u64) -> Result<RawHeader> {
        match &self.sealed {
            Some(t) => t.header(offset),
            None => read_header_at(&self.file, self.len, self.be, offset),
        }
    }

    /// Whether the extents, followed header by header from the first data extent, end exactly
    /// where the trailer starts (one positioned read per extent; done at open only when the
    /// trailer's marker is there and one of its checks failed).
    fn extents_end_at_trailer(&self) -> bool {
        let end = self.len.saturating_sub(TRAILER_LEN);
        let mut pos = self.data_start;
        while pos < end {
            match read_header_at(&self.file, self.len, self.be, pos) {
                Ok(h) => pos += h.total_len,
                Err(_) => return false,
            }
        }
        pos == end
    }

    /// Reads the raw bytes of the extent at `offset` after checking its header fits the file.
    /// The buffer comes from the reader's pool ([`DsReader::read_extent_at`] gives it back).
    fn read_raw_extent(&self, offset: u64) -> Result<(RawHeader, Vec<u8>)> {
        let h = self.header_at(offset)?;
        let len = h.total_len as usize;
        let mut bytes = self.pool.take(len);
        self.file
            .read_at(&mut bytes, offset)
            .map_err(|e| Error::io(format!("reading {len} bytes at offset {offset}"), e))?;
        if let Some(t) = &self.sealed {
            t.check(offset, &bytes)?;
        }
        Ok((h, bytes))
    }

    /// The file's own types (from the XmlType extent), in the order listed there. The two
    /// built-in types are not included; [`DsReader::type_by_name`] resolves them too.
    pub fn types(&self) -> &[Arc<ExtentType>] {
        &self.lib.user
    }

    /// Looks a type up by name (the file's types and the two built-ins).
    pub fn type_by_name(&self, name: &str) -> Option<&Arc<ExtentType>> {
        self.lib.by_name.get(name)
    }

    /// Whether the file was written on a big-endian host.
    pub fn is_big_endian(&self) -> bool {
        self.be
    }

    /// For an encrypted file (read with its key), the encryption's public facts.
    pub fn encryption(&self) -> Option<crate::crypt::EncryptionInfo> {
        match &*self.file {
            Input::Plain(_) => None,
            Input::Encrypted(d) => Some(d.info()),
        }
    }

    /// File length in bytes (of the decrypted file, for an encrypted one).
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// Headers of every extent after the XmlType extent, in file order (index extent included),
    /// without decompressing. Ends at the trailer, or at a clean end of file without trailer.
    pub fn headers(&self) -> HeaderIter<'_> {
        HeaderIter { walker: self.walker(), _r: std::marker::PhantomData }
    }

    /// Every extent's raw on-disk bytes, in file order from the XmlType extent to the index
    /// extent: `(offset, type name, bytes)`. For verifying seals; nothing is decoded.
    pub fn raw_extents(&self) -> impl Iterator<Item = Result<(u64, String, Vec<u8>)>> + '_ {
        let mut w = self.walker();
        w.pos = FILE_HEADER_LEN;
        std::iter::from_fn(move || {
            Some(w.next_header()?.and_then(|(off, h)| {
                let bytes = read_vec(&self.file, off, h.total_len as usize)?;
                if let Some(t) = &self.sealed {
                    t.check(off, &bytes)?;
                }
                Ok((off, h.name_lossy(), bytes))
            }))
        })
    }

    fn walker(&self) -> Walker {
        Walker {
            file: Arc::clone(&self.file),
            len: self.len,
            be: self.be,
            pos: self.data_start,
            done: false,
            trailer_ok: matches!(self.trailer, TrailerStatus::Valid { .. }),
            trailer_err: self.trailer_err,
            sealed: self.sealed.clone(),
        }
    }

    /// The trailer status computed at open.
    pub fn trailer_status(&self) -> TrailerStatus {
        self.trailer.clone()
    }

    /// The ExtentIndex records `(offset, type name)` when the trailer is valid; `Ok(None)`
    /// when the file has no trailer; an error when the trailer or the index extent is corrupt.
    pub fn index(&self) -> Result<Option<Vec<(u64, String)>>> {
        let index_offset = match &self.trailer {
            TrailerStatus::Valid { index_offset } => *index_offset,
            TrailerStatus::Missing => return Ok(None),
            TrailerStatus::Corrupt(_) => {
                let (trailer_offset, check) = self.trailer_err.unwrap_or((self.len, "trailer"));
                return Err(Error::BadTrailer { trailer_offset, check });
            }
        };
        let e = self.read_extent_at(index_offset)?;
        if e.extent_type().name() != INDEX_NAME {
            return Err(Error::BadTrailer {
                trailer_offset: self.len - TRAILER_LEN,
                check: "index offset points at the index extent",
            });
        }
        // Built-in layout: field 0 = offset (int64), field 1 = extenttype (variable32).
        let mut out = Vec::with_capacity(e.len());
        for i in 0..e.len() {
            let off = e.i64(i, 0).unwrap_or(-1);
            let name = String::from_utf8_lossy(e.bytes(i, 1).unwrap_or(&[])).into_owned();
            out.push((u64::try_from(off).unwrap_or(u64::MAX), name));
        }
        Ok(Some(out))
    }

    /// Checks the ExtentIndex against the extents themselves (headers only, no decoding):
    /// every entry names an extent that starts at its offset and has its type, and every
    /// extent in the file is listed exactly once. Returns the number of entries checked;
    /// `Ok(None)` when the file has no trailer (so no index to check).
    pub fn verify_index(&self) -> Result<Option<usize>> {
        let mut extents = Vec::new();
        for h in self.headers() {
            let h = h?;
            extents.push((h.offset, h.type_name));
        }
        self.verify_index_with(extents)
    }

    /// [`DsReader::verify_index`] against the `(offset, type name)` of every extent header a
    /// caller has already read (all of [`DsReader::headers`]): the headers are not read again.
    pub fn verify_index_with(
        &self,
        extents: impl IntoIterator<Item = (u64, String)>,
    ) -> Result<Option<usize>> {
        let Some(index) = self.index()? else { return Ok(None) };
        let index_offset = match self.trailer {
            TrailerStatus::Valid { index_offset } => index_offset,
            _ => unreachable!("index() returns Some only with a valid trailer"),
        };
        let bad = |detail: String| Error::BadIndex { index_offset, detail };
        let extents: HashMap<u64, String> = extents.into_iter().collect();
        let mut seen: HashMap<u64, usize> = HashMap::with_capacity(index.len());
        for (i, (off, name)) in index.iter().enumerate() {
            // DataSeries' own writer does not list the XmlType extent; tolerate one that does.
            if *off == FILE_HEADER_LEN && name == XMLTYPE_NAME {
                continue;
            }
            if let Some(first) = seen.insert(*off, i) {
                return Err(bad(format!("entries {first} and {i} both name offset {off}")));
            }
            match extents.get(off) {
                None => {
                    return Err(bad(format!(
                        "entry {i} ({name}) names offset {off}, where no extent starts"
                    )))
                }
                Some(found) if found != name => {
                    return Err(Error::IndexMismatch {
                        extent_offset: *off,
                        expected: name.clone(),
                        found: found.clone(),
                    })
                }
                Some(_) => {}
            }
        }
        if let Some((off, name)) =
            extents.iter().filter(|(o, _)| !seen.contains_key(o)).min_by_key(|(o, _)| **o)
        {
            return Err(bad(format!(
                "the {name} extent at offset {off} is not listed ({} entries for {} extents, \
                 the XmlType extent included)",
                index.len(),
                extents.len() + 1
            )));
        }
        Ok(Some(index.len()))
    }

    /// Read extents through a memory map of the file from now on (this reader and its clones
    /// made later), not into buffers of their own: an extent stored uncompressed is then
    /// decoded where it lies in the page cache, without a copy, and the slices of its
    /// buffers ([`Extent::shared_bytes`]) are slices of the map. False, and read as before,
    /// for an encrypted file (decrypted into buffers) and where the kernel refuses the map (a
    /// FUSE file system with direct I/O, say). The file must not shrink while mapped: an
    /// extent cut off before it is read is an error, but one cut off while in use raises
    /// SIGBUS, which the program should turn into an error message.
    pub fn map_file(&mut self) -> bool {
        let Input::Plain(f) = &*self.file else { return false };
        // SAFETY: the map is read only; the file shrinking under it is the SIGBUS the
        // documentation above gives to the caller.
        match unsafe { memmap2::MmapOptions::new().len(self.len as usize).map(f) } {
            Ok(map) => {
                self.map = Some(Arc::new(map));
                true
            }
            Err(_) => false,
        }
    }

    /// Reads and fully decodes (all checks) the extent at `offset`.
    pub fn read_extent_at(&self, offset: u64) -> Result<Extent> {
        let bytes = self.stored_at(offset)?;
        let lib = &self.lib;
        codec::decode_extent_checked(
            bytes,
            self.be,
            offset,
            &|n| lib.get(n),
            codec::Checks::default(),
            Some(&self.pool),
        )
    }

    /// The stored bytes of the extent at `offset` (a slice of the map, or read into a pooled
    /// buffer), the seal checked.
    fn stored_at(&self, offset: u64) -> Result<codec::Stored<'static>> {
        Ok(match &self.map {
            Some(map) => {
                let h = self.header_at(offset)?;
                let (at, len) = (offset as usize, h.total_len as usize);
                // (read_header_at checked that the extent ends inside the file's length at
                // open; the map is as long.) Its pages mapped in one call, and a file cut
                // short since is an error here rather than a SIGBUS later.
                match map.advise_range(memmap2::Advice::PopulateRead, at, len) {
                    // A kernel before 5.14 has no MADV_POPULATE_READ: the pages fault in.
                    Err(e) if e.kind() != std::io::ErrorKind::InvalidInput => {
                        let what =
                            format!("mapping {len} bytes at offset {offset} (the file shrank?)");
                        return Err(Error::io(what, e));
                    }
                    _ => {}
                }
                if let Some(t) = &self.sealed {
                    t.check(offset, &map[at..at + len])?;
                }
                let owner = MappedExtent { map: Arc::clone(map), at, len };
                codec::Stored::Shared(bytes::Bytes::from_owner(owner))
            }
            None => codec::Stored::Cow(Cow::Owned(self.read_raw_extent(offset)?.1)),
        })
    }

    /// [`DsReader::read_extent_of`] of several extents at once, one result per `(offset,
    /// type)`, in order: the same checks, with the lookup2 hashes of the extents computed side
    /// by side ([`crate::raw::bjhash_many`]), which is most of the reading of a trace whose
    /// records carry data. For read-ahead of a handful of extents (memory holds them all).
    pub fn read_extents_of(&self, jobs: &[(u64, &str)]) -> Vec<Result<Extent>> {
        let inputs: Vec<(u64, Result<codec::Stored<'static>>)> =
            jobs.iter().map(|&(off, _)| (off, self.stored_at(off))).collect();
        let lib = &self.lib;
        let decoded = codec::decode_extents_checked(
            inputs,
            self.be,
            &|n| lib.get(n),
            codec::Checks::default(),
            Some(&self.pool),
        );
        decoded
            .into_iter()
            .zip(jobs)
            .map(|(r, &(offset, type_name))| {
                let e = r?;
                if e.extent_type().name() != type_name {
                    return Err(Error::IndexMismatch {
                        extent_offset: offset,
                        expected: type_name.to_string(),
                        found: e.extent_type().name().to_string(),
                    });
                }
                Ok(e)
            })
            .collect()
    }

    /// [`DsReader::read_extent_at`] for an extent that must be of type `type_name` (one the
    /// ExtentIndex pointed at): another type is [`Error::IndexMismatch`], not an extent whose
    /// fields the caller would read by another type's layout.
    pub fn read_extent_of(&self, offset: u64, type_name: &str) -> Result<Extent> {
        let e = self.read_extent_at(offset)?;
        if e.extent_type().name() != type_name {
            return Err(Error::IndexMismatch {
                extent_offset: offset,
                expected: type_name.to_string(),
                found: e.extent_type().name().to_string(),
            });
        }
        Ok(e)
    }

    /// All user extents in file order (the XmlType and index extents are skipped), decoded on
    /// background threads with bounded read-ahead. After the first error the iterator ends.
    pub fn extents(&self) -> ExtentStream {
        self.extents_with(&StreamOptions::default())
    }

    /// Only the extents of one type; others are skipped by header, without decompression.
    pub fn extents_of(&self, type_name: &str) -> ExtentStream {
        self.extents_with(&StreamOptions {
            type_filter: Some(type_name.to_string()),
            ..StreamOptions::default()
        })
    }

    /// [`DsReader::extents`] with explicit threading, read-ahead and type filter.
    pub fn extents_with(&self, opts: &StreamOptions) -> ExtentStream {
        let src = Source { walker: self.walker(), filter: opts.type_filter.clone() };
        if opts.threads == 0 {
            return ExtentStream {
                inner: Inner::Sync { src, lib: Arc::clone(&self.lib) },
                done: false,
                cancel: None,
            };
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let depth = opts.readahead.max(1);
        let (order_tx, order_rx) = bounded::<Receiver<Result<Extent>>>(depth);
        let (job_tx, job_rx) = bounded::<Job>(depth);
        for _ in 0..opts.threads {
            let job_rx = job_rx.clone();
            let lib = Arc::clone(&self.lib);
            let cancel = Arc::clone(&cancel);
            let be = self.be;
            let spawned = std::thread::Builder::new().name("ds-decode".into()).spawn(move || {
                for job in job_rx.iter() {
                    if cancel.load(Ordering::Relaxed) {
                        break;
                    }
                    let r = codec::decode_extent(Cow::Owned(job.bytes), be, job.offset, &|n| {
                        lib.get(n)
                    });
                    let _ = job.result.send(r);
                }
            });
            if spawned.is_err() {
                // Could not start a thread: fall back to decoding on the caller's thread.
                return ExtentStream {
                    inner: Inner::Sync { src, lib: Arc::clone(&self.lib) },
                    done: false,
                    cancel: None,
                };
            }
        }
        drop(job_rx);
        let c2 = Arc::clone(&cancel);
        let mut src = src;
        let spawned = std::thread::Builder::new().name("ds-read".into()).spawn(move || {
            producer(&mut src, &job_tx, &order_tx, &c2);
        });
        if spawned.is_err() {
            let (tx, rx) = bounded(1);
            let _ = tx.send(Err(Error::ThreadFailed { what: "reader" }));
            let (otx, orx) = bounded(1);
            let _ = otx.send(rx);
            return ExtentStream {
                inner: Inner::Threaded { order: orx },
                done: false,
                cancel: Some(cancel),
            };
        }
        ExtentStream {
            inner: Inner::Threaded { order: order_rx },
            done: false,
            cancel: Some(cancel),
        }
    }
}

/// Reads and validates the header of the extent at `offset` and checks it fits in the file.
fn read_header_at(file: &Input, len: u64, be: bool, offset: u64) -> Result<RawHeader> {
    let avail = len.saturating_sub(offset);
    if avail < PREFIX_LEN as u64 {
        return Err(Error::TruncatedExtent {
            extent_offset: offset,
            what: "extent header",
            needed: PREFIX_LEN as u64,
            available: avail,
        });
    }
    let prefix = read_vec(file, offset, PREFIX_LEN)?;
    let mut h = parse_prefix(&prefix, be, offset)?;
    if h.total_len > avail {
        return Err(Error::TruncatedExtent {
            extent_offset: offset,
            what: "extent",
            needed: h.total_len,
            available: avail,
        });
    }
    let name = read_vec(file, offset + PREFIX_LEN as u64, h.name_len)?;
    h.name = String::from_utf8(name).ok();
    Ok(h)
}

struct Job {
    offset: u64,
    bytes: Vec<u8>,
    result: Sender<Result<Extent>>,
}

fn producer(
    src: &mut Source,
    jobs: &Sender<Job>,
    order: &Sender<Receiver<Result<Extent>>>,
    cancel: &AtomicBool,
) {
    while !cancel.load(Ordering::Relaxed) {
        match src.next_raw() {
            None => break,
            Some(Err(e)) => {
                let (tx, rx) = bounded(1);
                let _ = tx.send(Err(e));
                let _ = order.send(rx);
                break;
            }
            Some(Ok((offset, bytes))) => {
                let (tx, rx) = bounded(1);
                if jobs.send(Job { offset, bytes, result: tx }).is_err() || order.send(rx).is_err()
                {
                    break;
                }
            }
        }
    }
}

/// Walks extent headers sequentially.
struct Walker {
    file: Arc<Input>,
    len: u64,
    be: bool,
    pos: u64,
    done: bool,
    trailer_ok: bool,
    trailer_err: Option<(u64, &'static str)>,
    /// A sealed reader's verified extents: the walk goes through them alone.
    sealed: Option<Arc<SealTable>>,
}

impl Walker {
    fn next_header(&mut self) -> Option<Result<(u64, RawHeader)>> {
        if self.done {
            return None;
        }
        let r = self.step();
        match &r {
            Some(Ok(_)) => {}
            _ => self.done = true,
        }
        r
    }

    fn step(&mut self) -> Option<Result<(u64, RawHeader)>> {
        let pos = self.pos;
        if pos >= self.len {
            return None;
        }
        if let Some(t) = &self.sealed {
            // The verified extents end at the index (the trailer follows) or where a cut
            // file's verified part ends (`len`).
            let (_, e) = t.find(pos)?;
            self.pos = pos + e.header.total_len;
            return Some(Ok((pos, e.header.clone())));
        }
        let remaining = self.len - pos;
        if remaining >= 4 {
            let marker = match read_vec(&self.file, pos, 4) {
                Ok(m) => m,
                Err(e) => return Some(Err(e)),
            };
            if marker == [0xff; 4] {
                if remaining == TRAILER_LEN && self.trailer_ok {
                    return None;
                }
                let check = if remaining != TRAILER_LEN {
                    "trailer is at the end of the file"
                } else {
                    self.trailer_err.map_or("trailer", |e| e.1)
                };
                return Some(Err(Error::BadTrailer { trailer_offset: pos, check }));
            }
        }
        if remaining == TRAILER_LEN {
            // Too short for any extent (which needs at least 32 bytes): a damaged trailer.
            return Some(Err(Error::BadTrailer { trailer_offset: pos, check: "marker" }));
        }
        match read_header_at(&self.file, self.len, self.be, pos) {
            Ok(h) => {
                self.pos = pos + h.total_len;
                Some(Ok((pos, h)))
            }
            Err(e @ (Error::TruncatedExtent { .. } | Error::BadExtentHeader { .. }))
                if !self.trailer_ok =>
            {
                let (trailer_offset, check) =
                    self.trailer_err.unwrap_or((self.len.saturating_sub(TRAILER_LEN), "marker"));
                Some(Err(Error::DamagedTail {
                    trailer_offset,
                    check,
                    extent_offset: pos,
                    cause: Box::new(e),
                }))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

/// Iterator over extent headers; see [`DsReader::headers`].
pub struct HeaderIter<'a> {
    walker: Walker,
    _r: std::marker::PhantomData<&'a DsReader>,
}

impl Iterator for HeaderIter<'_> {
    type Item = Result<ExtentHeader>;
    fn next(&mut self) -> Option<Self::Item> {
        self.walker.next_header().map(|r| r.map(|(off, h)| h.to_public(off)))
    }
}

/// Produces the raw bytes of the user extents to decode.
struct Source {
    walker: Walker,
    filter: Option<String>,
}

impl Source {
    fn next_raw(&mut self) -> Option<Result<(u64, Vec<u8>)>> {
        loop {
            let (off, h) = match self.walker.next_header()? {
                Ok(x) => x,
                Err(e) => return Some(Err(e)),
            };
            let name = h.name.as_deref();
            if name == Some(INDEX_NAME) {
                continue;
            }
            if name == Some(XMLTYPE_NAME) {
                self.walker.done = true;
                return Some(Err(Error::BadTypeLibrary {
                    extent_offset: off,
                    check: "only the first extent is an XmlType extent",
                }));
            }
            if let Some(f) = &self.filter {
                if name != Some(f.as_str()) {
                    continue;
                }
            }
            let r =
                read_vec(&self.walker.file, off, h.total_len as usize).and_then(|b| {
                    match &self.walker.sealed {
                        Some(t) => t.check(off, &b).map(|()| b),
                        None => Ok(b),
                    }
                });
            return match r {
                Ok(b) => Some(Ok((off, b))),
                Err(e) => {
                    self.walker.done = true;
                    Some(Err(e))
                }
            };
        }
    }
}

enum Inner {
    Sync { src: Source, lib: Arc<TypeLibrary> },
    Threaded { order: Receiver<Receiver<Result<Extent>>> },
}

/// Iterator over decoded extents; see [`DsReader::extents`]. Dropping it stops the background
/// threads.
pub struct ExtentStream {
    inner: Inner,
    done: bool,
    cancel: Option<Arc<AtomicBool>>,
}

impl Iterator for ExtentStream {
    type Item = Result<Extent>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = match &mut self.inner {
            Inner::Sync { src, lib } => match src.next_raw() {
                None => None,
                Some(Err(e)) => Some(Err(e)),
                Some(Ok((off, bytes))) => {
                    let be = src.walker.be;
                    Some(codec::decode_extent(Cow::Owned(bytes), be, off, &|n| lib.get(n)))
                }
            },
            Inner::Threaded { order } => match order.recv() {
                Err(_) => None,
                Ok(rx) => Some(rx.recv().unwrap_or(Err(Error::ThreadFailed { what: "decode" }))),
            },
        };
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

impl Drop for ExtentStream {
    fn drop(&mut self) {
        if let Some(c) = &self.cancel {
            c.store(true, Ordering::Relaxed);
        }
    }
}
