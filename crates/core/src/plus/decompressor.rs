//! The `taroc-plus` decompressor: IR frames set a context up; CO frames are rebuilt against the
//! context's reference, verified with the TCP checksum, delivered, and only then committed as
//! the new reference.

use alloc::vec::Vec;
use core::time::Duration;

use super::cids;
use super::compressor::MIN_WINDOW_PACKETS;
use super::format;
use super::ipid::Behaviour;
use super::ir_r;
use super::late::LatePackets;
use super::mirror::{self, Mirrors, Outbox};
use super::numbers::Numbers;
use super::other::{self, OtherDecompressor};
use super::outer::{Outer, Predictor};
use super::receipt::Receipts;
use super::scaled::{Learner, Strides};
use super::stale::Trace;
use super::window::Scaling;
use super::PlusConfig;
use crate::codec::{Decompressor, DropReason, FrameKind};
use crate::tcp::context::{Identity, ALL_CIDS};
use crate::tcp::packet::{self, FlowKey};
use crate::tcp::repair::Requests;

mod co;
mod guess;
mod held;
mod ir;
mod kept;
mod loss;
mod quotients;
mod reach;
mod tunnel;

use held::HeldFrame;
use kept::Kept;
use loss::LossWatch;
use quotients::Quotients;
use reach::Reach;

/// The decompressor asks again for a context it keeps refusing frames of after this many more
/// refusals, whatever the time: 0, every refusal asks (one request frame names each CID once, and
/// goes only with the reverse direction's next packet). A lost request, or a lost answer, then
/// costs the next packet of the flow, not [`crate::tcp::repair::REQUEST_INTERVAL`] of them; a
/// clean link sends no request at all.
pub const REQUEST_EVERY_REFUSALS: u16 = 0;

/// A request names its context again in this many more request frames unless a frame of the
/// context is delivered first. Its users take request frames until there is none, so the copies
/// travel back to back, each meeting the link's loss on its own: at 50% loss a request and its
/// answer are each often lost, and each lost request would otherwise cost another refused frame.
/// Four, not two: on the many-flows capture over seeds 1-60, damage at 50% random loss 7.38 ->
/// 6.75 per 1000, bursty 16.13 -> 14.42; six gained 1% more.
pub const REQUEST_REPEATS: u8 = 4;

/// A context asked for is asked for again this many times, 100 ms after the request and then
/// at intervals that double (200, 400, 800 ms), until a frame of it is delivered: the request
/// and its copies go back to back, and a loss burst on the reverse link may take them all. On
/// the mixed capture (loss 10-50%, random and in bursts of 4 and 50, seeds 1-3) damage went
/// 7.7 -> 7.3 per 1000, on the many-flows capture 5.9 -> 5.5.
pub const REQUEST_REASKS: u8 = 4;

