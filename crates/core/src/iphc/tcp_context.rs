//! A TCP context of the IPHC decompressor: the last packet delivered, what the twice
//! algorithm and its extension learn from it, and how a COMPRESSED_TCP or NODELTA header is
//! rebuilt against it (plain decompression, then the twice guesses) and committed.

use alloc::vec::Vec;

use taroc_wire::checksum::Sum;

use super::chain::{self, Layout};
use super::tcp::{self, flag, TcpFields};
use super::{purity, IphcConfig};
use super::{PURE_STREAM_PACKETS, TWICE_MAX_MULTIPLE};
use crate::codec::DropReason;
use taroc_wire::tcp::flags as tcp_flag;

/// How many recent ACK deltas the twice extension keeps to estimate an ACK stream's segment size.
const ACK_HISTORY: usize = 4;

/// A TCP context of the decompressor. The compressor keeps copies of it too (its *shadow* of
/// the decompressor, [`super::compressor`]), updated by the same code; its `clone_from` reuses
/// the target's buffers.
#[derive(Debug)]
pub(crate) struct TcpContext {
    /// The chain of the last packet delivered, with the Reserved bits and ECN of the context.
    header: Vec<u8>,
    /// Its layout.
    layout: Layout,
    /// The payload length of the last packet delivered (RFC 1144's special encodings).
    last_payload: usize,
    /// No candidate verified: drop compressed headers until a FULL_HEADER or NODELTA.
    pub(crate) damaged: bool,
    /// The largest payload seen: the data segment size for the twice extension.
    segment: u32,
    /// The last positive ACK deltas of segments without data.
    ack_deltas: [u32; ACK_HISTORY],
    /// Where the next ACK delta goes.
    ack_at: usize,
    /// The IPv4 Identification delta of the last compressed packet (IPv4 before TCP only).
    ip_id_delta: Option<u16>,
    /// Packets with data delivered since the acknowledgment number last moved
    /// ([`purity::count`]).
    data_run: u32,
    /// Packets without data delivered since the sequence number last moved.
    ack_run: u32,
}

/// A compressed TCP header rebuilt against a context, not yet taken as the new context.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rebuilt {
    fields: TcpFields,
    before: TcpFields,
    delta: Lost,
    payload: usize,
}

impl Clone for TcpContext {
    fn clone(&self) -> TcpContext {
        let mut ctx = TcpContext::empty();
        ctx.clone_from(self);
        ctx
    }

    fn clone_from(&mut self, source: &TcpContext) {
        // Destructured, so that a new field cannot be forgotten here.
        let TcpContext {
            header,
            layout,
            last_payload,
            damaged,
            segment,
            ack_deltas,
            ack_at,
            ip_id_delta,
            data_run,
            ack_run,
        } = source;
        self.header.clone_from(header);
        self.layout.clone_from(layout);
        self.last_payload = *last_payload;
        self.damaged = *damaged;
        self.segment = *segment;
        self.ack_deltas = *ack_deltas;
        self.ack_at = *ack_at;
        self.ip_id_delta = *ip_id_delta;
        self.data_run = *data_run;
        self.ack_run = *ack_run;
    }
}

impl TcpContext {
    /// A context that has learnt nothing, with an empty chain: filled by
    /// [`TcpContext::set_full`] or `clone_from`.
    fn empty() -> TcpContext {
        TcpContext {
            header: Vec::new(),
            layout: Layout::default(),
            last_payload: 0,
            damaged: false,
            segment: 0,
            ack_deltas: [0; ACK_HISTORY],
            ack_at: 0,
            ip_id_delta: None,
            data_run: 0,
            ack_run: 0,
        }
    }

    /// The context a FULL_HEADER sets where there was none: `packet` (restored) with chain
    /// `layout`.
    pub(crate) fn from_full(packet: &[u8], layout: &Layout) -> TcpContext {
        let mut ctx = TcpContext::empty();
        ctx.set_full(packet, layout, false);
        ctx
    }

