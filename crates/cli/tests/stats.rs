//! `reanimator stats`: strace -c's table and the grouped tables, on scripted traces (exact
//! numbers), Re-Animator's traces (every call `dump` shows is counted), and real programs
//! recorded by both recorders and run under the real `strace -c -f` (the counts per call
//! agree, apart from the documented differences in docs/ANALYSIS.md).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ra_testkit::{backend, both_backends, have_program};
use ra_trace::{ArgValue, Event};
use serde_json::Value;

use common::{bin, write_scripted_trace};

fn stats(args: &[&str]) -> Output {
    bin().arg("stats").args(args).output().unwrap()
}

fn ok_stdout(o: &Output) -> String {
    assert!(o.status.success(), "stats failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ra-stats-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ev(name: &str, args: &[(&str, ArgValue)], ret: i64, t: i64, dur: i64) -> Event {
    let mut e = Event::new(ra_syscalls::lookup(name).expect(name));
    for (n, v) in args {
        assert!(e.set_arg(n, v.clone()), "{name} {n}");
    }
    e.ret = Some(ret);
    e.errno = Some(0);
    if ret < 0 {
        e.errno = Some(-ret as i32);
        e.ret = Some(-1);
    }
    e.pid = Some(100);
    e.tid = Some(100);
    e.time_called = Some(1_700_000_000_000_000_000 + t);
    e.time_returned = Some(1_700_000_000_000_000_000 + t + dur);
    e
}

fn path(p: &str) -> ArgValue {
    let mut v = p.as_bytes().to_vec();
    v.push(0);
    ArgValue::data(v)
}

/// A trace whose numbers are known: 1,000 reads of 4 KiB on /w/data (latencies 1..=1000 us),
/// 10 writes of 100 bytes on /w/log, 3 failed opens.
fn scripted(dir: &Path) -> PathBuf {
    use ArgValue::Int;
    let mut evs = vec![
        ev(
            "openat",
            &[("dirfd", Int(-100)), ("pathname", path("data")), ("flags", Int(0))],
            3,
            0,
            5000,
        ),
        ev(
            "openat",
            &[("dirfd", Int(-100)), ("pathname", path("/w/log")), ("flags", Int(1))],
            4,
            10_000,
            5000,
        ),
    ];
    let mut t = 100_000;
    for i in 1..=1000i64 {
        let data = ArgValue::data(vec![7u8; 4096]);
        evs.push(ev(
            "read",
            &[("fd", Int(3)), ("buf", data), ("count", Int(4096))],
            4096,
            t,
            i * 1000,
        ));
        t += i * 1000 + 10;
    }
    for _ in 0..10 {
        let data = ArgValue::data(vec![b'x'; 100]);
        evs.push(ev("write", &[("fd", Int(4)), ("buf", data), ("count", Int(100))], 100, t, 2000));
        t += 3000;
    }
    for _ in 0..3 {
        evs.push(ev(
            "openat",
            &[("dirfd", Int(-100)), ("pathname", path("/nope")), ("flags", Int(0))],
            -2,
            t,
            1000,
        ));
        t += 2000;
    }
    for (i, e) in evs.iter_mut().enumerate() {
        e.unique_id = i as u64;
    }
    let p = dir.join("scripted.ds");
    write_scripted_trace(&p, b"/w", &evs);
    p
}

/// Rows of strace -c's table: name -> (calls, errors, seconds).
fn strace_rows(text: &str) -> BTreeMap<String, (u64, u64, f64)> {
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 || f[0].parse::<f64>().is_err() || f[0].starts_with('-') {
            continue;
        }
        let name = f[f.len() - 1].to_string();
        if name == "total" {
            continue;
        }
        let errors = if f.len() == 6 { f[4].parse().unwrap() } else { 0 };
        rows.insert(name, (f[3].parse().unwrap(), errors, f[1].parse().unwrap()));
    }
    rows
}

