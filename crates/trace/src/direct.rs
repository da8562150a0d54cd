//! The trace file's output: writes that bypass the page cache (`O_DIRECT`) where the file
//! system allows it.
//!
//! A recorder writes hundreds of MB per second. Through the page cache every byte is copied
//! into freshly allocated cache pages by the writing thread; on the project's VM that copy ran
//! at ~420 MB per CPU-second (`dd bs=4M` of 2 GB: 4.75 s of system time), against 0.14 s for
//! the same 2 GB with `oflag=direct`. With two cores the traced program and the recorder share,
//! that copy alone was the largest cost of recording fio with full buffers (perf: 28 % of all
//! samples). So the trace is written in aligned blocks with `O_DIRECT`:
//!
//! - bytes are gathered in a 4 KiB-aligned buffer and written in whole 4 KiB blocks at their
//!   file offsets;
//! - [`Write::flush`] (the trace writer flushes every second, so that a killed recorder leaves
//!   a readable file) also writes the unaligned tail, through the page cache (`O_DIRECT`
//!   cleared for that one write); the tail stays buffered and is written again, direct, once
//!   its block is complete — the kernel writes back and drops cached pages of a range before a
//!   direct write to it, so the file always reads back as written;
//! - where the file system refuses `O_DIRECT` (at open, or `EINVAL` on a write: tmpfs before
//!   6.6, some FUSE and network file systems) it falls back to ordinary writes, same buffering.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::OFlags;

/// Block size and buffer alignment for direct writes (covers 512-byte and 4 KiB devices).
const ALIGN: usize = 4096;
/// Bytes gathered before a write.
const CAPACITY: usize = 4 << 20;

/// A created (truncated) file written through an aligned buffer, `O_DIRECT` where possible.
pub struct TraceFile {
    file: File,
    /// `CAPACITY + ALIGN` bytes; the aligned window starts at `start`.
    mem: Vec<u8>,
    start: usize,
    /// Bytes in the window.
    len: usize,
    /// File offset of the window's first byte (a multiple of ALIGN while `direct`).
    base: u64,
    direct: bool,
}

impl TraceFile {
    /// Create (truncate) `path`.
    pub fn create(path: &Path) -> io::Result<TraceFile> {
        let open = |flags: OFlags| {
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .custom_flags(flags.bits() as i32)
                .open(path)
        };
        let (file, direct) = match open(OFlags::DIRECT) {
            Ok(f) => (f, true),
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) => {
                (open(OFlags::empty())?, false)
            }
            Err(e) => return Err(e),
        };
        let mem = vec![0u8; CAPACITY + ALIGN];
        let start = mem.as_ptr().align_offset(ALIGN);
        Ok(TraceFile { file, mem, start, len: 0, base: 0, direct })
    }

    fn window(&self) -> &[u8] {
        &self.mem[self.start..self.start + self.len]
    }

    fn set_direct(&mut self, on: bool) -> io::Result<()> {
        let flags = rustix::fs::fcntl_getfl(&self.file)?;
        let flags = if on { flags | OFlags::DIRECT } else { flags - OFlags::DIRECT };
        rustix::fs::fcntl_setfl(&self.file, flags)?;
        Ok(())
    }

    /// Write `n` bytes of the window at `base`, falling back to buffered writes for good if
    /// the file system rejects a direct one.
    fn write_window(&mut self, n: usize) -> io::Result<()> {
        let r = self.file.write_all_at(&self.window()[..n], self.base);
        match r {
            Err(e)
                if self.direct
                    && e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) =>
            {
                self.set_direct(false)?;
                self.direct = false;
                self.file.write_all_at(&self.window()[..n], self.base)
            }
            r => r,
        }
    }

    /// Write the complete blocks of the window (all of it when not direct) and keep the rest.
    fn spill(&mut self) -> io::Result<()> {
        let n = if self.direct { self.len & !(ALIGN - 1) } else { self.len };
        if n == 0 {
            return Ok(());
        }
        self.write_window(n)?;
        let (s, l) = (self.start, self.len);
        self.mem.copy_within(s + n..s + l, s);
        self.len -= n;
        self.base += n as u64;
        Ok(())
    }
}

impl Write for TraceFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = data.len().min(CAPACITY - self.len);
        let at = self.start + self.len;
        self.mem[at..at + n].copy_from_slice(&data[..n]);
        self.len += n;
        if self.len == CAPACITY {
            self.spill()?;
        }
        Ok(n)
    }

    /// Everything written so far reaches the kernel (the unaligned tail through the page
    /// cache).
    fn flush(&mut self) -> io::Result<()> {
        self.spill()?;
        if self.len > 0 {
            // Only a direct file keeps a tail: write it buffered, keep it for its block.
            self.set_direct(false)?;
            let r = self.file.write_all_at(self.window(), self.base);
            self.set_direct(true)?;
            r?;
        }
        Ok(())
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        // The trace writer flushes explicitly (and reports errors) before dropping; this only
        // matters when it is dropped on an error path, where the first error was reported.
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes of every size across block and buffer boundaries, flushes in between: the file
    /// always reads back as exactly what was written, on a file system with O_DIRECT and on
    /// /dev/shm (tmpfs).
    #[test]
    fn reads_back_exactly_what_was_written() {
        let mut dirs = vec![std::env::temp_dir()];
        if Path::new("/dev/shm").is_dir() {
            dirs.push("/dev/shm".into());
        }
        if Path::new("/var/tmp").is_dir() {
            dirs.push("/var/tmp".into());
        }
        for d in dirs {
            let p = d.join(format!("ra-direct-{}.bin", std::process::id()));
            let mut f = TraceFile::create(&p).unwrap();
            let mut want = Vec::new();
            let mut x = 7u32;
            for i in 0..60usize {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let n = match i % 5 {
                    0 => 1,
                    1 => 4095,
                    2 => (x as usize) % 100_000,
                    3 => ALIGN,
                    _ => (x as usize) % (3 * CAPACITY / 2),
                };
                let chunk: Vec<u8> = (0..n).map(|j| (i * 31 + j) as u8).collect();
                f.write_all(&chunk).unwrap();
                want.extend_from_slice(&chunk);
                if i % 6 == 0 {
                    f.flush().unwrap();
                    assert_eq!(std::fs::read(&p).unwrap(), want, "{} after flush {i}", d.display());
                }
            }
            f.flush().unwrap();
            drop(f);
            let got = std::fs::read(&p).unwrap();
            assert_eq!(got.len(), want.len(), "{}", d.display());
            assert!(got == want, "{}: content differs", d.display());
            std::fs::remove_file(&p).unwrap();
        }
    }
}
