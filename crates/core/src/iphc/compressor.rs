//! The IPHC compressor: one per link direction.

use alloc::vec::Vec;
use core::time::Duration;

use taroc_wire::checksum::Sum;

use super::chain::{self, Layout};
use super::cid::CidTable;
use super::full_header::{self, FullId};
use super::non_tcp::{self, Refresh, Send};
use super::tcp::{self, NotCompressible};
use super::tcp_context::TcpContext as DecompressorContext;
use super::{feedback, IphcConfig, HAZARD_DEPTH};
use crate::codec::{Compressor, FrameKind};
use taroc_wire::tcp::flags as tcp_flag;

/// What the compressor remembers of a TCP stream: the header as the decompressor holds it, and
/// the decompressor's context after each of the last packets.
#[derive(Debug, Clone)]
struct TcpContext {
    /// The chain of the last packet sent, with the Reserved bits and ECN of the context (an
    /// R-octet does not update them).
    header: Vec<u8>,
    /// Its layout.
    layout: Layout,
    /// The payload length of the last packet sent.
    last_payload: usize,
    /// One past the highest sequence number sent (retransmission detection).
    high_seq: u32,
    /// A header request named this CID: the next packet goes as a FULL_HEADER.
    needs_full: bool,
    /// The decompressor's context after each of the last [`HAZARD_DEPTH`] + 1 packets sent:
    /// where a decompressor that lost the packets after one of them would be.
    shadow: Shadow,
}

/// The decompressor's context after each of the last [`HAZARD_DEPTH`] + 1 packets sent, in a
/// ring whose slots keep their buffers: once every slot exists, a new context is copied into
/// the oldest one (`clone_from`) and updated there, without allocating.
#[derive(Debug, Clone, Default)]
struct Shadow {
    /// The slots, created as needed up to [`Shadow::DEPTH`]. Those past the contexts held
    /// (after [`Shadow::clear`]) are spare storage.
    slots: Vec<DecompressorContext>,
    /// The slot of the oldest context.
    head: usize,
    /// How many contexts are held.
    len: usize,
}

impl Shadow {
    /// How many contexts the shadow holds at most.
    const DEPTH: usize = HAZARD_DEPTH + 1;

    /// The slot of the `i`-th oldest context.
    fn slot(&self, i: usize) -> usize {
        (self.head + i) % Self::DEPTH
    }

    /// Every context but the newest, newest first: where a decompressor that lost the last
    /// packet, the last two, … would be.
    fn older(&self) -> impl Iterator<Item = &DecompressorContext> {
        (0..self.len.saturating_sub(1))
            .rev()
            .map(|i| &self.slots[self.slot(i)])
    }

    /// Appends a copy of the newest context, dropping the oldest if the shadow is full, and
    /// returns it for updating; `None` (and nothing changed) if the shadow is empty.
    fn push_copy(&mut self) -> Option<&mut DecompressorContext> {
        let newest = self.slot(self.len.checked_sub(1)?);
        let at = self.slot(self.len);
        if at == self.slots.len() {
            let copy = self.slots[newest].clone();
            self.slots.push(copy);
        } else {
            // Two distinct slots (DEPTH > 1): split the borrow.
            let (to, from) = if at < newest {
                let (low, high) = self.slots.split_at_mut(newest);
                (&mut low[at], &high[0])
            } else {
                let (low, high) = self.slots.split_at_mut(at);
                (&mut high[0], &low[newest])
            };
            to.clone_from(from);
        }
        self.advance();
        Some(&mut self.slots[at])
    }

    /// Appends the context FULL_HEADER `packet` (restored) with chain `layout` sets, from the
    /// newest (see [`DecompressorContext::set_full`]), dropping the oldest if the shadow is full.
    fn push_full(&mut self, packet: &[u8], layout: &Layout) {
        if let Some(ctx) = self.push_copy() {
            ctx.set_full(packet, layout, true);
        } else if let Some(ctx) = self.slots.first_mut() {
            // Empty, with spare storage (head is 0).
            ctx.set_full(packet, layout, false);
            self.len = 1;
        } else {
            self.slots
                .push(DecompressorContext::from_full(packet, layout));
            self.len = 1;
        }
    }

    /// Counts the context just written after the newest one in.
    fn advance(&mut self) {
        if self.len == Self::DEPTH {
            self.head = self.slot(1);
        } else {
            self.len += 1;
        }
    }

