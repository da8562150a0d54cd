//! Lower-case hexadecimal, two digits a byte: the one codec every crate of the workspace uses
//! (digests and key ids in manifests, messages and summaries; data buffers in `dump`'s JSON,
//! in exported CSV and timelines; the collector's handshake). It sits below every crate that
//! needs it (`dataseries` and `ra-fsstate` among them, which depend on no other crate of ours).
//!
//! Encoding makes sixteen bytes' digits a step (SSE2 on x86_64), the rest through a table of
//! each byte's two digits: the cost that matters for data buffers. Decoding takes either case.
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
    let mut s = Vec::new();
    encode_into(&mut s, b);
    String::from_utf8(s).expect("hex digits are ASCII")
}

/// Append the lower-case hex of `b` to `out`: sixteen bytes a step (`hex16`), the rest by
/// the table.
pub fn encode_into(out: &mut Vec<u8>, b: &[u8]) {
    let start = out.len();
    out.resize(start + 2 * b.len(), 0);
    let dst = &mut out[start..];
    let (src16, rest) = b.split_at(b.len() / 16 * 16);
    let (dst32, dst_rest) = dst.split_at_mut(src16.len() * 2);
    for (d, s) in dst32.chunks_exact_mut(32).zip(src16.chunks_exact(16)) {
        hex16(s.try_into().expect("chunks of 16"), d.try_into().expect("chunks of 32"));
    }
    for (d, &s) in dst_rest.chunks_exact_mut(2).zip(rest) {
        d.copy_from_slice(&PAIRS[usize::from(s)]);
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

/// The 32 hex digits of 16 bytes. On x86_64 by SSE2: 8.3 GB/s of input on this project's
/// 2-core VM against the table's 3.7 (a 64-bit-word version reached 1.5), which is what
/// `dump --format jsonl` of data buffers needs.
#[cfg(target_arch = "x86_64")]
fn hex16(s: &[u8; 16], d: &mut [u8; 32]) {
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
    unsafe { hex16_sse2(s, d) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn hex16_sse2(s: &[u8; 16], d: &mut [u8; 32]) {
    use std::arch::x86_64::*;
    // SAFETY: an unaligned load of the 16 bytes of `s`.
    let x = unsafe { _mm_loadu_si128(s.as_ptr().cast()) };
    let nibble = _mm_set1_epi8(0x0f);
    // (A 16-bit lane shifted by 4: each byte's high nibble lands in its low bits.)
    let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), nibble);
    let lo = _mm_and_si128(x, nibble);
    // n + '0', and 39 more ('a' - '0' - 10) where n > 9.
    let digit = |n: __m128i| {
        let letter = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(39));
        _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)), letter)
    };
    let (hi, lo) = (digit(hi), digit(lo));
    // SAFETY: unaligned stores of 16 bytes at offsets 0 and 16 of the 32 bytes of `d`.
    unsafe {
        _mm_storeu_si128(d.as_mut_ptr().cast(), _mm_unpacklo_epi8(hi, lo));
        _mm_storeu_si128(d.as_mut_ptr().add(16).cast(), _mm_unpackhi_epi8(hi, lo));
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn hex16(s: &[u8; 16], d: &mut [u8; 32]) {
    for (d, &s) in d.chunks_exact_mut(2).zip(s) {
        d.copy_from_slice(&PAIRS[usize::from(s)]);
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

    /// Every byte value in every lane of a 16-byte step, and the tail after it.
    #[test]
    fn every_byte_in_every_lane() {
        for b in 0..=255u8 {
            for lane in 0..19 {
                let mut w = [b'a'; 19];
                w[lane] = b;
                let want: String = w.iter().map(|x| format!("{x:02x}")).collect();
                assert_eq!(encode(&w), want, "{b:#x} in lane {lane}");
            }
        }
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

        /// Any length (16-byte steps and a tail), appended after what `out` held.
        #[test]
        fn encode_into_is_the_per_byte_digits(b in proptest::collection::vec(any::<u8>(), 0..100)) {
            let mut got = b"x".to_vec();
            encode_into(&mut got, &b);
            let want: String = b.iter().map(|x| format!("{x:02x}")).collect();
            prop_assert_eq!(got, format!("x{want}").into_bytes());
        }
    }
}
