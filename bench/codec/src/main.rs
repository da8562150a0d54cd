//! Codec benchmark. Each phase runs in its own process so its peak RSS is its own:
//!
//! ```text
//! bench-codec encode FILE --bytes N --compression none|zlib   # synthetic trace of >= N data bytes
//! bench-codec decode FILE                                      # DataSeries extents only
//! bench-codec events FILE                                      # full TraceReader: events in id order
//! bench-codec print FILE                                       # record --print's work per call
//! ```
//!
//! Each prints one JSON object: bytes, wall seconds, CPU seconds, MB/s (wall and per CPU
//! second), peak RSS. `bench/codec/run.sh` runs the matrix and writes docs/PERFORMANCE.md.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use dataseries::{DsReader, WriterOptions};
use ra_trace::{ArgValue, Event, TraceReader, TraceWriter, WriterConfig};
use serde_json::json;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass; RUSAGE_SELF is valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn peak_rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// xorshift64*: deterministic, fast, good enough for sizes and bytes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// A pool of file-like content (text with repeats, some random bytes), so zlib has realistic
/// work: buffers are slices of it.
fn content_pool(rng: &mut Rng) -> Vec<u8> {
    let words: Vec<&[u8]> = vec![
        b"INSERT INTO t VALUES(",
        b"0123456789",
        b"reanimator ",
        b"\n",
        b"page ",
        b"\x00\x00\x00\x00",
        b"{\"key\": \"value\"}, ",
        b"lorem ipsum dolor sit amet ",
        b"/usr/lib/x86_64-linux-gnu/",
    ];
    let mut pool = Vec::with_capacity(8 << 20);
    while pool.len() < 8 << 20 {
        if rng.next() % 8 == 0 {
            for _ in 0..64 {
                pool.push(rng.next() as u8);
            }
        } else {
            pool.extend_from_slice(words[(rng.next() % words.len() as u64) as usize]);
        }
    }
    pool
}

fn encode(path: &str, target_bytes: u64, compression: &str) -> Result<serde_json::Value> {
    let ds = match compression {
        "none" => WriterOptions::uncompressed(),
        "zlib" => WriterOptions::zlib(),
        other => bail!("unknown compression {other} (none|zlib)"),
    };
    let lookup = |n: &str| ra_syscalls::lookup(n).with_context(|| format!("{n} not in registry"));
    let (read, write, pread, pwrite, openat, close, fstat) = (
        lookup("read")?,
        lookup("write")?,
        lookup("pread64")?,
        lookup("pwrite64")?,
        lookup("openat")?,
        lookup("close")?,
        lookup("fstat")?,
    );
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let pool = content_pool(&mut rng);
    let cfg = WriterConfig { ds, ..WriterConfig::default() };
    let t0 = Instant::now();
    let c0 = cpu_seconds();
    let mut w = TraceWriter::create(path, &[("command", b"bench-codec synthetic workload")], cfg)?;
    let mut data_bytes = 0u64;
    let mut events = 0u64;
    let mut t: i64 = 1_700_000_000_000_000_000;
    let path_arg = ArgValue::data(b"/data/bench/file.db\0".to_vec());
    while data_bytes < target_bytes {
        let r = rng.next();
        t += 1000;
        let mut e;
        match r % 16 {
            0 => {
                e = Event::new(openat);
                e.set_arg("dirfd", ArgValue::Int(-100));
                e.set_arg("pathname", path_arg.clone());
                e.set_arg("flags", ArgValue::Int(2));
                e.set_arg("mode", ArgValue::Int(0o644));
                e.ret = Some(3);
            }
            1 => {
                e = Event::new(close);
                e.set_arg("fd", ArgValue::Int(3));
                e.ret = Some(0);
            }
            2 => {
                e = Event::new(fstat);
                e.set_arg("fd", ArgValue::Int(3));
                e.set_arg("statbuf", ArgValue::data(pool[..144].to_vec()));
                e.ret = Some(0);
            }
            k => {
                // 4 KiB .. 1 MiB, log-uniform.
                let shift = 12 + (rng.next() % 9) as u32;
                let len = ((1u64 << shift) + rng.next() % (1u64 << shift)).min(1 << 20) as usize;
                let start = (rng.next() as usize) % (pool.len() - len);
                let buf = ArgValue::data(pool[start..start + len].to_vec());
                e = Event::new(match k % 4 {
                    0 => read,
                    1 => write,
                    2 => pread,
                    _ => pwrite,
                });
                e.set_arg("fd", ArgValue::Int(3));
                e.set_arg("buf", buf);
                e.set_arg("count", ArgValue::Int(len as i64));
                e.set_arg("offset", ArgValue::Int((rng.next() % (1 << 30)) as i64));
                e.ret = Some(len as i64);
                data_bytes += len as u64;
            }
        }
        e.time_called = Some(t);
        e.time_returned = Some(t + 500);
        e.pid = Some(1000);
        e.tid = Some(1000 + (r % 4) as i32);
        e.errno = Some(0);
        w.append(&e)?;
        events += 1;
    }
    w.finish()?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c0;
    let file_bytes = std::fs::metadata(path)?.len();
    Ok(json!({
        "phase": "encode", "compression": compression, "events": events,
        "data_bytes": data_bytes, "file_bytes": file_bytes,
        "wall_s": wall, "cpu_s": cpu,
        "mb_per_s": data_bytes as f64 / 1e6 / wall,
        "mb_per_cpu_s": data_bytes as f64 / 1e6 / cpu,
        "peak_rss_mb": peak_rss_mb(),
    }))
}

