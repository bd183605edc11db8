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
use taroc_core::taroc::packet::TcpIpPacket;
use taroc_core::AnyCompressor;

use crate::event::Time;
use crate::link::ErrorModel;
use crate::net::{LinkId, Observer};
use crate::scenario::{Outcome, Scenario, ACK_LINK, DATA_LINK};
use crate::tcp::sender::TcpSender;
use crate::tcp::variant::TcpVariant;
use crate::thin::{Thinned, TRACE_POINTS};

mod plot;

pub use plot::svg;

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

/// TAROC's congestion-window estimates after one packet went through the compressor: Algorithm
/// SEQ's and Algorithm ACK's of the packet's stream (bytes of sequence space).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TrackerPoint {
    /// Time, ns (when the compressor took the packet).
    pub time_ns: Time,
    /// Algorithm SEQ's cwnd.
    pub seq_cwnd: u32,
    /// Algorithm SEQ's ssthresh.
    pub seq_ssthresh: u32,
    /// Algorithm ACK's cwnd.
    pub ack_cwnd: u32,
    /// Algorithm ACK's ssthresh.
    pub ack_ssthresh: u32,
}

/// TAROC's estimates on one link direction: the points to plot (up to a time, in bounded
/// memory) and the accuracy of every estimate of the run against the sender's window at that
/// instant (running sums, constant memory).
#[derive(Debug, Clone)]
pub struct EstimateTrace {
    /// The estimates recorded until `until`, thinned evenly past [`TRACE_POINTS`] points.
    pub points: Thinned<TrackerPoint>,
    /// Algorithm SEQ's estimates against the sender's values, over the whole run.
    pub seq: AccuracySums,
    /// Algorithm ACK's estimates against the sender's values, over the whole run.
    pub ack: AccuracySums,
    until: Time,
    /// The sender's ssthresh when the first estimate was taken (before any loss).
    initial_ssthresh: Option<u64>,
    /// Whether the sender's ssthresh has left its initial value (its first loss).
    lost: bool,
}

impl EstimateTrace {
    /// An empty trace keeping the points taken until `until`.
    pub fn new(until: Time) -> EstimateTrace {
        EstimateTrace {
            points: Thinned::new(TRACE_POINTS),
            seq: AccuracySums::default(),
            ack: AccuracySums::default(),
            until,
            initial_ssthresh: None,
            lost: false,
        }
    }

    /// Records one estimate taken while the sender holds `sender` (cwnd, ssthresh).
    pub fn record(&mut self, point: TrackerPoint, sender: Option<(u64, u64)>) {
        if let Some((cwnd, ssthresh)) = sender {
            let initial = *self.initial_ssthresh.get_or_insert(ssthresh);
            self.lost |= ssthresh != initial;
            self.seq.add(
                point.seq_cwnd,
                point.seq_ssthresh,
                cwnd,
                ssthresh,
                self.lost,
            );
            self.ack.add(
                point.ack_cwnd,
                point.ack_ssthresh,
                cwnd,
                ssthresh,
                self.lost,
            );
        }
        if point.time_ns <= self.until {
            self.points.push(point);
        }
    }
}

/// Watches TAROC's compressors on some links of a run: after every packet one of them takes,
/// its estimates of the packet's stream beside the sender's window at that instant (nothing is
/// recorded for other schemes).
#[derive(Debug, Clone)]
pub struct EstimateTracer {
    /// The links watched and their traces.
    pub traces: Vec<(LinkId, EstimateTrace)>,
}

impl EstimateTracer {
    /// Watches `links`, keeping the points taken until `until` for the plot.
    pub fn new(links: &[LinkId], until: Time) -> EstimateTracer {
        EstimateTracer {
            traces: links
                .iter()
                .map(|&l| (l, EstimateTrace::new(until)))
                .collect(),
        }
    }

    /// The trace of `link`, if watched.
    pub fn trace(&self, link: LinkId) -> Option<&EstimateTrace> {
        self.traces.iter().find(|(l, _)| *l == link).map(|(_, t)| t)
    }
}

