//! Text output: bcc's per-interval log2 histograms (`nsecs : count distribution`) and the
//! compact `--table`. The `write_*` functions lay out values computed by [`crate::rows`] and
//! [`IntervalView::new`]; they compute nothing themselves.

use std::io::{self, Write};

use crate::peaks::{self, Peak};
use crate::rows::{self, human, human_ns, HistRows, Summary, Weight};
use crate::{Interval, Key, Meta, Scale};

/// How text is laid out.
#[derive(Clone, Debug)]
pub struct TextOptions {
    /// Print the wall-clock time of each interval's end (bcc's `-T`, `%H:%M:%S`).
    pub timestamp: bool,
    /// Local time's offset from UTC in seconds, for `timestamp` (the caller knows the zone).
    pub utc_offset_s: i64,
    /// One line per key instead of histograms.
    pub table: bool,
    /// Rows and bars show calls per bucket, or the time they took (`--weight time`).
    pub weight: Weight,
    /// The profile's buckets (from its meta; `TextSink` sets it).
    pub scale: Scale,
    /// The unit values are printed in, [`Meta::unit`]: `ns`, `bytes` or `calls` (from its
    /// meta; `TextSink` sets it).
    pub unit: &'static str,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            timestamp: false,
            utc_offset_s: 0,
            table: false,
            weight: Weight::Count,
            scale: Scale::Log2,
            unit: "ns",
        }
    }
}

/// Everything one interval's text shows, computed.
pub struct IntervalView<'a> {
    /// `HH:MM:SS` of the interval's end, with `-T`.
    pub clock: Option<String>,
    /// The interval's start, in seconds since the profile's first interval began.
    pub rel_start_s: f64,
    /// The interval's end, in seconds since the profile's first interval began.
    pub rel_end_s: f64,
    /// The interval was cut short ([`Interval::partial`]).
    pub partial: bool,
    /// One block per key, in key order.
    pub blocks: Vec<Block<'a>>,
    /// The interval's counters ([`Interval::counters`]), by name.
    pub counters: Vec<(&'a str, u64)>,
    /// Reads' page-cache hit ratio (live profiles with the `cache` layer).
    pub read_hit_ratio: Option<f64>,
    /// Histograms of the interval whose check ([`crate::Hist::check_in`]) holds.
    pub checks_ok: usize,
    /// Histograms of the interval whose check ([`crate::Hist::check_in`]) fails.
    pub checks_failed: usize,
    /// What rows and bars show ([`TextOptions::weight`]).
    pub weight: Weight,
    /// The unit values are printed in ([`TextOptions::unit`]).
    pub unit: &'static str,
    /// The profile's buckets ([`TextOptions::scale`]).
    pub scale: Scale,
}

/// One key's block.
pub struct Block<'a> {
    /// The key the block is of.
    pub key: &'a Key,
    /// The title line's figures (count, total, avg, p50, p99, errors).
    pub summary: Summary,
    /// The histogram's rows in bcc's layout (counts, or times with `--weight time`).
    pub rows: HistRows,
    /// The histogram's modes ([`peaks::peaks`]), in bucket order.
    pub peaks: Vec<Peak>,
    /// With `--weight time`: the bucket that accounts for the most time, its share of the
    /// time, and the latencies below which half and nine tenths of the time was spent.
    pub time: Option<TimeView>,
}

/// The time-weighted figures of a histogram.
pub struct TimeView {
    /// The bucket that accounts for the most time ([`peaks::bucket_time`]; the lowest such
    /// bucket on a tie).
    pub top_bucket: usize,
    /// The smallest value `top_bucket` holds.
    pub top_lo: u64,
    /// The largest value `top_bucket` holds.
    pub top_hi: u64,
    /// `top_bucket`'s share of the total time (0..=1; 0 for an empty histogram).
    pub top_share: f64,
    /// The latency below which half of the time was spent (ns).
    pub p50: u64,
    /// The latency below which nine tenths of the time was spent (ns).
    pub p90: u64,
}

