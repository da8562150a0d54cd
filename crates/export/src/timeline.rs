//! The Chrome trace-event sink (`export --format chrome-trace`): the JSON that ui.perfetto.dev
//! and chrome://tracing open. One track per thread (named by its process's name and tid),
//! processes named, each call a complete (`X`) slice with its row's cells as arguments (the
//! column names of docs/TRACE_FORMAT.md 12.2), and per process two counters (`C`): the bytes
//! its reads and its writes have moved so far. Times are microseconds since the trace's first
//! call (fractions keep the nanoseconds). Written as it goes: memory is the set of threads
//! and processes seen.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::columns::{self, c, text_into, Table};
use crate::pass::{Sink, TraceMeta};
use crate::row::{Cell, Row};
use crate::{Error, Result};

/// The Chrome trace-event sink of one trace, writing one JSON file (`.NAME.partial` until
/// `finish` renames it). Calls without a `time_called` are left out.
pub struct ChromeSink {
    tmp: PathBuf,
    dest: PathBuf,
    out: Option<BufWriter<File>>,
    origin: Option<i64>,
    threads: HashSet<(i32, i32)>,
    named: HashMap<i32, Vec<u8>>,
    /// Per process: bytes read, bytes written.
    bytes: HashMap<i32, (i64, i64)>,
    first: bool,
    meta: TraceMeta,
    /// Events written.
    pub events: u64,
    /// Complete (`X`) slices written: one per call with a `time_called`.
    pub slices: u64,
    /// Calls left out: without a `time_called`.
    pub untimed: u64,
}

fn cell_json(v: &Cell<'_>) -> Value {
    let text = |b: &[u8]| {
        let mut t = Vec::new();
        text_into(b, &mut t);
        Value::String(String::from_utf8(t).unwrap_or_default())
    };
    let hex = |b: &[u8]| Value::String(ra_hex::encode(b));
    match v {
        Cell::Int(i) => json!(i),
        Cell::Bool(b) => json!(b),
        Cell::Text(b) => text(b),
        Cell::Static(s) => Value::String((*s).to_string()),
        Cell::Bytes(b) => hex(b),
        Cell::Digest(d) => hex(d),
        Cell::List(items) => Value::Array(items.iter().map(|i| text(i)).collect()),
    }
}

impl ChromeSink {
    /// A sink writing `dest` (through `.NAME.partial` beside it, created 0600 now;
    /// [`crate::Error::Io`] when it cannot be).
    pub fn new(dest: &Path, meta: &TraceMeta) -> Result<ChromeSink> {
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.partial"));
        let f = ra_fsstate::private::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let mut s = ChromeSink {
            tmp,
            dest: dest.to_path_buf(),
            out: Some(BufWriter::with_capacity(1 << 20, f)),
            origin: None,
            threads: HashSet::new(),
            named: HashMap::new(),
            bytes: HashMap::new(),
            first: true,
            meta: meta.clone(),
            events: 0,
            slices: 0,
            untimed: 0,
        };
        s.raw(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        Ok(s)
    }

    fn raw(&mut self, b: &[u8]) -> Result<()> {
        let out = self.out.as_mut().expect("an open file");
        out.write_all(b).map_err(|e| Error::io(&self.tmp, e))
    }

    fn event(&mut self, v: &Value) -> Result<()> {
        let mut line = if self.first { Vec::new() } else { b",\n".to_vec() };
        self.first = false;
        serde_json::to_writer(&mut line, v).expect("JSON to memory");
        self.events += 1;
        self.raw(&line)
    }

    fn us(&mut self, ns: i64) -> f64 {
        let o = *self.origin.get_or_insert(ns);
        (ns - o) as f64 / 1000.0
    }
}

impl Sink for ChromeSink {
    fn call(&mut self, row: &Row<'_>) -> Result<()> {
        let ev = row.ev;
        let (Some(t0), pid) = (ev.time_called, ev.pid.unwrap_or(0)) else {
            self.untimed += 1;
            return Ok(());
        };
        let tid = ev.tid.unwrap_or(pid);
        let comm = row.text(c::COMM).unwrap_or(b"?");
        if self.named.get(&pid).map(Vec::as_slice) != Some(comm) {
            self.named.insert(pid, comm.to_vec());
            let name = String::from_utf8_lossy(comm).into_owned();
            self.event(&json!({"ph": "M", "name": "process_name", "pid": pid, "tid": pid,
                "args": {"name": format!("{name} ({pid})")}}))?;
        }
        if self.threads.insert((pid, tid)) {
            let name = String::from_utf8_lossy(comm).into_owned();
            self.event(&json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                "args": {"name": format!("{name} {tid}")}}))?;
        }
        let ts = self.us(t0);
        let dur = ev.duration_ns().unwrap_or(0).max(0) as f64 / 1000.0;
        let all = &columns::calls().columns;
        let mut args = Map::new();
        for (col, v) in &row.cells {
            if matches!(*col, c::PID | c::TID | c::CALL | c::TIME_CALLED | c::TIME_RETURNED) {
                continue;
            }
            args.insert(all[*col as usize].name.clone(), cell_json(v));
        }
        let name = ev.name.clone();
        let class = ev.io_class();
        let cat = class.name();
        self.event(&json!({"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur,
            "pid": pid, "tid": tid, "args": Value::Object(args)}))?;
        self.slices += 1;
        let moved = ev.ret.filter(|&r| r > 0 && !ev.failed());
        if let (Some(n), ra_syscalls::IoClass::Read | ra_syscalls::IoClass::Write) = (moved, class)
        {
            let b = self.bytes.entry(pid).or_default();
            if class == ra_syscalls::IoClass::Read {
                b.0 += n;
            } else {
                b.1 += n;
            }
            let (r, w) = *b;
            let end = ts + dur;
            self.event(&json!({"ph": "C", "name": "bytes", "pid": pid, "ts": end,
                "args": {"read": r, "written": w}}))?;
        }
        Ok(())
    }

    fn row(&mut self, _table: Table, _cells: &[(u16, Cell<'_>)]) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let other = json!({"host": self.meta.host, "trace_id": self.meta.trace_id,
            "backend": self.meta.backend, "time_origin_ns": self.origin});
        let tail = format!("\n],\"otherData\":{other}}}\n");
        self.raw(tail.as_bytes())?;
        let out = self.out.take().expect("an open file");
        let f = out.into_inner().map_err(|e| Error::io(&self.tmp, e.into_error()))?;
        f.sync_all().map_err(|e| Error::io(&self.tmp, e))?;
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| Error::io(&self.dest, e))
    }
}

impl Drop for ChromeSink {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
