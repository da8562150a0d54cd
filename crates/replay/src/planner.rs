//! The planner: the trace's calls placed for replay, in the order they are handed out.
//!
//! [`Planner`] walks a trace in `unique_id` order and, for each call, runs the [`Shadow`]
//! model (process, descriptor table, files the call touches), brings forward the calls that
//! were recorded late (a clone that returned after its child's first call; a `close` whose
//! number another thread's call had already taken), and computes the call's ordering gates
//! (the previous call on each of its files, the clone that made its thread, the call that
//! freed a descriptor number it takes). The result, a stream of [`Placed`] calls, is what
//! [`crate::replay`] dispatches, and what `reanimator compile` stores in a plan
//! ([`crate::planfile`]) so that a replay of the plan does none of this work again.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::{BTreeMap, VecDeque};

use ra_trace::{Event, ExtraValue, TraceReader};

use crate::shadow::{
    changes_names, clone_flags, ok, passed_descriptors, taken_numbers, DirFact, NameKeys, Order,
    Placement, Shadow,
};
use crate::world::{ProcId, PASSED_MAX};

/// What replay needs to know of the trace as a whole (from its info, or a plan's header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFacts {
    /// The architecture the trace was recorded on (`x86_64`), when it says.
    pub arch: Option<String>,
    /// The traced program's starting cwd.
    pub cwd: Vec<u8>,
    /// The traced program's umask at start.
    pub umask: u32,
    /// How many synthetic records of inherited descriptors the trace starts with.
    pub synthetic: u64,
    /// Processes start with descriptors 0-2 open (traces without synthetic records of
    /// inherited descriptors).
    pub std_fds: bool,
    /// The trace holds page records of memory-mapped I/O (every backend but ptrace).
    pub page_records: bool,
    /// The trace holds the data its calls wrote, not only digests or lengths (`record` or
    /// `fs` `--data hash|none`, `anonymize --data digest|drop` keep none; `--data
    /// write=full,read=hash|none` keeps it): only then can a replay write the recorded bytes
    /// and verify file contents. Data read is verified call by call as it was recorded: in
    /// full, by digest, or (not captured) not at all.
    pub data: bool,
}

impl TraceFacts {
    /// Reads the facts from the trace's header (`arch`, `umask`, `synthetic_ids`, `backend`,
    /// `data_mode*`). A header without `umask` gives 0o022; one without a data mode counts as
    /// full data.
    pub fn of(trace: &TraceReader) -> TraceFacts {
        TraceFacts {
            arch: trace.info_value("arch").map(|a| String::from_utf8_lossy(a).into_owned()),
            cwd: crate::init::initial_cwd(trace),
            umask: trace
                .info_value("umask")
                .and_then(|v| {
                    u32::from_str_radix(std::str::from_utf8(v).ok()?.trim_start_matches("0o"), 8)
                        .ok()
                })
                .unwrap_or(0o022),
            synthetic: crate::init::synthetic_ids(trace),
            std_fds: trace.info_value("synthetic_ids").is_none(),
            page_records: trace.info_value("backend").is_none_or(|b| b != b"ptrace"),
            data: {
                let fact = |k: &str| trace.info_value(k).and_then(|v| std::str::from_utf8(v).ok());
                // Old traces have `data_mode` alone; none at all: full.
                ra_trace::DataMode::from_facts(
                    fact("data_mode"),
                    fact("data_mode_write"),
                    fact("data_mode_read"),
                )
                .is_none_or(|m| m.write == ra_trace::DataLevel::Full)
            },
        }
    }
}

/// One call, placed.
#[derive(Debug)]
pub struct Placed {
    /// Position in the replay order (0, 1, 2, ...).
    pub seq: u64,
    /// The traced thread whose executor runs it.
    pub tid: i32,
    /// The recorded call, as the trace (or plan) holds it.
    pub ev: Event,
    /// Where the [`Shadow`] model puts the call: its process, the files and descriptor
    /// numbers it orders on, the processes or threads it makes or ends.
    pub pl: Placement,
    /// Recorded call time (ns). A call without one gets the latest call time seen so far;
    /// a generated record of a thread's death gets `i64::MIN + 1`, so it waits for no other
    /// thread's calls.
    pub called: i64,
    /// Recorded return time (ns); never before [`Placed::called`], and equal to it where
    /// the trace has none.
    pub ret: i64,
    /// The earlier calls (by seq) that must have completed before this one runs.
    pub deps: Vec<u64>,
    /// A process first seen at this call: its cwd and umask when it appeared.
    pub new_proc: Option<(Vec<u8>, u32)>,
    /// Traced threads whose executors end after this call (the process is gone).
    pub gone: Vec<i32>,
}

/// What the planner skipped or noticed, for the replay report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanNotes {
    /// Record types replay doesn't know, with counts.
    pub unknown: BTreeMap<String, u64>,
    /// Other things worth saying, with counts.
    pub warnings: BTreeMap<String, u64>,
}

/// Calls (and bytes of their data) looked ahead at, at most, to reorder calls that were
/// recorded out of order. A tracer that serves thousands of threads can report a call's exit
/// seconds late: tens of thousands of records after calls that followed it.
const LOOKAHEAD: usize = 65_536;
const LOOKAHEAD_BYTES: usize = 64 << 20;

/// Calls looked ahead at, at most, for the call that made or removed a name another call
/// failed on (it overlapped the failure, so it returned soon after).
const NAME_LOOKAHEAD: usize = 256;

/// Calls looked ahead at, at most, for an observation of another thread that saw a directory
/// as it was before the change being placed (it overlapped the change, so it returned soon
/// after it; every change looks).
const OUTCOME_LOOKAHEAD: usize = 64;

/// Calls looked ahead at, at most, for the change of another thread that an observation
/// contradicting the calls placed saw done (only such an observation looks). Under ptrace a
/// change can be recorded long after the calls that saw it: a child's `mkdir` returned 11 ms
/// late, 409 calls of its parent (which saw the new directory) after them.
const OUTCOME_EXPLAIN_LOOKAHEAD: usize = 4096;

/// Calls looked ahead at, at most, for the io_uring requests an `io_uring_enter` submitted
/// (their records come when they complete: with 32 requests in flight, a few hundred calls
/// later at most).
const URING_LOOKAHEAD: usize = 4096;

/// Calls looked ahead at, at most, for a call of another thread that took the descriptor
/// number a call takes and returned before that call was called (recorded out of order).
const TAKER_LOOKAHEAD: usize = 256;

/// Changes and observations of one directory kept, at most (each), for the outcome rules
/// ([`DirState`]).
const DIR_RECENT: usize = 16;
/// Names made in one directory (and not removed since) kept, at most ([`DirState::made`]).
const DIR_MADE: usize = 256;
/// Directories whose recent calls are kept, at most: beyond, those not used for longest are
/// forgotten.
const DIRS_KEPT: usize = 4096;

/// A call placed on a directory, kept for the outcome rules: when it ran and what it did to
/// the directory's names or saw of them.
struct Recent {
    seq: u64,
    called: i64,
    returned: i64,
    tid: i32,
    fact: DirFact,
    /// A change of a subdirectory: the directory's link count before and after it, where the
    /// model knew it.
    links: Links,
}

/// What the planner keeps of one directory for ordering overlapping calls on it by their
/// outcomes.
#[derive(Default)]
struct DirState {
    /// The last changes of its names, and the last observations of them.
    changes: VecDeque<Recent>,
    observations: VecDeque<Recent>,
    /// Names the calls placed made in it and did not remove since (at most [`DIR_MADE`]; the
    /// oldest go first): those a whole listing must show.
    made: VecDeque<u64>,
    /// The directory's link count after the calls placed so far (from the last `stat` of it,
    /// plus the subdirectories made and removed since).
    nlink: Option<u64>,
    /// A `stat` showed a link count below 2: this file system does not count subdirectories
    /// (btrfs), and link counts say nothing of them.
    flat_links: bool,
    /// The trace made it with `mkdir`: it held nothing but what the calls placed since made.
    made_empty: bool,
    /// The last call placed on it.
    last_seq: u64,
}

impl DirState {
    /// The link counts before and after the change `fact`, where the model knows them.
    fn links_of(&self, fact: &DirFact) -> Links {
        let DirFact::Change { made, subdir: Some(true), .. } = fact else { return None };
        let before = self.nlink.filter(|_| !self.flat_links)?;
        Some((before, if *made { before + 1 } else { before.saturating_sub(1) }))
    }
}

/// A directory's link count before and after a change of a subdirectory, where known.
type Links = Option<(u64, u64)>;

