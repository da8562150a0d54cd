//! Key files: one 256-bit secret from which every protection of a trace derives its own key
//! (sealing, encryption, anonymization), so that a user keeps one file.
//!
//! The file is text: the line `reanimator-key-v1` and 64 hexadecimal digits. [`Key::generate`]
//! creates it with mode 0600 and refuses to overwrite; [`Key::load`] refuses a file that other
//! users can read or write, like ssh does. A key never appears in a trace, a log line or an
//! error message: [`Key`]'s `Debug` prints nothing of it, and errors name the file only.

use std::fmt;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

const MAGIC: &str = "reanimator-key-v1";

/// What a derived key is for. Each purpose gets an independent key (BLAKE3 `derive_key`), so
/// that no two mechanisms ever share key material.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The keyed MAC chain of a sealed trace.
    Seal,
    /// The AEAD of an encrypted trace.
    Encrypt,
    /// Keyed pseudonyms (irreversible fields).
    Pseudonym,
    /// The AEAD of the table that reverses pseudonyms.
    Reverse,
}

impl Purpose {
    fn context(self) -> &'static str {
        match self {
            Purpose::Seal => "reanimator 2026-11 trace seal v1",
            Purpose::Encrypt => "reanimator 2026-11 trace encryption v1",
            Purpose::Pseudonym => "reanimator 2026-11 anonymize pseudonym v1",
            Purpose::Reverse => "reanimator 2026-11 anonymize reverse table v1",
        }
    }
}

/// Why a key file could not be used. Never carries key material.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("cannot read the key file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot create the key file {path}: {source}")]
    Create { path: String, source: std::io::Error },
    #[error(
        "the key file {path} is not a reanimator key (expected the line `{MAGIC}` and 64 hex \
         digits; create one with `reanimator keygen FILE`)"
    )]
    Malformed { path: String },
    #[error(
        "the key file {path} can be read or written by other users (mode {mode:o}); \
         run `chmod 600 {path}`"
    )]
    TooOpen { path: String, mode: u32 },
}

/// Fills `buf` from the kernel's CSPRNG (`getrandom(2)`), retrying on `EINTR` and after
/// short reads.
pub fn random_bytes(buf: &mut [u8]) -> std::io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe { libc::getrandom(buf[got..].as_mut_ptr().cast(), buf.len() - got, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        got += n as usize;
    }
    Ok(())
}

