//! Ring records back into [`Event`]s: a call's RK_DATA chunks are gathered per thread until its
//! RK_CALL record arrives, then the event is built from its registry entry exactly as the
//! ptrace backend builds it (same argument values, same `buffer_not_captured` rules).

use ra_syscalls::{ArgKind, Handler, Struct, SyscallDef};
use ra_trace::{ArgValue, Event, ExtraValue, IovValue};

use super::layout::*;
use crate::common::{hash_bulk, scalar, IdMap, Xarg};
use crate::{DataMode, Selection};

/// CLOCK_MONOTONIC (what BPF stamps) to wall-clock nanoseconds, by an offset measured once
/// at start-up (the recorder's clocks; NTP slewing during a recording is not followed).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    offset: i64,
}

impl Clock {
    pub fn now() -> Clock {
        let read = |id| {
            let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: clock_gettime writes one timespec.
            unsafe { libc::clock_gettime(id, &mut t) };
            t.tv_sec * 1_000_000_000 + t.tv_nsec
        };
        // The smallest bracket of three tries gives the offset to a microsecond or better.
        let mut best = (i64::MAX, 0);
        for _ in 0..3 {
            let a = read(libc::CLOCK_MONOTONIC);
            let w = read(libc::CLOCK_REALTIME);
            let b = read(libc::CLOCK_MONOTONIC);
            if b - a < best.0 {
                best = (b - a, w - (a + (b - a) / 2));
            }
        }
        Clock { offset: best.1 }
    }

    pub fn wall(&self, mono_ns: u64) -> i64 {
        mono_ns as i64 + self.offset
    }
}

/// An exec's path argument recovered from the kernel's `bprm->filename` (its entry copy
/// faulted: a child's first touch of a page it shares with its parent) back to what the
/// program passed. The kernel names an `execveat` relative to a descriptor N
/// "/dev/fd/N" (empty path, `AT_EMPTY_PATH`: fexecve) or "/dev/fd/N/PATH"; other names are
/// the argument as passed.
fn unbprm(def: &ra_syscalls::SyscallDef, args: &[u64; NARGS], v: &mut ArgValue) {
    let Some((d, _)) = def.arg("dirfd") else { return };
    let dirfd = args[d] as i32;
    let Some(name) = v.as_data() else { return };
    if dirfd < 0 {
        return;
    }
    // The copy keeps the string's NUL when it has one: so does the result.
    let (body, nul) = match name.strip_suffix(&[0]) {
        Some(b) => (b, true),
        None => (name, false),
    };
    let prefix = format!("/dev/fd/{dirfd}");
    let Some(rest) = body.strip_prefix(prefix.as_bytes()) else { return };
    let mut given = match rest {
        [] => Vec::new(),
        [b'/', tail @ ..] => tail.to_vec(),
        _ => return,
    };
    if nul {
        given.push(0);
    }
    *v = ArgValue::data(given);
}

/// The data of one vector (an iovec, a message, a string) as its chunks arrive.
#[derive(Clone, Debug, Default)]
struct Part {
    /// (segment index, its full length), in order.
    segs: Vec<(u16, u64)>,
    data: Vec<u8>,
    /// Past [`ra_trace::MAX_BUFFER_BYTES`] (more than a trace record holds): the bytes go
    /// into this digest, with their count, instead of `data`, so that memory stays bounded
    /// whatever the call's size (a 2 GiB `copy_file_range` of Python's test_largefile).
    digest: Option<(blake3::Hasher, u64)>,
    fault: bool,
    /// `data` is a string array back to back, each string with its NUL (DF_FLAT: the
    /// kernel's copy of an exec's argv or envp in the new image).
    flat: bool,
    /// DF_BPRM: the kernel's name of the executed file, not the argument as passed.
    bprm: bool,
}

/// The records of the call a thread is in, until its RK_CALL.
#[derive(Debug, Default)]
struct Partial {
    seq: u32,
    slots: [Vec<Part>; NSLOTS],
    nrec: u32,
}

/// Counters of what the assembler had to work around.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsmStats {
    /// Data records of calls that never got their RK_CALL (drop mode losses).
    pub orphan_records: u64,
    /// RK_CALL records whose data record count did not match (marked not captured).
    pub incomplete_calls: u64,
    /// RK_CALL records for a number the selection does not have (none expected).
    pub unknown_calls: u64,
}

