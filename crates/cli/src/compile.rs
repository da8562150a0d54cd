//! `reanimator compile`: a trace compiled into a replay plan (Replayfs' trace compiler).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use ra_replay::{PlanError, Progress};
use ra_trace::TraceReader;

use crate::partial::Partial;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator compile trace.ds -o trace.plan\n  \
    reanimator replay trace.plan --root /tmp/r --init\n\n\
    A plan holds the trace's calls in the order replay hands them out, each with the \
    ordering gates replay would otherwise compute while it runs (the previous call on each \
    file, the clone that made a thread, the call that freed a descriptor number), the \
    processes and threads they run in, and the trace's data buffers stored once per distinct \
    content (BLAKE3), in a region replay maps into memory. `reanimator replay PLAN` takes a \
    plan wherever it takes a trace, with the same options and the same verification. \
    --init=infer works from the plan alone; snapshots stored in the trace (record \
    --snapshot) are restored from the trace, which must then still be where it was.\n\n\
    The plan is written next to its final name and renamed into place when complete: a \
    stopped compile (Ctrl-C) leaves no plan behind; an existing .PLAN.partial (another \
    compile writing PLAN, or one killed outright) is refused. The format is in \
    docs/REPLAY.md.\n\n\
    Exit status: 0 when the plan was written, 2 when it could not be.")]
pub struct CompileArgs {
    #[command(flatten)]
    pub key: crate::output::ReadKeyArgs,
    /// The trace to compile (ours or an original Re-Animator trace). `-` reads standard input: it is first copied to a private temporary
    /// file (mode 0600, unnamed, in $TMPDIR, gone when the command ends) and read from there.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Where to write the plan (mode 0600: it holds the trace's data).
    #[arg(short, long, value_name = "PLAN")]
    pub output: PathBuf,
    /// Compile only the calls these select (as `reanimator select` takes them,
    /// docs/SELECT.md); the summary says how many calls of which classes were left out. When
    /// the selection keeps a snapshot, it is written beside the plan as PLAN.selection.ds
    /// (the plan's source trace, from which replay --init restores it).
    #[command(flatten, next_help_heading = "Selection")]
    pub sel: crate::select::SelectionArgs,
    /// Memory for the deduplication index (e.g. 256M, the default): once it is full, new
    /// contents are stored without being indexed (the summary says when).
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = crate::record::parse_size)]
    pub dedup_memory: u64,
    /// How to store the data chunks: `none` (the default) keeps them as they are, and replay
    /// writes from the mapped plan without copying; `lz4` compresses each chunk (when that
    /// makes it smaller): a smaller plan for compressible data, and replay decompresses the
    /// chunks as it goes. Plans with lz4 chunks are format version 2.
    #[arg(long, value_enum, default_value = "none", value_name = "CODEC")]
    pub compress: PlanCompress,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress bar, no summary.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `compile --compress`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanCompress {
    None,
    Lz4,
}

