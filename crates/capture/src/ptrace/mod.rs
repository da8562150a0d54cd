//! The ptrace backend: unprivileged capture of a process tree.
//!
//! The traced program installs a seccomp filter (before it executes the command) that turns
//! every selected syscall into a ptrace stop and lets every other syscall run untouched. At
//! that entry stop the tracer reads the arguments (`PTRACE_GET_SYSCALL_INFO`) and the input
//! buffers (`process_vm_readv`), then resumes with `PTRACE_SYSCALL` to be stopped again at the
//! syscall's exit, where it reads the result and the output buffers. Forks, vforks, clones
//! and execs are followed through ptrace options; the filter is inherited by every child.
//!
//! Limits: programs of other ABIs (i386, x32) run untraced. Without `CAP_SYS_ADMIN` the filter
//! needs `PR_SET_NO_NEW_PRIVS`, which stops set-uid and file-capability programs from gaining
//! privileges ([`privilege_loss`] says so before the run); as root it is not set.

mod cpu;
pub(crate) mod mem;
mod seccomp;
mod sys;
mod uring;

use ra_trace::MAX_BUFFER_BYTES;
use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::Ordering;

use ra_syscalls::{ArgKind, Len, Ret, Struct, SyscallDef};
use ra_trace::{ArgValue, Event, IovValue};

use crate::common::{
    add_copied_data, deref_len_args, generated_exit, hash_bulk, inherited_fds, is_bulk,
    kernel_args, never_returns, now_ns, proc_info, register_arg, resolve, signal_event, stamp,
    struct_size, synthetic_fds, ProcInfo, Xarg,
};
use crate::sink::TraceSink;
use crate::{
    Backend, Capabilities, DataLevel, DataMode, Error, Result, Selection, Target, Unavailable,
};
pub use crate::{Outcome, STOP_REQUESTS, STOP_SIGNAL};
use sys::Pid;

/// The ptrace backend behind the [`Backend`] seam.
pub use cpu::CpuPolicy;

/// The ptrace backend behind the [`Backend`] seam (unprivileged).
#[derive(Clone, Copy, Debug)]
pub struct PtraceBackend {
    /// Where a command (not an attached process) runs relative to the tracer; see
    /// [`CpuPolicy`].
    pub cpu: CpuPolicy,
}

impl Backend for PtraceBackend {
    fn name(&self) -> &'static str {
        "ptrace"
    }

    fn probe(&self) -> std::result::Result<Capabilities, Unavailable> {
        // SAFETY: PR_GET_SECCOMP takes no pointer; it returns the mode or -1 (EINVAL when the
        // kernel has no seccomp).
        if unsafe { libc::prctl(libc::PR_GET_SECCOMP) } < 0 {
            return Err(Unavailable {
                missing: "the kernel has no seccomp (CONFIG_SECCOMP_FILTER)".into(),
                fix: "use a kernel built with seccomp filters".into(),
            });
        }
        let yama =
            std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").unwrap_or_default();
        if yama.trim() == "3" {
            return Err(Unavailable {
                missing: "ptrace is disabled (/proc/sys/kernel/yama/ptrace_scope is 3)".into(),
                fix: "reboot with a lower ptrace_scope (3 cannot be lowered at run time)".into(),
            });
        }
        Ok(Capabilities { summary: "ptrace + seccomp filter".into() })
    }

    fn record(
        &mut self,
        target: &Target,
        opts: &crate::Options,
        sink: &mut TraceSink,
    ) -> Result<Outcome> {
        let o = Options {
            selection: opts.selection.clone(),
            data: opts.data,
            cpu: if matches!(target, Target::Command(_)) { self.cpu } else { CpuPolicy::Any },
            uring_deny: opts.uring_deny,
        };
        match target {
            Target::Command(argv) => record_command(argv, &o, sink),
            Target::Pid(pid) => attach(*pid, &o, sink).map(|(mut out, n)| {
                out.synthetic_ids = n;
                out
            }),
            Target::Cgroup(_) => Err(Error::UnsupportedTarget {
                backend: "ptrace",
                what: "a cgroup (--cgroup needs --backend ebpf)",
            }),
        }
    }
}

/// What to capture.
#[derive(Clone, Debug)]
pub struct Options {
    /// The calls to record.
    pub selection: Selection,
    /// How much of each data buffer to keep.
    pub data: DataMode,
    /// Where the traced command runs relative to the tracer ([`CpuPolicy`]).
    pub cpu: CpuPolicy,
    /// Fail every `io_uring_setup` with ENOSYS (`record --io-uring deny`).
    pub uring_deny: bool,
}

const PTRACE_EVENT_FORK: i32 = 1;
const PTRACE_EVENT_VFORK: i32 = 2;
const PTRACE_EVENT_CLONE: i32 = 3;
const PTRACE_EVENT_EXEC: i32 = 4;
const PTRACE_EVENT_SECCOMP: i32 = 7;

struct Pending {
    def: &'static SyscallDef,
    args: [u64; 6],
    ev: Event,
}

struct Thread {
    info: ProcInfo,
    pending: Option<Pending>,
    /// What the io_uring tracker does at this call's exit (the call need not be recorded).
    at_exit: Option<uring::AtExit>,
}

/// Byte count a length rule gives, or None when it cannot be known (yet).
fn eval_len(
    pid: Pid,
    len: Len,
    s: Option<Struct>,
    args: &[u64; 6],
    ret: Option<i64>,
) -> Option<usize> {
    let cap = |v: u64| usize::try_from(v).ok().map(|v| v.min(1 << 31));
    match len {
        Len::Arg(n) => cap(*args.get(n)?),
        Len::Ret => cap(u64::try_from(ret?).ok()?),
        Len::Fixed(k) => Some(k),
        Len::Struct => s.map(struct_size),
        Len::DerefArg(n) => {
            let b = mem::read(pid, *args.get(n)?, 4);
            Some(u32::from_le_bytes(b.try_into().ok()?) as usize)
        }
        Len::RetTimesStruct => {
            Some(usize::try_from(ret?).ok()?.checked_mul(s.map_or(0, struct_size))?.min(1 << 31))
        }
        Len::CStr => None,
    }
}

