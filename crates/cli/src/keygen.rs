//! `reanimator keygen FILE`: a fresh key file for `--seal`, `--encrypt` and `anonymize`.

use std::path::PathBuf;

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use ra_trace::key::Key;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    reanimator keygen ~/.config/reanimator/trace.key\n  \
    reanimator record --seal ~/.config/reanimator/trace.key -o t.ds -- make\n\n\
The file holds one 256-bit secret (mode 0600; never overwritten). Sealing, encryption and \
anonymization each derive their own key from it. Keep it apart from the traces: anyone who \
has it can forge a seal, read an encrypted trace and reverse pseudonyms.")]
pub struct KeygenArgs {
    /// The key file to create (refused if it exists).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

pub fn run(a: KeygenArgs) -> Result<ExitCode> {
    let key = Key::generate(&a.file)?;
    eprintln!("wrote {} (mode 0600, key fingerprint {})", a.file.display(), key.fingerprint());
    Ok(ExitCode::SUCCESS)
}
