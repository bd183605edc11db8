//! The TAROC compressor (draft section 7.1): per-stream contexts, IR and CO states with
//! compression slow-start, W-LSB against the VSW, congestion-window tracking.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::time::Duration;

use taroc_wire::tcp::flags;

use super::format::{self, flag, uncompressed};
use super::stats::{Part, TarocStats, Why};
use super::TarocConfig;
use crate::codec::{Compressor, FrameKind};
use crate::tcp::context::{Identity, ALL_CIDS};
use crate::tcp::cwnd::{AckTracker, SeqTracker, TrackerParams};
use crate::tcp::packet::{self, FlowKey, TcpIpPacket};
use crate::tcp::repair::{self, LinkLoss, Watch};
use crate::tcp::vsw::{Entry, Progress, Vsw};

/// Compression state of a context (draft section 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Initialization and Refresh: full headers with exponentially growing gaps.
    Ir {
        /// F_PERIOD: COMPRESSED_TCP packets to send before the next UNCOMPRESSED_TCP.
        f_period: u32,
        /// COMPRESSED_TCP packets sent since the last UNCOMPRESSED_TCP.
        sent: u32,
        /// Whether the next packet is due to go as UNCOMPRESSED_TCP.
        due: bool,
    },
    /// Compression: only COMPRESSED_TCP (unless a packet cannot be compressed).
    Co,
}

impl State {
    fn start() -> State {
        State::Ir {
            f_period: 1,
            sent: 0,
            due: true,
        }
    }
}

/// One stream's compression context.
#[derive(Debug, Clone)]
struct Context {
    key: FlowKey,
    identity: Identity,
    state: State,
    vsw: Vsw,
    seq: SeqTracker,
    ack: AckTracker,
    last_used: u64,
    last_ip_id: u16,
    ip_id_jumps: u8,
    /// UNCOMPRESSED_TCP packets still to send back to back at the start of slow-start.
    repeats: u8,
    /// What the repairs watch ([`repair`]).
    watch: Watch,
}

/// The TAROC compressor for one direction of a link.
#[derive(Debug)]
pub struct TarocCompressor {
    config: TarocConfig,
    contexts: Vec<Option<Context>>,
    by_flow: BTreeMap<FlowKey, u8>,
    clock: u64,
    now: Duration,
    stats: TarocStats,
}

/// An IP-ID step larger than this between consecutive packets of a stream counts as a jump.
const IP_ID_JUMP: i64 = 1024;

impl TarocCompressor {
    /// A compressor with no contexts.
    pub fn new(config: TarocConfig) -> TarocCompressor {
        let n = config.max_contexts.clamp(1, ALL_CIDS);
        TarocCompressor {
            config,
            contexts: (0..n).map(|_| None).collect(),
            by_flow: BTreeMap::new(),
            clock: 0,
            now: Duration::ZERO,
            stats: TarocStats::default(),
        }
    }

    /// What the compressor has sent so far, and why.
    pub fn stats(&self) -> &TarocStats {
        &self.stats
    }

    /// The state of the context of `key`, if it has one.
    pub fn state_of(&self, key: &FlowKey) -> Option<State> {
        let cid = *self.by_flow.get(key)?;
        self.contexts[usize::from(cid)].as_ref().map(|c| c.state)
    }

    /// The number of VSW entries of the context of `key`, if it has one.
    pub fn vsw_len(&self, key: &FlowKey) -> Option<usize> {
        let cid = *self.by_flow.get(key)?;
        self.contexts[usize::from(cid)]
            .as_ref()
            .map(|c| c.vsw.len())
    }

    /// The congestion-window estimates (Algorithm SEQ, Algorithm ACK) of the context of `key`.
    pub fn estimates_of(
        &self,
        key: &FlowKey,
    ) -> Option<(crate::tcp::cwnd::Estimate, crate::tcp::cwnd::Estimate)> {
        let cid = *self.by_flow.get(key)?;
        self.contexts[usize::from(cid)]
            .as_ref()
            .map(|c| (c.seq.estimate(), c.ack.estimate()))
    }

