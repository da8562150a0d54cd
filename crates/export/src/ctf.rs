//! The CTF sink (`export --format ctf`): Common Trace Format 1.8 as LTTng's kernel tracer
//! writes system calls, which babeltrace2 and Trace Compass read: a directory with a TSDL
//! `metadata` file and one stream file per thread (`stream-TID`, one packet each, so that
//! every stream's events are in time order whatever order the trace interleaves threads in),
//! each call a `syscall_entry_NAME` event at `time_called` (its integer arguments as int64
//! fields, its C strings as strings, its data buffers as `NAME_length`) and a
//! `syscall_exit_NAME` event at `time_returned` (`ret`), with `pid` and `tid` in every event's
//! context. Field names are the `calls` table's (docs/TRACE_FORMAT.md 12.2).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::columns::{self, ArgHow, Table};
use crate::pass::{Sink, TraceMeta};
use crate::row::{Cell, Row};
use crate::{Error, Result};

const MAGIC: u32 = 0xC1FC_1FC1;
/// Bytes of the packet header and context: magic, stream id, content size, packet size.
const HEAD: u64 = 4 + 4 + 8 + 8;

/// One field of an event: its name and whether it is a string.
type Fields = Vec<(String, bool)>;

struct Stream {
    path: PathBuf,
    out: BufWriter<File>,
    bytes: u64,
    last_ns: u64,
}

/// The CTF sink of one trace: one stream file per thread, events appended as calls come, the
/// TSDL `metadata` written and the directory put in place by `finish`.
pub struct CtfSink {
    dir: PathBuf,
    tmp: PathBuf,
    meta: TraceMeta,
    streams: HashMap<i32, Stream>,
    /// Event classes by name: (id, fields).
    classes: HashMap<String, (u32, Fields)>,
    order: Vec<String>,
    /// Events written: an entry per call of a registry entry with a `time_called`, and an
    /// exit when it has a `time_returned` too (other calls are left out).
    pub events: u64,
    /// Exits whose time would go back on their thread's stream, written at the last time.
    pub clamped: u64,
    /// Calls left out: without a `time_called`, or of a call type the registry does not know.
    pub left_out: u64,
}

impl CtfSink {
    /// A sink writing the CTF trace directory `dir` (created; replaced when complete).
    pub fn new(dir: &Path, meta: &TraceMeta) -> Result<CtfSink> {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dir.with_file_name(format!(".{name}.partial"));
        let _ = std::fs::remove_dir_all(&tmp);
        ra_fsstate::private::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
        Ok(CtfSink {
            dir: dir.to_path_buf(),
            tmp,
            meta: meta.clone(),
            streams: HashMap::new(),
            classes: HashMap::new(),
            order: Vec::new(),
            events: 0,
            clamped: 0,
            left_out: 0,
        })
    }

    fn class(&mut self, name: String, fields: Fields) -> u32 {
        if let Some((id, _)) = self.classes.get(&name) {
            return *id;
        }
        let id = self.order.len() as u32;
        self.order.push(name.clone());
        self.classes.insert(name, (id, fields));
        id
    }

