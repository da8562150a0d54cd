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

pub mod anonymize;
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
