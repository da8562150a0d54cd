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
//!   6.6, some FUSE and network file systems) it falls back to ordinary writes, same buffering;
//! - the writes themselves run on a thread of their own (`trace-io`), up to eight 4 MiB blocks
//!   in flight: a direct write waits for the device (~7 ms per 4 MiB on the project's VM, with
//!   runs of 20-47 ms writes after each one-second flush), and done inline that wait stalled
//!   the thread building extents ~20 % of the time, which backed the recorder up until the
//!   eBPF ring filled and the traced program was stopped. Two blocks in flight (8 MiB, ~15 ms
//!   of fio's 4 KiB writes) still let those slow runs stop fio for 60-240 ms per 10 s; eight
//!   (32 MiB) absorb most of them.
//!   An error of a write in flight is returned by the next `write` or `flush`.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use rustix::fs::OFlags;

/// Block size and buffer alignment for direct writes (covers 512-byte and 4 KiB devices).
const ALIGN: usize = 4096;
/// Bytes gathered before a write.
const CAPACITY: usize = 4 << 20;
/// Full buffers handed to the I/O thread and not yet written back; the writer waits beyond.
/// (Each is allocated when first needed: a slow writer never holds more.)
const IN_FLIGHT: usize = 8;

/// `CAPACITY` bytes aligned to `ALIGN`.
struct Block {
    mem: Vec<u8>,
    start: usize,
}

impl Block {
    fn new() -> Block {
        let mem = vec![0u8; CAPACITY + ALIGN];
        let start = mem.as_ptr().align_offset(ALIGN);
        Block { mem, start }
    }

    fn bytes(&self) -> &[u8] {
        &self.mem[self.start..self.start + CAPACITY]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.start..self.start + CAPACITY]
    }
}

/// The file and whether it is still written direct (cleared for good when the file system
/// refuses a direct write).
struct Shared {
    file: File,
    direct: AtomicBool,
}

/// Turn `O_DIRECT` on or off for `file` (`EINVAL` where its file system refuses it).
fn set_direct(file: &File, on: bool) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(file)?;
    let flags = if on { flags | OFlags::DIRECT } else { flags - OFlags::DIRECT };
    rustix::fs::fcntl_setfl(file, flags)?;
    Ok(())
}

impl Shared {
    fn set_direct(&self, on: bool) -> io::Result<()> {
        set_direct(&self.file, on)
    }

    /// Write `b` at `at`, falling back to buffered writes for good if the file system rejects
    /// a direct one.
    fn write_at(&self, b: &[u8], at: u64) -> io::Result<()> {
        match self.file.write_all_at(b, at) {
            Err(e)
                if self.direct.load(Ordering::Relaxed)
                    && e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) =>
            {
                self.set_direct(false)?;
                self.direct.store(false, Ordering::Relaxed);
                self.file.write_all_at(b, at)
            }
            r => r,
        }
    }
}

/// One full buffer to write: its first `len` bytes at file offset `at`.
struct Job {
    block: Block,
    len: usize,
    at: u64,
}

/// A created (truncated) file written through an aligned buffer, `O_DIRECT` where possible,
/// by a thread of its own.
pub struct TraceFile {
    shared: Arc<Shared>,
    /// The buffer being filled: `len` bytes, the first at file offset `base` (a multiple of
    /// ALIGN while direct).
    cur: Block,
    len: usize,
    base: u64,
    /// Buffers written back and free to fill.
    free: Vec<Block>,
    in_flight: usize,
    jobs: Option<SyncSender<Job>>,
    done: Receiver<(Block, io::Result<()>)>,
    thread: Option<JoinHandle<()>>,
}

impl TraceFile {
    /// Create (or replace) `path`: a private file, mode 0600 and the caller's own
    /// (`ra_fsstate::private::create`), written direct where its file system allows it.
    pub fn create(path: &Path) -> io::Result<TraceFile> {
        let file = ra_fsstate::private::create(path)?;
        let direct = file.metadata()?.is_file() && set_direct(&file, true).is_ok();
        let shared = Arc::new(Shared { file, direct: AtomicBool::new(direct) });
        let (jobs, rx) = mpsc::sync_channel::<Job>(IN_FLIGHT);
        let (tx, done) = mpsc::channel();
        let sh = shared.clone();
        let thread = std::thread::Builder::new().name("trace-io".into()).spawn(move || {
            for j in rx {
                let r = sh.write_at(&j.block.bytes()[..j.len], j.at);
                if tx.send((j.block, r)).is_err() {
                    break;
                }
            }
        })?;
        Ok(TraceFile {
            shared,
            cur: Block::new(),
            len: 0,
            base: 0,
            free: Vec::new(),
            in_flight: 0,
            jobs: Some(jobs),
            done,
            thread: Some(thread),
        })
    }

