//! File-system operation records: what `reanimator fs` (the tracing FUSE file system) sees.
//!
//! One extent type, [`FS_OP_TYPE`], holds every operation: the common fields of the syscall
//! schema (so `info`, `dump`, `--where` and the reader's merge treat it like any call type) plus
//! the operation's own columns, null where an operation has no such argument. The reader yields
//! each record as an [`Event`] without a registry entry, named by its `operation` column, with
//! the other columns as [`Event::extra`] fields.
//!
//! Replay reproduces an operation by the system calls that cause it ([`to_syscalls`]): the one
//! place that maps FUSE operations onto the registry.

use std::sync::Arc;

use dataseries::{ExtentType, FieldDesc, FieldType};
use ra_syscalls::by_trace_name;

use crate::event::{ArgValue, Event, ExtraValue};
use crate::schema::{NAMESPACE, VERSION};

/// Extent type of file-system operation records.
pub const FS_OP_TYPE: &str = "Reanimator::FsOp";

/// The names of the file-system operations `reanimator fs` records (FUSE's requests), as the
/// `operation` column holds them: what `--where 'call == create'` and `--type` may name in an
/// fs trace besides the system calls of the registry.
pub const OPERATIONS: &[&str] = &[
    "access",
    "batch_forget",
    "bmap",
    "copy_file_range",
    "create",
    // Not FUSE's: a change made by `reanimator fs ctl` (pause, resume, filter, data), at the
    // moment it took effect; nothing to replay.
    "ctl",
    "fallocate",
    "flush",
    "forget",
    "fsync",
    "fsyncdir",
    "getattr",
    "getlk",
    "getxattr",
    "ioctl",
    "link",
    "listxattr",
    "lookup",
    "lseek",
    "mkdir",
    "mknod",
    "open",
    "opendir",
    "poll",
    "read",
    "readdir",
    "readdirplus",
    "readlink",
    "release",
    "releasedir",
    "removexattr",
    "rename",
    "rmdir",
    "setattr",
    "setlk",
    "setxattr",
    "statfs",
    "symlink",
    "tmpfile",
    "unlink",
    "write",
];

/// Column positions of [`FS_OP_TYPE`] (the order [`fs_op_type`] declares them in).
pub(crate) mod col {
    pub const UNIQUE_ID: usize = 0;
    pub const TIME_CALLED: usize = 1;
    pub const TIME_RETURNED: usize = 2;
    pub const PID: usize = 3;
    pub const TID: usize = 4;
    pub const UID: usize = 5;
    pub const GID: usize = 6;
    pub const RET: usize = 7;
    pub const ERRNO: usize = 8;
    pub const NOT_CAPTURED: usize = 9;
    pub const OPERATION: usize = 10;
    pub const COMM: usize = 11;
    pub const FUSE_UNIQUE: usize = 12;
    pub const NODEID: usize = 13;
    pub const INODE: usize = 14;
    pub const FH: usize = 15;
    pub const PATH: usize = 16;
    pub const NEW_PATH: usize = 17;
    pub const NAME: usize = 18;
    pub const OFFSET: usize = 19;
    pub const LENGTH: usize = 20;
    pub const FLAGS: usize = 21;
    pub const MODE: usize = 22;
    pub const OWNER_UID: usize = 23;
    pub const OWNER_GID: usize = 24;
    pub const ATIME: usize = 25;
    pub const MTIME: usize = 26;
    pub const ATIME_NOW: usize = 27;
    pub const MTIME_NOW: usize = 28;
    pub const FH_OUT: usize = 29;
    pub const OFFSET_OUT: usize = 30;
    pub const DATA: usize = 31;
    pub const DATA_LENGTH: usize = 32;
    pub const DATA_BLAKE3: usize = 33;
    pub const RESULT_INODE: usize = 34;
    pub const RESULT_SIZE: usize = 35;
}

/// The extent type of file-system operation records.
pub fn fs_op_type() -> Arc<ExtentType> {
    static T: std::sync::OnceLock<Arc<ExtentType>> = std::sync::OnceLock::new();
    T.get_or_init(|| Arc::new(build_type().expect("a valid extent type"))).clone()
}

