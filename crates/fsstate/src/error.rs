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
    /// The directory to scan could not be opened ([`crate::Scanner::new`]).
    #[error("cannot open the directory {}: {source}", path.display())]
    OpenRoot {
        /// The directory as the caller named it.
        path: PathBuf,
        /// `open`'s error.
        #[source]
        source: io::Error,
    },
    /// A system call on an object of the tree failed during a scan; also an object whose
    /// `st_mode` is no known file type (`fstatat`, with an error of kind `Other`).
    #[error("{}: {call}: {source}", escape(path))]
    Scan {
        /// The object's path relative to the root.
        path: Vec<u8>,
        /// The call that failed (`openat`, `fstatat`, `fstat`, `getdents64`, `pread`, ...).
        call: &'static str,
        /// The call's error (its errno).
        #[source]
        source: io::Error,
    },
    /// Listing, reading or (in a restore) setting an extended attribute failed.
    #[error("{}: {call} of xattr `{}`: {source}", escape(path), escape_bytes(name))]
    Xattr {
        /// The object's path relative to the root.
        path: Vec<u8>,
        /// `listxattr`, `getxattr` or `setxattr`.
        call: &'static str,
        /// The attribute's name (empty for `listxattr`).
        name: Vec<u8>,
        /// The call's error (its errno).
        #[source]
        source: io::Error,
    },
    /// The tree changed under the scan: an object was replaced by another between its `stat`
    /// and its opening (or a directory between its listing and its entering), or a large
    /// file's content changed between its two reads (hash, then store).
    #[error(
        "{}: changed while it was being scanned ({what}); scan a tree nobody is changing",
        escape(path)
    )]
    Changed {
        /// The object's path relative to the root.
        path: Vec<u8>,
        /// What changed, for the message (`a directory was replaced`, ...).
        what: &'static str,
    },
    /// The [`crate::BlobSink`] failed to take a file's content.
    #[error("{}: storing the content failed: {source}", escape(path))]
    Sink {
        /// The file's path relative to the root.
        path: Vec<u8>,
        /// The sink's error, as it returned it.
        #[source]
        source: BoxError,
    },
    /// The scan's [`crate::ProgressFn`] returned `Break`.
    #[error("scan interrupted at {}", escape(path))]
    Interrupted {
        /// The path of the entry (or file being read) at which the scan stopped.
        path: Vec<u8>,
    },

    // ---- manifests ----
    /// A manifest file could not be opened ([`crate::Manifest::load`],
    /// [`crate::ManifestFile::open`]).
    #[error("cannot open the manifest {}: {source}", path.display())]
    ManifestOpen {
        /// The manifest's path as given.
        path: PathBuf,
        /// `open`'s error.
        #[source]
        source: io::Error,
    },
    /// Reading a manifest's line failed.
    #[error("manifest line {line}: {source}")]
    ManifestRead {
        /// The number of the line being read, from 1.
        line: u64,
        /// The reader's error.
        #[source]
        source: io::Error,
    },
    /// A manifest line is not JSON, or not JSON of the line's shape.
    #[error("manifest line {line}: not valid JSON: {source}")]
    ManifestJson {
        /// The line's number, from 1.
        line: u64,
        /// What `serde_json` found.
        #[source]
        source: serde_json::Error,
    },
    /// A manifest line is JSON but not an acceptable header, entry or closing line.
    #[error("manifest line {line}: {problem}")]
    ManifestLine {
        /// The line's number, from 1.
        line: u64,
        /// What is wrong with it.
        problem: LineProblem,
    },
    /// A manifest entry parses but is inconsistent ([`crate::Entry::check`]).
    #[error("manifest line {line}: {}: {problem}", escape(path))]
    ManifestEntry {
        /// The line's number, from 1.
        line: u64,
        /// The entry's path.
        path: Vec<u8>,
        /// What [`crate::Entry::check`] found.
        problem: EntryProblem,
    },
    /// A manifest's entries are not in strictly increasing path order.
    #[error("manifest line {line}: {} is not after {}: entries must be sorted by path bytes, each path once", escape(path), escape(previous))]
    ManifestOrder {
        /// The line's number, from 1.
        line: u64,
        /// The path out of order.
        path: Vec<u8>,
        /// The path of the entry before it, which `path` does not sort after.
        previous: Vec<u8>,
    },
    /// A manifest ends without its closing `{"end":...}` line (cut short, or never
    /// finished).
    #[error("manifest is truncated: it ends after line {line} without its closing `end` line")]
    ManifestTruncated {
        /// The number of the last line present.
        line: u64,
    },
    /// Writing (or flushing) a manifest failed.
    #[error("writing the manifest: {source}")]
    ManifestWrite {
        /// The writer's error.
        #[source]
        source: io::Error,
    },
    /// [`crate::ManifestWriter::write`] was given an entry whose path does not sort after the
    /// previous entry's; nothing was written for it.
    #[error(
        "manifest entry {} is not after {}: entries must be written in path order",
        escape(path),
        escape(previous)
    )]
    WriteOrder {
        /// The entry's path.
        path: Vec<u8>,
        /// The previous entry's path.
        previous: Vec<u8>,
    },

    // ---- diff ----
    /// One input of a diff is not in strictly increasing path order.
    #[error(
        "{side} side of the diff: {} is not after {}: inputs must be sorted by path bytes",
        escape(path),
        escape(previous)
    )]
    Unsorted {
        /// `A` (the first input of [`crate::diff()`]) or `B`.
        side: char,
        /// The path out of order.
        path: Vec<u8>,
        /// The path before it on that side, which `path` does not sort after.
        previous: Vec<u8>,
    },

    // ---- restore ----
    /// The restore destination holds something; [`crate::restore()`] creates nothing then.
    #[error(
        "the restore destination is not empty (it holds `{}`); restore needs an empty directory",
        escape_bytes(first)
    )]
    DestinationNotEmpty {
        /// The first name found in it.
        first: Vec<u8>,
    },
    /// The first entry to restore is not the root (empty path).
    #[error(
        "restore: the first entry must be the root directory (empty path), not {}",
        escape(path)
    )]
    NoRoot {
        /// The first entry's path.
        path: Vec<u8>,
    },
    /// An entry to restore is inconsistent ([`crate::Entry::check`]) other than by its path;
    /// also a file whose digest is missing when its copy is made.
    #[error("restore: {}: {problem}", escape(path))]
    BadEntry {
        /// The entry's path.
        path: Vec<u8>,
        /// What is wrong with it.
        problem: EntryProblem,
    },
    /// An entry to restore has a path (or hard-link path) that could leave the destination
    /// or is otherwise unacceptable ([`crate::check_path`]).
    #[error("restore: {}: {problem}", escape(path))]
    BadPath {
        /// The entry's path.
        path: Vec<u8>,
        /// What is wrong with the path.
        problem: PathProblem,
    },
    /// The entries to restore are not in strictly increasing path order (in some pass).
    #[error(
        "restore: {} is not after {}: entries must come in path order, each path once",
        escape(path),
        escape(previous)
    )]
    RestoreOrder {
        /// The path out of order.
        path: Vec<u8>,
        /// The path before it, which `path` does not sort after.
        previous: Vec<u8>,
    },
    /// A system call of a restore failed.
    #[error("restore: {}: {call}: {source}", escape(path))]
    Restore {
        /// The path, relative to the destination, the call was on (empty: the destination).
        path: Vec<u8>,
        /// The call that failed (`openat2`, `mkdirat`, `linkat`, `pwrite`, `fchown`, ...).
        call: &'static str,
        /// The call's error (its errno).
        #[source]
        source: io::Error,
    },
    /// The content source gave a chunk larger than [`crate::CHUNK_BYTES`] or reaching past the
    /// end of the files of its digest.
    #[error("restore: content {digest}: chunk at offset {offset} ({len} bytes) runs past the end of the {size}-byte file {}", escape(path))]
    ChunkOutOfRange {
        /// The chunk's digest.
        digest: Digest,
        /// The chunk's offset in the file, in bytes.
        offset: u64,
        /// The chunk's length in bytes.
        len: usize,
        /// The file's size in bytes, as its entry gives it.
        size: u64,
        /// The first file with that digest, the one the chunk would be written to.
        path: Vec<u8>,
    },
    /// A restored file's content does not hash to its entry's digest (with
    /// [`crate::RestoreOptions::verify`]), or an empty file's entry has a digest other than
    /// that of no bytes.
    #[error("restore: {}: content does not match its digest (expected {expected}, found {found}): the content source lacks or damages it", escape(path))]
    ContentMismatch {
        /// The file's path.
        path: Vec<u8>,
        /// The entry's digest.
        expected: Digest,
        /// The digest of what the file holds.
        found: Digest,
    },
    /// When the restore came back to set an object's metadata, the object at its path was no
    /// longer of the kind it had created there.
    #[error("restore: {} was replaced by another object during the restore", escape(path))]
    Replaced {
        /// The object's path.
        path: Vec<u8>,
    },
    /// A [`crate::ContentSource`]'s own error.
    #[error("content source: {source}")]
    Source {
        /// The source's error, as it gave it.
        #[source]
        source: BoxError,
    },

    // ---- object store ----
    /// A file-system call of a [`crate::DirStore`] failed.
    #[error("object store {}: {call}: {source}", path.display())]
    Store {
        /// The file or directory the call was on (for `pwrite`, the store's root).
        path: PathBuf,
        /// The call that failed (`mkdir`, `open`, `pwrite`, `ftruncate`, `rename`, `readdir`,
        /// `pread`).
        call: &'static str,
        /// The call's error.
        #[source]
        source: io::Error,
    },
}

