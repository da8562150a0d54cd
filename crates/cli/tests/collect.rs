//! Network output and the collector (issue 19 item 4), on the loopback interface only:
//! `record -o tcp://` (both backends) and `fs mount -o tcp://` stream into `reanimator collect`,
//! which writes each stream to its own file; concurrent senders; a sender killed mid-stream
//! (the file is cut at its last whole extent and `info` says so); a killed collector (the
//! sender fails in one line, or with `--spill` loses nothing: `collect --join` rebuilds the
//! whole trace); hostile input (garbage, huge lengths, silence) is dropped while the
//! collector keeps serving, in bounded memory.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use ra_testkit::{backend, both_backends, privileged, scratch_dir};
use ra_trace::TraceReader;
use serde_json::Value;

use common::{bin, keygen, verify};
use ra_trace::key::Key;
use ra_trace::net::{auth, hello_line, Destination, TcpTarget};
use ra_trace::TraceOutput;

both_backends!(a_recording_streamed_to_a_collector_equals_one_written_to_a_file);

/// A running `reanimator collect --json` on 127.0.0.1 (any free port); killed when dropped.
struct Collector {
    child: Option<Child>,
    addr: String,
    dir: PathBuf,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Collector {
    fn start(dir: &Path, extra: &[&str]) -> Collector {
        let mut child = bin()
            .args(["collect", "--json", "--listen", "127.0.0.1:0", "--dir"])
            .arg(dir)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the collector");
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                let v: Value = serde_json::from_str(&l)
                    .unwrap_or_else(|e| panic!("collector line is not JSON ({e}): {l}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut c = Collector {
            child: Some(child),
            addr: String::new(),
            dir: dir.to_path_buf(),
            lines,
            seen: Vec::new(),
        };
        let l = c.wait_for(|v| v["event"] == "listening", Duration::from_secs(10));
        c.addr = l["addr"].as_str().unwrap().to_string();
        c
    }

    fn url(&self, label: &str) -> String {
        format!("tcp://{}/{label}", self.addr)
    }

    fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    /// The next line (seen before or arriving within `limit`) for which `f` holds.
    fn wait_for(&mut self, f: impl Fn(&Value) -> bool, limit: Duration) -> Value {
        if let Some(i) = self.seen.iter().position(&f) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) if f(&v) => return v,
                Ok(v) => self.seen.push(v),
                Err(_) => panic!("no such collector line within {limit:?}; seen: {:?}", self.seen),
            }
        }
    }

    fn end_of(&mut self, file: &str) -> Value {
        let file = file.to_string();
        self.wait_for(
            move |v| v["event"] == "end" && v["file"] == file.as_str(),
            Duration::from_secs(60),
        )
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "ds"))
            .collect();
        v.sort();
        v
    }

    fn kill(&mut self, sig: i32) -> std::process::ExitStatus {
        let mut c = self.child.take().unwrap();
        // SAFETY: kill takes no pointers; the pid is our own child's.
        unsafe { libc::kill(c.id() as i32, sig) };
        c.wait().unwrap()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn info(trace: &Path) -> String {
    let o = bin().arg("info").arg(trace).output().unwrap();
    assert!(o.status.success(), "info: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Every event's unique id.
fn ids(trace: &Path) -> Vec<u64> {
    TraceReader::open(trace)
        .unwrap_or_else(|e| panic!("{}: {e}", trace.display()))
        .events(None)
        .map(|e| e.expect("event").unique_id)
        .collect()
}

/// The trace's read and write calls as dump prints them, without the columns that differ
/// between two runs (id, time, pid, duration).
fn io_calls(trace: &Path) -> Vec<String> {
    let o = bin()
        .arg("dump")
        .arg(trace)
        .args(["--no-decode-fds", "--where", "call in {read, write}"])
        .output()
        .unwrap();
    assert!(o.status.success(), "dump: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let rest = l.splitn(4, ' ').filter(|s| !s.is_empty()).last().unwrap_or("").to_string();
            let rest = l.trim_start().splitn(4, ' ').nth(3).unwrap_or(&rest).to_string();
            rest.rsplit_once(" <").map_or(rest.clone(), |(a, _)| a.to_string())
        })
        .collect()
}

/// Waits until the collected `file` (being written) holds at least `n` calls in whole
/// extents.
fn wait_for_calls(file: &Path, n: usize) {
    let t0 = Instant::now();
    loop {
        let got = TraceReader::open(file)
            .map(|r| r.events(None).take_while(Result::is_ok).count())
            .unwrap_or(0);
        if got >= n {
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "{got} calls arrived in 30 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A workload that runs about `secs` seconds and makes a steady stream of calls with data.
fn steady_workload(dir: &Path, secs: u32) -> Vec<String> {
    let f = dir.join("w.bin");
    vec![
        "sh".into(),
        "-c".into(),
        format!(
            "for i in $(seq 1 {}); do head -c 200000 /dev/urandom > {f}; cat {f} > /dev/null; sleep 0.1; done",
            secs * 10,
            f = f.display()
        ),
    ]
}

fn a_recording_streamed_to_a_collector_equals_one_written_to_a_file() {
    let d = scratch_dir(&format!("collect-eq-{}", backend()));
    let input = d.join("input.bin");
    let content: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&input, &content).unwrap();
    let mut c = Collector::start(&d.join("coll"), &[]);
    let local = d.join("local.ds");
    for out in [c.url("cat"), local.display().to_string()] {
        let o = bin()
            .args(["record", "-q", "--backend", backend(), "-o", &out, "--", "cat"])
            .arg(&input)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(o.stdout, content);
    }
    let start = c.wait_for(|v| v["event"] == "start", Duration::from_secs(5));
    assert_eq!(start["label"], "cat");
    let end = c.end_of(start["file"].as_str().unwrap());
    assert_eq!(end["status"], "ok", "{end}");
    let files = c.files();
    assert_eq!(files.len(), 1);
    let got = &files[0];
    assert!(got.file_name().unwrap().to_str().unwrap().contains("-cat-"));
    assert_eq!(end["bytes"].as_u64(), Some(std::fs::metadata(got).unwrap().len()));
    assert!(info(got).contains("complete (trailer valid"), "{}", info(got));
    let (a, b) = (io_calls(got), io_calls(&local));
    assert!(a.len() > 10, "{a:?}");
    assert_eq!(a, b, "the same reads and writes with the same data");
    // Every byte cat read is in the collected trace.
    let r = TraceReader::open(got).unwrap();
    let read: usize = r
        .events(None)
        .map(|e| e.unwrap())
        .filter(|e| e.name == "read")
        .filter_map(|e| e.arg("buf").and_then(|a| a.as_data()).map(<[u8]>::len))
        .sum();
    assert!(read >= content.len(), "{read}");
    let _ = std::fs::remove_dir_all(&d);
}

/// One write larger than --net-buffer makes one extent larger than the sender's buffer, which
/// the collector acknowledges only once it is whole: the sender used to wait for an
/// acknowledgement that could not come (and fail after 30 s).
#[test]
fn an_extent_larger_than_the_net_buffer_goes_through() {
    let d = scratch_dir("collect-big-extent");
    let mut c = Collector::start(&d.join("coll"), &[]);
    let out = d.join("out");
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "--compress", "none", "--net-buffer", "1M"])
        .args(["-o", &c.url("dd"), "--", "dd", "if=/dev/zero", "bs=3M", "count=1"])
        .arg(format!("of={}", out.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(10));
    assert_eq!(e["status"], "ok", "{e}");
    assert!(e["bytes"].as_u64().unwrap() > 3 << 20, "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn four_concurrent_senders_make_four_complete_files() {
    let d = scratch_dir("collect-four");
    let mut c = Collector::start(&d.join("coll"), &[]);
    let kids: Vec<(Child, usize)> = (0..4)
        .map(|i| {
            let f = d.join(format!("in{i}"));
            std::fs::write(&f, vec![i as u8; 500_000 * (i + 1)]).unwrap();
            let child = bin()
                .args(["record", "-q", "--backend", "ptrace", "-o", &c.url(&format!("s{i}")), "--"])
                .arg("cat")
                .arg(&f)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (child, i)
        })
        .collect();
    for (k, i) in kids {
        let o = k.wait_with_output().unwrap();
        assert!(o.status.success(), "sender {i}: {}", stderr(&o));
    }
    let mut names = BTreeSet::new();
    for _ in 0..4 {
        let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(30));
        assert_eq!(e["status"], "ok", "{e}");
        names.insert(e["file"].as_str().unwrap().to_string());
    }
    assert_eq!(names.len(), 4);
    let files = c.files();
    assert_eq!(files.len(), 4, "{files:?}");
    for (i, f) in files.iter().enumerate() {
        assert!(info(f).contains("complete (trailer valid"));
        let name = f.file_name().unwrap().to_str().unwrap();
        assert!(name.contains(&format!("-s{i}-")), "{name}");
        // Each holds its own sender's data.
        let r = TraceReader::open(f).unwrap();
        let n: usize = r
            .events(None)
            .map(|e| e.unwrap())
            .filter(|e| e.name == "write")
            .filter_map(|e| e.arg("buf").and_then(|a| a.as_data()).map(<[u8]>::len))
            .sum();
        assert_eq!(n, 500_000 * (i + 1), "{name}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sender_killed_mid_stream_leaves_a_cut_readable_file() {
    let d = scratch_dir("collect-killed-sender");
    let mut c = Collector::start(&d.join("coll"), &[]);
    let mut rec = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o", &c.url("victim"), "--"])
        .args(steady_workload(&d, 20))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = c.wait_for(|v| v["event"] == "start", Duration::from_secs(10));
    let file = c.dir.join(start["file"].as_str().unwrap());
    // Some extents arrive, then the recorder dies.
    wait_for_calls(&file, 200);
    rec.kill().unwrap();
    rec.wait().unwrap();
    let end = c.end_of(start["file"].as_str().unwrap());
    assert_eq!(end["status"], "cut", "{end}");
    assert_eq!(end["bytes"].as_u64(), Some(std::fs::metadata(&file).unwrap().len()));
    let text = info(&file);
    assert!(text.contains("cut after extent"), "{text}");
    assert!(ids(&file).len() > 100);
    // The collector keeps serving.
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o", &c.url("after"), "--", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let e = c.wait_for(|v| v["event"] == "end" && v["status"] == "ok", Duration::from_secs(10));
    assert!(e["file"].as_str().unwrap().contains("-after-"));
    let _ = std::fs::remove_dir_all(&d);
}

/// A stream cut inside an extent, byte-exact: the file ends at the last whole extent.
#[test]
fn a_stream_cut_inside_an_extent_keeps_every_whole_extent_before_it() {
    let d = scratch_dir("collect-mid-extent");
    let local = d.join("local.ds");
    let f = d.join("in");
    std::fs::write(&f, vec![7u8; 3_000_000]).unwrap();
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o"])
        .arg(&local)
        .args(["--", "cat"])
        .arg(&f)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&local).unwrap();
    // The extent offsets, from the file's own index.
    let r = dataseries::DsReader::open(&local).unwrap();
    let offsets: Vec<u64> = r.headers().map(|h| h.unwrap().offset).collect();
    assert!(offsets.len() > 4);
    let (whole_end, next) = (offsets[2], offsets[3]);
    let cut = (whole_end + next) / 2;
    let mut c = Collector::start(&d.join("coll"), &[]);
    let mut s = TcpStream::connect(&c.addr).unwrap();
    s.write_all(b"reanimator-stream 2 {\"host\":\"h/../x\",\"pid\":1,\"start_ns\":0,\"label\":\"../../evil\"}\n").unwrap();
    let mut answer = [0u8; 3];
    s.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"ok ");
    s.write_all(&bytes[..cut as usize]).unwrap();
    // The sender stops there (and reads the collector's answers to the end: a socket closed
    // with unread acks is reset, and a reset may discard bytes still queued at the collector).
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = String::new();
    s.read_to_string(&mut rest).unwrap();
    let mut answers = rest.lines();
    assert!(answers.next().unwrap().ends_with(".ds"), "{rest}");
    // Only whole extents are acknowledged; no `done` for a cut stream, but `cut WHY`.
    for a in answers {
        if let Some(why) = a.strip_prefix("cut ") {
            assert!(why.contains("before the trailer"), "{rest}");
            continue;
        }
        let n: u64 = a.strip_prefix("ack ").unwrap_or_else(|| panic!("{rest}")).parse().unwrap();
        assert!(n <= whole_end, "{rest}");
    }
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(10));
    assert_eq!(e["status"], "cut", "{e}");
    assert_eq!(e["bytes"].as_u64(), Some(whole_end));
    assert_eq!(e["dropped_bytes"].as_u64(), Some(cut - whole_end));
    // A safe name: no path from the peer.
    let name = e["file"].as_str().unwrap();
    assert!(!name.contains('/') && !name.contains(".."), "{name}");
    let files = c.files();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].parent().unwrap(), c.dir);
    assert_eq!(std::fs::read(&files[0]).unwrap(), bytes[..whole_end as usize]);
    assert!(info(&files[0]).contains("cut after extent"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_killed_collector_stops_the_recording_in_one_line() {
    let d = scratch_dir("collect-killed-collector");
    let mut c = Collector::start(&d.join("coll"), &[]);
    let rec = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o", &c.url("job"), "--"])
        .args(steady_workload(&d, 4))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = c.wait_for(|v| v["event"] == "start", Duration::from_secs(10));
    let file = c.dir.join(start["file"].as_str().unwrap());
    wait_for_calls(&file, 100);
    c.kill(libc::SIGKILL);
    let o = rec.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("reanimator:")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    for part in
        ["reanimator: error: ", "the collector at 127.0.0.1:", "no --spill", "ran on unrecorded"]
    {
        assert!(ours[0].contains(part), "{part:?} not in {}", ours[0]);
    }
    // What the collector wrote stays readable.
    assert!(info(&file).contains("cut after extent"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn with_spill_a_killed_collector_loses_nothing() {
    let d = scratch_dir("collect-spill");
    // Authenticated, sealed with the host key and checked by the collector as it arrives:
    // the joined trace verifies whole.
    let (master, key) = host_key(&d, "web1");
    let mut c = Collector::start(&d.join("coll"), &["--key", master.to_str().unwrap()]);
    let spill = d.join("spill.ds");
    let rec = bin()
        .args(["record", "--backend", "ptrace", "--key", key.to_str().unwrap()])
        .args(["-o", &c.url("job"), "--spill"])
        .arg(&spill)
        .arg("--")
        .args(steady_workload(&d, 4))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = c.wait_for(|v| v["event"] == "start", Duration::from_secs(10));
    let file = c.dir.join(start["file"].as_str().unwrap());
    wait_for_calls(&file, 100);
    c.kill(libc::SIGKILL);
    let o = rec.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("going on in the spill file"), "{err}");
    let calls: usize = err
        .split("recorded ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary: {err}"));
    // The spill alone is a readable, complete DataSeries file.
    assert!(info(&spill).contains("complete (trailer valid"));
    let (got, sp) = (ids(&file), ids(&spill));
    assert!(
        !got.is_empty() && !sp.is_empty(),
        "collected {} calls, spill {}: {err}",
        got.len(),
        sp.len()
    );
    // Together they hold every call; the joined trace holds each exactly once.
    let joined = d.join("joined.ds");
    let j = bin()
        .args(["collect", "--join"])
        .arg(&file)
        .arg(&spill)
        .arg("-o")
        .arg(&joined)
        .output()
        .unwrap();
    assert!(j.status.success(), "{}", stderr(&j));
    assert!(info(&joined).contains("complete (trailer valid"));
    let all = ids(&joined);
    let unique: BTreeSet<u64> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len(), "no call twice");
    // The summary counts the calls made; the trace also starts with one synthetic openat per
    // descriptor the command inherited.
    let synthetic: usize = TraceReader::open(&joined)
        .unwrap()
        .info_value("synthetic_ids")
        .map(|v| String::from_utf8_lossy(v).parse().unwrap())
        .expect("synthetic_ids in the trace info");
    assert_eq!(all.len(), calls + synthetic, "every call recorded");
    let union: BTreeSet<u64> = got.iter().chain(sp.iter()).copied().collect();
    assert_eq!(union, unique, "the collected part and the spill cover the trace");
    let (code, text) = verify(&joined, &key);
    assert_eq!(code, Some(0), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn hostile_input_is_dropped_and_the_collector_keeps_serving() {
    let d = scratch_dir("collect-hostile");
    let mut c = Collector::start(&d.join("coll"), &["--max-extent", "16M"]);
    let answer = |s: &mut TcpStream| {
        let _ = s.set_read_timeout(Some(Duration::from_secs(15)));
        let mut v = Vec::new();
        let _ = s.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    };
    // Silence: dropped after 5 s (runs while the others are tried).
    let mut silent = TcpStream::connect(&c.addr).unwrap();
    let t_silent = Instant::now();
    // Garbage instead of a hello.
    let mut s = TcpStream::connect(&c.addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert!(answer(&mut s).starts_with("no not a reanimator stream"));
    c.wait_for(
        |v| v["event"] == "drop" && v["reason"].as_str().unwrap().contains("wrong hello"),
        Duration::from_secs(5),
    );
    // A hello line that never ends.
    let mut s = TcpStream::connect(&c.addr).unwrap();
    let _ = s.write_all(b"reanimator-stream 2 {\"host\":\"");
    let _ = s.write_all(&vec![b'a'; 64 << 10]);
    assert!(answer(&mut s).starts_with("no "));
    c.wait_for(
        |v| v["event"] == "drop" && v["reason"].as_str().unwrap().contains("no hello in the first"),
        Duration::from_secs(5),
    );
    // A wrong version (version 1 had no authentication).
    let mut s = TcpStream::connect(&c.addr).unwrap();
    s.write_all(b"reanimator-stream 1 {}\n").unwrap();
    assert!(answer(&mut s).contains("protocol version \"1\" (this collector speaks 2)"));
    let hello =
        b"reanimator-stream 2 {\"host\":\"h\",\"pid\":2,\"start_ns\":0,\"label\":\"bad\"}\n";
    // A good hello, then garbage: refused, nothing kept.
    let mut s = TcpStream::connect(&c.addr).unwrap();
    s.write_all(hello).unwrap();
    let _ = s.write_all(&[0x55; 100_000]);
    let a = answer(&mut s);
    assert!(a.contains("refused not a valid trace stream"), "{a}");
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(5));
    assert_eq!(e["status"], "refused");
    // A good hello and file header, then an extent claiming 1 GB: refused at its header.
    let mut s = TcpStream::connect(&c.addr).unwrap();
    s.write_all(hello).unwrap();
    let mut h = dataseries::raw::file_header().to_vec();
    let mut ext = vec![0u8; 28];
    ext[0..4].copy_from_slice(&(500i32 << 20).to_le_bytes());
    ext[4..8].copy_from_slice(&(500i32 << 20).to_le_bytes());
    ext[12..16].copy_from_slice(&4i32.to_le_bytes());
    ext[26] = 19;
    ext.extend_from_slice(b"DataSeries: XmlType\0");
    h.extend_from_slice(&ext);
    let _ = s.write_all(&h);
    // ... and keeps sending: the collector has dropped it already.
    for _ in 0..64 {
        if s.write_all(&[0u8; 1 << 20]).is_err() {
            break;
        }
    }
    let a = answer(&mut s);
    assert!(a.contains("over the limit"), "{a}");
    let e = c.wait_for(|v| v["event"] == "end" && v["status"] == "refused", Duration::from_secs(5));
    assert!(e["reason"].as_str().unwrap().contains("over the limit"), "{e}");
    // No file kept for any of them.
    assert!(c.files().is_empty(), "{:?}", c.files());
    // The silent one is dropped after about 5 s (--hello-timeout).
    let a = answer(&mut silent);
    assert!(a.contains("no hello within 5 s"), "{a}");
    assert!(t_silent.elapsed() < Duration::from_secs(8));
    // Memory stayed small, and a real sender is served.
    let hwm = peak_rss_kb(c.pid());
    assert!(hwm < 64 * 1024, "collector peak RSS {hwm} kB");
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o", &c.url("good"), "--", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let e = c.wait_for(|v| v["event"] == "end" && v["status"] == "ok", Duration::from_secs(10));
    assert!(e["file"].as_str().unwrap().contains("-good-"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn ctrl_c_stops_the_collector_within_a_second_and_open_streams_stay_readable() {
    let d = scratch_dir("collect-sigint");
    let mut c = Collector::start(&d.join("coll"), &[]);
    let spill = d.join("spill.ds");
    let rec = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o", &c.url("job"), "--spill"])
        .arg(&spill)
        .arg("--")
        .args(steady_workload(&d, 4))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = c.wait_for(|v| v["event"] == "start", Duration::from_secs(10));
    let file = c.dir.join(start["file"].as_str().unwrap());
    wait_for_calls(&file, 100);
    // SAFETY: kill takes no pointers; our own child.
    unsafe { libc::kill(c.pid(), libc::SIGINT) };
    let t = Instant::now();
    let e = c.end_of(start["file"].as_str().unwrap());
    let st = c.kill(0);
    assert!(t.elapsed() < Duration::from_millis(1500), "{:?}", t.elapsed());
    assert!(st.success(), "{st}");
    assert_eq!(e["status"], "cut");
    assert!(e["reason"].as_str().unwrap().contains("stopping"));
    assert!(info(&file).contains("cut after extent"));
    // The sender went on in its spill.
    let o = rec.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let joined = d.join("joined.ds");
    let j = bin()
        .args(["collect", "--join"])
        .arg(&file)
        .arg(&spill)
        .arg("-o")
        .arg(&joined)
        .output()
        .unwrap();
    assert!(j.status.success(), "{}", stderr(&j));
    assert!(info(&joined).contains("complete (trailer valid"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn spill_and_net_buffer_need_a_network_output() {
    let d = scratch_dir("collect-usage");
    let o = bin()
        .args(["record", "--backend", "ptrace", "--spill", "x.ds", "-o"])
        .arg(d.join("t.ds"))
        .args(["--", "true"])
        .output()
        .unwrap();
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("--spill needs -o tcp://"), "{line}");
    for bad in ["tcp://127.0.0.1", "tcp://:80", "tcp://h:99999"] {
        let o = bin()
            .args(["record", "--backend", "ptrace", "-o", bad, "--", "true"])
            .output()
            .unwrap();
        let line = ra_testkit::assert_clean_failure(&o);
        assert!(line.contains("expected tcp://HOST:PORT"), "{line}");
    }
    // An encrypted trace is not framed as extents: refused in one line, not half-streamed.
    let key = keygen(&d.join("key"));
    let o = bin()
        .args(["record", "--backend", "ptrace", "--encrypt"])
        .arg(&key)
        .args(["-o", "tcp://127.0.0.1:9", "--", "true"])
        .output()
        .unwrap();
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("--encrypt with -o tcp:// is not supported"), "{line}");
    // Nobody listening: refused before the command starts.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    let o = bin()
        .args(["record", "--backend", "ptrace", "-o", &format!("tcp://{addr}"), "--", "touch"])
        .arg(d.join("ran"))
        .output()
        .unwrap();
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("cannot connect to the collector"), "{line}");
    assert!(!d.join("ran").exists(), "the command did not run");
    let _ = std::fs::remove_dir_all(&d);
}

/// `fs mount -o tcp://`: the file-system trace arrives at the collector whole.
#[test]
fn fs_mount_streams_its_trace_to_a_collector() {
    let ok = if rustix::process::geteuid().is_root() && Path::new("/dev/fuse").exists() {
        Ok(())
    } else {
        Err("needs root and /dev/fuse".to_string())
    };
    if !privileged("reanimator fs", ok) {
        return;
    }
    let d = scratch_dir("collect-fs");
    let (lower, mnt) = (d.join("lower"), d.join("mnt"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let mut c = Collector::start(&d.join("coll"), &[]);
    let mut child = bin()
        .args(["fs", "mount"])
        .arg(&lower)
        .arg(&mnt)
        .args(["-o", &c.url("fs")])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mnt = mnt.canonicalize().unwrap();
    let t0 = Instant::now();
    loop {
        let m = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        if m.lines().any(|l| l.split(' ').nth(4) == Some(mnt.to_str().unwrap())) {
            break;
        }
        if let Some(st) = child.try_wait().unwrap() {
            let mut e = String::new();
            child.stderr.take().unwrap().read_to_string(&mut e).unwrap();
            panic!("fs mount exited ({st}): {e}");
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "mount did not come up");
        std::thread::sleep(Duration::from_millis(20));
    }
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(mnt.join("f"), &data).unwrap();
    assert_eq!(std::fs::read(mnt.join("f")).unwrap(), data);
    let u = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
    assert!(u.status.success(), "{}", stderr(&u));
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("acknowledged by the collector"), "{}", stderr(&o));
    let start = c.wait_for(|v| v["event"] == "start", Duration::from_secs(5));
    assert_eq!(start["label"], "fs");
    let e = c.end_of(start["file"].as_str().unwrap());
    assert_eq!(e["status"], "ok", "{e}");
    let f = &c.files()[0];
    let text = info(f);
    assert!(text.contains("complete (trailer valid") && text.contains("file-system"), "{text}");
    // The written bytes are in the trace's write records.
    let o = bin()
        .arg("dump")
        .arg(f)
        .args(["--format", "jsonl", "--where", "op == write"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let writes = String::from_utf8_lossy(&o.stdout).lines().count();
    assert!(writes >= 1, "no write operation in the collected fs trace");
    let _ = std::fs::remove_dir_all(&d);
}

/// `collect --key MASTER`: a stream sealed with the sender's host key is kept; one sealed
/// with another key, or not sealed, is refused (the sender fails in one line); no key material
/// in any line.
#[test]
fn with_a_key_the_collector_refuses_streams_whose_seal_does_not_verify() {
    let d = scratch_dir("collect-seal");
    let (master, web1) = host_key(&d, "web1");
    let k2 = keygen(&d.join("k2"));
    let secret =
        |k: &Path| std::fs::read_to_string(k).unwrap().lines().nth(1).unwrap().trim().to_string();
    let secrets = [secret(&master), secret(&web1), secret(&k2)];
    let mut c = Collector::start(&d.join("coll"), &["--key", master.to_str().unwrap()]);
    let f = d.join("in");
    std::fs::write(&f, vec![3u8; 1_000_000]).unwrap();
    // `record --key HOSTKEY` seals with the host key.
    let good = bin()
        .args(["record", "-q", "--backend", "ptrace", "--key", web1.to_str().unwrap()])
        .args(["-o", &c.url("good"), "--", "cat"])
        .arg(&f)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(good.status.success(), "{}", stderr(&good));
    // Another seal key with a host key is refused before anything is sent.
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "--key", web1.to_str().unwrap()])
        .args(["--seal", k2.to_str().unwrap(), "-o", &c.url("x"), "--", "true"])
        .output()
        .unwrap();
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("sealed with the host key"), "{line}");
    // Authenticated as web1, a trace sealed with another key, and one not sealed.
    let key = Key::load(&web1).unwrap();
    for (label, seal) in [("otherkey", Some(&k2)), ("unsealed", None)] {
        let t = d.join(format!("{label}.ds"));
        let mut cmd = bin();
        cmd.args(["record", "-q", "--backend", "ptrace", "-o"]).arg(&t);
        if let Some(k) = seal {
            cmd.arg("--seal").arg(k);
        }
        let o = cmd.arg("--").arg("cat").arg(&f).stdout(Stdio::null()).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let err = send(&c.addr, Some(&key), label, &std::fs::read(&t).unwrap()).unwrap_err();
        assert!(err.contains("refused the stream: the seal does not verify"), "{err}");
        for s in &secrets {
            assert!(!err.contains(s.as_str()), "a key in: {err}");
        }
    }
    let mut by_label = std::collections::BTreeMap::new();
    for _ in 0..3 {
        let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(10));
        let name = e["file"].as_str().unwrap().to_string();
        let label = name.split('-').nth(1).unwrap().to_string();
        by_label.insert(label, e);
    }
    assert_eq!(by_label["good"]["status"], "ok");
    assert_eq!(by_label["otherkey"]["status"], "refused");
    assert!(by_label["otherkey"]["reason"].as_str().unwrap().contains("the key is not the one"));
    assert_eq!(by_label["unsealed"]["status"], "refused");
    let why = by_label["unsealed"]["reason"].as_str().unwrap();
    assert!(why.contains("written without a seal"), "{why}");
    for e in by_label.values() {
        for s in &secrets {
            assert!(!e.to_string().contains(s.as_str()), "a key in: {e}");
        }
    }
    // The good stream verifies as a file under the host key; the refused one is set aside.
    let files = c.files();
    assert_eq!(files.len(), 1, "{files:?}");
    let (code, text) = verify(&files[0], &web1);
    assert_eq!(code, Some(0), "{text}");
    let refused: Vec<_> = std::fs::read_dir(&c.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ds.refused"))
        .collect();
    assert!(refused.iter().all(|n| n.contains("-otherkey-")), "{refused:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The master key `MASTER` in `d` (made once) and the host key of `host` derived from it
/// (`keygen --host`).
fn host_key(d: &Path, host: &str) -> (PathBuf, PathBuf) {
    let master = d.join("master.key");
    if !master.exists() {
        keygen(&master);
    }
    let k = d.join(format!("{host}.key"));
    let o = bin().args(["keygen", "--host", host, "--from"]).arg(&master).arg(&k).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    (master, k)
}

/// Streams `bytes` (a whole DSv1 file) to the collector at `addr` through the real sender,
/// authenticated with `key`; the sender's error.
fn send(addr: &str, key: Option<&Key>, label: &str, bytes: &[u8]) -> Result<(), String> {
    let t = TcpTarget {
        addr: addr.to_string(),
        label: Some(label.to_string()),
        spill: None,
        buffer_bytes: 64 << 20,
        auth: key.cloned(),
    };
    let mut out = TraceOutput::open(&Destination::Tcp(t), label).map_err(|e| e.to_string())?;
    out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| e.to_string())
}

/// A socket connected to `addr` from `from` (an address of the loopback interface, such as
/// 127.0.0.2: another peer as far as the collector can tell).
fn connect_from(addr: &str, from: Option<&str>) -> std::io::Result<TcpStream> {
    use std::os::fd::FromRawFd;
    let Some(from) = from else { return TcpStream::connect(addr) };
    let sa = |a: std::net::SocketAddrV4| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
        sin_zero: [0; 8],
    };
    let to: std::net::SocketAddrV4 = addr.parse().unwrap();
    let local = sa(std::net::SocketAddrV4::new(from.parse().unwrap(), 0));
    let remote = sa(to);
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a new socket; the addresses are valid sockaddr_in values for these calls, and
    // the descriptor is owned by the TcpStream made from it (or closed on error).
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let s = TcpStream::from_raw_fd(fd);
        if libc::bind(fd, (&local as *const libc::sockaddr_in).cast(), len) != 0
            || libc::connect(fd, (&remote as *const libc::sockaddr_in).cast(), len) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok(s)
    }
}

/// One line from `s`, byte by byte (what follows it stays in the socket); "" at the end.
fn line_from(s: &mut TcpStream) -> String {
    let mut v = Vec::new();
    let mut b = [0u8; 1];
    while let Ok(1) = s.read(&mut b) {
        if b[0] == b'\n' {
            break;
        }
        v.push(b[0]);
    }
    String::from_utf8_lossy(&v).into_owned()
}

/// A hand-made sender: says hello as `host` (from `from`) and, with `key`, answers the
/// challenge with it. The socket, the hello line, the authentication line sent, and the
/// collector's last answer.
fn hand_connect(
    addr: &str,
    from: Option<&str>,
    host: &str,
    key: Option<&Key>,
) -> (TcpStream, String, String, String) {
    let mut s = connect_from(addr, from).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let nonce = key.map(|_| auth::nonce().unwrap());
    let hello = hello_line(host, 1, 0, "hand", nonce.as_ref());
    s.write_all(format!("{hello}\n").as_bytes()).unwrap();
    let a = line_from(&mut s);
    let (Some(k), Some(rest)) = (key, a.strip_prefix("challenge ")) else {
        return (s, hello, String::new(), a);
    };
    let nc = ra_hex::decode_array::<32>(rest.split(' ').next().unwrap()).unwrap();
    let proof = format!("auth {}\n", ra_hex::encode(&auth::sender_proof(k, &hello, &nc)));
    s.write_all(proof.as_bytes()).unwrap();
    let a = line_from(&mut s);
    (s, hello, proof, a)
}

/// The peak RSS of process `pid`, in kB.
fn peak_rss_kb(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

/// A sealed trace's bytes up to the end of its type library (file header and XmlType
/// extent), recorded here with `key`.
fn sealed_head(d: &Path, key: &Path) -> Vec<u8> {
    let t = d.join("head.ds");
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "--seal"])
        .arg(key)
        .arg("-o")
        .arg(&t)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let b = std::fs::read(&t).unwrap();
    // The first extent, at 40: its header (28 bytes and the name) and two sections, each
    // padded to 4 bytes.
    let word = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let r4 = |n: usize| n.div_ceil(4) * 4;
    let name_len = usize::from(b[40 + 26]);
    assert_eq!(&b[40 + 28..40 + 28 + name_len], b"DataSeries: XmlType");
    let end = 40 + r4(28 + name_len) + r4(word(40)) + r4(word(44));
    b[..end].to_vec()
}

/// The attack: 64 connections that only say hello (and renew themselves with a byte
/// now and then) held every slot for 300 s, and the job of `record -o tcp://` never ran.
/// Connections that have not authenticated now wait in a pool of their own, with a deadline,
/// the oldest dropped to make room: a real recording goes through at once, from the same
/// address as the attacker or another.
#[test]
fn connections_that_never_authenticate_do_not_keep_a_recording_from_running() {
    let d = scratch_dir("collect-slots");
    let (master, key) = host_key(&d, "web1");
    let mut c = Collector::start(&d.join("coll"), &["--key", master.to_str().unwrap()]);
    let hello = hello_line("web1", 1, 0, "idle", Some(&[7; 32]));
    let target = c.addr.clone();
    // Hello-only connections from `from`, each sending a byte a second after its hello;
    // with `renew`, each one dropped is opened again at once.
    let attack = |from: &'static str, renew: bool| {
        let (addr, hello) = (target.clone(), hello.clone());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let st = std::sync::Arc::clone(&stop);
        let t = std::thread::spawn(move || {
            let open = || {
                let s = connect_from(&addr, Some(from)).ok()?;
                s.set_nonblocking(true).ok()?;
                (&s).write_all(format!("{hello}\n").as_bytes()).ok()?;
                Some(s)
            };
            let mut conns: Vec<Option<TcpStream>> = (0..64).map(|_| open()).collect();
            let (mut dropped, mut opened) = (0u64, 64u64);
            while !st.load(std::sync::atomic::Ordering::Relaxed) {
                for c in conns.iter_mut() {
                    let alive = c.as_ref().is_some_and(|s| {
                        let mut b = [0u8; 512];
                        // Whatever the collector says (its challenge) is read and ignored.
                        let gone = matches!((&*s).read(&mut b), Ok(0));
                        !gone && (&*s).write(b"a").is_ok()
                    });
                    if !alive && c.is_some() {
                        dropped += 1;
                        *c = None;
                    }
                    if c.is_none() && renew {
                        *c = open();
                        opened += 1;
                    }
                }
                std::thread::sleep(Duration::from_millis(if renew { 20 } else { 1000 }));
            }
            (dropped, opened)
        });
        (stop, t)
    };
    let record = |c: &Collector, tag: &str| {
        let ran = d.join(format!("ran-{tag}"));
        let t0 = Instant::now();
        let o = bin()
            .args(["record", "-q", "--backend", "ptrace", "--key", key.to_str().unwrap()])
            .args(["-o", &c.url(tag), "--", "touch"])
            .arg(&ran)
            .output()
            .unwrap();
        assert!(o.status.success(), "{tag}: {}", stderr(&o));
        assert!(ran.exists(), "{tag}: the job ran");
        t0.elapsed()
    };
    for (tag, from, renew) in [("same", "127.0.0.1", false), ("other", "127.0.0.2", true)] {
        let (stop, t) = attack(from, renew);
        std::thread::sleep(Duration::from_millis(1500));
        // Well within the hello deadline: the recording did not wait for the attackers to
        // time out.
        let took = record(&c, tag);
        assert!(took < Duration::from_secs(4), "{tag}: the recording took {took:?}");
        let e = c.wait_for(
            |v| v["event"] == "end" && v["file"].as_str().unwrap().contains(&format!("-{tag}-")),
            Duration::from_secs(10),
        );
        assert_eq!(e["status"], "ok", "{e}");
        if !renew {
            // Held connections are dropped by the deadline, not renewed by their bytes.
            c.wait_for(
                |v| {
                    v["event"] == "drop"
                        && v["reason"].as_str().unwrap().contains("within 5 s (--hello-timeout)")
                },
                Duration::from_secs(8),
            );
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (dropped, opened) = t.join().unwrap();
        eprintln!(
            "{tag}: recorded in {took:?}; {dropped} of {opened} attacking connections dropped"
        );
        assert!(dropped >= 48, "{tag}: {dropped} of {opened} attacking connections dropped");
    }
    c.wait_for(
        |v| v["event"] == "drop" && v["reason"].as_str().unwrap().contains("to make room"),
        Duration::from_secs(1),
    );
    let hwm = peak_rss_kb(c.pid());
    eprintln!("collector peak RSS {hwm} kB after the hello-only connections");
    assert!(hwm < 64 * 1024, "collector peak RSS {hwm} kB");
    let _ = std::fs::remove_dir_all(&d);
}

/// One byte now and then used to renew a stream's 300 s idle timeout for ever. Inside an
/// extent a stream must now keep --min-rate over 10 s.
#[test]
fn a_stream_dribbling_a_byte_at_a_time_is_cut_by_the_minimum_rate() {
    let d = scratch_dir("collect-dribble");
    let (master, key) = host_key(&d, "web1");
    let mut c = Collector::start(&d.join("coll"), &["--key", master.to_str().unwrap()]);
    let key = Key::load(&key).unwrap();
    let (mut s, _, _, a) = hand_connect(&c.addr, None, "web1", Some(&key));
    assert!(a.starts_with("ok "), "{a}");
    let head = sealed_head(&d, &d.join("web1.key"));
    // The file header and the first bytes of the type library, then a byte a second.
    s.write_all(&head[..50]).unwrap();
    let t0 = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut got = String::new();
    for b in &head[50..80] {
        if s.write_all(std::slice::from_ref(b)).is_err() {
            break;
        }
        let mut buf = [0u8; 256];
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(_) => {}
        }
        // (`ack 40` for the file header; then the end.)
        if got.lines().any(|l| !l.starts_with("ack ")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(900));
    }
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(5));
    assert_eq!(e["status"], "cut", "{e}");
    assert!(e["reason"].as_str().unwrap().contains("--min-rate"), "{e}");
    let took = t0.elapsed();
    assert!(took > Duration::from_secs(9) && took < Duration::from_secs(14), "{took:?}");
    assert!(got.lines().any(|l| l.starts_with("cut ")), "the sender is told: {got:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The host name is bound to the key: a host key authenticates as its own name only, a key
/// of another master not at all, a recorded handshake does not replay, and an
/// unauthenticated sender is refused before its command runs. Both sides authenticate: a
/// sender with a key sends nothing to a collector that cannot prove it holds the master key.
#[test]
fn a_host_key_authenticates_its_own_host_name_only() {
    let d = scratch_dir("collect-hosts");
    let (master, web1) = host_key(&d, "web1");
    let mut c = Collector::start(&d.join("coll"), &["--key", master.to_str().unwrap()]);
    let key = Key::load(&web1).unwrap();
    // The real sender: stored under its authenticated name.
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "--key", web1.to_str().unwrap()])
        .args(["-o", &c.url("job"), "--", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let st = c.wait_for(|v| v["event"] == "start", Duration::from_secs(5));
    assert_eq!((st["host"].as_str(), st["authenticated"].as_bool()), (Some("web1"), Some(true)));
    assert!(st["file"].as_str().unwrap().starts_with("web1-job-"), "{st}");
    assert_eq!(c.end_of(st["file"].as_str().unwrap())["status"], "ok");
    // web1's key claiming another host name.
    let (_, _, _, a) = hand_connect(&c.addr, None, "db1", Some(&key));
    assert!(a.starts_with("no authentication as db1 failed"), "{a}");
    // A key of the same name from another master.
    let other = Key::from_bytes([9; 32]).for_host("web1").unwrap();
    let (_, _, _, a) = hand_connect(&c.addr, None, "web1", Some(&other));
    assert!(a.starts_with("no authentication as web1 failed"), "{a}");
    // A recorded handshake, replayed: the collector's nonce is new, the proof no longer fits.
    let (s, hello, proof, a) = hand_connect(&c.addr, None, "web1", Some(&key));
    assert!(a.starts_with("ok "), "{a}");
    drop(s);
    let e = c.end_of(a.strip_prefix("ok ").unwrap());
    assert!(e["reason"].as_str().unwrap().contains("file removed"), "{e}");
    let mut s = TcpStream::connect(&c.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("{hello}\n").as_bytes()).unwrap();
    assert!(line_from(&mut s).starts_with("challenge "));
    s.write_all(proof.as_bytes()).unwrap();
    let a = line_from(&mut s);
    assert!(a.starts_with("no authentication as web1 failed"), "{a}");
    // No key: refused in one line, and the command never ran.
    let ran = d.join("ran");
    let o = bin()
        .args(["record", "--backend", "ptrace", "-o", &c.url("nokey"), "--", "touch"])
        .arg(&ran)
        .output()
        .unwrap();
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("authenticates its senders: give the sender --key HOSTKEY"), "{line}");
    assert!(!ran.exists());
    // A master key is not a sender's key.
    let o = bin()
        .args(["record", "--backend", "ptrace", "--key", master.to_str().unwrap()])
        .args(["-o", &c.url("master"), "--", "true"])
        .output()
        .unwrap();
    assert!(ra_testkit::assert_clean_failure(&o).contains("host key"));
    // Nothing was stored for any of them.
    assert_eq!(c.files().len(), 1, "{:?}", c.files());
    drop(c);
    // Mutual: a collector with another master cannot answer web1's challenge.
    let other_master = keygen(&d.join("other.key"));
    let c2 = Collector::start(&d.join("coll2"), &["--key", other_master.to_str().unwrap()]);
    let o = bin()
        .args(["record", "--backend", "ptrace", "--key", web1.to_str().unwrap()])
        .args(["-o", &c2.url("job"), "--", "touch"])
        .arg(&ran)
        .output()
        .unwrap();
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("failed to authenticate itself"), "{line}");
    assert!(!ran.exists());
    drop(c2);
    // ... nor one without a key at all.
    let c3 = Collector::start(&d.join("coll3"), &[]);
    let o = bin()
        .args(["record", "--backend", "ptrace", "--key", web1.to_str().unwrap()])
        .args(["-o", &c3.url("job"), "--", "touch"])
        .arg(&ran)
        .output()
        .unwrap();
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("cannot authenticate itself"), "{line}");
    assert!(!ran.exists());
    drop(c3);
    // Without a key the collector listens on loopback only (unless --insecure), and it takes
    // a master key, not a host key.
    let o = bin()
        .args(["collect", "--listen", "0.0.0.0:0", "--dir"])
        .arg(d.join("c4"))
        .output()
        .unwrap();
    assert!(ra_testkit::assert_clean_failure(&o).contains("without --key"));
    let o = bin()
        .args(["collect", "--key", web1.to_str().unwrap(), "--listen", "127.0.0.1:0", "--dir"])
        .arg(d.join("c4"))
        .output()
        .unwrap();
    assert!(ra_testkit::assert_clean_failure(&o).contains("the host key of web1"));
    let _ = std::fs::remove_dir_all(&d);
}

/// Another host's sealed trace, resubmitted, used to be stored as any other: the seal is
/// checked under the authenticated host's key, and a trace collected once is refused the
/// second time, after a restart of the collector too.
#[test]
fn a_sealed_trace_resubmitted_by_another_host_or_twice_is_refused() {
    let d = scratch_dir("collect-resubmit");
    let (master, web1) = host_key(&d, "web1");
    let (_, db1) = host_key(&d, "db1");
    let t = d.join("web1.ds");
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "--seal", web1.to_str().unwrap(), "-o"])
        .arg(&t)
        .args(["--", "cat", "/etc/hostname"])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&t).unwrap();
    let (web1, db1) = (Key::load(&web1).unwrap(), Key::load(&db1).unwrap());
    let coll = d.join("coll");
    let mut c = Collector::start(&coll, &["--key", master.to_str().unwrap()]);
    // db1 submits web1's trace: the seal is not db1's.
    let err = send(&c.addr, Some(&db1), "stolen", &bytes).unwrap_err();
    assert!(err.contains("refused the stream: the seal does not verify"), "{err}");
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(10));
    assert_eq!(e["status"], "refused", "{e}");
    // web1 submits it: stored.
    send(&c.addr, Some(&web1), "first", &bytes).unwrap();
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(10));
    assert_eq!(e["status"], "ok", "{e}");
    let first = e["file"].as_str().unwrap().to_string();
    // ... and again: refused, naming the file that holds it.
    let err = send(&c.addr, Some(&web1), "again", &bytes).unwrap_err();
    assert!(err.contains("was collected before, from web1 as ") && err.contains(&first), "{err}");
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(10));
    assert_eq!(e["status"], "refused", "{e}");
    drop(c);
    // The collector remembers across runs.
    let c = Collector::start(&coll, &["--key", master.to_str().unwrap()]);
    let err = send(&c.addr, Some(&web1), "restart", &bytes).unwrap_err();
    assert!(err.contains("was collected before"), "{err}");
    let kept: Vec<PathBuf> = c.files();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].ends_with(&first));
    let _ = std::fs::remove_dir_all(&d);
}

