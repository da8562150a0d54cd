//! Malformed input: every damage gives a clear error, never a panic.

mod common;

use std::path::Path;
use std::sync::Arc;

use dataseries::raw::{self, Checks};
use dataseries::{
    Compression, DsReader, DsWriter, Error, ExtentBuilder, ExtentType, FieldDesc, FieldType,
    TrailerStatus, Value, WriterOptions,
};

fn small_type() -> Arc<ExtentType> {
    Arc::new(
        ExtentType::builder("Test::Small")
            .field(FieldDesc::new("id", FieldType::Int64).pack_relative("id"))
            .field(FieldDesc::new("n", FieldType::Int32).nullable(true))
            .field(FieldDesc::new("s", FieldType::Variable32).pack_unique(true))
            .build()
            .unwrap(),
    )
}

fn small_extent(ty: &Arc<ExtentType>, n: i64) -> ExtentBuilder {
    let mut b = ExtentBuilder::new(Arc::clone(ty));
    for k in 0..n {
        b.start_record();
        b.set(0, Value::Int64(1000 + k * 3)).unwrap();
        if k % 3 != 0 {
            b.set(1, Value::Int32(k as i32)).unwrap();
        }
        b.set(2, Value::Bytes(format!("value {}", k % 4).as_bytes())).unwrap();
    }
    b
}

/// A small valid file: XmlType, three extents, index, trailer.
fn small_file(path: &Path, compression: Vec<Compression>) -> Vec<u8> {
    let ty = small_type();
    let mut w = DsWriter::create(
        path,
        std::slice::from_ref(&ty),
        WriterOptions { compression, ..WriterOptions::zlib() },
    )
    .unwrap();
    for n in [5, 20, 3] {
        w.write_extent(small_extent(&ty, n)).unwrap();
    }
    w.finish().unwrap();
    std::fs::read(path).unwrap()
}

/// Reads everything a user could read; returns the first error.
fn read_all(path: &Path) -> Result<usize, Error> {
    let r = DsReader::open(path)?;
    let _ = r.trailer_status();
    let mut n = 0;
    for e in r.extents() {
        let e = e?;
        for i in 0..e.len() {
            for f in 0..e.extent_type().fields().len() {
                let _ = e.value(i, f);
            }
        }
        n += e.len();
    }
    for h in r.headers() {
        h?;
    }
    let _ = r.index()?;
    Ok(n)
}

#[test]
fn truncation_at_every_offset_is_a_clear_error() {
    let dir = common::scratch("trunc");
    let full = dir.join("full.ds");
    for modes in [vec![], vec![Compression::Zlib]] {
        let data = small_file(&full, modes);
        let r = DsReader::open(&full).unwrap();
        let mut boundaries: Vec<u64> = r.headers().map(|h| h.unwrap().offset).collect();
        boundaries.push(data.len() as u64 - 28);
        assert_eq!(read_all(&full).unwrap(), 28);
        let cut_path = dir.join("cut.ds");
        for cut in 0..data.len() {
            std::fs::write(&cut_path, &data[..cut]).unwrap();
            let res = read_all(&cut_path);
            if boundaries.contains(&(cut as u64)) {
                // A clean cut between extents is an unfinished file: readable, no trailer.
                let r = DsReader::open(&cut_path).unwrap();
                assert_eq!(r.trailer_status(), TrailerStatus::Missing);
                assert!(res.is_ok(), "cut {cut}: {res:?}");
            } else {
                let e = res.expect_err(&format!("cut at {cut} must fail"));
                let msg = e.to_string();
                assert!(!msg.contains('\n') && !msg.is_empty(), "{msg}");
            }
        }
    }
}

