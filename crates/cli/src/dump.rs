//! `reanimator dump`: print records, strace-like, as CSV or as JSON lines.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use dataseries::{DsReader, Extent, Value};
use ra_filter::Filter;
use ra_fsstate::JsonBytes;
use ra_syscalls::ArgKind;
use ra_trace::fileio::{EventFds, FileIoTracker};
use ra_trace::format::{format_event_fds, FlagStyle, FormatOptions, Hex, TimeFormat};
use ra_trace::schema::PREFIX;
use ra_trace::{ArgValue, Event, ExtraValue, TraceReader};
use serde_json::{json, Map, Value as Json};

use crate::records::{DsRecord, EventRecord, FdEventRecord};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One strace-like line per call (traces) or ds2txt-style rows (other DataSeries files).
    Text,
    /// Comma-separated values with a header row of field names: for a trace, the fields
    /// `jsonl` has, `args` and `extra` as its JSON objects (every buffer whole); with one
    /// `--type`, the extent type's own fields.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

/// `-X`: how flags are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Flags {
    Raw,
    Abbrev,
    Verbose,
}

#[derive(Args, Debug)]
pub struct DumpArgs {
    #[command(flatten)]
    pub key: crate::output::ReadKeyArgs,
    /// The trace or DataSeries file; `-` reads a trace from standard input as it arrives
    /// (`reanimator record -o - -- make | reanimator dump -`).
    pub file: PathBuf,
    /// Read a trace while it is being written (by `record` or `fs mount`): print its calls as
    /// they are written, in order, and end when the recording ends (the trace's trailer is
    /// written, or its writer is gone). A trace not there yet is waited for up to 10 s.
    /// Ctrl-C ends it at once.
    #[arg(long, conflicts_with = "raw")]
    pub follow: bool,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Only these calls / extent types (comma-separated or repeated), as strace's `-e trace=`
    /// names them: trace names (`pread`), kernel names and aliases (`pread64`, `_llseek`),
    /// strace's classes (`%file`, `%desc`, `%network`, `%process`, `%memory`, `%signal`,
    /// `%ipc`, `%creds`, `%clock`, `%stat`, `%lstat`, `%fstat`, `%%stat`, `%statfs`,
    /// `%fstatfs`, `%%statfs`), a leading `!` for every call but those; or full extent type
    /// names. A name that is no call is an error.
    #[arg(long = "type", value_delimiter = ',', value_name = "CALLS")]
    pub types: Vec<String>,
    /// strace's spelling of --type: `-e trace=%file,read` (or `-e %file,read`).
    #[arg(short = 'e', value_name = "trace=CALLS", conflicts_with = "types")]
    pub trace_expr: Option<String>,
    /// Only records matching this expression, e.g. `call == openat && errno != 0`,
    /// `path ~ "/etc/**"`, `fd == 3 and ret > 0`, `call in %file`, `call not in %network`
    /// (call names as --type takes them). Fields: unique_id, time_called, time_returned,
    /// duration, pid, tid, uid, gid, call, ret, errno, errno_name, path (the file the call acts
    /// on: what a descriptor it returned or took refers to, or its path argument), fd_path and
    /// fd_path2 (what its descriptor arguments refer to), size, fd, signal (a delivered
    /// signal's name: `signal == SIGCHLD`; `--type signal_deliver` selects them all), every
    /// argument by man-page name and by trace field name.
    #[arg(long = "where", short = 'w', value_name = "EXPR")]
    pub filter: Option<String>,
    /// Show at most this many bytes of each buffer in text output (0 = everything).
    #[arg(long, short = 's', default_value_t = 32)]
    pub strsize: usize,
    /// Stop after this many records.
    #[arg(long, short = 'n')]
    pub limit: Option<u64>,
    /// Times as the wall clock (strace's `-t`: `08:26:40`; `-tt`: with microseconds; `-ttt`:
    /// seconds.microseconds since the epoch). Without it, seconds.nanoseconds since the epoch.
    #[arg(short = 't', action = clap::ArgAction::Count)]
    pub time: u8,
    /// Times as the seconds since the previous record shown (strace's `-r`).
    #[arg(long, short = 'r')]
    pub relative: bool,
    /// Show the time spent in each call, `<0.000012>` (strace's `-T`; on unless
    /// --no-duration).
    #[arg(short = 'T', long = "duration", overrides_with = "no_duration")]
    pub duration: bool,
    /// Leave out the time spent in each call.
    #[arg(long)]
    pub no_duration: bool,
    /// Strings holding a byte that is not printable ASCII in hexadecimal (`-x`, strace's);
    /// every string in hexadecimal (`-xx`).
    #[arg(short = 'x', action = clap::ArgAction::Count)]
    pub hex: u8,
    /// How flags and named constants are shown (strace's `-X`): `abbrev` (names:
    /// `O_RDONLY|O_CLOEXEC`), `raw` (numbers: `0x80000`), `verbose` (both).
    #[arg(short = 'X', value_enum, default_value_t = Flags::Abbrev)]
    pub flags: Flags,
    /// Do not follow descriptors: text shows `read(3, ...)` instead of strace `-y`'s
    /// `read(3</srv/db/shop.db>, ...)`, JSON lines and CSV have no `fd_path`, and `--where
    /// 'path ~ ...'` sees only the calls that name a path.
    #[arg(long)]
    pub no_decode_fds: bool,
    /// Print the DataSeries records extent by extent (file order), even for traces.
    #[arg(long)]
    pub raw: bool,
}

