//! The syscall registry: one [`SyscallDef`] per system call we know about.
//!
//! Everything else in reanimator is driven by these entries: which calls each capture backend
//! stops on and which buffers it copies (and how long they are), the trace schema (one
//! DataSeries extent type per call, with one field per argument), the `dump` pretty-printer, and
//! the replay policy. Adding a syscall is one entry in `src/defs.rs` plus one line in a workload
//! program that exercises it.
//!
//! Syscall *numbers* are never typed by hand: they come from tables generated from the kernel
//! UAPI headers (`scripts/gen-syscall-tables.py`, see [`arch`]).
//!
//! # Parts
//!
//! THE registry: one `SyscallDef` per call (man-page args with kind, buffer direction and length
//! rule, trace field name; return kind; class; replay policy; each argument's register width,
//! `Width`, derived from the prototype's C types with the kernel's `SYSCALL_DEFINE` corrections in
//! `width.rs`); `io_class` (the profile's I/O classes of calls and FUSE operations); `uring`
//! (io_uring's opcodes: the call each stands for, its I/O class and data direction, the SQE layout;
//! what `dump`, `stats`, `profile` and `export` read an `io_uring_op` event through); flag tables;
//! per-arch number tables and Re-Animator's schema, both generated (`scripts/gen-*.py`); `classes`:
//! strace's call classes of each call (`%file`, `%desc`, ..., generated from a copy of strace's
//! x86_64 table in `scripts/strace-syscallent/`), the 32-bit ABIs' names of calls
//! (`defs::ALIASES`), and `Selection`, the one parser of strace's `-e trace=` lists that `record
//! --syscalls`, `dump --type` and `--where` use; `siginfo`: the members of a delivered signal's
//! `siginfo_t` by its number and code, and their one decoder, for the `signal_deliver` pseudo-call
//! both recorders write and `dump` prints as strace's `--- SIGCHLD {...} ---`.
#![warn(missing_docs)]

pub mod arch;
mod defs;
pub mod flags;
mod ioclass;
pub mod siginfo;
pub mod uring;
pub use ioclass::{io_class, IoClass};
mod width;
pub use width::Width;
mod classes;
pub use classes::{
    call_named, class_members, is_known_syscall, CallClasses, SelectError, Selection,
};

pub use defs::{REGISTRY, SIGNAL_DELIVER};

/// How a call is replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplayPolicy {
    /// Issue the same call again (with fds/paths translated into the replay's world) and verify
    /// its result against the trace; the [`Handler`] says how.
    Reissue(Handler),
    /// Not issued as-is: the replayer emulates its effect on its own state (fd tables, cwd, umask,
    /// address-space map, process tree), e.g. `dup2`, `chdir`, `clone`, `execve`, `mmap`; the
    /// [`Handler`] says how.
    Emulate(Handler),
    /// Not issued: the recorded result and returned buffers are used (sockets, pipes to the
    /// outside world), but fd numbering stays exact.
    Simulate,
    /// Recorded for the analyst, ignored by replay (e.g. `getcwd`, `getrlimit`).
    Skip,
}

impl ReplayPolicy {
    /// The replay handler a reissued or emulated call names.
    pub fn handler(self) -> Option<Handler> {
        match self {
            ReplayPolicy::Reissue(h) | ReplayPolicy::Emulate(h) => Some(h),
            ReplayPolicy::Simulate | ReplayPolicy::Skip => None,
        }
    }
    /// True for [`ReplayPolicy::Reissue`]: replay issues the call again and checks its result.
    pub fn is_reissue(self) -> bool {
        matches!(self, ReplayPolicy::Reissue(_))
    }
    /// True for [`ReplayPolicy::Emulate`]: replay reproduces the call's effect on its own model
    /// instead of issuing it as recorded.
    pub fn is_emulate(self) -> bool {
        matches!(self, ReplayPolicy::Emulate(_))
    }
}

