//! `--data write=LEVEL,read=LEVEL`: a recording that keeps the bytes a program wrote and only
//! digests of what it read (Replayfs' traces held write data only), under both recorders, with
//! real programs (dd, sqlite3): what the trace holds, its size against `--data full`, its
//! replay verified, a replay that reads other bytes caught by the digests, and bad values.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use ra_testkit::{assert_clean_failure, backend, both_backends, have_program, scratch_dir};

use common::{bin, dump, ok};

both_backends!(write_full_read_hash_keeps_written_bytes_and_verifies_reads_by_digest);

/// A program's run in `d`: dd copies `data/in.bin` and reads the copy back; sqlite3 builds a
/// table of blobs in `data/t.db` and reads it; the copy is removed again.
const SCRIPT: &str = "dd if=data/in.bin of=data/out.bin bs=64k 2>/dev/null && \
     dd if=data/out.bin of=/dev/null bs=16k 2>/dev/null && \
     sqlite3 data/t.db 'create table t(x); insert into t values(randomblob(200000)); \
     insert into t select x from t; select sum(length(x)) from t;' && \
     dd if=data/in.bin of=data/tail.bin bs=4k skip=16 2>/dev/null && rm data/out.bin";

/// `record --snapshot data --data MODE` of [`SCRIPT`] in `d` (its outputs removed first).
fn record(d: &Path, trace: &Path, mode: &str) {
    for f in ["data/out.bin", "data/t.db", "data/tail.bin"] {
        let _ = std::fs::remove_file(d.join(f));
    }
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "--snapshot", "data", "--data", mode])
        .arg("-o")
        .arg(trace)
        .args(["--", "sh", "-c", SCRIPT])
        .current_dir(d)
        .output()
        .unwrap();
    ok(o, &format!("record --data {mode}"));
}

fn replay(trace: &Path, root: &Path, extra: &[&str]) -> (Output, serde_json::Value) {
    std::fs::create_dir_all(root).unwrap();
    let mut c = bin();
    let o = c.arg("replay").arg(trace).arg("--root").arg(root).arg("--json").args(extra);
    let o = o.output().unwrap();
    let r = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("replay: not JSON ({e}): {}", String::from_utf8_lossy(&o.stderr))
    });
    (o, r)
}

