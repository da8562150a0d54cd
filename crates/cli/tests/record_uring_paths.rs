//! io_uring's path requests (OPENAT, OPENAT2, STATX, RENAMEAT, UNLINKAT, MKDIRAT, SYMLINKAT,
//! LINKAT, the GETXATTR/SETXATTR family) recorded by both recorders, with an SQPOLL ring
//! under eBPF: the testkit's `uring_paths` program, each record's paths, names, `open_how` and
//! xattr values checked against what the program passed; `dump` showing the calls they stand
//! for, with the file a request's OPENAT opened named on the later requests of its
//! descriptor; `stats --by file` and `export` counting them under their files; and replayed
//! through a ring and as system calls, verified (every request matched, the final tree the
//! recorded one). A trace whose paths were made to point out of the replay's root stays
//! inside it; a record whose path was not read is said in one warning and not issued.
//!
//! Needs root and io_uring (eBPF: a BPF-capable kernel); skips with a printed reason
//! otherwise, and fails instead under REANIMATOR_REQUIRE_PRIVILEGED=1 (CI).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use ra_trace::{ArgValue, Event, TraceReader};
use serde_json::Value;

use common::bin;

fn int(e: &Event, n: &str) -> Option<i64> {
    e.arg(n).and_then(ArgValue::as_int)
}

fn bytes(e: &Event, n: &str) -> Vec<u8> {
    match e.arg(n) {
        Some(ArgValue::Data(d)) => d.to_vec(),
        other => panic!("#{} {n}: {other:?}", e.unique_id),
    }
}

fn cstr(s: &str) -> Vec<u8> {
    [s.as_bytes(), b"\0"].concat()
}

fn events(trace: &Path) -> Vec<Event> {
    let r = TraceReader::open(trace).unwrap();
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    r.events(None).map(|e| e.unwrap()).collect()
}

