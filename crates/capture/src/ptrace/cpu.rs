//! Where the traced command runs relative to the tracer.
//!
//! Every captured call hands control tracee -> tracer -> tracee twice. When the two run on
//! different CPUs each hand-off wakes an idle CPU, which in a VM costs a hypervisor exit:
//! measured here, 100k-block dd took 3-23 s unpinned and a steady 2.8-3.2 s with tracer and
//! command on one CPU (rr binds its recordings to one CPU for the same reason). But a binding
//! takes a program's parallelism away: `xz -T2` ran 48 s bound against 25 s untraced. So the
//! default ([`CpuPolicy::Auto`]) binds, and a monitor thread unbinds the whole traced tree
//! (and the tracer) for the rest of the run as soon as two traced threads are seen runnable
//! at once at two checks in a row: the tree then wants more than one CPU.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the command runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuPolicy {
    /// On the tracer's CPU while at most one traced thread is runnable; everywhere it may run
    /// once two are (checked every 200 ms).
    Auto,
    /// Always on the tracer's CPU (the command sees one CPU, like rr).
    Same,
    /// Wherever the command's affinity allows.
    Any,
}

type Pid = libc::pid_t;

/// How often the monitor looks, and how many threads it looks at each time (a tree of
/// thousands of threads is sampled in turns).
const PERIOD: Duration = Duration::from_millis(200);
const SAMPLE: usize = 256;

/// A CPU set.
#[derive(Clone, Copy)]
pub(crate) struct CpuSet(libc::cpu_set_t);

impl CpuSet {
    /// This thread's affinity.
    pub(crate) fn current() -> CpuSet {
        // SAFETY: an all-zero cpu_set_t is valid; sched_getaffinity fills exactly one.
        unsafe {
            let mut s: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut s);
            CpuSet(s)
        }
    }

    /// Apply to thread `tid` (0: the calling thread). Errors (the thread is gone) are ignored:
    /// there is nothing left to move.
    pub(crate) fn apply(&self, tid: Pid) {
        // SAFETY: sched_setaffinity reads exactly one cpu_set_t.
        unsafe {
            libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &self.0);
        }
    }
}

/// What the tracer and the monitor share.
#[derive(Default)]
struct Shared {
    /// Live traced threads.
    tids: Mutex<HashSet<Pid>>,
    unbound: AtomicBool,
    stop: AtomicBool,
    /// When and why the tree was unbound.
    note: Mutex<Option<String>>,
}

/// The running monitor of a bound recording ([`CpuPolicy::Auto`]).
pub(crate) struct Monitor {
    shared: Arc<Shared>,
    original: CpuSet,
    thread: Option<JoinHandle<()>>,
}

impl Monitor {
    /// Start watching; `original` is the affinity to give back, `tracer` the tracer thread's
    /// tid (unbound too).
    pub(crate) fn start(original: CpuSet, tracer: Pid) -> Monitor {
        let shared = Arc::new(Shared::default());
        let s = Arc::clone(&shared);
        let t0 = Instant::now();
        let thread = std::thread::Builder::new()
            .name("ra-cpu-monitor".into())
            .spawn(move || watch(&s, original, tracer, t0))
            .ok();
        Monitor { shared, original, thread }
    }

    /// A traced thread appeared (its first stop): watched, and unbound at once if the tree
    /// already is (it may have been created by a thread still bound).
    pub(crate) fn add(&self, tid: Pid) {
        if let Ok(mut t) = self.shared.tids.lock() {
            t.insert(tid);
        }
        if self.shared.unbound.load(Ordering::Acquire) {
            self.original.apply(tid);
        }
    }

    /// A traced thread ended.
    pub(crate) fn remove(&self, tid: Pid) {
        if let Ok(mut t) = self.shared.tids.lock() {
            t.remove(&tid);
        }
    }

    /// Stop watching; the note saying when and why the tree was unbound, if it was.
    pub(crate) fn finish(mut self) -> Option<String> {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        self.shared.note.lock().ok().and_then(|n| n.clone())
    }
}

/// True when thread `tid` is running or runnable (state `R` in /proc/<tid>/stat).
fn runnable(tid: Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{tid}/stat")).is_ok_and(|s| {
        // "pid (comm) S ...": comm may hold spaces and parentheses; the state follows the
        // last ')'.
        s.rfind(')').and_then(|i| s[i + 1..].split_whitespace().next()) == Some("R")
    })
}

fn watch(s: &Shared, original: CpuSet, tracer: Pid, t0: Instant) {
    let mut streak = 0;
    let mut turn = 0usize;
    while !s.stop.load(Ordering::Acquire) {
        std::thread::park_timeout(PERIOD);
        if s.stop.load(Ordering::Acquire) {
            return;
        }
        let tids: Vec<Pid> = match s.tids.lock() {
            Ok(t) => t.iter().copied().collect(),
            Err(_) => return,
        };
        if tids.len() < 2 {
            streak = 0;
            continue;
        }
        // Large trees: a different slice each time.
        let start = if tids.len() > SAMPLE { turn % tids.len() } else { 0 };
        turn = turn.wrapping_add(SAMPLE);
        let running =
            tids.iter().cycle().skip(start).take(tids.len().min(SAMPLE)).filter(|&&t| runnable(t));
        let n = running.take(2).count();
        streak = if n >= 2 { streak + 1 } else { 0 };
        if streak < 2 {
            continue;
        }
        s.unbound.store(true, Ordering::Release);
        original.apply(tracer);
        let tids: Vec<Pid> = match s.tids.lock() {
            Ok(t) => t.iter().copied().collect(),
            Err(_) => return,
        };
        for t in tids {
            original.apply(t);
        }
        if let Ok(mut note) = s.note.lock() {
            *note = Some(format!(
                "until {:.2} s, then unbound: 2 traced threads were runnable at once",
                t0.elapsed().as_secs_f64()
            ));
        }
        return;
    }
}
