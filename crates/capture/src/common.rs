//! Helpers every backend shares: how registry argument kinds become recorded values, the
//! common fields stamped on records, `--data hash`, synthetic records for attach.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use ra_syscalls::{ArgKind, Handler, Len, Ret, Struct, SyscallDef};
use ra_trace::{ArgValue, Event};

/// A process or thread id.
pub(crate) type Pid = libc::pid_t;

/// A hash map keyed by thread or process ids. The consumer of the eBPF ring looks several of
/// these up for every recorded call; std's SipHash (made to resist keys chosen by an attacker,
/// which ids from the kernel are not) cost ~4 % of its time there. A multiplicative hash of
/// the id mixes its bits into the high ones, which hashbrown's buckets and tags use.
pub(crate) type IdMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

#[derive(Clone, Copy, Default)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_i32(&mut self, n: i32) {
        self.write_u32(n as u32);
    }
}

pub(crate) fn now_ns() -> i64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

/// Per-process facts stamped on every record.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ProcInfo {
    pub tgid: Pid,
    pub ppid: i32,
    pub uid: i32,
    pub gid: i32,
    pub pgid: i32,
    pub sid: i32,
}

pub(crate) fn proc_info(tid: Pid) -> ProcInfo {
    let mut p = ProcInfo { tgid: tid, ..Default::default() };
    if let Ok(s) = std::fs::read_to_string(format!("/proc/{tid}/status")) {
        for line in s.lines() {
            let mut it = line.split_whitespace();
            let (Some(k), Some(v)) = (it.next(), it.next()) else { continue };
            let v: i32 = v.parse().unwrap_or(-1);
            match k {
                "Tgid:" => p.tgid = v,
                "PPid:" => p.ppid = v,
                "Uid:" => p.uid = v,
                "Gid:" => p.gid = v,
                _ => {}
            }
        }
    }
    // SAFETY: getpgid/getsid take a pid and return an id or -1.
    unsafe {
        p.pgid = libc::getpgid(p.tgid);
        p.sid = libc::getsid(p.tgid);
    }
    p
}

/// Size of a struct the registry names (x86_64).
pub(crate) fn struct_size(s: Struct) -> usize {
    match s {
        Struct::Stat => 144,
        Struct::Statx => 256,
        Struct::Statfs => 120,
        Struct::OpenHow => 24,
        Struct::Timespec2 | Struct::Timeval2 => 32,
        Struct::Utimbuf | Struct::Rlimit => 16,
        Struct::FdPair => 8,
        Struct::Flock => 32,
        Struct::Loff => 8,
        Struct::Sockaddr => 128,
        Struct::Msghdr => 56,
        Struct::Mmsghdr => 64,
        Struct::CloneArgs => 88,
        Struct::EpollEvent => 12,
        Struct::UringParams => ra_syscalls::uring::params::SIZE,
        // By opcode (`register_arg`).
        Struct::Dirents | Struct::Dirents64 | Struct::UringRegister => 0,
    }
}

/// io_uring_register's argument as the record keeps it ([`Struct::UringRegister`]): the
/// struct [`ra_syscalls::uring::register::layout`] names for `opcode`, then the array it (or
/// `arg` itself) points to, at most [`ra_syscalls::uring::register::MAX_ARRAY_BYTES`] of it,
/// read through `read(address, len)` (which returns what it could read). None for opcodes
/// that register no files or buffers; with it, whether every byte wanted was read.
pub(crate) fn register_arg(
    opcode: u64,
    nr_args: u64,
    arg: u64,
    read: impl Fn(u64, usize) -> Vec<u8>,
) -> Option<(Vec<u8>, bool)> {
    use ra_syscalls::uring::register;
    let l = register::layout(opcode)?;
    let header = usize::from(l.header);
    let mut out = read(arg, header);
    if out.len() < header {
        return Some((out, false));
    }
    let u32_at = |o: u8| {
        let o = usize::from(o);
        u64::from(u32::from_le_bytes(out[o..o + 4].try_into().expect("4 bytes")))
    };
    let count = l.count_at.map_or(nr_args, u32_at);
    let sparse =
        l.flags_at.is_some_and(|o| u32_at(o) & u64::from(register::RSRC_REGISTER_SPARSE) != 0);
    let ptr = if header == 0 {
        arg
    } else {
        let o = usize::from(l.ptr_at);
        u64::from_le_bytes(out[o..o + 8].try_into().expect("8 bytes"))
    };
    if sparse || ptr == 0 {
        return Some((out, true));
    }
    let n = register::array_bytes(l, count);
    let array = read(ptr, n);
    let complete = array.len() == n;
    out.extend_from_slice(&array[..array.len() / usize::from(l.elem) * usize::from(l.elem)]);
    Some((out, complete))
}

