//! Progress bars on stderr for long work (only when stderr is a terminal).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// A byte-count bar; shown only on a terminal and only for inputs over 64 MiB.
    pub fn bytes(what: &str, total: u64) -> Progress {
        if !std::io::stderr().is_terminal() || total < (64 << 20) {
            return Progress(None);
        }
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        pb.set_message(what.to_string());
        Progress(Some(pb))
    }

    /// A bar counting calls (shown only on a terminal).
    pub fn calls(what: &str, total: u64) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let pb = ProgressBar::new(total.max(1));
        pb.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:40}] {human_pos}/{human_len} calls ({per_sec}, {eta} left)",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        pb.set_message(what.to_string());
        Progress(Some(pb))
    }

    /// True once the bar is finished (or when there is none).
    pub fn is_done(&self) -> bool {
        self.0.as_ref().is_none_or(|p| p.is_finished())
    }

    pub fn set(&self, pos: u64) {
        if let Some(pb) = &self.0 {
            pb.set_position(pos);
        }
    }

    pub fn finish(&self) {
        if let Some(pb) = &self.0 {
            pb.finish_and_clear();
        }
    }
}
