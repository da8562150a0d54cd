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
//! The dispatcher turns these rules into each call's waits when it admits the call
//! ([`Admit`]); if one is unfinished, the gate keeps the task on that call's slot and puts it
//! back on the run queue when that call completes; the worker takes another task (no lock is
//! shared by the workers: see [`crate::gate`]). A call only ever waits for earlier calls (a
//! dependency on itself, as `dup2(fd, fd)` would give, or on a later call is ignored), so the
//! earliest unfinished call can always run. A worker inside a blocking call (a pipe read, a
//! lock wait, a `--timing` sleep) is busy; when all are busy and tasks wait to run, another
//! worker is started. A watchdog thread turns Ctrl-C into an immediate stop of every task and
//! stops a replay in which no call finishes for the stall timeout while none is running, naming the
//! calls that wait.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};
use ra_trace::{Event, TraceReader};

use crate::calls::{execute, Mode, Outcome, Rule, Shared};
use crate::gate::{Admit, Admitted, CallId, Entry, Gate, Look, Slot, Waker};
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
    ev: Event,
    pl: Placement,
    called: i64,
    bytes: usize,
    /// Its completion state at the gate, and the earlier calls' it waits for.
    slot: Arc<Slot<Arc<Task>>>,
    waits: Vec<Arc<Slot<Arc<Task>>>>,
    id: CallId,
}

type TaskGate = Gate<Arc<Task>>;

/// The calls of one traced thread, run in order by whichever worker holds the task.
#[derive(Default)]
struct Task {
    q: Mutex<VecDeque<Job>>,
    /// In the run queue, being run by a worker, or parked at the gate (only one at a time).
    owned: AtomicBool,
}

type Log = Arc<Mutex<Box<dyn Write + Send>>>;

/// Calls per batch handed from the reader to the executors.
const BATCH: usize = 128;

/// An executor thread as the reader sees it.
struct Exec {
    task: Arc<Task>,
    /// Calls read for it, not yet handed over.
    buf: Vec<Job>,
    /// Its task's number at the gate (its calls run in order: none waits for another).
    lane: u64,
}

/// The worker threads that run the traced threads' tasks (M:N: a traced thread is a task, not
/// an OS thread; a call held at the gate gives its worker back). A worker inside a blocking
/// call (a pipe read, a lock wait, a `--timing` sleep) is busy: when every worker is busy and
/// tasks are waiting, another worker is started.
struct Workers {
    ctx: Ctx,
    runq: Receiver<Option<Arc<Task>>>,
    threads: Mutex<Vec<JoinHandle<Report>>>,
    /// Set when the replay is over: no worker is started after it.
    closed: AtomicBool,
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
        if self.closed.load(Ordering::Acquire) {
            return Ok(());
        }
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
    regs: Vec<(Arc<Slot<Arc<Task>>>, usize)>,
    len: usize,
    /// Executors (by traced thread) with calls in this batch.
    touched: Vec<i32>,
}

