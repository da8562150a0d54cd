//! io_uring operations: the opcodes of `include/uapi/linux/io_uring.h` (`IORING_OP_*`), the
//! layout of a submission queue entry, and what each opcode is as I/O (the system call it
//! stands for, its I/O class, which way its data moves). The recorders' `io_uring_op` events
//! (one per completed request, [`crate::Handler::UringOp`]) are read through this table by
//! `dump`, `stats` and `export`; nothing else matches on opcodes.

use crate::IoClass;

/// Which way an operation's data moves, and how its buffer is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UringData {
    /// No data buffer (or one the recorder does not copy).
    None,
    /// `addr`, `len`: bytes from the program (copied at submission).
    In,
    /// `addr`, `len`: bytes to the program; the result says how many (copied at completion).
    Out,
    /// `addr` points to `len` iovecs out of the program (writev): their bytes, one after the
    /// other, copied at submission.
    InVec,
    /// `addr` points to `len` iovecs into the program (readv): the result's bytes, copied at
    /// completion.
    OutVec,
}

/// One opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UringOp {
    /// `IORING_OP_<NAME>`'s value, the SQE's `opcode` byte; equal to the entry's index in
    /// [`OPS`].
    pub opcode: u8,
    /// `IORING_OP_<NAME>` in lower case (`write_fixed`).
    pub name: &'static str,
    /// The system call it does the work of (`pwrite64`), for its I/O class; None for
    /// operations of io_uring's own (timeouts, cancels, buffer rings).
    pub syscall: Option<&'static str>,
    /// Which way its data moves and whether the recorder copies it.
    pub data: UringData,
    /// The recorder decodes its fields (descriptor, offset, buffer, length); for the others
    /// the trace keeps the whole SQE (`sqe`).
    pub decoded: bool,
}

const fn op(
    opcode: u8,
    name: &'static str,
    syscall: Option<&'static str>,
    data: UringData,
    decoded: bool,
) -> UringOp {
    UringOp { opcode, name, syscall, data, decoded }
}

use UringData::{In, InVec, None as No, Out, OutVec};

/// Every opcode of Linux 6.18, by number.
pub static OPS: &[UringOp] = &[
    op(0, "nop", None, No, true),
    op(1, "readv", Some("preadv2"), OutVec, true),
    op(2, "writev", Some("pwritev2"), InVec, true),
    op(3, "fsync", Some("fsync"), No, true),
    op(4, "read_fixed", Some("pread64"), Out, true),
    op(5, "write_fixed", Some("pwrite64"), In, true),
    op(6, "poll_add", Some("poll"), No, true),
    op(7, "poll_remove", None, No, true),
    op(8, "sync_file_range", Some("sync_file_range"), No, true),
    op(9, "sendmsg", Some("sendmsg"), No, true),
    op(10, "recvmsg", Some("recvmsg"), No, true),
    op(11, "timeout", None, No, true),
    op(12, "timeout_remove", None, No, true),
    op(13, "accept", Some("accept4"), No, true),
    op(14, "async_cancel", None, No, true),
    op(15, "link_timeout", None, No, true),
    op(16, "connect", Some("connect"), No, true),
    op(17, "fallocate", Some("fallocate"), No, true),
    op(18, "openat", Some("openat"), No, true),
    op(19, "close", Some("close"), No, true),
    op(20, "files_update", None, No, true),
    op(21, "statx", Some("statx"), No, true),
    op(22, "read", Some("pread64"), Out, true),
    op(23, "write", Some("pwrite64"), In, true),
    op(24, "fadvise", Some("fadvise64"), No, true),
    op(25, "madvise", Some("madvise"), No, true),
    op(26, "send", Some("sendto"), In, true),
    op(27, "recv", Some("recvfrom"), Out, true),
    op(28, "openat2", Some("openat2"), No, true),
    op(29, "epoll_ctl", Some("epoll_ctl"), No, true),
    op(30, "splice", Some("splice"), No, true),
    op(31, "provide_buffers", None, No, true),
    op(32, "remove_buffers", None, No, true),
    op(33, "tee", Some("tee"), No, true),
    op(34, "shutdown", Some("shutdown"), No, true),
    op(35, "renameat", Some("renameat2"), No, true),
    op(36, "unlinkat", Some("unlinkat"), No, true),
    op(37, "mkdirat", Some("mkdirat"), No, true),
    op(38, "symlinkat", Some("symlinkat"), No, true),
    op(39, "linkat", Some("linkat"), No, true),
    op(40, "msg_ring", None, No, false),
    op(41, "fsetxattr", Some("fsetxattr"), No, true),
    op(42, "setxattr", Some("setxattr"), No, true),
    op(43, "fgetxattr", Some("fgetxattr"), No, true),
    op(44, "getxattr", Some("getxattr"), No, true),
    op(45, "socket", Some("socket"), No, false),
    op(46, "uring_cmd", None, No, false),
    op(47, "send_zc", Some("sendto"), No, false),
    op(48, "sendmsg_zc", Some("sendmsg"), No, false),
    op(49, "read_multishot", Some("read"), No, false),
    op(50, "waitid", None, No, false),
    op(51, "futex_wait", None, No, false),
    op(52, "futex_wake", None, No, false),
    op(53, "futex_waitv", None, No, false),
    op(54, "fixed_fd_install", None, No, false),
    op(55, "ftruncate", Some("ftruncate"), No, true),
    op(56, "bind", Some("bind"), No, false),
    op(57, "listen", Some("listen"), No, false),
    op(58, "recv_zc", Some("recvfrom"), No, false),
    op(59, "epoll_wait", Some("epoll_wait"), No, false),
    op(60, "readv_fixed", Some("preadv2"), OutVec, true),
    op(61, "writev_fixed", Some("pwritev2"), InVec, true),
    op(62, "pipe", Some("pipe2"), No, false),
];