/// A shared file mapping, as the process's mmap calls made it: where `mmappread` /
/// `mmappwrite` records find their descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Region {
    start: u64,
    end: u64,
    fd: i64,
    offset: i64,
    /// The mapped file's path (with its NUL), read from /proc/<pid>/map_files when the mmap
    /// was assembled; `None` when the mapping was already gone.
    path: Option<std::sync::Arc<[u8]>>,
}

/// The path of the file mapped at `[start, end)` in process `tgid`, with a terminating NUL
/// (as paths are stored), while the mapping exists.
fn mapped_path(tgid: u32, start: u64, end: u64) -> Option<std::sync::Arc<[u8]>> {
    use std::os::unix::ffi::OsStrExt;
    let p = std::fs::read_link(format!("/proc/{tgid}/map_files/{start:x}-{end:x}")).ok()?;
    let mut b = p.as_os_str().as_bytes().to_vec();
    b.push(0);
    Some(b.into())
}

/// The kernel's internal device number (`sb->s_dev`: major << 20 | minor) in the encoding
/// `stat` reports (glibc's makedev), so page records compare with `st_dev`.
fn user_dev(kdev: u32) -> i64 {
    libc::makedev(kdev >> 20, kdev & 0xf_ffff) as i64
}

/// The common fields of a process's last call, stamped on its page records.
#[derive(Clone, Copy, Debug, Default)]
struct Stamp {
    ppid: u32,
    uid: u32,
    gid: u32,
    pgid: u32,
    sid: u32,
}

/// Builds events from ring records.
pub struct Assembler {
    data: DataMode,
    by_nr: Vec<Option<&'static SyscallDef>>,
    clock: Clock,
    partial: IdMap<u32, Partial>,
    /// Shared file mappings per process (and private ones with `private_mappings`).
    regions: IdMap<u32, Vec<Region>>,
    /// `--mmap-private`: private file mappings have page records too.
    private_mappings: bool,
    stamps: IdMap<u32, Stamp>,
    pub stats: AsmStats,
}

const MAP_SHARED: i64 = 0x1;
const MAP_ANONYMOUS: i64 = 0x20;
const PAGE: u64 = 4096;

/// Most vectors a record may name (IOV_MAX messages, or argv strings): a bound on what a
/// corrupt record could make us allocate.
const MAX_VECTORS: usize = 1 << 17;

impl Assembler {
    pub fn new(selection: &Selection, data: DataMode, clock: Clock) -> Assembler {
        let mut by_nr = vec![None; MAX_NR];
        for d in selection.defs() {
            if let Some(slot) = d.nr_x86_64().and_then(|n| by_nr.get_mut(n as usize)) {
                *slot = Some(*d);
            }
        }
        Assembler {
            data,
            by_nr,
            clock,
            partial: IdMap::default(),
            regions: IdMap::default(),
            private_mappings: false,
            stamps: IdMap::default(),
            stats: AsmStats::default(),
        }
    }

    /// One chunk of a call's buffer: `payload` is the record's bytes, or what user space read
    /// for an RK_DEFER record; `fault` when they could not be read.
    pub fn chunk(&mut self, d: &DataRec<'_>, payload: &[u8], fault: bool) {
        self.piece(d, payload, fault, true);
    }

    /// [`Assembler::chunk`] in pieces: the record's bytes handed over one piece after another
    /// (`first` for the first), so that a large deferred copy is never held whole.
    pub fn piece(&mut self, d: &DataRec<'_>, payload: &[u8], fault: bool, first: bool) {
        let p = self.partial.entry(d.tid).or_default();
        if p.seq != d.seq {
            if p.nrec > 0 {
                self.stats.orphan_records += u64::from(p.nrec);
            }
            *p = Partial { seq: d.seq, ..Partial::default() };
        }
        if first {
            p.nrec += 1;
        }
        let Some(slot) = p.slots.get_mut(d.slot as usize) else { return };
        // A second copy of the slot (its first faulted at the call's entry): it replaces what
        // came before.
        if d.flags & DF_RESET != 0 {
            slot.clear();
            return;
        }
        let v = d.vec as usize;
        if v >= MAX_VECTORS {
            return;
        }
        if slot.len() <= v {
            slot.resize_with(v + 1, Part::default);
        }
        let part = &mut slot[v];
        if part.segs.last().is_none_or(|&(s, _)| s != d.seg) {
            part.segs.push((d.seg, d.seg_len));
        }
        match &mut part.digest {
            Some((h, n)) => {
                h.update(payload);
                *n += payload.len() as u64;
            }
            None if part.data.len() + payload.len() > ra_trace::MAX_BUFFER_BYTES => {
                let mut h = blake3::Hasher::new();
                h.update(&part.data);
                h.update(payload);
                let n = (part.data.len() + payload.len()) as u64;
                part.data = Vec::new();
                part.digest = Some((h, n));
            }
            None => part.data.extend_from_slice(payload),
        }
        part.fault |= fault || d.flags & DF_FAULT != 0;
        part.flat |= d.flags & DF_FLAT != 0;
        part.bprm |= d.flags & DF_BPRM != 0;
    }

