//! Flag tables: strace-like display (`O_WRONLY|O_CREAT|O_TRUNC`) and Re-Animator's bool columns.
//!
//! Values are the Linux x86_64 UAPI ones (`asm-generic/fcntl.h`, `linux/fcntl.h`,
//! `asm-generic/mman-common.h`, `asm/mman.h`, `linux/stat.h`, `linux/xattr.h`, `linux/sched.h`,
//! ...), as the kernel sees them (e.g. `O_LARGEFILE` is 0o100000 although x86_64 glibc defines it
//! as 0). Display names are the C constant names. `ra_field` is the Re-Animator schema bool column
//! set when the flag is present; where Re-Animator names the same flag differently in different
//! calls (the `AT_*` flags) there is one set per naming, so that every `ra_field` of the set an
//! argument uses is a column of that call's Re-Animator type.

/// How a flag word is decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlagKind {
    /// Independent bits (multi-bit fields are entries whose `mask` is wider than `value`).
    Bits,
    /// One value compared whole (`whence`, fcntl `cmd`, `madvise` advice).
    Enum,
    /// open(2) flags: the low two bits are the access mode (`O_RDONLY`/`O_WRONLY`/`O_RDWR`),
    /// the rest are bits.
    AccessModeThenBits,
    /// `mode_t`: the file type (`S_IFREG`, ...) by name, then the permission bits in octal
    /// (`S_IFREG|0644`, `04755`), as strace prints them. The permission-bit entries exist for
    /// their `ra_field`s.
    ModeBits,
}

/// One named flag or value: present when `v & mask == value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Flag {
    /// The C constant name (`O_CREAT`).
    pub name: &'static str,
    /// The bits this entry looks at: the flag's own bits, the field's bits for a value within a
    /// multi-bit field (`O_ACCMODE`, `S_IFMT`), all ones for an enum value.
    pub mask: u64,
    /// What the masked bits equal when the entry is present (0 for a field's zero value such
    /// as `O_RDONLY` or `F_OK`).
    pub value: u64,
    /// The Re-Animator bool column this flag sets (`flag_create`), if it has one.
    pub ra_field: Option<&'static str>,
}

/// A table of flags for one kind of argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlagSet {
    /// Short name of the set (`open`, `at_unlinkat`).
    pub name: &'static str,
    /// The named flags or values, in display order (the order [`FlagSet::format`] joins them
    /// and [`FlagSet::ra_bools`] yields their columns in).
    pub entries: &'static [Flag],
    /// How the word is decoded against `entries`.
    pub kind: FlagKind,
}

/// `O_ACCMODE`: the access-mode bits of open flags.
const ACCMODE: u64 = 0o3;
/// `S_IFMT`: the file-type bits of a mode.
const S_IFMT: u64 = 0o170000;

impl Flag {
    /// True when this flag is present in `v`.
    pub fn is_set(&self, v: u64) -> bool {
        v & self.mask == self.value
    }
}

impl FlagSet {
    /// Formats `v` the way strace does: `O_WRONLY|O_CREAT|O_TRUNC`; bits no entry names are
    /// appended as `|0x...`; enums that match no entry print as hex.
    pub fn format(&self, v: u64) -> String {
        if self.kind == FlagKind::Enum {
            return match self.entries.iter().find(|f| f.is_set(v)) {
                Some(f) => f.name.to_string(),
                None => format!("{v:#x}"),
            };
        }
        let mut parts: Vec<String> = Vec::new();
        let mut rem = v;
        if self.kind == FlagKind::AccessModeThenBits {
            if let Some(f) = self.entries.iter().find(|f| f.mask == ACCMODE && f.is_set(v)) {
                parts.push(f.name.to_string());
                rem &= !ACCMODE;
            }
        }
        for f in self.entries {
            if f.value == 0 || (self.kind == FlagKind::AccessModeThenBits && f.mask == ACCMODE) {
                continue;
            }
            if self.kind == FlagKind::ModeBits && f.mask != S_IFMT {
                continue;
            }
            if rem & f.mask == f.value {
                parts.push(f.name.to_string());
                rem &= !f.mask;
            }
        }
        if self.kind == FlagKind::ModeBits {
            let perm = rem & 0o7777;
            rem &= !0o7777;
            if perm != 0 || parts.is_empty() {
                // C's "%#o": 0644, 04755, 022, 0.
                parts.push(if perm == 0 { "0".to_string() } else { format!("0{perm:o}") });
            }
        }
        if rem != 0 {
            parts.push(format!("{rem:#x}"));
        }
        if parts.is_empty() {
            return match self.entries.iter().find(|f| f.value == 0) {
                Some(f) => f.name.to_string(),
                None => "0".to_string(),
            };
        }
        parts.join("|")
    }

    /// The Re-Animator bool columns this set decodes, each with its value for `v`, in table
    /// order.
    pub fn ra_bools(&self, v: u64) -> impl Iterator<Item = (&'static str, bool)> {
        let entries: &'static [Flag] = self.entries;
        entries.iter().filter_map(move |f| f.ra_field.map(|col| (col, f.is_set(v))))
    }

    /// The entry named `name` (`O_CREAT`).
    pub fn get(&self, name: &str) -> Option<&'static Flag> {
        let entries: &'static [Flag] = self.entries;
        entries.iter().find(|f| f.name == name)
    }

    /// The value of a `|`-separated list of entry names (`O_WRONLY|O_CREAT`) or numbers
    /// (`0x10`, `0644`, `12`): the inverse of [`FlagSet::format`].
    pub fn parse(&self, s: &str) -> Option<u64> {
        let mut v = 0;
        for part in s.split('|').map(str::trim) {
            v |= match self.get(part) {
                Some(f) => f.value,
                None => parse_number(part)?,
            };
        }
        Some(v)
    }
}