/// The iovecs (`msg_iov`, `msg_iovlen`) of a `struct msghdr` at `addr`.
fn msghdr_iovecs(pid: Pid, addr: u64) -> Option<Vec<(u64, u64)>> {
    let h = mem::read(pid, addr, 56);
    if h.len() < 32 {
        return None;
    }
    let iov = u64::from_le_bytes(h[16..24].try_into().ok()?);
    let n = u64::from_le_bytes(h[24..32].try_into().ok()?);
    mem::read_iovecs(pid, iov, usize::try_from(n).ok()?)
}

/// The call's extra pointed-to argument ([`Xarg`]), read from `pid` now, if it is one read
/// after the call (`after`) or at entry (not `after`): its kind and columns.
fn xarg_columns(
    pid: Pid,
    def: &SyscallDef,
    args: &[u64; 6],
    after: bool,
) -> Option<(Xarg, Vec<(String, ra_trace::ExtraValue)>)> {
    let (x, p) = Xarg::of(def, args).filter(|(x, _)| x.after_call() == after)?;
    let bytes = match x {
        Xarg::MsgControl => msg_control(pid, args[p]),
        _ => mem::read(pid, args[p], x.size()),
    };
    Some((x, x.columns(&bytes)))
}

/// The control data of the `struct msghdr` at `addr`: `msg_controllen` bytes at `msg_control`
/// (at most [`Xarg::size`]); nothing when the header cannot be read.
fn msg_control(pid: Pid, addr: u64) -> Vec<u8> {
    let h = mem::read(pid, addr, 56);
    let word = |o: usize| h.get(o..o + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
    match (word(32), word(40)) {
        (Some(ctl), Some(len)) if ctl != 0 && len != 0 => {
            let n = usize::try_from(len).unwrap_or(usize::MAX).min(Xarg::MsgControl.size());
            mem::read(pid, ctl, n)
        }
        _ => Vec::new(),
    }
}

/// One message of a `struct mmsghdr` array: its iovecs (base, length) and `msg_len`.
type Message = (Vec<(u64, u64)>, u64);

/// The messages of a `struct mmsghdr` array: each message's iovecs and its `msg_len` (bytes
/// the kernel sent or received for it; meaningful after the call).
fn mmsg_messages(pid: Pid, addr: u64, vlen: u64) -> Option<Vec<Message>> {
    let vlen = usize::try_from(vlen).ok().filter(|&n| n <= 1024)?;
    (0..vlen)
        .map(|i| {
            let at = addr + 64 * i as u64;
            let vecs = msghdr_iovecs(pid, at)?;
            let len = mem::read(pid, at + 56, 4);
            let msg_len = u32::from_le_bytes(len.try_into().ok()?);
            Some((vecs, u64::from(msg_len)))
        })
        .collect()
}

/// One vector per message: `requested` = the message's buffer space, data = its first `take(i,
/// msg_len)` bytes across its iovecs, concatenated.
fn mmsg_value(pid: Pid, msgs: Vec<Message>, take: impl Fn(usize, u64, u64) -> u64) -> ArgValue {
    ArgValue::Iov(
        msgs.into_iter()
            .enumerate()
            .map(|(i, (vecs, msg_len))| {
                let requested: u64 = vecs.iter().map(|v| v.1).sum();
                let data = match read_iov_data(pid, vecs, Some(take(i, requested, msg_len))) {
                    ArgValue::Iov(v) => v.into_iter().filter_map(|x| x.data).flatten().collect(),
                    _ => Vec::new(),
                };
                IovValue { requested, data: Some(data.into()) }
            })
            .collect(),
    )
}

/// Read the data of `vecs`, at most `limit` bytes in all, in order (`None`: each vector whole).
fn read_iov_data(pid: Pid, vecs: Vec<(u64, u64)>, limit: Option<u64>) -> ArgValue {
    let mut left = limit.unwrap_or(u64::MAX);
    ArgValue::Iov(
        vecs.into_iter()
            .map(|(base, len)| {
                let n = len.min(left).min(1 << 31);
                left -= n;
                IovValue { requested: len, data: Some(mem::read(pid, base, n as usize).into()) }
            })
            .collect(),
    )
}

/// Keep only the first `ret` bytes of captured input vectors (what the call consumed).
/// Input vectors of a call that reports what it consumed keep the first `ret` bytes; a failed
/// call consumed nothing it reports, and keeps what the program passed, whole (as `sendto`'s
/// buffer, and as the eBPF recorder keeps it).
fn trim_iov(v: &mut ArgValue, ret: Option<i64>) {
    if let (ArgValue::Iov(v), Some(r)) = (v, ret) {
        if r < 0 {
            return;
        }
        let mut left = r as usize;
        for iov in v.iter_mut() {
            if let Some(d) = &mut iov.data {
                d.truncate(left);
                left -= d.len();
            }
        }
    }
}

struct Tracer<'a> {
    opts: &'a Options,
    by_nr: Vec<Option<&'static SyscallDef>>,
    threads: HashMap<Pid, Thread>,
    sink: &'a mut TraceSink,
    out: Outcome,
    root: Pid,
    root_status: Option<i32>,
    seen_tgids: std::collections::HashSet<Pid>,
    /// Threads whose end was seen (their entry removed): a later stop of the same tid that is
    /// not a new thread's first (a fork event reported after the child already ended) must
    /// not count it again.
    ended: std::collections::HashSet<Pid>,
    /// Children announced by their creator's fork/clone event whose first stop (the SIGSTOP
    /// every auto-attached child starts with, PTRACE_TRACEME mode) has not come yet: that
    /// SIGSTOP is the tracer's, never delivered.
    fresh: std::collections::HashSet<Pid>,
    /// Attached to a running process (no seccomp filter: every syscall stops, entry and exit).
    attach: bool,
    /// Attach mode, after a stop request: threads still to detach.
    detaching: bool,
    /// The CPU tracer and tracees share, when pinned.
    pinned_cpu: Option<usize>,
    /// Unbinds the tree when it wants more than one CPU ([`CpuPolicy::Auto`]).
    monitor: Option<cpu::Monitor>,
    /// The io_uring rings of the traced processes (`io_uring_op` in the selection: `Some`).
    rings: Option<uring::Rings>,
    /// `io_uring_setup` calls failed with ENOSYS (`--io-uring deny`).
    denied: u64,
    /// Why the trace cannot be written any more: from then on nothing is recorded, a command
    /// runs on to its end (its captured calls resumed at once) and an attached process is
    /// detached.
    failed: Option<Error>,
}

