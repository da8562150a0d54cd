//! `reanimator replay TRACE --root A --compare B [--compare C ...]`: differential replay.
//!
//! The trace is replayed into each root in turn (each prepared by the same `--init`), with
//! every call's outcome spilled to a file per root ([`ra_replay::compare`]); the roots'
//! outcomes are then merge-joined by unique_id, and each `--compare` root's final tree is
//! compared with `--root`'s.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use ra_fsstate::{DiffOptions, ScanOptions, Scanner};
use ra_replay::compare::{self, CallOutcome, Comparison, OutcomeSink, Outcomes};
use ra_replay::{Progress, Report};
use serde_json::{json, Value};

use crate::replay::{install_stop_handler, prepare_root, replay_into, Input, ReplayArgs};

/// Tree differences listed per pair of roots (all are counted).
const TREE_LINES: usize = 20;

/// The file system a directory lives on.
#[derive(Clone, Debug, Default)]
struct FsInfo {
    /// `ext4`, `xfs`, `tmpfs`, ... (from /proc/self/mountinfo), or statfs's f_type in hex.
    fs_type: String,
    /// The mount's source (`/dev/loop0`, `tmpfs`) and mount point.
    source: String,
    mount_point: String,
}

/// One root's replay.
struct RootRun {
    path: PathBuf,
    fs: FsInfo,
    report: Report,
    /// Initial state, replay and final-state check.
    wall: Duration,
}

/// Undo mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount `dir` (canonical) lives on, from /proc/self/mountinfo: the last-mounted entry
/// with the longest mount point that holds it; statfs's f_type where mountinfo says nothing.
fn fs_info(dir: &Path) -> FsInfo {
    let mut best: Option<(usize, FsInfo)> = None;
    if let Ok(m) = std::fs::read_to_string("/proc/self/mountinfo") {
        for l in m.lines() {
            let Some((pre, post)) = l.split_once(" - ") else { continue };
            let Some(mp) = pre.split(' ').nth(4).map(unescape) else { continue };
            let mut post = post.split(' ');
            let (Some(t), Some(src)) = (post.next(), post.next()) else { continue };
            if !dir.starts_with(&mp) {
                continue;
            }
            if best.as_ref().is_none_or(|(n, _)| mp.len() >= *n) {
                let fs = FsInfo {
                    fs_type: t.to_string(),
                    source: unescape(src),
                    mount_point: mp.clone(),
                };
                best = Some((mp.len(), fs));
            }
        }
    }
    if let Some((_, fs)) = best {
        return fs;
    }
    let t = statfs_type(dir).map_or_else(|e| format!("unknown ({e})"), |t| format!("{t:#x}"));
    FsInfo { fs_type: t, ..Default::default() }
}

/// statfs's f_type.
fn statfs_type(dir: &Path) -> std::io::Result<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: an all-zero statfs is valid; statfs fills it from a NUL-terminated path.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_type)
}

/// `--root` then each `--compare`, checked: existing, distinct directories, none inside
/// another, each usable as a replay root.
fn roots(a: &ReplayArgs) -> Result<Vec<PathBuf>> {
    let mut named: Vec<(String, PathBuf)> = vec![("--root".into(), a.root.clone())];
    named.extend(a.compare.iter().map(|p| ("--compare".to_string(), p.clone())));
    let mut canon: Vec<(String, PathBuf, PathBuf)> = Vec::new();
    for (flag, p) in named {
        let c = match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => {
                p.canonicalize().with_context(|| format!("{flag} {}: resolving it", p.display()))?
            }
            Ok(_) => bail!("{flag} {} is not a directory", p.display()),
            Err(e) => bail!(
                "{flag} {}: {e} (each root must be an existing directory: mkdir -p {})",
                p.display(),
                p.display()
            ),
        };
        for (f2, p2, c2) in &canon {
            if *c2 == c {
                bail!(
                    "{flag} {} is the same directory as {f2} {}: each root must be a directory \
                     of its own",
                    p.display(),
                    p2.display()
                );
            }
            let (inner, outer) = if c.starts_with(c2) {
                ((&flag, &p), (f2, p2))
            } else if c2.starts_with(&c) {
                ((f2, p2), (&flag, &p))
            } else {
                continue;
            };
            bail!(
                "{} {} lies inside {} {}: a replay into the outer root would write into the \
                 inner one; pick directories side by side",
                inner.0,
                inner.1.display(),
                outer.0,
                outer.1.display()
            );
        }
        canon.push((flag, p, c));
    }
    for (flag, p, _) in &canon {
        prepare_root(p, a, &a.trace).with_context(|| format!("{flag} {}", p.display()))?;
    }
    Ok(canon.into_iter().map(|(_, p, _)| p).collect())
}

