//! Byte strings in JSON: one rule for every file and command that writes JSON (manifests,
//! `dump --format jsonl`, `diff --json`, replay reports).
//!
//! Bytes that are valid UTF-8 without a NUL are a JSON string (JSON's own escapes cover the
//! other control characters); any other bytes are an object `{"hex": "<two lowercase hex
//! digits per byte>"}`: a NUL marks binary data, and a buffer of zeros is two bytes of JSON
//! per byte as hex but six as `\u0000` escapes. Readers take either form for any bytes. Paths and other C strings are written without their terminating NUL.

use serde::{Deserialize, Serialize};

/// Bytes as JSON: a string, or `{"hex": …}` when they are not UTF-8.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonBytes {
    /// Valid UTF-8.
    Text(String),
    /// Anything else, hex-encoded.
    Hex {
        /// Two lowercase hex digits per byte.
        hex: String,
    },
}

impl JsonBytes {
    /// The JSON form of `b`.
    pub fn new(b: &[u8]) -> JsonBytes {
        // The NUL test first: it is the cheaper one, and it decides most binary buffers.
        if b.contains(&0) {
            return JsonBytes::Hex { hex: ra_hex::encode(b) };
        }
        match std::str::from_utf8(b) {
            Ok(s) => JsonBytes::Text(s.to_string()),
            Err(_) => JsonBytes::Hex { hex: ra_hex::encode(b) },
        }
    }

    /// The JSON form of a C string (a path, an xattr name) stored with its terminating NUL:
    /// the NUL is not part of the text.
    pub fn c_string(b: &[u8]) -> JsonBytes {
        JsonBytes::new(b.strip_suffix(&[0]).unwrap_or(b))
    }

    /// The bytes back; `None` for a `hex` value that is not hex.
    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            JsonBytes::Text(s) => Some(s.into_bytes()),
            JsonBytes::Hex { hex } => ra_hex::decode(&hex),
        }
    }

    /// As a `serde_json::Value`.
    pub fn value(b: &[u8]) -> serde_json::Value {
        match JsonBytes::new(b) {
            JsonBytes::Text(s) => serde_json::Value::String(s),
            JsonBytes::Hex { hex } => serde_json::json!({ "hex": hex }),
        }
    }

    /// [`JsonBytes::c_string`] as a `serde_json::Value`.
    pub fn c_string_value(b: &[u8]) -> serde_json::Value {
        JsonBytes::value(b.strip_suffix(&[0]).unwrap_or(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_hex_forms_round_trip() {
        for b in [&b"a/b.txt"[..], b"", b"tab\there\n", b"\xff\xfe", b"caf\xc3\xa9", b"a\0b"] {
            let j = serde_json::to_string(&JsonBytes::new(b)).unwrap();
            let back: JsonBytes = serde_json::from_str(&j).unwrap();
            assert_eq!(back.into_bytes().as_deref(), Some(b), "{j}");
        }
        assert_eq!(JsonBytes::value(b"\xff"), serde_json::json!({"hex": "ff"}));
        // A NUL marks binary data; a string with `\u0000` escapes still reads back.
        assert_eq!(JsonBytes::value(b"a\0b"), serde_json::json!({"hex": "610062"}));
        let old: JsonBytes = serde_json::from_str(r#""a\u0000b""#).unwrap();
        assert_eq!(old.into_bytes().unwrap(), b"a\0b");
        assert_eq!(JsonBytes::c_string_value(b"/etc/passwd\0"), serde_json::json!("/etc/passwd"));
        assert_eq!(JsonBytes::c_string_value(b"\xff/x\0"), serde_json::json!({"hex": "ff2f78"}));
        let bad: JsonBytes = serde_json::from_str(r#"{"hex":"zz"}"#).unwrap();
        assert_eq!(bad.into_bytes(), None);
    }
}