impl TimeView {
    /// The time-weighted figures of `h` in the buckets of `scale`.
    pub fn new(h: &crate::Hist, scale: Scale) -> TimeView {
        let t = peaks::bucket_time(h, scale);
        let sum: u128 = t.iter().map(|&x| u128::from(x)).sum();
        let top = (0..t.len()).max_by_key(|&k| (t[k], std::cmp::Reverse(k))).unwrap_or(0);
        let (lo, hi) = scale.bounds(top);
        TimeView {
            top_bucket: top,
            top_lo: lo,
            top_hi: hi,
            top_share: if sum == 0 { 0.0 } else { t[top] as f64 / sum as f64 },
            p50: rows::weighted_quantile(&t, h, scale, 0.5),
            p90: rows::weighted_quantile(&t, h, scale, 0.9),
        }
    }
}

impl<'a> IntervalView<'a> {
    /// `origin_ns`: the start of the profile's first interval (times are shown relative to it).
    pub fn new(iv: &'a Interval, origin_ns: u64, opts: &TextOptions) -> IntervalView<'a> {
        let sc = opts.scale;
        let blocks = iv
            .hists
            .iter()
            .map(|(key, h)| Block {
                key,
                summary: rows::summary_in(h, sc),
                rows: rows::hist_rows_in(&rows::weighted(h, sc, opts.weight), sc),
                peaks: peaks::peaks(h, sc),
                time: (opts.weight == Weight::Time).then(|| TimeView::new(h, sc)),
            })
            .collect();
        let (checks_ok, checks_failed) = rows::interval_checks_in(iv, sc);
        IntervalView {
            clock: opts.timestamp.then(|| clock(iv.end_ns, opts.utc_offset_s)),
            rel_start_s: iv.start_ns.saturating_sub(origin_ns) as f64 / 1e9,
            rel_end_s: iv.end_ns.saturating_sub(origin_ns) as f64 / 1e9,
            partial: iv.partial,
            blocks,
            counters: iv.counters.iter().map(|(k, v)| (k.as_str(), *v)).collect(),
            read_hit_ratio: rows::read_hit_ratio(&iv.counters),
            checks_ok,
            checks_failed,
            weight: opts.weight,
            unit: opts.unit,
            scale: sc,
        }
    }
}

/// `HH:MM:SS` of `ns` since the epoch, shifted by `utc_offset_s`.
pub fn clock(ns: u64, utc_offset_s: i64) -> String {
    let secs = (ns / 1_000_000_000) as i64 + utc_offset_s;
    let day = secs.rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60)
}

/// The profile's heading: where it comes from.
pub fn write_meta(out: &mut dyn Write, m: &Meta) -> io::Result<()> {
    let every = if m.interval_ns == 0 {
        "one interval".to_string()
    } else {
        format!("intervals of {}", human_ns(m.interval_ns))
    };
    writeln!(out, "profile of {} ({}), {every}, by {}", m.target, m.source, m.by)?;
    if !m.is_latency() {
        writeln!(out, "value profile: histograms of {} ({}), not of latencies", m.value, m.unit())?;
    }
    if m.buckets != Scale::Log2 {
        writeln!(out, "buckets: {} (--buckets)", m.buckets)?;
    }
    if m.sample > 1 {
        writeln!(
            out,
            "sampled: each call counted with probability 1/{} (one in {} on average); counts, \
             totals and errors are scaled by it (min and max as observed)",
            m.sample, m.sample
        )?;
    }
    if let Some(o) = &m.overhead {
        writeln!(
            out,
            "probe overhead: clock read {} ns, probes add {} ns per call, self-delay {} ns inside \
             each latency ({}), floor {} ns (the median latency of getppid)",
            o.clock_read_ns,
            o.probe_pair_ns,
            o.self_delay_ns,
            if o.subtracted { "subtracted: --calibrate" } else { "not subtracted" },
            o.floor_ns
        )?;
    }
    Ok(())
}

