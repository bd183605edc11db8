//! Counters of what a `taroc-plus` compressor sent and why, and where its header bytes went.

use crate::tcp::stats::{Part, Why};

/// The counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlusStats {
    frames: [u64; Why::ALL.len()],
    bytes: [u64; Part::ALL.len()],
    /// Contexts created.
    pub contexts_created: u64,
    /// Streams moved to a fresh CID because their identity changed.
    pub identity_changes: u64,
    /// Contexts evicted (least recently used) to make room.
    pub evictions: u64,
    /// CO -> IR transitions because the window held a single packet.
    pub long_jumps: u64,
    /// Context requests received for contexts the compressor holds.
    pub requests_received: u64,
    /// CO frames that carried a scaling note (a new stride or IP-ID behaviour,
    /// [`super::note`]).
    pub scaling_notes: u64,
    /// IR frames sent as mirrored compact IRs (the addresses and ports named by the opposite
    /// direction's flow, [`super::mirror`]).
    pub mirrored_irs: u64,
    /// Reference receipts that ended a context's start early: a frame from the far end named
    /// one of its IR frames' packets as its reference ([`super::receipt`]).
    pub reference_receipts: u64,
    /// IR receipts (feedback, [`super::receipt`]) that ended a context's restart or answer early.
    pub receipts_taken: u64,
    /// Window entries dropped because a reference receipt showed the decompressor holds a
    /// newer reference.
    pub window_receipts: u64,
    /// Wide CO frames (every field whole, with the check) sent without context requests
    /// (spec section 5.8).
    pub wide_frames: u64,
}

impl PlusStats {
    pub(crate) fn count(&mut self, why: Why) {
        self.frames[why as usize] += 1;
    }

    pub(crate) fn add_part(&mut self, part: Part, bytes: u64) {
        self.bytes[part as usize] += bytes;
    }

    /// Frames sent for `why`.
    pub fn frames(&self, why: Why) -> u64 {
        self.frames[why as usize]
    }

    /// Header bytes spent on `part`.
    pub fn bytes(&self, part: Part) -> u64 {
        self.bytes[part as usize]
    }
}
