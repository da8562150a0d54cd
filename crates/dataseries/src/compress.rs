//! Section codecs: the eight DSv1 compression modes.
//!
//! Decoding never allocates more than the caller's limit (derived from the extent header) and,
//! for codecs whose expansion ratio is bounded, never more than that ratio times the input.

use std::io::Read;

/// A section compression mode. The discriminant is the on-disk mode byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Stored raw (mode 0).
    None,
    /// Raw LZO1X block (mode 1). Read only: this crate cannot write LZO.
    Lzo,
    /// zlib stream, RFC 1950 (mode 2).
    Zlib,
    /// Full bzip2 stream (mode 3).
    Bz2,
    /// Raw liblzf token stream (mode 4).
    Lzf,
    /// Raw snappy block, not the framing format (mode 5).
    Snappy,
    /// Raw LZ4 block (mode 6).
    Lz4,
    /// Raw LZ4 block written by the HC compressor (mode 7). This crate writes it with the same
    /// (non-HC) compressor as [`Compression::Lz4`]; the block format is identical.
    Lz4hc,
}

impl Compression {
    /// All modes, in mode-byte order.
    pub const ALL: [Compression; 8] = [
        Compression::None,
        Compression::Lzo,
        Compression::Zlib,
        Compression::Bz2,
        Compression::Lzf,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Lz4hc,
    ];

    /// The mode for an on-disk mode byte, `None` if the byte is not 0..=7.
    pub fn from_mode(mode: u8) -> Option<Self> {
        Self::ALL.get(usize::from(mode)).copied()
    }

    /// The on-disk mode byte.
    pub fn mode(self) -> u8 {
        self as u8
    }

    /// The lowercase name (as DataSeries spells it).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lzo => "lzo",
            Compression::Zlib => "zlib",
            Compression::Bz2 => "bz2",
            Compression::Lzf => "lzf",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Lz4hc => "lz4hc",
        }
    }

    /// Parses a lowercase name (`"gz"` is accepted for zlib).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "gz" | "gzip" => Some(Compression::Zlib),
            "bzip2" => Some(Compression::Bz2),
            _ => Self::ALL.iter().copied().find(|c| c.name() == name),
        }
    }

    /// Whether this crate can write the mode.
    pub fn can_encode(self) -> bool {
        self != Compression::Lzo
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a section failed to decode.
#[derive(Debug)]
pub(crate) enum DecodeError {
    /// The codec rejected the data.
    Codec(String),
    /// The output would exceed the limit.
    TooLong,
}

/// Largest expansion ratio of the LZ-style codecs (an LZ4/LZO/LZF token can describe at most
/// a few hundred output bytes per input byte); used to cap allocations.
const LZ_MAX_RATIO: usize = 264;

fn lz_cap(input_len: usize, max_len: usize) -> usize {
    input_len.saturating_mul(LZ_MAX_RATIO).saturating_add(64).min(max_len)
}

/// Decompresses one section. The result is at most `max_len` bytes long.
#[cfg(test)]
pub(crate) fn decompress(
    mode: Compression,
    input: &[u8],
    max_len: usize,
) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    decompress_into(mode, input, max_len, &mut out)?;
    Ok(out)
}

/// Decompresses one section, appending at most `max_len` bytes to `out`.
pub(crate) fn decompress_into(
    mode: Compression,
    input: &[u8],
    max_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let base = out.len();
    match mode {
        Compression::None => {
            if input.len() > max_len {
                return Err(DecodeError::TooLong);
            }
            out.extend_from_slice(input);
            Ok(())
        }
        Compression::Zlib => {
            read_capped(flate2::read::ZlibDecoder::new(input), input.len(), max_len, out)
        }
        Compression::Bz2 => {
            read_capped(bzip2::read::BzDecoder::new(input), input.len(), max_len, out)
        }
        Compression::Lzf => {
            out.extend_from_slice(&crate::lzf::decompress(input, max_len)?);
            Ok(())
        }
        Compression::Lzo => {
            out.extend_from_slice(&crate::lzo::decompress(input, max_len)?);
            Ok(())
        }
        Compression::Snappy => {
            let n =
                snap::raw::decompress_len(input).map_err(|e| DecodeError::Codec(e.to_string()))?;
            if n > max_len {
                return Err(DecodeError::TooLong);
            }
            if n > lz_cap(input.len(), usize::MAX) {
                return Err(DecodeError::Codec(format!(
                    "declared length {n} is implausible for {} input bytes",
                    input.len()
                )));
            }
            out.resize(base + n, 0);
            let got = snap::raw::Decoder::new()
                .decompress(input, &mut out[base..])
                .map_err(|e| DecodeError::Codec(e.to_string()))?;
            out.truncate(base + got);
            Ok(())
        }
        Compression::Lz4 | Compression::Lz4hc => {
            let cap = lz_cap(input.len(), max_len);
            out.resize(base + cap, 0);
            match lz4_flex::block::decompress_into(input, &mut out[base..]) {
                Ok(n) => {
                    out.truncate(base + n);
                    Ok(())
                }
                Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if cap == max_len => {
                    Err(DecodeError::TooLong)
                }
                Err(e) => Err(DecodeError::Codec(e.to_string())),
            }
        }
    }
}