/// One context: its identity, coding state and the reference packet's fields.
#[derive(Debug, Clone)]
struct Context {
    identity: Identity,
    /// The outer header of a tunnelled flow ([`Outer`]), put in front of its CO frames'
    /// packets.
    outer: Option<Outer>,
    /// How an IPv4 outer header's Identification is predicted, set by the frame that set the
    /// context up: its CO frames code the outer Identification against it.
    outer_predictor: Option<Predictor>,
    /// The reference's outer offset `outer IP-ID - inner IP-ID` (a context under an IPv4 outer
    /// header): what a CO frame's 8 outer LSBs are decoded against.
    outer_ref: u16,
    /// [`super::seal::identity_hash`] of `identity` and `outer`.
    identity_hash: u32,
    key: FlowKey,
    v4: bool,
    behaviour: Behaviour,
    strides: Strides,
    reference: packet::Fields,
    /// The reference's next sequence number (its sequence number plus its payload's length,
    /// plus one for FIN): what a CO frame's sequence number is decoded against, and with the
    /// acknowledgment number the order of references (spec section 5.7).
    next: u32,
    /// The flow's last delivered packet (older ones, which do not become the reference, included):
    /// its IP-ID, next sequence number and acknowledgment number ([`stale`](crate::plus::stale)).
    last: Trace,
    /// The highest IP-ID (mod 2^16) the context delivered: a later one's step from it tells
    /// packets lost from packets that came late ([`loss`]).
    high_ip_id: u16,
    /// The reference's numbers over the strides, where a frame's decoding found them.
    quotients: Quotients,
    /// The delivered packets' segment sizes and ACK steps, watched as the compressor watches
    /// them while the context has no strides: a guess at a stride whose IR frames were all
    /// lost ([`Learner::guess`]).
    learner: Learner,
    /// Packets delivered since the context was set up, up to [`NUMBERS_NOTED`]: the first
    /// go to the sibling compressor with their numbers ([`super::numbers`]).
    delivered: u8,
    /// The context may have lost its reference (spec section 5.8): a CO frame of it was refused, or
    /// one verified whose packet jumped further than the compressor's window reaches
    /// ([`stale`](crate::plus::stale)). Until a frame is delivered, a CO frame without the check is
    /// not delivered on its own checksum: it is held, and delivered only if the next one verifies
    /// against it.
    suspect: bool,
    /// The packet held while suspect: the reference it would be.
    held: Option<Held>,
}

/// What a held packet would make of its context's reference (spec section 5.8).
#[derive(Debug, Clone, Copy)]
struct Held {
    reference: packet::Fields,
    next: u32,
    quotients: Quotients,
    outer_ref: u16,
    scaling: Scaling,
    last: Trace,
}

impl Context {
    /// The reference state, as a held packet would replace it.
    fn state(&self) -> Held {
        Held {
            reference: self.reference,
            next: self.next,
            quotients: self.quotients,
            outer_ref: self.outer_ref,
            scaling: Scaling {
                strides: self.strides,
                behaviour: self.behaviour,
            },
            last: self.last,
        }
    }

    /// Puts `state` in place of the reference state.
    fn restore(&mut self, state: &Held) {
        (self.reference, self.next) = (state.reference, state.next);
        (self.quotients, self.outer_ref) = (state.quotients, state.outer_ref);
        (self.strides, self.behaviour) = (state.scaling.strides, state.scaling.behaviour);
        self.last = state.last;
    }

    /// A context set up afresh by an IR frame: nothing held, nothing suspect.
    fn trust(&mut self) {
        (self.suspect, self.held) = (false, None);
    }
}

/// A context's first this many packets delivered go to the sibling compressor with their
/// numbers: a mirrored IR it sends may code its numbers against one of them (the far end's
/// compressor keeps twice as many of the packets it sent, see the compressor's).
const NUMBERS_NOTED: u8 = 32;