fn decode(path: &str) -> Result<serde_json::Value> {
    let t0 = Instant::now();
    let c0 = cpu_seconds();
    let ds = DsReader::open(path)?;
    let mut records = 0u64;
    let mut var_bytes = 0u64;
    for e in ds.extents() {
        let e = e?;
        records += e.len() as u64;
        // Fixed section bytes of this extent; the variable sections are added from the headers.
        var_bytes += (e.len() * e.extent_type().record_size()) as u64;
    }
    for h in ds.headers() {
        var_bytes += u64::from(h?.variable_size);
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c0;
    let file_bytes = ds.file_len();
    Ok(json!({
        "phase": "decode", "records": records, "file_bytes": file_bytes,
        "decoded_bytes": var_bytes,
        "wall_s": wall, "cpu_s": cpu,
        "mb_per_s": var_bytes as f64 / 1e6 / wall,
        "mb_per_cpu_s": var_bytes as f64 / 1e6 / cpu,
        "peak_rss_mb": peak_rss_mb(),
    }))
}

fn events(path: &str) -> Result<serde_json::Value> {
    let t0 = Instant::now();
    let c0 = cpu_seconds();
    let r = TraceReader::open(path)?;
    let mut n = 0u64;
    let mut data = 0u64;
    for e in r.events(None) {
        let e = e?;
        n += 1;
        data += e.args.iter().filter_map(ArgValue::as_data).map(|d| d.len() as u64).sum::<u64>();
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c0;
    Ok(json!({
        "phase": "events", "events": n, "data_bytes": data,
        "wall_s": wall, "cpu_s": cpu,
        "mb_per_s": data as f64 / 1e6 / wall,
        "mb_per_cpu_s": data as f64 / 1e6 / cpu,
        "peak_rss_mb": peak_rss_mb(),
    }))
}

/// What `record --print` costs per call, on the calls of a trace (its first 200,000, held in
/// memory so that decoding is not counted; the printer's the best of five passes): the trace writer's part (a preview of each call,
/// [`ra_trace::live::Feed::preview`]) and the printer's (descriptor names, the line, written to
/// /dev/null), CPU-seconds per million calls each.
fn print(path: &str) -> Result<serde_json::Value> {
    let r = TraceReader::open(path)?;
    let cwd = r.info_value("cwd").map(<[u8]>::to_vec);
    let evs: Vec<Event> = r.events(None).take(200_000).collect::<Result<_, _>>()?;
    let n = evs.len() as f64;
    let fmt = ra_trace::format::FormatOptions::default();
    let printer = ra_trace::live::LivePrinter::start(ra_trace::live::Print {
        out: Box::new(std::io::sink()),
        format: fmt.clone(),
        cwd: cwd.clone(),
    })?;
    let feed = printer.feed();
    drop(printer);
    let c0 = cpu_seconds();
    let previews: Vec<Event> =
        evs.iter().enumerate().map(|(i, e)| feed.preview(e, i as u64)).collect();
    let preview_cpu = cpu_seconds() - c0;
    drop(feed);
    // The best of five (the printer's cost, without the page faults of memory first touched).
    let mut print_cpu = f64::INFINITY;
    for _ in 0..5 {
        let batch = previews.clone();
        let out = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
        let print =
            ra_trace::live::Print { out: Box::new(out), format: fmt.clone(), cwd: cwd.clone() };
        let c1 = cpu_seconds();
        ra_trace::live::print_all(batch, print)?;
        print_cpu = print_cpu.min(cpu_seconds() - c1);
    }
    Ok(json!({
        "phase": "print", "events": evs.len(),
        "preview_cpu_s_per_m": preview_cpu / n * 1e6,
        "print_cpu_s_per_m": print_cpu / n * 1e6,
    }))
}

/// The allocator the shipped binary uses (crates/cli/src/main.rs), so that speed and peak RSS
/// are the codec's as `reanimator` runs it. (With glibc's malloc the uncompressed encode's
/// peak RSS varies widely from run to run: its arenas keep the freed extent buffers.)
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: bench-codec encode FILE --bytes N --compression none|zlib | decode FILE | events FILE | print FILE";
    let v = match args.get(1).map(String::as_str) {
        Some("encode") => {
            let file = args.get(2).context(usage)?;
            let mut bytes = 2u64 << 30;
            let mut comp = "none".to_string();
            let mut i = 3;
            while i < args.len() {
                match args[i].as_str() {
                    "--bytes" => bytes = args.get(i + 1).context(usage)?.parse()?,
                    "--compression" => comp = args.get(i + 1).context(usage)?.clone(),
                    _ => bail!("{usage}"),
                }
                i += 2;
            }
            encode(file, bytes, &comp)?
        }
        Some("decode") => decode(args.get(2).context(usage)?)?,
        Some("events") => events(args.get(2).context(usage)?)?,
        Some("print") => print(args.get(2).context(usage)?)?,
        _ => bail!("{usage}"),
    };
    println!("{v}");
    Ok(())
}