pub fn run(mut a: DumpArgs) -> Result<ExitCode> {
    if let Some(e) = a.trace_expr.take() {
        let list = match e.split_once('=') {
            Some(("trace" | "t", list)) => list,
            Some((q, _)) => bail!("-e {e}: only strace's `trace=` is supported here, not `{q}=`"),
            None => e.as_str(),
        };
        a.types = list.split(',').map(str::to_string).collect();
    }
    let path = &a.file;
    if path.as_os_str() == "-" || a.follow {
        return dump_stream(&a);
    }
    let ds = DsReader::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let is_trace = ds.types().iter().any(|t| t.name().starts_with(PREFIX));
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    if is_trace && !a.raw && !(a.format == Format::Csv && a.types.len() == 1) {
        let tr = TraceReader::from_ds(ds)
            .with_context(|| format!("cannot read trace {}", path.display()))?;
        let filter = a.filter.as_deref().map(|src| event_filter(src, &tr)).transpose()?;
        let calls = resolve_calls(&tr, &a.types)?;
        crate::note_incomplete(path, tr.incomplete(), "the records it holds follow");
        let only: Vec<&str> = calls.iter().map(String::as_str).collect();
        // Following descriptors needs every call (the opens of the files a selected read
        // uses).
        let read_all = !a.no_decode_fds || a.types.is_empty();
        let mut events = tr.events(if read_all { None } else { Some(&only) });
        let source = Source {
            events: &mut events,
            tracker: FileIoTracker::for_trace(&tr),
            aggregate_rows: &|| ra_trace::fsop::aggregate_rows(&tr).count(),
        };
        dump_events(source, &a, &calls, filter.as_ref(), &mut out)
            .with_context(|| format!("reading {}", path.display()))?;
    } else {
        let filter = match &a.filter {
            Some(src) => Some(Filter::parse(src).map_err(|e| anyhow::anyhow!("--where: {e}"))?),
            None => None,
        };
        // (One cut inside an extent ends the raw dump with an error naming that extent.)
        let incomplete = ds.incomplete().filter(|i| i.cut_tail.is_none());
        crate::note_incomplete(path, incomplete, "the records it holds follow");
        dump_records(&ds, &a, filter.as_ref(), &mut out)
            .with_context(|| format!("reading {}", path.display()))?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Standard output for a dump that prints as calls arrive: buffered, and flushed whenever
/// the stream waits for more (a line appears when its call is read, not 64 KiB later).
#[derive(Clone)]
struct SharedOut(std::sync::Arc<std::sync::Mutex<BufWriter<std::io::Stdout>>>);

impl Write for SharedOut {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).flush()
    }
}

