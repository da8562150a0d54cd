use super::*;
use ra_trace::ArgValue::Int;

fn ev(name: &str, args: &[(&str, ArgValue)], ret: i64, t: i64, dur: i64) -> Event {
    let mut e = Event::new(ra_syscalls::lookup(name).expect(name));
    for (n, v) in args {
        assert!(e.set_arg(n, v.clone()), "{name} {n}");
    }
    e.ret = Some(ret);
    if ret < 0 {
        e.errno = Some(-ret as i32);
        e.ret = Some(-1);
    }
    e.pid = Some(10);
    e.tid = Some(10);
    e.time_called = Some(t);
    e.time_returned = Some(t + dur);
    e
}

fn path(p: &str) -> ArgValue {
    let mut v = p.as_bytes().to_vec();
    v.push(0);
    ArgValue::data(v)
}

fn openat(p: &str, fd: i64, t: i64) -> Event {
    ev(
        "openat",
        &[("dirfd", Int(-100)), ("pathname", path(p)), ("flags", Int(i64::from(libc_o_rdwr())))],
        fd,
        t,
        100,
    )
}

fn libc_o_rdwr() -> i32 {
    2
}

fn run(opts: Options, events: &[Event]) -> Summary {
    let mut a = Accumulator::new(opts);
    a.begin_trace(Some(b"/home/u"), Some(b"/usr/bin/tar xf a.tar"));
    for e in events {
        a.add(e, true);
    }
    a.finish()
}

fn row<'a>(s: &'a Summary, key: &str) -> &'a Group {
    s.groups
        .rows()
        .find(|(k, _)| *k == key.as_bytes())
        .map(|(_, g)| g)
        .unwrap_or_else(|| panic!("no row {key}"))
}

fn workload() -> Vec<Event> {
    vec![
        openat("d/f", 3, 1000),
        ev("read", &[("fd", Int(3)), ("count", Int(4096))], 4096, 2000, 1000),
        ev("read", &[("fd", Int(3)), ("count", Int(4096))], 100, 4000, 3000),
        ev("read", &[("fd", Int(3)), ("count", Int(4096))], 0, 8000, 10),
        ev("pwrite64", &[("fd", Int(3)), ("count", Int(10)), ("offset", Int(5))], 10, 9000, 50),
        ev("read", &[("fd", Int(0)), ("count", Int(1))], 1, 9500, 5),
        ev("openat", &[("dirfd", Int(-100)), ("pathname", path("/nope"))], -2, 9600, 20),
        ev("close", &[("fd", Int(3))], 0, 9700, 7),
        ev("close", &[("fd", Int(3))], -9, 9800, 3),
    ]
}

#[test]
fn calls_errors_time_and_bytes_per_call() {
    let s = run(Options::default(), &workload());
    let r = row(&s, "read");
    assert_eq!((r.calls, r.errors, r.total_ns), (4, 0, 4015));
    assert_eq!((r.read_bytes, r.reads, r.written_bytes), (4197, 4, 0));
    assert_eq!(r.read_sizes.0[13], 1, "one read of 4096");
    assert_eq!(r.read_sizes.0[0], 1, "one read at end of file");
    assert_eq!(r.latency.max(), Some(3000));
    assert_eq!(r.latency.min(), Some(5));
    let w = row(&s, "pwrite64");
    assert_eq!((w.written_bytes, w.writes, w.calls), (10, 1, 1));
    let o = row(&s, "openat");
    assert_eq!((o.calls, o.errors), (2, 1));
    let c = row(&s, "close");
    assert_eq!((c.calls, c.errors), (2, 1));
    assert_eq!(s.total.calls, 9);
    assert_eq!(s.total.errors, 2);
    assert_eq!(s.total.read_bytes, 4197);
    assert_eq!(s.first_ns, Some(1000));
    assert_eq!(s.last_ns, Some(9803));
    assert_eq!((s.processes, s.threads), (1, 1));
    let sorted = s.groups.sorted(SortKey::Time, None);
    assert_eq!(sorted.rows[0].0, b"read");
    assert!(sorted.rest.is_none());
    let top = s.groups.sorted(SortKey::Calls, Some(1));
    assert_eq!(top.rows.len(), 1);
    let (n, rest) = top.rest.expect("the other rows summed");
    assert_eq!((n, rest.calls), (3, 5));
    let names: Vec<&[u8]> = s.groups.sorted(SortKey::Name, None).rows.iter().map(|r| r.0).collect();
    assert_eq!(names, [&b"close"[..], b"openat", b"pwrite64", b"read"]);
    let seen: Vec<&[u8]> =
        s.groups.sorted(SortKey::Nothing, None).rows.iter().map(|r| r.0).collect();
    assert_eq!(seen, [&b"openat"[..], b"read", b"pwrite64", b"close"]);
}

