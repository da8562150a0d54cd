//! `reanimator fs`: the tracing file system mounted for real (FUSE, root), exercised by real
//! programs, its trace read back, replayed, and its failure modes.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use ra_testkit::{have_program, privileged, scratch_dir};

use common::{bin, keygen, verify};

fn sh(cwd: &Path, script: &str) -> Output {
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("bash");
    out
}

fn mounted_by(mnt: &Path, pid: u32) -> bool {
    let want = format!("reanimator:{pid}");
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(mnt.to_str().unwrap_or("")) && l.contains(&want))
}

/// A mounted tracing file system; unmounted (forcibly if need be) when dropped.
struct Mount {
    child: Option<Child>,
    mnt: PathBuf,
}

impl Mount {
    fn start(lower: &Path, mnt: &Path, trace: &Path, extra: &[&str]) -> Mount {
        Mount::start_with(bin(), lower, mnt, trace, extra)
    }

    fn start_with(
        mut cmd: Command,
        lower: &Path,
        mnt: &Path,
        trace: &Path,
        extra: &[&str],
    ) -> Mount {
        std::fs::create_dir_all(lower).unwrap();
        std::fs::create_dir_all(mnt).unwrap();
        let child = cmd
            .args(["fs", "mount"])
            .arg(lower)
            .arg(mnt)
            .arg("-o")
            .arg(trace)
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start reanimator fs");
        let mut m = Mount { mnt: mnt.canonicalize().unwrap(), child: Some(child) };
        let pid = m.child.as_ref().unwrap().id();
        let t0 = Instant::now();
        while !mounted_by(&m.mnt, pid) {
            if let Some(st) = m.child.as_mut().unwrap().try_wait().unwrap() {
                let out = m.child.take().unwrap().wait_with_output().unwrap();
                panic!("fs mount exited ({st}): {}", String::from_utf8_lossy(&out.stderr));
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "mount did not come up in 10 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        // In the mount table before its INIT handshake is done: serving once it answers.
        std::fs::metadata(&m.mnt).expect("the mount answers");
        m
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// `fs umount`, then the daemon's exit status and stderr.
    fn finish(self) -> (std::process::ExitStatus, String) {
        let (code, msg) = self.umount();
        assert_eq!(code, Some(0), "fs umount: {msg}");
        self.wait()
    }

    /// `fs umount` (any outcome): its exit status and stderr.
    fn umount(&self) -> (Option<i32>, String) {
        let out = bin().args(["fs", "umount"]).arg(&self.mnt).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    /// The daemon's exit status and stderr, once it exits.
    fn wait(mut self) -> (std::process::ExitStatus, String) {
        let child = self.child.take().unwrap();
        let out = child.wait_with_output().unwrap();
        (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = bin().args(["fs", "umount", "--force"]).arg(&self.mnt).output();
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn dump(trace: &Path, args: &[&str]) -> String {
    let out = bin().arg("dump").arg(trace).args(args).output().unwrap();
    assert!(out.status.success(), "dump: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn jsonl(trace: &Path, filter: &str) -> Vec<serde_json::Value> {
    dump(trace, &["--format", "jsonl", "--where", filter])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A tree of real files to work with: a slice of /usr/include and /usr/share/doc (text and
/// binary-ish, nested, a few hundred files).
fn source_tarball(dir: &Path) -> PathBuf {
    let tar = dir.join("src.tar");
    let out = Command::new("tar")
        .args(["cf"])
        .arg(&tar)
        .args(["-C", "/usr/include", "linux", "-C", "/usr/share/doc", "git"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    tar
}

const WORKLOAD: &str = r#"
set -e
tar xf "$TARBALL"
cp -a linux linux-copy
mv linux-copy/netfilter linux-copy/nf
ln linux/types.h hardlink.h
ln -s linux/types.h symlink.h
mkdir -p db && sqlite3 db/t.db 'create table t(a integer, b text);' \
  "$(for i in $(seq 1 200); do echo "insert into t values($i, 'row $i');"; done)"
git init -q repo && cp linux/types.h repo/ && (cd repo && git add types.h && git commit -qm one)
chmod 600 hardlink.h
truncate -s 100 linux/kernel.h
rm -r linux/netfilter_ipv4
python3 - <<'EOF'
import mmap, os
with open("mapped.bin", "wb") as f:
    f.write(b"\0" * 8192)
with open("mapped.bin", "r+b") as f:
    m = mmap.mmap(f.fileno(), 8192)
    m[100:110] = b"via-mmap!!"
    m.flush()
    m.close()
EOF
"#;

#[test]
fn real_programs_on_the_mount_leave_the_tree_they_leave_natively() {
    if !ra_testkit::can_mount_fuse()
        || !["tar", "sqlite3", "git", "python3"].iter().all(|p| have_program(p))
    {
        return;
    }
    let d = scratch_dir("fs-real");
    let tar = source_tarball(&d);
    let native = d.join("native");
    std::fs::create_dir_all(&native).unwrap();
    let script = WORKLOAD.replace("$TARBALL", tar.to_str().unwrap());
    let out = sh(&native, &script);
    assert!(out.status.success(), "native: {}", String::from_utf8_lossy(&out.stderr));

    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let out = sh(&mnt, &script);
    assert!(out.status.success(), "on the mount: {}", String::from_utf8_lossy(&out.stderr));
    // What programs see through the mount is the lower tree.
    let seen = bin().arg("diff").arg(&mnt).arg(&lower).output().unwrap();
    let (status, log) = m.finish();
    assert!(status.success(), "daemon: {log}");
    assert!(seen.status.success(), "mount vs lower: {}", String::from_utf8_lossy(&seen.stdout));
    // Git's index holds inode numbers and change times: it differs between any two trees.
    for t in [&native, &lower] {
        std::fs::remove_file(t.join("repo/.git/index")).unwrap();
    }
    let same = bin().arg("diff").arg(&native).arg(&lower).output().unwrap();
    assert!(
        same.status.success(),
        "native run vs run on the mount:\n{}",
        String::from_utf8_lossy(&same.stdout)
    );
    // Hard links and inode numbers: the mount shows the lower file's inode number.
    use std::os::unix::fs::MetadataExt;
    let a = std::fs::metadata(lower.join("hardlink.h")).unwrap();
    assert_eq!(a.nlink(), 2);

    // The trace: readable, every operation kind the workload does, with data.
    let info = bin().arg("info").arg(&trace).output().unwrap();
    assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
    let info = String::from_utf8_lossy(&info.stdout).into_owned();
    assert!(info.contains("Reanimator::FsOp"), "{info}");
    assert!(info.contains("fs_mode            fidelity"), "{info}");
    let text = dump(&trace, &[]);
    for op in [
        "lookup(", "getattr(", "setattr(", "create(", "open(", "read(", "write(", "release(",
        "mkdir(", "rmdir(", "unlink(", "rename(", "link(", "symlink(", "opendir(", "readdir(",
        "fsync(",
    ] {
        assert!(text.contains(op), "no {op} in the trace");
    }
    // The mmap store reached the daemon as a write carrying the bytes (fidelity mode).
    let w = jsonl(&trace, "op == write && path ~ \"**/mapped.bin\"");
    assert!(
        w.iter().any(|r| {
            // A buffer with NULs is written as {"hex": ...} (TRACE_FORMAT.md 10).
            serde_json::from_value::<ra_fsstate::JsonBytes>(r["extra"]["data"].clone())
                .ok()
                .and_then(ra_fsstate::JsonBytes::into_bytes)
                .is_some_and(|d| d.windows(10).any(|w| w == b"via-mmap!!"))
        }),
        "no write of the mapped page: {w:?}"
    );
    // Paths are what the programs used; comm and pid come from /proc.
    let tars = jsonl(&trace, "op == create && comm == tar");
    let bash = jsonl(&trace, "comm ~ \"data_modes*\" || comm ~ \"real_programs*\"");
    assert!(
        bash.iter().all(|r| r["call"] == "lookup" || r["call"] == "getattr"),
        "the test thread only changed directory into the mount; later calls are bash's: {bash:?}"
    );
    assert!(!tars.is_empty());
    assert!(tars[0]["extra"]["pathname"].as_str().unwrap().starts_with(mnt.to_str().unwrap()));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_trace_of_the_mount_replays_to_the_same_tree() {
    if !ra_testkit::can_mount_fuse() || !have_program("tar") || !have_program("python3") {
        return;
    }
    let d = scratch_dir("fs-replay");
    let tar = source_tarball(&d);
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let out = sh(
        &mnt,
        &format!(
            "set -e; tar xf {}; mv linux/netfilter nf; rm -r linux/can; ln -s nf linkdir; \
             chmod 700 nf; touch -d 2001-01-01 nf/x_tables.h; truncate -s 10 linux/fs.h; \
             cp nf/x_tables.h xcopy; python3 -c \"import os; a = os.open('nf/x_tables.h', \
             os.O_RDONLY); b = os.open('part', os.O_WRONLY | os.O_CREAT, 0o644); \
             assert os.copy_file_range(a, b, 300, 100, 10) == 300\"",
            tar.display()
        ),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let root = d.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let out =
        bin().arg("replay").arg(&trace).arg("--root").arg(&root).arg("--init").output().unwrap();
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "replay: {report}");
    assert!(report.contains("every call matched"), "{report}");
    let replayed = root.join(mnt.strip_prefix("/").unwrap());
    let diff = bin().arg("diff").arg(&lower).arg(&replayed).output().unwrap();
    assert!(diff.status.success(), "lower vs replayed:\n{}", String::from_utf8_lossy(&diff.stdout));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_filter_records_only_matching_operations() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-filter");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m =
        Mount::start(&lower, &mnt, &trace, &["--filter", "ext == txt && op in {create, write}"]);
    let out = sh(&mnt, "set -e; echo a > one.txt; echo b > two.dat; mkdir sub; echo c > sub/three.txt; cat one.txt two.dat >/dev/null");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    assert!(log.contains("filtered out"), "{log}");
    let all = jsonl(&trace, "true");
    assert!(!all.is_empty());
    for r in &all {
        let op = r["call"].as_str().unwrap();
        let p = r["extra"]["pathname"].as_str().unwrap();
        assert!(op == "create" || op == "write", "{r}");
        assert!(p.ends_with(".txt"), "{r}");
    }
    assert_eq!(all.iter().filter(|r| r["call"] == "write").count(), 2);
    // Everything passed through regardless.
    assert_eq!(std::fs::read_to_string(lower.join("two.dat")).unwrap(), "b\n");
    let info = String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    assert!(info.contains("ext == txt"), "the filter is in the header: {info}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn data_modes_keep_what_they_promise() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-data");
    for mode in ["full", "hash", "none"] {
        let (lower, mnt, trace) = (
            d.join(format!("lower-{mode}")),
            d.join(format!("mnt-{mode}")),
            d.join(format!("{mode}.ds")),
        );
        let m = Mount::start(&lower, &mnt, &trace, &["--data", mode]);
        let out = sh(&mnt, "printf 'payload-123' > f; cat f > /dev/null");
        assert!(out.status.success());
        let (status, log) = m.finish();
        assert!(status.success(), "{log}");
        for op in ["write", "read"] {
            let rs = jsonl(&trace, &format!("op == {op} && path ~ \"**/f\""));
            assert!(!rs.is_empty(), "{mode}: no {op}");
            let e = &rs[0]["extra"];
            assert_eq!(e["data_length"], 11, "{mode} {op}: {e}");
            match mode {
                "full" => assert_eq!(e["data"], "payload-123"),
                "hash" => {
                    assert!(e.get("data").is_none(), "{e}");
                    let hex = e["data_blake3"]["hex"].as_str().unwrap_or_default();
                    assert_eq!(hex, blake3::hash(b"payload-123").to_hex().as_str(), "{e}");
                }
                _ => assert!(e.get("data").is_none() && e.get("data_blake3").is_none(), "{e}"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `--data write=full,read=none`: writes keep their bytes, reads their length only; `fs ctl
/// data` takes the same values (a bad one refused in one line); the trace replays with every
/// call matched to the lower tree's contents, since every byte written is in it.
#[test]
fn data_per_direction_keeps_writes_and_drops_reads() {
    if !ra_testkit::can_mount_fuse() || !have_program("sqlite3") {
        return;
    }
    let d = scratch_dir("fs-data-dirs");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &["--data", "write=full,read=none"]);
    let out = sh(
        &mnt,
        "set -e; printf 'payload-123' > f; cat f > /dev/null; \
         sqlite3 t.db 'create table t(x); insert into t values(1), (2); select sum(x) from t;'",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ctl =
        |what: &str| bin().args(["fs", "ctl"]).arg(&mnt).args(["data", what]).output().unwrap();
    let err = ra_testkit::assert_clean_failure(&ctl("read=full,read=hash"));
    assert!(err.contains("given twice"), "{err}");
    let o = ctl("write=full,read=hash");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(sh(&mnt, "cat f > /dev/null").status.success());
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let w = jsonl(&trace, "op == write && path ~ \"**/f\"");
    assert_eq!(w[0]["extra"]["data"], "payload-123", "{}", w[0]);
    let r = jsonl(&trace, "op == read && path ~ \"**/f\"");
    assert!(r.len() >= 2, "{r:?}");
    let (first, last) = (&r[0]["extra"], &r[r.len() - 1]["extra"]);
    assert_eq!(first["data_length"], 11, "{first}");
    assert!(first.get("data").is_none() && first.get("data_blake3").is_none(), "{first}");
    let hex = last["data_blake3"]["hex"].as_str().unwrap_or_default();
    assert_eq!(hex, blake3::hash(b"payload-123").to_hex().as_str(), "after fs ctl: {last}");
    let db = jsonl(&trace, "op == write && path ~ \"**/t.db\"");
    assert!(!db.is_empty() && db.iter().all(|w| w["extra"].get("data").is_some()), "{db:?}");
    let info = String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    assert!(info.lines().any(|l| l.split_whitespace().eq(["data_mode_write", "full"])), "{info}");
    assert!(info.lines().any(|l| l.split_whitespace().eq(["data_mode_read", "none"])), "{info}");
    let root = d.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let out = bin().arg("replay").arg(&trace).arg("--root").arg(&root).arg("--init").output();
    let out = out.unwrap();
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "replay: {report}");
    assert!(report.contains("every call matched"), "{report}");
    let replayed = root.join(mnt.strip_prefix("/").unwrap());
    let diff = bin().arg("diff").arg(&lower).arg(&replayed).output().unwrap();
    assert!(diff.status.success(), "lower vs replayed:\n{}", String::from_utf8_lossy(&diff.stdout));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn aggregate_rows_count_every_operation() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-agg");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(
        &lower,
        &mnt,
        &trace,
        &["--aggregate=0.2", "--aggregate-only", "--print-aggregate"],
    );
    let out = sh(&mnt, "for i in $(seq 1 50); do echo $i > f$i; done; sleep 0.5; rm f*");
    assert!(out.status.success());
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    assert!(
        log.contains("nsecs               : count    distribution"),
        "live histograms on stderr: {log}"
    );
    assert!(log.contains("check: ok (buckets"), "histograms check themselves: {log}");
    assert!(!log.contains("CHECK FAILED"), "{log}");
    let ds = dataseries::DsReader::open(&trace).unwrap();
    let mut per_op = std::collections::HashMap::<String, i64>::new();
    let mut rows = 0;
    for h in ds.headers() {
        let h = h.unwrap();
        if h.type_name == "Reanimator::FsOp" {
            panic!("--aggregate-only wrote operation records");
        }
        if h.type_name != "Reanimator::FsAggregate" {
            continue;
        }
        let e = ds.read_extent_of(h.offset, &h.type_name).unwrap();
        for r in 0..e.len() {
            rows += 1;
            let op = String::from_utf8_lossy(e.bytes(r, 2).unwrap()).into_owned();
            let count = e.i64(r, 4).unwrap();
            let hist = e.bytes(r, 10).unwrap();
            let sum: u64 =
                hist.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).sum();
            assert_eq!(sum as i64, count, "histogram adds up to the count ({op})");
            assert!(e.i64(r, 8).unwrap() <= e.i64(r, 9).unwrap(), "min <= max");
            *per_op.entry(op).or_default() += count;
        }
    }
    assert!(rows > 0);
    assert_eq!(per_op.get("create"), Some(&50), "{per_op:?}");
    assert_eq!(per_op.get("unlink"), Some(&50), "{per_op:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// FSprof's stackable mode: `--profile FILE` writes the aggregate as a latency profile whose
/// counts equal the operations in the trace, which `reanimator profile` reads back and draws.
#[test]
fn the_profile_counts_every_operation_of_the_trace() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-prof");
    let (lower, mnt, trace, prof) =
        (d.join("lower"), d.join("mnt"), d.join("t.ds"), d.join("p.json"));
    let p = prof.to_str().unwrap();
    let m =
        Mount::start(&lower, &mnt, &trace, &["--data", "none", "--profile", p, "--aggregate=0.2"]);
    let out = sh(&mnt, "mkdir a b; for i in $(seq 1 40); do echo $i > a/f$i; cat a/f$i > b/g$i; done; sleep 0.3; rm -r a");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&prof)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "meta");
    assert_eq!(lines[0]["source"], "fs");
    let mut per_op = std::collections::BTreeMap::<String, u64>::new();
    for h in lines.iter().filter(|l| l["type"] == "hist") {
        assert_eq!(h["layer"], "fs");
        assert_eq!(h["check_ok"], true, "{h}");
        *per_op.entry(h["op"].as_str().unwrap().to_string()).or_default() +=
            h["count"].as_u64().unwrap();
    }
    let ivs: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "interval").collect();
    assert!(ivs.len() >= 2, "several intervals");
    assert_eq!(ivs.last().unwrap()["partial"], true, "the last is cut short by the unmount");
    // Every operation in the trace is counted once in the profile.
    let mut traced = std::collections::BTreeMap::<String, u64>::new();
    for r in jsonl(&trace, "true") {
        *traced.entry(r["call"].as_str().unwrap().to_string()).or_default() += 1;
    }
    assert_eq!(per_op, traced);
    assert_eq!(per_op.get("create"), Some(&80));
    // Shown again as text and drawn.
    let svg = d.join("p.svg");
    let o = bin().args(["profile", p, "--svg", svg.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("fs create"), "{text}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<title>"));
    let _ = std::fs::remove_dir_all(&d);
}

/// The live profiler's FUSE layer sees this file system's requests: every create and write
/// a program makes on the mount (fidelity mode: no cache hides them) is a FUSE request timed
/// from fuse_request_send to fuse_request_end, per opcode.
#[test]
fn the_live_profiler_times_this_file_systems_fuse_requests() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-fuseprof");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &["--data", "none"]);
    let script =
        format!("i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo $i > {}/f$i; done", mnt.display());
    let o = bin()
        .args(["profile", "--json", "--layers", "syscall,fuse", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let v: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let count = |layer: &str, op: &str| -> u64 {
        v.iter()
            .filter(|l| l["type"] == "hist" && l["layer"] == layer && l["op"] == op)
            .map(|l| l["count"].as_u64().unwrap())
            .sum()
    };
    // The FUSE layer is the whole machine's: at least this program's requests.
    assert!(count("fuse", "create") >= 30, "creates {}", count("fuse", "create"));
    assert!(count("fuse", "write") >= 30, "writes {}", count("fuse", "write"));
    // The same creates and writes are in the file system's own trace.
    let traced = |op: &str| jsonl(&trace, &format!("op == \"{op}\"")).len() as u64;
    assert!(count("fuse", "create") >= traced("create"));
    assert_eq!(count("syscall", "write"), 30);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn permissions_are_the_lower_file_systems() {
    if !ra_testkit::can_mount_fuse() || !have_program("setpriv") {
        return;
    }
    let d = scratch_dir("fs-perm");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    std::fs::create_dir_all(lower.join("open")).unwrap();
    sh(&lower, "chmod 777 open; echo secret > secret; chmod 600 secret");
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let nobody = |cmd: &str| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", cmd])
            .current_dir(&mnt)
            .output()
            .unwrap()
    };
    let r = nobody("cat secret");
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("Permission denied"), "{r:?}");
    let r = nobody("echo mine > open/mine && mkdir open/dir");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    use std::os::unix::fs::MetadataExt;
    for p in ["open/mine", "open/dir"] {
        let md = std::fs::metadata(lower.join(p)).unwrap();
        assert_eq!((md.uid(), md.gid()), (65534, 65534), "{p} created with the caller's ids");
    }
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let rs = jsonl(&trace, "op == create && uid == 65534");
    assert_eq!(rs.len(), 1, "{rs:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_killed_daemon_neither_hangs_programs_nor_loses_its_flushed_trace() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-kill");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let mut m = Mount::start(&lower, &mnt, &trace, &[]);
    let out = sh(&mnt, "for i in $(seq 1 20); do echo $i > f$i; done");
    assert!(out.status.success());
    std::thread::sleep(Duration::from_millis(1500)); // past one flush
                                                     // SAFETY: kill takes no pointers.
    unsafe { libc::kill(m.pid() as i32, libc::SIGKILL) };
    let _ = m.child.as_mut().unwrap().wait();
    // Programs get an error at once, not a hang.
    let t0 = Instant::now();
    let ls = Command::new("ls").arg(&mnt).output().unwrap();
    assert!(!ls.status.success());
    assert!(t0.elapsed() < Duration::from_secs(5));
    let out = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{msg}");
    assert!(msg.contains("gone"), "{msg}");
    assert!(!mounted_by(&mnt, m.pid()));
    m.child = None;
    // The trace up to the last flush is readable.
    let info = bin().arg("info").arg(&trace).output().unwrap();
    assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
    let creates = jsonl(&trace, "op == create");
    assert_eq!(creates.len(), 20);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_mounts_are_refused_with_one_clear_message() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-bad");
    let (lower, mnt) = (d.join("lower"), d.join("mnt"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let run = |args: &[&str]| {
        let out = bin().args(["fs", "mount"]).args(args).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (l, mp) = (lower.to_str().unwrap(), mnt.to_str().unwrap());
    let trace = d.join("t.ds");
    let t = trace.to_str().unwrap();
    let missing = d.join("nope");
    let (code, msg) = run(&[missing.to_str().unwrap(), mp, "-o", t]);
    assert_eq!(code, Some(2), "{msg}");
    assert!(msg.contains("No such file"), "{msg}");
    let inside = mnt.join("t.ds");
    let (code, msg) = run(&[l, mp, "-o", inside.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(msg.contains("through the mount it traces"), "{msg}");
    let (code, msg) = run(&[l, mp, "-o", t, "--filter", "pathh ~ x"]);
    assert_eq!(code, Some(2));
    assert!(msg.contains("did you mean `path`"), "{msg}");
    let (code, msg) = run(&[l, l, "-o", t]);
    assert_eq!(code, Some(2));
    assert!(msg.contains("must not contain each other"), "{msg}");
    // A mountpoint in use.
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let (code, msg) = run(&[l, mp, "-o", d.join("u.ds").to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(msg.contains("already a mount point"), "{msg}");
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let out = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a mount point"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_full_trace_disk_stops_recording_but_not_the_file_system() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-full");
    let small = d.join("small");
    std::fs::create_dir_all(&small).unwrap();
    let m = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&small)
        .output()
        .unwrap();
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), small.join("t.ds"));
    let mount = Mount::start(&lower, &mnt, &trace, &[]);
    let out = sh(&mnt, "dd if=/dev/urandom of=big bs=64k count=300 status=none && sync big");
    assert!(
        out.status.success(),
        "the program is not failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::metadata(lower.join("big")).unwrap().len(), 300 * 65536);
    std::thread::sleep(Duration::from_millis(1500));
    // `fs umount` says the trace failed: exit status 2 and the daemon's error in one line.
    let (code, msg) = mount.umount();
    assert_eq!(code, Some(2), "{msg}");
    assert!(
        msg.contains("trace is incomplete") && msg.contains("No space left on device"),
        "{msg}"
    );
    assert_eq!(msg.lines().filter(|l| l.contains("No space")).count(), 1, "{msg}");
    let (status, log) = mount.wait();
    assert_eq!(status.code(), Some(2), "{log}");
    assert!(log.contains("No space left on device"), "{log}");
    assert!(log.contains("recording stopped, the file system keeps serving"), "{log}");
    let info = bin().arg("info").arg(&trace).output().unwrap();
    assert!(
        info.status.success(),
        "the trace up to the failure reads: {}",
        String::from_utf8_lossy(&info.stderr)
    );
    let _ = Command::new("umount").arg(&small).status();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn direct_io_sees_every_read_and_fast_mode_serves_the_same_bytes() {
    if !ra_testkit::can_mount_fuse() || !have_program("python3") {
        return;
    }
    let d = scratch_dir("fs-modes");
    let script = r#"python3 - <<'EOF'
import os, mmap
with open("f", "wb") as f:
    f.write(bytes(range(256)) * 256)
fd = os.open("f", os.O_RDONLY)
for i in range(5):
    assert os.pread(fd, 100, 1000) == (bytes(range(256)) * 256)[1000:1100]
os.close(fd)
with open("f", "r+b") as f:
    m = mmap.mmap(f.fileno(), 65536)
    m[0:4] = b"MMAP"
    m.flush()
    m.close()
EOF"#;
    for (mode, args) in [("direct", &["--direct-io"][..]), ("fast", &["--fast"][..])] {
        let (lower, mnt, trace) = (
            d.join(format!("lower-{mode}")),
            d.join(format!("mnt-{mode}")),
            d.join(format!("{mode}.ds")),
        );
        let m = Mount::start(&lower, &mnt, &trace, args);
        let out = sh(&mnt, script);
        assert!(out.status.success(), "{mode}: {}", String::from_utf8_lossy(&out.stderr));
        let (status, log) = m.finish();
        assert!(status.success(), "{log}");
        let data = std::fs::read(lower.join("f")).unwrap();
        assert_eq!(&data[..4], b"MMAP", "{mode}");
        assert_eq!(data.len(), 65536);
        let reads = jsonl(&trace, "op == read && offset == 1000 && length == 100");
        if mode == "direct" {
            // Each pread is one operation, even though the data is the same every time.
            assert_eq!(reads.len(), 5, "{mode}: {reads:?}");
            let info =
                String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
            assert!(info.contains("fs_direct_io       on"), "{info}");
        } else {
            assert!(reads.is_empty(), "fast mode reads pages, not calls: {reads:?}");
            let info =
                String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
            assert!(info.contains("fs_mode            fast"), "{info}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn large_directories_list_whole_and_seekdir_returns_to_the_same_entry() {
    if !ra_testkit::can_mount_fuse() || !have_program("perl") {
        return;
    }
    let d = scratch_dir("fs-dir");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    std::fs::create_dir_all(&lower).unwrap();
    for i in 0..5000 {
        std::fs::write(lower.join(format!("entry-with-a-longish-name-{i:05}")), vec![b'x'; i % 7])
            .unwrap();
    }
    let ls = "ls -lai --time-style=+%s";
    let native = sh(&lower, ls);
    assert!(native.status.success());
    // --every-lookup answers READDIR (the kernel would look every name up again anyway); the
    // default mode and --fast announce READDIRPLUS (entries with attributes).
    for (mode, extra) in [
        ("fidelity", &[][..]),
        ("every-lookup", &["--every-lookup"][..]),
        ("fast", &["--fast"][..]),
    ] {
        let mut args = vec!["--data", "none"];
        args.extend_from_slice(extra);
        let m = Mount::start(&lower, &mnt, &trace, &args);
        let out = sh(
            &mnt,
            r#"perl -e 'opendir(D, ".") or die; my $n = 0; $n++ for 1..100; readdir(D) for 1..100;
            my $p = telldir(D); my @b = map { scalar readdir(D) } 1..50; seekdir(D, $p);
            my @c = map { scalar readdir(D) } 1..50; die "seekdir" unless "@b" eq "@c";
            rewinddir(D); my $all = 0; $all++ while defined(readdir(D)); print "$all\n"'"#,
        );
        assert!(out.status.success(), "{mode}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "5002", "{mode}");
        // A long listing: names, inode numbers, modes, links, owners, sizes and times are
        // the lower directory's.
        let listed = sh(&mnt, ls);
        assert!(listed.status.success(), "{mode}");
        let strip_dots = |o: &Output| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                // The mount's root is FUSE's node 1 (".": inode 1), its parent outside.
                .filter(|l| !l.ends_with(" .") && !l.ends_with(" ..") && !l.starts_with("total"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(strip_dots(&listed), strip_dots(&native), "{mode}: ls -lai differs");
        let (status, log) = m.finish();
        assert!(status.success(), "{log}");
        let plus = jsonl(&trace, "op == \"readdirplus\"");
        let lookups = jsonl(&trace, "op == \"lookup\"").len();
        let entries: i64 = plus.iter().map(|r| r["return_value"].as_i64().unwrap()).sum();
        match mode {
            "fast" => {
                assert!(entries >= 5000, "fast: readdirplus returned {entries} entries");
                assert!(lookups < 1000, "fast: {lookups} lookups after readdirplus");
            }
            "fidelity" => {
                // The names READDIRPLUS listed stay in the dentry cache for a second: ls -l
                // looks fewer of them up again (how many depends on how fast this machine
                // lists 5,000 names), but stats every one.
                assert!(entries >= 5000, "fidelity: readdirplus returned {entries} entries");
                assert!(lookups < 5000, "fidelity: {lookups} lookups after readdirplus");
                let getattrs = jsonl(&trace, "op == \"getattr\"").len();
                assert!(getattrs >= 5000, "fidelity: {getattrs} getattrs for ls -l of 5,000");
            }
            _ => {
                assert!(plus.is_empty(), "--every-lookup does not announce readdirplus");
                assert!(lookups >= 5000, "every-lookup: {lookups} lookups");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Programs run from the mount (exec reads them through it) and a thread faulting a mapped
/// file's pages while another maps and unmaps memory: the daemon must never wait for a lock
/// its caller holds (it reads no /proc file that could, and bounds the ones it reads).
#[test]
fn programs_executed_and_mapped_from_the_mount_never_hang() {
    if !ra_testkit::can_mount_fuse() || !have_program("python3") {
        return;
    }
    let d = scratch_dir("fs-exec");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    std::fs::create_dir_all(&lower).unwrap();
    for b in ["true", "ls"] {
        std::fs::copy(format!("/bin/{b}"), lower.join(b)).unwrap();
    }
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let out = sh(
        &mnt,
        r#"set -e
        for i in $(seq 1 30); do timeout 10 ./true; done
        timeout 10 ./ls >/dev/null
        timeout 20 python3 -c '
import mmap, threading
f = open("ls", "rb"); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
def churn():
    for i in range(2000):
        x = mmap.mmap(-1, 1 << 20); x.close()
t = threading.Thread(target=churn); t.start()
s = sum(m[o] for o in range(0, len(m), 4096))
t.join()'"#,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let execs = jsonl(&trace, "op == open && path ~ \"**/true\"");
    assert!(execs.len() >= 30, "each exec opens the binary through the mount: {}", execs.len());
    let _ = std::fs::remove_dir_all(&d);
}

/// More files than the daemon may hold descriptors (its limit here 600): nodes are reopened
/// by file handle, inode numbers reused by new files are told apart by their generation.
#[test]
fn more_files_than_descriptors() {
    if !ra_testkit::can_mount_fuse() || !have_program("prlimit") || !have_program("python3") {
        return;
    }
    let d = scratch_dir("fs-nofile");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let mut cmd = Command::new("prlimit");
    cmd.args(["--nofile=600:600", env!("CARGO_BIN_EXE_reanimator")]);
    let m = Mount::start_with(cmd, &lower, &mnt, &trace, &["--data", "none"]);
    let out = sh(
        &mnt,
        r#"python3 -c '
import os
for d in range(3):
    os.mkdir(str(d))
    for i in range(1000):
        with open(f"{d}/{i}", "w") as f: f.write(str(i))
for d in range(3):
    for i in range(0, 1000, 7):
        assert open(f"{d}/{i}").read() == str(i)
    os.rename(str(d), "r" + str(d))
for i in range(0, 1000, 3):
    os.unlink(f"r1/{i}")
    with open(f"r1/{i}", "w") as f: f.write("new")
for i in range(0, 1000, 3):
    assert open(f"r1/{i}").read() == "new"
assert sum(len(os.listdir("r" + str(d))) for d in range(3)) == 3000
'"#,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let info = String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    assert!(info.contains("fs_node_descriptors"), "{info}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Found by scripts/fs-conformance.sh: size queries (`listxattr(path, NULL, 0)`, as cp -a and
/// getfattr make them) answered 0, and xattrs of symlinks were refused.
#[test]
fn xattrs_of_files_and_symlinks_pass_through() {
    if !ra_testkit::can_mount_fuse() || !have_program("python3") {
        return;
    }
    let d = scratch_dir("fs-xattr");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(d.join("copy")).unwrap();
    let out = sh(&lower, "echo hi > f && ln -s f l && python3 -c \"import os; os.setxattr('f', 'user.color', b'red')\"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let script = format!(
        r#"set -e
        cp -a f {copy}/f
        python3 - <<'EOF'
import os
assert os.getxattr("{copy}/f", "user.color") == b"red", "cp -a through the mount lost the xattr"
os.setxattr("l", "trusted.foo", b"43", follow_symlinks=False)
assert os.getxattr("l", "trusted.foo", follow_symlinks=False) == b"43"
assert os.listxattr("l", follow_symlinks=False) == ["trusted.foo"]
os.removexattr("l", "trusted.foo", follow_symlinks=False)
assert os.listxattr("l", follow_symlinks=False) == []
assert os.listxattr("f") == ["user.color"]
EOF"#,
        copy = d.join("copy").display()
    );
    let out = sh(&mnt, &script);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let sets = jsonl(&trace, "op == setxattr && xattr_name == \"trusted.foo\" && errno == 0");
    assert_eq!(sets.len(), 1, "{sets:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// bench/fs's per-stage knob: records are built, then dropped; the trace and stderr say so.
#[test]
fn the_discard_knob_leaves_a_marked_trace_without_records() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-discard");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let mut cmd = bin();
    cmd.env("REANIMATOR_DISCARD_EVENTS", "1");
    let m = Mount::start_with(cmd, &lower, &mnt, &trace, &[]);
    assert!(sh(&mnt, "echo x > f; cat f >/dev/null").status.success());
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    assert!(log.contains("REANIMATOR_DISCARD_EVENTS=1") && log.contains("not written"), "{log}");
    assert!(jsonl(&trace, "true").is_empty());
    let info = String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    assert!(info.contains("fs_discarded_records"), "{info}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A daemon that hangs (stopped here): `fs umount --force` cuts the connection off and
/// detaches the mount; programs get ENOTCONN instead of waiting forever. A program killed in
/// the middle of its writes, and a lower directory removed under the mount, leave the daemon
/// serving and its trace whole.
#[test]
fn hung_daemons_killed_writers_and_vanished_lower_directories() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-faults");
    // A writer killed mid-write, then the lower directory removed.
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let mut dd = Command::new("dd")
        .args(["if=/dev/zero", "bs=64k", "count=100000", "status=none"])
        .arg(format!("of={}", mnt.join("big").display()))
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    dd.kill().unwrap();
    let _ = dd.wait();
    assert!(sh(&mnt, "echo still > after && cat after").status.success());
    std::fs::remove_dir_all(&lower).unwrap();
    let r = sh(&mnt, "touch new");
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("No such file"), "{r:?}");
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    assert!(bin().arg("info").arg(&trace).output().unwrap().status.success());
    assert!(!jsonl(&trace, "op == write && path ~ \"**/big\"").is_empty());

    // A hung daemon, on /dev/fuse: over io_uring the kernel hands a request to the daemon's
    // ring as task work, which a stopped daemon cannot run, and an abort does not end a
    // request in that state (docs/FS.md, Transports).
    let (lower, mnt, trace) = (d.join("lower2"), d.join("mnt2"), d.join("t2.ds"));
    let mut m = Mount::start(&lower, &mnt, &trace, &["--transport", "dev"]);
    // SAFETY: kill takes no pointers.
    unsafe { libc::kill(m.pid() as i32, libc::SIGSTOP) };
    let mut ls = Command::new("ls").arg(&mnt).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(ls.try_wait().unwrap().is_none(), "ls waits for the stopped daemon");
    let out = bin().args(["fs", "umount", "--force"]).arg(&mnt).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t0 = Instant::now();
    let st = loop {
        if let Some(st) = ls.try_wait().unwrap() {
            break st;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "ls still waits after --force");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!st.success());
    assert!(!mounted_by(&mnt, m.pid()));
    // SAFETY: as above.
    unsafe { libc::kill(m.pid() as i32, libc::SIGCONT) };
    let mut child = m.child.take().unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(10), "the daemon noticed the abort and exits");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(bin().arg("info").arg(&trace).output().unwrap().status.success());
    let _ = std::fs::remove_dir_all(&d);
}

/// chattr/lsattr reach the lower file (FS_IOC_GETFLAGS/SETFLAGS pass through); other ioctls
/// are refused, not faked.
#[test]
fn attribute_flag_ioctls_pass_through() {
    if !ra_testkit::can_mount_fuse() || !have_program("chattr") || !have_program("lsattr") {
        return;
    }
    let d = scratch_dir("fs-ioctl");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::write(lower.join("f"), b"x").unwrap();
    if !sh(&lower, "chattr +A f && chattr -A f").status.success() {
        eprintln!("skip: the lower file system has no attribute flags");
        assert!(!ra_testkit::require_testdata(), "chattr fails on {}", lower.display());
        return;
    }
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let out = sh(&mnt, "chattr +A f && lsattr f");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let seen = String::from_utf8_lossy(&out.stdout).into_owned();
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let native = sh(&lower, "lsattr f");
    let native = String::from_utf8_lossy(&native.stdout).into_owned();
    assert!(native.split_whitespace().next().unwrap().contains('A'), "{native}");
    assert_eq!(seen.split_whitespace().next(), native.split_whitespace().next());
    assert!(!jsonl(&trace, "op == ioctl && errno == 0").is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sealed_lz4_trace_of_the_mount_verifies_and_a_changed_byte_does_not() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-seal");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let key = keygen(&d.join("k"));
    let k = key.to_str().unwrap();
    let m = Mount::start(&lower, &mnt, &trace, &["--compress", "lz4", "--seal", k]);
    let out =
        sh(&mnt, "set -e; for i in $(seq 50); do seq 2000 > f$i.txt; done; cat f*.txt | wc -l");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let info = String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    assert!(info.contains("lz4/lz4") && info.contains("Reanimator::Seal"), "{info}");
    let (code, text) = verify(&trace, &key);
    assert_eq!(code, Some(0), "{text}");
    assert!(jsonl(&trace, "call == write").len() >= 50);
    // One byte changed in the middle of the file.
    let mut bytes = std::fs::read(&trace).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    std::fs::write(&trace, &bytes).unwrap();
    let (code, text) = verify(&trace, &key);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("TAMPERED: extent"), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A command run as nobody (uid and gid 65534, no supplementary groups) in `cwd`.
fn as_nobody(cwd: &Path, script: &str) -> Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", script])
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// `fs mount` that must be refused: exit status 2 and one line, within seconds. A mount that
/// came up instead is unmounted before the test fails.
fn refused(args: &[&std::ffi::OsStr]) -> String {
    let mut child = bin().args(["fs", "mount"]).args(args).stderr(Stdio::piped()).spawn().unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    if child.try_wait().unwrap().is_none() {
        // SAFETY: kill takes no pointers; the pid is our child's. SIGTERM unmounts.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    }
    let out = child.wait_with_output().unwrap();
    let msg = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.code() != Some(2) {
        let _ = bin().args(["fs", "umount"]).arg(args[1]).output();
        panic!("{args:?} was not refused ({}): {msg}", out.status);
    }
    assert_eq!(msg.trim_end().lines().count(), 1, "one line: {msg}");
    msg
}

/// Every file the daemon writes (trace, daemon log, profile, spill file) is refused beneath
/// LOWER — also through a symlink, or as a dangling symlink's target — and beneath the
/// mountpoint, before anything is created: no trace, no log, no profile left behind.
#[test]
fn outputs_beneath_the_lower_directory_are_refused_and_leave_nothing_behind() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-outputs");
    let (lower, mnt) = (d.join("lower"), d.join("mnt"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    std::os::unix::fs::symlink(&lower, d.join("via")).unwrap();
    std::os::unix::fs::symlink(lower.join("target.ds"), d.join("dangling.ds")).unwrap();
    let o = |p: &Path| p.as_os_str().to_owned();
    let (l, m) = (o(&lower), o(&mnt));
    let outside = o(&d.join("t.ds"));
    let cases: Vec<Vec<std::ffi::OsString>> = vec![
        vec![l.clone(), m.clone(), "-o".into(), o(&lower.join("t.ds"))],
        vec![l.clone(), m.clone(), "-o".into(), o(&lower.join("t.ds")), "--daemon".into()],
        vec![l.clone(), m.clone(), "-o".into(), o(&d.join("via/t.ds"))],
        vec![l.clone(), m.clone(), "-o".into(), o(&d.join("dangling.ds"))],
        vec![
            l.clone(),
            m.clone(),
            "-o".into(),
            outside.clone(),
            "--profile".into(),
            o(&lower.join("p.jsonl")),
        ],
        vec![
            l.clone(),
            m.clone(),
            "-o".into(),
            outside.clone(),
            "--daemon".into(),
            "--log".into(),
            o(&d.join("via/d.log")),
        ],
        vec![
            l.clone(),
            m.clone(),
            "-o".into(),
            "tcp://127.0.0.1:9".into(),
            "--spill".into(),
            o(&lower.join("s.ds")),
        ],
    ];
    for c in &cases {
        let args: Vec<&std::ffi::OsStr> = c.iter().map(|a| a.as_os_str()).collect();
        let msg = refused(&args);
        assert!(msg.contains("beneath the lower directory"), "{c:?}: {msg}");
        let left: Vec<_> = std::fs::read_dir(&lower).unwrap().collect();
        assert!(left.is_empty(), "{c:?} left {left:?}");
        assert!(!d.join("t.ds").exists() && !d.join("t.log").exists(), "{c:?}");
    }
    let msg = refused(&[&l, &m, "-o".as_ref(), mnt.join("t.ds").as_os_str()]);
    assert!(msg.contains("through the mount it traces"), "{msg}");
    let msg = refused(&[
        &l,
        &m,
        "-o".as_ref(),
        &outside,
        "--daemon".as_ref(),
        "--log".as_ref(),
        mnt.join("t.log").as_os_str(),
    ]);
    assert!(msg.contains("through the mount it traces"), "{msg}");
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["dangling.ds", "lower", "mnt", "via"], "nothing new in {}", d.display());
    let _ = std::fs::remove_dir_all(&d);
}

/// The daemon's own files pass through untraced however they are reached: a hard link of the
/// trace made in LOWER after the mount started, and a trace that lies in LOWER through a bind
/// mount of its directory. Reading either through the mount records nothing (without this,
/// each read was recorded into the trace it read, which grew without end).
#[test]
fn the_daemons_own_trace_read_through_the_mount_is_not_traced() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-own");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    assert!(sh(&mnt, "seq 100000 > data && cat data > /dev/null").status.success());
    std::thread::sleep(Duration::from_millis(1500)); // a flush: the trace has extents
    std::fs::hard_link(&trace, lower.join("link.ds")).unwrap();
    let before = std::fs::metadata(&trace).unwrap().len();
    // Read for 3 s (bounded: a traced read would never reach the end of a file growing as
    // it is read).
    let r = sh(
        &mnt,
        "end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do \
         timeout 5 cat link.ds > /dev/null || exit 1; done",
    );
    assert!(r.status.success(), "the trace reads through the mount: {r:?}");
    std::thread::sleep(Duration::from_millis(1200)); // a flush
    let grown = std::fs::metadata(&trace).unwrap().len() - before;
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    assert!(
        jsonl(&trace, "path ~ \"**/link.ds\"").is_empty(),
        "the trace's own reads are not in it"
    );
    assert!(grown < 1 << 20, "the trace grew by {grown} bytes while it was read");
    assert!(log.contains("passed through untraced"), "{log}");
    assert!(!jsonl(&trace, "op == read && path ~ \"**/data\"").is_empty());
    let info = String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    assert!(info.contains("fs_own_files_untraced"), "{info}");

    // A trace in another directory, bind-mounted into LOWER before the mount starts: its path
    // is not beneath LOWER, its inode is.
    let (lower, mnt, other) = (d.join("lower2"), d.join("mnt2"), d.join("other"));
    std::fs::create_dir_all(lower.join("bound")).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let bind =
        Command::new("mount").arg("--bind").arg(&other).arg(lower.join("bound")).output().unwrap();
    assert!(bind.status.success(), "{}", String::from_utf8_lossy(&bind.stderr));
    let trace = other.join("t.ds");
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    let r = sh(&mnt, "for i in 1 2 3; do timeout 5 cat bound/t.ds > /dev/null || exit 1; done");
    let (status, log) = m.finish();
    let _ = Command::new("umount").arg(lower.join("bound")).status();
    assert!(r.status.success(), "{r:?}");
    assert!(status.success(), "{log}");
    assert!(
        jsonl(&trace, "path ~ \"**/bound/t.ds\"").is_empty(),
        "not traced through the bind mount"
    );
    assert!(!jsonl(&trace, "op == lookup && path ~ \"**/bound\"").is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

/// A mount stacked on a live mount's directories is refused (LOWER is, contains or lies
/// beneath the other's LOWER or mountpoint; or the mountpoint is): before, the first mount
/// could then never finish. `fs umount` of a busy mount says what it waits for, gives up at
/// its timeout, and `--force` still finds the detached mount.
#[test]
fn stacked_mounts_are_refused_and_umount_never_waits_silently() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-stack");
    let (lower, mnt, trace) = (d.join("a/lower"), d.join("a/mnt"), d.join("a.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    std::fs::create_dir_all(lower.join("sub")).unwrap();
    let (other_lower, other_mnt) = (d.join("b/lower"), d.join("b/mnt"));
    std::fs::create_dir_all(&other_lower).unwrap();
    std::fs::create_dir_all(&other_mnt).unwrap();
    let b_trace = d.join("b.ds");
    let o = |p: &Path| p.as_os_str().to_owned();
    let cases: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
        (o(&lower), o(&other_mnt)),               // the same LOWER
        (o(&mnt), o(&other_mnt)),                 // LOWER is the other's mountpoint
        (o(&d.join("a")), o(&other_mnt)),         // LOWER contains both of the other's
        (o(&lower.join("sub")), o(&other_mnt)),   // LOWER beneath the other's
        (o(&other_lower), o(&lower.join("sub"))), // the mountpoint beneath the other's LOWER
    ];
    for (l, mp) in &cases {
        for daemon in [false, true] {
            let mut args: Vec<&std::ffi::OsStr> = vec![l, mp, "-o".as_ref(), b_trace.as_os_str()];
            if daemon {
                args.push("--daemon".as_ref());
            }
            let msg = refused(&args);
            assert!(msg.contains("must not stack on another's directories"), "{l:?} {mp:?}: {msg}");
            assert!(!b_trace.exists() && !d.join("b.log").exists(), "nothing left behind: {msg}");
        }
    }
    // A busy mount: the daemon detaches it and waits for its last user.
    let mut user = Command::new("sleep").arg("30").current_dir(&mnt).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    let out = bin().args(["fs", "umount", "--timeout", "7"]).arg(&mnt).output().unwrap();
    let msg = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{msg}");
    assert!(t0.elapsed() < Duration::from_secs(15), "{msg}");
    assert!(
        msg.contains("is busy") && msg.contains("waiting 5 s for the daemon"),
        "progress: {msg}"
    );
    assert!(msg.contains("did not finish within 7 s"), "{msg}");
    // Detached (no longer in the mount table), yet `--force` finds it and cuts it off.
    assert!(!mounted_by(&m.mnt, m.pid()));
    let out = bin().args(["fs", "umount", "--force"]).arg(&mnt).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = user.kill();
    let _ = user.wait();
    let (status, log) = m.wait();
    assert!(status.success(), "{log}");
    assert!(bin().arg("info").arg(&trace).output().unwrap().status.success());
    let _ = std::fs::remove_dir_all(&d);
}

/// The mount grants no access the lower file system would refuse, and refuses none it
/// grants: POSIX ACLs (a deny entry, a grant beyond the mode bits, one set through the mount,
/// default ACLs of new files) hold for a real other user as on the lower directory, and a
/// LOWER beneath a root-only directory is out of reach of other users through the mount
/// too, in both modes, until that directory opens.
#[test]
fn acls_and_the_lower_directorys_ancestors_hold_through_the_mount() {
    if !ra_testkit::can_mount_fuse()
        || !privileged(
            "ACL tests",
            ["setfacl", "getfacl", "setpriv"]
                .iter()
                .all(|p| have_program(p))
                .then_some(())
                .ok_or("needs setfacl, getfacl (package acl) and setpriv".to_string()),
        )
    {
        return;
    }
    let d = scratch_dir("fs-acl");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    std::fs::create_dir_all(lower.join("inherit")).unwrap();
    let setup = sh(
        &lower,
        "set -e; echo denied > denied; chmod 666 denied; setfacl -m u:nobody:--- denied
         echo granted > granted; chmod 600 granted; setfacl -m u:nobody:r-- granted
         echo later > later; chmod 644 later
         chmod 777 inherit; setfacl -d -m u::rwx,g::rwx,o::rwx inherit",
    );
    assert!(setup.status.success(), "{setup:?}");
    let probe = "cat denied; echo >> denied; cat granted; cat later; \
                 (umask 077; echo x > inherit/new.$$; stat -c %a inherit/new.$$)";
    let native = as_nobody(&lower, probe);
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let seen = as_nobody(&mnt, probe);
    let text = |o: &Output| {
        let t =
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        t.replace(lower.to_str().unwrap(), "").replace(mnt.to_str().unwrap(), "")
    };
    let native_text = text(&native);
    assert!(
        native_text.contains("denied: Permission denied") && native_text.contains("granted\n"),
        "{native_text}"
    );
    assert!(
        native_text.lines().any(|l| l == "666"),
        "a default ACL replaces the umask: {native_text}"
    );
    // Same answers (the file names differ by pid: compare the lines without them).
    let norm = |t: String| {
        t.lines().map(|l| l.split("new.").next().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert_eq!(norm(text(&seen)), norm(native_text), "through the mount vs natively");
    assert_eq!(std::fs::read_to_string(lower.join("denied")).unwrap(), "denied\n", "not written");
    // An ACL set through the mount is the lower file's and holds at once.
    let out = sh(&mnt, "setfacl -m u:nobody:--- later && getfacl -c later");
    assert!(out.status.success(), "{out:?}");
    let lower_acl = sh(&lower, "getfacl -c later");
    assert!(String::from_utf8_lossy(&lower_acl.stdout).contains("user:nobody:---"));
    let r = as_nobody(&mnt, "cat later");
    assert!(!r.status.success() && text(&r).contains("Permission denied"), "{r:?}");
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    assert!(
        !jsonl(&trace, "op == getxattr && errno == 0").is_empty(),
        "the kernel asked for the ACLs"
    );

    // A LOWER nobody could reach: beneath a root-only directory.
    let private = d.join("private");
    let lower = private.join("lower");
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::write(lower.join("secret"), "secret\n").unwrap();
    let chmod = |mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    chmod(0o700);
    let native = as_nobody(&d, "cat private/lower/secret");
    assert!(!native.status.success(), "nobody cannot reach it natively: {native:?}");
    for mode in [&[][..], &["--fast"][..]] {
        let mnt = d.join("mnt-private");
        let trace = d.join("p.ds");
        let m = Mount::start(&lower, &mnt, &trace, mode);
        for probe in
            ["cat mnt-private/secret", "ls mnt-private", "stat mnt-private", "cd mnt-private"]
        {
            let r = as_nobody(&d, probe);
            assert!(!r.status.success(), "{mode:?} {probe}: {r:?}");
            assert!(
                text(&r).contains("Permission denied") || text(&r).contains("can't cd"),
                "{mode:?} {probe}: {r:?}"
            );
        }
        assert!(sh(&d, "cat mnt-private/secret").status.success(), "root reaches it");
        // Opened to everybody: within the daemon's second, nobody reaches it too.
        chmod(0o711);
        let t0 = Instant::now();
        while !as_nobody(&d, "cat mnt-private/secret").status.success() {
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "{mode:?}: still refused after chmod 711"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        chmod(0o700);
        let t0 = Instant::now();
        while as_nobody(&d, "cat mnt-private/secret").status.success() {
            assert!(t0.elapsed() < Duration::from_secs(5), "{mode:?}: still open after chmod 700");
            std::thread::sleep(Duration::from_millis(100));
        }
        let (status, log) = m.finish();
        assert!(status.success(), "{log}");
        let refused = jsonl(&trace, "uid == 65534 && errno == 13");
        assert!(!refused.is_empty(), "refusals are in the trace");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `fs umount --json` says how the trace ended and what the daemon did, with the numbers of
/// its own summary line; the trace it names is there with the size it gives, and holds the
/// operations it says were recorded (issue 40 item 6).
#[test]
fn umount_json_gives_the_daemons_summary() {
    if !ra_testkit::can_mount_fuse() || !have_program("tar") {
        return;
    }
    let d = scratch_dir("fs-umount-json");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &["--filter", "op != getattr"]);
    let out = sh(&mnt, "set -e; mkdir src; for i in 1 2 3; do echo $i > src/f$i; done; tar cf a.tar src; tar tf a.tar >/dev/null");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let o = bin().args(["fs", "umount", "--json"]).arg(&m.mnt).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let pid = m.pid();
    let (status, log) = m.wait();
    assert!(status.success(), "{log}");
    assert_eq!(j["ended"], "finished", "{j:#}");
    assert_eq!(j["daemon"], pid, "{j:#}");
    let n = |k: &str| j[k].as_u64().unwrap_or_else(|| panic!("{k}: {j:#}"));
    assert!(n("recorded") > 0 && n("filtered_out") > 0, "{j:#}");
    assert_eq!(n("operations"), n("recorded") + n("filtered_out") + n("untraced"), "{j:#}");
    // The daemon's own line says the same.
    let line = format!("{} operations in", n("operations"));
    assert!(log.contains(&line), "{line} in {log}");
    assert!(
        log.contains(&format!("{} recorded, {} filtered out", n("recorded"), n("filtered_out"))),
        "{log}"
    );
    assert_eq!(j["trace"]["path"], trace.display().to_string(), "{j:#}");
    assert_eq!(j["trace"]["bytes"], std::fs::metadata(&trace).unwrap().len(), "{j:#}");
    let records = jsonl(&trace, "true").len() as u64;
    assert_eq!(records, n("recorded"), "{j:#}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `fs mount --print=FILE`: a line per operation recorded, as `reanimator dump` shows the
/// trace, in its order, while real programs (tar, sh) work on the mount; the file is private
/// (issue 40 item 5).
#[test]
fn print_shows_each_operation_as_dump_does() {
    if !ra_testkit::can_mount_fuse() || !have_program("tar") {
        return;
    }
    let d = scratch_dir("fs-print");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let live = d.join("live.txt");
    let print = format!("--print={}", live.display());
    let m = Mount::start(&lower, &mnt, &trace, &[print.as_str()]);
    let out = sh(&mnt, "set -e; mkdir src; for i in 1 2 3 4 5; do head -c 5000 /dev/zero > src/f$i; done; tar cf a.tar src; mv a.tar b.tar; tar tf b.tar >/dev/null");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&live).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let printed = std::fs::read_to_string(&live).unwrap();
    let dumped = dump(&trace, &[]);
    assert!(printed.lines().count() > 20, "{printed}");
    assert_eq!(printed, dumped, "the live lines are the dump's");
    assert!(printed.lines().any(|l| l.contains("rename(")), "{printed}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `--transport uring`: every request but FORGET and INTERRUPT served over FUSE-over-io_uring
/// (the kernel's enable_uring turned on as root), the files' bytes checked, writes of
/// 1 MiB (the negotiated max_write, the ring entries' payload) whole, and the header saying
/// which transport ran and how many requests it carried.
#[test]
fn the_io_uring_transport_serves_every_request() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    if !Path::new("/sys/module/fuse/parameters/enable_uring").exists() {
        ra_testkit::privileged(
            "the io_uring transport",
            Err("no FUSE-over-io_uring (Linux 6.14+, CONFIG_FUSE_IO_URING)".into()),
        );
        return;
    }
    let d = scratch_dir("fs-uring");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let script = "set -e; mkdir -p a/b; head -c 3000000 /dev/urandom > a/b/f; \
        dd if=a/b/f of=a/g bs=1M status=none; mv a/g a/h; ln -s h a/l; cat a/l > a/copy; \
        cmp a/copy a/b/f; ls -lR . > /dev/null; rm a/copy; stat -c %s a/h";
    for transport in ["uring", "dev"] {
        let _ = std::fs::remove_file(&trace);
        let m = Mount::start(&lower, &mnt, &trace, &["--transport", transport]);
        let out = sh(&mnt, script);
        assert!(out.status.success(), "{transport}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "3000000", "{transport}");
        let (status, log) = m.finish();
        assert!(status.success(), "{log}");
        let info =
            String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
        let fact = |k: &str| {
            info.lines()
                .find_map(|l| l.trim().strip_prefix(k).map(|v| v.trim().to_string()))
                .unwrap_or_default()
        };
        let recorded = jsonl(&trace, "true").len() as u64;
        if transport == "uring" {
            assert!(fact("fs_transport").starts_with("io_uring: "), "{info}");
            let served: u64 = fact("fs_uring_requests").parse().unwrap_or(0);
            assert!(
                served >= recorded && recorded > 20,
                "{served} over io_uring, {recorded} in the trace"
            );
            // dd's 1 MiB writes reached the daemon whole over the rings (max_write, max_pages
            // and the entries' payload agree).
            let largest = jsonl(&trace, "op == write")
                .iter()
                .filter_map(|r| r["return_value"].as_i64())
                .max()
                .unwrap_or(0);
            assert_eq!(largest, 1 << 20, "the largest write request");
        } else {
            assert!(fact("fs_transport").starts_with("/dev/fuse"), "{info}");
            assert!(fact("fs_uring_requests").is_empty(), "{info}");
        }
        std::fs::remove_dir_all(&lower).unwrap();
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `fs ctl MNT ARGS...`: exit code, stdout, stderr.
fn ctl(mnt: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin().args(["fs", "ctl"]).arg(mnt).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `fs ctl MNT stats --json` once its counters stand still (the kernel sends some requests,
/// such as a closed file's release, after the program that caused them is done).
fn settled_stats(mnt: &Path) -> serde_json::Value {
    let mut last = ctl_stats(mnt);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let s = ctl_stats(mnt);
        if s["operations"] == last["operations"] {
            return s;
        }
        last = s;
    }
}

/// `fs ctl MNT stats --json`.
fn ctl_stats(mnt: &Path) -> serde_json::Value {
    let (code, out, err) = ctl(mnt, &["stats", "--json"]);
    assert_eq!(code, Some(0), "fs ctl stats: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn ctl_pauses_resumes_and_changes_filter_and_data_of_a_live_mount() {
    if !ra_testkit::can_mount_fuse() || !have_program("sqlite3") || !have_program("tar") {
        return;
    }
    let d = scratch_dir("fs-ctl");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let tarball = source_tarball(&d);
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let run = |script: &str| {
        let out = sh(&mnt, script);
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run("sqlite3 a.db 'create table t(x); insert into t values(1);'");
    settled_stats(&mnt);
    // Paused: the whole tar extraction passes through and is counted, not recorded.
    let (code, _, err) = ctl(&mnt, &["pause"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("tracing paused at "), "{err}");
    let s0 = settled_stats(&mnt);
    assert_eq!(s0["paused"], true, "{s0}");
    run(&format!("tar xf {}", tarball.display()));
    let s1 = settled_stats(&mnt);
    let during = s1["paused_out"].as_u64().unwrap() - s0["paused_out"].as_u64().unwrap();
    assert!(during > 1000, "a tar extraction is thousands of operations: {s1}");
    assert_eq!(s1["recorded"], s0["recorded"], "nothing recorded while paused: {s1}");
    // Every operation of the pause, the extraction's and any before it.
    let paused = s1["paused_out"].as_u64().unwrap();
    let (code, _, err) = ctl(&mnt, &["resume"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains(&format!("{paused} operations served while paused")), "{err}");
    assert!(lower.join("linux/types.h").exists(), "the paused work passed through");
    // A new filter takes effect at once: only writes from here on.
    let (code, _, err) = ctl(&mnt, &["filter", "op == write"]);
    assert_eq!(code, Some(0), "{err}");
    run("sqlite3 b.db 'create table t(x); insert into t values(2);'; cat linux/types.h >/dev/null");
    // Digests instead of bytes from here on, every operation again.
    ctl(&mnt, &["filter", "none"]);
    let (code, _, err) = ctl(&mnt, &["data", "hash"]);
    assert_eq!(code, Some(0), "{err}");
    run("printf 'hashed-payload' > h.txt");
    let (code, _, err) = ctl(&mnt, &["flush"]);
    assert_eq!(code, Some(0), "{err}");
    let stats = ctl_stats(&mnt);
    assert_eq!(stats["data"], "hash", "{stats}");
    assert_eq!(stats["filter"], "none", "{stats}");
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");

    let all = jsonl(&trace, "true");
    let ctls: Vec<(usize, String)> = all
        .iter()
        .enumerate()
        .filter(|(_, r)| r["call"] == "ctl")
        .map(|(i, r)| (i, r["extra"]["data"].as_str().unwrap_or_default().to_string()))
        .collect();
    let what: Vec<&str> = ctls.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(what, ["pause", "resume", "filter op == write", "filter none", "data hash"]);
    // The pause is a gap: no operation between its records, and the resume says how many.
    let (pause, resume) = (ctls[0].0, ctls[1].0);
    assert_eq!(resume, pause + 1, "operations recorded while paused");
    assert_eq!(all[resume]["return_value"], paused, "{}", all[resume]);
    assert!(
        !all.iter().any(|r| r["extra"]["pathname"]
            .as_str()
            .is_some_and(|p| p.contains("/linux/") && r["call"] == "create")),
        "the paused extraction's creates are not in the trace"
    );
    // The filter held from its record to the next ctl record.
    let filtered = &all[ctls[2].0 + 1..ctls[3].0];
    assert!(filtered
        .iter()
        .any(|r| r["extra"]["pathname"].as_str().is_some_and(|p| p.ends_with("/b.db"))));
    for r in filtered {
        assert_eq!(r["call"], "write", "only writes while the filter held: {r}");
    }
    // Before the filter: everything (sqlite3 reads, lookups, ...).
    assert!(all[..pause].iter().any(|r| r["call"] != "write" && r["call"] != "ctl"));
    // After `data hash`: digests.
    let h = jsonl(&trace, "op == write && path ~ \"**/h.txt\"");
    assert_eq!(h.len(), 1, "{h:?}");
    let e = &h[0]["extra"];
    assert!(e.get("data").is_none(), "{e}");
    assert_eq!(
        e["data_blake3"]["hex"].as_str().unwrap_or_default(),
        blake3::hash(b"hashed-payload").to_hex().as_str()
    );
    let a = jsonl(&trace, "op == write && path ~ \"**/a.db\"");
    assert!(a.iter().all(|r| r["extra"].get("data").is_some()), "full data before the change");
    // The gap is a Lost row of exactly the operations served while paused.
    let r = ra_trace::TraceReader::open(&trace).unwrap();
    let lost = r.lost();
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].count as u64, paused);
    assert!(lost[0].reason.contains("paused"), "{lost:?}");
    let info = String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    assert!(info.contains("paused"), "info reports the gap: {info}");
    // Replay says what it cannot replay.
    let root = d.join("replay");
    let out =
        bin().arg("replay").arg(&trace).arg("--root").arg(&root).arg("--init").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("lacks {paused} operations")) && err.contains("paused"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn ctl_refuses_other_users_other_mounts_and_bad_commands_in_one_line() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-ctl-refused");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let m = Mount::start(&lower, &mnt, &trace, &[]);
    let refused = |code: Option<i32>, err: &str, want: &str| {
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.contains(want), "{want}: {err}");
    };
    // Not ours: a directory, another file system, a path that does not exist.
    let (code, _, err) = ctl(&d, &["stats"]);
    refused(code, &err, "is not a reanimator fs mount");
    let (code, _, err) = ctl(Path::new("/proc"), &["stats"]);
    refused(code, &err, "is not a reanimator fs mount (proc");
    let (code, _, err) = ctl(&d.join("nowhere"), &["stats"]);
    refused(code, &err, "No such file");
    // Another user: cannot reach the socket. With the capability to reach it but another
    // effective uid (SO_PEERCRED says 65534): refused by the daemon.
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_reanimator"))
        .args(["fs", "ctl"])
        .arg(&mnt)
        .arg("pause")
        .output()
        .unwrap();
    refused(out.status.code(), &String::from_utf8_lossy(&out.stderr), "permission denied");
    let out = Command::new("setpriv")
        .args([
            "--securebits=+no_setuid_fixup",
            "--euid=65534",
            "--inh-caps=+dac_override",
            "--ambient-caps=+dac_override",
        ])
        .arg(env!("CARGO_BIN_EXE_reanimator"))
        .args(["fs", "ctl"])
        .arg(&mnt)
        .arg("pause")
        .output()
        .unwrap();
    refused(
        out.status.code(),
        &String::from_utf8_lossy(&out.stderr),
        "uid 65534 may not control this mount",
    );
    // Bad commands.
    let (code, _, err) = ctl(&mnt, &["sleep"]);
    refused(code, &err, "unknown command `sleep`; commands: pause, resume");
    let (code, _, err) = ctl(&mnt, &["data", "most"]);
    refused(code, &err, "`most` is neither a level");
    let (code, _, err) = ctl(&mnt, &["filter", "pathh ~ x"]);
    refused(code, &err, "did you mean `path`");
    let (code, _, err) = ctl(&mnt, &["pause", "now"]);
    refused(code, &err, "takes no argument");
    let long = "x".repeat(5000);
    let (code, _, err) = ctl(&mnt, &["filter", &long]);
    refused(code, &err, "longer than 4096 bytes");
    // None of that changed anything.
    let s = ctl_stats(&mnt);
    assert_eq!(s["paused"], false, "{s}");
    let (status, log) = m.finish();
    assert!(status.success(), "{log}");
    assert!(jsonl(&trace, "op == ctl").is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sync_keeps_every_answered_operation_of_a_killed_daemon() {
    if !ra_testkit::can_mount_fuse() || !have_program("sqlite3") {
        return;
    }
    let d = scratch_dir("fs-sync");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    let mut m = Mount::start(&lower, &mnt, &trace, &["--sync"]);
    // Real programs, then SIGKILL at once: no flush, no finish, no unmount by the daemon.
    let out = sh(
        &mnt,
        "set -e; for i in $(seq 1 100); do echo $i > f$i; done; \
         sqlite3 t.db 'create table t(x);' \"$(for i in $(seq 1 50); do echo \"insert into t values($i);\"; done)\"",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // SAFETY: kill takes no pointers.
    unsafe { libc::kill(m.pid() as i32, libc::SIGKILL) };
    let _ = m.child.as_mut().unwrap().wait();
    let out = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    m.child = None;
    // Every file the loop made, and every write it was answered, is in the trace.
    let creates = jsonl(&trace, "op == create && path ~ \"**/f*\"");
    let writes = jsonl(&trace, "op == write && path ~ \"**/f*\"");
    assert_eq!(creates.len(), 100, "{creates:?}");
    assert_eq!(writes.len(), 100);
    // sqlite3's last write (its commit) was answered before it exited: in the trace too, with
    // the bytes the database holds at that offset.
    let db = std::fs::read(lower.join("t.db")).unwrap();
    let w = jsonl(&trace, "op == write && path ~ \"**/t.db\"");
    let last = w.last().expect("sqlite3's writes");
    let off = last["extra"]["offset"].as_u64().unwrap() as usize;
    let hex = last["extra"]["data"]["hex"].as_str().expect("binary data as hex");
    let bytes = ra_hex::decode(hex).expect("hex digits");
    assert!(!bytes.is_empty() && off + bytes.len() <= db.len(), "{last}");
    assert_eq!(&db[off..off + bytes.len()], &bytes[..], "the database holds what the trace says");
    let info = String::from_utf8(bin().arg("info").arg(&trace).output().unwrap().stdout).unwrap();
    assert!(info.contains("fdatasync"), "the header says --sync: {info}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The `fuse_unique` numbers of a trace's records that `--where` passes: which operations
/// they are, whatever data each keeps.
fn uniques(trace: &Path, filter: &str) -> Vec<u64> {
    let mut v: Vec<u64> = dump(trace, &["--where", filter])
        .lines()
        .filter_map(|l| l.split("fuse_unique=").nth(1))
        .map(|r| r.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap())
        .collect();
    v.sort_unstable();
    v
}

/// Several tracers on one mount (`--tracer`): each sees exactly its filter's subset of what an
/// unfiltered tracer sees, keeps its own data mode, an aggregate tracer counts beside them,
/// `fs ctl --tracer` changes one, and `fs umount --json` lists each.
#[test]
fn several_tracers_each_record_their_own_subset_and_data() {
    if !ra_testkit::can_mount_fuse() || !have_program("sqlite3") || !have_program("tar") {
        return;
    }
    let d = scratch_dir("fs-tracers");
    let (lower, mnt) = (d.join("lower"), d.join("mnt"));
    let (all, w, r, agg) = (d.join("all.ds"), d.join("w.ds"), d.join("r.ds"), d.join("agg.ds"));
    let tarball = source_tarball(&d);
    let wf = "op in {write, unlink, create}";
    let rf = "op == read && path ~ \"**/*.h\"";
    let m = Mount::start(
        &lower,
        &mnt,
        &all,
        &[
            "--data",
            "none",
            "--tracer",
            &format!("name=w,out={},filter='{wf}',data=hash", w.display()),
            "--tracer",
            &format!("out={},filter='{rf}',data=full", r.display()),
            "--tracer",
            &format!("name=agg,out={},driver=aggregate:0.2", agg.display()),
        ],
    );
    let run = |script: &str| {
        let out = sh(&mnt, script);
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run(&format!(
        "tar xf {} && cat linux/*.h >/dev/null && sqlite3 a.db 'create table t(x); insert into \
         t values(1);' && rm a.db",
        tarball.display()
    ));
    let s = settled_stats(&mnt);
    assert_eq!(s["tracers"], 4, "{s}");
    assert_eq!(s["tracer.2.name"], "w", "{s}");
    assert_eq!(s["tracer.3.filter"], rf, "{s}");
    // One tracer addressed: its data mode changes, the others' not.
    let (code, _, err) = ctl(&mnt, &["--tracer", "3", "data", "hash"]);
    assert_eq!(code, Some(0), "{err}");
    let s = ctl_stats(&mnt);
    assert_eq!((&s["tracer.1.data"], &s["tracer.3.data"]), (&"none".into(), &"hash".into()));
    let (code, out, err) = ctl(&mnt, &["--tracer", "w", "stats", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let one: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((&one["name"], &one["filter"]), (&"w".into(), &wf.into()), "{one}");
    assert!(one.get("tracer.1.name").is_none(), "one tracer addressed: {one}");
    let out = bin().args(["fs", "umount", "--json"]).arg(&m.mnt).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = String::from_utf8(out.stdout).unwrap();
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ts = j["tracers"].as_array().unwrap_or_else(|| panic!("{j}"));
    assert_eq!(ts.len(), 4, "{j}");
    m.wait();
    // Exactly the subsets the unfiltered tracer's records give offline.
    let wu = uniques(&w, wf);
    assert!(wu.len() > 100, "a tar extraction writes hundreds of files: {}", wu.len());
    assert_eq!(wu, uniques(&all, wf), "w.ds holds the writes all.ds holds");
    assert_eq!(uniques(&w, "op != ctl").len(), wu.len(), "and nothing else");
    let ru = uniques(&r, rf);
    assert!(!ru.is_empty(), "cat read headers");
    assert_eq!(ru, uniques(&all, rf));
    assert_eq!(ts[1]["recorded"], wu.len() as u64, "{j}");
    // Each its data mode: none keeps lengths, hash digests, full the bytes until the ctl.
    let wd = dump(&w, &["--where", "op == write"]);
    assert!(wd.contains("data_blake3=") && !wd.contains("data=\""), "{}", &wd[..500]);
    let ad = dump(&all, &["--where", "op == write"]);
    assert!(!ad.contains("data_blake3=") && !ad.contains("data=\""), "{}", &ad[..500]);
    let rd = dump(&r, &["--where", "op == read"]);
    assert!(rd.contains("data=\""), "full before the ctl: {}", &rd[..500]);
    assert!(dump(&r, &["--where", "op == ctl"]).contains("data hash"));
    // The aggregate tracer: rows, no records, counting every operation.
    let info = common::ok(bin().arg("info").arg(&agg).output().unwrap(), "info");
    assert!(info.contains("every 0.2 s"), "{info}");
    assert_eq!(uniques(&agg, "op != ctl").len(), 0);
    let ds = dataseries::DsReader::open(&agg).unwrap();
    let mut counted = 0;
    for h in ds.headers() {
        let h = h.unwrap();
        assert_ne!(h.type_name, "Reanimator::FsOp", "an aggregate tracer writes no records");
        if h.type_name == "Reanimator::FsAggregate" {
            let e = ds.read_extent_of(h.offset, &h.type_name).unwrap();
            counted += (0..e.len()).map(|r| e.i64(r, 4).unwrap()).sum::<i64>();
        }
    }
    assert_eq!(counted as u64, ts[3]["operations"].as_u64().unwrap(), "{j}");
    for t in [&all, &w, &r, &agg] {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(t).unwrap().permissions().mode() & 0o777, 0o600);
        common::ok(bin().arg("info").arg(t).output().unwrap(), "info");
    }
}

/// Bad tracer configurations: one line, exit 2, nothing mounted.
#[test]
fn bad_tracers_are_refused_in_one_line() {
    if !ra_testkit::can_mount_fuse() {
        return;
    }
    let d = scratch_dir("fs-tracers-bad");
    let (lower, mnt, t) = (d.join("lower"), d.join("mnt"), d.join("t.ds"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    for (spec, want) in [
        (format!("out={}", t.display()), "each needs a trace file of its own"),
        (format!("out={},colour=red", d.join("x.ds").display()), "unknown key `colour`"),
        (format!("out={},data=most", d.join("x.ds").display()), "`most` is neither a level"),
        ("name=x".to_string(), "no `out=FILE`"),
    ] {
        let args: Vec<&std::ffi::OsStr> = vec![
            lower.as_os_str(),
            mnt.as_os_str(),
            "-o".as_ref(),
            t.as_os_str(),
            "--tracer".as_ref(),
            spec.as_ref(),
        ];
        let msg = refused(&args);
        assert!(msg.contains(want), "{want}: {msg}");
        assert!(!t.exists() && !d.join("x.ds").exists(), "nothing left behind");
    }
    let m = Mount::start(&lower, &mnt, &t, &[]);
    let (code, _, err) = ctl(&mnt, &["--tracer", "9", "pause"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no tracer `9`"), "{err}");
    m.finish();
}
