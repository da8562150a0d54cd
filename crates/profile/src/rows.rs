//! Compute what the printers show: summaries of histograms and the rows of bcc's log2 layout.
//! Nothing here prints; `text` and `svg` only lay these values out (house rule: compute, print
//! and serialise are separate).

use crate::{Check, Hist, Interval, Key, Scale, BUCKETS};

/// The figures of one histogram that every output shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Operations counted ([`Hist::count`]).
    pub count: u64,
    /// Operations that failed ([`Hist::errors`]).
    pub errors: u64,
    /// Total latency in ns (for a value profile, the sum of the values).
    pub total_ns: u64,
    /// `total_ns / count` (0 when empty).
    pub avg_ns: u64,
    /// 0 when empty (the model's `u64::MAX` is not shown).
    pub min_ns: u64,
    /// The median, estimated from the buckets ([`Hist::quantile_in`]); 0 when empty.
    pub p50_ns: u64,
    /// The 90th percentile, estimated from the buckets; 0 when empty.
    pub p90_ns: u64,
    /// The 99th percentile, estimated from the buckets; 0 when empty.
    pub p99_ns: u64,
    /// The largest latency (0 when empty).
    pub max_ns: u64,
    /// The histogram's self-check in its scale ([`Hist::check_in`]).
    pub check: Check,
}

/// The summary of a log2 histogram.
pub fn summary(h: &Hist) -> Summary {
    summary_in(h, Scale::Log2)
}

/// The summary of a histogram in the buckets of `scale`.
pub fn summary_in(h: &Hist, scale: Scale) -> Summary {
    Summary {
        count: h.count,
        errors: h.errors,
        total_ns: h.total_ns,
        avg_ns: h.total_ns.checked_div(h.count).unwrap_or(0),
        min_ns: if h.count == 0 { 0 } else { h.min_ns },
        p50_ns: h.quantile_in(scale, 0.50),
        p90_ns: h.quantile_in(scale, 0.90),
        p99_ns: h.quantile_in(scale, 0.99),
        max_ns: h.max_ns,
        check: h.check_in(scale),
    }
}

/// One row of bcc's `print_log2_hist`: `lo -> hi : count |stars|`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistRow {
    /// The bucket's index in the scale.
    pub bucket: usize,
    /// The smallest value the bucket holds (bcc's `lo`), inclusive.
    pub lo_ns: u64,
    /// The largest value the bucket holds (bcc's `hi`), inclusive.
    pub hi_ns: u64,
    /// The bucket's count, or with `--weight time` the time it accounts for (ns).
    pub count: u64,
    /// Stars drawn: `count * stars_width / max_count`, rounded down (bcc's `print_stars`).
    pub stars: usize,
}

/// The rows of a histogram in bcc's layout, with the widths bcc chooses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistRows {
    /// One row per bucket from the first to the last non-empty one; none for an empty
    /// histogram.
    pub rows: Vec<HistRow>,
    /// Width of the `lo` and `hi` columns: 10, or 20 once the last bucket is past 32 (as
    /// libbpf-tools' trace_helpers.c does).
    pub value_width: usize,
    /// Width of the star bar: 40, or 20 with the wide columns.
    pub stars_width: usize,
}

/// What a histogram's rows and bars show: calls per bucket, or the time they took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Weight {
    /// Calls per bucket (the default, `--weight count`).
    #[default]
    Count,
    /// `--weight time`: count x latency per bucket ([`crate::peaks::bucket_time`]).
    Time,
}

impl Weight {
    /// Parse `--weight`'s value: `count` or `time`; anything else is an error message naming
    /// both.
    pub fn parse(s: &str) -> Result<Weight, String> {
        match s {
            "count" => Ok(Weight::Count),
            "time" => Ok(Weight::Time),
            _ => Err(format!("--weight {s}: give count or time")),
        }
    }
}

/// The values a histogram's rows show under `weight`.
pub fn weighted(h: &Hist, scale: Scale, weight: Weight) -> [u64; BUCKETS] {
    match weight {
        Weight::Count => h.buckets,
        Weight::Time => crate::peaks::bucket_time(h, scale),
    }
}

/// The rows from the first to the last non-empty bucket (empty leading and trailing buckets
/// are left out, empty buckets between them are shown). No rows for an empty histogram.
pub fn hist_rows(buckets: &[u64; BUCKETS]) -> HistRows {
    hist_rows_in(buckets, Scale::Log2)
}

/// [`hist_rows`] for the buckets of `scale` (`values` are counts or times per bucket).
pub fn hist_rows_in(buckets: &[u64; BUCKETS], scale: Scale) -> HistRows {
    let first = buckets.iter().position(|&c| c > 0);
    let last = buckets.iter().rposition(|&c| c > 0);
    let (Some(first), Some(last)) = (first, last) else {
        return HistRows { rows: Vec::new(), value_width: 10, stars_width: 40 };
    };
    let wide = match scale {
        Scale::Log2 => last > 32,
        _ => scale.bounds(last).1 >= 10_000_000_000,
    };
    let (value_width, stars_width) = if wide { (20, 20) } else { (10, 40) };
    let max = buckets.iter().copied().max().unwrap_or(1).max(1);
    let rows = (first..=last)
        .map(|k| {
            let (lo_ns, hi_ns) = scale.bounds(k);
            let count = buckets[k];
            let stars = (u128::from(count) * stars_width as u128 / u128::from(max)) as usize;
            HistRow { bucket: k, lo_ns, hi_ns, count, stars }
        })
        .collect();
    HistRows { rows, value_width, stars_width }
}

