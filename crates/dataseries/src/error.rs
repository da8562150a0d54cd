//! The crate's single error type.

use crate::{Compression, FieldType};

/// Which section of an extent an error refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The fixed-size records.
    Fixed,
    /// The variable32 heap.
    Variable,
}

impl std::fmt::Display for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Section::Fixed => "fixed",
            Section::Variable => "variable",
        })
    }
}

/// Which extent checksum failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checksum {
    /// adler32 over the stored (compressed) extent bytes.
    Adler32,
    /// Jenkins lookup2 hash over the uncompressed sections.
    BjHash,
}

impl std::fmt::Display for Checksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Checksum::Adler32 => "adler32",
            Checksum::BjHash => "bjhash",
        })
    }
}

/// Every failure of this crate. The `Display` form is one line; for problems inside a file it
/// names the file offset of the extent (or trailer) and the check that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation failed.
    #[error("I/O error ({context})")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An extent reached through the ExtentIndex is not of the type the index names there.
    #[error("extent at offset {extent_offset}: the ExtentIndex names type {expected}, the extent is {found}")]
    IndexMismatch {
        /// File offset of the extent.
        extent_offset: u64,
        /// The type the index names.
        expected: String,
        /// The extent's own type.
        found: String,
    },
    /// The ExtentIndex disagrees with the extents in the file (an entry at no extent, an
    /// extent the index leaves out, an entry listed twice).
    #[error("ExtentIndex at offset {index_offset}: {detail}")]
    BadIndex {
        /// File offset of the index extent.
        index_offset: u64,
        /// What disagrees, with the offsets involved.
        detail: String,
    },
    /// The file does not begin with DataSeries' magic `DSv1`: some other kind of file.
    #[error("not a DataSeries file: {detail}")]
    NotDataSeries {
        /// What the file is instead: empty, or what it begins with.
        detail: String,
    },
    /// The 40-byte file header is not a DSv1 header.
    #[error("file header: {check} check failed")]
    BadFileHeader {
        /// The check that failed (e.g. "magic DSv1").
        check: &'static str,
    },
    /// The file ends inside an extent.
    #[error("extent at offset {extent_offset}: truncated ({what} needs {needed} bytes, {available} available)")]
    TruncatedExtent {
        /// File offset of the extent.
        extent_offset: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A header field of an extent is out of range.
    #[error("extent at offset {extent_offset}: header check failed: {check} (value {value})")]
    BadExtentHeader {
        /// File offset of the extent.
        extent_offset: u64,
        /// The check that failed.
        check: &'static str,
        /// The offending value.
        value: i64,
    },
    /// A stored checksum does not match the data.
    #[error("extent at offset {extent_offset}: {check} check failed (stored {expected:#010x}, computed {found:#010x})")]
    BadChecksum {
        /// File offset of the extent.
        extent_offset: u64,
        /// Which checksum.
        check: Checksum,
        /// The value stored in the extent header.
        expected: u32,
        /// The value computed from the data.
        found: u32,
    },
    /// The compression mode byte is not one of 0..=7.
    #[error("extent at offset {extent_offset}: compression mode check failed: unknown mode {mode} for the {section} section")]
    UnknownCompression {
        /// File offset of the extent.
        extent_offset: u64,
        /// Which section.
        section: Section,
        /// The mode byte.
        mode: u8,
    },
    /// The codec rejected the compressed data.
    #[error("extent at offset {extent_offset}: {mode} decompression of the {section} section failed: {detail}")]
    Decompress {
        /// File offset of the extent.
        extent_offset: u64,
        /// Which section.
        section: Section,
        /// The codec.
        mode: Compression,
        /// The codec's message.
        detail: String,
    },
    /// A section decompressed to an unexpected length.
    #[error("extent at offset {extent_offset}: {section} section size check failed (expected {expected} bytes, got {found})")]
    SectionSize {
        /// File offset of the extent.
        extent_offset: u64,
        /// Which section.
        section: Section,
        /// Expected length.
        expected: u64,
        /// Actual length (or a lower bound when decoding stopped early).
        found: u64,
    },
    /// The extent's type name is not in the type library.
    #[error("extent at offset {extent_offset}: type check failed: no type named '{type_name}' registered")]
    UnknownType {
        /// File offset of the extent.
        extent_offset: u64,
        /// The name in the extent header.
        type_name: String,
    },
    /// A variable32 field points outside the heap.
    #[error("extent at offset {extent_offset}: variable32 check failed: record {record} field '{field}' heap offset {heap_offset}: {check}")]
    BadVariable32 {
        /// File offset of the extent.
        extent_offset: u64,
        /// Record index in the extent.
        record: u64,
        /// Field name.
        field: String,
        /// The stored heap offset.
        heap_offset: i64,
        /// The check that failed.
        check: &'static str,
    },
    /// The variable32 heap is malformed.
    #[error("extent at offset {extent_offset}: variable heap check failed at heap offset {heap_offset}: {check}")]
    BadHeap {
        /// File offset of the extent.
        extent_offset: u64,
        /// Offset inside the heap.
        heap_offset: u64,
        /// The check that failed.
        check: &'static str,
    },
    /// Null-compacted fixed data does not expand to the declared records.
    #[error("extent at offset {extent_offset}: null compaction check failed: {check}")]
    BadNullCompaction {
        /// File offset of the extent.
        extent_offset: u64,
        /// The check that failed.
        check: &'static str,
    },
    /// An XmlType extent that is not the first extent, or a first extent of another type.
    #[error("extent at offset {extent_offset}: type library check failed: {check}")]
    BadTypeLibrary {
        /// File offset of the extent.
        extent_offset: u64,
        /// The check that failed.
        check: &'static str,
    },
    /// Two different XML descriptions for one type name.
    #[error("type library check failed: type '{name}' is registered twice with different XML")]
    TypeConflict {
        /// The type name.
        name: String,
    },
    /// The trailer is damaged.
    #[error("trailer at offset {trailer_offset}: {check} check failed")]
    BadTrailer {
        /// File offset of the trailer (or where it should be).
        trailer_offset: u64,
        /// The check that failed.
        check: &'static str,
    },
    /// No valid trailer, and sequential reading stopped at a damaged or incomplete extent
    /// header: the file's tail was overwritten, or the writer stopped before finishing it.
    #[error("trailer at offset {trailer_offset}: {check} check failed (the file tail is damaged or unfinished; {cause})")]
    DamagedTail {
        /// Where the trailer should be (file length - 28).
        trailer_offset: u64,
        /// The trailer check that failed.
        check: &'static str,
        /// File offset of the extent where reading stopped.
        extent_offset: u64,
        /// Why that extent could not be read (part of this error's one-line message, so not
        /// also exposed as its `source`).
        cause: Box<Error>,
    },
    /// The extent type XML is not well-formed.
    #[error("extent type XML does not parse: {detail}")]
    XmlParse {
        /// The parser's message.
        detail: String,
    },
    /// The extent type XML is well-formed but not a valid DataSeries type.
    #[error("extent type '{type_name}'{}: {reason}", field.as_ref().map(|f| format!(" field '{f}'")).unwrap_or_default())]
    InvalidType {
        /// The type name (may be empty when the name itself is missing).
        type_name: String,
        /// The field concerned, if any.
        field: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// `ExtentBuilder::set` was given a field index past the type's fields.
    #[error("field index {index} out of range (type has {count} fields)")]
    NoSuchField {
        /// The index given.
        index: usize,
        /// Number of fields.
        count: usize,
    },
    /// `ExtentBuilder::set` was called before `start_record`.
    #[error("set() called before start_record()")]
    NoRecord,
    /// A value of the wrong type was given for a field.
    #[error("field '{field}' is {expected:?}, got a {got} value")]
    WrongValueType {
        /// Field name.
        field: String,
        /// The field's type.
        expected: FieldType,
        /// The kind of value given.
        got: &'static str,
    },
    /// A fixedwidth value of the wrong length.
    #[error("field '{field}' is fixedwidth {expected}, got {found} bytes")]
    WrongWidth {
        /// Field name.
        field: String,
        /// The declared width.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// `Value::Null` for a field that is not nullable.
    #[error("field '{field}' is not nullable")]
    NotNullable {
        /// Field name.
        field: String,
    },
    /// An encrypted file that cannot be read: damaged, or appended to.
    #[error("{detail}")]
    Encrypted {
        /// What is wrong (never the key).
        detail: String,
    },
    /// An encrypted file read without its key, or with another.
    #[error("{detail}")]
    EncryptionKey {
        /// Which key the file needs (its public id, never a key).
        detail: String,
    },
    /// A seal check failed ([`crate::seal`]): the file was changed, cut before its first seal,
    /// is not sealed, or was sealed with another key.
    #[error("seal check failed: {0}")]
    Seal(crate::seal::SealFailure),
    /// The writer was asked to write an extent whose type was not declared at creation.
    #[error("extent type '{type_name}' was not declared to the writer")]
    TypeNotDeclared {
        /// The type name.
        type_name: String,
    },
    /// A size exceeds a format limit.
    #[error("{what} of {size} bytes exceeds the format limit of {limit}")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A compressor failed.
    #[error("{mode} compression failed: {detail}")]
    Compress {
        /// The codec.
        mode: Compression,
        /// The codec's message.
        detail: String,
    },
    /// A background thread of the writer or reader died.
    #[error("background {what} thread terminated unexpectedly")]
    ThreadFailed {
        /// Which thread.
        what: &'static str,
    },
    /// The writer already failed; it accepts no more work.
    #[error("writer is unusable after an earlier error")]
    WriterPoisoned,
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }

    /// The error is proof that the file was tampered with (or cut before anything in it
    /// could be verified): a seal that does not verify or is missing where a seal key was
    /// given, an encrypted chunk that fails authentication, damaged encryption framing. Not
    /// for another key (that is the reader's mistake), nor for the checksum errors of a file
    /// read without a key (damage and tampering look alike there).
    pub fn is_tampering(&self) -> bool {
        match self {
            Error::Seal(f) => f.kind != crate::seal::FailureKind::WrongKey,
            Error::Encrypted { .. } => true,
            Error::Io { source, .. } => {
                source.get_ref().is_some_and(|e| e.is::<crate::crypt::ChunkAuthFailed>())
            }
            _ => false,
        }
    }

    /// The seal failure, for [`Error::Seal`].
    pub fn seal_failure(&self) -> Option<&crate::seal::SealFailure> {
        match self {
            Error::Seal(f) => Some(f),
            _ => None,
        }
    }

    /// An extent (or its header) that does not fit in what is left of the file.
    pub(crate) fn cut_short(&self) -> bool {
        matches!(self, Error::TruncatedExtent { .. })
    }

    pub(crate) fn invalid_type(
        type_name: &str,
        field: Option<&str>,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidType {
            type_name: type_name.to_string(),
            field: field.map(str::to_string),
            reason: reason.into(),
        }
    }

    /// For a [`Error::DamagedTail`] whose trailer marker is missing and whose last extent is
    /// cut short (the extents before it are whole): that extent. `None` for any other error,
    /// including a tail whose header is garbage rather than short.
    pub fn cut_tail(&self) -> Option<CutTail> {
        match self {
            Error::DamagedTail { check: "marker", extent_offset, cause, .. } => match **cause {
                Error::TruncatedExtent { needed, available, .. } => Some(CutTail {
                    extent_offset: *extent_offset,
                    extent_bytes: needed,
                    bytes_present: available,
                }),
                _ => None,
            },
            _ => None,
        }
    }

    /// The file offset of the extent (or trailer) this error is about, if any. For
    /// [`Error::DamagedTail`] it is the extent where reading stopped.
    pub fn extent_offset(&self) -> Option<u64> {
        match self {
            Error::TruncatedExtent { extent_offset, .. }
            | Error::BadExtentHeader { extent_offset, .. }
            | Error::BadChecksum { extent_offset, .. }
            | Error::UnknownCompression { extent_offset, .. }
            | Error::Decompress { extent_offset, .. }
            | Error::SectionSize { extent_offset, .. }
            | Error::UnknownType { extent_offset, .. }
            | Error::BadVariable32 { extent_offset, .. }
            | Error::BadHeap { extent_offset, .. }
            | Error::BadNullCompaction { extent_offset, .. }
            | Error::BadTypeLibrary { extent_offset, .. } => Some(*extent_offset),
            Error::BadTrailer { trailer_offset, .. } => Some(*trailer_offset),
            Error::DamagedTail { extent_offset, .. } => Some(*extent_offset),
            _ => None,
        }
    }
}

/// A file without trailer that ends inside its last extent: what a writer stopped in the
/// middle of writing it leaves (a killed recorder, whose writes are blocks, not extents), or a
/// damaged tail. See [`Error::cut_tail`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutTail {
    /// File offset of the extent that is cut short.
    pub extent_offset: u64,
    /// Bytes that extent needs.
    pub extent_bytes: u64,
    /// Bytes the file has from its offset on.
    pub bytes_present: u64,
}

impl std::fmt::Display for CutTail {
    /// "ends inside the extent at offset X (P of its N bytes: ...); its records are lost".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ends inside the extent at offset {} ({} of its {} bytes: the writer was stopped while \
             writing it, or the tail is damaged); its records are lost",
            self.extent_offset, self.bytes_present, self.extent_bytes
        )
    }
}
