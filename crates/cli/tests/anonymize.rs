//! `reanimator anonymize` end to end: real programs recorded with ptrace (`cp -a` of a tree
//! with subdirectories, a symlink, a hard link and foreign owners; `tar x`; sqlite3), the
//! traces anonymized, both replayed with `--init` into empty roots, and the anonymized
//! replay's tree compared with the original replay's tree mapped through the same
//! pseudonyms: the same entries, kinds, modes, sizes and contents, and names that differ
//! exactly where they were anonymized. `--reverse` gives back the original dump; the key
//! never shows up in the output, on stderr or in `--json`.

mod common;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ra_anonymize::{map_entries, DataMode, Field, Forward, Mapper, Pseudonymizer};
use ra_fsstate::{Entry, Kind, ScanOptions, Scanner};
use ra_testkit::{assert_clean_failure, have_program};
use ra_trace::key::{Key, Purpose};

use common::{bin, keygen};

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

fn ok(o: Output, what: &str) -> Output {
    assert!(
        o.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

struct Case {
    base: PathBuf,
    work: PathBuf,
    key: PathBuf,
    /// Every stderr and --json output, to check that the key never shows.
    said: Vec<u8>,
}

impl Case {
    fn new(name: &str) -> Case {
        let base = ra_testkit::case_dir("anon", name);
        let key = base.join("k");
        keygen(&key);
        Case { work: base.join("work"), base, key, said: Vec::new() }
    }

    fn key_hex(&self) -> String {
        std::fs::read_to_string(&self.key).unwrap().lines().nth(1).unwrap().trim().to_string()
    }

    fn record(&mut self, cmd: &[&OsStr], stdin: Option<&Path>) -> PathBuf {
        let trace = self.base.join("t.ds");
        let o = bin()
            .args(["record", "-q", "--backend", "ptrace", "-o"])
            .arg(&trace)
            .arg("--snapshot")
            .arg(&self.work)
            .arg("--")
            .args(cmd)
            .current_dir(&self.work)
            .stdin(match stdin {
                Some(p) => Stdio::from(File::open(p).unwrap()),
                None => Stdio::null(),
            })
            .output()
            .unwrap();
        ok(o, "record");
        trace
    }

    fn run(&mut self, args: &[&OsStr]) -> Output {
        let o = bin().args(args).output().unwrap();
        self.said.extend_from_slice(&o.stdout);
        self.said.extend_from_slice(&o.stderr);
        o
    }

    fn anonymize(
        &mut self,
        trace: &Path,
        out: &str,
        opts: &[&str],
    ) -> (PathBuf, serde_json::Value) {
        let out = self.base.join(out);
        let key = self.key.clone();
        let mut args = vec![os("anonymize"), trace.as_os_str(), out.as_os_str()];
        args.extend([os("--key"), key.as_os_str(), os("--json")]);
        args.extend(opts.iter().map(|s| os(s)));
        let o = ok(self.run(&args), "anonymize");
        (out, serde_json::from_slice(&o.stdout).unwrap())
    }

    /// `replay --init` into a fresh root; the report.
    fn replay(&mut self, trace: &Path, root: &str) -> (PathBuf, serde_json::Value) {
        let root = self.base.join(root);
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let o = bin()
            .arg("replay")
            .arg(trace)
            .arg("--root")
            .arg(&root)
            .args(["--init", "--json"])
            .output()
            .unwrap();
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!("replay report ({e}): {}", String::from_utf8_lossy(&o.stderr))
        });
        (root, r)
    }

    /// The pseudonymizer `anonymize` used (same key, same options).
    fn mapper(&self, fields: &[Field], keep_extensions: bool) -> Forward {
        let key = Key::load(&self.key).unwrap();
        Forward {
            p: Pseudonymizer::new(&key.derive(Purpose::Pseudonym), keep_extensions, Vec::new()),
            fields: fields.to_vec(),
        }
    }

    fn check_key_never_shown(&self, files: &[&Path]) {
        let hex = self.key_hex();
        let raw = ra_hex::decode(&hex[..64]).unwrap();
        let said = String::from_utf8_lossy(&self.said);
        assert!(!said.contains(&hex) && !said.contains(&hex[..16]), "the key was printed");
        for f in files {
            let b = std::fs::read(f).unwrap();
            assert!(
                !b.windows(16).any(|w| w == &hex.as_bytes()[..16]),
                "key hex in {}",
                f.display()
            );
            assert!(!b.windows(32).any(|w| w == raw.as_slice()), "key bytes in {}", f.display());
        }
    }
}

/// A tree's entries (whole root), mtimes left out.
fn scan(root: &Path) -> Vec<Entry> {
    Scanner::new(root, ScanOptions::default())
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            e.mtime_ns = 0;
            e
        })
        .collect()
}

