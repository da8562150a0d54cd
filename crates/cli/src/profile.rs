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
use ra_profile::rows::Weight;
use ra_profile::sink::{JsonSink, SvgSink, Tee, TextSink};
use ra_profile::svg::SvgOptions;
use ra_profile::text::TextOptions;
use ra_profile::{Key, Meta, Profile, ProfileSink, Scale};
use ra_trace::fileio::{FileIoTracker, FileOpKind};
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
    /// Compare two profiles key by key, with a test that tells changes from noise.
    Compare(CompareArgs),
}

#[derive(Args, Debug)]
#[command(after_help = "Per key: the change in count, total and quantiles, the buckets side by \
side, and the chi-square test of homogeneity on the bucket counts (sparse buckets merged). A key \
DIFFERS when p < alpha / (keys tested) and at least --min-shift of its calls moved bucket. \
Exit status: 0 when no key differs, 1 when one does, 2 on bad input (different groupings, \
buckets, sampling, values, layers; different interval lengths with --per-interval).")]
pub struct CompareArgs {
    /// The baseline: a JSON profile (`reanimator profile --json`) or a trace.
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// Compared with A: a JSON profile or a trace.
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// JSON Lines instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also draw both histograms of each key side by side into this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Keys drawn in the SVG (differing keys first).
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub svg_top: usize,
    /// Write the text or JSON here instead of stdout (mode 0600).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The family-wise false-alarm rate of the test.
    #[arg(long, default_value_t = 0.01)]
    pub alpha: f64,
    /// The least share of a key's calls that must move bucket for a change to count.
    #[arg(long, default_value_t = 0.2, value_name = "SHARE")]
    pub min_shift: f64,
    /// Compare the profiles interval by interval (by position) instead of as wholes.
    #[arg(long)]
    pub per_interval: bool,
    /// For traces: the interval length (seconds) and grouping they are profiled with.
    #[arg(long, value_name = "SECONDS")]
    pub interval: Option<f64>,
    #[arg(long, value_enum, default_value_t = By::Call)]
    pub by: By,
    /// For traces: the buckets (log2, log10, linear:WIDTH).
    #[arg(long, value_name = "SCALE")]
    pub buckets: Option<String>,
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
    reanimator profile merge a.json b.json --total -o all.json\n  \
    reanimator profile compare ext4.json fuse.json --svg cmp.svg  # what changed, beyond noise\n  \
    reanimator profile t.ds --weight time --value size --buckets log10\n  \
    reanimator profile t.ds --interval 1 --correlate syscall:read,syscall:fsync\n  \
    reanimator profile --listen 127.0.0.1:9464 --sample 16 --all   # for Prometheus\n\n\
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
    /// it, profiles live (`-p`, `--cgroup`, `--all` or `-- CMD`). `-` reads standard input: it is first copied to a private temporary
    /// file (mode 0600, unnamed, in $TMPDIR, gone when the command ends) and read from there.
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
    /// Rows, bars and heat maps show calls per bucket (count) or the time they took
    /// (time: count x latency, FSprof's delay-weighted view).
    #[arg(long, default_value = "count", value_name = "count|time")]
    pub weight: String,
    /// Buckets: log2 (the default: 2^(k-1) <= v < 2^k), log10, or linear:WIDTH (WIDTH in the
    /// profile's unit, or with a suffix: 100us, 4k).
    #[arg(long, value_name = "SCALE")]
    pub buckets: Option<String>,
    /// Count each call with probability 1/N (one in N per thread on average) and scale the
    /// counts by N (stated in the header and the JSON). Live: the system-call layer (and
    /// class) only.
    #[arg(long, value_name = "N")]
    pub sample: Option<u64>,
    /// Histograms of a parameter instead of latency, from traces or live: size (bytes a read
    /// or write moved), offset (its file offset), seek-distance (bytes from where the
    /// previous read or write of the file ended), queue-depth (reads, writes, syncs and
    /// async calls of the target in flight when the call began, itself included).
    #[arg(long, value_name = "NAME")]
    pub value: Option<String>,
    /// Correlate two keys over the intervals (`layer:op[@group],layer:op[@group]`, e.g.
    /// `syscall:read,syscall:fsync`), or `top` / `top:N` for the most strongly correlated
    /// pairs. Prints the coefficients and the aligned series instead of the histograms.
    #[arg(long, value_name = "KEYS")]
    pub correlate: Vec<String>,
    /// Live: serve the profile's cumulative histograms as Prometheus metrics at
    /// http://ADDR/metrics (loopback addresses only: OpenMetrics or Prometheus text, and
    /// the protobuf format that carries native histograms).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
    /// Live: run and profile this command.
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

/// The values `--value` takes.
pub const VALUES: [&str; 4] = ["size", "offset", "seek-distance", "queue-depth"];

impl ProfileArgs {
    /// `--interval` in ns (`None` when not given).
    pub fn interval_ns(&self) -> Result<Option<u64>> {
        match self.interval {
            None => Ok(None),
            Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Some((s * 1e9).round() as u64)),
            Some(s) => bail!("--interval {s}: give a positive number of seconds"),
        }
    }

