//! Proof against third-party DataSeries files (written by the C++ library and Re-Animator).

mod common;

use dataseries::{text, DsReader, TrailerStatus};

#[test]
fn few_edges_matches_sort_file() {
    let Some(root) = common::testdata() else { return };
    let ex = root.join("dataseries-examples");
    let r = DsReader::open(ex.join("few-edges.ds")).unwrap();
    assert_eq!(r.trailer_status(), TrailerStatus::Valid { index_offset: 348 });
    let mut rows = String::new();
    for e in r.extents() {
        let e = e.unwrap();
        assert_eq!(e.extent_type().name(), "edge_list_graph");
        let (a, b) =
            (e.extent_type().field_index("a").unwrap(), e.extent_type().field_index("b").unwrap());
        for i in 0..e.len() {
            rows += &format!("{} {}\n", e.i32(i, a).unwrap(), e.i32(i, b).unwrap());
        }
    }
    assert_eq!(rows, std::fs::read_to_string(ex.join("few-edges.sort")).unwrap());
    let idx = r.index().unwrap().unwrap();
    assert_eq!(
        idx,
        vec![
            (40, "DataSeries: XmlType".to_string()),
            (232, "edge_list_graph".into()),
            (348, "DataSeries: ExtentIndex".into())
        ]
    );
}

