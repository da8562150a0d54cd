//! The dispatcher and the workers.
//!
//! One reader (the caller's thread) walks the trace in `unique_id` order, runs the [`Shadow`]
//! model to place each call (process, ordering keys, children), and appends it to the task of
//! its traced thread. A task's calls run in order on whichever worker thread holds the task
//! (M:N: a small pool of workers, four to start, runs thousands of traced threads). Before
//! issuing call `i`, the worker asks the [`Gate`] whether it may: (1) every earlier call `j`
//! whose recorded interval ended before `i`'s began has completed (calls that overlapped in
//! the recording may run concurrently), (2) the previous call on each file `i` touches that
//! was called before it has completed, (3) for a child's first call, the clone that created
//! it has completed, and (4) the call that freed a descriptor number `i` takes has completed.
//! If not, the gate keeps the task and puts it back on the run queue when the call it waits
//! for completes; the worker takes another task. A call only ever waits for earlier calls (a
//! dependency on itself, as `dup2(fd, fd)` would give, or on a later call is ignored), so the
//! earliest unfinished call can always run. A worker inside a blocking call (a pipe read, a
//! lock wait, a `--timing` sleep) is busy; when all are busy and tasks wait to run, another
//! worker is started. A watchdog thread turns Ctrl-C into an immediate stop of every task,
//! breaks (and reports) any ordering cycle in recorded order should one ever form, and stops
//! a replay in which no call finishes for the stall timeout while none is running, naming the
//! calls that wait.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};
use ra_trace::{Event, TraceReader};

use crate::calls::{execute, Mode, Outcome, Rule, Shared};
use crate::planner::{data_bytes, Placed, PlanNotes, Planner, TraceFacts};
use crate::sandbox::Root;
use crate::shadow::Placement;
use crate::timing::CpuSplit;
use crate::verify::{errno_str, CallStats, Diff, Mismatch, Report};
use crate::world::{lock, Process, Procs};
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
    id: CallId,
}

/// A call as the gate names it in reports.
#[derive(Clone, Copy, Debug)]
struct CallId {
    unique_id: u64,
    name: &'static str,
}

impl std::fmt::Display for CallId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (unique_id {})", self.name, self.unique_id)
    }
}

#[derive(Default)]
struct GState {
    /// Unfinished calls by (recorded return time, seq).
    by_ret: BTreeSet<(i64, u64)>,
    /// Unfinished calls by seq.
    seqs: BTreeMap<u64, CallId>,
    /// Calls past the gate, being executed.
    running: BTreeMap<u64, CallId>,
    /// Calls waiting at the gate: seq -> the call it waits for.
    waiting: BTreeMap<u64, u64>,
    /// Executors parked until a call finishes: the call's seq -> who to wake.
    waiters: HashMap<u64, Vec<Waker>>,
    /// Calls let through although an ordering rule held them (a cycle broken in recorded order).
    forced: BTreeSet<u64>,
    completed: u64,
    /// Data bytes held by queued, unfinished calls.
    bytes: usize,
    /// The reader waits for room until the queue is down to this many calls.
    reader_waits_for: Option<usize>,
}

/// The ordering rules' shared state. Waiting executors park (no shared condition variable):
/// the completion of a call unparks only the executors waiting for that call, so thousands of
/// waiting threads cost nothing while they wait.
#[derive(Default)]
struct Gate {
    m: Mutex<GState>,
    /// The reader waiting for room in the queues.
    room: Condvar,
    /// Where a parked task goes when the call it waits for finishes (the workers' run queue;
    /// None once the replay is over).
    runq: Mutex<Option<Sender<Arc<Task>>>>,
}

/// Who waits at the gate: a thread (parked) or a traced thread's task (requeued).
enum Waker {
    /// (The blocking [`Gate::wait`], which the unit tests use.)
    #[cfg(test)]
    Thread(std::thread::Thread),
    Task(Arc<Task>),
}

/// What a worker may do with a task's next call.
#[derive(Debug, PartialEq)]
enum Entry {
    /// Run it now.
    Go,
    /// It waits for an earlier call; the task was handed to the gate.
    Parked,
    /// The replay is stopping.
    Stop,
}

/// What the gate needs of a call.
struct JobHead {
    seq: u64,
    called: i64,
    deps: Vec<u64>,
    id: CallId,
}

/// The calls of one traced thread, run in order by whichever worker holds the task.
#[derive(Default)]
struct Task {
    q: Mutex<VecDeque<Job>>,
    /// In the run queue, being run by a worker, or parked at the gate (only one at a time).
    owned: AtomicBool,
}

/// How often a parked executor looks at the stop flag on its own (a stop also unparks it).
#[cfg(test)]
const PARK_SLICE: Duration = Duration::from_millis(500);

