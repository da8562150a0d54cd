//! Differential replay: the same trace replayed into several roots, call by call.
//!
//! Each replay gets an [`OutcomeSink`] ([`crate::Options::outcomes`]); every call the replay
//! accounts for (its mode, result or errno, a digest of the data it returned, whether it
//! matched the recording) becomes a fixed-size record of [`RECORD_BYTES`] in an unlinked spill
//! file. Executors finish calls out of `unique_id` order, so records are buffered in runs of
//! at most [`RUN_RECORDS`], each sorted and appended to the file; [`OutcomeSink::finish`] gives
//! [`Outcomes`], a k-way merge of the runs in `unique_id` order. [`compare`] merge-joins the
//! roots' streams and keeps what differs. Memory stays bounded in bytes whatever the trace's
//! length: one run per replay while it runs, one small read buffer per run while merging.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use ra_trace::Event;

use crate::calls::{Mode, Outcome, Rule};
use crate::verify::errno_str;
use crate::world::lock;

/// Bytes per call in the spill file.
pub const RECORD_BYTES: usize = 48;
/// Records sorted in memory before they go to the spill file as one run (12 MiB).
pub const RUN_RECORDS: usize = 256 * 1024;
/// Records read ahead per run while merging.
const READ_RECORDS: usize = 128;

/// A call's result as the roots are compared on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Res {
    /// Succeeded with this value (compared exactly).
    Value(i64),
    /// Succeeded; the value is not comparable (an address, a thread id).
    Success,
    /// Failed with this errno.
    Errno(i32),
}

impl Res {
    fn encode(self) -> (u8, i64) {
        match self {
            Res::Value(v) => (0, v),
            Res::Success => (1, 0),
            Res::Errno(e) => (2, e.into()),
        }
    }
    fn decode(kind: u8, v: i64) -> Res {
        match kind {
            0 => Res::Value(v),
            1 => Res::Success,
            _ => Res::Errno(v as i32),
        }
    }
    /// `3`, `success`, `-1 ENOSPC`.
    pub fn show(self) -> String {
        match self {
            Res::Value(v) => v.to_string(),
            Res::Success => "success".into(),
            Res::Errno(e) => format!("-1 {}", errno_str(e)),
        }
    }
}

/// How a call was replayed (see [`crate::calls::Mode`]).
fn mode_code(m: Mode) -> u8 {
    match m {
        Mode::Issued => 0,
        Mode::Emulated => 1,
        Mode::Simulated => 2,
        Mode::Skipped => 3,
    }
}

/// The name of a mode code.
pub fn mode_name(code: u8) -> &'static str {
    ["issued", "emulated", "simulated", "skipped"].get(usize::from(code)).copied().unwrap_or("?")
}

/// One root's outcome of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallOutcome {
    /// The call's `unique_id` in the trace: the key the roots' streams are joined on.
    pub unique_id: u64,
    name: u16,
    /// `issued`, `emulated`, `simulated`, `skipped` ([`mode_name`]).
    pub mode: u8,
    /// The replayed result: the errno on failure, [`Res::Success`] where only success is
    /// compared ([`crate::calls::Rule::Success`]), else the return value.
    pub res: Res,
    /// The recorded result (a call recorded with neither return value nor errno counts as
    /// [`Res::Success`]).
    pub recorded: Res,
    /// Whether everything verified matched the recording; None when the call was not
    /// verified (simulated or skipped, or `--verify none`).
    pub matches_recording: Option<bool>,
    /// The first 16 bytes of the BLAKE3 digest of the data the call returned, in the form
    /// verification compares it ([`crate::calls::Outcome::digest`]).
    pub digest: Option<[u8; 16]>,
}

impl CallOutcome {
    /// What roots are compared on: mode, result and returned data.
    fn key(&self) -> (u8, Res, Option<[u8; 16]>) {
        (self.mode, self.res, self.digest)
    }

    fn encode(&self, b: &mut [u8]) {
        let (k, v) = self.res.encode();
        let (rk, rv) = self.recorded.encode();
        b[0..8].copy_from_slice(&self.unique_id.to_le_bytes());
        b[8..16].copy_from_slice(&v.to_le_bytes());
        b[16..24].copy_from_slice(&rv.to_le_bytes());
        b[24..26].copy_from_slice(&self.name.to_le_bytes());
        b[26] = k;
        b[27] = rk;
        b[28] = match self.matches_recording {
            None => 0,
            Some(true) => 1,
            Some(false) => 2,
        };
        b[29] = self.mode;
        b[30] = u8::from(self.digest.is_some());
        b[31] = 0;
        b[32..48].copy_from_slice(&self.digest.unwrap_or_default());
    }

