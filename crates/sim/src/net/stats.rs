//! What a link direction counts.

use serde::Serialize;

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
    /// Frames the decompressor refused, less the held ones it delivered late.
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
