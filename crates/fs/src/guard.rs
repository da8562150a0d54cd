//! What keeps a tracing mount from tracing itself: the checks before mounting (outputs never
//! beneath LOWER or any reanimator mount, no mount stacked on another's directories) and,
//! whatever the paths say, the daemon's own files passed through untraced ([`OwnFiles`]).
//!
//! Reading a trace through the mount that writes it records the bytes read into the trace,
//! which grows as fast as it is read (52 GB in two minutes, issue 39). A mount stacked on a
//! live mount's directories holds the other's files open, so the other can never finish.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::Error;

/// LOWER and the mountpoint, resolved and checked.
#[derive(Clone, Debug)]
pub struct Checked {
    /// LOWER, canonical (symlinks resolved), a directory.
    pub lower: PathBuf,
    /// The mountpoint, canonical, a directory that is not a mount point yet.
    pub mountpoint: PathBuf,
}

/// A reanimator fs mount of this mount namespace.
#[derive(Clone, Debug)]
pub struct Live {
    /// The daemon's pid, from the mount's source (`reanimator:PID`).
    pub pid: u32,
    /// Where it is mounted, as the mount table says.
    pub mountpoint: PathBuf,
    /// From the daemon's registry file (None if it has none).
    pub lower: Option<PathBuf>,
}

/// The reanimator fs mounts of this mount namespace (FUSE mounts whose source is
/// `reanimator:PID`), with their lower directories from the registry.
pub fn live_mounts() -> Vec<Live> {
    let reg = crate::registry::entries();
    crate::mounts()
        .into_iter()
        .filter(|m| m.fstype.starts_with("fuse"))
        .filter_map(|m| {
            let pid = m.source.strip_prefix(crate::SOURCE_PREFIX)?.parse::<u32>().ok()?;
            let lower = reg
                .iter()
                .find(|e| e.pid == pid && e.mountpoint == m.mountpoint && e.alive())
                .map(|e| e.lower.clone());
            Some(Live { pid, mountpoint: m.mountpoint, lower })
        })
        .collect()
}

/// Where writing `path` would write: symlinks followed, also a last component that does not
/// exist yet (its directory's real path) or a dangling symlink (its target's).
pub fn resolve_output(path: &Path) -> std::io::Result<PathBuf> {
    let mut p =
        if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir()?.join(path) };
    for _ in 0..40 {
        if let Ok(c) = std::fs::canonicalize(&p) {
            return Ok(c);
        }
        let name = p.file_name().map(|n| n.to_os_string()).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name")
        })?;
        let parent = p.parent().unwrap_or(Path::new("/"));
        match std::fs::read_link(&p) {
            // A dangling symlink: creating the file creates its target.
            Ok(t) => p = parent.join(t),
            Err(_) => return Ok(std::fs::canonicalize(parent)?.join(name)),
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::ELOOP))
}

fn relation(a: &Path, b: &Path) -> Option<&'static str> {
    if a == b {
        Some("is")
    } else if a.starts_with(b) {
        Some("lies beneath")
    } else if b.starts_with(a) {
        Some("contains")
    } else {
        None
    }
}

/// The checks before mounting: LOWER and MOUNTPOINT exist, are directories, are apart, stack
/// on no live reanimator mount, and no output (`(flag, path)`: the trace, a spill file, the
/// daemon's log, a profile — everything the daemon writes) resolves beneath LOWER, beneath
/// the mountpoint or beneath any reanimator mount.
pub fn preflight(
    lower: &Path,
    mountpoint: &Path,
    outputs: &[(String, PathBuf)],
) -> Result<Checked, Error> {
    let usage = |m: String| Err(Error::Usage(m));
    let lower_c = match std::fs::canonicalize(lower) {
        Ok(p) if p.is_dir() => p,
        Ok(_) => return usage(format!("{}: not a directory", lower.display())),
        Err(e) => return usage(format!("{}: {e}", lower.display())),
    };
    let mnt = match std::fs::canonicalize(mountpoint) {
        Ok(p) if p.is_dir() => p,
        Ok(_) => return usage(format!("mountpoint {}: not a directory", mountpoint.display())),
        Err(e) => return usage(format!("mountpoint {}: {e}", mountpoint.display())),
    };
    if let Some(m) = crate::mounts().into_iter().find(|m| m.mountpoint == mnt) {
        return usage(format!(
            "{} is already a mount point ({} from {}); unmount it first (`reanimator fs umount {0}` \
             for one of ours) or choose another directory",
            mnt.display(),
            m.fstype,
            m.source
        ));
    }
    if mnt.starts_with(&lower_c) || lower_c.starts_with(&mnt) {
        return usage(format!(
            "the mountpoint {} and the lower directory {} must not contain each other",
            mnt.display(),
            lower_c.display()
        ));
    }
    let live = live_mounts();
    for l in &live {
        let theirs = [("mountpoint", Some(&l.mountpoint)), ("lower directory", l.lower.as_ref())];
        for (what, ours) in [("the lower directory", &lower_c), ("the mountpoint", &mnt)] {
            for (kind, t) in theirs {
                let Some(t) = t else { continue };
                if let Some(rel) = relation(ours, t) {
                    return usage(format!(
                        "{what} {} {rel} the {kind} {} of the reanimator fs mount at {} (pid {}): \
                         a tracing mount must not stack on another's directories (the other \
                         could never finish); unmount it first (`reanimator fs umount {}`) or \
                         choose directories apart from it",
                        ours.display(),
                        t.display(),
                        l.mountpoint.display(),
                        l.pid,
                        l.mountpoint.display()
                    ));
                }
            }
        }
    }
    for (flag, out) in outputs {
        let at = resolve_output(out)
            .map_err(|e| Error::Usage(format!("{flag} {}: {e}", out.display())))?;
        if at.starts_with(&mnt) {
            return usage(format!(
                "{flag} {}: the file would be written through the mount it traces; write it \
                 elsewhere",
                out.display()
            ));
        }
        if at.starts_with(&lower_c) {
            return usage(format!(
                "{flag} {}: the file would lie beneath the lower directory {} (as {}), where \
                 reading it through the mount would record it into itself; write it elsewhere",
                out.display(),
                lower_c.display(),
                at.display()
            ));
        }
        if let Some(l) = live.iter().find(|l| at.starts_with(&l.mountpoint)) {
            return usage(format!(
                "{flag} {}: the file would be written through the reanimator fs mount at {} (pid \
                 {}), whose tracing of it could feed back into this trace; write it elsewhere",
                out.display(),
                l.mountpoint.display(),
                l.pid
            ));
        }
    }
    Ok(Checked { lower: lower_c, mountpoint: mnt })
}

