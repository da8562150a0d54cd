//! io_uring requests back into events: an RK_URING_SUBMIT (the SQE as the kernel read it, a
//! write's data before it) and the RK_URING_COMPLETE of the same request `serial` (the CQE, a
//! read's data before it) become one `io_uring_op` event (crates/syscalls `uring`; the
//! records are described in bpf/capture.h). Memory is bounded: at most [`MAX_IN_FLIGHT`]
//! requests and [`MAX_HELD_BYTES`] of their data wait for a completion; beyond, the oldest
//! are given up and counted.

use std::collections::{HashMap, VecDeque};

use ra_syscalls::uring::{self, data_source, sqe, UringData};
use ra_trace::{ArgValue, Event};

use super::assemble::{Assembler, Clock};
use super::layout::{
    UringDataRec, UringRec, UF_BUF_SELECT, UF_DATA_LOST, UF_NO_MM, UF_NO_SUBMIT, UF_SQPOLL,
    UF_STR_LOST, URS_NAME, URS_PATH, URS_PATH2,
};
use crate::{DataLevel, DataMode};

/// Requests submitted and not completed that the consumer keeps (the BPF side's table holds
/// as many).
pub const MAX_IN_FLIGHT: usize = 1 << 16;
/// Data bytes kept for them.
pub const MAX_HELD_BYTES: usize = 256 << 20;

#[derive(Default)]
struct Flight {
    submit: Option<Box<UringRec>>,
    /// The data the submission carried (a write's).
    wdata: Vec<u8>,
    /// Data chunks not yet claimed by a submission or completion record.
    data: Vec<u8>,
    /// The strings its SQE points to (RK_URING_STR, `URS_*`: which), read at submission.
    strings: Vec<(u64, Vec<u8>)>,
}

/// The requests between their records.
#[derive(Default)]
pub struct UringAsm {
    flights: HashMap<u64, Flight>,
    order: VecDeque<u64>,
    held_bytes: usize,
    /// Requests given up (more in flight than the bounds allow).
    pub dropped: u64,
    /// Operations whose data could not be captured (UF_DATA_LOST, UF_NO_MM without a
    /// read-back).
    pub data_lost: u64,
    /// Operations assembled.
    pub ops: u64,
    /// The rings seen, numbered from 1 in order of appearance (the trace never holds the
    /// kernel's address of a ring).
    rings: HashMap<u64, i64>,
}

impl UringAsm {
    /// A chunk of a request's data.
    pub fn data(&mut self, d: &UringDataRec<'_>) {
        let f = self.flight(d.serial);
        if f.data.len() as u64 == d.off {
            f.data.extend_from_slice(d.payload);
            self.held_bytes += d.payload.len();
        }
        self.bound();
    }

    /// A string of a request (its path, second path, xattr name or `open_how`).
    pub fn string(&mut self, d: &UringDataRec<'_>) {
        let f = self.flight(d.serial);
        if f.strings.len() < 4 {
            f.strings.push((d.off, d.payload.to_vec()));
            self.held_bytes += d.payload.len();
        }
        self.bound();
    }

    fn flight(&mut self, serial: u64) -> &mut Flight {
        if !self.flights.contains_key(&serial) {
            self.order.push_back(serial);
        }
        self.flights.entry(serial).or_default()
    }

    /// Give up the oldest requests while over a bound.
    fn bound(&mut self) {
        while self.flights.len() > MAX_IN_FLIGHT || self.held_bytes > MAX_HELD_BYTES {
            let Some(s) = self.order.pop_front() else { break };
            if let Some(f) = self.flights.remove(&s) {
                self.held_bytes -= f.data.len() + f.wdata.len() + strings_len(&f.strings);
                self.dropped += 1;
            }
        }
    }

    /// The recording's facts about its io_uring requests (none when it saw none).
    pub fn facts(&self) -> Vec<(&'static str, u64)> {
        let open = self.flights.values().filter(|f| f.submit.is_some()).count() as u64;
        if self.ops == 0 && open == 0 {
            return Vec::new();
        }
        vec![
            ("uring_ops", self.ops),
            ("uring_not_completed", open),
            ("uring_data_not_captured", self.data_lost),
            ("uring_dropped", self.dropped),
        ]
    }

    /// A submission: kept until its completion.
    pub fn submit(&mut self, r: Box<UringRec>) {
        let f = self.flight(r.serial);
        f.wdata = std::mem::take(&mut f.data);
        f.submit = Some(r);
        self.bound();
    }

