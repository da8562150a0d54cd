//! Decoders for the raw structs a trace stores (x86_64 layouts, as the kernel writes them).
//! They are used to fill Re-Animator's decoded columns (`stat_result_size`, ...), to print
//! results and to verify replayed results field by field.

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn i64_at(b: &[u8], o: usize) -> Option<i64> {
    Some(i64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// `struct stat` (x86_64, 144 bytes). Times are nanoseconds since the epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// `st_dev`: the device holding the file, in the kernel's encoding of major and minor.
    pub dev: u64,
    /// `st_ino`: the inode number.
    pub ino: u64,
    /// `st_nlink`: hard links.
    pub nlink: u64,
    /// `st_mode`: file type and permission bits.
    pub mode: u32,
    /// `st_uid`: the owner.
    pub uid: u32,
    /// `st_gid`: the owning group.
    pub gid: u32,
    /// `st_rdev`: the device a device file stands for (0 for other files).
    pub rdev: u64,
    /// `st_size`: bytes (a symlink's: its target's length).
    pub size: i64,
    /// `st_blksize`: the preferred I/O size, in bytes.
    pub blksize: i64,
    /// `st_blocks`: 512-byte blocks allocated.
    pub blocks: i64,
    /// `st_atim`, ns since the Unix epoch (0 when it overflows 64 bits of ns).
    pub atime_ns: i64,
    /// `st_mtim`, ns since the Unix epoch (0 when it overflows).
    pub mtime_ns: i64,
    /// `st_ctim`, ns since the Unix epoch (0 when it overflows).
    pub ctime_ns: i64,
}

/// Size of `struct stat` on x86_64.
pub const STAT_SIZE: usize = 144;

fn ts(b: &[u8], o: usize) -> Option<i64> {
    i64_at(b, o)?.checked_mul(1_000_000_000)?.checked_add(i64_at(b, o + 8)?)
}

impl Stat {
    /// Decode; `None` if the buffer is shorter than the struct.
    pub fn decode(b: &[u8]) -> Option<Stat> {
        if b.len() < STAT_SIZE {
            return None;
        }
        Some(Stat {
            dev: u64_at(b, 0)?,
            ino: u64_at(b, 8)?,
            nlink: u64_at(b, 16)?,
            mode: u32_at(b, 24)?,
            uid: u32_at(b, 28)?,
            gid: u32_at(b, 32)?,
            rdev: u64_at(b, 40)?,
            size: i64_at(b, 48)?,
            blksize: i64_at(b, 56)?,
            blocks: i64_at(b, 64)?,
            atime_ns: ts(b, 72).unwrap_or(0),
            mtime_ns: ts(b, 88).unwrap_or(0),
            ctime_ns: ts(b, 104).unwrap_or(0),
        })
    }

    /// The value of Re-Animator's decoded column `stat_result_<member>`.
    pub fn ra_column(&self, member: &str) -> Option<i64> {
        Some(match member {
            "dev" => self.dev as i64,
            "ino" => self.ino as i64,
            "nlink" => self.nlink as i64,
            "mode" => self.mode as i64,
            "uid" => self.uid as i64,
            "gid" => self.gid as i64,
            "rdev" => self.rdev as i64,
            "size" => self.size,
            "blksize" => self.blksize,
            "blocks" => self.blocks,
            "atime" => self.atime_ns,
            "mtime" => self.mtime_ns,
            "ctime" => self.ctime_ns,
            _ => return None,
        })
    }
}

/// `struct statfs` (x86_64, 120 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Statfs {
    /// `f_type`: the file system's magic number (`EXT4_SUPER_MAGIC`, ...).
    pub fs_type: i64,
    /// `f_bsize`: the optimal transfer block size, in bytes.
    pub bsize: i64,
    /// `f_blocks`: total data blocks, in `f_frsize` units.
    pub blocks: u64,
    /// `f_bfree`: free blocks.
    pub bfree: u64,
    /// `f_bavail`: free blocks available to unprivileged users.
    pub bavail: u64,
    /// `f_files`: total inodes.
    pub files: u64,
    /// `f_ffree`: free inodes.
    pub ffree: u64,
    /// `f_fsid`: the file system id (Re-Animator's `statfs_result_fsid` holds the first
    /// word only).
    pub fsid: [i32; 2],
    /// `f_namelen`: the longest file name, in bytes.
    pub namelen: i64,
    /// `f_frsize`: the fragment size, in bytes.
    pub frsize: i64,
    /// `f_flags`: the mount flags (`ST_RDONLY`, `ST_NOSUID`, ...).
    pub flags: i64,
}