/// A file cut between extents whose last 28 bytes happen to begin like a trailer (0xffffffff:
/// any field holding -1 can put it there) is unfinished, not one with a damaged trailer; a real
/// trailer with a failed check, where the extents end, is still reported as damaged.
#[test]
fn a_trailer_marker_inside_extent_data_is_not_a_damaged_trailer() {
    let dir = common::scratch("marker-in-data");
    let full = dir.join("full.ds");
    for modes in [vec![], vec![Compression::Zlib]] {
        let data = small_file(&full, modes);
        let r = DsReader::open(&full).unwrap();
        let offsets: Vec<u64> = r.headers().map(|h| h.unwrap().offset).collect();
        let cut_path = dir.join("cut.ds");
        for &end in &offsets[2..] {
            let mut cut = data[..end as usize].to_vec();
            let at = cut.len() - 28;
            cut[at..at + 4].copy_from_slice(&[0xff; 4]);
            std::fs::write(&cut_path, &cut).unwrap();
            let r = DsReader::open(&cut_path).unwrap();
            assert_eq!(r.trailer_status(), TrailerStatus::Missing, "cut at {end}");
            // Every extent before the one holding the false marker still reads.
            let n = r.headers().take_while(|h| h.is_ok()).count();
            assert!(n + 1 >= offsets.iter().filter(|&&o| o < end).count(), "cut at {end}");
        }
        // The trailer itself damaged (its hash): still a damaged trailer.
        let mut bad = data.clone();
        let n = bad.len();
        bad[n - 2] ^= 0x01;
        std::fs::write(&cut_path, &bad).unwrap();
        let r = DsReader::open(&cut_path).unwrap();
        assert!(
            matches!(r.trailer_status(), TrailerStatus::Corrupt(_)),
            "{:?}",
            r.trailer_status()
        );
    }
}

#[test]
fn every_flipped_byte_is_detected() {
    let dir = common::scratch("flip");
    let path = dir.join("f.ds");
    for modes in [vec![], vec![Compression::Zlib]] {
        let data = small_file(&path, modes);
        let r = DsReader::open(&path).unwrap();
        let headers: Vec<_> = r.headers().map(|h| h.unwrap()).collect();
        // Every byte of the second user extent.
        let h = &headers[1];
        for i in h.offset..h.offset + h.packed_len {
            let mut bad = data.clone();
            bad[i as usize] ^= 0x5a;
            std::fs::write(&path, &bad).unwrap();
            let err = read_all(&path).expect_err(&format!("flip at {i}"));
            let msg = err.to_string();
            assert!(msg.contains(&format!("offset {}", h.offset)), "flip at {i}: {msg}");
        }
        // Every byte of the file header (but the NaN's payload bits, which stay NaN).
        for i in (0..32).chain([39]) {
            let mut bad = data.clone();
            bad[i] ^= 0x01;
            std::fs::write(&path, &bad).unwrap();
            let err = read_all(&path).expect_err(&format!("flip at {i}"));
            // A damaged magic: not a DataSeries file at all.
            let want = if i < 4 {
                matches!(err, Error::NotDataSeries { .. })
            } else {
                matches!(err, Error::BadFileHeader { .. })
            };
            assert!(want, "flip at {i}: {err}");
        }
        // Every byte of the trailer: the stream ends with a trailer error.
        for i in data.len() - 28..data.len() {
            let mut bad = data.clone();
            bad[i] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            let r = DsReader::open(&path).unwrap();
            assert!(!matches!(r.trailer_status(), TrailerStatus::Valid { .. }), "flip at {i}");
            assert!(r.index().is_err() || r.index().unwrap().is_none());
            let err = read_all(&path).expect_err(&format!("flip at {i}"));
            assert!(err.to_string().starts_with("trailer at offset"), "{err}");
        }
    }
}

