//! Conformance of `reanimator record` with the registry's capture rules.
//!
//! `crates/testkit/c/workload.c` makes every call of the default (`storage`) capture set through
//! `syscall(2)` with sentinel arguments and logs each call (arguments, buffers, result) as one
//! JSON line; its header comment documents the format. This test records the workload, reads
//! the trace back with [`TraceReader`], and checks, for every logged call, that the trace holds
//! the same call in the same process, in the same order, with the same arguments (integers,
//! captured bytes, iovecs, string arrays), return value and errno. It reports every mismatch at
//! once.
//!
//! Both backends run it (`ptrace`, `ebpf`): the same workload must give the same trace. The eBPF
//! run skips with a printed reason where eBPF cannot run (not root, no BTF) and fails instead
//! under REANIMATOR_REQUIRE_PRIVILEGED=1 (CI).
//!
//! It also checks that the workload exercises every registry call of the storage set except
//! the documented [`EXCLUDED`] ones: adding a syscall to the registry without adding it to the
//! workload fails here.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ra_syscalls::{ArgKind, SyscallDef, REGISTRY};
use ra_trace::{ArgValue, Event, TraceReader};
use serde_json::Value;

use common::bin;

/// Calls of the storage capture set the workload does not make, with the reason. Keep in sync
/// with the comment at the top of `crates/testkit/c/workload.c`.
const EXCLUDED: &[(&str, &str)] = &[
    ("mmappread", "Re-Animator pseudo-call synthesized by a tracer; no syscall number"),
    ("mmappwrite", "Re-Animator pseudo-call synthesized by a tracer; no syscall number"),
    ("io_uring_op", "an io_uring request, not a call: crates/cli/tests/record_uring.rs"),
    ("signal_deliver", "a delivered signal, no call: tests/signals.rs records real programs'"),
];

#[test]
fn ptrace_captures_every_storage_call_as_the_workload_made_it() {
    conformance("ptrace");
}

#[test]
fn ebpf_captures_every_storage_call_as_the_workload_made_it() {
    if ra_testkit::ebpf_available() {
        conformance("ebpf");
    }
}

