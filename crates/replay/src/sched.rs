//! The dispatcher and the executors.
//!
//! One reader (the caller's thread) walks the trace in `unique_id` order, runs the [`Shadow`]
//! model to place each call (process, ordering keys, children), and hands it to the executor
//! thread of its traced thread. Before issuing call `i`, an executor waits at the [`Gate`]
//! until (1) every earlier call `j` whose recorded interval ended before `i`'s began has
//! completed (calls that overlapped in the recording may run concurrently), (2) the previous
//! call on each file `i` touches has completed, and (3) for a child's first call, the clone
//! that created it has completed. The earliest unfinished call can always run, so the rules
//! never deadlock; waiting is on a condition variable (no spinning).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};
use ra_trace::{Event, ExtraValue, TraceReader};

use crate::calls::{execute, Mode, Outcome, Rule, Shared};
use crate::sandbox::Root;
use crate::shadow::{clone_flags, ok, Placement, Shadow};
use crate::verify::{errno_str, CallStats, Diff, Mismatch, Report};
use crate::world::{lock, ProcId, Process, Procs};
use crate::{Error, OnMismatch, Options, Result, Timing, Verify};

/// Progress counters the caller may watch (e.g. for a progress bar).
#[derive(Debug, Default)]
pub struct Progress {
    /// Calls taken from the trace so far.
    pub read: AtomicU64,
    /// Calls finished by the executors.
    pub done: AtomicU64,
    /// Set by the caller to stop the replay (Ctrl-C).
    pub stop: AtomicBool,
}

struct Job {
    seq: u64,
    ev: Event,
    pl: Placement,
    called: i64,
    ret: i64,
    bytes: usize,
    deps: Vec<u64>,
}

/// Bytes of captured data an event holds (what a queued event costs in memory).
fn data_bytes(ev: &Event) -> usize {
    ev.args
        .iter()
        .map(|a| match a {
            ra_trace::ArgValue::Data(d) => d.len(),
            ra_trace::ArgValue::Iov(v) => {
                v.iter().filter_map(|x| x.data.as_ref()).map(Vec::len).sum()
            }
            ra_trace::ArgValue::Strings(v) => v.iter().map(Vec::len).sum(),
            _ => 0,
        })
        .sum::<usize>()
        + 256
}

#[derive(Default)]
struct GState {
    /// Unfinished calls by (recorded return time, seq).
    by_ret: BTreeSet<(i64, u64)>,
    /// Unfinished calls by seq.
    seqs: BTreeSet<u64>,
    completed: u64,
    /// Data bytes held by queued, unfinished calls.
    bytes: usize,
    /// Executors waiting at the gate, by the call they wait for.
    waits_on: HashMap<u64, usize>,
    /// The reader waits for room until the queue is down to this many calls.
    reader_waits_for: Option<usize>,
}

/// The ordering rules' shared state.
#[derive(Default)]
struct Gate {
    m: Mutex<GState>,
    cv: Condvar,
    /// The reader waiting for room in the queues.
    room: Condvar,
}

