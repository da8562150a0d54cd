//! A DSv1 file as a byte stream: [`Framer`] cuts bytes arriving in pieces of any size (from a
//! socket, say) into the file's parts — the file header, whole extents, the trailer — without
//! holding more than one extent header in memory, whatever the input claims; and
//! [`file_tail`] writes the index extent and trailer of a file assembled from extents.
//!
//! `reanimator collect` uses the framer to write a network stream to a file extent by extent
//! (and to cut a broken stream at its last whole extent); the sender uses it to know where
//! the type library ends and where its own index and trailer begin.

use std::fmt;
use std::sync::Arc;

use crate::codec::{self, parse_prefix, EncodeOptions, PREFIX_LEN};
use crate::extent::ExtentBuilder;
use crate::hash::{bjhash, mix3};
use crate::reader::{check_file_header, FILE_HEADER_LEN, TRAILER_LEN};
use crate::types::{ExtentType, INDEX_NAME, XMLTYPE_NAME};
use crate::Value;

/// What a part of the file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    /// The 40-byte file header.
    FileHeader,
    /// One extent (its header, sections and padding).
    Extent,
    /// The 28-byte trailer.
    Trailer,
}

/// One part of the file, known once its header has been read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Which part of the file this is.
    pub kind: PartKind,
    /// Stream offset of its first byte.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// An extent's type name ("" for the file header and trailer).
    pub type_name: String,
    /// An extent's `adler32 ^ bjhash` (the value chained into the trailer's checksum).
    pub check: u32,
}

impl Part {
    /// Stream offset just after the part.
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// What [`Framer::feed`] reports, in stream order.
#[derive(Debug)]
pub enum Piece<'a> {
    /// Bytes of `part` (a part comes in one or more pieces, in order).
    Data {
        /// The part these bytes belong to.
        part: &'a Part,
        /// The next bytes of it.
        bytes: &'a [u8],
    },
    /// `part` is complete.
    End {
        /// The part just completed.
        part: &'a Part,
    },
}

/// Why the stream is not a DSv1 file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameError {
    /// Stream offset of the part that is wrong.
    pub offset: u64,
    /// What is wrong with it.
    pub detail: String,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.detail)
    }
}

impl std::error::Error for FrameError {}

/// Error of [`Framer::feed`]: the stream's, or the one the caller's callback returned.
#[derive(Debug)]
pub enum FeedError<E> {
    /// The stream is not a DSv1 file.
    Frame(FrameError),
    /// The caller's callback failed.
    Sink(E),
}

impl<E: fmt::Display> fmt::Display for FeedError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeedError::Frame(e) => e.fmt(f),
            FeedError::Sink(e) => e.fmt(f),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Gathering the file header.
    FileHeader,
    /// Gathering an extent header (or the trailer, by its marker).
    Head,
    /// Inside the current part, this many bytes to go.
    Body(u64),
    /// After the trailer: nothing more may come.
    Done,
    /// After an error: nothing more is accepted.
    Failed,
}

/// Default largest extent [`Framer`] accepts: the format's own limit (two sections under
/// 512 MiB each, plus the header).
pub const MAX_EXTENT: u64 = 2 * 512 * 1024 * 1024 + 512;

/// Cuts a DSv1 byte stream into its parts. Memory: one extent header (at most 284 bytes),
/// whatever the stream claims.
#[derive(Debug)]
pub struct Framer {
    state: State,
    /// Bytes consumed so far.
    pos: u64,
    /// End of the last complete part.
    boundary: u64,
    /// Header bytes gathered (file header, extent header, trailer).
    held: Vec<u8>,
    be: bool,
    /// Whether the XmlType extent has been seen (it must be first).
    xml_seen: bool,
    /// The current part.
    part: Option<Part>,
    /// Largest extent accepted.
    max_extent: u64,
    /// The last extent: (offset, length, type name).
    last: Option<(u64, u64, bool)>,
    /// Chained checksum of the extents so far (as the trailer stores it).
    chained: u32,
    extents: u64,
    /// Started by [`Framer::resume`]: the chained checksum covers extents not seen.
    resumed: bool,
}

