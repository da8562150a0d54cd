//! The FUSE-over-io_uring transport (Linux 6.14+, `CONFIG_FUSE_IO_URING`, the `fuse` module's
//! `enable_uring` parameter). The kernel keeps one queue per possible CPU and puts a request
//! into the queue of the CPU its caller runs on, in a ring
//! entry's buffers (its `fuse_in_header` and fixed argument in a header buffer, the rest in a
//! payload buffer), and completes that entry's pending command; the thread answers it and asks
//! for the next request in one command, `FUSE_IO_URING_CMD_COMMIT_AND_FETCH`. No read or write
//! of /dev/fuse on the way. With `per_cpu` (`--fast`) each queue has a ring and a thread pinned
//! to its CPU; otherwise one thread serves every queue's entries from one ring, one request at
//! a time, so that the trace's order is the order the answers were given in (a reply is sent
//! before its record is written: two threads could write a program's second operation before
//! its first).
//!
//! Requests are parsed, dispatched and answered by fuser's own code (the [`RawDispatcher`] of
//! vendor/fuser's patch): each request is laid out as /dev/fuse delivers it — header, fixed
//! argument, payload — in a per-thread buffer, so the handlers may keep using the request's
//! bytes (a write's data, a name) after they answered, while the kernel already fills the
//! entry with the next request. The reply is copied into the entry's buffers and committed at
//! once (before the operation is traced, as on /dev/fuse).
//!
//! What stays on /dev/fuse (fuser's session thread): FORGET and BATCH_FORGET, INTERRUPT, and
//! whatever arrives before every queue has an entry registered.
//!
//! Layout of the kernel's structures (include/uapi/linux/fuse.h, ABI 7.42): the header buffer
//! is `fuse_uring_req_header` { in_out: [u8; 128] (fuse_in_header on fetch, fuse_out_header on
//! commit), op_in: [u8; 128] (the request's first argument), ring_ent_in_out: { flags: u64,
//! commit_id: u64, payload_sz: u32, padding: u32, reserved: u64 } }; the command area of the
//! SQE128 holds `fuse_uring_cmd_req` { flags: u64, commit_id: u64, qid: u16, padding: [u8; 6] }.

use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use fuser::{Dispatched, Filesystem, RawDispatcher, RawReplySender};
use io_uring::{cqueue, opcode, squeue, types, IoUring};

const FUSE_IO_URING_CMD_REGISTER: u32 = 1;
const FUSE_IO_URING_CMD_COMMIT_AND_FETCH: u32 = 2;
const IN_HEADER: usize = 40;
const OUT_HEADER: usize = 16;
const HEADER_AREA: usize = 128;
const OP_IN_AREA: usize = 128;
/// Offset of `ring_ent_in_out` in the header buffer.
const ENT_IN_OUT: usize = HEADER_AREA + OP_IN_AREA;
/// Size of `fuse_uring_req_header`.
const REQ_HEADER: usize = ENT_IN_OUT + 32;
/// user_data of the poll on the stop eventfd.
const STOP: u64 = u64::MAX;

/// Entries per queue (libfuse's default).
pub const QUEUE_DEPTH: usize = 8;