    /// A completion: the finished operation (its write data from the submission, its read
    /// data from this completion). `more`: the request has more completions to come
    /// (multishot), so its submission is kept.
    pub fn complete(
        &mut self,
        c: &UringRec,
        asm: &Assembler,
        clock: &Clock,
        mode: DataMode,
    ) -> Event {
        let mut f = self.flights.remove(&c.serial).unwrap_or_default();
        let read_data = std::mem::take(&mut f.data);
        let wdata = std::mem::take(&mut f.wdata);
        let strings = std::mem::take(&mut f.strings);
        self.held_bytes -= read_data.len() + wdata.len() + strings_len(&strings);
        if c.serial == 0 {
            // No submission: the data records (none) and the flight are not this one's.
            f = Flight::default();
        }
        let sub = f.submit.take();
        if c.flags & super::layout::UF_MORE != 0 {
            if let Some(s) = &sub {
                self.flight(c.serial).submit = Some(s.clone());
            }
        }
        let strings = if c.serial == 0 { Vec::new() } else { strings };
        let n = self.rings.len() as i64 + 1;
        let ring = *self.rings.entry(c.ctx).or_insert(n);
        let x = Ctx { asm, clock, mode };
        let ev = build(sub.as_deref(), (wdata, strings), c, ring, read_data, &x);
        self.ops += 1;
        // (Not captured by the mode's choice, `none` for its direction: not lost.)
        let source = ev.arg("data_source").and_then(ArgValue::as_int);
        if ev.buffer_not_captured && source == Some(data_source::NOT_CAPTURED) {
            self.data_lost += 1;
        }
        ev
    }
}

/// The event of one request.
/// What every event is built with.
struct Ctx<'a> {
    asm: &'a Assembler,
    clock: &'a Clock,
    mode: DataMode,
}

fn strings_len(s: &[(u64, Vec<u8>)]) -> usize {
    s.iter().map(|(_, b)| b.len()).sum()
}

fn build(
    sub: Option<&UringRec>,
    (wdata, strings): (Vec<u8>, Vec<(u64, Vec<u8>)>),
    c: &UringRec,
    ring: i64,
    read_data: Vec<u8>,
    x: &Ctx<'_>,
) -> Event {
    let (asm, clock, mode) = (x.asm, x.clock, x.mode);
    let def = ra_syscalls::lookup("io_uring_op").expect("io_uring_op is a registry entry");
    let mut ev = Event::new(def);
    let op = uring::lookup(i64::from(c.opcode));
    // Attributed to the thread that submitted it (the SQPOLL thread for such rings).
    let (tgid, tid) = sub.map_or((c.tgid, c.tid), |s| (s.tgid, s.tid));
    asm.stamp(&mut ev, tgid, tid);
    ev.time_called = Some(clock.wall(sub.map_or(c.ts, |s| s.ts)));
    ev.time_returned = Some(clock.wall(c.ts));
    if c.res < 0 {
        ev.ret = Some(-1);
        ev.errno = Some(-c.res);
    } else {
        ev.ret = Some(i64::from(c.res));
        ev.errno = Some(0);
    }
    let int = |ev: &mut Event, n: &str, v: i64| {
        ev.set_arg(n, ArgValue::Int(v));
    };
    int(&mut ev, "ring", ring);
    // -1 until known (integer columns are not nullable): the trace sink sets `enter_id`, the
    // consumer `ring_fd`.
    int(&mut ev, "enter_id", -1);
    int(&mut ev, "ring_fd", -1);
    int(&mut ev, "opcode", i64::from(c.opcode));
    int(&mut ev, "user_data", c.user_data as i64);
    int(&mut ev, "cqe_flags", i64::from(c.cflags));
    let sflags = sub.map_or(0, |s| s.flags) & UF_STR_LOST;
    int(&mut ev, "uring_flags", i64::from(c.flags & (UF_SQPOLL | UF_NO_SUBMIT) | sflags));
    for (which, b) in strings {
        let name = match which as u32 {
            URS_PATH => "path",
            URS_PATH2 => "path2",
            URS_NAME => "name",
            _ => "how",
        };
        ev.set_arg(name, ArgValue::data(b));
    }
    if c.ino != 0 {
        int(&mut ev, "device", libc::makedev(c.dev >> 20, c.dev & 0xf_ffff) as i64);
        int(&mut ev, "inode", c.ino as i64);
    }
    let mut source = data_source::NONE;
    if let Some(s) = sub {
        let q = &s.sqe;
        for (name, v) in sqe::fields(q) {
            int(&mut ev, name, v);
        }
        if s.enter_seq != 0 || s.enter_tid != 0 {
            // Resolved to the call's unique_id by the trace sink (see `EnterRef`).
            ev.extra.push((ENTER_REF.into(), ra_trace::ExtraValue::Int(enter_key(s))));
        }
        if !op.is_some_and(|o| o.decoded) {
            ev.set_arg("sqe", ArgValue::data(q.to_vec()));
        }
        let lost = (s.flags | c.flags) & (UF_DATA_LOST | UF_NO_MM | UF_BUF_SELECT) != 0;
        let data = uring::buffer(i64::from(c.opcode)).0;
        let ok = c.res >= 0;
        let (arg, bytes, when) = match data {
            UringData::In => ("buf_in", wdata, data_source::AT_SUBMISSION),
            UringData::Out if ok => ("buf_out", read_data, data_source::AT_COMPLETION),
            // Vectored: the iovecs' bytes, one after the other.
            UringData::InVec => ("buf_in", wdata, data_source::AT_SUBMISSION),
            UringData::OutVec if ok => ("buf_out", read_data, data_source::AT_COMPLETION),
            _ => ("", Vec::new(), data_source::NONE),
        };
        if !arg.is_empty() {
            if def.arg(arg).is_some_and(|(_, a)| mode.of(a.kind) == DataLevel::None) {
                ev.set_arg(arg, ArgValue::NotCaptured);
                ev.buffer_not_captured = true;
            } else if lost {
                ev.set_arg(arg, ArgValue::NotCaptured);
                ev.buffer_not_captured = true;
                source = data_source::NOT_CAPTURED;
            } else {
                ev.set_arg(arg, ArgValue::data(bytes));
                source = when;
            }
        }
    }
    int(&mut ev, "data_source", source);
    crate::common::hash_bulk(def, &mut ev, mode);
    ev
}

