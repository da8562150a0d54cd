//! Sealed files: a keyed MAC chain over every extent, stored in extents of their own type
//! ([`SEAL_TYPE_NAME`]), so that a modified, dropped, duplicated, reordered or truncated
//! extent is detected while the file stays an ordinary DataSeries file (readers that don't
//! know the seal skip its extents like any other type).
//!
//! Extent `i` of the file (in file order, the XmlType extent being extent 0 and seal extents
//! counted like the others) gets
//!
//! ```text
//! mac_i = BLAKE3-keyed(K, "RA-SEAL1" ‖ serial ‖ i ‖ len_i ‖ mac_{i-1} ‖ BLAKE3(bytes_i))
//! ```
//!
//! with `mac_{-1}` = 32 zero bytes, `serial` 16 random bytes chosen per file and integers
//! little-endian u64. A seal extent lists `(i, len_i, mac_i)` for every extent since the
//! previous seal extent; the writer adds one after every [`SEAL_EVERY`] extents, at each
//! flush, and a final one just before the index. The final seal extent ends with a record
//! flagged `final` whose MAC, `BLAKE3-keyed(K, "RA-SEAL1-END" ‖ serial ‖ i ‖ mac_{i-1})`
//! (`i` being the final seal extent's own number), proves where the file ends: a file cut
//! anywhere before it lacks it. The index extent and the trailer after it carry no MAC of
//! their own; the verifier checks that the index lists exactly the extents it verified.

use std::collections::VecDeque;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::codec;
use crate::types::{INDEX_NAME, XMLTYPE_NAME};
use crate::{hex, Error, Extent, ExtentBuilder, ExtentType, FieldDesc, FieldType, Result, Value};

/// The extent type holding the MACs.
pub const SEAL_TYPE_NAME: &str = "Reanimator::Seal";

/// A seal extent is written at least every this many extents.
pub const SEAL_EVERY: usize = 64;

/// Most extents a verifier accepts between two seal extents (a writer writes one every
/// [`SEAL_EVERY`]); beyond, the file was not written by a sealing writer (or seals were
/// removed), and the verifier stops instead of remembering more.
const MAX_UNSEALED: usize = 1 << 16;

/// A 256-bit secret. `Debug` shows nothing of it.
#[derive(Clone)]
pub struct SecretKey(pub [u8; 32]);

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

/// How to seal a file.
#[derive(Clone, Debug)]
pub struct SealOptions {
    /// The MAC key.
    pub key: SecretKey,
    /// A public identifier of the key (stored in the seal extents, so that a verifier given
    /// the wrong key can say so).
    pub key_id: Vec<u8>,
    /// The file's serial number (random, chosen by the caller); bound into every MAC, so
    /// that extents cannot be moved between files sealed with the same key.
    pub serial: [u8; 16],
}

/// The seal extent type.
pub fn seal_type() -> ExtentType {
    ExtentType::builder(SEAL_TYPE_NAME)
        .namespace("reanimator")
        .version("1.0")
        .attr("comment", "keyed BLAKE3 MAC chain over the file's extents (reanimator verify)")
        .field(FieldDesc::new("serial", FieldType::Variable32))
        .field(FieldDesc::new("key_id", FieldType::Variable32))
        .field(FieldDesc::new("seq", FieldType::Int64))
        .field(FieldDesc::new("length", FieldType::Int64))
        .field(FieldDesc::new("mac", FieldType::Variable32))
        .field(FieldDesc::new("final", FieldType::Bool))
        .build()
        .unwrap_or_else(|_| unreachable!("the seal type is valid"))
}

const F_SERIAL: usize = 0;
const F_KEY_ID: usize = 1;
const F_SEQ: usize = 2;
const F_LENGTH: usize = 3;
const F_MAC: usize = 4;
const F_FINAL: usize = 5;

fn extent_mac(
    key: &[u8; 32],
    serial: &[u8; 16],
    seq: u64,
    len: u64,
    prev: &[u8; 32],
    digest: &[u8; 32],
) -> [u8; 32] {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(b"RA-SEAL1");
    h.update(serial);
    h.update(&seq.to_le_bytes());
    h.update(&len.to_le_bytes());
    h.update(prev);
    h.update(digest);
    *h.finalize().as_bytes()
}