/// The replay handler of a call: one per family of calls that replay alike (`read` and
/// `pread64` are [`Handler::Read`]: the handler tells them apart by their arguments). The
/// replayer implements each (crates/replay: one function per handler, reached through one
/// exhaustive match), and its model of descriptors and processes (shadow.rs) keys on them
/// too, so what a call does in replay follows from its registry entry alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Handler {
    /// `read`, `pread64`: into a buffer, from the current or a given offset.
    Read,
    /// `write`, `pwrite64`.
    Write,
    /// `readv`, `preadv`, `preadv2`.
    ReadV,
    /// `writev`, `pwritev`, `pwritev2`.
    WriteV,
    /// `vmsplice`: bytes into a pipe (its write end) or out of it (its read end).
    Vmsplice,
    /// `tee`: the bytes of one pipe duplicated into another, the first keeping them.
    Tee,
    /// io_uring and Linux AIO (`io_uring_enter`, `io_submit`, ...): the I/O they submit runs
    /// outside system calls and is not in the trace; simulated, with a warning.
    AsyncIo,
    /// `io_uring_op`: one io_uring request (SQE and CQE), recorded by the eBPF recorder. Not
    /// replayed yet: replay says so and counts them (the files they touched can differ).
    UringOp,
    /// `lseek`.
    Seek,
    /// The descriptor translated, every other argument an integer passed on as recorded
    /// (`ftruncate`, `fallocate`, `fadvise64`, `readahead`, `fsync`, `fdatasync`,
    /// `sync_file_range`, `syncfs`).
    FdInts,
    /// `sync`.
    Sync,
    /// `truncate` (by path).
    Truncate,
    /// `flock`.
    Flock,
    /// `ioctl`: `FICLONE` issued between the translated descriptors, `FIONBIO`/`FIOASYNC` with
    /// the recorded `int`, other requests simulated.
    Ioctl,
    /// Kernel-side copies between two descriptors (`sendfile`, `copy_file_range`, `splice`).
    Copy,
    /// `open`, `openat`, `openat2`, `creat`.
    Open,
    /// `memfd_create`.
    MemfdCreate,
    /// The `stat` family (`stat`, `lstat`, `fstat`, `newfstatat`, `statx`).
    Stat,
    /// `statfs`, `fstatfs`.
    Statfs,
    /// `access`, `faccessat`, `faccessat2`.
    Access,
    /// `getdents`, `getdents64`.
    Getdents,
    /// `mkdir`, `mkdirat`.
    Mkdir,
    /// `rmdir`, `unlink`, `unlinkat`.
    Unlink,
    /// `mknod`, `mknodat` (a device node becomes a placeholder file unless `--allow-special`).
    Mknod,
    /// `link`, `linkat`.
    Link,
    /// `symlink`, `symlinkat`.
    Symlink,
    /// `readlink`, `readlinkat`.
    Readlink,
    /// `rename`, `renameat`, `renameat2`.
    Rename,
    /// `chmod`, `fchmodat`.
    Chmod,
    /// `fchmod`.
    Fchmod,
    /// `chown`, `lchown`, `fchownat`.
    Chown,
    /// `fchown`.
    Fchown,
    /// `utime`, `utimes`, `futimesat`, `utimensat`.
    Utimes,
    /// The twelve xattr calls (`[lf]{set,get,list,remove}xattr`).
    Xattr,
    /// `close`.
    Close,
    /// `close_range`.
    CloseRange,
    /// `dup`, `dup2`, `dup3`.
    Dup,
    /// `fcntl`.
    Fcntl,
    /// `pipe`, `pipe2`: a real pipe at the recorded numbers.
    Pipe,
    /// `mmap`.
    Mmap,
    /// `munmap`.
    Munmap,
    /// `mprotect`, `madvise`: the recorded result stands.
    MemAsRecorded,
    /// `msync`.
    Msync,
    /// `mremap`.
    Mremap,
    /// Re-Animator's page records `mmappread`, `mmappwrite`.
    MmapPage,
    /// `clone`, `clone3`, `fork`, `vfork`.
    Clone,
    /// `execve`, `execveat`.
    Exec,
    /// `exit`, `exit_group`.
    Exit,
    /// `chdir`.
    Chdir,
    /// `fchdir`.
    Fchdir,
    /// `chroot` (not reproduced: reported).
    Chroot,
    /// `umask`.
    Umask,
    /// `bind`: the socket stays simulated, but binding a Unix socket to a path makes a socket
    /// file, which later calls see.
    Bind,
}

/// Why a call is in the registry; selects the capture sets (`--syscalls storage|all|LIST`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Reads or changes file contents or file-system namespace/metadata.
    File,
    /// File-descriptor bookkeeping needed to make sense of file calls (dup, fcntl, pipe, close).
    Descriptor,
    /// Memory mappings (file-backed mmap I/O).
    Memory,
    /// Process lifecycle and per-process state (clone, execve, exit, chdir, umask).
    Process,
    /// Sockets and event fds: captured so replay can simulate them.
    Socket,
    /// Everything else we can decode; only captured with `--syscalls all`.
    Other,
}