impl Gate {
    /// Register calls about to be handed to executors: (seq, recorded return time, bytes).
    fn dispatched(&self, jobs: &[(u64, i64, usize)]) {
        let mut g = lock(&self.m);
        for &(seq, ret, bytes) in jobs {
            g.by_ret.insert((ret, seq));
            g.seqs.insert(seq);
            g.bytes += bytes;
        }
    }
    /// `Err(b)`: unfinished call `b` holds `j` back; of several, the latest (calls of one
    /// thread finish in order, so when it is done the earlier ones usually are too: one
    /// wake-up instead of one per call).
    fn ready(g: &GState, j: &Job) -> Result<(), u64> {
        let mut blocker = None;
        for &(r, s) in &g.by_ret {
            if r >= j.called {
                break;
            }
            if s < j.seq && blocker.is_none_or(|b| s > b) {
                blocker = Some(s);
            }
        }
        if let Some(b) = blocker {
            return Err(b);
        }
        match j.deps.iter().find(|d| g.seqs.contains(d)) {
            Some(&d) => Err(d),
            None => Ok(()),
        }
    }
    /// Wait until `j` may run; false when the replay is stopping.
    fn wait(&self, j: &Job, abort: &AtomicBool) -> bool {
        let mut g = lock(&self.m);
        while let Err(b) = Gate::ready(&g, j) {
            if abort.load(Ordering::Relaxed) {
                return false;
            }
            // Only the completion of `b` wakes this executor (no thundering herd).
            *g.waits_on.entry(b).or_default() += 1;
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if let Some(n) = g.waits_on.get_mut(&b) {
                *n -= 1;
                if *n == 0 {
                    g.waits_on.remove(&b);
                }
            }
        }
        true
    }
    /// Wait until the queues hold at most `calls` calls and `bytes` bytes. A reader that
    /// waited 200 ms without any call finishing goes on anyway: a queued call may be waiting
    /// for one further ahead in the trace.
    fn wait_room(&self, calls: usize, bytes: usize, abort: &AtomicBool) {
        let mut g = lock(&self.m);
        let mut last = (g.completed, Instant::now());
        // Once full, wait until half empty: one wake-up per many finished calls.
        while (g.seqs.len() > calls || g.bytes > bytes) && !abort.load(Ordering::Relaxed) {
            if g.completed != last.0 {
                last = (g.completed, Instant::now());
            } else if last.1.elapsed() > Duration::from_millis(200) {
                break;
            }
            g.reader_waits_for = Some(calls / 2);
            g = self
                .room
                .wait_timeout(g, Duration::from_millis(20))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            g.reader_waits_for = None;
        }
    }
    fn done(&self, j: &Job) {
        let mut g = lock(&self.m);
        g.by_ret.remove(&(j.ret, j.seq));
        g.seqs.remove(&j.seq);
        g.bytes -= j.bytes;
        g.completed += 1;
        let wake = g.waits_on.contains_key(&j.seq);
        let room = g.reader_waits_for.is_some_and(|n| g.seqs.len() <= n);
        drop(g);
        if wake {
            self.cv.notify_all();
        }
        if room {
            self.room.notify_one();
        }
    }
}

type Log = Arc<Mutex<Box<dyn Write + Send>>>;

/// Calls per batch handed from the reader to the executors.
const BATCH: usize = 128;

/// An executor thread as the reader sees it.
struct Exec {
    tx: Sender<Vec<Job>>,
    h: JoinHandle<Report>,
    /// Calls read for it, not yet handed over.
    buf: Vec<Job>,
}

#[derive(Default)]
struct Batch {
    regs: Vec<(u64, i64, usize)>,
    len: usize,
}

impl Batch {
    /// Register the batch's calls at the gate, then hand each executor its calls (in this
    /// order: a call must be known to the gate before any later call checks it).
    fn flush(&mut self, gate: &Gate, execs: &mut HashMap<i32, Exec>, report: &mut Report) {
        if self.len == 0 {
            return;
        }
        gate.dispatched(&self.regs);
        self.regs.clear();
        self.len = 0;
        for e in execs.values_mut() {
            if !e.buf.is_empty() && e.tx.send(std::mem::take(&mut e.buf)).is_err() {
                report.warn("an executor thread ended early");
            }
        }
    }
}

struct Ctx {
    sh: Arc<Shared>,
    gate: Arc<Gate>,
    progress: Arc<Progress>,
    log: Option<Log>,
    /// (trace time of the first call, replay start) for `--timing`.
    clock: (i64, Instant),
}