fn end_mac(key: &[u8; 32], serial: &[u8; 16], seq: u64, prev: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(b"RA-SEAL1-END");
    h.update(serial);
    h.update(&seq.to_le_bytes());
    h.update(prev);
    *h.finalize().as_bytes()
}

/// The BLAKE3 digest of an extent written in pieces.
pub(crate) fn digest_parts(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(p);
    }
    *h.finalize().as_bytes()
}

/// The writer's side: the chain so far and the extents not yet listed in a seal extent.
pub(crate) struct Sealer {
    opts: SealOptions,
    ty: Arc<ExtentType>,
    next_seq: u64,
    prev: [u8; 32],
    pending: Vec<(u64, u64, [u8; 32])>,
}

impl Sealer {
    pub(crate) fn new(opts: SealOptions, ty: Arc<ExtentType>) -> Self {
        Sealer { opts, ty, next_seq: 0, prev: [0; 32], pending: Vec::new() }
    }

    /// Chains the next extent of the file.
    pub(crate) fn add(&mut self, len: u64, digest: &[u8; 32]) {
        let seq = self.next_seq;
        let mac = extent_mac(&self.opts.key.0, &self.opts.serial, seq, len, &self.prev, digest);
        self.pending.push((seq, len, mac));
        self.prev = mac;
        self.next_seq += 1;
    }

    /// Extents written since the last seal extent.
    pub(crate) fn unsealed(&self) -> usize {
        self.pending.len()
    }

    /// The next seal extent: every pending extent, and with `last` the end record.
    pub(crate) fn build(&mut self, last: bool) -> Result<ExtentBuilder> {
        let mut b = ExtentBuilder::new(Arc::clone(&self.ty));
        let serial = self.opts.serial;
        let row = |b: &mut ExtentBuilder, seq: u64, len: u64, mac: &[u8; 32], fin: bool| {
            b.start_record();
            b.set(F_SERIAL, Value::Bytes(&serial))?;
            b.set(F_KEY_ID, Value::Bytes(&self.opts.key_id))?;
            b.set(F_SEQ, Value::Int64(seq as i64))?;
            b.set(F_LENGTH, Value::Int64(len as i64))?;
            b.set(F_MAC, Value::Bytes(mac))?;
            b.set(F_FINAL, Value::Bool(fin))
        };
        for (seq, len, mac) in self.pending.drain(..) {
            row(&mut b, seq, len, &mac, false)?;
        }
        if last {
            // This seal extent will be extent `next_seq`.
            let mac = end_mac(&self.opts.key.0, &serial, self.next_seq, &self.prev);
            row(&mut b, self.next_seq, 0, &mac, true)?;
        }
        Ok(b)
    }
}

/// Why a sealed file or stream failed verification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealFailure {
    /// The extent's number in the file (the XmlType extent is 0), when one extent is at fault.
    pub seq: Option<u64>,
    /// Its file offset.
    pub offset: Option<u64>,
    /// What is wrong, in words.
    pub why: String,
    /// The failure is the file ending early (no final seal), not a changed extent.
    pub truncated: bool,
}

impl fmt::Display for SealFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.seq, self.offset) {
            (Some(s), Some(o)) => write!(f, "extent {s} at offset {o}: {}", self.why),
            (Some(s), None) => write!(f, "extent {s}: {}", self.why),
            (None, Some(o)) => write!(f, "at offset {o}: {}", self.why),
            (None, None) => f.write_str(&self.why),
        }
    }
}

/// What a verification established.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SealSummary {
    /// The file's serial number (hex).
    pub serial: String,
    /// The id of the key the file was sealed with (hex), as stored.
    pub key_id: String,
    /// Extents verified (seal extents included; the index is not counted).
    pub extents: u64,
    /// Seal extents seen.
    pub seals: u64,
    /// Bytes of the extents verified.
    pub bytes: u64,
    /// The final seal was seen (the file is complete).
    pub complete: bool,
}

/// One record of a seal extent.
struct Row {
    serial: [u8; 16],
    key_id: Vec<u8>,
    seq: u64,
    len: u64,
    mac: [u8; 32],
    fin: bool,
}