/// `dump -` and `dump --follow`: a trace read as it arrives ([`ra_trace::StreamReader`]).
fn dump_stream(a: &DumpArgs) -> Result<ExitCode> {
    let path = &a.file;
    let stdin = path.as_os_str() == "-";
    if a.raw {
        bail!("--raw prints extents in file order from a file: it does not read `-`");
    }
    if stdin && a.follow {
        bail!("--follow reads a file while it is written; `-` reads standard input as it comes");
    }
    let name = if stdin { "standard input".to_string() } else { path.display().to_string() };
    let src: Box<dyn std::io::Read + Send> = if stdin {
        Box::new(std::io::stdin())
    } else {
        Box::new(open_followed(path).with_context(|| format!("cannot read {}", path.display()))?)
    };
    let out = SharedOut(std::sync::Arc::new(std::sync::Mutex::new(BufWriter::with_capacity(
        1 << 16,
        std::io::stdout(),
    ))));
    let mut waiting = out.clone();
    let opts = ra_trace::StreamOptions {
        follow: a.follow,
        on_wait: Some(Box::new(move || {
            let _ = waiting.flush();
        })),
        ..Default::default()
    };
    let mut sr = ra_trace::StreamReader::new(src, &name, opts)
        .with_context(|| format!("cannot read the trace from {name}"))?;
    let present = present_of(sr.layouts().iter());
    let filter = a
        .filter
        .as_deref()
        .map(|src| filter_for(src, &present, known_fields_of(sr.layouts().iter())))
        .transpose()?;
    let calls = resolve_present(&present, &a.types)?;
    let tracker = FileIoTracker::for_stream(&sr);
    let source = Source { events: &mut sr, tracker, aggregate_rows: &|| 0 };
    let mut w = out.clone();
    dump_events(source, a, &calls, filter.as_ref(), &mut w)
        .with_context(|| format!("reading {name}"))?;
    w.flush()?;
    let left_out = |partial: u64| match partial {
        0 => String::new(),
        n => format!(" ({n} bytes of an extent left out)"),
    };
    match sr.end() {
        ra_trace::StreamEnd::Cut { partial } => eprintln!(
            "reanimator: note: {name} ended without its trailer (its writer stopped, or it was \
             cut){}; the calls it held were shown",
            left_out(partial)
        ),
        ra_trace::StreamEnd::WriterGone { pid, partial } => eprintln!(
            "reanimator: note: the writer of {name} (pid {pid}) is gone without finishing \
             it{}; the calls it held were shown",
            left_out(partial)
        ),
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// How long `dump --follow` waits for a trace that is not there yet (a recorder starting).
const FOLLOW_APPEAR: std::time::Duration = std::time::Duration::from_secs(10);

/// Open a trace to follow, waiting up to [`FOLLOW_APPEAR`] for it to be created.
fn open_followed(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let t0 = std::time::Instant::now();
    loop {
        match std::fs::File::open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && t0.elapsed() < FOLLOW_APPEAR => {
                std::thread::sleep(ra_trace::follow::FOLLOW_POLL)
            }
            r => return r,
        }
    }
}

/// The trace names of the calls in this trace.
fn present_calls(tr: &TraceReader) -> Vec<String> {
    present_of(tr.call_types().map(|(l, _)| l))
}

fn present_of<'a>(layouts: impl Iterator<Item = &'a ra_trace::schema::CallLayout>) -> Vec<String> {
    layouts.map(|l| l.ty.name().strip_prefix(PREFIX).unwrap_or_default().to_string()).collect()
}