impl<'a> Tracer<'a> {
    fn new(
        opts: &'a Options,
        sink: &'a mut TraceSink,
        root: Pid,
        attach: bool,
        pinned_cpu: Option<usize>,
    ) -> Tracer<'a> {
        let mut by_nr: Vec<Option<&'static SyscallDef>> = vec![None; 1024];
        for d in opts.selection.defs() {
            if let Some(slot) = d.nr_x86_64().and_then(|nr| by_nr.get_mut(nr as usize)) {
                *slot = Some(d);
            }
        }
        Tracer {
            opts,
            by_nr,
            threads: HashMap::new(),
            sink,
            out: Outcome::default(),
            root,
            root_status: None,
            seen_tgids: Default::default(),
            ended: Default::default(),
            fresh: Default::default(),
            attach,
            detaching: false,
            pinned_cpu,
            monitor: None,
            rings: uring_tracked(&opts.selection).then(uring::Rings::default),
            denied: 0,
            failed: None,
        }
    }

    /// Queue `ev` for the trace (dropped once the trace cannot be written).
    fn emit(&mut self, ev: Event) {
        if self.failed.is_none() {
            self.out.events += 1;
            self.out.data_bytes += ev.data_bytes();
            let r = self.sink.push(ev);
            self.check(r);
        }
    }

    /// Note a trace writer error: stop recording (see `failed`). In attach mode, detach from
    /// every thread, as on a stop request.
    fn check(&mut self, r: Result<()>) {
        if let Err(e) = r {
            if self.failed.is_none() {
                self.failed = Some(e);
                if self.attach {
                    self.detach_all();
                }
            }
        }
    }

    /// Detach from every thread: interrupt them; each is detached at its next stop.
    fn detach_all(&mut self) {
        self.detaching = true;
        let tids: Vec<Pid> = self.threads.keys().copied().collect();
        for t in tids {
            let _ = sys::interrupt(t);
        }
    }

    fn thread(&mut self, tid: Pid) -> &mut Thread {
        if !self.threads.contains_key(&tid) {
            let info = proc_info(tid);
            if !self.ended.contains(&tid) {
                self.out.threads += 1;
                if self.seen_tgids.insert(info.tgid) {
                    self.out.processes += 1;
                }
            }
            self.threads.insert(tid, Thread { info, pending: None, at_exit: None });
        }
        self.threads.get_mut(&tid).expect("inserted")
    }

    /// A thread's first stop (or the event that created it): a new thread even if its tid
    /// was used before.
    fn new_thread(&mut self, tid: Pid) {
        self.ended.remove(&tid);
        if let Some(m) = &self.monitor {
            m.add(tid);
        }
        self.thread(tid);
    }

    fn resume(&mut self, tid: Pid, sig: i32) {
        if self.detaching {
            // Leave the thread running, untraced (a call in progress loses its result).
            if let Some(t) = self.threads.remove(&tid) {
                if let Some(mut p) = t.pending {
                    hash_bulk(p.def, &mut p.ev, self.opts.data);
                    self.emit(p.ev);
                }
            }
            let _ = sys::detach(tid, sig);
            return;
        }
        let to_exit = self.attach
            || self.threads.get(&tid).is_some_and(|t| t.pending.is_some() || t.at_exit.is_some());
        // ESRCH: the thread died meanwhile (e.g. killed by another thread's exit_group); its
        // exit is reported by waitpid.
        let _ = sys::resume(tid, to_exit, sig);
    }

    fn on_entry(&mut self, tid: Pid) -> Result<()> {
        if self.failed.is_some() {
            // Not recording any more: let the call run (detach, when attached).
            self.resume(tid, 0);
            return Ok(());
        }
        let want = if self.attach {
            sys::PTRACE_SYSCALL_INFO_ENTRY
        } else {
            sys::PTRACE_SYSCALL_INFO_SECCOMP
        };
        let info = match sys::get_syscall_info(tid) {
            Ok(i) if i.op == want => i,
            _ => {
                self.resume(tid, 0);
                return Ok(());
            }
        };
        let nr = info.nr() as usize;
        let enter_key = self.uring_entry(tid, info.nr(), &info.args());
        if self.opts.uring_deny && info.nr() == uring::NR_IO_URING_SETUP {
            // Skipped (syscall number -1); its exit stop makes the result -ENOSYS.
            match sys::poke_user(tid, sys::ORIG_RAX, -1) {
                Ok(()) => {
                    self.denied += 1;
                    self.thread(tid).at_exit = Some(uring::AtExit::Deny);
                }
                Err(e) => {
                    return Err(Error::Sys { call: "PTRACE_POKEUSER (--io-uring deny)", source: e })
                }
            }
        }
        let Some(def) = self.by_nr.get(nr).copied().flatten() else {
            self.resume(tid, 0);
            return Ok(());
        };
        let args = kernel_args(def, info.args());
        // Input buffers: data the caller writes (`--data write=`).
        let skip_bulk = self.opts.data.write == DataLevel::None;
        let p = self.thread(tid).info;
        let mut ev = Event::new(def);
        ev.time_called = Some(now_ns());
        stamp(&mut ev, tid, p);
        for (i, a) in def.args.iter().enumerate() {
            let raw = args[i];
            ev.args[i] = match a.kind {
                ArgKind::Int
                | ArgKind::Fd
                | ArgKind::DirFd
                | ArgKind::Flags(_)
                | ArgKind::Mode
                | ArgKind::Addr => ArgValue::Int(raw as i64),
                _ if raw == 0 => ArgValue::Absent,
                // (Outputs are decided at the exit stop: a failed call's is absent.)
                k if skip_bulk && is_bulk(k) && !k.is_output() => {
                    ev.buffer_not_captured = true;
                    ArgValue::NotCaptured
                }
                ArgKind::Path => match mem::read_cstr(tid, raw, 4097) {
                    Some((b, complete)) => {
                        ev.buffer_not_captured |= !complete;
                        ArgValue::data(b)
                    }
                    None => ArgValue::Absent,
                },
                ArgKind::InBuf(Len::CStr) => match mem::read_cstr(tid, raw, 1 << 20) {
                    Some((b, complete)) => {
                        ev.buffer_not_captured |= !complete;
                        ArgValue::data(b)
                    }
                    None => ArgValue::Absent,
                },
                ArgKind::InBuf(len) => match eval_len(tid, len, None, &args, None) {
                    Some(n) => {
                        let (v, complete) = mem::read_arg(tid, raw, n, MAX_BUFFER_BYTES);
                        ev.buffer_not_captured |= !complete;
                        v
                    }
                    None => ArgValue::NotCaptured,
                },
                // sendmsg: the data is in the message's iovecs (Re-Animator's vector layout).
                ArgKind::InStruct(Struct::Msghdr, _) => match msghdr_iovecs(tid, raw) {
                    Some(v) if !skip_bulk => read_iov_data(tid, v, None),
                    Some(_) => {
                        ev.buffer_not_captured = true;
                        ArgValue::NotCaptured
                    }
                    None => ArgValue::NotCaptured,
                },
                // sendmmsg: one vector per message, whole at entry, trimmed to msg_len at exit.
                ArgKind::InStruct(Struct::Mmsghdr, Len::Arg(n)) => {
                    match mmsg_messages(tid, raw, args[n]) {
                        Some(m) => mmsg_value(tid, m, |_, requested, _| requested),
                        None => ArgValue::NotCaptured,
                    }
                }
                // io_uring_register: the files or buffers it registers (by its opcode).
                ArgKind::InStruct(Struct::UringRegister, Len::Arg(n)) => {
                    match register_arg(args[1], args[n], raw, |a, l| mem::read(tid, a, l)) {
                        Some((b, complete)) => {
                            ev.buffer_not_captured |= !complete;
                            ArgValue::data(b)
                        }
                        None => ArgValue::Absent,
                    }
                }
                ArgKind::InStruct(s, len) => match eval_len(tid, len, Some(s), &args, None) {
                    Some(n) => {
                        let b = mem::read(tid, raw, n);
                        ev.buffer_not_captured |= b.len() < n;
                        ArgValue::data(b)
                    }
                    None => ArgValue::NotCaptured,
                },
                // An array the kernel cannot read either (EFAULT): no vectors.
                ArgKind::IovIn { count } => {
                    match mem::read_iovecs(tid, raw, args[count] as usize) {
                        Some(v) => read_iov_data(tid, v, None),
                        None => ArgValue::Iov(Vec::new()),
                    }
                }
                ArgKind::StrArray => match mem::read_str_array(tid, raw) {
                    Some((v, complete)) => {
                        ev.buffer_not_captured |= !complete;
                        ArgValue::Strings(v)
                    }
                    None => ArgValue::Absent,
                },
                // Kernel-written data is read at the exit stop.
                ArgKind::OutBuf(_)
                | ArgKind::OutStruct(..)
                | ArgKind::InOutStruct(..)
                | ArgKind::IovOut { .. } => ArgValue::Absent,
            };
        }
        if let Some((_, cols)) = xarg_columns(tid, def, &args, false) {
            ev.extra = cols;
        }
        if let Some(key) = enter_key.filter(|_| def.uring == Some(ra_syscalls::UringCall::Enter)) {
            ev.extra.push((crate::sink::ENTER_REF.into(), ra_trace::ExtraValue::Int(key)));
        }
        if never_returns(def) {
            // These never come back: record them now.
            hash_bulk(def, &mut ev, self.opts.data);
            self.emit(ev);
            self.resume(tid, 0);
            return Ok(());
        }
        self.thread(tid).pending = Some(Pending { def, args, ev });
        self.resume(tid, 0);
        Ok(())
    }

    fn on_exit(&mut self, tid: Pid) -> Result<()> {
        let at_exit = self.threads.get_mut(&tid).and_then(|t| t.at_exit.take());
        if matches!(at_exit, Some(uring::AtExit::Deny)) {
            sys::poke_user(tid, sys::RAX, -i64::from(libc::ENOSYS)).map_err(|source| {
                Error::Sys { call: "PTRACE_POKEUSER (--io-uring deny)", source }
            })?;
        }
        let info = sys::get_syscall_info(tid);
        let ops = match at_exit {
            Some(a) => self.uring_exit(tid, a, info.as_ref().ok()),
            None => Vec::new(),
        };
        let Some(Pending { def, args, mut ev }) =
            self.threads.get_mut(&tid).and_then(|t| t.pending.take())
        else {
            for op in ops {
                self.emit(op);
            }
            self.resume(tid, 0);
            return Ok(());
        };
        ev.time_returned = Some(now_ns());
        // Output buffers: data read into the caller (`--data read=`); sendmmsg's vectors,
        // trimmed here, were taken at entry by the write level.
        let skip_bulk = self.opts.data.read == DataLevel::None;
        match info {
            Ok(i) if i.op == sys::PTRACE_SYSCALL_INFO_EXIT => {
                let is_error = i.data[1] as u8 != 0;
                if is_error {
                    ev.ret = Some(-1);
                    ev.errno = Some((-i.rval()) as i32);
                } else {
                    ev.ret = Some(i.rval());
                    ev.errno = Some(0);
                }
            }
            _ => {}
        }
        let ok = ev.errno == Some(0);
        let ret = ev.ret;
        if ok && matches!(args[1], 5 | 36) {
            // F_GETLK / F_OFD_GETLK: the kernel wrote the conflicting lock (or F_UNLCK) back.
            if let Some((Xarg::Flock, cols)) = xarg_columns(tid, def, &args, false) {
                ev.extra = cols;
            }
        }
        if ok {
            // sendmsg/recvmsg: the descriptors the message carried (`SCM_RIGHTS`).
            if let Some((_, cols)) = xarg_columns(tid, def, &args, true) {
                ev.extra.extend(cols);
            }
        }
        for n in deref_len_args(def) {
            if args[n] != 0 {
                let b = mem::read(tid, args[n], 4);
                if let Ok(w) = <[u8; 4]>::try_from(b.as_slice()) {
                    ev.args[n] = ArgValue::Int(i64::from(u32::from_le_bytes(w)));
                }
            }
        }
        for (idx, a) in def.args.iter().enumerate() {
            let raw = args[idx];
            match a.kind {
                // Input vectors (writev, sendmsg) keep what the call consumed.
                ArgKind::InStruct(Struct::Msghdr, _) | ArgKind::IovIn { .. }
                    if def.ret == Ret::Count =>
                {
                    trim_iov(&mut ev.args[idx], ret);
                }
                ArgKind::InStruct(Struct::Mmsghdr, Len::Arg(n)) if ok => {
                    // The kernel wrote each message's msg_len; messages past `ret` were not sent.
                    let sent = ret.unwrap_or(0).max(0) as usize;
                    if let (ArgValue::Iov(v), Some(m)) =
                        (&mut ev.args[idx], mmsg_messages(tid, raw, args[n]))
                    {
                        for (i, (iov, (_, msg_len))) in v.iter_mut().zip(m).enumerate() {
                            if let Some(d) = &mut iov.data {
                                d.truncate(if i < sent { msg_len as usize } else { 0 });
                            }
                        }
                    }
                }
                ArgKind::InOutStruct(Struct::Mmsghdr, Len::Arg(n)) if ok && raw != 0 => {
                    let got = ret.unwrap_or(0).max(0) as usize;
                    ev.args[idx] = match mmsg_messages(tid, raw, args[n]) {
                        Some(_) if skip_bulk => {
                            ev.buffer_not_captured = true;
                            ArgValue::NotCaptured
                        }
                        Some(m) => {
                            mmsg_value(tid, m, |i, _, msg_len| if i < got { msg_len } else { 0 })
                        }
                        None => ArgValue::NotCaptured,
                    };
                }
                ArgKind::InOutStruct(Struct::Msghdr, _) if ok && raw != 0 => {
                    // recvmsg: what arrived is in the message's iovecs, `ret` bytes in order.
                    ev.args[idx] = match msghdr_iovecs(tid, raw) {
                        Some(_) if skip_bulk => {
                            ev.buffer_not_captured = true;
                            ArgValue::NotCaptured
                        }
                        Some(v) => read_iov_data(tid, v, Some(ret.unwrap_or(0).max(0) as u64)),
                        None => ArgValue::NotCaptured,
                    };
                }
                // Input buffers of calls that report how much they consumed keep that much.
                ArgKind::InBuf(Len::Arg(_)) if def.ret == Ret::Count => {
                    if let (ArgValue::Data(d), Some(r)) = (&mut ev.args[idx], ret) {
                        if r >= 0 && (r as usize) < d.len() {
                            d.truncate(r as usize);
                        }
                    }
                }
                _ if !a.kind.is_output() || raw == 0 => {}
                _ if !ok => ev.args[idx] = ArgValue::Absent,
                k if skip_bulk && is_bulk(k) => {
                    ev.buffer_not_captured = true;
                    ev.args[idx] = ArgValue::NotCaptured;
                }
                ArgKind::OutBuf(Len::CStr) => {
                    ev.args[idx] = mem::read_cstr(tid, raw, 1 << 20)
                        .map_or(ArgValue::Absent, |(b, _)| ArgValue::data(b));
                }
                ArgKind::OutBuf(len) => {
                    if let Some(n) = eval_len(tid, len, None, &args, ret) {
                        let (v, complete) = mem::read_arg(tid, raw, n, MAX_BUFFER_BYTES);
                        ev.buffer_not_captured |= !complete;
                        ev.args[idx] = v;
                    }
                }
                ArgKind::OutStruct(s, len) | ArgKind::InOutStruct(s, len) => {
                    let n = match (s, len) {
                        (Struct::Dirents | Struct::Dirents64, _) => ret.map(|r| r.max(0) as usize),
                        _ => eval_len(tid, len, Some(s), &args, ret),
                    };
                    if let Some(n) = n {
                        let b = mem::read(tid, raw, n);
                        ev.buffer_not_captured |= b.len() < n;
                        ev.args[idx] = ArgValue::data(b);
                    }
                }
                ArgKind::IovOut { count } => {
                    // The kernel filled `ret` bytes, vector by vector.
                    let filled = ret.unwrap_or(0).max(0) as u64;
                    ev.args[idx] = match mem::read_iovecs(tid, raw, args[count] as usize) {
                        Some(v) => read_iov_data(tid, v, Some(filled)),
                        None => ArgValue::NotCaptured,
                    };
                }
                _ => {}
            }
        }
        if ok && self.opts.data.write == DataLevel::Full {
            add_copied_data(tid, &mut ev);
        }
        if ok && def.replay.handler() == Some(ra_syscalls::Handler::Exec) {
            // A new program: its credentials may differ; refresh what we stamp on records.
            let info = proc_info(tid);
            if let Some(t) = self.threads.get_mut(&tid) {
                t.info = info;
            }
        }
        if ok && def.replay.handler() == Some(ra_syscalls::Handler::Close) {
            let tgid = self.thread(tid).info.tgid;
            if let Some(r) = self.rings.as_mut() {
                r.close(tgid, args[0] as i32 as i64);
            }
        }
        hash_bulk(def, &mut ev, self.opts.data);
        self.emit(ev);
        // The requests it completed come after it (their enter_id names it).
        for op in ops {
            self.emit(op);
        }
        self.resume(tid, 0);
        Ok(())
    }

    /// The recording's io_uring facts.
    fn facts(&self) -> Vec<(String, String)> {
        let mut f = self.rings.as_ref().map(uring::Rings::facts).unwrap_or_default();
        if self.opts.uring_deny {
            f.push(("io_uring_denied".to_string(), self.denied.to_string()));
        }
        f
    }

    /// The io_uring tracker at the entry of call `nr` (selected or not): the rings read, the
    /// requests completed since emitted, and what its exit must do noted. For an
    /// io_uring_enter, the key its record carries (`sink::ENTER_REF`).
    fn uring_entry(&mut self, tid: Pid, nr: u64, args: &[u64; 6]) -> Option<i64> {
        self.rings.as_ref()?;
        let info = self.thread(tid).info;
        let tgid = info.tgid;
        let mode = self.opts.data;
        let rings = self.rings.as_mut()?;
        let mut out = Vec::new();
        let mut key = None;
        let mut at_exit = uring::AtExit::of(rings, tgid, nr, args);
        match nr {
            uring::NR_IO_URING_ENTER => {
                let k = rings.enter_key();
                let fd = rings.enter_fd(tgid, args[0], args[3]);
                rings.enter(tid, info, fd, args[1], k, &mut out, mode);
                at_exit = match fd {
                    Some(fd) if rings.is_ring(tgid, fd) => Some(uring::AtExit::Enter { fd }),
                    Some(fd) => Some(uring::AtExit::Unknown { fd }),
                    None => None,
                };
                key = Some(k);
            }
            uring::NR_MUNMAP if rings.has_rings(tgid) => {
                rings.munmap(tid, tgid, args[0], &mut out, mode);
            }
            uring::NR_IO_URING_REGISTER if args[1] == uring::UNREGISTER_RING => {
                rings.unregister_ring_fds(tid, tgid, args[2], args[3]);
            }
            // exit_group, execve, execveat: the process's rings are read a last time.
            231 | 59 | 322 if rings.has_rings(tgid) => rings.leave(tid, tgid, &mut out, mode),
            _ => {}
        }
        if let Some(t) = self.threads.get_mut(&tid) {
            t.at_exit = at_exit;
        }
        for ev in out {
            self.emit(ev);
        }
        key
    }

    /// The io_uring tracker at the exit of a call it noted at entry: the requests completed
    /// meanwhile (emitted by the caller after the call's own record).
    fn uring_exit(
        &mut self,
        tid: Pid,
        a: uring::AtExit,
        info: Option<&sys::SyscallInfo>,
    ) -> Vec<Event> {
        let tgid = self.thread(tid).info.tgid;
        let mode = self.opts.data;
        let Some(rings) = self.rings.as_mut() else { return Vec::new() };
        let ret = info.filter(|i| i.op == sys::PTRACE_SYSCALL_INFO_EXIT).map(|i| {
            if i.data[1] as u8 != 0 {
                -1
            } else {
                i.rval()
            }
        });
        let ok = ret.is_some_and(|r| r >= 0);
        let mut out = Vec::new();
        match a {
            uring::AtExit::Setup { params } if ok => {
                rings.setup(tid, tgid, ret.unwrap_or(-1), params);
            }
            uring::AtExit::Mmap { fd, offset } if ok => {
                rings.mmap(tgid, fd, offset, ret.unwrap_or(0) as u64);
            }
            uring::AtExit::Enter { fd } => rings.enter_exit(tid, tgid, fd, ret, &mut out, mode),
            uring::AtExit::RegisterRingFds { arg, nr } if ok => {
                rings.register_ring_fds(tid, tgid, arg, nr);
            }
            uring::AtExit::Unknown { fd } if ok => {
                rings.unknown_ring(tgid, fd, ret.unwrap_or(0));
            }
            _ => {}
        }
        out
    }

    /// A signal-delivery-stop of `tid`: the signal's record (`signal_deliver`), when the
    /// selection has it.
    fn on_signal(&mut self, tid: Pid) {
        let info = self.thread(tid).info;
        let Ok(raw) = sys::get_siginfo(tid) else { return };
        let own = std::process::id() as Pid;
        if let Some(mut ev) = signal_event(&self.opts.selection, &raw, own, now_ns()) {
            stamp(&mut ev, tid, info);
            self.emit(ev);
        }
    }

    fn on_gone(&mut self, tid: Pid, status: i32) -> Result<()> {
        // (Only a fork event racing with the exit needs this: bounded, not a history.)
        if self.ended.len() >= 65_536 {
            self.ended.clear();
        }
        self.ended.insert(tid);
        self.fresh.remove(&tid);
        if let Some(m) = &self.monitor {
            m.remove(tid);
        }
        if let Some(t) = self.threads.remove(&tid) {
            if let Some(p) = t.pending {
                // Killed inside the call (e.g. another thread's exit_group): no result.
                let mut ev = p.ev;
                ev.time_returned = None;
                hash_bulk(p.def, &mut ev, self.opts.data);
                self.emit(ev);
            } else if let Some(mut ev) = generated_exit(&self.opts.selection, status) {
                // Killed between calls.
                stamp(&mut ev, tid, t.info);
                self.emit(ev);
            }
        }
        if self.failed.is_none() {
            let r = self.sink.thread_gone(tid);
            self.check(r);
        }
        if tid == self.root {
            self.root_status = Some(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            });
        }
        Ok(())
    }

    fn run(&mut self) -> Result<()> {
        let mut stops_seen = 0;
        loop {
            let requests = STOP_REQUESTS.load(Ordering::Relaxed);
            if requests > stops_seen && self.attach {
                stops_seen = requests;
                self.detach_all();
            } else if requests > stops_seen {
                stops_seen = requests;
                if requests == 1 {
                    sys::kill(self.root, STOP_SIGNAL.load(Ordering::Relaxed));
                } else {
                    // Asked twice: stop now; PTRACE_O_EXITKILL ends the tracees with us.
                    return Ok(());
                }
            }
            if self.detaching && self.threads.is_empty() {
                return Ok(());
            }
            let (tid, status) = match sys::wait_any() {
                Ok(Some(x)) => x,
                Ok(None) => continue,
                Err(e) if e.raw_os_error() == Some(libc::ECHILD) => return Ok(()),
                Err(source) => return Err(Error::Sys { call: "waitpid", source }),
            };
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                self.on_gone(tid, status)?;
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            let sig = libc::WSTOPSIG(status);
            let event = status >> 16;
            let known = self.threads.contains_key(&tid);
            if sig == libc::SIGTRAP | 0x80 {
                let entry = self.attach
                    && self.threads.get(&tid).is_none_or(|t| t.pending.is_none())
                    && sys::get_syscall_info(tid)
                        .is_ok_and(|i| i.op == sys::PTRACE_SYSCALL_INFO_ENTRY);
                if entry {
                    self.on_entry(tid)?;
                } else {
                    self.on_exit(tid)?;
                }
            } else if sig == libc::SIGTRAP && event != 0 {
                match event {
                    PTRACE_EVENT_SECCOMP => self.on_entry(tid)?,
                    PTRACE_EVENT_FORK | PTRACE_EVENT_VFORK | PTRACE_EVENT_CLONE => {
                        if let Ok(child) = sys::get_event_msg(tid) {
                            let child = child as Pid;
                            // A child that already ended (its exit was reported before this
                            // event) is not created again.
                            if !self.ended.remove(&child) {
                                // (Already known: its first stop came before this event.)
                                if !self.attach && !self.threads.contains_key(&child) {
                                    self.fresh.insert(child);
                                }
                                self.new_thread(child);
                                // A new process shares its parent's rings (and mappings).
                                let parent = self.thread(tid).info.tgid;
                                let ctgid = self.thread(child).info.tgid;
                                if let Some(r) = self.rings.as_mut() {
                                    r.fork(parent, ctgid);
                                }
                            }
                            // Its calls go after this call of the creator (see TraceSink::push).
                            self.sink.forked(tid, child);
                        }
                        self.resume(tid, 0);
                    }
                    PTRACE_EVENT_EXEC => {
                        // A non-leader thread that execs takes over the leader's tid.
                        if let Ok(former) = sys::get_event_msg(tid) {
                            let former = former as Pid;
                            if former != tid {
                                if let Some(t) = self.threads.remove(&former) {
                                    self.threads.insert(tid, t);
                                }
                            }
                        }
                        self.resume(tid, 0);
                    }
                    _ => self.resume(tid, 0),
                }
            } else if sig == libc::SIGSTOP && (!known || self.fresh.remove(&tid)) {
                // A new child's first stop, before or after its creator's event. Delivered, it
                // would stop the whole process: the traced threads are resumed from the
                // group-stop, but a thread the tracer cannot trace (an io_uring worker) would
                // stay stopped, and the program wait on it for ever (fio's io_uring engine).
                self.new_thread(tid);
                self.resume(tid, 0);
            } else if matches!(sig, libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU)
                && sys::is_group_stop(tid)
            {
                self.resume(tid, 0);
            } else {
                // A signal-delivery-stop: the signal is the program's (the tracer's own
                // SIGSTOPs are the first stops above).
                self.on_signal(tid);
                self.resume(tid, sig);
            }
        }
    }
}

