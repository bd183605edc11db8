//! The `taroc-plus` compressor: per-flow contexts, IR frames to set a context up (twice, so
//! one loss does not cost the next packets), CO frames coded against the window.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::time::Duration;

use super::breakdown::Breakdown;
use super::cids;
use super::compact;
use super::format::{self};
use super::handshake;
use super::ipid::{Behaviour, Detector};
use super::mirror::{self, Mirrors, Outbox};
use super::numbers::Numbers;
use super::other::{self, OtherCompressor};
use super::outer::{Outer, Predictors};
use super::receipt::Issued;
use super::scaled::{Learner, Strides};
use super::stale::Recent;
use super::window::{self, DerivedColumns, Scaler, Scaling};
use super::{PlusConfig, PlusStats};
use crate::codec::{Compressor, FrameKind};
use crate::tcp::context::{Identity, ALL_CIDS};
use crate::tcp::cwnd::{AckTracker, SeqTracker};
use crate::tcp::packet::{FlowKey, TcpIpPacket};
use crate::tcp::repair::{LinkLoss, Watch};
use crate::tcp::stats::{Part, Why};
use crate::tcp::vsw::Vsw;

mod bases;
mod co;
mod feedback;
mod handshakes;
mod ir;
mod packet;
pub(super) mod starts;
mod table;
mod tunnel;

/// The CIDs a new context takes first (0 to 31), reusing those of flows that are over before
/// taking higher ones: CO frames name them in at most one octet besides the kind byte
/// ([`cids`]). CID 32, which a CID prefix names too, is left out: taking it as well made the
/// shared and twin many-flows captures (f) 72 and 132 octets longer.
const CHEAP_CIDS: usize = cids::PREFIX_CIDS as usize;

/// A start's IR frames go as full IRs, not IR-Rs, when the base has sent fewer CO frames than
/// this since its last IR frame: a base that young may be one whose own start, or restart (a
/// stride learnt), was lost with no request back yet (flows starting together, with nothing
/// coming the other way to carry a request, each took the last as its base). For the last IR
/// frame of a start only, over seeds 1-60, damage at 20 / 50% random loss on the twin
/// many-flows capture went 0.972 / 7.133 -> 0.766 / 6.189 per 1000; for every one (seeds 1-60,
/// with loss notes sent thrice), 0.421 / 1.001 / 5.966 -> 0.331 / 0.772 / 5.134 at 20 / 30 /
/// 50%, the shared one's 0.333 / 2.379 -> 0.274 / 2.242 at 30 / 50%. On a clean link, against
/// no such rule, it costs 0.76 octets per packet on the unseen many-flows capture (40 short
/// connections), 0.20 on the twin one, 0.11 on e, 0.05 on h, 0.01 on the shared f, nothing on
/// the others. (Only on a lossy link, free on a clean one, it gained next to nothing: the
/// starts it saves come before the link is known to lose frames.)
const YOUNG_BASE: u32 = 8;

/// A change of a context's strides or behaviour goes first in an IR frame (the rest in
/// scaling notes, [`crate::plus::note`]) when the context has sent fewer CO frames than this
/// since its last IR frame: its start has only just ended, and if all of that start's IR
/// frames were lost, this one sets the context up before a request could come back. Over
/// seeds 1-60 on the twin many-flows capture, damage at 20 / 30 / 50% random loss per 1000:
/// with notes alone 0.461 / 1.230 / 7.797, with this IR 0.180 / 0.406 / 4.982 (three IRs, as
/// before notes: 0.175 / 0.349 / 3.862); it costs 0.15 octets per packet on that capture, 0.03
/// on the unseen one, nothing on the unseen IPv6 bulk capture d (whose stride is learnt
/// within its start).
const YOUNG_CHANGE_CO_RUN: u32 = 2;

