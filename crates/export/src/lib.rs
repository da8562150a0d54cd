//! Traces as tables and timelines: one streaming pass over a trace ([`pass`]), each event made
//! a row of the `calls` table ([`row`], columns from the registry in [`columns`]), handed to a
//! sink per format ([`parquet`], [`csv`]). docs/TRACE_FORMAT.md section 12 documents the tables.
//!
//! # Parts
//!
//! Traces as tables (docs/TRACE_FORMAT.md section 12, docs/ANALYSIS.md): `pass` reads a trace once
//! in `unique_id` order (`sharing_buffers`) and hands a `Sink` the rows of `calls` (`row`: common
//! fields, every registry argument in its typed column from `columns`, `fd_path` and `comm` from
//! `ra_trace::fileio`, fs operations through `ra_trace::fsop::to_syscalls` into the same columns),
//! the distinct data buffers (BLAKE3), facts, losses, snapshot entries and `profile --json`
//! intervals; `buffer` holds rows column by column (a row costs the cells it has); `parquet` writes
//! each table of each trace beneath `TABLE/host=H/trace=T/` with arrow-rs's `parquet` (no arrow),
//! `calls` in row groups per `io_class` sorted by call and time, bounded by rows and bytes held.

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
