//! `reanimator export`: traces in other tools' formats. Tables (Parquet, CSV) are
//! `export_tables`'s; this module holds the arguments and fio's iolog version 3 (`fio
//! --read_iolog=FILE` replays it). Which calls become which operations is
//! `ra_trace::fileio`'s job; this module names the files and writes the lines.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::{BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use ra_filter::{FieldValue, Record};
use ra_trace::fileio::{FileIoTracker, FileOp, FileOpKind};
use ra_trace::{Event, TraceReader};

use crate::records::EventRecord;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// fio's iolog version 3 (timestamps in microseconds): `fio --read_iolog=FILE`. One trace.
    FioIolog,
    /// A Parquet dataset beneath `-o DIR`: tables `calls`, `data`, `facts`, `losses`,
    /// `snapshots`, `profiles`, each partitioned `host=H/trace=T/` (docs/TRACE_FORMAT.md
    /// section 12, docs/ANALYSIS.md).
    Parquet,
    /// CSV as SNIA's IOTTA repository takes traces, beneath `-o DIR`: `host=H/trace=T/`
    /// holds `calls-FAMILY.csv` per call family (io_class), each with its documented column
    /// set, and `facts.csv`, `losses.csv`, `snapshots.csv`, `data.csv` (docs/TRACE_FORMAT.md
    /// 12.4); `--compress xz` for `.csv.xz`.
    Csv,
    /// The trace-event JSON that ui.perfetto.dev and chrome://tracing open, into `-o FILE`
    /// (one trace): a track per thread, each call a slice with its arguments, bytes read and
    /// written as counters per process, processes named.
    ChromeTrace,
    /// CTF 1.8 as LTTng's kernel tracer writes system calls (babeltrace2, Trace Compass), into
    /// the directory `-o DIR` (one trace): `syscall_entry_NAME` / `syscall_exit_NAME` events,
    /// a stream per thread.
    Ctf,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::FioIolog => "fio-iolog",
            Format::Parquet => "parquet",
            Format::Csv => "csv",
            Format::ChromeTrace => "chrome-trace",
            Format::Ctf => "ctf",
        }
    }
}

/// Which data buffers an export keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DataArg {
    /// Lengths only.
    None,
    /// Lengths and BLAKE3 digests (`NAME_digest` columns).
    Digest,
    /// Lengths, digests and the bytes, each distinct buffer once, in the `data` table.
    Full,
}

/// Compression of the files an export writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Compress {
    /// Parquet: zstd (level 1), the default.
    Zstd,
    /// Parquet: snappy.
    Snappy,
    /// CSV: xz (`xz -T1 -6`, xz-utils), as `.csv.xz`.
    Xz,
    /// Uncompressed (the default for CSV).
    None,
}

impl Compress {
    pub fn name(self) -> &'static str {
        match self {
            Compress::Zstd => "zstd",
            Compress::Snappy => "snappy",
            Compress::Xz => "xz",
            Compress::None => "none",
        }
    }
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator export host*/run*.ds --format parquet -o dataset/ --threads 2\n  \
    duckdb -c \"SELECT call, count(*) FROM 'dataset/calls/**/*.parquet' GROUP BY call\"\n  \
    reanimator export trace.ds --format fio-iolog -o job.iolog --prefix /mnt/scratch\n  \
    fio --name=replay --read_iolog=job.iolog --ioengine=psync\n  \
    reanimator export trace.ds --format fio-iolog --where 'path ~ \"/data/**\"' -o data.iolog")]
