//! The ordering gate: when a call may start, without a lock shared by the workers.
//!
//! Call `j` may start once (1) every earlier call `s` (lower seq) whose recorded interval
//! ended before `j`'s began (`ret_s < called_j`) has completed (calls that overlapped in the
//! recording may run concurrently), and (2) every earlier call `j` depends on (same file,
//! the clone that made its thread, the call that freed its descriptor number) has completed.
//! A dependency on itself or on a later call is ignored, so the earliest unfinished call can
//! always run.
//!
//! The dispatcher (one thread, calls in seq order) turns these rules into each call's *waits*
//! when it admits the call ([`Admit`]): the unfinished calls it must see complete, each a
//! [`Slot`] (its completion state). A worker checks a call's waits with atomic loads; a call
//! that must wait registers its task on the one slot it waits for, under that slot's own lock,
//! and is resumed by that call's completion (no shared condition variable, no global lock:
//! the only locks on the per-call path are the call's own slot and the one it waits for).
//!
//! Rule (1) is kept exact with few waits. At `j`'s admission every unfinished call already
//! admitted is earlier than `j`, so its interval blockers are the admitted unfinished calls
//! with `ret < called_j`. Of those it waits only for the *maximal* ones (no other blocker was
//! called after they returned): a blocker `t` that returned before another blocker `u` was
//! called is covered, because `u` waited for `t` (by the same rule) before it could start, let
//! alone finish. That argument needs `t` earlier than `u`, which holds for every call whose
//! return is not before the latest call time of the calls admitted before it ("in order");
//! the rare call that is not ("odd": a trace whose unique_id order is neither call nor return
//! order) is waited for by every later call it blocks, without the shortcut. The maximal
//! blockers are a set of calls that overlapped each other in the recording: at most the
//! number of calls in flight at once, usually one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use crate::world::lock;

/// A call as the gate names it in reports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallId {
    pub unique_id: u64,
    pub name: &'static str,
}

impl std::fmt::Display for CallId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (unique_id {})", self.name, self.unique_id)
    }
}

/// Where a call is (for the watchdog's reports; the rules read only `done`).
const QUEUED: u8 = 0;
const WAITING: u8 = 1;
const RUNNING: u8 = 2;
const DONE: u8 = 3;

/// One call's completion state, and who waits for it.
pub(crate) struct Slot<T> {
    pub seq: u64,
    /// The task whose calls run in order with it.
    lane: u64,
    pub id: CallId,
    done: AtomicBool,
    state: AtomicU8,
    /// The seq of the call it waits for (while WAITING).
    waits_for: AtomicU64,
    /// Who to resume when the call completes. Only this call's waiters and its completion
    /// take this lock: registration and completion are ordered by it, so no wake-up is lost.
    waiters: Mutex<Vec<Waker<T>>>,
}