/// The link loses frames if a context request or a loss note
/// ([`format::LOSS_NOTE`]) came in the compressor's last this many TCP packets; neither comes on
/// a clean link (a note needs IP-IDs skipping often), which never pays
/// [`LOSSY_START_REPEATS`](starts::LOSSY_START_REPEATS).
pub(crate) const LOSSY_MEMORY: u64 = 4096;

/// IR frames that answer a context request. Five, not a start's three: on the many-flows
/// capture over seeds 1-60, damage at 50% random loss 8.19 -> 7.38 per 1000 (-10%), bursty
/// 17.97 -> 16.13; six and eight gained 1% more each.
const ANSWER_IRS: u8 = 5;

/// Most entries of a context's window (VSW), whatever the tracked congestion window: the
/// decompressor loses its reference only if it misses this many packets of the flow in a row.
/// Slow flows (interactive, request/response) then code against their last packets, not
/// against seconds of them.
pub const MAX_WINDOW_PACKETS: usize = 16;

/// Fewest entries of a context's window: however small the tracked congestion window, the
/// decompressor keeps a reference unless it misses this many packets of the flow in a row,
/// which the next packet's jump shows without context requests ([`stale`](super::stale)). (Sixteen without
/// requests, so that a jump always meant a lost reference, cost slow flows up to 1.1 octets
/// per packet on a clean link.)
pub const MIN_WINDOW_PACKETS: usize = 8;

/// Without context requests, a context sends a *wide* CO frame (coded against its horizon
/// too, spec section 7) once it has sent this many CO frames since its last IR or wide frame:
/// it sets the reference again of a decompressor that lost its own, which otherwise waited for
/// the periodic refresh. Pooled over the shared, unseen and twin captures (seeds 1-5), with
/// the check and the held frames of spec section 5.8, damage at 10% loss in bursts of mean 4 /
/// 50 went from 36.7 / 159.1 to 16.0 / 66.4 per 1000 intact frames, for 0.03 to 0.18 octets
/// per packet more on a clean link (every 16 CO frames or 10 s, with a window of at least 16
/// packets: 12.1 / 51.2, for up to 0.27 octets).
pub const WIDE_EVERY_PACKETS: u32 = 28;

/// On a link known to lose frames (a loss note, or a sibling's, came in lately), a context
/// sends a wide frame once it has sent this many CO frames since its last IR or wide frame,
/// instead of [`WIDE_EVERY_PACKETS`]. Pooled over the shared, unseen and twin captures, seeds
/// 6-25, damage per 1000 intact frames in bursts of mean 50 at 10 / 30 / 50% loss went 25.3 /
/// 77.7 / 164.3 -> 22.0 / 63.6 / 123.5 (every 8: 22.1 / 63.8 / 119.8; every 5 did worse in
/// bursts of mean 4). Nothing on a clean link. After a burst note too (which a link losing
/// long bursts makes where it seldom makes a loss note): pooled over seeds 1-25, in bursts of
/// mean 50 at 10 / 20 / 30 / 50% loss 16.4 / 25.7 / 43.1 / 104.6 -> 15.3 / 22.6 / 40.2 / 99.2,
/// no row worse by more than 2.2% (20% random loss, 0.078 -> 0.080), for up to 0.08 octets per
/// packet more on bursty links.
pub const WIDE_EVERY_LOSSY: u32 = 12;

/// … or once this long has passed since its last IR or wide frame (every 5 s, an earlier form
/// of wide frames cost the twin interactive capture e 0.58 octets per packet).
pub const WIDE_INTERVAL: Duration = Duration::from_secs(20);

/// Without context requests, the wide frames after a change of a context's strides or IP-ID
/// behaviour carry a scaling note, this many of them: a decompressor that lost every IR frame
/// of the restart learns the new scaling from the first that arrives. A reference receipt
/// that shows the far end holding the new scaling ([`Context::scaled_from`]) drops the notes
/// still due: on a clean link (24 of the 242 clean `taroc-plus-u` rows of the figures moved,
/// all down) 0.04 to 0.06 octets per packet less on the unseen captures a to d and g, up to
/// 0.03 on the others; damage under loss as before.
const WIDE_NOTES: u8 = 4;