    /// Forgets every context (keeping the slots' storage).
    fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
}

/// What to send for a TCP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    /// COMPRESSED_TCP with these changes.
    Compressed(tcp::Changes),
    /// COMPRESSED_TCP_NODELTA.
    NoDelta,
    /// FULL_HEADER on the stream's CID.
    Full,
    /// FULL_HEADER for a stream without a context.
    New,
    /// FULL_HEADER on another CID: the packet changes a field the TCP checksum does not cover
    /// (an IP-level NOCHANGE field, or the ECN field, which only full headers update), and a loss
    /// of this full header must not leave the decompressor rebuilding the old value.
    Move,
}

/// Decides the format of `packet` against the context `ctx` of its stream.
fn decide(ctx: &TcpContext, packet: &[u8], layout: &Layout, config: &IphcConfig) -> Decision {
    let Some(t) = layout.tcp else {
        return Decision::New;
    };
    let _ = t;
    if !chain::same_ip_context(&ctx.layout, &ctx.header, layout, packet) {
        return Decision::Move;
    }
    let decision = if ctx.needs_full
        || ctx.layout != *layout
        || (config.full_on_repeat && tcp::repeats(packet, &ctx.header, layout))
    {
        Decision::Full
    } else {
        match tcp::changes(packet, &ctx.header, layout, ctx.last_payload, ctx.high_seq) {
            Ok(_) if config.expect_reordering => Decision::NoDelta,
            Ok(c) => Decision::Compressed(c),
            Err(NotCompressible::NoDelta) => Decision::NoDelta,
            Err(NotCompressible::Full) => Decision::Full,
        }
    };
    // Neither a NODELTA nor a full header may change the ECN field silently: NODELTA cannot
    // carry it, and a full header that changes it moves the stream.
    match decision {
        Decision::NoDelta | Decision::Full if !chain::ecn_eq(layout, &ctx.header, packet) => {
            Decision::Move
        }
        d => d,
    }
}

/// What the compressor remembers of a non-TCP stream.
#[derive(Debug, Clone)]
struct NonTcpContext {
    /// The chain of the full header that set the context.
    header: Vec<u8>,
    /// Its layout.
    layout: Layout,
    /// Slow-start and refresh state.
    refresh: Refresh,
}

/// The IPHC compressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct IphcCompressor {
    config: IphcConfig,
    /// The time last given to [`Compressor::set_time`].
    now: Duration,
    tcp: CidTable<TcpContext>,
    non_tcp: CidTable<NonTcpContext>,
    /// Scratch: the layout of the packet being compressed.
    layout: Layout,
    /// Scratch: the stream key of the packet being compressed.
    key: Vec<u8>,
    /// Scratch: packets rebuilt by the shadow decompressor.
    scratch: Vec<u8>,
    /// Scratch: the layout of a NODELTA packet rebuilt by the shadow decompressor.
    rebuilt: Layout,
}

impl IphcCompressor {
    /// A compressor with no connection state.
    pub fn new(config: IphcConfig) -> IphcCompressor {
        IphcCompressor {
            tcp: CidTable::new(u16::from(config.tcp_space)),
            non_tcp: CidTable::new(config.non_tcp_space),
            config,
            now: Duration::ZERO,
            layout: Layout::default(),
            key: Vec::new(),
            scratch: Vec::new(),
            rebuilt: Layout::default(),
        }
    }