/// Bulk data (file contents moving through read/write and friends), as opposed to the
/// metadata that pointers also carry (paths, names, struct results, argv). `--data hash|none`
/// apply to bulk data only.
pub(crate) fn is_bulk(kind: ArgKind) -> bool {
    kind.is_bulk()
}

/// Replace bulk data by its length and digest (`--data hash`).
pub(crate) fn hash_bulk(def: &SyscallDef, ev: &mut Event, mode: crate::DataMode) {
    if mode.write != crate::DataLevel::Hash && mode.read != crate::DataLevel::Hash {
        return;
    }
    for (a, v) in def.args.iter().zip(ev.args.iter_mut()) {
        if !is_bulk(a.kind) || mode.of(a.kind) != crate::DataLevel::Hash {
            continue;
        }
        v.hash_data();
    }
}

/// Memory that a call's pointer argument refers to only for some values of another argument,
/// captured into columns of their own (both recorders use this).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Xarg {
    /// fcntl's `struct flock *` for the lock commands: the `lock_*` columns.
    Flock,
    /// ioctl's `int *` for FIONBIO / FIOASYNC: the `ioctl_buffer` and `buffer_size` columns.
    IoctlInt,
    /// sendmsg's and recvmsg's message control data (`msg_control`, `msg_controllen` bytes of
    /// it, at most [`MSG_CONTROL_MAX`]), read after the call: the descriptors it passed, the
    /// `scm_rights` column. The pointer argument is the `struct msghdr *`.
    MsgControl,
}

/// The most control data read of one message: 253 descriptors (the kernel's `SCM_MAX_FD`) in
/// one `SCM_RIGHTS` message, with room for another control message beside them.
pub(crate) const MSG_CONTROL_MAX: usize = 1024;

impl Xarg {
    /// Which extra `def` has (whatever its arguments): the kind, the pointer argument's index
    /// and the index of the argument deciding.
    pub(crate) fn of_call(def: &SyscallDef) -> Option<(Xarg, usize, usize)> {
        if let Some(m) = def.msg_arg() {
            return Some((Xarg::MsgControl, m, m));
        }
        let (kind, ptr, cond) = match def.extra {
            ra_syscalls::Extra::Flock => (Xarg::Flock, "arg", "cmd"),
            ra_syscalls::Extra::IoctlInt => (Xarg::IoctlInt, "argp", "request"),
            ra_syscalls::Extra::No => return None,
        };
        let (p, _) = def.arg(ptr)?;
        let (c, _) = def.arg(cond)?;
        Some((kind, p, c))
    }

    /// The extra of this call with these arguments, if it has one: (kind, pointer argument).
    pub(crate) fn of(def: &SyscallDef, args: &[u64; 6]) -> Option<(Xarg, usize)> {
        let (kind, p, c) = Xarg::of_call(def)?;
        let on = match kind {
            Xarg::Flock => ra_syscalls::flags::fcntl_arg_is_flock(args[c]),
            Xarg::IoctlInt => ra_syscalls::flags::ioctl_arg_is_int(args[c]),
            Xarg::MsgControl => true,
        };
        on.then_some((kind, p))
    }

    /// The bytes to read.
    pub(crate) fn size(self) -> usize {
        match self {
            Xarg::Flock => struct_size(Struct::Flock),
            Xarg::IoctlInt => 4,
            Xarg::MsgControl => MSG_CONTROL_MAX,
        }
    }

    /// Whether the extra is read only once the call has returned (the control data a
    /// `recvmsg` received; a `sendmsg`'s is unchanged by then), not at entry.
    pub(crate) fn after_call(self) -> bool {
        matches!(self, Xarg::MsgControl)
    }

