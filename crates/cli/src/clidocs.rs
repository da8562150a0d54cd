//! `reanimator completions SHELL` and `reanimator man DIR`: shell completions and a man page
//! per subcommand, generated from the one clap definition (`Cli` in main.rs). The copies in
//! `share/` are made by `scripts/gen-cli-docs.sh`, which `scripts/test.sh` runs with
//! `--check` so that they never fall behind the flags.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Args, Debug)]
#[command(after_help = "Install (bash, zsh, fish):\n  \
    reanimator completions bash > ~/.local/share/bash-completion/completions/reanimator\n  \
    reanimator completions zsh > ~/.zfunc/_reanimator   # with fpath+=(~/.zfunc) before compinit\n  \
    reanimator completions fish > ~/.config/fish/completions/reanimator.fish\n\
The same files, generated, are in the source tree's share/completions/.")]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

#[derive(Args, Debug)]
#[command(after_help = "Install:\n  \
    reanimator man /usr/local/share/man/man1 && mandb -q\n\
The same pages, generated, are in the source tree's share/man/man1/.")]
pub struct ManArgs {
    /// The directory to write the pages into (reanimator.1, reanimator-record.1, ...,
    /// reanimator-fs-mount.1; created if need be; existing pages of those names replaced).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// The completion script for `shell`, as bytes.
fn completions(shell: Shell) -> Vec<u8> {
    let mut cmd = crate::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "reanimator", &mut out);
    out
}

pub fn run_completions(a: CompletionsArgs) -> Result<ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(&completions(a.shell))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_man(a: ManArgs) -> Result<ExitCode> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    // One page for the command and one for each subcommand, at every depth, named
    // reanimator-SUB[-SUBSUB].1, as git's are.
    clap_mangen::generate_to(crate::Cli::command(), &a.dir)
        .with_context(|| format!("writing the man pages into {}", a.dir.display()))?;
    Ok(ExitCode::SUCCESS)
}
