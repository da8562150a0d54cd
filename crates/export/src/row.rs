//! One call as a row of the `calls` table: the event's common fields, its arguments in the
//! registry's columns, the descriptor's path and the call's classes. File-system operations
//! (`reanimator fs` traces) fill the columns of the system calls that reproduce them
//! (`ra_trace::fsop::to_syscalls`, the one mapping), so that both kinds of trace, and
//! Re-Animator's own, land in the same columns where they mean the same.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use ra_syscalls::ArgKind;
use ra_trace::fileio::FileIoTracker;
use ra_trace::{ArgValue, Event, ExtraValue};

use crate::columns::{self, c, ArgHow};

/// One value of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell<'a> {
    /// A value of an int64 or int32 column (an int32 column's values fit in 32 bits).
    Int(i64),
    /// A value of a bool column.
    Bool(bool),
    /// Bytes for a string column (made text by [`columns::text_into`]).
    Text(&'a [u8]),
    /// A string column's value that lives as long as the program (a registry name, a class):
    /// [`Cell::Text`] that a sink may keep without copying.
    Static(&'static str),
    /// Raw bytes for a binary column (structs, the `data` table's `bytes`).
    Bytes(&'a [u8]),
    /// A BLAKE3 digest for a digest column.
    Digest([u8; 32]),
    /// The strings of a `list<string>` column (`argv`, `envp`), each without its NUL.
    List(&'a [Vec<u8>]),
}

/// Which data buffers an export keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataMode {
    /// Lengths only.
    None,
    /// Lengths and BLAKE3 digests.
    Digest,
    /// Lengths, digests, and the bytes in the `data` table.
    Full,
}

/// A row of `calls`: cells in column order (sparse: columns without a cell are null), and the
/// data buffers the call carried (digest and bytes, for the `data` table).
pub struct Row<'a> {
    /// The event the row was built from (sinks read its times and ids directly).
    pub ev: &'a Event,
    /// (column index in [`columns::CallsSchema::columns`], value), in column order; at most
    /// one per column.
    pub cells: Vec<(u16, Cell<'a>)>,
    /// (BLAKE3 digest, bytes) of each data buffer, with [`DataMode::Full`] only (empty
    /// otherwise); [`crate::pass::export_trace`] writes each distinct one to `data`.
    pub data: Vec<([u8; 32], Cow<'a, [u8]>)>,
}

impl<'a> Row<'a> {
    /// The cell of column `col` (an index of [`columns::c`] or an argument column); `None`
    /// when the column is null in this row.
    pub fn get(&self, col: u16) -> Option<&Cell<'a>> {
        self.cells.iter().find(|(i, _)| *i == col).map(|(_, v)| v)
    }
    /// Column `col`'s value when it is an integer; `None` when null or of another type.
    pub fn int(&self, col: u16) -> Option<i64> {
        match self.get(col) {
            Some(Cell::Int(i)) => Some(*i),
            _ => None,
        }
    }
    /// Column `col`'s bytes when it is a text cell (not yet escaped); `None` when null or of
    /// another type.
    pub fn text(&self, col: u16) -> Option<&'a [u8]> {
        match self.get(col) {
            Some(Cell::Text(t)) => Some(t),
            Some(Cell::Static(t)) => Some(t.as_bytes()),
            _ => None,
        }
    }
}

/// The call's class: for now the registry's [`ra_syscalls::Class`] (file-system operations are
/// `file`). One function, so that a finer classification replaces it in one place.
/// A delivered signal (`signal_deliver`) is no call: its class is `signal`.
pub fn class(ev: &Event) -> &'static str {
    use ra_syscalls::Class;
    if ev.def.is_some_and(|d| d.is_signal()) {
        return "signal";
    }
    match ev.def.map(|d| d.class) {
        None => "file",
        Some(Class::File) => "file",
        Some(Class::Descriptor) => "descriptor",
        Some(Class::Memory) => "memory",
        Some(Class::Process) => "process",
        Some(Class::Socket) => "socket",
        Some(Class::Other) => "other",
    }
}

/// The call's I/O class (`ra_syscalls::io_class`: read, write, meta, sync, open/close, dir,
/// async, other).
pub fn io_class(ev: &Event) -> &'static str {
    ev.io_class().name()
}

/// Follows the trace for what a row needs beyond its event: descriptor paths
/// ([`ra_trace::fileio`]) and process names.
pub struct Context {
    files: FileIoTracker,
    ops: Vec<ra_trace::fileio::FileOp>,
    /// Process names: set by a successful exec (the file's base name, as the kernel's comm,
    /// 15 bytes), inherited by children, or read from file-system operations.
    comm: HashMap<i32, Arc<[u8]>>,
    initial_comm: Option<Arc<[u8]>>,
}