impl Gate {
    fn wake(&self, who: impl IntoIterator<Item = Waker>) {
        let mut tasks = Vec::new();
        for w in who {
            match w {
                #[cfg(test)]
                Waker::Thread(t) => t.unpark(),
                Waker::Task(t) => tasks.push(t),
            }
        }
        if !tasks.is_empty() {
            if let Some(q) = lock(&self.runq).as_ref() {
                for t in tasks {
                    let _ = q.send(t);
                }
            }
        }
    }
    /// The non-blocking form of [`Gate::wait`] for a task: run the call now, or leave the task
    /// with the gate until the call it waits for finishes.
    /// `j` is the task's next call, still at the front of its queue (so that a wake-up that
    /// comes at once finds it there).
    fn try_enter(&self, task: &Arc<Task>, j: &JobHead, stop: &AtomicBool) -> Entry {
        let mut g = lock(&self.m);
        if stop.load(Ordering::Relaxed) {
            g.waiting.remove(&j.seq);
            return Entry::Stop;
        }
        match Gate::ready(&g, j.seq, j.called, &j.deps) {
            Ok(()) => {
                g.waiting.remove(&j.seq);
                g.forced.remove(&j.seq);
                g.running.insert(j.seq, j.id);
                Entry::Go
            }
            Err(b) => {
                g.waiting.insert(j.seq, b);
                g.waiters.entry(b).or_default().push(Waker::Task(task.clone()));
                Entry::Parked
            }
        }
    }
    /// Register calls about to be handed to executors: (seq, recorded return time, bytes).
    fn dispatched(&self, jobs: &[(u64, i64, usize, CallId)]) {
        let mut g = lock(&self.m);
        for &(seq, ret, bytes, id) in jobs {
            g.by_ret.insert((ret, seq));
            g.seqs.insert(seq, id);
            g.bytes += bytes;
        }
    }
    /// `Err(b)`: unfinished call `b` holds `j` back. Only earlier calls (lower seq) can hold a
    /// call back, so the earliest unfinished call is always free to run: the rules cannot
    /// form a cycle (a dependency on itself or on a later call is ignored).
    fn ready(g: &GState, seq: u64, called: i64, deps: &[u64]) -> Result<(), u64> {
        if g.forced.contains(&seq) {
            return Ok(());
        }
        // Interval rule: an earlier call that returned (in the recording) before this one was
        // called. Of several, wait for the one that returned last: calls finish roughly in
        // their recorded order, so when it is done the others are too — one wake-up per
        // waiting call, not one per blocker (thousands of threads waiting for the same first
        // blocker would all wake at every completion).
        let below = g.by_ret.range(..(called, 0)).rev();
        if let Some(&(_, s)) = below.take(64).find(|&&(_, s)| s < seq) {
            return Err(s);
        }
        if g.by_ret.range(..(called, 0)).rev().skip(64).any(|&(_, s)| s < seq) {
            // Rare: many later calls that returned early; any blocker will do.
            let s = g.by_ret.range(..(called, 0)).find(|&&(_, s)| s < seq).map(|x| x.1);
            return Err(s.unwrap_or(0));
        }
        match deps.iter().filter(|&&d| d < seq && g.seqs.contains_key(&d)).max() {
            Some(&d) => Err(d),
            None => Ok(()),
        }
    }
    /// Wait until `j` may run; false when the replay is stopping. (The workers use
    /// [`Gate::try_enter`]; this blocking form serves the unit tests of the rules.)
    #[cfg(test)]
    fn wait(&self, j: &Job, stop: &AtomicBool) -> bool {
        let mut g = lock(&self.m);
        loop {
            if stop.load(Ordering::Relaxed) {
                g.waiting.remove(&j.seq);
                return false;
            }
            match Gate::ready(&g, j.seq, j.called, &j.deps) {
                Ok(()) => {
                    g.waiting.remove(&j.seq);
                    g.forced.remove(&j.seq);
                    g.running.insert(j.seq, j.id);
                    return true;
                }
                Err(b) => {
                    g.waiting.insert(j.seq, b);
                    let me = std::thread::current();
                    let w = g.waiters.entry(b).or_default();
                    if !w.iter().any(|t| matches!(t, Waker::Thread(t) if t.id() == me.id())) {
                        w.push(Waker::Thread(me));
                    }
                    drop(g);
                    std::thread::park_timeout(PARK_SLICE);
                    g = lock(&self.m);
                }
            }
        }
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
    /// True when the queues hold more than `calls` calls or `bytes` bytes ([`Gate::wait_room`]
    /// would wait).
    fn full(&self, calls: usize, bytes: usize) -> bool {
        let g = lock(&self.m);
        g.seqs.len() > calls || g.bytes > bytes
    }
    fn done(&self, j: &Job) {
        let mut g = lock(&self.m);
        g.by_ret.remove(&(j.ret, j.seq));
        g.seqs.remove(&j.seq);
        g.running.remove(&j.seq);
        g.waiting.remove(&j.seq);
        g.bytes -= j.bytes;
        g.completed += 1;
        let wake = g.waiters.remove(&j.seq);
        let room = g.reader_waits_for.is_some_and(|n| g.seqs.len() <= n);
        drop(g);
        self.wake(wake.into_iter().flatten());
        if room {
            self.room.notify_one();
        }
    }
    /// Wake every parked executor (the replay is stopping).
    fn wake_all(&self) {
        let all: Vec<Waker> = lock(&self.m).waiters.drain().flat_map(|(_, v)| v).collect();
        self.wake(all);
        self.room.notify_all();
    }
}

/// What the watchdog saw at one look at the gate.
#[derive(Clone, Debug, PartialEq)]
enum Look {
    /// Calls are finishing, or there is nothing to do.
    Fine,
    /// The earliest unfinished call waits at the gate although nothing earlier is unfinished:
    /// an ordering cycle. It was let through; the text names the calls.
    CycleBroken(String),
    /// No call has finished for the stall timeout and none is running: the text says what
    /// waits for what.
    Stalled(String),
}

impl Gate {
    /// One look by the watchdog: break an ordering cycle by recorded order, or tell that the
    /// replay made no progress for `stall` although calls are pending and none is running.
    fn look(&self, since: &mut (u64, Instant), stall: Duration) -> Look {
        let mut g = lock(&self.m);
        if g.completed != since.0 || g.seqs.is_empty() || !g.running.is_empty() {
            *since = (g.completed, Instant::now());
            return Look::Fine;
        }
        let Some((&first, &id)) = g.seqs.iter().next() else { return Look::Fine };
        if let Some(&b) = g.waiting.get(&first).filter(|&&b| b >= first || g.seqs.contains_key(&b))
        {
            // The earliest unfinished call is held back: only a rule that points forward (or at
            // the call itself) can do that. Let it go, in recorded order.
            let held_by = g.seqs.get(&b).map_or_else(|| format!("call #{b}"), |c| c.to_string());
            g.forced.insert(first);
            let wake = g.waiters.remove(&b);
            drop(g);
            self.wake(wake.into_iter().flatten());
            *since = (since.0, Instant::now());
            return Look::CycleBroken(format!(
                "ordering cycle: {id} waited for {held_by}; let through in recorded order"
            ));
        }
        if since.1.elapsed() < stall {
            return Look::Fine;
        }
        let mut why = format!(
            "no call finished for {:.1} s; {} calls unfinished, the earliest {id} ",
            since.1.elapsed().as_secs_f64(),
            g.seqs.len()
        );
        why.push_str(if g.waiting.contains_key(&first) {
            "waits at the ordering gate"
        } else {
            "was not taken up by its executor"
        });
        let waits: Vec<String> = g
            .waiting
            .iter()
            .take(5)
            .map(|(s, b)| {
                let name =
                    |x: &u64| g.seqs.get(x).map_or_else(|| format!("#{x}"), |c| c.to_string());
                format!("{} waits for {}", name(s), name(b))
            })
            .collect();
        if !waits.is_empty() {
            why.push_str("; ");
            why.push_str(&waits.join("; "));
        }
        Look::Stalled(why)
    }
}

type Log = Arc<Mutex<Box<dyn Write + Send>>>;

/// Calls per batch handed from the reader to the executors.
const BATCH: usize = 128;

/// An executor thread as the reader sees it.
struct Exec {
    task: Arc<Task>,
    /// Calls read for it, not yet handed over.
    buf: Vec<Job>,
}

/// The worker threads that run the traced threads' tasks (M:N: a traced thread is a task, not
/// an OS thread; a call held at the gate gives its worker back). A worker inside a blocking
/// call (a pipe read, a lock wait, a `--timing` sleep) is busy: when every worker is busy and
/// tasks are waiting, another worker is started.
struct Workers {
    ctx: Ctx,
    runq: Receiver<Arc<Task>>,
    threads: Mutex<Vec<JoinHandle<Report>>>,
    /// Workers inside a call.
    busy: Arc<AtomicU64>,
    /// --timing: where the workers run.
    cpus: Option<CpuSplit>,
}

/// Workers started at first (more are added while all are busy).
const WORKERS: usize = 4;

/// `--timing`: how far ahead of the workers' start the replay's clock starts (the first call's
/// due time), so that starting them does not make the first calls late.
const START_LEAD: Duration = Duration::from_millis(1);

impl Workers {
    fn spawn(self: &Arc<Self>) -> Result<()> {
        let w = self.clone();
        let mut t = lock(&self.threads);
        let h = std::thread::Builder::new()
            .name(format!("replay-worker-{}", t.len()))
            .spawn(move || worker(&w))
            .map_err(Error::Thread)?;
        t.push(h);
        Ok(())
    }
    /// Start another worker when every worker is inside a call and tasks are waiting to run.
    fn grow_if_needed(self: &Arc<Self>) {
        let n = lock(&self.threads).len() as u64;
        if !self.runq.is_empty() && self.busy.load(Ordering::Acquire) >= n {
            let _ = self.spawn();
        }
    }
}

#[derive(Default)]
struct Batch {
    regs: Vec<(u64, i64, usize, CallId)>,
    len: usize,
    /// Executors (by traced thread) with calls in this batch.
    touched: Vec<i32>,
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
        // Only the tasks this batch has calls for (thousands may exist).
        let runq = lock(&gate.runq).clone();
        for t in self.touched.drain(..) {
            let Some(e) = execs.get_mut(&t) else { continue };
            if e.buf.is_empty() {
                continue;
            }
            lock(&e.task.q).extend(e.buf.drain(..));
            if !e.task.owned.swap(true, Ordering::AcqRel) {
                if let Some(q) = &runq {
                    if q.send(e.task.clone()).is_err() {
                        report.warn("the replay's workers ended early");
                    }
                }
            }
        }
    }
}

