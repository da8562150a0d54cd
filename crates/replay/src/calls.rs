//! Replaying one recorded call: issue it again in the replay's world (descriptors and paths
//! translated), emulate it on the replayer's own model, or simulate it from the trace; then
//! collect what differs from the recording.

use std::borrow::Cow;
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ra_syscalls::{
    flags as fl, Handler as H, KernelCopy, ReplayPolicy, Ret, Struct, SyscallDef, UringCall,
    XattrOp,
};
use ra_trace::structs::{parse_dirents, parse_dirents64};
use ra_trace::{ArgValue, Event};

use crate::sandbox::{creates, cstr, join, normalize, Root, PATH_MAX, VALID_OPEN_FLAGS};
use crate::shadow::{fd_pair, ok, passed_descriptors, path_arg, Placement};
use crate::sys::{self, R};
use crate::verify::{self, Diff};
use crate::world::{lock, FdEntry, FdTable, Handle, InFlight, Mapping, OpenFile, Process, Procs};
use crate::{Fill, MmapMode, Options, Verify};

mod uring;
pub use uring::{check as check_uring_op, probe as probe_uring, Rings, UringMode};

/// State every executor shares.
#[derive(Debug)]
pub struct Shared {
    /// The replay root every path is resolved beneath ([`Options::root`], opened once).
    pub root: Root,
    /// Every replayed process: descriptor table, cwd, umask and mappings, by process id.
    pub procs: Procs,
    /// The replay's options, as passed to [`crate::replay_from`].
    pub opts: Options,
    /// Set when the replay must stop (abort on mismatch, Ctrl-C, a fatal stall).
    pub abort: AtomicBool,
    /// The replayer runs with effective uid 0. When it does not, a `linkat(AT_EMPTY_PATH)` of
    /// an `O_PATH` descriptor that fails with `ENOENT` (it needs `CAP_DAC_READ_SEARCH`) is
    /// retried through the descriptor's `/proc/self/fd` link.
    pub is_root: bool,
    /// The trace has page records for mapped I/O (`mmappread`/`mmappwrite`); false for ptrace
    /// traces, whose backend cannot see loads and stores to mapped memory.
    pub page_records: bool,
    /// Descriptors passed in messages, between their sendmsg and their recvmsg.
    pub in_flight: InFlight,
    /// The replay's io_uring rings ([`UringMode`]).
    pub rings: Rings,
}

/// How a call was replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Issued to the kernel beneath the replay root (descriptors and paths translated).
    Issued,
    /// Applied to the replayer's own model ([`crate::world`]: descriptor tables, cwd, umask,
    /// processes, mappings) rather than issued as recorded.
    Emulated,
    /// Not issued: a call the registry simulates, one on a non-file resource (socket,
    /// `/proc`, `/dev`, ...), a failure replay cannot reproduce (`EINTR`, `EFAULT`, ...) or one
    /// whose path argument was not captured; the recorded result stands and the descriptors
    /// it returned are added to the model.
    Simulated,
    /// Not replayed at all: a call the registry skips or does not know, one whose thread ended
    /// inside it, a read left out by [`Options::reads`], or one whose trace lacks an argument;
    /// the recorded result stands.
    Skipped,
}

/// How the replayed return value is compared with the recorded one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Same value on success, same errno on failure.
    Exact,
    /// Same success or failure (and errno): addresses, thread ids.
    Success,
    /// Not compared (the recorded value was used).
    Recorded,
}

/// The result of replaying one call.
#[derive(Debug)]
pub struct Outcome {
    /// How the call was replayed.
    pub mode: Mode,
    /// The replayed result: `Ok(return value)` or `Err(errno)`; for [`Rule::Recorded`] the
    /// recorded result.
    pub res: R,
    /// How `res` is compared with the recorded result.
    pub rule: Rule,
    /// What differed from the recording (return value, errno, returned data); empty when
    /// everything compared matched or nothing was compared ([`Verify::None`]).
    pub diffs: Vec<Diff>,
    /// A note on how this call was replayed (an argument missing from the trace, fill data
    /// written, a read left out, ...); the scheduler counts each distinct note in
    /// [`crate::Report::warnings`].
    pub warn: Option<String>,
    /// With an outcome sink ([`Options::outcomes`]): a BLAKE3 digest of the data the call
    /// returned, in the form verification compares it (read buffers and xattr values as
    /// bytes; the stat, statfs fields it compares; a directory stream's entries and an xattr
    /// name list as sets). None when the call returned no data or no sink asked for it.
    pub digest: Option<[u8; 32]>,
}

enum Act {
    /// Issued to the kernel; compare exactly.
    Issued(i64),
    /// Issued; compare success only.
    IssuedLoose(i64),
    /// Done on the model; compare exactly.
    Emulated(i64),
    /// Done on the model, which says it fails with this errno; compare exactly.
    EmulatedFailed(i32),
    /// Done on the model; the recorded value stands.
    EmulatedAsRecorded,
    /// Not issued; recorded result.
    Sim,
    Skip,
    /// Issued; the recording has no result to compare with (its thread ended inside it).
    IssuedUnknown,
}

/// Paths whose files are the machine's, not the storage under test: calls on them are
/// simulated (`/dev/null`, `/proc/self/...`).
fn is_special(p: &[u8]) -> bool {
    let n = normalize(p);
    [&b"/proc"[..], b"/sys", b"/dev"]
        .iter()
        .any(|s| n == *s || (n.starts_with(s) && n.get(s.len()) == Some(&b'/')))
}

/// Failures the replay cannot reproduce by issuing the call again, and why. Such a call is
/// not issued (issuing it would succeed and do what the recorded call never did: write bytes,
/// truncate a file, create a descriptor); the recorded failure stands.
fn unreproducible(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::EINTR => "interrupted by a signal; the restarted call is its own record",
        e if ra_trace::format::is_restart_errno(e) => {
            "interrupted by a signal; the restarted call is its own record"
        }
        libc::EFAULT => "a bad address in the program; the replay's buffers are valid",
        libc::ETXTBSY => "the file was being executed; the replay runs no program",
        libc::EMFILE | libc::ENFILE => "a descriptor limit of the recorded process",
        libc::ENOMEM => "the recording machine's memory",
        libc::ENOSPC | libc::EDQUOT => "the recording file system was full",
        libc::EIO => "an I/O error of the recording machine",
        libc::EXDEV => "the two paths were on different file systems when recorded",
        _ => return None,
    })
}

/// The flags and mode `open(2)` hands the kernel's lookup, as `build_open_how` and
/// `build_open_flags` make them: for `open`/`openat`, unknown bits are dropped,
/// `O_LARGEFILE` is added (64-bit kernel), `O_PATH` keeps only `O_DIRECTORY|O_NOFOLLOW|
/// O_CLOEXEC`, and the mode counts only with `O_CREAT` or `O_TMPFILE`; `openat2` refuses
/// what `open` ignores. The errors the kernel gives for the flags themselves come here,
/// before the name or the directory descriptor are looked at.
pub fn open_how(flags: i32, mode: u32, strict: bool) -> Result<(i32, u32), i32> {
    const PATH_FLAGS: i32 = libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_PATH | libc::O_CLOEXEC;
    let (mut f, mut m) = (flags, mode);
    if strict {
        if f & !VALID_OPEN_FLAGS != 0 || m & !0o7777 != 0 || (m != 0 && !creates(f)) {
            return Err(libc::EINVAL);
        }
        if f & libc::O_PATH != 0 && f & !PATH_FLAGS != 0 {
            return Err(libc::EINVAL);
        }
    } else {
        f = (f & VALID_OPEN_FLAGS) | libc::O_LARGEFILE;
        m &= 0o7777;
        if f & libc::O_PATH != 0 {
            f &= PATH_FLAGS;
        }
        if !creates(f) {
            m = 0;
        }
    }
    if f & libc::O_TMPFILE == libc::O_TMPFILE {
        // O_TMPFILE needs O_DIRECTORY's bit as part of it, and write access; no O_CREAT.
        // (The kernel's ACC_MODE counts access mode 3 as writing, as O_RDWR.)
        if f & libc::O_CREAT != 0 || f & libc::O_ACCMODE == libc::O_RDONLY {
            return Err(libc::EINVAL);
        }
    } else if f & libc::O_TMPFILE & !libc::O_DIRECTORY != 0 {
        // __O_TMPFILE without O_DIRECTORY.
        return Err(libc::EINVAL);
    }
    Ok((f, m))
}

/// `/proc/self/fd/N[/rest]` (also `/proc/thread-self/fd/N`): the descriptor and the rest.
fn proc_fd_path(p: &[u8]) -> Option<(i32, &[u8])> {
    let r =
        p.strip_prefix(b"/proc/self/fd/").or_else(|| p.strip_prefix(b"/proc/thread-self/fd/"))?;
    let end = r.iter().position(|&c| c == b'/').unwrap_or(r.len());
    let fd = std::str::from_utf8(&r[..end]).ok()?.parse().ok()?;
    Some((fd, r[end..].strip_prefix(b"/").unwrap_or(&r[end..])))
}

const STALL_SLICE_MS: i32 = 100;
/// How long a call waits for a pipe end on which a call stalled before ([`OpenFile::stalled`]).
const STALLED_WAIT: Duration = Duration::from_millis(10);

/// Creation order of mappings (see [`Mapping::serial`]).
static MAP_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Sentinel "errno": the call names a simulated descriptor, so it is simulated too.
const SIMULATED: i32 = -1;
/// Sentinel "errno": an argument the call needs is not in the trace.
const MISSING: i32 = -2;

/// Bytes of scratch buffers (read targets) all executors hold at once, at most: replay memory
/// does not grow with recorded buffer sizes or the number of threads.
pub const SCRATCH_BUDGET: usize = 64 << 20;
/// The largest single read a regular-file read is split into.
const READ_CHUNK: usize = 4 << 20;

/// The scratch bytes handed out now (see [`SCRATCH_BUDGET`]).
static SCRATCH_USED: Mutex<usize> = Mutex::new(0);
static SCRATCH_FREED: Condvar = Condvar::new();

/// Run `f` with a zeroed scratch buffer of `n` bytes, taken from the shared budget (a request
/// larger than the whole budget waits until it has the budget to itself).
fn with_buf<T>(n: usize, f: impl FnOnce(&mut [u8]) -> T) -> T {
    let take = n.min(SCRATCH_BUDGET);
    {
        let mut used = lock(&SCRATCH_USED);
        while *used > 0 && *used + take > SCRATCH_BUDGET {
            used = SCRATCH_FREED
                .wait_timeout(used, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *used += take;
    }
    let mut v = vec![0u8; n];
    let r = f(&mut v);
    drop(v);
    *lock(&SCRATCH_USED) -= take;
    SCRATCH_FREED.notify_all();
    r
}

/// Collects what a chunked read returned, for verification against the recorded buffer,
/// without holding more than the recorded buffer's size (plus one byte: any more is a
/// difference anyway).
struct Collect {
    keep: Vec<u8>,
    limit: usize,
    hash: Option<blake3::Hasher>,
    total: u64,
    /// Every byte, for the outcome digest (see [`Outcome::digest`]).
    all: Option<blake3::Hasher>,
}

impl Collect {
    fn new(expected: &ArgValue, full: bool, digest: bool) -> Collect {
        let (limit, hash) = match expected {
            ArgValue::Data(d) if full => (d.len() + 1, None),
            ArgValue::Hashed { .. } if full => (0, Some(blake3::Hasher::new())),
            _ => (0, None),
        };
        let all = digest.then(blake3::Hasher::new);
        Collect { keep: Vec::new(), limit, hash, total: 0, all }
    }
    fn push(&mut self, b: &[u8]) {
        let room = self.limit.saturating_sub(self.keep.len());
        self.keep.extend_from_slice(&b[..b.len().min(room)]);
        if let Some(h) = &mut self.hash {
            h.update(b);
        }
        if let Some(h) = &mut self.all {
            h.update(b);
        }
        self.total += b.len() as u64;
    }
    fn diff(self, what: &str, expected: &ArgValue) -> Option<Diff> {
        match (expected, self.hash) {
            (ArgValue::Hashed { len, blake3 }, Some(h)) => {
                let got = h.finalize();
                (*len != self.total || got.as_bytes() != blake3).then(|| {
                    Diff::new(
                        format!("{what} (digest)"),
                        format!("{len} bytes"),
                        format!("{} bytes, another digest", self.total),
                    )
                })
            }
            (ArgValue::Data(_), _) if self.limit > 0 => verify::data(what, expected, &self.keep),
            _ => None,
        }
    }
}

/// The iovecs that write `bufs` (which the caller keeps alive while they are used).
fn write_iovecs(bufs: &[ra_trace::Bytes]) -> Vec<libc::iovec> {
    bufs.iter()
        .map(|b| libc::iovec { iov_base: b.as_ptr() as *mut libc::c_void, iov_len: b.len() })
        .collect()
}

/// Bytes to write where the trace holds none (`--fill`).
pub fn fill(kind: Fill, seed: u64, n: usize) -> Vec<u8> {
    match kind {
        Fill::Pattern => {
            let pat = b"reanimator replay fill ";
            (0..n).map(|i| pat[i % pat.len()]).collect()
        }
        Fill::Random => {
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut v = Vec::with_capacity(n + 8);
            while v.len() < n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                v.extend_from_slice(&x.to_le_bytes());
            }
            v.truncate(n);
            v
        }
    }
}

/// One call being replayed.
pub struct Call<'a> {
    sh: &'a Shared,
    p: &'a Arc<Process>,
    ev: &'a Event,
    pl: &'a Placement,
    diffs: Vec<Diff>,
    warn: Option<String>,
    full: bool,
    /// The argument whose absence stopped the call (see [`Call::i`]).
    missing: std::cell::Cell<Option<&'static str>>,
    /// The returned data's digest, when an outcome sink wants it ([`Outcome::digest`]).
    seen: Option<blake3::Hasher>,
    /// Whether anything was fed to `seen`.
    saw_data: bool,
    /// A written buffer whose bytes the trace does not hold was written as fill data.
    filled: std::cell::Cell<bool>,
}

/// Replay `ev` for process `p`.
pub fn execute(sh: &Shared, p: &Arc<Process>, ev: &Event, pl: &Placement) -> Outcome {
    let mut c = Call {
        sh,
        p,
        ev,
        pl,
        diffs: Vec::new(),
        warn: None,
        full: sh.opts.verify == Verify::Full,
        missing: Default::default(),
        seen: sh.opts.outcomes.is_some().then(blake3::Hasher::new),
        saw_data: false,
        filled: Default::default(),
    };
    let policy = ev.def.map_or(ReplayPolicy::Skip, |d| d.replay);
    let act = c.run();
    let (mode, res, rule) = match act {
        Ok(Act::Issued(v)) => (Mode::Issued, Ok(v), Rule::Exact),
        Ok(Act::IssuedLoose(v)) => (Mode::Issued, Ok(v), Rule::Success),
        Ok(Act::Emulated(v)) => (Mode::Emulated, Ok(v), Rule::Exact),
        Ok(Act::EmulatedFailed(e)) => (Mode::Emulated, Err(e), Rule::Exact),
        Ok(Act::EmulatedAsRecorded) => (Mode::Emulated, c.recorded(), Rule::Recorded),
        Ok(Act::Sim) => {
            c.simulate_fds();
            (Mode::Simulated, c.recorded(), Rule::Recorded)
        }
        Ok(Act::Skip) => (Mode::Skipped, c.recorded(), Rule::Recorded),
        Ok(Act::IssuedUnknown) => (Mode::Issued, c.recorded(), Rule::Recorded),
        Err(SIMULATED) => {
            c.simulate_fds();
            (Mode::Simulated, c.recorded(), Rule::Recorded)
        }
        Err(MISSING) => {
            let arg = c.missing.get().unwrap_or("?");
            c.warn(format!(
                "{}: argument `{arg}` is not in the trace: not replayed",
                ev.def.map_or("?", |d| d.name)
            ));
            (Mode::Skipped, c.recorded(), Rule::Recorded)
        }
        Err(e) => {
            let mode = if policy.is_emulate() { Mode::Emulated } else { Mode::Issued };
            (mode, Err(e), Rule::Exact)
        }
    };
    if c.filled.get() && c.warn.is_none() {
        c.warn(
            "written data not in the trace (only its digest: record --data hash, or a buffer \
             over 256 MiB; or not captured): --fill bytes written, so reads of them and the \
             final tree can differ",
        );
    }
    let digest = match c.seen {
        Some(h) if c.saw_data => Some(*h.finalize().as_bytes()),
        _ => None,
    };
    Outcome { mode, res, rule, diffs: c.diffs, warn: c.warn, digest }
}

