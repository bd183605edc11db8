//! Compressing one packet in its context: what the context learns from it, why it must go as
//! a full header (if it must), the CO frame or the full header that carries it, and what the
//! window keeps of it.

use alloc::vec::Vec;

use taroc_wire::tcp::flags;

use super::co::{write_co, Coder, Floor};
use super::ir::{write_ir, write_ir_r};
use super::{
    starts, Context, PlusCompressor, ANSWER_IRS, HORIZON_STEP, MIN_WINDOW_PACKETS, NUMBERS_NOTED,
    WIDE_EVERY_LOSSY, WIDE_EVERY_PACKETS, WIDE_INTERVAL, YOUNG_BASE,
};
use crate::codec::FrameKind;
use crate::plus::compact;
use crate::plus::format;
use crate::plus::ipid;
use crate::plus::numbers::{self, Numbers};
use crate::plus::outer::Outer;
use crate::plus::scaled::Strides;
use crate::plus::stale::Trace;
use crate::plus::PlusStats;
use crate::tcp::packet::{Fields, TcpIpPacket};
use crate::tcp::repair::LinkLoss;
use crate::tcp::stats::{Part, Why};
use crate::tcp::vsw::Entry;

impl PlusCompressor {
    /// Compresses `p` in its context `ctx` (of `cid`, out of the table meanwhile), `outer_id`
    /// its IPv4 outer header's Identification if the context is tunnelled under one.
    pub(super) fn compress_in(
        &mut self,
        ctx: &mut Context,
        cid: u8,
        p: &TcpIpPacket<'_>,
        outer_id: u16,
        out: &mut Vec<u8>,
    ) -> FrameKind {
        self.learn(ctx, p);
        // The window keeps each packet with its next sequence number in place of its own: what
        // a later packet's is coded against, and the decompressor's order (spec section 5.2).
        let sent = Fields {
            seq: numbers::next_seq(p.fields.seq, p.payload_len(), p.flags),
            ..p.fields
        };
        let loss = self.link_loss();
        // A burst note came lately (never with a reverse channel).
        let bursty = loss == LinkLoss::Bursts;
        let mut why = self.why_full(ctx, p, &sent, loss);
        // Without a reverse channel, a wide frame now and then (more often on a lossy link),
        // and the check on a frame whose packet jumped further than the decompressor may miss
        // packets and keep a reference.
        let one_way = !self.config.repair.context_requests;
        let wide_every = if loss != LinkLoss::Unseen {
            WIDE_EVERY_LOSSY
        } else {
            WIDE_EVERY_PACKETS
        };
        let wide = one_way
            && (ctx.since_wide >= wide_every
                || self.now.saturating_sub(ctx.wide_at) >= WIDE_INTERVAL);
        let now = Trace {
            ip_id: p.fields.ip_id,
            next: sent.seq,
            ack: sent.ack,
        };
        let limit = MIN_WINDOW_PACKETS as u16;
        // After a burst note, a start's CO frames carry the check too, until its last spread
        // IR frame: a burst that took the start's IR frames leaves them kept for want of a
        // context, and each then goes late on its own, the oldest too. Pooled over the shared,
        // unseen and twin captures (seeds 1-5), damage per 1000 intact frames at 30% loss in
        // bursts of mean 50 went 8.198 -> 7.838, for 0.11 octets per packet there.
        // On a link known to lose frames, every CO frame of a flow with neither a counter
        // IP-ID nor a stride carries the check too: no jump can show that its decompressor
        // missed packets, so a frame decoded against a reference a burst left stale would
        // otherwise pass on its 16-bit checksum. None of the shared, unseen or twin captures
        // has such a flow; the ROHC library's IPv6 capture uk6x pays 0.2 octets per packet at
        // 30% in bursts of mean 4, and nothing on a clean link.
        let scaling = ctx.scaler.scaling();
        let blind = || !scaling.behaviour.is_counter() && scaling.strides == Strides::default();
        let check = one_way
            && (loss != LinkLoss::Unseen && blind()
                || ctx.recent.jumped(scaling, &now, limit)
                || bursty && starts::early_spreads_due(ctx));
        let kind = match why {
            None => {
                let coder = Coder::of(ctx, outer_id, p, wide, check, bursty);
                match write_co(&coder, p, cid, out, &mut self.stats) {
                    Ok((kind, tally, used)) => {
                        if let Some(used) = used {
                            ctx.floor.sent(used);
                        } else if ctx.floor != Floor::default() {
                            ctx.floor = Floor::default();
                        }
                        self.breakdown.add(p.payload_len() > 0, &tally);
                        Some(FrameKind::Profile(kind))
                    }
                    Err(reason) => {
                        why = Some(reason);
                        None
                    }
                }
            }
            Some(_) => None,
        };
        let compressed = kind.is_some();
        if one_way {
            ctx.recent.push(now, !compressed);
        }
        self.count_co(ctx, compressed, wide);
        let kind = match kind {
            Some(kind) => kind,
            None => {
                let why = why.unwrap_or(Why::Unfit);
                FrameKind::Profile(self.write_full(ctx, cid, p, why, outer_id, out))
            }
        };
        ctx.watch.sent(p, self.now, !compressed);
        if ctx.numbers_noted < NUMBERS_NOTED {
            ctx.numbers_noted += 1;
            self.outbox.numbers(ctx.flow_hash, Numbers::of(p));
        }
        self.keep(ctx, p, &sent, compressed, outer_id);
        kind
    }