/// The opcode's entry; None for an opcode newer than this table.
pub fn lookup(opcode: i64) -> Option<&'static UringOp> {
    usize::try_from(opcode).ok().and_then(|i| OPS.get(i))
}

impl UringOp {
    /// The I/O class of the work it does (a `read` is a read); io_uring's own operations are
    /// [`IoClass::Async`].
    pub fn io_class(&self) -> IoClass {
        self.syscall.map_or(IoClass::Async, crate::io_class)
    }

    /// The name analyses count it under: `io_uring:write`.
    pub fn call_name(&self) -> &'static str {
        static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let names =
            NAMES.get_or_init(|| OPS.iter().map(|o| format!("io_uring:{}", o.name)).collect());
        names.get(self.opcode as usize).map_or("io_uring_op", String::as_str)
    }
}

/// `struct io_uring_sqe` (64 bytes): where each field the trace keeps is.
pub mod sqe {
    /// `opcode` (`u8`): the `IORING_OP_*` number ([`super::OPS`]).
    pub const OPCODE: usize = 0;
    /// `flags` (`u8`): the `IOSQE_*` bits ([`super::IOSQE_FIXED_FILE`], ...).
    pub const FLAGS: usize = 1;
    /// `ioprio` (`u16`): the request's I/O priority, or an opcode's own flags (send, recv,
    /// accept).
    pub const IOPRIO: usize = 2;
    /// `fd` (`s32`): the descriptor, or an index into the registered files with
    /// [`super::IOSQE_FIXED_FILE`].
    pub const FD: usize = 4;
    /// `off` (`u64`): the file offset (-1: the file position), or `addr2` for some opcodes.
    pub const OFF: usize = 8;
    /// `addr` (`u64`): the buffer's (or iovec array's, or path's) address in the program.
    pub const ADDR: usize = 16;
    /// `addr2`, the union with `off`: a second path, `open_how`, `statx`'s buffer.
    pub const ADDR2: usize = 8;
    /// `addr3`: GETXATTR's and SETXATTR's path.
    pub const ADDR3: usize = 48;
    /// `len` (`u32`): the buffer's length in bytes, or the number of iovecs.
    pub const LEN: usize = 24;
    /// `rw_flags`, `fsync_flags`, `open_flags`, ...: the opcode's own flags.
    pub const OP_FLAGS: usize = 28;
    /// `user_data` (`u64`): the program's tag, copied into the request's CQE.
    pub const USER_DATA: usize = 32;
    /// `buf_index` (`u16`): the registered buffer (`read_fixed`, `write_fixed`), or
    /// `buf_group`, the provided-buffer group, with [`super::IOSQE_BUFFER_SELECT`].
    pub const BUF_INDEX: usize = 40;
    /// `personality` (`u16`): the registered credentials to run under (0: the submitter's).
    pub const PERSONALITY: usize = 42;
    /// `file_index` (`u32`): the registered-file slot a direct open or accept installs into;
    /// the same word is `splice_fd_in` for `splice` and `tee`.
    pub const FILE_INDEX: usize = 44;
    /// The size in bytes of a normal SQE (a ring set up with `IORING_SETUP_SQE128` has
    /// 128-byte entries).
    pub const SIZE: usize = 64;

