//! DataSeries (DSv1) codec: reads and writes DataSeries trace files — extent types (XML
//! schemas), all field types, nullable fields, pack transforms, the eight compression modes and
//! the adler32/lookup2 checksums — with bounded memory, whatever the file size.
//!
//! It knows nothing about system calls. Besides the format it carries, today, the parts of the
//! output chain that work on whole extents and files (`seal`, `crypt`, `stream`): issue 42 item 6
//! plans a crate of their own, leaving this one the codec alone.
//!
//! * [`DsReader`] opens a file, checks its header, type library and trailer, and streams
//!   [`Extent`]s decoded on background threads ([`DsReader::extents`]).
//! * [`DsWriter`] writes extents built with [`ExtentBuilder`], compressing on background threads.
//! * [`text`] reproduces `ds2txt` output; [`raw`] exposes single-extent encode/decode.
//!
//! Every check of the C++ library is performed on read (adler32 and bjhash included); any
//! malformed input gives an [`Error`], never a panic.
//!
//! # Parts
//!
//! DataSeries (DSv1) codec: extent types from XML, record layout, all field types, pack transforms,
//! compression (read: none, lzo, zlib, bz2, lzf, snappy, lz4; write: none, zlib and the encodable
//! rest), adler32 + Jenkins lookup2 checks on every read, extents held in shared buffers
//! (`Extent::shared_bytes` slices them without copying; `DsReader::read_extent_at` reads into a
//! bounded pool of buffers that return when the last slice is dropped, or, after
//! `DsReader::map_file`, takes an extent stored uncompressed straight from a memory map of the
//! file), streaming reader and writer with background (de)compression; `seal`: the keyed MAC chain
//! of sealed files (`Reanimator::Seal` extents written by `DsWriter`, the final seal and the index
//! uncompressed; `seal::check`: every extent's MAC in file order, and the header, final seal, index
//! and trailer rebuilt and compared byte for byte, which `verify_file` and every `DsReader` opened
//! with a `SealKey` run (`open_with`, or `open` after `seal::set_check_key`): such a reader then
//! takes headers from what it verified, checks each extent it reads against its digest, and reads a
//! file cut before its final seal as its verified part; the extent-by-extent `StreamVerifier`,
//! TRACE_FORMAT 11.1); `DsReader::incomplete`: how a file falls short of whole, for every reader's
//! note; `crypt`: encrypted files (AES-256-GCM STREAM chunks, ring written by `DsWriter`, read
//! through `DsReader`'s positioned reads with the keys `set_read_keys` gave, TRACE_FORMAT 11.2);
//! `stream`: `Framer` cuts a DSv1 byte stream arriving in pieces into header, whole extents and
//! trailer in bounded memory, `file_tail` writes the index and trailer of a file assembled from
//! extents (the collector and spill files, docs/NETWORK.md). Knows nothing about system calls.
#![warn(missing_docs)]

mod codec;
mod compress;
pub mod crypt;
mod error;
mod extent;
mod hash;
mod lzf;
mod lzo;
mod pool;
mod reader;
pub mod stream;
mod types;
mod writer;

pub mod raw;
pub mod seal;
pub mod text;

pub use compress::Compression;
pub use error::{Checksum, CutTail, Error, Section};
pub use extent::{Extent, ExtentBuilder, Value};
pub use reader::{
    DsReader, ExtentHeader, ExtentStream, HeaderIter, Incomplete, StreamOptions, TrailerStatus,
};
pub use types::{ExtentType, ExtentTypeBuilder, FieldDesc, FieldType};
pub use writer::{DsWriter, WriterOptions};

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Bytes as lowercase hexadecimal, two digits each (key ids and serials in messages and
/// summaries).
pub(crate) use ra_hex::encode as hex;