/// The value below which the share `q` of `weights` (per bucket) lies: linear within the
/// bucket that holds it, its bounds clamped to the histogram's min and max.
pub fn weighted_quantile(weights: &[u64; BUCKETS], h: &Hist, scale: Scale, q: f64) -> u64 {
    let sum: f64 = weights.iter().map(|&w| w as f64).sum();
    if sum <= 0.0 {
        return 0;
    }
    let want = q.clamp(0.0, 1.0) * sum;
    let mut seen = 0.0;
    for (k, &w) in weights.iter().enumerate() {
        if w == 0 {
            continue;
        }
        let wf = w as f64;
        if seen + wf >= want {
            let (lo, hi) = scale.bounds(k);
            let (lo, hi) = (lo.max(h.min_ns.min(hi)), hi.min(h.max_ns.max(lo)));
            let frac = ((want - seen) / wf).clamp(0.0, 1.0);
            return lo.saturating_add(((hi - lo) as f64 * frac) as u64).min(hi);
        }
        seen += wf;
    }
    h.max_ns
}

/// Keys of a set of histograms ordered by total time, largest first (ties by key).
pub fn keys_by_total<'a>(hists: impl Iterator<Item = (&'a Key, &'a Hist)>) -> Vec<&'a Key> {
    let mut v: Vec<(&Key, u64)> = hists.map(|(k, h)| (k, h.total_ns)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v.into_iter().map(|(k, _)| k).collect()
}

/// An interval's consistency: how many histograms pass and fail their checks.
pub fn interval_checks(iv: &Interval) -> (usize, usize) {
    interval_checks_in(iv, Scale::Log2)
}

/// [`interval_checks`] in the buckets of `scale`.
pub fn interval_checks_in(iv: &Interval, scale: Scale) -> (usize, usize) {
    let failed = iv.hists.values().filter(|h| !h.check_in(scale).ok).count();
    (iv.hists.len() - failed, failed)
}

/// A latency for people: `850 ns`, `12.3 us`, `4.56 ms`, `1.23 s`.
pub fn human_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} us", f / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", f / 1e6)
    } else {
        format!("{:.2} s", f / 1e9)
    }
}

/// A value for people in `unit`: latencies as [`human_ns`], sizes as `4.0 KiB`, counts
/// as they are.
pub fn human(v: u64, unit: &str) -> String {
    match unit {
        "ns" => human_ns(v),
        "bytes" => {
            let f = v as f64;
            if v < 1 << 10 {
                format!("{v} B")
            } else if v < 1 << 20 {
                format!("{:.1} KiB", f / 1024.0)
            } else if v < 1 << 30 {
                format!("{:.1} MiB", f / 1048576.0)
            } else {
                format!("{:.2} GiB", f / 1073741824.0)
            }
        }
        _ => v.to_string(),
    }
}

/// A short axis label for a bucket's lower bound: `512ns`, `1us`, `33us`, `1ms`, `1s`.
pub fn short_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.0}us", f / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.0}ms", f / 1e6)
    } else {
        format!("{:.0}s", f / 1e9)
    }
}

/// The live profiler's page-cache estimate for reads: the share of the pages reads asked for
/// that were already cached, `1 - pages added during reads / pages asked for` (read-ahead
/// pages count as misses of the read that triggered them), clamped to `[0, 1]`. `None`
/// without the counters or when reads asked for nothing.
pub fn read_hit_ratio(counters: &std::collections::BTreeMap<String, u64>) -> Option<f64> {
    let asked = *counters.get("page_cache.read_pages_requested")?;
    let added = *counters.get("page_cache.read_pages_added")?;
    if asked == 0 {
        return None;
    }
    Some((1.0 - added as f64 / asked as f64).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_trim_and_scale_like_bcc() {
        let mut b = [0u64; BUCKETS];
        b[3] = 10;
        b[5] = 40;
        b[6] = 1;
        let r = hist_rows(&b);
        assert_eq!(r.rows.len(), 4);
        assert_eq!((r.rows[0].lo_ns, r.rows[0].hi_ns, r.rows[0].stars), (4, 7, 10));
        assert_eq!((r.rows[1].count, r.rows[1].stars), (0, 0));
        assert_eq!(r.rows[2].stars, 40);
        assert_eq!(r.rows[3].stars, 1);
        assert!(hist_rows(&[0; BUCKETS]).rows.is_empty());
        b[40] = 1;
        assert_eq!((hist_rows(&b).value_width, hist_rows(&b).stars_width), (20, 20));
    }

    #[test]
    fn labels() {
        assert_eq!(short_ns(1024), "1us");
        assert_eq!(short_ns(1 << 20), "1ms");
        assert_eq!(short_ns(1 << 30), "1s");
        assert_eq!(human_ns(1500), "1.5 us");
    }
}