    /// The SQE's fields as an `io_uring_op` record holds them (argument name, value), read
    /// little-endian from `q` (a field beyond `q`'s end reads 0): what both recorders write.
    /// `fd` is the signed 32-bit descriptor; `opcode` and `user_data` are left to the caller,
    /// which has them from elsewhere (the eBPF recorder from its tracepoint).
    pub fn fields(q: &[u8]) -> [(&'static str, i64); 10] {
        let le = |o: usize, n: usize| -> u64 {
            let mut b = [0u8; 8];
            if let Some(s) = q.get(o..o + n) {
                b[..n].copy_from_slice(s);
            }
            u64::from_le_bytes(b)
        };
        [
            ("fd", i64::from(le(FD, 4) as u32 as i32)),
            ("offset", le(OFF, 8) as i64),
            ("addr", le(ADDR, 8) as i64),
            ("len", le(LEN, 4) as i64),
            ("sqe_flags", le(FLAGS, 1) as i64),
            ("op_flags", le(OP_FLAGS, 4) as i64),
            ("ioprio", le(IOPRIO, 2) as i64),
            ("buf_index", le(BUF_INDEX, 2) as i64),
            ("personality", le(PERSONALITY, 2) as i64),
            ("file_index", le(FILE_INDEX, 4) as i64),
        ]
    }
}

/// Where the strings (and `struct open_how`) a path opcode's SQE points to are: offsets in the
/// SQE of the pointers (`sqe::ADDR`, `sqe::ADDR2`, `sqe::ADDR3`), per the kernel's `*_prep`
/// (io_uring/openclose.c, fs.c, statx.c, xattr.c). Both recorders read them when the kernel
/// took the SQE, into the record's `path`, `path2`, `name` and `how`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strings {
    /// The path the request resolves (`path`): OPENAT's, RENAMEAT's old one, SYMLINKAT's
    /// target, GETXATTR's (`addr3`).
    pub path: Option<usize>,
    /// The second path (`path2`): RENAMEAT's, LINKAT's and SYMLINKAT's new one.
    pub path2: Option<usize>,
    /// The xattr name (`name`) of the GETXATTR/SETXATTR family.
    pub name: Option<usize>,
    /// OPENAT2's `struct open_how` (`how`), `len` bytes.
    pub how: Option<usize>,
}

impl Strings {
    /// Whether the opcode points to any.
    pub fn any(&self) -> bool {
        self.path.is_some() || self.path2.is_some() || self.name.is_some() || self.how.is_some()
    }
}

/// The most of `struct open_how` the recorders keep (its three `u64`s; the kernel refuses a
/// larger one whose extra bytes are not zero).
pub const OPEN_HOW_MAX: usize = 24;

/// The strings of `opcode`'s SQE ([`Strings`]); none for other opcodes.
pub fn strings(opcode: i64) -> Strings {
    use sqe::{ADDR, ADDR2, ADDR3};
    let s = |path, path2, name, how| Strings { path, path2, name, how };
    match lookup(opcode).map(|o| o.name) {
        Some("openat" | "statx" | "unlinkat" | "mkdirat") => s(Some(ADDR), None, None, None),
        Some("openat2") => s(Some(ADDR), None, None, Some(ADDR2)),
        Some("renameat" | "linkat" | "symlinkat") => s(Some(ADDR), Some(ADDR2), None, None),
        Some("getxattr" | "setxattr") => s(Some(ADDR3), None, Some(ADDR), None),
        Some("fgetxattr" | "fsetxattr") => s(None, None, Some(ADDR), None),
        _ => Strings::default(),
    }
}