/// A context's *horizon* (the second window of a wide frame) keeps one packet in this many,
/// and every packet sent in an IR frame (the reference of a decompressor whose restart was
/// lost: without them, damage at 10% loss in bursts of mean 4 was 20.5 per 1000)…
pub const HORIZON_STEP: u32 = 8;

/// … and this many of them: a wide frame decodes against every packet of about the last
/// `HORIZON_STEP * HORIZON_PACKETS` (128) but for the few between samples that no other packet
/// of either window brackets. Pooled over the shared, unseen and twin captures (seeds 1-5),
/// one packet in 8 instead of 4 took damage per 1000 in bursts of mean 50 at 10 / 20 / 30% from
/// 40.0 / 136.6 / 251.1 to 12.4 / 59.1 / 126.7, and at 50% in bursts of mean 4 from 78.6 to
/// 50.2, for at most 0.07 octets per packet more on a clean link; one in 16 took the bursts of
/// mean 50 to 12.3 / 36.3 / 72.5 but cost 0.25 octets on the bulk captures.
pub const HORIZON_PACKETS: usize = 16;

/// Entries a full window keeps because they are the newest in sequence order: the
/// decompressor's reference is the newest packet it verified, so a run of retransmissions (Linux
/// BBR sends dozens in a row at 1e-4 on a long link) must not push those out of the window
/// unless the decompressor lost all of them.
pub const PROTECTED_PACKETS: usize = 4;

/// One flow's compression context.
#[derive(Debug, Clone)]
struct Context {
    key: FlowKey,
    /// [`mirror::flow_hash`] of `key`.
    flow_hash: u16,
    identity: Identity,
    /// The outer header of a tunnelled flow ([`Outer`]): its IR frames go in tunnel frames,
    /// its CO frames plain.
    outer: Option<Outer>,
    /// The predictors of an IPv4 outer header's Identification that its IR frames set at the
    /// decompressor ([`Predictors`]).
    predictors: Predictors,
    /// [`seal::identity_hash`](crate::plus::seal::identity_hash) of `identity` and `outer`.
    identity_hash: u32,
    behaviour: Behaviour,
    detector: Detector,
    strides: Strides,
    learner: Learner,
    /// The window; each entry's extra is derived by `scaler`.
    vsw: Vsw<DerivedColumns>,
    /// The scaler of `strides` and `behaviour` ([`Context::rescale`]).
    scaler: Scaler,
    seq: SeqTracker,
    ack: AckTracker,
    last_used: u64,
    /// The compressor's TCP packet count when the context was made.
    created: u64,
    /// CO frames sent since the context's last IR frame or context request: the more, the
    /// surer the decompressor holds the context (else, with feedback, it would have asked).
    co_run: u32,
    /// IR frames still due before CO frames.
    irs_due: u8,
    /// Frames still due to carry the strides and behaviour, changed since the last IR frame
    /// ([`note`](crate::plus::note)): CO frames carry a note, IR frames carry them anyway.
    notes_due: u8,
    /// How many replications the decompressor's copy of the context rests on: 0 after a full
    /// IR frame, one more than its base's after an IR-R frame.
    depth: u8,
    /// The flow sent a FIN.
    fin: bool,
    /// The IR frames due answer a context request: full, never replicated (the decompressor
    /// may lack the base, or have lost the IR-Rs).
    full_only: bool,
    /// The IR frames a reference receipt may name ([`crate::plus::receipt`]): those sent since
    /// the context last (re)started or changed its scaling.
    issued: Issued,
    /// The packets whose numbers went to the sibling decompressor ([`mirror`]), up to
    /// [`NUMBERS_NOTED`].
    numbers_noted: u8,
    /// The context's last packets: a CO frame that jumped from one of them carries the check
    /// ([`stale`](crate::plus::stale)).
    recent: Recent,
    /// The context's last IR frame that was not a start's (a refresh, a repair) went
    /// mirrored: the next goes unmirrored. A mirror resolves at the far end only while its
    /// compressor sends the mirror's flow; after that compressor restarts, a receiver that
    /// sends nothing on the flow until it hears from it would leave every mirrored refresh
    /// refused, where an unmirrored one sets the context up.
    repair_mirrored: bool,
    /// The start's spread IR frames still to come ([`PlusCompressor::spreads`]), the
    /// [`LATE_SPREADS`](starts::LATE_SPREADS) last.
    spread_due: u8,
    /// A reference receipt named a packet of the context's window or one of its IR frames:
    /// the far end holds the context, and the start's late spread IR frames are not needed.
    held_far: bool,
    /// CO frames sent since the last IR or wide frame ([`WIDE_EVERY_PACKETS`]).
    since_wide: u32,
    /// When the last IR or wide frame went ([`WIDE_INTERVAL`]).
    wide_at: Duration,
    /// The horizon: packets sampled, one in [`HORIZON_STEP`], that a wide frame decodes
    /// against besides the window's (without context requests only). A reference receipt
    /// naming a packet of the window drops the samples older than it: on a clean link up to
    /// 0.07 octets per packet less (the many-flows captures), and every shared, unseen and
    /// twin capture within +0.2 of `taroc-plus-u` before wide frames.
    horizon: Vsw<DerivedColumns>,
    /// Packets sent since the last one the horizon took.
    since_sample: u32,
    /// Wide frames still due to carry a scaling note ([`WIDE_NOTES`]).
    wide_notes: u8,
    /// The next sequence number and acknowledgment number of the context's first packet under
    /// its current scaling: a receipt naming that packet or a newer one shows the far end
    /// holding the scaling, and the wide frames' notes are not needed.
    scaled_from: (u32, u32),
    watch: Watch,
    /// What its last frames needed, on a link known to lose bursts ([`co::Floor`]).
    floor: co::Floor,
}

