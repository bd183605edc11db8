//! The `taroc-plus` compressor: per-flow contexts, IR frames to set a context up (twice, so
//! one loss does not cost the next packets), CO frames coded against the window.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::time::Duration;

use taroc_wire::tcp::flags;

use super::breakdown::{Breakdown, Field, Tally};
use super::format::{self, ext, kind};
use super::handshake;
use super::ipid::{Behaviour, Detector};
use super::other::{self, OtherCompressor};
use super::scaled::{Learner, Strides};
use super::seal;
use super::window::{self, DerivedColumns, Needs, Scaler, Scaling, Span};
use crate::codec::{Compressor, FrameKind};
use crate::encoding::bits::BitWriter;
use crate::encoding::wlsb;
use crate::taroc::context::{Identity, ALL_CIDS};
use crate::taroc::cwnd::{AckTracker, SeqTracker, TrackerParams};
use crate::taroc::packet::{FlowKey, TcpIpPacket};
use crate::taroc::repair::{self, Watch};
use crate::taroc::stats::{Part, TarocStats, Why};
use crate::taroc::vsw::{Entry, Progress, Vsw};
use crate::taroc::TarocConfig;

mod ir;

use ir::{write_ir, write_ir_r};

/// IR frames a context (re)starts with: the first, and this many more back to back.
const START_REPEATS: u8 = 2;

/// Most entries of a context's window (VSW), whatever the tracked congestion window: the
/// decompressor loses its reference only if it misses this many packets of the flow in a row.
/// Slow flows (interactive, request/response) then code against their last packets, not
/// against seconds of them.
pub const MAX_WINDOW_PACKETS: usize = 16;

/// Fewest entries of a context's window: however small the tracked congestion window, the
/// decompressor keeps a reference unless it misses this many packets of the flow in a row.
pub const MIN_WINDOW_PACKETS: usize = 8;

/// Entries a full window keeps because they are the newest in sequence order: the
/// decompressor's reference is the newest packet it verified, so a run of retransmissions (Linux
/// BBR sends dozens in a row at 1e-4 on a long link) must not push those out of the window
/// unless the decompressor lost all of them.
pub const PROTECTED_PACKETS: usize = 4;

/// One flow's compression context.
#[derive(Debug, Clone)]
struct Context {
    key: FlowKey,
    identity: Identity,
    /// [`seal::identity_hash`] of `identity`.
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
    /// The flow sent a FIN.
    fin: bool,
    /// The IR frames due answer a context request: full, never replicated (the decompressor
    /// may lack the base, or have lost the IR-Rs).
    full_only: bool,
    watch: Watch,
}

/// A context that sent a FIN and then nothing for this many of the compressor's TCP packets
/// is over: its CID may go to a new flow.
const IDLE_AFTER_FIN: u64 = 16;

/// A context that sent nothing for this many of the compressor's TCP packets is over.
const IDLE: u64 = 1024;

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
            self.vsw.refresh_extras(|f| scaler.derive(f));
            self.scaler = scaler;
        }
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
    config: TarocConfig,
    /// Boxed: a context leaves the table while a packet is coded in it, and moving a pointer
    /// is cheaper than moving the context.
    contexts: Vec<Option<Box<Context>>>,
    by_flow: BTreeMap<FlowKey, u8>,
    /// The flow and CID of the last packet, if `by_flow` still maps them so: packets of one
    /// flow come in runs, and this spares most of them the map lookup.
    last_flow: Option<(FlowKey, u8)>,
    clock: u64,
    now: Duration,
    stats: TarocStats,
    breakdown: Breakdown,
    other: OtherCompressor,
    tunnel: Vec<u8>,
}

impl PlusCompressor {
    /// A compressor with no contexts. Of `config` it uses K, the MSS and ISSTHRESH of the
    /// window tracking, the context and window limits, and the repairs
    /// ([`TarocConfig::repair`]); its coding is its own.
    pub fn new(config: TarocConfig) -> PlusCompressor {
        let n = config.max_contexts.clamp(1, ALL_CIDS);
        PlusCompressor {
            config,
            contexts: (0..n).map(|_| None).collect(),
            by_flow: BTreeMap::new(),
            last_flow: None,
            clock: 0,
            now: Duration::ZERO,
            stats: TarocStats::default(),
            breakdown: Breakdown::default(),
            other: OtherCompressor::default(),
            tunnel: Vec::new(),
        }
    }