    /// The common fields of a record the assembler did not get from a call (a page record, a
    /// generated exit): ids, and the process's last recorded parent, owner and session.
    pub fn stamp(&self, ev: &mut Event, tgid: u32, tid: u32) {
        let st = self.stamps.get(&tgid).copied().unwrap_or_default();
        ev.pid = Some(tgid as i32);
        ev.tid = Some(tid as i32);
        ev.ppid = Some(st.ppid as i32);
        ev.uid = Some(st.uid as i32);
        ev.gid = Some(st.gid as i32);
        ev.pgid = Some(st.pgid as i32);
        ev.sid = Some(st.sid as i32);
    }

    /// A thread ended: forget what it left unfinished.
    pub fn thread_gone(&mut self, tid: u32) {
        if let Some(p) = self.partial.remove(&tid) {
            self.stats.orphan_records += u64::from(p.nrec);
        }
    }

    /// The call record: the finished event (None for a number outside the selection).
    pub fn call(&mut self, c: &CallRec) -> Option<Event> {
        let partial = match self.partial.remove(&c.entry_tid) {
            Some(p) if p.seq == c.seq => p,
            Some(p) => {
                self.stats.orphan_records += u64::from(p.nrec);
                Partial::default()
            }
            None => Partial::default(),
        };
        let Some(def) = self.by_nr.get(c.nr as usize).copied().flatten() else {
            self.stats.unknown_calls += 1;
            return None;
        };
        let complete = partial.nrec == c.nrec;
        if !complete {
            self.stats.incomplete_calls += 1;
        }
        let mut ev = self.build(def, c, partial, complete);
        self.stamps.insert(
            c.tgid,
            Stamp { ppid: c.ppid, uid: c.uid, gid: c.gid, pgid: c.pgid, sid: c.sid },
        );
        self.track_mappings(c.tgid, &ev);
        hash_bulk(def, &mut ev, self.data);
        Some(ev)
    }

    /// Follow private file mappings too (`--mmap-private`: their reads have page records).
    pub fn with_private_mappings(mut self, on: bool) -> Assembler {
        self.private_mappings = on;
        self
    }

    /// A new process gets a copy of its parent's mappings.
    pub fn forked(&mut self, parent: u32, child: u32) {
        if let Some(r) = self.regions.get(&parent).cloned() {
            self.regions.insert(child, r);
        }
        if let Some(s) = self.stamps.get(&parent).copied() {
            self.stamps.insert(child, s);
        }
    }

    /// Follow the process's shared file mappings through its mmap / munmap / mremap / execve.
    fn track_mappings(&mut self, tgid: u32, ev: &Event) {
        if ev.errno != Some(0) {
            return;
        }
        let int = |n: &str| ev.arg(n).and_then(ArgValue::as_int).unwrap_or(0);
        let end = |start: u64, len: i64| start.saturating_add((len as u64).div_ceil(PAGE) * PAGE);
        match ev.def.and_then(|d| d.replay.handler()) {
            Some(Handler::Mmap) => {
                let start = ev.ret.unwrap_or(0) as u64;
                remove_range(
                    self.regions.entry(tgid).or_default(),
                    start,
                    end(start, int("length")),
                );
                let flags = int("flags");
                let recorded = flags & MAP_SHARED != 0
                    || (self.private_mappings && flags & MAP_ANONYMOUS == 0);
                if recorded && int("fd") >= 0 {
                    let end = end(start, int("length"));
                    self.regions.entry(tgid).or_default().push(Region {
                        start,
                        end,
                        fd: int("fd"),
                        offset: int("offset"),
                        path: mapped_path(tgid, start, end),
                    });
                }
            }
            Some(Handler::Munmap) => {
                let start = int("addr") as u64;
                remove_range(
                    self.regions.entry(tgid).or_default(),
                    start,
                    end(start, int("length")),
                );
            }
            Some(Handler::Mremap) => {
                let old = int("old_address") as u64;
                let v = self.regions.entry(tgid).or_default();
                let moved = v.iter().find(|r| r.start <= old && old < r.end).cloned();
                remove_range(v, old, end(old, int("old_size")));
                if let Some(r) = moved {
                    let start = ev.ret.unwrap_or(0) as u64;
                    let offset = r.offset + (old - r.start) as i64;
                    remove_range(v, start, end(start, int("new_size")));
                    let end = end(start, int("new_size"));
                    v.push(Region { start, end, fd: r.fd, offset, path: r.path });
                }
            }
            Some(Handler::Exec) => {
                self.regions.remove(&tgid);
            }
            _ => {}
        }
    }

