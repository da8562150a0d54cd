//! Differential replay (`reanimator replay TRACE --root A --compare B ...`) into roots on four
//! file systems: ext4, xfs and btrfs on loop devices, and tmpfs. Needs root, mkfs.ext4,
//! mkfs.xfs and mkfs.btrfs (xfsprogs, btrfs-progs): the tests skip with a printed reason
//! without them, and fail instead under REANIMATOR_REQUIRE_PRIVILEGED=1.
//!
//! - A workload whose outcome genuinely differs between these file systems (fallocate's
//!   collapse and zero ranges, an 8 KiB xattr, statfs) is recorded on xfs: the report must name
//!   each differing call with every root's outcome, and the trees' differences.
//! - sqlite3 inserting rows: the roots agree, exit 0.
//! - Bad --compare roots: one clear error line, exit 2 (no privileges needed).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use common::bin;

fn run(c: &mut Command) -> Output {
    c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"))
}

fn ok(c: &mut Command) -> String {
    let o = run(c);
    assert!(
        o.status.success(),
        "{c:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn have(prog: &str) -> bool {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].iter().any(|d| Path::new(d).join(prog).exists())
}

/// Whether these tests can run here.
fn can_mount() -> bool {
    let probe = (|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("needs root (loop devices, mount)".to_string());
        }
        for p in ["mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "losetup"] {
            if !have(p) {
                return Err(format!(
                    "{p} not installed (bash scripts/install-deps.sh installs xfsprogs, btrfs-progs)"
                ));
            }
        }
        if !Path::new("/dev/loop-control").exists() {
            return Err("no /dev/loop-control (loop devices)".into());
        }
        Ok(())
    })();
    ra_testkit::privileged("differential replay on ext4, xfs, btrfs and tmpfs", probe)
}

/// ext4, xfs, btrfs (each on a loop device over a sparse image) and tmpfs, mounted beneath a
/// scratch directory; unmounted and detached on drop, also when a test fails.
struct Mounts {
    base: PathBuf,
    /// (file system, mount point), in the order ext4, xfs, btrfs, tmpfs.
    mounts: Vec<(&'static str, PathBuf)>,
    /// The loop devices' file systems (unmounted and detached when dropped).
    loops: Vec<ra_testkit::LoopFs>,
}

impl Mounts {
    fn new(tag: &str) -> Mounts {
        let base = ra_testkit::scratch_dir(&format!("cmp-{tag}")).canonicalize().unwrap();
        let mut m = Mounts { base: base.clone(), mounts: Vec::new(), loops: Vec::new() };
        // xfs needs 300 MB, btrfs 110 MB; the images are sparse.
        for (fs, size, mkfs) in [
            ("ext4", "64M", &["mkfs.ext4", "-q", "-F", "-b", "4096"][..]),
            ("xfs", "300M", &["mkfs.xfs", "-q", "-f"][..]),
            ("btrfs", "128M", &["mkfs.btrfs", "-q", "-f"][..]),
        ] {
            let img = base.join(format!("{fs}.img"));
            let l = ra_testkit::LoopFs::new(fs, size, mkfs, &img, base.join(fs));
            m.mounts.push((fs, l.dir.clone()));
            m.loops.push(l);
        }
        let dir = base.join("tmpfs");
        std::fs::create_dir(&dir).unwrap();
        ok(Command::new("mount").args(["-t", "tmpfs", "-o", "size=64M", "tmpfs"]).arg(&dir));
        m.mounts.push(("tmpfs", dir));
        m
    }

    /// A fresh, empty replay root on each file system.
    fn roots(&self) -> Vec<PathBuf> {
        self.mounts
            .iter()
            .map(|(_, d)| {
                let r = d.join("root");
                let _ = std::fs::remove_dir_all(&r);
                std::fs::create_dir(&r).unwrap();
                r
            })
            .collect()
    }

