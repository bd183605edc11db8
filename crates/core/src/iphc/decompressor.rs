//! The IPHC decompressor: one per link direction. It rebuilds each packet from its context and
//! delivers it only if its checksums verify (TCP always, UDP when not zero, IPv4 headers of full
//! headers); a TCP context that fails is repaired with the twice algorithm or marked damaged and
//! requested again (see the module documentation of [`super`] for the readings).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::chain::{self, Layout};
use super::full_header::{self, FullId};
use super::tcp::{self, flag, tcp_flag, TcpFields};
use super::{feedback, non_tcp, IphcConfig};
use super::{REQUEST_REPEAT_FIRST, REQUEST_REPEAT_MAX, TWICE_MAX_MULTIPLE};
use crate::codec::{deliver_unchanged, Decompressor, DropReason, FrameKind};

/// How many recent ACK deltas the twice extension keeps to estimate an ACK stream's segment size.
const ACK_HISTORY: usize = 4;

/// A TCP context of the decompressor.
#[derive(Debug, Clone)]
struct TcpContext {
    /// The chain of the last packet delivered, with the Reserved bits and ECN of the context.
    header: Vec<u8>,
    /// Its layout.
    layout: Layout,
    /// The payload length of the last packet delivered (RFC 1144's special encodings).
    last_payload: usize,
    /// No candidate verified: drop compressed headers until a FULL_HEADER or NODELTA.
    damaged: bool,
    /// The largest payload seen: the data segment size for the twice extension.
    segment: u32,
    /// The last positive ACK deltas of segments without data, newest at `ack_at - 1`.
    ack_deltas: [u32; ACK_HISTORY],
    /// Where the next ACK delta goes.
    ack_at: usize,
    /// The IPv4 Identification delta of the last compressed packet (IPv4 before TCP only).
    ip_id_delta: Option<u16>,
}

impl TcpContext {
    fn new(header: &[u8], layout: Layout, payload: usize) -> TcpContext {
        TcpContext {
            header: header[..layout.len].to_vec(),
            layout,
            last_payload: payload,
            damaged: false,
            segment: payload as u32,
            ack_deltas: [0; ACK_HISTORY],
            ack_at: 0,
            ip_id_delta: None,
        }
    }

    /// The ACK stream's segment size: the smallest recent ACK delta, if any.
    fn ack_unit(&self) -> u32 {
        self.ack_deltas
            .iter()
            .copied()
            .filter(|&d| d > 0)
            .min()
            .unwrap_or(0)
    }
}

/// A non-TCP context of the decompressor.
#[derive(Debug, Clone)]
struct NonTcpContext {
    header: Vec<u8>,
    layout: Layout,
    generation: u8,
}

/// The header-request state of one TCP CID.
#[derive(Debug, Clone, Copy, Default)]
struct Request {
    /// A request was queued since the context was last repaired.
    requested: bool,
    /// Packets of the CID dropped since the last request.
    drops: u32,
    /// Drops after which the request is repeated.
    interval: u32,
}

/// How the IPv4 Identification of a repaired packet can be known (see [`super`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdMode {
    /// No delta-coded IPv4 Identification, or one that stays constant: any guess fixes it.
    Free,
    /// One per packet: only guesses that fix the number of lost packets (data segments).
    Counting,
    /// Irregular: no guess can know it.
    Unknown,
}

/// One guess of what the lost packets changed, added to the context before the current deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Lost {
    seq: u32,
    ack: u32,
    window: u16,
    ip_id: u16,
}

/// The guesses the twice algorithm tries, plain decompression first.
#[derive(Debug, Clone, Copy)]
struct Guesses {
    list: [Lost; 2 + 2 * TWICE_MAX_MULTIPLE as usize],
    len: usize,
}

impl Guesses {
    fn push(&mut self, guess: Lost) {
        if self.len < self.list.len() && !self.list[..self.len].contains(&guess) {
            self.list[self.len] = guess;
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[Lost] {
        &self.list[..self.len]
    }
}

/// The IPHC decompressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct IphcDecompressor {
    config: IphcConfig,
    /// TCP contexts by CID (0..=TCP_SPACE).
    tcp: Vec<Option<TcpContext>>,
    /// Header-request state by TCP CID.
    requests: Vec<Request>,
    /// Non-TCP contexts by CID.
    non_tcp: BTreeMap<u16, NonTcpContext>,
    /// TCP CIDs to request, in order.
    pending: Vec<u8>,
}

impl IphcDecompressor {
    /// A decompressor with no connection state.
    pub fn new(config: IphcConfig) -> IphcDecompressor {
        let cids = usize::from(config.tcp_space) + 1;
        IphcDecompressor {
            tcp: (0..cids).map(|_| None).collect(),
            requests: alloc::vec![Request::default(); cids],
            non_tcp: BTreeMap::new(),
            pending: Vec::new(),
            config,
        }
    }

