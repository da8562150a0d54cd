//! Where a trace goes: a file, or a collector over TCP (`-o tcp://HOST:PORT`), for every
//! producer of the toolkit (`record` with either backend, `fs`): [`TraceOutput`] is the one
//! `Write` the trace writer writes through.
//!
//! The network side ([`NetOutput`]) speaks the stream protocol of docs/NETWORK.md: a hello
//! line, with a host key ([`TcpTarget::auth`]) the challenge-response of [`auth`] (each side
//! proves it holds the host's key, over fresh nonces of both), then the DSv1 bytes exactly as
//! they would be written to a file; the collector answers with the cumulative offsets of
//! whole extents it has written (`ack N`). Bytes not yet acknowledged stay in a buffer
//! bounded in bytes (`--net-buffer`, 64 MiB by default, or one extent if that is larger); the
//! writer waits beyond it (backpressure). When the connection breaks, the collector dies or
//! stops acknowledging for [`STALL`], the output fails — or, with a spill file, writes there
//! a DataSeries file holding everything the collector did not acknowledge and goes on
//! locally: the collector's file and the spill together hold every extent (see
//! docs/NETWORK.md, "Spill files").

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dataseries::stream::{file_tail, Framer, PartKind, Piece};
use dataseries::{ExtentBuilder, Value};

use crate::direct::TraceFile;
use crate::key::Key;

/// First word of the hello line.
pub const HELLO_MAGIC: &str = "reanimator-stream";
/// Protocol version in the hello line (2: the challenge-response of [`auth`]).
pub const PROTOCOL_VERSION: u32 = 2;
/// The sender gives up when the collector does not answer a line of the hello and
/// authentication within this long.
pub const HANDSHAKE_WAIT: Duration = Duration::from_secs(10);
/// Longest hello line (and longest line of the collector's answers).
pub const LINE_MAX: usize = 4096;
/// Default bound of the bytes sent and not yet acknowledged.
pub const DEFAULT_BUFFER: usize = 64 << 20;
/// The output fails when the collector acknowledges nothing for this long while bytes wait
/// (or does not answer the hello, or does not confirm a finished stream).
pub const STALL: Duration = Duration::from_secs(30);
/// Trace info keys of a spill file.
pub const SPILL_OFFSET_KEY: &str = "spill_stream_offset";

/// A network destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpTarget {
    /// `HOST:PORT`.
    pub addr: String,
    /// Names the stream at the collector (the collector's file name includes it): the part
    /// after `HOST:PORT/`, or the producer's default.
    pub label: Option<String>,
    /// Where to go on when the collector fails.
    pub spill: Option<PathBuf>,
    /// Bytes not yet acknowledged, at most.
    pub buffer_bytes: usize,
    /// The host key the sender authenticates with (and the collector must prove it can
    /// derive); `None`: an unauthenticated stream, which only a collector without a key takes.
    pub auth: Option<Key>,
}

/// Where a trace is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// A trace file, created or replaced ([`TraceFile::create`]).
    File(PathBuf),
    /// A collector (`tcp://HOST:PORT[/LABEL]`, docs/NETWORK.md).
    Tcp(TcpTarget),
    /// `-o -`: the process's standard output (a pipe to `reanimator dump -`, say), written
    /// strictly in order; see [`take_stdout`].
    Stdout,
}

impl Destination {
    /// `-` (standard output), `tcp://HOST:PORT[/LABEL]`, or else a file path.
    pub fn parse(s: &OsStr) -> Result<Destination, String> {
        if s == "-" {
            return Ok(Destination::Stdout);
        }
        let Some(t) = s.to_str().and_then(|t| t.strip_prefix("tcp://")) else {
            return Ok(Destination::File(PathBuf::from(s)));
        };
        let (addr, label) = match t.split_once('/') {
            Some((a, l)) if !l.is_empty() => (a, Some(l.to_string())),
            Some((a, _)) => (a, None),
            None => (t, None),
        };
        let port_ok = addr
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
        if !port_ok {
            return Err(format!("`{}`: expected tcp://HOST:PORT", s.to_string_lossy()));
        }
        Ok(Destination::Tcp(TcpTarget {
            addr: addr.to_string(),
            label,
            spill: None,
            buffer_bytes: DEFAULT_BUFFER,
            auth: None,
        }))
    }

    /// Whether this is a network destination.
    pub fn is_net(&self) -> bool {
        matches!(self, Destination::Tcp(_))
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Destination::File(p) => write!(f, "{}", p.display()),
            Destination::Tcp(t) => write!(f, "tcp://{}", t.addr),
            Destination::Stdout => write!(f, "standard output"),
        }
    }
}