fn write_header(out: &mut dyn Write, v: &IntervalView) -> io::Result<()> {
    writeln!(out)?;
    if let Some(c) = &v.clock {
        write!(out, "{c} ")?;
    }
    writeln!(
        out,
        "interval {:.3} .. {:.3} s{}",
        v.rel_start_s,
        v.rel_end_s,
        if v.partial { " (partial)" } else { "" }
    )
}

/// `syscall read  [comm=cat]  count N, total X, avg Y, p50 A, p99 B, errors E`.
fn write_title(out: &mut dyn Write, b: &Block, unit: &str) -> io::Result<()> {
    let s = &b.summary;
    write!(out, "{} {}", b.key.layer, b.key.op)?;
    if !b.key.group.is_empty() {
        write!(out, "  [{}]", b.key.group)?;
    }
    writeln!(
        out,
        "  count {}, total {}, avg {}, p50 {}, p99 {}, errors {}",
        s.count,
        human(s.total_ns, unit),
        human(s.avg_ns, unit),
        human(s.p50_ns, unit),
        human(s.p99_ns, unit),
        s.errors
    )
}

/// bcc's `print_log2_hist` rows, in nanoseconds.
pub fn write_log2_hist(out: &mut dyn Write, r: &HistRows) -> io::Result<()> {
    write_hist(out, r, "nsecs", Weight::Count)
}

/// bcc's `print_log2_hist` rows: `label` names the values (`nsecs`, `bytes`), `weight`
/// what the column holds (`count`, or `time_ns` with `--weight time`).
pub fn write_hist(
    out: &mut dyn Write,
    r: &HistRows,
    label: &str,
    weight: Weight,
) -> io::Result<()> {
    if r.rows.is_empty() {
        return Ok(());
    }
    let (pad, lw) = if r.value_width == 10 { (5, 19) } else { (15, 29) };
    let (head, cw) = match weight {
        Weight::Count => ("count   ", 8),
        Weight::Time => ("time_ns     ", 12),
    };
    writeln!(out, "{:pad$}{:<lw$} : {head} distribution", "", label)?;
    let w = r.value_width;
    for row in &r.rows {
        writeln!(
            out,
            "{:>w$} -> {:<w$} : {:<cw$} |{:<sw$}|",
            row.lo_ns,
            row.hi_ns,
            row.count,
            "*".repeat(row.stars),
            sw = r.stars_width
        )?;
    }
    Ok(())
}

/// `peaks: 2: 512 ns .. 2.0 us (mode 1024 -> 2047) 97.1% of calls, 12.0% of time; ...`.
pub fn write_peaks(out: &mut dyn Write, p: &[Peak], scale: Scale, unit: &str) -> io::Result<()> {
    if p.is_empty() {
        return Ok(());
    }
    let what = if unit == "ns" { "time" } else { "the sum" };
    write!(out, "peaks: {}", p.len())?;
    for (i, pk) in p.iter().enumerate() {
        let (mlo, mhi) = scale.bounds(pk.mode_bucket);
        write!(
            out,
            "{} {}..{} (mode {} -> {}) {:.1}% of calls, {:.1}% of {what}",
            if i == 0 { ":" } else { ";" },
            human(pk.lo, unit),
            human(pk.hi, unit),
            mlo,
            mhi,
            pk.calls_share * 100.0,
            pk.time_share * 100.0
        )?;
    }
    writeln!(out)
}

/// The label of a histogram's value column.
fn value_label(unit: &str) -> &'static str {
    match unit {
        "bytes" => "bytes",
        "calls" => "calls",
        _ => "nsecs",
    }
}

/// `check: ok (buckets N = count N; total T within [lo, hi])` or `CHECK FAILED (...)`.
pub fn write_check(out: &mut dyn Write, c: &crate::Check) -> io::Result<()> {
    write_check_in(out, c, "ns")
}

