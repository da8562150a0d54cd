//! Directory trees stored in a trace (`reanimator record --snapshot DIR`): the start state
//! (entries and file contents) and the end state (entries) of each recorded directory.
//!
//! * [`TraceWriter::record_snapshot`] scans a directory with [`ra_fsstate::Scanner`] and
//!   stores one [`SNAPSHOT_TYPE`] record per entry and, for the start state, the content of
//!   each regular file as [`BLOB_TYPE`] chunks — content-addressed: a content is stored once
//!   per trace whatever the number of files (or snapshots) that hold it.
//! * [`TraceReader::snapshots`] lists them; [`TraceReader::snapshot_entries`] streams one
//!   state's entries (bounded memory: one extent at a time);
//!   [`TraceReader::restore_snapshot`] recreates a start state in an empty directory with
//!   [`ra_fsstate::restore()`], streaming the blob extents.
//!
//! Facts go to the trace info, per snapshot `N` (0, 1, ...) and phase `start` / `end`:
//! `snapshot.N.dir`, `snapshot.N.<phase>.scan_began_ns`, and, written last so that their
//! presence says the state is complete, `.scan_ended_ns`, `.files`, `.file_bytes`, `.blobs`,
//! `.blob_bytes`, `.entries`. Format: docs/TRACE_FORMAT.md §3.9.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io::Write;
use std::os::fd::BorrowedFd;
use std::path::Path;

use dataseries::{Extent, ExtentType};
use std::os::fd::OwnedFd;

use ra_fsstate::{
    BlobSink, BoxError, ChunkFn, ContentSource, DevNum, Diff, DiffOptions, Digest, Entry,
    EntryProblem, EntrySource, Kind, Manifest, ManifestHeader, RestoreOptions, RestoreStats,
    ScanOptions, Scanner,
};

use crate::schema::{BLOB_TYPE, SNAPSHOT_TYPE};
use crate::{Error, Result, TraceReader, TraceWriter};

/// Which state of a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Before the command started: entries and contents.
    Start,
    /// After the command ended: entries only.
    End,
}

impl Phase {
    /// `start` or `end`: the phase's word in the `snapshot.N.PHASE.*` facts and the
    /// export's `phase` column.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Start => "start",
            Phase::End => "end",
        }
    }

    /// The `phase` field's value.
    pub fn code(self) -> u8 {
        match self {
            Phase::Start => 0,
            Phase::End => 1,
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Facts about one stored state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseInfo {
    /// Entries (the root included).
    pub entries: u64,
    /// Regular files among them (each name counted).
    pub files: u64,
    /// Sum of the regular files' sizes.
    pub file_bytes: u64,
    /// Contents stored by this scan (distinct, not stored before in the trace).
    pub blobs: u64,
    /// Bytes stored in those contents' chunks (all-zero chunks are not stored).
    pub blob_bytes: u64,
    /// When the scan began and ended, ns since the Unix epoch.
    pub scan_began_ns: i64,
    /// See `scan_began_ns`.
    pub scan_ended_ns: i64,
}

/// One recorded directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// 0, 1, ... in the order of `--snapshot` options.
    pub index: u32,
    /// The directory's absolute path when it was recorded.
    pub dir: Vec<u8>,
    /// The state before the command; `None` if it was not stored completely.
    pub start: Option<PhaseInfo>,
    /// The state after the command; `None` if it was not stored (completely).
    pub end: Option<PhaseInfo>,
}

impl SnapshotInfo {
    /// The stored state of phase `p` ([`SnapshotInfo::start`] or [`SnapshotInfo::end`]);
    /// `None` when that state was not stored completely.
    pub fn phase(&self, p: Phase) -> Option<&PhaseInfo> {
        match p {
            Phase::Start => self.start.as_ref(),
            Phase::End => self.end.as_ref(),
        }
    }
}

/// What is wrong with a stored snapshot record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotProblem {
    /// A field the record needs (named) is absent from the extent type, null, or of a type
    /// other than an integer where one is expected.
    #[error("field `{0}` is missing or null")]
    Missing(&'static str),
    /// A field's value (named) does not fit what it stands for (a negative mode or offset, a
    /// device number beyond 32 bits).
    #[error("field `{0}` is out of range")]
    OutOfRange(&'static str),
    /// The `kind` byte is no [`ra_fsstate::Kind`] code.
    #[error("unknown kind byte {0}")]
    Kind(u8),
    /// A `blake3` digest (of an entry or a content chunk) is not 32 bytes.
    #[error("`blake3` is not 32 bytes")]
    Digest,
    /// The `xattrs` field does not decode ([`decode_xattrs`]).
    #[error("`xattrs` is malformed")]
    Xattrs,
    /// The record decodes to an entry that [`ra_fsstate::Entry::check`] refuses.
    #[error("{}: {problem}", ra_fsstate::escape(path))]
    Entry {
        /// The entry's path, relative to the snapshot's directory.
        path: Vec<u8>,
        /// What is inconsistent about it.
        problem: EntryProblem,
    },
    /// Entries of one state must come in strictly ascending path order; this one does not.
    #[error(
        "{} is not after {}: entries must be in path order",
        ra_fsstate::escape(path),
        ra_fsstate::escape(previous)
    )]
    Order {
        /// The entry out of order.
        path: Vec<u8>,
        /// The entry before it, whose path is not smaller.
        previous: Vec<u8>,
    },
}

