//! Watching a run: TAROC's estimates after every packet its compressors take, beside the
//! sender's window at that instant.

use serde::Serialize;
use taroc_core::taroc::packet::TcpIpPacket;
use taroc_core::AnyCompressor;

use super::AccuracySums;
use crate::event::Time;
use crate::net::{LinkId, Observer};
use crate::tcp::sender::TcpSender;
use crate::thin::{Thinned, TRACE_POINTS};

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