/// The original replay's tree as the anonymized trace should replay it: every path
/// (as an absolute path beneath the root) and symlink target through the pseudonyms, owners
/// too, contents as they were (or, data digested, left out of the comparison).
fn expected(m: &mut dyn Mapper, tree: Vec<Entry>, data: DataMode) -> Vec<Entry> {
    let absolute: Vec<Entry> = tree
        .into_iter()
        .map(|mut e| {
            e.path =
                if e.path.is_empty() { Vec::new() } else { [b"/".as_slice(), &e.path].concat() };
            e.link = e.link.map(|l| [b"/".as_slice(), &l].concat());
            e
        })
        .collect();
    let mut z = HashMap::new();
    map_entries(m, absolute, DataMode::Keep, &mut z)
        .into_iter()
        .map(|mut e| {
            e.path = e.path.strip_prefix(b"/").map(<[u8]>::to_vec).unwrap_or(e.path);
            e.link = e.link.map(|l| l[1..].to_vec());
            if data != DataMode::Keep {
                e.digest = None;
            }
            e
        })
        .collect()
}

fn compare(expected: &[Entry], got: &[Entry], data: DataMode) {
    let got: Vec<Entry> = got
        .iter()
        .cloned()
        .map(|mut e| {
            if data != DataMode::Keep {
                e.digest = None;
            }
            e
        })
        .collect();
    let show = |v: &[Entry]| {
        v.iter()
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        expected.len(),
        got.len(),
        "entries:\nexpected\n{}\ngot\n{}",
        show(expected),
        show(&got)
    );
    for (x, y) in expected.iter().zip(&got) {
        assert_eq!(
            x,
            y,
            "{} vs {}",
            String::from_utf8_lossy(&x.path),
            String::from_utf8_lossy(&y.path)
        );
    }
}

/// Entries per depth and kind: the tree's shape, names aside.
fn shape(tree: &[Entry]) -> Vec<(usize, Kind, u64)> {
    let mut v: Vec<(usize, Kind, u64)> = tree
        .iter()
        .map(|e| {
            (
                e.path.split(|&b| b == b'/').count(),
                e.kind,
                if e.kind == Kind::Symlink { 0 } else { e.size },
            )
        })
        .collect();
    v.sort_by_key(|x| (x.0, x.1.code(), x.2));
    v
}

fn make_tree(dir: &Path) {
    std::fs::create_dir_all(dir.join("alice/projects/secret-plan")).unwrap();
    std::fs::create_dir_all(dir.join("alice/photos")).unwrap();
    for (p, n) in [
        ("alice/notes.txt", 100usize),
        ("alice/projects/secret-plan/budget.ods", 70_000),
        ("alice/projects/secret-plan/README", 5),
        ("alice/photos/me.jpg", 300_000),
        ("alice/photos/empty", 0),
    ] {
        let data: Vec<u8> = (0..n).map(|i| (i * 7 + p.len()) as u8).collect();
        std::fs::write(dir.join(p), data).unwrap();
    }
    std::os::unix::fs::symlink("projects/secret-plan/README", dir.join("alice/readme-link"))
        .unwrap();
    std::os::unix::fs::symlink("/etc/alice-config", dir.join("alice/dangling")).unwrap();
    std::fs::hard_link(dir.join("alice/notes.txt"), dir.join("alice/photos/notes-again")).unwrap();
    // Foreign owners (the tests run as root in CI; elsewhere the chown fails harmlessly).
    let _ = std::os::unix::fs::chown(dir.join("alice/notes.txt"), Some(4321), Some(8765));
    let _ = std::os::unix::fs::lchown(dir.join("alice/readme-link"), Some(4321), Some(8765));
}

const ALL_BUT_DATA: [Field; 6] =
    [Field::Path, Field::Uid, Field::Gid, Field::Pid, Field::Comm, Field::Hostname];

