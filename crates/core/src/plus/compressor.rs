//! The `taroc-plus` compressor: per-flow contexts, IR frames to set a context up (twice, so
//! one loss does not cost the next packets), CO frames coded against the window.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::time::Duration;

use taroc_wire::tcp::flags;

use super::format::{self, ext, kind};
use super::ipid::{self, Behaviour, Detector};
use super::scaled::{quotient, Learner, Strides};
use super::window::{self, Needs, Span};
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

/// IR frames a context (re)starts with: the first, and this many more back to back.
const START_REPEATS: u8 = 1;

/// Most entries of a context's window (VSW), whatever the tracked congestion window: the
/// decompressor loses its reference only if it misses this many packets of the flow in a row.
/// Slow flows (interactive, request/response) then code against their last packets, not
/// against seconds of them.
pub const MAX_WINDOW_PACKETS: usize = 32;

/// One flow's compression context.
#[derive(Debug, Clone)]
struct Context {
    key: FlowKey,
    identity: Identity,
    behaviour: Behaviour,
    detector: Detector,
    strides: Strides,
    learner: Learner,
    vsw: Vsw,
    seq: SeqTracker,
    ack: AckTracker,
    last_used: u64,
    /// IR frames still due before CO frames.
    irs_due: u8,
    watch: Watch,
}

impl Context {
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
    contexts: Vec<Option<Context>>,
    by_flow: BTreeMap<FlowKey, u8>,
    clock: u64,
    now: Duration,
    scratch: Vec<u8>,
    stats: TarocStats,
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
            clock: 0,
            now: Duration::ZERO,
            scratch: Vec::with_capacity(crate::taroc::packet::MAX_TEMPLATE_LEN),
            stats: TarocStats::default(),
        }
    }

    /// What the compressor has sent so far, and why.
    pub fn stats(&self) -> &TarocStats {
        &self.stats
    }

    /// The context of the packet's flow, made if need be. A flow whose template (or use of
    /// timestamps) changed moves to a fresh CID, so that no CO frame is ever rebuilt with a
    /// stale field the TCP checksum does not cover.
    fn context_for(&mut self, p: &TcpIpPacket<'_>) -> u8 {
        if let Some(&cid) = self.by_flow.get(&p.key) {
            let ctx = self.contexts[usize::from(cid)]
                .as_mut()
                .expect("mapped CIDs hold contexts");
            if ctx.identity.matches(p, false, &mut self.scratch) {
                return cid;
            }
            self.stats.identity_changes += 1;
            self.contexts[usize::from(cid)] = None;
            self.by_flow.remove(&p.key);
            let fresh = self.allocate(Some(cid));
            self.install(fresh, p);
            return fresh;
        }
        let cid = self.allocate(None);
        self.install(cid, p);
        cid
    }

    /// A free CID (the lowest, not `avoid`), else the least recently used.
    fn allocate(&mut self, avoid: Option<u8>) -> u8 {
        let n = self.contexts.len();
        if let Some(i) = (0..n).find(|&i| self.contexts[i].is_none() && Some(i as u8) != avoid) {
            return i as u8;
        }
        let lru = (0..n)
            .filter(|&i| Some(i as u8) != avoid)
            .min_by_key(|&i| self.contexts[i].as_ref().map_or(0, |c| c.last_used))
            .unwrap_or(0);
        if let Some(old) = self.contexts[lru].take() {
            self.by_flow.remove(&old.key);
            self.stats.evictions += 1;
        }
        lru as u8
    }

    fn install(&mut self, cid: u8, p: &TcpIpPacket<'_>) {
        let params = TrackerParams::new(self.config.mss, self.config.issthresh);
        self.contexts[usize::from(cid)] = Some(Context {
            key: p.key,
            identity: Identity::of(p, false),
            behaviour: Detector::initial(p.v4, p.fields.ip_id),
            detector: Detector::new(p.fields.ip_id),
            strides: Strides::default(),
            learner: Learner::new(p.fields.ack),
            vsw: Vsw::new(
                self.config.max_vsw_entries.min(MAX_WINDOW_PACKETS),
                Progress::SincePush,
            ),
            seq: SeqTracker::new(params, p.fields.seq),
            ack: AckTracker::new(params, p.fields.ack),
            last_used: 0,
            irs_due: 1 + START_REPEATS,
            watch: Watch::new(p, self.now),
        });
        self.by_flow.insert(p.key, cid);
        self.stats.contexts_created += 1;
    }
}

