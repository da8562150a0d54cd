pub use bytes::Bytes;
use ra_syscalls::SyscallDef;

/// A kernel-side copy (`sendfile`, `copy_file_range`, `splice`) as recorded
/// ([`Event::copy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelCopy<'a> {
    /// The descriptor copied from (`sendfile`'s `in_fd`, `copy_file_range`'s and `splice`'s
    /// `fd_in`).
    pub fd_in: i32,
    /// The input's offset before the call; None: the call used (and moved) the descriptor's
    /// file position.
    pub off_in: Option<i64>,
    /// The descriptor copied to (`out_fd`, `fd_out`).
    pub fd_out: i32,
    /// The output's offset before the call, as `off_in`.
    pub off_out: Option<i64>,
    /// Bytes moved (0 when the call failed).
    pub moved: i64,
    /// The bytes moved ([`crate::schema::COPIED_DATA`]), when the recorder captured them.
    pub data: Option<&'a [u8]>,
}

/// The value of one argument of an [`Event`], aligned with the registry's `args`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgValue {
    /// Not applicable or a NULL pointer (e.g. the output buffer of a failed read).
    Absent,
    /// An integer argument (fd, flags, count, offset, address).
    Int(i64),
    /// Captured bytes: a path (with its trailing NUL, as Re-Animator stores it), a data buffer,
    /// or a struct's raw bytes. ([`Bytes`]: owned, or a slice of a memory-mapped replay plan
    /// that replay writes from without copying.)
    Data(Bytes),
    /// A buffer that existed but was not captured (`--data none|hash`, or a failed copy).
    NotCaptured,
    /// An iovec array: one entry per vector.
    Iov(Vec<IovValue>),
    /// A string array (argv, envp), each element without its NUL.
    Strings(Vec<Vec<u8>>),
    /// A data buffer recorded as its length and BLAKE3 digest (`--data hash`); for iovecs, of
    /// the vectors' data concatenated.
    Hashed {
        /// Bytes the buffer held.
        len: u64,
        /// BLAKE3 hash of those bytes.
        blake3: [u8; 32],
    },
}

impl ArgValue {
    /// Captured bytes ([`ArgValue::Data`]) from a vector, a slice or [`Bytes`].
    pub fn data(b: impl Into<Bytes>) -> ArgValue {
        ArgValue::Data(b.into())
    }
    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            ArgValue::Int(v) => Some(*v),
            _ => None,
        }
    }
    /// The captured bytes, if any.
    pub fn as_data(&self) -> Option<&[u8]> {
        match self {
            ArgValue::Data(d) => Some(d),
            _ => None,
        }
    }
    /// Replaces a data buffer by its length and BLAKE3 digest ([`ArgValue::Hashed`], what
    /// `record --data hash` stores): [`ArgValue::Data`] by its bytes, [`ArgValue::Iov`] by the
    /// captured vectors' bytes concatenated (vectors without data count for nothing). Returns
    /// whether it replaced anything; other values are left alone.
    pub fn hash_data(&mut self) -> bool {
        let mut h = blake3::Hasher::new();
        let len = match self {
            ArgValue::Data(d) => {
                h.update(d);
                d.len() as u64
            }
            ArgValue::Iov(vs) => vs
                .iter()
                .filter_map(|i| i.data.as_ref())
                .map(|d| {
                    h.update(d);
                    d.len() as u64
                })
                .sum(),
            _ => return false,
        };
        *self = ArgValue::Hashed { len, blake3: *h.finalize().as_bytes() };
        true
    }
}

/// One iovec: the length the program asked for and, when captured, the bytes moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IovValue {
    /// The vector's `iov_len`: bytes the program offered.
    pub requested: u64,
    /// The bytes the call moved through this vector (at most `requested`; fewer after a
    /// short transfer); `None` when not captured.
    pub data: Option<Bytes>,
}

