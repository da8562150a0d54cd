//! DataSeries (DSv1) codec: reads and writes DataSeries trace files — extent types (XML
//! schemas), all field types, nullable fields, pack transforms, the eight compression modes and
//! the adler32/lookup2 checksums — with bounded memory, whatever the file size.
//!
//! This crate does one job: the DataSeries file format. It knows nothing about system calls.
//!
//! * [`DsReader`] opens a file, checks its header, type library and trailer, and streams
//!   [`Extent`]s decoded on background threads ([`DsReader::extents`]).
//! * [`DsWriter`] writes extents built with [`ExtentBuilder`], compressing on background threads.
//! * [`text`] reproduces `ds2txt` output; [`raw`] exposes single-extent encode/decode.
//!
//! Every check of the C++ library is performed on read (adler32 and bjhash included); any
//! malformed input gives an [`Error`], never a panic.

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