/// A 256-bit master key.
#[derive(Clone)]
pub struct Key {
    master: [u8; 32],
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        // Best effort: overwrite the secret before the memory is reused.
        for b in self.master.iter_mut() {
            // SAFETY: `b` is a valid, aligned, exclusive reference to a byte of `self.master`.
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

impl Key {
    /// A key from raw bytes (tests, fuzzing).
    pub fn from_bytes(master: [u8; 32]) -> Self {
        Key { master }
    }

    /// A fresh random key from the kernel's CSPRNG.
    pub fn random() -> std::io::Result<Self> {
        let mut master = [0u8; 32];
        random_bytes(&mut master)?;
        Ok(Key { master })
    }

    /// Creates `path` (mode 0600, never overwriting) holding a fresh random key.
    pub fn generate(path: &Path) -> Result<Self, KeyError> {
        let create = |source| KeyError::Create { path: path.display().to_string(), source };
        let key = Key::random().map_err(create)?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(create)?;
        let mut text = String::with_capacity(MAGIC.len() + 66);
        text.push_str(MAGIC);
        text.push('\n');
        for b in key.master {
            text.push_str(&format!("{b:02x}"));
        }
        text.push('\n');
        let r = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
        // The text held the key: wipe it.
        let mut bytes = text.into_bytes();
        bytes.iter_mut().for_each(|b| *b = 0);
        r.map_err(create)?;
        Ok(key)
    }

    /// Reads a key file written by [`Key::generate`].
    pub fn load(path: &Path) -> Result<Self, KeyError> {
        let name = || path.display().to_string();
        let read = |source| KeyError::Read { path: name(), source };
        let meta = std::fs::metadata(path).map_err(read)?;
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(KeyError::TooOpen { path: name(), mode });
        }
        if meta.len() > 4096 {
            return Err(KeyError::Malformed { path: name() });
        }
        let mut text = std::fs::read(path).map_err(read)?;
        let parsed = Self::parse(&text);
        text.iter_mut().for_each(|b| *b = 0);
        parsed.ok_or_else(|| KeyError::Malformed { path: name() })
    }

    fn parse(text: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(text).ok()?;
        let mut lines = text.lines();
        if lines.next()?.trim() != MAGIC {
            return None;
        }
        let hex = lines.next()?.trim();
        if hex.len() != 64 || lines.any(|l| !l.trim().is_empty()) {
            return None;
        }
        let mut master = [0u8; 32];
        for (i, b) in master.iter_mut().enumerate() {
            *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Key { master })
    }

    /// The key for one purpose.
    pub fn derive(&self, purpose: Purpose) -> [u8; 32] {
        blake3::derive_key(purpose.context(), &self.master)
    }

    /// The key's public id: 8 bytes of a one-way hash of it (stored in sealed traces so that
    /// a verifier given another key can say so). [`Key::fingerprint`] is its hex form.
    pub fn id(&self) -> [u8; 8] {
        let h = blake3::derive_key("reanimator 2026-11 key fingerprint v1", &self.master);
        let mut id = [0u8; 8];
        id.copy_from_slice(&h[..8]);
        id
    }

    /// A short public fingerprint of the key (safe to print: a hash that reveals nothing
    /// of it), so that a user can tell which key file a trace needs.
    pub fn fingerprint(&self) -> String {
        self.id().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A fresh random serial number for a new trace.
    pub fn serial() -> std::io::Result<[u8; 16]> {
        let mut serial = [0u8; 16];
        random_bytes(&mut serial)?;
        Ok(serial)
    }

    /// Sealing options for a new trace: the seal key, this key's id and its serial number.
    pub fn seal_options(&self, serial: [u8; 16]) -> dataseries::seal::SealOptions {
        dataseries::seal::SealOptions {
            key: dataseries::seal::SecretKey(self.derive(Purpose::Seal)),
            key_id: self.id().to_vec(),
            serial,
        }
    }

    /// Encryption options for a new trace.
    pub fn encrypt_options(&self, serial: [u8; 16]) -> dataseries::crypt::EncryptOptions {
        dataseries::crypt::EncryptOptions {
            key: dataseries::seal::SecretKey(self.derive(Purpose::Encrypt)),
            key_id: self.id(),
            serial,
        }
    }

    /// The key that checks traces sealed with this key file.
    pub fn seal_key(&self) -> dataseries::seal::SealKey {
        dataseries::seal::SealKey {
            mac: dataseries::seal::SecretKey(self.derive(Purpose::Seal)),
            id: self.id(),
        }
    }

    /// Makes this process's DataSeries readers check every file's seal with this key
    /// ([`dataseries::seal::set_check_key`]): a trace that is not sealed (and not
    /// encrypted), or whose seal does not verify, fails to open; one cut before its final
    /// seal reads as its verified part.
    pub fn check_seals(&self) {
        dataseries::seal::set_check_key(self.seal_key());
    }

    /// Lets this process's DataSeries readers decrypt traces encrypted with this key.
    pub fn allow_reading(&self) {
        dataseries::crypt::set_read_keys(vec![(
            self.id(),
            dataseries::seal::SecretKey(self.derive(Purpose::Encrypt)),
        )]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn generate_then_load_gives_the_same_key() {
        let dir = std::env::temp_dir().join(format!("ra-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("k");
        let k = Key::generate(&p).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let l = Key::load(&p).unwrap();
        assert_eq!(k.derive(Purpose::Seal), l.derive(Purpose::Seal));
        assert_ne!(k.derive(Purpose::Seal), k.derive(Purpose::Encrypt));
        assert_eq!(k.fingerprint(), l.fingerprint());
        // Never overwrites.
        assert!(matches!(Key::generate(&p), Err(KeyError::Create { .. })));
        // Too open.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = Key::load(&p).unwrap_err();
        assert!(matches!(e, KeyError::TooOpen { .. }), "{e}");
        // Neither the error nor Debug shows the key.
        let text = std::fs::read_to_string(&p).unwrap();
        let hex = text.lines().nth(1).unwrap();
        assert!(!e.to_string().contains(hex));
        assert!(!format!("{k:?}").contains(&hex[..8]));
        // Malformed.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&p, "reanimator-key-v1\nzz\n").unwrap();
        assert!(matches!(Key::load(&p), Err(KeyError::Malformed { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn random_bytes_fills_buffers_of_any_size() {
        random_bytes(&mut []).unwrap();
        // 1000 bytes all zero after a fill would be a broken fill, not bad luck.
        let mut big = [0u8; 1000];
        random_bytes(&mut big).unwrap();
        assert!(big.iter().any(|&b| b != 0));
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        random_bytes(&mut a).unwrap();
        random_bytes(&mut b).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn random_keys_differ() {
        let a = Key::random().unwrap();
        let b = Key::random().unwrap();
        assert_ne!(a.master, b.master);
    }
}
