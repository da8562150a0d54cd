//! Manifests: a tree's entries as JSON Lines (format in docs/TRACE_FORMAT.md, "Manifests").
//!
//! ```text
//! {"format":"reanimator-manifest","version":1,"root":"/srv/data","tool":"reanimator 0.1.0"}
//! {"path":"","kind":"dir","mode":"0755","uid":0,"gid":0,"size":0,"mtime_ns":1700000000000000000}
//! {"path":"a.txt","kind":"file","mode":"0644","uid":0,"gid":0,"size":3,"blake3":"…","mtime_ns":…}
//! {"path":{"hex":"ff"},"kind":"symlink","mode":"0777","uid":0,"gid":0,"size":5,"target":"a.txt",…}
//! {"end":{"entries":3}}
//! ```
//!
//! One header line, one line per entry sorted by path bytes (the root first), one closing
//! line with the count: a manifest cut anywhere is detected. Byte strings (paths, symlink
//! targets, hard-link paths, xattr names and values) follow [`crate::JsonBytes`]: a JSON string
//! when they are valid UTF-8, `{"hex": …}` otherwise (the rule of every JSON the tools
//! write), so every byte round-trips. Version 1 wrote `<field>_hex` keys instead: still read.
//! Readers ignore fields they do not know; an incompatible change bumps `version`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::entry::{path_cmp, DevNum, Digest, Entry, Kind};
use crate::error::{Error, LineProblem, Result};
use crate::scan::{ScanOptions, Scanner};
use crate::JsonBytes;

/// The value of the header's `format` field.
pub const FORMAT: &str = "reanimator-manifest";
/// The manifest version this crate writes and reads.
pub const VERSION: u64 = 2;
/// Longest line accepted (an entry with large xattrs stays far below it).
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// The header line's facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManifestHeader {
    /// The directory that was scanned (absolute), when known.
    pub root: Option<Vec<u8>>,
    /// Nanoseconds since the Unix epoch when the scan started.
    pub created_ns: Option<i64>,
    /// What wrote the manifest (`reanimator 0.1.0`).
    pub tool: Option<String>,
}

/// A whole manifest in memory. For large trees prefer [`ManifestReader`] and
/// [`ManifestWriter`], which stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The header line's facts ([`Manifest::scan`] sets only `root`).
    pub header: ManifestHeader,
    /// Sorted by path bytes, the root first.
    pub entries: Vec<Entry>,
}

impl Manifest {
    /// Scan `root` into memory.
    pub fn scan(root: &Path, opts: ScanOptions) -> Result<Manifest> {
        let entries = Scanner::new(root, opts)?.collect::<Result<Vec<_>>>()?;
        let header = ManifestHeader {
            root: std::fs::canonicalize(root)
                .ok()
                .map(|p| std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str()).to_vec()),
            ..Default::default()
        };
        Ok(Manifest { header, entries })
    }

    /// Read a whole manifest.
    pub fn read_from(r: impl BufRead) -> Result<Manifest> {
        let mut rd = ManifestReader::new(r)?;
        let mut entries = Vec::new();
        for e in &mut rd {
            entries.push(e?);
        }
        Ok(Manifest { header: rd.header().clone(), entries })
    }

    /// Read the manifest file at `path`.
    pub fn load(path: &Path) -> Result<Manifest> {
        let f = File::open(path)
            .map_err(|source| Error::ManifestOpen { path: path.to_path_buf(), source })?;
        Manifest::read_from(BufReader::new(f))
    }

    /// Write the manifest (header, entries, closing line).
    pub fn write_to<W: Write>(&self, w: W) -> Result<W> {
        let mut mw = ManifestWriter::new(w, &self.header)?;
        for e in &self.entries {
            mw.write(e)?;
        }
        mw.finish()
    }
}

// ---- line formats -------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, Default)]
struct HeaderLine {
    format: String,
    version: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    root: Option<JsonBytes>,
    /// (Version 1's form for bytes that are not UTF-8: read, never written.)
    #[serde(default, skip_serializing)]
    root_hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool: Option<String>,
}

#[derive(Serialize, Deserialize, Default)]
struct XattrLine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<JsonBytes>,
    /// (Version 1's form for bytes that are not UTF-8: read, never written.)
    #[serde(default, skip_serializing)]
    name_hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<JsonBytes>,
    /// (Version 1's form for bytes that are not UTF-8: read, never written.)
    #[serde(default, skip_serializing)]
    value_hex: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct EndLine {
    entries: u64,
}

