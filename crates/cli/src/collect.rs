//! `reanimator collect`: receive traces streamed by `record -o tcp://` and `fs -o tcp://`,
//! each into its own file, extent by extent; and `collect --join`, which puts a cut
//! collected file and the sender's spill file back together. Protocol: docs/NETWORK.md.
//!
//! What a peer may cost is bounded before it is trusted: a connection has `--hello-timeout`
//! for its hello and authentication, in a pool of its own (`--max-handshakes`, per IP
//! address `--max-handshakes-per-ip`, the oldest evicted to make room), so that connections
//! which never authenticate hold none of the stream slots (`--max-streams`, per host and per
//! IP address). A stream inside an extent must keep `--min-rate`; between extents it may be
//! silent for `--idle-timeout`. Bytes are charged to the host's `--quota` and the stream's
//! `--max-stream-bytes` before they are written. Memory per stream is bounded in bytes
//! whatever a peer declares: extents are hashed for the seal as they arrive; only type
//! libraries and seal extents, at most [`WHOLE_MAX`] bytes, are held whole.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use dataseries::seal::{StreamVerifier, SEAL_TYPE_NAME};
use dataseries::stream::{FeedError, Framer, PartKind, Piece};
use ra_capture::STOP_REQUESTS;
use ra_trace::key::{check_host_name, Key};
use ra_trace::net::{auth, HELLO_MAGIC, LINE_MAX, PROTOCOL_VERSION, SPILL_OFFSET_KEY};
use serde_json::json;

const XMLTYPE: &str = "DataSeries: XmlType";
const INDEX: &str = "DataSeries: ExtentIndex";

/// Largest type library or seal extent accepted (they are held whole while checked; every
/// other extent is hashed as it arrives) ...
const WHOLE_MAX: u64 = 1 << 20;
/// ... and the most its header may declare decoded (records × 64 + variable bytes).
const WHOLE_DECODED_MAX: u64 = 4 << 20;
/// Most extents accepted between two seal extents (a sealing writer puts one every 64).
const MAX_UNSEALED: u64 = 1024;
/// `--min-rate` is measured over this window.
const RATE_WINDOW: Duration = Duration::from_secs(10);
/// The journal of seal serial numbers collected (with `--key`), in DIR.
const SERIALS: &str = ".collected-serials";

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator keygen collector.key\n  \
    reanimator keygen --host web1 --from collector.key web1.key      # give web1.key to web1\n  \
    reanimator collect --key collector.key --listen 0.0.0.0:7070 --dir traces/\n  \
    reanimator record --key web1.key -o tcp://collector:7070 --spill local.ds -- make\n  \
    reanimator collect --join traces/web1-make-....ds local.ds -o whole.ds\n\n\
    --key MASTER (global option): senders authenticate (a challenge-response over fresh \
    nonces of both sides, with the host key `keygen --host NAME --from MASTER` derives; the \
    collector proves it holds MASTER too), and the stored file is named after the \
    authenticated host. Every stream must be sealed with its host's key (`record --key \
    HOSTKEY` seals with it) and is checked as its extents arrive; a stream whose seal does \
    not verify (another host's key, not sealed, an extent changed, dropped or reordered), or \
    a trace already collected (the same seal serial, in DIR/.collected-serials), is refused, \
    its connection dropped and its file renamed to NAME.ds.refused.\n\n\
    Without --key nothing is authenticated: anyone who can reach the port can store traces \
    under any host name, unsealed, and upload a trace twice; the limits below then apply per \
    IP address. It listens only on a loopback address unless --insecure.\n\n\
    Limits (what one peer can cost): a connection has --hello-timeout seconds for its hello \
    and authentication, among at most --max-handshakes (--max-handshakes-per-ip from one \
    address; the oldest is dropped to make room); only authenticated streams take one of \
    --max-streams (--max-streams-per-host per host, --max-streams-per-ip per address). A \
    stream is cut when, inside an extent, fewer than --min-rate bytes a second arrive over \
    10 s; when no extent arrives for --idle-timeout seconds; when it passes \
    --max-stream-bytes; when its host passes --quota (bytes stored by one host while this \
    collector runs). Memory per stream: a 256 KiB read buffer, one extent header, and a type \
    library or seal extent being checked (at most 1 MiB; larger ones are refused); every \
    other extent is hashed as it arrives, never held.\n\n\
    Each stream is written to DIR/HOST-LABEL-TIME-PID.ds as it arrives. A stream that ends \
    before its trailer (sender killed, connection lost, a limit, collector stopped) is cut \
    at its last whole extent: readable, and `reanimator info` says it was cut. One line per \
    stream start and end on stdout (JSON Lines with --json). Ctrl-C or SIGTERM stops within \
    a second; streams still open are cut.")]