/// Size of `struct statfs` on x86_64.
pub const STATFS_SIZE: usize = 120;

impl Statfs {
    /// Decode; `None` if the buffer is shorter than [`STATFS_SIZE`].
    pub fn decode(b: &[u8]) -> Option<Statfs> {
        if b.len() < STATFS_SIZE {
            return None;
        }
        Some(Statfs {
            fs_type: i64_at(b, 0)?,
            bsize: i64_at(b, 8)?,
            blocks: u64_at(b, 16)?,
            bfree: u64_at(b, 24)?,
            bavail: u64_at(b, 32)?,
            files: u64_at(b, 40)?,
            ffree: u64_at(b, 48)?,
            fsid: [u32_at(b, 56)? as i32, u32_at(b, 60)? as i32],
            namelen: i64_at(b, 64)?,
            frsize: i64_at(b, 72)?,
            flags: i64_at(b, 80)?,
        })
    }

    /// The value of Re-Animator's decoded column `statfs_result_<member>`.
    pub fn ra_column(&self, member: &str) -> Option<i64> {
        Some(match member {
            "type" => self.fs_type,
            "bsize" => self.bsize,
            "blocks" => self.blocks as i64,
            "bfree" => self.bfree as i64,
            "bavail" => self.bavail as i64,
            "files" => self.files as i64,
            "ffree" => self.ffree as i64,
            "fsid" => self.fsid[0] as i64,
            "namelen" => self.namelen,
            "frsize" => self.frsize,
            "flags" => self.flags,
            _ => return None,
        })
    }
}

/// `struct statx` (256 bytes), the members replay verifies. Which members the kernel filled
/// is `mask`'s to say: the others hold whatever the buffer held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Statx {
    /// `stx_mask`: the `STATX_*` bits of the members filled in.
    pub mask: u32,
    /// `stx_blksize`: the preferred I/O size, in bytes.
    pub blksize: u32,
    /// `stx_attributes`: `STATX_ATTR_*` flags.
    pub attributes: u64,
    /// `stx_nlink`: hard links.
    pub nlink: u32,
    /// `stx_uid`: the owner.
    pub uid: u32,
    /// `stx_gid`: the owning group.
    pub gid: u32,
    /// `stx_mode`: file type and permission bits.
    pub mode: u16,
    /// `stx_ino`: the inode number.
    pub ino: u64,
    /// `stx_size`: bytes.
    pub size: u64,
    /// `stx_blocks`: 512-byte blocks allocated.
    pub blocks: u64,
    /// `stx_atime`, ns since the Unix epoch (0 when it overflows 64 bits of ns).
    pub atime_ns: i64,
    /// `stx_btime` (birth), ns since the Unix epoch (0 when it overflows).
    pub btime_ns: i64,
    /// `stx_ctime`, ns since the Unix epoch (0 when it overflows).
    pub ctime_ns: i64,
    /// `stx_mtime`, ns since the Unix epoch (0 when it overflows).
    pub mtime_ns: i64,
    /// (`stx_rdev_major`, `stx_rdev_minor`): the device a device file stands for.
    pub rdev: (u32, u32),
    /// (`stx_dev_major`, `stx_dev_minor`): the device holding the file.
    pub dev: (u32, u32),
}

/// Size of `struct statx`.
pub const STATX_SIZE: usize = 256;

