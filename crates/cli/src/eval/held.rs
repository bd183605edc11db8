//! The frames a decompressor refused for context damage (held for confirmation, or kept for a
//! later frame of their context: [`DropReason::is_context_damage`]), kept until a packet
//! delivered late ([`taroc_core::LinkEnd::take_late`]) turns out to be one of them.
//!
//! [`DropReason::is_context_damage`]: taroc_core::DropReason::is_context_damage

use std::collections::VecDeque;
use std::time::Duration;

use taroc_core::FrameKind;

use super::Sent;

/// The most held frames kept per direction: a decompressor holds at most one per context
/// (`taroc-plus` has 256 CIDs for TCP and as many for other packets), and keeps 128 frames
/// refused for context damage.
const KEPT: usize = 640;

/// A held frame's packet as its compressor sent it ([`Sent`], owned).
pub(super) struct HeldFrame {
    index: usize,
    time: Duration,
    kind: FrameKind,
    original: Vec<u8>,
    payload: usize,
    on_link: usize,
}

impl HeldFrame {
    /// The packet as sent on direction `direction`.
    pub(super) fn sent(&self, direction: usize) -> Sent<'_> {
        Sent {
            index: self.index,
            direction,
            time: self.time,
            kind: self.kind,
            original: &self.original,
            payload: self.payload,
            on_link: self.on_link,
        }
    }

    /// The original packet.
    pub(super) fn original(&self) -> &[u8] {
        &self.original
    }
}

/// Per direction, the frames held and not delivered late yet, the oldest first.
#[derive(Default)]
pub(super) struct HeldFrames {
    frames: [VecDeque<HeldFrame>; 2],
}

impl HeldFrames {
    /// The decompressor refused the frame of `sent` and may deliver it late.
    pub(super) fn hold(&mut self, sent: &Sent<'_>) {
        let frames = &mut self.frames[sent.direction];
        if frames.len() == KEPT {
            frames.pop_front();
        }
        frames.push_back(HeldFrame {
            index: sent.index,
            time: sent.time,
            kind: sent.kind,
            original: sent.original.to_vec(),
            payload: sent.payload,
            on_link: sent.on_link,
        });
    }

    /// The held frame of direction `direction` whose packet is `late`, taken out of the
    /// frames kept: the newest such one. None if no held packet is `late`: a wrong delivery.
    pub(super) fn take(&mut self, direction: usize, late: &[u8]) -> Option<HeldFrame> {
        let frames = &mut self.frames[direction];
        let at = frames.iter().rposition(|f| f.original == late)?;
        frames.remove(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(index: usize, direction: usize, original: &[u8]) -> Sent<'_> {
        Sent {
            index,
            direction,
            time: Duration::ZERO,
            kind: FrameKind::Ip,
            original,
            payload: 0,
            on_link: 1 + original.len(),
        }
    }

    #[test]
    fn a_late_packet_takes_the_held_frame_it_equals_in_its_direction_once() {
        let mut held = HeldFrames::default();
        held.hold(&sent(3, 0, &[1, 2]));
        held.hold(&sent(5, 1, &[1, 2]));
        held.hold(&sent(7, 0, &[3]));
        assert!(held.take(0, &[9]).is_none());
        let taken = held.take(0, &[1, 2]).expect("held");
        assert_eq!(taken.sent(0).index, 3);
        assert!(held.take(0, &[1, 2]).is_none());
        assert_eq!(held.take(1, &[1, 2]).map(|f| f.index), Some(5));
    }

    #[test]
    fn only_the_newest_frames_are_kept() {
        let mut held = HeldFrames::default();
        for i in 0..=KEPT {
            held.hold(&sent(i, 0, &i.to_be_bytes()));
        }
        assert!(held.take(0, &0usize.to_be_bytes()).is_none());
        assert!(held.take(0, &1usize.to_be_bytes()).is_some());
    }
}