impl Default for Framer {
    fn default() -> Self {
        Framer::new()
    }
}

impl Framer {
    /// A framer for a whole file: the file header first, then the XmlType extent.
    pub fn new() -> Framer {
        Framer {
            state: State::FileHeader,
            pos: 0,
            boundary: 0,
            held: Vec::with_capacity(64),
            be: false,
            xml_seen: false,
            part: None,
            max_extent: MAX_EXTENT,
            last: None,
            chained: 0,
            extents: 0,
            resumed: false,
        }
    }

    /// A framer for a stream that starts at `offset` of a little-endian file, at an extent
    /// boundary after the XmlType extent (the rest of a file whose beginning went elsewhere).
    /// Its trailer is not checked against the file's start (the chained checksum covers
    /// extents this framer did not see).
    pub fn resume(offset: u64) -> Framer {
        Framer {
            state: State::Head,
            pos: offset,
            boundary: offset,
            xml_seen: true,
            resumed: true,
            ..Framer::new()
        }
    }

    /// Refuse extents longer than `bytes` (a collector's bound on what it holds for one
    /// extent).
    pub fn max_extent(mut self, bytes: u64) -> Framer {
        self.max_extent = bytes;
        self
    }

    /// Bytes consumed.
    pub fn offset(&self) -> u64 {
        self.pos
    }

    /// End of the last complete part: a file cut here is readable.
    pub fn boundary(&self) -> u64 {
        self.boundary
    }

    /// Whole extents seen (XmlType and index included).
    pub fn extents(&self) -> u64 {
        self.extents
    }

    /// Whether the trailer has been read: the file is complete.
    pub fn complete(&self) -> bool {
        self.state == State::Done
    }

    /// Whether the file is big-endian (known after its header).
    pub fn is_big_endian(&self) -> bool {
        self.be
    }

    /// Bytes of a part begun and not finished (what cutting the stream at
    /// [`Framer::boundary`] drops).
    pub fn partial(&self) -> u64 {
        self.pos - self.boundary
    }

    fn fail(&mut self, offset: u64, detail: impl Into<String>) -> FrameError {
        self.state = State::Failed;
        FrameError { offset, detail: detail.into() }
    }

