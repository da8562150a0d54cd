//! strace's classes of system calls (`%file`, `%desc`, `%network`, ...) and the one way a user
//! names a set of calls: `record --syscalls`, `dump --type`, `--where 'call in %file'`.
//!
//! The classes of each call are strace's own, generated from its x86_64 table
//! (`scripts/gen-strace-classes.py`, `generated/strace_classes.rs`): a call is in every class
//! whose bit strace gives it (`openat` is `%desc` and `%file`, `newfstatat` also `%fstat` and
//! `%%stat`). They are not [`crate::Class`], which says why a call is in the registry and
//! picks the capture sets (`storage`).

use std::fmt;
use std::sync::OnceLock;

use crate::{SyscallDef, REGISTRY};

mod generated {
    include!("generated/strace_classes.rs");
}

/// A set of strace's call classes (a bit each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CallClasses(pub u32);

impl CallClasses {
    /// The empty set: a call strace puts in no class (`close_range`, `ioctl`).
    pub const NONE: CallClasses = CallClasses(0);
    /// `%file`: calls that take a file name.
    pub const FILE: CallClasses = CallClasses(1 << 0);
    /// `%desc`: calls that take or return a file descriptor.
    pub const DESC: CallClasses = CallClasses(1 << 1);
    /// `%process`: process management.
    pub const PROCESS: CallClasses = CallClasses(1 << 2);
    /// `%memory`: memory mapping.
    pub const MEMORY: CallClasses = CallClasses(1 << 3);
    /// `%network` (`%net`).
    pub const NETWORK: CallClasses = CallClasses(1 << 4);
    /// `%signal`.
    pub const SIGNAL: CallClasses = CallClasses(1 << 5);
    /// `%ipc`.
    pub const IPC: CallClasses = CallClasses(1 << 6);
    /// `%creds`: user and group ids, capabilities.
    pub const CREDS: CallClasses = CallClasses(1 << 7);
    /// `%clock`: reading or changing clocks.
    pub const CLOCK: CallClasses = CallClasses(1 << 8);
    /// `%stat`: the `stat` variants.
    pub const STAT: CallClasses = CallClasses(1 << 9);
    /// `%lstat`.
    pub const LSTAT: CallClasses = CallClasses(1 << 10);
    /// `%fstat`.
    pub const FSTAT: CallClasses = CallClasses(1 << 11);
    /// `%%stat`: every call that gets a file's status.
    pub const STAT_LIKE: CallClasses = CallClasses(1 << 12);
    /// `%statfs`.
    pub const STATFS: CallClasses = CallClasses(1 << 13);
    /// `%fstatfs`.
    pub const FSTATFS: CallClasses = CallClasses(1 << 14);
    /// `%%statfs`: every call that gets a file system's status.
    pub const STATFS_LIKE: CallClasses = CallClasses(1 << 15);
    /// `%pure`: calls that always succeed and take no arguments (`getpid`).
    pub const PURE: CallClasses = CallClasses(1 << 16);

    /// Every class by its name, as strace spells them (`%net` is `%network`'s other name).
    pub const NAMES: &'static [(&'static str, CallClasses)] = &[
        ("%file", CallClasses::FILE),
        ("%desc", CallClasses::DESC),
        ("%process", CallClasses::PROCESS),
        ("%memory", CallClasses::MEMORY),
        ("%network", CallClasses::NETWORK),
        ("%net", CallClasses::NETWORK),
        ("%signal", CallClasses::SIGNAL),
        ("%ipc", CallClasses::IPC),
        ("%creds", CallClasses::CREDS),
        ("%clock", CallClasses::CLOCK),
        ("%stat", CallClasses::STAT),
        ("%lstat", CallClasses::LSTAT),
        ("%fstat", CallClasses::FSTAT),
        ("%%stat", CallClasses::STAT_LIKE),
        ("%statfs", CallClasses::STATFS),
        ("%fstatfs", CallClasses::FSTATFS),
        ("%%statfs", CallClasses::STATFS_LIKE),
        ("%pure", CallClasses::PURE),
    ];

    /// The class named `name` (`%file`; strace's names, case-insensitive as strace has them).
    pub fn by_name(name: &str) -> Option<CallClasses> {
        CallClasses::NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, c)| *c)
    }

    /// True when every class of `other` is in `self` (and `other` is not empty).
    pub fn contains(self, other: CallClasses) -> bool {
        other.0 != 0 && self.0 & other.0 == other.0
    }

    /// True for a call in no class ([`CallClasses::NONE`]), which `contains` nothing.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The names of the classes in the set, in [`CallClasses::NAMES`] order (one name each:
    /// `%network`, never `%net`).
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        CallClasses::NAMES
            .iter()
            .filter(|(n, _)| *n != "%net")
            .filter(move |(_, c)| self.contains(*c))
            .map(|(n, _)| *n)
    }
}

