//! How close a tracker's estimates came to the sender's window.

use serde::Serialize;

/// How close one algorithm's estimates are to the sender's values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Accuracy {
    /// Estimates compared (one per compressed packet).
    pub samples: usize,
    /// Mean of |estimated cwnd - sender's cwnd| / sender's cwnd.
    pub cwnd_mean_rel_error: f64,
    /// Share of samples whose cwnd estimate is within 25% of the sender's cwnd.
    pub cwnd_within_25pct: f64,
    /// Mean of |estimated ssthresh - sender's ssthresh| / sender's ssthresh, over the samples
    /// after the sender's first loss (before it, the sender's ssthresh is its arbitrary initial
    /// value).
    pub ssthresh_mean_rel_error: f64,
}

impl Accuracy {
    /// One line: samples, share within 25%, mean relative errors.
    pub fn summary(&self) -> String {
        if self.samples == 0 {
            return "no estimates (only TAROC tracks the window)".into();
        }
        let pct = |v: f64| {
            if v.is_finite() {
                format!("{:.0}%", v * 100.0)
            } else {
                "-".into()
            }
        };
        format!(
            "{} estimates; cwnd within 25% of the sender's {} of the time, mean relative error {}; \
             ssthresh after the first loss {}",
            self.samples,
            pct(self.cwnd_within_25pct),
            pct(self.cwnd_mean_rel_error),
            pct(self.ssthresh_mean_rel_error)
        )
    }
}

/// The running sums behind an [`Accuracy`], fed one estimate at a time beside the sender's
/// values at that instant: constant memory however long the run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AccuracySums {
    samples: usize,
    cwnd_error: f64,
    within: usize,
    ssthresh_samples: usize,
    ssthresh_error: f64,
}

impl AccuracySums {
    /// Adds one estimate (`cwnd`, `ssthresh`) taken while the sender holds `sender_cwnd` and
    /// `sender_ssthresh`; its ssthresh counts only `after_first_loss` (before it, the sender's
    /// ssthresh is its arbitrary initial value).
    pub fn add(
        &mut self,
        cwnd: u32,
        ssthresh: u32,
        sender_cwnd: u64,
        sender_ssthresh: u64,
        after_first_loss: bool,
    ) {
        let rel = (f64::from(cwnd) - sender_cwnd as f64).abs() / (sender_cwnd.max(1) as f64);
        self.samples += 1;
        self.cwnd_error += rel;
        self.within += usize::from(rel <= 0.25);
        if after_first_loss {
            self.ssthresh_samples += 1;
            self.ssthresh_error += (f64::from(ssthresh) - sender_ssthresh as f64).abs()
                / (sender_ssthresh.max(1) as f64);
        }
    }

    /// The accuracy of the estimates added so far.
    pub fn accuracy(&self) -> Accuracy {
        let mean = |sum: f64, n: usize| if n == 0 { f64::NAN } else { sum / n as f64 };
        Accuracy {
            samples: self.samples,
            cwnd_mean_rel_error: mean(self.cwnd_error, self.samples),
            cwnd_within_25pct: mean(self.within as f64, self.samples),
            ssthresh_mean_rel_error: mean(self.ssthresh_error, self.ssthresh_samples),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_sums_compare_at_the_same_instant() {
        let mut sums = AccuracySums::default();
        // The sender holds cwnd 100 then 200; ssthresh counts only after its first loss.
        sums.add(100, 1, 100, 1000, false);
        sums.add(150, 100, 200, 100, true);
        sums.add(200, 50, 200, 100, true);
        let a = sums.accuracy();
        assert_eq!(a.samples, 3);
        assert!((a.cwnd_mean_rel_error - 0.25 / 3.0).abs() < 1e-12);
        assert!((a.cwnd_within_25pct - 1.0).abs() < 1e-12);
        assert!((a.ssthresh_mean_rel_error - 0.25).abs() < 1e-12);
        assert!(AccuracySums::default()
            .accuracy()
            .cwnd_mean_rel_error
            .is_nan());
    }
}
