//! `reanimator collect`: receive traces streamed by `record -o tcp://` and `fs -o tcp://`,
//! each into its own file, extent by extent; and `collect --join`, which puts a cut
//! collected file and the sender's spill file back together. Protocol: docs/NETWORK.md.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use dataseries::seal::StreamVerifier;
use dataseries::stream::{FeedError, Framer, PartKind, Piece};
use ra_capture::STOP_REQUESTS;
use ra_trace::key::Purpose;
use ra_trace::net::{HELLO_MAGIC, LINE_MAX, PROTOCOL_VERSION, SPILL_OFFSET_KEY};
use serde_json::json;

const XMLTYPE: &str = "DataSeries: XmlType";
const INDEX: &str = "DataSeries: ExtentIndex";

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator collect --listen 0.0.0.0:7070 --dir traces/\n  \
    reanimator record -o tcp://collector:7070 --spill local.ds -- make\n  \
    reanimator collect --join traces/host-make-....ds local.ds -o whole.ds\n\n\
    Each stream is written to DIR/HOST-LABEL-TIME-PID.ds as it arrives. A stream that ends \
    before its trailer (sender killed, connection lost, collector stopped) is cut at its last \
    whole extent: readable, and `reanimator info` says it was cut. One line per stream start \
    and end on stdout (JSON Lines with --json). Ctrl-C or SIGTERM stops within a second; \
    streams still open are cut.\n\n\
    --key KEYFILE (global option): verify every stream's seal (`record --seal`) as its \
    extents arrive; a stream whose seal does not verify (another key, not sealed, an extent \
    changed, dropped or reordered) is refused, its connection dropped and its file renamed \
    to NAME.ds.refused. Each extent is held in memory while it is checked (at most \
    --max-extent bytes per stream).")]
pub struct CollectArgs {
    /// Address to listen on (port 0: any free port; the first output line names it).
    #[arg(long, value_name = "ADDR:PORT", required_unless_present = "join")]
    listen: Option<String>,
    /// Directory the streams are written to (created if missing).
    #[arg(long, value_name = "DIR", required_unless_present = "join")]
    dir: Option<PathBuf>,
    /// Print JSON Lines.
    #[arg(long)]
    json: bool,
    /// Streams served at once; more connections are refused (with a line saying so).
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_streams: usize,
    /// A stream silent this long (no hello within 10 s; no byte for this many seconds
    /// after) is cut and its connection dropped.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    idle_timeout: u64,
    /// Largest extent accepted (K, M, G suffixes); a stream announcing a larger one is
    /// refused.
    #[arg(long, value_name = "SIZE", value_parser = crate::record::parse_size, default_value = "1G")]
    max_extent: u64,
    /// Join a cut collected file and the sender's spill file into one trace (-o OUT).
    #[arg(long, num_args = 2, value_names = ["COLLECTED", "SPILL"], conflicts_with_all = ["listen", "dir"], requires = "output")]
    join: Option<Vec<PathBuf>>,
    /// With --join: the trace to write (refused if it exists; mode 0600).
    #[arg(short = 'o', long, value_name = "OUT.ds")]
    output: Option<PathBuf>,
}