impl std::ops::BitOr for CallClasses {
    type Output = CallClasses;
    fn bitor(self, o: CallClasses) -> CallClasses {
        CallClasses(self.0 | o.0)
    }
}

/// The calls strace knows on x86_64, by name, with its classes of each.
fn strace_classes(name: &str) -> Option<CallClasses> {
    let e = generated::ENTRIES;
    e.binary_search_by(|(n, _)| (*n).cmp(name)).ok().map(|i| e[i].1)
}

/// True when `name` is a system call strace knows (on x86_64), whether or not the registry
/// has it.
pub fn is_known_syscall(name: &str) -> bool {
    strace_classes(name).is_some()
}

impl SyscallDef {
    /// strace's classes of this call. Re-Animator's page records of mappings
    /// (`mmappread`, `mmappwrite`, no syscall) are in `mmap`'s; a delivered signal
    /// (`signal_deliver`) is in `%signal` alone.
    pub fn classes(&'static self) -> CallClasses {
        static BY_ENTRY: OnceLock<Vec<CallClasses>> = OnceLock::new();
        let of = |d: &SyscallDef| {
            if d.is_signal() {
                CallClasses::SIGNAL
            } else {
                strace_classes(if d.is_pseudo() { "mmap" } else { d.name }).unwrap_or_default()
            }
        };
        let table = BY_ENTRY.get_or_init(|| REGISTRY.iter().map(of).collect());
        match REGISTRY.iter().position(|d| std::ptr::eq(d, self)) {
            Some(i) => table[i],
            // A copy of an entry, not the entry itself.
            None => of(self),
        }
    }
}

/// A set of registry calls named the way strace's `-e trace=` names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// In registry order, each once.
    pub defs: Vec<&'static SyscallDef>,
}

/// Why a selection does not parse: one token, what is wrong with it, and the nearest name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SelectError {
    /// Neither a call, an alias nor a class.
    Unknown {
        /// The token as given (after trimming and any leading `!`).
        token: String,
        /// The nearest name the registry knows (kernel, trace or alias name), if one is near.
        hint: Option<&'static str>,
    },
    /// A `%` word that is no class.
    UnknownClass {
        /// The token as given, with its `%`.
        token: String,
        /// The nearest class name ([`CallClasses::NAMES`]), if one is near.
        hint: Option<&'static str>,
    },
    /// A real system call the registry does not have: reanimator never records it.
    NotRecorded {
        /// The call's name as given.
        token: String,
    },
    /// No call at all (an empty list, or only commas).
    Empty,
}

impl fmt::Display for SelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hint =
            |h: &Option<&str>| h.map(|h| format!("; did you mean `{h}`?")).unwrap_or_default();
        match self {
            SelectError::Unknown { token, hint: h } => {
                write!(f, "`{token}` is no system call reanimator knows{}", hint(h))
            }
            SelectError::UnknownClass { token, hint: h } => {
                let names: Vec<&str> = CallClasses::NAMES.iter().map(|(n, _)| *n).collect();
                write!(f, "`{token}` is no call class{} (classes: {})", hint(h), names.join(" "))
            }
            SelectError::NotRecorded { token } => {
                write!(f, "`{token}` is a system call reanimator does not record")
            }
            SelectError::Empty => write!(f, "no system call named"),
        }
    }
}

impl std::error::Error for SelectError {}

/// The registry call named `token` (any name [`crate::lookup_any`] accepts).
pub fn call_named(token: &str) -> Result<&'static SyscallDef, SelectError> {
    if let Some(d) = crate::lookup_any(token) {
        return Ok(d);
    }
    if token.starts_with('%') {
        return Err(SelectError::UnknownClass {
            token: token.into(),
            hint: suggest(token, CallClasses::NAMES.iter().map(|(n, _)| *n)),
        });
    }
    if is_known_syscall(token) {
        return Err(SelectError::NotRecorded { token: token.into() });
    }
    Err(SelectError::Unknown { token: token.into(), hint: suggest(token, crate::all_names()) })
}

/// The registry calls a class name (`%file`) stands for.
pub fn class_members(token: &str) -> Result<Vec<&'static SyscallDef>, SelectError> {
    let c = CallClasses::by_name(token).ok_or_else(|| SelectError::UnknownClass {
        token: token.into(),
        hint: suggest(token, CallClasses::NAMES.iter().map(|(n, _)| *n)),
    })?;
    Ok(REGISTRY.iter().filter(|d| d.classes().contains(c)).collect())
}