    /// What the compressor has sent so far, and why.
    pub fn stats(&self) -> &TarocStats {
        &self.stats
    }

    /// Where the bits of its CO headers went, per field.
    pub fn breakdown(&self) -> &Breakdown {
        &self.breakdown
    }

    /// The context of the packet's flow, made if need be. A flow whose template (or use of
    /// timestamps) changed moves to a fresh CID, so that no CO frame is ever rebuilt with a
    /// stale field the TCP checksum does not cover.
    fn context_for(&mut self, p: &TcpIpPacket<'_>) -> u8 {
        let mapped = match self.last_flow {
            Some((key, cid)) if key == p.key => Some(cid),
            _ => self.by_flow.get(&p.key).copied(),
        };
        if let Some(cid) = mapped {
            let ctx = self.contexts[usize::from(cid)]
                .as_mut()
                .expect("mapped CIDs hold contexts");
            if ctx.identity.matches(p, false) {
                self.last_flow = Some((p.key, cid));
                return cid;
            }
            self.stats.identity_changes += 1;
            self.contexts[usize::from(cid)] = None;
            self.by_flow.remove(&p.key);
            self.last_flow = None;
            let fresh = self.allocate(Some(cid));
            self.install(fresh, p);
            return fresh;
        }
        let cid = self.allocate(None);
        self.install(cid, p);
        cid
    }

    /// A CID for a new context (not `avoid`): the lowest free one that CO frames name
    /// cheaply (0, or a CID prefix's), else one of those whose flow is over (it sent a FIN
    /// and has been idle a while, or has been idle long: [`Context::is_over`]), else the
    /// lowest free one, else the least recently used.
    fn allocate(&mut self, avoid: Option<u8>) -> u8 {
        let n = self.contexts.len();
        let cheap = n.min(usize::from(format::PREFIX_CIDS) + 1);
        let usable = |i: usize| Some(i as u8) != avoid;
        if let Some(i) = (0..cheap).find(|&i| self.contexts[i].is_none() && usable(i)) {
            return i as u8;
        }
        let over = (0..cheap)
            .filter(|&i| usable(i))
            .filter(|&i| {
                self.contexts[i]
                    .as_ref()
                    .is_some_and(|c| c.is_over(self.clock))
            })
            .min_by_key(|&i| self.contexts[i].as_ref().map_or(0, |c| c.last_used));
        if let Some(i) = over {
            return self.evict(i);
        }
        if let Some(i) = (0..n).find(|&i| self.contexts[i].is_none() && usable(i)) {
            return i as u8;
        }
        let lru = (0..n)
            .filter(|&i| usable(i))
            .min_by_key(|&i| self.contexts[i].as_ref().map_or(0, |c| c.last_used))
            .unwrap_or(0);
        self.evict(lru)
    }

    /// Frees CID `i` (dropping its context, if any, and every mapping to it) and returns it.
    fn evict(&mut self, i: usize) -> u8 {
        if let Some(old) = self.contexts[i].take() {
            self.by_flow.remove(&old.key);
            self.last_flow = None;
            self.stats.evictions += 1;
        }
        i as u8
    }

    fn install(&mut self, cid: u8, p: &TcpIpPacket<'_>) {
        let params = TrackerParams::new(self.config.mss, self.config.issthresh);
        // A new flow between known hosts most likely has their segment size and ACK step.
        let strides = self
            .same_hosts(p)
            .and_then(|hosts| hosts.max_by_key(|(_, c)| c.last_used))
            .map_or(Strides::default(), |(_, base)| base.strides);
        let identity = Identity::of(p, false);
        let behaviour = Detector::initial(p.v4, p.fields.ip_id);
        self.contexts[usize::from(cid)] = Some(Box::new(Context {
            key: p.key,
            identity_hash: seal::identity_hash(&identity),
            identity,
            behaviour,
            detector: Detector::new(p.fields.ip_id),
            strides,
            scaler: Scaler::new(Scaling { strides, behaviour }),
            learner: Learner::new(p.fields.ack),
            vsw: Vsw::with_extras(
                self.config.max_vsw_entries.min(MAX_WINDOW_PACKETS),
                Progress::SincePush,
            )
            .with_min_len(MIN_WINDOW_PACKETS)
            .with_protected(PROTECTED_PACKETS),
            seq: SeqTracker::new(params, p.fields.seq),
            ack: AckTracker::new(params, p.fields.ack),
            last_used: 0,
            created: self.clock,
            co_run: 0,
            irs_due: 1 + START_REPEATS,
            fin: false,
            full_only: false,
            watch: Watch::new(p, self.now),
        }));
        self.by_flow.insert(p.key, cid);
        self.last_flow = Some((p.key, cid));
        self.stats.contexts_created += 1;
    }
}