    /// A page record: an `mmappread` or `mmappwrite` event.
    /// A ring timestamp (CLOCK_MONOTONIC) as wall-clock nanoseconds.
    pub fn wall(&self, mono_ns: u64) -> i64 {
        self.clock.wall(mono_ns)
    }

    pub fn page(&mut self, p: &PageRec<'_>) -> Option<Event> {
        let name = if p.flags & PG_WRITE != 0 { "mmappwrite" } else { "mmappread" };
        let def = ra_syscalls::lookup(name)?;
        let mut ev = Event::new(def);
        let t = self.clock.wall(p.ts);
        ev.time_called = Some(t);
        ev.time_returned = Some(t);
        self.stamp(&mut ev, p.tgid, p.tid);
        ev.ret = Some(PAGE as i64);
        ev.errno = Some(0);
        // The descriptor the mapping was made with and the file's path, when this recording
        // saw the mmap; the file's identity from the kernel's own mapping in every case.
        let region = self
            .regions
            .get(&p.tgid)
            .and_then(|v| v.iter().find(|r| r.start <= p.addr && p.addr < r.end));
        ev.set_arg("fd", ArgValue::Int(region.map_or(-1, |r| r.fd)));
        ev.set_arg("count", ArgValue::Int(PAGE as i64));
        ev.set_arg("offset", ArgValue::Int(p.off as i64));
        ev.set_arg("address", ArgValue::Int(p.addr as i64));
        ev.set_arg("device", ArgValue::Int(user_dev(p.dev)));
        ev.set_arg("inode", ArgValue::Int(p.ino as i64));
        if let Some(path) = region.and_then(|r| r.path.as_deref()) {
            ev.set_arg("pathname", ArgValue::data(path.to_vec()));
        }
        let buf = if p.flags & PG_NOT_CAPTURED != 0 {
            ev.buffer_not_captured = true;
            ArgValue::NotCaptured
        } else {
            if p.flags & PG_FAULT != 0 {
                ev.buffer_not_captured = true;
            }
            ArgValue::data(p.payload.to_vec())
        };
        ev.set_arg("buf", buf);
        hash_bulk(def, &mut ev, self.data);
        Some(ev)
    }

