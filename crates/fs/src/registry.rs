//! The daemons serving reanimator fs mounts on this machine, for what /proc/self/mountinfo
//! does not say: one file per daemon in [`DIR`] (root's, 0700) with its lower directory,
//! mountpoint and FUSE connection, and once it is done, how its trace ended. Other mounts
//! read it to refuse stacking on a live mount's lower directory; `fs umount` reads how the
//! trace ended (its exit status) and removes the file.
//!
//! A file is `reanimator-fs 1\0START\0MINOR\0LOWER\0MOUNTPOINT\0` and, when the daemon is
//! done, `finished\0` or `failed\0MESSAGE\0`, then `totals\0` and the [`Totals`] fields
//! each followed by NUL (for `fs umount --json`); START is the daemon's start time (field 22 of
//! /proc/PID/stat), so that a reused pid is not taken for the daemon.

use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the daemons' files are.
pub const DIR: &str = "/run/reanimator/fs";

const MAGIC: &[u8] = b"reanimator-fs 1";

/// Files of dead daemons older than this are removed (an `fs umount` reads its daemon's file
/// at once; this is for daemons nobody unmounted with it).
const KEEP_DEAD: Duration = Duration::from_secs(600);

/// How a daemon's trace ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every tracer's trace was finished (index and trailer written).
    Finished,
    /// A trace is incomplete: the first failure as the CLI reports it (a write error, a lost
    /// collector; a failure of a tracer besides the first is prefixed `tracer NAME: `).
    Failed(String),
}

/// What a daemon did, as its summary line says it, for `fs umount --json`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Operations offered to the first tracer ([`crate::Summary::operations`]).
    pub operations: u64,
    /// Records the first tracer wrote.
    pub recorded: u64,
    /// Operations the first tracer's filter refused.
    pub filtered_out: u64,
    /// Operations on the daemon's own files, passed through untraced.
    pub untraced: u64,
    /// How long the mount served, ns ([`crate::Summary::elapsed`]).
    pub elapsed_ns: u64,
    /// The trace file's path, or `tcp://ADDR` for a network trace.
    pub trace: String,
    /// The trace file's size, or the bytes the collector acknowledged.
    pub trace_bytes: u64,
    /// Each tracer's (`fs mount --tracer`; the fields above are the first's).
    pub tracers: Vec<TracerTotals>,
}

/// One tracer's totals (each as `tracer\0` then these fields, after the mount's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TracerTotals {
    /// The tracer's name on the mount.
    pub name: String,
    /// Operations offered to it.
    pub operations: u64,
    /// Records it wrote.
    pub recorded: u64,
    /// Operations its filter refused.
    pub filtered_out: u64,
    /// Its trace file's size (for the first tracer with a collector: the bytes the
    /// collector acknowledged).
    pub trace_bytes: u64,
    /// Its trace file's absolute path, or `tcp://ADDR`.
    pub trace: String,
}

/// One daemon's file.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The daemon's pid (the file's name).
    pub pid: u32,
    /// The daemon's start time (clock ticks since boot, [`start_time`]): with `pid`, tells
    /// the daemon from a later process that reused its pid ([`Entry::alive`]).
    pub start: u64,
    /// The FUSE connection (fusectl's number), for cutting off a detached mount.
    pub dev_minor: u32,
    /// LOWER, canonical: a new mount refuses to stack on it while the daemon lives.
    pub lower: PathBuf,
    /// The mountpoint, canonical (still served after a busy mount was detached).
    pub mountpoint: PathBuf,
    /// How the trace ended; None while the daemon serves (or when it died without saying).
    pub outcome: Option<Outcome>,
    /// What the daemon did, written with its outcome; None before then.
    pub totals: Option<Totals>,
}

/// The registry directory, made if need be; refused unless it is root's and private.
fn dir() -> std::io::Result<&'static Path> {
    let d = Path::new(DIR);
    if !d.is_dir() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(d)?;
    }
    let md = std::fs::symlink_metadata(d)?;
    if !md.is_dir() || md.uid() != 0 || md.mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{DIR} is not a directory of root's that only root may use"
        )));
    }
    Ok(d)
}

/// A process's start time (clock ticks since boot), or None when it is gone.
pub fn start_time(pid: u32) -> Option<u64> {
    let s = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let close = s.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&s[close + 1..]).ok()?;
    // After the name: state is field 3; starttime is field 22.
    let mut f = rest.split_ascii_whitespace();
    let state = f.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    f.nth(18)?.parse().ok()
}