impl Compressor for PlusCompressor {
    fn set_time(&mut self, now: Duration) {
        self.now = self.now.max(now);
    }

    /// Answers context requests ([`repair`]): each named context's next packets go IR (a
    /// TCP context's, type `0x01`) or IR-N (a non-TCP context's, [`other::REQUEST_N`]).
    /// Ignored unless [`repair::Repair::context_requests`] is on.
    fn handle_feedback(&mut self, frame: &[u8]) {
        if !self.config.repair.context_requests {
            return;
        }
        if let Some(cids) = other::parse_request(frame) {
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
                self.stats.requests_received += 1;
            }
        }
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
        self.compress_tcp(&p, out)
    }
}

impl PlusCompressor {
    /// Compresses a TCP/IP packet in its flow's context.
    fn compress_tcp(&mut self, p: &TcpIpPacket<'_>, out: &mut Vec<u8>) -> FrameKind {
        self.clock += 1;
        let cid = self.context_for(p);
        // Out of the table while it is worked on, so that an IR-R can read another context.
        let mut ctx = self.contexts[usize::from(cid)]
            .take()
            .expect("context_for installs a context");
        let kind = self.compress_in(&mut ctx, cid, p, out);
        self.contexts[usize::from(cid)] = Some(ctx);
        kind
    }

