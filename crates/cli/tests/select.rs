//! `reanimator select`, `split` and `merge` (docs/SELECT.md): a workload of real programs (tar,
//! sqlite3, make, python3) recorded by each recorder, cut and combined; every output read back
//! by `dump` and `stats` and checked against the input's calls, the selections replayed with
//! verification; bad input refused with one line.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use ra_testkit::{assert_clean_failure, backend, both_backends, case_dir};
use serde_json::Value;

use common::{bin, write_scripted_trace};

fn run(args: &[&std::ffi::OsStr]) -> Output {
    bin().args(args).output().unwrap()
}

fn ok(o: &Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn s(p: &Path) -> &std::ffi::OsStr {
    p.as_os_str()
}

fn a(x: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(x)
}

/// Every call of a trace as `dump --format jsonl` gives it.
fn calls(trace: &Path) -> Vec<Value> {
    let out = ok(&run(&[a("dump"), s(trace), a("--format"), a("jsonl")]), "dump");
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The calls of a selection, without the synthetic records of its window's start (ids from
/// the input's `synthetic` up to the selection's `synthetic_ids`).
fn selected_calls(sel: &Path, synthetic: i64) -> Vec<Value> {
    let v = &facts(sel)["synthetic_ids"];
    let below = v.as_str().map_or_else(|| v.as_i64(), |s| s.parse().ok()).unwrap();
    let mut c = calls(sel);
    c.retain(|c| !(synthetic..below).contains(&int(c, "unique_id")));
    c
}

/// `stats --json` per call: (calls, errors, read bytes, written bytes).
fn stats(trace: &Path) -> BTreeMap<String, [u64; 4]> {
    let out = ok(&run(&[a("stats"), s(trace), a("--json"), a("--top"), a("1000")]), "stats");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let n = |k: &str| g[k].as_u64().unwrap();
            (
                g["group"].as_str().unwrap().to_string(),
                [n("calls"), n("errors"), n("read_bytes"), n("written_bytes")],
            )
        })
        .collect()
}

fn add(into: &mut BTreeMap<String, [u64; 4]>, from: &BTreeMap<String, [u64; 4]>) {
    for (k, v) in from {
        let e = into.entry(k.clone()).or_default();
        for i in 0..4 {
            e[i] += v[i];
        }
    }
}

/// The facts of a trace (`info --json`).
fn facts(trace: &Path) -> Value {
    let out = ok(&run(&[a("info"), s(trace), a("--json")]), "info");
    serde_json::from_str::<Value>(out.trim()).unwrap()["info"].clone()
}

/// Replay into a fresh root with `--init`: every call matched, the final state (if the trace
/// has one) equal.
fn replay_verified(trace: &Path, root: &Path) -> Value {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir(root).unwrap();
    let o = run(&[a("replay"), s(trace), a("--root"), s(root), a("--init"), a("--json")]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("replay report ({e}): {}", String::from_utf8_lossy(&o.stderr));
    });
    assert_eq!(
        r["mismatch_total"],
        0,
        "{}",
        serde_json::to_string_pretty(&r["mismatches"]).unwrap()
    );
    assert!(r["totals"]["issued"].as_u64().unwrap() > 0);
    for f in r["final_state"].as_array().into_iter().flatten() {
        assert_eq!(f["differences"], 0, "final state: {f}");
    }
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    r
}

/// The workload: tar, sqlite3, make (whose recipe runs a shell and cat) and python3.
const SCRIPT: &str = "mkdir -p src/d && python3 -c \"open('src/a','w').write('x'*5000)\" && \
    echo hello > src/d/b && tar cf a.tar src && mkdir out && tar xf a.tar -C out && \
    sqlite3 db.sqlite 'create table t(x); insert into t values(1); select * from t;' && \
    printf 'all:\\n\\tcat src/a src/d/b > made\\n' > Makefile && make -s";

fn record(base: &Path) -> PathBuf {
    let work = base.join("work");
    let trace = base.join("t.ds");
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "-o"])
        .arg(&trace)
        .arg("--snapshot")
        .arg(&work)
        .args(["--", "sh", "-c", SCRIPT])
        .current_dir(&work)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
    trace
}