/// Two calls' recorded intervals overlap: either may have run first.
fn overlap(a: (i64, i64), b: (i64, i64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// The planner's note on a `recvmsg` that received descriptors: the `unique_id` of the
/// `sendmsg` that sent them (an integer field of [`Event::extra`]; plans carry it). The replay
/// gives the receiver the open files the sender's descriptors named.
pub const RIGHTS_FROM: &str = "scm_rights_from";

/// The last calls on one ordering key.
#[derive(Clone, Copy)]
pub(crate) struct KeyLast {
    /// The last call on the key (seq) and when it was called.
    seq: u64,
    called: i64,
    /// When the last call waits for a lock: when it returned, and the call on the key before
    /// it (seq, called).
    lock_wait: Option<(i64, Option<(u64, i64)>)>,
    /// The last call that made the name (seq), and the last that removed it.
    made: Option<u64>,
    removed: Option<u64>,
    /// The last call that failed because the name was missing (`ENOENT`), and the last that
    /// failed because it existed (`EEXIST`), since the name was last made or removed.
    missing: Option<u64>,
    existed: Option<u64>,
}

/// Places a trace's calls, one at a time (see the module's documentation).
pub struct Planner<I> {
    iter: I,
    facts: TraceFacts,
    umask: u32,
    shadow: Shadow,
    pending: Ahead,
    brought_forward: HashSet<u64>,
    /// Calls put back behind an earlier taker of their descriptor number ([`taker_ahead`]),
    /// once each.
    put_back: HashSet<u64>,
    last_key: HashMap<u64, KeyLast>,
    /// Directories' recent calls and link counts, for the outcome rules.
    dirs: HashMap<u64, DirState>,
    child_dep: HashMap<i32, u64>,
    proc_tids: HashMap<ProcId, HashSet<i32>>,
    /// The last call placed of each thread whose process lives (threads that ended with
    /// `exit` included, as in `proc_tids`).
    thread_last: HashMap<i32, u64>,
    /// Messages that carried descriptors (`SCM_RIGHTS`) placed and not yet received: the
    /// sendmsg's seq and unique_id, and how many descriptors (oldest first; at most
    /// [`PASSED_MAX`], as the model and the replay keep their files).
    rights_sent: VecDeque<(u64, u64, usize)>,
    seq: u64,
    last_time: i64,
    read_error: Option<ra_trace::Error>,
    /// What was skipped or noticed so far; the scheduler and `compile` take it when the
    /// calls run out.
    pub notes: PlanNotes,
}

impl<I: Iterator<Item = ra_trace::Result<Event>>> Planner<I> {
    /// A planner over the calls of `iter`, in `unique_id` order, starting from the trace's
    /// facts (initial cwd and umask, synthetic record count). Iterating it yields each call
    /// [`Placed`]; a read error is yielded once, after the calls already read.
    pub fn new(iter: I, facts: TraceFacts) -> Planner<I> {
        Planner {
            iter,
            umask: facts.umask,
            shadow: Shadow::new(facts.cwd.clone()),
            facts,
            pending: Ahead::default(),
            brought_forward: HashSet::new(),
            put_back: HashSet::new(),
            last_key: HashMap::new(),
            dirs: HashMap::new(),
            child_dep: HashMap::new(),
            proc_tids: HashMap::new(),
            thread_last: HashMap::new(),
            rights_sent: VecDeque::new(),
            seq: 0,
            last_time: 0,
            read_error: None,
            notes: PlanNotes::default(),
        }
    }

    /// The io_uring requests `enter` submitted (`enter_id`), up to its result's count, come
    /// right after it: a request's record is written when it completes, but it ran from its
    /// submission on, so it is placed there (before the calls its thread made while it was
    /// in flight, which it overlapped; the gate orders it by its recorded submission and
    /// completion times). Requests of an SQPOLL thread (no enter) stay where they are.
    fn bring_uring_ops(&mut self, enter: &Event) {
        let id = enter.unique_id as i64;
        let is_mine = |e: &Event| {
            e.def.is_some_and(|d| d.replay.handler() == Some(ra_syscalls::Handler::UringOp))
                && e.arg("enter_id").and_then(ra_trace::ArgValue::as_int) == Some(id)
        };
        let mut ops = Vec::new();
        let want = enter.ret.unwrap_or(0).clamp(0, 1 << 16) as usize;
        while ops.len() < want {
            let Some(i) = self.pending.find_if(
                &mut self.iter,
                &mut self.read_error,
                URING_LOOKAHEAD,
                |_| true,
                is_mine,
            ) else {
                break;
            };
            ops.push(self.pending.remove(i).expect("position is in range"));
        }
        for e in ops.into_iter().rev() {
            self.pending.push_front(e);
        }
    }

    /// The events' source.
    pub fn source(&self) -> &I {
        &self.iter
    }
}

impl<I: Iterator<Item = ra_trace::Result<Event>>> Iterator for Planner<I> {
    type Item = ra_trace::Result<Placed>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let ev = match self.pending.pop_front() {
                Some(e) => e,
                None => match self.read_error.take() {
                    Some(e) => return Some(Err(e)),
                    None => match self.iter.next()? {
                        Ok(e) => e,
                        Err(e) => return Some(Err(e)),
                    },
                },
            };
            let Some(def) = ev.def else {
                *self.notes.unknown.entry(ev.name.clone()).or_default() += 1;
                continue;
            };
            if ev.extra.iter().any(|(k, v)| k == "synthetic" && *v == ExtraValue::Bool(true))
                && def.replay.handler() == Some(ra_syscalls::Handler::Umask)
            {
                // Re-Animator's record of the traced process's umask at start.
                if let Some(m) = ev.arg("mask").and_then(|a| a.as_int()) {
                    self.umask = m as u32 & 0o777;
                }
                continue;
            }
            if def.replay.handler() == Some(ra_syscalls::Handler::UringOp) {
                // A damaged request is refused before anything of it is issued.
                if let Err(problem) = crate::calls::check_uring_op(&ev) {
                    return Some(Err(ra_trace::Error::BadEvent {
                        unique_id: ev.unique_id,
                        call: ev.name.clone(),
                        problem,
                    }));
                }
            }
            if let Some(Err(problem)) = ev.uring_registration() {
                // A registration no recorder writes: refused before the replay starts.
                return Some(Err(ra_trace::Error::BadEvent {
                    unique_id: ev.unique_id,
                    call: ev.name.clone(),
                    problem,
                }));
            }
            if def.uring == Some(ra_syscalls::UringCall::Enter)
                && ok(&ev)
                && ev.ret.unwrap_or(0) > 0
            {
                self.bring_uring_ops(&ev);
            }
            let Some(tid) = ev.tid.or(ev.pid) else {
                self.warn("record without a thread id skipped");
                continue;
            };
            // A child whose first call was recorded before the clone that made it returned:
            // bring the clone forward (their intervals overlap, so either order is faithful).
            if self.seq > 0 && !self.shadow.knows(tid) && ev.pid.is_none_or(|p| p == tid) {
                let made_it =
                    |e: &Event| clone_flags(e).is_some() && ok(e) && e.ret == Some(tid.into());
                if let Some(i) = self.pending.find(&mut self.iter, &mut self.read_error, made_it) {
                    let parent = self.pending.q[i].tid.or(self.pending.q[i].pid);
                    // The clone can come forward only as its thread's next call, in a thread
                    // the model knows. Otherwise (nested vforks traced by eBPF: a grandchild's
                    // calls recorded before its parent's own calls and before the vfork that
                    // made that parent) the clone would run before the calls its thread made
                    // first (its `dup2`s: the grandchild would inherit the wrong descriptors),
                    // so the child's calls wait after the clone instead, in their order.
                    let parent_ready = parent.is_some_and(|p| {
                        self.shadow.knows(p)
                            && !self.pending.q.iter().take(i).any(|e| e.tid.or(e.pid) == Some(p))
                    });
                    if parent_ready {
                        let clone = self.pending.remove(i).expect("position is in range");
                        self.pending.push_front(ev);
                        self.pending.push_front(clone);
                    } else {
                        self.pending.defer_after(i, ev, tid);
                    }
                    continue;
                }
            }
            // A call recorded after `ev` that took the same descriptor number and returned
            // before `ev` was called: it ran first, and so did what freed the number after
            // it. `ev` goes behind them.
            if !self.put_back.contains(&ev.unique_id) {
                let (shadow, pending) = (&self.shadow, &mut self.pending);
                let (iter, read_error) = (&mut self.iter, &mut self.read_error);
                if let Some(j) = taker_ahead(shadow, &ev, tid, pending, iter, read_error) {
                    self.put_back.insert(ev.unique_id);
                    self.pending.defer_after(j, ev, tid);
                    continue;
                }
            }
            // A call recorded after `ev` that ran before it, which the two overlapping allow:
            // - the call that freed a descriptor number `ev` takes while the model still has
            //   it open (it returned later, so it was recorded later, but the kernel had freed
            //   the number before `ev` took it; not for the synthetic records of inherited
            //   descriptors: the model starts with 0-2);
            // - the call of another thread that made or removed a name `ev` failed on
            //   (`EEXIST`, `ENOENT`): the failure says it ran first.
            // Bring it forward, once per call.
            if !self.brought_forward.contains(&ev.unique_id) {
                let (shadow, pending) = (&self.shadow, &mut self.pending);
                let (iter, read_error) = (&mut self.iter, &mut self.read_error);
                let unsent = self.rights_sent.is_empty();
                let known = Known { dirs: &self.dirs, last_key: &self.last_key };
                let found = (ev.unique_id >= self.facts.synthetic)
                    .then(|| freer_ahead(shadow, &ev, tid, pending, iter, read_error))
                    .flatten()
                    .or_else(|| explainer_ahead(shadow, &ev, tid, pending, iter, read_error))
                    .or_else(|| outcome_ahead(shadow, &known, &ev, tid, pending, iter, read_error))
                    .or_else(|| {
                        unsent.then(|| sender_ahead(&ev, tid, pending, iter, read_error)).flatten()
                    });
                if let Some(i) = found {
                    self.brought_forward.insert(ev.unique_id);
                    self.pending.bring_forward(i, ev);
                    continue;
                }
            }
            return Some(Ok(self.place(ev, tid)));
        }
    }
}