/// Replay every call of `trace` into `opts.root`. Initial state must already be in place.
pub fn replay(
    trace: &TraceReader,
    opts: Options,
    progress: Arc<Progress>,
    log: Option<Box<dyn Write + Send>>,
) -> Result<Report> {
    if let Some(a) = trace.info_value("arch") {
        let a = String::from_utf8_lossy(a).into_owned();
        if a != "x86_64" {
            return Err(Error::Arch { arch: a });
        }
    }
    let root =
        Root::new(&opts.root).map_err(|source| Error::Root { path: opts.root.clone(), source })?;
    prepare_process();
    let cwd = crate::init::initial_cwd(trace);
    let mut umask: u32 = trace
        .info_value("umask")
        .and_then(|v| {
            u32::from_str_radix(std::str::from_utf8(v).ok()?.trim_start_matches("0o"), 8).ok()
        })
        .unwrap_or(0o022);
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    let sh = Arc::new(Shared {
        root,
        procs: Procs::default(),
        opts,
        abort: AtomicBool::new(false),
        is_root,
    });
    let gate = Arc::new(Gate::default());
    let log: Option<Log> = log.map(|l| Arc::new(Mutex::new(l)));
    let mut report = Report::default();
    let mut shadow = Shadow::new(cwd.clone());
    let mut execs: HashMap<i32, Exec> = HashMap::new();
    // Calls read but not yet registered at the gate and handed over (batched: one lock and
    // one wake-up per batch, not per call).
    let mut batch = Batch::default();
    let mut finished: Vec<JoinHandle<Report>> = Vec::new();
    let mut last_key: HashMap<u64, u64> = HashMap::new();
    let mut child_dep: HashMap<i32, u64> = HashMap::new();
    let mut proc_tids: HashMap<ProcId, Vec<i32>> = HashMap::new();
    let mut seq: u64 = 0;
    let mut last_time: i64 = 0;
    let mut first_time: Option<i64> = None;
    let mut span_end: i64 = 0;
    let start = Instant::now();
    let mut pending: VecDeque<Event> = VecDeque::new();
    let mut iter = trace.events(None);
    let mut read_error: Option<ra_trace::Error> = None;
    let mut threads_seen = 0u64;
    let mut procs_seen = 0u64;
    let cap = sh.opts.queue_events.max(16);
    // Our traces start with synthetic `openat` records of inherited descriptors; then the
    // standard descriptors are only what those records say.
    let synthetic = crate::init::synthetic_ids(trace);
    let std_fds = trace.info_value("synthetic_ids").is_none();
    loop {
        if sh.abort.load(Ordering::Relaxed) || progress.stop.load(Ordering::Relaxed) {
            if progress.stop.load(Ordering::Relaxed) && report.aborted.is_none() {
                report.aborted = Some("interrupted".into());
            }
            sh.abort.store(true, Ordering::Relaxed);
            break;
        }
        let ev = match pending.pop_front() {
            Some(e) => e,
            None => match iter.next() {
                Some(Ok(e)) => e,
                Some(Err(e)) => {
                    read_error = Some(e);
                    break;
                }
                None => break,
            },
        };
        progress.read.fetch_add(1, Ordering::Relaxed);
        let Some(def) = ev.def else {
            *report.unknown.entry(ev.name.clone()).or_default() += 1;
            continue;
        };
        if ev.extra.iter().any(|(k, v)| k == "synthetic" && *v == ExtraValue::Bool(true))
            && def.name == "umask"
        {
            // Re-Animator's record of the traced process's umask at start.
            if let Some(m) = ev.arg("mask").and_then(|a| a.as_int()) {
                umask = m as u32 & 0o777;
            }
            continue;
        }
        let Some(tid) = ev.tid.or(ev.pid) else {
            report.warn("record without a thread id skipped");
            continue;
        };
        // A child whose first call was recorded before the clone that made it returned: bring
        // the clone forward (their intervals overlap, so either order is faithful).
        if seq > 0 && !shadow.knows(tid) && ev.pid.is_none_or(|p| p == tid) {
            while pending.len() < 4096 {
                match iter.next() {
                    Some(Ok(e)) => pending.push_back(e),
                    Some(Err(e)) => {
                        read_error = Some(e);
                        break;
                    }
                    None => break,
                }
            }
            if let Some(i) = pending
                .iter()
                .position(|e| clone_flags(e).is_some() && ok(e) && e.ret == Some(tid.into()))
            {
                let clone = pending.remove(i).expect("position is in range");
                pending.push_front(ev);
                pending.push_front(clone);
                progress.read.fetch_sub(1, Ordering::Relaxed);
                continue;
            }
        }
        let mut pl = shadow.step(&ev);
        pl.inherited = ev.unique_id < synthetic && def.name == "openat";
        let called = ev.time_called.unwrap_or(last_time).max(i64::MIN + 1);
        let ret = ev.time_returned.unwrap_or(called).max(called);
        last_time = last_time.max(called);
        first_time.get_or_insert(called);
        span_end = span_end.max(ret);
        if pl.first_seen {
            procs_seen += 1;
            sh.procs.insert(pl.proc, Process::initial(shadow.cwd(pl.proc), umask, std_fds));
        }
        if pl.child.is_some() {
            procs_seen += 1;
        }
        let mut deps = Vec::new();
        if let Some(d) = child_dep.remove(&tid) {
            deps.push(d);
        }
        if let Some((_, _)) = pl.child {
            if let Some(c) = ev.ret {
                child_dep.insert(c as i32, seq);
            }
        }
        for k in &pl.keys {
            if let Some(prev) = last_key.insert(*k, seq) {
                deps.push(prev);
            }
        }
        let ends = pl.ends_proc;
        let proc = pl.proc;
        let tids = proc_tids.entry(proc).or_default();
        if !tids.contains(&tid) {
            tids.push(tid);
        }
        if let Some(t) = pl.thread {
            proc_tids.entry(proc).or_default().push(t);
        }
        let bytes = data_bytes(&ev);
        let job = Job { seq, ev, pl, called, ret, bytes, deps };
        seq += 1;
        // Flow control: bounded queues (calls and bytes).
        if batch.len >= BATCH {
            batch.flush(&gate, &mut execs, &mut report);
            gate.wait_room(cap, sh.opts.queue_bytes, &sh.abort);
        }
        let exec = match execs.get_mut(&tid) {
            Some(e) => e,
            None => {
                threads_seen += 1;
                let (tx, rx) = unbounded::<Vec<Job>>();
                let ctx = Ctx {
                    sh: sh.clone(),
                    gate: gate.clone(),
                    progress: progress.clone(),
                    log: log.clone(),
                    clock: (first_time.unwrap_or(called), start),
                };
                let h = std::thread::Builder::new()
                    .name(format!("replay-{tid}"))
                    .spawn(move || executor(ctx, rx))
                    .map_err(Error::Thread)?;
                execs.insert(tid, Exec { tx, h, buf: Vec::new() });
                execs.get_mut(&tid).expect("just inserted")
            }
        };
        batch.regs.push((job.seq, job.ret, job.bytes));
        batch.len += 1;
        exec.buf.push(job);
        let gone: Vec<i32> = if ends {
            // The process is gone: its threads' executors finish what they have and stop.
            proc_tids.remove(&proc).unwrap_or_default()
        } else if def.name == "exit" {
            vec![tid]
        } else {
            Vec::new()
        };
        if !gone.is_empty() {
            batch.flush(&gate, &mut execs, &mut report);
            for t in gone {
                if let Some(e) = execs.remove(&t) {
                    drop(e.tx);
                    finished.push(e.h);
                }
            }
        }
    }
    batch.flush(&gate, &mut execs, &mut report);
    for (_, e) in execs.drain() {
        drop(e.tx);
        finished.push(e.h);
    }
    let keep = sh.opts.keep_mismatches;
    for h in finished {
        match h.join() {
            Ok(r) => report.merge(r, usize::MAX),
            Err(_) => report.warn("an executor thread panicked"),
        }
    }
    report.mismatches.sort_by_key(|m| m.unique_id);
    report.mismatches.truncate(keep);
    sh.procs.clear();
    report.threads = threads_seen;
    report.processes = procs_seen;
    report.elapsed_ns = start.elapsed().as_nanos() as u64;
    report.trace_span_ns = first_time.map_or(0, |f| span_end.saturating_sub(f).max(0) as u64);
    if let Some(e) = read_error {
        return Err(Error::Trace(e));
    }
    Ok(report)
}