    /// Compresses a packet of a TCP stream whose chain `layout` passed the checks.
    fn compress_tcp(&mut self, packet: &[u8], layout: &Layout, out: &mut Vec<u8>) -> FrameKind {
        let space = u16::from(self.config.tcp_space);
        let (mut cid, fresh) = self.tcp.assign(&self.key, space);
        let slot = self.tcp.slot_mut(cid).expect("an assigned CID has a slot");
        let mut decision = match &slot.ctx {
            Some(ctx) if !fresh => decide(ctx, packet, layout, &self.config),
            _ => Decision::New,
        };
        if let (Decision::Compressed(changes), Some(ctx)) = (decision, &slot.ctx) {
            tcp::emit_compressed(out, cid as u8, &changes, packet, layout);
            // A decompressor that lost the last few packets must deliver this one exactly or
            // refuse it: otherwise it goes whole (NODELTA, or a full header if the ECN field
            // differs from the context's, which NODELTA cannot carry).
            let scratch = &mut self.scratch;
            let payload_sum = Sum::new().add_bytes(&packet[layout.len..]);
            let hazard = ctx.shadow.older().any(|old| {
                old.rebuilds_wrongly(&self.config, &out[1..], packet, payload_sum, scratch)
            });
            if hazard {
                out.clear();
                decision = if chain::ecn_eq(layout, &ctx.header, packet) {
                    Decision::NoDelta
                } else {
                    Decision::Move
                };
            }
        }
        if let (Decision::NoDelta, Some(ctx)) = (decision, &slot.ctx) {
            tcp::emit_nodelta(out, cid as u8, packet, layout);
            // NODELTA takes the IP-level fields from the context: a decompressor still holding
            // an older context of the CID must not rebuild this packet with other ones.
            let scratch = &mut self.scratch;
            let rebuilt = &mut self.rebuilt;
            let max_header = self.config.max_header_len();
            let hazard = ctx.shadow.older().any(|old| {
                old.rebuild_nodelta(max_header, &out[1..], scratch, rebuilt)
                    .is_ok()
                    && scratch != packet
            });
            out.clear();
            if hazard {
                decision = Decision::Full;
            }
        }
        if decision == Decision::Move {
            cid = self.tcp.reassign(&self.key, space, cid);
            decision = Decision::New;
        }
        let slot = self.tcp.slot_mut(cid).expect("an assigned CID has a slot");
        let cid8 = cid as u8;
        let flags = tcp::tcp_flags(packet, layout);
        let now = tcp::read_fields(packet, layout);
        let payload = packet.len() - layout.len;
        let seg_end = now
            .seq
            .wrapping_add(payload as u32)
            .wrapping_add(u32::from(flags & tcp_flag::SYN != 0))
            .wrapping_add(u32::from(flags & tcp_flag::FIN != 0));
        let kind = match decision {
            Decision::Compressed(_) => FrameKind::CompressedTcp,
            Decision::NoDelta => FrameKind::CompressedTcpNoDelta,
            Decision::Full | Decision::New | Decision::Move => FrameKind::FullHeader,
        };
        match kind {
            FrameKind::CompressedTcp => {
                let ctx = slot.ctx.as_mut().expect("compressed against a context");
                let kept = tcp::r_octet(&ctx.header, layout);
                ctx.header.clear();
                ctx.header.extend_from_slice(&packet[..layout.len]);
                tcp::apply_r_octet(&mut ctx.header, layout, kept);
            }
            FrameKind::CompressedTcpNoDelta => {
                tcp::emit_nodelta(out, cid8, packet, layout);
                let ctx = slot.ctx.as_mut().expect("NODELTA against a context");
                ctx.header.clear();
                ctx.header.extend_from_slice(&packet[..layout.len]);
            }
            _ => {
                out.extend_from_slice(packet);
                let written = full_header::write(out, layout, FullId::Tcp { cid: cid8 });
                debug_assert!(written, "a TCP chain has an IP length field");
                // A new stream on the CID inherits the decompressor states of the CID's last
                // stream: a decompressor that loses this full header still holds one of them.
                match &mut slot.ctx {
                    Some(ctx) => {
                        if decision != Decision::Full || flags & tcp_flag::SYN != 0 {
                            ctx.high_seq = seg_end;
                        }
                        ctx.header.clear();
                        ctx.header.extend_from_slice(&packet[..layout.len]);
                        ctx.layout.clone_from(layout);
                        ctx.last_payload = 0;
                        ctx.needs_full = false;
                    }
                    None => {
                        slot.ctx = Some(TcpContext {
                            header: packet[..layout.len].to_vec(),
                            layout: layout.clone(),
                            last_payload: 0,
                            high_seq: seg_end,
                            needs_full: false,
                            shadow: Shadow::default(),
                        });
                    }
                }
            }
        }
        let ctx = slot.ctx.as_mut().expect("a context after sending");
        ctx.last_payload = payload;
        if (seg_end.wrapping_sub(ctx.high_seq) as i32) > 0 {
            ctx.high_seq = seg_end;
        }
        // The decompressor's context after this packet, if nothing was lost, written over the
        // oldest.
        let scratch = &mut self.scratch;
        let rebuilt = &mut self.rebuilt;
        let followed = match kind {
            FrameKind::FullHeader => {
                ctx.shadow.push_full(packet, layout);
                true
            }
            FrameKind::CompressedTcp => ctx.shadow.push_copy().is_some_and(|next| {
                next.rebuild(&self.config, &out[1..], scratch)
                    .ok()
                    .filter(|_| scratch == packet)
                    .map(|r| next.commit(&r, scratch))
                    .is_some()
            }),
            FrameKind::CompressedTcpNoDelta => ctx.shadow.push_copy().is_some_and(|next| {
                next.rebuild_nodelta(self.config.max_header_len(), &out[1..], scratch, rebuilt)
                    .ok()
                    .filter(|_| scratch == packet)
                    .map(|()| next.commit_nodelta(rebuilt, scratch))
                    .is_some()
            }),
            _ => false,
        };
        if !followed {
            // The decompressor would not rebuild what was sent: cannot happen; were it to, a
            // full header resynchronises both ends.
            debug_assert!(false, "the decompressor rebuilds what the compressor sent");
            ctx.shadow.clear();
            ctx.needs_full = true;
        }
        kind
    }

