//! `--timing original|scale=K`: issue each call at its recorded offset, and measure how close
//! replay came.
//!
//! Replayfs' pre-spin: a worker sleeps until a margin before the call is due, then spins to
//! the due time. The margin adapts to how late this machine's sleeps wake (the largest
//! oversleep of the recent sleeps, plus a little), so the spin is short and a late wake-up is
//! rare. Due times are absolute (trace offset × K from one start instant), so being late once
//! is never carried into the next call: no drift.
//!
//! The issue-time error of every call (the instant it was issued minus the instant it was due;
//! never negative, since a call is never issued early) goes into an exact histogram (1 µs
//! steps below 1 ms, log2 above) for the CDF, and into a log2 histogram per second of the
//! trace, because a CDF alone hides the errors at the moments of peak load.
//!
//! A worker that spins for its due time keeps a CPU busy, and the kernel's load balancer then
//! moves the replay's other threads (the dispatcher, the read-ahead) onto that CPU, where they
//! run for a time slice while the worker waits: measured here, p99 errors of 470-880 us at
//! 50k calls/s. So a timed replay splits the CPUs it may use (`CpuSplit`): the workers and
//! the timer that hands them due tasks run on all but the last eighth (at least one), the
//! dispatcher, read-ahead and watchdog on the rest (p99 27-42 us in the same runs).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// 1 µs steps up to this many µs; log2 buckets of µs above.
const FINE_US: usize = 1000;
const COARSE: usize = 40;

/// Issue-time errors: exact to 1 µs below 1 ms.
#[derive(Clone, Debug)]
pub struct ErrHist {
    fine: Box<[u64; FINE_US]>,
    /// coarse[k]: errors of 2^k ms <= e < 2^(k+1) ms.
    coarse: [u64; COARSE],
    /// Calls measured.
    pub count: u64,
    /// The largest error seen, ns; 0 when none was measured.
    pub max_ns: u64,
    /// The sum of all errors, ns (saturating); with `count`, the mean.
    pub total_ns: u64,
}

impl Default for ErrHist {
    fn default() -> Self {
        ErrHist {
            fine: Box::new([0; FINE_US]),
            coarse: [0; COARSE],
            count: 0,
            max_ns: 0,
            total_ns: 0,
        }
    }
}

impl ErrHist {
    /// Counts one call issued `ns` nanoseconds after it was due: in a 1 µs step below 1 ms,
    /// else in the log2 bucket of its whole milliseconds (errors of 2^39 ms and more share
    /// the last bucket).
    pub fn add(&mut self, ns: u64) {
        let us = (ns / 1000) as usize;
        if us < FINE_US {
            self.fine[us] += 1;
        } else {
            let ms = (us / 1000) as u64;
            let k = (63 - ms.max(1).leading_zeros()) as usize;
            self.coarse[k.min(COARSE - 1)] += 1;
        }
        self.count += 1;
        self.max_ns = self.max_ns.max(ns);
        self.total_ns = self.total_ns.saturating_add(ns);
    }

    /// Adds `o`'s counts to this histogram (the scheduler merges each worker's into the
    /// report's).
    pub fn merge(&mut self, o: &ErrHist) {
        for (a, b) in self.fine.iter_mut().zip(o.fine.iter()) {
            *a += b;
        }
        for (a, b) in self.coarse.iter_mut().zip(o.coarse.iter()) {
            *a += b;
        }
        self.count += o.count;
        self.max_ns = self.max_ns.max(o.max_ns);
        self.total_ns = self.total_ns.saturating_add(o.total_ns);
    }

    /// The `q` quantile in ns: the upper end of its 1 µs step below 1 ms (exact to 1 µs),
    /// the upper end of its log2 bucket above; never more than the maximum.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (us, &c) in self.fine.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return ((us as u64 + 1) * 1000).min(self.max_ns);
            }
        }
        for (k, &c) in self.coarse.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return ((2u64 << k) * 1_000_000).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

/// A worker's pacing state and what it measured.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Recent oversleeps (how late a sleep woke), ns; the margin is their maximum.
    recent: [u64; 32],
    next: usize,
    /// Every paced call's issue-time error (issued minus due; never negative).
    pub errors: ErrHist,
    /// Per second of the trace (from its first call): errors as log2 histograms.
    pub per_second: BTreeMap<u64, ra_profile::Hist>,
    /// Time spent spinning, ns.
    pub spun_ns: u64,
    /// The CPUs of the workers and of the other threads, when they were split.
    pub cpus: Option<(String, String)>,
}

