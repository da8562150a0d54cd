//! Fuzzes `dataseries::raw::decode_extent_bytes` (one on-disk extent → decoded records).
//!
//! Input: one flag byte, then the extent bytes. Flag bit 0 selects big-endian decoding; bit 1
//! turns the adler32/bjhash verification off so that mutated inputs reach the decompressors,
//! null compaction, the pack transforms and the variable32 checks.
#![no_main]

use std::sync::{Arc, OnceLock};

use dataseries::raw::{self, Checks};
use dataseries::{ExtentBuilder, ExtentType, FieldDesc, FieldType};
use libfuzzer_sys::fuzz_target;

/// A small fixed type library covering every field type and pack option.
fn library() -> &'static [Arc<ExtentType>] {
    static LIB: OnceLock<Vec<Arc<ExtentType>>> = OnceLock::new();
    LIB.get_or_init(|| {
        let t = |b: dataseries::ExtentTypeBuilder| {
            Arc::new(b.build().expect("fuzz type library builds"))
        };
        vec![
            raw::xmltype_type(),
            raw::index_type(),
            t(ExtentType::builder("A")
                .field(FieldDesc::new("b", FieldType::Bool))
                .field(FieldDesc::new("nb", FieldType::Bool).nullable(true))
                .field(FieldDesc::new("y", FieldType::Byte))
                .field(FieldDesc::new("i", FieldType::Int32).pack_relative("i"))
                .field(FieldDesc::new("j", FieldType::Int32).nullable(true).pack_relative("i"))
                .field(FieldDesc::new("l", FieldType::Int64).pack_relative("l"))
                .field(FieldDesc::new("d", FieldType::Double).pack_scale(1e-6).pack_relative("d"))
                .field(FieldDesc::new("e", FieldType::Double).nullable(true).pack_scale(0.5))
                .field(FieldDesc::new("s", FieldType::Variable32).pack_unique(true))
                .field(FieldDesc::new("ns", FieldType::Variable32).nullable(true))
                .field(FieldDesc::new("f", FieldType::FixedWidth(3)))),
            t(ExtentType::builder("C")
                .attr("pack_null_compact", "non_bool")
                .field(FieldDesc::new("a", FieldType::Int32).nullable(true))
                .field(FieldDesc::new("b", FieldType::Byte).nullable(true))
                .field(
                    FieldDesc::new("d", FieldType::Double)
                        .nullable(true)
                        .pack_scale(0.5)
                        .pack_relative("d"),
                )
                .field(FieldDesc::new("s", FieldType::Variable32).nullable(true))
                .field(FieldDesc::new("t", FieldType::Bool).nullable(true))),
            t(ExtentType::builder("B")
                .attr("pack_field_ordering", "big_to_small_sep_var32")
                .attr("pack_pad_record", "max_column_size")
                .field(FieldDesc::new("s", FieldType::Variable32))
                .field(FieldDesc::new("x", FieldType::Bool))
                .field(FieldDesc::new("n", FieldType::Int64).nullable(true))),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&flag, bytes)) = data.split_first() else { return };
    let big_endian = flag & 1 != 0;
    let checks =
        if flag & 2 != 0 { Checks { adler32: false, bjhash: false } } else { Checks::default() };
    let lib = library();
    let lookup = |n: &str| lib.iter().find(|t| t.name() == n).cloned();
    let _ = raw::parse_extent_header(bytes, big_endian);
    if let Ok(e) = raw::decode_extent_bytes_with(bytes, big_endian, &lookup, checks) {
        for r in 0..e.len() {
            for f in 0..e.extent_type().fields().len() {
                let _ = e.value(r, f);
            }
        }
        // Whatever decodes must re-encode.
        let b = ExtentBuilder::from_extent(&e);
        raw::encode_extent(&b, &[], 1).expect("a decoded extent re-encodes");
    }
});
