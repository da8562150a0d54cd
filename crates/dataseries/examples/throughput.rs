//! Decode-throughput sanity check: writes an uncompressed file of syscall-like records, then
//! decodes it single-threaded (`raw::decode_extent_bytes`) and through the streaming reader.
//!
//! `cargo run --release -p dataseries --example throughput -- [MiB] [path] [stream-only]`
//!
//! With `stream-only` the in-memory pass (which loads the whole file) is skipped, so the
//! process's peak RSS shows the streaming reader's bounded memory.

use std::sync::Arc;
use std::time::Instant;

use dataseries::{
    raw, DsReader, DsWriter, ExtentBuilder, ExtentType, FieldDesc, FieldType, StreamOptions, Value,
    WriterOptions,
};

fn main() -> dataseries::Result<()> {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(256);
    let path = args
        .next()
        .unwrap_or_else(|| std::env::temp_dir().join("ds-throughput.ds").display().to_string());
    let stream_only = args.next().as_deref() == Some("stream-only");
    let mut tb = ExtentType::builder("Bench::Syscall").namespace("example.org").version("1.0");
    for n in ["time_called", "time_returned", "return_value", "unique_id", "offset"] {
        tb = tb.field(FieldDesc::new(n, FieldType::Int64).nullable(n != "unique_id"));
    }
    for n in ["pid", "tid", "errno_number", "descriptor"] {
        tb = tb.field(FieldDesc::new(n, FieldType::Int32).nullable(true));
    }
    tb = tb
        .field(FieldDesc::new("flag", FieldType::Bool))
        .field(FieldDesc::new("data", FieldType::Variable32).nullable(true));
    let ty = Arc::new(tb.build()?);
    let t0 = Instant::now();
    let mut w = DsWriter::create(
        &path,
        std::slice::from_ref(&ty),
        WriterOptions { threads: 2, ..WriterOptions::uncompressed() },
    )?;
    let payload = [0xabu8; 200];
    let mut k: i64 = 0;
    while w.bytes_written() < (mib as u64) << 20 {
        let mut b = ExtentBuilder::new(Arc::clone(&ty));
        while b.approx_bytes() < 4 << 20 {
            b.start_record();
            for f in 0..5 {
                b.set(f, Value::Int64(k * 1000 + f as i64))?;
            }
            for f in 5..9 {
                b.set(f, Value::Int32(k as i32 ^ f as i32))?;
            }
            b.set(9, Value::Bool(k % 3 == 0))?;
            b.set(10, Value::Bytes(&payload[..(k % 200) as usize]))?;
            k += 1;
        }
        w.write_extent(b)?;
    }
    w.finish()?;
    let len = std::fs::metadata(&path)
        .map_err(|e| dataseries::Error::Io { context: "stat".into(), source: e })?
        .len();
    println!("wrote {} MiB ({k} records) in {:.2?}", len >> 20, t0.elapsed());

    let r = DsReader::open(&path)?;
    if !stream_only {
        decode_in_memory(&r, &path, len)?;
    }
    stream(&r, len)?;
    let _ = std::fs::remove_file(&path);
    Ok(())
}

/// Single-threaded decode from memory (excludes I/O).
fn decode_in_memory(r: &DsReader, path: &str, len: u64) -> dataseries::Result<()> {
    let data = std::fs::read(path)
        .map_err(|e| dataseries::Error::Io { context: "read".into(), source: e })?;
    let lookup = |n: &str| r.type_by_name(n).cloned();
    let headers: Vec<_> = r.headers().collect::<Result<_, _>>()?;
    let t = Instant::now();
    let mut n = 0usize;
    for h in &headers {
        let bytes = &data[h.offset as usize..(h.offset + h.packed_len) as usize];
        n += raw::decode_extent_bytes(bytes, false, &lookup)?.len();
    }
    let dt = t.elapsed().as_secs_f64();
    println!("decode, 1 thread, in memory: {n} records, {:.0} MB/s", len as f64 / dt / 1e6);
    Ok(())
}

/// Streaming decode with 0, 1 and 2 background decoder threads.
fn stream(r: &DsReader, len: u64) -> dataseries::Result<()> {
    let modes: Vec<usize> = match std::env::var("DS_THREADS") {
        Ok(s) => s.split(',').filter_map(|t| t.parse().ok()).collect(),
        Err(_) => vec![0, 1, 2],
    };
    for threads in modes {
        let t = Instant::now();
        let mut n = 0usize;
        let mut sum = 0i64;
        for e in r.extents_with(&StreamOptions { threads, ..StreamOptions::default() }) {
            let e = e?;
            for i in 0..e.len() {
                sum = sum.wrapping_add(e.i64(i, 3).unwrap_or(0));
            }
            n += e.len();
        }
        let dt = t.elapsed().as_secs_f64();
        println!(
            "stream, {threads} decode threads, from file: {n} records, {:.0} MB/s (checksum {sum})",
            len as f64 / dt / 1e6
        );
    }
    Ok(())
}
