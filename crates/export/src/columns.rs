//! The tables and their columns: one definition for every format (Parquet, CSV), the calls
//! table's argument columns derived from the registry. docs/TRACE_FORMAT.md section 12 lists
//! them; a test checks that it does.

use std::collections::HashMap;
use std::sync::OnceLock;

use ra_syscalls::{ArgKind, Meaning, Struct, SyscallDef, REGISTRY};

/// The version of the tables' layout (columns, their types and meanings). Written into every
/// Parquet file's key-value metadata (`reanimator.export_version`); docs/TRACE_FORMAT.md 12.1.
pub const EXPORT_VERSION: u32 = 1;

/// A column's type. Parquet: `Int64`/`Int32` as INT64/INT32, `Bool` BOOLEAN, `Text` a UTF-8
/// BYTE_ARRAY (STRING), `Bytes` a BYTE_ARRAY, `Digest` a 32-byte FIXED_LEN_BYTE_ARRAY (BLAKE3),
/// `TextList` a LIST of STRING. Every column is nullable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColType {
    /// 64-bit signed integer: times (ns since the Unix epoch), ids, arguments, lengths.
    Int64,
    /// 32-bit signed integer: `calls`' caller ids (`pid`, `tid`, `uid`, ...) and `errno`,
    /// `snapshots`' index, mode and xattr count, `profiles`' bucket.
    Int32,
    /// Boolean (`buffer_not_captured`, `partial`).
    Bool,
    /// UTF-8 string; bytes that are not UTF-8 are escaped as `\xNN` ([`text_into`]).
    Text,
    /// Raw bytes (structs as the kernel read or wrote them, data in the `data` table).
    Bytes,
    /// A 32-byte BLAKE3 hash.
    Digest,
    /// A list of UTF-8 strings (`argv`, `envp`); CSV writes it as a JSON array.
    TextList,
}

impl ColType {
    /// The name docs/TRACE_FORMAT.md uses.
    pub fn name(self) -> &'static str {
        match self {
            ColType::Int64 => "int64",
            ColType::Int32 => "int32",
            ColType::Bool => "bool",
            ColType::Text => "string",
            ColType::Bytes => "binary",
            ColType::Digest => "digest",
            ColType::TextList => "list<string>",
        }
    }
}

/// One column of a table: its name as Parquet and CSV headers give it (docs/TRACE_FORMAT.md
/// 12.2, 12.3) and its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column's name (`time_called`, `buf_length`, `arg_path`, ...).
    pub name: String,
    /// The column's type.
    pub ty: ColType,
}

fn col(name: &str, ty: ColType) -> Column {
    Column { name: name.to_string(), ty }
}

/// The columns every table starts with: which machine and which trace a row comes from. They
/// are also the partition directories (`host=H/trace=T/`). `host`: the trace's `hostname`
/// fact or `--host` ([`crate::pass::TraceMeta::host`]).
pub const HOST: u16 = 0;
/// Index of `trace_id`, every table's second column: the trace file's name without `.ds`
/// ([`crate::pass::TraceMeta::trace_id`]).
pub const TRACE_ID: u16 = 1;

/// The common columns of `calls`, after `host` and `trace_id`, in order (indices are the
/// constants below).
const CALL_COMMON: &[(&str, ColType)] = &[
    ("host", ColType::Text),
    ("trace_id", ColType::Text),
    ("backend", ColType::Text),
    ("unique_id", ColType::Int64),
    ("call", ColType::Text),
    ("syscall", ColType::Text),
    ("class", ColType::Text),
    ("io_class", ColType::Text),
    ("time_called", ColType::Int64),
    ("time_returned", ColType::Int64),
    ("duration_ns", ColType::Int64),
    ("time_recorded", ColType::Int64),
    ("pid", ColType::Int32),
    ("tid", ColType::Int32),
    ("ppid", ColType::Int32),
    ("uid", ColType::Int32),
    ("gid", ColType::Int32),
    ("sid", ColType::Int32),
    ("pgid", ColType::Int32),
    ("return_value", ColType::Int64),
    ("errno", ColType::Int32),
    ("errno_name", ColType::Text),
    ("buffer_not_captured", ColType::Bool),
    ("path", ColType::Text),
    ("fd_path", ColType::Text),
    ("comm", ColType::Text),
    // File-system operations (`reanimator fs` traces) only: the FsOp columns no system call
    // argument means.
    ("fuse_unique", ColType::Int64),
    ("nodeid", ColType::Int64),
    ("inode", ColType::Int64),
    ("result_inode", ColType::Int64),
    ("result_size", ColType::Int64),
];

