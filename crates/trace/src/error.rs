use std::path::PathBuf;

/// Errors of the trace layer. DataSeries-level problems (checksums, truncation) arrive wrapped
/// in [`Error::DataSeries`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The DataSeries layer refused the file: bad header, checksum or MAC, truncation,
    /// decompression, or an I/O error reading it.
    #[error(transparent)]
    DataSeries(#[from] dataseries::Error),
    /// Creating the output ([`crate::TraceWriter::create`], [`crate::TraceWriter::open`]) or
    /// reading a stream ([`crate::StreamReader`]) failed.
    #[error("{path}")]
    Io {
        /// The file, the destination as [`crate::Destination`] displays it, or the
        /// stream's name.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A DataSeries file or stream without a single `IOTTAFSL::Trace::Syscall::` (`prefix`)
    /// extent type.
    #[error("not a system-call trace: no `{prefix}*` extent types (this is a plain DataSeries file; `dump` still prints its records)")]
    NotATrace {
        /// The extent type prefix looked for.
        prefix: &'static str,
    },
    /// An extent type of the trace (a snapshot's, the fs aggregate's) lacks a field the
    /// reader needs.
    #[error("extent type `{type_name}` lacks the field `{field}` that the schema requires")]
    MissingField {
        /// The extent type's name.
        type_name: String,
        /// The missing field, or a list of the fields of which one is missing.
        field: String,
    },
    /// A record whose value cannot be what its field means (an fs aggregate's histogram of
    /// the wrong size).
    #[error("record of `{type_name}` at extent offset {extent_offset}: {problem}")]
    BadRecord {
        /// The extent type's name.
        type_name: String,
        /// The extent's byte offset in the file (0 when unknown).
        extent_offset: u64,
        /// What is wrong, as a sentence (the row included).
        problem: String,
    },
    /// A record whose fields no recorder writes (checked where they are used: replay).
    #[error("record #{unique_id} ({call}): {problem}")]
    BadEvent {
        /// The event's `unique_id`.
        unique_id: u64,
        /// The event's call name.
        call: String,
        /// What is wrong, as a sentence.
        problem: String,
    },
    /// [`crate::TraceWriter::append_preserving`] or `append_fs_preserving` was given an id
    /// not above the last one written.
    #[error("unique_id {got} does not increase (previous {previous})")]
    NonMonotonicId {
        /// The last id written.
        previous: u64,
        /// The id refused.
        got: u64,
    },
    /// An event handed to the writer whose `args` are not aligned with its registry entry.
    #[error("event for `{call}` has {got} argument values, the registry defines {expected}")]
    ArgCount {
        /// The registry name of the call.
        call: &'static str,
        /// Arguments the registry defines.
        expected: usize,
        /// Values the event carried.
        got: usize,
    },
    /// A buffer larger than a record can hold that the writer cannot keep as a digest: a
    /// string of an `argv`/`envp` array, an fs operation's data, a snapshot content chunk
    /// (data buffers that large are kept as their digest instead).
    #[error(
        "buffer of {len} bytes in `{call}`.{field} exceeds the per-record limit of {limit} bytes"
    )]
    BufferTooLarge {
        /// The call (or `snapshot blob`, the fs operation) whose buffer it is.
        call: &'static str,
        /// The trace field the buffer goes into.
        field: &'static str,
        /// The buffer's size in bytes.
        len: usize,
        /// The limit in bytes ([`crate::WriterConfig::max_buffer_bytes`], or
        /// [`ra_fsstate::CHUNK_BYTES`] for content chunks).
        limit: usize,
    },
    /// The writer was given an event without a registry entry (or one the schema has no
    /// type for), or an fs record or aggregate row while not created with `fs_ops`.
    #[error("unknown system call `{0}` (not in the registry)")]
    UnknownCall(String),
    /// Scanning, storing or restoring a snapshot's tree or contents failed.
    #[error(transparent)]
    FsState(#[from] ra_fsstate::Error),
    /// A snapshot index the trace does not have.
    #[error("the trace has no snapshot {index} ({count} recorded; `reanimator record --snapshot DIR` records one)")]
    NoSuchSnapshot {
        /// The index asked for.
        index: u32,
        /// How many snapshots the trace holds.
        count: usize,
    },
    /// The state asked for was not stored completely (the recorder stopped while storing
    /// it), so it cannot be read or restored.
    #[error("the {phase} state of snapshot {index} is incomplete (the recorder stopped while storing it)")]
    SnapshotIncomplete {
        /// The snapshot's index.
        index: u32,
        /// `start` or `end` ([`crate::Phase::name`]).
        phase: &'static str,
    },
    /// A snapshot entry or content record that does not decode, or breaks an invariant.
    #[error("{type_name} extent at offset {extent_offset}, record {row}: {problem}")]
    SnapshotRecord {
        /// `Reanimator::Snapshot` or `Reanimator::Blob`.
        type_name: &'static str,
        /// The extent's byte offset in the file.
        extent_offset: u64,
        /// The record's row in that extent.
        row: usize,
        /// What is wrong with it.
        problem: crate::snapshot::SnapshotProblem,
    },
    /// A stored state holds another number of entries than its `entries` fact says.
    #[error("the {phase} state of snapshot {index} holds {found} entries, the trace info says {expected}")]
    SnapshotCount {
        /// The snapshot's index.
        index: u32,
        /// `start` or `end`.
        phase: &'static str,
        /// Entries the trace info states.
        expected: u64,
        /// Entries read.
        found: u64,
    },
    /// A streamed trace ([`crate::StreamReader`]) whose bytes do not frame into extents, or
    /// that does not begin with its type library.
    #[error("{name}: {detail}")]
    StreamFrame {
        /// The stream's name (`-` or the file followed).
        name: String,
        /// What is wrong, as a sentence.
        detail: String,
    },
    /// A streamed trace made the reader hold more than
    /// [`crate::StreamOptions::hold_bytes`] of decoded calls waiting for earlier ones: a
    /// stream without watermarks.
    #[error("{name}: more than {limit} bytes of calls ({held}) wait for earlier ones: the stream has no watermarks (TRACE_FORMAT 3.12: its writer predates them, or is not reanimator); read it from a file")]
    StreamHold {
        /// The stream's name.
        name: String,
        /// Bytes held when the reader gave up.
        held: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// An encrypted trace given as a stream: its chunks can only be read from a file.
    #[error("{name}: an encrypted trace cannot be read from a stream (its chunks are read where the file keeps them): read it from a file")]
    StreamEncrypted {
        /// The stream's name.
        name: String,
    },
    /// `ra-anonymize` refused an input or an option (a record type without a registry
    /// entry, fs aggregate rows, a time origin out of range, a field that cannot be
    /// reversible), or could not make or read the reverse table (none stored, damaged); the
    /// message says which.
    #[error("{0}")]
    Anonymize(String),
    /// `anonymize --reverse` with a key that does not open the pseudonym table. Names key
    /// fingerprints only, never a key.
    #[error("the key (fingerprint {given}) does not open this trace's pseudonym table{}", .expected.as_ref().map(|e| format!(" (it was anonymized with the key of fingerprint {e})")).unwrap_or_default())]
    WrongKey {
        /// Fingerprint of the key given ([`crate::key::Key::fingerprint`]).
        given: String,
        /// Fingerprint of the key the trace was anonymized with, from its
        /// `anonymized_key_fingerprint` fact; `None` when the trace lacks it.
        expected: Option<String>,
    },
}

impl Error {
    /// Proof that the trace was tampered with ([`dataseries::Error::is_tampering`]).
    pub fn is_tampering(&self) -> bool {
        matches!(self, Error::DataSeries(e) if e.is_tampering())
    }
}

/// The result of the trace layer's fallible functions, with its [`Error`] by default.
pub type Result<T, E = Error> = std::result::Result<T, E>;
