//! `reanimator diff`: compare two directory trees' logical state; each side a directory, a
//! manifest, or a trace's stored snapshot. Exit status like diff(1).

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use ra_filter::Glob;
use ra_fsstate::JsonBytes;
use ra_fsstate::{
    escape, escape_bytes, Attr, DiffOptions, DiffStats, Difference, Entry, Kind, ManifestFile,
    ScanOptions, Scanner,
};
use ra_trace::{Phase, TraceReader};
use serde_json::{json, Value};

use crate::info::rfc3339;
use crate::progress::ScanProgress;

#[derive(Args, Debug)]
#[command(after_help = "A and B are each a directory (scanned now), a manifest written by \
    `reanimator snapshot`, or a trace's stored snapshot: TRACE.ds:start or TRACE.ds:end (the \
    first --snapshot directory of `reanimator record`), TRACE.ds:N:start for the N-th.\n\n\
    Compared: names, kinds, sizes, permission bits (setuid/setgid/sticky included), owners, \
    content digests (BLAKE3), symlink targets (never followed), device numbers, xattrs, \
    hard-link groups; modification times only with --times. Not compared: atime, ctime, \
    inode numbers, directory sizes.\n\n\
    Output, one line per difference in path order:\n  \
    + PATH (file, 12 B)                 only in B\n  \
    - PATH (dir)                        only in A\n  \
    ~ PATH: mode 0644 -> 0600, size 10 -> 12, content differs\n\
    then a summary line. Paths are escaped (\\n, \\\\, \\xNN for bytes that are not UTF-8; the \
    root is `.`). --json prints JSON Lines instead: one object per difference, then \
    {\"summary\": ...}.\n\n\
    Exit status: 0 the trees are equal, 1 they differ, 2 trouble (unreadable input, bad \
    manifest, ...).\n\n\
    Examples:\n  \
    reanimator diff before.jsonl /srv/data\n  \
    reanimator diff /srv/a /srv/b --ignore '.git' --ignore '**/*.pyc'\n  \
    reanimator diff trace.ds:end /tmp/replay-root --times\n  \
    reanimator diff -q a.jsonl b.jsonl && echo same")]
pub struct DiffArgs {
    #[command(flatten)]
    pub key: crate::output::ReadKeyArgs,
    /// The first tree (directory, manifest, TRACE.ds:start, TRACE.ds:end).
    #[arg(value_name = "A")]
    pub a: OsString,
    /// The second tree.
    #[arg(value_name = "B")]
    pub b: OsString,
    /// Compare modification times too.
    #[arg(long)]
    pub times: bool,
    /// Leave out paths matching this glob, and everything beneath them (repeatable). Globs
    /// match the whole path relative to the tree: `*` within a name, `**` across `/`, `?`,
    /// `[a-z]`.
    #[arg(long, value_name = "GLOB")]
    pub ignore: Vec<OsString>,
    /// Print JSON Lines (one object per difference, then a summary object).
    #[arg(long)]
    pub json: bool,
    /// Print nothing; the exit status tells (0 equal, 1 different).
    #[arg(short, long, conflicts_with = "json")]
    pub quiet: bool,
    /// Enter directories on other file systems when scanning a directory.
    #[arg(long)]
    pub cross_mounts: bool,
}

/// Where one side's entries come from.
enum Input {
    Dir(PathBuf),
    Manifest(PathBuf),
    Trace { path: PathBuf, index: u32, phase: Phase },
}

fn is_trace(p: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(p).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == b"DSv1"
}

fn parse_input(s: &OsStr) -> Result<Input> {
    let p = Path::new(s);
    if let Ok(m) = std::fs::metadata(p) {
        if m.is_dir() {
            return Ok(Input::Dir(p.to_path_buf()));
        }
        if is_trace(p) {
            bail!(
                "{} is a trace: say {0}:start or {0}:end for the directory state it holds",
                p.display()
            );
        }
        return Ok(Input::Manifest(p.to_path_buf()));
    }
    let b = s.as_bytes();
    let (rest, phase) = if let Some(r) = b.strip_suffix(b":start") {
        (r, Phase::Start)
    } else if let Some(r) = b.strip_suffix(b":end") {
        (r, Phase::End)
    } else {
        bail!("{}: no such file or directory", p.display());
    };
    let whole = Path::new(OsStr::from_bytes(rest));
    if whole.is_file() {
        return Ok(Input::Trace { path: whole.to_path_buf(), index: 0, phase });
    }
    if let Some(i) = rest.iter().rposition(|&c| c == b':') {
        if let Ok(index) = std::str::from_utf8(&rest[i + 1..]).unwrap_or("").parse::<u32>() {
            let path = Path::new(OsStr::from_bytes(&rest[..i]));
            if path.is_file() {
                return Ok(Input::Trace { path: path.to_path_buf(), index, phase });
            }
        }
    }
    bail!("{}: no such file or directory", whole.display())
}

fn describe(i: &Input) -> String {
    match i {
        Input::Dir(p) | Input::Manifest(p) => p.display().to_string(),
        Input::Trace { path, index, phase } => {
            format!(
                "{}:{}{}",
                path.display(),
                if *index > 0 { format!("{index}:") } else { String::new() },
                phase
            )
        }
    }
}

type Entries<'a> = Box<dyn Iterator<Item = ra_fsstate::Result<Entry>> + 'a>;

fn never() -> bool {
    false
}

fn open_entries<'a>(
    i: &Input,
    trace: Option<&'a TraceReader>,
    opts: &DiffArgs,
    progress: &ScanProgress,
    ignore: &Option<ra_fsstate::PathPredicate>,
    skipped: &Arc<AtomicU64>,
) -> Result<Entries<'a>> {
    Ok(match i {
        Input::Dir(p) => {
            // The scan leaves ignored subtrees out (and does not read them); count them for
            // the summary.
            let skip = ignore.clone().map(|pred| {
                let n = skipped.clone();
                Arc::new(move |p: &[u8]| {
                    let yes = pred(p);
                    if yes {
                        n.fetch_add(1, Ordering::Relaxed);
                    }
                    yes
                }) as ra_fsstate::PathPredicate
            });
            let scan = ScanOptions {
                cross_mounts: opts.cross_mounts,
                skip,
                progress: Some(progress.callback(format!("scanning {}", p.display()), never)),
            };
            Box::new(Scanner::new(p, scan).with_context(|| format!("cannot scan {}", p.display()))?)
        }
        Input::Manifest(p) => Box::new(
            ManifestFile::new(p)
                .open()
                .with_context(|| format!("cannot read the manifest {}", p.display()))?,
        ),
        Input::Trace { path, index, phase } => {
            let r = trace.expect("trace opened for trace inputs");
            let it = r
                .snapshot_entries(*index, *phase)
                .with_context(|| format!("{}", path.display()))?;
            Box::new(it.fs_errors())
        }
    })
}

fn open_trace(i: &Input) -> Result<Option<TraceReader>> {
    match i {
        Input::Trace { path, .. } => Ok(Some(
            TraceReader::open(path).with_context(|| format!("cannot read {}", path.display()))?,
        )),
        _ => Ok(None),
    }
}

pub fn run(a: DiffArgs) -> Result<ExitCode> {
    let ia = parse_input(&a.a)?;
    let ib = parse_input(&a.b)?;
    let mut globs = Vec::new();
    for g in &a.ignore {
        let glob = Glob::compile(g.as_bytes())
            .map_err(|e| anyhow::anyhow!("--ignore {}: {e}", g.to_string_lossy()))?;
        globs.push(glob);
    }
    let ignore: Option<ra_fsstate::PathPredicate> = if globs.is_empty() {
        None
    } else {
        Some(Arc::new(move |p: &[u8]| globs.iter().any(|g| g.matches(p))))
    };
    let ta = open_trace(&ia)?;
    let tb = open_trace(&ib)?;
    let progress = ScanProgress::new();
    let skipped = Arc::new(AtomicU64::new(0));
    let ea = open_entries(&ia, ta.as_ref(), &a, &progress, &ignore, &skipped)?;
    let eb = open_entries(&ib, tb.as_ref(), &a, &progress, &ignore, &skipped)?;
    let opts = DiffOptions { times: a.times, ignore, ..Default::default() };
    let mut d = ra_fsstate::diff(ea, eb, &opts);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (na, nb) = (describe(&ia), describe(&ib));
    for x in &mut d {
        let x = x.with_context(|| format!("comparing {na} with {nb}"))?;
        if a.quiet {
            // The exit status is all that is asked: the first difference decides it.
            progress.finish();
            return Ok(ExitCode::from(1));
        }
        progress.finish();
        if a.json {
            writeln!(out, "{}", diff_json(&x))?;
        } else {
            writeln!(out, "{}", diff_line(&x))?;
        }
    }
    progress.finish();
    let mut s = d.stats().clone();
    s.ignored += skipped.load(Ordering::Relaxed);
    if a.json {
        writeln!(out, "{}", json!({"summary": summary_json(&s, &na, &nb)}))?;
    } else if !a.quiet {
        writeln!(out, "{}", summary_line(&s))?;
    }
    out.flush()?;
    Ok(if s.equal() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn summary_line(s: &DiffStats) -> String {
    let ign = if s.ignored > 0 { format!("; {} ignored", s.ignored) } else { String::new() };
    if s.equal() {
        format!("no differences ({} entries{ign})", s.a_entries)
    } else {
        format!(
            "{} added, {} removed, {} changed (A: {} entries, B: {} entries{ign})",
            s.added, s.removed, s.changed, s.a_entries, s.b_entries
        )
    }
}

fn summary_json(s: &DiffStats, a: &str, b: &str) -> Value {
    json!({"a": a, "b": b, "equal": s.equal(), "added": s.added, "removed": s.removed,
           "changed": s.changed, "a_entries": s.a_entries, "b_entries": s.b_entries,
           "ignored": s.ignored})
}

fn size_text(n: u64) -> String {
    if n < 10_000 {
        format!("{n} B")
    } else {
        format!("{n} B, {}", indicatif::HumanBytes(n))
    }
}

fn what(e: &Entry) -> String {
    match e.kind {
        Kind::File => format!("file, {}", size_text(e.size)),
        Kind::Symlink => format!("symlink -> {}", quoted(e.target.as_deref().unwrap_or_default())),
        Kind::CharDevice | Kind::BlockDevice => {
            format!("{} device {}", e.kind, e.rdev.map(|r| r.to_string()).unwrap_or_default())
        }
        k => k.to_string(),
    }
}

fn quoted(b: &[u8]) -> String {
    format!("\"{}\"", escape_bytes(b).replace('"', "\\\""))
}

fn link_text(e: &Entry) -> String {
    match &e.link {
        Some(l) => format!("hard link to {}", escape(l)),
        None => "no earlier hard link".into(),
    }
}

fn xattr_changes(a: &Entry, b: &Entry) -> String {
    let mut v = Vec::new();
    for (n, va) in &a.xattrs {
        match b.xattrs.get(n) {
            None => v.push(format!("{} removed", escape_bytes(n))),
            Some(vb) if vb != va => v.push(format!("{} changed", escape_bytes(n))),
            _ => {}
        }
    }
    for n in b.xattrs.keys().filter(|n| !a.xattrs.contains_key(*n)) {
        v.push(format!("{} added", escape_bytes(n)));
    }
    format!("xattrs ({})", v.join(", "))
}

fn attr_text(attr: Attr, a: &Entry, b: &Entry) -> String {
    match attr {
        Attr::Kind => format!("kind {} -> {}", a.kind, b.kind),
        Attr::Mode => format!("mode {:04o} -> {:04o}", a.mode, b.mode),
        Attr::Uid => format!("uid {} -> {}", a.uid, b.uid),
        Attr::Gid => format!("gid {} -> {}", a.gid, b.gid),
        Attr::Size => format!("size {} -> {}", a.size, b.size),
        Attr::Content => "content differs".into(),
        Attr::Target => format!(
            "target {} -> {}",
            quoted(a.target.as_deref().unwrap_or_default()),
            quoted(b.target.as_deref().unwrap_or_default())
        ),
        Attr::Rdev => format!(
            "rdev {} -> {}",
            a.rdev.map(|r| r.to_string()).unwrap_or_default(),
            b.rdev.map(|r| r.to_string()).unwrap_or_default()
        ),
        Attr::Xattrs => xattr_changes(a, b),
        Attr::Link => format!("{} -> {}", link_text(a), link_text(b)),
        Attr::Mtime => format!("mtime {} -> {}", rfc3339(a.mtime_ns), rfc3339(b.mtime_ns)),
    }
}

pub(crate) fn diff_line(d: &Difference) -> String {
    match d {
        Difference::Added(e) => format!("+ {} ({})", escape(&e.path), what(e)),
        Difference::Removed(e) => format!("- {} ({})", escape(&e.path), what(e)),
        Difference::Changed { a, b, attrs } => {
            let parts: Vec<String> = attrs.iter().map(|&x| attr_text(x, a, b)).collect();
            format!("~ {}: {}", escape(&a.path), parts.join(", "))
        }
    }
}

fn bytes_json(obj: &mut serde_json::Map<String, Value>, field: &str, b: &[u8]) {
    obj.insert(field.to_string(), JsonBytes::value(b));
}

fn entry_json(e: &Entry) -> Value {
    let mut o = serde_json::Map::new();
    o.insert("kind".into(), json!(e.kind.name()));
    o.insert("size".into(), json!(e.size));
    o.insert("mode".into(), json!(format!("{:04o}", e.mode)));
    if let Some(t) = &e.target {
        bytes_json(&mut o, "target", t);
    }
    Value::Object(o)
}

fn attr_json(attr: Attr, e: &Entry) -> Value {
    let opt_bytes = |b: &Option<Vec<u8>>| match b {
        Some(b) => JsonBytes::value(b),
        None => Value::Null,
    };
    match attr {
        Attr::Kind => json!(e.kind.name()),
        Attr::Mode => json!(format!("{:04o}", e.mode)),
        Attr::Uid => json!(e.uid),
        Attr::Gid => json!(e.gid),
        Attr::Size => json!(e.size),
        Attr::Content => json!(e.digest.map(|d| d.to_hex())),
        Attr::Target => opt_bytes(&e.target),
        Attr::Rdev => json!(e.rdev.map(|r| r.to_string())),
        Attr::Xattrs => Value::Array(
            e.xattrs
                .iter()
                .map(|(n, v)| {
                    let mut o = serde_json::Map::new();
                    bytes_json(&mut o, "name", n);
                    bytes_json(&mut o, "value", v);
                    Value::Object(o)
                })
                .collect(),
        ),
        Attr::Link => opt_bytes(&e.link),
        Attr::Mtime => json!(e.mtime_ns),
    }
}

fn diff_json(d: &Difference) -> Value {
    let mut o = serde_json::Map::new();
    let (change, path) = match d {
        Difference::Added(e) => ("added", &e.path),
        Difference::Removed(e) => ("removed", &e.path),
        Difference::Changed { a, .. } => ("changed", &a.path),
    };
    o.insert("change".into(), json!(change));
    bytes_json(&mut o, "path", path);
    match d {
        Difference::Added(e) | Difference::Removed(e) => {
            o.insert("entry".into(), entry_json(e));
        }
        Difference::Changed { a, b, attrs } => {
            let mut m = serde_json::Map::new();
            for &x in attrs {
                m.insert(x.name().into(), json!([attr_json(x, a), attr_json(x, b)]));
            }
            o.insert("attrs".into(), Value::Object(m));
        }
    }
    Value::Object(o)
}