    /// What the context learns from `p` before it is coded: its strides and IP-ID behaviour.
    #[inline(always)]
    fn learn(&self, ctx: &mut Context, p: &TcpIpPacket<'_>) {
        ctx.last_used = self.clock;
        ctx.fin |= p.flags & flags::FIN != 0;
        let mut changed = false;
        if let Some(strides) = ctx
            .learner
            .observe(p.payload_len(), p.fields.ack, ctx.strides)
        {
            ctx.strides = strides;
            changed = true;
        }
        if let Some(behaviour) = ctx.detector.observe(p.fields.ip_id, ctx.behaviour) {
            ctx.behaviour = behaviour;
            changed = true;
        }
        if changed {
            self.scaling_changed(ctx);
            let next = numbers::next_seq(p.fields.seq, p.payload_len(), p.flags);
            ctx.scaled_from = (next, p.fields.ack);
        }
        ctx.rescale();
    }

    /// Why `p` (whose next sequence number makes `sent`) must go as a full header, if it must:
    /// no reference, the context's start, a retransmission of a packet sent full, or a repair
    /// ([`crate::tcp::repair`]; a context request makes the context start again), with `loss`
    /// what the compressor knows of the link's losses (a loss note or a burst note lately).
    #[inline(always)]
    fn why_full(
        &self,
        ctx: &mut Context,
        p: &TcpIpPacket<'_>,
        sent: &Fields,
        loss: LinkLoss,
    ) -> Option<Why> {
        let why = if ctx.vsw.is_empty() {
            Some(Why::NoReference)
        } else if ctx.irs_due > 0 {
            Some(Why::SlowStart)
        } else if let Some(why) = starts::spread_due(ctx, loss, self.declared_lossy()) {
            Some(why)
        } else if p.payload_len() > 0 && ctx.vsw.retransmits_uncompressed(sent.seq) {
            Some(Why::Retransmission)
        } else {
            None
        };
        // The watch sees every packet (it counts retransmissions), so ask it first.
        let repair = ctx
            .watch
            .due(&self.config.repair, p, self.now, loss, ctx.held_far);
        if repair == Some(Why::Requested) {
            // A request means the decompressor lacks the context: answer with more IRs than
            // a start's, so that more losses do not leave it waiting for another request (a
            // request comes only after a refusal, so a clean link never pays for them).
            ctx.irs_due = ANSWER_IRS;
            ctx.full_only = true;
            ctx.issued.clear();
        }
        why.or(repair)
    }

    /// Counts a frame that went CO (`compressed`) or not: the wide frames' and notes' dues, the
    /// run of CO frames.
    #[inline(always)]
    fn count_co(&mut self, ctx: &mut Context, compressed: bool, wide: bool) {
        if !compressed || wide {
            (ctx.since_wide, ctx.wide_at) = (0, self.now);
        } else {
            ctx.since_wide += 1;
        }
        if compressed && wide {
            self.stats.wide_frames += 1;
            ctx.wide_notes = ctx.wide_notes.saturating_sub(1);
        }
        if compressed && ctx.notes_due > 0 {
            self.stats.scaling_notes += 1;
        }
        ctx.co_run = if compressed { ctx.co_run + 1 } else { 0 };
        // This frame carries the strides and behaviour, as a note or in its IR.
        ctx.notes_due = ctx.notes_due.saturating_sub(1);
    }