    /// Notes a dropped compressed packet of TCP CID `cid`; `newly_damaged` if its context has
    /// just become damaged. Queues a header request when the rate limit allows.
    fn note_drop(&mut self, cid: u8, newly_damaged: bool) {
        if !self.config.header_requests {
            return;
        }
        let state = &mut self.requests[usize::from(cid)];
        let request = if newly_damaged || !state.requested {
            *state = Request {
                requested: true,
                drops: 0,
                interval: REQUEST_REPEAT_FIRST,
            };
            true
        } else {
            state.drops += 1;
            if state.drops >= state.interval {
                state.drops = 0;
                state.interval = (state.interval * 2).min(REQUEST_REPEAT_MAX);
                true
            } else {
                false
            }
        };
        if request && !self.pending.contains(&cid) {
            self.pending.push(cid);
        }
    }

    /// Notes that TCP CID `cid` has a sound context again.
    fn repaired(&mut self, cid: u8) {
        self.requests[usize::from(cid)] = Request::default();
        self.pending.retain(|&c| c != cid);
    }

    fn full_header(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let mut layout = Layout::default();
        if !chain::parse(frame, self.config.max_header(), &mut layout) {
            return Err(DropReason::Malformed);
        }
        let id = full_header::read(frame, &layout)?;
        out.extend_from_slice(frame);
        if !chain::fill_lengths(out, &layout) || !chain::verifies(out, &layout) {
            return Err(DropReason::Malformed);
        }
        let payload = out.len() - layout.len;
        match id {
            FullId::Tcp { cid } => {
                let slot = self
                    .tcp
                    .get_mut(usize::from(cid))
                    .ok_or(DropReason::Malformed)?;
                let mut ctx = TcpContext::new(out, layout, payload);
                if let Some(old) = slot.as_ref() {
                    // Same stream (a refresh): keep what was learnt of its segment sizes.
                    if old.layout == ctx.layout
                        && chain::nochange_eq(&ctx.layout, &old.header, &ctx.header)
                    {
                        ctx.segment = ctx.segment.max(old.segment);
                        ctx.ack_deltas = old.ack_deltas;
                        ctx.ack_at = old.ack_at;
                    }
                }
                *slot = Some(ctx);
                self.repaired(cid);
            }
            FullId::NonTcp { cid, generation } => {
                if cid > self.config.non_tcp_space {
                    return Err(DropReason::Malformed);
                }
                self.non_tcp.insert(
                    cid,
                    NonTcpContext {
                        header: out[..layout.len].to_vec(),
                        layout,
                        generation,
                    },
                );
            }
        }
        Ok(())
    }

