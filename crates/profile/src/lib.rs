//! Latency profiles in FSprof's shape (`../shared/seeds/fsprof-tr04.txt`): for every operation,
//! a histogram of its latencies in log2 buckets, per interval of elapsed time, with the total
//! delay, so that a profile can check itself (the buckets add up to the count, the total lies
//! within what the buckets allow).
//!
//! One model for every producer: the live eBPF profiler (`reanimator profile -- CMD`), the
//! tracing file system (`reanimator fs mount --profile`) and offline profiles of traces
//! (`reanimator profile TRACE`) all fill [`Interval`]s of [`Hist`]s keyed by [`Key`].
//!
//! # Parts
//!
//! FSprof-style latency profiles (docs/PROFILE.md): the model (`Hist`: 64 log2 ns buckets, count,
//! total, min, max, errors, self-check, quantiles; `Key`, `Interval`, `Meta`), `accumulate`
//! (operations onto an epoch-anchored interval grid), `rows` (compute: summaries, bcc rows), `text`
//! (print: bcc's `print_log2_hist` layout in ns, `--table`), `json` (JSON Lines write and exact
//! read), `merge` (exact, per interval or total), `svg` (heat maps, compare's side-by-side
//! histograms, correlation series: layout, then render), `sink` (`ProfileSink`: `meta`, `interval`,
//! `finish`; Text/Json/Svg/Tee/Collect) through which every producer streams; the analysis (issue
//! 44): `scale` (`--buckets`: log2, log10, linear), `peaks` (modes by prominence; time per bucket),
//! `stats` (chi-square homogeneity with its p-value, Pearson's r; no dependency), `compare` (per
//! key, Bonferroni and a minimum shift), `correlate` (per-interval series, ranked pairs), `metrics`
//! (Prometheus exposition: classic and native schema-0 buckets, protobuf and text). Knows nothing
//! of traces.
#![warn(missing_docs)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub mod accumulate;
pub mod compare;
pub mod correlate;
pub mod json;
pub mod merge;
pub mod metrics;
pub mod peaks;
pub mod rows;
pub mod scale;
pub mod sink;
pub mod stats;
pub mod svg;
pub mod text;

pub use scale::Scale;

pub use sink::ProfileSink;

/// Errors reading, merging and comparing profiles.
///
/// The two-profile variants (`*Mismatch`) name each input by the label the caller gave it
/// (`a`, `b`: usually a file name), the first input being `a`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A line of a JSON Lines profile ([`json::read_profile`]) is not JSON.
    #[error("line {line}: not JSON ({reason})")]
    NotJson {
        /// The line's number, from 1.
        line: usize,
        /// `serde_json`'s message.
        reason: String,
    },
    /// A line is JSON but not a profile line: no `type`, an unknown one, the `meta` line not
    /// first or twice, another schema version, a missing or malformed field, a second
    /// histogram for one key in one interval.
    #[error("line {line}: {reason}")]
    Schema {
        /// The line's number, from 1.
        line: usize,
        /// What is wrong, for the message.
        reason: String,
    },
    /// A JSON profile without a `meta` line (an empty input, or only blank lines).
    #[error("empty: a JSON profile starts with a {{\"type\":\"meta\"}} line")]
    NoMeta,
    /// [`merge::merge_profiles`] was given no profile.
    #[error("nothing to merge")]
    NothingToMerge,
    /// Two profiles have different interval lengths: merging without `--total`, or comparing
    /// per interval.
    #[error(
        "interval lengths differ: {a_ns} ns in {a}, {b_ns} ns in {b} (merge --total collapses \
         all intervals into one)"
    )]
    IntervalMismatch {
        /// The first input's label.
        a: String,
        /// Its [`Meta::interval_ns`].
        a_ns: u64,
        /// The second input's label.
        b: String,
        /// Its [`Meta::interval_ns`].
        b_ns: u64,
    },
    /// Two profiles are split differently ([`Meta::by`]).
    #[error("groupings differ: by {a_by} in {a}, by {b_by} in {b}")]
    ByMismatch {
        /// The first input's label.
        a: String,
        /// Its [`Meta::by`].
        a_by: String,
        /// The second input's label.
        b: String,
        /// Its [`Meta::by`].
        b_by: String,
    },
    /// Two profiles bin values differently ([`Meta::buckets`]).
    #[error("buckets differ: {a_buckets} in {a}, {b_buckets} in {b} (profile both with the same --buckets)")]
    ScaleMismatch {
        /// The first input's label.
        a: String,
        /// Its scale, as `--buckets` spells it.
        a_buckets: String,
        /// The second input's label.
        b: String,
        /// Its scale, as `--buckets` spells it.
        b_buckets: String,
    },
    /// Two profiles were sampled at different rates ([`Meta::sample`]).
    #[error("sampling differs: one call in {a_n} in {a}, one in {b_n} in {b} (profile both with the same --sample)")]
    SampleMismatch {
        /// The first input's label.
        a: String,
        /// Its [`Meta::sample`].
        a_n: u64,
        /// The second input's label.
        b: String,
        /// Its [`Meta::sample`].
        b_n: u64,
    },
    /// Two profiles measure different things ([`Meta::value`]: latency against a value, or
    /// two different values).
    #[error("what is measured differs: {a_what} in {a}, {b_what} in {b}")]
    ValueMismatch {
        /// The first input's label.
        a: String,
        /// Its [`Meta::value`].
        a_what: String,
        /// The second input's label.
        b: String,
        /// Its [`Meta::value`].
        b_what: String,
    },
    /// [`compare::compare`]: the two profiles hold different sets of layers (both non-empty).
    #[error("layers differ: {a} has {a_layers}, {b} has {b_layers} (profile both with the same --layers)")]
    LayerMismatch {
        /// The first input's label.
        a: String,
        /// Its layers, comma-separated.
        a_layers: String,
        /// The second input's label.
        b: String,
        /// Its layers, comma-separated.
        b_layers: String,
    },
    /// A `--correlate` key that does not parse, or names no key or several keys of the
    /// profile ([`correlate::parse_key`]); the message says which and how to fix it.
    #[error("{0}")]
    BadKey(String),
    /// Reading a profile failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A whole profile: its description and its intervals in time order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// Where the profile came from and how it was cut.
    pub meta: Meta,
    /// The intervals in time order; an interval in which nothing happened may be absent (the
    /// grid has gaps).
    pub intervals: Vec<Interval>,
}