    fn direct(&self) -> bool {
        self.shared.direct.load(Ordering::Relaxed)
    }

    /// Take back one written buffer, waiting for it if `block`; false when none was ready.
    fn reap(&mut self, block: bool) -> io::Result<bool> {
        let got = if block {
            self.done.recv().map_err(|_| io::Error::other("the trace I/O thread stopped"))?
        } else {
            match self.done.try_recv() {
                Ok(g) => g,
                Err(_) => return Ok(false),
            }
        };
        self.in_flight -= 1;
        self.free.push(got.0);
        got.1.map(|()| true)
    }

    /// Every write handed over so far has completed; the first error among them, if any.
    fn wait_all(&mut self) -> io::Result<()> {
        let mut first = Ok(());
        while self.in_flight > 0 {
            if let Err(e) = self.reap(true) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// Hand the complete blocks of the buffer (all of it when not direct) to the I/O thread
    /// and keep the rest in a fresh buffer.
    fn spill(&mut self) -> io::Result<()> {
        let n = if self.direct() { self.len & !(ALIGN - 1) } else { self.len };
        if n == 0 {
            return Ok(());
        }
        while self.reap(false)? {}
        while self.free.is_empty() && self.in_flight >= IN_FLIGHT {
            self.reap(true)?;
        }
        let mut next = self.free.pop().unwrap_or_else(Block::new);
        let rest = self.len - n;
        next.bytes_mut()[..rest].copy_from_slice(&self.cur.bytes()[n..self.len]);
        let block = std::mem::replace(&mut self.cur, next);
        let jobs = self.jobs.as_ref().ok_or_else(|| io::Error::other("trace file closed"))?;
        jobs.send(Job { block, len: n, at: self.base })
            .map_err(|_| io::Error::other("the trace I/O thread stopped"))?;
        self.in_flight += 1;
        self.len = rest;
        self.base += n as u64;
        Ok(())
    }
}

impl Write for TraceFile {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = data.len().min(CAPACITY - self.len);
        let at = self.len;
        self.cur.bytes_mut()[at..at + n].copy_from_slice(&data[..n]);
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
        self.wait_all()?;
        if self.len > 0 {
            // The I/O thread is idle: the file's flags are ours to change.
            let tail = &self.cur.bytes()[..self.len];
            if self.direct() {
                // A direct file keeps its tail: write it buffered, keep it for its block.
                self.shared.set_direct(false)?;
                let r = self.shared.file.write_all_at(tail, self.base);
                self.shared.set_direct(true)?;
                r?;
            } else {
                // The file system refused a direct write meanwhile: write the tail for good.
                self.shared.file.write_all_at(tail, self.base)?;
                self.base += self.len as u64;
                self.len = 0;
            }
        }
        Ok(())
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        // The trace writer flushes explicitly (and reports errors) before dropping; this only
        // matters when it is dropped on an error path, where the first error was reported.
        let _ = self.flush();
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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

    /// A write that fails on the I/O thread is reported, by a later write or the flush, never
    /// dropped.
    #[test]
    fn a_failed_write_in_flight_is_reported() {
        let p = Path::new("/dev/full");
        if !p.exists() {
            eprintln!("skip: no /dev/full");
            return;
        }
        let mut f = TraceFile::create(p).unwrap();
        let chunk = vec![1u8; CAPACITY / 3];
        let mut failed = false;
        for _ in 0..12 {
            if f.write_all(&chunk).is_err() {
                failed = true;
                break;
            }
        }
        let flushed = f.flush();
        assert!(failed || flushed.is_err(), "ENOSPC from /dev/full was not reported");
        if let Err(e) = flushed {
            assert_eq!(e.raw_os_error(), Some(libc_enospc()), "{e}");
        }
    }

    fn libc_enospc() -> i32 {
        rustix::io::Errno::NOSPC.raw_os_error()
    }
}
