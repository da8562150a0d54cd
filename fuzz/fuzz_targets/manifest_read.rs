//! Fuzzes `ra_fsstate::ManifestReader`: any bytes give entries or an error naming a line,
//! never a panic; whatever reads back whole must write out and read back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ra_fsstate::Manifest;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Manifest::read_from(data) {
        let out = m.write_to(Vec::new()).expect("a manifest that reads writes");
        assert_eq!(Manifest::read_from(&out[..]).expect("and reads back"), m);
    }
});