fn parse_number(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// A single-bit (or multi-bit, all required) flag.
const fn b(name: &'static str, value: u64) -> Flag {
    Flag { name, mask: value, value, ra_field: None }
}
/// A bit flag with a Re-Animator column.
const fn br(name: &'static str, value: u64, ra: &'static str) -> Flag {
    Flag { name, mask: value, value, ra_field: Some(ra) }
}
/// A value within a multi-bit field.
const fn m(name: &'static str, mask: u64, value: u64, ra: Option<&'static str>) -> Flag {
    Flag { name, mask, value, ra_field: ra }
}
/// An enum value.
const fn e(name: &'static str, value: u64) -> Flag {
    Flag { name, mask: u64::MAX, value, ra_field: None }
}
/// An enum value with a Re-Animator column.
const fn er(name: &'static str, value: u64, ra: &'static str) -> Flag {
    Flag { name, mask: u64::MAX, value, ra_field: Some(ra) }
}
const fn bits(name: &'static str, entries: &'static [Flag]) -> FlagSet {
    FlagSet { name, entries, kind: FlagKind::Bits }
}
const fn enm(name: &'static str, entries: &'static [Flag]) -> FlagSet {
    FlagSet { name, entries, kind: FlagKind::Enum }
}

// ---------------------------------------------------------------------------------------------
// open(2) and fcntl status flags (asm-generic/fcntl.h)

/// Access mode: read only (the zero value of the two access-mode bits, so it is never tested
/// as a bit).
pub const O_RDONLY: u64 = 0;
/// Access mode: write only.
pub const O_WRONLY: u64 = 0o1;
/// Access mode: read and write.
pub const O_RDWR: u64 = 0o2;
/// Create the file if it does not exist, with the call's `mode`.
pub const O_CREAT: u64 = 0o100;
/// With `O_CREAT`: fail with `EEXIST` if the path exists.
pub const O_EXCL: u64 = 0o200;
/// A terminal opened does not become the process's controlling terminal.
pub const O_NOCTTY: u64 = 0o400;
/// Truncate an existing regular file opened for writing to length 0.
pub const O_TRUNC: u64 = 0o1000;
/// Every write goes to the end of the file.
pub const O_APPEND: u64 = 0o2000;
/// Non-blocking I/O; `O_NDELAY` is the same value.
pub const O_NONBLOCK: u64 = 0o4000;
/// Writes return once their data (and the metadata needed to read it) is on stable storage.
pub const O_DSYNC: u64 = 0o10000;
/// Signal-driven I/O: `SIGIO` (or `F_SETSIG`'s signal) when I/O becomes possible.
pub const O_ASYNC: u64 = 0o20000;
/// Bypass the page cache (buffers, offsets and lengths must be aligned).
pub const O_DIRECT: u64 = 0o40000;
/// Allow offsets beyond 2^31 - 1. The kernel's value: x86_64 glibc defines `O_LARGEFILE` as
/// 0, and a 64-bit kernel adds this bit to every open itself.
pub const O_LARGEFILE: u64 = 0o100000;
/// Fail with `ENOTDIR` unless the path is a directory.
pub const O_DIRECTORY: u64 = 0o200000;
/// Fail with `ELOOP` if the path's last component is a symbolic link.
pub const O_NOFOLLOW: u64 = 0o400000;
/// Reads do not update the file's access time.
pub const O_NOATIME: u64 = 0o1000000;
/// Set `FD_CLOEXEC` on the new descriptor: it is closed by `execve`.
pub const O_CLOEXEC: u64 = 0o2000000;
/// Writes return once data and metadata are on stable storage. As the kernel defines it,
/// `__O_SYNC | O_DSYNC`: both bits are set when it is.
pub const O_SYNC: u64 = 0o4000000 | O_DSYNC;
/// A descriptor that only names a location (no reads or writes through it).
pub const O_PATH: u64 = 0o10000000;
/// An unnamed temporary file in the directory the path names. As the kernel defines it,
/// `__O_TMPFILE | O_DIRECTORY`.
pub const O_TMPFILE: u64 = 0o20000000 | O_DIRECTORY;

/// open/openat/creat flags. Re-Animator columns `flag_*` (open, openat).
pub static OPEN: FlagSet = FlagSet {
    name: "open",
    kind: FlagKind::AccessModeThenBits,
    entries: &[
        m("O_RDONLY", ACCMODE, O_RDONLY, Some("flag_read_only")),
        m("O_WRONLY", ACCMODE, O_WRONLY, Some("flag_write_only")),
        m("O_RDWR", ACCMODE, O_RDWR, Some("flag_read_and_write")),
        m("O_ACCMODE", ACCMODE, ACCMODE, None),
        br("O_CREAT", O_CREAT, "flag_create"),
        br("O_EXCL", O_EXCL, "flag_exclusive"),
        br("O_NOCTTY", O_NOCTTY, "flag_no_controlling_terminal"),
        br("O_TRUNC", O_TRUNC, "flag_truncate"),
        br("O_APPEND", O_APPEND, "flag_append"),
        br("O_NONBLOCK", O_NONBLOCK, "flag_no_blocking_mode"),
        br("O_NDELAY", O_NONBLOCK, "flag_no_delay"),
        br("O_SYNC", O_SYNC, "flag_synchronous"),
        b("O_DSYNC", O_DSYNC),
        br("O_ASYNC", O_ASYNC, "flag_async"),
        br("O_DIRECT", O_DIRECT, "flag_direct"),
        br("O_LARGEFILE", O_LARGEFILE, "flag_largefile"),
        b("O_TMPFILE", O_TMPFILE),
        br("O_DIRECTORY", O_DIRECTORY, "flag_directory"),
        br("O_NOFOLLOW", O_NOFOLLOW, "flag_no_follow"),
        br("O_NOATIME", O_NOATIME, "flag_no_access_time"),
        br("O_CLOEXEC", O_CLOEXEC, "flag_close_on_exec"),
        b("O_PATH", O_PATH),
    ],
};

/// fcntl(F_GETFL/F_SETFL) status flags: the open flags with Re-Animator's
/// `argument_status_flag_*` columns.
pub static FCNTL_STATUS: FlagSet = FlagSet {
    name: "fcntl_status",
    kind: FlagKind::AccessModeThenBits,
    entries: &[
        m("O_RDONLY", ACCMODE, O_RDONLY, Some("argument_status_flag_read_only")),
        m("O_WRONLY", ACCMODE, O_WRONLY, Some("argument_status_flag_write_only")),
        m("O_RDWR", ACCMODE, O_RDWR, Some("argument_status_flag_read_and_write")),
        m("O_ACCMODE", ACCMODE, ACCMODE, None),
        br("O_CREAT", O_CREAT, "argument_status_flag_create"),
        br("O_EXCL", O_EXCL, "argument_status_flag_exclusive"),
        br("O_NOCTTY", O_NOCTTY, "argument_status_flag_no_controlling_terminal"),
        br("O_TRUNC", O_TRUNC, "argument_status_flag_truncate"),
        br("O_APPEND", O_APPEND, "argument_status_flag_append"),
        br("O_NONBLOCK", O_NONBLOCK, "argument_status_flag_no_blocking_mode"),
        br("O_NDELAY", O_NONBLOCK, "argument_status_flag_no_delay"),
        br("O_SYNC", O_SYNC, "argument_status_flag_synchronous"),
        b("O_DSYNC", O_DSYNC),
        br("O_ASYNC", O_ASYNC, "argument_status_flag_async"),
        br("O_DIRECT", O_DIRECT, "argument_status_flag_direct"),
        br("O_LARGEFILE", O_LARGEFILE, "argument_status_flag_largefile"),
        b("O_TMPFILE", O_TMPFILE),
        br("O_DIRECTORY", O_DIRECTORY, "argument_status_flag_directory"),
        br("O_NOFOLLOW", O_NOFOLLOW, "argument_status_flag_no_follow"),
        br("O_NOATIME", O_NOATIME, "argument_status_flag_no_access_time"),
        b("O_CLOEXEC", O_CLOEXEC),
        b("O_PATH", O_PATH),
    ],
};

/// dup3 flags.
pub static DUP3: FlagSet = bits("dup3", &[b("O_CLOEXEC", O_CLOEXEC)]);
/// pipe2 flags.
pub static PIPE2: FlagSet = bits(
    "pipe2",
    &[
        b("O_CLOEXEC", O_CLOEXEC),
        b("O_DIRECT", O_DIRECT),
        b("O_NONBLOCK", O_NONBLOCK),
        b("O_NOTIFICATION_PIPE", O_EXCL),
    ],
);
/// epoll_create1 flags.
pub static EPOLL_CREATE1: FlagSet = bits("epoll_create1", &[b("EPOLL_CLOEXEC", O_CLOEXEC)]);
/// eventfd2 flags.
pub static EVENTFD: FlagSet = bits(
    "eventfd",
    &[b("EFD_SEMAPHORE", 1), b("EFD_CLOEXEC", O_CLOEXEC), b("EFD_NONBLOCK", O_NONBLOCK)],
);
/// memfd_create flags (linux/memfd.h, 6.1).
pub static MEMFD: FlagSet =
    bits("memfd", &[b("MFD_CLOEXEC", 1), b("MFD_ALLOW_SEALING", 2), b("MFD_HUGETLB", 4)]);
/// close_range flags.
pub static CLOSE_RANGE: FlagSet =
    bits("close_range", &[b("CLOSE_RANGE_UNSHARE", 1 << 1), b("CLOSE_RANGE_CLOEXEC", 1 << 2)]);

// ---------------------------------------------------------------------------------------------
// fcntl (asm-generic/fcntl.h, linux/fcntl.h)

/// Duplicate onto the lowest free descriptor not below the argument.
pub const F_DUPFD: u64 = 0;
/// Get the descriptor flags (`FD_CLOEXEC`).
pub const F_GETFD: u64 = 1;
/// Set the descriptor flags (decoded with [`FCNTL_FD`]).
pub const F_SETFD: u64 = 2;
/// Get the access mode and the open file's status flags.
pub const F_GETFL: u64 = 3;
/// Set the open file's status flags (decoded with [`FCNTL_STATUS`]).
pub const F_SETFL: u64 = 4;
/// Test for a POSIX record lock that would conflict (a `struct flock *`, written back).
pub const F_GETLK: u64 = 5;
/// Take or release a POSIX record lock; fails with `EAGAIN` or `EACCES` on a conflict.
pub const F_SETLK: u64 = 6;
/// As `F_SETLK`, waiting for a conflicting lock to be released.
pub const F_SETLKW: u64 = 7;
/// Set the process (negative: process group) that gets `SIGIO` and `SIGURG`.
pub const F_SETOWN: u64 = 8;
/// Get the process (negative: process group) that gets `SIGIO` and `SIGURG`.
pub const F_GETOWN: u64 = 9;
/// Set the signal sent when I/O becomes possible (0: `SIGIO`).
pub const F_SETSIG: u64 = 10;
/// Get the signal sent when I/O becomes possible (0: `SIGIO`).
pub const F_GETSIG: u64 = 11;
/// As `F_GETLK`, for open file description locks (owned by the open file, not the process).
pub const F_OFD_GETLK: u64 = 36;
/// As `F_SETLK`, for open file description locks.
pub const F_OFD_SETLK: u64 = 37;
/// As `F_SETLKW`, for open file description locks.
pub const F_OFD_SETLKW: u64 = 38;
/// The first Linux-only command number; leases, `F_NOTIFY`, `F_DUPFD_CLOEXEC` and later
/// commands count from it.
pub const F_LINUX_SPECIFIC_BASE: u64 = 1024;
/// Take or remove a lease (decoded with [`FCNTL_LEASE`]).
pub const F_SETLEASE: u64 = F_LINUX_SPECIFIC_BASE;
/// Get the lease held (`F_RDLCK`, `F_WRLCK` or `F_UNLCK`).
pub const F_GETLEASE: u64 = F_LINUX_SPECIFIC_BASE + 1;
/// Directory change notification, dnotify (decoded with [`FCNTL_NOTIFY`]).
pub const F_NOTIFY: u64 = F_LINUX_SPECIFIC_BASE + 2;
/// As `F_DUPFD`, with `FD_CLOEXEC` set on the new descriptor.
pub const F_DUPFD_CLOEXEC: u64 = F_LINUX_SPECIFIC_BASE + 6;

/// fcntl commands. Re-Animator columns `command_*`.
pub static FCNTL_CMD: FlagSet = enm(
    "fcntl_cmd",
    &[
        er("F_DUPFD", F_DUPFD, "command_dup"),
        er("F_GETFD", F_GETFD, "command_get_descriptor_flags"),
        er("F_SETFD", F_SETFD, "command_set_descriptor_flags"),
        er("F_GETFL", F_GETFL, "command_get_status_flags"),
        er("F_SETFL", F_SETFL, "command_set_status_flags"),
        er("F_GETLK", F_GETLK, "command_get_lock"),
        er("F_SETLK", F_SETLK, "command_set_lock"),
        er("F_SETLKW", F_SETLKW, "command_set_lock_wait"),
        er("F_SETOWN", F_SETOWN, "command_set_process_id"),
        er("F_GETOWN", F_GETOWN, "command_get_process_id"),
        er("F_SETSIG", F_SETSIG, "command_set_signal"),
        er("F_GETSIG", F_GETSIG, "command_get_signal"),
        e("F_SETOWN_EX", 15),
        e("F_GETOWN_EX", 16),
        e("F_GETOWNER_UIDS", 17),
        e("F_OFD_GETLK", F_OFD_GETLK),
        e("F_OFD_SETLK", F_OFD_SETLK),
        e("F_OFD_SETLKW", F_OFD_SETLKW),
        er("F_SETLEASE", F_SETLEASE, "command_set_lease"),
        er("F_GETLEASE", F_GETLEASE, "command_get_lease"),
        er("F_NOTIFY", F_NOTIFY, "command_notify"),
        e("F_CANCELLK", F_LINUX_SPECIFIC_BASE + 5),
        e("F_DUPFD_CLOEXEC", F_DUPFD_CLOEXEC),
        e("F_SETPIPE_SZ", F_LINUX_SPECIFIC_BASE + 7),
        e("F_GETPIPE_SZ", F_LINUX_SPECIFIC_BASE + 8),
        e("F_ADD_SEALS", F_LINUX_SPECIFIC_BASE + 9),
        e("F_GET_SEALS", F_LINUX_SPECIFIC_BASE + 10),
        e("F_GET_RW_HINT", F_LINUX_SPECIFIC_BASE + 11),
        e("F_SET_RW_HINT", F_LINUX_SPECIFIC_BASE + 12),
        e("F_GET_FILE_RW_HINT", F_LINUX_SPECIFIC_BASE + 13),
        e("F_SET_FILE_RW_HINT", F_LINUX_SPECIFIC_BASE + 14),
    ],
);

/// fcntl(F_SETFD) descriptor flags. Re-Animator column `argument_descriptor_flag_exec_close`.
pub static FCNTL_FD: FlagSet =
    bits("fcntl_fd", &[br("FD_CLOEXEC", 1, "argument_descriptor_flag_exec_close")]);

/// fcntl(F_SETLEASE) lease types. Re-Animator columns `argument_lease_*`.
pub static FCNTL_LEASE: FlagSet = enm(
    "fcntl_lease",
    &[
        er("F_RDLCK", 0, "argument_lease_read"),
        er("F_WRLCK", 1, "argument_lease_write"),
        er("F_UNLCK", 2, "argument_lease_remove"),
    ],
);

/// fcntl(F_NOTIFY) directory-notification bits. Re-Animator columns `argument_notify_*`.
pub static FCNTL_NOTIFY: FlagSet = bits(
    "fcntl_notify",
    &[
        br("DN_ACCESS", 0x1, "argument_notify_access"),
        br("DN_MODIFY", 0x2, "argument_notify_modify"),
        br("DN_CREATE", 0x4, "argument_notify_create"),
        br("DN_DELETE", 0x8, "argument_notify_delete"),
        br("DN_RENAME", 0x10, "argument_notify_rename"),
        br("DN_ATTRIB", 0x20, "argument_notify_attribute"),
        b("DN_MULTISHOT", 0x8000_0000),
    ],
);

/// `struct flock` `l_type` (fcntl F_GETLK/F_SETLK*). Re-Animator columns `lock_type_*`.
pub static FLOCK_TYPE: FlagSet = enm(
    "flock_type",
    &[
        er("F_RDLCK", 0, "lock_type_read"),
        er("F_WRLCK", 1, "lock_type_write"),
        er("F_UNLCK", 2, "lock_type_unlocked"),
    ],
);

/// `struct flock` `l_whence`. Re-Animator columns `lock_whence_*`.
pub static FLOCK_WHENCE: FlagSet = enm(
    "flock_whence",
    &[
        er("SEEK_SET", 0, "lock_whence_start"),
        er("SEEK_CUR", 1, "lock_whence_current"),
        er("SEEK_END", 2, "lock_whence_end"),
    ],
);

/// The flag set that decodes fcntl's third argument for command `cmd`, if it is a flag word.
pub fn fcntl_arg_set(cmd: u64) -> Option<&'static FlagSet> {
    match cmd {
        F_SETFL => Some(&FCNTL_STATUS),
        F_SETFD => Some(&FCNTL_FD),
        F_SETLEASE => Some(&FCNTL_LEASE),
        F_NOTIFY => Some(&FCNTL_NOTIFY),
        _ => None,
    }
}