/// The trace names one user-given call name or class stands for: a call of this trace by its
/// trace name, any name the registry gives a call (kernel name, trace name, alias:
/// `pwrite64`, `pwrite`, `_llseek`), or strace's class (`%file`). A name that is no call is an
/// error with the nearest name; a call absent from this trace is not (it matches nothing).
pub(crate) fn call_values(token: &str, present: &[String]) -> Result<Vec<String>, String> {
    let token = token.strip_prefix(PREFIX).unwrap_or(token);
    if token.starts_with('%') {
        let defs = ra_syscalls::class_members(token).map_err(|e| e.to_string())?;
        return Ok(defs.iter().map(|d| d.trace_name.to_string()).collect());
    }
    if present.iter().any(|p| p == token) {
        return Ok(vec![token.to_string()]);
    }
    match ra_syscalls::call_named(token) {
        Ok(d) => Ok(vec![d.trace_name.to_string()]),
        // A file-system operation of `reanimator fs` traces (`create`, `lookup`, ...).
        Err(_) if ra_trace::fsop::OPERATIONS.contains(&token) => Ok(vec![token.to_string()]),
        Err(e @ ra_syscalls::SelectError::Unknown { hint: None, .. }) => {
            // Perhaps a near name among this trace's own calls or the file-system operations.
            let near = present.iter().map(String::as_str);
            match ra_filter::suggest(token, near.chain(ra_trace::fsop::OPERATIONS.iter().copied()))
            {
                Some(h) => Err(format!("no call named `{token}`; did you mean `{h}`?")),
                None => Err(e.to_string()),
            }
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Map `--type` names and classes (strace's `-e trace=` list: `read,%file`; a leading `!`
/// for every call but those) to the trace names present in the file.
fn resolve_calls(tr: &TraceReader, names: &[String]) -> Result<Vec<String>> {
    resolve_present(&present_calls(tr), names)
}

fn resolve_present(present: &[String], names: &[String]) -> Result<Vec<String>> {
    let present = present.to_vec();
    let mut invert = false;
    let mut out: Vec<String> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let mut n = n.trim();
        if i == 0 {
            while let Some(rest) = n.strip_prefix('!') {
                invert = !invert;
                n = rest.trim_start();
            }
        }
        for v in call_values(n, &present).map_err(|e| anyhow::anyhow!("--type: {e}"))? {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    if invert {
        out = present.into_iter().filter(|p| !out.contains(p)).collect();
    }
    Ok(out)
}

/// A `--where` expression for the calls of this trace: parsed, its fields checked, and the
/// call names it compares `call` with resolved as `--type` resolves them (`call == pwrite64`
/// matches the trace's `pwrite`; `call in %file` every call of strace's class).
pub(crate) fn event_filter(src: &str, tr: &TraceReader) -> Result<Filter> {
    filter_for(src, &present_calls(tr), known_event_fields(tr))
}

fn filter_for(src: &str, present: &[String], known: Vec<String>) -> Result<Filter> {
    let mut f = Filter::parse(src).map_err(|e| anyhow::anyhow!("--where: {e}"))?;
    check_fields(&f, &known)?;
    f.resolve_values(&["call", "op", "type", "syscall"], &mut |v| {
        let v = std::str::from_utf8(v).map_err(|_| "a call name is text".to_string())?;
        Ok(call_values(v, present)?.into_iter().map(String::into_bytes).collect())
    })
    .map_err(|e| anyhow::anyhow!("--where: {e}"))?;
    Ok(f)
}

/// Field names a `--where` expression may use on this trace.
pub(crate) fn known_event_fields(tr: &TraceReader) -> Vec<String> {
    known_fields_of(tr.call_types().map(|(l, _)| l))
}

fn known_fields_of<'a>(
    layouts: impl Iterator<Item = &'a ra_trace::schema::CallLayout>,
) -> Vec<String> {
    let mut v: Vec<String> = [
        "unique_id",
        "id",
        "time_called",
        "time",
        "time_returned",
        "duration",
        "pid",
        "executing_pid",
        "tid",
        "executing_tid",
        "ppid",
        "uid",
        "gid",
        "ret",
        "return_value",
        "errno",
        "errno_number",
        "errno_name",
        "call",
        "op",
        "type",
        "name",
        "syscall",
        "path",
        "size",
        "fd",
        "fd_path",
        "fd_path2",
        "comm",
        "signal",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for d in ra_syscalls::REGISTRY {
        for a in d.args {
            v.push(a.name.to_string());
            v.push(a.field.to_string());
        }
    }
    for l in layouts {
        v.extend(l.ty.fields().iter().map(|f| f.name.clone()));
    }
    v.sort();
    v.dedup();
    v
}

pub(crate) fn check_fields(filter: &Filter, known: &[String]) -> Result<()> {
    for f in filter.fields() {
        if !known.iter().any(|k| k == f) {
            let hint = ra_filter::suggest(f, known.iter().map(String::as_str))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            bail!("--where: unknown field `{f}`{hint}");
        }
    }
    Ok(())
}

fn csv_field(out: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}

/// Bytes in JSON by the one rule of every JSON the tools write (`ra_fsstate::JsonBytes`).
fn json_bytes(b: &[u8]) -> Json {
    JsonBytes::value(b)
}

/// One JSON Lines record: `v` serialised into a buffer of its own, then written with its
/// newline in one piece. Not through `Display` or straight into `out`: both cost a call per
/// fragment, and a buffer of NULs is 4,096 six-byte `\u0000` fragments (two thirds of
/// `--format jsonl`'s time on a trace of 4 KiB buffers went there).
fn json_line(out: &mut dyn Write, v: &Json) -> std::io::Result<()> {
    thread_local!(static LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) });
    LINE.with_borrow_mut(|line| {
        line.clear();
        write_json(line, v)?;
        line.push(b'\n');
        out.write_all(line)?;
        // A huge record's buffer is not kept for the small ones after it.
        if line.capacity() > 1 << 20 {
            *line = Vec::new();
        }
        Ok(())
    })
}

/// `v` as serde_json writes it (compact), with a faster path for the strings that need no
/// escape (hex buffers, most paths): they are checked 16 bytes at a time and copied whole,
/// where serde_json looks up every byte.
fn write_json(out: &mut Vec<u8>, v: &Json) -> serde_json::Result<()> {
    match v {
        Json::String(s) => write_json_str(out, s)?,
        Json::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(out, x)?;
            }
            out.push(b']');
        }
        Json::Object(m) => {
            out.push(b'{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_str(out, k)?;
                out.push(b':');
                write_json(out, x)?;
            }
            out.push(b'}');
        }
        leaf => serde_json::to_writer(&mut *out, leaf)?,
    }
    Ok(())
}

/// A JSON string: copied between quotes when no byte needs an escape, else by serde_json.
fn write_json_str(out: &mut Vec<u8>, s: &str) -> serde_json::Result<()> {
    let plain =
        |c: &[u8]| c.iter().fold(true, |ok, &b| ok & (b >= 0x20) & (b != b'"') & (b != b'\\'));
    let mut chunks = s.as_bytes().chunks_exact(16);
    let clean = chunks.by_ref().all(plain) && plain(chunks.remainder());
    if clean {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(&mut *out, s)
    }
}

/// An argument's JSON; C strings (paths, xattr names) without their terminating NUL.
fn json_arg(kind: ArgKind, v: &ArgValue) -> Json {
    match v {
        ArgValue::Absent => Json::Null,
        ArgValue::NotCaptured => json!({"not_captured": true}),
        ArgValue::Hashed { len, blake3 } => {
            json!({"len": len, "blake3": ra_hex::encode(blake3)})
        }
        ArgValue::Int(i) => json!(i),
        ArgValue::Data(d) if kind.is_c_string() => JsonBytes::c_string_value(d),
        ArgValue::Data(d) => json_bytes(d),
        ArgValue::Iov(v) => Json::Array(
            v.iter()
                .map(|i| json!({"len": i.requested, "data": i.data.as_deref().map(json_bytes)}))
                .collect(),
        ),
        ArgValue::Strings(s) => Json::Array(s.iter().map(|b| json_bytes(b)).collect()),
    }
}

fn event_json(e: &Event) -> Json {
    let mut args = Map::new();
    if let Some(def) = e.def {
        for (a, v) in def.args.iter().zip(&e.args) {
            args.insert(a.name.to_string(), json_arg(a.kind, v));
        }
    }
    let mut extra = Map::new();
    for (k, v) in &e.extra {
        extra.insert(
            k.clone(),
            match v {
                ExtraValue::Null => Json::Null,
                ExtraValue::Bool(b) => json!(b),
                ExtraValue::Int(i) => json!(i),
                ExtraValue::DoubleBits(b) => json!(f64::from_bits(*b)),
                ExtraValue::Bytes(b) => json_bytes(b),
            },
        );
    }
    json!({
        "unique_id": e.unique_id,
        "call": e.name,
        "syscall": e.def.map(|d| d.name),
        "time_called": e.time_called,
        "time_returned": e.time_returned,
        "pid": e.pid, "tid": e.tid, "ppid": e.ppid, "uid": e.uid, "gid": e.gid,
        "return_value": e.ret,
        "errno": e.errno,
        "errno_name": e.errno.and_then(ra_trace::format::errno_name),
        "buffer_not_captured": e.buffer_not_captured,
        "args": args,
        "extra": extra,
    })
}

/// The text line `+++ exited with 0 +++` / `+++ killed by SIGKILL +++` that follows a call
/// ending its process, as strace prints it.
fn exit_line(ev: &Event) -> Option<String> {
    let def = ev.def?;
    let status = ev.arg("status").and_then(ArgValue::as_int)?;
    let who = match ev.pid.or(ev.tid) {
        Some(p) => format!("[{p}]"),
        None => "[?]".to_string(),
    };
    if ev.generated() {
        // The kernel's wait status of a thread killed between calls.
        let sig = status & 0x7f;
        if sig != 0 {
            let name = ra_syscalls::flags::SIGNAL.format(sig as u64);
            let core = if status & 0x80 != 0 { " (core dumped)" } else { "" };
            return Some(format!("{who} +++ killed by {name}{core} +++"));
        }
        return Some(format!("{who} +++ exited with {} +++", (status >> 8) & 0xff));
    }
    // exit_group ends the process; exit only its thread (the process's last exit is its
    // end, which the trace does not mark).
    def.ends_process.then(|| format!("{who} +++ exited with {} +++", status & 0xff))
}

/// JSON for a path a descriptor refers to (`null` when unknown).
fn json_path(p: Option<&std::sync::Arc<[u8]>>) -> Json {
    p.map_or(Json::Null, |p| json_bytes(p))
}

/// [`event_json`] with the descriptors' paths when they are decoded: `fd_path`, `fd_path2`,
/// and with `ret`, `ret_fd_path`. The CSV row's fields; with `ret`, the value
/// [`crate::jsonl::JsonLines`] writes a line of (the reference its tests compare with).
pub(crate) fn event_json_fds(ev: &Event, fds: Option<&EventFds>, ret: bool) -> Json {
    let mut j = event_json(ev);
    if let Some(fds) = fds {
        let [p1, p2] = fds.first_two();
        j["fd_path"] = json_path(p1);
        j["fd_path2"] = json_path(p2);
        if ret {
            j["ret_fd_path"] = json_path(fds.ret.as_ref());
        }
    }
    j
}

/// The columns of `dump --format csv` of a trace: the names `--format jsonl` gives its fields
/// and the Parquet export its columns (docs/TRACE_FORMAT.md 12.2); `args` and `extra` hold the
/// JSON objects `--format jsonl` writes, every buffer whole.
const CSV_COLUMNS: &[&str] = &[
    "unique_id",
    "call",
    "syscall",
    "time_called",
    "time_returned",
    "pid",
    "tid",
    "ppid",
    "uid",
    "gid",
    "return_value",
    "errno",
    "errno_name",
    "buffer_not_captured",
    "args",
    "extra",
];

/// `calls`: the trace names `--type` selects ([`resolve_calls`]).
/// Where `dump_events` takes its events: a trace file's reader or a stream's.
struct Source<'a> {
    /// Every event when descriptors are decoded or no `--type` is given, else perhaps only
    /// the selected calls.
    events: &'a mut dyn Iterator<Item = ra_trace::Result<Event>>,
    tracker: FileIoTracker,
    /// How many aggregate rows (`fs mount --aggregate-only`) the trace holds.
    aggregate_rows: &'a dyn Fn() -> usize,
}