#[test]
fn wrong_magic_and_byte_order_checks() {
    let dir = common::scratch("magic");
    let path = dir.join("m.ds");
    let data = small_file(&path, vec![]);
    for (at, val, check) in [(4usize, 0x99, "int32 0x12345678"), (9, 0, "int64 0x123456789ABCDEF0")]
    {
        let mut bad = data.clone();
        bad[at] = val;
        std::fs::write(&path, &bad).unwrap();
        match DsReader::open(&path) {
            Err(Error::BadFileHeader { check: c }) => assert_eq!(c, check),
            other => panic!("{other:?}"),
        }
    }
    std::fs::write(&path, b"DSv1").unwrap();
    assert!(matches!(DsReader::open(&path), Err(Error::BadFileHeader { .. })));
    // Other files: said so, with what they begin with.
    let mut bad = data.clone();
    bad[0] = b'X';
    for (bytes, want) in [
        (bad, "not a DataSeries file: it begins with \"XSv1xV4\\x12"),
        (
            b"hello, world\n".to_vec(),
            "it begins with \"hello, world\\n\" (a text file), not \"DSv1\"",
        ),
        ("h\u{e9}llo w\u{f6}rld, a longer line of text".as_bytes().to_vec(), "\"... (a text file)"),
        (vec![0u8, 1, 2], "(a binary file)"),
        (Vec::new(), "not a DataSeries file: the file is empty"),
    ] {
        std::fs::write(&path, &bytes).unwrap();
        let err = DsReader::open(&path).unwrap_err();
        assert!(matches!(err, Error::NotDataSeries { .. }), "{err:?}");
        assert!(err.to_string().contains(want), "{err}");
    }
    assert!(matches!(DsReader::open(dir.join("missing.ds")), Err(Error::Io { .. })));
}

/// Re-seals a modified little-endian extent: recomputes its adler32.
fn reseal(ext: &mut [u8]) {
    let mut v = ext[..16].to_vec();
    v.extend_from_slice(&ext[20..]);
    let a = raw::adler32(&v);
    ext[16..20].copy_from_slice(&a.to_le_bytes());
}

#[test]
fn unknown_compression_mode_is_reported() {
    let ty = small_type();
    let lookup = |n: &str| (n == ty.name()).then(|| Arc::clone(&ty));
    let mut ext = raw::encode_extent(&small_extent(&ty, 10), &[Compression::Zlib], 6).unwrap();
    for (pos, section) in
        [(24usize, dataseries::Section::Fixed), (25, dataseries::Section::Variable)]
    {
        let mut bad = ext.clone();
        bad[pos] = 9;
        reseal(&mut bad);
        match raw::decode_extent_bytes(&bad, false, &lookup) {
            Err(Error::UnknownCompression { mode: 9, section: s, .. }) => assert_eq!(s, section),
            other => panic!("{other:?}"),
        }
    }
    // A wrong but valid mode: the codec rejects the data.
    ext[24] = Compression::Bz2.mode();
    reseal(&mut ext);
    let err = raw::decode_extent_bytes(&ext, false, &lookup).unwrap_err();
    assert!(matches!(err, Error::Decompress { mode: Compression::Bz2, .. }), "{err}");
}

/// Builds an uncompressed little-endian extent from raw sections with correct checksums.
fn forge(name: &str, nrec: i32, fixed: &[u8], var_body: &[u8]) -> Vec<u8> {
    let mut var = vec![0u8; 4];
    var.extend_from_slice(var_body);
    let mut h = raw::bjhash(1972, fixed);
    h = raw::bjhash(h, &var);
    let mut lens = Vec::new();
    let mut p = 4;
    while p + 4 <= var.len() {
        lens.extend_from_slice(&var[p..p + 4]);
        let n = i32::from_le_bytes(var[p..p + 4].try_into().unwrap()).max(0) as usize;
        p += 4 + n + (12 - n % 8) % 8;
    }
    h = raw::bjhash(h, &lens);
    let mut out = Vec::new();
    for v in [fixed.len() as i32, var_body.len() as i32, nrec, var.len() as i32, 0, h as i32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&[0, 0, name.len() as u8, 0]);
    out.extend_from_slice(name.as_bytes());
    let pad4 = |o: &mut Vec<u8>| o.resize(o.len().div_ceil(4) * 4, 0);
    pad4(&mut out);
    out.extend_from_slice(fixed);
    pad4(&mut out);
    out.extend_from_slice(var_body);
    pad4(&mut out);
    reseal(&mut out);
    out
}

