//! The byte layouts shared with the BPF program: `bpf/capture.h`, mirrored field by field.
//! Records are parsed with explicit offsets (no casts of ring memory); the tests check the
//! sizes against the skeleton's generated types, so a change on one side fails here.

// The whole contract is mirrored, constants only the C side uses included.
#![allow(dead_code)]

/// Rule table size: x86_64 syscall numbers below this.
pub const MAX_NR: usize = 512;
pub const NARGS: usize = 6;
/// The extra slot: a struct an integer argument points to (fcntl's `struct flock`).
pub const XARG: usize = 6;
pub const NSLOTS: usize = 7;
pub const LOST_MMAP_READ: u32 = MAX_NR as u32;
pub const LOST_MMAP_WRITE: u32 = MAX_NR as u32 + 1;
/// Pages that could not be followed (a fault whose mapping could not be looked up, a large
/// folio that could not be found, a full table of written pages).
pub const LOST_MMAP_READ_UNSEEN: u32 = MAX_NR as u32 + 2;
pub const LOST_MMAP_WRITE_UNSEEN: u32 = MAX_NR as u32 + 3;
/// io_uring operations whose record did not fit the ring.
pub const LOST_URING: u32 = MAX_NR as u32 + 4;
/// signal_deliver records that found the ring full.
pub const LOST_SIGNAL: u32 = MAX_NR as u32 + 5;
pub const LOST_SLOTS: u32 = MAX_NR as u32 + 6;

pub const AK_SCALAR: u8 = 0;
pub const AK_STR: u8 = 1;
pub const AK_BUF: u8 = 2;
pub const AK_IOV: u8 = 3;
pub const AK_MSG: u8 = 4;
pub const AK_MMSG: u8 = 5;
pub const AK_STRV: u8 = 6;
pub const AK_DEREF32: u8 = 7;

pub const LK_ARG: u8 = 1;
pub const LK_RET: u8 = 2;
pub const LK_FIXED: u8 = 3;
pub const LK_RET_TIMES: u8 = 4;
pub const LK_DEREF: u8 = 5;

pub const AF_ENTRY: u8 = 1;
pub const AF_OUT: u8 = 2;
pub const AF_BULK: u8 = 4;
pub const AF_TRIM_RET: u8 = 8;
/// The argument is a C `int`-sized value: the kernel reads the low 32 bits of its register, so
/// the program keeps only those (lengths, counts and command words it evaluates included).
pub const AF_NARROW: u8 = 16;

pub const RF_CAPTURE: u8 = 1;
pub const RF_NO_RETURN: u8 = 2;
pub const RF_XARG: u8 = 4;
pub const RF_FLUSH_RANGE: u8 = 8;
pub const RF_FLUSH_ALL: u8 = 16;
/// With RF_XARG: the condition is "the low 32 bits of the argument equal either half of
/// `xarg_mask`" (ioctl requests) instead of a bit number below 64.
pub const RF_XARG_EQ: u8 = 32;
/// With RF_XARG: the extra is the control data of the `struct msghdr` the argument points to
/// (`msg_controllen` bytes at `msg_control`, at most `xarg_size`), copied when the call
/// succeeded; no condition.
pub const RF_XARG_MSG: u8 = 128;
/// A kernel-side copy: in throttle mode the thread is stopped at a successful exit and the
/// call record says [`CF_READBACK`].
pub const RF_READBACK: u8 = 64;

pub const RK_CALL: u32 = 1;
pub const RK_DATA: u32 = 2;
pub const RK_DEFER: u32 = 3;
pub const RK_FORK: u32 = 4;
pub const RK_EXIT: u32 = 5;
pub const RK_PAGE: u32 = 6;
pub const RK_STOP: u32 = 7;
/// A call and its one data chunk in one record: `rec_call`, then an RK_DATA record.
pub const RK_CALL1: u32 = 8;
/// io_uring: a request's SQE as the kernel read it (`struct rec_uring`).
pub const RK_URING_SUBMIT: u32 = 10;
/// io_uring: its CQE (`struct rec_uring`).
pub const RK_URING_COMPLETE: u32 = 11;
/// io_uring: a chunk of a request's data (`struct rec_uring_data` and the bytes).
pub const RK_URING_DATA: u32 = 12;

