//! JSON Lines profiles (docs/PROFILE.md, "JSON"): a `meta` line, then per interval an
//! `interval` line, one `hist` line per key and a `counters` line when it has counters.
//! [`read_profile`] parses them back into exactly the [`Interval`]s that were written.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde_json::{json, Map, Value};

use crate::rows::{summary_in, Weight};
use crate::{Error, Hist, Interval, Key, Meta, Profile, Scale, BUCKETS};

/// The schema version written in the meta line.
pub const VERSION: u64 = 1;

/// The meta line.
pub fn meta_value(m: &Meta) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or_else(|_| json!({}));
    if let Value::Object(o) = &mut v {
        let mut head = Map::new();
        head.insert("type".into(), json!("meta"));
        head.insert("version".into(), json!(VERSION));
        head.append(o);
        *o = head;
    }
    v
}

/// One interval's lines: `interval`, then `hist` per key, then `counters` if any.
pub fn interval_values(iv: &Interval) -> Vec<Value> {
    interval_values_in(iv, Scale::Log2, Weight::Count)
}

/// [`interval_values`] for a profile binned by `scale`; with `Weight::Time` each `hist` line
/// also has `time_buckets`.
pub fn interval_values_in(iv: &Interval, scale: Scale, weight: Weight) -> Vec<Value> {
    let mut out = Vec::with_capacity(iv.hists.len() + 2);
    out.push(json!({
        "type": "interval", "start_ns": iv.start_ns, "end_ns": iv.end_ns,
        "partial": iv.partial, "hists": iv.hists.len(),
    }));
    for (k, h) in &iv.hists {
        out.push(hist_value_in(iv, k, h, scale, weight));
    }
    if !iv.counters.is_empty() {
        out.push(json!({
            "type": "counters", "start_ns": iv.start_ns, "end_ns": iv.end_ns,
            "partial": iv.partial, "counters": iv.counters,
        }));
    }
    out
}

/// One `hist` line. Buckets are trimmed to the non-empty range: `buckets[i]` is bucket
/// `first_bucket + i`.
pub fn hist_value(iv: &Interval, k: &Key, h: &Hist) -> Value {
    hist_value_in(iv, k, h, Scale::Log2, Weight::Count)
}

/// One `hist` line of a profile binned by `scale`, with its `peaks`, and `time_buckets`
/// (aligned with `buckets`) under `Weight::Time`.
pub fn hist_value_in(iv: &Interval, k: &Key, h: &Hist, scale: Scale, weight: Weight) -> Value {
    let s = summary_in(h, scale);
    let first = h.buckets.iter().position(|&c| c > 0).unwrap_or(0);
    let last = h.buckets.iter().rposition(|&c| c > 0).map_or(first, |l| l + 1);
    let peaks = crate::peaks::peaks(h, scale);
    let mut v = json!({
        "type": "hist", "start_ns": iv.start_ns, "end_ns": iv.end_ns, "partial": iv.partial,
        "layer": k.layer, "op": k.op, "group": k.group,
        "count": h.count, "errors": h.errors, "total_ns": h.total_ns,
        "min_ns": if h.count == 0 && h.min_ns == u64::MAX { Value::Null } else { json!(h.min_ns) },
        "max_ns": h.max_ns,
        "p50_ns": s.p50_ns, "p90_ns": s.p90_ns, "p99_ns": s.p99_ns,
        "first_bucket": first, "buckets": &h.buckets[first..last],
        "check_ok": s.check.ok,
        "peaks": peaks,
    });
    if weight == Weight::Time {
        let t = crate::peaks::bucket_time(h, scale);
        v["time_buckets"] = json!(&t[first..last]);
    }
    v
}