/// Whether the selection records io_uring requests (`io_uring_op`): the ring tracker then runs.
fn uring_tracked(s: &Selection) -> bool {
    s.pseudo().iter().any(|d| d.replay.handler() == Some(ra_syscalls::Handler::UringOp))
}

/// Bind the calling (tracer) thread to `cpu`, and move this process's other threads (the trace
/// writer, DataSeries workers) off it when another CPU is available: they must not take turns
/// with the tracer and the command on the CPU those two share.
fn bind_tracer_and_move_helpers(cpu: usize) {
    // SAFETY: zeroed cpu_set_t values with bits set by CPU_SET; sched_{get,set}affinity read or
    // write exactly one cpu_set_t; gettid takes no arguments.
    unsafe {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, size, &mut allowed);
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        libc::sched_setaffinity(0, size, &one);
        libc::CPU_CLR(cpu, &mut allowed);
        if libc::CPU_COUNT(&allowed) == 0 {
            return;
        }
        let me = libc::gettid();
        let tids: Vec<Pid> = std::fs::read_dir("/proc/self/task")
            .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
            .unwrap_or_default();
        for tid in tids.into_iter().filter(|&t| t != me) {
            libc::sched_setaffinity(tid, size, &allowed);
        }
    }
}

/// True when this process has `CAP_SYS_ADMIN` in its effective set (it may then install a
/// seccomp filter without `PR_SET_NO_NEW_PRIVS`).
fn has_cap_sys_admin() -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    std::fs::read_to_string("/proc/self/status").ok().is_some_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) != 0)
    })
}

