//! Text output: bcc's per-interval log2 histograms (`nsecs : count distribution`) and the
//! compact `--table`. The `write_*` functions lay out values computed by [`crate::rows`] and
//! [`IntervalView::new`]; they compute nothing themselves.

use std::io::{self, Write};

use crate::rows::{self, human_ns, HistRows, Summary};
use crate::{Interval, Key, Meta};

/// How text is laid out.
#[derive(Clone, Debug, Default)]
pub struct TextOptions {
    /// Print the wall-clock time of each interval's end (bcc's `-T`, `%H:%M:%S`).
    pub timestamp: bool,
    /// Local time's offset from UTC in seconds, for `timestamp` (the caller knows the zone).
    pub utc_offset_s: i64,
    /// One line per key instead of histograms.
    pub table: bool,
}

/// Everything one interval's text shows, computed.
pub struct IntervalView<'a> {
    /// `HH:MM:SS` of the interval's end, with `-T`.
    pub clock: Option<String>,
    /// Seconds since the profile's first interval began.
    pub rel_start_s: f64,
    pub rel_end_s: f64,
    pub partial: bool,
    pub blocks: Vec<Block<'a>>,
    pub counters: Vec<(&'a str, u64)>,
    /// Reads' page-cache hit ratio (live profiles with the `cache` layer).
    pub read_hit_ratio: Option<f64>,
    pub checks_ok: usize,
    pub checks_failed: usize,
}

/// One key's block.
pub struct Block<'a> {
    pub key: &'a Key,
    pub summary: Summary,
    pub rows: HistRows,
}

impl<'a> IntervalView<'a> {
    /// `origin_ns`: the start of the profile's first interval (times are shown relative to it).
    pub fn new(iv: &'a Interval, origin_ns: u64, opts: &TextOptions) -> IntervalView<'a> {
        let blocks = iv
            .hists
            .iter()
            .map(|(key, h)| Block {
                key,
                summary: rows::summary(h),
                rows: rows::hist_rows(&h.buckets),
            })
            .collect();
        let (checks_ok, checks_failed) = rows::interval_checks(iv);
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
fn write_title(out: &mut dyn Write, b: &Block) -> io::Result<()> {
    let s = &b.summary;
    write!(out, "{} {}", b.key.layer, b.key.op)?;
    if !b.key.group.is_empty() {
        write!(out, "  [{}]", b.key.group)?;
    }
    writeln!(
        out,
        "  count {}, total {}, avg {}, p50 {}, p99 {}, errors {}",
        s.count,
        human_ns(s.total_ns),
        human_ns(s.avg_ns),
        human_ns(s.p50_ns),
        human_ns(s.p99_ns),
        s.errors
    )
}

/// bcc's `print_log2_hist` rows, in nanoseconds.
pub fn write_log2_hist(out: &mut dyn Write, r: &HistRows) -> io::Result<()> {
    if r.rows.is_empty() {
        return Ok(());
    }
    let (pad, label) = if r.value_width == 10 { (5, 19) } else { (15, 29) };
    writeln!(out, "{:pad$}{:<label$} : count    distribution", "", "nsecs")?;
    let w = r.value_width;
    for row in &r.rows {
        writeln!(
            out,
            "{:>w$} -> {:<w$} : {:<8} |{:<sw$}|",
            row.lo_ns,
            row.hi_ns,
            row.count,
            "*".repeat(row.stars),
            sw = r.stars_width
        )?;
    }
    Ok(())
}

/// `check: ok (buckets N = count N; total T within [lo, hi])` or `CHECK FAILED (...)`.
pub fn write_check(out: &mut dyn Write, c: &crate::Check) -> io::Result<()> {
    let within = c.total_lo_ns <= c.total_ns && c.total_ns <= c.total_hi_ns;
    writeln!(
        out,
        "{} (buckets {} {} count {}; total {} ns {} [{}, {}])",
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
        write_title(out, b)?;
        write_log2_hist(out, &b.rows)?;
        write_check(out, &b.summary.check)?;
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

/// The `--table` column heads.
pub fn write_table_head(out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{:<8} {:<16} {:<20} {:>9} {:>7} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} check",
        "layer",
        "op",
        "group",
        "count",
        "errors",
        "total_ms",
        "avg_us",
        "min_us",
        "p50_us",
        "p90_us",
        "p99_us",
        "max_us"
    )
}

/// One interval as table lines (after its header line).
pub fn write_table_interval(out: &mut dyn Write, v: &IntervalView) -> io::Result<()> {
    write_header(out, v)?;
    write_table_head(out)?;
    let us = |ns: u64| ns as f64 / 1e3;
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
            s.total_ns as f64 / 1e6,
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
