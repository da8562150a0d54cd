//! The replayed processes' state: per-process descriptor tables, cwd and umask, and address
//! space maps, shared between threads and copied on fork as the kernel does.
//!
//! Descriptor numbers are the *recorded* ones: a table maps each recorded fd to an open file
//! description of the replay (`Arc<OpenFile>`: `dup` and `fork` share it, as the kernel shares
//! an open file description, so offsets move together), whose real descriptor is closed when
//! the last reference goes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

/// Locks a mutex, ignoring poisoning (a panicking executor is reported on its own).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a recorded descriptor refers to in the replay.
#[derive(Debug)]
pub enum Handle {
    /// A real file, directory or device beneath the root.
    File(OwnedFd),
    /// A real pipe end or FIFO: reads and writes wait with a stall timeout.
    Pipe(OwnedFd),
    /// Not reproduced (sockets, event fds, descriptors inherited from outside the trace):
    /// calls on it are simulated from the trace.
    Simulated(&'static str),
}

/// Getdents results of one directory stream, compared as sets when the stream ends.
#[derive(Debug, Default)]
pub struct DirStream {
    /// (name, `d_type`) of every entry the recorded `getdents` calls returned, where the
    /// trace holds their buffers.
    pub recorded: BTreeSet<(Vec<u8>, u8)>,
    /// (name, `d_type`) of every entry the replayed calls returned (the `--init=infer` link
    /// target directory left out of the root's listing).
    pub replayed: BTreeSet<(Vec<u8>, u8)>,
    /// Bytes the recorded calls returned, summed (accumulated only; nothing compares it).
    pub recorded_bytes: u64,
    /// Bytes the replayed calls returned, summed (accumulated only; nothing compares it).
    pub replayed_bytes: u64,
}

/// One open file description.
#[derive(Debug)]
pub struct OpenFile {
    /// The replay's real descriptor, or why there is none.
    pub handle: Handle,
    /// The logical path it was opened by (for messages and ordering keys).
    pub path: Vec<u8>,
    /// Ordering key: calls on the same key keep their recorded order.
    pub key: u64,
    /// Directory streams being read (getdents).
    pub dir: Mutex<DirStream>,
    /// A pipe end a call waited for in vain (the stall timeout): the replay lost step with
    /// what the recording put through the pipe, and later calls on it wait only briefly until
    /// one gets through again.
    pub stalled: AtomicBool,
}

impl OpenFile {
    /// A description with no directory stream read yet and not stalled, shared from the
    /// start (descriptor tables hold it by `Arc`).
    pub fn new(handle: Handle, path: Vec<u8>, key: u64) -> Arc<OpenFile> {
        Arc::new(OpenFile {
            handle,
            path,
            key,
            dir: Mutex::new(DirStream::default()),
            stalled: AtomicBool::new(false),
        })
    }

    /// The real descriptor, if the file is real.
    pub fn raw(&self) -> Option<RawFd> {
        match &self.handle {
            Handle::File(fd) | Handle::Pipe(fd) => Some(fd.as_raw_fd()),
            Handle::Simulated(_) => None,
        }
    }

    /// A pipe end or FIFO, whose reads and writes wait with the stall timeout
    /// ([`crate::Options::stall_timeout`]).
    pub fn is_pipe(&self) -> bool {
        matches!(self.handle, Handle::Pipe(_))
    }
}

/// Files sent in messages (`SCM_RIGHTS`) and not received yet, by the sending `sendmsg`'s
/// unique_id: the replay's open files ([`InFlight`]) and the planner's model of them
/// (`shadow`). At most [`PASSED_MAX`] messages: one never received must not hold its files for
/// ever, so the oldest goes first, as in the planner's matching.
#[derive(Debug)]
pub struct Passed<F>(BTreeMap<u64, Vec<Option<F>>>);

impl<F> Default for Passed<F> {
    fn default() -> Self {
        Passed(BTreeMap::new())
    }
}

/// The most messages with descriptors kept waiting for their receiver (the planner's matches
/// too).
pub const PASSED_MAX: usize = 4096;

impl<F> Passed<F> {
    /// Message `id` sent these files (None: a descriptor the model does not know).
    pub fn send(&mut self, id: u64, files: Vec<Option<F>>) {
        if self.0.len() >= PASSED_MAX {
            self.0.pop_first();
        }
        self.0.insert(id, files);
    }

