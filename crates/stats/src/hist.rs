//! Bounded histograms: latencies in log-linear buckets (HDR-style: 8 per power of two, so a
//! quantile is within 1/16 of the true value), sizes in log2 buckets.

/// Sub-buckets per power of two (2^SUB_BITS).
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Values below `SUB` have a bucket each; above, each power of two from 2^3 to 2^63 has `SUB`.
pub const LATENCY_BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

/// Latencies in nanoseconds: counts in log-linear buckets plus the exact minimum and maximum.
/// A quantile is the middle of its bucket, clamped to [min, max]: within 6.25 % of the value
/// for latencies of 8 ns and more, exact below.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyHist {
    buckets: Box<[u64; LATENCY_BUCKETS]>,
    count: u64,
    min: u64,
    max: u64,
}

impl Default for LatencyHist {
    fn default() -> Self {
        LatencyHist { buckets: Box::new([0; LATENCY_BUCKETS]), count: 0, min: u64::MAX, max: 0 }
    }
}

/// The bucket of a value.
fn index(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let k = 63 - v.leading_zeros(); // >= SUB_BITS
    let sub = ((v >> (k - SUB_BITS)) as usize) & (SUB - 1);
    SUB + (k - SUB_BITS) as usize * SUB + sub
}

/// The values a bucket holds: `lo..=hi`.
fn bounds(i: usize) -> (u64, u64) {
    if i < SUB {
        return (i as u64, i as u64);
    }
    let j = i - SUB;
    let shift = (j / SUB) as u32; // k - SUB_BITS
    let lo = ((SUB + j % SUB) as u64) << shift;
    (lo, lo.saturating_add((1u64 << shift) - 1))
}

impl LatencyHist {
    /// Count one latency of `ns` nanoseconds.
    pub fn add(&mut self, ns: u64) {
        self.add_n(ns, 1);
    }

    /// `n` latencies of `ns` each.
    pub fn add_n(&mut self, ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.buckets[index(ns)] += n;
        self.count += n;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// A log2 histogram's counts (bucket k: 2^(k-1) <= ns < 2^k, bucket 0: 0 ns; the fs
    /// aggregate rows' layout), each placed at the middle of its bucket, with the exact
    /// minimum and maximum it came with: quantiles from such counts are good to a factor
    /// of two only.
    pub fn add_log2(&mut self, log2: &[u64; 64], min: u64, max: u64) {
        let mut any = false;
        for (k, &c) in log2.iter().enumerate() {
            if c == 0 {
                continue;
            }
            any = true;
            let mid = match k {
                0 => 0,
                1 => 1,
                k => 3u64 << (k - 2),
            };
            let v = if min <= max { mid.clamp(min, max) } else { mid };
            self.buckets[index(v)] += c;
            self.count += c;
        }
        if any && min <= max {
            self.min = self.min.min(min);
            self.max = self.max.max(max);
        }
    }

    /// Add `o`'s counts to these (exact: the buckets are the same).
    pub fn merge(&mut self, o: &LatencyHist) {
        for (a, b) in self.buckets.iter_mut().zip(o.buckets.iter()) {
            *a += b;
        }
        self.count += o.count;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// Latencies counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The smallest latency counted, exact; `None` when empty.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// The largest latency counted, exact; `None` when empty.
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// The `q` quantile (0 < q <= 1): the value of rank ceil(q * count); `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        if q >= 1.0 {
            return Some(self.max);
        }
        let rank = ((q.max(0.0) * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds(i);
                let mid = lo + (hi - lo) / 2;
                return Some(mid.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }
}

/// Sizes in log2 buckets: bucket k counts sizes with 2^(k-1) <= n < 2^k; bucket 0 counts 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeHist(pub [u64; 65]);

impl Default for SizeHist {
    fn default() -> Self {
        SizeHist([0; 65])
    }
}

impl SizeHist {
    /// Count one I/O of `n` bytes (bucket k holds sizes from 2^(k-1) to 2^k - 1; 0 its own).
    pub fn add(&mut self, n: u64) {
        self.0[(64 - n.leading_zeros()) as usize] += 1;
    }

    /// Add `o`'s counts to these.
    pub fn merge(&mut self, o: &SizeHist) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a += b;
        }
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&c| c == 0)
    }

