//! Thin, checked wrappers over the raw ptrace/wait/seccomp calls.

use std::io;

pub type Pid = libc::pid_t;

pub const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;
pub const PTRACE_SYSCALL_INFO_ENTRY: u8 = 1;
pub const PTRACE_SYSCALL_INFO_EXIT: u8 = 2;
pub const PTRACE_SYSCALL_INFO_SECCOMP: u8 = 3;

/// `struct ptrace_syscall_info` (linux/ptrace.h), x86_64 layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SyscallInfo {
    pub op: u8,
    pub pad: [u8; 3],
    pub arch: u32,
    pub instruction_pointer: u64,
    pub stack_pointer: u64,
    /// entry: nr, args[6]; exit: rval (i64), is_error (u8); seccomp: nr, args[6], ret_data.
    pub data: [u64; 8],
}

impl SyscallInfo {
    pub fn nr(&self) -> u64 {
        self.data[0]
    }
    pub fn args(&self) -> [u64; 6] {
        [self.data[1], self.data[2], self.data[3], self.data[4], self.data[5], self.data[6]]
    }
    pub fn rval(&self) -> i64 {
        self.data[0] as i64
    }
}

fn check(r: libc::c_long, call: &'static str) -> io::Result<libc::c_long> {
    if r == -1 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{call}: {e}")));
    }
    Ok(r)
}

/// `PTRACE_GET_SYSCALL_INFO`.
pub fn get_syscall_info(pid: Pid) -> io::Result<SyscallInfo> {
    let mut info = SyscallInfo::default();
    // SAFETY: the kernel writes at most `size_of::<SyscallInfo>()` bytes into `info`, a valid,
    // exclusively borrowed struct of exactly that size.
    let r = unsafe {
        libc::ptrace(
            PTRACE_GET_SYSCALL_INFO,
            pid,
            std::mem::size_of::<SyscallInfo>(),
            &mut info as *mut SyscallInfo,
        )
    };
    check(r, "PTRACE_GET_SYSCALL_INFO")?;
    Ok(info)
}

/// Resume: `PTRACE_CONT` (to the next seccomp or event stop) or `PTRACE_SYSCALL` (also stop at
/// the syscall exit), delivering `sig` (0 for none).
pub fn resume(pid: Pid, to_exit: bool, sig: i32) -> io::Result<()> {
    let req = if to_exit { libc::PTRACE_SYSCALL } else { libc::PTRACE_CONT };
    // SAFETY: PTRACE_CONT/PTRACE_SYSCALL take no pointers; `sig` is passed as the data word.
    let r = unsafe { libc::ptrace(req, pid, 0usize, sig as usize) };
    check(r, if to_exit { "PTRACE_SYSCALL" } else { "PTRACE_CONT" }).map(|_| ())
}

pub fn set_options(pid: Pid, opts: libc::c_int) -> io::Result<()> {
    // SAFETY: PTRACE_SETOPTIONS takes the option bits in the data word, no pointers.
    let r = unsafe { libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0usize, opts as usize) };
    check(r, "PTRACE_SETOPTIONS").map(|_| ())
}

pub fn get_event_msg(pid: Pid) -> io::Result<libc::c_ulong> {
    let mut v: libc::c_ulong = 0;
    // SAFETY: the kernel stores one unsigned long into `v`.
    let r = unsafe {
        libc::ptrace(libc::PTRACE_GETEVENTMSG, pid, 0usize, &mut v as *mut libc::c_ulong)
    };
    check(r, "PTRACE_GETEVENTMSG")?;
    Ok(v)
}

/// True when the stop is a group-stop rather than a signal-delivery-stop
/// (`PTRACE_GETSIGINFO` fails with EINVAL for group-stops).
pub fn is_group_stop(pid: Pid) -> bool {
    let mut si: libc::siginfo_t = unsafe_zeroed_siginfo();
    // SAFETY: the kernel writes one siginfo_t into `si`.
    let r = unsafe {
        libc::ptrace(libc::PTRACE_GETSIGINFO, pid, 0usize, &mut si as *mut libc::siginfo_t)
    };
    r == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL)
}

/// The `siginfo_t` of the signal a thread is stopped at (a signal-delivery-stop), as the
/// kernel's bytes (128).
pub fn get_siginfo(pid: Pid) -> io::Result<[u8; 128]> {
    let mut raw = [0u8; 128];
    const _: () = assert!(std::mem::size_of::<libc::siginfo_t>() == 128);
    // SAFETY: the kernel writes one siginfo_t (128 bytes) into `raw`, which is that large.
    let r = unsafe { libc::ptrace(libc::PTRACE_GETSIGINFO, pid, 0usize, raw.as_mut_ptr()) };
    check(r, "PTRACE_GETSIGINFO")?;
    Ok(raw)
}

fn unsafe_zeroed_siginfo() -> libc::siginfo_t {
    // SAFETY: siginfo_t is a plain C struct for which all-zero bytes is a valid value.
    unsafe { std::mem::zeroed() }
}

/// `waitpid(-1, __WALL)`. `Ok(None)` when interrupted by a signal.
pub fn wait_any() -> io::Result<Option<(Pid, i32)>> {
    let mut status = 0;
    // SAFETY: waitpid writes the status into `status`.
    let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
    if pid == -1 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINTR) {
            return Ok(None);
        }
        return Err(e);
    }
    Ok(Some((pid, status)))
}

pub fn kill(pid: Pid, sig: i32) {
    // SAFETY: kill takes plain integers.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// `PTRACE_POKEUSER`: set the word at `offset` of the thread's `struct user` (its registers).
pub fn poke_user(pid: Pid, offset: usize, value: i64) -> io::Result<()> {
    // SAFETY: POKEUSER takes an offset into the tracee's user area and the word as data; no
    // pointers of ours.
    let r = unsafe { libc::ptrace(libc::PTRACE_POKEUSER, pid, offset, value as usize) };
    check(r, "PTRACE_POKEUSER").map(|_| ())
}

/// Offsets in `struct user_regs_struct` (x86_64) of `rax` and `orig_rax`.
pub const RAX: usize = 10 * 8;
pub const ORIG_RAX: usize = 15 * 8;

/// `PTRACE_SEIZE` with options.
pub fn seize(pid: Pid, opts: libc::c_int) -> io::Result<()> {
    // SAFETY: PTRACE_SEIZE takes the option bits in the data word, no pointers.
    let r = unsafe { libc::ptrace(libc::PTRACE_SEIZE, pid, 0usize, opts as usize) };
    check(r, "PTRACE_SEIZE").map(|_| ())
}

/// `PTRACE_INTERRUPT`: stop a seized thread.
pub fn interrupt(pid: Pid) -> io::Result<()> {
    // SAFETY: no pointers.
    let r = unsafe { libc::ptrace(libc::PTRACE_INTERRUPT, pid, 0usize, 0usize) };
    check(r, "PTRACE_INTERRUPT").map(|_| ())
}

/// `PTRACE_DETACH`, delivering `sig`.
pub fn detach(pid: Pid, sig: i32) -> io::Result<()> {
    // SAFETY: no pointers; the signal goes in the data word.
    let r = unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0usize, sig as usize) };
    check(r, "PTRACE_DETACH").map(|_| ())
}