/// The buffer a request's data is in, as the recorders copy it: which way it moves and the
/// SQE offset of its address. The opcode's [`UringOp::data`] at `addr`, except for the xattr
/// family, whose value is at `addr2` (`len` bytes): SETXATTR's and FSETXATTR's copied at
/// submission into `buf_in`, GETXATTR's and FGETXATTR's at completion into `buf_out`. (Their
/// `data` stays [`UringData::None`]: analyses do not count an xattr value as file data.)
pub fn buffer(opcode: i64) -> (UringData, usize) {
    match lookup(opcode) {
        Some(o) if matches!(o.name, "setxattr" | "fsetxattr") => (UringData::In, sqe::ADDR2),
        Some(o) if matches!(o.name, "getxattr" | "fgetxattr") => (UringData::Out, sqe::ADDR2),
        Some(o) => (o.data, sqe::ADDR),
        None => (UringData::None, sqe::ADDR),
    }
}

/// `uring_flags` bits of an `io_uring_op` record.
pub mod uring_flags {
    /// The ring has an SQPOLL thread.
    pub const SQPOLL: i64 = 1;
    /// No submission was recorded: the SQE fields are 0.
    pub const NO_SUBMIT: i64 = 8;
    /// A path, name or `open_how` the SQE points to could not be read (a page not present,
    /// the recorder's ring full): the column is absent.
    pub const STRINGS_NOT_READ: i64 = 64;
}

/// `IOSQE_*` (the SQE's `flags`): `fd` is an index into the registered files, not a
/// descriptor.
pub const IOSQE_FIXED_FILE: u8 = 1 << 0;
/// `IOSQE_*`: start only after every request submitted before it has completed.
pub const IOSQE_IO_DRAIN: u8 = 1 << 1;
/// `IOSQE_*`: the next SQE starts only after this one completes; a failure cancels the rest
/// of the chain.
pub const IOSQE_IO_LINK: u8 = 1 << 2;
/// `IOSQE_*`: as [`IOSQE_IO_LINK`], but the chain goes on when this request fails.
pub const IOSQE_IO_HARDLINK: u8 = 1 << 3;
/// `IOSQE_*`: issue from a kernel worker thread at once, without a non-blocking attempt.
pub const IOSQE_ASYNC: u8 = 1 << 4;
/// `IOSQE_*`: the kernel picks the buffer from the provided-buffer group `buf_group` names
/// (the CQE says which).
pub const IOSQE_BUFFER_SELECT: u8 = 1 << 5;
/// `IOSQE_*`: post no CQE when the request succeeds.
pub const IOSQE_CQE_SKIP_SUCCESS: u8 = 1 << 6;
/// `IORING_FSYNC_DATASYNC`: an fsync SQE that is an fdatasync.
pub const IORING_FSYNC_DATASYNC: u32 = 1;

/// How the data of an `io_uring_op` event was obtained (its `data_source` column).
pub mod data_source {
    /// No data: the operation moves none, `--data none`, or it failed.
    pub const NONE: i64 = 0;
    /// Read from the program's buffer when the kernel took the SQE (writes).
    pub const AT_SUBMISSION: i64 = 1;
    /// Read from the program's buffer when the kernel posted the CQE (reads).
    pub const AT_COMPLETION: i64 = 2;
    /// Read back from the file after the completion (the completing thread could not see
    /// the program's memory).
    pub const READ_BACK: i64 = 3;
    /// Not captured: the ring had no room, a page was not present, a provided buffer, or the
    /// completion ran where the program's memory was not mapped and the file could not be
    /// read back.
    pub const NOT_CAPTURED: i64 = 4;
    /// Read from the program's buffer after the program had taken the CQE from the ring
    /// without a system call (the ptrace recorder, at its next `io_uring_enter`): the
    /// program may have used the buffer again meanwhile.
    pub const AFTER_COMPLETION: i64 = 5;
}

