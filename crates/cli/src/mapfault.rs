//! Files read through a memory map (a trace being compiled, [`ra_trace::TraceReader::map_file`];
//! a plan being replayed) must not shrink while mapped: reading a page the file no longer
//! has raises SIGBUS, which would end the process without a word. This turns that SIGBUS
//! (and only that one: `BUS_ADRERR`) into one clear message and exit status 2.

const MSG: &[u8] = b"reanimator: error: a file read through a memory map (the trace being \
compiled, or the plan being replayed) was cut short while in use (SIGBUS); stopped. Remove \
the .NAME.partial file an unfinished output left, and run again on a file nothing else writes\n";

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t; write, _exit and signal are
    // async-signal-safe.
    unsafe {
        if !info.is_null() && (*info).si_code == libc::BUS_ADRERR {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(2);
        }
        // Any other cause: the default action, when the faulting access runs again.
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
    }
}

/// Install the handler (once, at start).
pub(crate) fn report_cut_maps() {
    // SAFETY: an SA_SIGINFO handler that only calls async-signal-safe functions.
    unsafe {
        crate::signals::set_handler(
            libc::SIGBUS,
            on_sigbus as *const () as usize,
            libc::SA_SIGINFO,
        );
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    /// A child process maps a file, cuts it short and reads a page the cut took: it ends with
    /// the message and status 2, not "Bus error".
    #[test]
    fn a_read_from_a_map_cut_short_ends_with_the_message_and_status_2() {
        let dir = std::env::temp_dir().join(format!("ra-mapfault-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, vec![7u8; 3 * 4096]).unwrap();
        let file = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        let fd = file.as_raw_fd();
        let mut pipe = [0; 2];
        // SAFETY: plain pipe/fork/waitpid; the child calls only async-signal-safe functions
        // (dup2, sigaction, mmap, ftruncate, a read, _exit) before it ends.
        unsafe {
            assert_eq!(libc::pipe(pipe.as_mut_ptr()), 0);
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                libc::dup2(pipe[1], 2);
                super::report_cut_maps();
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    3 * 4096,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    fd,
                    0,
                );
                if p == libc::MAP_FAILED {
                    libc::_exit(3);
                }
                libc::ftruncate(fd, 0);
                let v = std::ptr::read_volatile((p as *const u8).add(2 * 4096));
                libc::_exit(if v == 7 { 4 } else { 5 });
            }
            libc::close(pipe[1]);
            let mut status = 0;
            assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
            let mut out = vec![0u8; 4096];
            let n = libc::read(pipe[0], out.as_mut_ptr().cast(), out.len());
            libc::close(pipe[0]);
            out.truncate(n.max(0) as usize);
            let msg = String::from_utf8_lossy(&out);
            assert!(libc::WIFEXITED(status), "status {status:#x}: {msg}");
            assert_eq!(libc::WEXITSTATUS(status), 2, "{msg}");
            assert!(msg.contains("cut short while in use (SIGBUS)"), "{msg}");
            assert_eq!(msg.lines().count(), 1, "{msg}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
