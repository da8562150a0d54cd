//! The live profiler against real programs (root: eBPF). Counts are checked exactly where the
//! program's own behaviour fixes them (dd's reads and writes), and every histogram checks
//! itself (buckets add up to the count, the total lies within the buckets' bounds).

use std::collections::BTreeMap;
use std::time::Duration;

use ra_capture::ebpf::profile::{run, By, LiveEvent, LiveOptions, LiveTarget};
use ra_profile::{Hist, Interval, Key, Meta};

fn root() -> Result<(), String> {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        Ok(())
    } else {
        Err("needs root (eBPF)".into())
    }
}

fn profile(argv: &[&str], by: By, layers: &[&str]) -> (Meta, Vec<Interval>) {
    let opts = LiveOptions {
        target: LiveTarget::Command(argv.iter().map(Into::into).collect()),
        by,
        layers: layers.iter().map(|s| s.to_string()).collect(),
        interval: Duration::from_millis(200),
        duration: None,
        calibrate: false,
        map_bytes: 16 << 20,
        sample: 1,
        value: None,
    };
    let mut meta = None;
    let mut ivs = Vec::new();
    let outcome = run(&opts, |e| {
        match e {
            LiveEvent::Meta(m) => meta = Some(m.clone()),
            LiveEvent::Interval(iv) => ivs.push(iv.clone()),
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.reason);
    assert_eq!(outcome.map_full, 0);
    (meta.unwrap(), ivs)
}

fn totals(ivs: &[Interval]) -> BTreeMap<Key, Hist> {
    let mut t: BTreeMap<Key, Hist> = BTreeMap::new();
    for iv in ivs {
        for (k, h) in &iv.hists {
            assert!(h.check().ok, "{k:?}: {:?}", h.check());
            t.entry(k.clone()).or_default().merge(h);
        }
    }
    t
}

fn find<'a>(t: &'a BTreeMap<Key, Hist>, layer: &str, op: &str) -> Vec<(&'a Key, &'a Hist)> {
    t.iter().filter(|(k, _)| k.layer == layer && k.op == op).collect()
}

#[test]
fn dd_calls_are_counted_exactly_in_the_kernel() {
    if !ra_testkit::privileged("live profiling", root()) {
        return;
    }
    let dir = ra_testkit::scratch_dir("profile-dd");
    let out = dir.join("out");
    let of = format!("of={}", out.display());
    let (meta, ivs) = profile(
        &["dd", "if=/dev/zero", &of, "bs=4096", "count=3000", "conv=fsync", "status=none"],
        By::Call,
        &["syscall", "block", "ext4", "cache"],
    );
    let o = meta.overhead.clone().expect("calibration ran");
    assert!(o.clock_read_ns < 10_000 && o.floor_ns > 0, "{o:?}");
    assert!(ivs.last().unwrap().partial);
    for w in ivs.windows(2) {
        assert_eq!(w[0].end_ns, w[1].start_ns, "intervals are contiguous");
    }
    let t = totals(&ivs);
    let reads: u64 = find(&t, "syscall", "read").iter().map(|(_, h)| h.count).sum();
    let writes: u64 = find(&t, "syscall", "write").iter().map(|(_, h)| h.count).sum();
    // dd reads its 3,000 blocks (plus the loader's reads of libraries) and writes exactly
    // 3,000 blocks (status=none: no report on stderr).
    assert!(reads >= 3000, "reads {reads}");
    assert_eq!(writes, 3000);
    assert_eq!(find(&t, "syscall", "fsync").iter().map(|(_, h)| h.count).sum::<u64>(), 1);
    // conv=fsync on ext4 (/tmp or /var/tmp here) goes through ext4_sync_file and the disk.
    let fs_type =
        std::process::Command::new("stat").args(["-f", "-c", "%T"]).arg(&dir).output().unwrap();
    if String::from_utf8_lossy(&fs_type.stdout).trim() == "ext2/ext3" {
        assert!(!find(&t, "ext4", "sync_file").is_empty(), "{:?}", t.keys());
        assert!(t.keys().any(|k| k.layer == "block" && k.op == "write"), "{:?}", t.keys());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn by_fs_names_the_file_system_of_each_descriptor() {
    if !ra_testkit::privileged("live profiling", root()) {
        return;
    }
    let (_, ivs) = profile(
        &[
            "sh",
            "-c",
            "head -c 100000 /proc/self/status > /dev/null; cat /etc/hostname > /dev/null",
        ],
        By::Fs,
        &["syscall"],
    );
    let t = totals(&ivs);
    let groups: Vec<&str> = t.keys().filter(|k| k.op == "read").map(|k| k.group.as_str()).collect();
    assert!(groups.iter().any(|g| g.starts_with("proc ")), "{groups:?}");
}

#[test]
fn by_path_groups_calls_under_their_directory() {
    if !ra_testkit::privileged("live profiling", root()) {
        return;
    }
    let dir = ra_testkit::scratch_dir("profile-path");
    let (a, b) = (dir.join("a/deep/er"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let script = format!(
        "for i in 1 2 3 4 5; do echo x > {a}/f$i; done; for i in 1 2 3; do echo y > {b}/g$i; done",
        a = a.display(),
        b = b.display()
    );
    // Depth: the scratch directory's own depth below its file system's mount point, plus one.
    let mnt = std::process::Command::new("stat").args(["-c", "%m"]).arg(&dir).output().unwrap();
    let mnt = std::path::PathBuf::from(String::from_utf8_lossy(&mnt.stdout).trim());
    let depth = dir.strip_prefix(&mnt).unwrap().components().count() as u32 + 1;
    let (_, ivs) = profile(&["sh", "-c", &script], By::Path(depth), &["syscall"]);
    let t = totals(&ivs);
    let writes = |p: &std::path::Path| -> u64 {
        let want = format!("path={}", p.display());
        t.iter().filter(|(k, _)| k.op == "write" && k.group == want).map(|(_, h)| h.count).sum()
    };
    let groups: Vec<&Key> = t.keys().filter(|k| k.op == "write").collect();
    assert_eq!(writes(&dir.join("a")), 5, "{groups:?}");
    assert_eq!(writes(&b), 3, "{groups:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
