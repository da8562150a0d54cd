//! Comparing what a replayed call did with what the trace recorded, and the report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ra_trace::structs::{Stat, Statfs, Statx};
use ra_trace::ArgValue;

/// One difference between the recording and the replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// What differs: `return value`, `errno`, `data`, `stat.size`, `getdents names`, ...
    pub what: String,
    /// The recorded value, rendered for the report (bounded: data as its length and at most
    /// 24 escaped bytes from 8 before the first difference, or a digest's first bytes; errnos
    /// by name).
    pub expected: String,
    /// The replayed value, rendered like `expected`.
    pub actual: String,
}

impl Diff {
    /// A difference in `what`: recorded `expected`, replayed `actual`.
    pub fn new(
        what: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Diff {
        Diff { what: what.into(), expected: expected.into(), actual: actual.into() }
    }
}

/// Printable, bounded rendering of bytes (C-style escapes, at most `max` bytes).
pub fn show(b: &[u8], max: usize) -> String {
    let mut s = String::from("\"");
    ra_trace::format::escape_bytes(&mut s, &b[..b.len().min(max)]);
    s.push('"');
    if b.len() > max {
        let _ = write!(s, "... ({} bytes)", b.len());
    }
    s
}

/// Errno as its name (`ENOENT`) or number.
pub fn errno_str(e: i32) -> String {
    if e == 0 {
        return "0 (success)".into();
    }
    ra_trace::format::errno_name(e).map_or_else(|| e.to_string(), str::to_string)
}

/// Compare returned bytes with the recorded buffer (full data or a BLAKE3 digest).
pub fn data(what: &str, expected: &ArgValue, actual: &[u8]) -> Option<Diff> {
    match expected {
        ArgValue::Data(d) => {
            if d[..] == *actual {
                return None;
            }
            let at =
                d.iter().zip(actual).position(|(a, b)| a != b).unwrap_or(d.len().min(actual.len()));
            let from = at.saturating_sub(8);
            Some(Diff::new(
                format!("{what} (first difference at byte {at})"),
                format!("{} bytes, {}", d.len(), show(&d[from.min(d.len())..], 24)),
                format!("{} bytes, {}", actual.len(), show(&actual[from.min(actual.len())..], 24)),
            ))
        }
        ArgValue::Hashed { len, blake3 } => {
            let h = blake3::hash(actual);
            if *len == actual.len() as u64 && h.as_bytes() == blake3 {
                return None;
            }
            Some(Diff::new(
                format!("{what} (digest)"),
                format!("{len} bytes, blake3 {}", hex8(blake3)),
                format!("{} bytes, blake3 {}", actual.len(), hex8(h.as_bytes())),
            ))
        }
        _ => None,
    }
}

fn hex8(b: &[u8]) -> String {
    ra_hex::encode(&b[..b.len().min(8)])
}

/// Compare `struct stat` results, except times, inode and device numbers and block counts
/// (which depend on the file system's allocation, not on what the program did).
pub fn stat(expected: &ArgValue, actual: &[u8]) -> Vec<Diff> {
    let (Some(e), Some(a)) = (expected.as_data().and_then(Stat::decode), Stat::decode(actual))
    else {
        return Vec::new();
    };
    let mut v = Vec::new();
    let mut cmp = |f: &str, x: i64, y: i64, oct: bool| {
        if x != y {
            let fmt = |n: i64| if oct { format!("0{n:o}") } else { n.to_string() };
            v.push(Diff::new(format!("stat.{f}"), fmt(x), fmt(y)));
        }
    };
    cmp("st_mode", e.mode.into(), a.mode.into(), true);
    cmp("st_nlink", e.nlink as i64, a.nlink as i64, false);
    cmp("st_uid", e.uid.into(), a.uid.into(), false);
    cmp("st_gid", e.gid.into(), a.gid.into(), false);
    cmp("st_size", e.size, a.size, false);
    cmp("st_rdev", e.rdev as i64, a.rdev as i64, false);
    v
}

/// Compare `struct statx` results like [`stat`], for the members both masks hold.
pub fn statx(expected: &ArgValue, actual: &[u8]) -> Vec<Diff> {
    let (Some(e), Some(a)) = (expected.as_data().and_then(Statx::decode), Statx::decode(actual))
    else {
        return Vec::new();
    };
    let both = e.mask & a.mask;
    let mut v = Vec::new();
    let mut cmp = |bit: u32, f: &str, x: u64, y: u64, oct: bool| {
        if both & bit != 0 && x != y {
            let fmt = |n: u64| if oct { format!("0{n:o}") } else { n.to_string() };
            v.push(Diff::new(format!("statx.{f}"), fmt(x), fmt(y)));
        }
    };
    cmp(libc::STATX_TYPE | libc::STATX_MODE, "stx_mode", e.mode.into(), a.mode.into(), true);
    cmp(libc::STATX_NLINK, "stx_nlink", e.nlink.into(), a.nlink.into(), false);
    cmp(libc::STATX_UID, "stx_uid", e.uid.into(), a.uid.into(), false);
    cmp(libc::STATX_GID, "stx_gid", e.gid.into(), a.gid.into(), false);
    cmp(libc::STATX_SIZE, "stx_size", e.size, a.size, false);
    v
}

/// Compare `struct statfs`: the file-system type and name length (free space and counts
/// change with everything else on the machine).
pub fn statfs(expected: &ArgValue, actual: &[u8]) -> Vec<Diff> {
    let (Some(e), Some(a)) = (expected.as_data().and_then(Statfs::decode), Statfs::decode(actual))
    else {
        return Vec::new();
    };
    let mut v = Vec::new();
    if e.fs_type != a.fs_type {
        v.push(Diff::new(
            "statfs.f_type",
            format!("{:#x}", e.fs_type),
            format!("{:#x}", a.fs_type),
        ));
    }
    if e.namelen != a.namelen {
        v.push(Diff::new("statfs.f_namelen", e.namelen.to_string(), a.namelen.to_string()));
    }
    v
}

/// Compare two NUL-separated name lists (listxattr) as sets.
pub fn name_set(what: &str, expected: &ArgValue, actual: &[u8]) -> Option<Diff> {
    let ArgValue::Data(e) = expected else { return None };
    let set = |b: &[u8]| -> std::collections::BTreeSet<Vec<u8>> {
        b.split(|&c| c == 0).filter(|s| !s.is_empty()).map(<[u8]>::to_vec).collect()
    };
    let (se, sa) = (set(e), set(actual));
    if se == sa {
        return None;
    }
    let fmt = |s: &std::collections::BTreeSet<Vec<u8>>| {
        s.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect::<Vec<_>>().join(", ")
    };
    Some(Diff::new(what, fmt(&se), fmt(&sa)))
}

/// One mismatch, as the report lists it.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// The call's `unique_id` in the trace; the report lists mismatches in this order.
    pub unique_id: u64,
    /// The call's name (`read`, `openat`, ...).
    pub call: String,
    /// The recorded thread id (None when the trace has none).
    pub tid: Option<i32>,
    /// What differed; a call with several differences gives one `Mismatch` for each.
    pub diff: Diff,
}

