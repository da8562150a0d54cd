//! Reading tracee memory: `process_vm_readv`, batched, with a `PTRACE_PEEKDATA` fallback.

use super::sys::Pid;

const PAGE: u64 = 4096;

/// Read `len` bytes at `addr` of `pid`. Returns the bytes read; shorter than `len` when part of
/// the range is not readable (the caller records the buffer as not (fully) captured).
pub fn read(pid: Pid, addr: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let n = read_into(pid, addr, &mut out);
    out.truncate(n);
    out
}

/// `len` bytes at `addr` as a buffer argument: the bytes, or (over `max`, more than a trace
/// record stores) their length and BLAKE3 digest, read in 4 MiB pieces so that memory stays
/// bounded whatever the call's size. Also whether every byte could be read.
pub fn read_arg(pid: Pid, addr: u64, len: usize, max: usize) -> (ra_trace::ArgValue, bool) {
    if len <= max {
        let b = read(pid, addr, len);
        let complete = b.len() == len;
        return (ra_trace::ArgValue::data(b), complete);
    }
    let mut h = blake3::Hasher::new();
    let mut piece = vec![0u8; 4 << 20];
    let mut done = 0usize;
    while done < len {
        let want = (len - done).min(piece.len());
        let n = read_into(pid, addr + done as u64, &mut piece[..want]);
        h.update(&piece[..n]);
        done += n;
        if n < want {
            break;
        }
    }
    (ra_trace::ArgValue::Hashed { len: done as u64, blake3: *h.finalize().as_bytes() }, done == len)
}

/// Read into `buf`; returns how many bytes were read (a prefix).
pub fn read_into(pid: Pid, addr: u64, buf: &mut [u8]) -> usize {
    if buf.is_empty() || addr == 0 {
        return 0;
    }
    let mut done = 0usize;
    while done < buf.len() {
        let local =
            libc::iovec { iov_base: buf[done..].as_mut_ptr().cast(), iov_len: buf.len() - done };
        let remote = libc::iovec {
            iov_base: (addr + done as u64) as *mut libc::c_void,
            iov_len: buf.len() - done,
        };
        // SAFETY: `local` points into `buf`, valid for writes of `iov_len` bytes; the remote
        // range is only read by the kernel, in the tracee, and faults are reported as errors.
        let r = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        if r > 0 {
            done += r as usize;
            continue;
        }
        if r == 0 {
            break;
        }
        let errno = std::io::Error::last_os_error().raw_os_error();
        if matches!(errno, Some(libc::ENOSYS) | Some(libc::EPERM)) {
            return done + peek_into(pid, addr + done as u64, &mut buf[done..]);
        }
        break;
    }
    done
}

/// `PTRACE_PEEKDATA`, a word at a time (only when process_vm_readv is unavailable).
fn peek_into(pid: Pid, addr: u64, buf: &mut [u8]) -> usize {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: PEEKDATA returns the word as the result; errors are detected through errno.
        let w = unsafe {
            *libc::__errno_location() = 0;
            libc::ptrace(libc::PTRACE_PEEKDATA, pid, (addr + done as u64) as usize, 0usize)
        };
        // SAFETY: reading the thread's errno.
        if w == -1 && unsafe { *libc::__errno_location() } != 0 {
            break;
        }
        let bytes = w.to_ne_bytes();
        let n = (buf.len() - done).min(8);
        buf[done..done + n].copy_from_slice(&bytes[..n]);
        done += n;
    }
    done
}

/// A NUL-terminated string at `addr`, including its NUL, reading page by page. `None` for a
/// NULL pointer; `Some((bytes, complete))` otherwise (`complete` false when it hit unreadable
/// memory or `max` bytes before a NUL).
pub fn read_cstr(pid: Pid, addr: u64, max: usize) -> Option<(Vec<u8>, bool)> {
    if addr == 0 {
        return None;
    }
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < max {
        let chunk = ((PAGE - at % PAGE) as usize).min(max - out.len()).max(1);
        let start = out.len();
        out.resize(start + chunk, 0);
        let n = read_into(pid, at, &mut out[start..]);
        out.truncate(start + n);
        if let Some(i) = out[start..].iter().position(|&c| c == 0) {
            out.truncate(start + i + 1);
            return Some((out, true));
        }
        if n < chunk {
            return Some((out, false));
        }
        at += n as u64;
    }
    Some((out, false))
}

/// A NULL-terminated array of C strings (argv, envp), each without its NUL.
pub fn read_str_array(pid: Pid, addr: u64) -> Option<(Vec<Vec<u8>>, bool)> {
    if addr == 0 {
        return None;
    }
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        let p = read(pid, at, 8);
        if p.len() < 8 {
            return Some((out, false));
        }
        let ptr = u64::from_le_bytes(p.try_into().ok()?);
        if ptr == 0 {
            return Some((out, true));
        }
        match read_cstr(pid, ptr, 1 << 20) {
            Some((mut s, complete)) => {
                if complete {
                    s.pop();
                }
                out.push(s);
                if !complete {
                    return Some((out, false));
                }
            }
            None => return Some((out, false)),
        }
        at += 8;
        if out.len() > 1 << 20 {
            return Some((out, false));
        }
    }
}

/// The `(base, len)` pairs of an iovec array.
pub fn read_iovecs(pid: Pid, addr: u64, count: usize) -> Option<Vec<(u64, u64)>> {
    if addr == 0 || count > 1 << 20 {
        return None;
    }
    let raw = read(pid, addr, count * 16);
    if raw.len() < count * 16 {
        return None;
    }
    Some(
        raw.chunks_exact(16)
            .map(|c| {
                let base = u64::from_le_bytes(c[0..8].try_into().unwrap_or([0; 8]));
                let len = u64::from_le_bytes(c[8..16].try_into().unwrap_or([0; 8]));
                (base, len)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_memory_and_stops_at_unmapped_pages() {
        let me = std::process::id() as Pid;
        let data = b"hello, tracer\0trailing".to_vec();
        assert_eq!(read(me, data.as_ptr() as u64, 5), b"hello");
        let (s, complete) = read_cstr(me, data.as_ptr() as u64, 4096).unwrap();
        assert!(complete);
        assert_eq!(s, b"hello, tracer\0");
        assert!(read_cstr(me, 0, 10).is_none());
        // Address 8 is never mapped: nothing readable.
        assert!(read(me, 8, 16).is_empty());
        let args = [c"a".as_ptr() as u64, c"bc".as_ptr() as u64, 0u64];
        let (v, ok) = read_str_array(me, args.as_ptr() as u64).unwrap();
        assert!(ok);
        assert_eq!(v, vec![b"a".to_vec(), b"bc".to_vec()]);
    }
}