/// True when fcntl's third argument is a `struct flock *` for command `cmd`.
pub fn fcntl_arg_is_flock(cmd: u64) -> bool {
    matches!(cmd, F_GETLK | F_SETLK | F_SETLKW | F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW)
}

/// ioctl(2) requests whose argument points to an `int` the call reads: FIONBIO (set or clear
/// O_NONBLOCK: CPython's `os.set_blocking` uses it) and FIOASYNC (O_ASYNC). Both change the
/// open file's status flags, which a later `fcntl(F_GETFL)` shows, so replay must repeat them
/// with the recorded value (Re-Animator's `ioctl_buffer` column holds it).
pub fn ioctl_arg_is_int(request: u64) -> bool {
    IOCTL_INT_REQUESTS.contains(&(request & 0xffff_ffff))
}

/// ioctl(2) requests whose result, on success, is a new descriptor: TIOCGPTPEER (a
/// pseudo-terminal master opens its peer; glibc's `openpty`, so Python's `os.openpty` and
/// `pty.fork`, use it). Its argument is the new descriptor's open flags (`O_CLOEXEC` among
/// them), not a pointer.
pub fn ioctl_returns_fd(request: u64) -> bool {
    request & 0xffff_ffff == TIOCGPTPEER
}

/// ioctl TIOCGPTPEER (asm-generic/ioctls.h).
pub const TIOCGPTPEER: u64 = 0x5441;

