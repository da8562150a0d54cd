//! Pseudonyms: keyed, deterministic, collision-checked replacements for names, strings and
//! ids, and the tables that reverse them.

use std::collections::{HashMap, HashSet};

use super::time::{TimeShift, TIME_SPAN};
use super::Field;

/// Base32 alphabet (RFC 4648, lower case): printable, no `/`, `.` or NUL.
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Characters of a pseudonym (60 bits); more only to resolve a collision.
pub const PSEUDONYM_CHARS: usize = 12;

/// A component longer than this (`NAME_MAX`) keeps its length, so that a call that failed
/// with `ENAMETOOLONG` still fails in a replay.
const NAME_MAX: usize = 255;

/// The longest extension kept by `--keep-extensions` (after the dot).
const MAX_EXTENSION: usize = 8;

/// Lowest value an id is mapped to (user and group ids).
const ID_BASE: i64 = 1 << 20;
/// Ids are mapped into `ID_BASE .. ID_BASE + ID_SPAN` (positive `i32`s).
const ID_SPAN: u64 = 1 << 30;
/// Process ids are mapped into `PID_BASE .. PID_MAX` (Linux's `RESERVED_PIDS` up to the
/// default 64-bit `pid_max`), so they look like pids.
const PID_BASE: i64 = 300;
const PID_MAX: i64 = 1 << 22;

/// Fresh tries at a name's own length before an extended attribute's pseudonym is made
/// longer ([`Pseudonymizer::xattr_name`]): it is lengthened only when this many keyed
/// candidates in a row are taken, which, short of a length whose 32^len pseudonyms are
/// nearly all in use, does not happen.
const XATTR_TRIES: u64 = 64;

/// Salts of extended attribute names' pseudonyms: apart from path components' (salts from 0),
/// so that an attribute and a file of one name get unrelated pseudonyms.
const XATTR_SALT: u64 = 1 << 63;

/// One field's table of strings: original → pseudonym and the pseudonyms taken.
#[derive(Default)]
pub struct StringTable {
    forward: HashMap<Vec<u8>, Vec<u8>>,
    /// Extended attribute names (after their namespace) → their length-keeping pseudonyms
    /// ([`Pseudonymizer::xattr_name`]; `path` only).
    xattr: HashMap<Vec<u8>, Vec<u8>>,
    /// Every pseudonym given, of either kind → its original: one pseudonym never stands for
    /// two values, so the reverse table is one map.
    taken: HashMap<Vec<u8>, Vec<u8>>,
    /// How many times a value was replaced (every occurrence).
    pub replaced: u64,
    /// Pseudonyms that had to be longer than [`PSEUDONYM_CHARS`] (an attribute name's: other
    /// than its first candidate) to stay distinct.
    pub collisions: u64,
    /// Extended attribute names whose pseudonym is longer than the name: every keyed
    /// candidate of the name's length was taken.
    pub xattr_lengthened: u64,
}

impl StringTable {
    /// (pseudonym, original) pairs, for the reverse table.
    pub fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.taken.iter().map(|(p, o)| (p.as_slice(), o.as_slice()))
    }
    /// Distinct values replaced (a value that names a file and an attribute counts once).
    pub fn distinct(&self) -> usize {
        self.forward.len() + self.xattr.keys().filter(|v| !self.forward.contains_key(*v)).count()
    }
    /// Whether `p` is free to stand for `value`.
    fn free(&self, p: &[u8], value: &[u8]) -> bool {
        self.taken.get(p).is_none_or(|o| o == value)
    }
}

/// One field's table of ids.
#[derive(Default)]
pub struct IdTable {
    forward: HashMap<i64, i64>,
    taken: HashSet<i64>,
    /// How many times a value was replaced (every occurrence, while counting).
    pub replaced: u64,
    /// Keyed candidates rejected because another value already had them (each retried with
    /// the next salt).
    pub collisions: u64,
}

impl IdTable {
    /// (pseudonym, original) pairs, for the reverse table.
    pub fn pairs(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.forward.iter().map(|(&o, &p)| (p, o))
    }
    /// Distinct values replaced (ids that stay, such as 0 and -1, are not in the table).
    pub fn distinct(&self) -> usize {
        self.forward.len()
    }
}

