//! io_uring requests (`io_uring_op` records, docs/TRACE_FORMAT.md 3.12) and the ring calls
//! (`io_uring_setup`, `io_uring_register`) in the replay: each request is submitted again,
//! with its opcode, SQE flags, offset, length and recorded data, to a real ring of the replay
//! made for its recorded ring ([`UringMode::Ring`]), or issued as the system call it stands
//! for ([`UringMode::AsSyscalls`]); then verified like a call (its result, a read's data).
//!
//! One request is in flight per ring at a time: a request's record comes when it completed
//! (never before the `io_uring_enter` that submitted it), and its outcome is known before the
//! next call of its thread runs. So the depth at which the program kept requests in flight
//! is not reproduced, and a link chain's members are submitted one after the other, each
//! with its recorded `IOSQE_IO_LINK`/`IOSQE_IO_HARDLINK` (the kernel ends a chain at the end
//! of a submission); the kernel's cancellation of the rest of a broken chain (`ECANCELED`)
//! is done here, as it would have been.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use io_uring::{opcode, squeue, types, IoUring};
use ra_syscalls::uring::{self as u, UringData};
use ra_trace::{ArgValue, Event};

use super::{with_buf, Act, Call, SIMULATED};
use crate::sys;
use crate::world::{lock, FdEntry, Handle, OpenFile};

/// How io_uring requests are replayed (`replay --uring`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UringMode {
    /// Through a real ring of the replay per recorded ring.
    Ring,
    /// Each as the system call it stands for (`pread64` for `READ`, ...). `fallback` says why
    /// when this was not asked for (io_uring could not be set up here): the report says so.
    AsSyscalls {
        /// Why io_uring could not be used (the [`probe`] error, `--uring auto`), or None when
        /// `--uring as-syscalls` asked for this mode.
        fallback: Option<String>,
    },
}

/// Whether this process can set up an io_uring (`kernel.io_uring_disabled`, seccomp, an old
/// kernel): the reason when it cannot.
pub fn probe() -> Result<(), String> {
    match IoUring::new(2) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("io_uring_setup: {e}")),
    }
}

/// A record no recorder writes (a damaged or edited trace): what is wrong with it. Checked
/// as the trace is read, so that replay stops with one line instead of issuing it.
pub fn check(ev: &Event) -> Result<(), String> {
    let int = |n: &str| ev.arg(n).and_then(ArgValue::as_int);
    let within = |n: &str, max: i64| -> Result<i64, String> {
        match int(n) {
            Some(v) if (0..=max).contains(&v) => Ok(v),
            Some(v) => Err(format!("`{n}` {v} is out of range (0 to {max})")),
            None => Err(format!("`{n}` is missing")),
        }
    };
    let ring = within("ring", u32::MAX.into())?;
    if ring == 0 {
        return Err("`ring` 0: rings are numbered from 1".into());
    }
    let opcode = within("opcode", u8::MAX.into())
        .map_err(|e| format!("{e}: not an io_uring opcode (IORING_OP_*)"))?;
    within("sqe_flags", u8::MAX.into())?;
    let len = within("len", u32::MAX.into())?;
    within("buf_index", u16::MAX.into())?;
    let uflags = int("uring_flags").unwrap_or(0);
    if let ArgValue::Data(d) = ev.arg("sqe").unwrap_or(&ArgValue::Absent) {
        if d.len() != u::sqe::SIZE {
            return Err(format!("`sqe` holds {} bytes, an SQE {}", d.len(), u::sqe::SIZE));
        }
        if i64::from(d[u::sqe::OPCODE]) != opcode && uflags & 8 == 0 {
            return Err(format!(
                "`sqe` is of opcode {}, the record of opcode {opcode}",
                d[u::sqe::OPCODE]
            ));
        }
    }
    for (n, max) in [("path", 4096), ("path2", 4096), ("name", 256), ("how", u::OPEN_HOW_MAX)] {
        if let Some(ArgValue::Data(d)) = ev.arg(n) {
            if d.len() > max {
                return Err(format!(
                    "`{n}` holds {} bytes, more than a recorder keeps ({max})",
                    d.len()
                ));
            }
        }
    }
    let op = u::lookup(opcode);
    if let (Some(op), ArgValue::Data(d)) = (op, ev.arg("buf_in").unwrap_or(&ArgValue::Absent)) {
        if op.data == UringData::In && d.len() as i64 != len {
            return Err(format!(
                "{}: {} bytes of data for a length of {len} (a write's data is captured whole)",
                op.name,
                d.len()
            ));
        }
    }
    if let ArgValue::Data(d) = ev.arg("buf_out").unwrap_or(&ArgValue::Absent) {
        let res = if ev.failed() { 0 } else { ev.ret.unwrap_or(0) };
        // (A vectored read's `len` counts its iovecs, not bytes.)
        let vec = op.is_some_and(|o| o.data == UringData::OutVec);
        if d.len() as i64 > res.max(0) || (!vec && d.len() as i64 > len) {
            return Err(format!(
                "{} bytes of data read, more than its result ({res}) or length ({len})",
                d.len()
            ));
        }
    }
    Ok(())
}

/// The replay's rings and what it knows of the recorded ones.
#[derive(Default)]
pub struct Rings {
    inner: Mutex<Inner>,
    /// The fallback note was given ([`UringMode::AsSyscalls`]'s `fallback`).
    noted: AtomicBool,
}

impl std::fmt::Debug for Rings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = lock(&self.inner);
        f.debug_struct("Rings")
            .field("set_up", &i.by_fd.len())
            .field("recorded", &i.by_num.len())
            .finish()
    }
}

#[derive(Default)]
struct Inner {
    /// Rings of replayed `io_uring_setup` calls, by process and recorded descriptor.
    by_fd: HashMap<(usize, i32), Arc<Ring>>,
    /// By the records' `ring` number, once a request named it.
    by_num: HashMap<i64, Arc<Ring>>,
}

/// One recorded ring in the replay.
struct Ring {
    /// The process that set it up (see [`Call::proc_key`]).
    proc: usize,
    /// Its real ring ([`UringMode::Ring`]; None: `as-syscalls`).
    real: Option<Mutex<Real>>,
    /// Its registered files: the replay's open file at each index (kept open, as the kernel
    /// keeps a registered file).
    files: Mutex<Vec<Option<Arc<OpenFile>>>>,
    /// The files its requests named by descriptor, by their recorded device and inode: where
    /// a registered index has no file, the one its request's device and inode name.
    by_inode: Mutex<HashMap<(i64, i64), Arc<OpenFile>>>,
    /// The last request was a link (`IOSQE_IO_LINK`/`HARDLINK`): whether its chain is broken
    /// (the next request is then cancelled, as the kernel does).
    chain: Mutex<Option<bool>>,
    bound: AtomicBool,
    /// The table entry of the recorded descriptor its `io_uring_setup` returned: once every
    /// descriptor of it is closed, the ring is dropped at the next setup (a program that makes
    /// rings one after the other does not pile up the replay's).
    table_file: std::sync::OnceLock<std::sync::Weak<OpenFile>>,
}