/// Record, anonymize (path, uid, gid, pid, comm, hostname, cmdline; `data` as given), replay
/// both, compare the trees; nothing of the names left in the anonymized trace.
fn round(mut c: Case, cmd: &[&OsStr], stdin: Option<&Path>, data: DataMode, keep_ext: bool) {
    let t = c.record(cmd, stdin);
    // cmdline too: argv and the `command` fact name the files as well; times shifted (the
    // replay does not depend on them).
    let mut opts =
        vec!["--fields", "path,uid,gid,pid,comm,hostname,cmdline,time", "--data", data.name()];
    if keep_ext {
        opts.push("--keep-extensions");
    }
    let (a, j) = c.anonymize(&t, "a.ds", &opts);
    assert!(j["fields"]["path"]["replaced"].as_u64().unwrap() > 0, "{j}");
    assert!(j["fields"]["pid"]["replaced"].as_u64().unwrap() > 0, "{j}");
    assert_eq!(j["fields"]["hostname"]["replaced"], 1, "{j}");
    let (r1, rep1) = c.replay(&t, "r1");
    assert_eq!(rep1["mismatch_total"], 0, "original replay: {rep1}");
    let (r2, rep2) = c.replay(&a, "r2");
    if data == DataMode::Keep {
        // Every call of the anonymized trace verifies like the original's.
        assert_eq!(rep2["mismatch_total"], 0, "anonymized replay: {rep2}");
        assert_eq!(rep2["totals"], rep1["totals"]);
    }
    let t1 = scan(&r1);
    let t2 = scan(&r2);
    assert_eq!(shape(&t1).len(), shape(&t2).len());
    if data == DataMode::Keep {
        assert_eq!(shape(&t1), shape(&t2), "same entries per depth, kind and size");
    }
    let mut m = c.mapper(&ALL_BUT_DATA, keep_ext);
    compare(&expected(&mut m, t1.clone(), data), &t2, data);
    // Names differ: nothing of the original names is left in the anonymized tree.
    for e in &t2 {
        let p = String::from_utf8_lossy(&e.path);
        for secret in ["alice", "secret", "budget", "notes", "photos"] {
            assert!(!p.contains(secret), "{p}");
        }
    }
    // `reanimator diff` sees the same number of entries on both sides, all named otherwise.
    let o = bin().arg("diff").arg(&r1).arg(&r2).arg("--json").output().unwrap();
    assert_eq!(o.status.code(), Some(1), "the trees' names differ");
    let bytes = std::fs::read(&a).unwrap();
    for secret in [&b"alice"[..], b"secret-plan", b"budget"] {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret), "{secret:?} in the trace");
    }
    c.check_key_never_shown(&[&a]);
}

#[test]
fn cp_a_anonymized_replays_to_the_same_tree_shape() {
    if !have_program("cp") {
        return;
    }
    let c = Case::new("cp");
    make_tree(&c.work.join("src"));
    round(c, &[os("cp"), os("-a"), os("src"), os("dst")], None, DataMode::Keep, true);
}

#[test]
fn tar_x_with_data_digested_replays_to_the_same_tree_shape() {
    if !have_program("tar") {
        return;
    }
    let c = Case::new("tar");
    let src = c.base.join("src");
    make_tree(&src);
    let o = Command::new("tar")
        .arg("cf")
        .arg(c.work.join("a.tar"))
        .arg("-C")
        .arg(&src)
        .arg(".")
        .output()
        .unwrap();
    assert!(o.status.success());
    round(c, &[os("tar"), os("xf"), os("a.tar")], None, DataMode::Digest, false);
}

#[test]
fn sqlite3_anonymized_replays_to_the_same_tree_shape() {
    if !have_program("sqlite3") {
        return;
    }
    let c = Case::new("sqlite");
    let sql = c.base.join("ins.sql");
    let mut s = String::from("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);\n");
    for i in 0..300 {
        s.push_str(&format!("INSERT INTO t VALUES({i}, '{}');\n", "v".repeat(100 + i)));
    }
    std::fs::write(&sql, s).unwrap();
    round(c, &[os("sqlite3"), os("alice-secret.db")], Some(&sql), DataMode::Keep, true);
}

