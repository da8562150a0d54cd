//! The registry: one [`SyscallDef`] per system call.
//!
//! Conventions (see docs/HOWTO_ADD_SYSCALL.md):
//! - `args` are the syscall's registers in order, named as in the man page. Where the raw
//!   syscall differs from the glibc wrapper the man page documents (`faccessat` and `fchmodat`
//!   have no `flags`, `preadv2`'s offset takes two registers, `getcwd` returns a length), the
//!   entry follows the kernel and `proto` says so.
//! - `field` is the trace column. For calls in Re-Animator's schema it is that type's column;
//!   other calls use the same vocabulary (`descriptor`, `given_pathname`, `data_read`,
//!   `data_written`, `bytes_requested`, `offset`, `flags_value`, `mode_value`, ...).
//! - A buffer argument's field holds the DATA; the pointer value itself is not stored.
//! - What tells a call apart from the others of its handler family where its arguments do
//!   not (its I/O class, `nofollow`, implied flags, flush point, ...) follows the entry as
//!   `.io(IoClass::Read)`, `.nofollow()`, ...: the rest of the workspace reads those fields
//!   and never tests a call's name.

use crate::flags::{self, FlagSet};
use crate::Class::*;
use crate::Handler as H;
use crate::ReplayPolicy::*;
use crate::Ret::*;
use crate::{
    Arg, ArgKind, Class, Durability, Extra, Flush, IoClass, KernelCopy, Len, Meaning, ReplayPolicy,
    Ret, Struct, SyscallDef, UringCall,
};

// ---- argument helpers ------------------------------------------------------------------------

const fn arg(name: &'static str, kind: ArgKind, field: &'static str) -> Arg {
    Arg { name, kind, field, meaning: Meaning::Plain }
}
/// An argument whose value is an identity (see [`Meaning`]).
const fn means(a: Arg, meaning: Meaning) -> Arg {
    Arg { meaning, ..a }
}
/// `uid_t owner` stored as `new_owner`.
const fn owner() -> Arg {
    means(int("owner", "new_owner"), Meaning::Uid)
}
/// `gid_t group` stored as `new_group`.
const fn group() -> Arg {
    means(int("group", "new_group"), Meaning::Gid)
}
/// A `pid_t` argument (negative values name process groups).
const fn pid(name: &'static str, field: &'static str) -> Arg {
    means(int(name, field), Meaning::Pid)
}
/// `int fd` stored as `descriptor`.
const fn fd() -> Arg {
    arg("fd", ArgKind::Fd, "descriptor")
}
/// `int sockfd` stored as `descriptor`.
const fn sockfd() -> Arg {
    arg("sockfd", ArgKind::Fd, "descriptor")
}
/// A file descriptor with another name or column.
const fn fd_as(name: &'static str, field: &'static str) -> Arg {
    arg(name, ArgKind::Fd, field)
}
/// `int dirfd` stored as `descriptor`.
const fn dirfd() -> Arg {
    arg("dirfd", ArgKind::DirFd, "descriptor")
}
/// A directory fd with another name or column.
const fn dirfd_as(name: &'static str, field: &'static str) -> Arg {
    arg(name, ArgKind::DirFd, field)
}
/// A path stored as `given_pathname`.
const fn path(name: &'static str) -> Arg {
    arg(name, ArgKind::Path, "given_pathname")
}
/// A path stored in another column.
const fn path_as(name: &'static str, field: &'static str) -> Arg {
    arg(name, ArgKind::Path, field)
}
/// A NUL-terminated string that is not a path (xattr names, fs types).
const fn cstr(name: &'static str, field: &'static str) -> Arg {
    arg(name, ArgKind::InBuf(Len::CStr), field)
}
/// An xattr name, stored as `xattr_name`.
const fn xattr_name() -> Arg {
    means(cstr("name", "xattr_name"), Meaning::XattrName)
}
/// `listxattr`'s list of names, stored as `xattr_list`; its size is argument `capacity`.
const fn xattr_list(capacity: usize) -> Arg {
    means(outbuf("list", Len::Ret, "xattr_list"), Meaning::XattrNames { capacity })
}
const fn int(name: &'static str, field: &'static str) -> Arg {
    arg(name, ArgKind::Int, field)
}
const fn addr(name: &'static str, field: &'static str) -> Arg {
    arg(name, ArgKind::Addr, field)
}
const fn flags(name: &'static str, set: &'static FlagSet, field: &'static str) -> Arg {
    arg(name, ArgKind::Flags(set), field)
}
/// `mode_t mode` stored as `mode_value`.
const fn mode() -> Arg {
    arg("mode", ArgKind::Mode, "mode_value")
}
/// `size_t count` stored as `bytes_requested`.
const fn count() -> Arg {
    int("count", "bytes_requested")
}
/// `off_t offset` stored as `offset`.
const fn offset() -> Arg {
    int("offset", "offset")
}
const fn inbuf(name: &'static str, len: Len, field: &'static str) -> Arg {
    arg(name, ArgKind::InBuf(len), field)
}
const fn outbuf(name: &'static str, len: Len, field: &'static str) -> Arg {
    arg(name, ArgKind::OutBuf(len), field)
}
const fn instruct(name: &'static str, s: Struct, len: Len, field: &'static str) -> Arg {
    arg(name, ArgKind::InStruct(s, len), field)
}
const fn outstruct(name: &'static str, s: Struct, len: Len, field: &'static str) -> Arg {
    arg(name, ArgKind::OutStruct(s, len), field)
}
const fn inoutstruct(name: &'static str, s: Struct, len: Len, field: &'static str) -> Arg {
    arg(name, ArgKind::InOutStruct(s, len), field)
}
const fn iov_in(count: usize, field: &'static str) -> Arg {
    arg("iov", ArgKind::IovIn { count }, field)
}
const fn iov_out(count: usize, field: &'static str) -> Arg {
    arg("iov", ArgKind::IovOut { count }, field)
}
const fn strings(name: &'static str, field: &'static str) -> Arg {
    arg(name, ArgKind::StrArray, field)
}

/// The pseudo-call of a signal delivered to a traced thread ([`SyscallDef::is_signal`]).
pub const SIGNAL_DELIVER: &str = "signal_deliver";

// ---- entry helpers -------------------------------------------------------------------------

/// A call in Re-Animator's schema: `trace` is its type name there.
const fn ra(
    name: &'static str,
    trace: &'static str,
    class: Class,
    replay: ReplayPolicy,
    ret: Ret,
    proto: &'static str,
    args: &'static [Arg],
) -> SyscallDef {
    SyscallDef {
        name,
        trace_name: trace,
        in_reanimator_schema: true,
        args,
        ret,
        class,
        replay,
        proto,
        io_class: IoClass::Other,
        nofollow: false,
        implied_flags: None,
        ends_process: false,
        flush: Flush::No,
        extra: Extra::No,
        durability: None,
        kernel_copy: None,
        uring: None,
    }
}

/// A call Re-Animator did not record: its trace name is its kernel name.
const fn new(
    name: &'static str,
    class: Class,
    replay: ReplayPolicy,
    ret: Ret,
    proto: &'static str,
    args: &'static [Arg],
) -> SyscallDef {
    SyscallDef {
        name,
        trace_name: name,
        in_reanimator_schema: false,
        args,
        ret,
        class,
        replay,
        proto,
        io_class: IoClass::Other,
        nofollow: false,
        implied_flags: None,
        ends_process: false,
        flush: Flush::No,
        extra: Extra::No,
        durability: None,
        kernel_copy: None,
        uring: None,
    }
}

// The traits that tell calls of one handler family apart (see [`SyscallDef`]'s fields), set on
// the entries below as `ra(...).io(IoClass::Read)`.
impl SyscallDef {
    const fn io(self, io_class: IoClass) -> Self {
        SyscallDef { io_class, ..self }
    }
    const fn nofollow(self) -> Self {
        SyscallDef { nofollow: true, ..self }
    }
    const fn implies(self, flags: i64) -> Self {
        SyscallDef { implied_flags: Some(flags), ..self }
    }
    const fn ends_process(self) -> Self {
        SyscallDef { ends_process: true, ..self }
    }
    const fn flush(self, flush: Flush) -> Self {
        SyscallDef { flush, ..self }
    }
    const fn extra(self, extra: Extra) -> Self {
        SyscallDef { extra, ..self }
    }
    const fn durable(self, d: Durability) -> Self {
        SyscallDef { durability: Some(d), ..self }
    }
    const fn copy(self, c: KernelCopy) -> Self {
        SyscallDef { kernel_copy: Some(c), ..self }
    }
    const fn uring(self, u: UringCall) -> Self {
        SyscallDef { uring: Some(u), ..self }
    }
}