fn record(backend: &str, trace: &Path, work: &Path, sqpoll: bool) -> Value {
    let prog = ra_testkit::program("uring_paths");
    let mut c = bin();
    c.args(["record", "-q", "--backend", backend, "-o"])
        .arg(trace)
        .arg("--snapshot")
        .arg(work)
        .arg("--")
        .arg(&prog)
        .arg(work)
        .current_dir(work);
    if sqpoll {
        c.arg("sqpoll");
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The records of the program's requests, by user_data, checked against its results.
fn requests(ev: &[Event], j: &Value) -> BTreeMap<i64, Event> {
    let ops: BTreeMap<i64, Event> = ev
        .iter()
        .filter(|e| e.name == "io_uring_op")
        .map(|e| (int(e, "user_data").unwrap(), e.clone()))
        .collect();
    assert_eq!(ops.len(), 17, "one record per request");
    for o in j["ops"].as_array().unwrap() {
        let ud = o["user_data"].as_i64().unwrap();
        let e = &ops[&ud];
        let got = if e.failed() { -i64::from(e.errno.unwrap()) } else { e.ret.unwrap() };
        assert_eq!(got, o["res"].as_i64().unwrap(), "request {ud}'s result");
        assert_eq!(int(e, "uring_flags").unwrap() & 64, 0, "request {ud}: a string not read");
    }
    ops
}

fn paths_recorded(backend: &str, sqpoll: bool) {
    if !ra_testkit::uring_backend_available(backend) {
        return;
    }
    let tag = format!("uring-paths-{backend}{}", if sqpoll { "-sqpoll" } else { "" });
    let dir = ra_testkit::scratch_dir(&tag).canonicalize().unwrap();
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    let trace = dir.join("t.ds");
    let j = record(backend, &trace, &work, sqpoll);
    let ev = events(&trace);
    let ops = requests(&ev, &j);
    let w = work.display().to_string();
    let g = format!("{w}/sub/g.txt");
    let (dfd, ring) = (j["dir_fd"].as_i64().unwrap(), j["ring_fd"].as_i64().unwrap());
    let op = |ud: i64| &ops[&ud];
    let path = |ud: i64| bytes(op(ud), "path");
    // Each request's strings as the program passed them.
    assert_eq!(path(1), cstr("sub"));
    assert_eq!((int(op(1), "fd"), int(op(1), "len")), (Some(dfd), Some(0o755)));
    assert_eq!(path(2), cstr("sub/f.txt"));
    let flags = int(op(2), "op_flags").unwrap();
    assert_eq!(flags & i64::from(libc::O_CREAT | libc::O_WRONLY), i64::from(libc::O_CREAT | 1));
    assert_eq!(path(5), cstr("sub/f.txt"));
    assert_eq!((path(6), bytes(op(6), "path2")), (cstr("sub/f.txt"), cstr(&g)));
    assert_eq!((path(7), bytes(op(7), "path2")), (cstr("sub/g.txt"), cstr("sub/h.txt")));
    assert_eq!((path(8), bytes(op(8), "path2")), (cstr("g.txt"), cstr("sub/s")));
    assert_eq!(path(9), cstr("sub/s"));
    let how = bytes(op(9), "how");
    assert_eq!(how.len(), 24, "open_how");
    assert_eq!(u64::from_le_bytes(how[16..24].try_into().unwrap()), 8, "RESOLVE_BENEATH");
    assert_eq!((path(12), bytes(op(12), "name")), (cstr(&g), cstr("user.uring")));
    assert_eq!(bytes(op(12), "buf_in"), b"v1", "setxattr's value");
    assert_eq!(bytes(op(13), "buf_out"), b"v1", "getxattr's value");
    assert_eq!(bytes(op(14), "name"), cstr("user.other"));
    assert_eq!(bytes(op(14), "buf_in"), b"v22");
    assert_eq!(bytes(op(15), "buf_out"), b"v22");
    assert_eq!(path(16), cstr("sub/h.txt"));
    assert_eq!((path(17), op(17).errno), (cstr("missing"), Some(libc::ENOENT)));
    // The write's and read's data as the files hold it.
    let text = b"hello io_uring paths\n";
    assert_eq!(bytes(op(3), "buf_in"), text);
    assert_eq!(bytes(op(10), "buf_out"), text);
    assert_eq!(std::fs::read(&g).unwrap(), text);

    // dump: the calls they stand for; the descriptor OPENAT returned names its file.
    let text = common::dump(&trace, &[]);
    let r = if sqpoll { "?".to_string() } else { ring.to_string() };
    let f = op(2).ret.unwrap();
    for want in [
        format!("[uring {r}] mkdirat({dfd}<{w}>, \"sub\", 0755) = 0"),
        format!(
            "[uring {r}] openat({dfd}<{w}>, \"sub/f.txt\", O_WRONLY|O_CREAT|O_CLOEXEC, 0640) \
             = {f}<{w}/sub/f.txt>"
        ),
        format!("[uring {r}] write({f}<{w}/sub/f.txt>, \"hello io_uring paths\\n\", 21, 0) = 21"),
        format!("[uring {r}] close({f}<{w}/sub/f.txt>) = 0"),
        format!("[uring {r}] renameat2({dfd}<{w}>, \"sub/f.txt\", AT_FDCWD, \"{g}\", 0) = 0"),
        format!("[uring {r}] linkat({dfd}<{w}>, \"sub/g.txt\", {dfd}<{w}>, \"sub/h.txt\", 0) = 0"),
        format!("[uring {r}] symlinkat(\"g.txt\", {dfd}<{w}>, \"sub/s\") = 0"),
        format!("[uring {r}] setxattr(\"{g}\", \"user.uring\", \"v1\", 2, 0) = 0"),
        format!("[uring {r}] unlinkat({dfd}<{w}>, \"missing\", 0) = -1 ENOENT"),
    ] {
        assert!(text.contains(&want), "dump lacks {want:?}:\n{text}");
    }
    let g2 = op(9).ret.unwrap();
    let want = format!("[uring {r}] read({g2}<{w}/sub/s>, \"hello io_uring paths\\n\", 64, 0)");
    assert!(text.contains(&want), "dump lacks {want:?}:\n{text}");
    // JSON lines: the read's fd_path, the open's ret_fd_path.
    let lines: Vec<Value> = common::dump(&trace, &["--format", "jsonl", "--type", "io_uring_op"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let line = |ud: i64| {
        lines.iter().find(|l| l["args"]["user_data"] == ud).unwrap_or_else(|| panic!("{ud}"))
    };
    assert_eq!(line(2)["ret_fd_path"], format!("{w}/sub/f.txt"), "{}", line(2));
    assert_eq!(line(3)["fd_path"], format!("{w}/sub/f.txt"), "{}", line(3));

    // stats --by file: each request under its file, the write's bytes under the file opened.
    let o = bin().args(["stats", "--by", "file", "--json"]).arg(&trace).output().unwrap();
    let s: Value = serde_json::from_slice(&common::ok(o, "stats").into_bytes()).unwrap();
    let row = |p: &str| {
        s["groups"].as_array().unwrap().iter().find(|r| r["group"] == p).cloned().unwrap_or_else(
            || panic!("stats has no {p} row: {}", serde_json::to_string_pretty(&s).unwrap()),
        )
    };
    // f.txt: openat, write, close, statx, renameat (its old name).
    let ft = row(&format!("{w}/sub/f.txt"));
    assert_eq!((&ft["calls"], &ft["written_bytes"]), (&5.into(), &21.into()), "{ft}");
    let s_row = row(&format!("{w}/sub/s"));
    assert_eq!((&s_row["read_bytes"], &s_row["calls"]), (&21.into(), &3.into()), "{s_row}");

    // export: the calls table has each request's path and its descriptor's file.
    let out = dir.join("csv");
    let o = bin().args(["export", "--format", "csv", "-o"]).arg(&out).arg(&trace).output();
    common::ok(o.unwrap(), "export");
    let mut csv = String::new();
    for host in std::fs::read_dir(&out).unwrap() {
        let part = host.unwrap().path().join("trace=t");
        for f in std::fs::read_dir(part).unwrap() {
            let f = f.unwrap().path();
            if f.file_name().unwrap().to_str().unwrap().starts_with("calls-") {
                csv.push_str(&std::fs::read_to_string(f).unwrap());
            }
        }
    }
    let rows: Vec<&str> = csv.lines().filter(|l| l.contains(",io_uring_op,")).collect();
    assert_eq!(rows.len(), 17, "{csv}");
    let has = |needle: &str| rows.iter().filter(|l| l.contains(needle)).count();
    assert!(has(&format!(",{w}/sub/f.txt,")) >= 3, "open, write, close rows: {rows:#?}");
    assert!(has(",sub/g.txt,") >= 1 && has(",sub/h.txt,") >= 1, "linkat, unlinkat: {rows:#?}");

    // Replayed through a ring and as system calls: verified, the final tree the recorded one.
    for mode in ["ring", "as-syscalls"] {
        let root = dir.join(format!("root-{mode}"));
        std::fs::create_dir(&root).unwrap();
        let (r, o) = common::replay_json(&trace, &root, &["--uring", mode]);
        let show = || serde_json::to_string_pretty(&r).unwrap();
        assert_eq!(r["mismatch_total"], 0, "--uring {mode}: {}", show());
        assert_eq!(r["final_state"][0]["differences"], 0, "--uring {mode}: {}", show());
        let m = &r["per_call"]["io_uring_op"];
        assert_eq!((&m["matched"], &m["simulated"]), (&17.into(), &0.into()), "{mode}: {m}");
        assert_eq!(o.status.code(), Some(0), "--uring {mode}: {}", show());
        let replayed = root.join(work.strip_prefix("/").unwrap());
        assert_eq!(std::fs::read(replayed.join("sub/g.txt")).unwrap(), b"hello io_uring paths\n");
        assert_eq!(std::fs::read_link(replayed.join("sub/s")).unwrap(), Path::new("g.txt"));
    }
    if backend == "ptrace" && !sqpoll {
        hostile_paths_stay_in_the_root(&dir, &trace);
        strings_not_read(&dir, &trace);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Events of `trace` rewritten by `f` into `out` (ids and trace info kept; no snapshots).
fn rewrite(trace: &Path, out: &Path, mut f: impl FnMut(&mut Event)) {
    let info: Vec<(String, Vec<u8>)> = TraceReader::open(trace).unwrap().info().to_vec();
    let info: Vec<(&str, &[u8])> = info
        .iter()
        .filter(|(k, _)| !k.starts_with("snapshot"))
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    let mut w =
        ra_trace::TraceWriter::create(out, &info, ra_trace::WriterConfig::default()).unwrap();
    for mut e in events(trace) {
        f(&mut e);
        w.append_preserving(&e).unwrap();
    }
    w.finish().unwrap();
}

/// A trace whose requests name paths out of the root (`..` past it, an absolute path, a
/// symlink made to point at `/`) is replayed beneath the root: nothing outside it is made.
fn hostile_paths_stay_in_the_root(dir: &Path, trace: &Path) {
    let outside = dir.join("outside");
    let esc = format!("../../../../../../../../..{}", outside.display());
    let hostile = dir.join("hostile.ds");
    rewrite(trace, &hostile, |e| {
        if e.name != "io_uring_op" {
            return;
        }
        let set = |e: &mut Event, n: &str, p: &str| {
            e.set_arg(n, ArgValue::data(cstr(p)));
        };
        match int(e, "user_data") {
            // mkdirat(D, "../../…/DIR/outside"), then openat(D, "…/outside/f.txt", O_CREAT).
            Some(1) => set(e, "path", &esc),
            Some(2) => set(e, "path", &format!("{esc}/f.txt")),
            // renameat to an absolute path out of the root; a symlink to "/" followed.
            Some(6) => set(e, "path2", &format!("{}/moved", outside.display())),
            Some(8) => set(e, "path", "/"),
            _ => {}
        }
    });
    for mode in ["ring", "as-syscalls"] {
        let root = dir.join(format!("root-hostile-{mode}"));
        std::fs::create_dir(&root).unwrap();
        let (r, _) = common::replay_json(&hostile, &root, &["--uring", mode]);
        assert!(!outside.exists(), "--uring {mode}: the replay made {}: {r}", outside.display());
        // The paths resolved beneath the root: the directory made there.
        let inside = root.join(outside.strip_prefix("/").unwrap());
        assert!(inside.join("f.txt").is_file(), "--uring {mode}: {r}");
    }
}

/// A record whose path the recorder could not read (`uring_flags` 64, its `path` absent) is
/// not issued: one warning says why, and the request's recorded result stands.
fn strings_not_read(dir: &Path, trace: &Path) {
    let cut = dir.join("cut.ds");
    rewrite(trace, &cut, |e| {
        if e.name == "io_uring_op" && int(e, "user_data") == Some(16) {
            e.set_arg("path", ArgValue::Absent);
            e.set_arg("uring_flags", ArgValue::Int(64));
        }
    });
    let root = dir.join("root-cut");
    std::fs::create_dir(&root).unwrap();
    let (r, _) = common::replay_json(&cut, &root, &[]);
    assert_eq!(r["per_call"]["io_uring_op"]["simulated"], 1, "{r}");
    let notes = r.to_string();
    assert!(notes.contains("could not read the path or name its SQE points to"), "{notes}");

    // A path longer than any recorder keeps: one line, a non-zero exit.
    let long = dir.join("long.ds");
    rewrite(trace, &long, |e| {
        if e.name == "io_uring_op" && int(e, "user_data") == Some(2) {
            e.set_arg("path", ArgValue::data(vec![b'a'; 5000]));
        }
    });
    let root = dir.join("root-long");
    std::fs::create_dir(&root).unwrap();
    let o = bin().arg("replay").arg(&long).arg("--root").arg(&root).arg("-q").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(1) | Some(2)), "{o:?}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("(io_uring_op): `path` holds 5000 bytes"), "{err}");
}

#[test]
fn path_requests_recorded_dumped_and_replayed_ptrace() {
    paths_recorded("ptrace", false);
}

#[test]
fn path_requests_recorded_dumped_and_replayed_ebpf() {
    paths_recorded("ebpf", false);
}

#[test]
fn sqpoll_path_requests_recorded_dumped_and_replayed_ebpf() {
    paths_recorded("ebpf", true);
}
