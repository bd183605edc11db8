//! A CO frame against its context (spec section 5.8): decoded and verified, then delivered
//! and committed; or, against a suspect context or after a jump, held until the next frame
//! verifies against it, which delivers the held packet late if it vouches for it.

use alloc::vec::Vec;

use super::co::{decode_before, decode_body, decode_late, Decoded};
use super::guess::guess_stride;
use super::{Context, PlusDecompressor};
use crate::codec::DropReason;
use crate::plus::ack::Extension;
use crate::plus::co::Head;
use crate::plus::ipid::Behaviour;
use crate::plus::scaled::Strides;
use crate::plus::stale;
use crate::plus::window::Scaling;
use crate::tcp::vsw::is_older;

impl PlusDecompressor {
    /// Rebuilds a CO frame, of CID `prefixed` if its kind byte named one
    /// ([`cids`](crate::plus::cids)); returns its CID (once known) with the outcome.
    pub(super) fn co(
        &mut self,
        k: u8,
        prefixed: Option<u8>,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> (Option<u8>, Result<(), DropReason>) {
        let (head, at) = match Head::parse(k, prefixed, frame) {
            Ok(read) => read,
            Err((cid, reason)) => return (cid, Err(reason)),
        };
        let Head { x, cid, note } = head;
        // Against a context, a frame that does not parse is as wrong as one that fails its
        // checksum: the context is not the compressor's (a CID reused, an IR lost).
        let result = self
            .co_fields(k, x, cid, note, &frame[at..], out)
            .map_err(|reason| match reason {
                DropReason::Malformed => DropReason::ChecksumMismatch,
                other => other,
            });
        if result.is_err() {
            out.clear();
        }
        // A frame refused for want of a context, or on its checksum, is kept for the next
        // frame of the context delivered (not from inside a tunnel frame, whose outer header
        // it lacks).
        if let (Err(r @ (DropReason::NoContext | DropReason::ChecksumMismatch)), None) =
            (result, self.tunnel_outer)
        {
            self.kept.keep(cid, k, prefixed, frame, r);
        }
        (Some(cid), result)
    }

    /// Decodes a CO frame's body (after its CID and note) against the context of `cid`,
    /// under `scaling` if the frame carries a note ([`note`](crate::plus::note)), and commits
    /// it; a suspect context's frame without the check is held instead, or confirms the one
    /// held (spec section 5.8).
    fn co_fields(
        &mut self,
        k: u8,
        x: Extension,
        cid: u8,
        scaling: Option<Scaling>,
        rest: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        let limit = self.stale_gap;
        let ctx = self.contexts[usize::from(cid)]
            .as_mut()
            .ok_or(DropReason::NoContext)?;
        // A tunnelled context's CO frames go plain: its outer header is the context's.
        if ctx.outer.is_some() && self.tunnel_outer.is_some() {
            return Err(DropReason::Malformed);
        }
        // A packet held: this frame confirms it if it verifies against it, and the held
        // packet goes late (not from inside a tunnel frame, whose outer header it lacks).
        if let Some(held) = ctx.held.take() {
            let kept = ctx.state();
            ctx.restore(&held);
            // A trial confirms nothing: none against the held packet.
            let mut under = Scaling::default();
            match decode_in(ctx, k, x, scaling, rest, out, false, &mut under) {
                Ok(d) => match deliver(ctx, &d, under, scaling.is_some(), out) {
                    Ok((sequential, gap)) => {
                        self.loss.delivered(sequential, gap);
                        // The confirmation vouches for the held packet's every field only
                        // if none of its own codes reached further ([`Reach`]).
                        if self.tunnel_outer.is_none() {
                            let reach = d.codes.reach(under.strides);
                            let (frame, scratch) =
                                (&self.held_frames[usize::from(cid)], &mut self.scratch);
                            self.late.confirm(cid, |packet, held| {
                                reach.within(&held)
                                    || reach.back_checked(&held)
                                        && rebuilds_before(ctx, frame, packet, scratch)
                            });
                        }
                        return Ok(());
                    }
                    Err(reason) => {
                        ctx.restore(&kept);
                        return Err(reason);
                    }
                },
                Err(_) => ctx.restore(&kept),
            }
        }
        let mut under = Scaling::default();
        let decoded = decode_in(ctx, k, x, scaling, rest, out, true, &mut under);
        let d = decoded.inspect_err(|_| ctx.suspect = true)?;
        let jumped = limit.is_some_and(|l| stale::jumped(under, &ctx.last, &d.trace(), l));
        if !x.check && (ctx.suspect || jumped || d.trial) {
            // Verified on 16 bits alone where the reference may be lost: held until the next
            // frame verifies against it.
            let kept = ctx.state();
            let packet = self.late.hold(cid, d.codes.reach(under.strides));
            packet.extend_from_slice(out);
            // A packet decoded by trial may lie above its true value: no check from the
            // frame after it ([`Reach::back_checked`]).
            let frame = &mut self.held_frames[usize::from(cid)];
            frame.body.clear();
            if ctx.outer.is_none() && !d.trial {
                (frame.kind, frame.x, frame.scaling) = (k, x, scaling);
                frame.body.extend_from_slice(rest);
            }
            if ctx.outer.is_some_and(|o| !o.wrap(packet, d.outer_id)) {
                packet.clear();
            }
            commit(ctx, &d, under, scaling.is_some());
            ctx.held = Some(ctx.state());
            ctx.restore(&kept);
            ctx.suspect = true;
            self.held_now = true;
            return Err(DropReason::Held);
        }
        let (sequential, gap) = deliver(ctx, &d, under, scaling.is_some(), out)?;
        self.loss.delivered(sequential, gap);
        Ok(())
    }
}

/// A held CO frame: its kind byte, extension, note's scaling and body (empty: none, or one of
/// a tunnelled context or decoded by trial).
#[derive(Debug, Clone, Default)]
pub(super) struct HeldFrame {
    kind: u8,
    x: Extension,
    scaling: Option<Scaling>,
    body: Vec<u8>,
}

/// Whether the held `frame`, decoded in the mirrored interval against `ctx`'s reference (the
/// frame after it, just delivered), rebuilds the held `packet` exactly (into `out`)
/// ([`Reach::back_checked`](super::reach::Reach::back_checked)). The context is left as it was.
fn rebuilds_before(ctx: &mut Context, frame: &HeldFrame, packet: &[u8], out: &mut Vec<u8>) -> bool {
    if frame.body.is_empty() {
        return false;
    }
    let state = ctx.state();
    if let Some(s) = frame.scaling {
        (ctx.strides, ctx.behaviour) = (s.strides, s.behaviour);
    }
    let same = decode_before(ctx, frame.kind, frame.x, &frame.body, out)
        .is_ok_and(|_| out.as_slice() == packet);
    ctx.restore(&state);
    same
}

/// Decodes a CO body against `ctx`'s reference, under `scaling` if the frame carries a note
/// (else the context's, or the strides its packets suggest if that fails, [`guess_stride`],
/// or, with `trials`, fields whole periods further on, [`decode_late`]): the packet verified,
/// and the scaling it was decoded under in `under` (an out-parameter: a tuple returned by value
/// is copied field by field, and its loads stall on the stores just made). The context is left
/// as it was.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn decode_in(
    ctx: &mut Context,
    k: u8,
    x: Extension,
    scaling: Option<Scaling>,
    rest: &[u8],
    out: &mut Vec<u8>,
    trials: bool,
    under: &mut Scaling,
) -> Result<Decoded, DropReason> {
    let kept = (ctx.strides, ctx.behaviour);
    let decoded = match scaling {
        Some(s) => {
            if !ctx.v4 && s.behaviour != Behaviour::Zero {
                return Err(DropReason::Malformed);
            }
            (ctx.strides, ctx.behaviour) = (s.strides, s.behaviour);
            decode_body(ctx, k, x, rest, out)
        }
        None => match decode_body(ctx, k, x, rest, out) {
            Ok(decoded) => Ok(decoded),
            Err(reason) => guess_stride(ctx, k, x, rest, out)
                .or_else(|| trials.then(|| decode_late(ctx, k, x, rest, out)).flatten())
                .ok_or(reason),
        },
    };
    *under = Scaling {
        strides: ctx.strides,
        behaviour: ctx.behaviour,
    };
    (ctx.strides, ctx.behaviour) = kept;
    decoded
}

