//! `reanimator keygen FILE`: a fresh key file for `--seal`, `--encrypt` and `anonymize`, or a
//! collector's master key; `keygen --host NAME --from MASTER FILE`: the host key of one sender
//! (docs/NETWORK.md, "Authentication").

use std::path::PathBuf;

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use ra_trace::key::Key;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator keygen ~/.config/reanimator/trace.key\n  \
    reanimator record --seal ~/.config/reanimator/trace.key -o t.ds -- make\n  \
    reanimator keygen /etc/reanimator/collector.key                     # on the collector\n  \
    reanimator keygen --host web1 --from /etc/reanimator/collector.key web1.key\n  \
    reanimator collect --key /etc/reanimator/collector.key --listen 0.0.0.0:7070 --dir traces/\n  \
    reanimator record --key web1.key -o tcp://collector:7070 -- make    # on web1\n\n\
The file holds one 256-bit secret (mode 0600; never overwritten). Sealing, encryption and \
anonymization each derive their own key from it. Keep it apart from the traces: anyone who \
has it can forge a seal, read an encrypted trace and reverse pseudonyms.\n\n\
--host NAME --from MASTER writes the key of host NAME, derived from the collector's master \
key (a keyed BLAKE3 of the name), with the line `host NAME`. Give it to that host alone: it \
authenticates its holder to the collector as NAME and no other name, and seals the traces \
it streams; the collector, holding MASTER, derives it again to check both. NAME: 1 to 64 \
letters, digits, `.`, `_` or `-`.")]
pub struct KeygenArgs {
    /// The key file to create (refused if it exists).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Write the host key of NAME, derived from the master key --from.
    #[arg(long, value_name = "NAME", requires = "from")]
    pub host: Option<String>,
    /// The collector's master key that --host derives from.
    #[arg(long, value_name = "MASTER", requires = "host")]
    pub from: Option<PathBuf>,
}

pub fn run(a: KeygenArgs) -> Result<ExitCode> {
    let (Some(host), Some(from)) = (&a.host, &a.from) else {
        let key = Key::generate(&a.file)?;
        eprintln!("wrote {} (mode 0600, key fingerprint {})", a.file.display(), key.fingerprint());
        return Ok(ExitCode::SUCCESS);
    };
    let master = Key::load(from).context("--from")?;
    if master.host().is_some() {
        anyhow::bail!(
            "--from {}: a host key; host keys are derived from the collector's master key",
            from.display()
        );
    }
    let key = master.for_host(host).context("--host")?;
    key.write_new(&a.file)?;
    eprintln!(
        "wrote {} (mode 0600): the host key of {host} (key fingerprint {}), derived from {} \
         (fingerprint {}); give it to {host} alone",
        a.file.display(),
        key.fingerprint(),
        from.display(),
        master.fingerprint()
    );
    Ok(ExitCode::SUCCESS)
}