/// `xattrs` field: per attribute, in name order, u32 LE name length, name, u32 LE value
/// length, value.
pub fn encode_xattrs(x: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<u8> {
    let mut v = Vec::new();
    for (n, val) in x {
        v.extend_from_slice(&(n.len() as u32).to_le_bytes());
        v.extend_from_slice(n);
        v.extend_from_slice(&(val.len() as u32).to_le_bytes());
        v.extend_from_slice(val);
    }
    v
}

/// Inverse of [`encode_xattrs`]; `None` if malformed.
pub fn decode_xattrs(mut b: &[u8]) -> Option<BTreeMap<Vec<u8>, Vec<u8>>> {
    let mut out = BTreeMap::new();
    let take = |b: &mut &[u8]| -> Option<Vec<u8>> {
        let n = u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize;
        let v = b.get(4..4usize.checked_add(n)?)?.to_vec();
        *b = &b[4 + n..];
        Some(v)
    };
    while !b.is_empty() {
        let n = take(&mut b)?;
        let v = take(&mut b)?;
        if out.insert(n, v).is_some() {
            return None;
        }
    }
    Some(out)
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The writer as a content sink: each digest once per trace.
struct WriterSink<'a, W: Write + Send + 'static> {
    w: &'a mut TraceWriter<W>,
    store: bool,
}

impl<W: Write + Send + 'static> BlobSink for WriterSink<'_, W> {
    fn wants(&mut self, d: &Digest, size: u64) -> bool {
        // An empty content has no chunks: nothing to store.
        self.store && size > 0 && self.w.claim_blob(d)
    }
    fn chunk(&mut self, d: &Digest, offset: u64, data: &[u8]) -> Result<(), BoxError> {
        self.w.add_blob_chunk(d, offset, data).map_err(|e| Box::new(e) as BoxError)
    }
    fn finish(&mut self, _: &Digest, _: u64) -> Result<(), BoxError> {
        Ok(())
    }
}

impl<W: Write + Send + 'static> TraceWriter<W> {
    /// Scan `dir` and store its state as snapshot `index`, `phase`: its entries, and for
    /// [`Phase::Start`] the contents of its files (those not yet in the trace). Records the
    /// facts in the trace info and flushes: once this returns, the stored state survives a
    /// killed recorder. `dir` should be absolute and canonical; it is recorded as given.
    pub fn record_snapshot(
        &mut self,
        index: u32,
        phase: Phase,
        dir: &Path,
        opts: ScanOptions,
    ) -> Result<PhaseInfo> {
        let key = |k: &str| format!("snapshot.{index}.{}.{k}", phase.name());
        if phase == Phase::Start {
            self.add_info(
                &format!("snapshot.{index}.dir"),
                std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()),
            )?;
        }
        let began = now_ns();
        self.add_info(&key("scan_began_ns"), began.to_string().as_bytes())?;
        let mut scanner = Scanner::new(dir, opts)?;
        loop {
            let mut sink = WriterSink { w: self, store: phase == Phase::Start };
            let Some(e) = scanner.next_with(&mut sink) else { break };
            self.add_snapshot_entry(index, phase.code(), &e?)?;
        }
        let st = scanner.stats();
        let info = PhaseInfo {
            entries: st.entries,
            files: st.files,
            file_bytes: st.file_bytes,
            blobs: st.blobs,
            blob_bytes: st.blob_bytes,
            scan_began_ns: began,
            scan_ended_ns: now_ns(),
        };
        // Everything before the `entries` fact, which marks the state complete.
        self.flush()?;
        self.add_info(&key("scan_ended_ns"), info.scan_ended_ns.to_string().as_bytes())?;
        self.add_info(&key("files"), info.files.to_string().as_bytes())?;
        self.add_info(&key("file_bytes"), info.file_bytes.to_string().as_bytes())?;
        self.add_info(&key("blobs"), info.blobs.to_string().as_bytes())?;
        self.add_info(&key("blob_bytes"), info.blob_bytes.to_string().as_bytes())?;
        self.add_info(&key("entries"), info.entries.to_string().as_bytes())?;
        self.flush()?;
        Ok(info)
    }
}