/// The CPUs the kernel makes queues for (`num_possible_cpus`).
pub fn possible_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|s| {
            s.trim()
                .split(',')
                .map(|r| match r.split_once('-') {
                    Some((_, b)) => b.parse::<usize>().ok().map(|b| b + 1),
                    None => r.parse::<usize>().ok().map(|a| a + 1),
                })
                .max()
                .flatten()
        })
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Why this machine cannot serve a mount over io_uring, or `None` when it can: the fuse
/// module's `enable_uring` parameter, and a 128-byte-SQE ring being creatable (io_uring
/// may be disabled by `kernel.io_uring_disabled`, or by a seccomp policy).
pub fn unavailable() -> Option<String> {
    match std::fs::read_to_string(ENABLE_PARAM) {
        Ok(s) if s.trim() == "Y" || s.trim() == "1" => {}
        Ok(_) => {
            return Some(format!(
                "the kernel's FUSE-over-io_uring is off ({ENABLE_PARAM} is N; as root: echo 1 > \
                 {ENABLE_PARAM})"
            ))
        }
        Err(e) => {
            return Some(format!(
                "this kernel has no FUSE-over-io_uring ({ENABLE_PARAM}: {e}; it needs Linux 6.14+ \
                 with CONFIG_FUSE_IO_URING)"
            ))
        }
    }
    match IoUring::<squeue::Entry128, cqueue::Entry>::builder().build(2) {
        Ok(_) => None,
        Err(e) => Some(format!("io_uring is not available to this process ({e})")),
    }
}

/// The fuse module's switch for FUSE-over-io_uring.
pub const ENABLE_PARAM: &str = "/sys/module/fuse/parameters/enable_uring";

/// One serving thread's ring (its entries may belong to several of the kernel's queues) and
/// its submission lock (replies may come from any thread).
struct Ring {
    ring: IoUring<squeue::Entry128, cqueue::Entry>,
    sq: Mutex<()>,
    fd: i32,
}

