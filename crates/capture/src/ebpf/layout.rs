//! The byte layouts shared with the BPF program, as `bpf/capture.h` defines them: its
//! `#define`s are this module's constants (build.rs generates them from the header), and records
//! are parsed at the offsets of the Rust types libbpf-cargo generates from its structs
//! (`at!`: the offset of a field, which must have the type the parser reads, else the build
//! fails). Nothing of the header is retyped here; the tests check that a record laid out by the
//! generated type parses into its fields, and that the rule bytes are the generated type's.
//! (Records are parsed from bytes, without casts of ring memory.)

// The whole contract is generated, constants only the C side uses included.
#![allow(dead_code)]

use super::skel::types;

include!(concat!(env!("OUT_DIR"), "/syscall_nr_h.rs"));
include!(concat!(env!("OUT_DIR"), "/capture_h.rs"));

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

pub const SYSCALL_RULE_SIZE: usize = std::mem::size_of::<types::syscall_rule>();

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
        b[at!(syscall_rule.flags: u8)] = self.flags;
        b[at!(syscall_rule.xarg: u8)] = self.xarg;
        b[at!(syscall_rule.xarg_cond: u8)] = self.xarg_cond;
        b[at!(syscall_rule.bulk_mask: u8)] = self.bulk_mask;
        put(&mut b, at!(syscall_rule.xarg_size: u16), &self.xarg_size.to_le_bytes());
        b[at!(syscall_rule.entry_mask: u8)] = self.entry_mask;
        b[at!(syscall_rule.exit_mask: u8)] = self.exit_mask;
        put(&mut b, at!(syscall_rule.xarg_mask: u64), &self.xarg_mask.to_le_bytes());
        let args = at!(syscall_rule.args: [types::arg_rule; NARGS]);
        for (i, a) in self.args.iter().enumerate() {
            let o = args + i * std::mem::size_of::<types::arg_rule>();
            b[o + at!(arg_rule.kind: u8)] = a.kind;
            b[o + at!(arg_rule.len_kind: u8)] = a.len_kind;
            b[o + at!(arg_rule.len_arg: u8)] = a.len_arg;
            b[o + at!(arg_rule.flags: u8)] = a.flags;
            put(&mut b, o + at!(arg_rule.size: u32), &a.size.to_le_bytes());
        }
        b
    }
}

fn put(b: &mut [u8], o: usize, v: &[u8]) {
    b[o..o + v.len()].copy_from_slice(v);
}
fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
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