pub struct CollectArgs {
    /// The master key (`reanimator keygen`): senders authenticate with host keys derived
    /// from it (`keygen --host NAME --from MASTER`), and every stream's seal is checked under
    /// its host's key as it arrives. Without it the collector authenticates nobody (loopback
    /// only, unless --insecure).
    #[arg(long, value_name = "KEYFILE")]
    pub key: Option<PathBuf>,
    /// Address to listen on (port 0: any free port; the first output line names it).
    #[arg(long, value_name = "ADDR:PORT", required_unless_present = "join")]
    listen: Option<String>,
    /// Directory the streams are written to (created if missing).
    #[arg(long, value_name = "DIR", required_unless_present = "join")]
    dir: Option<PathBuf>,
    /// Print JSON Lines.
    #[arg(long)]
    json: bool,
    /// Without --key: listen on an address other than loopback anyway (unauthenticated).
    #[arg(long)]
    insecure: bool,
    /// Seconds a connection has for its hello and authentication (not renewed by bytes).
    #[arg(long, value_name = "SECONDS", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=300))]
    hello_timeout: u64,
    /// Connections in their hello and authentication at once; beyond, the oldest is dropped.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..))]
    max_handshakes: u64,
    /// Connections from one IP address in their hello and authentication at once; beyond,
    /// that address's oldest is dropped.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    max_handshakes_per_ip: u64,
    /// Streams served at once; a sender authenticated beyond is refused (`busy`).
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_streams: usize,
    /// Streams of one host (its authenticated name; without --key, its IP address) at once.
    #[arg(long, value_name = "N", default_value_t = 8)]
    max_streams_per_host: usize,
    /// Streams from one IP address at once.
    #[arg(long, value_name = "N", default_value_t = 32)]
    max_streams_per_ip: usize,
    /// A stream between extents silent this long is cut.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    idle_timeout: u64,
    /// Inside an extent, a stream delivering fewer bytes a second than this over 10 s is
    /// cut (K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = parse_rate, default_value = "16K")]
    min_rate: u64,
    /// Largest extent accepted (K, M, G suffixes); a stream announcing a larger one is
    /// refused.
    #[arg(long, value_name = "SIZE", value_parser = crate::record::parse_size, default_value = "1G")]
    max_extent: u64,
    /// Bytes one host (without --key: one IP address) may store while this collector runs,
    /// all its streams together; the stream passing it is cut (K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = crate::record::parse_size, default_value = "64G")]
    quota: u64,
    /// Bytes of one stream; a stream passing it is cut (K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = crate::record::parse_size, default_value = "16G")]
    max_stream_bytes: u64,
    /// Join a cut collected file and the sender's spill file into one trace (-o OUT).
    #[arg(long, num_args = 2, value_names = ["COLLECTED", "SPILL"], conflicts_with_all = ["listen", "dir"], requires = "output")]
    join: Option<Vec<PathBuf>>,
    /// With --join: the trace to write (refused if it exists; mode 0600).
    #[arg(short = 'o', long, value_name = "OUT.ds")]
    output: Option<PathBuf>,
}

fn parse_rate(s: &str) -> Result<u64, String> {
    match crate::record::parse_size(s)? {
        0 => Err("--min-rate must be at least 1 byte a second".into()),
        n => Ok(n),
    }
}

