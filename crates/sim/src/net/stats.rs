//! What a link direction records: its counters, and TAROC's congestion-window estimates with
//! their accuracy against the sender's window.

use serde::Serialize;

use crate::event::Time;
use crate::thin::{Thinned, TRACE_POINTS};
use crate::tracking::AccuracySums;

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

/// Counters of a link direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LinkStats {
    /// Packets offered to the queue.
    pub offered: u64,
    /// Packets dropped by DropTail.
    pub queue_drops: u64,
    /// Frames transmitted.
    pub frames: u64,
    /// Bytes on the wire (framing included).
    pub wire_bytes: u64,
    /// Frames discarded for bit errors.
    pub corrupted: u64,
    /// Frames the decompressor refused.
    pub decompressor_drops: u64,
    /// Feedback frames sent.
    pub feedback_frames: u64,
    /// Bytes on the wire of the feedback frames (framing included).
    pub feedback_bytes: u64,
    /// TCP payload bytes the frames carried (links with a codec only): the rest of
    /// `wire_bytes - feedback_bytes` is headers and framing.
    pub payload_bytes: u64,
}

impl LinkStats {
    /// Mean bytes of header and framing per packet frame (feedback frames left out).
    pub fn overhead_per_frame(&self) -> f64 {
        let frames = self.frames - self.feedback_frames;
        (self.wire_bytes - self.feedback_bytes - self.payload_bytes) as f64 / frames.max(1) as f64
    }
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
    pub(super) fn new(until: Time) -> EstimateTrace {
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
    pub(super) fn record(&mut self, point: TrackerPoint, sender: Option<(u64, u64)>) {
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