fn statx_ts(b: &[u8], o: usize) -> Option<i64> {
    i64_at(b, o)?.checked_mul(1_000_000_000)?.checked_add(i64::from(u32_at(b, o + 8)?))
}

impl Statx {
    /// Decode; `None` if the buffer is shorter than the 144 bytes up to `stx_dev_minor`
    /// (the rest of [`STATX_SIZE`] is not read).
    pub fn decode(b: &[u8]) -> Option<Statx> {
        if b.len() < 144 {
            return None;
        }
        Some(Statx {
            mask: u32_at(b, 0)?,
            blksize: u32_at(b, 4)?,
            attributes: u64_at(b, 8)?,
            nlink: u32_at(b, 16)?,
            uid: u32_at(b, 20)?,
            gid: u32_at(b, 24)?,
            mode: u16_at(b, 28)?,
            ino: u64_at(b, 32)?,
            size: u64_at(b, 40)?,
            blocks: u64_at(b, 48)?,
            atime_ns: statx_ts(b, 64).unwrap_or(0),
            btime_ns: statx_ts(b, 80).unwrap_or(0),
            ctime_ns: statx_ts(b, 96).unwrap_or(0),
            mtime_ns: statx_ts(b, 112).unwrap_or(0),
            rdev: (u32_at(b, 128)?, u32_at(b, 132)?),
            dev: (u32_at(b, 136)?, u32_at(b, 140)?),
        })
    }
}

/// One `struct linux_dirent64` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dirent {
    /// `d_ino`: the entry's inode number.
    pub ino: u64,
    /// `d_off`: the file system's cookie for the position after this entry (what `lseek` on
    /// the directory takes), not a byte offset.
    pub off: i64,
    /// `d_type`: `DT_REG`, `DT_DIR`, ... (`DT_UNKNOWN`, 0, when the file system does not say).
    pub d_type: u8,
    /// The entry's name, without its NUL.
    pub name: Vec<u8>,
}

/// A `getdents64` buffer of these entries, as the kernel writes it (each record's length
/// rounded up to 8 bytes, padding zeroed): what [`parse_dirents64`] reads back.
pub fn encode_dirents64(entries: &[Dirent]) -> Vec<u8> {
    let mut b = Vec::new();
    for e in entries {
        let reclen = (19 + e.name.len() + 1).div_ceil(8) * 8;
        let start = b.len();
        b.extend_from_slice(&e.ino.to_le_bytes());
        b.extend_from_slice(&e.off.to_le_bytes());
        b.extend_from_slice(&(reclen as u16).to_le_bytes());
        b.push(e.d_type);
        b.extend_from_slice(&e.name);
        b.resize(start + reclen, 0);
    }
    b
}

