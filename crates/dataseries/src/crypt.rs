//! Encrypted files: the whole DataSeries byte stream cut into chunks, each sealed with
//! AES-256-GCM under a key of the file's own (the STREAM construction: the file key is
//! derived from the encryption key and the file's serial number, a chunk's nonce is its
//! number, and the last chunk is flagged), so that an encrypted file reveals
//! its size, roughly where the writer flushed, and nothing else. [`DsReader`](crate::DsReader)
//! reads one transparently when it has the key ([`set_read_keys`]): positioned reads decrypt
//! the chunks they touch.
//!
//! Layout (integers little-endian):
//!
//! ```text
//! header (64 bytes): "RAENCv1\0" | u32 version = 1 | u32 max chunk = 1 MiB | serial [16] |
//!                    key id [8] | u8 cipher = 1 (AES-256-GCM) | zeros [23]
//! chunk:             u32 plain_len | u32 flags (bit 0: last chunk) | ciphertext [plain_len] | tag [16]
//! file key         = BLAKE3-keyed(K, "RA-ENC1 AES-256-GCM file key" ‖ serial)
//! nonce(i)         = u64 i ‖ 0u32                          (12 bytes, i = chunk number from 0)
//! AAD(i)           = header ‖ u64 i ‖ u32 plain_len ‖ u32 flags
//! ```
//!
//! A chunk that fails authentication (modified, moved, dropped, from another file) is an
//! error naming it. A file without its last chunk was cut (its writer was killed): it reads as
//! the DataSeries file it was up to the last whole chunk (an unfinished file, like any killed
//! recording). Anything after the last chunk is an error.

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM};

use crate::seal::SecretKey;
use crate::{hex, Error, Result};

/// The first bytes of an encrypted file.
pub const MAGIC: &[u8; 8] = b"RAENCv1\0";
const HEADER_LEN: usize = 64;
const CHUNK_HEAD: usize = 8;
const TAG_LEN: usize = 16;
/// Plaintext bytes per chunk at most.
pub const CHUNK: usize = 1 << 20;
const FLAG_LAST: u32 = 1;
/// Header byte 40: the AEAD. 1 is AES-256-GCM with a per-file key (the only one so far).
const CIPHER_AES_256_GCM: u8 = 1;

/// How to encrypt a file.
#[derive(Clone, Debug)]
pub struct EncryptOptions {
    /// The AEAD key.
    pub key: SecretKey,
    /// The key's public id (stored in the header, so that a reader can say which key it needs).
    pub key_id: [u8; 8],
    /// The file's serial number (random, chosen by the caller).
    pub serial: [u8; 16],
}

fn header(key_id: &[u8; 8], serial: &[u8; 16]) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&1u32.to_le_bytes());
    h[12..16].copy_from_slice(&(CHUNK as u32).to_le_bytes());
    h[16..32].copy_from_slice(serial);
    h[32..40].copy_from_slice(key_id);
    h[40] = CIPHER_AES_256_GCM;
    h
}

/// The cipher of one file: AES-256-GCM under a key of its own, derived from the encryption
/// key and the file's serial number, so that a nonce (the chunk number) is never used twice
/// with one key across files.
type Cipher = std::sync::Arc<LessSafeKey>;

fn file_cipher(key: &[u8; 32], serial: &[u8; 16]) -> Cipher {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(b"RA-ENC1 AES-256-GCM file key");
    h.update(serial);
    let k = UnboundKey::new(&AES_256_GCM, h.finalize().as_bytes())
        .unwrap_or_else(|_| unreachable!("a 32-byte AES-256 key"));
    std::sync::Arc::new(LessSafeKey::new(k))
}

fn nonce(i: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[..8].copy_from_slice(&i.to_le_bytes());
    Nonce::assume_unique_for_key(n)
}

fn aad(header: &[u8; HEADER_LEN], i: u64, plain_len: u32, flags: u32) -> [u8; HEADER_LEN + 16] {
    let mut a = [0u8; HEADER_LEN + 16];
    a[..HEADER_LEN].copy_from_slice(header);
    a[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&i.to_le_bytes());
    a[HEADER_LEN + 8..HEADER_LEN + 12].copy_from_slice(&plain_len.to_le_bytes());
    a[HEADER_LEN + 12..].copy_from_slice(&flags.to_le_bytes());
    a
}