#[test]
fn reverse_gives_back_the_original_dump_and_needs_the_key() {
    if !have_program("cp") {
        return;
    }
    let mut c = Case::new("reverse");
    make_tree(&c.work.join("src"));
    let t = c.record(&[os("cp"), os("-a"), os("src"), os("dst")], None);
    let (a, j) = c.anonymize(&t, "a.ds", &["--fields", "all", "--reversible", "all"]);
    assert!(j["reverse_table_entries"].as_u64().unwrap() > 0, "{j}");
    let dump = |p: &Path| ok(bin().arg("dump").arg(p).output().unwrap(), "dump").stdout;
    assert_ne!(dump(&a), dump(&t));
    let b = c.base.join("b.ds");
    let key = c.key.clone();
    let o = c.run(&[
        os("anonymize"),
        os("--reverse"),
        a.as_os_str(),
        b.as_os_str(),
        os("--key"),
        key.as_os_str(),
        os("--json"),
    ]);
    ok(o, "reverse");
    assert!(dump(&b) == dump(&t), "the reversed trace dumps like the original");
    for phase in ["start", "end"] {
        let x = format!("{}:{phase}", t.display());
        let y = format!("{}:{phase}", b.display());
        let o = bin().args(["diff", &x, &y]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{phase}: {}", String::from_utf8_lossy(&o.stdout));
    }
    // Another key: refused, one line, exit 2, no key in it.
    let k2 = c.base.join("k2");
    keygen(&k2);
    let x = c.base.join("x.ds");
    let o = c.run(&[
        os("anonymize"),
        os("--reverse"),
        a.as_os_str(),
        x.as_os_str(),
        os("--key"),
        k2.as_os_str(),
    ]);
    let line = assert_clean_failure(&o);
    assert!(line.contains("does not open"), "{line}");
    assert!(!x.exists(), "no half-written output");
    let hex2 = std::fs::read_to_string(&k2).unwrap().lines().nth(1).unwrap().to_string();
    assert!(!line.contains(&hex2[..16]));
    // An irreversible anonymization leaves nothing to reverse.
    let (i, _) = c.anonymize(&t, "i.ds", &["--fields", "path,pid"]);
    let y = c.base.join("y.ds");
    let o = c.run(&[
        os("anonymize"),
        os("--reverse"),
        i.as_os_str(),
        y.as_os_str(),
        os("--key"),
        key.as_os_str(),
    ]);
    assert!(assert_clean_failure(&o).contains("no pseudonym table"));
    // Bad field lists name the valid fields.
    let z = c.base.join("z.ds");
    let o = c.run(&[
        os("anonymize"),
        t.as_os_str(),
        z.as_os_str(),
        os("--key"),
        key.as_os_str(),
        os("--fields"),
        os("path,bogus"),
    ]);
    let line = assert_clean_failure(&o);
    assert!(
        line.contains("bogus") && line.contains("path, uid, gid, pid, comm, hostname"),
        "{line}"
    );
    // A time origin without the time field says so.
    let o = c.run(&[
        os("anonymize"),
        t.as_os_str(),
        z.as_os_str(),
        os("--key"),
        key.as_os_str(),
        os("--fields"),
        os("path"),
        os("--time-origin"),
        os("-100"),
    ]);
    assert!(assert_clean_failure(&o).contains("--fields needs time"));
    assert!(!z.exists());
    c.check_key_never_shown(&[&a, &b, &i]);
}

/// `.OUT.partial` beside OUT: where a run writes until it is complete.
fn partial(out: &Path) -> PathBuf {
    let mut n = std::ffi::OsString::from(".");
    n.push(out.file_name().unwrap());
    n.push(".partial");
    out.with_file_name(n)
}

#[test]
fn a_failed_or_stopped_run_leaves_neither_out_nor_its_partial_file() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};
    if !have_program("sh") {
        return;
    }
    let mut c = Case::new("partial");
    // Many calls: a trace of several extents, which takes a while to anonymize.
    let t = c.record(&[os("sh"), os("-c"), os("for i in $(seq 3000); do echo $i > f; done")], None);
    let key = c.key.clone();
    let anonymize = |c: &mut Case, input: &Path, out: &Path| {
        c.run(&[os("anonymize"), input.as_os_str(), out.as_os_str(), os("--key"), key.as_os_str()])
    };
    // Bytes changed in the middle: the input opens, and the run fails once it reads them,
    // after it began writing.
    let mut bytes = std::fs::read(&t).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid..mid + 64].iter_mut().for_each(|b| *b ^= 0x55);
    let bad = c.base.join("bad.ds");
    std::fs::write(&bad, &bytes).unwrap();
    let out = c.base.join("out.ds");
    let line = assert_clean_failure(&anonymize(&mut c, &bad, &out));
    assert!(line.contains("cannot anonymize"), "{line}");
    assert!(!out.exists(), "no OUT: {line}");
    assert!(!partial(&out).exists(), "no partial file: {line}");
    // Another run's partial file (or a killed one's) is refused and left as it is.
    std::fs::write(partial(&out), "another run").unwrap();
    let line = assert_clean_failure(&anonymize(&mut c, &t, &out));
    assert!(line.contains(".out.ds.partial exists"), "{line}");
    assert_eq!(std::fs::read_to_string(partial(&out)).unwrap(), "another run");
    assert!(!out.exists());
    std::fs::remove_file(partial(&out)).unwrap();
    // Ctrl-C while it writes: the file goes, and the run ends as the signal ends it.
    let mut child = bin()
        .args(["anonymize", "--compress", "bz2"])
        .arg(&t)
        .arg(&out)
        .arg("--key")
        .arg(&key)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !partial(&out).exists() && child.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(30), "no partial file appeared");
        std::thread::sleep(Duration::from_millis(1));
    }
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    if st.success() {
        eprintln!("note: the run ended before Ctrl-C reached it");
        assert!(out.exists());
        std::fs::remove_file(&out).unwrap();
    } else {
        assert_eq!(st.signal(), Some(libc::SIGINT), "{st:?}");
        assert!(!out.exists(), "no OUT after Ctrl-C");
    }
    assert!(!partial(&out).exists(), "no partial file after Ctrl-C");
    // A run that succeeds leaves OUT alone.
    let (a, _) = c.anonymize(&t, "ok.ds", &[]);
    assert!(a.exists() && !partial(&a).exists());
}