/// True when `exe` has a `security.capability` extended attribute (file capabilities).
fn has_file_caps(exe: &Path) -> bool {
    let Ok(c) = CString::new(exe.as_os_str().as_bytes()) else { return false };
    // SAFETY: a NUL-terminated path and name; size 0 asks for the value's length only.
    unsafe {
        libc::getxattr(c.as_ptr(), c"security.capability".as_ptr(), std::ptr::null_mut(), 0) > 0
    }
}

/// When `program` (found as execvp would) gains privileges at exec (set-user-ID,
/// set-group-ID or file capabilities) and this recorder lacks `CAP_SYS_ADMIN`: a sentence
/// saying that recorded it will run without them (the seccomp filter then needs
/// `PR_SET_NO_NEW_PRIVS`) and what to do instead. `None` otherwise.
pub fn privilege_loss(program: &std::ffi::OsStr) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    if has_cap_sys_admin() {
        return None;
    }
    let exe = resolve(Path::new(program))?;
    let mode = std::fs::metadata(&exe).ok()?.permissions().mode();
    let what = if mode & 0o4000 != 0 {
        "set-user-ID"
    } else if mode & 0o2000 != 0 {
        "set-group-ID"
    } else if has_file_caps(&exe) {
        "given file capabilities"
    } else {
        return None;
    };
    Some(format!(
        "{} is {what}: recorded with ptrace without root it runs without those privileges \
         (the seccomp filter needs no_new_privs), so it may fail or behave differently; \
         record as root (either backend keeps them)",
        exe.display()
    ))
}

