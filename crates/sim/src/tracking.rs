//! Accuracy of TAROC's congestion-window tracking (the slides' plots): the real sender's cwnd
//! and ssthresh over time beside the estimates of Algorithm SEQ (from the data stream, at the
//! router's compressor) and Algorithm ACK (from the ACK stream, at the mobile host's
//! compressor).
//!
//! The estimates are read from the real `TarocCompressor` (`estimates_of`) after every packet it
//! compresses; the sender's values from its own trace. Both are compared at the instants the
//! compressor takes a packet, so the estimate is judged against what the sender holds at that
//! moment (the compressor sees the data stream one wired delay after the sender, and the ACK
//! stream one wireless delay plus the wired delay before the sender does).

use serde::Serialize;

use crate::event::{Time, SECOND};
use crate::link::ErrorModel;
use crate::net::TrackerPoint;
use crate::plot::{self, Axis, Panel, Series};
use crate::scenario::{Outcome, Scenario};
use crate::tcp::variant::TcpVariant;
use crate::thin::TRACE_POINTS;

/// The slides' case: 9.6 kbit/s, BER 1e-5, MTU 296, TCP SACK, TAROC, 1000 s, seed 1.
pub fn slides_case() -> Scenario {
    Scenario {
        wireless_bps: 9600,
        errors: ErrorModel::Ber { ber: 1e-5 },
        mtu: 296,
        tcp: TcpVariant::Sack,
        scheme: "taroc".into(),
        ..Scenario::default()
    }
}

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

/// Algorithm SEQ's estimates from the data stream.
pub fn seq_estimates(o: &Outcome) -> impl Iterator<Item = (Time, u32, u32)> + '_ {
    o.data_estimates
        .iter()
        .map(|p: &TrackerPoint| (p.time_ns, p.seq_cwnd, p.seq_ssthresh))
}

/// Algorithm ACK's estimates from the ACK stream.
pub fn ack_estimates(o: &Outcome) -> impl Iterator<Item = (Time, u32, u32)> + '_ {
    o.ack_estimates
        .iter()
        .map(|p: &TrackerPoint| (p.time_ns, p.ack_cwnd, p.ack_ssthresh))
}