/// Seals one chunk in place: `buf` holds 8 bytes of room for the head, then the plaintext;
/// it comes back as head ‖ ciphertext ‖ tag, written with one call and no copy.
fn seal_chunk(
    cipher: &LessSafeKey,
    header: &[u8; HEADER_LEN],
    i: u64,
    mut buf: Vec<u8>,
    flags: u32,
) -> std::io::Result<Vec<u8>> {
    let len = (buf.len() - CHUNK_HEAD) as u32;
    let a = aad(header, i, len, flags);
    buf[..4].copy_from_slice(&len.to_le_bytes());
    buf[4..CHUNK_HEAD].copy_from_slice(&flags.to_le_bytes());
    let tag = cipher
        .seal_in_place_separate_tag(nonce(i), Aad::from(&a[..]), &mut buf[CHUNK_HEAD..])
        .map_err(|_| std::io::Error::other("encryption failed"))?;
    buf.extend_from_slice(tag.as_ref());
    Ok(buf)
}

/// A chunk buffer: room for the head, then plaintext (capacity for the tag too).
fn chunk_buffer(free: &mut Vec<Vec<u8>>) -> Vec<u8> {
    let mut b = free.pop().unwrap_or_else(|| Vec::with_capacity(CHUNK_HEAD + CHUNK + TAG_LEN));
    b.clear();
    b.extend_from_slice(&[0; CHUNK_HEAD]);
    b
}

/// Threads that encrypt full chunks beside the writer (AES-256-GCM runs at about 4.8 GB/s
/// per core here, but a recorder's writer thread has other work).
struct Pool {
    jobs: Option<crossbeam_channel::Sender<(u64, Vec<u8>, u32)>>,
    done: crossbeam_channel::Receiver<(u64, std::io::Result<Vec<u8>>)>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// Chunks being encrypted or waiting to be written at most, per encryptor thread (1 MiB
/// each). With 2 the writer thread often waited for an encryptor, and the recorder behind it
/// throttled the traced program: measured on fio recorded uncompressed with `--encrypt`,
/// 8 rounds of 5 s side by side, 2 cost 12% in time against no encryption and 8 cost 7%.
const IN_FLIGHT_PER_THREAD: usize = 8;

/// The writer's side: buffers plaintext and writes whole chunks, in order, encrypted on
/// `threads` threads (none: on the caller's).
pub(crate) struct Encryptor {
    cipher: Cipher,
    header: [u8; HEADER_LEN],
    next: u64,
    buf: Vec<u8>,
    started: bool,
    pool: Option<Pool>,
    /// Chunks submitted and not yet written, and finished ones waiting for their turn.
    submitted: u64,
    written: u64,
    ready: std::collections::BTreeMap<u64, Vec<u8>>,
    max_in_flight: u64,
    /// Written chunks' buffers, for the next ones (fresh 1 MiB buffers fault page by page).
    free: Vec<Vec<u8>>,
}

impl Encryptor {
    pub(crate) fn new(o: &EncryptOptions, threads: usize) -> std::io::Result<Self> {
        let cipher = file_cipher(&o.key.0, &o.serial);
        let header = header(&o.key_id, &o.serial);
        let mut pool = None;
        if threads > 0 {
            let (jtx, jrx) = crossbeam_channel::bounded::<(u64, Vec<u8>, u32)>(threads);
            let (dtx, drx) = crossbeam_channel::unbounded();
            let mut handles = Vec::new();
            for _ in 0..threads {
                let (jrx, dtx, cipher) = (jrx.clone(), dtx.clone(), cipher.clone());
                handles.push(std::thread::Builder::new().name("ds-encrypt".into()).spawn(
                    move || {
                        for (i, buf, flags) in jrx {
                            if dtx.send((i, seal_chunk(&cipher, &header, i, buf, flags))).is_err() {
                                return;
                            }
                        }
                    },
                )?);
            }
            pool = Some(Pool { jobs: Some(jtx), done: drx, handles });
        }
        Ok(Encryptor {
            cipher,
            header,
            next: 0,
            buf: chunk_buffer(&mut Vec::new()),
            started: false,
            pool,
            submitted: 0,
            written: 0,
            ready: std::collections::BTreeMap::new(),
            max_in_flight: (threads * IN_FLIGHT_PER_THREAD).max(1) as u64,
            free: Vec::new(),
        })
    }

