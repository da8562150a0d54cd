//! How much of each data buffer a recorder keeps, per direction: `record --data`,
//! `fs mount --data`, `fs ctl MNT data`, and the trace facts that say it (`data_mode`,
//! `data_mode_write`, `data_mode_read`; docs/TRACE_FORMAT.md).

/// How much of one buffer to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataLevel {
    /// Every byte of every buffer.
    Full,
    /// Data buffers as their length and BLAKE3 digest; paths, structs and argv in full.
    Hash,
    /// Metadata only: data buffers are not read at all (recorded as not captured; lengths stay
    /// in the counts and return values); paths, structs and argv are kept.
    None,
}

impl DataLevel {
    /// `full`, `hash`, `none`.
    pub fn name(self) -> &'static str {
        match self {
            DataLevel::Full => "full",
            DataLevel::Hash => "hash",
            DataLevel::None => "none",
        }
    }

    /// The level named `s` ([`DataLevel::name`]).
    pub fn from_name(s: &str) -> Option<DataLevel> {
        match s {
            "full" => Some(DataLevel::Full),
            "hash" => Some(DataLevel::Hash),
            "none" => Some(DataLevel::None),
            _ => None,
        }
    }
}

/// How much of each data buffer to keep, per direction: data the caller writes (input
/// buffers: `write`'s, `pwritev`'s vectors, `sendmsg`'s, io_uring writes at submission,
/// kernel-side copies, mmap pages written) and data read into the caller (output buffers:
/// `read`'s, `recvmsg`'s, io_uring reads at completion, mmap pages read). Which one a buffer
/// is comes from its registry argument kind ([`ra_syscalls::ArgKind::is_output`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataMode {
    /// What is kept of data the caller writes (input buffers); the `data_mode_write` fact.
    pub write: DataLevel,
    /// What is kept of data read into the caller (output buffers); the `data_mode_read` fact.
    pub read: DataLevel,
}

impl DataMode {
    /// Every byte both ways (`--data full`, the default).
    pub const FULL: DataMode = DataMode::both(DataLevel::Full);
    /// Digests both ways (`--data hash`).
    pub const HASH: DataMode = DataMode::both(DataLevel::Hash);
    /// No data both ways (`--data none`).
    pub const NONE: DataMode = DataMode::both(DataLevel::None);

    /// The same level both ways.
    pub const fn both(l: DataLevel) -> DataMode {
        DataMode { write: l, read: l }
    }

    /// The level both directions share, if they do.
    pub fn uniform(self) -> Option<DataLevel> {
        (self.write == self.read).then_some(self.write)
    }

    /// The level of a buffer of kind `k` (read when the kernel fills it).
    pub fn of(self, k: ra_syscalls::ArgKind) -> DataLevel {
        if k.is_output() {
            self.read
        } else {
            self.write
        }
    }

    /// `full`/`hash`/`none` when both directions agree, else `write=LEVEL,read=LEVEL`
    /// (what [`DataMode::from_name`] reads back, and the trace's `data_mode` fact).
    pub fn name(self) -> String {
        match self.uniform() {
            Some(l) => l.name().to_string(),
            None => format!("write={},read={}", self.write.name(), self.read.name()),
        }
    }

    /// `full|hash|none` (both directions), or `write=LEVEL,read=LEVEL` with either part
    /// omitted (the omitted direction is `full`, the default); an error says what is wrong.
    pub fn parse(s: &str) -> std::result::Result<DataMode, String> {
        const LEVELS: &str = "full, hash or none";
        if let Some(l) = DataLevel::from_name(s) {
            return Ok(DataMode::both(l));
        }
        let (mut write, mut read) = (None, None);
        for part in s.split(',') {
            let Some((dir, level)) = part.split_once('=') else {
                return Err(format!(
                    "`{part}` is neither a level ({LEVELS}) nor DIRECTION=LEVEL \
                     (e.g. write=full,read=hash)"
                ));
            };
            let slot = match dir.trim() {
                "write" => &mut write,
                "read" => &mut read,
                d => return Err(format!("unknown direction `{d}` (write or read)")),
            };
            if slot.is_some() {
                return Err(format!("`{}` given twice", dir.trim()));
            }
            let level = level.trim();
            *slot = Some(DataLevel::from_name(level).ok_or_else(|| {
                format!("unknown data level `{level}` for {} ({LEVELS})", dir.trim())
            })?);
        }
        Ok(DataMode {
            write: write.unwrap_or(DataLevel::Full),
            read: read.unwrap_or(DataLevel::Full),
        })
    }