/// A timed replay's CPUs: the workers' and the other threads' (see the module's text).
#[derive(Clone, Copy)]
pub(crate) struct CpuSplit {
    original: rustix::thread::CpuSet,
    workers: rustix::thread::CpuSet,
    others: rustix::thread::CpuSet,
}

impl CpuSplit {
    /// The split of this thread's CPUs, or None with fewer than two (nothing to split) or when
    /// the affinity cannot be read.
    pub(crate) fn of_this_thread() -> Option<CpuSplit> {
        CpuSplit::of(rustix::thread::sched_getaffinity(None).ok()?)
    }

    fn of(original: rustix::thread::CpuSet) -> Option<CpuSplit> {
        use rustix::thread::CpuSet;
        let cpus = cpus_in(&original);
        if cpus.len() < 2 {
            return None;
        }
        let others_n = (cpus.len() / 8).max(1);
        let (mut workers, mut others) = (CpuSet::new(), CpuSet::new());
        for (i, &c) in cpus.iter().enumerate() {
            if i < cpus.len() - others_n {
                workers.set(c);
            } else {
                others.set(c);
            }
        }
        Some(CpuSplit { original, workers, others })
    }

    /// Run the calling thread (a worker) on the workers' CPUs.
    pub(crate) fn pin_worker(&self) {
        // A failure leaves the thread where it was: slower timing, nothing else.
        let _ = rustix::thread::sched_setaffinity(None, &self.workers);
    }

    /// Run the calling thread on the other threads' CPUs (threads it starts inherit them)
    /// until the guard is dropped.
    pub(crate) fn pin_others(&self) -> CpuGuard {
        let _ = rustix::thread::sched_setaffinity(None, &self.others);
        CpuGuard(self.original)
    }

    /// "workers on CPUs 0-6, the other threads on 7", for the report.
    pub(crate) fn describe(&self) -> (String, String) {
        (cpu_list(&self.workers), cpu_list(&self.others))
    }
}

/// Gives the calling thread its original CPUs back when dropped.
pub(crate) struct CpuGuard(rustix::thread::CpuSet);

impl Drop for CpuGuard {
    fn drop(&mut self) {
        let _ = rustix::thread::sched_setaffinity(None, &self.0);
    }
}

/// The CPUs in a set, ascending.
fn cpus_in(s: &rustix::thread::CpuSet) -> Vec<usize> {
    (0..rustix::thread::CpuSet::MAX_CPU).filter(|&c| s.is_set(c)).collect()
}