#[test]
fn every_valid_fixture_decodes_with_all_checks() {
    let Some(root) = common::testdata() else { return };
    let mut total_extents = 0;
    let mut modes = std::collections::BTreeSet::new();
    for p in common::valid_fixtures(&root) {
        let r = DsReader::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let data = std::fs::read(&p).unwrap();
        let xmltype = dataseries::raw::parse_extent_header(&data[40..], r.is_big_endian()).unwrap();
        modes.extend([xmltype.fixed_mode, xmltype.variable_mode]);
        let TrailerStatus::Valid { .. } = r.trailer_status() else {
            panic!("{}: trailer {:?}", p.display(), r.trailer_status())
        };
        let headers: Vec<_> = r.headers().map(|h| h.unwrap()).collect();
        let idx = r.index().unwrap().unwrap();
        // The index lists the XmlType extent, every extent, and itself.
        assert_eq!(idx.len(), headers.len() + 1, "{}", p.display());
        assert_eq!(idx[0].0, 40);
        for (h, (off, name)) in headers.iter().zip(&idx[1..]) {
            assert_eq!((h.offset, &h.type_name), (*off, name));
        }
        assert_eq!(r.verify_index().unwrap(), Some(idx.len()), "{}", p.display());
        // Every extent (index included) decodes with all checks, by random access...
        let mut nrec = 0usize;
        for h in &headers {
            modes.extend([h.fixed_mode, h.variable_mode]);
            let e = r.read_extent_at(h.offset).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(e.len(), h.nrecords as usize);
            for i in 0..e.len() {
                for f in 0..e.extent_type().fields().len() {
                    let _ = e.value(i, f);
                }
            }
            nrec += e.len();
            total_extents += 1;
        }
        // ...and by streaming (user extents only).
        let streamed: usize = r.extents().map(|e| e.unwrap().len()).sum();
        let index_records = headers.last().unwrap().nrecords as usize;
        assert_eq!(streamed, nrec - index_records, "{}", p.display());
    }
    assert!(total_extents >= 400, "{total_extents}");
    // none, lzo, zlib, bz2 and lzf sections all occur (and decoded); no fixture uses 5..7.
    assert_eq!(modes.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
}

/// The big-endian twins of the little-endian fixtures hold the same records.
#[test]
fn big_and_little_endian_twins_decode_identically() {
    let Some(root) = common::testdata() else { return };
    let d = root.join("dataseries-check-data");
    for stem in ["complex", "h03126", "pss5"] {
        let rows = |f: &str| -> Vec<u8> {
            let r = DsReader::open(d.join(format!("{stem}.ds-{f}"))).unwrap();
            assert_eq!(r.is_big_endian(), f == "bigend");
            let mut out = Vec::new();
            for e in r.extents() {
                let e = e.unwrap();
                let mut one = Vec::new();
                text::write_extent(&e, &mut one).unwrap();
                // Drop the "# Extent" and field-name lines: extent boundaries may differ.
                let body = one.splitn(3, |&b| b == b'\n').nth(2).unwrap_or(&[]).to_vec();
                out.extend(body);
            }
            out
        };
        let (le, be) = (rows("littleend"), rows("bigend"));
        assert!(!le.is_empty());
        assert!(le == be, "{stem}: big- and little-endian files decode differently");
    }
}

fn ds2txt(path: &std::path::Path) -> Vec<u8> {
    let r = DsReader::open(path).unwrap();
    let mut out = Vec::new();
    text::write_ds2txt(&r, &mut out, &Default::default()).unwrap();
    out
}

#[test]
fn complex_txt_is_reproduced_exactly() {
    let Some(root) = common::testdata() else { return };
    let d = root.join("dataseries-check-data");
    let want = std::fs::read(d.join("complex.txt")).unwrap();
    for f in ["complex.ds-littleend", "complex.ds-bigend"] {
        let got = ds2txt(&d.join(f));
        if got != want {
            let g = String::from_utf8_lossy(&got);
            let w = String::from_utf8_lossy(&want);
            for (i, (a, b)) in g.lines().zip(w.lines()).enumerate() {
                assert_eq!(a, b, "{f}: first difference at line {}", i + 1);
            }
            panic!("{f}: output length {} != {}", got.len(), want.len());
        }
    }
}

/// `ds2txt.test.ref`: record_id, packet_at (Tfrac printed sec.nsec) and dest (IPv4) of the
/// first 30 Trace::NFS::common records; `ds2txt-where.test.ref`: those with
/// record_id < 38549988050.
#[test]
fn ds2txt_test_refs_are_reproduced() {
    let Some(root) = common::testdata() else { return };
    let d = root.join("dataseries-check-data");
    let r = DsReader::open(d.join("nfs-2.set-1.20k.ds")).unwrap();
    let mut rows = Vec::new();
    for e in r.extents_of("Trace::NFS::common") {
        let e = e.unwrap();
        let t = e.extent_type();
        let (id, at, dest) = (
            t.field_index("record_id").unwrap(),
            t.field_index("packet_at").unwrap(),
            t.field_index("dest").unwrap(),
        );
        for i in 0..e.len() {
            let id = e.i64(i, id).unwrap();
            let line = format!(
                "{id} {} {}\n",
                text::format_tfrac_as_sec_nsec(e.i64(i, at).unwrap()),
                text::format_ipv4(e.i32(i, dest).unwrap())
            );
            rows.push((id, line));
        }
    }
    let first30: String = rows.iter().take(30).map(|r| r.1.as_str()).collect();
    assert_eq!(first30, std::fs::read_to_string(d.join("ds2txt.test.ref")).unwrap());
    let filtered: String =
        rows.iter().filter(|r| r.0 < 38549988050).map(|r| r.1.as_str()).collect();
    assert_eq!(filtered, std::fs::read_to_string(d.join("ds2txt-where.test.ref")).unwrap());
}

/// The four deliberately corrupted files: a one-line error naming the bad extent's offset and
/// the failed check; everything before the damage is still readable.
#[test]
fn corrupt_recovery_files_fail_at_the_damaged_extent() {
    let Some(root) = common::testdata() else { return };
    let d = root.join("dataseries-check-data/recovery");
    let original: Vec<u64> = {
        let r = DsReader::open(d.join("original.ds")).unwrap();
        r.headers()
            .map(|h| h.unwrap())
            .filter(|h| h.type_name != "DataSeries: ExtentIndex")
            .map(|h| h.offset)
            .collect()
    };
    let check_one_line = |msg: &str| assert!(!msg.contains('\n'), "{msg}");

    // Stomped type library: open fails on the XmlType extent at 40.
    let e = DsReader::open(d.join("corrupt-stomp-beginning.ds")).unwrap_err();
    let msg = e.to_string();
    check_one_line(&msg);
    assert!(msg.contains("offset 40") && msg.contains("adler32"), "{msg}");
    assert_eq!(e.extent_offset(), Some(40));

    for (file, bad_offset) in
        [("corrupt-100-zeros-at-50K.ds", 42256u64), ("corrupt-two-extents.ds", 544)]
    {
        let r = DsReader::open(d.join(file)).unwrap();
        let mut good = Vec::new();
        let mut err = None;
        for e in r.extents() {
            match e {
                Ok(e) => good.push(e.offset().unwrap()),
                Err(e) => err = Some(e),
            }
        }
        let err = err.unwrap_or_else(|| panic!("{file}: no error"));
        let msg = err.to_string();
        check_one_line(&msg);
        assert!(
            msg.contains(&format!("offset {bad_offset}")) && msg.contains("adler32"),
            "{file}: {msg}"
        );
        assert_eq!(err.extent_offset(), Some(bad_offset));
        // The good extents before the damage were all delivered, in order.
        let before: Vec<u64> =
            original.iter().copied().filter(|&o| o > 40 && o < bad_offset).collect();
        assert_eq!(good, before, "{file}");
        // Random access to the damaged extent reports the same.
        assert!(r.read_extent_at(bad_offset).unwrap_err().to_string().contains("adler32"));
    }

    // Overwritten tail: the trailer is gone; all user extents read, then a trailer error.
    let r = DsReader::open(d.join("corrupt-stomp-end.ds")).unwrap();
    assert_eq!(r.trailer_status(), TrailerStatus::Missing);
    let mut n = 0;
    let mut err = None;
    for e in r.extents() {
        match e {
            Ok(_) => n += 1,
            Err(e) => err = Some(e),
        }
    }
    assert_eq!(n, original.len(), "all user extents before the stomped tail");
    let err = err.expect("a trailer error");
    let msg = err.to_string();
    check_one_line(&msg);
    // The stomp also hit the header of the index extent at 83040, where reading stops.
    assert!(
        msg.starts_with("trailer at offset 83276: marker check failed")
            && msg.contains("offset 83040"),
        "{msg}"
    );
    assert_eq!(err.extent_offset(), Some(83040));
    assert!(r.index().unwrap().is_none());
    assert!(r.headers().last().unwrap().is_err());
    assert!(r
        .read_extent_at(83040)
        .unwrap_err()
        .to_string()
        .contains("extent at offset 83040: header check failed"));
}

/// Decode then re-encode every extent of every valid fixture with its original compression
/// modes and byte order: identical uncompressed fixed and variable sections and bjhash, and
/// identical bytes for extents stored uncompressed (like `dataseries_proto.py repack`).
#[test]
fn every_fixture_extent_repacks_identically() {
    use dataseries::raw::{self, EncodeOptions};
    use dataseries::{Compression, ExtentBuilder};
    let Some(root) = common::testdata() else { return };
    let (mut extents, mut raw_identical) = (0, 0);
    for p in common::valid_fixtures(&root) {
        let data = std::fs::read(&p).unwrap();
        let r = DsReader::open(&p).unwrap();
        let be = r.is_big_endian();
        let lookup = |n: &str| r.type_by_name(n).cloned();
        let first = raw::parse_extent_header(&data[40..], be).unwrap();
        let mut all = vec![(40u64, first.packed_len)];
        all.extend(r.headers().map(|h| h.unwrap()).map(|h| (h.offset, h.packed_len)));
        for (off, len) in all {
            let bytes = &data[off as usize..(off + len) as usize];
            let orig = raw::decode_sections(bytes, be, &lookup).unwrap();
            let e = raw::decode_extent_bytes(bytes, be, &lookup).unwrap();
            let b = ExtentBuilder::from_extent(&e);
            let fm = [Compression::from_mode(orig.header.fixed_mode).unwrap()];
            let vm = [Compression::from_mode(orig.header.variable_mode).unwrap()];
            let opts = EncodeOptions { fixed_modes: &fm, var_modes: &vm, level: 9, big_endian: be };
            let (ours, _) = raw::encode_extent_with(&b, &opts).unwrap();
            let again = raw::decode_sections(&ours, be, &lookup).unwrap();
            let what = format!("{} @{off} {}", p.display(), orig.header.type_name);
            assert!(again.fixed == orig.fixed, "{what}: fixed section differs");
            assert!(again.variable == orig.variable, "{what}: variable section differs");
            assert_eq!(again.bjhash, orig.bjhash, "{what}");
            if orig.header.fixed_mode == 0 && orig.header.variable_mode == 0 {
                assert!(ours == bytes, "{what}: uncompressed extent bytes differ");
                raw_identical += 1;
            }
            extents += 1;
        }
    }
    assert!(extents >= 426, "{extents}");
    assert!(raw_identical > 0);
    println!("repacked {extents} extents, {raw_identical} byte-identical uncompressed extents");
}

/// The trailer's chained checksum (informational, never enforced) recomputed from every
/// extent's adler32 and bjhash: it matches in the 18 fixtures written after 2007 and differs
/// in the 4 older ones (which stored random bytes), as the format notes say.
#[test]
fn chained_checksum_matches_post_2007_fixtures() {
    use dataseries::raw;
    let Some(root) = common::testdata() else { return };
    let mut differs = Vec::new();
    let files = common::valid_fixtures(&root);
    for p in &files {
        let data = std::fs::read(p).unwrap();
        let r = DsReader::open(p).unwrap();
        let be = r.is_big_endian();
        let word = |b: &[u8]| {
            let w = [b[0], b[1], b[2], b[3]];
            if be {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        let mut offsets = vec![40u64];
        offsets.extend(r.headers().map(|h| h.unwrap().offset));
        let mut chained = 0u32;
        for off in offsets {
            let at = off as usize;
            let (adler, bj) = (word(&data[at + 16..]), word(&data[at + 20..]));
            chained = raw::mix3(adler ^ bj, chained, 1972);
        }
        let stored = word(&data[data.len() - 16..]);
        if stored != chained {
            differs.push(p.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    differs.sort();
    assert_eq!(
        differs,
        ["complex.ds-bigend", "h03126.ds-bigend", "pss5.ds-bigend", "pss5.ds-littleend"]
    );
    assert_eq!(files.len() - differs.len(), 18);
}

/// Every fixture's extents read through a memory map ([`DsReader::map_file`]: an extent
/// stored uncompressed is decoded in place, a big-endian one copied to be swapped) are the
/// extents read into buffers.
#[test]
fn extents_read_through_a_map_are_the_extents_read_into_buffers() {
    let Some(root) = common::testdata() else { return };
    let mut mapped_raw = 0;
    for p in common::valid_fixtures(&root) {
        let plain = DsReader::open(&p).unwrap();
        let mut mapped = DsReader::open(&p).unwrap();
        assert!(mapped.map_file(), "{}: a plain file maps", p.display());
        for h in plain.headers() {
            let h = h.unwrap();
            let text = |r: &DsReader| {
                let e =
                    r.read_extent_at(h.offset).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                let mut out = Vec::new();
                text::write_extent(&e, &mut out).unwrap();
                out
            };
            assert!(text(&plain) == text(&mapped), "{} extent at {}", p.display(), h.offset);
            if h.fixed_mode == 0 && h.variable_mode == 0 {
                mapped_raw += 1;
            }
        }
        // A clone made after mapping reads through the map too, and streams the same.
        let a: usize = plain.extents().map(|e| e.unwrap().len()).sum();
        let b: usize = mapped.clone().extents().map(|e| e.unwrap().len()).sum();
        assert_eq!(a, b, "{}", p.display());
    }
    assert!(mapped_raw > 0, "some fixture extents are stored uncompressed");
}
