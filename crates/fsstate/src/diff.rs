//! [`diff`]: the differences between two trees, as a merge of two sorted entry streams.
//!
//! Memory is bounded whatever the tree sizes: one pending entry per side. Both inputs must be
//! in path order ([`crate::path_cmp`]); a scan, a manifest and a trace's snapshot all are, and
//! an input that is not is an error ([`Error::Unsorted`]), never a wrong answer.

use std::cmp::Ordering;
use std::fmt;

use crate::entry::{path_cmp, Entry, Kind};
use crate::error::{Error, Result};
use crate::scan::PathPredicate;

/// An attribute that differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Attr {
    /// File, directory, symlink, ...: when the kinds differ nothing else is compared.
    Kind,
    /// The permission bits ([`Entry::mode`]); not compared for symlinks, whose modes mean
    /// nothing.
    Mode,
    /// The owner's user id.
    Uid,
    /// The group id.
    Gid,
    /// Files: the content length; symlinks: the target's length.
    Size,
    /// Regular files: the content digest.
    Content,
    /// Symlinks: the target.
    Target,
    /// Devices: the device number.
    Rdev,
    /// The extended attributes (any name or value).
    Xattrs,
    /// The hard-link group ([`Entry::link`]).
    Link,
    /// Only with [`DiffOptions::times`].
    Mtime,
}

impl Attr {
    /// The name diff output and JSON use (`kind`, `content`, `mtime`): the variant in lower
    /// case.
    pub fn name(self) -> &'static str {
        match self {
            Attr::Kind => "kind",
            Attr::Mode => "mode",
            Attr::Uid => "uid",
            Attr::Gid => "gid",
            Attr::Size => "size",
            Attr::Content => "content",
            Attr::Target => "target",
            Attr::Rdev => "rdev",
            Attr::Xattrs => "xattrs",
            Attr::Link => "link",
            Attr::Mtime => "mtime",
        }
    }
}

impl fmt::Display for Attr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One difference between tree A and tree B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// In B only.
    Added(Entry),
    /// In A only.
    Removed(Entry),
    /// In both, with these attributes different (in [`Attr`] order).
    Changed {
        /// The entry as tree A has it.
        a: Entry,
        /// The entry as tree B has it (same path).
        b: Entry,
        /// What differs; never empty (equal entries are no difference).
        attrs: Vec<Attr>,
    },
}

impl Difference {
    /// The path of the entry the difference is about (relative to each tree's root).
    pub fn path(&self) -> &[u8] {
        match self {
            Difference::Added(e) | Difference::Removed(e) => &e.path,
            Difference::Changed { a, .. } => &a.path,
        }
    }
}

/// What to compare.
#[derive(Clone, Default)]
pub struct DiffOptions {
    /// Compare modification times too.
    pub times: bool,
    /// Leave regular files' contents (their digests) out; sizes are still compared.
    pub skip_contents: bool,
    /// Leave out entries whose path, or the path of one of their ancestors, matches.
    pub ignore: Option<PathPredicate>,
}

impl fmt::Debug for DiffOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiffOptions")
            .field("times", &self.times)
            .field("skip_contents", &self.skip_contents)
            .field("ignore", &self.ignore.is_some())
            .finish()
    }
}

/// True when `path` or one of its ancestors (not the root) matches `pred`.
pub fn ignored(pred: &PathPredicate, path: &[u8]) -> bool {
    if path.is_empty() {
        return false;
    }
    path.iter().enumerate().filter(|&(_, &b)| b == b'/').any(|(i, _)| pred(&path[..i]))
        || pred(path)
}

/// The attributes in which `a` and `b` (same path) differ.
pub fn changed_attrs(a: &Entry, b: &Entry, opts: &DiffOptions) -> Vec<Attr> {
    if a.kind != b.kind {
        return vec![Attr::Kind];
    }
    let mut v = Vec::new();
    let mut check = |differs: bool, attr: Attr| {
        if differs {
            v.push(attr);
        }
    };
    check(a.mode != b.mode && a.kind != Kind::Symlink, Attr::Mode);
    check(a.uid != b.uid, Attr::Uid);
    check(a.gid != b.gid, Attr::Gid);
    check(a.size != b.size, Attr::Size);
    check(!opts.skip_contents && a.digest != b.digest, Attr::Content);
    check(a.target != b.target, Attr::Target);
    check(a.rdev != b.rdev, Attr::Rdev);
    check(a.xattrs != b.xattrs, Attr::Xattrs);
    check(a.link != b.link, Attr::Link);
    check(opts.times && a.mtime_ns != b.mtime_ns, Attr::Mtime);
    v
}