// Flag values the implied flags are made of (the same on x86_64 and aarch64).
const O_WRONLY: i64 = 0o1;
const O_CREAT: i64 = 0o100;
const O_TRUNC: i64 = 0o1000;
const AT_REMOVEDIR: i64 = 0x200;
const SIGCHLD: i64 = 17;
const CLONE_VM: i64 = 0x100;
const CLONE_VFORK: i64 = 0x4000;

/// Other names of registry calls, accepted wherever a call is named (`--syscalls`, `--type`,
/// `--where`): what the 32-bit ABIs call them (strace's `src/linux/i386/syscallent.h` and
/// `src/linux/32/syscallent-common-32.h`), each with the kernel name of the call here.
pub static ALIASES: &[(&str, &str)] = &[
    ("_llseek", "lseek"),
    ("_newselect", "select"),
    ("chown32", "chown"),
    ("fchown32", "fchown"),
    ("lchown32", "lchown"),
    ("fadvise64_64", "fadvise64"),
    ("fcntl64", "fcntl"),
    ("fstat64", "fstat"),
    ("fstatat64", "newfstatat"),
    ("fstatfs64", "fstatfs"),
    ("statfs64", "statfs"),
    ("stat64", "stat"),
    ("lstat64", "lstat"),
    ("ftruncate64", "ftruncate"),
    ("truncate64", "truncate"),
    ("mmap2", "mmap"),
    ("sendfile64", "sendfile"),
    ("ppoll_time64", "ppoll"),
    ("pselect6_time64", "pselect6"),
    ("recvmmsg_time64", "recvmmsg"),
    ("utimensat_time64", "utimensat"),
    ("io_pgetevents_time64", "io_pgetevents"),
    ("ugetrlimit", "getrlimit"),
];

const STAT: Struct = Struct::Stat;
const SOCKADDR: Struct = Struct::Sockaddr;