    fn build(
        &self,
        def: &'static SyscallDef,
        c: &CallRec,
        mut partial: Partial,
        complete: bool,
    ) -> Event {
        let mut ev = Event::new(def);
        ev.time_called = Some(self.clock.wall(c.ts_enter));
        ev.pid = Some(c.tgid as i32);
        // The thread that made the call (an execve from a non-leader thread returns as the
        // leader: the records after it carry the new id).
        ev.tid = Some(c.entry_tid as i32);
        ev.ppid = Some(c.ppid as i32);
        ev.uid = Some(c.uid as i32);
        ev.gid = Some(c.gid as i32);
        ev.pgid = Some(c.pgid as i32);
        ev.sid = Some(c.sid as i32);
        if c.flags & CF_NO_RETURN == 0 {
            ev.time_returned = Some(self.clock.wall(c.ts_exit));
            // The kernel's error convention: -4095..-1 is -errno.
            if (-4095..0).contains(&c.ret) {
                ev.ret = Some(-1);
                ev.errno = Some(-c.ret as i32);
            } else {
                ev.ret = Some(c.ret);
                ev.errno = Some(0);
            }
        }
        for (i, a) in def.args.iter().enumerate().take(NARGS) {
            let raw = c.args[i];
            let status = c.status[i];
            let parts = std::mem::take(&mut partial.slots[i]);
            let bprm = parts.iter().any(|p| p.bprm);
            ev.args[i] = match a.kind {
                ArgKind::Int | ArgKind::Fd | ArgKind::DirFd | ArgKind::Flags(_) | ArgKind::Mode => {
                    ArgValue::Int(scalar(def, i, raw))
                }
                // A socklen_t * records what it points to after the call.
                ArgKind::Addr if status == ST_OK => ArgValue::Int(c.aux[i] as i64),
                ArgKind::Addr => ArgValue::Int(scalar(def, i, raw)),
                _ if raw == 0 => ArgValue::Absent,
                _ => match status {
                    ST_NOT_CAPTURED => {
                        ev.buffer_not_captured = true;
                        ArgValue::NotCaptured
                    }
                    ST_OK | ST_FAULT | ST_TRUNC => {
                        let n = c.nvec[i] as usize;
                        let faulted = status == ST_FAULT || parts.iter().any(|p| p.fault);
                        // Memory the kernel could not read either (the call failed with EFAULT)
                        // is recorded as far as it was readable, not as a capture loss (the
                        // ptrace recorder's rule too).
                        let kernel_faulted = faulted && ev.errno == Some(libc::EFAULT);
                        if (status != ST_OK || faulted || !complete) && !kernel_faulted {
                            ev.buffer_not_captured = true;
                        }
                        if parts.iter().any(|p| p.digest.is_some())
                            && (a.kind.is_vector() || a.kind == ArgKind::StrArray)
                        {
                            // Only a single buffer has a digest form in the trace.
                            ev.buffer_not_captured = true;
                            ArgValue::NotCaptured
                        } else {
                            value(a.kind, parts, n)
                        }
                    }
                    ST_UNKNOWN_LEN if !a.kind.is_output() => ArgValue::NotCaptured,
                    _ => ArgValue::Absent,
                },
            };
            if bprm {
                unbprm(def, &c.args, &mut ev.args[i]);
            }
        }
        if c.status[XARG] == ST_OK {
            if let (Some(p), Some((x, ..))) = (partial.slots[XARG].first(), Xarg::of_call(def)) {
                ev.extra = x.columns(&p.data);
            }
        }
        if ra_syscalls::io_class(def.name) == ra_syscalls::IoClass::Read {
            let pages = ExtraValue::Int(i64::from(c.added_pages));
            ev.extra.push((ra_trace::schema::CACHE_MISS_PAGES.into(), pages));
        }
        ev
    }
}

/// Cut [start, end) out of a process's mappings.
fn remove_range(v: &mut Vec<Region>, start: u64, end: u64) {
    let mut out = Vec::with_capacity(v.len());
    for r in v.drain(..) {
        if r.end <= start || end <= r.start {
            out.push(r);
            continue;
        }
        if r.start < start {
            out.push(Region { end: start, ..r.clone() });
        }
        if end < r.end {
            out.push(Region { start: end, offset: r.offset + (end - r.start) as i64, ..r });
        }
    }
    *v = out;
}

