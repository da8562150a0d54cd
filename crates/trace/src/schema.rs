//! The trace schema, generated from the registry: one DataSeries extent type per call.
//!
//! * Calls that exist in Re-Animator's schema use its exact field list (names, types,
//!   nullability, `field_id`, namespace `iotta.snia.org`, version `1.00`) so that tools written
//!   for Re-Animator traces can read ours, plus two additions: `units="nanoseconds"
//!   epoch="unix"` on the time fields, and a nullable `executing_gid`.
//! * Other calls (`statx`, `openat2`, `pwritev2`, ...) get the 14 common fields plus one field per
//!   registry argument, named by the argument's `field`, in namespace [`NAMESPACE`].
//! * Types of our own: [`INFO_TYPE`] (key/value facts about the recording), [`LOST_TYPE`]
//!   (events a backend had to drop, with counts), [`SNAPSHOT_TYPE`] (the entries of a
//!   directory tree's start and end state) and [`BLOB_TYPE`] (file contents of those trees,
//!   content-addressed).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use dataseries::{ExtentType, ExtentTypeBuilder, FieldDesc, FieldType};
use ra_syscalls::reanimator_schema::{self as ra, FieldKind};
use ra_syscalls::{flags::FlagSet, ArgKind, Struct, SyscallDef, REGISTRY};

use crate::event::ArgValue;
use crate::structs::{Stat, Statfs};

/// Extent type name prefix of every system-call type (Re-Animator's).
pub const PREFIX: &str = ra::PREFIX;
/// Namespace of the types we add.
pub const NAMESPACE: &str = "reanimator.rs";
/// Version of the types we add and of our additions to Re-Animator's types.
pub const VERSION: &str = "1.0";
/// Our schema version as recorded in the trace info (`schema_version`).
pub const SCHEMA_VERSION: &str = "6";
/// Key/value facts about a recording: `key`, `value` (both variable32).
pub const INFO_TYPE: &str = "Reanimator::TraceInfo";
/// Dropped events: per call type and time range, how many.
pub const LOST_TYPE: &str = "Reanimator::Lost";
/// One entry of a directory tree's recorded state (`record --snapshot`).
pub const SNAPSHOT_TYPE: &str = "Reanimator::Snapshot";
/// One chunk (at most 1 MiB) of a file content, keyed by the content's BLAKE3 digest.
pub const BLOB_TYPE: &str = "Reanimator::Blob";
/// How far the trace is written: every event whose `unique_id` is below `unique_id_below` is
/// in an extent before this one (TRACE_FORMAT 3.12). Lets a reader of a stream or of a file
/// still being written merge one window at a time.
pub const WATERMARK_TYPE: &str = "Reanimator::Watermark";

/// Field indices of the common fields in one extent type; `None` where the type lacks one
/// (possible in foreign files).
#[derive(Clone, Copy, Debug, Default)]
pub struct CommonFields {
    /// `time_called` (whatever unit the file declares; the reader converts to ns).
    pub time_called: Option<usize>,
    /// `time_returned`, likewise.
    pub time_returned: Option<usize>,
    /// `time_recorded`, likewise.
    pub time_recorded: Option<usize>,
    /// `executing_pid` (Re-Animator's files: the thread id, [`crate::quirks`]).
    pub pid: Option<usize>,
    /// `executing_tid`.
    pub tid: Option<usize>,
    /// `executing_ppid`.
    pub ppid: Option<usize>,
    /// `executing_uid`.
    pub uid: Option<usize>,
    /// `executing_gid` (our addition: absent from Re-Animator's files).
    pub gid: Option<usize>,
    /// `executing_sid`.
    pub sid: Option<usize>,
    /// `executing_pgid`.
    pub pgid: Option<usize>,
    /// `errno_number`: the positive errno on failure, 0 on success.
    pub errno_number: Option<usize>,
    /// `errno_string`: symbolic errno, which our writer leaves null.
    pub errno_string: Option<usize>,
    /// `return_value`: the raw return value.
    pub return_value: Option<usize>,
    /// `unique_id`: the record's position in the trace.
    pub unique_id: Option<usize>,
    /// `buffer_not_captured`.
    pub buffer_not_captured: Option<usize>,
    /// `data_digests` (our addition): the digests of buffers recorded as length and BLAKE3
    /// (TRACE_FORMAT 3.2).
    pub data_digests: Option<usize>,
}