struct Pending {
    seq: u64,
    offset: u64,
    len: u64,
    digest: [u8; 32],
}

/// Verifies a sealed DataSeries stream extent by extent: feed every extent's bytes in file
/// order (the XmlType extent first) to [`StreamVerifier::extent`], then call
/// [`StreamVerifier::finish`]. Memory: one digest per extent since the last seal extent (at
/// most 65,536), plus the seal extent being checked.
pub struct StreamVerifier {
    key: [u8; 32],
    serial: Option<[u8; 16]>,
    key_id: Option<Vec<u8>>,
    seal_ty: Arc<ExtentType>,
    declared: bool,
    next_seq: u64,
    /// The verified chain's last MAC.
    prev: [u8; 32],
    pending: VecDeque<Pending>,
    summary: SealSummary,
    finished: bool,
    index_seen: bool,
}

impl StreamVerifier {
    /// A verifier for files sealed with `key` (the MAC key, not the key file's master key).
    pub fn new(key: [u8; 32]) -> Self {
        StreamVerifier {
            key,
            serial: None,
            key_id: None,
            seal_ty: Arc::new(seal_type()),
            declared: false,
            next_seq: 0,
            prev: [0; 32],
            pending: VecDeque::new(),
            summary: SealSummary::default(),
            finished: false,
            index_seen: false,
        }
    }

    /// The summary so far.
    pub fn summary(&self) -> &SealSummary {
        &self.summary
    }

    fn fail(&self, seq: Option<u64>, offset: Option<u64>, why: impl Into<String>) -> SealFailure {
        SealFailure { seq, offset, why: why.into(), truncated: false }
    }

    /// Checks the next extent of the stream (`bytes` is exactly the extent, at `offset`).
    pub fn extent(&mut self, offset: u64, bytes: &[u8]) -> std::result::Result<(), SealFailure> {
        let seq = self.next_seq;
        let h = codec::parse_header(bytes, false, offset)
            .map_err(|e| self.fail(Some(seq), Some(offset), format!("unreadable extent: {e}")))?;
        if h.total_len != bytes.len() as u64 {
            return Err(self.fail(
                Some(seq),
                Some(offset),
                format!("the extent's header says {} bytes, {} given", h.total_len, bytes.len()),
            ));
        }
        let name = h.name.clone().unwrap_or_default();
        if self.index_seen {
            return Err(self.fail(Some(seq), Some(offset), "an extent follows the index"));
        }
        if self.finished {
            if name == INDEX_NAME {
                self.index_seen = true;
                return Ok(());
            }
            return Err(self.fail(
                Some(seq),
                Some(offset),
                format!("a `{name}` extent follows the final seal (appended after sealing)"),
            ));
        }
        if seq == 0 {
            if name != XMLTYPE_NAME {
                return Err(self.fail(
                    Some(0),
                    Some(offset),
                    "the first extent is not the type library",
                ));
            }
            let lib = crate::raw::decode_extent_bytes(bytes, false, &|n| {
                (n == XMLTYPE_NAME).then(|| Arc::new(ExtentType::xmltype()))
            })
            .map_err(|e| {
                self.fail(Some(0), Some(offset), format!("type library unreadable: {e}"))
            })?;
            self.declared = (0..lib.len())
                .any(|r| lib.bytes(r, 0).is_some_and(|x| x == self.seal_ty.xml().as_bytes()));
            if !self.declared {
                return Err(SealFailure {
                    seq: None,
                    offset: None,
                    why: format!("not sealed: the file declares no `{SEAL_TYPE_NAME}` extent type"),
                    truncated: false,
                });
            }
        }
        if self.pending.len() >= MAX_UNSEALED {
            return Err(self.fail(
                Some(seq),
                Some(offset),
                format!("{MAX_UNSEALED} extents without a seal extent (seals removed?)"),
            ));
        }
        let digest = *blake3::hash(bytes).as_bytes();
        let len = bytes.len() as u64;
        if name == SEAL_TYPE_NAME {
            let seal_ty = Arc::clone(&self.seal_ty);
            let e = crate::raw::decode_extent_bytes(bytes, false, &|n| {
                (n == SEAL_TYPE_NAME).then(|| Arc::clone(&seal_ty))
            })
            .map_err(|e| {
                self.fail(Some(seq), Some(offset), format!("seal extent unreadable: {e}"))
            })?;
            self.check_seal(seq, offset, &e)?;
            self.summary.seals += 1;
        }
        self.pending.push_back(Pending { seq, offset, len, digest });
        self.next_seq += 1;
        if self.finished {
            // The final seal extent itself is proven by its end record.
            self.pending.clear();
            self.summary.extents = self.next_seq;
            self.summary.bytes += len;
        }
        Ok(())
    }

