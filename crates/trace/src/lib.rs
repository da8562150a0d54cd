//! Re-Animator's trace schema on top of DataSeries, generated from the syscall registry.
//!
//! One extent type per system call (`IOTTAFSL::Trace::Syscall::<call>`) carrying Re-Animator's 14
//! common fields plus one field per argument; an [`Event`] model (one system call, with its
//! captured buffers); [`TraceWriter`], which buffers events per call type and writes extents in
//! bounded memory; and [`TraceReader`], which merges the per-call extents back into `unique_id`
//! order in bounded memory (one decoded extent per call type at a time).
//!
//! Our files state their time unit (`units="nanoseconds" epoch="unix"` on every time field) and
//! carry a `Reanimator::TraceInfo` extent (machine, kernel, command line, backend, ...). Traces
//! written by the original Re-Animator are read too; their quirks (always-true bools, pid fields
//! holding tids, the synthetic umask record, seconds/Tfrac time units) are handled in
//! [`quirks`].
//!
//! A trace can also hold the state of directory trees before and after the recording
//! ([`snapshot`]: entries and content-addressed file contents, built on [`ra_fsstate`]).
//!
//! # Parts
//!
//! The trace schema generated from the registry; the `Event` model; `TraceWriter` (per-call
//! buffers, bounded memory, flush-at-will so killed writers leave readable files); `TraceReader`
//! (k-way merge of per-call extent streams into unique_id order; `sharing_buffers` gives data
//! buffers as slices of their extent, for consumers that drop events in order, as `compile` does;
//! `without_derived_columns` leaves out of `Event::extra` the decoded columns `schema::Derived`
//! says the writer computes from an argument (the writer and the reader use that one definition),
//! for compile, replay and `--init`; an unfinished trace cut inside its last extent, as a recorder
//! killed mid-write leaves it, is read up to that extent and reported by `cut_tail`); `incomplete`
//! says how a trace falls short of whole, for every reader's note; readers for original Re-Animator
//! traces (quirks); struct decoders; strace-like formatting; `fileio` (a trace's file I/O:
//! descriptors followed per process, file positions, lazy opens, left-out calls counted; what every
//! descriptor refers to at each call, `strace -y`'s names, for `dump`, `export --where` and
//! `stats`; io_uring path requests and `CLOSE`s are applied as the calls they stand for,
//! `uring::as_call`, which `dump`, `stats`, `export` and replay read them through too;
//! `open_descriptors`: a process's open descriptors with path, flags and position at any
//! point, for `select`'s window start); directory snapshots in a trace (`snapshot`:
//! `TraceWriter::record_snapshot`, `TraceReader::snapshots` / `snapshot_entries` /
//! `restore_snapshot`); `key`: key files and the per-purpose keys derived from them (TRACE_FORMAT
//! 11); `follow`: `StreamReader`, a trace read as it arrives (`dump -` from a pipe, `dump --follow`
//! on a file being written): extents cut from the bytes by `dataseries::stream::Framer`, decoded
//! into per-type cursors and merged up to the last `Reanimator::Watermark` (TRACE_FORMAT 3.12: the
//! writer's "every id below W is written", after each flush and each full extent; the writer writes
//! every buffer when the extents written since W last advanced reach its budget), so the reader
//! holds about what the writer buffered, bounded by `hold_bytes`; it ends at the trailer, at the
//! input's end, or (following) when the writer the watermarks name is gone; `live`: the printer of
//! `record --print` and `fs mount --print` (descriptors named by a `fileio` tracker stepped over
//! the previews, as `dump` names them; previews, `format::preview`: buffers cut where
//! `format_event` cuts them, handed over without waiting, at most `PRINT_QUEUE_BYTES` queued,
//! beyond which lines are dropped and counted; a thread of its own prints them with dump's
//! `format_event`; the recording's end waits at most a second for it); `check_seals` makes every
//! reader of the process check seals, and host keys derived from a collector's master key
//! (`Key::for_host`, docs/NETWORK.md); `time`: RFC 3339 times and the instants of facts
//! (anonymization, a trace rewritten with keyed pseudonyms, is the `ra-anonymize` crate);
//! `data_mode`: how much of each data buffer a recording keeps, per direction (`DataMode { write, read }` of `DataLevel`
//! full/hash/none; which direction a buffer is comes from its registry `ArgKind::is_output`): the
//! one parser of `record --data`, `fs mount --data` and `fs ctl MNT data` (`full|hash|none` or
//! `write=LEVEL,read=LEVEL`), the facts that say it (`data_mode`, `data_mode_write`,
//! `data_mode_read`) and their reading back for replay (`from_facts`); `net`: where a trace goes
//! (`Destination`: a file, `tcp://`, or `-`: standard output, which `take_stdout` keeps for the
//! trace and points descriptor 1 at standard error, so a traced command's output stays out of the
//! stream) and the one `Write` every producer writes through (`TraceOutput`: `TraceFile` or the
//! network sender with its acknowledged, byte-bounded buffer and spill file, docs/NETWORK.md;
//! `net::auth`: the challenge-response with which a sender and a collector prove they hold the
//! host's key).
#![warn(missing_docs)]

pub mod data_mode;
mod direct;
mod error;
mod event;
pub mod fileio;
pub mod follow;
pub mod format;
pub mod fsop;
pub mod key;
pub mod live;
pub mod net;
pub mod quirks;
mod reader;
pub mod schema;
pub mod snapshot;
pub mod structs;
pub mod time;
pub mod uring;
mod writer;

pub use data_mode::{DataLevel, DataMode};
pub use direct::TraceFile;
pub use error::{Error, Result};
pub use event::{ArgValue, Bytes, Event, ExtraValue, IovValue, KernelCopy};
pub use follow::{StreamEnd, StreamOptions, StreamReader};
pub use fsop::{FsData, FsRecord, FS_OPERATION, FS_OP_TYPE};
pub use net::{Destination, NetReport, NetStatus, TraceOutput};
pub use reader::{EventIter, LostRecord, TraceKind, TraceReader};
pub use schema::Schema;
pub use snapshot::{FsEntries, Phase, PhaseInfo, SnapshotEntries, SnapshotInfo};
pub use writer::{TraceWriter, WriterConfig, MAX_BUFFER_BYTES};