/// The files the daemon writes, by (st_dev, st_ino): operations on them pass through the
/// mount untraced, however they are reached (a hard link into LOWER, a bind mount).
#[derive(Default)]
pub struct OwnFiles {
    keys: Mutex<Vec<(u64, u64)>>,
    /// Whether any is known (checked first: no lock for a daemon writing no local file).
    any: AtomicBool,
    /// Files that do not exist yet (a spill file is made when the collector fails).
    pending: Mutex<Vec<PathBuf>>,
}

impl OwnFiles {
    fn add(&self, key: (u64, u64)) {
        let mut k = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if !k.contains(&key) {
            k.push(key);
        }
        self.any.store(true, Ordering::Relaxed);
    }

    /// A file the daemon writes, looked at now and, until it exists, at every [`refresh`].
    ///
    /// [`refresh`]: OwnFiles::refresh
    pub fn add_path(&self, path: &Path) {
        match rustix::fs::stat(path) {
            Ok(st) => self.add((st.st_dev, st.st_ino)),
            Err(_) => self.pending.lock().unwrap_or_else(|e| e.into_inner()).push(path.into()),
        }
    }

    /// A descriptor the daemon writes to, when it is a regular file (stdout or stderr sent to
    /// a file: the daemon's log).
    pub fn add_fd(&self, fd: impl AsFd) {
        if let Ok(st) = rustix::fs::fstat(fd) {
            if st.st_mode & libc::S_IFMT == libc::S_IFREG {
                self.add((st.st_dev, st.st_ino));
            }
        }
    }

    /// Look for the files that did not exist yet (called every second).
    pub fn refresh(&self) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.retain(|path| match rustix::fs::stat(path) {
            Ok(st) => {
                self.add((st.st_dev, st.st_ino));
                false
            }
            Err(_) => true,
        });
    }

    /// Whether `(dev, ino)` is one of the daemon's files (the passthrough then serves the
    /// operation untraced). Takes no lock while none is known.
    pub fn contains(&self, dev: u64, ino: u64) -> bool {
        self.any.load(Ordering::Relaxed)
            && self.keys.lock().unwrap_or_else(|e| e.into_inner()).contains(&(dev, ino))
    }

    /// No file of the daemon's is known yet (those still pending not counted).
    pub fn is_empty(&self) -> bool {
        !self.any.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_resolve_through_symlinks_and_missing_names() {
        let d = std::env::temp_dir().join(format!("ra-fs-guard-{}", std::process::id()));
        let lower = d.join("lower");
        std::fs::create_dir_all(&lower).unwrap();
        let real = std::fs::canonicalize(&d).unwrap();
        std::os::unix::fs::symlink(&lower, d.join("ln")).unwrap();
        std::os::unix::fs::symlink(lower.join("new.ds"), d.join("dangling")).unwrap();
        assert_eq!(resolve_output(&d.join("ln/t.ds")).unwrap(), real.join("lower/t.ds"));
        assert_eq!(resolve_output(&d.join("dangling")).unwrap(), real.join("lower/new.ds"));
        assert_eq!(resolve_output(&d.join("plain.ds")).unwrap(), real.join("plain.ds"));
        assert!(resolve_output(&d.join("nodir/t.ds")).is_err());
        std::os::unix::fs::symlink(d.join("loop"), d.join("loop")).unwrap();
        assert!(resolve_output(&d.join("loop")).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn relations_of_paths() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(relation(&p("/a/b"), &p("/a/b")), Some("is"));
        assert_eq!(relation(&p("/a/b/c"), &p("/a/b")), Some("lies beneath"));
        assert_eq!(relation(&p("/a"), &p("/a/b")), Some("contains"));
        assert_eq!(relation(&p("/a/bc"), &p("/a/b")), None);
    }
}