/// Process-wide settings the replay relies on: umask 0 (each replayed process's umask is
/// applied by hand), SIGPIPE ignored (a pipe write without reader is an EPIPE result, not a
/// dead replayer), and as many descriptors as allowed.
fn prepare_process() {
    // SAFETY: plain libc calls with valid arguments; the rlimit struct is initialized by
    // getrlimit before it is read.
    unsafe {
        libc::umask(0);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 && rl.rlim_cur < rl.rlim_max {
            rl.rlim_cur = rl.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
        }
    }
}

fn executor(ctx: Ctx, rx: Receiver<Vec<Job>>) -> Report {
    let mut rep = Report::default();
    for job in rx.into_iter().flatten() {
        if ctx.sh.abort.load(Ordering::Relaxed) || !ctx.gate.wait(&job, &ctx.sh.abort) {
            ctx.gate.done(&job);
            continue;
        }
        if let Timing::Scaled(k) = ctx.sh.opts.timing {
            let due = (job.called.saturating_sub(ctx.clock.0)) as f64 * k;
            let due = ctx.clock.1 + Duration::from_nanos(due.max(0.0) as u64);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        let out = match ctx.sh.procs.get(job.pl.proc) {
            Some(p) => execute(&ctx.sh, &p, &job.ev, &job.pl),
            None => {
                rep.warn("call of a process that had already ended: skipped");
                ctx.gate.done(&job);
                continue;
            }
        };
        if job.pl.ends_proc {
            ctx.sh.procs.remove(job.pl.proc);
        }
        account(&ctx, &mut rep, &job.ev, out);
        ctx.gate.done(&job);
        ctx.progress.done.fetch_add(1, Ordering::Relaxed);
    }
    rep
}

/// Compare the replayed result with the recording.
fn judge(ev: &Event, out: &Outcome) -> Vec<Diff> {
    let mut d = Vec::new();
    if out.rule != Rule::Recorded {
        let rec_errno = ev.errno.unwrap_or(0);
        let rec_ok = rec_errno == 0;
        let show_ok = |v: i64| v.to_string();
        match (&out.res, rec_ok) {
            (Ok(v), true) => {
                if out.rule == Rule::Exact {
                    if let Some(r) = ev.ret {
                        if r != *v {
                            d.push(Diff::new("return value", show_ok(r), show_ok(*v)));
                        }
                    }
                }
            }
            (Err(e), false) => {
                if *e != rec_errno {
                    d.push(Diff::new("errno", errno_str(rec_errno), errno_str(*e)));
                }
            }
            (Ok(v), false) => {
                d.push(Diff::new("result", format!("-1 {}", errno_str(rec_errno)), show_ok(*v)))
            }
            (Err(e), true) => d.push(Diff::new(
                "result",
                ev.ret.map_or_else(|| "success".to_string(), show_ok),
                format!("-1 {}", errno_str(*e)),
            )),
        }
    }
    d
}

fn account(ctx: &Ctx, rep: &mut Report, ev: &Event, out: Outcome) {
    let verify = ctx.sh.opts.verify;
    let mut diffs = if verify == Verify::None { Vec::new() } else { judge(ev, &out) };
    if verify == Verify::Full {
        diffs.extend(out.diffs.iter().cloned());
    }
    let st: &mut CallStats = rep.per_call.entry(ev.name.clone()).or_default();
    st.replayed += 1;
    match out.mode {
        Mode::Issued => st.issued += 1,
        Mode::Emulated => st.emulated += 1,
        Mode::Simulated => st.simulated += 1,
        Mode::Skipped => st.skipped += 1,
    }
    let verified = matches!(out.mode, Mode::Issued | Mode::Emulated);
    if verified {
        if diffs.is_empty() {
            st.matched += 1;
        } else {
            st.mismatched += 1;
        }
    }
    if let Some(w) = &out.warn {
        rep.warn(w.clone());
    }
    if let Some(log) = &ctx.log {
        let level = ctx.sh.opts.log_level;
        if level >= 2 || (level >= 1 && !diffs.is_empty()) {
            let mut l = lock(log);
            let line =
                ra_trace::format::format_event(ev, &ra_trace::format::FormatOptions::default());
            let res = match &out.res {
                Ok(v) => v.to_string(),
                Err(e) => format!("-1 {}", errno_str(*e)),
            };
            let _ = writeln!(l, "{line}  -> replay {:?}: {res}", out.mode);
            for d in &diffs {
                let _ = writeln!(
                    l,
                    "    MISMATCH {}: expected {}, got {}",
                    d.what, d.expected, d.actual
                );
            }
        }
    }
    if verified && !diffs.is_empty() {
        rep.mismatch_total += 1;
        if rep.mismatches.len() < ctx.sh.opts.keep_mismatches {
            for diff in diffs {
                rep.mismatches.push(Mismatch {
                    unique_id: ev.unique_id,
                    call: ev.name.clone(),
                    tid: ev.tid,
                    diff,
                });
            }
        }
        if ctx.sh.opts.on_mismatch == OnMismatch::Abort
            && !ctx.sh.abort.swap(true, Ordering::Relaxed)
        {
            rep.aborted = Some(format!(
                "first mismatch at unique_id {} ({}); --on-mismatch abort",
                ev.unique_id, ev.name
            ));
        }
    }
}