/// Makes pseudonyms under one key, one independent key per field (so that equal values of
/// two fields, uid 1000 and gid 1000, do not give equal pseudonyms: Tracefs' rule).
pub struct Pseudonymizer {
    keys: HashMap<Field, [u8; 32]>,
    keep_extensions: bool,
    keep_names: HashSet<Vec<u8>>,
    strings: HashMap<Field, StringTable>,
    ids: HashMap<Field, IdTable>,
    /// Replacements count in the tables' `replaced` (off during look-ahead passes).
    pub counting: bool,
    /// Characters of a fresh pseudonym ([`PSEUDONYM_CHARS`]; tests force collisions with
    /// fewer).
    chars: usize,
    /// The shift of times ([`super::time`]); without it times stay.
    pub time: Option<TimeShift>,
    /// Times shifted (the trace's clock and file times at or after its start).
    pub times_shifted: u64,
}

impl Pseudonymizer {
    /// `pseudonym_key` is the key file's [`ra_trace::key::Purpose::Pseudonym`] key.
    pub fn new(
        pseudonym_key: &[u8; 32],
        keep_extensions: bool,
        keep_names: impl IntoIterator<Item = Vec<u8>>,
    ) -> Self {
        let keys = Field::ALL
            .iter()
            .map(|&f| {
                let ctx = format!("reanimator 2026-11 anonymize field {}", f.name());
                (f, blake3::derive_key(&ctx, pseudonym_key))
            })
            .collect();
        Pseudonymizer {
            keys,
            keep_extensions,
            keep_names: keep_names.into_iter().collect(),
            strings: HashMap::new(),
            ids: HashMap::new(),
            counting: true,
            chars: PSEUDONYM_CHARS,
            time: None,
            times_shifted: 0,
        }
    }

    /// Fresh pseudonyms of `chars` characters (at least 1) instead of [`PSEUDONYM_CHARS`].
    pub fn with_chars(mut self, chars: usize) -> Self {
        self.chars = chars.max(1);
        self
    }

    /// The table of a string field (empty when nothing was replaced).
    pub fn strings(&self, f: Field) -> Option<&StringTable> {
        self.strings.get(&f)
    }

    /// The table of an id field.
    pub fn ids(&self, f: Field) -> Option<&IdTable> {
        self.ids.get(&f)
    }

    fn xof(&self, f: Field, value: &[u8], salt: u64, out: &mut [u8]) {
        let mut h = blake3::Hasher::new_keyed(&self.keys[&f]);
        h.update(&salt.to_le_bytes());
        h.update(value);
        h.finalize_xof().fill(out);
    }

    /// Whether a path component is kept as it is.
    pub fn keeps_name(&self, c: &[u8]) -> bool {
        self.keep_names.contains(c)
    }

    /// The pseudonym of one path component (never `.`, `..`, empty, a kept name, or
    /// containing `/` or NUL), or of a string of field `f`.
    pub fn string(&mut self, f: Field, value: &[u8]) -> Vec<u8> {
        if f == Field::Path && (self.keeps_name(value) || matches!(value, b"" | b"." | b"..")) {
            return value.to_vec();
        }
        let table = self.strings.entry(f).or_default();
        table.replaced += u64::from(self.counting);
        if let Some(p) = table.forward.get(value) {
            return p.clone();
        }
        let ext: &[u8] =
            if f == Field::Path && self.keep_extensions { extension(value) } else { b"" };
        let min_len = if value.len() > NAME_MAX { value.len() - ext.len() } else { 0 };
        let mut raw = [0u8; 64];
        self.xof(f, value, 0, &mut raw);
        let table = self.strings.get_mut(&f).expect("inserted above");
        let mut len = self.chars.max(min_len);
        let mut salt = 0u64;
        let p = loop {
            let mut p: Vec<u8> = if len <= raw.len() {
                raw[..len].iter().map(|b| ALPHABET[usize::from(b & 31)]).collect()
            } else {
                let mut long = vec![0u8; len];
                let mut h = blake3::Hasher::new_keyed(&self.keys[&f]);
                h.update(&salt.to_le_bytes());
                h.update(value);
                h.finalize_xof().fill(&mut long);
                long.iter().map(|b| ALPHABET[usize::from(b & 31)]).collect()
            };
            p.extend_from_slice(ext);
            if table.free(&p, value) && !self.keep_names.contains(&p) {
                break p;
            }
            // Two values, one pseudonym: never merge them; a longer one for the newcomer.
            table.collisions += 1;
            len += 1;
            if len > raw.len() && len > min_len + 64 {
                salt += 1;
                len = self.chars.max(min_len);
                let mut h = blake3::Hasher::new_keyed(&self.keys[&f]);
                h.update(&salt.to_le_bytes());
                h.update(value);
                h.finalize_xof().fill(&mut raw);
            }
        };
        table.taken.insert(p.clone(), value.to_vec());
        table.forward.insert(value.to_vec(), p.clone());
        p
    }