/// `io_uring_register`'s registered files and buffers (`IORING_REGISTER_*`): which opcodes
/// name descriptors or buffers, where in the argument they are ([`register::layout`]: what both
/// recorders read into the record's `register_data`), and what a record of one says
/// ([`register::decode`]: what the trace's model of a ring's registered files, `dump` and the replay
/// read).
pub mod register {
    /// `IORING_REGISTER_BUFFERS`: `arg` is `nr_args` iovecs.
    pub const BUFFERS: u32 = 0;
    /// `IORING_UNREGISTER_BUFFERS`.
    pub const UNREGISTER_BUFFERS: u32 = 1;
    /// `IORING_REGISTER_FILES`: `arg` is `nr_args` descriptors (`int`; -1: an empty slot).
    pub const FILES: u32 = 2;
    /// `IORING_UNREGISTER_FILES`.
    pub const UNREGISTER_FILES: u32 = 3;
    /// `IORING_REGISTER_FILES_UPDATE`: `struct io_uring_files_update` (slot offset, pointer to
    /// `nr_args` descriptors).
    pub const FILES_UPDATE: u32 = 6;
    /// `IORING_REGISTER_FILES2`: `struct io_uring_rsrc_register` (count, flags, pointer to the
    /// descriptors).
    pub const FILES2: u32 = 13;
    /// `IORING_REGISTER_FILES_UPDATE2`: `struct io_uring_rsrc_update2` (slot offset, pointer,
    /// count).
    pub const FILES_UPDATE2: u32 = 14;
    /// `IORING_REGISTER_BUFFERS2`: `struct io_uring_rsrc_register` of iovecs.
    pub const BUFFERS2: u32 = 15;
    /// `IORING_REGISTER_BUFFERS_UPDATE`: `struct io_uring_rsrc_update2` of iovecs.
    pub const BUFFERS_UPDATE: u32 = 16;
    /// `IORING_REGISTER_USE_REGISTERED_RING`, or-ed into the opcode: `fd` is an index into
    /// the ring descriptors the thread registered, not a descriptor.
    pub const USE_REGISTERED_RING: u32 = 1 << 31;
    /// `IORING_RSRC_REGISTER_SPARSE` (`io_uring_rsrc_register.flags`): every slot empty,
    /// the array not read.
    pub const RSRC_REGISTER_SPARSE: u32 = 1;
    /// `IORING_REGISTER_FILES_SKIP`: an update's descriptor that leaves its slot as it is.
    pub const FILES_SKIP: i32 = -2;
    /// The most of the array the recorders read (4096 descriptors, 1024 iovecs); a longer
    /// one is cut there, which [`Registration::cut`] says.
    pub const MAX_ARRAY_BYTES: usize = 16384;

