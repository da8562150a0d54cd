//! Key files: one 256-bit secret from which every protection of a trace derives its own key
//! (sealing, encryption, anonymization), so that a user keeps one file.
//!
//! The file is text: the line `reanimator-key-v1` and 64 hexadecimal digits, and for a host
//! key a third line `host NAME`. [`Key::generate`] creates it with mode 0600 and refuses to
//! overwrite; [`Key::load`] refuses a file that other users can read or write, like ssh does.
//! A key never appears in a trace, a log line or an error message: [`Key`]'s `Debug` prints
//! nothing of it, and errors name the file only.
//!
//! Host keys (docs/NETWORK.md): a collector holds a master key; [`Key::for_host`] derives the
//! key of one host name from it (a keyed BLAKE3 of the name), which is all that host is given.
//! A host key authenticates its holder to the collector as that host name and no other, and
//! seals its traces; the collector, which can derive every host key, checks both.

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
    /// The challenge-response of a sender and a collector (docs/NETWORK.md).
    NetAuth,
}

impl Purpose {
    fn context(self) -> &'static str {
        match self {
            Purpose::Seal => "reanimator 2026-11 trace seal v1",
            Purpose::Encrypt => "reanimator 2026-11 trace encryption v1",
            Purpose::Pseudonym => "reanimator 2026-11 anonymize pseudonym v1",
            Purpose::Reverse => "reanimator 2026-11 anonymize reverse table v1",
            Purpose::NetAuth => "reanimator 2026-12 collector authentication v1",
        }
    }
}

/// Why a key file could not be used. Never carries key material.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// [`Key::load`] could not stat or read the file.
    #[error("cannot read the key file {path}: {source}")]
    Read {
        /// The key file, as given.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// [`Key::generate`] or [`Key::write_new`] could not make the file (it exists already:
    /// keys are never overwritten), or the kernel gave no random bytes.
    #[error("cannot create the key file {path}: {source}")]
    Create {
        /// The key file, as given.
        path: String,
        /// The operating system's error (`AlreadyExists` for an existing file).
        source: std::io::Error,
    },
    /// The file does not parse as a key file (the magic line, 64 hex digits, for a host key
    /// a `host NAME` line), or is larger than 4 KiB.
    #[error(
        "the key file {path} is not a reanimator key (expected the line `{MAGIC}`, 64 hex \
         digits and, for a host key, `host NAME`; create one with `reanimator keygen FILE`)"
    )]
    Malformed {
        /// The key file, as given.
        path: String,
    },
    /// A host name [`check_host_name`] refuses, or a host key asked to derive another
    /// ([`Key::for_host`]).
    #[error("host name {name:?}: {why}")]
    BadHost {
        /// The host name refused.
        name: String,
        /// Which rule it breaks, as a sentence.
        why: String,
    },
    /// The file's mode gives group or others any access ([`Key::load`] refuses it).
    #[error(
        "the key file {path} can be read or written by other users (mode {mode:o}); \
         run `chmod 600 {path}`"
    )]
    TooOpen {
        /// The key file, as given.
        path: String,
        /// Its permission bits (`st_mode & 0o777`), printed in octal.
        mode: u32,
    },
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

/// Longest host name of a host key.
pub const HOST_NAME_MAX: usize = 64;

/// Whether `name` can name a host key: 1 to [`HOST_NAME_MAX`] characters of
/// `[A-Za-z0-9._-]`, not beginning with a dot or a dash, without `..`, so that it is used as
/// it is in the collector's file names and lines.
pub fn check_host_name(name: &str) -> Result<(), KeyError> {
    let bad = |why: &str| Err(KeyError::BadHost { name: name.to_string(), why: why.to_string() });
    if name.is_empty() || name.len() > HOST_NAME_MAX {
        return bad("a host name has 1 to 64 characters");
    }
    if !name.bytes().all(|c| c.is_ascii_alphanumeric() || b"._-".contains(&c)) {
        return bad("a host name has only letters, digits, `.`, `_` and `-`");
    }
    if name.starts_with('.') || name.starts_with('-') || name.contains("..") {
        return bad("a host name does not begin with `.` or `-` nor hold `..`");
    }
    Ok(())
}

/// A 256-bit key: a master key, or a host key (derived from a master key for one host name).
#[derive(Clone)]
pub struct Key {
    master: [u8; 32],
    /// The host name of a host key.
    host: Option<String>,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Some(h) => write!(f, "Key(host {h}, ..)"),
            None => f.write_str("Key(..)"),
        }
    }
}