/// Run `argv` under the tracer until every traced process has exited.
pub fn record_command(argv: &[OsString], opts: &Options, sink: &mut TraceSink) -> Result<Outcome> {
    let program = argv.first().ok_or(Error::EmptyCommand)?;
    let exe = resolve(Path::new(program)).ok_or_else(|| Error::Spawn {
        program: program.to_string_lossy().into_owned(),
        source: std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "not found, or not an executable file (searched PATH for a bare name)",
        ),
    })?;
    let c_exe = CString::new(exe.as_os_str().as_bytes()).map_err(|_| Error::Spawn {
        program: program.to_string_lossy().into_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL byte in path"),
    })?;
    let c_args: Vec<CString> = argv
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::Spawn {
            program: program.to_string_lossy().into_owned(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "NUL byte in an argument",
            ),
        })?;
    let mut c_argv: Vec<*const libc::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    c_argv.push(std::ptr::null());
    let mut numbers = opts.selection.numbers_x86_64();
    if uring_tracked(&opts.selection) {
        // The ring tracker sees these whatever the selection records.
        numbers.extend(uring::TRACKED);
    }
    if opts.uring_deny {
        numbers.push(uring::NR_IO_URING_SETUP as u32);
    }
    numbers.sort_unstable();
    numbers.dedup();
    let filter = seccomp::filter(&numbers);
    // Tracer and command on one CPU (see cpu.rs for why, and for when Auto unbinds them).
    let same_cpu: i32 = if opts.cpu != CpuPolicy::Any {
        // SAFETY: sched_getcpu takes no arguments.
        unsafe { libc::sched_getcpu() }
    } else {
        -1
    };
    let original = cpu::CpuSet::current();
    // (Started before the binding, which then moves it off the shared CPU with the other
    // helper threads.)
    let monitor = (same_cpu >= 0 && opts.cpu == CpuPolicy::Auto)
        // SAFETY: gettid takes no arguments.
        .then(|| cpu::Monitor::start(original, unsafe { libc::gettid() }));
    if same_cpu >= 0 {
        bind_tracer_and_move_helpers(same_cpu as usize);
    }

    // SAFETY: after fork the child only calls async-signal-safe functions (ptrace, raise,
    // prctl, seccomp, execv, _exit) on data prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Error::Sys { call: "fork", source: std::io::Error::last_os_error() });
    }
    if pid == 0 {
        // SAFETY: see above; this is the child.
        unsafe {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0usize, 0usize) == -1 {
                libc::_exit(126);
            }
            // Rust ignores SIGPIPE, and ignored signals survive exec: give the command the
            // default disposition it would have had without us.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            if same_cpu >= 0 {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(same_cpu as usize, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            libc::raise(libc::SIGSTOP);
            if !seccomp::install(&filter) {
                libc::_exit(126);
            }
            libc::execv(c_exe.as_ptr(), c_argv.as_ptr());
            libc::_exit(127);
        }
    }
    // The child stops itself before installing the filter.
    let mut status = 0;
    // SAFETY: waitpid writes the status of our child into `status`.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
    if r != pid || !libc::WIFSTOPPED(status) {
        return Err(Error::Spawn {
            program: program.to_string_lossy().into_owned(),
            source: std::io::Error::other("the child did not stop for tracing"),
        });
    }
    let opts_bits = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_TRACESECCOMP
        | libc::PTRACE_O_EXITKILL;
    sys::set_options(pid, opts_bits)
        .map_err(|source| Error::Sys { call: "PTRACE_SETOPTIONS", source })?;

    // The descriptors the command inherits: synthetic records first, as for -p.
    let inherited = inherited_fds(pid);
    let n_inherited = inherited.len() as u64;
    for ev in inherited {
        sink.push(ev)?;
    }
    let mut t = Tracer::new(opts, sink, pid, false, usize::try_from(same_cpu).ok());
    t.monitor = monitor;
    t.new_thread(pid);
    t.resume(pid, 0);
    let r = t.run();
    t.out.cpu_note = t.monitor.take().and_then(cpu::Monitor::finish);
    r?;
    t.out.facts.extend(t.facts());
    t.out.exit_code = t.root_status.unwrap_or(128 + libc::SIGKILL);
    if let Some(e) = t.failed.take() {
        return Err(e.stopped(crate::fate_of_command(&program.to_string_lossy(), t.out.exit_code)));
    }
    t.out.pinned_cpu = t.pinned_cpu;
    t.out.synthetic_ids = n_inherited;
    Ok(t.out)
}

