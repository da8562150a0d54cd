//! Output files that appear only when complete: a command writes `.NAME.partial` beside
//! NAME and renames it into place when it has finished, so that an error, a panic or a
//! stop never leaves a half-written NAME that looks like a whole one. Every such file is
//! registered with [`crate::interrupt`], whose forced stop removes what is still partial.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};

/// A claimed `.NAME.partial` file. Dropped before [`Partial::persist`] (an error, a
/// panic), it is removed.
pub(crate) struct Partial {
    tmp: PathBuf,
    dest: PathBuf,
    persisted: bool,
    /// Registered for removal on a signal ([`Partial::create_removed_on_signal`]).
    on_signal: bool,
}

impl Partial {
    /// Claims `.NAME.partial` in the directory of `dest` (NAME: `dest`'s file name), creating
    /// it empty and exclusively: an existing one is another run writing `dest`, or what a run
    /// killed outright left, and is refused, not taken over. `label` is how the command's
    /// usage names `dest` (`-o`, `OUT`), for the message when `dest` names no file.
    pub(crate) fn create(dest: &Path, label: &str) -> Result<Partial> {
        let name =
            dest.file_name().with_context(|| format!("{label} {}: name a file", dest.display()))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(".partial");
        let tmp = dest.with_file_name(tmp_name);
        match crate::interrupt::claim(&tmp, || ra_fsstate::private::create_new(&tmp)) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => bail!(
                "{} exists: another run is writing {}, or one was killed before it could \
                 remove it (remove it if none is running)",
                tmp.display(),
                dest.display()
            ),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot create {}", tmp.display()));
            }
        }
        Ok(Partial { tmp, dest: dest.to_path_buf(), persisted: false, on_signal: false })
    }

    /// Where to write.
    pub(crate) fn path(&self) -> &Path {
        &self.tmp
    }

    /// [`Partial::create`], and then Ctrl-C, SIGTERM and SIGHUP remove the file before they
    /// end the process as they would have: for a command that has no stop of its own
    /// (`compile` has: it stops, then drops its [`Partial`]). Once per process.
    pub(crate) fn create_removed_on_signal(dest: &Path, label: &str) -> Result<Partial> {
        for sig in SIGNALS {
            // SAFETY: the handler only calls async-signal-safe functions (an atomic load,
            // unlink, signal, raise), on a path set once before it is armed.
            unsafe { crate::signals::set_handler(sig, remove_and_die as *const () as usize, 0) };
        }
        // A signal that arrives while the file is created waits until it is registered
        // (and one that finds no file of ours leaves alone the file that was there).
        signals_held(|| {
            let mut p = Partial::create(dest, label)?;
            let path = CString::new(p.tmp.as_os_str().as_bytes())?;
            if SIGNAL_REMOVES.set(path).is_ok() {
                p.on_signal = true;
                ARMED.store(true, Ordering::SeqCst);
            }
            Ok(p)
        })
    }

    /// Renames the file into place as `dest` (replacing what may be there: the caller
    /// decides beforehand whether `dest` may exist).
    pub(crate) fn persist(mut self) -> Result<()> {
        let r = crate::interrupt::forget(&self.tmp, || {
            self.settle(|p| std::fs::rename(&p.tmp, &p.dest))
        });
        r.with_context(|| {
            format!("moving {} into place at {}", self.tmp.display(), self.dest.display())
        })?;
        self.persisted = true;
        Ok(())
    }

    /// `f` on the file, after which a signal no longer removes it (the two at once, as far
    /// as signals can tell).
    fn settle<T>(&self, f: impl FnOnce(&Partial) -> T) -> T {
        if !self.on_signal {
            return f(self);
        }
        signals_held(|| {
            let r = f(self);
            ARMED.store(false, Ordering::SeqCst);
            r
        })
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = crate::interrupt::forget(&self.tmp, || {
                self.settle(|p| std::fs::remove_file(&p.tmp))
            });
        }
    }
}

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// `f` with [`SIGNALS`] held back in this thread; one that arrives meanwhile is delivered
/// after.
fn signals_held<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: all-zero sigset_t values are valid, sigemptyset/sigaddset initialise `block`,
    // and the pointers are to live locals.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        for sig in SIGNALS {
            libc::sigaddset(&mut block, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
    }
    let r = f();
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    r
}

/// The partial file that [`Partial::create_removed_on_signal`] registered, and whether it
/// is still there to remove (until it is renamed into place or removed).
static SIGNAL_REMOVES: OnceLock<CString> = OnceLock::new();
static ARMED: AtomicBool = AtomicBool::new(false);

extern "C" fn remove_and_die(sig: libc::c_int) {
    if let Some(p) = SIGNAL_REMOVES.get().filter(|_| ARMED.load(Ordering::SeqCst)) {
        // SAFETY: unlink is async-signal-safe; `p` is a NUL-terminated path that lives as
        // long as the process.
        unsafe { libc::unlink(p.as_ptr()) };
    }
    // SAFETY: signal and raise are async-signal-safe; with the default action restored the
    // signal ends the process as if it had not been caught.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
