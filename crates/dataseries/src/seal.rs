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
//! anywhere before it lacks it. The bytes no MAC covers are fixed by the ones it does: the
//! file header, the final seal extent, the index extent and the trailer must be exactly what a
//! sealing writer writes (the final seal and the index uncompressed), so `check` — which
//! [`verify_file`] and every [`DsReader`](crate::DsReader) opened with a [`SealKey`] run —
//! rebuilds them from the verified extents and compares byte for byte.

use std::collections::VecDeque;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::codec::{self, RawHeader};
use crate::hash::{bjhash, mix3};
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

/// The key a reader checks seals with: the MAC key (the key file's seal key, not its master
/// key) and the key's public id, so that a file sealed with another key is told apart from a
/// tampered one.
#[derive(Clone, Debug)]
pub struct SealKey {
    /// The MAC key.
    pub mac: SecretKey,
    /// The key's public id (what a sealing writer stores as `key_id`).
    pub id: [u8; 8],
}

static CHECK_KEY: OnceLock<SealKey> = OnceLock::new();

/// From now on, [`DsReader::open`](crate::DsReader::open) checks the seal of every file it
/// opens with this key (the command line's `--key` for the commands that read traces): a file
/// that is not sealed, or whose seal does not verify, fails to open. Set once per process;
/// later calls are ignored.
pub fn set_check_key(key: SealKey) {
    let _ = CHECK_KEY.set(key);
}

/// The key set by [`set_check_key`].
pub fn check_key() -> Option<&'static SealKey> {
    CHECK_KEY.get()
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

/// What kind of failure a [`SealFailure`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// Bytes were changed, dropped, added or moved (or the file is no sealed DataSeries file).
    Tampered,
    /// The file ends early: without its final seal, its index and trailer, or (encrypted) its
    /// last chunk. What comes before may verify.
    Cut,
    /// The file declares no seal type: never sealed, or its seal was removed.
    NotSealed,
    /// The key is not the one the file was sealed with (the stored key id differs, and the
    /// MACs do not verify with the key given).
    WrongKey,
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
    /// What kind of failure it is.
    pub kind: FailureKind,
}

impl SealFailure {
    fn new(
        kind: FailureKind,
        seq: Option<u64>,
        offset: Option<u64>,
        why: impl Into<String>,
    ) -> Self {
        SealFailure { seq, offset, why: why.into(), kind }
    }

    /// The file ends early (no final seal, index, trailer or last encrypted chunk).
    pub fn is_cut(&self) -> bool {
        self.kind == FailureKind::Cut
    }
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

/// What a reader's seal check at open established ([`DsReader::seal_status`](crate::DsReader::seal_status)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealStatus {
    /// What verified.
    pub summary: SealSummary,
    /// The file ends early ([`FailureKind::Cut`]): why; `None` when it is whole.
    pub cut: Option<SealFailure>,
    /// Bytes after the verified part (a cut file's extents after its last seal, not
    /// verified): the reader leaves them out.
    pub left_out: u64,
    /// Where the verified part ends.
    pub end: u64,
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
    /// Kept when the verifier records what it verified.
    header: Option<RawHeader>,
}

/// One extent whose MAC verified: where it is, its header, and the BLAKE3 digest of its
/// bytes (a reader checks the bytes it reads later against it).
#[derive(Clone, Debug)]
pub(crate) struct SealedExtent {
    pub offset: u64,
    pub header: RawHeader,
    pub digest: [u8; 32],
}

/// Verifies a sealed DataSeries stream extent by extent: feed every extent's bytes in file
/// order (the XmlType extent first) to [`StreamVerifier::extent`], then call
/// [`StreamVerifier::finish`]. Memory: one digest per extent since the last seal extent (at
/// most 65,536), plus the seal extent being checked.
pub struct StreamVerifier {
    key: [u8; 32],
    /// The id of `key`, when known: a stored key id that differs is then either another key
    /// (the MACs fail) or a forged id (they verify).
    expect_id: Option<Vec<u8>>,
    /// Extents verified so far, when recording ([`StreamVerifier::recording`]).
    record: Option<Vec<SealedExtent>>,
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
            expect_id: None,
            record: None,
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