/// A context's first this many packets go to the sibling decompressor with their numbers
/// ([`crate::plus::numbers`]): a mirrored IR of the far end names one of them as its reference.
/// The far end's compressor codes against the packets its decompressor delivered among the
/// last [`mirror::NUMBERS_FRESH`] of its notes, so twice that many cover a link that loses
/// half of them.
const NUMBERS_NOTED: u8 = 64;

/// A context that sent a FIN and then nothing for this many of the compressor's TCP packets
/// is over: its CID may go to a new flow.
const IDLE_AFTER_FIN: u64 = 16;

/// A context that sent nothing for this many of the compressor's TCP packets is over.
const IDLE: u64 = 1024;

/// Slots of [`PlusCompressor`]'s cache of recent flows in front of its map of flows (a power
/// of two).
const RECENT_FLOWS: usize = 64;

/// The slot of flow `key` in the cache of recent flows: a multiplicative hash of its ports
/// (flows of one host pair differ in their ports, often by steps of two).
#[inline]
fn flow_slot(key: &FlowKey) -> usize {
    let ports = u32::from(key.src_port) << 16 | u32::from(key.dst_port);
    (ports.wrapping_mul(0x9E37_79B1) >> (32 - RECENT_FLOWS.trailing_zeros())) as usize
}

impl Context {
    /// Brings the scaler (and the window's extras) up to date with the strides and the IP-ID
    /// behaviour, if they changed.
    fn rescale(&mut self) {
        let scaling = Scaling {
            strides: self.strides,
            behaviour: self.behaviour,
        };
        if self.scaler.scaling() != scaling {
            let scaler = Scaler::new(scaling);
            window::rescale(&mut self.vsw, &scaler);
            window::rescale(&mut self.horizon, &scaler);
            self.scaler = scaler;
        }
    }