    /// The bytes read from the process as columns; nothing when too few could be read.
    pub(crate) fn columns(self, b: &[u8]) -> Vec<(String, ra_trace::ExtraValue)> {
        match self {
            Xarg::Flock => flock_columns_from(b),
            Xarg::IoctlInt if b.len() >= 4 => vec![
                ("ioctl_buffer".to_string(), ra_trace::ExtraValue::Bytes(b[..4].to_vec())),
                ("buffer_size".to_string(), ra_trace::ExtraValue::Int(4)),
            ],
            Xarg::IoctlInt => Vec::new(),
            Xarg::MsgControl => scm_rights_columns(b),
        }
    }
}

/// A message's control data (`struct cmsghdr`s, x86_64/aarch64 layout: 8-byte length, level,
/// type, data padded to 8 bytes) as the `scm_rights` column: the descriptor numbers of its
/// `SCM_RIGHTS` messages, in order; nothing when it has none. A message cut short by the end
/// of `b` keeps the whole descriptors it has.
pub(crate) fn scm_rights_columns(b: &[u8]) -> Vec<(String, ra_trace::ExtraValue)> {
    const HDR: usize = 16;
    let mut fds = Vec::new();
    let mut at = 0usize;
    while at + HDR <= b.len() {
        let len = u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
        let level = i32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap_or([0; 4]));
        let ty = i32::from_le_bytes(b[at + 12..at + 16].try_into().unwrap_or([0; 4]));
        let Ok(len) = usize::try_from(len) else { break };
        if len < HDR {
            break;
        }
        if level == libc::SOL_SOCKET && ty == libc::SCM_RIGHTS {
            let end = at.saturating_add(len).min(b.len());
            let whole = (end - at - HDR) / 4 * 4;
            fds.extend_from_slice(&b[at + HDR..at + HDR + whole]);
        }
        at = match at.checked_add((len + 7) & !7) {
            Some(n) => n,
            None => break,
        };
    }
    if fds.is_empty() {
        return Vec::new();
    }
    vec![(ra_trace::schema::SCM_RIGHTS.to_string(), ra_trace::ExtraValue::Bytes(fds))]
}

/// `struct flock` (x86_64, 32 bytes, as read from the process) as Re-Animator's `fcntl`
/// columns: the fields, and `l_type` and `l_whence` decoded into their bool columns
/// (`lock_type_write`, `lock_whence_start`, ...); nothing when fewer than 32 bytes could be
/// read.
pub(crate) fn flock_columns_from(b: &[u8]) -> Vec<(String, ra_trace::ExtraValue)> {
    use ra_trace::ExtraValue;
    if b.len() < 32 {
        return Vec::new();
    }
    let i16_at = |o: usize| i64::from(i16::from_le_bytes([b[o], b[o + 1]]));
    let i64_at = |o: usize| i64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
    let i32_at = |o: usize| i64::from(i32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4])));
    let (ty, whence) = (i16_at(0), i16_at(2));
    let mut cols: Vec<(String, ExtraValue)> = [
        ("lock_type", ty),
        ("lock_whence", whence),
        ("lock_start", i64_at(8)),
        ("lock_length", i64_at(16)),
        ("lock_pid", i32_at(24)),
        // Whole: Re-Animator's int32 columns hold no value beyond 32 bits.
        (ra_trace::schema::LOCK_START64, i64_at(8)),
        (ra_trace::schema::LOCK_LENGTH64, i64_at(16)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), ExtraValue::Int(v)))
    .collect();
    for (set, v) in
        [(&ra_syscalls::flags::FLOCK_TYPE, ty), (&ra_syscalls::flags::FLOCK_WHENCE, whence)]
    {
        for f in set.entries {
            if let Some(col) = f.ra_field {
                cols.push((col.to_string(), ExtraValue::Bool(v as u64 == f.value)));
            }
        }
    }
    cols
}