#[test]
fn files_follow_descriptors_and_paths() {
    let s = run(Options { by: GroupBy::File, files: true, ..Options::default() }, &workload());
    let f = row(&s, "/home/u/d/f");
    // openat, 3 reads, pwrite64, the first close (the second one's descriptor was closed).
    assert_eq!(f.calls, 6, "{:?}", s.groups.rows().map(|r| r.0).collect::<Vec<_>>());
    assert_eq!((f.read_bytes, f.written_bytes), (4196, 10));
    assert_eq!(row(&s, "/nope").errors, 1);
    assert_eq!(row(&s, UNKNOWN_FD).calls, 2, "stdin and the closed descriptor");
    let files = s.files.as_ref().unwrap();
    let busiest = files.sorted(SortKey::Bytes, Some(1));
    assert_eq!(busiest.rows[0].0, b"/home/u/d/f");
    let d = run(Options { by: GroupBy::Dir { depth: Some(2) }, ..Options::default() }, &workload());
    assert_eq!(row(&d, "/home/u").calls, 6);
    assert_eq!(row(&d, "/").calls, 1);
    let mut out = Vec::new();
    dir_of(b"/a/b/c/f", None, &mut out);
    assert_eq!(out, b"/a/b/c");
}

#[test]
fn tables_fold_their_lightest_rows_into_other() {
    let events: Vec<Event> = (0..1000)
        .map(|i| {
            let mut e = ev("getpid", &[], 10, i, if i == 500 { 1_000_000 } else { 1 });
            e.pid = Some(i as i32);
            e
        })
        .collect();
    let s = run(Options { by: GroupBy::Pid, max_groups: 64, ..Options::default() }, &events);
    assert!(s.groups.len() <= 64, "{}", s.groups.len());
    assert!(s.groups.folded >= 1000 - 64);
    let shown: u64 = s.groups.rows().map(|r| r.1.calls).sum();
    assert_eq!(shown + s.groups.other.calls, 1000, "no call lost in folding");
    // The heaviest process survives every fold.
    assert_eq!(row(&s, "500").total_ns, 1_000_000);
    let sorted = s.groups.sorted(SortKey::Time, None);
    assert_eq!(sorted.rest.as_ref().map(|r| r.1.calls), Some(s.groups.other.calls));
}

#[test]
fn programs_come_from_execs_and_clones() {
    let mut exec = ev("execve", &[("pathname", path("/usr/bin/gzip"))], 0, 5, 1);
    exec.pid = Some(11);
    let mut child_call = ev("getpid", &[], 11, 6, 1);
    child_call.pid = Some(11);
    let mut later = ev("getpid", &[], 12, 7, 1);
    later.pid = Some(12);
    later.ppid = Some(11);
    let events = vec![
        ev("getpid", &[], 10, 1, 1),
        ev("clone", &[("flags", Int(0))], 11, 2, 1),
        exec,
        child_call,
        later,
    ];
    let s = run(Options { by: GroupBy::Comm, ..Options::default() }, &events);
    // pid 10: tar (the command) for getpid and clone; pid 11: tar for its execve (named
    // before it), gzip after; pid 12 (child of 11): gzip.
    assert_eq!(row(&s, "tar").calls, 3);
    assert_eq!(row(&s, "gzip").calls, 2);
}

#[test]
fn errnos_and_filtered_events() {
    let mut a = Accumulator::new(Options { by: GroupBy::Errno, ..Options::default() });
    let w = workload();
    for (i, e) in w.iter().enumerate() {
        a.add(e, i != 1);
    }
    let s = a.finish();
    assert_eq!(row(&s, "ENOENT").calls, 1);
    assert_eq!(row(&s, "EBADF").calls, 1);
    assert_eq!(row(&s, "success").calls, 6);
    assert_eq!((s.events, s.counted), (9, 8));
}

#[test]
fn classes_are_straces_and_overlap() {
    let s = run(Options { by: GroupBy::Class, ..Options::default() }, &workload());
    // openat is %file and %desc; read, pwrite64 and close are %desc.
    assert_eq!(row(&s, "%file").calls, 2);
    assert_eq!(row(&s, "%desc").calls, 9);
    assert_eq!(s.total.calls, 9, "each call once in the total");
}