#[test]
fn forged_extents_with_bad_structure_are_rejected() {
    let ty = Arc::new(
        ExtentType::builder("V").field(FieldDesc::new("v", FieldType::Variable32)).build().unwrap(),
    );
    let lookup = |n: &str| (n == "V").then(|| Arc::clone(&ty));
    assert_eq!(ty.record_size(), 8);
    // A valid forged extent decodes.
    let mut heap = 3i32.to_le_bytes().to_vec();
    heap.extend_from_slice(b"abc\0");
    let mut fixed = 4i32.to_le_bytes().to_vec();
    fixed.extend_from_slice(&[0; 4]);
    let e = raw::decode_extent_bytes(&forge("V", 1, &fixed, &heap), false, &lookup).unwrap();
    assert_eq!(e.bytes(0, 0), Some(&b"abc"[..]));

    let expect = |bytes: Vec<u8>, want: &str| {
        let err = raw::decode_extent_bytes(&bytes, false, &lookup).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(want), "wanted {want:?} in {msg}");
        assert!(!msg.contains('\n'));
    };
    // variable32 offset out of the heap.
    let mut f2 = 100i32.to_le_bytes().to_vec();
    f2.extend_from_slice(&[0; 4]);
    expect(
        forge("V", 1, &f2, &heap),
        "variable32 check failed: record 0 field 'v' heap offset 100: offset inside the heap",
    );
    // misaligned offset.
    let mut f3 = 8i32.to_le_bytes().to_vec();
    f3.extend_from_slice(&[0; 4]);
    expect(forge("V", 1, &f3, &heap), "offset is at an entry boundary");
    // negative offset.
    let mut f4 = (-4i32).to_le_bytes().to_vec();
    f4.extend_from_slice(&[0; 4]);
    expect(forge("V", 1, &f4, &heap), "heap offset -4");
    // heap entry longer than the heap.
    let mut h2 = 100i32.to_le_bytes().to_vec();
    h2.extend_from_slice(b"abc\0");
    expect(
        forge("V", 1, &fixed, &h2),
        "variable heap check failed at heap offset 4: entry inside the heap",
    );
    let mut h3 = (-1i32).to_le_bytes().to_vec();
    h3.extend_from_slice(&[0; 4]);
    expect(forge("V", 1, &fixed, &h3), "entry length >= 0");
    // more records claimed than the fixed section holds (a field beyond the data).
    expect(
        forge("V", 2, &fixed, &heap),
        "fixed section size check failed (expected 16 bytes, got 8)",
    );
    // a record size that does not divide the section.
    expect(
        forge("V", 1, &fixed[..6], &heap),
        "fixed section size check failed (expected 8 bytes, got 6)",
    );
    // unknown type, negative sizes.
    expect(forge("W", 1, &fixed, &heap), "no type named 'W' registered");
    let mut neg = forge("V", 1, &fixed, &heap);
    neg[8..12].copy_from_slice(&(-1i32).to_le_bytes());
    reseal(&mut neg);
    expect(neg, "nrecords >= 0");
    // Corrupting data with the adler32 still valid is caught by the bjhash.
    let mut bj = forge("V", 1, &fixed, &heap);
    let n = bj.len();
    bj[n - 5] ^= 1;
    reseal(&mut bj);
    expect(bj, "bjhash check failed");
}

#[test]
fn bad_type_library_is_reported() {
    let dir = common::scratch("xml");
    let path = dir.join("x.ds");
    let xt = raw::xmltype_type();
    for (xml, want) in [
        ("<ExtentType name=\"broken\"><field", "extent type XML does not parse"),
        (
            "<ExtentType name=\"t\"><field name=\"a\" type=\"int33\"/></ExtentType>",
            "unknown field type",
        ),
        ("\u{0}\u{1}", "does not parse"),
    ] {
        let mut b = ExtentBuilder::new(Arc::clone(&xt));
        b.start_record();
        b.set(0, Value::Bytes(xml.as_bytes())).unwrap();
        let mut file = raw::file_header().to_vec();
        file.extend_from_slice(&raw::encode_extent(&b, &[], 1).unwrap());
        std::fs::write(&path, &file).unwrap();
        let err = DsReader::open(&path).unwrap_err();
        assert!(err.to_string().contains(want), "{err}");
    }
    // A first extent that is not the XmlType extent.
    let ty = small_type();
    let mut file = raw::file_header().to_vec();
    file.extend_from_slice(&raw::encode_extent(&small_extent(&ty, 2), &[], 1).unwrap());
    std::fs::write(&path, &file).unwrap();
    let err = DsReader::open(&path).unwrap_err();
    assert!(err.to_string().contains("extent at offset 40: type library check failed"), "{err}");
}

