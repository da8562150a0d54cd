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

use ra_fsstate::{Entry, Kind, ScanOptions, Scanner};
use ra_testkit::{assert_clean_failure, have_program};
use ra_trace::anonymize::{map_entries, DataMode, Field, Forward, Mapper, Pseudonymizer};
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
        let raw: Vec<u8> =
            (0..32).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
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
    // cmdline too: argv and the `command` fact name the files as well.
    let mut opts =
        vec!["--fields", "path,uid,gid,pid,comm,hostname,cmdline", "--data", data.name()];
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
