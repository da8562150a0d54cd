//! Adapters that expose trace events and plain DataSeries records to filters and printers.

use std::borrow::Cow;

use dataseries::{Extent, Value};
use ra_filter::{FieldValue, Record};
use ra_trace::{ArgValue, Event};

/// A trace event as a filter record. Fields: `unique_id`, `time_called`, `time_returned`,
/// `duration`, `pid`, `tid`, `ppid`, `uid`, `gid`, `ret` (alias `return_value`), `errno`
/// (number; `errno_name` gives `ENOENT`), `call` (aliases `op`, `type`, `name`), `signal` (a
/// delivered signal's name, `SIGCHLD`; null on calls), every
/// argument by its man-page name (`fd`, `count`, `pathname`) and by its trace field name
/// (`descriptor`, `bytes_requested`, `given_pathname`), `path` (the first path argument,
/// without its NUL), `size` (bytes of the first data buffer), and extra fields by name. On
/// file-system operations (no registry entry) `path` is `pathname`, `size` is `data_length`,
/// and `comm` is `executing_comm`.
pub struct EventRecord<'a>(pub &'a Event);

fn arg_value(v: &ArgValue) -> FieldValue<'_> {
    match v {
        ArgValue::Absent | ArgValue::NotCaptured | ArgValue::Hashed { .. } => FieldValue::Null,
        ArgValue::Int(i) => FieldValue::Int(*i),
        ArgValue::Data(d) => FieldValue::Bytes(Cow::Borrowed(d.strip_suffix(&[0]).unwrap_or(d))),
        ArgValue::Iov(v) => FieldValue::Int(v.iter().map(|i| i.requested as i64).sum()),
        ArgValue::Strings(s) => FieldValue::Bytes(Cow::Owned(s.join(&b' '))),
    }
}

impl Record for EventRecord<'_> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        let e = self.0;
        let int = |v: Option<i64>| Some(v.map_or(FieldValue::Null, FieldValue::Int));
        match field {
            "unique_id" | "id" => return Some(FieldValue::UInt(e.unique_id)),
            "time_called" | "time" => return int(e.time_called),
            "time_returned" => return int(e.time_returned),
            "duration" => return int(e.duration_ns()),
            "pid" | "executing_pid" => return int(e.pid.map(i64::from)),
            "tid" | "executing_tid" => return int(e.tid.map(i64::from)),
            "ppid" => return int(e.ppid.map(i64::from)),
            "uid" => return int(e.uid.map(i64::from)),
            "gid" => return int(e.gid.map(i64::from)),
            "ret" | "return_value" => return int(e.ret),
            "errno" | "errno_number" => return int(e.errno.map(i64::from)),
            "errno_name" => {
                return Some(
                    e.errno.and_then(ra_trace::format::errno_name).map_or(FieldValue::Null, |n| {
                        FieldValue::Bytes(Cow::Borrowed(n.as_bytes()))
                    }),
                )
            }
            "call" | "op" | "type" | "name" | "syscall" => {
                return Some(FieldValue::Bytes(Cow::Borrowed(e.name.as_bytes())))
            }
            // A delivered signal's name (`signal == SIGCHLD`); null on calls.
            "signal" => {
                let sig = e.def.filter(|d| d.is_signal()).and_then(|_| e.arg("signo")?.as_int());
                return Some(sig.map_or(FieldValue::Null, |s| {
                    FieldValue::Bytes(Cow::Owned(
                        ra_trace::format::signal_name(s as i32).into_bytes(),
                    ))
                }));
            }
            _ => {}
        }
        if let Some(def) = e.def {
            for (a, v) in def.args.iter().zip(&e.args) {
                if a.name == field || a.field == field {
                    return Some(arg_value(v));
                }
            }
            if field == "path" {
                return def
                    .args
                    .iter()
                    .zip(&e.args)
                    .find(|(a, _)| a.kind == ra_syscalls::ArgKind::Path)
                    .map(|(_, v)| arg_value(v));
            }
            if field == "size" {
                return e
                    .args
                    .iter()
                    .find_map(|v| v.as_data().map(|d| FieldValue::Int(d.len() as i64)));
            }
            if field == "fd" {
                return def
                    .args
                    .iter()
                    .zip(&e.args)
                    .find(|(a, _)| matches!(a.kind, ra_syscalls::ArgKind::Fd))
                    .map(|(_, v)| arg_value(v));
            }
        }
        // File-system operations (`reanimator fs`): the same names as the syscall records'.
        let field = match field {
            "path" if e.def.is_none() => "pathname",
            "comm" => "executing_comm",
            "size" if e.def.is_none() => "data_length",
            f => f,
        };
        e.extra.iter().find(|(k, _)| k == field).map(|(_, v)| match v {
            ra_trace::ExtraValue::Null => FieldValue::Null,
            ra_trace::ExtraValue::Bool(b) => FieldValue::Bool(*b),
            ra_trace::ExtraValue::Int(i) => FieldValue::Int(*i),
            ra_trace::ExtraValue::DoubleBits(b) => FieldValue::Float(f64::from_bits(*b)),
            ra_trace::ExtraValue::Bytes(b) => FieldValue::Bytes(Cow::Borrowed(b)),
        })
    }
}

/// A trace event with what its descriptors refer to ([`ra_trace::fileio`]): `fd_path` and
/// `fd_path2` are the first and second descriptor arguments' paths (or `pipe`, `socket`,
/// ...), and `path` is the file the call acts on — the one a descriptor it returned was
/// opened on, else its path argument, else its first descriptor's — so that `path ~ "..."`
/// matches the reads, writes, closes and maps of a file, not only its open. Without
/// descriptors (`fds` None) it is [`EventRecord`].
pub struct FdEventRecord<'a> {
    pub ev: EventRecord<'a>,
    pub fds: Option<&'a ra_trace::fileio::EventFds>,
}

impl Record for FdEventRecord<'_> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        let Some(fds) = self.fds else { return self.ev.get(field) };
        fn bytes<'b>(p: Option<&'b std::sync::Arc<[u8]>>) -> Option<FieldValue<'b>> {
            p.map(|p| FieldValue::Bytes(Cow::Borrowed(&p[..])))
        }
        match field {
            "fd_path" => Some(bytes(fds.first_two()[0]).unwrap_or(FieldValue::Null)),
            "fd_path2" => Some(bytes(fds.first_two()[1]).unwrap_or(FieldValue::Null)),
            "path" => bytes(fds.ret.as_ref())
                .or_else(|| self.ev.get("path").filter(|v| !matches!(v, FieldValue::Null)))
                .or_else(|| bytes(fds.first_two()[0])),
            f => self.ev.get(f),
        }
    }
}

/// One record of a plain DataSeries extent as a filter record (fields by name).
pub struct DsRecord<'a> {
    pub extent: &'a Extent,
    pub row: usize,
}

pub fn ds_value(v: Value<'_>) -> FieldValue<'_> {
    match v {
        Value::Null => FieldValue::Null,
        Value::Bool(b) => FieldValue::Bool(b),
        Value::Byte(b) => FieldValue::Int(b.into()),
        Value::Int32(i) => FieldValue::Int(i.into()),
        Value::Int64(i) => FieldValue::Int(i),
        Value::Double(d) => FieldValue::Float(d),
        Value::Bytes(b) => FieldValue::Bytes(Cow::Borrowed(b)),
    }
}

impl Record for DsRecord<'_> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        let f = self.extent.extent_type().field_index(field)?;
        Some(ds_value(self.extent.value(self.row, f)))
    }
}