#[test]
fn huge_header_sizes_fail_without_allocating() {
    // Headers that claim huge sizes must fail before allocating them.
    let ty = small_type();
    let lookup = |n: &str| (n == ty.name()).then(|| Arc::clone(&ty));
    let mut ext = raw::encode_extent(&small_extent(&ty, 3), &[Compression::Zlib], 6).unwrap();
    ext[8..12].copy_from_slice(&i32::MAX.to_le_bytes()); // nrecords
    reseal(&mut ext);
    assert!(raw::decode_extent_bytes(&ext, false, &lookup).is_err());
    let mut ext = raw::encode_extent(&small_extent(&ty, 3), &[Compression::Lz4], 6).unwrap();
    ext[12..16].copy_from_slice(&i32::MAX.to_le_bytes()); // variable_size
    reseal(&mut ext);
    assert!(raw::decode_extent_bytes_with(
        &ext,
        false,
        &lookup,
        Checks { adler32: false, bjhash: false }
    )
    .is_err());
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn library() -> Vec<Arc<ExtentType>> {
        let mut v = vec![small_type(), raw::xmltype_type(), raw::index_type()];
        v.push(Arc::new(
            ExtentType::builder("Test::Compact")
                .attr("pack_null_compact", "non_bool")
                .field(FieldDesc::new("a", FieldType::Int32).nullable(true))
                .field(
                    FieldDesc::new("d", FieldType::Double)
                        .nullable(true)
                        .pack_scale(0.5)
                        .pack_relative("d"),
                )
                .field(FieldDesc::new("s", FieldType::Variable32).nullable(true))
                .build()
                .unwrap(),
        ));
        v
    }

    fn seeds() -> Vec<(Vec<u8>, bool)> {
        let lib = library();
        let mut out = Vec::new();
        for m in [
            &[][..],
            &[Compression::Zlib][..],
            &[Compression::Lz4][..],
            &[Compression::Lzf][..],
            &[Compression::Snappy][..],
            &[Compression::Bz2][..],
        ] {
            out.push((raw::encode_extent(&small_extent(&lib[0], 7), m, 6).unwrap(), false));
            let mut b = ExtentBuilder::new(Arc::clone(&lib[3]));
            for k in 0..9 {
                b.start_record();
                if k % 2 == 0 {
                    b.set(0, Value::Int32(k)).unwrap();
                }
                if k % 3 == 0 {
                    b.set(1, Value::Double(f64::from(k) * 0.5)).unwrap();
                }
                b.set(2, Value::Bytes(b"xyz")).unwrap();
            }
            let opts = raw::EncodeOptions {
                fixed_modes: m,
                var_modes: m,
                level: 6,
                big_endian: k_be(m.len()),
            };
            out.push((raw::encode_extent_with(&b, &opts).unwrap().0, k_be(m.len())));
        }
        out
    }

    fn k_be(n: usize) -> bool {
        n % 2 == 1
    }

    fn decode_all_ways(bytes: &[u8], be: bool) {
        let lib = library();
        let lookup = |n: &str| lib.iter().find(|t| t.name() == n).cloned();
        for checks in [Checks::default(), Checks { adler32: false, bjhash: false }] {
            for order in [be, !be] {
                if let Ok(e) = raw::decode_extent_bytes_with(bytes, order, &lookup, checks) {
                    for i in 0..e.len() {
                        for f in 0..e.extent_type().fields().len() {
                            let _ = e.value(i, f);
                        }
                    }
                    let _ = ExtentBuilder::from_extent(&e);
                }
            }
        }
        let _ = raw::parse_extent_header(bytes, be);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400), be in any::<bool>()) {
            decode_all_ways(&bytes, be);
        }

        #[test]
        fn mutated_extents_never_panic(
            which in 0usize..12,
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..6),
        ) {
            let all = seeds();
            let (mut bytes, be) = all[which % all.len()].clone();
            for (idx, val, kind) in edits {
                if bytes.is_empty() {
                    break;
                }
                let i = idx.index(bytes.len());
                match kind {
                    0 => bytes[i] = val,
                    1 => bytes[i] ^= 1 << (val % 8),
                    2 => bytes.truncate(i),
                    _ => bytes.insert(i, val),
                }
            }
            // Keep the adler32 right half of the time so the deeper checks run.
            if bytes.len() >= 20 && edits_fix(&bytes) {
                let mut b2 = bytes.clone();
                reseal_be(&mut b2, be);
                decode_all_ways(&b2, be);
            }
            decode_all_ways(&bytes, be);
        }

        #[test]
        fn xml_never_panics(s in ".{0,200}") {
            let _ = ExtentType::from_xml(&s);
        }

        #[test]
        fn mutated_xml_never_panics(
            edits in prop::collection::vec((any::<prop::sample::Index>(), "[a-z<>\"=/ _&;]{0,3}", any::<bool>()), 1..5),
        ) {
            let mut s = String::from(concat!(
                "<ExtentType name=\"T\" namespace=\"n\" version=\"1.0\" pack_null_compact=\"non_bool\">\n",
                "  <field type=\"int32\" name=\"a\" opt_nullable=\"yes\" pack_relative=\"a\"/>\n",
                "  <field type=\"double\" name=\"d\" pack_scale=\"1e-6\" pack_relative=\"d\"/>\n",
                "  <field type=\"variable32\" name=\"v\" pack_unique=\"yes\"/>\n",
                "  <field type=\"fixedwidth\" name=\"f\" size=\"3\"/>\n",
                "</ExtentType>\n"));
            for (idx, text, delete) in edits {
                let mut i = idx.index(s.len() + 1);
                while !s.is_char_boundary(i) {
                    i -= 1;
                }
                if delete {
                    let mut j = (i + text.len()).min(s.len());
                    while !s.is_char_boundary(j) {
                        j -= 1;
                    }
                    s.replace_range(i..j, "");
                } else {
                    s.insert_str(i, &text);
                }
            }
            if let Ok(t) = ExtentType::from_xml(&s) {
                let _ = t.record_size();
                let mut b = ExtentBuilder::new(Arc::new(t));
                b.start_record();
                let _ = raw::encode_extent(&b, &[], 1);
            }
        }
    }

    fn edits_fix(b: &[u8]) -> bool {
        b.len() % 2 == 0
    }

    fn reseal_be(ext: &mut [u8], be: bool) {
        let mut v = ext[..16].to_vec();
        v.extend_from_slice(&ext[20..]);
        let a = raw::adler32(&v);
        ext[16..20].copy_from_slice(&if be { a.to_be_bytes() } else { a.to_le_bytes() });
    }
}