    /// Compresses a packet of a non-TCP stream whose chain `layout` passed the checks; `None`
    /// sends it as `TYPE_IP`.
    fn compress_non_tcp(
        &mut self,
        packet: &[u8],
        layout: &Layout,
        out: &mut Vec<u8>,
    ) -> Option<FrameKind> {
        // A 16-bit CID needs two length fields in the full header (section 5.3).
        let limit = if layout.lengths.len() >= 2 {
            self.config.non_tcp_space
        } else {
            self.config.non_tcp_space.min(255)
        };
        let (cid, fresh) = self.non_tcp.assign(&self.key, limit);
        let slot = self
            .non_tcp
            .slot_mut(cid)
            .expect("an assigned CID has a slot");
        let changed = match &slot.ctx {
            Some(ctx) => {
                fresh || ctx.layout != *layout || !chain::nochange_eq(layout, &ctx.header, packet)
            }
            None => true,
        };
        let full = if changed {
            if !slot.generation.advance(self.now) {
                // The next generation value was used less than MIN_WRAP ago.
                slot.ctx = None;
                return None;
            }
            let header = &packet[..layout.len];
            let refresh = Refresh::after_change(self.now);
            match &mut slot.ctx {
                Some(ctx) => {
                    ctx.header.clear();
                    ctx.header.extend_from_slice(header);
                    ctx.layout.clone_from(layout);
                    ctx.refresh = refresh;
                }
                None => {
                    slot.ctx = Some(NonTcpContext {
                        header: header.to_vec(),
                        layout: layout.clone(),
                        refresh,
                    });
                }
            }
            true
        } else {
            let ctx = slot.ctx.as_mut().expect("checked above");
            ctx.refresh
                .next(self.now, self.config.f_max_period, self.config.f_max_time)
                == Send::Full
        };
        let generation = slot.generation.value;
        if full {
            out.extend_from_slice(packet);
            let id = FullId::NonTcp { cid, generation };
            if !full_header::write(out, layout, id) {
                slot.ctx = None;
                return None;
            }
            Some(FrameKind::FullHeader)
        } else {
            non_tcp::emit_header(out, cid, generation);
            tcp::put_random(out, packet, layout);
            out.extend_from_slice(&packet[layout.len..]);
            Some(FrameKind::CompressedNonTcp)
        }
    }
}

impl Compressor for IphcCompressor {
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        out.clear();
        let mut layout = core::mem::take(&mut self.layout);
        let kind = if chain::parse(packet, self.config.max_header_len(), &mut layout)
            && chain::compressible(packet, &layout)
        {
            chain::stream_key(packet, &layout, &mut self.key);
            if layout.tcp.is_some() {
                Some(self.compress_tcp(packet, &layout, out))
            } else {
                self.compress_non_tcp(packet, &layout, out)
            }
        } else {
            None
        };
        self.layout = layout;
        kind.unwrap_or_else(|| {
            out.clear();
            out.extend_from_slice(packet);
            FrameKind::Ip
        })
    }

    fn set_time(&mut self, now: Duration) {
        self.now = now;
    }

    fn handle_feedback(&mut self, frame: &[u8]) {
        let Some(cids) = feedback::parse(frame) else {
            return;
        };
        for &cid in cids {
            if let Some(ctx) = self
                .tcp
                .slot_mut(u16::from(cid))
                .and_then(|slot| slot.ctx.as_mut())
            {
                ctx.needs_full = true;
            }
        }
    }
}
