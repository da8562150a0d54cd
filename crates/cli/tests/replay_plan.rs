//! `reanimator compile` and replay of plans: the same verification from a plan as from its
//! trace (the same mismatches found), Re-Animator's own traces compiled and replayed, plans
//! whose trace's snapshots are gone, deduplication, and bad input (damaged, cut or stale
//! plans; wrong arguments): one clear line and exit 2 each.
//! (Every real-program and reproducer test of replay_programs.rs and replay_repro.rs also
//! replays a plan of its trace and requires the same outcome.)

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use ra_testkit::{assert_clean_failure, scratch_dir};

use common::bin;

fn run(args: &[&std::ffi::OsStr]) -> Output {
    bin().args(args).output().unwrap()
}

fn compile(trace: &Path, plan: &Path) -> serde_json::Value {
    compile_with(trace, plan, &[])
}

fn compile_with(trace: &Path, plan: &Path, extra: &[&str]) -> serde_json::Value {
    let o = bin()
        .arg("compile")
        .arg(trace)
        .arg("-o")
        .arg(plan)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "compile: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn replay(input: &Path, root: &Path, extra: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).unwrap();
    let o = bin()
        .arg("replay")
        .arg(input)
        .arg("--root")
        .arg(root)
        .args(["--json"])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let r = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("replay of {}: no report ({e}): {err}", input.display()));
    (o.status.code(), r, err)
}