impl Class {
    /// True for the classes in the default `storage` capture set.
    pub fn is_storage(self) -> bool {
        !matches!(self, Class::Other)
    }
}

/// Where a buffer's length comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Len {
    /// The value of argument number `n` (0-based).
    Arg(usize),
    /// The call's return value (only when it is >= 0).
    Ret,
    /// A fixed number of bytes (e.g. two `int`s for `pipe`).
    Fixed(usize),
    /// NUL-terminated: read up to and including the NUL (paths, xattr names).
    CStr,
    /// The return value (a number of items) times the size of the argument's struct
    /// (`epoll_wait`'s events).
    RetTimesStruct,
    /// The size of the struct named by the argument's [`Struct`].
    Struct,
    /// `*(socklen_t *)arg[n]` after the call: the value-result length of sockaddr calls.
    /// Argument `n` is the `socklen_t *` ([`ArgKind::Addr`]); its field records the
    /// dereferenced length, not the pointer (Re-Animator's `sockaddr_length`, `buffer_size`).
    DerefArg(usize),
}

/// Structs passed by pointer whose bytes are captured verbatim (the trace holds the raw bytes;
/// decoders for display/verification know their layout per arch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Struct {
    /// `struct stat` (x86_64: 144 bytes).
    Stat,
    /// `struct statx` (256 bytes).
    Statx,
    /// `struct statfs` (x86_64: 120 bytes).
    Statfs,
    /// `struct open_how` (openat2; size given by an argument).
    OpenHow,
    /// `struct timespec[2]` (utimensat; NULL = now).
    Timespec2,
    /// `struct timeval[2]` (utimes; NULL = now).
    Timeval2,
    /// `struct utimbuf` (utime).
    Utimbuf,
    /// `int[2]` (pipe, pipe2, socketpair).
    FdPair,
    /// `struct flock` (fcntl F_GETLK/F_SETLK*).
    Flock,
    /// `struct rlimit`.
    Rlimit,
    /// `loff_t` in/out offset pointers (sendfile, copy_file_range, splice).
    Loff,
    /// `struct linux_dirent64` records (getdents64), length from the return value.
    Dirents64,
    /// `struct linux_dirent` records (the old getdents: `d_ino`, `d_off`, `d_reclen`, name at
    /// offset 18, `d_type` in the record's last byte), length from the return value. This is
    /// what Re-Animator's `getdents` type holds.
    Dirents,
    /// `struct sockaddr` of the length given by the [`Len`].
    Sockaddr,
    /// `struct msghdr` (sendmsg/recvmsg): header plus its iovecs.
    Msghdr,
    /// An array of `struct mmsghdr` (sendmmsg/recvmmsg, 64 bytes each), its length an argument.
    Mmsghdr,
    /// `struct clone_args` (clone3; size given by an argument).
    CloneArgs,
    /// `struct epoll_event`.
    EpollEvent,
    /// `struct io_uring_params` (120 bytes; io_uring_setup).
    UringParams,
    /// io_uring_register's argument, by its opcode: the struct (if any) and the array of
    /// descriptors or iovecs it points to, one after the other, as
    /// [`uring::register::layout`] says ([`uring::register::decode`] reads it back).
    UringRegister,
}

impl Struct {
    /// The Re-Animator columns a struct is stored in when Re-Animator keeps it only decoded (no
    /// raw-bytes column): `pipe`/`socketpair` fds, `utime`/`utimes`/`utimensat` times,
    /// `getrlimit`/`setrlimit` limits. For such an argument of an in-schema call, [`Arg::field`]
    /// names the first of these columns (an integer column) and the struct's members fill them
    /// in order. Empty for structs Re-Animator stores as raw bytes (`stat_result_raw`, ...).
    pub fn ra_decoded_columns(self) -> &'static [&'static str] {
        match self {
            Struct::FdPair => &["read_descriptor", "write_descriptor"],
            Struct::Timespec2 | Struct::Timeval2 | Struct::Utimbuf => &["access_time", "mod_time"],
            Struct::Rlimit => &["resource_soft_limit", "resource_hard_limit"],
            _ => &[],
        }
    }

    /// True when [`Struct::ra_decoded_columns`] cannot hold every value of the struct: a
    /// `timeval`'s microseconds or a `timespec`'s nanoseconds out of range (the kernel's
    /// `EINVAL`) fold into the seconds of Re-Animator's nanosecond columns, and the call would
    /// read back as a valid one. Such an argument also gets its raw bytes in a column of its own
    /// (`<argument>_raw`, nullable; trace schema 3).
    pub fn ra_decoded_loses_values(self) -> bool {
        matches!(self, Struct::Timeval2 | Struct::Timespec2)
    }
}