impl Call<'_> {
    fn rec_ok(&self) -> bool {
        ok(self.ev)
    }
    fn rec_ret(&self) -> i64 {
        self.ev.ret.unwrap_or(-1)
    }
    /// The recorded result as a replay result.
    fn recorded(&self) -> R {
        if self.rec_ok() {
            Ok(self.rec_ret())
        } else {
            Err(self.ev.errno.filter(|&e| e != 0).unwrap_or(libc::EIO))
        }
    }
    /// An integer argument that only some calls of a handler's family have (`flags` of
    /// `linkat` but not `link`): `None` when the registry entry has no such argument;
    /// [`MISSING`] when it has it but the trace does not.
    fn opt_i(&self, name: &'static str) -> Result<Option<i64>, i32> {
        match self.ev.def.and_then(|d| d.arg(name)) {
            None => Ok(None),
            Some(_) => self.i(name).map(Some),
        }
    }
    /// A flag word only some calls of the family have: 0 where the call has none.
    fn flags_or_0(&self, name: &'static str) -> Result<i64, i32> {
        Ok(self.opt_i(name)?.unwrap_or(0))
    }
    /// An integer argument. A trace without it (a column the recorder did not write) gives
    /// [`MISSING`]: the call is then not replayed, and the report says which argument.
    fn i(&self, name: &'static str) -> Result<i64, i32> {
        self.ev.arg(name).and_then(ArgValue::as_int).ok_or_else(|| {
            self.missing.set(Some(name));
            MISSING
        })
    }
    fn arg(&self, name: &str) -> &ArgValue {
        self.ev.arg(name).unwrap_or(&ArgValue::Absent)
    }
    fn path(&self, name: &str) -> Result<&[u8], i32> {
        path_arg(self.ev, name).ok_or(libc::EFAULT)
    }
    fn cstring_arg(&self, name: &str) -> Result<CString, i32> {
        cstr(self.path(name)?)
    }
    fn warn(&mut self, w: impl Into<String>) {
        self.warn = Some(w.into());
    }
    fn diff(&mut self, d: Option<Diff>) {
        if let Some(d) = d {
            self.diffs.push(d);
        }
    }
    /// Feed returned data to the outcome digest (a no-op without an outcome sink). Each part
    /// is length-prefixed, so the parts' boundaries count.
    fn saw(&mut self, part: &[u8]) {
        if let Some(h) = &mut self.seen {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
            self.saw_data = true;
        }
    }
    fn check_data(&mut self, name: &str, got: &[u8]) {
        self.saw(got);
        if self.full {
            let d = verify::data(name, self.arg(name), got);
            self.diff(d);
        }
    }
    /// Bytes to write for the in-buffer `name` of `len` bytes: the recorded ones, else fill
    /// data, at most as much as one call of the kernel moves (MAX_RW_COUNT), whatever a
    /// damaged trace's count says.
    fn payload(&self, name: &str, len: usize) -> Cow<'_, [u8]> {
        const MAX_RW_COUNT: usize = 0x7fff_f000;
        let len = len.min(MAX_RW_COUNT);
        match self.arg(name) {
            ArgValue::Data(d) => Cow::Borrowed(&d[..]),
            a => {
                if matches!(a, ArgValue::Hashed { .. } | ArgValue::NotCaptured) {
                    self.filled.set(true);
                }
                Cow::Owned(fill(self.sh.opts.fill, self.ev.unique_id, len))
            }
        }
    }

    // ---- descriptors and paths -------------------------------------------------------------

    /// The table entry for `fd`. A descriptor the trace never opened but used successfully
    /// (inherited, or opened by an uncaptured call) becomes a simulated one.
    fn entry(&mut self, fd: i64) -> Result<FdEntry, i32> {
        let fd = i32::try_from(fd).map_err(|_| libc::EBADF)?;
        let mut t = lock(&self.p.fds);
        if let Some(e) = t.get(fd) {
            return Ok(e.clone());
        }
        if self.rec_ok() && fd >= 0 {
            let e = FdEntry {
                file: OpenFile::new(Handle::Simulated("unknown"), Vec::new(), 0),
                cloexec: false,
            };
            t.insert(fd, e.clone());
            drop(t);
            self.warn(format!("descriptor {fd} used but never opened in the trace: simulated"));
            return Ok(e);
        }
        Err(libc::EBADF)
    }
    fn file(&mut self, name: &'static str) -> Result<Arc<OpenFile>, i32> {
        let fd = self.i(name)?;
        Ok(self.entry(fd)?.file)
    }

    /// The logical path a (dirfd, path) pair names.
    fn abs(&mut self, dirfd: Option<i64>, path: &[u8]) -> Result<Vec<u8>, i32> {
        // The kernel copies the name before it looks at the directory descriptor: an empty or
        // over-long name fails first, whatever dirfd is.
        if path.is_empty() {
            return Err(libc::ENOENT);
        }
        // (A file-system trace's paths are whole paths from its mount, not a program's: a
        // deep tree's are longer than PATH_MAX, and replay resolves them in steps.)
        if path.len() >= PATH_MAX && self.ev.extra_bytes(ra_trace::FS_OPERATION).is_none() {
            return Err(libc::ENAMETOOLONG);
        }
        if let Some((fd, rest)) = proc_fd_path(path) {
            // /proc/self/fd/N/...: the program's own descriptor N (glibc's fchmodat idiom).
            let f = self.entry(fd.into())?.file;
            let Some(raw) = f.raw() else { return Err(SIMULATED) };
            let base = self.sh.root.logical_path_or(raw, &f.path).ok_or(libc::ENOENT)?;
            return Ok(if rest.is_empty() { base } else { join(&base, rest) });
        }
        if path.starts_with(b"/") {
            return Ok(path.to_vec());
        }
        match dirfd {
            None | Some(-100) => Ok(join(&lock(&self.p.fs).cwd, path)),
            Some(fd) => {
                let f = self.entry(fd)?.file;
                let Some(raw) = f.raw() else { return Err(SIMULATED) };
                // (A directory deeper than PATH_MAX: the path it was opened by.)
                let base = self.sh.root.logical_path_or(raw, &f.path).ok_or(libc::ENOENT)?;
                Ok(join(&base, path))
            }
        }
    }
    fn dirfd(&self, name: &str) -> Option<i64> {
        self.ev.arg(name).and_then(ArgValue::as_int)
    }
    /// `O_PATH` fd of (dirfd, path); `AT_EMPTY_PATH` with an empty path names dirfd itself.
    fn locate(
        &mut self,
        dirfd: Option<i64>,
        path: &[u8],
        follow: bool,
        empty_ok: bool,
    ) -> Result<Located, i32> {
        if path.is_empty() && empty_ok {
            let f = match dirfd {
                None | Some(-100) => {
                    let cwd = lock(&self.p.fs).cwd.clone();
                    return Ok(Located::Own(self.sh.root.locate(&cwd, true)?));
                }
                Some(fd) => self.entry(fd)?.file,
            };
            return match f.raw() {
                Some(_) => Ok(Located::File(f)),
                None => Err(SIMULATED),
            };
        }
        if let Some((fd, rest)) = proc_fd_path(path) {
            if rest.is_empty() && follow {
                // The magic link leads to the open file itself, whatever its name now.
                let f = self.entry(fd.into())?.file;
                return if f.raw().is_some() { Ok(Located::File(f)) } else { Err(SIMULATED) };
            }
        }
        let abs = self.abs(dirfd, path)?;
        Ok(Located::Own(self.sh.root.locate(&abs, follow)?))
    }
    fn parent(&mut self, dirfd: Option<i64>, path: &[u8]) -> Result<(OwnedFd, CString), i32> {
        let abs = self.abs(dirfd, path)?;
        self.sh.root.parent(&abs)
    }
    /// True when the call's path argument(s) lead into /proc, /sys or /dev.
    fn special_paths(&mut self) -> bool {
        let Some(def) = self.ev.def else { return false };
        let mut dirfd = None;
        for (a, v) in def.args.iter().zip(&self.ev.args) {
            match a.kind {
                ra_syscalls::ArgKind::DirFd => dirfd = v.as_int(),
                ra_syscalls::ArgKind::Path
                    if !(def.replay.handler() == Some(H::Symlink) && a.name == "target") =>
                {
                    if let ArgValue::Data(d) = v {
                        let d = d.strip_suffix(&[0]).unwrap_or(d);
                        if proc_fd_path(d).is_some() {
                            continue;
                        }
                        if let Ok(abs) = self.abs(dirfd, d) {
                            if is_special(&abs) {
                                return true;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// Put a new real descriptor at the recorded number; the replay's result is the number
    /// the table would have allocated (lowest free >= `min`), so a differing recorded number
    /// shows up as a return-value mismatch.
    fn install(&mut self, fd: OwnedFd, path: Vec<u8>, cloexec: bool, min: i32) -> Result<i64, i32> {
        let st = sys::fstat_at(fd.as_raw_fd())?;
        let kind = st.st_mode & libc::S_IFMT;
        if kind == libc::S_IFCHR || kind == libc::S_IFBLK {
            self.warn("device node inside the replay root not opened (sandbox)");
            return Err(libc::EACCES);
        }
        let handle = if kind == libc::S_IFIFO { Handle::Pipe(fd) } else { Handle::File(fd) };
        let f = OpenFile::new(handle, path, 0);
        Ok(self.place(f, cloexec, min))
    }
    fn place(&mut self, f: Arc<OpenFile>, cloexec: bool, min: i32) -> i64 {
        let mut t = lock(&self.p.fds);
        let mut predicted = t.lowest_free(min);
        if self.rec_ok() {
            let at = self.rec_ret() as i32;
            if at >= min && self.either_order(&t, &[at]) {
                predicted = at;
            }
            let old = t.insert(at, FdEntry { file: f, cloexec });
            drop(t);
            drop(old);
        }
        i64::from(predicted)
    }
    /// Threads of one process allocating descriptors at the same time get them in either
    /// order: there the recorded numbers need only be free, not the lowest.
    fn either_order(&self, t: &FdTable, recorded: &[i32]) -> bool {
        self.pl.threads > 1 && recorded.iter().all(|&n| t.get(n).is_none())
    }
    /// After a simulated call: new descriptors it returned exist, simulated.
    fn simulate_fds(&mut self) {
        let Some(def) = self.ev.def else { return };
        if !self.rec_ok() {
            return;
        }
        let cloexec = self.new_fd_cloexec();
        let sim = || FdEntry {
            file: OpenFile::new(Handle::Simulated("simulated"), Vec::new(), 0),
            cloexec,
        };
        if self.ev.makes_fd() {
            lock(&self.p.fds).insert(self.rec_ret() as i32, sim());
        }
        if let Some((a, b)) = fd_pair(self.ev) {
            let mut t = lock(&self.p.fds);
            t.insert(a, sim());
            t.insert(b, sim());
        }
        if def.replay.handler() == Some(H::Close) {
            let Ok(fd) = self.i("fd") else { return };
            let old = lock(&self.p.fds).remove(fd as i32);
            drop(old);
        }
        self.pass_descriptors();
    }

    /// A message that carried descriptors (`SCM_RIGHTS`): a `sendmsg` hands the open files
    /// its descriptors name to the replay's messages in flight; the `recvmsg` that received
    /// them (the planner's match, [`crate::planner::RIGHTS_FROM`]) puts them at the numbers
    /// it recorded. A file the model does not know, or a message without its sender, gives
    /// a simulated descriptor.
    fn pass_descriptors(&self) {
        let Some((received, fds)) = passed_descriptors(self.ev) else { return };
        if !received {
            let t = lock(&self.p.fds);
            let files = fds.iter().map(|&n| t.get(n).map(|e| e.file.clone())).collect();
            drop(t);
            lock(&self.sh.in_flight).send(self.ev.unique_id, files);
            return;
        }
        let sent = self
            .ev
            .extra_int(crate::planner::RIGHTS_FROM)
            .map(|id| lock(&self.sh.in_flight).receive(id as u64))
            .unwrap_or_default();
        let cloexec =
            self.flags_or_0("flags").unwrap_or(0) & i64::from(libc::MSG_CMSG_CLOEXEC) != 0;
        let mut replaced = Vec::new();
        let mut t = lock(&self.p.fds);
        for (i, n) in fds.into_iter().enumerate() {
            let file = sent
                .get(i)
                .cloned()
                .flatten()
                .unwrap_or_else(|| OpenFile::new(Handle::Simulated("received"), Vec::new(), 0));
            replaced.extend(t.insert(n, FdEntry { file, cloexec }));
        }
        drop(t);
        self.closed(&replaced);
    }

    /// True when a descriptor the call creates is close-on-exec: one of its flag arguments
    /// has its set's `*_CLOEXEC` flag (`O_CLOEXEC`, `SOCK_CLOEXEC`, `EFD_CLOEXEC`,
    /// `MFD_CLOEXEC`, ...), as the registry's flag tables name them.
    fn new_fd_cloexec(&self) -> bool {
        let Some(def) = self.ev.def else { return false };
        if def.ret != Ret::Fd && self.ev.makes_fd() {
            // ioctl(TIOCGPTPEER): its third argument is the new descriptor's open flags.
            return self.ev.arg("argp").and_then(ArgValue::as_int).unwrap_or(0)
                & i64::from(libc::O_CLOEXEC)
                != 0;
        }
        def.args.iter().zip(&self.ev.args).any(|(a, v)| match (a.kind, v.as_int()) {
            (ra_syscalls::ArgKind::Flags(set), Some(x)) => set.entries.iter().any(|f| {
                f.name.ends_with("_CLOEXEC")
                    && !f.name.starts_with("MSG_")
                    && !f.name.starts_with("CLOSE_RANGE")
                    && !f.name.starts_with("F_")
                    && f.is_set(x as u64)
            }),
            _ => false,
        })
    }

    /// A name the call is given (a path, or another C string: `memfd_create`'s name, an
    /// xattr name, a mount's source) that the recorder could not capture, and why: not
    /// captured at all; cut short (its copy faulted before the NUL: the event says
    /// `buffer_not_captured`); or, for a path, recorded empty in a call that succeeded
    /// although the kernel answers `ENOENT` for an empty path (no `AT_EMPTY_PATH`). Issuing
    /// the call would invent its argument.
    fn uncaptured_path(&self) -> Option<(&'static str, &'static str)> {
        let def = self.ev.def?;
        let given_name = |k: ra_syscalls::ArgKind| k.is_c_string() && !k.is_output();
        let incomplete = def.args.iter().zip(&self.ev.args).find_map(|(a, v)| match v {
            ArgValue::NotCaptured if given_name(a.kind) => Some((a.name, "not captured")),
            ArgValue::Data(d)
                if given_name(a.kind) && self.ev.buffer_not_captured && d.last() != Some(&0) =>
            {
                Some((a.name, "cut short (its copy faulted)"))
            }
            _ => None,
        });
        if incomplete.is_some() || !self.rec_ok() {
            return incomplete;
        }
        let empty_ok = self.ev.args.iter().zip(def.args).any(|(v, a)| {
            matches!(a.kind, ra_syscalls::ArgKind::Flags(_))
                && a.name == "flags"
                && v.as_int().is_some_and(|f| f & i64::from(libc::AT_EMPTY_PATH) != 0)
        });
        if empty_ok {
            return None;
        }
        def.args.iter().zip(&self.ev.args).find_map(|(a, v)| match (a.kind, v) {
            (ra_syscalls::ArgKind::Path, ArgValue::Data(d))
                if d.strip_suffix(&[0]).unwrap_or(d).is_empty() =>
            {
                Some((a.name, "empty although the call succeeded"))
            }
            _ => None,
        })
    }

    // ---- the calls -----------------------------------------------------------------------

    fn run(&mut self) -> Result<Act, i32> {
        let Some(def) = self.ev.def else { return Ok(Act::Skip) };
        let handler = match def.replay {
            ReplayPolicy::Skip => return Ok(Act::Skip),
            ReplayPolicy::Simulate => return Ok(Act::Sim),
            ReplayPolicy::Reissue(h) | ReplayPolicy::Emulate(h) => h,
        };
        if !self.pl.inherited && self.special_paths() {
            return Ok(Act::Sim);
        }
        // A call without a recorded result: its thread ended inside it (exit_group while it
        // blocked, or killed) or the trace was cut. What it did is unknown: it is not issued.
        // (Exits never return: theirs is no missing result.)
        if handler != H::Exit && self.ev.ended_inside() {
            if handler == H::Write {
                if let Some(act) = self.unfinished_pipe_write() {
                    return Ok(act);
                }
            }
            self.warn(format!(
                "{}: no recorded result (its thread ended inside the call): not replayed",
                def.name
            ));
            return Ok(Act::Skip);
        }
        if let Some(why) = self.ev.errno.and_then(unreproducible) {
            self.warn(format!(
                "{}: recorded {} ({why}): not issued, the recorded failure stands",
                def.name,
                verify::errno_str(self.ev.errno.unwrap_or(0))
            ));
            return Ok(Act::Sim);
        }
        if let Some((arg, why)) = self.uncaptured_path() {
            self.warn(format!(
                "{}: `{arg}` {why}: the recorder did not capture the argument; not issued",
                def.name
            ));
            if handler == H::Exec {
                // Its effect on the process still happens: close-on-exec descriptors go.
                self.exec_effect();
            }
            return Ok(Act::Sim);
        }
        let name = def.name;
        match handler {
            H::Read => self.read(def.arg("offset").is_some()),
            H::Write => self.write(def.arg("offset").is_some()),
            H::ReadV => self.readv(),
            H::WriteV => self.writev(),
            H::Vmsplice => self.vmsplice(),
            H::Tee => self.tee(),
            H::AsyncIo if def.uring == Some(UringCall::Setup) => self.uring_setup(),
            H::AsyncIo if def.uring == Some(UringCall::Register) => self.uring_register(),
            H::AsyncIo if def.uring == Some(UringCall::Enter) => {
                self.warn(
                    "io_uring_enter: simulated; the requests it submitted are replayed from \
                     their io_uring_op records (the eBPF recorder's): a trace without them \
                     does not hold its I/O, and the files it touched can then differ at the end",
                );
                Ok(Act::Sim)
            }
            H::AsyncIo => {
                self.warn(
                    "io_uring or Linux AIO: the reads and writes they do run outside system \
                     calls, where no recorder sees them: the trace does not hold them, and \
                     they are not replayed (the files they touch can differ at the end)",
                );
                Ok(Act::Sim)
            }
            H::UringOp => self.uring_op(),
            H::MmapPage => self.mmap_page(def.arg("buf").is_some_and(|(_, a)| !a.kind.is_output())),
            H::Seek => {
                let f = self.file("fd")?;
                let Some(raw) = f.raw() else { return Ok(Act::Sim) };
                let (off, whence) = (self.i("offset")?, self.i("whence")?);
                let r = sys::raw(libc::SYS_lseek, &[raw.into(), off, whence])?;
                if r == 0 {
                    *lock(&f.dir) = Default::default();
                }
                Ok(Act::Issued(r))
            }
            H::FdInts => {
                let f = self.file("fd")?;
                let Some(raw) = f.raw() else { return Ok(Act::Sim) };
                let nr =
                    ra_syscalls::arch::X86_64.number(name).ok_or(libc::ENOSYS)? as libc::c_long;
                // Every argument after the fd is an integer.
                let mut a = vec![i64::from(raw)];
                for x in def.args.iter().skip(1) {
                    a.push(self.i(x.name)?);
                }
                Ok(Act::Issued(sys::raw(nr, &a)?))
            }
            H::Sync => Ok(Act::Issued(sys::raw(libc::SYS_sync, &[])?)),
            H::Flock => self.flock(),
            H::Ioctl => self.ioctl(),
            H::Copy => self.copy(def),
            H::Open => self.open(def),
            H::MemfdCreate => {
                // The kernel checks the flags before it reads the name: where the trace has no
                // name (a bad pointer), the kernel's own check of the flags answers first.
                let n = match self.cstring_arg("name") {
                    Err(e) => {
                        return Err(sys::memfd_create(c"", self.i("flags")? as u32)
                            .err()
                            .unwrap_or(e))
                    }
                    Ok(n) => n,
                };
                let fd = sys::memfd_create(&n, (self.i("flags")? as u32) | libc::MFD_CLOEXEC)?;
                let cloexec = self.i("flags")? as u32 & libc::MFD_CLOEXEC != 0;
                Ok(Act::Issued(self.install(fd, b"memfd:".to_vec(), cloexec, 0)?))
            }
            H::Stat => self.stat(def),
            H::Statfs => {
                let got = if def.arg("fd").is_some() {
                    let f = self.file("fd")?;
                    let Some(raw) = f.raw() else { return Ok(Act::Sim) };
                    sys::fstatfs_bytes(raw)?
                } else {
                    let p = self.path("path")?.to_vec();
                    let l = self.locate(None, &p, true, false)?;
                    sys::fstatfs_bytes(l.fd())?
                };
                if let Some(s) = ra_trace::structs::Statfs::decode(&got) {
                    // What verification compares: the type and the name length.
                    let mut b = s.fs_type.to_le_bytes().to_vec();
                    b.extend_from_slice(&s.namelen.to_le_bytes());
                    self.saw(&b);
                }
                if self.full {
                    self.diffs.extend(verify::statfs(self.arg("buf"), &got));
                }
                Ok(Act::Issued(0))
            }
            H::Access => {
                let p = self.path("pathname")?.to_vec();
                let flags = self.flags_or_0("flags")? as i32;
                // The kernel's checks before any lookup (do_faccessat): the mode's bits, then
                // the flags' (stress-ng's access stressor passes invalid ones on purpose).
                let valid = libc::AT_EACCESS | libc::AT_SYMLINK_NOFOLLOW | libc::AT_EMPTY_PATH;
                let mode = self.i("mode")?;
                if mode & !0o7 != 0 || flags & !valid != 0 {
                    return Err(libc::EINVAL);
                }
                let follow = flags & libc::AT_SYMLINK_NOFOLLOW == 0;
                let l =
                    self.locate(self.dirfd("dirfd"), &p, follow, flags & libc::AT_EMPTY_PATH != 0)?;
                Ok(Act::Issued(sys::faccessat2(l.fd(), mode as i32, flags & libc::AT_EACCESS)?))
            }
            H::Getdents => self.getdents(def.has_struct(Struct::Dirents)),
            H::Mkdir => {
                let p = self.path("pathname")?.to_vec();
                let (dir, n) = self.parent(self.dirfd("dirfd"), &p)?;
                let mode = self.i("mode")? as u32 & !lock(&self.p.fs).umask;
                Ok(Act::Issued(sys::mkdirat(dir.as_raw_fd(), &n, mode)?))
            }
            H::Unlink => {
                let p = self.path("pathname")?.to_vec();
                // rmdir implies AT_REMOVEDIR, unlink no flag, unlinkat gives them.
                let flags = match def.implied_flags {
                    Some(f) => f as i32,
                    None if def.arg("flags").is_none() => 0,
                    None => self.i("flags")? as i32,
                };
                // "/" itself: the root of the recording machine is a mount point (EBUSY to
                // rmdir, a directory to unlink); the replay root must not be removed either.
                if p.starts_with(b"/") && normalize(&p) == b"/" {
                    return Err(if flags & libc::AT_REMOVEDIR != 0 {
                        libc::EBUSY
                    } else {
                        libc::EISDIR
                    });
                }
                let (dir, n) = self.parent(self.dirfd("dirfd"), &p)?;
                Ok(Act::Issued(sys::unlinkat(dir.as_raw_fd(), &n, flags)?))
            }
            H::Mknod => {
                let mode = self.i("mode")? as u32;
                let kind = mode & libc::S_IFMT;
                // The kernel checks the kind of node before it looks at the path or dirfd
                // (may_mknod): a directory is EPERM, an unknown kind EINVAL (stress-ng's
                // mknod stressor asks for a directory with a bad dirfd).
                match kind {
                    libc::S_IFDIR => return Err(libc::EPERM),
                    0
                    | libc::S_IFREG
                    | libc::S_IFCHR
                    | libc::S_IFBLK
                    | libc::S_IFIFO
                    | libc::S_IFSOCK => {}
                    _ => return Err(libc::EINVAL),
                }
                let p = self.path("pathname")?.to_vec();
                let (dir, n) = self.parent(self.dirfd("dirfd"), &p)?;
                let masked = mode & !lock(&self.p.fs).umask;
                if kind == libc::S_IFCHR || kind == libc::S_IFBLK {
                    if self.sh.opts.special {
                        let dev = self.i("dev")? as u64;
                        return Ok(Act::Issued(sys::mknodat(dir.as_raw_fd(), &n, masked, dev)?));
                    }
                    // A device node in the root would open a real device to the calls that
                    // follow: an empty regular file with its permissions stands in for it (as
                    // --init's placeholders do), so that its chmod, chown and unlink replay.
                    self.warn(
                        "device node made an empty regular file in the replay root \
                         (--allow-special creates it)",
                    );
                    let placeholder = libc::S_IFREG | (masked & 0o777);
                    return Ok(Act::Emulated(sys::mknodat(dir.as_raw_fd(), &n, placeholder, 0)?));
                }
                Ok(Act::Issued(sys::mknodat(dir.as_raw_fd(), &n, masked, 0)?))
            }
            H::Link => {
                let flags = self.flags_or_0("flags")? as i32;
                // The kernel refuses unknown flags before it reads either name (do_linkat).
                if flags & !(libc::AT_SYMLINK_FOLLOW | libc::AT_EMPTY_PATH) != 0 {
                    return Err(libc::EINVAL);
                }
                let old = self.path("oldpath")?.to_vec();
                let new = self.path("newpath")?.to_vec();
                let follow = flags & libc::AT_SYMLINK_FOLLOW != 0;
                let src = self.locate(
                    self.dirfd("olddirfd"),
                    &old,
                    follow,
                    flags & libc::AT_EMPTY_PATH != 0,
                )?;
                let (dir, n) = self.parent(self.dirfd("newdirfd"), &new)?;
                let r = match sys::link_fd(src.fd(), dir.as_raw_fd(), &n) {
                    Err(libc::ENOENT) if !self.sh.is_root => {
                        sys::link_proc(src.fd(), dir.as_raw_fd(), &n)
                    }
                    r => r,
                };
                Ok(Act::Issued(r?))
            }
            H::Symlink => {
                let target = self.cstring_arg("target")?;
                let p = self.path("linkpath")?.to_vec();
                let (dir, n) = self.parent(self.dirfd("newdirfd"), &p)?;
                Ok(Act::Issued(sys::symlinkat(&target, dir.as_raw_fd(), &n)?))
            }
            H::Readlink => {
                let p = self.path("pathname")?.to_vec();
                let l = self.locate(self.dirfd("dirfd"), &p, false, true)?;
                // What is not a symlink: EINVAL, but ENOENT for an empty path (the kernel's
                // do_readlinkat, for readlink("") as for readlinkat(fd, ""): Python's
                // test_subprocess).
                if sys::fstat_at(l.fd())?.st_mode & libc::S_IFMT != libc::S_IFLNK {
                    return Err(if p.is_empty() { libc::ENOENT } else { libc::EINVAL });
                }
                let size = (self.i("bufsiz")?.max(0) as usize).min(1 << 20);
                let (r, got) = with_buf(size, |b| {
                    let r = sys::readlink_fd(l.fd(), b);
                    (r, b[..r.unwrap_or(0).max(0) as usize].to_vec())
                });
                let r = r?;
                self.check_data("buf", &got);
                Ok(Act::Issued(r))
            }
            H::Rename => {
                let old = self.path("oldpath")?.to_vec();
                let new = self.path("newpath")?.to_vec();
                let (od, on) = self.parent(self.dirfd("olddirfd"), &old)?;
                let (nd, nn) = self.parent(self.dirfd("newdirfd"), &new)?;
                let flags = self.flags_or_0("flags")? as u32;
                Ok(Act::Issued(sys::renameat2(od.as_raw_fd(), &on, nd.as_raw_fd(), &nn, flags)?))
            }
            H::Chmod => {
                let p = self.path("pathname")?.to_vec();
                let l = self.locate(self.dirfd("dirfd"), &p, true, false)?;
                Ok(Act::Issued(sys::fchmodat2(l.fd(), self.i("mode")? as u32, 0)?))
            }
            H::Fchmod => {
                let f = self.file("fd")?;
                let Some(raw) = f.raw() else { return Ok(Act::Sim) };
                Ok(Act::Issued(sys::raw(libc::SYS_fchmod, &[raw.into(), self.i("mode")?])?))
            }
            H::Chown => {
                let p = self.path("pathname")?.to_vec();
                let flags = self.flags_or_0("flags")? as i32;
                let follow = !def.nofollow && flags & libc::AT_SYMLINK_NOFOLLOW == 0;
                let l =
                    self.locate(self.dirfd("dirfd"), &p, follow, flags & libc::AT_EMPTY_PATH != 0)?;
                Ok(Act::Issued(sys::fchownat(
                    l.fd(),
                    self.i("owner")? as u32,
                    self.i("group")? as u32,
                    0,
                )?))
            }
            H::Fchown => {
                let f = self.file("fd")?;
                let Some(raw) = f.raw() else { return Ok(Act::Sim) };
                let (u, g) = (self.i("owner")? as u32, self.i("group")? as u32);
                Ok(Act::Issued(sys::raw(libc::SYS_fchown, &[raw.into(), u.into(), g.into()])?))
            }
            H::Utimes => self.utimes(def),
            H::Truncate => {
                let p = self.path("path")?.to_vec();
                let abs = self.abs(None, &p)?;
                let fd = self.sh.root.open(
                    &abs,
                    libc::O_WRONLY | libc::O_NONBLOCK | libc::O_NOCTTY,
                    0,
                )?;
                Ok(Act::Issued(sys::raw(
                    libc::SYS_ftruncate,
                    &[fd.as_raw_fd().into(), self.i("length")?],
                )?))
            }
            H::Xattr => self.xattr(def),
            H::Close => {
                let fd = self.i("fd")? as i32;
                let old = lock(&self.p.fds).remove(fd);
                match old {
                    Some(e) => {
                        self.closed(&[e]);
                        Ok(Act::Emulated(0))
                    }
                    None => Err(libc::EBADF),
                }
            }
            H::CloseRange => {
                // The kernel's checks (unsigned ints): known flags, then first <= last.
                // Python's test_subprocess passes a range that ends before it starts: EINVAL
                // (the replayer's table lookup had panicked on it).
                const CLOSE_RANGE_UNSHARE: i64 = 2;
                const CLOSE_RANGE_CLOEXEC: i64 = 4;
                let (first, last) = (self.i("first")? as u32, self.i("last")? as u32);
                let flags = self.i("flags")?;
                if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 || first > last {
                    return Err(libc::EINVAL);
                }
                let first = first.min(i32::MAX as u32) as i32;
                let last = last.min(i32::MAX as u32) as i32;
                if flags & CLOSE_RANGE_CLOEXEC != 0 {
                    lock(&self.p.fds).cloexec_range(first, last);
                } else {
                    let gone = lock(&self.p.fds).remove_range(first, last);
                    self.closed(&gone);
                }
                Ok(Act::Emulated(0))
            }
            H::Dup => self.dup(def),
            H::Fcntl => self.fcntl(),
            H::Pipe => self.pipe(),
            H::Mmap => self.mmap(),
            H::Munmap => {
                lock(&self.p.mm).unmap(self.i("addr")? as u64, self.i("length")? as u64);
                Ok(Act::Emulated(0))
            }
            H::Msync => {
                let (addr, len) = (self.i("addr")? as u64, self.i("length")? as u64);
                let real = lock(&self.p.mm).find(addr).and_then(|(m, off)| {
                    let (a, rl) = m.real?;
                    let off = off as usize;
                    (off < rl).then(|| (a + off, (len as usize).min(rl - off)))
                });
                match real {
                    Some((a, l)) => Ok(Act::Issued(sys::msync(
                        a & !4095,
                        l + (a & 4095),
                        self.i("flags")? as i32,
                    )?)),
                    None => Ok(Act::EmulatedAsRecorded),
                }
            }
            H::MemAsRecorded => Ok(Act::EmulatedAsRecorded),
            H::Mremap => self.mremap(),
            H::Clone => {
                if let Some((child, flags)) = self.pl.child {
                    self.sh.procs.insert(child, self.p.clone_with(flags));
                }
                Ok(Act::EmulatedAsRecorded)
            }
            H::Exec => self.exec(def),
            H::Exit => Ok(Act::EmulatedAsRecorded),
            H::Chdir => {
                let p = self.path("path").or_else(|_| self.path("pathname"))?.to_vec();
                let abs = self.abs(None, &p)?;
                let fd = self.sh.root.open(&abs, libc::O_PATH | libc::O_DIRECTORY, 0)?;
                let logical =
                    self.sh.root.logical_path_of(fd.as_raw_fd()).unwrap_or_else(|| normalize(&abs));
                lock(&self.p.fs).cwd = logical;
                Ok(Act::Emulated(0))
            }
            H::Fchdir => {
                let f = self.file("fd")?;
                let Some(raw) = f.raw() else { return Ok(Act::Sim) };
                let st = sys::fstat_at(raw)?;
                if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
                    return Err(libc::ENOTDIR);
                }
                let logical = self.sh.root.logical_path_or(raw, &f.path).ok_or(libc::ENOENT)?;
                lock(&self.p.fs).cwd = logical;
                Ok(Act::Emulated(0))
            }
            H::Umask => {
                let mut fs = lock(&self.p.fs);
                let old = fs.umask;
                fs.umask = self.i("mask")? as u32 & 0o777;
                Ok(Act::Emulated(old.into()))
            }
            H::Bind => self.bind(),
            H::Chroot => {
                self.warn("chroot is not replayed (recorded result used)");
                Ok(Act::Sim)
            }
        }
    }

    fn read(&mut self, positional: bool) -> Result<Act, i32> {
        let f = self.file("fd")?;
        let count = (self.i("count")?.max(0) as usize).min(1 << 30);
        let off = self.flags_or_0("offset")?;
        let raw = match &f.handle {
            Handle::Simulated(_) => return Ok(Act::Sim),
            Handle::Pipe(_) => {
                let got = self.pipe_read(&f, count)?;
                self.check_data("buf", &got);
                return Ok(Act::Issued(got.len() as i64));
            }
            Handle::File(fd) => fd.as_raw_fd(),
        };
        if self.skip_read(raw, positional) {
            return Ok(Act::Skip);
        }
        let r = self.read_file(raw, count, positional.then_some(off))?;
        Ok(Act::Issued(r))
    }

    /// `--reads as-recorded|none`: whether this read of a file is left out. A skipped read
    /// without an offset moves the descriptor's position as the recorded read did, so that
    /// the calls after it read and write where they did.
    fn skip_read(&mut self, raw: RawFd, positional: bool) -> bool {
        let skip = match self.sh.opts.reads {
            crate::Reads::All => false,
            crate::Reads::None => true,
            crate::Reads::AsRecorded => self.ev.extra.iter().any(|(k, v)| {
                k == ra_trace::schema::CACHE_MISS_PAGES && *v == ra_trace::ExtraValue::Int(0)
            }),
        };
        // Only reads of regular files: a pipe's or a device's is not a page-cache read.
        if !skip || !sys::fstat_at(raw).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG) {
            return false;
        }
        if !positional && self.rec_ok() && self.rec_ret() > 0 {
            // SAFETY: lseek on a descriptor this replay owns.
            unsafe { libc::lseek(raw, self.rec_ret(), libc::SEEK_CUR) };
        }
        self.warn(match self.sh.opts.reads {
            crate::Reads::None => "read not replayed (--reads none)".to_string(),
            _ => "read not replayed: served by the page cache when recorded (--reads as-recorded)"
                .to_string(),
        });
        true
    }

    /// True (and a warning) when `buf` was recorded as a digest and `raw` is a file
    /// `--init=infer` recreated without its contents (a trace of `--data read=hash`): the
    /// replay's copy holds other bytes, so the digest cannot match and is not compared.
    fn content_unknown(&mut self, raw: RawFd) -> bool {
        let unknown = matches!(self.arg("buf"), ArgValue::Hashed { .. })
            && !self.sh.opts.unknown_content.is_empty()
            && sys::fstat_at(raw)
                .is_ok_and(|st| self.sh.opts.unknown_content.contains(&(st.st_dev, st.st_ino)));
        if unknown {
            self.warn(
                "read of a file recreated by --init=infer without its contents (the trace has \
                 only the read's digest): its data was not compared",
            );
        }
        unknown
    }

    /// `read`/`pread` of `count` bytes from a regular file (or directory, device...), in pieces
    /// of at most [`READ_CHUNK`]: on a regular file a short piece means end of file, so the
    /// pieces return what one call would, with memory bounded whatever `count` says. Checks
    /// the bytes against the recorded `buf`.
    fn read_file(&mut self, raw: RawFd, count: usize, mut off: Option<i64>) -> Result<i64, i32> {
        let full = self.full && !self.content_unknown(raw);
        let mut got = Collect::new(self.arg("buf"), full, self.seen.is_some());
        let mut total = 0usize;
        let regular = count > READ_CHUNK
            && sys::fstat_at(raw).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG);
        loop {
            let want = (count - total).min(READ_CHUNK);
            let r = with_buf(want, |b| {
                let r = match off {
                    Some(o) => sys::pread(raw, b, o),
                    None => sys::read(raw, b),
                };
                if let Ok(n) = r {
                    got.push(&b[..n.max(0) as usize]);
                }
                r
            });
            let n = match r {
                Ok(n) => n.max(0) as usize,
                Err(e) if total == 0 => return Err(e),
                Err(_) => break,
            };
            total += n;
            if let Some(o) = &mut off {
                *o += n as i64;
            }
            if !regular || n < want || total >= count {
                break;
            }
        }
        if let Some(h) = got.all.take() {
            self.saw(h.finalize().as_bytes());
        }
        let d = got.diff("buf", self.arg("buf"));
        self.diff(d);
        Ok(total as i64)
    }

    /// Read from a pipe exactly what the recorded call read (the amount a pipe read returns
    /// depends on timing), waiting at most the stall timeout.
    fn pipe_read(&mut self, f: &OpenFile, count: usize) -> Result<Vec<u8>, i32> {
        let Some(fd) = f.raw() else { return Err(libc::EBADF) };
        let want = if self.rec_ok() && self.rec_ret() > 0 {
            (self.rec_ret() as usize).min(count)
        } else {
            count.min(1 << 20)
        };
        let mut out = Vec::with_capacity(want);
        self.eagain_as_recorded(fd, libc::POLLIN)?;
        let deadline = self.pipe_deadline(f);
        loop {
            if !self.wait_ready(fd, libc::POLLIN, deadline) {
                if !out.is_empty() {
                    break;
                }
                if !f.stalled.swap(true, Ordering::Relaxed) {
                    self.warn(format!(
                        "pipe read stalled: no data within {:?}",
                        self.sh.opts.stall_timeout
                    ));
                }
                return Err(libc::ETIMEDOUT);
            }
            f.stalled.store(false, Ordering::Relaxed);
            let n = with_buf((want - out.len()).min(1 << 20), |b| {
                let r = sys::read(fd, b);
                if let Ok(n) = r {
                    out.extend_from_slice(&b[..n as usize]);
                }
                r
            });
            match n {
                Ok(0) => break,
                Ok(_) if out.len() >= want || self.rec_ret() <= 0 => break,
                Ok(_) | Err(libc::EAGAIN | libc::EINTR) => {}
                Err(e) if out.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        Ok(out)
    }

    /// A pipe read or write the recording saw fail with EAGAIN (non-blocking: nothing to read,
    /// no room): looked at once, not waited for — if it is so now too, EAGAIN at once.
    /// (EINTR never gets here: interrupted calls are not replayed.)
    fn eagain_as_recorded(&self, fd: RawFd, events: i16) -> Result<(), i32> {
        if self.ev.errno == Some(libc::EAGAIN) && !sys::poll1(fd, events, 0) {
            return Err(libc::EAGAIN);
        }
        Ok(())
    }

    /// A pipe end about to be read or written whole: EAGAIN at once where the recording saw it
    /// ([`Call::eagain_as_recorded`]), else wait until it is ready, at most until `deadline`
    /// (then ETIMEDOUT, with the warning `stalled`).
    fn pipe_ready(
        &mut self,
        f: &OpenFile,
        events: i16,
        stalled: impl FnOnce() -> String,
    ) -> Result<(), i32> {
        let Some(fd) = f.raw() else { return Ok(()) };
        self.eagain_as_recorded(fd, events)?;
        if !self.wait_ready(fd, events, self.pipe_deadline(f)) {
            // Warned once per stall, not at each of the calls that follow it.
            if !f.stalled.swap(true, Ordering::Relaxed) {
                self.warn(stalled());
            }
            return Err(libc::ETIMEDOUT);
        }
        f.stalled.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Until when a call waits for a pipe end: the stall timeout, or only [`STALLED_WAIT`]
    /// once a call on it stalled (a replay that lost step with a pipe, e.g. its reader's calls
    /// were simulated, then fails each later call at once instead of after a timeout each:
    /// hours for a few hundred calls).
    fn pipe_deadline(&self, f: &OpenFile) -> Instant {
        let wait = if f.stalled.load(Ordering::Relaxed) {
            STALLED_WAIT
        } else {
            self.sh.opts.stall_timeout
        };
        Instant::now() + wait
    }

    /// Poll in slices until ready, the deadline, or an abort. An end opened the other way (a
    /// write to a pipe's read end) counts as ready: no wait would make it so, and the call
    /// itself fails at once (EBADF), as the kernel answers.
    fn wait_ready(&self, fd: RawFd, ev: i16, deadline: Instant) -> bool {
        if sys::poll1(fd, ev, 0) || !sys::opened_for(fd, ev) {
            return true;
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now()).as_millis();
            if sys::poll1(fd, ev, (left as i32).clamp(0, STALL_SLICE_MS)) {
                return true;
            }
            if Instant::now() >= deadline || self.sh.abort.load(Ordering::Relaxed) {
                return false;
            }
        }
    }

    /// A write to a pipe that its thread ended inside (under ptrace: killed before the
    /// tracer saw it return), of at most `PIPE_BUF` bytes: written when the pipe has room now
    /// (so the write cannot block), not waited for. The kernel had most likely done it, and
    /// a reader may have read the bytes: test_subprocess's child wrote "x\n" and was killed,
    /// and its parent read the two bytes (left out, the parent read 0). What it returned
    /// is unknown, so nothing is compared. None: not such a write, or no room.
    fn unfinished_pipe_write(&mut self) -> Option<Act> {
        let f = self.file("fd").ok()?;
        let Handle::Pipe(fd) = &f.handle else { return None };
        let fd = fd.as_raw_fd();
        let count = self.i("count").ok()?.max(0) as usize;
        if count > libc::PIPE_BUF
            || !sys::opened_for(fd, libc::POLLOUT)
            || !sys::poll1(fd, libc::POLLOUT, 0)
        {
            return None;
        }
        let data = self.payload("buf", count);
        sys::write(fd, &data[..count.min(data.len())]).ok()?;
        Some(Act::IssuedUnknown)
    }

    fn write(&mut self, positional: bool) -> Result<Act, i32> {
        let f = self.file("fd")?;
        let count = self.i("count")?.max(0) as usize;
        if f.is_pipe() {
            self.pipe_ready(&f, libc::POLLOUT, || {
                "pipe write stalled: no reader made room".into()
            })?;
        }
        let data = self.payload("buf", count);
        let data: &[u8] = &data[..count.min(data.len())];
        match &f.handle {
            Handle::Simulated(_) => Ok(Act::Sim),
            Handle::Pipe(fd) => Ok(Act::Issued(sys::write(fd.as_raw_fd(), data)?)),
            Handle::File(fd) => {
                let raw = fd.as_raw_fd();
                let off = if positional { Some(self.i("offset")?) } else { None };
                let go = |d: &[u8]| match off {
                    Some(o) => sys::pwrite(raw, d, o),
                    None => sys::write(raw, d),
                };
                // Direct I/O wants the buffer aligned, as the program's was; the replay's are
                // slices of a trace's extent or a plan's map (the kernel checks the alignment
                // before it does anything: refused, then written from an aligned copy).
                let r = match go(data) {
                    Err(libc::EINVAL) if sys::is_direct(raw) => {
                        go(sys::Aligned::concat(&[data]).as_slice())
                    }
                    r => r,
                };
                Ok(Act::Issued(r?))
            }
        }
    }

    /// preadv2 offset argument: -1 (current position) for readv/writev.
    fn vec_offset(&self) -> Result<i64, i32> {
        // readv/writev have no offset: -1 is "the current position" to preadv2/pwritev2.
        let Some(off) = self.opt_i("offset")? else { return Ok(-1) };
        // preadv/pwritev refuse a negative offset; to preadv2/pwritev2 -1 is the current
        // position (and below it EINVAL).
        let v2 = self.ev.def.is_some_and(|d| d.name.ends_with('2'));
        if off < 0 && !(v2 && off == -1) {
            return Err(libc::EINVAL);
        }
        Ok(off)
    }

    fn readv(&mut self) -> Result<Act, i32> {
        let f = self.file("fd")?;
        let Some(raw) = f.raw() else { return Ok(Act::Sim) };
        let positional = self.ev.def.is_some_and(|d| d.arg("offset").is_some());
        if self.skip_read(raw, positional) {
            return Ok(Act::Skip);
        }
        let ArgValue::Iov(vecs) = self.arg("iov").clone() else {
            // Vectors not in the trace: read the total the call asked for in one vector.
            return Err(libc::EFAULT);
        };
        // Room for what the recorded call read and a chunk more (more is a difference anyway):
        // memory is bounded by what the trace holds, not by the sizes it names.
        let mut room = (self.rec_ret().max(0) as usize).saturating_add(READ_CHUNK);
        let mut bufs: Vec<Vec<u8>> = vecs
            .iter()
            .map(|v| {
                let n = (v.requested as usize).min(room);
                room -= n;
                vec![0u8; n]
            })
            .collect();
        let off = self.vec_offset()?;
        if bufs.is_empty() && !self.rec_ok() && off >= 0 && self.i("iovcnt").unwrap_or(0) > 0 {
            // A failed call's vectors were not read (an empty list, the count as the program
            // gave it): one byte, so that the kernel looks at the flags as it did then (with no
            // bytes to read it returns 0 first). Positional: no offset moves if it succeeds.
            bufs.push(vec![0u8; 1]);
        }
        let iov: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec { iov_base: b.as_mut_ptr().cast(), iov_len: b.len() })
            .collect();
        let flags = self.flags_or_0("flags")? as i32;
        let r = sys::preadv2(raw, &iov, off, flags)?;
        if self.full || self.seen.is_some() {
            let mut left = r as usize;
            let mut got = Vec::with_capacity(left);
            for b in &bufs {
                let n = left.min(b.len());
                got.extend_from_slice(&b[..n]);
                left -= n;
            }
            self.saw(&got);
            let have_data = vecs.iter().any(|v| v.data.is_some());
            if self.full && have_data {
                let want: Vec<u8> =
                    vecs.iter().filter_map(|v| v.data.as_deref()).flatten().copied().collect();
                self.diff(verify::data("iov", &ArgValue::data(want), &got));
            }
        }
        Ok(Act::Issued(r))
    }

    fn writev(&mut self) -> Result<Act, i32> {
        let f = self.file("fd")?;
        let Some(raw) = f.raw() else { return Ok(Act::Sim) };
        let bufs = self.iov_payload();
        let iov = write_iovecs(&bufs);
        let flags = self.flags_or_0("flags")? as i32;
        if f.is_pipe() {
            self.pipe_ready(&f, libc::POLLOUT, || {
                "pipe write stalled: no reader made room".into()
            })?;
        }
        let off = self.vec_offset()?;
        let r = match sys::pwritev2(raw, &iov, off, flags) {
            // Direct I/O and unaligned buffers (see `write`): the vectors' bytes from one
            // aligned copy.
            Err(libc::EINVAL) if sys::is_direct(raw) => {
                let parts: Vec<&[u8]> = bufs.iter().map(|b| &b[..]).collect();
                let one = sys::Aligned::concat(&parts);
                let v = [libc::iovec {
                    iov_base: one.as_slice().as_ptr() as *mut libc::c_void,
                    iov_len: one.as_slice().len(),
                }];
                sys::pwritev2(raw, &v, off, flags)
            }
            r => r,
        };
        Ok(Act::Issued(r?))
    }

    /// vmsplice on a pipe. Into its write end: the recorded bytes, written as `writev` writes
    /// them (the replayer's buffers are not lent to the pipe, whose reader may come much
    /// later). Out of its read end: the bytes the recorded call took out of the pipe are taken
    /// out, so that the pipe holds what it held when recorded (a program that fills a pipe
    /// with splice and empties it with vmsplice, as fio's splice engine does, would otherwise
    /// find it full); not compared, as the recorder read the buffers before the call filled
    /// them.
    fn vmsplice(&mut self) -> Result<Act, i32> {
        let f = self.file("fd")?;
        let (Some(raw), true) = (f.raw(), f.is_pipe()) else { return Ok(Act::Sim) };
        let mode = sys::raw(libc::SYS_fcntl, &[raw.into(), libc::F_GETFL.into()])?;
        if mode & i64::from(libc::O_ACCMODE) == i64::from(libc::O_RDONLY) {
            let count = match self.arg("iov") {
                ArgValue::Iov(vecs) => vecs.iter().map(|v| v.requested as usize).sum(),
                _ => self.rec_ret().max(0) as usize,
            };
            let got = self.pipe_read(&f, count)?;
            return Ok(Act::Issued(got.len() as i64));
        }
        let bufs = self.iov_payload();
        let iov = write_iovecs(&bufs);
        self.pipe_ready(&f, libc::POLLOUT, || "vmsplice stalled: no reader made room".into())?;
        Ok(Act::Issued(sys::pwritev2(raw, &iov, -1, 0)?))
    }

    /// tee between two of the replay's pipes, issued as recorded: the pipe it duplicates from
    /// holds what the replay put in it (so that a later read or splice of the copy finds the
    /// bytes the recording found); an end that is no replayed pipe is simulated. A call that
    /// failed when recorded is issued without waiting (`SPLICE_F_NONBLOCK`), as splice's is.
    fn tee(&mut self) -> Result<Act, i32> {
        let a = self.file("fd_in")?;
        let b = self.file("fd_out")?;
        let (Some(ra), Some(rb), true, true) = (a.raw(), b.raw(), a.is_pipe(), b.is_pipe()) else {
            return Ok(Act::Sim);
        };
        let failed = !self.rec_ok() && self.ev.errno != Some(libc::EAGAIN);
        if !failed {
            self.pipe_ready(&a, libc::POLLIN, || "tee stalled on a pipe: no data".into())?;
            self.pipe_ready(&b, libc::POLLOUT, || {
                "tee stalled on a pipe: no reader made room".into()
            })?;
        }
        let len = self.i("len")?.max(0) as usize;
        let mut flags = self.i("flags")? as u32;
        if failed {
            flags |= libc::SPLICE_F_NONBLOCK;
        }
        Ok(Act::Issued(sys::tee(ra, rb, len, flags)?))
    }

    /// The bytes a vectored write wrote: the recorded vectors (not copied: a plan's are
    /// written from its map), or fill bytes where the data was recorded as a digest or not
    /// at all.
    fn iov_payload(&self) -> Vec<ra_trace::Bytes> {
        match self.arg("iov") {
            ArgValue::Iov(vecs) => vecs
                .iter()
                .map(|v| {
                    v.data.clone().unwrap_or_else(|| {
                        fill(self.sh.opts.fill, self.ev.unique_id, v.requested as usize).into()
                    })
                })
                .collect(),
            _ => {
                // Data recorded as a digest or not at all: write what the call wrote.
                let n = self.rec_ret().max(0) as usize;
                vec![fill(self.sh.opts.fill, self.ev.unique_id, n).into()]
            }
        }
    }

    /// A page record: bytes read or written through a file mapping. The file is the one the
    /// mapping was made on (found by address for reads, by the descriptor number the mmap named
    /// for writes), not whatever that descriptor number names now.
    fn mmap_page(&mut self, write: bool) -> Result<Act, i32> {
        let count = self.i("count")?.max(0) as usize;
        let off = self.i("offset")?;
        let fd = self.i("fd")?;
        // The page's address names its mapping exactly (a descriptor number may have been
        // closed and reused for another mapped file); Re-Animator's mmappwrite records have no
        // address: the descriptor the mapping was made with.
        let address = self.i("address").ok().filter(|&a| a != 0);
        let mapped = {
            let mm = lock(&self.p.mm);
            let hit = match address {
                Some(a) => mm.find(a as u64).filter(|(m, _)| m.file.is_some()),
                None if write => i32::try_from(fd).ok().and_then(|fd| mm.find_by_fd(fd, off)),
                None => None,
            };
            hit.and_then(|(m, o)| Some((m.file.clone()?, m.real_at(o))))
                as Option<(Arc<OpenFile>, Option<(usize, usize)>)>
        };
        let (f, real) = match mapped {
            Some((f, real)) => (f, real),
            // No file mapping there, and no descriptor: shared memory that is no file
            // (MAP_SHARED|MAP_ANONYMOUS, System V shm), whose pages the eBPF recorder recorded
            // before 2026-11-28. Nothing of a file to replay.
            None if fd < 0 => return Ok(Act::Sim),
            // The mapping is gone from the model (unmapped before the record): the descriptor,
            // if it is still open. It is looked up, never made up: the record's descriptor is
            // the one the mapping was made with, usually closed since (ld.so closes it right
            // after mmap), and a made-up entry would take its number from the next open.
            None => {
                let open = i32::try_from(fd).ok().and_then(|n| lock(&self.p.fds).get(n).cloned());
                match open {
                    Some(e) => (e.file, None),
                    None => {
                        self.warn(format!(
                            "a page of a mapping made with descriptor {fd}, which is closed, and \
                             no mapping of the trace covers its address: simulated"
                        ));
                        return Ok(Act::Sim);
                    }
                }
            }
        };
        let Some(raw) = f.raw() else { return Ok(Act::Sim) };
        let size = sys::fstat_at(raw)?.st_size;
        let in_file = off >= 0 && off.saturating_add(count as i64) <= size;
        if let Some((addr, room)) = real.filter(|&(_, room)| in_file && count <= room) {
            debug_assert!(room >= count);
            if write {
                let data = self.payload("buf", count);
                let n = count.min(data.len());
                // SAFETY: `addr..addr+n` lies in a live mapping this replayer made (real_at bounds
                // it by the real length, n <= count <= room) and within the file's size, so the
                // pages exist.
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, n) };
                return Ok(Act::Issued(n as i64));
            }
            // SAFETY: as above: a live mapping, `count <= room` bytes, within the file.
            let got = unsafe { std::slice::from_raw_parts(addr as *const u8, count) }.to_vec();
            if !self.content_unknown(raw) {
                self.check_data("buf", &got);
            }
            return Ok(Act::Issued(count as i64));
        }
        if in_file {
            return if write {
                let data = self.payload("buf", count);
                Ok(Act::Issued(sys::pwrite(raw, &data[..count.min(data.len())], off)?))
            } else {
                Ok(Act::Issued(self.read_file(raw, count, Some(off))?))
            };
        }
        // The file's last page, which reaches past its end: the kernel writes back only the
        // bytes within the file (a page write never extends it) and shows zeros past the end
        // to a mapped read. The record holds the whole page either way.
        let within = if off < 0 { 0 } else { usize::try_from(size - off).unwrap_or(0).min(count) };
        if write {
            let data = self.payload("buf", count);
            if within > 0 {
                sys::pwrite(raw, &data[..within.min(data.len())], off)?;
            }
        } else {
            // No more than the recorded bytes (or a huge page) in memory, whatever the
            // record's count says.
            let n = count.min(match self.arg("buf") {
                ArgValue::Data(d) => d.len(),
                _ => 2 << 20,
            });
            let within = within.min(n);
            let mut got = vec![0u8; n];
            let mut at = 0;
            while at < within {
                match sys::pread(raw, &mut got[at..within], off + at as i64)? {
                    0 => break,
                    n => at += n as usize,
                }
            }
            if !self.content_unknown(raw) {
                self.check_data("buf", &got);
            }
        }
        Ok(Act::Issued(count as i64))
    }

    /// bind: a Unix socket bound to a path leaves a socket file there (mode 0777 less the
    /// umask, as the kernel makes it); it is made beneath the root so that later calls on the
    /// path see it. The socket itself stays simulated; other families are simulated whole.
    fn bind(&mut self) -> Result<Act, i32> {
        let Some(addr) = self.arg("addr").as_data().map(<[u8]>::to_vec) else {
            return Ok(Act::Sim);
        };
        let family = addr.get(0..2).map(|b| u16::from_ne_bytes([b[0], b[1]]));
        let path = addr.get(2..).unwrap_or_default();
        let path = &path[..path.iter().position(|&c| c == 0).unwrap_or(path.len())];
        if family != Some(libc::AF_UNIX as u16) || path.is_empty() || !self.rec_ok() {
            // Other families, abstract names (a leading NUL), failures: nothing on disk.
            return Ok(Act::Sim);
        }
        let p = path.to_vec();
        let (dir, n) = self.parent(None, &p)?;
        let mode = libc::S_IFSOCK | (0o777 & !lock(&self.p.fs).umask);
        Ok(Act::Emulated(sys::mknodat(dir.as_raw_fd(), &n, mode, 0)?))
    }

    fn flock(&mut self) -> Result<Act, i32> {
        let f = self.file("fd")?;
        let Some(raw) = f.raw() else { return Ok(Act::Sim) };
        let op = self.i("operation")?;
        if !self.ev.waits_for_lock() {
            return Ok(Act::Issued(sys::raw(libc::SYS_flock, &[raw.into(), op])?));
        }
        let nb = op | i64::from(libc::LOCK_NB);
        self.retry_blocking(|| sys::raw(libc::SYS_flock, &[raw.into(), nb])).map(Act::Issued)
    }

    /// A blocking lock, taken by retrying its non-blocking form until the stall timeout.
    fn retry_blocking(&mut self, mut f: impl FnMut() -> R) -> R {
        let deadline = Instant::now() + self.sh.opts.stall_timeout;
        let mut pause = Duration::from_micros(50);
        loop {
            match f() {
                Err(libc::EAGAIN | libc::EACCES) => {}
                r => return r,
            }
            if Instant::now() >= deadline || self.sh.abort.load(Ordering::Relaxed) {
                self.warn("lock wait stalled: the lock was never released");
                return Err(libc::ETIMEDOUT);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }

    fn ioctl(&mut self) -> Result<Act, i32> {
        const FICLONE: i64 = 0x4004_9409;
        // FIONCLEX / FIOCLEX: the descriptor's close-on-exec flag, as fcntl(F_SETFD) sets it
        // (Python's os.set_inheritable uses them: a pipe end passed to a child survives exec).
        const FIONCLEX: i64 = 0x5450;
        const FIOCLEX: i64 = 0x5451;
        let request = self.i("request")?;
        if request == FIONCLEX || request == FIOCLEX {
            let fd = i32::try_from(self.i("fd")?).map_err(|_| libc::EBADF)?;
            let f = self.entry(fd.into())?.file;
            if let Some(raw) = f.raw() {
                // Issued on the replayer's own descriptor too: the kernel's checks (EBADF for
                // an O_PATH descriptor) apply; the replayer never execs, so its flag is moot.
                sys::raw(libc::SYS_ioctl, &[raw.into(), request, 0])?;
            }
            if let Some(e) = lock(&self.p.fds).get_mut(fd) {
                e.cloexec = request == FIOCLEX;
            }
            return Ok(Act::Emulated(0));
        }
        if ra_syscalls::flags::ioctl_arg_is_int(request as u64) {
            return self.ioctl_int(request);
        }
        if request != FICLONE {
            return Ok(Act::Sim);
        }
        // FICLONE's argument is a descriptor: translate it and clone for real.
        let dst = self.file("fd")?;
        let src = self.entry(self.i("argp")?)?.file;
        match (dst.raw(), src.raw()) {
            (Some(d), Some(s)) => {
                Ok(Act::Issued(sys::raw(libc::SYS_ioctl, &[d.into(), FICLONE, s.into()])?))
            }
            _ => Ok(Act::Sim),
        }
    }

    /// FIONBIO / FIOASYNC: set or clear the open file's O_NONBLOCK / O_ASYNC with the recorded
    /// `int` (the `ioctl_buffer` column), so that later `fcntl(F_GETFL)`s and non-blocking
    /// reads behave as recorded. Traces without the value (recorded before it was captured,
    /// or other tools') leave the flag alone: simulated.
    fn ioctl_int(&mut self, request: i64) -> Result<Act, i32> {
        let f = self.file("fd")?;
        let value = self
            .ev
            .extra_bytes("ioctl_buffer")
            .and_then(|b| Some(i32::from_le_bytes(b.get(..4)?.try_into().ok()?)));
        let (Some(raw), Some(value)) = (f.raw(), value) else { return Ok(Act::Sim) };
        Ok(Act::Issued(sys::ioctl_int(raw, request, value)?))
    }

    /// sendfile / copy_file_range / splice between real descriptors, at the offsets the
    /// recorded call started from.
    fn copy(&mut self, def: &SyscallDef) -> Result<Act, i32> {
        let name = def.name;
        let Some(c) = self.ev.copy() else {
            // A descriptor argument is missing: say which.
            if let Some((def, e)) = self.ev.def.and_then(|d| Some((d, d.copy_ends()?))) {
                self.i(def.args[e.fd_in].name)?;
                self.i(def.args[e.fd_out].name)?;
            }
            return Err(MISSING);
        };
        let a = self.entry(c.fd_in.into())?.file;
        let b = self.entry(c.fd_out.into())?.file;
        let (ra, rb) = match (a.raw(), b.raw()) {
            (Some(ra), Some(rb)) => (ra, rb),
            // One end is not replayed (a device such as /dev/zero or /dev/null, a socket) and
            // the other is a pipe: the pipe gains or loses what the recorded call moved, so
            // that the calls after it find the pipe as the recording did.
            (None, Some(rb)) if b.is_pipe() && self.rec_ok() && self.rec_ret() > 0 => {
                let n = self.rec_ret() as usize;
                let data = if a.path == b"/dev/zero" {
                    vec![0; n]
                } else {
                    fill(self.sh.opts.fill, self.ev.unique_id, n)
                };
                self.pipe_ready(&b, libc::POLLOUT, || {
                    format!("{name} stalled on a pipe: no reader made room")
                })?;
                return Ok(Act::Emulated(sys::write(rb, &data)?));
            }
            (Some(_), None) if a.is_pipe() && self.rec_ok() && self.rec_ret() > 0 => {
                let got = self.pipe_read(&a, self.rec_ret() as usize)?;
                return Ok(Act::Emulated(got.len() as i64));
            }
            _ => return Ok(Act::Sim),
        };
        // A splice that failed when recorded (bad offsets or flags: ESPIPE, EINVAL) is issued
        // without waiting and without blocking: it fails again at once, or says EAGAIN where
        // the replay's pipe differs, instead of waiting for data the recording never moved.
        let splice = def.kernel_copy == Some(KernelCopy::Splice);
        let failed = splice && !self.rec_ok() && self.ev.errno != Some(libc::EAGAIN);
        // A pipe end waits, as a pipe read or write does, at most the stall timeout: a pipe
        // the replay filled with less than the recording (or never drained) must not block
        // the call for ever. Once it is ready the call moves what it can without blocking.
        for (f, ev, what) in
            [(&a, libc::POLLIN, "no data"), (&b, libc::POLLOUT, "no reader made room")]
        {
            if f.is_pipe() && !failed {
                self.pipe_ready(f, ev, || format!("{name} stalled on a pipe: {what}"))?;
            }
        }
        let (mut oi, mut oo) = (c.off_in, c.off_out);
        if let (true, Some(ends)) = (failed, self.ev.def.and_then(|d| d.copy_ends())) {
            // A failed call's offset pointers were not read (recorded absent, where NULL is
            // recorded as NULL): passed as pointers to 0, so that the kernel sees a pointer
            // where the program gave one (on a pipe: ESPIPE).
            let unread = |i: usize| {
                matches!(self.ev.args.get(i), Some(ArgValue::Absent | ArgValue::NotCaptured))
            };
            for (o, i) in [(&mut oi, ends.off_in), (&mut oo, ends.off_out)] {
                if o.is_none() && i.is_some_and(unread) {
                    *o = Some(0);
                }
            }
        }
        let r = if def.kernel_copy == Some(KernelCopy::Sendfile) {
            sys::sendfile(rb, ra, oi.as_mut(), self.i("count")?.max(0) as usize)
        } else {
            let len = self.i("len")?.max(0) as usize;
            let mut flags = self.i("flags")? as u32;
            if failed {
                flags |= libc::SPLICE_F_NONBLOCK;
            }
            if splice {
                sys::splice(ra, oi.as_mut(), rb, oo.as_mut(), len, flags)
            } else {
                sys::copy_file_range(ra, oi.as_mut(), rb, oo.as_mut(), len, flags)
            }
        };
        Ok(Act::Issued(r?))
    }

    /// A descriptor the process had before the trace began: the file, reopened beneath the
    /// root, when it is one (redirections, files of an attached process), else simulated
    /// (terminals, pipes and sockets from outside).
    fn inherited(&mut self) -> Result<Act, i32> {
        let p = self.path("pathname")?.to_vec();
        let flags = self.i("flags")? as i32 & !(libc::O_CREAT | libc::O_TRUNC | libc::O_EXCL);
        let fd = self.rec_ret() as i32;
        // Two inherited descriptors of one regular file are taken to share one open file
        // description (`>log 2>&1`: one offset, as the shell made them with dup2); the trace
        // names only the path of each.
        let norm = normalize(&p);
        let shared = lock(&self.p.fds).iter().find_map(|(_, e)| {
            (e.file.path == norm && matches!(e.file.handle, Handle::File(_)))
                .then(|| e.file.clone())
        });
        if let Some(f) = shared {
            let old = lock(&self.p.fds)
                .insert(fd, FdEntry { file: f, cloexec: flags & libc::O_CLOEXEC != 0 });
            drop(old);
            return Ok(Act::EmulatedAsRecorded);
        }
        let real = if p.starts_with(b"/") && !is_special(&p) {
            self.sh.root.open(&p, flags | libc::O_NONBLOCK, 0).ok().and_then(|f| {
                let st = sys::fstat_at(f.as_raw_fd()).ok()?;
                (st.st_mode & libc::S_IFMT == libc::S_IFREG).then_some(f)
            })
        } else {
            None
        };
        let handle = match real {
            Some(f) => {
                // Back to the recorded status flags (O_NONBLOCK only guarded the open).
                let _ = sys::raw(
                    libc::SYS_fcntl,
                    &[f.as_raw_fd().into(), libc::F_SETFL.into(), flags.into()],
                );
                Handle::File(f)
            }
            None => Handle::Simulated("inherited"),
        };
        let f = OpenFile::new(handle, norm, 0);
        let old = lock(&self.p.fds)
            .insert(fd, FdEntry { file: f, cloexec: flags & libc::O_CLOEXEC != 0 });
        drop(old);
        Ok(Act::EmulatedAsRecorded)
    }

    fn open(&mut self, def: &SyscallDef) -> Result<Act, i32> {
        if self.pl.inherited {
            return self.inherited();
        }
        let p = self.path("pathname")?.to_vec();
        // creat implies its flags, openat2 reads them from its struct open_how, the others
        // pass them.
        let how = def.has_struct(Struct::OpenHow);
        let (flags, mode) = match (def.implied_flags, how) {
            (Some(f), _) => (f as i32, self.i("mode")? as u32),
            (None, true) => {
                // The kernel's checks of the struct before anything else (sys_openat2,
                // build_open_how): its size, then the flags' upper half and the resolve bits
                // (stress-ng's open stressor passes a size of 0 on purpose).
                const OPEN_HOW_SIZE_VER0: i64 = 24;
                const VALID_RESOLVE: u64 = 0x3f;
                let size = self.i("size")?;
                if size < OPEN_HOW_SIZE_VER0 {
                    return Err(libc::EINVAL);
                }
                if size > 4096 {
                    return Err(libc::E2BIG);
                }
                let how = self.arg("how").as_data().ok_or(libc::EFAULT)?;
                let g = |o: usize| {
                    how.get(o..o + 8)
                        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                };
                if g(0) >> 32 != 0 || g(16) & !VALID_RESOLVE != 0 {
                    return Err(libc::EINVAL);
                }
                // RESOLVE_CACHED: EAGAIN when the lookup needed more than the recording
                // machine's dentry cache held at that moment; the recorded failure stands.
                const RESOLVE_CACHED: u64 = 0x20;
                if g(16) & RESOLVE_CACHED != 0 && self.ev.errno == Some(libc::EAGAIN) {
                    return Err(libc::EAGAIN);
                }
                (g(0) as i32, g(8) as u32)
            }
            (None, false) => {
                let flags = self.i("flags")? as i32;
                // The mode counts only when the call creates (Re-Animator's traces lack the
                // column for other opens).
                let mode = if creates(flags) {
                    self.i("mode")?
                } else {
                    self.ev.arg("mode").and_then(ArgValue::as_int).unwrap_or(0)
                };
                (flags, mode as u32)
            }
        };
        // The kernel checks the flags before it reads the name or looks at dirfd.
        let (real_flags, mode) = open_how(flags, mode, how)?;
        let dirfd = if def.arg("dirfd").is_some() { self.dirfd("dirfd") } else { None };
        let abs = self.abs(dirfd, &p)?;
        // EAGAIN from a non-blocking open: another process held a lease on the file (leases
        // are about processes and are not replayed, see fcntl): the recorded failure stands,
        // and nothing is opened, created or truncated.
        if flags & libc::O_NONBLOCK != 0 && self.ev.errno == Some(libc::EAGAIN) {
            return Err(libc::EAGAIN);
        }
        let umask = lock(&self.p.fs).umask;
        let fd = self.open_nonblocking(&abs, real_flags, mode & !umask)?;
        let cloexec = flags & libc::O_CLOEXEC != 0;
        Ok(Act::Issued(self.install(fd, normalize(&abs), cloexec, 0)?))
    }

    /// Open without blocking in the kernel: a FIFO's open waits for the other end, which in the
    /// replay may never come (or come from a call this one holds back). The open is made with
    /// `O_NONBLOCK` and the recorded status flags are set back afterwards; a write-open of a
    /// FIFO without a reader (`ENXIO`) that the recording saw succeed meets a reader of the
    /// replayer's own.
    fn open_nonblocking(&mut self, abs: &[u8], flags: i32, mode: u32) -> Result<OwnedFd, i32> {
        let added = flags & (libc::O_NONBLOCK | libc::O_PATH) == 0;
        if !added {
            return self.sh.root.open(abs, flags, mode);
        }
        let root = &self.sh.root;
        let fd = match root.open(abs, flags | libc::O_NONBLOCK, mode) {
            // A FIFO without a reader, whose recorded open succeeded: the kernel held it until
            // a reader opened the FIFO, and let it go even if that reader closed it again at
            // once (it waits for the count of read-opens to change, not for a reader to be
            // there). The replay need not wait for that reader, and often cannot: an open of
            // the same file called later is ordered after this one. It opens the FIFO as the
            // kernel let it be opened, with a reader there for the moment of the open (its
            // own); the calls that followed the rendezvous keep their order after it.
            Err(libc::ENXIO) if self.rec_ok() => {
                let reader = root.open(abs, libc::O_RDONLY | libc::O_NONBLOCK, 0)?;
                let fd = root.open(abs, flags | libc::O_NONBLOCK, mode);
                drop(reader);
                fd
            }
            r => r,
        }?;
        // F_SETFL sets exactly the settable status flags: back to the recorded ones.
        sys::raw(libc::SYS_fcntl, &[fd.as_raw_fd().into(), libc::F_SETFL.into(), flags.into()])?;
        Ok(fd)
    }

    fn stat(&mut self, def: &SyscallDef) -> Result<Act, i32> {
        // fstat by descriptor, statx into its struct statx, the others by path.
        let statx = def.has_struct(Struct::Statx);
        let (bytes, out) = match (def.arg("fd").is_some(), statx) {
            (true, _) => {
                let f = self.file("fd")?;
                let Some(raw) = f.raw() else { return Ok(Act::Sim) };
                (sys::stat_bytes(raw)?, "statbuf")
            }
            (false, true) => {
                let flags = self.i("flags")? as i32;
                let mask = self.i("mask")? as u32;
                // The kernel's checks before the lookup (do_statx, vfs_statx): reserved mask
                // bits and both sync types, then unknown flags; but an empty path with
                // AT_EMPTY_PATH on a descriptor looks the descriptor up before the flags
                // (do_statx_fd).
                const STATX_RESERVED: u32 = 0x8000_0000;
                const VALID: i32 = libc::AT_SYMLINK_NOFOLLOW
                    | libc::AT_NO_AUTOMOUNT
                    | libc::AT_EMPTY_PATH
                    | libc::AT_STATX_SYNC_TYPE;
                let sync = flags & libc::AT_STATX_SYNC_TYPE;
                if mask & STATX_RESERVED != 0 || sync == libc::AT_STATX_SYNC_TYPE {
                    return Err(libc::EINVAL);
                }
                let empty_ok = flags & libc::AT_EMPTY_PATH != 0;
                // A NULL path with AT_EMPTY_PATH is an empty one.
                let p = match path_arg(self.ev, "pathname") {
                    None if empty_ok => Vec::new(),
                    p => p.map(<[u8]>::to_vec).unwrap_or_default(),
                };
                let by_fd = empty_ok && p.is_empty() && self.dirfd("dirfd").is_some_and(|d| d >= 0);
                if !by_fd && flags & !VALID != 0 {
                    return Err(libc::EINVAL);
                }
                let p = if empty_ok { p } else { self.path("pathname")?.to_vec() };
                let l = self.locate(
                    self.dirfd("dirfd"),
                    &p,
                    flags & libc::AT_SYMLINK_NOFOLLOW == 0,
                    empty_ok,
                )?;
                if flags & !VALID != 0 {
                    return Err(libc::EINVAL);
                }
                (sys::statx_bytes(l.fd(), sync, mask)?, "statxbuf")
            }
            (false, false) => {
                let p = self.path("pathname")?.to_vec();
                let flags = self.flags_or_0("flags")? as i32;
                let follow = !def.nofollow && flags & libc::AT_SYMLINK_NOFOLLOW == 0;
                let l =
                    self.locate(self.dirfd("dirfd"), &p, follow, flags & libc::AT_EMPTY_PATH != 0)?;
                (sys::stat_bytes(l.fd())?, "statbuf")
            }
        };
        if self.seen.is_some() {
            self.saw_stat(statx, &bytes);
        }
        if self.full {
            let (mut d, dev_ino) = if statx {
                let x = ra_trace::structs::Statx::decode(&bytes);
                let di = x.map(|x| (libc::makedev(x.dev.0, x.dev.1), x.ino));
                (verify::statx(self.arg(out), &bytes), di)
            } else {
                let x = ra_trace::structs::Stat::decode(&bytes);
                (verify::stat(self.arg(out), &bytes), x.map(|x| (x.dev, x.ino)))
            };
            if dev_ino.is_some_and(|di| self.sh.opts.partial_dirs.contains(&di)) {
                let before = d.len();
                d.retain(|x| !(x.what.ends_with("nlink") || x.what.ends_with("size")));
                if d.len() != before {
                    self.warn(
                        "directory recreated in part by --init=infer: its link count and size were not compared",
                    );
                }
            } else if dev_ino.is_some_and(|di| self.sh.opts.inferred_files.contains(&di)) {
                let before = d.len();
                d.retain(|x| !x.what.ends_with("nlink"));
                if d.len() != before {
                    self.warn("file recreated by --init=infer: its link count was not compared");
                }
            }
            self.diffs.extend(d);
        }
        Ok(Act::Issued(0))
    }

    /// The outcome digest of a stat result: the members verification compares (not times,
    /// inode or device numbers, block counts), less the ones it leaves out for files
    /// `--init=infer` made.
    fn saw_stat(&mut self, statx: bool, bytes: &[u8]) {
        let (dev_ino, mut f) = if statx {
            let Some(x) = ra_trace::structs::Statx::decode(bytes) else { return };
            let di = (libc::makedev(x.dev.0, x.dev.1), x.ino);
            let m = x.mask;
            let has = |bit: u32, v: u64| if m & bit != 0 { Some(v) } else { None };
            let mode = has(libc::STATX_TYPE | libc::STATX_MODE, x.mode.into());
            let nlink = has(libc::STATX_NLINK, x.nlink.into());
            let uid = has(libc::STATX_UID, x.uid.into());
            let gid = has(libc::STATX_GID, x.gid.into());
            let size = has(libc::STATX_SIZE, x.size);
            (di, [mode, nlink, uid, gid, size, None])
        } else {
            let Some(x) = ra_trace::structs::Stat::decode(bytes) else { return };
            let f = [
                Some(x.mode.into()),
                Some(x.nlink),
                Some(x.uid.into()),
                Some(x.gid.into()),
                Some(x.size as u64),
                Some(x.rdev),
            ];
            ((x.dev, x.ino), f)
        };
        if self.sh.opts.partial_dirs.contains(&dev_ino) {
            (f[1], f[4]) = (None, None);
        } else if self.sh.opts.inferred_files.contains(&dev_ino) {
            f[1] = None;
        }
        let mut b = Vec::with_capacity(f.len() * 9);
        for v in f {
            b.push(u8::from(v.is_some()));
            b.extend_from_slice(&v.unwrap_or(0).to_le_bytes());
        }
        self.saw(&b);
    }

    /// getdents: the entries of one directory stream are compared as a set of (name, type)
    /// when the recorded stream ends; each call's byte count only as "some" or "none" (entry
    /// order differs between directories with the same content).
    fn getdents(&mut self, old: bool) -> Result<Act, i32> {
        let f = self.file("fd")?;
        let Some(raw) = f.raw() else { return Ok(Act::Sim) };
        let count = (self.i("count")?.max(0) as usize).min(1 << 24);
        let (r, got) = with_buf(count, |b| {
            let r = sys::getdents(raw, b, old);
            (r, b[..r.unwrap_or(0).max(0) as usize].to_vec())
        });
        let r = r?;
        let parse = |b: &[u8]| if old { parse_dirents(b) } else { parse_dirents64(b) };
        // Where --init=infer makes the targets of symlinks the trace never resolved is the
        // replay's, not the program's: left out of the root directory's listing.
        let made_here = |n: &[u8]| f.path == b"/" && n == &crate::init::LINK_TARGETS[1..];
        let mut ds = lock(&f.dir);
        ds.replayed.extend(
            parse(&got).into_iter().filter(|d| !made_here(&d.name)).map(|d| (d.name, d.d_type)),
        );
        ds.replayed_bytes += r as u64;
        let rec = self.arg("dirp").as_data().map(parse);
        if let Some(rec) = &rec {
            ds.recorded.extend(rec.iter().map(|d| (d.name.clone(), d.d_type)));
        }
        ds.recorded_bytes += self.rec_ret().max(0) as u64;
        let stream_end = self.rec_ok() && self.rec_ret() == 0;
        if stream_end && self.seen.is_some() {
            // The stream's entries as a set: their order is the file system's.
            let mut b = Vec::new();
            for (n, t) in &ds.replayed {
                b.extend_from_slice(&(n.len() as u64).to_le_bytes());
                b.extend_from_slice(n);
                b.push(*t);
            }
            self.saw(&b);
        }
        if stream_end && (self.full && rec.is_some() || self.seen.is_some()) {
            let ds = std::mem::take(&mut *ds);
            if self.full && rec.is_some() && ds.recorded != ds.replayed {
                let show =
                    |s: &std::collections::BTreeSet<(Vec<u8>, u8)>,
                     o: &std::collections::BTreeSet<(Vec<u8>, u8)>| {
                        let v: Vec<String> = s
                            .difference(o)
                            .take(8)
                            .map(|(n, t)| {
                                // The type too: the same name can differ only in it.
                                let kind = match t {
                                    4 => "dir",
                                    8 => "file",
                                    10 => "symlink",
                                    12 => "socket",
                                    1 => "fifo",
                                    _ => "other",
                                };
                                format!("{} ({kind})", String::from_utf8_lossy(n))
                            })
                            .collect();
                        format!("{} entries; only here: [{}]", s.len(), v.join(", "))
                    };
                self.diffs.push(Diff::new(
                    "getdents entries",
                    show(&ds.recorded, &ds.replayed),
                    show(&ds.replayed, &ds.recorded),
                ));
            }
        }
        drop(ds);
        // Some bytes or none: that is what a reader of the stream acts on.
        Ok(if (r > 0) == (self.rec_ret() > 0) {
            Act::Issued(self.rec_ret().max(0))
        } else {
            Act::Issued(r)
        })
    }

    fn utimes(&mut self, def: &SyscallDef) -> Result<Act, i32> {
        let ts = |sec: i64, nsec: i64| libc::timespec { tv_sec: sec, tv_nsec: nsec };
        let t = self.arg("times").as_data().map(<[u8]>::to_vec);
        let g = |b: &[u8], o: usize| {
            b.get(o..o + 8).map_or(0, |x| i64::from_le_bytes(x.try_into().unwrap_or([0; 8])))
        };
        // The times' struct: utime's utimbuf (seconds), utimes' and futimesat's two timevals,
        // utimensat's two timespecs.
        let times = match (&t, def.has_struct(Struct::Utimbuf), def.has_struct(Struct::Timeval2)) {
            (None, _, _) => None,
            (Some(b), true, _) => Some([ts(g(b, 0), 0), ts(g(b, 8), 0)]),
            (Some(b), _, true) => {
                Some([ts(g(b, 0), g(b, 8) * 1000), ts(g(b, 16), g(b, 24) * 1000)])
            }
            (Some(b), _, _) => Some([ts(g(b, 0), g(b, 8)), ts(g(b, 16), g(b, 24))]),
        };
        let flags = self.flags_or_0("flags")? as i32;
        // The kernel's checks before any lookup: each tv_nsec a time or UTIME_NOW/UTIME_OMIT,
        // then the flags (stress-ng's utime stressor passes invalid ones on purpose).
        let nsec_ok = |t: &libc::timespec| {
            (0..1_000_000_000).contains(&t.tv_nsec)
                || t.tv_nsec == libc::UTIME_NOW
                || t.tv_nsec == libc::UTIME_OMIT
        };
        if times.as_ref().is_some_and(|t| !t.iter().all(nsec_ok))
            || flags & !(libc::AT_SYMLINK_NOFOLLOW | libc::AT_EMPTY_PATH) != 0
        {
            return Err(libc::EINVAL);
        }
        let path = match def.arg("filename") {
            Some(_) => Some(self.path("filename")?.to_vec()),
            None => path_arg(self.ev, "pathname").map(<[u8]>::to_vec),
        };
        match path {
            None => {
                // utimensat(fd, NULL, ...): the futimens form.
                let f = self.file("dirfd")?;
                let Some(raw) = f.raw() else { return Ok(Act::Sim) };
                Ok(Act::Issued(sys::futimens(raw, times)?))
            }
            Some(p) => {
                let follow = flags & libc::AT_SYMLINK_NOFOLLOW == 0;
                let l =
                    self.locate(self.dirfd("dirfd"), &p, follow, flags & libc::AT_EMPTY_PATH != 0)?;
                Ok(Act::Issued(sys::utimens(l.fd(), times, 0)?))
            }
        }
    }

    fn xattr(&mut self, def: &SyscallDef) -> Result<Act, i32> {
        // The family's twelve calls are a target and an operation: a path, a path whose last
        // symlink is not followed (`l`, the entry's `nofollow`) or a descriptor (`f`), then
        // set, get, list or remove (the entry's `xattr_op`).
        let Some(op) = def.xattr_op() else { return Ok(Act::Sim) };
        let (by_fd, nofollow) = (def.arg("fd").is_some(), def.nofollow);
        // The kernel's checks before it looks at the path or the descriptor
        // (path_setxattrat, setxattr_copy, import_xattr_name): the flags, the name (empty or
        // longer than XATTR_NAME_MAX: ERANGE), the value's size (E2BIG).
        const XATTR_SIZE_MAX: i64 = 65536;
        if op == XattrOp::Set
            && self.i("flags")? & !i64::from(libc::XATTR_CREATE | libc::XATTR_REPLACE) != 0
        {
            return Err(libc::EINVAL);
        }
        let xname = if op == XattrOp::List {
            None
        } else {
            let n = path_arg(self.ev, "name").ok_or(libc::EFAULT)?;
            if !xattr_name_valid(n) {
                return Err(libc::ERANGE);
            }
            Some(cstr(n)?)
        };
        let xname = || xname.clone().ok_or(libc::EFAULT);
        if op == XattrOp::Set && self.i("size")? > XATTR_SIZE_MAX {
            return Err(libc::E2BIG);
        }
        // Target: an fd of the program (f*) or the path located in the root.
        let target: Located = if by_fd {
            let f = self.file("fd")?;
            if f.raw().is_none() {
                return Ok(Act::Sim);
            }
            Located::File(f)
        } else {
            let p = self.path("path")?.to_vec();
            self.locate(None, &p, !nofollow, false)?
        };
        let fd = target.fd();
        // Path forms act on the located file through its /proc/self/fd magic link (the xattr
        // *at calls refuse O_PATH descriptors); descriptor forms act on the program's fd.
        let proc_path =
            if by_fd { None } else { Some(cstr(format!("/proc/self/fd/{fd}").as_bytes())?) };
        // What a get or list returned: a size query (size 0) returns the value's size and
        // copies nothing.
        let returned = |b: &[u8], r: R| b[..(r.unwrap_or(0).max(0) as usize).min(b.len())].to_vec();
        let r = match op {
            XattrOp::Set => {
                let n = xname()?;
                let size = self.i("size")?.max(0) as usize;
                let v = self.payload("value", size);
                let v = &v[..size.min(v.len())];
                let flags = self.i("flags")? as i32;
                match &proc_path {
                    None => sys::fsetxattr(fd, &n, v, flags),
                    Some(p) => sys::setxattr_path(p, &n, v, flags),
                }
            }
            XattrOp::Get => {
                let n = xname()?;
                let size = (self.i("size")?.max(0) as usize).min(1 << 24);
                let (r, got) = with_buf(size, |b| {
                    let r = match &proc_path {
                        None => sys::fgetxattr(fd, &n, b),
                        Some(p) => sys::getxattr_path(p, &n, b),
                    };
                    (r, returned(b, r))
                });
                if r.is_ok() && size > 0 {
                    self.check_data("value", &got);
                }
                r
            }
            XattrOp::List => {
                let size = (self.i("size")?.max(0) as usize).min(1 << 24);
                let (r, got) = with_buf(size, |b| {
                    let r = match &proc_path {
                        None => sys::flistxattr(fd, b),
                        Some(p) => sys::listxattr_path(p, b),
                    };
                    (r, returned(b, r))
                });
                if r.is_ok() && size > 0 {
                    // The names as a set: their order is the file system's.
                    let mut names: Vec<&[u8]> =
                        got.split(|&c| c == 0).filter(|n| !n.is_empty()).collect();
                    names.sort_unstable();
                    self.saw(&names.join(&0u8));
                }
                if r.is_ok() && size > 0 && self.full {
                    let d = verify::name_set("xattr names", self.arg("list"), &got);
                    self.diff(d);
                }
                r
            }
            XattrOp::Remove => {
                let n = xname()?;
                match &proc_path {
                    None => sys::fremovexattr(fd, &n),
                    Some(p) => sys::removexattr_path(p, &n),
                }
            }
        };
        Ok(Act::Issued(r?))
    }

    fn dup(&mut self, def: &SyscallDef) -> Result<Act, i32> {
        let old = self.i("oldfd")? as i32;
        // dup3 has flags, dup2 a new descriptor, dup neither.
        if def.arg("flags").is_some() {
            // The kernel's order (ksys_dup3): the flags, then oldfd == newfd, before oldfd is
            // looked up.
            if self.flags_or_0("flags")? & !i64::from(libc::O_CLOEXEC) != 0 {
                return Err(libc::EINVAL);
            }
            if self.i("newfd")? as i32 == old {
                return Err(libc::EINVAL);
            }
        }
        let e = lock(&self.p.fds).get(old).cloned();
        let e = match e {
            Some(e) => e,
            None => self.entry(old.into())?,
        };
        if def.arg("newfd").is_none() {
            return Ok(Act::Emulated(self.place(e.file, false, 0)));
        }
        let new = self.i("newfd")? as i32;
        let flags = self.flags_or_0("flags")? as i32;
        // (dup3's oldfd == newfd was refused above.)
        if old == new {
            return Ok(Act::Emulated(new.into()));
        }
        if new < 0 {
            return Err(libc::EBADF);
        }
        // EBADF with an open `oldfd` (found above): `newfd` at or beyond the process's
        // descriptor limit (RLIMIT_NOFILE), which the model does not keep (rlimits are not
        // replayed): the recorded failure stands, as for F_DUPFD (stress-ng's dup stressor asks
        // for 20001).
        if self.ev.errno == Some(libc::EBADF) {
            return Err(libc::EBADF);
        }
        let prev = lock(&self.p.fds)
            .insert(new, FdEntry { file: e.file, cloexec: flags & libc::O_CLOEXEC != 0 });
        if let Some(prev) = prev {
            self.closed(&[prev]);
        }
        Ok(Act::Emulated(new.into()))
    }

    fn fcntl(&mut self) -> Result<Act, i32> {
        let fd = self.i("fd")? as i32;
        let cmd = self.i("cmd")? as u64;
        let arg = self.i("arg")?;
        let e = self.entry(fd.into())?;
        match cmd {
            fl::F_DUPFD | fl::F_DUPFD_CLOEXEC => {
                // EINVAL: `arg` at or beyond the process's descriptor limit (RLIMIT_NOFILE),
                // which the model does not keep (rlimits are not replayed): the recorded
                // failure stands (stress-ng's fcntl stressor asks for 20001).
                if self.ev.errno == Some(libc::EINVAL) {
                    return Err(libc::EINVAL);
                }
                let min = i32::try_from(arg).map_err(|_| libc::EINVAL)?;
                Ok(Act::Emulated(self.place(e.file, cmd == fl::F_DUPFD_CLOEXEC, min)))
            }
            fl::F_GETFD => Ok(Act::Emulated(if e.cloexec { libc::FD_CLOEXEC.into() } else { 0 })),
            fl::F_SETFD => {
                if let Some(x) = lock(&self.p.fds).get_mut(fd) {
                    x.cloexec = arg & i64::from(libc::FD_CLOEXEC) != 0;
                }
                Ok(Act::Emulated(0))
            }
            _ => {
                let Some(raw) = e.file.raw() else { return Ok(Act::Sim) };
                if fl::fcntl_arg_is_flock(cmd) {
                    return self.fcntl_lock(raw, cmd);
                }
                match cmd {
                    fl::F_GETFL | fl::F_SETFL => {}
                    // F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS: integer arguments.
                    c if (fl::F_LINUX_SPECIFIC_BASE + 7..=fl::F_LINUX_SPECIFIC_BASE + 10)
                        .contains(&c) => {}
                    // Owners, signals, notifications, leases: about processes, not storage
                    // (a lease taken for real would be the replayer's: another replayed
                    // process's open of the file would break it with a SIGIO to the
                    // replayer, which stress-ng's lease stressor killed). And the
                    // commands whose `arg` is a pointer the trace holds only as an address
                    // (F_GET/SET_RW_HINT, F_GET/SET_FILE_RW_HINT: a u64; F_GET/SETOWN_EX): the
                    // kernel would read or write the replayer's memory at that address.
                    _ => return Ok(Act::Sim),
                }
                Ok(Act::Issued(sys::raw(libc::SYS_fcntl, &[raw.into(), cmd as i64, arg])?))
            }
        }
    }

    /// Descriptors the process closed: as the kernel does, its POSIX record locks on their
    /// files go with them ([`crate::world::PosixLocks`]).
    fn closed(&self, gone: &[FdEntry]) {
        let mut locks = lock(&self.p.locks);
        if locks.by_file.is_empty() {
            return;
        }
        for e in gone {
            if let Some(st) = e.file.raw().and_then(|raw| sys::fstat_at(raw).ok()) {
                locks.by_file.remove(&(st.st_dev, st.st_ino));
            }
        }
    }

    /// The process's own open file description of the file `raw` names, on which its POSIX
    /// record locks are taken as OFD locks ([`crate::world::PosixLocks`]); None for what is
    /// no regular file or cannot be opened again (the lock is then taken on `raw` itself).
    fn lock_owner_fd(&self, raw: RawFd) -> Option<Arc<std::os::fd::OwnedFd>> {
        let st = sys::fstat_at(raw).ok()?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return None;
        }
        let mut locks = lock(&self.p.locks);
        if let Some(h) = locks.by_file.get(&(st.st_dev, st.st_ino)) {
            return Some(h.clone());
        }
        let fl = sys::raw(libc::SYS_fcntl, &[raw.into(), libc::F_GETFL.into(), 0]).ok()? as i32;
        if fl & libc::O_PATH != 0 {
            return None;
        }
        let acc = fl & libc::O_ACCMODE;
        // The replayer's own descriptor, opened again: the same file, a new description
        // (with the same access mode, so a lock the mode forbids still fails with EBADF).
        let f = std::fs::OpenOptions::new()
            .read(acc != libc::O_WRONLY)
            .write(acc != libc::O_RDONLY)
            .open(format!("/proc/self/fd/{raw}"))
            .ok()?;
        let h = Arc::new(std::os::fd::OwnedFd::from(f));
        locks.by_file.insert((st.st_dev, st.st_ino), h.clone());
        Some(h)
    }

    /// A record lock from the trace's `lock_*` columns.
    fn fcntl_lock(&mut self, raw: RawFd, cmd: u64) -> Result<Act, i32> {
        let x = |k: &str| self.ev.extra_int(k);
        // SAFETY: an all-zero struct flock is valid.
        let mut lk: libc::flock = unsafe { std::mem::zeroed() };
        lk.l_type = x("lock_type").unwrap_or(0) as i16;
        lk.l_whence = x("lock_whence").unwrap_or(0) as i16;
        // The whole values (schema 3); Re-Animator's int32 columns hold no value beyond 32
        // bits (null), and older traces only those.
        lk.l_start = x(ra_trace::schema::LOCK_START64).or_else(|| x("lock_start")).unwrap_or(0);
        lk.l_len = x(ra_trace::schema::LOCK_LENGTH64).or_else(|| x("lock_length")).unwrap_or(0);
        let is_get = matches!(cmd, fl::F_GETLK | fl::F_OFD_GETLK);
        if is_get {
            // The columns hold the kernel's answer: where no lock conflicted (F_UNLCK) the
            // program's own range (the kernel changes only `l_type`; the type it asked about
            // is lost), else the conflicting lock. Ask about that range: as a read lock where
            // none conflicted (it conflicts only with write locks, which would have
            // conflicted with the program's request of either type), as a write lock where
            // one did (it conflicts with any other owner's lock there).
            let none = lk.l_type == libc::F_UNLCK as i16;
            lk.l_type = if none { libc::F_RDLCK } else { libc::F_WRLCK } as i16;
        }
        // POSIX locks (owned by the process's descriptor table) as OFD locks on the table's
        // own description of the file.
        let owner = matches!(cmd, fl::F_SETLK | fl::F_SETLKW | fl::F_GETLK)
            .then(|| self.lock_owner_fd(raw))
            .flatten();
        let (fd, cmd) = match &owner {
            Some(h) => {
                use std::os::fd::AsRawFd;
                // A range from the file position: the program's position is that of its own
                // open file (`raw`), not of the table's lock description (stress-ng's lockf
                // stressor seeks, then locks 8 bytes at SEEK_CUR).
                if lk.l_whence == libc::SEEK_CUR as i16 {
                    let pos = sys::raw(libc::SYS_lseek, &[raw.into(), 0, libc::SEEK_CUR.into()])?;
                    lk.l_start = lk.l_start.checked_add(pos).ok_or(libc::EOVERFLOW)?;
                    lk.l_whence = libc::SEEK_SET as i16;
                }
                let ofd = match cmd {
                    fl::F_SETLK => fl::F_OFD_SETLK,
                    fl::F_SETLKW => fl::F_OFD_SETLKW,
                    _ => fl::F_OFD_GETLK,
                };
                (h.as_raw_fd(), ofd)
            }
            None => (raw, cmd),
        };
        let r = match cmd {
            fl::F_SETLKW => {
                self.retry_blocking(|| sys::fcntl_lock(fd, libc::F_SETLK, &mut lk.clone()))
            }
            fl::F_OFD_SETLKW => {
                self.retry_blocking(|| sys::fcntl_lock(fd, libc::F_OFD_SETLK, &mut lk.clone()))
            }
            c => sys::fcntl_lock(fd, c as i32, &mut lk),
        }?;
        // (`owner` kept the table's description open until here.)
        drop(owner);
        self.check_getlk(is_get, &lk);
        Ok(Act::Issued(r))
    }

    /// F_GETLK's answer: a conflicting lock where the recording saw none is a difference.
    fn check_getlk(&mut self, is_get: bool, lk: &libc::flock) {
        if !is_get || !self.full {
            return;
        }
        if let Some(t) = self.ev.extra_int("lock_type") {
            if t == i64::from(libc::F_UNLCK) && lk.l_type != libc::F_UNLCK as i16 {
                self.diffs.push(Diff::new(
                    "flock.l_type",
                    "F_UNLCK (no conflicting lock)",
                    format!("{} (a conflicting lock)", lk.l_type),
                ));
            }
        }
    }

    fn pipe(&mut self) -> Result<Act, i32> {
        let flags = self.flags_or_0("flags")? as i32;
        let (a, b) = sys::pipe2((flags & (libc::O_NONBLOCK | libc::O_DIRECT)) | libc::O_CLOEXEC)?;
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let mut t = lock(&self.p.fds);
        let mut p0 = t.lowest_free(0);
        let mut p1 = t.lowest_free(p0 + 1);
        if p1 == p0 {
            p1 += 1;
        }
        if let Some((r0, r1)) = fd_pair(self.ev).filter(|_| self.rec_ok()) {
            if r0 != r1 && self.either_order(&t, &[r0, r1]) {
                (p0, p1) = (r0, r1);
            }
            t.insert(
                r0,
                FdEntry { file: OpenFile::new(Handle::Pipe(a), b"pipe:".to_vec(), 0), cloexec },
            );
            t.insert(
                r1,
                FdEntry { file: OpenFile::new(Handle::Pipe(b), b"pipe:".to_vec(), 0), cloexec },
            );
            if (r0, r1) != (p0, p1) {
                drop(t);
                self.diffs.push(Diff::new(
                    "pipe descriptors",
                    format!("[{r0}, {r1}]"),
                    format!("[{p0}, {p1}]"),
                ));
            }
        }
        Ok(Act::Issued(0))
    }

    fn mmap(&mut self) -> Result<Act, i32> {
        let len = self.i("length")? as u64;
        let prot = self.i("prot")? as i32;
        let flags = self.i("flags")? as i32;
        let fd = self.i("fd")?;
        let off = self.i("offset")?;
        if !self.rec_ok() {
            // Compare the failure with an emulated check only.
            return Ok(Act::EmulatedAsRecorded);
        }
        let at = self.rec_ret() as u64;
        let anon = flags & libc::MAP_ANONYMOUS != 0 || fd < 0;
        if flags & libc::MAP_FIXED != 0 {
            lock(&self.p.mm).unmap(at, len);
        }
        let serial = MAP_SERIAL.fetch_add(1, Ordering::Relaxed);
        if anon {
            lock(&self.p.mm).maps.insert(
                at,
                Mapping {
                    len,
                    real: None,
                    file: None,
                    offset: 0,
                    shared: false,
                    fd: -1,
                    prot,
                    serial,
                },
            );
            return Ok(Act::EmulatedAsRecorded);
        }
        let f = self.file("fd")?;
        let shared = flags & libc::MAP_TYPE == libc::MAP_SHARED
            || flags & libc::MAP_TYPE == libc::MAP_SHARED_VALIDATE;
        let real = match (self.sh.opts.mmap, f.raw()) {
            (MmapMode::Map, Some(raw)) if len > 0 => {
                // No MAP_POPULATE: memory the replayer touches is what page records copy, not
                // what the trace says to map.
                Some((self.real_map(raw, len, prot, shared, off)?, len as usize))
            }
            (_, Some(raw)) => {
                // pread mode: the same checks the kernel makes (the descriptor is a mappable
                // file), without a mapping.
                let st = sys::fstat_at(raw)?;
                if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                    return Err(libc::ENODEV);
                }
                None
            }
            (_, None) => return Ok(Act::Sim),
        };
        if shared && prot & libc::PROT_WRITE != 0 && !self.sh.page_records {
            self.warn(format!(
                "a shared file mapping of {} may be written through: this trace's backend cannot \
                 see writes to mapped memory, so the file's content can differ",
                String::from_utf8_lossy(&f.path)
            ));
        }
        let fd = i32::try_from(fd).unwrap_or(-1);
        lock(&self.p.mm).maps.insert(
            at,
            Mapping { len, real, file: Some(f), offset: off, shared, fd, prot, serial },
        );
        Ok(Act::IssuedLoose(at as i64))
    }

    /// A real mapping of `len` bytes of file `raw` at `off` for page records to copy through.
    fn real_map(
        &self,
        raw: RawFd,
        len: u64,
        prot: i32,
        shared: bool,
        off: i64,
    ) -> Result<usize, i32> {
        let p = prot & (libc::PROT_READ | libc::PROT_WRITE);
        let kind = if shared { libc::MAP_SHARED } else { libc::MAP_PRIVATE };
        sys::mmap(usize::try_from(len).map_err(|_| libc::ENOMEM)?, p, kind, raw, off)
    }

    /// mremap: the mapping at the old address moves to the recorded new one with its new
    /// length. Its real mapping (if any) is replaced by a new one of the new length, so that
    /// what the replayer maps always matches what it thinks it maps; when that cannot be made,
    /// page records go through pread/pwrite instead.
    fn mremap(&mut self) -> Result<Act, i32> {
        if !self.rec_ok() {
            return Ok(Act::EmulatedAsRecorded);
        }
        let old = self.i("old_address")? as u64;
        let old_size = self.i("old_size")? as u64;
        let new_size = self.i("new_size")? as u64;
        let mut mm = lock(&self.p.mm);
        let Some(m) = mm.maps.remove(&old) else { return Ok(Act::EmulatedAsRecorded) };
        let mut moved = Mapping {
            len: new_size,
            real: None,
            file: m.file.clone(),
            offset: m.offset,
            shared: m.shared,
            fd: m.fd,
            prot: m.prot,
            serial: m.serial,
        };
        if old_size > 0 && old_size < m.len {
            // Only the head moves; the rest stays where it was (unmap keeps it, with its part
            // of the real mapping, and unmaps the head's).
            mm.maps.insert(old, m);
            mm.unmap(old, old_size);
        } else {
            drop(m);
        }
        if self.sh.opts.mmap == MmapMode::Map && new_size > 0 {
            if let Some(raw) = moved.file.as_ref().and_then(|f| f.raw()) {
                moved.real = self
                    .real_map(raw, new_size, moved.prot, moved.shared, moved.offset)
                    .ok()
                    .map(|a| (a, new_size as usize));
            }
        }
        mm.maps.insert(self.rec_ret() as u64, moved);
        Ok(Act::EmulatedAsRecorded)
    }

    fn exec(&mut self, def: &SyscallDef) -> Result<Act, i32> {
        let p = self.path("pathname")?.to_vec();
        let dirfd = if def.arg("dirfd").is_some() { self.dirfd("dirfd") } else { None };
        let flags = self.flags_or_0("flags")? as i32;
        let l = self.locate(
            dirfd,
            &p,
            flags & libc::AT_SYMLINK_NOFOLLOW == 0,
            flags & libc::AT_EMPTY_PATH != 0,
        )?;
        let st = sys::fstat_at(l.fd())?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(libc::EACCES);
        }
        sys::faccessat2(l.fd(), libc::X_OK, 0)?;
        if self.rec_ok() {
            self.exec_effect();
        }
        Ok(Act::Emulated(0))
    }

    /// What a successful exec does to the process's state ([`Process::after_exec`]): its
    /// own descriptor table without the close-on-exec descriptors, and a new address space.
    fn exec_effect(&mut self) {
        let (next, gone) = self.p.after_exec();
        self.closed(&gone);
        drop(gone);
        self.sh.procs.insert(self.pl.proc, next);
    }
}

/// An extended attribute's name the kernel takes (`import_xattr_name`): 1 to `XATTR_NAME_MAX`
/// (255) bytes. Any other name is `ERANGE` before the path or descriptor is looked at.
pub(crate) fn xattr_name_valid(name: &[u8]) -> bool {
    const XATTR_NAME_MAX: usize = 255;
    (1..=XATTR_NAME_MAX).contains(&name.len())
}

/// A located file: one the call owns (O_PATH from the root) or a program's descriptor.
enum Located {
    Own(OwnedFd),
    File(Arc<OpenFile>),
}

impl Located {
    fn fd(&self) -> RawFd {
        match self {
            Located::Own(f) => f.as_raw_fd(),
            Located::File(f) => f.raw().unwrap_or(-1),
        }
    }
}

/// The C string of a NUL-free byte string (for messages).
pub fn lossy(c: &CStr) -> String {
    c.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_paths() {
        assert!(is_special(b"/dev/null"));
        assert!(is_special(b"/proc/self/status"));
        assert!(is_special(b"/a/../sys"));
        assert!(!is_special(b"/devices"));
        assert!(!is_special(b"/home/x"));
    }

    /// Every registry entry that names a replay handler reaches it with the arguments its
    /// entry declares: no handler asks for an argument its calls do not have (that would
    /// leave the call unreplayed with "not in the trace"), and every Reissue/Emulate entry is
    /// replayed, not skipped. (That each such entry names a handler is the type's guarantee:
    /// `ReplayPolicy::Reissue(Handler)`.)
    #[test]
    fn every_entry_with_a_handler_is_replayed_with_its_own_arguments() {
        use ra_syscalls::ArgKind;
        let dir = std::env::temp_dir().join(format!("ra-calls-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sh = Shared {
            root: Root::new(&dir).unwrap(),
            procs: Procs::default(),
            opts: Options::new(dir.clone()),
            abort: AtomicBool::new(false),
            is_root: false,
            page_records: true,
            in_flight: Default::default(),
            rings: Default::default(),
        };
        let mut problems = Vec::new();
        for def in ra_syscalls::REGISTRY {
            let Some(_) = def.replay.handler() else { continue };
            let mut ev = Event::new(def);
            // A recorded failure with every argument present: integers -1 (no such descriptor),
            // paths and buffers a short name.
            ev.ret = Some(-1);
            ev.errno = Some(libc::EBADF);
            for (a, v) in def.args.iter().zip(ev.args.iter_mut()) {
                *v = match a.kind {
                    ArgKind::Path | ArgKind::InBuf(_) | ArgKind::InStruct(..) => {
                        ArgValue::data(b"x\0".to_vec())
                    }
                    ArgKind::OutBuf(_) | ArgKind::OutStruct(..) | ArgKind::IovOut { .. } => {
                        ArgValue::Absent
                    }
                    ArgKind::IovIn { .. } => ArgValue::Iov(Vec::new()),
                    ArgKind::StrArray => ArgValue::Strings(Vec::new()),
                    ArgKind::InOutStruct(..) => ArgValue::data(vec![0; 8]),
                    _ => ArgValue::Int(-1),
                };
            }
            let p = Arc::new(Process::initial(b"/".to_vec(), 0o022, true));
            let out = execute(&sh, &p, &ev, &Placement::default());
            let why = out.warn.clone().unwrap_or_default();
            if out.mode == Mode::Skipped || why.contains("not in the trace") {
                problems.push(format!("{}: {:?} {why}", def.name, out.mode));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn fills_are_deterministic() {
        assert_eq!(fill(Fill::Random, 7, 100), fill(Fill::Random, 7, 100));
        assert_ne!(fill(Fill::Random, 7, 100), fill(Fill::Random, 8, 100));
        assert_eq!(fill(Fill::Pattern, 1, 5), b"reani");
        assert_eq!(fill(Fill::Random, 1, 13).len(), 13);
    }
}
