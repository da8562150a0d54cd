//! How values are binned (`--buckets`): log2 (FSprof's and bcc's, the default), log10, or
//! linear buckets of a fixed width. Every histogram keeps 64 buckets whatever the scale; the
//! scale says which values each holds. A profile's [`crate::Meta::buckets`] names its scale,
//! and everything that reads bucket bounds (checks, quantiles, rows, peaks, SVG, metrics)
//! takes it from there.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::BUCKETS;

/// A bucket scale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Scale {
    /// Bucket `k` holds `2^(k-1) <= v < 2^k`; bucket 0 holds 0; bucket 63 everything from
    /// 2^62 up.
    #[default]
    Log2,
    /// Bucket `k` holds `10^(k-1) <= v < 10^k`; bucket 0 holds 0; bucket 20 (the last used:
    /// 10^19 <= v) holds the rest.
    Log10,
    /// Bucket `k` holds `k * width <= v < (k + 1) * width`; bucket 63 everything from
    /// `63 * width` up.
    Linear {
        /// The width of a bucket, in the profile's unit (ns, bytes, calls); positive as
        /// parsed (a 0 is read as 1).
        width: u64,
    },
}

/// 10^k for k in 0..=19.
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

impl Scale {
    /// `log2`, `log10`, `linear:WIDTH` (WIDTH a count of the profile's unit, or with a unit
    /// of time: `linear:100us`, `linear:4k` for sizes).
    pub fn parse(s: &str) -> Result<Scale, String> {
        match s {
            "log2" | "" => Ok(Scale::Log2),
            "log10" => Ok(Scale::Log10),
            _ => {
                let Some(w) = s.strip_prefix("linear:") else {
                    return Err(format!(
                        "unknown bucket scale `{s}` (known: log2, log10, linear:WIDTH)"
                    ));
                };
                let width = parse_width(w).ok_or_else(|| {
                    format!(
                        "linear:{w}: give a positive whole width, e.g. linear:1000, \
                         linear:100us, linear:4k"
                    )
                })?;
                Ok(Scale::Linear { width })
            }
        }
    }

    /// The bucket holding value `v`.
    #[inline]
    pub fn bucket_of(self, v: u64) -> usize {
        match self {
            Scale::Log2 => crate::bucket_of(v),
            Scale::Log10 => POW10.iter().take_while(|&&p| p <= v).count(),
            Scale::Linear { width } => ((v / width.max(1)) as usize).min(BUCKETS - 1),
        }
    }

    /// The values bucket `k` holds: `[lo, hi]`, both inclusive. Buckets past the last one a
    /// scale uses hold nothing (`(u64::MAX, u64::MAX)`).
    pub fn bounds(self, k: usize) -> (u64, u64) {
        match self {
            Scale::Log2 => crate::bucket_bounds(k),
            Scale::Log10 => match k {
                0 => (0, 0),
                1..=19 => (POW10[k - 1], POW10[k] - 1),
                20 => (POW10[19], u64::MAX),
                _ => (u64::MAX, u64::MAX),
            },
            Scale::Linear { width } => {
                let w = width.max(1);
                let lo = (k as u64).saturating_mul(w);
                if k >= BUCKETS - 1 {
                    (lo, u64::MAX)
                } else {
                    (lo, lo.saturating_add(w - 1))
                }
            }
        }
    }

    /// How many buckets the scale uses (the rest stay empty).
    pub fn used(self) -> usize {
        match self {
            Scale::Log10 => 21,
            _ => BUCKETS,
        }
    }
}

fn parse_width(w: &str) -> Option<u64> {
    let (num, mult) = [
        ("ns", 1u64),
        ("us", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
        ("k", 1 << 10),
        ("K", 1 << 10),
        ("M", 1 << 20),
        ("G", 1 << 30),
    ]
    .iter()
    .find_map(|(suf, m)| w.strip_suffix(suf).map(|n| (n, *m)))
    .unwrap_or((w, 1));
    let n: u64 = num.parse().ok()?;
    n.checked_mul(mult).filter(|&x| x > 0)
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scale::Log2 => f.write_str("log2"),
            Scale::Log10 => f.write_str("log10"),
            Scale::Linear { width } => write!(f, "linear:{width}"),
        }
    }
}

impl Serialize for Scale {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Scale {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scale, D::Error> {
        let s = String::deserialize(d)?;
        Scale::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lies_in_its_buckets_bounds() {
        for scale in [Scale::Log2, Scale::Log10, Scale::Linear { width: 1000 }] {
            for v in [0u64, 1, 9, 10, 99, 100, 999, 1000, 1001, 62_999, 63_000, 1 << 40, u64::MAX] {
                let k = scale.bucket_of(v);
                let (lo, hi) = scale.bounds(k);
                assert!(k < scale.used() && lo <= v && v <= hi, "{scale} {v}: bucket {k}");
            }
            for k in 0..scale.used() {
                let (lo, hi) = scale.bounds(k);
                assert_eq!((scale.bucket_of(lo), scale.bucket_of(hi)), (k, k), "{scale} {k}");
            }
        }
        assert_eq!(Scale::Log10.bucket_of(10), 2);
        assert_eq!(Scale::Linear { width: 100 }.bucket_of(250), 2);
    }

    #[test]
    fn names_parse_back() {
        for s in ["log2", "log10", "linear:250"] {
            assert_eq!(Scale::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(Scale::parse("linear:100us").unwrap(), Scale::Linear { width: 100_000 });
        assert_eq!(Scale::parse("linear:4k").unwrap(), Scale::Linear { width: 4096 });
        assert!(Scale::parse("linear:0").is_err());
        assert!(Scale::parse("linear:x").is_err());
        assert!(Scale::parse("log3").unwrap_err().contains("unknown bucket scale"));
    }
}