impl<I> Planner<I> {
    fn warn(&mut self, w: &str) {
        *self.notes.warnings.entry(w.to_string()).or_default() += 1;
    }

    /// The outcome rule for calls already placed: call `seq` (of thread `tid`, recorded over
    /// `span`), which did or saw `facts`, waits for each recent call of another thread on the
    /// same directory that overlapped it and that, by what one of the two recorded, ran
    /// first: the change a listing or lookup saw done (or a link count counted), the
    /// observation that saw the directory as it was before this change. Then the
    /// directories' models take the call in.
    fn outcome_deps(
        &mut self,
        facts: Vec<(u64, DirFact)>,
        seq: u64,
        span: (i64, i64),
        tid: i32,
        deps: &mut Vec<u64>,
    ) {
        for (dir, fact) in facts {
            let st = self.dirs.entry(dir).or_default();
            let links = st.links_of(&fact);
            let recent = st.changes.iter().chain(&st.observations);
            for r in recent.filter(|r| r.tid != tid && overlap((r.called, r.returned), span)) {
                let first = match (&fact, &r.fact) {
                    (DirFact::Change { .. }, obs) => obs.says(&fact, links) == Some(Order::Before),
                    (obs, DirFact::Change { .. }) => {
                        obs.says(&r.fact, r.links) == Some(Order::After)
                    }
                    _ => false,
                };
                if first {
                    deps.push(r.seq);
                }
            }
            match &fact {
                DirFact::Nlink(n) => {
                    st.flat_links |= *n < 2;
                    st.nlink = Some(*n);
                }
                DirFact::Change { subdir: Some(true), .. } => st.nlink = links.map(|l| l.1),
                DirFact::Change { subdir: None, .. } => st.nlink = None,
                _ => {}
            }
            if let DirFact::Change { name, made, .. } = fact {
                st.made.retain(|&n| n != name);
                if made {
                    if st.made.len() == DIR_MADE {
                        st.made.pop_front();
                    }
                    st.made.push_back(name);
                }
            }
            // The directory a change made (`mkdir`) starts anew, empty; one it removed or
            // renamed (away, or into place, with content) is no longer known.
            let (new_dir, gone) = match fact {
                DirFact::Change { name, made: true, subdir: Some(true) } => (Some(name), None),
                DirFact::Change { name, made: false, subdir: Some(true) | None }
                | DirFact::Change { name, made: true, subdir: None } => (None, Some(name)),
                _ => (None, None),
            };
            let kept = match fact {
                DirFact::Change { .. } => &mut st.changes,
                _ => &mut st.observations,
            };
            if kept.len() == DIR_RECENT {
                kept.pop_front();
            }
            let (called, returned) = span;
            kept.push_back(Recent { seq, called, returned, tid, fact, links });
            st.last_seq = seq;
            if let Some(name) = new_dir {
                // 2 links: "." and its name.
                let new = DirState {
                    nlink: Some(2),
                    made_empty: true,
                    last_seq: seq,
                    ..DirState::default()
                };
                self.dirs.insert(name, new);
            }
            if let Some(name) = gone {
                self.dirs.remove(&name);
            }
        }
        if self.dirs.len() > DIRS_KEPT {
            // Forget the directories not used for longest (half of them at a time).
            let mut seqs: Vec<u64> = self.dirs.values().map(|d| d.last_seq).collect();
            seqs.sort_unstable();
            let cut = seqs[seqs.len() / 2];
            self.dirs.retain(|_, d| d.last_seq > cut);
        }
    }

    /// Step the model over `ev` and compute its gates.
    fn place(&mut self, mut ev: Event, tid: i32) -> Placed {
        // Its searches are done: the set holds only calls waiting in the look-ahead.
        self.brought_forward.remove(&ev.unique_id);
        self.put_back.remove(&ev.unique_id);
        let seq = self.seq;
        self.seq += 1;
        let mut deps = Vec::new();
        // Descriptors passed in a message: the receiver gets them from the sendmsg that sent
        // as many (else the oldest one in flight), and waits for it.
        match passed_descriptors(&ev).map(|(r, fds)| (r, fds.len())) {
            Some((false, n)) => {
                if self.rights_sent.len() == PASSED_MAX {
                    self.rights_sent.pop_front();
                }
                self.rights_sent.push_back((seq, ev.unique_id, n));
            }
            Some((true, n)) => {
                let i = self
                    .rights_sent
                    .iter()
                    .position(|s| s.2 == n)
                    .or((!self.rights_sent.is_empty()).then_some(0));
                match i.and_then(|i| self.rights_sent.remove(i)) {
                    Some((s, id, _)) => {
                        deps.push(s);
                        ev.extra.push((RIGHTS_FROM.into(), ExtraValue::Int(id as i64)));
                    }
                    None => self.warn(
                        "recvmsg received descriptors no recorded sendmsg sent: they are \
                         simulated",
                    ),
                }
            }
            None => {}
        }
        let handler = ev.def.and_then(|d| d.replay.handler());
        // exit ends its thread (exit_group, its process: the model says so above).
        let thread_exit =
            handler == Some(ra_syscalls::Handler::Exit) && !ev.def.is_some_and(|d| d.ends_process);
        // What the call did to directories' names or saw of them, as the model stands before it.
        let dir_facts = self.shadow.proc_id_of(tid).map(|p| self.shadow.dir_facts(p, &ev));
        let mut pl = self.shadow.step(&ev);
        // (A process's first call: resolved in the process the model just made.)
        let dir_facts = dir_facts.or_else(|| Some(self.shadow.dir_facts(pl.proc, &ev)));
        pl.inherited =
            ev.unique_id < self.facts.synthetic && handler == Some(ra_syscalls::Handler::Open);
        let mut called = ev.time_called.unwrap_or(self.last_time).max(i64::MIN + 1);
        let ret = ev.time_returned.unwrap_or(called).max(called);
        if ev.generated() {
            // A thread killed between calls, recorded when the recorder saw it gone: it died
            // at some time after its last call, which need not be after the calls of other
            // threads that ended before it was seen (the parent's read that the death ended,
            // seen first, would wait for the death). It waits for no other thread's calls;
            // calls begun after it was seen wait for it.
            called = i64::MIN + 1;
        }
        self.last_time = self.last_time.max(called);
        let new_proc = pl.first_seen.then(|| (self.shadow.cwd(pl.proc), self.umask));
        if let Some(d) = self.child_dep.remove(&tid) {
            deps.push(d);
        }
        if pl.child.is_some() {
            if let Some(c) = ev.ret {
                self.child_dep.insert(c as i32, seq);
            }
        }
        // One key per file (dup2(fd, fd) and rename("a", "a") name the same file twice): a
        // call never depends on itself.
        pl.keys.sort_unstable();
        pl.keys.dedup();
        let lock_wait = ev.waits_for_lock().then_some(ret);
        key_deps(&mut self.last_key, &pl.keys, &pl.names, seq, called, lock_wait, &mut deps);
        if let Some(facts) = dir_facts {
            self.outcome_deps(facts, seq, (called, ret), tid, &mut deps);
        }
        // Descriptor numbers: strictly in recorded order (a number is taken only after it was
        // freed, whenever the two calls were called).
        pl.fd_keys.sort_unstable();
        pl.fd_keys.dedup();
        key_deps(
            &mut self.last_key,
            &pl.fd_keys,
            &NameKeys::default(),
            seq,
            i64::MAX,
            None,
            &mut deps,
        );
        if ev.generated() && pl.ends_proc {
            // The death of a killed process's last thread closes its descriptors: it waits for
            // every call its other threads made before (their writes to a pipe a parent reads;
            // Python's test_threading), though a generated exit waits for no other thread's
            // calls otherwise.
            if let Some(ts) = self.proc_tids.get(&pl.proc) {
                deps.extend(
                    ts.iter().filter(|&&t| t != tid).filter_map(|t| self.thread_last.get(t)),
                );
            }
        }
        deps.sort_unstable();
        deps.dedup();
        let tids = self.proc_tids.entry(pl.proc).or_default();
        tids.insert(tid);
        if let Some(t) = pl.thread {
            tids.insert(t);
        }
        let gone: Vec<i32> = if pl.ends_proc {
            // The process is gone: its threads' executors finish what they have and stop.
            let mut g: Vec<i32> =
                self.proc_tids.remove(&pl.proc).unwrap_or_default().into_iter().collect();
            g.sort_unstable();
            g
        } else if thread_exit {
            vec![tid]
        } else {
            Vec::new()
        };
        self.thread_last.insert(tid, seq);
        if pl.ends_proc {
            for t in &gone {
                self.thread_last.remove(t);
            }
        }
        Placed { seq, tid, ev, pl, called, ret, deps, new_proc, gone }
    }
}

