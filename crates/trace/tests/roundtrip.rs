//! Events written with TraceWriter come back from TraceReader unchanged, in unique_id order,
//! for every call in the registry; unfinished files stay readable.

use std::io::Write;
use std::sync::{Arc, Mutex};

use ra_syscalls::{ArgKind, Ret, Struct, REGISTRY};
use ra_trace::{ArgValue, Event, IovValue, TraceReader, TraceWriter, WriterConfig};

/// A plausible value for an argument of this kind, derived from `seed` so that calls differ.
fn sample_arg(kind: ArgKind, seed: u64) -> ArgValue {
    let bytes =
        |n: usize| -> Vec<u8> { (0..n).map(|i| (seed as usize * 31 + i * 7) as u8).collect() };
    if kind.is_vector() {
        // iovecs, a message's iovecs, a list of messages: all stored as vectors.
        return ArgValue::Iov(vec![
            IovValue { requested: 5, data: Some(b"hello".to_vec().into()) },
            IovValue { requested: 4096, data: Some(bytes(100).into()) },
            IovValue { requested: 7, data: None },
        ]);
    }
    match kind {
        ArgKind::Int | ArgKind::Addr => ArgValue::Int(0x1000 + seed as i64),
        ArgKind::Fd => ArgValue::Int(3 + (seed % 50) as i64),
        ArgKind::DirFd => ArgValue::Int(if seed % 2 == 0 { -100 } else { 4 }),
        ArgKind::Flags(_) => ArgValue::Int((seed % 4) as i64),
        ArgKind::Mode => ArgValue::Int(0o644),
        ArgKind::Path => {
            let mut p = format!("/tmp/dir{seed}/file").into_bytes();
            p.push(0);
            ArgValue::data(p)
        }
        ArgKind::InBuf(_) | ArgKind::OutBuf(_) => ArgValue::data(bytes(1 + (seed % 300) as usize)),
        ArgKind::InStruct(s, _) | ArgKind::OutStruct(s, _) | ArgKind::InOutStruct(s, _) => {
            // Structs Re-Animator keeps as integer columns must be valid ones to round-trip.
            let words = |v: &[i64]| v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
            let sec = 1_700_000_000 + seed as i64;
            ArgValue::data(match s {
                Struct::FdPair => [3i32, 4 + seed as i32]
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .collect::<Vec<u8>>(),
                Struct::Rlimit => words(&[seed as i64, -1]),
                Struct::Utimbuf => words(&[sec, sec - 5]),
                Struct::Timeval2 => words(&[sec, 123, sec - 5, 999_999]),
                Struct::Timespec2 => words(&[sec, 5, 0, ra_trace::structs::UTIME_NOW]),
                _ => bytes(144),
            })
        }
        ArgKind::IovIn { .. } | ArgKind::IovOut { .. } => ArgValue::Iov(vec![
            IovValue { requested: 5, data: Some(b"hello".to_vec().into()) },
            IovValue { requested: 4096, data: Some(bytes(100).into()) },
            IovValue { requested: 7, data: None },
        ]),
        ArgKind::StrArray => ArgValue::Strings(vec![b"prog".to_vec(), bytes(9), Vec::new()]),
    }
}

fn sample_event(def: &'static ra_syscalls::SyscallDef, seed: u64) -> Event {
    let mut e = Event::new(def);
    e.time_called = Some(1_700_000_000_000_000_000 + seed as i64 * 1000);
    e.time_returned = Some(1_700_000_000_000_000_000 + seed as i64 * 1000 + 500);
    e.pid = Some(100);
    e.tid = Some(100 + (seed % 3) as i32);
    e.ppid = Some(1);
    e.uid = Some(1000);
    e.gid = Some(1000);
    e.ret = Some(if def.ret == Ret::NoReturn { 0 } else { 7 });
    e.errno = Some(0);
    for (i, a) in def.args.iter().enumerate() {
        e.args[i] = sample_arg(a.kind, seed + i as u64);
    }
    e
}