    fn params(&self) -> TrackerParams {
        TrackerParams::new(self.config.mss, self.config.issthresh)
    }

    /// Finds the context of the packet's stream, or makes one. A stream whose identity (template,
    /// timestamps, IP-ID behaviour, usual ECN) changed moves to a fresh CID, so that no
    /// COMPRESSED_TCP header can ever be rebuilt with a stale field the TCP checksum does not
    /// cover.
    fn context_for(&mut self, p: &TcpIpPacket<'_>) -> u8 {
        let existing = self.by_flow.get(&p.key).copied();
        let (jumps, last_ip_id) =
            match existing.and_then(|cid| self.contexts[usize::from(cid)].as_ref()) {
                Some(c) => {
                    let step = crate::encoding::wlsb::signed_distance(
                        p.fields.ip_id.into(),
                        c.last_ip_id.into(),
                        16,
                    );
                    (
                        (c.ip_id_jumps << 1 | u8::from(step.abs() > IP_ID_JUMP)) & 0x0F,
                        p.fields.ip_id,
                    )
                }
                None => (0, p.fields.ip_id),
            };
        let random_ip_id = p.v4 && jumps.count_ones() >= 2;
        if let Some(cid) = existing {
            let ctx = self.contexts[usize::from(cid)]
                .as_mut()
                .expect("mapped CIDs hold contexts");
            ctx.ip_id_jumps = jumps;
            ctx.last_ip_id = last_ip_id;
            if ctx.identity.matches(p, random_ip_id) {
                return cid;
            }
            self.stats.identity_changes += 1;
            self.contexts[usize::from(cid)] = None;
            self.by_flow.remove(&p.key);
            let fresh = self.allocate(Some(cid));
            self.install(fresh, p, random_ip_id, jumps);
            return fresh;
        }
        let cid = self.allocate(None);
        self.install(cid, p, random_ip_id, jumps);
        cid
    }

    /// Picks a CID: a free one if any (not `avoid`), else the least recently used.
    fn allocate(&mut self, avoid: Option<u8>) -> u8 {
        let free = (0..self.contexts.len())
            .find(|&i| self.contexts[i].is_none() && Some(i as u8) != avoid);
        if let Some(i) = free {
            return i as u8;
        }
        let lru = (0..self.contexts.len())
            .filter(|&i| Some(i as u8) != avoid)
            .min_by_key(|&i| self.contexts[i].as_ref().map_or(0, |c| c.last_used))
            .unwrap_or(0);
        if let Some(old) = self.contexts[lru].take() {
            self.by_flow.remove(&old.key);
            self.stats.evictions += 1;
        }
        lru as u8
    }

    fn install(&mut self, cid: u8, p: &TcpIpPacket<'_>, random_ip_id: bool, jumps: u8) {
        let params = self.params();
        self.contexts[usize::from(cid)] = Some(Context {
            key: p.key,
            identity: Identity::of(p, random_ip_id),
            state: State::start(),
            repeats: self.config.improvements.start_repeats,
            vsw: Vsw::new(
                self.config.max_vsw_entries,
                if self.config.improvements.progress_since_push {
                    Progress::SincePush
                } else {
                    Progress::OfFields
                },
            ),
            seq: SeqTracker::new(params, p.fields.seq),
            ack: AckTracker::new(params, p.fields.ack),
            last_used: 0,
            last_ip_id: p.fields.ip_id,
            ip_id_jumps: jumps,
            watch: Watch::new(p, self.now),
        });
        self.by_flow.insert(p.key, cid);
        self.stats.contexts_created += 1;
    }
}

impl Context {
    /// W = K * MAX(MAX(cwnd_seq, 2*ssthresh_seq), MAX(cwnd_ack, 2*ssthresh_ack)), bytes.
    fn window(&self, k: u32) -> u32 {
        self.seq
            .estimate()
            .window_share()
            .max(self.ack.estimate().window_share())
            .saturating_mul(k)
    }
}