/// [`write_check`] for values in `unit` (`ns`, `bytes`, `calls`).
pub fn write_check_in(out: &mut dyn Write, c: &crate::Check, unit: &str) -> io::Result<()> {
    let within = c.total_lo_ns <= c.total_ns && c.total_ns <= c.total_hi_ns;
    writeln!(
        out,
        "{} (buckets {} {} count {}; total {} {unit} {} [{}, {}])",
        if c.ok { "check: ok" } else { "CHECK FAILED" },
        c.buckets_sum,
        if c.buckets_sum == c.count { "=" } else { "!=" },
        c.count,
        c.total_ns,
        if within { "within" } else { "OUTSIDE" },
        c.total_lo_ns,
        c.total_hi_ns
    )
}

fn write_counters(out: &mut dyn Write, v: &IntervalView) -> io::Result<()> {
    for (k, n) in &v.counters {
        writeln!(out, "counter {k}: {n}")?;
    }
    if let Some(r) = v.read_hit_ratio {
        writeln!(
            out,
            "page cache: {:.1}% of the pages reads asked for were cached (estimate: pages \
             added during reads / pages asked for)",
            r * 100.0
        )?;
    }
    Ok(())
}

/// One interval as bcc-style histograms.
pub fn write_interval(out: &mut dyn Write, v: &IntervalView) -> io::Result<()> {
    write_header(out, v)?;
    for b in &v.blocks {
        writeln!(out)?;
        write_title(out, b, v.unit)?;
        write_hist(out, &b.rows, value_label(v.unit), v.weight)?;
        if let Some(t) = &b.time {
            writeln!(
                out,
                "time: {:.1}% in bucket {} -> {}; half of the time in calls up to {}, nine \
                 tenths up to {}",
                t.top_share * 100.0,
                t.top_lo,
                t.top_hi,
                human(t.p50, v.unit),
                human(t.p90, v.unit)
            )?;
        }
        write_peaks(out, &b.peaks, v.scale, v.unit)?;
        write_check_in(out, &b.summary.check, v.unit)?;
    }
    write_counters(out, v)?;
    write_footer(out, v)
}

fn write_footer(out: &mut dyn Write, v: &IntervalView) -> io::Result<()> {
    if v.checks_failed > 0 {
        writeln!(
            out,
            "CHECK FAILED: {} of {} histograms in this interval are inconsistent",
            v.checks_failed,
            v.checks_ok + v.checks_failed
        )?;
    }
    Ok(())
}

/// The `--table --weight time` column heads.
fn write_time_table_head(out: &mut dyn Write, unit: &str) -> io::Result<()> {
    let u = if unit == "ns" { "us" } else { unit };
    writeln!(
        out,
        "{:<8} {:<16} {:<20} {:>9} {:>12} {:>25} {:>9} {:>12} {:>12} {:>5} check",
        "layer",
        "op",
        "group",
        "count",
        if unit == "ns" { "total_ms" } else { "total" },
        "top_bucket",
        "top_share",
        format!("tp50_{u}"),
        format!("tp90_{u}"),
        "peaks"
    )
}

/// The `--table` column heads.
pub fn write_table_head(out: &mut dyn Write) -> io::Result<()> {
    write_table_head_in(out, "ns")
}

/// The `--table` column heads for values in `unit`: latencies in ms (total) and us, other
/// values as they are (`avg_bytes`, `p50_calls`).
pub fn write_table_head_in(out: &mut dyn Write, unit: &str) -> io::Result<()> {
    let (t, u) = if unit == "ns" { ("total_ms", "us") } else { ("total", unit) };
    writeln!(
        out,
        "{:<8} {:<16} {:<20} {:>9} {:>7} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} check",
        "layer",
        "op",
        "group",
        "count",
        "errors",
        t,
        format!("avg_{u}"),
        format!("min_{u}"),
        format!("p50_{u}"),
        format!("p90_{u}"),
        format!("p99_{u}"),
        format!("max_{u}")
    )
}