/// Read a whole JSON Lines profile. Every line is checked; the first bad one is the error.
pub fn read_profile(r: impl BufRead) -> Result<Profile, Error> {
    let mut meta = None;
    let mut ivs: BTreeMap<(u64, u64), Interval> = BTreeMap::new();
    for (i, line) in r.lines().enumerate() {
        let n = i + 1;
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line)
            .map_err(|e| Error::NotJson { line: n, reason: e.to_string() })?;
        let o = v.as_object().ok_or_else(|| schema(n, "not a JSON object"))?;
        let ty = o.get("type").and_then(Value::as_str).ok_or_else(|| schema(n, "no \"type\""))?;
        if ty != "meta" && meta.is_none() {
            return Err(schema(n, "the first line must be the \"meta\" object"));
        }
        match ty {
            "meta" => {
                if meta.is_some() {
                    return Err(schema(n, "a second \"meta\" line"));
                }
                let ver = o.get("version").and_then(Value::as_u64).unwrap_or(VERSION);
                if ver != VERSION {
                    return Err(schema(
                        n,
                        &format!("schema version {ver}, this reader knows {VERSION}"),
                    ));
                }
                let m: Meta = serde_json::from_value(v.clone())
                    .map_err(|e| schema(n, &format!("meta: {e}")))?;
                meta = Some(m);
            }
            "interval" => {
                interval_of(&mut ivs, o, n)?;
            }
            "hist" => {
                let scale = meta.as_ref().map_or(Scale::Log2, |m: &Meta| m.buckets);
                let (key, h) = parse_hist(o, n, scale)?;
                let iv = interval_of(&mut ivs, o, n)?;
                if iv.hists.insert(key.clone(), h).is_some() {
                    return Err(schema(
                        n,
                        &format!(
                            "a second histogram for {} {} [{}] in one interval",
                            key.layer, key.op, key.group
                        ),
                    ));
                }
            }
            "counters" => {
                let c = o
                    .get("counters")
                    .and_then(Value::as_object)
                    .ok_or_else(|| schema(n, "no \"counters\" object"))?;
                let mut m = BTreeMap::new();
                for (k, v) in c {
                    m.insert(
                        k.clone(),
                        v.as_u64()
                            .ok_or_else(|| schema(n, &format!("counter {k} is not a count")))?,
                    );
                }
                interval_of(&mut ivs, o, n)?.counters = m;
            }
            other => return Err(schema(n, &format!("unknown type \"{other}\""))),
        }
    }
    let meta = meta.ok_or(Error::NoMeta)?;
    Ok(Profile { meta, intervals: ivs.into_values().collect() })
}

fn schema(line: usize, reason: &str) -> Error {
    Error::Schema { line, reason: reason.to_string() }
}

fn get_u64(o: &Map<String, Value>, f: &str, n: usize) -> Result<u64, Error> {
    o.get(f)
        .and_then(Value::as_u64)
        .ok_or_else(|| schema(n, &format!("\"{f}\" missing or not an unsigned integer")))
}

fn get_str(o: &Map<String, Value>, f: &str, n: usize) -> Result<String, Error> {
    o.get(f)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| schema(n, &format!("\"{f}\" missing or not a string")))
}

fn interval_of<'a>(
    ivs: &'a mut BTreeMap<(u64, u64), Interval>,
    o: &Map<String, Value>,
    n: usize,
) -> Result<&'a mut Interval, Error> {
    let (start, end) = (get_u64(o, "start_ns", n)?, get_u64(o, "end_ns", n)?);
    if end < start {
        return Err(schema(n, "end_ns before start_ns"));
    }
    let partial = o.get("partial").and_then(Value::as_bool).unwrap_or(false);
    let iv = ivs.entry((start, end)).or_insert_with(|| Interval {
        start_ns: start,
        end_ns: end,
        ..Interval::default()
    });
    iv.partial |= partial;
    Ok(iv)
}

fn parse_hist(o: &Map<String, Value>, n: usize, scale: Scale) -> Result<(Key, Hist), Error> {
    let key = Key {
        layer: get_str(o, "layer", n)?,
        op: get_str(o, "op", n)?,
        group: get_str(o, "group", n)?,
    };
    let first = get_u64(o, "first_bucket", n)? as usize;
    let list = o
        .get("buckets")
        .and_then(Value::as_array)
        .ok_or_else(|| schema(n, "\"buckets\" missing or not a list"))?;
    if first.saturating_add(list.len()) > BUCKETS {
        return Err(schema(
            n,
            &format!("first_bucket {first} + {} buckets is more than {BUCKETS}", list.len()),
        ));
    }
    let mut h = Hist::default();
    for (i, c) in list.iter().enumerate() {
        h.buckets[first + i] = c.as_u64().ok_or_else(|| schema(n, "a bucket is not a count"))?;
    }
    h.count = get_u64(o, "count", n)?;
    h.errors = get_u64(o, "errors", n)?;
    h.total_ns = get_u64(o, "total_ns", n)?;
    h.max_ns = get_u64(o, "max_ns", n)?;
    h.min_ns = match o.get("min_ns") {
        Some(Value::Null) | None if h.count == 0 => u64::MAX,
        _ => get_u64(o, "min_ns", n)?,
    };
    let ok = h.check_in(scale).ok;
    if let Some(claim) = o.get("check_ok").and_then(Value::as_bool) {
        if claim != ok {
            return Err(schema(
                n,
                &format!("check_ok is {claim} but the histogram's check says {ok}"),
            ));
        }
    }
    Ok((key, h))
}

fn summary_value(s: &crate::rows::Summary) -> Value {
    json!({
        "count": s.count, "errors": s.errors, "total_ns": s.total_ns, "min_ns": s.min_ns,
        "max_ns": s.max_ns, "p50_ns": s.p50_ns, "p90_ns": s.p90_ns, "p99_ns": s.p99_ns,
    })
}