impl Ring {
    /// Push one SQE and submit it.
    fn push(&self, sqe: &squeue::Entry128) -> io::Result<()> {
        let _g = self.sq.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: every push to this ring's submission queue happens under `sq`; the SQE's
        // buffers (a REGISTER's iovecs and the entry's buffers) live as long as the queue's
        // thread, which outlives the ring's use of them (the ring is dropped after the loop).
        unsafe {
            let mut q = self.ring.submission_shared();
            if q.push(sqe).is_err() {
                drop(q);
                self.ring.submit()?;
                let mut q = self.ring.submission_shared();
                q.push(sqe).map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        self.ring.submit()?;
        Ok(())
    }

    fn cmd(
        &self,
        cmd_op: u32,
        qid: u16,
        commit_id: u64,
        user_data: u64,
        iov: Option<u64>,
    ) -> squeue::Entry128 {
        let mut cmd = [0u8; 80];
        cmd[8..16].copy_from_slice(&commit_id.to_ne_bytes());
        cmd[16..18].copy_from_slice(&qid.to_ne_bytes());
        let sqe = opcode::UringCmd80::new(types::Fd(self.fd), cmd_op)
            .cmd(cmd)
            .addr(iov)
            .build()
            .user_data(user_data);
        if iov.is_none() {
            return sqe;
        }
        // REGISTER gives its two buffers as an iovec array: `sqe->len` = 2, which io-uring's
        // UringCmd80 builder does not set.
        // SAFETY: Entry128 is a repr(C) io_uring_sqe (64 bytes) followed by 64 bytes of command
        // data, plain integers throughout; `len` is the u32 at offset 24 of io_uring_sqe.
        let mut raw: [u8; 128] = unsafe { std::mem::transmute(sqe) };
        raw[24..28].copy_from_slice(&2u32.to_ne_bytes());
        // SAFETY: as above, any bit pattern is a valid Entry128.
        unsafe { std::mem::transmute::<[u8; 128], squeue::Entry128>(raw) }
    }
}

/// One ring entry: its header and payload buffers (registered with the kernel once) and the
/// request it holds.
struct Entry {
    queue: Arc<Ring>,
    /// The kernel's queue (CPU) this entry is registered with.
    qid: u16,
    idx: u64,
    header: *mut u8,
    payload: *mut u8,
    payload_len: usize,
    /// The request in the entry (its commit id is its `unique`).
    commit_id: AtomicU64,
    /// Whether the current request has been answered (committed).
    answered: AtomicBool,
    /// Set when a commit failed (the connection is going away).
    failed: AtomicBool,
}

// SAFETY: the buffers behind the pointers are owned by the queue thread for the ring's whole
// life; the kernel writes them only while the entry waits for a request (after a commit), and
// we write them only while it holds one (between its CQE and the commit), one side at a time.
unsafe impl Send for Entry {}
// SAFETY: as above; the atomics order the hand-over.
unsafe impl Sync for Entry {}

impl RawReplySender for Entry {
    fn send(&self, bufs: &[IoSlice<'_>]) -> io::Result<()> {
        if self.answered.swap(true, Ordering::AcqRel) {
            return Err(io::Error::other("a second reply to one FUSE request"));
        }
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let mut hdr = [0u8; OUT_HEADER];
        let mut filled = 0;
        let mut data_len = 0usize;
        let mut error = None;
        for b in bufs {
            let mut b: &[u8] = b;
            if filled < OUT_HEADER {
                let n = b.len().min(OUT_HEADER - filled);
                hdr[filled..filled + n].copy_from_slice(&b[..n]);
                filled += n;
                b = &b[n..];
            }
            if b.is_empty() {
                continue;
            }
            if data_len + b.len() > self.payload_len {
                error = Some(total);
                break;
            }
            // SAFETY: payload has payload_len bytes, checked above; the kernel does not touch
            // the entry's buffers until the commit below.
            unsafe {
                std::ptr::copy_nonoverlapping(b.as_ptr(), self.payload.add(data_len), b.len())
            };
            data_len += b.len();
        }
        if filled < OUT_HEADER {
            return Err(io::Error::other("a FUSE reply shorter than its header"));
        }
        if error.is_some() {
            // Larger than the entry's payload: answer EIO instead of a truncated reply.
            hdr[4..8].copy_from_slice(&(-libc::EIO).to_ne_bytes());
            data_len = 0;
        }
        hdr[0..4].copy_from_slice(&((OUT_HEADER + data_len) as u32).to_ne_bytes());
        // SAFETY: the header buffer has REQ_HEADER bytes; in_out is its first 128 and
        // ring_ent_in_out's payload_sz is at ENT_IN_OUT + 16.
        unsafe {
            std::ptr::copy_nonoverlapping(hdr.as_ptr(), self.header, OUT_HEADER);
            std::ptr::write_unaligned(
                self.header.add(ENT_IN_OUT + 16).cast::<u32>(),
                data_len as u32,
            );
        }
        let sqe = self.queue.cmd(
            FUSE_IO_URING_CMD_COMMIT_AND_FETCH,
            self.qid,
            self.commit_id.load(Ordering::Acquire),
            self.idx,
            None,
        );
        if let Err(e) = self.queue.push(&sqe) {
            self.failed.store(true, Ordering::Relaxed);
            return Err(e);
        }
        if error.is_some() {
            return Err(io::Error::other("a FUSE reply larger than the ring entry's payload"));
        }
        Ok(())
    }
}

/// The running queues.
pub struct Rings {
    threads: Vec<JoinHandle<io::Result<u64>>>,
    stops: Vec<OwnedFd>,
    /// Queues registered: one per possible CPU ([`possible_cpus`]), as the kernel makes them.
    pub queues: usize,
    /// Ring entries registered on each queue ([`QUEUE_DEPTH`] from [`crate::mount`]).
    pub depth: usize,
    /// Bytes of payload buffer per entry ([`payload_size`]).
    pub payload: usize,
}

/// An aligned, zeroed buffer that lives as long as its queue thread.
struct Buf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Buf {
    fn new(len: usize) -> io::Result<Buf> {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096)
            .map_err(|_| io::Error::other("bad ring buffer size"))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(io::Error::from_raw_os_error(libc::ENOMEM));
        }
        Ok(Buf { ptr, layout })
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: allocated in Buf::new with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// The payload size the kernel asks every entry for: `max(8 KiB, max_write, max_pages ×
/// page size)` (fuse_uring_create).
pub fn payload_size(max_write: usize) -> usize {
    let page = rustix::param::page_size();
    let pages = max_write.div_ceil(page);
    (8192usize).max(max_write).max(pages * page)
}

/// Register `depth` entries on each possible CPU's queue of the connection `dev` (after INIT,
/// with FUSE_OVER_IO_URING settled) and serve them with `dispatcher`: with `per_cpu`, one
/// thread per queue pinned to its CPU; without, one thread serving every queue's entries from
/// one ring, so that requests are served one at a time in the order they are taken (the
/// trace's order is then the order the kernel got its answers in, as with one /dev/fuse
/// thread). Returns once every thread has submitted its registrations (the kernel then sends
/// requests to the rings).
pub fn start<FS: Filesystem + 'static>(
    dev: BorrowedFd<'_>,
    dispatcher: RawDispatcher<FS>,
    depth: usize,
    payload: usize,
    per_cpu: bool,
) -> io::Result<Rings> {
    let dispatcher = Arc::new(dispatcher);
    let queues = possible_cpus();
    let all: Vec<u16> = (0..queues as u16).collect();
    let groups: Vec<(Option<usize>, Vec<u16>)> = if per_cpu {
        all.iter().map(|&q| (Some(q as usize), vec![q])).collect()
    } else {
        vec![(None, all)]
    };
    let mut rings = Rings {
        threads: Vec::with_capacity(groups.len()),
        stops: Vec::with_capacity(groups.len()),
        queues,
        depth,
        payload,
    };
    let (tx, rx) = std::sync::mpsc::channel::<io::Result<()>>();
    let n = groups.len();
    for (i, (pin, qids)) in groups.into_iter().enumerate() {
        let spawned = (|| -> io::Result<()> {
            let dev = rustix::io::fcntl_dupfd_cloexec(dev, 0)?;
            let stop = rustix::event::eventfd(0, rustix::event::EventfdFlags::CLOEXEC)?;
            let stop_fd = stop.as_raw_fd();
            let d = dispatcher.clone();
            let tx = tx.clone();
            let t = std::thread::Builder::new()
                .name(format!("fs-uring-{i}"))
                .spawn(move || serve(&qids, pin, dev, stop_fd, d, depth, payload, tx))?;
            rings.stops.push(stop);
            rings.threads.push(t);
            Ok(())
        })();
        if let Err(e) = spawned {
            rings.stop();
            return Err(e);
        }
    }
    drop(tx);
    for _ in 0..n {
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                rings.stop();
                return Err(e);
            }
            Err(_) => break,
        }
    }
    Ok(rings)
}