pub const REC_CALL_SIZE: usize = std::mem::size_of::<types::rec_call>();
pub const REC_DATA_SIZE: usize = std::mem::size_of::<types::rec_data>();
pub const REC_TASK_SIZE: usize = std::mem::size_of::<types::rec_task>();
pub const REC_PAGE_SIZE: usize = std::mem::size_of::<types::rec_page>();
pub const REC_SIGNAL_SIZE: usize = std::mem::size_of::<types::rec_signal>();
/// `struct rec_uring` (its fields, then the 64-byte SQE).
pub const REC_URING_SIZE: usize = std::mem::size_of::<types::rec_uring>();
pub const REC_URING_DATA_SIZE: usize = std::mem::size_of::<types::rec_uring_data>();

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
    /// RK_URING_STR: a string of a request (`off`: which, `URS_*`).
    UringStr(UringDataRec<'a>),
    Signal(SignalRec<'a>),
}

/// The fields of a `rec_call` at the start of `b` (at least REC_CALL_SIZE bytes).
fn parse_call(b: &[u8]) -> CallRec {
    let mut c = CallRec {
        tid: u32_at(b, at!(rec_call.tid: u32)),
        seq: u32_at(b, at!(rec_call.seq: u32)),
        entry_tid: u32_at(b, at!(rec_call.entry_tid: u32)),
        tgid: u32_at(b, at!(rec_call.tgid: u32)),
        ppid: u32_at(b, at!(rec_call.ppid: u32)),
        uid: u32_at(b, at!(rec_call.uid: u32)),
        gid: u32_at(b, at!(rec_call.gid: u32)),
        pgid: u32_at(b, at!(rec_call.pgid: u32)),
        sid: u32_at(b, at!(rec_call.sid: u32)),
        nr: u32_at(b, at!(rec_call.nr: u32)),
        flags: u32_at(b, at!(rec_call.flags: u32)),
        ts_enter: u64_at(b, at!(rec_call.ts_enter: u64)),
        ts_exit: u64_at(b, at!(rec_call.ts_exit: u64)),
        ret: u64_at(b, at!(rec_call.ret: i64)) as i64,
        nrec: u32_at(b, at!(rec_call.nrec: u32)),
        added_pages: u32_at(b, at!(rec_call.added_pages: u32)),
        ..CallRec::default()
    };
    let (args, aux) = (at!(rec_call.args: [u64; NARGS]), at!(rec_call.aux: [u64; NARGS]));
    for i in 0..NARGS {
        c.args[i] = u64_at(b, args + 8 * i);
        c.aux[i] = u64_at(b, aux + 8 * i);
    }
    let (nvec, status) = (at!(rec_call.nvec: [u32; NSLOTS]), at!(rec_call.status: [u8; NSLOTS]));
    for i in 0..NSLOTS {
        c.nvec[i] = u32_at(b, nvec + 4 * i);
        c.status[i] = b[status + i];
    }
    c
}

/// An RK_DATA / RK_DEFER record at the start of `b` (at least REC_DATA_SIZE bytes); `None`
/// when its payload is cut short.
fn parse_data(b: &[u8], k: u32) -> Option<DataRec<'_>> {
    let len = u32_at(b, at!(rec_data.len: u32));
    let payload =
        if k == RK_DATA { b.get(REC_DATA_SIZE..REC_DATA_SIZE + len as usize)? } else { &[][..] };
    let d = DataRec {
        tid: u32_at(b, at!(rec_data.tid: u32)),
        tgid: u32_at(b, at!(rec_data.tgid: u32)),
        seq: u32_at(b, at!(rec_data.seq: u32)),
        slot: b[at!(rec_data.slot: u8)],
        flags: b[at!(rec_data.flags: u8)],
        seg: u16_at(b, at!(rec_data.seg: u16)),
        vec: u32_at(b, at!(rec_data.vec: u32)),
        len,
        seg_len: u64_at(b, at!(rec_data.seg_len: u64)),
        off: u64_at(b, at!(rec_data.off: u64)),
        addr: u64_at(b, at!(rec_data.addr: u64)),
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
    // Every record starts with its kind (the C structs' first field).
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
            let len = u32_at(b, at!(rec_page.len: u32)) as usize;
            Some(Record::Page(PageRec {
                tid: u32_at(b, at!(rec_page.tid: u32)),
                tgid: u32_at(b, at!(rec_page.tgid: u32)),
                flags: u32_at(b, at!(rec_page.flags: u32)),
                ts: u64_at(b, at!(rec_page.ts: u64)),
                addr: u64_at(b, at!(rec_page.addr: u64)),
                off: u64_at(b, at!(rec_page.off: u64)),
                ino: u64_at(b, at!(rec_page.ino: u64)),
                dev: u32_at(b, at!(rec_page.dev: u32)),
                payload: b.get(REC_PAGE_SIZE..REC_PAGE_SIZE + len)?,
            }))
        }
        k @ (RK_URING_SUBMIT | RK_URING_COMPLETE) if b.len() >= REC_URING_SIZE => {
            Some(Record::Uring(Box::new(UringRec {
                complete: k == RK_URING_COMPLETE,
                tid: u32_at(b, at!(rec_uring.tid: u32)),
                tgid: u32_at(b, at!(rec_uring.tgid: u32)),
                flags: u32_at(b, at!(rec_uring.flags: u32)),
                ts: u64_at(b, at!(rec_uring.ts: u64)),
                ctx: u64_at(b, at!(rec_uring.ctx: u64)),
                serial: u64_at(b, at!(rec_uring.serial: u64)),
                enter_tid: u32_at(b, at!(rec_uring.enter_tid: u32)),
                enter_seq: u32_at(b, at!(rec_uring.enter_seq: u32)),
                res: u32_at(b, at!(rec_uring.res: i32)) as i32,
                cflags: u32_at(b, at!(rec_uring.cflags: u32)),
                user_data: u64_at(b, at!(rec_uring.user_data: u64)),
                opcode: u32_at(b, at!(rec_uring.opcode: u32)),
                data_len: u32_at(b, at!(rec_uring.data_len: u32)),
                ino: u64_at(b, at!(rec_uring.ino: u64)),
                dev: u32_at(b, at!(rec_uring.dev: u32)),
                ring_flags: u32_at(b, at!(rec_uring.ring_flags: u32)),
                sqe: b.get(at!(rec_uring.sqe: [u8; 64])..)?.get(..64)?.try_into().ok()?,
            })))
        }
        k @ (RK_URING_DATA | RK_URING_STR) if b.len() >= REC_URING_DATA_SIZE => {
            let len = u32_at(b, at!(rec_uring_data.len: u32)) as usize;
            let d = UringDataRec {
                tid: u32_at(b, at!(rec_uring_data.tid: u32)),
                tgid: u32_at(b, at!(rec_uring_data.tgid: u32)),
                serial: u64_at(b, at!(rec_uring_data.serial: u64)),
                off: u64_at(b, at!(rec_uring_data.off: u64)),
                payload: b.get(REC_URING_DATA_SIZE..REC_URING_DATA_SIZE + len)?,
            };
            if k == RK_URING_STR {
                if d.off > u64::from(URS_HOW) || len > URS_MAX as usize {
                    return None;
                }
                return Some(Record::UringStr(d));
            }
            Some(Record::UringData(d))
        }
        RK_SIGNAL if b.len() >= REC_SIGNAL_SIZE => Some(Record::Signal(SignalRec {
            tid: u32_at(b, at!(rec_signal.tid: u32)),
            tgid: u32_at(b, at!(rec_signal.tgid: u32)),
            flags: u32_at(b, at!(rec_signal.flags: u32)),
            ts: u64_at(b, at!(rec_signal.ts: u64)),
            info: b.get(at!(rec_signal.info: [u8; 48])..)?.get(..48)?,
        })),
        k @ (RK_FORK | RK_EXIT | RK_STOP) if b.len() >= REC_TASK_SIZE => {
            let t = TaskRec {
                tid: u32_at(b, at!(rec_task.tid: u32)),
                tgid: u32_at(b, at!(rec_task.tgid: u32)),
                child_tid: u32_at(b, at!(rec_task.child_tid: u32)),
                child_tgid: u32_at(b, at!(rec_task.child_tgid: u32)),
                group_dead: u32_at(b, at!(rec_task.group_dead: u32)) != 0,
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

/// `struct lost_slot`.
pub const LOST_SLOT_SIZE: usize = std::mem::size_of::<types::lost_slot>();

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
            count: u64_at(b, at!(lost_slot.count: u64)),
            bytes: u64_at(b, at!(lost_slot.bytes: u64)),
            first_ns: u64_at(b, at!(lost_slot.first_ns: u64)),
            last_ns: u64_at(b, at!(lost_slot.last_ns: u64)),
        }
    }
}