/// `key`: its `--key MASTER`: senders authenticate with host keys derived from it,
/// and every stream's seal is checked under its host's key (see the help text).
pub fn run(a: CollectArgs, key: Option<&Key>) -> Result<ExitCode> {
    if let Some(j) = &a.join {
        let out = a.output.as_ref().expect("clap: --join requires -o");
        return join(&j[0], &j[1], out);
    }
    let (Some(listen), Some(dir)) = (&a.listen, &a.dir) else {
        anyhow::bail!("--listen and --dir are required");
    };
    if let Some(h) = key.and_then(Key::host) {
        anyhow::bail!(
            "--key: the host key of {h} (a sender's key); the collector takes the master key \
             that host keys are derived from"
        );
    }
    let listener =
        TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
    let local = listener.local_addr()?;
    if key.is_none() {
        if !local.ip().is_loopback() && !a.insecure {
            anyhow::bail!(
                "--listen {listen} without --key: anyone who can reach it could store traces \
                 under any host name; give the collector a master key (--key MASTER, and each \
                 sender its host key: `reanimator keygen --host NAME --from MASTER FILE`), or \
                 --insecure on a network you trust"
            );
        }
        eprintln!(
            "reanimator collect: warning: no --key: senders are not authenticated (a stream's \
             host name is what it claims), seals are not checked and a trace uploaded twice is \
             stored twice; the limits apply per IP address"
        );
    }
    ra_fsstate::private::create_dir_all(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let serials = match key {
        Some(_) => Some(Serials::open(&dir.join(SERIALS))?),
        None => None,
    };
    listener.set_nonblocking(true)?;
    crate::record::install_stop_handlers();
    let log = Log { json: a.json, out: Arc::new(Mutex::new(())) };
    if a.json {
        log.line(
            &json!({"event": "listening", "addr": local.to_string(),
                    "dir": dir.display().to_string(), "authenticated": key.is_some()})
            .to_string(),
        );
    } else {
        log.line(&format!(
            "listening on {local}, writing to {}{}",
            dir.display(),
            if key.is_some() { "" } else { " (unauthenticated)" }
        ));
    }
    let ctx = Arc::new(Ctx {
        dir: dir.clone(),
        log,
        stop: AtomicBool::new(false),
        lim: Limits {
            hello: Duration::from_secs(a.hello_timeout),
            handshakes: a.max_handshakes as usize,
            handshakes_per_ip: a.max_handshakes_per_ip as usize,
            streams: a.max_streams,
            streams_per_host: a.max_streams_per_host,
            streams_per_ip: a.max_streams_per_ip,
            idle: Duration::from_secs(a.idle_timeout.max(1)),
            min_rate: a.min_rate,
            max_extent: a.max_extent,
            quota: a.quota,
            max_stream_bytes: a.max_stream_bytes,
        },
        master: key.cloned(),
        names: Mutex::new(()),
        slots: Mutex::new(Slots::default()),
        used: Mutex::new(HashMap::new()),
        serials: serials.map(Mutex::new),
    });
    let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    // The handshake pool: served here, without threads; a connection gets a thread once
    // authenticated and given a stream slot.
    let mut pool: Vec<Handshake> = Vec::new();
    while STOP_REQUESTS.load(Ordering::Relaxed) == 0 {
        wait_readable(&listener, &pool);
        loop {
            match listener.accept() {
                Ok((conn, peer)) => ctx.admit(&mut pool, conn, peer),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    eprintln!("reanimator collect: accept: {e}");
                    std::thread::sleep(Duration::from_millis(50));
                    break;
                }
            }
        }
        let now = Instant::now();
        let mut i = 0;
        while i < pool.len() {
            let step = match pool[i].step(&ctx) {
                Step::Wait if now > pool[i].deadline => Step::Fail(format!(
                    "no {} within {} s (--hello-timeout)",
                    pool[i].what(),
                    ctx.lim.hello.as_secs()
                )),
                s => s,
            };
            match step {
                Step::Wait => i += 1,
                Step::Fail(why) => {
                    let mut h = pool.swap_remove(i);
                    tell(&mut h.sock, &format!("no {why}"));
                    ctx.log.drop(h.peer, &why);
                }
                Step::Done(hello, host) => {
                    let h = pool.swap_remove(i);
                    threads.retain(|t| !t.is_finished());
                    if let Some(t) = start_stream(&ctx, h, hello, host) {
                        threads.push(t);
                    }
                }
            }
        }
    }
    ctx.stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    Ok(ExitCode::SUCCESS)
}