/// Argument indices holding a `socklen_t *` that another argument's length refers to
/// ([`Len::DerefArg`]): their field records `*ptr` after the call, not the pointer.
pub(crate) fn deref_len_args(def: &SyscallDef) -> Vec<usize> {
    def.args
        .iter()
        .filter_map(|a| match a.kind {
            ArgKind::OutBuf(Len::DerefArg(n))
            | ArgKind::OutStruct(_, Len::DerefArg(n))
            | ArgKind::InOutStruct(_, Len::DerefArg(n)) => Some(n),
            _ => None,
        })
        .collect()
}

/// The common fields every record of this process carries.
pub(crate) fn stamp(ev: &mut Event, tid: Pid, p: ProcInfo) {
    ev.pid = Some(p.tgid);
    ev.tid = Some(tid);
    ev.ppid = Some(p.ppid);
    ev.uid = Some(p.uid);
    ev.gid = Some(p.gid);
    ev.pgid = Some(p.pgid);
    ev.sid = Some(p.sid);
}

/// The record of a thread that a signal killed between calls (`wait_status`, as `waitpid` or
/// the task's `exit_code` gives it, says so; a thread killed inside a call is recorded as that
/// call without a result instead): Re-Animator's `exit` record with its `generated` column
/// set and `exit_status` the wait status, stamped `time_called` when the recorder saw the
/// death. Without it a replay keeps the thread's process, and the descriptors it held (a
/// pipe's write end), for good: Python's test_subprocess kills children that spin in user
/// space, and the parent's reads of their pipes, recorded as end-of-file, waited forever.
/// (Only when the selection records `exit`.)
pub(crate) fn generated_exit(sel: &crate::Selection, wait_status: i32) -> Option<Event> {
    if !libc::WIFSIGNALED(wait_status)
        || !sel.defs().iter().any(|d| d.replay.handler() == Some(Handler::Exit) && !d.ends_process)
    {
        return None;
    }
    let mut ev = Event::new(ra_syscalls::lookup("exit")?);
    ev.set_arg("status", ArgValue::Int(wait_status.into()));
    ev.extra.push(("generated".into(), ra_trace::ExtraValue::Bool(true)));
    ev.time_called = Some(now_ns());
    Some(ev)
}

/// The record of a signal delivered to a traced thread (`signal_deliver`, docs/TRACE_FORMAT.md
/// 4.4) from the kernel's `siginfo_t` bytes (`raw`: `PTRACE_GETSIGINFO`'s or the tracepoint's
/// `kernel_siginfo`), stamped `time_called` `time_ns`. None when the selection does not record
/// signals, and for what is no signal of the program's: `SIGKILL` (never stopped at, as under
/// strace; the thread's end says it) and the `SIGSTOP`/`SIGCONT` the recorder itself sends
/// (`own_pid`: the eBPF throttle's).
pub(crate) fn signal_event(
    sel: &crate::Selection,
    raw: &[u8],
    own_pid: Pid,
    time_ns: i64,
) -> Option<Event> {
    let def = sel.pseudo().iter().copied().find(|d| d.is_signal())?;
    let si = ra_syscalls::siginfo::SigInfo::from_kernel(raw)?;
    // The throttle's SIGSTOP (bpf_send_signal_thread: SI_KERNEL), the SIGCONT that ends it.
    let own = matches!(si.signo, libc::SIGSTOP | libc::SIGCONT)
        && ((si.pid == own_pid && si.code == ra_syscalls::siginfo::SI_USER)
            || si.code == ra_syscalls::siginfo::SI_KERNEL);
    if si.signo <= 0 || si.signo == libc::SIGKILL || own {
        return None;
    }
    let mut ev = Event::new(def);
    for (name, v) in [
        ("signo", si.signo.into()),
        ("errno", si.errno.into()),
        ("code", si.code.into()),
        ("pid", si.pid.into()),
        ("uid", si.uid.into()),
        ("status", si.status.into()),
        ("utime", si.utime),
        ("stime", si.stime),
        ("addr", si.addr as i64),
        ("value", si.value),
    ] {
        ev.set_arg(name, ArgValue::Int(v));
    }
    ev.time_called = Some(time_ns);
    Some(ev)
}