/// The differences between two roots' final trees: (count, first lines).
fn tree_diff(a: &Path, b: &Path) -> Result<(u64, Vec<String>)> {
    let scan = |p: &Path| {
        Scanner::new(p, ScanOptions::default())
            .with_context(|| format!("cannot scan {}", p.display()))
    };
    let mut n = 0;
    let mut first = Vec::new();
    for d in ra_fsstate::diff(scan(a)?, scan(b)?, &DiffOptions::default()) {
        let d = d.with_context(|| format!("comparing {} with {}", a.display(), b.display()))?;
        n += 1;
        if first.len() < TREE_LINES {
            first.push(crate::diff::diff_line(&d));
        }
    }
    Ok((n, first))
}

/// Root labels: A, B, C, ...
fn label(i: usize) -> String {
    let mut s = String::new();
    let mut i = i;
    loop {
        s.insert(0, (b'A' + (i % 26) as u8) as char);
        if i < 26 {
            return s;
        }
        i = i / 26 - 1;
    }
}

/// One root's outcome of a call, as the report shows it.
fn show_outcome(o: Option<&CallOutcome>) -> String {
    let Some(o) = o else { return "not replayed".into() };
    let mut s = o.res.show();
    if let Some(d) = o.digest {
        s.push_str(&format!(", data {}", ra_hex::encode(&d[..6])));
    }
    let mode = compare::mode_name(o.mode);
    if mode != "issued" {
        s.push_str(&format!(" ({mode})"));
    }
    if o.matches_recording == Some(false) {
        s.push_str(" [differs from the recording]");
    }
    s
}

fn outcome_json(o: Option<&CallOutcome>) -> Value {
    let Some(o) = o else { return json!({"replayed": false}) };
    json!({
        "replayed": true,
        "mode": compare::mode_name(o.mode),
        "result": o.res.show(),
        "data_blake3_128": o.digest.map(|d| ra_hex::encode(&d)),
        "matches_recording": o.matches_recording,
    })
}