/// Number of log2 buckets: bucket `k` holds latencies `2^(k-1) <= ns < 2^k` (bucket 0 holds
/// 0 ns), FSprof's definition; bucket 63 also takes everything from 2^62 ns up.
pub const BUCKETS: usize = 64;

/// The bucket of a latency of `ns` nanoseconds: its bit length.
#[inline]
pub fn bucket_of(ns: u64) -> usize {
    ((64 - ns.leading_zeros()) as usize).min(BUCKETS - 1)
}

/// The latencies bucket `k` holds: `[lo, hi]`, both inclusive.
pub fn bucket_bounds(k: usize) -> (u64, u64) {
    match k {
        0 => (0, 0),
        k if k >= BUCKETS - 1 => (1 << (BUCKETS - 2), u64::MAX),
        k => (1 << (k - 1), (1 << k) - 1),
    }
}

/// One operation's latencies over one interval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hist {
    /// `buckets[k]`: operations whose latency fell in bucket `k` (see [`BUCKETS`]).
    #[serde(with = "bucket_list")]
    pub buckets: [u64; BUCKETS],
    /// Operations counted (independently of the buckets: the consistency check compares them).
    pub count: u64,
    /// Total latency in ns (FSprof's total delay per operation).
    pub total_ns: u64,
    /// Smallest latency in ns (`u64::MAX` while `count` is 0).
    pub min_ns: u64,
    /// Largest latency in ns (0 while `count` is 0).
    pub max_ns: u64,
    /// Operations that failed (returned an error), where the producer knows.
    #[serde(default)]
    pub errors: u64,
}

impl Default for Hist {
    fn default() -> Self {
        Hist {
            buckets: [0; BUCKETS],
            count: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            errors: 0,
        }
    }
}

impl Hist {
    /// Count one operation of `ns` nanoseconds (log2 buckets).
    #[inline]
    pub fn record(&mut self, ns: u64, failed: bool) {
        self.record_at(bucket_of(ns), ns, failed);
    }

    /// Count one operation of value `v` in the buckets of `scale`.
    #[inline]
    pub fn record_in(&mut self, scale: Scale, v: u64, failed: bool) {
        self.record_at(scale.bucket_of(v), v, failed);
    }

