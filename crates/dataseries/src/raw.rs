//! Low-level access for tests, tools and fuzzing: hashes, single-extent encode/decode, and the
//! uncompressed sections of an extent.

use std::sync::Arc;

pub use crate::codec::{Checks, EncodeOptions};
pub use crate::hash::{adler32, bjhash, bjhash_many, mix3};
use crate::{Compression, Extent, ExtentBuilder, ExtentHeader, ExtentType, Result};

/// Decodes one on-disk extent (`bytes` must be exactly the extent) with every check. Never
/// panics, whatever the input. Error offsets are relative to the start of `bytes`.
pub fn decode_extent_bytes(
    bytes: &[u8],
    big_endian: bool,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
) -> Result<Extent> {
    let mut e =
        crate::codec::decode_extent(std::borrow::Cow::Borrowed(bytes), big_endian, 0, lookup)?;
    e.offset = None;
    Ok(e)
}

/// [`decode_extent_bytes`] with selectable checksum verification (for fuzzing and recovery:
/// with checksums off, corrupted input reaches the deeper structural checks).
pub fn decode_extent_bytes_with(
    bytes: &[u8],
    big_endian: bool,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
    checks: Checks,
) -> Result<Extent> {
    let mut e = crate::codec::decode_extent_checked(
        crate::codec::Stored::Cow(std::borrow::Cow::Borrowed(bytes)),
        big_endian,
        0,
        lookup,
        checks,
        None,
    )?;
    e.offset = None;
    Ok(e)
}

/// Encodes a builder to on-disk extent bytes (little-endian), trying `compression` in order
/// for both sections.
pub fn encode_extent(
    b: &ExtentBuilder,
    compression: &[Compression],
    level: u32,
) -> Result<Vec<u8>> {
    let o = EncodeOptions {
        fixed_modes: compression,
        var_modes: compression,
        level,
        big_endian: false,
    };
    Ok(crate::codec::encode_extent(b, &o)?.0)
}

/// Encodes with separate mode lists per section and an optional big-endian byte order.
/// Returns the bytes and `bjhash ^ adler32` (the value chained into the trailer checksum).
pub fn encode_extent_with(b: &ExtentBuilder, opts: &EncodeOptions<'_>) -> Result<(Vec<u8>, u32)> {
    crate::codec::encode_extent(b, opts)
}

/// The uncompressed sections of one extent, in file byte order, before the pack transforms
/// are undone (what the bjhash covers).
#[derive(Clone, Debug)]
pub struct ExtentSections {
    /// The extent header (offset 0).
    pub header: ExtentHeader,
    /// The stored adler32.
    pub adler32: u32,
    /// The stored (and verified) bjhash.
    pub bjhash: u32,
    /// The fixed section (null compaction undone).
    pub fixed: Vec<u8>,
    /// The variable section including its 4 leading zero bytes.
    pub variable: Vec<u8>,
}

/// Checks and decompresses one extent without decoding its records.
pub fn decode_sections(
    bytes: &[u8],
    big_endian: bool,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
) -> Result<ExtentSections> {
    let s = crate::codec::unpack_sections(
        std::borrow::Cow::Borrowed(bytes),
        big_endian,
        0,
        lookup,
        false,
        Checks::default(),
    )?;
    let mut variable = vec![0u8; 4];
    variable.extend_from_slice(s.vdata());
    Ok(ExtentSections {
        header: s.header.to_public(0),
        adler32: s.header.adler,
        bjhash: s.header.bjhash,
        fixed: s.fixed().to_vec(),
        variable,
    })
}

/// Rewrites the two checksums of the extent in `bytes` (exactly one whole extent) so that they
/// match its data: the bjhash of the uncompressed sections, then the adler32 of the stored
/// bytes. For tools that build damaged-but-consistent files (tests, the trace fuzzer): every
/// other check still applies, so an extent that does not decompress is an error.
pub fn reseal_extent(
    bytes: &mut [u8],
    big_endian: bool,
    lookup: &dyn Fn(&str) -> Option<Arc<ExtentType>>,
) -> Result<()> {
    let checks = Checks { adler32: false, bjhash: true };
    let s = crate::codec::unpack_sections(
        std::borrow::Cow::Borrowed(&*bytes),
        big_endian,
        0,
        lookup,
        false,
        checks,
    );
    let hash = match s {
        Ok(s) => s.header.bjhash,
        Err(crate::Error::BadChecksum { found, .. }) => found,
        Err(e) => return Err(e),
    };
    let put = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    bytes[20..24].copy_from_slice(&put(hash));
    let adler = crate::hash::extent_adler32(bytes);
    bytes[16..20].copy_from_slice(&put(adler));
    Ok(())
}

/// Rewrites the complement and the hash of a 28-byte file trailer to match its packed size,
/// chained checksum and index offset (which are kept as they are).
pub fn reseal_trailer(trailer: &mut [u8; 28], big_endian: bool) {
    let get = |b: &[u8]| {
        let w = [b[0], b[1], b[2], b[3]];
        if big_endian {
            i32::from_be_bytes(w)
        } else {
            i32::from_le_bytes(w)
        }
    };
    let put = |v: i32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    let packed = get(&trailer[4..8]);
    trailer[8..12].copy_from_slice(&put(!packed));
    let h = crate::hash::bjhash(1776, &trailer[..24]) as i32;
    trailer[24..28].copy_from_slice(&put(h));
}

/// Parses the header of an extent at the start of `bytes`.
pub fn parse_extent_header(bytes: &[u8], big_endian: bool) -> Result<ExtentHeader> {
    Ok(crate::codec::parse_header(bytes, big_endian, 0)?.to_public(0))
}

/// The type library extent's type name.
pub const XMLTYPE: &str = crate::types::XMLTYPE_NAME;
/// The index extent's type name.
pub const INDEX: &str = crate::types::INDEX_NAME;

/// The built-in `DataSeries: XmlType` type.
pub fn xmltype_type() -> Arc<ExtentType> {
    Arc::new(ExtentType::xmltype())
}

/// The built-in `DataSeries: ExtentIndex` type.
pub fn index_type() -> Arc<ExtentType> {
    Arc::new(ExtentType::index_type())
}

/// The 40-byte little-endian DSv1 file header.
pub fn file_header() -> [u8; 40] {
    crate::writer::file_header()
}

/// Checks a 40-byte file header; returns whether it is big-endian.
pub fn check_file_header(h: &[u8]) -> Result<bool> {
    crate::reader::check_file_header(h)
}
