//! The one mapping from an operation to its I/O class, used by latency profiles' `class`
//! layer: system calls by their registry entry, and FUSE operations (`reanimator fs` traces)
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
    pub const fn name(self) -> &'static str {
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

/// The class of a system call (kernel or trace name, or an alias: its registry entry's
/// [`crate::SyscallDef::io_class`]) or of a FUSE operation (`FUSE_OPS`).
pub fn io_class(op: &str) -> IoClass {
    if let Some(d) = crate::lookup_any(op) {
        return d.io_class;
    }
    FUSE_OPS.iter().find(|(n, _)| *n == op).map_or(IoClass::Other, |&(_, c)| c)
}

/// The I/O classes of the FUSE operations of `reanimator fs` traces (their opcode names in
/// the kernel's `fuse_opcode`, lower case) that are not also the name of a registry call;
/// those (`read`, `rename`, `getxattr`, ...) take the call's class. Not call names: the
/// schema of `reanimator fs` traces.
pub static FUSE_OPS: &[(&str, IoClass)] = &[
    ("fsyncdir", IoClass::Sync),
    ("flush", IoClass::Sync),
    ("opendir", IoClass::OpenClose),
    ("create", IoClass::OpenClose),
    ("release", IoClass::OpenClose),
    ("releasedir", IoClass::OpenClose),
    ("readdir", IoClass::Dir),
    ("readdirplus", IoClass::Dir),
    ("lookup", IoClass::Meta),
    ("getattr", IoClass::Meta),
    ("setattr", IoClass::Meta),
];

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
        // The 32-bit ABIs' names take their call's class.
        assert_eq!(io_class("stat64"), IoClass::Meta);
        assert_eq!(io_class("ftruncate64"), IoClass::Write);
        // FUSE operations: by the call of the same name, or the table of their own.
        assert_eq!(io_class("fsyncdir"), IoClass::Sync);
        assert_eq!(io_class("release"), IoClass::OpenClose);
        assert_eq!(io_class("rename"), IoClass::Dir);
        for (op, _) in FUSE_OPS {
            assert!(crate::lookup_any(op).is_none(), "{op} is a call: its entry gives its class");
        }
    }
}
