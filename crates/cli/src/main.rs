//! `reanimator`: the one binary. One module per subcommand; the heavy lifting lives in the
//! library crates (`dataseries`, `ra-syscalls`, `ra-trace`, `ra-filter`).
//!
//! # Parts
//!
//! The one binary; `spool`: `-` for the readers other than `dump` (info, stats, export, profile,
//! verify, replay, compile map the trace, use its index or pass over it more than once): standard
//! input copied to an unnamed `O_TMPFILE` in $TMPDIR (0600, gone however the process ends; a full
//! disk is one error) and read as `/proc/self/fd/N`, a path never shown: messages and text headers
//! name it `standard input` (`spool::shown`), JSON `-` (`spool::json_name`), and the error line has
//! the libraries' mentions of the path replaced (`spool::unspooled`); at most one `-` per command
//! (`main::spool_stdin`); `jsonl`: `dump --format jsonl`'s writer of a call's line, straight into a
//! byte buffer (hex by SSE2), byte for byte serde_json's of `dump::event_json_fds` (a property test
//! holds them together); one module per subcommand (`record`, `info`, `dump`, `replay`, `snapshot`,
//! `diff`, `fs`, `profile`; `select`: `select`, `split` and `merge` (docs/SELECT.md: traces
//! rewritten through `TraceWriter` with ids kept or renumbered, pids of merged inputs offset with
//! anonymize's pid rules; a selection starting mid-trace begins with synthetic opens and seeks of
//! the descriptors open then, from `fileio::FileIoTracker::open_descriptors`) and the selection
//! (`--where`/`--time`/`--pid`/`--tid`, resolved once per trace: dump's filter, the process tree
//! from clone results) that `replay` and `compile` apply by replaying a scratch selection, before
//! planning; `stats`: `reanimator stats`, reading traces, `--where`, and printing `ra_stats`'s
//! summaries (strace -c's table, group tables, histograms, JSON); `profile_live`: the live
//! profiler's options, the `class` layer, streaming into the sink; `profile_metrics`: `profile
//! --listen`, the cumulative histograms served at `/metrics` (loopback only, one bounded connection
//! at a time); `profile` also has `profile compare`, `--correlate` (a sink that reports at the end)
//! and value profiles of traces (`--value`, from `ra_trace::fileio`; live ones are binned in the
//! kernel); `export`: fio iolog v3 from `ra_trace::fileio`'s operations, docs/REPLAY.md;
//! `export_tables`: `export --format parquet` over `ra-export`, several traces on `--threads`
//! workers; `compile`: `reanimator compile`, its progress and summary; `info` also describes plans,
//! read through with `Plan::check`; `compare`: `replay --compare`, one replay per root through
//! `replay::replay_into` (options mapped onto `ra_replay::Session`), the outcome join, the roots' trees diffed with ra-fsstate; `anonymize`:
//! `reanimator anonymize` and `--reverse` over `ra_anonymize`; `output`: the output-chain
//! flags `record`, `fs` and `anonymize` share (`--compress`, lz4 by default, `--seal`, `--encrypt`,
//! and `-o`'s destination with `--spill` and `--net-buffer`), turned into
//! `dataseries::WriterOptions` and a `ra_trace::Destination` in one place; `collect`: `reanimator
//! collect` (handshakes served by the accept loop in a bounded pool with a deadline, the oldest
//! evicted; a thread per authenticated stream within per-host and per-IP limits; files written
//! extent by extent, charged to the host's quota; seals checked under the authenticated host's key
//! as extents arrive, each extent hashed, never held; `--join`; docs/NETWORK.md); `keygen`: key
//! files from `ra_trace::key`, and host keys derived from a collector's master key (`--host NAME
//! --from MASTER`); `partial`: an output written as `.NAME.partial` (created exclusively, removed
//! on error, on drop and on Ctrl-C) and renamed when complete, for `compile`, `anonymize`,
//! `select`, `split` and `merge`; `interrupt`: Ctrl-C, SIGTERM and SIGHUP for the commands that
//! write several outputs or one in many steps (`select`, `split`, `merge`, `export` to tables): the
//! handler only records the signal (an atomic, a byte down a pipe), the command asks
//! `interrupt::check` before each call it copies and returns, its partial files removed on drop,
//! then runs its own clean-up (split removes the parts it finished) and exits 128 + the signal with
//! one line; a watcher thread ends the process itself, removing every partial file still
//! registered, when the command has not ended 0.7 s after the signal or a second one comes; signals
//! inherited ignored stay ignored; tests share `bin()`, `keygen()` and `verify()` in
//! `tests/common`; `verify`: `reanimator verify`; `doctor`: `reanimator doctor`, each check made by
//! trying (the eBPF programs loaded and attached, a child seized with ptrace, /dev/fuse opened) or
//! read from the kernel's files, computed apart from its printing; `clidocs`: `completions` and
//! `man` from the one clap definition (the generated copies in `share/`, kept fresh by
//! `scripts/gen-cli-docs.sh --check`); `main` loads its `--key` once and hands its read key to
//! `dataseries::crypt` and, for the commands that read traces, its seal key to
//! `dataseries::seal::set_check_key`, prints `note_incomplete` for every reader, and exits 1 for an
//! error that proves tampering); `anyhow` only here.