/// An error and its sources, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut c = e.source();
    while let Some(x) = c {
        s.push_str(&format!(": {x}"));
        c = x.source();
    }
    s
}

/// A DSv1 writer sealed with `key` streaming incompressible 1 MiB extents to `out`.
fn blob_writer(
    out: TraceOutput,
    key: &Key,
) -> (dataseries::DsWriter<TraceOutput>, std::sync::Arc<dataseries::ExtentType>) {
    use dataseries::{ExtentType, FieldDesc, FieldType, WriterOptions};
    let t = std::sync::Arc::new(
        ExtentType::builder("Test::Blob")
            .field(FieldDesc::new("data", FieldType::Variable32))
            .build()
            .unwrap(),
    );
    let opts =
        WriterOptions { seal: Some(key.seal_options([1; 16])), ..WriterOptions::uncompressed() };
    (dataseries::DsWriter::new(out, &[std::sync::Arc::clone(&t)], opts).unwrap(), t)
}

/// The burst: 300 MiB written in half a second with no quota. With --quota the
/// stream is cut as the bytes arrive, its file readable up to its last whole extent and no
/// larger than the quota; the host's next stream is cut at once.
#[test]
fn a_burst_past_the_quota_is_cut_and_the_file_stays_readable() {
    let d = scratch_dir("collect-quota");
    let (master, web1) = host_key(&d, "web1");
    let mut c =
        Collector::start(&d.join("coll"), &["--key", master.to_str().unwrap(), "--quota", "64M"]);
    let key = Key::load(&web1).unwrap();
    let addr = c.addr.clone();
    let target = |label: &str| {
        Destination::Tcp(TcpTarget {
            addr: addr.clone(),
            label: Some(label.into()),
            spill: None,
            buffer_bytes: 64 << 20,
            auth: Some(key.clone()),
        })
    };
    // `mib` extents of 1 MiB as fast as they go: the sender's error.
    let burst = |label: &str, mib: usize| {
        let out = TraceOutput::open(&target(label), label).unwrap();
        let (mut w, t) = blob_writer(out, &key);
        let mut x = 1u64;
        let mut data = vec![0u8; 1 << 20];
        for _ in 0..mib {
            for b in data.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            let mut b = dataseries::ExtentBuilder::new(std::sync::Arc::clone(&t));
            b.start_record();
            b.set(0, dataseries::Value::Bytes(&data)).unwrap();
            if let Err(e) = w.write_extent(b).and_then(|()| w.flush()) {
                return Some(chain(&e));
            }
        }
        w.finish().err().map(|e| chain(&e))
    };
    let t0 = Instant::now();
    let err = burst("burst", 300).expect("the burst is cut");
    assert!(err.contains("cut the stream: over the quota of web1"), "{err}");
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(30));
    assert_eq!(e["status"], "cut", "{e}");
    assert!(e["reason"].as_str().unwrap().contains("(--quota)"), "{e}");
    let f = c.dir.join(e["file"].as_str().unwrap());
    let len = std::fs::metadata(&f).unwrap().len();
    assert!(len <= 64 << 20 && len > 32 << 20, "{len} bytes kept");
    assert_eq!(e["bytes"].as_u64(), Some(len));
    assert!(info(&f).contains("cut after extent"), "{}", info(&f));
    eprintln!("burst cut after {:?}, {len} bytes kept", t0.elapsed());
    // The quota is spent: the next stream of web1 is cut at its first extents.
    let err = burst("more", 10).expect("the next stream is cut");
    assert!(err.contains("over the quota of web1"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The 800 MiB extent: `collect --key` held each extent whole to check its seal and
/// allocated 1.6 GB. Extents are now hashed as they arrive: the collector's peak RSS stays
/// small whatever an extent's header declares.
#[test]
fn an_800_mib_extent_is_checked_without_holding_it() {
    let d = scratch_dir("collect-800m");
    let (master, web1) = host_key(&d, "web1");
    let mut c = Collector::start(&d.join("coll"), &["--key", master.to_str().unwrap()]);
    let key = Key::load(&web1).unwrap();
    let head = sealed_head(&d, &web1);
    let (mut s, _, _, a) = hand_connect(&c.addr, None, "web1", Some(&key));
    assert!(a.starts_with("ok "), "{a}");
    s.write_all(&head).unwrap();
    // An extent of 800 MiB: two sections of 400 MiB, then its bytes as fast as they go.
    let name = b"Test::Blob";
    let mut h = vec![0u8; 28];
    h[0..4].copy_from_slice(&(400i32 << 20).to_le_bytes());
    h[4..8].copy_from_slice(&(400i32 << 20).to_le_bytes());
    h[8..12].copy_from_slice(&1i32.to_le_bytes());
    h[12..16].copy_from_slice(&(400i32 << 20).to_le_bytes());
    h[26] = name.len() as u8;
    h.extend_from_slice(name);
    h.resize(h.len().div_ceil(4) * 4, 0);
    s.write_all(&h).unwrap();
    let chunk = vec![0x5au8; 4 << 20];
    for _ in 0..200 {
        s.write_all(&chunk).unwrap();
    }
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let e = c.wait_for(|v| v["event"] == "end", Duration::from_secs(60));
    assert_eq!(e["status"], "cut", "{e}");
    // All of it arrived (and was hashed) before the stream ended.
    assert_eq!(e["bytes"].as_u64(), Some(head.len() as u64 + h.len() as u64 + (800 << 20)));
    let hwm = peak_rss_kb(c.pid());
    eprintln!("collector peak RSS {hwm} kB after an 800 MiB extent");
    assert!(hwm < 100 * 1024, "collector peak RSS {hwm} kB");
    let _ = std::fs::remove_dir_all(&d);
}

/// A collector that is full refuses an authenticated sender at once, which fails in one line
/// before its command runs (instead of the job never running).
#[test]
fn a_full_collector_makes_the_sender_fail_fast() {
    let d = scratch_dir("collect-full");
    let (master, web1) = host_key(&d, "web1");
    let c = Collector::start(
        &d.join("coll"),
        &["--key", master.to_str().unwrap(), "--max-streams-per-host", "1"],
    );
    let key = Key::load(&web1).unwrap();
    let (_held, _, _, a) = hand_connect(&c.addr, None, "web1", Some(&key));
    assert!(a.starts_with("ok "), "{a}");
    let ran = d.join("ran");
    let t0 = Instant::now();
    let o = bin()
        .args(["record", "--backend", "ptrace", "--key", web1.to_str().unwrap()])
        .args(["-o", &c.url("job"), "--", "touch"])
        .arg(&ran)
        .output()
        .unwrap();
    let line = ra_testkit::assert_clean_failure(&o);
    assert!(line.contains("refused the stream: busy: 1 streams of host web1"), "{line}");
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert!(!ran.exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// `fs mount -o tcp:// --spill`: the collector dies while the file system is mounted; the
/// mount keeps recording into the spill, and the two join into the whole trace.
#[test]
fn fs_mount_goes_on_in_its_spill_when_the_collector_dies() {
    let ok = if rustix::process::geteuid().is_root() && Path::new("/dev/fuse").exists() {
        Ok(())
    } else {
        Err("needs root and /dev/fuse".to_string())
    };
    if !privileged("reanimator fs", ok) {
        return;
    }
    let d = scratch_dir("collect-fs-spill");
    let (lower, mnt, spill) = (d.join("lower"), d.join("mnt"), d.join("spill.ds"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let mut c = Collector::start(&d.join("coll"), &[]);
    let mut child = bin()
        .args(["fs", "mount"])
        .arg(&lower)
        .arg(&mnt)
        .args(["-o", &c.url("fs"), "--spill"])
        .arg(&spill)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mnt = mnt.canonicalize().unwrap();
    let t0 = Instant::now();
    loop {
        let m = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        if m.lines().any(|l| l.split(' ').nth(4) == Some(mnt.to_str().unwrap())) {
            break;
        }
        if let Some(st) = child.try_wait().unwrap() {
            panic!("fs mount exited ({st})");
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "mount did not come up");
        std::thread::sleep(Duration::from_millis(20));
    }
    let start = c.wait_for(|v| v["event"] == "start", Duration::from_secs(5));
    let file = c.dir.join(start["file"].as_str().unwrap());
    std::fs::write(mnt.join("before"), vec![1u8; 1_000_000]).unwrap();
    // The trace is flushed every second: let it reach the collector.
    std::thread::sleep(Duration::from_millis(2500));
    c.kill(libc::SIGKILL);
    std::fs::write(mnt.join("after"), vec![2u8; 1_000_000]).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let u = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
    assert!(u.status.success(), "{}", stderr(&u));
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("going on in the spill file"), "{err}");
    let joined = d.join("joined.ds");
    let j = bin()
        .args(["collect", "--join"])
        .arg(&file)
        .arg(&spill)
        .arg("-o")
        .arg(&joined)
        .output()
        .unwrap();
    assert!(j.status.success(), "{}", stderr(&j));
    assert!(info(&joined).contains("complete (trailer valid"));
    for (name, byte) in [("before", 1u8), ("after", 2u8)] {
        let o = bin()
            .arg("dump")
            .arg(&joined)
            .args(["--format", "jsonl", "--where", &format!("op == write && path ~ \"**/{name}\"")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let n = String::from_utf8_lossy(&o.stdout).lines().count();
        assert!(n >= 1, "no write of {name} ({byte}) in the joined trace");
    }
    let _ = std::fs::remove_dir_all(&d);
}
