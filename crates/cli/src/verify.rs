//! `reanimator verify TRACE --key KEYFILE`: checks a sealed trace's MAC chain and says which
//! extent failed and why. Exit status 0 intact, 1 tampered (or cut), 2 trouble.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use dataseries::seal::{verify_file, SealFailure, SealSummary, Verdict};
use ra_trace::key::{Key, Purpose};

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator keygen trace.key\n  \
    reanimator record --seal trace.key -o t.ds -- make\n  \
    reanimator verify t.ds --key trace.key\n\n\
Exit status: 0 every extent verified and the trace is complete; 1 an extent was modified, \
dropped, duplicated, reordered or inserted, or the trace was cut (its final seal is \
missing); 2 trouble (no such file, not a sealed trace, unreadable key file).")]
pub struct VerifyArgs {
    /// The sealed trace.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn summary_json(s: &SealSummary) -> serde_json::Value {
    serde_json::json!({
        "serial": s.serial, "key_id": s.key_id, "extents": s.extents, "seals": s.seals,
        "bytes": s.bytes, "complete": s.complete,
    })
}

fn failure_json(f: &SealFailure) -> serde_json::Value {
    serde_json::json!({
        "extent": f.seq, "offset": f.offset, "why": f.why, "truncated": f.truncated,
    })
}

pub fn run(a: VerifyArgs, key: Option<&Key>) -> Result<ExitCode> {
    let key = key.context("give the key file the trace was sealed with: --key KEYFILE")?;
    let verdict = verify_file(&a.trace, key.derive(Purpose::Seal))
        .with_context(|| format!("cannot verify {}", a.trace.display()))?;
    let name = a.trace.display();
    match verdict {
        Verdict::Intact(s) => {
            if a.json {
                let j = serde_json::json!({"trace": name.to_string(), "intact": true, "seal": summary_json(&s)});
                println!("{j}");
            } else {
                println!(
                    "{name}: intact: {} extents ({} bytes) verified by {} seals; serial {}, key {}",
                    s.extents, s.bytes, s.seals, s.serial, s.key_id
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Verdict::Tampered(f, s)
            if f.seq == Some(0) && !s.key_id.is_empty() && s.key_id != key.fingerprint() =>
        {
            anyhow::bail!(
                "{name} was sealed with key {}, and --key holds key {}: give the key file it was sealed with",
                s.key_id,
                key.fingerprint()
            )
        }
        Verdict::Tampered(f, s) => {
            if a.json {
                let j = serde_json::json!({
                    "trace": name.to_string(), "intact": false, "failure": failure_json(&f),
                    "verified_before": summary_json(&s),
                });
                println!("{j}");
            } else {
                let what = if f.truncated { "CUT" } else { "TAMPERED" };
                println!("{name}: {what}: {f}");
                println!(
                    "  verified before it: {} extents ({} bytes) by {} seals",
                    s.extents, s.bytes, s.seals
                );
            }
            Ok(ExitCode::from(1))
        }
    }
}
