//! End-to-end tests of the `reanimator` binary: `info` and `dump` on our example trace, on real
//! Re-Animator traces, on third-party DataSeries files, and on bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::bin;

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run reanimator")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example() -> String {
    repo().join("testdata/example.ds").to_string_lossy().into_owned()
}

/// A third-party fixture under ../shared/testdata/dataseries, or None (skip) when absent.
fn shared(rel: &str) -> Option<String> {
    ra_testkit::shared_testdata(&format!("dataseries/{rel}"))
        .map(|p| p.to_string_lossy().into_owned())
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ra-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&d);
    d
}

#[test]
fn info_describes_the_example_trace() {
    let o = run(&["info", &example()]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("reanimator system-call trace, schema 6"), "{out}");
    assert!(out.contains("complete (trailer valid, index verified against the extents)"), "{out}");
    assert!(out.contains("command            cat /etc/hostname"), "{out}");
    assert!(out.contains("IOTTAFSL::Trace::Syscall::openat"), "{out}");
    assert!(out.contains("Time span   2025-11-22T08:26:40.000000000Z"), "{out}");
    let o = run(&["info", "--json", &example()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["kind"], "reanimator");
    assert_eq!(v["complete"], true);
    assert_eq!(v["verified"], true);
    // 10 events in 16 records (execve takes 1 + 3 strings + 1, writev 1 + 2), plus 6 info
    // records and 2 watermarks (at creation and at the end, TRACE_FORMAT 3.12).
    assert_eq!(v["records"], 24);
    // Numbers are numbers, every time nanoseconds since the epoch (`_ns`).
    assert_eq!(v["info"]["schema_version"], 6);
    assert_eq!(v["time_span"]["first_ns"], 1_763_800_000_000_000_000i64);
    assert_eq!(v["time_span"]["duration_ns"], 300_000);
    assert!(v["time_span"].get("first").is_none(), "one time format: {}", v["time_span"]);
    let calls: u64 = v["types"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with("IOTTAFSL::Trace::Syscall::"))
        .map(|t| t["records"].as_u64().unwrap())
        .sum();
    assert_eq!(calls, 16);
}

#[test]
fn dump_prints_strace_like_lines_in_order() {
    let o = run(&["dump", &example()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    // Ten calls, and the end of the process after exit_group, as strace shows it.
    assert_eq!(lines.len(), 11, "{out}");
    assert_eq!(lines[10].trim(), "[4242] +++ exited with 0 +++", "{out}");
    assert!(
        lines[0]
            .contains(r#"execve("/usr/bin/cat", ["cat", "/etc/hostname"], ["LANG=C.UTF-8"]) = 0"#),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(r#"openat(AT_FDCWD, "/etc/ld.so.preload", O_RDONLY|O_CLOEXEC"#),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains(", 0) = -1 ENOENT"), "{}", lines[1]);
    assert!(
        lines[2].contains(r#"openat(AT_FDCWD, "/etc/hostname", O_RDONLY|O_CLOEXEC"#)
            && lines[2].contains("= 3"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("st_mode=S_IFREG|0644") && lines[3].contains("st_size=15"),
        "{}",
        lines[3]
    );
    // Descriptors followed (strace -y): the open's result and every use of it.
    assert!(lines[2].contains(") = 3</etc/hostname>"), "{}", lines[2]);
    assert!(lines[3].contains("fstat(3</etc/hostname>, {"), "{}", lines[3]);
    assert!(
        lines[4].contains(r#"read(3</etc/hostname>, "reanimator-vm\n\n", 131072) = 15"#),
        "{}",
        lines[4]
    );
    assert!(lines[7].contains("close(3</etc/hostname>) = 0"), "{}", lines[7]);
    assert!(lines[5].contains(r#"writev(1, [{iov_base="reanimator-vm\n", iov_len=14}, {iov_base="\n", iov_len=1}], 2) = 15"#), "{}", lines[5]);
    let ids: Vec<u64> =
        lines[..10].iter().map(|l| l.split_whitespace().next().unwrap().parse().unwrap()).collect();
    // Without following descriptors, the numbers alone.
    let o = run(&["dump", &example(), "--no-decode-fds", "--type", "read"]);
    assert!(stdout(&o).contains(r#"read(3, "reanimator-vm"#), "{}", stdout(&o));
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn dump_filters_and_formats() {
    let o = run(&["dump", &example(), "--where", "call == read && ret > 0"]);
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
    let o = run(&["dump", &example(), "--where", r#"path ~ "/etc/*" && errno_name == ENOENT"#]);
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
    let o = run(&["dump", &example(), "--type", "close,fstat"]);
    assert_eq!(stdout(&o).lines().count(), 3, "{}", stdout(&o));
    let o = run(&["dump", &example(), "-n", "2"]);
    assert_eq!(stdout(&o).lines().count(), 2);
    // JSON lines: one object per event, buffers as strings.
    let o = run(&["dump", &example(), "--format", "jsonl"]);
    let objs: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(objs.len(), 10);
    assert_eq!(objs[4]["call"], "read");
    assert_eq!(objs[4]["args"]["buf"], "reanimator-vm\n\n");
    assert_eq!(objs[1]["errno_name"], "ENOENT");
    // Paths are JSON strings without the stored NUL (jq can use them); every event's path.
    let with_path: Vec<_> = objs.iter().filter(|o| o["args"].get("pathname").is_some()).collect();
    assert!(with_path.len() >= 2, "{objs:?}");
    for o in with_path {
        let p = o["args"]["pathname"].as_str().unwrap_or_else(|| panic!("{o}"));
        assert!(p.starts_with('/') && !p.contains('\0'), "{p:?}");
    }
    // CSV of one call type: the schema's field names as the header row.
    let o = run(&["dump", &example(), "--format", "csv", "--type", "read"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out.lines().next().unwrap();
    for f in
        ["unique_id", "time_called", "return_value", "descriptor", "bytes_requested", "data_read"]
    {
        assert!(header.split(',').any(|h| h == f), "{f} in {header}");
    }
    // Two records; a buffer holding newlines is one quoted field spanning lines (RFC 4180).
    assert_eq!(out.lines().filter(|l| l.starts_with("F,")).count(), 2, "{out}");
    // (The last column, cache_miss_pages, is null: the example is not an eBPF recording.)
    assert!(out.contains("\"reanimator-vm\n\n\",3,\n"), "{out}");
    // CSV of all events: fixed columns, named as jsonl's fields.
    let o = run(&["dump", &example(), "--format", "csv"]);
    let out = stdout(&o);
    assert!(out.starts_with(
        "unique_id,call,syscall,time_called,time_returned,pid,tid,ppid,uid,gid,return_value,\
         errno,errno_name,buffer_not_captured,args,extra,fd_path,fd_path2\n"
    ));
    // The read of /etc/hostname: its descriptor's file in fd_path, fd_path2 empty.
    assert!(out.contains(",/etc/hostname,\n"), "{out}");
    // JSON lines carry them too.
    let o = run(&["dump", &example(), "--format", "jsonl", "--type", "read,openat"]);
    let objs: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(objs[1]["ret_fd_path"], "/etc/hostname");
    assert_eq!(objs[2]["fd_path"], "/etc/hostname");
    assert_eq!(objs[2]["fd_path2"], serde_json::Value::Null);
}

#[test]
fn bad_input_gives_one_clear_line() {
    let e = ra_testkit::assert_clean_failure(&run(&["dump", &example(), "--where", "pathh == 1"]));
    assert!(e.contains("unknown field `pathh`; did you mean `path`?"), "{e}");
    let e = ra_testkit::assert_clean_failure(&run(&["dump", &example(), "--where", "ret >"]));
    assert!(e.contains("--where"), "{e}");
    let e = ra_testkit::assert_clean_failure(&run(&["dump", &example(), "--type", "raed"]));
    assert!(e.contains("did you mean `read`"), "{e}");
    let e = ra_testkit::assert_clean_failure(&run(&["info", "/nonexistent/trace.ds"]));
    assert!(e.contains("/nonexistent/trace.ds"), "{e}");
    // Not a DataSeries file at all.
    let e = ra_testkit::assert_clean_failure(&run(&[
        "info",
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli.rs"),
    ]));
    assert!(e.contains("not a DataSeries file: it begins with \"//! End-to-end t\"..."), "{e}");
    assert!(e.contains("(a text file), not \"DSv1\""), "{e}");
    // Unknown flag: clap's usage error, exit 2.
    let o = run(&["dump", "--bogus", &example()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn truncated_trace_keeps_what_was_written() {
    let bytes = std::fs::read(example()).unwrap();
    // Cut inside the last extents: the trailer is gone and one extent is partial.
    let cut = tmp("cut.ds");
    std::fs::write(&cut, &bytes[..bytes.len() - 200]).unwrap();
    // What a recorder killed while writing leaves: described, not refused.
    let o = run(&["info", cut.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("unfinished") && out.contains("ends inside the extent at offset"),
        "{out}"
    );
    let all = stdout(&run(&["dump", &example()]));
    let o = run(&["dump", cut.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("ends inside the extent"), "{}", stderr(&o));
    // Only the index extent was cut: every record is still there.
    assert_eq!(stdout(&o), all);
    // Cut into the last call extent: the records before it, and a one-line error from the
    // raw reader.
    let ds = dataseries::DsReader::open(example()).unwrap();
    let last = ds
        .headers()
        .map(Result::unwrap)
        .filter(|h| h.type_name.starts_with("IOTTAFSL::Trace::Syscall::"))
        .last()
        .unwrap();
    let half = tmp("half.ds");
    std::fs::write(&half, &bytes[..(last.offset + last.packed_len / 2) as usize]).unwrap();
    let o = run(&["dump", half.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let n = stdout(&o).lines().count();
    assert!(n > 0 && n < all.lines().count(), "{n} of {} lines", all.lines().count());
    let o = run(&["dump", "--raw", half.to_str().unwrap()]);
    let err = ra_testkit::assert_clean_failure(&o);
    assert!(err.contains("half.ds"), "{err}");
}

#[test]
fn dump_of_real_reanimator_traces_shows_the_programs() {
    let Some(ls) = shared("reanimator-replayer/output-ee34491.ds") else { return };
    let o = run(&["dump", &ls]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.lines().next().unwrap().contains("umask(")
            && out.lines().next().unwrap().contains("(synthetic)")
    );
    assert!(out.contains(r#"execve("/bin/ls", ["/bin/ls"]"#), "{}", &out[..out.len().min(2000)]);
    assert!(out.contains("getdents(3, "), "getdents shown (of \".\": no cwd in the trace)");
    // Descriptors followed in Re-Animator's own traces too (its full_pathname column).
    assert!(out.contains("read(3</lib/x86_64-linux-gnu/libc.so.6>, "), "descriptor paths");
    assert!(out.contains(r#"openat(AT_FDCWD, "/etc/ld.so.cache""#));
    let Some(cat) = shared("reanimator-replayer/output_lsR.ds") else { return };
    let out = stdout(&run(&["dump", &cat, "--type", "execve"]));
    assert!(out.contains(r#"execve("/bin/cat""#), "{out}");
    let Some(mt) = shared("reanimator-replayer/mt.ds") else { return };
    let o = run(&["dump", &mt, "--format", "jsonl"]);
    let tids: std::collections::BTreeSet<i64> = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()?["tid"].as_i64())
        .collect();
    assert_eq!(tids.len(), 4, "four threads in mt.ds");
    let o = run(&["info", &mt]);
    assert!(stdout(&o).contains("Re-Animator system-call trace"));
}

#[test]
fn third_party_dataseries_files_dump_like_ds2txt() {
    let Some(le) = shared("dataseries-check-data/complex.ds-littleend") else { return };
    let Some(be) = shared("dataseries-check-data/complex.ds-bigend") else { return };
    let expected = std::fs::read_to_string(Path::new(&le).with_file_name("complex.txt")).unwrap();
    // complex.txt = ds2txt's type section, then the records; `dump` prints the records part
    // exactly (the type section is `info`'s job).
    let records_part = &expected[expected.find("# Extent, type=").unwrap()..];
    for f in [&le, &be] {
        let o = run(&["dump", f]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o) == records_part, "{f}: dump differs from complex.txt");
    }
    let Some(edges) = shared("dataseries-examples/few-edges.ds") else { return };
    let want = std::fs::read_to_string(Path::new(&edges).with_file_name("few-edges.sort")).unwrap();
    let o = run(&["dump", &edges, "--format", "csv"]);
    let got: Vec<String> = stdout(&o).lines().skip(1).map(|l| l.replace(',', " ")).collect();
    let want: Vec<&str> = want.lines().collect();
    assert_eq!(stdout(&o).lines().next(), Some("a,b"));
    assert_eq!(got, want);
    let o = run(&["dump", &edges, "--where", "a == 0 && b > 2", "--format", "jsonl"]);
    assert!(stdout(&o).lines().all(|l| l.contains(r#""a":0"#)));
    // NFS file handles are binary: escaped as strace does, never raw on the terminal.
    let Some(nfs) = shared("dataseries-check-data/nfs-2.set-1.20k.ds") else { return };
    let o = run(&["dump", &nfs, "-n", "5", "-s", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.is_ascii() && !out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    assert!(out.contains(r#" "\xb0\x95\x03\x01"#), "{out}");
    assert!(out.contains(" \"file\" ") || out.contains(" file "), "{out}");
    let o = run(&["dump", &nfs, "-n", "2", "--type", "Trace::NFS::attr-ops", "-f", "csv"]);
    let out = stdout(&o);
    assert!(out.is_ascii() && out.contains(r"\xb0\x95"), "{out}");
}

#[test]
fn corrupt_dataseries_files_name_the_bad_extent() {
    for (name, offset, check) in [
        ("corrupt-100-zeros-at-50K.ds", "42256", "adler32"),
        ("corrupt-stomp-beginning.ds", "40", "adler32"),
        ("corrupt-two-extents.ds", "544", "adler32"),
    ] {
        let Some(f) = shared(&format!("dataseries-check-data/recovery/{name}")) else { return };
        let o = run(&["info", &f]);
        let e = ra_testkit::assert_clean_failure(&o);
        assert!(e.contains(offset) && e.to_lowercase().contains(check), "{name}: {e}");
        let o = run(&["dump", &f]);
        ra_testkit::assert_clean_failure(&o);
    }
    let Some(f) = shared("dataseries-check-data/recovery/corrupt-stomp-end.ds") else { return };
    // The tail is destroyed: info reports it; the extents before it still read.
    let o = run(&["info", &f]);
    let out = stdout(&o);
    assert!(out.contains("trailer"), "{out}");
    let o = run(&["dump", &f, "-n", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).lines().filter(|l| !l.starts_with('#')).count() >= 3);
}

/// The README's first command after the install step: scripts/demo.sh records sqlite3, shows
/// the trace, replays it with verification and diffs the trees; it must end identical.
#[test]
fn the_readme_demo_records_replays_and_ends_identical() {
    if !ra_testkit::have_program("sqlite3") {
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/demo.sh");
    let o = std::process::Command::new("bash")
        .arg(&script)
        .env("REANIMATOR", env!("CARGO_BIN_EXE_reanimator"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "demo.sh: {out}\n{err}");
    assert!(out.contains("verified: every call matched"), "{out}");
    assert!(out.contains("against its recorded end state: identical"), "{out}");
    assert!(out.contains("no differences"), "{out}");
}

/// `--key` is offered where a key is read, and only there (it was a global option every
/// command listed); anonymize, which writes a file, offers no network flags.
#[test]
fn help_offers_key_and_network_flags_only_where_they_apply() {
    let help = |args: &[&str]| {
        let mut a = args.to_vec();
        a.push("--help");
        let o = run(&a);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        stdout(&o)
    };
    for c in [
        &["info"][..],
        &["dump"],
        &["replay"],
        &["compile"],
        &["profile"],
        &["export"],
        &["diff"],
        &["verify"],
        &["collect"],
        &["anonymize"],
        &["record"],
        &["fs", "mount"],
    ] {
        assert!(help(c).contains("--key <KEYFILE>"), "{c:?} reads a key");
    }
    for c in [&["snapshot"][..], &["keygen"], &["fs", "umount"], &["profile", "merge"]] {
        assert!(!help(c).contains("--key <KEYFILE>"), "{c:?} reads no key");
    }
    let a = help(&["anonymize"]);
    assert!(!a.contains("--spill") && !a.contains("--net-buffer"), "{a}");
    assert!(help(&["record"]).contains("--spill"));
    // Given where the command reads none: refused, not ignored.
    let o = run(&["snapshot", "--key", "k", ".", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--key"), "{}", stderr(&o));
}
