//! Whose credentials a lower call runs with, and who may reach the lower directory at all.
//!
//! The kernel checks every access to the mount itself (`default_permissions`, and POSIX ACLs
//! with `FUSE_POSIX_ACL`: see passthrough.rs) against the attributes the daemon returns, with
//! the caller's full credentials. What it cannot see is the way to LOWER: a path walk through
//! the mount starts at the mountpoint, so the search permission of LOWER's ancestors (a
//! LOWER under a 0700 directory) would never be checked. [`Reach`] checks it, with the
//! caller's credentials, in the daemon: a caller who could not reach LOWER on the lower file
//! system gets EACCES for every request that names a file.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// The daemon's own supplementary groups, restored after a call made as someone else.
fn own_groups() -> &'static [u32] {
    static G: OnceLock<Vec<u32>> = OnceLock::new();
    G.get_or_init(|| {
        rustix::process::getgroups().map_or_else(
            |_| Vec::new(),
            |g| g.into_iter().map(rustix::process::Gid::as_raw).collect(),
        )
    })
}

/// Set this thread's supplementary groups (the raw system call: glibc's `setgroups` would
/// change every thread of the process).
fn set_thread_groups(groups: &[u32]) -> bool {
    // SAFETY: the pointer and length describe `groups`, which outlives the call; the system
    // call changes only the calling thread's credentials.
    unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) == 0 }
}