/// Per-call counts.
#[derive(Clone, Debug, Default)]
pub struct CallStats {
    /// Calls taken from the trace.
    pub replayed: u64,
    /// Issued again to the kernel.
    pub issued: u64,
    /// Applied to the replayer's own model (fd tables, cwd, processes, mappings).
    pub emulated: u64,
    /// Not issued: the recorded result stands (sockets, inherited descriptors).
    pub simulated: u64,
    /// Recorded for analysis only (getcwd, rlimits).
    pub skipped: u64,
    /// Issued or emulated, and everything verified matched.
    pub matched: u64,
    /// Issued or emulated, and something differed.
    pub mismatched: u64,
}

impl CallStats {
    /// Adds `o`'s counts to these, field by field.
    pub fn add(&mut self, o: &CallStats) {
        self.replayed += o.replayed;
        self.issued += o.issued;
        self.emulated += o.emulated;
        self.simulated += o.simulated;
        self.skipped += o.skipped;
        self.matched += o.matched;
        self.mismatched += o.mismatched;
    }
}

/// What a replay did and found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Counts by call name (`openat`, `read`, ...); [`Report::totals`] sums them.
    pub per_call: BTreeMap<String, CallStats>,
    /// The first mismatches (up to [`crate::Options::keep_mismatches`]), sorted by
    /// `unique_id` when the replay ends.
    pub mismatches: Vec<Mismatch>,
    /// Verified calls with at least one difference, all of them (not only those listed in
    /// `mismatches`).
    pub mismatch_total: u64,
    /// Record types replay doesn't know, with counts (skipped).
    pub unknown: BTreeMap<String, u64>,
    /// Other things worth saying (counted, once each).
    pub warnings: BTreeMap<String, u64>,
    /// Traced threads that had calls replayed (each got an executor task).
    pub threads: u64,
    /// Processes replayed: those first seen in the trace plus those made by recorded clones
    /// and forks.
    pub processes: u64,
    /// Wall-clock time of the replay, ns, from the start of [`crate::replay_from`] until its
    /// threads were joined (initial state not included).
    pub elapsed_ns: u64,
    /// Recorded time from the first call's call time to the latest return time, ns; 0 for a
    /// trace without calls.
    pub trace_span_ns: u64,
    /// Why the replay stopped early (`interrupted`, `stalled: ...`, `first mismatch at
    /// unique_id N ...`); None when every call was replayed.
    pub aborted: Option<String>,
    /// Files the initial state step created, and how.
    pub init: Vec<(String, String)>,
    /// Final state checks: (what was compared, differences found, first differences).
    pub final_state: Vec<(String, u64, Vec<String>)>,
    /// `--timing`: its scale factor, and how close to their due times calls were issued.
    pub timing: Option<f64>,
    /// `--timing`: the workers' issue-time errors and spin time, merged ([`crate::timing`]);
    /// empty for an AFAP replay.
    pub pacer: crate::timing::Pacer,
    /// `--reads`: which reads of files were replayed.
    pub reads: Option<crate::Reads>,
    /// The trace's read-ahead thread and how often the dispatcher waited for it.
    pub prefetch: Option<PrefetchStats>,
    /// Replayed from a compiled plan: its path and the trace it was compiled from.
    pub plan: Option<(String, String)>,
    /// Page faults the worker threads waited on the disk for (major faults): pages of a
    /// plan's memory map that the read-ahead had not brought in (a trace's buffers are the
    /// process's own memory).
    pub worker_major_faults: u64,
}