/// Calls that never come back (recorded at entry): `exit`, `exit_group`. (`execve` is
/// `Ret::NoReturn` too, but returns on failure, and 0 in the new program.)
pub(crate) fn never_returns(def: &SyscallDef) -> bool {
    def.ret == Ret::NoReturn && def.replay.handler() == Some(Handler::Exit)
}

/// Argument `i`'s register → the value recorded: what the kernel reads of it (the registry's
/// [`ra_syscalls::Width`]: `int`s sign-extended from the low half, `unsigned int` and `mode_t`
/// zero-extended), descriptors always as signed `int`s (so -1 and AT_FDCWD show as such).
pub(crate) fn scalar(def: &SyscallDef, i: usize, raw: u64) -> i64 {
    match def.args.get(i).map(|a| a.kind) {
        Some(ArgKind::Fd | ArgKind::DirFd) => raw as u32 as i32 as i64,
        _ => def.arg_value(i, raw),
    }
}

/// The six argument registers as the kernel reads them (see [`scalar`]): lengths, counts and
/// command words computed from them then agree with the kernel's.
pub(crate) fn kernel_args(def: &SyscallDef, mut raw: [u64; 6]) -> [u64; 6] {
    for (i, r) in raw.iter_mut().enumerate().take(def.args.len()) {
        *r = scalar(def, i, *r) as u64;
    }
    raw
}

/// Find `program` the way execvp would.
pub(crate) fn resolve(program: &Path) -> Option<PathBuf> {
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        })
    };
    if program.as_os_str().as_bytes().contains(&b'/') {
        return runnable(program).then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| runnable(p))
}

/// The descriptors a command inherits at its start (those without close-on-exec: the shell's
/// redirections, fds passed down by a parent), as synthetic `openat` records, so that replay
/// knows them.
pub(crate) fn inherited_fds(pid: Pid) -> Vec<Event> {
    synthetic_fds(pid, proc_info(pid))
        .into_iter()
        .filter(|e| {
            e.arg("flags")
                .and_then(ArgValue::as_int)
                .is_some_and(|f| f & libc::O_CLOEXEC as i64 == 0)
        })
        .collect()
}

/// Synthetic `openat` events for the descriptors `pid` already has open (from /proc), so that
/// replay knows them. They take the first unique ids of the trace; the trace info key
/// `synthetic_ids` gives how many.
pub(crate) fn synthetic_fds(pid: Pid, info: ProcInfo) -> Vec<Event> {
    let Some(openat) = ra_syscalls::lookup("openat") else { return Vec::new() };
    let mut fds: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    fds.sort_unstable();
    let now = now_ns();
    let mut out = Vec::new();
    for fd in fds {
        let Ok(target) = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")) else { continue };
        let fdinfo =
            std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap_or_default();
        let flags = fdinfo
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|v| i64::from_str_radix(v.trim(), 8).ok())
            .unwrap_or(0);
        let mut path = target.as_os_str().as_bytes().to_vec();
        path.push(0);
        let mut ev = Event::new(openat);
        ev.time_called = Some(now);
        ev.time_returned = Some(now);
        stamp(&mut ev, pid, info);
        ev.ret = Some(i64::from(fd));
        ev.errno = Some(0);
        ev.set_arg("dirfd", ArgValue::Int(-100));
        ev.set_arg("pathname", ArgValue::data(path));
        ev.set_arg("flags", ArgValue::Int(flags));
        ev.set_arg("mode", ArgValue::Int(0));
        out.push(ev);
    }
    out
}

/// Add to `ev` (`data_copied`) the bytes a kernel-side copy (`sendfile`, `copy_file_range`,
/// `splice`) moved, which never passed through the program's memory: read back, while the thread is still stopped at the
/// call's exit, from the source file, or from the destination file when the source is not a
/// regular file (a pipe or socket). Nothing when neither end is a regular file this process
/// can read, or the range is no longer all there. Another thread of the program that writes
/// either range in the meantime makes these bytes its, not the copy's. Both recorders call it
/// with the thread stopped at the call's exit: ptrace at its exit stop, eBPF once the
/// throttle's SIGSTOP has taken.
pub(crate) fn add_copied_data(tid: Pid, ev: &mut Event) {
    if let Some(d) = copied_data(tid, ev) {
        ev.extra.push((ra_trace::schema::COPIED_DATA.into(), ra_trace::ExtraValue::Bytes(d)));
    }
}