fn build_type() -> dataseries::Result<ExtentType> {
    let i64n = |n: &str| FieldDesc::new(n, FieldType::Int64).nullable(true);
    let i32n = |n: &str| FieldDesc::new(n, FieldType::Int32).nullable(true);
    let varn = |n: &str| FieldDesc::new(n, FieldType::Variable32).nullable(true);
    let time = |n: &str| FieldDesc::new(n, FieldType::Int64).units("nanoseconds", "unix");
    let fields = [
        FieldDesc::new("unique_id", FieldType::Int64),
        time("time_called"),
        time("time_returned"),
        i32n("executing_pid"),
        FieldDesc::new("executing_tid", FieldType::Int32),
        FieldDesc::new("executing_uid", FieldType::Int32),
        FieldDesc::new("executing_gid", FieldType::Int32),
        FieldDesc::new("return_value", FieldType::Int64),
        FieldDesc::new("errno_number", FieldType::Int32),
        FieldDesc::new("buffer_not_captured", FieldType::Bool),
        FieldDesc::new("operation", FieldType::Variable32).pack_unique(true),
        varn("executing_comm").pack_unique(true),
        FieldDesc::new("fuse_unique", FieldType::Int64),
        FieldDesc::new("nodeid", FieldType::Int64),
        i64n("inode"),
        i64n("fh"),
        varn("pathname").pack_unique(true),
        varn("new_pathname"),
        varn("xattr_name"),
        i64n("offset"),
        i64n("length"),
        i64n("flags"),
        i32n("mode"),
        i32n("owner_uid"),
        i32n("owner_gid"),
        i64n("atime").units("nanoseconds", "unix"),
        i64n("mtime").units("nanoseconds", "unix"),
        FieldDesc::new("atime_now", FieldType::Bool),
        FieldDesc::new("mtime_now", FieldType::Bool),
        i64n("fh_out"),
        i64n("offset_out"),
        varn("data"),
        i64n("data_length"),
        varn("data_blake3"),
        i64n("result_inode"),
        i64n("result_size"),
    ];
    let mut b = ExtentType::builder(FS_OP_TYPE).namespace(NAMESPACE).version(VERSION);
    for f in fields {
        b = b.field(f);
    }
    b.build()
}

/// Extent type of the aggregate driver's rows: per interval, operation and group, counts,
/// bytes, errors and a log2 latency histogram.
pub const FS_AGGREGATE_TYPE: &str = "Reanimator::FsAggregate";

/// The extent type of aggregate rows.
pub fn fs_aggregate_type() -> Arc<ExtentType> {
    static T: std::sync::OnceLock<Arc<ExtentType>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let time = |n: &str| FieldDesc::new(n, FieldType::Int64).units("nanoseconds", "unix");
        let i64f = |n: &str| FieldDesc::new(n, FieldType::Int64);
        let t = ExtentType::builder(FS_AGGREGATE_TYPE)
            .namespace(NAMESPACE)
            .version(VERSION)
            .field(time("interval_start"))
            .field(time("interval_end"))
            .field(FieldDesc::new("operation", FieldType::Variable32).pack_unique(true))
            .field(FieldDesc::new("group", FieldType::Variable32).pack_unique(true))
            .field(i64f("count"))
            .field(i64f("errors"))
            .field(i64f("bytes"))
            .field(i64f("total_ns"))
            .field(i64f("min_ns"))
            .field(i64f("max_ns"))
            // 64 little-endian u64 counts: bucket k holds latencies 2^(k-1) <= ns < 2^k
            // (bucket 0: 0 ns); trailing empty buckets left out.
            .field(FieldDesc::new("histogram_ns", FieldType::Variable32))
            .build()
            .expect("a valid extent type");
        Arc::new(t)
    })
    .clone()
}

/// One `Reanimator::FsAggregate` row: an interval's statistics of one operation and group.
#[derive(Clone, Debug)]
pub struct FsAggregateRow {
    /// The interval's start (`interval_start`), ns since the Unix epoch.
    pub interval_start_ns: i64,
    /// The interval's end (`interval_end`), ns since the Unix epoch.
    pub interval_end_ns: i64,
    /// The FUSE operation counted (one of [`OPERATIONS`]).
    pub operation: String,
    /// Empty, a uid, or a path prefix such as `/src`.
    pub group: Vec<u8>,
    /// What the interval counted for this operation and group.
    pub stats: FsStats,
}

/// The aggregate rows of a `reanimator fs` trace (`--aggregate`), in file order; none in other
/// traces. A row whose histogram is malformed (more than 64 buckets, not whole u64s) is an
/// error naming its extent.
pub fn aggregate_rows(
    tr: &crate::TraceReader,
) -> impl Iterator<Item = crate::Result<FsAggregateRow>> + '_ {
    let ds = tr.dataseries();
    let present = ds.type_by_name(FS_AGGREGATE_TYPE).is_some();
    let mut extents = present.then(|| ds.extents_of(FS_AGGREGATE_TYPE));
    let mut pending: std::vec::IntoIter<crate::Result<FsAggregateRow>> = Vec::new().into_iter();
    std::iter::from_fn(move || loop {
        if let Some(r) = pending.next() {
            return Some(r);
        }
        let e = match extents.as_mut()?.next()? {
            Ok(e) => e,
            Err(e) => {
                extents = None;
                return Some(Err(e.into()));
            }
        };
        pending = rows_of(&e).into_iter();
    })
}