/// `struct rec_uring.flags`.
pub const UF_SQPOLL: u32 = 1;
pub const UF_NO_MM: u32 = 2;
pub const UF_DATA_LOST: u32 = 4;
pub const UF_NO_SUBMIT: u32 = 8;
pub const UF_BUF_SELECT: u32 = 16;
pub const UF_MORE: u32 = 32;

/// `struct rec_uring`: 88 bytes of fields, then the 64-byte SQE.
pub const REC_URING_SIZE: usize = 152;
/// `struct rec_uring_data`.
pub const REC_URING_DATA_SIZE: usize = 32;
/// A signal delivered to a target thread (`struct rec_signal`).
pub const RK_SIGNAL: u32 = 9;
/// `rec_signal.flags`: ignored as it was sent, never delivered (a traced thread stops for it).
pub const SG_IGNORED: u32 = 1;
/// `rec_signal.flags`: fatal as it was sent; the kernel ends the group (each thread SIGKILL).
pub const SG_FATAL: u32 = 2;

pub const PG_READ: u32 = 1;
pub const PG_WRITE: u32 = 2;
pub const PG_FAULT: u32 = 4;
pub const PG_NOT_CAPTURED: u32 = 8;

pub const DF_END: u8 = 1;
pub const DF_FAULT: u8 = 2;
pub const DF_RESET: u8 = 4;
pub const DF_FLAT: u8 = 8;
/// The exec's file name as the kernel holds it (`bprm->filename`): the entry copy faulted.
pub const DF_BPRM: u8 = 16;
/// RK_DEFER of a string that was not paged in: read the NUL-terminated string at `addr`, at
/// most `len` bytes with its NUL.
pub const DF_STR: u8 = 32;

pub const CF_NO_RETURN: u32 = 1;
/// The thread is being stopped (SIGSTOP) for user space to read back the bytes a kernel-side
/// copy moved ([`crate::common::add_copied_data`]); it counts as one deferral.
pub const CF_READBACK: u32 = 2;

pub const ST_NONE: u8 = 0;
pub const ST_OK: u8 = 1;
pub const ST_ABSENT: u8 = 2;
pub const ST_NOT_CAPTURED: u8 = 3;
pub const ST_FAULT: u8 = 4;
pub const ST_TRUNC: u8 = 5;
pub const ST_UNKNOWN_LEN: u8 = 6;

/// `struct arg_rule`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArgRule {
    pub kind: u8,
    pub len_kind: u8,
    pub len_arg: u8,
    pub flags: u8,
    /// LK_FIXED / LK_RET_TIMES: bytes or element size; AK_STR(V): the maximum string length.
    pub size: u32,
}

/// `struct syscall_rule`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyscallRule {
    pub flags: u8,
    pub xarg: u8,
    pub xarg_cond: u8,
    pub xarg_size: u16,
    /// Bit i: argument i is copied at sys_enter / sys_exit (see [`SyscallRule::with_masks`]).
    pub entry_mask: u8,
    pub exit_mask: u8,
    /// Bit i: argument i is bulk data (AF_BULK), skipped with `--data none`.
    pub bulk_mask: u8,
    pub xarg_mask: u64,
    pub args: [ArgRule; NARGS],
}

pub const SYSCALL_RULE_SIZE: usize = 64;

impl SyscallRule {
    /// Derive `entry_mask` / `exit_mask` from the argument rules.
    pub fn with_masks(mut self) -> SyscallRule {
        self.entry_mask = 0;
        self.exit_mask = 0;
        self.bulk_mask = 0;
        for (i, a) in self.args.iter().enumerate() {
            if a.kind == AK_SCALAR {
                continue;
            }
            if a.flags & AF_BULK != 0 {
                self.bulk_mask |= 1 << i;
            }
            if a.flags & AF_ENTRY != 0 {
                self.entry_mask |= 1 << i;
            } else {
                self.exit_mask |= 1 << i;
            }
        }
        self
    }