/// A comparison as JSON Lines: a `compare` line (the inputs and the test's thresholds), then
/// a `key_diff` line per key (verdict, both summaries, the test, the buckets of both sides
/// from `first_bucket` on).
pub fn comparison_values(c: &crate::compare::Comparison) -> Vec<Value> {
    let mut out = vec![json!({
        "type": "compare", "version": VERSION, "a": c.a_name, "b": c.b_name,
        "a_meta": meta_value(&c.a_meta), "b_meta": meta_value(&c.b_meta),
        "alpha": c.opts.alpha, "min_shift": c.opts.min_shift, "per_interval": c.opts.per_interval,
        "tested": c.tested, "p_threshold": c.threshold,
        "differ": c.keys.iter().filter(|k| k.verdict == crate::compare::Verdict::Differs).count(),
        "keys": c.keys.len(),
    })];
    for k in &c.keys {
        out.push(json!({
            "type": "key_diff", "layer": k.key.layer, "op": k.key.op, "group": k.key.group,
            "interval": k.interval, "verdict": k.verdict,
            "a": summary_value(&k.sa), "b": summary_value(&k.sb),
            "chi2": k.test.chi2, "df": k.test.df, "p": k.test.p, "bins": k.test.bins,
            "shift": k.test.shift,
            "first_bucket": k.buckets.first().map_or(0, |b| b.bucket),
            "a_buckets": k.buckets.iter().map(|b| b.a).collect::<Vec<_>>(),
            "b_buckets": k.buckets.iter().map(|b| b.b).collect::<Vec<_>>(),
        }));
    }
    out
}

/// Correlations as JSON Lines: one `correlation` line per pair, with its coefficients and
/// the aligned series (`start_ns`, and per key `count`, `mean_ns` (null without calls),
/// `total_ns`).
pub fn correlation_values(m: &Meta, pairs: &[crate::correlate::Pair]) -> Vec<Value> {
    let key = |k: &Key| json!({"layer": k.layer, "op": k.op, "group": k.group});
    let series = |s: &crate::correlate::Series| json!({"key": key(&s.key), "count": s.counts, "mean_ns": s.mean_ns, "total_ns": s.total_ns});
    pairs
        .iter()
        .map(|p| {
            json!({
                "type": "correlation", "interval_ns": m.interval_ns, "target": m.target,
                "a": series(&p.a), "b": series(&p.b), "start_ns": p.starts,
                "r_count": p.r_count, "r_latency": p.r_latency,
                "latency_points": p.latency_points, "r_time": p.r_time,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Profile {
        let mut a = Hist::default();
        for ns in [0, 1, 700, 70_000, u64::MAX] {
            a.record(ns, ns == 1);
        }
        let mut b = Hist::default();
        b.record(12345, false);
        let k = |op: &str, g: &str| Key { layer: "syscall".into(), op: op.into(), group: g.into() };
        let iv1 = Interval {
            start_ns: 1_000_000_000,
            end_ns: 2_000_000_000,
            partial: false,
            hists: [(k("read", ""), a), (k("write", "comm=x"), b)].into(),
            counters: [("no_latency".to_string(), 3)].into(),
        };
        let iv2 = Interval {
            start_ns: 2_000_000_000,
            end_ns: 2_500_000_000,
            partial: true,
            ..Interval::default()
        };
        Profile {
            meta: Meta {
                source: "trace:t.ds".into(),
                target: "cat".into(),
                interval_ns: 1_000_000_000,
                by: "call".into(),
                ..Meta::default()
            },
            intervals: vec![iv1, iv2],
        }
    }

    #[test]
    fn round_trip_is_exact() {
        let p = sample();
        let mut text = String::new();
        text.push_str(&meta_value(&p.meta).to_string());
        text.push('\n');
        for iv in &p.intervals {
            for v in interval_values(iv) {
                text.push_str(&v.to_string());
                text.push('\n');
            }
        }
        let first = text.lines().next().unwrap();
        assert!(first.contains("\"type\":\"meta\"") && first.contains("\"version\":1"), "{text}");
        let back = read_profile(text.as_bytes()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn bad_input_names_its_line() {
        let e = read_profile(&b"{\"type\":\"meta\"}\nnot json\n"[..]).unwrap_err().to_string();
        assert!(e.starts_with("line 2: not JSON"), "{e}");
        let e = read_profile(&b"{\"type\":\"hist\"}\n"[..]).unwrap_err().to_string();
        assert!(e.contains("line 1: the first line must be"), "{e}");
        let m = meta_value(&Meta::default()).to_string();
        let bad = format!("{m}\n{{\"type\":\"hist\",\"start_ns\":0,\"end_ns\":1,\"layer\":\"s\",\"op\":\"r\",\"group\":\"\",\"count\":2,\"errors\":0,\"total_ns\":5,\"max_ns\":5,\"min_ns\":5,\"first_bucket\":3,\"buckets\":[1],\"check_ok\":true}}\n");
        let e = read_profile(bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("line 2: check_ok is true"), "{e}");
        assert!(matches!(read_profile(&b""[..]), Err(Error::NoMeta)));
    }
}