    fn start(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        if !self.started {
            out.write_all(&self.header)?;
            self.started = true;
        }
        Ok(())
    }

    /// Takes plaintext; writes every chunk that fills up.
    pub(crate) fn write(&mut self, out: &mut impl Write, mut b: &[u8]) -> std::io::Result<()> {
        self.start(out)?;
        while !b.is_empty() {
            let take = (CHUNK_HEAD + CHUNK - self.buf.len()).min(b.len());
            self.buf.extend_from_slice(&b[..take]);
            b = &b[take..];
            if self.buf.len() == CHUNK_HEAD + CHUNK {
                self.emit(out, 0)?;
            }
        }
        Ok(())
    }

    /// Writes what is buffered as a chunk (a flush); with `last`, as the last chunk (even if
    /// empty). Returns once every chunk so far is written to `out`.
    pub(crate) fn flush(&mut self, out: &mut impl Write, last: bool) -> std::io::Result<()> {
        self.start(out)?;
        if last || self.buf.len() > CHUNK_HEAD {
            self.emit(out, if last { FLAG_LAST } else { 0 })?;
        }
        while self.written < self.submitted {
            self.collect(out, true)?;
        }
        Ok(())
    }

    fn emit(&mut self, out: &mut impl Write, flags: u32) -> std::io::Result<()> {
        let i = self.next;
        self.next += 1;
        let next = chunk_buffer(&mut self.free);
        let buf = std::mem::replace(&mut self.buf, next);
        let Some(jobs) = self.pool.as_ref().and_then(|p| p.jobs.clone()) else {
            let c = seal_chunk(&self.cipher, &self.header, i, buf, flags)?;
            out.write_all(&c)?;
            self.free.push(c);
            return Ok(());
        };
        while self.submitted - self.written >= self.max_in_flight {
            self.collect(out, true)?;
        }
        jobs.send((i, buf, flags))
            .map_err(|_| std::io::Error::other("an encryptor thread died"))?;
        self.submitted += 1;
        self.collect(out, false)
    }

    /// Writes the finished chunks that are next in order; with `block`, waits for one result.
    fn collect(&mut self, out: &mut impl Write, block: bool) -> std::io::Result<()> {
        let Some(pool) = &self.pool else { return Ok(()) };
        let mut got = Vec::new();
        if block {
            got.push(
                pool.done.recv().map_err(|_| std::io::Error::other("an encryptor thread died"))?,
            );
        }
        got.extend(pool.done.try_iter());
        for (i, r) in got {
            self.ready.insert(i, r?);
        }
        while let Some(c) = self.ready.remove(&self.written) {
            out.write_all(&c)?;
            self.written += 1;
            if self.free.len() <= self.max_in_flight as usize {
                self.free.push(c);
            }
        }
        Ok(())
    }
}

static READ_KEYS: OnceLock<Vec<([u8; 8], SecretKey)>> = OnceLock::new();

/// The keys [`DsReader::open`](crate::DsReader::open) may decrypt encrypted files with, each
/// with its public id. Set once per process (the command line's `--key`); later calls are
/// ignored.
pub fn set_read_keys(keys: Vec<([u8; 8], SecretKey)>) {
    let _ = READ_KEYS.set(keys);
}

/// Public facts of an encrypted file being read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncryptionInfo {
    /// The id of the key it was encrypted with (hex).
    pub key_id: String,
    /// Whole chunks.
    pub chunks: u64,
    /// The file ends with its last chunk (false: the writer was killed, or the file was cut).
    pub complete: bool,
}

/// One chunk of an encrypted file.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    /// File offset of the ciphertext.
    at: u64,
    /// Plaintext offset.
    plain: u64,
    len: u32,
    flags: u32,
}

