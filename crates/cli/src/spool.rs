//! `-` (standard input) for the readers that open a trace as a file: they map it, read it by
//! its extent index or pass over it more than once (info, stats, export, profile, verify,
//! replay, compile), so the stream is first copied ("spooled") to a private temporary file
//! and the command reads that. Only `dump -` reads the stream as it arrives
//! ([`ra_trace::StreamReader`]).
//!
//! The file is an unnamed `O_TMPFILE` in `$TMPDIR` (mode 0600): it has no name to leave
//! behind, so it is gone when the process ends, however it ends (Ctrl-C, an error, a kill).
//! Its size is bounded by the free space there: running out is one clear error.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// A trace read from standard input into an unnamed temporary file.
pub struct Spool {
    /// Kept open: the file lives as long as this descriptor.
    file: File,
}

impl Spool {
    /// The path the command opens the spooled trace by (`/proc/self/fd/N`).
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
    }
}

/// Whether `p` is the path [`Spool::path`] gives (a trace that came from standard input), for
/// the outputs that name a trace by its file (export's `trace=` partition: `stdin`).
pub fn is_spooled(p: &Path) -> bool {
    p.to_str()
        .and_then(|s| s.strip_prefix("/proc/self/fd/"))
        .is_some_and(|n| n.parse::<u32>().is_ok())
}

/// Whether `p` names standard input.
pub fn is_stdin(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Copy standard input, to its end, into a new private temporary file; `cmd` names the
/// command in messages.
pub fn stdin(cmd: &str) -> Result<Spool> {
    let dir = std::env::temp_dir();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(&dir)
        .or_else(|_| named_then_removed(&dir))
        .map_err(|e| {
            anyhow::anyhow!(
                "{cmd} -: cannot create a temporary file in {} to hold the trace read from \
                 standard input: {e} (set TMPDIR to a writable directory)",
                dir.display()
            )
        })?;
    let mut input = std::io::stdin().lock();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, &file);
    let mut buf = vec![0u8; 1 << 20];
    let mut n: u64 = 0;
    let fail = |e: std::io::Error, n: u64| -> anyhow::Error {
        if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EDQUOT) {
            anyhow::anyhow!(
                "{cmd} -: {} is full after {n} bytes of the trace read from standard input \
                 (it is held in a temporary file there): set TMPDIR to a file system with room \
                 for the whole trace, or write the trace to a file and give that",
                dir.display()
            )
        } else {
            anyhow::anyhow!(
                "{cmd} -: writing the trace read from standard input to a temporary file in \
                 {}: {e}",
                dir.display()
            )
        }
    };
    loop {
        let k = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => bail!("{cmd} -: reading standard input: {e}"),
        };
        out.write_all(&buf[..k]).map_err(|e| fail(e, n))?;
        n += k as u64;
    }
    out.flush().map_err(|e| fail(e, n))?;
    drop(out);
    if n == 0 {
        bail!("{cmd} -: standard input is empty (no trace came)");
    }
    Ok(Spool { file })
}

/// Where `O_TMPFILE` is not supported: a new file with a random name, removed at once.
fn named_then_removed(dir: &Path) -> std::io::Result<File> {
    let mut last = None;
    for _ in 0..16 {
        let mut r = [0u8; 8];
        // SAFETY: getrandom writes at most r.len() bytes into r.
        unsafe { libc::getrandom(r.as_mut_ptr().cast(), r.len(), 0) };
        let p = dir.join(format!(".reanimator-stdin-{:016x}", u64::from_ne_bytes(r)));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&p)
        {
            Ok(f) => {
                std::fs::remove_file(&p)?;
                return Ok(f);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no name")))
}
