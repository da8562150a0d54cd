//! The inode table: FUSE node ids to the lower file system's inodes, with the name each was
//! last reached by (for paths in records).
//!
//! A node is reached through an `O_PATH` descriptor (valid across renames, as in libfuse's
//! passthrough_hp). The kernel remembers inodes until memory pressure makes it forget them,
//! so one pinned descriptor per node would run out of descriptors on a big tree (fs_mark's
//! 20,000 files did, at this machine's limit of 20,000, which root cannot raise here). So
//! nodes on the lower root's file system keep a file handle (`name_to_handle_at`) and hold a
//! descriptor only while in a bounded cache, reopening by handle (`open_by_handle_at`) when
//! needed; only nodes whose file system has no handles keep theirs pinned. A handle also tells
//! a reused inode number from the file that had it: it carries the inode's generation.

use std::collections::{HashMap, VecDeque};
use std::ffi::CStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

/// Node id of the mount's root (FUSE's `FUSE_ROOT_ID`); its st_ino reads 1.
pub const ROOT: u64 = 1;

const MAX_HANDLE_SZ: usize = 128;

#[repr(C)]
struct RawHandle {
    handle_bytes: u32,
    handle_type: i32,
    f_handle: [u8; MAX_HANDLE_SZ],
}

/// The file handle of `dirfd/name` (not following a final symlink): its type and bytes.
pub fn handle_of(dirfd: BorrowedFd<'_>, name: &CStr) -> Option<Box<[u8]>> {
    let mut h = RawHandle {
        handle_bytes: MAX_HANDLE_SZ as u32,
        handle_type: 0,
        f_handle: [0; MAX_HANDLE_SZ],
    };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: `h` is a file_handle with room for MAX_HANDLE_SZ bytes, as handle_bytes says;
    // name is NUL-terminated; mount_id is a valid int.
    let r = unsafe {
        libc::name_to_handle_at(
            dirfd.as_raw_fd(),
            name.as_ptr(),
            (&mut h as *mut RawHandle).cast::<libc::file_handle>(),
            &mut mount_id,
            0,
        )
    };
    if r != 0 || h.handle_bytes as usize > MAX_HANDLE_SZ {
        return None;
    }
    let mut v = Vec::with_capacity(4 + h.handle_bytes as usize);
    v.extend_from_slice(&h.handle_type.to_ne_bytes());
    v.extend_from_slice(&h.f_handle[..h.handle_bytes as usize]);
    Some(v.into_boxed_slice())
}