fn read_capped(
    r: impl Read,
    input_len: usize,
    max_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let base = out.len();
    let limit = u64::try_from(max_len).unwrap_or(u64::MAX).saturating_add(1);
    out.reserve(input_len.saturating_mul(4).min(max_len));
    r.take(limit).read_to_end(out).map_err(|e| DecodeError::Codec(e.to_string()))?;
    if out.len() - base > max_len {
        return Err(DecodeError::TooLong);
    }
    Ok(())
}

/// Compresses one section with one codec. `Ok(None)` when the codec cannot encode.
pub(crate) fn compress(
    mode: Compression,
    input: &[u8],
    level: u32,
) -> Result<Option<Vec<u8>>, String> {
    use std::io::Write;
    let level = level.clamp(1, 9);
    Ok(Some(match mode {
        Compression::None => input.to_vec(),
        Compression::Lzo => return Ok(None),
        Compression::Zlib => {
            let mut e = flate2::write::ZlibEncoder::new(
                Vec::with_capacity(input.len() / 2),
                flate2::Compression::new(level),
            );
            e.write_all(input).map_err(|e| e.to_string())?;
            e.finish().map_err(|e| e.to_string())?
        }
        Compression::Bz2 => {
            let mut e = bzip2::write::BzEncoder::new(
                Vec::with_capacity(input.len() / 2),
                bzip2::Compression::new(level),
            );
            e.write_all(input).map_err(|e| e.to_string())?;
            e.finish().map_err(|e| e.to_string())?
        }
        Compression::Lzf => crate::lzf::compress(input),
        Compression::Snappy => {
            snap::raw::Encoder::new().compress_vec(input).map_err(|e| e.to_string())?
        }
        Compression::Lz4 | Compression::Lz4hc => lz4_flex::block::compress(input),
    }))
}

/// Picks the best encoding of `input` like the C++ writer: tries every mode in `modes` in
/// order and keeps the smallest output strictly smaller than the input; otherwise stores raw.
pub(crate) fn compress_best<'a>(
    input: &'a [u8],
    modes: &[Compression],
    level: u32,
) -> Result<(Compression, std::borrow::Cow<'a, [u8]>), crate::Error> {
    let mut best: Option<(Compression, Vec<u8>)> = None;
    if !input.is_empty() {
        for &m in modes {
            if m == Compression::None {
                continue;
            }
            let Some(out) = compress(m, input, level)
                .map_err(|detail| crate::Error::Compress { mode: m, detail })?
            else {
                continue;
            };
            let limit = best.as_ref().map_or(input.len(), |(_, b)| b.len());
            if out.len() < limit {
                best = Some((m, out));
            }
        }
    }
    Ok(match best {
        Some((m, out)) => (m, std::borrow::Cow::Owned(out)),
        None => (Compression::None, std::borrow::Cow::Borrowed(input)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encodable_mode_round_trips() {
        let mut data = Vec::new();
        for i in 0..20_000u32 {
            data.extend_from_slice(&(i / 7).to_le_bytes());
            data.push((i % 13) as u8);
        }
        for m in Compression::ALL {
            if let Some(c) = compress(m, &data, 6).unwrap() {
                let d = decompress(m, &c, data.len()).unwrap();
                assert_eq!(d, data, "{m}");
                assert!(
                    matches!(decompress(m, &c, data.len() - 1), Err(DecodeError::TooLong)),
                    "{m}"
                );
            }
        }
    }

    #[test]
    fn mode_bytes_and_names() {
        for (i, m) in Compression::ALL.iter().enumerate() {
            assert_eq!(m.mode() as usize, i);
            assert_eq!(Compression::from_mode(i as u8), Some(*m));
            assert_eq!(Compression::from_name(&m.to_string()), Some(*m));
        }
        assert_eq!(Compression::from_mode(8), None);
    }
}
