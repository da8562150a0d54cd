//! `reanimator export --format parquet|csv`: traces as tables (`ra_export`), several traces in
//! parallel, each into its own partition (`host=H/trace=T/`) of one dataset. The pass and the
//! sinks live in `ra-export`; this module opens the traces, runs the workers, shows progress
//! and prints the summaries.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use ra_export::columns::Table;
use ra_export::csv::{CsvCompress, CsvSink};
use ra_export::ctf::CtfSink;
use ra_export::parquet::{partition_dir, partition_value, Codec, ParquetSink};
use ra_export::pass::{export_profile, export_trace, PassOptions, PassSummary, Sink, TraceMeta};
use ra_export::row::DataMode;
use ra_export::timeline::ChromeSink;
use ra_trace::TraceReader;

use crate::export::{Compress, ExportArgs, Format};

/// The format and compression of an export.
#[derive(Clone, Copy)]
enum Out {
    Parquet(Codec),
    Csv(CsvCompress),
    /// Chrome trace-event JSON into the file `-o` names.
    Chrome,
    /// A CTF trace directory at `-o`.
    Ctf,
}

/// A trace's export: what it wrote and how long it took (s).
type Outcome = Result<(PassSummary, f64)>;

/// One input: a trace or a profile (`profile --json`).
struct Input {
    path: PathBuf,
    meta: TraceMeta,
}

/// The trace id of a file: its name without `.ds` (or `.json`/`.jsonl`), as a partition value;
/// `stdin` for a trace read from `-`.
fn trace_id(p: &Path) -> String {
    if crate::spool::is_spooled(p) {
        return "stdin".into();
    }
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = [".ds", ".jsonl", ".json"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(&name)
        .to_string();
    partition_value(&stem)
}

fn data_mode(a: &ExportArgs) -> DataMode {
    match a.data {
        crate::export::DataArg::None => DataMode::None,
        crate::export::DataArg::Digest => DataMode::Digest,
        crate::export::DataArg::Full => DataMode::Full,
    }
}

/// The tables a trace's export writes.
fn tables(data: DataMode) -> Vec<Table> {
    let mut v = vec![Table::Calls, Table::Facts, Table::Losses, Table::Snapshots];
    if data == DataMode::Full {
        v.push(Table::Data);
    }
    v
}

pub fn run(a: ExportArgs) -> Result<ExitCode> {
    crate::interrupt::outcome(export(a))
}

/// The partial files an export of `meta` may be writing (which a forced stop removes: those of
/// `ra_export`'s sinks are not [`crate::partial::Partial`]s).
fn partials_of(out: &Path, meta: &TraceMeta, codec: Out) -> Vec<PathBuf> {
    let dot = |p: &Path| -> PathBuf {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        p.with_file_name(format!(".{name}.partial"))
    };
    match codec {
        Out::Parquet(_) => Table::ALL
            .iter()
            .map(|t| partition_dir(out, t.name(), meta).join(".part-0.parquet.partial"))
            .collect(),
        Out::Csv(_) => {
            let d =
                out.join(format!("host={}", meta.host)).join(format!("trace={}", meta.trace_id));
            std::fs::read_dir(&d)
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let n = p.file_name().map(|n| n.to_string_lossy().into_owned());
                    n.is_some_and(|n| n.starts_with('.') && n.ends_with(".partial"))
                })
                .collect()
        }
        Out::Chrome | Out::Ctf => vec![dot(out)],
    }
}

/// What a stopped export says (and, when the stop is forced, the partial files it removes
/// first).
fn export_stopped(
    out: &Path,
    metas: &[TraceMeta],
    codec: Out,
    exported: &AtomicUsize,
    signal: &str,
) -> String {
    for m in metas {
        for p in partials_of(out, m, codec) {
            let _ = std::fs::remove_file(&p).or_else(|_| std::fs::remove_dir_all(&p));
        }
    }
    let n = exported.load(Ordering::SeqCst);
    match codec {
        Out::Chrome | Out::Ctf => format!(
            "export interrupted by {signal}: {} not written (nothing of it left)",
            out.display()
        ),
        _ => format!(
            "export interrupted by {signal}: {n} of {} traces exported whole into {}; the \
             others left out (no file of theirs written, an earlier export of theirs left as \
             it was)",
            metas.len(),
            out.display()
        ),
    }
}

