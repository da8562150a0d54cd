//! `reanimator verify TRACE --key KEYFILE`: checks a sealed trace's MAC chain and says which
//! extent failed and why. Exit status 0 intact; 1 tampered, cut, not sealed or not a trace at
//! all; 2 trouble that says nothing of the file (it cannot be opened, no key, another key).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use dataseries::seal::{verify_file, FailureKind, SealFailure, SealSummary, Verdict};
use ra_trace::key::Key;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator keygen trace.key\n  \
    reanimator record --seal trace.key -o t.ds -- make\n  \
    reanimator verify t.ds --key trace.key\n\n\
Every byte is checked: the extents by their MACs, the file header, the final seal, the \
index and the trailer against those a sealing writer writes for them, and an encrypted \
trace's chunks by their encryption.\n\n\
Exit status: 0 every extent verified and the trace is complete; 1 anything else about the \
file: an extent was modified, dropped, duplicated, reordered or inserted, the header, index \
or trailer was changed, the trace was cut (its final seal, index, trailer or last \
encrypted chunk is missing), it is not sealed (or its seal was removed), or it is not a \
DataSeries file at all; 2 trouble that says nothing of the file: no such file, no --key or \
an unreadable key file, a key other than the one it was sealed or encrypted with.")]
pub struct VerifyArgs {
    /// The key file the trace was sealed (and encrypted) with.
    #[arg(long, value_name = "KEYFILE")]
    pub key: Option<std::path::PathBuf>,
    /// The sealed trace. `-` reads standard input: it is first copied to a private temporary
    /// file (mode 0600, unnamed, in $TMPDIR, gone when the command ends) and read from there.
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
        "extent": f.seq, "offset": f.offset, "why": f.why, "truncated": f.is_cut(),
        "not_sealed": f.kind == FailureKind::NotSealed,
    })
}

pub fn run(a: VerifyArgs, key: Option<&Key>) -> Result<ExitCode> {
    let key = key.context("give the key file the trace was sealed with: --key KEYFILE")?;
    let verdict = verify_file(&a.trace, &key.seal_key())
        .with_context(|| format!("cannot verify {}", crate::spool::shown(&a.trace)))?;
    let name = crate::spool::shown(&a.trace);
    match verdict {
        Verdict::Intact(s) => {
            if a.json {
                let j = serde_json::json!({"trace": crate::spool::json_name(&a.trace), "intact": true, "seal": summary_json(&s)});
                println!("{j}");
            } else {
                println!(
                    "{name}: intact: {} extents ({} bytes) verified by {} seals; serial {}, key {}",
                    s.extents, s.bytes, s.seals, s.serial, s.key_id
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Verdict::Tampered(f, s) => {
            if a.json {
                let j = serde_json::json!({
                    "trace": crate::spool::json_name(&a.trace), "intact": false, "failure": failure_json(&f),
                    "verified_before": summary_json(&s),
                });
                println!("{j}");
            } else {
                let what = match f.kind {
                    FailureKind::Cut => "CUT",
                    FailureKind::NotSealed => "NOT SEALED",
                    _ => "TAMPERED",
                };
                println!("{name}: {what}: {f}");
                if f.kind != FailureKind::NotSealed {
                    println!(
                        "  verified before it: {} extents ({} bytes) by {} seals",
                        s.extents, s.bytes, s.seals
                    );
                }
            }
            Ok(ExitCode::from(1))
        }
    }
}