fn rows_of(e: &dataseries::Extent) -> Vec<crate::Result<FsAggregateRow>> {
    use dataseries::Value;
    let t = e.extent_type();
    let idx = |n: &str| t.field_index(n);
    let (Some(fs), Some(fe), Some(fo), Some(fg), Some(fc), Some(fr), Some(fb), Some(ft)) = (
        idx("interval_start"),
        idx("interval_end"),
        idx("operation"),
        idx("group"),
        idx("count"),
        idx("errors"),
        idx("bytes"),
        idx("total_ns"),
    ) else {
        return vec![Err(crate::Error::MissingField {
            type_name: FS_AGGREGATE_TYPE.into(),
            field: "interval_start, interval_end, operation, group, count, errors, bytes or \
                    total_ns"
                .into(),
        })];
    };
    let (fmin, fmax, fh) = (idx("min_ns"), idx("max_ns"), idx("histogram_ns"));
    let int = |r: usize, f: usize| match e.value(r, f) {
        Value::Int64(v) => v,
        Value::Int32(v) => v.into(),
        _ => 0,
    };
    let bytes = |r: usize, f: usize| match e.value(r, f) {
        Value::Bytes(b) => b.to_vec(),
        _ => Vec::new(),
    };
    let u = |v: i64| u64::try_from(v).unwrap_or(0);
    (0..e.len())
        .map(|r| {
            let mut stats = FsStats {
                count: u(int(r, fc)),
                errors: u(int(r, fr)),
                bytes: u(int(r, fb)),
                total_ns: u(int(r, ft)),
                min_ns: fmin.map_or(u64::MAX, |f| u(int(r, f))),
                max_ns: fmax.map_or(0, |f| u(int(r, f))),
                hist: [0; 64],
            };
            if let Some(f) = fh {
                let h = bytes(r, f);
                if h.len() % 8 != 0 || h.len() > 64 * 8 {
                    return Err(crate::Error::BadRecord {
                        type_name: FS_AGGREGATE_TYPE.into(),
                        extent_offset: e.offset().unwrap_or(0),
                        problem: format!(
                            "row {r}: a histogram of {} bytes (at most 64 u64 counts)",
                            h.len()
                        ),
                    });
                }
                for (k, c) in h.chunks_exact(8).enumerate() {
                    stats.hist[k] = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                }
            }
            Ok(FsAggregateRow {
                interval_start_ns: int(r, fs),
                interval_end_ns: int(r, fe),
                operation: String::from_utf8_lossy(&bytes(r, fo)).into_owned(),
                group: bytes(r, fg),
                stats,
            })
        })
        .collect()
}

/// Per (operation, group) statistics of one aggregate interval.
#[derive(Clone, Debug)]
pub struct FsStats {
    /// Operations counted.
    pub count: u64,
    /// Those that failed (an errno).
    pub errors: u64,
    /// Bytes of their data buffers (read or written data, xattr values, link targets).
    pub bytes: u64,
    /// Sum of their latencies, in ns (`time_returned - time_called`).
    pub total_ns: u64,
    /// Shortest latency, in ns; `u64::MAX` while nothing was counted.
    pub min_ns: u64,
    /// Longest latency, in ns; 0 while nothing was counted.
    pub max_ns: u64,
    /// Bucket k counts latencies with 2^(k-1) <= ns < 2^k (bucket 0: 0 ns).
    pub hist: [u64; 64],
}

impl Default for FsStats {
    fn default() -> Self {
        FsStats {
            count: 0,
            errors: 0,
            bytes: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            hist: [0; 64],
        }
    }
}

impl FsStats {
    /// Count one operation of `ns` nanoseconds that moved `bytes`.
    pub fn add(&mut self, ns: u64, bytes: u64, failed: bool) {
        self.count += 1;
        self.errors += u64::from(failed);
        self.bytes += bytes;
        self.total_ns += ns;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        let k = (64 - ns.leading_zeros()) as usize;
        self.hist[k.min(63)] += 1;
    }
}

/// One row of the aggregate driver, as `reanimator fs --aggregate` hands it to
/// [`crate::TraceWriter::append_fs_aggregate`] (borrowed; [`FsAggregateRow`] is what
/// reading gives back).
pub struct AggregateRow<'a> {
    /// The interval's start, ns since the Unix epoch.
    pub interval_start: i64,
    /// The interval's end, ns since the Unix epoch.
    pub interval_end: i64,
    /// The FUSE operation counted.
    pub op: &'a str,
    /// The group: empty (per operation only), a uid, or a path prefix such as `/src`.
    pub group: &'a str,
    /// What the interval counted.
    pub stats: &'a FsStats,
}