/// Held while a mount checks for others and registers itself, so that two mounts started at
/// once see each other.
pub struct Lock(#[allow(dead_code)] std::fs::File);

/// Waits at most `LOCK_WAIT` (a mount whose mountpoint hangs must not stop every other).
pub fn lock() -> std::io::Result<Lock> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(dir()?.join(".lock"))?;
    let t0 = std::time::Instant::now();
    loop {
        match rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Lock(f)),
            Err(rustix::io::Errno::WOULDBLOCK) if t0.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(std::io::Error::other(format!(
                    "another mount held its lock for {} s",
                    LOCK_WAIT.as_secs()
                )))
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// How long a mount waits for another to finish mounting.
const LOCK_WAIT: Duration = Duration::from_secs(10);

fn encode(e: &Entry) -> Vec<u8> {
    let mut v = Vec::new();
    for field in [
        MAGIC,
        e.start.to_string().as_bytes(),
        e.dev_minor.to_string().as_bytes(),
        e.lower.as_os_str().as_bytes(),
        e.mountpoint.as_os_str().as_bytes(),
    ] {
        v.extend_from_slice(field);
        v.push(0);
    }
    match &e.outcome {
        None => {}
        Some(Outcome::Finished) => v.extend_from_slice(b"finished\0"),
        Some(Outcome::Failed(m)) => {
            v.extend_from_slice(b"failed\0");
            v.extend(m.bytes().filter(|&b| b != 0));
            v.push(0);
        }
    }
    if let (Some(_), Some(t)) = (&e.outcome, &e.totals) {
        v.extend_from_slice(b"totals\0");
        for n in [t.operations, t.recorded, t.filtered_out, t.untraced, t.elapsed_ns, t.trace_bytes]
        {
            v.extend_from_slice(n.to_string().as_bytes());
            v.push(0);
        }
        v.extend(t.trace.bytes().filter(|&b| b != 0));
        v.push(0);
        for tt in &t.tracers {
            v.extend_from_slice(b"tracer\0");
            v.extend(tt.name.bytes().filter(|&b| b != 0));
            v.push(0);
            for n in [tt.operations, tt.recorded, tt.filtered_out, tt.trace_bytes] {
                v.extend_from_slice(n.to_string().as_bytes());
                v.push(0);
            }
            v.extend(tt.trace.bytes().filter(|&b| b != 0));
            v.push(0);
        }
    }
    v
}

fn decode(pid: u32, b: &[u8]) -> Option<Entry> {
    let mut f = b.split(|&c| c == 0);
    if f.next()? != MAGIC {
        return None;
    }
    let num = |x: &[u8]| std::str::from_utf8(x).ok()?.parse().ok();
    let start = num(f.next()?)?;
    let dev_minor = num(f.next()?)? as u32;
    let lower = PathBuf::from(std::ffi::OsString::from_vec(f.next()?.to_vec()));
    let mountpoint = PathBuf::from(std::ffi::OsString::from_vec(f.next()?.to_vec()));
    let outcome = match f.next() {
        Some(b"finished") => Some(Outcome::Finished),
        Some(b"failed") => {
            Some(Outcome::Failed(String::from_utf8_lossy(f.next().unwrap_or_default()).into()))
        }
        _ => None,
    };
    let totals = (f.next() == Some(b"totals")).then(|| -> Option<Totals> {
        let mut n = || -> Option<u64> { num(f.next()?) };
        let (operations, recorded, filtered_out, untraced, elapsed_ns, trace_bytes) =
            (n()?, n()?, n()?, n()?, n()?, n()?);
        let trace = String::from_utf8_lossy(f.next()?).into_owned();
        let mut tracers = Vec::new();
        while f.next() == Some(b"tracer") {
            let name = String::from_utf8_lossy(f.next()?).into_owned();
            let mut n = || -> Option<u64> { num(f.next()?) };
            let (operations, recorded, filtered_out, trace_bytes) = (n()?, n()?, n()?, n()?);
            let trace = String::from_utf8_lossy(f.next()?).into_owned();
            tracers.push(TracerTotals {
                name,
                operations,
                recorded,
                filtered_out,
                trace_bytes,
                trace,
            });
        }
        Some(Totals {
            tracers,
            operations,
            recorded,
            filtered_out,
            untraced,
            elapsed_ns,
            trace,
            trace_bytes,
        })
    });
    Some(Entry { pid, start, dev_minor, lower, mountpoint, outcome, totals: totals.flatten() })
}

fn write(e: &Entry) -> std::io::Result<()> {
    let d = dir()?;
    let tmp = d.join(format!(".{}.new", e.pid));
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(&encode(e))?;
    drop(f);
    std::fs::rename(&tmp, d.join(e.pid.to_string()))
}

/// This daemon is about to serve `mountpoint` from `lower` (its FUSE connection follows,
/// [`set_minor`]).
pub fn register(lower: &Path, mountpoint: &Path) -> std::io::Result<()> {
    let pid = std::process::id();
    let start = start_time(pid).unwrap_or(0);
    clean();
    write(&Entry {
        pid,
        start,
        dev_minor: 0,
        lower: lower.to_path_buf(),
        mountpoint: mountpoint.to_path_buf(),
        outcome: None,
        totals: None,
    })
}

/// The mount is up on FUSE connection `dev_minor`.
pub fn set_minor(dev_minor: u32) {
    if let Some(mut e) = read(std::process::id()) {
        e.dev_minor = dev_minor;
        let _ = write(&e);
    }
}

/// This daemon never mounted: its file goes.
pub fn forget() {
    let _ = std::fs::remove_file(Path::new(DIR).join(std::process::id().to_string()));
}

/// This daemon is done: say how its trace ended and, when it served, what it did (for `fs
/// umount`). Nothing when it never registered.
pub fn finish(outcome: Outcome, totals: Option<Totals>) {
    let pid = std::process::id();
    if let Some(mut e) = read(pid) {
        e.outcome = Some(outcome);
        e.totals = totals;
        let _ = write(&e);
    }
}

/// The file of daemon `pid`, if it has one.
pub fn read(pid: u32) -> Option<Entry> {
    let b = std::fs::read(Path::new(DIR).join(pid.to_string())).ok()?;
    decode(pid, &b)
}

/// Every daemon's file.
pub fn entries() -> Vec<Entry> {
    let Ok(rd) = std::fs::read_dir(DIR) else { return Vec::new() };
    rd.filter_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        decode(pid, &std::fs::read(e.path()).ok()?)
    })
    .collect()
}

