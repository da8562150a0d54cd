//! The guardian: a small process forked before the programs are attached, whose one job is to
//! outlive a recorder that dies without cleaning up (SIGKILL, a crash, the OOM killer).
//!
//! `--loss throttle` stops traced processes with SIGSTOP and relies on the recorder to continue
//! them once it has drained the ring. A recorder killed while a process is stopped would leave
//! it stopped for good: the attached process of `-p`, or the children of the command (only the
//! command itself dies with the recorder). The guardian holds the read end of a pipe whose write
//! end only the recorder holds, and the `stops` map (the processes the programs have stopped
//! and the recorder has not continued yet). When the recorder ends normally it writes one byte
//! first and the guardian exits at once; when the pipe reaches end of file without it, the
//! guardian waits for the programs, detached by the recorder's death, to finish their runs,
//! continues (SIGCONT) every process the map still flags, twice a quarter second apart, and
//! exits.
//!
//! The guardian runs in a session of its own, so that killing the recorder's process group
//! spares it; it ignores the terminal's signals.
//!
//! Forked from a process with threads, the child runs only async-signal-safe code: raw system
//! calls on memory prepared before the fork, no allocation.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::{Error, Result};

/// `bpf(2)` commands (uapi/linux/bpf.h).
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_MAP_GET_NEXT_KEY: libc::c_long = 4;

/// What the guardian says when it had something to do.
const MESSAGE: &[u8] =
    b"reanimator (guardian): the recorder died; continued the processes it had stopped \
      (--loss throttle)\n";

/// The recorder's side: dropping it without [`Guardian::finish`] (an error path) makes the
/// guardian continue what is left stopped.
pub(super) struct Guardian {
    pid: libc::pid_t,
    tx: Option<OwnedFd>,
}

impl Guardian {
    /// Fork the guardian over the `stops` map `stops_fd` (u32 tgid -> u64, non-zero: stopped).
    /// Call before attaching the programs: the guardian closes every other descriptor it
    /// inherited, but must never hold the programs' links.
    pub(super) fn spawn(stops_fd: RawFd) -> Result<Guardian> {
        let mut p = [0 as RawFd; 2];
        // SAFETY: pipe2 writes two descriptors into `p`.
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(Error::Sys { call: "pipe2", source: std::io::Error::last_os_error() });
        }
        // SAFETY: both are new descriptors owned by nothing else.
        let (rx, tx) = unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) };
        // SAFETY: the child runs guard() only: async-signal-safe system calls, no allocation.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(Error::Sys { call: "fork", source: std::io::Error::last_os_error() });
        }
        if pid == 0 {
            // SAFETY: this is the child, see guard().
            unsafe { guard(rx.as_raw_fd(), stops_fd) }
        }
        drop(rx);
        Ok(Guardian { pid, tx: Some(tx) })
    }

    /// The recorder ends normally (it has continued every process it stopped): the guardian
    /// exits without doing anything, and is reaped.
    pub(super) fn finish(mut self) {
        if let Some(tx) = self.tx.take() {
            // SAFETY: one byte from a live buffer to our descriptor.
            unsafe { libc::write(tx.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        }
        let mut status = 0;
        // SAFETY: waitpid writes the status of our child.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

impl Drop for Guardian {
    /// Not finished: end of file for the guardian, which continues what is stopped once the
    /// programs are detached. Not waited for (this process is on its way out).
    fn drop(&mut self) {
        self.tx = None;
    }
}

/// The guardian's life. Never returns.
///
/// # Safety
/// Only in the child of a fork, with `rx` and `stops` open.
unsafe fn guard(rx: RawFd, stops: RawFd) -> ! {
    // SAFETY: async-signal-safe calls on our own descriptors and memory (see the caller).
    unsafe {
        // Ctrl-C and friends are for the recorder, which then ends and tells us.
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_IGN);
        }
        libc::prctl(libc::PR_SET_NAME, c"ra-guardian".as_ptr());
        // Its own session: a kill of the recorder's whole process group (a job runner's
        // timeout, `kill -9 -PGID`) does not take the guardian with it.
        libc::setsid();
        // Keep stderr, the pipe and the map; close the rest (the recorder's trace file, the
        // programs, the ring, the command's stdin and stdout).
        let (lo, hi) = (rx.min(stops), rx.max(stops));
        for (a, b) in [(0, 1), (3, lo - 1), (lo + 1, hi - 1), (hi + 1, libc::c_int::MAX)] {
            if a <= b {
                libc::syscall(libc::SYS_close_range, a as libc::c_uint, b as libc::c_uint, 0);
            }
        }
        let mut b = 0u8;
        loop {
            let n = libc::read(rx, (&raw mut b).cast(), 1);
            if n == 1 {
                libc::_exit(0); // a normal end
            }
            if n == 0 {
                break; // the recorder is gone
            }
            if *libc::__errno_location() != libc::EINTR {
                libc::_exit(1);
            }
        }
        let mut resumed = 0u32;
        for _ in 0..2 {
            // Program runs in flight when the recorder's links closed finish within this.
            let t = libc::timespec { tv_sec: 0, tv_nsec: 250_000_000 };
            libc::nanosleep(&t, std::ptr::null_mut());
            resumed += continue_stopped(stops);
        }
        if resumed > 0 {
            libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        }
        libc::_exit(0)
    }
}

/// SIGCONT to every process the `stops` map flags; how many.
///
/// # Safety
/// `stops` is the map's descriptor. (Async-signal-safe: bpf(2) and kill(2) on stack memory.)
unsafe fn continue_stopped(stops: RawFd) -> u32 {
    let mut n = 0;
    let mut key = 0u32;
    let mut next = 0u32;
    let mut first = true;
    loop {
        // union bpf_attr for BPF_MAP_GET_NEXT_KEY: map_fd, (pad), key, next_key.
        let mut attr = [0u64; 4];
        attr[0] = stops as u32 as u64;
        attr[1] = if first { 0 } else { (&raw const key) as u64 };
        attr[2] = (&raw mut next) as u64;
        // SAFETY: the kernel reads and writes the u32s the attribute points to.
        let r = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                BPF_MAP_GET_NEXT_KEY,
                attr.as_mut_ptr(),
                32 as libc::c_uint,
            )
        };
        if r != 0 {
            return n; // no more keys (or the map is gone)
        }
        first = false;
        key = next;
        let mut since = 0u64;
        // ... for BPF_MAP_LOOKUP_ELEM: map_fd, (pad), key, value, flags.
        let mut attr = [0u64; 4];
        attr[0] = stops as u32 as u64;
        attr[1] = (&raw const key) as u64;
        attr[2] = (&raw mut since) as u64;
        // SAFETY: as above.
        let r = unsafe {
            libc::syscall(libc::SYS_bpf, BPF_MAP_LOOKUP_ELEM, attr.as_mut_ptr(), 32 as libc::c_uint)
        };
        if r == 0 && since != 0 && key != 0 && key <= i32::MAX as u32 {
            // SAFETY: kill takes a pid and a signal.
            unsafe { libc::kill(key as libc::pid_t, libc::SIGCONT) };
            n += 1;
        }
    }
}