impl Ring {
    fn is_open(&self) -> bool {
        self.table_file.get().is_none_or(|w| w.strong_count() > 0)
    }
}

/// A page-aligned buffer registered with a real ring.
struct FixedBuf {
    ptr: *mut u8,
    len: usize,
}

impl FixedBuf {
    fn new(len: usize) -> Option<FixedBuf> {
        let len = len.max(4096).next_multiple_of(4096);
        let layout = std::alloc::Layout::from_size_align(len, 4096).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(FixedBuf { ptr, len })
    }
    fn iovec(&self) -> libc::iovec {
        libc::iovec { iov_base: self.ptr.cast(), iov_len: self.len }
    }
}

impl Drop for FixedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this size and alignment.
        unsafe {
            std::alloc::dealloc(
                self.ptr,
                std::alloc::Layout::from_size_align_unchecked(self.len, 4096),
            )
        };
    }
}

struct Real {
    ring: IoUring,
    /// Registered buffers by index (the sparse table's size is `bufs.len()`).
    bufs: Vec<Option<FixedBuf>>,
    /// Slots of the registered file table (0: none registered).
    file_slots: u32,
}

// SAFETY: the buffers are owned memory, touched only under the ring's mutex.
unsafe impl Send for Real {}

impl Real {
    fn new(entries: u32) -> Result<Real, i32> {
        let ring = IoUring::new(entries.clamp(1, 4096).next_power_of_two())
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        Ok(Real { ring, bufs: Vec::new(), file_slots: 0 })
    }
    /// Submit one SQE and wait for its completion: its `res`.
    fn run(&mut self, sqe: squeue::Entry) -> Result<i32, i32> {
        let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
        // SAFETY: every buffer the SQE names outlives this call, which waits for its CQE.
        unsafe { self.ring.submission().push(&sqe) }.map_err(|_| libc::EBUSY)?;
        loop {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(errno(e)),
            }
            if let Some(c) = self.ring.completion().next() {
                return Ok(c.result());
            }
        }
    }
    /// Registered buffer `index` of at least `len` bytes: its address.
    fn buffer(&mut self, index: usize, len: usize) -> Result<*mut u8, i32> {
        if index >= self.bufs.len() {
            let n = (index + 1).next_power_of_two().max(16);
            if !self.bufs.is_empty() {
                let _ = self.ring.submitter().unregister_buffers();
            }
            self.ring
                .submitter()
                .register_buffers_sparse(n as u32)
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
            let old = std::mem::take(&mut self.bufs);
            self.bufs = (0..n).map(|_| None).collect();
            for (i, b) in old.into_iter().enumerate() {
                if let Some(b) = b {
                    self.put_buffer(i, b)?;
                }
            }
        }
        if self.bufs[index].as_ref().is_none_or(|b| b.len < len) {
            let b = FixedBuf::new(len).ok_or(libc::ENOMEM)?;
            self.put_buffer(index, b)?;
        }
        Ok(self.bufs[index].as_ref().map(|b| b.ptr).expect("just registered"))
    }
    fn put_buffer(&mut self, index: usize, b: FixedBuf) -> Result<(), i32> {
        // SAFETY: the buffer lives in `bufs` until it is replaced (the kernel then drops its
        // reference: no request is in flight) or the ring goes.
        unsafe { self.ring.submitter().register_buffers_update(index as u32, &[b.iovec()], None) }
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        self.bufs[index] = Some(b);
        Ok(())
    }
    /// Registered file `index` is `raw`.
    fn set_file(&mut self, index: u32, raw: RawFd) -> Result<(), i32> {
        let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
        if index >= self.file_slots {
            let n = (index + 1).next_power_of_two().max(16);
            if self.file_slots > 0 {
                self.ring.submitter().unregister_files().map_err(errno)?;
            }
            self.ring.submitter().register_files_sparse(n).map_err(errno)?;
            self.file_slots = n;
        }
        self.ring.submitter().register_files_update(index, &[raw]).map_err(errno)?;
        Ok(())
    }
}

/// What the replay does with an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Nop,
    Read { fixed: bool },
    Write { fixed: bool },
    ReadV,
    WriteV,
    Fsync,
    SyncFileRange,
    Fallocate,
    Fadvise,
    Ftruncate,
    Close,
}

/// The opcode's replay, or why it has none.
fn kind(op: &u::UringOp) -> Result<Kind, &'static str> {
    Ok(match op.name {
        "nop" => Kind::Nop,
        "read" => Kind::Read { fixed: false },
        "read_fixed" => Kind::Read { fixed: true },
        "write" => Kind::Write { fixed: false },
        "write_fixed" => Kind::Write { fixed: true },
        // (The _FIXED variants' iovecs point into a registered buffer: replayed as plain
        // vectored requests of the same bytes.)
        "readv" | "readv_fixed" => Kind::ReadV,
        "writev" | "writev_fixed" => Kind::WriteV,
        "fsync" => Kind::Fsync,
        "sync_file_range" => Kind::SyncFileRange,
        "fallocate" => Kind::Fallocate,
        "fadvise" => Kind::Fadvise,
        "ftruncate" => Kind::Ftruncate,
        "close" => Kind::Close,
        _ if !op.decoded => {
            return Err("the trace keeps only its SQE, whose addresses are the program's")
        }
        "openat" | "openat2" | "statx" | "renameat" | "unlinkat" | "mkdirat" | "symlinkat"
        | "linkat" | "setxattr" | "getxattr" | "fsetxattr" | "fgetxattr" => {
            return Err("a file installed in or named from the ring's registered files \
                        (`file_index`, IOSQE_FIXED_FILE) is not followed yet")
        }
        "timeout" | "timeout_remove" | "link_timeout" | "async_cancel" | "poll_add"
        | "poll_remove" => {
            return Err("io_uring's own timing and cancellation: its timespec or target is \
                        not in the trace")
        }
        "splice" | "tee" => return Err("its second descriptor is not in the trace"),
        "madvise" => return Err("it acts on the program's memory"),
        _ => return Err("not replayed yet (sockets, buffer rings and ring messages)"),
    })
}

