//! The rule table the BPF program reads: one [`SyscallRule`] per selected call, made from its
//! registry entry at start-up. This is the only place registry argument kinds are translated
//! for the kernel side; `assemble.rs` turns the records back into values the same way the
//! ptrace backend does.

use ra_syscalls::{ArgKind, Flush, Len, Ret, Struct, SyscallDef};

use super::layout::*;
use crate::common::{deref_len_args, never_returns, struct_size, Xarg};
use crate::Selection;

/// Longest path read (PATH_MAX + 1, as the ptrace backend).
pub const PATH_MAX_BYTES: u32 = 4097;
/// Longest other C string (xattr names, argv/envp elements), as the ptrace backend.
pub const CSTR_MAX_BYTES: u32 = 1 << 20;

/// (syscall number, rule) for every call of the selection with an x86_64 number; with
/// `mmap_pages`, also the flush points of pages written through shared mappings (see
/// [`flush_point`]), whether the selection records those calls or not; with `readback`
/// (`--data full`), kernel-side copies are marked [`RF_READBACK`].
pub fn table(selection: &Selection, mmap_pages: bool, readback: bool) -> Vec<(u32, SyscallRule)> {
    let mut t: Vec<(u32, SyscallRule)> = selection
        .defs()
        .iter()
        .filter_map(|d| {
            let mut r = rule(d);
            if readback && d.copy_ends().is_some() {
                r.flags |= RF_READBACK;
            }
            Some((d.nr_x86_64().filter(|&n| (n as usize) < MAX_NR)?, r))
        })
        .collect();
    if mmap_pages {
        for d in ra_syscalls::REGISTRY {
            let (Some(flag), Some(nr)) = (flush_point(d), d.nr_x86_64()) else { continue };
            match t.iter_mut().find(|(n, _)| *n == nr) {
                Some((_, r)) => r.flags |= flag,
                None if (nr as usize) < MAX_NR => {
                    t.push((nr, SyscallRule { flags: flag, ..SyscallRule::default() }))
                }
                None => {}
            }
        }
    }
    t
}

/// Where pages written through a shared file mapping are recorded (`mmappwrite`), with their
/// content at that moment: before the calls that unmap, sync or move a range (their first two
/// arguments are the range), and before those that end the address space.
pub fn flush_point(def: &SyscallDef) -> Option<u8> {
    match def.flush {
        Flush::Range => Some(RF_FLUSH_RANGE),
        Flush::All => Some(RF_FLUSH_ALL),
        Flush::No => None,
    }
}

/// The rule of one call.
pub fn rule(def: &SyscallDef) -> SyscallRule {
    let mut r = SyscallRule { flags: RF_CAPTURE, ..SyscallRule::default() };
    if never_returns(def) {
        r.flags |= RF_NO_RETURN;
    }
    let derefs = deref_len_args(def);
    for (i, a) in def.args.iter().enumerate().take(NARGS) {
        r.args[i] = arg_rule(def, a.kind, derefs.contains(&i));
        if def.arg_widths().get(i).is_some_and(|w| *w != ra_syscalls::Width::Full) {
            r.args[i].flags |= AF_NARROW;
        }
    }
    if let Some((kind, ptr, cond)) = Xarg::of_call(def) {
        r.flags |= RF_XARG;
        r.xarg = ptr as u8;
        r.xarg_cond = cond as u8;
        r.xarg_size = kind.size() as u16;
        r.xarg_mask = match kind {
            // Bit c: command c (all below 64) carries a struct flock.
            Xarg::Flock => (0..64u64)
                .filter(|&c| ra_syscalls::flags::fcntl_arg_is_flock(c))
                .fold(0u64, |m, c| m | 1 << c),
            // The two requests, one in each half.
            Xarg::IoctlInt => {
                r.flags |= RF_XARG_EQ;
                let [a, b] = ra_syscalls::flags::IOCTL_INT_REQUESTS;
                a | b << 32
            }
            // Always, once the call succeeded: the message's control data, through the
            // msghdr's pointer and length.
            Xarg::MsgControl => {
                r.flags |= RF_XARG_MSG;
                0
            }
        };
    }
    r.with_masks()
}

fn len_rule(len: Len, s: Option<Struct>) -> (u8, u8, u32) {
    let size = |s: Option<Struct>| s.map_or(0, struct_size) as u32;
    match len {
        Len::Arg(n) => (LK_ARG, n as u8, 0),
        Len::Ret => (LK_RET, 0, 0),
        Len::Fixed(k) => (LK_FIXED, 0, k as u32),
        Len::Struct => (LK_FIXED, 0, size(s)),
        Len::RetTimesStruct => (LK_RET_TIMES, 0, size(s)),
        Len::DerefArg(n) => (LK_DEREF, n as u8, 0),
        Len::CStr => (0, 0, 0),
    }
}

fn buf(len: Len, s: Option<Struct>, flags: u8) -> ArgRule {
    let (len_kind, len_arg, size) = len_rule(len, s);
    ArgRule { kind: AK_BUF, len_kind, len_arg, flags, size }
}

