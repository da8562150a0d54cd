//! Checksums used by DSv1: zlib's adler32 and Bob Jenkins' 1996 lookup2 hash.

/// Standard adler32 (initial value 1) of `data`.
pub fn adler32(data: &[u8]) -> u32 {
    simd_adler32::adler32(&data)
}

/// adler32 of an on-disk extent: every byte except the adler field itself at `[16, 20)`.
pub(crate) fn extent_adler32(extent: &[u8]) -> u32 {
    let mut a = simd_adler32::Adler32::new();
    a.write(extent.get(..16).unwrap_or(extent));
    a.write(extent.get(20..).unwrap_or(&[]));
    a.finish()
}

#[inline(always)]
fn mix(mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
    // x - y - z written as x - (y + z): same value, shorter dependency chain.
    a = a.wrapping_sub(b.wrapping_add(c)) ^ (c >> 13);
    b = b.wrapping_sub(c.wrapping_add(a)) ^ (a << 8);
    c = c.wrapping_sub(a.wrapping_add(b)) ^ (b >> 13);
    a = a.wrapping_sub(b.wrapping_add(c)) ^ (c >> 12);
    b = b.wrapping_sub(c.wrapping_add(a)) ^ (a << 16);
    c = c.wrapping_sub(a.wrapping_add(b)) ^ (b >> 5);
    a = a.wrapping_sub(b.wrapping_add(c)) ^ (c >> 3);
    b = b.wrapping_sub(c.wrapping_add(a)) ^ (a << 10);
    c = c.wrapping_sub(a.wrapping_add(b)) ^ (b >> 15);
    (a, b, c)
}

#[inline(always)]
fn le32(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[..4]);
    u32::from_le_bytes(w)
}

/// Bob Jenkins' lookup2 `hash(k, length, initval)`, reading words little-endian regardless of
/// the host (the DataSeries `bjhash`).
pub fn bjhash(initval: u32, data: &[u8]) -> u32 {
    bjhash_core(GOLDEN, GOLDEN, initval, data, data.len())
}

const GOLDEN: u32 = 0x9e37_79b9;

/// `bjhash(initval, [0, 0, 0, 0] ++ data)` without building the concatenation (the variable
/// heap starts with 4 zero bytes that are not stored).
pub(crate) fn bjhash_zero_prefixed(initval: u32, data: &[u8]) -> u32 {
    if data.len() < 8 {
        let mut v = [0u8; 12];
        v[4..4 + data.len()].copy_from_slice(data);
        return bjhash(initval, &v[..4 + data.len()]);
    }
    let (a, b, c) = mix(
        GOLDEN,
        GOLDEN.wrapping_add(le32(&data[0..4])),
        initval.wrapping_add(le32(&data[4..8])),
    );
    bjhash_core(a, b, c, &data[8..], data.len() + 4)
}

/// The lookup2 loop and tail from a given state; `total_len` is the whole input's length.
#[inline(always)]
fn bjhash_core(mut a: u32, mut b: u32, mut c: u32, data: &[u8], total_len: usize) -> u32 {
    let mut chunks = data.chunks_exact(12);
    for k in &mut chunks {
        a = a.wrapping_add(le32(&k[0..4]));
        b = b.wrapping_add(le32(&k[4..8]));
        c = c.wrapping_add(le32(&k[8..12]));
        (a, b, c) = mix(a, b, c);
    }
    let rest = chunks.remainder();
    // The length is added modulo 2^32, as the C code's `ub4` arithmetic does.
    c = c.wrapping_add(total_len as u32);
    for (j, &byte) in rest.iter().enumerate() {
        let v = u32::from(byte);
        match j {
            0..=3 => a = a.wrapping_add(v << (8 * j)),
            4..=7 => b = b.wrapping_add(v << (8 * (j - 4))),
            _ => c = c.wrapping_add(v << (8 * (j - 7))),
        }
    }
    mix(a, b, c).2
}

/// `BobJenkinsHashMix3`: one `mix` round, returning `c` (used for the chained checksum).
pub fn mix3(a: u32, b: u32, c: u32) -> u32 {
    mix(a, b, c).2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler_known() {
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    #[test]
    fn zero_prefixed_matches_concatenation() {
        let data: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(91)).collect();
        for n in 0..data.len() {
            let mut cat = vec![0u8; 4];
            cat.extend_from_slice(&data[..n]);
            assert_eq!(bjhash_zero_prefixed(77, &data[..n]), bjhash(77, &cat), "n={n}");
        }
    }

    #[test]
    fn bjhash_lengths_do_not_panic() {
        let data: Vec<u8> = (0..40u8).collect();
        let mut seen = std::collections::HashSet::new();
        for n in 0..=data.len() {
            seen.insert(bjhash(1972, &data[..n]));
        }
        assert_eq!(seen.len(), data.len() + 1);
    }
}
