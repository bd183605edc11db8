//! Strides a context lacks: a CO frame that failed against a context without strides is
//! decoded again with the strides its delivered packets suggest, or, with none delivered to
//! guess from, the strides the frame suggests by itself (format section 5.3).

use alloc::vec::Vec;

use taroc_wire::tcp::{self, SackBlocks};

use crate::plus::ack::Extension;
use crate::plus::co::{Checks, CoBits, Shape, Tail};
use crate::plus::scaled::{self, Strides};
use crate::tcp::packet::{canonical_options, MAX_OPTIONS};

use super::co::{decode_body, Decoded};
use super::Context;

/// A CO frame that failed against a context without strides, decoded again with the strides
/// the context's delivered packets suggest ([`scaled::Learner::guess`]), which are adopted if
/// the packet verifies, as any other is verified (the TCP checksum and the seal). The
/// compressor learns a stride from the same packets and sends it in IR frames; when all of
/// those are lost, its scaled CO frames fail against the context without it until a context
/// request is answered. `None` (the context unchanged) if there is no guess or the packet does
/// not verify.
///
/// A context that delivered nothing to guess from (its IR frames after the handshake all lost)
/// tries the strides the frame suggests by itself ([`frame_strides`]). That decoding counts as
/// a trial: held until the next frame verifies against it.
pub(super) fn guess_stride(
    ctx: &mut Context,
    k: u8,
    x: Extension,
    rest: &[u8],
    out: &mut Vec<u8>,
) -> Option<Decoded> {
    if ctx.strides != Strides::default() {
        return None;
    }
    let (strides, trial) = match ctx.learner.guess() {
        Some(strides) => (strides, false),
        None => (frame_strides(ctx, k, x, rest)?, true),
    };
    ctx.strides = strides;
    let decoded = decode_body(ctx, k, x, rest, out).ok();
    if decoded.is_none() {
        ctx.strides = Strides::default();
    }
    decoded.map(|d| Decoded { trial, ..d })
}

/// The packet size a stride guessed without a delivered packet fills: Ethernet's MTU, the
/// usual largest packet of a bulk flow.
const USUAL_PACKET: usize = 1500;

/// The strides a CO frame suggests by itself to a context with none: a frame with a payload of
/// at least [`scaled::MIN_STRIDE`] octets its payload's length as the sequence stride (a bulk
/// flow's segments, all of one size); any other the acknowledgment stride of a segment that
/// fills a [`USUAL_PACKET`] under the context's own header (the ACKs of such a flow the other
/// way, whose headers are the size of theirs). The frame's layout depends only on whether the
/// context has a stride, not on its value.
fn frame_strides(ctx: &Context, k: u8, x: Extension, rest: &[u8]) -> Option<Strides> {
    let (_, rest) = Checks::parse(&x, rest).ok()?;
    let shape = Shape {
        strides: Strides { seq: 1, ack: 0 },
        behaviour: ctx.behaviour,
        ts: ctx.identity.ts,
        outer: ctx.outer_predictor.map(|predictor| predictor.layout()),
    };
    let at = CoBits::parse(&shape, k, &x, rest).ok()?.octets;
    let (_, payload) = Tail::parse(x.flags, rest.get(at..)?).ok()?;
    let stride = |len: usize| {
        u16::try_from(len)
            .ok()
            .filter(|&s| u32::from(s) >= scaled::MIN_STRIDE)
    };
    match stride(payload.len()) {
        Some(seq) => Some(Strides { seq, ack: 0 }),
        None => {
            // The context's packets as rebuilt: its template (the IP headers and the ports),
            // the rest of the TCP header and the canonical options without SACK blocks.
            let mut options = [0; MAX_OPTIONS];
            let ts = ctx.identity.ts.then_some((0, 0));
            let options = canonical_options(ts, &SackBlocks::default(), &mut options)?;
            let header = ctx.identity.template.len() - 4 + tcp::MIN_HEADER_LEN + options;
            let ack = stride(USUAL_PACKET.checked_sub(header)?)?;
            Some(Strides { seq: 0, ack })
        }
    }
}