pub struct ExportArgs {
    #[command(flatten)]
    pub key: crate::output::ReadKeyArgs,
    /// The traces (recorded by `reanimator record` or `reanimator fs`, or Re-Animator's);
    /// fio-iolog takes one. `-` (once) reads standard input: it is first copied to a private
    /// temporary file (mode 0600, unnamed, in $TMPDIR, gone when the command ends).
    pub traces: Vec<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum)]
    pub format: Format,
    /// fio-iolog: write here instead of stdout. parquet, csv: the dataset's directory
    /// (created 0700; files 0600: they hold the traces' paths and data). chrome-trace: the
    /// JSON file. ctf: the CTF trace directory.
    #[arg(short = 'o', long, value_name = "FILE|DIR")]
    pub output: Option<PathBuf>,
    /// Tables: which data buffers to keep: lengths only, their BLAKE3 digests too, or the
    /// bytes as well (the `data` table, each distinct buffer once).
    #[arg(long, value_enum, default_value_t = DataArg::Digest)]
    pub data: DataArg,
    /// Tables: compression (parquet: zstd, snappy or none, zstd by default; csv: xz or none,
    /// none by default).
    #[arg(long, value_enum)]
    pub compress: Option<Compress>,
    /// Tables: traces exported at once, one thread each (default: the CPUs, at most the
    /// number of traces).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Tables: the `host` column and partition of every trace given, instead of each
    /// trace's `hostname` fact (`unknown` without one).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Tables: also export this profile (`reanimator profile --json`) into the `profiles`
    /// table, one row per interval, key and bucket (repeatable).
    #[arg(long = "profile", value_name = "FILE")]
    pub profiles: Vec<PathBuf>,
    /// Tables: no progress bar and no summary lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Re-root the recorded absolute paths beneath this directory (`/a/b` becomes `DIR/a/b`),
    /// creating the files' directories there (fio does not), and laying out each file the
    /// log reads at the size its reads need (extended with zeros, sparse; an existing larger
    /// file is left as it is): fio creates a missing file empty, and a read of it fails
    /// with EIO.
    #[arg(long, value_name = "DIR")]
    pub prefix: Option<PathBuf>,
    /// Only the reads, writes and syncs matching this expression (the `dump --where`
    /// language; `path` is the file's path, also for calls given a descriptor).
    #[arg(long = "where", short = 'w', value_name = "EXPR")]
    pub filter: Option<String>,
}

pub fn run(a: ExportArgs) -> Result<ExitCode> {
    if a.format != Format::FioIolog {
        return crate::export_tables::run(a);
    }
    let path = match a.traces.as_slice() {
        [one] => one,
        [] => anyhow::bail!("--format fio-iolog: give the trace"),
        _ => anyhow::bail!("--format fio-iolog takes one trace"),
    };
    let tr = TraceReader::open(path)
        .with_context(|| format!("cannot read trace {}", crate::spool::shown(path)))?;
    crate::note_incomplete(path, tr.incomplete(), "the calls it holds are exported");
    let filter = match &a.filter {
        Some(src) => Some(crate::dump::event_filter(src, &tr)?),
        None => None,
    };
    let prefix = match &a.prefix {
        Some(p) => Some(
            std::path::absolute(p)
                .with_context(|| format!("--prefix {}: cannot make it absolute", p.display()))?,
        ),
        None => None,
    };
    let out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(BufWriter::new(
            ra_fsstate::private::create(p)
                .with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    let mut w = IologWriter::new(out, prefix);
    let mut tracker = FileIoTracker::for_trace(&tr);
    let mut ops = Vec::new();
    let mut last_ns = 0;
    let mut keep = |ev: &Event, file: &[u8]| {
        filter.as_ref().is_none_or(|f| f.matches(&IoRecord { ev: EventRecord(ev), file }))
    };
    for ev in tr.events(None) {
        let ev = ev.with_context(|| format!("reading {}", crate::spool::shown(path)))?;
        if let Some(t) = ev.time_called {
            w.origin_ns.get_or_insert(t);
            last_ns = last_ns.max(t);
        }
        tracker.apply(&ev, &mut keep, &mut ops);
        for op in ops.drain(..) {
            w.push(op)?;
        }
    }
    tracker.finish(last_ns, &mut ops);
    for op in ops.drain(..) {
        w.push(op)?;
    }
    let to = a.output.as_deref().map_or("stdout".to_string(), |p| p.display().to_string());
    let summary = w.finish()?;
    let sk = tracker.skipped();
    let mut left = Vec::new();
    for (n, what) in [
        (sk.not_file, "on non-file descriptors"),
        (sk.unknown_fd, "on unknown descriptors"),
        (sk.failed, "failed"),
        (sk.zero_bytes, "moved no bytes"),
        (sk.punch_hole, "hole punches"),
        (sk.unresolved_path, "opens of unresolvable relative paths"),
        (sk.filtered, "not matching --where"),
        (summary.bad_names, "on names fio cannot read (whitespace, over 256 bytes)"),
    ] {
        if n > 0 {
            left.push(format!("{n} {what}"));
        }
    }
    let lost = if tr.lost().is_empty() { "" } else { "; the trace records lost events" };
    let laid = match &a.prefix {
        Some(p) if summary.laid_out > 0 => format!(
            "; laid out {} files beneath {} for its reads ({} bytes of zeros, sparse)",
            summary.laid_out,
            p.display(),
            summary.laid_out_bytes
        ),
        _ => String::new(),
    };
    eprintln!(
        "reanimator: exported {} reads ({} bytes), {} writes ({} bytes), {} syncs, {} datasyncs \
         on {} files to {to}; left out: {}{lost}{laid}",
        summary.reads,
        summary.read_bytes,
        summary.writes,
        summary.write_bytes,
        summary.syncs,
        summary.datasyncs,
        summary.files,
        if left.is_empty() { "nothing".to_string() } else { left.join(", ") },
    );
    Ok(ExitCode::SUCCESS)
}

/// An event seen by `--where`, with `path` (and `file`) the file the I/O went to.
struct IoRecord<'a> {
    ev: EventRecord<'a>,
    file: &'a [u8],
}

impl Record for IoRecord<'_> {
    fn get(&self, field: &str) -> Option<FieldValue<'_>> {
        match field {
            "path" | "file" => Some(FieldValue::Bytes(std::borrow::Cow::Borrowed(self.file))),
            f => self.ev.get(f),
        }
    }
}