/// Field indices of a file's snapshot type, found by name.
struct SnapFields {
    snapshot: usize,
    phase: usize,
    path: usize,
    kind: usize,
    mode: usize,
    uid: usize,
    gid: usize,
    size: usize,
    blake3: Option<usize>,
    target: Option<usize>,
    rdev_major: Option<usize>,
    rdev_minor: Option<usize>,
    xattrs: Option<usize>,
    link: Option<usize>,
    mtime: usize,
}

fn field(ty: &ExtentType, name: &str) -> Result<usize> {
    ty.field_index(name).ok_or_else(|| Error::MissingField {
        type_name: ty.name().to_string(),
        field: name.to_string(),
    })
}

impl SnapFields {
    fn resolve(ty: &ExtentType) -> Result<SnapFields> {
        Ok(SnapFields {
            snapshot: field(ty, "snapshot")?,
            phase: field(ty, "phase")?,
            path: field(ty, "path")?,
            kind: field(ty, "kind")?,
            mode: field(ty, "mode")?,
            uid: field(ty, "uid")?,
            gid: field(ty, "gid")?,
            size: field(ty, "size")?,
            blake3: ty.field_index("blake3"),
            target: ty.field_index("target"),
            rdev_major: ty.field_index("rdev_major"),
            rdev_minor: ty.field_index("rdev_minor"),
            xattrs: ty.field_index("xattrs"),
            link: ty.field_index("link"),
            mtime: field(ty, "mtime")?,
        })
    }

    fn entry(&self, e: &Extent, r: usize) -> Result<Entry, SnapshotProblem> {
        use SnapshotProblem::{Missing, OutOfRange};
        let int = |f: usize, name: &'static str| -> Result<i64, SnapshotProblem> {
            match e.value(r, f) {
                dataseries::Value::Int64(v) => Ok(v),
                dataseries::Value::Int32(v) => Ok(v.into()),
                dataseries::Value::Byte(v) => Ok(v.into()),
                _ => Err(Missing(name)),
            }
        };
        let u32_of = |f: usize, name: &'static str| -> Result<u32, SnapshotProblem> {
            u32::try_from(int(f, name)?).map_err(|_| OutOfRange(name))
        };
        let bytes = |f: Option<usize>| f.and_then(|f| e.bytes(r, f)).map(<[u8]>::to_vec);
        let kind_byte = int(self.kind, "kind")? as u8;
        let kind = Kind::from_code(kind_byte).ok_or(SnapshotProblem::Kind(kind_byte))?;
        let digest = match bytes(self.blake3) {
            Some(b) => Some(Digest::from_slice(&b).ok_or(SnapshotProblem::Digest)?),
            None => None,
        };
        let rdev = match (
            self.rdev_major.map(|f| int(f, "rdev_major")),
            self.rdev_minor.map(|f| int(f, "rdev_minor")),
        ) {
            (Some(Ok(a)), Some(Ok(b))) => Some(DevNum {
                major: u32::try_from(a).map_err(|_| OutOfRange("rdev_major"))?,
                minor: u32::try_from(b).map_err(|_| OutOfRange("rdev_minor"))?,
            }),
            _ => None,
        };
        let xattrs = match bytes(self.xattrs) {
            Some(b) => decode_xattrs(&b).ok_or(SnapshotProblem::Xattrs)?,
            None => BTreeMap::new(),
        };
        Ok(Entry {
            path: bytes(Some(self.path)).ok_or(Missing("path"))?,
            kind,
            mode: u32_of(self.mode, "mode")?,
            uid: u32_of(self.uid, "uid")?,
            gid: u32_of(self.gid, "gid")?,
            size: u64::try_from(int(self.size, "size")?).map_err(|_| OutOfRange("size"))?,
            digest,
            target: bytes(self.target),
            rdev,
            xattrs,
            link: bytes(self.link),
            mtime_ns: int(self.mtime, "mtime")?,
        })
    }
}