/// The `taroc-plus` decompressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct PlusDecompressor {
    contexts: Vec<Option<Context>>,
    requests: Requests,
    /// Context requests for the non-TCP contexts ([`other::REQUEST_N`]).
    other_requests: Requests,
    other: OtherDecompressor,
    tunnel: Vec<u8>,
    /// While a tunnel frame's inner frame is decoded: the outer header a context it sets up
    /// keeps, with its IPv4 Identification (`Some(None)` under an outer header that is not
    /// one, [`Outer`]).
    tunnel_outer: Option<Option<(Outer, u16)>>,
    /// The CID the last IR frame set up.
    installed: Option<u8>,
    /// The IR frame a compact IR stands for ([`super::compact::expand`]).
    compact: Vec<u8>,
    /// The short mirrored compact IR a packed IR stands for ([`super::packed::PackedIr::unpack`]).
    packed: Vec<u8>,
    /// When a loss note is due ([`loss`]).
    loss: LossWatch,
    /// Loss notes go to the sibling compressor ([`mirror::Note::Lossy`]), not to the far end:
    /// without context requests, nothing goes back over the link.
    loss_to_sibling: bool,
    /// The flows the sibling compressor holds ([`mirror`]): mirrored compact IRs name them.
    mirrors: Mirrors,
    /// The notes for the sibling compressor.
    outbox: Outbox,
    /// The IR receipts due ([`super::receipt`]).
    receipts: Receipts,
    /// The frame being decoded delivers a packet whose numbers go to the sibling compressor
    /// ([`super::numbers`]): a handshake segment, or a packet of a young context.
    numbers_due: bool,
    /// The flow and numbers of that packet (a tunnel frame's inner one), sent once the whole
    /// frame is delivered.
    numbers: Option<(FlowKey, Numbers)>,
    /// Without context requests, a CO frame without the check whose packet jumped by more than this
    /// many packets from the last delivered one is held ([`stale`](crate::plus::stale)): the fewest
    /// packets the compressor's window holds ([`MIN_WINDOW_PACKETS`]). With them, a refusal brings
    /// IR frames within a round trip, and a jump holds nothing.
    stale_gap: Option<u16>,
    /// The CO frame just decoded was held, not refused: it asks for nothing.
    held_now: bool,
    /// Each context's held packet ([`Context::held`]), as it would be delivered, with its
    /// frame's [`Reach`]: the frame that confirms it delivers it late.
    late: LatePackets<Reach>,
    /// Each context's held frame, to check its packet against the frame after it
    /// ([`Reach::back_checked`]).
    held_frames: Vec<HeldFrame>,
    /// The buffer that check decodes into.
    scratch: Vec<u8>,
    /// CO frames refused for want of a context or on their checksum, decoded late once a
    /// frame of the context is delivered ([`kept`]).
    kept: Kept,
    /// The CID of the CO frame just delivered.
    delivered_co: Option<u8>,
}

impl PlusDecompressor {
    /// A decompressor with no contexts. It accepts every 8-bit CID; of the configuration it
    /// uses only [`Repair::context_requests`](crate::tcp::repair::Repair::context_requests).
    pub fn new(config: PlusConfig) -> PlusDecompressor {
        PlusDecompressor {
            contexts: (0..ALL_CIDS).map(|_| None).collect(),
            requests: Requests::new(config.repair.context_requests)
                .every(REQUEST_EVERY_REFUSALS)
                .repeat(REQUEST_REPEATS)
                .reask(REQUEST_REASKS),
            other_requests: Requests::new(config.repair.context_requests)
                .every(REQUEST_EVERY_REFUSALS)
                .repeat(REQUEST_REPEATS)
                .reask(REQUEST_REASKS),
            other: OtherDecompressor::new(config.repair.context_requests),
            tunnel: Vec::new(),
            tunnel_outer: None,
            installed: None,
            compact: Vec::new(),
            packed: Vec::new(),
            loss: LossWatch::new(),
            loss_to_sibling: !config.repair.context_requests,
            mirrors: Mirrors::default(),
            outbox: Outbox::default(),
            receipts: Receipts::new(config.repair.context_requests),
            numbers_due: false,
            numbers: None,
            stale_gap: (!config.repair.context_requests).then_some(MIN_WINDOW_PACKETS as u16),
            held_now: false,
            late: LatePackets::default(),
            held_frames: (0..256).map(|_| HeldFrame::default()).collect(),
            scratch: Vec::new(),
            kept: Kept::default(),
            delivered_co: None,
        }
    }

    /// The reference fields of context `cid`, if it exists.
    pub fn reference_of(&self, cid: u8) -> Option<packet::Fields> {
        self.contexts[usize::from(cid)]
            .as_ref()
            .map(|c| c.reference)
    }

    /// Number of contexts held.
    pub fn context_count(&self) -> usize {
        self.contexts.iter().filter(|c| c.is_some()).count()
    }
}

/// The kind bytes of CO frames.
const CO_KINDS: core::ops::RangeInclusive<u8> = format::CO..=FrameKind::PROFILE_LAST;

