//! Fuzzes `reanimator verify`'s path: `dataseries::seal::verify_file` on any bytes (and a
//! reader given the key, `DsReader::open_with`, which runs the same check), and the
//! `StreamVerifier` (the collector's) fed the same bytes cut at every extent boundary it can
//! find. Errors and verdicts are fine; panics, hangs and unbounded allocations are the
//! findings. The MAC key is fixed ([7; 32] master key, derived like `Key::derive(Seal)`), and
//! the seed corpus (fuzz/corpus/seal_verify) holds traces sealed with it, so that mutations
//! reach the seal checks.
#![no_main]

use dataseries::seal::{verify_file, StreamVerifier};
use libfuzzer_sys::fuzz_target;
use ra_trace::key::{Key, Purpose};

fuzz_target!(|data: &[u8]| {
    let master = Key::from_bytes([7; 32]);
    let key = master.derive(Purpose::Seal);
    let path = std::env::temp_dir().join(format!("fuzz-seal-{}.ds", std::process::id()));
    if std::fs::write(&path, data).is_ok() {
        let _ = verify_file(&path, &master.seal_key());
        // A reader given the key: the same check, then the verified extents read.
        if let Ok(r) = dataseries::DsReader::open_with(&path, Some(&master.seal_key())) {
            let _ = r.incomplete();
            for e in r.extents() {
                if e.is_err() {
                    break;
                }
            }
        }
    }
    // The stream verifier on the extents as laid out (40-byte header first).
    let mut v = StreamVerifier::new(key);
    let mut at = 40usize;
    while at + 32 <= data.len() {
        let Ok(h) = dataseries::raw::parse_extent_header(&data[at..], false) else { break };
        let Some(end) = usize::try_from(h.packed_len).ok().and_then(|l| l.checked_add(at)) else {
            break;
        };
        let Some(ext) = data.get(at..end) else { break };
        if v.extent(at as u64, ext).is_err() {
            return;
        }
        at = end;
    }
    let _ = v.finish();
});
