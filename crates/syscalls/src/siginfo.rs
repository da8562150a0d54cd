//! What a delivered signal's `siginfo_t` holds, for the `signal_deliver` pseudo-call: which
//! members a signal carries (by its number and `si_code`, as strace's `printsiginfo` reads
//! them), the one decoder of the kernel's 64-bit layout both recorders use, and the names of
//! the `si_code` values.

/// Which of `siginfo_t`'s union members a signal carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Nothing beyond the number and code (a kernel-sent signal with no fields, `SI_KERNEL`).
    Plain,
    /// `kill`, `tgkill`, `raise` (`SI_USER`, `SI_TKILL`): the sender's pid and uid.
    Kill,
    /// `sigqueue`, message queues, AIO (`SI_QUEUE` and the other negative codes): the
    /// sender's pid and uid and the value sent.
    Rt,
    /// A POSIX timer's expiry (`SI_TIMER`): the value given to `timer_create`.
    Timer,
    /// `SIGCHLD` from the kernel: the child's pid, uid, status and times.
    Chld,
    /// `SIGILL`, `SIGFPE`, `SIGSEGV`, `SIGBUS` from the kernel: the faulting address.
    Fault,
    /// `SIGIO`/`SIGPOLL` from the kernel: the band event (in `value`).
    Poll,
    /// `SIGSYS` from seccomp: the call's address (in `addr`) and number (in `value`).
    Sys,
}

// Linux's signal numbers (x86_64 and aarch64 alike).
const SIGILL: i32 = 4;
const SIGTRAP: i32 = 5;
const SIGBUS: i32 = 7;
const SIGFPE: i32 = 8;
const SIGSEGV: i32 = 11;
const SIGCHLD: i32 = 17;
const SIGIO: i32 = 29;
const SIGSYS: i32 = 31;

/// `si_code` of a signal sent by `kill`.
pub const SI_USER: i32 = 0;
/// `si_code` of a signal the kernel sends with no signal-specific code.
pub const SI_KERNEL: i32 = 0x80;
/// `si_code` of a POSIX timer's expiry (`timer_create`).
pub const SI_TIMER: i32 = -2;
/// `si_code` of a queued `SIGIO` ([`Layout::Poll`]: the band event in `value`).
pub const SI_SIGIO: i32 = -5;
/// `si_code` of a signal sent by `tkill` or `tgkill`.
pub const SI_TKILL: i32 = -6;

/// The members signal `signo` with code `code` carries.
pub fn layout(signo: i32, code: i32) -> Layout {
    if code <= 0 {
        // Sent by a process (`si_code` <= 0: SI_FROMUSER).
        return match code {
            SI_USER | SI_TKILL => Layout::Kill,
            SI_TIMER => Layout::Timer,
            SI_SIGIO => Layout::Poll,
            _ => Layout::Rt,
        };
    }
    match signo {
        SIGCHLD => Layout::Chld,
        SIGILL | SIGFPE | SIGSEGV | SIGBUS => Layout::Fault,
        SIGIO => Layout::Poll,
        SIGSYS => Layout::Sys,
        _ => Layout::Plain,
    }
}

/// A delivered signal's `siginfo_t`, the members its [`Layout`] does not carry zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SigInfo {
    /// `si_signo`: the signal number (Linux's, `SIGCHLD` = 17).
    pub signo: i32,
    /// `si_errno`: an errno the signal carries (0 for almost every signal).
    pub errno: i32,
    /// `si_code`: who sent it and why ([`code_name`] names it); <= 0 when a process sent it.
    pub code: i32,
    /// `si_pid`: the sender's pid ([`Layout::Kill`], [`Layout::Rt`]) or the child's
    /// ([`Layout::Chld`]).
    pub pid: i32,
    /// `si_uid`: the sender's (or the child's) real user id.
    pub uid: u32,
    /// `si_status` ([`Layout::Chld`]): the exit status for `CLD_EXITED`, else the signal
    /// that killed, stopped or continued the child.
    pub status: i32,
    /// `si_utime` ([`Layout::Chld`]): the child's user CPU time, in clock ticks.
    pub utime: i64,
    /// `si_stime` ([`Layout::Chld`]): the child's system CPU time, in clock ticks.
    pub stime: i64,
    /// `si_addr` ([`Layout::Fault`]: the faulting address) or `si_call_addr`
    /// ([`Layout::Sys`]: the address of the trapped call).
    pub addr: u64,
    /// The layout's value: `si_value` for [`Layout::Rt`] and [`Layout::Timer`], `si_band` for
    /// [`Layout::Poll`], `si_syscall` (the call's number) for [`Layout::Sys`].
    pub value: i64,
}

