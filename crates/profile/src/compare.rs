//! Comparing two profiles (FSprof section 5.1.3: Wrapfs against Ext2; 5.2: one workload
//! against another): per key, the change in count, total and quantiles, bucket by bucket,
//! and a test of whether the two latency distributions differ, so that noise is not reported
//! as a change.
//!
//! The test is the chi-square test of homogeneity on the two histograms' bucket counts
//! ([`crate::stats::homogeneity`]: adjacent buckets merged until every expected count is at
//! least 5). A key **differs** when its p-value is below `alpha / m` (Bonferroni over the `m`
//! keys tested, so that the chance of calling any key of an unchanged profile changed stays
//! below `alpha`) *and* at least `min_shift` of its calls moved bucket (total variation
//! distance): with hundreds of thousands of calls the test alone calls every run-to-run
//! wobble significant, and a distribution that moved by less than that is not a change a
//! person acts on. Computation only; `text`, `json` and `svg` lay the result out.

use std::collections::{BTreeMap, BTreeSet};

use crate::rows::{summary_in, Summary};
use crate::stats::{homogeneity, Homogeneity};
use crate::{Error, Hist, Interval, Key, Meta, Profile, BUCKETS};

/// The thresholds of the verdict.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// The family-wise false-alarm rate (default 0.01).
    pub alpha: f64,
    /// The least share of calls that must move bucket (default 0.2: repeated runs of one
    /// workload on a busy machine moved up to 13.5% of their calls, docs/PROFILE.md).
    pub min_shift: f64,
    /// Compare interval `i` of A with interval `i` of B (by position from each profile's
    /// start) instead of the whole profiles.
    pub per_interval: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions { alpha: 0.01, min_shift: 0.2, per_interval: false }
    }
}

/// What the comparison says of one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The distributions differ (significant and material).
    Differs,
    /// No difference beyond noise (or too small to matter).
    Same,
    /// Too few calls on one side to test.
    TooFew,
    /// The key is in profile A only.
    OnlyA,
    /// The key is in profile B only.
    OnlyB,
}

impl Verdict {
    /// The verdict as the text report and the SVG print it (`DIFFERS`, `same`, `only in A`,
    /// ...); the JSON spells the variant in snake case instead (`differs`, `only_a`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Differs => "DIFFERS",
            Verdict::Same => "same",
            Verdict::TooFew => "too few calls to test",
            Verdict::OnlyA => "only in A",
            Verdict::OnlyB => "only in B",
        }
    }
}

/// One bucket of both histograms.
#[derive(Clone, Debug, PartialEq)]
pub struct BucketDiff {
    /// The bucket's index in the profiles' scale ([`crate::Meta::buckets`]).
    pub bucket: usize,
    /// The smallest value the bucket holds (ns for a latency profile), inclusive.
    pub lo: u64,
    /// The largest value the bucket holds, inclusive.
    pub hi: u64,
    /// A's count in the bucket.
    pub a: u64,
    /// B's count in the bucket.
    pub b: u64,
    /// A's share of its calls in the bucket (0..=1; 0 when A has none).
    pub a_share: f64,
    /// B's share of its calls in the bucket (0..=1; 0 when B has none).
    pub b_share: f64,
}

/// One key compared.
#[derive(Clone, Debug)]
pub struct KeyDiff {
    /// The key compared.
    pub key: Key,
    /// With `per_interval`: the interval's position (0 = each profile's first).
    pub interval: Option<usize>,
    /// A's histogram of the key (over the whole profile, or the interval); empty when A
    /// lacks the key.
    pub a: Hist,
    /// B's histogram of the key; empty when B lacks it.
    pub b: Hist,
    /// The summary (count, total, quantiles) of `a`.
    pub sa: Summary,
    /// The summary of `b`.
    pub sb: Summary,
    /// The buckets from the first to the last non-empty one on either side.
    pub buckets: Vec<BucketDiff>,
    /// The chi-square test of homogeneity on the two histograms, with the share of calls
    /// that moved bucket (`shift`).
    pub test: Homogeneity,
    /// What the test and the thresholds say.
    pub verdict: Verdict,
}

