//! Filling a profile from individual operations (offline profiles of traces, and any producer
//! that sees one operation at a time): intervals on a grid anchored at the Unix epoch, so that
//! profiles of different traces or machines line up and merge.

use std::collections::BTreeMap;

use crate::{Interval, Key, Scale};

/// Operations in, intervals out. An operation counts in the interval in which it completed
/// (as bcc's tools and the live profiler count).
#[derive(Debug)]
pub struct Accumulator {
    interval_ns: u64,
    intervals: BTreeMap<u64, Interval>,
    /// The earliest and latest time seen (operation starts and ends), for the bounds of the
    /// single interval (`interval_ns` 0) and the partial marks.
    first_ns: u64,
    last_ns: u64,
    scale: Scale,
}

impl Accumulator {
    /// `interval_ns` 0: one interval for everything.
    pub fn new(interval_ns: u64) -> Accumulator {
        Accumulator::with_scale(interval_ns, Scale::Log2)
    }

    /// An accumulator whose histograms use the buckets of `scale` (`--buckets`).
    pub fn with_scale(interval_ns: u64, scale: Scale) -> Accumulator {
        Accumulator {
            interval_ns,
            intervals: BTreeMap::new(),
            first_ns: u64::MAX,
            last_ns: 0,
            scale,
        }
    }

    /// The grid cell holding time `t_ns`: `[start, end)`.
    pub fn cell(&self, t_ns: u64) -> (u64, u64) {
        if self.interval_ns == 0 {
            return (0, 0);
        }
        let start = t_ns - t_ns % self.interval_ns;
        (start, start.saturating_add(self.interval_ns))
    }

    /// Note that the profiled span includes `t_ns` (an operation's start).
    pub fn saw(&mut self, t_ns: u64) {
        self.first_ns = self.first_ns.min(t_ns);
        self.last_ns = self.last_ns.max(t_ns);
    }

    fn interval(&mut self, t_ns: u64) -> &mut Interval {
        self.saw(t_ns);
        let (start, end) = self.cell(t_ns);
        self.intervals.entry(start).or_insert_with(|| Interval {
            start_ns: start,
            end_ns: end,
            ..Interval::default()
        })
    }

    /// One operation that completed at `end_ns` after `latency_ns`.
    pub fn add(&mut self, end_ns: u64, key: Key, latency_ns: u64, failed: bool) {
        self.saw(end_ns.saturating_sub(latency_ns));
        let scale = self.scale;
        self.interval(end_ns).hists.entry(key).or_default().record_in(scale, latency_ns, failed);
    }

    /// Count one value of a value profile (`--value`: a size, an offset, a distance, a
    /// depth) for the operation that completed at `end_ns`, which began at `start_ns`.
    pub fn add_value(&mut self, start_ns: u64, end_ns: u64, key: Key, value: u64, failed: bool) {
        self.saw(start_ns);
        let scale = self.scale;
        self.interval(end_ns).hists.entry(key).or_default().record_in(scale, value, failed);
    }

    /// Scale every histogram's counts by `n` (`--sample N`: one call in N was counted).
    pub fn scale_counts(&mut self, n: u64) {
        for iv in self.intervals.values_mut() {
            for h in iv.hists.values_mut() {
                h.scale_counts(n);
            }
        }
    }

    /// Count an event that is not a latency (an operation without one, a cache hit...).
    pub fn count(&mut self, t_ns: u64, counter: &str, n: u64) {
        *self.interval(t_ns).counters.entry(counter.to_string()).or_default() += n;
    }

    /// The intervals in time order. With one interval, its bounds are the first and last
    /// time seen; on a grid, the first and last intervals are partial when the profiled span
    /// does not cover them.
    pub fn finish(self) -> Vec<Interval> {
        let (first, last) = (self.first_ns, self.last_ns);
        let mut v: Vec<Interval> = self.intervals.into_values().collect();
        if self.interval_ns == 0 {
            for iv in &mut v {
                iv.start_ns = first;
                iv.end_ns = last;
            }
            return v;
        }
        let n = v.len();
        for (i, iv) in v.iter_mut().enumerate() {
            if (i == 0 && first > iv.start_ns) || (i + 1 == n && last + 1 < iv.end_ns) {
                iv.partial = true;
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_is_anchored_at_the_epoch() {
        let k = Key { layer: "syscall".into(), op: "read".into(), group: String::new() };
        let mut a = Accumulator::new(1_000_000_000);
        a.add(5_500_000_000, k.clone(), 100, false);
        a.add(7_000_000_001, k.clone(), 100, true);
        let v = a.finish();
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].start_ns, v[0].end_ns, v[0].partial),
            (5_000_000_000, 6_000_000_000, true)
        );
        assert_eq!(
            (v[1].start_ns, v[1].end_ns, v[1].partial),
            (7_000_000_000, 8_000_000_000, true)
        );
        assert_eq!(v[1].hists[&k].errors, 1);
        let mut a = Accumulator::new(0);
        a.add(5_500_000_000, k.clone(), 100, false);
        a.add(7_000_000_001, k, 100, true);
        let v = a.finish();
        assert_eq!((v.len(), v[0].start_ns, v[0].end_ns), (1, 5_499_999_900, 7_000_000_001));
    }
}