/// The output a trace writer writes to.
pub enum TraceOutput {
    /// A local trace file, written direct where the file system allows it.
    File(TraceFile),
    /// The network sender: bytes buffered until the collector acknowledges them, spilled
    /// to a file when it fails.
    Net(Box<NetOutput>),
    /// Standard output as [`take_stdout`] kept it.
    Stdout(File),
}

impl TraceOutput {
    /// Create the file, or connect to the collector (`label`: the stream's name when the
    /// destination does not give one).
    pub fn open(d: &Destination, label: &str) -> io::Result<TraceOutput> {
        match d {
            Destination::File(p) => TraceFile::create(p).map(TraceOutput::File),
            Destination::Tcp(t) => NetOutput::connect(t, label).map(|n| TraceOutput::Net(n.into())),
            Destination::Stdout => take_stdout().map(TraceOutput::Stdout),
        }
    }

    /// The network side's state, for a summary after the run.
    pub fn net_status(&self) -> Option<NetStatus> {
        match self {
            TraceOutput::File(_) | TraceOutput::Stdout(_) => None,
            TraceOutput::Net(n) => Some(n.status()),
        }
    }
}

impl Write for TraceOutput {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            TraceOutput::File(f) => f.write(b),
            TraceOutput::Net(n) => n.write(b),
            TraceOutput::Stdout(f) => f.write(b),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            TraceOutput::File(f) => f.flush(),
            TraceOutput::Net(n) => n.flush(),
            TraceOutput::Stdout(f) => f.flush(),
        }
    }
}

/// Take standard output for the trace: the trace keeps the descriptor (duplicated, close-on-
/// exec, so a traced command does not inherit it), and descriptor 1 becomes a copy of
/// standard error, so that nothing else the process or a command it starts prints lands in
/// the trace's stream (`record -o - -- make`: make's output goes to the terminal).
pub fn take_stdout() -> io::Result<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: F_DUPFD_CLOEXEC on descriptor 1 makes a new descriptor or fails; no memory is
    // touched.
    let fd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just made and is owned by nobody else.
    let file = unsafe { File::from_raw_fd(fd) };
    // SAFETY: dup2 replaces descriptor 1 with a copy of 2; both are the process's own.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// What happened to a network stream (a snapshot; see [`NetStatus::report`]).
#[derive(Clone, Debug, Default)]
pub struct NetReport {
    /// `HOST:PORT`.
    pub addr: String,
    /// The collector's name for the stream (its file in the collector's directory).
    pub remote_name: String,
    /// Bytes the trace writer wrote.
    pub written: u64,
    /// Bytes the collector acknowledged (its file holds them).
    pub acked: u64,
    /// The collector confirmed the whole stream.
    pub complete: bool,
    /// Why the stream failed.
    pub failure: Option<String>,
    /// The spill file and the stream offset it starts at (0: it holds the whole trace).
    pub spill: Option<(PathBuf, u64)>,
}

/// A handle on a network output's state, usable after the output was handed to a writer.
#[derive(Clone)]
pub struct NetStatus(Arc<Shared>);

impl NetStatus {
    /// The stream's state now (bytes written and acknowledged, failure, spill file).
    pub fn report(&self) -> NetReport {
        self.0.lock().report.clone()
    }
}