impl PlusDecompressor {
    /// A packet of context `cid` was delivered: its numbers go to the sibling compressor if
    /// the context is young ([`NUMBERS_NOTED`]).
    #[inline(always)]
    fn count_delivered(&mut self, cid: u8) {
        if let Some(ctx) = self.contexts[usize::from(cid)].as_mut() {
            if ctx.delivered < NUMBERS_NOTED {
                ctx.delivered += 1;
                self.numbers_due = true;
            }
        }
    }

    /// Decodes one frame of kind `kind` into `out` ([`Decompressor::decompress`] without the
    /// numbers notes and receipts).
    fn decompress_frame(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        let result = match kind {
            FrameKind::Ip => crate::codec::deliver_unchanged(frame, out),
            FrameKind::Profile(format::IR) => self.ir(frame, out),
            FrameKind::Profile(format::PACKED_IR) => self.packed_ir(frame, out),
            FrameKind::Profile(format::COMPACT_IR) => self.compact_ir(frame, out),
            FrameKind::Profile(
                k @ (format::IR_R | format::IR_R_SOURCE_KEPT | format::IR_R_DEST_KEPT),
            ) => {
                let mode = ir_r::mode(k).expect("an IR-R kind byte");
                let (cid, result) = self.ir_r(frame, mode, out);
                if let Some(cid) = cid {
                    self.requests.record(cid, &result);
                }
                result
            }
            FrameKind::Profile(format::IR_S) => self.ir_s(frame, out),
            FrameKind::Profile(format::COMPACT_SYN) => self.compact_syn(frame, out),
            FrameKind::Profile(other::IR_N) => {
                let result = self.other.ir_n(frame, out);
                match result {
                    Ok(cid) => self.other_requests.delivered(cid),
                    // A replica refused (its base missing here, or another flow's): its
                    // context answers with a whole IR-N.
                    Err(_) => {
                        if let Some(cid) = other::replica_cid(frame) {
                            self.other_requests.refused(cid);
                        }
                    }
                }
                result.map(drop)
            }
            FrameKind::Profile(other::TUNNEL) => self.tunnel(frame, out),
            FrameKind::Profile(k @ other::CO_N..=other::CO_N_LAST) => {
                let result = self.other.co_n(k, frame, out);
                // A frame held for confirmation is no sign of a damaged context: no request.
                if let Some(cid) = other::cid_of(k, frame).filter(|_| !self.other.held()) {
                    self.other_requests.record(cid, &result);
                }
                // An RTP sequence number that skipped, or a frame held (it decoded by trial),
                // is a loss the loss notes count.
                if self.other.held() {
                    self.loss.delivered(true, 2);
                } else if let Some(advance) = self.other.rtp_advance() {
                    self.loss.delivered(true, advance);
                }
                result
            }
            FrameKind::Profile(k) if k >= cids::PREFIX => {
                // A CO kind byte, or a kind byte that names a CID (1 to cids::PREFIX_CIDS) and a
                // CO kind byte.
                let (cid, result) = if k >= format::CO {
                    self.co(k, None, frame, out)
                } else {
                    match cids::read(k, frame) {
                        Some((cid, k, at)) => self.co(k, Some(cid), &frame[at..], out),
                        None => (None, Err(DropReason::Malformed)),
                    }
                };
                if let Some(cid) = cid {
                    let held = core::mem::take(&mut self.held_now);
                    let stale = held || result == Err(DropReason::ChecksumMismatch);
                    if self.loss_to_sibling && stale {
                        self.loss.burst();
                    }
                    // A held frame asks for nothing: the next one may confirm it.
                    if !held {
                        self.requests.record(cid, &result);
                        let damage = result.is_err_and(|r| r.is_context_damage());
                        if self.loss_to_sibling && damage {
                            self.loss.refused();
                        }
                    }
                    self.receipts.co(cid);
                    if result.is_ok() {
                        self.count_delivered(cid);
                        self.delivered_co = Some(cid);
                    }
                }
                result
            }
            _ => Err(DropReason::UnknownKind),
        };
        if result.is_err() {
            out.clear();
        }
        result
    }
}

