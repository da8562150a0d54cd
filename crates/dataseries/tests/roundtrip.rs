//! Our writer → our reader (and the independent Python prototype) round trips.

mod common;

use std::sync::Arc;

use dataseries::raw::{self, EncodeOptions};
use dataseries::{
    Compression, DsReader, DsWriter, Error, ExtentBuilder, ExtentType, FieldDesc, FieldType,
    TrailerStatus, Value, WriterOptions,
};

/// A type using every field type, nullable fields and every pack option.
fn kitchen_sink() -> Arc<ExtentType> {
    Arc::new(
        ExtentType::builder("Test::KitchenSink")
            .namespace("example.org")
            .version("1.0")
            .field(FieldDesc::new("flag", FieldType::Bool))
            .field(FieldDesc::new("nflag", FieldType::Bool).nullable(true))
            .field(FieldDesc::new("b", FieldType::Byte))
            .field(FieldDesc::new("i", FieldType::Int32).pack_relative("i"))
            .field(FieldDesc::new("j", FieldType::Int32).nullable(true).pack_relative("i"))
            .field(
                FieldDesc::new("t", FieldType::Int64)
                    .pack_relative("t")
                    .units("nanoseconds", "unix"),
            )
            .field(FieldDesc::new("u", FieldType::Int64).pack_relative("t"))
            .field(FieldDesc::new("d", FieldType::Double))
            .field(FieldDesc::new("ds", FieldType::Double).pack_scale(0.25).pack_relative("ds"))
            .field(FieldDesc::new("dn", FieldType::Double).nullable(true).pack_scale(1e-6))
            .field(FieldDesc::new("base", FieldType::Double).doublebase(100000.0))
            .field(FieldDesc::new("s", FieldType::Variable32).pack_unique(true))
            .field(FieldDesc::new("sn", FieldType::Variable32).nullable(true).pack_unique(true))
            .field(FieldDesc::new("raw", FieldType::Variable32).attr("comment", "not unique"))
            .field(FieldDesc::new("fw", FieldType::FixedWidth(3)))
            .build()
            .unwrap(),
    )
}

/// Deterministic pseudo-random record `k`.
fn fill(b: &mut ExtentBuilder, k: u64) {
    let x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
    b.start_record();
    let s = format!("str{}", k % 7).into_bytes();
    let fw = [(x >> 3) as u8, (x >> 5) as u8, 7];
    let vals: Vec<Value<'_>> = vec![
        Value::Bool(x & 1 == 1),
        if x & 2 == 0 { Value::Null } else { Value::Bool(x & 4 == 4) },
        Value::Byte((x >> 8) as u8),
        Value::Int32((x >> 16) as i32),
        if x & 8 == 0 { Value::Null } else { Value::Int32((x >> 20) as i32) },
        Value::Int64(1_600_000_000_000_000_000 + (k as i64) * 1000 + (x & 0xff) as i64),
        Value::Int64(x as i64),
        Value::Double(f64::from_bits(x) * 0.0 + (x as f64) / 3.0),
        Value::Double(((x >> 40) as i64 - 8_000_000) as f64 * 0.25),
        if x & 16 == 0 { Value::Null } else { Value::Double(((x >> 44) as f64) * 1e-6) },
        Value::Double((x >> 11) as f64 / 7.0),
        Value::Bytes(&s),
        if x & 32 == 0 { Value::Null } else { Value::Bytes(&s) },
        Value::Bytes(if x & 64 == 0 { b"" } else { b"raw bytes \x00\xff" }),
        Value::Bytes(&fw),
    ];
    for (i, v) in vals.into_iter().enumerate() {
        b.set(i, v).unwrap();
    }
}

fn same(a: Value<'_>, b: Value<'_>, ty: &ExtentType, f: usize) -> bool {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => {
            if ty.fields()[f].pack_scale.is_some() {
                // pack_scale quantises; the generator produces exactly representable values.
                x == y
            } else {
                x.to_bits() == y.to_bits()
            }
        }
        _ => a == b,
    }
}