    /// The pseudonym of an extended attribute's name after its namespace (`checksum` of
    /// `user.checksum`): as long as the name, so that every size the kernel reports for a
    /// list of names (`listxattr`'s, a size query's, an `ERANGE`) is the same for the
    /// pseudonyms; with `--keep-extensions`, the extension kept and the stem replaced. Its
    /// own keyed candidates (other salts than path components'), checked against every
    /// pseudonym of `path` (a reverse table maps each to one original), against kept names
    /// and against the names the kernel interprets (`security.ima` must not appear from a
    /// `security.<three letters>`). When `XATTR_TRIES` (64) candidates of its length are all
    /// taken, the name gets a longer one (counted in `xattr_lengthened`).
    pub fn xattr_name(&mut self, value: &[u8]) -> Vec<u8> {
        if value.is_empty() || self.keeps_name(value) {
            return value.to_vec();
        }
        let table = self.strings.entry(Field::Path).or_default();
        table.replaced += u64::from(self.counting);
        if let Some(p) = table.xattr.get(value) {
            return p.clone();
        }
        let ext: &[u8] = if self.keep_extensions { extension(value) } else { b"" };
        let stem = value.len() - ext.len();
        let mut len = stem;
        let mut tries = 0u64;
        let mut retried = false;
        let p = loop {
            let salt = XATTR_SALT | ((len as u64) << 16) | tries;
            let mut raw = vec![0u8; len];
            self.xof(Field::Path, value, salt, &mut raw);
            let mut p: Vec<u8> = raw.iter().map(|b| ALPHABET[usize::from(b & 31)]).collect();
            p.extend_from_slice(ext);
            let table = &self.strings[&Field::Path];
            if table.free(&p, value)
                && !self.keep_names.contains(&p)
                && !super::xattr::is_kernel_rest(&p)
            {
                break p;
            }
            retried = true;
            tries += 1;
            if tries == XATTR_TRIES {
                tries = 0;
                len += 1;
            }
        };
        let table = self.strings.get_mut(&Field::Path).expect("inserted above");
        table.collisions += u64::from(retried);
        table.xattr_lengthened += u64::from(len > stem);
        table.taken.insert(p.clone(), value.to_vec());
        table.xattr.insert(value.to_vec(), p.clone());
        p
    }

    /// An instant of the trace's clock, shifted.
    pub fn clock(&mut self, ns: i64) -> i64 {
        let Some(t) = self.time else { return ns };
        self.times_shifted += u64::from(self.counting);
        t.clock(ns, true)
    }

    /// The seconds of a file time: shifted when not before the trace's start, else their
    /// pseudonym (before the origin).
    pub fn file_secs(&mut self, s: i64) -> i64 {
        let Some(t) = self.time else { return s };
        match t.shifted_secs(s) {
            Some(n) => {
                self.times_shifted += u64::from(self.counting);
                n
            }
            None => self.id(Field::Time, s),
        }
    }