/// The entries of one stored state, in path order, checked; an iterator. After an error it
/// ends.
pub struct SnapshotEntries<'a> {
    r: &'a TraceReader,
    index: u32,
    phase: Phase,
    expected: u64,
    fields: Option<SnapFields>,
    pending: VecDeque<u64>,
    extent: Option<(u64, Extent)>,
    row: usize,
    prev: Option<Vec<u8>>,
    found: u64,
    done: bool,
}

impl SnapshotEntries<'_> {
    fn step(&mut self) -> Result<Option<Entry>> {
        loop {
            let Some((off, e)) = &self.extent else {
                let Some(off) = self.pending.pop_front() else {
                    if self.found != self.expected {
                        return Err(Error::SnapshotCount {
                            index: self.index,
                            phase: self.phase.name(),
                            expected: self.expected,
                            found: self.found,
                        });
                    }
                    return Ok(None);
                };
                let e = self.r.dataseries().read_extent_at(off)?;
                if self.fields.is_none() {
                    self.fields = Some(SnapFields::resolve(e.extent_type())?);
                }
                self.extent = Some((off, e));
                self.row = 0;
                continue;
            };
            if self.row >= e.len() {
                self.extent = None;
                continue;
            }
            let r = self.row;
            self.row += 1;
            let f = self.fields.as_ref().expect("resolved with the first extent");
            let bad = |problem| Error::SnapshotRecord {
                type_name: SNAPSHOT_TYPE,
                extent_offset: *off,
                row: r,
                problem,
            };
            let snap = e.i32(r, f.snapshot);
            let phase = e.byte(r, f.phase);
            if snap != Some(self.index as i32) || phase != Some(self.phase.code()) {
                continue;
            }
            let entry = f.entry(e, r).map_err(bad)?;
            entry.check().map_err(|problem| {
                bad(SnapshotProblem::Entry { path: entry.path.clone(), problem })
            })?;
            match &self.prev {
                Some(p) if p >= &entry.path => {
                    return Err(bad(SnapshotProblem::Order {
                        path: entry.path,
                        previous: p.clone(),
                    }))
                }
                _ => {}
            }
            self.prev = Some(entry.path.clone());
            self.found += 1;
            return Ok(Some(entry));
        }
    }
}

impl Iterator for SnapshotEntries<'_> {
    type Item = Result<Entry>;
    fn next(&mut self) -> Option<Result<Entry>> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<'a> SnapshotEntries<'a> {
    /// The same stream with errors as [`ra_fsstate::Error`] (trace errors wrapped in
    /// [`ra_fsstate::Error::Source`]), as [`ra_fsstate::diff()`] wants.
    pub fn fs_errors(self) -> FsEntries<'a> {
        FsEntries(self)
    }
}

/// [`SnapshotEntries`] yielding `ra_fsstate::Result` (see [`SnapshotEntries::fs_errors`]).
pub struct FsEntries<'a>(SnapshotEntries<'a>);

impl Iterator for FsEntries<'_> {
    type Item = ra_fsstate::Result<Entry>;
    fn next(&mut self) -> Option<ra_fsstate::Result<Entry>> {
        self.0.next().map(|r| r.map_err(ra_fsstate::Error::from))
    }
}

impl From<Error> for ra_fsstate::Error {
    fn from(e: Error) -> ra_fsstate::Error {
        match e {
            Error::FsState(e) => e,
            e => ra_fsstate::Error::Source { source: Box::new(e) },
        }
    }
}

/// One stored state as an [`EntrySource`] (for [`ra_fsstate::restore()`]).
pub struct SnapshotSource<'a> {
    r: &'a TraceReader,
    index: u32,
    phase: Phase,
}