#[derive(Serialize, Deserialize, Default)]
struct EntryLine {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<JsonBytes>,
    /// (Version 1's form for bytes that are not UTF-8: read, never written.)
    #[serde(default, skip_serializing)]
    path_hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blake3: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target: Option<JsonBytes>,
    /// (Version 1's form for bytes that are not UTF-8: read, never written.)
    #[serde(default, skip_serializing)]
    target_hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rdev: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link: Option<JsonBytes>,
    /// (Version 1's form for bytes that are not UTF-8: read, never written.)
    #[serde(default, skip_serializing)]
    link_hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    xattrs: Option<Vec<XattrLine>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mtime_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end: Option<EndLine>,
}

fn from_json_bytes(
    v: Option<JsonBytes>,
    v1_hex: Option<String>,
    field: &'static str,
) -> std::result::Result<Option<Vec<u8>>, LineProblem> {
    match (v, v1_hex) {
        (Some(_), Some(_)) => Err(LineProblem::Both(field)),
        (Some(j), None) => j.into_bytes().map(Some).ok_or(LineProblem::BadValue(field)),
        (None, Some(h)) => ra_hex::decode(&h).map(Some).ok_or(LineProblem::BadValue(field)),
        (None, None) => Ok(None),
    }
}

fn entry_line(e: &Entry) -> EntryLine {
    let xattrs = (!e.xattrs.is_empty()).then(|| {
        e.xattrs
            .iter()
            .map(|(n, v)| XattrLine {
                name: Some(JsonBytes::new(n)),
                name_hex: None,
                value: Some(JsonBytes::new(v)),
                value_hex: None,
            })
            .collect()
    });
    EntryLine {
        path: Some(JsonBytes::new(&e.path)),
        path_hex: None,
        kind: Some(e.kind.name().to_string()),
        mode: Some(format!("{:04o}", e.mode)),
        uid: Some(e.uid),
        gid: Some(e.gid),
        size: Some(e.size),
        blake3: e.digest.map(|d| d.to_hex()),
        target: e.target.as_deref().map(JsonBytes::new),
        target_hex: None,
        rdev: e.rdev.map(|r| r.to_string()),
        link: e.link.as_deref().map(JsonBytes::new),
        link_hex: None,
        xattrs,
        mtime_ns: Some(e.mtime_ns),
        end: None,
    }
}

fn parse_entry(l: EntryLine) -> std::result::Result<Entry, LineProblem> {
    use LineProblem::{BadValue, Missing};
    let path = from_json_bytes(l.path, l.path_hex, "path")?.ok_or(Missing("path"))?;
    let kind = l.kind.ok_or(Missing("kind"))?;
    let kind = Kind::from_name(&kind).ok_or(BadValue("kind"))?;
    let mode = l.mode.ok_or(Missing("mode"))?;
    let mode = u32::from_str_radix(&mode, 8).map_err(|_| BadValue("mode"))?;
    let digest = match l.blake3 {
        Some(h) => Some(Digest::from_hex(&h).ok_or(BadValue("blake3"))?),
        None => None,
    };
    let rdev = match l.rdev {
        Some(r) => {
            let (a, b) = r.split_once(':').ok_or(BadValue("rdev"))?;
            let major = a.parse().map_err(|_| BadValue("rdev"))?;
            let minor = b.parse().map_err(|_| BadValue("rdev"))?;
            Some(DevNum { major, minor })
        }
        None => None,
    };
    let mut xattrs = std::collections::BTreeMap::new();
    for x in l.xattrs.unwrap_or_default() {
        let name =
            from_json_bytes(x.name, x.name_hex, "xattrs.name")?.ok_or(Missing("xattrs.name"))?;
        let value = from_json_bytes(x.value, x.value_hex, "xattrs.value")?
            .ok_or(Missing("xattrs.value"))?;
        if xattrs.insert(name, value).is_some() {
            return Err(BadValue("xattrs.name"));
        }
    }
    Ok(Entry {
        path,
        kind,
        mode,
        uid: l.uid.ok_or(Missing("uid"))?,
        gid: l.gid.ok_or(Missing("gid"))?,
        size: l.size.ok_or(Missing("size"))?,
        digest,
        target: from_json_bytes(l.target, l.target_hex, "target")?,
        rdev,
        xattrs,
        link: from_json_bytes(l.link, l.link_hex, "link")?,
        mtime_ns: l.mtime_ns.ok_or(Missing("mtime_ns"))?,
    })
}

// ---- writer -------------------------------------------------------------------------------------

/// Writes a manifest line by line; entries must come in path order.
pub struct ManifestWriter<W: Write> {
    w: W,
    prev: Option<Vec<u8>>,
    count: u64,
}