    #[inline]
    fn record_at(&mut self, bucket: usize, ns: u64, failed: bool) {
        self.buckets[bucket] += 1;
        self.count += 1;
        self.total_ns = self.total_ns.saturating_add(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.errors += u64::from(failed);
    }

    /// Add `other` into `self` (exact: merging histograms of disjoint operation sets gives the
    /// histogram of their union).
    pub fn merge(&mut self, other: &Hist) {
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.errors += other.errors;
    }

    /// The counts of one call in `n` scaled to all calls (`--sample N`): buckets, count,
    /// total and errors times `n`; min and max as observed. The check still holds.
    pub fn scale_counts(&mut self, n: u64) {
        if n <= 1 {
            return;
        }
        for b in &mut self.buckets {
            *b = b.saturating_mul(n);
        }
        self.count = self.count.saturating_mul(n);
        self.total_ns = self.total_ns.saturating_mul(n);
        self.errors = self.errors.saturating_mul(n);
    }

    /// The histogram's own consistency check (log2 buckets).
    pub fn check(&self) -> Check {
        self.check_in(Scale::Log2)
    }

    /// The consistency check in the buckets of `scale`.
    pub fn check_in(&self, scale: Scale) -> Check {
        let sum: u64 = self.buckets.iter().sum();
        let (mut lo, mut hi) = (0u128, 0u128);
        for (k, &c) in self.buckets.iter().enumerate() {
            let (l, h) = scale.bounds(k);
            lo += u128::from(l) * u128::from(c);
            hi += u128::from(h) * u128::from(c);
        }
        let t = u128::from(self.total_ns);
        Check {
            buckets_sum: sum,
            count: self.count,
            total_lo_ns: lo.min(u128::from(u64::MAX)) as u64,
            total_hi_ns: hi.min(u128::from(u64::MAX)) as u64,
            total_ns: self.total_ns,
            ok: sum == self.count && lo <= t && t <= hi,
        }
    }

    /// An estimate of the `q` quantile (0..=1) in ns: linear within the bucket that holds it,
    /// clamped to the observed min and max. Exact to within that bucket's width.
    pub fn quantile(&self, q: f64) -> u64 {
        self.quantile_in(Scale::Log2, q)
    }

    /// [`Hist::quantile`] in the buckets of `scale`.
    pub fn quantile_in(&self, scale: Scale, q: f64) -> u64 {
        let n: u64 = self.buckets.iter().sum();
        if n == 0 {
            return 0;
        }
        let rank = (q.clamp(0.0, 1.0) * n as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (k, &c) in self.buckets.iter().enumerate() {
            if c == 0 {
                continue;
            }
            if seen + c >= rank {
                let (lo, hi) = scale.bounds(k);
                let (lo, hi) = (lo.max(self.min_ns.min(hi)), hi.min(self.max_ns.max(lo)));
                let frac = (rank - seen) as f64 / c as f64;
                // `as u64` saturates; the sum may not pass u64::MAX (bucket 63).
                return lo.saturating_add(((hi - lo) as f64 * frac) as u64).min(hi);
            }
            seen += c;
        }
        self.max_ns
    }
}

/// The result of [`Hist::check`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// The sum of the bucket counts.
    pub buckets_sum: u64,
    /// [`Hist::count`], which `buckets_sum` must equal.
    pub count: u64,
    /// The smallest total the buckets allow: each operation at its bucket's lower bound
    /// (saturating at `u64::MAX`).
    pub total_lo_ns: u64,
    /// The largest total the buckets allow: each operation at its bucket's upper bound
    /// (saturating at `u64::MAX`).
    pub total_hi_ns: u64,
    /// [`Hist::total_ns`], which must lie in `total_lo_ns..=total_hi_ns`.
    pub total_ns: u64,
    /// Both hold: the buckets add up to the count and the total lies within their bounds.
    pub ok: bool,
}

/// What a histogram describes: the layer it was measured at, the operation, and the group
/// it belongs to when the profile is split (`--by fs|comm|pid|path`; empty when not).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Key {
    /// `syscall`, `class` (read, write, meta, sync, ...), `block`, `fuse`, `ext4`, `fs` (the
    /// tracing file system's lower calls), ...
    pub layer: String,
    /// The operation: a system call's name, a FUSE opcode, a block device's name, ...
    pub op: String,
    /// The group: `ext4 /dev/vda1 (/)`, `comm=sqlite3`, `pid=1234`, `path=/usr/lib`; empty
    /// when the profile is not split.
    #[serde(default)]
    pub group: String,
}

/// One interval of a profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Wall-clock start, ns since the Unix epoch.
    pub start_ns: u64,
    /// Wall-clock end, ns since the Unix epoch: on a grid, `start_ns` plus
    /// [`Meta::interval_ns`] (a partial interval keeps its full bounds); for the one interval of
    /// a profile without a grid, the last time seen.
    pub end_ns: u64,
    /// Cut short (the profile ended before the interval did: Ctrl-C, the target exited).
    #[serde(default)]
    pub partial: bool,
    /// One histogram per key that had operations in the interval.
    pub hists: BTreeMap<Key, Hist>,
    /// Event counts that are not latencies (page-cache hits and misses, writeback pages...).
    #[serde(default)]
    pub counters: BTreeMap<String, u64>,
}