// The kind bytes that name a CID follow the tunnel frame's.
const _: () = assert!(cids::PREFIX == other::TUNNEL + 1);

impl Decompressor for PlusDecompressor {
    /// Decodes one frame; the numbers of its packet (a tunnel frame's inner packet, once the
    /// whole frame is delivered) go to the sibling compressor if they are due
    /// ([`super::numbers`]), and a frame that set a context up again (not a tunnel's inner frame
    /// alone: its outer header may still fail) gets a receipt ([`super::receipt`]).
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        let outermost = self.tunnel_outer.is_none();
        if outermost {
            self.late.forget();
            self.kept.forget_due();
            (self.installed, self.delivered_co) = (None, None);
            self.other.forget_late();
            self.receipts.begin();
            self.numbers = None;
        }
        self.numbers_due = false;
        let result = self.decompress_frame(kind, frame, out);
        // A tunnel frame's inner packet, or a plain one (a tunnel frame's whole packet is none).
        if result.is_ok() && self.numbers_due {
            self.numbers = Numbers::of_packet(out).or(self.numbers);
        }
        if outermost {
            self.receipts.end(result.is_ok());
            if let (Ok(()), Some((flow, numbers))) = (&result, self.numbers.take()) {
                self.outbox.numbers(mirror::flow_hash(&flow), numbers);
            }
            match (&result, self.installed.or(self.delivered_co)) {
                (Ok(()), Some(cid)) if self.kept.holds(cid) => self.decode_kept(cid),
                _ => {}
            }
        }
        result
    }

    /// The held packet the last frame confirmed, of a TCP context (spec section 5.8) or
    /// another ([`OtherDecompressor::take_late`]), after the packets of kept frames the frame
    /// confirmed, the oldest first (format section 5.9).
    fn take_late(&mut self, out: &mut Vec<u8>) -> Option<DropReason> {
        if let Some(reason) = self.kept.take(out) {
            return Some(reason);
        }
        (self.late.take(out) || self.other.take_late(out)).then_some(DropReason::Held)
    }

    fn set_time(&mut self, now: Duration) {
        self.requests.set_time(now);
        self.other_requests.set_time(now);
        self.other.set_time(now);
    }

    /// Context requests ([`crate::tcp::repair`]), when they are on: the TCP contexts' first,
    /// then the non-TCP contexts' ([`other::REQUEST_N`]), then pair notes
    /// ([`other::PAIR_NOTE`]), then loss notes, then IR receipts
    /// ([`super::receipt`]; none for a while after a request or a loss note).
    fn take_feedback(&mut self, out: &mut Vec<u8>) -> bool {
        if self.requests.take(out) {
            self.receipts.lossy();
            return true;
        }
        if self.other_requests.take(out) {
            out[0] = other::REQUEST_N;
            return true;
        }
        if self.other.take_pair_note(out) {
            return true;
        }
        if !self.loss_to_sibling && self.loss.take(out) {
            self.receipts.lossy();
            return true;
        }
        self.receipts.take(out)
    }

    /// Without context requests, a loss note first ([`mirror::Note::Lossy`]); then the flows of
    /// the contexts set up or dropped, and the handshake segments, since the last note
    /// ([`super::mirror`]).
    fn take_sibling_note(&mut self, out: &mut Vec<u8>) -> bool {
        if self.loss_to_sibling && self.loss.take(out) {
            mirror::put_note(&mirror::Note::Lossy, out);
            return true;
        }
        if self.loss_to_sibling && self.loss.take_burst() {
            mirror::put_note(&mirror::Note::Bursty, out);
            return true;
        }
        let contexts = &self.contexts;
        let flow_of = |cid: u8| contexts.get(usize::from(cid))?.as_ref().map(|c| c.key);
        self.outbox.take(flow_of, out)
    }

    fn sibling_note(&mut self, note: &[u8]) {
        self.mirrors.hear(note);
    }
}

#[cfg(test)]
mod tests;