struct Shared {
    m: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.m.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct State {
    /// Stream bytes `[base, base + buf.len())`: sent or not, not acknowledged.
    buf: VecDeque<u8>,
    base: u64,
    /// Bytes handed to the socket.
    sent: u64,
    /// Everything is in `buf`: the sender half-closes once it has sent it.
    closing: bool,
    /// The output is being dropped: threads end.
    stop: bool,
    /// When the collector last acknowledged something (or the stream began).
    progress: Instant,
    report: NetReport,
}

/// The network output: see the module documentation.
pub struct NetOutput {
    target: TcpTarget,
    shared: Arc<Shared>,
    sock: TcpStream,
    threads: Vec<JoinHandle<()>>,
    /// Parts of everything written (finds the type library's end and the stream's end).
    framer: Framer,
    /// Stream bytes from 0 to the end of the XmlType extent.
    head: Vec<u8>,
    xml: Option<(u64, u32)>,
    written: u64,
    spill: Option<Spill>,
}

impl NetOutput {
    fn connect(t: &TcpTarget, default_label: &str) -> io::Result<NetOutput> {
        let label = t.label.clone().unwrap_or_else(|| default_label.to_string());
        let mut last = None;
        let mut sock = None;
        for a in t.addr.to_socket_addrs()? {
            match TcpStream::connect_timeout(&a, Duration::from_secs(5)) {
                Ok(s) => {
                    sock = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let Some(sock) = sock else {
            let e = last.unwrap_or_else(|| io::Error::other("no address"));
            return Err(io::Error::new(
                e.kind(),
                format!("cannot connect to the collector at {}: {e}", t.addr),
            ));
        };
        let _ = sock.set_nodelay(true);
        sock.set_write_timeout(Some(STALL))?;
        let refused =
            |what: String| io::Error::other(format!("the collector at {}: {what}", t.addr));
        let host = match &t.auth {
            Some(k) => k.host().map(str::to_string).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the key is not a host key (make one with `reanimator keygen --host NAME \
                     --from MASTER FILE` on the collecting host)",
                )
            })?,
            None => hostname(),
        };
        let nonce = match &t.auth {
            Some(_) => Some(auth::nonce()?),
            None => None,
        };
        let start_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        let hello = hello_line(&host, std::process::id(), start_ns, &label, nonce.as_ref());
        (&sock).write_all(format!("{hello}\n").as_bytes())?;
        sock.set_read_timeout(Some(HANDSHAKE_WAIT))?;
        let mut reader = BufReader::new(sock.try_clone()?);
        let answer = |r: &mut BufReader<TcpStream>, what: &str| {
            read_line(r).map_err(|e| {
                let e = if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) {
                    format!("nothing within {} s", HANDSHAKE_WAIT.as_secs())
                } else {
                    e.to_string()
                };
                refused(format!("no answer to the {what}: {e}"))
            })
        };
        let line = answer(&mut reader, "hello")?;
        let (word, rest) = line.split_once(' ').unwrap_or((&line, ""));
        let remote = match (word, &t.auth) {
            ("no", _) => return Err(refused(format!("refused the stream: {rest}"))),
            ("ok", None) => rest.to_string(),
            ("ok", Some(_)) => {
                return Err(refused(
                    "does not authenticate itself (it runs without a master key), so the trace \
                     is not sent to it; give the collector `--key MASTER`, or send without --key"
                        .into(),
                ))
            }
            ("challenge", None) => {
                return Err(refused(
                    "authenticates its senders: give `--key HOSTKEY` (made with `reanimator \
                     keygen --host NAME --from MASTER HOSTKEY` on the collecting host)"
                        .into(),
                ))
            }
            ("challenge", Some(k)) => {
                let bad = || refused(format!("sent a bad challenge {line:?}"));
                let (nc, proof) = rest.split_once(' ').ok_or_else(bad)?;
                let (nc, proof) = (
                    ra_hex::decode_array(nc).ok_or_else(bad)?,
                    ra_hex::decode_array(proof).ok_or_else(bad)?,
                );
                if !auth::equal(&auth::collector_proof(k, &hello, &nc), &proof) {
                    return Err(refused(format!(
                        "failed to authenticate itself: it does not hold the master key that \
                         the host key of {host} (key id {}) was derived from",
                        k.fingerprint()
                    )));
                }
                let p = auth::sender_proof(k, &hello, &nc);
                (&sock).write_all(format!("auth {}\n", ra_hex::encode(&p)).as_bytes())?;
                let line = answer(&mut reader, "authentication")?;
                match line.split_once(' ') {
                    Some(("ok", name)) => name.to_string(),
                    Some(("no", why)) => return Err(refused(format!("refused the stream: {why}"))),
                    _ => return Err(refused(format!("unexpected answer {line:?}"))),
                }
            }
            _ => return Err(refused(format!("unexpected answer {line:?}"))),
        };
        sock.set_read_timeout(None)?;
        let shared = Arc::new(Shared {
            m: Mutex::new(State {
                buf: VecDeque::new(),
                base: 0,
                sent: 0,
                closing: false,
                stop: false,
                progress: Instant::now(),
                report: NetReport {
                    addr: t.addr.clone(),
                    remote_name: remote,
                    ..NetReport::default()
                },
            }),
            cv: Condvar::new(),
        });
        let mut threads = Vec::new();
        let (sh, s) = (Arc::clone(&shared), sock.try_clone()?);
        threads.push(
            std::thread::Builder::new().name("net-send".into()).spawn(move || sender(&sh, s))?,
        );
        let sh = Arc::clone(&shared);
        threads.push(
            std::thread::Builder::new().name("net-ack".into()).spawn(move || acks(&sh, reader))?,
        );
        Ok(NetOutput {
            target: t.clone(),
            shared,
            sock,
            threads,
            framer: Framer::new(),
            head: Vec::new(),
            xml: None,
            written: 0,
            spill: None,
        })
    }

    /// A handle on this output's state.
    pub fn status(&self) -> NetStatus {
        NetStatus(Arc::clone(&self.shared))
    }