/// The per-file rule: call `seq` (called at `called`) depends on the previous call on each of
/// its files, unless it was called before that one (it was recorded later only because it
/// returned later, as an execve does): calls on a file keep the order they were called in.
/// (A make -j2 build under ptrace: gcc's execve of cc1, recorded after two access()es of cc1
/// by the other job that were called later, waited for them, they waited for the parent's
/// read of gcc's exec-status pipe, and only that exec ends the read: a stall per compiler run.)
/// Outcomes come before that order: a call that failed because a name existed (`EEXIST`)
/// depends on the last call that made the name, and one that failed because a name was
/// missing (`ENOENT`) on the last call that removed it, whenever either was called.
pub(crate) fn key_deps(
    last_key: &mut HashMap<u64, KeyLast>,
    keys: &[u64],
    names: &NameKeys,
    seq: u64,
    called: i64,
    lock_wait_until: Option<i64>,
    deps: &mut Vec<u64>,
) {
    for &k in keys {
        let prev = last_key.get(&k).copied();
        if let Some(p) = prev {
            // A lock wait still waiting when this call was made: this call ran while it
            // waited, and may be what ended the wait (the holder's close or unlock; Python's
            // test_eintr: the child's close, held behind the parent's flock, which waited
            // for it until the stall timeout). It waits for what the lock wait waited for.
            let last = match p.lock_wait {
                Some((returned, before)) if returned > called => before,
                _ => Some((p.seq, p.called)),
            };
            if let Some((s, _)) = last.filter(|&(s, c)| s != seq && c <= called) {
                deps.push(s);
            }
            if names.existed == Some(k) {
                deps.extend(p.made.filter(|&m| m != seq));
            }
            if names.missing.contains(&k) {
                deps.extend(p.removed.filter(|&r| r != seq));
            }
            // And the other way: the call that makes a name waits for the calls placed before
            // it that found the name missing, whenever they were called (their failure says
            // they ran before it: test_logging's thread unlinks a log file with ENOENT while
            // the main thread's open creates it again, the two overlapping); the call that
            // removes a name, for those that found it existing.
            if names.made == Some(k) {
                deps.extend(p.missing.filter(|&m| m != seq));
            }
            if names.removed == Some(k) {
                deps.extend(p.existed.filter(|&e| e != seq));
            }
        }
        let made = if names.made == Some(k) { Some(seq) } else { prev.and_then(|p| p.made) };
        let removed =
            if names.removed == Some(k) { Some(seq) } else { prev.and_then(|p| p.removed) };
        let changed = names.made == Some(k) || names.removed == Some(k);
        let since = |own: bool, last: Option<u64>| {
            if own {
                Some(seq)
            } else if changed {
                None
            } else {
                last
            }
        };
        let missing = since(names.missing.contains(&k), prev.and_then(|p| p.missing));
        let existed = since(names.existed == Some(k), prev.and_then(|p| p.existed));
        let lock_wait = lock_wait_until.map(|r| (r, prev.map(|p| (p.seq, p.called))));
        last_key.insert(k, KeyLast { seq, called, lock_wait, made, removed, missing, existed });
    }
}

/// When `ev` failed on a name (see [`NameKeys`]): the position in `pending` (filled from
/// `iter` up to [`NAME_LOOKAHEAD`] calls) of a later call of another thread that made or
/// removed that name, was called before `ev` returned, and is its thread's next call.
fn explainer_ahead(
    shadow: &Shadow,
    ev: &Event,
    tid: i32,
    pending: &mut Ahead,
    iter: &mut impl Iterator<Item = ra_trace::Result<Event>>,
    read_error: &mut Option<ra_trace::Error>,
) -> Option<usize> {
    if ok(ev) || !matches!(ev.errno, Some(libc::EEXIST | libc::ENOENT)) {
        return None;
    }
    // Only a change ahead of a name with the same last component can explain the failure
    // (a lookup: most failures have none, and then no call ahead is looked at).
    let bases: Vec<u64> = name_bases(ev).collect();
    if bases.is_empty() {
        return None;
    }
    let p = shadow.proc_id_of(tid)?;
    let end = ev.time_returned.or(ev.time_called)?;
    // Resolved only when a call ahead may explain the failure.
    let mut names: Option<NameKeys> = None;
    let i = pending.find_if(
        iter,
        read_error,
        NAME_LOOKAHEAD,
        |a| bases.iter().any(|b| a.name_changes.contains_key(b)),
        |e| {
            let Some(t) = e.tid.or(e.pid) else { return false };
            if t == tid || e.time_called.is_none_or(|c| c > end) || !names_changed(e) {
                return false;
            }
            let names = names.get_or_insert_with(|| shadow.name_keys(p, ev));
            names.failed_on_a_name()
                && shadow.proc_id_of(t).is_some_and(|q| names.explained_by(&shadow.name_keys(q, e)))
        },
    )?;
    let t = pending.q[i].tid.or(pending.q[i].pid);
    (!pending.q.iter().take(i).any(|e| e.tid.or(e.pid) == t)).then_some(i)
}

/// What the planner knows when it searches ahead for the outcome rule.
struct Known<'a> {
    dirs: &'a HashMap<u64, DirState>,
    last_key: &'a HashMap<u64, KeyLast>,
}

impl Known<'_> {
    /// Whether the name with key `name` in directory `dir` exists after the calls placed, as
    /// far as the trace shows: made or removed last, or never made in a directory the trace
    /// made empty (None: unknown).
    fn exists(&self, dir: u64, name: u64) -> Option<bool> {
        let changed = self.last_key.get(&name).and_then(|l| match (l.made, l.removed) {
            (Some(m), Some(r)) => Some(m > r),
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (None, None) => None,
        });
        changed.or_else(|| self.dirs.get(&dir).filter(|st| st.made_empty).map(|_| false))
    }

    /// Whether the observation `fact` of directory `dir` contradicts what the calls placed
    /// leave there: a name found that is gone or was never made in it, one missed that was
    /// made, a link count other than the directory's.
    fn contradicts(&self, dir: u64, fact: &DirFact) -> bool {
        let st = self.dirs.get(&dir);
        match fact {
            DirFact::Names { present, absent, whole } => {
                present.iter().any(|&k| self.exists(dir, k) == Some(false))
                    || absent.iter().any(|&k| self.exists(dir, k) == Some(true))
                    || (*whole
                        && st.is_some_and(|st| {
                            st.made
                                .iter()
                                .any(|k| !present.contains(k) && self.exists(dir, *k) == Some(true))
                        }))
            }
            DirFact::Nlink(n) => {
                st.is_some_and(|st| !st.flat_links && *n >= 2 && st.nlink.is_some_and(|m| m != *n))
            }
            DirFact::Change { .. } => false,
        }
    }
}

/// The outcome rule for calls ahead: the position in `pending` (filled from `iter` up to
/// [`OUTCOME_LOOKAHEAD`] or [`OUTCOME_EXPLAIN_LOOKAHEAD`] calls) of a call of another thread on a directory `ev` acts on or
/// looks at, overlapping `ev` and its thread's next call, that ran before `ev` as the two
/// calls' outcomes say (stress-ng's `dir` stressor, and test programs of two processes on one
/// directory, under ptrace, where a call's recorded interval is long):
/// - `ev` changed a name, and the call ahead saw the directory as it was before: the name
///   missing that `ev` made, or there that `ev` removed, or the link count before `ev`;
/// - `ev` saw what the calls placed so far contradict (a name there that is gone, a link
///   count other than the model's), and the call ahead made it so.
fn outcome_ahead(
    shadow: &Shadow,
    known: &Known<'_>,
    ev: &Event,
    tid: i32,
    pending: &mut Ahead,
    iter: &mut impl Iterator<Item = ra_trace::Result<Event>>,
    read_error: &mut Option<ra_trace::Error>,
) -> Option<usize> {
    let p = shadow.proc_id_of(tid)?;
    let facts = shadow.dir_facts(p, ev);
    if facts.is_empty() {
        return None;
    }
    let span = (ev.time_called?, ev.time_returned.or(ev.time_called)?);
    // What each fact wants of a call ahead on its directory: a change this observation saw
    // done, or an observation that saw this change not yet done.
    let wanted: Vec<(u64, &DirFact, Links)> = facts
        .iter()
        .filter(|(dir, f)| matches!(f, DirFact::Change { .. }) || known.contradicts(*dir, f))
        .map(|(dir, f)| (*dir, f, known.dirs.get(dir).and_then(|st| st.links_of(f))))
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let changes = wanted.iter().all(|(_, f, _)| matches!(f, DirFact::Change { .. }));
    let limit = if changes { OUTCOME_LOOKAHEAD } else { OUTCOME_EXPLAIN_LOOKAHEAD };
    // Only another thread's call ahead can have run first: a change, searched for on every
    // change, looks only where one is ahead (one thread removing a tree: none).
    if changes {
        pending.fill_to(limit, iter, read_error);
        if !pending.threads.keys().any(|&t| t != tid) {
            return None;
        }
    }
    let i = pending.find_if(
        iter,
        read_error,
        limit,
        |_| true,
        |e| {
            let Some(t) = e.tid.or(e.pid) else { return false };
            let Some(called) = e.time_called else { return false };
            let returned = e.time_returned.unwrap_or(called);
            if t == tid || !overlap((called, returned), span) || e.def.is_none() {
                return false;
            }
            let Some(q) = shadow.proc_id_of(t) else { return false };
            let theirs = shadow.dir_facts(q, e);
            wanted.iter().any(|&(dir, mine, links)| {
                theirs.iter().any(|(d, other)| {
                    *d == dir
                        && match (mine, other) {
                            // (Before this change, and as the calls placed leave the
                            // directory: a listing that also saw a later change of another
                            // name done does not belong before this one.)
                            (DirFact::Change { .. }, obs) => {
                                obs.says(mine, links) == Some(Order::Before)
                                    && !known.contradicts(dir, obs)
                            }
                            (obs, ch @ DirFact::Change { .. }) => {
                                let links = known.dirs.get(&dir).and_then(|st| st.links_of(ch));
                                obs.says(ch, links) == Some(Order::After)
                            }
                            _ => false,
                        }
                })
            })
        },
    )?;
    let t = pending.q[i].tid.or(pending.q[i].pid);
    (!pending.q.iter().take(i).any(|e| e.tid.or(e.pid) == t)).then_some(i)
}