#[test]
fn the_strace_table_of_a_scripted_trace() {
    let d = tmp("table");
    let t = scripted(&d);
    let t = t.to_str().unwrap();
    let out = ok_stdout(&stats(&[t]));
    assert!(
        out.starts_with("% time     seconds  usecs/call     calls    errors syscall\n"),
        "{out}"
    );
    let rows = strace_rows(&out);
    // Summed read latency: 1 + 2 + ... + 1000 us = 500.5 ms.
    assert_eq!(rows["read"], (1000, 0, 0.500500), "{out}");
    assert_eq!(rows["write"], (10, 0, 0.000020), "{out}");
    assert_eq!(rows["openat"], (5, 3, 0.000013), "{out}");
    assert!(out.contains("100.00    0.500533         493      1015         3 total"), "{out}");
    // Sorted by time: read first; -S calls and -S name reorder.
    assert_eq!(out.lines().nth(2).unwrap().split_whitespace().last(), Some("read"));
    let by_name = ok_stdout(&stats(&[t, "-S", "name"]));
    assert_eq!(by_name.lines().nth(2).unwrap().split_whitespace().last(), Some("openat"));
    assert!(out.contains("0.500533 s summed over 1015 timed calls"), "{out}");
    // --top 1: the rest in one row.
    let top = ok_stdout(&stats(&[t, "--top", "1"]));
    assert!(top.contains("15         3 <other: 2 syscalls>"), "{top}");
}

#[test]
fn groups_quantiles_bytes_and_files() {
    let d = tmp("groups");
    let t = scripted(&d);
    let t = t.to_str().unwrap();
    let o = stats(&[t, "--by", "file", "--json"]);
    let v: Value = serde_json::from_str(ok_stdout(&o).trim()).unwrap();
    let groups = v["groups"].as_array().unwrap();
    let g = |name: &str| {
        groups.iter().find(|g| g["group"] == name).unwrap_or_else(|| panic!("{name}: {v}"))
    };
    let data = g("/w/data");
    assert_eq!(data["calls"], 1001);
    assert_eq!(data["read_bytes"], 4096 * 1000);
    assert_eq!(data["read_sizes"], serde_json::json!([{"min": 4096, "max": 8191, "count": 1000}]));
    // Quantiles of the reads' 1..=1000 us (and one 5 us open): within 1/16.
    let lat = &data["latency_ns"];
    for (q, want) in [("p50", 500_000.0), ("p90", 900_000.0), ("p99", 990_000.0)] {
        let got = lat[q].as_f64().unwrap();
        assert!((got - want).abs() / want <= 1.0 / 16.0, "{q}: {got} vs {want}");
    }
    assert_eq!(lat["max"], 1_000_000);
    assert_eq!(g("/w/log")["written_bytes"], 1000);
    assert_eq!(g("/nope")["errors"], 3);
    assert_eq!(v["total"]["calls"], 1015);
    assert_eq!(v["files"]["rows"][0]["file"], "/w/data");
    // The text table says the same.
    let text = ok_stdout(&stats(&[t, "--by", "dir", "--histogram", "--files"]));
    assert!(text.contains("3.9M        0  /w\n") || text.contains("  /w\n"), "{text}");
    assert!(text.contains("      4096 -> 8191      : 1000"), "{text}");
    assert!(text.contains("busiest files"), "{text}");
    // --where counts the calls it keeps; --by errno.
    let e = ok_stdout(&stats(&[t, "--by", "errno", "--where", "call == openat"]));
    assert!(e.contains("  ENOENT\n") && e.contains("  success\n"), "{e}");
    let c = ok_stdout(&stats(&[t, "--by", "class"]));
    assert!(c.contains("  %file\n") && c.contains("  %desc\n"), "{c}");
    let errs = ok_stdout(&stats(&[t, "--where", "errno_name == \"ENOENT\""]));
    assert!(errs.contains("        3         3 total"), "{errs}");
}