/// Indices of the common columns of `calls` in [`CallsSchema::columns`] (after [`HOST`] and
/// [`TRACE_ID`]); docs/TRACE_FORMAT.md 12.2 says what each holds. A test keeps them in step
/// with the column list.
pub mod c {
    /// `backend` (string): the recorder, [`crate::pass::TraceMeta::backend`].
    pub const BACKEND: u16 = 2;
    /// `unique_id` (int64): the event's position in the trace's total order.
    pub const UNIQUE_ID: u16 = 3;
    /// `call` (string): the trace's name of the call (the extent type's suffix; the FUSE
    /// operation for `reanimator fs` traces).
    pub const CALL: u16 = 4;
    /// `syscall` (string): the registry's name of the call; for fs operations the system
    /// call that reproduces it, null when none does.
    pub const SYSCALL: u16 = 5;
    /// `class` (string): the registry's class ([`crate::row::class`]).
    pub const CLASS: u16 = 6;
    /// `io_class` (string): `read`, `write`, `meta`, ... (docs/PROFILE.md); the row-group
    /// partition of Parquet files and the CSV file family.
    pub const IO_CLASS: u16 = 7;
    /// `time_called` (int64): ns since the Unix epoch.
    pub const TIME_CALLED: u16 = 8;
    /// `time_returned` (int64): ns since the Unix epoch.
    pub const TIME_RETURNED: u16 = 9;
    /// `duration_ns` (int64): `time_returned - time_called`.
    pub const DURATION_NS: u16 = 10;
    /// `time_recorded` (int64): ns since the Unix epoch, when the tracer recorded the event.
    pub const TIME_RECORDED: u16 = 11;
    /// `pid` (int32): Re-Animator's `executing_pid`.
    pub const PID: u16 = 12;
    /// `tid` (int32): Re-Animator's `executing_tid`.
    pub const TID: u16 = 13;
    /// `ppid` (int32): the caller's parent process.
    pub const PPID: u16 = 14;
    /// `uid` (int32): the caller's real user id (fs traces: its fsuid).
    pub const UID: u16 = 15;
    /// `gid` (int32): the caller's real group id (fs traces: its fsgid).
    pub const GID: u16 = 16;
    /// `sid` (int32): the caller's session id.
    pub const SID: u16 = 17;
    /// `pgid` (int32): the caller's process group.
    pub const PGID: u16 = 18;
    /// `return_value` (int64): the call's return value as the trace holds it.
    pub const RETURN_VALUE: u16 = 19;
    /// `errno` (int32): 0 on success.
    pub const ERRNO: u16 = 20;
    /// `errno_name` (string): `ENOENT`, ...; null on success.
    pub const ERRNO_NAME: u16 = 21;
    /// `buffer_not_captured` (bool): some buffer of the call was not recorded.
    pub const BUFFER_NOT_CAPTURED: u16 = 22;
    /// `path` (string): the call's first path argument without its NUL (fs: the
    /// operation's path).
    pub const PATH: u16 = 23;
    /// `fd_path` (string): what the call's first descriptor argument (or the descriptor it
    /// returned) names, from [`ra_trace::fileio`]; null for pipes, sockets, `/dev`, `/proc`,
    /// `/sys` and descriptors never seen opened.
    pub const FD_PATH: u16 = 24;
    /// `comm` (string): the process name as the kernel keeps it (at most 15 bytes).
    pub const COMM: u16 = 25;
    /// `fuse_unique` (int64, fs traces only): the kernel's FUSE request id.
    pub const FUSE_UNIQUE: u16 = 26;
    /// `nodeid` (int64, fs traces only): the FUSE node id the operation is on (the root is 1).
    pub const NODEID: u16 = 27;
    /// `inode` (int64, fs traces only): the lower file's inode number.
    pub const INODE: u16 = 28;
    /// `result_inode` (int64, fs traces only): the inode lookup, create, mkdir, mknod or
    /// symlink found or made.
    pub const RESULT_INODE: u16 = 29;
    /// `result_size` (int64, fs traces only): getattr's file size; the length
    /// getxattr/listxattr with size 0 answered.
    pub const RESULT_SIZE: u16 = 30;
    /// The first argument column.
    pub const FIRST_ARG: u16 = 31;
}