    /// The files message `id` sent, once (empty when it is unknown).
    pub fn receive(&mut self, id: u64) -> Vec<Option<F>> {
        self.0.remove(&id).unwrap_or_default()
    }
}

/// The replay's open files in flight between a `sendmsg` and its `recvmsg`.
pub type InFlight = Mutex<Passed<Arc<OpenFile>>>;

/// One slot of a descriptor table.
#[derive(Clone, Debug)]
pub struct FdEntry {
    /// The open file description; shared with every `dup` of it and with forked tables.
    pub file: Arc<OpenFile>,
    /// `FD_CLOEXEC`: the entry goes at a successful `execve` ([`FdTable::exec`]).
    pub cloexec: bool,
}

/// A process's descriptor table, by recorded fd number.
#[derive(Clone, Debug, Default)]
pub struct FdTable {
    map: BTreeMap<i32, FdEntry>,
}

impl FdTable {
    /// The entry at recorded descriptor number `fd`, None when it is not open.
    pub fn get(&self, fd: i32) -> Option<&FdEntry> {
        self.map.get(&fd)
    }
    /// The entry at recorded descriptor number `fd` to change (its close-on-exec flag).
    pub fn get_mut(&mut self, fd: i32) -> Option<&mut FdEntry> {
        self.map.get_mut(&fd)
    }
    /// The lowest free number >= `min` (what the kernel would allocate).
    pub fn lowest_free(&self, min: i32) -> i32 {
        let mut n = min.max(0);
        for (&k, _) in self.map.range(n..) {
            if k != n {
                break;
            }
            n += 1;
        }
        n
    }
    /// Put `e` at `fd`, returning what was there.
    pub fn insert(&mut self, fd: i32, e: FdEntry) -> Option<FdEntry> {
        self.map.insert(fd, e)
    }
    /// Close recorded descriptor `fd` in this table, returning its entry (the description
    /// closes when its last reference goes); None when it was not open.
    pub fn remove(&mut self, fd: i32) -> Option<FdEntry> {
        self.map.remove(&fd)
    }
    /// Drop close-on-exec entries (execve); returns them (so they close outside the lock).
    pub fn exec(&mut self) -> Vec<FdEntry> {
        let keys: Vec<i32> = self.map.iter().filter(|(_, e)| e.cloexec).map(|(&k, _)| k).collect();
        keys.into_iter().filter_map(|k| self.map.remove(&k)).collect()
    }
    /// Remove `first..=last`; returns the entries (so they close outside the lock).
    pub fn remove_range(&mut self, first: i32, last: i32) -> Vec<FdEntry> {
        if first > last {
            return Vec::new();
        }
        let keys: Vec<i32> = self.map.range(first..=last).map(|(&k, _)| k).collect();
        keys.into_iter().filter_map(|k| self.map.remove(&k)).collect()
    }
    /// Mark `first..=last` close-on-exec.
    pub fn cloexec_range(&mut self, first: i32, last: i32) {
        if first > last {
            return;
        }
        for (_, e) in self.map.range_mut(first..=last) {
            e.cloexec = true;
        }
    }
    /// Open descriptors in the table.
    pub fn len(&self) -> usize {
        self.map.len()
    }
    /// The entries, by number.
    pub fn iter(&self) -> impl Iterator<Item = (&i32, &FdEntry)> {
        self.map.iter()
    }
    /// No descriptor is open.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// cwd and umask (shared with CLONE_FS).
#[derive(Clone, Debug)]
pub struct FsInfo {
    /// Logical cwd beneath the root, absolute.
    pub cwd: Vec<u8>,
    /// The process's file mode creation mask (`umask` sets it): replay runs with umask 0 and
    /// masks the modes of the files it creates (`open`, `mkdir`, `mknod`, bound sockets) with
    /// this one instead.
    pub umask: u32,
}

/// A replayed mapping of a recorded address range.
///
/// `len` is the recorded length; `real`, when present, is a mapping this replayer made, whose
/// own length may be shorter (never longer): every access through it is bounded by the real
/// length, never by the recorded one, so no trace can make the replayer touch memory it did
/// not map.
#[derive(Debug)]
pub struct Mapping {
    /// The recorded length, bytes (page records are found by it).
    pub len: u64,
    /// The real mapping (address, length), for file mappings replayed through memory.
    pub real: Option<(usize, usize)>,
    /// The file, for file mappings.
    pub file: Option<Arc<OpenFile>>,
    /// File offset of the recorded start address.
    pub offset: i64,
    /// `MAP_SHARED` (or `MAP_SHARED_VALIDATE`): stores through it reach the file, and
    /// `mmappwrite` records are matched to it ([`MemMap::find_by_fd`]).
    pub shared: bool,
    /// The descriptor number the recorded mmap named (page records name it, even after it
    /// was closed and the number reused).
    pub fd: i32,
    /// `PROT_*` as recorded.
    pub prot: i32,
    /// Order of creation (the latest of two mappings that match a page record wins).
    pub serial: u64,
}

impl Mapping {
    /// The real address of byte `off` of the mapping and how many bytes from there are
    /// really mapped, if any.
    pub fn real_at(&self, off: u64) -> Option<(usize, usize)> {
        let (a, l) = self.real?;
        let off = usize::try_from(off).ok()?;
        (off < l).then(|| (a + off, l - off))
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if let Some((addr, len)) = self.real.take() {
            // SAFETY: (addr, len) is a mapping this replayer created with mmap and nothing else
            // refers to it once its Mapping is gone.
            unsafe {
                libc::munmap(addr as *mut libc::c_void, len);
            }
        }
    }
}

/// An address space: recorded start address -> mapping.
#[derive(Debug, Default)]
pub struct MemMap {
    /// Mappings by recorded start address; they do not overlap ([`MemMap::unmap`] splits).
    pub maps: BTreeMap<u64, Mapping>,
}

const PAGE: u64 = 4096;

impl MemMap {
    /// Remove `[addr, addr+len)` (page-rounded), splitting mappings that straddle its ends and
    /// unmapping the real pages of the removed part.
    pub fn unmap(&mut self, addr: u64, len: u64) {
        let start = addr & !(PAGE - 1);
        let end = addr.saturating_add(len).saturating_add(PAGE - 1) & !(PAGE - 1);
        let hits: Vec<u64> = self
            .maps
            .range(..end)
            .filter(|(&s, m)| s.saturating_add(m.len) > start)
            .map(|(&s, _)| s)
            .collect();
        for s in hits {
            let Some(mut m) = self.maps.remove(&s) else { continue };
            let m_end = s.saturating_add(m.len);
            let real = m.real.take();
            // The part of [from, to) (recorded addresses) that is really mapped.
            let real_part = |from: u64, to: u64| -> Option<(usize, usize)> {
                let (a, l) = real?;
                let (lo, hi) = ((from - s) as usize, ((to - s) as usize).min(l));
                (hi > lo).then(|| (a + lo, hi - lo))
            };
            let piece = |from: u64, to: u64, m: &Mapping| -> Mapping {
                Mapping {
                    len: to - from,
                    real: real_part(from, to),
                    file: m.file.clone(),
                    offset: m.offset + (from - s) as i64,
                    shared: m.shared,
                    fd: m.fd,
                    prot: m.prot,
                    serial: m.serial,
                }
            };
            if s < start {
                let left = piece(s, start, &m);
                self.maps.insert(s, left);
            }
            if m_end > end {
                let right = piece(end, m_end, &m);
                self.maps.insert(end, right);
            }
            if let Some((a, l)) = real_part(start.max(s), end.min(m_end)) {
                // SAFETY: real_part keeps the range inside the mapping this replayer created.
                unsafe {
                    libc::munmap(a as *mut libc::c_void, l);
                }
            }
        }
    }

