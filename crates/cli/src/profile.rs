//! `reanimator profile`: FSprof-style latency profiles (docs/PROFILE.md). With a trace,
//! computed offline from its records; without one, live (`profile_live`); `profile merge`
//! combines JSON profiles exactly. Every output goes through one `ProfileSink`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use ra_filter::{FieldValue, Filter, Record};
use ra_profile::accumulate::Accumulator;
use ra_profile::sink::{JsonSink, SvgSink, Tee, TextSink};
use ra_profile::svg::SvgOptions;
use ra_profile::text::TextOptions;
use ra_profile::{Key, Meta, Profile, ProfileSink};
use ra_trace::TraceReader;

use crate::records::EventRecord;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// One histogram per operation.
    Call,
    /// Per operation and process name (`comm=cat`; fs traces and live profiles know it).
    Comm,
    /// Per operation and process id (`pid=1234`).
    Pid,
    /// Per operation and path prefix of `--depth` components (`path=/usr/lib`). Offline: of
    /// the call's path argument (calls without one go to `path=-`); live: of the file a
    /// descriptor names, counted from the root of its file system (`no file` otherwise).
    Path,
    /// Per operation and file system of the file a descriptor names (live profiles only).
    Fs,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Call => "call",
            By::Comm => "comm",
            By::Pid => "pid",
            By::Path => "path",
            By::Fs => "fs",
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum ProfileSub {
    /// Combine JSON profiles exactly: histograms of the same key and interval are added.
    Merge(MergeArgs),
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// JSON profiles (`reanimator profile --json`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged profile here instead of stdout (mode 0600).
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Collapse all intervals into one (profiles with different interval lengths merge then).
    #[arg(long)]
    pub total: bool,
}

#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  \
    reanimator profile -- sqlite3 db.sqlite < ins.sql      # live (root): every call of the command\n  \
    reanimator profile --layers syscall,class,block,ext4 -T --interval 5 -p 1234\n  \
    reanimator profile --all --by fs --duration 10 --table # every process, per file system\n  \
    reanimator profile --cgroup /sys/fs/cgroup/db --json -o live.json --svg live.svg\n  \
    reanimator profile t.ds --interval 1 --by comm         # offline, from a trace\n  \
    reanimator profile live.json --svg again.svg           # a JSON profile drawn again\n  \
    reanimator profile merge a.json b.json --total -o all.json\n\n\
Live profiles keep their histograms in the kernel (eBPF, root) and print each interval as it \
ends; Ctrl-C prints the interval in progress, marked partial. Every histogram states its own \
check (buckets add up to the count, the total lies within the buckets' bounds). docs/PROFILE.md \
has the details."
)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub key: crate::output::ReadKeyArgs,
    #[command(subcommand)]
    pub sub: Option<ProfileSub>,
    /// A trace (syscall or fs, ours or Re-Animator's) or a JSON profile to show again. Without
    /// it, profiles live (`-p`, `--cgroup`, `--all` or `-- CMD`).
    pub trace: Option<PathBuf>,
    /// Interval length in seconds, on a grid anchored at the Unix epoch (so profiles of
    /// different traces line up and merge). Default: one interval for a trace, 1 s live.
    #[arg(long, value_name = "SECONDS")]
    pub interval: Option<f64>,
    /// Split histograms by call only, or also by process name, process id, path prefix.
    #[arg(long, value_enum, default_value_t = By::Call)]
    pub by: By,
    /// Path components kept with `--by path` (live: directories below the file system's root).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub depth: usize,
    /// Only operations matching this expression (the `dump --where` language).
    #[arg(long = "where", short = 'w', value_name = "EXPR")]
    pub filter: Option<String>,
    /// JSON Lines (docs/PROFILE.md) instead of text.
    #[arg(long, conflicts_with = "table")]
    pub json: bool,
    /// One line per operation instead of histograms.
    #[arg(long)]
    pub table: bool,
    /// Show each interval's wall-clock time (`%H:%M:%S`, local time).
    #[arg(short = 'T', long)]
    pub timestamp: bool,
    /// Also draw latency heat maps into this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Operations drawn in the SVG (largest total time first).
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub svg_top: usize,
    /// Write the text or JSON output here instead of stdout (mode 0600, as is the SVG).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Live: profile this process.
    #[arg(short = 'p', long, value_name = "PID")]
    pub pid: Option<i32>,
    /// Live: profile the processes of this cgroup.
    #[arg(long, value_name = "PATH")]
    pub cgroup: Option<PathBuf>,
    /// Live: profile every process.
    #[arg(long)]
    pub all: bool,
    /// Live: stop after this many seconds.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Live: subtract the probes' self-delay (measured at start-up and shown in the header
    /// either way) from every system call's latency.
    #[arg(long)]
    pub calibrate: bool,
    /// Live: the layers to probe, comma-separated: syscall (the default), class (system calls
    /// summed by I/O class), block, fuse, ext4, writeback, cache, or all.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub layers: Vec<String>,
    /// Live: memory for the kernel's histograms (e.g. 16M, the default); a key that does not
    /// fit is counted and reported, never dropped silently.
    #[arg(long, value_name = "BYTES")]
    pub map_size: Option<String>,
    /// Live: run and profile this command.
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