pub fn run(a: &ReplayArgs, input: &Input) -> Result<ExitCode> {
    let roots = roots(a)?;
    let progress = Arc::new(Progress::default());
    install_stop_handler(progress.clone());
    let log_file = match (&a.log, a.verbose) {
        (Some(p), 1..) => Some(
            ra_fsstate::private::create(p)
                .with_context(|| format!("creating the log {}", p.display()))?,
        ),
        _ => None,
    };
    let spill = std::env::temp_dir();
    let mut runs: Vec<RootRun> = Vec::new();
    let mut all: Vec<Outcomes> = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        if progress.stop.load(Ordering::Relaxed) {
            break;
        }
        progress.read.store(0, Ordering::Relaxed);
        progress.done.store(0, Ordering::Relaxed);
        let log: Option<Box<dyn Write + Send>> = match (&log_file, a.verbose) {
            (_, 0) => None,
            (Some(f), _) => {
                let mut f = f.try_clone().context("the log")?;
                writeln!(f, "# root {} {}", label(i), root.display()).context("writing the log")?;
                Some(Box::new(std::io::BufWriter::new(f)))
            }
            (None, _) => {
                eprintln!("# root {} {}", label(i), root.display());
                Some(Box::new(std::io::stderr()))
            }
        };
        let sink = OutcomeSink::new(&spill).with_context(|| {
            format!("creating the outcome spill file in {} ($TMPDIR)", spill.display())
        })?;
        let canon = root.canonicalize().unwrap_or_else(|_| root.clone());
        let fs = fs_info(&canon);
        let started = Instant::now();
        let report = replay_into(a, input, root, Some(sink.clone()), &progress, log)
            .with_context(|| format!("root {} ({})", label(i), root.display()))?;
        let wall = started.elapsed();
        let outcomes = sink
            .finish()
            .with_context(|| format!("the outcome spill file of root {}", root.display()))?;
        runs.push(RootRun { path: root.clone(), fs, report, wall });
        all.push(outcomes);
    }
    let interrupted = runs.len() < roots.len();
    let cmp = compare::compare(&all, a.max_mismatches).context("comparing the roots' outcomes")?;
    let mut trees = Vec::new();
    for r in runs.iter().skip(1) {
        trees.push((r.path.clone(), tree_diff(&runs[0].path, &r.path)?));
    }
    let roots_clean = runs.iter().all(|r| r.report.clean());
    let agree = cmp.differing == 0 && trees.iter().all(|t| t.1 .0 == 0);
    let out = Out { a, runs: &runs, cmp: &cmp, trees: &trees, interrupted, names: &roots };
    let j = out.json(agree, roots_clean);
    if let Some(p) = &a.report {
        let s = serde_json::to_string_pretty(&j)?;
        ra_fsstate::private::write(p, (s + "\n").as_bytes())
            .with_context(|| format!("writing the report {}", p.display()))?;
    }
    if a.json {
        let mut o = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut o, &j)?;
        writeln!(o)?;
    } else if !a.quiet {
        out.print(agree, roots_clean)?;
    }
    Ok(if agree && roots_clean && !interrupted { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

struct Out<'a> {
    a: &'a ReplayArgs,
    runs: &'a [RootRun],
    cmp: &'a Comparison,
    trees: &'a [(PathBuf, (u64, Vec<String>))],
    interrupted: bool,
    names: &'a [PathBuf],
}

impl Out<'_> {
    fn json(&self, agree: bool, roots_clean: bool) -> Value {
        let roots: Vec<Value> = self
            .runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({
                    "label": label(i),
                    "path": r.path.display().to_string(),
                    "fs_type": r.fs.fs_type,
                    "mount_source": r.fs.source,
                    "mount_point": r.fs.mount_point,
                    "elapsed_s": r.report.elapsed_ns as f64 / 1e9,
                    "wall_s": r.wall.as_secs_f64(),
                    "report": r.report.to_json(),
                })
            })
            .collect();
        let not_replayed: Vec<String> =
            self.names[self.runs.len()..].iter().map(|p| p.display().to_string()).collect();
        json!({
            "trace": self.a.trace.display().to_string(),
            "roots": roots,
            "not_replayed": not_replayed,
            "calls": {
                "compared": self.cmp.calls,
                "differing": self.cmp.differing,
                "per_call": self.cmp.per_call,
                "differences": self.cmp.first.iter().map(|d| json!({
                    "unique_id": d.unique_id,
                    "call": d.call,
                    "recorded": d.recorded.show(),
                    "outcomes": d.outcomes.iter().map(|o| outcome_json(o.as_ref())).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            },
            "trees": self.trees.iter().map(|(p, (n, first))| json!({
                "a": self.runs[0].path.display().to_string(),
                "b": p.display().to_string(),
                "differences": n,
                "first": first,
            })).collect::<Vec<_>>(),
            "roots_agree": agree,
            "roots_match_recording": roots_clean,
            "interrupted": self.interrupted,
        })
    }

    fn print(&self, agree: bool, roots_clean: bool) -> Result<()> {
        let mut o = std::io::stdout().lock();
        writeln!(
            o,
            "differential replay of {} into {} roots",
            self.a.trace.display(),
            self.names.len()
        )?;
        writeln!(o)?;
        writeln!(
            o,
            "{:<4} {:<10} {:>9} {:>9} {:>9} {:>10} {:>12}  path",
            "root", "fs", "replay s", "total s", "calls", "mismatched", "final state"
        )?;
        for (i, r) in self.runs.iter().enumerate() {
            let t = r.report.totals();
            let fin = if r.report.final_state.is_empty() {
                "-".to_string()
            } else {
                let n: u64 = r.report.final_state.iter().map(|f| f.1).sum();
                if n == 0 {
                    "identical".to_string()
                } else {
                    format!("{n} diffs")
                }
            };
            writeln!(
                o,
                "{:<4} {:<10} {:>9.3} {:>9.3} {:>9} {:>10} {:>12}  {}{}",
                label(i),
                r.fs.fs_type,
                r.report.elapsed_ns as f64 / 1e9,
                r.wall.as_secs_f64(),
                t.replayed,
                t.mismatched,
                fin,
                r.path.display(),
                if r.fs.source.is_empty() { String::new() } else { format!(" ({})", r.fs.source) }
            )?;
        }
        for p in &self.names[self.runs.len()..] {
            writeln!(o, "     not replayed (interrupted): {}", p.display())?;
        }
        writeln!(o, "\n(mismatched: calls that differ from the recording; final state: against the recorded end state)")?;
        for (i, r) in self.runs.iter().enumerate() {
            if r.report.mismatches.is_empty() && r.report.aborted.is_none() {
                continue;
            }
            writeln!(
                o,
                "\nroot {} against the recording ({} calls differ in all):",
                label(i),
                r.report.mismatch_total
            )?;
            for m in &r.report.mismatches {
                writeln!(
                    o,
                    "  #{} {}: {}: expected {}, got {}",
                    m.unique_id, m.call, m.diff.what, m.diff.expected, m.diff.actual
                )?;
            }
            if let Some(why) = &r.report.aborted {
                writeln!(o, "  stopped early: {why}")?;
            }
        }
        let c = self.cmp;
        writeln!(o)?;
        if c.differing == 0 {
            writeln!(o, "calls: the roots agree on all {} calls", c.calls)?;
        } else {
            let per: Vec<String> = c.per_call.iter().map(|(k, n)| format!("{k} {n}")).collect();
            writeln!(
                o,
                "calls: the roots differ on {} of {} calls ({})",
                c.differing,
                c.calls,
                per.join(", ")
            )?;
            for d in &c.first {
                writeln!(o, "  #{} {}: recorded {}", d.unique_id, d.call, d.recorded.show())?;
                for (i, x) in d.outcomes.iter().enumerate() {
                    let fs = self.runs.get(i).map_or("", |r| r.fs.fs_type.as_str());
                    writeln!(o, "      {} {:<8} {}", label(i), fs, show_outcome(x.as_ref()))?;
                }
            }
            if c.differing > c.first.len() as u64 {
                writeln!(
                    o,
                    "  ... {} more (--max-mismatches)",
                    c.differing - c.first.len() as u64
                )?;
            }
        }
        for (p, (n, first)) in self.trees {
            let b = self.runs.iter().position(|r| &r.path == p).unwrap_or(0);
            if *n == 0 {
                writeln!(o, "trees: A and {} are identical", label(b))?;
            } else {
                writeln!(o, "trees: A -> {}: {n} differences", label(b))?;
                for l in first {
                    writeln!(o, "  {l}")?;
                }
            }
        }
        writeln!(
            o,
            "\n{}; {}",
            if agree { "the roots agree" } else { "the roots DIFFER" },
            if roots_clean {
                "every root matched the recording"
            } else {
                "some root differs from the recording"
            }
        )?;
        if self.interrupted {
            writeln!(o, "stopped early: interrupted")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_mountinfo_escapes() {
        assert_eq!(
            [label(0), label(1), label(25), label(26), label(27)],
            ["A", "B", "Z", "AA", "AB"]
        );
        assert_eq!(unescape(r"/mnt/a\040b\134c"), r"/mnt/a b\c");
        assert_eq!(unescape(r"/x\04"), r"/x\04");
    }

    #[test]
    fn the_file_system_of_a_directory_comes_from_mountinfo() {
        let fs = fs_info(Path::new("/proc/self"));
        assert_eq!((fs.fs_type.as_str(), fs.mount_point.as_str()), ("proc", "/proc"));
    }
}