impl EntrySource for SnapshotSource<'_> {
    fn entries(
        &self,
    ) -> ra_fsstate::Result<Box<dyn Iterator<Item = ra_fsstate::Result<Entry>> + '_>> {
        let it = self
            .r
            .snapshot_entries(self.index, self.phase)
            .map_err(|e| ra_fsstate::Error::Source { source: Box::new(e) })?;
        Ok(Box::new(it.map(|r| r.map_err(|e| ra_fsstate::Error::Source { source: Box::new(e) }))))
    }
}

/// The trace's stored contents as a [`ContentSource`]: every `Reanimator::Blob` extent in file
/// order, one decoded extent at a time.
pub struct TraceContent<'a> {
    r: &'a TraceReader,
}

impl ContentSource for TraceContent<'_> {
    fn for_each_chunk(&mut self, f: &mut ChunkFn<'_>) -> ra_fsstate::Result<()> {
        let src = |e: Error| ra_fsstate::Error::Source { source: Box::new(e) };
        let mut fields = None;
        for &off in self.r.blob_offsets() {
            let e = self.r.dataseries().read_extent_at(off).map_err(|e| src(e.into()))?;
            let (fd, fo, fdata) = match fields {
                Some(x) => x,
                None => {
                    let ty = e.extent_type();
                    let x = (
                        field(ty, "blake3").map_err(src)?,
                        field(ty, "offset").map_err(src)?,
                        field(ty, "data").map_err(src)?,
                    );
                    fields = Some(x);
                    x
                }
            };
            for r in 0..e.len() {
                let bad = |problem| {
                    src(Error::SnapshotRecord {
                        type_name: BLOB_TYPE,
                        extent_offset: off,
                        row: r,
                        problem,
                    })
                };
                let d = e
                    .bytes(r, fd)
                    .and_then(Digest::from_slice)
                    .ok_or_else(|| bad(SnapshotProblem::Digest))?;
                let o = e.i64(r, fo).ok_or_else(|| bad(SnapshotProblem::Missing("offset")))?;
                let o = u64::try_from(o).map_err(|_| bad(SnapshotProblem::OutOfRange("offset")))?;
                let data =
                    e.bytes(r, fdata).ok_or_else(|| bad(SnapshotProblem::Missing("data")))?;
                f(&d, o, data)?;
            }
        }
        Ok(())
    }
}

impl TraceReader {
    /// The directories whose state the trace holds, in index order (empty if none).
    pub fn snapshots(&self) -> Vec<SnapshotInfo> {
        #[derive(Default)]
        struct Raw {
            dir: Option<Vec<u8>>,
            phases: [BTreeMap<String, i64>; 2],
        }
        let mut raw: BTreeMap<u32, Raw> = BTreeMap::new();
        for (k, v) in self.info() {
            let Some(rest) = k.strip_prefix("snapshot.") else { continue };
            let Some((n, rest)) = rest.split_once('.') else { continue };
            let Ok(n) = n.parse::<u32>() else { continue };
            let slot = raw.entry(n).or_default();
            if rest == "dir" {
                slot.dir = Some(v.clone());
                continue;
            }
            let Some((phase, fact)) = rest.split_once('.') else { continue };
            let p = match phase {
                "start" => 0,
                "end" => 1,
                _ => continue,
            };
            if let Some(x) = std::str::from_utf8(v).ok().and_then(|s| s.parse::<i64>().ok()) {
                slot.phases[p].insert(fact.to_string(), x);
            }
        }
        raw.into_iter()
            .filter_map(|(index, r)| {
                let phase = |m: &BTreeMap<String, i64>| {
                    let g = |k: &str| m.get(k).copied();
                    let u = |k: &str| g(k).and_then(|x| u64::try_from(x).ok());
                    Some(PhaseInfo {
                        entries: u("entries")?,
                        files: u("files").unwrap_or(0),
                        file_bytes: u("file_bytes").unwrap_or(0),
                        blobs: u("blobs").unwrap_or(0),
                        blob_bytes: u("blob_bytes").unwrap_or(0),
                        scan_began_ns: g("scan_began_ns").unwrap_or(0),
                        scan_ended_ns: g("scan_ended_ns").unwrap_or(0),
                    })
                };
                Some(SnapshotInfo {
                    index,
                    dir: r.dir?,
                    start: phase(&r.phases[0]),
                    end: phase(&r.phases[1]),
                })
            })
            .collect()
    }