/// A CPU set as a list: "0-3,6".
fn cpu_list(s: &rustix::thread::CpuSet) -> String {
    let cpus = cpus_in(s);
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// The margin's bounds: at least this much spin, at most this much.
const MIN_MARGIN: Duration = Duration::from_micros(50);
const MAX_MARGIN: Duration = Duration::from_millis(2);

impl Pacer {
    fn margin(&self) -> Duration {
        let worst = self.recent.iter().copied().max().unwrap_or(0);
        (Duration::from_nanos(worst) + Duration::from_micros(20)).clamp(MIN_MARGIN, MAX_MARGIN)
    }

    /// Wait until `due` (sleep to the margin, then spin), unless `stop` is set.
    pub fn wait_until(&mut self, due: Instant, stop: &AtomicBool) {
        loop {
            let now = Instant::now();
            if stop.load(Ordering::Relaxed) || now >= due {
                return;
            }
            let left = due - now;
            let margin = self.margin();
            if left <= margin {
                break;
            }
            // Sleep in slices (a stop is noticed within 50 ms) to the margin before `due`.
            let want = (left - margin).min(Duration::from_millis(50));
            let t = Instant::now();
            std::thread::sleep(want);
            let over = t.elapsed().saturating_sub(want).as_nanos() as u64;
            self.recent[self.next % self.recent.len()] = over;
            self.next += 1;
        }
        // Spin to `due`, yielding the CPU while more than a few µs are left: on a machine
        // with few cores, other workers' calls (and the reader) must not wait for a spin.
        let t = Instant::now();
        loop {
            let now = Instant::now();
            if now >= due || stop.load(Ordering::Relaxed) {
                break;
            }
            if due - now > Duration::from_micros(10) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        self.spun_ns += t.elapsed().as_nanos() as u64;
    }

    /// Count one call issued at `issued` that was due at `due`, `trace_s` seconds into the
    /// trace.
    pub fn issued(&mut self, due: Instant, issued: Instant, trace_s: u64) {
        let err = issued.saturating_duration_since(due).as_nanos() as u64;
        self.errors.add(err);
        self.per_second.entry(trace_s).or_default().record(err, false);
    }

    /// Adds another worker's measurements: histograms and spin time summed; the CPU split
    /// taken from `o` only when this pacer has none.
    pub fn merge(&mut self, o: &Pacer) {
        self.errors.merge(&o.errors);
        for (s, h) in &o.per_second {
            self.per_second.entry(*s).or_default().merge(h);
        }
        self.spun_ns += o.spun_ns;
        if self.cpus.is_none() {
            self.cpus.clone_from(&o.cpus);
        }
    }

    /// The report's `timing` object: the error CDF, and per second of the trace.
    pub fn to_json(&self, scale: f64) -> serde_json::Value {
        use serde_json::json;
        let e = &self.errors;
        json!({
            "scale": scale,
            "calls": e.count,
            "issue_error_us": {
                "median": e.quantile(0.5) as f64 / 1e3,
                "p90": e.quantile(0.9) as f64 / 1e3,
                "p99": e.quantile(0.99) as f64 / 1e3,
                "max": e.max_ns as f64 / 1e3,
                "mean": if e.count > 0 { e.total_ns as f64 / e.count as f64 / 1e3 } else { 0.0 },
            },
            "spun_s": self.spun_ns as f64 / 1e9,
            "cpus": self.cpus.as_ref().map(|(w, o)| json!({"workers": w, "others": o})),
            "per_second": self.per_second.iter().map(|(s, h)| json!({
                "second": s, "calls": h.count,
                "median_us": h.quantile(0.5) as f64 / 1e3,
                "p99_us": h.quantile(0.99) as f64 / 1e3,
                "max_us": h.max_ns as f64 / 1e3,
            })).collect::<Vec<_>>(),
        })
    }

    /// The seconds of the trace with the largest p99 error, worst first.
    pub fn worst_seconds(&self, n: usize) -> Vec<(u64, &ra_profile::Hist)> {
        let mut v: Vec<(u64, &ra_profile::Hist)> =
            self.per_second.iter().map(|(s, h)| (*s, h)).collect();
        v.sort_by_key(|(_, h)| std::cmp::Reverse(h.quantile(0.99)));
        v.truncate(n);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_exact_to_a_microsecond() {
        let mut h = ErrHist::default();
        for us in 0..100u64 {
            h.add(us * 1000 + 500);
        }
        assert_eq!(h.count, 100);
        assert_eq!(h.quantile(0.5), 50_000);
        assert_eq!(h.quantile(0.99), 99_000);
        assert_eq!(h.quantile(1.0), 99_500);
        h.add(5_000_000);
        assert_eq!(h.quantile(1.0), 5_000_000);
        let mut g = ErrHist::default();
        g.merge(&h);
        assert_eq!((g.count, g.max_ns), (101, 5_000_000));
    }

    #[test]
    fn the_other_threads_get_the_last_eighth_of_the_cpus() {
        use rustix::thread::CpuSet;
        let set = |cpus: &[usize]| {
            let mut s = CpuSet::new();
            for &c in cpus {
                s.set(c);
            }
            s
        };
        assert!(CpuSplit::of(set(&[3])).is_none(), "one CPU: nothing to split");
        let d = |cpus: &[usize]| CpuSplit::of(set(cpus)).unwrap().describe();
        assert_eq!(d(&[0, 1]), ("0".into(), "1".into()));
        assert_eq!(d(&[2, 5, 6]), ("2,5".into(), "6".into()));
        assert_eq!(d(&(0..16).collect::<Vec<_>>()), ("0-13".into(), "14-15".into()));
        assert_eq!(d(&[0, 1, 2, 4, 5, 8, 9, 10, 11]), ("0-2,4-5,8-10".into(), "11".into()));
    }

    #[test]
    fn the_pacer_never_issues_early_and_is_close() {
        let mut p = Pacer::default();
        let stop = AtomicBool::new(false);
        let start = Instant::now();
        for i in 1..=200u64 {
            let due = start + Duration::from_micros(500 * i);
            p.wait_until(due, &stop);
            let now = Instant::now();
            assert!(now >= due);
            p.issued(due, now, 0);
        }
        assert_eq!(p.errors.count, 200);
        // On an idle machine the median is a few µs; a loaded CI host may be worse, so this
        // only checks the measurement is sane, not a timing goal (bench/replay measures that).
        assert!(p.errors.quantile(0.5) < 50_000_000);
    }
}
