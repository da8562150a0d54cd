//! Reading traces written by the original Re-Animator (RA-strace / RA-LTTng via strace2ds).
//!
//! Their files declare no time unit, and their writer had known bugs. What we do about each:
//!
//! * **Time units.** Re-Animator wrote Tfrac (2^-32 s) until 2021, then nanoseconds since the
//!   epoch, and the synthetic umask record holds plain seconds; none is declared. Fields with a
//!   `units` attribute are converted exactly; undeclared values are classified by magnitude
//!   ([`normalize_time`]): a value above 4e18 is Tfrac (1.6e9 s × 2^32 ≈ 7e18), below 1e11 it is
//!   seconds, below 1e14 milliseconds, below 1e17 microseconds, otherwise nanoseconds. With
//!   these bands seconds, milliseconds and microseconds are right for dates from 1973 on,
//!   nanoseconds up to 2096, and Tfrac from 1999 to 2038 (the end of what an int64 of Tfrac
//!   holds); Re-Animator's traces (2018–2021) are far inside all of them.
//! * **Bools.** Every non-nullable bool column was written as `true` whatever the argument
//!   (the writer tested a pointer instead of the value), so bool columns of Re-Animator files
//!   are never used: flags come from the `*_value` integer columns, which are the arguments.
//! * **pid/tid.** `executing_pid` holds the thread id. For these files `Event::tid` is
//!   `executing_tid`, else `executing_pid`, and `Event::pid` is unknown (`None`).
//! * **The synthetic umask record** (unique_id 0, tid null) carries the traced process's umask
//!   in `mode_value`; its time fields are seconds and its return value and errno are garbage.
//!   We keep the mask, convert the times, drop return value and errno, and mark the event with
//!   the extra field `synthetic = true`.

/// Nanoseconds per second.
const NS: i64 = 1_000_000_000;

/// Convert a time value to nanoseconds since the epoch given the field's declared `units`
/// (DataSeries' `Int64TimeField` names), or by magnitude when undeclared.
pub fn normalize_time(v: i64, units: Option<&str>) -> i64 {
    match units {
        Some("nanoseconds") => v,
        Some("microseconds") => v.saturating_mul(1000),
        Some("milliseconds") => v.saturating_mul(1_000_000),
        Some("seconds") => v.saturating_mul(NS),
        Some("2^-32 seconds") => tfrac_to_ns(v),
        _ => guess_time(v),
    }
}

fn tfrac_to_ns(v: i64) -> i64 {
    ((i128::from(v) * i128::from(NS)) >> 32) as i64
}

fn guess_time(v: i64) -> i64 {
    let a = v.unsigned_abs();
    if a > 4_000_000_000_000_000_000 {
        tfrac_to_ns(v)
    } else if a < 100_000_000_000 {
        v.saturating_mul(NS)
    } else if a < 100_000_000_000_000 {
        v.saturating_mul(1_000_000)
    } else if a < 100_000_000_000_000_000 {
        v.saturating_mul(1000)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_unit_of_one_instant() {
        // 2021-06-24T02:04:04.123456789Z
        let ns: i64 = 1_624_500_244_123_456_789;
        assert_eq!(normalize_time(ns, None), ns);
        assert_eq!(normalize_time(ns / 1000, None), ns / 1000 * 1000);
        assert_eq!(normalize_time(ns / 1_000_000, None), ns / 1_000_000 * 1_000_000);
        assert_eq!(normalize_time(ns / NS, None), ns / NS * NS);
        let tfrac = ((i128::from(ns) << 32) / i128::from(NS)) as i64;
        assert!((normalize_time(tfrac, None) - ns).abs() <= 1);
        assert!((normalize_time(tfrac, Some("2^-32 seconds")) - ns).abs() <= 1);
        assert_eq!(normalize_time(5, Some("nanoseconds")), 5);
    }
}