/// `bytes` (a little-endian file written by [`small_file`]) with its ExtentIndex replaced by
/// `edit(entries)`, encoded again, with a matching trailer: every checksum valid.
fn with_index(bytes: &[u8], edit: impl FnOnce(&mut Vec<(i64, String)>)) -> Vec<u8> {
    let mut trailer: [u8; 28] = bytes[bytes.len() - 28..].try_into().unwrap();
    let index_offset = i64::from_le_bytes(trailer[16..24].try_into().unwrap()) as usize;
    let it = raw::index_type();
    let lookup = |n: &str| (n == it.name()).then(|| Arc::clone(&it));
    let old =
        raw::decode_extent_bytes(&bytes[index_offset..bytes.len() - 28], false, &lookup).unwrap();
    let mut entries: Vec<(i64, String)> = (0..old.len())
        .map(|i| {
            (old.i64(i, 0).unwrap(), String::from_utf8(old.bytes(i, 1).unwrap().to_vec()).unwrap())
        })
        .collect();
    edit(&mut entries);
    let mut b = ExtentBuilder::new(Arc::clone(&it));
    for (off, name) in &entries {
        b.start_record();
        b.set(0, Value::Int64(*off)).unwrap();
        b.set(1, Value::Bytes(name.as_bytes())).unwrap();
    }
    let index = raw::encode_extent(&b, &[Compression::None], 0).unwrap();
    trailer[4..8].copy_from_slice(&(index.len() as i32).to_le_bytes());
    raw::reseal_trailer(&mut trailer, false);
    let mut out = bytes[..index_offset].to_vec();
    out.extend_from_slice(&index);
    out.extend_from_slice(&trailer);
    out
}