impl Context {
    /// `cwd` and `command`: the trace's facts of those names.
    pub fn new(cwd: Option<&[u8]>, command: Option<&[u8]>) -> Context {
        let initial_comm = command
            .and_then(|c| c.split(|b| b.is_ascii_whitespace()).find(|w| !w.is_empty()))
            .map(|w| Arc::from(comm_of(w)));
        Context {
            files: FileIoTracker::new(cwd),
            ops: Vec::new(),
            comm: HashMap::new(),
            initial_comm,
        }
    }

    /// The process name of `pid` as far as the trace shows.
    pub fn comm(&self, pid: i32) -> Option<&Arc<[u8]>> {
        self.comm.get(&pid).or(self.initial_comm.as_ref())
    }

    /// The path of the descriptor the call works on (its first descriptor argument, or the new
    /// descriptor it returned), before (`after == false`) or after the tracker saw the call.
    fn fd_path(&self, ev: &Event, after: bool) -> Option<Arc<[u8]>> {
        // A path request as its call (OPENAT's descriptor is its result).
        let ev = &*ra_trace::uring::effective(ev);
        let def = ev.def?;
        let pid = ev.pid.unwrap_or(0);
        if after {
            if def.ret == ra_syscalls::Ret::Fd && !ev.failed() {
                return self.files.fd_target(pid, ev.ret?).path().cloned();
            }
            return None;
        }
        if ev.uring_fixed_file() {
            // A registered file: the one its slot was registered from.
            return self.files.uring_fixed_target(ev)?.1.path().cloned();
        }
        let (i, _) = def.args.iter().enumerate().find(|(_, a)| a.kind == ArgKind::Fd)?;
        let fd = ev.args.get(i)?.as_int()?;
        self.files.fd_target(pid, fd).path().cloned()
    }

    /// Step the model over one event; returns its descriptor's path.
    fn step(&mut self, ev: &Event) -> Option<Arc<[u8]>> {
        let before = self.fd_path(ev, false);
        self.ops.clear();
        self.files.apply(ev, &mut |_, _| true, &mut self.ops);
        let after = self.fd_path(ev, true);
        if let (Some(def), Some(pid)) = (ev.def, ev.pid) {
            match def.replay.handler() {
                Some(ra_syscalls::Handler::Exec) if !ev.failed() => {
                    let f = ev.args.first().and_then(ArgValue::as_data);
                    if let Some(f) = f {
                        let f = f.strip_suffix(&[0]).unwrap_or(f);
                        let base = f.rsplit(|&b| b == b'/').next().unwrap_or(f);
                        self.comm.insert(pid, Arc::from(comm_of(base)));
                    }
                }
                Some(ra_syscalls::Handler::Clone) if !ev.failed() => {
                    if let Some(child) = ev.ret.filter(|&r| r > 0) {
                        if let Some(n) = self.comm(pid).cloned() {
                            self.comm.entry(child as i32).or_insert(n);
                        }
                    }
                }
                _ => {}
            }
        }
        after.or(before)
    }
}

/// A command's name as the kernel keeps it (`TASK_COMM_LEN` - 1 bytes).
fn comm_of(name: &[u8]) -> &[u8] {
    &name[..name.len().min(15)]
}

/// Builds rows.
pub struct Builder {
    /// Which data buffers rows carry: `NAME_digest` cells unless [`DataMode::None`], the
    /// bytes in [`Row::data`] with [`DataMode::Full`].
    pub data: DataMode,
    schema: &'static columns::CallsSchema,
}

/// What a row borrows that the event does not hold: computed per event by [`Builder::prepare`].
pub struct Derived {
    /// The `fd_path` column: what the call's descriptor names ([`Context`]'s tracker; for
    /// fs operations on an open handle, their `pathname`); `None` when unknown.
    pub fd_path: Option<Arc<[u8]>>,
    /// The `comm` column: the process's name as [`Context`] followed it (fs operations:
    /// their `executing_comm`).
    pub comm: Option<Arc<[u8]>>,
    /// The system calls a file-system operation maps to.
    pub mapped: Vec<Event>,
}

impl Builder {
    /// A builder for the `calls` schema ([`columns::calls`]) keeping data as `data` says.
    pub fn new(data: DataMode) -> Builder {
        Builder { data, schema: columns::calls() }
    }

