//! The output chain shared by every trace writer (issue 19): compression modes, and the
//! flags' effect on what is recorded (nothing: the same events come back from every mode).

mod common;

use std::path::{Path, PathBuf};

use ra_testkit::{backend, both_backends};
use ra_trace::{Event, TraceReader};

use common::{bin, keygen, verify};

both_backends!(every_compression_mode_records_the_same_events);

fn scratch(name: &str) -> PathBuf {
    ra_testkit::backend_scratch_dir("chain", name)
}

fn events(path: &Path) -> Vec<Event> {
    TraceReader::open(path).expect("trace opens").events(None).map(|e| e.expect("event")).collect()
}

/// The calls' names in order: the same run to run (addresses and times are not).
fn shape(evs: &[Event]) -> Vec<String> {
    evs.iter().map(|e| e.name.clone()).collect()
}

fn every_compression_mode_records_the_same_events() {
    let d = scratch("compress");
    let zeros = d.join("zeros");
    let script = format!(
        "dd if=/dev/zero of={} bs=4k count=500 2>/dev/null; cat /etc/services >/dev/null",
        zeros.display()
    );
    let mut sizes = Vec::new();
    let mut shapes = Vec::new();
    // "default": no --compress at all, which is lz4.
    for mode in ["none", "lz4", "zlib", "bz2", "default"] {
        let t = d.join(format!("{mode}.ds"));
        let _ = std::fs::remove_file(&zeros);
        let mut record = bin();
        record.args(["record", "-q", "--backend", backend()]);
        if mode != "default" {
            record.args(["--compress", mode]);
        }
        let o = record.arg("-o").arg(&t).args(["--", "sh", "-c", &script]).output().unwrap();
        assert!(o.status.success(), "{mode}: {}", String::from_utf8_lossy(&o.stderr));
        let info = bin().arg("info").arg(&t).output().unwrap();
        let text = String::from_utf8_lossy(&info.stdout);
        match mode {
            "none" => assert!(!text.contains("lz4"), "{mode}: {text}"),
            "default" => assert!(text.contains("lz4/lz4"), "{mode}: {text}"),
            _ => assert!(text.contains(&format!("{mode}/{mode}")), "{mode}: {text}"),
        }
        sizes.push(std::fs::metadata(&t).unwrap().len());
        let evs = events(&t);
        let written: usize = evs
            .iter()
            .filter(|e| e.name == "write")
            .filter_map(|e| e.args.get(1).and_then(|a| a.as_data()).map(<[u8]>::len))
            .sum();
        assert!(written >= 500 * 4096, "{mode}: {written} bytes of writes captured");
        shapes.push(shape(&evs));
    }
    for (i, s) in shapes.iter().enumerate().skip(1) {
        assert_eq!(s, &shapes[0], "mode {i}: other calls");
    }
    // 2 MB of zeros: every compressing mode stores far less than the raw trace.
    for (i, s) in sizes.iter().enumerate().skip(1) {
        assert!(*s * 4 < sizes[0], "mode {i}: {s} bytes against {} raw", sizes[0]);
    }
}

both_backends!(a_sealed_trace_verifies_and_every_change_is_named);

/// The on-disk extents of a DataSeries file: (offset, type name, length).
fn extents(path: &Path) -> Vec<(u64, String, usize)> {
    let r = dataseries::DsReader::open(path).unwrap();
    r.raw_extents().map(|x| x.unwrap()).map(|(o, n, b)| (o, n, b.len())).collect()
}

