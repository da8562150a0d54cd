//! `-` (standard input) for the readers that open a trace as a file: they map it, read it by
//! its extent index or pass over it more than once (info, stats, export, profile, verify,
//! replay, compile), so the stream is first copied ("spooled") to a private temporary file
//! and the command reads that. Only `dump -` reads the stream as it arrives
//! ([`ra_trace::StreamReader`]).
//!
//! The file is an unnamed `O_TMPFILE` in `$TMPDIR` (mode 0600): it has no name to leave
//! behind, so it is gone when the process ends, however it ends (Ctrl-C, an error, a kill).
//! Its size is bounded by the free space there: running out is one clear error.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{bail, Result};

/// A trace read from standard input into an unnamed temporary file.
pub struct Spool {
    /// Kept open: the file lives as long as this descriptor.
    file: File,
}

/// The path of this process's spooled trace, once there is one (at most one: `-` is given
/// once).
static SPOOLED: OnceLock<PathBuf> = OnceLock::new();

impl Spool {
    /// The path the command opens the spooled trace by (`/proc/self/fd/N`). Never shown to
    /// the user: [`shown`], [`json_name`] and [`unspooled`] name it `standard input` / `-`.
    pub fn path(&self) -> PathBuf {
        let p = PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()));
        SPOOLED.get_or_init(|| p.clone());
        p
    }
}

/// Whether `p` is the spooled trace (one that came from standard input), for the outputs
/// that name a trace by its file (export's `trace=` partition: `stdin`).
pub fn is_spooled(p: &Path) -> bool {
    SPOOLED.get().is_some_and(|s| s == p)
}

/// How messages and text headers name the trace at `p`: `standard input` for the spooled
/// trace (as head and tail name `-`), else its path as given.
pub fn shown(p: &Path) -> Cow<'_, str> {
    if is_spooled(p) {
        Cow::Borrowed("standard input")
    } else {
        p.to_string_lossy()
    }
}

/// How JSON and other output for scripts names the trace at `p`: `-` for the spooled trace
/// (the argument it was given by), else its path as given.
pub fn json_name(p: &Path) -> String {
    if is_spooled(p) {
        "-".to_string()
    } else {
        p.display().to_string()
    }
}

/// `text` (an error's message, with causes from the libraries, which name files by their
/// paths) with the spooled trace's path named `standard input`.
pub fn unspooled(text: &str) -> Cow<'_, str> {
    let Some(p) = SPOOLED.get().and_then(|p| p.to_str()) else {
        return Cow::Borrowed(text);
    };
    if !text.contains(p) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(p) {
        let after = &rest[i + p.len()..];
        out.push_str(&rest[..i]);
        // `/proc/self/fd/3` is not the start of `/proc/self/fd/35`.
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            out.push_str(p);
        } else {
            out.push_str("standard input");
        }
        rest = after;
    }
    out.push_str(rest);
    Cow::Owned(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The path is named `standard input` wherever it stands whole, and only there.
    #[test]
    fn unspooled_names_the_spooled_path_only() {
        let p = SPOOLED.get_or_init(|| PathBuf::from("/proc/self/fd/3"));
        assert_eq!(p, Path::new("/proc/self/fd/3"), "another test spooled first");
        assert_eq!(
            unspooled("cannot read /proc/self/fd/3: extent at offset 40 (/proc/self/fd/3)"),
            "cannot read standard input: extent at offset 40 (standard input)"
        );
        assert_eq!(unspooled("/proc/self/fd/35 and /x"), "/proc/self/fd/35 and /x");
        assert_eq!(unspooled("/proc/self/fd/3"), "standard input");
        assert!(is_spooled(Path::new("/proc/self/fd/3")));
        assert!(!is_spooled(Path::new("/proc/self/fd/4")));
        assert_eq!(shown(Path::new("/proc/self/fd/3")), "standard input");
        assert_eq!(shown(Path::new("a.ds")), "a.ds");
        assert_eq!(json_name(Path::new("/proc/self/fd/3")), "-");
    }
}
