//! Files read through a memory map (a trace being compiled, [`ra_trace::TraceReader::map_file`];
//! a plan being replayed) must not shrink while mapped: reading a page the file no longer
//! has raises SIGBUS, which would end the process without a word. This turns that SIGBUS
//! (and only that one: `BUS_ADRERR`) into one clear message and exit status 2.

const MSG: &[u8] = b"reanimator: error: a file read through a memory map (the trace being \
compiled, or the plan being replayed) was cut short while in use (SIGBUS); stopped. Remove \
the .NAME.partial file an unfinished output left, and run again on a file nothing else writes\n";

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t; write, _exit and signal are
    // async-signal-safe.
    unsafe {
        if !info.is_null() && (*info).si_code == libc::BUS_ADRERR {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(2);
        }
        // Any other cause: the default action, when the faulting access runs again.
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
    }
}

/// Install the handler (once, at start).
pub(crate) fn report_cut_maps() {
    // SAFETY: a zeroed sigaction with an SA_SIGINFO handler that only calls
    // async-signal-safe functions.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigbus as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}