    /// The smallest and largest size of bucket k.
    pub fn bucket_bounds(k: usize) -> (u64, u64) {
        match k {
            0 => (0, 0),
            64 => (1 << 63, u64::MAX),
            k => (1 << (k - 1), (1u64 << k) - 1),
        }
    }

    /// The non-empty buckets' range (first, last), or None.
    pub fn used(&self) -> Option<(usize, usize)> {
        let first = self.0.iter().position(|&c| c > 0)?;
        let last = self.0.iter().rposition(|&c| c > 0)?;
        Some((first, last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_once_in_order() {
        let mut last_hi = None::<u64>;
        for i in 0..LATENCY_BUCKETS {
            let (lo, hi) = bounds(i);
            assert!(lo <= hi, "{i}");
            if let Some(h) = last_hi {
                assert_eq!(lo, h + 1, "bucket {i} starts where {} ended", i - 1);
            }
            assert_eq!(index(lo), i);
            assert_eq!(index(hi), i);
            last_hi = Some(hi);
        }
        assert_eq!(last_hi, Some(u64::MAX));
        for v in [0u64, 1, 7, 8, 9, 15, 16, 17, 1000, 123_456_789, u64::MAX / 3] {
            let (lo, hi) = bounds(index(v));
            assert!(lo <= v && v <= hi, "{v}");
            // Every bucket is at most 1/8 of its lower bound wide.
            assert!(hi - lo <= lo / 8, "{v}: {lo}..={hi}");
        }
    }

    #[test]
    fn quantiles_are_within_a_sixteenth() {
        let mut h = LatencyHist::default();
        // 1..=10000 ns: the true p50 is 5000, p90 9000, p99 9900.
        for v in 1..=10_000u64 {
            h.add(v);
        }
        for (q, want) in [(0.5, 5000.0), (0.9, 9000.0), (0.99, 9900.0)] {
            let got = h.quantile(q).unwrap() as f64;
            assert!((got - want).abs() / want <= 1.0 / 16.0, "q{q}: {got} vs {want}");
        }
        assert_eq!(h.quantile(1.0), Some(10_000));
        assert_eq!(h.min(), Some(1));
        // Small values are exact.
        let mut s = LatencyHist::default();
        for v in [3, 3, 5, 7] {
            s.add(v);
        }
        assert_eq!(s.quantile(0.5), Some(3));
        assert_eq!(s.quantile(0.75), Some(5));
        assert_eq!(LatencyHist::default().quantile(0.5), None);
    }

    #[test]
    fn log2_counts_land_in_their_octave_and_merge() {
        let mut log2 = [0u64; 64];
        log2[11] = 4; // 1024..2048 ns
        let mut h = LatencyHist::default();
        h.add_log2(&log2, 1100, 1900);
        assert_eq!(h.count(), 4);
        let p = h.quantile(0.5).unwrap();
        assert!((1024..2048).contains(&p), "{p}");
        assert_eq!(h.max(), Some(1900));
        let mut g = LatencyHist::default();
        g.add(5);
        g.merge(&h);
        assert_eq!((g.count(), g.min(), g.max()), (5, Some(5), Some(1900)));
    }

    #[test]
    fn sizes_go_to_their_power_of_two() {
        let mut s = SizeHist::default();
        for n in [0, 1, 4095, 4096, 4096, u64::MAX] {
            s.add(n);
        }
        assert_eq!(s.0[0], 1);
        assert_eq!(s.0[1], 1);
        assert_eq!(s.0[12], 1);
        assert_eq!(s.0[13], 2);
        assert_eq!(s.0[64], 1);
        assert_eq!(SizeHist::bucket_bounds(13), (4096, 8191));
        assert_eq!(s.used(), Some((0, 64)));
    }
}