/// One interval as table lines (after its header line).
pub fn write_table_interval(out: &mut dyn Write, v: &IntervalView) -> io::Result<()> {
    write_header(out, v)?;
    let ns = v.unit == "ns";
    let us = |x: u64| if ns { x as f64 / 1e3 } else { x as f64 };
    if v.weight == Weight::Time {
        write_time_table_head(out, v.unit)?;
        for b in &v.blocks {
            let (s, Some(t)) = (&b.summary, &b.time) else { continue };
            writeln!(
                out,
                "{:<8} {:<16} {:<20} {:>9} {:>12.3} {:>25} {:>8.1}% {:>12.1} {:>12.1} {:>5} {}",
                b.key.layer,
                b.key.op,
                if b.key.group.is_empty() { "-" } else { &b.key.group },
                s.count,
                if ns { s.total_ns as f64 / 1e6 } else { s.total_ns as f64 },
                format!("{} -> {}", t.top_lo, t.top_hi),
                t.top_share * 100.0,
                us(t.p50),
                us(t.p90),
                b.peaks.len(),
                if s.check.ok { "ok" } else { "FAILED" }
            )?;
        }
        write_counters(out, v)?;
        return write_footer(out, v);
    }
    write_table_head_in(out, v.unit)?;
    for b in &v.blocks {
        let s = &b.summary;
        writeln!(
            out,
            "{:<8} {:<16} {:<20} {:>9} {:>7} {:>12.3} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>12.1} {}",
            b.key.layer,
            b.key.op,
            if b.key.group.is_empty() { "-" } else { &b.key.group },
            s.count,
            s.errors,
            if ns { s.total_ns as f64 / 1e6 } else { s.total_ns as f64 },
            us(s.avg_ns),
            us(s.min_ns),
            us(s.p50_ns),
            us(s.p90_ns),
            us(s.p99_ns),
            us(s.max_ns),
            if s.check.ok { "ok" } else { "FAILED" }
        )?;
    }
    write_counters(out, v)?;
    write_footer(out, v)
}

/// `+12.5%`, or `new` from zero.
fn change(a: u64, b: u64) -> String {
    match crate::compare::percent(a, b) {
        Some(p) => format!("{p:+.1}%"),
        None if b == 0 => "=".into(),
        None => "new".into(),
    }
}

