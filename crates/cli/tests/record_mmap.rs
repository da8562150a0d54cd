//! I/O through memory mappings, and names the kernel never read: what each recorder captures
//! (docs/EBPF.md, "mmap I/O"), and that the traces replay.
//!
//! - Writes through a shared mapping to pages of a large folio: one fault maps the whole folio
//!   writable (Linux 6.18), the other pages take no fault of their own. Every written page has
//!   an `mmappwrite` record with the file's final content, nothing is lost uncounted, and the
//!   replay leaves the files as the program did (`mmapfolio`; issue 39, item 14).
//! - Reads through a `MAP_SHARED` mapping of a file opened read-only (the kernel keeps
//!   `VM_MAYSHARE` and clears `VM_SHARED`): one `mmappread` per page, with its bytes; reads
//!   through private mappings only with `record --mmap-private`, never of program images
//!   (`mmapread`, git's pack files; item 15).
//! - A `memfd_create` name in a page nothing had touched, in a call the kernel refused before
//!   reading it: captured by both recorders; a name that was not captured is never replayed
//!   (`memfdname`; item 10).
//!
//! The ptrace recorder cannot see loads and stores to mapped memory: its traces have no page
//! records, and its replays report the mapped files' content as the one difference.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use ra_testkit::{backend, both_backends};
use ra_trace::{ArgValue, Event, TraceReader};
use serde_json::Value;

use common::bin;

both_backends!(
    writes_to_the_pages_of_a_large_folio_are_all_recorded,
    writes_after_an_msync_that_leaves_pages_writable_are_recorded,
    the_kernel_s_writes_through_a_shared_mapping_are_recorded,
    reads_through_a_shared_mapping_of_a_read_only_file_are_recorded,
    a_memfd_name_the_kernel_never_read_is_captured,
);

/// One recording in its own directory (`work/` is the command's cwd and snapshot).
struct Case {
    base: PathBuf,
    work: PathBuf,
    trace: PathBuf,
}

/// What a replay gave.
struct Replayed {
    code: Option<i32>,
    report: Value,
    stderr: String,
    root: PathBuf,
}

impl Replayed {
    fn mismatches(&self) -> u64 {
        self.report["mismatch_total"].as_u64().unwrap_or(u64::MAX)
    }
    fn final_diffs(&self) -> Vec<String> {
        let fs = self.report["final_state"].as_array().cloned().unwrap_or_default();
        fs.iter()
            .flat_map(|f| f["first"].as_array().cloned().unwrap_or_default())
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect()
    }
    fn warnings(&self) -> Vec<String> {
        self.report["warnings"].as_object().map_or_else(Vec::new, |m| m.keys().cloned().collect())
    }
    /// The unique ids of the calls that mismatched.
    fn mismatched(&self) -> Vec<i64> {
        let m = self.report["mismatches"].as_array().cloned().unwrap_or_default();
        m.iter().filter_map(|m| m["unique_id"].as_i64()).collect()
    }
    /// Every mismatch is a page record of a file outside the snapshot (`/etc/ld.so.cache`,
    /// locale files): their content is not in the replay's initial state until `--init` takes
    /// it from page records (issue 39, item 13). None is a record of `of`.
    fn only_outside_pages_mismatched(&self, ev: &[Event], of: &[&Path]) {
        let inodes: Vec<i64> =
            of.iter().map(|p| std::fs::metadata(p).unwrap().ino() as i64).collect();
        for id in self.mismatched() {
            let e = ev.iter().find(|e| e.unique_id as i64 == id);
            let e =
                e.unwrap_or_else(|| panic!("mismatch #{id} is no page record: {}", self.show()));
            assert!(!inodes.contains(&int(e, "inode")), "#{id} mismatched: {}", self.show());
        }
    }
    fn calls(&self, name: &str, what: &str) -> u64 {
        self.report["per_call"][name][what].as_u64().unwrap_or(0)
    }
    fn show(&self) -> String {
        format!(
            "exit {:?}\n{}\nstderr: {}",
            self.code,
            serde_json::to_string_pretty(&self.report).unwrap_or_default(),
            self.stderr
        )
    }
}