    /// The bytes of the map value.
    pub fn to_bytes(self) -> [u8; SYSCALL_RULE_SIZE] {
        let mut b = [0u8; SYSCALL_RULE_SIZE];
        b[0] = self.flags;
        b[1] = self.xarg;
        b[2] = self.xarg_cond;
        b[3] = self.bulk_mask;
        b[4..6].copy_from_slice(&self.xarg_size.to_le_bytes());
        b[6] = self.entry_mask;
        b[7] = self.exit_mask;
        b[8..16].copy_from_slice(&self.xarg_mask.to_le_bytes());
        for (i, a) in self.args.iter().enumerate() {
            let o = 16 + 8 * i;
            b[o] = a.kind;
            b[o + 1] = a.len_kind;
            b[o + 2] = a.len_arg;
            b[o + 3] = a.flags;
            b[o + 4..o + 8].copy_from_slice(&a.size.to_le_bytes());
        }
        b
    }
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

/// `struct rec_call`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallRec {
    pub tid: u32,
    pub seq: u32,
    pub entry_tid: u32,
    pub tgid: u32,
    pub ppid: u32,
    pub uid: u32,
    pub gid: u32,
    pub pgid: u32,
    pub sid: u32,
    pub nr: u32,
    pub flags: u32,
    pub ts_enter: u64,
    pub ts_exit: u64,
    pub ret: i64,
    pub args: [u64; NARGS],
    pub aux: [u64; NARGS],
    pub nvec: [u32; NSLOTS],
    pub status: [u8; NSLOTS],
    pub nrec: u32,
    pub added_pages: u32,
}

pub const REC_CALL_SIZE: usize = 216;
pub const REC_DATA_SIZE: usize = 56;
pub const REC_TASK_SIZE: usize = 24;
pub const REC_PAGE_SIZE: usize = 56;
pub const REC_SIGNAL_SIZE: usize = 72;

/// `struct rec_signal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignalRec<'a> {
    pub tid: u32,
    pub tgid: u32,
    pub flags: u32,
    pub ts: u64,
    /// The kernel's `struct kernel_siginfo`.
    pub info: &'a [u8],
}

/// `struct rec_page` with its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRec<'a> {
    pub tid: u32,
    pub tgid: u32,
    pub flags: u32,
    pub ts: u64,
    pub addr: u64,
    pub off: u64,
    pub ino: u64,
    pub dev: u32,
    pub payload: &'a [u8],
}

/// `struct rec_data` with its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRec<'a> {
    pub tid: u32,
    pub tgid: u32,
    pub seq: u32,
    pub slot: u8,
    pub flags: u8,
    pub seg: u16,
    pub vec: u32,
    pub len: u32,
    pub seg_len: u64,
    pub off: u64,
    pub addr: u64,
    /// RK_DATA: the `len` bytes; RK_DEFER: empty.
    pub payload: &'a [u8],
}

/// `struct rec_task`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskRec {
    pub tid: u32,
    pub tgid: u32,
    /// RK_FORK: the new thread; RK_EXIT: the task's exit code (a wait status).
    pub child_tid: u32,
    /// RK_FORK: the new thread's process; RK_EXIT: 1 when the thread ended inside a call
    /// (recorded as that call, without a result).
    pub child_tgid: u32,
    pub group_dead: bool,
}

/// `struct rec_uring`: an io_uring request's submission or completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UringRec {
    pub complete: bool,
    pub tid: u32,
    pub tgid: u32,
    pub flags: u32,
    pub ts: u64,
    pub ctx: u64,
    pub serial: u64,
    pub enter_tid: u32,
    pub enter_seq: u32,
    pub res: i32,
    pub cflags: u32,
    pub user_data: u64,
    pub opcode: u32,
    pub data_len: u32,
    pub ino: u64,
    pub dev: u32,
    pub ring_flags: u32,
    pub sqe: [u8; 64],
}

/// `struct rec_uring_data` and its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UringDataRec<'a> {
    pub tid: u32,
    pub tgid: u32,
    pub serial: u64,
    pub off: u64,
    pub payload: &'a [u8],
}