fn export(a: ExportArgs) -> Result<ExitCode> {
    let Some(out) = a.output.clone() else {
        bail!("--format {}: -o DIR is required (the dataset's directory)", a.format.name());
    };
    let codec = match (a.format, a.compress) {
        (Format::Parquet, None | Some(Compress::Zstd)) => Out::Parquet(Codec::Zstd),
        (Format::Parquet, Some(Compress::Snappy)) => Out::Parquet(Codec::Snappy),
        (Format::Parquet, Some(Compress::None)) => Out::Parquet(Codec::None),
        (Format::Csv, None | Some(Compress::None)) => Out::Csv(CsvCompress::None),
        (Format::Csv, Some(Compress::Xz)) => Out::Csv(CsvCompress::Xz),
        (Format::ChromeTrace, None) => Out::Chrome,
        (Format::Ctf, None) => Out::Ctf,
        (f, Some(c)) => bail!("--compress {}: not for --format {}", c.name(), f.name()),
        (f, None) => bail!("--format {}: not a table format", f.name()),
    };
    if !matches!(codec, Out::Parquet(_)) && !a.profiles.is_empty() {
        bail!("--profile: only with --format parquet");
    }
    if matches!(codec, Out::Chrome | Out::Ctf) && a.traces.len() != 1 {
        bail!("--format {} takes one trace", a.format.name());
    }
    if a.traces.is_empty() && a.profiles.is_empty() {
        bail!("nothing to export: give a trace (or --profile FILE)");
    }
    // Every input opened (and its ids checked) before anything is written: a bad file is one
    // line and nothing else happens.
    let mut inputs = Vec::new();
    let mut calls_total = 0;
    for p in &a.traces {
        let tr = open(p, true)?;
        calls_total += tr.syscall_records();
        let meta = TraceMeta::of(&tr, trace_id(p), a.host.as_deref());
        inputs.push(Input { path: p.clone(), meta });
    }
    let mut profiles = Vec::new();
    for p in &a.profiles {
        let f = std::fs::File::open(p)
            .with_context(|| format!("cannot read {}", crate::spool::shown(p)))?;
        let prof = ra_profile::json::read_profile(std::io::BufReader::new(f)).map_err(|e| {
            anyhow!("{}: not a profile (`profile --json`): {e}", crate::spool::shown(p))
        })?;
        let host = a.host.clone().unwrap_or_else(|| {
            if prof.meta.host.is_empty() {
                "unknown".into()
            } else {
                prof.meta.host.clone()
            }
        });
        let meta = TraceMeta { host, trace_id: trace_id(p), backend: "profile".into() };
        profiles.push((p.clone(), meta, prof));
    }
    for i in &mut inputs {
        i.meta.host = partition_value(&i.meta.host);
    }
    for (_, m, _) in &mut profiles {
        m.host = partition_value(&m.host);
    }
    let mut ids = std::collections::HashMap::new();
    for (p, m) in
        inputs.iter().map(|i| (&i.path, &i.meta)).chain(profiles.iter().map(|(p, m, _)| (p, m)))
    {
        if let Some(q) = ids.insert((m.host.clone(), m.trace_id.clone()), p.clone()) {
            bail!(
                "{} and {} would both be host={}/trace={}: rename one of them",
                crate::spool::shown(&q),
                crate::spool::shown(p),
                m.host,
                m.trace_id
            );
        }
    }
    if !matches!(codec, Out::Chrome | Out::Ctf) {
        ra_fsstate::private::create_dir_all(&out)
            .with_context(|| format!("cannot create {}", out.display()))?;
    }
    let data = data_mode(&a);
    let opts = PassOptions { data, ..PassOptions::default() };
    let progress = Arc::new(ra_replay::Progress::default());
    let exported = Arc::new(AtomicUsize::new(0));
    {
        let (out, exported) = (out.clone(), exported.clone());
        let metas: Vec<TraceMeta> = inputs.iter().map(|i| i.meta.clone()).collect();
        crate::interrupt::install(move |sig| export_stopped(&out, &metas, codec, &exported, sig))?;
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, inputs.len().max(1));
    let done = AtomicU64::new(0);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> =
        Mutex::new((0..inputs.len()).map(|_| None).collect());
    let bar = (!a.quiet).then(|| crate::progress::Progress::calls("exporting", calls_total));
    let t0 = Instant::now();
    std::thread::scope(|s| {
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        if let Some(b) = &bar {
            let (done, finished) = (&done, finished.clone());
            s.spawn(move || {
                while !finished.load(Ordering::Relaxed) {
                    b.set(done.load(Ordering::Relaxed));
                    std::thread::sleep(Duration::from_millis(100));
                }
                b.finish();
            });
        }
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(input) = inputs.get(i) else { break };
                    let t = Instant::now();
                    let r = export_one(input, &out, codec, &opts, &done, &progress)
                        .map(|s| (s, t.elapsed().as_secs_f64()));
                    let failed = r.is_err();
                    if !failed {
                        exported.fetch_add(1, Ordering::SeqCst);
                    }
                    results.lock().expect("results")[i] = Some(r);
                    if failed {
                        // The first failure stops the others (their partial files removed).
                        progress.stop.store(true, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        finished.store(true, Ordering::Relaxed);
    });
    let results = results.into_inner().expect("results");
    let mut first_err = None;
    for (input, r) in inputs.iter().zip(results) {
        match r {
            Some(Ok((s, secs))) if !a.quiet => eprintln!(
                "reanimator: exported {}: {} calls, {} data buffers ({} bytes), {} facts, {} \
                 losses, {} snapshot entries to {} in {secs:.2} s ({:.0} calls/s){}",
                crate::spool::shown(&input.path),
                s.calls,
                s.data_rows,
                s.data_bytes,
                s.facts,
                s.losses,
                s.snapshot_entries,
                match codec {
                    Out::Parquet(_) => partition_dir(&out, "TABLE", &input.meta),
                    Out::Csv(_) => out
                        .join(format!("host={}", input.meta.host))
                        .join(format!("trace={}", input.meta.trace_id)),
                    Out::Chrome | Out::Ctf => out.clone(),
                }
                .display(),
                s.calls as f64 / secs.max(1e-9),
                if s.escaped > 0 {
                    format!("; {} values that were not UTF-8 escaped as \\xNN", s.escaped)
                } else {
                    String::new()
                } + &if s.not_on_timeline > 0 {
                    format!(
                        "; {} calls left off the timeline (no call time{})",
                        s.not_on_timeline,
                        if matches!(codec, Out::Ctf) {
                            ", or a call type the registry does not know"
                        } else {
                            ""
                        }
                    )
                } else {
                    String::new()
                }
            ),
            Some(Ok(_)) => {}
            // The first failure, rather than the traces it stopped.
            Some(Err(e)) if first_err.is_none() || is_stopped(first_err.as_ref()) => {
                first_err = Some(e)
            }
            Some(Err(_)) => {}
            None => {}
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    for (p, meta, prof) in &profiles {
        let Out::Parquet(pc) = codec else { unreachable!("--profile is refused for csv") };
        crate::interrupt::check()?;
        let mut sink = ParquetSink::new(&out, meta, &[Table::Profiles], pc)?;
        let n = export_profile(prof, &mut sink)
            .with_context(|| format!("exporting {}", crate::spool::shown(p)))?;
        clear_partition(&out, meta, codec, &sink.files)?;
        if !a.quiet {
            eprintln!(
                "reanimator: exported {}: {n} profile rows to {}",
                crate::spool::shown(p),
                partition_dir(&out, "profiles", meta).display()
            );
        }
    }
    if !a.quiet && inputs.len() > 1 {
        let calls: u64 = done.load(Ordering::Relaxed);
        let secs = t0.elapsed().as_secs_f64();
        eprintln!(
            "reanimator: {} traces, {calls} calls in {secs:.2} s ({:.0} calls/s, {threads} threads)",
            inputs.len(),
            calls as f64 / secs.max(1e-9)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `e` is a trace's export stopped (by a stop request, or by another's failure).
fn is_stopped(e: Option<&anyhow::Error>) -> bool {
    e.is_some_and(|e| {
        e.chain().any(|c| {
            matches!(c.downcast_ref::<ra_export::Error>(), Some(ra_export::Error::Stopped))
        })
    })
}

/// Open a trace; `note`: say when it is not whole (once per trace: when first opened).
fn open(p: &Path, note: bool) -> Result<TraceReader> {
    let meta = std::fs::metadata(p)
        .with_context(|| format!("cannot read trace {}", crate::spool::shown(p)))?;
    if meta.len() == 0 {
        bail!("{}: an empty file, not a trace", crate::spool::shown(p));
    }
    let mut tr = TraceReader::open(p)
        .with_context(|| format!("cannot read trace {}", crate::spool::shown(p)))?;
    tr.map_file();
    if note {
        crate::note_incomplete(p, tr.incomplete(), "the calls it holds are exported");
    }
    Ok(tr)
}

/// Remove what an earlier export of the same trace left in any table but the files this one
/// wrote (`written`, renamed over the earlier ones), so that the partition holds this export
/// alone. Done once this export is in place: one stopped leaves the earlier one whole.
fn clear_partition(out: &Path, meta: &TraceMeta, codec: Out, written: &[PathBuf]) -> Result<()> {
    let files: Vec<PathBuf> = match codec {
        Out::Parquet(_) => Table::ALL
            .iter()
            .map(|t| partition_dir(out, t.name(), meta).join(ra_export::parquet::PART_FILE))
            .collect(),
        Out::Chrome | Out::Ctf => Vec::new(),
        Out::Csv(_) => {
            let d =
                out.join(format!("host={}", meta.host)).join(format!("trace={}", meta.trace_id));
            match std::fs::read_dir(&d) {
                Ok(rd) => rd
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        let n = p.to_string_lossy();
                        n.ends_with(".csv") || n.ends_with(".csv.xz")
                    })
                    .collect(),
                Err(_) => Vec::new(),
            }
        }
    };
    for f in files.into_iter().filter(|f| !written.contains(f)) {
        match std::fs::remove_file(&f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot replace {}", f.display())),
        }
    }
    Ok(())
}

fn export_one(
    input: &Input,
    out: &Path,
    codec: Out,
    opts: &PassOptions,
    done: &AtomicU64,
    progress: &ra_replay::Progress,
) -> Result<PassSummary> {
    let tr = open(&input.path, false)?;
    let (mut pq, mut csv, mut chrome, mut ctf) = (None, None, None, None);
    let sink: &mut dyn Sink = match codec {
        Out::Ctf => ctf.insert(CtfSink::new(out, &input.meta)?),
        Out::Chrome => chrome.insert(ChromeSink::new(out, &input.meta)?),
        Out::Parquet(c) => pq.insert(ParquetSink::new(out, &input.meta, &tables(opts.data), c)?),
        Out::Csv(c) => csv.insert(CsvSink::new(out, &input.meta, &tables(opts.data), c)?),
    };
    let mut last = 0;
    let mut s = export_trace(
        &tr,
        opts,
        sink,
        &mut |n| {
            done.fetch_add(n - last, Ordering::Relaxed);
            last = n;
        },
        &|| progress.stop.load(Ordering::Relaxed) || crate::interrupt::requested().is_some(),
    )
    .with_context(|| format!("exporting {}", crate::spool::shown(&input.path)))?;
    let written = match (&pq, &csv) {
        (Some(p), _) => p.files.clone(),
        (_, Some(c)) => c.files.clone(),
        _ => Vec::new(),
    };
    clear_partition(out, &input.meta, codec, &written)?;
    s.escaped = pq.map_or(0, |p| p.escaped) + csv.map_or(0, |c| c.escaped);
    s.not_on_timeline = chrome.map_or(0, |c| c.untimed) + ctf.map_or(0, |c| c.left_out);
    Ok(s)
}