    /// The mapping holding recorded address `addr`, with the offset into it.
    pub fn find(&self, addr: u64) -> Option<(&Mapping, u64)> {
        let (&s, m) = self.maps.range(..=addr).next_back()?;
        (addr < s.saturating_add(m.len)).then_some((m, addr - s))
    }

    /// The latest shared file mapping made through descriptor number `fd` that covers file
    /// offset `off` (mmappwrite records carry no address, only the descriptor the mmap named):
    /// the mapping and the offset of `off` in it.
    pub fn find_by_fd(&self, fd: i32, off: i64) -> Option<(&Mapping, u64)> {
        self.maps
            .values()
            .filter(|m| {
                m.fd == fd
                    && m.file.is_some()
                    && m.shared
                    && off >= m.offset
                    && (off - m.offset) < m.len as i64
            })
            .max_by_key(|m| m.serial)
            .map(|m| (m, (off - m.offset) as u64))
    }
}

/// Logical process number (not the recorded pid, which can be unknown or reused).
pub type ProcId = u64;

/// The POSIX record locks (`fcntl` `F_SETLK`, `F_SETLKW`, `F_GETLK`) of one descriptor table.
///
/// The kernel's owner of such a lock is the descriptor table (`current->files`), not the open
/// file: a forked child's lock conflicts with its parent's on the very same open file, and
/// closing any descriptor of a file drops the table's locks on it. Every replayed process
/// lives in this one replayer, where POSIX locks would all have one owner and never conflict.
/// So each table takes its locks as OFD locks on an open file description of its own per file
/// (opened again through `/proc/self/fd`): those conflict between tables as the processes'
/// locks did, and go when the table closes a descriptor of the file or goes itself.
#[derive(Debug, Default)]
pub struct PosixLocks {
    /// (st_dev, st_ino) -> the table's own open file description of that file.
    pub by_file: HashMap<(u64, u64), Arc<OwnedFd>>,
}

/// One replayed process.
#[derive(Debug)]
pub struct Process {
    /// The descriptor table; shared with `CLONE_FILES` children, copied otherwise.
    pub fds: Arc<Mutex<FdTable>>,
    /// cwd and umask; shared with `CLONE_FS` children, copied otherwise.
    pub fs: Arc<Mutex<FsInfo>>,
    /// The address space's mappings; shared with `CLONE_VM` children (threads, vfork), empty
    /// in a forked child and after exec.
    pub mm: Arc<Mutex<MemMap>>,
    /// Shared, like `fds`, with CLONE_FILES.
    pub locks: Arc<Mutex<PosixLocks>>,
}

impl Process {
    /// A process that was already running when the trace starts: cwd as recorded and, when
    /// `std_fds` (the trace doesn't list inherited descriptors), fds 0-2 inherited from
    /// outside (simulated).
    pub fn initial(cwd: Vec<u8>, umask: u32, std_fds: bool) -> Process {
        let mut t = FdTable::default();
        for fd in 0..if std_fds { 3 } else { 0 } {
            let f = OpenFile::new(Handle::Simulated("inherited"), Vec::new(), 0);
            t.insert(fd, FdEntry { file: f, cloexec: false });
        }
        Process {
            fds: Arc::new(Mutex::new(t)),
            fs: Arc::new(Mutex::new(FsInfo { cwd, umask })),
            mm: Arc::new(Mutex::new(MemMap::default())),
            locks: Arc::default(),
        }
    }

