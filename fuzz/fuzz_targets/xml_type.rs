//! Fuzzes `dataseries::ExtentType::from_xml` (extent type XML → record layout).
#![no_main]

use std::sync::Arc;

use dataseries::{raw, ExtentBuilder, ExtentType};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(xml) = std::str::from_utf8(data) else { return };
    let Ok(t) = ExtentType::from_xml(xml) else { return };
    // A type that parses has a usable layout: an all-default record encodes and decodes.
    let _ = t.record_size();
    let t = Arc::new(t);
    let mut b = ExtentBuilder::new(Arc::clone(&t));
    b.start_record();
    if let Ok(bytes) = raw::encode_extent(&b, &[], 1) {
        let lookup = |n: &str| (n == t.name()).then(|| Arc::clone(&t));
        raw::decode_extent_bytes(&bytes, false, &lookup).expect("an encoded extent decodes");
    }
});