/// The reader's side: the chunk table (16 bytes per MiB of trace) and the last chunk
/// decrypted.
pub(crate) struct Decryptor {
    file: File,
    cipher: Cipher,
    header: [u8; HEADER_LEN],
    chunks: Vec<Chunk>,
    len: u64,
    complete: bool,
    cache: Mutex<Option<(usize, Vec<u8>)>>,
}

impl std::fmt::Debug for Decryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Decryptor({} chunks, {} bytes)", self.chunks.len(), self.len)
    }
}

fn damaged(what: String) -> Error {
    Error::Encrypted { detail: what }
}

/// An encrypted chunk that fails authentication (the [`std::io::Error`] a read of it
/// returns carries this): it was modified, moved, or comes from another file.
#[derive(Debug)]
pub struct ChunkAuthFailed {
    /// The chunk's number.
    pub chunk: u64,
    /// Its file offset.
    pub offset: u64,
}

impl std::fmt::Display for ChunkAuthFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "encrypted chunk {} (file offset {}) fails authentication: modified, moved or from \
             another file",
            self.chunk, self.offset
        )
    }
}

impl std::error::Error for ChunkAuthFailed {}

/// Whether chunk 0 of `file` authenticates under `key` with `header` (as AAD): tells a file
/// whose header names another key from one whose key id was changed.
fn first_chunk_opens(file: &File, header: &[u8; HEADER_LEN], key: &SecretKey) -> bool {
    let mut head = [0u8; CHUNK_HEAD];
    if crate::reader::read_at(file, &mut head, HEADER_LEN as u64).is_err() {
        return false;
    }
    let len = u32::from_le_bytes(head[..4].try_into().unwrap_or_default());
    let flags = u32::from_le_bytes(head[4..].try_into().unwrap_or_default());
    if len as usize > CHUNK {
        return false;
    }
    let mut buf = vec![0u8; len as usize + TAG_LEN];
    if crate::reader::read_at(file, &mut buf, (HEADER_LEN + CHUNK_HEAD) as u64).is_err() {
        return false;
    }
    let serial: [u8; 16] = header[16..32].try_into().unwrap_or_default();
    let a = aad(header, 0, len, flags);
    file_cipher(&key.0, &serial).open_in_place(nonce(0), Aad::from(&a[..]), &mut buf).is_ok()
}

