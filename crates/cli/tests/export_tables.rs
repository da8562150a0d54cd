//! `reanimator export --format parquet`: real traces (a program recorded by both recorders,
//! Re-Animator's original traces, the example) exported together into one dataset, which
//! DuckDB queries (docs/ANALYSIS.md's queries, through scripts/analysis-check.py) and pyarrow
//! reads back, every answer and every data buffer checked against `dump --format jsonl` of
//! the same traces; files private; bad input refused in one line.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::bin;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run reanimator")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether python3 has duckdb and pyarrow (scripts/install-deps.sh installs them).
fn have_engines() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import duckdb, pyarrow"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !ra_testkit::require_testdata(),
            "python3 modules duckdb and pyarrow missing and REANIMATOR_REQUIRE_TESTDATA=1 \
             (bash scripts/install-deps.sh installs them)"
        );
        eprintln!("skip: python3 modules duckdb and pyarrow not installed");
    }
    found
}

const SCRIPT: &str = r#"
import os, sys
d = sys.argv[1]
p = os.path.join(d, "log")
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
for i in range(7):
    os.write(fd, b"line %d of the log, " % i + bytes(range(256)) * (i + 1))
os.pwrite(fd, b"HEADER", 0)
os.fsync(fd)
os.close(fd)
fd = os.open(p, os.O_RDONLY)
while os.read(fd, 1000):
    pass
os.close(fd)
q = os.path.join(d, "small")
fd = os.open(q, os.O_RDWR | os.O_CREAT, 0o600)
os.write(fd, b"x" * 10)
os.close(fd)
try:
    os.open(os.path.join(d, "missing"), os.O_RDONLY)
except FileNotFoundError:
    pass
"#;

fn record(backend: &str, trace: &Path, work: &Path) {
    let o = bin()
        .args(["record", "--backend", backend, "-q", "-o", s(trace), "--", "python3", "-c"])
        .arg(SCRIPT)
        .arg(work)
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
}