impl Compressor for TarocCompressor {
    fn set_time(&mut self, now: Duration) {
        self.now = self.now.max(now);
    }

    /// Answers context requests ([`repair`]): each named context's next packet goes
    /// UNCOMPRESSED_TCP. Ignored unless [`repair::Repair::context_requests`] is on.
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

        let mut why = match ctx.state {
            _ if ctx.vsw.is_empty() => Some(Why::NoReference),
            State::Ir { due: true, .. } => Some(Why::SlowStart),
            State::Co
                if !config.improvements.code_behind_window && ctx.vsw.is_behind(&p.fields) =>
            {
                ctx.vsw.clear();
                ctx.state = State::start();
                ctx.repeats = config.improvements.start_repeats;
                Some(Why::BehindWindow)
            }
            _ => None,
        };
        if why.is_none() && p.payload_len() > 0 && ctx.vsw.retransmits_uncompressed(p.fields.seq) {
            why = Some(Why::Retransmission);
        }
        // The watch sees every packet (it counts retransmissions), so ask it first.
        let repair = ctx
            .watch
            .due(&config.repair, &p, self.now, LinkLoss::Unseen, false);
        why = why.or(repair);
        let compressed = match why {
            None => match write_compressed(ctx, &p, cid, config, out, &mut self.stats) {
                Ok(()) => true,
                Err(reason) => {
                    why = Some(reason);
                    false
                }
            },
            Some(_) => false,
        };
        if !compressed {
            write_uncompressed(ctx, &p, cid, out);
            self.stats.count(why.unwrap_or(Why::Unfit));
            self.stats.add_part(
                Part::FullHeader,
                (p.tcp_offset + p.tcp_header_len + 1) as u64,
            );
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
        let w_packets = w.div_ceil(config.mss.max(1));
        ctx.state = match ctx.state {
            State::Ir { .. } if !compressed => {
                let again = ctx.repeats > 0;
                ctx.repeats = ctx.repeats.saturating_sub(1);
                State::Ir {
                    f_period: ctx_f_period(ctx.state),
                    sent: 0,
                    due: again,
                }
            }
            State::Ir { f_period, sent, .. } => {
                let sent = sent + 1;
                if sent < f_period {
                    State::Ir {
                        f_period,
                        sent,
                        due: false,
                    }
                } else if f_period.saturating_mul(2) > w_packets {
                    State::Co
                } else {
                    State::Ir {
                        f_period: f_period * 2,
                        sent: 0,
                        due: true,
                    }
                }
            }
            State::Co if ctx.vsw.len() == 1 => {
                self.stats.long_jumps += 1;
                ctx.repeats = config.improvements.start_repeats;
                State::start()
            }
            State::Co => State::Co,
        };
        if compressed {
            FrameKind::CompressedTcp
        } else {
            FrameKind::UncompressedTcp
        }
    }
}

fn ctx_f_period(state: State) -> u32 {
    match state {
        State::Ir { f_period, .. } => f_period,
        State::Co => 1,
    }
}

/// UNCOMPRESSED_TCP: the packet with its first length field replaced by the context flags and
/// the CID (draft section 7.3.1).
fn write_uncompressed(ctx: &Context, p: &TcpIpPacket<'_>, cid: u8, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(p.bytes);
    let mut ctx_flags = (ctx.identity.usual_ecn & 0x03) << 1;
    if ctx.identity.random_ip_id {
        ctx_flags |= uncompressed::RANDOM_IP_ID;
    }
    let at = packet::length_field_offset(p.v4);
    out[at] = ctx_flags;
    out[at + 1] = cid;
}