    /// A verifier that knows the key's public id too: a file sealed with another key is then
    /// a [`FailureKind::WrongKey`], a changed key id a [`FailureKind::Tampered`].
    pub fn for_key(key: &SealKey) -> Self {
        let mut v = StreamVerifier::new(key.mac.0);
        v.expect_id = Some(key.id.to_vec());
        v
    }

    /// Keep every verified extent's offset, header and digest (for a reader's later checks).
    fn recording(mut self) -> Self {
        self.record = Some(Vec::new());
        self
    }

    /// The summary so far.
    pub fn summary(&self) -> &SealSummary {
        &self.summary
    }

    /// Whether the final seal has been seen (only the index may follow).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn fail(&self, seq: Option<u64>, offset: Option<u64>, why: impl Into<String>) -> SealFailure {
        SealFailure::new(FailureKind::Tampered, seq, offset, why)
    }

    fn verified(&mut self, offset: u64, header: Option<RawHeader>, digest: [u8; 32]) {
        if let (Some(r), Some(header)) = (self.record.as_mut(), header) {
            r.push(SealedExtent { offset, header, digest });
        }
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
            let lib =
                codec::decode_extent(std::borrow::Cow::Borrowed(bytes), false, offset, &|n| {
                    (n == XMLTYPE_NAME).then(|| Arc::new(ExtentType::xmltype()))
                })
                .map_err(|e| {
                    self.fail(Some(0), Some(offset), format!("type library unreadable: {e}"))
                })?;
            self.declared = (0..lib.len())
                .any(|r| lib.bytes(r, 0).is_some_and(|x| x == self.seal_ty.xml().as_bytes()));
            if !self.declared {
                return Err(SealFailure::new(
                    FailureKind::NotSealed,
                    None,
                    None,
                    format!(
                        "it declares no `{SEAL_TYPE_NAME}` extent type (it was written without \
                         a seal, or its seal was removed)"
                    ),
                ));
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
            let e = codec::decode_extent(std::borrow::Cow::Borrowed(bytes), false, offset, &|n| {
                (n == SEAL_TYPE_NAME).then(|| Arc::clone(&seal_ty))
            })
            .map_err(|e| {
                self.fail(Some(seq), Some(offset), format!("seal extent unreadable: {e}"))
            })?;
            self.check_seal(seq, offset, &e)?;
            self.summary.seals += 1;
            if self.finished && reencode(&e).ok().as_deref() != Some(bytes) {
                // No MAC covers the final seal extent's own bytes: its records are each
                // proven, and their encoding must be the one a sealing writer writes.
                return Err(self.fail(
                    Some(seq),
                    Some(offset),
                    "the final seal is not stored as a sealing writer stores it (uncompressed, \
                     in its canonical encoding): it was rewritten",
                ));
            }
        }
        let header = self.record.is_some().then_some(h);
        self.pending.push_back(Pending { seq, offset, len, digest, header });
        self.next_seq += 1;
        if self.finished {
            // The final seal extent itself is proven by its end record and its encoding.
            if let Some(p) = self.pending.pop_back() {
                self.verified(p.offset, p.header, p.digest);
            }
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
        // (A stream checked this way keeps no record of what it verified.)
        self.pending.push_back(Pending { seq, offset, len, digest: *digest, header: None });
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
                if let Some(want) = self.expect_id.clone().filter(|w| *w != rows[0].key_id) {
                    // Another key, or this key's seal with its key id changed: the MAC of the
                    // first extent tells.
                    let ours = self.pending.front().is_some_and(|p| {
                        p.seq == rows[0].seq
                            && extent_mac(&self.key, &serial, p.seq, p.len, &self.prev, &p.digest)
                                == rows[0].mac
                    });
                    let (stored, given) = (hex(&rows[0].key_id), hex(&want));
                    return Err(if ours {
                        at(
                            self,
                            format!(
                            "the seal names key {stored}, but its MACs are those of the key given \
                             ({given}): its key id was changed"
                        ),
                        )
                    } else {
                        SealFailure::new(FailureKind::WrongKey, None, None, format!(
                            "sealed with key {stored}, not with the key given ({given}): give the key file it was sealed with"
                        ))
                    });
                }
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
            self.verified(p.offset, p.header, p.digest);
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
        if self.expect_id.is_some() {
            // The stored key id is the key's own: not another key.
            return format!("{what}: the file was modified or rewritten");
        }
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
            return Err(SealFailure::new(FailureKind::Cut, None, None, why));
        }
        Ok(self.summary)
    }
}