/// Waits up to 100 ms for a connection to accept or bytes from one in its handshake (or a
/// signal).
fn wait_readable(l: &TcpListener, pool: &[Handshake]) {
    let mut fds: Vec<libc::pollfd> = std::iter::once(l.as_raw_fd())
        .chain(pool.iter().map(|h| h.sock.as_raw_fd()))
        .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
        .collect();
    // SAFETY: `fds` is a live array of `fds.len()` pollfd values for the duration of the call.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 100) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
/// One line per event on stdout, whole lines from every thread.
#[derive(Clone)]
struct Log {
    json: bool,
    out: Arc<Mutex<()>>,
}

impl Log {
    fn line(&self, s: &str) {
        let _g = lock(&self.out);
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

/// What one peer may cost (the options of the same names).
struct Limits {
    hello: Duration,
    handshakes: usize,
    handshakes_per_ip: usize,
    streams: usize,
    streams_per_host: usize,
    streams_per_ip: usize,
    idle: Duration,
    min_rate: u64,
    max_extent: u64,
    quota: u64,
    max_stream_bytes: u64,
}

struct Ctx {
    dir: PathBuf,
    log: Log,
    stop: AtomicBool,
    lim: Limits,
    /// `--key`: the master key host keys are derived from.
    master: Option<Key>,
    /// Serializes choosing file names (O_EXCL does the rest).
    names: Mutex<()>,
    slots: Mutex<Slots>,
    /// Bytes stored per host (without --key: per IP address) while this collector runs.
    used: Mutex<HashMap<String, u64>>,
    /// With `--key`: the seal serials collected.
    serials: Option<Mutex<Serials>>,
}

/// Streams, counted.
#[derive(Default)]
struct Slots {
    streams: usize,
    per_host: HashMap<String, usize>,
    per_ip: HashMap<IpAddr, usize>,
}

impl Ctx {
    /// Enters a new connection in the handshake pool, dropping the oldest of its IP address
    /// (or the oldest of the address with most) when the pool is full.
    fn admit(&self, pool: &mut Vec<Handshake>, sock: TcpStream, peer: SocketAddr) {
        if let Err(e) = sock.set_nonblocking(true) {
            self.log.drop(peer, &format!("cannot take the connection: {e}"));
            return;
        }
        let _ = sock.set_nodelay(true);
        let ip = peer.ip();
        let mine = pool.iter().filter(|h| h.peer.ip() == ip).count();
        // (The pool is kept oldest first: `swap_remove` is not used on it from here.)
        let victim = if mine >= self.lim.handshakes_per_ip {
            pool.iter().enumerate().filter(|(_, h)| h.peer.ip() == ip).min_by_key(|(_, h)| h.since)
        } else if pool.len() >= self.lim.handshakes {
            let mut count: HashMap<IpAddr, usize> = HashMap::new();
            for h in pool.iter() {
                *count.entry(h.peer.ip()).or_default() += 1;
            }
            let most = count.iter().max_by_key(|(_, n)| **n).map(|(ip, _)| *ip);
            pool.iter()
                .enumerate()
                .filter(|(_, h)| Some(h.peer.ip()) == most)
                .min_by_key(|(_, h)| h.since)
        } else {
            None
        }
        .map(|(i, _)| i);
        if let Some(i) = victim {
            let mut h = pool.swap_remove(i);
            let why = format!(
                "no {} yet, dropped to make room for a newer connection (--max-handshakes \
                 {}, --max-handshakes-per-ip {})",
                h.what(),
                self.lim.handshakes,
                self.lim.handshakes_per_ip
            );
            tell(&mut h.sock, &format!("no {why}"));
            self.log.drop(h.peer, &why);
        }
        let now = Instant::now();
        pool.push(Handshake {
            sock,
            peer,
            since: now,
            deadline: now + self.lim.hello,
            buf: Vec::new(),
            challenged: None,
        });
    }

    /// A stream slot for `host` from `ip`, or why not.
    fn take_stream(
        self: &Arc<Self>,
        host: &str,
        ip: IpAddr,
    ) -> std::result::Result<StreamSlot, String> {
        let mut s = lock(&self.slots);
        let l = &self.lim;
        if s.streams >= l.streams {
            return Err(format!("busy: {} streams at once (--max-streams)", s.streams));
        }
        let h = s.per_host.get(host).copied().unwrap_or(0);
        if h >= l.streams_per_host {
            return Err(format!(
                "busy: {h} streams of host {host} at once (--max-streams-per-host)"
            ));
        }
        let i = s.per_ip.get(&ip).copied().unwrap_or(0);
        if i >= l.streams_per_ip {
            return Err(format!("busy: {i} streams from {ip} at once (--max-streams-per-ip)"));
        }
        s.streams += 1;
        *s.per_host.entry(host.to_string()).or_default() += 1;
        *s.per_ip.entry(ip).or_default() += 1;
        Ok(StreamSlot { ctx: Arc::clone(self), host: host.to_string(), ip })
    }

    /// Charges `n` more bytes to `host`'s quota.
    fn charge(&self, host: &str, n: u64) -> std::result::Result<(), String> {
        let mut u = lock(&self.used);
        let used = u.entry(host.to_string()).or_default();
        if *used + n > self.lim.quota {
            return Err(format!(
                "over the quota of {host}: {} bytes stored by it, at most {} (--quota)",
                *used, self.lim.quota
            ));
        }
        *used += n;
        Ok(())
    }

    /// Gives back `n` bytes charged and not kept (cut off a file, or a file removed).
    fn refund(&self, host: &str, n: u64) {
        if let Some(u) = lock(&self.used).get_mut(host) {
            *u = u.saturating_sub(n);
        }
    }
}

/// A stream slot, given back when dropped.
struct StreamSlot {
    ctx: Arc<Ctx>,
    host: String,
    ip: IpAddr,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut s = lock(&self.ctx.slots);
        s.streams -= 1;
        if let Some(n) = s.per_host.get_mut(&self.host) {
            *n -= 1;
            if *n == 0 {
                s.per_host.remove(&self.host);
            }
        }
        if let Some(n) = s.per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                s.per_ip.remove(&self.ip);
            }
        }
    }
}

/// The seal serial numbers of the traces collected, and the journal that keeps them across
/// runs (`DIR/.collected-serials`, mode 0600: one line `SERIAL HOST FILE` per trace).
struct Serials {
    seen: HashMap<String, (String, String)>,
    journal: File,
    path: PathBuf,
}