/// What the probes themselves cost, measured at start-up (FSprof's calibration).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// Back-to-back clock reads (the floor of any measured latency), ns.
    pub clock_read_ns: u64,
    /// What the probes add to a call: wall-clock ns per cheap call (`getppid`) with the
    /// probes attached to it minus without.
    pub probe_pair_ns: u64,
    /// The part of `probe_pair_ns` assumed to fall between the two clock reads and so inside
    /// every measured latency: half of it (FSprof's assumption). `--calibrate` subtracts it.
    #[serde(default)]
    pub self_delay_ns: u64,
    /// The median latency measured for that cheap call: the smallest latency the profile can
    /// tell apart from zero.
    #[serde(default)]
    pub floor_ns: u64,
    /// Whether `self_delay_ns` was subtracted from every latency (`--calibrate`).
    pub subtracted: bool,
}

/// A profile's description: where it came from and how it was cut.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Meta {
    /// `ebpf`, `fs`, `trace:<path>`, `merge`.
    pub source: String,
    /// The profiled command, PID, cgroup, mount or trace.
    pub target: String,
    /// Interval length in ns (0: one interval for the whole profile).
    pub interval_ns: u64,
    /// How histograms are split: `call`, `fs`, `comm`, `pid`, `path`.
    pub by: String,
    /// The host name of the machine profiled (`/proc/sys/kernel/hostname`); for a merge,
    /// the inputs' distinct names, comma-separated.
    pub host: String,
    /// Its kernel release (`/proc/sys/kernel/osrelease`); for a merge, the inputs' distinct
    /// releases, comma-separated.
    pub kernel: String,
    /// What the probes cost, when the producer measured it (the live eBPF profiler, when it
    /// probes system calls); `None` otherwise and after a merge.
    #[serde(default)]
    pub overhead: Option<Overhead>,
    /// How values are binned (`log2`, the default; `log10`; `linear:WIDTH`).
    pub buckets: Scale,
    /// `--sample N`: each call was counted with probability 1/N (one in N per thread on
    /// average) and the counts scaled by N (1: every call).
    #[serde(deserialize_with = "sample_or_one")]
    pub sample: u64,
    /// What the histograms hold: `latency` (ns; the default) or, for a value profile
    /// (`--value`), the value's name (`size`, `offset`, `seek-distance`, `queue-depth`).
    pub value: String,
}

fn sample_or_one<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(u64::deserialize(d)?.max(1))
}

impl Default for Meta {
    fn default() -> Self {
        Meta {
            source: String::new(),
            target: String::new(),
            interval_ns: 0,
            by: String::new(),
            host: String::new(),
            kernel: String::new(),
            overhead: None,
            buckets: Scale::Log2,
            sample: 1,
            value: "latency".into(),
        }
    }
}

impl Meta {
    /// Whether the histograms hold latencies (not a `--value` profile).
    pub fn is_latency(&self) -> bool {
        self.value.is_empty() || self.value == "latency"
    }

    /// The unit of the histograms' values: `ns`, `bytes`, `calls`.
    pub fn unit(&self) -> &'static str {
        match self.value.as_str() {
            "size" | "offset" | "seek-distance" => "bytes",
            "queue-depth" => "calls",
            _ => "ns",
        }
    }
}

impl Meta {
    /// A live profile's meta (`ebpf`, `fs`): this machine's host name and kernel release.
    pub fn local(source: &str, target: String, interval_ns: u64, by: &str) -> Meta {
        let fact = |f: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        Meta {
            source: source.into(),
            target,
            interval_ns,
            by: by.into(),
            host: fact("hostname"),
            kernel: fact("osrelease"),
            ..Meta::default()
        }
    }
}

/// Serde for `[u64; 64]` (serde derives arrays only up to 32): a JSON list.
mod bucket_list {
    use super::BUCKETS;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u64; BUCKETS], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(b.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u64; BUCKETS], D::Error> {
        let v = Vec::<u64>::deserialize(d)?;
        if v.len() > BUCKETS {
            return Err(serde::de::Error::custom(format!(
                "{} buckets, at most {BUCKETS} expected",
                v.len()
            )));
        }
        let mut b = [0; BUCKETS];
        b[..v.len()].copy_from_slice(&v);
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_fsprof() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 1);
        assert_eq!(bucket_of(2), 2);
        assert_eq!(bucket_of(3), 2);
        assert_eq!(bucket_of(4), 3);
        assert_eq!(bucket_of(u64::MAX), 63);
        for k in 0..BUCKETS {
            let (lo, hi) = bucket_bounds(k);
            assert_eq!(bucket_of(lo), k);
            assert_eq!(bucket_of(hi), k);
        }
    }

    #[test]
    fn check_and_quantiles() {
        let mut h = Hist::default();
        for ns in [100, 200, 300, 5000, 1_000_000] {
            h.record(ns, false);
        }
        assert!(h.check().ok);
        assert!(h.quantile(0.5) >= 128 && h.quantile(0.5) < 512);
        assert_eq!(h.quantile(1.0), 1_000_000);
        h.count += 1;
        assert!(!h.check().ok);
    }
}