/// Two profiles compared.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The label of profile A, as given to [`compare`] (a file name).
    pub a_name: String,
    /// The label of profile B.
    pub b_name: String,
    /// A's description.
    pub a_meta: Meta,
    /// B's description.
    pub b_meta: Meta,
    /// The thresholds the verdicts were reached with.
    pub opts: CompareOptions,
    /// Keys tested (with at least one degree of freedom) and the p-value threshold each
    /// had to pass: `alpha / tested`.
    pub tested: usize,
    /// The p-value a tested key had to fall below: `alpha / tested` (`alpha` when none was
    /// tested).
    pub threshold: f64,
    /// Differing keys first, then by interval position, then by the size of the change in
    /// total latency (largest first).
    pub keys: Vec<KeyDiff>,
}

/// (interval position, totals of A, totals of B): one comparison unit.
type Unit = (Option<usize>, BTreeMap<Key, Hist>, BTreeMap<Key, Hist>);

fn layers(p: &Profile) -> BTreeSet<String> {
    p.intervals.iter().flat_map(|iv| iv.hists.keys().map(|k| k.layer.clone())).collect()
}

fn totals<'a>(ivs: impl Iterator<Item = &'a Interval>) -> BTreeMap<Key, Hist> {
    let mut m: BTreeMap<Key, Hist> = BTreeMap::new();
    for iv in ivs {
        for (k, h) in &iv.hists {
            m.entry(k.clone()).or_default().merge(h);
        }
    }
    m
}

/// Compare profile `b` against `a`. Refused (one line each): different groupings, buckets,
/// sampling or measured values (the histograms would not mean the same), different layer
/// sets, and, per interval, different interval lengths.
pub fn compare(
    a_name: &str,
    a: &Profile,
    b_name: &str,
    b: &Profile,
    opts: &CompareOptions,
) -> Result<Comparison, Error> {
    crate::merge::same_measure(a_name, &a.meta, b_name, &b.meta)?;
    let (la, lb) = (layers(a), layers(b));
    if la != lb && !la.is_empty() && !lb.is_empty() {
        let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(",");
        return Err(Error::LayerMismatch {
            a: a_name.into(),
            a_layers: join(&la),
            b: b_name.into(),
            b_layers: join(&lb),
        });
    }
    if opts.per_interval && a.meta.interval_ns != b.meta.interval_ns {
        return Err(Error::IntervalMismatch {
            a: a_name.into(),
            a_ns: a.meta.interval_ns,
            b: b_name.into(),
            b_ns: b.meta.interval_ns,
        });
    }
    let scale = a.meta.buckets;
    // (interval position, totals of A, totals of B) per comparison unit.
    let units: Vec<Unit> = if opts.per_interval {
        (0..a.intervals.len().max(b.intervals.len()))
            .map(|i| {
                (
                    Some(i),
                    totals(a.intervals.get(i).into_iter()),
                    totals(b.intervals.get(i).into_iter()),
                )
            })
            .collect()
    } else {
        vec![(None, totals(a.intervals.iter()), totals(b.intervals.iter()))]
    };
    let mut keys = Vec::new();
    for (pos, ta, tb) in units {
        let all: BTreeSet<&Key> = ta.keys().chain(tb.keys()).collect();
        for k in all {
            let ha = ta.get(k).cloned().unwrap_or_default();
            let hb = tb.get(k).cloned().unwrap_or_default();
            let test = homogeneity(&ha.buckets, &hb.buckets);
            let first = (0..BUCKETS)
                .find(|&i| ha.buckets[i].saturating_add(hb.buckets[i]) > 0)
                .unwrap_or(0);
            let last = (0..BUCKETS)
                .rev()
                .find(|&i| ha.buckets[i].saturating_add(hb.buckets[i]) > 0)
                .unwrap_or(0);
            let share = |h: &Hist, i: usize| {
                let n: u128 = h.buckets.iter().map(|&x| u128::from(x)).sum();
                if n == 0 {
                    0.0
                } else {
                    h.buckets[i] as f64 / n as f64
                }
            };
            let buckets = (first..=last)
                .map(|i| {
                    let (lo, hi) = scale.bounds(i);
                    BucketDiff {
                        bucket: i,
                        lo,
                        hi,
                        a: ha.buckets[i],
                        b: hb.buckets[i],
                        a_share: share(&ha, i),
                        b_share: share(&hb, i),
                    }
                })
                .collect();
            let verdict = if ha.count == 0 && !ta.contains_key(k) {
                Verdict::OnlyB
            } else if hb.count == 0 && !tb.contains_key(k) {
                Verdict::OnlyA
            } else if test.df == 0 {
                Verdict::TooFew
            } else {
                Verdict::Same // decided below, once the number of tests is known
            };
            keys.push(KeyDiff {
                key: k.clone(),
                interval: pos,
                sa: summary_in(&ha, scale),
                sb: summary_in(&hb, scale),
                a: ha,
                b: hb,
                buckets,
                test,
                verdict,
            });
        }
    }
    let tested = keys.iter().filter(|k| k.verdict == Verdict::Same).count();
    let threshold = opts.alpha / tested.max(1) as f64;
    for k in &mut keys {
        if k.verdict == Verdict::Same && k.test.p < threshold && k.test.shift >= opts.min_shift {
            k.verdict = Verdict::Differs;
        }
    }
    let change = |k: &KeyDiff| k.sa.total_ns.abs_diff(k.sb.total_ns);
    keys.sort_by(|x, y| {
        (y.verdict == Verdict::Differs)
            .cmp(&(x.verdict == Verdict::Differs))
            .then_with(|| x.interval.cmp(&y.interval))
            .then_with(|| change(y).cmp(&change(x)))
            .then_with(|| x.key.cmp(&y.key))
    });
    Ok(Comparison {
        a_name: a_name.into(),
        b_name: b_name.into(),
        a_meta: a.meta.clone(),
        b_meta: b.meta.clone(),
        opts: opts.clone(),
        tested,
        threshold,
        keys,
    })
}