mod anonymize;
mod clidocs;
mod collect;
mod compare;
mod compile;
mod diff;
mod doctor;
mod dump;
mod export;
mod export_tables;
mod fs;
mod info;
mod interrupt;
mod jsonl;
mod keygen;
mod mapfault;
mod output;
mod partial;
mod profile;
mod profile_live;
mod profile_metrics;
mod progress;
mod record;
mod records;
mod replay;
mod select;
mod signals;
mod snapshot;
mod spool;
mod stats;
mod verify;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Storage-tracing toolkit: capture system calls with full data buffers into DataSeries
/// traces, inspect them, and replay them with verification.
#[derive(Parser, Debug)]
#[command(name = "reanimator", version, about, long_about = None, propagate_version = true)]
#[command(after_help = "Examples:\n  \
    reanimator record -o trace.ds -- tar xf archive.tar\n  \
    reanimator info trace.ds\n  \
    reanimator dump trace.ds --where 'call in {openat, read} && ret >= 0'\n  \
    reanimator dump trace.ds --format jsonl --type write | head\n  \
    reanimator stats trace.ds --by file --top 10\n  \
    reanimator record -o t.ds --snapshot data/ -- ./job data/\n  \
    reanimator snapshot data/ -o data.jsonl\n  \
    reanimator diff t.ds:end data/\n  \
    reanimator export t.ds --format fio-iolog -o t.iolog --prefix /mnt/scratch\n  \
    reanimator anonymize t.ds t-anon.ds --key anon.key --fields path,uid,gid,pid")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarize a trace or any DataSeries file (extent types, record counts, sizes,
    /// compression, time span, recording facts, losses) or a compiled plan (version, source
    /// trace, calls, data and deduplication, every checksum verified).
    Info(info::InfoArgs),
    /// Run a command and record its system calls with full data buffers into a trace.
    Record(record::RecordArgs),
    /// Print the records of a trace (strace-like lines in unique_id order by default) or of any
    /// DataSeries file.
    Dump(dump::DumpArgs),
    /// Replay a trace into a sandboxed root directory, verifying return values, returned data
    /// and (with a recorded snapshot) the final file tree.
    Replay(replay::ReplayArgs),
    /// Compile a trace into a replay plan (Replayfs): calls placed and gated once, data
    /// buffers deduplicated in a memory-mapped region; `replay PLAN` takes it like a trace.
    Compile(compile::CompileArgs),
    /// Write the logical state of a directory tree (names, kinds, sizes, modes, owners,
    /// content digests, symlink targets, xattrs, hard links) as a manifest.
    Snapshot(snapshot::SnapshotArgs),
    /// Compare two directory trees' logical state; each a directory, a manifest or a trace's
    /// snapshot. Exit status 0 equal, 1 different, 2 trouble.
    Diff(diff::DiffArgs),
    /// Tracing file system (Tracefs on FUSE): mount a traced view of a directory and record
    /// every file-system operation of every process that uses it.
    Fs(fs::FsArgs),
    /// Latency profiles (FSprof): log2 histograms of every operation's latency per interval,
    /// from a trace or live; text (bcc's layout), table, JSON Lines, SVG heat maps; `merge`.
    Profile(Box<profile::ProfileArgs>),
    /// strace -c's summary of traces (calls, errors, time per call), or tables per call class,
    /// process, thread, program, file, directory or errno with latency quantiles, bytes read and
    /// written, I/O sizes and the busiest files; one streaming pass in bounded memory.
    Stats(stats::StatsArgs),
    /// Write traces in other tools' formats: a Parquet or CSV dataset of several traces (for
    /// DuckDB, Spark, pandas; SNIA IOTTA), a timeline (Perfetto's trace-event JSON, CTF for
    /// babeltrace2), or a trace's file I/O as fio's iolog (`fio --read_iolog`).
    Export(export::ExportArgs),
    /// Receive traces streamed by `record -o tcp://` and `fs mount -o tcp://`, each into its
    /// own file as it arrives; `--join` puts a cut stream and its sender's spill file together.
    Collect(collect::CollectArgs),
    /// Create a key file (256 random bits, mode 0600) for sealed and encrypted traces and
    /// for anonymization.
    Keygen(keygen::KeygenArgs),
    /// Check a sealed trace (`record --seal`): say which extent was modified, dropped,
    /// duplicated, reordered or inserted, or where the trace was cut. Exit 0 intact, 1
    /// tampered, 2 trouble.
    Verify(verify::VerifyArgs),
    /// Rewrite a trace with paths, ids, names and data replaced by keyed pseudonyms,
    /// consistently, so that it still replays to a tree of the same shape; `--reverse`
    /// restores the fields stored reversibly.
    Anonymize(anonymize::AnonymizeArgs),
    /// Write the calls of a trace selected by --where, --time and --pid/--tid (with
    /// descendants) as a trace of their own: facts kept, snapshots and losses kept or said.
    Select(select::SelectArgs),
    /// Cut a trace into parts by process, time window or size; the parts together hold
    /// every call once.
    Split(select::SplitArgs),
    /// Join traces of several hosts or runs into one, interleaved by time, ids remapped so
    /// that none collide, each call's host known by its pid's range.
    Merge(select::MergeArgs),
    /// Say which backends and features work on this machine and, for each that does not,
    /// why and what to do (eBPF and BTF, capabilities, ptrace_scope, perf_event_paranoid,
    /// FUSE, cgroup v2, ring buffer memory, free space).
    Doctor(doctor::DoctorArgs),
    /// Write shell completions for bash, zsh, fish, elvish or powershell on stdout.
    Completions(clidocs::CompletionsArgs),
    /// Write a man page for reanimator and each of its subcommands into a directory.
    Man(clidocs::ManArgs),
}

