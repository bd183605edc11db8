//! CO frames kept while their context is missing (format section 5.9). A burst that takes
//! every IR frame of a start leaves the decompressor without the context, and each CO frame of
//! the flow after it is refused until the next IR frame arrives (without a reverse channel, a
//! spread IR frame or a refresh, up to 64 packets of the flow later). The decompressor keeps
//! the last [`KEPT_FRAMES`] CO frames it refused for want of a context; once an IR frame sets
//! that context up, they are decoded newest first, each against the packet after it
//! ([`decode_earlier`](super::co::decode_earlier)), and each packet goes late once the frame
//! before it verifies against it with codes that reach no further ([`Reach::within`]), as a
//! held packet is confirmed (section 5.8). The oldest packet decoded is confirmed by none and
//! never goes.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::co::Reach;

/// How many refused CO frames the decompressor keeps, of every context together (the newest).
/// Without a reverse channel, a start whose IR frames a burst took is set up again by a spread
/// IR frame 15 CO frames later or by the refresh after 64 compressed packets: pooled over the
/// shared, unseen and twin captures (seeds 1-5, 10% loss in bursts of mean 50), 946 of 988
/// frames refused for want of a context came at most 64 packets of their flow before the IR
/// frame that ended the outage, 622 at most 32. Against 64 kept frames, 128 took damage at 50%
/// random loss 3.925 -> 3.720 per 1000 intact frames (seeds 1-5), in bursts of mean 50 at 10 /
/// 30% 14.235 / 28.672 -> 13.761 / 27.450 (seeds 6-25), no row worse; up to 192 KiB of
/// buffers, taken only while frames are refused.
pub(super) const KEPT_FRAMES: usize = 128;

/// One kept frame: its CID, its CO kind byte, the CID its kind byte named (if it did) and
/// what followed the kind byte (and that CID).
#[derive(Debug, Clone)]
pub(super) struct Frame {
    pub(super) cid: u8,
    pub(super) kind: u8,
    pub(super) prefixed: Option<u8>,
    pub(super) bytes: Vec<u8>,
}

/// The kept frames, the packets decoded from them awaiting confirmation, and those due to go
/// late.
#[derive(Debug, Clone, Default)]
pub(super) struct Kept {
    /// The oldest first.
    frames: VecDeque<Frame>,
    /// Buffers of frames and packets no longer needed.
    spare: Vec<Vec<u8>>,
    /// The packet decoded last, not yet confirmed, with its frame's reach.
    unconfirmed: Option<(Vec<u8>, Reach)>,
    /// Confirmed packets due to go late, the oldest first.
    due: VecDeque<Vec<u8>>,
}

impl Kept {
    /// Keeps a CO frame of `cid` refused for want of a context: kind byte `kind`, the CID
    /// its kind byte named (`prefixed`), and `bytes` after them.
    pub(super) fn keep(&mut self, cid: u8, kind: u8, prefixed: Option<u8>, bytes: &[u8]) {
        let mut buffer = match self.frames.len() {
            KEPT_FRAMES => self.frames.pop_front().map(|f| f.bytes),
            _ => self.spare.pop(),
        }
        .unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(bytes);
        self.frames.push_back(Frame {
            cid,
            kind,
            prefixed,
            bytes: buffer,
        });
    }

    /// Whether a frame of `cid` is kept.
    pub(super) fn holds(&self, cid: u8) -> bool {
        self.frames.iter().any(|f| f.cid == cid)
    }

    /// Takes the frames of `cid` out, the newest first.
    pub(super) fn take_frames(&mut self, cid: u8) -> Vec<Frame> {
        let mut taken = Vec::new();
        let mut at = self.frames.len();
        while at > 0 {
            at -= 1;
            if self.frames[at].cid == cid {
                taken.extend(self.frames.remove(at));
            }
        }
        taken
    }

    /// A buffer to decode into.
    pub(super) fn buffer(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_default()
    }

    /// Gives back the buffers of frames decoded, and the one decoded into.
    pub(super) fn recycle(&mut self, frames: Vec<Frame>, buffer: Vec<u8>) {
        self.spare.extend(frames.into_iter().map(|f| f.bytes));
        self.spare.push(buffer);
    }

    /// A kept frame's packet `packet` verified against the packet after it (or the IR
    /// frame's), its frame reaching `reach`: it confirms the unconfirmed one (which then goes
    /// late) if `reach` is within that one's, and takes its place.
    pub(super) fn verified(&mut self, packet: &[u8], reach: Reach) {
        if let Some((newer, newer_reach)) = self.unconfirmed.take() {
            if reach.within(&newer_reach) {
                self.due.push_front(newer);
            } else {
                self.spare.push(newer);
            }
        }
        let mut buffer = self.spare.pop().unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(packet);
        self.unconfirmed = Some((buffer, reach));
    }

    /// The kept frames of a context are all decoded: the last packet, confirmed by none,
    /// does not go.
    pub(super) fn end_chain(&mut self) {
        if let Some((packet, _)) = self.unconfirmed.take() {
            self.spare.push(packet);
        }
    }

    /// Forgets the packets due and not taken: a new frame arrives.
    pub(super) fn forget_due(&mut self) {
        self.spare.extend(self.due.drain(..));
    }

    /// Moves the oldest packet due into `out` and returns true, or returns false if none is.
    pub(super) fn take(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(packet) = self.due.pop_front() else {
            return false;
        };
        out.clear();
        out.extend_from_slice(&packet);
        self.spare.push(packet);
        true
    }
}