/// One ring record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    Call(Box<CallRec>),
    /// RK_CALL1: the call's one data chunk, then the call.
    CallData(Box<CallRec>, DataRec<'a>),
    Data(DataRec<'a>),
    Defer(DataRec<'a>),
    Fork(TaskRec),
    Exit(TaskRec),
    /// Throttle: a process was just stopped.
    Stop(TaskRec),
    Page(PageRec<'a>),
    Uring(Box<UringRec>),
    UringData(UringDataRec<'a>),
    Signal(SignalRec<'a>),
}

/// The fields of a `rec_call` at the start of `b` (at least REC_CALL_SIZE bytes).
fn parse_call(b: &[u8]) -> CallRec {
    let mut c = CallRec {
        tid: u32_at(b, 4),
        seq: u32_at(b, 8),
        entry_tid: u32_at(b, 12),
        tgid: u32_at(b, 16),
        ppid: u32_at(b, 20),
        uid: u32_at(b, 24),
        gid: u32_at(b, 28),
        pgid: u32_at(b, 32),
        sid: u32_at(b, 36),
        nr: u32_at(b, 40),
        flags: u32_at(b, 44),
        ts_enter: u64_at(b, 48),
        ts_exit: u64_at(b, 56),
        ret: u64_at(b, 64) as i64,
        nrec: u32_at(b, 204),
        added_pages: u32_at(b, 208),
        ..CallRec::default()
    };
    for i in 0..NARGS {
        c.args[i] = u64_at(b, 72 + 8 * i);
        c.aux[i] = u64_at(b, 120 + 8 * i);
    }
    for i in 0..NSLOTS {
        c.nvec[i] = u32_at(b, 168 + 4 * i);
        c.status[i] = b[196 + i];
    }
    c
}

/// An RK_DATA / RK_DEFER record at the start of `b` (at least REC_DATA_SIZE bytes); `None`
/// when its payload is cut short.
fn parse_data(b: &[u8], k: u32) -> Option<DataRec<'_>> {
    let len = u32_at(b, 24);
    let payload =
        if k == RK_DATA { b.get(REC_DATA_SIZE..REC_DATA_SIZE + len as usize)? } else { &[][..] };
    let d = DataRec {
        tid: u32_at(b, 4),
        tgid: u32_at(b, 8),
        seq: u32_at(b, 12),
        slot: b[16],
        flags: b[17],
        seg: u16::from_le_bytes([b[18], b[19]]),
        vec: u32_at(b, 20),
        len,
        seg_len: u64_at(b, 32),
        off: u64_at(b, 40),
        addr: u64_at(b, 48),
        payload,
    };
    Some(d)
}

/// Parse one ring record; `None` for a record this version does not know or a short one
/// (which would be a bug in the BPF program: the caller counts them).
pub fn parse(b: &[u8]) -> Option<Record<'_>> {
    if b.len() < 4 {
        return None;
    }
    match u32_at(b, 0) {
        RK_CALL if b.len() >= REC_CALL_SIZE => Some(Record::Call(Box::new(parse_call(b)))),
        RK_CALL1 if b.len() >= REC_CALL_SIZE + REC_DATA_SIZE => {
            let d = parse_data(&b[REC_CALL_SIZE..], RK_DATA)?;
            Some(Record::CallData(Box::new(parse_call(b)), d))
        }
        k @ (RK_DATA | RK_DEFER) if b.len() >= REC_DATA_SIZE => {
            let d = parse_data(b, k)?;
            Some(if k == RK_DATA { Record::Data(d) } else { Record::Defer(d) })
        }
        RK_PAGE if b.len() >= REC_PAGE_SIZE => {
            let len = u32_at(b, 52) as usize;
            Some(Record::Page(PageRec {
                tid: u32_at(b, 4),
                tgid: u32_at(b, 8),
                flags: u32_at(b, 12),
                ts: u64_at(b, 16),
                addr: u64_at(b, 24),
                off: u64_at(b, 32),
                ino: u64_at(b, 40),
                dev: u32_at(b, 48),
                payload: b.get(REC_PAGE_SIZE..REC_PAGE_SIZE + len)?,
            }))
        }
        k @ (RK_URING_SUBMIT | RK_URING_COMPLETE) if b.len() >= REC_URING_SIZE => {
            Some(Record::Uring(Box::new(UringRec {
                complete: k == RK_URING_COMPLETE,
                tid: u32_at(b, 4),
                tgid: u32_at(b, 8),
                flags: u32_at(b, 12),
                ts: u64_at(b, 16),
                ctx: u64_at(b, 24),
                serial: u64_at(b, 32),
                enter_tid: u32_at(b, 40),
                enter_seq: u32_at(b, 44),
                res: u32_at(b, 48) as i32,
                cflags: u32_at(b, 52),
                user_data: u64_at(b, 56),
                opcode: u32_at(b, 64),
                data_len: u32_at(b, 68),
                ino: u64_at(b, 72),
                dev: u32_at(b, 80),
                ring_flags: u32_at(b, 84),
                sqe: b[88..152].try_into().ok()?,
            })))
        }
        RK_URING_DATA if b.len() >= REC_URING_DATA_SIZE => {
            let len = u32_at(b, 12) as usize;
            Some(Record::UringData(UringDataRec {
                tid: u32_at(b, 4),
                tgid: u32_at(b, 8),
                serial: u64_at(b, 16),
                off: u64_at(b, 24),
                payload: b.get(REC_URING_DATA_SIZE..REC_URING_DATA_SIZE + len)?,
            }))
        }
        RK_SIGNAL if b.len() >= REC_SIGNAL_SIZE => Some(Record::Signal(SignalRec {
            tid: u32_at(b, 4),
            tgid: u32_at(b, 8),
            flags: u32_at(b, 12),
            ts: u64_at(b, 16),
            info: &b[24..REC_SIGNAL_SIZE],
        })),
        k @ (RK_FORK | RK_EXIT | RK_STOP) if b.len() >= REC_TASK_SIZE => {
            let t = TaskRec {
                tid: u32_at(b, 4),
                tgid: u32_at(b, 8),
                child_tid: u32_at(b, 12),
                child_tgid: u32_at(b, 16),
                group_dead: u32_at(b, 20) != 0,
            };
            Some(match k {
                RK_FORK => Record::Fork(t),
                RK_EXIT => Record::Exit(t),
                _ => Record::Stop(t),
            })
        }
        _ => None,
    }
}

/// `struct lost_slot`: 4 u64.
pub const LOST_SLOT_SIZE: usize = 32;

/// `struct lost_slot`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LostSlot {
    pub count: u64,
    pub bytes: u64,
    pub first_ns: u64,
    pub last_ns: u64,
}

impl LostSlot {
    pub fn parse(b: &[u8]) -> LostSlot {
        if b.len() < LOST_SLOT_SIZE {
            return LostSlot::default();
        }
        LostSlot {
            count: u64_at(b, 0),
            bytes: u64_at(b, 8),
            first_ns: u64_at(b, 16),
            last_ns: u64_at(b, 24),
        }
    }
}

/// `struct stats`: 16 u64 counters, summed over CPUs by the caller.
pub const STATS_SIZE: usize = 128;

/// `struct stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub deferred: u64,
    pub deferred_bytes: u64,
    pub faults: u64,
    pub lost_calls: u64,
    pub throttle_stops: u64,
    pub no_storage: u64,
    pub pages: u64,
    pub pages_unclassified: u64,
    pub page_walks: u64,
    pub pages_cached_vma: u64,
    pub inputs_recovered: u64,
    pub pages_folio: u64,
    pub pages_retried: u64,
}

impl Stats {
    /// Add one CPU's counters.
    pub fn add(&mut self, b: &[u8]) {
        if b.len() < STATS_SIZE {
            return;
        }
        let f = |i: usize| u64_at(b, 8 * i);
        self.deferred += f(0);
        self.deferred_bytes += f(1);
        self.faults += f(2);
        self.lost_calls += f(3);
        self.throttle_stops += f(4);
        self.no_storage += f(5);
        self.pages += f(6);
        self.pages_unclassified += f(7);
        self.page_walks += f(8);
        self.pages_cached_vma += f(9);
        self.inputs_recovered += f(10);
        self.pages_folio += f(11);
        self.pages_retried += f(12);
    }
}

#[cfg(test)]
mod tests {
    use super::super::skel::types;
    use super::*;

    #[test]
    fn parses_a_signal_record() {
        let mut b = vec![0u8; REC_SIGNAL_SIZE];
        b[0..4].copy_from_slice(&RK_SIGNAL.to_le_bytes());
        b[4..8].copy_from_slice(&7u32.to_le_bytes());
        b[8..12].copy_from_slice(&5u32.to_le_bytes());
        b[12..16].copy_from_slice(&SG_IGNORED.to_le_bytes());
        b[16..24].copy_from_slice(&99u64.to_le_bytes());
        b[24..28].copy_from_slice(&17i32.to_le_bytes());
        let Some(Record::Signal(r)) = parse(&b) else { panic!("not parsed as RK_SIGNAL") };
        assert_eq!((r.tid, r.tgid, r.flags, r.ts, r.info.len(), r.info[0]), (7, 5, 1, 99, 48, 17));
        assert!(parse(&b[..REC_SIGNAL_SIZE - 1]).is_none(), "short");
    }

    #[test]
    fn sizes_match_the_bpf_program() {
        assert_eq!(std::mem::size_of::<types::syscall_rule>(), SYSCALL_RULE_SIZE);
        assert_eq!(std::mem::size_of::<types::rec_data>(), REC_DATA_SIZE);
        assert_eq!(std::mem::size_of::<types::lost_slot>(), LOST_SLOT_SIZE);
        assert_eq!(std::mem::size_of::<types::stats>(), STATS_SIZE);
    }

    #[test]
    fn a_call_with_its_chunk_parses_as_both() {
        let mut b = vec![0u8; REC_CALL_SIZE + REC_DATA_SIZE];
        b[0..4].copy_from_slice(&RK_CALL1.to_le_bytes());
        b[4..8].copy_from_slice(&77u32.to_le_bytes()); // tid
        b[8..12].copy_from_slice(&5u32.to_le_bytes()); // seq
        b[40..44].copy_from_slice(&18u32.to_le_bytes()); // nr: pwrite64
        b[64..72].copy_from_slice(&3i64.to_le_bytes()); // ret
        b[204..208].copy_from_slice(&1u32.to_le_bytes()); // nrec
        let d = REC_CALL_SIZE;
        b[d..d + 4].copy_from_slice(&RK_DATA.to_le_bytes());
        b[d + 4..d + 8].copy_from_slice(&77u32.to_le_bytes());
        b[d + 12..d + 16].copy_from_slice(&5u32.to_le_bytes());
        b[d + 16] = 1; // slot
        b[d + 24..d + 28].copy_from_slice(&3u32.to_le_bytes()); // len
        b.extend_from_slice(b"abc");
        let Some(Record::CallData(c, chunk)) = parse(&b) else { panic!("not parsed as RK_CALL1") };
        assert_eq!((c.tid, c.seq, c.nr, c.ret, c.nrec), (77, 5, 18, 3, 1));
        assert_eq!((chunk.tid, chunk.seq, chunk.slot, chunk.payload), (77, 5, 1, &b"abc"[..]));
        // A payload cut short is refused, not read past the record.
        assert!(parse(&b[..b.len() - 1]).is_none());
    }

    #[test]
    fn rule_bytes_put_fields_where_the_c_struct_has_them() {
        let mut r = SyscallRule {
            flags: RF_CAPTURE | RF_XARG,
            xarg: 2,
            xarg_cond: 1,
            xarg_size: 32,
            xarg_mask: 1 << 5,
            ..SyscallRule::default()
        };
        r.args[5] = ArgRule { kind: AK_BUF, len_kind: LK_ARG, len_arg: 2, flags: AF_OUT, size: 7 };
        let b = r.to_bytes();
        assert_eq!(&b[..4], &[RF_CAPTURE | RF_XARG, 2, 1, 0]);
        assert_eq!(u16::from_le_bytes([b[4], b[5]]), 32);
        let m = SyscallRule { args: r.args, ..SyscallRule::default() }.with_masks();
        assert_eq!((m.entry_mask, m.exit_mask), (0, 1 << 5));
        assert_eq!(u64_at(&b, 8), 32);
        assert_eq!(&b[56..60], &[AK_BUF, LK_ARG, 2, AF_OUT]);
        assert_eq!(u32_at(&b, 60), 7);
    }

    #[test]
    fn records_parse_and_short_ones_are_refused() {
        let mut b = vec![0u8; REC_DATA_SIZE + 3];
        b[0..4].copy_from_slice(&RK_DATA.to_le_bytes());
        b[4..8].copy_from_slice(&77u32.to_le_bytes());
        b[16] = 2;
        b[17] = DF_END;
        b[24..28].copy_from_slice(&3u32.to_le_bytes());
        b[56..59].copy_from_slice(b"abc");
        match parse(&b) {
            Some(Record::Data(d)) => {
                assert_eq!((d.tid, d.slot, d.flags, d.payload), (77, 2, DF_END, &b"abc"[..]));
            }
            r => panic!("{r:?}"),
        }
        assert_eq!(parse(&b[..REC_DATA_SIZE + 2]), None, "payload shorter than len");
        assert_eq!(parse(&[1, 0, 0, 0, 9]), None, "short call record");
        assert_eq!(parse(&[99, 0, 0, 0]), None, "unknown kind");
    }
}