/// `key`: the global `--key KEYFILE`: with it every stream's seal (`record --seal`, `fs mount
/// --seal`) is verified as its extents arrive, and a stream whose seal does not verify
/// (another key, not sealed, an extent changed, dropped or reordered) is refused, its
/// connection dropped and its file renamed to NAME.ds.refused. Each extent is held in memory
/// while it is checked (at most --max-extent bytes per stream).
pub fn run(a: CollectArgs, key: Option<&ra_trace::key::Key>) -> Result<ExitCode> {
    if let Some(j) = &a.join {
        let out = a.output.as_ref().expect("clap: --join requires -o");
        return join(&j[0], &j[1], out);
    }
    let (Some(listen), Some(dir)) = (&a.listen, &a.dir) else {
        anyhow::bail!("--listen and --dir are required");
    };
    // The MAC key only: the key file's secret never leaves this process, nor goes in a line.
    let seal_key = key.map(|k| k.derive(Purpose::Seal));
    ra_fsstate::private::create_dir_all(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let listener =
        TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    crate::record::install_stop_handlers();
    let log = Log { json: a.json, out: Arc::new(Mutex::new(())) };
    if a.json {
        log.line(
            &json!({"event": "listening", "addr": local.to_string(),
                         "dir": dir.display().to_string()})
            .to_string(),
        );
    } else {
        log.line(&format!("listening on {local}, writing to {}", dir.display()));
    }
    let ctx = Arc::new(Ctx {
        dir: dir.clone(),
        log,
        stop: AtomicBool::new(false),
        active: AtomicUsize::new(0),
        idle: Duration::from_secs(a.idle_timeout.max(1)),
        max_extent: a.max_extent,
        seal_key,
        names: Mutex::new(()),
    });
    let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    loop {
        if STOP_REQUESTS.load(Ordering::Relaxed) > 0 {
            break;
        }
        match listener.accept() {
            Ok((conn, peer)) => {
                threads.retain(|t| !t.is_finished());
                if ctx.active.load(Ordering::Relaxed) >= a.max_streams {
                    let _ = conn.set_nonblocking(false);
                    let _ = (&conn).write_all(b"no too many streams at once\n");
                    ctx.log.drop(
                        peer,
                        &format!("too many streams at once (--max-streams {})", a.max_streams),
                    );
                    continue;
                }
                ctx.active.fetch_add(1, Ordering::Relaxed);
                let c = Arc::clone(&ctx);
                let t = std::thread::Builder::new().name("collect".into()).spawn(move || {
                    serve(&c, conn, peer);
                    c.active.fetch_sub(1, Ordering::Relaxed);
                });
                match t {
                    Ok(t) => threads.push(t),
                    Err(e) => {
                        ctx.active.fetch_sub(1, Ordering::Relaxed);
                        ctx.log.drop(peer, &format!("cannot start a thread: {e}"));
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => {
                eprintln!("reanimator collect: accept: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    ctx.stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per event on stdout, whole lines from every thread.
#[derive(Clone)]
struct Log {
    json: bool,
    out: Arc<Mutex<()>>,
}

impl Log {
    fn line(&self, s: &str) {
        let _g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{s}");
        let _ = o.flush();
    }

    fn drop(&self, peer: SocketAddr, why: &str) {
        if self.json {
            self.line(
                &json!({"event": "drop", "peer": peer.to_string(), "reason": why}).to_string(),
            );
        } else {
            self.line(&format!("drop {peer}: {why}"));
        }
    }
}

struct Ctx {
    dir: PathBuf,
    log: Log,
    stop: AtomicBool,
    active: AtomicUsize,
    idle: Duration,
    max_extent: u64,
    /// `--key`: the seal's MAC key.
    seal_key: Option<[u8; 32]>,
    /// Serializes choosing file names (O_EXCL does the rest).
    names: Mutex<()>,
}

/// How a stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Complete: trailer received, file finished.
    Ok,
    /// Ended before its trailer: the file ends at the last whole extent.
    Cut,
    /// Not a valid stream (or its seal did not verify): see the reason.
    Refused,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Cut => "cut",
            Status::Refused => "refused",
        }
    }
}

#[derive(Debug)]
/// The hello: `reanimator-stream 1 {"host":..,"pid":..,"start_ns":..,"label":..}`.
struct Hello {
    host: String,
    pid: u64,
    start_ns: i64,
    label: String,
}

fn parse_hello(line: &str) -> std::result::Result<Hello, String> {
    let mut it = line.splitn(3, ' ');
    if it.next() != Some(HELLO_MAGIC) {
        return Err("not a reanimator stream (wrong hello)".into());
    }
    let v = it.next().unwrap_or("");
    if v != PROTOCOL_VERSION.to_string() {
        return Err(format!("protocol version {v:?} (this collector speaks {PROTOCOL_VERSION})"));
    }
    let j: serde_json::Value =
        serde_json::from_str(it.next().unwrap_or("")).map_err(|e| format!("bad hello: {e}"))?;
    Ok(Hello {
        host: j["host"].as_str().unwrap_or("").to_string(),
        pid: j["pid"].as_u64().unwrap_or(0),
        start_ns: j["start_ns"].as_i64().unwrap_or(0),
        label: j["label"].as_str().unwrap_or("").to_string(),
    })
}

/// A file-name component from untrusted text: `[A-Za-z0-9._-]` only (others become `_`), no
/// leading dot, no `..`, at most `max` characters, never empty.
fn safe(s: &str, max: usize) -> String {
    let mut o: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
        .take(max)
        .collect();
    while o.starts_with('.') {
        o.replace_range(..1, "_");
    }
    while o.contains("..") {
        o = o.replace("..", "._");
    }
    if o.is_empty() {
        o.push('_');
    }
    o
}

/// Creates the stream's file, named after the hello, unique (O_EXCL).
fn create_file(ctx: &Ctx, h: &Hello) -> std::io::Result<(File, String)> {
    let _g = ctx.names.lock().unwrap_or_else(|e| e.into_inner());
    let t = crate::info::rfc3339(h.start_ns);
    // 2026-11-26T22:15:10.123456789Z -> 20261126T221510
    let stamp: String = t.chars().filter(|c| c.is_ascii_digit() || *c == 'T').take(15).collect();
    let base =
        format!("{}-{}-{}-{}", safe(&h.host, 64), safe(&h.label, 64), safe(&stamp, 20), h.pid);
    for i in 0..1000 {
        let name = if i == 0 { format!("{base}.ds") } else { format!("{base}-{i}.ds") };
        match ra_fsstate::private::create_new(&ctx.dir.join(&name)) {
            Ok(f) => return Ok((f, name)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(ErrorKind::AlreadyExists, "1000 files of that name exist"))
}

/// Reads the hello line within 10 s, at most [`LINE_MAX`] bytes.
fn read_hello(ctx: &Ctx, conn: &mut TcpStream) -> std::result::Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut v = Vec::new();
    let mut b = [0u8; 512];
    loop {
        if ctx.stop.load(Ordering::Relaxed) {
            return Err("the collector is stopping".into());
        }
        if Instant::now() > deadline {
            return Err("no hello within 10 s".into());
        }
        // Byte by byte up to the newline: what follows it is the trace, not ours to take.
        match conn.read(&mut b[..1]) {
            Ok(0) => return Err("closed before its hello".into()),
            Ok(_) => {
                if b[0] == b'\n' {
                    return String::from_utf8(v).map_err(|_| "the hello is not UTF-8".into());
                }
                v.push(b[0]);
                if v.len() > LINE_MAX {
                    return Err(format!("no hello in the first {LINE_MAX} bytes"));
                }
                if v.len() == HELLO_MAGIC.len() && v != HELLO_MAGIC.as_bytes() {
                    return Err("not a reanimator stream (wrong hello)".into());
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading the hello: {e}")),
        }
    }
}

fn serve(ctx: &Ctx, mut conn: TcpStream, peer: SocketAddr) {
    let _ = conn.set_nodelay(true);
    if conn.set_nonblocking(false).is_err()
        || conn.set_read_timeout(Some(Duration::from_millis(200))).is_err()
        || conn.set_write_timeout(Some(Duration::from_secs(10))).is_err()
    {
        return;
    }
    let hello = match read_hello(ctx, &mut conn).and_then(|l| parse_hello(&l)) {
        Ok(h) => h,
        Err(why) => {
            let _ = conn.write_all(format!("no {why}\n").as_bytes());
            ctx.log.drop(peer, &why);
            return;
        }
    };
    let (file, name) = match create_file(ctx, &hello) {
        Ok(x) => x,
        Err(e) => {
            let _ = conn.write_all(b"no the collector cannot create a file\n");
            ctx.log.drop(peer, &format!("cannot create a file in {}: {e}", ctx.dir.display()));
            return;
        }
    };
    if ctx.log.json {
        ctx.log.line(
            &json!({"event": "start", "file": name, "peer": peer.to_string(), "host": hello.host,
                    "pid": hello.pid, "label": hello.label})
            .to_string(),
        );
    } else {
        ctx.log.line(&format!(
            "start {name} from {peer} (host {}, pid {}, {})",
            safe(&hello.host, 64),
            hello.pid,
            safe(&hello.label, 64)
        ));
    }
    let path = ctx.dir.join(&name);
    let mut s = Stream::new(file, ctx.max_extent, ctx.seal_key);
    let (status, reason) = match conn.write_all(format!("ok {name}\n").as_bytes()) {
        Ok(()) => s.receive(ctx, &mut conn),
        Err(e) => (Status::Cut, format!("cannot answer the hello: {e}")),
    };
    let (status, reason) = s.close(status, reason, &path);
    if status == Status::Ok {
        let _ = conn.write_all(format!("done {}\n", s.framer.boundary()).as_bytes());
    } else if status == Status::Refused {
        let _ = conn.write_all(format!("refused {reason}\n").as_bytes());
    }
    let _ = conn.shutdown(std::net::Shutdown::Both);
    let bytes = s.framer.boundary();
    let extents = s.framer.extents();
    if ctx.log.json {
        ctx.log.line(
            &json!({"event": "end", "file": name, "peer": peer.to_string(),
                    "status": status.name(), "bytes": bytes, "extents": extents,
                    "dropped_bytes": s.dropped, "reason": reason})
            .to_string(),
        );
    } else {
        let why = if reason.is_empty() { String::new() } else { format!(": {reason}") };
        ctx.log
            .line(&format!("end {name} {} ({bytes} bytes, {extents} extents){why}", status.name()));
    }
}

/// One stream being written.
struct Stream {
    file: File,
    framer: Framer,
    /// Bytes of an unfinished part when the stream ended (cut off the file).
    dropped: u64,
    /// Acknowledged so far.
    acked: u64,
    last_ack: Instant,
    /// Acknowledging failed (the sender is gone or not reading): the rest is read, not acked.
    ack_broken: bool,
    ack_error: String,
    /// `--key`: the seal verifier and the extent being gathered for it.
    seal: Option<Seal>,
}

struct Seal {
    verifier: Option<StreamVerifier>,
    extent: Vec<u8>,
}

impl Seal {
    /// Every piece of the stream, in order: each whole extent goes to the verifier.
    fn piece(&mut self, p: &Piece<'_>) -> std::result::Result<(), String> {
        let Some(v) = self.verifier.as_mut() else { return Ok(()) };
        match p {
            Piece::Data { part, bytes } if part.kind == PartKind::Extent => {
                self.extent.extend_from_slice(bytes);
            }
            Piece::End { part } if part.kind == PartKind::Extent => {
                let r = v.extent(part.offset, &self.extent);
                self.extent.clear();
                if self.extent.capacity() > 16 << 20 {
                    self.extent = Vec::new();
                }
                r.map_err(|e| format!("the seal does not verify: {e}"))?;
            }
            Piece::End { part } if part.kind == PartKind::Trailer => {
                let v = self.verifier.take().expect("a verifier");
                v.finish().map_err(|e| format!("the seal does not verify: {e}"))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// What the seal says of a stream that ended early.
    fn cut_note(&mut self) -> String {
        match self.verifier.take().map(StreamVerifier::finish) {
            Some(Err(e)) => format!(" (seal: {})", e.why),
            _ => String::new(),
        }
    }
}

/// Why writing a piece failed.
enum Sink {
    Io(std::io::Error),
    Seal(String),
}

/// Acknowledge at least this often while extents arrive...
const ACK_EVERY: Duration = Duration::from_millis(100);
/// ... or once this many bytes are unacknowledged.
const ACK_BYTES: u64 = 4 << 20;

impl Stream {
    fn new(file: File, max_extent: u64, seal_key: Option<[u8; 32]>) -> Stream {
        Stream {
            file,
            seal: seal_key
                .map(|k| Seal { verifier: Some(StreamVerifier::new(k)), extent: Vec::new() }),
            framer: Framer::new().max_extent(max_extent),
            dropped: 0,
            acked: 0,
            last_ack: Instant::now(),
            ack_broken: false,
            ack_error: String::new(),
        }
    }

    /// Reads the stream to its end; the status and reason when it ends otherwise than
    /// complete.
    fn receive(&mut self, ctx: &Ctx, conn: &mut TcpStream) -> (Status, String) {
        let mut buf = vec![0u8; 256 << 10];
        let mut last_byte = Instant::now();
        loop {
            if ctx.stop.load(Ordering::Relaxed) {
                return (Status::Cut, "the collector is stopping".into());
            }
            match conn.read(&mut buf) {
                Ok(0) => {
                    return if self.framer.complete() {
                        (Status::Ok, String::new())
                    } else if self.ack_broken {
                        (Status::Cut, format!("the sender went away ({})", self.ack_error))
                    } else {
                        (Status::Cut, "the sender closed the connection before the trailer".into())
                    };
                }
                Ok(n) => {
                    last_byte = Instant::now();
                    let (file, seal) = (&mut self.file, &mut self.seal);
                    let r = self.framer.feed(&buf[..n], |p| -> std::result::Result<(), Sink> {
                        if let Some(s) = seal.as_mut() {
                            s.piece(&p).map_err(Sink::Seal)?;
                        }
                        match p {
                            Piece::Data { bytes, .. } => file.write_all(bytes).map_err(Sink::Io),
                            Piece::End { .. } => Ok(()),
                        }
                    });
                    match r {
                        Ok(()) => {}
                        Err(FeedError::Frame(e)) => {
                            return (Status::Refused, format!("not a valid trace stream: {e}"))
                        }
                        Err(FeedError::Sink(Sink::Seal(why))) => return (Status::Refused, why),
                        Err(FeedError::Sink(Sink::Io(e))) => {
                            return (Status::Cut, format!("cannot write the file: {e}"))
                        }
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if last_byte.elapsed() > ctx.idle {
                        return (
                            Status::Cut,
                            format!("no data for {} s (--idle-timeout)", ctx.idle.as_secs()),
                        );
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return (Status::Cut, format!("connection lost: {e}")),
            }
            if !self.ack_broken {
                if let Err(e) = self.ack(conn, false) {
                    // A sender that died leaves bytes in flight: read them to the end anyway.
                    self.ack_broken = true;
                    self.ack_error = e;
                }
            }
        }
    }

    /// Sends `ack N` for the whole extents written, after syncing them, when due.
    fn ack(&mut self, conn: &mut TcpStream, now: bool) -> std::result::Result<(), String> {
        let b = self.framer.boundary();
        if b <= self.acked
            || !(now || self.last_ack.elapsed() >= ACK_EVERY || b - self.acked >= ACK_BYTES)
        {
            return Ok(());
        }
        self.file.sync_data().map_err(|e| format!("cannot sync the file: {e}"))?;
        conn.write_all(format!("ack {b}\n").as_bytes())
            .map_err(|e| format!("cannot acknowledge: {e}"))?;
        self.acked = b;
        self.last_ack = Instant::now();
        Ok(())
    }

    /// Ends the file: a stream not complete is cut at its last whole extent (removed when
    /// not even its type library arrived whole).
    fn close(&mut self, status: Status, mut reason: String, path: &Path) -> (Status, String) {
        if status == Status::Cut {
            if let Some(s) = self.seal.as_mut() {
                reason.push_str(&s.cut_note());
            }
        }
        let b = self.framer.boundary();
        self.dropped = self.framer.offset() - b;
        if status != Status::Ok {
            if let Err(e) = self.file.set_len(b) {
                return (Status::Cut, format!("{reason}; and cannot cut the file: {e}"));
            }
        }
        let _ = self.file.sync_all();
        if status != Status::Ok && self.framer.extents() == 0 {
            // Not even the type library: nothing readable to keep.
            let _ = std::fs::remove_file(path);
            return (status, format!("{reason} (nothing readable: file removed)"));
        }
        if status == Status::Refused {
            // Kept for inspection, under a name no reader of DIR/*.ds takes for a trace.
            let mut to = path.as_os_str().to_owned();
            to.push(".refused");
            if std::fs::rename(path, &to).is_ok() {
                return (status, format!("{reason} (file renamed to *.ds.refused)"));
            }
        }
        (status, reason)
    }
}

/// `collect --join COLLECTED SPILL -o OUT`: the collected file up to its last whole extent,
/// then the spill's extents from that stream offset on, with a new index and trailer.
fn join(collected: &Path, spill: &Path, out: &Path) -> Result<ExitCode> {
    use dataseries::stream::file_tail;

    // The spill: where it starts in the stream.
    let sr = ra_trace::TraceReader::open(spill)
        .with_context(|| format!("cannot read the spill file {}", spill.display()))?;
    let from: u64 = match sr.info_value(SPILL_OFFSET_KEY) {
        Some(v) => String::from_utf8_lossy(v)
            .parse()
            .with_context(|| format!("{}: bad {SPILL_OFFSET_KEY}", spill.display()))?,
        None => anyhow::bail!(
            "{} is not a spill file that continues a collected stream (no {SPILL_OFFSET_KEY}; \
             a spill that begins at the start of the stream holds the whole trace by itself)",
            spill.display()
        ),
    };
    drop(sr);
    let mut o = ra_fsstate::private::create_new(out)
        .with_context(|| format!("cannot create {}", out.display()))?;
    let mut index: Vec<(u64, String)> = Vec::new();
    let mut chained = 0u32;
    let mut pos = 0u64;
    // 1. The collected file's whole extents (its index and trailer, if any, left out).
    let mut head_of_collected = Vec::new();
    {
        let mut fr = Framer::new();
        frame_file(collected, &mut fr, out, |p| {
            match p {
                Piece::Data { part, bytes } if keep(part) => {
                    if part.kind == PartKind::FileHeader || part.type_name == XMLTYPE {
                        head_of_collected.extend_from_slice(bytes);
                    }
                    o.write_all(bytes)?;
                    pos += bytes.len() as u64;
                }
                Piece::End { part } if keep(part) && part.kind == PartKind::Extent => {
                    index.push((part.offset, part.type_name.clone()));
                    chained = dataseries::raw::mix3(part.check, chained, 1972);
                }
                _ => {}
            }
            Ok(())
        })?;
        if fr.complete() {
            let _ = std::fs::remove_file(out);
            anyhow::bail!("{} is complete: there is nothing to join", collected.display());
        }
        // A cut file may end inside an extent: what follows its last whole extent is dropped.
        let end = fr.boundary();
        if pos != end {
            o.set_len(end)?;
            pos = end;
            use std::io::Seek;
            o.seek(std::io::SeekFrom::Start(end))?;
            index.retain(|(off, _)| *off < end);
        }
    }
    if pos < from {
        let _ = std::fs::remove_file(out);
        anyhow::bail!(
            "the collected file ends at byte {pos}, before the spill begins (stream byte {from}): \
             the extents between are in neither"
        );
    }
    // 2. The spill from stream offset `pos` on: its extents after its type library and its
    // spill info extent, shifted.
    // Spill offset of the first stream extent (after XmlType and the info extent).
    let mut seen = 0u32;
    let mut base: Option<u64> = None;
    let mut done = false;
    let mut spill_head = Vec::new();
    let start = pos;
    frame_file(spill, &mut Framer::new(), out, |p| {
        match p {
            Piece::Data { part, bytes } => {
                if part.kind == PartKind::FileHeader || part.type_name == XMLTYPE {
                    spill_head.extend_from_slice(bytes);
                    return Ok(());
                }
                if part.kind != PartKind::Extent || part.type_name == INDEX {
                    return Ok(());
                }
                if seen < 1 {
                    return Ok(()); // the spill info extent
                }
                let b = *base.get_or_insert(part.offset);
                let stream_off = from + (part.offset - b);
                if stream_off >= start {
                    o.write_all(bytes)?;
                    pos += bytes.len() as u64;
                }
            }
            Piece::End { part } => {
                if part.kind == PartKind::Trailer {
                    done = true;
                }
                if part.kind != PartKind::Extent
                    || part.type_name == XMLTYPE
                    || part.type_name == INDEX
                {
                    return Ok(());
                }
                if seen < 1 {
                    seen += 1;
                    return Ok(());
                }
                let b = *base.get_or_insert(part.offset);
                let stream_off = from + (part.offset - b);
                if stream_off >= start {
                    index.push((stream_off, part.type_name.clone()));
                    chained = dataseries::raw::mix3(part.check, chained, 1972);
                }
            }
        }
        Ok(())
    })?;
    if spill_head != head_of_collected {
        let _ = std::fs::remove_file(out);
        anyhow::bail!(
            "{} and {} are not parts of one stream (their type libraries differ)",
            collected.display(),
            spill.display()
        );
    }
    if done {
        let tail = file_tail(&index, chained, pos)?;
        o.write_all(&tail)?;
    }
    o.sync_all()?;
    eprintln!(
        "reanimator collect: joined {} (up to byte {start}) and {} -> {} ({} extents{})",
        collected.display(),
        spill.display(),
        out.display(),
        index.len(),
        if done { ", complete" } else { "; the spill was cut too: no trailer" }
    );
    Ok(ExitCode::SUCCESS)
}

/// Feeds the whole file `path` through `fr`, each piece to `sink` (which writes `out`): a
/// sink error is one writing `out`, a framing error says that `path` is damaged.
fn frame_file(
    path: &Path,
    fr: &mut Framer,
    out: &Path,
    mut sink: impl FnMut(Piece<'_>) -> std::io::Result<()>,
) -> Result<()> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        match fr.feed(&buf[..n], &mut sink) {
            Ok(()) => {}
            Err(FeedError::Sink(e)) => return Err(e).context(format!("writing {}", out.display())),
            Err(FeedError::Frame(e)) => anyhow::bail!("{} is damaged: {e}", path.display()),
        }
    }
}

/// Parts of a collected file that go into a join: header and extents, not its index and
/// trailer.
fn keep(part: &dataseries::stream::Part) -> bool {
    match part.kind {
        PartKind::FileHeader => true,
        PartKind::Extent => part.type_name != INDEX,
        PartKind::Trailer => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_peer_are_made_safe() {
        assert_eq!(safe("../../etc/passwd", 64), "_._.__etc_passwd");
        assert_eq!(safe("", 64), "_");
        assert_eq!(safe(".hidden", 64), "_hidden");
        assert_eq!(safe("a...b", 64), "a._.b");
        assert_eq!(safe("host.example.com", 64), "host.example.com");
        assert_eq!(safe(&"x".repeat(500), 64).len(), 64);
        assert_eq!(safe("caf\u{e9} \0/", 64), "caf____");
    }

    #[test]
    fn hellos_are_checked() {
        let h = parse_hello(r#"reanimator-stream 1 {"host":"h","pid":3,"start_ns":5,"label":"l"}"#)
            .unwrap();
        assert_eq!((h.host.as_str(), h.pid, h.start_ns, h.label.as_str()), ("h", 3, 5, "l"));
        assert!(parse_hello("GET / HTTP/1.1").unwrap_err().contains("wrong hello"));
        assert!(parse_hello("reanimator-stream 2 {}").unwrap_err().contains("version"));
        assert!(parse_hello("reanimator-stream 1 {").unwrap_err().contains("bad hello"));
    }
}