/// A relative change in percent, `None` from zero.
pub fn percent(a: u64, b: u64) -> Option<f64> {
    (a > 0).then(|| (b as f64 - a as f64) / a as f64 * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::Accumulator;

    fn profile(lat: &[(u64, u64)], layer: &str) -> Profile {
        let mut acc = Accumulator::new(0);
        let mut t = 1_000_000u64;
        for &(ns, n) in lat {
            for i in 0..n {
                t += 1000;
                // A spread inside the bucket, so the distributions are not single points.
                let v = ns + (i * 7919) % (ns / 2).max(1);
                acc.add(
                    t,
                    Key { layer: layer.into(), op: "read".into(), group: String::new() },
                    v,
                    false,
                );
            }
        }
        Profile { meta: Meta { by: "call".into(), ..Meta::default() }, intervals: acc.finish() }
    }

    #[test]
    fn a_shift_differs_and_a_resample_does_not() {
        let a = profile(&[(1000, 4000), (100_000, 500)], "syscall");
        let same = profile(&[(1000, 4100), (100_000, 480)], "syscall");
        let slower = profile(&[(1000, 2500), (100_000, 2000)], "syscall");
        let o = CompareOptions::default();
        let c = compare("a", &a, "b", &same, &o).unwrap();
        assert_eq!(c.keys[0].verdict, Verdict::Same, "{:?}", c.keys[0].test);
        let c = compare("a", &a, "b", &slower, &o).unwrap();
        assert_eq!(c.keys[0].verdict, Verdict::Differs, "{:?}", c.keys[0].test);
        assert!(c.keys[0].sb.total_ns > c.keys[0].sa.total_ns);
        let sa: u64 = c.keys[0].buckets.iter().map(|b| b.a).sum();
        assert_eq!(sa, 4500);
    }

    #[test]
    fn mismatches_are_refused() {
        let a = profile(&[(1000, 10)], "syscall");
        let b = profile(&[(1000, 10)], "fs");
        let e = compare("a.json", &a, "b.json", &b, &CompareOptions::default()).unwrap_err();
        assert!(e.to_string().contains("layers differ"), "{e}");
        let mut c = a.clone();
        c.meta.interval_ns = 1_000_000_000;
        let o = CompareOptions { per_interval: true, ..CompareOptions::default() };
        let e = compare("a", &a, "c", &c, &o).unwrap_err();
        assert!(e.to_string().contains("interval lengths differ"), "{e}");
        c.meta.buckets = crate::Scale::Log10;
        let e = compare("a", &a, "c", &c, &CompareOptions::default()).unwrap_err();
        assert!(e.to_string().contains("buckets differ"), "{e}");
    }
}
