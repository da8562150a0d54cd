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
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
