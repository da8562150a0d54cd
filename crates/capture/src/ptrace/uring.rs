//! io_uring requests seen by the ptrace recorder: the rings of each traced process, read
//! from the program's own mapping of them (`process_vm_readv`) when it enters the kernel.
//!
//! * `io_uring_setup`'s exit: the ring's descriptor and `struct io_uring_params` (entries,
//!   flags, the offsets of head, tail, array and CQEs in the ring mappings).
//! * `mmap`'s exit with a ring's descriptor: where the SQ ring, CQ ring and SQE array are
//!   (`IORING_OFF_*`; with `IORING_FEAT_SINGLE_MMAP` the CQ ring is the SQ ring's mapping;
//!   with `IORING_SETUP_NO_MMAP` the program gave the addresses in the params).
//! * `io_uring_enter`'s entry: the SQEs between the kernel's head and the program's tail (at
//!   most `to_submit`), a write's data read from its buffer then; each kept by user_data.
//! * `io_uring_enter`'s exit, its next entry, the ring's `munmap` and the process's exit or
//!   exec: the CQEs between the last tail seen and the current one, each matched to its SQE
//!   and emitted as one `io_uring_op` event (a read's data read from its buffer then).
//!
//! What cannot be seen this way is counted (`uring_unobserved`, `uring_rings_unobserved`):
//! SQPOLL rings (the kernel thread takes SQEs without any call), completions the program
//! reaps without entering the kernel after its last call, a CQ that advanced by more than
//! its size between two looks, and completions of requests submitted before the recording.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use ra_syscalls::uring::{self, data_source, sqe, UringData, IOSQE_BUFFER_SELECT};
use ra_trace::{ArgValue, Event, ExtraValue, MAX_BUFFER_BYTES};

use super::mem;
use super::sys::Pid;
use crate::common::{hash_bulk, now_ns, stamp, ProcInfo};
use crate::{DataLevel, DataMode};

/// `IORING_SETUP_*` flags the tracker looks at.
const SETUP_SQPOLL: u32 = 1 << 1;
const SETUP_SQE128: u32 = 1 << 10;
const SETUP_CQE32: u32 = 1 << 11;
const SETUP_NO_MMAP: u32 = 1 << 14;
const SETUP_NO_SQARRAY: u32 = 1 << 16;
/// `IORING_FEAT_SINGLE_MMAP`.
const FEAT_SINGLE_MMAP: u32 = 1;
/// `IORING_ENTER_REGISTERED_RING`: `fd` is an index into the registered ring descriptors.
const ENTER_REGISTERED_RING: u64 = 1 << 4;
/// `IORING_REGISTER_RING_FDS`, `IORING_UNREGISTER_RING_FDS`.
const REGISTER_RING_FDS: u64 = 20;
const UNREGISTER_RING_FDS: u64 = 21;
/// `IORING_CQE_F_MORE`: more completions of the same request follow (multishot).
const CQE_F_MORE: u32 = 1 << 1;
/// `IORING_OFF_*`: the mmap offsets of the ring regions.
const OFF_SQ_RING: u64 = 0;
const OFF_CQ_RING: u64 = 0x800_0000;
const OFF_SQES: u64 = 0x1000_0000;

/// Requests kept per ring waiting for their completion at most (beyond, the oldest are
/// given up and counted in `uring_dropped`).
const MAX_PENDING: usize = 1 << 16;

/// `struct io_uring_params` as the tracker needs it.
#[derive(Clone, Copy, Debug, Default)]
struct Params {
    sq_entries: u32,
    cq_entries: u32,
    flags: u32,
    features: u32,
    /// `sq_off`: head, tail, ring_mask, ring_entries, flags, dropped, array.
    sq_off: [u32; 7],
    /// `cq_off`: head, tail, ring_mask, ring_entries, overflow, cqes, flags.
    cq_off: [u32; 7],
    /// `sq_off.user_addr`, `cq_off.user_addr` (IORING_SETUP_NO_MMAP: the SQEs, the rings).
    sq_user: u64,
    cq_user: u64,
}