/// What is wrong with one manifest line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// The input is empty, or its first line is not JSON with `"format":"reanimator-manifest"`.
    #[error("not a reanimator manifest (the first line must be {{\"format\":\"reanimator-manifest\",...}})")]
    NotAManifest,
    /// The header's `version` is not one this reader reads (1 up to
    /// [`crate::manifest::VERSION`]).
    #[error("manifest version {0} is not supported (this reader knows version 1)")]
    Version(u64),
    /// A required field (named) of an entry is absent.
    #[error("field `{0}` is missing")]
    Missing(&'static str),
    /// A field (named) does not parse: a kind no [`crate::Kind`] has, a mode not in octal, a
    /// digest not 64 hex digits, an `rdev` not `MAJOR:MINOR`, bad hex, or an xattr name twice.
    #[error("field `{0}` has a bad value")]
    BadValue(&'static str),
    /// A byte-string field (named) is given both ways, as version 2's value and as version 1's
    /// `<field>_hex`.
    #[error("fields `{0}` and `{0}_hex` are both present")]
    Both(&'static str),
    /// A line is longer than the limit (in bytes, [`crate::manifest::MAX_LINE_BYTES`]).
    #[error("line longer than {0} bytes")]
    TooLong(usize),
    /// The closing line's count differs from the entries read.
    #[error("the `end` line counts {declared} entries, the manifest holds {found}")]
    Count {
        /// The count the `end` line gives.
        declared: u64,
        /// The entries the manifest holds.
        found: u64,
    },
    /// A line follows the closing `end` line.
    #[error("text after the closing `end` line")]
    AfterEnd,
    /// The first entry is not the root directory.
    #[error("the first entry must be the root directory (empty path)")]
    NoRoot,
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
