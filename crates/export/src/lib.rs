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
#![warn(missing_docs)]

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
    /// The input trace could not be opened or read (a malformed extent, a failed seal check,
    /// an I/O error of the reader).
    #[error("reading the trace: {0}")]
    Trace(#[from] ra_trace::Error),
    /// Creating, writing or renaming an output file or directory failed.
    #[error("{path}: {source}")]
    Io {
        /// The output file or directory (often the `.partial` one being written).
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// arrow-rs's Parquet writer refused a row group or the file's footer.
    #[error("{path}: writing Parquet: {source}")]
    Parquet {
        /// The Parquet file being written.
        path: PathBuf,
        /// The writer's error.
        source: ::parquet::errors::ParquetError,
    },
    /// The pass was asked to stop ([`pass::export_trace`]'s `stop` answered true): nothing
    /// is put in place, and dropping the sink removes its `.partial` files.
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

/// The result of every fallible export function, with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
