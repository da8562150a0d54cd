//! Profiles for the monitoring stack (`profile --listen`): the cumulative histograms of a
//! live profile as Prometheus metrics, in the three exposition formats a scraper may ask for:
//! the protobuf format (`application/vnd.google.protobuf;
//! proto=io.prometheus.client.MetricFamily; encoding=delimited`), the only one in which
//! Prometheus 2.x ingests native histograms; OpenMetrics 1.0 text; and the Prometheus text
//! format 0.0.4. Encoding only: the listener (crates/cli) serves what these return.
//!
//! One histogram per key, `reanimator_profile_latency_nanoseconds{layer, op, group}` (a
//! value profile: `reanimator_profile_value_bytes` or `_calls`, with `value`), counted from
//! the start of the profile (Prometheus histograms are cumulative):
//!
//! * classic buckets (`le`): bucket `k`'s inclusive upper bound, cumulative: exact, since the
//!   values are whole nanoseconds; every bucket of the scale is listed, so the set of series
//!   is the same in every scrape (what a Grafana heat map needs);
//! * native buckets (log2 profiles only): schema 0, whose bucket `i` is `(2^(i-1), 2^i]`.
//!   Bucket `k` of the profile (`2^(k-1) <= ns < 2^k`) is exported as native bucket `k`, and
//!   bucket 0 (0 ns) as the zero bucket (threshold 0). The counts are the profile's exactly;
//!   the edge convention differs (FSprof's buckets hold their lower bound, Prometheus's their
//!   upper bound), so a latency of exactly `2^(k-1)` ns counts in native bucket `k` where
//!   Prometheus's own client would have put it in `k - 1`.
//!
//! Counters (page-cache pages, full-map events) are `reanimator_profile_events_total{name}`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::{Hist, Key, Meta, Scale};

/// The gauge that says up to when the histograms count: the end of the last interval added
/// (Unix time, seconds), so that a scrape can be matched with the profile's own intervals.
pub const LAST_END: &str = "reanimator_profile_last_interval_end_seconds";
const LAST_END_HELP: &str = "End of the last profile interval the histograms include (Unix time)";

/// What a scraper asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Length-delimited `io.prometheus.client.MetricFamily` protobuf messages: classic
    /// buckets and, for log2 profiles, native ones (the only format that carries them).
    Protobuf,
    /// OpenMetrics 1.0 text (classic buckets only).
    OpenMetrics,
    /// The Prometheus text format 0.0.4 (classic buckets only), the default.
    Text,
}