/// Lines are sorted by time within this many lines (calls are in the trace in the order they
/// returned; fio wants them in the order they were issued).
const WINDOW: usize = 1 << 16;

/// The longest name fio's iolog parser reads (`%256s`).
const FIO_NAME_MAX: usize = 256;

#[derive(Default)]
struct Summary {
    reads: u64,
    read_bytes: u64,
    writes: u64,
    write_bytes: u64,
    syncs: u64,
    datasyncs: u64,
    files: u64,
    bad_names: u64,
    /// Files beneath the prefix extended for the log's reads, and by how many bytes.
    laid_out: u64,
    laid_out_bytes: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Add,
    Op(OpKey),
}

/// `FileOpKind` with an order, for the heap.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum OpKey {
    Open,
    Read(u64, u64),
    Write(u64, u64),
    Sync,
    DataSync,
    Close,
}

struct IologWriter {
    out: Box<dyn Write>,
    prefix: Option<PathBuf>,
    /// `time_called` of the trace's first call: 1 µs in the log.
    origin_ns: Option<i64>,
    /// fio names by path; `None` for names fio cannot read.
    names: HashMap<Arc<[u8]>, Option<u32>>,
    files: Vec<Vec<u8>>,
    /// Each file's end of its furthest read (for the layout beneath the prefix).
    read_end: Vec<u64>,
    /// Each file's latest time so far, so sorting by time keeps each file's own order.
    file_us: Vec<u64>,
    heap: BinaryHeap<Reverse<(u64, u64, u32, Action)>>,
    seq: u64,
    last_us: u64,
    header: bool,
    s: Summary,
}

impl IologWriter {
    fn new(out: Box<dyn Write>, prefix: Option<PathBuf>) -> IologWriter {
        IologWriter {
            out,
            prefix,
            origin_ns: None,
            names: HashMap::new(),
            files: Vec::new(),
            read_end: Vec::new(),
            file_us: Vec::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            last_us: 0,
            header: false,
            s: Summary::default(),
        }
    }

    /// The fio name of a path (re-rooted), adding the file on first sight.
    fn file(&mut self, path: &Arc<[u8]>, us: u64) -> Result<Option<u32>> {
        if let Some(&n) = self.names.get(path) {
            return Ok(n);
        }
        let name: Vec<u8> = match &self.prefix {
            // `path` is absolute and normalized (no `..`), so it stays beneath the prefix.
            Some(d) => {
                let mut n = d.as_os_str().as_bytes().to_vec();
                while n.last() == Some(&b'/') {
                    n.pop();
                }
                n.extend_from_slice(path);
                n
            }
            None => path.to_vec(),
        };
        let ok = name.len() <= FIO_NAME_MAX && !name.iter().any(u8::is_ascii_whitespace);
        let idx = if ok {
            if self.prefix.is_some() {
                let p = Path::new(std::ffi::OsStr::from_bytes(&name));
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
            }
            let i = self.files.len() as u32;
            self.files.push(name);
            self.read_end.push(0);
            self.file_us.push(us);
            self.s.files += 1;
            self.queue(us, i, Action::Add)?;
            Some(i)
        } else {
            None
        };
        self.names.insert(path.clone(), idx);
        Ok(idx)
    }