/// When `ev` received descriptors and no message placed so far sent any: the position in
/// `pending` (filled from `iter` up to [`TAKER_LOOKAHEAD`] calls) of the first call of another
/// thread that sent some (the receiver's `recvmsg` returned before the sender's `sendmsg`, so
/// it was recorded first; the sender comes forward with its thread's calls before it).
fn sender_ahead(
    ev: &Event,
    tid: i32,
    pending: &mut Ahead,
    iter: &mut impl Iterator<Item = ra_trace::Result<Event>>,
    read_error: &mut Option<ra_trace::Error>,
) -> Option<usize> {
    if passed_descriptors(ev)?.0 {
        return pending.find_if(
            iter,
            read_error,
            TAKER_LOOKAHEAD,
            |_| true,
            |e| e.tid.or(e.pid) != Some(tid) && passed_descriptors(e).is_some_and(|(r, _)| !r),
        );
    }
    None
}

/// A call that succeeded in making or removing a name.
fn names_changed(e: &Event) -> bool {
    ok(e) && e.def.is_some_and(|d| changes_names(d, e))
}

/// Hashes of the last components of `e`'s path arguments, as recorded (unresolved).
fn name_bases(e: &Event) -> impl Iterator<Item = u64> + '_ {
    let def = e.def.map_or(&[][..], |d| d.args);
    def.iter().zip(&e.args).filter_map(|(a, v)| match (a.kind, v) {
        (ra_syscalls::ArgKind::Path, ra_trace::ArgValue::Data(d)) => {
            let mut d = d.strip_suffix(&[0]).unwrap_or(d);
            while let Some(t) = d.strip_suffix(b"/") {
                d = t;
            }
            let base = d.rsplit(|&b| b == b'/').next().unwrap_or(d);
            Some(crate::shadow::key_of(base))
        }
        _ => None,
    })
}

/// When `ev` takes a descriptor number its process still has open in the model (and is not
/// `dup2`/`dup3`, which close the target themselves): the position in `pending` (filled from
/// `iter` up to [`LOOKAHEAD`] calls) of the first later call of the same descriptor table that
/// frees that number.
fn freer_ahead(
    shadow: &Shadow,
    ev: &Event,
    tid: i32,
    pending: &mut Ahead,
    iter: &mut impl Iterator<Item = ra_trace::Result<Event>>,
    read_error: &mut Option<ra_trace::Error>,
) -> Option<usize> {
    let p = shadow.proc_id_of(tid)?;
    // dup2/dup3 close their target themselves.
    if ev.def.is_some_and(|d| d.replay.handler() == Some(ra_syscalls::Handler::Dup)) {
        return None;
    }
    let (made, _) = shadow.fd_numbers(p, ev);
    let n = *made.iter().find(|&&n| shadow.fd_open(p, n))?;
    let table = shadow.fd_table(p)?;
    // Only another thread of the table can have freed it (below): with none, reading ahead
    // (up to 64 MiB of calls held in memory) would find nothing.
    if !shadow.fd_table_shared(p, tid) {
        return None;
    }
    // Only another thread's call that overlapped this one can have freed the number before
    // this call took it (the model's table can also be stale, e.g. after close-on-exec).
    let end = ev.time_returned.or(ev.time_called)?;
    pending.find_if(
        iter,
        read_error,
        LOOKAHEAD,
        |a| a.may_free(n),
        |e| {
            if frees_number(e).is_none() {
                return false;
            }
            let Some(t) = e.tid.or(e.pid) else { return false };
            let Some(q) = shadow.proc_id_of(t) else { return false };
            t != tid
                && e.time_called.is_some_and(|c| c <= end)
                && shadow.fd_table(q) == Some(table)
                && shadow.fd_numbers(q, e).1.contains(&n)
        },
    )
}

/// When `ev` takes a descriptor number that a call ahead, of another thread with the same
/// descriptor table, also takes, and that call returned before `ev` was called: the position
/// in `pending` (filled from `iter` up to [`TAKER_LOOKAHEAD`] calls) after which `ev` belongs.
///
/// The recorder saw the two out of order (under ptrace a tracer serving 5,000 threads reports
/// their stops as it gets to them), but their times cannot lie: each call's kernel work lies
/// between its recorded call and return times, so the other call took the number first, and
/// `ev` could take it only after something freed it. `ev` belongs after the first call ahead
/// that frees the number in that table, or after the other taker when none is in sight.
fn taker_ahead(
    shadow: &Shadow,
    ev: &Event,
    tid: i32,
    pending: &mut Ahead,
    iter: &mut impl Iterator<Item = ra_trace::Result<Event>>,
    read_error: &mut Option<ra_trace::Error>,
) -> Option<usize> {
    let p = shadow.proc_id_of(tid)?;
    // Only another thread of the table can have taken the number first.
    if !shadow.fd_table_shared(p, tid) {
        return None;
    }
    let (made, _) = shadow.fd_numbers(p, ev);
    if made.is_empty() {
        return None;
    }
    let called = ev.time_called?;
    let table = shadow.fd_table(p)?;
    // A thread the model does not know yet (its clone is recorded after its first calls, as
    // a thread's often is) is taken to share its thread group's table, as threads do.
    let same_table = |e: &Event| {
        e.tid.or(e.pid).is_some_and(|t| {
            let q = shadow.proc_id_of(t).or_else(|| e.pid.and_then(|g| shadow.proc_id_of(g)));
            t != tid && q.is_some_and(|q| shadow.fd_table(q) == Some(table))
        })
    };
    pending.fill_to(TAKER_LOOKAHEAD, iter, read_error);
    if !made.iter().any(|n| pending.takes.contains_key(n)) {
        return None;
    }
    let (i, n) = pending.q.iter().take(TAKER_LOOKAHEAD).enumerate().find_map(|(i, e)| {
        if e.time_returned.is_none_or(|r| r >= called) || !same_table(e) {
            return None;
        }
        taken_numbers(e).find(|n| made.contains(n)).map(|n| (i, n))
    })?;
    let freer = pending
        .q
        .iter()
        .enumerate()
        .skip(i + 1)
        .take(TAKER_LOOKAHEAD)
        .find(|(_, e)| frees_number(e).is_some_and(|f| f == n || f == -1) && same_table(e));
    Some(freer.map_or(i, |(j, _)| j))
}

/// Calls read ahead of the one being placed (for reordering), with the bytes they hold.
#[derive(Default)]
struct Ahead {
    q: VecDeque<Event>,
    bytes: usize,
    /// How many of the calls ahead free each descriptor number (`close`, `dup2`/`dup3`'s
    /// target; key -1: `close_range`), so that a search for one is a lookup when there is none.
    frees: HashMap<i32, u32>,
    /// How many of the calls ahead take each descriptor number ([`taken_numbers`]).
    takes: HashMap<i32, u32>,
    /// How many of the calls ahead made or removed a name, by [`name_bases`].
    name_changes: HashMap<u64, u32>,
    /// How many of the calls ahead each thread made.
    threads: HashMap<i32, u32>,
}

/// Count one more or one fewer of `k` (a key counted down to zero is removed).
fn count(m: &mut HashMap<i32, u32>, k: i32, add: bool) {
    let c = m.entry(k).or_default();
    if add {
        *c += 1;
    } else {
        *c -= 1;
        if *c == 0 {
            m.remove(&k);
        }
    }
}

/// The descriptor number a call frees, for [`Ahead`]'s index (-1: a range).
fn frees_number(e: &Event) -> Option<i32> {
    let arg = |n: &str| e.arg(n).and_then(|a| a.as_int()).and_then(|v| i32::try_from(v).ok());
    match e.def?.replay.handler()? {
        ra_syscalls::Handler::Close => arg("fd"),
        ra_syscalls::Handler::Dup => arg("newfd"),
        ra_syscalls::Handler::CloseRange => Some(-1),
        _ => None,
    }
}