/// COMPRESSED_TCP (draft section 7.3.2), or the reason the packet cannot go compressed.
fn write_compressed(
    ctx: &Context,
    p: &TcpIpPacket<'_>,
    cid: u8,
    config: &TarocConfig,
    out: &mut Vec<u8>,
    stats: &mut TarocStats,
) -> Result<(), Why> {
    let urgent = p.flags & flags::URG != 0;
    if p.flags & flags::FIN != 0
        || !p.canonical_options
        || p.sack.len() > 3
        || (!urgent && p.urgent != 0)
    {
        return Err(Why::Unfit);
    }
    let needs = ctx.vsw.needs(&p.fields);
    let ip_id_need = (p.v4 && !ctx.identity.random_ip_id).then_some(needs.ip_id);
    let wasi_needs = [
        Some(needs.win),
        Some(needs.ack),
        Some(needs.seq),
        ip_id_need,
    ]
    .map(|n| n.filter(|&k| k > 0));
    let pt = if wasi_needs.iter().any(Option::is_some) {
        Some(format::choose_pt(&wasi_needs).ok_or(Why::FieldTooFar)?)
    } else {
        None
    };
    let r_octet = p.r_octet != ctx.identity.usual_ecn;
    let ts_val = ctx.identity.ts && needs.ts_val > 0;
    let ts_ecr = ctx.identity.ts && needs.ts_ecr > 0;
    let options = ts_val || ts_ecr || !p.sack.is_empty();

    let mut f = 0u8;
    for (on, bit) in [
        (r_octet, flag::R),
        (options, flag::O),
        (wasi_needs[3].is_some(), flag::I),
        (p.flags & flags::PSH != 0, flag::P),
        (wasi_needs[2].is_some(), flag::S),
        (wasi_needs[1].is_some(), flag::A),
        (wasi_needs[0].is_some(), flag::W),
        (urgent, flag::U),
    ] {
        if on {
            f |= bit;
        }
    }
    out.clear();
    out.extend_from_slice(&[cid, f]);
    let checksum = if config.improvements.checksum_covers_ip_id && p.v4 {
        // 0xFFFF never comes out of a checksum computation: the decompressor refuses it, so
        // that one rare packet goes whole.
        if p.checksum == 0xFFFF {
            out.clear();
            return Err(Why::Unfit);
        }
        p.checksum.wrapping_add(p.fields.ip_id)
    } else {
        p.checksum
    };
    out.extend_from_slice(&checksum.to_be_bytes());
    let base = out.len() + 1;
    if ctx.identity.random_ip_id {
        out.extend_from_slice(&p.fields.ip_id.to_be_bytes());
    }
    if r_octet {
        out.push(p.r_octet);
    }
    if urgent {
        out.extend_from_slice(&p.urgent.to_be_bytes());
    }
    let after_fixed = out.len() + 1;
    if let Some(pt) = pt {
        let fields = [
            p.fields.win.into(),
            p.fields.ack,
            p.fields.seq,
            p.fields.ip_id.into(),
        ];
        let values = [0, 1, 2, 3].map(|i| wasi_needs[i].map(|_| fields[i]));
        format::put_wasi(out, pt, &values);
    }
    let after_wasi = out.len() + 1;
    if options {
        out.push(format::options_octet(ts_val, ts_ecr, p.sack.len()));
        if ts_val {
            format::put_ts(out, p.fields.ts_val, needs.ts_val);
        }
        if ts_ecr {
            format::put_ts(out, p.fields.ts_ecr, needs.ts_ecr);
        }
        if !format::put_sack(out, p.fields.ack, &p.sack) {
            out.clear();
            return Err(Why::Unfit);
        }
    }
    let after_options = out.len() + 1;
    out.extend_from_slice(p.payload());
    stats.count(Why::Compressed);
    stats.add_part(Part::Base, base as u64);
    stats.add_part(Part::RandomFields, (after_fixed - base) as u64);
    stats.add_part(Part::Wasi, (after_wasi - after_fixed) as u64);
    stats.add_part(Part::Options, (after_options - after_wasi) as u64);
    Ok(())
}