/// What an argument is, and for pointers which way the data flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// A plain integer (counts, lengths, offsets, ids, requests).
    Int,
    /// A file descriptor.
    Fd,
    /// A directory fd for `*at` calls (`AT_FDCWD` = -100 means the cwd).
    DirFd,
    /// A flag word; the flag table decodes it for display and for the schema's bool columns.
    Flags(&'static flags::FlagSet),
    /// Permission bits (`mode_t`), decoded with [`flags::MODE`].
    Mode,
    /// An address that is recorded but not dereferenced (mmap hints, buffer pointers).
    Addr,
    /// A NUL-terminated path read from the tracee before the call.
    Path,
    /// Memory the kernel reads (captured at entry).
    InBuf(Len),
    /// Memory the kernel writes (captured at exit, only on success).
    OutBuf(Len),
    /// A struct the kernel reads (captured at entry). `NULL` is recorded as absent.
    InStruct(Struct, Len),
    /// A struct the kernel writes (captured at exit on success).
    OutStruct(Struct, Len),
    /// A struct the kernel reads and writes (captured at entry and again at exit).
    InOutStruct(Struct, Len),
    /// `const struct iovec *` the kernel reads from; the count is argument `count`.
    IovIn {
        /// The index (0-based) of the argument that holds the number of vectors (`iovcnt`).
        count: usize,
    },
    /// `const struct iovec *` the kernel fills; the count is argument `count`; the total filled
    /// is the return value, spread over the vectors in order.
    IovOut {
        /// The index (0-based) of the argument that holds the number of vectors (`iovcnt`).
        count: usize,
    },
    /// A NULL-terminated array of C strings (argv, envp).
    StrArray,
}

impl ArgKind {
    /// A NUL-terminated string (a path, an xattr name): stored with its NUL.
    pub fn is_c_string(self) -> bool {
        matches!(self, ArgKind::Path | ArgKind::InBuf(Len::CStr) | ArgKind::OutBuf(Len::CStr))
    }

    /// True when capturing this argument needs a copy of tracee memory.
    pub fn is_pointer_data(self) -> bool {
        matches!(
            self,
            ArgKind::Path
                | ArgKind::InBuf(_)
                | ArgKind::OutBuf(_)
                | ArgKind::InStruct(..)
                | ArgKind::OutStruct(..)
                | ArgKind::InOutStruct(..)
                | ArgKind::IovIn { .. }
                | ArgKind::IovOut { .. }
                | ArgKind::StrArray
        )
    }

    /// True for arguments whose data is a list of vectors, stored in Re-Animator's vector
    /// layout (one record per vector): iovec arrays, a message's iovecs (sendmsg/recvmsg), a
    /// list of messages (sendmmsg/recvmmsg: one vector per message).
    pub fn is_vector(self) -> bool {
        matches!(
            self,
            ArgKind::IovIn { .. }
                | ArgKind::IovOut { .. }
                | ArgKind::InStruct(Struct::Msghdr | Struct::Mmsghdr, _)
                | ArgKind::InOutStruct(Struct::Msghdr | Struct::Mmsghdr, _)
        )
    }

    /// Bulk data (file contents moving through read/write and friends), as opposed to the
    /// metadata that pointers also carry (paths, names, struct results, argv): what
    /// `record --data hash|none` digest or leave out, and `anonymize --data` replaces.
    pub fn is_bulk(self) -> bool {
        matches!(self, ArgKind::InBuf(l) | ArgKind::OutBuf(l) if l != Len::CStr) || self.is_vector()
    }

    /// True when the data is produced by the kernel (captured at syscall exit).
    pub fn is_output(self) -> bool {
        matches!(
            self,
            ArgKind::OutBuf(_)
                | ArgKind::OutStruct(..)
                | ArgKind::InOutStruct(..)
                | ArgKind::IovOut { .. }
        )
    }
}

