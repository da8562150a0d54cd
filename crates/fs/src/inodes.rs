//! The inode table: FUSE node ids to the lower file system's inodes, each held open as an
//! `O_PATH` descriptor (so a node stays valid across renames, as in libfuse's
//! passthrough_hp), with the name it was last reached by for paths in records.

use std::collections::HashMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, RwLock};

/// Node id of the mount's root (FUSE's `FUSE_ROOT_ID`); its st_ino reads 1.
pub const ROOT: u64 = 1;

pub struct Node {
    pub fd: Arc<OwnedFd>,
    pub dev: u64,
    pub ino: u64,
    pub is_symlink: bool,
    nlookup: u64,
    parent: u64,
    name: Box<[u8]>,
}

#[derive(Default)]
struct Table {
    nodes: HashMap<u64, Node>,
    by_key: HashMap<(u64, u64), u64>,
    /// Next id for files on other devices than the root's (submounts of the lower tree).
    next: u64,
    root_dev: u64,
}

/// Ids of files on devices other than the lower root's start here (their inode numbers could
/// collide with the root device's).
const FOREIGN: u64 = 1 << 62;

/// Shared by every FUSE worker thread.
pub struct Inodes {
    t: RwLock<Table>,
    /// The mountpoint as programs see it (no trailing slash).
    mountpoint: Vec<u8>,
}

/// What a node's handle gives an operation.
pub struct NodeRef {
    pub fd: Arc<OwnedFd>,
    pub is_symlink: bool,
    pub ino: u64,
}

impl NodeRef {
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
    /// `/proc/self/fd/N`: the node for calls that take a path and follow it (open, chmod,
    /// xattrs of non-symlinks).
    pub fn proc_path(&self) -> String {
        use std::os::fd::AsRawFd;
        format!("/proc/self/fd/{}", self.fd.as_raw_fd())
    }
}

impl Inodes {
    pub fn new(root: OwnedFd, dev: u64, ino: u64, mountpoint: Vec<u8>) -> Inodes {
        let mut t = Table { next: FOREIGN, root_dev: dev, ..Table::default() };
        t.nodes.insert(
            ROOT,
            Node {
                fd: Arc::new(root),
                dev,
                ino,
                is_symlink: false,
                nlookup: 1,
                parent: ROOT,
                name: Box::new([]),
            },
        );
        t.by_key.insert((dev, ino), ROOT);
        Inodes { t: RwLock::new(t), mountpoint }
    }

    pub fn get(&self, id: u64) -> Option<NodeRef> {
        let t = self.t.read().unwrap_or_else(|e| e.into_inner());
        t.nodes.get(&id).map(|n| NodeRef { fd: n.fd.clone(), is_symlink: n.is_symlink, ino: n.ino })
    }

    /// Record a successful lookup of `(dev, ino)` reached as `parent/name`; `open` makes its
    /// `O_PATH` descriptor when the node is new. Returns the node id.
    pub fn looked_up(
        &self,
        parent: u64,
        name: &[u8],
        dev: u64,
        ino: u64,
        is_symlink: bool,
        open: impl FnOnce() -> std::io::Result<OwnedFd>,
    ) -> std::io::Result<u64> {
        let mut t = self.t.write().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = t.by_key.get(&(dev, ino)) {
            if let Some(n) = t.nodes.get_mut(&id) {
                n.nlookup += 1;
                if id != ROOT {
                    n.parent = parent;
                    n.name = name.into();
                }
                return Ok(id);
            }
        }
        let fd = open()?;
        // The node id is what programs see as st_ino (FUSE replies carry one number for
        // both): the lower inode number, so that inode numbers are the lower file system's
        // and stable across mounts. While a node lives we hold its inode open, so the lower
        // file system cannot give its number to another file.
        let id = if dev == t.root_dev && ino != ROOT && !t.nodes.contains_key(&ino) {
            ino
        } else {
            t.next += 1;
            t.next - 1
        };
        t.nodes.insert(
            id,
            Node { fd: Arc::new(fd), dev, ino, is_symlink, nlookup: 1, parent, name: name.into() },
        );
        t.by_key.insert((dev, ino), id);
        Ok(id)
    }

    /// FUSE `forget`: drop `n` lookups; the node goes when none are left.
    pub fn forget(&self, id: u64, n: u64) {
        if id == ROOT {
            return;
        }
        let mut t = self.t.write().unwrap_or_else(|e| e.into_inner());
        let gone = match t.nodes.get_mut(&id) {
            Some(node) => {
                node.nlookup = node.nlookup.saturating_sub(n);
                node.nlookup == 0
            }
            None => false,
        };
        if gone {
            if let Some(node) = t.nodes.remove(&id) {
                if t.by_key.get(&(node.dev, node.ino)) == Some(&id) {
                    t.by_key.remove(&(node.dev, node.ino));
                }
            }
        }
    }

    /// A rename moved `(dev, ino)` to `parent/name`.
    pub fn renamed(&self, dev: u64, ino: u64, parent: u64, name: &[u8]) {
        let mut t = self.t.write().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = t.by_key.get(&(dev, ino)) {
            if let Some(n) = t.nodes.get_mut(&id) {
                n.parent = parent;
                n.name = name.into();
            }
        }
    }

    /// The path programs use for a node (and a name in it), under the mountpoint.
    pub fn path(&self, id: u64, name: Option<&[u8]>) -> Option<Vec<u8>> {
        let t = self.t.read().unwrap_or_else(|e| e.into_inner());
        let mut comps: Vec<&[u8]> = Vec::new();
        if let Some(n) = name {
            comps.push(n);
        }
        let mut cur = id;
        let mut depth = 0;
        while cur != ROOT {
            let n = t.nodes.get(&cur)?;
            comps.push(&n.name);
            cur = n.parent;
            depth += 1;
            if depth > 4096 {
                return None;
            }
        }
        let mut p = self.mountpoint.clone();
        for c in comps.iter().rev() {
            p.push(b'/');
            p.extend_from_slice(c);
        }
        if p.is_empty() {
            p.push(b'/');
        }
        Some(p)
    }

    pub fn len(&self) -> usize {
        self.t.read().unwrap_or_else(|e| e.into_inner()).nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
