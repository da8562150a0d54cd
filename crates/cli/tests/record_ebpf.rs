//! What only the eBPF backend does: the loss policies under load, chunks the ring cannot hold,
//! cgroups, and the probe's answers. (The backend also runs every shared record test: see
//! record_conformance, record_basics, record_edges, record_programs.)
//!
//! The stress tests run `crates/testkit/c/stress.c` (8 threads, each alternating a 64 KiB
//! pwrite64 and a 4 KiB pread64 as fast as it can) for `REANIMATOR_STRESS_SECONDS` (default 2;
//! the figure is 10) with a small ring so that the policies must act:
//! - throttle: the trace holds exactly the calls and bytes the program reports, nothing lost;
//! - drop: recorded + lost adds up to what the program reports, call type by call type.
//!
//! Every test needs root and a BPF-capable kernel: it skips with a printed reason otherwise,
//! and fails instead under REANIMATOR_REQUIRE_PRIVILEGED=1 (CI).

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ra_testkit::ebpf_available;
use ra_trace::{ArgValue, TraceReader};
use serde_json::Value;

use common::bin;

fn stress_seconds() -> String {
    std::env::var("REANIMATOR_STRESS_SECONDS").unwrap_or_else(|_| "10".to_string())
}

fn info(r: &TraceReader, key: &str) -> Option<String> {
    r.info_value(key).map(|v| String::from_utf8_lossy(v).into_owned())
}

/// Per-thread counts the stress program reported, by tid.
struct Reported {
    pwrites: u64,
    pwrite_bytes: u64,
    preads: u64,
    pread_bytes: u64,
    index: i64,
}

fn run_stress(loss: &str, ring: &str) -> (PathBuf, Output, BTreeMap<i32, Reported>) {
    let dir = ra_testkit::scratch_dir(&format!("ebpf-stress-{loss}"));
    let trace = dir.join("t.ds");
    let t0 = Instant::now();
    let o = bin()
        .args(["record", "-q", "--backend", "ebpf", "--loss", loss, "--ring-size", ring, "-o"])
        .arg(&trace)
        .arg("--")
        .arg(ra_testkit::program("stress"))
        .arg(&dir)
        .args(["8", &stress_seconds()])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    eprintln!("stress --loss {loss}: recorded in {:.1} s", t0.elapsed().as_secs_f64());
    let j: Value = serde_json::from_slice(&o.stdout).expect("stress prints JSON");
    let threads = j["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| {
            let n = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("{k} in {t}"));
            (
                t["tid"].as_i64().unwrap() as i32,
                Reported {
                    pwrites: n("pwrites"),
                    pwrite_bytes: n("pwrite_bytes"),
                    preads: n("preads"),
                    pread_bytes: n("pread_bytes"),
                    index: t["index"].as_i64().unwrap(),
                },
            )
        })
        .collect();
    (trace, o, threads)
}

/// Recorded pwrite/pread counts and data bytes per tid; checks the content of some writes
/// (`every_call`: nothing was lost, so the n-th recorded write is the program's n-th).
fn recorded(
    trace: &Path,
    reported: &BTreeMap<i32, Reported>,
    every_call: bool,
) -> BTreeMap<i32, [u64; 4]> {
    let r = TraceReader::open(trace).unwrap();
    let mut got: BTreeMap<i32, [u64; 4]> = BTreeMap::new();
    let mut bad = Vec::new();
    for e in r.events(None) {
        let e = e.unwrap();
        let Some(tid) = e.tid.filter(|t| reported.contains_key(t)) else { continue };
        let g = got.entry(tid).or_default();
        match e.name.as_str() {
            "pwrite" => {
                let d = e.arg("buf").and_then(ArgValue::as_data).unwrap_or_default();
                if e.ret != Some(d.len() as i64) || e.buffer_not_captured {
                    bad.push(format!(
                        "#{} pwrite: ret {:?}, {} bytes",
                        e.unique_id,
                        e.ret,
                        d.len()
                    ));
                }
                // Write n of thread i: byte j is j ^ (i * 31 + n * 7). Every 16th is checked
                // whole; with losses (drop) n is unknown, so only the pattern is.
                let n = g[0];
                if n % 16 == 0 && !d.is_empty() {
                    let c = if every_call {
                        (reported[&tid].index * 31 + n as i64 * 7) as u8
                    } else {
                        d[0]
                    };
                    if let Some(j) = d.iter().enumerate().position(|(j, &b)| b != (j as u8) ^ c) {
                        bad.push(format!(
                            "#{} pwrite {n} of tid {tid}: byte {j} differs",
                            e.unique_id
                        ));
                    }
                }
                g[0] += 1;
                g[1] += d.len() as u64;
            }
            "pread" => {
                let d = e.arg("buf").and_then(ArgValue::as_data).unwrap_or_default();
                if e.ret != Some(d.len() as i64) || e.buffer_not_captured {
                    bad.push(format!("#{} pread: ret {:?}, {} bytes", e.unique_id, e.ret, d.len()));
                }
                g[2] += 1;
                g[3] += d.len() as u64;
            }
            _ => {}
        }
    }
    assert!(bad.is_empty(), "{} bad records, first: {:?}", bad.len(), &bad[..bad.len().min(5)]);
    got
}

