use std::io;
use std::path::PathBuf;

use crate::entry::{escape, escape_bytes, Digest, EntryProblem, PathProblem};

/// An error from a caller-supplied [`crate::BlobSink`] or [`crate::ContentSource`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of this crate. Paths inside a tree are bytes relative to its root (shown escaped,
/// the root as `.`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- scanning ----
    #[error("cannot open the directory {}: {source}", path.display())]
    OpenRoot {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: {call}: {source}", escape(path))]
    Scan {
        path: Vec<u8>,
        call: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("{}: {call} of xattr `{}`: {source}", escape(path), escape_bytes(name))]
    Xattr {
        path: Vec<u8>,
        call: &'static str,
        name: Vec<u8>,
        #[source]
        source: io::Error,
    },
    #[error(
        "{}: changed while it was being scanned ({what}); scan a tree nobody is changing",
        escape(path)
    )]
    Changed { path: Vec<u8>, what: &'static str },
    #[error("{}: storing the content failed: {source}", escape(path))]
    Sink {
        path: Vec<u8>,
        #[source]
        source: BoxError,
    },
    #[error("scan interrupted at {}", escape(path))]
    Interrupted { path: Vec<u8> },

    // ---- manifests ----
    #[error("cannot open the manifest {}: {source}", path.display())]
    ManifestOpen {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("manifest line {line}: {source}")]
    ManifestRead {
        line: u64,
        #[source]
        source: io::Error,
    },
    #[error("manifest line {line}: not valid JSON: {source}")]
    ManifestJson {
        line: u64,
        #[source]
        source: serde_json::Error,
    },
    #[error("manifest line {line}: {problem}")]
    ManifestLine { line: u64, problem: LineProblem },
    #[error("manifest line {line}: {}: {problem}", escape(path))]
    ManifestEntry { line: u64, path: Vec<u8>, problem: EntryProblem },
    #[error("manifest line {line}: {} is not after {}: entries must be sorted by path bytes, each path once", escape(path), escape(previous))]
    ManifestOrder { line: u64, path: Vec<u8>, previous: Vec<u8> },
    #[error("manifest is truncated: it ends after line {line} without its closing `end` line")]
    ManifestTruncated { line: u64 },
    #[error("writing the manifest: {source}")]
    ManifestWrite {
        #[source]
        source: io::Error,
    },
    #[error(
        "manifest entry {} is not after {}: entries must be written in path order",
        escape(path),
        escape(previous)
    )]
    WriteOrder { path: Vec<u8>, previous: Vec<u8> },

    // ---- diff ----
    #[error(
        "{side} side of the diff: {} is not after {}: inputs must be sorted by path bytes",
        escape(path),
        escape(previous)
    )]
    Unsorted { side: char, path: Vec<u8>, previous: Vec<u8> },

    // ---- restore ----
    #[error(
        "the restore destination is not empty (it holds `{}`); restore needs an empty directory",
        escape_bytes(first)
    )]
    DestinationNotEmpty { first: Vec<u8> },
    #[error(
        "restore: the first entry must be the root directory (empty path), not {}",
        escape(path)
    )]
    NoRoot { path: Vec<u8> },
    #[error("restore: {}: {problem}", escape(path))]
    BadEntry { path: Vec<u8>, problem: EntryProblem },
    #[error("restore: {}: {problem}", escape(path))]
    BadPath { path: Vec<u8>, problem: PathProblem },
    #[error(
        "restore: {} is not after {}: entries must come in path order, each path once",
        escape(path),
        escape(previous)
    )]
    RestoreOrder { path: Vec<u8>, previous: Vec<u8> },
    #[error("restore: {}: {call}: {source}", escape(path))]
    Restore {
        path: Vec<u8>,
        call: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("restore: content {digest}: chunk at offset {offset} ({len} bytes) runs past the end of the {size}-byte file {}", escape(path))]
    ChunkOutOfRange { digest: Digest, offset: u64, len: usize, size: u64, path: Vec<u8> },
    #[error("restore: {}: content does not match its digest (expected {expected}, found {found}): the content source lacks or damages it", escape(path))]
    ContentMismatch { path: Vec<u8>, expected: Digest, found: Digest },
    #[error("restore: {} was replaced by another object during the restore", escape(path))]
    Replaced { path: Vec<u8> },
    #[error("content source: {source}")]
    Source {
        #[source]
        source: BoxError,
    },

    // ---- object store ----
    #[error("object store {}: {call}: {source}", path.display())]
    Store {
        path: PathBuf,
        call: &'static str,
        #[source]
        source: io::Error,
    },
}

/// What is wrong with one manifest line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    #[error("not a reanimator manifest (the first line must be {{\"format\":\"reanimator-manifest\",...}})")]
    NotAManifest,
    #[error("manifest version {0} is not supported (this reader knows version 1)")]
    Version(u64),
    #[error("field `{0}` is missing")]
    Missing(&'static str),
    #[error("field `{0}` has a bad value")]
    BadValue(&'static str),
    #[error("fields `{0}` and `{0}_hex` are both present")]
    Both(&'static str),
    #[error("line longer than {0} bytes")]
    TooLong(usize),
    #[error("the `end` line counts {declared} entries, the manifest holds {found}")]
    Count { declared: u64, found: u64 },
    #[error("text after the closing `end` line")]
    AfterEnd,
    #[error("the first entry must be the root directory (empty path)")]
    NoRoot,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