impl SigInfo {
    /// Decode the kernel's `siginfo_t` (64-bit layout: number, errno and code, then the union
    /// at byte 16), as `PTRACE_GETSIGINFO` gives it (128 bytes) or the `signal_deliver`
    /// tracepoint's `struct kernel_siginfo` (48 bytes). None when shorter than 48 bytes.
    pub fn from_kernel(raw: &[u8]) -> Option<SigInfo> {
        if raw.len() < 48 {
            return None;
        }
        let i32_at = |o: usize| i32::from_ne_bytes(raw[o..o + 4].try_into().expect("4 bytes"));
        let i64_at = |o: usize| i64::from_ne_bytes(raw[o..o + 8].try_into().expect("8 bytes"));
        let mut s =
            SigInfo { signo: i32_at(0), errno: i32_at(4), code: i32_at(8), ..SigInfo::default() };
        match layout(s.signo, s.code) {
            Layout::Plain => {}
            Layout::Kill => {
                s.pid = i32_at(16);
                s.uid = i32_at(20) as u32;
            }
            Layout::Rt => {
                s.pid = i32_at(16);
                s.uid = i32_at(20) as u32;
                s.value = i64_at(24);
            }
            Layout::Timer => s.value = i64_at(24),
            Layout::Chld => {
                s.pid = i32_at(16);
                s.uid = i32_at(20) as u32;
                s.status = i32_at(24);
                s.utime = i64_at(32);
                s.stime = i64_at(40);
            }
            Layout::Fault => s.addr = i64_at(16) as u64,
            Layout::Poll => s.value = i64_at(16),
            Layout::Sys => {
                s.addr = i64_at(16) as u64;
                s.value = i32_at(24).into();
            }
        }
        Some(s)
    }
}

/// The name of `si_code` `code` of signal `signo` (`SI_USER`, `CLD_EXITED`, `SEGV_MAPERR`).
pub fn code_name(signo: i32, code: i32) -> Option<&'static str> {
    let general = match code {
        0 => Some("SI_USER"),
        0x80 => Some("SI_KERNEL"),
        -1 => Some("SI_QUEUE"),
        -2 => Some("SI_TIMER"),
        -3 => Some("SI_MESGQ"),
        -4 => Some("SI_ASYNCIO"),
        -5 => Some("SI_SIGIO"),
        -6 => Some("SI_TKILL"),
        -7 => Some("SI_DETHREAD"),
        -60 => Some("SI_ASYNCNL"),
        _ => None,
    };
    if code <= 0 || code == SI_KERNEL {
        return general;
    }
    let table: &[&str] = match signo {
        SIGCHLD => &[
            "CLD_EXITED",
            "CLD_KILLED",
            "CLD_DUMPED",
            "CLD_TRAPPED",
            "CLD_STOPPED",
            "CLD_CONTINUED",
        ],
        SIGSEGV => &["SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR"],
        SIGBUS => &["BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"],
        SIGILL => &[
            "ILL_ILLOPC",
            "ILL_ILLOPN",
            "ILL_ILLADR",
            "ILL_ILLTRP",
            "ILL_PRVOPC",
            "ILL_PRVREG",
            "ILL_COPROC",
            "ILL_BADSTK",
        ],
        SIGFPE => &[
            "FPE_INTDIV",
            "FPE_INTOVF",
            "FPE_FLTDIV",
            "FPE_FLTOVF",
            "FPE_FLTUND",
            "FPE_FLTRES",
            "FPE_FLTINV",
            "FPE_FLTSUB",
        ],
        SIGTRAP => &["TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH", "TRAP_HWBKPT"],
        SIGIO => &["POLL_IN", "POLL_OUT", "POLL_MSG", "POLL_ERR", "POLL_PRI", "POLL_HUP"],
        SIGSYS => &["SYS_SECCOMP"],
        _ => &[],
    };
    table.get(code as usize - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(words: &[(usize, &[u8])]) -> Vec<u8> {
        let mut v = vec![0u8; 128];
        for (o, b) in words {
            v[*o..*o + b.len()].copy_from_slice(b);
        }
        v
    }

    #[test]
    fn decodes_each_layout_and_names_codes() {
        let chld = raw(&[
            (0, &17i32.to_ne_bytes()),
            (8, &1i32.to_ne_bytes()),
            (16, &1234i32.to_ne_bytes()),
            (20, &1000u32.to_ne_bytes()),
            (24, &3i32.to_ne_bytes()),
            (32, &5i64.to_ne_bytes()),
            (40, &6i64.to_ne_bytes()),
        ]);
        let s = SigInfo::from_kernel(&chld).unwrap();
        assert_eq!(
            (s.signo, s.code, s.pid, s.uid, s.status, s.utime, s.stime),
            (17, 1, 1234, 1000, 3, 5, 6)
        );
        assert_eq!(code_name(17, 1), Some("CLD_EXITED"));
        // A kill: the union's later words are not the signal's and stay zero.
        let kill = raw(&[
            (0, &10i32.to_ne_bytes()),
            (16, &77i32.to_ne_bytes()),
            (24, &9i32.to_ne_bytes()),
        ]);
        let k = SigInfo::from_kernel(&kill[..48]).unwrap();
        assert_eq!((k.signo, k.code, k.pid, k.status, k.value), (10, SI_USER, 77, 0, 0));
        assert_eq!(code_name(10, 0), Some("SI_USER"));
        let segv = raw(&[
            (0, &11i32.to_ne_bytes()),
            (8, &1i32.to_ne_bytes()),
            (16, &0x1000u64.to_ne_bytes()),
        ]);
        let f = SigInfo::from_kernel(&segv).unwrap();
        assert_eq!((f.addr, f.pid), (0x1000, 0));
        assert_eq!(code_name(11, 1), Some("SEGV_MAPERR"));
        assert_eq!(code_name(11, 0x80), Some("SI_KERNEL"));
        assert_eq!(code_name(10, 3), None);
        assert_eq!(layout(14, SI_TIMER), Layout::Timer);
        assert_eq!(layout(34, -1), Layout::Rt);
        assert!(SigInfo::from_kernel(&[0; 47]).is_none());
    }
}