impl Selection {
    /// strace's syntax: a comma-separated list of call names (kernel names, trace names,
    /// aliases: `pwrite64`, `pwrite`, `fstatat64`) and classes (`%file`, `%desc`, ...); each
    /// leading `!` inverts what follows (`!%file`: every call but those). `all` alone is every
    /// call. A token that names nothing is an error, never an empty set.
    pub fn parse(spec: &str) -> Result<Selection, SelectError> {
        let mut s = spec.trim();
        let mut invert = false;
        while let Some(rest) = s.strip_prefix('!') {
            invert = !invert;
            s = rest.trim_start();
        }
        let mut chosen = vec![false; REGISTRY.len()];
        if s == "all" {
            chosen.iter_mut().for_each(|c| *c = true);
        } else {
            let mut any = false;
            for token in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                any = true;
                let defs = if token.starts_with('%') {
                    class_members(token)?
                } else {
                    vec![call_named(token)?]
                };
                for d in defs {
                    if let Some(i) = REGISTRY.iter().position(|r| std::ptr::eq(r, d)) {
                        chosen[i] = true;
                    }
                }
            }
            if !any {
                return Err(SelectError::Empty);
            }
        }
        let defs = REGISTRY.iter().zip(&chosen).filter(|(_, c)| **c != invert).map(|(d, _)| d);
        Ok(Selection { defs: defs.collect() })
    }

    /// True when `def` is one of the selected calls (compared by kernel name, so a copy of a
    /// registry entry counts too).
    pub fn contains(&self, def: &SyscallDef) -> bool {
        self.defs.iter().any(|d| d.name == def.name)
    }

    /// The trace names of the calls (what `Event::name` holds).
    pub fn trace_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.defs.iter().map(|d| d.trace_name)
    }
}

/// The known name closest to `unknown` ([`ra_filter::suggest`]'s rules).
fn suggest<'a>(unknown: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    ra_filter::suggest(unknown, known)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup;

    fn classes(name: &str) -> CallClasses {
        lookup(name).unwrap().classes()
    }

    /// strace's own assignments, spot-checked against its table: `openat` takes a name and
    /// returns a descriptor, `close_range` is in no class, `newfstatat` is a stat call.
    #[test]
    fn classes_are_strace_s() {
        assert_eq!(classes("openat"), CallClasses::DESC | CallClasses::FILE);
        assert_eq!(classes("read"), CallClasses::DESC);
        assert!(classes("close_range").is_empty());
        assert!(classes("newfstatat").contains(CallClasses::FSTAT | CallClasses::STAT_LIKE));
        assert!(classes("kill").contains(CallClasses::SIGNAL | CallClasses::PROCESS));
        assert_eq!(classes("mmappread"), classes("mmap"));
        assert_eq!(
            classes("newfstatat").names().collect::<Vec<_>>(),
            ["%file", "%desc", "%fstat", "%%stat"]
        );
    }

    /// Every registry call that is a real system call is one strace knows (so it has its
    /// classes), under its kernel name.
    #[test]
    fn every_registry_call_is_in_strace_s_table() {
        for d in REGISTRY.iter().filter(|d| !d.is_pseudo()) {
            assert!(is_known_syscall(d.name), "{} is not in strace's x86_64 table", d.name);
        }
        for (alias, name) in crate::defs::ALIASES {
            assert!(lookup(name).is_some(), "alias {alias} names {name}, not in the registry");
            assert!(lookup(alias).is_none(), "alias {alias} is a registry name");
        }
    }

    #[test]
    fn selections() {
        let names =
            |s: &str| Selection::parse(s).unwrap().defs.iter().map(|d| d.name).collect::<Vec<_>>();
        assert_eq!(names("pwrite64,pwrite,_llseek"), ["pwrite64", "lseek"]);
        let file = names("%file");
        assert!(file.contains(&"openat") && file.contains(&"unlink"), "{file:?}");
        assert!(!file.contains(&"read"));
        let not_file = names("!%file");
        assert!(not_file.contains(&"read") && !not_file.contains(&"openat"));
        assert_eq!(file.len() + not_file.len(), REGISTRY.len());
        assert_eq!(names("%NET"), names("%network"));
        assert_eq!(names("all").len(), REGISTRY.len());
        let e = |s: &str| Selection::parse(s).unwrap_err().to_string();
        assert_eq!(
            e("%fiel"),
            format!(
                "`%fiel` is no call class; did you mean `%file`? (classes: {})",
                CallClasses::NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" ")
            )
        );
        assert_eq!(
            e("opnat"),
            "`opnat` is no system call reanimator knows; did you mean `openat`?"
        );
        assert_eq!(e("sched_yield"), "`sched_yield` is a system call reanimator does not record");
        assert_eq!(e(" , "), "no system call named");
    }
}