    /// A receipt ([`crate::plus::receipt`]) says the far end holds the context as its IR frames
    /// set it up: the start's (or a request's answer's) other IR frames and scaling notes are
    /// not needed.
    fn end_start(&mut self) {
        (self.irs_due, self.notes_due, self.full_only) = (0, 0, false);
    }

    /// Whether the flow looks over at `clock` (see [`IDLE_AFTER_FIN`], [`IDLE`]).
    fn is_over(&self, clock: u64) -> bool {
        let idle = clock.saturating_sub(self.last_used);
        idle >= IDLE || (self.fin && idle >= IDLE_AFTER_FIN)
    }

    /// W = K * the larger tracked window share (TAROC's bound of the VSW), bytes.
    fn window(&self, k: u32) -> u32 {
        self.seq
            .estimate()
            .window_share()
            .max(self.ack.estimate().window_share())
            .saturating_mul(k)
    }
}

/// The `taroc-plus` compressor for one direction of a link.
#[derive(Debug)]
pub struct PlusCompressor {
    config: PlusConfig,
    /// Boxed: a context leaves the table while a packet is coded in it, and moving a pointer
    /// is cheaper than moving the context.
    contexts: Vec<Option<Box<Context>>>,
    by_flow: BTreeMap<FlowKey, u8>,
    /// The flow and CID of the last packet, if `by_flow` still maps them so: packets of one
    /// flow come in runs, and this spares most of them the map lookup.
    last_flow: Option<(FlowKey, u8)>,
    /// Recent flows and their CIDs, each in the slot of its ports ([`flow_slot`]), while
    /// `by_flow` still maps them so: the packets of many flows come interleaved, and this
    /// spares most of them the map lookup when the last packet's flow is another.
    recent_flows: [Option<(FlowKey, u8)>; RECENT_FLOWS],
    /// The emptied windows of the last context that left the table, for the next new one.
    spare_windows: Option<(Vsw<DerivedColumns>, Vsw<DerivedColumns>)>,
    clock: u64,
    /// `clock` when the last context request for a TCP context or loss note came in.
    lossy_at: Option<u64>,
    /// `clock` when the sibling decompressor last told of a burst ([`mirror::Note::Bursty`]).
    bursty_at: Option<u64>,
    now: Duration,
    stats: PlusStats,
    breakdown: Breakdown,
    other: OtherCompressor,
    tunnel: Vec<u8>,
    /// Where an IR frame goes while its compact form is written ([`super::compact`]).
    compact: Vec<u8>,
    /// A mirrored compact IR, while it is weighed against an IR-R ([`super::mirror`]).
    mirrored: Vec<u8>,
    /// The flows the sibling decompressor verified ([`super::mirror`]): a new flow that is the
    /// reverse of one of them names it in its IR frames.
    mirrors: Mirrors,
    /// The notes for the sibling decompressor.
    outbox: Outbox,
    /// The handshake segments lately coded against a base.
    handshakes: handshakes::Handshakes,
}

impl PlusCompressor {
    /// A compressor with no contexts. Of `config` it uses K, the MSS and ISSTHRESH of the
    /// window tracking, the context and window limits, and the repairs
    /// ([`PlusConfig::repair`]); its coding is its own.
    pub fn new(config: PlusConfig) -> PlusCompressor {
        let n = config.max_contexts.clamp(1, ALL_CIDS);
        let requests = config.repair.context_requests;
        let declared_lossy = config.link_loss != LinkLoss::Unseen;
        PlusCompressor {
            config,
            contexts: (0..n).map(|_| None).collect(),
            by_flow: BTreeMap::new(),
            last_flow: None,
            recent_flows: [None; RECENT_FLOWS],
            spare_windows: None,
            clock: 0,
            lossy_at: None,
            bursty_at: None,
            now: Duration::ZERO,
            stats: PlusStats::default(),
            breakdown: Breakdown::default(),
            other: OtherCompressor::new(requests, declared_lossy),
            tunnel: Vec::new(),
            compact: Vec::new(),
            mirrored: Vec::new(),
            mirrors: Mirrors::default(),
            outbox: Outbox::default(),
            handshakes: handshakes::Handshakes::default(),
        }
    }