impl Compressor for PlusCompressor {
    fn set_time(&mut self, now: Duration) {
        self.now = self.now.max(now);
    }

    /// Answers context requests ([`repair`]): each named context's next packet goes IR.
    /// Ignored unless [`repair::Repair::context_requests`] is on.
    fn handle_feedback(&mut self, frame: &[u8]) {
        if !self.config.repair.context_requests {
            return;
        }
        let Some(cids) = repair::parse_request(frame) else {
            return;
        };
        for &cid in cids {
            if let Some(Some(ctx)) = self.contexts.get_mut(usize::from(cid)) {
                ctx.watch.request();
                self.stats.requests_received += 1;
            }
        }
    }

    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        out.clear();
        let Some(p) = TcpIpPacket::parse(packet) else {
            out.extend_from_slice(packet);
            self.stats.count(Why::NotCompressible);
            return FrameKind::Ip;
        };
        self.clock += 1;
        let cid = self.context_for(&p);
        let config = &self.config;
        let ctx = self.contexts[usize::from(cid)]
            .as_mut()
            .expect("context_for installs a context");
        ctx.last_used = self.clock;
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
        let repair = ctx.watch.due(&config.repair, &p, self.now);
        why = why.or(repair);
        let kind = match why {
            None => match write_co(ctx, &p, cid, out, &mut self.stats) {
                Ok(kind) => Some(kind),
                Err(reason) => {
                    why = Some(reason);
                    None
                }
            },
            Some(_) => None,
        };
        let compressed = kind.is_some();
        if !compressed {
            write_ir(ctx, &p, cid, out);
            ctx.irs_due = ctx.irs_due.saturating_sub(1);
            self.stats.count(why.unwrap_or(Why::Unfit));
            self.stats
                .add_part(Part::FullHeader, (out.len() + 1 - p.payload_len()) as u64);
        }
        ctx.watch.sent(&p, self.now, !compressed);
        ctx.vsw.push(Entry {
            fields: p.fields,
            has_payload: p.payload_len() > 0,
            uncompressed: !compressed,
        });
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
        kind.unwrap_or(FrameKind::Profile(format::IR))
    }
}

/// IR: the packet whole, its first length field carrying the context flags and the CID, and
/// the strides after it if the context has any.
fn write_ir(ctx: &Context, p: &TcpIpPacket<'_>, cid: u8, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(p.bytes);
    let mut flags = ctx.behaviour.code() | (ctx.identity.usual_ecn & 0x03) << 2;
    if ctx.strides != Strides::default() {
        flags |= format::ir::STRIDES;
        out.extend_from_slice(&ctx.strides.seq.to_be_bytes());
        out.extend_from_slice(&ctx.strides.ack.to_be_bytes());
    }
    let at = if p.v4 {
        taroc_wire::ipv4::TOTAL_LEN_OFFSET
    } else {
        taroc_wire::ipv6::PAYLOAD_LEN_OFFSET
    };
    out[at] = flags;
    out[at + 1] = cid;
}

/// How one number (sequence or acknowledgment) goes: scaled or not, its class and LSB count.
fn number_code(raw: Span, scaled: Option<Span>) -> (bool, u8, u8) {
    if let Some(c) =
        scaled.and_then(|span| format::class(&format::SCALED_BITS, span.up, span.down, false))
    {
        return (true, c, format::SCALED_BITS[usize::from(c)]);
    }
    let c = format::class(&format::UNSCALED_BITS, raw.up, raw.down, true).unwrap_or(3);
    (false, c, format::UNSCALED_BITS[usize::from(c)])
}

