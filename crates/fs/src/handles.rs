//! Open file and directory handles. FUSE file handles are numbered like descriptors (lowest
//! free number from 3), so that a replayed trace can use them as its descriptors.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

/// One directory entry, read at `opendir`.
pub struct DirEnt {
    pub ino: u64,
    pub kind: fuser::FileType,
    pub name: Box<[u8]>,
}

pub struct Handle {
    pub fd: OwnedFd,
    /// Directory handles: the listing, read once when the first `readdir` asks for offset 0.
    pub dir: Option<Mutex<Option<Arc<Vec<DirEnt>>>>>,
}

/// Handle numbers start here (0-2 look like the standard descriptors).
const FIRST: usize = 3;

#[derive(Default)]
pub struct Handles {
    slots: Mutex<Vec<Option<Arc<Handle>>>>,
}

impl Handles {
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

    pub fn get(&self, fh: u64) -> Option<Arc<Handle>> {
        let s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        s.get(usize::try_from(fh).ok()?).and_then(Clone::clone)
    }

    pub fn remove(&self, fh: u64) -> Option<Arc<Handle>> {
        let mut s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        s.get_mut(usize::try_from(fh).ok()?).and_then(Option::take)
    }

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