    /// What the compressor has sent so far, and why.
    pub fn stats(&self) -> &PlusStats {
        &self.stats
    }

    /// Where the bits of its CO headers went, per field.
    pub fn breakdown(&self) -> &Breakdown {
        &self.breakdown
    }
}

impl Compressor for PlusCompressor {
    fn set_time(&mut self, now: Duration) {
        self.now = self.now.max(now);
    }

    /// Answers context requests ([`crate::tcp::repair`]): each named context's next packets go
    /// IR (a TCP context's, type `0x01`) or IR-N (a non-TCP context's, [`other::REQUEST_N`]).
    /// Ignored unless [`Repair::context_requests`](crate::tcp::repair::Repair::context_requests)
    /// is on. Takes loss notes too (spec section 7).
    fn handle_feedback(&mut self, frame: &[u8]) {
        self.feedback(frame);
    }

    /// The flows of the contexts set up or dropped, and the handshake segments, since the last
    /// note ([`super::mirror`]).
    fn take_sibling_note(&mut self, out: &mut Vec<u8>) -> bool {
        let contexts = &self.contexts;
        let flow_of = |cid: u8| contexts.get(usize::from(cid))?.as_ref().map(|c| c.key);
        self.outbox.take(flow_of, out)
    }

    fn sibling_note(&mut self, note: &[u8]) {
        match mirror::parse_note(note) {
            Some(mirror::Note::Referenced(hash, checksum, next_seq, ack)) => {
                self.referenced(hash, checksum, next_seq, ack)
            }
            Some(mirror::Note::Lossy) => self.sibling_saw_loss(),
            Some(mirror::Note::Bursty) => self.sibling_saw_burst(),
            Some(other) => self.mirrors.hear_note(other),
            None => {}
        }
    }

    /// The non-TCP contexts count on context requests only while the far end is heard from
    /// ([`other::OtherCompressor::heard`]).
    fn heard_far_end(&mut self) {
        self.other.heard();
    }

    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        out.clear();
        let Some(p) = TcpIpPacket::parse(packet) else {
            if let Some(kind) = self.compress_handshake(packet, out) {
                return kind;
            }
            if let Some(kind) = self.compress_tunnel(packet, out) {
                return kind;
            }
            if let Some(kind) = self.other.compress(packet, out, true) {
                let ir = kind == FrameKind::Profile(other::IR_N);
                self.stats.count(if ir {
                    Why::NoReference
                } else {
                    Why::Compressed
                });
                return kind;
            }
            out.extend_from_slice(packet);
            self.stats.count(Why::NotCompressible);
            return FrameKind::Ip;
        };
        self.compress_tcp(&p, None, 0, out)
    }
}

impl PlusCompressor {
    /// Compresses a TCP/IP packet in its flow's context (of a tunnelled flow if `outer`, whose
    /// IPv4 Identification is `outer_id`).
    fn compress_tcp(
        &mut self,
        p: &TcpIpPacket<'_>,
        outer: Option<&Outer>,
        outer_id: u16,
        out: &mut Vec<u8>,
    ) -> FrameKind {
        self.clock += 1;
        let cid = self.context_for(p, outer);
        // Out of the table while it is worked on, so that an IR-R can read another context.
        let mut ctx = self.contexts[usize::from(cid)]
            .take()
            .expect("context_for installs a context");
        let kind = self.compress_in(&mut ctx, cid, p, outer_id, out);
        self.contexts[usize::from(cid)] = Some(ctx);
        kind
    }