fn a_sealed_trace_verifies_and_every_change_is_named() {
    let d = scratch("seal");
    let key = keygen(&d.join("key"));
    let t = d.join("t.ds");
    let input = d.join("in");
    std::fs::write(&input, (0..3_000_000u32).map(|i| (i % 251) as u8).collect::<Vec<u8>>())
        .unwrap();
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "--compress", "lz4", "--seal"])
        .arg(&key)
        .arg("-o")
        .arg(&t)
        .args(["--", "sh", "-c"])
        .arg(format!("cat {} > /dev/null; ls -R /usr/share/doc > /dev/null", input.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, text) = verify(&t, &key);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("intact"), "{text}");
    // The trace reads like any other.
    assert!(events(&t).iter().any(|e| e.name == "read"));
    // The key is nowhere in the trace.
    let hex = std::fs::read_to_string(&key).unwrap().lines().nth(1).unwrap().to_string();
    let bytes = std::fs::read(&t).unwrap();
    assert!(!bytes.windows(16).any(|w| w == &hex.as_bytes()[..16]));
    let raw = ra_hex::decode(&hex[..64]).unwrap();
    assert!(!bytes.windows(32).any(|w| w == &raw[..]));

    let ext = extents(&t);
    let syscall: Vec<usize> =
        (0..ext.len()).filter(|&i| ext[i].1.starts_with("IOTTAFSL::Trace::Syscall::")).collect();
    assert!(syscall.len() >= 3, "{ext:?}");

    // A changed byte inside one extent: that extent is named.
    let k = syscall[1];
    let mut b = bytes.clone();
    b[ext[k].0 as usize + ext[k].2 / 2] ^= 1;
    let x = d.join("x.ds");
    std::fs::write(&x, &b).unwrap();
    let (code, text) = verify(&x, &key);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&format!("TAMPERED: extent {k} at offset {}", ext[k].0)), "{text}");

    // An extent cut out: found where it is missing.
    let (o, len) = (ext[k].0 as usize, ext[k].2);
    let b: Vec<u8> = bytes[..o].iter().chain(&bytes[o + len..]).copied().collect();
    std::fs::write(&x, &b).unwrap();
    let (code, text) = verify(&x, &key);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&format!("extent {k}")) && text.contains("dropped"), "{text}");

    // The end cut off (the final seal with it).
    let last_seal = ext.iter().rposition(|e| e.1 == "Reanimator::Seal").unwrap();
    std::fs::write(&x, &bytes[..ext[last_seal].0 as usize]).unwrap();
    let (code, text) = verify(&x, &key);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("CUT"), "{text}");

    // Another key: trouble, said as such.
    let other = d.join("other");
    keygen(&other);
    let (code, text) = verify(&t, &other);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("sealed with key") && text.contains("not with the key given"), "{text}");
    assert!(!text.contains(&hex[..16]), "{text}");

    // No seal at all.
    let u = d.join("u.ds");
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "-o"])
        .arg(&u)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(o.status.success());
    // No seal at all: not proven, so not intact (its seal may have been removed).
    let (code, text) = verify(&u, &key);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("NOT SEALED"), "{text}");
}

#[test]
fn a_killed_sealed_recording_verifies_up_to_its_last_seal() {
    let d = scratch("seal-kill");
    let key = keygen(&d.join("key"));
    let t = d.join("t.ds");
    let mut child = bin()
        .args(["record", "-q", "--backend", "ptrace", "--seal"])
        .arg(&key)
        .arg("-o")
        .arg(&t)
        .args(["--", "sh", "-c", "while :; do cat /etc/services > /dev/null; done"])
        .spawn()
        .unwrap();
    // The sink flushes (and seals) once a second.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    child.kill().unwrap();
    child.wait().unwrap();
    // (The traced shell loop, orphaned, dies with its tracer.)
    let (code, text) = verify(&t, &key);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("CUT") && text.contains("without its final seal"), "{text}");
    let n: u64 = text
        .split("verified before it: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(n >= 2, "{text}");
}

both_backends!(an_encrypted_trace_shows_nothing_without_its_key_and_everything_with_it);