fn werr(source: std::io::Error) -> Error {
    Error::ManifestWrite { source }
}

impl<W: Write> ManifestWriter<W> {
    /// Write the header line.
    pub fn new(mut w: W, h: &ManifestHeader) -> Result<Self> {
        let line = HeaderLine {
            format: FORMAT.to_string(),
            version: VERSION,
            root: h.root.as_deref().map(JsonBytes::new),
            root_hex: None,
            created_ns: h.created_ns,
            tool: h.tool.clone(),
        };
        serde_json::to_writer(&mut w, &line).map_err(|e| werr(e.into()))?;
        w.write_all(b"\n").map_err(werr)?;
        Ok(ManifestWriter { w, prev: None, count: 0 })
    }

    /// Write one entry (after every entry with a smaller path).
    pub fn write(&mut self, e: &Entry) -> Result<()> {
        if let Some(p) = &self.prev {
            if path_cmp(p, &e.path).is_ge() {
                return Err(Error::WriteOrder { path: e.path.clone(), previous: p.clone() });
            }
        }
        serde_json::to_writer(&mut self.w, &entry_line(e)).map_err(|e| werr(e.into()))?;
        self.w.write_all(b"\n").map_err(werr)?;
        self.prev = Some(e.path.clone());
        self.count += 1;
        Ok(())
    }

    /// Entries written so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Write the closing line and flush. Returns the output.
    pub fn finish(mut self) -> Result<W> {
        let end = EntryLine { end: Some(EndLine { entries: self.count }), ..Default::default() };
        serde_json::to_writer(&mut self.w, &end).map_err(|e| werr(e.into()))?;
        self.w.write_all(b"\n").map_err(werr)?;
        self.w.flush().map_err(werr)?;
        Ok(self.w)
    }
}

// ---- reader -------------------------------------------------------------------------------------

/// Reads a manifest line by line, checking every line: an iterator of entries. After an error
/// it ends.
pub struct ManifestReader<R: BufRead> {
    r: R,
    header: ManifestHeader,
    line: u64,
    buf: Vec<u8>,
    prev: Option<Vec<u8>>,
    count: u64,
    ended: bool,
    failed: bool,
}

impl<R: BufRead> ManifestReader<R> {
    /// Read and check the header line.
    pub fn new(r: R) -> Result<Self> {
        let mut rd = ManifestReader {
            r,
            header: ManifestHeader::default(),
            line: 0,
            buf: Vec::new(),
            prev: None,
            count: 0,
            ended: false,
            failed: false,
        };
        if !rd.read_line()? {
            return Err(Error::ManifestLine { line: 1, problem: LineProblem::NotAManifest });
        }
        let line = rd.line;
        let not_manifest = || Error::ManifestLine { line, problem: LineProblem::NotAManifest };
        let v: serde_json::Value = serde_json::from_slice(&rd.buf).map_err(|_| not_manifest())?;
        if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(not_manifest());
        }
        let h: HeaderLine =
            serde_json::from_value(v).map_err(|source| Error::ManifestJson { line, source })?;
        if !(1..=VERSION).contains(&h.version) {
            return Err(Error::ManifestLine { line, problem: LineProblem::Version(h.version) });
        }
        rd.header = ManifestHeader {
            root: from_json_bytes(h.root, h.root_hex, "root")
                .map_err(|problem| Error::ManifestLine { line, problem })?,
            created_ns: h.created_ns,
            tool: h.tool,
        };
        Ok(rd)
    }

    /// The header line's facts.
    pub fn header(&self) -> &ManifestHeader {
        &self.header
    }

    /// Lines read so far.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Read the next line into `buf` (without its newline). False at the end of the input.
    fn read_line(&mut self) -> Result<bool> {
        self.buf.clear();
        let line = self.line + 1;
        let n = (&mut self.r)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| Error::ManifestRead { line, source })?;
        if n == 0 {
            return Ok(false);
        }
        self.line = line;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if self.buf.len() > MAX_LINE_BYTES {
            return Err(Error::ManifestLine {
                line,
                problem: LineProblem::TooLong(MAX_LINE_BYTES),
            });
        }
        Ok(true)
    }

    fn step(&mut self) -> Result<Option<Entry>> {
        loop {
            if !self.read_line()? {
                if self.ended {
                    return Ok(None);
                }
                return Err(Error::ManifestTruncated { line: self.line });
            }
            let line = self.line;
            if self.ended {
                return Err(Error::ManifestLine { line, problem: LineProblem::AfterEnd });
            }
            let l: EntryLine = serde_json::from_slice(&self.buf)
                .map_err(|source| Error::ManifestJson { line, source })?;
            if let Some(end) = &l.end {
                if end.entries != self.count {
                    return Err(Error::ManifestLine {
                        line,
                        problem: LineProblem::Count { declared: end.entries, found: self.count },
                    });
                }
                self.ended = true;
                continue;
            }
            let e = parse_entry(l).map_err(|problem| Error::ManifestLine { line, problem })?;
            e.check().map_err(|problem| Error::ManifestEntry {
                line,
                path: e.path.clone(),
                problem,
            })?;
            match &self.prev {
                None if !e.path.is_empty() => {
                    return Err(Error::ManifestLine { line, problem: LineProblem::NoRoot })
                }
                Some(p) if path_cmp(p, &e.path).is_ge() => {
                    return Err(Error::ManifestOrder {
                        line,
                        path: e.path.clone(),
                        previous: p.clone(),
                    })
                }
                _ => {}
            }
            self.prev = Some(e.path.clone());
            self.count += 1;
            return Ok(Some(e));
        }
    }
}

