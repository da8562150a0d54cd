//! `reanimator stats`: strace `-c`'s summary of one or more traces, and per-group tables with
//! latency quantiles, bytes and I/O sizes. `ra_stats` computes; this module reads the traces,
//! applies `--where`, and prints.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use ra_filter::Filter;
use ra_fsstate::JsonBytes;
use ra_stats::{Accumulator, Group, GroupBy, Options, SizeHist, SortKey, Sorted, Summary};
use ra_trace::TraceReader;
use serde_json::{json, Value as Json};

use crate::records::EventRecord;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// The call (kernel names, as strace has them: `pread64`, `newfstatat`); an fs trace's
    /// operations.
    Call,
    /// The process.
    Pid,
    /// The thread.
    Tid,
    /// The program (the last component of what the process executed, 15 bytes; inherited
    /// over fork; fs traces record it).
    Comm,
    /// The file: a path argument, or the file the descriptor names (followed through opens,
    /// dups, forks and closes); descriptors the trace never opened are one group.
    File,
    /// The file's directory (`--depth N`: its first N components).
    Dir,
    /// The errno returned (`success` for calls that did not fail).
    Errno,
    /// strace's call classes (%file, %desc, %process, %memory, %network, %signal, %ipc,
    /// %creds, %clock, %stat, ...): a call counts in every class it belongs to, so rows
    /// overlap and % time adds up to more than 100.
    Class,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Sort {
    /// Summed time (the default, as strace's).
    #[value(alias = "total-time", alias = "total_time")]
    Time,
    /// Shortest call.
    #[value(alias = "min_time")]
    MinTime,
    /// Longest call.
    #[value(alias = "max_time")]
    MaxTime,
    /// Mean time per call.
    #[value(alias = "avg_time")]
    AvgTime,
    /// Calls.
    #[value(alias = "count")]
    Calls,
    /// Failed calls.
    #[value(alias = "error")]
    Errors,
    /// Bytes read and written.
    Bytes,
    /// Name (ascending).
    #[value(alias = "syscall")]
    Name,
    /// The order in which groups first appear.
    #[value(alias = "none")]
    Nothing,
}