    fn decode(b: &[u8]) -> CallOutcome {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        CallOutcome {
            unique_id: u64_at(0),
            res: Res::decode(b[26], u64_at(8) as i64),
            recorded: Res::decode(b[27], u64_at(16) as i64),
            name: u16::from_le_bytes([b[24], b[25]]),
            matches_recording: match b[28] {
                0 => None,
                1 => Some(true),
                _ => Some(false),
            },
            mode: b[29],
            digest: (b[30] != 0).then(|| b[32..48].try_into().expect("16 bytes")),
        }
    }
}

struct SinkState {
    file: File,
    /// Bytes written so far.
    written: u64,
    /// (first record, records) of each sorted run in the file.
    runs: Vec<(u64, u64)>,
    buf: Vec<CallOutcome>,
    run_records: usize,
    names: HashMap<String, u16>,
    name_list: Vec<String>,
    /// The first write error (reported by [`OutcomeSink::finish`]).
    error: Option<io::Error>,
}

impl SinkState {
    fn spill(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        // Stable: a unique_id's several records (if any) keep the order they were made in.
        self.buf.sort_by_key(|r| r.unique_id);
        let n = self.buf.len() as u64;
        if self.error.is_none() {
            let mut w = io::BufWriter::with_capacity(1 << 16, &self.file);
            let mut b = [0u8; RECORD_BYTES];
            let r = self
                .buf
                .iter()
                .try_for_each(|r| {
                    r.encode(&mut b);
                    w.write_all(&b)
                })
                .and_then(|()| w.flush());
            match r {
                Ok(()) => {
                    self.runs.push((self.written / RECORD_BYTES as u64, n));
                    self.written += n * RECORD_BYTES as u64;
                }
                Err(e) => self.error = Some(e),
            }
        }
        self.buf.clear();
    }
}

/// Where a replay writes the outcome of each call (see the module documentation). Cloning
/// shares it.
#[derive(Clone)]
pub struct OutcomeSink(Arc<Mutex<SinkState>>);

impl std::fmt::Debug for OutcomeSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutcomeSink")
    }
}

impl OutcomeSink {
    /// A sink spilling to an unlinked file in `dir`.
    pub fn new(dir: &Path) -> io::Result<OutcomeSink> {
        OutcomeSink::with_run(dir, RUN_RECORDS)
    }

    /// A sink whose runs hold at most `run_records` records.
    pub fn with_run(dir: &Path, run_records: usize) -> io::Result<OutcomeSink> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o600)
            .open(dir)?;
        Ok(OutcomeSink(Arc::new(Mutex::new(SinkState {
            file,
            written: 0,
            runs: Vec::new(),
            buf: Vec::new(),
            run_records: run_records.max(1),
            names: HashMap::new(),
            name_list: Vec::new(),
            error: None,
        }))))
    }

    /// Record one call's outcome.
    pub(crate) fn record(&self, ev: &Event, out: &Outcome, matched: Option<bool>) {
        let res = match (&out.res, out.rule) {
            (Err(e), _) => Res::Errno(*e),
            (Ok(_), Rule::Success) => Res::Success,
            (Ok(v), _) => Res::Value(*v),
        };
        let recorded = match ev.errno.filter(|&e| e != 0) {
            Some(e) => Res::Errno(e),
            None => ev.ret.map_or(Res::Success, Res::Value),
        };
        let digest = out.digest.map(|d| d[..16].try_into().expect("16 bytes"));
        let mut st = lock(&self.0);
        let name = match st.names.get(&ev.name) {
            Some(&i) => i,
            None => {
                let i = u16::try_from(st.name_list.len()).unwrap_or(u16::MAX);
                if i < u16::MAX {
                    st.name_list.push(ev.name.clone());
                    st.names.insert(ev.name.clone(), i);
                }
                i
            }
        };
        st.buf.push(CallOutcome {
            unique_id: ev.unique_id,
            name,
            mode: mode_code(out.mode),
            res,
            recorded,
            matches_recording: matched,
            digest,
        });
        if st.buf.len() >= st.run_records {
            st.spill();
        }
    }

    /// Everything recorded, in `unique_id` order. Records made after this go to a new,
    /// empty sink state (a sink is finished once, after its replay).
    pub fn finish(&self) -> io::Result<Outcomes> {
        let mut st = lock(&self.0);
        st.spill();
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        let file = st.file.try_clone()?;
        Ok(Outcomes {
            file: Arc::new(file),
            runs: std::mem::take(&mut st.runs),
            names: std::mem::take(&mut st.name_list),
        })
    }
}

/// One replay's outcomes, in `unique_id` order (iterate with [`Outcomes::iter`]).
pub struct Outcomes {
    file: Arc<File>,
    runs: Vec<(u64, u64)>,
    names: Vec<String>,
}