fn arg_rule(def: &SyscallDef, kind: ArgKind, deref_target: bool) -> ArgRule {
    // A call that replaces the address space (execve) must copy its inputs before it runs.
    let entry = if def.ret == Ret::NoReturn { AF_ENTRY } else { 0 };
    // Input a call reports consuming (write, writev, sendmsg) keeps only what it consumed.
    let trim = if def.ret == Ret::Count { AF_TRIM_RET } else { 0 };
    let string = |size: u32, flags: u8| ArgRule { kind: AK_STR, size, flags, ..ArgRule::default() };
    match kind {
        ArgKind::Int | ArgKind::Fd | ArgKind::DirFd | ArgKind::Flags(_) | ArgKind::Mode => {
            ArgRule::default()
        }
        ArgKind::Addr if deref_target => ArgRule { kind: AK_DEREF32, ..ArgRule::default() },
        ArgKind::Addr => ArgRule::default(),
        ArgKind::Path => string(PATH_MAX_BYTES, entry),
        ArgKind::InBuf(Len::CStr) => string(CSTR_MAX_BYTES, entry),
        ArgKind::OutBuf(Len::CStr) => string(CSTR_MAX_BYTES, AF_OUT),
        ArgKind::InBuf(len) => {
            let t = if matches!(len, Len::Arg(_)) { trim } else { 0 };
            buf(len, None, AF_BULK | entry | t)
        }
        ArgKind::OutBuf(len) => buf(len, None, AF_OUT | AF_BULK),
        ArgKind::InStruct(Struct::Msghdr, _) => {
            ArgRule { kind: AK_MSG, flags: AF_BULK | entry | trim, ..ArgRule::default() }
        }
        ArgKind::InOutStruct(Struct::Msghdr, _) => {
            ArgRule { kind: AK_MSG, flags: AF_OUT | AF_BULK, ..ArgRule::default() }
        }
        // sendmmsg: each message's data as sent (its msg_len), when the call succeeded.
        ArgKind::InStruct(Struct::Mmsghdr, Len::Arg(n)) => ArgRule {
            kind: AK_MMSG,
            len_arg: n as u8,
            flags: AF_BULK | entry | AF_TRIM_RET,
            ..ArgRule::default()
        },
        ArgKind::InOutStruct(Struct::Mmsghdr, Len::Arg(n)) => ArgRule {
            kind: AK_MMSG,
            len_arg: n as u8,
            flags: AF_OUT | AF_BULK,
            ..ArgRule::default()
        },
        // io_uring_register: its opcode is argument 1 (the rule's `size`), at entry.
        ArgKind::InStruct(Struct::UringRegister, Len::Arg(n)) => ArgRule {
            kind: AK_UREG,
            len_arg: n as u8,
            size: 1,
            flags: AF_ENTRY,
            ..ArgRule::default()
        },
        ArgKind::InStruct(s, len) => buf(len, Some(s), entry),
        ArgKind::OutStruct(s, len) | ArgKind::InOutStruct(s, len) => buf(len, Some(s), AF_OUT),
        ArgKind::IovIn { count } => ArgRule {
            kind: AK_IOV,
            len_arg: count as u8,
            flags: AF_BULK | entry | trim,
            ..ArgRule::default()
        },
        ArgKind::IovOut { count } => ArgRule {
            kind: AK_IOV,
            len_arg: count as u8,
            flags: AF_OUT | AF_BULK,
            ..ArgRule::default()
        },
        ArgKind::StrArray => {
            ArgRule { kind: AK_STRV, size: CSTR_MAX_BYTES, flags: entry, ..ArgRule::default() }
        }
    }
}