/// Counts of a diff so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffStats {
    /// Entries read from A (ignored ones not counted).
    pub a_entries: u64,
    /// Entries read from B (ignored ones not counted).
    pub b_entries: u64,
    /// [`Difference::Added`]s given: entries only B has.
    pub added: u64,
    /// [`Difference::Removed`]s given: entries only A has.
    pub removed: u64,
    /// [`Difference::Changed`]s given.
    pub changed: u64,
    /// Entries left out by [`DiffOptions::ignore`] (both sides).
    pub ignored: u64,
}

impl DiffStats {
    /// No difference (so far).
    pub fn equal(&self) -> bool {
        self.added == 0 && self.removed == 0 && self.changed == 0
    }
}

struct Side<I> {
    it: I,
    name: char,
    peeked: Option<Entry>,
    prev: Option<Vec<u8>>,
    done: bool,
}

impl<I: Iterator<Item = Result<Entry>>> Side<I> {
    /// Make `peeked` hold the next entry that is not ignored (unless the input is done).
    fn fill(&mut self, opts: &DiffOptions, count: &mut u64, ignored_n: &mut u64) -> Result<()> {
        while self.peeked.is_none() && !self.done {
            let Some(e) = self.it.next() else {
                self.done = true;
                break;
            };
            let e = e?;
            if let Some(p) = &self.prev {
                if path_cmp(p, &e.path) != Ordering::Less {
                    return Err(Error::Unsorted {
                        side: self.name,
                        path: e.path,
                        previous: p.clone(),
                    });
                }
            }
            self.prev = Some(e.path.clone());
            if opts.ignore.as_ref().is_some_and(|p| ignored(p, &e.path)) {
                *ignored_n += 1;
                continue;
            }
            *count += 1;
            self.peeked = Some(e);
        }
        Ok(())
    }
}

/// The differences between A and B, in path order; an iterator. After an error it ends.
pub struct Diff<A, B> {
    a: Side<A>,
    b: Side<B>,
    opts: DiffOptions,
    stats: DiffStats,
    failed: bool,
}

/// Diff two entry streams (each sorted by path: a [`crate::Scanner`], a
/// [`crate::ManifestReader`], a manifest's entries, a trace's snapshot, ...).
pub fn diff<A, B>(a: A, b: B, opts: &DiffOptions) -> Diff<A::IntoIter, B::IntoIter>
where
    A: IntoIterator<Item = Result<Entry>>,
    B: IntoIterator<Item = Result<Entry>>,
{
    Diff {
        a: Side { it: a.into_iter(), name: 'A', peeked: None, prev: None, done: false },
        b: Side { it: b.into_iter(), name: 'B', peeked: None, prev: None, done: false },
        opts: opts.clone(),
        stats: DiffStats::default(),
        failed: false,
    }
}

impl<A, B> Diff<A, B>
where
    A: Iterator<Item = Result<Entry>>,
    B: Iterator<Item = Result<Entry>>,
{
    /// Counts so far (complete once the iterator has ended).
    pub fn stats(&self) -> &DiffStats {
        &self.stats
    }

    /// Run to the end; the differences in order.
    pub fn collect_all(mut self) -> Result<(Vec<Difference>, DiffStats)> {
        let mut v = Vec::new();
        for d in &mut self {
            v.push(d?);
        }
        Ok((v, self.stats))
    }

    fn step(&mut self) -> Result<Option<Difference>> {
        loop {
            let s = &mut self.stats;
            self.a.fill(&self.opts, &mut s.a_entries, &mut s.ignored)?;
            self.b.fill(&self.opts, &mut s.b_entries, &mut s.ignored)?;
            let ord = match (&self.a.peeked, &self.b.peeked) {
                (None, None) => return Ok(None),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(x), Some(y)) => path_cmp(&x.path, &y.path),
            };
            match ord {
                Ordering::Less => {
                    self.stats.removed += 1;
                    return Ok(self.a.peeked.take().map(Difference::Removed));
                }
                Ordering::Greater => {
                    self.stats.added += 1;
                    return Ok(self.b.peeked.take().map(Difference::Added));
                }
                Ordering::Equal => {
                    let (Some(a), Some(b)) = (self.a.peeked.take(), self.b.peeked.take()) else {
                        return Ok(None);
                    };
                    let attrs = changed_attrs(&a, &b, &self.opts);
                    if !attrs.is_empty() {
                        self.stats.changed += 1;
                        return Ok(Some(Difference::Changed { a, b, attrs }));
                    }
                }
            }
        }
    }
}

impl<A, B> Iterator for Diff<A, B>
where
    A: Iterator<Item = Result<Entry>>,
    B: Iterator<Item = Result<Entry>>,
{
    type Item = Result<Difference>;
    fn next(&mut self) -> Option<Result<Difference>> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(Some(d)) => Some(Ok(d)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}