/// An extent encoded again from its decoded records, uncompressed: what a sealing writer
/// writes for its final seal and its index (the same builder, fields set in order).
fn reencode(e: &Extent) -> Result<Vec<u8>> {
    let ty = e.extent_type();
    let mut b = ExtentBuilder::new(Arc::clone(ty));
    for r in 0..e.len() {
        b.start_record();
        for f in 0..ty.fields().len() {
            b.set(f, e.value(r, f))?;
        }
    }
    crate::raw::encode_extent(&b, &[], 6)
}

/// The index extent a sealing writer writes for these extents (`(offset, type name)` in file
/// order, the index's own entry last), uncompressed.
fn index_bytes(extents: &[(u64, String)]) -> Result<Vec<u8>> {
    let mut b = ExtentBuilder::new(Arc::new(ExtentType::index_type()));
    for (off, name) in extents {
        b.start_record();
        b.set(0, Value::Int64(*off as i64))?;
        b.set(1, Value::Bytes(name.as_bytes()))?;
    }
    crate::raw::encode_extent(&b, &[], 6)
}

/// The trailer a writer writes after an index of `packed` bytes at `index_offset`, with the
/// chained checksum of every extent.
fn trailer_bytes(packed: u64, chained: u32, index_offset: u64) -> [u8; 28] {
    let packed = packed as i32;
    let mut t = [0u8; 28];
    t[0..4].copy_from_slice(&[0xff; 4]);
    t[4..8].copy_from_slice(&packed.to_le_bytes());
    t[8..12].copy_from_slice(&(!packed).to_le_bytes());
    t[12..16].copy_from_slice(&chained.to_le_bytes());
    t[16..24].copy_from_slice(&(index_offset as i64).to_le_bytes());
    let h = bjhash(1776, &t[..24]);
    t[24..28].copy_from_slice(&h.to_le_bytes());
    t
}

/// What [`check`] established about a sealed file.
#[derive(Debug)]
pub(crate) struct Checked {
    /// What verified.
    pub summary: SealSummary,
    /// The first failure (`None`: intact). For [`FailureKind::Cut`], `extents` and `end` say
    /// what verified before the cut; for any other, nothing is kept.
    pub failure: Option<SealFailure>,
    /// Every extent verified, in file order (when recording): for a whole file all of them,
    /// the index included; for a cut one those its seals list.
    pub extents: Vec<SealedExtent>,
    /// Where the verified part of the file ends.
    pub end: u64,
}

/// An error and its causes, `a: b` (an I/O error's context and what the system said, an
/// encrypted chunk that fails authentication).
fn with_causes(e: &Error) -> String {
    let mut t = e.to_string();
    let mut c = std::error::Error::source(e);
    while let Some(s) = c {
        let st = s.to_string();
        if !t.ends_with(&st) {
            t.push_str(": ");
            t.push_str(&st);
        }
        c = s.source();
    }
    t
}

fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()))
}

