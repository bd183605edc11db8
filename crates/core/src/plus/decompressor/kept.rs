//! CO frames kept while their context is missing or damaged (format section 5.9). A burst
//! that takes every IR frame of a start leaves the decompressor without the context, and one
//! longer than the window leaves it with a stale reference: each CO frame of the flow after it
//! is refused until an IR frame arrives, or a CO frame verifies again (without a reverse
//! channel, a spread IR frame, a refresh or a wide frame, up to 64 packets of the flow later).
//! The decompressor keeps the last [`KEPT_FRAMES`] CO frames it refused for want of a context
//! or on their checksum; once a frame of that context is delivered, they are decoded newest
//! first, each against the packet after it ([`decode_earlier`]: in
//! the mirrored interval, else by trials further back), and each packet goes late once the
//! frame before it verifies against it, by no trial, with codes that reach no further
//! ([`Reach::within`]), as a held packet is confirmed (section 5.8). The oldest packet decoded
//! is confirmed by none and never goes, unless its frame carries the 16-bit check and was
//! decoded by no trial: it verified on 32 bits, and goes on its own.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::co::decode_earlier;
use super::reach::Reach;
use super::{Held, PlusDecompressor};
use crate::codec::DropReason;
use crate::plus::co::Head;

/// How many refused CO frames the decompressor keeps, of every context together (the newest).
/// (Measured on frames refused for want of a context alone.)
/// Without a reverse channel, a start whose IR frames a burst took is set up again by a spread
/// IR frame 15 CO frames later or by the refresh after 64 compressed packets: pooled over the
/// shared, unseen and twin captures (seeds 1-5, 10% loss in bursts of mean 50), 946 of 988
/// frames refused for want of a context came at most 64 packets of their flow before the IR
/// frame that ended the outage, 622 at most 32. Against 64 kept frames, 128 took damage at 50%
/// random loss 3.925 -> 3.720 per 1000 intact frames (seeds 1-5), in bursts of mean 50 at 10 /
/// 30% 14.235 / 28.672 -> 13.761 / 27.450 (seeds 6-25), no row worse; up to 192 KiB of
/// buffers, taken only while frames are refused.
pub(super) const KEPT_FRAMES: usize = 128;

// Each CID's count of kept frames fits an octet.
const _: () = assert!(KEPT_FRAMES <= u8::MAX as usize);

/// One kept frame: its CID, its CO kind byte, the CID its kind byte named (if it did), what
/// followed the kind byte (and that CID), and why it was refused.
#[derive(Debug, Clone)]
pub(super) struct Frame {
    pub(super) cid: u8,
    pub(super) kind: u8,
    pub(super) prefixed: Option<u8>,
    pub(super) bytes: Vec<u8>,
    /// Why it was refused.
    pub(super) reason: DropReason,
}

/// The kept frames, the packets decoded from them awaiting confirmation, and those due to go
/// late.
#[derive(Debug, Clone)]
pub(super) struct Kept {
    /// The oldest first.
    frames: VecDeque<Frame>,
    /// How many frames each CID has kept: a delivered frame looks nothing up on a clean
    /// link, nor for a context that kept none.
    per_cid: [u8; 256],
    /// Buffers of frames and packets no longer needed.
    spare: Vec<Vec<u8>>,
    /// The packet decoded last, not yet confirmed, with its frame's reach and why the frame
    /// was refused.
    unconfirmed: Option<(Vec<u8>, Reach, DropReason)>,
    /// Confirmed packets due to go late, the oldest first, with why their frames were refused.
    due: VecDeque<(Vec<u8>, DropReason)>,
}

impl Default for Kept {
    fn default() -> Kept {
        Kept {
            frames: VecDeque::new(),
            per_cid: [0; 256],
            spare: Vec::new(),
            unconfirmed: None,
            due: VecDeque::new(),
        }
    }
}

impl Kept {
    /// Keeps a CO frame of `cid` refused for `reason` (want of a context, or its checksum):
    /// kind byte `kind`, the CID its kind byte named (`prefixed`), and `bytes` after them.
    pub(super) fn keep(
        &mut self,
        cid: u8,
        kind: u8,
        prefixed: Option<u8>,
        bytes: &[u8],
        reason: DropReason,
    ) {
        let mut buffer = match self.frames.len() {
            KEPT_FRAMES => self.frames.pop_front().map(|f| {
                self.per_cid[usize::from(f.cid)] -= 1;
                f.bytes
            }),
            _ => self.spare.pop(),
        }
        .unwrap_or_default();
        self.per_cid[usize::from(cid)] += 1;
        buffer.clear();
        buffer.extend_from_slice(bytes);
        self.frames.push_back(Frame {
            cid,
            kind,
            prefixed,
            bytes: buffer,
            reason,
        });
    }

    /// Whether a frame of `cid` is kept.
    #[inline]
    pub(super) fn holds(&self, cid: u8) -> bool {
        self.per_cid[usize::from(cid)] > 0
    }

