//! `reanimator snapshot`: write the logical state of a directory tree as a manifest.

use std::io::{BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use ra_fsstate::{
    BlobSink, DirStore, ManifestHeader, ManifestWriter, NoBlobs, ScanOptions, Scanner,
};

use crate::progress::ScanProgress;

#[derive(Args, Debug)]
#[command(after_help = "The manifest is JSON Lines: a header line, one line per entry sorted by \
    path bytes (names, kinds, sizes, modes, owners, BLAKE3 digests of file contents, symlink \
    targets, device numbers, xattrs, hard-link groups, mtimes), and a closing line with the \
    count. Symlinks are recorded, never followed; directories on other file systems are \
    recorded but not entered (unless --cross-mounts). Format: docs/TRACE_FORMAT.md section 9.\n\n\
    Examples:\n  \
    reanimator snapshot /srv/data -o before.jsonl\n  \
    reanimator snapshot /srv/data -o - | grep '\"kind\":\"symlink\"'\n  \
    reanimator snapshot /srv/data -o data.jsonl --store objects/   # also keep the contents\n  \
    reanimator diff before.jsonl /srv/data")]
pub struct SnapshotArgs {
    /// The directory to scan.
    pub dir: PathBuf,
    /// The manifest to write (replaced if it exists, mode 0600; `-` for standard output).
    #[arg(short = 'o', long, value_name = "MANIFEST")]
    pub output: PathBuf,
    /// Also copy each distinct file content into this directory, one file per BLAKE3 digest
    /// (OBJDIR/ab/abcd...): the manifest plus the store are a complete copy of the tree.
    #[arg(long, value_name = "OBJDIR")]
    pub store: Option<PathBuf>,
    /// Enter directories on other file systems (default: record mount points, don't enter).
    #[arg(long)]
    pub cross_mounts: bool,
    /// Don't print the summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

fn never() -> bool {
    false
}

pub fn run(a: SnapshotArgs) -> Result<ExitCode> {
    let dir = std::fs::canonicalize(&a.dir)
        .with_context(|| format!("cannot scan {}", a.dir.display()))?;
    let to_stdout = a.output.as_os_str() == "-";
    let result = write_manifest(&a, &dir, to_stdout);
    if result.is_err() && !to_stdout {
        // A partial manifest (no closing line) would be rejected anyway; don't leave it.
        let _ = std::fs::remove_file(&a.output);
    }
    let (stats, count) = result?;
    if !a.quiet {
        let out = if to_stdout { "standard output".into() } else { a.output.display().to_string() };
        let mut line = format!(
            "reanimator: {}: {} entries ({} files, {} bytes; {} directories, {} symlinks, {} other) -> {out}",
            dir.display(),
            count,
            stats.files,
            stats.file_bytes,
            stats.dirs,
            stats.symlinks,
            stats.others
        );
        if let Some(store) = &a.store {
            line.push_str(&format!(
                "; {} new contents ({} bytes) stored in {}",
                stats.blobs,
                stats.blob_bytes,
                store.display()
            ));
        }
        if stats.mount_points > 0 {
            line.push_str(&format!(
                "; {} mount points not entered (--cross-mounts enters them)",
                stats.mount_points
            ));
        }
        eprintln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `p`'s path relative to `dir` if it lies inside it (`p` need not exist yet).
fn inside(dir: &Path, p: &Path) -> Option<Vec<u8>> {
    let parent = p.parent().filter(|x| !x.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let full = std::fs::canonicalize(parent).ok()?.join(p.file_name()?);
    let rel = full.strip_prefix(dir).ok()?;
    Some(rel.as_os_str().as_bytes().to_vec()).filter(|r| !r.is_empty())
}

fn write_manifest(
    a: &SnapshotArgs,
    dir: &Path,
    to_stdout: bool,
) -> Result<(ra_fsstate::ScanStats, u64)> {
    let progress = ScanProgress::new();
    // The manifest and the store may be written inside the tree: leave them out of it.
    let ours: Vec<Vec<u8>> = [(!to_stdout).then_some(&a.output), a.store.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|p| inside(dir, p))
        .collect();
    let skip: Option<ra_fsstate::PathPredicate> = (!ours.is_empty())
        .then(|| std::sync::Arc::new(move |p: &[u8]| ours.iter().any(|o| o == p)) as _);
    let opts = ScanOptions {
        cross_mounts: a.cross_mounts,
        skip,
        progress: Some(progress.callback(format!("scanning {}", dir.display()), never)),
    };
    let mut scanner =
        Scanner::new(dir, opts).with_context(|| format!("cannot scan {}", dir.display()))?;
    let mut store = match &a.store {
        Some(p) => Some(DirStore::open(p)?),
        None => None,
    };
    let out: Box<dyn Write> = if to_stdout {
        Box::new(BufWriter::new(std::io::stdout().lock()))
    } else {
        let f = ra_fsstate::private::create(&a.output)
            .with_context(|| format!("cannot create {}", a.output.display()))?;
        Box::new(BufWriter::with_capacity(1 << 16, f))
    };
    let header = ManifestHeader {
        root: Some(dir.as_os_str().as_bytes().to_vec()),
        created_ns: Some(now_ns()),
        tool: Some(concat!("reanimator ", env!("CARGO_PKG_VERSION")).to_string()),
    };
    let mut w = ManifestWriter::new(out, &header)?;
    loop {
        let sink: &mut dyn BlobSink = match &mut store {
            Some(s) => s,
            None => &mut NoBlobs,
        };
        let Some(e) = scanner.next_with(sink) else { break };
        let e = e.with_context(|| format!("scanning {}", dir.display()))?;
        w.write(&e)?;
    }
    let count = w.count();
    w.finish()?;
    progress.finish();
    Ok((scanner.stats().clone(), count))
}