    fn compressed_tcp(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let (&cid, rest) = frame.split_first().ok_or(DropReason::Malformed)?;
        let Some(slot) = self.tcp.get_mut(usize::from(cid)) else {
            return Err(DropReason::Malformed);
        };
        let Some(ctx) = slot.as_mut() else {
            self.note_drop(cid, false);
            return Err(DropReason::NoContext);
        };
        if ctx.damaged {
            self.note_drop(cid, false);
            return Err(DropReason::ChecksumMismatch);
        }
        let c = tcp::parse_compressed(rest, &ctx.layout)?;
        let layout = &ctx.layout;
        let t = layout.tcp.ok_or(DropReason::Malformed)?;
        let before = tcp::read_fields(&ctx.header, layout);

        // Everything but the DELTA fields, which the guesses vary.
        out.extend_from_slice(&ctx.header);
        tcp::write_random(out, layout, c.random);
        let special = c.special();
        let mut flags = (ctx.header[t.start + 13] & 0xC0) | tcp_flag::ACK;
        if c.mask & flag::P != 0 {
            flags |= tcp_flag::PSH;
        }
        if special.is_none() && c.mask & flag::U != 0 {
            flags |= tcp_flag::URG;
        }
        out[t.start + 13] = flags;
        out[t.start + 16..t.start + 18].copy_from_slice(&c.checksum);
        let urgent = c.urgent.unwrap_or(before.urgent);
        out[t.start + 18..t.start + 20].copy_from_slice(&urgent.to_be_bytes());
        if let Some(r) = c.r_octet {
            tcp::apply_r_octet(out, layout, r);
        }
        if let Some(options) = c.options {
            out[t.start + 20..t.start + t.header_len].copy_from_slice(options);
        }
        out.extend_from_slice(c.payload);
        if !chain::fill_lengths(out, layout) {
            return Err(DropReason::Malformed);
        }

        let last = ctx.last_payload as u32;
        let (seq, ack) = match special {
            Some(flag::SPECIAL_I) => (last, last),
            Some(_) => (last, 0),
            None => (c.seq, c.ack),
        };
        let delta = Lost {
            seq,
            ack,
            window: c.window,
            ip_id: c.ip_id,
        };
        let payload = c.payload.len();
        // The checksum of everything but sequence number, acknowledgment number and window.
        let base = t
            .pseudo_header(out, taroc_wire::protocol::TCP, out.len())
            .add_bytes(&out[t.start..t.start + 4])
            .add_bytes(&out[t.start + 12..t.start + 14])
            .add_bytes(&out[t.start + 16..]);
        let guesses = guesses(&self.config, ctx, &delta, special, payload);
        let found = guesses.as_slice().iter().find_map(|lost| {
            let f = TcpFields {
                seq: before.seq.wrapping_add(lost.seq).wrapping_add(delta.seq),
                ack: before.ack.wrapping_add(lost.ack).wrapping_add(delta.ack),
                window: before
                    .window
                    .wrapping_add(lost.window)
                    .wrapping_add(delta.window),
                urgent,
                ip_id: before
                    .ip_id
                    .wrapping_add(lost.ip_id)
                    .wrapping_add(delta.ip_id),
            };
            base.add_u32(f.seq)
                .add_u32(f.ack)
                .add_u16(f.window)
                .verifies()
                .then_some(f)
        });
        let Some(fields) = found else {
            ctx.damaged = true;
            self.note_drop(cid, true);
            return Err(DropReason::ChecksumMismatch);
        };
        tcp::write_fields(out, layout, &fields);
        chain::fill_ipv4_checksums(out, layout);

        // The delivered header becomes the context, but for what an R-octet carried.
        let kept = tcp::r_octet(&ctx.header, layout);
        let len = layout.len;
        ctx.header.copy_from_slice(&out[..len]);
        tcp::apply_r_octet(&mut ctx.header, &ctx.layout, kept);
        ctx.last_payload = payload;
        if payload > 0 {
            ctx.segment = ctx.segment.max(payload as u32);
        } else if delta.ack > 0 {
            ctx.ack_deltas[ctx.ack_at % ACK_HISTORY] = delta.ack;
            ctx.ack_at = (ctx.ack_at + 1) % ACK_HISTORY;
        }
        if ctx.layout.ipv4_id.is_some() {
            ctx.ip_id_delta = Some(delta.ip_id);
        }
        Ok(())
    }

    fn nodelta(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let (&cid, mut rest) = frame.split_first().ok_or(DropReason::Malformed)?;
        let Some(slot) = self.tcp.get_mut(usize::from(cid)) else {
            return Err(DropReason::Malformed);
        };
        let Some(ctx) = slot.as_mut() else {
            self.note_drop(cid, false);
            return Err(DropReason::NoContext);
        };
        let layout = &ctx.layout;
        let t = layout.tcp.ok_or(DropReason::Malformed)?;
        let random_len = layout.random_len();
        let id_len = if layout.ipv4_id.is_some() { 2 } else { 0 };
        if rest.len() < random_len + id_len + 16 {
            return Err(DropReason::Malformed);
        }
        let (random, after) = rest.split_at(random_len + id_len);
        rest = after;
        let header_len = usize::from(rest[8] >> 4) * 4;
        if header_len < 20 || rest.len() < header_len - 4 {
            return Err(DropReason::Malformed);
        }
        out.extend_from_slice(&ctx.header[..t.start + 4]);
        tcp::write_random(out, layout, &random[..random_len]);
        if let Some(at) = layout.ipv4_id {
            out[at..at + 2].copy_from_slice(&random[random_len..]);
        }
        out.extend_from_slice(rest);
        let mut new = Layout::default();
        if !chain::parse(out, self.config.max_header(), &mut new)
            || new.tcp.map(|n| n.start) != Some(t.start)
            || !chain::fill_lengths(out, &new)
        {
            return Err(DropReason::Malformed);
        }
        chain::fill_ipv4_checksums(out, &new);
        if !chain::transport_verifies(out, &new) {
            let newly = !ctx.damaged;
            ctx.damaged = true;
            self.note_drop(cid, newly);
            return Err(DropReason::ChecksumMismatch);
        }
        ctx.header.clear();
        ctx.header.extend_from_slice(&out[..new.len]);
        ctx.layout = new;
        ctx.last_payload = out.len() - ctx.layout.len;
        ctx.damaged = false;
        ctx.ip_id_delta = None;
        self.repaired(cid);
        Ok(())
    }