    /// Checks the next extent of the stream from its type name, length and BLAKE3 digest,
    /// computed by the caller as the extent's bytes arrived, so that a stream's extents need
    /// not be held whole (`reanimator collect`). For every extent but the type library and
    /// seal extents, which [`StreamVerifier::extent`] must read whole; the caller's framer has
    /// checked the extent's header.
    pub fn extent_digest(
        &mut self,
        offset: u64,
        name: &str,
        len: u64,
        digest: &[u8; 32],
    ) -> std::result::Result<(), SealFailure> {
        let seq = self.next_seq;
        if seq == 0 {
            return Err(self.fail(
                Some(0),
                Some(offset),
                "the first extent is not the type library",
            ));
        }
        if name == XMLTYPE_NAME || name == SEAL_TYPE_NAME {
            return Err(self.fail(
                Some(seq),
                Some(offset),
                format!("a `{name}` extent is checked whole"),
            ));
        }
        if self.index_seen {
            return Err(self.fail(Some(seq), Some(offset), "an extent follows the index"));
        }
        if self.finished {
            if name == INDEX_NAME {
                self.index_seen = true;
                return Ok(());
            }
            return Err(self.fail(
                Some(seq),
                Some(offset),
                format!("a `{name}` extent follows the final seal (appended after sealing)"),
            ));
        }
        if self.pending.len() >= MAX_UNSEALED {
            return Err(self.fail(
                Some(seq),
                Some(offset),
                format!("{MAX_UNSEALED} extents without a seal extent (seals removed?)"),
            ));
        }
        self.pending.push_back(Pending { seq, offset, len, digest: *digest });
        self.next_seq += 1;
        Ok(())
    }

