//! Open file and directory handles. FUSE file handles are numbered like descriptors (lowest
//! free number from 3), so that a replayed trace can use them as its descriptors.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

/// A directory being listed: read with getdents64 as the kernel asks, positioned by the
/// lower file system's own offsets (`d_off`), so a listing costs one buffer whatever the
/// directory's size.
pub struct DirStream {
    /// The lower directory's stream, read with `getdents64`.
    pub dir: rustix::fs::Dir,
    /// The offset after the last entry handed out.
    pub pos: i64,
    /// An entry read but not handed out (the reply was full): it comes first next time.
    pub pending: Option<rustix::fs::DirEntry>,
}

/// What a FUSE file handle (`fh`) names: given out by `open`, `create` and `opendir`, dropped
/// at `release` / `releasedir`.
pub struct Handle {
    /// The lower file or directory: for `open`, opened again through its node's
    /// `/proc/self/fd` path with the request's flags; for `create`, the descriptor `openat`
    /// gave beneath the parent; for `opendir`, opened `O_RDONLY | O_DIRECTORY`.
    pub fd: OwnedFd,
    /// Directory handles: the stream, opened at the first `readdir`.
    pub dir: Option<Mutex<Option<DirStream>>>,
}

/// Handle numbers start here (0-2 look like the standard descriptors).
const FIRST: usize = 3;

/// The daemon's table of open handles, numbered from 3 like descriptors.
#[derive(Default)]
pub struct Handles {
    slots: Mutex<Vec<Option<Arc<Handle>>>>,
}

impl Handles {
    /// Stores `h` at the lowest free number (from 3) and returns that number, the `fh` the
    /// kernel is given.
    pub fn insert(&self, h: Handle) -> u64 {
        let mut s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if s.len() < FIRST {
            s.resize_with(FIRST, || None);
        }
        let h = Some(Arc::new(h));
        match s.iter().skip(FIRST).position(Option::is_none) {
            Some(i) => {
                s[FIRST + i] = h;
                (FIRST + i) as u64
            }
            None => {
                s.push(h);
                (s.len() - 1) as u64
            }
        }
    }

    /// The handle numbered `fh`; None when it is not open (the passthrough answers `EBADF`).
    pub fn get(&self, fh: u64) -> Option<Arc<Handle>> {
        let s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        s.get(usize::try_from(fh).ok()?).and_then(Clone::clone)
    }

    /// Frees number `fh` (FUSE `release`, `releasedir`) and returns its handle; the lower
    /// descriptor closes when the last `Arc` goes (an operation still using it keeps it).
    pub fn remove(&self, fh: u64) -> Option<Arc<Handle>> {
        let mut s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        s.get_mut(usize::try_from(fh).ok()?).and_then(Option::take)
    }

    /// Handles open now.
    pub fn open_count(&self) -> usize {
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).iter().flatten().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h() -> Handle {
        Handle { fd: std::fs::File::open("/").unwrap().into(), dir: None }
    }

    #[test]
    fn lowest_free_number_like_descriptors() {
        let t = Handles::default();
        assert_eq!(t.insert(h()), 3);
        assert_eq!(t.insert(h()), 4);
        assert_eq!(t.insert(h()), 5);
        assert!(t.remove(4).is_some());
        assert!(t.remove(4).is_none());
        assert_eq!(t.insert(h()), 4);
        assert_eq!(t.open_count(), 3);
        assert!(t.get(99).is_none());
    }
}