fn jsonl(trace: &Path, out: &Path) {
    let o = run(&["dump", s(trace), "--format", "jsonl"]);
    assert!(o.status.success(), "dump: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(out, &o.stdout).unwrap();
}

#[test]
fn duckdb_and_pyarrow_answer_as_the_dumps() {
    if !have_engines() {
        return;
    }
    let dir = ra_testkit::scratch_dir("export-tables-engines");
    let dir = dir.canonicalize().unwrap();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut traces: Vec<(PathBuf, &str)> = Vec::new();
    let pt = dir.join("prog-ptrace.ds");
    record("ptrace", &pt, &work);
    traces.push((pt, "testhost"));
    if ra_testkit::ebpf_available() {
        let eb = dir.join("prog-ebpf.ds");
        record("ebpf", &eb, &work);
        traces.push((eb, "testhost"));
    }
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/example.ds");
    traces.push((example, "testhost"));
    for t in ["mt.ds", "output-ee34491.ds", "output_lsR.ds"] {
        if let Some(p) = ra_testkit::shared_testdata(&format!("dataseries/reanimator-replayer/{t}"))
        {
            traces.push((p, "testhost"));
        }
    }
    let out = dir.join("dataset");
    let mut args = vec!["export", "--format", "parquet", "-o", s(&out), "--data", "full"];
    args.extend(["--threads", "2", "--host", "testhost"]);
    let paths: Vec<String> = traces.iter().map(|(p, _)| s(p).to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let err = ok(&run(&args));
    assert_eq!(err.lines().filter(|l| l.contains(": exported ")).count(), traces.len(), "{err}");
    // Every file 0600 and every directory 0700 (they hold the traces' paths and data).
    let mut files = 0;
    let mut stack = vec![out.clone()];
    while let Some(d) = stack.pop() {
        assert_eq!(d.metadata().unwrap().permissions().mode() & 0o777, 0o700, "{}", d.display());
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files += 1;
                let m = p.metadata().unwrap().permissions().mode() & 0o777;
                assert_eq!(m, 0o600, "{}", p.display());
            }
        }
    }
    assert_eq!(files, traces.len() * 5, "calls, data, facts, losses, snapshots per trace");
    let mut check = Command::new("python3");
    check.arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/analysis-check.py"));
    check.arg(&out);
    for (p, host) in &traces {
        let id = p.file_stem().unwrap().to_str().unwrap();
        let j = dir.join(format!("{id}.jsonl"));
        jsonl(p, &j);
        check.arg(format!("{host}/{id}={}", j.display()));
        if id.starts_with("prog-") {
            check.args(["--files", &format!("{host}/{id}")]);
        }
    }
    let o = check.output().unwrap();
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{report}{}", String::from_utf8_lossy(&o.stderr));
    assert!(report.contains("busiest_files: ") && !report.contains("busiest_files: 0 rows"));
    // The recorded program's own file is the busiest, with exactly the bytes it wrote and
    // read: 7 writes of 19 + 256 (i + 1) bytes, then the 6-byte pwrite; read back whole.
    let written: i64 = (0..7).map(|i| 19 + 256 * (i + 1)).sum::<i64>() + 6;
    let log = format!("{}/log", work.display());
    let q = format!(
        "SELECT trace_id, sum(return_value) FROM read_parquet('{}/calls/*/*/*.parquet') \
         WHERE fd_path = '{log}' AND syscall IN ('write','pwrite64','read') AND return_value > 0 \
         GROUP BY trace_id ORDER BY trace_id",
        out.display()
    );
    let o = Command::new("python3")
        .args(["-c", "import duckdb,sys; print(duckdb.connect().execute(sys.argv[1]).fetchall())"])
        .arg(&q)
        .output()
        .unwrap();
    let got = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(got.contains(&format!("('prog-ptrace', {})", 2 * written - 6)), "{got} {q}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `dump --format csv` names its columns as jsonl does and keeps every buffer whole (it used
/// to cut them at 32 bytes, strace-style, without saying so).
#[test]
fn dump_csv_keeps_whole_buffers_under_jsonl_names() {
    let dir = ra_testkit::scratch_dir("export-tables-csv");
    let dir = dir.canonicalize().unwrap();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let t = dir.join("t.ds");
    record("ptrace", &t, &work);
    let o = run(&["dump", s(&t), "--format", "csv"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = String::from_utf8(o.stdout).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let o = run(&["dump", s(&t), "--format", "jsonl", "-n", "1"]);
    let first: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for h in &header {
        assert!(first.get(h).is_some(), "csv column {h} is not a jsonl field: {first}");
    }
    // The first write of the log: 19 bytes of text and 256 bytes 0..=255, in hex, whole.
    let mut want = hex(b"line 0 of the log, ");
    want.push_str(&hex(&(0..=255u8).collect::<Vec<u8>>()));
    assert!(csv.contains(&want), "the 275-byte buffer, whole, in {}", &csv[..csv.len().min(3000)]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `export --format csv`: a file per call family under the Parquet export's column names, the
/// same rows and values as the Parquet export (DuckDB reads both), and `--compress xz` the
/// same bytes compressed.
#[test]
fn csv_export_per_family_equals_the_parquet_export() {
    if !have_engines() || !ra_testkit::have_program("xz") {
        return;
    }
    let dir = ra_testkit::scratch_dir("export-tables-iotta");
    let dir = dir.canonicalize().unwrap();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let t = dir.join("t.ds");
    record("ptrace", &t, &work);
    let (pq, csv, xz) = (dir.join("pq"), dir.join("csv"), dir.join("xz"));
    ok(&run(&["export", s(&t), "--format", "parquet", "-o", s(&pq), "--data", "full"]));
    ok(&run(&["export", s(&t), "--format", "csv", "-o", s(&csv), "--data", "full"]));
    let e = ok(&run(&["export", s(&t), "--format", "csv", "-o", s(&xz), "--compress", "xz"]));
    assert!(e.contains(": exported "), "{e}");
    let host = std::fs::read_dir(&csv).unwrap().next().unwrap().unwrap().file_name();
    let part = format!("{}/trace=t", host.to_str().unwrap());
    let mut families = 0;
    for f in std::fs::read_dir(csv.join(&part)).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        if name == "data.csv" {
            continue;
        }
        let z = xz.join(&part).join(format!("{name}.xz"));
        let o = Command::new("xz").arg("-dc").arg(&z).output().unwrap();
        assert!(o.status.success(), "{}", z.display());
        assert_eq!(o.stdout, std::fs::read(&f).unwrap(), "{name}: xz export differs");
        let mode = f.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}");
        families += name.starts_with("calls-") as usize;
    }
    assert!(families >= 4, "read, write, open-close, sync, ... files");
    // Every call and value the same as in Parquet: the same rows per call, the same sums.
    let q = format!(
        r#"
import duckdb, sys
c = duckdb.connect()
pq = c.execute("SELECT call, count(*), sum(return_value), sum(buf_length), count(fd_path), max(pathname) FROM read_parquet('{pq}/calls/*/*/*.parquet') GROUP BY call ORDER BY call").fetchall()
cv = c.execute("SELECT call, count(*), sum(return_value), sum(TRY_CAST(buf_length AS BIGINT)), count(fd_path), max(pathname) FROM read_csv('{csv}/{part}/calls-*.csv', union_by_name = true, all_varchar = false) GROUP BY call ORDER BY call").fetchall()
assert pq == cv, (pq, cv)
d1 = c.execute("SELECT count(*), sum(length), sum(octet_length(bytes)) FROM read_parquet('{pq}/data/*/*/*.parquet')").fetchall()
d2 = c.execute("SELECT count(*), sum(length), sum(octet_length(unhex(bytes))) FROM read_csv('{csv}/{part}/data.csv', types = {{'bytes': 'VARCHAR'}})").fetchall()
assert d1 == d2, (d1, d2)
print(len(pq), "calls equal;", d1)
"#,
        pq = pq.display(),
        csv = csv.display()
    );
    let o = Command::new("python3").args(["-c", &q]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `export --format chrome-trace`: one slice per call (the dump's calls, in the same number),
/// a named track per thread, processes named, and byte counters that end at what the
/// process's writes returned.
#[test]
fn chrome_trace_has_a_slice_per_call_and_byte_counters() {
    let dir = ra_testkit::scratch_dir("export-tables-chrome");
    let dir = dir.canonicalize().unwrap();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let t = dir.join("t.ds");
    record("ptrace", &t, &work);
    let out = dir.join("t.json");
    ok(&run(&["export", s(&t), "--format", "chrome-trace", "-o", s(&out)]));
    assert_eq!(out.metadata().unwrap().permissions().mode() & 0o777, 0o600);
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let evs = j["traceEvents"].as_array().unwrap();
    let o = run(&["dump", s(&t), "--format", "jsonl"]);
    let calls: Vec<serde_json::Value> = o
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let slices: Vec<_> = evs.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(slices.len(), calls.len());
    for (x, c) in slices.iter().zip(&calls) {
        assert_eq!(x["args"]["unique_id"], c["unique_id"]);
        assert_eq!(x["name"], c["call"]);
        assert_eq!(x["tid"], c["tid"]);
    }
    let tids: std::collections::BTreeSet<i64> =
        calls.iter().map(|c| c["tid"].as_i64().unwrap()).collect();
    let named: std::collections::BTreeSet<i64> = evs
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| e["tid"].as_i64().unwrap())
        .collect();
    assert_eq!(named, tids);
    assert!(evs.iter().any(|e| e["ph"] == "M"
        && e["name"] == "process_name"
        && e["args"]["name"].as_str().unwrap().starts_with("python3")));
    let written: i64 = calls
        .iter()
        .filter(|c| ["write", "pwrite64", "writev"].contains(&c["syscall"].as_str().unwrap_or("")))
        .filter_map(|c| c["return_value"].as_i64().filter(|&r| r > 0))
        .sum();
    // Each process's counter only grows; their last values add up to all the writes.
    let mut per_pid = std::collections::BTreeMap::new();
    for e in evs.iter().filter(|e| e["ph"] == "C") {
        let w = e["args"]["written"].as_i64().unwrap();
        let last = per_pid.entry(e["pid"].as_i64().unwrap()).or_insert(0);
        assert!(w >= *last, "{e}");
        *last = w;
    }
    assert_eq!(per_pid.values().sum::<i64>(), written, "{per_pid:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `export --format ctf`: babeltrace2 (Debian's) reads the CTF trace back with an entry and
/// an exit event per call of the dump, in the calls' pid and tid, with their arguments.
#[test]
fn ctf_reads_back_in_babeltrace2() {
    if !ra_testkit::have_program("babeltrace2") {
        return;
    }
    let dir = ra_testkit::scratch_dir("export-tables-ctf");
    let dir = dir.canonicalize().unwrap();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let t = dir.join("t.ds");
    record("ptrace", &t, &work);
    let out = dir.join("ctf");
    ok(&run(&["export", s(&t), "--format", "ctf", "-o", s(&out)]));
    let o = Command::new("babeltrace2").arg(&out).output().unwrap();
    assert!(o.status.success(), "babeltrace2: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let o = run(&["dump", s(&t), "--format", "jsonl"]);
    let calls: Vec<serde_json::Value> = o
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let count = |what: &str, want: &dyn Fn(&serde_json::Value) -> bool| {
        let got = text.lines().filter(|l| l.contains(what)).count();
        (got, calls.iter().filter(|c| want(c)).count())
    };
    let (got, want) = count(" syscall_entry_", &|c| !c["syscall"].is_null());
    assert_eq!(got, want, "entries");
    let (got, want) = count(" syscall_exit_", &|c| !c["time_returned"].is_null());
    assert_eq!(got, want, "exits");
    let (got, want) = count(" syscall_entry_pwrite64:", &|c| c["syscall"] == "pwrite64");
    assert_eq!((got, want), (1, 1));
    let log = format!("pathname = \"{}/log\"", work.display());
    assert_eq!(text.lines().filter(|l| l.contains(&log)).count(), 2, "two opens of the log");
    assert!(text.lines().any(|l| l.contains("syscall_entry_pwrite64") && l.contains("count = 6")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `reanimator fs` trace lands in the same columns as the recorders' (root: FUSE): a FUSE
/// `read` is `syscall` pread64 with `fd`, `count`, `offset`, `buf_length` and `fd_path`.
#[test]
fn fs_traces_fill_the_system_calls_columns() {
    let root = if rustix::process::geteuid().is_root() && Path::new("/dev/fuse").exists() {
        Ok(())
    } else {
        Err("needs root and /dev/fuse".to_string())
    };
    if !ra_testkit::privileged("fs trace export", root) || !have_engines() {
        return;
    }
    let dir = ra_testkit::scratch_dir("export-tables-fs");
    let dir = dir.canonicalize().unwrap();
    let (lower, mnt, t) = (dir.join("lower"), dir.join("mnt"), dir.join("fs.ds"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let mut child = bin()
        .args(["fs", "mount", s(&lower), s(&mnt), "-o", s(&t)])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let mounted = || {
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .any(|l| l.split(' ').nth(4) == Some(s(&mnt)))
    };
    while !mounted() {
        assert!(t0.elapsed().as_secs() < 10, "mount did not come up");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::metadata(&mnt).unwrap();
    let f = mnt.join("log");
    std::fs::write(&f, [7u8; 300]).unwrap();
    assert_eq!(std::fs::read(&f).unwrap().len(), 300);
    let o = bin().args(["fs", "umount", s(&mnt)]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    child.wait().unwrap();
    let out = dir.join("pq");
    ok(&run(&["export", s(&t), "--format", "parquet", "-o", s(&out)]));
    let q = format!(
        "SELECT backend, syscall, sum(return_value), sum(buf_length), min(fd_path), count(fd), \
         count(\"count\"), count(\"offset\") FROM read_parquet('{}/calls/*/*/*.parquet') \
         WHERE call IN ('read', 'write') AND return_value > 0 GROUP BY ALL ORDER BY syscall",
        out.display()
    );
    let o = Command::new("python3")
        .args(["-c", "import duckdb,sys; print(duckdb.connect().execute(sys.argv[1]).fetchall())"])
        .arg(&q)
        .output()
        .unwrap();
    let got = String::from_utf8_lossy(&o.stdout).into_owned();
    let log = f.display();
    assert!(got.contains(&format!("('fs', 'pread64', 300, 300, '{log}', 1, 1, 1)")), "{got}");
    assert!(got.contains(&format!("('fs', 'pwrite64', 300, 300, '{log}', 1, 1, 1)")), "{got}");
    let _ = std::fs::remove_dir_all(&dir);
}

use ra_hex::encode as hex;

#[test]
fn bad_input_is_one_line() {
    let dir = ra_testkit::scratch_dir("export-tables-bad");
    let out = dir.join("out");
    let empty = dir.join("empty.ds");
    std::fs::write(&empty, b"").unwrap();
    let text = dir.join("notes.ds");
    std::fs::write(&text, b"this is not a trace\n").unwrap();
    for (f, what) in [(&empty, "empty"), (&text, "notes.ds")] {
        let o = run(&["export", "--format", "parquet", "-o", s(&out), s(f)]);
        let err = ra_testkit::assert_clean_failure(&o);
        assert!(err.contains(what), "{err}");
        assert!(!out.exists(), "nothing written for {}", f.display());
    }
    let o = run(&["export", "--format", "parquet", s(&text)]);
    assert!(ra_testkit::assert_clean_failure(&o).contains("-o DIR"));
    // A trace cut inside a random extent past the first: the calls before it are exported,
    // with one note.
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/example.ds");
    let bytes = std::fs::read(&example).unwrap();
    let ds = dataseries::DsReader::open(&example).unwrap();
    let heads: Vec<_> = ds.headers().map(Result::unwrap).collect();
    let seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos()
            as usize;
    let calls: Vec<_> =
        heads.iter().filter(|h| h.type_name.starts_with("IOTTAFSL::Trace::Syscall::")).collect();
    let h = calls[1 + seed % (calls.len() - 1)];
    let cut_at = (h.offset + h.packed_len / 2) as usize;
    let cut = dir.join("cut.ds");
    std::fs::write(&cut, &bytes[..cut_at]).unwrap();
    let o = run(&["export", "--format", "parquet", "-o", s(&out), s(&cut)]);
    let err = ok(&o);
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("reanimator: note: ")).collect();
    assert_eq!(notes.len(), 1, "cut at {cut_at}: {err}");
    assert!(notes[0].contains("cut.ds"), "{err}");
    assert!(out.join("calls/host=unknown/trace=cut/part-0.parquet").is_file(), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A call without a call time has no place on a timeline: both timeline formats leave it out
/// and the summary says how many were left out, so the slices' count is not taken for the
/// trace's.
#[test]
fn timelines_count_the_calls_they_leave_out() {
    use ra_trace::{ArgValue, Event, TraceWriter, WriterConfig};
    let dir = ra_testkit::scratch_dir("export-tables-untimed");
    let t = dir.join("t.ds");
    let mut w = TraceWriter::create(&t, &[("arch", b"x86_64")], WriterConfig::default()).unwrap();
    for (id, timed) in [(1u64, true), (2, false), (3, true)] {
        let mut e = Event::new(ra_syscalls::lookup("umask").unwrap());
        e.unique_id = id;
        if timed {
            e.time_called = Some(id as i64 * 1000);
            e.time_returned = Some(id as i64 * 1000 + 10);
        }
        (e.tid, e.pid, e.ret, e.errno) = (Some(7), Some(7), Some(0o22), Some(0));
        e.set_arg("mask", ArgValue::Int(0o22));
        w.append(&e).unwrap();
    }
    w.finish().unwrap();
    let out = dir.join("t.json");
    let o = run(&["export", s(&t), "--format", "chrome-trace", "-o", s(&out)]);
    let err = ok(&o);
    assert!(err.contains("1 calls left off the timeline (no call time)"), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let slices = j["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").count();
    assert_eq!(slices, 2);
    let o = run(&["export", s(&t), "--format", "ctf", "-o", s(&dir.join("ctf"))]);
    let err = ok(&o);
    assert!(err.contains("1 calls left off the timeline (no call time, or a call type"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