/// One system call as recorded: the common fields of Re-Animator's schema plus the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The registry entry; `None` for record types the registry doesn't know (then `name` and
    /// `extra` carry everything).
    pub def: Option<&'static SyscallDef>,
    /// The trace name of the call (`read`, `pread`, `fstatat`).
    pub name: String,
    /// Trace order; strictly increasing in a trace. Multi-record calls (iovecs, execve) take one
    /// id per record; this is the first.
    pub unique_id: u64,
    /// Nanoseconds since the Unix epoch.
    pub time_called: Option<i64>,
    /// When the call returned, ns since the Unix epoch (`time_returned`).
    pub time_returned: Option<i64>,
    /// When the tracer recorded the event, ns since the Unix epoch (`time_recorded`).
    pub time_recorded: Option<i64>,
    /// The caller's process (thread-group) id, `executing_pid`; `None` for Re-Animator's
    /// traces, whose `executing_pid` holds the thread id ([`crate::quirks`]).
    pub pid: Option<i32>,
    /// The caller's thread id, `executing_tid` (Re-Animator's traces: else `executing_pid`).
    pub tid: Option<i32>,
    /// The caller's parent process id, `executing_ppid`.
    pub ppid: Option<i32>,
    /// The caller's real user id, `executing_uid` (fs traces: its fsuid).
    pub uid: Option<i32>,
    /// The caller's real group id, `executing_gid` (our addition; fs traces: its fsgid).
    pub gid: Option<i32>,
    /// The caller's session id, `executing_sid`.
    pub sid: Option<i32>,
    /// The caller's process group id, `executing_pgid`.
    pub pgid: Option<i32>,
    /// The raw return value (for failed calls -1, with `errno` set).
    pub ret: Option<i64>,
    /// 0 or absent on success.
    pub errno: Option<i32>,
    /// Some buffer of this call was not captured.
    pub buffer_not_captured: bool,
    /// Aligned with `def.args` (empty for unknown calls).
    pub args: Vec<ArgValue>,
    /// Fields that no argument maps to (e.g. Re-Animator's `full_pathname`, decoded stat
    /// members, `fcntl`'s `lock_*` columns, all fields of unknown record types). Read from the
    /// trace; when writing, an entry whose name is a column of the call's type is stored there
    /// (columns the writer derives from the arguments are computed afterwards and win).
    pub extra: Vec<(String, ExtraValue)>,
}

/// A field value kept verbatim in [`Event::extra`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtraValue {
    /// A nullable field that is null in this record.
    Null,
    /// A DataSeries bool field.
    Bool(bool),
    /// Any DataSeries integer field (byte, int32, int64), widened.
    Int(i64),
    /// Doubles as their bit pattern, so Event stays `Eq`.
    DoubleBits(u64),
    /// A variable32 field's bytes (strings keep whatever NUL the writer stored).
    Bytes(Vec<u8>),
}

impl Event {
    /// A new event for a registry call, with every argument `Absent` and no common fields.
    pub fn new(def: &'static SyscallDef) -> Event {
        Event {
            def: Some(def),
            name: def.trace_name.to_string(),
            unique_id: 0,
            time_called: None,
            time_returned: None,
            time_recorded: None,
            pid: None,
            tid: None,
            ppid: None,
            uid: None,
            gid: None,
            sid: None,
            pgid: None,
            ret: None,
            errno: None,
            buffer_not_captured: false,
            args: vec![ArgValue::Absent; def.args.len()],
            extra: Vec::new(),
        }
    }

    /// The value of the argument named as in the man page (`fd`, `buf`).
    pub fn arg(&self, name: &str) -> Option<&ArgValue> {
        let (i, _) = self.def?.arg(name)?;
        self.args.get(i)
    }

    /// The [`Event::extra`] field `name`, when it holds an integer.
    pub fn extra_int(&self, name: &str) -> Option<i64> {
        self.extra.iter().find(|(n, _)| n == name).and_then(|(_, v)| match v {
            ExtraValue::Int(i) => Some(*i),
            _ => None,
        })
    }

    /// The [`Event::extra`] field `name`, when it holds bytes.
    pub fn extra_bytes(&self, name: &str) -> Option<&[u8]> {
        self.extra.iter().find(|(n, _)| n == name).and_then(|(_, v)| match v {
            ExtraValue::Bytes(b) => Some(b.as_slice()),
            _ => None,
        })
    }

    /// The flags of an open-family call (registry handler `Open`): its `flags` argument,
    /// openat2's `struct open_how` `flags` (its first 8 bytes), creat's
    /// `O_CREAT | O_WRONLY | O_TRUNC`. None for other calls or when not recorded.
    pub fn open_flags(&self) -> Option<i64> {
        let def = self.def?;
        if def.replay.handler() != Some(ra_syscalls::Handler::Open) {
            return None;
        }
        if let Some(f) = def.implied_flags {
            return Some(f);
        }
        if let Some(f) = self.arg("flags").and_then(ArgValue::as_int) {
            return Some(f);
        }
        let how = self.arg("how")?.as_data()?;
        Some(u64::from_le_bytes(how.get(0..8)?.try_into().ok()?) as i64)
    }