/// Sentinel "errno": a read left out (`--reads`).
const SKIPPED: i32 = -3;

/// `IOSQE_*` flags a replayed SQE keeps: `IOSQE_CQE_SKIP_SUCCESS` would leave the replay
/// without the completion it verifies; `IOSQE_FIXED_FILE` is set by the file's kind.
const KEPT_FLAGS: u8 = u::IOSQE_IO_DRAIN | u::IOSQE_IO_LINK | u::IOSQE_IO_HARDLINK | u::IOSQE_ASYNC;

impl Call<'_> {
    /// This call's process, as the key of the rings it set up.
    fn proc_key(&self) -> usize {
        Arc::as_ptr(self.p) as usize
    }

    fn new_ring(&self, entries: u32) -> Result<Arc<Ring>, i32> {
        let real = match self.sh.opts.uring {
            UringMode::Ring => Some(Mutex::new(Real::new(entries)?)),
            UringMode::AsSyscalls { .. } => None,
        };
        Ok(Arc::new(Ring {
            proc: self.proc_key(),
            real,
            files: Mutex::new(Vec::new()),
            by_inode: Mutex::new(HashMap::new()),
            chain: Mutex::new(None),
            bound: AtomicBool::new(false),
            table_file: Default::default(),
        }))
    }

    /// `io_uring_setup`: a ring of the recorded size (its other parameters are not in the
    /// trace); the recorded descriptor stays a simulated one of the table.
    pub(super) fn uring_setup(&mut self) -> Result<Act, i32> {
        if !self.rec_ok() {
            return Ok(Act::Sim);
        }
        let entries = self.i("entries")?.clamp(1, u32::MAX.into()) as u32;
        let ring = self.new_ring(entries)?;
        let fd = self.rec_ret() as i32;
        self.simulate_fds();
        if let Some(e) = lock(&self.p.fds).get(fd) {
            let _ = ring.table_file.set(Arc::downgrade(&e.file));
        }
        let mut inner = lock(&self.sh.rings.inner);
        inner.by_fd.retain(|_, r| r.is_open());
        inner.by_num.retain(|_, r| r.is_open());
        inner.by_fd.insert((self.proc_key(), fd), ring);
        drop(inner);
        Ok(match self.sh.opts.uring {
            UringMode::Ring => Act::IssuedLoose(self.rec_ret()),
            UringMode::AsSyscalls { .. } => Act::EmulatedAsRecorded,
        })
    }

    /// `io_uring_register` of files or buffers, as recorded (trace schema 6,
    /// [`Event::uring_registration`]): at each index the replay's descriptor for the recorded
    /// one (kept open, as the kernel keeps a registered file; an empty slot for -1 and sparse
    /// tables), and buffers of the replay's own of the recorded lengths.
    ///
    /// A trace before schema 6 holds the call's count, not its array: registered files are
    /// then the process's open regular files in descriptor order where there are as many as
    /// the count, the highest-numbered ones where there are more (a warning names them),
    /// else each index is the file its requests' recorded device and inode name
    /// ([`Call::uring_file`], which also corrects a guess); buffers are the replay's own, one
    /// per index, registered as requests use them.
    pub(super) fn uring_register(&mut self) -> Result<Act, i32> {
        const REGISTER_BUFFERS: i64 = 0;
        const UNREGISTER_BUFFERS: i64 = 1;
        const REGISTER_FILES: i64 = 2;
        const UNREGISTER_FILES: i64 = 3;
        let (fd, opcode, nr) = (self.i("fd")?, self.i("opcode")?, self.i("nr_args")?);
        let key = (self.proc_key(), fd as i32);
        let Some(ring) = lock(&self.sh.rings.inner).by_fd.get(&key).cloned() else {
            return Ok(Act::Sim);
        };
        if !self.rec_ok() {
            return Ok(Act::Sim);
        }
        match self.ev.uring_registration() {
            Some(Ok(Some(reg))) => return self.uring_register_recorded(&ring, &reg),
            // (Refused when the trace was read.)
            Some(Err(_)) => return Err(libc::EINVAL),
            _ => {}
        }
        match opcode {
            REGISTER_FILES => {
                let nr = nr.clamp(0, 1 << 16) as usize;
                let mut open: Vec<(i32, Arc<OpenFile>)> = Vec::new();
                for (&n, e) in lock(&self.p.fds).iter() {
                    if let Handle::File(f) = &e.file.handle {
                        if sys::fstat_at(f.as_raw_fd())
                            .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG)
                        {
                            open.push((n, e.file.clone()));
                        }
                    }
                }
                let shown = |open: &[(i32, Arc<OpenFile>)]| {
                    let v: Vec<String> = open
                        .iter()
                        .map(|(n, f)| format!("{n} {}", String::from_utf8_lossy(&f.path)))
                        .collect();
                    v.join(", ")
                };
                let files: Vec<Option<Arc<OpenFile>>> = if open.len() == nr {
                    open.into_iter().map(|(_, f)| Some(f)).collect()
                } else if open.len() > nr && nr > 0 {
                    // Programs register the files they just opened: the highest numbers.
                    let all = shown(&open);
                    let taken = open.split_off(open.len() - nr);
                    self.warn(format!(
                        "io_uring_register: {nr} files registered, {} regular files open \
                         ({all}): the trace does not hold which; registered: {}",
                        open.len() + nr,
                        shown(&taken)
                    ));
                    taken.into_iter().map(|(_, f)| Some(f)).collect()
                } else {
                    self.warn(format!(
                        "io_uring_register: {nr} files registered, {} regular files open ({}): \
                         the trace does not hold which, so each index is the file its \
                         requests' recorded device and inode name",
                        open.len(),
                        shown(&open)
                    ));
                    vec![None; nr]
                };
                if let Some(real) = &ring.real {
                    let mut real = lock(real);
                    for (i, f) in files.iter().enumerate() {
                        if let Some(raw) = f.as_ref().and_then(|f| f.raw()) {
                            real.set_file(i as u32, raw)?;
                        }
                    }
                }
                *lock(&ring.files) = files;
            }
            UNREGISTER_FILES => {
                lock(&ring.files).clear();
                if let Some(real) = &ring.real {
                    let mut real = lock(real);
                    if real.file_slots > 0 {
                        real.file_slots = 0;
                        real.ring
                            .submitter()
                            .unregister_files()
                            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
                    }
                }
            }
            REGISTER_BUFFERS => {
                if let Some(real) = &ring.real {
                    let mut real = lock(real);
                    if nr > 0 {
                        real.buffer(nr.clamp(1, 1 << 14) as usize - 1, 0)?;
                    }
                }
            }
            UNREGISTER_BUFFERS => {
                if let Some(real) = &ring.real {
                    let mut real = lock(real);
                    if !real.bufs.is_empty() {
                        real.bufs.clear();
                        real.ring
                            .submitter()
                            .unregister_buffers()
                            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
                    }
                }
            }
            _ => {
                self.warn(format!(
                    "io_uring_register opcode {opcode}: simulated (only files and buffers are \
                     registered again)"
                ));
                return Ok(Act::Sim);
            }
        }
        Ok(match ring.real {
            Some(_) => Act::Issued(0),
            None => Act::Emulated(0),
        })
    }

    /// [`Call::uring_register`] of a registration the trace holds: the result it had (0, or
    /// for an update the slots it went through).
    fn uring_register_recorded(
        &mut self,
        ring: &Ring,
        reg: &u::register::Registration,
    ) -> Result<Act, i32> {
        use u::register::{Resource, FILES_SKIP};
        let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
        let mut real = ring.real.as_ref().map(lock);
        if reg.cut {
            self.warn(format!(
                "io_uring_register: {} slots, the trace holds the first {} (the recorder's \
                 limit): the others are registered empty",
                reg.count,
                reg.fds.len().max(reg.buffers.len())
            ));
        }
        let count = usize::try_from(reg.count).map_err(|_| libc::EINVAL)?;
        let done = match reg.resource {
            Some(Resource::Files) => {
                let mut files = lock(&ring.files);
                if reg.unregister || !reg.update {
                    files.clear();
                    if let Some(real) = real.as_mut().filter(|r| r.file_slots > 0) {
                        real.file_slots = 0;
                        real.ring.submitter().unregister_files().map_err(errno)?;
                    }
                }
                if !reg.unregister && !reg.update {
                    files.resize(count, None);
                    if let Some(real) = real.as_mut().filter(|_| count > 0) {
                        real.ring.submitter().register_files_sparse(count as u32).map_err(errno)?;
                        real.file_slots = count as u32;
                    }
                }
                let mut missing = Vec::new();
                for (i, &fd) in reg.fds.iter().enumerate() {
                    let at = reg.offset as usize + i;
                    if fd == FILES_SKIP && reg.update {
                        continue;
                    }
                    let f = if fd < 0 {
                        None
                    } else {
                        match self.entry(i64::from(fd)) {
                            Ok(e) => Some(e.file),
                            Err(_) => {
                                missing.push(fd.to_string());
                                None
                            }
                        }
                    };
                    if at >= files.len() {
                        // (The kernel refused such an update: the recorded call succeeded,
                        // so the table was larger than the trace showed.)
                        files.resize(at + 1, None);
                    }
                    if let Some(real) = real.as_mut() {
                        match f.as_ref().and_then(|f| f.raw()) {
                            Some(raw) => real.set_file(at as u32, raw)?,
                            None if (at as u32) < real.file_slots => {
                                real.ring
                                    .submitter()
                                    .register_files_update(at as u32, &[-1])
                                    .map_err(errno)?;
                            }
                            None => {}
                        }
                    }
                    files[at] = f;
                }
                if !missing.is_empty() {
                    self.warn(format!(
                        "io_uring_register: descriptors {} are not open in the replay (the \
                         trace shows no file for them): their slots are empty",
                        missing.join(", ")
                    ));
                }
                reg.fds.len()
            }
            Some(Resource::Buffers) => {
                if let Some(real) = real.as_mut() {
                    if (reg.unregister || !reg.update) && !real.bufs.is_empty() {
                        real.bufs.clear();
                        real.ring.submitter().unregister_buffers().map_err(errno)?;
                    }
                    if !reg.unregister && !reg.update && count > 0 {
                        real.ring
                            .submitter()
                            .register_buffers_sparse(count as u32)
                            .map_err(errno)?;
                        real.bufs = (0..count).map(|_| None).collect();
                    }
                    for (i, &(_, len)) in reg.buffers.iter().enumerate() {
                        let at = reg.offset as usize + i;
                        if len == 0 || at >= real.bufs.len() {
                            continue;
                        }
                        let b = FixedBuf::new(len as usize).ok_or(libc::ENOMEM)?;
                        real.put_buffer(at, b)?;
                    }
                }
                reg.buffers.len()
            }
            None => 0,
        };
        let res = if reg.update { done as i64 } else { 0 };
        Ok(match ring.real {
            Some(_) => Act::Issued(res),
            None => Act::Emulated(res),
        })
    }

    /// The ring a request was submitted to: the one set up with its recorded descriptor, or
    /// the process's only one (an SQPOLL ring's requests name no descriptor), or a new one.
    fn ring_of(&self, num: i64, ring_fd: i64) -> Result<Arc<Ring>, i32> {
        let mut inner = lock(&self.sh.rings.inner);
        if let Some(r) = inner.by_num.get(&num) {
            return Ok(r.clone());
        }
        let me = self.proc_key();
        let found = if ring_fd >= 0 {
            inner.by_fd.get(&(me, ring_fd as i32)).cloned()
        } else {
            let mine: Vec<&Arc<Ring>> = inner
                .by_fd
                .values()
                .filter(|r| r.proc == me && !r.bound.load(Ordering::Relaxed))
                .collect();
            (mine.len() == 1).then(|| mine[0].clone())
        };
        let ring = match found {
            Some(r) => r,
            None => self.new_ring(64)?,
        };
        ring.bound.store(true, Ordering::Relaxed);
        inner.by_num.insert(num, ring.clone());
        Ok(ring)
    }

    /// One `io_uring_op` record.
    pub(super) fn uring_op(&mut self) -> Result<Act, i32> {
        if let UringMode::AsSyscalls { fallback: Some(why) } = &self.sh.opts.uring {
            if !self.sh.rings.noted.swap(true, Ordering::Relaxed) {
                self.warn(format!(
                    "io_uring cannot be set up here ({why}): io_uring requests are replayed as \
                     the system calls they stand for (as with --uring as-syscalls)"
                ));
            }
        }
        let opcode = self.i("opcode")?;
        let Some(op) = u::lookup(opcode) else {
            self.warn(format!("io_uring opcode {opcode}: newer than this replayer; not replayed"));
            return Ok(Act::Sim);
        };
        if self.i("uring_flags")? & 8 != 0 {
            self.warn(format!(
                "io_uring {}: its submission is not in the trace; not replayed",
                op.name
            ));
            return Ok(Act::Sim);
        }
        if op.name != "close" {
            if let Some(call) = ra_trace::uring::as_call(self.ev) {
                return self.uring_as_call(op, &call);
            }
        }
        let kind = match kind(op) {
            Ok(k) => k,
            Err(why) => {
                self.warn(format!(
                    "io_uring {}: not replayed ({why}); its recorded result stands",
                    op.name
                ));
                self.uring_sim_fd(op);
                return Ok(Act::Sim);
            }
        };
        let sqe_flags = self.i("sqe_flags")? as u8;
        if sqe_flags & u::IOSQE_BUFFER_SELECT != 0 {
            self.warn(format!(
                "io_uring {}: not replayed (a provided buffer, IOSQE_BUFFER_SELECT: the trace \
                 does not say which); its recorded result stands",
                op.name
            ));
            return Ok(Act::Sim);
        }
        let ring = self.ring_of(self.i("ring")?, self.i("ring_fd").unwrap_or(-1))?;
        let link = sqe_flags & (u::IOSQE_IO_LINK | u::IOSQE_IO_HARDLINK) != 0;
        let cancelled = *lock(&ring.chain) == Some(true);
        if cancelled {
            // The kernel cancels the rest of a chain whose request failed (a short read or
            // write breaks an IOSQE_IO_LINK chain too).
            *lock(&ring.chain) = link.then_some(true);
            return Ok(Act::EmulatedFailed(libc::ECANCELED));
        }
        let res = self.uring_issue(&ring, op, kind, sqe_flags);
        let res = match res {
            Err(SIMULATED) => {
                *lock(&ring.chain) = None;
                return Ok(Act::Sim);
            }
            Err(SKIPPED) => {
                *lock(&ring.chain) = None;
                return Ok(Act::Skip);
            }
            r => r,
        };
        let broken = match res {
            Err(_) => true,
            Ok(n) => {
                matches!(kind, Kind::Read { .. } | Kind::Write { .. })
                    && sqe_flags & u::IOSQE_IO_HARDLINK == 0
                    && n < self.i("len")?
            }
        };
        *lock(&ring.chain) = link.then_some(broken);
        let v = res?;
        Ok(match (&ring.real, kind) {
            (Some(_), _) => Act::Issued(v),
            (None, Kind::Nop | Kind::Close) => Act::Emulated(v),
            (None, _) => Act::Issued(v),
        })
    }

    /// A path request (`OPENAT`, `RENAMEAT`, `MKDIRAT`, the xattr family, ...): issued as the
    /// system call it stands for (`call`, [`ra_trace::uring::as_call`]) by that call's own
    /// handler, in either mode, so that its paths resolve beneath the replay's root exactly as
    /// a system call's do (`RESOLVE_IN_ROOT`) and its descriptor joins the table; verified as
    /// that call. A request the kernel cancelled (a broken link chain) is not issued.
    fn uring_as_call(&mut self, op: &u::UringOp, call: &Event) -> Result<Act, i32> {
        if self.ev.errno == Some(libc::ECANCELED) {
            return Ok(Act::EmulatedFailed(libc::ECANCELED));
        }
        if self.i("uring_flags")? & u::uring_flags::STRINGS_NOT_READ != 0 {
            self.warn(format!(
                "io_uring {}: the recorder could not read the path or name its SQE points to; \
                 not replayed, its recorded result stands",
                op.name
            ));
            self.uring_sim_fd(op);
            return Ok(Act::Sim);
        }
        let mut c = Call {
            sh: self.sh,
            p: self.p,
            ev: call,
            pl: self.pl,
            diffs: Vec::new(),
            warn: None,
            full: self.full,
            missing: Default::default(),
            seen: self.seen.take(),
            saw_data: false,
            filled: Default::default(),
        };
        let act = c.run();
        if matches!(act, Ok(Act::Sim) | Err(SIMULATED)) {
            c.simulate_fds();
        }
        self.diffs.append(&mut c.diffs);
        if let Some(w) = c.warn.take() {
            self.warn(format!("io_uring {}: {w}", op.name));
        }
        self.seen = c.seen.take();
        self.saw_data |= c.saw_data;
        self.filled.set(self.filled.get() || c.filled.get());
        if let Some(m) = c.missing.get() {
            self.missing.set(Some(m));
        }
        act
    }

    /// A request that made a descriptor (`OPENAT`) and is not replayed: the descriptor it
    /// returned exists, simulated, so that the calls on it are simulated too.
    fn uring_sim_fd(&mut self, op: &u::UringOp) {
        if matches!(op.name, "openat" | "openat2")
            && self.rec_ok()
            && self.i("file_index").unwrap_or(0) == 0
        {
            let e = FdEntry {
                file: OpenFile::new(Handle::Simulated("io_uring openat"), Vec::new(), 0),
                cloexec: self.i("op_flags").unwrap_or(0) & i64::from(libc::O_CLOEXEC) != 0,
            };
            lock(&self.p.fds).insert(self.rec_ret() as i32, e);
        }
    }

    /// The request's file: a registered one (`IOSQE_FIXED_FILE`: its index, else the file
    /// its recorded device and inode name) or the descriptor's.
    fn uring_file(&mut self, ring: &Ring, fixed: bool) -> Result<Arc<OpenFile>, i32> {
        let fd = self.i("fd")?;
        let dev_ino = match (self.i("device"), self.i("inode")) {
            (Ok(d), Ok(i)) if i != 0 => Some((d, i)),
            _ => None,
        };
        if !fixed {
            let f = self.entry(fd)?.file;
            if let (Some(k), Some(_)) = (dev_ino, f.raw()) {
                lock(&ring.by_inode).insert(k, f.clone());
            }
            return Ok(f);
        }
        let index = usize::try_from(fd).map_err(|_| libc::EBADF)?;
        // The file a request by descriptor showed to have the request's device and inode
        // wins over a registration the replay had to guess.
        let named = dev_ino.and_then(|k| lock(&ring.by_inode).get(&k).cloned());
        if let Some(Some(f)) = lock(&ring.files).get(index) {
            if named.as_ref().is_none_or(|n| Arc::ptr_eq(n, f)) {
                return Ok(f.clone());
            }
        }
        let f = named;
        let Some(f) = f else {
            self.warn(format!(
                "io_uring request on registered file {index}: which file it is is not in the \
                 trace (no io_uring_register the replay could follow, nor a request naming \
                 the file by descriptor); not replayed"
            ));
            return Err(SIMULATED);
        };
        let mut files = lock(&ring.files);
        if files.len() <= index {
            files.resize(index + 1, None);
        }
        files[index] = Some(f.clone());
        drop(files);
        if let (Some(real), Some(raw)) = (&ring.real, f.raw()) {
            lock(real).set_file(index as u32, raw)?;
        }
        Ok(f)
    }

    /// Issue the request: its result (`res`: a count, or the errno).
    fn uring_issue(
        &mut self,
        ring: &Ring,
        op: &u::UringOp,
        kind: Kind,
        sqe_flags: u8,
    ) -> Result<i64, i32> {
        let fixed = sqe_flags & u::IOSQE_FIXED_FILE != 0;
        let file = if kind == Kind::Nop { None } else { Some(self.uring_file(ring, fixed)?) };
        let raw = match &file {
            None => -1,
            Some(f) => match &f.handle {
                Handle::File(fd) => fd.as_raw_fd(),
                // Pipes wait in the kernel; sockets and the like are simulated.
                Handle::Pipe(_) | Handle::Simulated(_) => return Err(SIMULATED),
            },
        };
        let off = self.i("offset")?;
        let len = self.i("len")?;
        let addr = self.i("addr")?;
        let op_flags = self.i("op_flags")?;
        let ioprio = self.i("ioprio")? as u16;
        let user_data = self.i("user_data")? as u64;
        let index = self.i("buf_index")? as usize;
        if kind == Kind::Close {
            return self.uring_close(ring, file.as_ref(), fixed);
        }
        if matches!(kind, Kind::Read { .. } | Kind::ReadV) && self.skip_read(raw, off != -1) {
            // --reads none: left out as the reads of calls are.
            return Err(SKIPPED);
        }
        let Some(real) = &ring.real else {
            return self.uring_as_syscall(kind, raw, off, len, addr, op_flags);
        };
        let mut real = lock(real);
        // (A registered file is registered in the real ring at its recorded index.)
        let fixed_index = if fixed { Some(self.i("fd")? as u32) } else { None };
        // The crate's builders take a registered index or a descriptor, as two types.
        macro_rules! sqe {
            ($op:ident::new($($a:expr),*) $(.$m:ident($v:expr))*) => {
                match fixed_index {
                    Some(i) => opcode::$op::new(types::Fixed(i), $($a),*)$(.$m($v))*.build(),
                    None => opcode::$op::new(types::Fd(raw), $($a),*)$(.$m($v))*.build(),
                }
            };
        }
        let flags = squeue::Flags::from_bits_truncate(sqe_flags & KEPT_FLAGS);
        let finish = |e: squeue::Entry| e.flags(flags).user_data(user_data);
        let ulen = len as u32;
        let res = match kind {
            Kind::Nop => real.run(finish(opcode::Nop::new().build()))?,
            Kind::Read { fixed: fb } => {
                let n = len.max(0) as usize;
                let (res, got) = if fb {
                    let p = real.buffer(index, n)?;
                    let e = sqe!(ReadFixed::new(p, ulen, index as u16)
                        .offset(off as u64)
                        .ioprio(ioprio)
                        .rw_flags(op_flags as i32));
                    let res = real.run(finish(e))?;
                    // SAFETY: the registered buffer holds at least n bytes.
                    let got = unsafe { std::slice::from_raw_parts(p, n) };
                    (res, got[..res.clamp(0, n as i32) as usize].to_vec())
                } else {
                    with_buf(n, |b| {
                        let e = sqe!(Read::new(b.as_mut_ptr(), ulen)
                            .offset(off as u64)
                            .ioprio(ioprio)
                            .rw_flags(op_flags as i32));
                        let res = real.run(finish(e))?;
                        Ok::<_, i32>((res, b[..res.clamp(0, n as i32) as usize].to_vec()))
                    })?
                };
                if res > 0 {
                    self.check_data("buf_out", &got);
                }
                res
            }
            Kind::Write { fixed: fb } => {
                let data = self.uring_payload(op, len);
                let data: &[u8] = &data;
                if fb {
                    let p = real.buffer(index, data.len())?;
                    // SAFETY: the registered buffer holds at least data.len() bytes.
                    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
                    let e = sqe!(WriteFixed::new(p, data.len() as u32, index as u16)
                        .offset(off as u64)
                        .ioprio(ioprio)
                        .rw_flags(op_flags as i32));
                    real.run(finish(e))?
                } else {
                    let go = |real: &mut Real, d: &[u8]| {
                        let e = sqe!(Write::new(d.as_ptr(), d.len() as u32)
                            .offset(off as u64)
                            .ioprio(ioprio)
                            .rw_flags(op_flags as i32));
                        real.run(finish(e))
                    };
                    match go(&mut real, data)? {
                        // Direct I/O wants an aligned buffer, as the program's was.
                        r if r == -libc::EINVAL && sys::is_direct(raw) => {
                            go(&mut real, sys::Aligned::concat(&[data]).as_slice())?
                        }
                        r => r,
                    }
                }
            }
            Kind::ReadV | Kind::WriteV => {
                let n = self.uring_vec_len(op);
                let write = kind == Kind::WriteV;
                let data =
                    if write { self.uring_payload(op, n as i64).into_owned() } else { Vec::new() };
                let (res, got) = with_buf(if write { 0 } else { n }, |b| {
                    let base = if write { data.as_ptr() as *mut u8 } else { b.as_mut_ptr() };
                    let iov = [libc::iovec { iov_base: base.cast(), iov_len: n }];
                    let e = if write {
                        sqe!(Writev::new(iov.as_ptr(), 1)
                            .offset(off as u64)
                            .ioprio(ioprio)
                            .rw_flags(op_flags as i32))
                    } else {
                        sqe!(Readv::new(iov.as_ptr(), 1)
                            .offset(off as u64)
                            .ioprio(ioprio)
                            .rw_flags(op_flags as i32))
                    };
                    let res = real.run(finish(e))?;
                    let got = if write {
                        Vec::new()
                    } else {
                        b[..res.clamp(0, n as i32) as usize].to_vec()
                    };
                    Ok::<_, i32>((res, got))
                })?;
                if !write && res > 0 && matches!(self.arg("buf_out"), ArgValue::Data(_)) {
                    self.check_data("buf_out", &got);
                }
                res
            }
            Kind::Fsync => {
                let mut f = types::FsyncFlags::empty();
                if op_flags as u32 & u::IORING_FSYNC_DATASYNC != 0 {
                    f |= types::FsyncFlags::DATASYNC;
                }
                let e = sqe!(Fsync::new().offset(off as u64).len(ulen).flags(f));
                real.run(finish(e))?
            }
            Kind::SyncFileRange => {
                let e = sqe!(SyncFileRange::new(ulen).offset(off as u64).flags(op_flags as u32));
                real.run(finish(e))?
            }
            Kind::Fallocate => {
                let e = sqe!(Fallocate::new(addr as u64).offset(off as u64).mode(len as i32));
                real.run(finish(e))?
            }
            Kind::Fadvise => {
                let e = sqe!(Fadvise::new(len, op_flags as i32).offset(off as u64));
                real.run(finish(e))?
            }
            Kind::Ftruncate => real.run(finish(sqe!(Ftruncate::new(off as u64))))?,
            Kind::Close => unreachable!("closed above"),
        };
        if res < 0 {
            Err(-res)
        } else {
            Ok(res.into())
        }
    }

    /// `CLOSE`: the descriptor leaves the table (the file closes with its last reference, as
    /// the kernel's does); through the ring, the close of a duplicate of the replay's
    /// descriptor.
    fn uring_close(
        &mut self,
        ring: &Ring,
        file: Option<&Arc<OpenFile>>,
        fixed: bool,
    ) -> Result<i64, i32> {
        if fixed || self.i("file_index").unwrap_or(0) != 0 {
            self.warn("io_uring close of a registered file: the slot is emptied, not closed through the ring");
            let index = self.i("fd")? as usize;
            if let Some(slot) = lock(&ring.files).get_mut(index) {
                *slot = None;
            }
            return Ok(0);
        }
        let fd = self.i("fd")? as i32;
        if let (Some(real), Some(raw)) = (&ring.real, file.and_then(|f| f.raw())) {
            // SAFETY: dup of a descriptor this replay owns; the copy is closed by the ring.
            let dup = unsafe { libc::fcntl(raw, libc::F_DUPFD_CLOEXEC, 0) };
            if dup < 0 {
                return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
            }
            let e =
                opcode::Close::new(types::Fd(dup)).build().user_data(self.i("user_data")? as u64);
            let res = lock(real).run(e);
            if !matches!(res, Ok(0)) {
                // SAFETY: the ring did not close it.
                drop(unsafe { OwnedFd::from_raw_fd(dup) });
            }
            let r = res?;
            if r < 0 {
                return Err(-r);
            }
        }
        match lock(&self.p.fds).remove(fd) {
            Some(e) => {
                self.closed(&[e]);
                Ok(0)
            }
            None => Err(libc::EBADF),
        }
    }

    /// A write's bytes: the recorded ones, else fill data (and the warning that says so).
    fn uring_payload(&self, op: &u::UringOp, len: i64) -> std::borrow::Cow<'_, [u8]> {
        let len = len.max(0) as usize;
        if matches!(self.arg("buf_in"), ArgValue::Absent) {
            // `--data none` keeps none; data_source 4: not captured; vectored data before the
            // eBPF recorder copied it. A write of bytes the trace does not hold writes fill
            // data, and says so.
            if len > 0 && (self.rec_ok() || op.data == UringData::InVec) {
                self.filled.set(true);
            }
            return std::borrow::Cow::Owned(super::fill(self.sh.opts.fill, self.ev.unique_id, len));
        }
        let d = self.payload("buf_in", len);
        match d {
            std::borrow::Cow::Borrowed(b) => std::borrow::Cow::Borrowed(&b[..len.min(b.len())]),
            std::borrow::Cow::Owned(mut v) => {
                v.truncate(len);
                std::borrow::Cow::Owned(v)
            }
        }
    }

    /// The bytes a vectored request moves, as one iovec (the trace holds its data, not how
    /// its iovecs cut it): a write's recorded bytes, a read's recorded result; without data
    /// in the trace, the recorded result (0 for a failed one), with a warning.
    fn uring_vec_len(&mut self, op: &u::UringOp) -> usize {
        match (op.data, self.arg("buf_in"), self.arg("buf_out")) {
            (UringData::InVec, ArgValue::Data(d), _) => return d.len(),
            (UringData::OutVec, _, ArgValue::Data(_)) if self.rec_ok() => {
                return self.rec_ret().clamp(0, 1 << 30) as usize
            }
            _ => {}
        }
        self.warn(format!(
            "io_uring {}: the trace holds neither its iovecs nor its data: replayed as one \
             iovec of the recorded result's length (written: fill data), data not compared",
            op.name
        ));
        if self.rec_ok() {
            self.rec_ret().clamp(0, 1 << 30) as usize
        } else {
            0
        }
    }

    /// `--uring as-syscalls`: the system call the request stands for.
    #[allow(clippy::too_many_arguments)]
    fn uring_as_syscall(
        &mut self,
        kind: Kind,
        raw: RawFd,
        off: i64,
        len: i64,
        addr: i64,
        op_flags: i64,
    ) -> Result<i64, i32> {
        let op = u::lookup(self.i("opcode")?).expect("looked up before");
        let r = match kind {
            Kind::Nop => Ok(0),
            Kind::Read { .. } => {
                let n = len.max(0) as usize;
                let got = with_buf(n, |b| {
                    let r = if off == -1 { sys::read(raw, b) } else { sys::pread(raw, b, off) };
                    r.map(|n| b[..n.max(0) as usize].to_vec())
                })?;
                if !got.is_empty() {
                    self.check_data("buf_out", &got);
                }
                Ok(got.len() as i64)
            }
            Kind::Write { .. } => {
                let data = self.uring_payload(op, len);
                let go = |d: &[u8]| {
                    if off == -1 {
                        sys::write(raw, d)
                    } else {
                        sys::pwrite(raw, d, off)
                    }
                };
                match go(&data) {
                    Err(libc::EINVAL) if sys::is_direct(raw) => {
                        go(sys::Aligned::concat(&[&data]).as_slice())
                    }
                    r => r,
                }
            }
            Kind::ReadV | Kind::WriteV => {
                let n = self.uring_vec_len(op);
                if kind == Kind::WriteV {
                    let data = self.uring_payload(op, n as i64);
                    let iov = [libc::iovec { iov_base: data.as_ptr() as *mut _, iov_len: n }];
                    sys::pwritev2(raw, &iov, off, op_flags as i32)
                } else {
                    let (r, got) = with_buf(n, |b| {
                        let iov = [libc::iovec { iov_base: b.as_mut_ptr().cast(), iov_len: n }];
                        let r = sys::preadv2(raw, &iov, off, op_flags as i32);
                        let got = match r {
                            Ok(k) => b[..(k.max(0) as usize).min(n)].to_vec(),
                            Err(_) => Vec::new(),
                        };
                        Ok::<_, i32>((r, got))
                    })?;
                    if !got.is_empty() && matches!(self.arg("buf_out"), ArgValue::Data(_)) {
                        self.check_data("buf_out", &got);
                    }
                    r
                }
            }
            Kind::Fsync => {
                if op_flags as u32 & u::IORING_FSYNC_DATASYNC != 0 {
                    sys::raw(libc::SYS_fdatasync, &[raw.into()])
                } else {
                    sys::raw(libc::SYS_fsync, &[raw.into()])
                }
            }
            Kind::SyncFileRange => {
                sys::raw(libc::SYS_sync_file_range, &[raw.into(), off, len, op_flags])
            }
            Kind::Fallocate => sys::raw(libc::SYS_fallocate, &[raw.into(), len, off, addr]),
            Kind::Fadvise => sys::raw(libc::SYS_fadvise64, &[raw.into(), off, len, op_flags]),
            Kind::Ftruncate => sys::raw(libc::SYS_ftruncate, &[raw.into(), off]),
            Kind::Close => unreachable!("closed by uring_close"),
        };
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::{execute, Mode, Shared};
    use crate::sandbox::Root;
    use crate::shadow::Placement;
    use crate::world::{Process, Procs};
    use crate::Options;
    use ra_trace::ArgValue::Int;

    /// A request on descriptor 5 of ring 1, recorded with `res`.
    fn op(opcode: i64, sqe_flags: i64, res: i64, buf_in: Option<&[u8]>) -> Event {
        let (ret, errno) = if res < 0 { (-1, -res as i32) } else { (res, 0) };
        let mut args = vec![
            ("ring", Int(1)),
            ("ring_fd", Int(3)),
            ("opcode", Int(opcode)),
            ("fd", Int(5)),
            ("offset", Int(0)),
            ("addr", Int(0x1000)),
            ("len", Int(buf_in.map_or(0, |b| b.len() as i64))),
            ("sqe_flags", Int(sqe_flags)),
            ("op_flags", Int(0)),
            ("ioprio", Int(0)),
            ("user_data", Int(1)),
            ("buf_index", Int(0)),
            ("uring_flags", Int(0)),
        ];
        if let Some(b) = buf_in {
            args.push(("buf_in", ArgValue::data(b.to_vec())));
        }
        crate::testutil::event("io_uring_op", 100, ret, errno, &args)
    }

    /// A linked write that fails in the replay cancels the request after it, as the kernel
    /// does (the chain's members are submitted one by one); a request after the chain is
    /// issued again; a write without its bytes in the trace writes fill data with a warning;
    /// a ring whose descriptors are all closed is dropped at the next setup. Through a ring
    /// and as system calls.
    #[test]
    fn broken_chains_unrecorded_writes_and_closed_rings() {
        for mode in [UringMode::Ring, UringMode::AsSyscalls { fallback: None }] {
            if mode == UringMode::Ring && probe().is_err() {
                eprintln!("skip: no io_uring here: {:?}", probe());
                continue;
            }
            let dir = std::env::temp_dir().join(format!("ra-uring-unit-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("f"), b"x").unwrap();
            let mut opts = Options::new(dir.clone());
            opts.uring = mode.clone();
            let sh = Shared {
                root: Root::new(&dir).unwrap(),
                procs: Procs::default(),
                opts,
                abort: AtomicBool::new(false),
                is_root: false,
                page_records: true,
                in_flight: Default::default(),
                rings: Default::default(),
            };
            let p = Arc::new(Process::initial(b"/".to_vec(), 0o022, true));
            // Descriptor 5: the file, read-only (a write on it fails EBADF).
            let f = std::fs::File::open(dir.join("f")).unwrap();
            lock(&p.fds).insert(
                5,
                FdEntry {
                    file: OpenFile::new(Handle::File(f.into()), b"/f".to_vec(), 0),
                    cloexec: false,
                },
            );
            let pl = Placement::default();
            let link = i64::from(u::IOSQE_IO_LINK);
            let run = |e: &Event| execute(&sh, &p, e, &pl);
            let w = run(&op(23, link, -i64::from(libc::EBADF), Some(b"abcd")));
            assert_eq!((w.mode, w.res), (Mode::Issued, Err(libc::EBADF)), "{mode:?}: {w:?}");
            let c = run(&op(3, 0, -i64::from(libc::ECANCELED), None));
            assert_eq!((c.mode, c.res), (Mode::Emulated, Err(libc::ECANCELED)), "{mode:?}: {c:?}");
            let s = run(&op(3, 0, 0, None));
            assert_eq!((s.mode, s.res), (Mode::Issued, Ok(0)), "{mode:?}: {s:?}");
            // A write whose bytes the trace does not hold (`record --data none`) writes fill
            // data and says so (here it fails, the descriptor being read-only, as recorded).
            let mut e = op(23, 0, -i64::from(libc::EBADF), None);
            e.set_arg("len", Int(4));
            let n = run(&e);
            assert_eq!((n.mode, n.res), (Mode::Issued, Err(libc::EBADF)), "{mode:?}: {n:?}");
            let mut e = op(23, 0, 4, None);
            e.set_arg("len", Int(4));
            let n = run(&e);
            assert!(n.warn.as_deref().is_some_and(|w| w.contains("--fill bytes written")), "{n:?}");
            // Rings whose descriptors were all closed are dropped at the next setup.
            let setup = |fd| {
                crate::testutil::event(
                    "io_uring_setup",
                    100,
                    fd,
                    0,
                    &[("entries", Int(8)), ("p", Int(0x1000))],
                )
            };
            let close = crate::testutil::event("close", 100, 0, 0, &[("fd", Int(6))]);
            for e in [setup(6), close, setup(7), setup(8)] {
                let o = run(&e);
                assert!(o.res.is_ok() && o.mode != Mode::Simulated, "{mode:?}: {e:?}: {o:?}");
            }
            let live: Vec<i32> =
                lock(&sh.rings.inner).by_fd.keys().map(|&(_, fd)| fd).collect::<Vec<_>>();
            assert!(!live.contains(&6) && live.contains(&7) && live.contains(&8), "{live:?}");
            assert_eq!(std::fs::read(dir.join("f")).unwrap(), b"x");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
