//! Correlation over time (FSprof section 5.1.2: Reiserfs's write_super and the slow reads
//! that wait for its lock, every 5 seconds): for two keys, how their per-interval counts,
//! mean latencies and total times move together, as Pearson's r over the profile's
//! intervals, and the aligned series to draw. [`ranked`] finds the most strongly correlated
//! pairs of a profile.
//!
//! Counts and total times are compared over every interval (an interval without the key
//! counts 0); mean latencies over the intervals in which both keys have calls. The total
//! time is what shows a lock: the holder's long calls and the waiters' slow ones land in the
//! same intervals. A coefficient needs at least
//! 3 points, and [`ranked`] considers only pairs with at least [`MIN_RANKED_POINTS`].

use std::collections::BTreeSet;

use crate::stats::pearson;
use crate::{Error, Key, Profile};

/// Points a pair needs to be ranked (fewer make large coefficients by chance).
pub const MIN_RANKED_POINTS: usize = 5;

/// One key's per-interval series.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The key the series are of.
    pub key: Key,
    /// Calls per interval, one value per interval of the profile (0 where the key has none).
    pub counts: Vec<u64>,
    /// `total / count` per interval (`None` without calls).
    pub mean_ns: Vec<Option<u64>>,
    /// The total time per interval.
    pub total_ns: Vec<u64>,
}

/// A pair of keys correlated.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    /// The first key's series.
    pub a: Series,
    /// The second key's series.
    pub b: Series,
    /// Interval start times (ns since the epoch), the series' x axis.
    pub starts: Vec<u64>,
    /// r of the counts over every interval.
    pub r_count: Option<f64>,
    /// r of the mean latencies over the intervals both have calls in (`None` with fewer
    /// than 3 such intervals, or when a series does not vary).
    pub r_latency: Option<f64>,
    /// How many intervals `r_latency` was computed over: those in which both keys have calls.
    pub latency_points: usize,
    /// r of the total times over every interval.
    pub r_time: Option<f64>,
}

impl Pair {
    /// The largest of the coefficients in absolute value.
    pub fn strength(&self) -> f64 {
        [self.r_count, self.r_latency, self.r_time]
            .iter()
            .map(|r| r.unwrap_or(0.0).abs())
            .fold(0.0, f64::max)
    }
}

/// The per-interval series of `key`.
pub fn series(p: &Profile, key: &Key) -> Series {
    let mut counts = Vec::with_capacity(p.intervals.len());
    let mut mean_ns = Vec::with_capacity(p.intervals.len());
    let mut total_ns = Vec::with_capacity(p.intervals.len());
    for iv in &p.intervals {
        match iv.hists.get(key) {
            Some(h) if h.count > 0 => {
                counts.push(h.count);
                mean_ns.push(Some(h.total_ns / h.count));
                total_ns.push(h.total_ns);
            }
            _ => {
                counts.push(0);
                mean_ns.push(None);
                total_ns.push(0);
            }
        }
    }
    Series { key: key.clone(), counts, mean_ns, total_ns }
}

/// Correlate two keys of a profile.
pub fn correlate(p: &Profile, a: &Key, b: &Key) -> Pair {
    pair(p, series(p, a), series(p, b))
}

fn pair(p: &Profile, a: Series, b: Series) -> Pair {
    let f = |v: &[u64]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    let r_count = pearson(&f(&a.counts), &f(&b.counts));
    let (mut xa, mut xb) = (Vec::new(), Vec::new());
    for (x, y) in a.mean_ns.iter().zip(&b.mean_ns) {
        if let (Some(x), Some(y)) = (x, y) {
            xa.push(*x as f64);
            xb.push(*y as f64);
        }
    }
    let r_latency = pearson(&xa, &xb);
    let r_time = pearson(&f(&a.total_ns), &f(&b.total_ns));
    Pair {
        r_time,
        starts: p.intervals.iter().map(|iv| iv.start_ns).collect(),
        r_count,
        r_latency,
        latency_points: xa.len(),
        a,
        b,
    }
}