    fn check_seal(
        &mut self,
        seal_seq: u64,
        seal_offset: u64,
        e: &Extent,
    ) -> std::result::Result<(), SealFailure> {
        let at = |s: &Self, why: String| s.fail(Some(seal_seq), Some(seal_offset), why);
        if e.is_empty() {
            return Err(at(self, "empty seal extent".into()));
        }
        // Every record's fields, checked for shape first.
        let mut rows = Vec::with_capacity(e.len());
        for r in 0..e.len() {
            let serial: [u8; 16] = e
                .bytes(r, F_SERIAL)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| at(self, "seal record without a 16-byte serial".into()))?;
            let mac: [u8; 32] = e
                .bytes(r, F_MAC)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| at(self, "seal record without a 32-byte MAC".into()))?;
            let s = e.i64(r, F_SEQ).unwrap_or(-1);
            let l = e.i64(r, F_LENGTH).unwrap_or(-1);
            if s < 0 || l < 0 {
                return Err(at(self, "seal record with a negative number".into()));
            }
            let key_id = e.bytes(r, F_KEY_ID).unwrap_or_default().to_vec();
            let fin = e.bool(r, F_FINAL) == Some(true);
            rows.push(Row { serial, key_id, seq: s as u64, len: l as u64, mac, fin });
        }
        let serial = rows[0].serial;
        match self.serial {
            None => {
                self.serial = Some(serial);
                self.summary.serial = hex(&serial);
                self.key_id = Some(rows[0].key_id.clone());
                self.summary.key_id = hex(&rows[0].key_id);
            }
            Some(s) if s != serial => {
                return Err(at(self, "a seal of another file (its serial number differs)".into()))
            }
            Some(_) => {}
        }
        if rows.iter().any(|r| r.serial != serial || Some(&r.key_id) != self.key_id.as_ref()) {
            return Err(at(self, "seal records of another file (serial or key id differs)".into()));
        }
        let n = rows.len();
        for (i, Row { seq: s, len: l, mac, fin, .. }) in rows.iter().enumerate() {
            if *fin {
                if i + 1 != n {
                    return Err(at(self, "the final record is not the seal's last".into()));
                }
                if *s != seal_seq {
                    return Err(at(self, format!(
                        "the final seal says it is extent {s}, but it is extent {seal_seq}: extents were dropped or inserted"
                    )));
                }
                if let Some(p) = self.pending.front() {
                    return Err(self.fail(
                        Some(p.seq),
                        Some(p.offset),
                        "not listed by the final seal: an extent was inserted",
                    ));
                }
                if end_mac(&self.key, &serial, seal_seq, &self.prev) != *mac {
                    return Err(at(self, self.mac_hint("the final seal's MAC does not verify")));
                }
                self.finished = true;
                self.summary.complete = true;
                continue;
            }
            let Some(p) = self.pending.pop_front() else {
                return Err(at(self, format!(
                    "the seal lists extent {s}, which is missing: extents were dropped before offset {seal_offset}"
                )));
            };
            if *s != p.seq {
                return Err(self.fail(
                    Some(p.seq),
                    Some(p.offset),
                    format!("the seal lists extent {s} here: extents were dropped, duplicated or reordered"),
                ));
            }
            let want = extent_mac(&self.key, &serial, p.seq, p.len, &self.prev, &p.digest);
            if want != *mac {
                let why = if p.len != *l {
                    format!(
                        "its length is {} bytes, the seal says {l}: the extent was replaced, or extents were dropped or inserted",
                        p.len
                    )
                } else if let Some(j) = self.sealed_elsewhere(&p, &rows) {
                    format!("it holds the sealed extent {j}: extents were dropped, duplicated or reordered")
                } else if p.seq == 0 {
                    self.mac_hint("the MAC does not verify")
                } else {
                    "its MAC does not verify: the extent's bytes were modified".into()
                };
                return Err(self.fail(Some(p.seq), Some(p.offset), why));
            }
            self.prev = want;
            self.summary.extents = p.seq + 1;
            self.summary.bytes += p.len;
        }
        if let Some(p) = self.pending.front() {
            return Err(self.fail(
                Some(p.seq),
                Some(p.offset),
                "not listed by the seal that follows it: an extent was inserted",
            ));
        }
        Ok(())
    }

    /// Whether `p`'s bytes verify as another extent listed in this seal (moved extent).
    fn sealed_elsewhere(&self, p: &Pending, rows: &[Row]) -> Option<u64> {
        let serial = self.serial?;
        rows.iter().enumerate().find_map(|(k, r)| {
            if r.fin || r.len != p.len || r.seq == p.seq {
                return None;
            }
            let prev = if k == 0 { self.prev } else { rows[k - 1].mac };
            (extent_mac(&self.key, &serial, r.seq, p.len, &prev, &p.digest) == r.mac)
                .then_some(r.seq)
        })
    }

    fn mac_hint(&self, what: &str) -> String {
        format!(
            "{what} from the first extent on: the key is not the one the file was sealed with \
             (sealed with key id {}), or the file was rewritten",
            self.summary.key_id
        )
    }

    /// Ends the stream: fails when the final seal was not seen (the file was cut).
    pub fn finish(self) -> std::result::Result<SealSummary, SealFailure> {
        if !self.finished {
            let unverified = self.pending.len();
            let why = if self.summary.seals == 0 {
                format!("the file ends before its first seal: {unverified} extents unverified")
            } else {
                format!(
                    "the file ends without its final seal (cut or truncated): {} extents verified, \
                     {unverified} after the last seal unverified",
                    self.summary.extents
                )
            };
            return Err(SealFailure { seq: None, offset: None, why, truncated: true });
        }
        Ok(self.summary)
    }
}

/// The outcome of [`verify_file`].
#[derive(Debug)]
pub enum Verdict {
    /// Every extent verified and the file is complete.
    Intact(SealSummary),
    /// An extent failed, or the file was cut; the summary says how far it verified.
    Tampered(SealFailure, SealSummary),
}