impl Batch {
    /// Register the batch's calls at the gate, then hand each executor its calls (in this
    /// order: a call must be known to the gate before any later call checks it).
    fn flush(&mut self, gate: &TaskGate, execs: &mut HashMap<i32, Exec>, report: &mut Report) {
        if self.len == 0 {
            return;
        }
        gate.dispatched(&self.regs);
        self.regs.clear();
        self.len = 0;
        // Only the tasks this batch has calls for (thousands may exist).
        let runq = gate.runq();
        for t in self.touched.drain(..) {
            let Some(e) = execs.get_mut(&t) else { continue };
            if e.buf.is_empty() {
                continue;
            }
            lock(&e.task.q).extend(e.buf.drain(..));
            if !e.task.owned.swap(true, Ordering::AcqRel) {
                if let Some(q) = runq {
                    if q.send(Some(e.task.clone())).is_err() {
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
    gate: Arc<TaskGate>,
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
    fn run(&self, gate: &TaskGate, stop: &AtomicBool) {
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
        rings: Default::default(),
    });
    let gate = Arc::new(TaskGate::default());
    let timed = matches!(sh.opts.timing, Timing::Scaled(_));
    // --timing: the workers and the other threads on CPUs of their own (crate::timing); the
    // threads started below inherit this thread's.
    let cpus = if timed && sh.opts.split_cpus { CpuSplit::of_this_thread() } else { None };
    let _restore = cpus.as_ref().map(CpuSplit::pin_others);
    // The watchdog turns Ctrl-C into a stop every waiting executor sees at once, and stops a
    // replay that makes no progress.
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
    let (runq_tx, runq_rx) = unbounded::<Option<Arc<Task>>>();
    gate.set_runq(runq_tx);
    // The dispatcher's side of the ordering rules (this thread's alone).
    let mut admit: Admit<Arc<Task>> = Admit::default();
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
                closed: AtomicBool::new(false),
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
                // (Calls not yet handed over are admitted already.)
                plan.release_before(admit.oldest().unwrap_or(seq));
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
                    let e = Exec { task: Arc::default(), buf: Vec::new(), lane: threads_seen };
                    execs.insert(tid, e);
                    execs.get_mut(&tid).expect("just inserted")
                }
            };
            let Admitted { slot, waits } = admit.admit(seq, called, ret, &deps, exec.lane, id);
            let job = Job { ev, pl, called, bytes, slot, waits, id };
            batch.regs.push((job.slot.clone(), job.bytes));
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
            if gate.unfinished() == 0 || sh.abort.load(Ordering::Relaxed) {
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
        // The workers end at the None each takes (a woken task still queued before it is
        // run first: after a stop, it only completes its calls).
        let threads = workers
            .map(|w| {
                let mut t = lock(&w.threads);
                w.closed.store(true, Ordering::Release);
                std::mem::take(&mut *t)
            })
            .unwrap_or_default();
        if let Some(q) = gate.runq() {
            for _ in &threads {
                let _ = q.send(None);
            }
        }
        drop(runq_rx);
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
    gate: &TaskGate,
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
                let inside: Vec<String> = gate.running(8).iter().map(ToString::to_string).collect();
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
/// sees, parked executors are woken; a replay in which nothing finishes for the stall timeout while no call runs is stopped, with a
/// report of what waits for what.
fn watchdog(
    sh: &Shared,
    gate: &TaskGate,
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
    while let Ok(Some(task)) = w.runq.recv() {
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
        // The gate is asked under the queue's lock (the task's own: a wake-up that comes at
        // once finds the call still at the front).
        let (entry, job) = {
            let mut q = lock(&task.q);
            let Some(j) = q.front() else {
                // Released under the queue's lock: a call added after this is scheduled by
                // whoever adds it.
                task.owned.store(false, Ordering::Release);
                return;
            };
            // --timing: a call due later than the timer's lead waits in the timer, not here.
            if let Some(due) = ctx.due(j.called) {
                if due.saturating_duration_since(Instant::now()) > 2 * TIMER_LEAD
                    && !ctx.sh.abort.load(Ordering::Relaxed)
                {
                    drop(q);
                    ctx.timer.defer(due - TIMER_LEAD, task.clone());
                    return;
                }
            }
            match ctx.gate.try_enter(task, &j.slot, &j.waits, &ctx.sh.abort) {
                // The gate holds the task now (it may already be running elsewhere).
                Entry::Parked => return,
                e => (e, q.pop_front().expect("the holder's front call")),
            }
        };
        if entry == Entry::Go {
            w.busy.fetch_add(1, Ordering::AcqRel);
            run_job(ctx, job, rep);
            w.busy.fetch_sub(1, Ordering::AcqRel);
        } else {
            ctx.gate.done(&job.slot, job.bytes);
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
        ctx.gate.done(&job.slot, job.bytes);
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
            ctx.gate.done(&job.slot, job.bytes);
            return;
        }
    };
    if job.pl.ends_proc {
        ctx.sh.procs.remove(job.pl.proc);
    }
    account(ctx, rep, &job.ev, out);
    ctx.gate.done(&job.slot, job.bytes);
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
    use crate::planner::key_deps;
    use crate::shadow::NameKeys;

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
}
