//! Ctrl-C, SIGTERM and SIGHUP for the commands that write several outputs, or one in many
//! steps (`split`, `select`, `merge`, `export` to tables): a stop leaves no half-written file.
//!
//! A signal only records itself (an atomic and a byte down a pipe). The command asks
//! [`check`] between steps (every call it copies) and, asked to stop, returns [`Stopped`];
//! its [`crate::partial::Partial`] files are removed as they are dropped, and [`outcome`]
//! then runs the command's own clean-up (what it does with the outputs it finished) and
//! turns the error into [`Interrupted`]: one line, exit status 128 + the signal's number.
//! A thread of this module waits for the signal's byte: should the command not have ended
//! [`GRACE`] after it (a long write), or a second signal come, that thread removes every
//! partial file still registered, runs the clean-up and ends the process itself.
//!
//! A signal the process inherited ignored (`nohup`, a background job of a non-interactive
//! shell) stays ignored, as a command without handlers would keep it.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use anyhow::Result;

/// How long after a stop request the command may take to end by itself.
pub(crate) const GRACE: Duration = Duration::from_millis(700);

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The first stop signal received (0: none).
static REQUESTED: AtomicI32 = AtomicI32::new(0);
/// The pipe's write end, for the handler (-1 until installed).
static PIPE_W: AtomicI32 = AtomicI32::new(-1);

/// What a forced stop removes, and what it says.
struct State {
    /// Files being written (`.NAME.partial`).
    partials: Vec<PathBuf>,
    /// The command's clean-up: removes the finished outputs it does not keep and says, in
    /// one line, what it did (`signal` given as its name).
    on_stop: Option<OnStop>,
    /// The outputs are all in place: a stop now changes nothing.
    committed: bool,
}

type OnStop = Box<dyn FnMut(&str) -> String + Send>;

static STATE: Mutex<State> =
    Mutex::new(State { partials: Vec::new(), on_stop: None, committed: false });

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The error [`check`] returns once a stop is asked for.
#[derive(Debug)]
pub(crate) struct Stopped(pub libc::c_int);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stopped by {}", signal_name(self.0))
    }
}

impl std::error::Error for Stopped {}

/// A command stopped by a signal, with what it left (the whole line, without `reanimator: `).
#[derive(Debug)]
pub(crate) struct Interrupted {
    pub signal: libc::c_int,
    pub message: String,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Interrupted {}

impl Interrupted {
    /// 128 + the signal's number, as a shell reports a process the signal ended.
    pub fn exit_code(&self) -> u8 {
        (128 + self.signal).clamp(0, 255) as u8
    }
}

pub(crate) fn signal_name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT (Ctrl-C)",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// The stop signal received, if any.
pub(crate) fn requested() -> Option<libc::c_int> {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// `Err(Stopped)` once a stop is asked for.
pub(crate) fn check() -> Result<()> {
    match requested() {
        None => Ok(()),
        Some(s) => Err(Stopped(s).into()),
    }
}

/// Handle the stop signals from now on; `on_stop` is the command's clean-up (see
/// [`State::on_stop`]), run once, by [`outcome`] or by a forced stop. Once per process.
pub(crate) fn install(on_stop: impl FnMut(&str) -> String + Send + 'static) -> Result<()> {
    state().on_stop = Some(Box::new(on_stop));
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).map_err(|e| {
            anyhow::Error::new(e).context("cannot create the pipe that stop signals are told by")
        });
    }
    // SAFETY: pipe2 just made these two descriptors, owned by no one else.
    let read = unsafe { OwnedFd::from_raw_fd(fds[0]) };
    PIPE_W.store(fds[1], Ordering::SeqCst);
    std::thread::Builder::new().name("stop-watch".into()).spawn(move || watch(read)).map_err(
        |e| anyhow::Error::new(e).context("cannot start the thread that stops on signals"),
    )?;
    for sig in SIGNALS {
        // SAFETY: an all-zero sigaction is valid; sigaction with a null new action only
        // reads the current one.
        let ignored = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old);
            old.sa_sigaction == libc::SIG_IGN
        };
        if !ignored {
            // SAFETY: the handler only uses atomics, write and errno, all async-signal-safe.
            unsafe {
                crate::signals::set_handler(sig, on_signal as *const () as usize, libc::SA_RESTART)
            };
        }
    }
    Ok(())
}

extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: errno is this thread's; it is restored for the code the signal interrupted.
    let saved = unsafe { *libc::__errno_location() };
    let _ = REQUESTED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    let fd = PIPE_W.load(Ordering::SeqCst);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write is async-signal-safe; the byte is a live local.
        unsafe { libc::write(fd, (&b as *const u8).cast(), 1) };
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved };
}

/// The watcher: after the first signal's byte, waits [`GRACE`] (or for a second signal),
/// then, if the process still runs, stops it.
fn watch(read: OwnedFd) {
    use std::os::fd::AsRawFd;
    let fd = read.as_raw_fd();
    let wait = |ms: i32| -> bool {
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n > 0 {
            let mut b = [0u8; 16];
            // SAFETY: reads into a live buffer of that length.
            unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
        }
        n > 0
    };
    while !wait(-1) {}
    // A second signal, or the grace period over: the command did not end by itself.
    wait(GRACE.as_millis() as i32);
    let sig = requested().unwrap_or(libc::SIGINT);
    let mut st = state();
    if st.committed {
        return;
    }
    for p in &st.partials {
        let _ = std::fs::remove_file(p);
    }
    let message = match st.on_stop.take() {
        Some(mut f) => f(signal_name(sig)),
        // The command is running its clean-up already: let it.
        None => return,
    };
    eprintln!("reanimator: {message}");
    // SAFETY: _exit ends the process at once, without running other threads' code; the
    // lock on STATE held meanwhile keeps the command from renaming a file into place.
    unsafe { libc::_exit(128 + sig) };
}

/// The command's result: an error after a stop request becomes [`Interrupted`], with what
/// the clean-up says (after the command's partial files were removed, as it returned).
pub(crate) fn outcome<T>(r: Result<T>) -> Result<T> {
    let Some(sig) = requested() else { return r };
    if r.is_ok() {
        // It finished before it noticed: its outputs are whole.
        return r;
    }
    let taken = state().on_stop.take();
    let message = match taken {
        Some(mut f) => f(signal_name(sig)),
        None => format!("interrupted by {}", signal_name(sig)),
    };
    Err(Interrupted { signal: sig, message }.into())
}

/// The outputs are all in place: a stop from now on leaves them.
pub(crate) fn commit() {
    state().committed = true;
}

/// `create` makes the partial file `p`, which a forced stop then removes (until [`forget`]);
/// the two at once, as far as a forced stop can tell.
pub(crate) fn claim<T, E>(p: &Path, create: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let mut st = state();
    let r = create();
    if r.is_ok() {
        st.partials.push(p.to_path_buf());
    }
    r
}

/// `p` is no longer a partial file: `f` (its rename into place, its removal) runs while a
/// forced stop cannot.
pub(crate) fn forget<T>(p: &Path, f: impl FnOnce() -> T) -> T {
    let mut st = state();
    let r = f();
    if let Some(i) = st.partials.iter().position(|q| q == p) {
        st.partials.swap_remove(i);
    }
    r
}