impl<T> Slot<T> {
    fn new(seq: u64, lane: u64, id: CallId) -> Slot<T> {
        Slot {
            seq,
            lane,
            id,
            done: AtomicBool::new(false),
            state: AtomicU8::new(QUEUED),
            waits_for: AtomicU64::new(u64::MAX),
            waiters: Mutex::new(Vec::new()),
        }
    }
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

/// Who waits at the gate: a thread (parked) or a task (handed back to the run queue).
pub(crate) enum Waker<T> {
    /// (The blocking [`Gate::wait`], which the unit tests use.)
    #[cfg(test)]
    Thread(std::thread::Thread),
    Task(T),
}

/// What a worker may do with a task's next call.
#[derive(Debug, PartialEq)]
pub(crate) enum Entry {
    /// Run it now.
    Go,
    /// It waits for an earlier call; the task was handed to that call's slot.
    Parked,
    /// The replay is stopping.
    Stop,
}

/// A call as admitted: its own slot and the slots it waits for.
pub(crate) struct Admitted<T> {
    pub slot: Arc<Slot<T>>,
    pub waits: Vec<Arc<Slot<T>>>,
}

/// An admitted call's recorded call time and slot.
type Called<T> = (i64, Arc<Slot<T>>);

/// The dispatcher's side of the rules: the admitted calls not yet seen complete. Owned by the
/// dispatcher alone (no lock); see the module doc for why its waits are exact.
pub(crate) struct Admit<T> {
    /// In-order calls by (recorded return, seq), with their recorded call time.
    in_order: BTreeMap<(i64, u64), Called<T>>,
    /// Odd calls (returned before an earlier-admitted call was called) by (return, seq).
    odd: BTreeMap<(i64, u64), Arc<Slot<T>>>,
    /// Every admitted call not yet seen complete, by seq (dependencies, the oldest).
    by_seq: BTreeMap<u64, Arc<Slot<T>>>,
    /// The latest recorded call time of the calls admitted so far.
    max_called: i64,
    admitted: u64,
    /// Keys of completed calls found while admitting (reused).
    gone: Vec<(i64, u64)>,
}

impl<T> Default for Admit<T> {
    fn default() -> Self {
        Admit {
            in_order: BTreeMap::new(),
            odd: BTreeMap::new(),
            by_seq: BTreeMap::new(),
            max_called: i64::MIN,
            admitted: 0,
            gone: Vec::new(),
        }
    }
}

impl<T> Admit<T> {
    /// Admit call `seq` (recorded over `[called, ret]`, depending on `deps`, run on `lane`):
    /// its slot and its waits. Calls are admitted in increasing seq. A lane's calls run one
    /// after another in seq order (a task), so none waits for an earlier call of its own lane:
    /// that call is complete before it starts.
    pub fn admit(
        &mut self,
        seq: u64,
        called: i64,
        ret: i64,
        deps: &[u64],
        lane: u64,
        id: CallId,
    ) -> Admitted<T> {
        let mut waits: Vec<Arc<Slot<T>>> = Vec::new();
        // Rule 1, in-order blockers: by return, latest first; the maximal ones are those
        // returned no earlier than the latest call time among the unfinished blockers above.
        let mut latest_called = i64::MIN;
        let gone = &mut self.gone;
        for (&k, (c, s)) in self.in_order.range(..(called, 0)).rev() {
            if s.is_done() {
                gone.push(k);
                continue;
            }
            if k.0 < latest_called {
                break;
            }
            latest_called = latest_called.max(*c);
            if s.lane != lane {
                waits.push(s.clone());
            }
        }
        for k in gone.drain(..) {
            self.in_order.remove(&k);
        }
        // Odd blockers: each of them.
        for (&k, s) in self.odd.range(..(called, 0)) {
            if s.is_done() {
                gone.push(k);
            } else if s.lane != lane {
                waits.push(s.clone());
            }
        }
        for k in gone.drain(..) {
            self.odd.remove(&k);
        }
        // Rule 2: unfinished earlier dependencies.
        for &d in deps {
            if d >= seq {
                continue;
            }
            if let Some(s) = self.by_seq.get(&d) {
                if !s.is_done() && s.lane != lane && !waits.iter().any(|w| w.seq == d) {
                    waits.push(s.clone());
                }
            }
        }
        let slot = Arc::new(Slot::new(seq, lane, id));
        if ret < self.max_called {
            self.odd.insert((ret, seq), slot.clone());
        } else {
            self.in_order.insert((ret, seq), (called, slot.clone()));
        }
        self.max_called = self.max_called.max(called);
        self.by_seq.insert(seq, slot.clone());
        self.admitted += 1;
        if self.admitted % 1024 == 0 {
            self.prune();
        }
        Admitted { slot, waits }
    }

    /// Forget calls seen complete (bounded memory however long the earliest call runs).
    fn prune(&mut self) {
        self.by_seq.retain(|_, s| !s.is_done());
        self.odd.retain(|_, s| !s.is_done());
        if self.in_order.len() > 2 * self.by_seq.len() + 1024 {
            self.in_order.retain(|_, (_, s)| !s.is_done());
        }
    }

