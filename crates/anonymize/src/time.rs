//! Anonymized times (`--fields time`, Tracefs' anonymized timestamps): the trace's own clock
//! shifted by a whole number of seconds so that the trace starts at a chosen origin, every
//! interval kept; file times made during the recording shifted alike, older ones replaced.
//!
//! * **The trace's clock** (`time_called`, `time_returned`, `time_recorded`, the time facts,
//!   the range of a loss, `reanimator fs` operations' times): `t - T0 + origin`, where `T0`
//!   is the trace's start (the `start_time` fact, the first snapshot scan or the first call,
//!   whichever is earliest) rounded down to a second. Intervals, and with them `replay
//!   --timing`, stay exact.
//! * **File times** (the access, change, modification and birth times in `stat`/`statx`
//!   results, `utime`/`utimes`/`utimensat` arguments, snapshot mtimes, `fs` setattr times):
//!   their seconds are shifted the same way when they are not before `T0` (times the
//!   recorded programs made), so that a file written during the recording keeps its mtime
//!   next to the write's call time. Times before `T0` (files older than the recording) are
//!   often public (a package's files), and one of them would give the shift away: their
//!   seconds are replaced by keyed pseudonyms, the same second giving the same pseudonym, in
//!   the 2^30 seconds before the origin; their order is not kept. Sub-second parts stay, so
//!   that a time set through `utimes` (microseconds) or `utime` (seconds) and read back
//!   through `stat` still agree.
//!
//! Shifted times are at or after the origin and replaced ones before it, so the rewrite is
//! one to one: `--reversible time` stores the shift and the replaced seconds in the
//! encrypted table and `--reverse` puts every time back.

use ra_syscalls::Struct;

use ra_trace::structs::{UTIME_NOW, UTIME_OMIT};
use ra_trace::time::rfc3339_digits;
pub use ra_trace::time::{parse_instant, parse_rfc3339, rfc3339, trace_start};

use super::Mapper;

const NS: i64 = 1_000_000_000;

/// Replaced file times take the seconds `origin - TIME_SPAN .. origin`.
pub const TIME_SPAN: i64 = 1 << 30;

/// The shift of one anonymization: the trace's start `t0_s` becomes `origin_s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeShift {
    /// The trace's start, in whole seconds since the Unix epoch (rounded down;
    /// [`trace_start`]).
    pub t0_s: i64,
    /// The instant the start becomes, in seconds since the Unix epoch (`--time-origin`).
    pub origin_s: i64,
}

impl TimeShift {
    /// Seconds added to every shifted time (`origin_s - t0_s`; negative when the origin is
    /// earlier than the trace).
    pub fn delta_s(self) -> i64 {
        self.origin_s - self.t0_s
    }

    /// An instant of the trace's clock, forward (`true`) or back.
    pub fn clock(self, ns: i64, forward: bool) -> i64 {
        let d = self.delta_s().wrapping_mul(NS);
        if forward {
            ns.wrapping_add(d)
        } else {
            ns.wrapping_sub(d)
        }
    }

    /// The shifted seconds of a file time, if it is shifted (not before `t0_s`).
    pub fn shifted_secs(self, s: i64) -> Option<i64> {
        if s < self.t0_s {
            return None;
        }
        s.checked_add(self.delta_s())
    }

    /// The original seconds of a shifted file time (at or after the origin).
    pub fn unshifted_secs(self, s: i64) -> Option<i64> {
        if s < self.origin_s {
            return None;
        }
        s.checked_sub(self.delta_s())
    }
}

/// A fact's instant `v` rewritten in the form it came in (as many fraction digits: the
/// shift is whole seconds).
pub fn map_instant(m: &mut dyn Mapper, v: &[u8]) -> Option<Vec<u8>> {
    let s = std::str::from_utf8(v).ok()?;
    if let Ok(n) = s.parse::<i64>() {
        return Some(m.clock(n).to_string().into_bytes());
    }
    let digits = s
        .get(19..)
        .and_then(|t| t.strip_prefix('.'))
        .map_or(0, |f| f.bytes().take_while(u8::is_ascii_digit).count());
    parse_rfc3339(s).map(|ns| rfc3339_digits(m.clock(ns), digits).into_bytes())
}

/// A file time in nanoseconds, its seconds through `m` (sub-second part kept).
pub fn map_file_ns(m: &mut dyn Mapper, ns: i64) -> i64 {
    let s = m.file_secs(ns.div_euclid(NS));
    s.wrapping_mul(NS).wrapping_add(ns.rem_euclid(NS))
}

/// Offsets of the `i64` seconds of each time in a struct, with the offset of its sub-second
/// part where a special value there (`UTIME_NOW`, `UTIME_OMIT`) means "no time".
fn time_fields(s: Struct) -> &'static [(usize, Option<usize>)] {
    match s {
        // x86_64 `struct stat`: st_atim, st_mtim, st_ctim.
        Struct::Stat => &[(72, None), (88, None), (104, None)],
        // `struct statx`: stx_atime, stx_btime, stx_ctime, stx_mtime.
        Struct::Statx => &[(64, None), (80, None), (96, None), (112, None)],
        Struct::Timespec2 => &[(0, Some(8)), (16, Some(24))],
        Struct::Timeval2 => &[(0, None), (16, None)],
        Struct::Utimbuf => &[(0, None), (8, None)],
        _ => &[],
    }
}

/// Whether a struct holds file times.
pub fn has_times(s: Struct) -> bool {
    !time_fields(s).is_empty()
}

/// A struct's file times through `m` (`None`: no times in it, or too short).
pub fn map_struct_times(m: &mut dyn Mapper, s: Struct, b: &[u8]) -> Option<Vec<u8>> {
    let fields = time_fields(s);
    let end = fields.iter().map(|(o, n)| n.unwrap_or(*o).max(*o) + 8).max()?;
    if b.len() < end {
        return None;
    }
    let mut out = b.to_vec();
    let at = |b: &[u8], o: usize| i64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    for &(secs, nsec) in fields {
        if nsec.is_some_and(|n| matches!(at(b, n), UTIME_NOW | UTIME_OMIT)) {
            continue;
        }
        let v = m.file_secs(at(b, secs));
        out[secs..secs + 8].copy_from_slice(&v.to_le_bytes());
    }
    Some(out)
}
