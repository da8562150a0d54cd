//! Exact merging of profiles: histograms of the same key in the same interval are added
//! ([`crate::Hist::merge`]); different intervals are kept side by side, or all collapsed into one.

use std::collections::BTreeMap;

use crate::{Error, Interval, Meta, Profile};

/// Add `other`'s histograms and counters into `iv` (same interval).
pub fn merge_interval(iv: &mut Interval, other: &Interval) {
    for (k, h) in &other.hists {
        iv.hists.entry(k.clone()).or_default().merge(h);
    }
    for (k, c) in &other.counters {
        *iv.counters.entry(k.clone()).or_default() += c;
    }
    iv.partial |= other.partial;
    iv.start_ns = iv.start_ns.min(other.start_ns);
    iv.end_ns = iv.end_ns.max(other.end_ns);
}

/// Profiles whose histograms can be added or compared: the same grouping, buckets,
/// sampling and measured value.
pub fn same_measure(a: &str, ma: &Meta, b: &str, mb: &Meta) -> Result<(), Error> {
    if ma.by != mb.by {
        return Err(Error::ByMismatch {
            a: a.into(),
            a_by: ma.by.clone(),
            b: b.into(),
            b_by: mb.by.clone(),
        });
    }
    if ma.buckets != mb.buckets {
        return Err(Error::ScaleMismatch {
            a: a.into(),
            a_buckets: ma.buckets.to_string(),
            b: b.into(),
            b_buckets: mb.buckets.to_string(),
        });
    }
    if ma.sample != mb.sample {
        return Err(Error::SampleMismatch {
            a: a.into(),
            a_n: ma.sample,
            b: b.into(),
            b_n: mb.sample,
        });
    }
    if ma.is_latency() != mb.is_latency() || (!ma.is_latency() && ma.value != mb.value) {
        return Err(Error::ValueMismatch {
            a: a.into(),
            a_what: ma.value.clone(),
            b: b.into(),
            b_what: mb.value.clone(),
        });
    }
    Ok(())
}

/// Merge profiles. `names` label the inputs in errors. Without `total`, the inputs must use
/// the same interval length and grouping; intervals with the same start and end are summed.
/// With `total`, every interval of every input becomes one (interval length 0).
pub fn merge_profiles(profiles: &[(String, Profile)], total: bool) -> Result<Profile, Error> {
    let Some((first_name, first)) = profiles.first() else {
        return Err(Error::NothingToMerge);
    };
    for (name, p) in &profiles[1..] {
        if !total && p.meta.interval_ns != first.meta.interval_ns {
            return Err(Error::IntervalMismatch {
                a: first_name.clone(),
                a_ns: first.meta.interval_ns,
                b: name.clone(),
                b_ns: p.meta.interval_ns,
            });
        }
        same_measure(first_name, &first.meta, name, &p.meta)?;
    }
    let join = |f: fn(&Meta) -> &String| {
        let mut v: Vec<&str> = Vec::new();
        for (_, p) in profiles {
            let s = f(&p.meta).as_str();
            if !s.is_empty() && !v.contains(&s) {
                v.push(s);
            }
        }
        v.join(", ")
    };
    let meta = Meta {
        source: "merge".into(),
        target: join(|m| &m.target),
        interval_ns: if total { 0 } else { first.meta.interval_ns },
        by: first.meta.by.clone(),
        host: join(|m| &m.host),
        kernel: join(|m| &m.kernel),
        overhead: None,
        buckets: first.meta.buckets,
        sample: first.meta.sample,
        value: first.meta.value.clone(),
    };
    let mut out: BTreeMap<(u64, u64), Interval> = BTreeMap::new();
    for (_, p) in profiles {
        for iv in &p.intervals {
            let slot = if total { (0, 0) } else { (iv.start_ns, iv.end_ns) };
            match out.get_mut(&slot) {
                Some(acc) => merge_interval(acc, iv),
                None => {
                    out.insert(slot, iv.clone());
                }
            }
        }
    }
    Ok(Profile { meta, intervals: out.into_values().collect() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::Accumulator;
    use crate::{Hist, Key};
    use proptest::prelude::*;

    fn key(op: &str) -> Key {
        Key { layer: "syscall".into(), op: op.into(), group: String::new() }
    }

    fn profile(ops: &[(u64, u64, bool)], interval_ns: u64) -> Profile {
        let mut acc = Accumulator::new(interval_ns);
        for &(t, ns, w) in ops {
            acc.add(t, key(if w { "write" } else { "read" }), ns, false);
        }
        Profile {
            meta: Meta { interval_ns, by: "call".into(), ..Meta::default() },
            intervals: acc.finish(),
        }
    }

    fn hists(p: &Profile) -> BTreeMap<(u64, Key), Hist> {
        let mut m = BTreeMap::new();
        for iv in &p.intervals {
            for (k, h) in &iv.hists {
                m.insert((iv.start_ns, k.clone()), h.clone());
            }
        }
        m
    }

    proptest! {
        /// Random operations split in two at any point: the merged halves equal the whole,
        /// per interval and in total.
        #[test]
        fn merged_halves_equal_the_whole(
            mut ops in proptest::collection::vec((0u64..10_000_000_000, 0u64..1u64 << 40, any::<bool>()), 1..300),
            cut in 0usize..300,
        ) {
            ops.sort_by_key(|o| o.0);
            let cut = cut.min(ops.len());
            for interval_ns in [0u64, 1_000_000_000] {
                let whole = profile(&ops, interval_ns);
                let a = profile(&ops[..cut], interval_ns);
                let b = profile(&ops[cut..], interval_ns);
                let m = merge_profiles(&[("a".into(), a.clone()), ("b".into(), b.clone())], false).unwrap();
                if interval_ns > 0 {
                    prop_assert_eq!(hists(&m), hists(&whole));
                }
                let t = merge_profiles(&[("a".into(), a), ("b".into(), b)], true).unwrap();
                let tw = merge_profiles(&[("w".into(), whole)], true).unwrap();
                prop_assert_eq!(&t.intervals[0].hists, &tw.intervals[0].hists);
            }
        }
    }

    #[test]
    fn mismatched_intervals_are_refused() {
        let a = profile(&[(1, 1, false)], 1_000_000_000);
        let b = profile(&[(1, 1, false)], 2_000_000_000);
        let e =
            merge_profiles(&[("a.json".into(), a.clone()), ("b.json".into(), b.clone())], false)
                .unwrap_err();
        assert!(e.to_string().contains("a.json"), "{e}");
        assert!(merge_profiles(&[("a".into(), a), ("b".into(), b)], true).is_ok());
    }
}