/// The calls of `trace` as JSON objects.
fn calls(trace: &Path) -> Vec<serde_json::Value> {
    dump(trace, &["--format", "jsonl"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The calls named `call` on a file whose path ends with `file`.
fn on<'a>(all: &'a [serde_json::Value], call: &str, file: &str) -> Vec<&'a serde_json::Value> {
    all.iter()
        .filter(|c| {
            c["call"].as_str().is_some_and(|n| n == call || n == format!("{call}64"))
                && c["fd_path"].as_str().is_some_and(|p| p.ends_with(file))
                && c["return_value"].as_i64().is_some_and(|r| r > 0)
        })
        .collect()
}

fn input(len: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn write_full_read_hash_keeps_written_bytes_and_verifies_reads_by_digest() {
    assert!(have_program("sqlite3") && have_program("dd"), "sqlite3 and dd are test programs");
    let d: PathBuf = scratch_dir(&format!("data-dirs-{}", backend()));
    std::fs::create_dir_all(d.join("data")).unwrap();
    let data = input(512 << 10);
    std::fs::write(d.join("data/in.bin"), &data).unwrap();
    let (mixed, full) = (d.join("w.ds"), d.join("f.ds"));
    record(&d, &mixed, "write=full,read=hash");
    record(&d, &full, "full");

    // Written data in full, read data as digests (the registry's direction of each buffer).
    let all = calls(&mixed);
    let writes = on(&all, "write", "data/out.bin");
    assert!(!writes.is_empty(), "dd's writes of out.bin");
    let mut written = Vec::new();
    for w in &writes {
        let hex = w["args"]["buf"]["hex"].as_str().unwrap_or_else(|| panic!("bytes: {w}"));
        written.extend(ra_hex::decode(hex).unwrap_or_else(|| panic!("hex: {w}")));
    }
    assert_eq!(written, data, "out.bin's writes hold every byte dd wrote");
    let reads = on(&all, "read", "data/in.bin");
    assert!(!reads.is_empty(), "dd's reads of in.bin");
    let first = &reads[0]["args"]["buf"];
    let n = reads[0]["return_value"].as_u64().unwrap() as usize;
    assert_eq!(first["len"], n as u64, "{first}");
    assert_eq!(first["blake3"], blake3::hash(&data[..n]).to_hex().as_str(), "{first}");
    for r in &reads {
        assert!(r["args"]["buf"].get("hex").is_none(), "a read kept as digest only: {r}");
    }
    // sqlite3's own writes and reads of its database take the same directions.
    let db_writes = on(&all, "pwrite", "data/t.db");
    let bytes = |c: &serde_json::Value| {
        let b = &c["args"]["buf"];
        (b.is_string() || b["hex"].is_string()) && b.get("blake3").is_none()
    };
    assert!(!db_writes.is_empty() && db_writes.iter().all(|w| bytes(w)), "{db_writes:?}");
    let db_reads = on(&all, "pread", "data/t.db");
    assert!(db_reads.iter().all(|r| r["args"]["buf"]["blake3"].is_string()), "{db_reads:?}");

    // The mode is in the facts, for info and for readers knowing only `data_mode`.
    let info = ok(bin().arg("info").arg(&mixed).output().unwrap(), "info");
    let fact = |k: &str| {
        info.lines()
            .find_map(|l| l.trim().strip_prefix(k).filter(|v| v.starts_with(' ')))
            .map(|v| v.trim().to_string())
    };
    assert_eq!(fact("data_mode").as_deref(), Some("hash"), "{info}");
    assert_eq!(fact("data_mode_write").as_deref(), Some("full"), "{info}");
    assert_eq!(fact("data_mode_read").as_deref(), Some("hash"), "{info}");

    // Smaller than the full trace: reads (as much data as the writes here) are digests.
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(
        size(&mixed) * 10 < size(&full) * 7,
        "write=full,read=hash {} bytes, full {} bytes",
        size(&mixed),
        size(&full)
    );

    // The replay writes the recorded bytes and verifies every read it can by digest: no
    // mismatch, and the final tree compared with contents.
    let root = d.join("r");
    let (o, r) = replay(&mixed, &root, &["--init"]);
    assert_eq!(o.status.code(), Some(0), "{r}");
    assert_eq!(r["mismatch_total"], 0, "{r}");
    assert!(!r["warnings"].to_string().contains("digests or lengths only"), "{r}");
    assert_eq!(r["final_state"][0]["differences"], 0, "{r}");
    let tail = data[16 << 12..].to_vec();
    let replayed = root.join(d.strip_prefix("/").unwrap()).join("data");
    assert_eq!(std::fs::read(replayed.join("tail.bin")).unwrap(), tail, "written from the trace");

    // A replay whose in.bin holds other bytes than were read: the digest catches the one read
    // that covered the changed byte (dd's first 64 KiB). Replayed over the first replay's tree
    // (--force, no --init: the files --init made without contents are compared now too, the
    // same in both runs), once as it is and once changed.
    let read_mismatches = |r: &serde_json::Value| r["per_call"]["read"]["mismatched"].as_u64();
    let (_, same) = replay(&mixed, &root, &["--force"]);
    let mut changed = data.clone();
    changed[100] ^= 1;
    std::fs::write(replayed.join("in.bin"), &changed).unwrap();
    let (o, r) = replay(&mixed, &root, &["--force"]);
    assert_ne!(o.status.code(), Some(0), "{r}");
    assert_eq!(
        read_mismatches(&r),
        read_mismatches(&same).map(|n| n + 1),
        "changed: {r}\nunchanged: {same}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Bad `--data` values: one line, exit 2, nothing recorded or mounted.
#[test]
fn bad_data_values_are_refused_in_one_line() {
    let d = scratch_dir("data-dirs-bad");
    for (v, why) in [
        ("write=ful", "unknown data level `ful`"),
        ("read=full,read=hash", "`read` given twice"),
        ("sideways=full", "unknown direction `sideways`"),
        ("fulll", "neither a level"),
    ] {
        let trace = d.join("t.ds");
        let mut c = bin();
        let o = c.args(["record", "--data", v, "-o"]).arg(&trace).args(["--", "true"]);
        let err = assert_clean_failure(&o.output().unwrap());
        assert!(err.contains(why), "{v}: {err}");
        assert!(!trace.exists(), "{v}: no trace");
        let (lower, mnt) = (d.join("lower"), d.join("mnt"));
        std::fs::create_dir_all(&lower).unwrap();
        std::fs::create_dir_all(&mnt).unwrap();
        let mut c = bin();
        let o = c.args(["fs", "mount"]).arg(&lower).arg(&mnt).arg("-o").arg(&trace);
        let err = assert_clean_failure(&o.args(["--data", v]).output().unwrap());
        assert!(err.contains(why), "fs mount {v}: {err}");
        assert!(!trace.exists(), "fs mount {v}: no trace");
    }
    let _ = std::fs::remove_dir_all(&d);
}