fn dump_events(
    src: Source<'_>,
    a: &DumpArgs,
    calls: &[String],
    filter: Option<&Filter>,
    out: &mut dyn Write,
) -> Result<()> {
    let only: Vec<&str> = calls.iter().map(String::as_str).collect();
    let decode = !a.no_decode_fds;
    let mut opts = FormatOptions {
        strsize: a.strsize,
        show_duration: !a.no_duration,
        time_format: match (a.relative, a.time) {
            (true, _) => TimeFormat::Relative,
            (false, 0) => TimeFormat::Epoch,
            (false, 1) => TimeFormat::Clock,
            (false, 2) => TimeFormat::ClockMicros,
            (false, _) => TimeFormat::EpochMicros,
        },
        hex: match a.hex {
            0 => Hex::NonPrintable,
            1 => Hex::NonAscii,
            _ => Hex::All,
        },
        flags: match a.flags {
            Flags::Raw => FlagStyle::Raw,
            Flags::Abbrev => FlagStyle::Abbrev,
            Flags::Verbose => FlagStyle::Verbose,
        },
        ..FormatOptions::default()
    };
    // The CSV columns: jsonl's fields, and the descriptors' files when they are decoded.
    let mut csv_columns = CSV_COLUMNS.to_vec();
    if decode {
        csv_columns.extend(["fd_path", "fd_path2"]);
    }
    if a.format == Format::Csv {
        writeln!(out, "{}", csv_columns.join(","))?;
    }
    let selected = !a.types.is_empty();
    let mut tracker = src.tracker;
    let mut ops = Vec::new();
    let (mut shown, mut seen) = (0u64, 0u64);
    let mut jsonl = crate::jsonl::JsonLines::default();
    let mut line = Vec::new();
    for ev in src.events {
        let ev = ev?;
        let fds = if decode {
            let mut fds = tracker.event_fds(&ev);
            tracker.apply(&ev, &mut |_, _| true, &mut ops);
            ops.clear();
            fds.ret = tracker.returned_fd(&ev);
            fds
        } else {
            EventFds::default()
        };
        if selected && !only.contains(&ev.name.as_str()) {
            continue;
        }
        seen += 1;
        let rec = FdEventRecord { ev: EventRecord(&ev), fds: decode.then_some(&fds) };
        if filter.is_some_and(|f| !f.matches(&rec)) {
            continue;
        }
        if a.limit.is_some_and(|l| shown >= l) {
            break;
        }
        if a.relative {
            // strace's -r: since the previous call shown.
            opts.time_base = opts.time_base.or(ev.time_called);
        }
        let shown_fds = if decode { Some(&fds) } else { None };
        match a.format {
            Format::Text => {
                writeln!(out, "{}", format_event_fds(&ev, &opts, shown_fds))?;
                if let Some(l) = exit_line(&ev) {
                    writeln!(out, "{:>6} {l}", "")?;
                }
            }
            Format::Jsonl => {
                line.clear();
                jsonl.event(&mut line, &ev, shown_fds);
                line.push(b'\n');
                out.write_all(&line)?;
                // A huge record's buffer is not kept for the small ones after it.
                if line.capacity() > 1 << 20 {
                    line = Vec::new();
                }
            }
            Format::Csv => {
                let j = event_json_fds(&ev, shown_fds, false);
                let mut s = String::new();
                for (i, name) in csv_columns.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    match &j[*name] {
                        Json::Null => {}
                        Json::String(t) => csv_field(&mut s, t),
                        v @ (Json::Object(_) | Json::Array(_)) => csv_field(&mut s, &v.to_string()),
                        v => s.push_str(&v.to_string()),
                    }
                }
                writeln!(out, "{s}")?;
            }
        }
        if a.relative {
            opts.time_base = ev.time_called.or(opts.time_base);
        }
        shown += 1;
    }
    if seen == 0 && !selected {
        let rows = (src.aggregate_rows)();
        if rows > 0 {
            eprintln!(
                "reanimator: note: this trace holds no per-operation records, only {rows} \
                 aggregate rows (`fs mount --aggregate-only`): `reanimator profile TRACE` shows \
                 their histograms, `reanimator dump --raw TRACE` the rows"
            );
        } else {
            eprintln!("reanimator: note: this trace holds no calls");
        }
    }
    Ok(())
}