impl Params {
    fn parse(b: &[u8]) -> Option<Params> {
        if b.len() < 120 {
            return None;
        }
        let w = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let q = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        let mut p = Params {
            sq_entries: w(0),
            cq_entries: w(4),
            flags: w(8),
            features: w(20),
            sq_user: q(72),
            cq_user: q(112),
            ..Params::default()
        };
        for i in 0..7 {
            p.sq_off[i] = w(40 + 4 * i);
            p.cq_off[i] = w(80 + 4 * i);
        }
        Some(p)
    }
}

/// A submitted request waiting for its completion.
#[derive(Clone)]
struct Sub {
    sqe: Vec<u8>,
    /// A write's data (or the mode's NotCaptured), read at submission.
    wdata: Option<ArgValue>,
    /// The data could not all be read (a page not present, a provided buffer).
    lost: bool,
    time: i64,
    tid: Pid,
    info: ProcInfo,
    /// The submitting io_uring_enter's key (see `sink::ENTER_REF`).
    enter_key: i64,
    /// The paths, name and `open_how` the SQE points to (`uring::strings`), read at
    /// submission, as (argument, bytes); `strings_lost`: one could not be read.
    strings: Vec<(&'static str, Vec<u8>)>,
    strings_lost: bool,
}

/// One ring, shared by the processes that inherited it.
struct Ring {
    id: i64,
    fd: i64,
    p: Params,
    sq_ring: u64,
    cq_ring: u64,
    sqes: u64,
    /// The CQ tail as last seen.
    cq_seen: u32,
    pending: HashMap<u64, Sub>,
    /// The user_data of the SQEs read at the entry of the enter in progress, per thread,
    /// in ring order: those past what the call submitted are taken back at its exit.
    submitting: HashMap<Pid, Vec<u64>>,
}

impl Ring {
    fn sqpoll(&self) -> bool {
        self.p.flags & SETUP_SQPOLL != 0
    }

