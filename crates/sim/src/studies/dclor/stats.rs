//! Summaries of the downloads of one file size and response: mean, variance, a confidence
//! interval, the CDF, spectral efficiency and timeout counts.

use serde::Serialize;

use super::{Download, Scoring};

/// The summary of a set of downloads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Downloads.
    pub downloads: usize,
    /// Mean download time, s.
    pub mean_s: f64,
    /// Sample variance of the download time, s².
    pub variance_s2: f64,
    /// Spectral efficiency: redundant bytes received over the mean cwnd (bytes), both summed
    /// over the downloads (the draft's `redundant_bytes_received / (mean(cwnd) * MSS)`).
    pub spectral_efficiency: f64,
    /// Timeouts.
    pub timeouts: u64,
    /// Spurious timeouts (ground truth).
    pub spurious: u64,
    /// Timeouts the response declared spurious.
    pub detected: u64,
    /// The response's decisions matched to the timeouts' labels.
    pub scoring: Scoring,
    /// Sorted download times (the empirical CDF).
    #[serde(skip)]
    pub sorted_s: Vec<f64>,
}

impl Summary {
    /// Summarises `downloads`.
    pub fn of<'a>(downloads: impl IntoIterator<Item = &'a Download>) -> Summary {
        let all: Vec<&Download> = downloads.into_iter().collect();
        let n = all.len();
        let mean = all.iter().map(|d| d.time_s).sum::<f64>() / n.max(1) as f64;
        let variance =
            all.iter().map(|d| (d.time_s - mean).powi(2)).sum::<f64>() / (n.max(2) - 1) as f64;
        let redundant: u64 = all.iter().map(|d| d.redundant_bytes).sum();
        let cwnd: f64 = all.iter().map(|d| d.mean_cwnd_bytes).sum();
        let mut sorted_s: Vec<f64> = all.iter().map(|d| d.time_s).collect();
        sorted_s.sort_by(f64::total_cmp);
        Summary {
            downloads: n,
            mean_s: mean,
            variance_s2: variance,
            spectral_efficiency: if cwnd > 0.0 {
                redundant as f64 / cwnd
            } else {
                0.0
            },
            timeouts: all.iter().map(|d| u64::from(d.timeouts)).sum(),
            spurious: all.iter().map(|d| u64::from(d.spurious)).sum(),
            detected: all.iter().map(|d| u64::from(d.detected)).sum(),
            scoring: all.iter().fold(Scoring::default(), |mut s, d| {
                s.add(&d.scoring);
                s
            }),
            sorted_s,
        }
    }

    /// Half-width of the 95 % confidence interval of the mean (normal approximation).
    pub fn ci95(&self) -> f64 {
        1.96 * (self.variance_s2 / self.downloads.max(1) as f64).sqrt()
    }

    /// The 95 % confidence interval of `self.mean - other.mean` (Welch, normal approximation).
    pub fn difference_ci95(&self, other: &Summary) -> (f64, f64) {
        let d = self.mean_s - other.mean_s;
        let se = (self.variance_s2 / self.downloads.max(1) as f64
            + other.variance_s2 / other.downloads.max(1) as f64)
            .sqrt();
        (d - 1.96 * se, d + 1.96 * se)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(time_s: f64, redundant_bytes: u64, mean_cwnd_bytes: f64) -> Download {
        Download {
            class: 0,
            time_s,
            timeouts: 1,
            spurious: 1,
            detected: 0,
            scoring: Scoring {
                missed_all_acked: 1,
                ..Scoring::default()
            },
            redundant_bytes,
            mean_cwnd_bytes,
        }
    }

    #[test]
    fn mean_variance_and_spectral_efficiency() {
        let s = Summary::of(&[d(1.0, 0, 1000.0), d(3.0, 500, 3000.0)]);
        assert_eq!((s.mean_s, s.variance_s2), (2.0, 2.0));
        assert_eq!(s.spectral_efficiency, 500.0 / 4000.0);
        assert_eq!(s.sorted_s, vec![1.0, 3.0]);
        assert_eq!((s.timeouts, s.spurious, s.detected), (2, 2, 0));
        assert_eq!(s.scoring.missed_all_acked, 2);
        let (lo, hi) = s.difference_ci95(&s);
        assert!(lo < 0.0 && hi > 0.0);
    }
}