/// The `top` most strongly correlated pairs (by [`Pair::strength`]) among keys with calls in
/// at least [`MIN_RANKED_POINTS`] intervals. Keys of the `class` layer (sums of the system
/// calls) are paired only with each other: a call and its own class move together by
/// construction.
pub fn ranked(p: &Profile, top: usize) -> Vec<Pair> {
    let keys: BTreeSet<&Key> = p.intervals.iter().flat_map(|iv| iv.hists.keys()).collect();
    let all: Vec<Series> = keys
        .into_iter()
        .map(|k| series(p, k))
        .filter(|s| s.counts.iter().filter(|&&c| c > 0).count() >= MIN_RANKED_POINTS)
        .collect();
    let mut pairs = Vec::new();
    for i in 0..all.len() {
        for j in i + 1..all.len() {
            if (all[i].key.layer == "class") != (all[j].key.layer == "class") {
                continue;
            }
            let pr = pair(p, all[i].clone(), all[j].clone());
            let enough = p.intervals.len() >= MIN_RANKED_POINTS;
            if enough
                && (pr.r_count.is_some()
                    || pr.r_time.is_some()
                    || pr.latency_points >= MIN_RANKED_POINTS)
            {
                pairs.push(pr);
            }
        }
    }
    pairs.sort_by(|x, y| y.strength().total_cmp(&x.strength()).then_with(|| x.a.key.cmp(&y.a.key)));
    pairs.truncate(top);
    pairs
}

/// A key written `layer:op` or `layer:op@group` (`syscall:read`, `writeback:single_inode@ext4
/// /dev/vda on /`), found in `p`. Without `@group`, the key without a group, or the only key
/// of that layer and op.
pub fn parse_key(spec: &str, p: &Profile) -> Result<Key, Error> {
    let (lo, group) = match spec.split_once('@') {
        Some((lo, g)) => (lo, Some(g)),
        None => (spec, None),
    };
    let Some((layer, op)) = lo.split_once(':') else {
        return Err(Error::BadKey(format!(
            "--correlate: `{spec}` is not a key: write layer:op or layer:op@group (e.g. \
             syscall:read)"
        )));
    };
    let keys: BTreeSet<&Key> = p.intervals.iter().flat_map(|iv| iv.hists.keys()).collect();
    let matching: Vec<&&Key> = keys
        .iter()
        .filter(|k| k.layer == layer && k.op == op && group.is_none_or(|g| k.group == g))
        .collect();
    let exact = matching.iter().find(|k| k.group.is_empty());
    match (matching.len(), exact) {
        (1, _) => Ok((**matching[0]).clone()),
        (_, Some(k)) if group.is_none() => Ok((**k).clone()),
        (0, _) => {
            let known: Vec<String> =
                keys.iter().take(12).map(|k| format!("{}:{}", k.layer, k.op)).collect();
            Err(Error::BadKey(format!(
                "--correlate: the profile has no key {spec} (it has {}{})",
                known.join(", "),
                if keys.len() > 12 { ", ..." } else { "" }
            )))
        }
        (n, _) => Err(Error::BadKey(format!(
            "--correlate: {spec} names {n} keys (one per group): add @GROUP, e.g. {}:{}@{}",
            layer, op, matching[0].group
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hist, Interval};

    fn key(op: &str) -> Key {
        Key { layer: "syscall".into(), op: op.into(), group: String::new() }
    }

    #[test]
    fn a_periodic_stall_correlates_with_slow_reads() {
        // Every 5th interval a write_super-like call; the reads in those intervals are slow.
        let mut p = Profile::default();
        for i in 0..40u64 {
            let mut iv = Interval { start_ns: i * 1_000_000_000, ..Interval::default() };
            let mut r = Hist::default();
            let stall = i % 5 == 0;
            for j in 0..100 {
                r.record(if stall { 500_000 + j } else { 2_000 + j * 3 }, false);
            }
            iv.hists.insert(key("read"), r);
            if stall {
                let mut w = Hist::default();
                w.record(400_000_000, false);
                iv.hists.insert(key("write_super"), w);
            }
            let mut o = Hist::default();
            // Alternating, independent of the period of 5: r is 0.
            o.record(1000 + (i % 2) * 300, false);
            iv.hists.insert(key("other"), o);
            p.intervals.push(iv);
        }
        let pr = correlate(&p, &key("read"), &key("write_super"));
        assert_eq!(pr.latency_points, 8);
        // Reads are as many in every interval (no coefficient of counts); their time moves
        // with write_super's.
        assert_eq!(pr.r_count, None);
        assert!(pr.r_time.unwrap() > 0.99, "{pr:?}");
        let ranked = ranked(&p, 5);
        let top = &ranked[0];
        assert_eq!((top.a.key.op.as_str(), top.b.key.op.as_str()), ("read", "write_super"));
        assert!(top.strength() > 0.99, "{top:?}");
        // "other" moves at random.
        let o = correlate(&p, &key("other"), &key("write_super"));
        assert!(o.strength() < 0.5, "{o:?}");
        assert!(parse_key("syscall:read", &p).is_ok());
        assert!(parse_key("read", &p).unwrap_err().to_string().contains("layer:op"));
        assert!(parse_key("syscall:nope", &p).unwrap_err().to_string().contains("no key"));
    }
}
