//! One place for the `sigaction` set-up the commands share (stop requests, partial outputs,
//! mapped files cut short).

/// Install `handler` (the address of an `extern "C"` function) for `sig`, with an empty mask
/// and `flags` (no `SA_RESTART` unless given: a wait the signal interrupts returns `EINTR`).
///
/// # Safety
/// `handler` must have the signature `flags` calls for (`SA_SIGINFO`: three arguments) and
/// call only async-signal-safe functions.
pub(crate) unsafe fn set_handler(sig: libc::c_int, handler: usize, flags: libc::c_int) {
    // SAFETY: an all-zero sigaction is valid and sigemptyset initialises its mask; what the
    // handler does is the caller's contract above.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler;
        sa.sa_flags = flags;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}
