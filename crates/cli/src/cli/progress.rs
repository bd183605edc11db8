//! The progress bar of `taroc eval` on standard error: bytes read of the capture, shown once a
//! capture has taken a second, and only where standard error is a terminal.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar on stderr for reading one capture, shown once the run has taken a second
/// (never if `shown` is false): bytes read of the file's size, or a spinner for standard input.
pub(super) struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
    calls: u32,
}

impl Progress {
    /// The bar for reading the capture at `path` (`None` for the built-in one, `-` for standard
    /// input: a byte count without a total), labelled `name`.
    pub(super) fn new(path: Option<&PathBuf>, name: &str, shown: bool) -> Progress {
        let size = path
            .filter(|p| p.as_os_str() != "-")
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.len());
        let bar = match size {
            Some(size) => ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::hidden())
                .with_style(
                    ProgressStyle::with_template(
                        "{msg} {wide_bar} {binary_bytes}/{binary_total_bytes} {eta}",
                    )
                    .expect("a valid template"),
                ),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()).with_style(
                ProgressStyle::with_template("{spinner} {msg} {binary_bytes} read")
                    .expect("a valid template"),
            ),
        };
        Progress {
            bar: bar.with_message(name.to_string()),
            started: Instant::now(),
            shown,
            calls: 0,
        }
    }

    /// Updates the bar (every 1024 packets) to `bytes` read.
    pub(super) fn update(&mut self, bytes: u64) {
        self.calls = self.calls.wrapping_add(1);
        if !self.shown || !self.calls.is_multiple_of(1024) {
            return;
        }
        if self.bar.is_hidden() && self.started.elapsed() >= Duration::from_secs(1) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_position(bytes);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