impl Case {
    fn new(name: &str) -> Case {
        let base = ra_testkit::case_dir("mmap", name);
        Case { work: base.join("work"), trace: base.join("t.ds"), base }
    }

    /// Record `cmd` (run in `work/`) with this test's backend, `extra` record options and a
    /// snapshot of `work/` (`snapshot`); returns what the command printed on stdout.
    fn record(&self, extra: &[&str], snapshot: bool, cmd: &[&std::ffi::OsStr]) -> String {
        let mut c = bin();
        c.args(["record", "-q", "--backend", backend(), "-o"]).arg(&self.trace).args(extra);
        if snapshot {
            c.arg("--snapshot").arg(&self.work);
        }
        let o = c.arg("--").args(cmd).current_dir(&self.work).stdin(Stdio::null()).output();
        let o = o.unwrap();
        assert!(o.status.success(), "record {cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    }

    fn events(&self, names: &[&str]) -> Vec<Event> {
        let r = TraceReader::open(&self.trace).unwrap();
        let v: Vec<Event> = r.events(Some(names)).map(|e| e.unwrap()).collect();
        v
    }

    /// `replay --init` into a fresh root (with `extra`), killed (and the test failed) after a
    /// minute.
    fn replay(&self, extra: &[&str]) -> Replayed {
        let root = self.base.join("root");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let report = self.base.join("report.json");
        let _ = std::fs::remove_file(&report);
        let child = bin()
            .arg("replay")
            .arg(&self.trace)
            .arg("--root")
            .arg(&root)
            .args(["--init", "-q", "--report"])
            .arg(&report)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_output(child, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        let code = o.status.code();
        let report = std::fs::read(&report)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_else(|| panic!("no replay report (exit {code:?}): {stderr}"));
        Replayed { code, report, stderr, root }
    }

    /// A file of the work directory inside a replay root.
    fn in_root(&self, r: &Replayed, rel: &str) -> PathBuf {
        r.root.join(self.work.strip_prefix("/").unwrap()).join(rel)
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for inspection", self.base.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.base);
        }
    }
}

/// The child's output, or a panic (after killing it) when it runs longer than `limit`.
fn wait_output(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let t0 = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn int(e: &Event, name: &str) -> i64 {
    e.arg(name).and_then(ArgValue::as_int).unwrap_or_else(|| panic!("{name} of #{}", e.unique_id))
}

fn data(e: &Event) -> &[u8] {
    e.arg("buf").and_then(ArgValue::as_data).unwrap_or_else(|| panic!("data of #{}", e.unique_id))
}

/// The page records of `name` for the file `path` (by inode), by page number; a page recorded
/// twice fails.
fn pages_of(events: &[Event], name: &str, path: &Path) -> std::collections::BTreeMap<i64, Vec<u8>> {
    let ino = std::fs::metadata(path).unwrap().ino() as i64;
    let mut m = std::collections::BTreeMap::new();
    for e in events.iter().filter(|e| e.name == name && int(e, "inode") == ino) {
        let page = int(e, "offset") / 4096;
        assert!(!e.buffer_not_captured, "{name} of page {page} not captured (#{})", e.unique_id);
        let dup = m.insert(page, data(e).to_vec());
        assert!(dup.is_none(), "{name} of page {page} of {} recorded twice", path.display());
    }
    m
}

fn json_pages(j: &Value, key: &str) -> Vec<i64> {
    j[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {j}"))
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

/// mmapfolio fills 67 pages of a 256-page file written with write(2) (its page cache in large
/// folios), through a mapping at a 2 MiB boundary, and 65 pages of a sparse 64 MiB file
/// through a mapping grown by mremap (the mremap_grow reproducer). With one fault mapping a
/// whole folio, most fills take no fault: before the fix, the eBPF trace had one
/// `mmappwrite` for a.dat (of 67 pages written) and `Lost 0`.
fn writes_to_the_pages_of_a_large_folio_are_all_recorded() {
    let c = Case::new("folio");
    let p = ra_testkit::program("mmapfolio");
    let out = c.record(&[], true, &[p.as_os_str(), c.work.as_os_str()]);
    let j: Value = serde_json::from_str(&out).expect("mmapfolio prints JSON");
    let (a_pages, b_pages) = (json_pages(&j, "a_pages"), json_pages(&j, "b_pages"));
    // The kernel mapped neighbours with a fault: what this test is about.
    let a_faults = j["a_faults"].as_i64().unwrap();
    assert!(
        a_faults < a_pages.len() as i64 / 2,
        "{a_faults} faults for {} pages: this kernel maps no large folio at a fault \
         (Linux 6.18 on ext4 does)",
        a_pages.len()
    );
    let ev = c.events(&["mmappwrite", "mmappread"]);
    let r = TraceReader::open(&c.trace).unwrap();
    if backend() == "ptrace" {
        assert!(ev.is_empty(), "ptrace records no page: {} records", ev.len());
    } else {
        assert!(r.lost().is_empty(), "{:?}", r.lost());
        for (name, pages) in [("a.dat", &a_pages), ("b.dat", &b_pages)] {
            let path = c.work.join(name);
            let file = std::fs::read(&path).unwrap();
            let rec = pages_of(&ev, "mmappwrite", &path);
            // Every page written has its record; every record holds what the file holds (the
            // folio's other pages, mapped writable with them, reach the file too).
            for p in pages.iter() {
                assert!(
                    rec.contains_key(p),
                    "{name}: no mmappwrite of page {p} ({} records)",
                    rec.len()
                );
            }
            for (p, d) in &rec {
                let at = *p as usize * 4096;
                assert!(
                    d[..] == file[at..at + 4096],
                    "{name}: page {p}'s record differs from the file"
                );
            }
        }
    }
    let x = c.replay(&[]);
    assert_eq!(x.mismatches(), 0, "{}", x.show());
    if backend() == "ebpf" {
        assert!(x.final_diffs().is_empty(), "{}", x.show());
        assert!(x.calls("mmappwrite", "matched") > a_pages.len() as u64, "{}", x.show());
        let a = std::fs::read(c.in_root(&x, "a.dat")).unwrap();
        assert_eq!(a, std::fs::read(c.work.join("a.dat")).unwrap(), "a.dat in the replay root");
    } else {
        // What ptrace cannot see: the files' content, and the replay says why.
        let mut diffs = x.final_diffs();
        diffs.sort();
        assert_eq!(diffs, ["~ a.dat: content differs", "~ b.dat: content differs"], "{}", x.show());
        assert!(x.warnings().iter().any(|w| w.contains("shared file mapping")), "{}", x.show());
    }
}

/// mmapsync fills two pages, msyncs, and fills them again. MS_ASYNC (on any file system) and
/// MS_SYNC on tmpfs leave the pages dirty and writable, so the second fill takes no fault:
/// before the fix the eBPF trace held the pages' content at the msync only, and the replay
/// left the file with it.
fn writes_after_an_msync_that_leaves_pages_writable_are_recorded() {
    let c = Case::new("msync");
    let p = ra_testkit::program("mmapsync");
    let shm = PathBuf::from(format!("/dev/shm/ra-mmapsync-{}-{}", std::process::id(), backend()));
    for (file, how) in [(c.work.join("async.dat"), "async"), (shm.clone(), "sync")] {
        c.record(&[], true, &[p.as_os_str(), file.as_os_str(), how.as_ref()]);
        let written = std::fs::read(&file).unwrap();
        assert!(written[..8192].iter().all(|&b| b == b'b'), "{how}: the program's second fill");
        let ev = c.events(&["mmappwrite"]);
        if backend() == "ptrace" {
            assert!(ev.is_empty(), "ptrace records no page");
        }
        // Each page's last record holds what the file holds.
        let ino = std::fs::metadata(&file).unwrap().ino() as i64;
        for page in [0, 1].into_iter().filter(|_| backend() == "ebpf") {
            let last = ev
                .iter()
                .rfind(|e| int(e, "inode") == ino && int(e, "offset") == page * 4096)
                .unwrap_or_else(|| panic!("{how}: no mmappwrite of page {page}"));
            assert!(data(last).iter().all(|&b| b == b'b'), "{how}: page {page}'s last record");
        }
        if how == "async" {
            let x = c.replay(&[]);
            assert_eq!(x.mismatches(), 0, "{}", x.show());
            if backend() == "ebpf" {
                assert!(x.final_diffs().is_empty(), "{}", x.show());
            } else {
                assert_eq!(x.final_diffs(), ["~ async.dat: content differs"], "{}", x.show());
            }
        }
    }
    let _ = std::fs::remove_file(&shm);
}

/// mmapkwrite reads a file into two pages of a shared mapping with read(2): the kernel's copy
/// takes the faults, in kernel mode, which the eBPF recorder did not look at (no record, and
/// the replay left the pages zero).
fn the_kernel_s_writes_through_a_shared_mapping_are_recorded() {
    let c = Case::new("kwrite");
    let p = ra_testkit::program("mmapkwrite");
    c.record(&[], true, &[p.as_os_str(), c.work.as_os_str()]);
    let dst = c.work.join("dst.dat");
    let ev = c.events(&["mmappwrite"]);
    if backend() == "ebpf" {
        let rec = pages_of(&ev, "mmappwrite", &dst);
        assert_eq!(rec.keys().copied().collect::<Vec<_>>(), [1, 2], "pages written by read(2)");
        assert!(rec.values().all(|d| d.iter().all(|&b| b == b'S')), "their content");
    } else {
        assert!(ev.is_empty(), "ptrace records no page");
    }
    let x = c.replay(&[]);
    assert_eq!(x.mismatches(), 0, "{}", x.show());
    if backend() == "ebpf" {
        assert!(x.final_diffs().is_empty(), "{}", x.show());
    } else {
        assert_eq!(x.final_diffs(), ["~ dst.dat: content differs"], "{}", x.show());
    }
}

/// 64 KiB of distinct bytes in a file made before the recording.
fn sixteen_pages(path: &Path) -> Vec<u8> {
    let bytes: Vec<u8> = (0..16 * 4096).map(|i| ((i / 4096) * 13 + i % 4096) as u8).collect();
    std::fs::write(path, &bytes).unwrap();
    bytes
}

/// mmapread maps a 64 KiB file opened O_RDONLY with MAP_SHARED and reads every page. The kernel
/// clears VM_SHARED for that mapping (the file is not open for writing) and keeps VM_MAYSHARE:
/// before the fix the eBPF trace had no `mmappread` record at all.
fn reads_through_a_shared_mapping_of_a_read_only_file_are_recorded() {
    let c = Case::new("roshared");
    let file = c.work.join("ro.dat");
    let bytes = sixteen_pages(&file);
    let p = ra_testkit::program("mmapread");
    let out = c.record(&[], true, &[p.as_os_str(), "ro.dat".as_ref(), "shared".as_ref()]);
    let j: Value = serde_json::from_str(&out).expect("mmapread prints JSON");
    let ev = c.events(&["mmappread", "mmappwrite"]);
    if backend() == "ptrace" {
        assert!(ev.is_empty(), "ptrace records no page: {} records", ev.len());
    } else {
        let rec = pages_of(&ev, "mmappread", &file);
        assert_eq!(rec.keys().copied().collect::<Vec<_>>(), (0..16).collect::<Vec<i64>>());
        for (p, d) in &rec {
            let at = *p as usize * 4096;
            assert!(d[..] == bytes[at..at + 4096], "page {p}'s record differs from the file");
        }
        for e in ev.iter().filter(|e| e.name == "mmappread") {
            assert_eq!(int(e, "fd"), j["fd"].as_i64().unwrap(), "#{}", e.unique_id);
        }
        assert!(ev.iter().all(|e| e.name == "mmappread"), "no write through a read-only mapping");
    }
    let x = c.replay(&[]);
    assert_eq!(x.mismatches(), 0, "{}", x.show());
    assert!(x.final_diffs().is_empty(), "{}", x.show());
    if backend() == "ebpf" {
        assert_eq!(x.calls("mmappread", "matched"), 16, "{}", x.show());
    }
}

/// Part of issue 39, item 15 that needs item 13 (`--init` takes a file's content from the page
/// records): without a snapshot, the replay's initial state has the content the 16 `mmappread`
/// records show.
#[test]
fn init_reconstructs_a_file_read_through_a_mapping_from_its_page_records() {
    if !ra_testkit::ebpf_available() {
        return;
    }
    ra_testkit::set_backend("ebpf");
    let c = Case::new("roinit");
    let file = c.work.join("ro.dat");
    let bytes = sixteen_pages(&file);
    let p = ra_testkit::program("mmapread");
    c.record(&[], false, &[p.as_os_str(), "ro.dat".as_ref(), "shared".as_ref()]);
    let x = c.replay(&[]);
    assert_eq!(x.mismatches(), 0, "{}", x.show());
    assert_eq!(x.calls("mmappread", "matched"), 16, "{}", x.show());
    assert_eq!(std::fs::read(c.in_root(&x, "ro.dat")).unwrap(), bytes);
}

/// Reads through a private mapping of a data file are recorded only with `--mmap-private`, and
/// then no page of a program image (the program, its libraries, the loader) is.
#[test]
fn private_file_mappings_are_recorded_with_mmap_private_and_program_images_never() {
    if !ra_testkit::ebpf_available() {
        return;
    }
    ra_testkit::set_backend("ebpf");
    let c = Case::new("private");
    let file = c.work.join("ro.dat");
    let bytes = sixteen_pages(&file);
    let p = ra_testkit::program("mmapread");
    let cmd = [p.as_os_str(), "ro.dat".as_ref(), "private".as_ref()];
    c.record(&[], false, &cmd);
    let ev = c.events(&["mmappread"]);
    assert!(pages_of(&ev, "mmappread", &file).is_empty(), "private mappings need --mmap-private");

    c.record(&["--mmap-private"], true, &cmd);
    let ev = c.events(&["mmappread"]);
    let rec = pages_of(&ev, "mmappread", &file);
    assert_eq!(rec.keys().copied().collect::<Vec<_>>(), (0..16).collect::<Vec<i64>>());
    for (p, d) in &rec {
        let at = *p as usize * 4096;
        assert!(d[..] == bytes[at..at + 4096], "page {p}'s record differs from the file");
    }
    // Program images: the program and the libraries it runs with (ldd's list).
    let mut images = vec![p.clone()];
    let ldd = Command::new("ldd").arg(&p).output().unwrap();
    for l in String::from_utf8_lossy(&ldd.stdout).lines() {
        if let Some(path) = l.split_whitespace().find(|w| w.starts_with('/')) {
            images.push(PathBuf::from(path));
        }
    }
    assert!(images.len() >= 3, "the program, libc and the loader: {images:?}");
    for img in &images {
        let ino = std::fs::metadata(img).unwrap().ino() as i64;
        let dev = std::fs::metadata(img).unwrap().dev() as i64;
        let n = ev.iter().filter(|e| int(e, "inode") == ino && int(e, "device") == dev).count();
        assert_eq!(n, 0, "{n} page records of the program image {}", img.display());
    }
    let r = TraceReader::open(&c.trace).unwrap();
    assert!(r.lost().is_empty(), "{:?}", r.lost());
    let x = c.replay(&[]);
    x.only_outside_pages_mismatched(&ev, &[&file]);
    assert!(x.calls("mmappread", "matched") >= 16, "{}", x.show());
}

/// git reads its pack files through private mappings (xmmap, MAP_PRIVATE): with
/// `--mmap-private` the trace holds every page of the pack `git cat-file` read, with its
/// bytes, and the replay reads the same through the mapping.
#[test]
fn git_reading_a_pack_file_is_recorded_with_mmap_private() {
    if !ra_testkit::ebpf_available() || !ra_testkit::have_program("git") {
        return;
    }
    ra_testkit::set_backend("ebpf");
    let c = Case::new("git");
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "gc.auto=0"])
            .args(args)
            .current_dir(&c.work)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &c.base)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    git(&["init", "-q", "."]);
    for i in 1..=3 {
        let text: String = (0..i * 3000).map(|n| format!("line {n}\n")).collect();
        std::fs::write(c.work.join(format!("f{i}.txt")), text).unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", &format!("c{i}")]);
    }
    git(&["gc", "-q"]);
    let packs: Vec<PathBuf> = std::fs::read_dir(c.work.join(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pack"))
        .collect();
    assert_eq!(packs.len(), 1, "{packs:?}");
    let pack = std::fs::read(&packs[0]).unwrap();
    let cmd = ["git".as_ref(), "cat-file".as_ref(), "-p".as_ref(), "HEAD:f3.txt".as_ref()];
    c.record(&[], false, &cmd);
    assert!(pages_of(&c.events(&["mmappread"]), "mmappread", &packs[0]).is_empty());

    let out = c.record(&["--mmap-private"], true, &cmd);
    assert!(out.starts_with("line 0\n"), "git's output: {}", &out[..out.len().min(80)]);
    let rec = pages_of(&c.events(&["mmappread"]), "mmappread", &packs[0]);
    let want: Vec<i64> = (0..pack.len().div_ceil(4096) as i64).collect();
    assert_eq!(rec.keys().copied().collect::<Vec<_>>(), want, "pages of the pack");
    for (p, d) in &rec {
        let at = *p as usize * 4096;
        let end = (at + 4096).min(pack.len());
        assert!(d[..end - at] == pack[at..end], "pack page {p}'s record differs from the file");
        assert!(d[end - at..].iter().all(|&b| b == 0), "pack page {p}: zeros past the end");
    }
    let x = c.replay(&[]);
    x.only_outside_pages_mismatched(&c.events(&["mmappread"]), &[&packs[0]]);
    assert!(x.calls("mmappread", "matched") >= want.len() as u64, "{}", x.show());
}

/// memfdname calls memfd_create with a name in a page nothing had touched, first with a flag
/// the kernel refuses before it reads the name. Before the fix the eBPF trace held "" for it
/// (buffer not captured).
fn a_memfd_name_the_kernel_never_read_is_captured() {
    let c = Case::new("memfd");
    let p = ra_testkit::program("memfdname");
    let out = c.record(&[], false, &[p.as_os_str()]);
    let j: Value = serde_json::from_str(&out).expect("memfdname prints JSON");
    let mut name = j["name"].as_str().unwrap().as_bytes().to_vec();
    name.push(0);
    let ev = c.events(&["memfd_create"]);
    assert_eq!(ev.len(), 2, "{ev:?}");
    for e in &ev {
        assert!(!e.buffer_not_captured, "#{}: {e:?}", e.unique_id);
        assert_eq!(e.arg("name").and_then(ArgValue::as_data), Some(&name[..]), "#{}", e.unique_id);
    }
    assert_eq!((ev[0].errno, ev[1].errno), (Some(libc::EINVAL), Some(0)));
    let x = c.replay(&[]);
    assert_eq!(x.mismatches(), 0, "{}", x.show());
    assert_eq!(x.calls("memfd_create", "issued"), 2, "{}", x.show());
}

/// With `--loss drop` the eBPF recorder never stops the program, so a name it could not read
/// stays uncaptured (the trace says so); the replay then does not issue the call with a name
/// it would have to invent, and says why.
#[test]
fn a_call_whose_name_was_not_captured_is_not_replayed() {
    if !ra_testkit::ebpf_available() {
        return;
    }
    ra_testkit::set_backend("ebpf");
    let c = Case::new("memfd-drop");
    let p = ra_testkit::program("memfdname");
    c.record(&["--loss", "drop"], false, &[p.as_os_str()]);
    let ev = c.events(&["memfd_create"]);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert!(ev[0].buffer_not_captured, "the refused call's name: {:?}", ev[0]);
    let x = c.replay(&[]);
    assert_eq!(x.mismatches(), 0, "{}", x.show());
    assert_eq!(x.calls("memfd_create", "simulated"), 1, "{}", x.show());
    assert_eq!(x.calls("memfd_create", "issued"), 1, "{}", x.show());
    assert!(
        x.warnings().iter().any(|w| w.contains("memfd_create: `name` cut short")),
        "{}",
        x.show()
    );
}