fn record(dir: &Path, trace: &Path, snapshot: bool, cmd: &[&str]) {
    let mut c = bin();
    c.args(["record", "-q", "--backend", "ptrace", "-o"]).arg(trace);
    if snapshot {
        c.arg("--snapshot").arg(dir);
    }
    // Without cargo's LD_LIBRARY_PATH: the dynamic loader would probe every build directory
    // in it, calls whose outcome depends on the test machine's target directory (which the
    // replay root does not hold), and their mismatches would crowd out the ones tested here.
    let o = c.arg("--").args(cmd).current_dir(dir).env_remove("LD_LIBRARY_PATH").output().unwrap();
    assert!(o.status.success(), "record {cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// A program reads a file and copies it; replayed into a root where that file holds other
/// bytes (no --init), the trace, its plan and its plan with lz4-compressed data chunks
/// (`--compress lz4`, a smaller, version 2 plan) report the same mismatches, call by call.
#[test]
fn a_plan_finds_the_same_mismatches_as_its_trace() {
    let d = scratch_dir("plan-mismatch").canonicalize().unwrap();
    let work = d.join("work");
    std::fs::create_dir(&work).unwrap();
    let content: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(work.join("in.dat"), &content).unwrap();
    let trace = d.join("t.ds");
    record(
        &work,
        &trace,
        false,
        &["sh", "-c", "cat in.dat > out.dat && cat in.dat in.dat | wc -c"],
    );
    let plan = d.join("t.plan");
    let st = compile(&trace, &plan);
    // Five reads of in.dat's 20,000 bytes and the writes of them: the content is stored once
    // (the reads and writes move the same buffers).
    assert!(st["unique_buffers"].as_u64().unwrap() < st["buffers"].as_u64().unwrap(), "{st}");
    assert!(st["data_stored"].as_u64().unwrap() < st["data_in"].as_u64().unwrap(), "{st}");
    let zplan = d.join("z.plan");
    let zst = compile_with(&trace, &zplan, &["--compress", "lz4"]);
    assert_eq!(zst["data_stored"], st["data_stored"]);
    assert!(zst["plan_bytes"].as_u64().unwrap() < st["plan_bytes"].as_u64().unwrap(), "{zst}");
    let version = |p: &Path| std::fs::read(p).unwrap()[8..12].to_vec();
    assert_eq!((version(&plan), version(&zplan)), (vec![1, 0, 0, 0], vec![2, 0, 0, 0]));
    // `info` describes a plan (and reads it through, every checksum).
    let info = |p: &Path, extra: &[&str]| bin().arg("info").arg(p).args(extra).output().unwrap();
    let o = info(&zplan, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("replay plan, version 2, lz4 data chunks"), "{text}");
    assert!(text.contains("every checksum verified"), "{text}");
    let j: serde_json::Value = serde_json::from_slice(&info(&plan, &["--json"]).stdout).unwrap();
    assert_eq!(j["version"], 1);
    for k in ["calls", "buffers", "unique_buffers", "data_in", "data_stored", "plan_bytes"] {
        assert_eq!(j["stats"][k], st[k], "{k}");
    }
    assert_eq!(j["checked_calls"], st["calls"]);
    // A damaged byte in the last data chunk's payload: `info` says so (--quick does not look).
    let mut bytes = std::fs::read(&zplan).unwrap();
    let last_data = bytes
        .windows(12)
        .enumerate()
        .filter(|(_, w)| &w[..8] == b"RACHUNK\0" && w[8..12] == 4u32.to_le_bytes())
        .map(|(i, _)| i)
        .next_back()
        .expect("an lz4 data chunk");
    bytes[last_data + 64 + 2] ^= 0x10;
    let bad = d.join("bad.plan");
    std::fs::write(&bad, &bytes).unwrap();
    let o = info(&bad, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("checksum"), "{o:?}");
    assert!(info(&bad, &["--quick"]).status.success());
    // The root holds in.dat with other bytes (same size).
    let mut results = Vec::new();
    for input in [&trace, &plan, &zplan] {
        let root = d.join("root");
        let _ = std::fs::remove_dir_all(&root);
        let inroot = root.join(work.strip_prefix("/").unwrap());
        std::fs::create_dir_all(&inroot).unwrap();
        let other: Vec<u8> = content.iter().map(|b| b ^ 0x5a).collect();
        std::fs::write(inroot.join("in.dat"), other).unwrap();
        let o = bin()
            .arg("replay")
            .arg(input)
            .arg("--root")
            .arg(&root)
            .args(["--force", "--json", "--max-mismatches", "100"])
            .output()
            .unwrap();
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(1), "mismatches found: {r}");
        results.push(r);
    }
    let t = &results[0];
    assert!(t["mismatch_total"].as_u64().unwrap() >= 3, "{t}");
    for p in &results[1..] {
        assert_eq!(t["mismatch_total"], p["mismatch_total"]);
        assert_eq!(t["mismatches"], p["mismatches"]);
        assert_eq!(t["per_call"], p["per_call"]);
    }
    let p = &results[2];
    let calls: Vec<&str> =
        p["mismatches"].as_array().unwrap().iter().map(|m| m["call"].as_str().unwrap()).collect();
    assert!(calls.contains(&"read"), "{calls:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Re-Animator's own traces (third-party, from its repository) compile, and their plans
/// replay verified with the inferred initial state, as the traces do.
#[test]
fn original_reanimator_traces_compile_and_their_plans_replay_verified() {
    let d = scratch_dir("plan-ra");
    for name in ["mt.ds", "output-4ba1c4b.ds", "output-ee34491.ds", "output_lsR.ds"] {
        let Some(trace) =
            ra_testkit::shared_testdata(&format!("dataseries/reanimator-replayer/{name}"))
        else {
            return;
        };
        let plan = d.join(format!("{name}.plan"));
        let st = compile(&trace, &plan);
        assert!(st["calls"].as_u64().unwrap() > 10, "{name}: {st}");
        let (code_t, from_trace, _) = replay(&trace, &d.join("rt"), &["--init"]);
        let (code_p, from_plan, err) = replay(&plan, &d.join("rp"), &["--init"]);
        assert_eq!(code_p, Some(0), "{name}: {err} {from_plan}");
        assert_eq!(code_t, code_p);
        for k in ["per_call", "mismatch_total", "threads", "processes", "unknown_calls", "init"] {
            assert_eq!(from_trace[k], from_plan[k], "{name}: {k}");
        }
        let diff = bin().arg("diff").arg(d.join("rt")).arg(d.join("rp")).output().unwrap();
        assert_eq!(
            diff.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&diff.stdout)
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A plan of a trace with a snapshot restores it from the trace; when the trace is gone,
/// --init (which needs it) is refused with what to do, and --init=infer replays with a note
/// that the final tree was not compared.
#[test]
fn a_plan_whose_trace_is_gone_says_what_it_cannot_do() {
    let d = scratch_dir("plan-snap").canonicalize().unwrap();
    let work = d.join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("a.txt"), b"hello\n").unwrap();
    let trace = d.join("t.ds");
    record(&work, &trace, true, &["sh", "-c", "cat a.txt > b.txt; rm a.txt"]);
    let plan = d.join("t.plan");
    compile(&trace, &plan);
    let (code, r, err) = replay(&plan, &d.join("r1"), &["--init"]);
    assert_eq!(code, Some(0), "{err} {r}");
    assert_eq!(r["final_state"][0]["differences"], 0, "{r}");
    std::fs::rename(&trace, d.join("moved.ds")).unwrap();
    let root = d.join("r2");
    std::fs::create_dir_all(&root).unwrap();
    let o = run(&[
        "replay".as_ref(),
        plan.as_os_str(),
        "--root".as_ref(),
        root.as_os_str(),
        "--init".as_ref(),
    ]);
    let line = assert_clean_failure(&o);
    assert!(line.contains("--init=infer") && line.contains("is gone"), "{line}");
    let (code, r, err) = replay(&plan, &d.join("r3"), &["--init=infer"]);
    assert_eq!(code, Some(0), "{err} {r}");
    let w = r["warnings"].as_object().unwrap();
    assert!(w.keys().any(|k| k.contains("final tree was not compared")), "{r}");
    std::fs::remove_dir_all(&d).unwrap();
}

fn flip(p: &Path, at: usize) -> PathBuf {
    let mut b = std::fs::read(p).unwrap();
    b[at] ^= 0x20;
    let q = p.with_extension(format!("flip{at}"));
    std::fs::write(&q, b).unwrap();
    q
}

/// Damaged, cut, stale or foreign plans and wrong arguments: one line, exit 2, no panic, and
/// nothing written into the root beyond what ran before the damage was met.
#[test]
fn bad_plans_and_arguments_get_one_clear_line() {
    let d = scratch_dir("plan-bad").canonicalize().unwrap();
    let work = d.join("work");
    std::fs::create_dir(&work).unwrap();
    let trace = d.join("t.ds");
    record(&work, &trace, false, &["sh", "-c", "head -c 3000000 /dev/urandom > x; cat x > y"]);
    let plan = d.join("t.plan");
    compile(&trace, &plan);
    let good = std::fs::read(&plan).unwrap();
    let root = d.join("root");
    let replay_of = |p: &Path| {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        run(&["replay".as_ref(), p.as_os_str(), "--root".as_ref(), root.as_os_str(), "-q".as_ref()])
    };
    // Cut.
    let cut = d.join("cut.plan");
    std::fs::write(&cut, &good[..good.len() / 2]).unwrap();
    assert!(assert_clean_failure(&replay_of(&cut)).contains("incomplete"));
    // A byte of the data (the urandom content) and of the header.
    let data_at = good.windows(8).position(|w| w == b"RACHUNK\0").unwrap() + 64 + 1000;
    let l = assert_clean_failure(&replay_of(&flip(&plan, data_at)));
    assert!(l.contains("damaged"), "{l}");
    let l = assert_clean_failure(&replay_of(&flip(&plan, 20)));
    assert!(l.contains("corrupt"), "{l}");
    // Stale: another format version.
    let mut v = good.clone();
    v[8] = 0;
    let stale = d.join("stale.plan");
    std::fs::write(&stale, v).unwrap();
    let l = assert_clean_failure(&replay_of(&stale));
    assert!(l.contains("compile the trace again"), "{l}");
    // compile: onto the trace itself, of a file that is no trace, to a directory that is not
    // there; nothing is left behind.
    let l = assert_clean_failure(&run(&[
        "compile".as_ref(),
        trace.as_os_str(),
        "-o".as_ref(),
        trace.as_os_str(),
    ]));
    assert!(l.contains("the trace itself"), "{l}");
    let l = assert_clean_failure(&run(&[
        "compile".as_ref(),
        plan.as_os_str(),
        "-o".as_ref(),
        d.join("p2").as_os_str(),
    ]));
    assert!(l.contains("DataSeries"), "{l}");
    assert_clean_failure(&run(&[
        "compile".as_ref(),
        trace.as_os_str(),
        "-o".as_ref(),
        d.join("nodir/p").as_os_str(),
    ]));
    // (A value clap refuses: its message and usage hint, exit 2.)
    let o = run(&[
        "compile".as_ref(),
        trace.as_os_str(),
        "-o".as_ref(),
        d.join("p3").as_os_str(),
        "--dedup-memory".as_ref(),
        "lots".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--dedup-memory"));
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial") || n == "p2" || n == "p3")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A plan's buffers are written from its memory map. Since Linux 6.13 a buffered write whose
/// source pages are not mapped yet copies short, and the kernel then writes a partial block,
/// which it first reads from the disk: the replay issued reads the program never did (983 for
/// this workload before the fix). fio's 32,768 random 4 KiB writes (which drop the file's
/// pages first, as fio does) replayed from a plan that is not in the page cache into a root on
/// an ext4 loop device: the device sees (next to) no reads.
#[test]
fn a_plan_replay_reads_nothing_the_program_did_not() {
    let probe = (|| {
        if !rustix::process::geteuid().is_root() {
            return Err("needs root (a loop device)".to_string());
        }
        for p in ["fio", "mkfs.ext4", "losetup"] {
            if !ra_testkit::have_program(p) {
                return Err(format!("{p} not installed (bash scripts/install-deps.sh)"));
            }
        }
        Ok(())
    })();
    if !ra_testkit::privileged("plan replay onto an ext4 loop device", probe) {
        return;
    }
    let d = scratch_dir("plan-io").canonicalize().unwrap();
    let w = d.join("w");
    std::fs::create_dir(&w).unwrap();
    let trace = d.join("t.ds");
    record(
        &w,
        &trace,
        true,
        &[
            "fio",
            "--name=t",
            "--filename=f",
            "--size=32M",
            "--rw=randwrite",
            "--bs=4k",
            "--ioengine=psync",
            "--io_size=128M",
            "--output=/dev/null",
        ],
    );
    let plan = d.join("t.plan");
    let c = compile(&trace, &plan);
    assert!(c["data_stored"].as_u64().unwrap() > 100 << 20, "{c}");
    let fs = ra_testkit::LoopFs::new(
        "ext4",
        "128M",
        &["mkfs.ext4", "-q", "-F", "-b", "4096"],
        &d.join("ext4.img"),
        d.join("mnt"),
    );
    // The plan out of the page cache.
    let f = std::fs::File::open(&plan).unwrap();
    assert_eq!(
        // SAFETY: plain fadvise on an open descriptor.
        unsafe {
            libc::posix_fadvise(
                std::os::fd::AsRawFd::as_raw_fd(&f),
                0,
                0,
                libc::POSIX_FADV_DONTNEED,
            )
        },
        0
    );
    let before = fs.reads();
    let (code, r, err) = replay(&plan, &fs.dir.join("root"), &["--init"]);
    let reads = fs.reads() - before;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(r["mismatch_total"], 0, "{err}");
    assert!(r["totals"]["replayed"].as_u64().unwrap() > 32_768, "{r}");
    assert!(r["prefetch"]["worker_major_faults"].is_u64(), "{r}");
    assert!(reads <= 32, "the replay read {reads} times from the replay root's device");
    drop(fs);
    let _ = std::fs::remove_dir_all(&d);
}
