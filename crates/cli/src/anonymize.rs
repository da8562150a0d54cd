//! `reanimator anonymize IN OUT --key KEYFILE`: a trace with chosen fields replaced by keyed
//! pseudonyms (ra_anonymize), and `--reverse` to put back the reversible ones.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use ra_anonymize::{self as anonymize, DataMode, Field, Options, Summary};
use ra_trace::key::Key;

use crate::output::ChainArgs;
use crate::partial::Partial;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Data {
    /// Keep data buffers.
    Keep,
    /// Leave them out (as `record --data none`).
    Drop,
    /// Replace each by its length and BLAKE3 digest (as `record --data hash`).
    Digest,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator keygen anon.key\n  \
    reanimator anonymize t.ds t-anon.ds --key anon.key --fields path,uid,gid,pid,hostname\n  \
    reanimator anonymize t.ds t-anon.ds --key anon.key --fields all --data digest \\\n      \
      --keep-extensions --keep-names usr,lib,bin,etc,tmp --reversible path,uid\n  \
    reanimator anonymize --reverse t-anon.ds t-back.ds --key anon.key\n\n\
Fields: path (every path component, one by one, so the tree keeps its shape; the kernel's \
names under /proc, /sys, /dev stay, what follows a magic link such as /proc/self/cwd/ or \
/proc/PID/fd/N/ does not; xattr names after their namespace), uid, gid, pid (0, -1 and, for \
pids, 1 stay), comm, hostname, cmdline (execve's argv, environment values, the `command` \
fact), data (= --data digest unless --data says otherwise), time (the trace's clock shifted \
to start at --time-origin, intervals kept; file times from the trace's start on shifted \
alike, older ones replaced); `all` = every field but data. The same value gives the same \
pseudonym everywhere in the trace. Each trace fact has a rule; facts no rule knows are left \
out. Pseudonyms are keyed hashes: without --reversible nothing \
can undo them; --reversible stores the originals of those fields in the output, encrypted \
with the key. The key never appears in the output, in messages or in --json (only its \
fingerprint). OUT is written as .OUT.partial beside it and renamed when complete: a failed \
or stopped (Ctrl-C) run leaves neither. See docs/ANONYMIZE.md.")]
pub struct AnonymizeArgs {
    /// The key file (`reanimator keygen`) the pseudonyms are derived from (the same key, the
    /// same pseudonyms), that encrypts the reversible table, and that decrypts an encrypted
    /// IN.
    #[arg(long, value_name = "KEYFILE")]
    pub key: Option<PathBuf>,
    /// The trace to read.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// The trace to write (must not exist; never IN; mode 0600).
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
    /// Fields to replace, comma-separated (default: all but data).
    #[arg(long, value_name = "LIST")]
    pub fields: Option<String>,
    /// Fields whose originals `--reverse` can restore (a subset of --fields).
    #[arg(long, value_name = "LIST", conflicts_with = "reverse")]
    pub reversible: Option<String>,
    /// What becomes of data buffers (and of snapshot file contents: zeros of the same size
    /// unless kept).
    #[arg(long, value_enum, conflicts_with = "reverse")]
    pub data: Option<Data>,
    /// Keep file name extensions (`report.pdf` becomes `<pseudonym>.pdf`).
    #[arg(long, conflicts_with = "reverse")]
    pub keep_extensions: bool,
    /// Path components kept as they are wherever they occur, comma-separated.
    #[arg(long, value_name = "NAMES", conflicts_with = "reverse")]
    pub keep_names: Option<String>,
    /// With the `time` field: the instant the trace's start becomes, in seconds since the
    /// Unix epoch (negative: before it).
    /// (Default 0: 1970-01-01T00:00:00Z.)
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, conflicts_with = "reverse")]
    pub time_origin: Option<i64>,
    /// Restore the reversible fields of an anonymized trace (needs its key).
    #[arg(long)]
    pub reverse: bool,
    /// The output's compression, seal and encryption, as `record` writes them.
    #[command(flatten)]
    pub chain: ChainArgs,
    /// Print a JSON summary (values replaced per field) on stdout.
    #[arg(long)]
    pub json: bool,
}

fn fields(s: &str) -> Result<Vec<Field>> {
    anonymize::parse_fields(s).map_err(anyhow::Error::msg)
}

