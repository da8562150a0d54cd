use std::path::PathBuf;

/// Errors of the trace layer. DataSeries-level problems (checksums, truncation) arrive wrapped
/// in [`Error::DataSeries`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    DataSeries(#[from] dataseries::Error),
    #[error("{path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("not a system-call trace: no `{prefix}*` extent types (this is a plain DataSeries file; `dump` still prints its records)")]
    NotATrace { prefix: &'static str },
    #[error("extent type `{type_name}` lacks the field `{field}` that the schema requires")]
    MissingField { type_name: String, field: String },
    #[error("record of `{type_name}` at extent offset {extent_offset}: {problem}")]
    BadRecord { type_name: String, extent_offset: u64, problem: String },
    /// A record whose fields no recorder writes (checked where they are used: replay).
    #[error("record #{unique_id} ({call}): {problem}")]
    BadEvent { unique_id: u64, call: String, problem: String },
    #[error("unique_id {got} does not increase (previous {previous})")]
    NonMonotonicId { previous: u64, got: u64 },
    #[error("event for `{call}` has {got} argument values, the registry defines {expected}")]
    ArgCount { call: &'static str, expected: usize, got: usize },
    #[error(
        "buffer of {len} bytes in `{call}`.{field} exceeds the per-record limit of {limit} bytes"
    )]
    BufferTooLarge { call: &'static str, field: &'static str, len: usize, limit: usize },
    #[error("unknown system call `{0}` (not in the registry)")]
    UnknownCall(String),
    #[error(transparent)]
    FsState(#[from] ra_fsstate::Error),
    #[error("the trace has no snapshot {index} ({count} recorded; `reanimator record --snapshot DIR` records one)")]
    NoSuchSnapshot { index: u32, count: usize },
    #[error("the {phase} state of snapshot {index} is incomplete (the recorder stopped while storing it)")]
    SnapshotIncomplete { index: u32, phase: &'static str },
    #[error("{type_name} extent at offset {extent_offset}, record {row}: {problem}")]
    SnapshotRecord {
        type_name: &'static str,
        extent_offset: u64,
        row: usize,
        problem: crate::snapshot::SnapshotProblem,
    },
    #[error("the {phase} state of snapshot {index} holds {found} entries, the trace info says {expected}")]
    SnapshotCount { index: u32, phase: &'static str, expected: u64, found: u64 },
    #[error("{name}: {detail}")]
    StreamFrame { name: String, detail: String },
    #[error("{name}: more than {limit} bytes of calls ({held}) wait for earlier ones: the stream has no watermarks (TRACE_FORMAT 3.12: its writer predates them, or is not reanimator); read it from a file")]
    StreamHold { name: String, held: usize, limit: usize },
    #[error("{name}: an encrypted trace cannot be read from a stream (its chunks are read where the file keeps them): read it from a file")]
    StreamEncrypted { name: String },
    #[error("{0}")]
    Anonymize(String),
    /// `anonymize --reverse` with a key that does not open the pseudonym table. Names key
    /// fingerprints only, never a key.
    #[error("the key (fingerprint {given}) does not open this trace's pseudonym table{}", .expected.as_ref().map(|e| format!(" (it was anonymized with the key of fingerprint {e})")).unwrap_or_default())]
    WrongKey { given: String, expected: Option<String> },
}

impl Error {
    /// Proof that the trace was tampered with ([`dataseries::Error::is_tampering`]).
    pub fn is_tampering(&self) -> bool {
        matches!(self, Error::DataSeries(e) if e.is_tampering())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