    /// The bytes a call that succeeded says it moved (its positive return value), else 0:
    /// how far a copy's in-out offsets advanced.
    pub fn bytes_moved(&self) -> i64 {
        match (self.errno.unwrap_or(0), self.ret) {
            (0, Some(r)) if r > 0 => r,
            _ => 0,
        }
    }

    /// A kernel-side copy's ends as the call found them ([`SyscallDef::copy_ends`]); None for
    /// other calls or when a descriptor is missing. Offsets are those before the call (the
    /// trace keeps the in-out offsets as the kernel wrote them back, after the bytes moved).
    pub fn copy(&self) -> Option<KernelCopy<'_>> {
        let ends = self.def?.copy_ends()?;
        let moved = self.bytes_moved();
        let before = |i: Option<usize>| -> Option<i64> {
            let d = self.args.get(i?)?.as_data()?;
            Some(i64::from_le_bytes(d.get(0..8)?.try_into().ok()?) - moved)
        };
        Some(KernelCopy {
            fd_in: self.args.get(ends.fd_in)?.as_int()? as i32,
            off_in: before(ends.off_in),
            fd_out: self.args.get(ends.fd_out)?.as_int()? as i32,
            off_out: before(ends.off_out),
            moved,
            data: self.extra_bytes(crate::schema::COPIED_DATA),
        })
    }

    /// The descriptor numbers the call's message carried (`SCM_RIGHTS`: the
    /// [`crate::schema::SCM_RIGHTS`] column): the sender's (sendmsg) or the receiver's new
    /// ones (recvmsg). Empty when it carried none or they were not recorded. Only a damaged
    /// or hand-made trace holds more than the kernel passes in one message (253, its
    /// `SCM_MAX_FD`: the rest is left out) or numbers no kernel hands out (negative: left out).
    pub fn scm_rights(&self) -> Vec<i32> {
        const SCM_MAX_FD: usize = 253;
        self.extra_bytes(crate::schema::SCM_RIGHTS).map_or_else(Vec::new, |b| {
            b.chunks_exact(4)
                .take(SCM_MAX_FD)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .filter(|&n| n >= 0)
                .collect()
        })
    }

    /// Set an argument by its man-page name. Returns false when the call has no such argument.
    pub fn set_arg(&mut self, name: &str, v: ArgValue) -> bool {
        match self.def.and_then(|d| d.arg(name)) {
            Some((i, _)) if i < self.args.len() => {
                self.args[i] = v;
                true
            }
            _ => false,
        }
    }

    /// The one form of a vector argument (`writev`'s iovec array, `sendmsg`'s message) that
    /// was not read — a NULL or unreadable array (the kernel fails the call with EFAULT), a
    /// failed call's output: an empty list, the count argument still as the program passed it.
    /// Both recorders' events pass through this, and it is what the trace reads back. (An
    /// array the recorder chose not to read, `--data none`, stays `NotCaptured`.)
    pub fn canonical_vectors(&mut self) {
        let Some(def) = self.def else { return };
        for (a, v) in def.args.iter().zip(self.args.iter_mut()) {
            if a.kind.is_vector() && *v == ArgValue::Absent {
                *v = ArgValue::Iov(Vec::new());
            }
        }
    }

    /// Bytes of captured buffers: data buffers, paths and struct results (`Data`) and the
    /// vectors' data (`Iov`). What the recorders report as "MB of data".
    /// An io_uring request's opcode entry (`io_uring_op` events); None for other events and
    /// opcodes newer than the table.
    pub fn uring_op(&self) -> Option<&'static ra_syscalls::uring::UringOp> {
        let d = self.def?;
        if d.replay.handler() != Some(ra_syscalls::Handler::UringOp) {
            return None;
        }
        ra_syscalls::uring::lookup(self.arg("opcode")?.as_int()?)
    }

    /// An io_uring request on a registered file (`IOSQE_FIXED_FILE`): its `fd` is an index
    /// into the ring's file table, not a descriptor.
    pub fn uring_fixed_file(&self) -> bool {
        self.uring_op().is_some()
            && self.arg("sqe_flags").and_then(ArgValue::as_int).unwrap_or(0)
                & i64::from(ra_syscalls::uring::IOSQE_FIXED_FILE)
                != 0
    }

    /// An `io_uring_register` event's files or buffers (its registry entry's
    /// [`ra_syscalls::Struct::UringRegister`] argument, read by
    /// [`ra_syscalls::uring::register::decode`] with its `opcode` and `nr_args`): None for
    /// other events and opcodes of neither files nor buffers, and for a record whose argument
    /// is not in the trace (before schema 6, not captured, a NULL pointer); `Some(Err)` for
    /// data no recorder writes.
    pub fn uring_registration(
        &self,
    ) -> Option<Result<Option<ra_syscalls::uring::register::Registration>, String>> {
        use ra_syscalls::{ArgKind, Len, Struct};
        let def = self.def?;
        let (data, n) = def.args.iter().zip(&self.args).find_map(|(a, v)| match a.kind {
            ArgKind::InStruct(Struct::UringRegister, Len::Arg(n)) => Some((v, n)),
            _ => None,
        })?;
        let opcode = self.arg("opcode")?.as_int()? as u64;
        let nr_args = self.args.get(n)?.as_int()? as u64;
        ra_syscalls::uring::register::resource(opcode)?;
        match data {
            ArgValue::Data(d) => {
                Some(ra_syscalls::uring::register::decode(opcode, nr_args, Some(d)))
            }
            // An unregister has no argument to read.
            _ if ra_syscalls::uring::register::layout(opcode).is_none() => {
                Some(ra_syscalls::uring::register::decode(opcode, nr_args, None))
            }
            _ => None,
        }
    }

    /// The I/O class of what the event did: its call's, or for an io_uring request its
    /// opcode's (a `write` request is a write).
    pub fn io_class(&self) -> ra_syscalls::IoClass {
        match self.uring_op() {
            Some(op) => op.io_class(),
            None => ra_syscalls::io_class(&self.name),
        }
    }

    /// Bytes of data captured in the arguments: [`ArgValue::Data`] and the captured vectors
    /// of [`ArgValue::Iov`] (hashed and uncaptured buffers count 0; [`Event::extra`] is not
    /// counted). The recorders add it to their summaries' data bytes.
    pub fn data_bytes(&self) -> u64 {
        self.args
            .iter()
            .map(|a| match a {
                ArgValue::Data(d) => d.len() as u64,
                ArgValue::Iov(v) => {
                    v.iter().filter_map(|i| i.data.as_ref()).map(|d| d.len() as u64).sum()
                }
                _ => 0,
            })
            .sum()
    }

    /// The memory this event holds, approximately: its captured bytes (also string arrays
    /// and extra fields) plus a fixed cost per event and per argument. What the recorder's
    /// queues count against their byte budgets.
    pub fn memory_bytes(&self) -> usize {
        let strings: usize = self
            .args
            .iter()
            .map(|a| match a {
                ArgValue::Strings(v) => v.iter().map(|s| s.len() + 24).sum(),
                ArgValue::Iov(v) => v.len() * std::mem::size_of::<IovValue>(),
                _ => 0,
            })
            .sum();
        let extra: usize = self
            .extra
            .iter()
            .map(|(k, v)| k.len() + 48 + if let ExtraValue::Bytes(b) = v { b.len() } else { 0 })
            .sum();
        std::mem::size_of::<Event>()
            + self.name.len()
            + self.args.len() * std::mem::size_of::<ArgValue>()
            + self.data_bytes() as usize
            + strings
            + extra
    }

    /// The call's result, when it succeeded, is a new descriptor: a call whose registry
    /// result is one, or an ioctl whose request opens one
    /// ([`ra_syscalls::flags::ioctl_returns_fd`]).
    pub fn makes_fd(&self) -> bool {
        let Some(def) = self.def else { return false };
        match def.ret {
            ra_syscalls::Ret::Fd => true,
            _ if def.replay.handler() == Some(ra_syscalls::Handler::Ioctl) => self
                .arg("request")
                .and_then(ArgValue::as_int)
                .is_some_and(|r| ra_syscalls::flags::ioctl_returns_fd(r as u64)),
            _ => false,
        }
    }

    /// The call may wait for a lock that another process or thread holds: a blocking
    /// `flock` (neither `LOCK_NB` nor `LOCK_UN`), `fcntl` `F_SETLKW` or `F_OFD_SETLKW`.
    pub fn waits_for_lock(&self) -> bool {
        use ra_syscalls::{flags, Handler};
        let Some(def) = self.def else { return false };
        let int = |n: &str| self.arg(n).and_then(ArgValue::as_int).map(|v| v as u64);
        match def.replay.handler() {
            Some(Handler::Flock) => {
                int("operation").is_some_and(|op| op & (flags::LOCK_NB | flags::LOCK_UN) == 0)
            }
            Some(Handler::Fcntl) => int("cmd")
                .is_some_and(|c| matches!(c & 0xffff_ffff, flags::F_SETLKW | flags::F_OFD_SETLKW)),
            _ => false,
        }
    }

    /// Failed (an errno is recorded).
    pub fn failed(&self) -> bool {
        self.errno.is_some_and(|e| e != 0)
    }

    /// The call has no recorded result: its thread ended inside it (killed, or another
    /// thread's exit_group while it blocked) or the trace ends there. A call that never
    /// returns when it succeeds (execve) counts when it has no return time either.
    pub fn ended_inside(&self) -> bool {
        // A delivered signal is a record, not a call: it has no result and nothing ended.
        if self.def.is_some_and(|d| d.is_signal()) {
            return false;
        }
        let no_return = self.def.is_some_and(|d| d.ret == ra_syscalls::Ret::NoReturn);
        self.ret.is_none()
            && self.errno.is_none_or(|e| e == 0)
            && (!no_return || self.time_returned.is_none())
    }

    /// A record the recorder generated rather than a call the program made: an `exit` with
    /// Re-Animator's `generated` column set, written for a thread killed by a signal between
    /// calls (its `exit_status` is the kernel's wait status, the signal in the low 7 bits).
    pub fn generated(&self) -> bool {
        self.extra.iter().any(|(k, v)| k == "generated" && *v == ExtraValue::Bool(true))
    }

    /// `time_returned - time_called`, when both are known.
    pub fn duration_ns(&self) -> Option<i64> {
        self.time_returned?.checked_sub(self.time_called?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scm_rights_reads_the_column_and_leaves_out_impossible_numbers() {
        let def = ra_syscalls::lookup("recvmsg").unwrap();
        let mut e = Event::new(def);
        assert!(e.scm_rights().is_empty());
        let b: Vec<u8> = [3i32, -1, 70000].iter().flat_map(|n| n.to_le_bytes()).collect();
        // A trailing partial number is not one.
        let b = [b, vec![9, 9]].concat();
        e.extra.push((crate::schema::SCM_RIGHTS.into(), ExtraValue::Bytes(b)));
        assert_eq!(e.scm_rights(), vec![3, 70000]);
        // No more than the kernel passes in one message.
        let many: Vec<u8> = (0..1000i32).flat_map(|n| n.to_le_bytes()).collect();
        e.extra = vec![(crate::schema::SCM_RIGHTS.into(), ExtraValue::Bytes(many))];
        assert_eq!(e.scm_rights(), (0..253).collect::<Vec<i32>>());
    }

    /// A delivered signal has no result, and is no call its thread ended inside: taken for
    /// one, the replay's process model ended the thread at each SIGCHLD, and the shell's next
    /// calls became a new process with an empty descriptor table (27 replay tests failed
    /// when delivered signals were first recorded).
    #[test]
    fn a_signal_record_is_no_call_ended_inside() {
        let mut read = Event::new(ra_syscalls::lookup("read").unwrap());
        assert!(read.ended_inside(), "a call without a result");
        read.ret = Some(0);
        assert!(!read.ended_inside());
        let sig = Event::new(ra_syscalls::lookup(ra_syscalls::SIGNAL_DELIVER).unwrap());
        assert!(sig.ret.is_none() && !sig.ended_inside());
    }

    #[test]
    fn hash_data_digests_buffers_and_leaves_the_rest() {
        let digest = |b: &[u8]| ArgValue::Hashed {
            len: b.len() as u64,
            blake3: *blake3::hash(b).as_bytes(),
        };
        let mut d = ArgValue::data(&b"secret contents"[..]);
        assert!(d.hash_data());
        assert_eq!(d, digest(b"secret contents"));
        // Vectors: their captured bytes concatenated; one without data counts for nothing.
        let iov =
            |b: Option<&'static [u8]>| IovValue { requested: 8, data: b.map(Bytes::from_static) };
        let mut v = ArgValue::Iov(vec![iov(Some(b"secret ")), iov(None), iov(Some(b"contents"))]);
        assert!(v.hash_data());
        assert_eq!(v, digest(b"secret contents"));
        for other in [ArgValue::Absent, ArgValue::Int(3), ArgValue::NotCaptured, digest(b"x")] {
            let mut o = other.clone();
            assert!(!o.hash_data());
            assert_eq!(o, other);
        }
    }
}