    /// A SYN, SYN-ACK or RST between hosts that have a context goes IR-S, coded against that
    /// context ([`handshake`]). `None` if the packet is not such a segment.
    fn compress_handshake(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Option<FrameKind> {
        let p = handshake::parse(packet)?;
        let (base_cid, base) = self.handshake_base(&p)?;
        if !handshake::write(&p, &base.identity.template, base_cid, out) {
            return None;
        }
        self.stats.count(Why::NoReference);
        self.stats
            .add_part(Part::FullHeader, (out.len() + 1 - p.payload_len()) as u64);
        Some(FrameKind::Profile(format::IR_S))
    }

    /// An IP-in-IP packet with an inner TCP/IP packet: the outer header as CO-N, the inner
    /// packet compressed in its flow's context (a tunnel frame), or the packet as IR-N while
    /// the outer context's IR-Ns are due. `None` if the packet is not such a packet.
    fn compress_tunnel(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Option<FrameKind> {
        let inner = TcpIpPacket::parse(other::tunnelled(packet)?)?;
        let FrameKind::Profile(outer) = self.other.compress(packet, out, false)? else {
            return None;
        };
        if outer == other::IR_N {
            self.stats.count(Why::NoReference);
            return Some(FrameKind::Profile(outer));
        }
        let mut frame = core::mem::take(&mut self.tunnel);
        frame.clear();
        let kind = self.compress_tcp(&inner, &mut frame);
        out.insert(0, outer);
        out.push(kind.to_byte());
        out.extend_from_slice(&frame);
        self.tunnel = frame;
        Some(FrameKind::Profile(other::TUNNEL))
    }
}

impl PlusCompressor {
    /// Compresses `p` in its context `ctx` (of `cid`, out of the table meanwhile).
    fn compress_in(
        &mut self,
        ctx: &mut Context,
        cid: u8,
        p: &TcpIpPacket<'_>,
        out: &mut Vec<u8>,
    ) -> FrameKind {
        let config = &self.config;
        ctx.last_used = self.clock;
        ctx.fin |= p.flags & flags::FIN != 0;
        if let Some(strides) = ctx
            .learner
            .observe(p.payload_len(), p.fields.ack, ctx.strides)
        {
            ctx.strides = strides;
            ctx.irs_due = 1 + START_REPEATS;
        }
        if let Some(behaviour) = ctx.detector.observe(p.fields.ip_id, ctx.behaviour) {
            ctx.behaviour = behaviour;
            ctx.irs_due = 1 + START_REPEATS;
        }
        ctx.rescale();

        let mut why = if ctx.vsw.is_empty() {
            Some(Why::NoReference)
        } else if ctx.irs_due > 0 {
            Some(Why::SlowStart)
        } else if p.payload_len() > 0 && ctx.vsw.retransmits_uncompressed(p.fields.seq) {
            Some(Why::Retransmission)
        } else {
            None
        };
        // The watch sees every packet (it counts retransmissions), so ask it first.
        let repair = ctx.watch.due(&config.repair, p, self.now);
        if repair == Some(Why::Requested) {
            // A request means the decompressor lacks the context: answer with a start's IRs,
            // so that one more loss does not leave it waiting for another request.
            ctx.irs_due = 1 + START_REPEATS;
            ctx.full_only = true;
        }
        why = why.or(repair);
        let kind = match why {
            None => match write_co(&Coder::of(ctx), p, cid, out, &mut self.stats) {
                Ok((kind, tally)) => {
                    self.breakdown.add(p.payload_len() > 0, &tally);
                    Some(FrameKind::Profile(kind))
                }
                Err(reason) => {
                    why = Some(reason);
                    None
                }
            },
            Some(_) => None,
        };
        let compressed = kind.is_some();
        ctx.co_run = if compressed { ctx.co_run + 1 } else { 0 };
        let mut replicated = None;
        if !compressed {
            let replicate =
                !ctx.full_only && matches!(why, Some(Why::NoReference | Why::SlowStart));
            let base = replicate.then(|| self.find_base(p)).flatten();
            replicated = base.and_then(|(base_cid, base)| {
                write_ir_r(ctx, base, base_cid, p, cid, out, &mut TarocStats::default())
                    .ok()
                    .filter(|_| out.len() <= p.bytes.len())
            });
            if replicated.is_none() {
                write_ir(ctx, p, cid, out);
            }
            ctx.irs_due = ctx.irs_due.saturating_sub(1);
            ctx.full_only &= ctx.irs_due > 0;
            self.stats.count(why.unwrap_or(Why::Unfit));
            self.stats
                .add_part(Part::FullHeader, (out.len() + 1 - p.payload_len()) as u64);
        }
        ctx.watch.sent(p, self.now, !compressed);
        ctx.rescale();
        ctx.vsw.push_with(
            Entry {
                fields: p.fields,
                has_payload: p.payload_len() > 0,
                uncompressed: !compressed,
            },
            ctx.scaler.derive(&p.fields),
        );
        ctx.seq.on_segment(p.fields.seq);
        ctx.ack.on_segment(p.fields.ack);
        let w = ctx.window(config.k);
        ctx.vsw.prune(w);
        if compressed && ctx.vsw.len() == 1 {
            // The window shrank to this one packet: if it is lost, nothing the decompressor
            // holds is a reference. Start again.
            self.stats.long_jumps += 1;
            ctx.irs_due = 1 + START_REPEATS;
        }
        kind.unwrap_or(FrameKind::Profile(replicated.unwrap_or(format::IR)))
    }

    /// A context of the packet's hosts to replicate a new context from: same addresses,
    /// the same IP header but for the per-packet fields, the same use of timestamps, a window
    /// to code against, its own IRs all sent (so that the decompressor most likely holds it:
    /// no chain of replications from contexts still starting); the most recently used. IPv4 options and IPv6 extension headers rule
    /// replication out.
    fn find_base(&self, p: &TcpIpPacket<'_>) -> Option<(u8, &Context)> {
        self.same_hosts(p)?
            .filter(|(_, c)| c.identity.ts == p.ts)
            .max_by_key(|(_, c)| (c.co_run, c.last_used))
    }

    /// The base of an IR-S frame ([`handshake`]), which takes only the IP header from it: of
    /// the contexts of the packet's hosts whose own start is over, the one that has sent the
    /// most CO frames since its last IR frame or context request (the one the decompressor most
    /// surely holds), the first made of those.
    fn handshake_base(&self, p: &TcpIpPacket<'_>) -> Option<(u8, &Context)> {
        self.same_hosts(p)?
            .max_by_key(|(_, c)| (c.co_run, core::cmp::Reverse(c.created)))
    }

    /// The contexts whose IP header is the packet's but for the per-packet fields, which have
    /// a window and whose own IRs are all sent (see [`PlusCompressor::find_base`]). `None` if
    /// the packet has IPv4 options or IPv6 extension headers.
    fn same_hosts<'a>(
        &'a self,
        p: &TcpIpPacket<'_>,
    ) -> Option<impl Iterator<Item = (u8, &'a Context)> + 'a> {
        let header = if p.v4 { 20 } else { 40 };
        if p.tcp_offset != header {
            return None;
        }
        let mut template = [0u8; 44];
        let t = &mut template[..header + 4];
        t.copy_from_slice(&p.bytes[..header + 4]);
        if p.v4 {
            t[1] &= 0xFC;
            t[2..6].fill(0);
            t[10..12].fill(0);
        } else {
            t[1] &= !0x30;
            t[4..6].fill(0);
        }
        // The mapped CIDs, not every slot: the table is mostly empty. (No two contexts share a
        // `last_used`, so the order does not matter.)
        Some(
            self.by_flow
                .values()
                .filter_map(|&cid| Some((cid, self.contexts[usize::from(cid)].as_deref()?)))
                .filter(move |(_, c)| {
                    c.irs_due == 0
                        && !c.vsw.is_empty()
                        && c.identity.template.len() == header + 4
                        && c.identity.template[..header] == template[..header]
                }),
        )
    }
}

/// How one number (sequence or acknowledgment) goes.
struct NumberCode {
    /// The LSBs are of the number divided by its stride.
    scaled: bool,
    /// The extension's Q (Z) flag: unscaled, although the context has a stride.
    unscaled_flag: bool,
    /// The size class (the kind byte's S or A).
    class: u8,
    /// The LSB count.
    bits: u8,
}

/// How a number goes: scaled if it can ([`format::SCALED_BITS`] classes 1 and 2), else, with a
/// stride, as 16 unscaled LSBs if they fit (class 3, no flag), else unscaled with the Q (Z) flag
/// if it has a stride.
fn number_code(raw: Span, scaled: Option<Span>, stride: bool) -> NumberCode {
    let strided = format::STRIDED_UNSCALED_CLASS;
    if let Some(c) = scaled
        .and_then(|span| format::class(&format::SCALED_BITS, span.up, span.down, false))
        .filter(|&c| c < strided)
    {
        return NumberCode {
            scaled: true,
            unscaled_flag: false,
            class: c,
            bits: format::SCALED_BITS[usize::from(c)],
        };
    }
    let c = format::class(&format::UNSCALED_BITS, raw.up, raw.down, true).unwrap_or(3);
    let k = format::SCALED_BITS[usize::from(strided)];
    if stride && c > 0 && crate::encoding::lsb::fits(k, raw.up, raw.down) {
        return NumberCode {
            scaled: false,
            unscaled_flag: false,
            class: strided,
            bits: k,
        };
    }
    NumberCode {
        scaled: false,
        unscaled_flag: stride && c > 0,
        class: c,
        bits: format::UNSCALED_BITS[usize::from(c)],
    }
}

/// What a CO body is coded against and with.
struct Coder<'a> {
    /// The references (a context's window).
    vsw: &'a Vsw<DerivedColumns>,
    /// The scaling the window's extras were derived under.
    derived_by: Scaling,
    /// The scaler of the context the frame is for.
    scaler: &'a Scaler,
    /// The identity hash of the context the frame is for (its seal's key).
    identity_hash: u32,
    /// The strides.
    strides: Strides,
    /// The IP-ID behaviour.
    behaviour: Behaviour,
    /// Whether the context has timestamps.
    ts: bool,
    /// The context's usual R-octet.
    usual_ecn: u8,
    /// Sequence and acknowledgment numbers go whole (IR-R: another flow's references).
    full_numbers: bool,
}

impl Coder<'_> {
    /// The coder of a context's own CO frames.
    fn of(ctx: &Context) -> Coder<'_> {
        Coder {
            vsw: &ctx.vsw,
            derived_by: ctx.scaler.scaling(),
            scaler: &ctx.scaler,
            identity_hash: ctx.identity_hash,
            strides: ctx.strides,
            behaviour: ctx.behaviour,
            ts: ctx.identity.ts,
            usual_ecn: ctx.identity.usual_ecn,
            full_numbers: false,
        }
    }
}