// ---- An attacker's look at `--fields all` ------------------------------------------------
//
// Workloads whose every name, content, xattr, command line, host name, cgroup, mount path and
// filter is a marker string; their traces anonymized with `--fields all` under each `--data`
// mode; then every marker searched for in what an attacker gets: `dump -s 0` (text, raw and
// jsonl), `info --json`, and the anonymized file's bytes (written with `--compress none`, so
// that its bytes are its decompressed extents). Markers hold upper-case letters and the digit
// 0, which the pseudonyms' alphabet (a-z, 2-7) lacks: no pseudonym can contain one by chance.
// Only `--data keep` may keep a marker, and only one the original trace holds as data.

use std::collections::BTreeSet;

/// Every marker that occurs in `hay`.
fn found<'a>(markers: &[&'a str], hay: &[u8]) -> BTreeSet<&'a str> {
    markers.iter().copied().filter(|m| hay.windows(m.len()).any(|w| w == m.as_bytes())).collect()
}

/// The bytes a trace holds as data (what `--data keep` keeps by rule): every bulk buffer of
/// the registry (`is_bulk`, no other meaning), the bytes kernel-side copies moved, `fs` data
/// (not link targets or xattr names), snapshot contents and xattr values.
fn data_bytes(trace: &Path) -> Vec<u8> {
    use ra_fsstate::ContentSource;
    use ra_trace::snapshot::Phase;
    use ra_trace::{ArgValue, ExtraValue, TraceReader};
    let tr = TraceReader::open(trace).unwrap();
    let mut out = Vec::new();
    for ev in tr.events(None) {
        let ev = ev.unwrap();
        if let Some(def) = ev.def {
            for (a, v) in def.args.iter().zip(&ev.args) {
                if !a.kind.is_bulk() || a.meaning != ra_syscalls::Meaning::Plain {
                    continue;
                }
                match v {
                    ArgValue::Data(d) => out.extend_from_slice(d),
                    ArgValue::Iov(v) => {
                        for x in v {
                            out.extend_from_slice(x.data.as_deref().unwrap_or_default());
                        }
                    }
                    _ => {}
                }
                out.push(0);
            }
        }
        // `fs` operations whose data is a link's target or a list of xattr names.
        let names_op =
            ev.def.is_none() && ["readlink", "symlink", "listxattr"].contains(&&*ev.name);
        for (k, v) in &ev.extra {
            if let ExtraValue::Bytes(b) = v {
                if k == "data_copied" || (k == "data" && !names_op) {
                    out.extend_from_slice(b);
                    out.push(0);
                }
            }
        }
    }
    for s in tr.snapshots() {
        for phase in [Phase::Start, Phase::End] {
            if s.phase(phase).is_some() {
                for e in tr.snapshot_entries(s.index, phase).unwrap() {
                    for v in e.unwrap().xattrs.values() {
                        out.extend_from_slice(v);
                        out.push(0);
                    }
                }
            }
        }
    }
    tr.content()
        .for_each_chunk(&mut |_, _, c| {
            out.extend_from_slice(c);
            out.push(0);
            Ok(())
        })
        .unwrap();
    out
}