impl Format {
    /// The format for an HTTP `Accept` header: protobuf when it names the MetricFamily
    /// protobuf, else OpenMetrics when it names that, else the text format.
    pub fn negotiate(accept: &str) -> Format {
        let a = accept.to_ascii_lowercase();
        if a.contains("application/vnd.google.protobuf")
            && a.contains("io.prometheus.client.metricfamily")
        {
            Format::Protobuf
        } else if a.contains("application/openmetrics-text") {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    /// The `Content-Type` of a response in this format, with its version and parameters.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Protobuf => {
                "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; \
                 encoding=delimited"
            }
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// The histogram family's name and help for a profile.
fn family(meta: &Meta) -> (String, String) {
    if meta.is_latency() {
        (
            "reanimator_profile_latency_nanoseconds".into(),
            "Latency of each operation (reanimator profile; FSprof log2 buckets)".into(),
        )
    } else {
        (
            format!("reanimator_profile_value_{}", meta.unit()),
            format!("{} of each operation (reanimator profile --value)", meta.value),
        )
    }
}

fn labels(meta: &Meta, k: &Key) -> Vec<(&'static str, String)> {
    let mut v = vec![("layer", k.layer.clone()), ("op", k.op.clone())];
    if !k.group.is_empty() {
        v.push(("group", k.group.clone()));
    }
    if !meta.is_latency() {
        v.push(("value", meta.value.clone()));
    }
    v
}

/// The classic buckets: (inclusive upper bound, cumulative count) for every bucket of the
/// scale but the last, whose bound is +Inf (the count).
fn classic(h: &Hist, scale: Scale) -> Vec<(u64, u64)> {
    let used = scale.used();
    let mut acc = 0u64;
    (0..used - 1)
        .map(|k| {
            acc += h.buckets[k];
            (scale.bounds(k).1, acc)
        })
        .collect()
}

fn escape(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

fn label_text(ls: &[(&str, String)], le: Option<&str>) -> String {
    let mut s = String::from("{");
    for (i, (n, v)) in ls.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{n}=\"{}\"", escape(v));
    }
    if let Some(le) = le {
        if !ls.is_empty() {
            s.push(',');
        }
        let _ = write!(s, "le=\"{le}\"");
    }
    s.push('}');
    s
}

/// OpenMetrics 1.0 text (`openmetrics`, ending in `# EOF`) or the Prometheus text format.
pub fn text(
    meta: &Meta,
    hists: &BTreeMap<Key, Hist>,
    counters: &BTreeMap<String, u64>,
    last_end_ns: Option<u64>,
    openmetrics: bool,
) -> String {
    let (name, help) = family(meta);
    let mut s = String::new();
    if let Some(end) = last_end_ns {
        let g = LAST_END;
        let _ = writeln!(s, "# TYPE {g} gauge");
        if openmetrics {
            let _ = writeln!(s, "# UNIT {g} seconds");
        }
        let _ = writeln!(s, "# HELP {g} {LAST_END_HELP}");
        let _ = writeln!(s, "{g} {}", end as f64 / 1e9);
    }
    let _ = writeln!(s, "# TYPE {name} histogram");
    if openmetrics {
        let _ = writeln!(
            s,
            "# UNIT {name} {}",
            if meta.is_latency() { "nanoseconds" } else { meta.unit() }
        );
    }
    let _ = writeln!(s, "# HELP {name} {help}");
    for (k, h) in hists {
        let ls = labels(meta, k);
        for (le, c) in classic(h, meta.buckets) {
            let _ = writeln!(s, "{name}_bucket{} {c}", label_text(&ls, Some(&le.to_string())));
        }
        let _ = writeln!(s, "{name}_bucket{} {}", label_text(&ls, Some("+Inf")), h.count);
        let _ = writeln!(s, "{name}_count{} {}", label_text(&ls, None), h.count);
        let _ = writeln!(s, "{name}_sum{} {}", label_text(&ls, None), h.total_ns);
    }
    if !counters.is_empty() {
        let c = "reanimator_profile_events";
        let _ = writeln!(s, "# TYPE {c}{} counter", if openmetrics { "" } else { "_total" });
        let _ = writeln!(
            s,
            "# HELP {c}{} Events counted by the profiler (not latencies)",
            if openmetrics { "" } else { "_total" }
        );
        for (n, v) in counters {
            let _ = writeln!(s, "{c}_total{} {v}", label_text(&[("name", n.clone())], None));
        }
    }
    if openmetrics {
        s.push_str("# EOF\n");
    }
    s
}

// ---- protobuf (io.prometheus.client, delimited) ---------------------------------------

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn field_varint(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, 0);
    varint(out, v);
}

fn field_zigzag(out: &mut Vec<u8>, field: u32, v: i64) {
    field_varint(out, field, ((v << 1) ^ (v >> 63)) as u64);
}