/// A comparison (`profile compare`): the verdict's rule, then per key its verdict and
/// changes, and for keys that differ (or were too few to test) the buckets side by side.
pub fn write_comparison(out: &mut dyn Write, c: &crate::compare::Comparison) -> io::Result<()> {
    use crate::compare::Verdict;
    let unit = c.a_meta.unit();
    let describe = |m: &Meta| {
        let every = if m.interval_ns == 0 {
            "one interval".to_string()
        } else {
            format!("intervals of {}", human_ns(m.interval_ns))
        };
        format!("{} ({}), {every}, by {}", m.target, m.source, m.by)
    };
    writeln!(out, "A: {}: {}", c.a_name, describe(&c.a_meta))?;
    writeln!(out, "B: {}: {}", c.b_name, describe(&c.b_meta))?;
    if c.a_meta.sample > 1 {
        writeln!(out, "both sampled: one call in {} counted, counts scaled", c.a_meta.sample)?;
    }
    let differ = c.keys.iter().filter(|k| k.verdict == Verdict::Differs).count();
    writeln!(
        out,
        "test: chi-square homogeneity of the bucket counts per key (buckets with an expected \
         count under 5 merged); {} keys tested, a key DIFFERS when p < {} / {} = {:.2e} and at \
         least {:.1}% of its calls moved bucket",
        c.tested,
        c.opts.alpha,
        c.tested.max(1),
        c.threshold,
        c.opts.min_shift * 100.0
    )?;
    writeln!(out, "result: {differ} of {} keys differ", c.keys.len())?;
    for k in &c.keys {
        writeln!(out)?;
        write!(out, "{:<8} ", k.verdict.name())?;
        if let Some(i) = k.interval {
            write!(out, "interval {i}: ")?;
        }
        write!(out, "{} {}", k.key.layer, k.key.op)?;
        if !k.key.group.is_empty() {
            write!(out, "  [{}]", k.key.group)?;
        }
        writeln!(out)?;
        let (a, b) = (&k.sa, &k.sb);
        writeln!(
            out,
            "  count {} -> {} ({}), total {} -> {} ({}), p50 {} -> {}, p90 {} -> {}, p99 {} -> {}",
            a.count,
            b.count,
            change(a.count, b.count),
            human(a.total_ns, unit),
            human(b.total_ns, unit),
            change(a.total_ns, b.total_ns),
            human(a.p50_ns, unit),
            human(b.p50_ns, unit),
            human(a.p90_ns, unit),
            human(b.p90_ns, unit),
            human(a.p99_ns, unit),
            human(b.p99_ns, unit)
        )?;
        if k.test.df > 0 {
            writeln!(
                out,
                "  chi2 {:.1}, df {}, p {:.2e}; {:.1}% of calls moved bucket",
                k.test.chi2,
                k.test.df,
                k.test.p,
                k.test.shift * 100.0
            )?;
        }
        if matches!(k.verdict, Verdict::Differs | Verdict::TooFew) {
            let label = value_label(unit);
            writeln!(
                out,
                "  {:>21} -> {:<21} : {:>9} {:>9} {:>7} {:>7}",
                label, "", "A", "B", "A%", "B%"
            )?;
            for d in &k.buckets {
                let bar = |share: f64| "*".repeat((share * 20.0).round() as usize);
                writeln!(
                    out,
                    "  {:>21} -> {:<21} : {:>9} {:>9} {:>6.1}% {:>6.1}% |{:<20}|{:<20}|",
                    d.lo,
                    d.hi,
                    d.a,
                    d.b,
                    d.a_share * 100.0,
                    d.b_share * 100.0,
                    bar(d.a_share),
                    bar(d.b_share)
                )?;
            }
        }
    }
    Ok(())
}

