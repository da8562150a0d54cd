//! Files that hold traced data (traces, plans, spill and `.partial` files, collected streams,
//! logs, reports, manifests, content stores): readable and writable by their owner alone, mode
//! 0600 whatever the umask, owned by the user who creates them. The one place every writer of
//! such a file opens it (docs/TRACE_FORMAT.md, "Who can read a trace").
//!
//! [`create`] puts a fresh inode at the path (made under a temporary name beside it, then
//! renamed over it), so nobody who held the old file open, or owned it, can read what is
//! written now. A device, FIFO or socket named on purpose (`/dev/null`, a named pipe) is
//! written as it is, its mode untouched: where those bytes go is the caller's choice.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The mode of every file that holds traced data.
pub const FILE_MODE: u32 = 0o600;
/// The mode of a directory made to hold such files.
pub const DIR_MODE: u32 = 0o700;

/// Create (or replace) `path` for writing, mode 0600, owned by the caller, on a fresh inode.
/// Symlinks are followed (the file they name is replaced). A device, FIFO or socket is opened
/// for writing as it is. A directory is an error.
pub fn create(path: &Path) -> io::Result<File> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", path.display()),
        )),
        Ok(m) if !m.is_file() => OpenOptions::new().write(true).open(path),
        Ok(_) => {
            // Replace the file the path names (through any symlinks) with a fresh one.
            let target = std::fs::canonicalize(path)?;
            match fresh_beside(&target) {
                Ok(f) => Ok(f),
                // A directory we cannot write to but a file in it we may: write the file in
                // place, made private (its owner checked) before any byte goes in.
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => in_place(&target),
                Err(e) => Err(e),
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(FILE_MODE)
                .open(path)?;
            make_private(&f, path)?;
            Ok(f)
        }
        Err(e) => Err(e),
    }
}

/// [`create`] `path` and write `contents` to it.
pub fn write(path: &Path, contents: &[u8]) -> io::Result<()> {
    use std::io::Write;
    create(path)?.write_all(contents)
}

/// Create `path`, which must not exist (`O_EXCL`: a symlink is not followed), mode 0600.
/// Readable too, for writers that read back what they wrote.
pub fn create_new(path: &Path) -> io::Result<File> {
    let f =
        OpenOptions::new().read(true).write(true).create_new(true).mode(FILE_MODE).open(path)?;
    make_private(&f, path)?;
    Ok(f)
}

/// Create the directory `path` (and its missing parents, as `mkdir -p`); the directories this
/// call makes get mode 0700, whatever the umask. An existing directory is left as it is.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(DIR_MODE).create(path) {
        Ok(()) => std::fs::set_permissions(path, std::fs::Permissions::from_mode(DIR_MODE)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// A fresh file under a temporary name in `target`'s directory, renamed over `target`.
fn fresh_beside(target: &Path) -> io::Result<File> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target.file_name().unwrap_or_default();
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.{}.new", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed)));
    let tmp: PathBuf = dir.join(tmp_name);
    let f = create_new(&tmp)?;
    if let Err(e) = std::fs::rename(&tmp, target) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(f)
}

/// `target` truncated in place, after its mode and owner are made private.
fn in_place(target: &Path) -> io::Result<File> {
    let f = OpenOptions::new().write(true).open(target)?;
    make_private(&f, target)?;
    f.set_len(0)?;
    Ok(f)
}

/// Mode 0600 (the umask may have taken bits away; an existing file may have had more) and the
/// caller's ownership, for a regular file just opened.
fn make_private(f: &File, path: &Path) -> io::Result<()> {
    let m = f.metadata()?;
    if !m.is_file() {
        return Ok(());
    }
    let (uid, gid) = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
    if m.uid() != uid {
        // Only root can take a file over; anyone else must not write traced data into a file
        // somebody else owns (and can therefore read, whatever its mode).
        std::os::unix::fs::fchown(f, Some(uid), Some(gid)).map_err(|_| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} belongs to uid {}: a file that holds traced data must be its writer's \
                     own (remove it, or choose another path)",
                    path.display(),
                    m.uid()
                ),
            )
        })?;
    }
    if m.mode() & 0o7777 != FILE_MODE {
        f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ra-private-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().mode() & 0o7777
    }

    /// The umask is process-wide: the test re-runs itself in a child process of its own
    /// (other tests of this binary create files meanwhile), which sets each mask.
    #[test]
    fn new_files_are_0600_whatever_the_umask() {
        const CHILD: &str = "RA_PRIVATE_UMASK_CHILD";
        if std::env::var_os(CHILD).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "private::tests::new_files_are_0600_whatever_the_umask"])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success() && text.contains("1 passed"), "child: {text}");
            return;
        }
        let d = scratch("umask");
        for (i, mask) in [0o000, 0o022, 0o077, 0o277].into_iter().enumerate() {
            rustix::process::umask(rustix::fs::Mode::from_raw_mode(mask));
            let p = d.join(format!("t{i}.ds"));
            create(&p).unwrap().write_all(b"x").unwrap();
            assert_eq!(mode(&p), 0o600, "umask {mask:o}");
            let q = d.join(format!("n{i}.partial"));
            create_new(&q).unwrap();
            assert_eq!(mode(&q), 0o600, "create_new, umask {mask:o}");
            let sub = d.join(format!("a{i}/b"));
            create_dir_all(&sub).unwrap();
            assert_eq!(mode(&d.join(format!("a{i}"))), 0o700, "umask {mask:o}");
            assert_eq!(mode(&sub), 0o700, "umask {mask:o}");
        }
    }

    #[test]
    fn an_existing_world_readable_file_is_replaced_by_a_private_one() {
        let d = scratch("replace");
        let p = d.join("t.ds");
        std::fs::write(&p, b"old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        // Somebody holding the old file open reads none of what is written now.
        let mut old = File::open(&p).unwrap();
        let old_ino = std::fs::metadata(&p).unwrap().ino();
        create(&p).unwrap().write_all(b"secret").unwrap();
        assert_eq!(mode(&p), 0o600);
        assert_ne!(std::fs::metadata(&p).unwrap().ino(), old_ino);
        let mut s = String::new();
        old.read_to_string(&mut s).unwrap();
        assert_eq!(s, "old");
        assert_eq!(std::fs::read(&p).unwrap(), b"secret");
        // Nothing is left beside it.
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        // Through a symlink: the file it names is replaced, the link stays.
        let l = d.join("link.ds");
        std::os::unix::fs::symlink(&p, &l).unwrap();
        create(&l).unwrap().write_all(b"again").unwrap();
        assert!(std::fs::symlink_metadata(&l).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&p).unwrap(), b"again");
        assert_eq!(mode(&p), 0o600);
    }

    #[test]
    fn devices_are_written_as_they_are() {
        let before = mode(Path::new("/dev/null"));
        create(Path::new("/dev/null")).unwrap().write_all(b"x").unwrap();
        assert_eq!(mode(Path::new("/dev/null")), before);
        let d = scratch("dir");
        assert!(create(&d).is_err());
    }
}