    fn cq_base(&self) -> u64 {
        if self.cq_ring == 0 && self.p.features & FEAT_SINGLE_MMAP != 0 {
            self.sq_ring
        } else {
            self.cq_ring
        }
    }
}

type RingRef = Rc<RefCell<Ring>>;

/// What the thread's call in progress needs at its exit.
#[derive(Clone, Copy, Debug)]
pub(super) enum AtExit {
    Setup {
        params: u64,
    },
    Mmap {
        fd: i64,
        offset: u64,
    },
    Enter {
        fd: i64,
    },
    RegisterRingFds {
        arg: u64,
        nr: u64,
    },
    /// `record --io-uring deny`: the call was skipped; its result is made -ENOSYS.
    Deny,
    /// An io_uring_enter of a descriptor that is no ring the tracker knows: one set up
    /// before the recording (`-p`, or inherited from an untraced parent) when it succeeds.
    Unknown {
        fd: i64,
    },
}

/// The rings of the traced processes and what was seen of them.
#[derive(Default)]
pub(super) struct Rings {
    procs: HashMap<Pid, HashMap<i64, RingRef>>,
    /// Registered ring descriptors: (process, index) -> ring descriptor.
    registered: HashMap<(Pid, i64), i64>,
    next_ring: i64,
    next_key: i64,
    /// Operations emitted.
    ops: u64,
    /// Operations whose data could not be captured.
    data_lost: u64,
    /// Operations whose read data was read after the program had taken their CQE.
    data_late: u64,
    /// Completions seen whose submission was not, and completions passed over (CQ overrun).
    unobserved: u64,
    /// Rings whose requests cannot be seen, and why (SQPOLL, not mapped, registered fd).
    rings_unobserved: Vec<(i64, &'static str)>,
    /// Requests given up (more pending than [`MAX_PENDING`]).
    dropped: u64,
    /// Rings set up before the recording that were entered: (process, descriptor).
    unknown: std::collections::HashSet<(Pid, i64)>,
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    b.get(o..o + 4).map_or(0, |s| u32::from_le_bytes(s.try_into().unwrap_or_default()))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 8).map_or(0, |s| u64::from_le_bytes(s.try_into().unwrap_or_default()))
}
fn read_u32(pid: Pid, addr: u64) -> Option<u32> {
    let b = mem::read(pid, addr, 4);
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

impl Rings {
    /// The key of a new io_uring_enter (its record carries it in [`crate::sink::ENTER_REF`]).
    pub fn enter_key(&mut self) -> i64 {
        self.next_key += 1;
        self.next_key
    }

    fn ring(&self, tgid: Pid, fd: i64) -> Option<RingRef> {
        self.procs.get(&tgid)?.get(&fd).cloned()
    }

    /// Whether `fd` of `tgid` is a ring (its mmap and munmap matter).
    pub fn is_ring(&self, tgid: Pid, fd: i64) -> bool {
        self.procs.get(&tgid).is_some_and(|m| m.contains_key(&fd))
    }

    /// Whether `tgid` has rings.
    pub fn has_rings(&self, tgid: Pid) -> bool {
        self.procs.get(&tgid).is_some_and(|m| !m.is_empty())
    }

    fn unobservable(&mut self, ring: i64, why: &'static str) {
        if !self.rings_unobserved.iter().any(|(r, _)| *r == ring) {
            self.rings_unobserved.push((ring, why));
        }
    }

    /// A successful io_uring_setup of `tgid` returned `fd`; its params are at `params`.
    pub fn setup(&mut self, tid: Pid, tgid: Pid, fd: i64, params: u64) {
        let Some(p) = Params::parse(&mem::read(tid, params, 120)) else { return };
        self.next_ring += 1;
        let mut r = Ring {
            id: self.next_ring,
            fd,
            p,
            sq_ring: 0,
            cq_ring: 0,
            sqes: 0,
            cq_seen: 0,
            pending: HashMap::new(),
            submitting: HashMap::new(),
        };
        if p.flags & SETUP_NO_MMAP != 0 {
            // The program's own memory: the rings at cq_off.user_addr, the SQEs at
            // sq_off.user_addr.
            r.sq_ring = p.cq_user;
            r.cq_ring = p.cq_user;
            r.sqes = p.sq_user;
        }
        if r.sqpoll() {
            self.unobservable(r.id, "SQPOLL");
        }
        self.procs.entry(tgid).or_default().insert(fd, Rc::new(RefCell::new(r)));
    }

    /// `mmap(addr, .., fd, offset)` of a ring returned `addr`.
    pub fn mmap(&mut self, tgid: Pid, fd: i64, offset: u64, addr: u64) {
        let Some(r) = self.ring(tgid, fd) else { return };
        let mut r = r.borrow_mut();
        match offset {
            OFF_SQ_RING => r.sq_ring = addr,
            OFF_CQ_RING => r.cq_ring = addr,
            OFF_SQES => r.sqes = addr,
            _ => {}
        }
    }

    /// `munmap(addr)` is about to run: a ring mapped there is read a last time and forgotten
    /// as mapped.
    pub fn munmap(&mut self, tid: Pid, tgid: Pid, addr: u64, out: &mut Vec<Event>, m: DataMode) {
        let rings: Vec<RingRef> =
            self.procs.get(&tgid).map(|p| p.values().cloned().collect()).unwrap_or_default();
        for r in rings {
            let mapped = {
                let r = r.borrow();
                [r.sq_ring, r.cq_ring, r.sqes].contains(&addr)
            };
            if mapped {
                self.reap(&r, tid, out, m);
                let mut g = r.borrow_mut();
                let r = &mut *g;
                for a in [&mut r.sq_ring, &mut r.cq_ring, &mut r.sqes] {
                    if *a == addr {
                        *a = 0;
                    }
                }
            }
        }
    }

    /// `tgid` closed `fd`.
    pub fn close(&mut self, tgid: Pid, fd: i64) {
        if let Some(m) = self.procs.get_mut(&tgid) {
            m.remove(&fd);
        }
    }

    /// `child` was forked from `parent`: it has the same rings (the mappings are shared).
    pub fn fork(&mut self, parent: Pid, child: Pid) {
        if parent == child {
            return;
        }
        if let Some(m) = self.procs.get(&parent).cloned() {
            self.procs.insert(child, m);
        }
    }

    /// `tgid` exits or execs: its rings are read a last time and forgotten (after exec its
    /// mappings are gone).
    pub fn leave(&mut self, tid: Pid, tgid: Pid, out: &mut Vec<Event>, m: DataMode) {
        let Some(rings) = self.procs.remove(&tgid) else { return };
        for r in rings.values() {
            self.reap(r, tid, out, m);
        }
        self.registered.retain(|(p, _), _| *p != tgid);
    }

    /// The ring an io_uring_enter names: `fd`, or a registered ring's index.
    pub fn enter_fd(&self, tgid: Pid, fd: u64, flags: u64) -> Option<i64> {
        let fd = fd as u32 as i64;
        if flags & ENTER_REGISTERED_RING != 0 {
            return self.registered.get(&(tgid, fd)).copied();
        }
        Some(fd)
    }

    /// io_uring_enter's entry: completions since the last look, then the SQEs it submits.
    #[allow(clippy::too_many_arguments)]
    pub fn enter(
        &mut self,
        tid: Pid,
        info: ProcInfo,
        fd: Option<i64>,
        to_submit: u64,
        key: i64,
        out: &mut Vec<Event>,
        m: DataMode,
    ) {
        let Some(fd) = fd else {
            // A registered ring descriptor registered before the recording.
            self.unobserved += to_submit;
            self.unobservable(0, "registered ring descriptor");
            return;
        };
        let Some(r) = self.ring(info.tgid, fd) else { return };
        self.reap(&r, tid, out, m);
        let mut ring = r.borrow_mut();
        if ring.sqpoll() {
            return;
        }
        if ring.sq_ring == 0 || ring.sqes == 0 {
            let id = ring.id;
            drop(ring);
            self.unobserved += to_submit;
            self.unobservable(id, "not mapped");
            return;
        }
        let p = ring.p;
        let (Some(head), Some(tail)) = (
            read_u32(tid, ring.sq_ring + u64::from(p.sq_off[0])),
            read_u32(tid, ring.sq_ring + u64::from(p.sq_off[1])),
        ) else {
            return;
        };
        let mask = p.sq_entries.saturating_sub(1);
        let n = tail.wrapping_sub(head).min(to_submit.min(u64::from(u32::MAX)) as u32);
        let n = n.min(p.sq_entries.max(1));
        let sqe_size: u64 = if p.flags & SETUP_SQE128 != 0 { 128 } else { 64 };
        let array = if p.flags & SETUP_NO_SQARRAY != 0 {
            Vec::new()
        } else {
            mem::read(tid, ring.sq_ring + u64::from(p.sq_off[6]), 4 * (mask as usize + 1))
        };
        let now = now_ns();
        let mut order = Vec::new();
        for i in 0..n {
            let slot = head.wrapping_add(i) & mask;
            let idx =
                if array.is_empty() { slot } else { u32_at(&array, 4 * slot as usize) & mask };
            let q = mem::read(tid, ring.sqes + u64::from(idx) * sqe_size, sqe::SIZE);
            if q.len() < sqe::SIZE {
                continue;
            }
            let (wdata, lost) = write_data(tid, &q, m);
            let (strings, strings_lost) = read_strings(tid, &q);
            let ud = u64_at(&q, sqe::USER_DATA);
            let sub = Sub {
                sqe: q,
                wdata,
                lost,
                time: now,
                tid,
                info,
                enter_key: key,
                strings,
                strings_lost,
            };
            if ring.pending.len() >= MAX_PENDING {
                self.dropped += 1;
                continue;
            }
            ring.pending.insert(ud, sub);
            order.push(ud);
        }
        ring.submitting.insert(tid, order);
    }

    /// io_uring_enter's exit (`ret`: SQEs submitted, or the error): SQEs it did not take are
    /// forgotten, completions since the entry are read.
    pub fn enter_exit(
        &mut self,
        tid: Pid,
        tgid: Pid,
        fd: i64,
        ret: Option<i64>,
        out: &mut Vec<Event>,
        m: DataMode,
    ) {
        let Some(r) = self.ring(tgid, fd) else { return };
        {
            let mut ring = r.borrow_mut();
            let order = ring.submitting.remove(&tid).unwrap_or_default();
            let taken = usize::try_from(ret.unwrap_or(0).max(0)).unwrap_or(0);
            for ud in order.iter().skip(taken) {
                ring.pending.remove(ud);
            }
        }
        self.reap(&r, tid, out, m);
    }

    /// A successful io_uring_enter of a ring set up before the recording submitted
    /// `submitted` requests, which cannot be seen.
    pub fn unknown_ring(&mut self, tgid: Pid, fd: i64, submitted: i64) {
        self.unknown.insert((tgid, fd));
        self.unobserved += u64::try_from(submitted).unwrap_or(0);
    }

    /// io_uring_register(RING_FDS) returned: the registered indexes of ring descriptors.
    pub fn register_ring_fds(&mut self, tid: Pid, tgid: Pid, arg: u64, nr: u64) {
        let n = usize::try_from(nr).unwrap_or(0).min(16);
        let b = mem::read(tid, arg, 16 * n);
        for u in b.chunks_exact(16) {
            let (index, fd) = (i64::from(u32_at(u, 0)), u64_at(u, 8) as i64);
            self.registered.insert((tgid, index), fd);
        }
    }

    /// io_uring_register(UNREGISTER_RING_FDS) is about to run.
    pub fn unregister_ring_fds(&mut self, tid: Pid, tgid: Pid, arg: u64, nr: u64) {
        let n = usize::try_from(nr).unwrap_or(0).min(16);
        let b = mem::read(tid, arg, 16 * n);
        for u in b.chunks_exact(16) {
            self.registered.remove(&(tgid, i64::from(u32_at(u, 0))));
        }
    }

    /// The CQEs posted since the ring was last looked at, as events.
    fn reap(&mut self, r: &RingRef, tid: Pid, out: &mut Vec<Event>, m: DataMode) {
        let mut ring = r.borrow_mut();
        let cq = ring.cq_base();
        if cq == 0 {
            return;
        }
        let p = ring.p;
        let (Some(head), Some(tail)) = (
            read_u32(tid, cq + u64::from(p.cq_off[0])),
            read_u32(tid, cq + u64::from(p.cq_off[1])),
        ) else {
            return;
        };
        let mut from = ring.cq_seen;
        let delta = tail.wrapping_sub(from);
        if delta == 0 {
            return;
        }
        if delta > p.cq_entries {
            // Overwritten before they were seen (or the tail is not what it seems).
            self.unobserved += u64::from(delta - p.cq_entries);
            from = tail.wrapping_sub(p.cq_entries);
        }
        ring.cq_seen = tail;
        if ring.sqpoll() {
            // Its submissions were not seen: the completions are counted, not recorded.
            self.unobserved += u64::from(tail.wrapping_sub(from));
            return;
        }
        let mask = p.cq_entries.saturating_sub(1);
        let cqe_size: u64 = if p.flags & SETUP_CQE32 != 0 { 32 } else { 16 };
        let now = now_ns();
        let mut i = from;
        while i != tail {
            let c =
                mem::read(tid, cq + u64::from(p.cq_off[5]) + u64::from(i & mask) * cqe_size, 16);
            // Taken by the program already (reaped from the ring without a call): its read
            // buffer may have been used again.
            let late = (i.wrapping_sub(head) as i32) < 0;
            i = i.wrapping_add(1);
            if c.len() < 16 {
                self.unobserved += 1;
                continue;
            }
            let (ud, res, cflags) = (u64_at(&c, 0), u32_at(&c, 8) as i32, u32_at(&c, 12));
            let sub = if cflags & CQE_F_MORE != 0 {
                ring.pending.get(&ud).cloned()
            } else {
                ring.pending.remove(&ud)
            };
            let Some(sub) = sub else {
                self.unobserved += 1;
                continue;
            };
            let ev = build(sub, (ring.id, ring.fd), (res, cflags, now, late), tid, m);
            self.ops += 1;
            let source = ev.arg("data_source").and_then(ArgValue::as_int);
            if source == Some(data_source::NOT_CAPTURED) {
                self.data_lost += 1;
            }
            if source == Some(data_source::AFTER_COMPLETION) {
                self.data_late += 1;
            }
            out.push(ev);
        }
    }

    /// The recording's facts about io_uring (none when it saw no ring).
    pub fn facts(&self) -> Vec<(String, String)> {
        if self.next_ring == 0 && self.rings_unobserved.is_empty() && self.unknown.is_empty() {
            return Vec::new();
        }
        let mut seen = std::collections::HashSet::new();
        let open: usize = self
            .procs
            .values()
            .flat_map(|m| m.values())
            .filter(|r| seen.insert(Rc::as_ptr(r)))
            .map(|r| r.borrow().pending.len())
            .sum();
        let mut f = vec![
            ("uring_ops".to_string(), self.ops.to_string()),
            ("uring_not_completed".to_string(), open.to_string()),
            ("uring_data_not_captured".to_string(), self.data_lost.to_string()),
            ("uring_data_after_completion".to_string(), self.data_late.to_string()),
            ("uring_dropped".to_string(), self.dropped.to_string()),
            ("uring_unobserved".to_string(), self.unobserved.to_string()),
            (
                "uring_rings_unobserved".to_string(),
                (self.rings_unobserved.len() + self.unknown.len()).to_string(),
            ),
        ];
        if !self.rings_unobserved.is_empty() || !self.unknown.is_empty() {
            let mut why: Vec<&str> = self.rings_unobserved.iter().map(|(_, w)| *w).collect();
            if !self.unknown.is_empty() {
                why.push("set up before the recording");
            }
            why.sort_unstable();
            why.dedup();
            f.push(("uring_unobserved_why".to_string(), why.join(", ")));
        }
        f
    }
}

/// A write's data at submission (None when the opcode carries none in).
fn write_data(tid: Pid, q: &[u8], m: DataMode) -> (Option<ArgValue>, bool) {
    let (data, at) = uring::buffer(i64::from(q[sqe::OPCODE]));
    if !matches!(data, UringData::In | UringData::InVec) {
        return (None, false);
    }
    if m.write == DataLevel::None {
        return (Some(ArgValue::NotCaptured), false);
    }
    if q[sqe::FLAGS] & IOSQE_BUFFER_SELECT != 0 {
        return (Some(ArgValue::NotCaptured), true);
    }
    let (addr, len) = (u64_at(q, at), u64::from(u32_at(q, sqe::LEN)));
    if data == UringData::InVec {
        return match vec_data(tid, addr, len, u64::MAX) {
            Some(b) => (Some(ArgValue::data(b)), false),
            None => (Some(ArgValue::NotCaptured), true),
        };
    }
    let (v, complete) = mem::read_arg(tid, addr, len as usize, MAX_BUFFER_BYTES);
    (Some(v), !complete)
}

/// The strings (paths, xattr name; with their NUL) and `struct open_how` a path opcode's SQE
/// points to, read from the submitter's memory as the kernel reads them at submission; and
/// whether one could not be read (an unreadable page, no NUL within `PATH_MAX`).
fn read_strings(tid: Pid, q: &[u8]) -> (Vec<(&'static str, Vec<u8>)>, bool) {
    let st = uring::strings(i64::from(q[sqe::OPCODE]));
    let mut out = Vec::new();
    let mut lost = false;
    for (name, at, max) in [
        ("path", st.path, PATH_MAX),
        ("path2", st.path2, PATH_MAX),
        ("name", st.name, XATTR_NAME_MAX + 1),
    ] {
        let Some(at) = at else { continue };
        match mem::read_cstr(tid, u64_at(q, at), max) {
            Some((b, true)) => out.push((name, b)),
            _ => lost = true,
        }
    }
    if let Some(at) = st.how {
        let n = (u32_at(q, sqe::LEN) as usize).min(uring::OPEN_HOW_MAX);
        let b = mem::read(tid, u64_at(q, at), n);
        if b.len() == n {
            out.push(("how", b));
        } else {
            lost = true;
        }
    }
    (out, lost)
}

const PATH_MAX: usize = 4096;
const XATTR_NAME_MAX: usize = 255;

/// The bytes of `count` iovecs at `addr`, at most `limit` (None when the vectors or their
/// data cannot all be read, or are more than a record keeps).
fn vec_data(tid: Pid, addr: u64, count: u64, limit: u64) -> Option<Vec<u8>> {
    let vecs = mem::read_iovecs(tid, addr, usize::try_from(count).ok()?)?;
    let total: u64 = vecs.iter().map(|v| v.1).sum::<u64>().min(limit);
    if total > MAX_BUFFER_BYTES as u64 {
        return None;
    }
    let mut out = Vec::with_capacity(total as usize);
    let mut left = total;
    for (base, len) in vecs {
        let n = len.min(left);
        let b = mem::read(tid, base, n as usize);
        if b.len() as u64 != n {
            return None;
        }
        out.extend_from_slice(&b);
        left -= n;
    }
    Some(out)
}

/// The event of a request: its SQE (`sub`), ring (id, descriptor), CQE (res, flags, when
/// seen, already taken by the program), read data from `tid`'s memory now.
fn build(
    sub: Sub,
    (ring, ring_fd): (i64, i64),
    (res, cflags, now, late): (i32, u32, i64, bool),
    tid: Pid,
    mode: DataMode,
) -> Event {
    let def = ra_syscalls::lookup("io_uring_op").expect("io_uring_op is a registry entry");
    let mut ev = Event::new(def);
    let q = &sub.sqe;
    let op = uring::lookup(i64::from(q[sqe::OPCODE]));
    stamp(&mut ev, sub.tid, sub.info);
    ev.time_called = Some(sub.time);
    ev.time_returned = Some(now.max(sub.time));
    if res < 0 {
        ev.ret = Some(-1);
        ev.errno = Some(-res);
    } else {
        ev.ret = Some(i64::from(res));
        ev.errno = Some(0);
    }
    let int = |ev: &mut Event, n: &str, v: i64| {
        ev.set_arg(n, ArgValue::Int(v));
    };
    int(&mut ev, "ring", ring);
    int(&mut ev, "enter_id", -1);
    int(&mut ev, "ring_fd", ring_fd);
    int(&mut ev, "opcode", i64::from(q[sqe::OPCODE]));
    int(&mut ev, "user_data", u64_at(q, sqe::USER_DATA) as i64);
    int(&mut ev, "cqe_flags", i64::from(cflags));
    let flags = if sub.strings_lost { uring::uring_flags::STRINGS_NOT_READ } else { 0 };
    int(&mut ev, "uring_flags", flags);
    for (name, v) in sqe::fields(q) {
        int(&mut ev, name, v);
    }
    for (name, b) in &sub.strings {
        ev.set_arg(name, ArgValue::data(b.clone()));
    }
    // Resolved to the call's unique_id by the trace sink.
    ev.extra.push((crate::sink::ENTER_REF.into(), ExtraValue::Int(sub.enter_key)));
    if !op.is_some_and(|o| o.decoded) {
        ev.set_arg("sqe", ArgValue::data(q.clone()));
    }
    let (data, at) = uring::buffer(i64::from(q[sqe::OPCODE]));
    let ok = res >= 0;
    let mut source = data_source::NONE;
    match data {
        UringData::In | UringData::InVec => {
            if let Some(v) = sub.wdata {
                // NotCaptured without a loss: `--data write=none` chose so.
                let skipped = matches!(v, ArgValue::NotCaptured);
                ev.buffer_not_captured = skipped || sub.lost;
                source = if sub.lost {
                    data_source::NOT_CAPTURED
                } else if skipped {
                    data_source::NONE
                } else {
                    data_source::AT_SUBMISSION
                };
                ev.set_arg("buf_in", v);
            }
        }
        UringData::Out | UringData::OutVec if ok => {
            let (addr, len) = (u64_at(q, at), u64::from(u32_at(q, sqe::LEN)));
            let n = (res as u64).min(if data == UringData::Out { len } else { u64::MAX });
            if mode.read == DataLevel::None {
                ev.set_arg("buf_out", ArgValue::NotCaptured);
                ev.buffer_not_captured = true;
            } else if q[sqe::FLAGS] & IOSQE_BUFFER_SELECT != 0 {
                ev.set_arg("buf_out", ArgValue::NotCaptured);
                ev.buffer_not_captured = true;
                source = data_source::NOT_CAPTURED;
            } else {
                let got = if data == UringData::Out {
                    let (v, complete) = mem::read_arg(tid, addr, n as usize, MAX_BUFFER_BYTES);
                    complete.then_some(v)
                } else {
                    vec_data(tid, addr, len, n).map(ArgValue::data)
                };
                match got {
                    Some(v) => {
                        ev.set_arg("buf_out", v);
                        source = if late {
                            data_source::AFTER_COMPLETION
                        } else {
                            data_source::AT_COMPLETION
                        };
                    }
                    None => {
                        ev.set_arg("buf_out", ArgValue::NotCaptured);
                        ev.buffer_not_captured = true;
                        source = data_source::NOT_CAPTURED;
                    }
                }
            }
        }
        _ => {}
    }
    int(&mut ev, "data_source", source);
    hash_bulk(def, &mut ev, mode);
    ev
}

impl AtExit {
    /// What the exit stop of call `nr` with `args` needs to do for the rings, if anything.
    pub fn of(rings: &Rings, tgid: Pid, nr: u64, args: &[u64; 6]) -> Option<AtExit> {
        match nr {
            NR_IO_URING_SETUP => Some(AtExit::Setup { params: args[1] }),
            NR_MMAP if rings.is_ring(tgid, args[4] as i32 as i64) => {
                Some(AtExit::Mmap { fd: args[4] as i32 as i64, offset: args[5] })
            }
            NR_IO_URING_REGISTER if args[1] == REGISTER_RING_FDS => {
                Some(AtExit::RegisterRingFds { arg: args[2], nr: args[3] })
            }
            _ => None,
        }
    }
}

/// The calls the tracker must see whatever the selection (x86_64 numbers).
pub const NR_MMAP: u64 = 9;
pub const NR_MUNMAP: u64 = 11;
pub const NR_IO_URING_SETUP: u64 = 425;
pub const NR_IO_URING_ENTER: u64 = 426;
pub const NR_IO_URING_REGISTER: u64 = 427;
/// `IORING_UNREGISTER_RING_FDS`, for the entry hook.
pub const UNREGISTER_RING: u64 = UNREGISTER_RING_FDS;
/// Every call number the seccomp filter must stop on for the tracker.
pub const TRACKED: [u32; 5] = [9, 11, 425, 426, 427];
