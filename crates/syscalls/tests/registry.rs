//! Consistency of the registry with itself, with the generated number tables and with
//! Re-Animator's schema. Each test lists every violation at once.

use std::collections::{BTreeSet, HashMap, HashSet};

use ra_syscalls::reanimator_schema::{self as ras, FieldKind};
use ra_syscalls::{flags, lookup, ArgKind, Class, Handler, Len, ReplayPolicy, Ret, REGISTRY};

/// Re-Animator types with no x86_64 syscall: glibc implements recv/send with recvfrom/sendto.
const RA_WITHOUT_SYSCALL: &[&str] = &["recv", "send"];
/// Re-Animator's pseudo-calls (events the tracer synthesizes, no syscall number).
const PSEUDO: &[&str] = &["mmappread", "mmappwrite", "io_uring_op", "signal_deliver"];
/// (call, arg) of in-schema calls whose field is an extension column Re-Animator lacks.
const EXTENSIONS: &[(&str, &str)] = &[
    ("sync_file_range", "nbytes"),
    ("recvfrom", "src_addr"),
    // The page's address and its file's identity (issue 15: pages of a mapping whose
    // descriptor was closed and reused).
    ("mmappread", "device"),
    ("mmappread", "inode"),
    ("mmappread", "pathname"),
    ("mmappwrite", "address"),
    ("mmappwrite", "device"),
    ("mmappwrite", "inode"),
    ("mmappwrite", "pathname"),
];

fn check(what: &str, errors: Vec<String>) {
    assert!(errors.is_empty(), "{what}: {} violation(s):\n  {}", errors.len(), errors.join("\n  "));
}

#[test]
fn every_reanimator_call_is_registered() {
    let mut errors = Vec::new();
    let mut covered = 0;
    for &(t, _) in ras::TYPES {
        if RA_WITHOUT_SYSCALL.contains(&t) {
            if ra_syscalls::by_trace_name(t).is_some() {
                errors.push(format!("{t}: listed as having no syscall but registered"));
            }
            continue;
        }
        match ra_syscalls::by_trace_name(t) {
            None => errors.push(format!("{t}: no SyscallDef with this trace_name")),
            Some(d) if !d.in_reanimator_schema => {
                errors.push(format!("{t}: {} has in_reanimator_schema = false", d.name))
            }
            Some(_) => covered += 1,
        }
    }
    for d in REGISTRY.iter().filter(|d| d.in_reanimator_schema) {
        if ras::fields_of(d.trace_name).is_none() {
            errors
                .push(format!("{}: trace_name {} is not a Re-Animator type", d.name, d.trace_name));
        }
    }
    for d in REGISTRY.iter().filter(|d| !d.in_reanimator_schema) {
        if ras::fields_of(d.trace_name).is_some() {
            errors.push(format!(
                "{}: trace_name {} collides with a Re-Animator type",
                d.name, d.trace_name
            ));
        }
    }
    check("Re-Animator coverage", errors);
    assert_eq!(covered, ras::TYPES.len() - RA_WITHOUT_SYSCALL.len());
}

fn int_column(k: FieldKind) -> bool {
    matches!(k, FieldKind::Int32 | FieldKind::Int64 | FieldKind::Byte)
}