    /// The process a successful exec leaves (the kernel's `begin_new_exec`): a descriptor
    /// table of its own (`unshare_files`: a table shared with CLONE_FILES stays the other
    /// process's) without the close-on-exec entries, which are returned so they close outside
    /// any lock, and a new address space (a vfork child shared its parent's until now: clearing
    /// that one would take the parent's mappings, and every sibling's). cwd and umask stay
    /// shared as they were.
    pub fn after_exec(&self) -> (Process, Vec<FdEntry>) {
        let mut t = lock(&self.fds).clone();
        let gone = t.exec();
        let p = Process {
            fds: Arc::new(Mutex::new(t)),
            fs: self.fs.clone(),
            mm: Arc::new(Mutex::new(MemMap::default())),
            locks: self.locks.clone(),
        };
        (p, gone)
    }

    /// The child of `clone(flags)`.
    pub fn clone_with(&self, flags: u64) -> Process {
        let share = |bit: i32| flags & bit as u64 != 0;
        Process {
            fds: if share(libc::CLONE_FILES) {
                self.fds.clone()
            } else {
                Arc::new(Mutex::new(lock(&self.fds).clone()))
            },
            fs: if share(libc::CLONE_FS) {
                self.fs.clone()
            } else {
                Arc::new(Mutex::new(lock(&self.fs).clone()))
            },
            // Mappings of a forked child are not replayed through memory again: a private
            // copy keeps only the bookkeeping of file mappings for mmappwrite records.
            mm: if share(libc::CLONE_VM) {
                self.mm.clone()
            } else {
                Arc::new(Mutex::new(MemMap::default()))
            },
            // A forked child holds none of its parent's record locks.
            locks: if share(libc::CLONE_FILES) { self.locks.clone() } else { Arc::default() },
        }
    }
}

/// Every process of the replay.
#[derive(Debug, Default)]
pub struct Procs {
    map: Mutex<HashMap<ProcId, Arc<Process>>>,
}

impl Procs {
    /// The process with the planner's id `id`, None once it ended or before it began.
    pub fn get(&self, id: ProcId) -> Option<Arc<Process>> {
        lock(&self.map).get(&id).cloned()
    }
    /// Adds (or replaces, after an exec) the process `id`.
    pub fn insert(&self, id: ProcId, p: Process) {
        lock(&self.map).insert(id, Arc::new(p));
    }
    /// The process ended: its descriptors and mappings go when the last user lets go.
    pub fn remove(&self, id: ProcId) {
        let p = lock(&self.map).remove(&id);
        drop(p);
    }
    /// Drops every process (at the end of the replay), outside the table's lock, closing
    /// their descriptors and unmapping their mappings as the last references go.
    pub fn clear(&self) {
        let all: Vec<_> = lock(&self.map).drain().collect();
        drop(all);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim() -> FdEntry {
        FdEntry { file: OpenFile::new(Handle::Simulated("t"), Vec::new(), 0), cloexec: false }
    }

    #[test]
    fn lowest_free_and_exec() {
        let mut t = FdTable::default();
        for fd in [0, 1, 2, 4] {
            t.insert(fd, sim());
        }
        assert_eq!(t.lowest_free(0), 3);
        assert_eq!(t.lowest_free(4), 5);
        assert_eq!(t.lowest_free(10), 10);
        t.get_mut(4).unwrap().cloexec = true;
        assert_eq!(t.exec().len(), 1);
        assert!(t.get(4).is_none());
        assert_eq!(t.remove_range(1, 2).len(), 2);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn unmap_splits() {
        let mut m = MemMap::default();
        m.maps.insert(
            0x10000,
            Mapping {
                len: 0x4000,
                real: None,
                file: None,
                offset: 0,
                shared: false,
                fd: -1,
                prot: 0,
                serial: 0,
            },
        );
        m.unmap(0x11000, 0x1000);
        let keys: Vec<_> = m.maps.iter().map(|(&k, v)| (k, v.len, v.offset)).collect();
        assert_eq!(keys, vec![(0x10000, 0x1000, 0), (0x12000, 0x2000, 0x2000)]);
        assert!(m.find(0x12fff).is_some());
        assert!(m.find(0x11000).is_none());
    }
}
