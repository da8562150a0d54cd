//! The modes of a histogram (FSprof's bi- and tri-modal profiles: page-cache hits, disk
//! reads, lock waits), found automatically, and the time each bucket accounts for (the
//! paper's Figure 2, "total delay of each bucket").
//!
//! A **peak** is a local maximum of the bucket counts whose topographic prominence is large
//! enough: its height minus the higher of the two lowest points that separate it from a
//! higher maximum (or from the end of the histogram) on either side. A maximum is a peak when
//! that prominence is at least [`MIN_RELATIVE_PROMINENCE`] of its height (the valley falls
//! to at most three quarters of the smaller peak: a shoulder is not a mode) and more than
//! two Poisson standard deviations plus one (`2 * sqrt(height) + 1`: a dip made by counting
//! noise is not a valley). Each peak owns the buckets from the valley before it to the one
//! after it (a valley bucket, the lowest between two peaks, starts the right-hand one).

use serde::Serialize;

use crate::{Hist, Scale, BUCKETS};

/// A maximum is a peak when its prominence is at least this share of its height.
pub const MIN_RELATIVE_PROMINENCE: f64 = 0.25;

/// One mode of a histogram.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Peak {
    /// The first non-empty bucket the peak owns.
    pub first_bucket: usize,
    /// The last non-empty bucket the peak owns.
    pub last_bucket: usize,
    /// The peak's highest bucket (the mode).
    pub mode_bucket: usize,
    /// The smallest value the peak's buckets hold: the lower bound of `first_bucket`.
    pub lo: u64,
    /// The largest value the peak's buckets hold: the upper bound of `last_bucket`.
    pub hi: u64,
    /// Calls in the peak's buckets.
    pub count: u64,
    /// `count`'s share of the histogram's calls (0..=1).
    pub calls_share: f64,
    /// The time in ns (or, for a value profile, the sum of values) those buckets account for,
    /// estimated as [`bucket_time`] does.
    pub total: u64,
    /// `total`'s share of the histogram's total (0..=1).
    pub time_share: f64,
}

/// The peaks of `h` in bucket order (none for an empty histogram; one for a unimodal one).
pub fn peaks(h: &Hist, scale: Scale) -> Vec<Peak> {
    let c = &h.buckets;
    let n: u64 = c.iter().fold(0u64, |a, &x| a.saturating_add(x));
    if n == 0 {
        return Vec::new();
    }
    // Local maxima as plateaus [s, e] higher than both neighbours (0 beyond the ends).
    let at = |i: isize| if i < 0 || i as usize >= BUCKETS { 0 } else { c[i as usize] };
    let mut maxima: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < BUCKETS {
        if c[i] == 0 {
            i += 1;
            continue;
        }
        let mut e = i;
        while e + 1 < BUCKETS && c[e + 1] == c[i] {
            e += 1;
        }
        if at(i as isize - 1) < c[i] && at(e as isize + 1) < c[i] {
            maxima.push((i, e));
        }
        i = e + 1;
    }
    // Prominence of each maximum.
    let prominent: Vec<(usize, usize)> = maxima
        .iter()
        .copied()
        .filter(|&(s, e)| {
            let h = c[s];
            let side = |dir: isize| {
                let mut j = if dir < 0 { s as isize - 1 } else { e as isize + 1 };
                let mut low = h;
                loop {
                    let v = at(j);
                    low = low.min(v);
                    if j < 0 || j as usize >= BUCKETS || v > h {
                        return low;
                    }
                    j += dir;
                }
            };
            let col = side(-1).max(side(1));
            let prom = (h - col) as f64;
            let hf = h as f64;
            prom >= MIN_RELATIVE_PROMINENCE * hf && prom > 2.0 * hf.sqrt() + 1.0
        })
        .collect();
    // The tallest maximum is always a peak (a flat histogram's plateau included).
    let prominent = if prominent.is_empty() {
        let top = maxima.iter().copied().max_by_key(|&(s, _)| (c[s], std::cmp::Reverse(s)));
        top.into_iter().collect()
    } else {
        prominent
    };
    // Split at the lowest bucket between consecutive peaks.
    let mut starts = vec![0usize];
    for w in prominent.windows(2) {
        let (a, b) = (w[0].1, w[1].0);
        let valley = (a + 1..b).min_by_key(|&j| c[j]).unwrap_or(b);
        starts.push(valley);
    }
    let times = bucket_time(h, scale);
    let total_time: u128 = times.iter().map(|&t| u128::from(t)).sum();
    prominent
        .iter()
        .enumerate()
        .filter_map(|(p, &(s, e))| {
            let from = starts[p];
            let to = starts.get(p + 1).map_or(BUCKETS, |&x| x);
            let first = (from..to).find(|&j| c[j] > 0)?;
            let last = (from..to).rev().find(|&j| c[j] > 0)?;
            let count: u64 = c[first..=last].iter().fold(0u64, |a, &x| a.saturating_add(x));
            let total: u128 = times[first..=last].iter().map(|&t| u128::from(t)).sum();
            let mode = (s..=e).max_by_key(|&j| c[j]).unwrap_or(s);
            Some(Peak {
                first_bucket: first,
                last_bucket: last,
                mode_bucket: mode,
                lo: scale.bounds(first).0.max(if p == 0 { h.min_ns } else { 0 }),
                hi: scale.bounds(last).1.min(if p + 1 == prominent.len() {
                    h.max_ns
                } else {
                    u64::MAX
                }),
                count,
                calls_share: count as f64 / n as f64,
                total: u64::try_from(total).unwrap_or(u64::MAX),
                time_share: if total_time == 0 { 0.0 } else { total as f64 / total_time as f64 },
            })
        })
        .collect()
}