    /// Follows the parts of `b` (the next bytes of the stream): keeps the header and the type
    /// library for a spill file.
    fn track(&mut self, b: &[u8]) -> io::Result<()> {
        let (head, xml) = (&mut self.head, &mut self.xml);
        self.framer
            .feed(b, |p| -> Result<(), std::convert::Infallible> {
                match p {
                    Piece::Data { part, bytes } if xml.is_none() => {
                        debug_assert!(part.kind != PartKind::Trailer);
                        head.extend_from_slice(bytes);
                    }
                    Piece::End { part } if xml.is_none() && part.kind == PartKind::Extent => {
                        *xml = Some((part.end(), part.check));
                    }
                    _ => {}
                }
                Ok(())
            })
            .map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("trace stream: {e}"))
            })?;
        self.written += b.len() as u64;
        Ok(())
    }

    fn failure(&self) -> Option<String> {
        self.shared.lock().report.failure.clone()
    }

    /// The stream failed: go on in the spill file, or give the error.
    fn fail_over(&mut self) -> io::Result<()> {
        let why = self.failure().unwrap_or_else(|| "failed".into());
        let _ = self.sock.shutdown(Shutdown::Both);
        let (acked, pending) = {
            let mut s = self.shared.lock();
            s.stop = true;
            self.shared.cv.notify_all();
            let acked = s.base;
            (acked, s.buf.drain(..).collect::<Vec<u8>>())
        };
        let addr = &self.target.addr;
        let Some(path) = self.target.spill.clone() else {
            return Err(io::Error::other(format!(
                "the collector at {addr} {why}; it acknowledged {acked} bytes (its file holds \
                 them); no --spill file, so the rest is lost"
            )));
        };
        eprintln!(
            "reanimator: the collector at {addr} {why}; it acknowledged {acked} bytes; going on \
             in the spill file {} (nothing lost: `reanimator collect --join` puts the two \
             together)",
            path.display()
        );
        let file = ra_fsstate::private::create(&path).map_err(|e| {
            io::Error::new(e.kind(), format!("creating the spill file {}: {e}", path.display()))
        })?;
        let mut sp = Spill::new(BufWriter::with_capacity(1 << 20, file), path.clone());
        let start = match self.xml {
            Some((xml_end, xml_check)) if acked >= xml_end => {
                let remote = self.shared.lock().report.remote_name.clone();
                let info = spill_info(&[
                    // (The stream's own info extent, with the schema version, is at the
                    // collector: the spill read alone still says what it is.)
                    ("schema_version", crate::schema::SCHEMA_VERSION.as_bytes()),
                    (SPILL_OFFSET_KEY, acked.to_string().as_bytes()),
                    ("spill_reason", why.as_bytes()),
                    ("spill_collector", addr.as_bytes()),
                    ("spill_collector_file", remote.as_bytes()),
                ])?;
                sp.begin_rebased(&self.head, xml_check, &info, acked)?;
                acked
            }
            _ => {
                // The collector has less than the type library: the spill is the whole stream.
                let n = (acked as usize).min(self.head.len());
                sp.write_verbatim(&self.head[..n])?;
                0
            }
        };
        sp.write(&pending)?;
        self.shared.lock().report.spill = Some((path, start));
        self.spill = Some(sp);
        Ok(())
    }
}

impl Write for NetOutput {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if b.is_empty() {
            return Ok(0);
        }
        if let Some(sp) = self.spill.as_mut() {
            sp.write(b)?;
            self.track(b)?;
            self.shared.lock().report.written += b.len() as u64;
            return Ok(b.len());
        }
        let limit = self.target.buffer_bytes.max(1);
        let n = {
            let mut s = self.shared.lock();
            let waiting_since = Instant::now();
            loop {
                if s.report.failure.is_some() {
                    break 0;
                }
                let mut room = limit.saturating_sub(s.buf.len());
                if room == 0 && self.framer.boundary() <= s.base {
                    // The buffer holds nothing but the start of one extent, which the
                    // collector acknowledges only once it is whole: waiting would never end.
                    // The rest of it goes beyond the bound (its writer holds it anyway).
                    room = b.len();
                }
                if room > 0 {
                    let n = room.min(b.len());
                    s.buf.extend(&b[..n]);
                    s.report.written += n as u64;
                    self.shared.cv.notify_all();
                    break n;
                }
                // (An acknowledgement long ago, before an idle spell, is no stall.)
                if s.progress.elapsed() > STALL && waiting_since.elapsed() > STALL {
                    s.report.failure = Some(format!(
                        "acknowledged nothing for {} s (--net-buffer full)",
                        STALL.as_secs()
                    ));
                    break 0;
                }
                s = self
                    .shared
                    .cv
                    .wait_timeout(s, Duration::from_millis(100))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        };
        if n == 0 {
            self.fail_over()?;
            return self.write(b);
        }
        self.track(&b[..n])?;
        Ok(n)
    }

