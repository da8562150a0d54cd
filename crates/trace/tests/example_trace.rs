//! `testdata/example.ds`, the small trace the README's first command shows, is generated here
//! from a scripted event list (what `cat /etc/hostname` does on x86_64). This test fails when
//! the committed file differs from what the writer produces now; `REANIMATOR_BLESS=1 cargo test
//! -p ra-trace --test example_trace` rewrites it.

use std::path::PathBuf;

use ra_syscalls::lookup;
use ra_trace::{ArgValue, Event, IovValue, TraceReader, TraceWriter, WriterConfig};

fn ev(name: &str, t: i64, ret: i64, args: &[(&str, ArgValue)]) -> Event {
    let def = lookup(name).unwrap_or_else(|| panic!("{name} in the registry"));
    let mut e = Event::new(def);
    e.time_called = Some(t);
    e.time_returned = Some(t + 4_000);
    e.pid = Some(4242);
    e.tid = Some(4242);
    e.ppid = Some(4200);
    e.uid = Some(1000);
    e.gid = Some(1000);
    e.ret = Some(ret);
    e.errno = Some(0);
    for (n, v) in args {
        assert!(e.set_arg(n, v.clone()), "{name} has an argument {n}");
    }
    e
}

fn path(p: &str) -> ArgValue {
    let mut v = p.as_bytes().to_vec();
    v.push(0);
    ArgValue::data(v)
}

/// A `struct stat` for a 15-byte regular file, mode 0644.
fn stat_regular(size: i64) -> ArgValue {
    let mut b = vec![0u8; 144];
    b[0..8].copy_from_slice(&2049u64.to_le_bytes());
    b[8..16].copy_from_slice(&1_312_359u64.to_le_bytes());
    b[16..24].copy_from_slice(&1u64.to_le_bytes());
    b[24..28].copy_from_slice(&0o100644u32.to_le_bytes());
    b[48..56].copy_from_slice(&size.to_le_bytes());
    b[56..64].copy_from_slice(&4096i64.to_le_bytes());
    b[64..72].copy_from_slice(&8i64.to_le_bytes());
    b[88..96].copy_from_slice(&1_763_800_000i64.to_le_bytes());
    ArgValue::data(b)
}

pub fn example_events() -> Vec<Event> {
    let t0: i64 = 1_763_800_000_000_000_000;
    let content = b"reanimator-vm\n\n".to_vec();
    let mut failed = ev(
        "openat",
        t0 + 120_000,
        -1,
        &[
            ("dirfd", ArgValue::Int(-100)),
            ("pathname", path("/etc/ld.so.preload")),
            ("flags", ArgValue::Int(0o2000000)),
            ("mode", ArgValue::Int(0)),
        ],
    );
    failed.errno = Some(2);
    let mut out = vec![
        ev(
            "execve",
            t0,
            0,
            &[
                ("pathname", path("/usr/bin/cat")),
                ("argv", ArgValue::Strings(vec![b"cat".to_vec(), b"/etc/hostname".to_vec()])),
                ("envp", ArgValue::Strings(vec![b"LANG=C.UTF-8".to_vec()])),
            ],
        ),
        failed,
        ev(
            "openat",
            t0 + 200_000,
            3,
            &[
                ("dirfd", ArgValue::Int(-100)),
                ("pathname", path("/etc/hostname")),
                ("flags", ArgValue::Int(0o2000000)),
                ("mode", ArgValue::Int(0)),
            ],
        ),
        ev("fstat", t0 + 210_000, 0, &[("fd", ArgValue::Int(3)), ("statbuf", stat_regular(15))]),
        ev(
            "read",
            t0 + 230_000,
            15,
            &[
                ("fd", ArgValue::Int(3)),
                ("buf", ArgValue::data(content.clone())),
                ("count", ArgValue::Int(131_072)),
            ],
        ),
        ev(
            "writev",
            t0 + 250_000,
            15,
            &[
                ("fd", ArgValue::Int(1)),
                (
                    "iov",
                    ArgValue::Iov(vec![
                        IovValue { requested: 14, data: Some(content[..14].to_vec().into()) },
                        IovValue { requested: 1, data: Some(content[14..].to_vec().into()) },
                    ]),
                ),
                ("iovcnt", ArgValue::Int(2)),
            ],
        ),
        ev(
            "read",
            t0 + 270_000,
            0,
            &[
                ("fd", ArgValue::Int(3)),
                ("buf", ArgValue::data(Vec::new())),
                ("count", ArgValue::Int(131_072)),
            ],
        ),
        ev("close", t0 + 280_000, 0, &[("fd", ArgValue::Int(3))]),
        ev("close", t0 + 290_000, 0, &[("fd", ArgValue::Int(1))]),
    ];
    let mut exit = ev("exit_group", t0 + 300_000, 0, &[("status", ArgValue::Int(0))]);
    exit.time_returned = None;
    exit.ret = None;
    out.push(exit);
    out
}

fn example_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/example.ds")
}

fn render() -> Vec<u8> {
    let info: &[(&str, &[u8])] = &[
        ("command", b"cat /etc/hostname"),
        ("origin", b"synthetic: scripted by crates/trace/tests/example_trace.rs"),
        ("arch", b"x86_64"),
    ];
    // Written by no process (its watermarks name none): the same bytes every time.
    let cfg =
        WriterConfig { ds: dataseries::WriterOptions::zlib(), writer_pid: 0, ..Default::default() };
    let mut w = TraceWriter::new(Vec::new(), info, cfg).unwrap();
    for e in example_events() {
        w.append(&e).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn example_trace_is_current() {
    let bytes = render();
    let path = example_path();
    if std::env::var("REANIMATOR_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &bytes).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == bytes,
        "{} is stale: run REANIMATOR_BLESS=1 cargo test -p ra-trace --test example_trace",
        path.display()
    );
    // And it reads back as the scripted events.
    let r = TraceReader::open(&path).unwrap();
    let got: Vec<Event> = r.events(None).map(Result::unwrap).collect();
    let want = example_events();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((g.name.as_str(), &g.args, g.ret), (w.name.as_str(), &w.args, w.ret));
    }
}
