//! `reanimator profile` end to end: offline profiles of real traces recorded here (ptrace,
//! unprivileged) and of Re-Animator's own traces, JSON that merges exactly, SVG heat maps
//! checked by rendering them, and bad input.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use common::bin;

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run reanimator")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    ra_testkit::scratch_dir(&format!("profile-{name}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Record `cmd` with the ptrace backend (no privileges needed).
fn record(trace: &Path, cmd: &[&str]) {
    let o = bin()
        .args(["record", "--backend", "ptrace", "-q", "-o", s(trace), "--"])
        .args(cmd)
        .output()
        .unwrap();
    assert!(o.status.success(), "record: {}", String::from_utf8_lossy(&o.stderr));
}

fn lines(json: &str) -> Vec<Value> {
    json.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// The `hist` lines by (start_ns, layer, op, group), without the fields that legitimately
/// differ between a profile and a merge of its parts (`partial`, `end_ns` of a single
/// interval).
fn hists(v: &[Value]) -> BTreeMap<(u64, String, String, String), Value> {
    v.iter()
        .filter(|l| l["type"] == "hist")
        .map(|l| {
            let mut c = l.clone();
            let o = c.as_object_mut().unwrap();
            o.remove("partial");
            let key = (
                l["start_ns"].as_u64().unwrap(),
                l["layer"].as_str().unwrap().to_string(),
                l["op"].as_str().unwrap().to_string(),
                l["group"].as_str().unwrap().to_string(),
            );
            (key, c)
        })
        .collect()
}

#[test]
fn profile_of_a_recorded_program_adds_up() {
    let d = scratch("cat");
    let input = d.join("in.bin");
    std::fs::write(&input, vec![7u8; 300_000]).unwrap();
    let trace = d.join("t.ds");
    record(&trace, &["cat", s(&input)]);
    let text = ok(&run(&["profile", s(&trace)]));
    assert!(text.contains("syscall read  count "), "{text}");
    assert!(text.contains("nsecs               : count    distribution"), "{text}");
    assert!(text.contains("check: ok (buckets"), "{text}");
    assert!(!text.contains("CHECK FAILED"), "{text}");
    let table = ok(&run(&["profile", s(&trace), "--table", "--by", "pid"]));
    assert!(table.lines().any(|l| l.starts_with("syscall") && l.contains("pid=")), "{table}");
    // The syscall histograms count every record that has a latency, once.
    let json = lines(&ok(&run(&["profile", s(&trace), "--json"])));
    assert_eq!(json[0]["type"], "meta");
    let events: Vec<ra_trace::Event> =
        ra_trace::TraceReader::open(&trace).unwrap().events(None).map(|e| e.unwrap()).collect();
    let timed = events.iter().filter(|e| e.duration_ns().is_some_and(|d| d >= 0)).count() as u64;
    let counted: u64 = json
        .iter()
        .filter(|l| l["type"] == "hist" && l["layer"] == "syscall")
        .map(|l| l["count"].as_u64().unwrap())
        .sum();
    let classes: u64 = json
        .iter()
        .filter(|l| l["type"] == "hist" && l["layer"] == "class")
        .map(|l| l["count"].as_u64().unwrap())
        .sum();
    assert_eq!((counted, classes), (timed, timed));
    assert!(json.iter().filter(|l| l["type"] == "hist").all(|l| l["check_ok"] == true));
    let reads = events.iter().filter(|e| e.name == "read").count() as u64;
    let read = json
        .iter()
        .find(|l| l["type"] == "hist" && l["layer"] == "syscall" && l["op"] == "read")
        .unwrap();
    assert_eq!(read["count"].as_u64(), Some(reads));
}

#[test]
fn halves_merge_to_the_whole() {
    let d = scratch("halves");
    let trace = d.join("t.ds");
    record(
        &trace,
        &["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do cat /etc/hostname >/dev/null; done"],
    );
    let n = ra_trace::TraceReader::open(&trace).unwrap().events(None).count();
    let cut = format!("unique_id < {}", n / 2);
    let rest = format!("unique_id >= {}", n / 2);
    for interval in ["0.001", "0.0003"] {
        let profile = |extra: &[&str], out: &Path| {
            let mut args =
                vec!["profile", s(&trace), "--json", "--interval", interval, "-o", s(out)];
            args.extend_from_slice(extra);
            ok(&run(&args));
        };
        let (w, a, b, m) = (d.join("w.json"), d.join("a.json"), d.join("b.json"), d.join("m.json"));
        profile(&[], &w);
        profile(&["--where", &cut], &a);
        profile(&["--where", &rest], &b);
        ok(&run(&["profile", "merge", s(&a), s(&b), "-o", s(&m)]));
        let whole = lines(&std::fs::read_to_string(&w).unwrap());
        let merged = lines(&std::fs::read_to_string(&m).unwrap());
        assert!(hists(&whole).len() > 2, "several intervals and keys");
        assert_eq!(hists(&merged), hists(&whole), "interval {interval}");
        // --total: one interval whose counts are the whole profile's sums.
        let t = lines(&ok(&run(&["profile", "merge", "--total", s(&a), s(&b)])));
        let total = |v: &[Value]| -> u64 {
            v.iter().filter(|l| l["type"] == "hist").map(|l| l["count"].as_u64().unwrap()).sum()
        };
        assert_eq!(total(&t), total(&whole));
        assert_eq!(t.iter().filter(|l| l["type"] == "interval").count(), 1);
    }
}

#[test]
fn reanimator_traces_profile_and_report_calls_without_latency() {
    let Some(ls) = ra_testkit::shared_testdata("dataseries/reanimator-replayer/output-ee34491.ds")
    else {
        return;
    };
    let o = run(&["profile", s(&ls), "--json"]);
    let json = lines(&ok(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("without a latency") && err.contains("exit"), "{err}");
    let hist = |op: &str| {
        json.iter().find(|l| l["type"] == "hist" && l["layer"] == "syscall" && l["op"] == op)
    };
    assert!(hist("openat").is_some() && hist("getdents").is_some(), "{json:?}");
    assert!(json.iter().filter(|l| l["type"] == "hist").all(|l| l["check_ok"] == true));
    let counters = json.iter().find(|l| l["type"] == "counters").expect("a counters line");
    assert_eq!(counters["counters"]["no_latency"], 1);
    // The JSON profile shown again as text.
    let d = scratch("ls");
    let j = d.join("p.json");
    ok(&run(&["profile", s(&ls), "--json", "-o", s(&j)]));
    let text = ok(&run(&["profile", s(&j), "-T"]));
    assert!(text.contains("syscall openat  count"), "{text}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let d = scratch("bad");
    let junk = d.join("junk.json");
    std::fs::write(&junk, "hello\n").unwrap();
    ra_testkit::assert_clean_failure(&run(&["profile", "merge", s(&junk)]));
    let no_meta = d.join("nometa.json");
    std::fs::write(&no_meta, "{\"type\":\"hist\"}\n").unwrap();
    let e = ra_testkit::assert_clean_failure(&run(&["profile", s(&no_meta)]));
    assert!(e.contains("line 1"), "{e}");
    let a = d.join("a.json");
    let b = d.join("b.json");
    std::fs::write(&a, "{\"type\":\"meta\",\"interval_ns\":1000,\"by\":\"call\"}\n").unwrap();
    std::fs::write(&b, "{\"type\":\"meta\",\"interval_ns\":2000,\"by\":\"call\"}\n").unwrap();
    let e = ra_testkit::assert_clean_failure(&run(&["profile", "merge", s(&a), s(&b)]));
    assert!(e.contains("interval lengths differ"), "{e}");
    let text = d.join("t.txt");
    std::fs::write(&text, "not a trace at all").unwrap();
    ra_testkit::assert_clean_failure(&run(&["profile", s(&text)]));
    ra_testkit::assert_clean_failure(&run(&["profile", s(&a), "--where", "call =="]));
    ra_testkit::assert_clean_failure(&run(&["profile"]));
}

/// A synthetic profile with counts in known cells, drawn, rendered by rsvg-convert and
/// looked at: those cells are red / yellow, an empty one is white, the picture is not blank.
#[test]
fn svg_heat_map_renders_counts_where_they_are() {
    if !ra_testkit::have_program("rsvg-convert") {
        return;
    }
    let d = scratch("svg");
    let mut p = String::from("{\"type\":\"meta\",\"source\":\"test\",\"target\":\"synthetic\",\"interval_ns\":1000000000,\"by\":\"call\"}\n");
    // 4 intervals; interval 0 has 100 ops in bucket 10, interval 3 one op in bucket 20.
    for i in 0..4u64 {
        let (start, end) = (i * 1_000_000_000, (i + 1) * 1_000_000_000);
        p.push_str(&format!("{{\"type\":\"interval\",\"start_ns\":{start},\"end_ns\":{end}}}\n"));
        let (b, n, ns) = match i {
            0 => (10, 100u64, 600u64),
            3 => (20, 1, 600_000),
            _ => continue,
        };
        p.push_str(&format!(
            "{{\"type\":\"hist\",\"start_ns\":{start},\"end_ns\":{end},\"layer\":\"syscall\",\"op\":\"read\",\"group\":\"\",\"count\":{n},\"errors\":0,\"total_ns\":{},\"min_ns\":{ns},\"max_ns\":{ns},\"first_bucket\":{b},\"buckets\":[{n}]}}\n",
            n * ns
        ));
    }
    let json = d.join("p.json");
    std::fs::write(&json, p).unwrap();
    let svg = d.join("p.svg");
    ok(&run(&["profile", s(&json), "--svg", s(&svg)]));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<title>") && text.contains("synthetic"), "{text}");
    let png = d.join("p.png");
    let o = Command::new("rsvg-convert").args(["-o", s(&png), s(&svg)]).output().unwrap();
    assert!(o.status.success(), "rsvg-convert: {}", String::from_utf8_lossy(&o.stderr));
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    let px = |x: usize, y: usize| {
        let i = (y * info.width as usize + x) * ch;
        (buf[i], buf[i + 1], buf[i + 2])
    };
    // The layout (ra_profile::svg): heat map at x 70, first row at y 68, 12 px rows with the
    // longest bucket (20) on top, 24 px columns for 4 intervals.
    let cell = |col: usize, bucket: usize| px(70 + col * 24 + 12, 68 + (20 - bucket) * 12 + 6);
    let (r, g, b) = cell(0, 10);
    assert!(r > 200 && g < 80 && b < 80, "the 100-op cell is red: {:?}", (r, g, b));
    let (r, g, b) = cell(3, 20);
    assert!(r > 200 && g > 200 && b < 160, "the 1-op cell is yellow: {:?}", (r, g, b));
    for (col, bucket) in [(1, 15), (2, 10), (0, 20), (3, 10)] {
        let (r, g, b) = cell(col, bucket);
        assert!(
            r > 245 && g > 245 && b > 245,
            "empty cell ({col}, {bucket}) is white: {:?}",
            (r, g, b)
        );
    }
    let dark = (0..info.height as usize)
        .flat_map(|y| (0..info.width as usize).map(move |x| (x, y)))
        .filter(|&(x, y)| px(x, y).0 < 128)
        .count();
    assert!(dark > 200, "text and bars are drawn ({dark} dark pixels)");
}

/// An aggregate-only fs trace (`fs mount --aggregate-only`) holds histograms, not operations:
/// `profile` shows them (the counts the daemon aggregated), and `dump` says what the trace
/// holds instead of printing nothing (both printed nothing before).
#[test]
fn an_aggregate_only_fs_trace_profiles_from_its_rows_and_dump_says_so() {
    let root = rustix::process::geteuid().is_root() && Path::new("/dev/fuse").exists();
    if !ra_testkit::privileged(
        "reanimator fs",
        if root { Ok(()) } else { Err("needs root".into()) },
    ) {
        return;
    }
    let d = scratch("aggregate-only");
    let (lower, mnt, trace) = (d.join("lower"), d.join("mnt"), d.join("agg.ds"));
    std::fs::create_dir_all(&lower).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    ok(&run(&[
        "fs",
        "mount",
        s(&lower),
        s(&mnt),
        "-o",
        s(&trace),
        "--aggregate",
        "1",
        "--aggregate-only",
        "--daemon",
    ]));
    for i in 0..5 {
        std::fs::write(mnt.join(format!("f{i}")), b"data").unwrap();
    }
    let reads =
        (0..5).map(|i| std::fs::read(mnt.join(format!("f{i}"))).unwrap().len()).sum::<usize>();
    assert_eq!(reads, 20);
    ok(&run(&["fs", "umount", s(&mnt)]));
    let o = run(&["dump", s(&trace)]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("aggregate rows") && err.contains("reanimator profile"), "{err}");
    let o = run(&["profile", s(&trace), "--json"]);
    let v = lines(&ok(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no per-operation records"));
    let creates: u64 = hists(&v)
        .iter()
        .filter(|((_, layer, op, _), _)| layer == "fs" && op == "create")
        .map(|(_, h)| h["count"].as_u64().unwrap())
        .sum();
    assert_eq!(creates, 5, "{v:?}");
    let o = run(&["profile", s(&trace), "--where", "op == read"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}