/// The read-ahead (`--prefetch`): its horizon, and the dispatcher's waits for it.
#[derive(Clone, Debug, Default)]
pub struct PrefetchStats {
    /// Batches the read-ahead channel holds (at least 2), from [`crate::Options::prefetch_events`]
    /// and [`crate::Options::prefetch_bytes`].
    pub slots: usize,
    /// The horizon in calls: `slots` times the calls per batch (256).
    pub horizon_events: usize,
    /// The horizon in data bytes: `slots` times the bytes per batch (1 MiB).
    pub horizon_bytes: usize,
    /// Times the dispatcher found nothing read ahead and waited.
    pub stalls: u64,
    /// Time the dispatcher spent in those waits, ns.
    pub stalled_ns: u64,
    /// ... of which the workers had nothing left to run (the replay waited on the trace).
    pub starved: u64,
    /// Time spent in the starved waits, ns.
    pub starved_ns: u64,
}

impl Report {
    /// The counts of every call name summed.
    pub fn totals(&self) -> CallStats {
        let mut t = CallStats::default();
        for s in self.per_call.values() {
            t.add(s);
        }
        t
    }

    /// Counts one occurrence of the warning `w` (each distinct text is listed once, with its
    /// count).
    pub fn warn(&mut self, w: impl Into<String>) {
        *self.warnings.entry(w.into()).or_default() += 1;
    }