/// The tracking plot of a run made with `Scenario::run_with(Some(..), ..)`: two panels (Algorithm SEQ,
/// Algorithm ACK), each with the sender's cwnd and ssthresh and the estimates, in segments,
/// over the first `window_s` simulated seconds (all of the run if None).
pub fn svg(scenario: &Scenario, o: &Outcome, window_s: Option<f64>) -> String {
    let mss = scenario.mss().max(1) as f64;
    let end_s = window_s
        .unwrap_or(scenario.duration_s)
        .min(scenario.duration_s);
    let end = (end_s * SECOND as f64) as Time;
    let secs = |t: Time| t as f64 / SECOND as f64;
    let segs = |b: f64| b / mss;
    let sender_cwnd: Vec<(f64, f64)> = o
        .cwnd_trace
        .iter()
        .filter(|p| p.time_ns <= end)
        .map(|p| (secs(p.time_ns), segs(p.cwnd as f64)))
        .chain(std::iter::once((end_s, f64::NAN)))
        .collect();
    // Before its first loss the sender's ssthresh is its arbitrary initial value (unbounded in
    // effect): drawn from the first loss on.
    let initial_ssthresh = o.cwnd_trace.first().map(|p| p.ssthresh);
    let sender_ss: Vec<(f64, f64)> = o
        .cwnd_trace
        .iter()
        .skip_while(|p| Some(p.ssthresh) == initial_ssthresh)
        .filter(|p| p.time_ns <= end)
        .map(|p| (secs(p.time_ns), segs(p.ssthresh as f64)))
        .collect();
    // Hold the last values to the end of the window.
    let hold = |mut v: Vec<(f64, f64)>| {
        if let Some(&(_, y)) = v.iter().rev().find(|(_, y)| y.is_finite()) {
            v.retain(|(_, y)| y.is_finite());
            v.push((end_s, y));
        }
        v
    };
    let sender_cwnd = hold(sender_cwnd);
    let sender_ss = hold(sender_ss);
    let window = f64::from(scenario.max_window_segments);
    let in_window = |est: &[(Time, u32, u32)], pick: fn(&(Time, u32, u32)) -> u32| {
        est.iter()
            .filter(|e| e.0 <= end)
            .map(|e| (secs(e.0), segs(f64::from(pick(e)))))
            .collect::<Vec<(f64, f64)>>()
    };
    let seq: Vec<_> = seq_estimates(o).collect();
    let ack: Vec<_> = ack_estimates(o).collect();
    let series = [&seq, &ack].map(|est| (in_window(est, |e| e.1), in_window(est, |e| e.2)));
    // One y-axis for both panels, fitted to every series drawn, so no estimate is cut off.
    let top = series
        .iter()
        .flat_map(|(cwnd, ss)| cwnd.iter().chain(ss))
        .chain(sender_cwnd.iter().chain(&sender_ss))
        .map(|p| p.1)
        .filter(|y| y.is_finite())
        .fold(window, f64::max)
        * 1.08;
    let [(seq_cwnd, seq_ss), (ack_cwnd, ack_ss)] = series;
    let thinned = o.cwnd_trace.len().max(seq.len()).max(ack.len()) >= TRACE_POINTS / 2;
    let panel = |name: &str,
                 algo: &str,
                 cwnd: Vec<(f64, f64)>,
                 ss: Vec<(f64, f64)>,
                 acc: Option<Accuracy>| {
        let step = |s: Series| Series { step: true, ..s };
        let mut notes = vec![format!(
            "Over the whole run: {}.",
            acc.unwrap_or_default().summary()
        )];
        if thinned {
            notes.push(format!(
                "Long run: the plotted traces are thinned evenly to at most {TRACE_POINTS} points each \
                 (the figures above count every estimate)."
            ));
        }
        Panel {
            title: format!("{name}: the sender's window beside {algo}'s estimate"),
            x: Axis::linear("time (s)", 0.0, end_s),
            y: Axis::linear(&format!("segments (MSS {} bytes)", mss), 0.0, top),
            series: vec![
                Series {
                    dashed: true,
                    width: 1.0,
                    ..Series::line(
                        "max window",
                        "#999999",
                        vec![(0.0, window), (end_s, window)],
                    )
                },
                step(Series::line("sender cwnd", "#000000", sender_cwnd.clone())),
                step(Series {
                    dashed: true,
                    ..Series::line("sender ssthresh", "#000000", sender_ss.clone())
                }),
                step(Series {
                    width: 1.3,
                    ..Series::line(&format!("{algo} cwnd"), "#d62728", cwnd)
                }),
                step(Series {
                    dashed: true,
                    width: 1.3,
                    ..Series::line(&format!("{algo} ssthresh"), "#1f77b4", ss)
                }),
            ],
            notes,
        }
    };
    let title = format!(
        "Congestion-window tracking: {} kbit/s, BER {:e}, MTU {}, TCP {}, {}, seed {}",
        scenario.wireless_bps as f64 / 1000.0,
        match scenario.errors {
            ErrorModel::Ber { ber } => ber,
            _ => f64::NAN,
        },
        scenario.mtu,
        scenario.tcp.name(),
        scenario.scheme,
        scenario.seed
    );
    plot::svg(
        &title,
        &[
            panel(
                "Data stream (router)",
                "Algorithm SEQ",
                seq_cwnd,
                seq_ss,
                o.seq_accuracy,
            ),
            panel(
                "ACK stream (mobile host)",
                "Algorithm ACK",
                ack_cwnd,
                ack_ss,
                o.ack_accuracy,
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_follow_the_sender() {
        let s = Scenario {
            duration_s: 120.0,
            ..slides_case()
        };
        let o = s.run_with(Some(120.0), &mut |_| {}).unwrap();
        assert!(!o.cwnd_trace.is_empty());
        assert!(o.data_estimates.len() as u64 >= o.data_link.frames / 2);
        assert!(!o.ack_estimates.is_empty());
        let (seq, ack) = (o.seq_accuracy.unwrap(), o.ack_accuracy.unwrap());
        assert!(seq.samples > 100 && ack.samples > 100);
        assert_eq!(seq.samples, o.data_estimates.len());
        assert!(seq.cwnd_mean_rel_error < 1.0, "{seq:?}");
        assert!(ack.cwnd_mean_rel_error < 1.0, "{ack:?}");
        let svg = svg(&s, &o, Some(60.0));
        assert!(svg.contains("Algorithm SEQ cwnd") && svg.contains("Algorithm ACK ssthresh"));
        assert!(!svg.contains("NaN"));
        // Other schemes record no estimates, and the plot still renders.
        let none = Scenario {
            scheme: "none".into(),
            ..s.clone()
        };
        let o = none.run_with(Some(120.0), &mut |_| {}).unwrap();
        assert!(o.data_estimates.is_empty());
        assert!(svg_ok(&super::svg(&none, &o, None)));
    }

    fn svg_ok(s: &str) -> bool {
        s.starts_with("<svg") && s.ends_with("</svg>\n") && !s.contains("NaN")
    }

    /// The y-axis is fitted to every series drawn: the largest estimate (or sender value) in the
    /// window is inside the plot, near its top.
    #[test]
    fn the_y_axis_fits_every_series() {
        let s = Scenario {
            duration_s: 200.0,
            ..slides_case()
        };
        let mut o = s.run_with(Some(200.0), &mut |_| {}).unwrap();
        // An estimate far above the sender's window (as after a misread) must still be drawn.
        let mss = s.mss() as u32;
        o.data_estimates[10].seq_cwnd = 300 * mss;
        let text = svg(&s, &o, None);
        let labels: Vec<f64> = text
            .lines()
            .filter(|l| l.contains("text-anchor=\"end\""))
            .filter_map(|l| l.split('>').nth(1)?.split('<').next()?.parse().ok())
            .collect();
        let highest = labels.iter().copied().fold(0.0, f64::max);
        assert!(
            (300.0..=400.0).contains(&highest),
            "y ticks {labels:?} do not reach the 300-segment estimate"
        );
    }

    /// A long traced run keeps at most TRACE_POINTS points per series, while its accuracy
    /// counts every estimate.
    #[test]
    fn a_long_traced_run_stays_bounded() {
        let s = Scenario {
            duration_s: 3_000.0,
            ..slides_case()
        };
        let o = s.run_with(Some(3_000.0), &mut |_| {}).unwrap();
        let seq = o.seq_accuracy.unwrap();
        assert!(seq.samples > TRACE_POINTS, "{seq:?}");
        for len in [
            o.cwnd_trace.len(),
            o.data_estimates.len(),
            o.ack_estimates.len(),
        ] {
            assert!(len > TRACE_POINTS / 4 && len <= TRACE_POINTS, "{len}");
        }
        assert!(svg(&s, &o, None).contains("thinned evenly"));
    }

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