impl CommonFields {
    fn resolve(ty: &ExtentType) -> CommonFields {
        let f = |n: &str| ty.field_index(n);
        CommonFields {
            time_called: f("time_called"),
            time_returned: f("time_returned"),
            time_recorded: f("time_recorded"),
            pid: f("executing_pid"),
            tid: f("executing_tid"),
            ppid: f("executing_ppid"),
            uid: f("executing_uid"),
            gid: f("executing_gid"),
            sid: f("executing_sid"),
            pgid: f("executing_pgid"),
            errno_number: f("errno_number"),
            errno_string: f("errno_string"),
            return_value: f("return_value"),
            unique_id: f("unique_id"),
            buffer_not_captured: f("buffer_not_captured"),
            data_digests: f("data_digests"),
        }
    }

    /// Indices of every common field present.
    pub fn indices(&self) -> Vec<usize> {
        [
            self.time_called,
            self.time_returned,
            self.time_recorded,
            self.pid,
            self.tid,
            self.ppid,
            self.uid,
            self.gid,
            self.sid,
            self.pgid,
            self.errno_number,
            self.errno_string,
            self.return_value,
            self.unique_id,
            self.buffer_not_captured,
            self.data_digests,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// How one call's arguments map onto the fields of one extent type. Built for our own types
/// and, when reading, for the types a file declares (which may differ).
#[derive(Clone, Debug)]
pub struct CallLayout {
    /// The registry entry of the call the type is named after; `None` for a type of a
    /// call the registry does not know (its records are read with every field in
    /// [`crate::Event::extra`]).
    pub def: Option<&'static SyscallDef>,
    /// The extent type (`IOTTAFSL::Trace::Syscall::<call>`), as ours or as the file declares
    /// it.
    pub ty: Arc<ExtentType>,
    /// Where the type keeps the 14 common fields (and our two additions).
    pub common: CommonFields,
    /// Field index per registry argument (`None` when the type has no such field).
    pub arg_fields: Vec<Option<usize>>,
    /// `iov_number` (vector calls: -1 = header record, 0.. = one record per vector).
    pub iov_number: Option<usize>,
    /// `bytes_requested` of vector calls (header: total; vector records: per vector).
    pub bytes_requested: Option<usize>,
    /// `continuation_number` (execve: 0 = first, 1.. = one per string, -1 = last).
    pub continuation: Option<usize>,
    /// Per argument: the integer columns a struct argument is stored in, for structs that
    /// Re-Animator keeps only decoded (pipe fds, utime times, rlimits).
    pub struct_columns: Vec<Option<Vec<usize>>>,
    /// Per argument: the column of its raw bytes, for a struct kept decoded in columns that
    /// cannot hold all its values ([`raw_struct_column`]; absent from Re-Animator's traces
    /// and ours before schema 3).
    pub struct_raw: Vec<Option<usize>>,
    /// Fields that neither a common field, an argument nor the multi-record bookkeeping fills,
    /// in field order: derived columns, `full_pathname`, ... (`Event::extra` on reading).
    pub extra_fields: Vec<usize>,
    /// Per entry of `extra_fields`: how the writer computes it from an argument, for
    /// Re-Animator's decoded columns (flag bits, `stat_result_*`, ...).
    pub(crate) derived: Vec<Option<Derived>>,
}

impl CallLayout {
    /// Resolve the layout of `ty` for `def` by field names.
    pub fn resolve(def: Option<&'static SyscallDef>, ty: Arc<ExtentType>) -> CallLayout {
        let common = CommonFields::resolve(&ty);
        let arg_fields: Vec<Option<usize>> = def
            .map(|d| d.args.iter().map(|a| ty.field_index(a.field)).collect())
            .unwrap_or_default();
        let struct_columns: Vec<Option<Vec<usize>>> = def
            .map(|d| {
                d.args
                    .iter()
                    .zip(&arg_fields)
                    .map(|(a, f)| {
                        let s = match a.kind {
                            ArgKind::InStruct(s, _)
                            | ArgKind::OutStruct(s, _)
                            | ArgKind::InOutStruct(s, _) => s,
                            _ => return None,
                        };
                        let cols = s.ra_decoded_columns();
                        let is_int =
                            (*f).is_some_and(|f| ty.fields()[f].ftype != FieldType::Variable32);
                        if cols.is_empty() || !is_int {
                            return None;
                        }
                        cols.iter().map(|c| ty.field_index(c)).collect::<Option<Vec<usize>>>()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let struct_raw: Vec<Option<usize>> = def
            .map(|d| {
                d.args
                    .iter()
                    .zip(&struct_columns)
                    .map(|(a, cols)| cols.as_ref().and(raw_struct_column(a)))
                    .map(|c| c.and_then(|c| ty.field_index(&c)))
                    .collect()
            })
            .unwrap_or_default();
        let iov_number = ty.field_index("iov_number");
        let bytes_requested = ty.field_index("bytes_requested");
        let continuation = ty.field_index("continuation_number");
        let mut mapped = common.indices();
        mapped.extend(arg_fields.iter().flatten());
        mapped.extend(struct_columns.iter().flatten().flatten());
        mapped.extend(struct_raw.iter().flatten());
        mapped.extend(iov_number.iter().chain(&continuation));
        if iov_number.is_some() {
            mapped.extend(bytes_requested);
        }
        let extra_fields: Vec<usize> =
            (0..ty.fields().len()).filter(|f| !mapped.contains(f)).collect();
        let derived = extra_fields.iter().map(|&f| Derived::of(def, &ty, f)).collect();
        CallLayout {
            def,
            common,
            arg_fields,
            iov_number,
            bytes_requested,
            continuation,
            struct_columns,
            struct_raw,
            extra_fields,
            derived,
            ty,
        }
    }
}

/// A column whose value the writer computes from an argument: Re-Animator's decoded columns.
/// Such a column holds nothing its argument does not: a reader may leave it out of
/// [`crate::Event::extra`] where it equals what the argument gives
/// ([`crate::EventIter::without_derived_columns`]), and the writer computes it again.
#[derive(Clone, Debug)]
pub(crate) enum Derived {
    /// A bool column from a flag word argument.
    FlagBit { field: usize, arg: usize, set: &'static FlagSet, flag: usize },
    /// `<x>_current_working_directory`: the dirfd argument is `AT_FDCWD`.
    IsCwd { field: usize, arg: usize },
    /// A byte column that repeats an int column's value (`whence` from `whence_value`).
    Byte { field: usize, arg: usize },
    /// `stat_result_<member>` from the raw stat struct argument.
    StatMember { field: usize, arg: usize, member: String },
    /// `statfs_result_<member>` from the raw statfs struct argument.
    StatfsMember { field: usize, arg: usize, member: String },
    /// utimensat's `utime_now` / `utime_omit`: some timespec's `tv_nsec` is that value.
    UtimeSpecial { field: usize, arg: usize, nsec: i64 },
}

/// `AT_FDCWD`.
const AT_FDCWD: i64 = -100;

impl Derived {
    /// How field `fi` of `ty` (a field no argument fills) derives from `def`'s arguments.
    fn of(def: Option<&'static SyscallDef>, ty: &ExtentType, fi: usize) -> Option<Derived> {
        let def = def?;
        let f = &ty.fields()[fi];
        let name = f.name.as_str();
        if f.ftype == FieldType::Bool {
            let special = match name {
                "utime_now" => Some(crate::structs::UTIME_NOW),
                "utime_omit" => Some(crate::structs::UTIME_OMIT),
                _ => None,
            };
            if let Some(nsec) = special {
                if let Some(arg) = def
                    .args
                    .iter()
                    .position(|a| matches!(a.kind, ArgKind::InStruct(Struct::Timespec2, _)))
                {
                    return Some(Derived::UtimeSpecial { field: fi, arg, nsec });
                }
            }
            if let Some(prefix) = name.strip_suffix("_current_working_directory") {
                if let Some(arg) = def.args.iter().position(|a| a.field == prefix) {
                    return Some(Derived::IsCwd { field: fi, arg });
                }
            }
            for (ai, a) in def.args.iter().enumerate() {
                let set = match a.kind {
                    ArgKind::Flags(s) => s,
                    ArgKind::Mode => &ra_syscalls::flags::MODE,
                    _ => continue,
                };
                if let Some(k) = set.entries.iter().position(|flag| flag.ra_field == Some(name)) {
                    return Some(Derived::FlagBit { field: fi, arg: ai, set, flag: k });
                }
            }
            None
        } else if f.ftype == FieldType::Byte {
            let value_name = format!("{name}_value");
            let arg = def.args.iter().position(|a| a.field == value_name)?;
            Some(Derived::Byte { field: fi, arg })
        } else if let Some(member) = name.strip_prefix("stat_result_") {
            let arg = def
                .args
                .iter()
                .position(|a| matches!(a.kind, ArgKind::OutStruct(Struct::Stat, _)))?;
            Some(Derived::StatMember { field: fi, arg, member: member.to_string() })
        } else if let Some(member) = name.strip_prefix("statfs_result_") {
            let arg = def
                .args
                .iter()
                .position(|a| matches!(a.kind, ArgKind::OutStruct(Struct::Statfs, _)))?;
            Some(Derived::StatfsMember { field: fi, arg, member: member.to_string() })
        } else {
            None
        }
    }

    /// The field it fills.
    pub(crate) fn field(&self) -> usize {
        match self {
            Derived::FlagBit { field, .. }
            | Derived::IsCwd { field, .. }
            | Derived::Byte { field, .. }
            | Derived::StatMember { field, .. }
            | Derived::StatfsMember { field, .. }
            | Derived::UtimeSpecial { field, .. } => *field,
        }
    }

    /// Its value for these arguments (aligned with the registry's); None when the argument is
    /// not there (or not decodable), and the column is then whatever the event's extra says.
    pub(crate) fn value(&self, args: &[ArgValue]) -> Option<i64> {
        match self {
            Derived::FlagBit { arg, set, flag, .. } => {
                let v = args.get(*arg)?.as_int()?;
                let fl = &set.entries[*flag];
                Some(i64::from((v as u64) & fl.mask == fl.value))
            }
            Derived::IsCwd { arg, .. } => Some(i64::from(args.get(*arg)?.as_int()? == AT_FDCWD)),
            Derived::Byte { arg, .. } => args.get(*arg)?.as_int(),
            Derived::StatMember { arg, member, .. } => {
                Stat::decode(args.get(*arg)?.as_data()?)?.ra_column(member)
            }
            Derived::StatfsMember { arg, member, .. } => {
                Statfs::decode(args.get(*arg)?.as_data()?)?.ra_column(member)
            }
            Derived::UtimeSpecial { arg, nsec, .. } => {
                let d = args.get(*arg)?.as_data()?;
                let cols = crate::structs::struct_to_columns(Struct::Timespec2, d)?;
                Some(i64::from(cols.contains(nsec)))
            }
        }
    }
}

/// Our complete schema: the extent types every trace we write declares.
pub struct Schema {
    calls: Vec<CallLayout>,
    by_trace_name: HashMap<&'static str, usize>,
    info: Arc<ExtentType>,
    lost: Arc<ExtentType>,
    snapshot: Arc<ExtentType>,
    blob: Arc<ExtentType>,
    watermark: Arc<ExtentType>,
}

impl Schema {
    /// The schema generated from the registry (built once).
    pub fn ours() -> &'static Schema {
        static SCHEMA: OnceLock<Schema> = OnceLock::new();
        SCHEMA.get_or_init(|| Schema::build().expect("the registry yields a valid schema"))
    }

    fn build() -> dataseries::Result<Schema> {
        let mut calls = Vec::new();
        let mut by_trace_name = HashMap::new();
        for def in REGISTRY {
            if by_trace_name.contains_key(def.trace_name) {
                continue;
            }
            let ty = Arc::new(extent_type_for(def)?);
            by_trace_name.insert(def.trace_name, calls.len());
            calls.push(CallLayout::resolve(Some(def), ty));
        }
        let info = Arc::new(
            ExtentType::builder(INFO_TYPE)
                .namespace(NAMESPACE)
                .version(VERSION)
                .field(FieldDesc::new("key", FieldType::Variable32))
                .field(FieldDesc::new("value", FieldType::Variable32))
                .build()?,
        );
        let lost = Arc::new(
            ExtentType::builder(LOST_TYPE)
                .namespace(NAMESPACE)
                .version(VERSION)
                .field(FieldDesc::new("syscall", FieldType::Variable32))
                .field(FieldDesc::new("count", FieldType::Int64))
                .field(FieldDesc::new("bytes", FieldType::Int64))
                .field(
                    FieldDesc::new("time_first", FieldType::Int64)
                        .nullable(true)
                        .units("nanoseconds", "unix"),
                )
                .field(
                    FieldDesc::new("time_last", FieldType::Int64)
                        .nullable(true)
                        .units("nanoseconds", "unix"),
                )
                .field(FieldDesc::new("reason", FieldType::Variable32))
                .build()?,
        );
        let nullable_bytes = |n: &str| FieldDesc::new(n, FieldType::Variable32).nullable(true);
        let nullable_i64 = |n: &str| FieldDesc::new(n, FieldType::Int64).nullable(true);
        let snapshot = Arc::new(
            ExtentType::builder(SNAPSHOT_TYPE)
                .namespace(NAMESPACE)
                .version(VERSION)
                .field(FieldDesc::new("snapshot", FieldType::Int32))
                .field(FieldDesc::new("phase", FieldType::Byte))
                .field(FieldDesc::new("path", FieldType::Variable32))
                .field(FieldDesc::new("kind", FieldType::Byte))
                .field(FieldDesc::new("mode", FieldType::Int32))
                .field(FieldDesc::new("uid", FieldType::Int64))
                .field(FieldDesc::new("gid", FieldType::Int64))
                .field(FieldDesc::new("size", FieldType::Int64))
                .field(nullable_bytes("blake3"))
                .field(nullable_bytes("target"))
                .field(nullable_i64("rdev_major"))
                .field(nullable_i64("rdev_minor"))
                .field(nullable_bytes("xattrs"))
                .field(nullable_bytes("link"))
                .field(FieldDesc::new("mtime", FieldType::Int64).units("nanoseconds", "unix"))
                .build()?,
        );
        let blob = Arc::new(
            ExtentType::builder(BLOB_TYPE)
                .namespace(NAMESPACE)
                .version(VERSION)
                .field(FieldDesc::new("blake3", FieldType::Variable32).pack_unique(true))
                .field(FieldDesc::new("offset", FieldType::Int64))
                .field(FieldDesc::new("data", FieldType::Variable32))
                .build()?,
        );
        let watermark = Arc::new(
            ExtentType::builder(WATERMARK_TYPE)
                .namespace(NAMESPACE)
                .version(VERSION)
                .field(FieldDesc::new("unique_id_below", FieldType::Int64))
                .field(FieldDesc::new("writer_pid", FieldType::Int32))
                .build()?,
        );
        Ok(Schema { calls, by_trace_name, info, lost, snapshot, blob, watermark })
    }

    /// Layout of a call by trace name.
    pub fn call(&self, trace_name: &str) -> Option<&CallLayout> {
        self.index_of(trace_name).map(|i| &self.calls[i])
    }

    /// Position of a call's layout in [`Schema::calls`].
    pub fn index_of(&self, trace_name: &str) -> Option<usize> {
        self.by_trace_name.get(trace_name).copied()
    }

    /// Every call layout, in registry order.
    pub fn calls(&self) -> &[CallLayout] {
        &self.calls
    }

    /// The `Reanimator::TraceInfo` type ([`INFO_TYPE`]) our writer declares.
    pub fn info_type(&self) -> &Arc<ExtentType> {
        &self.info
    }

    /// The `Reanimator::Lost` type ([`LOST_TYPE`]).
    pub fn lost_type(&self) -> &Arc<ExtentType> {
        &self.lost
    }

    /// The `Reanimator::Snapshot` type ([`SNAPSHOT_TYPE`]), one record per tree entry.
    pub fn snapshot_type(&self) -> &Arc<ExtentType> {
        &self.snapshot
    }

    /// The `Reanimator::Blob` type ([`BLOB_TYPE`]), one record per content chunk.
    pub fn blob_type(&self) -> &Arc<ExtentType> {
        &self.blob
    }

    /// The `Reanimator::Watermark` type ([`WATERMARK_TYPE`]).
    pub fn watermark_type(&self) -> &Arc<ExtentType> {
        &self.watermark
    }

    /// Every extent type a trace declares.
    pub fn all_types(&self) -> Vec<Arc<ExtentType>> {
        let mut v: Vec<_> = self.calls.iter().map(|c| c.ty.clone()).collect();
        v.push(self.info.clone());
        v.push(self.lost.clone());
        v.push(self.snapshot.clone());
        v.push(self.blob.clone());
        v.push(self.watermark.clone());
        v
    }
}

fn ra_type(kind: FieldKind) -> FieldType {
    match kind {
        FieldKind::Bool => FieldType::Bool,
        FieldKind::Byte => FieldType::Byte,
        FieldKind::Int32 => FieldType::Int32,
        FieldKind::Int64 => FieldType::Int64,
        FieldKind::Variable32 => FieldType::Variable32,
    }
}

fn is_time_field(name: &str) -> bool {
    matches!(name, "time_called" | "time_returned" | "time_recorded")
}

/// The column of read-class calls (`ra_syscalls::io_class` Read) that says how many pages were
/// added to the page cache while the call ran: its misses and the read-ahead it triggered;
/// 0 when the page cache served it all. Written by the eBPF recorder; null where unknown
/// (the ptrace recorder, Re-Animator's traces). `replay --reads as-recorded` uses it.
pub const CACHE_MISS_PAGES: &str = "cache_miss_pages";

/// The column of kernel-side copies (`sendfile`, `copy_file_range`, `splice`: registry
/// handler `Copy`) that holds the bytes the call moved, which never pass through the program's
/// memory: read back from the source file (or, when the source is not a regular file, the
/// destination file) once the call has returned. Written by the ptrace recorder with
/// `--data full`; null where not captured (either end a pipe or socket, a file it could not
/// read back, the eBPF recorder, Re-Animator's traces).
pub const COPIED_DATA: &str = "data_copied";

/// The column of `sendmsg` and `recvmsg` (registry: [`SyscallDef::msg_arg`]) that holds the
/// descriptor numbers the message carried in `SCM_RIGHTS` control data: the sender's numbers
/// (sendmsg) or those the receiver got (recvmsg), as little-endian 32-bit integers in the
/// message's order. Null when the message carried none, the call failed, or the recorder did
/// not capture control data (Re-Animator's traces).
///
/// [`SyscallDef::msg_arg`]: ra_syscalls::SyscallDef::msg_arg
pub const SCM_RIGHTS: &str = "scm_rights";

/// The columns of `fcntl` (registry handler `Fcntl`) that hold a `struct flock`'s `l_start`
/// and `l_len` whole (int64, nullable): Re-Animator's `lock_start` and `lock_length` are
/// int32, null for a value beyond 32 bits (trace schema 3). Null when the call had no
/// `struct flock` or the recorder did not read it (Re-Animator's traces, ours before schema 3).
pub const LOCK_START64: &str = "lock_start64";
/// `l_len` whole, the counterpart of [`LOCK_START64`].
pub const LOCK_LENGTH64: &str = "lock_length64";

/// The column of an argument's raw struct bytes, for a struct Re-Animator's schema keeps only
/// decoded in columns that cannot hold all its values
/// ([`Struct::ra_decoded_loses_values`]): `utimes`' and `utimensat`'s `times_raw`.
pub fn raw_struct_column(a: &ra_syscalls::Arg) -> Option<String> {
    match a.kind {
        ArgKind::InStruct(s, _) | ArgKind::OutStruct(s, _) | ArgKind::InOutStruct(s, _)
            if s.ra_decoded_loses_values() && !s.ra_decoded_columns().is_empty() =>
        {
            Some(format!("{}_raw", a.name))
        }
        _ => None,
    }
}

/// Columns every call of this kind gets beyond its arguments.
fn class_fields(def: &SyscallDef) -> Vec<FieldDesc> {
    let mut v = Vec::new();
    if def.replay.handler() == Some(ra_syscalls::Handler::Fcntl) {
        v.push(FieldDesc::new(LOCK_START64, FieldType::Int64).nullable(true));
        v.push(FieldDesc::new(LOCK_LENGTH64, FieldType::Int64).nullable(true));
    }
    if ra_syscalls::io_class(def.name) == ra_syscalls::IoClass::Read {
        v.push(FieldDesc::new(CACHE_MISS_PAGES, FieldType::Int64).nullable(true));
    }
    if def.copy_ends().is_some() {
        v.push(FieldDesc::new(COPIED_DATA, FieldType::Variable32).nullable(true));
    }
    if def.msg_arg().is_some() {
        v.push(FieldDesc::new(SCM_RIGHTS, FieldType::Variable32).nullable(true));
    }
    v
}

fn common_fields() -> Vec<FieldDesc> {
    let mut v: Vec<FieldDesc> = ra::COMMON
        .iter()
        .map(|f| {
            let d = FieldDesc::new(f.name, ra_type(f.kind))
                .nullable(f.nullable)
                .attr("field_id", &f.field_id.to_string());
            if is_time_field(f.name) {
                d.units("nanoseconds", "unix")
            } else {
                d
            }
        })
        .collect();
    v.push(FieldDesc::new("executing_gid", FieldType::Int32).nullable(true));
    // `--data hash`: per hashed argument, u16 argument index + u64 length + 32-byte BLAKE3
    // digest (little-endian), concatenated. Null when nothing was hashed.
    v.push(FieldDesc::new("data_digests", FieldType::Variable32).nullable(true));
    v
}

/// The DataSeries type of the field that stores an argument of this kind in a new type.
fn field_type_for(kind: ArgKind) -> (FieldType, bool) {
    match kind {
        ArgKind::Fd | ArgKind::DirFd | ArgKind::Mode => (FieldType::Int32, false),
        ArgKind::Int | ArgKind::Addr | ArgKind::Flags(_) => (FieldType::Int64, false),
        _ => (FieldType::Variable32, true),
    }
}

/// Build the extent type of one call.
pub fn extent_type_for(def: &SyscallDef) -> dataseries::Result<ExtentType> {
    let name = format!("{PREFIX}{}", def.trace_name);
    let mut b;
    if let (true, Some(fields)) = (def.in_reanimator_schema, ra::fields_of(def.trace_name)) {
        b = ExtentType::builder(&name).namespace(ra::NAMESPACE).version(ra::VERSION);
        for f in common_fields() {
            b = b.field(f);
        }
        for f in fields {
            let mut d = FieldDesc::new(f.name, ra_type(f.kind))
                .nullable(f.nullable)
                .attr("field_id", &f.field_id.to_string());
            let is_time = (f.name.starts_with("stat_result_") && f.name.ends_with("time"))
                || f.name == "access_time"
                || f.name == "mod_time";
            if is_time && f.kind == FieldKind::Int64 {
                d = d.units("nanoseconds", "unix");
            }
            b = b.field(d);
        }
        // Arguments Re-Animator did not record get columns after its own; so do the raw
        // bytes of structs its columns hold only in part.
        for (_, a) in def.ra_extension_args() {
            let (t, nullable) = field_type_for(a.kind);
            b = b.field(FieldDesc::new(a.field, t).nullable(nullable));
        }
        for a in def.args {
            if let Some(c) = raw_struct_column(a) {
                b = b.field(FieldDesc::new(&c, FieldType::Variable32).nullable(true));
            }
        }
        for f in class_fields(def) {
            b = b.field(f);
        }
    } else {
        b = ExtentType::builder(&name).namespace(NAMESPACE).version(VERSION);
        for f in common_fields() {
            b = b.field(f);
        }
        let mut seen: Vec<String> = Vec::new();
        let mut add = |b: ExtentTypeBuilder, d: FieldDesc| -> ExtentTypeBuilder {
            if seen.contains(&d.name) {
                return b;
            }
            seen.push(d.name.clone());
            b.field(d)
        };
        for a in def.args {
            let (t, nullable) = field_type_for(a.kind);
            b = add(b, FieldDesc::new(a.field, t).nullable(nullable));
            if a.kind.is_vector() {
                b = add(b, FieldDesc::new("iov_number", FieldType::Int32));
                b = add(b, FieldDesc::new("bytes_requested", FieldType::Int64));
            } else if a.kind == ArgKind::StrArray {
                b = add(b, FieldDesc::new("continuation_number", FieldType::Int32));
            }
        }
        for f in class_fields(def) {
            b = add(b, f);
        }
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/TRACE_FORMAT.md §3.1 shows the `read` type's XML and layout; keep them true.
    #[test]
    fn read_type_matches_the_documented_layout() {
        let l = Schema::ours().call("read").unwrap();
        let ty = &l.ty;
        assert_eq!(ty.record_size(), 112);
        let off = |n: &str| ty.field_offset(ty.field_index(n).unwrap()).unwrap().0;
        for (name, o) in [
            ("errno_number", 4),
            ("executing_gid", 32),
            ("descriptor", 36),
            ("errno_string", 40),
            ("data_digests", 44),
            ("data_read", 48),
            ("return_value", 56),
            ("unique_id", 88),
            ("bytes_requested", 96),
            ("cache_miss_pages", 104),
        ] {
            assert_eq!(off(name), o, "{name}");
        }
        let doc = include_str!("../../../docs/TRACE_FORMAT.md");
        assert!(doc.contains(ty.xml().trim_end()), "TRACE_FORMAT.md shows the read type's XML");
    }

    /// docs/TRACE_FORMAT.md §3.9 shows the snapshot types' XML and layouts; keep them true.
    #[test]
    fn snapshot_types_match_the_documentation() {
        let doc = include_str!("../../../docs/TRACE_FORMAT.md");
        let s = Schema::ours();
        for ty in [s.snapshot_type(), s.blob_type()] {
            assert!(doc.contains(ty.xml().trim_end()), "TRACE_FORMAT.md shows {}'s XML", ty.name());
        }
        let off = |ty: &ExtentType, n: &str| ty.field_offset(ty.field_index(n).unwrap()).unwrap().0;
        let t = s.snapshot_type();
        assert_eq!(t.record_size(), 80);
        let want = [
            ("phase", 1),
            ("kind", 2),
            ("snapshot", 4),
            ("mode", 8),
            ("path", 12),
            ("blake3", 16),
            ("target", 20),
            ("xattrs", 24),
            ("link", 28),
            ("uid", 32),
            ("gid", 40),
            ("size", 48),
            ("rdev_major", 56),
            ("rdev_minor", 64),
            ("mtime", 72),
        ];
        for (name, o) in want {
            assert_eq!(off(t, name), o, "{name}");
        }
        let b = s.blob_type();
        assert_eq!(b.record_size(), 16);
        assert_eq!((off(b, "blake3"), off(b, "data"), off(b, "offset")), (0, 4, 8));
    }
}
