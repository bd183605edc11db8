//! Counters of what a TAROC compressor sent and why, and where its header bytes went.

pub use crate::tcp::stats::{Part, Why};

/// The counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TarocStats {
    frames: [u64; Why::ALL.len()],
    bytes: [u64; Part::ALL.len()],
    /// Contexts created.
    pub contexts_created: u64,
    /// Streams moved to a fresh CID because their identity changed.
    pub identity_changes: u64,
    /// Contexts evicted (least recently used) to make room.
    pub evictions: u64,
    /// CO -> IR transitions because the VSW held a single packet.
    pub long_jumps: u64,
    /// Context requests received for contexts the compressor holds.
    pub requests_received: u64,
}

impl TarocStats {
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