/// The read-back of [`add_copied_data`].
fn copied_data(tid: Pid, ev: &Event) -> Option<Vec<u8>> {
    let c = ev.copy()?;
    // No more than a record stores (the writer would leave a larger column out): a copy of
    // 2 GiB (Python's test_largefile) is not read back into memory.
    let n = usize::try_from(c.moved).ok().filter(|&n| n > 0 && n <= ra_trace::MAX_BUFFER_BYTES)?;
    [(c.fd_in, c.off_in), (c.fd_out, c.off_out)].into_iter().find_map(|(fd, off)| {
        // An end without an offset pointer moved its file position past the bytes.
        let off = match off {
            Some(o) => o,
            None => fd_position(tid, fd)? - c.moved,
        };
        read_back(tid, fd, u64::try_from(off).ok()?, n)
    })
}

/// A descriptor's file position (`pos:` in `/proc/TID/fdinfo/FD`).
fn fd_position(tid: Pid, fd: i32) -> Option<i64> {
    let s = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")).ok()?;
    s.lines().find_map(|l| l.strip_prefix("pos:")).and_then(|v| v.trim().parse().ok())
}

/// `n` bytes at `off` of the regular file behind descriptor `fd` of `tid`, opened anew
/// through `/proc/TID/fd/FD` (never a FIFO or device: the open could block or have effects).
fn read_back(tid: Pid, fd: i32, off: u64, n: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let path = format!("/proc/{tid}/fd/{fd}");
    if !std::fs::metadata(&path).ok()?.is_file() {
        return None;
    }
    let open = |flags: i32| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | flags)
            .open(&path)
    };
    // O_NOATIME where allowed (the file's owner or CAP_FOWNER): reading back is not an access
    // of the program's.
    let f = open(libc::O_NOATIME).or_else(|_| open(0)).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = vec![0u8; n];
    f.read_exact_at(&mut buf, off).ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One control message as the kernel lays it out (x86_64): length, level, type, data,
    /// padded to 8 bytes.
    fn cmsg(level: i32, ty: i32, data: &[u8]) -> Vec<u8> {
        let mut v = ((16 + data.len()) as u64).to_le_bytes().to_vec();
        v.extend(level.to_le_bytes());
        v.extend(ty.to_le_bytes());
        v.extend(data);
        v.resize(v.len().next_multiple_of(8), 0);
        v
    }

    fn fds(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|f| f.to_le_bytes()).collect()
    }

    #[test]
    fn the_descriptors_of_scm_rights_messages_are_the_column() {
        let want = |v: &[i32]| {
            vec![(ra_trace::schema::SCM_RIGHTS.to_string(), ra_trace::ExtraValue::Bytes(fds(v)))]
        };
        // Credentials first (3 ints), then three descriptors (padded), then two more.
        let mut b = cmsg(libc::SOL_SOCKET, libc::SCM_CREDENTIALS, &fds(&[1, 0, 0]));
        b.extend(cmsg(libc::SOL_SOCKET, libc::SCM_RIGHTS, &fds(&[5, 6, 7])));
        b.extend(cmsg(libc::SOL_SOCKET, libc::SCM_RIGHTS, &fds(&[9, 10])));
        assert_eq!(scm_rights_columns(&b), want(&[5, 6, 7, 9, 10]));
        // Cut short (the read stopped at the cap): the whole descriptors it has.
        assert_eq!(scm_rights_columns(&b[..32 + 16 + 6]), want(&[5]));
        // None: no control data, credentials only, another level, a header claiming less
        // than itself.
        assert!(scm_rights_columns(&[]).is_empty());
        assert!(scm_rights_columns(&b[..32]).is_empty());
        assert!(scm_rights_columns(&cmsg(libc::SOL_IP, libc::SCM_RIGHTS, &fds(&[3]))).is_empty());
        let mut bad = cmsg(libc::SOL_SOCKET, libc::SCM_RIGHTS, &fds(&[3]));
        bad[0] = 8;
        assert!(scm_rights_columns(&bad).is_empty());
    }
}
