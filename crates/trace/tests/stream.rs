//! [`StreamReader`]: a trace read from a byte stream gives the events [`TraceReader`] gives
//! the file, in the same order, holding no more than its bound; watermarks are what make the
//! bound hold (without them the same stream is refused at the bound, in one error).

use ra_syscalls::lookup;
use ra_trace::{ArgValue, Event, StreamEnd, StreamOptions, StreamReader, TraceReader, TraceWriter};
use ra_trace::{Error, WriterConfig};

fn ev(name: &str, i: u64) -> Event {
    let mut e = Event::new(lookup(name).unwrap());
    e.time_called = Some(1_700_000_000_000_000_000 + i as i64 * 1000);
    e.time_returned = e.time_called.map(|t| t + 500);
    e.pid = Some(7);
    e.tid = Some(7);
    e.ret = Some(1024);
    e.errno = Some(0);
    assert!(e.set_arg("fd", ArgValue::Int(3 + (i % 5) as i64)));
    assert!(e.set_arg("buf", ArgValue::data(vec![(i % 251) as u8; 1024])));
    assert!(e.set_arg("count", ArgValue::Int(1024)));
    e
}

/// 40 MB of reads and writes, in extents of 256 KiB, the writer holding at most 1 MiB.
fn trace() -> Vec<u8> {
    let cfg = WriterConfig {
        extent_target_bytes: 256 << 10,
        buffer_budget_bytes: 1 << 20,
        ds: dataseries::WriterOptions::uncompressed(),
        ..WriterConfig::default()
    };
    let mut w = TraceWriter::new(Vec::new(), &[("cwd", b"/w")], cfg).unwrap();
    for i in 0..40_000u64 {
        // Mostly writes, a read now and then: the reads' extents fill slowly, so a reader
        // must hold the writes that come after the oldest read still buffered.
        let name = if i % 97 == 0 { "read" } else { "write" };
        w.append(&ev(name, i)).unwrap();
    }
    w.finish().unwrap()
}

fn stream(bytes: Vec<u8>, hold: usize) -> StreamReader {
    let opts = StreamOptions { hold_bytes: hold, ..StreamOptions::default() };
    StreamReader::new(Box::new(std::io::Cursor::new(bytes)), "test", opts).unwrap()
}

#[test]
fn a_stream_gives_the_files_events_within_its_bound() {
    let bytes = trace();
    let dir = std::env::temp_dir().join(format!("ra-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.ds");
    std::fs::write(&path, &bytes).unwrap();
    let tr = TraceReader::open(&path).unwrap();
    let from_file: Vec<Event> = tr.events(None).map(Result::unwrap).collect();
    assert_eq!(from_file.len(), 40_000);
    // 8 MiB held at most for a 40 MB stream.
    let mut s = stream(bytes.clone(), 8 << 20);
    let from_stream: Vec<Event> = s.by_ref().map(Result::unwrap).collect();
    assert_eq!(s.end(), StreamEnd::Complete);
    assert_eq!(from_stream.len(), from_file.len());
    for (a, b) in from_stream.iter().zip(&from_file) {
        assert_eq!(a.unique_id, b.unique_id);
        assert_eq!(a.name, b.name);
        assert_eq!(a.args, b.args);
    }
    assert_eq!(s.info_value("cwd"), Some(&b"/w"[..]));
    // Cut in the middle of an extent: what came whole, then the end says so.
    let cut = bytes[..bytes.len() / 2 + 1000].to_vec();
    let mut s = stream(cut, 8 << 20);
    let n = s.by_ref().map(Result::unwrap).count();
    assert!(n > 10_000 && n < 30_000, "{n}");
    assert!(matches!(s.end(), StreamEnd::Cut { partial } if partial > 0), "{:?}", s.end());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same stream with its watermark extents taken out (as an older writer wrote it) is
/// refused when it holds more than the bound, with the error that says why.
#[test]
fn without_watermarks_the_bound_refuses_the_stream() {
    use dataseries::stream::{Framer, PartKind, Piece};
    let bytes = trace();
    let mut out = Vec::new();
    let mut part = Vec::new();
    let mut framer = Framer::new();
    let mut dropped = 0;
    framer
        .feed(&bytes, |p| {
            match p {
                Piece::Data { bytes, .. } => part.extend_from_slice(bytes),
                Piece::End { part: pt } => {
                    if pt.kind == PartKind::Extent && pt.type_name == "Reanimator::Watermark" {
                        dropped += 1;
                    } else if pt.kind != PartKind::Trailer {
                        out.extend_from_slice(&part);
                    }
                    part.clear();
                }
            }
            Ok::<(), ()>(())
        })
        .unwrap();
    assert!(dropped > 10, "{dropped} watermarks");
    let mut s = stream(out, 8 << 20);
    let err = s.find_map(Result::err).expect("refused");
    assert!(matches!(err, Error::StreamHold { .. }), "{err}");
    assert!(err.to_string().contains("no watermarks"), "{err}");
}