#[derive(Clone)]
struct Ctx {
    sh: Arc<Shared>,
    gate: Arc<Gate>,
    progress: Arc<Progress>,
    log: Option<Log>,
    /// (trace time of the first call, replay start) for `--timing`.
    clock: (i64, Instant),
    /// `--timing`: tasks whose next call is not due yet wait here, not in a worker.
    timer: Arc<Timer>,
}

impl Ctx {
    /// When a call recorded at `called` is due (`--timing`), or None (AFAP).
    fn due(&self, called: i64) -> Option<Instant> {
        match self.sh.opts.timing {
            Timing::Scaled(k) => {
                let offset = called.saturating_sub(self.clock.0);
                Some(
                    self.clock.1
                        + Duration::from_nanos((offset as f64 * k).clamp(0.0, 1e18) as u64),
                )
            }
            Timing::Afap => None,
        }
    }
}

/// Calls read ahead: batches of at most this many ...
const PREFETCH_BATCH: usize = 256;
/// ... or this many bytes of data.
const PREFETCH_BATCH_BYTES: usize = 1 << 20;

/// Where the calls come from.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// A trace: the read-ahead thread places its calls ([`Planner`]) as it reads them.
    Trace(&'a TraceReader),
    /// A compiled plan (`reanimator compile`): its calls are placed already.
    Plan(&'a crate::planfile::Plan),
}

impl Source<'_> {
    fn facts(&self) -> TraceFacts {
        match self {
            Source::Trace(t) => TraceFacts::of(t),
            Source::Plan(p) => p.facts().clone(),
        }
    }
}

/// The read-ahead thread for a replay whose calls are placed there (AFAP traces, plans):
/// batches of placed calls until the source ends, fails, or the dispatcher is gone. Returns
/// what the planner noted (unknown record types, warnings).
fn prefetch(source: Source<'_>, facts: TraceFacts, tx: &Sender<Vec<Result<Placed>>>) -> PlanNotes {
    let placed_bytes = |c: &Result<Placed>| c.as_ref().map_or(0, |c| data_bytes(&c.ev));
    match source {
        Source::Trace(trace) => {
            let mut planner =
                Planner::new(trace.syscall_events(None).without_derived_columns(), facts);
            let calls = planner.by_ref().map(|r| r.map_err(Error::Trace));
            send_batches(calls, tx, placed_bytes, Result::is_err);
            planner.notes
        }
        Source::Plan(plan) => {
            send_batches(plan.calls_for_replay(), tx, placed_bytes, Result::is_err);
            plan.notes().clone()
        }
    }
}

/// Items in batches of at most PREFETCH_BATCH items or PREFETCH_BATCH_BYTES of data through
/// `tx`, until they end, one is an error (sent last), or the receiver is gone.
fn send_batches<T>(
    items: impl Iterator<Item = T>,
    tx: &Sender<Vec<T>>,
    bytes_of: impl Fn(&T) -> usize,
    is_err: impl Fn(&T) -> bool,
) {
    let mut batch = Vec::with_capacity(PREFETCH_BATCH);
    let mut bytes = 0;
    for c in items {
        let stop = is_err(&c);
        bytes += bytes_of(&c);
        batch.push(c);
        if stop || batch.len() >= PREFETCH_BATCH || bytes >= PREFETCH_BATCH_BYTES {
            if tx.send(std::mem::take(&mut batch)).is_err() || stop {
                return;
            }
            bytes = 0;
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(batch);
    }
}

/// The channel's slots for a horizon of `events` calls and `bytes` of data (each slot holds a
/// batch of up to PREFETCH_BATCH calls or PREFETCH_BATCH_BYTES).
fn horizon(events: usize, bytes: usize) -> crate::verify::PrefetchStats {
    let slots = (events / PREFETCH_BATCH).min(bytes / PREFETCH_BATCH_BYTES).max(2);
    crate::verify::PrefetchStats {
        slots,
        horizon_events: slots * PREFETCH_BATCH,
        horizon_bytes: slots * PREFETCH_BATCH_BYTES,
        ..Default::default()
    }
}

/// Items read ahead on a thread of its own, in batches through a bounded channel, and how
/// often the dispatcher found nothing read yet.
struct Prefetch<T> {
    rx: Receiver<Vec<T>>,
    cur: std::vec::IntoIter<T>,
    stats: crate::verify::PrefetchStats,
    progress: Arc<Progress>,
}

impl<T> Prefetch<T> {
    fn new(
        rx: Receiver<Vec<T>>,
        stats: crate::verify::PrefetchStats,
        progress: Arc<Progress>,
    ) -> Prefetch<T> {
        Prefetch { rx, cur: Vec::new().into_iter(), stats, progress }
    }
}

impl<T> Iterator for Prefetch<T> {
    type Item = T;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.cur.next() {
                return Some(e);
            }
            let batch = match self.rx.try_recv() {
                Ok(b) => b,
                Err(crossbeam_channel::TryRecvError::Disconnected) => return None,
                Err(crossbeam_channel::TryRecvError::Empty) => {
                    // Nothing read yet: a stall of the dispatcher; one that left the workers
                    // with nothing to run (every call handed over is done) starved the replay.
                    let idle = self.progress.read.load(Ordering::Relaxed)
                        <= self.progress.done.load(Ordering::Relaxed);
                    let t = Instant::now();
                    let b = self.rx.recv();
                    let ns = t.elapsed().as_nanos() as u64;
                    self.stats.stalls += 1;
                    self.stats.stalled_ns += ns;
                    if idle {
                        self.stats.starved += 1;
                        self.stats.starved_ns += ns;
                    }
                    match b {
                        Ok(b) => b,
                        Err(_) => return None,
                    }
                }
            };
            self.cur = batch.into_iter();
        }
    }
}