/// What an attacker reads of a trace: its bytes, `dump -s 0` as text, extent by extent and as
/// JSON lines, `info --json`.
fn attacker_views(trace: &Path) -> Vec<(&'static str, Vec<u8>)> {
    let run = |args: &[&str]| {
        let o = bin().args(args).arg(trace).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    vec![
        ("the file's bytes", std::fs::read(trace).unwrap()),
        ("dump -s 0", run(&["dump", "-s", "0"])),
        ("dump --raw -s 0", run(&["dump", "--raw", "-s", "0"])),
        ("dump -f jsonl", run(&["dump", "-f", "jsonl"])),
        ("info --json", run(&["info", "--json"])),
    ]
}

/// The calendar date (UTC) of `ns`.
fn date_of(ns: i64) -> String {
    let o = Command::new("date")
        .args(["-u", "-d", &format!("@{}", ns.div_euclid(1_000_000_000)), "+%Y-%m-%d"])
        .output()
        .unwrap();
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Instants of the recording (`t0..=t1`, ns) left in a time-anonymized trace: as 8-byte
/// little-endian nanoseconds or seconds anywhere in its bytes, or in its text as decimal
/// seconds or the calendar date.
fn times_left(views: &[(&str, Vec<u8>)], t0: i64, t1: i64) -> Vec<String> {
    let mut left = Vec::new();
    let (s0, s1) = (t0.div_euclid(1_000_000_000), t1.div_euclid(1_000_000_000) + 1);
    let dates: BTreeSet<String> = [date_of(t0), date_of(t1)].into_iter().collect();
    for (what, b) in views {
        if let Some(v) = b
            .windows(8)
            .map(|w| i64::from_le_bytes(w.try_into().unwrap()))
            .find(|v| (t0..=t1).contains(v) || (s0..=s1).contains(v))
        {
            left.push(format!("the time {v} in {what}"));
        }
        if *what == "the file's bytes" {
            continue;
        }
        let text = String::from_utf8_lossy(b);
        for s in (s0..=s1).map(|s| s.to_string()).filter(|s| text.contains(s.as_str())) {
            left.push(format!("the time {s} in {what}"));
        }
        for d in dates.iter().filter(|d| text.contains(d.as_str())) {
            left.push(format!("the date {d} in {what}"));
        }
    }
    left
}

fn now_ns() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64
}

fn set_xattr(p: &Path, name: &str, value: &[u8]) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: NUL-terminated strings and a live buffer of `value.len()` bytes.
    let r =
        unsafe { libc::lsetxattr(c.as_ptr(), n.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    assert_eq!(r, 0, "setxattr {}: {}", p.display(), std::io::Error::last_os_error());
}

/// Check that `trace` (recorded between `t0` and `t1`) holds every marker, anonymize it with
/// `--fields all` under each data mode, and fail naming every marker and instant that
/// survived, and where.
fn attack(c: &mut Case, trace: &Path, markers: &[&str], t0: i64, t1: i64) {
    let orig: BTreeSet<&str> =
        attacker_views(trace).iter().flat_map(|(_, b)| found(markers, b)).collect();
    let missing: Vec<&&str> = markers.iter().filter(|m| !orig.contains(**m)).collect();
    assert!(missing.is_empty(), "markers the original trace lacks: {missing:?}");
    assert!(!times_left(&attacker_views(trace), t0, t1).is_empty(), "the original has times");
    // Every fact the recorder wrote has a rule (one it lacked would be left out).
    let tr = ra_trace::TraceReader::open(trace).unwrap();
    for (k, _) in tr.info() {
        assert!(ra_anonymize::facts::fact_rule(k).is_some(), "the fact {k} has no rule");
    }
    let in_data = found(markers, &data_bytes(trace));
    let mut leaks = Vec::new();
    for data in ["keep", "digest", "drop"] {
        let out = format!("attack-{data}.ds");
        let opts = ["--fields", "all", "--data", data, "--compress", "none", "--reversible", "all"];
        let (a, _) = c.anonymize(trace, &out, &opts);
        let views = attacker_views(&a);
        for (what, bytes) in &views {
            for m in found(markers, bytes) {
                if data != "keep" || !in_data.contains(m) {
                    leaks.push(format!("--data {data}: {m} in {what}"));
                }
            }
        }
        leaks.extend(times_left(&views, t0, t1).into_iter().map(|t| format!("--data {data}: {t}")));
    }
    c.check_key_never_shown(&[]);
    assert!(leaks.is_empty(), "{} left in anonymized traces:\n{}", leaks.len(), leaks.join("\n"));
}

/// Markers of the recorded workload: what each names is in its name.
const REC_MARKERS: &[&str] = &[
    "Mk0WorkDir",    // the snapshotted directory (cwd fact, snapshot.0.dir, absolute paths)
    "Mk0PreDir",     // a directory there before the command
    "Mk0PreFile",    // a file there before
    "Mk0PreContent", // its contents
    "Mk0PreXName",   // its xattr's name
    "Mk0PreXValue",  // its xattr's value
    "Mk0PreLink",    // a symlink there before
    "Mk0PreTarget",  // its target
    "Mk0NewDir",     // made by the command
    "Mk0NewSub",     // likewise, nested
    "Mk0NewFile",    // a file it writes
    "Mk0NewContent", // what it writes there
    "Mk0CopyDir",    // cp -a's copy (the xattr copied)
    "Mk0NewLink",    // ln -s
    "Mk0NewTarget",  // its target
    "Mk0Archive",    // tar's output
    "Mk0MagicCwd",   // reached as /proc/self/cwd/Mk0MagicCwd
    "Mk0MagicFd",    // as /proc/self/fd/7/Mk0MagicFd
    "Mk0DevFd",      // as /dev/fd/7/Mk0DevFd
    "Mk0MagicRoot",  // as /proc/self/root/<work>/Mk0MagicRoot
    "Mk0MagicPid",   // as /proc/<pid>/cwd/Mk0MagicPid
    "Mk0ThreadSelf", // as /proc/thread-self/cwd/Mk0ThreadSelf
    "Mk0EnvValue",   // an environment variable's value
    "Mk0HostName",   // the host name (a UTS namespace of its own)
];

#[test]
fn nothing_of_a_marked_recording_survives_fields_all() {
    if !have_program("tar") || !have_program("cp") {
        return;
    }
    let root = rustix::process::geteuid().is_root();
    let own_host = ra_testkit::privileged(
        "anonymize: a recording with a host name of its own",
        if root && have_program("unshare") { Ok(()) } else { Err("needs root and unshare".into()) },
    );
    let mut c = Case::new("attack");
    let work = c.base.join("Mk0WorkDir");
    let pre = work.join("Mk0PreDir");
    std::fs::create_dir_all(&pre).unwrap();
    std::fs::write(pre.join("Mk0PreFile.txt"), "Mk0PreContent\n").unwrap();
    set_xattr(&pre.join("Mk0PreFile.txt"), "user.Mk0PreXName", b"Mk0PreXValue");
    std::os::unix::fs::symlink("Mk0PreTarget", work.join("Mk0PreLink")).unwrap();
    let script = "set -e
        mkdir -p Mk0NewDir/Mk0NewSub
        echo Mk0NewContent > Mk0NewDir/Mk0NewFile
        cp -a Mk0PreDir Mk0NewDir/Mk0CopyDir
        ln -s Mk0NewTarget Mk0NewDir/Mk0NewLink
        readlink Mk0NewDir/Mk0NewLink > /dev/null
        tar cf Mk0Archive.tar Mk0PreDir Mk0NewDir
        mkdir m
        for f in Mk0MagicCwd Mk0MagicFd Mk0DevFd Mk0MagicRoot Mk0MagicPid Mk0ThreadSelf; do
            echo x > m/$f
        done
        cd m
        cat /proc/self/cwd/Mk0MagicCwd /proc/$$/cwd/Mk0MagicPid > /dev/null
        cat /proc/thread-self/cwd/Mk0ThreadSelf /proc/self/root$PWD/Mk0MagicRoot > /dev/null
        exec 7< .
        cat /proc/self/fd/7/Mk0MagicFd /dev/fd/7/Mk0DevFd > /dev/null
        cd ..
        ls -la Mk0NewDir Mk0PreDir > /dev/null";
    let trace = c.base.join("rec.ds");
    let mut cmd = if own_host {
        let mut u = Command::new("unshare");
        u.args(["--uts", "--", "sh", "-c", "hostname Mk0HostName && exec \"$@\"", "sh"]);
        u.arg(env!("CARGO_BIN_EXE_reanimator"));
        u
    } else {
        bin()
    };
    let t0 = now_ns();
    let o = cmd
        .args(["record", "-q", "--backend", "ptrace", "-o"])
        .arg(&trace)
        .arg("--snapshot")
        .arg(&work)
        .args(["--", "sh", "-c", script])
        .current_dir(&work)
        .env("MK_VALUE", "Mk0EnvValue")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let t1 = now_ns();
    ok(o, "record");
    let mut markers: Vec<&str> = REC_MARKERS.to_vec();
    if !own_host {
        markers.retain(|m| *m != "Mk0HostName");
    }
    // The files were made just before the recording: their times are in the window too.
    attack(&mut c, &trace, &markers, t0 - 5_000_000_000, t1);
    replays_alike(&mut c, &trace);
}

/// The trace anonymized with `--data keep` replays (`--init`) as the original does: the same
/// verdicts per call, a tree of the same shape.
fn replays_alike(c: &mut Case, trace: &Path) {
    let (r1, rep1) = c.replay(trace, "r-orig");
    let (r2, rep2) = c.replay(&c.base.join("attack-keep.ds"), "r-anon");
    assert_eq!(rep2["totals"], rep1["totals"], "{rep1}\n{rep2}");
    assert_eq!(shape(&scan(&r1)), shape(&scan(&r2)));
}

/// `umount` of a test's mount point when dropped.
struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).stderr(Stdio::null()).status();
    }
}