impl ProfileArgs {
    /// `--interval` in ns (`None` when not given).
    pub fn interval_ns(&self) -> Result<Option<u64>> {
        match self.interval {
            None => Ok(None),
            Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Some((s * 1e9).round() as u64)),
            Some(s) => bail!("--interval {s}: give a positive number of seconds"),
        }
    }
}

pub fn run(a: ProfileArgs) -> Result<ExitCode> {
    if let Some(ProfileSub::Merge(m)) = &a.sub {
        return merge(m);
    }
    a.interval_ns()?;
    let mut sink = make_sink(&a)?;
    match &a.trace {
        Some(path) => {
            let code = offline(&a, path, &mut sink)?;
            Ok(code)
        }
        None => crate::profile_live::run(&a, &mut sink),
    }
}

/// Local time's offset from UTC now, in seconds (for `-T` and the SVG's clock times).
fn utc_offset_s() -> i64 {
    // SAFETY: time(NULL) and localtime_r with pointers to live locals.
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    let f = ra_fsstate::private::create(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    Ok(BufWriter::new(f))
}

/// The text or JSON output (stdout or `-o`), and the SVG beside it.
pub fn make_sink(a: &ProfileArgs) -> Result<Tee> {
    let out: Box<dyn Write + Send> = match &a.output {
        Some(p) => Box::new(create(p)?),
        None => Box::new(BufWriter::new(std::io::stdout())),
    };
    let offset = utc_offset_s();
    let mut tee = Tee::default();
    if a.json {
        tee.0.push(Box::new(JsonSink::new(out)));
    } else {
        let opts = TextOptions { timestamp: a.timestamp, utc_offset_s: offset, table: a.table };
        tee.0.push(Box::new(TextSink::new(out, opts)));
    }
    if let Some(p) = &a.svg {
        let opts = SvgOptions { top: a.svg_top.max(1), utc_offset_s: offset };
        tee.0.push(Box::new(SvgSink::new(create(p)?, opts)));
    }
    Ok(tee)
}

/// True when the file starts (after white space) with `{`: a JSON profile, not a trace.
fn is_json(path: &Path) -> Result<bool> {
    let mut f = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut buf = [0u8; 64];
    let n = f.read(&mut buf).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(buf[..n].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{'))
}

fn read_json(path: &Path) -> Result<Profile> {
    let f = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    ra_profile::json::read_profile(BufReader::new(f))
        .with_context(|| format!("{}: not a JSON profile", path.display()))
}

fn merge(m: &MergeArgs) -> Result<ExitCode> {
    let mut profiles = Vec::new();
    for f in &m.files {
        profiles.push((f.display().to_string(), read_json(f)?));
    }
    let merged = ra_profile::merge::merge_profiles(&profiles, m.total).context("cannot merge")?;
    let out: Box<dyn Write> = match &m.output {
        Some(p) => Box::new(create(p)?),
        None => Box::new(BufWriter::new(std::io::stdout())),
    };
    let mut sink = JsonSink::new(out);
    ra_profile::sink::emit(&merged, &mut sink)?;
    Ok(ExitCode::SUCCESS)
}

/// The group of an operation under `--by`.
fn group(by: By, depth: usize, ev: &ra_trace::Event) -> String {
    let rec = EventRecord(ev);
    let text = |f: &str| match rec.get(f) {
        Some(FieldValue::Bytes(b)) => Some(String::from_utf8_lossy(&b).into_owned()),
        _ => None,
    };
    match by {
        By::Call | By::Fs => String::new(),
        By::Comm => format!("comm={}", text("comm").unwrap_or_else(|| "?".into())),
        By::Pid => format!("pid={}", ev.pid.map_or("?".into(), |p| p.to_string())),
        By::Path => format!("path={}", text("path").map_or("-".into(), |p| path_prefix(&p, depth))),
    }
}

/// The first `depth` components of a path: `/usr/lib/x.so` at depth 2 is `/usr/lib`.
fn path_prefix(p: &str, depth: usize) -> String {
    let abs = p.starts_with('/');
    let parts: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).take(depth.max(1)).collect();
    format!("{}{}", if abs { "/" } else { "" }, parts.join("/"))
}

/// Why an operation has no latency.
#[derive(Default)]
struct Unknown {
    /// Per operation: records without time_called or time_returned.
    missing: BTreeMap<String, u64>,
    /// Per operation: time_returned before time_called.
    negative: BTreeMap<String, u64>,
}

fn offline(a: &ProfileArgs, path: &Path, sink: &mut dyn ProfileSink) -> Result<ExitCode> {
    if !a.cmd.is_empty() || a.pid.is_some() || a.cgroup.is_some() || a.all {
        bail!("a trace and a live target (-p, --cgroup, --all, -- CMD) do not go together");
    }
    if is_json(path)? {
        if a.filter.is_some() || a.interval.is_some() || a.by != By::Call {
            bail!("--where, --interval and --by apply to traces; {} is a JSON profile (shown as it is)", path.display());
        }
        let p = read_json(path)?;
        ra_profile::sink::emit(&p, sink)?;
        return Ok(ExitCode::SUCCESS);
    }
    if a.by == By::Fs {
        bail!("--by fs needs the live profiler (a trace does not say which file system a call touched)");
    }
    if let Some(src) = &a.filter {
        // The expression's syntax first, before the trace is read.
        Filter::parse(src).map_err(|e| anyhow::anyhow!("--where: {e}"))?;
    }
    let tr =
        TraceReader::open(path).with_context(|| format!("cannot read trace {}", path.display()))?;
    let filter = a.filter.as_deref().map(|src| crate::dump::event_filter(src, &tr)).transpose()?;
    crate::note_incomplete(path, tr.incomplete(), "the calls it holds are profiled");
    let info = |k: &str| tr.info_value(k).map(|v| String::from_utf8_lossy(v).into_owned());
    let meta = Meta {
        source: format!("trace:{}", path.display()),
        target: info("command").unwrap_or_else(|| path.display().to_string()),
        interval_ns: a.interval_ns()?.unwrap_or(0),
        by: a.by.name().to_string(),
        host: info("hostname").unwrap_or_default(),
        kernel: info("kernel").unwrap_or_default(),
        overhead: None,
    };
    let big = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) >= 64 << 20;
    let total: u64 = if big {
        tr.dataseries().headers().filter_map(|h| h.ok()).map(|h| u64::from(h.nrecords)).sum()
    } else {
        0
    };
    let progress = crate::progress::Progress::calls("profiling", total);
    let mut acc = Accumulator::new(meta.interval_ns);
    let (mut seen, mut timed) = (0u64, 0u64);
    let mut unknown = Unknown::default();
    for ev in tr.events(None) {
        let ev = ev.with_context(|| format!("reading {}", path.display()))?;
        seen += 1;
        if seen % 4096 == 0 {
            progress.set(seen);
        }
        if filter.as_ref().is_some_and(|f| !f.matches(&EventRecord(&ev))) {
            continue;
        }
        let layer = if ev.def.is_some() { "syscall" } else { "fs" };
        let t = |v: Option<i64>| v.and_then(|x| u64::try_from(x).ok());
        let (called, returned) = (t(ev.time_called), t(ev.time_returned));
        let (Some(called), Some(returned)) = (called, returned) else {
            *unknown.missing.entry(format!("{layer} {}", ev.name)).or_default() += 1;
            if let Some(c) = called.or(returned) {
                acc.count(c, "no_latency", 1);
            }
            continue;
        };
        if returned < called {
            *unknown.negative.entry(format!("{layer} {}", ev.name)).or_default() += 1;
            acc.count(called, "negative_latency", 1);
            continue;
        }
        timed += 1;
        let g = group(a.by, a.depth, &ev);
        let (lat, failed) = (returned - called, ev.failed());
        let class = ra_syscalls::io_class(&ev.name).name();
        acc.add(
            returned,
            Key { layer: "class".into(), op: class.into(), group: g.clone() },
            lat,
            failed,
        );
        acc.add(returned, Key { layer: layer.into(), op: ev.name.clone(), group: g }, lat, failed);
    }
    progress.finish();
    if seen == 0 {
        // An aggregate-only fs trace (`fs mount --aggregate-only`): its histograms are stored.
        if let Some(ivs) = aggregate_intervals(&tr, path)? {
            if filter.is_some() {
                bail!(
                    "{}: --where needs per-operation records, and this trace holds only the \
                     aggregate rows of `fs mount --aggregate-only`",
                    path.display()
                );
            }
            // The fact says how the daemon aggregated: "every 1 s, by op".
            let fact =
                tr.info_value("fs_aggregate").map(|v| String::from_utf8_lossy(v).into_owned());
            let every = fact
                .as_deref()
                .and_then(|f| f.strip_prefix("every "))
                .and_then(|f| f.split_once(" s"))
                .and_then(|(secs, _)| secs.parse::<f64>().ok())
                .map(|secs| (secs * 1e9) as u64);
            let meta = Meta {
                interval_ns: every
                    .unwrap_or_else(|| ivs.first().map_or(0, |iv| iv.end_ns - iv.start_ns)),
                by: fact
                    .as_deref()
                    .and_then(|f| f.rsplit_once("by ").map(|(_, b)| b.to_string()))
                    .unwrap_or_else(|| "op".into()),
                ..meta
            };
            eprintln!(
                "reanimator: note: {} holds no per-operation records (`fs mount \
                 --aggregate-only`): profiled from its {} aggregate intervals as recorded \
                 (--interval, --by and --depth do not apply)",
                path.display(),
                ivs.len()
            );
            sink.meta(&meta)?;
            for iv in &ivs {
                sink.interval(iv)?;
            }
            sink.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("reanimator: note: {} holds no operations: the profile is empty", path.display());
    }
    let missing: u64 =
        unknown.missing.values().sum::<u64>() + unknown.negative.values().sum::<u64>();
    if timed == 0 && missing > 0 {
        bail!(
            "{}: none of its {missing} records has a latency (time_called and time_returned): \
             nothing to profile",
            path.display()
        );
    }
    let list = |m: &BTreeMap<String, u64>| {
        m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    };
    if !unknown.missing.is_empty() {
        eprintln!(
            "reanimator: note: {} records without a latency (no time_returned: calls that never \
             returned, such as exit_group, or cut short), counted as no_latency: {}",
            unknown.missing.values().sum::<u64>(),
            list(&unknown.missing)
        );
    }
    if !unknown.negative.is_empty() {
        eprintln!(
            "reanimator: note: {} records returned before they were called (clock steps), \
             counted as negative_latency: {}",
            unknown.negative.values().sum::<u64>(),
            list(&unknown.negative)
        );
    }
    sink.meta(&meta)?;
    for iv in acc.finish() {
        sink.interval(&iv)?;
    }
    sink.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// The intervals of a trace's `Reanimator::FsAggregate` rows (keys `fs OP [GROUP]`), or None
/// when it has none.
fn aggregate_intervals(tr: &TraceReader, path: &Path) -> Result<Option<Vec<ra_profile::Interval>>> {
    let mut by_interval: BTreeMap<(u64, u64), ra_profile::Interval> = BTreeMap::new();
    for row in ra_trace::fsop::aggregate_rows(tr) {
        let row = row.with_context(|| format!("reading {}", path.display()))?;
        let t = |v: i64| u64::try_from(v).unwrap_or(0);
        let (start, end) = (t(row.interval_start_ns), t(row.interval_end_ns));
        let iv = by_interval.entry((start, end)).or_insert_with(|| ra_profile::Interval {
            start_ns: start,
            end_ns: end,
            partial: false,
            hists: BTreeMap::new(),
            counters: BTreeMap::new(),
        });
        let g = String::from_utf8_lossy(&row.group).into_owned();
        let group = if g.is_empty() {
            g
        } else if g.starts_with('/') {
            format!("path={g}")
        } else if g.bytes().all(|b| b.is_ascii_digit()) {
            format!("uid={g}")
        } else {
            g
        };
        let st = &row.stats;
        let h = ra_profile::Hist {
            buckets: st.hist,
            count: st.count,
            total_ns: st.total_ns,
            min_ns: st.min_ns,
            max_ns: st.max_ns,
            errors: st.errors,
        };
        iv.hists.entry(Key { layer: "fs".into(), op: row.operation, group }).or_default().merge(&h);
    }
    Ok((!by_interval.is_empty()).then(|| by_interval.into_values().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_prefixes() {
        assert_eq!(path_prefix("/usr/lib/x.so", 2), "/usr/lib");
        assert_eq!(path_prefix("/etc", 2), "/etc");
        assert_eq!(path_prefix("a/b/c", 1), "a");
        assert_eq!(path_prefix("//x//y/z", 2), "/x/y");
    }
}