    /// Where an opcode's registered descriptors or iovecs are.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Layout {
        /// Bytes of the struct at `arg` read first (0: `arg` is the array itself).
        pub header: u8,
        /// The offset in the struct of the array's pointer (`u64`); unused when `header` is
        /// 0.
        pub ptr_at: u8,
        /// The offset in the struct of the number of elements (`u32`); None: `nr_args`.
        pub count_at: Option<u8>,
        /// The offset in the struct of the first slot (`u32`); None: slot 0 (a
        /// registration, not an update).
        pub offset_at: Option<u8>,
        /// The offset in the struct of its flags (`u32`, [`RSRC_REGISTER_SPARSE`]).
        pub flags_at: Option<u8>,
        /// Bytes per element: 4 (descriptors) or 16 (iovecs).
        pub elem: u8,
    }

    /// What a registration is of.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Resource {
        /// Registered files (`IOSQE_FIXED_FILE` requests name them by index).
        Files,
        /// Registered buffers (`READ_FIXED`, `WRITE_FIXED` name them by `buf_index`).
        Buffers,
    }

    /// The opcode without [`USE_REGISTERED_RING`].
    pub fn opcode_of(opcode: u64) -> u32 {
        (opcode as u32) & !USE_REGISTERED_RING
    }

    /// The layout of `opcode`'s argument; None for the opcodes that register no files or
    /// buffers (and the unregisters, which have none).
    pub fn layout(opcode: u64) -> Option<Layout> {
        let l = |header, ptr_at, count_at, offset_at, flags_at, elem| Layout {
            header,
            ptr_at,
            count_at,
            offset_at,
            flags_at,
            elem,
        };
        Some(match opcode_of(opcode) {
            BUFFERS => l(0, 0, None, None, None, 16),
            FILES => l(0, 0, None, None, None, 4),
            FILES_UPDATE => l(16, 8, None, Some(0), None, 4),
            FILES2 => l(32, 16, Some(0), None, Some(4), 4),
            BUFFERS2 => l(32, 16, Some(0), None, Some(4), 16),
            FILES_UPDATE2 => l(32, 8, Some(24), Some(0), None, 4),
            BUFFERS_UPDATE => l(32, 8, Some(24), Some(0), None, 16),
            _ => return None,
        })
    }

    /// The resource `opcode` registers, updates or unregisters.
    pub fn resource(opcode: u64) -> Option<Resource> {
        match opcode_of(opcode) {
            BUFFERS | UNREGISTER_BUFFERS | BUFFERS2 | BUFFERS_UPDATE => Some(Resource::Buffers),
            FILES | UNREGISTER_FILES | FILES_UPDATE | FILES2 | FILES_UPDATE2 => {
                Some(Resource::Files)
            }
            _ => None,
        }
    }

    /// The array bytes a recorder reads for `count` elements of `l` (capped at
    /// [`MAX_ARRAY_BYTES`], whole elements).
    pub fn array_bytes(l: Layout, count: u64) -> usize {
        let elem = usize::from(l.elem.max(1));
        let want = usize::try_from(count).unwrap_or(usize::MAX).saturating_mul(elem);
        want.min(MAX_ARRAY_BYTES / elem * elem)
    }

    /// What one `io_uring_register` call did to a ring's files or buffers.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Registration {
        /// Files or buffers (None: the default, never returned by [`decode`]).
        pub resource: Option<Resource>,
        /// Unregisters every one (`IORING_UNREGISTER_FILES`, `_BUFFERS`).
        pub unregister: bool,
        /// An update of existing slots from `offset` on (`FILES_UPDATE`, `FILES_UPDATE2`,
        /// `BUFFERS_UPDATE`), not a new table.
        pub update: bool,
        /// The first slot set.
        pub offset: u32,
        /// How many slots the program gave.
        pub count: u64,
        /// `IORING_RSRC_REGISTER_SPARSE`, or no array: `count` empty slots.
        pub sparse: bool,
        /// The descriptors, slot by slot from `offset` (-1: empty, [`FILES_SKIP`]: left as
        /// it is).
        pub fds: Vec<i32>,
        /// The buffers (address, length), slot by slot from `offset`.
        pub buffers: Vec<(u64, u64)>,
        /// The array was longer than the recorder read ([`MAX_ARRAY_BYTES`]): the slots past
        /// it are not known.
        pub cut: bool,
    }

    /// What an `io_uring_register` record says: its opcode, `nr_args` and `register_data`
    /// (None: a NULL argument, which for `IORING_REGISTER_FILES` is a table of empty slots;
    /// the caller tells a column a trace before schema 6 lacks, or data not captured, apart).
    /// Ok(None) for the opcodes of neither files nor buffers; an error (one line) for data no
    /// recorder writes.
    pub fn decode(
        opcode: u64,
        nr_args: u64,
        data: Option<&[u8]>,
    ) -> Result<Option<Registration>, String> {
        let Some(resource) = resource(opcode) else { return Ok(None) };
        let mut r = Registration { resource: Some(resource), ..Registration::default() };
        let Some(l) = layout(opcode) else {
            r.unregister = true;
            return Ok(Some(r));
        };
        let Some(d) = data else {
            if l.header == 0 {
                r.count = nr_args;
                r.sparse = true;
                return Ok(Some(r));
            }
            return Err(format!(
                "its argument is NULL, where opcode {} takes a struct",
                opcode_of(opcode)
            ));
        };
        let header = usize::from(l.header);
        if d.len() < header {
            return Err(format!(
                "its register_data is {} bytes, shorter than the {header}-byte struct of \
                 opcode {}",
                d.len(),
                opcode_of(opcode)
            ));
        }
        let u32_at = |o: u8| {
            let o = usize::from(o);
            u32::from_le_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]])
        };
        let u64_at = |o: u8| {
            let o = usize::from(o);
            u64::from_le_bytes(d[o..o + 8].try_into().expect("8 bytes"))
        };
        r.count = l.count_at.map_or(nr_args, |o| u64::from(u32_at(o)));
        r.offset = l.offset_at.map_or(0, u32_at);
        r.update = l.offset_at.is_some();
        let array_ptr = if header == 0 { 1 } else { u64_at(l.ptr_at) };
        r.sparse = l.flags_at.is_some_and(|o| u32_at(o) & RSRC_REGISTER_SPARSE != 0)
            || (array_ptr == 0 && r.count > 0);
        let array = &d[header..];
        let elem = usize::from(l.elem);
        if array.len() % elem != 0 {
            return Err(format!(
                "its register_data holds {} array bytes, not a whole number of {elem}-byte \
                 elements",
                array.len()
            ));
        }
        if r.sparse {
            if !array.is_empty() && array_ptr == 0 {
                return Err("its register_data has an array where the program gave none".into());
            }
            return Ok(Some(r));
        }
        let n = array.len() / elem;
        if n as u64 > r.count {
            return Err(format!(
                "its register_data holds {n} elements, more than the {} the call names",
                r.count
            ));
        }
        r.cut = (n as u64) < r.count;
        match resource {
            Resource::Files => {
                r.fds = array
                    .chunks_exact(4)
                    .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
            }
            Resource::Buffers => {
                r.buffers = array
                    .chunks_exact(16)
                    .map(|c| {
                        let a = u64::from_le_bytes(c[..8].try_into().expect("8 bytes"));
                        let n = u64::from_le_bytes(c[8..].try_into().expect("8 bytes"));
                        (a, n)
                    })
                    .collect();
            }
        }
        Ok(Some(r))
    }
}

