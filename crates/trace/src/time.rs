//! Times as the trace and the command line write them: RFC 3339 (`2026-11-02T10:11:12.123456789Z`,
//! chrono's calendar arithmetic), the instants of trace facts, and where a trace starts.

use crate::{Result, TraceReader};

/// Where a trace starts: the earliest of its `start_time` fact, its snapshot scans' starts
/// and its first call's `time_called`, in ns; `None` when it holds no time.
pub fn trace_start(tr: &TraceReader) -> Result<Option<i64>> {
    let mut t: Option<i64> = None;
    let mut see = |v: i64| t = Some(t.map_or(v, |x| x.min(v)));
    for (k, v) in tr.info() {
        let scan = k.starts_with("snapshot.") && k.ends_with(".scan_began_ns");
        if k == "start_time" || scan {
            if let Some(ns) = parse_instant(v) {
                see(ns);
            }
        }
    }
    if let Some(ev) = tr.events(None).next() {
        if let Some(c) = ev?.time_called {
            see(c);
        }
    }
    Ok(t)
}

/// A fact's instant: integer nanoseconds, or RFC 3339 as `record` writes it
/// (`2026-11-02T10:11:12.123456789Z`).
pub fn parse_instant(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(v).ok()?;
    if let Ok(n) = s.parse::<i64>() {
        return Some(n);
    }
    parse_rfc3339(s)
}

/// `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` (the CLI's form: nine fraction digits, UTC).
pub fn rfc3339(ns: i64) -> String {
    rfc3339_digits(ns, 9)
}

/// [`rfc3339`] with `digits` fraction digits (0: none; the fraction cut, not rounded).
pub fn rfc3339_digits(ns: i64, digits: usize) -> String {
    // Every i64 of nanoseconds is a year from 1677 to 2262: four digits, so the fraction
    // starts at byte 19.
    let full = chrono::DateTime::from_timestamp_nanos(ns)
        .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
    match digits.min(9) {
        0 => format!("{}Z", &full[..19]),
        n => format!("{}Z", &full[..20 + n]),
    }
}

/// Nanoseconds since the epoch of an RFC 3339 time (`2023-11-14T22:13:20.5Z`, any offset,
/// a fraction of any length: chrono's parser), or `None` for anything else or a time outside
/// what 64-bit nanoseconds hold (1677 to 2262).
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s).ok()?.timestamp_nanos_opt()
}