#[test]
fn the_index_is_verified_against_the_extents() {
    let dir = common::scratch("verify-index");
    let path = dir.join("ok.ds");
    let good = small_file(&path, vec![Compression::Zlib]);
    let r = DsReader::open(&path).unwrap();
    // XmlType, three extents, the index itself.
    assert_eq!(r.verify_index().unwrap(), Some(5));

    let check = |name: &str, bytes: Vec<u8>| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let r = DsReader::open(&p).unwrap();
        assert!(matches!(r.trailer_status(), TrailerStatus::Valid { .. }), "{name}");
        r.verify_index().unwrap_err().to_string()
    };
    // Re-encoding the same entries is still valid (the helper itself is sound).
    let same = dir.join("same.ds");
    std::fs::write(&same, with_index(&good, |_| {})).unwrap();
    assert_eq!(DsReader::open(&same).unwrap().verify_index().unwrap(), Some(5));

    let err = check(
        "swapped.ds",
        with_index(&good, |e| {
            let (a, b) = (e[1].0, e[4].0);
            e[1].0 = b;
            e[4].0 = a;
        }),
    );
    assert!(
        err.contains(
            "the ExtentIndex names type Test::Small, the extent is DataSeries: ExtentIndex"
        ),
        "{err}"
    );
    let err = check(
        "dropped.ds",
        with_index(&good, |e| {
            e.remove(2);
        }),
    );
    assert!(err.contains("is not listed (4 entries for 5 extents"), "{err}");
    let err = check(
        "twice.ds",
        with_index(&good, |e| {
            let x = e[2].clone();
            e.push(x);
        }),
    );
    assert!(err.contains("entries 2 and 5 both name offset"), "{err}");
    let err = check("nowhere.ds", with_index(&good, |e| e[2].0 += 4));
    assert!(err.contains("where no extent starts"), "{err}");
    // An unfinished file has no index to verify.
    let cut = dir.join("cut.ds");
    std::fs::write(&cut, &good[..good.len() - 28]).unwrap();
    assert_eq!(DsReader::open(&cut).unwrap().verify_index().unwrap(), None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `reseal_extent` makes a damaged extent's checksums valid again, so the damage itself is
/// what a reader meets.
#[test]
fn reseal_extent_repairs_both_checksums() {
    let ty = small_type();
    let lookup = |n: &str| (n == ty.name()).then(|| Arc::clone(&ty));
    for mode in [Compression::None, Compression::Zlib] {
        let ext = raw::encode_extent(&small_extent(&ty, 10), &[mode], 6).unwrap();
        let mut bad = ext.clone();
        let last = bad.len() - 8;
        bad[last] ^= 0x55;
        if raw::decode_extent_bytes(&bad, false, &lookup).is_ok() {
            continue;
        }
        let mut copy = ext.clone();
        copy[16..24].fill(0);
        raw::reseal_extent(&mut copy, false, &lookup).unwrap();
        assert_eq!(copy, ext, "{mode}");
    }
}

/// A type description with an element of thousands of attributes is refused before parsing
/// (the XML parser's duplicate-attribute check is quadratic: a fuzzed trace took 134 s to
/// open); quoted '=' and '>' do not count.
#[test]
fn type_descriptions_with_huge_elements_are_refused() {
    let mut xml = String::from(r#"<ExtentType name="T" namespace="x" version="1.0""#);
    for i in 0..20_000 {
        xml.push_str(&format!(r#" a{i}="v""#));
    }
    xml.push_str(r#"><field type="int32" name="f" /></ExtentType>"#);
    let err = ExtentType::from_xml(&xml).unwrap_err().to_string();
    assert!(err.contains("more than 256 attributes"), "{err}");
    let ok = r#"<ExtentType name="T" namespace="x=>y" version="1.0"><field type="int32" name="f" note="a=b>c" /></ExtentType>"#;
    assert!(ExtentType::from_xml(ok).is_ok());
}

/// A mapped file ([`DsReader::map_file`]) cut short after it was opened: reading an extent
/// the cut took is an error (its pages are mapped in one call, which fails), not a SIGBUS
/// when a record is read; the extent before the cut still reads.
#[test]
fn a_mapped_file_cut_short_is_an_error_not_a_signal() {
    let dir = common::scratch("mapcut");
    let path = dir.join("cut.ds");
    let ty = small_type();
    let opts = WriterOptions { compression: vec![], ..WriterOptions::zlib() };
    let mut w = DsWriter::create(&path, std::slice::from_ref(&ty), opts).unwrap();
    // The second extent spans many pages.
    for n in [5, 20_000, 3] {
        w.write_extent(small_extent(&ty, n)).unwrap();
    }
    w.finish().unwrap();
    let mut r = DsReader::open(&path).unwrap();
    assert!(r.map_file());
    let offsets: Vec<u64> = r.headers().map(|h| h.unwrap().offset).collect();
    assert!(offsets[2] - offsets[1] > 64 << 10, "{offsets:?}");
    // Cut inside the second extent, its header left whole.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(offsets[1] + 4096).unwrap();
    let e = r.read_extent_at(offsets[1]).expect_err("the extent was cut");
    let msg = e.to_string();
    assert!(!msg.contains('\n') && msg.contains("mapping"), "{msg}");
    assert_eq!(r.read_extent_at(offsets[0]).unwrap().len(), 5);
}

/// Mapped file pages count in a process's resident memory: each extent's pages are unmapped
/// again once its last slice is dropped, so reading a mapped file extent after extent keeps
/// about one extent resident, not the whole file.
#[test]
fn a_mapped_file_read_extent_by_extent_stays_out_of_resident_memory() {
    let rss_file = || -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = s.lines().find(|l| l.starts_with("RssFile:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    };
    let dir = common::scratch("maprss");
    let path = dir.join("big.ds");
    let ty = Arc::new(
        ExtentType::builder("Test::Big")
            .field(FieldDesc::new("data", FieldType::Variable32))
            .build()
            .unwrap(),
    );
    let opts = WriterOptions { compression: vec![], ..WriterOptions::zlib() };
    let mut w = DsWriter::create(&path, std::slice::from_ref(&ty), opts).unwrap();
    let value: Vec<u8> = (0..1 << 20).map(|i| (i * 7 % 251) as u8).collect();
    // 16 extents of 4 MiB: 64 MiB.
    for _ in 0..16 {
        let mut b = ExtentBuilder::new(Arc::clone(&ty));
        for _ in 0..4 {
            b.start_record();
            b.set(0, Value::Bytes(&value)).unwrap();
        }
        w.write_extent(b).unwrap();
    }
    w.finish().unwrap();
    let mut r = DsReader::open(&path).unwrap();
    assert!(r.map_file());
    let before = rss_file();
    let mut peak = 0;
    let mut n = 0;
    for h in r.headers() {
        let h = h.unwrap();
        if h.type_name != "Test::Big" {
            continue;
        }
        let e = r.read_extent_at(h.offset).unwrap();
        for i in 0..e.len() {
            assert!(e.bytes(i, 0).unwrap() == &value[..]);
            n += 1;
        }
        peak = peak.max(rss_file().saturating_sub(before));
    }
    assert_eq!(n, 64);
    // One extent (4 MiB) resident at a time, with room for the boundary pages and the
    // test binary's own file pages; the whole file would be 64 MiB.
    assert!(peak < 16 << 20, "{} MiB of mapped pages resident", peak >> 20);
}
