//! The reverse table: pseudonym → original for the reversible fields, encrypted with
//! XChaCha20-Poly1305 under the key file's [`ra_trace::key::Purpose::Reverse`] key, in its own
//! extent type [`TABLE_TYPE`] (docs/TRACE_FORMAT.md §3.11).
//!
//! Plaintext: a sequence of entries `u8 field, u32 LE length, pseudonym, u32 LE length,
//! original` (ids as 8-byte LE integers), the first entry of the first chunk being the list
//! of reversible fields (field code 255, the codes as its pseudonym). Cut into chunks of at
//! most 1 MiB; each chunk is one record, sealed with a fresh random 192-bit nonce and the
//! associated data `reanimator pseudonym table v1` ‖ seq ‖ total (u64 LE), so that chunks
//! cannot be reordered, dropped or moved to another table without the tag failing. Without
//! the key a table shows its size and nothing else. A reversible `time` adds one entry whose
//! pseudonym is `shift` and whose original is the shift ([`TimeShift`]: the trace's start
//! and the origin it became, seconds, two i64 LE).

use std::collections::HashMap;
use std::sync::Arc;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use dataseries::{ExtentBuilder, ExtentType, FieldDesc, FieldType, Value};

use super::pseudonym::{Pseudonymizer, Reverser};
use super::time::TimeShift;
use super::{Field, INFO_KEY};
use ra_trace::key::{Key, Purpose};
use ra_trace::schema::{NAMESPACE, VERSION};
use ra_trace::{Error, Result, TraceReader};

/// Extent type of the reverse table.
pub const TABLE_TYPE: &str = "Reanimator::PseudonymTable";

const AAD: &[u8] = b"reanimator pseudonym table v1";
const CHUNK: usize = 1 << 20;
const FIELDS_ENTRY: u8 = 255;
/// The pseudonym of the time shift's entry (no id: ids are 8 bytes).
const SHIFT: &[u8] = b"shift";

/// The extent type (declared only in traces that hold a table).
pub fn table_type() -> Arc<ExtentType> {
    static T: std::sync::OnceLock<Arc<ExtentType>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let t = ExtentType::builder(TABLE_TYPE)
            .namespace(NAMESPACE)
            .version(VERSION)
            .field(FieldDesc::new("seq", FieldType::Int64))
            .field(FieldDesc::new("total", FieldType::Int64))
            .field(FieldDesc::new("nonce", FieldType::Variable32))
            .field(FieldDesc::new("ciphertext", FieldType::Variable32))
            .build()
            .expect("a valid extent type");
        Arc::new(t)
    })
    .clone()
}

/// One entry of the table.
pub type TableEntry = (Field, Vec<u8>, Vec<u8>);

/// The (pseudonym, original) pairs of the reversible fields, in a stable order.
pub fn entries(p: &Pseudonymizer, fields: &[Field]) -> Vec<TableEntry> {
    let mut out = Vec::new();
    for &f in fields {
        if let (Field::Time, Some(t)) = (f, p.time) {
            let o = [t.t0_s.to_le_bytes(), t.origin_s.to_le_bytes()].concat();
            out.push((f, SHIFT.to_vec(), o));
        }
        if f.is_id() {
            if let Some(t) = p.ids(f) {
                let mut v: Vec<(i64, i64)> = t.pairs().collect();
                v.sort();
                out.extend(
                    v.into_iter()
                        .map(|(ps, o)| (f, ps.to_le_bytes().to_vec(), o.to_le_bytes().to_vec())),
                );
            }
        } else if let Some(t) = p.strings(f) {
            let mut v: Vec<(Vec<u8>, Vec<u8>)> =
                t.pairs().map(|(a, b)| (a.to_vec(), b.to_vec())).collect();
            v.sort();
            out.extend(v.into_iter().map(|(ps, o)| (f, ps, o)));
        }
    }
    out
}

fn push_entry(buf: &mut Vec<u8>, code: u8, p: &[u8], o: &[u8]) {
    buf.push(code);
    buf.extend_from_slice(&(p.len() as u32).to_le_bytes());
    buf.extend_from_slice(p);
    buf.extend_from_slice(&(o.len() as u32).to_le_bytes());
    buf.extend_from_slice(o);
}

fn aad(seq: u64, total: u64) -> Vec<u8> {
    let mut a = AAD.to_vec();
    a.extend_from_slice(&seq.to_le_bytes());
    a.extend_from_slice(&total.to_le_bytes());
    a
}

fn random_nonce() -> Result<[u8; 24]> {
    let mut n = [0u8; 24];
    ra_trace::key::random_bytes(&mut n)
        .map_err(|e| Error::Anonymize(format!("cannot get random bytes: {e}")))?;
    Ok(n)
}

/// The table as sealed records, one extent each.
pub fn seal(
    key: &[u8; 32],
    fields: &[Field],
    entries: &[TableEntry],
) -> Result<Vec<ExtentBuilder>> {
    let mut chunks: Vec<Vec<u8>> = vec![Vec::new()];
    let codes: Vec<u8> = fields.iter().map(|f| f.code()).collect();
    push_entry(&mut chunks[0], FIELDS_ENTRY, &codes, b"");
    for (f, p, o) in entries {
        if chunks.last().is_some_and(|c| c.len() >= CHUNK) {
            chunks.push(Vec::new());
        }
        push_entry(chunks.last_mut().expect("one chunk"), f.code(), p, o);
    }
    let cipher = XChaCha20Poly1305::new(key.into());
    let total = chunks.len() as u64;
    let mut out = Vec::new();
    for (seq, mut plain) in chunks.into_iter().enumerate() {
        let nonce = random_nonce()?;
        let a = aad(seq as u64, total);
        let ct = cipher
            .encrypt(XNonce::from_slice(&nonce), Payload { msg: &plain, aad: &a })
            .map_err(|_| Error::Anonymize("cannot encrypt the pseudonym table".into()))?;
        plain.iter_mut().for_each(|b| *b = 0);
        let mut b = ExtentBuilder::new(table_type());
        b.start_record();
        b.set(0, Value::Int64(seq as i64))?;
        b.set(1, Value::Int64(total as i64))?;
        b.set(2, Value::Bytes(&nonce))?;
        b.set(3, Value::Bytes(&ct))?;
        out.push(b);
    }
    Ok(out)
}