/// What a record keeps of an operation's data buffer (`--data full|hash|none`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FsData<'a> {
    /// The operation moves no data.
    #[default]
    None,
    /// The bytes (borrowed from the request where they can be: no copy before the trace).
    Full(std::borrow::Cow<'a, [u8]>),
    /// Their length and BLAKE3 digest.
    Hashed {
        /// Bytes the buffer held.
        len: u64,
        /// BLAKE3 hash of those bytes.
        blake3: [u8; 32],
    },
    /// Their length only (`--data none`).
    Length(u64),
}

/// One file-system operation, as the tracing file system builds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsRecord<'a> {
    /// FUSE operation name (`lookup`, `read`, `setattr`, ...).
    pub op: &'static str,
    /// When the request was received, ns since the Unix epoch.
    pub time_called: i64,
    /// When it was answered, ns since the Unix epoch.
    pub time_returned: i64,
    /// The calling thread's process (from /proc; `None` when it already exited).
    pub pid: Option<i32>,
    /// The calling thread (FUSE's `pid` is the thread id).
    pub tid: i32,
    /// The caller's fsuid, as FUSE's request header gives it (`executing_uid`).
    pub uid: i32,
    /// The caller's fsgid (`executing_gid`).
    pub gid: i32,
    /// `return_value`: bytes moved (read, write, copy_file_range, getxattr/listxattr),
    /// entries returned (readdir), the new offset (lseek), else 0; -1 on failure.
    pub ret: i64,
    /// `errno_number`: 0, or the (positive) error the lower file system returned.
    pub errno: i32,
    /// The calling thread's name from /proc, read at record time (`executing_comm`);
    /// `None` when it could not be read.
    pub comm: Option<Vec<u8>>,
    /// The kernel's FUSE request id (`fuse_unique`).
    pub fuse_unique: u64,
    /// The FUSE node id (`nodeid`): the lower inode number for files on the lower root's
    /// device; the root is 1.
    pub nodeid: u64,
    /// The lower file system's inode number.
    pub inode: Option<i64>,
    /// The file handle (`fh`), numbered like descriptors: lowest free from 3.
    pub fh: Option<i64>,
    /// Path as the program saw it (under the mountpoint), without a NUL.
    pub path: Option<Vec<u8>>,
    /// Rename's and link's destination, symlink's link path.
    pub new_path: Option<Vec<u8>>,
    /// Xattr name.
    pub name: Option<Vec<u8>>,
    /// Request offset in bytes (read, write, fallocate, lseek, copy_file_range's source).
    pub offset: Option<i64>,
    /// Request size in bytes (read, write, fallocate; setattr's new size; an xattr
    /// buffer's size).
    pub length: Option<i64>,
    /// Open/create flags, rename flags, fallocate mode, lseek whence, setxattr flags,
    /// fsync's datasync, mknod's rdev, or an ioctl's request number.
    pub flags: Option<i64>,
    /// create/mkdir/mknod mode (umask applied), setattr's new mode, access's mask, or
    /// getattr's permission bits.
    pub mode: Option<i32>,
    /// setattr's new owner.
    pub owner_uid: Option<i32>,
    /// setattr's new group.
    pub owner_gid: Option<i32>,
    /// setattr's new access time, ns since the Unix epoch.
    pub atime: Option<i64>,
    /// setattr's new modification time, ns since the Unix epoch.
    pub mtime: Option<i64>,
    /// setattr set the access time to now (`UTIME_NOW`).
    pub atime_now: bool,
    /// setattr set the modification time to now (`UTIME_NOW`).
    pub mtime_now: bool,
    /// copy_file_range's destination handle.
    pub fh_out: Option<i64>,
    /// copy_file_range's destination offset, in bytes.
    pub offset_out: Option<i64>,
    /// The bytes read or written, the xattr value, or the link target, as `--data` keeps
    /// them (`data`, `data_length`, `data_blake3`).
    pub data: FsData<'a>,
    /// lookup/create/mkdir/mknod/symlink: the inode found or made.
    pub result_inode: Option<i64>,
    /// getattr: the file size; getxattr/listxattr with size 0: the length.
    pub result_size: Option<i64>,
}

