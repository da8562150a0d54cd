//! Thin wrappers over the system calls the replayer issues: each returns the call's result or
//! its errno, as the replayed program would have seen them.
//!
//! They go through rustix wherever it has the call. What stays on libc, and why: `preadv2` /
//! `pwritev2` (offset -1 means "the file position", which rustix's `u64` offsets cannot say),
//! integer-only calls by number (`raw`), the old `getdents` (rustix has only getdents64 behind
//! a directory-reading API), `fcntl` with a `struct flock` for the `F_SETLK` family (rustix
//! offers flock-style locks only), `faccessat2` and `fchmodat2` with `AT_EMPTY_PATH`, `utimensat` with NULL
//! times or a NULL path, and the raw `struct stat`/`statx`/`statfs` bytes, which are compared
//! byte-for-byte with the recorded ones (taken here from rustix's kernel-layout structs).

use std::ffi::CStr;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

use rustix::fs::{AtFlags, Mode};

use crate::sandbox::errno;

/// A call's result: its return value, or its errno.
pub type R = Result<i64, i32>;

/// `AT_EMPTY_PATH` as the `*at` calls take it.
pub const AT_EMPTY_PATH: i32 = libc::AT_EMPTY_PATH;
const EMPTY: &CStr = c"";

fn r(v: i64) -> R {
    if v < 0 {
        Err(errno())
    } else {
        Ok(v)
    }
}

/// A rustix result as a replay result.
fn rx_unit(v: rustix::io::Result<()>) -> R {
    v.map(|()| 0).map_err(|e| e.raw_os_error())
}
fn rx_len(v: rustix::io::Result<usize>) -> R {
    v.map(|n| n as i64).map_err(|e| e.raw_os_error())
}

/// A descriptor the caller keeps open for the duration of the call.
fn bfd(fd: RawFd) -> BorrowedFd<'static> {
    // SAFETY: every descriptor handed to these wrappers is owned by an OpenFile, a Located or
    // the root, all of which outlive the single system call made with it; the 'static borrow
    // never leaves the wrapper.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// An offset the kernel would refuse when negative (EINVAL), as rustix's `u64`.
fn off(o: i64) -> Result<u64, i32> {
    u64::try_from(o).map_err(|_| libc::EINVAL)
}

pub fn read(fd: RawFd, buf: &mut [u8]) -> R {
    rx_len(rustix::io::read(bfd(fd), buf))
}
pub fn pread(fd: RawFd, buf: &mut [u8], o: i64) -> R {
    rx_len(rustix::io::pread(bfd(fd), buf, off(o)?))
}
pub fn write(fd: RawFd, buf: &[u8]) -> R {
    prefault(buf);
    rx_len(rustix::io::write(bfd(fd), buf))
}
pub fn pwrite(fd: RawFd, buf: &[u8], o: i64) -> R {
    prefault(buf);
    rx_len(rustix::io::pwrite(bfd(fd), buf, off(o)?))
}

/// Whether the open file behind `fd` does direct I/O (`O_DIRECT`).
pub fn is_direct(fd: RawFd) -> bool {
    // SAFETY: F_GETFL reads the descriptor's status flags; no memory is passed.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl >= 0 && fl & libc::O_DIRECT != 0
}

/// Turn direct I/O (`O_DIRECT`) on or off for the open file behind `fd` (`EINVAL` where the
/// file system has none). `fd` must stay open for the call, as for every wrapper here.
pub fn set_direct(fd: RawFd, on: bool) -> std::io::Result<()> {
    use rustix::fs::OFlags;
    let fl = rustix::fs::fcntl_getfl(bfd(fd))?;
    let want = if on { fl | OFlags::DIRECT } else { fl - OFlags::DIRECT };
    rustix::fs::fcntl_setfl(bfd(fd), want)?;
    Ok(())
}

/// The alignment direct I/O wants of buffers, file offsets and lengths: a page, which is
/// aligned to every common device's logical block size.
pub const DIRECT_ALIGN: usize = 4096;