/// CO: the packet coded against the window (its kind byte and body; for CIDs 1 to
/// [`format::PREFIX_CIDS`] the CID prefix, then the CO kind byte and body), or the reason it
/// must go IR.
fn write_co(
    ctx: &Coder<'_>,
    p: &TcpIpPacket<'_>,
    cid: u8,
    out: &mut Vec<u8>,
    stats: &mut TarocStats,
) -> Result<(u8, Tally), Why> {
    let urgent = p.flags & flags::URG != 0;
    if !p.canonical_options
        || p.sack.len() > 4
        || (!urgent && p.urgent != 0)
        || (p.v4 && p.checksum == 0xFFFF)
    {
        return Err(Why::Unfit);
    }
    // The quotients and the IP-ID offset by the scaler's multiplications, once per packet.
    let me = ctx.scaler.derive(&p.fields);
    let mut needs: Needs = window::needs(ctx.vsw, ctx.derived_by, &p.fields, &me, ctx.scaler);
    // A sequence or acknowledgment number 2^30 or more away from a reference (no TCP moves so
    // far between two packets: a mangled or forged one) goes IR. Sequence arithmetic cannot
    // order such a packet, so the decompressor may keep its older reference while the window's
    // pruning counts the jump as progress and drops that reference.
    let far = |s: Span| s.up.max(s.down) >= 1 << 30;
    if !ctx.full_numbers && (far(needs.seq) || far(needs.ack)) {
        return Err(Why::Unfit);
    }
    if ctx.full_numbers {
        let whole = Span {
            up: u64::MAX,
            down: u64::MAX,
        };
        (needs.seq, needs.ack) = (whole, whole);
        (needs.seq_scaled, needs.ack_scaled) = (None, None);
    }
    let seq = number_code(needs.seq, needs.seq_scaled, ctx.strides.seq != 0);
    let ack = number_code(needs.ack, needs.ack_scaled, ctx.strides.ack != 0);
    let prefixed = (1..=format::PREFIX_CIDS).contains(&cid);
    if prefixed {
        // The CO kind byte's place: the link's kind byte is the CID prefix.
        out.push(0);
    }
    let r_octet = p.r_octet != ctx.usual_ecn;
    let win = needs.win != Span::default();
    let mut e = 0u8;
    for (on, bit) in [
        (cid != 0 && !prefixed, ext::C),
        (win, ext::W),
        (r_octet, ext::R),
        (urgent, ext::U),
        (!p.sack.is_empty(), ext::K),
        (seq.unscaled_flag, ext::Q),
        (ack.unscaled_flag, ext::Z),
        (p.flags & flags::FIN != 0, ext::F),
    ] {
        if on {
            e |= bit;
        }
    }
    let mut k = format::CO | seq.class << kind::S_SHIFT | ack.class << kind::A_SHIFT;
    if p.flags & flags::PSH != 0 {
        k |= kind::P;
    }
    if e != 0 {
        k |= kind::X;
        out.push(e);
    }
    if cid != 0 && !prefixed {
        out.push(cid);
    }
    let checksum = if p.v4 {
        p.checksum.wrapping_add(p.fields.ip_id)
    } else {
        p.checksum
    } ^ seal::seal(ctx.identity_hash, &p.fields);
    out.extend_from_slice(&checksum.to_be_bytes());
    let base = out.len() + 1;
    let mut tally: Tally = [0; 13];
    let mut count = |field: Field, bits: u8| tally[field as usize] += u32::from(bits);
    count(Field::Kind, 8);
    count(Field::Extension, 8 * u8::from(e != 0));
    count(Field::Cid, 8 * u8::from(cid != 0));
    count(Field::Checksum, 16);
    count(Field::Seq, seq.bits);
    count(Field::Ack, ack.bits);
    let mut w = BitWriter::new(out);
    let f = &p.fields;
    debug_assert_eq!(
        (ctx.scaler.scaling().strides, ctx.scaler.scaling().behaviour),
        (ctx.strides, ctx.behaviour)
    );
    for (code, value, scaled) in [(&seq, f.seq, me.seq_q()), (&ack, f.ack, me.ack_q())] {
        let v = if code.scaled { scaled } else { value };
        w.put(v & wlsb::mask(code.bits), code.bits);
    }
    match ctx.behaviour {
        Behaviour::Sequential | Behaviour::Swapped => {
            let offset = me.offset();
            let c = format::code(&format::IP_ID_CODES, needs.ip_id.up, needs.ip_id.down);
            format::put_code(&mut w, &format::IP_ID_CODES, c, offset.into());
            count(
                Field::IpId,
                format::prefix_len(c) + format::IP_ID_CODES[usize::from(c)],
            );
        }
        Behaviour::Zero => {}
        Behaviour::Random => {
            w.put(f.ip_id.into(), 16);
            count(Field::IpId, 16);
        }
    }
    if ctx.ts {
        let (val, ecr, gap) = (needs.ts_val, needs.ts_ecr, needs.ts_gap);
        let c = format::code(&format::TS_CODES, val.up, val.down);
        format::put_code(&mut w, &format::TS_CODES, c, f.ts_val);
        count(
            Field::TsVal,
            format::prefix_len(c) + format::TS_CODES[usize::from(c)],
        );
        let c = format::ecr_code((ecr.up, ecr.down), (gap.up, gap.down));
        let (is_gap, k) = format::TS_ECR_CODES[usize::from(c)];
        let v = if is_gap {
            f.ts_val.wrapping_sub(f.ts_ecr)
        } else {
            f.ts_ecr
        };
        format::put_prefixed(&mut w, c, k, v);
        count(Field::TsEcr, format::prefix_len(c) + k);
    }
    let sack = p.sack.as_slice();
    let sack_scaled = format::sack_scales(f.ack, sack, ctx.strides.ack.into());
    if !sack.is_empty() {
        w.put(sack.len() as u32 - 1, 2);
        w.put(sack_scaled.into(), 1);
        count(Field::Sack, 3);
    }
    if win {
        let c = usize::from(!crate::encoding::lsb::fits(
            format::WINDOW_BITS[0],
            needs.win.up,
            needs.win.down,
        ));
        w.put(c as u32, 1);
        let k = format::WINDOW_BITS[c];
        w.put(u32::from(f.win) & wlsb::mask(k), k);
        count(Field::Window, 1 + k);
    }
    w.finish();
    let after_bits = out.len() + 1;
    let used: u32 = tally[Field::Seq as usize..].iter().sum();
    tally[Field::Padding as usize] = 8 * (after_bits - base) as u32 - used;
    if r_octet {
        out.push(p.r_octet);
    }
    if urgent {
        out.extend_from_slice(&p.urgent.to_be_bytes());
    }
    let after_fixed = out.len() + 1;
    format::put_sack(out, f.ack, sack, ctx.strides.ack.into(), sack_scaled);
    let after_sack = out.len() + 1;
    tally[Field::Other as usize] = 8 * (after_fixed - after_bits) as u32;
    tally[Field::Sack as usize] += 8 * (after_sack - after_fixed) as u32;
    out.extend_from_slice(p.payload());
    stats.count(Why::Compressed);
    stats.add_part(Part::Base, base as u64);
    stats.add_part(Part::Wasi, (after_bits - base) as u64);
    stats.add_part(Part::RandomFields, (after_fixed - after_bits) as u64);
    stats.add_part(Part::Options, (after_sack - after_fixed) as u64);
    if prefixed {
        out[0] = k;
        return Ok((format::CID_PREFIX + cid, tally));
    }
    Ok((k, tally))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(raw: (u64, u64), scaled: Option<(u64, u64)>, stride: bool) -> (bool, bool, u8, u8) {
        let span = |(up, down)| Span { up, down };
        let c = number_code(span(raw), scaled.map(span), stride);
        (c.scaled, c.unscaled_flag, c.class, c.bits)
    }

    #[test]
    fn a_number_that_cannot_be_scaled_needs_no_flag_while_16_bits_fit() {
        // Scaled when the quotient fits 6 or 8 bits.
        assert_eq!(code((3000, 0), Some((2, 0)), true), (true, false, 1, 6));
        assert_eq!(code((90_000, 0), Some((60, 0)), true), (true, false, 2, 8));
        // The residue changed (no scaled span), or the quotient needs more than 8 bits: 16
        // unscaled bits in class 3, no Q / Z.
        assert_eq!(code((3000, 0), None, true), (false, false, 3, 16));
        assert_eq!(
            code((30_000, 0), Some((300, 0)), true),
            (false, false, 3, 16)
        );
        // Nothing changed: class 0, whether scaled or not.
        assert_eq!(code((0, 0), None, true), (false, false, 0, 0));
        // Beyond 16 bits: unscaled with the flag.
        assert_eq!(code((1 << 20, 0), None, true), (false, true, 3, 32));
        // Without a stride, the unscaled classes and never a flag.
        assert_eq!(code((300, 0), None, false), (false, false, 1, 10));
        assert_eq!(code((3000, 0), None, false), (false, false, 2, 16));
    }
}
