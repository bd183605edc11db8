//! A progress bar on standard error for runs longer than a second (`taroc reproduce`, `taroc
//! sim`): it appears once a second has passed, and only where standard error is a terminal
//! (indicatif draws nothing otherwise), so logs and pipes never see it.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before its progress bar appears.
pub const DELAY: Duration = Duration::from_secs(1);

/// A progress bar of a known number of steps. Cheap to update from several threads.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    wanted: bool,
}

impl Progress {
    /// A bar of `total` steps counted in `unit` (e.g. "runs"); drawn on standard error after
    /// [`DELAY`] if `wanted` and standard error is a terminal, never otherwise.
    pub fn new(total: u64, unit: &str, wanted: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template =
            format!("{{elapsed_precise}} [{{wide_bar}}] {{pos}}/{{len}} {unit} (eta {{eta}})");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("#>-"));
        }
        Progress {
            bar,
            started: Instant::now(),
            wanted,
        }
    }

    /// Sets the steps done, showing the bar once the run has lasted [`DELAY`].
    pub fn set(&self, done: u64) {
        if self.wanted && self.bar.is_hidden() && self.started.elapsed() >= DELAY {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_position(done);
    }

    /// Whether the bar is drawn (false where standard error is not a terminal).
    pub fn is_drawn(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_until_a_second_has_passed_and_when_not_wanted() {
        let quick = Progress::new(10, "runs", true);
        quick.set(5);
        assert!(!quick.is_drawn(), "shown before a second passed");
        let unwanted = Progress::new(10, "runs", false);
        std::thread::sleep(DELAY);
        unwanted.set(5);
        assert!(!unwanted.is_drawn());
        quick.finish();
    }
}
