//! io_uring requests as the system calls they stand for: an `io_uring_op` event of a path
//! opcode (`OPENAT`, `OPENAT2`, `STATX`, `RENAMEAT`, `UNLINKAT`, `MKDIRAT`, `SYMLINKAT`,
//! `LINKAT`, the `GETXATTR`/`SETXATTR` family) or a `CLOSE` becomes the event of its call
//! (`openat`, `openat2`, `statx`, `renameat2`, ...), with the request's result, times and
//! thread. What follows descriptors and names (the file-I/O tracker, dump, stats, export, the
//! replay's model of the processes and its issue of the call beneath the root) reads a request
//! through it, so that a file opened by a request is the file later requests and calls on its
//! descriptor name.

use crate::{ArgValue, Event};

/// The system call `ev` (an `io_uring_op` event) stands for, when it is one of the requests
/// above and names no registered file (`IOSQE_FIXED_FILE`, or a `file_index` to install the
/// file at); None otherwise. Its arguments come from the record's SQE fields and strings
/// (`path`, `path2`, `name`, `how`); an argument the record lacks (`uring_flags` 64: not read)
/// stays absent.
pub fn as_call(ev: &Event) -> Option<Event> {
    let op = ev.uring_op()?;
    if ev.uring_fixed_file() {
        return None;
    }
    let int = |n: &str| ev.arg(n).and_then(ArgValue::as_int);
    let fd = int("fd").unwrap_or(-1);
    let len = int("len").unwrap_or(0);
    // `len` carries a second descriptor for renameat and linkat (`AT_FDCWD` as a u32).
    let dirfd2 = i64::from(len as u32 as i32);
    let op_flags = int("op_flags").unwrap_or(0) & 0xffff_ffff;
    let (name, args): (&str, Vec<(&str, Value)>) = match op.name {
        "openat" | "openat2" if int("file_index").unwrap_or(0) != 0 => return None,
        "openat" => (
            "openat",
            vec![
                ("dirfd", Value::I(fd)),
                ("pathname", Value::A("path")),
                ("flags", Value::I(op_flags)),
                ("mode", Value::I(len)),
            ],
        ),
        "openat2" => (
            "openat2",
            vec![
                ("dirfd", Value::I(fd)),
                ("pathname", Value::A("path")),
                ("how", Value::A("how")),
                ("size", Value::I(len)),
            ],
        ),
        "statx" => (
            "statx",
            vec![
                ("dirfd", Value::I(fd)),
                ("pathname", Value::A("path")),
                ("flags", Value::I(op_flags)),
                ("mask", Value::I(len)),
            ],
        ),
        "renameat" => (
            "renameat2",
            vec![
                ("olddirfd", Value::I(fd)),
                ("oldpath", Value::A("path")),
                ("newdirfd", Value::I(dirfd2)),
                ("newpath", Value::A("path2")),
                ("flags", Value::I(op_flags)),
            ],
        ),
        "unlinkat" => (
            "unlinkat",
            vec![
                ("dirfd", Value::I(fd)),
                ("pathname", Value::A("path")),
                ("flags", Value::I(op_flags)),
            ],
        ),
        "mkdirat" => (
            "mkdirat",
            vec![("dirfd", Value::I(fd)), ("pathname", Value::A("path")), ("mode", Value::I(len))],
        ),
        "symlinkat" => (
            "symlinkat",
            vec![
                ("target", Value::A("path")),
                ("newdirfd", Value::I(fd)),
                ("linkpath", Value::A("path2")),
            ],
        ),
        "linkat" => (
            "linkat",
            vec![
                ("olddirfd", Value::I(fd)),
                ("oldpath", Value::A("path")),
                ("newdirfd", Value::I(dirfd2)),
                ("newpath", Value::A("path2")),
                ("flags", Value::I(op_flags)),
            ],
        ),
        "getxattr" => (
            "getxattr",
            vec![
                ("path", Value::A("path")),
                ("name", Value::A("name")),
                ("value", Value::A("buf_out")),
                ("size", Value::I(len)),
            ],
        ),
        "fgetxattr" => (
            "fgetxattr",
            vec![
                ("fd", Value::I(fd)),
                ("name", Value::A("name")),
                ("value", Value::A("buf_out")),
                ("size", Value::I(len)),
            ],
        ),
        "setxattr" => (
            "setxattr",
            vec![
                ("path", Value::A("path")),
                ("name", Value::A("name")),
                ("value", Value::A("buf_in")),
                ("size", Value::I(len)),
                ("flags", Value::I(op_flags)),
            ],
        ),
        "fsetxattr" => (
            "fsetxattr",
            vec![
                ("fd", Value::I(fd)),
                ("name", Value::A("name")),
                ("value", Value::A("buf_in")),
                ("size", Value::I(len)),
                ("flags", Value::I(op_flags)),
            ],
        ),
        "close" if int("file_index").unwrap_or(0) == 0 => ("close", vec![("fd", Value::I(fd))]),
        _ => return None,
    };
    let def = ra_syscalls::lookup(name).expect("a registry call");
    let mut out = Event::new(def);
    out.unique_id = ev.unique_id;
    out.time_called = ev.time_called;
    out.time_returned = ev.time_returned;
    out.time_recorded = ev.time_recorded;
    out.pid = ev.pid;
    out.tid = ev.tid;
    out.ppid = ev.ppid;
    out.uid = ev.uid;
    out.gid = ev.gid;
    out.sid = ev.sid;
    out.pgid = ev.pgid;
    out.ret = ev.ret;
    out.errno = ev.errno;
    out.buffer_not_captured = ev.buffer_not_captured;
    for (n, v) in args {
        let v = match v {
            Value::I(i) => ArgValue::Int(i),
            Value::A(from) => ev.arg(from).cloned().unwrap_or(ArgValue::Absent),
        };
        out.set_arg(n, v);
    }
    Some(out)
}