    /// Step the context over the event and compute what its row needs.
    pub fn prepare(&self, ctx: &mut Context, ev: &Event) -> Derived {
        if ev.def.is_none() && ra_trace::fsop::is_fs_event(ev) {
            let comm: Option<Arc<[u8]>> = ev.extra_bytes("executing_comm").map(Arc::from);
            if let (Some(pid), Some(n)) = (ev.pid, &comm) {
                ctx.comm.insert(pid, n.clone());
            }
            let fd_path = ev.extra_int("fh").and(ev.extra_bytes("pathname")).map(Arc::from);
            return Derived { fd_path, comm, mapped: ra_trace::fsop::to_syscalls(ev) };
        }
        let fd_path = ctx.step(ev);
        let comm = ev.pid.and_then(|p| ctx.comm(p).cloned());
        Derived { fd_path, comm, mapped: Vec::new() }
    }

    /// The row of `ev` (with `d` from [`Builder::prepare`]).
    pub fn row<'a>(&self, ev: &'a Event, d: &'a Derived) -> Row<'a> {
        let mut cells: Vec<(u16, Cell<'a>)> = Vec::with_capacity(24);
        let mut data = Vec::new();
        let int = |v: Option<i64>| v.map(Cell::Int);
        let put = |cells: &mut Vec<(u16, Cell<'a>)>, col: u16, v: Option<Cell<'a>>| {
            if let Some(v) = v {
                cells.push((col, v));
            }
        };
        put(&mut cells, c::UNIQUE_ID, Some(Cell::Int(ev.unique_id as i64)));
        let call = match ev.def {
            Some(def) if def.name == ev.name => Cell::Static(def.name),
            _ => Cell::Text(ev.name.as_bytes()),
        };
        put(&mut cells, c::CALL, Some(call));
        let syscall = ev.def.or_else(|| d.mapped.first().and_then(|m| m.def)).map(|d| d.name);
        put(&mut cells, c::SYSCALL, syscall.map(Cell::Static));
        put(&mut cells, c::CLASS, Some(Cell::Static(class(ev))));
        put(&mut cells, c::IO_CLASS, Some(Cell::Static(io_class(ev))));
        put(&mut cells, c::TIME_CALLED, int(ev.time_called));
        put(&mut cells, c::TIME_RETURNED, int(ev.time_returned));
        put(&mut cells, c::DURATION_NS, int(ev.duration_ns()));
        put(&mut cells, c::TIME_RECORDED, int(ev.time_recorded));
        let i32c = |v: Option<i32>| v.map(|x| Cell::Int(x.into()));
        put(&mut cells, c::PID, i32c(ev.pid));
        put(&mut cells, c::TID, i32c(ev.tid));
        put(&mut cells, c::PPID, i32c(ev.ppid));
        put(&mut cells, c::UID, i32c(ev.uid));
        put(&mut cells, c::GID, i32c(ev.gid));
        put(&mut cells, c::SID, i32c(ev.sid));
        put(&mut cells, c::PGID, i32c(ev.pgid));
        put(&mut cells, c::RETURN_VALUE, int(ev.ret));
        put(&mut cells, c::ERRNO, i32c(ev.errno));
        let en = ev.errno.filter(|&e| e != 0).and_then(ra_trace::format::errno_name);
        put(&mut cells, c::ERRNO_NAME, en.map(|n| Cell::Text(n.as_bytes())));
        put(&mut cells, c::BUFFER_NOT_CAPTURED, Some(Cell::Bool(ev.buffer_not_captured)));
        put(&mut cells, c::FD_PATH, d.fd_path.as_deref().map(Cell::Text));
        put(&mut cells, c::COMM, d.comm.as_deref().map(Cell::Text));
        let mut path = None;
        if ev.def.is_some() {
            self.args(ev, &mut cells, &mut data, &mut path);
        } else {
            for (k, col) in [
                ("fuse_unique", c::FUSE_UNIQUE),
                ("nodeid", c::NODEID),
                ("inode", c::INODE),
                ("result_inode", c::RESULT_INODE),
                ("result_size", c::RESULT_SIZE),
            ] {
                put(&mut cells, col, ev.extra_int(k).map(Cell::Int));
            }
            path = ev.extra_bytes("pathname");
            for m in &d.mapped {
                self.args(m, &mut cells, &mut data, &mut None);
            }
            // Data a file-system trace kept as its digest only (`fs mount --data hash|none`).
            if let Some(len) = ev.extra_int("data_length") {
                if let Some(m) = d.mapped.iter().find_map(|m| data_arg(m)) {
                    let cols = self.schema.arg_cols(m.0);
                    let ac = cols[m.1];
                    if !cells.iter().any(|(i, _)| Some(*i) == ac.length) {
                        put(&mut cells, ac.length.unwrap_or(0), Some(Cell::Int(len)));
                        if self.data != DataMode::None {
                            if let Some(Ok(dg)) =
                                ev.extra_bytes("data_blake3").map(<[u8; 32]>::try_from)
                            {
                                put(&mut cells, ac.digest.unwrap_or(0), Some(Cell::Digest(dg)));
                            }
                        }
                    }
                }
            }
        }
        put(&mut cells, c::PATH, path.map(Cell::Text));
        cells.sort_by_key(|(i, _)| *i);
        cells.dedup_by_key(|(i, _)| *i);
        Row { ev, cells, data }
    }

    /// The argument cells of a registry call; `path` gets its first path argument.
    fn args<'a>(
        &self,
        ev: &'a Event,
        cells: &mut Vec<(u16, Cell<'a>)>,
        data: &mut Vec<([u8; 32], Cow<'a, [u8]>)>,
        path: &mut Option<&'a [u8]>,
    ) {
        let Some(def) = ev.def else { return };
        let cols = self.schema.arg_cols(def);
        for ((a, v), ac) in def.args.iter().zip(&ev.args).zip(cols) {
            let strip = |b: &'a [u8]| b.strip_suffix(&[0]).unwrap_or(b);
            if a.kind == ArgKind::Path && path.is_none() {
                *path = v.as_data().map(strip);
            }
            let Some(vc) = ac.value.or(ac.length) else { continue };
            match (ac.how, v) {
                (ArgHow::Int, ArgValue::Int(i)) => cells.push((vc, Cell::Int(*i))),
                (ArgHow::Text, ArgValue::Data(b)) => cells.push((vc, Cell::Text(strip(b)))),
                (ArgHow::Loff, ArgValue::Data(b)) => {
                    if let Some(x) = b.get(..8).and_then(|x| <[u8; 8]>::try_from(x).ok()) {
                        cells.push((vc, Cell::Int(i64::from_le_bytes(x))));
                    }
                }
                (ArgHow::Raw, ArgValue::Data(b)) => cells.push((vc, Cell::Bytes(b))),
                (ArgHow::List, ArgValue::Strings(s)) => cells.push((vc, Cell::List(s))),
                (ArgHow::Data, v) => {
                    let dc = ac.digest.expect("a data argument's digest column");
                    let (len, digest, bytes): DataParts<'a> = match v {
                        ArgValue::Data(b) => (b.len() as u64, None, Some(Cow::Borrowed(&b[..]))),
                        ArgValue::Iov(vs) => {
                            let parts: Vec<&[u8]> =
                                vs.iter().filter_map(|i| i.data.as_deref()).collect();
                            let len = parts.iter().map(|p| p.len() as u64).sum();
                            let bytes = match parts.as_slice() {
                                [] => Cow::Borrowed(&[][..]),
                                [one] => Cow::Borrowed(*one),
                                _ => Cow::Owned(parts.concat()),
                            };
                            (len, None, Some(bytes))
                        }
                        ArgValue::Hashed { len, blake3 } => (*len, Some(*blake3), None),
                        _ => continue,
                    };
                    cells.push((vc, Cell::Int(len as i64)));
                    if self.data == DataMode::None {
                        continue;
                    }
                    let dg = match (digest, &bytes) {
                        (Some(d), _) => d,
                        (None, Some(b)) => *blake3::hash(b).as_bytes(),
                        (None, None) => continue,
                    };
                    cells.push((dc, Cell::Digest(dg)));
                    if let (DataMode::Full, Some(b)) = (self.data, bytes) {
                        data.push((dg, b));
                    }
                }
                _ => {}
            }
        }
    }
}

/// A data argument's length, the digest the trace kept (digest-only traces) and its bytes.
type DataParts<'a> = (u64, Option<[u8; 32]>, Option<Cow<'a, [u8]>>);

/// The data argument of a mapped call: (its definition, the argument's index).
fn data_arg(m: &Event) -> Option<(&'static ra_syscalls::SyscallDef, usize)> {
    let def = m.def?;
    let i = def.args.iter().position(|a| ArgHow::of(a) == ArgHow::Data)?;
    Some((def, i))
}

/// An [`ExtraValue`] as a cell (for tests and printers).
pub fn extra_cell(v: &ExtraValue) -> Option<Cell<'_>> {
    match v {
        ExtraValue::Null => None,
        ExtraValue::Bool(b) => Some(Cell::Bool(*b)),
        ExtraValue::Int(i) => Some(Cell::Int(*i)),
        ExtraValue::DoubleBits(_) => None,
        ExtraValue::Bytes(b) => Some(Cell::Bytes(b)),
    }
}