    fn write(&mut self, tid: i32, pid: i32, id: u32, ns: u64, body: &[u8]) -> Result<()> {
        if !self.streams.contains_key(&tid) {
            let path = self.tmp.join(format!("stream-{tid}"));
            let f = ra_fsstate::private::create(&path).map_err(|e| Error::io(&path, e))?;
            let mut out = BufWriter::with_capacity(1 << 16, f);
            let mut h = Vec::with_capacity(HEAD as usize);
            h.extend_from_slice(&MAGIC.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            h.extend_from_slice(&[0; 16]);
            out.write_all(&h).map_err(|e| Error::io(&path, e))?;
            self.streams.insert(tid, Stream { path, out, bytes: HEAD, last_ns: 0 });
        }
        let s = self.streams.get_mut(&tid).expect("the stream");
        let ns = if ns < s.last_ns {
            self.clamped += 1;
            s.last_ns
        } else {
            ns
        };
        s.last_ns = ns;
        let mut e = Vec::with_capacity(28 + body.len());
        e.extend_from_slice(&id.to_le_bytes());
        e.extend_from_slice(&ns.to_le_bytes());
        e.extend_from_slice(&i64::from(pid).to_le_bytes());
        e.extend_from_slice(&i64::from(tid).to_le_bytes());
        e.extend_from_slice(body);
        s.out.write_all(&e).map_err(|er| Error::io(&s.path, er))?;
        s.bytes += e.len() as u64;
        self.events += 1;
        Ok(())
    }

    fn metadata(&self) -> String {
        let esc = |s: &str| s.replace(['"', '\\'], "_");
        let mut m = String::from(
            "/* CTF 1.8 */\n\
             typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n\
             typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\
             typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n\
             trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = le;\n\
             \tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint32_t stream_id;\n\t};\n};\n",
        );
        m.push_str(&format!(
            "env {{\n\thostname = \"{}\";\n\tdomain = \"kernel\";\n\ttracer_name = \"reanimator\";\n\
             \ttrace_name = \"{}\";\n\treanimator_backend = \"{}\";\n}};\n",
            esc(&self.meta.host),
            esc(&self.meta.trace_id),
            esc(&self.meta.backend)
        ));
        m.push_str(
            "clock {\n\tname = \"realtime\";\n\tdescription = \"ns since the Unix epoch\";\n\
             \tfreq = 1000000000;\n\toffset_s = 0;\n\toffset = 0;\n\tabsolute = true;\n};\n\
             typealias integer { size = 64; align = 8; signed = false; map = clock.realtime.value; } := uint64_clock_t;\n\
             stream {\n\tid = 0;\n\
             \tevent.header := struct {\n\t\tuint32_t id;\n\t\tuint64_clock_t timestamp;\n\t};\n\
             \tpacket.context := struct {\n\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n\t};\n\
             \tevent.context := struct {\n\t\tint64_t _pid;\n\t\tint64_t _tid;\n\t};\n};\n",
        );
        for name in &self.order {
            let (id, fields) = &self.classes[name];
            m.push_str(&format!(
                "event {{\n\tname = \"{name}\";\n\tid = {id};\n\tstream_id = 0;\n\tfields := struct {{\n"
            ));
            for (f, string) in fields {
                let ty = if *string { "string" } else { "int64_t" };
                m.push_str(&format!("\t\t{ty} _{f};\n"));
            }
            m.push_str("\t};\n};\n");
        }
        m
    }
}

impl Sink for CtfSink {
    fn call(&mut self, row: &Row<'_>) -> Result<()> {
        let ev = row.ev;
        let (Some(def), Some(t0)) = (ev.def, ev.time_called) else {
            self.left_out += 1;
            return Ok(());
        };
        let pid = ev.pid.unwrap_or(0);
        let tid = ev.tid.unwrap_or(pid);
        let all = &columns::calls().columns;
        let cols = columns::calls().arg_cols(def);
        let mut fields: Fields = Vec::new();
        let mut body = Vec::new();
        for ac in cols {
            let (col, string) = match ac.how {
                ArgHow::Int | ArgHow::Loff => (ac.value, false),
                ArgHow::Text => (ac.value, true),
                ArgHow::Data => (ac.length, false),
                ArgHow::Raw | ArgHow::List => continue,
            };
            let Some(col) = col else { continue };
            fields.push((all[col as usize].name.clone(), string));
            match row.get(col) {
                Some(Cell::Int(i)) if !string => body.extend_from_slice(&i.to_le_bytes()),
                Some(Cell::Text(t)) if string => {
                    body.extend(t.iter().copied().filter(|&b| b != 0));
                    body.push(0);
                }
                _ if string => body.push(0),
                _ => body.extend_from_slice(&0i64.to_le_bytes()),
            }
        }
        let id = self.class(format!("syscall_entry_{}", def.name), fields);
        self.write(tid, pid, id, t0.max(0) as u64, &body)?;
        if let Some(t1) = ev.time_returned {
            let id = self.class(format!("syscall_exit_{}", def.name), vec![("ret".into(), false)]);
            let ret = ev.ret.unwrap_or(0);
            self.write(tid, pid, id, t1.max(0) as u64, &ret.to_le_bytes())?;
        }
        Ok(())
    }

    fn row(&mut self, _table: Table, _cells: &[(u16, Cell<'_>)]) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        for (_, s) in self.streams.drain() {
            let bits = s.bytes * 8;
            let mut f = s.out.into_inner().map_err(|e| Error::io(&s.path, e.into_error()))?;
            f.seek(SeekFrom::Start(8)).map_err(|e| Error::io(&s.path, e))?;
            let mut sizes = bits.to_le_bytes().to_vec();
            sizes.extend_from_slice(&bits.to_le_bytes());
            f.write_all(&sizes).map_err(|e| Error::io(&s.path, e))?;
        }
        let mp = self.tmp.join("metadata");
        let mut f = ra_fsstate::private::create(&mp).map_err(|e| Error::io(&mp, e))?;
        f.write_all(self.metadata().as_bytes()).map_err(|e| Error::io(&mp, e))?;
        // Only an earlier CTF export is replaced: anything else at -o is left alone.
        if self.dir.exists() {
            if !self.dir.join("metadata").is_file() {
                let e = std::io::Error::other("exists and is not a CTF trace: not replaced");
                return Err(Error::io(&self.dir, e));
            }
            std::fs::remove_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        }
        std::fs::rename(&self.tmp, &self.dir).map_err(|e| Error::io(&self.dir, e))
    }
}

impl Drop for CtfSink {
    fn drop(&mut self) {
        if self.tmp.exists() {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}
