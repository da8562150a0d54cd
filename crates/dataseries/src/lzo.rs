//! A safe LZO1X decompressor (the format written by `lzo1x_1` and `lzo1x_999`), equivalent to
//! `lzo1x_decompress_safe`: every read and back reference is bounds-checked.

use crate::compress::DecodeError;
use crate::lzf::copy_match;

struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    fn byte(&mut self) -> Result<usize, DecodeError> {
        let b = *self.data.get(self.pos).ok_or_else(|| bad("input overrun"))?;
        self.pos += 1;
        Ok(usize::from(b))
    }

    /// A length continued by zero bytes: each 0 adds 255, the final non-zero byte is added to
    /// `base`.
    fn run(&mut self, base: usize) -> Result<usize, DecodeError> {
        let mut t = base;
        loop {
            let b = self.byte()?;
            if b != 0 {
                return Ok(t + b);
            }
            t = t.checked_add(255).ok_or_else(|| bad("length overflow"))?;
        }
    }
}

fn bad(what: &str) -> DecodeError {
    DecodeError::Codec(format!("lzo: {what}"))
}

fn literals(
    out: &mut Vec<u8>,
    inp: &mut Input<'_>,
    n: usize,
    max_len: usize,
) -> Result<(), DecodeError> {
    let end = inp.pos.checked_add(n).ok_or_else(|| bad("input overrun"))?;
    let lit = inp.data.get(inp.pos..end).ok_or_else(|| bad("input overrun"))?;
    if out.len() + n > max_len {
        return Err(DecodeError::TooLong);
    }
    out.extend_from_slice(lit);
    inp.pos = end;
    Ok(())
}

fn back_ref(out: &mut Vec<u8>, dist: usize, len: usize, max_len: usize) -> Result<(), DecodeError> {
    if dist == 0 || dist > out.len() {
        return Err(bad("lookbehind overrun"));
    }
    if out.len() + len > max_len {
        return Err(DecodeError::TooLong);
    }
    copy_match(out, dist, len);
    Ok(())
}

/// Decodes a raw LZO1X block; fails if the output would exceed `max_len`, if the input does not
/// end with the end-of-stream marker, or if input bytes follow it.
pub(crate) fn decompress(input: &[u8], max_len: usize) -> Result<Vec<u8>, DecodeError> {
    let mut out: Vec<u8> = Vec::with_capacity(input.len().saturating_mul(3).min(max_len));
    let mut inp = Input { data: input, pos: 0 };
    // state: 0 = after a match without trailing literals, 1..=3 = after that many trailing
    // literals, 4 = after a literal run of 4 or more bytes.
    let mut state: usize;
    let first = *input.first().ok_or_else(|| bad("empty input"))?;
    if first > 17 {
        inp.pos = 1;
        let t = usize::from(first) - 17;
        literals(&mut out, &mut inp, t, max_len)?;
        state = if t < 4 { t } else { 4 };
    } else {
        state = 0;
    }
    loop {
        let t = inp.byte()?;
        let (dist, len, next);
        if t < 16 {
            match state {
                0 => {
                    let n = if t == 0 { inp.run(15)? } else { t };
                    literals(&mut out, &mut inp, n + 3, max_len)?;
                    state = 4;
                    continue;
                }
                4 => {
                    // 3-byte match, distance 2049..=3072.
                    dist = 1 + 0x800 + (t >> 2) + (inp.byte()? << 2);
                    len = 3;
                    next = t & 3;
                }
                _ => {
                    // 2-byte match after 1..3 trailing literals.
                    dist = 1 + (t >> 2) + (inp.byte()? << 2);
                    len = 2;
                    next = t & 3;
                }
            }
        } else if t >= 64 {
            dist = 1 + ((t >> 2) & 7) + (inp.byte()? << 3);
            len = (t >> 5) + 1;
            next = t & 3;
        } else if t >= 32 {
            let n = if t & 31 == 0 { inp.run(31)? } else { t & 31 };
            let lo = inp.byte()?;
            let hi = inp.byte()?;
            dist = 1 + ((lo >> 2) | (hi << 6));
            len = n + 2;
            next = lo & 3;
        } else {
            let n = if t & 7 == 0 { inp.run(7)? } else { t & 7 };
            let lo = inp.byte()?;
            let hi = inp.byte()?;
            let d = ((t & 8) << 11) + ((lo >> 2) | (hi << 6));
            if d == 0 {
                // End-of-stream marker.
                if inp.pos != input.len() {
                    return Err(bad("input not consumed after end marker"));
                }
                return Ok(out);
            }
            dist = d + 0x4000;
            len = n + 2;
            next = lo & 3;
        }
        back_ref(&mut out, dist, len, max_len)?;
        if next > 0 {
            literals(&mut out, &mut inp, next, max_len)?;
        }
        state = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_only_stream() {
        // 21 - 17 = 4 literals, then the end marker (M4 with distance 0).
        let s = [21u8, b'a', b'b', b'c', b'd', 0x11, 0, 0];
        assert_eq!(decompress(&s, 100).unwrap(), b"abcd");
        assert!(decompress(&s, 3).is_err());
        assert!(decompress(&s[..6], 100).is_err());
        assert!(decompress(&[], 100).is_err());
    }
}