/// The requests of [`ioctl_arg_is_int`] (the eBPF recorder's rule holds exactly two).
pub const IOCTL_INT_REQUESTS: [u64; 2] = [FIONBIO, FIOASYNC];

/// ioctl FIONBIO (asm-generic/ioctls.h).
pub const FIONBIO: u64 = 0x5421;
/// ioctl FIOASYNC.
pub const FIOASYNC: u64 = 0x5452;

/// flock(2): fail with `EWOULDBLOCK` instead of waiting (or'ed into `LOCK_SH` or `LOCK_EX`).
pub const LOCK_NB: u64 = 4;
/// flock(2): release the lock this open file holds.
pub const LOCK_UN: u64 = 8;

/// flock(2) operations (`operation_value`; Re-Animator also stores it as the `operation` byte).
pub static FLOCK_OP: FlagSet = bits(
    "flock_op",
    &[b("LOCK_SH", 1), b("LOCK_EX", 2), b("LOCK_NB", LOCK_NB), b("LOCK_UN", LOCK_UN)],
);

// ---------------------------------------------------------------------------------------------
// modes (linux/stat.h), access(2)

/// `mode_t`: file type and permission bits. Re-Animator columns `mode_*`.
pub static MODE: FlagSet = FlagSet {
    name: "mode",
    kind: FlagKind::ModeBits,
    entries: &[
        m("S_IFSOCK", S_IFMT, 0o140000, None),
        m("S_IFLNK", S_IFMT, 0o120000, None),
        m("S_IFREG", S_IFMT, 0o100000, None),
        m("S_IFBLK", S_IFMT, 0o060000, None),
        m("S_IFDIR", S_IFMT, 0o040000, None),
        m("S_IFCHR", S_IFMT, 0o020000, None),
        m("S_IFIFO", S_IFMT, 0o010000, None),
        br("S_ISUID", 0o4000, "mode_uid"),
        br("S_ISGID", 0o2000, "mode_gid"),
        br("S_ISVTX", 0o1000, "mode_sticky_bit"),
        br("S_IRUSR", 0o400, "mode_R_user"),
        br("S_IWUSR", 0o200, "mode_W_user"),
        br("S_IXUSR", 0o100, "mode_X_user"),
        br("S_IRGRP", 0o40, "mode_R_group"),
        br("S_IWGRP", 0o20, "mode_W_group"),
        br("S_IXGRP", 0o10, "mode_X_group"),
        br("S_IROTH", 0o4, "mode_R_others"),
        br("S_IWOTH", 0o2, "mode_W_others"),
        br("S_IXOTH", 0o1, "mode_X_others"),
    ],
};

/// access/faccessat modes. Re-Animator columns `mode_exist`/`mode_read`/`mode_write`/
/// `mode_execute`.
pub static ACCESS: FlagSet = bits(
    "access",
    &[
        m("F_OK", 0o7, 0, Some("mode_exist")),
        br("R_OK", 4, "mode_read"),
        br("W_OK", 2, "mode_write"),
        br("X_OK", 1, "mode_execute"),
    ],
);

// ---------------------------------------------------------------------------------------------
// AT_* flags (linux/fcntl.h)

/// The `dirfd` that makes an `*at` call resolve a relative path from the cwd; signed, as the
/// kernel reads the `int` argument.
pub const AT_FDCWD: i64 = -100;
/// Do not follow a symbolic link at the path's last component.
pub const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
/// faccessat: check with the effective ids, not the real ones. Same value as
/// [`AT_REMOVEDIR`].
pub const AT_EACCESS: u64 = 0x200;
/// unlinkat: remove a directory, as `rmdir` does. Same value as [`AT_EACCESS`].
pub const AT_REMOVEDIR: u64 = 0x200;
/// linkat: follow a symbolic link at `oldpath`'s last component.
pub const AT_SYMLINK_FOLLOW: u64 = 0x400;
/// Do not trigger an automount at the path's last component.
pub const AT_NO_AUTOMOUNT: u64 = 0x800;
/// An empty path names `dirfd` itself.
pub const AT_EMPTY_PATH: u64 = 0x1000;
/// statx: the mask of the sync-mode field (`AT_STATX_SYNC_AS_STAT` 0,
/// `AT_STATX_FORCE_SYNC` 0x2000, `AT_STATX_DONT_SYNC` 0x4000).
pub const AT_STATX_SYNC_TYPE: u64 = 0x6000;
/// Apply to the whole subtree (`open_tree`, `mount_setattr`).
pub const AT_RECURSIVE: u64 = 0x8000;