/// The value of a pointer argument from its vectors (`n`: how many the BPF walk covered).
fn value(kind: ArgKind, parts: Vec<Part>, n: usize) -> ArgValue {
    let vectors = |mut parts: Vec<Part>| {
        if parts.len() < n.min(MAX_VECTORS) {
            parts.resize_with(n.min(MAX_VECTORS), Part::default);
        }
        parts
    };
    if kind == ArgKind::StrArray && parts.first().is_some_and(|p| p.flat) {
        // "a\0b\0": one string per NUL-terminated piece ("\0": one empty string).
        let flat = &parts[0].data;
        if flat.is_empty() {
            return ArgValue::Strings(Vec::new());
        }
        let body = flat.strip_suffix(&[0]).unwrap_or(flat);
        return ArgValue::Strings(body.split(|&b| b == 0).map(<[u8]>::to_vec).collect());
    }
    if kind == ArgKind::StrArray {
        return ArgValue::Strings(
            vectors(parts)
                .into_iter()
                .map(|mut p| {
                    if p.data.last() == Some(&0) {
                        p.data.pop();
                    }
                    p.data
                })
                .collect(),
        );
    }
    if kind.is_vector() {
        let mmsg = matches!(
            kind,
            ArgKind::InStruct(Struct::Mmsghdr, _) | ArgKind::InOutStruct(Struct::Mmsghdr, _)
        );
        return ArgValue::Iov(
            vectors(parts)
                .into_iter()
                .map(|p| IovValue {
                    requested: if mmsg {
                        p.segs.iter().map(|s| s.1).sum()
                    } else {
                        p.segs.first().map_or(0, |s| s.1)
                    },
                    data: Some(p.data.into()),
                })
                .collect(),
        );
    }
    match parts.into_iter().next() {
        Some(Part { digest: Some((h, len)), .. }) => {
            ArgValue::Hashed { len, blake3: *h.finalize().as_bytes() }
        }
        Some(p) => ArgValue::data(p.data),
        None => ArgValue::data(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_names_recovered_from_the_kernel_are_the_arguments_again() {
        let def = ra_syscalls::lookup("execveat").unwrap();
        let (d, _) = def.arg("dirfd").unwrap();
        let run = |dirfd: i64, name: &[u8]| {
            let mut args = [0u64; NARGS];
            args[d] = dirfd as u64;
            let mut v = ArgValue::data(name.to_vec());
            unbprm(def, &args, &mut v);
            v.as_data().unwrap().to_vec()
        };
        assert_eq!(run(3, b"/dev/fd/3\0"), b"\0", "fexecve: the empty path");
        assert_eq!(run(3, b"/dev/fd/3"), b"");
        assert_eq!(run(7, b"/dev/fd/7/bin/sh\0"), b"bin/sh\0", "relative to the descriptor");
        assert_eq!(run(7, b"/dev/fd/70\0"), b"/dev/fd/70\0", "another descriptor's name");
        assert_eq!(run(-100, b"/usr/bin/env\0"), b"/usr/bin/env\0", "AT_FDCWD: as passed");
        let execve = ra_syscalls::lookup("execve").unwrap();
        let mut v = ArgValue::data(b"/dev/fd/3\0".to_vec());
        unbprm(execve, &[3, 0, 0, 0, 0, 0], &mut v);
        assert_eq!(v.as_data().unwrap(), b"/dev/fd/3\0", "execve has no dirfd");
    }

    #[allow(clippy::too_many_arguments)]
    fn data<'a>(
        tid: u32,
        seq: u32,
        slot: u8,
        vec: u32,
        seg_len: u64,
        off: u64,
        p: &'a [u8],
        flags: u8,
    ) -> DataRec<'a> {
        DataRec {
            tid,
            tgid: tid,
            seq,
            slot,
            flags,
            seg: 0,
            vec,
            len: p.len() as u32,
            seg_len,
            off,
            addr: 0,
            payload: p,
        }
    }

    /// Thread 7's call 1: `write(3, buf, len) = len`, its buffer in `nrec` data records.
    fn write_of(len: u64, nrec: u32) -> CallRec {
        let mut c = CallRec {
            tid: 7,
            seq: 1,
            entry_tid: 7,
            tgid: 7,
            nr: 1,
            ret: len as i64,
            nrec,
            ..CallRec::default()
        };
        c.args = [3, 0x1000, len, 0, 0, 0];
        c.status[1] = ST_OK;
        c.nvec[1] = 1;
        c
    }

    fn asm() -> Assembler {
        Assembler::new(&Selection::parse("all").unwrap(), DataMode::FULL, Clock { offset: 1000 })
    }

    #[test]
    fn a_write_and_a_readv_are_rebuilt_from_chunks() {
        let mut a = asm();
        let d = data(7, 1, 1, 0, 10, 0, b"hello", 0);
        a.chunk(&d, d.payload, false);
        let d = data(7, 1, 1, 0, 10, 5, b"world", 0);
        a.chunk(&d, d.payload, false);
        let ev = a.call(&write_of(10, 2)).unwrap();
        assert_eq!(ev.name, "write");
        assert_eq!(ev.arg("buf"), Some(&ArgValue::data(b"helloworld".to_vec())));
        assert_eq!((ev.ret, ev.errno, ev.time_called), (Some(10), Some(0), Some(1000)));
        assert!(!ev.buffer_not_captured);

        // readv of 3 vectors, 6 bytes filled into the first two; the third got nothing.
        for (v, len, p) in [(0u32, 4u64, &b"abcd"[..]), (1, 4, b"ef"), (2, 8, b"")] {
            let d = data(7, 2, 1, v, len, 0, p, 0);
            a.chunk(&d, d.payload, false);
        }
        let c = CallRec {
            tid: 7,
            seq: 2,
            entry_tid: 7,
            nr: 19,
            ret: 6,
            nrec: 3,
            args: [3, 0x2000, 3, 0, 0, 0],
            status: [0, ST_OK, 0, 0, 0, 0, 0],
            nvec: [0, 3, 0, 0, 0, 0, 0],
            ..CallRec::default()
        };
        let ev = a.call(&c).unwrap();
        let ArgValue::Iov(v) = ev.arg("iov").unwrap() else { panic!() };
        let got: Vec<(u64, &[u8])> =
            v.iter().map(|x| (x.requested, x.data.as_deref().unwrap())).collect();
        assert_eq!(got, vec![(4, &b"abcd"[..]), (4, b"ef"), (8, b"")]);
    }

    /// A buffer larger than a trace record holds (a 300 MiB write, its bytes read in 4 MiB
    /// pieces from one deferred record) becomes its length and BLAKE3 digest as it arrives:
    /// the assembler never holds it whole (a 1 GiB `dd` had the recorder at 2.3 GB).
    #[test]
    fn a_buffer_past_the_record_limit_is_digested_as_it_arrives() {
        let mut a = asm();
        let total = ra_trace::MAX_BUFFER_BYTES + (44 << 20);
        let piece = vec![7u8; 4 << 20];
        let d = data(7, 1, 1, 0, total as u64, 0, b"", 0);
        let mut whole = blake3::Hasher::new();
        for i in 0..total / piece.len() {
            a.piece(&d, &piece, false, i == 0);
            whole.update(&piece);
        }
        let held: usize = a.partial[&7].slots[1].iter().map(|p| p.data.capacity()).sum();
        assert_eq!(held, 0, "bytes held once past the limit");
        let ev = a.call(&write_of(total as u64, 1)).unwrap();
        assert_eq!(
            ev.arg("buf"),
            Some(&ArgValue::Hashed { len: total as u64, blake3: *whole.finalize().as_bytes() })
        );
        assert!(!ev.buffer_not_captured);
    }

    #[test]
    fn failures_absence_and_orphans() {
        let mut a = asm();
        // read that failed: the output buffer is absent, errno from -ret.
        let c = CallRec {
            tid: 5,
            seq: 1,
            entry_tid: 5,
            nr: 0,
            ret: -9,
            args: [99, 0x10, 4, 0, 0, 0],
            status: [0, ST_ABSENT, 0, 0, 0, 0, 0],
            ..CallRec::default()
        };
        let ev = a.call(&c).unwrap();
        assert_eq!((ev.ret, ev.errno), (Some(-1), Some(9)));
        assert_eq!(ev.arg("buf"), Some(&ArgValue::Absent));
        // Chunks of a call that was dropped (seq 2) are discarded when seq 3 arrives.
        let d = data(5, 2, 1, 0, 3, 0, b"xyz", 0);
        a.chunk(&d, d.payload, false);
        let d = data(5, 3, 1, 0, 2, 0, b"ok", 0);
        a.chunk(&d, d.payload, false);
        let c = CallRec {
            tid: 5,
            seq: 3,
            entry_tid: 5,
            nr: 1,
            ret: 2,
            nrec: 1,
            args: [1, 0x10, 2, 0, 0, 0],
            status: [0, ST_OK, 0, 0, 0, 0, 0],
            nvec: [0, 1, 0, 0, 0, 0, 0],
            ..CallRec::default()
        };
        let ev = a.call(&c).unwrap();
        assert_eq!(ev.arg("buf"), Some(&ArgValue::data(b"ok".to_vec())));
        assert_eq!(a.stats.orphan_records, 1);
        // A copy that faulted where the kernel's did not (the call wrote 8 bytes): what was
        // read, and the flag. Where the kernel faulted too (EFAULT): no loss, no flag.
        for (seq, ret, lost) in [(4, 8, true), (5, -14, false)] {
            let d = data(5, seq, 1, 0, 8, 0, b"", DF_FAULT);
            a.chunk(&d, d.payload, false);
            let c = CallRec {
                tid: 5,
                seq,
                entry_tid: 5,
                nr: 1,
                ret,
                nrec: 1,
                args: [1, 0x10, 8, 0, 0, 0],
                status: [0, ST_FAULT, 0, 0, 0, 0, 0],
                nvec: [0, 1, 0, 0, 0, 0, 0],
                ..CallRec::default()
            };
            let ev = a.call(&c).unwrap();
            assert_eq!(ev.buffer_not_captured, lost, "ret {ret}");
            assert_eq!(ev.arg("buf"), Some(&ArgValue::data(Vec::new())));
        }
    }

    #[test]
    fn kernel_device_numbers_become_st_dev() {
        // sda1 (8:1), a loop device (7:3), a virtio disk (254:16), a large minor (259:300).
        for (major, minor, st_dev) in [(8u32, 1u32, 0x801i64), (7, 3, 0x703), (254, 16, 0xfe10)] {
            assert_eq!(user_dev(major << 20 | minor), st_dev);
        }
        assert_eq!(user_dev(259 << 20 | 300), libc::makedev(259, 300) as i64);
    }

    #[test]
    fn page_records_find_the_descriptor_of_their_mapping() {
        let mut a = asm();
        // mmap(NULL, 3 pages, PROT_READ|PROT_WRITE, MAP_SHARED, fd 5, offset 8192) = 0x10000
        let c = CallRec {
            tid: 4,
            seq: 1,
            entry_tid: 4,
            tgid: 4,
            nr: 9,
            ret: 0x10000,
            args: [0, 3 * 4096, 3, 1, 5, 8192],
            ..CallRec::default()
        };
        a.call(&c).unwrap();
        let page = |flags, addr| PageRec {
            tid: 4,
            tgid: 4,
            flags,
            ts: 1,
            addr,
            off: 12288,
            ino: 1,
            dev: 1,
            payload: &[7u8; 4096],
        };
        let ev = a.page(&page(PG_WRITE, 0x11000)).unwrap();
        assert_eq!(ev.name, "mmappwrite");
        assert_eq!(
            (ev.arg("fd"), ev.arg("offset")),
            (Some(&ArgValue::Int(5)), Some(&ArgValue::Int(12288)))
        );
        assert_eq!(ev.arg("buf").and_then(ArgValue::as_data).map(<[u8]>::len), Some(4096));
        // munmap of the middle page: that page has no mapping any more.
        let c = CallRec {
            tid: 4,
            seq: 2,
            entry_tid: 4,
            tgid: 4,
            nr: 11,
            ret: 0,
            args: [0x11000, 4096, 0, 0, 0, 0],
            ..CallRec::default()
        };
        a.call(&c).unwrap();
        assert_eq!(a.page(&page(PG_READ, 0x11000)).unwrap().arg("fd"), Some(&ArgValue::Int(-1)));
        let ev = a.page(&page(PG_READ, 0x12000)).unwrap();
        assert_eq!((ev.name.as_str(), ev.arg("fd")), ("mmappread", Some(&ArgValue::Int(5))));
    }

    #[test]
    fn a_flat_string_area_splits_at_its_nuls() {
        let flat = |d: &[u8]| {
            let p = Part { data: d.to_vec(), flat: true, ..Part::default() };
            value(ArgKind::StrArray, vec![p], 0)
        };
        let strings = |v: &[&[u8]]| ArgValue::Strings(v.iter().map(|s| s.to_vec()).collect());
        assert_eq!(flat(b""), strings(&[]));
        assert_eq!(flat(b"\0"), strings(&[b""]));
        assert_eq!(flat(b"true\0"), strings(&[b"true"]));
        assert_eq!(flat(b"a\0\0b\0"), strings(&[b"a", b"", b"b"]));
        // Cut before the last NUL (a truncated area): the last string as far as it goes.
        assert_eq!(flat(b"a\0bc"), strings(&[b"a", b"bc"]));
    }

    #[test]
    fn exit_group_never_returns_and_execve_strings_drop_their_nul() {
        let mut a = asm();
        let c = CallRec {
            tid: 9,
            seq: 1,
            entry_tid: 9,
            nr: 231,
            flags: CF_NO_RETURN,
            args: [3, 0, 0, 0, 0, 0],
            ..CallRec::default()
        };
        let ev = a.call(&c).unwrap();
        assert_eq!((ev.ret, ev.errno, ev.time_returned), (None, None, None));
        assert_eq!(ev.arg("status"), Some(&ArgValue::Int(3)));
        for (slot, vec, s) in
            [(0u8, 0u32, &b"/bin/true\0"[..]), (1, 0, b"true\0"), (1, 1, b"-x\0"), (2, 0, b"A=1\0")]
        {
            let d = data(9, 2, slot, vec, 0, 0, s, DF_END);
            a.chunk(&d, d.payload, false);
        }
        let c = CallRec {
            tid: 9,
            seq: 2,
            entry_tid: 9,
            nr: 59,
            ret: 0,
            nrec: 4,
            args: [1, 2, 3, 0, 0, 0],
            status: [ST_OK, ST_OK, ST_OK, 0, 0, 0, 0],
            nvec: [1, 2, 1, 0, 0, 0, 0],
            ..CallRec::default()
        };
        let ev = a.call(&c).unwrap();
        assert_eq!(ev.arg("pathname"), Some(&ArgValue::data(b"/bin/true\0".to_vec())));
        assert_eq!(
            ev.arg("argv"),
            Some(&ArgValue::Strings(vec![b"true".to_vec(), b"-x".to_vec()]))
        );
        assert_eq!(ev.arg("envp"), Some(&ArgValue::Strings(vec![b"A=1".to_vec()])));
    }
}