/// What an argument's value identifies, where its [`ArgKind`] does not say: the identities
/// `reanimator anonymize` replaces. Paths given to a call are [`ArgKind::Path`]; owners inside `stat` results
/// are [`Struct::Stat`] / [`Struct::Statx`]; a Unix socket's path is in [`Struct::Sockaddr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Meaning {
    /// Nothing beyond its kind.
    Plain,
    /// A path the kernel returns in a buffer (`readlink`'s target, `getcwd`'s directory),
    /// without the length rule of a C string: the return value counts its bytes; argument
    /// number `capacity` is the buffer's size.
    PathResult {
        /// The index (0-based) of the argument that holds the buffer's size in bytes.
        capacity: usize,
    },
    /// Names the kernel returns in a buffer of records (`getdents`' `linux_dirent`s): the
    /// return value counts its bytes; argument number `capacity` is the buffer's size.
    Listing {
        /// The index (0-based) of the argument that holds the buffer's size in bytes.
        capacity: usize,
    },
    /// A user id (`chown`'s `owner`; -1 means "unchanged").
    Uid,
    /// A group id (`chown`'s `group`; -1 means "unchanged").
    Gid,
    /// A process or thread id (`kill`'s `pid`: negative values name a process group, 0 and
    /// -1 are special).
    Pid,
    /// An extended attribute's name (`setxattr`'s `name`): a namespace the kernel defines
    /// (`user.`, `trusted.`, `security.`, `system.`) and a rest programs choose.
    XattrName,
    /// Extended attribute names the kernel returns in a buffer, each NUL-terminated
    /// (`listxattr`'s `list`): the return value counts its bytes; argument number `capacity`
    /// is the buffer's size. Names, not data, though the buffer is bulk for capture.
    XattrNames {
        /// The index (0-based) of the argument that holds the buffer's size in bytes.
        capacity: usize,
    },
    /// A name a program chooses that is not a path resolved by the call (`memfd_create`'s
    /// `name`, `mount`'s `source`).
    Name,
}

/// One argument, in the order of the C prototype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arg {
    /// The argument's name in the man page prototype (`fd`, `buf`, `count`).
    pub name: &'static str,
    /// How the value is captured: a plain register value, or a pointer whose data is copied
    /// (at entry or exit, with which length rule).
    pub kind: ArgKind,
    /// The trace field this argument is stored in. For calls that are in Re-Animator's schema
    /// this is that schema's field name (`descriptor`, `given_pathname`, `data_read`,
    /// `bytes_requested`); new calls follow the same conventions.
    pub field: &'static str,
    /// What the value identifies (paths returned in buffers, user, group and process ids).
    pub meaning: Meaning,
}

/// What the return value means (for display and for fd tracking).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// 0 on success, -1 + errno on failure.
    Status,
    /// A non-negative count (bytes, entries).
    Count,
    /// A new file descriptor.
    Fd,
    /// A file offset.
    Offset,
    /// An address (mmap, brk).
    Addr,
    /// A process or thread id (fork/clone).
    Pid,
    /// Other integer results (umask's old mask, fcntl results).
    Int,
    /// Never returns on success (execve, exit, exit_group).
    NoReturn,
}