/// All `AT_*` flags, for calls Re-Animator has no columns for (fchownat, execveat, statx, ...).
/// `AT_EACCESS` and `AT_REMOVEDIR` share a value; this set displays it as `AT_REMOVEDIR`.
pub static AT: FlagSet = bits(
    "at",
    &[
        b("AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW),
        b("AT_REMOVEDIR", AT_REMOVEDIR),
        b("AT_EACCESS", AT_EACCESS),
        b("AT_SYMLINK_FOLLOW", AT_SYMLINK_FOLLOW),
        b("AT_NO_AUTOMOUNT", AT_NO_AUTOMOUNT),
        b("AT_EMPTY_PATH", AT_EMPTY_PATH),
        m("AT_STATX_SYNC_AS_STAT", AT_STATX_SYNC_TYPE, 0, None),
        m("AT_STATX_FORCE_SYNC", AT_STATX_SYNC_TYPE, 0x2000, None),
        m("AT_STATX_DONT_SYNC", AT_STATX_SYNC_TYPE, 0x4000, None),
        b("AT_RECURSIVE", AT_RECURSIVE),
    ],
);

/// newfstatat flags. Re-Animator columns (`fstatat`) `flags_at_*`.
pub static AT_FSTATAT: FlagSet = bits(
    "at_fstatat",
    &[
        br("AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW, "flags_at_symlink_nofollow"),
        br("AT_NO_AUTOMOUNT", AT_NO_AUTOMOUNT, "flags_at_no_automount"),
        br("AT_EMPTY_PATH", AT_EMPTY_PATH, "flags_at_empty_path"),
    ],
);

/// statx flags.
pub static AT_STATX: FlagSet = bits(
    "at_statx",
    &[
        b("AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW),
        b("AT_NO_AUTOMOUNT", AT_NO_AUTOMOUNT),
        b("AT_EMPTY_PATH", AT_EMPTY_PATH),
        m("AT_STATX_SYNC_AS_STAT", AT_STATX_SYNC_TYPE, 0, None),
        m("AT_STATX_FORCE_SYNC", AT_STATX_SYNC_TYPE, 0x2000, None),
        m("AT_STATX_DONT_SYNC", AT_STATX_SYNC_TYPE, 0x4000, None),
    ],
);

/// faccessat2 flags, with the column names of Re-Animator's `faccessat` (`flags_at_*`).
pub static AT_FACCESSAT: FlagSet = bits(
    "at_faccessat",
    &[
        br("AT_EACCESS", AT_EACCESS, "flags_at_eaccess"),
        br("AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW, "flags_at_symlink_nofollow"),
        b("AT_EMPTY_PATH", AT_EMPTY_PATH),
    ],
);

/// unlinkat flags. Re-Animator column `flag_remove_directory`.
pub static AT_UNLINKAT: FlagSet =
    bits("at_unlinkat", &[br("AT_REMOVEDIR", AT_REMOVEDIR, "flag_remove_directory")]);

/// linkat flags. Re-Animator columns `flag_symlink_follow`, `flag_empty_path`.
pub static AT_LINKAT: FlagSet = bits(
    "at_linkat",
    &[
        br("AT_SYMLINK_FOLLOW", AT_SYMLINK_FOLLOW, "flag_symlink_follow"),
        br("AT_EMPTY_PATH", AT_EMPTY_PATH, "flag_empty_path"),
    ],
);

/// utimensat flags. Re-Animator column `flag_symlink_nofollow`.
pub static AT_UTIMENSAT: FlagSet = bits(
    "at_utimensat",
    &[
        br("AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW, "flag_symlink_nofollow"),
        b("AT_EMPTY_PATH", AT_EMPTY_PATH),
    ],
);

/// renameat2 flags (linux/fs.h).
pub static RENAME: FlagSet =
    bits("rename", &[b("RENAME_NOREPLACE", 1), b("RENAME_EXCHANGE", 2), b("RENAME_WHITEOUT", 4)]);

/// `struct open_how` `resolve` bits (openat2; linux/openat2.h).
pub static RESOLVE: FlagSet = bits(
    "resolve",
    &[
        b("RESOLVE_NO_XDEV", 0x01),
        b("RESOLVE_NO_MAGICLINKS", 0x02),
        b("RESOLVE_NO_SYMLINKS", 0x04),
        b("RESOLVE_BENEATH", 0x08),
        b("RESOLVE_IN_ROOT", 0x10),
        b("RESOLVE_CACHED", 0x20),
    ],
);

/// statx `mask` (linux/stat.h, 6.1).
pub static STATX_MASK: FlagSet = bits(
    "statx_mask",
    &[
        b("STATX_BASIC_STATS", 0x7ff),
        b("STATX_TYPE", 0x1),
        b("STATX_MODE", 0x2),
        b("STATX_NLINK", 0x4),
        b("STATX_UID", 0x8),
        b("STATX_GID", 0x10),
        b("STATX_ATIME", 0x20),
        b("STATX_MTIME", 0x40),
        b("STATX_CTIME", 0x80),
        b("STATX_INO", 0x100),
        b("STATX_SIZE", 0x200),
        b("STATX_BLOCKS", 0x400),
        b("STATX_BTIME", 0x800),
        b("STATX_MNT_ID", 0x1000),
        b("STATX_DIOALIGN", 0x2000),
    ],
);

/// `struct statfs` `f_flags` (`ST_*`: glibc sys/statvfs.h; `ST_VALID` and `ST_NOSYMFOLLOW` are
/// only in the kernel's include/linux/statfs.h). Re-Animator columns `statfs_result_flags_*` of
/// `statfs`.
pub static STATFS_FLAGS: FlagSet = bits(
    "statfs_flags",
    &[
        br("ST_RDONLY", 1, "statfs_result_flags_read_only"),
        br("ST_NOSUID", 2, "statfs_result_flags_no_set_uid"),
        br("ST_NODEV", 4, "statfs_result_flags_no_dev"),
        br("ST_NOEXEC", 8, "statfs_result_flags_no_exec"),
        br("ST_SYNCHRONOUS", 16, "statfs_result_flags_synchronous"),
        br("ST_VALID", 32, "statfs_result_flags_valid"),
        br("ST_MANDLOCK", 64, "statfs_result_flags_mandatory_lock"),
        b("ST_NOSYMFOLLOW", 0x2000),
        br("ST_NOATIME", 1024, "statfs_result_flags_no_access_time"),
        br("ST_NODIRATIME", 2048, "statfs_result_flags_no_directory_access_time"),
        br("ST_RELATIME", 4096, "statfs_result_flags_relative_access_time"),
    ],
);

/// `f_flags` as decoded in Re-Animator's `fstatfs` type (which has no `..._valid` column).
pub static FSTATFS_FLAGS: FlagSet = bits(
    "fstatfs_flags",
    &[
        br("ST_RDONLY", 1, "statfs_result_flags_read_only"),
        br("ST_NOSUID", 2, "statfs_result_flags_no_set_uid"),
        br("ST_NODEV", 4, "statfs_result_flags_no_dev"),
        br("ST_NOEXEC", 8, "statfs_result_flags_no_exec"),
        br("ST_SYNCHRONOUS", 16, "statfs_result_flags_synchronous"),
        b("ST_VALID", 32),
        br("ST_MANDLOCK", 64, "statfs_result_flags_mandatory_lock"),
        b("ST_NOSYMFOLLOW", 0x2000),
        br("ST_NOATIME", 1024, "statfs_result_flags_no_access_time"),
        br("ST_NODIRATIME", 2048, "statfs_result_flags_no_directory_access_time"),
        br("ST_RELATIME", 4096, "statfs_result_flags_relative_access_time"),
    ],
);

// ---------------------------------------------------------------------------------------------
// memory (asm-generic/mman-common.h, asm/mman.h)

/// mmap/mprotect protection. Re-Animator columns `protection_*`.
pub static PROT: FlagSet = bits(
    "prot",
    &[
        m("PROT_NONE", 0x7, 0, Some("protection_none")),
        br("PROT_READ", 0x1, "protection_read"),
        br("PROT_WRITE", 0x2, "protection_write"),
        br("PROT_EXEC", 0x4, "protection_exec"),
        b("PROT_SEM", 0x8),
        b("PROT_GROWSDOWN", 0x0100_0000),
        b("PROT_GROWSUP", 0x0200_0000),
    ],
);

/// `MAP_TYPE`: the sharing-type bits of mmap flags.
const MAP_TYPE: u64 = 0x0f;

/// mmap flags (x86_64). Re-Animator columns `flag_*` of `mmap`. `MAP_FILE` is 0: its column is
/// set when `MAP_ANONYMOUS` is not.
pub static MAP: FlagSet = bits(
    "map",
    &[
        m("MAP_SHARED", MAP_TYPE, 0x01, Some("flag_shared")),
        m("MAP_PRIVATE", MAP_TYPE, 0x02, Some("flag_private")),
        m("MAP_SHARED_VALIDATE", MAP_TYPE, 0x03, None),
        br("MAP_FIXED", 0x10, "flag_fixed"),
        br("MAP_ANONYMOUS", 0x20, "flag_anonymous"),
        m("MAP_FILE", 0x20, 0, Some("flag_file")),
        br("MAP_32BIT", 0x40, "flag_32bit"),
        br("MAP_GROWSDOWN", 0x0100, "flag_grows_down"),
        br("MAP_DENYWRITE", 0x0800, "flag_denywrite"),
        br("MAP_EXECUTABLE", 0x1000, "flag_executable"),
        br("MAP_LOCKED", 0x2000, "flag_locked"),
        br("MAP_NORESERVE", 0x4000, "flag_no_reserve"),
        br("MAP_POPULATE", 0x8000, "flag_populate"),
        br("MAP_NONBLOCK", 0x10000, "flag_non_block"),
        br("MAP_STACK", 0x20000, "flag_stack"),
        br("MAP_HUGETLB", 0x40000, "flag_huge_tlb"),
        b("MAP_SYNC", 0x80000),
        b("MAP_FIXED_NOREPLACE", 0x100000),
        b("MAP_UNINITIALIZED", 0x4000000),
    ],
);

/// msync flags.
pub static MSYNC: FlagSet =
    bits("msync", &[b("MS_ASYNC", 1), b("MS_INVALIDATE", 2), b("MS_SYNC", 4)]);

/// mremap flags.
pub static MREMAP: FlagSet =
    bits("mremap", &[b("MREMAP_MAYMOVE", 1), b("MREMAP_FIXED", 2), b("MREMAP_DONTUNMAP", 4)]);

/// madvise advice.
pub static MADV: FlagSet = enm(
    "madv",
    &[
        e("MADV_NORMAL", 0),
        e("MADV_RANDOM", 1),
        e("MADV_SEQUENTIAL", 2),
        e("MADV_WILLNEED", 3),
        e("MADV_DONTNEED", 4),
        e("MADV_FREE", 8),
        e("MADV_REMOVE", 9),
        e("MADV_DONTFORK", 10),
        e("MADV_DOFORK", 11),
        e("MADV_MERGEABLE", 12),
        e("MADV_UNMERGEABLE", 13),
        e("MADV_HUGEPAGE", 14),
        e("MADV_NOHUGEPAGE", 15),
        e("MADV_DONTDUMP", 16),
        e("MADV_DODUMP", 17),
        e("MADV_WIPEONFORK", 18),
        e("MADV_KEEPONFORK", 19),
        e("MADV_COLD", 20),
        e("MADV_PAGEOUT", 21),
        e("MADV_POPULATE_READ", 22),
        e("MADV_POPULATE_WRITE", 23),
        e("MADV_DONTNEED_LOCKED", 24),
        e("MADV_COLLAPSE", 25),
        e("MADV_HWPOISON", 100),
        e("MADV_SOFT_OFFLINE", 101),
    ],
);

// ---------------------------------------------------------------------------------------------
// file I/O

/// lseek whence (Re-Animator stores it as `whence_value` and as the `whence` byte; no bool
/// columns).
pub static SEEK: FlagSet = enm(
    "seek",
    &[e("SEEK_SET", 0), e("SEEK_CUR", 1), e("SEEK_END", 2), e("SEEK_DATA", 3), e("SEEK_HOLE", 4)],
);

/// fallocate mode (linux/falloc.h).
pub static FALLOC: FlagSet = bits(
    "falloc",
    &[
        b("FALLOC_FL_KEEP_SIZE", 0x01),
        b("FALLOC_FL_PUNCH_HOLE", 0x02),
        b("FALLOC_FL_NO_HIDE_STALE", 0x04),
        b("FALLOC_FL_COLLAPSE_RANGE", 0x08),
        b("FALLOC_FL_ZERO_RANGE", 0x10),
        b("FALLOC_FL_INSERT_RANGE", 0x20),
        b("FALLOC_FL_UNSHARE_RANGE", 0x40),
    ],
);

/// posix_fadvise advice (x86_64 values).
pub static FADVISE: FlagSet = enm(
    "fadvise",
    &[
        e("POSIX_FADV_NORMAL", 0),
        e("POSIX_FADV_RANDOM", 1),
        e("POSIX_FADV_SEQUENTIAL", 2),
        e("POSIX_FADV_WILLNEED", 3),
        e("POSIX_FADV_DONTNEED", 4),
        e("POSIX_FADV_NOREUSE", 5),
    ],
);

/// preadv2/pwritev2 flags (linux/fs.h).
pub static RWF: FlagSet = bits(
    "rwf",
    &[
        b("RWF_HIPRI", 0x01),
        b("RWF_DSYNC", 0x02),
        b("RWF_SYNC", 0x04),
        b("RWF_NOWAIT", 0x08),
        b("RWF_APPEND", 0x10),
    ],
);

/// setxattr flags. Re-Animator columns `flag_xattr_create`/`flag_xattr_replace`.
pub static XATTR: FlagSet = bits(
    "xattr",
    &[br("XATTR_CREATE", 1, "flag_xattr_create"), br("XATTR_REPLACE", 2, "flag_xattr_replace")],
);

/// splice/tee/vmsplice flags.
pub static SPLICE: FlagSet = bits(
    "splice",
    &[
        b("SPLICE_F_MOVE", 1),
        b("SPLICE_F_NONBLOCK", 2),
        b("SPLICE_F_MORE", 4),
        b("SPLICE_F_GIFT", 8),
    ],
);

/// sync_file_range flags.
pub static SYNC_FILE_RANGE: FlagSet = bits(
    "sync_file_range",
    &[
        b("SYNC_FILE_RANGE_WAIT_BEFORE", 1),
        b("SYNC_FILE_RANGE_WRITE", 2),
        b("SYNC_FILE_RANGE_WAIT_AFTER", 4),
    ],
);

// ---------------------------------------------------------------------------------------------
// processes

/// Signal numbers for kill/tgkill.
pub static SIGNAL: FlagSet = enm(
    "signal",
    &[
        e("SIGHUP", 1),
        e("SIGINT", 2),
        e("SIGQUIT", 3),
        e("SIGILL", 4),
        e("SIGTRAP", 5),
        e("SIGABRT", 6),
        e("SIGBUS", 7),
        e("SIGFPE", 8),
        e("SIGKILL", 9),
        e("SIGUSR1", 10),
        e("SIGSEGV", 11),
        e("SIGUSR2", 12),
        e("SIGPIPE", 13),
        e("SIGALRM", 14),
        e("SIGTERM", 15),
        e("SIGSTKFLT", 16),
        e("SIGCHLD", 17),
        e("SIGCONT", 18),
        e("SIGSTOP", 19),
        e("SIGTSTP", 20),
        e("SIGTTIN", 21),
        e("SIGTTOU", 22),
        e("SIGURG", 23),
        e("SIGXCPU", 24),
        e("SIGXFSZ", 25),
        e("SIGVTALRM", 26),
        e("SIGPROF", 27),
        e("SIGWINCH", 28),
        e("SIGIO", 29),
        e("SIGPWR", 30),
        e("SIGSYS", 31),
    ],
);

/// `CSIGNAL`: the exit-signal byte of clone's flags.
const CSIGNAL: u64 = 0xff;

/// clone flags (linux/sched.h) plus the exit signal in the low byte (`CSIGNAL`), displayed
/// strace-style (`CLONE_VM|CLONE_FS|...|SIGCHLD`). Re-Animator columns `flag_*` and `signal_*`
/// of `clone`.
pub static CLONE: FlagSet = FlagSet {
    name: "clone",
    kind: FlagKind::Bits,
    entries: &[
        br("CLONE_VM", 0x100, "flag_vm"),
        br("CLONE_FS", 0x200, "flag_filesystem"),
        br("CLONE_FILES", 0x400, "flag_files"),
        br("CLONE_SIGHAND", 0x800, "flag_sighand"),
        b("CLONE_PIDFD", 0x1000),
        br("CLONE_PTRACE", 0x2000, "flag_ptrace"),
        br("CLONE_VFORK", 0x4000, "flag_vfork"),
        br("CLONE_PARENT", 0x8000, "flag_parent"),
        br("CLONE_THREAD", 0x10000, "flag_thread"),
        br("CLONE_NEWNS", 0x20000, "flag_newns"),
        br("CLONE_SYSVSEM", 0x40000, "flag_sysvsem"),
        br("CLONE_SETTLS", 0x80000, "flag_settls"),
        br("CLONE_PARENT_SETTID", 0x100000, "flag_parent_settid"),
        br("CLONE_CHILD_CLEARTID", 0x200000, "flag_child_cleartid"),
        b("CLONE_DETACHED", 0x400000),
        br("CLONE_UNTRACED", 0x800000, "flag_untraced"),
        br("CLONE_CHILD_SETTID", 0x1000000, "flag_child_settid"),
        b("CLONE_NEWCGROUP", 0x2000000),
        br("CLONE_NEWUTS", 0x4000000, "flag_newuts"),
        br("CLONE_NEWIPC", 0x8000000, "flag_newipc"),
        br("CLONE_NEWUSER", 0x10000000, "flag_newuser"),
        br("CLONE_NEWPID", 0x20000000, "flag_newpid"),
        br("CLONE_NEWNET", 0x40000000, "flag_newnet"),
        br("CLONE_IO", 0x80000000, "flag_io"),
        b("CLONE_CLEAR_SIGHAND", 0x100000000),
        b("CLONE_INTO_CGROUP", 0x200000000),
        // The exit signal sent to the parent (the CSIGNAL byte).
        m("SIGHUP", CSIGNAL, 1, Some("signal_hangup")),
        m("SIGINT", CSIGNAL, 2, Some("signal_terminal_interrupt")),
        m("SIGQUIT", CSIGNAL, 3, Some("signal_terminal_quit")),
        m("SIGILL", CSIGNAL, 4, Some("signal_illegal")),
        m("SIGTRAP", CSIGNAL, 5, Some("signal_trace_trap")),
        m("SIGABRT", CSIGNAL, 6, Some("signal_abort")),
        m("SIGIOT", CSIGNAL, 6, Some("signal_iot_trap")),
        m("SIGBUS", CSIGNAL, 7, Some("signal_bus")),
        m("SIGFPE", CSIGNAL, 8, Some("signal_floating_point_exception")),
        m("SIGKILL", CSIGNAL, 9, Some("signal_kill")),
        m("SIGUSR1", CSIGNAL, 10, Some("signal_user_defined_1")),
        m("SIGSEGV", CSIGNAL, 11, Some("signal_segv")),
        m("SIGUSR2", CSIGNAL, 12, Some("signal_user_defined_2")),
        m("SIGPIPE", CSIGNAL, 13, Some("signal_pipe")),
        m("SIGALRM", CSIGNAL, 14, Some("signal_alarm")),
        m("SIGTERM", CSIGNAL, 15, Some("signal_termination")),
        m("SIGSTKFLT", CSIGNAL, 16, Some("signal_stack_fault")),
        m("SIGCHLD", CSIGNAL, 17, Some("signal_child")),
        m("SIGCONT", CSIGNAL, 18, Some("signal_continue")),
        m("SIGSTOP", CSIGNAL, 19, Some("signal_stop")),
        m("SIGTSTP", CSIGNAL, 20, Some("signal_terminal_stop")),
        m("SIGTTIN", CSIGNAL, 21, Some("signal_tty_read")),
        m("SIGTTOU", CSIGNAL, 22, Some("signal_tty_write")),
        m("SIGURG", CSIGNAL, 23, Some("signal_urgent")),
        m("SIGXCPU", CSIGNAL, 24, Some("signal_cpu_exceeded")),
        m("SIGXFSZ", CSIGNAL, 25, Some("signal_file_size_exceeded")),
        m("SIGVTALRM", CSIGNAL, 26, Some("signal_virtual_alarm")),
        m("SIGPROF", CSIGNAL, 27, Some("signal_prof_alarm")),
        m("SIGWINCH", CSIGNAL, 28, Some("signal_window_size_change")),
        m("SIGIO", CSIGNAL, 29, Some("signal_io")),
        m("SIGPWR", CSIGNAL, 30, Some("signal_power")),
        m("SIGSYS", CSIGNAL, 31, None),
    ],
};

/// getrlimit/setrlimit/prlimit64 resources (`resource_value`; Re-Animator also stores the
/// `resource` byte).
pub static RLIMIT: FlagSet = enm(
    "rlimit",
    &[
        e("RLIMIT_CPU", 0),
        e("RLIMIT_FSIZE", 1),
        e("RLIMIT_DATA", 2),
        e("RLIMIT_STACK", 3),
        e("RLIMIT_CORE", 4),
        e("RLIMIT_RSS", 5),
        e("RLIMIT_NPROC", 6),
        e("RLIMIT_NOFILE", 7),
        e("RLIMIT_MEMLOCK", 8),
        e("RLIMIT_AS", 9),
        e("RLIMIT_LOCKS", 10),
        e("RLIMIT_SIGPENDING", 11),
        e("RLIMIT_MSGQUEUE", 12),
        e("RLIMIT_NICE", 13),
        e("RLIMIT_RTPRIO", 14),
        e("RLIMIT_RTTIME", 15),
    ],
);

/// mount flags (`MS_*`, linux/mount.h).
pub static MOUNT: FlagSet = bits(
    "mount",
    &[
        b("MS_RDONLY", 1),
        b("MS_NOSUID", 2),
        b("MS_NODEV", 4),
        b("MS_NOEXEC", 8),
        b("MS_SYNCHRONOUS", 16),
        b("MS_REMOUNT", 32),
        b("MS_MANDLOCK", 64),
        b("MS_DIRSYNC", 128),
        b("MS_NOSYMFOLLOW", 256),
        b("MS_NOATIME", 1024),
        b("MS_NODIRATIME", 2048),
        b("MS_BIND", 4096),
        b("MS_MOVE", 8192),
        b("MS_REC", 16384),
        b("MS_SILENT", 32768),
        b("MS_POSIXACL", 1 << 16),
        b("MS_UNBINDABLE", 1 << 17),
        b("MS_PRIVATE", 1 << 18),
        b("MS_SLAVE", 1 << 19),
        b("MS_SHARED", 1 << 20),
        b("MS_RELATIME", 1 << 21),
        b("MS_KERNMOUNT", 1 << 22),
        b("MS_I_VERSION", 1 << 23),
        b("MS_STRICTATIME", 1 << 24),
        b("MS_LAZYTIME", 1 << 25),
        m("MS_MGC_VAL", 0xffff_0000, 0xc0ed_0000, None),
    ],
);

/// umount2 flags.
pub static UMOUNT: FlagSet = bits(
    "umount",
    &[b("MNT_FORCE", 1), b("MNT_DETACH", 2), b("MNT_EXPIRE", 4), b("UMOUNT_NOFOLLOW", 8)],
);

// ---------------------------------------------------------------------------------------------
// sockets and event fds

/// Address families (socket `domain`).
pub static AF: FlagSet = enm(
    "af",
    &[
        e("AF_UNSPEC", 0),
        e("AF_UNIX", 1),
        e("AF_INET", 2),
        e("AF_INET6", 10),
        e("AF_NETLINK", 16),
        e("AF_PACKET", 17),
        e("AF_VSOCK", 40),
    ],
);

/// socket `type`: the socket type in the low bits plus `SOCK_NONBLOCK`/`SOCK_CLOEXEC`.
pub static SOCK_TYPE: FlagSet = bits(
    "sock_type",
    &[
        m("SOCK_STREAM", 0xf, 1, None),
        m("SOCK_DGRAM", 0xf, 2, None),
        m("SOCK_RAW", 0xf, 3, None),
        m("SOCK_RDM", 0xf, 4, None),
        m("SOCK_SEQPACKET", 0xf, 5, None),
        m("SOCK_DCCP", 0xf, 6, None),
        m("SOCK_PACKET", 0xf, 10, None),
        b("SOCK_NONBLOCK", O_NONBLOCK),
        b("SOCK_CLOEXEC", O_CLOEXEC),
    ],
);

/// accept4 flags.
pub static SOCK_FLAGS: FlagSet =
    bits("sock_flags", &[b("SOCK_NONBLOCK", O_NONBLOCK), b("SOCK_CLOEXEC", O_CLOEXEC)]);

/// shutdown `how`.
pub static SHUT: FlagSet = enm("shut", &[e("SHUT_RD", 0), e("SHUT_WR", 1), e("SHUT_RDWR", 2)]);

/// sendto/sendmsg flags. Re-Animator columns `flag_*` of `sendto`/`sendmsg`.
pub static MSG_SEND: FlagSet = bits(
    "msg_send",
    &[
        br("MSG_OOB", 0x1, "flag_oob"),
        br("MSG_DONTROUTE", 0x4, "flag_dontroute"),
        br("MSG_DONTWAIT", 0x40, "flag_dontwait"),
        br("MSG_EOR", 0x80, "flag_eor"),
        br("MSG_CONFIRM", 0x800, "flag_confirm"),
        br("MSG_NOSIGNAL", 0x4000, "flag_nosignal"),
        br("MSG_MORE", 0x8000, "flag_more"),
        b("MSG_BATCH", 0x40000),
        b("MSG_ZEROCOPY", 0x4000000),
        b("MSG_FASTOPEN", 0x20000000),
    ],
);

/// recvfrom/recvmsg flags. Re-Animator columns `flag_*` of `recvfrom`/`recvmsg`.
pub static MSG_RECV: FlagSet = bits(
    "msg_recv",
    &[
        br("MSG_OOB", 0x1, "flag_oob"),
        br("MSG_PEEK", 0x2, "flag_peek"),
        br("MSG_TRUNC", 0x20, "flag_trunc"),
        br("MSG_DONTWAIT", 0x40, "flag_dontwait"),
        br("MSG_WAITALL", 0x100, "flag_waitall"),
        br("MSG_ERRQUEUE", 0x2000, "flag_errqueue"),
        b("MSG_WAITFORONE", 0x10000),
        br("MSG_CMSG_CLOEXEC", 0x40000000, "flag_cmsg_cloexec"),
    ],
);

/// epoll_ctl operations.
pub static EPOLL_CTL: FlagSet =
    enm("epoll_ctl", &[e("EPOLL_CTL_ADD", 1), e("EPOLL_CTL_DEL", 2), e("EPOLL_CTL_MOD", 3)]);

/// Every flag set, for lookups by name and for tests.
pub static ALL: &[&FlagSet] = &[
    &OPEN,
    &FCNTL_STATUS,
    &DUP3,
    &PIPE2,
    &EPOLL_CREATE1,
    &EVENTFD,
    &MEMFD,
    &CLOSE_RANGE,
    &FCNTL_CMD,
    &FCNTL_FD,
    &FCNTL_LEASE,
    &FCNTL_NOTIFY,
    &FLOCK_TYPE,
    &FLOCK_WHENCE,
    &FLOCK_OP,
    &MODE,
    &ACCESS,
    &AT,
    &AT_FSTATAT,
    &AT_STATX,
    &AT_FACCESSAT,
    &AT_UNLINKAT,
    &AT_LINKAT,
    &AT_UTIMENSAT,
    &RENAME,
    &RESOLVE,
    &STATX_MASK,
    &STATFS_FLAGS,
    &FSTATFS_FLAGS,
    &PROT,
    &MAP,
    &MSYNC,
    &MREMAP,
    &MADV,
    &SEEK,
    &FALLOC,
    &FADVISE,
    &RWF,
    &XATTR,
    &SPLICE,
    &SYNC_FILE_RANGE,
    &SIGNAL,
    &CLONE,
    &RLIMIT,
    &MOUNT,
    &UMOUNT,
    &AF,
    &SOCK_TYPE,
    &SOCK_FLAGS,
    &SHUT,
    &MSG_SEND,
    &MSG_RECV,
    &EPOLL_CTL,
];

/// The flag set with this name.
pub fn by_name(name: &str) -> Option<&'static FlagSet> {
    ALL.iter().copied().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_flags() {
        assert_eq!(OPEN.format(0o1101), "O_WRONLY|O_CREAT|O_TRUNC");
        assert_eq!(OPEN.format(0), "O_RDONLY");
        assert_eq!(OPEN.format(O_RDONLY | O_CLOEXEC), "O_RDONLY|O_CLOEXEC");
        assert_eq!(OPEN.format(O_RDWR | O_TMPFILE), "O_RDWR|O_TMPFILE");
        assert_eq!(OPEN.format(O_SYNC), "O_RDONLY|O_SYNC");
        assert_eq!(OPEN.format(O_DSYNC), "O_RDONLY|O_DSYNC");
        assert_eq!(OPEN.format(O_NONBLOCK), "O_RDONLY|O_NONBLOCK");
        assert_eq!(OPEN.format(3), "O_ACCMODE");
        assert_eq!(OPEN.format(O_WRONLY | 0o40000000), "O_WRONLY|0x800000");
        let b: Vec<_> = OPEN.ra_bools(0o1101).filter(|b| b.1).map(|b| b.0).collect();
        assert_eq!(b, ["flag_write_only", "flag_create", "flag_truncate"]);
        let b: Vec<_> = OPEN.ra_bools(O_NONBLOCK).filter(|b| b.1).map(|b| b.0).collect();
        assert_eq!(b, ["flag_read_only", "flag_no_blocking_mode", "flag_no_delay"]);
        assert_eq!(OPEN.ra_bools(0).count(), 18);
    }

    #[test]
    fn other_sets() {
        assert_eq!(MODE.format(0o100644), "S_IFREG|0644");
        assert_eq!(MODE.format(0o4755), "04755");
        assert_eq!(MODE.format(0o22), "022");
        assert_eq!(MODE.format(0), "0");
        assert_eq!(MODE.format(0o040000), "S_IFDIR");
        let b: Vec<_> = MODE.ra_bools(0o640).filter(|b| b.1).map(|b| b.0).collect();
        assert_eq!(b, ["mode_R_user", "mode_W_user", "mode_R_group"]);
        assert_eq!(ACCESS.format(0), "F_OK");
        assert_eq!(ACCESS.format(6), "R_OK|W_OK");
        let b: Vec<_> = ACCESS.ra_bools(0).filter(|b| b.1).map(|b| b.0).collect();
        assert_eq!(b, ["mode_exist"]);
        assert_eq!(PROT.format(0), "PROT_NONE");
        assert_eq!(PROT.format(3), "PROT_READ|PROT_WRITE");
        assert_eq!(MAP.format(0x22), "MAP_PRIVATE|MAP_ANONYMOUS");
        assert_eq!(MAP.format(0x01), "MAP_SHARED");
        let b: Vec<_> = MAP.ra_bools(0x12).filter(|b| b.1).map(|b| b.0).collect();
        assert_eq!(b, ["flag_private", "flag_fixed", "flag_file"]);
        let clone = 0x0120_0011; // CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD
        assert_eq!(CLONE.format(clone), "CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD");
        let b: Vec<_> = CLONE.ra_bools(clone).filter(|b| b.1).map(|b| b.0).collect();
        assert_eq!(b, ["flag_child_cleartid", "flag_child_settid", "signal_child"]);
        assert_eq!(CLONE.format(0), "0");
        assert_eq!(SEEK.format(2), "SEEK_END");
        assert_eq!(SEEK.format(9), "0x9");
        assert_eq!(FCNTL_CMD.format(F_DUPFD_CLOEXEC), "F_DUPFD_CLOEXEC");
        let b: Vec<_> = FCNTL_CMD.ra_bools(F_SETFL).filter(|b| b.1).map(|b| b.0).collect();
        assert_eq!(b, ["command_set_status_flags"]);
        assert_eq!(fcntl_arg_set(F_SETFL).map(|s| s.name), Some("fcntl_status"));
        assert!(fcntl_arg_is_flock(F_SETLKW));
        assert!(ioctl_arg_is_int(0x5421) && ioctl_arg_is_int(0x5452) && !ioctl_arg_is_int(0x5401));
        assert_eq!(AT.format(0x200), "AT_REMOVEDIR");
        assert_eq!(AT_FACCESSAT.format(0x200), "AT_EACCESS");
        assert_eq!(AT_STATX.format(0x2100), "AT_SYMLINK_NOFOLLOW|AT_STATX_FORCE_SYNC");
        assert_eq!(STATX_MASK.format(0xfff), "STATX_BASIC_STATS|STATX_BTIME");
        assert_eq!(SOCK_TYPE.format(1 | O_CLOEXEC), "SOCK_STREAM|SOCK_CLOEXEC");
        assert_eq!(XATTR.format(1), "XATTR_CREATE");
        assert_eq!(by_name("open").map(|s| s.kind), Some(FlagKind::AccessModeThenBits));
    }

    /// Values to try on a set: each entry, pairs of entries, and an unknown high bit.
    fn samples(s: &FlagSet) -> Vec<u64> {
        let mut v = vec![0, 1 << 40];
        for a in s.entries {
            v.push(a.value);
            for b in s.entries {
                v.push(a.value | b.value);
            }
        }
        v
    }

    #[test]
    fn format_parse_round_trip() {
        let mut errors = Vec::new();
        for s in ALL {
            for v in samples(s) {
                let text = s.format(v);
                if s.parse(&text) != Some(v) {
                    errors.push(format!("{}: {v:#x} -> {text:?} -> {:?}", s.name, s.parse(&text)));
                }
            }
        }
        assert!(errors.is_empty(), "{}", errors.join("\n"));
    }

    #[test]
    fn tables_are_well_formed() {
        let mut errors = Vec::new();
        let mut names = std::collections::HashSet::new();
        for s in ALL {
            if !names.insert(s.name) {
                errors.push(format!("set {} twice in ALL", s.name));
            }
            let mut ra = std::collections::HashSet::new();
            for f in s.entries {
                if f.value & !f.mask != 0 {
                    errors.push(format!("{}: {} value outside its mask", s.name, f.name));
                }
                if !f
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                {
                    errors.push(format!("{}: {} is not a C constant name", s.name, f.name));
                }
                if let Some(col) = f.ra_field {
                    if !ra.insert(col) {
                        errors.push(format!("{}: column {col} twice", s.name));
                    }
                }
                if s.kind == FlagKind::Enum && f.mask != u64::MAX {
                    errors.push(format!("{}: enum entry {} has a mask", s.name, f.name));
                }
            }
        }
        assert!(errors.is_empty(), "{}", errors.join("\n"));
    }
}