#[test]
fn reanimator_fields_exist_and_match_kinds() {
    let mut errors = Vec::new();
    let mut extensions = Vec::new();
    for d in REGISTRY.iter().filter(|d| d.in_reanimator_schema) {
        let Some(fields) = ras::fields_of(d.trace_name) else { continue };
        let column = |name: &str| fields.iter().find(|f| f.name == name);
        for a in d.args {
            let Some(f) = column(a.field) else {
                extensions.push((d.name, a.name));
                continue;
            };
            let ok = match a.kind {
                ArgKind::Int
                | ArgKind::Fd
                | ArgKind::DirFd
                | ArgKind::Flags(_)
                | ArgKind::Mode
                | ArgKind::Addr => int_column(f.kind),
                ArgKind::Path
                | ArgKind::InBuf(_)
                | ArgKind::OutBuf(_)
                | ArgKind::IovIn { .. }
                | ArgKind::IovOut { .. }
                | ArgKind::StrArray => f.kind == FieldKind::Variable32,
                ArgKind::InStruct(s, _) | ArgKind::OutStruct(s, _) | ArgKind::InOutStruct(s, _) => {
                    let cols = s.ra_decoded_columns();
                    if f.kind == FieldKind::Variable32 {
                        true
                    } else if cols.first() == Some(&a.field) {
                        let bad: Vec<_> = cols
                            .iter()
                            .filter(|c| !column(c).is_some_and(|f| int_column(f.kind)))
                            .collect();
                        if !bad.is_empty() {
                            errors.push(format!(
                                "{}.{}: decoded columns {bad:?} missing",
                                d.name, a.name
                            ));
                        }
                        true
                    } else {
                        false
                    }
                }
            };
            if !ok {
                errors.push(format!(
                    "{}.{}: {:?} stored in {} column {}",
                    d.name,
                    a.name,
                    a.kind,
                    f.kind.xml_name(),
                    a.field
                ));
            }
            // The bool columns a flag argument decodes must be columns of this type.
            let set = match a.kind {
                ArgKind::Flags(set) => Some(set),
                ArgKind::Mode => Some(&flags::MODE),
                _ => None,
            };
            for (col, _) in set.into_iter().flat_map(|s| s.ra_bools(0)) {
                if !column(col).is_some_and(|f| f.kind == FieldKind::Bool) {
                    errors.push(format!(
                        "{}.{}: flag column {col} is not a bool of {}",
                        d.name, a.name, d.trace_name
                    ));
                }
            }
        }
        let ext: Vec<_> = d.ra_extension_args().map(|(_, a)| (d.name, a.name)).collect();
        let expected: Vec<_> = extensions.iter().filter(|(n, _)| *n == d.name).copied().collect();
        if ext != expected {
            errors.push(format!("{}: ra_extension_args {ext:?} != {expected:?}", d.name));
        }
    }
    let expected: BTreeSet<_> = EXTENSIONS.iter().copied().collect();
    let found: BTreeSet<_> = extensions.iter().copied().collect();
    if found != expected {
        errors.push(format!("extension columns {found:?}, expected {expected:?}"));
    }
    check("Re-Animator fields", errors);
}

/// Columns of Re-Animator's types that no argument fills directly: the trace crate derives them.
/// This pins the list so a new gap is a deliberate decision.
fn derived_column(call: &str, col: &str) -> bool {
    col.starts_with("full_")
        || col.ends_with("_current_working_directory")
        || col == "buffer_not_captured"
        || (col.starts_with("stat_result_")
            && matches!(call, "stat" | "lstat" | "fstat" | "fstatat"))
        || (col.starts_with("statfs_result_") && matches!(call, "statfs" | "fstatfs"))
        || (call == "fcntl" && (col.starts_with("argument_") || col.starts_with("lock_")))
        || matches!(
            (call, col),
            // the byte twins of *_value columns and mknod's file type
            ("lseek", "whence")
                | ("flock", "operation")
                | ("getrlimit" | "setrlimit", "resource")
                | ("mknod" | "mknodat", "type")
                // second member of structs stored decoded (Struct::ra_decoded_columns)
                | ("pipe" | "socketpair", "write_descriptor")
                | ("utime" | "utimes" | "utimensat", "mod_time")
                | ("getrlimit" | "setrlimit", "resource_hard_limit")
                // utimensat's times == NULL / UTIME_NOW / UTIME_OMIT
                | ("utimensat", "utime_now" | "utime_omit")
                // vector calls are one header record (iov_number -1, total bytes_requested)
                // plus one record per iovec (its index, its length)
                | ("readv" | "writev", "bytes_requested" | "iov_number")
                | ("recvmsg" | "sendmsg", "bytes_requested" | "iov_number")
                // ioctl's argument buffer (request-specific)
                | ("ioctl", "buffer_size" | "ioctl_buffer")
                // execve argument records split over several records; exit injected by tracer
                | ("execve", "continuation_number")
                | ("exit", "generated")
                // glibc flags the raw faccessat/fchmodat syscalls do not have
                | ("faccessat", "flags_value" | "flags_at_eaccess" | "flags_at_symlink_nofollow")
                | ("fchmodat", "flag_value" | "flag_at_symlink_nofollow")
        )
}

