//! `reanimator fs ctl`: a live mount's control socket (Tracefs' run-time control).
//!
//! Each daemon listens on a Unix socket next to its registry file,
//! `/run/reanimator/fs/PID.ctl` (the directory is root's, 0700; the socket 0600). A client
//! sends one line, the command; the daemon answers `ok` or `error MESSAGE` on the first line,
//! then `KEY<TAB>VALUE` lines. Only the mount's owner (the uid that started the daemon) and
//! root may: every connection's peer credentials (`SO_PEERCRED`) are checked before its
//! request is read. A request is at most [`MAX_REQUEST`] bytes and must arrive within a
//! second; connections are served one at a time, at most [`MAX_RATE`] a second, so that no
//! client can cost the daemon more than that.
//!
//! Every change is a `ctl` record in the trace (TRACE_FORMAT.md 3.10) at the moment it took
//! effect; a pause also leaves a `Reanimator::Lost` row with the count of operations served
//! while it lasted ([`crate::tracer::Tracer::pause`]).

use std::io::{BufRead, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::tracer::{DataMode, Tracer, Tracers};
use crate::{mounts, registry, Error, SOURCE_PREFIX};

/// The longest request line, in bytes (a filter expression fits many times over).
pub const MAX_REQUEST: usize = 4096;

/// Requests served per second at most, all clients together.
pub const MAX_RATE: u32 = 50;

/// How long a client has to send its request (and to take the answer).
const IO_TIMEOUT: Duration = Duration::from_secs(1);

/// The commands, for messages and `--help`.
pub const COMMANDS: &str = "pause, resume, filter EXPR|none, data full|hash|none, stats, flush";

/// The control socket of daemon `pid`.
pub fn socket_path(pid: u32) -> PathBuf {
    Path::new(registry::DIR).join(format!("{pid}.ctl"))
}

/// What the control thread needs besides the tracer.
pub struct Context {
    /// The mount's tracers: the ones commands change (`--tracer` picks one) and `stats`
    /// reports.
    pub tracers: Arc<Tracers>,
    /// Operations on the daemon's own files, passed through untraced.
    pub untraced: Arc<AtomicU64>,
    /// The mountpoint, as `stats` reports it.
    pub mountpoint: PathBuf,
    /// When the daemon started serving: `stats`' `elapsed_s` counts from it.
    pub started: Instant,
}

/// The running control thread; dropping it ends the thread and removes the socket.
pub struct Server {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    path: PathBuf,
}

impl Server {
    /// Bind the socket (a stale one of an earlier daemon with this pid is replaced) and serve
    /// it on a thread of its own.
    pub fn start(cx: Context) -> std::io::Result<Server> {
        let path = socket_path(std::process::id());
        let _ = std::fs::remove_file(&path);
        let l = UnixListener::bind(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        l.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread =
            std::thread::Builder::new().name("fs-ctl".into()).spawn(move || serve(&l, &cx, &s))?;
        Ok(Server { stop, thread: Some(thread), path })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn serve(l: &UnixListener, cx: &Context, stop: &AtomicBool) {
    let owner = rustix::process::getuid().as_raw();
    let gap = Duration::from_secs(1) / MAX_RATE;
    while !stop.load(Ordering::Relaxed) {
        match l.accept() {
            Ok((s, _)) => {
                let t0 = Instant::now();
                let _ = handle(s, cx, owner);
                if let Some(rest) = gap.checked_sub(t0.elapsed()) {
                    std::thread::sleep(rest);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Serve one connection: check the peer, read its line, act, answer.
fn handle(mut s: UnixStream, cx: &Context, owner: u32) -> std::io::Result<()> {
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    let cred = rustix::net::sockopt::socket_peercred(&s)?;
    let (uid, gid, pid) = (cred.uid.as_raw(), cred.gid.as_raw(), cred.pid.as_raw_nonzero().get());
    // Read (at most MAX_REQUEST bytes, within IO_TIMEOUT) even from a caller to be refused:
    // closing on an unread request would reset the connection before the answer is read.
    let mut line = Vec::new();
    let n =
        std::io::BufReader::new((&mut s).take(MAX_REQUEST as u64 + 1)).read_until(b'\n', &mut line);
    let reply = if uid != owner && uid != 0 {
        Err(format!(
            "uid {uid} may not control this mount (only its owner, uid {owner}, and root may)"
        ))
    } else {
        match n {
            Err(e) => Err(format!("cannot read the request: {e}")),
            Ok(_) if line.len() > MAX_REQUEST && !line.ends_with(b"\n") => {
                Err(format!("the request is longer than {MAX_REQUEST} bytes"))
            }
            Ok(_) => match std::str::from_utf8(&line) {
                Err(_) => Err("the request is not UTF-8".to_string()),
                Ok(t) => run(t.trim(), cx, (uid, gid, pid)),
            },
        }
    };
    answer(&mut s, reply)
}

fn answer(s: &mut UnixStream, r: Result<Vec<(String, String)>, String>) -> std::io::Result<()> {
    let mut out = String::new();
    match r {
        Ok(fields) => {
            out.push_str("ok\n");
            for (k, v) in fields {
                out.push_str(&format!("{k}\t{}\n", one_line(&v)));
            }
        }
        Err(e) => out.push_str(&format!("error {}\n", one_line(&e))),
    }
    s.write_all(out.as_bytes())
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\t'], " ")
}

/// The time `ns` (since the epoch) as the CLI writes times (RFC 3339, UTC).
fn utc(ns: i64) -> String {
    ra_trace::time::rfc3339(ns)
}

fn msg(m: String) -> Vec<(String, String)> {
    vec![("message".into(), m)]
}

/// Carry out one command for caller `by` (uid, gid, pid).
/// The tracer a request addresses (`--tracer N|NAME CMD ...`, sent by `fs ctl --tracer`),
/// and the rest of the request.
fn addressed<'a>(
    line: &'a str,
    cx: &'a Context,
) -> Result<(Vec<&'a Tracer>, bool, &'a str), String> {
    if let Some(rest) = line.strip_prefix("--tracer") {
        let rest = rest.trim_start();
        let (which, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if which.is_empty() {
            return Err("`--tracer` needs a tracer's number or name".into());
        }
        return Ok((vec![cx.tracers.find(which)?], true, rest.trim()));
    }
    Ok((cx.tracers.list.iter().map(|m| &*m.tracer).collect(), false, line))
}

fn run(line: &str, cx: &Context, by: (u32, u32, i32)) -> Result<Vec<(String, String)>, String> {
    let (ts, one, line) = addressed(line, cx)?;
    let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    // The message names the tracer when the mount has several.
    let who = |t: &Tracer| {
        if cx.tracers.list.len() > 1 {
            format!("tracer {}: ", t.opts.name)
        } else {
            String::new()
        }
    };
    let each =
        |f: &dyn Fn(&Tracer) -> Result<String, String>| -> Result<Vec<(String, String)>, String> {
            let mut lines = Vec::new();
            for t in &ts {
                lines.push(format!("{}{}", who(t), f(t)?));
            }
            Ok(msg(lines.join("; ")))
        };
    let no_args = |what: &str| {
        if rest.is_empty() {
            Ok(())
        } else {
            Err(format!("`{what}` takes no argument (got `{rest}`)"))
        }
    };
    match cmd {
        "pause" => {
            no_args("pause")?;
            each(&|t| {
                Ok(if t.pause(by) {
                    format!("tracing paused at {}", utc(crate::tracer::now_ns()))
                } else {
                    "tracing was already paused".into()
                })
            })
        }
        "resume" => {
            no_args("resume")?;
            each(&|t| {
                Ok(match t.resume(by) {
                    Some(n) => format!(
                        "tracing resumed at {}; {n} operations served while paused were not \
                         recorded",
                        utc(crate::tracer::now_ns())
                    ),
                    None => "tracing was not paused".into(),
                })
            })
        }
        "filter" => {
            if rest.is_empty() {
                return Err("`filter` needs an expression (or `none`)".into());
            }
            if rest == "none" {
                return each(&|t| {
                    t.set_filter(None, by);
                    Ok("no filter: every operation is recorded".into())
                });
            }
            let f = crate::tracer::parse_filter(rest)?;
            each(&|t| {
                t.set_filter(Some((rest.to_string(), f.clone())), by);
                Ok(format!("filter: {rest}"))
            })
        }
        "data" => {
            let m = DataMode::parse(rest).map_err(|e| {
                format!("`data {rest}`: {e} (full, hash, none, or write=LEVEL,read=LEVEL)")
            })?;
            each(&|t| {
                t.set_data_mode(m, by);
                Ok(format!("data: {}", m.name()))
            })
        }
        "stats" => {
            no_args("stats")?;
            Ok(stats(cx, &ts, one))
        }
        "flush" => {
            no_args("flush")?;
            each(&|t| {
                t.flush();
                match t.failure.lock().unwrap_or_else(|e| e.into_inner()).clone() {
                    Some(f) => Err(format!("{}the trace is incomplete: {f}", who(t))),
                    None => Ok("flushed: every record so far is in the trace file".into()),
                }
            })
        }
        "" => Err(format!("no command; commands: {COMMANDS}")),
        c => Err(format!("unknown command `{c}`; commands: {COMMANDS}")),
    }
}

/// One tracer's counters (`prefix`: `tracer.N.` for each of several, empty for the one
/// addressed or the only one).
fn tracer_stats(t: &Tracer, prefix: &str) -> Vec<(String, String)> {
    let n = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
    let failure = t.failure.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let f = |k: &str, v: String| (format!("{prefix}{k}"), v);
    vec![
        f("name", t.opts.name.clone()),
        f("paused", t.is_paused().to_string()),
        f("operations", n(&t.seen)),
        f("recorded", n(&t.recorded)),
        f("filtered_out", n(&t.filtered_out)),
        f("paused_out", n(&t.paused_ops)),
        f("data", t.data_mode().name()),
        f("filter", t.filter_text().unwrap_or_else(|| "none".into())),
        f("trace", failure.map_or("ok".into(), |f| format!("incomplete: {f}"))),
    ]
}

fn stats(cx: &Context, ts: &[&Tracer], one: bool) -> Vec<(String, String)> {
    let n = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
    let mut v = vec![
        ("pid".into(), std::process::id().to_string()),
        ("mountpoint".into(), cx.mountpoint.display().to_string()),
        ("elapsed_s".into(), format!("{:.3}", cx.started.elapsed().as_secs_f64())),
        ("untraced".into(), n(&cx.untraced)),
        ("tracers".into(), cx.tracers.list.len().to_string()),
    ];
    // The addressed tracer's (or the first's) counters under the plain names, then each.
    v.extend(tracer_stats(ts[0], ""));
    if !one && ts.len() > 1 {
        for (i, t) in ts.iter().enumerate() {
            v.extend(tracer_stats(t, &format!("tracer.{}.", i + 1)));
        }
    }
    v
}

/// A daemon's `ok` answer: its `KEY<TAB>VALUE` lines, in order (lines without a tab left
/// out).
pub type Reply = Vec<(String, String)>;

/// Send `command` to the daemon serving `mountpoint` and return its answer; a refusal, a
/// mount that is not a reanimator fs mount, or a daemon that cannot be reached is an error of
/// one line.
pub fn send(mountpoint: &Path, command: &str) -> Result<Reply, Error> {
    // The path as given first: canonicalizing it would ask the mount itself (an operation in
    // its trace, and a wait on a daemon that hangs).
    let given = std::path::absolute(mountpoint)
        .map_err(|e| Error::Usage(format!("{}: {e}", mountpoint.display())))?;
    let table = mounts();
    let mut found = table.iter().rev().find(|m| m.mountpoint == given);
    let mut mp = given.clone();
    if found.is_none() {
        mp = std::fs::canonicalize(mountpoint)
            .map_err(|e| Error::Usage(format!("{}: {e}", mountpoint.display())))?;
        found = table.iter().rev().find(|m| m.mountpoint == mp);
    }
    let pid = match found {
        Some(m) => match m.source.strip_prefix(SOURCE_PREFIX).and_then(|p| p.parse::<u32>().ok()) {
            Some(p) => p,
            None => {
                return Err(Error::Usage(format!(
                    "{} is not a reanimator fs mount ({} from {})",
                    mp.display(),
                    m.fstype,
                    m.source
                )))
            }
        },
        // Detached while busy, still serving its last users?
        None => match registry::entries()
            .into_iter()
            .find(|e| e.mountpoint == mp && e.outcome.is_none() && e.alive())
        {
            Some(e) => e.pid,
            None => {
                return Err(Error::Usage(format!(
                    "{} is not a reanimator fs mount (not a mount point)",
                    mp.display()
                )))
            }
        },
    };
    if command.len() > MAX_REQUEST {
        return Err(Error::Usage(format!("the command is longer than {MAX_REQUEST} bytes")));
    }
    if command.contains('\n') {
        return Err(Error::Usage("the command must be one line".into()));
    }
    let path = socket_path(pid);
    let mut s = UnixStream::connect(&path).map_err(|e| {
        Error::Usage(match e.kind() {
            std::io::ErrorKind::PermissionDenied => format!(
                "{}: permission denied: only the mount's owner and root may control it",
                mp.display()
            ),
            _ => format!(
                "cannot reach the daemon (pid {pid}) of {} at {}: {e}",
                mp.display(),
                path.display()
            ),
        })
    })?;
    let io = |e: std::io::Error| Error::Io {
        what: format!("talking to the daemon (pid {pid})"),
        source: e,
    };
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(io)?;
    s.set_write_timeout(Some(Duration::from_secs(10))).map_err(io)?;
    s.write_all(format!("{command}\n").as_bytes()).map_err(io)?;
    let mut text = String::new();
    // Bounded: an answer is a few hundred bytes.
    (&mut s).take(1 << 20).read_to_string(&mut text).map_err(io)?;
    let mut lines = text.lines();
    match lines.next() {
        Some("ok") => Ok(lines
            .filter_map(|l| l.split_once('\t'))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()),
        Some(l) if l.starts_with("error ") => Err(Error::Usage(l["error ".len()..].to_string())),
        _ => Err(Error::Usage(format!("the daemon (pid {pid}) gave no answer"))),
    }
}