/// How an argument becomes columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgHow {
    /// Integers (descriptors, flags, modes, counts, offsets, addresses): `NAME`, int64.
    Int,
    /// C strings (paths, xattr names) without their NUL, and paths returned in a buffer
    /// (readlink's target): `NAME`, string.
    Text,
    /// A `loff_t` in/out pointer (sendfile, copy_file_range, splice): `NAME`, int64, the value
    /// the trace holds (after the call).
    Loff,
    /// Other structs, as the raw bytes the kernel read or wrote: `NAME`, binary.
    Raw,
    /// Data buffers and vectors (file contents, messages, listings): `NAME_length` (bytes
    /// captured, or the length a digest-only trace kept) and `NAME_digest` (BLAKE3 of the
    /// bytes, vectors concatenated), the bytes themselves in the `data` table.
    Data,
    /// String arrays (argv, envp): `NAME`, `list<string>`.
    List,
}

impl ArgHow {
    /// How argument `a` of a registry entry is exported, from its [`ArgKind`] and
    /// [`Meaning`] alone.
    pub fn of(a: &ra_syscalls::Arg) -> ArgHow {
        let loff = |s: Struct| s == Struct::Loff;
        match a.kind {
            ArgKind::Int
            | ArgKind::Fd
            | ArgKind::DirFd
            | ArgKind::Flags(_)
            | ArgKind::Mode
            | ArgKind::Addr => ArgHow::Int,
            k if k.is_c_string() => ArgHow::Text,
            ArgKind::InBuf(_) | ArgKind::OutBuf(_)
                if matches!(a.meaning, Meaning::PathResult { .. }) =>
            {
                ArgHow::Text
            }
            k if k.is_bulk() => ArgHow::Data,
            ArgKind::InStruct(s, _) | ArgKind::OutStruct(s, _) | ArgKind::InOutStruct(s, _)
                if loff(s) =>
            {
                ArgHow::Loff
            }
            ArgKind::StrArray => ArgHow::List,
            _ => ArgHow::Raw,
        }
    }

    fn ty(self) -> ColType {
        match self {
            ArgHow::Int | ArgHow::Loff => ColType::Int64,
            ArgHow::Text => ColType::Text,
            ArgHow::Raw => ColType::Bytes,
            ArgHow::Data => ColType::Int64,
            ArgHow::List => ColType::TextList,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            ArgHow::Int | ArgHow::Loff => "int",
            ArgHow::Text => "text",
            ArgHow::Raw => "raw",
            ArgHow::Data => "data",
            ArgHow::List => "list",
        }
    }
}

/// The columns one argument of one call fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgCols {
    /// How the argument becomes columns; says which of the three indices are set.
    pub how: ArgHow,
    /// `NAME` (not for [`ArgHow::Data`]).
    pub value: Option<u16>,
    /// `NAME_length` and `NAME_digest` ([`ArgHow::Data`]).
    pub length: Option<u16>,
    /// See `length`.
    pub digest: Option<u16>,
}