/// Bytes of captured data an event holds (what a queued event costs in memory).
pub(crate) fn data_bytes(ev: &Event) -> usize {
    ev.args
        .iter()
        .map(|a| match a {
            ra_trace::ArgValue::Data(d) => d.len(),
            ra_trace::ArgValue::Iov(v) => {
                v.iter().filter_map(|x| x.data.as_ref()).map(|d| d.len()).sum()
            }
            ra_trace::ArgValue::Strings(v) => v.iter().map(Vec::len).sum(),
            _ => 0,
        })
        .sum::<usize>()
        + 256
}

impl Ahead {
    fn account(&mut self, e: &Event, add: bool) {
        let b = data_bytes(e);
        if add {
            self.bytes += b;
        } else {
            self.bytes -= b;
        }
        if names_changed(e) {
            for b in name_bases(e) {
                let c = self.name_changes.entry(b).or_default();
                if add {
                    *c += 1;
                } else {
                    *c -= 1;
                    if *c == 0 {
                        self.name_changes.remove(&b);
                    }
                }
            }
        }
        if let Some(n) = frees_number(e) {
            count(&mut self.frees, n, add);
        }
        for n in taken_numbers(e) {
            count(&mut self.takes, n, add);
        }
        if let Some(t) = e.tid.or(e.pid) {
            count(&mut self.threads, t, add);
        }
    }
    fn pop_front(&mut self) -> Option<Event> {
        let e = self.q.pop_front()?;
        self.account(&e, false);
        Some(e)
    }
    fn push_front(&mut self, e: Event) {
        self.account(&e, true);
        self.q.push_front(e);
    }
    fn remove(&mut self, i: usize) -> Option<Event> {
        let e = self.q.remove(i)?;
        self.account(&e, false);
        Some(e)
    }
    /// Take out the calls of thread `t` queued before position `i`, in their order; also
    /// the new position of the call that was at `i`. (The calls stay counted in the queue.)
    fn take_thread_before(&mut self, i: usize, t: Option<i32>) -> (Vec<Event>, usize) {
        let mut taken = Vec::new();
        let (mut j, mut at) = (0, i);
        while j < at {
            if self.q[j].tid.or(self.q[j].pid) == t {
                taken.push(self.q.remove(j).expect("position is in range"));
                at -= 1;
            } else {
                j += 1;
            }
        }
        (taken, at)
    }
    /// Put the call at position `i` first, with the calls of its thread queued before it (in
    /// their order: a thread's calls never pass each other), and `ev` right after them.
    fn bring_forward(&mut self, i: usize, ev: Event) {
        let t = self.q[i].tid.or(self.q[i].pid);
        let (mut moved, at) = self.take_thread_before(i, t);
        moved.push(self.q.remove(at).expect("position is in range"));
        // The calls moved stay in the queue (no accounting either way); `ev` joins it.
        self.account(&ev, true);
        self.q.push_front(ev);
        for e in moved.into_iter().rev() {
            self.q.push_front(e);
        }
    }
    /// Put `ev` and the calls of thread `tid` queued before position `i` right after the
    /// call at `i`, in their order.
    fn defer_after(&mut self, i: usize, ev: Event, tid: i32) {
        // `ev` joins the queue; the calls moved stay in it (no accounting either way).
        self.account(&ev, true);
        let (moved, at) = self.take_thread_before(i, Some(tid));
        for (k, e) in std::iter::once(ev).chain(moved).enumerate() {
            self.q.insert(at + 1 + k, e);
        }
    }
    /// True when a call ahead may free descriptor number `n`.
    fn may_free(&self, n: i32) -> bool {
        self.frees.contains_key(&n) || self.frees.contains_key(&-1)
    }
    /// The position of the first call ahead that `pred` accepts, reading ahead as far as
    /// needed, up to [`LOOKAHEAD`] calls or [`LOOKAHEAD_BYTES`].
    fn find(
        &mut self,
        iter: &mut impl Iterator<Item = ra_trace::Result<Event>>,
        read_error: &mut Option<ra_trace::Error>,
        pred: impl FnMut(&Event) -> bool,
    ) -> Option<usize> {
        self.find_if(iter, read_error, LOOKAHEAD, |_| true, pred)
    }

    /// [`Ahead::find`], up to `limit` calls ahead, searched only while `worth(self)` says a match
    /// may be among them. The queue grows in steps (64 calls, then 4 times as many each
    /// time) and each step searches only the calls it added: the first match is the one a
    /// search of the whole look-ahead finds, but the usual match, a few calls ahead, no
    /// longer costs reading 65,536 calls ahead and holding them (on a make build's trace,
    /// where every spawned child's first call comes before the vfork that made it returns,
    /// that was 11% of the compile's CPU in the kernel's zeroing of fresh pages alone).
    fn find_if(
        &mut self,
        iter: &mut impl Iterator<Item = ra_trace::Result<Event>>,
        read_error: &mut Option<ra_trace::Error>,
        limit: usize,
        worth: impl Fn(&Ahead) -> bool,
        mut pred: impl FnMut(&Event) -> bool,
    ) -> Option<usize> {
        let mut searched = 0;
        let mut step = 64;
        loop {
            if searched < self.q.len() && worth(self) {
                if let Some(i) = self.q.iter().skip(searched).position(&mut pred) {
                    return Some(searched + i);
                }
            }
            searched = self.q.len();
            self.fill_to((searched + step).min(limit), iter, read_error);
            if self.q.len() == searched {
                // The look-ahead is full, or the trace ended.
                return None;
            }
            step = step.saturating_mul(4);
        }
    }