impl Sort {
    fn key(self) -> SortKey {
        match self {
            Sort::Time => SortKey::Time,
            Sort::MinTime => SortKey::MinTime,
            Sort::MaxTime => SortKey::MaxTime,
            Sort::AvgTime => SortKey::AvgTime,
            Sort::Calls => SortKey::Calls,
            Sort::Errors => SortKey::Errors,
            Sort::Bytes => SortKey::Bytes,
            Sort::Name => SortKey::Name,
            Sort::Nothing => SortKey::Nothing,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Sort::Time => "time",
            Sort::MinTime => "min-time",
            Sort::MaxTime => "max-time",
            Sort::AvgTime => "avg-time",
            Sort::Calls => "calls",
            Sort::Errors => "errors",
            Sort::Bytes => "bytes",
            Sort::Name => "name",
            Sort::Nothing => "nothing",
        }
    }
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator stats t.ds                          # strace -c's table\n  \
    reanimator stats t.ds -S calls --top 10\n  \
    reanimator stats t.ds --by file --top 20       # calls, time, quantiles, bytes per file\n  \
    reanimator stats t.ds --by dir --depth 2 --histogram\n  \
    reanimator stats t.ds --by pid --where 'path ~ \"/srv/db/**\"'\n  \
    reanimator stats a.ds b.ds --sum --files --json\n\n\
Times are each call's latency as recorded (time_returned - time_called: wall clock, what \
strace -c -w shows; strace -c without -w sums system CPU time), summed over calls: the line \
below the table gives that sum beside the trace's span. Quantiles come from log-linear \
buckets (within 1/16 of the true value; exact max). A group table holds --max-groups rows; \
when it fills, its lightest half is folded into one `<other>` row, which says how many groups \
it holds. docs/ANALYSIS.md has the details.")]
pub struct StatsArgs {
    #[command(flatten)]
    pub key: crate::output::ReadKeyArgs,
    /// Traces: ours (either recorder), `reanimator fs` traces (aggregate-only ones too) and
    /// Re-Animator's. `-` (once) reads standard input: it is first copied to a private
    /// temporary file (mode 0600, unnamed, in $TMPDIR, gone when the command ends).
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Order of the rows (strace's -S keys, plus bytes).
    #[arg(short = 'S', long, value_enum, default_value_t = Sort::Time, value_name = "KEY")]
    pub sort: Sort,
    /// Group rows by this instead of strace's per-call table: the table then has latency
    /// quantiles (p50, p90, p99, max) and bytes read and written.
    #[arg(long, value_enum, value_name = "KEY")]
    pub by: Option<By>,
    /// With `--by dir`: keep the first N components of the directory.
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Show the first N rows; the rest are summed into one `<other>` row.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Only calls matching this expression (the `dump --where` language).
    #[arg(long = "where", short = 'w', value_name = "EXPR")]
    pub filter: Option<String>,
    /// One JSON object per trace (or one for `--sum`) with every group, quantile and
    /// histogram; numbers as numbers, times in ns.
    #[arg(long)]
    pub json: bool,
    /// Several traces: one table of all their calls instead of one table per trace.
    #[arg(long)]
    pub sum: bool,
    /// Also print the I/O sizes of reads and writes as log2 histograms.
    #[arg(long)]
    pub histogram: bool,
    /// Also print the busiest files (most bytes read and written; `--top` of them, 10 by
    /// default).
    #[arg(long)]
    pub files: bool,
    /// Rows a group table (and the file table) holds in memory before folding its lightest
    /// half into `<other>`.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub max_groups: usize,
}

fn group_by(a: &StatsArgs) -> Result<GroupBy> {
    if a.depth.is_some() && a.by != Some(By::Dir) {
        bail!("--depth applies to --by dir");
    }
    if a.depth == Some(0) {
        bail!("--depth 0: give the number of directory components to keep (1 or more)");
    }
    Ok(match a.by.unwrap_or(By::Call) {
        By::Call => GroupBy::Call,
        By::Pid => GroupBy::Pid,
        By::Tid => GroupBy::Tid,
        By::Comm => GroupBy::Comm,
        By::File => GroupBy::File,
        By::Dir => GroupBy::Dir { depth: a.depth },
        By::Errno => GroupBy::Errno,
        By::Class => GroupBy::Class,
    })
}

/// One summary and what it is of.
struct Report {
    traces: Vec<PathBuf>,
    summary: Summary,
    lost: u64,
    /// Records that are no calls (inherited descriptors, Re-Animator's umask record).
    synthetic: u64,
}

fn is_synthetic(ev: &ra_trace::Event) -> bool {
    ev.extra.iter().any(|(k, v)| k == "synthetic" && *v == ra_trace::ExtraValue::Bool(true))
}

pub fn run(a: StatsArgs) -> Result<ExitCode> {
    let by = group_by(&a)?;
    if a.max_groups < 2 {
        bail!("--max-groups {}: give 2 or more", a.max_groups);
    }
    let filter = match &a.filter {
        Some(src) => Some(Filter::parse(src).map_err(|e| anyhow::anyhow!("--where: {e}"))?),
        None => None,
    };
    let opts = Options {
        by,
        max_groups: a.max_groups,
        files: a.files || a.json,
        max_files: a.max_groups,
        sort: a.sort.key(),
    };
    // Open every trace first: a bad one is reported before any work.
    let mut readers = Vec::new();
    for p in &a.traces {
        let mut tr = TraceReader::open(p)
            .with_context(|| format!("cannot read trace {}", crate::spool::shown(p)))?;
        if let Some(f) = &filter {
            crate::dump::check_fields(f, &crate::dump::known_event_fields(&tr))
                .with_context(|| crate::spool::shown(p).into_owned())?;
        }
        tr.map_file();
        readers.push((p.clone(), tr));
    }
    let size: u64 =
        a.traces.iter().map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)).sum();
    let total: u64 =
        if size >= 64 << 20 { readers.iter().map(|(_, tr)| tr.syscall_records()).sum() } else { 0 };
    let progress = crate::progress::Progress::calls("stats", total);
    let mut reports = Vec::new();
    let mut acc = Accumulator::new(opts.clone());
    let mut seen = 0u64;
    let mut lost = 0u64;
    let mut synthetic = 0u64;
    for (p, tr) in &readers {
        crate::note_incomplete(p, tr.incomplete(), "the calls it holds are counted");
        let n = tr.lost().iter().map(|l| l.count.max(0) as u64).sum::<u64>();
        if n > 0 {
            eprintln!(
                "reanimator: note: {}: {n} calls were lost while recording (--loss drop) and \
                 are not in these counts (`reanimator info` lists them)",
                crate::spool::shown(p)
            );
        }
        lost += n;
        let info = |k: &str| tr.info_value(k);
        acc.begin_trace(info("cwd"), info("command"));
        // The records of descriptors inherited at the start (ours) and Re-Animator's umask
        // record are no calls: they only tell the descriptor model what was open.
        let synthetic_ids = ra_replay::init::synthetic_ids(tr);
        let before = acc.events();
        let mut it = tr.events(None).sharing_buffers();
        if filter.is_none() {
            it = it.without_derived_columns();
        }
        for ev in it {
            let ev = ev.with_context(|| format!("reading {}", crate::spool::shown(p)))?;
            seen += 1;
            if seen % 4096 == 0 {
                progress.set(seen);
            }
            if ev.unique_id < synthetic_ids || is_synthetic(&ev) {
                synthetic += 1;
                acc.add(&ev, false);
                continue;
            }
            let keep = filter.as_ref().is_none_or(|f| f.matches(&EventRecord(&ev)));
            acc.add(&ev, keep);
        }
        if acc.events() == before {
            aggregate(&mut acc, tr, p, filter.is_some())?;
        }
        if !a.sum {
            let done = std::mem::replace(&mut acc, Accumulator::new(opts.clone()));
            let summary = done.finish();
            reports.push(Report { traces: vec![p.clone()], summary, lost, synthetic });
            lost = 0;
            synthetic = 0;
        }
    }
    progress.finish();
    if a.sum {
        reports.push(Report { traces: a.traces.clone(), summary: acc.finish(), lost, synthetic });
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let several = reports.len() > 1;
    for (i, r) in reports.iter().enumerate() {
        if a.json {
            writeln!(out, "{}", report_json(&a, r))?;
            continue;
        }
        if several {
            if i > 0 {
                writeln!(out)?;
            }
            writeln!(out, "==> {} <==", crate::spool::shown(&r.traces[0]))?;
        }
        print_report(&mut out, &a, r)?;
    }
    out.flush()?;
    for r in &reports {
        notes(r);
    }
    Ok(ExitCode::SUCCESS)
}

/// An aggregate-only fs trace: its rows, or a note that the trace holds nothing.
fn aggregate(acc: &mut Accumulator, tr: &TraceReader, p: &Path, filtered: bool) -> Result<()> {
    let mut rows = 0u64;
    for row in ra_trace::fsop::aggregate_rows(tr) {
        let row = row.with_context(|| format!("reading {}", crate::spool::shown(p)))?;
        if filtered {
            bail!(
                "{}: --where needs per-operation records, and this trace holds only the \
                 aggregate rows of `fs mount --aggregate-only`",
                crate::spool::shown(p)
            );
        }
        acc.add_aggregate(&row);
        rows += 1;
    }
    if rows > 0 {
        eprintln!(
            "reanimator: note: {} holds no per-operation records (`fs mount --aggregate-only`): \
             counted from its {rows} aggregate rows (grouped by operation only; quantiles from \
             their log2 histograms, good to a factor of two)",
            crate::spool::shown(p)
        );
    } else {
        eprintln!("reanimator: note: {} holds no calls", crate::spool::shown(p));
    }
    Ok(())
}

fn notes(r: &Report) {
    let s = &r.summary;
    if s.negative > 0 {
        eprintln!(
            "reanimator: note: {} calls returned before they were called (clock steps): \
             counted, not timed",
            s.negative
        );
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn name_of(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

/// strace -c's table (its columns and widths), then the line that says what the times are.
fn print_strace(out: &mut dyn Write, s: &Summary, sorted: &Sorted<'_>) -> Result<()> {
    let dash = "----------------";
    writeln!(
        out,
        "{:>6.6} {:>11.11} {:>11.11} {:>9.9} {:>9.9} syscall",
        "% time", "seconds", "usecs/call", "calls", "errors"
    )?;
    let rule =
        format!("{:6.6} {:11.11} {:11.11} {:9.9} {:9.9} {dash}", dash, dash, dash, dash, dash);
    writeln!(out, "{rule}")?;
    let total_ns = s.total.total_ns;
    let line = |out: &mut dyn Write, g: &Group, name: &str| -> std::io::Result<()> {
        let pct = if total_ns > 0 { g.total_ns as f64 * 100.0 / total_ns as f64 } else { 0.0 };
        let per = g.avg_ns().unwrap_or(0) / 1000;
        let errors = if g.errors > 0 { g.errors.to_string() } else { String::new() };
        writeln!(
            out,
            "{pct:6.2} {:11.6} {per:11} {:9} {errors:>9} {name}",
            secs(g.total_ns),
            g.calls
        )
    };
    for (k, g) in &sorted.rows {
        line(out, g, &name_of(k))?;
    }
    if let Some((n, g)) = &sorted.rest {
        line(out, g, &format!("<other: {n} syscalls>"))?;
    }
    writeln!(out, "{rule}")?;
    line(out, &s.total, "total")?;
    Ok(())
}

/// The line below a table: what its times are.
fn times_line(s: &Summary) -> String {
    let span = s.span_ns().map_or("an unknown span".to_string(), |n| format!("{:.6} s", secs(n)));
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let who = if s.processes > 0 {
        format!("{}, ", plural(s.processes, "process", "processes"))
    } else {
        String::new()
    };
    let untimed = s.untimed + s.negative;
    let untimed = if untimed > 0 {
        format!(
            "; {} without a latency (exit_group, an execve that never returned, a call the \
             trace ends inside) counted, not timed",
            plural(untimed, "call", "calls")
        )
    } else {
        String::new()
    };
    format!(
        "times: each call's latency as recorded (wall clock, as strace -c -w): {:.6} s summed \
         over {} timed calls; {span} from first call to last return ({who}{}){untimed}",
        secs(s.total.total_ns),
        s.total.latency.count(),
        plural(s.threads, "thread", "threads"),
    )
}

fn us(ns: Option<u64>) -> String {
    match ns {
        None => "-".into(),
        Some(n) if n < 1_000_000 => format!("{:.1}", n as f64 / 1e3),
        Some(n) => (n / 1000).to_string(),
    }
}

/// Bytes for people: 512, 4.0K, 1.5M (powers of 1024).
fn human(n: u64) -> String {
    const U: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return n.to_string();
    }
    let mut v = n as f64 / 1024.0;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < U.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.1}{}", U[i])
}

/// The per-group table of `--by`.
fn print_groups(out: &mut dyn Write, s: &Summary, sorted: &Sorted<'_>, by: &str) -> Result<()> {
    writeln!(
        out,
        "{:>9} {:>8} {:>11} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}  {by}",
        "calls",
        "errors",
        "seconds",
        "%time",
        "avg us",
        "p50 us",
        "p90 us",
        "p99 us",
        "max us",
        "read",
        "written"
    )?;
    let total_ns = s.total.total_ns;
    let line = |out: &mut dyn Write, g: &Group, name: &str| -> std::io::Result<()> {
        let pct = if total_ns > 0 { g.total_ns as f64 * 100.0 / total_ns as f64 } else { 0.0 };
        let l = &g.latency;
        writeln!(
            out,
            "{:>9} {:>8} {:>11.6} {pct:>6.2} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}  {name}",
            g.calls,
            g.errors,
            secs(g.total_ns),
            us(g.avg_ns()),
            us(l.quantile(0.5)),
            us(l.quantile(0.9)),
            us(l.quantile(0.99)),
            us(l.max()),
            human(g.read_bytes),
            human(g.written_bytes),
        )
    };
    for (k, g) in &sorted.rows {
        line(out, g, &name_of(k))?;
    }
    if let Some((n, g)) = &sorted.rest {
        line(out, g, &format!("<other: {n} groups>"))?;
    }
    line(out, &s.total, "total")?;
    Ok(())
}

fn print_sizes(out: &mut dyn Write, what: &str, h: &SizeHist) -> Result<()> {
    let Some((first, last)) = h.used() else {
        writeln!(out, "{what}: none")?;
        return Ok(());
    };
    writeln!(out, "{:>22} : {:<9} distribution", what, "count")?;
    let max = h.0.iter().copied().max().unwrap_or(1).max(1);
    for k in first..=last {
        let (lo, hi) = SizeHist::bucket_bounds(k);
        let c = h.0[k];
        let stars = ((c as u128 * 40).div_ceil(max as u128)) as usize;
        writeln!(out, "{lo:>10} -> {hi:<9} : {c:<9} |{:<40}|", "*".repeat(stars.min(40)))?;
    }
    Ok(())
}

fn print_files(out: &mut dyn Write, files: &ra_stats::Table, top: usize) -> Result<()> {
    let sorted = files.sorted(SortKey::Bytes, Some(top));
    writeln!(out, "busiest files (bytes read and written):")?;
    writeln!(
        out,
        "{:>9} {:>8} {:>8} {:>8} {:>11}  file",
        "calls", "errors", "read", "written", "seconds"
    )?;
    for (k, g) in &sorted.rows {
        writeln!(
            out,
            "{:>9} {:>8} {:>8} {:>8} {:>11.6}  {}",
            g.calls,
            g.errors,
            human(g.read_bytes),
            human(g.written_bytes),
            secs(g.total_ns),
            name_of(k)
        )?;
    }
    if let Some((n, g)) = &sorted.rest {
        writeln!(
            out,
            "{:>9} {:>8} {:>8} {:>8} {:>11.6}  <other: {n} files>",
            g.calls,
            g.errors,
            human(g.read_bytes),
            human(g.written_bytes),
            secs(g.total_ns)
        )?;
    }
    Ok(())
}

fn print_report(out: &mut dyn Write, a: &StatsArgs, r: &Report) -> Result<()> {
    let s = &r.summary;
    let sorted = s.groups.sorted(a.sort.key(), a.top);
    match a.by {
        None => print_strace(out, s, &sorted)?,
        Some(_) => print_groups(out, s, &sorted, s.by.name())?,
    }
    writeln!(out, "{}", times_line(s))?;
    if a.histogram {
        writeln!(out)?;
        print_sizes(out, "read sizes (bytes)", &s.total.read_sizes)?;
        writeln!(out)?;
        print_sizes(out, "write sizes (bytes)", &s.total.write_sizes)?;
    }
    if let (true, Some(f)) = (a.files, &s.files) {
        writeln!(out)?;
        print_files(out, f, a.top.unwrap_or(10))?;
    }
    Ok(())
}

fn sizes_json(h: &SizeHist) -> Json {
    Json::Array(
        h.0.iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| {
                let (lo, hi) = SizeHist::bucket_bounds(k);
                json!({"min": lo, "max": hi, "count": c})
            })
            .collect(),
    )
}

fn group_json(g: &Group, total_ns: u64) -> Json {
    let l = &g.latency;
    json!({
        "calls": g.calls,
        "errors": g.errors,
        "total_ns": g.total_ns,
        "percent_time": if total_ns > 0 { g.total_ns as f64 * 100.0 / total_ns as f64 } else { 0.0 },
        "timed_calls": l.count(),
        "latency_ns": {
            "avg": g.avg_ns(), "min": l.min(), "p50": l.quantile(0.5), "p90": l.quantile(0.9),
            "p99": l.quantile(0.99), "max": l.max(),
        },
        "read_bytes": g.read_bytes,
        "reads": g.reads,
        "written_bytes": g.written_bytes,
        "writes": g.writes,
        "read_sizes": sizes_json(&g.read_sizes),
        "write_sizes": sizes_json(&g.write_sizes),
    })
}

fn rows_json(sorted: &Sorted<'_>, total_ns: u64, label: &str) -> (Json, Json) {
    let rows = sorted
        .rows
        .iter()
        .map(|(k, g)| {
            let mut v = group_json(g, total_ns);
            v[label] = JsonBytes::value(k);
            v
        })
        .collect();
    let rest = match &sorted.rest {
        Some((n, g)) => {
            let mut v = group_json(g, total_ns);
            v["groups"] = json!(n);
            v
        }
        None => Json::Null,
    };
    (Json::Array(rows), rest)
}

fn report_json(a: &StatsArgs, r: &Report) -> Json {
    let s = &r.summary;
    let total_ns = s.total.total_ns;
    let (groups, other) = rows_json(&s.groups.sorted(a.sort.key(), a.top), total_ns, "group");
    let files = s.files.as_ref().map(|f| {
        let (rows, other) =
            rows_json(&f.sorted(SortKey::Bytes, a.top.or(Some(10))), total_ns, "file");
        json!({"rows": rows, "other": other, "held": f.len(), "folded": f.folded})
    });
    json!({
        "traces": r.traces.iter().map(|p| crate::spool::json_name(p)).collect::<Vec<_>>(),
        "by": s.by.name(),
        "sort": a.sort.name(),
        "time": "latency: time_returned - time_called, wall clock, summed over calls",
        "events": s.events,
        "counted": s.counted,
        "untimed": s.untimed,
        "negative_latency": s.negative,
        "aggregate_rows": s.aggregate_rows,
        "lost": r.lost,
        "synthetic": r.synthetic,
        "first_ns": s.first_ns,
        "last_ns": s.last_ns,
        "span_ns": s.span_ns(),
        "processes": s.processes,
        "threads": s.threads,
        "groups": groups,
        "other": other,
        "folded": s.groups.folded,
        "total": group_json(&s.total, total_ns),
        "files": files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0");
        assert_eq!(human(1023), "1023");
        assert_eq!(human(4096), "4.0K");
        assert_eq!(human(3 << 30), "3.0G");
        assert_eq!(us(Some(1500)), "1.5");
        assert_eq!(us(Some(2_500_000)), "2500");
        assert_eq!(us(None), "-");
    }
}
