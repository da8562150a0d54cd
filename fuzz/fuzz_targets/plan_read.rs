//! Fuzzes `ra_replay::Plan` (a compiled replay plan): any bytes give calls or one error, never
//! a panic or an allocation beyond the input's size.
//!
//! Input: one flag byte, then the plan. Flag bit 0 turns the chunk checksums off so that
//! mutated inputs reach the header, chunk walk and call decoder (a real plan is always
//! checked). The seed corpus (fuzz/corpus/plan_read) holds plans compiled from small traces.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use ra_replay::Plan;

fuzz_target!(|data: &[u8]| {
    let Some((&flag, bytes)) = data.split_first() else { return };
    let path = Path::new("fuzz.plan");
    let plan = if flag & 1 != 0 {
        Plan::from_bytes_unchecked(path, bytes.to_vec())
    } else {
        Plan::from_bytes(path, bytes.to_vec())
    };
    if let Ok(plan) = plan {
        let _ = plan.stats();
        for c in plan.calls() {
            if c.is_err() {
                break;
            }
        }
    }
});