/// One system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SyscallDef {
    /// The kernel's name for the call (`pread64`, `newfstatat`), as in the generated number
    /// tables.
    pub name: &'static str,
    /// The extent type suffix in the trace (`IOTTAFSL::Trace::Syscall::<trace_name>`). Equal
    /// to Re-Animator's name where it has one (`pread64` -> `pread`, `newfstatat` -> `fstatat`,
    /// `getdents` keeps its name: Re-Animator recorded the old syscall), else equal to `name`.
    pub trace_name: &'static str,
    /// True when `trace_name` is one of Re-Animator's 103 schema types: the extent type then
    /// uses Re-Animator's exact field list (see [`reanimator_schema`]).
    pub in_reanimator_schema: bool,
    /// The arguments in the order of the C prototype; the argument numbers of [`Len::Arg`],
    /// [`Len::DerefArg`] and [`Meaning`] index this slice.
    pub args: &'static [Arg],
    /// What the return value means (an fd, a count, a status, ...).
    pub ret: Ret,
    /// Which capture set the call belongs to (`--syscalls storage` takes every class but
    /// [`Class::Other`]).
    pub class: Class,
    /// How `reanimator replay` reproduces the call.
    pub replay: ReplayPolicy,
    /// The man page prototype, e.g. `ssize_t read(int fd, void *buf, size_t count);`.
    pub proto: &'static str,
    // ---- What tells the call apart from the others of its handler family, where its
    // arguments do not (docs/HOWTO_ADD_SYSCALL.md). Nothing outside this crate tests a call's
    // name: it reads these fields (a test, tests/no_call_names.rs, keeps it so).
    /// Its I/O class in latency profiles and `export`'s per-class files.
    pub io_class: IoClass,
    /// Never follows a symlink in the last component of its path, whatever its flags
    /// (`lstat`, `lchown`, the `l*xattr` calls); other path calls follow one unless a flag
    /// (`AT_SYMLINK_NOFOLLOW`) says not to.
    pub nofollow: bool,
    /// The flags word the call acts with where it has no flags argument: `creat` is an open
    /// with `O_CREAT | O_WRONLY | O_TRUNC`, `rmdir` an `unlinkat` with `AT_REMOVEDIR`, `fork` a
    /// clone with `SIGCHLD`, `vfork` one with `CLONE_VM | CLONE_VFORK | SIGCHLD` (the values
    /// are those of every architecture the number tables cover).
    pub implied_flags: Option<i64>,
    /// Ends every thread of the process (`exit_group`), not only the calling one (`exit`).
    pub ends_process: bool,
    /// Where the eBPF recorder writes out the pages written through shared file mappings.
    pub flush: Flush,
    /// Memory the call reads that its arguments do not describe, which the recorders copy
    /// as an extra: `fcntl`'s `struct flock`, `ioctl`'s `int`.
    pub extra: Extra,
    /// What it makes durable, for the durability calls (`fsync`, `fdatasync`, ...).
    pub durability: Option<Durability>,
    /// Which kernel-side copy it is ([`Handler::Copy`]).
    pub kernel_copy: Option<KernelCopy>,
    /// Which io_uring call it is (the other [`Handler::AsyncIo`] calls are Linux AIO's).
    pub uring: Option<UringCall>,
}

/// Where the eBPF recorder writes out the pages programs wrote through shared file mappings
/// (`mmappwrite` records) before the call runs (`SyscallDef::flush`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flush {
    /// Not at this call.
    No,
    /// The range its first two arguments give (`munmap`, `msync`, `mremap`).
    Range,
    /// Every mapping of the process: the address space ends (`exit_group`, `execve`).
    All,
}

/// Memory a call reads that its arguments do not describe (`SyscallDef::extra`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extra {
    /// None.
    No,
    /// `fcntl`'s `struct flock` at `arg` for the lock commands.
    Flock,
    /// `ioctl`'s `int` at `argp` for the requests that take one.
    IoctlInt,
}

/// What a durability call makes durable ([`SyscallDef::durability`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Durability {
    /// A file's data and metadata (`fsync`).
    File,
    /// A file's data and the metadata needed to read it (`fdatasync`).
    Data,
    /// A range of a file's data (`sync_file_range`).
    Range,
    /// A file system (`syncfs`).
    FileSystem,
    /// Every file system (`sync`).
    All,
}

/// Which kernel-side copy a [`Handler::Copy`] call is ([`SyscallDef::kernel_copy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelCopy {
    /// `sendfile`: from a file to any descriptor, at the output's file position.
    Sendfile,
    /// `copy_file_range`: between two files.
    CopyFileRange,
    /// `splice`: one of the two ends is a pipe.
    Splice,
}

/// Which io_uring call an [`Handler::AsyncIo`] call is (`SyscallDef::uring`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UringCall {
    /// `io_uring_setup`: makes a ring.
    Setup,
    /// `io_uring_register`: registers files or buffers with a ring.
    Register,
    /// `io_uring_enter`: submits requests and waits for completions.
    Enter,
}

/// What an xattr call does ([`SyscallDef::xattr_op`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XattrOp {
    /// `setxattr`, `lsetxattr`, `fsetxattr`.
    Set,
    /// `getxattr`, `lgetxattr`, `fgetxattr`.
    Get,
    /// `listxattr`, `llistxattr`, `flistxattr`.
    List,
    /// `removexattr`, `lremovexattr`, `fremovexattr`.
    Remove,
}

