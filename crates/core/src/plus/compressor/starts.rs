//! How a context starts: IR frames back to back, then (without a reverse channel) IR frames
//! spread after them, so that a loss burst that takes the back-to-back ones does not leave the
//! context unset until the periodic refresh.

use super::{Context, PlusCompressor};
use crate::tcp::repair::LinkLoss;
use crate::tcp::stats::Why;

/// IR frames a context (re)starts with: the first, and this many more back to back.
const START_REPEATS: u8 = 2;

/// Without a reverse channel, a start sends one more IR frame once this many CO frames of the
/// context followed its last IR frame: a loss burst that took every IR frame of the start
/// (they go back to back) then leaves the context unset for about this many packets of the
/// flow, not until the periodic refresh. Pooled over the shared, unseen and twin captures,
/// seeds 1-5, damage per 1000 intact frames at 10 / 30% random loss and at 10 / 30% in bursts
/// of mean 4 went 0.402 / 4.786 / 16.0 / 83.5 -> 0.107 / 2.841 / 6.30 / 30.8, for at most 0.03
/// octets per packet on a clean link (the unseen bulk capture b). After 7 CO frames:
/// 0.065 / 3.323 / 6.29 / 34.6, up to 0.14 octets (the unseen many-flows capture, 40 short
/// connections); IR frames after 3 and 15: 0.050 / 1.615 / 5.46 / 32.0, up to 0.57 octets
/// there; a second one after 63 more gained 4% at 30% in bursts and nothing elsewhere.
pub(crate) const SPREAD_AFTER_CO: u32 = 15;

/// Without a reverse channel, a start ends with this many more spread IR frames, each this
/// many CO frames after the one before it ([`LATE_SPREAD_AFTER_CO`]), unless a reference receipt
/// shows the far end holding the context first ([`Context::held_far`]) or the link is known to
/// lose frames by then (a start has more IR frames there, [`LOSSY_START_REPEATS`], and early
/// refreshes): a burst that takes the start's IR frames and its spread one before either end
/// has seen the link lose frames (the far end's flows may cross it untouched) otherwise leaves
/// the context unset until the periodic refresh, hundreds of packets on. They go as refreshes
/// (never replicated from another context, mirrored only if the context's last refresh was
/// not). Pooled over the shared, unseen and twin captures, damage per 1000 intact frames at 10
/// / 30% loss in bursts of mean 50 went 6.964 / 10.408 -> 3.960 / 7.307 over seeds 6-25, and
/// over seeds 1-5 1.370 / 6.756 -> 1.083 / 5.042 (at 50%: 22.066 -> 21.671), no row worse by
/// more than 0.7% (8.265 -> 8.320 at 50% in bursts of mean 4). On a clean link the receipts
/// stop them: 0.04 octets per packet more on one of 141 captures, nothing on the others.
/// Without that stop, up to 0.31 (the unseen bulk capture a, whose flows are short). Without
/// the link's condition, 3.938 / 6.984 over seeds 6-25, but 8.265 -> 9.144 at 50% in bursts of
/// mean 4 and 2.713 -> 2.850 at 50% random loss; one late IR frame instead of two: 5.717 /
/// 7.585; as a start's IR frames (replicated, or mirrored with numbers) instead of refreshes,
/// 0.038 at 10% random loss over seeds 1-5, against 0.004.
pub(crate) const LATE_SPREADS: u8 = 2;

/// CO frames before each of a start's [`LATE_SPREADS`]: after 31 and 31 more (seeds 6-25, 10 /
/// 30% in bursts of mean 50, without the receipts' stop or the link's condition): 4.313 /
/// 6.999; 24 and 31: 4.110 / 7.290; 31 and 63: 4.144 / 7.563; 47 and 47: 4.216 / 7.764; 63
/// and 63: 5.168 / 8.388.
pub(crate) const LATE_SPREAD_AFTER_CO: u32 = 31;

/// After a burst note ([`Note::Bursty`](crate::plus::mirror::Note::Bursty)), a start's first spread
/// IR frame comes this many CO frames after the back-to-back ones, before the one
/// [`SPREAD_AFTER_CO`] later: on a link that loses bursts, a burst takes a start's back-to-back IR
/// frames together. Pooled over the shared, unseen and twin captures, seeds 1-5 / 6-25, damage per
/// 1000 at 30% loss in bursts of mean 4 went 8.18 / 8.16 -> 7.69 / 7.93, no row worse by more than
/// 1%; on those links -0.20 to +0.13 octets per packet (the many-flows captures), nothing on a
/// clean link.
const SPREAD_FIRST_AFTER_CO: u32 = 4;