    fn push(&mut self, op: FileOp) -> Result<()> {
        let origin = *self.origin_ns.get_or_insert(op.time_ns);
        let us = 1 + (op.time_ns.saturating_sub(origin).max(0) / 1000) as u64;
        let Some(f) = self.file(&op.path, us)? else {
            if !matches!(op.kind, FileOpKind::Open | FileOpKind::Close) {
                self.s.bad_names += 1;
            }
            return Ok(());
        };
        let us = us.max(self.file_us[f as usize]);
        self.file_us[f as usize] = us;
        if let FileOpKind::Read { offset, len } = op.kind {
            let end = &mut self.read_end[f as usize];
            *end = (*end).max(offset.saturating_add(len));
        }
        let key = match op.kind {
            FileOpKind::Open => OpKey::Open,
            FileOpKind::Read { offset, len } => OpKey::Read(offset, len),
            FileOpKind::Write { offset, len } => OpKey::Write(offset, len),
            FileOpKind::Sync => OpKey::Sync,
            FileOpKind::DataSync => OpKey::DataSync,
            FileOpKind::Close => OpKey::Close,
        };
        self.queue(us, f, Action::Op(key))
    }

    fn queue(&mut self, us: u64, f: u32, a: Action) -> Result<()> {
        self.seq += 1;
        self.heap.push(Reverse((us, self.seq, f, a)));
        if self.heap.len() > WINDOW {
            self.pop()?;
        }
        Ok(())
    }

    fn pop(&mut self) -> Result<()> {
        let Some(Reverse((us, _, f, a))) = self.heap.pop() else { return Ok(()) };
        if !self.header {
            self.out.write_all(b"fio version 3 iolog\n")?;
            self.header = true;
        }
        // A line later than the window: it keeps its place, at the time of the line before.
        let us = us.max(self.last_us);
        self.last_us = us;
        let name = &self.files[f as usize];
        write!(self.out, "{us} ")?;
        self.out.write_all(name)?;
        match a {
            Action::Add => writeln!(self.out, " add")?,
            Action::Op(OpKey::Open) => writeln!(self.out, " open")?,
            Action::Op(OpKey::Close) => writeln!(self.out, " close")?,
            Action::Op(OpKey::Read(o, l)) => {
                self.s.reads += 1;
                self.s.read_bytes += l;
                writeln!(self.out, " read {o} {l}")?
            }
            Action::Op(OpKey::Write(o, l)) => {
                self.s.writes += 1;
                self.s.write_bytes += l;
                writeln!(self.out, " write {o} {l}")?
            }
            // fio reads syncs in the I/O format only (with an offset and a length).
            Action::Op(OpKey::Sync) => {
                self.s.syncs += 1;
                writeln!(self.out, " sync 0 0")?
            }
            Action::Op(OpKey::DataSync) => {
                self.s.datasyncs += 1;
                writeln!(self.out, " datasync 0 0")?
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Summary> {
        while !self.heap.is_empty() {
            self.pop()?;
        }
        if !self.header {
            self.out.write_all(b"fio version 3 iolog\n")?;
        }
        self.out.flush()?;
        if self.prefix.is_some() {
            self.lay_out()?;
        }
        Ok(self.s)
    }

    /// Each file the log reads, beneath the prefix, at least as long as its reads need.
    fn lay_out(&mut self) -> Result<()> {
        for (name, &end) in self.files.iter().zip(&self.read_end) {
            if end == 0 {
                continue;
            }
            let p = Path::new(std::ffi::OsStr::from_bytes(name));
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(p)
                .with_context(|| format!("--prefix: cannot lay out {}", p.display()))?;
            let len = f.metadata()?.len();
            if len < end {
                f.set_len(end)
                    .with_context(|| format!("--prefix: cannot extend {}", p.display()))?;
                self.s.laid_out += 1;
                self.s.laid_out_bytes += end - len;
            }
        }
        Ok(())
    }
}