impl FsRecord<'_> {
    /// Every column the writer stores for this record, as (column, value), in column order
    /// (`id`: its unique id); the columns left out are null.
    pub fn columns(&self, id: u64) -> Vec<(usize, dataseries::Value<'_>)> {
        use dataseries::Value;
        let mut v: Vec<(usize, Value<'_>)> = Vec::with_capacity(24);
        let i64v = Value::Int64;
        v.push((col::UNIQUE_ID, i64v(id as i64)));
        v.push((col::TIME_CALLED, i64v(self.time_called)));
        v.push((col::TIME_RETURNED, i64v(self.time_returned)));
        if let Some(p) = self.pid {
            v.push((col::PID, Value::Int32(p)));
        }
        v.push((col::TID, Value::Int32(self.tid)));
        v.push((col::UID, Value::Int32(self.uid)));
        v.push((col::GID, Value::Int32(self.gid)));
        v.push((col::RET, i64v(self.ret)));
        v.push((col::ERRNO, Value::Int32(self.errno)));
        v.push((col::OPERATION, Value::Bytes(self.op.as_bytes())));
        v.push((col::FUSE_UNIQUE, i64v(self.fuse_unique as i64)));
        v.push((col::NODEID, i64v(self.nodeid as i64)));
        for (f, b) in [
            (col::COMM, &self.comm),
            (col::PATH, &self.path),
            (col::NEW_PATH, &self.new_path),
            (col::NAME, &self.name),
        ] {
            if let Some(b) = b {
                v.push((f, Value::Bytes(b)));
            }
        }
        for (f, x) in [
            (col::INODE, self.inode),
            (col::FH, self.fh),
            (col::OFFSET, self.offset),
            (col::LENGTH, self.length),
            (col::FLAGS, self.flags),
            (col::ATIME, self.atime),
            (col::MTIME, self.mtime),
            (col::FH_OUT, self.fh_out),
            (col::OFFSET_OUT, self.offset_out),
            (col::RESULT_INODE, self.result_inode),
            (col::RESULT_SIZE, self.result_size),
        ] {
            if let Some(x) = x {
                v.push((f, i64v(x)));
            }
        }
        for (f, x) in [
            (col::MODE, self.mode),
            (col::OWNER_UID, self.owner_uid),
            (col::OWNER_GID, self.owner_gid),
        ] {
            if let Some(x) = x {
                v.push((f, Value::Int32(x)));
            }
        }
        v.push((col::ATIME_NOW, Value::Bool(self.atime_now)));
        v.push((col::MTIME_NOW, Value::Bool(self.mtime_now)));
        match &self.data {
            FsData::None => {}
            FsData::Full(d) => {
                v.push((col::DATA, Value::Bytes(d)));
                v.push((col::DATA_LENGTH, i64v(d.len() as i64)));
            }
            FsData::Hashed { len, blake3 } => {
                v.push((col::DATA_LENGTH, i64v(*len as i64)));
                v.push((col::DATA_BLAKE3, Value::Bytes(blake3)));
                v.push((col::NOT_CAPTURED, Value::Bool(true)));
            }
            FsData::Length(len) => {
                v.push((col::DATA_LENGTH, i64v(*len as i64)));
                v.push((col::NOT_CAPTURED, Value::Bool(true)));
            }
        }
        v.sort_by_key(|(c, _)| *c);
        v
    }

    /// The record as the reader gives it back once written with unique id `id` (a named
    /// event without registry entry; the operation's non-null, non-false columns as
    /// [`Event::extra`]).
    pub fn to_event(&self, id: u64) -> Event {
        self.to_event_cut(id, usize::MAX)
    }

    /// [`FsRecord::to_event`] with byte columns cut after `max_bytes` (what a live printer
    /// needs of a large read or write, without copying the rest).
    pub fn to_event_cut(&self, id: u64, max_bytes: usize) -> Event {
        use dataseries::Value;
        let ty = fs_op_type();
        let mut ev = Event {
            def: None,
            name: self.op.to_string(),
            unique_id: id,
            time_called: Some(self.time_called),
            time_returned: Some(self.time_returned),
            time_recorded: None,
            pid: self.pid,
            tid: Some(self.tid),
            ppid: None,
            uid: Some(self.uid),
            gid: Some(self.gid),
            sid: None,
            pgid: None,
            ret: Some(self.ret),
            errno: Some(self.errno),
            buffer_not_captured: false,
            args: Vec::new(),
            extra: Vec::new(),
        };
        for (c, v) in self.columns(id) {
            if c == col::NOT_CAPTURED {
                ev.buffer_not_captured = v == Value::Bool(true);
            }
            if c <= col::OPERATION || matches!(v, Value::Null | Value::Bool(false)) {
                continue;
            }
            let x = match v {
                Value::Bytes(b) => ExtraValue::Bytes(b[..b.len().min(max_bytes)].to_vec()),
                Value::Bool(b) => ExtraValue::Bool(b),
                Value::Int32(i) => ExtraValue::Int(i.into()),
                Value::Int64(i) => ExtraValue::Int(i),
                _ => continue,
            };
            ev.extra.push((ty.fields()[c].name.clone(), x));
        }
        ev
    }

    /// Approximate memory held (queues count it against their byte budgets).
    pub fn memory_bytes(&self) -> usize {
        let v = |o: &Option<Vec<u8>>| o.as_ref().map_or(0, Vec::len);
        std::mem::size_of::<FsRecord>()
            + v(&self.comm)
            + v(&self.path)
            + v(&self.new_path)
            + v(&self.name)
            + match &self.data {
                FsData::Full(d) => d.len(),
                _ => 0,
            }
    }
}