    /// Takes the frames of `cid` out, the newest first.
    pub(super) fn take_frames(&mut self, cid: u8) -> Vec<Frame> {
        self.per_cid[usize::from(cid)] = 0;
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

    /// A kept frame's packet `packet` (refused for `reason`) verified against the packet after
    /// it (or the delivered one's), its frame reaching `reach`: it confirms the unconfirmed one
    /// (which then goes late) if it was decoded `plain` (by no trial, which may undo that
    /// packet's error) and `reach` is within that one's, and takes its place; or, decoded
    /// plain from a frame `sealed` with the 16-bit check (it verified on 32 bits), it goes
    /// late on its own.
    pub(super) fn verified(
        &mut self,
        packet: &[u8],
        reach: Reach,
        plain: bool,
        sealed: bool,
        reason: DropReason,
    ) {
        if let Some((newer, newer_reach, newer_reason)) = self.unconfirmed.take() {
            if plain && reach.within(&newer_reach) {
                self.due.push_front((newer, newer_reason));
            } else {
                self.spare.push(newer);
            }
        }
        let mut buffer = self.spare.pop().unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(packet);
        if plain && sealed {
            self.due.push_front((buffer, reason));
        } else {
            self.unconfirmed = Some((buffer, reach, reason));
        }
    }

    /// The kept frames of a context are all decoded: the last packet, confirmed by none,
    /// does not go.
    pub(super) fn end_chain(&mut self) {
        if let Some((packet, _, _)) = self.unconfirmed.take() {
            self.spare.push(packet);
        }
    }

    /// Forgets the packets due and not taken: a new frame arrives. (Every frame comes here:
    /// as a rule, nothing to do but a test.)
    #[inline]
    pub(super) fn forget_due(&mut self) {
        while let Some((packet, _)) = self.due.pop_front() {
            self.spare.push(packet);
        }
    }

    /// Moves the oldest packet due into `out` and returns why its frame was refused, or
    /// returns `None` if none is due.
    #[inline]
    pub(super) fn take(&mut self, out: &mut Vec<u8>) -> Option<DropReason> {
        let (packet, reason) = self.due.pop_front()?;
        out.clear();
        out.extend_from_slice(&packet);
        self.spare.push(packet);
        Some(reason)
    }
}

impl PlusDecompressor {
    /// A frame of context `cid` was delivered (an IR frame set it up, or a CO frame verified):
    /// the CO frames kept for it are decoded, the newest first, each against the packet after
    /// it (the first against the context's reference), and those confirmed go late
    /// (this module).
    #[inline(never)]
    pub(super) fn decode_kept(&mut self, cid: u8) {
        let frames = self.kept.take_frames(cid);
        let mut out = self.kept.buffer();
        if let Some(ctx) = self.contexts[usize::from(cid)]
            .as_mut()
            .filter(|c| c.outer.is_none())
        {
            let set_up = ctx.state();
            // How many frames failed since the packet decoded last.
            let mut skipped: u16 = 0;
            for frame in &frames {
                let Ok((head, at)) = Head::parse(frame.kind, frame.prefixed, &frame.bytes) else {
                    continue;
                };
                let kept = ctx.state();
                if let Some(s) = head.note {
                    (ctx.strides, ctx.behaviour) = (s.strides, s.behaviour);
                }
                let rest = &frame.bytes[at..];
                let decoded =
                    decode_earlier(ctx, frame.kind, head.x, rest, &mut out).or_else(|e| {
                        // Frames that failed (a retransmission, as a rule) took IP-IDs of the
                        // counter between this packet and the one decoded last.
                        if skipped == 0 || !ctx.behaviour.is_counter() {
                            return Err(e);
                        }
                        let b = ctx.behaviour;
                        let ip_id = ctx.reference.ip_id;
                        ctx.reference.ip_id = b.ip_id(b.counter(ip_id).wrapping_sub(skipped));
                        let d = decode_earlier(ctx, frame.kind, head.x, rest, &mut out);
                        ctx.reference.ip_id = ip_id;
                        d.map(|(d, _)| (d, false))
                    });
                let Ok((d, plain)) = decoded else {
                    ctx.restore(&kept);
                    skipped = skipped.saturating_add(1);
                    continue;
                };
                skipped = 0;
                let reach = d.codes.reach(ctx.strides);
                self.kept
                    .verified(&out, reach, plain, head.x.check, frame.reason);
                ctx.restore(&Held {
                    reference: d.fields,
                    next: d.next,
                    quotients: d.quotients,
                    last: d.trace(),
                    ..ctx.state()
                });
            }
            ctx.restore(&set_up);
            self.kept.end_chain();
        }
        self.kept.recycle(frames, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_goes_late_only_once_a_frame_decoded_by_no_trial_confirms_it() {
        let mut kept = Kept::default();
        let reach = Reach::default();
        let mut out = Vec::new();
        // The newest first: a, then b (decoded by trial), then c, then d.
        kept.verified(b"a", reach, true, false, DropReason::NoContext);
        kept.verified(b"b", reach, false, false, DropReason::NoContext);
        assert_eq!(kept.take(&mut out), None, "a trial confirmed a");
        kept.verified(b"c", reach, true, false, DropReason::ChecksumMismatch);
        kept.verified(b"d", reach, true, false, DropReason::NoContext);
        kept.end_chain();
        // b confirmed by c, c by d; d (the oldest) by none; a by none.
        assert_eq!(kept.take(&mut out), Some(DropReason::ChecksumMismatch));
        assert_eq!(out, b"c");
        assert_eq!(kept.take(&mut out), Some(DropReason::NoContext));
        assert_eq!(out, b"b");
        assert_eq!(kept.take(&mut out), None);
    }

    #[test]
    fn a_packet_whose_frame_carries_the_check_goes_late_on_its_own_unless_decoded_by_trial() {
        let mut kept = Kept::default();
        let reach = Reach::default();
        let mut out = Vec::new();
        // The newest first: a, b (sealed), c (sealed, the oldest, by trial).
        kept.verified(b"a", reach, true, false, DropReason::NoContext);
        kept.verified(b"b", reach, true, true, DropReason::ChecksumMismatch);
        kept.verified(b"c", reach, false, true, DropReason::NoContext);
        kept.end_chain();
        // a confirmed by b; b on its own; c by none (a trial may have undone the error the
        // check would catch). The oldest first.
        let mut went = Vec::new();
        while kept.take(&mut out).is_some() {
            went.push(out.clone());
        }
        assert_eq!(went, [b"b".to_vec(), b"a".to_vec()]);
    }
}