    /// A SYN, SYN-ACK or RST between hosts that have a context goes IR-S, coded against that
    /// context ([`handshake`]); without one, a compact SYN ([`compact`]) if that is shorter.
    /// A segment sent again goes without a base ([`handshakes`]). `None` if the packet is not
    /// such a segment or neither frame can carry it.
    fn compress_handshake(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Option<FrameKind> {
        let p = handshake::parse(packet)?;
        let again = self.handshakes.sent_before(&p);
        let on_base = !again
            && self.handshake_base(&p).is_some_and(|(cid, base)| {
                let base_cid = handshake::Base::Context(cid);
                handshake::write(&p, &base.identity.template, base_cid, None, out)
            });
        // Against a mirror too, if it has one: with mirror numbers that is often shorter.
        let mut mirrored = core::mem::take(&mut self.compact);
        let on_mirror = !again
            && self
                .mirrors
                .find(&p.key)
                .is_some_and(|m| self.write_mirrored_ir_s(&p, m, &mut mirrored));
        if on_mirror && (!on_base || mirrored.len() < out.len()) {
            core::mem::swap(out, &mut mirrored);
        }
        self.compact = mirrored;
        let kind = if on_base || on_mirror {
            self.handshakes.note(&p);
            format::IR_S
        } else if compact::encode(packet, compact::Framing::Packet, None, out) {
            format::COMPACT_SYN
        } else {
            return None;
        };
        // The sibling decompressor hears of it: the flow's data may go the other way next.
        self.outbox.handshake(p.key);
        self.outbox
            .numbers(mirror::flow_hash(&p.key), Numbers::of(&p));
        self.stats.count(Why::NoReference);
        self.stats
            .add_part(Part::FullHeader, (out.len() + 1 - p.payload_len()) as u64);
        Some(FrameKind::Profile(kind))
    }
}

impl PlusCompressor {
    /// Writes the IR-S frame of handshake segment `p` against the mirror of hash `mirror` (the
    /// reverse of a flow the sibling decompressor verified or handshook,
    /// [`mirror`]); whether it could.
    fn write_mirrored_ir_s(&mut self, p: &TcpIpPacket<'_>, mirror: u16, out: &mut Vec<u8>) -> bool {
        let Some(flow) = self.mirrors.resolve(mirror) else {
            return false;
        };
        handshake::mirror_template(flow, &mut self.mirrored);
        let reference = self.mirrors.fresh_numbers(mirror).copied();
        let named = reference.is_some_and(|r| self.mirrors.names(mirror, &r));
        let base = handshake::Base::Mirror(mirror);
        let reference = reference.as_ref().map(|r| (r, named));
        handshake::write(p, &self.mirrored, base, reference, out)
    }

    /// After a change of `ctx`'s strides or behaviour: the next [`start_irs`] frames carry
    /// the new scaling, the first of them an IR frame if the context's start has only just
    /// ended ([`YOUNG_CHANGE_CO_RUN`]), the others as they go (an IR frame carries it anyway,
    /// a CO frame in a scaling note).
    ///
    /// Without context requests (no reverse channel) every such frame goes IR, as a restart:
    /// notes would leave a flow whose start was lost waiting for the periodic refresh, where
    /// the restart's IR frames set it up. Over the shared captures (seeds 1-5, `taroc-plus-u`)
    /// notes took damage at 50% random loss from 34.0 to 77.0 per 1000, bursty 10% from 17.8
    /// to 24.2. Its next [`WIDE_NOTES`] wide frames carry a note as well, for a flow whose
    /// restart was lost too.
    ///
    /// [`start_irs`]: PlusCompressor::start_irs
    fn scaling_changed(&self, ctx: &mut Context) {
        ctx.issued.clear();
        if !self.config.repair.context_requests {
            ctx.irs_due = self.start_irs();
            ctx.wide_notes = WIDE_NOTES;
            return;
        }
        if ctx.co_run < YOUNG_CHANGE_CO_RUN {
            ctx.irs_due = ctx.irs_due.max(1);
        }
        ctx.notes_due = self.start_irs();
    }
}
