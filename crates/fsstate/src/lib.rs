//! The logical POSIX state of a file tree, and nothing else: scan a tree into [`Entry`]s (names,
//! kinds, sizes, modes, owners, BLAKE3 content digests, symlink targets, device numbers,
//! xattrs, hard-link groups, mtimes), write and read them as a manifest, diff two trees, and
//! restore a tree into an empty directory from its entries and a source of content.
//! This crate knows nothing about traces or system calls.
//!
//! * [`Scanner`] streams a tree's entries in path order, in bounded memory, never following a
//!   symlink, optionally handing file contents to a [`BlobSink`] (content-addressed).
//! * [`ManifestWriter`] / [`ManifestReader`] / [`Manifest`]: the JSON Lines manifest.
//! * [`diff()`]: a merge of two sorted entry streams into [`Difference`]s.
//! * [`restore()`]: recreate entries beneath an empty directory descriptor, race-free, with
//!   content chunks from a [`ContentSource`].
//! * [`DirStore`]: a directory of content objects (both a sink and a source).
//!
//! # Parts
//!
//! The logical POSIX state of a file tree and nothing else: `Scanner` (entries in path order,
//! bounded memory, never follows symlinks, content to a `BlobSink`), the JSON Lines manifest
//! (`ManifestWriter` / `ManifestReader`), `JsonBytes` (the one rule for bytes in every JSON the
//! tools write: a string when UTF-8, else `{"hex": …}`; TRACE_FORMAT.md section 10), `diff` (merge
//! of two sorted streams), `restore` (into an empty directory fd, race-free, contents from a
//! `ContentSource`), `DirStore`. `private`: the one way every file that holds traced data is
//! created (mode 0600 whatever the umask, the writer's own, a fresh inode; directories 0700;
//! TRACE_FORMAT 11). Knows nothing of traces or system calls.
#![warn(missing_docs)]

pub mod diff;
mod entry;
mod error;
pub mod jsonbytes;
pub mod manifest;
pub mod private;
pub mod restore;
pub mod scan;
pub mod store;

pub use diff::{changed_attrs, diff, Attr, Diff, DiffOptions, DiffStats, Difference};
pub use entry::{
    check_path, escape, escape_bytes, is_beneath, join, path_cmp, split_parent, DevNum, Digest,
    Entry, EntryProblem, Kind, PathProblem, CHUNK_BYTES,
};
pub use error::{BoxError, Error, LineProblem, Result};
pub use jsonbytes::JsonBytes;
pub use manifest::{Manifest, ManifestFile, ManifestHeader, ManifestReader, ManifestWriter};
pub use restore::{
    restore, ChunkFn, ContentSource, EntrySource, NoContent, NotRestored, RestoreOptions,
    RestoreStats, Withheld,
};
pub use scan::{BlobSink, NoBlobs, PathPredicate, ProgressFn, ScanOptions, ScanStats, Scanner};
pub use store::DirStore;
