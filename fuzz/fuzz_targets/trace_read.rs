//! Fuzzes reading a whole trace file the way `info`, `dump` and `replay` read it.
//!
//! Input: one flag byte, then a DataSeries file. Before reading, the target makes the
//! mutated file's checksums valid again where it can (flag bit 0: every extent's adler32 and
//! bjhash; bit 1: the trailer's complement and hash), so that mutations of the index, the
//! trailer's offsets and the records themselves reach the code behind the checksum checks
//! instead of stopping there. Then: open, every header, the index and its verification, every
//! extent and value, the trace reader (info, loss records, every event formatted as dump
//! does, anonymize's pseudonym table, the snapshots and their entries) and replay's file-system model stepped over every
//! event. Errors are fine; panics, hangs and unbounded allocations are the findings.
#![no_main]

use std::sync::Arc;

use dataseries::{raw, DsReader, ExtentType, StreamOptions, Value};
use libfuzzer_sys::fuzz_target;
use ra_trace::format::{format_event, FormatOptions};
use ra_trace::{Phase, TraceReader};

/// The type library of the file's XmlType extent (resealed first if asked).
fn library(file: &mut [u8], be: bool, reseal: bool) -> Vec<Arc<ExtentType>> {
    let builtin =
        |n: &str| [raw::xmltype_type(), raw::index_type()].into_iter().find(|t| t.name() == n);
    let Ok(h) = raw::parse_extent_header(&file[40..], be) else { return Vec::new() };
    let Some(end) = usize::try_from(h.packed_len).ok().and_then(|l| l.checked_add(40)) else {
        return Vec::new();
    };
    let Some(ext) = file.get_mut(40..end) else { return Vec::new() };
    if reseal {
        let _ = raw::reseal_extent(ext, be, &builtin);
    }
    let mut lib = vec![raw::xmltype_type(), raw::index_type()];
    if let Ok(e) = raw::decode_extent_bytes(ext, be, &builtin) {
        for i in 0..e.len() {
            if let Value::Bytes(x) = e.value(i, 0) {
                if let Some(t) =
                    std::str::from_utf8(x).ok().and_then(|x| ExtentType::from_xml(x).ok())
                {
                    lib.push(Arc::new(t));
                }
            }
        }
    }
    lib
}

/// Re-seals the checksums the flags ask for.
fn reseal(file: &mut Vec<u8>, flags: u8) {
    if file.len() < 40 {
        return;
    }
    let Ok(be) = raw::check_file_header(&file[..40]) else { return };
    if flags & 1 != 0 {
        let lib = library(file, be, true);
        let lookup = |n: &str| lib.iter().find(|t| t.name() == n).cloned();
        let mut pos = 40usize;
        while let Ok(h) =
            file.get(pos..).map_or(Err(()), |b| raw::parse_extent_header(b, be).map_err(|_| ()))
        {
            let Some(end) = usize::try_from(h.packed_len).ok().and_then(|l| l.checked_add(pos))
            else {
                break;
            };
            let Some(ext) = file.get_mut(pos..end) else { break };
            if pos > 40 {
                let _ = raw::reseal_extent(ext, be, &lookup);
            }
            pos = end;
        }
    }
    if flags & 2 != 0 && file.len() >= 68 {
        let at = file.len() - 28;
        let mut t: [u8; 28] = file[at..].try_into().expect("28 bytes");
        raw::reseal_trailer(&mut t, be);
        file[at..].copy_from_slice(&t);
    }
}

fn read_all(path: &std::path::Path) {
    let Ok(ds) = DsReader::open(path) else { return };
    for h in ds.headers() {
        if h.is_err() {
            break;
        }
    }
    let _ = ds.index();
    let _ = ds.verify_index();
    for threads in [0, 2] {
        let opts = StreamOptions { threads, readahead: 2, type_filter: None };
        for e in ds.extents_with(&opts) {
            let Ok(e) = e else { break };
            for r in 0..e.len() {
                for f in 0..e.extent_type().fields().len() {
                    let _ = e.value(r, f);
                }
            }
        }
    }
    let Ok(trace) = TraceReader::from_ds(ds) else { return };
    let _ = (trace.info(), trace.lost(), trace.cut_tail(), trace.is_complete());
    // anonymize --reverse's table (decrypted with a fixed key: fails, but after parsing).
    let _ = ra_anonymize::table::open(&trace, &ra_trace::key::Key::from_bytes([7; 32]));
    let opts = FormatOptions::default();
    let mut shadow = ra_replay::shadow::Shadow::new(ra_replay::init::initial_cwd(&trace));
    for ev in trace.events(None) {
        let Ok(ev) = ev else { break };
        let _ = format_event(&ev, &opts);
        let pl = shadow.step(&ev);
        let _ = shadow.paths(pl.proc, &ev);
    }
    for s in trace.snapshots() {
        for phase in [Phase::Start, Phase::End] {
            let Ok(entries) = trace.snapshot_entries(s.index, phase) else { continue };
            for e in entries {
                if e.is_err() {
                    break;
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, file)) = data.split_first() else { return };
    let mut file = file.to_vec();
    reseal(&mut file, flags);
    // DsReader reads a file by positioned reads: give it one in memory-backed /dev/shm.
    let path = std::env::temp_dir().join(format!("reanimator-fuzz-{}.ds", std::process::id()));
    if std::fs::write(&path, &file).is_ok() {
        read_all(&path);
    }
});