#[test]
fn every_reanimator_column_is_filled() {
    let mut errors = Vec::new();
    for d in REGISTRY.iter().filter(|d| d.in_reanimator_schema) {
        let Some(fields) = ras::fields_of(d.trace_name) else { continue };
        let mut filled: HashSet<&str> = d.args.iter().map(|a| a.field).collect();
        for a in d.args {
            match a.kind {
                ArgKind::Flags(set) => filled.extend(set.ra_bools(0).map(|(c, _)| c)),
                ArgKind::Mode => filled.extend(flags::MODE.ra_bools(0).map(|(c, _)| c)),
                _ => {}
            }
        }
        for f in fields {
            if !filled.contains(f.name) && !derived_column(d.trace_name, f.name) {
                errors.push(format!("{}: column {} is filled by nothing", d.trace_name, f.name));
            }
        }
    }
    // Flag sets for struct members and fcntl's arg decode into those types' columns.
    for (call, set) in [
        ("statfs", &flags::STATFS_FLAGS),
        ("fstatfs", &flags::FSTATFS_FLAGS),
        ("fcntl", &flags::FCNTL_STATUS),
        ("fcntl", &flags::FCNTL_FD),
        ("fcntl", &flags::FCNTL_LEASE),
        ("fcntl", &flags::FCNTL_NOTIFY),
        ("fcntl", &flags::FLOCK_TYPE),
        ("fcntl", &flags::FLOCK_WHENCE),
    ] {
        for (col, _) in set.ra_bools(0) {
            if !ras::field(call, col).is_some_and(|f| f.kind == FieldKind::Bool) {
                errors.push(format!("{}: {col} is not a bool column of {call}", set.name));
            }
        }
    }
    check("Re-Animator columns", errors);
}

#[test]
fn every_syscall_has_a_number() {
    let mut errors = Vec::new();
    for d in REGISTRY {
        let pseudo = PSEUDO.contains(&d.name);
        match (d.nr_x86_64(), pseudo) {
            (None, false) => errors.push(format!("{}: not in the x86_64 table", d.name)),
            (Some(nr), true) => errors.push(format!("{}: pseudo-call has number {nr}", d.name)),
            _ => {}
        }
        if d.is_pseudo() != pseudo {
            errors.push(format!("{}: is_pseudo() = {}", d.name, d.is_pseudo()));
        }
        // Page records replay as I/O (Memory); io_uring requests are the File I/O they do; a
        // delivered signal is Process/Skip (nothing to issue).
        let uring = d.replay.handler() == Some(ra_syscalls::Handler::UringOp);
        let page = pseudo && !d.is_signal() && !uring;
        if page && (d.class != Class::Memory || !d.replay.is_reissue()) {
            errors.push(format!("{}: page pseudo-calls are Memory/Reissue", d.name));
        }
        if pseudo && uring && (d.class != Class::File || !d.replay.is_reissue()) {
            errors.push(format!("{}: the io_uring pseudo-call is File/Reissue", d.name));
        }
        if d.is_signal() && (!pseudo || d.class != Class::Process || d.replay != ReplayPolicy::Skip)
        {
            errors.push(format!("{}: the signal pseudo-call is Process/Skip", d.name));
        }
    }
    check("syscall numbers", errors);
}

#[test]
fn names_are_unique() {
    let mut errors = Vec::new();
    let mut names = HashMap::new();
    let mut traces = HashMap::new();
    for d in REGISTRY {
        if let Some(prev) = names.insert(d.name, d.trace_name) {
            errors.push(format!("name {} twice (trace names {prev}, {})", d.name, d.trace_name));
        }
        if let Some(prev) = traces.insert(d.trace_name, d.name) {
            errors.push(format!("trace_name {} twice ({prev}, {})", d.trace_name, d.name));
        }
        if !d.in_reanimator_schema && d.trace_name != d.name {
            errors.push(format!("{}: calls outside the schema keep their name", d.name));
        }
        let mut fields = HashSet::new();
        let mut arg_names = HashSet::new();
        for a in d.args {
            if !fields.insert(a.field) {
                errors.push(format!("{}: field {} used twice", d.name, a.field));
            }
            if !arg_names.insert(a.name) {
                errors.push(format!("{}: arg {} twice", d.name, a.name));
            }
            let snake = |s: &str| {
                !s.is_empty()
                    && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            };
            if !snake(a.field) || !snake(a.name) {
                errors
                    .push(format!("{}.{}: field {:?} is not snake_case", d.name, a.name, a.field));
            }
        }
    }
    check("uniqueness", errors);
    assert_eq!(lookup("pread64").map(|d| d.trace_name), Some("pread"));
    assert_eq!(lookup("fstatat").map(|d| d.name), Some("newfstatat"));
    // Re-Animator's getdents type holds the old syscall's struct linux_dirent records.
    assert_eq!(ra_syscalls::by_trace_name("getdents").map(|d| d.name), Some("getdents"));
    assert_eq!(lookup("getdents64").map(|d| d.trace_name), Some("getdents64"));
}