/// Where the dispatcher takes placed calls from.
enum Feed {
    /// Placed on the read-ahead thread (AFAP replays of traces; plans).
    Placed(Prefetch<Result<Placed>>),
    /// Events read ahead, placed here (`--timing` replays of traces: the read-ahead thread
    /// only decodes, as it did before the planner moved).
    Events(Box<Planner<Prefetch<ra_trace::Result<Event>>>>),
}

impl Iterator for Feed {
    type Item = Result<Placed>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Feed::Placed(p) => p.next(),
            Feed::Events(p) => p.next().map(|r| r.map_err(Error::Trace)),
        }
    }
}

impl Feed {
    fn stats(&self) -> crate::verify::PrefetchStats {
        match self {
            Feed::Placed(p) => p.stats.clone(),
            Feed::Events(p) => p.source().stats.clone(),
        }
    }

    fn notes(&mut self) -> PlanNotes {
        match self {
            Feed::Placed(_) => PlanNotes::default(),
            Feed::Events(p) => std::mem::take(&mut p.notes),
        }
    }
}

/// How long before its due time a deferred task goes back to the run queue: the worker that
/// takes it sleeps or spins the rest (crate::timing::Pacer).
const TIMER_LEAD: Duration = Duration::from_millis(1);

/// `--timing`: the tasks whose next call is due later than [`TIMER_LEAD`] from now, by due
/// time (Replayfs' timer set early). A worker never sleeps through a long wait holding a
/// task that other tasks' calls could have used: it hands the task here and takes another.
#[derive(Default)]
struct Timer {
    m: Mutex<TimerState>,
    cv: Condvar,
}

#[derive(Default)]
struct TimerState {
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(Instant, u64)>>,
    tasks: HashMap<u64, Arc<Task>>,
    next: u64,
    done: bool,
}

impl Timer {
    fn defer(&self, wake: Instant, task: Arc<Task>) {
        let mut st = lock(&self.m);
        let id = st.next;
        st.next += 1;
        st.heap.push(std::cmp::Reverse((wake, id)));
        st.tasks.insert(id, task);
        drop(st);
        self.cv.notify_one();
    }

    fn pending(&self) -> bool {
        !lock(&self.m).heap.is_empty()
    }

    fn finish(&self) {
        lock(&self.m).done = true;
        self.cv.notify_one();
    }

