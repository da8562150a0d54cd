//! Fuzzes reading an encrypted trace (`dataseries::crypt` behind `DsReader`) with its key: any
//! bytes give a reader or one error, and reading every extent gives extents or errors, never
//! a panic, a hang or an allocation beyond what the chunk heads (each at most 1 MiB) allow.
//! The key is fixed ([7; 32] master key); the seed corpus (fuzz/corpus/decrypt_read) holds
//! traces encrypted with it, so that mutations reach the chunk table, authentication and the
//! DataSeries reader behind it.
#![no_main]

use dataseries::DsReader;
use libfuzzer_sys::fuzz_target;
use ra_trace::key::Key;

fuzz_target!(|data: &[u8]| {
    Key::from_bytes([7; 32]).allow_reading();
    let path = std::env::temp_dir().join(format!("fuzz-decrypt-{}.ds", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let Ok(r) = DsReader::open(&path) else { return };
    let _ = r.encryption();
    let _ = r.index();
    for h in r.headers() {
        if h.is_err() {
            break;
        }
    }
    for e in r.extents() {
        if e.is_err() {
            break;
        }
    }
});