fn run(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let o = bin().args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn an_encrypted_trace_shows_nothing_without_its_key_and_everything_with_it() {
    let d = scratch("encrypt");
    let key = keygen(&d.join("key"));
    let t = d.join("t.ds");
    let input = d.join("secret.txt");
    let marker = "the quick brown fox keeps this line secret; ".repeat(2000);
    std::fs::write(&input, &marker).unwrap();
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "--compress", "lz4", "--seal"])
        .arg(&key)
        .arg("--encrypt")
        .arg(&key)
        .arg("-o")
        .arg(&t)
        .args(["--", "cat"])
        .arg(&input)
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&t).unwrap();
    assert_eq!(&bytes[..8], b"RAENCv1\0");
    for needle in ["quick brown fox", "secret.txt", "IOTTAFSL", "Reanimator::", "DSv1"] {
        assert!(!bytes.windows(needle.len()).any(|w| w == needle.as_bytes()), "{needle} visible");
    }
    let k = key.as_os_str();
    let tt = t.as_os_str();
    // Without the key: one clear line, exit 2.
    let (code, _, err) = run(&["info".as_ref(), tt]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is encrypted") && err.contains("--key"), "{err}");
    // With it: every reader works.
    let (code, out, err) = run(&["info".as_ref(), "--key".as_ref(), k, tt]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Encrypted   AES-256-GCM"), "{out}");
    let (code, out, err) =
        run(&["dump".as_ref(), "--key".as_ref(), k, tt, "--format".as_ref(), "jsonl".as_ref()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("secret.txt"), "the path is in the decrypted dump");
    let (code, out, err) = run(&["verify".as_ref(), "--key".as_ref(), k, tt]);
    assert_eq!(code, Some(0), "{out}{err}");
    let root = d.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let (code, out, err) = run(&[
        "replay".as_ref(),
        "--key".as_ref(),
        k,
        tt,
        "--root".as_ref(),
        root.as_os_str(),
        "--init=infer".as_ref(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    // The key appears in no output.
    let hex = std::fs::read_to_string(&key).unwrap().lines().nth(1).unwrap().to_string();
    assert!(!out.contains(&hex[..16]) && !err.contains(&hex[..16]));

    // Another key: said as such.
    let other = d.join("other");
    keygen(&other);
    let (code, _, err) = run(&["info".as_ref(), "--key".as_ref(), other.as_os_str(), tt]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not with the key given"), "{err}");

    // A changed ciphertext byte: the chunk is named when read.
    let x = d.join("x.ds");
    let mut b = bytes.clone();
    let n = b.len();
    b[n / 2] ^= 4;
    std::fs::write(&x, &b).unwrap();
    let (code, _, err) = run(&["dump".as_ref(), "--key".as_ref(), k, x.as_os_str()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("fails authentication"), "{err}");

    // Cut: the last chunk missing; info says so, and the seal says the trace was cut.
    std::fs::write(&x, &bytes[..n - 10]).unwrap();
    let (_, out, err) = run(&["info".as_ref(), "--key".as_ref(), k, x.as_os_str()]);
    assert!(out.contains("CUT"), "{out}{err}");
    let (code, out, _) = run(&["verify".as_ref(), "--key".as_ref(), k, x.as_os_str()]);
    assert_eq!(code, Some(1), "{out}");
}

/// `reanimator record -q --backend ptrace [FLAGS] -o T -- sh -c SCRIPT`, which must succeed.
fn record_sealed(t: &Path, flags: &[&std::ffi::OsStr]) {
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace"])
        .args(flags)
        .arg("-o")
        .arg(t)
        .args(["--", "sh", "-c", "cat /etc/services > /dev/null; ls / > /dev/null"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Every command that reads a trace, on `t` (each with outputs and a root of its own under
/// `d`), with `--key KEY` when given: (command, exit status, stderr).
fn every_reader(
    d: &Path,
    t: &Path,
    key: Option<&Path>,
) -> Vec<(&'static str, Option<i32>, String)> {
    let mut out = Vec::new();
    for cmd in ["info", "dump", "replay", "compile", "profile", "export"] {
        let mut c = bin();
        c.arg(cmd).arg(t);
        let plan = d.join("x.plan");
        let _ = std::fs::remove_file(&plan);
        let root = d.join("root");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        match cmd {
            "replay" => c.arg("--root").arg(&root).arg("--init=infer"),
            "compile" => c.arg("-o").arg(&plan),
            "export" => c.args(["--format", "fio-iolog", "-o"]).arg(d.join("x.iolog")),
            _ => &mut c,
        };
        if let Some(k) = key {
            c.arg("--key").arg(k);
        }
        let o = c.output().unwrap();
        out.push((cmd, o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned()));
    }
    out
}

/// The extent checksums of the trace in `bytes` made right after a change at `pos` (what
/// anyone can do without the key), and the trailer's hash.
fn reseal(bytes: &mut [u8], types_from: &Path, pos: usize) {
    let r = dataseries::DsReader::open(types_from).unwrap();
    let lookup = |n: &str| r.type_by_name(n).cloned();
    let ext = extents(types_from);
    if let Some((o, _, l)) =
        ext.iter().find(|(o, _, l)| (*o as usize..*o as usize + l).contains(&pos))
    {
        let o = *o as usize;
        dataseries::raw::reseal_extent(&mut bytes[o..o + l], false, &lookup).unwrap();
    }
    let n = bytes.len();
    let mut t: [u8; 28] = bytes[n - 28..].try_into().unwrap();
    dataseries::raw::reseal_trailer(&mut t, false);
    bytes[n - 28..].copy_from_slice(&t);
}

/// Issue 39, item 5: with `--key`, `info`, `dump`, `replay`, `compile`, `profile` and
/// `export` check the seal of the trace they read and stop at a tampered one with one line
/// and exit status 1 (before: they read it, exit 0); an unsealed trace is refused too.
#[test]
fn every_reader_given_the_key_refuses_a_tampered_trace() {
    let d = ra_testkit::scratch_dir("readers-seal");
    let key = keygen(&d.join("key"));
    let k = key.as_os_str();
    // Uncompressed, so that a record can be changed in place.
    let t = d.join("t.ds");
    record_sealed(&t, &["--seal".as_ref(), k, "--compress".as_ref(), "none".as_ref()]);
    let te = d.join("te.ds");
    record_sealed(&te, &["--seal".as_ref(), k, "--encrypt".as_ref(), k]);
    let u = d.join("u.ds");
    record_sealed(&u, &[]);
    for trace in [&t, &te] {
        for (cmd, code, err) in every_reader(&d, trace, Some(&key)) {
            assert_eq!(code, Some(0), "{cmd} {}: {err}", trace.display());
            assert!(!err.contains("is unfinished"), "{cmd}: {err}");
        }
    }
    let bytes = std::fs::read(&t).unwrap();
    let ext = extents(&t);
    let n = bytes.len();
    let x = d.join("x.ds");
    let mut forgeries: Vec<(&str, Vec<u8>)> = Vec::new();
    // A record of a system-call extent changed, its checksums made right.
    let (o, _, l) = ext.iter().find(|e| e.1.ends_with("Syscall::openat")).unwrap().clone();
    let mut b = bytes.clone();
    let at = o as usize + l - 20;
    b[at] ^= 0x08;
    reseal(&mut b, &t, at);
    forgeries.push(("a record", b));
    // The file header's NaN payload.
    let mut b = bytes.clone();
    b[33] ^= 1;
    forgeries.push(("the header's NaN", b));
    // The trailer's chained checksum, its hash made right.
    let mut b = bytes.clone();
    b[n - 16] ^= 1;
    reseal(&mut b, &t, n - 16);
    forgeries.push(("the trailer's checksum", b));
    // The last byte of the final seal, resealed.
    let (fo, _, fl) = ext[ext.len() - 2].clone();
    let mut b = bytes.clone();
    b[fo as usize + fl - 1] ^= 1;
    reseal(&mut b, &t, fo as usize + fl - 1);
    forgeries.push(("the final seal", b));
    let eb = std::fs::read(&te).unwrap();
    let mut b = eb.clone();
    b[eb.len() / 2] ^= 0x10;
    forgeries.push(("an encrypted chunk", b));
    let mut b = eb.clone();
    b[33] ^= 1;
    forgeries.push(("the encryption header's key id", b));
    for (what, f) in &forgeries {
        std::fs::write(&x, f).unwrap();
        if *what == "a record" {
            // Without the key, the change goes unseen (its checksums are right).
            let o = bin().arg("dump").arg(&x).output().unwrap();
            assert!(o.status.success(), "{what}: {}", String::from_utf8_lossy(&o.stderr));
        }
        let (code, text) = verify(&x, &key);
        assert_eq!(code, Some(1), "verify, {what}: {text}");
        for (cmd, code, err) in every_reader(&d, &x, Some(&key)) {
            assert_eq!(code, Some(1), "{cmd}, {what}: {err}");
            assert_eq!(err.lines().count(), 1, "{cmd}, {what}: {err}");
            assert!(err.starts_with("reanimator: error: ") && !err.contains("panicked"), "{err}");
        }
    }
    // The record's extent is named by its offset.
    std::fs::write(&x, &forgeries[0].1).unwrap();
    let out = bin().arg("dump").arg(&x).arg("--key").arg(&key).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("at offset {o}: its MAC does not verify")), "{err}");
    // Not sealed: refused by a reader given a key, read without one.
    for (cmd, code, err) in every_reader(&d, &u, Some(&key)) {
        assert_eq!(code, Some(1), "{cmd}: {err}");
        assert!(err.contains("not sealed"), "{cmd}: {err}");
    }
}

/// Issue 39, item 5: a trace cut at an extent boundary, and an encrypted one without its
/// last chunk, get a note from every reader (before: from `info` and `replay` only), with or
/// without the key.
#[test]
fn every_reader_notes_a_cut_trace() {
    let d = ra_testkit::scratch_dir("readers-cut");
    let key = keygen(&d.join("key"));
    let k = key.as_os_str();
    let t = d.join("t.ds");
    record_sealed(&t, &["--seal".as_ref(), k]);
    let te = d.join("te.ds");
    record_sealed(&te, &["--seal".as_ref(), k, "--encrypt".as_ref(), k]);
    // Cut where its final seal starts: every other extent is whole.
    let ext = extents(&t);
    let final_seal = ext[ext.len() - 2].0 as usize;
    let c = d.join("cut.ds");
    std::fs::write(&c, &std::fs::read(&t).unwrap()[..final_seal]).unwrap();
    // The encrypted one without its last chunk (a chunk: 8-byte head, data, 16-byte tag).
    let eb = std::fs::read(&te).unwrap();
    let mut at = 64;
    let mut last = at;
    while at + 8 <= eb.len() {
        last = at;
        at += 8 + u32::from_le_bytes(eb[at..at + 4].try_into().unwrap()) as usize + 16;
    }
    assert!(last > 64, "more than one chunk");
    let ce = d.join("cut-enc.ds");
    std::fs::write(&ce, &eb[..last]).unwrap();
    for (trace, key) in [(&c, None), (&c, Some(key.as_path())), (&ce, Some(key.as_path()))] {
        for (cmd, code, err) in every_reader(&d, trace, key) {
            let what = format!("{cmd} {} (key: {})", trace.display(), key.is_some());
            assert_ne!(code, Some(2), "{what}: {err}");
            let notes: Vec<&str> =
                err.lines().filter(|l| l.starts_with("reanimator: note: ")).collect();
            let note = notes.iter().find(|l| l.contains("is unfinished"));
            let note = note.unwrap_or_else(|| panic!("{what}: no note: {err}"));
            assert!(note.contains(&trace.display().to_string()), "{what}: {note}");
            if trace == &ce {
                assert!(note.contains("lacks its last chunk"), "{what}: {note}");
            }
        }
    }
}