/// `struct io_uring_params` (120 bytes): the fields the trace reads.
pub mod params {
    /// `sq_entries` (`u32`): the submission ring's size the kernel chose.
    pub const SQ_ENTRIES: usize = 0;
    /// `cq_entries` (`u32`): the completion ring's size (with `IORING_SETUP_CQSIZE`, the
    /// program's).
    pub const CQ_ENTRIES: usize = 4;
    /// `flags` (`u32`): `IORING_SETUP_*`.
    pub const FLAGS: usize = 8;
    /// `sq_thread_cpu` (`u32`).
    pub const SQ_THREAD_CPU: usize = 12;
    /// `sq_thread_idle` (`u32`, ms).
    pub const SQ_THREAD_IDLE: usize = 16;
    /// `features` (`u32`): `IORING_FEAT_*` the kernel has.
    pub const FEATURES: usize = 20;
    /// `wq_fd` (`u32`): the ring whose workers it shares (`IORING_SETUP_ATTACH_WQ`).
    pub const WQ_FD: usize = 24;
    /// The struct's size.
    pub const SIZE: usize = 120;
    /// `IORING_SETUP_SQPOLL`.
    pub const SETUP_SQPOLL: u32 = 1 << 1;
    /// `IORING_SETUP_CQSIZE`.
    pub const SETUP_CQSIZE: u32 = 1 << 3;