/// The `calls` table's columns and where each registry argument goes.
pub struct CallsSchema {
    /// Every column of `calls`, in file order: the common ones (indices in [`c`]), then the
    /// argument columns in registry order ([`c::FIRST_ARG`] on).
    pub columns: Vec<Column>,
    /// Per registry entry (by position in [`REGISTRY`]), per argument.
    args: Vec<Vec<ArgCols>>,
    by_name: HashMap<String, u16>,
    /// Argument columns renamed because two arguments of one name have different types
    /// (`NAME_SUFFIX`) or the name is a common column's (`arg_NAME`): (call, argument, column).
    pub renamed: Vec<(&'static str, &'static str, String)>,
}

impl CallsSchema {
    fn build() -> CallsSchema {
        let mut columns: Vec<Column> = CALL_COMMON.iter().map(|(n, t)| col(n, *t)).collect();
        let mut by_name: HashMap<String, u16> =
            columns.iter().enumerate().map(|(i, c)| (c.name.clone(), i as u16)).collect();
        let common: Vec<&str> = CALL_COMMON.iter().map(|(n, _)| *n).collect();
        // The type each argument name first had, in registry order.
        let mut first: HashMap<&str, ArgHow> = HashMap::new();
        let mut renamed = Vec::new();
        let mut args = Vec::with_capacity(REGISTRY.len());
        let mut column = |name: String, ty: ColType, columns: &mut Vec<Column>| -> u16 {
            if let Some(&i) = by_name.get(&name) {
                assert_eq!(columns[i as usize].ty, ty, "column {name} with two types");
                return i;
            }
            let i = columns.len() as u16;
            columns.push(Column { name: name.clone(), ty });
            by_name.insert(name, i);
            i
        };
        for d in REGISTRY {
            let mut v = Vec::with_capacity(d.args.len());
            for a in d.args {
                let how = ArgHow::of(a);
                let same_kind = |h: ArgHow| {
                    h == how
                        || matches!(
                            (h, how),
                            (ArgHow::Int, ArgHow::Loff) | (ArgHow::Loff, ArgHow::Int)
                        )
                };
                let mut name = a.name.to_string();
                if common.contains(&a.name) {
                    name = format!("arg_{}", a.name);
                } else if how != ArgHow::Data {
                    let f = *first.entry(a.name).or_insert(how);
                    if !same_kind(f) {
                        name = format!("{}_{}", a.name, how.suffix());
                    }
                }
                if name != a.name {
                    renamed.push((d.name, a.name, name.clone()));
                }
                let cols = if how == ArgHow::Data {
                    ArgCols {
                        how,
                        value: None,
                        length: Some(column(
                            format!("{name}_length"),
                            ColType::Int64,
                            &mut columns,
                        )),
                        digest: Some(column(
                            format!("{name}_digest"),
                            ColType::Digest,
                            &mut columns,
                        )),
                    }
                } else {
                    ArgCols {
                        how,
                        value: Some(column(name, how.ty(), &mut columns)),
                        length: None,
                        digest: None,
                    }
                };
                v.push(cols);
            }
            args.push(v);
        }
        let by_name = columns.iter().enumerate().map(|(i, c)| (c.name.clone(), i as u16)).collect();
        CallsSchema { columns, args, by_name, renamed }
    }

    /// The columns of a registry entry's arguments (aligned with `def.args`).
    pub fn arg_cols(&self, def: &SyscallDef) -> &[ArgCols] {
        let base = REGISTRY.as_ptr() as usize;
        let i = (def as *const SyscallDef as usize).wrapping_sub(base)
            / std::mem::size_of::<SyscallDef>();
        match REGISTRY.get(i) {
            Some(d) if std::ptr::eq(d, def) => &self.args[i],
            // A definition that is not the registry's own (a copy): look it up by name.
            _ => {
                REGISTRY.iter().position(|d| d.name == def.name).map_or(&[][..], |i| &self.args[i])
            }
        }
    }