fn mounted(mnt: &Path, source: &str) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(mnt.to_str().unwrap_or("")) && l.contains(source))
}

/// Markers of the `reanimator fs` workload.
const FS_MARKERS: &[&str] = &[
    "Mk0LowerMount", // the mount point of the lower directory's file system (fs_lower_mount)
    "Mk0TmpfsSource", // that file system's source (fs_lower_device)
    "Mk0LowerDir",   // the lower directory (fs_lower)
    "Mk0FsMount",    // the tracing file system's mount point (fs_mountpoint, paths)
    "Mk0FilterWord", // named by the --filter expression (fs_filter, the command)
    "Mk0FsPreFile",  // a file there before the mount
    "Mk0FsXName",    // its xattr's name (cp -a copies it)
    "Mk0FsXValue",   // its xattr's value
    "Mk0FsDir",      // made on the mount
    "Mk0FsFile",     // written on the mount
    "Mk0FsContent",  // what is written
    "Mk0FsRenamed",  // mv's new name
    "Mk0FsLink",     // ln -s
    "Mk0FsTarget",   // its target
    "Mk0CommName",   // a program's name: the thread name `fs` records
];

#[test]
fn nothing_of_a_marked_fs_mount_survives_fields_all() {
    let ok_mount = if rustix::process::geteuid().is_root() && Path::new("/dev/fuse").exists() {
        Ok(())
    } else {
        Err("needs root and /dev/fuse".to_string())
    };
    if !ra_testkit::privileged("anonymize: a reanimator fs mount", ok_mount) || !have_program("cp")
    {
        return;
    }
    let mut c = Case::new("attack-fs");
    let lower_mount = c.base.join("Mk0LowerMount");
    std::fs::create_dir(&lower_mount).unwrap();
    let o = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16m", "Mk0TmpfsSource"])
        .arg(&lower_mount)
        .output()
        .unwrap();
    assert!(o.status.success(), "mount: {}", String::from_utf8_lossy(&o.stderr));
    let _lower_guard = Unmount(lower_mount.clone());
    let lower = lower_mount.join("Mk0LowerDir");
    std::fs::create_dir(&lower).unwrap();
    std::fs::write(lower.join("Mk0FsPreFile"), "x\n").unwrap();
    set_xattr(&lower.join("Mk0FsPreFile"), "user.Mk0FsXName", b"Mk0FsXValue");
    let prog = c.base.join("Mk0CommName");
    std::fs::copy("/bin/cat", &prog).unwrap();
    let mnt = c.base.join("Mk0FsMount");
    std::fs::create_dir(&mnt).unwrap();
    let trace = c.base.join("fs.ds");
    let t0 = now_ns();
    let mut daemon = bin()
        .args(["fs", "mount"])
        .arg(&lower)
        .arg(&mnt)
        .arg("-o")
        .arg(&trace)
        .args(["--filter", "path !~ \"*Mk0FilterWord*\""])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _mnt_guard = Unmount(mnt.clone());
    let since = std::time::Instant::now();
    while !mounted(&mnt, &format!("reanimator:{}", daemon.id())) {
        assert!(daemon.try_wait().unwrap().is_none(), "fs mount exited");
        assert!(since.elapsed().as_secs() < 10, "the mount did not come up");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let script = format!(
        "set -e
        mkdir Mk0FsDir
        echo Mk0FsContent > Mk0FsDir/Mk0FsFile
        cp -a Mk0FsPreFile Mk0FsDir/
        ln -s Mk0FsTarget Mk0FsLink
        mv Mk0FsDir/Mk0FsFile Mk0FsDir/Mk0FsRenamed
        {} Mk0FsDir/Mk0FsRenamed > /dev/null
        ls -la . Mk0FsDir > /dev/null",
        prog.display()
    );
    let o = Command::new("sh").args(["-c", &script]).current_dir(&mnt).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin().args(["fs", "umount"]).arg(&mnt).output().unwrap();
    assert!(o.status.success(), "fs umount: {}", String::from_utf8_lossy(&o.stderr));
    let out = daemon.wait_with_output().unwrap();
    assert!(out.status.success(), "fs: {}", String::from_utf8_lossy(&out.stderr));
    let t1 = now_ns();
    attack(&mut c, &trace, FS_MARKERS, t0 - 5_000_000_000, t1);
    replays_alike(&mut c, &trace);
}

/// Markers of a recording of a cgroup (eBPF).
const CG_MARKERS: &[&str] = &[
    "Mk0CgroupName", // the cgroup (the `cgroup` and `command` facts)
    "Mk0CgFile",     // a file its process writes to
    "Mk0CgTick",     // what it writes
];

#[test]
fn nothing_of_a_marked_cgroup_recording_survives_fields_all() {
    if !ra_testkit::ebpf_available() {
        return;
    }
    let Some(cg_root) = ra_testkit::cgroup2_root() else {
        ra_testkit::privileged("anonymize: --cgroup", Err("no cgroup2 file system".into()));
        return;
    };
    let mut c = Case::new("attack-cg");
    let cg = cg_root.join(format!("Mk0CgroupName{}", std::process::id()));
    std::fs::create_dir(&cg).unwrap();
    struct Rmdir(PathBuf);
    impl Drop for Rmdir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _cg_guard = Rmdir(cg.clone());
    let script = format!(
        "echo $$ > {}/cgroup.procs && i=0 && while [ $i -lt 100 ]; do \
         echo Mk0CgTick$i >> Mk0CgFile; i=$((i+1)); sleep 0.05; done",
        cg.display()
    );
    let mut member = Command::new("sh").args(["-c", &script]).current_dir(&c.work).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let trace = c.base.join("cg.ds");
    let t0 = now_ns();
    let mut rec = bin()
        .args(["record", "-q", "--backend", "ebpf", "-o"])
        .arg(&trace)
        .arg("--cgroup")
        .arg(&cg)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3000));
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(rec.id() as i32, libc::SIGINT) };
    let st = rec.wait().unwrap();
    let t1 = now_ns();
    let _ = member.kill();
    let _ = member.wait();
    assert!(st.success(), "{st:?}");
    attack(&mut c, &trace, CG_MARKERS, t0 - 1_000_000_000, t1);
}