impl Entry {
    /// Whether the daemon that wrote this is still running.
    pub fn alive(&self) -> bool {
        start_time(self.pid).is_some_and(|s| s == self.start)
    }
}

/// How daemon `pid`'s trace ended and what it did, once it has exited; its file is removed.
pub fn take_outcome(pid: u32) -> Option<(Outcome, Option<Totals>)> {
    let e = read(pid)?;
    let _ = std::fs::remove_file(Path::new(DIR).join(pid.to_string()));
    e.outcome.map(|o| (o, e.totals))
}

/// Remove the files of daemons that are gone (after [`KEEP_DEAD`]).
fn clean() {
    let Ok(rd) = std::fs::read_dir(DIR) else { return };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        // A killed daemon's control socket (`PID.ctl`, crate::ctl): gone with its daemon.
        if let Some(p) = name.strip_suffix(".ctl").and_then(|n| n.parse::<u32>().ok()) {
            if start_time(p).is_none() {
                let _ = std::fs::remove_file(e.path());
            }
            continue;
        }
        let Some(pid) = name.parse::<u32>().ok() else {
            continue;
        };
        let old = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > KEEP_DEAD);
        if old && read(pid).is_none_or(|en| !en.alive()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_as_written() {
        let e = Entry {
            pid: 7,
            start: 123,
            dev_minor: 45,
            lower: PathBuf::from(std::ffi::OsString::from_vec(b"/a b/\xff".to_vec())),
            mountpoint: PathBuf::from("/m"),
            outcome: None,
            totals: None,
        };
        let back = decode(7, &encode(&e)).unwrap();
        assert_eq!((back.start, back.dev_minor, back.outcome), (123, 45, None));
        assert_eq!((back.lower, back.mountpoint), (e.lower.clone(), e.mountpoint.clone()));
        for o in [Outcome::Finished, Outcome::Failed("cannot write: No space".into())] {
            let e = Entry { outcome: Some(o.clone()), ..e.clone() };
            assert_eq!(decode(7, &encode(&e)).unwrap().outcome, Some(o.clone()));
            let t = Totals {
                operations: 9,
                recorded: 8,
                filtered_out: 1,
                untraced: 2,
                elapsed_ns: 3_000_000_000,
                trace: "/t/a b.ds".into(),
                trace_bytes: 4096,
                tracers: vec![
                    TracerTotals {
                        name: "1".into(),
                        operations: 9,
                        recorded: 8,
                        filtered_out: 1,
                        trace_bytes: 4096,
                        trace: "/t/a b.ds".into(),
                    },
                    TracerTotals {
                        name: "w".into(),
                        operations: 9,
                        recorded: 2,
                        filtered_out: 7,
                        trace_bytes: 100,
                        trace: "/t/w.ds".into(),
                    },
                ],
            };
            let e = Entry { outcome: Some(o.clone()), totals: Some(t.clone()), ..e.clone() };
            let back = decode(7, &encode(&e)).unwrap();
            assert_eq!((back.outcome, back.totals), (Some(o), Some(t)));
        }
        assert!(decode(7, b"something else\0").is_none());
        assert!(decode(7, b"").is_none());
    }

    #[test]
    fn this_process_is_alive_and_has_a_start_time() {
        let me = std::process::id();
        let start = start_time(me).unwrap();
        let e = Entry {
            pid: me,
            start,
            dev_minor: 0,
            lower: "/".into(),
            mountpoint: "/".into(),
            outcome: None,
            totals: None,
        };
        assert!(e.alive());
        assert!(!Entry { start: start + 1, ..e }.alive(), "a reused pid is not the daemon");
    }
}