impl Outcomes {
    /// How many calls.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|r| r.1).sum()
    }

    /// No call's outcome was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The call name of an outcome.
    pub fn name(&self, o: &CallOutcome) -> &str {
        self.names.get(usize::from(o.name)).map_or("?", String::as_str)
    }

    /// The outcomes in `unique_id` order: a merge of the sorted runs.
    pub fn iter(&self) -> io::Result<Merge<'_>> {
        let mut m = Merge { runs: Vec::new(), heap: BinaryHeap::new() };
        for &(first, n) in &self.runs {
            let i = m.runs.len();
            m.runs.push(RunReader { file: &self.file, next: first, left: n, buf: Vec::new() });
            if let Some(o) = m.runs[i].pop()? {
                m.heap.push(Reverse((o.unique_id, i, Slot(o))));
            }
        }
        Ok(m)
    }
}

struct RunReader<'a> {
    file: &'a File,
    /// The next record to read from the file.
    next: u64,
    left: u64,
    /// Read ahead, reversed (popped from the end).
    buf: Vec<CallOutcome>,
}

impl RunReader<'_> {
    fn pop(&mut self) -> io::Result<Option<CallOutcome>> {
        if self.buf.is_empty() && self.left > 0 {
            let n = self.left.min(READ_RECORDS as u64) as usize;
            let mut b = vec![0u8; n * RECORD_BYTES];
            self.file.read_exact_at(&mut b, self.next * RECORD_BYTES as u64)?;
            self.buf = b.chunks_exact(RECORD_BYTES).rev().map(CallOutcome::decode).collect();
            self.next += n as u64;
            self.left -= n as u64;
        }
        Ok(self.buf.pop())
    }
}

/// Orders heap entries by (unique_id, run) only.
struct Slot(CallOutcome);
impl PartialEq for Slot {
    fn eq(&self, _: &Slot) -> bool {
        true
    }
}
impl Eq for Slot {}
impl PartialOrd for Slot {
    fn partial_cmp(&self, o: &Slot) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Slot {
    fn cmp(&self, _: &Slot) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

/// A k-way merge of an [`Outcomes`]' runs.
pub struct Merge<'a> {
    runs: Vec<RunReader<'a>>,
    heap: BinaryHeap<Reverse<(u64, usize, Slot)>>,
}

impl Iterator for Merge<'_> {
    type Item = io::Result<CallOutcome>;
    fn next(&mut self) -> Option<io::Result<CallOutcome>> {
        let Reverse((_, i, Slot(o))) = self.heap.pop()?;
        match self.runs[i].pop() {
            Ok(Some(n)) => self.heap.push(Reverse((n.unique_id, i, Slot(n)))),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        Some(Ok(o))
    }
}

/// One call on which the roots disagree.
#[derive(Clone, Debug)]
pub struct CallDifference {
    /// The call's `unique_id` in the trace.
    pub unique_id: u64,
    /// The call's name (`openat`, `read`, ...).
    pub call: String,
    /// The recorded result, from the first root that has the call.
    pub recorded: Res,
    /// Each root's outcome (the first, should a call have several records); None where the
    /// root's replay did not reach the call.
    pub outcomes: Vec<Option<CallOutcome>>,
}

/// How the roots' outcomes compare, call by call.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// Calls (unique_ids) in any root's outcomes.
    pub calls: u64,
    /// Calls on which the roots disagree (mode, result or returned data).
    pub differing: u64,
    /// ... per call name.
    pub per_call: BTreeMap<String, u64>,
    /// The first differing calls (up to the limit), in `unique_id` order.
    pub first: Vec<CallDifference>,
}