pub fn run(a: CompileArgs) -> Result<std::process::ExitCode> {
    if a.output.exists() && a.trace.canonicalize().ok() == a.output.canonicalize().ok() {
        bail!("-o {}: that is the trace itself; name another file", a.output.display());
    }
    let mut trace = TraceReader::open(&a.trace)
        .with_context(|| format!("opening the trace {}", crate::spool::shown(&a.trace)))?;
    // Its extents are decoded where they lie in the page cache: the plan's data buffers are
    // slices of the map until the encoder has copied them.
    // (Where it cannot be mapped it is read as before.)
    trace.map_file();
    crate::note_incomplete(&a.trace, trace.incomplete(), "the calls it holds are compiled");
    // A selection: compiled from a trace of its own, kept beside the plan when it holds
    // snapshots (a plan does not copy them: replay --init reads them from its source).
    let mut source = a.trace.clone();
    let mut selected = None;
    if !a.sel.is_empty() {
        let s = crate::select::select_scratch(&trace, &a.trace, &a.sel)?;
        let mut name = a.output.as_os_str().to_owned();
        name.push(".selection.ds");
        let keep = PathBuf::from(name);
        if s.trace.snapshots().is_empty() {
            source = s.path.clone();
        } else {
            if keep.exists() {
                bail!("{} exists: remove it, or compile to another PLAN", keep.display());
            }
            std::fs::copy(&s.path, &keep)
                .with_context(|| format!("cannot write {}", keep.display()))?;
            source = keep;
        }
        trace = TraceReader::open(&source)
            .with_context(|| format!("opening the selection {}", source.display()))?;
        trace.map_file();
        if !a.quiet {
            eprintln!("{}", s.line("compiling"));
        }
        selected = Some(s);
    }
    if trace.dataseries().encryption().is_some() {
        eprintln!(
            "reanimator: warning: {} is encrypted, and its plan is not: {} holds the trace's \
             data in the clear; keep it where the trace's readers may look, or delete it after \
             the replay",
            crate::spool::shown(&a.trace),
            a.output.display()
        );
    }
    let tmp = Partial::create(&a.output, "-o")?;
    let progress = Arc::new(Progress::default());
    crate::replay::install_stop_handler(progress.clone());
    let total = trace.syscall_records();
    let bar = (!a.quiet && std::io::stderr().is_terminal())
        .then(|| crate::progress::Progress::calls("compiling", total));
    let t0 = Instant::now();
    let r = std::thread::scope(|s| {
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        if let Some(b) = &bar {
            let (p, done) = (progress.clone(), done.clone());
            s.spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    b.set(p.read.load(Ordering::Relaxed));
                    std::thread::sleep(Duration::from_millis(100));
                }
                b.finish();
            });
        }
        let r = ra_replay::compile(
            &trace,
            &source,
            &crate::spool::json_name(&source),
            tmp.path(),
            a.dedup_memory.min(usize::MAX as u64) as usize,
            a.compress == PlanCompress::Lz4,
            &progress.read,
            &progress.stop,
        );
        done.store(true, Ordering::Relaxed);
        r
    });
    let stats = match r {
        Ok(s) => s,
        Err(e) => {
            if matches!(e, PlanError::Interrupted) {
                bail!("compile interrupted: no plan written");
            }
            return Err(e).with_context(|| format!("compiling {}", crate::spool::shown(&a.trace)));
        }
    };
    tmp.persist()?;
    let secs = t0.elapsed().as_secs_f64();
    let trace_bytes = std::fs::metadata(&a.trace).map(|m| m.len()).unwrap_or(0);
    if a.json {
        let mut j = stats.to_json();
        j["trace_bytes"] = trace_bytes.into();
        j["seconds"] = secs.into();
        j["plan"] = a.output.display().to_string().into();
        if let Some(s) = &selected {
            j["selection"] = s.to_json();
            j["source"] = source.display().to_string().into();
        }
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &j)?;
        writeln!(out)?;
    } else if !a.quiet {
        let mb = |b: u64| b as f64 / 1e6;
        println!(
            "{}: {} calls compiled in {:.2} s ({:.0} MB/s of trace)",
            a.output.display(),
            stats.calls,
            secs,
            mb(trace_bytes) / secs.max(1e-9)
        );
        println!(
            "  data: {} buffers, {:.1} MB; stored once per content: {} buffers, {:.1} MB{}",
            stats.buffers,
            mb(stats.data_in),
            stats.unique_buffers,
            mb(stats.data_stored),
            if stats.data_in > 0 {
                format!(
                    " ({:.1}% saved)",
                    100.0 * (1.0 - stats.data_stored as f64 / stats.data_in as f64)
                )
            } else {
                String::new()
            }
        );
        println!(
            "  plan: {:.1} MB ({:.2}x the trace's {:.1} MB)",
            mb(stats.plan_bytes),
            stats.plan_bytes as f64 / trace_bytes.max(1) as f64,
            mb(trace_bytes)
        );
        if let Some(n) = stats.index_full_at {
            println!(
                "  note: the dedup index filled after {n} distinct buffers (--dedup-memory): \
                 later new contents were stored without deduplication"
            );
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}
