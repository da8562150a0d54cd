//! Forgeries of sealed traces (issue 39, item 5): every single-byte change, cut, dropped,
//! duplicated or swapped extent, rewritten trailer, header or index of a small sealed trace
//! (plain, lz4, encrypted) must make `verify` say so (exit 1, never 0 or 2), and a reader
//! given the key must either fail or read exactly what the untampered trace holds (a cut
//! trace: a note, and only records of the original).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dataseries::{raw, Compression, DsReader, ExtentBuilder, Value, WriterOptions};
use ra_trace::format::{format_event, FormatOptions};
use ra_trace::key::Key;
use ra_trace::{ArgValue, Event, TraceReader, TraceWriter, WriterConfig};

fn key() -> Key {
    Key::from_bytes([42; 32])
}

fn dir() -> PathBuf {
    // Memory-backed where there is one: tens of thousands of small files are written.
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
    let d = base.join(format!("ra-forgery-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small trace: three call types, flushed three times (so four seals with the final one).
fn write_trace(path: &Path, compression: &[Compression], encrypt: bool) {
    let k = key();
    let ds = WriterOptions {
        compression: compression.to_vec(),
        threads: 0,
        seal: Some(k.seal_options([3; 16])),
        encrypt: encrypt.then(|| k.encrypt_options([4; 16])),
        ..WriterOptions::uncompressed()
    };
    let cfg = WriterConfig { ds, ..WriterConfig::default() };
    let f = std::fs::File::create(path).unwrap();
    let mut w = TraceWriter::new(f, &[("command", b"forgery test")], cfg).unwrap();
    let def = |n| ra_syscalls::lookup(n).unwrap();
    for i in 0..24i64 {
        for (name, args) in [
            (
                "openat",
                vec![
                    ArgValue::Int(-100),
                    ArgValue::data(format!("/tmp/f{i}\0").into_bytes()),
                    ArgValue::Int(0),
                    ArgValue::Int(0o644),
                ],
            ),
            ("read", vec![ArgValue::Int(3), ArgValue::data(vec![i as u8; 5]), ArgValue::Int(5)]),
            ("close", vec![ArgValue::Int(3)]),
        ] {
            let mut e = Event::new(def(name));
            e.time_called = Some(1_700_000_000_000_000_000 + i * 1000);
            e.time_returned = Some(1_700_000_000_000_000_000 + i * 1000 + 10);
            e.pid = Some(10);
            e.tid = Some(10);
            e.ret = Some(if name == "openat" { 3 } else { 0 });
            e.errno = Some(0);
            for (slot, a) in e.args.iter_mut().zip(args) {
                *slot = a;
            }
            w.append(&e).unwrap();
        }
        if i % 8 == 7 {
            w.flush().unwrap();
        }
    }
    w.finish().unwrap();
}

/// What `verify` exits with.
fn verify_code(path: &Path) -> u8 {
    match dataseries::seal::verify_file(path, &key().seal_key()) {
        Ok(dataseries::seal::Verdict::Intact(_)) => 0,
        Ok(dataseries::seal::Verdict::Tampered(..)) => 1,
        Err(_) => 2,
    }
}

/// A reader's view: what it printed, and whether it noted the trace as cut.
struct Read {
    out: Vec<String>,
    cut: bool,
}

/// `dump`: every event formatted, the info and loss records.
fn dump(path: &Path) -> Result<Read, String> {
    let tr = TraceReader::open(path).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (k, v) in tr.info() {
        out.push(format!("info {k}={}", String::from_utf8_lossy(v)));
    }
    let opts = FormatOptions { strsize: 0, ..FormatOptions::default() };
    for e in tr.events(None) {
        out.push(format_event(&e.map_err(|e| e.to_string())?, &opts));
    }
    Ok(Read { out, cut: cut_noted(&tr) })
}

fn cut_noted(tr: &TraceReader) -> bool {
    tr.incomplete().is_some()
}

/// `info`: every extent header, the trailer and index checks, every value of every extent.
fn info(path: &Path) -> Result<Read, String> {
    let ds = DsReader::open(path).map_err(|e| e.to_string())?;
    let cut = ds.incomplete().is_some();
    let mut out = Vec::new();
    if !cut {
        out.push(format!("trailer {:?} len {}", ds.trailer_status(), ds.file_len()));
    }
    let mut extents = Vec::new();
    for h in ds.headers() {
        let h = h.map_err(|e| e.to_string())?;
        extents.push((h.offset, h.type_name.clone()));
        out.push(format!(
            "{} {} {} {} {}/{}",
            h.offset, h.type_name, h.nrecords, h.packed_len, h.fixed_mode, h.variable_mode
        ));
    }
    if matches!(ds.trailer_status(), dataseries::TrailerStatus::Valid { .. }) {
        let n = ds.verify_index_with(extents).map_err(|e| e.to_string())?;
        out.push(format!("index {n:?}"));
    }
    for e in ds.extents() {
        let e = e.map_err(|e| e.to_string())?;
        let mut s = format!("{} {}", e.extent_type().name(), e.len());
        for r in 0..e.len() {
            for f in 0..e.extent_type().fields().len() {
                s.push_str(&format!(" {:?}", e.value(r, f)));
            }
        }
        out.push(s);
    }
    let tr = TraceReader::from_ds(ds).map_err(|e| e.to_string())?;
    for (k, v) in tr.info() {
        out.push(format!("info {k}={}", String::from_utf8_lossy(v)));
    }
    Ok(Read { out, cut: cut || cut_noted(&tr) })
}

/// How a reader took a forgery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// It failed (the forgery was refused).
    Refused,
    /// It read exactly what the original holds (the change touched nothing it uses).
    Same,
    /// It noted a cut and read only lines of the original, in order.
    CutNoted,
    /// It read something else without failing, or a cut without noting it: a finding.
    Accepted,
}

fn judge(r: Result<Read, String>, original: &[String]) -> Outcome {
    let Ok(r) = r else { return Outcome::Refused };
    if r.out == original {
        return Outcome::Same;
    }
    // Cut: every line printed is a line of the original, in the original's order.
    let mut it = original.iter();
    let subsequence = r.out.iter().all(|l| it.any(|o| o == l));
    if r.cut && subsequence {
        Outcome::CutNoted
    } else {
        Outcome::Accepted
    }
}

/// A file's layout: its extents `(offset, type name, length)` in file order.
fn layout(path: &Path) -> Vec<(usize, String, usize)> {
    let r = DsReader::open(path).unwrap();
    r.raw_extents().map(|x| x.unwrap()).map(|(o, n, b)| (o as usize, n, b.len())).collect()
}

/// Recomputes the checksums of the extent holding `pos` and the trailer's: what anyone can
/// do to a changed file, no key needed.
fn reseal(file: &mut [u8], lay: &[(usize, String, usize)], pos: usize) {
    let lib = library(file);
    let lookup = |n: &str| lib.get(n).cloned();
    if let Some((o, _, l)) = lay.iter().find(|(o, _, l)| (*o..o + l).contains(&pos)) {
        if *o + *l <= file.len() {
            let _ = raw::reseal_extent(&mut file[*o..o + l], false, &lookup);
        }
    }
    let n = file.len();
    if n >= 68 {
        let mut t: [u8; 28] = file[n - 28..].try_into().unwrap();
        raw::reseal_trailer(&mut t, false);
        file[n - 28..].copy_from_slice(&t);
    }
}

type Library = BTreeMap<String, Arc<dataseries::ExtentType>>;

fn library(file: &[u8]) -> Library {
    let mut lib = Library::new();
    for t in [raw::xmltype_type(), raw::index_type()] {
        lib.insert(t.name().to_string(), t);
    }
    let Ok(h) = raw::parse_extent_header(&file[40..], false) else { return lib };
    let Some(x) = file.get(40..40 + h.packed_len as usize) else { return lib };
    let xt = raw::xmltype_type();
    let Ok(e) = raw::decode_extent_bytes(x, false, &|n| (n == xt.name()).then(|| xt.clone()))
    else {
        return lib;
    };
    for r in 0..e.len() {
        if let Some(t) = e
            .bytes(r, 0)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|x| dataseries::ExtentType::from_xml(x).ok())
        {
            lib.insert(t.name().to_string(), Arc::new(t));
        }
    }
    lib
}

/// A file's extents: (type name, bytes), in file order.
type Extents = Vec<(String, Vec<u8>)>;

/// A plain file rebuilt from its extents: a fresh index (listing `ext`) and trailer, as a
/// forger without the key would write them after dropping, duplicating or moving extents.
fn rebuild(ext: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = raw::file_header().to_vec();
    let mut index = ExtentBuilder::new(raw::index_type());
    let mut chained = 0u32;
    for (i, (name, b)) in ext.iter().enumerate() {
        if i > 0 {
            index.start_record();
            index.set(0, Value::Int64(out.len() as i64)).unwrap();
            index.set(1, Value::Bytes(name.as_bytes())).unwrap();
        }
        chained = extent_check(chained, b);
        out.extend_from_slice(b);
    }
    let at = out.len();
    index.start_record();
    index.set(0, Value::Int64(at as i64)).unwrap();
    index.set(1, Value::Bytes(b"DataSeries: ExtentIndex")).unwrap();
    let ib = raw::encode_extent(&index, &[], 6).unwrap();
    chained = extent_check(chained, &ib);
    out.extend_from_slice(&ib);
    let mut t = [0u8; 28];
    t[..4].copy_from_slice(&[0xff; 4]);
    t[4..8].copy_from_slice(&(ib.len() as i32).to_le_bytes());
    t[12..16].copy_from_slice(&chained.to_le_bytes());
    t[16..24].copy_from_slice(&(at as i64).to_le_bytes());
    raw::reseal_trailer(&mut t, false);
    out.extend_from_slice(&t);
    out
}

fn extent_check(chained: u32, b: &[u8]) -> u32 {
    let h = u32::from_le_bytes(b[20..24].try_into().unwrap());
    let a = u32::from_le_bytes(b[16..20].try_into().unwrap());
    raw::mix3(h ^ a, chained, 1972)
}

/// The forgeries of one plain (unencrypted) sealed file: (what, bytes).
/// Which bytes to flip: every `stride`th outside the type library's body (the header, the
/// records, the seals, the index and the trailer), every `xml_stride`th inside it (one
/// extent, all under one MAC: its header and first bytes all the same).
fn positions(
    lay: &[(usize, String, usize)],
    len: usize,
    stride: usize,
    xml_stride: usize,
) -> Vec<usize> {
    let (xo, _, xl) = &lay[0];
    let body = xo + 64..xo + xl;
    let mut v: Vec<usize> = (0..len).filter(|p| !body.contains(p)).step_by(stride).collect();
    v.extend(body.step_by(xml_stride));
    v.sort_unstable();
    v
}

fn plain_forgeries(
    orig: &[u8],
    lay: &[(usize, String, usize)],
    flips: &[usize],
    v: &mut dyn FnMut(String, Vec<u8>),
) {
    for &pos in flips {
        let mut f = orig.to_vec();
        f[pos] ^= 0x01;
        v(format!("flip {pos}"), f.clone());
        let mut g = orig.to_vec();
        g[pos] ^= 0x80;
        reseal(&mut g, lay, pos);
        if g != orig {
            v(format!("flip {pos} resealed"), g);
        }
    }
    // Cuts: at every extent boundary, inside every extent, inside the trailer.
    for (o, _, l) in lay {
        for cut in [*o, o + 1, o + l / 2, o + l - 1] {
            v(format!("cut at {cut}"), orig[..cut].to_vec());
        }
    }
    for back in 1..=28 {
        v(format!("cut {back} before the end"), orig[..orig.len() - back].to_vec());
    }
    let ext: Vec<(String, Vec<u8>)> =
        lay.iter().map(|(o, n, l)| (n.clone(), orig[*o..o + l].to_vec())).collect();
    let body = &ext[..ext.len() - 1]; // without the index
    let mut edits: Vec<(String, Extents)> = Vec::new();
    for i in 1..body.len() {
        let mut e = body.to_vec();
        e.remove(i);
        edits.push((format!("drop extent {i}"), e));
        let mut e = body.to_vec();
        e.insert(i, body[i].clone());
        edits.push((format!("duplicate extent {i}"), e));
        if i + 1 < body.len() {
            let mut e = body.to_vec();
            e.swap(i, i + 1);
            edits.push((format!("swap extents {i} and {}", i + 1), e));
        }
    }
    // Everything after the last extent of a flush dropped (a recording cut at a seal), the
    // index and trailer rebuilt.
    for i in 1..body.len() {
        edits.push((format!("keep {i} extents"), body[..i].to_vec()));
    }
    for (what, e) in edits {
        v(format!("{what}, index rebuilt"), rebuild(&e));
        let mut raw_join: Vec<u8> = orig[..40].to_vec();
        for (_, b) in &e {
            raw_join.extend_from_slice(b);
        }
        raw_join.extend_from_slice(&orig[lay.last().unwrap().0..]);
        v(format!("{what}, old index"), raw_join);
    }
    // The file header's NaN payload and sign.
    for nan in [0x7ff8_0000_0000_0001u64, 0xfff8_0000_0000_0000, 0x7ff0_0000_0000_0001] {
        let mut f = orig.to_vec();
        f[32..40].copy_from_slice(&nan.to_le_bytes());
        v(format!("NaN {nan:x}"), f);
    }
    // The trailer's chained checksum, its hash made right.
    let n = orig.len();
    let mut f = orig.to_vec();
    f[n - 16] ^= 0x10;
    let mut t: [u8; 28] = f[n - 28..].try_into().unwrap();
    raw::reseal_trailer(&mut t, false);
    f[n - 28..].copy_from_slice(&t);
    v("trailer checksum field".into(), f);
    // The index re-encoded compressed, and with its entries in another order.
    let (io, _, il) = lay.last().unwrap();
    let lib = library(orig);
    let ix =
        raw::decode_extent_bytes(&orig[*io..io + il], false, &|n| lib.get(n).cloned()).unwrap();
    let entries: Vec<(i64, Vec<u8>)> =
        (0..ix.len()).map(|r| (ix.i64(r, 0).unwrap(), ix.bytes(r, 1).unwrap().to_vec())).collect();
    for (what, order, modes) in [
        ("index lz4", (0..entries.len()).collect::<Vec<_>>(), &[Compression::Lz4][..]),
        ("index reversed", (0..entries.len()).rev().collect(), &[][..]),
    ] {
        let mut b = ExtentBuilder::new(raw::index_type());
        for &i in &order {
            b.start_record();
            b.set(0, Value::Int64(entries[i].0)).unwrap();
            b.set(1, Value::Bytes(&entries[i].1)).unwrap();
        }
        let ib = raw::encode_extent(&b, modes, 6).unwrap();
        let mut f = orig[..*io].to_vec();
        f.extend_from_slice(&ib);
        let mut t = [0u8; 28];
        t[..4].copy_from_slice(&[0xff; 4]);
        t[4..8].copy_from_slice(&(ib.len() as i32).to_le_bytes());
        t[12..16].copy_from_slice(&orig[n - 16..n - 12]);
        t[16..24].copy_from_slice(&(*io as i64).to_le_bytes());
        raw::reseal_trailer(&mut t, false);
        f.extend_from_slice(&t);
        v(what.into(), f);
    }
    // The seal removed: its type left out of the type library, its extents dropped.
    let xt = raw::xmltype_type();
    let x = raw::decode_extent_bytes(&body[0].1, false, &|n| (n == xt.name()).then(|| xt.clone()))
        .unwrap();
    let mut b = ExtentBuilder::new(xt.clone());
    for r in 0..x.len() {
        let xml = x.bytes(r, 0).unwrap();
        if !String::from_utf8_lossy(xml).contains("Reanimator::Seal") {
            b.start_record();
            b.set(0, Value::Bytes(xml)).unwrap();
        }
    }
    let mut e = vec![(body[0].0.clone(), raw::encode_extent(&b, &[Compression::Lz4], 6).unwrap())];
    e.extend(body[1..].iter().filter(|(n, _)| n != "Reanimator::Seal").cloned());
    v("seal removed".into(), rebuild(&e));
    // The final seal re-encoded: compressed, and with another key id.
    let fi = lay.len() - 2;
    let (fo, _, fl) = &lay[fi];
    let fs =
        raw::decode_extent_bytes(&orig[*fo..fo + fl], false, &|n| lib.get(n).cloned()).unwrap();
    for (what, modes, key_id) in [
        ("final seal lz4", &[Compression::Lz4][..], None),
        ("final seal key id", &[][..], Some(b"12345678")),
    ] {
        let ty = fs.extent_type().clone();
        let mut b = ExtentBuilder::new(ty.clone());
        for r in 0..fs.len() {
            b.start_record();
            for f in 0..ty.fields().len() {
                match (f, key_id) {
                    (1, Some(id)) => b.set(f, Value::Bytes(id)).unwrap(),
                    _ => b.set(f, fs.value(r, f)).unwrap(),
                }
            }
        }
        let sb = raw::encode_extent(&b, modes, 6).unwrap();
        let mut e = body.to_vec();
        e[fi] = ("Reanimator::Seal".into(), sb);
        v(what.into(), rebuild(&e));
    }
}

/// The chunks of an encrypted file: (offset, length) of each, head and tag included.
fn chunks(file: &[u8]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut at = 64;
    while at + 8 <= file.len() {
        let len = u32::from_le_bytes(file[at..at + 4].try_into().unwrap()) as usize;
        v.push((at, 8 + len + 16));
        at += 8 + len + 16;
    }
    v
}

fn encrypted_forgeries(orig: &[u8], stride: usize, v: &mut dyn FnMut(String, Vec<u8>)) {
    for pos in (0..orig.len()).step_by(stride) {
        let mut f = orig.to_vec();
        f[pos] ^= 0x01;
        v(format!("flip {pos}"), f);
    }
    let ch = chunks(orig);
    for (i, (o, l)) in ch.iter().enumerate() {
        for cut in [*o, o + 4, o + l / 2, o + l - 1] {
            v(format!("cut at {cut} (chunk {i})"), orig[..cut].to_vec());
        }
        let mut f = orig[..*o].to_vec();
        f.extend_from_slice(&orig[o + l..]);
        v(format!("drop chunk {i}"), f);
        let mut f = orig[..o + l].to_vec();
        f.extend_from_slice(&orig[*o..]);
        v(format!("duplicate chunk {i}"), f);
        if i + 1 < ch.len() {
            let (o2, l2) = ch[i + 1];
            let mut f = orig[..*o].to_vec();
            f.extend_from_slice(&orig[o2..o2 + l2]);
            f.extend_from_slice(&orig[*o..o + l]);
            f.extend_from_slice(&orig[o2 + l2..]);
            v(format!("swap chunks {i} and {}", i + 1), f);
        }
    }
    let mut f = orig.to_vec();
    f.extend_from_slice(b"appended");
    v("appended".into(), f);
}

#[derive(Default)]
struct Tally {
    forgeries: usize,
    verify: BTreeMap<u8, usize>,
    dump: BTreeMap<Outcome, usize>,
    info: BTreeMap<Outcome, usize>,
    findings: Vec<String>,
}

fn run(name: &str, orig_path: &Path, gen: impl FnOnce(&mut dyn FnMut(String, Vec<u8>))) -> Tally {
    let d = dir();
    let (dump0, info0) = (dump(orig_path).unwrap(), info(orig_path).unwrap());
    assert!(!dump0.cut && !info0.cut, "{name}: the original is complete");
    assert_eq!(verify_code(orig_path), 0, "{name}: the original verifies");
    let orig = std::fs::read(orig_path).unwrap();
    let p = d.join(format!("{name}-forged.ds"));
    let mut t = Tally::default();
    gen(&mut |what, f| {
        if f == orig {
            return;
        }
        t.forgeries += 1;
        std::fs::write(&p, &f).unwrap();
        let code = verify_code(&p);
        *t.verify.entry(code).or_default() += 1;
        let dj = judge(dump(&p), &dump0.out);
        let ij = judge(info(&p), &info0.out);
        *t.dump.entry(dj).or_default() += 1;
        *t.info.entry(ij).or_default() += 1;
        if code != 1 || dj == Outcome::Accepted || ij == Outcome::Accepted {
            t.findings.push(format!("{name}: {what}: verify {code}, dump {dj:?}, info {ij:?}"));
        }
    });
    eprintln!(
        "{name}: {} forgeries ({} bytes): verify {:?}; dump {:?}; info {:?}",
        t.forgeries,
        orig.len(),
        t.verify,
        t.dump,
        t.info
    );
    t
}

/// `RA_FORGERY_FULL=1`: every byte of every file (of the uncompressed one's type library,
/// every 7th); otherwise a dense sample that takes about a minute.
fn full() -> bool {
    std::env::var_os("RA_FORGERY_FULL").is_some_and(|v| v == "1")
}

#[test]
fn every_forgery_of_a_sealed_trace_is_refused() {
    let k = key();
    k.allow_reading();
    k.check_seals();
    let d = dir();
    let mut findings = Vec::new();
    for (name, modes) in [("sealed", &[][..]), ("sealed-lz4", &[Compression::Lz4][..])] {
        let p = d.join(format!("{name}.ds"));
        write_trace(&p, modes, false);
        let orig = std::fs::read(&p).unwrap();
        let lay = layout(&p);
        // The uncompressed type library alone is ~317 KB.
        let (s, xs) = match (full(), modes.is_empty()) {
            // (Its type library, 317 KB of XML under one MAC: every 7th byte.)
            (true, true) => (1, 7),
            (true, false) => (1, 1),
            (false, true) => (11, 1009),
            (false, false) => (2, 61),
        };
        let flips = positions(&lay, orig.len(), s, xs);
        let t = run(name, &p, |v| plain_forgeries(&orig, &lay, &flips, v));
        findings.extend(t.findings);
    }
    let p = d.join("sealed-encrypted.ds");
    write_trace(&p, &[Compression::Lz4], true);
    let orig = std::fs::read(&p).unwrap();
    let s = if full() { 1 } else { 5 };
    let t = run("sealed-encrypted", &p, |v| encrypted_forgeries(&orig, s, v));
    findings.extend(t.findings);
    let _ = std::fs::remove_dir_all(&d);
    let shown: Vec<&String> = findings.iter().take(40).collect();
    assert!(findings.is_empty(), "{} forgeries not refused:\n{shown:#?}", findings.len());
}
