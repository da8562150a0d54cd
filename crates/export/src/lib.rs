//! Traces as tables and timelines: one streaming pass over a trace ([`pass`]), each event made
//! a row of the `calls` table ([`row`], columns from the registry in [`columns`]), handed to a
//! sink per format ([`parquet`], [`csv`]). docs/TRACE_FORMAT.md section 12 documents the tables.

pub mod buffer;
pub mod columns;
pub mod csv;
pub mod ctf;
pub mod parquet;
pub mod pass;
pub mod row;
pub mod timeline;

use std::path::{Path, PathBuf};

/// What can go wrong in an export.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("reading the trace: {0}")]
    Trace(#[from] ra_trace::Error),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: writing Parquet: {source}")]
    Parquet { path: PathBuf, source: ::parquet::errors::ParquetError },
    #[error("stopped")]
    Stopped,
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io { path: path.to_path_buf(), source }
    }
    pub(crate) fn parquet(path: &Path, source: ::parquet::errors::ParquetError) -> Error {
        Error::Parquet { path: path.to_path_buf(), source }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