#[test]
fn lengths_point_at_the_right_arguments() {
    let mut errors = Vec::new();
    for d in REGISTRY {
        for (i, a) in d.args.iter().enumerate() {
            let len = match a.kind {
                ArgKind::InBuf(l) | ArgKind::OutBuf(l) => Some(l),
                ArgKind::InStruct(_, l) | ArgKind::OutStruct(_, l) | ArgKind::InOutStruct(_, l) => {
                    Some(l)
                }
                _ => None,
            };
            let count = match a.kind {
                ArgKind::IovIn { count } | ArgKind::IovOut { count } => Some(count),
                _ => None,
            };
            let int_arg =
                |n: usize| n != i && d.args.get(n).is_some_and(|x| matches!(x.kind, ArgKind::Int));
            match len {
                Some(Len::Arg(n)) if !int_arg(n) => errors
                    .push(format!("{}.{}: Len::Arg({n}) is not an integer arg", d.name, a.name)),
                Some(Len::DerefArg(n))
                    if !d.args.get(n).is_some_and(|x| matches!(x.kind, ArgKind::Addr)) =>
                {
                    errors.push(format!(
                        "{}.{}: Len::DerefArg({n}) is not a pointer arg",
                        d.name, a.name
                    ))
                }
                Some(Len::RetTimesStruct)
                    if !matches!(d.ret, Ret::Count)
                        || !matches!(a.kind, ArgKind::OutStruct(..)) =>
                {
                    errors.push(format!(
                        "{}.{}: Len::RetTimesStruct needs a Count return and an output struct",
                        d.name, a.name
                    ))
                }
                Some(Len::Ret) if !matches!(d.ret, Ret::Count) => {
                    errors.push(format!("{}.{}: Len::Ret but ret is {:?}", d.name, a.name, d.ret))
                }
                Some(Len::Struct)
                    if !matches!(
                        a.kind,
                        ArgKind::InStruct(..) | ArgKind::OutStruct(..) | ArgKind::InOutStruct(..)
                    ) =>
                {
                    errors.push(format!("{}.{}: Len::Struct on a non-struct", d.name, a.name))
                }
                _ => {}
            }
            if let Some(n) = count {
                if !int_arg(n) {
                    errors.push(format!(
                        "{}.{}: iov count {n} is not an integer arg",
                        d.name, a.name
                    ));
                }
            }
            if d.ret == Ret::NoReturn && a.kind.is_output() {
                errors.push(format!(
                    "{}.{}: output buffer on a call that does not return",
                    d.name, a.name
                ));
            }
        }
    }
    check("buffer lengths", errors);
}

fn words(s: &str) -> HashSet<&str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect()
}

#[test]
fn prototypes_name_every_argument() {
    let mut errors = Vec::new();
    for d in REGISTRY {
        let w = words(d.proto);
        for a in d.args {
            if !w.contains(a.name) {
                errors.push(format!("{}: proto {:?} lacks {}", d.name, d.proto, a.name));
            }
        }
        if !d.proto.contains(&format!("{}(", d.name)) {
            errors.push(format!("{}: proto {:?} does not name the call", d.name, d.proto));
        }
        if !d.proto.trim_end().ends_with(';') && !d.proto.trim_end().ends_with("*/") {
            errors.push(format!("{}: proto {:?} is not a declaration", d.name, d.proto));
        }
        // One C parameter per argument (void means none).
        let inside = d.proto.split_once('(').and_then(|(_, r)| r.split_once(')')).map(|(p, _)| p);
        let params = match inside.map(str::trim) {
            Some("void") | Some("") => 0,
            Some(p) => p.split(',').count(),
            None => usize::MAX,
        };
        if params != d.args.len() {
            errors.push(format!(
                "{}: proto has {params} params, def has {} args",
                d.name,
                d.args.len()
            ));
        }
    }
    check("prototypes", errors);
}