    /// Takes FULL_HEADER `packet` (restored) with chain `layout` as the context, in place
    /// (reusing the buffers). With `inherit`, the context replaced is the CID's last one: if of
    /// the same stream (same IP-level context and ECN), what was learnt of the stream is kept;
    /// without, everything is learnt anew.
    pub(crate) fn set_full(&mut self, packet: &[u8], layout: &Layout, inherit: bool) {
        let payload = packet.len() - layout.len;
        let header = &packet[..layout.len];
        // What the old context knew of the stream, and its sequence and acknowledgment numbers.
        let kept = (inherit
            && chain::same_ip_context(&self.layout, &self.header, layout, header)
            && chain::ecn_eq(layout, &self.header, header))
        .then(|| (tcp::read_fields(&self.header, &self.layout), self.segment));
        self.header.clear();
        self.header.extend_from_slice(header);
        self.layout.clone_from(layout);
        self.last_payload = payload;
        self.damaged = false;
        self.segment = payload as u32;
        self.ip_id_delta = None;
        match kept {
            Some((a, segment)) => {
                // ack_deltas, ack_at, data_run and ack_run are the old context's.
                self.segment = self.segment.max(segment);
                let b = tcp::read_fields(&self.header, &self.layout);
                purity::count(
                    &mut self.data_run,
                    &mut self.ack_run,
                    a.seq != b.seq,
                    a.ack != b.ack,
                    payload,
                );
            }
            None => {
                self.ack_deltas = [0; ACK_HISTORY];
                self.ack_at = 0;
                self.data_run = 0;
                self.ack_run = 0;
            }
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

    /// Rebuilds the packet of COMPRESSED_TCP header `frame` (after its CID) into `out`,
    /// trying plain decompression and then the guesses. `ChecksumMismatch` if none verifies.
    /// Changes nothing in the context.
    pub(crate) fn rebuild(
        &self,
        config: &IphcConfig,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Rebuilt, DropReason> {
        let c = self.parse(frame)?;
        let r = self.rebuild_header(config, &c, Sum::new().add_bytes(c.payload), out)?;
        out.extend_from_slice(c.payload);
        Ok(r)
    }

    /// Whether this context would deliver a packet other than `packet` for the COMPRESSED_TCP
    /// header `frame` made from it (a decompressor in this state rebuilding it wrongly).
    /// `payload_sum` is the sum of `packet`'s payload; `scratch` is working space.
    pub(crate) fn rebuilds_wrongly(
        &self,
        config: &IphcConfig,
        frame: &[u8],
        packet: &[u8],
        payload_sum: Sum,
        scratch: &mut Vec<u8>,
    ) -> bool {
        let Ok(c) = self.parse(frame) else {
            return false;
        };
        if self.layout.len + c.payload.len() != packet.len() {
            // Another length than the packet's: wrong if it verifies.
            return self.rebuild(config, frame, scratch).is_ok();
        }
        // The payload is the packet's own (the frame's tail): only the header can differ.
        self.rebuild_header(config, &c, payload_sum, scratch)
            .is_ok()
            && scratch[..] != packet[..self.layout.len]
    }

    /// Reads a COMPRESSED_TCP header against this context.
    fn parse<'a>(&self, frame: &'a [u8]) -> Result<tcp::Compressed<'a>, DropReason> {
        // A frame too short for any context is malformed; one that does not fit this context
        // (its RANDOM fields, its options) shows the context is not the compressor's.
        if frame.len() < 3 {
            return Err(DropReason::Malformed);
        }
        tcp::parse_compressed(frame, &self.layout).map_err(|_| DropReason::ChecksumMismatch)
    }

    /// Rebuilds the header (the chain) of compressed header `c` into `out`, with
    /// `payload_sum` the sum of its payload.
    fn rebuild_header(
        &self,
        config: &IphcConfig,
        c: &tcp::Compressed<'_>,
        payload_sum: Sum,
        out: &mut Vec<u8>,
    ) -> Result<Rebuilt, DropReason> {
        let layout = &self.layout;
        let t = layout.tcp.ok_or(DropReason::Malformed)?;
        let before = tcp::read_fields(&self.header, layout);
        let payload = c.payload.len();
        let total = layout.len + payload;

        // Everything but the DELTA fields, which the guesses vary.
        out.clear();
        out.extend_from_slice(&self.header);
        tcp::write_random(out, layout, c.random);
        let special = c.special();
        let mut flags = (self.header[t.start + 13] & 0xC0) | tcp_flag::ACK;
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
        if !chain::fill_lengths_for(out, layout, total) {
            return Err(DropReason::Malformed);
        }

        let last = self.last_payload as u32;
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
        // The checksum of everything but sequence number, acknowledgment number and window.
        let base = t
            .pseudo_header(out, taroc_wire::protocol::TCP, total)
            .add_bytes(&out[t.start..t.start + 4])
            .add_bytes(&out[t.start + 12..t.start + 14])
            .add_bytes(&out[t.start + 16..t.start + t.header_len])
            .add_u16(payload_sum.fold());
        let guesses = guesses(config, self, &delta, special, payload);
        let fields = guesses
            .as_slice()
            .iter()
            .find_map(|lost| {
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
            })
            .ok_or(DropReason::ChecksumMismatch)?;
        tcp::write_fields(out, layout, &fields);
        chain::fill_ipv4_checksums(out, layout);
        Ok(Rebuilt {
            fields,
            before,
            delta,
            payload,
        })
    }

    /// Takes the packet `out` that [`TcpContext::rebuild`] made as the new context.
    pub(crate) fn commit(&mut self, r: &Rebuilt, out: &[u8]) {
        // The delivered header becomes the context, but for what an R-octet carried.
        let kept = tcp::r_octet(&self.header, &self.layout);
        let len = self.layout.len;
        self.header.copy_from_slice(&out[..len]);
        tcp::apply_r_octet(&mut self.header, &self.layout, kept);
        self.last_payload = r.payload;
        if r.payload > 0 {
            self.segment = self.segment.max(r.payload as u32);
        } else if r.delta.ack > 0 {
            self.ack_deltas[self.ack_at % ACK_HISTORY] = r.delta.ack;
            self.ack_at = (self.ack_at + 1) % ACK_HISTORY;
        }
        if self.layout.ipv4_id.is_some() {
            self.ip_id_delta = Some(r.delta.ip_id);
        }
        purity::count(
            &mut self.data_run,
            &mut self.ack_run,
            r.fields.seq != r.before.seq,
            r.fields.ack != r.before.ack,
            r.payload,
        );
    }

    /// Rebuilds the packet of COMPRESSED_TCP_NODELTA header `frame` (after its CID) into `out`
    /// and its layout into `new`. `ChecksumMismatch` if it does not verify. Changes nothing in
    /// the context.
    pub(crate) fn rebuild_nodelta(
        &self,
        max_header: usize,
        frame: &[u8],
        out: &mut Vec<u8>,
        new: &mut Layout,
    ) -> Result<(), DropReason> {
        let layout = &self.layout;
        let t = layout.tcp.ok_or(DropReason::Malformed)?;
        let random_len = layout.random_len();
        let id_len = if layout.ipv4_id.is_some() { 2 } else { 0 };
        if frame.len() < 16 {
            return Err(DropReason::Malformed);
        }
        if frame.len() < random_len + id_len + 16 {
            return Err(DropReason::ChecksumMismatch);
        }
        let (random, rest) = frame.split_at(random_len + id_len);
        let header_len = usize::from(rest[8] >> 4) * 4;
        if header_len < 20 || rest.len() < header_len - 4 {
            return Err(DropReason::ChecksumMismatch);
        }
        out.clear();
        out.extend_from_slice(&self.header[..t.start + 4]);
        tcp::write_random(out, layout, &random[..random_len]);
        if let Some(at) = layout.ipv4_id {
            out[at..at + 2].copy_from_slice(&random[random_len..]);
        }
        out.extend_from_slice(rest);
        if !chain::parse(out, max_header, new)
            || new.tcp.map(|n| n.start) != Some(t.start)
            || !chain::fill_lengths(out, new)
        {
            return Err(DropReason::Malformed);
        }
        chain::fill_ipv4_checksums(out, new);
        if !chain::transport_verifies(out, new) {
            return Err(DropReason::ChecksumMismatch);
        }
        Ok(())
    }

    /// Takes the packet `out` that [`TcpContext::rebuild_nodelta`] made (with `layout`) as the
    /// new context.
    pub(crate) fn commit_nodelta(&mut self, layout: &Layout, out: &[u8]) {
        let before = tcp::read_fields(&self.header, &self.layout);
        let after = tcp::read_fields(out, layout);
        let payload = out.len() - layout.len;
        self.header.clear();
        self.header.extend_from_slice(&out[..layout.len]);
        self.layout.clone_from(layout);
        self.last_payload = payload;
        self.segment = self.segment.max(payload as u32);
        self.ip_id_delta = None;
        purity::count(
            &mut self.data_run,
            &mut self.ack_run,
            after.seq != before.seq,
            after.ack != before.ack,
            payload,
        );
    }
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

/// The guesses for a compressed TCP header with deltas `delta` (`special` if they came from an
/// RFC 1144 special encoding) and `payload` octets of data against context `ctx`: plain
/// decompression, then twice, then, with the extension, the segment-size guesses (see
/// [`super`]).
///
/// Guesses are made on pure streams only. The TCP checksum is a one's-complement sum, blind to
/// *which* field a difference is in: a guess that puts too little on the sequence number and
/// as much too much on the acknowledgment number verifies. Where both fields move (data both
/// ways), a loss can split a change between them in ways no guess can tell apart; where one of
/// them stands still, it is known.
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
    let segment = ctx.segment;
    let last = ctx.last_payload as u32;
    if payload > 0 {
        // A data stream: the acknowledgment number stands still.
        if mode == IdMode::Unknown
            || delta.ack != 0
            || ctx.data_run < PURE_STREAM_PACKETS
            || special == Some(flag::SPECIAL_I)
        {
            return g;
        }
        // Twice, when TCP's sequence space allows it: one lost segment as long as the
        // context's (the lost one starts where the context's ends, and this delta is its
        // length). With SPECIAL_D the delta was taken as the context's payload anyway.
        if special.is_some() || delta.seq == last {
            g.push(*delta);
        }
        if config.twice_segment_multiples {
            // m lost segments, contiguous: the first starts where the context's segment ends
            // and the last one's length is this packet's sequence delta; those in between are
            // full-sized. With SPECIAL_D the last one's length is unknown: full-sized too.
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
        }
    } else {
        // An ACK stream: no data, the sequence number stands still.
        if mode == IdMode::Unknown
            || delta.seq != 0
            || last != 0
            || ctx.ack_run < PURE_STREAM_PACKETS
        {
            return g;
        }
        if delta.ack != 0 || delta.window != 0 {
            // Twice: one lost ACK like this one (its Identification then advanced by one).
            g.push(*delta);
        }
        let unit = ctx.ack_unit();
        // The multiples only where the Identification does not count packets: with one that
        // does, how many ACKs a stretch of k segments took is unknown.
        if config.twice_segment_multiples && mode == IdMode::Free && delta.ack != 0 && unit > 0 {
            // One lost ACK of k segments (the paper's multiples of the segment size).
            for k in 1..=TWICE_MAX_MULTIPLE {
                g.push(Lost {
                    seq: 0,
                    ack: k.wrapping_mul(unit),
                    window: 0,
                    ip_id: delta.ip_id,
                });
            }
        }
    }
    g
}