    /// The `u32` at `at` of `p` (None past its end).
    pub fn field(p: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_le_bytes(p.get(at..at + 4)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_by_number_and_names_are_the_kernels() {
        for (i, o) in OPS.iter().enumerate() {
            assert_eq!(o.opcode as usize, i, "{}", o.name);
            if let Some(s) = o.syscall {
                assert!(crate::lookup(s).is_some(), "{}: {s} is not a registry call", o.name);
            }
        }
        assert_eq!(lookup(23).map(|o| o.name), Some("write"));
        assert_eq!(lookup(23).map(UringOp::io_class), Some(IoClass::Write));
        assert_eq!(lookup(4).map(UringOp::io_class), Some(IoClass::Read));
        assert_eq!(lookup(11).map(UringOp::io_class), Some(IoClass::Async));
        assert_eq!(lookup(200), None);
    }

    /// Each opcode's argument read back: a table, an update from an offset, a sparse table,
    /// buffers, a cut array; data no recorder writes is refused.
    #[test]
    fn registrations_decode() {
        use register::*;
        let fds = |v: &[i32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
        let r = decode(FILES.into(), 3, Some(&fds(&[5, -1, 7]))).unwrap().unwrap();
        assert_eq!((r.resource, r.update, r.offset, r.count), (Some(Resource::Files), false, 0, 3));
        assert_eq!((r.fds, r.sparse, r.cut), (vec![5, -1, 7], false, false));
        let mut upd = vec![0u8; 16];
        upd[..4].copy_from_slice(&2u32.to_le_bytes());
        upd[8..16].copy_from_slice(&0x1000u64.to_le_bytes());
        upd.extend(fds(&[9, -2]));
        let r = decode(FILES_UPDATE.into(), 2, Some(&upd)).unwrap().unwrap();
        assert_eq!((r.update, r.offset, r.fds), (true, 2, vec![9, -2]));
        let mut sparse = vec![0u8; 32];
        sparse[..4].copy_from_slice(&8u32.to_le_bytes());
        sparse[4..8].copy_from_slice(&RSRC_REGISTER_SPARSE.to_le_bytes());
        let r = decode(u64::from(FILES2 | USE_REGISTERED_RING), 32, Some(&sparse)).unwrap();
        let r = r.unwrap();
        assert_eq!((r.sparse, r.count, r.fds.len()), (true, 8, 0));
        let mut bufs = Vec::new();
        for (a, n) in [(0x7000u64, 4096u64), (0x9000, 8192)] {
            bufs.extend(a.to_le_bytes());
            bufs.extend(n.to_le_bytes());
        }
        let r = decode(BUFFERS.into(), 3, Some(&bufs)).unwrap().unwrap();
        assert_eq!((r.buffers, r.cut), (vec![(0x7000, 4096), (0x9000, 8192)], true));
        assert!(decode(UNREGISTER_FILES.into(), 0, None).unwrap().unwrap().unregister);
        assert_eq!(decode(4, 1, None), Ok(None), "an eventfd registers no file");
        assert!(decode(FILES_UPDATE.into(), 1, Some(&[0; 7])).unwrap_err().contains("shorter"));
        assert!(decode(FILES.into(), 3, Some(&[0; 6])).unwrap_err().contains("whole number"));
        assert!(decode(FILES.into(), 1, Some(&fds(&[1, 2]))).unwrap_err().contains("more than"));
        assert!(decode(FILES.into(), 4, None).unwrap().unwrap().sparse, "NULL: empty slots");
        assert!(decode(FILES_UPDATE.into(), 1, None).is_err());
        let l = layout(FILES.into()).unwrap();
        assert_eq!((array_bytes(l, 3), array_bytes(l, 1 << 40)), (12, MAX_ARRAY_BYTES));
    }

    /// Each field at its offset, little-endian, the descriptor signed; past the end: 0.
    #[test]
    fn sqe_fields_decode_each_field() {
        let mut q = [0u8; sqe::SIZE];
        q[sqe::FLAGS] = 0x05;
        q[sqe::IOPRIO..][..2].copy_from_slice(&7u16.to_le_bytes());
        q[sqe::FD..][..4].copy_from_slice(&(-3i32).to_le_bytes());
        q[sqe::OFF..][..8].copy_from_slice(&0x1_0000_0000u64.to_le_bytes());
        q[sqe::ADDR..][..8].copy_from_slice(&0x7f00_dead_beefu64.to_le_bytes());
        q[sqe::LEN..][..4].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        q[sqe::OP_FLAGS..][..4].copy_from_slice(&1u32.to_le_bytes());
        q[sqe::BUF_INDEX..][..2].copy_from_slice(&9u16.to_le_bytes());
        q[sqe::PERSONALITY..][..2].copy_from_slice(&2u16.to_le_bytes());
        q[sqe::FILE_INDEX..][..4].copy_from_slice(&11u32.to_le_bytes());
        let got: Vec<(&str, i64)> = sqe::fields(&q).to_vec();
        assert_eq!(
            got,
            [
                ("fd", -3),
                ("offset", 0x1_0000_0000),
                ("addr", 0x7f00_dead_beef),
                ("len", 0xffff_fff0),
                ("sqe_flags", 5),
                ("op_flags", 1),
                ("ioprio", 7),
                ("buf_index", 9),
                ("personality", 2),
                ("file_index", 11),
            ]
        );
        let short = sqe::fields(&q[..sqe::LEN]);
        assert_eq!(short[0], ("fd", -3));
        assert_eq!(short[3], ("len", 0));
        assert_eq!(short[9], ("file_index", 0));
    }
}