impl SyscallDef {
    /// The argument with this name.
    pub fn arg(&self, name: &str) -> Option<(usize, &Arg)> {
        self.args.iter().enumerate().find(|(_, a)| a.name == name)
    }

    /// True when an argument points to a struct of this kind (`statx`'s [`Struct::Statx`],
    /// `openat2`'s [`Struct::OpenHow`], `clone3`'s [`Struct::CloneArgs`], the old `getdents`'
    /// [`Struct::Dirents`]).
    pub fn has_struct(&self, s: Struct) -> bool {
        self.args.iter().any(|a| {
            matches!(a.kind, ArgKind::InStruct(x, _) | ArgKind::OutStruct(x, _)
                | ArgKind::InOutStruct(x, _) if x == s)
        })
    }

    /// True when the call acts at an offset it is given (`pread64`, `pwritev2`) rather than at
    /// the descriptor's file position (`read`, `writev`).
    pub fn positional(&self) -> bool {
        self.arg("offset").is_some()
    }

    /// True for the calls of the process lifecycle (clone, fork, execve, exit, ...): the
    /// recorders capture them whatever the selection, as following processes needs them.
    pub fn is_lifecycle(&self) -> bool {
        matches!(self.replay.handler(), Some(Handler::Clone | Handler::Exec | Handler::Exit))
    }

    /// What an xattr call ([`Handler::Xattr`]) does: from its arguments (a list buffer, a
    /// value read or written, or neither).
    pub fn xattr_op(&self) -> Option<XattrOp> {
        if self.replay.handler() != Some(Handler::Xattr) {
            return None;
        }
        if self.args.iter().any(|a| matches!(a.meaning, Meaning::XattrNames { .. })) {
            return Some(XattrOp::List);
        }
        Some(match self.arg("value").map(|(_, a)| a.kind.is_output()) {
            Some(false) => XattrOp::Set,
            Some(true) => XattrOp::Get,
            None => XattrOp::Remove,
        })
    }

    /// The x86_64 syscall number (None for Re-Animator pseudo-calls such as `mmappread`).
    pub fn nr_x86_64(&self) -> Option<u32> {
        arch::X86_64.number(self.name)
    }

    /// What the descriptors this call makes refer to, when that is no file it names: the
    /// name `/proc/PID/fd` (and `strace -y`) gives the kernel object — `anon_inode:[eventfd]`,
    /// `anon_inode:inotify` — or, for pipes and sockets, whose names carry an inode number a
    /// trace does not record, `pipe` and `socket`. `memfd_create`'s descriptors are named
    /// after its `name` argument (`/memfd:NAME (deleted)`), which this cannot give: `None`.
    pub fn fd_object(&self) -> Option<&'static str> {
        Some(match self.name {
            "pipe" | "pipe2" => "pipe",
            "socket" | "socketpair" | "accept" | "accept4" => "socket",
            "eventfd" | "eventfd2" => "anon_inode:[eventfd]",
            "epoll_create" | "epoll_create1" => "anon_inode:[eventpoll]",
            "timerfd_create" => "anon_inode:[timerfd]",
            "signalfd" | "signalfd4" => "anon_inode:[signalfd]",
            "inotify_init" | "inotify_init1" => "anon_inode:inotify",
            "pidfd_open" => "anon_inode:[pidfd]",
            "io_uring_setup" => "anon_inode:[io_uring]",
            "perf_event_open" => "anon_inode:[perf_event]",
            "userfaultfd" => "anon_inode:[userfaultfd]",
            "fanotify_init" => "anon_inode:[fanotify]",
            _ => return None,
        })
    }

    /// True for Re-Animator's pseudo-calls (`mmappread`, `mmappwrite`): events the tracer
    /// synthesizes, with no syscall number.
    pub fn is_pseudo(&self) -> bool {
        arch::X86_64.number(self.name).is_none() && arch::AARCH64.number(self.name).is_none()
    }

    /// True for the record of a signal delivered to a traced thread (`signal_deliver`, a
    /// pseudo-call): no system call, so `stats`, `profile` and `export`'s call tables leave it
    /// out (as `strace -c` does), `dump` shows it as strace's `--- SIGCHLD {...} ---` line, and
    /// replay issues nothing for it.
    pub fn is_signal(&self) -> bool {
        self.name == defs::SIGNAL_DELIVER
    }

    /// Arguments of an in-schema call whose `field` is not a column of Re-Animator's type
    /// (Re-Animator did not record them, e.g. `sync_file_range`'s `nbytes`). The trace appends
    /// them as extra columns after Re-Animator's so replay has every argument. Empty for calls
    /// outside the schema.
    pub fn ra_extension_args(&self) -> impl Iterator<Item = (usize, &'static Arg)> {
        let args: &'static [Arg] = self.args;
        let fields = if self.in_reanimator_schema {
            reanimator_schema::fields_of(self.trace_name)
        } else {
            None
        };
        args.iter()
            .enumerate()
            .filter(move |(_, a)| fields.is_some_and(|f| !f.iter().any(|sf| sf.name == a.field)))
    }

    /// The `struct msghdr *` argument of a call that sends or receives one message
    /// (`sendmsg`, `recvmsg`): its index. Such a message may carry descriptors (`SCM_RIGHTS`
    /// control data).
    pub fn msg_arg(&self) -> Option<usize> {
        self.args.iter().position(|a| {
            matches!(
                a.kind,
                ArgKind::InStruct(Struct::Msghdr, _) | ArgKind::InOutStruct(Struct::Msghdr, _)
            )
        })
    }

    /// The two ends of a kernel-side copy ([`Handler::Copy`]: `sendfile`, `copy_file_range`,
    /// `splice`): which arguments hold each end's descriptor and offset pointer.
    pub fn copy_ends(&self) -> Option<CopyEnds> {
        if self.replay.handler() != Some(Handler::Copy) {
            return None;
        }
        let idx = |n: &str| self.arg(n).map(|(i, _)| i);
        if self.kernel_copy == Some(KernelCopy::Sendfile) {
            // The offset pointer is the input's; the output's file position moves.
            return Some(CopyEnds {
                fd_in: idx("in_fd")?,
                off_in: idx("offset"),
                fd_out: idx("out_fd")?,
                off_out: None,
            });
        }
        Some(CopyEnds {
            fd_in: idx("fd_in")?,
            off_in: idx("off_in"),
            fd_out: idx("fd_out")?,
            off_out: idx("off_out"),
        })
    }
}