/// Shared in-memory output so a test can look at the bytes while the writer is still open.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);
impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn read_all(path: &std::path::Path) -> Vec<Event> {
    let r = TraceReader::open(path).expect("open");
    r.events(None).map(|e| e.expect("event")).collect()
}

/// What the reader gives back: everything we wrote; ids assigned in order.
fn assert_same(written: &[Event], read: &[Event]) {
    assert_eq!(written.len(), read.len(), "event count");
    for (w, r) in written.iter().zip(read) {
        assert_eq!(w.name, r.name);
        assert_eq!(w.unique_id, r.unique_id, "{}", w.name);
        assert_eq!(w.time_called, r.time_called, "{}", w.name);
        assert_eq!(w.time_returned, r.time_returned);
        assert_eq!((w.pid, w.tid, w.ppid, w.uid, w.gid), (r.pid, r.tid, r.ppid, r.uid, r.gid));
        assert_eq!(w.ret, r.ret, "{}", w.name);
        assert_eq!(w.errno, r.errno);
        let def = w.def.unwrap();
        for (i, a) in def.args.iter().enumerate() {
            // Integers are stored in the schema's column type (Re-Animator uses int32 for
            // several 64-bit arguments); the samples fit in every column type.
            assert_eq!(w.args[i], r.args[i], "{}: argument {} ({})", w.name, a.name, a.field);
        }
    }
}

#[test]
fn every_registry_call_round_trips() {
    let dir = tempdir();
    let path = dir.join("all.ds");
    let mut w =
        TraceWriter::create(&path, &[("command", b"test")], WriterConfig::default()).unwrap();
    let mut written = Vec::new();
    for (seed, def) in REGISTRY.iter().enumerate() {
        let mut e = sample_event(def, seed as u64);
        e.unique_id = w.append(&e).unwrap();
        written.push(e);
    }
    w.finish().unwrap();
    let read = read_all(&path);
    assert_same(&written, &read);
    let r = TraceReader::open(&path).unwrap();
    // Buffers shared with their extent are the same bytes.
    let shared: Vec<Event> = r.events(None).sharing_buffers().map(|e| e.unwrap()).collect();
    assert_same(&written, &shared);
    assert!(r.is_complete());
    assert_eq!(r.info_value("command"), Some(&b"test"[..]));
    assert_eq!(r.info_value("schema_version"), Some(&b"6"[..]));
}

#[test]
fn interleaved_flushes_merge_back_into_id_order() {
    let dir = tempdir();
    let path = dir.join("many.ds");
    // Tiny extents: every call type gets many extents, interleaved in the file.
    let cfg =
        WriterConfig { extent_target_bytes: 2000, buffer_budget_bytes: 9000, ..Default::default() };
    let mut w = TraceWriter::create(&path, &[], cfg).unwrap();
    let defs: Vec<_> = REGISTRY
        .iter()
        .filter(|d| d.args.iter().all(|a| !matches!(a.kind, ArgKind::StrArray)))
        .collect();
    let mut written = Vec::new();
    let mut x: u64 = 12345;
    for i in 0..3000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let def = defs[(x >> 33) as usize % defs.len()];
        let mut e = sample_event(def, i);
        e.unique_id = w.append(&e).unwrap();
        written.push(e);
        if i % 700 == 0 {
            w.flush().unwrap();
        }
    }
    w.finish().unwrap();
    let n_extents = ra_trace::TraceReader::open(&path).unwrap().dataseries().headers().count();
    assert!(n_extents > 30, "expected many extents, got {n_extents}");
    let read = read_all(&path);
    let ids: Vec<u64> = read.iter().map(|e| e.unique_id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids strictly increase");
    assert_same(&written, &read);
}