/// Why a process cannot be traced, in words a user can act on.
fn attach_error(pid: Pid, e: std::io::Error) -> Error {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let tracer = status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_default();
    let why = if !tracer.is_empty() && tracer != "0" {
        format!("it is already traced by process {tracer} (a process has one tracer at a time)")
    } else if e.raw_os_error() == Some(libc::EPERM) {
        let yama =
            std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").unwrap_or_default();
        match yama.trim() {
            "1" => "Yama ptrace_scope is 1: only a parent may trace its children; run as root, \
                    or set /proc/sys/kernel/yama/ptrace_scope to 0"
                .to_string(),
            "2" | "3" => format!("Yama ptrace_scope is {}: attaching needs CAP_SYS_PTRACE (root) or is disabled", yama.trim()),
            _ => "permission denied: the process belongs to another user, or is not dumpable; run as its owner or root".to_string(),
        }
    } else {
        e.to_string()
    };
    Error::Attach { pid, why }
}

/// Attach to every thread of the running process `pid` and record until it exits or a stop is
/// requested (then detach, leaving it running). Returns the outcome and the number of
/// synthetic records written first.
pub fn attach(pid: Pid, opts: &Options, sink: &mut TraceSink) -> Result<(Outcome, u64)> {
    let task_dir = format!("/proc/{pid}/task");
    if std::fs::metadata(&task_dir).is_err() {
        return Err(Error::Attach { pid, why: "no such process".into() });
    }
    let bits = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACEEXEC;
    // Threads may appear while we attach: repeat until a listing brings nothing new.
    let mut seized: Vec<Pid> = Vec::new();
    loop {
        let tids: Vec<Pid> = std::fs::read_dir(&task_dir)
            .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
            .unwrap_or_default();
        let new: Vec<Pid> = tids.into_iter().filter(|t| !seized.contains(t)).collect();
        if new.is_empty() {
            break;
        }
        for tid in new {
            match sys::seize(tid, bits) {
                Ok(()) => seized.push(tid),
                Err(e) if seized.is_empty() => return Err(attach_error(pid, e)),
                Err(_) => {} // the thread exited meanwhile
            }
        }
    }
    let info = proc_info(pid);
    let synthetic = synthetic_fds(pid, info);
    let n_synthetic = synthetic.len() as u64;
    for ev in synthetic {
        sink.push(ev)?;
    }
    let mut t = Tracer::new(opts, sink, pid, true, None);
    for &tid in &seized {
        t.thread(tid);
        // Stop each thread once; the loop resumes it with PTRACE_SYSCALL.
        let _ = sys::interrupt(tid);
    }
    let r = t.run();
    r?;
    t.out.facts.extend(t.facts());
    t.out.exit_code = t.root_status.unwrap_or(0);
    if let Some(e) = t.failed.take() {
        return Err(e.stopped(crate::fate_of_attached(pid)));
    }
    Ok((t.out, n_synthetic))
}
