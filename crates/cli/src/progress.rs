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

/// A spinner for scans of directory trees (size unknown in advance): entries and bytes so far.
/// Drawn only on a terminal, and only once the scan has taken more than a second.
#[derive(Clone)]
pub struct ScanProgress {
    pb: Option<ProgressBar>,
    start: std::time::Instant,
    /// Set by `finish`: nothing is drawn after it (output may follow on the terminal).
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl ScanProgress {
    pub fn new() -> ScanProgress {
        if !std::io::stderr().is_terminal() {
            return ScanProgress {
                pb: None,
                start: std::time::Instant::now(),
                done: Default::default(),
            };
        }
        let pb = ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::hidden());
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        ScanProgress { pb: Some(pb), start: std::time::Instant::now(), done: Default::default() }
    }

    /// A progress callback for `ra_fsstate::ScanOptions::progress` labelled `what`; it stops
    /// the scan when `stop()` becomes true.
    pub fn callback(&self, what: String, stop: fn() -> bool) -> ra_fsstate::ProgressFn {
        let me = self.clone();
        let mut last = std::time::Instant::now();
        Box::new(move |s| {
            if stop() {
                return std::ops::ControlFlow::Break(());
            }
            if me.done.load(std::sync::atomic::Ordering::Relaxed) {
                return std::ops::ControlFlow::Continue(());
            }
            if let Some(pb) = &me.pb {
                if last.elapsed() >= std::time::Duration::from_millis(100) {
                    last = std::time::Instant::now();
                    if pb.is_hidden() && me.start.elapsed() >= std::time::Duration::from_secs(1) {
                        pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    }
                    pb.set_message(format!(
                        "{what}: {} entries, {} read",
                        s.entries,
                        indicatif::HumanBytes(s.bytes_read)
                    ));
                    pb.tick();
                }
            }
            std::ops::ControlFlow::Continue(())
        })
    }

    /// Clear the spinner for good.
    pub fn finish(&self) {
        if !self.done.swap(true, std::sync::atomic::Ordering::Relaxed) {
            if let Some(pb) = &self.pb {
                pb.finish_and_clear();
            }
        }
    }
}