/// The same calls (compared whole), or which ids differ.
fn assert_same(got: &[Value], want: &[&Value], what: &str) {
    let ids = |v: &mut dyn Iterator<Item = &Value>| {
        v.map(|c| int(c, "unique_id")).collect::<BTreeSet<_>>()
    };
    let (g, w) = (ids(&mut got.iter()), ids(&mut want.iter().copied()));
    let extra: Vec<_> = g.difference(&w).take(5).collect();
    let missing: Vec<_> = w.difference(&g).take(5).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "{what}: extra ids {extra:?}, missing {missing:?}"
    );
    // What descriptors name is dump's reading of the calls before (a subset may not hold
    // the open): the calls themselves are compared.
    let strip = |c: &Value| {
        let mut c = c.clone();
        for k in ["fd_path", "fd_path2", "ret_fd_path"] {
            c.as_object_mut().unwrap().remove(k);
        }
        c
    };
    for (a, b) in got.iter().zip(want) {
        assert_eq!(strip(a), strip(b), "{what}: the calls differ");
    }
    assert_eq!(got.len(), want.len(), "{what}");
}

fn int(v: &Value, k: &str) -> i64 {
    v[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// Select everything, by time, by process; split three ways; merge: each output checked
/// against the input's own calls.
fn cut_and_combine() {
    let base = case_dir("select", "programs");
    let trace = record(&base);
    let all = calls(&trace);
    assert!(all.len() > 200, "{} calls", all.len());
    let synthetic: i64 = facts(&trace)["synthetic_ids"].as_i64().expect("synthetic_ids");

    // Everything: the same calls, with their ids, and it replays to the recorded tree.
    let every = base.join("every.ds");
    ok(&run(&[a("select"), s(&trace), a("-o"), s(&every), a("-q")]), "select all");
    assert!(calls(&every) == all, "select of everything keeps every call as it was");
    assert_eq!(std::fs::metadata(&every).unwrap().permissions().mode() & 0o777, 0o600);
    let f = facts(&every);
    let sel: Value = serde_json::from_str(f["selected_from"].as_str().unwrap()).unwrap();
    assert_eq!(sel["calls_kept"], all.len() as u64 - synthetic as u64, "synthetic records aside");
    assert_eq!(sel["end_snapshot"], "kept");
    replay_verified(&every, &base.join("root-every"));

    // A time window, relative and absolute: exactly the calls made in it.
    // From the first call after the synthetic records (the descriptors it started with).
    let start = all.iter().find(|c| int(c, "unique_id") >= synthetic).unwrap();
    let start = int(start, "time_called");
    let mut times: Vec<i64> = all.iter().map(|c| int(c, "time_called")).collect();
    times.sort();
    let (lo, hi) = (times[times.len() / 3], times[2 * times.len() / 3]);
    // Every selection keeps the synthetic records: the state its calls start from.
    let kept = |keep: &dyn Fn(&Value) -> bool| -> Vec<&Value> {
        all.iter().filter(|c| int(c, "unique_id") < synthetic || keep(c)).collect()
    };
    let want = kept(&|c| (lo..hi).contains(&int(c, "time_called")));
    let rel = format!("{}ns..{}ns", lo - start, hi - start);
    let abs = format!("@{}..@{}", lo as f64 / 1e9, hi as f64 / 1e9);
    let window = base.join("window.ds");
    ok(&run(&[a("select"), s(&trace), a("-o"), s(&window), a("--time"), a(&rel), a("-q")]), "time");
    let got = selected_calls(&window, synthetic);
    assert_same(&got, &want, &format!("--time {rel}"));
    let window2 = base.join("window2.ds");
    ok(&run(&[a("select"), s(&trace), a("-o"), s(&window2), a("--time"), a(&abs), a("-q")]), "@");
    // Seconds as a decimal fraction round to the µs: the same window give or take its ends.
    assert!(selected_calls(&window2, synthetic).len().abs_diff(want.len()) <= 2, "--time {abs}");

    // make and its descendants (the shell and cat of its recipe), from the clone calls.
    let make = all
        .iter()
        .find(|c| {
            c["call"] == "execve"
                && c["return_value"] == 0
                && c["args"]["pathname"].as_str().is_some_and(|f| f.ends_with("/make"))
        })
        .unwrap_or_else(|| panic!("no execve of make"));
    let make_pid = int(make, "pid") as i32;
    let mut tree: BTreeSet<i32> = [make_pid].into();
    loop {
        let n = tree.len();
        for c in &all {
            let name = c["call"].as_str().unwrap();
            if ["clone", "clone3", "fork", "vfork"].contains(&name)
                && tree.contains(&(int(c, "pid") as i32))
                && c["return_value"].as_i64().unwrap_or(-1) > 0
            {
                tree.insert(c["return_value"].as_i64().unwrap() as i32);
            }
        }
        if tree.len() == n {
            break;
        }
    }
    let want = kept(&|c| tree.contains(&(int(c, "pid") as i32)));
    let pids_in = |v: &[&Value]| v.iter().map(|c| int(c, "pid")).collect::<BTreeSet<_>>();
    let real: Vec<&Value> =
        want.iter().copied().filter(|c| int(c, "unique_id") >= synthetic).collect();
    assert!(pids_in(&real).len() >= 2, "make ran a child: {:?}", pids_in(&real));
    let sub = base.join("make.ds");
    let p = make_pid.to_string();
    ok(&run(&[a("select"), s(&trace), a("-o"), s(&sub), a("--pid"), a(&p), a("-q")]), "--pid");
    assert_same(&selected_calls(&sub, synthetic), &want, &format!("--pid {p} with descendants"));

    // --where, the dump language: the calls on made but its open (cat copies with copy_file_range).
    let writes = base.join("writes.ds");
    let w = "path ~ \"**/made\" && call != openat";
    ok(&run(&[a("select"), s(&trace), a("-o"), s(&writes), a("--where"), a(w), a("-q")]), "where");
    let dumped =
        ok(&run(&[a("dump"), s(&trace), a("--format"), a("jsonl"), a("--where"), a(w)]), "");
    let matched: Vec<Value> = dumped.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!matched.is_empty());
    let want = kept(&|c| matched.contains(c));
    assert_same(&selected_calls(&writes, synthetic), &want, "--where");

    // Split three ways: the parts' stats add up to the whole's, every call once.
    let whole = stats(&trace);
    for by in ["size=16K", "pid", "time=2ms"] {
        let dir = base.join(format!("parts-{}", by.replace('=', "-")));
        ok(&run(&[a("split"), s(&trace), a("--by"), a(by), a("-o"), s(&dir), a("-q")]), by);
        let mut sum = BTreeMap::new();
        let mut ids = Vec::new();
        let mut parts: Vec<PathBuf> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        parts.sort();
        assert!(parts.len() >= 2, "--by {by}: {parts:?}");
        for p in &parts {
            let name = p.file_name().unwrap().to_str().unwrap();
            let prefix = match by {
                "pid" => "pid-",
                b if b.starts_with("time") => "time-",
                _ => "part-",
            };
            assert!(name.starts_with(prefix) && name.ends_with(".ds"), "{name}");
            assert_eq!(std::fs::metadata(p).unwrap().permissions().mode() & 0o777, 0o600);
            add(&mut sum, &stats(p));
            ids.extend(calls(p).iter().map(|c| int(c, "unique_id")));
        }
        assert_eq!(sum, whole, "--by {by}: the parts' stats add up to the whole's");
        ids.sort();
        let mut want: Vec<i64> = all.iter().map(|c| int(c, "unique_id")).collect();
        want.sort();
        assert_eq!(ids, want, "--by {by}: every call in one part");
    }

    // Merge the trace with its make selection: ids apart, stats the sum, hosts listed.
    let merged = base.join("merged.ds");
    ok(&run(&[a("merge"), s(&trace), s(&sub), a("-o"), s(&merged), a("-q")]), "merge");
    let m = calls(&merged);
    let mut want = whole.clone();
    add(&mut want, &stats(&sub));
    assert_eq!(stats(&merged), want);
    let second: Vec<&Value> = m.iter().filter(|c| int(c, "pid") >= 1 << 22).collect();
    assert_eq!(second.len(), calls(&sub).len(), "the second input's pids are offset");
    let synthetic_pids: BTreeSet<i32> = all
        .iter()
        .filter(|c| int(c, "unique_id") < synthetic)
        .map(|c| int(c, "pid") as i32)
        .collect();
    for c in &second {
        let pid = (int(c, "pid") - (1 << 22)) as i32;
        assert!(tree.contains(&pid) || synthetic_pids.contains(&pid), "{c}");
    }
    let ids: Vec<i64> = m.iter().map(|c| int(c, "unique_id")).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids numbered afresh");
    let times: Vec<i64> = m.iter().map(|c| int(c, "time_called")).collect();
    let mf: Value = serde_json::from_str(facts(&merged)["merged_from"].as_str().unwrap()).unwrap();
    assert_eq!(mf["inputs"].as_array().unwrap().len(), 2);
    assert_eq!(mf["inputs"][1]["pid_offset"], 1 << 22);
    assert_eq!(mf["inputs"][1]["calls"], second.len() as u64);
    assert!(times.len() == ids.len());
    let _ = std::fs::remove_dir_all(&base);
}

both_backends!(cut_and_combine);

/// A window starting mid-trace, while a file is open and half written and another open
/// half read, after a chdir: the selection begins with synthetic opens of what was open then
/// (with the files' positions), in the cwd of then, and replays with every call matched, from
/// the selection file and from `replay --time` directly.
fn window_starting_mid_trace() {
    let base = case_dir("select", "window");
    let work = base.join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::write(work.join("sub/seed.txt"), "seed-bytes\n").unwrap();
    let trace = base.join("t.ds");
    let script = "import os, sqlite3, time\n\
        os.chdir('sub')\n\
        g = open('seed.txt'); g.read(4)\n\
        f = open('log', 'w'); f.write('a' * 3000); f.flush()\n\
        time.sleep(0.3)\n\
        f.write('b' * 2000); f.close(); g.read(); g.close()\n\
        c = sqlite3.connect('db.sqlite'); c.execute('create table t(x)'); c.commit(); c.close()\n";
    let o = bin()
        .args(["record", "-q", "--backend", backend(), "-o"])
        .arg(&trace)
        .arg("--snapshot")
        .arg(&work)
        .args(["--", "python3", "-c", script])
        .current_dir(&work)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
    let all = calls(&trace);
    let first_write = all
        .iter()
        .find(|c| c["call"] == "write" && c["return_value"] == 3000)
        .expect("the write of 3000 bytes");
    let t = int(first_write, "time_called") + 1000;
    let window = format!("@{}.{:09}..", t / 1_000_000_000, t % 1_000_000_000);
    let sel = base.join("w.ds");
    ok(
        &run(&[a("select"), s(&trace), a("--time"), a(&window), a("-o"), s(&sel), a("-q")]),
        "select",
    );
    let f = facts(&sel);
    let fact_int = |v: &Value| v.as_str().map_or_else(|| v.as_i64(), |s| s.parse().ok()).unwrap();
    let below = fact_int(&f["synthetic_ids"]);
    let input_synthetic = fact_int(&facts(&trace)["synthetic_ids"]);
    let log = work.join("sub/log");
    let cut = calls(&sel);
    let synth: Vec<&Value> = cut.iter().filter(|c| int(c, "unique_id") < below).collect();
    let open = synth
        .iter()
        .find(|c| c["call"] == "openat" && c["ret_fd_path"] == log.to_str().unwrap())
        .unwrap_or_else(|| panic!("no synthetic open of {}: {synth:?}", log.display()));
    let fd = int(open, "return_value");
    assert!(
        synth.iter().any(|c| c["call"] == "lseek"
            && c["return_value"] == 3000
            && c["fd_path"] == log.to_str().unwrap()),
        "the log's position: {synth:?}"
    );
    assert!(synth.iter().any(|c| c["call"] == "openat"
        && c["ret_fd_path"] == work.join("sub/seed.txt").to_str().unwrap()));
    assert_eq!(f["cwd"].as_str().unwrap(), work.join("sub").to_str().unwrap());
    let sf: Value = serde_json::from_str(f["selected_from"].as_str().unwrap()).unwrap();
    assert_eq!(
        sf["window_start"]["synthetic_records"].as_i64().unwrap(),
        synth.len() as i64 - input_synthetic
    );
    // The window's write goes through the synthetic descriptor.
    assert!(cut.iter().any(|c| c["call"] == "write"
        && c["return_value"] == 2000
        && int(c, "unique_id") >= below
        && c["args"]["fd"] == fd));
    let r = replay_verified(&sel, &base.join("root"));
    assert!(r["totals"]["matched"].as_u64().unwrap() >= cut.len() as u64 / 2, "{r}");
    assert_eq!(
        std::fs::metadata(base.join("root").join(log.strip_prefix("/").unwrap())).unwrap().len(),
        5000
    );
    // The same selection given to replay.
    let root2 = base.join("root2");
    std::fs::create_dir(&root2).unwrap();
    let o = run(&[
        a("replay"),
        s(&trace),
        a("--root"),
        s(&root2),
        a("--init"),
        a("--json"),
        a("--time"),
        a(&window),
    ]);
    let r: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(r["mismatch_total"], 0, "{}", r["mismatches"]);
    assert_eq!(r["selection"]["calls_kept"].as_u64().unwrap() as usize, cut.len() - synth.len());
    assert_eq!(o.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&base);
}

both_backends!(window_starting_mid_trace);

fn ev(name: &str, t: i64, pid: i32, ret: i64) -> ra_trace::Event {
    let mut e = ra_trace::Event::new(ra_syscalls::lookup(name).expect(name));
    e.ret = Some(ret);
    e.errno = Some(0);
    e.pid = Some(pid);
    e.tid = Some(pid);
    e.time_called = Some(1_700_000_000_000_000_000 + t);
    e.time_returned = Some(1_700_000_000_000_000_000 + t + 1000);
    e
}

/// Bad input: one line, exit status 2, and no output file.
#[test]
fn bad_input_is_refused_with_one_line() {
    let d = std::env::temp_dir().join(format!("ra-select-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let t = d.join("t.ds");
    let evs: Vec<_> = (0..100).map(|i| ev("getpid", i * 1_000_000, 7, 7)).collect();
    write_scripted_trace(&t, b"/", &evs);
    let text = d.join("text.ds");
    std::fs::write(&text, "not a trace\n".repeat(100)).unwrap();
    let cut = d.join("cut.ds");
    let bytes = std::fs::read(&t).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let out = d.join("out.ds");
    let missing = d.join("missing.ds");
    let cases: Vec<(Vec<&std::ffi::OsStr>, &str)> = vec![
        (vec![s(&t), a("--where"), a("ret == 12345")], "empty"),
        (vec![s(&t), a("--time"), a("50ms..20ms")], "inverted"),
        (vec![s(&t), a("--time"), a("1h..2h")], "empty"),
        (vec![s(&t), a("--time"), a("2s")], "range"),
        (vec![s(&t), a("--time"), a("soon..")], "duration"),
        (vec![s(&t), a("--pid"), a("4242")], "4242"),
        (vec![s(&t), a("--tid"), a("4242")], "4242"),
        (vec![s(&t), a("--where"), a("nosuchfield == 1")], "nosuchfield"),
        (vec![s(&text)], "text.ds"),
        (vec![s(&cut)], "cut.ds"),
        (vec![s(&missing)], "missing.ds"),
    ];
    for (args, says) in cases {
        let mut c = vec![a("select")];
        c.extend(args.iter().copied());
        c.extend([a("-o"), s(&out)]);
        let o = run(&c);
        let line = assert_clean_failure(&o);
        assert!(line.contains(says), "{args:?}: {line}");
        assert!(!out.exists(), "{args:?} left {}", out.display());
    }
    // The window that holds half the calls, relative to the trace's start: exact.
    ok(&run(&[a("select"), s(&t), a("--time"), a("..50ms"), a("-o"), s(&out), a("-q")]), "half");
    assert_eq!(calls(&out).len(), 50);
    // Selective replay: the calls left out are counted in the report, the rest replayed.
    let root = d.join("root");
    std::fs::create_dir(&root).unwrap();
    let o = run(&[a("replay"), s(&t), a("--root"), s(&root), a("--init"), a("--json")]
        .into_iter()
        .chain([a("--time"), a("..50ms")])
        .collect::<Vec<_>>());
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["selection"]["calls_kept"], 50, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(r["selection"]["calls_left_out"], 50);
    let by: u64 = r["selection"]["left_out_by_class"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by, 50);
    assert_eq!(r["mismatch_total"], 0);
    let plan = d.join("t.plan");
    let o = run(&[
        a("compile"),
        s(&t),
        a("-o"),
        s(&plan),
        a("--json"),
        a("--where"),
        a("unique_id >= 90"),
    ]);
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["selection"]["calls_kept"], 10, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(c["calls"], 10);
    let o =
        run(&[a("replay"), s(&plan), a("--root"), s(&root), a("--force"), a("--time"), a("..1s")]);
    assert!(assert_clean_failure(&o).contains("plan"));
    // An existing output is not replaced; split and merge refuse the same way.
    assert_clean_failure(&run(&[a("select"), s(&t), a("-o"), s(&out)]));
    let parts = d.join("parts");
    assert_clean_failure(&run(&[a("split"), s(&text), a("--by"), a("pid"), a("-o"), s(&parts)]));
    // (A value clap refuses: its usage lines, exit status 2.)
    let o = run(&[a("split"), s(&t), a("--by"), a("time=0s"), a("-o"), s(&parts)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("must be positive"));
    assert_clean_failure(&run(&[a("merge"), s(&t), s(&cut), a("-o"), s(&d.join("m.ds"))]));
    assert!(!d.join("m.ds").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// `reanimator ARGS` started with SIGINT's default action (a test run in the background of a
/// non-interactive shell inherits it ignored, and reanimator keeps a signal it inherited
/// ignored), its stderr piped.
fn spawn_stoppable(args: &[&std::ffi::OsStr]) -> std::process::Child {
    let mut cmd = bin();
    // SAFETY: only an async-signal-safe call between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The files under `dir` (recursively), by name.
fn files_under(dir: &Path) -> Vec<String> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return v };
    for e in rd.flatten() {
        if e.file_type().unwrap().is_dir() {
            v.extend(files_under(&e.path()));
        } else {
            v.push(e.path().display().to_string());
        }
    }
    v
}

/// Wait (up to 120 s) until `ready` says the command is mid-run, checking it still runs.
fn wait_mid_run(child: &mut std::process::Child, what: &str, ready: &dyn Fn() -> bool) {
    let t0 = std::time::Instant::now();
    while !ready() {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("{what} ended ({st}) before it could be stopped mid-run: {err}");
        }
        assert!(t0.elapsed() < std::time::Duration::from_secs(120), "{what}: never mid-run");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Send `sig`; the command must end within a second, with 128 + `sig` and one line that
/// starts `reanimator: WHAT interrupted by`: that line.
fn stop_and_wait(child: &mut std::process::Child, sig: libc::c_int, what: &str) -> String {
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
    let t0 = std::time::Instant::now();
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(1),
            "{what} still runs 1 s after signal {sig}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(st.code(), Some(128 + sig), "{what}: {st}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: one line: {err}");
    assert!(err.starts_with(&format!("reanimator: {what} interrupted by ")), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// `split`, `select`, `merge` and `export --format parquet` stopped mid-run by SIGINT or
/// SIGTERM (issue 41): no partial file left, no part kept, one line, 128 + the signal.
#[test]
fn interrupted_split_keeps_nothing() {
    let base = case_dir("select", "interrupted");
    let work = base.join("work");
    // Forty processes, 1,000 4 KiB copies each: 80,000 calls and 320 MB of buffers.
    let trace = base.join("dd.ds");
    let o = bin()
        .args(["record", "-q", "--backend", "ptrace", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c"])
        .arg(
            "for i in $(seq 40); do dd if=/dev/zero of=/dev/null bs=4096 count=1000 status=none \
             & done; wait",
        )
        .current_dir(&work)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
    let partial = |n: &str| n.ends_with(".partial");
    let part = |n: &str| n.ends_with(".ds") && !n.ends_with(".partial");
    let names = |d: &Path| -> Vec<String> {
        files_under(d)
            .into_iter()
            .map(|p| Path::new(&p).file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    // By size: stopped once a part is finished and the next is being written; DIR (made by
    // split) removed.
    let parts = base.join("parts");
    let mut c =
        spawn_stoppable(&[a("split"), s(&trace), a("--by"), a("size=24M"), a("-o"), s(&parts)]);
    wait_mid_run(&mut c, "split --by size", &|| {
        let n = names(&parts);
        n.iter().any(|n| part(n)) && n.iter().any(|n| partial(n))
    });
    let line = stop_and_wait(&mut c, libc::SIGINT, "split");
    assert!(line.contains("SIGINT") && line.contains("no part kept"), "{line}");
    assert!(!parts.exists(), "{line}: {:?}", files_under(&parts));
    // By pid (32 parts written at once), SIGTERM, into a directory that existed: it stays,
    // empty.
    std::fs::create_dir(&parts).unwrap();
    let mut c = spawn_stoppable(&[a("split"), s(&trace), a("--by"), a("pid"), a("-o"), s(&parts)]);
    wait_mid_run(&mut c, "split --by pid", &|| {
        names(&parts).iter().filter(|n| partial(n)).count() >= 32
    });
    let line = stop_and_wait(&mut c, libc::SIGTERM, "split");
    assert!(line.contains("SIGTERM") && line.contains("holds no part"), "{line}");
    assert_eq!(std::fs::read_dir(&parts).unwrap().count(), 0, "{line}");
    // select and merge: no OUT, nor its partial file.
    let out = base.join("out.ds");
    let mut c = spawn_stoppable(&[
        a("select"),
        s(&trace),
        a("--where"),
        a("call == read"),
        a("-o"),
        s(&out),
    ]);
    // (Mid-run: the partial file is there only while it runs.)
    wait_mid_run(&mut c, "select", &|| names(&base).iter().any(|n| n == ".out.ds.partial"));
    stop_and_wait(&mut c, libc::SIGINT, "select");
    let mut c = spawn_stoppable(&[a("merge"), s(&trace), s(&trace), a("-o"), s(&out)]);
    wait_mid_run(&mut c, "merge", &|| names(&base).iter().any(|n| n == ".out.ds.partial"));
    stop_and_wait(&mut c, libc::SIGTERM, "merge");
    let left: Vec<String> =
        names(&base).into_iter().filter(|n| partial(n) || n == "out.ds").collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // export of two traces, one at a time: stopped while the first is written.
    let second = base.join("dd2.ds");
    std::fs::copy(&trace, &second).unwrap();
    let pq = base.join("pq");
    let mut c = spawn_stoppable(&[
        a("export"),
        s(&trace),
        s(&second),
        a("--format"),
        a("parquet"),
        a("-o"),
        s(&pq),
        a("--threads"),
        a("1"),
        a("-q"),
    ]);
    wait_mid_run(&mut c, "export", &|| names(&pq).iter().any(|n| partial(n)));
    let line = stop_and_wait(&mut c, libc::SIGINT, "export");
    assert!(line.contains("of 2 traces exported whole"), "{line}");
    let left: Vec<String> = files_under(&pq).into_iter().filter(|n| partial(n)).collect();
    assert!(left.is_empty(), "{line}: left behind: {left:?}");
    // Whatever was kept is whole: the dataset reads back (a whole trace's calls, or none).
    let calls_files: Vec<String> =
        files_under(&pq.join("calls")).into_iter().filter(|n| n.ends_with(".parquet")).collect();
    assert!(calls_files.len() < 2, "{calls_files:?}");
    let _ = std::fs::remove_dir_all(&base);
}