/// Open a handle from [`handle_of`] as an `O_PATH` descriptor (needs CAP_DAC_READ_SEARCH).
fn open_handle(mount_fd: BorrowedFd<'_>, handle: &[u8]) -> std::io::Result<OwnedFd> {
    let bad = || std::io::Error::from_raw_os_error(libc::EINVAL);
    let (ty, bytes) = handle.split_at_checked(4).ok_or_else(bad)?;
    if bytes.len() > MAX_HANDLE_SZ {
        return Err(bad());
    }
    let mut h = RawHandle {
        handle_bytes: bytes.len() as u32,
        handle_type: i32::from_ne_bytes(ty.try_into().map_err(|_| bad())?),
        f_handle: [0; MAX_HANDLE_SZ],
    };
    h.f_handle[..bytes.len()].copy_from_slice(bytes);
    // SAFETY: `h` is a valid file_handle of handle_bytes bytes; the result is a new
    // descriptor we own (or -1).
    let fd = unsafe {
        libc::open_by_handle_at(
            mount_fd.as_raw_fd(),
            (&mut h as *mut RawHandle).cast::<libc::file_handle>(),
            libc::O_PATH | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by open_by_handle_at and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

// Public to the crate only: nodes are reached through [`Inodes`] and [`NodeRef`].
pub(crate) struct Node {
    /// The descriptor while cached (always, for nodes without a handle).
    fd: Option<Arc<OwnedFd>>,
    handle: Option<Box<[u8]>>,
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
    /// Next id for files on other devices than the root's (submounts of the lower tree) and
    /// for a reused inode number whose previous file the kernel still knows.
    next: u64,
    root_dev: u64,
    /// Nodes holding a descriptor that can be reopened by handle, oldest first.
    cached: VecDeque<u64>,
}

/// Ids that are not lower inode numbers start here.
const FOREIGN: u64 = 1 << 62;

/// Shared by every FUSE worker thread.
pub struct Inodes {
    t: Mutex<Table>,
    /// The mountpoint as programs see it (no trailing slash).
    mountpoint: Vec<u8>,
    /// A plain (not `O_PATH`: open_by_handle_at refuses those) descriptor of the lower root.
    mount_fd: OwnedFd,
    /// Descriptors kept open for nodes that have a handle.
    max_cached: usize,
}

/// What a node's handle gives an operation.
pub struct NodeRef {
    /// The node's `O_PATH` descriptor of the lower file (opened at lookup, or again by
    /// `open_by_handle_at`); an operation holding it keeps it open after the node leaves the
    /// cache.
    pub fd: Arc<OwnedFd>,
    /// The lower file is a symbolic link: calls that follow `/proc/self/fd/N` would act on
    /// its target, so the passthrough uses the descriptor itself or refuses (`chmod`:
    /// `EOPNOTSUPP`).
    pub is_symlink: bool,
    /// The lower file's inode number.
    pub ino: u64,
}

impl NodeRef {
    /// The descriptor borrowed, for `*at` calls with `AT_EMPTY_PATH` or a name beneath it.
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
    /// The table with only the root node (FUSE node id 1): `root` is LOWER's `O_PATH`
    /// descriptor, `mount_fd` a plain one for `open_by_handle_at`, `(dev, ino)` LOWER's,
    /// `mountpoint` the prefix of every path [`Inodes::path`] gives, and `max_cached` the
    /// descriptors kept open for nodes that can be reopened by handle (at least 16).
    pub fn new(
        root: OwnedFd,
        mount_fd: OwnedFd,
        dev: u64,
        ino: u64,
        mountpoint: Vec<u8>,
        max_cached: usize,
    ) -> Inodes {
        let root = Arc::new(root);
        let mut t = Table { next: FOREIGN, root_dev: dev, ..Table::default() };
        t.nodes.insert(
            ROOT,
            Node {
                fd: Some(root),
                handle: None,
                dev,
                ino,
                is_symlink: false,
                nlookup: 1,
                parent: ROOT,
                name: Box::new([]),
            },
        );
        t.by_key.insert((dev, ino), ROOT);
        Inodes { t: Mutex::new(t), mountpoint, mount_fd, max_cached: max_cached.max(16) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.t.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The node's descriptor (reopened by handle if it left the cache).
    pub fn get(&self, id: u64) -> Option<NodeRef> {
        let mut t = self.lock();
        let n = t.nodes.get_mut(&id)?;
        let (is_symlink, ino) = (n.is_symlink, n.ino);
        if let Some(fd) = &n.fd {
            return Some(NodeRef { fd: fd.clone(), is_symlink, ino });
        }
        let fd = Arc::new(open_handle(self.mount_fd.as_fd(), n.handle.as_deref()?).ok()?);
        n.fd = Some(fd.clone());
        self.cache(&mut t, id);
        Some(NodeRef { fd, is_symlink, ino })
    }

    /// The parent node and name a node was last reached by.
    pub fn parent_name(&self, id: u64) -> Option<(u64, Vec<u8>)> {
        self.lock().nodes.get(&id).map(|n| (n.parent, n.name.to_vec()))
    }

    /// The node's lower inode number, without opening anything.
    pub fn ino(&self, id: u64) -> Option<u64> {
        self.lock().nodes.get(&id).map(|n| n.ino)
    }

    /// The node's lower (st_dev, st_ino), without opening anything.
    pub fn key(&self, id: u64) -> Option<(u64, u64)> {
        self.lock().nodes.get(&id).map(|n| (n.dev, n.ino))
    }

    fn cache(&self, t: &mut Table, id: u64) {
        t.cached.push_back(id);
        while t.cached.len() > self.max_cached {
            let Some(old) = t.cached.pop_front() else { break };
            if let Some(n) = t.nodes.get_mut(&old) {
                // In-flight operations keep their Arc; the descriptor closes after them.
                n.fd = None;
            }
        }
    }

    /// Record a successful lookup of `(dev, ino)` reached as `parent/name`, with its file
    /// handle if it has one; `open` makes an `O_PATH` descriptor (used now only for nodes
    /// without a handle). Returns the node id.
    #[allow(clippy::too_many_arguments)]
    pub fn looked_up(
        &self,
        parent: u64,
        name: &[u8],
        dev: u64,
        ino: u64,
        is_symlink: bool,
        handle: impl FnOnce() -> Option<Box<[u8]>>,
        open: impl FnOnce() -> std::io::Result<OwnedFd>,
    ) -> std::io::Result<u64> {
        let mut t = self.lock();
        // The handle is asked for only when needed: a known node whose descriptor is open is
        // its file (we hold the inode: its number cannot have been given to another).
        let mut handle_fn = Some(handle);
        let mut fetched: Option<Box<[u8]>> = None;
        if let Some(&id) = t.by_key.get(&(dev, ino)) {
            if let Some(n) = t.nodes.get_mut(&id) {
                // The same file, unless both have handles and they differ: the number now
                // belongs to a new file while the kernel still knows the old one.
                let same = if id == ROOT || n.fd.is_some() || n.handle.is_none() {
                    true
                } else {
                    fetched = handle_fn.take().and_then(|f| f());
                    fetched.is_none() || n.handle == fetched
                };
                if same {
                    n.nlookup += 1;
                    if id != ROOT {
                        n.parent = parent;
                        n.name = name.into();
                    }
                    return Ok(id);
                }
            }
        }
        let handle = match handle_fn.take() {
            Some(f) => f(),
            None => fetched,
        };
        let usable = handle.is_some() && dev == t.root_dev;
        let fd = if usable { None } else { Some(Arc::new(open()?)) };
        // The node id is what programs see as st_ino (FUSE replies carry one number for
        // both): the lower inode number, so that inode numbers are the lower file system's.
        let id = if dev == t.root_dev && ino != ROOT && !t.nodes.contains_key(&ino) {
            ino
        } else {
            t.next += 1;
            t.next - 1
        };
        t.nodes.insert(
            id,
            Node {
                fd,
                handle: if usable { handle } else { None },
                dev,
                ino,
                is_symlink,
                nlookup: 1,
                parent,
                name: name.into(),
            },
        );
        t.by_key.insert((dev, ino), id);
        Ok(id)
    }

    /// FUSE `forget`: drop `n` lookups; the node goes when none are left.
    pub fn forget(&self, id: u64, n: u64) {
        if id == ROOT {
            return;
        }
        let mut t = self.lock();
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
        let mut t = self.lock();
        if let Some(&id) = t.by_key.get(&(dev, ino)) {
            if let Some(n) = t.nodes.get_mut(&id) {
                n.parent = parent;
                n.name = name.into();
            }
        }
    }

    /// The path programs use for a node (and a name in it), under the mountpoint.
    pub fn path(&self, id: u64, name: Option<&[u8]>) -> Option<Vec<u8>> {
        let t = self.lock();
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

    /// Nodes the kernel knows (looked up and not yet forgotten), the root included.
    pub fn len(&self) -> usize {
        self.lock().nodes.len()
    }

    /// Never true in practice: the root node is never forgotten.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