impl Observer for EstimateTracer {
    fn compressed(
        &mut self,
        now: Time,
        link: LinkId,
        packet: &[u8],
        compressor: &AnyCompressor,
        sender: Option<&TcpSender>,
    ) {
        let AnyCompressor::Taroc(c) = compressor else {
            return;
        };
        let Some((_, trace)) = self.traces.iter_mut().find(|(l, _)| *l == link) else {
            return;
        };
        let Some(key) = TcpIpPacket::parse(packet).map(|p| p.key) else {
            return;
        };
        if let Some((seq, ack)) = c.estimates_of(&key) {
            let point = TrackerPoint {
                time_ns: now,
                seq_cwnd: seq.cwnd,
                seq_ssthresh: seq.ssthresh,
                ack_cwnd: ack.cwnd,
                ack_ssthresh: ack.ssthresh,
            };
            trace.record(point, sender.map(|s| (s.state.cwnd, s.state.ssthresh)));
        }
    }
}

/// A run of a scenario with TAROC's estimates traced on both wireless directions.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracked {
    /// The run's outcome, with the sender's cwnd trace over the plotted seconds.
    pub outcome: Outcome,
    /// TAROC's estimates at the router's compressor (data stream: Algorithm SEQ applies), over
    /// the plotted seconds.
    pub data_estimates: Vec<TrackerPoint>,
    /// TAROC's estimates at the mobile host's compressor (ACK stream: Algorithm ACK applies),
    /// over the plotted seconds.
    pub ack_estimates: Vec<TrackerPoint>,
    /// How close Algorithm SEQ's estimates (data stream) were to the sender's window over the
    /// whole run.
    pub seq_accuracy: Accuracy,
    /// How close Algorithm ACK's estimates (ACK stream) were to the sender's window over the
    /// whole run.
    pub ack_accuracy: Accuracy,
}

/// Runs `scenario`, recording the sender's cwnd trace and TAROC's estimates (both wireless
/// directions) over the first `plotted_s` seconds for a plot (in bounded memory, thinned evenly
/// on long runs), and the estimates' accuracy over the whole run. Calls `progress` with the
/// simulated seconds done, a hundred times over the run.
pub fn run(
    scenario: &Scenario,
    plotted_s: f64,
    progress: &mut dyn FnMut(f64),
) -> Result<Tracked, String> {
    let plotted = scenario.plotted(plotted_s);
    let mut tracer = EstimateTracer::new(&[DATA_LINK, ACK_LINK], plotted);
    let outcome = scenario.run_observed(Some(plotted_s), &mut tracer, progress)?;
    let points = |link| tracer.trace(link).map(|t| t.points.points().to_vec());
    let accuracy = |link, pick: fn(&EstimateTrace) -> &AccuracySums| {
        tracer.trace(link).map(|t| pick(t).accuracy())
    };
    Ok(Tracked {
        outcome,
        data_estimates: points(DATA_LINK).unwrap_or_default(),
        ack_estimates: points(ACK_LINK).unwrap_or_default(),
        seq_accuracy: accuracy(DATA_LINK, |t| &t.seq).unwrap_or_default(),
        ack_accuracy: accuracy(ACK_LINK, |t| &t.ack).unwrap_or_default(),
    })
}

/// Algorithm SEQ's estimates from the data stream.
pub fn seq_estimates(t: &Tracked) -> impl Iterator<Item = (Time, u32, u32)> + '_ {
    t.data_estimates
        .iter()
        .map(|p| (p.time_ns, p.seq_cwnd, p.seq_ssthresh))
}

/// Algorithm ACK's estimates from the ACK stream.
pub fn ack_estimates(t: &Tracked) -> impl Iterator<Item = (Time, u32, u32)> + '_ {
    t.ack_estimates
        .iter()
        .map(|p| (p.time_ns, p.ack_cwnd, p.ack_ssthresh))
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
