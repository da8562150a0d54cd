//! Real traces written by the original Re-Animator (RA-strace): `ls`, `cat` and a
//! multi-threaded test program. They live in ../shared/testdata (never copied into this repo:
//! they hold a stranger's environment), so these tests skip with a printed reason when that
//! folder is absent, unless REANIMATOR_REQUIRE_TESTDATA=1.

use std::collections::BTreeSet;
use std::path::PathBuf;

use ra_trace::{ArgValue, Event, ExtraValue, TraceKind, TraceReader};

fn fixture(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/testdata/dataseries/reanimator-replayer")
        .join(name);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("REANIMATOR_REQUIRE_TESTDATA").as_deref() == Ok("1") {
        panic!("fixture {} missing and REANIMATOR_REQUIRE_TESTDATA=1", p.display());
    }
    eprintln!("skip: {} not found (../shared/testdata is absent)", p.display());
    None
}

/// Records an event spans on disk.
fn records_of(e: &Event) -> u64 {
    let mut n = 1;
    for a in &e.args {
        match a {
            ArgValue::Iov(v) => n += v.len() as u64,
            ArgValue::Strings(s) => n += s.len() as u64,
            _ => {}
        }
    }
    if e.args.iter().any(|a| matches!(a, ArgValue::Strings(_))) {
        n += 1; // the closing continuation record
    }
    n
}

struct Loaded {
    events: Vec<Event>,
    records_in_file: u64,
}

fn load(name: &str) -> Option<Loaded> {
    let p = fixture(name)?;
    let r = TraceReader::open(&p).expect("open");
    assert_eq!(r.kind(), TraceKind::ReAnimator);
    assert!(r.is_complete());
    let records_in_file = r
        .dataseries()
        .headers()
        .map(|h| h.unwrap())
        .filter(|h| h.type_name.starts_with(ra_trace::schema::PREFIX))
        .map(|h| u64::from(h.nrecords))
        .sum();
    let events: Vec<Event> = r.events(None).map(|e| e.expect("decodes")).collect();
    Some(Loaded { events, records_in_file })
}

fn check_common(l: &Loaded) {
    let ids: Vec<u64> = l.events.iter().map(|e| e.unique_id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "unique_id order");
    assert_eq!(
        l.events.iter().map(records_of).sum::<u64>(),
        l.records_in_file,
        "every record consumed once"
    );
    // The synthetic umask record comes first, with seconds converted to ns.
    let first = &l.events[0];
    assert_eq!((first.name.as_str(), first.unique_id), ("umask", 0));
    assert!(first.extra.iter().any(|(k, v)| k == "synthetic" && *v == ExtraValue::Bool(true)));
    assert!(first.time_called.unwrap() > 1_600_000_000_000_000_000);
    assert_eq!(first.ret, None, "garbage return value dropped");
    // Every other event is a registry call with a thread id and ns times in 2021.
    for e in &l.events[1..] {
        assert!(e.def.is_some(), "unknown call {}", e.name);
        assert!(e.tid.is_some(), "{} has a tid", e.name);
        let t = e.time_called.unwrap();
        assert!(
            (1_609_459_200_000_000_000..1_640_995_200_000_000_000).contains(&t),
            "{} at {t}",
            e.name
        );
    }
}

fn execve_of(l: &Loaded) -> &Event {
    l.events.iter().find(|e| e.name == "execve").expect("an execve")
}

fn argv(e: &Event) -> Vec<String> {
    match e.arg("argv") {
        Some(ArgValue::Strings(s)) => {
            s.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect()
        }
        other => panic!("argv is {other:?}"),
    }
}

#[test]
fn ls_trace_reads_in_order_with_its_directory_listing() {
    let Some(l) = load("output-ee34491.ds") else { return };
    check_common(&l);
    let ex = execve_of(&l);
    assert_eq!(argv(ex).first().map(String::as_str), Some("/bin/ls"));
    assert!(matches!(ex.arg("envp"), Some(ArgValue::Strings(s)) if !s.is_empty()));
    assert_eq!(ex.ret, Some(0));
    // ls opens the directory and lists it with getdents64.
    let names: Vec<&str> = l.events.iter().map(|e| e.name.as_str()).collect();
    for call in ["openat", "getdents", "write", "close", "exit", "mmap", "fstat"] {
        assert!(names.contains(&call), "{call} in the ls trace");
    }
    let gd = l.events.iter().find(|e| e.name == "getdents" && e.ret.unwrap_or(0) > 0).unwrap();
    let buf = gd.args.iter().find_map(|a| a.as_data()).expect("dirent buffer captured");
    assert_eq!(buf.len() as i64, gd.ret.unwrap());
    let entries = ra_trace::structs::parse_dirents(buf);
    assert!(entries.iter().any(|d| d.name == b".") && entries.iter().any(|d| d.name == b".."));
    // The writes are ls's output: their data is the listing.
    let w = l.events.iter().find(|e| e.name == "write").unwrap();
    assert_eq!(w.arg("fd"), Some(&ArgValue::Int(1)));
    assert_eq!(w.arg("buf").and_then(ArgValue::as_data).map(|d| d.len() as i64), w.ret);
}

#[test]
fn cat_trace_holds_the_large_buffers() {
    let Some(l) = load("output_lsR.ds") else { return };
    check_common(&l);
    assert_eq!(argv(execve_of(&l)).first().map(String::as_str), Some("/bin/cat"));
    let biggest = l
        .events
        .iter()
        .filter_map(|e| e.args.iter().filter_map(ArgValue::as_data).map(<[u8]>::len).max())
        .max()
        .unwrap();
    assert_eq!(biggest, 52_464, "the largest captured buffer");
}

#[test]
fn multithreaded_traces_keep_their_threads_apart() {
    for name in ["mt.ds", "output-4ba1c4b.ds"] {
        let Some(l) = load(name) else { return };
        check_common(&l);
        let tids: BTreeSet<i32> = l.events.iter().filter_map(|e| e.tid).collect();
        assert_eq!(tids.len(), 4, "{name}: four threads");
        assert!(argv(execve_of(&l))[0].ends_with("multi_thread"), "{name}");
    }
}
