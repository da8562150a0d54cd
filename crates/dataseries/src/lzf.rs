//! liblzf's raw token format: a small safe decoder and a simple greedy encoder.

use crate::compress::DecodeError;

/// Decodes a liblzf token stream; fails if the output would exceed `max_len`.
pub(crate) fn decompress(input: &[u8], max_len: usize) -> Result<Vec<u8>, DecodeError> {
    let mut out: Vec<u8> = Vec::with_capacity(input.len().saturating_mul(3).min(max_len));
    let mut ip = 0usize;
    let bad = |what: &str| DecodeError::Codec(format!("lzf: {what}"));
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            let lit = input.get(ip..ip + n).ok_or_else(|| bad("literal run past end of input"))?;
            if out.len() + n > max_len {
                return Err(DecodeError::TooLong);
            }
            out.extend_from_slice(lit);
            ip += n;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(*input.get(ip).ok_or_else(|| bad("truncated match length"))?);
                ip += 1;
            }
            let lo = usize::from(*input.get(ip).ok_or_else(|| bad("truncated match offset"))?);
            ip += 1;
            let dist = ((ctrl & 0x1f) << 8) + lo + 1;
            let len = len + 2;
            if dist > out.len() {
                return Err(bad("back reference before start of output"));
            }
            if out.len() + len > max_len {
                return Err(DecodeError::TooLong);
            }
            copy_match(&mut out, dist, len);
        }
    }
    Ok(out)
}

/// Appends `len` bytes copied from `dist` bytes back (overlap allowed). `dist <= out.len()`.
pub(crate) fn copy_match(out: &mut Vec<u8>, dist: usize, len: usize) {
    let start = out.len() - dist;
    if dist >= len {
        out.extend_from_within(start..start + len);
    } else {
        for i in 0..len {
            let b = out[start + i];
            out.push(b);
        }
    }
}

const HLOG: u32 = 14;
const MAX_LIT: usize = 32;
const MAX_OFF: usize = 1 << 13;
const MAX_REF: usize = (1 << 8) + (1 << 3);

/// Encodes with a greedy single-probe hash table (output is decodable by liblzf).
pub(crate) fn compress(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() + input.len() / 16 + 8);
    let mut table = vec![usize::MAX; 1 << HLOG];
    let mut lit_start = 0usize;
    let mut i = 0usize;
    let n = input.len();
    let flush = |out: &mut Vec<u8>, lits: &[u8]| {
        for chunk in lits.chunks(MAX_LIT) {
            out.push((chunk.len() - 1) as u8);
            out.extend_from_slice(chunk);
        }
    };
    while i + 2 < n {
        let v = u32::from(input[i]) << 16 | u32::from(input[i + 1]) << 8 | u32::from(input[i + 2]);
        let h = (v.wrapping_mul(2_654_435_761) >> (32 - HLOG)) as usize;
        let cand = table[h];
        table[h] = i;
        if cand != usize::MAX && i - cand <= MAX_OFF && input[cand..cand + 3] == input[i..i + 3] {
            let max = (n - i).min(MAX_REF);
            let mut len = 3;
            while len < max && input[cand + len] == input[i + len] {
                len += 1;
            }
            flush(&mut out, &input[lit_start..i]);
            let off = i - cand - 1;
            let l = len - 2;
            if l < 7 {
                out.push(((l << 5) | (off >> 8)) as u8);
            } else {
                out.push(((7 << 5) | (off >> 8)) as u8);
                out.push((l - 7) as u8);
            }
            out.push((off & 0xff) as u8);
            i += len;
            lit_start = i;
        } else {
            i += 1;
        }
    }
    flush(&mut out, &input[lit_start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut data = b"abcabcabcabcabcabcxyz".repeat(100);
        data.extend((0..5000u32).map(|i| (i * 7919 % 251) as u8));
        data.extend(std::iter::repeat_n(0u8, 1000));
        let c = compress(&data);
        assert!(c.len() < data.len());
        assert_eq!(decompress(&c, data.len()).unwrap(), data);
        assert_eq!(decompress(&compress(b""), 0).unwrap(), b"");
        assert_eq!(decompress(&compress(b"ab"), 2).unwrap(), b"ab");
    }
}