#[test]
fn flushed_events_survive_a_writer_that_never_finishes() {
    let out = Shared::default();
    let mut w =
        TraceWriter::new(out.clone(), &[("command", b"killed")], WriterConfig::default()).unwrap();
    let def = ra_syscalls::lookup("write").expect("write in registry");
    let mut written = Vec::new();
    for i in 0..50 {
        let mut e = sample_event(def, i);
        e.unique_id = w.append(&e).unwrap();
        written.push(e);
    }
    w.flush().unwrap();
    // 10 more that are never flushed: lost with the writer, like after SIGKILL.
    for i in 0..10 {
        w.append(&sample_event(def, 100 + i)).unwrap();
    }
    let snapshot = out.0.lock().unwrap().clone();
    let dir = tempdir();
    let path = dir.join("unfinished.ds");
    std::fs::write(&path, &snapshot).unwrap();
    let r = TraceReader::open(&path).unwrap();
    assert!(!r.is_complete());
    assert_eq!(r.info_value("command"), Some(&b"killed"[..]));
    let read: Vec<Event> = r.events(None).map(|e| e.unwrap()).collect();
    assert_same(&written, &read);
    drop(w);
}

#[test]
fn preserving_ids_must_increase() {
    let out = Shared::default();
    let mut w = TraceWriter::new(out, &[], WriterConfig::default()).unwrap();
    let def = ra_syscalls::lookup("close").expect("close");
    let mut e = sample_event(def, 1);
    e.unique_id = 10;
    w.append_preserving(&e).unwrap();
    e.unique_id = 10;
    let err = w.append_preserving(&e).unwrap_err();
    assert!(err.to_string().contains("does not increase"), "{err}");
}

#[test]
fn wrong_argument_count_is_an_error_not_a_panic() {
    let out = Shared::default();
    let mut w = TraceWriter::new(out, &[], WriterConfig::default()).unwrap();
    let def = ra_syscalls::lookup("read").expect("read");
    let mut e = Event::new(def);
    e.args.pop();
    assert!(w.append(&e).is_err());
}

fn tempdir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "ra-trace-test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every form a vector argument takes survives a round trip, whatever follows it: an empty
/// list (a NULL or unreadable array, count 0), not captured (with the event's flag), and the
/// vectors of the next call stay its own. (A NULL-array writev vanished on read-back and the
/// previous writev gained a fake vector.)
#[test]
fn every_form_of_a_vector_argument_round_trips() {
    let dir = tempdir();
    let path = dir.join("vectors.ds");
    let mut w = TraceWriter::create(&path, &[], WriterConfig::default()).unwrap();
    let mut written = Vec::new();
    let mut forms = Vec::new();
    for def in REGISTRY.iter().filter(|d| d.args.iter().any(|a| a.kind.is_vector())) {
        let vi = def.args.iter().position(|a| a.kind.is_vector()).unwrap();
        for (k, form) in [
            ArgValue::Iov(Vec::new()),
            ArgValue::NotCaptured,
            ArgValue::Iov(vec![IovValue { requested: 3, data: Some(b"abc".to_vec().into()) }]),
            ArgValue::Iov(Vec::new()),
        ]
        .into_iter()
        .enumerate()
        {
            let mut e = sample_event(def, written.len() as u64);
            e.buffer_not_captured = form == ArgValue::NotCaptured;
            if k == 0 {
                // The call the kernel failed: EFAULT.
                e.ret = Some(-1);
                e.errno = Some(14);
            }
            e.args[vi] = form.clone();
            e.unique_id = w.append(&e).unwrap();
            written.push(e);
            forms.push(form);
        }
    }
    assert!(written.len() >= 4 * 8, "the registry's vector calls: {}", written.len());
    // An event that did not go through canonical_vectors: an absent array is still a record
    // (read back as the empty list).
    let def = ra_syscalls::lookup("writev").unwrap();
    let mut e = sample_event(def, 999);
    e.args[1] = ArgValue::Absent;
    e.unique_id = w.append(&e).unwrap();
    e.args[1] = ArgValue::Iov(Vec::new());
    written.push(e);
    w.finish().unwrap();
    let read = read_all(&path);
    assert_same(&written, &read);
    for (w, r) in written.iter().zip(&read) {
        assert_eq!(w.buffer_not_captured, r.buffer_not_captured, "{}", w.name);
    }
    let r = TraceReader::open(&path).unwrap();
    let shared: Vec<Event> = r.events(None).sharing_buffers().map(|e| e.unwrap()).collect();
    assert_same(&written, &shared);
}