/// mimalloc instead of glibc's malloc: the recorder's threads hand buffers to each other
/// (consumer -> trace writer -> encoder threads), and glibc frees of another thread's arena
/// chunks contend on that arena's lock; its large buffers also come back as fresh mmaps that
/// fault page by page. See docs/PERFORMANCE.md (eBPF record rows).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    mapfault::report_cut_maps();
    let key = match key_file(&cli.command).map(ra_trace::key::Key::load).transpose() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("reanimator: error: --key: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(k) = &key {
        k.allow_reading();
        // A reader given a key checks it: these commands open every trace with the seal
        // check (dataseries::seal::set_check_key).
        if matches!(
            cli.command,
            Command::Info(_)
                | Command::Dump(_)
                | Command::Replay(_)
                | Command::Compile(_)
                | Command::Profile(_)
                | Command::Stats(_)
                | Command::Export(_)
                | Command::Diff(_)
                | Command::Select(_)
                | Command::Split(_)
                | Command::Merge(_)
        ) {
            k.check_seals();
        }
    }
    // `-` for a reader that opens its trace as a file: standard input is spooled to an
    // unnamed temporary file first (crate::spool), kept open until the command ends.
    let _spool = match spool_stdin(&mut cli.command) {
        Ok(s) => s,
        Err(err) => {
            eprintln!("reanimator: error: {}", one_line(&err));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Info(a) => info::run(a),
        Command::Dump(a) => dump::run(a),
        Command::Record(a) => record::run(a, key.as_ref()),
        Command::Replay(a) => replay::run(a),
        Command::Compile(a) => compile::run(a),
        Command::Snapshot(a) => snapshot::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Fs(a) => fs::run(a, key.as_ref()),
        Command::Profile(a) => profile::run(*a),
        Command::Stats(a) => stats::run(a),
        Command::Export(a) => export::run(a),
        Command::Keygen(a) => keygen::run(a),
        Command::Collect(a) => collect::run(a, key.as_ref()),
        Command::Verify(a) => verify::run(a, key.as_ref()),
        Command::Anonymize(a) => anonymize::run(a, key.as_ref()),
        Command::Select(a) => select::run_select(a),
        Command::Split(a) => select::run_split(a),
        Command::Merge(a) => select::run_merge(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Completions(a) => clidocs::run_completions(a),
        Command::Man(a) => clidocs::run_man(a),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (`reanimator dump ... | head`) is a normal way to stop reading.
            if broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            // Stopped by a signal: what the command left, and 128 + the signal's number.
            if let Some(i) = err.downcast_ref::<interrupt::Interrupted>() {
                eprintln!("reanimator: {i}");
                return ExitCode::from(i.exit_code());
            }
            let _ = std::io::stdout().flush();
            // The libraries name a spooled trace by its /proc/self/fd path.
            eprintln!("reanimator: error: {}", spool::unspooled(&one_line(&err)));
            // A trace proven tampered with (a seal or an encrypted chunk that does not
            // verify) is the reader's answer, like `verify`'s: 1. Other trouble: 2.
            ExitCode::from(if tampering(&err) { 1 } else { 2 })
        }
    }
}