/// Checks a whole sealed file: its header, every extent's MAC in file order, the final seal,
/// and the index and trailer, which must be exactly those a sealing writer writes for the
/// verified extents. [`Checked::failure`] is the first failure; a cut file ([`FailureKind::Cut`])
/// also gives what verified before the cut. With `record`, keeps every verified extent's
/// header and digest.
pub(crate) fn check(r: &crate::DsReader, key: &SealKey, record: bool) -> Checked {
    let mut v = StreamVerifier::for_key(key);
    if record {
        v = v.recording();
    }
    let len = r.file_len();
    let failed = |v: &StreamVerifier, f: SealFailure| Checked {
        summary: v.summary.clone(),
        failure: Some(f),
        extents: Vec::new(),
        end: 0,
    };
    let tampered = |v: &StreamVerifier, offset: Option<u64>, why: String| {
        failed(v, SealFailure::new(FailureKind::Tampered, None, offset, why))
    };
    let head = match r.read_bytes(0, crate::reader::FILE_HEADER_LEN as usize) {
        Ok(h) => h,
        Err(e) => return tampered(&v, Some(0), format!("unreadable: {}", with_causes(&e))),
    };
    let want = crate::writer::file_header();
    if head != want {
        let at = first_difference(&head, &want);
        return tampered(
            &v,
            Some(0),
            format!(
                "the file header differs from the one a sealing writer writes (at byte {at}): \
                 it was modified"
            ),
        );
    }
    let mut pos = crate::reader::FILE_HEADER_LEN;
    // (offset, type name) of every extent, for the index; the trailer's chained checksum.
    let mut walked: Vec<(u64, String)> = Vec::new();
    let mut chained = 0u32;
    let mut index: Option<(u64, Vec<u8>, RawHeader)> = None;
    let mut trailer_seen = false;
    let mut cut_why: Option<String> = None;
    while pos < len {
        let rem = len - pos;
        if let Some((io, ib, _)) = &index {
            // Only the trailer may follow the index.
            let at = Some(pos);
            if rem < 28 {
                cut_why = Some(format!("the file ends inside its trailer (at offset {pos})"));
                break;
            }
            if rem > 28 {
                return tampered(&v, at, format!("{} bytes follow the index", rem - 28));
            }
            let t = match r.read_bytes(pos, 28) {
                Ok(t) => t,
                Err(e) => {
                    return tampered(&v, at, format!("unreadable trailer: {}", with_causes(&e)))
                }
            };
            if t != trailer_bytes(ib.len() as u64, chained, *io) {
                return tampered(
                    &v,
                    at,
                    "the trailer is not the one a writer writes after this index (its sizes, \
                     offset or checksums were changed)"
                        .into(),
                );
            }
            trailer_seen = true;
            break;
        }
        let h = match r.header_at(pos) {
            Ok(h) => h,
            Err(e) if e.cut_short() => {
                cut_why = Some(format!("the file ends inside the extent at offset {pos}"));
                break;
            }
            Err(e) => {
                return tampered(&v, Some(pos), format!("unreadable extent: {}", with_causes(&e)))
            }
        };
        let bytes = match r.read_bytes(pos, h.total_len as usize) {
            Ok(b) => b,
            Err(e) => {
                return tampered(&v, Some(pos), format!("unreadable extent: {}", with_causes(&e)))
            }
        };
        let name = h.name_lossy();
        let is_index = v.is_finished() && name == INDEX_NAME;
        if let Err(f) = v.extent(pos, &bytes) {
            return failed(&v, f);
        }
        chained = mix3(h.bjhash ^ h.adler, chained, 1972);
        walked.push((pos, name));
        if is_index {
            index = Some((pos, bytes, h.clone()));
        }
        pos += h.total_len;
    }
    let encrypted_cut = r.encryption().filter(|e| !e.complete);
    if !v.is_finished() {
        let mut extents = v.record.take().unwrap_or_default();
        let end = extents.last().map_or(0, |e| e.offset + e.header.total_len);
        let summary = v.summary.clone();
        let mut f = match v.finish() {
            Err(f) => f,
            Ok(_) => unreachable!("not finished"),
        };
        if let Some(why) = cut_why {
            f.why = format!("{why}: {}", f.why);
        }
        if let Some(e) = encrypted_cut {
            f.why = format!(
                "the encrypted file lacks its last chunk (it ends after {} whole chunks): {}",
                e.chunks, f.why
            );
        }
        if !record {
            extents.clear();
        }
        return Checked { summary, failure: Some(f), extents, end };
    }
    let summary = v.summary.clone();
    let mut extents = v.record.take().unwrap_or_default();
    let mut end = extents.last().map_or(0, |e| e.offset + e.header.total_len);
    let cut = |why: String| Some(SealFailure::new(FailureKind::Cut, None, None, why));
    let mut cut_failure = None;
    match &index {
        None => {
            cut_failure = cut(format!(
                "{}the file ends after its final seal, without its index and trailer",
                cut_why.map(|w| format!("{w}: ")).unwrap_or_default()
            ));
        }
        Some((io, ib, ih)) => {
            match index_bytes(&walked) {
                Ok(want) if want == *ib => {}
                _ => {
                    return tampered(
                        &v,
                        Some(*io),
                        "the index is not the one a sealing writer writes for these extents \
                         (uncompressed, listing every extent): it was rewritten"
                            .into(),
                    )
                }
            }
            if record {
                extents.push(SealedExtent {
                    offset: *io,
                    header: ih.clone(),
                    digest: *blake3::hash(ib).as_bytes(),
                });
                end = io + ib.len() as u64;
            }
            if !trailer_seen {
                cut_failure = cut(cut_why.unwrap_or_else(|| {
                    "the file ends after its index, without its trailer".into()
                }));
            }
        }
    }
    if let Some(e) = encrypted_cut {
        let why =
            format!("the encrypted file lacks its last chunk (it ends after {} chunks)", e.chunks);
        cut_failure = cut(match cut_failure {
            Some(f) => format!("{why}: {}", f.why),
            None => why,
        });
    }
    if !record {
        extents.clear();
    }
    Checked { summary, failure: cut_failure, extents, end }
}