fn assert_extent_eq(e: &dataseries::Extent, b: &ExtentBuilder) {
    assert_eq!(e.len(), b.len());
    let ty = e.extent_type();
    for r in 0..e.len() {
        for f in 0..ty.fields().len() {
            assert!(
                same(e.value(r, f), b.value(r, f), ty, f),
                "record {r} field {}: {:?} != {:?}",
                ty.fields()[f].name,
                e.value(r, f),
                b.value(r, f)
            );
            let int = match e.value(r, f) {
                Value::Bool(v) => Some(i64::from(v)),
                Value::Byte(v) => Some(i64::from(v)),
                Value::Int32(v) => Some(i64::from(v)),
                Value::Int64(v) => Some(v),
                _ => None,
            };
            assert_eq!(e.int(r, f), int, "record {r} field {}", ty.fields()[f].name);
        }
    }
}

fn write_file(path: &std::path::Path, opts: WriterOptions, sizes: &[u64]) -> Vec<ExtentBuilder> {
    let ty = kitchen_sink();
    let mut w = DsWriter::create(path, std::slice::from_ref(&ty), opts).unwrap();
    let mut all = Vec::new();
    let mut k = 0;
    for &n in sizes {
        let mut b = ExtentBuilder::new(Arc::clone(&ty));
        for _ in 0..n {
            fill(&mut b, k);
            k += 1;
        }
        all.push(b.clone());
        w.write_extent(b).unwrap();
    }
    w.finish().unwrap();
    all
}

#[test]
fn every_codec_round_trips_through_the_writer() {
    let dir = common::scratch("codecs");
    let sizes = [1u64, 500, 3000, 17];
    for modes in [
        vec![],
        vec![Compression::None],
        vec![Compression::Zlib],
        vec![Compression::Bz2],
        vec![Compression::Lzf],
        vec![Compression::Snappy],
        vec![Compression::Lz4],
        vec![Compression::Lz4hc],
        vec![
            Compression::Zlib,
            Compression::Bz2,
            Compression::Lzf,
            Compression::Snappy,
            Compression::Lz4,
        ],
    ] {
        for threads in [0, 2] {
            let path = dir.join(format!("{modes:?}-{threads}.ds"));
            let opts = WriterOptions {
                compression: modes.clone(),
                level: 6,
                threads,
                queue_depth: 1,
                ..WriterOptions::zlib()
            };
            let built = write_file(&path, opts, &sizes);
            let r = DsReader::open(&path).unwrap();
            assert!(matches!(r.trailer_status(), TrailerStatus::Valid { .. }));
            let got: Vec<_> = r.extents().map(|e| e.unwrap()).collect();
            assert_eq!(got.len(), built.len());
            for (e, b) in got.iter().zip(&built) {
                assert_extent_eq(e, b);
            }
            // Modes used are among those asked for.
            for h in r.headers() {
                let h = h.unwrap();
                for m in [h.fixed_mode, h.variable_mode] {
                    let m = Compression::from_mode(m).unwrap();
                    assert!(m == Compression::None || modes.contains(&m), "{m} not in {modes:?}");
                }
            }
            let idx = r.index().unwrap().unwrap();
            assert_eq!(idx.len(), sizes.len() + 2);
            assert_eq!(std::fs::metadata(&path).unwrap().len(), r.file_len());
        }
    }
}

#[test]
fn writer_flush_and_ordering_with_threads() {
    let dir = common::scratch("flush");
    let path = dir.join("f.ds");
    let ty = kitchen_sink();
    let mut w = DsWriter::create(
        &path,
        std::slice::from_ref(&ty),
        WriterOptions { threads: 2, queue_depth: 1, ..WriterOptions::zlib() },
    )
    .unwrap();
    let mut k = 0;
    for n in 0..40u64 {
        let mut b = ExtentBuilder::new(Arc::clone(&ty));
        for _ in 0..(n * 37 % 200) {
            fill(&mut b, k);
            k += 1;
        }
        w.write_extent(b).unwrap();
        if n % 10 == 9 {
            w.flush().unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().len(), w.bytes_written());
        }
    }
    // An empty builder writes nothing; an undeclared type is refused.
    let before = w.bytes_written();
    w.write_extent(ExtentBuilder::new(Arc::clone(&ty))).unwrap();
    w.flush().unwrap();
    assert_eq!(w.bytes_written(), before);
    let other = Arc::new(
        ExtentType::builder("Other").field(FieldDesc::new("x", FieldType::Int32)).build().unwrap(),
    );
    let mut ob = ExtentBuilder::new(other);
    ob.start_record();
    assert!(matches!(w.write_extent(ob), Err(Error::TypeNotDeclared { .. })));
    w.finish().unwrap();
    let r = DsReader::open(&path).unwrap();
    let mut k2 = 0;
    for e in r.extents() {
        let e = e.unwrap();
        let mut b = ExtentBuilder::new(Arc::clone(&ty));
        for _ in 0..e.len() {
            fill(&mut b, k2);
            k2 += 1;
        }
        assert_extent_eq(&e, &b);
    }
    assert_eq!(k, k2, "records arrive in submission order");
}