/// A copy of some bytes at a page-aligned address, for direct I/O (which wants the user
/// buffer aligned to the device's logical block size: [`DIRECT_ALIGN`]).
pub struct Aligned {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    layout: std::alloc::Layout,
}

impl Aligned {
    /// The bytes of `parts`, one after another.
    pub fn concat(parts: &[&[u8]]) -> Aligned {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let layout = std::alloc::Layout::from_size_align(len.max(1), DIRECT_ALIGN)
            .expect("a buffer's length, page-aligned");
        // SAFETY: the layout's size is non-zero.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        let mut at = 0;
        for p in parts {
            // SAFETY: `at + p.len() <= len <= layout.size()`; the source is another allocation.
            unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), ptr.as_ptr().add(at), p.len()) };
            at += p.len();
        }
        Aligned { ptr, len, layout }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` bytes from `ptr` were allocated and written by `concat`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `concat` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Major page faults of the calling thread so far (faults that waited for the disk).
pub fn thread_major_faults() -> u64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_THREAD needs nothing else.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) } != 0 {
        return 0;
    }
    // SAFETY: initialised: zeroed, then filled by a successful getrusage.
    let ru = unsafe { ru.assume_init() };
    u64::try_from(ru.ru_majflt).unwrap_or(0)
}

/// Touch every page of a buffer about to be written, so that its pages are mapped when the
/// kernel copies from it.
///
/// Since Linux 6.13 a buffered write copies from the caller's memory first and faults the
/// source in only after a short copy. A replay writes from its plan's memory map, whose pages
/// may not be mapped yet (or were dropped behind the replay): the copy then stops at the first
/// missing page, the kernel writes the part it got, a partial block, and reads that block from
/// the disk first. The replay would issue reads the traced program never did (measured: ~9,500
/// 4 KiB reads in the replay of 163k 4 KiB `pwrite`s from a plan not in the page cache, ~430
/// from one in it; 0 from a trace, whose buffers are the process's own).
pub fn prefault(buf: &[u8]) {
    const PAGE: usize = 4096;
    let first = (PAGE - buf.as_ptr() as usize % PAGE) % PAGE;
    if !buf.is_empty() {
        std::hint::black_box(buf[0]);
    }
    for i in (first..buf.len()).step_by(PAGE) {
        std::hint::black_box(buf[i]);
    }
}

/// `preadv2`/`pwritev2` with the offset (-1: the file position) and flags; `iov` points into
/// buffers the caller keeps alive.
pub fn preadv2(fd: RawFd, iov: &[libc::iovec], off: i64, flags: i32) -> R {
    // SAFETY: every iovec describes a live buffer owned by the caller, valid for writes.
    r(unsafe { libc::preadv2(fd, iov.as_ptr(), iov.len() as i32, off, flags) } as i64)
}
pub fn pwritev2(fd: RawFd, iov: &[libc::iovec], off: i64, flags: i32) -> R {
    for v in iov.iter().filter(|v| v.iov_len > 0 && !v.iov_base.is_null()) {
        // SAFETY: every iovec describes a live buffer owned by the caller, valid for reads.
        prefault(unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) });
    }
    // SAFETY: every iovec describes a live buffer owned by the caller, valid for reads.
    r(unsafe { libc::pwritev2(fd, iov.as_ptr(), iov.len() as i32, off, flags) } as i64)
}

/// A raw syscall with integer arguments only.
pub fn raw(nr: libc::c_long, a: &[i64]) -> R {
    let g = |i: usize| a.get(i).copied().unwrap_or(0);
    // SAFETY: callers pass only calls whose arguments are integers or descriptors (no
    // pointers), so the kernel reads no memory on our behalf.
    r(unsafe { libc::syscall(nr, g(0), g(1), g(2), g(3), g(4), g(5)) })
}

/// ioctl with an `int *` argument (FIONBIO, FIOASYNC).
pub fn ioctl_int(fd: RawFd, request: i64, value: i32) -> R {
    let mut v: libc::c_int = value;
    // SAFETY: `v` is a valid int for the kernel to read (and, for any request, write).
    r(unsafe { libc::syscall(libc::SYS_ioctl, fd, request, std::ptr::addr_of_mut!(v)) })
}

pub fn fstat_at(fd: RawFd) -> Result<libc::stat, i32> {
    // SAFETY: zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is valid for writes; the path is the empty C string.
    let v = unsafe { libc::fstatat(fd, EMPTY.as_ptr(), &mut st, AT_EMPTY_PATH) };
    if v < 0 {
        Err(errno())
    } else {
        Ok(st)
    }
}

/// The raw bytes of a kernel-layout struct (`stat`, `statx`, `statfs`).
fn bytes_of<T: Copy>(t: &T) -> Vec<u8> {
    // SAFETY: T is a plain-old-data kernel struct (Copy, no padding invariants); viewing its
    // bytes is sound.
    unsafe { std::slice::from_raw_parts((t as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
        .to_vec()
}

/// The raw bytes of `struct stat` for `fd` (AT_EMPTY_PATH).
pub fn stat_bytes(fd: RawFd) -> Result<Vec<u8>, i32> {
    Ok(bytes_of(&fstat_at(fd)?))
}

// The byte layouts the trace records (x86_64): rustix's structs are the kernel's.
const _: () = assert!(std::mem::size_of::<rustix::fs::Statx>() == 256);
const _: () = assert!(std::mem::size_of::<rustix::fs::StatFs>() == 120);

/// The raw bytes of `struct statx` for `fd` (AT_EMPTY_PATH plus `flags`).
pub fn statx_bytes(fd: RawFd, flags: i32, mask: u32) -> Result<Vec<u8>, i32> {
    let flags = AtFlags::from_bits_retain(flags as u32) | AtFlags::EMPTY_PATH;
    let mask = rustix::fs::StatxFlags::from_bits_retain(mask);
    let x = rustix::fs::statx(bfd(fd), EMPTY, flags, mask).map_err(|e| e.raw_os_error())?;
    Ok(bytes_of(&x))
}

pub fn fstatfs_bytes(fd: RawFd) -> Result<Vec<u8>, i32> {
    Ok(bytes_of(&rustix::fs::fstatfs(bfd(fd)).map_err(|e| e.raw_os_error())?))
}

/// `faccessat2(fd, "", mode, AT_EMPTY_PATH | flags)` (libc: rustix's `accessat` refuses
/// `AT_EMPTY_PATH`).
pub fn faccessat2(fd: RawFd, mode: i32, flags: i32) -> R {
    // SAFETY: empty C string path; integer arguments.
    r(unsafe {
        libc::syscall(libc::SYS_faccessat2, fd, EMPTY.as_ptr(), mode, flags | AT_EMPTY_PATH)
    })
}

pub fn mkdirat(dir: RawFd, name: &CStr, mode: u32) -> R {
    rx_unit(rustix::fs::mkdirat(bfd(dir), name, Mode::from_raw_mode(mode)))
}
/// `mknodat` with the mode as given: a mode without a file type (`0`, `0644`) makes a regular
/// file, as the program's did (a typed wrapper would have to invent a type for it).
pub fn mknodat(dir: RawFd, name: &CStr, mode: u32, dev: u64) -> R {
    // SAFETY: `name` is NUL-terminated; `dir` is open for the call.
    r(unsafe { libc::syscall(libc::SYS_mknodat, dir, name.as_ptr(), mode, dev) })
}
pub fn unlinkat(dir: RawFd, name: &CStr, flags: i32) -> R {
    rx_unit(rustix::fs::unlinkat(bfd(dir), name, AtFlags::from_bits_retain(flags as u32)))
}
pub fn symlinkat(target: &CStr, dir: RawFd, name: &CStr) -> R {
    rx_unit(rustix::fs::symlinkat(target, bfd(dir), name))
}
/// Hard link of the file `old` (an O_PATH fd) as `name` in `dir`.
pub fn link_fd(old: RawFd, dir: RawFd, name: &CStr) -> R {
    rx_unit(rustix::fs::linkat(bfd(old), EMPTY, bfd(dir), name, AtFlags::EMPTY_PATH))
}
pub fn renameat2(od: RawFd, on: &CStr, nd: RawFd, nn: &CStr, flags: u32) -> R {
    let flags = rustix::fs::RenameFlags::from_bits_retain(flags);
    rx_unit(rustix::fs::renameat_with(bfd(od), on, bfd(nd), nn, flags))
}
pub fn readlink_fd(fd: RawFd, buf: &mut [u8]) -> R {
    rx_len(rustix::fs::readlinkat_raw(bfd(fd), EMPTY, buf))
}
pub fn fchmodat2(fd: RawFd, mode: u32, flags: i32) -> R {
    // SAFETY: empty C string path; integer arguments.
    r(unsafe {
        libc::syscall(libc::SYS_fchmodat2, fd, EMPTY.as_ptr(), mode, flags | AT_EMPTY_PATH)
    })
}
pub fn fchownat(fd: RawFd, uid: u32, gid: u32, flags: i32) -> R {
    // (uid_t)-1 / (gid_t)-1: leave it as it is.
    let u = (uid != u32::MAX).then(|| rustix::fs::Uid::from_raw(uid));
    let g = (gid != u32::MAX).then(|| rustix::fs::Gid::from_raw(gid));
    let flags = AtFlags::from_bits_retain(flags as u32) | AtFlags::EMPTY_PATH;
    rx_unit(rustix::fs::chownat(bfd(fd), EMPTY, u, g, flags))
}
/// `utimensat(fd, "", times, AT_EMPTY_PATH | flags)`; `None` = now.
pub fn utimens(fd: RawFd, times: Option<[libc::timespec; 2]>, flags: i32) -> R {
    let p = times.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
    // SAFETY: `p` is null or points at two timespecs that outlive the call.
    r(unsafe { libc::utimensat(fd, EMPTY.as_ptr(), p, flags | AT_EMPTY_PATH) } as i64)
}
/// `utimensat(fd, NULL, times, 0)`: the futimens form.
pub fn futimens(fd: RawFd, times: Option<[libc::timespec; 2]>) -> R {
    let p = times.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
    // SAFETY: `p` is null or points at two timespecs that outlive the call.
    r(unsafe { libc::syscall(libc::SYS_utimensat, fd, std::ptr::null::<u8>(), p, 0) })
}

pub fn setxattr_path(p: &CStr, name: &CStr, value: &[u8], flags: i32) -> R {
    let flags = rustix::fs::XattrFlags::from_bits_retain(flags as u32);
    rx_unit(rustix::fs::setxattr(p, name, value, flags))
}
/// The value's size when `buf` is empty (a size query: nothing is copied), else the bytes
/// copied into `buf`; the same for the other `get`/`list` wrappers.
pub fn getxattr_path(p: &CStr, name: &CStr, buf: &mut [u8]) -> R {
    // SAFETY: `p` and `name` are NUL-terminated; `buf` is valid for writes of its length (the
    // kernel writes nothing for a length of 0).
    r(unsafe { libc::getxattr(p.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) }
        as i64)
}
pub fn listxattr_path(p: &CStr, buf: &mut [u8]) -> R {
    // SAFETY: as in `getxattr_path`.
    r(unsafe { libc::listxattr(p.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) } as i64)
}
pub fn removexattr_path(p: &CStr, name: &CStr) -> R {
    rx_unit(rustix::fs::removexattr(p, name))
}

pub fn getdents(fd: RawFd, buf: &mut [u8], old: bool) -> R {
    let nr = if old { libc::SYS_getdents } else { libc::SYS_getdents64 };
    // SAFETY: `buf` is valid for writes of its length.
    r(unsafe { libc::syscall(nr, fd, buf.as_mut_ptr(), buf.len()) })
}

/// fcntl with a `struct flock` argument (in/out).
pub fn fcntl_lock(fd: RawFd, cmd: i32, fl: &mut libc::flock) -> R {
    // SAFETY: `fl` is a valid struct flock for the kernel to read and write.
    r(unsafe { libc::fcntl(fd, cmd, fl as *mut libc::flock) } as i64)
}

pub fn pipe2(flags: i32) -> Result<(OwnedFd, OwnedFd), i32> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::from_bits_retain(flags as u32))
        .map_err(|e| e.raw_os_error())
}

pub fn memfd_create(name: &CStr, flags: u32) -> Result<OwnedFd, i32> {
    rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::from_bits_retain(flags))
        .map_err(|e| e.raw_os_error())
}

/// `mmap(NULL, len, prot, flags, fd, off)`: the address chosen by the kernel.
pub fn mmap(len: usize, prot: i32, flags: i32, fd: RawFd, o: i64) -> Result<usize, i32> {
    let prot = rustix::mm::ProtFlags::from_bits_retain(prot as u32);
    let flags = rustix::mm::MapFlags::from_bits_retain(flags as u32);
    // SAFETY: a fresh mapping at an address of the kernel's choosing; it overlays nothing.
    let p = unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, flags, bfd(fd), off(o)?) };
    p.map(|a| a as usize).map_err(|e| e.raw_os_error())
}

pub fn msync(addr: usize, len: usize, flags: i32) -> R {
    let flags = rustix::mm::MsyncFlags::from_bits_retain(flags as u32);
    // SAFETY: (addr, len) lies inside a mapping the replayer created (checked by the caller).
    rx_unit(unsafe { rustix::mm::msync(addr as *mut std::ffi::c_void, len, flags) })
}

/// Whether `fd` was opened for the direction of `events` (POLLIN: reading, POLLOUT: writing):
/// on a pipe end opened the other way the call fails with EBADF at once, and no wait makes it
/// ready. True when unknown.
pub fn opened_for(fd: RawFd, events: i16) -> bool {
    use rustix::fs::OFlags;
    let Ok(fl) = rustix::fs::fcntl_getfl(bfd(fd)) else { return true };
    match fl & OFlags::RWMODE {
        m if m == OFlags::RDONLY => events & libc::POLLOUT == 0,
        m if m == OFlags::WRONLY => events & libc::POLLIN == 0,
        _ => true,
    }
}

/// Wait until `fd` is ready for `events` or `ms` milliseconds pass. True when ready.
pub fn poll1(fd: RawFd, events: i16, ms: i32) -> bool {
    let ev = rustix::event::PollFlags::from_bits_retain(events as u16);
    let t = rustix::event::Timespec {
        tv_sec: i64::from(ms / 1000),
        tv_nsec: i64::from(ms % 1000) * 1_000_000,
    };
    loop {
        let mut p = [rustix::event::PollFd::from_borrowed_fd(bfd(fd), ev)];
        match rustix::event::poll(&mut p, Some(&t)) {
            Err(rustix::io::Errno::INTR) => continue,
            r => return r.is_ok_and(|n| n > 0),
        }
    }
}

pub fn fsetxattr(fd: RawFd, name: &CStr, value: &[u8], flags: i32) -> R {
    let flags = rustix::fs::XattrFlags::from_bits_retain(flags as u32);
    rx_unit(rustix::fs::fsetxattr(bfd(fd), name, value, flags))
}
pub fn fgetxattr(fd: RawFd, name: &CStr, buf: &mut [u8]) -> R {
    // SAFETY: as in `getxattr_path`; `fd` is open for the call.
    r(unsafe { libc::fgetxattr(fd, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) } as i64)
}
pub fn flistxattr(fd: RawFd, buf: &mut [u8]) -> R {
    // SAFETY: as in `getxattr_path`; `fd` is open for the call.
    r(unsafe { libc::flistxattr(fd, buf.as_mut_ptr().cast(), buf.len()) } as i64)
}
pub fn fremovexattr(fd: RawFd, name: &CStr) -> R {
    rx_unit(rustix::fs::fremovexattr(bfd(fd), name))
}

/// `linkat(AT_FDCWD, "/proc/self/fd/N", dir, name, AT_SYMLINK_FOLLOW)`: the unprivileged way
/// to link an open file.
pub fn link_proc(old: RawFd, dir: RawFd, name: &CStr) -> R {
    let p = format!("/proc/self/fd/{old}");
    rx_unit(rustix::fs::linkat(
        rustix::fs::CWD,
        p.as_str(),
        bfd(dir),
        name,
        AtFlags::SYMLINK_FOLLOW,
    ))
}

/// An in-out offset as rustix's `u64` (a negative one is the kernel's EINVAL), written back.
fn with_off<T>(
    o: Option<&mut i64>,
    f: impl FnOnce(Option<&mut u64>) -> Result<T, i32>,
) -> Result<T, i32> {
    match o {
        None => f(None),
        Some(o) => {
            let mut u = off(*o)?;
            let r = f(Some(&mut u));
            *o = u as i64;
            r
        }
    }
}

/// `sendfile`/`copy_file_range`/`splice` with optional in-out offsets.
pub fn sendfile(out: RawFd, inp: RawFd, o: Option<&mut i64>, count: usize) -> R {
    with_off(o, |o| rx_len(rustix::fs::sendfile(bfd(out), bfd(inp), o, count)))
}
pub fn copy_file_range(
    fin: RawFd,
    off_in: Option<&mut i64>,
    fout: RawFd,
    off_out: Option<&mut i64>,
    len: usize,
    flags: u32,
) -> R {
    if flags != 0 {
        // No flags are defined: the kernel answers EINVAL.
        return Err(libc::EINVAL);
    }
    with_off(off_in, |a| {
        with_off(off_out, |b| rx_len(rustix::fs::copy_file_range(bfd(fin), a, bfd(fout), b, len)))
    })
}
pub fn splice(
    fin: RawFd,
    off_in: Option<&mut i64>,
    fout: RawFd,
    off_out: Option<&mut i64>,
    len: usize,
    flags: u32,
) -> R {
    let flags = rustix::pipe::SpliceFlags::from_bits_retain(flags);
    with_off(off_in, |a| {
        with_off(off_out, |b| rx_len(rustix::pipe::splice(bfd(fin), a, bfd(fout), b, len, flags)))
    })
}

/// tee(2): up to `len` bytes of pipe `fin` duplicated into pipe `fout`, `fin` keeping them.
pub fn tee(fin: RawFd, fout: RawFd, len: usize, flags: u32) -> R {
    let flags = rustix::pipe::SpliceFlags::from_bits_retain(flags);
    rx_len(rustix::pipe::tee(bfd(fin), bfd(fout), len, flags))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading a mapped file's pages that are not in the page cache counts major faults (the
    /// replay's report of waits on a plan's pages depends on it). The file is made next to the
    /// test binary: a disk, not a tmpfs, whose pages cannot be dropped.
    #[test]
    fn major_faults_of_the_thread_are_counted() {
        use std::io::Write;
        let dir = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
        let path = dir.join(format!("ra-majflt-{}", std::process::id()));
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        // SAFETY: plain fadvise on an open descriptor.
        let r = unsafe {
            libc::posix_fadvise(
                std::os::fd::AsRawFd::as_raw_fd(&f),
                0,
                0,
                libc::POSIX_FADV_DONTNEED,
            )
        };
        assert_eq!(r, 0);
        let f = std::fs::File::open(&path).unwrap();
        // SAFETY: a read-only private map of a file only this test writes.
        let map = unsafe { memmap2::Mmap::map(&f) }.unwrap();
        let before = thread_major_faults();
        prefault(&map);
        let after = thread_major_faults();
        drop(map);
        let _ = std::fs::remove_file(&path);
        assert!(after > before, "{before} -> {after}");
    }

    #[test]
    fn prefault_touches_any_buffer() {
        prefault(&[]);
        prefault(&[1]);
        prefault(&vec![0u8; 3 * 4096 + 5][1..]);
    }
}