/// Parse a `getdents64` buffer. Stops (returning what it has) at a malformed record.
pub fn parse_dirents64(mut b: &[u8]) -> Vec<Dirent> {
    let mut out = Vec::new();
    while b.len() >= 19 {
        let (Some(ino), Some(off), Some(reclen)) = (u64_at(b, 0), i64_at(b, 8), u16_at(b, 16))
        else {
            break;
        };
        let reclen = usize::from(reclen);
        if reclen < 19 || reclen > b.len() {
            break;
        }
        let d_type = b[18];
        let name_area = &b[19..reclen];
        let name = name_area.split(|&c| c == 0).next().unwrap_or_default().to_vec();
        out.push(Dirent { ino, off, d_type, name });
        b = &b[reclen..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_of_a_real_file_matches_std_metadata() {
        use std::os::unix::fs::MetadataExt;
        let path = std::ffi::CString::new(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut buf = [0u8; STAT_SIZE];
        // SAFETY: `buf` is exactly the size of the kernel's x86_64 `struct stat`, and `path` is a
        // valid NUL-terminated string that outlives the call.
        let rc = unsafe { libc_stat(path.as_ptr(), buf.as_mut_ptr()) };
        assert_eq!(rc, 0);
        let s = Stat::decode(&buf).unwrap();
        let m = std::fs::metadata(env!("CARGO_MANIFEST_DIR")).unwrap();
        assert_eq!(s.ino, m.ino());
        assert_eq!(s.mode, m.mode());
        assert_eq!(s.nlink, m.nlink());
        assert_eq!(s.size, m.size() as i64);
        assert_eq!(s.mtime_ns, m.mtime() * 1_000_000_000 + m.mtime_nsec());
    }

    extern "C" {
        #[link_name = "stat"]
        fn libc_stat(path: *const std::ffi::c_char, buf: *mut u8) -> i32;
    }

    #[test]
    fn dirents_parse_and_stop_at_garbage() {
        let ents = [(5u64, &b"."[..]), (7, b"hello")].map(|(ino, name)| Dirent {
            ino,
            off: 1,
            d_type: 4,
            name: name.to_vec(),
        });
        let mut b = encode_dirents64(&ents);
        assert_eq!(b.len(), 24 + 32, "records of 8-byte multiples");
        b.extend_from_slice(&[1, 2, 3]);
        let d = parse_dirents64(&b);
        assert_eq!(d.len(), 2);
        assert_eq!(d[1].name, b"hello");
        assert_eq!(d[1].ino, 7);
        assert!(parse_dirents64(&[0xff; 40]).is_empty());
    }
}

/// Parse an old `getdents` (`struct linux_dirent`) buffer: `d_ino` u64, `d_off` u64, `d_reclen`
/// u16, the NUL-terminated name at offset 18, and `d_type` in the record's last byte. Stops
/// (returning what it has) at a malformed record.
pub fn parse_dirents(mut b: &[u8]) -> Vec<Dirent> {
    let mut out = Vec::new();
    while b.len() >= 20 {
        let (Some(ino), Some(off), Some(reclen)) = (u64_at(b, 0), i64_at(b, 8), u16_at(b, 16))
        else {
            break;
        };
        let reclen = usize::from(reclen);
        if reclen < 20 || reclen > b.len() {
            break;
        }
        let name = b[18..reclen - 1].split(|&c| c == 0).next().unwrap_or_default().to_vec();
        out.push(Dirent { ino, off, d_type: b[reclen - 1], name });
        b = &b[reclen..];
    }
    out
}

/// `UTIME_NOW`: the `tv_nsec` value with which `utimensat` sets a time to the current time
/// (its `tv_sec` ignored).
pub const UTIME_NOW: i64 = (1 << 30) - 1;
/// `UTIME_OMIT`: the `tv_nsec` value with which `utimensat` leaves a time unchanged.
pub const UTIME_OMIT: i64 = (1 << 30) - 2;

/// Members of a struct that Re-Animator stores as integer columns (see
/// `ra_syscalls::Struct::ra_decoded_columns`): fds as they are, limits as their bit pattern,
/// times in nanoseconds since the epoch — except a `timespec` whose `tv_nsec` is `UTIME_NOW` or
/// `UTIME_OMIT`, which is stored as that `tv_nsec` value (the kernel ignores `tv_sec` then).
pub fn struct_to_columns(s: ra_syscalls::Struct, b: &[u8]) -> Option<Vec<i64>> {
    use ra_syscalls::Struct as S;
    let i32s = |n: usize| (0..n).map(|k| u32_at(b, 4 * k).map(|v| i64::from(v as i32))).collect();
    let i64s = |n: usize| (0..n).map(|k| i64_at(b, 8 * k)).collect::<Option<Vec<i64>>>();
    match s {
        S::FdPair => i32s(2),
        S::Rlimit => i64s(2),
        S::Utimbuf => Some(i64s(2)?.into_iter().map(|s| s.saturating_mul(1_000_000_000)).collect()),
        S::Timeval2 => {
            let v = i64s(4)?;
            Some(vec![
                v[0].saturating_mul(1_000_000_000).saturating_add(v[1].saturating_mul(1000)),
                v[2].saturating_mul(1_000_000_000).saturating_add(v[3].saturating_mul(1000)),
            ])
        }
        S::Timespec2 => {
            let v = i64s(4)?;
            let one = |sec: i64, nsec: i64| {
                if nsec == UTIME_NOW || nsec == UTIME_OMIT {
                    nsec
                } else {
                    sec.saturating_mul(1_000_000_000).saturating_add(nsec)
                }
            };
            Some(vec![one(v[0], v[1]), one(v[2], v[3])])
        }
        _ => None,
    }
}

/// The inverse of [`struct_to_columns`]: the struct's bytes from its columns.
pub fn columns_to_struct(s: ra_syscalls::Struct, cols: &[i64]) -> Option<Vec<u8>> {
    use ra_syscalls::Struct as S;
    let mut out = Vec::new();
    match s {
        S::FdPair => {
            cols.iter().take(2).for_each(|&c| out.extend_from_slice(&(c as i32).to_le_bytes()))
        }
        S::Rlimit => cols.iter().take(2).for_each(|&c| out.extend_from_slice(&c.to_le_bytes())),
        S::Utimbuf => cols
            .iter()
            .take(2)
            .for_each(|&c| out.extend_from_slice(&c.div_euclid(1_000_000_000).to_le_bytes())),
        S::Timeval2 => cols.iter().take(2).for_each(|&c| {
            out.extend_from_slice(&c.div_euclid(1_000_000_000).to_le_bytes());
            out.extend_from_slice(&(c.rem_euclid(1_000_000_000) / 1000).to_le_bytes());
        }),
        S::Timespec2 => cols.iter().take(2).for_each(|&c| {
            let (sec, nsec) = if c == UTIME_NOW || c == UTIME_OMIT {
                (0, c)
            } else {
                (c.div_euclid(1_000_000_000), c.rem_euclid(1_000_000_000))
            };
            out.extend_from_slice(&sec.to_le_bytes());
            out.extend_from_slice(&nsec.to_le_bytes());
        }),
        _ => return None,
    }
    Some(out)
}

#[cfg(test)]
mod column_tests {
    use super::*;
    use ra_syscalls::Struct;

    fn words(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn decoded_structs_round_trip_through_columns() {
        let cases: Vec<(Struct, Vec<u8>)> = vec![
            (Struct::FdPair, [3i32, 4].iter().flat_map(|w| w.to_le_bytes()).collect()),
            (Struct::Rlimit, words(&[1024, -1])),
            (Struct::Utimbuf, words(&[1_700_000_000, 1_600_000_000])),
            (Struct::Timeval2, words(&[1_700_000_000, 123_456, 5, 999_999])),
            (Struct::Timespec2, words(&[1_700_000_000, 123_456_789, 0, UTIME_OMIT])),
            (Struct::Timespec2, words(&[0, UTIME_NOW, 7, 1])),
        ];
        for (s, bytes) in cases {
            let cols = struct_to_columns(s, &bytes).unwrap();
            assert_eq!(columns_to_struct(s, &cols).unwrap(), bytes, "{s:?}");
        }
    }

    #[test]
    fn old_dirents_parse() {
        let mut b = Vec::new();
        for (ino, name, ty) in [(5u64, &b"."[..], 4u8), (9, b"file.txt", 8)] {
            let reclen = (18 + name.len() + 2).div_ceil(8) * 8;
            let start = b.len();
            b.extend_from_slice(&ino.to_le_bytes());
            b.extend_from_slice(&1u64.to_le_bytes());
            b.extend_from_slice(&(reclen as u16).to_le_bytes());
            b.extend_from_slice(name);
            b.resize(start + reclen - 1, 0);
            b.push(ty);
        }
        let d = parse_dirents(&b);
        assert_eq!(d.len(), 2);
        assert_eq!((d[1].ino, d[1].name.as_slice(), d[1].d_type), (9, &b"file.txt"[..], 8));
    }
}
