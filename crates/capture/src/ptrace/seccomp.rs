//! The classic-BPF seccomp filter installed in the traced program before it executes: the
//! selected syscalls return `SECCOMP_RET_TRACE` (a ptrace stop), every other one runs without
//! stopping the tracee.

/// `AUDIT_ARCH_X86_64`.
pub const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_TRACE: u32 = 0x7ff0_0000;
/// Syscall numbers at or above this are x32 ABI calls.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const BPF_LD: u16 = 0x00;
const BPF_W: u16 = 0x00;
const BPF_ABS: u16 = 0x20;
const BPF_JMP: u16 = 0x05;
const BPF_JEQ: u16 = 0x10;
const BPF_JGE: u16 = 0x30;
const BPF_K: u16 = 0x00;
const BPF_RET: u16 = 0x06;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt: 0, jf: 0, k }
}
fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Build the filter for these syscall numbers (x86_64). Programs of other ABIs (i386, x32)
/// are not traced: their calls run unstopped.
pub fn filter(numbers: &[u32]) -> Vec<libc::sock_filter> {
    let mut f = vec![
        stmt(BPF_LD | BPF_W | BPF_ABS, 4), // seccomp_data.arch
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        stmt(BPF_LD | BPF_W | BPF_ABS, 0), // seccomp_data.nr
        jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
        stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    ];
    // A linear chain of comparisons; a jump offset is 8 bits, so chain in blocks: each block
    // compares up to 250 numbers and jumps to its own TRACE return.
    for block in numbers.chunks(250) {
        let n = block.len();
        for (i, &nr) in block.iter().enumerate() {
            // On match jump to the TRACE return after this block (n - i - 1 compares, then the
            // ALLOW-to-next-block jump is skipped).
            f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr, (n - i) as u8, 0));
        }
        // No match in this block: skip over its TRACE return.
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 1)); // unconditional "ja 1"
        f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_TRACE));
    }
    f.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    f
}

/// Install the filter in the calling process. With `CAP_SYS_ADMIN` (root) the filter needs no
/// `PR_SET_NO_NEW_PRIVS`, so set-uid and file-capability programs keep their privileges as
/// they would unrecorded; without it the kernel requires the flag (and set-uid programs then
/// run unprivileged: [`super::privilege_loss`] warns). Async-signal-safe: called between fork
/// and exec.
///
/// # Safety
/// Must be called in the child after fork, with `prog` valid for the duration of the call.
pub unsafe fn install(prog: &[libc::sock_filter]) -> bool {
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prctl and seccomp take plain values and a pointer to `fprog`, which outlives the
    // calls; the caller guarantees we are in the forked child.
    unsafe {
        let set = || {
            libc::syscall(
                libc::SYS_seccomp,
                1, /* SECCOMP_SET_MODE_FILTER */
                0,
                &fprog as *const libc::sock_fprog,
            ) == 0
        };
        if set() {
            return true;
        }
        if *libc::__errno_location() != libc::EACCES {
            return false;
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return false;
        }
        set()
    }
}