/// More IR frames a start sends on a link that loses frames
/// ([`LOSSY_MEMORY`](super::LOSSY_MEMORY)): a flow whose every start frame was lost loses its next
/// frames until a request comes back. Over seeds 1-60 on the many-flows capture, damage at 30 / 50%
/// random loss went 1.226 / 6.746 -> 0.965 / 3.099 per 1000 with two (three: 1.030 / 4.339). With
/// four instead of two (mirror numbers having made start frames shorter), damage there at 20 / 30 /
/// 50% went 0.034 / 0.254 / 2.151 -> 0.011 / 0.183 / 1.212 (bursty 1.643 / 2.739 / 7.591 -> 1.151 /
/// 1.735 / 4.525), on the unseen one (seeds 1-5) at 30 / 50% 3.616 / 20.586 -> 2.301 / 14.639, for
/// 0.41 / 0.43 octets per packet more on the shared capture at 10 / 30% loss and 0.80 / 1.24 on the
/// unseen one. Nothing on a clean link. (A reference receipt does not end a start on such a link:
/// see [`PlusCompressor::takes_receipts`].)
pub(super) const LOSSY_START_REPEATS: u8 = 4;

impl PlusCompressor {
    /// IR frames a context (re)starts with: more on a link that loses frames.
    pub(super) fn start_irs(&self) -> u8 {
        let more = if self.lossy() { LOSSY_START_REPEATS } else { 0 };
        1 + START_REPEATS + more
    }

    /// How many spread IR frames end a start ([`SPREAD_AFTER_CO`]): without a reverse channel
    /// one, one more before it after a burst note ([`SPREAD_FIRST_AFTER_CO`]), and the
    /// [`LATE_SPREADS`] after it; none with context requests.
    pub(super) fn spreads(&self) -> u8 {
        if self.config.repair.context_requests {
            0
        } else if self.bursty() {
            2 + LATE_SPREADS
        } else {
            1 + LATE_SPREADS
        }
    }
}

/// CO frames after the last IR frame before the next of a start's `due` spread IR frames: the
/// [`LATE_SPREADS`] last [`LATE_SPREAD_AFTER_CO`] after the one before each, the one before
/// them [`SPREAD_AFTER_CO`], and one before that (after a burst note)
/// [`SPREAD_FIRST_AFTER_CO`] after the back-to-back ones.
fn spread_after(due: u8) -> u32 {
    if due <= LATE_SPREADS {
        LATE_SPREAD_AFTER_CO
    } else if due == LATE_SPREADS + 1 {
        SPREAD_AFTER_CO
    } else {
        SPREAD_FIRST_AFTER_CO
    }
}

/// Why `ctx`'s packet goes as a spread IR frame, if one is due now: a start's IR frame away
/// from the others (a burst that took them all leaves the context unset for this many packets
/// of the flow, not a refresh's); the late ones go as refreshes, unless the far end holds the
/// context or the link is known to lose frames (`loss`; a start has more IR frames there, and
/// early refreshes), which drops them; but not where it was `declared` to (a link used one way
/// only: one way at 30% in bursts of mean 50, seeds 1-5, the late ones took damage from 9.21 to
/// 5.05 per 1000 intact frames in the reverse direction, for 0.02 / 0.10 octets per packet on a
/// clean link).
#[inline(always)]
pub(super) fn spread_due(ctx: &mut Context, loss: LinkLoss, declared: bool) -> Option<Why> {
    if ctx.spread_due == 0 || ctx.co_run < spread_after(ctx.spread_due) {
        return None;
    }
    let late = ctx.spread_due <= LATE_SPREADS;
    if late && (ctx.held_far || loss != LinkLoss::Unseen && !declared) {
        ctx.spread_due = 0;
        return None;
    }
    ctx.spread_due -= 1;
    Some(if late { Why::Refresh } else { Why::SlowStart })
}

/// Whether spread IR frames other than the late ones are still due: a start's CO frames carry
/// the check until then after a burst note.
#[inline(always)]
pub(super) fn early_spreads_due(ctx: &Context) -> bool {
    ctx.spread_due > LATE_SPREADS
}