/// `without_derived_columns` leaves out only what writing the event stores again: every call
/// of the registry, with flag words of many bits and a non-derived flag column set, read lean,
/// written again and read back in full, gives the same extra columns as the original.
#[test]
fn leaving_out_derived_columns_loses_nothing() {
    let dir = tempdir();
    let (a, b) = (dir.join("a.ds"), dir.join("b.ds"));
    let mut w = TraceWriter::create(&a, &[], WriterConfig::default()).unwrap();
    let mut x: u64 = 99;
    for seed in 0..3u64 {
        for def in REGISTRY.iter() {
            let mut e = sample_event(def, seed);
            for (i, arg) in def.args.iter().enumerate() {
                if matches!(arg.kind, ArgKind::Flags(_) | ArgKind::Mode) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    e.args[i] = ArgValue::Int((x >> 40) as i64);
                }
            }
            if def.name == "fcntl" && seed == 1 {
                // A column no argument fills, set by its recorder.
                e.extra
                    .push(("argument_status_flag_append".into(), ra_trace::ExtraValue::Bool(true)));
            }
            w.append(&e).unwrap();
        }
    }
    w.finish().unwrap();
    let full = read_all(&a);
    let r = TraceReader::open(&a).unwrap();
    let lean: Vec<Event> = r.events(None).without_derived_columns().map(|e| e.unwrap()).collect();
    let count = |v: &[Event]| v.iter().map(|e| e.extra.len()).sum::<usize>();
    assert!(
        count(&lean) * 2 < count(&full),
        "{} of {} extra columns kept",
        count(&lean),
        count(&full)
    );
    assert!(
        lean.iter().any(|e| e.extra.iter().any(|(k, _)| k == "argument_status_flag_append")),
        "a set column nothing derives is kept"
    );
    let mut w = TraceWriter::create(&b, &[], WriterConfig::default()).unwrap();
    for e in &lean {
        w.append(e).unwrap();
    }
    w.finish().unwrap();
    let again = read_all(&b);
    assert_same(&full, &again);
    for (f, g) in full.iter().zip(&again) {
        assert_eq!(f.extra, g.extra, "{}", f.name);
    }
}

/// Values Re-Animator's columns cannot hold come back whole (schema 3): a `timeval` with
/// 1,000,000 µs and a `timespec` with 10^9 ns (the kernel's `EINVAL`; the nanosecond columns
/// fold them into the seconds and the call read back as valid), while `access_time` and
/// `mod_time` hold what they always did.
#[test]
fn out_of_range_time_fractions_round_trip_beside_re_animator_s_columns() {
    let dir = tempdir();
    let path = dir.join("times.ds");
    let words = |v: &[i64]| v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let mut w = TraceWriter::create(&path, &[], WriterConfig::default()).unwrap();
    let mut written = Vec::new();
    for (name, times) in [
        ("utimes", words(&[1000, 1_000_000, 2000, -1])),
        ("utimensat", words(&[3, 1_000_000_000, 4, 0])),
    ] {
        let mut e = sample_event(ra_syscalls::lookup(name).unwrap(), 1);
        assert!(e.set_arg("times", ArgValue::data(times)));
        (e.ret, e.errno) = (Some(-1), Some(libc::EINVAL));
        e.unique_id = w.append(&e).unwrap();
        written.push(e);
    }
    w.finish().unwrap();
    assert_same(&written, &read_all(&path));
    // Re-Animator's columns, as before: the fractions folded into nanoseconds.
    let ds = dataseries::DsReader::open(&path).unwrap();
    let ext = ds.extents_of("IOTTAFSL::Trace::Syscall::utimes").next().unwrap().unwrap();
    let ty = ext.extent_type().clone();
    let col = |n: &str| ext.i64(0, ty.field_index(n).unwrap());
    assert_eq!(col("access_time"), Some(1001 * 1_000_000_000));
    assert_eq!(col("mod_time"), Some(2000 * 1_000_000_000 - 1000));
}