#[test]
fn classes_and_policies_are_consistent() {
    let mut errors = Vec::new();
    for d in REGISTRY {
        let ok = match d.class {
            Class::File => d.replay.is_reissue(),
            // bind makes a file for a Unix socket path; the socket itself is simulated.
            Class::Socket => {
                d.replay == ReplayPolicy::Simulate
                    || d.replay == ReplayPolicy::Emulate(Handler::Bind)
            }
            Class::Memory => d.replay.is_emulate() || PSEUDO.contains(&d.name),
            Class::Process => matches!(d.replay, ReplayPolicy::Emulate(_) | ReplayPolicy::Skip),
            Class::Descriptor => {
                matches!(d.replay, ReplayPolicy::Reissue(_) | ReplayPolicy::Simulate)
            }
            Class::Other => !d.replay.is_reissue(),
        };
        if !ok {
            errors.push(format!("{}: {:?} with {:?}", d.name, d.class, d.replay));
        }
    }
    check("class/policy", errors);
    for (name, replay) in [
        ("dup2", ReplayPolicy::Reissue(Handler::Dup)),
        ("close", ReplayPolicy::Reissue(Handler::Close)),
        ("fcntl", ReplayPolicy::Reissue(Handler::Fcntl)),
        ("pipe2", ReplayPolicy::Reissue(Handler::Pipe)),
        ("clone3", ReplayPolicy::Emulate(Handler::Clone)),
        ("execveat", ReplayPolicy::Emulate(Handler::Exec)),
        ("umask", ReplayPolicy::Emulate(Handler::Umask)),
        ("getcwd", ReplayPolicy::Skip),
        ("getpid", ReplayPolicy::Skip),
    ] {
        assert_eq!(lookup(name).map(|d| d.replay), Some(replay), "{name}");
    }
}

#[test]
fn capture_sets_are_large_enough() {
    let storage = REGISTRY.iter().filter(|d| d.class.is_storage()).count();
    assert!(storage >= 70, "only {storage} storage-class calls");
    assert!(REGISTRY.len() > storage, "no Other-class calls");
    // Everything issue 3 asks to capture by default.
    let mut missing = Vec::new();
    for name in [
        "openat2",
        "creat",
        "preadv",
        "preadv2",
        "pwritev",
        "pwritev2",
        "statx",
        "renameat",
        "renameat2",
        "linkat",
        "symlinkat",
        "readlinkat",
        "fchown",
        "lchown",
        "fchownat",
        "futimesat",
        "utimensat",
        "faccessat2",
        "pipe2",
        "mprotect",
        "madvise",
        "msync",
        "getcwd",
        "sendfile",
        "copy_file_range",
        "splice",
        "tee",
        "vmsplice",
        "exit_group",
        "clone3",
        "execveat",
        "close_range",
        "sync",
        "syncfs",
        "chroot",
        "mknodat",
        "memfd_create",
        "flock",
        "truncate",
        "lseek",
        "sendmmsg",
        "recvmmsg",
        "epoll_ctl",
        "epoll_wait",
        "epoll_pwait",
        "eventfd2",
        "dup",
        "dup2",
        "dup3",
        "fcntl",
        "ioctl",
        "getdents64",
        "getdents",
    ] {
        if !lookup(name).is_some_and(|d| d.class.is_storage()) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "not in the storage set: {missing:?}");
}

#[test]
fn specific_entries() {
    let read = lookup("read").unwrap();
    assert_eq!(read.args[1].kind, ArgKind::OutBuf(Len::Ret));
    assert_eq!(read.args[1].field, "data_read");
    let write = lookup("write").unwrap();
    assert_eq!(write.args[1].kind, ArgKind::InBuf(Len::Arg(2)));
    assert_eq!(lookup("readv").unwrap().args[1].kind, ArgKind::IovOut { count: 2 });
    assert_eq!(lookup("writev").unwrap().args[1].kind, ArgKind::IovIn { count: 2 });
    let gsn = lookup("getsockname").unwrap();
    assert_eq!(
        gsn.args[1].kind,
        ArgKind::OutStruct(ra_syscalls::Struct::Sockaddr, Len::DerefArg(2))
    );
    let o2 = lookup("openat2").unwrap();
    assert_eq!(o2.args[2].kind, ArgKind::InStruct(ra_syscalls::Struct::OpenHow, Len::Arg(3)));
    let openat = lookup("openat").unwrap();
    assert_eq!(openat.arg("flags").map(|(i, a)| (i, a.field)), Some((2, "open_value")));
    assert_eq!(openat.nr_x86_64(), Some(257));
    assert_eq!(lookup("newfstatat").unwrap().trace_name, "fstatat");
}