/// Delivers the verified packet `d` (decoded under `under`, from a frame with a note if
/// `noted`) and commits it: the context trusts its reference again. Whether the context's
/// IP-ID is sequential, and its step from the highest one delivered ([`loss`](super::loss)).
#[inline(always)]
fn deliver(
    ctx: &mut Context,
    d: &Decoded,
    under: Scaling,
    noted: bool,
    out: &mut Vec<u8>,
) -> Result<(bool, u16), DropReason> {
    if let Some(outer) = &ctx.outer {
        if !outer.wrap(out, d.outer_id) {
            return Err(DropReason::Malformed);
        }
    }
    let gap = d.fields.ip_id.wrapping_sub(ctx.high_ip_id);
    if (gap as i16) > 0 {
        ctx.high_ip_id = d.fields.ip_id;
    }
    commit(ctx, d, under, noted);
    ctx.trust();
    Ok((ctx.behaviour == Behaviour::Sequential, gap))
}

/// Commits the verified packet `d` to `ctx` (spec section 5.7, step 6): it becomes the
/// reference unless it is older, and a note's scaling (`noted`) with it; guessed strides
/// (`under` without a note) are kept whatever.
fn commit(ctx: &mut Context, d: &Decoded, under: Scaling, noted: bool) {
    let takes = takes_over(d, (ctx.next, ctx.reference.ack));
    if takes || !noted {
        (ctx.strides, ctx.behaviour) = (under.strides, under.behaviour);
    }
    // Only a context without strides guesses one: a strided one spares the watch.
    if ctx.strides == Strides::default() {
        ctx.learner.observe(d.payload, d.fields.ack, ctx.strides);
    }
    if takes {
        ctx.reference = d.fields;
        ctx.next = d.next;
        ctx.quotients = d.quotients;
        ctx.outer_ref = d.outer_id.wrapping_sub(d.fields.ip_id);
        ctx.last = d.trace();
    } else {
        // Its own IP-ID, the reference's numbers ([`stale::Trace`]), which the last trace
        // holds already.
        ctx.last.ip_id = d.fields.ip_id;
    }
}

/// Whether the verified packet `d` becomes a context's reference (spec section 5.7, step 6):
/// unless it is older, by next sequence number and then acknowledgment number. (A pure ACK and
/// a segment with the same sequence and acknowledgment numbers: the segment is the newer, in
/// whichever order they arrive; the compressor's window keeps next sequence numbers to match.)
/// `reference` is the reference's next sequence number and acknowledgment number.
pub(super) fn takes_over(d: &Decoded, (next, ack): (u32, u32)) -> bool {
    !is_older(d.next, d.fields.ack, next, ack)
}