thread_local! {
    /// Whether this thread has a file-system context (umask) of its own.
    static OWN_FS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` with file-system credentials `uid`/`gid` (and, with `groups`, those supplementary
/// groups) on this thread; with `umask`, that umask (the thread gets a file-system context of
/// its own first, so the other threads keep theirs). Root (0/0, no groups, no umask) runs as
/// it is. Leaving uid 0 drops the file-system capabilities (`CAP_DAC_OVERRIDE`,
/// `CAP_DAC_READ_SEARCH`, ...) for the call, as for any process that sets its fsuid; they
/// come back with uid 0.
pub fn as_user<T>(
    uid: u32,
    gid: u32,
    groups: Option<&[u32]>,
    umask: Option<u32>,
    f: impl FnOnce() -> T,
) -> T {
    let old_mask = umask.and_then(|m| {
        if !OWN_FS.get() {
            // SAFETY: unshare takes no pointers; CLONE_FS gives this thread its own cwd,
            // root and umask, which nothing else in the daemon uses.
            if unsafe { libc::unshare(libc::CLONE_FS) } != 0 {
                return None;
            }
            OWN_FS.set(true);
        }
        Some(rustix::process::umask(rustix::fs::Mode::from_raw_mode(m & 0o777)))
    });
    let switch = uid != 0 || gid != 0 || groups.is_some();
    let mut grouped = false;
    let mut old = (0, 0);
    if switch {
        if let Some(g) = groups {
            grouped = set_thread_groups(g);
        }
        // SAFETY: setfsgid/setfsuid change only this thread's file-system credentials and
        // take no pointers; the previous values are restored below.
        old = unsafe {
            let g = libc::setfsgid(gid);
            let u = libc::setfsuid(uid);
            (u, g)
        };
    }
    let r = f();
    if switch {
        // SAFETY: as above.
        unsafe {
            libc::setfsuid(old.0 as u32);
            libc::setfsgid(old.1 as u32);
        }
        if grouped {
            set_thread_groups(own_groups());
        }
    }
    if let Some(m) = old_mask {
        rustix::process::umask(m);
    }
    r
}

/// One ancestor of LOWER as last seen: what decides who may search it.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Ancestor {
    dev: u64,
    ino: u64,
    mode: u32,
    uid: u32,
    gid: u32,
    ctime: (i64, i64),
    acl: bool,
}

/// A caller's identity as far as the kernel's permission checks go.
type Caller = (u32, u32, Box<[u32]>);

struct Seen {
    /// LOWER's ancestors, `/` first; None when one cannot be looked at or LOWER's path
    /// no longer leads to the mounted directory.
    ancestors: Option<Vec<Ancestor>>,
    verdicts: HashMap<Caller, bool>,
}

/// Who may reach LOWER: the search permission of its ancestors, for each caller.
pub struct Reach {
    lower: PathBuf,
    lower_c: CString,
    /// (st_dev, st_ino) of LOWER as mounted.
    root: (u64, u64),
    /// Every ancestor lets everybody search it (the usual case): nothing to check.
    open: AtomicBool,
    seen: Mutex<Seen>,
}

/// Verdicts kept at most (then forgotten and computed again).
const MAX_VERDICTS: usize = 4096;

impl Reach {
    /// The checker for `lower` (the canonical LOWER; `root`: its `(st_dev, st_ino)` as the
    /// daemon opened it), with its ancestors looked at once now ([`Reach::refresh`]).
    pub fn new(lower: &Path, root: (u64, u64)) -> Reach {
        let r = Reach {
            lower: lower.to_path_buf(),
            lower_c: CString::new(lower.as_os_str().as_bytes()).unwrap_or_default(),
            root,
            open: AtomicBool::new(false),
            seen: Mutex::new(Seen { ancestors: None, verdicts: HashMap::new() }),
        };
        r.refresh();
        r
    }

    /// Look at the ancestors again (the mount's loop does every second): a change of mode,
    /// owner, ACL (ctime) or of the directories themselves forgets every verdict.
    pub fn refresh(&self) {
        let now = self.ancestors();
        let open =
            now.as_ref().is_some_and(|a| a.iter().all(|a| a.mode & 0o111 == 0o111 && !a.acl));
        let mut s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if s.ancestors != now {
            s.ancestors = now;
            s.verdicts.clear();
        }
        self.open.store(open, Ordering::Relaxed);
    }

    fn ancestors(&self) -> Option<Vec<Ancestor>> {
        let st = rustix::fs::stat(&self.lower).ok()?;
        if (st.st_dev, st.st_ino) != self.root {
            return None;
        }
        let mut v = Vec::new();
        for a in self.lower.ancestors().skip(1) {
            let st = rustix::fs::lstat(a).ok()?;
            let acl = match rustix::fs::lgetxattr(a, c"system.posix_acl_access", &mut [0u8; 0][..])
            {
                Ok(_) => true,
                Err(rustix::io::Errno::NODATA | rustix::io::Errno::OPNOTSUPP) => false,
                Err(_) => true,
            };
            v.push(Ancestor {
                dev: st.st_dev,
                ino: st.st_ino,
                mode: st.st_mode,
                uid: st.st_uid,
                gid: st.st_gid,
                ctime: (st.st_ctime, st.st_ctime_nsec as i64),
                acl,
            });
        }
        v.reverse();
        Some(v)
    }

    /// Whether everybody may reach LOWER (no per-caller check needed).
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// Whether this caller (file-system uid and gid, supplementary groups) could reach LOWER
    /// on the lower file system: the kernel's answer, asked on this thread with the caller's
    /// credentials, kept until the ancestors change.
    pub fn allows(&self, uid: u32, gid: u32, groups: &[u32]) -> bool {
        if self.is_open() {
            return true;
        }
        let mut sorted: Box<[u32]> = groups.into();
        sorted.sort_unstable();
        let key: Caller = (uid, gid, sorted);
        {
            let s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(&v) = s.verdicts.get(&key) {
                return v;
            }
        }
        let ok =
            as_user(uid, gid, Some(groups), None, || rustix::fs::stat(self.lower_c.as_c_str()))
                .is_ok_and(|st| (st.st_dev, st.st_ino) == self.root);
        let mut s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if s.verdicts.len() >= MAX_VERDICTS {
            s.verdicts.clear();
        }
        s.verdicts.insert(key, ok);
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Needs root (setfsuid, setgroups): skipped otherwise, except under
    /// REANIMATOR_REQUIRE_PRIVILEGED=1 (CI), as `ra_testkit::privileged` does. The fs
    /// integration tests check the same through a mount as another user.
    #[test]
    fn a_lower_under_a_private_directory_is_reached_by_its_owner_alone() {
        if !rustix::process::geteuid().is_root() {
            assert_ne!(
                std::env::var("REANIMATOR_REQUIRE_PRIVILEGED").as_deref(),
                Ok("1"),
                "needs root (REANIMATOR_REQUIRE_PRIVILEGED=1)"
            );
            eprintln!("skip: Reach as other users: needs root");
            return;
        }
        let d = std::env::temp_dir().join(format!("ra-fs-reach-{}", std::process::id()));
        let lower = d.join("private/lower");
        std::fs::create_dir_all(&lower).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let st = rustix::fs::stat(&lower).unwrap();
        let private = d.join("private");
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
        let r = Reach::new(&lower, (st.st_dev, st.st_ino));
        // The temporary directory and its ancestors let everybody search them; so does
        // private (0755).
        assert!(r.is_open());
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        r.refresh();
        assert!(!r.is_open());
        assert!(!r.allows(65534, 65534, &[]), "nobody cannot search a root 0700 directory");
        assert!(r.allows(0, 0, &[]), "root can");
        // A group that may search it.
        rustix::fs::chown(&private, None, Some(rustix::fs::Gid::from_raw(4242))).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o710)).unwrap();
        r.refresh();
        assert!(r.allows(65534, 65534, &[4242]));
        assert!(!r.allows(65534, 65534, &[4243]));
        assert!(r.allows(65534, 4242, &[]), "the primary group counts too");
        // The daemon's thread is itself again.
        assert_eq!(rustix::process::getgroups().unwrap().len(), own_groups().len());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