fn conformance(backend: &str) {
    let base = ra_testkit::scratch_dir(&format!("conformance-{backend}"));
    let scratch = base.join("scratch");
    let log = base.join("workload.jsonl");
    let trace = base.join("workload.ds");
    let workload = ra_testkit::program("workload");

    let out = bin()
        .args(["record", "--backend", backend, "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&workload)
        .arg(&scratch)
        .arg(&log)
        .output()
        .expect("run reanimator record");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "reanimator record --backend {backend} -o {} -- {} {} {}: {}\nstderr:\n{stderr}",
        trace.display(),
        workload.display(),
        scratch.display(),
        log.display(),
        out.status
    );

    let wl = Log::read(&log);
    let problems = check(&wl, &trace);
    if !problems.is_empty() {
        panic!(
            "{backend}: {} conformance problem(s) (files kept in {}):\n  {}",
            problems.len(),
            base.display(),
            problems.join("\n  ")
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// The workload's log.
struct Log {
    log_fd: i64,
    pid: i64,
    uid: i64,
    gid: i64,
    calls: Vec<Logged>,
}

/// One logged call.
struct Logged {
    line: usize,
    pid: i64,
    call: String,
    args: Vec<(String, Expect)>,
    ret: Option<i64>,
    errno: Option<i64>,
}

/// What the trace must hold for one argument (see the format in workload.c).
#[derive(Debug)]
enum Expect {
    Int(i64),
    Null,
    Bytes(Vec<u8>),
    /// An in/out struct: the bytes before or after the call.
    InOut(Vec<u8>, Vec<u8>),
    Iov(Vec<(u64, Vec<u8>)>),
    Strings(Vec<Vec<u8>>),
    /// Data (or iovec data) that contains these bytes.
    Contains(Vec<u8>),
}

impl Log {
    fn read(path: &Path) -> Log {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("read the workload log {}: {e}", path.display()));
        let mut lines = text.lines().enumerate();
        let (_, first) = lines.next().expect("the workload log is empty");
        let h: Value = serde_json::from_str(first).expect("log line 1 is JSON");
        let int = |v: &Value, k: &str| {
            v[k].as_i64().unwrap_or_else(|| panic!("log line 1: no integer `{k}`: {first}"))
        };
        let mut log = Log {
            log_fd: int(&h, "log_fd"),
            pid: int(&h, "pid"),
            uid: int(&h, "uid"),
            gid: int(&h, "gid"),
            calls: Vec::new(),
        };
        for (i, l) in lines {
            let line = i + 1;
            let v: Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("log line {line} is not JSON ({e}): {l}"));
            let args = v["args"]
                .as_object()
                .unwrap_or_else(|| panic!("log line {line}: no args object: {l}"))
                .iter()
                .map(|(k, a)| (k.clone(), Expect::parse(a, line)))
                .collect();
            log.calls.push(Logged {
                line,
                pid: v["pid"].as_i64().unwrap_or_else(|| panic!("log line {line}: no pid")),
                call: v["call"]
                    .as_str()
                    .unwrap_or_else(|| panic!("log line {line}: no call"))
                    .to_string(),
                args,
                ret: v["ret"].as_i64(),
                errno: v["errno"].as_i64(),
            });
        }
        log
    }
}

fn unhex(v: &Value, line: usize) -> Vec<u8> {
    let s = v.as_str().unwrap_or_else(|| panic!("log line {line}: hex is not a string: {v}"));
    ra_hex::decode(s).unwrap_or_else(|| panic!("log line {line}: bad hex: {s}"))
}

impl Expect {
    fn parse(v: &Value, line: usize) -> Expect {
        if let Some(i) = v.as_i64() {
            return Expect::Int(i);
        }
        if v.is_null() {
            return Expect::Null;
        }
        if let Some(h) = v.get("hex") {
            return Expect::Bytes(unhex(h, line));
        }
        if let (Some(a), Some(b)) = (v.get("in_hex"), v.get("out_hex")) {
            return Expect::InOut(unhex(a, line), unhex(b, line));
        }
        if let Some(h) = v.get("contains_hex") {
            return Expect::Contains(unhex(h, line));
        }
        if let Some(vs) = v.get("iov").and_then(Value::as_array) {
            return Expect::Iov(
                vs.iter()
                    .map(|x| {
                        let req = x["requested"]
                            .as_u64()
                            .unwrap_or_else(|| panic!("log line {line}: iov without requested"));
                        (req, unhex(&x["hex"], line))
                    })
                    .collect(),
            );
        }
        if let Some(vs) = v.get("strings").and_then(Value::as_array) {
            return Expect::Strings(vs.iter().map(|x| unhex(x, line)).collect());
        }
        panic!("log line {line}: unknown argument value {v}");
    }

    /// None when `got` conforms, else what was expected.
    fn check(&self, kind: ArgKind, got: &ArgValue) -> Option<String> {
        let ok = match (self, got) {
            (Expect::Int(e), ArgValue::Int(g)) => e == g,
            // A NULL pointer that is only recorded may be kept as absent.
            (Expect::Int(0), ArgValue::Absent) => kind == ArgKind::Addr,
            (Expect::Null, ArgValue::Absent) => true,
            (Expect::Bytes(e), ArgValue::Data(g)) => e == g,
            (Expect::InOut(a, b), ArgValue::Data(g)) => a == g || b == g,
            (Expect::Iov(e), ArgValue::Iov(g)) => {
                e.len() == g.len()
                    && e.iter().zip(g).all(|((req, data), gv)| {
                        gv.requested == *req
                            && match &gv.data {
                                Some(d) => d == data,
                                None => data.is_empty(),
                            }
                    })
            }
            (Expect::Strings(e), ArgValue::Strings(g)) => e == g,
            (Expect::Contains(e), ArgValue::Data(g)) => contains(g, e),
            (Expect::Contains(e), ArgValue::Iov(g)) => {
                let all: Vec<u8> = g.iter().filter_map(|v| v.data.clone()).flatten().collect();
                contains(&all, e)
            }
            _ => false,
        };
        (!ok).then(|| self.show())
    }

    fn show(&self) -> String {
        match self {
            Expect::Int(i) => format!("Int({i})"),
            Expect::Null => "Absent".to_string(),
            Expect::Bytes(b) => format!("Data({})", show_bytes(b)),
            Expect::InOut(a, b) => format!("Data({}) or Data({})", show_bytes(a), show_bytes(b)),
            Expect::Iov(v) => format!(
                "Iov[{}]",
                v.iter()
                    .map(|(r, d)| format!("{r}: {}", show_bytes(d)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Expect::Strings(v) => {
                format!(
                    "Strings[{}]",
                    v.iter().map(|s| show_bytes(s)).collect::<Vec<_>>().join(", ")
                )
            }
            Expect::Contains(b) => format!("Data or Iov containing {}", show_bytes(b)),
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

/// `N bytes "escaped"`, cut at 48 bytes.
fn show_bytes(b: &[u8]) -> String {
    let cut = &b[..b.len().min(48)];
    format!(
        "{} bytes \"{}{}\"",
        b.len(),
        cut.escape_ascii(),
        if b.len() > cut.len() { "..." } else { "" }
    )
}

fn show_value(v: &ArgValue) -> String {
    match v {
        ArgValue::Absent => "Absent".to_string(),
        ArgValue::NotCaptured => "NotCaptured".to_string(),
        ArgValue::Int(i) => format!("Int({i})"),
        ArgValue::Data(d) => format!("Data({})", show_bytes(d)),
        ArgValue::Iov(v) => format!(
            "Iov[{}]",
            v.iter()
                .map(|x| match &x.data {
                    Some(d) => format!("{}: {}", x.requested, show_bytes(d)),
                    None => format!("{}: no data", x.requested),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ArgValue::Strings(v) => {
            format!("Strings[{}]", v.iter().map(|s| show_bytes(s)).collect::<Vec<_>>().join(", "))
        }
        ArgValue::Hashed { len, .. } => format!("Hashed({len} bytes)"),
    }
}

fn def_name(ev: &Event) -> &str {
    ev.def.map_or(ev.name.as_str(), |d| d.name)
}

/// Every problem found, one line each.
fn check(wl: &Log, trace: &Path) -> Vec<String> {
    let mut problems = Vec::new();

    // Coverage: every storage call is logged, or excluded with a reason.
    let logged: BTreeSet<&str> = wl.calls.iter().map(|c| c.call.as_str()).collect();
    let storage: Vec<&SyscallDef> = REGISTRY.iter().filter(|d| d.class.is_storage()).collect();
    for d in &storage {
        let excluded = EXCLUDED.iter().any(|(n, _)| *n == d.name);
        if !logged.contains(d.name) && !excluded {
            problems.push(format!(
                "registry call `{}` ({:?}) is not exercised: add it to crates/testkit/c/workload.c \
                 (or to EXCLUDED with the reason)",
                d.name, d.class
            ));
        }
    }
    for (n, why) in EXCLUDED {
        if !storage.iter().any(|d| d.name == *n) {
            problems.push(format!("EXCLUDED `{n}` ({why}) is not a storage-set registry call"));
        }
        if logged.contains(n) {
            problems.push(format!("EXCLUDED `{n}` is made by the workload: drop the exclusion"));
        }
    }

    // The trace.
    let reader = match TraceReader::open(trace) {
        Ok(r) => r,
        Err(e) => {
            problems.push(format!("open the trace {}: {e}", trace.display()));
            return problems;
        }
    };
    if !reader.is_complete() {
        problems.push("the trace has no valid trailer".to_string());
    }
    for l in reader.lost() {
        problems.push(format!("the trace records losses: {l:?}"));
    }
    let mut by_pid: BTreeMap<i64, Vec<Event>> = BTreeMap::new();
    for ev in reader.events(None) {
        match ev {
            // Delivered signals (the children's SIGCHLD) are no calls of the workload's.
            Ok(ev) if ev.def.is_some_and(|d| d.is_signal()) => {}
            Ok(ev) => match ev.pid {
                Some(p) => by_pid.entry(i64::from(p)).or_default().push(ev),
                None => problems.push(format!("event #{} {} has no pid", ev.unique_id, ev.name)),
            },
            Err(e) => {
                problems.push(format!("reading events: {e}"));
                break;
            }
        }
    }

    let is_log_write = |ev: &Event| {
        def_name(ev) == "write" && ev.arg("fd").and_then(ArgValue::as_int) == Some(wl.log_fd)
    };
    let pids: BTreeSet<i64> = wl.calls.iter().map(|c| c.pid).collect();
    let mut matched = 0usize;
    for &pid in &pids {
        let empty = Vec::new();
        let evs = by_pid.get(&pid).unwrap_or(&empty);
        if evs.is_empty() {
            problems.push(format!("pid {pid}: no events in the trace"));
            continue;
        }
        // The main process starts at its first log write; glibc's startup comes before.
        let mut cursor = if pid == wl.pid {
            match evs.iter().position(is_log_write) {
                Some(i) => i + 1,
                None => {
                    problems.push(format!(
                        "pid {pid}: no write to the log fd {} in the trace",
                        wl.log_fd
                    ));
                    continue;
                }
            }
        } else {
            0
        };
        for c in wl.calls.iter().filter(|c| c.pid == pid) {
            let at = format!("log line {} pid {pid} {}", c.line, c.call);
            let Some(def) = ra_syscalls::lookup(&c.call).filter(|d| d.name == c.call) else {
                problems.push(format!("{at}: not a registry call"));
                continue;
            };
            let mut j = cursor;
            let mut unexpected = Vec::new();
            while j < evs.len() && (is_log_write(&evs[j]) || def_name(&evs[j]) != def.name) {
                if !is_log_write(&evs[j]) {
                    unexpected.push(format!("#{} {}", evs[j].unique_id, evs[j].name));
                }
                j += 1;
            }
            if j == evs.len() {
                problems.push(format!(
                    "{at}: not in the trace (no `{}` event of pid {pid} after the previous match)",
                    def.trace_name
                ));
                continue;
            }
            if !unexpected.is_empty() {
                problems
                    .push(format!("{at}: unexpected events before it: {}", unexpected.join(", ")));
            }
            cursor = j + 1;
            matched += 1;
            compare(wl, c, def, &evs[j], &at, &mut problems);
        }
    }
    eprintln!(
        "record conformance: {matched} of {} logged calls found, {} distinct calls, {} processes",
        wl.calls.len(),
        logged.len(),
        pids.len()
    );
    problems
}

/// One logged call against its event.
fn compare(wl: &Log, c: &Logged, def: &SyscallDef, ev: &Event, at: &str, out: &mut Vec<String>) {
    let at = format!("{at} (event #{})", ev.unique_id);
    let mut bad = |what: String| out.push(format!("{at}: {what}"));
    if ev.name != def.trace_name {
        bad(format!("trace name `{}`, want `{}`", ev.name, def.trace_name));
    }
    if let Some(r) = c.ret {
        if ev.ret != Some(r) {
            bad(format!("ret {:?}, want {r}", ev.ret));
        }
    }
    if let Some(e) = c.errno {
        if ev.errno.map(i64::from) != Some(e) {
            bad(format!("errno {:?}, want {e}", ev.errno));
        }
    }
    if ev.tid.map(i64::from) != Some(c.pid) {
        bad(format!("tid {:?}, want {} (no threads here)", ev.tid, c.pid));
    }
    if c.pid != wl.pid && ev.ppid.map(i64::from) != Some(wl.pid) {
        bad(format!("ppid {:?}, want {} (the workload)", ev.ppid, wl.pid));
    }
    if ev.uid.map(i64::from) != Some(wl.uid) || ev.gid.map(i64::from) != Some(wl.gid) {
        bad(format!("uid/gid {:?}/{:?}, want {}/{}", ev.uid, ev.gid, wl.uid, wl.gid));
    }
    match (ev.time_called, ev.time_returned) {
        (Some(a), Some(b)) if b < a => bad(format!("time_returned {b} < time_called {a}")),
        (None, _) => bad("no time_called".to_string()),
        _ => {}
    }
    if ev.args.len() != def.args.len() {
        bad(format!("{} args, the registry has {}", ev.args.len(), def.args.len()));
        return;
    }
    let logged: BTreeSet<&str> = c.args.iter().map(|(n, _)| n.as_str()).collect();
    let registry: BTreeSet<&str> = def.args.iter().map(|a| a.name).collect();
    if logged != registry {
        bad(format!(
            "the workload logs args {logged:?}, the registry has {registry:?}: update workload.c"
        ));
    }
    for (name, want) in &c.args {
        let Some((i, a)) = def.arg(name) else { continue };
        if let Some(w) = want.check(a.kind, &ev.args[i]) {
            bad(format!("arg `{name}` ({:?}) = {}, want {w}", a.kind, show_value(&ev.args[i])));
        }
    }
}