    /// The timer thread: requeue each task at its wake time (all at once on a stop).
    fn run(&self, gate: &Gate, stop: &AtomicBool) {
        let mut st = lock(&self.m);
        loop {
            let now = Instant::now();
            let stopping = stop.load(Ordering::Relaxed);
            let mut due = Vec::new();
            while let Some(std::cmp::Reverse((t, id))) = st.heap.peek().copied() {
                if t > now && !stopping {
                    break;
                }
                st.heap.pop();
                if let Some(task) = st.tasks.remove(&id) {
                    due.push(Waker::Task(task));
                }
            }
            if !due.is_empty() {
                drop(st);
                gate.wake(due);
                st = lock(&self.m);
                continue;
            }
            if st.done && st.heap.is_empty() {
                return;
            }
            // Wake for the next task, a new one, or every 50 ms to look at the stop flag.
            let wait = st
                .heap
                .peek()
                .map_or(Duration::from_millis(50), |r| r.0 .0.saturating_duration_since(now))
                .min(Duration::from_millis(50));
            st = self.cv.wait_timeout(st, wait).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

/// Replay every call of `trace` into `opts.root`. Initial state must already be in place.
pub fn replay(
    trace: &TraceReader,
    opts: Options,
    progress: Arc<Progress>,
    log: Option<Box<dyn Write + Send>>,
) -> Result<Report> {
    replay_from(Source::Trace(trace), opts, progress, log)
}

/// Replay every call of `source` (a trace or a compiled plan) into `opts.root`. Initial state
/// must already be in place.
pub fn replay_from(
    source: Source<'_>,
    opts: Options,
    progress: Arc<Progress>,
    log: Option<Box<dyn Write + Send>>,
) -> Result<Report> {
    let facts = source.facts();
    if let Some(a) = &facts.arch {
        if a != "x86_64" {
            return Err(Error::Arch { arch: a.clone() });
        }
    }
    let root =
        Root::new(&opts.root).map_err(|source| Error::Root { path: opts.root.clone(), source })?;
    prepare_process();
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    let sh = Arc::new(Shared {
        root,
        procs: Procs::default(),
        opts,
        abort: AtomicBool::new(false),
        is_root,
        page_records: facts.page_records,
        in_flight: Default::default(),
    });
    let gate = Arc::new(Gate::default());
    let timed = matches!(sh.opts.timing, Timing::Scaled(_));
    // --timing: the workers and the other threads on CPUs of their own (crate::timing); the
    // threads started below inherit this thread's.
    let cpus = if timed && sh.opts.split_cpus { CpuSplit::of_this_thread() } else { None };
    let _restore = cpus.as_ref().map(CpuSplit::pin_others);
    // The watchdog turns Ctrl-C into a stop every waiting executor sees at once, breaks ordering
    // cycles, and stops a replay that makes no progress.
    let watch_done = Arc::new(AtomicBool::new(false));
    let watch_workers: Arc<Mutex<Option<Arc<Workers>>>> = Arc::default();
    let timer = Arc::new(Timer::default());
    let watch = {
        let (sh, gate, progress, done, ww, timer) = (
            sh.clone(),
            gate.clone(),
            progress.clone(),
            watch_done.clone(),
            watch_workers.clone(),
            timer.clone(),
        );
        std::thread::Builder::new()
            .name("replay-watchdog".into())
            .spawn(move || watchdog(&sh, &gate, &progress, &done, &ww, &timer))
            .map_err(Error::Thread)?
    };
    let timer_thread = {
        let (sh, gate, timer) = (sh.clone(), gate.clone(), timer.clone());
        std::thread::Builder::new()
            .name("replay-timer".into())
            .spawn(move || {
                // The timer hands due tasks to the workers: it is on their side of the split
                // (on the other threads' CPUs it waited behind the dispatcher: p99 errors of
                // 120-250 us against 27-42 us here, 50k calls/s).
                if let Some(c) = &cpus {
                    c.pin_worker();
                }
                timer.run(&gate, &sh.abort)
            })
            .map_err(Error::Thread)?
    };
    let log: Option<Log> = log.map(|l| Arc::new(Mutex::new(l)));
    let mut report = Report::default();
    let mut execs: HashMap<i32, Exec> = HashMap::new();
    // Calls read but not yet registered at the gate and handed over (batched: one lock and
    // one wake-up per batch, not per call).
    let mut batch = Batch::default();
    let (runq_tx, runq_rx) = unbounded::<Arc<Task>>();
    *lock(&gate.runq) = Some(runq_tx);
    let mut workers: Option<Arc<Workers>> = None;
    let mut first_time: Option<i64> = None;
    let mut span_end: i64 = 0;
    let start = Instant::now();
    let std_fds = facts.std_fds;
    // The calls are read (and, from a trace, placed) ahead on a thread of its own, up to a
    // bounded horizon: the dispatcher below never waits on decompression, the disk or the
    // model unless the horizon ran dry.
    let ahead = horizon(sh.opts.prefetch_events, sh.opts.prefetch_bytes);
    std::thread::scope(|scope| -> Result<Report> {
        let read = std::thread::Builder::new().name("replay-read".into());
        let (mut iter, reader) = match source {
            Source::Trace(trace) if timed => {
                let (tx, rx) = crossbeam_channel::bounded(ahead.slots);
                let h = read
                    .spawn_scoped(scope, move || {
                        let bytes = |e: &ra_trace::Result<Event>| e.as_ref().map_or(0, data_bytes);
                        let events = trace.syscall_events(None).without_derived_columns();
                        send_batches(events, &tx, bytes, Result::is_err);
                        PlanNotes::default()
                    })
                    .map_err(Error::Thread)?;
                let events = Prefetch::new(rx, ahead, progress.clone());
                (Feed::Events(Box::new(Planner::new(events, facts))), h)
            }
            _ => {
                let (tx, rx) = crossbeam_channel::bounded(ahead.slots);
                let h = read
                    .spawn_scoped(scope, move || prefetch(source, facts, &tx))
                    .map_err(Error::Thread)?;
                (Feed::Placed(Prefetch::new(rx, ahead, progress.clone())), h)
            }
        };
        // The workers, and with them the replay's clock. AFAP: at the first call. --timing:
        // once the queues are full (or the calls end), so that the first calls, often a
        // burst (a program's start: exec, libraries, mmap, thousands of calls within a few
        // ms), are placed and queued before their due times instead of behind them; the clock
        // then starts a little ahead (START_LEAD), while the workers start.
        let start_workers = |first: i64| -> Result<Arc<Workers>> {
            let lead = if timed { START_LEAD } else { Duration::ZERO };
            let w = Arc::new(Workers {
                ctx: Ctx {
                    sh: sh.clone(),
                    gate: gate.clone(),
                    progress: progress.clone(),
                    log: log.clone(),
                    // The replay's time starts at its first call (not before the trace was
                    // opened and its first extents decoded).
                    clock: (first, Instant::now() + lead),
                    timer: timer.clone(),
                },
                runq: runq_rx.clone(),
                threads: Mutex::new(Vec::new()),
                busy: Arc::default(),
                cpus,
            });
            for _ in 0..WORKERS {
                w.spawn()?;
            }
            *watch_workers.lock().unwrap_or_else(|p| p.into_inner()) = Some(w.clone());
            Ok(w)
        };
        let mut read_error: Option<Error> = None;
        let mut threads_seen = 0u64;
        let mut procs_seen = 0u64;
        let cap = sh.opts.queue_events.max(16);
        loop {
            if sh.abort.load(Ordering::Relaxed) || progress.stop.load(Ordering::Relaxed) {
                if progress.stop.load(Ordering::Relaxed) && report.aborted.is_none() {
                    report.aborted = Some("interrupted".into());
                }
                sh.abort.store(true, Ordering::Relaxed);
                break;
            }
            let p = match iter.next() {
                Some(Ok(p)) => p,
                Some(Err(e)) => {
                    read_error = Some(e);
                    break;
                }
                None => break,
            };
            progress.read.fetch_add(1, Ordering::Relaxed);
            let Placed { seq, tid, ev, pl, called, ret, deps, new_proc, gone } = p;
            if let (Source::Plan(plan), 0) = (source, seq % 4096) {
                // The plan's pages before the oldest unfinished call are not needed again.
                // (Calls not yet handed to the gate count too.)
                let queued = batch.regs.first().map_or(seq, |r| r.0);
                let oldest = lock(&gate.m).seqs.keys().next().copied().unwrap_or(seq);
                plan.release_before(oldest.min(queued));
            }
            let Some(def) = ev.def else { continue };
            first_time.get_or_insert(called);
            span_end = span_end.max(ret);
            if let Some((cwd, umask)) = new_proc {
                procs_seen += 1;
                sh.procs.insert(pl.proc, Process::initial(cwd, umask, std_fds));
            }
            if pl.child.is_some() {
                procs_seen += 1;
            }
            let bytes = data_bytes(&ev);
            let id = CallId { unique_id: ev.unique_id, name: def.name };
            let job = Job { seq, ev, pl, called, ret, bytes, deps, id };
            // Flow control: bounded queues (calls and bytes).
            if batch.len >= BATCH {
                batch.flush(&gate, &mut execs, &mut report);
                if workers.is_none() && gate.full(cap, sh.opts.queue_bytes) {
                    workers = Some(start_workers(first_time.unwrap_or(called))?);
                }
                gate.wait_room(cap, sh.opts.queue_bytes, &sh.abort);
            }
            let exec = match execs.get_mut(&tid) {
                Some(e) => e,
                None => {
                    threads_seen += 1;
                    if workers.is_none() && !timed {
                        workers = Some(start_workers(first_time.unwrap_or(called))?);
                    }
                    execs.insert(tid, Exec { task: Arc::default(), buf: Vec::new() });
                    execs.get_mut(&tid).expect("just inserted")
                }
            };
            batch.regs.push((job.seq, job.ret, job.bytes, job.id));
            batch.len += 1;
            if exec.buf.is_empty() {
                batch.touched.push(tid);
            }
            exec.buf.push(job);
            if !gone.is_empty() {
                // The process is gone: its threads' executors finish what they have and stop.
                batch.flush(&gate, &mut execs, &mut report);
                for t in gone {
                    execs.remove(&t);
                }
            }
        }
        batch.flush(&gate, &mut execs, &mut report);
        if let (None, Some(first)) = (&workers, first_time) {
            workers = Some(start_workers(first)?);
        }
        execs.clear();
        // Every call has been handed over: wait until all are done (or the replay stops), then
        // close the run queue so that the workers end.
        loop {
            if lock(&gate.m).seqs.is_empty() || sh.abort.load(Ordering::Relaxed) {
                break;
            }
            if let Some(w) = &workers {
                w.grow_if_needed();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        timer.finish();
        if timer_thread.join().is_err() {
            report.warn("the replay timer thread panicked");
        }
        *lock(&gate.runq) = None;
        drop(runq_rx);
        let threads = workers.map(|w| std::mem::take(&mut *lock(&w.threads))).unwrap_or_default();
        let keep = sh.opts.keep_mismatches;
        join_executors(&sh, &gate, threads, &mut report);
        watch_done.store(true, Ordering::Relaxed);
        // Now, not at the end of its current 50 ms nap: the replay's elapsed time ends here.
        watch.thread().unpark();
        match watch.join() {
            Ok(r) => report.merge(r, usize::MAX),
            Err(_) => report.warn("the replay watchdog thread panicked"),
        }
        // The reader ends once the dispatcher is gone (its channel closes).
        let prefetch_stats = iter.stats();
        let here = iter.notes();
        drop(iter);
        match reader.join() {
            Ok(mut notes) => {
                for (k, v) in here.unknown {
                    *notes.unknown.entry(k).or_default() += v;
                }
                for (k, v) in here.warnings {
                    *notes.warnings.entry(k).or_default() += v;
                }
                for (k, v) in notes.unknown {
                    *report.unknown.entry(k).or_default() += v;
                }
                for (k, v) in notes.warnings {
                    *report.warnings.entry(k).or_default() += v;
                }
            }
            Err(_) => report.warn("the replay's read-ahead thread panicked"),
        }
        report.mismatches.sort_by_key(|m| m.unique_id);
        report.mismatches.truncate(keep);
        sh.procs.clear();
        report.threads = threads_seen;
        report.processes = procs_seen;
        report.reads = Some(sh.opts.reads);
        report.elapsed_ns = start.elapsed().as_nanos() as u64;
        report.trace_span_ns = first_time.map_or(0, |f| span_end.saturating_sub(f).max(0) as u64);
        report.prefetch = Some(prefetch_stats);
        report.pacer.cpus = cpus.as_ref().map(CpuSplit::describe);
        if let Source::Plan(p) = source {
            report.plan = Some((p.path().display().to_string(), p.source().path.clone()));
        }
        if let Some(e) = read_error {
            return Err(e);
        }
        Ok(report)
    })
}

/// Process-wide settings the replay relies on: umask 0 (each replayed process's umask is
/// applied by hand), SIGPIPE ignored (a pipe write without reader is an EPIPE result, not a
/// dead replayer), SIGIO ignored (no replayed call asks for it: leases and descriptor owners
/// are simulated; a stray one would end the replay), and as many descriptors as allowed.
fn prepare_process() {
    // SAFETY: plain libc calls with valid arguments; the rlimit struct is initialized by
    // getrlimit before it is read.
    unsafe {
        libc::umask(0);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::signal(libc::SIGIO, libc::SIG_IGN);
        // No transparent huge pages: with THP "always", each executor thread's first small
        // allocation faults in and zeroes a 2 MiB page (5,000 threads: 10 GB of zeroing and
        // RSS for kilobytes of use).
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 && rl.rlim_cur < rl.rlim_max {
            rl.rlim_cur = rl.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
        }
    }
}

/// Join the executors. After a stop, executors still inside a call a second later (a call the
/// kernel does not give back) are left behind and named in the report.
fn join_executors(
    sh: &Shared,
    gate: &Gate,
    mut left: Vec<JoinHandle<Report>>,
    report: &mut Report,
) {
    let mut stopped_at: Option<Instant> = None;
    while !left.is_empty() {
        let (ended, rest): (Vec<_>, Vec<_>) = left.into_iter().partition(|h| h.is_finished());
        left = rest;
        for h in ended {
            match h.join() {
                Ok(r) => report.merge(r, usize::MAX),
                Err(_) => report.warn("an executor thread panicked"),
            }
        }
        if left.is_empty() {
            break;
        }
        if sh.abort.load(Ordering::Relaxed) {
            let t = *stopped_at.get_or_insert_with(Instant::now);
            if t.elapsed() > Duration::from_secs(1) {
                let inside: Vec<String> =
                    lock(&gate.m).running.values().take(8).map(ToString::to_string).collect();
                report.warn(format!(
                    "{} executor threads were still busy a second after the stop (inside: {}); \
                     left behind",
                    left.len(),
                    if inside.is_empty() { "no call".to_string() } else { inside.join(", ") }
                ));
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Watches the replay until `done`: a stop request (Ctrl-C) becomes the abort every executor
/// sees, parked executors are woken; an ordering cycle is broken in recorded order; a replay
/// in which nothing finishes for the stall timeout while no call runs is stopped, with a
/// report of what waits for what.
fn watchdog(
    sh: &Shared,
    gate: &Gate,
    progress: &Progress,
    done: &AtomicBool,
    workers: &Mutex<Option<Arc<Workers>>>,
    timer: &Timer,
) -> Report {
    let mut rep = Report::default();
    let mut since = (u64::MAX, Instant::now());
    while !done.load(Ordering::Relaxed) {
        // Unparked when the replay ends (an early wake-up is harmless: it checks and naps).
        std::thread::park_timeout(Duration::from_millis(50));
        let started = match lock(workers).clone() {
            Some(w) => {
                w.grow_if_needed();
                true
            }
            None => false,
        };
        if progress.stop.load(Ordering::Relaxed) && !sh.abort.swap(true, Ordering::Relaxed) {
            rep.aborted.get_or_insert_with(|| "interrupted".into());
        }
        if sh.abort.load(Ordering::Relaxed) {
            gate.wake_all();
            continue;
        }
        if timer.pending() || !started {
            // Calls waiting for their due time (--timing) are not stalled, nor are calls
            // queued before the workers start (a timed replay fills its queues first).
            since.1 = Instant::now();
        }
        match gate.look(&mut since, sh.opts.stall_timeout) {
            Look::Fine => {}
            Look::CycleBroken(w) => rep.warn(w),
            Look::Stalled(w) => {
                rep.aborted = Some(format!("stalled: {w}"));
                sh.abort.store(true, Ordering::Relaxed);
                gate.wake_all();
            }
        }
    }
    rep
}

/// A worker: runs tasks from the run queue until it closes.
fn worker(w: &Workers) -> Report {
    let mut rep = Report::default();
    if let Some(c) = &w.cpus {
        c.pin_worker();
    }
    let faults = crate::sys::thread_major_faults();
    while let Ok(task) = w.runq.recv() {
        run_task(w, &task, &mut rep);
    }
    rep.worker_major_faults = crate::sys::thread_major_faults().saturating_sub(faults);
    rep
}

/// Run a task's calls in order until it has none (it is then released) or its next call
/// waits for another (the gate holds it and requeues it when that call is done).
fn run_task(w: &Workers, task: &Arc<Task>, rep: &mut Report) {
    let ctx = &w.ctx;
    loop {
        // Only the task's holder takes calls off the front; the reader adds at the back.
        let head = {
            let q = lock(&task.q);
            match q.front() {
                Some(j) => JobHead { seq: j.seq, called: j.called, deps: j.deps.clone(), id: j.id },
                None => {
                    // Released under the queue's lock: a call added after this is scheduled
                    // by whoever adds it.
                    task.owned.store(false, Ordering::Release);
                    return;
                }
            }
        };
        // --timing: a call due later than the timer's lead waits in the timer, not here.
        if let Some(due) = ctx.due(head.called) {
            if due.saturating_duration_since(Instant::now()) > 2 * TIMER_LEAD
                && !ctx.sh.abort.load(Ordering::Relaxed)
            {
                ctx.timer.defer(due - TIMER_LEAD, task.clone());
                return;
            }
        }
        match ctx.gate.try_enter(task, &head, &ctx.sh.abort) {
            Entry::Go => {
                let job = lock(&task.q).pop_front().expect("the holder's front call");
                w.busy.fetch_add(1, Ordering::AcqRel);
                run_job(ctx, job, rep);
                w.busy.fetch_sub(1, Ordering::AcqRel);
            }
            // The gate holds the task now (it may already be running elsewhere).
            Entry::Parked => return,
            Entry::Stop => {
                let job = lock(&task.q).pop_front().expect("the holder's front call");
                ctx.gate.done(&job);
            }
        }
    }
}

/// Replay one call that the gate let through.
fn run_job(ctx: &Ctx, job: Job, rep: &mut Report) {
    if let (Some(due), Timing::Scaled(k)) = (ctx.due(job.called), ctx.sh.opts.timing) {
        rep.pacer.wait_until(due, &ctx.sh.abort);
        rep.timing = Some(k);
        let offset = job.called.saturating_sub(ctx.clock.0).max(0) as u64;
        rep.pacer.issued(due, Instant::now(), offset / 1_000_000_000);
    }
    let Some(p) = ctx.sh.procs.get(job.pl.proc) else {
        rep.warn("call of a process that had already ended: skipped");
        ctx.gate.done(&job);
        return;
    };
    // A bug in one call's replay must not take the worker (and every call waiting for its
    // calls) down with it.
    let out = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        execute(&ctx.sh, &p, &job.ev, &job.pl)
    })) {
        Ok(o) => o,
        Err(e) => {
            let msg = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            rep.warn(format!("replaying {} failed inside the replayer: {msg}", job.id));
            ctx.gate.done(&job);
            return;
        }
    };
    if job.pl.ends_proc {
        ctx.sh.procs.remove(job.pl.proc);
    }
    account(ctx, rep, &job.ev, out);
    ctx.gate.done(&job);
    ctx.progress.done.fetch_add(1, Ordering::Relaxed);
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
    if let Some(sink) = &ctx.sh.opts.outcomes {
        sink.record(ev, &out, (verified && verify != Verify::None).then_some(diffs.is_empty()));
    }
    if let Some(log) = &ctx.log {
        let level = ctx.sh.opts.log_level;
        if level >= 2 || (level >= 1 && !diffs.is_empty()) {
            let mut l = lock(log);
            let line =
                ra_trace::format::format_event(ev, &ra_trace::format::FormatOptions::default());
            let res = match &out.res {
                // The recorded result stands, and there is none (exit, a call its thread
                // ended inside): shown as the trace shows it.
                _ if out.rule == Rule::Recorded && ev.ret.is_none() && !ev.failed() => {
                    "?".to_string()
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::key_deps;
    use crate::shadow::NameKeys;

    fn id(n: u64) -> CallId {
        CallId { unique_id: n, name: "read" }
    }

    fn job(seq: u64, called: i64, ret: i64, deps: Vec<u64>) -> Job {
        let def = ra_syscalls::lookup("read").unwrap();
        Job {
            seq,
            ev: Event::new(def),
            pl: Placement::default(),
            called,
            ret,
            bytes: 0,
            deps,
            id: id(seq),
        }
    }

    fn gate_with(calls: &[(u64, i64)]) -> Gate {
        let g = Gate::default();
        let regs: Vec<_> = calls.iter().map(|&(s, r)| (s, r, 0, id(s))).collect();
        g.dispatched(&regs);
        g
    }

    #[test]
    fn calls_on_a_file_keep_the_order_they_were_called_in() {
        let mut last = foldhash::HashMap::default();
        let mut deps = Vec::new();
        // #1 access(cc1) called at 50, #2 access(cc1) called at 60.
        key_deps(&mut last, &[7], &NameKeys::default(), 1, 50, None, &mut deps);
        key_deps(&mut last, &[7], &NameKeys::default(), 2, 60, None, &mut deps);
        assert_eq!(deps, [1]);
        // #3 execve(cc1), called at 30 but recorded after them (it returned last): it does
        // not wait for them.
        deps.clear();
        key_deps(&mut last, &[7], &NameKeys::default(), 3, 30, None, &mut deps);
        assert!(deps.is_empty(), "{deps:?}");
        // #4 called after everything: waits for the last recorded call on the file.
        key_deps(&mut last, &[7, 7], &NameKeys::default(), 4, 70, None, &mut deps);
        assert_eq!(deps, [3]);
    }

    /// Python's test_eintr: the parent's blocking flock (#2, called at 20) waits until the
    /// child's close (#3, called at 50) releases the lock, and returns at 60, just before the
    /// close does (recorded first). The close must not wait for the lock wait it ends (the
    /// replay's flock then waited for the stall timeout): it waits for what the lock wait
    /// waited for. A call made after the wait returned waits for the last call on the file.
    #[test]
    fn a_call_made_while_a_lock_wait_waited_does_not_wait_for_it() {
        let mut last = foldhash::HashMap::default();
        let mut deps = Vec::new();
        let none = NameKeys::default();
        key_deps(&mut last, &[7], &none, 1, 10, None, &mut deps);
        key_deps(&mut last, &[7], &none, 2, 20, Some(60), &mut deps);
        assert_eq!(deps, [1]);
        deps.clear();
        key_deps(&mut last, &[7], &none, 3, 50, None, &mut deps);
        assert_eq!(deps, [1], "the close waits for #1, not for the flock");
        deps.clear();
        key_deps(&mut last, &[7], &none, 4, 70, None, &mut deps);
        assert_eq!(deps, [3]);
        // A lock wait that returned before the next call was made is waited for as any call.
        deps.clear();
        key_deps(&mut last, &[7], &none, 5, 80, Some(90), &mut deps);
        key_deps(&mut last, &[7], &none, 6, 95, None, &mut deps);
        assert_eq!(deps, [4, 5]);
    }

    /// The name keys `f` sets.
    fn nk(f: fn(&mut NameKeys)) -> NameKeys {
        let mut n = NameKeys::default();
        f(&mut n);
        n
    }

    /// fs_mark's two threads both `mkdir` their directory: the one called second made it and
    /// the one called first failed with `EEXIST`. The failure waits for the call that made the
    /// name, whenever either was called; a failure with `ENOENT` waits for the removal.
    #[test]
    fn a_call_that_failed_on_a_name_waits_for_the_call_that_made_or_removed_it() {
        let mut last = foldhash::HashMap::default();
        let mut deps = Vec::new();
        // #1 mkdir(f), called at 60, made it; #2 stat(f) called at 70.
        key_deps(&mut last, &[7], &nk(|n| n.made = Some(7)), 1, 60, None, &mut deps);
        key_deps(&mut last, &[7], &NameKeys::default(), 2, 70, None, &mut deps);
        // #3 mkdir(f) called at 50, recorded after them: EEXIST, so it waits for #1 (and only
        // for #1: #2 was called later).
        deps.clear();
        key_deps(&mut last, &[7], &nk(|n| n.existed = Some(7)), 3, 50, None, &mut deps);
        assert_eq!(deps, [1]);
        // #4 unlink(f) called at 80; #5 open(f) called at 40 failed with ENOENT: waits for #4.
        key_deps(&mut last, &[7], &nk(|n| n.removed = Some(7)), 4, 80, None, &mut deps);
        deps.clear();
        key_deps(&mut last, &[7], &nk(|n| n.missing = vec![7]), 5, 40, None, &mut deps);
        assert_eq!(deps, [4]);
        // A call called earlier that did not fail on the name still does not wait.
        deps.clear();
        key_deps(&mut last, &[7], &NameKeys::default(), 6, 10, None, &mut deps);
        assert!(deps.is_empty(), "{deps:?}");
    }

    /// test_logging under ptrace: a thread's unlink of a log file failed with ENOENT (#2),
    /// called while the main thread's open (#3, called first, recorded after it) created the
    /// file again: the failure says the unlink ran first, so the open waits for it (replayed
    /// the other way, the unlink removed the new file and the calls after it mismatched). The
    /// same for a removal and a call that failed because the name existed.
    #[test]
    fn the_call_that_makes_a_name_waits_for_the_calls_that_found_it_missing() {
        let mut last = foldhash::HashMap::default();
        let mut deps = Vec::new();
        key_deps(&mut last, &[7], &nk(|n| n.removed = Some(7)), 1, 10, None, &mut deps);
        key_deps(&mut last, &[7], &nk(|n| n.missing = vec![7]), 2, 50, None, &mut deps);
        deps.clear();
        key_deps(&mut last, &[7], &nk(|n| n.made = Some(7)), 3, 40, None, &mut deps);
        assert_eq!(deps, [2]);
        // A failure before the name was last made or removed is not waited for again.
        deps.clear();
        key_deps(&mut last, &[7], &nk(|n| n.removed = Some(7)), 4, 60, None, &mut deps);
        key_deps(&mut last, &[7], &nk(|n| n.made = Some(7)), 5, 70, None, &mut deps);
        assert!(!deps.contains(&2), "{deps:?}");
        // mkdir(g) failed with EEXIST (#6), called while an rmdir (#7, called first, recorded
        // after it) removed g: the rmdir waits for it.
        deps.clear();
        key_deps(&mut last, &[8], &nk(|n| n.made = Some(8)), 6, 100, None, &mut deps);
        key_deps(&mut last, &[8], &nk(|n| n.existed = Some(8)), 7, 130, None, &mut deps);
        deps.clear();
        key_deps(&mut last, &[8], &nk(|n| n.removed = Some(8)), 8, 120, None, &mut deps);
        assert_eq!(deps, [7]);
    }

    #[test]
    fn a_call_never_waits_for_itself_or_a_later_call() {
        let g = gate_with(&[(5, 100), (7, 200)]);
        let st = lock(&g.m);
        assert_eq!(Gate::ready(&st, 5, 50, &[5, 7]), Ok(()));
    }

    #[test]
    fn the_interval_rule_holds_a_call_behind_an_earlier_unfinished_one() {
        let g = gate_with(&[(1, 10), (2, 30), (3, 40)]);
        // Call 3 was called at 20: call 1 (returned at 10) must finish first, call 2 (returned
        // at 30) overlapped it.
        assert_eq!(Gate::ready(&lock(&g.m), 3, 20, &[]), Err(1));
        g.done(&job(1, 0, 10, vec![]));
        assert_eq!(Gate::ready(&lock(&g.m), 3, 20, &[]), Ok(()));
        // A dependency (same file) on an unfinished earlier call holds it too.
        assert_eq!(Gate::ready(&lock(&g.m), 3, 20, &[2]), Err(2));
    }

    /// A gate with calls 1 and 2, and a thread parked at it with call 2 (held back by 1).
    fn parked_on_call_1() -> (Arc<Gate>, Arc<AtomicBool>, JoinHandle<bool>) {
        let g = Arc::new(gate_with(&[(1, 10), (2, 40)]));
        let stop = Arc::new(AtomicBool::new(false));
        let (g2, s2) = (g.clone(), stop.clone());
        let t = std::thread::spawn(move || g2.wait(&job(2, 20, 40, vec![]), &s2));
        while !lock(&g.m).waiting.contains_key(&2) {
            std::thread::sleep(Duration::from_millis(1));
        }
        (g, stop, t)
    }

    #[test]
    fn a_parked_executor_wakes_when_its_blocker_finishes() {
        let (g, _stop, t) = parked_on_call_1();
        let t0 = Instant::now();
        g.done(&job(1, 0, 10, vec![]));
        assert!(t.join().unwrap(), "let through");
        assert!(t0.elapsed() < PARK_SLICE, "woken by the completion, not by the timeout");
        assert!(lock(&g.m).running.contains_key(&2));
    }

    #[test]
    fn a_task_held_at_the_gate_is_requeued_when_its_blocker_finishes() {
        let g = gate_with(&[(1, 10), (2, 40)]);
        let (tx, rx) = unbounded::<Arc<Task>>();
        *lock(&g.runq) = Some(tx);
        let task = Arc::new(Task::default());
        let head = JobHead { seq: 2, called: 20, deps: vec![], id: id(2) };
        let stop = AtomicBool::new(false);
        assert_eq!(g.try_enter(&task, &head, &stop), Entry::Parked);
        assert!(rx.is_empty(), "held by the gate, not queued");
        g.done(&job(1, 0, 10, vec![]));
        let back = rx.try_recv().expect("requeued by the completion of call 1");
        assert!(Arc::ptr_eq(&back, &task));
        assert_eq!(g.try_enter(&task, &head, &stop), Entry::Go);
        stop.store(true, Ordering::Relaxed);
        let next = JobHead { seq: 3, called: 50, deps: vec![], id: id(3) };
        assert_eq!(g.try_enter(&task, &next, &stop), Entry::Stop);
    }

    #[test]
    fn a_stop_releases_parked_executors_at_once() {
        let (g, stop, t) = parked_on_call_1();
        let t0 = Instant::now();
        stop.store(true, Ordering::Relaxed);
        g.wake_all();
        assert!(!t.join().unwrap(), "told to stop");
        assert!(t0.elapsed() < PARK_SLICE);
    }

    #[test]
    fn an_ordering_cycle_is_broken_in_recorded_order() {
        let g = gate_with(&[(4, 10), (6, 20)]);
        // The earliest unfinished call waits for itself (what a duplicate key once caused).
        lock(&g.m).waiting.insert(4, 4);
        let mut since = (lock(&g.m).completed, Instant::now());
        match g.look(&mut since, Duration::from_secs(10)) {
            Look::CycleBroken(w) => assert!(w.contains("unique_id 4"), "{w}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(Gate::ready(&lock(&g.m), 4, 100, &[4]), Ok(()));
    }

    #[test]
    fn no_progress_without_a_running_call_is_a_stall() {
        let g = gate_with(&[(3, 10), (9, 20)]);
        lock(&g.m).waiting.insert(9, 3);
        let mut since = (lock(&g.m).completed, Instant::now());
        assert_eq!(g.look(&mut since, Duration::from_millis(30)), Look::Fine);
        std::thread::sleep(Duration::from_millis(40));
        match g.look(&mut since, Duration::from_millis(30)) {
            Look::Stalled(w) => {
                assert!(w.contains("the earliest read (unique_id 3)"), "{w}");
                assert!(w.contains("not taken up"), "{w}");
                assert!(w.contains("read (unique_id 9) waits for read (unique_id 3)"), "{w}");
            }
            other => panic!("{other:?}"),
        }
        // A running call is progress enough: its own waits have their stall timeouts.
        lock(&g.m).running.insert(3, id(3));
        assert_eq!(g.look(&mut since, Duration::from_millis(30)), Look::Fine);
    }
}