/// Merge-join the roots' outcomes by `unique_id`; keep the first `keep` differences.
pub fn compare(roots: &[Outcomes], keep: usize) -> io::Result<Comparison> {
    let mut its: Vec<std::iter::Peekable<Merge<'_>>> =
        roots.iter().map(|o| o.iter().map(Iterator::peekable)).collect::<io::Result<_>>()?;
    let mut c = Comparison::default();
    let mut group: Vec<Vec<CallOutcome>> = vec![Vec::new(); roots.len()];
    loop {
        // The smallest unique_id any root has next.
        let mut min: Option<u64> = None;
        for it in &mut its {
            match it.peek() {
                Some(Ok(o)) => min = Some(min.map_or(o.unique_id, |m| m.min(o.unique_id))),
                Some(Err(_)) => return Err(it.next().expect("peeked").expect_err("an error")),
                None => {}
            }
        }
        let Some(uid) = min else { break };
        c.calls += 1;
        for (g, it) in group.iter_mut().zip(&mut its) {
            g.clear();
            while let Some(o) = it.next_if(|o| o.as_ref().is_ok_and(|o| o.unique_id == uid)) {
                g.push(o?);
            }
        }
        let keys = |g: &Vec<CallOutcome>| g.iter().map(CallOutcome::key).collect::<Vec<_>>();
        let first = keys(&group[0]);
        if group.iter().skip(1).all(|g| keys(g) == first) {
            continue;
        }
        let (i, any) = group
            .iter()
            .enumerate()
            .find_map(|(i, g)| g.first().map(|o| (i, *o)))
            .expect("some root has the call");
        let call = roots[i].name(&any).to_string();
        c.differing += 1;
        *c.per_call.entry(call.clone()).or_default() += 1;
        if c.first.len() < keep {
            c.first.push(CallDifference {
                unique_id: uid,
                call,
                recorded: any.recorded,
                outcomes: group.iter().map(|g| g.first().copied()).collect(),
            });
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::Outcome;
    use crate::testutil::event;

    fn outcome(res: Result<i64, i32>, digest: Option<u8>) -> Outcome {
        Outcome {
            mode: Mode::Issued,
            res,
            rule: Rule::Exact,
            diffs: Vec::new(),
            warn: None,
            digest: digest.map(|d| [d; 32]),
        }
    }

    fn sink() -> OutcomeSink {
        // Runs of 3 records: the merge has several runs to join.
        OutcomeSink::with_run(&std::env::temp_dir(), 3).unwrap()
    }

    #[test]
    fn outcomes_come_back_in_unique_id_order_across_runs() {
        let s = sink();
        let order = [5u64, 1, 9, 2, 8, 3, 7, 4, 6, 0];
        for &uid in &order {
            let mut e = event("close", 1, 0, 0, &[]);
            e.unique_id = uid;
            s.record(&e, &outcome(Ok(uid as i64), Some(uid as u8)), Some(true));
        }
        let o = s.finish().unwrap();
        assert_eq!(o.len(), 10);
        assert_eq!(o.runs.len(), 4, "runs of at most 3");
        let got: Vec<CallOutcome> = o.iter().unwrap().map(Result::unwrap).collect();
        assert_eq!(
            got.iter().map(|c| c.unique_id).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        for c in &got {
            assert_eq!(o.name(c), "close");
            assert_eq!(c.res, Res::Value(c.unique_id as i64));
            assert_eq!(c.digest, Some([c.unique_id as u8; 16]));
            assert_eq!(c.recorded, Res::Value(0));
            assert_eq!(c.matches_recording, Some(true));
            assert_eq!(mode_name(c.mode), "issued");
        }
    }

    #[test]
    fn compare_reports_the_calls_where_roots_differ_and_only_those() {
        let (a, b, c) = (sink(), sink(), sink());
        for uid in 0..20u64 {
            let mut e = event("fallocate", 1, 0, 0, &[]);
            e.unique_id = uid;
            a.record(&e, &outcome(Ok(0), None), Some(true));
            // b fails call 7; c returns other data at call 12 and never reaches call 19.
            let rb = if uid == 7 { Err(libc::EOPNOTSUPP) } else { Ok(0) };
            b.record(&e, &outcome(rb, None), Some(uid != 7));
            if uid < 19 {
                c.record(&e, &outcome(Ok(0), (uid == 12).then_some(1)), Some(uid != 12));
            }
        }
        let roots = [a.finish().unwrap(), b.finish().unwrap(), c.finish().unwrap()];
        let cmp = compare(&roots, 2).unwrap();
        assert_eq!(cmp.calls, 20);
        assert_eq!(cmp.differing, 3);
        assert_eq!(cmp.per_call.get("fallocate"), Some(&3));
        assert_eq!(cmp.first.len(), 2, "kept at most 2");
        let d = &cmp.first[0];
        assert_eq!((d.unique_id, d.call.as_str(), d.recorded), (7, "fallocate", Res::Value(0)));
        assert_eq!(d.outcomes[1].unwrap().res, Res::Errno(libc::EOPNOTSUPP));
        assert_eq!(d.outcomes[1].unwrap().matches_recording, Some(false));
        assert_eq!(d.outcomes[1].unwrap().res.show(), "-1 EOPNOTSUPP");
        assert_eq!(cmp.first[1].unique_id, 12);
        assert_eq!(cmp.first[1].outcomes[2].unwrap().digest, Some([1; 16]));
        // All agree with themselves.
        let same = compare(&roots[..1], 10).unwrap();
        assert_eq!((same.calls, same.differing), (20, 0));
        let none = compare(&[], 1).unwrap();
        assert_eq!((none.calls, none.differing), (0, 0));
    }
}