/// Every call we know, grouped by class.
#[rustfmt::skip]
pub static REGISTRY: &[SyscallDef] = &[
    // ---- file data ---------------------------------------------------------------------------
    ra("read", "read", File, Reissue(H::Read), Count,
        "ssize_t read(int fd, void *buf, size_t count);",
        &[fd(), outbuf("buf", Len::Ret, "data_read"), count()])
        .io(IoClass::Read),
    ra("write", "write", File, Reissue(H::Write), Count,
        "ssize_t write(int fd, const void *buf, size_t count);",
        &[fd(), inbuf("buf", Len::Arg(2), "data_written"), count()])
        .io(IoClass::Write),
    ra("pread64", "pread", File, Reissue(H::Read), Count,
        "ssize_t pread64(int fd, void *buf, size_t count, off_t offset);",
        &[fd(), outbuf("buf", Len::Ret, "data_read"), count(), offset()])
        .io(IoClass::Read),
    ra("pwrite64", "pwrite", File, Reissue(H::Write), Count,
        "ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset);",
        &[fd(), inbuf("buf", Len::Arg(2), "data_written"), count(), offset()])
        .io(IoClass::Write),
    ra("readv", "readv", File, Reissue(H::ReadV), Count,
        "ssize_t readv(int fd, const struct iovec *iov, int iovcnt);",
        &[fd(), iov_out(2, "iov_data_read"), int("iovcnt", "count")])
        .io(IoClass::Read),
    ra("writev", "writev", File, Reissue(H::WriteV), Count,
        "ssize_t writev(int fd, const struct iovec *iov, int iovcnt);",
        &[fd(), iov_in(2, "iov_data_written"), int("iovcnt", "count")])
        .io(IoClass::Write),
    new("preadv", File, Reissue(H::ReadV), Count,
        "ssize_t preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset);",
        &[fd(), iov_out(2, "iov_data_read"), int("iovcnt", "count"), offset()])
        .io(IoClass::Read),
    new("pwritev", File, Reissue(H::WriteV), Count,
        "ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset);",
        &[fd(), iov_in(2, "iov_data_written"), int("iovcnt", "count"), offset()])
        .io(IoClass::Write),
    // The raw syscalls pass the offset as two registers (high half 0 on 64-bit), so `flags` is
    // the sixth argument.
    new("preadv2", File, Reissue(H::ReadV), Count,
        "ssize_t preadv2(int fd, const struct iovec *iov, int iovcnt, off_t offset, \
         unsigned long offset_high, int flags);",
        &[fd(), iov_out(2, "iov_data_read"), int("iovcnt", "count"), offset(),
          int("offset_high", "offset_high"), flags("flags", &flags::RWF, "flags_value")])
        .io(IoClass::Read),
    new("pwritev2", File, Reissue(H::WriteV), Count,
        "ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt, off_t offset, \
         unsigned long offset_high, int flags);",
        &[fd(), iov_in(2, "iov_data_written"), int("iovcnt", "count"), offset(),
          int("offset_high", "offset_high"), flags("flags", &flags::RWF, "flags_value")])
        .io(IoClass::Write),
    ra("lseek", "lseek", File, Reissue(H::Seek), Offset,
        "off_t lseek(int fd, off_t offset, int whence);",
        &[fd(), offset(), flags("whence", &flags::SEEK, "whence_value")])
        .io(IoClass::Meta),
    ra("truncate", "truncate", File, Reissue(H::Truncate), Status,
        "int truncate(const char *path, off_t length);",
        &[path("path"), int("length", "truncate_length")])
        .io(IoClass::Write),
    ra("ftruncate", "ftruncate", File, Reissue(H::FdInts), Status,
        "int ftruncate(int fd, off_t length);",
        &[fd(), int("length", "truncate_length")])
        .io(IoClass::Write),
    ra("fallocate", "fallocate", File, Reissue(H::FdInts), Status,
        "int fallocate(int fd, int mode, off_t offset, off_t len);",
        &[fd(), flags("mode", &flags::FALLOC, "mode_value"), int("offset", "allocate_offset"),
          int("len", "allocate_len")])
        .io(IoClass::Write),
    new("fadvise64", File, Reissue(H::FdInts), Status,
        "int fadvise64(int fd, off_t offset, off_t len, int advice);",
        &[fd(), offset(), int("len", "length"), flags("advice", &flags::FADVISE, "advice_value")])
        .io(IoClass::Meta),
    ra("readahead", "readahead", File, Reissue(H::FdInts), Status,
        "ssize_t readahead(int fd, off64_t offset, size_t count);",
        &[fd(), int("offset", "readahead_off"), int("count", "readahead_size")])
        .io(IoClass::Read),
    ra("fsync", "fsync", File, Reissue(H::FdInts), Status, "int fsync(int fd);", &[fd()])
        .io(IoClass::Sync).durable(Durability::File),
    ra("fdatasync", "fdatasync", File, Reissue(H::FdInts), Status, "int fdatasync(int fd);", &[fd()])
        .io(IoClass::Sync).durable(Durability::Data),
    // Re-Animator's type has no column for `nbytes`: it is an extension column here.
    ra("sync_file_range", "sync_file_range", File, Reissue(H::FdInts), Status,
        "int sync_file_range(int fd, off64_t offset, off64_t nbytes, unsigned int flags);",
        &[fd(), offset(), int("nbytes", "bytes_requested"),
          flags("flags", &flags::SYNC_FILE_RANGE, "flags")])
        .io(IoClass::Sync).durable(Durability::Range),
    new("sync", File, Reissue(H::Sync), Status, "void sync(void);", &[])
        .io(IoClass::Sync).durable(Durability::All),
    new("syncfs", File, Reissue(H::FdInts), Status, "int syncfs(int fd);", &[fd()])
        .io(IoClass::Sync).durable(Durability::FileSystem),
    ra("flock", "flock", File, Reissue(H::Flock), Status,
        "int flock(int fd, int operation);",
        &[fd(), flags("operation", &flags::FLOCK_OP, "operation_value")])
        .io(IoClass::Meta),
    ra("ioctl", "ioctl", File, Reissue(H::Ioctl), Int,
        "int ioctl(int fd, unsigned long request, void *argp);",
        &[fd(), int("request", "request"), addr("argp", "parameter")])
        .io(IoClass::Meta).extra(Extra::IoctlInt),
    new("sendfile", File, Reissue(H::Copy), Count,
        "ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count);",
        &[fd_as("out_fd", "out_descriptor"), fd_as("in_fd", "in_descriptor"),
          inoutstruct("offset", Struct::Loff, Len::Struct, "offset"), count()])
        .io(IoClass::Write).copy(KernelCopy::Sendfile),
    new("copy_file_range", File, Reissue(H::Copy), Count,
        "ssize_t copy_file_range(int fd_in, off64_t *off_in, int fd_out, off64_t *off_out, \
         size_t len, unsigned int flags);",
        &[fd_as("fd_in", "in_descriptor"),
          inoutstruct("off_in", Struct::Loff, Len::Struct, "in_offset"),
          fd_as("fd_out", "out_descriptor"),
          inoutstruct("off_out", Struct::Loff, Len::Struct, "out_offset"),
          int("len", "bytes_requested"), int("flags", "flags_value")])
        .io(IoClass::Write).copy(KernelCopy::CopyFileRange),
    new("splice", File, Reissue(H::Copy), Count,
        "ssize_t splice(int fd_in, off64_t *off_in, int fd_out, off64_t *off_out, size_t len, \
         unsigned int flags);",
        &[fd_as("fd_in", "in_descriptor"),
          inoutstruct("off_in", Struct::Loff, Len::Struct, "in_offset"),
          fd_as("fd_out", "out_descriptor"),
          inoutstruct("off_out", Struct::Loff, Len::Struct, "out_offset"),
          int("len", "bytes_requested"), flags("flags", &flags::SPLICE, "flags_value")])
        .io(IoClass::Write).copy(KernelCopy::Splice),
    // ---- file namespace and metadata -----------------------------------------------------------
    ra("open", "open", File, Reissue(H::Open), Fd,
        "int open(const char *pathname, int flags, mode_t mode);",
        &[path("pathname"), flags("flags", &flags::OPEN, "open_value"), mode()])
        .io(IoClass::OpenClose),
    ra("openat", "openat", File, Reissue(H::Open), Fd,
        "int openat(int dirfd, const char *pathname, int flags, mode_t mode);",
        &[dirfd(), path("pathname"), flags("flags", &flags::OPEN, "open_value"), mode()])
        .io(IoClass::OpenClose),
    new("openat2", File, Reissue(H::Open), Fd,
        "long openat2(int dirfd, const char *pathname, struct open_how *how, size_t size);",
        &[dirfd(), path("pathname"), instruct("how", Struct::OpenHow, Len::Arg(3), "open_how"),
          int("size", "open_how_size")])
        .io(IoClass::OpenClose),
    ra("creat", "creat", File, Reissue(H::Open), Fd,
        "int creat(const char *pathname, mode_t mode);",
        &[path("pathname"), mode()])
        .io(IoClass::OpenClose).implies(O_CREAT | O_WRONLY | O_TRUNC),
    new("memfd_create", File, Reissue(H::MemfdCreate), Fd,
        "int memfd_create(const char *name, unsigned int flags);",
        &[means(cstr("name", "memfd_name"), Meaning::Name), flags("flags", &flags::MEMFD, "flags_value")])
        .io(IoClass::OpenClose),
    ra("stat", "stat", File, Reissue(H::Stat), Status,
        "int stat(const char *pathname, struct stat *statbuf);",
        &[path("pathname"), outstruct("statbuf", STAT, Len::Struct, "stat_result_raw")])
        .io(IoClass::Meta),
    ra("lstat", "lstat", File, Reissue(H::Stat), Status,
        "int lstat(const char *pathname, struct stat *statbuf);",
        &[path("pathname"), outstruct("statbuf", STAT, Len::Struct, "stat_result_raw")])
        .io(IoClass::Meta).nofollow(),
    ra("fstat", "fstat", File, Reissue(H::Stat), Status,
        "int fstat(int fd, struct stat *statbuf);",
        &[fd(), outstruct("statbuf", STAT, Len::Struct, "stat_result_raw")])
        .io(IoClass::Meta),
    ra("newfstatat", "fstatat", File, Reissue(H::Stat), Status,
        "int newfstatat(int dirfd, const char *pathname, struct stat *statbuf, int flags);",
        &[dirfd(), path("pathname"), outstruct("statbuf", STAT, Len::Struct, "stat_result_raw"),
          flags("flags", &flags::AT_FSTATAT, "flags_value")])
        .io(IoClass::Meta),
    new("statx", File, Reissue(H::Stat), Status,
        "int statx(int dirfd, const char *pathname, int flags, unsigned int mask, \
         struct statx *statxbuf);",
        &[dirfd(), path("pathname"), flags("flags", &flags::AT_STATX, "flags_value"),
          flags("mask", &flags::STATX_MASK, "statx_mask"),
          outstruct("statxbuf", Struct::Statx, Len::Struct, "statx_result_raw")])
        .io(IoClass::Meta),
    ra("statfs", "statfs", File, Reissue(H::Statfs), Status,
        "int statfs(const char *path, struct statfs *buf);",
        &[path("path"), outstruct("buf", Struct::Statfs, Len::Struct, "statfs_result_raw")])
        .io(IoClass::Meta),
    ra("fstatfs", "fstatfs", File, Reissue(H::Statfs), Status,
        "int fstatfs(int fd, struct statfs *buf);",
        &[fd(), outstruct("buf", Struct::Statfs, Len::Struct, "statfs_result_raw")])
        .io(IoClass::Meta),
    ra("access", "access", File, Reissue(H::Access), Status,
        "int access(const char *pathname, int mode);",
        &[path("pathname"), flags("mode", &flags::ACCESS, "mode_value")])
        .io(IoClass::Meta),
    // The kernel's faccessat has no flags argument (glibc's `flags` goes to faccessat2).
    ra("faccessat", "faccessat", File, Reissue(H::Access), Status,
        "int faccessat(int dirfd, const char *pathname, int mode); /* kernel: no flags */",
        &[dirfd(), path("pathname"), flags("mode", &flags::ACCESS, "mode_value")])
        .io(IoClass::Meta),
    new("faccessat2", File, Reissue(H::Access), Status,
        "int faccessat2(int dirfd, const char *pathname, int mode, int flags);",
        &[dirfd(), path("pathname"), flags("mode", &flags::ACCESS, "mode_value"),
          flags("flags", &flags::AT_FACCESSAT, "flags_value")])
        .io(IoClass::Meta),
    // Re-Animator's `getdents` is the old syscall: its fixture traces hold struct linux_dirent
    // records (older glibc read directories with getdents on x86_64).
    ra("getdents", "getdents", File, Reissue(H::Getdents), Count,
        "long getdents(unsigned int fd, struct linux_dirent *dirp, unsigned int count);",
        &[fd(), means(outstruct("dirp", Struct::Dirents, Len::Ret, "dirent_buffer"),
                Meaning::Listing { capacity: 2 }),
          int("count", "count")])
        .io(IoClass::Dir),
    new("getdents64", File, Reissue(H::Getdents), Count,
        "ssize_t getdents64(int fd, void *dirp, size_t count);",
        &[fd(), means(outstruct("dirp", Struct::Dirents64, Len::Ret, "dirent_buffer"),
                Meaning::Listing { capacity: 2 }),
          int("count", "count")])
        .io(IoClass::Dir),
    ra("mkdir", "mkdir", File, Reissue(H::Mkdir), Status,
        "int mkdir(const char *pathname, mode_t mode);",
        &[path("pathname"), mode()])
        .io(IoClass::Dir),
    ra("mkdirat", "mkdirat", File, Reissue(H::Mkdir), Status,
        "int mkdirat(int dirfd, const char *pathname, mode_t mode);",
        &[dirfd(), path("pathname"), mode()])
        .io(IoClass::Dir),
    ra("rmdir", "rmdir", File, Reissue(H::Unlink), Status,
        "int rmdir(const char *pathname);",
        &[path("pathname")])
        .io(IoClass::Dir).implies(AT_REMOVEDIR),
    ra("mknod", "mknod", File, Reissue(H::Mknod), Status,
        "int mknod(const char *pathname, mode_t mode, dev_t dev);",
        &[path("pathname"), mode(), int("dev", "dev")])
        .io(IoClass::Dir),
    ra("mknodat", "mknodat", File, Reissue(H::Mknod), Status,
        "int mknodat(int dirfd, const char *pathname, mode_t mode, dev_t dev);",
        &[dirfd(), path("pathname"), mode(), int("dev", "dev")])
        .io(IoClass::Dir),
    ra("link", "link", File, Reissue(H::Link), Status,
        "int link(const char *oldpath, const char *newpath);",
        &[path_as("oldpath", "given_oldpathname"), path_as("newpath", "given_newpathname")])
        .io(IoClass::Dir),
    ra("linkat", "linkat", File, Reissue(H::Link), Status,
        "int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, \
         int flags);",
        &[dirfd_as("olddirfd", "old_descriptor"), path_as("oldpath", "given_oldpathname"),
          dirfd_as("newdirfd", "new_descriptor"), path_as("newpath", "given_newpathname"),
          flags("flags", &flags::AT_LINKAT, "flag_value")])
        .io(IoClass::Dir),
    ra("unlink", "unlink", File, Reissue(H::Unlink), Status,
        "int unlink(const char *pathname);",
        &[path("pathname")])
        .io(IoClass::Dir),
    ra("unlinkat", "unlinkat", File, Reissue(H::Unlink), Status,
        "int unlinkat(int dirfd, const char *pathname, int flags);",
        &[dirfd(), path("pathname"), flags("flags", &flags::AT_UNLINKAT, "flag_value")])
        .io(IoClass::Dir),
    ra("symlink", "symlink", File, Reissue(H::Symlink), Status,
        "int symlink(const char *target, const char *linkpath);",
        &[path_as("target", "target_pathname"), path("linkpath")])
        .io(IoClass::Dir),
    ra("symlinkat", "symlinkat", File, Reissue(H::Symlink), Status,
        "int symlinkat(const char *target, int newdirfd, const char *linkpath);",
        &[path_as("target", "target_pathname"), dirfd_as("newdirfd", "new_descriptor"),
          path("linkpath")])
        .io(IoClass::Dir),
    ra("readlink", "readlink", File, Reissue(H::Readlink), Count,
        "ssize_t readlink(const char *pathname, char *buf, size_t bufsiz);",
        &[path("pathname"),
          means(outbuf("buf", Len::Ret, "link_value"), Meaning::PathResult { capacity: 2 }),
          int("bufsiz", "buffer_size")])
        .io(IoClass::Meta),
    new("readlinkat", File, Reissue(H::Readlink), Count,
        "ssize_t readlinkat(int dirfd, const char *pathname, char *buf, size_t bufsiz);",
        &[dirfd(), path("pathname"),
          means(outbuf("buf", Len::Ret, "link_value"), Meaning::PathResult { capacity: 3 }),
          int("bufsiz", "buffer_size")])
        .io(IoClass::Meta),
    ra("rename", "rename", File, Reissue(H::Rename), Status,
        "int rename(const char *oldpath, const char *newpath);",
        &[path_as("oldpath", "given_oldname"), path_as("newpath", "given_newname")])
        .io(IoClass::Dir),
    new("renameat", File, Reissue(H::Rename), Status,
        "int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);",
        &[dirfd_as("olddirfd", "old_descriptor"), path_as("oldpath", "given_oldname"),
          dirfd_as("newdirfd", "new_descriptor"), path_as("newpath", "given_newname")])
        .io(IoClass::Dir),
    new("renameat2", File, Reissue(H::Rename), Status,
        "int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, \
         unsigned int flags);",
        &[dirfd_as("olddirfd", "old_descriptor"), path_as("oldpath", "given_oldname"),
          dirfd_as("newdirfd", "new_descriptor"), path_as("newpath", "given_newname"),
          flags("flags", &flags::RENAME, "flags_value")])
        .io(IoClass::Dir),
    ra("chmod", "chmod", File, Reissue(H::Chmod), Status,
        "int chmod(const char *pathname, mode_t mode);",
        &[path("pathname"), mode()])
        .io(IoClass::Meta),
    ra("fchmod", "fchmod", File, Reissue(H::Fchmod), Status,
        "int fchmod(int fd, mode_t mode);",
        &[fd(), mode()])
        .io(IoClass::Meta),
    // The kernel's fchmodat has no flags argument (fchmodat2, Linux 6.6, is not in our headers).
    ra("fchmodat", "fchmodat", File, Reissue(H::Chmod), Status,
        "int fchmodat(int dirfd, const char *pathname, mode_t mode); /* kernel: no flags */",
        &[dirfd(), path("pathname"), mode()])
        .io(IoClass::Meta),
    ra("chown", "chown", File, Reissue(H::Chown), Status,
        "int chown(const char *pathname, uid_t owner, gid_t group);",
        &[path("pathname"), owner(), group()])
        .io(IoClass::Meta),
    new("lchown", File, Reissue(H::Chown), Status,
        "int lchown(const char *pathname, uid_t owner, gid_t group);",
        &[path("pathname"), owner(), group()])
        .io(IoClass::Meta).nofollow(),
    new("fchown", File, Reissue(H::Fchown), Status,
        "int fchown(int fd, uid_t owner, gid_t group);",
        &[fd(), owner(), group()])
        .io(IoClass::Meta),
    new("fchownat", File, Reissue(H::Chown), Status,
        "int fchownat(int dirfd, const char *pathname, uid_t owner, gid_t group, int flags);",
        &[dirfd(), path("pathname"), owner(), group(),
          flags("flags", &flags::AT, "flags_value")])
        .io(IoClass::Meta),
    // Re-Animator stores the times decoded (access_time, mod_time): see Struct::ra_decoded_columns.
    ra("utime", "utime", File, Reissue(H::Utimes), Status,
        "int utime(const char *filename, const struct utimbuf *times);",
        &[path("filename"), instruct("times", Struct::Utimbuf, Len::Struct, "access_time")])
        .io(IoClass::Meta),
    ra("utimes", "utimes", File, Reissue(H::Utimes), Status,
        "int utimes(const char *filename, const struct timeval times[2]);",
        &[path("filename"), instruct("times", Struct::Timeval2, Len::Struct, "access_time")])
        .io(IoClass::Meta),
    new("futimesat", File, Reissue(H::Utimes), Status,
        "int futimesat(int dirfd, const char *pathname, const struct timeval times[2]);",
        &[dirfd(), path("pathname"), instruct("times", Struct::Timeval2, Len::Struct, "times")])
        .io(IoClass::Meta),
    ra("utimensat", "utimensat", File, Reissue(H::Utimes), Status,
        "int utimensat(int dirfd, const char *pathname, const struct timespec times[2], \
         int flags);",
        &[dirfd(), path("pathname"),
          instruct("times", Struct::Timespec2, Len::Struct, "access_time"),
          flags("flags", &flags::AT_UTIMENSAT, "flag_value")])
        .io(IoClass::Meta),
    // ---- extended attributes -----------------------------------------------------------------
    ra("setxattr", "setxattr", File, Reissue(H::Xattr), Status,
        "int setxattr(const char *path, const char *name, const void *value, size_t size, \
         int flags);",
        &[path("path"), xattr_name(), inbuf("value", Len::Arg(3), "value_written"),
          int("size", "value_size"), flags("flags", &flags::XATTR, "flag_value")])
        .io(IoClass::Meta),
    ra("lsetxattr", "lsetxattr", File, Reissue(H::Xattr), Status,
        "int lsetxattr(const char *path, const char *name, const void *value, size_t size, \
         int flags);",
        &[path("path"), xattr_name(), inbuf("value", Len::Arg(3), "value_written"),
          int("size", "value_size"), flags("flags", &flags::XATTR, "flag_value")])
        .io(IoClass::Meta).nofollow(),
    ra("fsetxattr", "fsetxattr", File, Reissue(H::Xattr), Status,
        "int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags);",
        &[fd(), xattr_name(), inbuf("value", Len::Arg(3), "value_written"),
          int("size", "value_size"), flags("flags", &flags::XATTR, "flag_value")])
        .io(IoClass::Meta),
    ra("getxattr", "getxattr", File, Reissue(H::Xattr), Count,
        "ssize_t getxattr(const char *path, const char *name, void *value, size_t size);",
        &[path("path"), xattr_name(), outbuf("value", Len::Ret, "value_read"),
          int("size", "value_size")])
        .io(IoClass::Meta),
    ra("lgetxattr", "lgetxattr", File, Reissue(H::Xattr), Count,
        "ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size);",
        &[path("path"), xattr_name(), outbuf("value", Len::Ret, "value_read"),
          int("size", "value_size")])
        .io(IoClass::Meta).nofollow(),
    ra("fgetxattr", "fgetxattr", File, Reissue(H::Xattr), Count,
        "ssize_t fgetxattr(int fd, const char *name, void *value, size_t size);",
        &[fd(), xattr_name(), outbuf("value", Len::Ret, "value_read"),
          int("size", "value_size")])
        .io(IoClass::Meta),
    ra("listxattr", "listxattr", File, Reissue(H::Xattr), Count,
        "ssize_t listxattr(const char *path, char *list, size_t size);",
        &[path("path"), xattr_list(2), int("size", "list_size")])
        .io(IoClass::Meta),
    ra("llistxattr", "llistxattr", File, Reissue(H::Xattr), Count,
        "ssize_t llistxattr(const char *path, char *list, size_t size);",
        &[path("path"), xattr_list(2), int("size", "list_size")])
        .io(IoClass::Meta).nofollow(),
    ra("flistxattr", "flistxattr", File, Reissue(H::Xattr), Count,
        "ssize_t flistxattr(int fd, char *list, size_t size);",
        &[fd(), xattr_list(2), int("size", "list_size")])
        .io(IoClass::Meta),
    ra("removexattr", "removexattr", File, Reissue(H::Xattr), Status,
        "int removexattr(const char *path, const char *name);",
        &[path("path"), xattr_name()])
        .io(IoClass::Meta),
    ra("lremovexattr", "lremovexattr", File, Reissue(H::Xattr), Status,
        "int lremovexattr(const char *path, const char *name);",
        &[path("path"), xattr_name()])
        .io(IoClass::Meta).nofollow(),
    ra("fremovexattr", "fremovexattr", File, Reissue(H::Xattr), Status,
        "int fremovexattr(int fd, const char *name);",
        &[fd(), xattr_name()])
        .io(IoClass::Meta),
    // ---- descriptors -------------------------------------------------------------------------
    ra("close", "close", Descriptor, Reissue(H::Close), Status, "int close(int fd);", &[fd()])
        .io(IoClass::OpenClose),
    new("close_range", Descriptor, Reissue(H::CloseRange), Status,
        "int close_range(unsigned int first, unsigned int last, unsigned int flags);",
        &[int("first", "first_descriptor"), int("last", "last_descriptor"),
          flags("flags", &flags::CLOSE_RANGE, "flags_value")])
        .io(IoClass::OpenClose),
    ra("dup", "dup", Descriptor, Reissue(H::Dup), Fd,
        "int dup(int oldfd);",
        &[fd_as("oldfd", "descriptor")]),
    ra("dup2", "dup2", Descriptor, Reissue(H::Dup), Fd,
        "int dup2(int oldfd, int newfd);",
        &[fd_as("oldfd", "old_descriptor"), fd_as("newfd", "new_descriptor")]),
    ra("dup3", "dup3", Descriptor, Reissue(H::Dup), Fd,
        "int dup3(int oldfd, int newfd, int flags);",
        &[fd_as("oldfd", "old_descriptor"), fd_as("newfd", "new_descriptor"),
          flags("flags", &flags::DUP3, "flags")]),
    // `arg` is a flag word, an fd, a pid or a `struct flock *` depending on `cmd`:
    // see flags::fcntl_arg_set and flags::fcntl_arg_is_flock.
    ra("fcntl", "fcntl", Descriptor, Reissue(H::Fcntl), Int,
        "int fcntl(int fd, int cmd, unsigned long arg);",
        &[fd(), flags("cmd", &flags::FCNTL_CMD, "command_value"), int("arg", "argument_value")])
        .io(IoClass::Meta).extra(Extra::Flock),
    // Re-Animator stores the two fds decoded (read_descriptor, write_descriptor).
    ra("pipe", "pipe", Descriptor, Reissue(H::Pipe), Status,
        "int pipe(int pipefd[2]);",
        &[outstruct("pipefd", Struct::FdPair, Len::Struct, "read_descriptor")]),
    new("pipe2", Descriptor, Reissue(H::Pipe), Status,
        "int pipe2(int pipefd[2], int flags);",
        &[outstruct("pipefd", Struct::FdPair, Len::Struct, "pipe_descriptors"),
          flags("flags", &flags::PIPE2, "flags_value")]),
    new("tee", Descriptor, Reissue(H::Tee), Count,
        "ssize_t tee(int fd_in, int fd_out, size_t len, unsigned int flags);",
        &[fd_as("fd_in", "in_descriptor"), fd_as("fd_out", "out_descriptor"),
          int("len", "bytes_requested"), flags("flags", &flags::SPLICE, "flags_value")]),
    new("vmsplice", Descriptor, Reissue(H::Vmsplice), Count,
        "ssize_t vmsplice(int fd, const struct iovec *iov, size_t nr_segs, unsigned int flags);",
        &[fd(), iov_in(2, "iov_data_written"), int("nr_segs", "count"),
          flags("flags", &flags::SPLICE, "flags_value")]),
    // ---- asynchronous I/O ----------------------------------------------------------------------
    // io_uring and Linux AIO: the reads and writes they submit run outside system calls, so no
    // tracer sees them. The calls are recorded so that a trace shows the program used them;
    // their handler issues nothing: replay simulates them and says why (io_uring's requests
    // are `io_uring_op` records, replayed through a ring of the replay's own, set up and
    // given its registered files and buffers from these records).
    // io_uring_register's `register_data`: the registered descriptors or buffers the argument
    // names, for the opcodes `ra_syscalls::uring::register` lists (the struct, then the array
    // it points to; at most `register::MAX_ARRAY_BYTES` of the array), read at entry.
    // `params`: struct io_uring_params as the kernel copied it back (the program's flags,
    // sq_thread_cpu/idle, wq_fd, and the ring sizes and features the kernel chose), read at
    // the return of a call that succeeded.
    new("io_uring_setup", File, Reissue(H::AsyncIo), Fd,
        "int io_uring_setup(u32 entries, struct io_uring_params *p);",
        &[int("entries", "entries"),
          inoutstruct("p", Struct::UringParams, Len::Struct, "params")])
        .io(IoClass::Async).uring(UringCall::Setup),
    new("io_uring_enter", File, Reissue(H::AsyncIo), Count,
        "int io_uring_enter(unsigned int fd, u32 to_submit, u32 min_complete, u32 flags, \
         const void *argp, size_t argsz);",
        &[fd(), int("to_submit", "to_submit"), int("min_complete", "min_complete"),
          int("flags", "flags_value"), addr("argp", "argument_address"),
          int("argsz", "argument_size")])
        .io(IoClass::Async).uring(UringCall::Enter),
    new("io_uring_register", File, Reissue(H::AsyncIo), Int,
        "int io_uring_register(unsigned int fd, unsigned int opcode, void *arg, \
         unsigned int nr_args);",
        &[fd(), int("opcode", "operation_value"),
          instruct("arg", Struct::UringRegister, Len::Arg(3), "register_data"),
          int("nr_args", "count")])
        .io(IoClass::Async).uring(UringCall::Register),
    // One io_uring request, SQE and CQE (pseudo-call, recorded by the eBPF recorder from the
    // io_uring_submit_req and io_uring_complete tracepoints). time_called is its submission,
    // time_returned its completion; the result is the CQE's res (negative: the errno).
    // `ring` is the ring (numbered from 1 in order of appearance in the recording); `fd` a
    // descriptor, or with IOSQE_FIXED_FILE in `sqe_flags` an index into the registered files;
    // `enter_id` the unique_id of the io_uring_enter that submitted it (absent: the SQPOLL
    // thread did); `ring_fd` the ring's descriptor in that call (or an earlier one's). The opcode's meaning is `ra_syscalls::uring`'s.
    // `path`, `path2`, `name`, `how`: the strings and `struct open_how` the SQE points to
    // (`ra_syscalls::uring::strings`), read when the kernel took it.
    new("io_uring_op", File, Reissue(H::UringOp), Count,
        "ssize_t io_uring_op(u32 ring, u32 opcode, int fd, u64 offset, void *addr, u32 len, \
         u32 sqe_flags, u32 op_flags, u32 ioprio, u64 user_data, u32 buf_index, \
         u32 personality, u32 file_index, const void *buf_in, void *buf_out, \
         const void *sqe, u32 cqe_flags, u64 enter_id, int data_source, u32 uring_flags, \
         dev_t device, ino_t inode, int ring_fd, const char *path, const char *path2, \
         const char *name, const struct open_how *how); /* pseudo-call */",
        &[int("ring", "ring"), int("opcode", "opcode"), fd(), offset(),
          addr("addr", "address"), int("len", "length"), int("sqe_flags", "sqe_flags"),
          int("op_flags", "op_flags"), int("ioprio", "ioprio"), int("user_data", "user_data"),
          int("buf_index", "buf_index"), int("personality", "personality"),
          int("file_index", "file_index"),
          inbuf("buf_in", Len::Arg(5), "data_written"), outbuf("buf_out", Len::Ret, "data_read"),
          inbuf("sqe", Len::Fixed(64), "sqe"), int("cqe_flags", "cqe_flags"),
          int("enter_id", "enter_id"), int("data_source", "data_source"),
          int("uring_flags", "uring_flags"), int("device", "device"), int("inode", "inode"),
          int("ring_fd", "ring_fd"), path("path"), path_as("path2", "given_newname"),
          xattr_name(), instruct("how", Struct::OpenHow, Len::Arg(5), "open_how")])
        .io(IoClass::Async),
    new("io_setup", File, Reissue(H::AsyncIo), Status,
        "long io_setup(unsigned int nr_events, aio_context_t *ctx_idp);",
        &[int("nr_events", "events"), addr("ctx_idp", "context_address")])
        .io(IoClass::Async),
    new("io_destroy", File, Reissue(H::AsyncIo), Status,
        "long io_destroy(aio_context_t ctx_id);",
        &[int("ctx_id", "context")])
        .io(IoClass::Async),
    new("io_submit", File, Reissue(H::AsyncIo), Count,
        "long io_submit(aio_context_t ctx_id, long nr, struct iocb **iocbpp);",
        &[int("ctx_id", "context"), int("nr", "count"), addr("iocbpp", "iocbs_address")])
        .io(IoClass::Async),
    new("io_cancel", File, Reissue(H::AsyncIo), Status,
        "long io_cancel(aio_context_t ctx_id, struct iocb *iocb, struct io_event *result);",
        &[int("ctx_id", "context"), addr("iocb", "iocb_address"),
          addr("result", "result_address")])
        .io(IoClass::Async),
    new("io_getevents", File, Reissue(H::AsyncIo), Count,
        "long io_getevents(aio_context_t ctx_id, long min_nr, long nr, struct io_event *events, \
         struct timespec *timeout);",
        &[int("ctx_id", "context"), int("min_nr", "min_events"), int("nr", "count"),
          addr("events", "events_address"), addr("timeout", "timeout_address")])
        .io(IoClass::Async),
    new("io_pgetevents", File, Reissue(H::AsyncIo), Count,
        "long io_pgetevents(aio_context_t ctx_id, long min_nr, long nr, \
         struct io_event *events, struct timespec *timeout, const struct __aio_sigset *usig);",
        &[int("ctx_id", "context"), int("min_nr", "min_events"), int("nr", "count"),
          addr("events", "events_address"), addr("timeout", "timeout_address"),
          addr("usig", "sigset_address")])
        .io(IoClass::Async),
    // ---- memory ------------------------------------------------------------------------------
    ra("mmap", "mmap", Memory, Emulate(H::Mmap), Addr,
        "void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset);",
        &[addr("addr", "start_address"), int("length", "length"),
          flags("prot", &flags::PROT, "protection_value"),
          flags("flags", &flags::MAP, "flags_value"), fd(), offset()]),
    ra("munmap", "munmap", Memory, Emulate(H::Munmap), Status,
        "int munmap(void *addr, size_t length);",
        &[addr("addr", "start_address"), int("length", "length")])
        .flush(Flush::Range),
    new("mprotect", Memory, Emulate(H::MemAsRecorded), Status,
        "int mprotect(void *addr, size_t len, int prot);",
        &[addr("addr", "start_address"), int("len", "length"),
          flags("prot", &flags::PROT, "protection_value")]),
    new("madvise", Memory, Emulate(H::MemAsRecorded), Status,
        "int madvise(void *addr, size_t length, int advice);",
        &[addr("addr", "start_address"), int("length", "length"),
          flags("advice", &flags::MADV, "advice_value")]),
    new("msync", Memory, Emulate(H::Msync), Status,
        "int msync(void *addr, size_t length, int flags);",
        &[addr("addr", "start_address"), int("length", "length"),
          flags("flags", &flags::MSYNC, "flags_value")])
        .io(IoClass::Sync).flush(Flush::Range),
    new("mremap", Memory, Emulate(H::Mremap), Addr,
        "void *mremap(void *old_address, size_t old_size, size_t new_size, int flags, \
         void *new_address);",
        &[addr("old_address", "start_address"), int("old_size", "length"),
          int("new_size", "new_length"), flags("flags", &flags::MREMAP, "flags_value"),
          addr("new_address", "new_address")])
        .flush(Flush::Range),
    // Re-Animator pseudo-calls: loads/stores through a file mapping, synthesized by the tracer
    // (no syscall number). Replay turns them into pread/pwrite.
    // Page records of shared file mappings. `fd` is the descriptor the mapping was made with
    // (it may name another file by the time of the record); `address` (the page in the
    // process), `device` and `inode` (the mapped file, st_dev/st_ino encoding) and
    // `pathname` (when known) identify the page and its file whatever became of `fd`.
    ra("mmappread", "mmappread", Memory, Reissue(H::MmapPage), Count,
        "ssize_t mmappread(int fd, void *buf, size_t count, off_t offset, void *address, \
         dev_t device, ino_t inode, const char *pathname); /* pseudo-call */",
        &[fd(), outbuf("buf", Len::Ret, "data_read"), count(), offset(),
          addr("address", "address"), int("device", "device"), int("inode", "inode"),
          path("pathname")]),
    ra("mmappwrite", "mmappwrite", Memory, Reissue(H::MmapPage), Count,
        "ssize_t mmappwrite(int fd, const void *buf, size_t count, off_t offset, \
         void *address, dev_t device, ino_t inode, const char *pathname); /* pseudo-call */",
        &[fd(), inbuf("buf", Len::Arg(2), "data_written"), count(), offset(),
          addr("address", "address"), int("device", "device"), int("inode", "inode"),
          path("pathname")]),
    // ---- processes ---------------------------------------------------------------------------
    ra("clone", "clone", Process, Emulate(H::Clone), Pid,
        "long clone(unsigned long flags, void *stack, int *parent_tid, int *child_tid, \
         unsigned long tls);",
        &[flags("flags", &flags::CLONE, "flag_value"), addr("stack", "child_stack_address"),
          addr("parent_tid", "parent_thread_id"), addr("child_tid", "child_thread_id"),
          int("tls", "new_tls")]),
    new("clone3", Process, Emulate(H::Clone), Pid,
        "long clone3(struct clone_args *cl_args, size_t size);",
        &[instruct("cl_args", Struct::CloneArgs, Len::Arg(1), "clone_args"),
          int("size", "clone_args_size")]),
    ra("fork", "fork", Process, Emulate(H::Clone), Pid, "pid_t fork(void);", &[])
        .implies(SIGCHLD),
    ra("vfork", "vfork", Process, Emulate(H::Clone), Pid, "pid_t vfork(void);", &[])
        .implies(CLONE_VM | CLONE_VFORK | SIGCHLD),
    ra("execve", "execve", Process, Emulate(H::Exec), NoReturn,
        "int execve(const char *pathname, char *const argv[], char *const envp[]);",
        &[path("pathname"), strings("argv", "argument"), strings("envp", "environment")])
        .flush(Flush::All),
    new("execveat", Process, Emulate(H::Exec), NoReturn,
        "int execveat(int dirfd, const char *pathname, char *const argv[], char *const envp[], \
         int flags);",
        &[dirfd(), path("pathname"), strings("argv", "argument"),
          strings("envp", "environment"), flags("flags", &flags::AT, "flags_value")])
        .flush(Flush::All),
    ra("exit", "exit", Process, Emulate(H::Exit), NoReturn,
        "void _exit(int status);",
        &[int("status", "exit_status")]),
    new("exit_group", Process, Emulate(H::Exit), NoReturn,
        "void exit_group(int status);",
        &[int("status", "exit_status")])
        .ends_process().flush(Flush::All),
    ra("chdir", "chdir", Process, Emulate(H::Chdir), Status,
        "int chdir(const char *path);",
        &[path("path")]),
    ra("fchdir", "fchdir", Process, Emulate(H::Fchdir), Status, "int fchdir(int fd);", &[fd()]),
    ra("chroot", "chroot", Process, Emulate(H::Chroot), Status,
        "int chroot(const char *path);",
        &[path("path")]),
    ra("umask", "umask", Process, Emulate(H::Umask), Int,
        "mode_t umask(mode_t mask);",
        &[arg("mask", ArgKind::Mode, "mode_value")]),
    // The raw getcwd returns the length of the path (including the NUL).
    new("getcwd", Process, Skip, Count,
        "long getcwd(char *buf, unsigned long size); /* kernel: returns the length */",
        &[means(outbuf("buf", Len::Ret, "cwd"), Meaning::PathResult { capacity: 1 }), int("size", "buffer_size")]),
    ra("setsid", "setsid", Process, Skip, Pid, "pid_t setsid(void);", &[]),
    ra("setpgid", "setpgid", Process, Skip, Status,
        "int setpgid(pid_t pid, pid_t pgid);",
        &[pid("pid", "pid"), pid("pgid", "pgid")]),
    // Re-Animator stores the limits decoded (resource_soft_limit, resource_hard_limit).
    ra("getrlimit", "getrlimit", Process, Skip, Status,
        "int getrlimit(int resource, struct rlimit *rlim);",
        &[flags("resource", &flags::RLIMIT, "resource_value"),
          outstruct("rlim", Struct::Rlimit, Len::Struct, "resource_soft_limit")]),
    ra("setrlimit", "setrlimit", Process, Skip, Status,
        "int setrlimit(int resource, const struct rlimit *rlim);",
        &[flags("resource", &flags::RLIMIT, "resource_value"),
          instruct("rlim", Struct::Rlimit, Len::Struct, "resource_soft_limit")]),
    new("prlimit64", Process, Skip, Status,
        "int prlimit64(pid_t pid, int resource, const struct rlimit *new_limit, \
         struct rlimit *old_limit);",
        &[pid("pid", "pid"), flags("resource", &flags::RLIMIT, "resource_value"),
          instruct("new_limit", Struct::Rlimit, Len::Struct, "new_limit"),
          outstruct("old_limit", Struct::Rlimit, Len::Struct, "old_limit")]),
    // ---- sockets and event fds ---------------------------------------------------------------
    ra("socket", "socket", Socket, Simulate, Fd,
        "int socket(int domain, int type, int protocol);",
        &[flags("domain", &flags::AF, "domain"), flags("type", &flags::SOCK_TYPE, "type"),
          int("protocol", "protocol")]),
    ra("socketpair", "socketpair", Socket, Simulate, Status,
        "int socketpair(int domain, int type, int protocol, int sv[2]);",
        &[flags("domain", &flags::AF, "domain"), flags("type", &flags::SOCK_TYPE, "type"),
          int("protocol", "protocol"),
          outstruct("sv", Struct::FdPair, Len::Struct, "read_descriptor")]),
    ra("connect", "connect", Socket, Simulate, Status,
        "int connect(int sockfd, const struct sockaddr *addr, socklen_t addrlen);",
        &[sockfd(), instruct("addr", SOCKADDR, Len::Arg(2), "sockaddr_buffer"),
          int("addrlen", "sockaddr_length")]),
    ra("bind", "bind", Socket, Emulate(H::Bind), Status,
        "int bind(int sockfd, const struct sockaddr *addr, socklen_t addrlen);",
        &[sockfd(), instruct("addr", SOCKADDR, Len::Arg(2), "sockaddr_buffer"),
          int("addrlen", "sockaddr_length")]),
    ra("listen", "listen", Socket, Simulate, Status,
        "int listen(int sockfd, int backlog);",
        &[sockfd(), int("backlog", "backlog")]),
    ra("accept", "accept", Socket, Simulate, Fd,
        "int accept(int sockfd, struct sockaddr *addr, socklen_t *addrlen);",
        &[sockfd(), outstruct("addr", SOCKADDR, Len::DerefArg(2), "sockaddr_buffer"),
          addr("addrlen", "sockaddr_length")]),
    ra("accept4", "accept4", Socket, Simulate, Fd,
        "int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);",
        &[sockfd(), outstruct("addr", SOCKADDR, Len::DerefArg(2), "sockaddr_buffer"),
          addr("addrlen", "sockaddr_length"), flags("flags", &flags::SOCK_FLAGS, "flags")]),
    ra("getsockname", "getsockname", Socket, Simulate, Status,
        "int getsockname(int sockfd, struct sockaddr *addr, socklen_t *addrlen);",
        &[sockfd(), outstruct("addr", SOCKADDR, Len::DerefArg(2), "sockaddr_buffer"),
          addr("addrlen", "sockaddr_length")]),
    ra("getpeername", "getpeername", Socket, Simulate, Status,
        "int getpeername(int sockfd, struct sockaddr *addr, socklen_t *addrlen);",
        &[sockfd(), outstruct("addr", SOCKADDR, Len::DerefArg(2), "sockaddr_buffer"),
          addr("addrlen", "sockaddr_length")]),
    ra("shutdown", "shutdown", Socket, Simulate, Status,
        "int shutdown(int sockfd, int how);",
        &[sockfd(), flags("how", &flags::SHUT, "how")]),
    ra("getsockopt", "getsockopt", Socket, Simulate, Status,
        "int getsockopt(int sockfd, int level, int optname, void *optval, socklen_t *optlen);",
        &[sockfd(), int("level", "level"), int("optname", "optname"),
          outbuf("optval", Len::DerefArg(4), "option_value"), addr("optlen", "buffer_size")]),
    ra("setsockopt", "setsockopt", Socket, Simulate, Status,
        "int setsockopt(int sockfd, int level, int optname, const void *optval, \
         socklen_t optlen);",
        &[sockfd(), int("level", "level"), int("optname", "optname"),
          inbuf("optval", Len::Arg(4), "option_value"), int("optlen", "buffer_size")]),
    // Re-Animator's recvfrom has no column for the source address: it is an extension column.
    ra("recvfrom", "recvfrom", Socket, Simulate, Count,
        "ssize_t recvfrom(int sockfd, void *buf, size_t len, int flags, \
         struct sockaddr *src_addr, socklen_t *addrlen);",
        &[sockfd(), outbuf("buf", Len::Ret, "data_read"), int("len", "bytes_requested"),
          flags("flags", &flags::MSG_RECV, "flags_value"),
          outstruct("src_addr", SOCKADDR, Len::DerefArg(5), "sockaddr_buffer"),
          addr("addrlen", "sockaddr_length")]),
    ra("sendto", "sendto", Socket, Simulate, Count,
        "ssize_t sendto(int sockfd, const void *buf, size_t len, int flags, \
         const struct sockaddr *dest_addr, socklen_t addrlen);",
        &[sockfd(), inbuf("buf", Len::Arg(2), "data_written"), int("len", "bytes_requested"),
          flags("flags", &flags::MSG_SEND, "flags_value"),
          instruct("dest_addr", SOCKADDR, Len::Arg(5), "sockaddr_buffer"),
          int("addrlen", "sockaddr_length")]),
    ra("recvmsg", "recvmsg", Socket, Simulate, Count,
        "ssize_t recvmsg(int sockfd, struct msghdr *msg, int flags);",
        &[sockfd(), inoutstruct("msg", Struct::Msghdr, Len::Ret, "iov_data_read"),
          flags("flags", &flags::MSG_RECV, "flags_value")]),
    ra("sendmsg", "sendmsg", Socket, Simulate, Count,
        "ssize_t sendmsg(int sockfd, const struct msghdr *msg, int flags);",
        &[sockfd(), instruct("msg", Struct::Msghdr, Len::Struct, "iov_data_written"),
          flags("flags", &flags::MSG_SEND, "flags_value")]),
    new("recvmmsg", Socket, Simulate, Int,
        "int recvmmsg(int sockfd, struct mmsghdr *msgvec, unsigned int vlen, int flags, \
         struct timespec *timeout);",
        &[sockfd(), inoutstruct("msgvec", Struct::Mmsghdr, Len::Arg(2), "msgvec"),
          int("vlen", "vector_length"), flags("flags", &flags::MSG_RECV, "flags_value"),
          addr("timeout", "timeout")]),
    new("sendmmsg", Socket, Simulate, Int,
        "int sendmmsg(int sockfd, struct mmsghdr *msgvec, unsigned int vlen, int flags);",
        &[sockfd(), instruct("msgvec", Struct::Mmsghdr, Len::Arg(2), "msgvec"),
          int("vlen", "vector_length"), flags("flags", &flags::MSG_SEND, "flags_value")]),
    ra("epoll_create", "epoll_create", Socket, Simulate, Fd,
        "int epoll_create(int size);",
        &[int("size", "epoll_size")]),
    ra("epoll_create1", "epoll_create1", Socket, Simulate, Fd,
        "int epoll_create1(int flags);",
        &[flags("flags", &flags::EPOLL_CREATE1, "epoll_flags")]),
    new("epoll_ctl", Socket, Simulate, Status,
        "int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event);",
        &[fd_as("epfd", "epoll_descriptor"), flags("op", &flags::EPOLL_CTL, "operation_value"),
          fd(), instruct("event", Struct::EpollEvent, Len::Struct, "epoll_event")]),
    new("epoll_wait", Socket, Simulate, Count,
        "int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);",
        &[fd_as("epfd", "epoll_descriptor"), outstruct("events", Struct::EpollEvent, Len::RetTimesStruct, "events"),
          int("maxevents", "max_events"), int("timeout", "timeout")]),
    new("epoll_pwait", Socket, Simulate, Count,
        "int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout, \
         const sigset_t *sigmask, size_t sigsetsize);",
        &[fd_as("epfd", "epoll_descriptor"), outstruct("events", Struct::EpollEvent, Len::RetTimesStruct, "events"),
          int("maxevents", "max_events"), int("timeout", "timeout"), addr("sigmask", "sigmask"),
          int("sigsetsize", "sigset_size")]),
    new("epoll_pwait2", Socket, Simulate, Count,
        "int epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, \
         const struct timespec *timeout, const sigset_t *sigmask, size_t sigsetsize);",
        &[fd_as("epfd", "epoll_descriptor"), outstruct("events", Struct::EpollEvent, Len::RetTimesStruct, "events"),
          int("maxevents", "max_events"), addr("timeout", "timeout"), addr("sigmask", "sigmask"),
          int("sigsetsize", "sigset_size")]),
    new("eventfd2", Socket, Simulate, Fd,
        "int eventfd2(unsigned int initval, int flags);",
        &[int("initval", "initial_value"), flags("flags", &flags::EVENTFD, "flags_value")]),
    // Other calls that create descriptors: captured so the fd numbers replay keeps stay exact.
    new("eventfd", Socket, Simulate, Fd,
        "int eventfd(unsigned int initval); /* kernel: no flags */",
        &[int("initval", "initial_value")]),
    new("timerfd_create", Socket, Simulate, Fd,
        "int timerfd_create(int clockid, int flags);",
        &[int("clockid", "clock_id"), int("flags", "flags_value")]),
    new("signalfd4", Socket, Simulate, Fd,
        "int signalfd4(int fd, const sigset_t *mask, size_t sizemask, int flags);",
        &[fd(), addr("mask", "sigmask"), int("sizemask", "sigset_size"), int("flags", "flags_value")]),
    new("inotify_init1", Socket, Simulate, Fd,
        "int inotify_init1(int flags);",
        &[int("flags", "flags_value")]),
    new("pidfd_open", Socket, Simulate, Fd,
        "int pidfd_open(pid_t pid, unsigned int flags);",
        &[pid("pid", "target_pid"), int("flags", "flags_value")]),
    // ---- other (only with --syscalls all) ----------------------------------------------------
    new("poll", Other, Simulate, Count,
        "int poll(struct pollfd *fds, nfds_t nfds, int timeout);",
        &[addr("fds", "fds"), int("nfds", "nfds"), int("timeout", "timeout")]),
    new("ppoll", Other, Simulate, Count,
        "int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo_p, \
         const sigset_t *sigmask, size_t sigsetsize);",
        &[addr("fds", "fds"), int("nfds", "nfds"), addr("tmo_p", "timeout"),
          addr("sigmask", "sigmask"), int("sigsetsize", "sigset_size")]),
    new("select", Other, Simulate, Count,
        "int select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, \
         struct timeval *timeout);",
        &[int("nfds", "nfds"), addr("readfds", "readfds"), addr("writefds", "writefds"),
          addr("exceptfds", "exceptfds"), addr("timeout", "timeout")]),
    new("pselect6", Other, Simulate, Count,
        "int pselect6(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, \
         const struct timespec *timeout, void *sigmask);",
        &[int("nfds", "nfds"), addr("readfds", "readfds"), addr("writefds", "writefds"),
          addr("exceptfds", "exceptfds"), addr("timeout", "timeout"),
          addr("sigmask", "sigmask")]),
    new("mount", Other, Skip, Status,
        "int mount(const char *source, const char *target, const char *filesystemtype, \
         unsigned long mountflags, const void *data);",
        &[means(cstr("source", "source"), Meaning::Name), path("target"), cstr("filesystemtype", "filesystem_type"),
          flags("mountflags", &flags::MOUNT, "flags_value"), addr("data", "data")]),
    new("umount2", Other, Skip, Status,
        "int umount2(const char *target, int flags);",
        &[path("target"), flags("flags", &flags::UMOUNT, "flags_value")]),
    new("kill", Other, Skip, Status,
        "int kill(pid_t pid, int sig);",
        &[pid("pid", "pid"), flags("sig", &flags::SIGNAL, "signal_value")]),
    new("tgkill", Other, Skip, Status,
        "int tgkill(pid_t tgid, pid_t tid, int sig);",
        &[pid("tgid", "tgid"), pid("tid", "tid"), flags("sig", &flags::SIGNAL, "signal_value")]),
    new("wait4", Other, Skip, Pid,
        "pid_t wait4(pid_t pid, int *wstatus, int options, struct rusage *rusage);",
        &[pid("pid", "pid"), addr("wstatus", "wstatus"), int("options", "options"),
          addr("rusage", "rusage")]),
    new("brk", Other, Skip, Addr,
        "void *brk(void *addr); /* kernel: returns the new break */",
        &[addr("addr", "address")]),
    new("getpid", Other, Skip, Pid, "pid_t getpid(void);", &[]),
    new("getppid", Other, Skip, Pid, "pid_t getppid(void);", &[]),
    new("gettid", Other, Skip, Pid, "pid_t gettid(void);", &[]),
    // (Last: the columns it adds come after every call's in exported tables.)
    // A signal delivered to a traced thread (no syscall: the recorders synthesize it, ptrace at
    // the signal-delivery-stop, eBPF from the `signal_deliver` tracepoint). Its columns are the
    // `siginfo_t` members strace shows; those the signal's `si_code` does not carry are 0.
    // Replay issues nothing for it (docs/TRACE_FORMAT.md 4.4).
    new(SIGNAL_DELIVER, Process, Skip, Status,
        "void signal_deliver(int signo, int errno, int code, pid_t pid, uid_t uid, int status, \
         long utime, long stime, void *addr, int value); /* pseudo-call */",
        &[int("signo", "signal_number"), int("errno", "signal_errno"),
          int("code", "signal_code"), pid("pid", "sender_pid"),
          means(int("uid", "sender_uid"), Meaning::Uid), int("status", "child_status"),
          int("utime", "child_utime"), int("stime", "child_stime"),
          addr("addr", "fault_address"), int("value", "signal_value")]),
];
