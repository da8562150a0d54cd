//! Thin wrappers over the system calls the replayer issues: each returns the call's result or
//! its errno, as the replayed program would have seen them.

use std::ffi::CStr;
use std::os::fd::RawFd;

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

pub fn read(fd: RawFd, buf: &mut [u8]) -> R {
    // SAFETY: `buf` is valid for writes of its length.
    r(unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } as i64)
}
pub fn pread(fd: RawFd, buf: &mut [u8], off: i64) -> R {
    // SAFETY: `buf` is valid for writes of its length.
    r(unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), off) } as i64)
}
pub fn write(fd: RawFd, buf: &[u8]) -> R {
    // SAFETY: `buf` is valid for reads of its length.
    r(unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) } as i64)
}
pub fn pwrite(fd: RawFd, buf: &[u8], off: i64) -> R {
    // SAFETY: `buf` is valid for reads of its length.
    r(unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), off) } as i64)
}

/// `preadv2`/`pwritev2` with the offset (-1: the file position) and flags; `iov` points into
/// buffers the caller keeps alive.
pub fn preadv2(fd: RawFd, iov: &[libc::iovec], off: i64, flags: i32) -> R {
    // SAFETY: every iovec describes a live buffer owned by the caller, valid for writes.
    r(unsafe { libc::preadv2(fd, iov.as_ptr(), iov.len() as i32, off, flags) } as i64)
}
pub fn pwritev2(fd: RawFd, iov: &[libc::iovec], off: i64, flags: i32) -> R {
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

/// The raw bytes of `struct stat` for `fd` (AT_EMPTY_PATH).
pub fn stat_bytes(fd: RawFd) -> Result<Vec<u8>, i32> {
    let st = fstat_at(fd)?;
    // SAFETY: `libc::stat` is plain old data; viewing it as bytes is sound.
    let b = unsafe {
        std::slice::from_raw_parts(
            (&st as *const libc::stat).cast::<u8>(),
            std::mem::size_of::<libc::stat>(),
        )
    };
    Ok(b.to_vec())
}

/// The raw bytes of `struct statx` for `fd` (AT_EMPTY_PATH plus `flags`).
pub fn statx_bytes(fd: RawFd, flags: i32, mask: u32) -> Result<Vec<u8>, i32> {
    let mut b = vec![0u8; 256];
    // SAFETY: `b` has room for the 256-byte struct statx; the path is the empty C string.
    let v = unsafe {
        libc::syscall(
            libc::SYS_statx,
            fd,
            EMPTY.as_ptr(),
            flags | AT_EMPTY_PATH,
            mask,
            b.as_mut_ptr(),
        )
    };
    if v < 0 {
        Err(errno())
    } else {
        Ok(b)
    }
}

pub fn fstatfs_bytes(fd: RawFd) -> Result<Vec<u8>, i32> {
    let mut b = vec![0u8; 120];
    // SAFETY: `b` has room for the 120-byte x86_64 struct statfs.
    let v = unsafe { libc::syscall(libc::SYS_fstatfs, fd, b.as_mut_ptr()) };
    if v < 0 {
        Err(errno())
    } else {
        Ok(b)
    }
}

pub fn faccessat2(fd: RawFd, mode: i32, flags: i32) -> R {
    // SAFETY: empty C string path; integer arguments.
    r(unsafe {
        libc::syscall(libc::SYS_faccessat2, fd, EMPTY.as_ptr(), mode, flags | AT_EMPTY_PATH)
    })
}

pub fn mkdirat(dir: RawFd, name: &CStr, mode: u32) -> R {
    // SAFETY: `name` is NUL-terminated.
    r(unsafe { libc::mkdirat(dir, name.as_ptr(), mode) } as i64)
}
pub fn mknodat(dir: RawFd, name: &CStr, mode: u32, dev: u64) -> R {
    // SAFETY: `name` is NUL-terminated.
    r(unsafe { libc::mknodat(dir, name.as_ptr(), mode, dev) } as i64)
}
pub fn unlinkat(dir: RawFd, name: &CStr, flags: i32) -> R {
    // SAFETY: `name` is NUL-terminated.
    r(unsafe { libc::unlinkat(dir, name.as_ptr(), flags) } as i64)
}
pub fn symlinkat(target: &CStr, dir: RawFd, name: &CStr) -> R {
    // SAFETY: both strings are NUL-terminated.
    r(unsafe { libc::symlinkat(target.as_ptr(), dir, name.as_ptr()) } as i64)
}
/// Hard link of the file `old` (an O_PATH fd) as `name` in `dir`.
pub fn link_fd(old: RawFd, dir: RawFd, name: &CStr) -> R {
    // SAFETY: both strings are NUL-terminated.
    r(unsafe { libc::linkat(old, EMPTY.as_ptr(), dir, name.as_ptr(), AT_EMPTY_PATH) } as i64)
}
pub fn renameat2(od: RawFd, on: &CStr, nd: RawFd, nn: &CStr, flags: u32) -> R {
    // SAFETY: both names are NUL-terminated.
    r(unsafe { libc::syscall(libc::SYS_renameat2, od, on.as_ptr(), nd, nn.as_ptr(), flags) })
}
pub fn readlink_fd(fd: RawFd, buf: &mut [u8]) -> R {
    // SAFETY: `buf` is valid for writes of its length; empty path.
    r(unsafe { libc::readlinkat(fd, EMPTY.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) } as i64)
}
pub fn fchmodat2(fd: RawFd, mode: u32, flags: i32) -> R {
    // SAFETY: empty C string path; integer arguments.
    r(unsafe {
        libc::syscall(libc::SYS_fchmodat2, fd, EMPTY.as_ptr(), mode, flags | AT_EMPTY_PATH)
    })
}
pub fn fchownat(fd: RawFd, uid: u32, gid: u32, flags: i32) -> R {
    // SAFETY: empty C string path; integer arguments.
    r(unsafe { libc::fchownat(fd, EMPTY.as_ptr(), uid, gid, flags | AT_EMPTY_PATH) } as i64)
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
    // SAFETY: `value` is valid for reads of its length; strings are NUL-terminated.
    r(unsafe {
        libc::setxattr(p.as_ptr(), name.as_ptr(), value.as_ptr().cast(), value.len(), flags)
    } as i64)
}
pub fn getxattr_path(p: &CStr, name: &CStr, buf: &mut [u8]) -> R {
    // SAFETY: `buf` is valid for writes of its length; strings are NUL-terminated.
    r(unsafe { libc::getxattr(p.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) }
        as i64)
}
pub fn listxattr_path(p: &CStr, buf: &mut [u8]) -> R {
    // SAFETY: `buf` is valid for writes of its length; `p` is NUL-terminated.
    r(unsafe { libc::listxattr(p.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) } as i64)
}
pub fn removexattr_path(p: &CStr, name: &CStr) -> R {
    // SAFETY: strings are NUL-terminated.
    r(unsafe { libc::removexattr(p.as_ptr(), name.as_ptr()) } as i64)
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

pub fn pipe2(flags: i32) -> Result<(RawFd, RawFd), i32> {
    let mut p = [0 as RawFd; 2];
    // SAFETY: `p` has room for the two descriptors.
    if unsafe { libc::pipe2(p.as_mut_ptr(), flags) } < 0 {
        return Err(errno());
    }
    Ok((p[0], p[1]))
}

pub fn memfd_create(name: &CStr, flags: u32) -> R {
    // SAFETY: `name` is NUL-terminated.
    r(unsafe { libc::syscall(libc::SYS_memfd_create, name.as_ptr(), flags) })
}

/// `mmap(NULL, len, prot, flags, fd, off)`: the address chosen by the kernel.
pub fn mmap(len: usize, prot: i32, flags: i32, fd: RawFd, off: i64) -> Result<usize, i32> {
    // SAFETY: a fresh mapping at an address of the kernel's choosing; it overlays nothing.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, off) };
    if p == libc::MAP_FAILED {
        Err(errno())
    } else {
        Ok(p as usize)
    }
}

pub fn msync(addr: usize, len: usize, flags: i32) -> R {
    // SAFETY: (addr, len) lies inside a mapping the replayer created (checked by the caller).
    r(unsafe { libc::msync(addr as *mut libc::c_void, len, flags) } as i64)
}

/// Wait until `fd` is ready for `events` or `ms` milliseconds pass. True when ready.
pub fn poll1(fd: RawFd, events: i16, ms: i32) -> bool {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    loop {
        // SAFETY: one valid pollfd.
        let v = unsafe { libc::poll(&mut p, 1, ms) };
        if v < 0 && errno() == libc::EINTR {
            continue;
        }
        return v > 0;
    }
}

pub fn fsetxattr(fd: RawFd, name: &CStr, value: &[u8], flags: i32) -> R {
    // SAFETY: `value` is valid for reads of its length; `name` is NUL-terminated.
    r(unsafe { libc::fsetxattr(fd, name.as_ptr(), value.as_ptr().cast(), value.len(), flags) }
        as i64)
}
pub fn fgetxattr(fd: RawFd, name: &CStr, buf: &mut [u8]) -> R {
    // SAFETY: `buf` is valid for writes of its length; `name` is NUL-terminated.
    r(unsafe { libc::fgetxattr(fd, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) } as i64)
}
pub fn flistxattr(fd: RawFd, buf: &mut [u8]) -> R {
    // SAFETY: `buf` is valid for writes of its length.
    r(unsafe { libc::flistxattr(fd, buf.as_mut_ptr().cast(), buf.len()) } as i64)
}
pub fn fremovexattr(fd: RawFd, name: &CStr) -> R {
    // SAFETY: `name` is NUL-terminated.
    r(unsafe { libc::fremovexattr(fd, name.as_ptr()) } as i64)
}

/// `linkat(AT_FDCWD, "/proc/self/fd/N", dir, name, AT_SYMLINK_FOLLOW)`: the unprivileged way
/// to link an open file.
pub fn link_proc(old: RawFd, dir: RawFd, name: &CStr) -> R {
    let p = std::ffi::CString::new(format!("/proc/self/fd/{old}")).map_err(|_| libc::EINVAL)?;
    // SAFETY: both strings are NUL-terminated.
    r(unsafe {
        libc::linkat(libc::AT_FDCWD, p.as_ptr(), dir, name.as_ptr(), libc::AT_SYMLINK_FOLLOW)
    } as i64)
}

/// `sendfile`/`copy_file_range`/`splice` with optional in-out offsets.
pub fn sendfile(out: RawFd, inp: RawFd, off: Option<&mut i64>, count: usize) -> R {
    let p = off.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    // SAFETY: `p` is null or a live i64.
    r(unsafe { libc::sendfile(out, inp, p, count) } as i64)
}
pub fn copy_file_range(
    fin: RawFd,
    off_in: Option<&mut i64>,
    fout: RawFd,
    off_out: Option<&mut i64>,
    len: usize,
    flags: u32,
) -> R {
    let a = off_in.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    let b = off_out.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    // SAFETY: `a` and `b` are null or live i64s.
    r(unsafe { libc::syscall(libc::SYS_copy_file_range, fin, a, fout, b, len, flags) })
}
pub fn splice(
    fin: RawFd,
    off_in: Option<&mut i64>,
    fout: RawFd,
    off_out: Option<&mut i64>,
    len: usize,
    flags: u32,
) -> R {
    let a = off_in.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    let b = off_out.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    // SAFETY: `a` and `b` are null or live i64s.
    r(unsafe { libc::syscall(libc::SYS_splice, fin, a, fout, b, len, flags) })
}