fn extra_bool(ev: &Event, k: &str) -> bool {
    ev.extra.iter().any(|(n, v)| n == k && *v == ExtraValue::Bool(true))
}

/// True for an event read from a [`FS_OP_TYPE`] record.
pub fn is_fs_event(ev: &Event) -> bool {
    ev.def.is_none() && ev.extra.iter().any(|(k, _)| k == "fuse_unique")
}

/// The extra field ([`Event::extra`]) of a call [`to_syscalls`] made: the name of the
/// file-system operation it reproduces. Its paths are whole paths from the mount's root that the
/// tracing file system built, not arguments a program passed: they can be longer than
/// `PATH_MAX` (a deep tree), which the kernel refuses in a program's arguments.
pub const FS_OPERATION: &str = "fs_operation";

/// The process every replayed file-system operation runs in: the operations are issued in the
/// order the file system saw them, by one thread, sharing one descriptor table (FUSE file
/// handles become its descriptors).
pub const REPLAY_PID: i32 = 1;

/// The system calls that reproduce one file-system operation, in order (empty for operations
/// that replay has nothing to issue for: `forget`, `flush`, `readdir`, `ioctl`, ...). The
/// result of the operation is the result of the last call; earlier calls of a multi-part
/// `setattr` carry the same result.
pub fn to_syscalls(ev: &Event) -> Vec<Event> {
    let path = || ev.extra_bytes("pathname").map(with_nul);
    let new_path = || ev.extra_bytes("new_pathname").map(with_nul);
    let int = |k: &str| ev.extra_int(k);
    let data = || match ev.extra_bytes("data") {
        Some(d) => ArgValue::data(d.to_vec()),
        None => ArgValue::NotCaptured,
    };
    let mk = |name: &str, args: &[(&str, ArgValue)]| -> Option<Event> {
        let def = by_trace_name(name)?;
        let mut e = Event::new(def);
        e.unique_id = ev.unique_id;
        e.time_called = ev.time_called;
        e.time_returned = ev.time_returned;
        e.pid = Some(REPLAY_PID);
        e.tid = Some(REPLAY_PID);
        e.uid = ev.uid;
        e.gid = ev.gid;
        e.ret = ev.ret;
        e.errno = ev.errno;
        e.buffer_not_captured = ev.buffer_not_captured;
        e.extra.push((FS_OPERATION.into(), ExtraValue::Bytes(ev.name.as_bytes().to_vec())));
        for (k, v) in args {
            let set = e.set_arg(k, v.clone());
            debug_assert!(set, "{name} has no argument {k}");
        }
        // Results the operation did not capture stay unverified.
        for (a, v) in def.args.iter().zip(e.args.iter_mut()) {
            if *v == ArgValue::Absent && a.kind.is_pointer_data() {
                *v = ArgValue::NotCaptured;
            }
        }
        Some(e)
    };
    let at = || ArgValue::Int(-100);
    let i = ArgValue::Int;
    let opt = |v: Option<Event>| v.into_iter().collect::<Vec<_>>();
    let fh = int("fh");
    match ev.name.as_str() {
        "lookup" | "getattr" => {
            let Some(p) = path() else { return Vec::new() };
            opt(mk(
                "fstatat",
                &[
                    ("dirfd", at()),
                    ("pathname", ArgValue::data(p)),
                    ("flags", i(libc::AT_SYMLINK_NOFOLLOW as i64)),
                ],
            ))
        }
        "setattr" => {
            let Some(p) = path() else { return Vec::new() };
            let mut v = Vec::new();
            if let Some(m) = int("mode") {
                v.extend(mk(
                    "fchmodat",
                    &[("dirfd", at()), ("pathname", ArgValue::data(p.clone())), ("mode", i(m))],
                ));
            }
            let (ou, og) = (int("owner_uid"), int("owner_gid"));
            if ou.is_some() || og.is_some() {
                v.extend(mk(
                    "fchownat",
                    &[
                        ("dirfd", at()),
                        ("pathname", ArgValue::data(p.clone())),
                        ("owner", i(ou.unwrap_or(-1))),
                        ("group", i(og.unwrap_or(-1))),
                        ("flags", i(libc::AT_SYMLINK_NOFOLLOW as i64)),
                    ],
                ));
            }
            if let Some(len) = int("length") {
                v.extend(match fh {
                    Some(fd) => mk("ftruncate", &[("fd", i(fd)), ("length", i(len))]),
                    None => {
                        mk("truncate", &[("path", ArgValue::data(p.clone())), ("length", i(len))])
                    }
                });
            }
            let (a, m) = (int("atime"), int("mtime"));
            let (an, mn) = (extra_bool(ev, "atime_now"), extra_bool(ev, "mtime_now"));
            if a.is_some() || m.is_some() || an || mn {
                let ts = |t: Option<i64>, now: bool| -> (i64, i64) {
                    match (t, now) {
                        (_, true) => (0, crate::structs::UTIME_NOW),
                        (Some(t), false) => {
                            (t.div_euclid(1_000_000_000), t.rem_euclid(1_000_000_000))
                        }
                        (None, false) => (0, crate::structs::UTIME_OMIT),
                    }
                };
                let mut times = Vec::with_capacity(32);
                for (s, ns) in [ts(a, an), ts(m, mn)] {
                    times.extend_from_slice(&s.to_ne_bytes());
                    times.extend_from_slice(&ns.to_ne_bytes());
                }
                v.extend(mk(
                    "utimensat",
                    &[
                        ("dirfd", at()),
                        ("pathname", ArgValue::data(p)),
                        ("times", ArgValue::data(times)),
                        ("flags", i(libc::AT_SYMLINK_NOFOLLOW as i64)),
                    ],
                ));
            }
            v
        }
        "readlink" => {
            let Some(p) = path() else { return Vec::new() };
            opt(mk(
                "readlinkat",
                &[
                    ("dirfd", at()),
                    ("pathname", ArgValue::data(p)),
                    ("buf", data()),
                    ("bufsiz", i(int("length").unwrap_or(4096))),
                ],
            ))
        }
        "mknod" | "mkdir" | "unlink" | "rmdir" => {
            let Some(p) = path() else { return Vec::new() };
            let p = ArgValue::data(p);
            let mode = i(int("mode").unwrap_or(0));
            match ev.name.as_str() {
                "mknod" => opt(mk(
                    "mknodat",
                    &[
                        ("dirfd", at()),
                        ("pathname", p),
                        ("mode", mode),
                        ("dev", i(int("flags").unwrap_or(0))),
                    ],
                )),
                "mkdir" => opt(mk("mkdirat", &[("dirfd", at()), ("pathname", p), ("mode", mode)])),
                "unlink" => {
                    opt(mk("unlinkat", &[("dirfd", at()), ("pathname", p), ("flags", i(0))]))
                }
                _ => opt(mk(
                    "unlinkat",
                    &[("dirfd", at()), ("pathname", p), ("flags", i(libc::AT_REMOVEDIR as i64))],
                )),
            }
        }
        "symlink" => {
            let (Some(link), Some(target)) = (path(), ev.extra_bytes("data")) else {
                return Vec::new();
            };
            opt(mk(
                "symlinkat",
                &[
                    ("target", ArgValue::data(with_nul(target))),
                    ("newdirfd", at()),
                    ("linkpath", ArgValue::data(link)),
                ],
            ))
        }
        "rename" | "link" => {
            let (Some(old), Some(new)) = (path(), new_path()) else { return Vec::new() };
            if ev.name == "rename" {
                opt(mk(
                    "renameat2",
                    &[
                        ("olddirfd", at()),
                        ("oldpath", ArgValue::data(old)),
                        ("newdirfd", at()),
                        ("newpath", ArgValue::data(new)),
                        ("flags", i(int("flags").unwrap_or(0))),
                    ],
                ))
            } else {
                opt(mk(
                    "linkat",
                    &[
                        ("olddirfd", at()),
                        ("oldpath", ArgValue::data(old)),
                        ("newdirfd", at()),
                        ("newpath", ArgValue::data(new)),
                        ("flags", i(0)),
                    ],
                ))
            }
        }
        "open" | "create" | "opendir" => {
            let Some(p) = path() else { return Vec::new() };
            let mut flags = int("flags").unwrap_or(0);
            if ev.name == "create" {
                flags |= libc::O_CREAT as i64;
            }
            if ev.name == "opendir" {
                flags = (libc::O_RDONLY | libc::O_DIRECTORY) as i64;
            }
            let mut e = mk(
                "openat",
                &[
                    ("dirfd", at()),
                    ("pathname", ArgValue::data(p)),
                    ("flags", i(flags)),
                    ("mode", i(int("mode").unwrap_or(0))),
                ],
            );
            if let (Some(e), Some(fd)) = (e.as_mut(), fh) {
                if !e.failed() {
                    e.ret = Some(fd);
                }
            }
            opt(e)
        }
        "read" | "write" => {
            let (Some(fd), Some(off)) = (fh, int("offset")) else { return Vec::new() };
            let len = int("length").unwrap_or(0);
            if ev.name == "read" {
                opt(mk(
                    "pread",
                    &[("fd", i(fd)), ("buf", data()), ("count", i(len)), ("offset", i(off))],
                ))
            } else {
                opt(mk(
                    "pwrite",
                    &[("fd", i(fd)), ("buf", data()), ("count", i(len)), ("offset", i(off))],
                ))
            }
        }
        "release" | "releasedir" => {
            let Some(fd) = fh else { return Vec::new() };
            let mut e = mk("close", &[("fd", i(fd))]);
            if let Some(e) = e.as_mut() {
                e.ret = Some(0);
                e.errno = None;
            }
            opt(e)
        }
        "fsync" | "fsyncdir" => {
            let Some(fd) = fh else { return Vec::new() };
            let call = if int("flags").unwrap_or(0) & 1 != 0 { "fdatasync" } else { "fsync" };
            opt(mk(call, &[("fd", i(fd))]))
        }
        "statfs" => {
            let Some(p) = path() else { return Vec::new() };
            opt(mk("statfs", &[("path", ArgValue::data(p))]))
        }
        "access" => {
            let Some(p) = path() else { return Vec::new() };
            opt(mk(
                "faccessat",
                &[
                    ("dirfd", at()),
                    ("pathname", ArgValue::data(p)),
                    ("mode", i(int("mode").unwrap_or(0))),
                ],
            ))
        }
        "setxattr" | "getxattr" | "listxattr" | "removexattr" => {
            let Some(p) = path() else { return Vec::new() };
            let p = ArgValue::data(p);
            let name =
                || ArgValue::data(with_nul(ev.extra_bytes("xattr_name").unwrap_or_default()));
            let size = i(int("length").unwrap_or(0));
            match ev.name.as_str() {
                "setxattr" => opt(mk(
                    "lsetxattr",
                    &[
                        ("path", p),
                        ("name", name()),
                        ("value", data()),
                        ("size", size),
                        ("flags", i(int("flags").unwrap_or(0))),
                    ],
                )),
                "getxattr" => opt(mk(
                    "lgetxattr",
                    &[("path", p), ("name", name()), ("value", data()), ("size", size)],
                )),
                "listxattr" => {
                    opt(mk("llistxattr", &[("path", p), ("list", data()), ("size", size)]))
                }
                _ => opt(mk("lremovexattr", &[("path", p), ("name", name())])),
            }
        }
        "fallocate" => {
            let (Some(fd), Some(off)) = (fh, int("offset")) else { return Vec::new() };
            opt(mk(
                "fallocate",
                &[
                    ("fd", i(fd)),
                    ("mode", i(int("flags").unwrap_or(0))),
                    ("offset", i(off)),
                    ("len", i(int("length").unwrap_or(0))),
                ],
            ))
        }
        "lseek" => {
            let Some(fd) = fh else { return Vec::new() };
            opt(mk(
                "lseek",
                &[
                    ("fd", i(fd)),
                    ("offset", i(int("offset").unwrap_or(0))),
                    ("whence", i(int("flags").unwrap_or(0))),
                ],
            ))
        }
        "copy_file_range" => {
            let (Some(fd), Some(out)) = (fh, int("fh_out")) else { return Vec::new() };
            // A recorded copy_file_range holds its offsets as the kernel wrote them back
            // (after the bytes moved; `Event::copy` subtracts them again); the operation
            // holds where the copy started.
            let moved = ev.bytes_moved();
            let after = |k: &str| (int(k).unwrap_or(0) + moved).to_le_bytes().to_vec();
            let (off_in, off_out) = (after("offset"), after("offset_out"));
            opt(mk(
                "copy_file_range",
                &[
                    ("fd_in", i(fd)),
                    ("off_in", ArgValue::data(off_in)),
                    ("fd_out", i(out)),
                    ("off_out", ArgValue::data(off_out)),
                    ("len", i(int("length").unwrap_or(0))),
                    ("flags", i(0)),
                ],
            ))
        }
        _ => Vec::new(),
    }
}

fn with_nul(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len() + 1);
    v.extend_from_slice(b);
    v.push(0);
    v
}