pub(crate) use crate::sink::ENTER_REF;

/// The key of the call (thread, per-thread call number) in [`ENTER_REF`].
pub fn enter_key(s: &UringRec) -> i64 {
    call_key(s.enter_tid, s.enter_seq)
}

/// The [`ENTER_REF`] key of call `seq` of thread `tid`.
pub fn call_key(tid: u32, seq: u32) -> i64 {
    (i64::from(tid) << 32) | i64::from(seq)
}

/// The ring descriptor of each recent `io_uring_enter`, by its [`call_key`]: a request's
/// completion names the call that submitted it, which may be many calls back (fio submits
/// one request per call, then waits in another: its requests complete during later calls).
/// At most [`MAX_IN_FLIGHT`] calls are kept, the oldest forgotten first (a request older
/// than that falls back on the descriptor its ring was last seen entered by).
#[derive(Default)]
pub struct EnterFds {
    fds: HashMap<i64, i64>,
    order: VecDeque<i64>,
}

impl EnterFds {
    /// Call `key` entered ring descriptor `fd`.
    pub fn insert(&mut self, key: i64, fd: i64) {
        if self.fds.insert(key, fd).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > MAX_IN_FLIGHT {
            if let Some(old) = self.order.pop_front() {
                self.fds.remove(&old);
            }
        }
    }

    /// The descriptor call `key` entered, if it is still kept.
    pub fn get(&self, key: i64) -> Option<i64> {
        self.fds.get(&key).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_fds_keeps_calls_many_calls_back_and_forgets_the_oldest_past_the_bound() {
        let mut e = EnterFds::default();
        e.insert(call_key(7, 1), 6);
        for seq in 2..100 {
            e.insert(call_key(7, seq), 9);
        }
        assert_eq!(e.get(call_key(7, 1)), Some(6), "a call 98 calls back");
        assert_eq!(e.get(call_key(8, 1)), None, "another thread's call");
        for seq in 100..(MAX_IN_FLIGHT as u32 + 2) {
            e.insert(call_key(7, seq), 9);
        }
        assert_eq!(e.get(call_key(7, 1)), None, "past the bound");
        assert_eq!(e.get(call_key(7, 2)), Some(9));
        assert_eq!(e.fds.len(), MAX_IN_FLIGHT);
    }
}