/// The reader commands given `-` other than `dump` (which streams it): standard input is
/// copied to a private temporary file ([`spool::stdin`]) and the command reads that. They map
/// the trace, read it by its extent index or pass over it more than once. At most one `-`.
fn spool_stdin(c: &mut Command) -> anyhow::Result<Option<spool::Spool>> {
    use std::path::PathBuf;
    let (name, paths): (&str, Vec<&mut PathBuf>) = match c {
        Command::Info(a) => ("info", vec![&mut a.file]),
        Command::Stats(a) => ("stats", a.traces.iter_mut().collect()),
        Command::Export(a) => ("export", a.traces.iter_mut().collect()),
        Command::Profile(a) => ("profile", a.trace.iter_mut().collect()),
        Command::Verify(a) => ("verify", vec![&mut a.trace]),
        Command::Replay(a) => ("replay", vec![&mut a.trace]),
        Command::Compile(a) => ("compile", vec![&mut a.trace]),
        _ => return Ok(None),
    };
    let mut dashes: Vec<&mut PathBuf> = paths.into_iter().filter(|p| spool::is_stdin(p)).collect();
    match dashes.len() {
        0 => Ok(None),
        1 => {
            let s = spool::stdin(name)?;
            *dashes[0] = s.path();
            Ok(Some(s))
        }
        n => anyhow::bail!(
            "{name}: `-` is given {n} times; standard input holds one trace (give `-` once)"
        ),
    }
}

/// Whether the error comes from a closed pipe (EPIPE), also when JSON output wraps it.
pub(crate) fn broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

/// The `--key` of the command, on the commands that read keys.
fn key_file(c: &Command) -> Option<&std::path::Path> {
    match c {
        Command::Info(a) => a.key.key.as_deref(),
        Command::Dump(a) => a.key.key.as_deref(),
        Command::Replay(a) => a.key.key.as_deref(),
        Command::Compile(a) => a.key.key.as_deref(),
        Command::Profile(a) => a.key.key.as_deref(),
        Command::Stats(a) => a.key.key.as_deref(),
        Command::Export(a) => a.key.key.as_deref(),
        Command::Diff(a) => a.key.key.as_deref(),
        Command::Record(a) => a.key.as_deref(),
        Command::Fs(a) => a.key(),
        Command::Collect(a) => a.key.as_deref(),
        Command::Verify(a) => a.key.as_deref(),
        Command::Anonymize(a) => a.key.as_deref(),
        Command::Select(a) => a.key.key.as_deref(),
        Command::Split(a) => a.key.key.as_deref(),
        Command::Merge(a) => a.key.key.as_deref(),
        Command::Snapshot(_)
        | Command::Keygen(_)
        | Command::Doctor(_)
        | Command::Completions(_)
        | Command::Man(_) => None,
    }
}

/// Whether the error (or one of its causes) proves the trace was tampered with.
fn tampering(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<dataseries::Error>().is_some_and(dataseries::Error::is_tampering)
            || c.downcast_ref::<ra_trace::Error>().is_some_and(ra_trace::Error::is_tampering)
            || c.downcast_ref::<std::io::Error>().is_some_and(|e| {
                e.get_ref().is_some_and(|e| e.is::<dataseries::crypt::ChunkAuthFailed>())
            })
    })
}

/// The note every reader gives for a trace that is not whole (cut, unfinished, an encrypted
/// one without its last chunk, a sealed one whose tail is not verified): one line on stderr,
/// `then` saying what the command does with what is there.
pub(crate) fn note_incomplete(
    path: &std::path::Path,
    incomplete: Option<dataseries::Incomplete>,
    then: &str,
) {
    if let Some(i) = incomplete {
        eprintln!("reanimator: note: {} {i}; {then}", spool::shown(path));
    }
}

/// The error and its causes on one line, `a: b: c`, leaving out a cause whose text the line
/// already ends with (library errors that show their source in their own message).
pub(crate) fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let t = cause.to_string();
        if line.is_empty() {
            line = t;
        } else if !line.ends_with(&t) {
            line.push_str(": ");
            line.push_str(&t);
        }
    }
    line
}