/// A byte field for the terminal: as strace shows a buffer ([`ra_trace::format::quoted`]).
fn quoted(b: &[u8], strsize: usize) -> String {
    let mut s = String::with_capacity(b.len().min(4096) + 2);
    ra_trace::format::quoted(&mut s, b, strsize);
    s
}

/// Printable text: valid UTF-8 without control characters.
fn is_text(b: &[u8]) -> bool {
    std::str::from_utf8(b).is_ok_and(|t| !t.chars().any(char::is_control))
}

/// A byte field for CSV: text as it is (line breaks and tabs included: the field is quoted,
/// RFC 4180), anything else escaped as strace does.
fn csv_text(b: &[u8]) -> String {
    let text = std::str::from_utf8(b)
        .is_ok_and(|t| !t.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')));
    if text {
        return String::from_utf8_lossy(b).into_owned();
    }
    let mut s = String::new();
    ra_trace::format::escape_bytes(&mut s, b);
    s
}

fn ds_json(v: Value<'_>) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Byte(b) => json!(b),
        Value::Int32(i) => json!(i),
        Value::Int64(i) => json!(i),
        Value::Double(d) => json!(d),
        Value::Bytes(b) => json_bytes(b),
    }
}

fn dump_records(
    ds: &DsReader,
    a: &DumpArgs,
    filter: Option<&Filter>,
    out: &mut dyn Write,
) -> Result<()> {
    let user_types: Vec<&str> =
        ds.types().iter().map(|t| t.name()).filter(|n| !n.starts_with("DataSeries: ")).collect();
    let mut wanted: Vec<String> = Vec::new();
    for t in &a.types {
        if user_types.contains(&t.as_str()) {
            wanted.push(t.clone());
        } else if user_types.contains(&format!("{PREFIX}{t}").as_str()) {
            wanted.push(format!("{PREFIX}{t}"));
        } else if let Some(d) = ra_syscalls::lookup(t)
            .filter(|d| user_types.contains(&format!("{PREFIX}{}", d.trace_name).as_str()))
        {
            wanted.push(format!("{PREFIX}{}", d.trace_name));
        } else {
            let hint = ra_filter::suggest(t, user_types.iter().copied())
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            bail!("--type: no extent type `{t}` in this file{hint}");
        }
    }
    if a.format == Format::Csv && wanted.len() != 1 {
        let used: std::collections::BTreeSet<String> = ds
            .headers()
            .filter_map(|h| h.ok().map(|h| h.type_name))
            .filter(|n| !n.starts_with("DataSeries: "))
            .collect();
        if used.len() != 1 || !wanted.is_empty() {
            bail!(
                "CSV holds one table: pick one extent type with --type NAME (this file uses: {})",
                used.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
        wanted.extend(used);
    }
    if let Some(f) = filter {
        let known: Vec<String> = ds
            .types()
            .iter()
            .filter(|t| wanted.is_empty() || wanted.iter().any(|w| w == t.name()))
            .flat_map(|t| t.fields().iter().map(|f| f.name.clone()))
            .collect();
        check_fields(f, &known)?;
    }
    let mut shown = 0u64;
    let mut csv_header_done = false;
    for e in ds.extents() {
        let e: Extent = e?;
        let ty = e.extent_type().clone();
        if !wanted.is_empty() && !wanted.iter().any(|w| w == ty.name()) {
            continue;
        }
        let fields = ty.fields();
        let mut header_done = false;
        for r in 0..e.len() {
            if filter.is_some_and(|f| !f.matches(&DsRecord { extent: &e, row: r })) {
                continue;
            }
            if a.limit.is_some_and(|l| shown >= l) {
                return Ok(());
            }
            match a.format {
                Format::Text => {
                    if !header_done {
                        writeln!(out, "# Extent, type='{}'", ty.name())?;
                        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                        writeln!(out, "{}", names.join(" "))?;
                        header_done = true;
                    }
                    for (i, f) in fields.iter().enumerate() {
                        if i > 0 {
                            out.write_all(b" ")?;
                        }
                        match e.value(r, i) {
                            // Binary fields (NFS file handles, raw buffers) never reach the
                            // terminal raw: quoted and escaped as strace does. Text is
                            // printed as ds2txt prints it.
                            Value::Bytes(b) if !is_text(b) => {
                                out.write_all(quoted(b, a.strsize).as_bytes())?
                            }
                            v => dataseries::text::write_value(out, &v, f)?,
                        }
                    }
                    out.write_all(b"\n")?;
                }
                Format::Csv => {
                    if !csv_header_done {
                        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                        writeln!(out, "{}", names.join(","))?;
                        csv_header_done = true;
                    }
                    let mut s = String::new();
                    for (i, f) in fields.iter().enumerate() {
                        if i > 0 {
                            s.push(',');
                        }
                        match e.value(r, i) {
                            Value::Null => {}
                            Value::Bytes(b) => csv_field(&mut s, &csv_text(b)),
                            v => csv_field(&mut s, &dataseries::text::format_value(&v, f)),
                        }
                    }
                    writeln!(out, "{s}")?;
                }
                Format::Jsonl => {
                    let mut m = Map::new();
                    m.insert("extent_type".into(), json!(ty.name()));
                    for (i, f) in fields.iter().enumerate() {
                        m.insert(f.name.clone(), ds_json(e.value(r, i)));
                    }
                    json_line(&mut *out, &Json::Object(m))?;
                }
            }
            shown += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast writer writes what serde_json writes, escapes, Unicode and numbers included.
    #[test]
    fn write_json_is_serde_json_s_compact_form() {
        let long_clean = "0123456789abcdef".repeat(100) + "xyz";
        let long_escaped = "a".repeat(40) + "\"q\"\\\u{1}\n" + &"b".repeat(17);
        let v = json!({
            "s": "plain", "e": "tab\there", "u": "café ☕ \u{7f}", "n": null, "t": true,
            "i": -42, "u64": u64::MAX, "f": 1.5, "tiny": 1e-300, "arr": [1, "x", [], {}],
            "long": long_clean, "long_esc": long_escaped, "quote\"key": {"hex": "00ff"},
            "": "", "sixteen": "0123456789abcdef", "fifteen\\": "0123456789abcd\"",
        });
        let mut mine = Vec::new();
        write_json(&mut mine, &v).unwrap();
        assert_eq!(String::from_utf8(mine).unwrap(), serde_json::to_string(&v).unwrap());
        let mut out = Vec::new();
        json_line(&mut out, &v).unwrap();
        assert_eq!(out, format!("{v}\n").into_bytes());
    }
}