enum Value {
    I(i64),
    /// The record's argument of this name.
    A(&'static str),
}

/// The event `ev` stands for in analyses that follow descriptors and names: [`as_call`]'s for
/// the requests it translates, else `ev` itself.
pub fn effective(ev: &Event) -> std::borrow::Cow<'_, Event> {
    match as_call(ev) {
        Some(c) => std::borrow::Cow::Owned(c),
        None => std::borrow::Cow::Borrowed(ev),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(opcode: i64, fd: i64, len: i64, op_flags: i64, path: &[u8], path2: &[u8]) -> Event {
        let def = ra_syscalls::lookup("io_uring_op").unwrap();
        let mut ev = Event::new(def);
        for (n, v) in [
            ("opcode", opcode),
            ("fd", fd),
            ("len", len),
            ("op_flags", op_flags),
            ("sqe_flags", 0),
            ("file_index", 0),
        ] {
            ev.set_arg(n, ArgValue::Int(v));
        }
        ev.set_arg("path", ArgValue::data(path.to_vec()));
        ev.set_arg("path2", ArgValue::data(path2.to_vec()));
        ev.pid = Some(7);
        ev.ret = Some(5);
        ev.errno = Some(0);
        ev
    }

    /// OPENAT is openat(dirfd, path, open_flags, len as mode); RENAMEAT's second directory is
    /// its `len` (AT_FDCWD as a u32); a request on a registered file is no system call.
    #[test]
    fn requests_become_their_calls() {
        let o = as_call(&req(18, -100, 0o644, 0o101, b"a\0", b"")).unwrap();
        assert_eq!(o.name, "openat");
        assert_eq!(o.arg("dirfd").and_then(ArgValue::as_int), Some(-100));
        assert_eq!(o.arg("pathname").and_then(ArgValue::as_data), Some(&b"a\0"[..]));
        assert_eq!(o.arg("flags").and_then(ArgValue::as_int), Some(0o101));
        assert_eq!(o.arg("mode").and_then(ArgValue::as_int), Some(0o644));
        assert_eq!((o.pid, o.ret), (Some(7), Some(5)));
        assert!(o.makes_fd());
        let r = as_call(&req(35, 3, -100i32 as u32 as i64, 1, b"a\0", b"b\0")).unwrap();
        assert_eq!(r.name, "renameat2");
        assert_eq!(r.arg("newdirfd").and_then(ArgValue::as_int), Some(-100));
        assert_eq!(r.arg("newpath").and_then(ArgValue::as_data), Some(&b"b\0"[..]));
        let mut fixed = req(18, 0, 0, 0, b"a\0", b"");
        fixed.set_arg("sqe_flags", ArgValue::Int(1));
        assert!(as_call(&fixed).is_none());
        assert!(as_call(&req(23, 3, 4, 0, b"", b"")).is_none(), "a write stays a request");
    }
}