    /// The earliest admitted call not yet complete (None: all are).
    pub fn oldest(&mut self) -> Option<u64> {
        while let Some(e) = self.by_seq.first_entry() {
            if !e.get().is_done() {
                return Some(*e.key());
            }
            e.remove();
        }
        None
    }
}

/// The gate's shared side: completion counts, the run queue parked tasks return to, and the
/// ledger of unfinished calls the watchdog reads (the workers never lock it).
pub(crate) struct Gate<T> {
    /// Where a parked task goes when the call it waits for completes.
    runq: OnceLock<Sender<Option<T>>>,
    /// Calls handed over (registered in the ledger) and calls completed.
    dispatched: AtomicU64,
    completed: AtomicU64,
    /// Data bytes held by handed-over, unfinished calls.
    bytes: AtomicUsize,
    /// The reader waits for room until this many calls are unfinished (usize::MAX: it does
    /// not wait), parked; the completion that makes room unparks it.
    room_at: AtomicUsize,
    reader: OnceLock<std::thread::Thread>,
    /// Handed-over calls not yet seen complete, by seq: the dispatcher adds (a batch at a
    /// time) and prunes, the watchdog reads. Not on the workers' path.
    ledger: Mutex<BTreeMap<u64, Arc<Slot<T>>>>,
}

impl<T> Default for Gate<T> {
    fn default() -> Self {
        Gate {
            runq: OnceLock::new(),
            dispatched: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            bytes: AtomicUsize::new(0),
            room_at: AtomicUsize::new(usize::MAX),
            reader: OnceLock::new(),
            ledger: Mutex::new(BTreeMap::new()),
        }
    }
}

/// How often a parked test thread looks at the stop flag on its own (a stop also unparks it).
#[cfg(test)]
pub(crate) const PARK_SLICE: Duration = Duration::from_millis(500);

impl<T: Clone> Gate<T> {
    /// Where woken tasks go (set once, before any call is handed over).
    pub fn set_runq(&self, q: Sender<Option<T>>) {
        let _ = self.runq.set(q);
    }
    pub fn runq(&self) -> Option<&Sender<Option<T>>> {
        self.runq.get()
    }

    pub fn wake(&self, who: impl IntoIterator<Item = Waker<T>>) {
        for w in who {
            match w {
                #[cfg(test)]
                Waker::Thread(t) => t.unpark(),
                Waker::Task(t) => {
                    if let Some(q) = self.runq.get() {
                        let _ = q.send(Some(t));
                    }
                }
            }
        }
    }

    /// Calls about to be handed to executors: (slot, data bytes). Called before the calls
    /// are handed over.
    pub fn dispatched(&self, calls: &[(Arc<Slot<T>>, usize)]) {
        let mut l = lock(&self.ledger);
        let mut bytes = 0;
        for (s, b) in calls {
            l.insert(s.seq, s.clone());
            bytes += b;
        }
        // Forget the completed calls at the front (the rest when they are many).
        while let Some(e) = l.first_entry() {
            if !e.get().is_done() {
                break;
            }
            e.remove();
        }
        let unfinished = self.unfinished() as usize + calls.len();
        if l.len() > 2 * unfinished + 4096 {
            l.retain(|_, s| !s.is_done());
        }
        drop(l);
        self.bytes.fetch_add(bytes, Ordering::AcqRel);
        self.dispatched.fetch_add(calls.len() as u64, Ordering::AcqRel);
    }

    /// Calls handed over and not complete.
    pub fn unfinished(&self) -> u64 {
        // completed is read first: a completion between the loads only makes this larger.
        let c = self.completed.load(Ordering::Acquire);
        self.dispatched.load(Ordering::Acquire).saturating_sub(c)
    }

    /// May the call of `me` whose waits are `waits` run now? If not, `task` is left with the
    /// slot of the first call it waits for (resumed when that call completes).
    pub fn try_enter(
        &self,
        task: &T,
        me: &Slot<T>,
        waits: &[Arc<Slot<T>>],
        stop: &AtomicBool,
    ) -> Entry {
        if stop.load(Ordering::Relaxed) {
            return Entry::Stop;
        }
        for w in waits {
            if w.is_done() {
                continue;
            }
            let mut l = lock(&w.waiters);
            // Completion sets `done` under this lock: checked again under it, no wake-up is lost.
            if w.is_done() {
                continue;
            }
            me.waits_for.store(w.seq, Ordering::Relaxed);
            me.state.store(WAITING, Ordering::Relaxed);
            l.push(Waker::Task(task.clone()));
            return Entry::Parked;
        }
        me.state.store(RUNNING, Ordering::Relaxed);
        Entry::Go
    }