    /// The index of the column called `name` in [`CallsSchema::columns`]; `None` when
    /// `calls` has no such column.
    pub fn index(&self, name: &str) -> Option<u16> {
        self.by_name.get(name).copied()
    }
}

/// The `calls` table's schema (built once).
pub fn calls() -> &'static CallsSchema {
    static S: OnceLock<CallsSchema> = OnceLock::new();
    S.get_or_init(CallsSchema::build)
}

/// The tables an export writes, beside `calls`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    /// One row per call or file-system operation ([`CallsSchema`]).
    Calls,
    /// Each distinct data buffer once (`--data full`): digest, length, bytes.
    Data,
    /// One row per `Reanimator::TraceInfo` fact: key, value.
    Facts,
    /// One row per `Reanimator::Lost` record: what the recorder failed to write.
    Losses,
    /// One row per entry of every stored snapshot state (start and end).
    Snapshots,
    /// The intervals of a `profile --json` file (`--profile FILE`).
    Profiles,
}

impl Table {
    /// Every table, `calls` first.
    pub const ALL: [Table; 6] =
        [Table::Calls, Table::Data, Table::Facts, Table::Losses, Table::Snapshots, Table::Profiles];

    /// The table's name: its directory beneath the export's output (`TABLE/host=H/...`), the
    /// `reanimator.table` metadata of its Parquet files, and its CSV file's stem (`calls`:
    /// `calls-FAMILY`).
    pub fn name(self) -> &'static str {
        match self {
            Table::Calls => "calls",
            Table::Data => "data",
            Table::Facts => "facts",
            Table::Losses => "losses",
            Table::Snapshots => "snapshots",
            Table::Profiles => "profiles",
        }
    }

    /// The table's columns, `host` and `trace_id` first.
    pub fn columns(self) -> Vec<Column> {
        use ColType::*;
        let mut v = vec![col("host", Text), col("trace_id", Text)];
        let rest: &[(&str, ColType)] = match self {
            Table::Calls => return calls().columns.clone(),
            Table::Data => &[("digest", Digest), ("length", Int64), ("bytes", Bytes)],
            Table::Facts => &[("key", Text), ("value", Text)],
            Table::Losses => &[
                ("call", Text),
                ("count", Int64),
                ("bytes", Int64),
                ("time_first", Int64),
                ("time_last", Int64),
                ("reason", Text),
            ],
            Table::Snapshots => &[
                ("snapshot", Int32),
                ("dir", Text),
                ("phase", Text),
                ("path", Text),
                ("kind", Text),
                ("mode", Int32),
                ("uid", Int64),
                ("gid", Int64),
                ("size", Int64),
                ("digest", Digest),
                ("target", Text),
                ("rdev_major", Int64),
                ("rdev_minor", Int64),
                ("link", Text),
                ("xattrs", Int32),
                ("mtime", Int64),
            ],
            Table::Profiles => &[
                ("layer", Text),
                ("op", Text),
                ("group", Text),
                ("start_ns", Int64),
                ("end_ns", Int64),
                ("partial", Bool),
                ("count", Int64),
                ("errors", Int64),
                ("total_ns", Int64),
                ("min_ns", Int64),
                ("max_ns", Int64),
                ("bucket", Int32),
                ("bucket_low_ns", Int64),
                ("bucket_high_ns", Int64),
                ("bucket_count", Int64),
            ],
        };
        v.extend(rest.iter().map(|(n, t)| col(n, *t)));
        v
    }
}