impl Decryptor {
    /// Opens an encrypted file with the keys set by [`set_read_keys`].
    pub(crate) fn open(file: File, path: &str) -> Result<Self> {
        let mut h = [0u8; HEADER_LEN];
        crate::reader::read_at(&file, &mut h, 0).map_err(|e| {
            damaged(format!("{path}: an encrypted file cut inside its header ({e})"))
        })?;
        if h[8..12] != 1u32.to_le_bytes() || h[40] != CIPHER_AES_256_GCM {
            return Err(damaged(format!("{path}: an encrypted file of an unknown version")));
        }
        let key_id: [u8; 8] = h[32..40].try_into().unwrap_or_default();
        let keys = READ_KEYS.get().map(Vec::as_slice).unwrap_or_default();
        let Some((_, key)) = keys.iter().find(|(id, _)| *id == key_id) else {
            // The header's key id is authenticated with the rest of it: if chunk 0 opens
            // with one of our keys under the header as it was with that key's id, the id was
            // changed, which is tampering, not another key.
            for (id, key) in keys {
                let mut was = h;
                was[32..40].copy_from_slice(id);
                if first_chunk_opens(&file, &was, key) {
                    return Err(damaged(format!(
                        "{path}: the encrypted header names key {}, but its chunks are encrypted \
                         with the key given ({}): its key id was changed",
                        hex(&key_id),
                        hex(id)
                    )));
                }
            }
            return Err(Error::EncryptionKey {
                detail: if keys.is_empty() {
                    format!(
                        "{path} is encrypted (key {}): give the key file with --key KEYFILE",
                        hex(&key_id)
                    )
                } else {
                    format!(
                        "{path} is encrypted with key {}, not with the key given ({})",
                        hex(&key_id),
                        keys.iter().map(|(id, _)| hex(id)).collect::<Vec<_>>().join(", ")
                    )
                },
            });
        };
        let max = u32::from_le_bytes(h[12..16].try_into().unwrap_or_default()) as usize;
        if max == 0 || max > CHUNK {
            return Err(damaged(format!("{path}: bad chunk size in the encrypted header")));
        }
        let serial: [u8; 16] = h[16..32].try_into().unwrap_or_default();
        let flen = file.metadata().map_err(|e| Error::io(format!("stat {path}"), e))?.len();
        // The chunk table, from the chunk heads alone (nothing decrypted yet).
        let mut chunks = Vec::new();
        let mut at = HEADER_LEN as u64;
        let mut plain = 0u64;
        let mut complete = false;
        while at + CHUNK_HEAD as u64 <= flen {
            let mut head = [0u8; CHUNK_HEAD];
            crate::reader::read_at(&file, &mut head, at)
                .map_err(|e| Error::io(format!("reading {path} at {at}"), e))?;
            let len = u32::from_le_bytes(head[..4].try_into().unwrap_or_default());
            let flags = u32::from_le_bytes(head[4..].try_into().unwrap_or_default());
            if len as usize > max || flags & !FLAG_LAST != 0 {
                return Err(damaged(format!(
                    "{path}: encrypted chunk {} at offset {at} has a damaged head",
                    chunks.len()
                )));
            }
            let end = at + (CHUNK_HEAD + len as usize + TAG_LEN) as u64;
            if end > flen {
                break; // cut inside this chunk
            }
            chunks.push(Chunk { at: at + CHUNK_HEAD as u64, plain, len, flags });
            plain += u64::from(len);
            at = end;
            if flags & FLAG_LAST != 0 {
                complete = true;
                break;
            }
        }
        if complete && at != flen {
            return Err(damaged(format!(
                "{path}: {} bytes follow the last encrypted chunk (appended after encryption)",
                flen - at
            )));
        }
        Ok(Decryptor {
            file,
            cipher: file_cipher(&key.0, &serial),
            header: h,
            chunks,
            len: plain,
            complete,
            cache: Mutex::new(None),
        })
    }

    /// Plaintext length (up to the last whole chunk).
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// What a reader may show about the encryption.
    pub(crate) fn info(&self) -> EncryptionInfo {
        EncryptionInfo {
            key_id: hex(&self.header[32..40]),
            chunks: self.chunks.len() as u64,
            complete: self.complete,
        }
    }