impl Rings {
    /// Wake every queue thread to end (after the connection is gone) and wait for them.
    /// Returns the requests served and the first error.
    pub fn stop(self) -> (u64, Option<io::Error>) {
        for s in &self.stops {
            let _ = rustix::io::write(s, &1u64.to_ne_bytes());
        }
        let mut served = 0;
        let mut err = None;
        for t in self.threads {
            match t.join() {
                Ok(Ok(n)) => served += n,
                Ok(Err(e)) => {
                    err.get_or_insert(e);
                }
                Err(_) => {
                    err.get_or_insert(io::Error::other("a ring thread panicked"));
                }
            }
        }
        (served, err)
    }

    /// Whether every queue thread has ended (the connection is gone).
    pub fn finished(&self) -> bool {
        self.threads.iter().all(|t| t.is_finished())
    }

    /// The serving threads.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }
}

fn pin_to(cpu: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    let _ = rustix::thread::sched_setaffinity(None, &set);
}

/// One serving thread: register `depth` entries for each of `qids`, then answer requests
/// until the connection ends. Returns the number of requests served.
#[allow(clippy::too_many_arguments)]
fn serve<FS: Filesystem + 'static>(
    qids: &[u16],
    pin: Option<usize>,
    dev: OwnedFd,
    stop_fd: i32,
    dispatcher: Arc<RawDispatcher<FS>>,
    depth: usize,
    payload: usize,
    ready: std::sync::mpsc::Sender<io::Result<()>>,
) -> io::Result<u64> {
    if let Some(cpu) = pin {
        pin_to(cpu);
    }
    let n = depth * qids.len();
    let setup = (|| -> io::Result<_> {
        // Only this thread submits to and waits on its ring (replies are sent from the
        // handlers it calls): the kernel's task work (handing a request to an entry) then runs
        // when the thread waits for completions, without interrupting it (as libfuse does).
        let ring = IoUring::<squeue::Entry128, cqueue::Entry>::builder()
            .setup_cqsize(((n + 1) * 2) as u32)
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build((n + 1) as u32)?;
        let queue = Arc::new(Ring { ring, sq: Mutex::new(()), fd: dev.as_raw_fd() });
        let mut bufs = Vec::with_capacity(n * 2);
        let mut entries = Vec::with_capacity(n);
        let mut iovs: Vec<[libc::iovec; 2]> = Vec::with_capacity(n);
        for idx in 0..n {
            let h = Buf::new(REQ_HEADER)?;
            let p = Buf::new(payload)?;
            iovs.push([
                libc::iovec { iov_base: h.ptr.cast(), iov_len: REQ_HEADER },
                libc::iovec { iov_base: p.ptr.cast(), iov_len: payload },
            ]);
            entries.push(Arc::new(Entry {
                queue: queue.clone(),
                qid: qids[idx / depth],
                idx: idx as u64,
                header: h.ptr,
                payload: p.ptr,
                payload_len: payload,
                commit_id: AtomicU64::new(0),
                answered: AtomicBool::new(true),
                failed: AtomicBool::new(false),
            }));
            bufs.push(h);
            bufs.push(p);
        }
        // The stop eventfd's poll, then one REGISTER per entry.
        let poll =
            opcode::PollAdd::new(types::Fd(stop_fd), libc::POLLIN as u32).build().user_data(STOP);
        queue.push(&poll.into())?;
        for (ent, iov) in entries.iter().zip(&iovs) {
            let iov = Some(iov.as_ptr() as u64);
            let sqe = queue.cmd(FUSE_IO_URING_CMD_REGISTER, ent.qid, 0, ent.idx, iov);
            queue.push(&sqe)?;
        }
        Ok((queue, bufs, entries, iovs))
    })();
    let (queue, _bufs, entries, iovs) = match setup {
        Ok(s) => {
            let _ = ready.send(Ok(()));
            s
        }
        Err(e) => {
            let _ = ready.send(Err(io::Error::new(e.kind(), format!("queues {qids:?}: {e}"))));
            return Err(e);
        }
    };
    drop(ready);
    let senders: Vec<Arc<dyn RawReplySender>> =
        entries.iter().map(|e| e.clone() as Arc<dyn RawReplySender>).collect();
    // The request as /dev/fuse would deliver it: header, fixed argument, payload.
    let mut req: Vec<u8> = vec![0u8; IN_HEADER + OP_IN_AREA + payload];
    let mut served = 0u64;
    let mut done: Vec<(u64, i32)> = Vec::with_capacity(depth + 1);
    loop {
        match queue.ring.submitter().submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(e),
        }
        done.clear();
        {
            // SAFETY: only this thread reads the completion queue.
            let cq = unsafe { queue.ring.completion_shared() };
            done.extend(cq.map(|c| (c.user_data(), c.result())));
        }
        for &(user_data, res) in &done {
            if user_data == STOP {
                return Ok(served);
            }
            let Some(ent) = entries.get(user_data as usize) else { continue };
            if res < 0 {
                match -res {
                    libc::EINTR | libc::EAGAIN => {
                        // Ask again (the command was not taken): a REGISTER when the entry
                        // never held a request, else its commit.
                        let cid = ent.commit_id.load(Ordering::Acquire);
                        let sqe = if cid == 0 {
                            let iov = iovs[ent.idx as usize].as_ptr() as u64;
                            queue.cmd(FUSE_IO_URING_CMD_REGISTER, ent.qid, 0, ent.idx, Some(iov))
                        } else {
                            let c = FUSE_IO_URING_CMD_COMMIT_AND_FETCH;
                            queue.cmd(c, ent.qid, cid, ent.idx, None)
                        };
                        queue.push(&sqe)?;
                        continue;
                    }
                    // The connection is gone (unmount, abort, daemon exit).
                    libc::ENOTCONN | libc::ECONNABORTED | libc::ECANCELED | libc::ENODEV => {
                        return Ok(served);
                    }
                    e => {
                        return Err(io::Error::new(
                            io::Error::from_raw_os_error(e).kind(),
                            format!(
                                "FUSE-over-io_uring queue {}: the kernel refused a command: {}",
                                ent.qid,
                                io::Error::from_raw_os_error(e)
                            ),
                        ))
                    }
                }
            }
            // A request: lay it out contiguously.
            let hdr = ent.header;
            // SAFETY: the kernel has filled the entry (its CQE is here) and leaves it alone
            // until our commit; the header buffer holds REQ_HEADER bytes.
            let (in_hdr, commit_id, payload_sz) = unsafe {
                let mut h = [0u8; IN_HEADER];
                std::ptr::copy_nonoverlapping(hdr, h.as_mut_ptr(), IN_HEADER);
                let cid = std::ptr::read_unaligned(hdr.add(ENT_IN_OUT + 8).cast::<u64>());
                let psz = std::ptr::read_unaligned(hdr.add(ENT_IN_OUT + 16).cast::<u32>());
                (h, cid, psz as usize)
            };
            let len = u32::from_ne_bytes(in_hdr[0..4].try_into().expect("4 bytes")) as usize;
            let arg0 = len.checked_sub(IN_HEADER + payload_sz);
            ent.commit_id.store(commit_id, Ordering::Release);
            ent.answered.store(false, Ordering::Release);
            let Some(arg0) = arg0.filter(|&a| a <= OP_IN_AREA && payload_sz <= payload) else {
                // Not a request this layout can carry: EIO.
                let unique = &in_hdr[8..16];
                let mut out = [0u8; OUT_HEADER];
                out[4..8].copy_from_slice(&(-libc::EIO).to_ne_bytes());
                out[8..16].copy_from_slice(unique);
                let _ = senders[ent.idx as usize].send(&[IoSlice::new(&out)]);
                continue;
            };
            req[..IN_HEADER].copy_from_slice(&in_hdr);
            // SAFETY: op_in has OP_IN_AREA >= arg0 bytes, the payload payload_sz <= payload
            // bytes; `req` has room for both after the header.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    hdr.add(HEADER_AREA),
                    req.as_mut_ptr().add(IN_HEADER),
                    arg0,
                );
                std::ptr::copy_nonoverlapping(
                    ent.payload,
                    req.as_mut_ptr().add(IN_HEADER + arg0),
                    payload_sz,
                );
            }
            served += 1;
            let r = dispatcher.dispatch(&req[..len], &senders[ent.idx as usize]);
            if !ent.answered.load(Ordering::Acquire) {
                // Nothing sent (a request without a reply): the entry still has to fetch the
                // next one.
                let mut out = [0u8; OUT_HEADER];
                out[4..8].copy_from_slice(&(-libc::ENOSYS).to_ne_bytes());
                out[8..16].copy_from_slice(&in_hdr[8..16]);
                let _ = senders[ent.idx as usize].send(&[IoSlice::new(&out)]);
            }
            if ent.failed.load(Ordering::Relaxed) {
                return Ok(served);
            }
            if r == Dispatched::Destroy {
                return Ok(served);
            }
        }
    }
}