    /// Wait until the call may run; false when the replay is stopping. (The workers use
    /// [`Gate::try_enter`]; this blocking form serves the unit tests of the rules.)
    #[cfg(test)]
    pub fn wait(&self, me: &Slot<T>, waits: &[Arc<Slot<T>>], stop: &AtomicBool) -> bool {
        'again: loop {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            for w in waits {
                if w.is_done() {
                    continue;
                }
                let mut l = lock(&w.waiters);
                if w.is_done() {
                    continue;
                }
                me.waits_for.store(w.seq, Ordering::Relaxed);
                me.state.store(WAITING, Ordering::Relaxed);
                l.push(Waker::Thread(std::thread::current()));
                drop(l);
                std::thread::park_timeout(PARK_SLICE);
                continue 'again;
            }
            me.state.store(RUNNING, Ordering::Relaxed);
            return true;
        }
    }

    /// The call of `slot` (holding `bytes` of data) completed: resume who waits for it.
    pub fn done(&self, slot: &Slot<T>, bytes: usize) {
        slot.state.store(DONE, Ordering::Relaxed);
        let wake = {
            let mut l = lock(&slot.waiters);
            slot.done.store(true, Ordering::Release);
            std::mem::take(&mut *l)
        };
        self.wake(wake);
        self.bytes.fetch_sub(bytes, Ordering::AcqRel);
        self.completed.fetch_add(1, Ordering::AcqRel);
        let at = self.room_at.load(Ordering::Acquire);
        if at != usize::MAX && self.unfinished() as usize <= at {
            self.room_at.store(usize::MAX, Ordering::Release);
            if let Some(r) = self.reader.get() {
                r.unpark();
            }
        }
    }

    /// True when more than `calls` calls or `bytes` bytes are handed over and unfinished
    /// ([`Gate::wait_room`] would wait).
    pub fn full(&self, calls: usize, bytes: usize) -> bool {
        self.unfinished() as usize > calls || self.bytes.load(Ordering::Acquire) > bytes
    }

    /// Wait until at most `calls` calls and `bytes` bytes are unfinished. A reader that
    /// waited 200 ms without any call finishing goes on anyway: a queued call may be waiting
    /// for one further ahead in the trace. (Called by one thread, the dispatcher.)
    pub fn wait_room(&self, calls: usize, bytes: usize, abort: &AtomicBool) {
        let _ = self.reader.set(std::thread::current());
        let mut last = (self.completed.load(Ordering::Acquire), Instant::now());
        while self.full(calls, bytes) && !abort.load(Ordering::Relaxed) {
            let c = self.completed.load(Ordering::Acquire);
            if c != last.0 {
                last = (c, Instant::now());
            } else if last.1.elapsed() > Duration::from_millis(200) {
                break;
            }
            // Once full, wait until half empty: one wake-up per many finished calls. (Room
            // in bytes alone is seen at the next 20 ms look.)
            self.room_at.store(calls / 2, Ordering::Release);
            if self.full(calls, bytes) {
                std::thread::park_timeout(Duration::from_millis(20));
            }
            self.room_at.store(usize::MAX, Ordering::Release);
        }
    }

    /// Resume every parked task (the replay is stopping).
    pub fn wake_all(&self) {
        let slots: Vec<Arc<Slot<T>>> = lock(&self.ledger).values().cloned().collect();
        for s in slots {
            let w = std::mem::take(&mut *lock(&s.waiters));
            self.wake(w);
        }
    }

    /// The calls inside their replay now (at most `n`, for reports).
    pub fn running(&self, n: usize) -> Vec<CallId> {
        let l = lock(&self.ledger);
        l.values()
            .filter(|s| s.state.load(Ordering::Relaxed) == RUNNING)
            .take(n)
            .map(|s| s.id)
            .collect()
    }
}

/// What the watchdog saw at one look at the gate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Look {
    /// Calls are finishing, or there is nothing to do.
    Fine,
    /// No call has finished for the stall timeout and none is running: the text says what
    /// waits for what.
    Stalled(String),
}