/// Verifies a sealed file with the MAC key. `Err` only for trouble that says nothing about
/// tampering (the file cannot be opened, it is not DataSeries, it is not sealed).
pub fn verify_file(path: &Path, key: [u8; 32]) -> Result<Verdict> {
    let r = crate::DsReader::open(path)?;
    let mut v = StreamVerifier::new(key);
    let mut walked: Vec<(u64, String)> = Vec::new();
    for item in r.raw_extents() {
        let (offset, name, bytes) = match item {
            Ok(x) => x,
            // A writer killed while writing: the file ends inside an extent. Everything
            // before it is checked; `finish` says the file was cut.
            Err(e) if e.cut_tail().is_some() => break,
            Err(e) => {
                let s = v.summary().clone();
                let f = SealFailure {
                    seq: None,
                    offset: None,
                    why: format!("unreadable: {e}"),
                    truncated: false,
                };
                return Ok(Verdict::Tampered(f, s));
            }
        };
        if let Err(f) = v.extent(offset, &bytes) {
            if f.seq.is_none() && f.why.starts_with("not sealed") {
                return Err(Error::NotSealed { detail: f.why });
            }
            let s = v.summary().clone();
            return Ok(Verdict::Tampered(f, s));
        }
        walked.push((offset, name));
    }
    let summary = v.summary().clone();
    let summary = match v.finish() {
        Ok(s) => s,
        Err(f) => return Ok(Verdict::Tampered(f, summary)),
    };
    // The index is not MACed: it must list exactly the extents verified, and itself.
    match r.index() {
        Ok(Some(index)) => {
            if index != walked {
                let f = SealFailure {
                    seq: None,
                    offset: None,
                    why: "the index does not list the file's extents: the index was modified"
                        .into(),
                    truncated: false,
                };
                return Ok(Verdict::Tampered(f, summary));
            }
        }
        Ok(None) => {
            let f = SealFailure {
                seq: None,
                offset: None,
                why: "the file has no index and trailer after its final seal".into(),
                truncated: true,
            };
            return Ok(Verdict::Tampered(f, summary));
        }
        Err(e) => {
            let f = SealFailure {
                seq: None,
                offset: None,
                why: format!("index or trailer damaged: {e}"),
                truncated: false,
            };
            return Ok(Verdict::Tampered(f, summary));
        }
    }
    Ok(Verdict::Intact(summary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DsReader, DsWriter, WriterOptions};

    const KEY: [u8; 32] = [7; 32];

    fn ty() -> Arc<ExtentType> {
        Arc::new(
            ExtentType::builder("T")
                .field(FieldDesc::new("n", FieldType::Int64))
                .field(FieldDesc::new("v", FieldType::Variable32))
                .build()
                .unwrap(),
        )
    }

    fn opts(threads: usize) -> WriterOptions {
        WriterOptions {
            threads,
            seal: Some(SealOptions {
                key: SecretKey(KEY),
                key_id: vec![1, 2, 3, 4],
                serial: [9; 16],
            }),
            ..WriterOptions::uncompressed()
        }
    }

    /// A sealed file of `n` user extents (all the same size), with a flush (and so a seal
    /// extent) every 10 extents.
    fn sealed(path: &Path, n: usize, threads: usize) {
        let t = ty();
        let mut w = DsWriter::create(path, &[Arc::clone(&t)], opts(threads)).unwrap();
        for i in 0..n {
            let mut b = ExtentBuilder::new(Arc::clone(&t));
            for r in 0..20 {
                b.start_record();
                b.set(0, Value::Int64((i * 100 + r) as i64)).unwrap();
                b.set(1, Value::Bytes(format!("payload {i:05} {r:03}").as_bytes())).unwrap();
            }
            w.write_extent(b).unwrap();
            if i % 10 == 9 {
                w.flush().unwrap();
            }
        }
        w.finish().unwrap();
    }

    /// A file's header, its extents (type name, bytes) and its trailer.
    type Parts = (Vec<u8>, Vec<(String, Vec<u8>)>, Vec<u8>);

    fn parts(path: &Path) -> Parts {
        let all = std::fs::read(path).unwrap();
        let r = DsReader::open(path).unwrap();
        let ext: Vec<(String, Vec<u8>)> =
            r.raw_extents().map(|x| x.unwrap()).map(|(_, n, b)| (n, b)).collect();
        (all[..40].to_vec(), ext, all[all.len() - 28..].to_vec())
    }

    fn join(path: &Path, head: &[u8], ext: &[(String, Vec<u8>)], tail: &[u8]) {
        let mut out = head.to_vec();
        for (_, b) in ext {
            out.extend_from_slice(b);
        }
        out.extend_from_slice(tail);
        std::fs::write(path, out).unwrap();
    }

    fn verdict(path: &Path, key: [u8; 32]) -> std::result::Result<SealSummary, SealFailure> {
        match verify_file(path, key).unwrap() {
            Verdict::Intact(s) => Ok(s),
            Verdict::Tampered(f, _) => Err(f),
        }
    }

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ds-seal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_sealed_file_verifies_and_reads_like_any_other() {
        let d = dir("intact");
        for threads in [0, 2] {
            let p = d.join(format!("s{threads}.ds"));
            sealed(&p, 150, threads);
            let s = verdict(&p, KEY).unwrap();
            assert!(s.complete);
            assert_eq!(s.serial, "09".repeat(16));
            assert_eq!(s.key_id, "01020304");
            // 150 user extents, the XmlType extent, and the seal extents.
            let r = DsReader::open(&p).unwrap();
            let seals =
                r.headers().filter(|h| h.as_ref().unwrap().type_name == SEAL_TYPE_NAME).count();
            assert_eq!(s.seals as usize, seals);
            assert!(seals >= 15, "{seals}");
            assert_eq!(s.extents as usize, 1 + 150 + seals);
            let records: usize = r.extents_of("T").map(|e| e.unwrap().len()).sum();
            assert_eq!(records, 150 * 20);
            assert!(r.verify_index().unwrap().is_some());
        }
    }

    #[test]
    fn every_kind_of_tampering_is_found_and_named() {
        let d = dir("tamper");
        let p = d.join("s.ds");
        sealed(&p, 40, 2);
        let (head, ext, tail) = parts(&p);
        let user: Vec<usize> = (0..ext.len()).filter(|&i| ext[i].0 == "T").collect();
        let t = d.join("t.ds");

        // A modified byte in the middle of a user extent.
        let k = user[5];
        let mut e = ext.clone();
        let mid = e[k].1.len() / 2;
        e[k].1[mid] ^= 1;
        join(&t, &head, &e, &tail);
        let f = verdict(&t, KEY).unwrap_err();
        assert_eq!(f.seq, Some(k as u64), "{f}");
        assert!(f.why.contains("modified"), "{f}");

        // A dropped extent.
        let mut e = ext.clone();
        e.remove(user[7]);
        join(&t, &head, &e, &tail);
        let f = verdict(&t, KEY).unwrap_err();
        assert_eq!(f.seq, Some(user[7] as u64), "{f}");
        assert!(f.why.contains("dropped"), "{f}");

        // A duplicated extent.
        let mut e = ext.clone();
        e.insert(user[3], ext[user[3]].clone());
        join(&t, &head, &e, &tail);
        let f = verdict(&t, KEY).unwrap_err();
        assert_eq!(f.seq, Some(user[3] as u64 + 1), "{f}");
        assert!(f.why.contains("sealed extent"), "{f}");

        // Two extents of the same size swapped.
        let (a, b) = (user[1], user[2]);
        assert_eq!(ext[a].1.len(), ext[b].1.len());
        let mut e = ext.clone();
        e.swap(a, b);
        join(&t, &head, &e, &tail);
        let f = verdict(&t, KEY).unwrap_err();
        assert_eq!(f.seq, Some(a as u64), "{f}");
        assert!(f.why.contains("reordered"), "{f}");

        // Cut after an extent (as a killed writer leaves it): everything before verifies, the
        // end is missing.
        let e = ext[..user[25]].to_vec();
        join(&t, &head, &e, &[]);
        let f = verdict(&t, KEY).unwrap_err();
        assert!(f.truncated, "{f}");
        assert!(f.why.contains("without its final seal"), "{f}");

        // An extent appended after the final seal (before the index).
        let mut e = ext.clone();
        let n = e.len();
        e.insert(n - 1, ext[user[0]].clone());
        join(&t, &head, &e, &tail);
        let f = verdict(&t, KEY).unwrap_err();
        assert!(f.why.contains("follows the final seal"), "{f}");

        // The wrong key.
        let f = verdict(&p, [8; 32]).unwrap_err();
        assert_eq!(f.seq, Some(0), "{f}");
        assert!(f.why.contains("key"), "{f}");

        // The index rewritten to point elsewhere (its own checksums made right: rebuilt by
        // a writer would be the attacker's way; here, a trailer that no longer matches).
        let mut e = ext.clone();
        let last = e.len() - 1;
        let m = e[last].1.len() - 3;
        e[last].1[m] ^= 0x40;
        join(&t, &head, &e, &tail);
        assert!(verdict(&t, KEY).is_err());
    }

    #[test]
    fn an_unsealed_file_is_trouble_not_tampering() {
        let d = dir("unsealed");
        let p = d.join("u.ds");
        let t = ty();
        let mut w = DsWriter::create(&p, &[Arc::clone(&t)], WriterOptions::uncompressed()).unwrap();
        let mut b = ExtentBuilder::new(t);
        b.start_record();
        b.set(0, Value::Int64(1)).unwrap();
        b.set(1, Value::Bytes(b"x")).unwrap();
        w.write_extent(b).unwrap();
        w.finish().unwrap();
        let e = verify_file(&p, KEY).unwrap_err();
        assert!(e.to_string().contains("not sealed"), "{e}");
    }

    /// Extents given by digest verify as the same extents given whole; a changed one is found
    /// at its seal.
    #[test]
    fn extents_given_by_digest_verify_like_whole_ones() {
        let d = dir("digest");
        let p = d.join("s.ds");
        sealed(&p, 30, 0);
        let (_, ext, _) = parts(&p);
        let run = |flip: Option<usize>| {
            let mut v = StreamVerifier::new(KEY);
            let mut off = 40;
            for (i, (name, b)) in ext.iter().enumerate() {
                let mut b = b.clone();
                if flip == Some(i) {
                    let m = b.len() / 2;
                    b[m] ^= 1;
                }
                if name == XMLTYPE_NAME || name == SEAL_TYPE_NAME {
                    v.extent(off, &b)?;
                } else {
                    v.extent_digest(off, name, b.len() as u64, blake3::hash(&b).as_bytes())?;
                }
                off += b.len() as u64;
            }
            v.finish()
        };
        let s = run(None).unwrap();
        assert!(s.complete);
        let user = ext.iter().position(|(n, _)| n == "T").unwrap();
        let f = run(Some(user)).unwrap_err();
        assert_eq!(f.seq, Some(user as u64), "{f}");
        assert!(f.why.contains("modified"), "{f}");
        // The type library and seal extents are not taken by digest.
        let mut v = StreamVerifier::new(KEY);
        assert!(v.extent_digest(40, "T", 10, &[0; 32]).is_err());
    }

    #[test]
    fn the_stream_verifier_takes_any_input_without_panicking() {
        let d = dir("garbage");
        let p = d.join("s.ds");
        sealed(&p, 12, 0);
        let (_, ext, _) = parts(&p);
        let mut v = StreamVerifier::new(KEY);
        let mut off = 40;
        for (_, b) in &ext {
            v.extent(off, b).unwrap();
            off += b.len() as u64;
        }
        assert!(v.finish().unwrap().complete);
        // Every truncation of every extent, and junk.
        for (i, (_, b)) in ext.iter().enumerate().take(4) {
            for cut in [0, 1, 7, 31, b.len() / 2, b.len() - 1] {
                let mut v = StreamVerifier::new(KEY);
                for (_, b) in &ext[..i] {
                    v.extent(0, b).unwrap();
                }
                assert!(v.extent(0, &b[..cut]).is_err());
            }
        }
        let mut v = StreamVerifier::new(KEY);
        assert!(v.extent(0, &[0xff; 100]).is_err());
    }
}