fn field_double(out: &mut Vec<u8>, field: u32, v: f64) {
    tag(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

fn field_bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    tag(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn label_pair(name: &str, value: &str) -> Vec<u8> {
    let mut m = Vec::new();
    field_bytes(&mut m, 1, name.as_bytes());
    field_bytes(&mut m, 2, value.as_bytes());
    m
}

/// A `Histogram` message: the classic buckets, and for log2 profiles the native ones.
fn histogram(h: &Hist, scale: Scale) -> Vec<u8> {
    let mut m = Vec::new();
    field_varint(&mut m, 1, h.count); // sample_count
    field_double(&mut m, 2, h.total_ns as f64); // sample_sum
    for (le, c) in classic(h, scale) {
        let mut b = Vec::new();
        field_varint(&mut b, 1, c); // cumulative_count
        field_double(&mut b, 2, le as f64); // upper_bound
        field_bytes(&mut m, 3, &b);
    }
    if scale == Scale::Log2 {
        field_zigzag(&mut m, 5, 0); // schema 0
        field_double(&mut m, 6, 0.0); // zero_threshold
        field_varint(&mut m, 7, h.buckets[0]); // zero_count
        let first = (1..h.buckets.len()).find(|&k| h.buckets[k] > 0);
        let last = (1..h.buckets.len()).rev().find(|&k| h.buckets[k] > 0);
        let mut span = Vec::new();
        match (first, last) {
            (Some(f), Some(l)) => {
                field_zigzag(&mut span, 1, f as i64); // offset: index of the first bucket
                field_varint(&mut span, 2, (l - f + 1) as u64); // length
                field_bytes(&mut m, 12, &span); // positive_span
                let mut prev = 0i64;
                for k in f..=l {
                    let c = h.buckets[k] as i64;
                    field_zigzag(&mut m, 13, c - prev); // positive_delta
                    prev = c;
                }
            }
            _ => {
                // The no-op span: a native histogram without observations above zero.
                field_zigzag(&mut span, 1, 0);
                field_varint(&mut span, 2, 0);
                field_bytes(&mut m, 12, &span);
            }
        }
    }
    m
}

/// The delimited protobuf exposition: each `MetricFamily` preceded by its length.
pub fn protobuf(
    meta: &Meta,
    hists: &BTreeMap<Key, Hist>,
    counters: &BTreeMap<String, u64>,
    last_end_ns: Option<u64>,
) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(end) = last_end_ns {
        let mut fam = Vec::new();
        field_bytes(&mut fam, 1, LAST_END.as_bytes());
        field_bytes(&mut fam, 2, LAST_END_HELP.as_bytes());
        field_varint(&mut fam, 3, 1); // GAUGE
        let mut g = Vec::new();
        field_double(&mut g, 1, end as f64 / 1e9);
        let mut metric = Vec::new();
        field_bytes(&mut metric, 2, &g); // gauge
        field_bytes(&mut fam, 4, &metric);
        varint(&mut out, fam.len() as u64);
        out.extend_from_slice(&fam);
    }
    let (name, help) = family(meta);
    let mut fam = Vec::new();
    field_bytes(&mut fam, 1, name.as_bytes());
    field_bytes(&mut fam, 2, help.as_bytes());
    field_varint(&mut fam, 3, 4); // HISTOGRAM
    for (k, h) in hists {
        let mut metric = Vec::new();
        for (n, v) in labels(meta, k) {
            field_bytes(&mut metric, 1, &label_pair(n, &v));
        }
        field_bytes(&mut metric, 7, &histogram(h, meta.buckets));
        field_bytes(&mut fam, 4, &metric);
    }
    varint(&mut out, fam.len() as u64);
    out.extend_from_slice(&fam);
    if !counters.is_empty() {
        let mut fam = Vec::new();
        field_bytes(&mut fam, 1, b"reanimator_profile_events_total");
        field_bytes(&mut fam, 2, b"Events counted by the profiler (not latencies)");
        field_varint(&mut fam, 3, 0); // COUNTER
        for (n, v) in counters {
            let mut metric = Vec::new();
            field_bytes(&mut metric, 1, &label_pair("name", n));
            let mut c = Vec::new();
            field_double(&mut c, 1, *v as f64);
            field_bytes(&mut metric, 3, &c);
            field_bytes(&mut fam, 4, &metric);
        }
        varint(&mut out, fam.len() as u64);
        out.extend_from_slice(&fam);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Meta, BTreeMap<Key, Hist>) {
        let mut h = Hist::default();
        for ns in [0, 1, 700, 700, 70_000] {
            h.record(ns, false);
        }
        let k = Key { layer: "syscall".into(), op: "read".into(), group: "comm=a\"b".into() };
        (Meta::default(), [(k, h)].into())
    }

    #[test]
    fn classic_buckets_are_cumulative_and_exact() {
        let (m, hs) = sample();
        let t = text(&m, &hs, &BTreeMap::new(), None, true);
        assert!(t.ends_with("# EOF\n"), "{t}");
        assert!(t.contains("group=\"comm=a\\\"b\""), "{t}");
        // 700 ns is in bucket 10 (512..1023): le 1023 holds 0, 1, 700, 700.
        assert!(t.contains(",le=\"511\"} 2\n") && t.contains(",le=\"1023\"} 4\n"), "{t}");
        assert!(
            t.contains(",le=\"+Inf\"} 5\n") && t.contains("_count{") && t.contains("_sum{"),
            "{t}"
        );
        assert_eq!(t.matches("_bucket{").count(), 64);
        assert_eq!(Format::negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3"), Format::Protobuf);
        assert_eq!(
            Format::negotiate("application/openmetrics-text;version=1.0.0,*/*;q=0.1"),
            Format::OpenMetrics
        );
        assert_eq!(Format::negotiate("*/*"), Format::Text);
    }

    #[test]
    fn protobuf_frames_and_native_spans() {
        let (m, hs) = sample();
        let b = protobuf(&m, &hs, &[("x".to_string(), 3)].into(), None);
        // Two length-prefixed families that fill the buffer exactly.
        let mut i = 0;
        let mut n = 0;
        while i < b.len() {
            let (mut len, mut shift) = (0usize, 0);
            loop {
                let byte = b[i];
                i += 1;
                len |= usize::from(byte & 0x7f) << shift;
                shift += 7;
                if byte < 0x80 {
                    break;
                }
            }
            i += len;
            n += 1;
        }
        assert_eq!((i, n), (b.len(), 2));
        // The native span starts at bucket 1 (1 ns) and runs to bucket 17 (70 us).
        let span = [0x62, 0x04, 0x08, 0x02, 0x10, 17];
        assert!(b.windows(6).any(|w| w == span), "span offset 1 (zigzag 2), length 17");
    }
}