/// `struct stats`: u64 counters, summed over CPUs by the caller.
pub const STATS_SIZE: usize = std::mem::size_of::<types::stats>();

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
        let f = |o: usize| u64_at(b, o);
        self.deferred += f(at!(stats.deferred: u64));
        self.deferred_bytes += f(at!(stats.deferred_bytes: u64));
        self.faults += f(at!(stats.faults: u64));
        self.lost_calls += f(at!(stats.lost_calls: u64));
        self.throttle_stops += f(at!(stats.throttle_stops: u64));
        self.no_storage += f(at!(stats.no_storage: u64));
        self.pages += f(at!(stats.pages: u64));
        self.pages_unclassified += f(at!(stats.pages_unclassified: u64));
        self.page_walks += f(at!(stats.page_walks: u64));
        self.pages_cached_vma += f(at!(stats.pages_cached_vma: u64));
        self.inputs_recovered += f(at!(stats.inputs_recovered: u64));
        self.pages_folio += f(at!(stats.pages_folio: u64));
        self.pages_retried += f(at!(stats.pages_retried: u64));
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

    /// The bytes of one of the skeleton's record types, as the BPF program writes it.
    fn bytes_of<T: Copy>(v: &T) -> Vec<u8> {
        // SAFETY: `T` is a `#[repr(C)]` type libbpf-cargo generated from capture.h: integers and
        // arrays of them, padded explicitly (the header pins each size to its fields'), so all
        // `size_of::<T>()` bytes behind the reference are initialised and live for the call.
        let b = unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) };
        b.to_vec()
    }

    use std::mem::{offset_of, size_of};

    /// Every record starts with its kind, which `parse` reads first.
    #[test]
    fn every_record_starts_with_its_kind() {
        let kinds = [
            offset_of!(types::rec_call, kind),
            offset_of!(types::rec_data, kind),
            offset_of!(types::rec_task, kind),
            offset_of!(types::rec_page, kind),
            offset_of!(types::rec_signal, kind),
            offset_of!(types::rec_uring, kind),
            offset_of!(types::rec_uring_data, kind),
        ];
        assert_eq!(kinds, [0; 7]);
        // RK_CALL1's data record follows the call at an aligned offset.
        assert_eq!(REC_CALL_SIZE % 8, 0);
    }

    /// The generated types carry no field layout.rs does not read: a field added to a struct of
    /// capture.h stops these literals from compiling until it is parsed and listed here.
    fn a_call(kind: u32) -> types::rec_call {
        types::rec_call {
            kind,
            tid: 1,
            seq: 2,
            entry_tid: 3,
            tgid: 4,
            ppid: 5,
            uid: 6,
            gid: 7,
            pgid: 8,
            sid: 9,
            nr: 10,
            flags: 11,
            ts_enter: 12,
            ts_exit: 13,
            ret: -14,
            args: [15, 16, 17, 18, 19, 20],
            aux: [21, 22, 23, 24, 25, 26],
            nvec: [27, 28, 29, 30, 31, 32, 33],
            status: [34, 35, 36, 37, 38, 39, 40],
            pad0: 0,
            nrec: 41,
            added_pages: 42,
            pad1: 0,
        }
    }

    fn call_rec() -> CallRec {
        CallRec {
            tid: 1,
            seq: 2,
            entry_tid: 3,
            tgid: 4,
            ppid: 5,
            uid: 6,
            gid: 7,
            pgid: 8,
            sid: 9,
            nr: 10,
            flags: 11,
            ts_enter: 12,
            ts_exit: 13,
            ret: -14,
            args: [15, 16, 17, 18, 19, 20],
            aux: [21, 22, 23, 24, 25, 26],
            nvec: [27, 28, 29, 30, 31, 32, 33],
            status: [34, 35, 36, 37, 38, 39, 40],
            nrec: 41,
            added_pages: 42,
        }
    }

    fn a_chunk(kind: u32, len: u32) -> types::rec_data {
        types::rec_data {
            kind,
            tid: 1,
            tgid: 2,
            seq: 3,
            slot: 4,
            flags: 5,
            seg: 0x0607,
            vec: 8,
            len,
            pad0: 0,
            seg_len: 9,
            off: 10,
            addr: 11,
        }
    }

    fn data_rec(len: u32, payload: &[u8]) -> DataRec<'_> {
        DataRec {
            tid: 1,
            tgid: 2,
            seq: 3,
            slot: 4,
            flags: 5,
            seg: 0x0607,
            vec: 8,
            len,
            seg_len: 9,
            off: 10,
            addr: 11,
            payload,
        }
    }

    #[test]
    fn calls_and_chunks_laid_out_by_the_c_structs_parse_into_their_fields() {
        let b = bytes_of(&a_call(RK_CALL));
        assert_eq!(parse(&b), Some(Record::Call(Box::new(call_rec()))));

        let mut b = bytes_of(&a_chunk(RK_DATA, 3));
        b.extend_from_slice(b"abc");
        assert_eq!(parse(&b), Some(Record::Data(data_rec(3, b"abc"))));
        let b = bytes_of(&a_chunk(RK_DEFER, 4096));
        assert_eq!(parse(&b), Some(Record::Defer(data_rec(4096, b""))));

        let mut b = bytes_of(&a_call(RK_CALL1));
        b.extend(bytes_of(&a_chunk(RK_DATA, 2)));
        b.extend_from_slice(b"xy");
        assert_eq!(parse(&b), Some(Record::CallData(Box::new(call_rec()), data_rec(2, b"xy"))));
    }

    #[test]
    fn task_page_and_signal_records_laid_out_by_the_c_structs_parse_into_their_fields() {
        for (kind, group_dead) in [(RK_FORK, 0), (RK_EXIT, 1), (RK_STOP, 0)] {
            let t =
                types::rec_task { kind, tid: 1, tgid: 2, child_tid: 3, child_tgid: 4, group_dead };
            let want = TaskRec {
                tid: 1,
                tgid: 2,
                child_tid: 3,
                child_tgid: 4,
                group_dead: group_dead != 0,
            };
            let want = match kind {
                RK_FORK => Record::Fork(want),
                RK_EXIT => Record::Exit(want),
                _ => Record::Stop(want),
            };
            assert_eq!(parse(&bytes_of(&t)), Some(want));
        }

        let p = types::rec_page {
            kind: RK_PAGE,
            tid: 1,
            tgid: 2,
            flags: PG_WRITE,
            ts: 3,
            addr: 4,
            off: 5,
            ino: 6,
            dev: 7,
            len: 2,
        };
        let mut b = bytes_of(&p);
        b.extend_from_slice(b"pg");
        let want = PageRec {
            tid: 1,
            tgid: 2,
            flags: PG_WRITE,
            ts: 3,
            addr: 4,
            off: 5,
            ino: 6,
            dev: 7,
            payload: b"pg",
        };
        assert_eq!(parse(&b), Some(Record::Page(want)));

        let mut info = [0u8; 48];
        info.iter_mut().enumerate().for_each(|(i, x)| *x = i as u8 + 100);
        let s =
            types::rec_signal { kind: RK_SIGNAL, tid: 1, tgid: 2, flags: SG_FATAL, ts: 3, info };
        let want = SignalRec { tid: 1, tgid: 2, flags: SG_FATAL, ts: 3, info: &info };
        assert_eq!(parse(&bytes_of(&s)), Some(Record::Signal(want)));
    }

    #[test]
    fn uring_records_laid_out_by_the_c_structs_parse_into_their_fields() {
        let mut sqe = [0u8; 64];
        sqe.iter_mut().enumerate().for_each(|(i, x)| *x = i as u8 + 1);
        for kind in [RK_URING_SUBMIT, RK_URING_COMPLETE] {
            let u = types::rec_uring {
                kind,
                tid: 1,
                tgid: 2,
                flags: UF_MORE,
                ts: 3,
                ctx: 4,
                serial: 5,
                enter_tid: 6,
                enter_seq: 7,
                res: -8,
                cflags: 9,
                user_data: 10,
                opcode: 11,
                data_len: 12,
                ino: 13,
                dev: 14,
                ring_flags: 15,
                sqe,
            };
            let want = UringRec {
                complete: kind == RK_URING_COMPLETE,
                tid: 1,
                tgid: 2,
                flags: UF_MORE,
                ts: 3,
                ctx: 4,
                serial: 5,
                enter_tid: 6,
                enter_seq: 7,
                res: -8,
                cflags: 9,
                user_data: 10,
                opcode: 11,
                data_len: 12,
                ino: 13,
                dev: 14,
                ring_flags: 15,
                sqe,
            };
            assert_eq!(parse(&bytes_of(&u)), Some(Record::Uring(Box::new(want))));
        }
        let d = types::rec_uring_data {
            kind: RK_URING_DATA,
            tid: 1,
            tgid: 2,
            len: 3,
            serial: 4,
            off: 5,
        };
        let mut b = bytes_of(&d);
        b.extend_from_slice(b"uvw");
        let want = UringDataRec { tid: 1, tgid: 2, serial: 4, off: 5, payload: b"uvw" };
        assert_eq!(parse(&b), Some(Record::UringData(want)));
        assert_eq!(parse(&b[..b.len() - 1]), None, "payload shorter than len");
        let mut st = types::rec_uring_data { kind: RK_URING_STR, len: 2, serial: 4, ..d };
        st.off = u64::from(URS_PATH2);
        let mut b = bytes_of(&st);
        b.extend_from_slice(b"a\0");
        b.resize(b.len() + 16, 0); // (the record's unused room)
        let want = UringDataRec { tid: 1, tgid: 2, serial: 4, off: 1, payload: b"a\0" };
        assert_eq!(parse(&b), Some(Record::UringStr(want)));
        st.off = 9;
        assert_eq!(parse(&bytes_of(&st)), None, "no such string");
    }

    #[test]
    fn loss_slots_and_statistics_laid_out_by_the_c_structs_parse_into_their_fields() {
        let l = types::lost_slot { count: 1, bytes: 2, first_ns: 3, last_ns: 4 };
        let want = LostSlot { count: 1, bytes: 2, first_ns: 3, last_ns: 4 };
        assert_eq!(LostSlot::parse(&bytes_of(&l)), want);

        let s = types::stats {
            deferred: 1,
            deferred_bytes: 2,
            faults: 3,
            lost_calls: 4,
            throttle_stops: 5,
            no_storage: 6,
            pages: 7,
            pages_unclassified: 8,
            page_walks: 9,
            pages_cached_vma: 10,
            inputs_recovered: 11,
            pages_folio: 12,
            pages_retried: 13,
            pad: [0; 3],
        };
        let mut sum = Stats::default();
        sum.add(&bytes_of(&s));
        sum.add(&bytes_of(&s));
        let want = Stats {
            deferred: 2,
            deferred_bytes: 4,
            faults: 6,
            lost_calls: 8,
            throttle_stops: 10,
            no_storage: 12,
            pages: 14,
            pages_unclassified: 16,
            page_walks: 18,
            pages_cached_vma: 20,
            inputs_recovered: 22,
            pages_folio: 24,
            pages_retried: 26,
        };
        assert_eq!(sum, want);
    }

    #[test]
    fn rule_bytes_are_the_c_struct_s() {
        let arg = |i: u8| ArgRule {
            kind: 10 * i + 1,
            len_kind: 10 * i + 2,
            len_arg: 10 * i + 3,
            flags: 10 * i + 4,
            size: 1000 + u32::from(i),
        };
        let c_arg = |i: u8| types::arg_rule {
            kind: 10 * i + 1,
            len_kind: 10 * i + 2,
            len_arg: 10 * i + 3,
            flags: 10 * i + 4,
            size: 1000 + u32::from(i),
        };
        let r = SyscallRule {
            flags: 1,
            xarg: 2,
            xarg_cond: 3,
            xarg_size: 0x0405,
            entry_mask: 6,
            exit_mask: 7,
            bulk_mask: 8,
            xarg_mask: 0x0102_0304_0506_0708,
            args: [0, 1, 2, 3, 4, 5].map(arg),
        };
        let c = types::syscall_rule {
            flags: 1,
            xarg: 2,
            xarg_cond: 3,
            bulk_mask: 8,
            xarg_size: 0x0405,
            entry_mask: 6,
            exit_mask: 7,
            xarg_mask: 0x0102_0304_0506_0708,
            args: [0, 1, 2, 3, 4, 5].map(c_arg),
        };
        assert_eq!(r.to_bytes().to_vec(), bytes_of(&c));
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