    /// `--buckets`, log2 unless given.
    pub fn scale(&self) -> Result<Scale> {
        match &self.buckets {
            None => Ok(Scale::Log2),
            Some(b) => Scale::parse(b).map_err(|e| anyhow::anyhow!("--buckets: {e}")),
        }
    }

    /// `--sample`, 1 unless given.
    pub fn sample(&self) -> Result<u64> {
        match self.sample {
            None => Ok(1),
            Some(0) => bail!("--sample 0: give a positive N (one call in N is counted)"),
            Some(n) => Ok(n),
        }
    }

    /// `--value`, None for latency profiles.
    pub fn value(&self) -> Result<Option<&str>> {
        match self.value.as_deref() {
            None | Some("latency") => Ok(None),
            Some(v) if VALUES.contains(&v) => Ok(Some(v)),
            Some(v) => bail!("--value: unknown value `{v}` (known: {})", VALUES.join(", ")),
        }
    }

    fn weight(&self) -> Result<Weight> {
        Weight::parse(&self.weight).map_err(|e| anyhow::anyhow!("{e}"))
    }
}

pub fn run(a: ProfileArgs) -> Result<ExitCode> {
    match &a.sub {
        Some(ProfileSub::Merge(m)) => return merge(m),
        Some(ProfileSub::Compare(c)) => return compare(c),
        None => {}
    }
    a.interval_ns()?;
    a.scale()?;
    a.sample()?;
    a.value()?;
    a.weight()?;
    if a.listen.is_some() && a.trace.is_some() {
        bail!("--listen serves live profiles; {} is profiled offline (give -p, --cgroup, --all or -- CMD)", a.trace.as_ref().map_or(String::new(), |t| t.display().to_string()));
    }
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

/// The text or JSON output (stdout or `-o`), and the SVG beside it; with `--correlate`, the
/// correlation report instead; with `--listen`, the metrics endpoint beside them.
pub fn make_sink(a: &ProfileArgs) -> Result<Tee> {
    let out: Box<dyn Write + Send> = match &a.output {
        Some(p) => Box::new(create(p)?),
        None => Box::new(BufWriter::new(std::io::stdout())),
    };
    let offset = utc_offset_s();
    let weight = a.weight()?;
    let mut tee = Tee::default();
    if let Some(addr) = &a.listen {
        tee.0.push(Box::new(crate::profile_metrics::MetricsSink::listen(addr)?));
    }
    if !a.correlate.is_empty() {
        let what = parse_correlate(&a.correlate)?;
        let svg = match &a.svg {
            Some(p) => Some(create(p)?),
            None => None,
        };
        tee.0.push(Box::new(CorrelateSink {
            what,
            out,
            svg,
            json: a.json,
            profile: Profile::default(),
        }));
        return Ok(tee);
    }
    if a.json {
        tee.0.push(Box::new(JsonSink::with_weight(out, weight)));
    } else {
        let opts = TextOptions {
            timestamp: a.timestamp,
            utc_offset_s: offset,
            table: a.table,
            weight,
            ..TextOptions::default()
        };
        tee.0.push(Box::new(TextSink::new(out, opts)));
    }
    if let Some(p) = &a.svg {
        let opts = SvgOptions { top: a.svg_top.max(1), utc_offset_s: offset, weight };
        tee.0.push(Box::new(SvgSink::new(create(p)?, opts)));
    }
    Ok(tee)
}

/// True when the file starts (after white space) with `{`: a JSON profile, not a trace.
fn is_json(path: &Path) -> Result<bool> {
    let mut f =
        File::open(path).with_context(|| format!("cannot read {}", crate::spool::shown(path)))?;
    let mut buf = [0u8; 64];
    let n =
        f.read(&mut buf).with_context(|| format!("cannot read {}", crate::spool::shown(path)))?;
    Ok(buf[..n].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{'))
}

fn read_json(path: &Path) -> Result<Profile> {
    let f =
        File::open(path).with_context(|| format!("cannot read {}", crate::spool::shown(path)))?;
    ra_profile::json::read_profile(BufReader::new(f))
        .with_context(|| format!("{}: not a JSON profile", crate::spool::shown(path)))
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

/// A JSON profile as it is, or a trace profiled offline with `opts` (`--interval`, `--by`,
/// `--buckets`).
fn load_profile(path: &Path, opts: &[String]) -> Result<Profile> {
    if is_json(path)? {
        return read_json(path);
    }
    #[derive(clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        p: ProfileArgs,
    }
    let mut argv = vec!["profile".to_string(), path.display().to_string()];
    argv.extend(opts.iter().cloned());
    let w = <Wrap as clap::Parser>::try_parse_from(&argv).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut c = ra_profile::sink::Collect::default();
    offline(&w.p, path, &mut c)?;
    Ok(c.0)
}

fn compare(c: &CompareArgs) -> Result<ExitCode> {
    if !(c.alpha > 0.0 && c.alpha < 1.0) {
        bail!("--alpha {}: give a probability between 0 and 1", c.alpha);
    }
    if !(0.0..=1.0).contains(&c.min_shift) {
        bail!("--min-shift {}: give a share between 0 and 1", c.min_shift);
    }
    let mut opts = vec!["--by".to_string(), c.by.name().to_string()];
    if let Some(i) = c.interval {
        opts.extend(["--interval".to_string(), i.to_string()]);
    }
    if let Some(b) = &c.buckets {
        opts.extend(["--buckets".to_string(), b.clone()]);
    }
    let (na, nb) = (c.a.display().to_string(), c.b.display().to_string());
    let pa = load_profile(&c.a, &opts)?;
    let pb = load_profile(&c.b, &opts)?;
    let co = ra_profile::compare::CompareOptions {
        alpha: c.alpha,
        min_shift: c.min_shift,
        per_interval: c.per_interval,
    };
    let cmp = ra_profile::compare::compare(&na, &pa, &nb, &pb, &co)
        .map_err(|e| anyhow::anyhow!("cannot compare: {e}"))?;
    let mut out: Box<dyn Write> = match &c.output {
        Some(p) => Box::new(create(p)?),
        None => Box::new(BufWriter::new(std::io::stdout())),
    };
    if c.json {
        for v in ra_profile::json::comparison_values(&cmp) {
            writeln!(out, "{v}")?;
        }
    } else {
        ra_profile::text::write_comparison(&mut out, &cmp)?;
    }
    out.flush()?;
    if let Some(p) = &c.svg {
        let mut f = create(p)?;
        f.write_all(
            ra_profile::svg::render(&ra_profile::svg::comparison_layout(&cmp, c.svg_top.max(1)))
                .as_bytes(),
        )?;
        f.flush()?;
    }
    let differs = cmp.keys.iter().any(|k| k.verdict == ra_profile::compare::Verdict::Differs);
    Ok(if differs { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// What `--correlate` asks for.
enum Correlate {
    Pairs(Vec<(String, String)>),
    Top(usize),
}

fn parse_correlate(given: &[String]) -> Result<Correlate> {
    if let [one] = given {
        if one == "top" {
            return Ok(Correlate::Top(10));
        }
        if let Some(n) = one.strip_prefix("top:") {
            let n: usize = n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                anyhow::anyhow!("--correlate {one}: give top or top:N with N > 0")
            })?;
            return Ok(Correlate::Top(n));
        }
    }
    let mut pairs = Vec::new();
    for g in given {
        let Some((a, b)) = g.split_once(',') else {
            bail!("--correlate {g}: give two keys, layer:op,layer:op (e.g. syscall:read,syscall:fsync), or top[:N]");
        };
        pairs.push((a.to_string(), b.to_string()));
    }
    Ok(Correlate::Pairs(pairs))
}

/// `--correlate`: keeps the intervals and reports the correlations at the end.
struct CorrelateSink {
    what: Correlate,
    out: Box<dyn Write + Send>,
    svg: Option<BufWriter<File>>,
    json: bool,
    profile: Profile,
}

impl ProfileSink for CorrelateSink {
    fn meta(&mut self, meta: &Meta) -> std::io::Result<()> {
        self.profile.meta = meta.clone();
        Ok(())
    }

    fn interval(&mut self, iv: &ra_profile::Interval) -> std::io::Result<()> {
        self.profile.intervals.push(iv.clone());
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        use ra_profile::correlate;
        let p = &self.profile;
        let bad = |e: ra_profile::Error| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string())
        };
        let pairs = match &self.what {
            Correlate::Top(n) => correlate::ranked(p, *n),
            Correlate::Pairs(v) => {
                let mut out = Vec::new();
                for (a, b) in v {
                    let ka = correlate::parse_key(a, p).map_err(bad)?;
                    let kb = correlate::parse_key(b, p).map_err(bad)?;
                    out.push(correlate::correlate(p, &ka, &kb));
                }
                out
            }
        };
        if self.json {
            for v in ra_profile::json::correlation_values(&p.meta, &pairs) {
                writeln!(self.out, "{v}")?;
            }
        } else {
            ra_profile::text::write_correlations(
                &mut self.out,
                &p.meta,
                &pairs,
                p.intervals.len(),
            )?;
        }
        self.out.flush()?;
        if let Some(f) = &mut self.svg {
            f.write_all(
                ra_profile::svg::render(&ra_profile::svg::correlation_layout(&p.meta, &pairs))
                    .as_bytes(),
            )?;
            f.flush()?;
        }
        Ok(())
    }
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

/// SplitMix64's finaliser: a well-mixed hash of one word.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The values of a value profile (`--value`), per call, computed in trace order.
struct ValueState {
    value: Option<String>,
    tracker: FileIoTracker,
    ops: Vec<ra_trace::fileio::FileOp>,
    /// seek-distance: where the last read or write of each file ended.
    ends: std::collections::HashMap<std::sync::Arc<[u8]>, u64>,
    /// queue-depth: the return times of the I/O calls in flight.
    in_flight: std::collections::BinaryHeap<std::cmp::Reverse<u64>>,
}

impl ValueState {
    fn new(value: Option<&str>, cwd: Option<&[u8]>) -> ValueState {
        ValueState {
            value: value.map(str::to_string),
            tracker: FileIoTracker::new(cwd),
            ops: Vec::new(),
            ends: Default::default(),
            in_flight: Default::default(),
        }
    }

    /// The values one call contributes: a read or write of a file one (its size, offset or
    /// distance from the previous one's end; vectored calls one per call), an I/O call's
    /// queue depth one; other calls none.
    /// Every event of the trace passes here, in order (descriptors are followed through the
    /// calls a filter leaves out too).
    fn of(&mut self, ev: &ra_trace::Event) -> Vec<u64> {
        use ra_syscalls::IoClass;
        let Some(value) = self.value.as_deref() else { return Vec::new() };
        if value == "queue-depth" {
            let t = |v: Option<i64>| v.and_then(|x| u64::try_from(x).ok());
            let (Some(called), Some(returned)) = (t(ev.time_called), t(ev.time_returned)) else {
                return Vec::new();
            };
            let io = matches!(
                ev.io_class(),
                IoClass::Read | IoClass::Write | IoClass::Sync | IoClass::Async
            );
            if !io {
                return Vec::new();
            }
            while self.in_flight.peek().is_some_and(|r| r.0 <= called) {
                self.in_flight.pop();
            }
            let depth = self.in_flight.len() as u64 + 1;
            self.in_flight.push(std::cmp::Reverse(returned));
            return vec![depth];
        }
        self.ops.clear();
        self.tracker.apply(ev, &mut |_, _| true, &mut self.ops);
        let mut out = Vec::new();
        for op in &self.ops {
            let (offset, len) = match op.kind {
                FileOpKind::Read { offset, len } | FileOpKind::Write { offset, len } => {
                    (offset, len)
                }
                _ => continue,
            };
            out.push(match value {
                "size" => len,
                "offset" => offset,
                _ => {
                    // From where the previous read or write of the file ended (the first:
                    // from offset 0).
                    let end = self.ends.insert(op.path.clone(), offset.saturating_add(len));
                    offset.abs_diff(end.unwrap_or(0))
                }
            });
        }
        out
    }
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
        if a.filter.is_some()
            || a.interval.is_some()
            || a.by != By::Call
            || a.buckets.is_some()
            || a.sample.is_some()
            || a.value.is_some()
        {
            bail!(
                "--where, --interval, --by, --buckets, --sample and --value apply to traces; {} \
                 is a JSON profile (shown as it is)",
                crate::spool::shown(path)
            );
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
    let tr = TraceReader::open(path)
        .with_context(|| format!("cannot read trace {}", crate::spool::shown(path)))?;
    let filter = a.filter.as_deref().map(|src| crate::dump::event_filter(src, &tr)).transpose()?;
    crate::note_incomplete(path, tr.incomplete(), "the calls it holds are profiled");
    let info = |k: &str| tr.info_value(k).map(|v| String::from_utf8_lossy(v).into_owned());
    let meta = Meta {
        source: format!("trace:{}", crate::spool::json_name(path)),
        target: info("command").unwrap_or_else(|| crate::spool::json_name(path)),
        interval_ns: a.interval_ns()?.unwrap_or(0),
        by: a.by.name().to_string(),
        host: info("hostname").unwrap_or_default(),
        kernel: info("kernel").unwrap_or_default(),
        buckets: a.scale()?,
        sample: a.sample()?,
        value: a.value()?.unwrap_or("latency").to_string(),
        overhead: None,
    };
    let (sample, value) = (meta.sample, a.value()?);
    let mut values = ValueState::new(value, tr.info_value("cwd"));
    let mut seq: std::collections::HashMap<i32, u64> = std::collections::HashMap::new();
    let big = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) >= 64 << 20;
    let total: u64 = if big {
        tr.dataseries().headers().filter_map(|h| h.ok()).map(|h| u64::from(h.nrecords)).sum()
    } else {
        0
    };
    let progress = crate::progress::Progress::calls("profiling", total);
    let mut acc = Accumulator::with_scale(meta.interval_ns, meta.buckets);
    let (mut seen, mut timed) = (0u64, 0u64);
    let mut unknown = Unknown::default();
    for ev in tr.events(None) {
        let ev = ev.with_context(|| format!("reading {}", crate::spool::shown(path)))?;
        seen += 1;
        if seen % 4096 == 0 {
            progress.set(seen);
        }
        let vals = values.of(&ev);
        if filter.as_ref().is_some_and(|f| !f.matches(&EventRecord(&ev))) {
            continue;
        }
        if sample > 1 {
            // One call in N per thread on average, chosen by a hash of the thread and its
            // call's position (reproducible, and a periodic sequence of calls such as read,
            // write, read, write does not alias with N).
            let tid = ev.tid.or(ev.pid).unwrap_or(0);
            let n = seq.entry(tid).or_default();
            *n += 1;
            if splitmix(u64::from(tid as u32) << 40 ^ *n) % sample != 0 {
                continue;
            }
        }
        if ev.def.is_some_and(|d| d.is_signal()) {
            // A delivered signal: no operation, no latency.
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
        let class = ev.io_class().name();
        if value.is_some() {
            for &v in &vals {
                let keys = [
                    Key { layer: "class".into(), op: class.into(), group: g.clone() },
                    Key { layer: layer.into(), op: ev.name.clone(), group: g.clone() },
                ];
                for k in keys {
                    acc.add_value(called, returned, k, v, failed);
                }
            }
            continue;
        }
        acc.add(
            returned,
            Key { layer: "class".into(), op: class.into(), group: g.clone() },
            lat,
            failed,
        );
        acc.add(returned, Key { layer: layer.into(), op: ev.name.clone(), group: g }, lat, failed);
    }
    progress.finish();
    acc.scale_counts(sample);
    if seen == 0 {
        // An aggregate-only fs trace (`fs mount --aggregate-only`): its histograms are stored.
        if let Some(ivs) = aggregate_intervals(&tr, path)? {
            if filter.is_some() {
                bail!(
                    "{}: --where needs per-operation records, and this trace holds only the \
                     aggregate rows of `fs mount --aggregate-only`",
                    crate::spool::shown(path)
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
                crate::spool::shown(path),
                ivs.len()
            );
            sink.meta(&meta)?;
            for iv in &ivs {
                sink.interval(iv)?;
            }
            sink.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "reanimator: note: {} holds no operations: the profile is empty",
            crate::spool::shown(path)
        );
    }
    let missing: u64 =
        unknown.missing.values().sum::<u64>() + unknown.negative.values().sum::<u64>();
    if timed == 0 && missing > 0 {
        bail!(
            "{}: none of its {missing} records has a latency (time_called and time_returned): \
             nothing to profile",
            crate::spool::shown(path)
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
        let row = row.with_context(|| format!("reading {}", crate::spool::shown(path)))?;
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