/// CO: the packet coded against the window, or the reason it must go IR.
fn write_co(
    ctx: &Context,
    p: &TcpIpPacket<'_>,
    cid: u8,
    out: &mut Vec<u8>,
    stats: &mut TarocStats,
) -> Result<FrameKind, Why> {
    let urgent = p.flags & flags::URG != 0;
    if !p.canonical_options
        || p.sack.len() > 4
        || (!urgent && p.urgent != 0)
        || (p.v4 && p.checksum == 0xFFFF)
    {
        return Err(Why::Unfit);
    }
    let needs: Needs = window::needs(&ctx.vsw, &p.fields, ctx.strides, ctx.behaviour);
    let (seq_scaled, s_class, s_bits) = number_code(needs.seq, needs.seq_scaled);
    let (ack_scaled, a_class, a_bits) = number_code(needs.ack, needs.ack_scaled);
    let r_octet = p.r_octet != ctx.identity.usual_ecn;
    let win = needs.win != Span::default();
    let mut e = 0u8;
    for (on, bit) in [
        (cid != 0, ext::C),
        (win, ext::W),
        (r_octet, ext::R),
        (urgent, ext::U),
        (!p.sack.is_empty(), ext::K),
        (ctx.strides.seq != 0 && !seq_scaled && s_bits > 0, ext::Q),
        (ctx.strides.ack != 0 && !ack_scaled && a_bits > 0, ext::Z),
        (p.flags & flags::FIN != 0, ext::F),
    ] {
        if on {
            e |= bit;
        }
    }
    let mut k = format::CO | s_class << kind::S_SHIFT | a_class << kind::A_SHIFT;
    if p.flags & flags::PSH != 0 {
        k |= kind::P;
    }
    if e != 0 {
        k |= kind::X;
        out.push(e);
    }
    if cid != 0 {
        out.push(cid);
    }
    let checksum = if p.v4 {
        p.checksum.wrapping_add(p.fields.ip_id)
    } else {
        p.checksum
    };
    out.extend_from_slice(&checksum.to_be_bytes());
    let base = out.len() + 1;
    let mut w = BitWriter::new(out);
    let f = &p.fields;
    let s = if seq_scaled {
        quotient(f.seq, ctx.strides.seq)
    } else {
        f.seq
    };
    w.put(s & wlsb::mask(s_bits), s_bits);
    let a = if ack_scaled {
        quotient(f.ack, ctx.strides.ack)
    } else {
        f.ack
    };
    w.put(a & wlsb::mask(a_bits), a_bits);
    match ctx.behaviour {
        Behaviour::Sequential | Behaviour::Swapped => {
            let offset = ipid::offset(
                ctx.behaviour.counter(f.ip_id),
                quotient(f.seq, ctx.strides.seq),
            );
            let c = format::code(&format::IP_ID_CODES, needs.ip_id.up, needs.ip_id.down);
            format::put_code(&mut w, &format::IP_ID_CODES, c, offset.into());
        }
        Behaviour::Zero => {}
        Behaviour::Random => w.put(f.ip_id.into(), 16),
    }
    if ctx.identity.ts {
        let (val, ecr, gap) = (needs.ts_val, needs.ts_ecr, needs.ts_gap);
        let c = format::code(&format::TS_CODES, val.up, val.down);
        format::put_code(&mut w, &format::TS_CODES, c, f.ts_val);
        let c = format::ecr_code((ecr.up, ecr.down), (gap.up, gap.down));
        let (is_gap, k) = format::TS_ECR_CODES[usize::from(c)];
        let v = if is_gap {
            f.ts_val.wrapping_sub(f.ts_ecr)
        } else {
            f.ts_ecr
        };
        format::put_prefixed(&mut w, c, k, v);
    }
    let sack = p.sack.as_slice();
    let sack_scaled = format::sack_scales(f.ack, sack, ctx.strides.ack.into());
    if !sack.is_empty() {
        w.put(sack.len() as u32 - 1, 2);
        w.put(sack_scaled.into(), 1);
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
    }
    w.finish();
    let after_bits = out.len() + 1;
    if r_octet {
        out.push(p.r_octet);
    }
    if urgent {
        out.extend_from_slice(&p.urgent.to_be_bytes());
    }
    let after_fixed = out.len() + 1;
    format::put_sack(out, f.ack, sack, ctx.strides.ack.into(), sack_scaled);
    let after_sack = out.len() + 1;
    out.extend_from_slice(p.payload());
    stats.count(Why::Compressed);
    stats.add_part(Part::Base, base as u64);
    stats.add_part(Part::Wasi, (after_bits - base) as u64);
    stats.add_part(Part::RandomFields, (after_fixed - after_bits) as u64);
    stats.add_part(Part::Options, (after_sack - after_fixed) as u64);
    Ok(FrameKind::Profile(k))
}