/// The time each bucket accounts for (count x latency, FSprof's Figure 2): per bucket
/// `count * (lo + t * (hi - lo))` with the bounds clamped to the observed min and max and one
/// `t` in `[0, 1]` for the whole histogram, chosen so that the buckets add up to the measured
/// total (which the check guarantees lies within what the bounds allow). Every estimate lies
/// within its bucket's bounds; their sum is the total, up to rounding.
pub fn bucket_time(h: &Hist, scale: Scale) -> [u64; BUCKETS] {
    let mut out = [0u64; BUCKETS];
    let bounds = |k: usize| {
        let (lo, hi) = scale.bounds(k);
        let lo = lo.max(h.min_ns.min(hi));
        let hi = hi.min(h.max_ns.max(lo));
        (lo as f64, hi as f64)
    };
    let (mut l, mut u) = (0f64, 0f64);
    for (k, &c) in h.buckets.iter().enumerate() {
        if c > 0 {
            let (lo, hi) = bounds(k);
            l += c as f64 * lo;
            u += c as f64 * hi;
        }
    }
    let t = if u > l { ((h.total_ns as f64 - l) / (u - l)).clamp(0.0, 1.0) } else { 0.0 };
    for (k, &c) in h.buckets.iter().enumerate() {
        if c > 0 {
            let (lo, hi) = bounds(k);
            out[k] = (c as f64 * (lo + t * (hi - lo))).round() as u64;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(cells: &[(usize, u64)]) -> Hist {
        let mut h = Hist::default();
        for &(k, n) in cells {
            let (lo, hi) = crate::bucket_bounds(k);
            for i in 0..n {
                h.record(lo + (hi - lo) * (i % 2), false);
            }
        }
        h
    }

    #[test]
    fn bimodal_reads_have_two_peaks() {
        // Page-cache hits around 1 us, disk reads around 100 us, nothing between.
        let h = hist(&[(9, 300), (10, 5000), (11, 800), (12, 40), (16, 30), (17, 400), (18, 90)]);
        let p = peaks(&h, Scale::Log2);
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!((p[0].mode_bucket, p[1].mode_bucket), (10, 17));
        assert_eq!((p[0].first_bucket, p[0].last_bucket), (9, 12));
        assert_eq!((p[1].first_bucket, p[1].last_bucket), (16, 18));
        assert_eq!(p[0].count + p[1].count, h.count);
        // The disk reads are 8% of the calls and most of the time.
        assert!(p[1].calls_share < 0.1 && p[1].time_share > 0.8, "{p:?}");
    }

    #[test]
    fn shoulders_and_noise_are_not_peaks() {
        // A shoulder: 100, 80, 85, 40.
        let h = hist(&[(10, 100), (11, 80), (12, 85), (13, 40)]);
        assert_eq!(peaks(&h, Scale::Log2).len(), 1);
        // One outlier far away is not a mode; ten are.
        let h = hist(&[(10, 1000), (11, 200), (25, 1)]);
        assert_eq!(peaks(&h, Scale::Log2).len(), 1);
        let h = hist(&[(10, 1000), (11, 200), (25, 10)]);
        assert_eq!(peaks(&h, Scale::Log2).len(), 2);
        assert!(peaks(&Hist::default(), Scale::Log2).is_empty());
    }

    #[test]
    fn bucket_times_add_up_within_bounds() {
        let h = hist(&[(5, 7), (10, 100), (20, 3)]);
        let t = bucket_time(&h, Scale::Log2);
        let sum: u64 = t.iter().sum();
        assert!(sum.abs_diff(h.total_ns) <= 3, "{sum} vs {}", h.total_ns);
        for (k, &c) in h.buckets.iter().enumerate() {
            let (lo, hi) = crate::bucket_bounds(k);
            assert!(t[k] >= c * lo && t[k] <= c * hi, "bucket {k}");
        }
    }
}