    /// Consumes `buf`, calling `f` with each piece of data and each completed part, in
    /// order. After an error nothing more is accepted.
    pub fn feed<E>(
        &mut self,
        mut buf: &[u8],
        mut f: impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        while !buf.is_empty() {
            match self.state {
                State::Failed => {
                    return Err(FeedError::Frame(FrameError {
                        offset: self.pos,
                        detail: "the stream failed earlier".into(),
                    }))
                }
                State::Done => {
                    let e = self.fail(self.pos, "bytes after the trailer");
                    return Err(FeedError::Frame(e));
                }
                State::FileHeader => {
                    let want = FILE_HEADER_LEN as usize - self.held.len();
                    let n = want.min(buf.len());
                    self.held.extend_from_slice(&buf[..n]);
                    buf = &buf[n..];
                    self.pos += n as u64;
                    // A wrong magic is refused at once, not after 40 bytes.
                    let m = self.held.len().min(4);
                    if self.held[..m] != b"DSv1"[..m] {
                        return Err(FeedError::Frame(
                            self.fail(0, "not a DataSeries stream (it does not begin with DSv1)"),
                        ));
                    }
                    if self.held.len() == FILE_HEADER_LEN as usize {
                        match check_file_header(&self.held) {
                            Ok(be) => self.be = be,
                            Err(e) => return Err(FeedError::Frame(self.fail(0, e.to_string()))),
                        }
                        self.emit_held(PartKind::FileHeader, 0, State::Head, &mut f)?;
                    }
                }
                State::Head => {
                    let start = self.pos - self.held.len() as u64;
                    // Gather the marker, then the fixed prefix, then the name.
                    let want = if self.held.len() < 4 {
                        4 - self.held.len()
                    } else if self.held[..4] == [0xff; 4] {
                        TRAILER_LEN as usize - self.held.len()
                    } else if self.held.len() < PREFIX_LEN {
                        PREFIX_LEN - self.held.len()
                    } else {
                        PREFIX_LEN + usize::from(self.held[26]) - self.held.len()
                    };
                    let n = want.min(buf.len());
                    self.held.extend_from_slice(&buf[..n]);
                    buf = &buf[n..];
                    self.pos += n as u64;
                    if n < want {
                        continue;
                    }
                    if self.held.len() < 4 {
                        continue;
                    }
                    if self.held[..4] == [0xff; 4] {
                        if self.held.len() < TRAILER_LEN as usize {
                            continue;
                        }
                        if let Err(d) = self.check_trailer(start) {
                            return Err(FeedError::Frame(self.fail(start, d)));
                        }
                        self.emit_held(PartKind::Trailer, start, State::Done, &mut f)?;
                        continue;
                    }
                    if self.held.len() < PREFIX_LEN {
                        continue;
                    }
                    let h = match parse_prefix(&self.held, self.be, start) {
                        Ok(h) => h,
                        Err(e) => return Err(FeedError::Frame(self.fail(start, e.to_string()))),
                    };
                    if self.held.len() < PREFIX_LEN + h.name_len {
                        continue;
                    }
                    let Ok(name) = std::str::from_utf8(&self.held[PREFIX_LEN..]) else {
                        return Err(FeedError::Frame(
                            self.fail(start, "the extent's type name is not UTF-8"),
                        ));
                    };
                    let name = name.to_string();
                    if !self.xml_seen && name != XMLTYPE_NAME {
                        let e = self.fail(start, "the first extent is not the XmlType extent");
                        return Err(FeedError::Frame(e));
                    }
                    if self.xml_seen && name == XMLTYPE_NAME {
                        let e = self.fail(start, "a second XmlType extent");
                        return Err(FeedError::Frame(e));
                    }
                    self.xml_seen = true;
                    if h.total_len > self.max_extent {
                        let e = self.fail(
                            start,
                            format!(
                                "an extent of {} bytes ({name}), over the limit of {} bytes",
                                h.total_len, self.max_extent
                            ),
                        );
                        return Err(FeedError::Frame(e));
                    }
                    let check = codec::get_u32(&self.held, 16, self.be)
                        ^ codec::get_u32(&self.held, 20, self.be);
                    let part = Part {
                        kind: PartKind::Extent,
                        offset: start,
                        len: h.total_len,
                        type_name: name,
                        check,
                    };
                    let rest = h.total_len - self.held.len() as u64;
                    f(Piece::Data { part: &part, bytes: &self.held }).map_err(FeedError::Sink)?;
                    self.held.clear();
                    self.part = Some(part);
                    self.state = State::Body(rest);
                    if rest == 0 {
                        self.end_extent(&mut f)?;
                    }
                }
                State::Body(rest) => {
                    let n = (rest.min(buf.len() as u64)) as usize;
                    let part = self.part.as_ref().expect("a part in its body");
                    f(Piece::Data { part, bytes: &buf[..n] }).map_err(FeedError::Sink)?;
                    buf = &buf[n..];
                    self.pos += n as u64;
                    self.state = State::Body(rest - n as u64);
                    if rest == n as u64 {
                        self.end_extent(&mut f)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Hands the part gathered whole in `held` (the file header or the trailer, which have no
    /// type name and no checksum of their own) to `f`, its bytes then its end, and goes on
    /// to `next`.
    fn emit_held<E>(
        &mut self,
        kind: PartKind,
        offset: u64,
        next: State,
        f: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        let part =
            Part { kind, offset, len: self.held.len() as u64, type_name: String::new(), check: 0 };
        f(Piece::Data { part: &part, bytes: &self.held }).map_err(FeedError::Sink)?;
        f(Piece::End { part: &part }).map_err(FeedError::Sink)?;
        self.held.clear();
        self.boundary = self.pos;
        self.state = next;
        Ok(())
    }

    fn end_extent<E>(
        &mut self,
        f: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        let part = self.part.take().expect("a part to end");
        f(Piece::End { part: &part }).map_err(FeedError::Sink)?;
        self.boundary = part.end();
        self.chained = mix3(part.check, self.chained, 1972);
        self.extents += 1;
        self.last = Some((part.offset, part.len, part.type_name == INDEX_NAME));
        self.state = State::Head;
        Ok(())
    }

    /// The trailer in `held` against the extents seen.
    fn check_trailer(&self, at: u64) -> Result<(), String> {
        let t = &self.held;
        let be = self.be;
        let packed = codec::get_i32(t, 4, be);
        if packed != !codec::get_i32(t, 8, be) {
            return Err("trailer: packed size complement".into());
        }
        if bjhash(1776, &t[..24]) != codec::get_u32(t, 24, be) {
            return Err("trailer: hash".into());
        }
        let mut w = [0u8; 8];
        w.copy_from_slice(&t[16..24]);
        let index_offset = if be { i64::from_be_bytes(w) } else { i64::from_le_bytes(w) };
        match self.last {
            Some((off, len, true)) if off as i64 == index_offset && len as i64 == packed as i64 => {
            }
            _ => {
                return Err(format!(
                    "trailer at {at}: it does not name the index extent just before it"
                ))
            }
        }
        if !self.resumed && codec::get_u32(t, 12, be) != self.chained {
            return Err("trailer: chained checksum of the extents".into());
        }
        Ok(())
    }
}

/// The index extent and trailer that end a little-endian file whose extents are `extents`
/// (offset, type name, in file order, the XmlType extent first), their chained checksum
/// `chained` (each extent's [`Part::check`] mixed in order), and which ends at
/// `index_offset`: what [`crate::DsWriter::finish`] writes.
pub fn file_tail(
    extents: &[(u64, String)],
    chained: u32,
    index_offset: u64,
) -> crate::Result<Vec<u8>> {
    let it = Arc::new(ExtentType::index_type());
    let mut b = ExtentBuilder::new(it);
    for (off, name) in extents.iter().chain(std::iter::once(&(index_offset, INDEX_NAME.into()))) {
        b.start_record();
        b.set(0, Value::Int64(*off as i64))?;
        b.set(1, Value::Bytes(name.as_bytes()))?;
    }
    let o = EncodeOptions { fixed_modes: &[], var_modes: &[], level: 6, big_endian: false };
    let enc = codec::encode_owned(b, &o)?;
    let chained = mix3(enc.check, chained, 1972);
    let packed = enc.len() as i32;
    let mut out = enc.into_vec();
    let mut t = [0u8; 28];
    t[0..4].copy_from_slice(&[0xff; 4]);
    t[4..8].copy_from_slice(&packed.to_le_bytes());
    t[8..12].copy_from_slice(&(!packed).to_le_bytes());
    t[12..16].copy_from_slice(&chained.to_le_bytes());
    t[16..24].copy_from_slice(&(index_offset as i64).to_le_bytes());
    let h = bjhash(1776, &t[..24]);
    t[24..28].copy_from_slice(&h.to_le_bytes());
    out.extend_from_slice(&t);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DsReader, DsWriter, FieldDesc, FieldType, WriterOptions};

    /// A small file: a few extents of one type, zlib, finished or not.
    fn sample(extents: usize, finish: bool) -> Vec<u8> {
        let t = Arc::new(
            ExtentType::builder("Test::Rows")
                .field(FieldDesc::new("n", FieldType::Int64))
                .field(FieldDesc::new("data", FieldType::Variable32))
                .build()
                .unwrap(),
        );
        let mut w = DsWriter::new(Vec::new(), &[Arc::clone(&t)], WriterOptions::default()).unwrap();
        for e in 0..extents {
            let mut b = ExtentBuilder::new(Arc::clone(&t));
            for r in 0..50 {
                b.start_record();
                b.set(0, Value::Int64((e * 100 + r) as i64)).unwrap();
                b.set(1, Value::Bytes(format!("row {e} {r}").repeat(r).as_bytes())).unwrap();
            }
            w.write_extent(b).unwrap();
        }
        if finish {
            w.finish().unwrap()
        } else {
            w.flush().unwrap();
            // (The writer is dropped without its index and trailer.)
            let n = w.bytes_written() as usize;
            let mut v = w.finish().unwrap();
            v.truncate(n);
            v
        }
    }

    /// Feeds `bytes` in chunks of `chunk`; returns the parts, the reassembled bytes and the
    /// error, if any.
    fn frame(
        f: &mut Framer,
        bytes: &[u8],
        chunk: usize,
    ) -> (Vec<Part>, Vec<u8>, Option<FrameError>) {
        let mut parts = Vec::new();
        let mut out = Vec::new();
        for c in bytes.chunks(chunk) {
            let r = f.feed(c, |p| -> Result<(), ()> {
                match p {
                    Piece::Data { bytes, .. } => out.extend_from_slice(bytes),
                    Piece::End { part } => parts.push(part.clone()),
                }
                Ok(())
            });
            if let Err(FeedError::Frame(e)) = r {
                return (parts, out, Some(e));
            }
        }
        (parts, out, None)
    }

    #[test]
    fn a_whole_file_in_any_chunking_comes_out_part_by_part() {
        let file = sample(5, true);
        for chunk in [1, 3, 7, 64, 4096, file.len()] {
            let mut f = Framer::new();
            let (parts, out, err) = frame(&mut f, &file, chunk);
            assert_eq!(err, None, "chunk {chunk}");
            assert_eq!(out, file);
            assert!(f.complete());
            assert_eq!(f.boundary(), file.len() as u64);
            assert_eq!(parts.first().unwrap().kind, PartKind::FileHeader);
            assert_eq!(parts[1].type_name, XMLTYPE_NAME);
            assert_eq!(parts.iter().filter(|p| p.type_name == "Test::Rows").count(), 5);
            assert_eq!(parts.last().unwrap().kind, PartKind::Trailer);
            // Parts follow each other without gaps.
            for w in parts.windows(2) {
                assert_eq!(w[0].end(), w[1].offset);
            }
            assert_eq!(f.extents(), 7);
        }
    }

    #[test]
    fn a_cut_stream_ends_at_its_last_whole_extent() {
        let file = sample(4, true);
        let mut f = Framer::new();
        let (parts, _, _) = frame(&mut f, &file, 4096);
        let third = &parts[4];
        // Cut in the middle of an extent.
        let cut = (third.offset + third.len / 2) as usize;
        let mut f = Framer::new();
        let (_, _, err) = frame(&mut f, &file[..cut], 100);
        assert_eq!(err, None);
        assert!(!f.complete());
        assert_eq!(f.boundary(), third.offset);
        assert_eq!(f.partial(), cut as u64 - third.offset);
        // What is kept reads back as a file without trailer.
        let d = std::env::temp_dir().join(format!("ds-stream-{}", std::process::id()));
        std::fs::write(&d, &file[..f.boundary() as usize]).unwrap();
        let r = DsReader::open(&d).unwrap();
        assert_eq!(r.extents().count(), 2);
        let _ = std::fs::remove_file(&d);
    }

    #[test]
    fn garbage_is_refused_at_once() {
        for bad in [&b"GET / HTTP/1.1\r\n"[..], b"DSv2", b"\0\0\0\0", b"D"] {
            let mut f = Framer::new();
            let (_, out, err) = frame(&mut f, bad, 1);
            if bad == b"D" {
                assert_eq!(err, None);
                continue;
            }
            let e = err.expect("refused");
            assert!(e.detail.contains("DSv1"), "{e}");
            assert!(out.is_empty());
        }
        // A valid header, then junk where an extent header should be.
        let mut junk = raw_header();
        junk.extend_from_slice(&[0x41; 64]);
        let (_, _, err) = frame(&mut Framer::new(), &junk, 7);
        assert!(err.unwrap().detail.contains("512 MiB"));
    }

    fn raw_header() -> Vec<u8> {
        crate::writer::file_header().to_vec()
    }

    #[test]
    fn huge_lengths_are_refused_before_anything_is_buffered() {
        let file = sample(1, true);
        // The first extent's compressed sizes: claim 500 MiB each.
        let mut bad = file[..40 + PREFIX_LEN].to_vec();
        bad[40..44].copy_from_slice(&(500i32 << 20).to_le_bytes());
        bad[44..48].copy_from_slice(&(500i32 << 20).to_le_bytes());
        bad.extend_from_slice(&file[40 + PREFIX_LEN..]);
        let mut f = Framer::new().max_extent(1 << 20);
        let (_, _, err) = frame(&mut f, &bad, 4096);
        let e = err.unwrap();
        assert!(e.detail.contains("over the limit"), "{e}");
        assert_eq!(e.offset, 40);
        // Memory held: the header only.
        assert!(f.held.capacity() <= 1024);
        // After an error, nothing more is accepted.
        assert!(matches!(f.feed(b"x", |_| Ok::<(), ()>(())), Err(FeedError::Frame(_))));
    }

    #[test]
    fn the_first_extent_must_be_the_type_library_and_nothing_follows_the_trailer() {
        let file = sample(2, true);
        let mut f = Framer::new();
        let (parts, _, _) = frame(&mut f, &file, 4096);
        // Header, then the second user extent directly.
        let mut bad = file[..40].to_vec();
        bad.extend_from_slice(&file[parts[2].offset as usize..parts[2].end() as usize]);
        let (_, _, err) = frame(&mut Framer::new(), &bad, 4096);
        assert!(err.unwrap().detail.contains("XmlType"));
        let mut more = file.clone();
        more.push(0);
        let (_, _, err) = frame(&mut Framer::new(), &more, 4096);
        assert!(err.unwrap().detail.contains("after the trailer"));
    }

    #[test]
    fn a_damaged_trailer_is_refused() {
        let mut file = sample(2, true);
        let n = file.len();
        file[n - 10] ^= 1; // the index offset
        let (_, _, err) = frame(&mut Framer::new(), &file, 4096);
        assert!(err.unwrap().detail.contains("trailer"));
    }

    #[test]
    fn resume_and_file_tail_rebuild_a_readable_file() {
        let file = sample(6, true);
        let (parts, _, _) = frame(&mut Framer::new(), &file, 4096);
        // Keep header + XmlType, drop nothing, rebuild the tail from the parts: the same
        // bytes as the writer's own tail.
        let ext: Vec<(u64, String)> = parts
            .iter()
            .filter(|p| p.kind == PartKind::Extent && p.type_name != INDEX_NAME)
            .map(|p| (p.offset, p.type_name.clone()))
            .collect();
        let chained = parts
            .iter()
            .filter(|p| p.kind == PartKind::Extent && p.type_name != INDEX_NAME)
            .fold(0, |c, p| mix3(p.check, c, 1972));
        let index = parts.iter().find(|p| p.type_name == INDEX_NAME).unwrap();
        let tail = file_tail(&ext, chained, index.offset).unwrap();
        // (The writer compressed its index; ours is stored raw: same records, same trailer
        // fields otherwise.)
        let mut rebuilt = file[..index.offset as usize].to_vec();
        rebuilt.extend_from_slice(&tail);
        let (_, _, err) = frame(&mut Framer::new(), &rebuilt, 4096);
        assert_eq!(err, None, "the chained checksum and index match");
        let d = std::env::temp_dir().join(format!("ds-stream-tail-{}", std::process::id()));
        std::fs::write(&d, &rebuilt).unwrap();
        let r = DsReader::open(&d).unwrap();
        assert!(matches!(r.trailer_status(), crate::TrailerStatus::Valid { .. }));
        assert_eq!(r.verify_index().unwrap(), Some(8));
        let _ = std::fs::remove_file(&d);
        // A framer resumed at the fourth part sees the rest as extents and the trailer.
        let from = parts[3].offset as usize;
        let mut f = Framer::resume(from as u64);
        let (rest, out, err) = frame(&mut f, &file[from..], 33);
        assert_eq!(err, None);
        assert!(f.complete());
        assert_eq!(out, file[from..]);
        assert_eq!(rest.first().unwrap().offset, from as u64);
    }
}