    fn decrypt(&self, i: usize) -> std::io::Result<Vec<u8>> {
        let c = self.chunks[i];
        let mut buf = vec![0u8; c.len as usize + TAG_LEN];
        crate::reader::read_at(&self.file, &mut buf, c.at)?;
        let a = aad(&self.header, i as u64, c.len, c.flags);
        // (open_in_place takes the ciphertext with its tag and leaves the plaintext in front.)
        self.cipher.open_in_place(nonce(i as u64), Aad::from(&a[..]), &mut buf).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                ChunkAuthFailed { chunk: i as u64, offset: c.at - CHUNK_HEAD as u64 },
            )
        })?;
        buf.truncate(c.len as usize);
        Ok(buf)
    }

    /// Fills `buf` with plaintext from `offset`.
    pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        if offset + buf.len() as u64 > self.len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "read past the end of the decrypted file",
            ));
        }
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset + done as u64;
            let i = self.chunks.partition_point(|c| c.plain + u64::from(c.len) <= pos);
            let c = self.chunks[i];
            let from = (pos - c.plain) as usize;
            let n = (c.len as usize - from).min(buf.len() - done);
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            match cache.as_ref() {
                Some((ci, data)) if *ci == i => {
                    buf[done..done + n].copy_from_slice(&data[from..from + n]);
                }
                _ => {
                    let data = self.decrypt(i)?;
                    buf[done..done + n].copy_from_slice(&data[from..from + n]);
                    *cache = Some((i, data));
                }
            }
            done += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> EncryptOptions {
        EncryptOptions { key: SecretKey([3; 32]), key_id: [5; 8], serial: [6; 16] }
    }

    fn write(path: &std::path::Path, parts: &[&[u8]], flush_after: &[usize], threads: usize) {
        let mut e = Encryptor::new(&opts(), threads).unwrap();
        let mut f = File::create(path).unwrap();
        for (k, p) in parts.iter().enumerate() {
            e.write(&mut f, p).unwrap();
            if flush_after.contains(&k) {
                e.flush(&mut f, false).unwrap();
            }
        }
        e.flush(&mut f, true).unwrap();
    }

    #[test]
    fn chunks_round_trip_and_tampering_is_named() {
        set_read_keys(vec![([5; 8], SecretKey([3; 32]))]);
        let d = std::env::temp_dir().join(format!("ds-crypt-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("e");
        let data: Vec<u8> = (0..3_500_000u32).map(|i| (i * 31 % 253) as u8).collect();
        write(&p, &[&data[..1000], &data[1000..2_000_000], &data[2_000_000..]], &[0], 2);
        let single = d.join("single");
        write(&single, &[&data[..1000], &data[1000..2_000_000], &data[2_000_000..]], &[0], 0);
        assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&single).unwrap(), "threads or not");
        let open = |p: &std::path::Path| Decryptor::open(File::open(p).unwrap(), "e");
        let r = open(&p).unwrap();
        assert!(r.info().complete);
        assert_eq!(r.len(), data.len() as u64);
        for (off, len) in
            [(0usize, 10usize), (999, 2), (1000, CHUNK + 5), (3_499_990, 10), (0, 3_500_000)]
        {
            let mut b = vec![0u8; len];
            r.read_at(&mut b, off as u64).unwrap();
            assert_eq!(b, data[off..off + len], "{off}+{len}");
        }
        let mut b = [0u8; 2];
        assert!(r.read_at(&mut b, 3_499_999).is_err());
        let bytes = std::fs::read(&p).unwrap();
        // Nothing of the plaintext shows.
        assert!(!bytes.windows(64).any(|w| w == &data[5000..5064]));

        // A flipped ciphertext byte: that chunk fails.
        let mut t = bytes.clone();
        t[HEADER_LEN + 8 + 1000 + 16 + 8 + 500] ^= 1;
        std::fs::write(&p, &t).unwrap();
        let r = open(&p).unwrap();
        let mut b = vec![0u8; 100];
        r.read_at(&mut b, 0).unwrap();
        let e = r.read_at(&mut b, 1500).unwrap_err();
        assert!(e.to_string().contains("chunk 1"), "{e}");

        // Cut inside the last chunk: readable up to the last whole chunk, not complete.
        std::fs::write(&p, &bytes[..bytes.len() - 100]).unwrap();
        let r = open(&p).unwrap();
        assert!(!r.info().complete);
        assert!(r.len() < data.len() as u64);

        // Appended bytes.
        let mut t = bytes.clone();
        t.extend_from_slice(b"junk");
        std::fs::write(&p, &t).unwrap();
        assert!(open(&p).unwrap_err().to_string().contains("appended"));

        // The key id changed: chunk 0 still opens with the key given, so it is tampering.
        let mut t = bytes.clone();
        t[32] ^= 1;
        std::fs::write(&p, &t).unwrap();
        let e = open(&p).unwrap_err();
        assert!(matches!(e, Error::Encrypted { .. }) && e.is_tampering(), "{e}");
        assert!(e.to_string().contains("its key id was changed"), "{e}");

        // Another key: said so, and not tampering.
        let other = EncryptOptions { key: SecretKey([9; 32]), key_id: [6; 8], serial: [6; 16] };
        let mut e = Encryptor::new(&other, 0).unwrap();
        let mut f = File::create(&p).unwrap();
        e.write(&mut f, &data[..5000]).unwrap();
        e.flush(&mut f, true).unwrap();
        drop(f);
        let e = open(&p).unwrap_err();
        assert!(matches!(e, Error::EncryptionKey { .. }) && !e.is_tampering(), "{e}");
        assert!(e.to_string().contains("not with the key given"), "{e}");

        // A damaged chunk head.
        let mut t = bytes.clone();
        t[HEADER_LEN + 3] = 0x7f;
        std::fs::write(&p, &t).unwrap();
        assert!(open(&p).unwrap_err().to_string().contains("damaged head"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