    /// Writes `p` as a full header for reason `why`: an IR-R against a base context of the same
    /// hosts or a mirrored compact IR at a start, whichever is shorter, else an IR (compact or
    /// packed where shorter). Returns its kind byte.
    fn write_full(
        &mut self,
        ctx: &mut Context,
        cid: u8,
        p: &TcpIpPacket<'_>,
        why: Why,
        outer_id: u16,
        out: &mut Vec<u8>,
    ) -> u8 {
        let start = matches!(why, Why::NoReference | Why::SlowStart);
        let by_checksum = !self.lossy_alone();
        let replicate = !ctx.full_only && start;
        let base = replicate
            .then(|| self.find_base(p))
            .flatten()
            .filter(|(_, b)| b.co_run >= YOUNG_BASE);
        let replicated = base.and_then(|(base_cid, base)| {
            write_ir_r(ctx, base, base_cid, p, cid, out, &mut PlusStats::default())
                .ok()
                .filter(|_| out.len() <= p.bytes.len())
                .map(|k| (k, base.depth.saturating_add(1)))
        });
        // The reverse of a flow the sibling decompressor verified: a mirrored compact IR,
        // unless the IR-R is shorter. It rests on no frame of this direction's, but on the far
        // compressor still sending the mirror: a repair (a refresh, say) goes mirrored only
        // if the context's last one did not ([`Context::repair_mirrored`]), and without
        // numbers, whose references are a start's.
        let mirrorable = !ctx.full_only && why != Why::Requested && (start || !ctx.repair_mirrored);
        let mirror = mirrorable
            .then(|| self.mirrors.find(&p.key))
            .flatten()
            .map(|hash| {
                let reference = self.mirrors.fresh_numbers(hash).filter(|_| start);
                // A reference named by its checksum alone is the newest of the far end's notes
                // with that checksum, and the far compressor notes more packets than this end's
                // decompressor (every one after each of its full headers): on a link known to
                // lose frames, whose contexts refresh often without context requests, one of
                // them may share it, so the mirror is named by its hash as well.
                compact::Mirror {
                    hash,
                    reference,
                    named: by_checksum && reference.is_some_and(|r| self.mirrors.names(hash, r)),
                }
            });
        let strides = ctx.strides;
        let mirrored = mirror
            .map(|_| write_ir(ctx, p, cid, mirror, &mut self.mirrored, &mut self.compact))
            .filter(|&k| k != format::IR)
            .filter(|_| replicated.is_none_or(|_| self.mirrored.len() < out.len()));
        if !start {
            ctx.repair_mirrored = mirrored.is_some();
        }
        let kind;
        (kind, ctx.depth) = match (mirrored, replicated) {
            (Some(kind), _) => {
                core::mem::swap(out, &mut self.mirrored);
                self.stats.mirrored_irs += 1;
                (kind, 0)
            }
            (None, Some(k)) => k,
            (None, None) => (write_ir(ctx, p, cid, None, out, &mut self.compact), 0),
        };
        if ctx.strides != strides {
            // The IR frame dropped the strides (an urgent pointer in use).
            ctx.issued.clear();
        }
        ctx.issued.sent(p.checksum);
        ctx.irs_due = ctx.irs_due.saturating_sub(1);
        ctx.full_only &= ctx.irs_due > 0;
        if ctx.outer.as_ref().is_some_and(Outer::is_v4) {
            ctx.predictors.sent_ir(outer_id, p.fields.ip_id);
        }
        // A full header may start the far decompressor's context afresh (after its restart,
        // say), which then tells its sibling compressor the numbers of its first packets: this
        // one and the next are noted again, so that a mirrored IR coded against them resolves.
        ctx.numbers_noted = 0;
        self.stats.count(why);
        self.stats
            .add_part(Part::FullHeader, (out.len() + 1 - p.payload_len()) as u64);
        kind
    }

    /// What the context keeps of `p` (sent as `sent`, CO if `compressed`): a window entry (and
    /// a horizon sample without a reverse channel), the tracked window, the pruned window.
    #[inline(always)]
    fn keep(
        &mut self,
        ctx: &mut Context,
        p: &TcpIpPacket<'_>,
        sent: &Fields,
        compressed: bool,
        outer_id: u16,
    ) {
        ctx.rescale();
        let len = sent.seq.wrapping_sub(p.fields.seq);
        let mut derived = ctx.scaler.derive_entry(sent, len);
        if ctx.outer.as_ref().is_some_and(Outer::is_v4) {
            derived = derived.with_outer(outer_id.wrapping_sub(p.fields.ip_id));
        }
        let own = derived;
        let derived = if ctx.behaviour.is_counter() {
            ipid::window_offset(&ctx.vsw, sent, derived, compressed)
        } else {
            derived
        };
        let entry = Entry {
            fields: *sent,
            has_payload: p.payload_len() > 0,
            uncompressed: !compressed,
        };
        ctx.vsw.push_with(entry, derived);
        if !self.config.repair.context_requests {
            ctx.since_sample += 1;
            // Every IR frame too: it is the reference of a decompressor that lost what
            // followed it (a restart's IR frames, say). And every packet whose window entry
            // keeps another's IP-ID offset (a retransmission), with its own: a decompressor
            // takes it as its reference only after missing a window's worth of packets (a
            // link's first burst as well as a later one), which is what the horizon is for.
            let sampled = ctx.since_sample >= HORIZON_STEP || !compressed;
            if sampled {
                ctx.since_sample = 0;
            }
            if sampled || derived != own {
                ctx.horizon.push_with(entry, own);
            }
        }
        ctx.seq.on_segment(p.fields.seq);
        ctx.ack.on_segment(p.fields.ack);
        let w = ctx.window(self.config.k);
        ctx.vsw.prune(w);
        if compressed && ctx.vsw.len() == 1 {
            // The window shrank to this one packet: if it is lost, nothing the decompressor
            // holds is a reference. Start again.
            self.stats.long_jumps += 1;
            ctx.irs_due = self.start_irs();
            ctx.spread_due = self.spreads();
            ctx.held_far = false;
            ctx.issued.clear();
        }
    }
}