/// Correlations (`--correlate`): per pair its coefficients, then the aligned series.
pub fn write_correlations(
    out: &mut dyn Write,
    m: &Meta,
    pairs: &[crate::correlate::Pair],
    intervals: usize,
) -> io::Result<()> {
    let name = |k: &Key| {
        if k.group.is_empty() {
            format!("{}:{}", k.layer, k.op)
        } else {
            format!("{}:{}@{}", k.layer, k.op, k.group)
        }
    };
    let r = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:+.3}"));
    let every = if m.interval_ns == 0 { "one interval".into() } else { human_ns(m.interval_ns) };
    writeln!(
        out,
        "correlation over {intervals} intervals of {every} of {} ({}): Pearson's r of the \
         per-interval counts, mean latencies (intervals where both have calls) and total times",
        m.target, m.source
    )?;
    if intervals < 3 {
        writeln!(out, "(fewer than 3 intervals: no coefficient; profile with --interval)")?;
    }
    if pairs.is_empty() {
        writeln!(
            out,
            "no pair of keys has calls in at least {} intervals",
            crate::correlate::MIN_RANKED_POINTS
        )?;
    }
    for p in pairs {
        let (na, nb) = (name(&p.a.key), name(&p.b.key));
        writeln!(out)?;
        writeln!(
            out,
            "{na} and {nb}: r(count) {}, r(latency) {} over {} intervals, r(time) {}",
            r(p.r_count),
            r(p.r_latency),
            p.latency_points,
            r(p.r_time)
        )?;
        writeln!(
            out,
            "  {:>10} {:>10} {:>12} {:>12} {:>10} {:>12} {:>12}",
            "t_s", "A_count", "A_mean", "A_total", "B_count", "B_mean", "B_total"
        )?;
        let origin = p.starts.first().copied().unwrap_or(0);
        for i in 0..p.starts.len() {
            let mean = |v: Option<u64>| v.map_or("-".to_string(), human_ns);
            writeln!(
                out,
                "  {:>10.3} {:>10} {:>12} {:>12} {:>10} {:>12} {:>12}",
                p.starts[i].saturating_sub(origin) as f64 / 1e9,
                p.a.counts[i],
                mean(p.a.mean_ns[i]),
                human_ns(p.a.total_ns[i]),
                p.b.counts[i],
                mean(p.b.mean_ns[i]),
                human_ns(p.b.total_ns[i])
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Hist;

    fn text(iv: &Interval, opts: &TextOptions) -> String {
        let mut out = Vec::new();
        let v = IntervalView::new(iv, iv.start_ns, opts);
        if opts.table {
            write_table_interval(&mut out, &v).unwrap();
        } else {
            write_interval(&mut out, &v).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    fn one(latencies: &[u64]) -> Interval {
        let mut h = Hist::default();
        for &ns in latencies {
            h.record(ns, ns == 5);
        }
        let key = Key { layer: "syscall".into(), op: "read".into(), group: String::new() };
        Interval {
            start_ns: 3_600_000_000_000,
            end_ns: 3_601_000_000_000,
            hists: [(key, h)].into(),
            ..Interval::default()
        }
    }

    /// The layout of libbpf-tools' print_log2_hist: `%*s%-*s : count    distribution`, then
    /// `%*lld -> %-*lld : %-8d |` + stars padded to 40 + `|`.
    #[test]
    fn histogram_rows_match_bcc_layout() {
        let iv = one(&[5, 6, 7, 9, 9, 9, 9, 3000]);
        let t = text(&iv, &TextOptions::default());
        let want = "\
     nsecs               : count    distribution
         4 -> 7          : 3        |******************************          |
         8 -> 15         : 4        |****************************************|
        16 -> 31         : 0        |                                        |
        32 -> 63         : 0        |                                        |
        64 -> 127        : 0        |                                        |
       128 -> 255        : 0        |                                        |
       256 -> 511        : 0        |                                        |
       512 -> 1023       : 0        |                                        |
      1024 -> 2047       : 0        |                                        |
      2048 -> 4095       : 1        |**********                              |
";
        assert!(t.contains(want), "{t}");
        assert!(t.contains("syscall read  count 8, total 3.1 us"), "{t}");
        assert!(t.contains("errors 1"), "{t}");
        assert!(
            t.contains("check: ok (buckets 8 = count 8; total 3054 ns within [2092, 4176])"),
            "{t}"
        );
        assert!(t.contains("interval 0.000 .. 1.000 s\n"), "{t}");
    }

    #[test]
    fn failures_are_loud_and_partial_is_marked() {
        let mut iv = one(&[100]);
        iv.partial = true;
        iv.hists.values_mut().for_each(|h| h.count = 2);
        let t = text(&iv, &TextOptions { timestamp: true, ..TextOptions::default() });
        assert!(t.contains("01:00:01 interval 0.000 .. 1.000 s (partial)"), "{t}");
        assert!(t.contains("CHECK FAILED (buckets 1 != count 2"), "{t}");
        assert!(t.contains("CHECK FAILED: 1 of 1 histograms"), "{t}");
    }

    #[test]
    fn table_has_one_line_per_key() {
        let iv = one(&[1000, 2000, 3000]);
        let t = text(&iv, &TextOptions { table: true, ..TextOptions::default() });
        let line = t.lines().find(|l| l.starts_with("syscall")).unwrap();
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols[..5], ["syscall", "read", "-", "3", "0"]);
        assert_eq!(cols[5], "0.006");
        assert_eq!(cols[7], "1.0");
        assert_eq!(cols[11], "3.0");
        assert_eq!(cols[12], "ok");
    }
}
