//! Parses arbitrary (lossily decoded) input as a filter. Whatever parses must evaluate without
//! panicking, and its printed form must parse back to a filter that agrees on a fixed record.

#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use ra_filter::{FieldValue, Filter, Record};

/// One record with a value of every kind (and a missing field for every other name).
struct Fixed;

impl Record for Fixed {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        Some(match field {
            "op" => FieldValue::Bytes(Cow::Borrowed(b"open")),
            "path" => FieldValue::Bytes(Cow::Borrowed(b"/var/log/app.log")),
            "name" => FieldValue::Bytes(Cow::Borrowed(b"foo\0\xff")),
            "empty" => FieldValue::Bytes(Cow::Borrowed(b"")),
            "uid" => FieldValue::UInt(0),
            "big" => FieldValue::UInt(u64::MAX),
            "fd" => FieldValue::Int(3),
            "ret" => FieldValue::Int(-1),
            "ratio" => FieldValue::Float(0.5),
            "nan" => FieldValue::Float(f64::NAN),
            "cached" => FieldValue::Bool(true),
            "parent" => FieldValue::Null,
            _ => return None,
        })
    }
}

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    match Filter::parse(&src) {
        Ok(f) => {
            let hit = f.matches(&Fixed);
            let _ = f.fields();
            let printed = f.to_string();
            let again = Filter::parse(&printed)
                .unwrap_or_else(|e| panic!("{src:?} printed as {printed:?}, which fails: {e}"));
            assert_eq!(again.to_string(), printed, "printing is not a fixed point");
            assert_eq!(again.matches(&Fixed), hit, "{src:?} and {printed:?} disagree");
        }
        Err(e) => {
            assert!(e.column >= 1 && e.offset <= src.len());
            let _ = e.render(&src);
            let _ = e.to_string();
        }
    }
});