    /// Hands nothing more to the network than `write` did; once the trailer has been
    /// written, waits until the collector has confirmed the whole stream.
    fn flush(&mut self) -> io::Result<()> {
        if let Some(sp) = self.spill.as_mut() {
            return sp.flush();
        }
        if self.failure().is_some() {
            self.fail_over()?;
            return self.flush();
        }
        if !self.framer.complete() {
            return Ok(());
        }
        let mut s = self.shared.lock();
        s.closing = true;
        s.progress = Instant::now();
        self.shared.cv.notify_all();
        loop {
            // (Every byte acknowledged, trailer included, is complete too, should `done` be
            // lost: the collector acknowledges only what it has written and synced.)
            if s.report.complete || s.base == self.written {
                return Ok(());
            }
            if s.report.failure.is_some() {
                break;
            }
            if s.progress.elapsed() > STALL {
                s.report.failure = Some(format!(
                    "did not confirm the end of the stream within {} s",
                    STALL.as_secs()
                ));
                break;
            }
            s = self
                .shared
                .cv
                .wait_timeout(s, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        drop(s);
        self.fail_over()?;
        self.flush()
    }
}

impl Drop for NetOutput {
    fn drop(&mut self) {
        {
            let mut s = self.shared.lock();
            s.stop = true;
            self.shared.cv.notify_all();
        }
        let _ = self.sock.shutdown(Shutdown::Both);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The sending thread: hands the buffer's unsent bytes to the socket, half-closes it when the
/// stream is all sent.
fn sender(sh: &Shared, mut sock: TcpStream) {
    let mut chunk = Vec::with_capacity(256 << 10);
    loop {
        {
            let mut s = sh.lock();
            loop {
                if s.stop || s.report.failure.is_some() {
                    return;
                }
                let end = s.base + s.buf.len() as u64;
                if s.sent < end {
                    break;
                }
                if s.closing {
                    let _ = sock.shutdown(Shutdown::Write);
                    return;
                }
                s = sh
                    .cv
                    .wait_timeout(s, Duration::from_millis(200))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            let from = (s.sent - s.base) as usize;
            let n = (s.buf.len() - from).min(chunk.capacity());
            chunk.clear();
            let (a, b) = s.buf.as_slices();
            if from < a.len() {
                let k = n.min(a.len() - from);
                chunk.extend_from_slice(&a[from..from + k]);
                chunk.extend_from_slice(&b[..n - k]);
            } else {
                chunk.extend_from_slice(&b[from - a.len()..from - a.len() + n]);
            }
            // Counted as sent before the write: a quick collector can acknowledge these
            // bytes before write_all returns, and an acknowledgement beyond `sent` is refused
            // as out of range (a recording failed on loopback that way).
            s.sent += n as u64;
        }
        if let Err(e) = sock.write_all(&chunk) {
            // A collector that cuts or refuses a stream says why, then closes: its answer
            // may still be on its way to the acknowledgement thread, which reports it. Only
            // when none comes is the broken write the reason.
            let deadline = Instant::now() + Duration::from_secs(2);
            let mut s = sh.lock();
            while s.report.failure.is_none() && !s.stop && !s.report.complete {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                s = sh.cv.wait_timeout(s, left).unwrap_or_else(PoisonError::into_inner).0;
            }
            if s.report.failure.is_none() && !s.stop {
                s.report.failure = Some(format!("broke the connection ({e})"));
            }
            sh.cv.notify_all();
            return;
        }
        sh.cv.notify_all();
    }
}

/// The acknowledgement thread: `ack N` drops the first bytes from the buffer, `done N` ends
/// the stream, `refused WHY` fails it.
fn acks(sh: &Shared, mut r: BufReader<TcpStream>) {
    loop {
        let line = read_line(&mut r);
        let mut s = sh.lock();
        if s.stop {
            return;
        }
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                if s.report.failure.is_none() && !s.report.complete {
                    s.report.failure = Some(if e.kind() == io::ErrorKind::UnexpectedEof {
                        "closed the connection".to_string()
                    } else {
                        format!("broke the connection ({e})")
                    });
                }
                sh.cv.notify_all();
                return;
            }
        };
        let (word, rest) = line.split_once(' ').unwrap_or((&line, ""));
        let bad = |s: &mut State, what: &str| {
            s.report.failure = Some(format!("sent a bad answer ({what}: {line:?})"));
        };
        match word {
            "ack" | "done" => match rest.parse::<u64>() {
                Ok(n) if n >= s.base && n <= s.sent => {
                    let k = (n - s.base) as usize;
                    s.buf.drain(..k);
                    s.base = n;
                    s.report.acked = n;
                    s.progress = Instant::now();
                    if word == "done" {
                        s.report.complete = true;
                    }
                }
                _ => bad(&mut s, "offset out of range"),
            },
            "refused" => s.report.failure = Some(format!("refused the stream: {rest}")),
            "cut" => s.report.failure = Some(format!("cut the stream: {rest}")),
            _ => bad(&mut s, "unknown"),
        }
        let end = s.report.failure.is_some() || s.report.complete;
        sh.cv.notify_all();
        if end {
            return;
        }
    }
}

/// One line of at most [`LINE_MAX`] bytes, without its newline.
pub fn read_line(r: &mut impl BufRead) -> io::Result<String> {
    let mut v = Vec::new();
    r.take(LINE_MAX as u64 + 1).read_until(b'\n', &mut v)?;
    if v.last() != Some(&b'\n') {
        return Err(if v.len() > LINE_MAX {
            io::Error::new(io::ErrorKind::InvalidData, "line too long")
        } else {
            io::ErrorKind::UnexpectedEof.into()
        });
    }
    v.pop();
    String::from_utf8(v).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"))
}

/// The spill file: either the stream verbatim (it began before the collector had the type
/// library), or header + type library + a `Reanimator::TraceInfo` extent naming the stream
/// offset it continues from + the stream's extents from there, with an index and trailer of
/// its own.
struct Spill {
    out: BufWriter<File>,
    path: PathBuf,
    /// `Some` when rebased.
    rebase: Option<Rebase>,
}

struct Rebase {
    framer: Framer,
    /// Stream offset of the first extent taken from the stream, and its offset in the spill.
    from: u64,
    at: u64,
    /// The spill's extents so far, and their chained checksum.
    index: Vec<(u64, String)>,
    chained: u32,
    pos: u64,
    tail: Option<Vec<u8>>,
}

impl Spill {
    fn new(out: BufWriter<File>, path: PathBuf) -> Spill {
        Spill { out, path, rebase: None }
    }

    fn err(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("writing the spill file {}: {e}", self.path.display()))
    }

    fn write_verbatim(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b).map_err(|e| self.err(e))
    }

    fn begin_rebased(
        &mut self,
        head: &[u8],
        xml_check: u32,
        info: &(Vec<u8>, u32),
        from: u64,
    ) -> io::Result<()> {
        self.write_verbatim(head)?;
        self.write_verbatim(&info.0)?;
        let xml_at = dataseries::raw::file_header().len() as u64;
        let info_at = head.len() as u64;
        let mix = dataseries::raw::mix3;
        let chained = mix(info.1, mix(xml_check, 0, 1972), 1972);
        let at = info_at + info.0.len() as u64;
        self.rebase = Some(Rebase {
            framer: Framer::resume(from),
            from,
            at,
            index: vec![
                (xml_at, "DataSeries: XmlType".into()),
                (info_at, crate::schema::INFO_TYPE.into()),
            ],
            chained,
            pos: at,
            tail: None,
        });
        Ok(())
    }

    fn write(&mut self, b: &[u8]) -> io::Result<()> {
        let Some(rb) = self.rebase.as_mut() else { return self.write_verbatim(b) };
        let out = &mut self.out;
        let r = rb.framer.feed(b, |p| -> io::Result<()> {
            match p {
                Piece::Data { part, bytes }
                    if part.kind == PartKind::Extent
                        && part.type_name != "DataSeries: ExtentIndex" =>
                {
                    out.write_all(bytes)?;
                    rb.pos += bytes.len() as u64;
                }
                Piece::End { part }
                    if part.kind == PartKind::Extent
                        && part.type_name != "DataSeries: ExtentIndex" =>
                {
                    rb.index.push((part.offset - rb.from + rb.at, part.type_name.clone()));
                    rb.chained = dataseries::raw::mix3(part.check, rb.chained, 1972);
                }
                Piece::End { part } if part.kind == PartKind::Trailer => {
                    let t = file_tail(&rb.index, rb.chained, rb.pos).map_err(io::Error::other)?;
                    out.write_all(&t)?;
                    rb.tail = Some(t);
                }
                _ => {}
            }
            Ok(())
        });
        r.map_err(|e| match e {
            dataseries::stream::FeedError::Frame(f) => {
                io::Error::new(io::ErrorKind::InvalidData, f.to_string())
            }
            dataseries::stream::FeedError::Sink(e) => self.err(e),
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush().map_err(|e| self.err(e))?;
        self.out.get_ref().sync_data().map_err(|e| self.err(e))
    }
}

/// A `Reanimator::TraceInfo` extent holding `facts`: its bytes and check value.
fn spill_info(facts: &[(&str, &[u8])]) -> io::Result<(Vec<u8>, u32)> {
    let ty = crate::schema::Schema::ours().info_type().clone();
    let mut b = ExtentBuilder::new(ty);
    for (k, v) in facts {
        b.start_record();
        b.set(0, Value::Bytes(k.as_bytes())).map_err(io::Error::other)?;
        b.set(1, Value::Bytes(v)).map_err(io::Error::other)?;
    }
    let o = dataseries::raw::EncodeOptions {
        fixed_modes: &[],
        var_modes: &[],
        level: 6,
        big_endian: false,
    };
    dataseries::raw::encode_extent_with(&b, &o).map_err(io::Error::other)
}

/// The hello line (without its newline): `reanimator-stream 2 {"host":..,"pid":..,
/// "start_ns":..,"label":..}`, with `"nonce"` (64 hex digits) when the sender authenticates.
pub fn hello_line(
    host: &str,
    pid: u32,
    start_ns: i64,
    label: &str,
    nonce: Option<&[u8; 32]>,
) -> String {
    let nonce = nonce.map(|n| format!(",\"nonce\":\"{}\"", ra_hex::encode(n))).unwrap_or_default();
    format!(
        "{HELLO_MAGIC} {PROTOCOL_VERSION} {{\"host\":{},\"pid\":{pid},\"start_ns\":{start_ns},\"label\":{}{nonce}}}",
        json_str(host),
        json_str(label)
    )
}

/// The challenge-response with which a sender and a collector prove to each other that they
/// hold the host's key (docs/NETWORK.md, "Authentication"). With `A` the host key's
/// [`Purpose::NetAuth`](crate::key::Purpose::NetAuth) key, `H` the BLAKE3 of the hello line
/// (which holds the sender's nonce) and `NC` the collector's nonce:
///
/// ```text
/// collector proof = BLAKE3-keyed(A, "RA-NET2 collector\0" ‖ H ‖ NC)
/// sender proof    = BLAKE3-keyed(A, "RA-NET2 sender\0"    ‖ H ‖ NC)
/// ```
///
/// Both nonces are fresh and random, so no recorded exchange verifies again; the two roles
/// have their own prefixes, so neither side's proof serves as the other's.
pub mod auth {
    use crate::key::{Key, Purpose};

    /// Bytes of a nonce.
    pub const NONCE_LEN: usize = 32;

    /// A fresh random nonce.
    pub fn nonce() -> std::io::Result<[u8; NONCE_LEN]> {
        let mut n = [0u8; NONCE_LEN];
        crate::key::random_bytes(&mut n)?;
        Ok(n)
    }

    fn proof(key: &Key, role: &[u8], hello: &str, nc: &[u8; 32]) -> [u8; 32] {
        let mut h = blake3::Hasher::new_keyed(&key.derive(Purpose::NetAuth));
        h.update(role);
        h.update(blake3::hash(hello.as_bytes()).as_bytes());
        h.update(nc);
        *h.finalize().as_bytes()
    }

    /// The collector's proof over the hello line and its nonce.
    pub fn collector_proof(key: &Key, hello: &str, nc: &[u8; 32]) -> [u8; 32] {
        proof(key, b"RA-NET2 collector\0", hello, nc)
    }

    /// The sender's proof over the hello line and the collector's nonce.
    pub fn sender_proof(key: &Key, hello: &str, nc: &[u8; 32]) -> [u8; 32] {
        proof(key, b"RA-NET2 sender\0", hello, nc)
    }

    /// Compares two proofs in constant time.
    pub fn equal(a: &[u8; 32], b: &[u8; 32]) -> bool {
        blake3::Hash::from(*a) == blake3::Hash::from(*b)
    }
}

fn hostname() -> String {
    let mut b = [0u8; 256];
    // SAFETY: gethostname writes at most `b.len()` bytes into the live buffer.
    let r = unsafe { libc::gethostname(b.as_mut_ptr().cast(), b.len()) };
    if r != 0 {
        return "unknown".into();
    }
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..n]).into_owned()
}

/// `s` as a JSON string.
fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_parse() {
        let p = |s: &str| Destination::parse(OsStr::new(s));
        assert_eq!(p("t.ds").unwrap(), Destination::File("t.ds".into()));
        let Destination::Tcp(t) = p("tcp://127.0.0.1:9000").unwrap() else { panic!() };
        assert_eq!((t.addr.as_str(), t.label), ("127.0.0.1:9000", None));
        let Destination::Tcp(t) = p("tcp://h:1/web").unwrap() else { panic!() };
        assert_eq!(t.label.as_deref(), Some("web"));
        for bad in ["tcp://h", "tcp://:1", "tcp://h:x", "tcp://h:0", "tcp://h:70000"] {
            assert!(p(bad).is_err(), "{bad}");
        }
        assert_eq!(p("tcp://[::1]:5/x").unwrap().to_string(), "tcp://[::1]:5");
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }

    #[test]
    fn proofs_depend_on_role_key_hello_and_nonce() {
        let m = Key::from_bytes([1; 32]);
        let (a, b) = (m.for_host("a").unwrap(), m.for_host("b").unwrap());
        let h = hello_line("a", 1, 2, "l", Some(&[3; 32]));
        assert!(h.ends_with(&format!(",\"nonce\":\"{}\"}}", "03".repeat(32))), "{h}");
        let nc = [4; 32];
        let p = auth::sender_proof(&a, &h, &nc);
        assert!(auth::equal(&p, &auth::sender_proof(&a, &h, &nc)));
        for other in [
            auth::collector_proof(&a, &h, &nc),
            auth::sender_proof(&b, &h, &nc),
            auth::sender_proof(&a, &h, &[5; 32]),
            auth::sender_proof(&a, &hello_line("a", 1, 2, "l", Some(&[6; 32])), &nc),
        ] {
            assert!(!auth::equal(&p, &other));
        }
        assert_eq!(ra_hex::decode_array::<32>(&ra_hex::encode(&p)), Some(p));
        assert_eq!(ra_hex::decode_array::<32>("zz"), None);
        assert_eq!(ra_hex::decode_array::<32>(&"g".repeat(64)), None);
    }

    #[test]
    fn lines_are_bounded() {
        let mut r = io::Cursor::new(b"ok name\nack 5".to_vec());
        assert_eq!(read_line(&mut r).unwrap(), "ok name");
        assert_eq!(read_line(&mut r).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        let mut r = io::Cursor::new(vec![b'x'; LINE_MAX * 2]);
        assert_eq!(read_line(&mut r).unwrap_err().kind(), io::ErrorKind::InvalidData);
    }

    /// A DSv1 stream of about `mb` MiB (incompressible extents of 256 KiB).
    fn stream(mb: usize) -> Vec<u8> {
        use dataseries::{DsWriter, ExtentType, FieldDesc, FieldType, WriterOptions};
        let t = Arc::new(
            ExtentType::builder("Test::Blob")
                .field(FieldDesc::new("data", FieldType::Variable32))
                .build()
                .unwrap(),
        );
        let mut w =
            DsWriter::new(Vec::new(), &[Arc::clone(&t)], WriterOptions::uncompressed()).unwrap();
        let mut x = 1u64;
        for _ in 0..mb * 4 {
            let mut b = ExtentBuilder::new(Arc::clone(&t));
            b.start_record();
            let data: Vec<u8> = (0..256 << 10)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            b.set(0, Value::Bytes(&data)).unwrap();
            w.write_extent(b).unwrap();
        }
        w.finish().unwrap()
    }

    /// Unacknowledged bytes never exceed --net-buffer: the writer waits; acknowledgements let
    /// it go on; the end is confirmed with `done`.
    #[test]
    fn unacknowledged_bytes_are_bounded_and_the_writer_waits() {
        let bytes = stream(6);
        let total = bytes.len() as u64;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let collector = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut r = BufReader::new(c.try_clone().unwrap());
            let hello = read_line(&mut r).unwrap();
            assert!(hello.starts_with("reanimator-stream 2 {"), "{hello}");
            c.write_all(b"ok test.ds\n").unwrap();
            // Read without acknowledging until told to.
            let mut got = Vec::new();
            let mut buf = vec![0u8; 1 << 16];
            c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
            loop {
                match r.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(_) => {}
                }
                if go_rx.try_recv().is_ok() || got.len() as u64 == total {
                    // From now on acknowledge everything received.
                    c.write_all(format!("ack {}\n", got.len()).as_bytes()).unwrap();
                    c.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                    loop {
                        match r.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => {
                                got.extend_from_slice(&buf[..n]);
                                c.write_all(format!("ack {}\n", got.len()).as_bytes()).unwrap();
                            }
                            Err(_) => {}
                        }
                    }
                    break;
                }
            }
            c.write_all(format!("done {}\n", got.len()).as_bytes()).unwrap();
            got
        });
        let target = TcpTarget {
            addr,
            label: Some("t".into()),
            spill: None,
            buffer_bytes: 1 << 20,
            auth: None,
        };
        let mut out = NetOutput::connect(&target, "x").unwrap();
        let status = out.status();
        let writer = std::thread::spawn(move || {
            out.write_all(&bytes).unwrap();
            out.flush().unwrap();
            bytes
        });
        // The writer fills the buffer up to the bound (however loaded the machine)...
        let t0 = Instant::now();
        while status.report().written < 1 << 20 {
            assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", status.report());
            std::thread::sleep(Duration::from_millis(20));
        }
        // ... and no further while nothing is acknowledged.
        std::thread::sleep(Duration::from_millis(500));
        let r = status.report();
        assert_eq!(r.written, 1 << 20, "the writer waits at the bound: {r:?}");
        assert_eq!(r.acked, 0);
        go_tx.send(()).unwrap();
        let sent = writer.join().unwrap();
        let got = collector.join().unwrap();
        assert_eq!(got, sent);
        let r = status.report();
        // (The writer may return on the last `ack` before `done` arrives.)
        assert!(r.failure.is_none(), "{r:?}");
        assert_eq!((r.written, r.acked), (total, total));
        assert_eq!(r.remote_name, "test.ds");
    }
}