/// Keys are equal when their public ids and host names are (ids are one-way hashes: the
/// secrets are not compared byte by byte).
impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.id() == other.id() && self.host == other.host
    }
}

impl Eq for Key {}

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
        Key { master, host: None }
    }

    /// A fresh random key from the kernel's CSPRNG.
    pub fn random() -> std::io::Result<Self> {
        let mut master = [0u8; 32];
        random_bytes(&mut master)?;
        Ok(Key { master, host: None })
    }

    /// Creates `path` (mode 0600, never overwriting) holding a fresh random key.
    pub fn generate(path: &Path) -> Result<Self, KeyError> {
        let key = Key::random()
            .map_err(|source| KeyError::Create { path: path.display().to_string(), source })?;
        key.write_new(path)?;
        Ok(key)
    }

    /// The host name of a host key (`None`: a master key).
    pub fn host(&self) -> Option<&str> {
        self.host.as_deref()
    }

    /// The key of host `name`, derived from this master key: `BLAKE3-keyed(derive_key(CONTEXT,
    /// master), name)`. Refused for a name [`check_host_name`] refuses, and from a host key
    /// (a host key derives nothing: only the collector's master key does).
    pub fn for_host(&self, name: &str) -> Result<Key, KeyError> {
        check_host_name(name)?;
        if self.host.is_some() {
            return Err(KeyError::BadHost {
                name: name.to_string(),
                why: "host keys are derived from a master key, not from another host key".into(),
            });
        }
        let k = blake3::derive_key("reanimator 2026-12 collector host key v1", &self.master);
        let master = *blake3::keyed_hash(&k, name.as_bytes()).as_bytes();
        Ok(Key { master, host: Some(name.to_string()) })
    }

    /// Writes this key to a new file `path` (mode 0600, never overwriting).
    pub fn write_new(&self, path: &Path) -> Result<(), KeyError> {
        let create = |source| KeyError::Create { path: path.display().to_string(), source };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(create)?;
        let mut text = String::with_capacity(MAGIC.len() + 66 + HOST_NAME_MAX + 6);
        text.push_str(MAGIC);
        text.push('\n');
        ra_hex::push_str(&mut text, &self.master);
        text.push('\n');
        if let Some(h) = &self.host {
            text.push_str(&format!("host {h}\n"));
        }
        let r = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
        // The text held the key: wipe it.
        let mut bytes = text.into_bytes();
        bytes.iter_mut().for_each(|b| *b = 0);
        r.map_err(create)
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
        let master = ra_hex::decode_array(lines.next()?.trim())?;
        let mut host = None;
        for l in lines.map(str::trim).filter(|l| !l.is_empty()) {
            let name = l.strip_prefix("host ")?.trim();
            if host.is_some() || check_host_name(name).is_err() {
                return None;
            }
            host = Some(name.to_string());
        }
        Some(Key { master, host })
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
        ra_hex::encode(&self.id())
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
    fn host_keys_are_derived_per_name_and_say_their_name() {
        let dir = std::env::temp_dir().join(format!("ra-hostkey-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let m = Key::from_bytes([5; 32]);
        let a = m.for_host("web1").unwrap();
        assert_eq!(a.host(), Some("web1"));
        // The same name, the same key; another name or master, another key.
        assert_eq!(
            a.derive(Purpose::NetAuth),
            m.for_host("web1").unwrap().derive(Purpose::NetAuth)
        );
        assert_ne!(a.derive(Purpose::Seal), m.for_host("web2").unwrap().derive(Purpose::Seal));
        let other = Key::from_bytes([6; 32]).for_host("web1").unwrap();
        assert_ne!(a.derive(Purpose::Seal), other.derive(Purpose::Seal));
        assert_ne!(a.derive(Purpose::Seal), m.derive(Purpose::Seal));
        // A host key derives nothing; bad names are refused.
        assert!(a.for_host("web2").is_err());
        for bad in ["", ".x", "-x", "a..b", "a/b", "a b", &"x".repeat(65)] {
            assert!(m.for_host(bad).is_err(), "{bad:?}");
        }
        // Written and read back with its name.
        let p = dir.join("web1.key");
        a.write_new(&p).unwrap();
        let l = Key::load(&p).unwrap();
        assert_eq!(l, a);
        assert_eq!(l.host(), Some("web1"));
        assert!(std::fs::read_to_string(&p).unwrap().ends_with("\nhost web1\n"));
        assert_eq!(format!("{l:?}"), "Key(host web1, ..)");
        std::fs::write(&p, format!("{MAGIC}\n{}\nhost a/b\n", "00".repeat(32))).unwrap();
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