impl Serials {
    fn open(path: &Path) -> Result<Serials> {
        let mut seen = HashMap::new();
        match std::fs::read_to_string(path) {
            Ok(text) => {
                for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                    let mut w = l.split(' ');
                    match (w.next(), w.next(), w.next(), w.next()) {
                        (Some(s), Some(h), Some(f), None) if s.len() == 32 => {
                            seen.insert(s.to_string(), (h.to_string(), f.to_string()));
                        }
                        _ => anyhow::bail!(
                            "{} line {}: not `SERIAL HOST FILE` (the journal of the traces \
                             collected is damaged)",
                            path.display(),
                            i + 1
                        ),
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
        let journal = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Serials { seen, journal, path: path.to_path_buf() })
    }

    /// Records that the trace with seal serial `serial` is being collected from `host` into
    /// `file`, or says where it was collected before.
    fn claim(&mut self, serial: &str, host: &str, file: &str) -> std::result::Result<(), String> {
        if let Some((h, f)) = self.seen.get(serial) {
            return Err(format!(
                "this trace (seal serial {serial}) was collected before, from {h} as {f}: a \
                 second upload is refused"
            ));
        }
        let line = format!("{serial} {host} {file}\n");
        self.journal
            .write_all(line.as_bytes())
            .and_then(|()| self.journal.sync_data())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        self.seen.insert(serial.to_string(), (host.to_string(), file.to_string()));
        Ok(())
    }
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
/// The hello: `reanimator-stream 2 {"host":..,"pid":..,"start_ns":..,"label":..[,"nonce":..]}`.
struct Hello {
    host: String,
    pid: u64,
    start_ns: i64,
    label: String,
    /// The sender's nonce: it authenticates.
    nonce: Option<[u8; 32]>,
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
    let nonce = match &j["nonce"] {
        serde_json::Value::Null => None,
        n => Some(
            n.as_str()
                .and_then(ra_hex::decode_array)
                .ok_or("bad hello: the nonce is not 64 hex digits")?,
        ),
    };
    Ok(Hello {
        host: j["host"].as_str().unwrap_or("").to_string(),
        pid: j["pid"].as_u64().unwrap_or(0),
        start_ns: j["start_ns"].as_i64().unwrap_or(0),
        label: j["label"].as_str().unwrap_or("").to_string(),
        nonce,
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

/// Creates the stream's file, named after the hello (its host: the authenticated one),
/// unique (O_EXCL).
fn create_file(ctx: &Ctx, h: &Hello) -> std::io::Result<(File, String)> {
    let _g = lock(&ctx.names);
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

/// A connection in its hello and authentication (docs/NETWORK.md), served by the accept
/// loop: at most [`LINE_MAX`] bytes buffered.
struct Handshake {
    sock: TcpStream,
    peer: SocketAddr,
    since: Instant,
    /// `--hello-timeout` after it was accepted, whatever it sends.
    deadline: Instant,
    buf: Vec<u8>,
    /// With `--key`, after the challenge: the hello, its line, the host key and the nonce.
    challenged: Option<(Hello, String, Key, [u8; 32])>,
}

/// Where a handshake is.
enum Step {
    /// More bytes are needed.
    Wait,
    /// Refused: why.
    Fail(String),
    /// Done: the hello and the host the stream is charged to (the authenticated host name;
    /// without a key, the peer's IP address). Bytes that came after the last line (a sender
    /// that did not wait for `ok`) are the stream's, in [`Handshake::buf`].
    Done(Hello, String),
}

impl Handshake {
    /// What the connection is expected to send next.
    fn what(&self) -> &'static str {
        if self.challenged.is_some() {
            "authentication"
        } else {
            "hello"
        }
    }

    /// Takes the bytes that have arrived and answers the lines among them.
    fn step(&mut self, ctx: &Ctx) -> Step {
        let mut b = [0u8; 1024];
        loop {
            if let Some(i) = self.buf.iter().position(|&c| c == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).take(i).collect();
                let Ok(line) = String::from_utf8(line) else {
                    return Step::Fail(format!("the {} is not UTF-8", self.what()));
                };
                match self.line(ctx, line) {
                    Ok(None) => continue,
                    Ok(Some(done)) => return done,
                    Err(why) => return Step::Fail(why),
                }
            }
            if self.buf.len() > LINE_MAX {
                return Step::Fail(format!("no {} in the first {LINE_MAX} bytes", self.what()));
            }
            let m = self.buf.len().min(HELLO_MAGIC.len());
            if self.challenged.is_none() && self.buf[..m] != HELLO_MAGIC.as_bytes()[..m] {
                return Step::Fail("not a reanimator stream (wrong hello)".into());
            }
            match self.sock.read(&mut b) {
                Ok(0) => return Step::Fail(format!("closed before its {}", self.what())),
                Ok(n) => self.buf.extend_from_slice(&b[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Step::Wait,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Step::Fail(format!("reading the {}: {e}", self.what())),
            }
        }
    }

    /// One whole line: the hello (answered with the challenge, or done without a key), or
    /// the authentication.
    fn line(&mut self, ctx: &Ctx, line: String) -> std::result::Result<Option<Step>, String> {
        if let Some((hello, hello_line, key, nc)) = self.challenged.take() {
            let proof = line
                .strip_prefix("auth ")
                .and_then(ra_hex::decode_array)
                .ok_or("not an authentication (`auth PROOF`)")?;
            if !auth::equal(&auth::sender_proof(&key, &hello_line, &nc), &proof) {
                return Err(format!(
                    "authentication as {} failed: the sender does not hold that host's key",
                    hello.host
                ));
            }
            let host = hello.host.clone();
            return Ok(Some(Step::Done(hello, host)));
        }
        let hello = parse_hello(&line)?;
        let Some(master) = &ctx.master else {
            if hello.nonce.is_some() {
                return Err("this collector runs without --key and cannot authenticate \
                            itself: send without --key, or give the collector its master key"
                    .into());
            }
            return Ok(Some(Step::Done(hello, self.peer.ip().to_string())));
        };
        if hello.nonce.is_none() {
            return Err("this collector authenticates its senders: give the sender --key \
                        HOSTKEY (`reanimator keygen --host NAME --from MASTER HOSTKEY` on the \
                        collecting host)"
                .into());
        }
        check_host_name(&hello.host).map_err(|e| e.to_string())?;
        let key = master.for_host(&hello.host).map_err(|e| e.to_string())?;
        let nc = auth::nonce().map_err(|e| format!("no random nonce: {e}"))?;
        let challenge = format!(
            "challenge {} {}\n",
            ra_hex::encode(&nc),
            ra_hex::encode(&auth::collector_proof(&key, &line, &nc))
        );
        // A fresh connection's send buffer takes one line without waiting.
        match self.sock.write(challenge.as_bytes()) {
            Ok(n) if n == challenge.len() => {}
            Ok(_) => return Err("cannot send the challenge: the peer is not reading".into()),
            Err(e) => return Err(format!("cannot send the challenge: {e}")),
        }
        self.challenged = Some((hello, line, key, nc));
        Ok(None)
    }
}

/// Best effort, and quickly: a last line to a peer that may not be reading.
fn tell(conn: &mut TcpStream, line: &str) {
    let _ = conn.set_write_timeout(Some(Duration::from_millis(500)));
    let _ = conn.write_all(format!("{line}\n").as_bytes());
}

/// A stream slot and a thread for an authenticated connection, or a line saying why not.
fn start_stream(
    ctx: &Arc<Ctx>,
    mut h: Handshake,
    hello: Hello,
    host: String,
) -> Option<std::thread::JoinHandle<()>> {
    let slot = match ctx.take_stream(&host, h.peer.ip()) {
        Ok(s) => s,
        Err(why) => {
            tell(&mut h.sock, &format!("no {why}"));
            ctx.log.drop(h.peer, &why);
            return None;
        }
    };
    let (c, peer) = (Arc::clone(ctx), h.peer);
    let t = std::thread::Builder::new().name("collect".into()).spawn(move || {
        serve(&c, h.sock, h.peer, &hello, &h.buf, slot);
    });
    match t {
        Ok(t) => Some(t),
        Err(e) => {
            ctx.log.drop(peer, &format!("cannot start a thread: {e}"));
            None
        }
    }
}

/// Receives one authenticated stream (its slot given back at the end).
fn serve(
    ctx: &Ctx,
    mut conn: TcpStream,
    peer: SocketAddr,
    hello: &Hello,
    early: &[u8],
    slot: StreamSlot,
) {
    if conn.set_nonblocking(false).is_err()
        || conn.set_read_timeout(Some(Duration::from_millis(200))).is_err()
        || conn.set_write_timeout(Some(Duration::from_secs(10))).is_err()
    {
        return;
    }
    let host = slot.host.clone();
    let (file, name) = match create_file(ctx, hello) {
        Ok(x) => x,
        Err(e) => {
            tell(&mut conn, "no the collector cannot create a file");
            ctx.log.drop(peer, &format!("cannot create a file in {}: {e}", ctx.dir.display()));
            return;
        }
    };
    let authenticated = ctx.master.is_some();
    if ctx.log.json {
        ctx.log.line(
            &json!({"event": "start", "file": name, "peer": peer.to_string(), "host": hello.host,
                    "pid": hello.pid, "label": hello.label, "authenticated": authenticated})
            .to_string(),
        );
    } else {
        ctx.log.line(&format!(
            "start {name} from {peer} (host {}{}, pid {}, {})",
            safe(&hello.host, 64),
            if authenticated { ", authenticated" } else { ", not authenticated" },
            hello.pid,
            safe(&hello.label, 64)
        ));
    }
    let path = ctx.dir.join(&name);
    let seal_key = ctx.master.as_ref().and_then(|m| m.for_host(&host).ok()).map(|k| {
        // The host key's MAC key only: its secret never leaves this process.
        k.derive(ra_trace::key::Purpose::Seal)
    });
    let mut s = Stream::new(file, name.clone(), host, ctx.lim.max_extent, seal_key);
    let (status, reason) = match conn.write_all(format!("ok {name}\n").as_bytes()) {
        Ok(()) => s.receive(ctx, &mut conn, early),
        Err(e) => (Status::Cut, format!("cannot answer the hello: {e}")),
    };
    let (status, reason) = s.close(ctx, status, reason, &path);
    match status {
        Status::Ok => tell(&mut conn, &format!("done {}", s.framer.boundary())),
        Status::Refused => tell(&mut conn, &format!("refused {reason}")),
        Status::Cut => tell(&mut conn, &format!("cut {reason}")),
    }
    let _ = conn.shutdown(std::net::Shutdown::Both);
    drop(slot);
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
    name: String,
    /// Whom its bytes are charged to.
    host: String,
    framer: Framer,
    /// Bytes written to the file (charged).
    written: u64,
    /// Bytes of an unfinished part when the stream ended (cut off the file).
    dropped: u64,
    /// Acknowledged so far.
    acked: u64,
    last_ack: Instant,
    /// Acknowledging failed (the sender is gone or not reading): the rest is read, not acked.
    ack_broken: bool,
    ack_error: String,
    /// The last part boundary seen, and when it was reached.
    boundary: u64,
    at_boundary: Instant,
    /// Inside a part: when the rate window began and the stream offset then.
    window: Option<(Instant, u64)>,
    /// `--key`: the seal verifier and the extent being received for it.
    seal: Option<Seal>,
}

struct Seal {
    verifier: Option<StreamVerifier>,
    /// The extent being received: held whole (type library, seal extents) or hashed.
    cur: Option<Gather>,
    /// Extents since the last seal extent.
    unsealed: u64,
    /// The stream's serial has been claimed.
    claimed: bool,
}

enum Gather {
    Whole(Vec<u8>),
    Hashed(Box<blake3::Hasher>),
}

impl Seal {
    /// Every piece of the stream, in order: an extent's bytes are hashed as they arrive (the
    /// type library and seal extents, bounded, are held whole); `claim` takes the stream's
    /// seal serial once its first seal extent verified.
    fn piece(
        &mut self,
        p: &Piece<'_>,
        claim: &mut dyn FnMut(&str) -> std::result::Result<(), String>,
    ) -> std::result::Result<(), String> {
        let Some(v) = self.verifier.as_mut() else { return Ok(()) };
        match p {
            Piece::Data { part, bytes } if part.kind == PartKind::Extent => {
                let cur = match self.cur.as_mut() {
                    Some(c) => c,
                    // The extent's first piece: its header (at least the 28-byte prefix).
                    None => self.cur.insert(Self::begin(part, bytes)?),
                };
                match cur {
                    Gather::Whole(b) => b.extend_from_slice(bytes),
                    Gather::Hashed(h) => {
                        h.update(bytes);
                    }
                }
            }
            Piece::End { part } if part.kind == PartKind::Extent => {
                let r = match self.cur.take() {
                    Some(Gather::Whole(b)) => v.extent(part.offset, &b),
                    Some(Gather::Hashed(h)) => v.extent_digest(
                        part.offset,
                        &part.type_name,
                        part.len,
                        h.finalize().as_bytes(),
                    ),
                    None => v.extent(part.offset, &[]),
                };
                r.map_err(|e| format!("the seal does not verify: {e}"))?;
                if part.type_name == SEAL_TYPE_NAME {
                    self.unsealed = 0;
                    if !self.claimed {
                        self.claimed = true;
                        claim(&v.summary().serial)?;
                    }
                } else {
                    self.unsealed += 1;
                    if self.unsealed > MAX_UNSEALED {
                        return Err(format!(
                            "the seal does not verify: {MAX_UNSEALED} extents without a seal \
                             extent (a sealing writer puts one every 64)"
                        ));
                    }
                }
            }
            Piece::End { part } if part.kind == PartKind::Trailer => {
                let v = self.verifier.take().expect("a verifier");
                v.finish().map_err(|e| format!("the seal does not verify: {e}"))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// How an extent is gathered, from its header: hashed, or (type library, seal extent)
    /// held whole if small enough, whatever its header declares.
    fn begin(part: &dataseries::stream::Part, head: &[u8]) -> std::result::Result<Gather, String> {
        if part.type_name != XMLTYPE && part.type_name != SEAL_TYPE_NAME {
            return Ok(Gather::Hashed(Box::default()));
        }
        let word = |at: usize| {
            head.get(at..at + 4).map_or(0, |w| i32::from_le_bytes(w.try_into().unwrap_or([0; 4])))
        };
        // The prefix's record count and variable size (little-endian: sealed files are).
        let decoded = (word(8).max(0) as u64) * 64 + word(12).max(0) as u64;
        if part.len > WHOLE_MAX || decoded > WHOLE_DECODED_MAX {
            return Err(format!(
                "a `{}` extent of {} bytes ({decoded} decoded): the collector checks type \
                 libraries and seal extents of at most {WHOLE_MAX} bytes ({WHOLE_DECODED_MAX} \
                 decoded)",
                part.type_name, part.len
            ));
        }
        Ok(Gather::Whole(Vec::with_capacity(part.len as usize)))
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
    /// The seal does not verify, or the trace was collected before: refused.
    Seal(String),
    /// A quota: cut.
    Limit(String),
}

/// Acknowledge at least this often while extents arrive...
const ACK_EVERY: Duration = Duration::from_millis(100);
/// ... or once this many bytes are unacknowledged.
const ACK_BYTES: u64 = 4 << 20;

impl Stream {
    fn new(
        file: File,
        name: String,
        host: String,
        max_extent: u64,
        seal_key: Option<[u8; 32]>,
    ) -> Stream {
        Stream {
            file,
            name,
            host,
            seal: seal_key.map(|k| Seal {
                verifier: Some(StreamVerifier::new(k)),
                cur: None,
                unsealed: 0,
                claimed: false,
            }),
            framer: Framer::new().max_extent(max_extent),
            written: 0,
            dropped: 0,
            acked: 0,
            last_ack: Instant::now(),
            ack_broken: false,
            ack_error: String::new(),
            boundary: 0,
            at_boundary: Instant::now(),
            window: None,
        }
    }

    /// Reads the stream to its end; the status and reason when it ends otherwise than
    /// complete.
    fn receive(&mut self, ctx: &Ctx, conn: &mut TcpStream, early: &[u8]) -> (Status, String) {
        if let Err(r) = self.feed(ctx, early) {
            return r;
        }
        let mut buf = vec![0u8; 256 << 10];
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
                    if let Err(r) = self.feed(ctx, &buf[..n]) {
                        return r;
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return (Status::Cut, format!("connection lost: {e}")),
            }
            if let Some(why) = self.pace(ctx) {
                return (Status::Cut, why);
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

    /// Frames, checks, charges and writes the next bytes of the stream.
    fn feed(&mut self, ctx: &Ctx, b: &[u8]) -> std::result::Result<(), (Status, String)> {
        let (file, seal, written) = (&mut self.file, &mut self.seal, &mut self.written);
        let (host, name) = (self.host.as_str(), self.name.as_str());
        let max_stream = ctx.lim.max_stream_bytes;
        let mut claim = |serial: &str| match &ctx.serials {
            Some(s) => lock(s).claim(serial, host, name),
            None => Ok(()),
        };
        let r = self.framer.feed(b, |p| -> std::result::Result<(), Sink> {
            if let Some(s) = seal.as_mut() {
                s.piece(&p, &mut claim).map_err(Sink::Seal)?;
            }
            match p {
                Piece::Data { bytes, .. } => {
                    let n = bytes.len() as u64;
                    if *written + n > max_stream {
                        return Err(Sink::Limit(format!(
                            "the stream passed {max_stream} bytes (--max-stream-bytes)"
                        )));
                    }
                    ctx.charge(host, n).map_err(Sink::Limit)?;
                    *written += n;
                    file.write_all(bytes).map_err(Sink::Io)
                }
                Piece::End { .. } => Ok(()),
            }
        });
        match r {
            Ok(()) => Ok(()),
            Err(FeedError::Frame(e)) => {
                Err((Status::Refused, format!("not a valid trace stream: {e}")))
            }
            Err(FeedError::Sink(Sink::Seal(why))) => Err((Status::Refused, why)),
            Err(FeedError::Sink(Sink::Limit(why))) => Err((Status::Cut, why)),
            Err(FeedError::Sink(Sink::Io(e))) => {
                Err((Status::Cut, format!("cannot write the file: {e}")))
            }
        }
    }

    /// Between parts a stream may be silent for `--idle-timeout`; inside one it must keep
    /// `--min-rate` over [`RATE_WINDOW`] (a byte now and then keeps nothing alive). Why the
    /// stream is cut, if it is.
    fn pace(&mut self, ctx: &Ctx) -> Option<String> {
        let now = Instant::now();
        if self.framer.boundary() != self.boundary {
            self.boundary = self.framer.boundary();
            self.at_boundary = now;
        }
        if self.framer.partial() == 0 {
            self.window = None;
            if now.duration_since(self.at_boundary) > ctx.lim.idle {
                return Some(format!(
                    "no extent for {} s (--idle-timeout)",
                    ctx.lim.idle.as_secs()
                ));
            }
            return None;
        }
        let pos = self.framer.offset();
        match self.window {
            None => self.window = Some((now, pos)),
            Some((t, p)) if now.duration_since(t) >= RATE_WINDOW => {
                let need = ctx.lim.min_rate.saturating_mul(RATE_WINDOW.as_secs());
                if pos - p < need {
                    return Some(format!(
                        "{} bytes in {} s inside an extent, under --min-rate {} bytes/s",
                        pos - p,
                        RATE_WINDOW.as_secs(),
                        ctx.lim.min_rate
                    ));
                }
                self.window = Some((now, pos));
            }
            Some(_) => {}
        }
        None
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
    /// not even its type library arrived whole); what is not kept is given back to the
    /// host's quota.
    fn close(
        &mut self,
        ctx: &Ctx,
        status: Status,
        mut reason: String,
        path: &Path,
    ) -> (Status, String) {
        if status == Status::Cut {
            if let Some(s) = self.seal.as_mut() {
                reason.push_str(&s.cut_note());
            }
        }
        let b = self.framer.boundary();
        self.dropped = self.framer.offset() - b;
        if status != Status::Ok {
            ctx.refund(&self.host, self.written.saturating_sub(b));
            if let Err(e) = self.file.set_len(b) {
                return (Status::Cut, format!("{reason}; and cannot cut the file: {e}"));
            }
        }
        let _ = self.file.sync_all();
        if status != Status::Ok && self.framer.extents() == 0 {
            // Not even the type library: nothing readable to keep.
            ctx.refund(&self.host, b.min(self.written));
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
        let h = parse_hello(r#"reanimator-stream 2 {"host":"h","pid":3,"start_ns":5,"label":"l"}"#)
            .unwrap();
        assert_eq!((h.host.as_str(), h.pid, h.start_ns, h.label.as_str()), ("h", 3, 5, "l"));
        assert_eq!(h.nonce, None);
        let line = ra_trace::net::hello_line("web1", 7, 9, "make", Some(&[0xab; 32]));
        let h = parse_hello(&line).unwrap();
        assert_eq!((h.host.as_str(), h.nonce), ("web1", Some([0xab; 32])));
        assert!(parse_hello("GET / HTTP/1.1").unwrap_err().contains("wrong hello"));
        assert!(parse_hello("reanimator-stream 1 {}").unwrap_err().contains("version"));
        assert!(parse_hello("reanimator-stream 2 {").unwrap_err().contains("bad hello"));
        assert!(parse_hello(r#"reanimator-stream 2 {"nonce":"00"}"#)
            .unwrap_err()
            .contains("nonce"));
    }
}