#[test]
fn several_traces_per_trace_or_summed() {
    let d = tmp("several");
    let t = scripted(&d);
    let t = t.to_str().unwrap();
    let two = ok_stdout(&stats(&[t, t]));
    assert_eq!(two.matches("% time").count(), 2, "{two}");
    assert!(two.contains(&format!("==> {t} <==")), "{two}");
    let sum = ok_stdout(&stats(&[t, t, "--sum", "--json"]));
    let v: Value = serde_json::from_str(sum.trim()).unwrap();
    assert_eq!(v["total"]["calls"], 2030);
    assert_eq!(v["traces"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_input_is_one_line() {
    let d = tmp("bad");
    let t = scripted(&d);
    let t = t.to_str().unwrap();
    for args in [
        vec![t, "--where", "nosuchfield == 1"],
        vec![t, "--depth", "2"],
        vec!["/nonexistent/trace.ds"],
        vec![t, "--where", "call =="],
    ] {
        let line = ra_testkit::assert_clean_failure(&stats(&args));
        assert!(!line.is_empty());
    }
    let garbage = d.join("garbage.ds");
    std::fs::write(&garbage, b"not a trace at all").unwrap();
    ra_testkit::assert_clean_failure(&stats(&[garbage.to_str().unwrap()]));
}

/// Every call `dump` shows of Re-Animator's own traces is counted, once; its synthetic umask
/// record is not.
#[test]
fn reanimators_traces_count_every_call() {
    for name in ["output-ee34491.ds", "output_lsR.ds", "mt.ds"] {
        let Some(p) =
            ra_testkit::shared_testdata(&format!("dataseries/reanimator-replayer/{name}"))
        else {
            return;
        };
        let p = p.to_str().unwrap();
        let dump = bin().args(["dump", p]).output().unwrap();
        // Re-Animator's synthetic umask record is no call.
        let text = String::from_utf8_lossy(&dump.stdout).into_owned();
        let lines = text.lines().filter(|l| !l.contains("(synthetic)")).count() as u64;
        assert!(lines < text.lines().count() as u64, "{name}: the umask record");
        let v: Value =
            serde_json::from_str(ok_stdout(&stats(&[p, "--json", "--by", "tid"])).trim()).unwrap();
        assert_eq!(v["total"]["calls"].as_u64(), Some(lines), "{name}");
        let per_tid: u64 =
            v["groups"].as_array().unwrap().iter().map(|g| g["calls"].as_u64().unwrap()).sum();
        assert_eq!(per_tid, lines, "{name}");
    }
}

// ---- against the real strace ------------------------------------------------------------------

/// Calls `strace -c` and the recorder count differently, with the reason (docs/ANALYSIS.md).
/// exit_group never returns: strace -c counts a call when it returns, the recorder when it
/// enters.
const NOT_COUNTED_BY_STRACE: &[&str] = &["exit_group", "exit"];

/// The same program under `strace -c -f` and `reanimator record --syscalls all`: for every call
/// the registry knows, the counts and errors per call agree.
fn counts_agree_with_strace_c() {
    if !have_program("strace") || !have_program("tar") {
        return;
    }
    let d = ra_testkit::backend_scratch_dir("stats", "strace");
    let src = d.join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    for i in 0..20 {
        std::fs::write(src.join(format!("f{i}")), vec![b'a' + (i % 26) as u8; 1000 * i]).unwrap();
    }
    std::fs::write(src.join("sub/deep"), b"deep").unwrap();
    // tar c then tar x of what it made: opens, reads, writes, stats, directory listings.
    let script = "tar cf a.tar src && mkdir -p out && tar xf a.tar -C out && cat out/src/sub/deep";
    let run_in = |cmd: &mut Command| {
        let o = cmd.current_dir(&d).output().unwrap();
        assert!(o.status.success(), "{:?}: {}", cmd, String::from_utf8_lossy(&o.stderr));
    };
    let summary = d.join("strace.txt");
    run_in(
        Command::new("strace").args(["-c", "-f", "-o"]).arg(&summary).args(["sh", "-c", script]),
    );
    let _ = std::fs::remove_dir_all(d.join("out"));
    let _ = std::fs::remove_file(d.join("a.tar"));
    let trace = d.join("t.ds");
    run_in(
        bin()
            .args(["record", "--backend", backend(), "--syscalls", "all", "-o"])
            .arg(&trace)
            .args(["--", "sh", "-c", script]),
    );
    let theirs = strace_rows(&std::fs::read_to_string(&summary).unwrap());
    let o = stats(&[trace.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(ok_stdout(&o).trim()).unwrap();
    let ours: BTreeMap<String, (u64, u64)> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["group"].as_str().unwrap().to_string(),
                (g["calls"].as_u64().unwrap(), g["errors"].as_u64().unwrap()),
            )
        })
        .collect();
    let mut diffs = Vec::new();
    let mut compared = 0;
    for (name, &(calls, errors, _)) in &theirs {
        if ra_syscalls::lookup(name).is_none_or(|d| d.is_pseudo()) {
            // Not in the registry: the recorder does not record it (docs/ANALYSIS.md).
            continue;
        }
        compared += 1;
        let mine = ours.get(name).copied().unwrap_or((0, 0));
        if mine != (calls, errors) {
            diffs.push(format!("{name}: strace {calls} calls, {errors} errors; stats {mine:?}"));
        }
    }
    for (name, &(calls, _)) in &ours {
        let pseudo = ra_syscalls::lookup(name).is_some_and(|d| d.is_pseudo());
        if !theirs.contains_key(name) && !NOT_COUNTED_BY_STRACE.contains(&name.as_str()) && !pseudo
        {
            diffs.push(format!("{name}: stats {calls} calls, strace none"));
        }
    }
    assert!(compared >= 15, "only {compared} calls compared: {theirs:?}");
    assert!(diffs.is_empty(), "{} ({} backend):\n{}", "counts differ", backend(), diffs.join("\n"));
    let _ = std::fs::remove_dir_all(&d);
}

both_backends!(counts_agree_with_strace_c);

// ---- fs traces --------------------------------------------------------------------------------

/// A script on a `reanimator fs` mount, its trace read by `stats` (per operation, program and
/// file); and the same with `--aggregate-only`, whose rows `stats` counts.
#[test]
fn fs_traces_and_aggregate_only_traces() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = tmp("fs");
    let (lower, mnt) = (d.join("lower"), d.join("mnt"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let script = format!(
        "head -c 10000 /dev/zero > {m}/a && cat {m}/a > /dev/null && cat {m}/a > /dev/null",
        m = mnt.display()
    );
    let mut counts = Vec::new();
    for extra in [&[][..], &["--aggregate=1", "--aggregate-only"][..]] {
        let t = d.join(format!("fs{}.ds", extra.len()));
        let o = bin()
            .args(["fs", "mount"])
            .arg(&lower)
            .arg(&mnt)
            .arg("-o")
            .arg(&t)
            .args(extra)
            .arg("--daemon")
            .output()
            .unwrap();
        assert!(o.status.success(), "mount: {}", String::from_utf8_lossy(&o.stderr));
        let ran = Command::new("sh").args(["-c", &script]).status().unwrap();
        let o = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
        assert!(o.status.success(), "umount: {}", String::from_utf8_lossy(&o.stderr));
        assert!(ran.success());
        let t = t.to_str().unwrap();
        let v: Value = serde_json::from_str(ok_stdout(&stats(&[t, "--json"])).trim()).unwrap();
        let g =
            |op: &str| v["groups"].as_array().unwrap().iter().find(|g| g["group"] == op).cloned();
        let write = g("write").unwrap_or_else(|| panic!("no write: {v}"));
        assert_eq!(write["written_bytes"], 10000, "{v}");
        let read = g("read").unwrap_or_else(|| panic!("no read: {v}"));
        assert_eq!(read["read_bytes"], 20000, "{v}");
        counts.push(v["total"]["calls"].as_u64().unwrap());
        if extra.is_empty() {
            let c = ok_stdout(&stats(&[t, "--by", "comm"]));
            assert!(c.contains("  cat\n") && c.contains("  head\n"), "{c}");
            let f = ok_stdout(&stats(&[t, "--by", "file"]));
            assert!(f.contains(&format!("  {}/a\n", mnt.display())), "{f}");
        } else {
            assert_eq!(v["aggregate_rows"].as_u64().map(|n| n > 0), Some(true), "{v}");
        }
    }
    assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
    let _ = std::fs::remove_dir_all(&d);
}