fn bad(what: &str) -> Error {
    Error::Anonymize(format!("the pseudonym table is damaged: {what}"))
}

/// Read and open the table of an anonymized trace: the reversible fields and their tables.
pub fn open(tr: &TraceReader, master: &Key) -> Result<(Vec<Field>, Reverser)> {
    let key = &master.derive(Purpose::Reverse);
    let ds = tr.dataseries();
    let mut records: Vec<(u64, u64, Vec<u8>, Vec<u8>)> = Vec::new();
    let offsets: Vec<u64> = match ds.index()? {
        Some(ix) => ix.into_iter().filter(|(_, n)| n == TABLE_TYPE).map(|(o, _)| o).collect(),
        None => ds
            .headers()
            .filter_map(|h| h.ok())
            .filter(|h| h.type_name == TABLE_TYPE)
            .map(|h| h.offset)
            .collect(),
    };
    if offsets.is_empty() {
        return Err(Error::Anonymize(
            "this trace holds no pseudonym table: nothing in it was anonymized reversibly \
             (`anonymize --reversible FIELDS` stores one)"
                .into(),
        ));
    }
    for off in offsets {
        let e = ds.read_extent_of(off, TABLE_TYPE)?;
        let ty = e.extent_type().clone();
        let f = |n: &str| ty.field_index(n).ok_or_else(|| bad("a field is missing"));
        let (fs, ft, fn_, fc) = (f("seq")?, f("total")?, f("nonce")?, f("ciphertext")?);
        for r in 0..e.len() {
            let seq = e.i64(r, fs).ok_or_else(|| bad("no seq"))? as u64;
            let total = e.i64(r, ft).ok_or_else(|| bad("no total"))? as u64;
            let nonce = e.bytes(r, fn_).ok_or_else(|| bad("no nonce"))?.to_vec();
            let ct = e.bytes(r, fc).ok_or_else(|| bad("no ciphertext"))?.to_vec();
            records.push((seq, total, nonce, ct));
        }
    }
    records.sort_by_key(|r| r.0);
    // (Extents of the table type without records: a damaged or hostile trace.)
    let total = records.first().ok_or_else(|| bad("its extents hold no chunk"))?.1;
    if records.len() as u64 != total
        || records.iter().enumerate().any(|(i, r)| r.0 != i as u64 || r.1 != total)
    {
        return Err(bad("chunks are missing or repeated"));
    }
    let cipher = XChaCha20Poly1305::new(key.into());
    let mut fields = Vec::new();
    let mut rev = Reverser::default();
    for (seq, total, nonce, ct) in records {
        if nonce.len() != 24 {
            return Err(bad("a nonce has the wrong length"));
        }
        let a = aad(seq, total);
        let plain = cipher
            .decrypt(XNonce::from_slice(&nonce), Payload { msg: &ct, aad: &a })
            .map_err(|_| {
                if seq == 0 {
                    Error::WrongKey {
                        given: master.fingerprint(),
                        expected: tr
                            .info_value(INFO_KEY)
                            .map(|v| String::from_utf8_lossy(v).into_owned()),
                    }
                } else {
                    bad("a chunk fails its authentication tag")
                }
            })?;
        let mut b = plain.as_slice();
        let take = |b: &mut &[u8]| -> Result<Vec<u8>> {
            let n = b.get(..4).ok_or_else(|| bad("short entry"))?;
            let n = u32::from_le_bytes(n.try_into().expect("4 bytes")) as usize;
            let v = b.get(4..4 + n).ok_or_else(|| bad("short entry"))?.to_vec();
            *b = &b[4 + n..];
            Ok(v)
        };
        while let Some((&code, rest)) = b.split_first() {
            b = rest;
            let p = take(&mut b)?;
            let o = take(&mut b)?;
            if code == FIELDS_ENTRY {
                fields = p.iter().filter_map(|&c| Field::from_code(c)).collect();
                continue;
            }
            let f = Field::from_code(code).ok_or_else(|| bad("unknown field"))?;
            if f == Field::Time && p == SHIFT {
                let v = |r: std::ops::Range<usize>| -> Result<i64> {
                    let b = o.get(r).ok_or_else(|| bad("bad time shift"))?;
                    Ok(i64::from_le_bytes(b.try_into().expect("8 bytes")))
                };
                if o.len() != 16 {
                    return Err(bad("bad time shift"));
                }
                rev.time = Some(TimeShift { t0_s: v(0..8)?, origin_s: v(8..16)? });
            } else if f.is_id() {
                let id = |v: &[u8]| -> Result<i64> {
                    Ok(i64::from_le_bytes(v.try_into().map_err(|_| bad("bad id"))?))
                };
                rev.ids.entry(f).or_insert_with(HashMap::new).insert(id(&p)?, id(&o)?);
            } else {
                rev.strings.entry(f).or_insert_with(HashMap::new).insert(p, o);
            }
        }
    }
    Ok((fields, rev))
}