#[test]
fn throttle_records_every_call_and_byte_under_load() {
    if !ebpf_available() {
        return;
    }
    // An 8 MiB ring fills in a few milliseconds at this rate: the producers are stopped and
    // resumed many times.
    let (trace, _, reported) = run_stress("throttle", "8M");
    let r = TraceReader::open(&trace).unwrap();
    assert!(r.lost().is_empty(), "nothing lost: {:?}", r.lost());
    assert_eq!(info(&r, "lost_events").as_deref(), Some("0"));
    let stops: u64 = info(&r, "ebpf_throttle_stops").unwrap().parse().unwrap();
    assert!(stops > 0, "the test did not make the throttle act");
    // How long the program was held: measured from the kernel's stop, so many stops add up to
    // some time, and never more than the run (one process).
    let held: u64 = info(&r, "ebpf_throttle_stopped_ms").unwrap().parse().unwrap();
    let secs: u64 = stress_seconds().parse().unwrap();
    assert!(stops < 50 || held > 0, "{stops} stops held the program 0 ms");
    assert!(held <= (secs + 5) * 1000, "held {held} ms in a {secs} s run");
    let got = recorded(&trace, &reported, true);
    let mut total = [0u64; 4];
    for (tid, want) in &reported {
        let g = got.get(tid).copied().unwrap_or_default();
        assert_eq!(
            g,
            [want.pwrites, want.pwrite_bytes, want.preads, want.pread_bytes],
            "tid {tid}: [pwrites, bytes, preads, bytes] recorded vs reported"
        );
        for i in 0..4 {
            total[i] += g[i];
        }
    }
    eprintln!(
        "throttle: {} pwrite64 ({} bytes) + {} pread64 ({} bytes) recorded = reported, 0 lost, \
         {stops} stops holding it {held} ms",
        total[0], total[1], total[2], total[3]
    );
    // Gigabytes: kept only when a check above failed.
    let _ = std::fs::remove_dir_all(trace.parent().unwrap());
}

#[test]
fn drop_accounts_for_every_call_it_drops() {
    if !ebpf_available() {
        return;
    }
    // A 1 MiB ring cannot keep up: most calls are dropped, and counted.
    let (trace, _, reported) = run_stress("drop", "1M");
    let r = TraceReader::open(&trace).unwrap();
    assert!(info(&r, "ebpf_throttle_stops").is_none(), "drop mode never stops the program");
    let lost = |call: &str| -> u64 {
        r.lost().iter().filter(|l| l.syscall == call).map(|l| l.count as u64).sum()
    };
    let lost_bytes = |call: &str| -> u64 {
        r.lost().iter().filter(|l| l.syscall == call).map(|l| l.bytes as u64).sum()
    };
    for l in r.lost() {
        let (a, b) = (l.time_first.expect("time_first"), l.time_last.expect("time_last"));
        assert!(a <= b && a > 1_700_000_000_000_000_000, "{l:?}");
    }
    let got = recorded(&trace, &reported, false);
    let sum = |f: &dyn Fn(&Reported) -> u64| reported.values().map(f).sum::<u64>();
    let rec = |i: usize| got.values().map(|g| g[i]).sum::<u64>();
    let (pw, pr) = (lost("pwrite"), lost("pread"));
    assert!(pw + pr > 0, "the test did not make the ring overflow");
    assert_eq!(rec(0) + pw, sum(&|t| t.pwrites), "pwrite64: recorded + lost = made");
    assert_eq!(rec(2) + pr, sum(&|t| t.preads), "pread64: recorded + lost = made");
    assert_eq!(rec(1) + lost_bytes("pwrite"), sum(&|t| t.pwrite_bytes), "pwrite64 bytes");
    assert_eq!(rec(3) + lost_bytes("pread"), sum(&|t| t.pread_bytes), "pread64 bytes");
    eprintln!(
        "drop: pwrite64 {} recorded + {pw} lost = {}; pread64 {} recorded + {pr} lost = {}",
        rec(0),
        sum(&|t| t.pwrites),
        rec(2),
        sum(&|t| t.preads)
    );
    let _ = std::fs::remove_dir_all(trace.parent().unwrap());
}