    /// Merge an executor's partial report.
    pub fn merge(&mut self, o: Report, keep: usize) {
        for (k, v) in o.per_call {
            self.per_call.entry(k).or_default().add(&v);
        }
        self.mismatch_total += o.mismatch_total;
        for m in o.mismatches {
            if self.mismatches.len() < keep {
                self.mismatches.push(m);
            }
        }
        for (k, v) in o.unknown {
            *self.unknown.entry(k).or_default() += v;
        }
        for (k, v) in o.warnings {
            *self.warnings.entry(k).or_default() += v;
        }
        if self.aborted.is_none() {
            self.aborted = o.aborted;
        }
        self.pacer.merge(&o.pacer);
        self.timing = self.timing.or(o.timing);
        self.worker_major_faults += o.worker_major_faults;
    }

    /// True when every verified call matched and the final state (if checked) is identical.
    pub fn clean(&self) -> bool {
        self.mismatch_total == 0
            && self.final_state.iter().all(|f| f.1 == 0)
            && self.aborted.is_none()
    }

    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let stats = |s: &CallStats| {
            json!({"replayed": s.replayed, "issued": s.issued, "emulated": s.emulated,
                   "simulated": s.simulated, "skipped": s.skipped, "matched": s.matched,
                   "mismatched": s.mismatched})
        };
        let t = self.totals();
        json!({
            "totals": stats(&t),
            "per_call": self.per_call.iter().map(|(k, v)| (k.clone(), stats(v))).collect::<serde_json::Map<_, _>>(),
            "mismatch_total": self.mismatch_total,
            "mismatches": self.mismatches.iter().map(|m| json!({
                "unique_id": m.unique_id, "call": m.call, "tid": m.tid, "what": m.diff.what,
                "expected": m.diff.expected, "actual": m.diff.actual})).collect::<Vec<_>>(),
            "unknown_calls": self.unknown,
            "warnings": self.warnings,
            "threads": self.threads,
            "processes": self.processes,
            "elapsed_s": self.elapsed_ns as f64 / 1e9,
            "trace_span_s": self.trace_span_ns as f64 / 1e9,
            "aborted": self.aborted,
            "init": self.init.iter().map(|(a, b)| json!({"what": a, "detail": b})).collect::<Vec<_>>(),
            "final_state": self.final_state.iter().map(|(w, n, first)| json!({
                "compared": w, "differences": n, "first": first})).collect::<Vec<_>>(),
            "timing": self.timing.map(|k| self.pacer.to_json(k)),
            "reads": self.reads.map(crate::Reads::name),
            "plan": self.plan.as_ref().map(|(p, t)| json!({"path": p, "compiled_from": t})),
            "prefetch": self.prefetch.as_ref().map(|p| json!({
                "horizon_calls": p.horizon_events, "horizon_bytes": p.horizon_bytes,
                "stalls": p.stalls, "stalled_s": p.stalled_ns as f64 / 1e9,
                "starved": p.starved, "starved_s": p.starved_ns as f64 / 1e9,
                "worker_major_faults": self.worker_major_faults})),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_compares_bytes_and_digests() {
        assert!(data("buf", &ArgValue::data(b"abc".to_vec()), b"abc").is_none());
        let d = data("buf", &ArgValue::data(b"abcdef".to_vec()), b"abXdef").unwrap();
        assert!(d.what.contains("byte 2"), "{d:?}");
        let h = *blake3::hash(b"xyz").as_bytes();
        assert!(data("buf", &ArgValue::Hashed { len: 3, blake3: h }, b"xyz").is_none());
        assert!(data("buf", &ArgValue::Hashed { len: 3, blake3: h }, b"xyZ").is_some());
        assert!(data("buf", &ArgValue::NotCaptured, b"q").is_none());
    }

    #[test]
    fn name_sets_ignore_order() {
        let e = ArgValue::data(b"user.a\0user.b\0".to_vec());
        assert!(name_set("xattrs", &e, b"user.b\0user.a\0").is_none());
        assert!(name_set("xattrs", &e, b"user.b\0").is_some());
    }
}
