//! What the compressor does with feedback from the decompressor of its direction (spec
//! section 7), context requests, loss notes and IR receipts, and with reference receipts from
//! its sibling decompressor ([`crate::plus::receipt`]).

use super::{PlusCompressor, LOSSY_MEMORY};
use crate::plus::format;
use crate::plus::other;
use crate::plus::receipt::ReceiptFrame;
use crate::tcp::repair::{self, LinkLoss};
use crate::tcp::vsw::is_older;

impl PlusCompressor {
    /// Takes a feedback frame ([`crate::codec::Compressor::handle_feedback`]).
    pub(super) fn feedback(&mut self, frame: &[u8]) {
        if !self.config.repair.context_requests {
            return;
        }
        if frame == [other::PAIR_NOTE] {
            self.other.lossy();
            return;
        }
        if frame == [format::LOSS_NOTE] {
            self.lossy_at = Some(self.clock);
            self.other.lossy();
            return;
        }
        if let Some(receipts) = ReceiptFrame::new_checked(frame) {
            if !self.takes_receipts() {
                return;
            }
            for (cid, checksum) in receipts.receipts() {
                if let Some(Some(ctx)) = self.contexts.get_mut(usize::from(cid)) {
                    if ctx.issued.names(checksum) {
                        ctx.end_start();
                        self.stats.receipts_taken += 1;
                    }
                }
            }
            return;
        }
        if let Some(cids) = other::parse_request(frame) {
            self.other.lossy();
            for &cid in cids {
                if self.other.request(cid) {
                    self.stats.requests_received += 1;
                }
            }
            return;
        }
        let Some(cids) = repair::parse_request(frame) else {
            return;
        };
        for &cid in cids {
            if let Some(Some(ctx)) = self.contexts.get_mut(usize::from(cid)) {
                ctx.watch.request();
                ctx.co_run = 0;
                // The decompressor lacks the context now, whatever IR frame it had.
                ctx.issued.clear();
                self.lossy_at = Some(self.clock);
                self.other.lossy();
                self.stats.requests_received += 1;
            }
        }
    }

    /// A frame from the far end named this compressor's packet of the flow of hash `hash` with
    /// TCP checksum field `checksum`, next sequence number `next_seq` and acknowledgment number
    /// `ack` as its reference (a reference receipt): the far end's decompressor holds that
    /// packet or a newer one as its reference, so the window's entries older than it go. If
    /// the packet is an IR frame of its context's current start, the far end holds the
    /// context, and the start's (or a request's answer's) other IR frames and scaling notes
    /// are not needed.
    ///
    /// Only on a clean link ([`takes_receipts`](Self::takes_receipts)): an IR frame always
    /// becomes the decompressor's reference, so on a link that reorders, an older IR frame of
    /// the start that arrives after the receipt's would bring back a reference the window no
    /// longer holds.
    pub(super) fn referenced(&mut self, hash: u16, checksum: u16, next_seq: u32, ack: u32) {
        if !self.takes_receipts() {
            return;
        }
        let mut ended = false;
        for ctx in self.contexts.iter_mut().flatten() {
            if ctx.flow_hash != hash {
                continue;
            }
            let (named_ir, in_window) = (ctx.issued.names(checksum), ctx.vsw.holds(next_seq, ack));
            ctx.held_far |= named_ir || in_window;
            // The far end holds the current scaling: an IR frame since it changed, or a packet
            // coded under it.
            let (from_seq, from_ack) = ctx.scaled_from;
            if named_ir || in_window && !is_older(next_seq, ack, from_seq, from_ack) {
                ctx.wide_notes = 0;
            }
            // Nor can its reference be older than that packet: neither the window nor a wide
            // frame's horizon need reach further back.
            if in_window {
                ctx.horizon.drop_older_than(next_seq, ack);
                self.stats.window_receipts += ctx.vsw.drop_older_than(next_seq, ack) as u64;
            }
            if !ended && (ctx.irs_due > 0 || ctx.notes_due > 0) && named_ir {
                ctx.end_start();
                self.stats.reference_receipts += 1;
                ended = true;
            }
        }
    }