/// Argument indices of a kernel-side copy's two ends ([`SyscallDef::copy_ends`]). An end whose
/// offset pointer is null (or that has none) uses and moves its descriptor's file position;
/// one with a pointer leaves the position alone, and the kernel writes the pointed-to offset
/// back advanced by the bytes moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyEnds {
    /// The argument holding the descriptor copied from (`in_fd`, `fd_in`).
    pub fd_in: usize,
    /// The argument holding the input's `loff_t *` (`offset`, `off_in`); `None` when the call
    /// has none.
    pub off_in: Option<usize>,
    /// The argument holding the descriptor copied to (`out_fd`, `fd_out`).
    pub fd_out: usize,
    /// The argument holding the output's `loff_t *` (`off_out`); `None` when the call has none
    /// (`sendfile` always writes at the output's file position).
    pub off_out: Option<usize>,
}

/// Look a call up by kernel name or trace name.
pub fn lookup(name: &str) -> Option<&'static SyscallDef> {
    REGISTRY
        .iter()
        .find(|d| d.name == name)
        .or_else(|| REGISTRY.iter().find(|d| d.trace_name == name))
}

/// Look a call up by any name it goes by: kernel name, trace name, or an alias
/// (`defs::ALIASES`: the names 32-bit ABIs give it, `_llseek`, `fstatat64`, `mmap2`).
pub fn lookup_any(name: &str) -> Option<&'static SyscallDef> {
    lookup(name)
        .or_else(|| defs::ALIASES.iter().find(|(a, _)| *a == name).and_then(|(_, n)| lookup(n)))
}

/// Every name [`lookup_any`] accepts (for "did you mean" suggestions).
pub fn all_names() -> impl Iterator<Item = &'static str> {
    REGISTRY
        .iter()
        .flat_map(|d| [d.name, d.trace_name])
        .chain(defs::ALIASES.iter().map(|(a, _)| *a))
}

/// Look a call up by its trace name only.
pub fn by_trace_name(trace_name: &str) -> Option<&'static SyscallDef> {
    REGISTRY.iter().find(|d| d.trace_name == trace_name)
}

/// Re-Animator's schema, as the fixture traces declare it (generated table; see
/// `scripts/gen-reanimator-schema.py`).
pub mod reanimator_schema {
    include!("generated/reanimator_schema.rs");
}