/// `ureg_layout` of the BPF program: [`ra_syscalls::uring::register::layout`] of each
/// opcode below `UREG_OPS`, packed as capture.bpf.c reads it.
pub fn ureg_layout() -> [u64; UREG_OPS as usize] {
    use ra_syscalls::uring::register;
    let mut t = [0u64; UREG_OPS as usize];
    for (op, w) in t.iter_mut().enumerate() {
        let Some(l) = register::layout(op as u64) else { continue };
        let none = |o: Option<u8>| o.map_or(u64::from(UREG_NONE), u64::from);
        *w = u64::from(l.header)
            | u64::from(l.ptr_at) << 8
            | none(l.count_at) << 16
            | none(l.flags_at) << 24
            | u64::from(l.elem) << 32
            | (register::MAX_ARRAY_BYTES as u64) << 40;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule_of(name: &str) -> SyscallRule {
        rule(ra_syscalls::lookup(name).expect(name))
    }

    #[test]
    fn every_storage_call_has_a_rule_and_every_pointer_a_copy() {
        let sel = Selection::parse("all").unwrap();
        let t = table(&sel, true, true);
        for d in sel.defs() {
            let Some(nr) = d.nr_x86_64() else { continue };
            let (_, r) = t.iter().find(|(n, _)| *n == nr).unwrap_or_else(|| panic!("{}", d.name));
            for (i, a) in d.args.iter().enumerate() {
                let copies = r.args[i].kind != AK_SCALAR;
                let pointer = a.kind.is_pointer_data() || deref_len_args(d).contains(&i);
                assert_eq!(copies, pointer, "{} arg {}", d.name, a.name);
            }
        }
    }

    /// Kernel-side copies, and only they, are read back, and only with full data.
    #[test]
    fn only_kernel_side_copies_are_read_back() {
        let sel = Selection::parse("all").unwrap();
        let marked = |readback: bool| -> Vec<&str> {
            let t = table(&sel, false, readback);
            let mut v: Vec<&str> = sel
                .defs()
                .iter()
                .filter(|d| {
                    d.nr_x86_64().is_some_and(|nr| {
                        t.iter().any(|(n, r)| *n == nr && r.flags & RF_READBACK != 0)
                    })
                })
                .map(|d| d.name)
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(marked(true), ["copy_file_range", "sendfile", "splice"]);
        assert!(marked(false).is_empty());
    }

    #[test]
    fn rules_follow_the_registry() {
        let w = rule_of("write");
        assert_eq!(
            w.args[1],
            ArgRule {
                kind: AK_BUF,
                len_kind: LK_ARG,
                len_arg: 2,
                flags: AF_BULK | AF_TRIM_RET,
                size: 0
            }
        );
        let r = rule_of("read");
        assert_eq!(r.args[1].flags, AF_OUT | AF_BULK);
        assert_eq!(r.args[1].len_kind, LK_RET);
        let st = rule_of("newfstatat");
        assert_eq!((st.args[1].kind, st.args[1].size), (AK_STR, PATH_MAX_BYTES));
        assert_eq!(
            (st.args[2].len_kind, st.args[2].size, st.args[2].flags),
            (LK_FIXED, 144, AF_OUT)
        );
        let e = rule_of("execve");
        assert!(e.args.iter().take(3).all(|a| a.flags & AF_ENTRY != 0));
        assert_eq!(e.args[1].kind, AK_STRV);
        assert_eq!(rule_of("exit_group").flags & RF_NO_RETURN, RF_NO_RETURN);
        assert_eq!(e.flags & RF_NO_RETURN, 0, "execve returns on failure");
        let acc = rule_of("accept");
        assert_eq!((acc.args[1].len_kind, acc.args[1].len_arg), (LK_DEREF, 2));
        assert_eq!(acc.args[2].kind, AK_DEREF32);
        let f = rule_of("fcntl");
        assert_eq!(f.flags & RF_XARG, RF_XARG);
        for cmd in [5u32, 6, 7, 36, 37, 38] {
            assert!(f.xarg_mask & (1 << cmd) != 0, "F_*LK {cmd}");
        }
        assert_eq!(f.xarg_mask & (1 << 1), 0, "F_GETFD");
        assert_eq!((f.xarg, f.xarg_cond, f.xarg_size, f.flags & RF_XARG_EQ), (2, 1, 32, 0));
        let io = rule_of("ioctl");
        assert_eq!(io.flags & (RF_XARG | RF_XARG_EQ), RF_XARG | RF_XARG_EQ);
        assert_eq!((io.xarg, io.xarg_cond, io.xarg_size), (2, 1, 4));
        assert_eq!(io.xarg_mask, 0x5421 | 0x5452 << 32, "FIONBIO, FIOASYNC");
        for (name, ptr) in [("sendmsg", 1), ("recvmsg", 1)] {
            let m = rule_of(name);
            let want = RF_XARG | RF_XARG_MSG;
            assert_eq!(m.flags & (want | RF_XARG_EQ), want, "{name}: control data, no condition");
            assert_eq!((m.xarg, m.xarg_size as usize), (ptr, crate::common::MSG_CONTROL_MAX));
        }
        let mm = rule_of("recvmmsg");
        assert_eq!((mm.args[1].kind, mm.args[1].len_arg), (AK_MMSG, 2));
        let t = table(&Selection::parse("openat").unwrap(), true, true);
        let munmap = ra_syscalls::lookup("munmap").unwrap().nr_x86_64().unwrap();
        assert!(t.iter().any(|(n, r)| *n == munmap && r.flags == RF_FLUSH_RANGE), "flush only");
        let reg = rule_of("io_uring_register");
        assert_eq!((reg.args[2].kind, reg.args[2].len_arg, reg.args[2].size), (AK_UREG, 3, 1));
        assert_eq!(reg.entry_mask, 1 << 2, "read at entry");
        let t = ureg_layout();
        assert_eq!(t[2], 4 << 32 | 0xff << 24 | 0xff << 16 | 16384 << 40, "FILES: nr_args ints");
        assert_eq!(t[6] & 0xffff_ffff, 16 | 8 << 8 | 0xff << 16 | 0xff << 24, "FILES_UPDATE");
        assert_eq!(t[13] & 0xff_ffff_ffff, 32 | 16 << 8 | 4 << 24 | 4 << 32, "FILES2");
        assert_eq!((t[1], t[4]), (0, 0), "no array");
        let ew = rule_of("epoll_wait");
        assert_eq!((ew.args[1].len_kind, ew.args[1].size), (LK_RET_TIMES, 12));
    }
}
