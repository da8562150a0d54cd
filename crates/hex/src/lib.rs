//! Lower-case hexadecimal, two digits a byte: the one codec every crate of the workspace uses
//! (digests and key ids in manifests, messages and summaries; data buffers in `dump`'s JSON,
//! in exported CSV and timelines; the collector's handshake). It sits below every crate that
//! needs it (`dataseries` and `ra-fsstate` among them, which depend on no other crate of ours).
//!
//! Encoding goes through a table of each byte's two digits: one load and one store per byte,
//! the cost that matters for data buffers. Decoding takes either case.
//!
//! ```
//! assert_eq!(ra_hex::encode(b"\x00\xffA"), "00ff41");
//! assert_eq!(ra_hex::decode("00FF41"), Some(b"\x00\xffA".to_vec()));
//! assert_eq!(ra_hex::decode_array::<2>("abcd"), Some([0xab, 0xcd]));
//! assert_eq!(ra_hex::decode("abc"), None);
//! ```

/// Each byte's two digits.
const PAIRS: [[u8; 2]; 256] = {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [D[i >> 4], D[i & 15]];
        i += 1;
    }
    t
};

/// `b` as lower-case hex, `2 * b.len()` digits.
pub fn encode(b: &[u8]) -> String {
    let mut s = vec![[0u8; 2]; b.len()];
    for (o, &x) in s.iter_mut().zip(b) {
        *o = PAIRS[usize::from(x)];
    }
    String::from_utf8(s.into_flattened()).expect("hex digits are ASCII")
}

/// Append the lower-case hex of `b` to `out`.
pub fn encode_into(out: &mut Vec<u8>, b: &[u8]) {
    out.reserve(2 * b.len());
    for &x in b {
        out.extend_from_slice(&PAIRS[usize::from(x)]);
    }
}

/// Append the lower-case hex of `b` to `out`.
pub fn push_str(out: &mut String, b: &[u8]) {
    out.reserve(2 * b.len());
    for &x in b {
        let [h, l] = PAIRS[usize::from(x)];
        out.push(char::from(h));
        out.push(char::from(l));
    }
}

fn digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The bytes of hex digits `s` (either case); `None` on an odd length or a non-hex digit.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    if s.len() % 2 != 0 {
        return None;
    }
    s.chunks_exact(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

/// Exactly `N` bytes from exactly `2 * N` hex digits (either case); `None` otherwise.
pub fn decode_array<const N: usize>(s: &str) -> Option<[u8; N]> {
    let s = s.as_bytes();
    if s.len() != 2 * N {
        return None;
    }
    let mut o = [0u8; N];
    for (b, p) in o.iter_mut().zip(s.chunks_exact(2)) {
        *b = digit(p[0])? << 4 | digit(p[1])?;
    }
    Some(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_byte_has_its_two_digits() {
        let all: Vec<u8> = (0..=255).collect();
        let want: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(encode(&all), want);
        let mut v = b"x=".to_vec();
        encode_into(&mut v, &all);
        assert_eq!(v, [&b"x="[..], want.as_bytes()].concat());
        let mut s = String::from("y=");
        push_str(&mut s, &all);
        assert_eq!(s, format!("y={want}"));
        assert_eq!(encode(b""), "");
    }

    #[test]
    fn decoding_takes_either_case_and_refuses_what_is_not_hex() {
        assert_eq!(decode("0aFf"), Some(vec![0x0a, 0xff]));
        assert_eq!(decode(""), Some(vec![]));
        for bad in ["0", "0g", "g0", "0x12", " 12", "12 ", "é1"] {
            assert_eq!(decode(bad), None, "{bad:?}");
        }
        assert_eq!(decode_array::<1>("Ab"), Some([0xab]));
        assert_eq!(decode_array::<2>("abc"), None, "too short");
        assert_eq!(decode_array::<1>("abcd"), None, "too long");
        assert_eq!(decode_array::<2>("ab+d"), None);
        // A sign is not a digit (u8::from_str_radix would take "+a").
        assert_eq!(decode_array::<1>("+a"), None);
    }

    proptest! {
        #[test]
        fn round_trip(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let h = encode(&b);
            prop_assert_eq!(decode(&h), Some(b.clone()));
            prop_assert_eq!(decode(&h.to_uppercase()), Some(b));
        }
    }
}