#[test]
fn unfinished_file_reads_up_to_the_last_complete_extent() {
    let dir = common::scratch("unfinished");
    let path = dir.join("u.ds");
    let ty = kitchen_sink();
    let mut w = DsWriter::create(&path, std::slice::from_ref(&ty), WriterOptions::zlib()).unwrap();
    for n in 0..3 {
        let mut b = ExtentBuilder::new(Arc::clone(&ty));
        for k in 0..100 {
            fill(&mut b, n * 100 + k);
        }
        w.write_extent(b).unwrap();
    }
    w.flush().unwrap();
    drop(w); // "killed": no index, no trailer
    let r = DsReader::open(&path).unwrap();
    assert_eq!(r.trailer_status(), TrailerStatus::Missing);
    assert!(r.index().unwrap().is_none());
    let n: usize = r.extents().map(|e| e.unwrap().len()).sum();
    assert_eq!(n, 300);
    assert_eq!(r.headers().count(), 3);
}

/// The independent Python prototype verifies files written by us (header, every checksum,
/// chained trailer checksum, full decode).
#[test]
fn python_prototype_verifies_our_files() {
    let Some(root) = common::testdata() else { return };
    let script = root.join("../../research/dataseries_proto.py");
    if !script.is_file() {
        println!("skip: {} not found", script.display());
        return;
    }
    if std::process::Command::new("python3").arg("--version").output().is_err() {
        println!("skip: python3 is not installed");
        return;
    }
    let dir = common::scratch("python");
    let mut files = Vec::new();
    for (name, modes) in [
        ("none", vec![]),
        ("zlib", vec![Compression::Zlib]),
        ("mixed", vec![Compression::Bz2, Compression::Lzf, Compression::Zlib]),
    ] {
        let p = dir.join(format!("{name}.ds"));
        write_file(
            &p,
            WriterOptions { compression: modes, ..WriterOptions::zlib() },
            &[10, 1000, 2500],
        );
        files.push(p);
    }
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg("verify")
        .args(&files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.matches("OK ").count(), files.len(), "{stdout}");
    assert_eq!(stdout.matches("chained checksum matches").count(), files.len(), "{stdout}");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg("repack")
        .args(&files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

/// `DS:src/tests/misc.cpp` `test_compactnull`: an all-null extent of a 7-nullable-field type
/// with N records packs (mode none) to `48 + ((4 - N%4)%4) + N` bytes.
#[test]
fn null_compaction_vector() {
    let ty = Arc::new(
        ExtentType::builder("Test::CompactNulls")
            .attr("pack_null_compact", "non_bool")
            .field(FieldDesc::new("bool", FieldType::Bool).nullable(true))
            .field(FieldDesc::new("byte", FieldType::Byte).nullable(true))
            .field(FieldDesc::new("int32", FieldType::Int32).nullable(true))
            .field(FieldDesc::new("int64", FieldType::Int64).nullable(true))
            .field(FieldDesc::new("double", FieldType::Double).nullable(true))
            .field(FieldDesc::new("variable32", FieldType::Variable32).nullable(true))
            .field(FieldDesc::new("int32b", FieldType::Int32).nullable(true))
            .build()
            .unwrap(),
    );
    let lookup = |n: &str| (n == ty.name()).then(|| Arc::clone(&ty));
    for n in 0..40usize {
        let mut b = ExtentBuilder::new(Arc::clone(&ty));
        for _ in 0..n {
            b.start_record();
        }
        let bytes = raw::encode_extent(&b, &[], 9).unwrap();
        let expect = if n == 0 { 48 } else { 48 + (4 - n % 4) % 4 + n };
        assert_eq!(bytes.len(), expect, "N={n}");
        let e = raw::decode_extent_bytes(&bytes, false, &lookup).unwrap();
        assert_eq!(e.len(), n);
        for r in 0..n {
            for f in 0..7 {
                assert_eq!(e.value(r, f), Value::Null);
            }
        }
    }
    // Mixed null / non-null values, with alignment padding inside the compacted stream.
    let mut b = ExtentBuilder::new(Arc::clone(&ty));
    for k in 0..300i64 {
        b.start_record();
        for f in 0..7 {
            if (k + f as i64) % 3 == 0 {
                continue;
            }
            let v = match f {
                0 => Value::Bool(k % 2 == 0),
                1 => Value::Byte(k as u8),
                2 | 6 => Value::Int32(k as i32 * 7),
                3 => Value::Int64(k << 40),
                4 => Value::Double(k as f64 / 3.0),
                _ => Value::Bytes(b"abc"),
            };
            b.set(f, v).unwrap();
        }
    }
    for be in [false, true] {
        let (bytes, _) = raw::encode_extent_with(
            &b,
            &EncodeOptions { fixed_modes: &[], var_modes: &[], level: 1, big_endian: be },
        )
        .unwrap();
        let e = raw::decode_extent_bytes(&bytes, be, &lookup).unwrap();
        assert_extent_eq(&e, &b);
    }
}

/// Big-endian encoding (used to compare with big-endian files) decodes to the same values.
#[test]
fn big_endian_extents_round_trip() {
    let ty = kitchen_sink();
    let lookup = |n: &str| (n == ty.name()).then(|| Arc::clone(&ty));
    let mut b = ExtentBuilder::new(Arc::clone(&ty));
    for k in 0..500 {
        fill(&mut b, k);
    }
    for modes in [&[][..], &[Compression::Zlib][..]] {
        let (bytes, _) = raw::encode_extent_with(
            &b,
            &EncodeOptions { fixed_modes: modes, var_modes: modes, level: 6, big_endian: true },
        )
        .unwrap();
        let e = raw::decode_extent_bytes(&bytes, true, &lookup).unwrap();
        assert_extent_eq(&e, &b);
        assert!(raw::decode_extent_bytes(&bytes, false, &lookup).is_err());
    }
}

#[test]
fn builder_rejects_wrong_values() {
    let ty = kitchen_sink();
    let mut b = ExtentBuilder::new(Arc::clone(&ty));
    assert!(matches!(b.set(0, Value::Bool(true)), Err(Error::NoRecord)));
    b.start_record();
    assert!(matches!(b.set(0, Value::Int32(1)), Err(Error::WrongValueType { .. })));
    assert!(matches!(b.set(0, Value::Null), Err(Error::NotNullable { .. })));
    assert!(matches!(b.set(99, Value::Null), Err(Error::NoSuchField { .. })));
    assert!(matches!(b.set(14, Value::Bytes(b"toolong")), Err(Error::WrongWidth { .. })));
    b.set(1, Value::Bool(true)).unwrap();
    b.set(1, Value::Null).unwrap();
    assert_eq!(b.value(0, 1), Value::Null);
    assert_eq!(b.value(0, 12), Value::Null, "nullable fields start null");
    assert_eq!(b.value(0, 11), Value::Bytes(b""), "non-nullable fields start empty");
    assert!(b.approx_bytes() >= ty.record_size());
}

mod props {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    struct Spec {
        ftype: FieldType,
        nullable: bool,
        unique: bool,
        /// 0 none, 1 self-relative, 2 relative to an earlier field of the same type
        rel: u8,
        scale: bool,
    }

    fn spec() -> impl Strategy<Value = Spec> {
        let ft = prop_oneof![
            Just(FieldType::Bool),
            Just(FieldType::Byte),
            Just(FieldType::Int32),
            Just(FieldType::Int64),
            Just(FieldType::Double),
            Just(FieldType::Variable32),
            (1usize..6).prop_map(FieldType::FixedWidth),
        ];
        (ft, any::<bool>(), any::<bool>(), 0u8..3, any::<bool>()).prop_map(
            |(ftype, nullable, unique, rel, scale)| Spec { ftype, nullable, unique, rel, scale },
        )
    }

    fn make_type(
        specs: &[Spec],
        compact: bool,
        pad_max: bool,
        big_first: bool,
    ) -> Option<ExtentType> {
        let mut b = ExtentType::builder("Prop::T").namespace("example.org").version("1.0");
        if compact {
            b = b.attr("pack_null_compact", "non_bool");
        }
        if pad_max {
            b = b.attr("pack_pad_record", "max_column_size");
        }
        if big_first {
            b = b.attr("pack_field_ordering", "big_to_small_sep_var32");
        }
        for (i, s) in specs.iter().enumerate() {
            let name = format!("f{i}");
            let mut f = FieldDesc::new(&name, s.ftype).nullable(s.nullable);
            if compact && matches!(s.ftype, FieldType::FixedWidth(_)) {
                return None;
            }
            if s.ftype == FieldType::Variable32 {
                f = f.pack_unique(s.unique);
            }
            if s.ftype == FieldType::Double && s.scale {
                f = f.pack_scale(0.25);
            }
            if matches!(s.ftype, FieldType::Int32 | FieldType::Int64 | FieldType::Double) {
                match s.rel {
                    1 if s.ftype != FieldType::Double || s.scale => f = f.pack_relative(&name),
                    2 => {
                        if let Some(j) = specs[..i].iter().rposition(|t| t.ftype == s.ftype) {
                            f = f.pack_relative(&format!("f{j}"));
                        }
                    }
                    _ => {}
                }
            }
            b = b.field(f);
        }
        Some(b.build().unwrap())
    }

    /// A value for field `f` from random material `x`. Doubles of transformed fields (and bases
    /// of relative fields) are small multiples of 1/4 so that relative and scale packing are
    /// exact; DataSeries' double transforms are lossy for arbitrary values.
    fn value<'a>(ty: &ExtentType, f: usize, x: u64, buf: &'a [u8]) -> Value<'a> {
        let d = &ty.fields()[f];
        if d.nullable && x % 5 == 0 {
            return Value::Null;
        }
        match d.ftype {
            FieldType::Bool => Value::Bool(x & 2 != 0),
            FieldType::Byte => Value::Byte((x >> 3) as u8),
            FieldType::Int32 => Value::Int32((x >> 7) as i32),
            FieldType::Int64 => Value::Int64((x as i64).rotate_left(13)),
            FieldType::Double
                if d.pack_scale.is_some()
                    || d.pack_relative.is_some()
                    || ty
                        .fields()
                        .iter()
                        .any(|g| g.pack_relative.as_deref() == Some(d.name.as_str())) =>
            {
                Value::Double(((x >> 9) as i32 as f64) * 0.25)
            }
            FieldType::Double => Value::Double(f64::from_bits(x.rotate_left(29))),
            FieldType::Variable32 => Value::Bytes(&buf[..(x as usize >> 11) % (buf.len() + 1)]),
            FieldType::FixedWidth(n) => Value::Bytes(&buf[..n]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn random_types_and_records_round_trip(
            specs in prop::collection::vec(spec(), 1..9),
            compact in any::<bool>(),
            pad_max in any::<bool>(),
            big_first in any::<bool>(),
            seeds in prop::collection::vec(any::<u64>(), 0..120),
            zlib in any::<bool>(),
            be in any::<bool>(),
        ) {
            let Some(ty) = make_type(&specs, compact, pad_max, big_first) else { return Ok(()) };
            let ty = Arc::new(ty);
            prop_assert_eq!(&*Arc::new(ExtentType::from_xml(ty.xml()).unwrap()), &*ty);
            let buf: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37)).collect();
            let nf = ty.fields().len();
            let mut b = ExtentBuilder::new(Arc::clone(&ty));
            for (r, &s) in seeds.iter().enumerate() {
                b.start_record();
                for f in 0..nf {
                    let x = s.rotate_left((f * 7) as u32) ^ (r as u64).wrapping_mul(0x9E37_79B9);
                    b.set(f, value(&ty, f, x, &buf)).unwrap();
                }
            }
            let modes = if zlib { vec![Compression::Zlib] } else { vec![] };
            let lookup = |n: &str| (n == ty.name()).then(|| Arc::clone(&ty));
            let (bytes, _) = raw::encode_extent_with(&b, &EncodeOptions { fixed_modes: &modes, var_modes: &modes, level: 1, big_endian: be }).unwrap();
            let e = raw::decode_extent_bytes(&bytes, be, &lookup).unwrap();
            assert_extent_eq(&e, &b);
            // Re-encoding the decoded extent gives the same bytes.
            let (again, _) = raw::encode_extent_with(&ExtentBuilder::from_extent(&e), &EncodeOptions { fixed_modes: &modes, var_modes: &modes, level: 1, big_endian: be }).unwrap();
            prop_assert!(again == bytes);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Whole files: several extents through DsWriter (none or zlib) and DsReader.
        #[test]
        fn random_files_round_trip(
            specs in prop::collection::vec(spec(), 1..7),
            extents in prop::collection::vec(prop::collection::vec(any::<u64>(), 0..60), 1..5),
            zlib in any::<bool>(),
        ) {
            let Some(ty) = make_type(&specs, false, false, false) else { return Ok(()) };
            let ty = Arc::new(ty);
            let dir = common::scratch("propfile");
            let path = dir.join("p.ds");
            let opts = if zlib { WriterOptions::zlib() } else { WriterOptions::uncompressed() };
            let mut w = DsWriter::create(&path, std::slice::from_ref(&ty), opts).unwrap();
            let buf: Vec<u8> = (0..40u8).collect();
            let mut built = Vec::new();
            for seeds in &extents {
                let mut b = ExtentBuilder::new(Arc::clone(&ty));
                for &s in seeds {
                    b.start_record();
                    for f in 0..ty.fields().len() {
                        b.set(f, value(&ty, f, s.rotate_left(f as u32 * 5), &buf)).unwrap();
                    }
                }
                if !b.is_empty() {
                    built.push(b.clone());
                }
                w.write_extent(b).unwrap();
            }
            w.finish().unwrap();
            let r = DsReader::open(&path).unwrap();
            let got: Vec<_> = r.extents().map(|e| e.unwrap()).collect();
            prop_assert_eq!(got.len(), built.len());
            for (e, b) in got.iter().zip(&built) {
                assert_extent_eq(e, b);
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn main_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<DsReader>();
    send_sync::<dataseries::Extent>();
    send_sync::<ExtentBuilder>();
    send_sync::<ExtentType>();
    send_sync::<Error>();
    send::<dataseries::ExtentStream>();
    send::<DsWriter<std::fs::File>>();
}

/// An extent whose fixed section compresses and whose variable one does not (random bytes):
/// the writer stores the variable section as it is, and the reader keeps it where it was read
/// (no copy), through both of its paths (read into memory, memory-mapped); values and shared
/// slices are the records written.
#[test]
fn raw_variable_section_beside_a_compressed_fixed_one() {
    let dir = common::scratch("mixed-modes");
    let ty = Arc::new(
        ExtentType::builder("Test::Mixed")
            .field(FieldDesc::new("n", FieldType::Int64))
            .field(FieldDesc::new("data", FieldType::Variable32))
            .field(FieldDesc::new("fw", FieldType::FixedWidth(4)))
            .build()
            .unwrap(),
    );
    let path = dir.join("mixed.ds");
    let mut w = DsWriter::create(
        &path,
        std::slice::from_ref(&ty),
        WriterOptions { compression: vec![Compression::Lz4], ..WriterOptions::zlib() },
    )
    .unwrap();
    let mut x = 0x1234_5678_9abc_def0u64;
    let mut rows = Vec::new();
    for n in 0..2000i64 {
        let data: Vec<u8> = (0..512)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        rows.push((n, data));
    }
    let mut b = ExtentBuilder::new(Arc::clone(&ty));
    for (n, data) in &rows {
        b.start_record();
        b.set(0, Value::Int64(*n)).unwrap();
        b.set(1, Value::Bytes(data)).unwrap();
        b.set(2, Value::Bytes(&(*n as u32).to_le_bytes())).unwrap();
    }
    w.write_extent(b).unwrap();
    w.finish().unwrap();
    for mapped in [false, true] {
        let mut r = DsReader::open(&path).unwrap();
        if mapped {
            assert!(r.map_file(), "the file maps");
        }
        let h = r.headers().find_map(|h| h.ok().filter(|h| h.type_name == "Test::Mixed")).unwrap();
        assert_eq!(
            (h.fixed_mode, h.variable_mode),
            (Compression::Lz4 as u8, Compression::None as u8),
            "the case under test: fixed section compressed, variable one stored raw"
        );
        let e = r
            .extents()
            .map(Result::unwrap)
            .find(|e| e.extent_type().name() == "Test::Mixed")
            .unwrap();
        assert_eq!(e.len(), rows.len());
        for (i, (n, data)) in rows.iter().enumerate() {
            assert_eq!(e.i64(i, 0), Some(*n));
            assert_eq!(e.bytes(i, 1), Some(&data[..]));
            assert_eq!(e.shared_bytes(i, 1).as_deref(), Some(&data[..]));
            assert_eq!(e.shared_bytes(i, 2).as_deref(), Some(&(*n as u32).to_le_bytes()[..]));
        }
        // Fixed records decompressed (2000 * 16 bytes and a little) beside the stored extent,
        // whose variable section (2000 * (4 + 512) bytes) is read where it lies: each held
        // once, the variable data not copied.
        let stored = h.packed_len as usize;
        assert!(stored > 2000 * 516, "{stored}");
        assert!(e.memory_bytes() <= 2000 * 16 + stored + 4096, "{}", e.memory_bytes());
    }
}

/// Several extents decoded together (their checksums computed side by side) give exactly
/// what decoding each alone gives, for every codec, read or mapped; a corrupt extent among
/// them is its own error and the others still decode.
#[test]
fn extents_decoded_together_equal_each_alone() {
    let dir = common::scratch("batch");
    let sizes = [1u64, 500, 3000, 17, 1200, 7, 2048, 64, 999];
    for modes in [vec![Compression::None], vec![Compression::Lz4], vec![Compression::Zlib]] {
        let path = dir.join("batch.ds");
        let opts = WriterOptions { compression: modes.clone(), ..WriterOptions::zlib() };
        let built = write_file(&path, opts, &sizes);
        for mapped in [false, true] {
            let mut r = DsReader::open(&path).unwrap();
            if mapped {
                assert!(r.map_file());
            }
            let offs: Vec<(u64, String)> = r
                .headers()
                .map(Result::unwrap)
                .filter(|h| h.type_name == "Test::KitchenSink")
                .map(|h| (h.offset, h.type_name))
                .collect();
            assert_eq!(offs.len(), sizes.len());
            let jobs: Vec<(u64, &str)> = offs.iter().map(|(o, t)| (*o, t.as_str())).collect();
            let together = r.read_extents_of(&jobs);
            assert_eq!(together.len(), jobs.len());
            for ((e, b), &(off, t)) in together.iter().zip(&built).zip(&jobs) {
                let e = e.as_ref().unwrap_or_else(|e| panic!("{modes:?} {off}: {e}"));
                assert_extent_eq(e, b);
                assert_extent_eq(&r.read_extent_of(off, t).unwrap(), b);
            }
            // The wrong type is an index mismatch, as for one extent.
            let wrong = r.read_extents_of(&[(jobs[1].0, "Test::Other")]);
            assert!(
                matches!(wrong[0], Err(Error::IndexMismatch { .. })),
                "{:?}",
                wrong[0].as_ref().err()
            );
        }
        // One byte near the end of the third extent flipped and its adler32 made to match
        // is that extent's error (the same as when decoded alone); the rest decode.
        let mut bytes = std::fs::read(&path).unwrap();
        let r = DsReader::open(&path).unwrap();
        let h: Vec<_> = r
            .headers()
            .map(Result::unwrap)
            .filter(|h| h.type_name == "Test::KitchenSink")
            .collect();
        let third = &h[2];
        let (start, end) = (third.offset as usize, (third.offset + third.packed_len) as usize);
        bytes[end - 8] ^= 0x40;
        let mut cover = bytes[start..start + 16].to_vec();
        cover.extend_from_slice(&bytes[start + 20..end]);
        bytes[start + 16..start + 20].copy_from_slice(&raw::adler32(&cover).to_le_bytes());
        let bad = dir.join("bad.ds");
        std::fs::write(&bad, &bytes).unwrap();
        let r = DsReader::open(&bad).unwrap();
        let jobs: Vec<(u64, &str)> = h.iter().map(|h| (h.offset, h.type_name.as_str())).collect();
        let got = r.read_extents_of(&jobs);
        for (i, g) in got.iter().enumerate() {
            if i == 2 {
                let e = g.as_ref().expect_err("the corrupt extent is an error");
                // Stored raw, the flip is in the records: the lookup2 check finds it;
                // compressed, the codec may already.
                if modes == [Compression::None] {
                    assert!(
                        matches!(e, Error::BadChecksum { check: dataseries::Checksum::BjHash, .. }),
                        "{e}"
                    );
                }
                let alone = r.read_extent_of(jobs[2].0, jobs[2].1).expect_err("alone too");
                assert_eq!(e.to_string(), alone.to_string());
            } else {
                assert_extent_eq(g.as_ref().unwrap(), &built[i]);
            }
        }
    }
}