    fn compressed_non_tcp(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let h = non_tcp::parse_header(frame)?;
        if h.cid > self.config.non_tcp_space {
            return Err(DropReason::Malformed);
        }
        let ctx = self.non_tcp.get(&h.cid).ok_or(DropReason::NoContext)?;
        if ctx.generation != h.generation {
            return Err(DropReason::NoContext);
        }
        let rest = &frame[h.len..];
        let random_len = ctx.layout.random_len();
        if rest.len() < random_len {
            return Err(DropReason::Malformed);
        }
        out.extend_from_slice(&ctx.header);
        tcp::write_random(out, &ctx.layout, &rest[..random_len]);
        out.extend_from_slice(&rest[random_len..]);
        if !chain::fill_lengths(out, &ctx.layout) {
            return Err(DropReason::Malformed);
        }
        chain::fill_ipv4_checksums(out, &ctx.layout);
        if !chain::transport_verifies(out, &ctx.layout) {
            return Err(DropReason::ChecksumMismatch);
        }
        Ok(())
    }
}

/// The guesses for a compressed TCP header with deltas `delta` (`special` if they came from an
/// RFC 1144 special encoding) and `payload` octets of data against context `ctx`: plain
/// decompression, then twice, then, with the extension, the segment-size guesses (see
/// [`super`]).
fn guesses(
    config: &IphcConfig,
    ctx: &TcpContext,
    delta: &Lost,
    special: Option<u8>,
    payload: usize,
) -> Guesses {
    let mut g = Guesses {
        list: [Lost::default(); 2 + 2 * TWICE_MAX_MULTIPLE as usize],
        len: 0,
    };
    g.push(Lost::default());
    if !config.twice {
        return g;
    }
    let mode = match ctx.layout.ipv4_id {
        None => IdMode::Free,
        Some(_) if ctx.ip_id_delta.is_some_and(|d| d != delta.ip_id) => IdMode::Unknown,
        Some(_) => match delta.ip_id {
            0 => IdMode::Free,
            1 => IdMode::Counting,
            _ => IdMode::Unknown,
        },
    };
    let data = payload > 0;
    if mode == IdMode::Unknown || (!data && mode == IdMode::Counting) {
        return g;
    }
    if delta.seq != 0 || delta.ack != 0 || delta.window != 0 {
        // Twice: one lost packet with the deltas of this one.
        g.push(*delta);
    }
    if !config.twice_segment_multiples {
        return g;
    }
    let segment = ctx.segment;
    let last = ctx.last_payload as u32;
    if data && special != Some(flag::SPECIAL_I) {
        // m lost data segments, contiguous: the first starts where the context's segment ends
        // and the last one's length is this packet's sequence delta; those in between are
        // full-sized. With SPECIAL_D the delta was taken as the context's payload, so the
        // lost segments are m full-sized ones.
        for m in 1..=TWICE_MAX_MULTIPLE {
            let seq = if special.is_some() {
                m.wrapping_mul(segment)
            } else {
                last.wrapping_add((m - 1).wrapping_mul(segment))
            };
            g.push(Lost {
                seq,
                ack: 0,
                window: 0,
                ip_id: (m as u16).wrapping_mul(delta.ip_id),
            });
        }
    } else if !data && delta.ack != 0 && ctx.ack_unit() > 0 {
        // One lost ACK of k segments (the paper's multiples of the segment size).
        for k in 1..=TWICE_MAX_MULTIPLE {
            g.push(Lost {
                seq: 0,
                ack: k.wrapping_mul(ctx.ack_unit()),
                window: 0,
                ip_id: delta.ip_id,
            });
        }
    }
    g
}

impl Decompressor for IphcDecompressor {
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        out.clear();
        let result = match kind {
            FrameKind::Ip => return deliver_unchanged(frame, out),
            FrameKind::FullHeader => self.full_header(frame, out),
            FrameKind::CompressedTcp => self.compressed_tcp(frame, out),
            FrameKind::CompressedTcpNoDelta => self.nodelta(frame, out),
            FrameKind::CompressedNonTcp => self.compressed_non_tcp(frame, out),
            FrameKind::UncompressedTcp | FrameKind::ContextState => Err(DropReason::UnknownKind),
        };
        if result.is_err() {
            out.clear();
        }
        result
    }

    fn take_feedback(&mut self, out: &mut Vec<u8>) -> bool {
        out.clear();
        if self.pending.is_empty() {
            return false;
        }
        let n = feedback::emit(out, &self.pending);
        self.pending.drain(..n);
        true
    }
}