    fn mount_of(&self, fs: &str) -> &Path {
        &self.mounts.iter().find(|m| m.0 == fs).unwrap().1
    }
}

impl Drop for Mounts {
    fn drop(&mut self) {
        // tmpfs here; the loop devices' file systems as `loops` drops (before the scratch
        // directory goes, below).
        if let Some((_, d)) = self.mounts.iter().find(|m| m.0 == "tmpfs") {
            let o = Command::new("umount").arg(d).output();
            if !o.as_ref().is_ok_and(|o| o.status.success()) {
                let _ = Command::new("umount").arg("-l").arg(d).output();
            }
        }
        self.loops.clear();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// Record `argv` with the ptrace backend in `cwd`.
fn record(trace: &Path, cwd: &Path, argv: &[&str]) {
    let o = run(bin()
        .args(["record", "-q", "--backend", "ptrace", "-o"])
        .arg(trace)
        .arg("--")
        .args(argv)
        .current_dir(cwd));
    assert!(o.status.success(), "record {argv:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// `replay TRACE --root R0 --compare R1 ... --init` with `extra` options.
fn replay_compare(trace: &Path, roots: &[PathBuf], extra: &[&str]) -> Output {
    let mut c = bin();
    c.arg("replay").arg(trace).arg("--root").arg(&roots[0]);
    for r in &roots[1..] {
        c.arg("--compare").arg(r);
    }
    run(c.args(["--init", "--max-mismatches", "100"]).args(extra))
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The unique_id of each recorded call of `call`, in order, with its `mode` argument.
fn calls_of(trace: &Path, call: &str) -> Vec<(u64, Value)> {
    let out = ok(bin().arg("dump").arg(trace).args(["--format", "jsonl", "--type", call]));
    out.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["unique_id"].as_u64().unwrap(), v["args"].clone())
        })
        .collect()
}

/// The reported difference of call `uid`: each root's result, in root order.
fn results_of(r: &Value, uid: u64) -> (String, Vec<String>, Vec<Value>) {
    let d = r["calls"]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["unique_id"] == uid)
        .unwrap_or_else(|| {
            panic!(
                "call #{uid} not among the differences: {}",
                serde_json::to_string_pretty(r).unwrap()
            )
        });
    let outs = d["outcomes"].as_array().unwrap();
    (
        d["call"].as_str().unwrap().to_string(),
        outs.iter().map(|o| o["result"].as_str().unwrap_or("-").to_string()).collect(),
        outs.clone(),
    )
}

/// fallocate's collapse range (ext4 and xfs only), its zero range (not tmpfs), an 8 KiB
/// xattr value (more than an ext4 block) and statfs (whose f_type is each file system's)
/// replay differently on each file system, and the report says so call by call.
#[test]
fn a_workload_that_differs_across_file_systems_is_reported_call_by_call() {
    if !can_mount() {
        return;
    }
    let m = Mounts::new("differs");
    // Recorded on xfs, where every call of the workload succeeds.
    let work = m.mount_of("xfs").join("work");
    std::fs::create_dir(&work).unwrap();
    let trace = m.base.join("t.ds");
    record(
        &trace,
        &work,
        &[
            "sh",
            "-c",
            "head -c 65536 /dev/zero > f && fallocate -c -o 0 -l 4096 f \
             && fallocate -z -o 8192 -l 4096 f \
             && python3 -S -c 'import os; os.statvfs(\".\"); os.setxattr(\"f\", \"user.big\", b\"v\" * 8192)'",
        ],
    );
    let falloc = calls_of(&trace, "fallocate");
    assert_eq!(falloc.len(), 2, "{falloc:?}");
    let (collapse, zero) = (falloc[0].0, falloc[1].0);
    assert_eq!(falloc[0].1["mode"], 8, "FALLOC_FL_COLLAPSE_RANGE");
    assert_eq!(falloc[1].1["mode"], 16, "FALLOC_FL_ZERO_RANGE");
    let setx = calls_of(&trace, "setxattr");
    assert_eq!(setx.len(), 1, "{setx:?}");
    let statfs = calls_of(&trace, "statfs");
    assert_eq!(statfs.len(), 1, "{statfs:?}");

    let roots = m.roots();
    let o = replay_compare(&trace, &roots, &["--json"]);
    let r = json(&o);
    let show = || serde_json::to_string_pretty(&r).unwrap();
    assert_eq!(o.status.code(), Some(1), "the roots differ: exit 1: {}", show());
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let rs = r["roots"].as_array().unwrap();
    let types: Vec<&str> = rs.iter().map(|x| x["fs_type"].as_str().unwrap()).collect();
    assert_eq!(types, ["ext4", "xfs", "btrfs", "tmpfs"]);
    for (x, root) in rs.iter().zip(&roots) {
        assert_eq!(x["path"], root.display().to_string());
        assert!(x["elapsed_s"].as_f64().unwrap() > 0.0, "{}", show());
        assert!(x["wall_s"].as_f64().unwrap() >= x["elapsed_s"].as_f64().unwrap());
        assert!(x["report"]["totals"]["issued"].as_u64().unwrap() > 0);
    }
    // xfs replays its own recording exactly; the others differ from it.
    assert_eq!(rs[1]["report"]["mismatch_total"], 0, "{}", show());
    for i in [0, 2, 3] {
        assert!(rs[i]["report"]["mismatch_total"].as_u64().unwrap() > 0, "{}", show());
    }
    assert_eq!(r["roots_agree"], false);
    assert_eq!(r["roots_match_recording"], false);

    let (call, res, outs) = results_of(&r, collapse);
    assert_eq!(call, "fallocate");
    assert_eq!(res, ["0", "0", "-1 EOPNOTSUPP", "-1 EOPNOTSUPP"], "{}", show());
    assert_eq!(outs[2]["matches_recording"], false);
    assert_eq!(outs[1]["matches_recording"], true);
    let (_, res, _) = results_of(&r, zero);
    assert_eq!(res, ["0", "0", "0", "-1 EOPNOTSUPP"], "{}", show());
    let (call, res, _) = results_of(&r, setx[0].0);
    assert_eq!(call, "setxattr");
    assert_eq!(res, ["-1 ENOSPC", "0", "0", "0"], "{}", show());
    // statfs succeeds everywhere; what it returned (f_type) differs in every root.
    let (call, res, outs) = results_of(&r, statfs[0].0);
    assert_eq!(call, "statfs");
    assert_eq!(res, ["0", "0", "0", "0"]);
    let digests: std::collections::BTreeSet<&str> =
        outs.iter().map(|o| o["data_blake3_128"].as_str().unwrap()).collect();
    assert_eq!(digests.len(), 4, "{}", show());
    let per_call = &r["calls"]["per_call"];
    assert_eq!(per_call["fallocate"], 2, "{}", show());
    assert_eq!(per_call["setxattr"], 1, "{}", show());
    assert_eq!(per_call["statfs"], 1, "{}", show());

    // The trees: xfs has the xattr ext4 refused; btrfs and tmpfs kept the 4 KiB the collapse
    // would have removed.
    let f = work.join("f");
    let f = f.strip_prefix("/").unwrap().display().to_string();
    let trees = r["trees"].as_array().unwrap();
    assert_eq!(trees.len(), 3);
    let lines = |i: usize| -> Vec<String> {
        trees[i]["first"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().into()).collect()
    };
    assert_eq!(lines(0), [format!("~ {f}: xattrs (user.big added)")], "{}", show());
    for i in [1, 2] {
        let l = lines(i);
        assert_eq!(l.len(), 1, "{}", show());
        assert!(l[0].starts_with(&format!("~ {f}: size 61440 -> 65536, content differs")), "{l:?}");
    }

    // The text report says the same.
    let roots = m.roots();
    let o = replay_compare(&trace, &roots, &[]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    for want in [
        format!("#{collapse} fallocate: recorded 0"),
        "the roots DIFFER".to_string(),
        "btrfs".to_string(),
        "-1 EOPNOTSUPP [differs from the recording]".to_string(),
        format!("#{} setxattr: recorded 0", setx[0].0),
        "-1 ENOSPC [differs from the recording]".to_string(),
        "trees: A -> B: 1 differences".to_string(),
    ] {
        assert!(text.contains(&want), "`{want}` not in:\n{text}");
    }
}

/// sqlite3 creating a table, inserting rows in a transaction and indexing them: every root
/// matches the recording and the others, call by call and tree by tree.
#[test]
fn a_workload_that_does_not_differ_is_reported_as_agreeing() {
    if !can_mount() || !ra_testkit::have_program("sqlite3") {
        return;
    }
    let m = Mounts::new("agrees");
    let work = m.base.join("work");
    std::fs::create_dir(&work).unwrap();
    let trace = m.base.join("t.ds");
    record(
        &trace,
        &work,
        &[
            "sqlite3",
            "db.sqlite",
            "create table t(a, b); begin; insert into t values (1, 'one'); \
             insert into t values (2, 'two'); commit; create index i on t(a); \
             select count(*) from t;",
        ],
    );
    let roots = m.roots();
    let o = replay_compare(&trace, &roots, &["--json"]);
    let r = json(&o);
    let show = || serde_json::to_string_pretty(&r).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show());
    assert_eq!(r["roots_agree"], true, "{}", show());
    assert_eq!(r["roots_match_recording"], true, "{}", show());
    assert_eq!(r["calls"]["differing"], 0);
    assert!(r["calls"]["compared"].as_u64().unwrap() > 50, "{}", show());
    let rs = r["roots"].as_array().unwrap();
    assert_eq!(rs.len(), 4);
    for x in rs {
        assert_eq!(x["report"]["mismatch_total"], 0, "{}", show());
        // Each root replayed the whole trace.
        assert_eq!(x["report"]["totals"]["replayed"], rs[0]["report"]["totals"]["replayed"]);
    }
    for t in r["trees"].as_array().unwrap() {
        assert_eq!(t["differences"], 0, "{}", show());
    }
    // The database is there, in every root.
    let db = roots[3].join(work.join("db.sqlite").strip_prefix("/").unwrap());
    assert!(std::fs::metadata(&db).unwrap().len() > 0);

    let roots = m.roots();
    let o = replay_compare(&trace, &roots, &[]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("calls: the roots agree on all"), "{text}");
    assert!(text.contains("the roots agree; every root matched the recording"), "{text}");
}

/// A --compare root that does not exist, is --root itself, lies inside --root or holds it,
/// or repeats another: one clear line, exit 2.
#[test]
fn bad_compare_roots_are_refused_clearly() {
    let trace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/example.ds");
    assert!(trace.is_file(), "{}", trace.display());
    let base = ra_testkit::scratch_dir("cmp-bad");
    let a = base.join("a");
    let b = base.join("b");
    std::fs::create_dir_all(a.join("inner")).unwrap();
    std::fs::create_dir(&b).unwrap();
    let refuse = |root: &Path, compare: &[&Path], want: &str| {
        let mut c = bin();
        c.arg("replay").arg(&trace).arg("--root").arg(root);
        for p in compare {
            c.arg("--compare").arg(p);
        }
        let line = ra_testkit::assert_clean_failure(&run(&mut c));
        assert!(line.contains(want), "`{want}` not in {line}");
    };
    refuse(&b, &[&base.join("nonexistent")], "--compare");
    refuse(&b, &[&base.join("nonexistent")], "nonexistent");
    refuse(&b, &[&b], "is the same directory as --root");
    refuse(&b, &[&base.join("b/../b")], "is the same directory as --root");
    refuse(&a, &[&a.join("inner")], "lies inside --root");
    refuse(&a.join("inner"), &[&a], "lies inside --compare");
    refuse(&a.join("inner"), &[&b, &b], "is the same directory as --compare");
    // A --compare root that is not empty, like --root.
    std::fs::write(b.join("x"), "x").unwrap();
    refuse(&a.join("inner"), &[&b], "is not empty");
    std::fs::remove_dir_all(&base).unwrap();
}