/// `key`: its `--key KEYFILE` (also what reads an encrypted IN).
pub fn run(a: AnonymizeArgs, key: Option<&Key>) -> Result<ExitCode> {
    let Some(key) = key else {
        bail!("anonymize needs the key file: --key KEYFILE (`reanimator keygen FILE` makes one)")
    };
    if let (Ok(i), Ok(o)) = (std::fs::metadata(&a.input), std::fs::metadata(&a.output)) {
        if i.dev() == o.dev() && i.ino() == o.ino() {
            bail!("OUT is IN ({}): write the anonymized trace to another file", a.input.display());
        }
    }
    if a.output.exists() {
        bail!("{} exists: anonymize writes a new file", a.output.display());
    }
    // The output chain: compression, and a seal or encryption if asked (`record`'s flags).
    // anonymize writes a file: it has none of the network flags of record and fs.
    let dest = ra_trace::Destination::parse(a.output.as_os_str())
        .map_err(|e| anyhow::anyhow!("OUT {e}"))?;
    if dest.is_net() {
        bail!("-o {}: anonymize writes a file (tcp:// is for record and fs)", a.output.display());
    }
    let ds = a.chain.writer_options()?;
    // Once the arguments are checked: OUT is written beside it and renamed when complete, so
    // that an error or Ctrl-C leaves no OUT.
    let claim = || Partial::create_removed_on_signal(&a.output, "OUT");
    let (summary, tmp) = if a.reverse {
        if a.fields.is_some() {
            bail!("--reverse restores what the trace's table holds: no --fields");
        }
        let tmp = claim()?;
        (anonymize::reverse_trace(&a.input, tmp.path(), key, ds).map_err(|e| failed(&a, e))?, tmp)
    } else {
        let mut list = fields(a.fields.as_deref().unwrap_or("all"))?;
        let data = match (a.data, list.contains(&Field::Data)) {
            (Some(Data::Keep), true) => {
                bail!("--fields has data but --data keep keeps it: choose one")
            }
            (Some(Data::Keep), false) | (None, false) => DataMode::Keep,
            (Some(Data::Drop), _) => DataMode::Drop,
            (Some(Data::Digest), _) | (None, true) => DataMode::Digest,
        };
        list.retain(|&f| f != Field::Data);
        if a.time_origin.is_some() && !list.contains(&Field::Time) {
            bail!("--time-origin says where anonymized times start: --fields needs time");
        }
        let reversible = match &a.reversible {
            Some(r) => fields(r)?,
            None => Vec::new(),
        };
        let keep_names: Vec<Vec<u8>> = a
            .keep_names
            .as_deref()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| n.as_bytes().to_vec())
            .collect();
        if let Some(n) = keep_names.iter().find(|n| n.contains(&b'/')) {
            bail!("--keep-names takes names, not paths: {}", String::from_utf8_lossy(n));
        }
        let opts = Options {
            fields: list,
            reversible,
            data,
            keep_extensions: a.keep_extensions,
            keep_names,
            time_origin: a.time_origin.unwrap_or(0),
            ds,
        };
        let tmp = claim()?;
        let summary = anonymize::anonymize_trace(&a.input, tmp.path(), key, &opts)
            .map_err(|e| failed(&a, e))?;
        (summary, tmp)
    };
    tmp.persist()?;
    report(&a, &summary)?;
    Ok(ExitCode::SUCCESS)
}

/// What a failed run says (it leaves nothing behind: its [`Partial`] is dropped).
fn failed(a: &AnonymizeArgs, e: ra_trace::Error) -> anyhow::Error {
    anyhow::Error::new(e).context(format!("cannot {} {}", verb(a), a.input.display()))
}

fn verb(a: &AnonymizeArgs) -> &'static str {
    if a.reverse {
        "reverse"
    } else {
        "anonymize"
    }
}

fn report(a: &AnonymizeArgs, s: &Summary) -> Result<()> {
    if a.json {
        let fields: serde_json::Map<String, serde_json::Value> = s
            .fields
            .iter()
            .map(|(f, (n, d))| {
                (f.name().to_string(), serde_json::json!({"replaced": n, "distinct": d}))
            })
            .collect();
        let v = serde_json::json!({
            "mode": verb(a),
            "input": a.input.display().to_string(),
            "output": a.output.display().to_string(),
            "events": s.events,
            "snapshot_entries": s.snapshot_entries,
            "fields": fields,
            "data_buffers_replaced": s.data_buffers,
            "collisions_resolved": s.collisions,
            "xattr_names_lengthened": s.xattr_names_lengthened,
            "xattr_size_answers_not_kept": s.xattr_size_answers_not_kept(),
            "reverse_table_entries": s.table_entries,
            "key_fingerprint": s.key_fingerprint,
        });
        println!("{}", serde_json::to_string_pretty(&v).context("JSON")?);
    } else {
        let per: Vec<String> =
            s.fields.iter().map(|(f, (n, d))| format!("{f} {n} ({d} distinct)")).collect();
        eprintln!(
            "{} {} events, {} snapshot entries into {} (key fingerprint {}): {}{}",
            if a.reverse { "reversed" } else { "anonymized" },
            s.events,
            s.snapshot_entries,
            a.output.display(),
            s.key_fingerprint,
            if per.is_empty() { "nothing replaced".to_string() } else { per.join(", ") },
            if s.data_buffers > 0 {
                format!("; {} data buffers replaced", s.data_buffers)
            } else {
                String::new()
            }
        );
        if s.xattr_names_lengthened > 0 {
            eprintln!(
                "note: {} extended attribute names got pseudonyms longer than themselves (every \
                 candidate of their length was taken): up to {} listxattr size answers (size \
                 queries, ERANGE) may differ in a replay",
                s.xattr_names_lengthened,
                s.xattr_size_answers_not_kept()
            );
        }
    }
    Ok(())
}
