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
use crate::tcp::sender::{CwndPoint, TcpVariant};

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

/// The sender's (cwnd, ssthresh) at `t`: its last trace point at or before `t`.
fn sender_at(trace: &[CwndPoint], t: Time) -> Option<CwndPoint> {
    let i = trace.partition_point(|p| p.time_ns <= t);
    i.checked_sub(1).map(|i| trace[i])
}

/// Compares estimates (time, cwnd, ssthresh) with the sender's trace.
pub fn accuracy(
    trace: &[CwndPoint],
    estimates: impl Iterator<Item = (Time, u32, u32)>,
) -> Accuracy {
    let first_ssthresh = trace.first().map(|p| p.ssthresh);
    let first_loss = trace
        .iter()
        .find(|p| Some(p.ssthresh) != first_ssthresh)
        .map_or(Time::MAX, |p| p.time_ns);
    let (mut n, mut cwnd_err, mut within, mut ss_n, mut ss_err) = (0usize, 0.0, 0usize, 0, 0.0);
    for (t, cwnd, ssthresh) in estimates {
        let Some(s) = sender_at(trace, t) else {
            continue;
        };
        let rel = (f64::from(cwnd) - s.cwnd as f64).abs() / (s.cwnd.max(1) as f64);
        n += 1;
        cwnd_err += rel;
        within += usize::from(rel <= 0.25);
        if t >= first_loss {
            ss_n += 1;
            ss_err += (f64::from(ssthresh) - s.ssthresh as f64).abs() / (s.ssthresh.max(1) as f64);
        }
    }
    let mean = |sum: f64, n: usize| if n == 0 { f64::NAN } else { sum / n as f64 };
    Accuracy {
        samples: n,
        cwnd_mean_rel_error: mean(cwnd_err, n),
        cwnd_within_25pct: mean(within as f64, n),
        ssthresh_mean_rel_error: mean(ss_err, ss_n),
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

/// The tracking plot of a run made with `Scenario::run_with(true)`: two panels (Algorithm SEQ,
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
    let sender_ss: Vec<(f64, f64)> = o
        .cwnd_trace
        .iter()
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
    let top = sender_cwnd
        .iter()
        .map(|p| p.1)
        .fold(window, f64::max)
        .min(4.0 * window)
        * 1.15;
    let panel = |name: &str, algo: &str, est: Vec<(Time, u32, u32)>, acc: Accuracy| {
        let cwnd: Vec<(f64, f64)> = est
            .iter()
            .filter(|e| e.0 <= end)
            .map(|e| (secs(e.0), segs(f64::from(e.1))))
            .collect();
        let ss: Vec<(f64, f64)> = est
            .iter()
            .filter(|e| e.0 <= end)
            .map(|e| (secs(e.0), segs(f64::from(e.2))))
            .collect();
        let step = |s: Series| Series { step: true, ..s };
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
            notes: vec![format!("Over the whole run: {}.", acc.summary())],
        }
    };
    let seq: Vec<_> = seq_estimates(o).collect();
    let ack: Vec<_> = ack_estimates(o).collect();
    let seq_acc = accuracy(&o.cwnd_trace, seq.iter().copied());
    let ack_acc = accuracy(&o.cwnd_trace, ack.iter().copied());
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
            panel("Data stream (router)", "Algorithm SEQ", seq, seq_acc),
            panel("ACK stream (mobile host)", "Algorithm ACK", ack, ack_acc),
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
        let o = s.run_with(true).unwrap();
        assert!(!o.cwnd_trace.is_empty());
        assert!(o.data_estimates.len() as u64 >= o.data_link.frames / 2);
        assert!(!o.ack_estimates.is_empty());
        let seq = accuracy(&o.cwnd_trace, seq_estimates(&o));
        let ack = accuracy(&o.cwnd_trace, ack_estimates(&o));
        assert!(seq.samples > 100 && ack.samples > 100);
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
        let o = none.run_with(true).unwrap();
        assert!(o.data_estimates.is_empty());
        assert!(svg_ok(&super::svg(&none, &o, None)));
    }

    fn svg_ok(s: &str) -> bool {
        s.starts_with("<svg") && s.ends_with("</svg>\n") && !s.contains("NaN")
    }

    #[test]
    fn accuracy_compares_at_the_same_instant() {
        let trace = [
            CwndPoint {
                time_ns: 0,
                cwnd: 100,
                ssthresh: 1000,
            },
            CwndPoint {
                time_ns: 10,
                cwnd: 200,
                ssthresh: 100,
            },
        ];
        let a = accuracy(
            &trace,
            [(5, 100, 1), (10, 150, 100), (20, 200, 50)].into_iter(),
        );
        assert_eq!(a.samples, 3);
        assert!((a.cwnd_mean_rel_error - 0.25 / 3.0).abs() < 1e-12);
        assert!((a.cwnd_within_25pct - 1.0).abs() < 1e-12);
        assert!((a.ssthresh_mean_rel_error - 0.25).abs() < 1e-12);
    }
}