    /// The pseudonym of an id. User and group ids keep 0 (root) and -1 (no change, as
    /// `chown` takes it, in either width); process ids keep 0, 1 and -1 and map a negative
    /// value (a process group) to the negated pseudonym of its absolute value. A file
    /// time's seconds (before the trace's start) go into the [`TIME_SPAN`] seconds before
    /// the time origin, an IPv4 address (`hostname`) into 10.0.0.0/8.
    pub fn id(&mut self, f: Field, v: i64) -> i64 {
        let (base, span) = match f {
            Field::Time => {
                let origin = self.time.map_or(0, |t| t.origin_s);
                (origin.saturating_sub(TIME_SPAN), TIME_SPAN as u64)
            }
            // IPv4 addresses (as integers) into 10.0.0.0/8.
            Field::Hostname => (10 << 24, 1 << 24),
            Field::Pid => {
                if matches!(v, -1..=1) || v == i64::MIN {
                    return v;
                }
                if v < 0 {
                    return -self.id(f, -v);
                }
                (PID_BASE, (PID_MAX - PID_BASE) as u64)
            }
            _ => {
                if v == 0 || v == -1 || v == i64::from(u32::MAX) {
                    return v;
                }
                (ID_BASE, ID_SPAN)
            }
        };
        let table = self.ids.entry(f).or_default();
        table.replaced += u64::from(self.counting);
        if let Some(&p) = table.forward.get(&v) {
            return p;
        }
        let mut salt = 0u64;
        let p = loop {
            let mut raw = [0u8; 8];
            let mut h = blake3::Hasher::new_keyed(&self.keys[&f]);
            h.update(&salt.to_le_bytes());
            h.update(&v.to_le_bytes());
            h.finalize_xof().fill(&mut raw);
            let p = base + (u64::from_le_bytes(raw) % span) as i64;
            let table = self.ids.get_mut(&f).expect("inserted above");
            if !table.taken.contains(&p) {
                break p;
            }
            table.collisions += 1;
            salt += 1;
        };
        let table = self.ids.get_mut(&f).expect("inserted above");
        table.taken.insert(p);
        table.forward.insert(v, p);
        p
    }
}

/// The extension `--keep-extensions` keeps: the last `.` and up to 8 ASCII letters or digits
/// after it, when something comes before the dot (`.bashrc` has none, `a.tar.gz` has `.gz`).
pub fn extension(name: &[u8]) -> &[u8] {
    match name.iter().rposition(|&b| b == b'.') {
        Some(i)
            if i > 0
                && name.len() - i - 1 <= MAX_EXTENSION
                && name.len() - i > 1
                && name[i + 1..].iter().all(u8::is_ascii_alphanumeric) =>
        {
            &name[i..]
        }
        _ => b"",
    }
}

/// Reverses pseudonyms with the tables a reversible anonymization stored.
pub struct Reverser {
    /// Per string field: pseudonym → original (path components and extended attribute
    /// names share `path`'s map).
    pub strings: HashMap<Field, HashMap<Vec<u8>, Vec<u8>>>,
    /// Per id field: pseudonym → original (file times' replaced seconds under
    /// [`Field::Time`]).
    pub ids: HashMap<Field, HashMap<i64, i64>>,
    /// Per field: how many values were put back (while counting), for the [`super::Summary`].
    pub replaced: HashMap<Field, u64>,
    /// Whether replacements count in `replaced` (off during look-ahead passes; on by default).
    pub counting: bool,
    /// The shift of times, when they were anonymized reversibly.
    pub time: Option<TimeShift>,
}

impl Default for Reverser {
    fn default() -> Self {
        Reverser {
            strings: HashMap::new(),
            ids: HashMap::new(),
            replaced: HashMap::new(),
            counting: true,
            time: None,
        }
    }
}

impl Reverser {
    /// The original of pseudonym `p` of field `f`; a value the table does not hold (never
    /// replaced, or kept) comes back unchanged.
    pub fn string(&mut self, f: Field, p: &[u8]) -> Vec<u8> {
        match self.strings.get(&f).and_then(|t| t.get(p)) {
            Some(o) => {
                *self.replaced.entry(f).or_default() += u64::from(self.counting);
                o.clone()
            }
            None => p.to_vec(),
        }
    }
    /// The original of id pseudonym `p`; unknown values come back unchanged. A negative pid
    /// below -1 (a process group) is reversed as the negation of its absolute value, as
    /// [`Pseudonymizer::id`] made it.
    pub fn id(&mut self, f: Field, p: i64) -> i64 {
        if f == Field::Pid && p < -1 && p != i64::MIN {
            return -self.id(f, -p);
        }
        match self.ids.get(&f).and_then(|t| t.get(&p)) {
            Some(&o) => {
                *self.replaced.entry(f).or_default() += u64::from(self.counting);
                o
            }
            None => p,
        }
    }
}