impl<R: BufRead> Iterator for ManifestReader<R> {
    type Item = Result<Entry>;
    fn next(&mut self) -> Option<Result<Entry>> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// A manifest file that can be read as often as needed (see [`crate::EntrySource`]).
#[derive(Clone, Debug)]
pub struct ManifestFile {
    /// The manifest's path, opened anew by every [`ManifestFile::open`].
    pub path: PathBuf,
}

impl ManifestFile {
    /// The manifest at `path`; nothing is opened or checked until [`ManifestFile::open`].
    pub fn new(path: impl Into<PathBuf>) -> ManifestFile {
        ManifestFile { path: path.into() }
    }

    /// Open it and read its header.
    pub fn open(&self) -> Result<ManifestReader<BufReader<File>>> {
        let f = File::open(&self.path)
            .map_err(|source| Error::ManifestOpen { path: self.path.clone(), source })?;
        ManifestReader::new(BufReader::with_capacity(1 << 16, f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(path: &[u8], kind: Kind) -> Entry {
        Entry {
            path: path.to_vec(),
            kind,
            mode: 0o644,
            uid: 1,
            gid: 2,
            size: 0,
            digest: (kind == Kind::File).then(|| Digest::of(b"")),
            target: None,
            rdev: None,
            xattrs: Default::default(),
            link: None,
            mtime_ns: -5,
        }
    }

    #[test]
    fn bytes_round_trip() {
        let mut root = e(b"", Kind::Dir);
        root.xattrs.insert(b"user.bin\xff".to_vec(), b"\0\x01\xfe".to_vec());
        root.xattrs.insert(b"user.text".to_vec(), b"hello\nworld\0".to_vec());
        let mut l = e(b"a\nb\xff", Kind::Symlink);
        l.target = Some(b"../\xfe\n".to_vec());
        l.size = 5;
        let mut f = e(b"z", Kind::File);
        f.link = Some(b"a\nb\xff".to_vec());
        let mut c = e(b"zz", Kind::CharDevice);
        c.rdev = Some(DevNum { major: 4, minor: 64 });
        let m = Manifest {
            header: ManifestHeader {
                root: Some(b"/x\xff".to_vec()),
                created_ns: Some(7),
                tool: Some("t".into()),
            },
            entries: vec![root, l, f, c],
        };
        let out = m.write_to(Vec::new()).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(text.contains("\"path\":{\"hex\":\"610a62ff\"}"), "{text}");
        let back = Manifest::read_from(&out[..]).unwrap();
        assert_eq!(back, m);
        // Version 1 manifests (`<field>_hex` keys) still read.
        let v1 = text
            .replace("\"version\":2", "\"version\":1")
            .replace("\"root\":{\"hex\":\"2f78ff\"}", "\"root_hex\":\"2f78ff\"")
            .replace("\"path\":{\"hex\":\"610a62ff\"}", "\"path_hex\":\"610a62ff\"")
            .replace("\"link\":{\"hex\":\"610a62ff\"}", "\"link_hex\":\"610a62ff\"");
        assert!(v1.contains("path_hex") && v1.contains("root_hex"), "{v1}");
        assert_eq!(Manifest::read_from(v1.as_bytes()).unwrap(), m);
        // Both forms of one field: an error naming it.
        let both = text.replace("\"path\":\"z\"", "\"path\":\"z\",\"path_hex\":\"7a\"");
        let err = Manifest::read_from(both.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("path"), "{err}");
    }
}