impl<T: Clone> Gate<T> {
    /// One look by the watchdog: tell that the replay made no progress for `stall` although
    /// calls are pending and none is running. (An ordering cycle cannot form: a call waits
    /// only for calls admitted before it.)
    pub fn look(&self, since: &mut (u64, Instant), stall: Duration) -> Look {
        let completed = self.completed.load(Ordering::Acquire);
        if completed != since.0 || self.unfinished() == 0 {
            *since = (completed, Instant::now());
            return Look::Fine;
        }
        let l = lock(&self.ledger);
        let open: Vec<&Arc<Slot<T>>> = l.values().filter(|s| !s.is_done()).collect();
        if open.iter().any(|s| s.state.load(Ordering::Relaxed) == RUNNING) {
            *since = (completed, Instant::now());
            return Look::Fine;
        }
        let Some(first) = open.first() else { return Look::Fine };
        if since.1.elapsed() < stall {
            return Look::Fine;
        }
        let mut why = format!(
            "no call finished for {:.1} s; {} calls unfinished, the earliest {} ",
            since.1.elapsed().as_secs_f64(),
            self.unfinished(),
            first.id
        );
        why.push_str(if first.state.load(Ordering::Relaxed) == WAITING {
            "waits at the ordering gate"
        } else {
            "was not taken up by its executor"
        });
        let name = |x: u64| l.get(&x).map_or_else(|| format!("#{x}"), |c| c.id.to_string());
        let waits: Vec<String> = open
            .iter()
            .filter(|s| s.state.load(Ordering::Relaxed) == WAITING)
            .take(5)
            .map(|s| format!("{} waits for {}", s.id, name(s.waits_for.load(Ordering::Relaxed))))
            .collect();
        if !waits.is_empty() {
            why.push_str("; ");
            why.push_str(&waits.join("; "));
        }
        Look::Stalled(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_channel::unbounded;
    use std::collections::VecDeque;
    use std::thread::JoinHandle;

    fn id(n: u64) -> CallId {
        CallId { unique_id: n, name: "read" }
    }

    type G = Gate<u32>;

    /// Admit calls (seq, called, ret, deps) in order; their slots and waits by seq.
    fn admit_all(calls: &[(u64, i64, i64, &[u64])]) -> (Admit<u32>, Vec<Admitted<u32>>) {
        let mut a = Admit::default();
        let v = calls.iter().map(|&(s, c, r, d)| a.admit(s, c, r, d, s, id(s))).collect();
        (a, v)
    }

    fn seqs(w: &[Arc<Slot<u32>>]) -> Vec<u64> {
        let mut v: Vec<u64> = w.iter().map(|s| s.seq).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn a_call_never_waits_for_itself_or_a_later_call() {
        let (_, v) = admit_all(&[(5, 0, 100, &[]), (7, 150, 200, &[7, 9])]);
        // #7 was called after #5 returned: it waits for #5 only, not for itself or #9.
        assert_eq!(seqs(&v[1].waits), [5]);
        let (_, v) = admit_all(&[(5, 0, 100, &[]), (7, 50, 200, &[7, 9])]);
        assert!(v[1].waits.is_empty(), "overlapped #5: runs beside it");
    }

    #[test]
    fn the_interval_rule_holds_a_call_behind_an_earlier_unfinished_one() {
        let g = G::default();
        let stop = AtomicBool::new(false);
        let (_, v) =
            admit_all(&[(1, 0, 10, &[]), (2, 5, 30, &[]), (3, 20, 40, &[]), (4, 25, 50, &[2])]);
        // #3 was called at 20: #1 (returned at 10) must finish first; #2 (returned at 30)
        // overlapped it.
        assert_eq!(seqs(&v[2].waits), [1]);
        assert_eq!(g.try_enter(&3, &v[2].slot, &v[2].waits, &stop), Entry::Parked);
        g.done(&v[0].slot, 0);
        assert_eq!(g.try_enter(&3, &v[2].slot, &v[2].waits, &stop), Entry::Go);
        // A dependency (same file) on an unfinished earlier call holds it too.
        assert_eq!(seqs(&v[3].waits), [1, 2]);
        assert_eq!(g.try_enter(&4, &v[3].slot, &v[3].waits, &stop), Entry::Parked);
        g.done(&v[1].slot, 0);
        assert_eq!(g.try_enter(&4, &v[3].slot, &v[3].waits, &stop), Entry::Go);
    }

    /// A call waits for the latest blockers only: the earlier ones were waited for by them.
    /// Blockers that overlapped each other are each waited for.
    #[test]
    fn a_call_waits_for_the_blockers_no_later_blocker_waited_for() {
        let (_, v) = admit_all(&[(1, 0, 10, &[]), (2, 11, 20, &[]), (3, 21, 30, &[])]);
        assert_eq!(seqs(&v[2].waits), [2]);
        let (_, v) = admit_all(&[(1, 0, 10, &[]), (2, 5, 12, &[]), (3, 20, 30, &[])]);
        assert_eq!(seqs(&v[2].waits), [1, 2]);
    }

    /// A task's calls run in order: a call does not wait for an earlier call of its own task,
    /// and what that call waited for is covered by it.
    #[test]
    fn a_call_does_not_wait_for_its_own_tasks_calls() {
        let mut a: Admit<u32> = Admit::default();
        let one = a.admit(1, 0, 10, &[], 7, id(1));
        let two = a.admit(2, 20, 30, &[1], 7, id(2));
        assert!(one.waits.is_empty() && two.waits.is_empty());
        let three = a.admit(3, 40, 50, &[], 8, id(3));
        assert_eq!(seqs(&three.waits), [2], "#1 is covered by #2");
    }

    /// unique_id order that is neither call nor return order: #2 returned (at 20) before #1
    /// was called (at 50). #1 does not wait for the later #2; #4 (called at 65) waits for both,
    /// although #1 was called after #2 returned: #1 did not wait for #2.
    #[test]
    fn a_call_recorded_out_of_order_is_waited_for_by_each_call_it_blocks() {
        let g = G::default();
        let stop = AtomicBool::new(false);
        let (_, v) =
            admit_all(&[(1, 50, 60, &[]), (2, 10, 20, &[]), (3, 30, 70, &[]), (4, 65, 80, &[])]);
        assert!(v[0].waits.is_empty());
        assert!(v[1].waits.is_empty(), "nothing earlier returned before it was called");
        assert_eq!(seqs(&v[2].waits), [2]);
        assert_eq!(seqs(&v[3].waits), [1, 2]);
        g.done(&v[0].slot, 0);
        assert_eq!(g.try_enter(&4, &v[3].slot, &v[3].waits, &stop), Entry::Parked);
        g.done(&v[1].slot, 0);
        assert_eq!(g.try_enter(&4, &v[3].slot, &v[3].waits, &stop), Entry::Go);
    }

    #[test]
    fn completed_calls_are_forgotten() {
        let mut a: Admit<u32> = Admit::default();
        let g = G::default();
        for s in 0..10_000u64 {
            let c = a.admit(s, 10 * s as i64, 10 * s as i64 + 5, &[s.saturating_sub(1)], s, id(s));
            assert!(c.waits.len() <= 1, "{}", c.waits.len());
            g.dispatched(&[(c.slot.clone(), 0)]);
            g.done(&c.slot, 0);
        }
        assert_eq!(a.oldest(), None);
        assert!(a.by_seq.len() <= 1024 && a.in_order.len() <= 1024, "{}", a.in_order.len());
        assert!(lock(&g.ledger).len() <= 4096);
        assert_eq!(g.unfinished(), 0);
    }

    /// A gate with calls 1 and 2, and a thread parked at it with call 2 (held back by 1).
    fn parked_on_call_1() -> (Arc<G>, Arc<AtomicBool>, Vec<Admitted<u32>>, JoinHandle<bool>) {
        let g = Arc::new(G::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (_, v) = admit_all(&[(1, 0, 10, &[]), (2, 20, 40, &[])]);
        g.dispatched(&[(v[0].slot.clone(), 0), (v[1].slot.clone(), 0)]);
        let (g2, s2, me, w) = (g.clone(), stop.clone(), v[1].slot.clone(), v[1].waits.clone());
        let t = std::thread::spawn(move || g2.wait(&me, &w, &s2));
        while v[1].slot.state.load(Ordering::Relaxed) != WAITING {
            std::thread::sleep(Duration::from_millis(1));
        }
        (g, stop, v, t)
    }

    #[test]
    fn a_parked_executor_wakes_when_its_blocker_finishes() {
        let (g, _stop, v, t) = parked_on_call_1();
        let t0 = Instant::now();
        g.done(&v[0].slot, 0);
        assert!(t.join().unwrap(), "let through");
        assert!(t0.elapsed() < PARK_SLICE, "woken by the completion, not by the timeout");
        assert_eq!(g.running(8).len(), 1);
    }

    #[test]
    fn a_task_held_at_the_gate_is_requeued_when_its_blocker_finishes() {
        let g = G::default();
        let (tx, rx) = unbounded();
        g.set_runq(tx);
        let (_, v) = admit_all(&[(1, 0, 10, &[]), (2, 20, 40, &[]), (3, 50, 60, &[])]);
        let stop = AtomicBool::new(false);
        assert_eq!(g.try_enter(&7, &v[1].slot, &v[1].waits, &stop), Entry::Parked);
        assert!(rx.is_empty(), "held by the gate, not queued");
        g.done(&v[0].slot, 0);
        assert_eq!(rx.try_recv(), Ok(Some(7)), "requeued by the completion of call 1");
        assert_eq!(g.try_enter(&7, &v[1].slot, &v[1].waits, &stop), Entry::Go);
        stop.store(true, Ordering::Relaxed);
        assert_eq!(g.try_enter(&7, &v[2].slot, &v[2].waits, &stop), Entry::Stop);
    }

    #[test]
    fn a_stop_releases_parked_executors_at_once() {
        let (g, stop, _v, t) = parked_on_call_1();
        let t0 = Instant::now();
        stop.store(true, Ordering::Relaxed);
        g.wake_all();
        assert!(!t.join().unwrap(), "told to stop");
        assert!(t0.elapsed() < PARK_SLICE);
    }

    #[test]
    fn no_progress_without_a_running_call_is_a_stall() {
        let g = G::default();
        let (_, v) = admit_all(&[(3, 0, 10, &[]), (9, 20, 30, &[])]);
        g.dispatched(&[(v[0].slot.clone(), 0), (v[1].slot.clone(), 0)]);
        let stop = AtomicBool::new(false);
        assert_eq!(g.try_enter(&9, &v[1].slot, &v[1].waits, &stop), Entry::Parked);
        let mut since = (g.completed.load(Ordering::Relaxed), Instant::now());
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
        assert_eq!(g.try_enter(&3, &v[0].slot, &v[0].waits, &stop), Entry::Go);
        assert_eq!(g.look(&mut since, Duration::from_millis(30)), Look::Fine);
    }

    /// xorshift64*: the stress test's own numbers (reproducible, no dependency).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
        }
    }

    /// A traced thread of the stress test: its calls (by seq), run in order.
    struct TTask {
        q: Mutex<VecDeque<usize>>,
    }

    /// Thousands of calls of 64 traced threads (overlapping intervals, in an order that mixes
    /// call and return order, with same-file dependencies) run by 10 workers exactly as the
    /// replay's workers run tasks: no call may start before every call the rules make it wait
    /// for is complete (checked against the rules themselves, brute force), and all must
    /// finish (a lost wake-up leaves a task parked for ever: the test fails at its deadline).
    #[test]
    fn many_workers_keep_the_order_and_lose_no_wake_up() {
        const THREADS: usize = 64;
        const CALLS: usize = 6000;
        const WORKERS: usize = 10;
        for round in 0..3u64 {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (round + 1));
            // Each thread's calls: disjoint intervals, one after another.
            let mut clock = [0i64; THREADS];
            let mut calls: Vec<(usize, i64, i64, u64)> = Vec::new();
            for _ in 0..CALLS {
                let t = rng.next(THREADS as u64) as usize;
                let called = clock[t] + rng.next(40) as i64;
                let long = rng.next(10) == 0;
                let ret = called + 1 + rng.next(if long { 400 } else { 30 }) as i64;
                clock[t] = ret + 1;
                // Recorded order: by call time or by return time, call by call.
                let key = if rng.next(4) == 0 { ret as u64 } else { called as u64 };
                calls.push((t, called, ret, key));
            }
            calls.sort_by_key(|c| (c.3, c.1));
            let mut deps: Vec<Vec<u64>> = Vec::new();
            for j in 0..calls.len() {
                let mut d = Vec::new();
                if j > 0 && rng.next(5) == 0 {
                    d.push(j as u64 - 1 - rng.next(j.min(50) as u64));
                }
                deps.push(d);
            }
            let gate: Arc<Gate<Arc<TTask>>> = Arc::new(Gate::default());
            let mut admit = Admit::default();
            let mut slots = Vec::new();
            let tasks: Vec<Arc<TTask>> =
                (0..THREADS).map(|_| Arc::new(TTask { q: Mutex::new(VecDeque::new()) })).collect();
            for (j, &(t, called, ret, _)) in calls.iter().enumerate() {
                let a = admit.admit(j as u64, called, ret, &deps[j], t as u64, id(j as u64));
                gate.dispatched(&[(a.slot.clone(), 0)]);
                slots.push(a);
                lock(&tasks[t].q).push_back(j);
            }
            let slots = Arc::new(slots);
            let calls = Arc::new(calls);
            let deps = Arc::new(deps);
            let done: Arc<Vec<AtomicBool>> =
                Arc::new((0..CALLS).map(|_| AtomicBool::new(false)).collect());
            let finished = Arc::new(AtomicUsize::new(0));
            let violations = Arc::new(Mutex::new(Vec::<String>::new()));
            let (tx, rx) = unbounded::<Option<Arc<TTask>>>();
            gate.set_runq(tx.clone());
            let stop = Arc::new(AtomicBool::new(false));
            let workers: Vec<_> = (0..WORKERS)
                .map(|w| {
                    let (gate, rx, slots, calls, deps, done, finished, violations, stop) = (
                        gate.clone(),
                        rx.clone(),
                        slots.clone(),
                        calls.clone(),
                        deps.clone(),
                        done.clone(),
                        finished.clone(),
                        violations.clone(),
                        stop.clone(),
                    );
                    std::thread::spawn(move || {
                        let mut rng = Rng(w as u64 + 17);
                        while let Ok(Some(task)) = rx.recv() {
                            loop {
                                let mut q = lock(&task.q);
                                let Some(&j) = q.front() else { break };
                                let a = &slots[j];
                                match gate.try_enter(&task, &a.slot, &a.waits, &stop) {
                                    Entry::Parked => break,
                                    Entry::Stop => return,
                                    Entry::Go => {}
                                }
                                q.pop_front();
                                drop(q);
                                // The rules, brute force: every earlier call that returned
                                // before this one was called, and every earlier dependency.
                                let (_, called, _, _) = calls[j];
                                let held = (0..j).find(|&s| {
                                    (calls[s].2 < called || deps[j].contains(&(s as u64)))
                                        && !done[s].load(Ordering::Acquire)
                                });
                                if let Some(s) = held {
                                    lock(&violations).push(format!("#{j} started before #{s}"));
                                }
                                for _ in 0..rng.next(300) {
                                    std::hint::spin_loop();
                                }
                                if rng.next(50) == 0 {
                                    std::thread::yield_now();
                                }
                                done[j].store(true, Ordering::Release);
                                gate.done(&a.slot, 0);
                                finished.fetch_add(1, Ordering::AcqRel);
                            }
                        }
                    })
                })
                .collect();
            for t in &tasks {
                tx.send(Some(t.clone())).unwrap();
            }
            let t0 = Instant::now();
            while finished.load(Ordering::Acquire) < CALLS && t0.elapsed() < Duration::from_secs(60)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            let n = finished.load(Ordering::Acquire);
            stop.store(true, Ordering::Relaxed);
            gate.wake_all();
            for _ in 0..WORKERS {
                let _ = tx.send(None);
            }
            for w in workers {
                w.join().unwrap();
            }
            let v = lock(&violations);
            assert!(
                v.is_empty(),
                "round {round}: {} calls out of order: {:?}",
                v.len(),
                &v[..v.len().min(5)]
            );
            assert_eq!(n, CALLS, "round {round}: calls left waiting (a lost wake-up)");
            assert_eq!(gate.unfinished(), 0);
        }
    }
}