    /// The trace facts that say this mode: `data_mode` (the level, or when the directions
    /// differ the one that keeps less, so that readers knowing only `data_mode` assume no
    /// more than was captured), and `data_mode_write` / `data_mode_read` when they differ.
    pub fn facts(self) -> Vec<(&'static str, String)> {
        let rank = |l: DataLevel| match l {
            DataLevel::None => 0,
            DataLevel::Hash => 1,
            DataLevel::Full => 2,
        };
        let least = if rank(self.read) < rank(self.write) { self.read } else { self.write };
        let mut v = vec![("data_mode", least.name().to_string())];
        if self.uniform().is_none() {
            v.push(("data_mode_write", self.write.name().to_string()));
            v.push(("data_mode_read", self.read.name().to_string()));
        }
        v
    }

    /// A compact form, for an atomic: [`DataMode::from_u8`] reads it back.
    pub fn to_u8(self) -> u8 {
        let l = |l: DataLevel| l as u8;
        l(self.write) * 3 + l(self.read)
    }

    /// The mode [`DataMode::to_u8`] gave (an out-of-range value: `none` both ways).
    pub fn from_u8(v: u8) -> DataMode {
        let l = |v: u8| match v {
            0 => DataLevel::Full,
            1 => DataLevel::Hash,
            _ => DataLevel::None,
        };
        if v >= 9 {
            return DataMode::NONE;
        }
        DataMode { write: l(v / 3), read: l(v % 3) }
    }

    /// [`DataMode::parse`], without the reason.
    pub fn from_name(s: &str) -> Option<DataMode> {
        DataMode::parse(s).ok()
    }

    /// The mode a trace's facts give: `data_mode` (a level, or `write=..,read=..`), or the
    /// two facts `data_mode_write` and `data_mode_read` when present (they win).
    pub fn from_facts(
        data_mode: Option<&str>,
        write: Option<&str>,
        read: Option<&str>,
    ) -> Option<DataMode> {
        let base = data_mode.and_then(DataMode::from_name);
        let w = write.and_then(DataLevel::from_name).or(base.map(|b| b.write))?;
        let r = read.and_then(DataLevel::from_name).or(base.map(|b| b.read))?;
        Some(DataMode { write: w, read: r })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_modes_parse_per_direction() {
        use DataLevel::{Full, Hash};
        assert_eq!(DataMode::parse("hash"), Ok(DataMode::HASH));
        let m = DataMode::parse("write=full,read=hash").unwrap();
        assert_eq!((m.write, m.read), (Full, Hash));
        assert_eq!(m.name(), "write=full,read=hash");
        assert_eq!(DataMode::from_name(&m.name()), Some(m));
        assert_eq!(
            DataMode::parse("read=none").unwrap(),
            DataMode { write: Full, read: DataLevel::None }
        );
        assert_eq!(DataMode::parse("write=hash,read=hash").unwrap().name(), "hash");
        for bad in ["write=ful", "read=full,read=hash", "sideways=full", "", "write", "fulll"] {
            let e = DataMode::parse(bad).unwrap_err();
            assert!(!e.is_empty() && !e.contains('\n'), "{bad}: {e}");
        }
        assert!(DataMode::parse("read=full,read=hash").unwrap_err().contains("twice"));
        assert!(DataMode::parse("sideways=full").unwrap_err().contains("direction"));
        assert!(DataMode::parse("write=ful").unwrap_err().contains("`ful`"));
        let f = DataMode::from_facts(Some("hash"), Some("full"), None).unwrap();
        assert_eq!((f.write, f.read), (Full, Hash));
        assert_eq!(DataMode::from_facts(Some("none"), None, None), Some(DataMode::NONE));
        assert_eq!(DataMode::from_facts(None, None, None), None);
        // Facts round-trip; `data_mode` alone says the least kept.
        for m in [DataMode::FULL, DataMode::parse("write=full,read=hash").unwrap()] {
            let f = m.facts();
            let get = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
            assert_eq!(
                DataMode::from_facts(
                    get("data_mode"),
                    get("data_mode_write"),
                    get("data_mode_read")
                ),
                Some(m)
            );
        }
        assert_eq!(DataMode::parse("write=full,read=hash").unwrap().facts()[0].1, "hash");
        for w in [Full, Hash, DataLevel::None] {
            for r in [Full, Hash, DataLevel::None] {
                let m = DataMode { write: w, read: r };
                assert_eq!(DataMode::from_u8(m.to_u8()), m);
            }
        }
    }
}