/// The outcome of [`verify_file`].
#[derive(Debug)]
pub enum Verdict {
    /// Every extent verified and the file is complete.
    Intact(SealSummary),
    /// The file was changed, cut, is not sealed or is no DataSeries file at all; the summary
    /// says how far it verified.
    Tampered(SealFailure, SealSummary),
}

/// Verifies a sealed file with a key (`reanimator verify`). `Err` only for trouble that says
/// nothing of the file's content: it cannot be opened, or it was sealed (or encrypted) with
/// another key ([`Error::Seal`] of kind [`FailureKind::WrongKey`], [`Error::EncryptionKey`]).
/// Everything else is a verdict: a file that is not DataSeries, not sealed, damaged, cut or
/// changed anywhere is [`Verdict::Tampered`].
pub fn verify_file(path: &Path, key: &SealKey) -> Result<Verdict> {
    std::fs::File::open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    let unreadable = |e: Error| {
        Verdict::Tampered(
            SealFailure::new(
                FailureKind::Tampered,
                None,
                None,
                format!("unreadable: {}", with_causes(&e)),
            ),
            SealSummary::default(),
        )
    };
    let r = match crate::DsReader::open_with(path, None) {
        Ok(r) => r,
        Err(e @ (Error::EncryptionKey { .. } | Error::Io { .. })) if !e.is_tampering() => {
            return Err(e)
        }
        Err(e) => return Ok(unreadable(e)),
    };
    let c = check(&r, key, false);
    match c.failure {
        None => Ok(Verdict::Intact(c.summary)),
        Some(f) if f.kind == FailureKind::WrongKey => Err(Error::Seal(f)),
        Some(f) => Ok(Verdict::Tampered(f, c.summary)),
    }
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
                key_id: vec![1, 2, 3, 4, 0, 0, 0, 0],
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

    fn seal_key(key: [u8; 32]) -> SealKey {
        SealKey { mac: SecretKey(key), id: [1, 2, 3, 4, 0, 0, 0, 0] }
    }

    fn verdict(path: &Path, key: [u8; 32]) -> std::result::Result<SealSummary, SealFailure> {
        match verify_file(path, &seal_key(key)) {
            Ok(Verdict::Intact(s)) => Ok(s),
            Ok(Verdict::Tampered(f, _)) => Err(f),
            Err(Error::Seal(f)) => Err(f),
            Err(e) => panic!("{e}"),
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
            assert_eq!(s.key_id, "0102030400000000");
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
        assert!(f.is_cut(), "{f}");
        assert!(f.why.contains("without its final seal"), "{f}");

        // An extent appended after the final seal (before the index).
        let mut e = ext.clone();
        let n = e.len();
        e.insert(n - 1, ext[user[0]].clone());
        join(&t, &head, &e, &tail);
        let f = verdict(&t, KEY).unwrap_err();
        assert!(f.why.contains("follows the final seal"), "{f}");

        // The wrong key: its id differs from the stored one, and the MACs do not verify.
        let wrong = SealKey { mac: SecretKey([8; 32]), id: [9; 8] };
        let e = verify_file(&p, &wrong).unwrap_err();
        assert!(matches!(&e, Error::Seal(f) if f.kind == FailureKind::WrongKey), "{e}");
        // The right key, the stored key id changed: tampering.
        let f = match verify_file(&p, &SealKey { mac: SecretKey(KEY), id: [9; 8] }).unwrap() {
            Verdict::Tampered(f, _) => f,
            v => panic!("{v:?}"),
        };
        assert!(f.why.contains("key id was changed"), "{f}");
        // Another key with the same id: the MACs fail from the first extent on.
        let f = verdict(&p, [8; 32]).unwrap_err();
        assert_eq!(f.seq, Some(0), "{f}");
        assert_eq!(f.kind, FailureKind::Tampered, "{f}");

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
    fn an_unsealed_file_fails_as_not_sealed() {
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
        let f = verdict(&p, KEY).unwrap_err();
        assert_eq!(f.kind, FailureKind::NotSealed, "{f}");
        assert!(f.why.contains("declares no"), "{f}");
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

    /// The checksums of the extent at `range` made right again (anyone can), so that only the
    /// seal can tell.
    fn reseal_at(file: &mut [u8], at: usize, len: usize) {
        let t = ty();
        let seal = Arc::new(seal_type());
        let lookup = |n: &str| match n {
            "T" => Some(Arc::clone(&t)),
            SEAL_TYPE_NAME => Some(Arc::clone(&seal)),
            INDEX_NAME => Some(Arc::new(ExtentType::index_type())),
            _ => None,
        };
        crate::raw::reseal_extent(&mut file[at..at + len], false, &lookup).unwrap();
    }

    fn layout(path: &Path) -> Vec<(usize, String, usize)> {
        let r = DsReader::open_with(path, None).unwrap();
        r.raw_extents().map(|x| x.unwrap()).map(|(o, n, b)| (o as usize, n, b.len())).collect()
    }

    fn seal_err(r: Result<DsReader>) -> SealFailure {
        match r {
            Err(Error::Seal(f)) => f,
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("opened"),
        }
    }

    #[test]
    fn a_reader_given_the_key_refuses_a_changed_extent_and_names_it() {
        let d = dir("reader-tamper");
        let p = d.join("s.ds");
        sealed(&p, 30, 0);
        let key = seal_key(KEY);
        // Intact: opens, and reads every record.
        let r = DsReader::open_with(&p, Some(&key)).unwrap();
        let s = r.seal_status().unwrap();
        assert!(s.cut.is_none() && s.summary.complete, "{s:?}");
        assert!(r.incomplete().is_none());
        assert_eq!(r.extents_of("T").map(|e| e.unwrap().len()).sum::<usize>(), 30 * 20);

        let lay = layout(&p);
        let bytes = std::fs::read(&p).unwrap();
        let (o, _, l) = lay.iter().filter(|x| x.1 == "T").nth(17).unwrap().clone();
        let mut b = bytes.clone();
        b[o + l - 9] ^= 0x20;
        reseal_at(&mut b, o, l);
        let t = d.join("t.ds");
        std::fs::write(&t, &b).unwrap();
        // Without the key, a reader takes it: its checksums are right.
        let plain = DsReader::open_with(&t, None).unwrap();
        assert!(plain.extents().all(|e| e.is_ok()));
        // With it, the extent is named.
        let f = seal_err(DsReader::open_with(&t, Some(&key)));
        assert_eq!(f.offset, Some(o as u64), "{f}");
        assert_eq!(f.kind, FailureKind::Tampered, "{f}");
        assert!(f.why.contains("modified"), "{f}");
        assert!(Error::Seal(f).is_tampering());

        // Not sealed: refused, unless encrypted.
        let u = d.join("u.ds");
        let mut w = DsWriter::create(&u, &[ty()], WriterOptions::uncompressed()).unwrap();
        let mut e = ExtentBuilder::new(ty());
        e.start_record();
        e.set(0, Value::Int64(1)).unwrap();
        e.set(1, Value::Bytes(b"x")).unwrap();
        w.write_extent(e).unwrap();
        w.finish().unwrap();
        assert_eq!(seal_err(DsReader::open_with(&u, Some(&key))).kind, FailureKind::NotSealed);
        assert!(DsReader::open_with(&u, None).is_ok());

        // Another key: said so, and not tampering.
        let f = seal_err(DsReader::open_with(
            &p,
            Some(&SealKey { mac: SecretKey([8; 32]), id: [9; 8] }),
        ));
        assert_eq!(f.kind, FailureKind::WrongKey, "{f}");
        assert!(!Error::Seal(f).is_tampering());
    }

    #[test]
    fn a_reader_given_the_key_reads_a_cut_file_up_to_its_last_seal() {
        let d = dir("reader-cut");
        let p = d.join("s.ds");
        // A flush (and a seal) every 10 extents.
        sealed(&p, 35, 0);
        let key = seal_key(KEY);
        let lay = layout(&p);
        let bytes = std::fs::read(&p).unwrap();
        let t = d.join("t.ds");
        // Cut inside the 35th user extent: the 30 before the last seal verify; the 4 after
        // it, whole as they are, are left out.
        let (o, _, l) = lay.iter().filter(|x| x.1 == "T").nth(34).unwrap().clone();
        std::fs::write(&t, &bytes[..o + l / 2]).unwrap();
        let without = DsReader::open_with(&t, None).unwrap();
        assert_eq!(without.extents_of("T").filter_map(|e| e.ok()).count(), 34);
        let r = DsReader::open_with(&t, Some(&key)).unwrap();
        let s = r.seal_status().unwrap().clone();
        let cut = s.cut.as_ref().expect("cut");
        assert!(cut.is_cut(), "{cut}");
        let last_seal = lay
            .iter()
            .filter(|x| x.1 == SEAL_TYPE_NAME)
            .map(|x| x.0)
            .filter(|&x| x < o)
            .max()
            .unwrap();
        assert_eq!(s.end, last_seal as u64);
        assert_eq!(s.left_out, (o + l / 2 - last_seal) as u64);
        assert_eq!(r.extents_of("T").map(|e| e.unwrap().len()).sum::<usize>(), 30 * 20);
        assert_eq!(r.trailer_status(), crate::TrailerStatus::Missing);
        let i = r.incomplete().expect("noted");
        assert!(i.seal_cut.is_some(), "{i}");
        assert!(i.to_string().contains("left out"), "{i}");
        // Cut before its first seal: nothing is verified, and it does not open.
        let first = lay.iter().find(|x| x.1 == SEAL_TYPE_NAME).unwrap().0;
        std::fs::write(&t, &bytes[..first]).unwrap();
        assert_eq!(seal_err(DsReader::open_with(&t, Some(&key))).kind, FailureKind::Cut);
    }

    #[test]
    fn a_reader_given_the_key_checks_every_extent_it_reads_later() {
        let d = dir("reader-toctou");
        let p = d.join("s.ds");
        sealed(&p, 20, 0);
        let key = seal_key(KEY);
        let r = DsReader::open_with(&p, Some(&key)).unwrap();
        let lay = layout(&p);
        // The file changes after the check at open (checksums made right).
        let (o, _, l) = lay.iter().filter(|x| x.1 == "T").nth(12).unwrap().clone();
        let mut b = std::fs::read(&p).unwrap();
        b[o + l - 9] ^= 0x20;
        reseal_at(&mut b, o, l);
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &b[o..o + l], o as u64).unwrap();
        drop(f);
        for threads in [0, 2] {
            let opts = crate::StreamOptions { threads, ..Default::default() };
            let e = r.extents_with(&opts).find_map(|e| e.err()).expect("refused");
            let f = e.seal_failure().unwrap_or_else(|| panic!("{e}"));
            assert_eq!(f.offset, Some(o as u64), "{f}");
            assert!(f.why.contains("changed while being read"), "{f}");
        }
        let e = r.read_extent_at(o as u64).unwrap_err();
        assert!(e.seal_failure().is_some(), "{e}");
        let mut m = r.clone();
        if m.map_file() {
            assert!(m.read_extent_at(o as u64).unwrap_err().seal_failure().is_some());
        }
        assert!(r.raw_extents().any(|x| x.is_err()));
    }

    #[test]
    fn the_bytes_no_mac_covers_must_be_the_writers() {
        let d = dir("canonical");
        let p = d.join("s.ds");
        sealed(&p, 12, 0);
        let bytes = std::fs::read(&p).unwrap();
        let lay = layout(&p);
        let t = d.join("t.ds");
        let n = bytes.len();
        let check = |b: &[u8], what: &str| {
            std::fs::write(&t, b).unwrap();
            let f = verdict(&t, KEY).expect_err(what);
            assert_eq!(f.kind, FailureKind::Tampered, "{what}: {f}");
            seal_err(DsReader::open_with(&t, Some(&seal_key(KEY))));
            // Every reader without the key takes these.
            DsReader::open_with(&t, None).unwrap_or_else(|e| panic!("{what}: {e}"));
        };
        // The file header's NaN: another payload, still a NaN.
        let mut b = bytes.clone();
        b[32] ^= 1;
        check(&b, "NaN payload");
        // The trailer's chained checksum, its hash made right.
        let mut b = bytes.clone();
        b[n - 16] ^= 1;
        let mut tr: [u8; 28] = b[n - 28..].try_into().unwrap();
        crate::raw::reseal_trailer(&mut tr, false);
        b[n - 28..].copy_from_slice(&tr);
        check(&b, "trailer checksum");
        // The final seal's padding (the end of its variable section), resealed.
        let (fo, _, fl) = lay[lay.len() - 2].clone();
        assert_eq!(lay[lay.len() - 2].1, SEAL_TYPE_NAME);
        let mut b = bytes.clone();
        b[fo + fl - 1] ^= 1;
        reseal_at(&mut b, fo, fl);
        check(&b, "final seal padding");
        // The index's padding, resealed.
        let (io, _, il) = lay[lay.len() - 1].clone();
        let mut b = bytes.clone();
        b[io + il - 1] ^= 1;
        reseal_at(&mut b, io, il);
        check(&b, "index padding");
    }
}