/// `Arg::meaning` (what anonymization replaces): capacities name integer arguments, ids are
/// integers, returned paths and listings are output buffers sized by the return value.
#[test]
fn meanings_fit_their_arguments() {
    use ra_syscalls::{Meaning, Struct};
    let (mut results, mut ids, mut names) = (0, 0, 0);
    for d in ra_syscalls::REGISTRY {
        for a in d.args {
            match a.meaning {
                Meaning::Plain => {}
                Meaning::PathResult { capacity } | Meaning::Listing { capacity } => {
                    results += 1;
                    assert_eq!(d.args[capacity].kind, ArgKind::Int, "{}.{}", d.name, a.name);
                    let listing = matches!(a.meaning, Meaning::Listing { .. });
                    assert!(
                        matches!(
                            (a.kind, listing),
                            (ArgKind::OutBuf(Len::Ret), false)
                                | (
                                    ArgKind::OutStruct(
                                        Struct::Dirents | Struct::Dirents64,
                                        Len::Ret
                                    ),
                                    true
                                )
                        ),
                        "{}.{}",
                        d.name,
                        a.name
                    );
                }
                Meaning::Uid | Meaning::Gid | Meaning::Pid => {
                    ids += 1;
                    assert_eq!(a.kind, ArgKind::Int, "{}.{}", d.name, a.name);
                }
                Meaning::XattrNames { capacity } => {
                    names += 1;
                    assert_eq!(d.args[capacity].kind, ArgKind::Int, "{}.{}", d.name, a.name);
                    assert_eq!(a.kind, ArgKind::OutBuf(Len::Ret), "{}.{}", d.name, a.name);
                }
                Meaning::XattrName | Meaning::Name => {
                    names += 1;
                    assert_eq!(a.kind, ArgKind::InBuf(Len::CStr), "{}.{}", d.name, a.name);
                }
            }
            // A C string that is no path names something anonymization replaces, except the
            // kernel's names of file system types.
            if a.kind == ArgKind::InBuf(Len::CStr) && a.name != "filesystemtype" {
                assert_ne!(a.meaning, Meaning::Plain, "{}.{}", d.name, a.name);
            }
        }
        // Every directory listing is marked.
        for a in d.args {
            if matches!(a.kind, ArgKind::OutStruct(Struct::Dirents | Struct::Dirents64, _)) {
                assert!(matches!(a.meaning, Meaning::Listing { .. }), "{}", d.name);
            }
        }
    }
    assert!(results >= 5, "readlink, readlinkat, getcwd, getdents, getdents64");
    assert!(ids >= 8, "chown's owner and group, kill's pid, ...");
    assert!(names >= 14, "xattr names and lists, memfd_create's name, mount's source");
}

/// The traits that tell calls of one family apart: set on every entry of the family they
/// concern, and on no other.
#[test]
fn family_traits_are_filled() {
    use ra_syscalls::{Handler as H, XattrOp};
    for d in REGISTRY {
        let h = d.replay.handler();
        assert_eq!(d.kernel_copy.is_some(), h == Some(H::Copy), "{}: kernel_copy", d.name);
        assert_eq!(
            d.uring.is_some(),
            h == Some(H::AsyncIo) && d.name.starts_with("io_uring_"),
            "{}: uring",
            d.name
        );
        assert_eq!(d.xattr_op().is_some(), h == Some(H::Xattr), "{}", d.name);
        assert!(!d.ends_process || h == Some(H::Exit), "{}", d.name);
        assert_eq!(
            d.durability.is_some(),
            d.io_class == ra_syscalls::IoClass::Sync && h != Some(H::Msync),
            "{}: durability",
            d.name
        );
        if d.nofollow {
            assert!(d.args.iter().any(|a| a.kind == ra_syscalls::ArgKind::Path), "{}", d.name);
        }
        if d.implied_flags.is_some() {
            assert!(d.arg("flags").is_none(), "{}: implied flags and a flags argument", d.name);
        }
    }
    let op = |n: &str| ra_syscalls::lookup(n).and_then(|d| d.xattr_op());
    assert_eq!(op("lsetxattr"), Some(XattrOp::Set));
    assert_eq!(op("fgetxattr"), Some(XattrOp::Get));
    assert_eq!(op("llistxattr"), Some(XattrOp::List));
    assert_eq!(op("removexattr"), Some(XattrOp::Remove));
    // The l- calls never follow; no other xattr call is nofollow.
    for d in REGISTRY.iter().filter(|d| d.xattr_op().is_some()) {
        assert_eq!(
            d.nofollow,
            d.name.starts_with('l') && !d.name.starts_with("list"),
            "{}",
            d.name
        );
    }
    let exits: Vec<_> = REGISTRY.iter().filter(|d| d.replay.handler() == Some(H::Exit)).collect();
    assert_eq!(exits.iter().filter(|d| d.ends_process).count(), 1);
    assert_eq!(exits.len(), 2);
}