/// Text for a string column: the bytes when they are UTF-8 (never changed); otherwise each
/// byte that is not part of valid UTF-8 as `\xNN` and each backslash as `\\`, so that two
/// non-UTF-8 values never give the same text. Returns whether it escaped (exports count
/// the escaped values and say so).
pub fn text_into(b: &[u8], out: &mut Vec<u8>) -> bool {
    if std::str::from_utf8(b).is_ok() {
        out.extend_from_slice(b);
        return false;
    }
    for chunk in b.utf8_chunks() {
        for ch in chunk.valid().chars() {
            if ch == '\\' {
                out.extend_from_slice(b"\\\\");
            } else {
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
        }
        for &x in chunk.invalid() {
            out.extend_from_slice(format!("\\x{x:02x}").as_bytes());
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_argument_has_its_columns_and_names_are_unique() {
        let s = calls();
        let mut names: Vec<&str> = s.columns.iter().map(|c| c.name.as_str()).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate column names");
        for d in REGISTRY {
            let cols = s.arg_cols(d);
            assert_eq!(cols.len(), d.args.len(), "{}", d.name);
            for (a, c) in d.args.iter().zip(cols) {
                let expect = if c.how == ArgHow::Data { 2 } else { 1 };
                let got = [c.value, c.length, c.digest].iter().flatten().count();
                assert_eq!(got, expect, "{} {}", d.name, a.name);
            }
        }
        // Common columns keep their place.
        assert_eq!(s.columns[c::FD_PATH as usize].name, "fd_path");
        assert_eq!(s.columns[c::RESULT_SIZE as usize].name, "result_size");
        assert_eq!(s.columns[c::FIRST_ARG as usize - 1].name, "result_size");
        // The arguments most queries use, by their man-page names.
        let read = ra_syscalls::lookup("read").unwrap();
        let rc = s.arg_cols(read);
        assert_eq!(s.columns[rc[0].value.unwrap() as usize].name, "fd");
        assert_eq!(s.columns[rc[1].length.unwrap() as usize].name, "buf_length");
        assert_eq!(s.columns[rc[2].value.unwrap() as usize].name, "count");
        let open = ra_syscalls::lookup("openat").unwrap();
        let oc = s.arg_cols(open);
        assert_eq!(s.columns[oc[1].value.unwrap() as usize].name, "pathname");
        assert_eq!(s.columns[oc[1].value.unwrap() as usize].ty, ColType::Text);
    }

    #[test]
    fn text_is_utf8_or_escaped() {
        let mut o = Vec::new();
        assert!(!text_into("/tmp/é\\x".as_bytes(), &mut o));
        assert_eq!(o, "/tmp/é\\x".as_bytes());
        o.clear();
        assert!(text_into(b"/a\xff\\b", &mut o));
        assert_eq!(o, b"/a\\xff\\\\b");
        let mut p = Vec::new();
        text_into(b"/a\\xff\\\\b\xfe", &mut p);
        assert_ne!(o, p);
    }

    #[test]
    fn trace_format_section_12_lists_every_column() {
        let doc = include_str!("../../../docs/TRACE_FORMAT.md");
        let sec = &doc[doc.find("## 12. Exported tables").expect("section 12")..];
        let mark = format!("`reanimator.export_version` (**{EXPORT_VERSION}**");
        assert!(sec.contains(&mark), "section 12 names export version {EXPORT_VERSION}");
        let s = calls();
        for c in &s.columns[c::FIRST_ARG as usize..] {
            let entry = format!("`{}` {}", c.name, c.ty.name());
            assert!(sec.contains(&entry), "docs/TRACE_FORMAT.md 12.2 lacks {entry}");
        }
        for c in &s.columns[..c::FIRST_ARG as usize] {
            assert!(sec.contains(&format!("`{}`", c.name)), "12.2 lacks `{}`", c.name);
        }
        for t in Table::ALL {
            for c in t.columns() {
                assert!(sec.contains(&format!("`{}`", c.name)), "{}: `{}`", t.name(), c.name);
                if t != Table::Calls && c.name != "host" && c.name != "trace_id" {
                    let entry = format!("`{}` {}", c.name, c.ty.name());
                    assert!(sec.contains(&entry), "docs/TRACE_FORMAT.md 12.3 lacks {entry}");
                }
            }
        }
    }
}