    /// Snapshot `index`.
    pub fn snapshot(&self, index: u32) -> Result<SnapshotInfo> {
        let all = self.snapshots();
        let count = all.len();
        all.into_iter().find(|s| s.index == index).ok_or(Error::NoSuchSnapshot { index, count })
    }

    /// Stream the entries of one stored state (checked, in path order).
    pub fn snapshot_entries(&self, index: u32, phase: Phase) -> Result<SnapshotEntries<'_>> {
        let info = self.snapshot(index)?;
        let p =
            info.phase(phase).ok_or(Error::SnapshotIncomplete { index, phase: phase.name() })?;
        Ok(SnapshotEntries {
            r: self,
            index,
            phase,
            expected: p.entries,
            fields: None,
            pending: self.snapshot_offsets().iter().copied().collect(),
            extent: None,
            row: 0,
            prev: None,
            found: 0,
            done: false,
        })
    }

    /// One stored state as a whole [`Manifest`] (in memory: for large trees prefer
    /// [`TraceReader::snapshot_entries`]).
    pub fn snapshot_manifest(&self, index: u32, phase: Phase) -> Result<Manifest> {
        let info = self.snapshot(index)?;
        let entries = self.snapshot_entries(index, phase)?.collect::<Result<Vec<_>>>()?;
        let header = ManifestHeader {
            created_ns: info.phase(phase).map(|p| p.scan_began_ns),
            root: Some(info.dir),
            tool: self.info_value("writer").map(|w| String::from_utf8_lossy(w).into_owned()),
        };
        Ok(Manifest { header, entries })
    }

    /// One stored state as an [`EntrySource`].
    pub fn snapshot_source(&self, index: u32, phase: Phase) -> SnapshotSource<'_> {
        SnapshotSource { r: self, index, phase }
    }

    /// The stored contents as a [`ContentSource`].
    pub fn content(&self) -> TraceContent<'_> {
        TraceContent { r: self }
    }

    /// Compare a stored state (A) with the directory open as `dir` now (B), e.g. the end state
    /// with a replay's root: a lazy [`Diff`] (an iterator of differences in path order, then
    /// [`Diff::stats`]); paths are relative, so the directory may be anywhere.
    pub fn diff_snapshot(
        &self,
        index: u32,
        phase: Phase,
        dir: OwnedFd,
        opts: &DiffOptions,
    ) -> Result<Diff<FsEntries<'_>, Scanner>> {
        let a = self.snapshot_entries(index, phase)?.fs_errors();
        let b = Scanner::from_fd(dir, ScanOptions::default())?;
        Ok(ra_fsstate::diff(a, b, opts))
    }

    /// Recreate the start state of snapshot `index` inside `dest`, an open, empty directory
    /// (see [`ra_fsstate::restore()`]: race-free, never outside `dest`, contents verified;
    /// device nodes, setuid/setgid bits and `security.*` xattrs withheld).
    pub fn restore_snapshot(&self, index: u32, dest: BorrowedFd<'_>) -> Result<RestoreStats> {
        self.restore_snapshot_with(index, dest, &RestoreOptions::default())
    }

    /// [`TraceReader::restore_snapshot`] with explicit options (`special`: restore device
    /// nodes, setuid/setgid bits and `security.*` xattrs as recorded).
    pub fn restore_snapshot_with(
        &self,
        index: u32,
        dest: BorrowedFd<'_>,
        opts: &RestoreOptions,
    ) -> Result<RestoreStats> {
        let info = self.snapshot(index)?;
        if info.start.is_none() {
            return Err(Error::SnapshotIncomplete { index, phase: Phase::Start.name() });
        }
        let src = self.snapshot_source(index, Phase::Start);
        Ok(ra_fsstate::restore(&src, &mut self.content(), dest, opts)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xattrs_round_trip_and_reject_garbage() {
        let mut x = BTreeMap::new();
        x.insert(b"user.a".to_vec(), b"".to_vec());
        x.insert(b"user.\xff".to_vec(), b"\0\x01".to_vec());
        assert_eq!(decode_xattrs(&encode_xattrs(&x)), Some(x));
        assert_eq!(decode_xattrs(b""), Some(BTreeMap::new()));
        assert_eq!(decode_xattrs(b"\x05\0\0\0ab"), None);
        assert_eq!(decode_xattrs(b"\xff\xff\xff\xff"), None);
        assert_eq!(decode_xattrs(b"\x01\0\0\0a"), None);
    }
}