    /// Read ahead, up to `n` calls (at most [`LOOKAHEAD`]) or [`LOOKAHEAD_BYTES`].
    fn fill_to(
        &mut self,
        n: usize,
        iter: &mut impl Iterator<Item = ra_trace::Result<Event>>,
        read_error: &mut Option<ra_trace::Error>,
    ) {
        let n = n.min(LOOKAHEAD);
        while self.q.len() < n && self.bytes < LOOKAHEAD_BYTES && read_error.is_none() {
            match iter.next() {
                Some(Ok(e)) => {
                    self.account(&e, true);
                    self.q.push_back(e);
                }
                Some(Err(e)) => *read_error = Some(e),
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{event, facts};
    use ra_trace::ArgValue::Int;

    /// `n` calls, ids 0 to n - 1.
    fn calls(n: u64) -> Vec<ra_trace::Result<Event>> {
        (0..n).map(|i| Ok(call(i, event("close", 1, 0, 0, &[])))).collect()
    }

    /// [`event`] as the `id`th call of the trace.
    fn call(id: u64, e: Event) -> Event {
        Event {
            unique_id: id,
            time_called: Some(1_000 + id as i64),
            time_returned: Some(1_000 + id as i64),
            ..e
        }
    }

    /// `clone` flags of a new thread (as pthread_create's, less those the planner ignores).
    const THREAD: i64 = (libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD) as i64;

    /// A path argument.
    fn path(p: &str) -> ra_trace::ArgValue {
        ra_trace::ArgValue::Data(format!("{p}\0").into_bytes().into())
    }

    /// `e` as call `id` of thread `tid` of process 300, called and returned at these times.
    fn in_thread(id: u64, called: i64, ret: i64, tid: i32, e: Event) -> Event {
        Event {
            unique_id: id,
            time_called: Some(called),
            time_returned: Some(ret),
            pid: Some(300),
            tid: Some(tid),
            ..e
        }
    }

    /// Thread `tid`'s `openat` of `name`, returning descriptor 4.
    fn open4(tid: i32, name: &str) -> Event {
        event("openat", tid, 4, 0, &[("dirfd", Int(-100)), ("pathname", path(name))])
    }

    /// Thread `tid`'s call `name` on descriptor 4, returning 0.
    fn fd4(name: &str, tid: i32) -> Event {
        event(name, tid, 0, 0, &[("fd", Int(4))])
    }

    /// An io_uring request of thread `tid`: opcode WRITE on descriptor 4, submitted by the
    /// `io_uring_enter` `enter`, with 4096 bytes.
    fn uring_write(tid: i32, enter: i64) -> Event {
        event(
            "io_uring_op",
            tid,
            4096,
            0,
            &[
                ("ring", Int(1)),
                ("opcode", Int(23)),
                ("fd", Int(4)),
                ("offset", Int(0)),
                ("addr", Int(0x1000)),
                ("len", Int(4096)),
                ("sqe_flags", Int(0)),
                ("buf_index", Int(0)),
                ("enter_id", Int(enter)),
                ("uring_flags", Int(0)),
                ("buf_in", ra_trace::ArgValue::Data(vec![7u8; 4096].into())),
            ],
        )
    }

    /// A request is recorded when it completes, after calls its thread made while it was in
    /// flight; it is placed right after the `io_uring_enter` that submitted it (at most as many
    /// as that call's result), and one an SQPOLL thread submitted (no enter) stays.
    #[test]
    fn io_uring_requests_are_placed_at_the_enter_that_submitted_them() {
        let enter = |n| event("io_uring_enter", 100, n, 0, &[("fd", Int(3))]);
        let evs = vec![
            call(1, enter(2)),
            call(2, event("close", 100, 0, 0, &[("fd", Int(9))])),
            call(3, uring_write(100, 1)),
            call(4, event("close", 100, 0, 0, &[("fd", Int(8))])),
            call(5, uring_write(100, -1)),
            call(6, uring_write(100, 1)),
            call(7, uring_write(100, 1)),
        ];
        let order: Vec<u64> = Planner::new(evs.into_iter().map(Ok), facts())
            .map(|p| p.expect("placed").ev.unique_id)
            .collect();
        assert_eq!(order, vec![1, 3, 6, 2, 4, 5, 7]);
    }

    /// A damaged request (an opcode no SQE holds, a write's data longer than its length) is
    /// an error of the trace, not a call to issue.
    #[test]
    fn a_damaged_io_uring_request_is_refused() {
        let mut bad_op = uring_write(100, -1);
        bad_op.set_arg("opcode", Int(300));
        let mut bad_len = uring_write(100, -1);
        bad_len.set_arg("len", Int(100));
        for (e, want) in [(bad_op, "`opcode` 300 is out of range"), (bad_len, "4096 bytes of data")]
        {
            let evs = vec![call(1, event("close", 100, 0, 0, &[("fd", Int(9))])), call(2, e)];
            let r: Vec<_> = Planner::new(evs.into_iter().map(Ok), facts()).collect();
            let err = r[1].as_ref().map(|_| ()).expect_err("refused").to_string();
            assert!(err.contains("record #2 (io_uring_op)") && err.contains(want), "{err}");
        }
    }

    /// Nested vforks as eBPF records them (Python's test_os, `sh -c "sh -c 'echo ...'"`): the
    /// grandchild's calls come first, then the vfork that made its parent, then the parent's
    /// own calls (its `dup2` of a pipe onto stdout) and the vfork that made the grandchild.
    /// The grandchild's calls wait after that vfork; bringing the vfork forward instead ran it
    /// before its thread's `dup2`, and the grandchild wrote to the wrong stdout.
    #[test]
    fn a_grandchild_recorded_before_its_parent_waits_for_the_vfork_that_made_it() {
        let evs = vec![
            call(1, event("close", 100, 0, 0, &[("fd", Int(9))])),
            call(2, event("close", 300, 0, 0, &[("fd", Int(7))])),
            call(3, event("write", 300, 15, 0, &[("fd", Int(1))])),
            call(4, event("vfork", 100, 200, 0, &[])),
            call(5, event("dup2", 200, 1, 0, &[("oldfd", Int(4)), ("newfd", Int(1))])),
            call(6, event("vfork", 200, 300, 0, &[])),
            call(7, event("close", 200, 0, 0, &[("fd", Int(8))])),
        ];
        let order: Vec<u64> = Planner::new(evs.into_iter().map(Ok), facts())
            .map(|p| p.expect("placed").ev.unique_id)
            .collect();
        assert_eq!(order, vec![1, 4, 5, 6, 2, 3, 7]);
    }

    /// fs_mark under ptrace: thread 200's `mkdir("f")` failed with `EEXIST` and returned
    /// first; thread 100's, called before it returned, made the directory and was recorded
    /// after it. The planner brings the one that made it forward, and the failure waits for it.
    /// A failure nothing ahead explains keeps its place.
    #[test]
    fn the_call_that_made_a_name_another_failed_on_comes_first() {
        let timed = |id: u64, called: i64, ret: i64, e: Event| Event {
            unique_id: id,
            time_called: Some(called),
            time_returned: Some(ret),
            ..e
        };
        let evs = vec![
            timed(1, 10, 20, event("close", 100, 0, 0, &[("fd", Int(9))])),
            timed(2, 11, 21, event("close", 200, 0, 0, &[("fd", Int(9))])),
            timed(3, 40, 60, event("mkdir", 200, -1, libc::EEXIST, &[("pathname", path("f"))])),
            timed(4, 61, 62, event("statfs", 200, 0, 0, &[("path", path("f"))])),
            timed(5, 30, 65, event("mkdir", 100, 0, 0, &[("pathname", path("f/"))])),
            // Unexplained: nothing ahead made "g".
            timed(6, 70, 80, event("mkdir", 200, -1, libc::EEXIST, &[("pathname", path("g"))])),
            timed(7, 71, 81, event("mkdir", 100, 0, 0, &[("pathname", path("h"))])),
        ];
        let placed: Vec<Placed> =
            Planner::new(evs.into_iter().map(Ok), facts()).map(|p| p.expect("placed")).collect();
        let order: Vec<u64> = placed.iter().map(|p| p.ev.unique_id).collect();
        assert_eq!(order, vec![1, 2, 5, 3, 4, 6, 7]);
        let failed = placed.iter().find(|p| p.ev.unique_id == 3).expect("placed");
        assert!(failed.deps.contains(&2), "the EEXIST waits for the mkdir: {:?}", failed.deps);
    }

    /// A `struct stat` of a directory with `nlink` links.
    fn dir_stat(nlink: u64) -> ra_trace::ArgValue {
        let mut b = vec![0u8; 144];
        b[16..24].copy_from_slice(&nlink.to_le_bytes());
        b[24..28].copy_from_slice(&(libc::S_IFDIR | 0o755).to_le_bytes());
        ra_trace::ArgValue::data(b)
    }

    /// One `linux_dirent64` record per name.
    fn dirents(names: &[&str]) -> ra_trace::ArgValue {
        let mut b = Vec::new();
        for n in names {
            let len = (19 + n.len() + 1).next_multiple_of(8);
            let mut r = vec![0u8; len];
            r[16..18].copy_from_slice(&(len as u16).to_le_bytes());
            r[18] = 4;
            r[19..19 + n.len()].copy_from_slice(n.as_bytes());
            b.extend(r);
        }
        ra_trace::ArgValue::data(b)
    }

    /// Two processes on one directory under ptrace (fidelity.c's `race`): process 200's
    /// listing of `d`, which shows `sub`, returned (and was recorded) before process 100's
    /// `mkdir("d/sub")` returned, which it overlapped. The mkdir comes first, and the listing
    /// waits for it; in the recorded order the two ran at once and the listing could miss
    /// `sub`.
    #[test]
    fn a_listing_that_saw_a_name_comes_after_the_overlapping_call_that_made_it() {
        let timed = |id: u64, called: i64, ret: i64, e: Event| Event {
            unique_id: id,
            time_called: Some(called),
            time_returned: Some(ret),
            ..e
        };
        let evs = vec![
            timed(1, 1, 2, event("mkdir", 100, 0, 0, &[("pathname", path("/w/d"))])),
            timed(2, 3, 4, open4(200, "/w/d")),
            timed(
                3,
                20,
                25,
                event(
                    "getdents64",
                    200,
                    72,
                    0,
                    &[("fd", Int(4)), ("dirp", dirents(&[".", "sub", ".."])), ("count", Int(4096))],
                ),
            ),
            timed(4, 10, 30, event("mkdir", 100, 0, 0, &[("pathname", path("/w/d/sub"))])),
        ];
        let placed: Vec<Placed> =
            Planner::new(evs.into_iter().map(Ok), facts()).map(|p| p.expect("placed")).collect();
        let order: Vec<u64> = placed.iter().map(|p| p.ev.unique_id).collect();
        assert_eq!(order, vec![1, 2, 4, 3]);
        assert!(placed[3].deps.contains(&placed[2].seq), "{:?}", placed[3].deps);
    }

    /// The other way round: process 100's `rmdir("d/sub")` returned first, and process 200's
    /// `stat("d")`, called before it returned, still counted `sub`'s link (3). The stat comes
    /// first and the rmdir waits for it; a stat after both (2 links) keeps its place.
    #[test]
    fn a_stat_that_counted_a_link_comes_before_the_overlapping_rmdir() {
        let timed = |id: u64, called: i64, ret: i64, e: Event| Event {
            unique_id: id,
            time_called: Some(called),
            time_returned: Some(ret),
            ..e
        };
        let stat = |n: u64| {
            event("stat", 200, 0, 0, &[("pathname", path("/w/d")), ("statbuf", dir_stat(n))])
        };
        let evs = vec![
            timed(1, 1, 2, event("mkdir", 100, 0, 0, &[("pathname", path("/w/d"))])),
            timed(2, 3, 4, event("mkdir", 100, 0, 0, &[("pathname", path("/w/d/sub"))])),
            timed(3, 5, 6, stat(3)),
            timed(4, 10, 20, event("rmdir", 100, 0, 0, &[("pathname", path("/w/d/sub"))])),
            timed(5, 12, 25, stat(3)),
            timed(6, 26, 27, stat(2)),
        ];
        let placed: Vec<Placed> =
            Planner::new(evs.into_iter().map(Ok), facts()).map(|p| p.expect("placed")).collect();
        let order: Vec<u64> = placed.iter().map(|p| p.ev.unique_id).collect();
        assert_eq!(order, vec![1, 2, 3, 5, 4, 6]);
        let seq = |id: u64| placed.iter().find(|p| p.ev.unique_id == id).expect("placed").seq;
        let rmdir = placed.iter().find(|p| p.ev.unique_id == 4).expect("placed");
        assert!(rmdir.deps.contains(&seq(5)), "the rmdir waits for the stat: {:?}", rmdir.deps);
    }

    /// The stepwise search finds the first match a search of the whole look-ahead finds,
    /// wherever it lies, and reads ahead little when the match is near.
    #[test]
    fn the_look_ahead_search_finds_the_first_match_reading_no_further_than_needed() {
        let total = LOOKAHEAD as u64 + 500;
        for target in [0u64, 1, 63, 64, 65, 319, 320, 1_000, 21_000, LOOKAHEAD as u64 - 1] {
            let mut iter = calls(total).into_iter();
            let mut err = None;
            let mut a = Ahead::default();
            // Matches at `target` and later ones: the first is found.
            let found = a.find(&mut iter, &mut err, |e| {
                e.unique_id >= target && e.unique_id % 2 == target % 2
            });
            assert_eq!(found, Some(target as usize), "target {target}");
            assert!(a.q.len() <= 4 * target as usize + 64, "{} read ahead for {target}", a.q.len());
            // The queue holds the calls in order, none lost.
            assert!(a.q.iter().enumerate().all(|(i, e)| e.unique_id == i as u64));
        }
        // No match: the whole look-ahead is read, no further; a second search starts where
        // the first stopped and adds nothing.
        let mut iter = calls(total).into_iter();
        let mut err = None;
        let mut a = Ahead::default();
        assert_eq!(a.find(&mut iter, &mut err, |_| false), None);
        assert_eq!(a.q.len(), LOOKAHEAD);
        assert_eq!(a.find(&mut iter, &mut err, |e| e.unique_id == 5), Some(5));
        assert_eq!(a.q.len(), LOOKAHEAD);
        // A match beyond the look-ahead is not found; the trace's end stops the search.
        let mut iter = calls(100).into_iter();
        let mut a = Ahead::default();
        assert_eq!(a.find(&mut iter, &mut err, |e| e.unique_id == 200), None);
        assert_eq!(a.q.len(), 100);
        // `worth` false: nothing is searched.
        let mut iter = calls(100).into_iter();
        let mut a = Ahead::default();
        assert_eq!(a.find_if(&mut iter, &mut err, LOOKAHEAD, |_| false, |_| true), None);
    }

    /// threads.c (5,000 threads each open, write and close a file) under ptrace: thread 301's
    /// open of descriptor 4 was recorded before thread 302's, though 302's returned before
    /// 301's was called, and 302 closed 4 before 301 took it. 302's calls come first, and 301's
    /// open waits for the close. In recorded order, the replay's table still held 302's 4 when
    /// 301's open ran (a return-value mismatch), and 301's close then closed 302's file
    /// (`EBADF` for 302's). Thread 302's clone is recorded after its calls, as a thread's often
    /// is: when 301's open is placed the model does not know 302, and its group's table counts.
    #[test]
    fn a_descriptor_number_taken_by_a_thread_recorded_later_but_called_first() {
        let evs = vec![
            in_thread(1, 10, 11, 300, event("clone", 300, 301, 0, &[("flags", Int(THREAD))])),
            in_thread(3, 100, 101, 301, open4(301, "t.1")),
            in_thread(4, 102, 103, 301, fd4("write", 301)),
            in_thread(5, 50, 60, 302, open4(302, "t.2")),
            in_thread(6, 61, 62, 302, fd4("write", 302)),
            in_thread(7, 63, 64, 302, fd4("close", 302)),
            in_thread(8, 104, 105, 301, fd4("close", 301)),
            in_thread(9, 40, 70, 300, event("clone", 300, 302, 0, &[("flags", Int(THREAD))])),
        ];
        let placed: Vec<Placed> =
            Planner::new(evs.into_iter().map(Ok), facts()).map(|p| p.expect("placed")).collect();
        let order: Vec<u64> = placed.iter().map(|p| p.ev.unique_id).collect();
        assert_eq!(order, vec![1, 5, 6, 7, 3, 4, 8, 9]);
        let seq = |id: u64| placed.iter().find(|p| p.ev.unique_id == id).expect("placed").seq;
        let open301 = placed.iter().find(|p| p.ev.unique_id == 3).expect("placed");
        assert!(open301.deps.contains(&seq(7)), "it waits for the close: {:?}", open301.deps);
    }

    /// A descriptor passed over a socket (`SCM_RIGHTS`) whose receiver's `recvmsg` returned,
    /// and was recorded, before the sender's `sendmsg`: the sender comes forward, and the
    /// receiver waits for it, takes the number it received and is told which message it got.
    #[test]
    fn a_received_descriptor_waits_for_the_message_that_sent_it() {
        let rights = |e: Event, fd: i32| Event {
            extra: vec![(
                ra_trace::schema::SCM_RIGHTS.into(),
                ExtraValue::Bytes(fd.to_le_bytes().to_vec()),
            )],
            ..e
        };
        let at = |id: u64, called: i64, ret: i64, e: Event| Event {
            unique_id: id,
            time_called: Some(called),
            time_returned: Some(ret),
            ..e
        };
        let evs = vec![
            at(1, 10, 11, fd4("write", 300)),
            at(2, 20, 40, rights(event("recvmsg", 400, 4, 0, &[("sockfd", Int(3))]), 7)),
            at(3, 25, 45, rights(event("sendmsg", 300, 4, 0, &[("sockfd", Int(3))]), 5)),
        ];
        let placed: Vec<Placed> =
            Planner::new(evs.into_iter().map(Ok), facts()).map(|p| p.expect("placed")).collect();
        let order: Vec<u64> = placed.iter().map(|p| p.ev.unique_id).collect();
        assert_eq!(order, vec![1, 3, 2]);
        let (send, recv) = (&placed[1], &placed[2]);
        assert!(recv.deps.contains(&send.seq), "{:?}", recv.deps);
        assert_eq!(recv.ev.extra_int(RIGHTS_FROM), Some(3));
        assert!(!recv.pl.fd_keys.is_empty(), "it takes descriptor 7");
        assert_eq!(taken_numbers(&recv.ev).collect::<Vec<_>>(), vec![7]);
        assert_eq!(taken_numbers(&send.ev).count(), 0);
    }

    /// Thread 301's open took descriptor 4 while the model still had it open for 302, whose
    /// write and close of it were recorded later but called before the open returned. The
    /// close comes forward with the write 302 made before it, in their order: the write
    /// alone left behind would run after the close (`EBADF`).
    #[test]
    fn a_freeing_call_comes_forward_with_its_thread_s_calls_before_it() {
        let evs = vec![
            in_thread(1, 1, 2, 300, event("clone", 300, 301, 0, &[("flags", Int(THREAD))])),
            in_thread(2, 3, 4, 300, event("clone", 300, 302, 0, &[("flags", Int(THREAD))])),
            in_thread(3, 10, 11, 302, open4(302, "t.2")),
            in_thread(4, 30, 40, 301, open4(301, "t.1")),
            in_thread(5, 20, 22, 302, fd4("write", 302)),
            in_thread(6, 23, 24, 302, fd4("close", 302)),
            in_thread(7, 41, 42, 301, fd4("close", 301)),
        ];
        let placed: Vec<Placed> =
            Planner::new(evs.into_iter().map(Ok), facts()).map(|p| p.expect("placed")).collect();
        let order: Vec<u64> = placed.iter().map(|p| p.ev.unique_id).collect();
        assert_eq!(order, vec![1, 2, 3, 5, 6, 4, 7]);
    }

    /// A process killed by a signal (SIGABRT) while two threads lived: each gets a generated
    /// exit, stamped when the recorder saw it. The main thread's writes to a pipe come before
    /// its own; the last thread's exit ends the process and closes the pipe, so it waits for
    /// them (Python's test_threading: the parent read the end of the pipe instead of the
    /// child's 448 bytes, and the writes were skipped as calls of an ended process).
    #[test]
    fn the_generated_exit_that_ends_a_process_waits_for_its_other_threads() {
        let generated = |id: u64, tid: i32| {
            let mut e = call(id, event("exit", tid, 0, 0, &[("status", Int(6))]));
            e.pid = Some(300);
            (e.ret, e.errno) = (None, None);
            e.extra.push(("generated".into(), ra_trace::ExtraValue::Bool(true)));
            e
        };
        let evs = vec![
            call(1, event("clone", 300, 301, 0, &[("flags", Int(THREAD))])),
            call(2, event("write", 300, 5, 0, &[("fd", Int(2))])),
            generated(3, 300),
            generated(4, 301),
        ];
        let placed: Vec<Placed> =
            Planner::new(evs.into_iter().map(Ok), facts()).map(|p| p.expect("placed")).collect();
        let last = &placed[3];
        assert!(last.pl.ends_proc, "the last thread's exit ends the process");
        assert!(
            last.deps.contains(&placed[2].seq),
            "it waits for the main thread's exit: {:?}",
            last.deps
        );
    }
}
