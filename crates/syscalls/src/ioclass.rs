//! The one mapping from an operation to its I/O class, used by latency profiles' `class`
//! layer: system calls by kernel or trace name, and FUSE operations (`reanimator fs` traces)
//! by their opcode name.

/// An operation's I/O class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IoClass {
    /// Moves file data to the caller.
    Read,
    /// Moves or allocates file data (including truncation).
    Write,
    /// Reads or changes attributes: stat, chmod, xattrs, access, statfs, lookups.
    Meta,
    /// Makes data durable: fsync, fdatasync, sync, msync, FUSE flush.
    Sync,
    /// Opens or closes files and directories.
    OpenClose,
    /// Reads or changes directory contents and the namespace: getdents, mkdir, unlink, rename.
    Dir,
    /// Sets up, submits and reaps asynchronous I/O (io_uring, Linux AIO): the I/O itself runs
    /// outside the calls.
    Async,
    /// Anything else (memory, processes, sockets, descriptors, ...).
    Other,
}

impl IoClass {
    /// The name profiles' `class` layer and `export`'s per-class files use (`read`, `open/close`).
    pub fn name(self) -> &'static str {
        match self {
            IoClass::Read => "read",
            IoClass::Write => "write",
            IoClass::Meta => "meta",
            IoClass::Sync => "sync",
            IoClass::OpenClose => "open/close",
            IoClass::Dir => "dir",
            IoClass::Async => "async",
            IoClass::Other => "other",
        }
    }
}

/// The class of a system call (kernel or trace name) or FUSE operation.
pub fn io_class(op: &str) -> IoClass {
    match op {
        "read" | "pread64" | "pread" | "readv" | "preadv" | "preadv2" | "readahead" => {
            IoClass::Read
        }
        "write" | "pwrite64" | "pwrite" | "writev" | "pwritev" | "pwritev2" | "truncate"
        | "ftruncate" | "fallocate" | "copy_file_range" | "sendfile" | "sendfile64" | "splice" => {
            IoClass::Write
        }
        "fsync" | "fdatasync" | "sync" | "syncfs" | "sync_file_range" | "msync" | "fsyncdir"
        | "flush" => IoClass::Sync,
        "open" | "openat" | "openat2" | "creat" | "close" | "close_range" | "open_by_handle_at"
        | "name_to_handle_at" | "memfd_create" | "opendir" | "create" | "release"
        | "releasedir" => IoClass::OpenClose,
        "getdents" | "getdents64" | "readdir" | "readdirplus" | "mkdir" | "mkdirat" | "rmdir"
        | "unlink" | "unlinkat" | "rename" | "renameat" | "renameat2" | "link" | "linkat"
        | "symlink" | "symlinkat" | "mknod" | "mknodat" => IoClass::Dir,
        "stat" | "lstat" | "fstat" | "newfstatat" | "fstatat" | "fstatat64" | "statx"
        | "statfs" | "fstatfs" | "access" | "faccessat" | "faccessat2" | "readlink"
        | "readlinkat" | "chmod" | "fchmod" | "fchmodat" | "fchmodat2" | "chown" | "fchown"
        | "lchown" | "fchownat" | "utime" | "utimes" | "utimensat" | "futimesat" | "getxattr"
        | "lgetxattr" | "fgetxattr" | "setxattr" | "lsetxattr" | "fsetxattr" | "listxattr"
        | "llistxattr" | "flistxattr" | "removexattr" | "lremovexattr" | "fremovexattr"
        | "lookup" | "getattr" | "setattr" | "lseek" | "fadvise64" | "flock" | "fcntl"
        | "ioctl" => IoClass::Meta,
        "io_uring_setup" | "io_uring_enter" | "io_uring_register" | "io_uring_op" | "io_setup"
        | "io_destroy" | "io_submit" | "io_cancel" | "io_getevents" | "io_pgetevents" => {
            IoClass::Async
        }
        _ => IoClass::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_calls_have_a_class() {
        let unclassified: Vec<&str> = crate::REGISTRY
            .iter()
            .filter(|d| d.class == crate::Class::File && io_class(d.name) == IoClass::Other)
            .map(|d| d.name)
            .collect();
        assert!(unclassified.is_empty(), "file calls without an I/O class: {unclassified:?}");
        for d in crate::REGISTRY {
            assert_eq!(io_class(d.name), io_class(d.trace_name), "{}", d.name);
        }
        assert_eq!(io_class("pread"), IoClass::Read);
        assert_eq!(io_class("readdirplus"), IoClass::Dir);
        assert_eq!(io_class("mmap"), IoClass::Other);
    }
}