    /// Whether a receipt ([`crate::plus::receipt`]) ends a start: only on a clean
    /// link (not [`lossy`](Self::lossy)), or without context requests, whose starts rest on
    /// receipts wherever the link loses frames: refusing them there, the twin many-flows
    /// capture refused 5 of a flow's start frames at 10% random loss in four seeds of five
    /// (mirrored IRs whose far end had not heard of the receipts it expected), where taking
    /// them refuses none. A link that loses frames may reorder them too (the
    /// DCLOR study's radio reorders 12% of its packets), and a CO frame that arrives after
    /// newer ones is refused if its numbers lie further below the newer reference than
    /// one-sided LSBs reach (spec section 5.1: early in a flow, before a stride, 128 octets of
    /// acknowledgment number with 10 LSBs), where the start's IR frame it would otherwise have
    /// been never is. On that study (four seeds, `taroc-plus` alone) explicit
    /// receipts ending every start took context damage under the Eifel response from
    /// 1054 to 1627 frames (1032 to 1430 with RFC 4015's); on clean links only, 1099 and 1091.
    fn takes_receipts(&self) -> bool {
        !self.lossy() || !self.config.repair.context_requests
    }

    /// The sibling decompressor saw the link lose frames ([`crate::plus::mirror::Note::Lossy`],
    /// sent without a reverse channel only): the link is taken to lose frames this way too, as
    /// after a loss note from the far end.
    pub(super) fn sibling_saw_loss(&mut self) {
        if self.config.repair.context_requests {
            return;
        }
        self.lossy_at = Some(self.clock);
        self.other.lossy();
    }

    /// Whether a context request or a loss note came in lately ([`LOSSY_MEMORY`]), or the
    /// link is declared to lose frames ([`PlusConfig::link_loss`](crate::plus::PlusConfig)).
    pub(super) fn lossy(&self) -> bool {
        self.declared_lossy() || self.lately(self.lossy_at)
    }

    /// Whether the link is declared to lose frames ([`PlusConfig::link_loss`](crate::plus::PlusConfig)):
    /// nothing will ever tell this compressor otherwise.
    pub(super) fn declared_lossy(&self) -> bool {
        self.config.link_loss != LinkLoss::Unseen
    }

    /// Whether the link is known to lose frames ([`PlusCompressor::link_loss`]) and no context
    /// request will come back for a context the far end lacks: where the rules that need no
    /// reverse channel (bases past their spread IR frame, mirrors named by hash) apply.
    pub(super) fn lossy_alone(&self) -> bool {
        !self.config.repair.context_requests && self.link_loss() != LinkLoss::Unseen
    }

    /// Whether `at` (a `clock`) is within the last [`LOSSY_MEMORY`] packets.
    fn lately(&self, at: Option<u64>) -> bool {
        at.is_some_and(|t| self.clock - t < LOSSY_MEMORY)
    }

    /// The sibling decompressor held or refused a frame ([`crate::plus::mirror::Note::Bursty`],
    /// sent without a reverse channel only): the link loses bursts longer than the window reaches,
    /// and this compressor's frames reach further ([`LOSSY_REACH`](super::co::burst::LOSSY_REACH)).
    /// Its non-TCP contexts take the link as losing frames, as after a loss note (a burst of 50
    /// skips few IP-IDs, so such a link seldom makes one): starts with one more IR-N, a seldom flow
    /// whole again. Pooled over the shared, unseen and twin captures (seeds 1-5), damage per 1000
    /// intact frames at 30% loss in bursts of mean 50 went 8.628 -> 8.198, the octets per packet
    /// there 9.298 -> 9.300.
    pub(super) fn sibling_saw_burst(&mut self) {
        if !self.config.repair.context_requests {
            self.bursty_at = Some(self.clock);
            self.other.lossy();
        }
    }

    /// Whether a burst note came in lately ([`LOSSY_MEMORY`]), or the link is declared to lose
    /// bursts ([`PlusConfig::link_loss`](crate::plus::PlusConfig)).
    pub(super) fn bursty(&self) -> bool {
        self.config.link_loss == LinkLoss::Bursts || self.lately(self.bursty_at)
    }

    /// What the notes and requests that came in lately say of the link's losses: a burst note
    /// says more than a loss note or a request.
    pub(super) fn link_loss(&self) -> LinkLoss {
        if self.bursty() {
            LinkLoss::Bursts
        } else if self.lossy() {
            LinkLoss::Frames
        } else {
            LinkLoss::Unseen
        }
    }
}