#[test]
fn a_call_larger_than_the_ring_is_read_from_the_stopped_process() {
    if !ebpf_available() {
        return;
    }
    // dd moves 24 MiB in one read and one write; the ring is 1 MiB (chunks of 128 KiB, data
    // limit 512 KiB): most of each buffer is deferred to user space while dd is stopped.
    let dir = ra_testkit::scratch_dir("ebpf-defer");
    let src = dir.join("src");
    let content: Vec<u8> =
        (0..24u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&src, &content).unwrap();
    let trace = dir.join("t.ds");
    let o = bin()
        .args(["record", "-q", "--backend", "ebpf", "--ring-size", "1M", "-o"])
        .arg(&trace)
        .args(["--", "dd", "bs=24M", "count=1", "status=none"])
        .arg(format!("if={}", src.display()))
        .arg(format!("of={}", dir.join("dst").display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = TraceReader::open(&trace).unwrap();
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    let deferred: u64 = info(&r, "ebpf_deferred_records").unwrap().parse().unwrap();
    assert!(deferred > 0, "nothing was deferred");
    let ev: Vec<_> = r.events(None).map(|e| e.unwrap()).collect();
    for call in ["read", "write"] {
        let e = ev
            .iter()
            .find(|e| e.name == call && e.ret == Some(content.len() as i64))
            .unwrap_or_else(|| panic!("dd's 24 MiB {call}"));
        assert!(!e.buffer_not_captured, "{call}");
        let d = e.arg("buf").and_then(ArgValue::as_data).unwrap();
        assert!(d == &content[..], "{call}: {} bytes captured, content equal: false", d.len());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn records_every_process_of_a_cgroup_until_ctrl_c() {
    if !ebpf_available() {
        return;
    }
    let Some(root) = ra_testkit::cgroup2_root() else {
        ra_testkit::privileged("--cgroup", Err("no cgroup2 file system is mounted".into()));
        return;
    };
    let cg = root.join(format!("ra-test-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&cg) {
        ra_testkit::privileged("--cgroup", Err(format!("cannot create {}: {e}", cg.display())));
        return;
    }
    let dir = ra_testkit::scratch_dir("ebpf-cgroup");
    let log = dir.join("ticks");
    // The shell moves itself into the cgroup, then writes a tick every 50 ms.
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec 7>{} && i=0 && while [ $i -lt 100 ]; do \
         echo tick$i >&7; i=$((i+1)); sleep 0.05; done",
        cg.display(),
        log.display()
    );
    let mut member = Command::new("sh").args(["-c", &script]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let trace = dir.join("t.ds");
    let mut rec = bin()
        .args(["record", "-q", "--backend", "ebpf", "-o"])
        .arg(&trace)
        .arg("--cgroup")
        .arg(&cg)
        .spawn()
        .unwrap();
    // Loading the programs takes a moment (longer when the machine is busy with other tests):
    // the shell ticks for 5 s, the recorder gets 3 of them.
    std::thread::sleep(Duration::from_millis(3000));
    let _ = Command::new("kill").args(["-INT", &rec.id().to_string()]).status();
    let st = rec.wait().unwrap();
    let _ = member.kill();
    let _ = member.wait();
    let _ = std::fs::remove_dir(&cg);
    assert!(st.success(), "{st:?}");
    let r = TraceReader::open(&trace).unwrap();
    assert_eq!(info(&r, "cgroup").as_deref(), Some(cg.to_str().unwrap()));
    let ev: Vec<_> = r.events(None).map(|e| e.unwrap()).collect();
    // The shell's writes and its sleep children: several processes, all inside the cgroup.
    let ticks = ev
        .iter()
        .filter(|e| e.name == "write" && e.pid == Some(member.id() as i32))
        .filter(|e| {
            e.arg("buf").and_then(ArgValue::as_data).is_some_and(|d| d.starts_with(b"tick"))
        })
        .count();
    assert!(ticks >= 5, "captured {ticks} tick writes");
    assert!(ev.iter().any(|e| e.name == "execve" && e.ppid == Some(member.id() as i32)), "sleep");
    // Nothing from outside the cgroup (e.g. the recorder, or this test).
    let me = std::process::id() as i32;
    assert!(ev.iter().all(|e| e.pid != Some(me)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_and_missing_privileges_are_one_line() {
    // Checks that need no privileges run everywhere.
    let dir = ra_testkit::scratch_dir("ebpf-bad");
    let one_line = |o: &Output, want: &[&str]| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        for w in want {
            assert!(err.contains(w), "`{w}` in: {err}");
        }
    };
    let o = bin()
        .args(["record", "--backend", "ebpf", "--ring-size", "3M", "-o"])
        .arg(dir.join("t.ds"))
        .args(["--", "true"])
        .output()
        .unwrap();
    one_line(&o, &["power of two"]);
    let o = bin()
        .args(["record", "--ring-size", "lots", "-o", "/tmp/x.ds", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = bin()
        .args(["record", "--backend", "ptrace", "--cgroup", "/sys/fs/cgroup", "-o"])
        .arg(dir.join("t.ds"))
        .output()
        .unwrap();
    one_line(&o, &["--cgroup needs --backend ebpf"]);
    if !ebpf_available() {
        return;
    }
    let o = bin()
        .args(["record", "--backend", "ebpf", "--cgroup"])
        .arg(&dir)
        .arg("-o")
        .arg(dir.join("t.ds"))
        .output()
        .unwrap();
    one_line(&o, &["not a cgroup v2 directory"]);
    // Without privileges: ebpf says what is missing; auto falls back to ptrace in one line.
    if Command::new("setpriv").arg("--version").output().is_err() {
        ra_testkit::privileged("unprivileged probe", Err("setpriv (util-linux) not found".into()));
        return;
    }
    let open = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    };
    open(&dir);
    let nobody = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--"])
            .arg(env!("CARGO_BIN_EXE_reanimator"))
            .args(args)
            .output()
            .unwrap()
    };
    let t = dir.join("n.ds");
    let o = nobody(&["record", "--backend", "ebpf", "-o", t.to_str().unwrap(), "--", "true"]);
    one_line(&o, &["CAP_BPF", "CAP_PERFMON", "--backend ptrace"]);
    assert!(!t.exists() || TraceReader::open(&t).is_ok(), "no half-written trace");
    let o = nobody(&["record", "-o", t.to_str().unwrap(), "--", "true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].contains("using the ptrace backend (ebpf unavailable:"), "{err}");
    assert!(lines[0].contains("CAP_BPF"), "{err}");
    let r = TraceReader::open(&t).unwrap();
    assert_eq!(info(&r, "backend").as_deref(), Some("ptrace"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mmap_pages_record_reads_and_writes_through_shared_mappings() {
    if !ebpf_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("ebpf-mmap");
    let trace = dir.join("t.ds");
    let o = bin()
        .args(["record", "-q", "--backend", "ebpf", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(ra_testkit::program("mmapio"))
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let fd = |k: &str| ArgValue::Int(j[k].as_i64().unwrap());
    let r = TraceReader::open(&trace).unwrap();
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    // This program has pages in the tables: its flush points walk them.
    let walks: u64 = info(&r, "ebpf_page_table_walks").unwrap().parse().unwrap();
    assert!(walks > 0, "mmapio's munmap / msync / exit walked no page table");
    let ev: Vec<_> = r.events(None).map(|e| e.unwrap()).collect();
    let int = |e: &ra_trace::Event, n: &str| e.arg(n).and_then(ArgValue::as_int).unwrap();
    let data = |e: &ra_trace::Event| e.arg("buf").and_then(ArgValue::as_data).unwrap().to_vec();

    // Reads: every page of r.dat once, with its content and the mapping's descriptor (the
    // fault-around maps most pages without a fault of their own).
    let rdat = std::fs::read(dir.join("r.dat")).unwrap();
    let mut reads: Vec<i64> = Vec::new();
    for e in ev.iter().filter(|e| e.name == "mmappread") {
        assert_eq!(e.arg("fd"), Some(&fd("read_fd")), "#{}", e.unique_id);
        let off = int(e, "offset");
        assert!(data(e) == rdat[off as usize..off as usize + 4096], "page at {off}");
        assert_eq!(e.ret, Some(4096));
        reads.push(off / 4096);
    }
    reads.sort_unstable();
    assert_eq!(reads, (0..32).collect::<Vec<i64>>(), "each page read once");
    // Every page record names its file: device and inode as stat reports them, and the path.
    use std::os::unix::fs::MetadataExt;
    for (name, file) in [("mmappread", "r.dat"), ("mmappwrite", "w.dat")] {
        let m = std::fs::metadata(dir.join(file)).unwrap();
        let mut path = dir.join(file).into_os_string().into_encoded_bytes();
        path.push(0);
        for e in ev.iter().filter(|e| e.name == name) {
            assert_eq!(int(e, "device") as u64, m.dev(), "{name} #{}", e.unique_id);
            assert_eq!(int(e, "inode") as u64, m.ino(), "{name} #{}", e.unique_id);
            // (The path when the recorder saw the mapping before this short program unmapped
            // it: /proc/<pid>/map_files.)
            if let Some(p) = e.arg("pathname").and_then(ArgValue::as_data) {
                assert_eq!(p, &path[..]);
            }
            assert!(int(e, "address") != 0);
        }
    }

    // Writes: each page once, at its flush point (msync, munmap, exit_group), with what the
    // file holds.
    let wdat = std::fs::read(dir.join("w.dat")).unwrap();
    let at = |name: &str| ev.iter().find(|e| e.name == name).map(|e| e.unique_id).unwrap();
    let msync = at("msync");
    let munmap_w = ev
        .iter()
        .filter(|e| e.name == "munmap" && e.unique_id > msync)
        .map(|e| e.unique_id)
        .next()
        .unwrap();
    let exit = at("exit_group");
    let mut writes: BTreeMap<i64, (u64, ArgValue)> = BTreeMap::new();
    for e in ev.iter().filter(|e| e.name == "mmappwrite") {
        let off = int(e, "offset");
        assert!(data(e) == wdat[off as usize..off as usize + 4096], "page at {off}");
        let dup = writes.insert(off / 4096, (e.unique_id, e.arg("fd").unwrap().clone()));
        assert!(dup.is_none(), "page {} written twice", off / 4096);
    }
    let page =
        |p: i64| writes.get(&p).cloned().unwrap_or_else(|| panic!("no mmappwrite of page {p}"));
    for p in [0, 2, 4, 6, 8, 10] {
        let (id, f) = page(p);
        assert!(id < msync && f == fd("write_fd"), "page {p} before msync");
    }
    for p in [1, 3] {
        let (id, f) = page(p);
        assert!(msync < id && id < munmap_w && f == fd("write_fd"), "page {p} before munmap");
    }
    let (id, f) = page(15);
    assert!(munmap_w < id && id < exit && f == fd("exit_fd"), "page 15 before exit_group");
    assert_eq!(writes.len(), 9, "{:?}", writes.keys().collect::<Vec<_>>());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Flush points (munmap, msync, mremap, execve, exit) walk the mmap page tables only for a
/// process that has pages in them: a walk visits every bucket (milliseconds), and a program
/// without shared file mappings (here: a shell and its children mapping and unmapping
/// libraries and heap) must not pay one per munmap. Once it did: 20,000 anonymous
/// mmap/munmap pairs took 76 s to record instead of 0.3 s.
#[test]
fn programs_without_shared_mappings_never_walk_the_page_tables() {
    if !ebpf_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("ebpf-nowalk");
    let trace = dir.join("t.ds");
    let o = bin()
        .args(["record", "-q", "--backend", "ebpf", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", "ls / >/dev/null; cat /etc/hostname >/dev/null; true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = TraceReader::open(&trace).unwrap();
    let ev: Vec<_> = r.events(None).map(|e| e.unwrap()).collect();
    let flushes =
        ev.iter().filter(|e| matches!(e.name.as_str(), "munmap" | "execve" | "exit_group")).count();
    assert!(flushes >= 5, "the workload has flush points ({flushes})");
    assert_eq!(info(&r, "ebpf_page_table_walks").as_deref(), Some("0"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The benchmark knobs of bench/record (`ebpf-noop`, `ebpf-discard` rows) say what they did, in
/// the trace and on stderr, and a trace made with them holds no recorded calls.
#[test]
fn benchmark_knobs_leave_a_marked_trace_without_calls() {
    if !ebpf_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("ebpf-knobs");
    for (var, fact, says) in [
        ("REANIMATOR_BPF_NOOP", "ebpf_noop", "record nothing"),
        ("REANIMATOR_DISCARD_EVENTS", "ebpf_discarded_events", "not written to the trace"),
    ] {
        let trace = dir.join(format!("{fact}.ds"));
        let out = dir.join(format!("{fact}.out"));
        let o = bin()
            .env(var, "1")
            .args(["record", "--backend", "ebpf", "-o"])
            .arg(&trace)
            .args(["--", "dd", "if=/dev/zero", "bs=4k", "count=50"])
            .arg(format!("of={}", out.display()))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{var}: {err}");
        assert!(err.contains(&format!("{var}=1")) && err.contains(says), "{var}: {err}");
        assert!(err.contains("recorded 0 calls"), "{var}: {err}");
        let r = TraceReader::open(&trace).unwrap();
        let ev: Vec<_> = r.events(None).map(|e| e.unwrap()).collect();
        // Only the synthetic openat records of the descriptors the command started with.
        let synthetic: usize = info(&r, "synthetic_ids").unwrap_or_default().parse().unwrap_or(0);
        let names: Vec<&str> = ev.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(ev.len(), synthetic, "{var}: {names:?}");
        assert!(names.iter().all(|n| *n == "openat"), "{var}: {names:?}");
        let v = info(&r, fact).unwrap_or_else(|| panic!("{var}: no {fact} in the trace"));
        if var == "REANIMATOR_DISCARD_EVENTS" {
            // dd's 50 writes at least (plus its openat, close, ... and the loader's calls).
            let n: u64 = v.split(' ').next().unwrap().parse().unwrap();
            assert!(n >= 50, "{fact} = {v}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The state letter of /proc/PID/stat (R, S, T, Z, ...), or None once the process is gone.
fn proc_state(pid: u32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s[s.rfind(')')? + 1..].trim_start().chars().next()
}

/// Wait up to `secs` for `pred` on the state of `pid`.
fn wait_state(pid: u32, secs: u64, pred: impl Fn(Option<char>) -> bool) -> Option<char> {
    let t0 = Instant::now();
    loop {
        let s = proc_state(pid);
        if pred(s) || t0.elapsed() > Duration::from_secs(secs) {
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A recorder killed (SIGKILL to its whole process group: no clean-up of its own) while its
/// throttle holds a process stopped does not leave that process stopped: its guardian
/// continues it. The recorder is itself stopped first, so that the attached process is
/// throttled for sure (the ring fills and nobody drains it) when the kill comes.
#[test]
fn a_killed_recorder_leaves_no_process_stopped() {
    if !ebpf_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("ebpf-guardian");
    let mut target = Command::new(ra_testkit::program("stress"))
        .arg(&dir)
        .args(["2", "60"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = target.id();
    let rec = bin()
        .args(["record", "-q", "--backend", "ebpf", "--ring-size", "1M", "-o"])
        .arg(dir.join("t.ds"))
        .args(["-p", &pid.to_string()])
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    // Until the recorder has flushed some calls (it flushes every second once recording; a
    // fixed sleep raced with its start on a loaded machine and left nothing to read).
    let t0 = Instant::now();
    let dumped = || {
        let o = bin().args(["dump", "-n", "5"]).arg(dir.join("t.ds")).output().unwrap();
        String::from_utf8_lossy(&o.stdout).lines().count()
    };
    while dumped() < 5 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(rec.id() as i32, libc::SIGSTOP) };
    let s = wait_state(pid, 10, |s| s == Some('T'));
    let stopped = s == Some('T');
    // SAFETY: kill(2) on the process group of our own child (which leads it).
    unsafe { libc::kill(-(rec.id() as i32), libc::SIGKILL) };
    let out = rec.wait_with_output().unwrap();
    let after = wait_state(pid, 5, |s| s != Some('T'));
    let _ = target.kill();
    let _ = target.wait();
    assert!(stopped, "the throttle stopped the target while the recorder was stopped ({s:?})");
    assert_ne!(after, Some('T'), "the target was left stopped after the recorder's death");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("guardian") && err.contains("continued"), "{err}");
    // What the killed recorder wrote is readable (usually up to an extent it was cut off in).
    let o = bin().arg("info").arg(dir.join("t.ds")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin().args(["dump", "-n", "5"]).arg(dir.join("t.ds")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each read of an eBPF trace says how many pages it added to the page cache (its misses and
/// the read-ahead it started): a file read cold then warm adds every page once, during the
/// first read; `replay --reads as-recorded` replays only those reads, `--reads none` none,
/// and both still verify everything else and the final tree.
#[test]
fn reads_carry_their_cache_misses_and_replay_as_recorded() {
    if !ebpf_available() {
        return;
    }
    let dir = ra_testkit::scratch_dir("ebpf-cachemiss");
    let f = dir.join("data");
    std::fs::write(&f, vec![3u8; 4 << 20]).unwrap();
    let trace = dir.join("t.ds");
    let fs = f.display().to_string();
    let o = bin()
        .args(["record", "--backend", "ebpf", "-q", "--data", "none", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "sync {fs} && dd if={fs} iflag=nocache count=0 status=none && cat {fs} >/dev/null && cat {fs} >/dev/null"
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = TraceReader::open(&trace).unwrap();
    // The two cats' reads of the file: (pid, pages added) per read.
    let mut per_pid: BTreeMap<i32, (u64, u64, u64)> = BTreeMap::new(); // reads, with misses, pages
    for ev in r.events(Some(&["read"])) {
        let ev = ev.unwrap();
        if ev.ret.unwrap_or(0) <= 0 {
            continue;
        }
        let pages = ev
            .extra
            .iter()
            .find(|(k, _)| k == ra_trace::schema::CACHE_MISS_PAGES)
            .and_then(|(_, v)| match v {
                ra_trace::ExtraValue::Int(n) => Some(*n as u64),
                _ => None,
            })
            .expect("every read of an eBPF trace says");
        let e = per_pid.entry(ev.pid.unwrap()).or_default();
        e.0 += 1;
        e.1 += u64::from(pages > 0);
        e.2 += pages;
    }
    let pages = (4u64 << 20) / 4096;
    let cold = per_pid.values().filter(|e| e.2 >= pages).count();
    assert_eq!(cold, 1, "exactly one cat read the file from disk: {per_pid:?}");
    let misses: u64 = per_pid.values().map(|e| e.1).sum();
    for (mode, want_issued) in [("as-recorded", Some(misses)), ("none", None), ("all", None)] {
        let root = dir.join(format!("r-{mode}"));
        std::fs::create_dir_all(&root).unwrap();
        let o = bin()
            .args(["replay", "--init", "--json", "--reads", mode, "--root"])
            .arg(&root)
            .arg(&trace)
            .output()
            .unwrap();
        let rep: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(0), "{mode}: {rep}");
        assert_eq!(rep["reads"], mode);
        let read = &rep["per_call"]["read"];
        let issued = read["issued"].as_u64().unwrap();
        match (mode, want_issued) {
            ("as-recorded", Some(n)) => assert!(issued <= n + 10 && issued >= n, "{mode}: {read}"),
            ("none", _) => assert!(read["skipped"].as_u64().unwrap() > 0 && issued < 20, "{read}"),
            _ => assert_eq!(read["skipped"], 0, "{read}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
