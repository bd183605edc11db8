//! TCP packet streams: the COMPRESSED_TCP and COMPRESSED_TCP_NODELTA formats (RFC 2507 section 6
//! a and b, section 7.12) and the TCP fields of a context.
//!
//! ```text
//! COMPRESSED_TCP                          COMPRESSED_TCP_NODELTA
//! +---------------+                       +---------------+
//! |      CID      |                       |      CID      |
//! |R O I P S A W U|                       | RANDOM fields (and the IPv4 Identification
//! | TCP checksum  | (2 octets)            |  of an IPv4 header just before TCP)
//! | RANDOM fields | (implied by context)  | TCP header from the sequence number on,
//! | R-octet       | (if R)                |  options included (whole, not deltas)
//! | Urgent Pointer| (if U)                +---------------+
//! | Window delta  | (if W)
//! | Ack delta     | (if A)
//! | Seq delta     | (if S)
//! | IPv4 Id delta | (if I)
//! | Options       | (if O; the context's length)
//! +---------------+
//! ```
//!
//! Deltas and the urgent pointer use RFC 1144's encoding ([`crate::encoding::delta`]): one octet
//! for 1..=255, otherwise a zero octet and two octets. Without I the IPv4 Identification advances
//! by one. Flags S W U together (A clear) mean the sequence number advanced by the previous
//! segment's payload length; S A W U together mean both the sequence and the acknowledgment
//! numbers did (RFC 1144's SPECIAL_D and SPECIAL_I). In a compressed header ACK is 1, SYN, FIN
//! and RST are 0, PSH and URG are the P and U flags. The R-octet carries the six Reserved bits
//! (today's three reserved bits, AE, CWR and ECE) in its high bits and the ECN field of the
//! closest IP header in its two low bits; it does not update the context (section 6 a).

use alloc::vec::Vec;

use super::chain::Layout;
use crate::codec::DropReason;
use crate::encoding::delta;
use taroc_wire::tcp::flags as tcp_flag;

/// The bits of the change-mask octet.
pub mod flag {
    /// The R-octet follows (Reserved bits or ECN differ from the context).
    pub const R: u8 = 0x80;
    /// The options follow, whole.
    pub const O: u8 = 0x40;
    /// An IPv4 Identification delta follows (otherwise it advances by one).
    pub const I: u8 = 0x20;
    /// PSH.
    pub const P: u8 = 0x10;
    /// A sequence number delta follows.
    pub const S: u8 = 0x08;
    /// An acknowledgment number delta follows.
    pub const A: u8 = 0x04;
    /// A window delta follows.
    pub const W: u8 = 0x02;
    /// URG, and the urgent pointer follows.
    pub const U: u8 = 0x01;
    /// RFC 1144's SPECIAL_I: sequence and acknowledgment numbers advanced by the previous
    /// segment's payload length.
    pub const SPECIAL_I: u8 = S | A | W | U;
    /// RFC 1144's SPECIAL_D: the sequence number advanced by the previous segment's payload
    /// length.
    pub const SPECIAL_D: u8 = S | W | U;
    /// The bits the special encodings use.
    pub const SPECIALS_MASK: u8 = S | A | W | U;
}

/// The DELTA fields of a TCP header (and of the IPv4 header just before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpFields {
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Window.
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// IPv4 Identification of the IPv4 header just before TCP (0 without one).
    pub ip_id: u16,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Offset of the TCP header of a TCP layout.
fn tcp_at(layout: &Layout) -> usize {
    layout.tcp.map_or(0, |t| t.start)
}

/// Reads the DELTA fields of header `h`.
pub fn read_fields(h: &[u8], layout: &Layout) -> TcpFields {
    let t = tcp_at(layout);
    TcpFields {
        seq: be32(h, t + 4),
        ack: be32(h, t + 8),
        window: be16(h, t + 14),
        urgent: be16(h, t + 18),
        ip_id: layout.ipv4_id.map_or(0, |at| be16(h, at)),
    }
}

/// Writes the DELTA fields into header `h`.
pub fn write_fields(h: &mut [u8], layout: &Layout, f: &TcpFields) {
    let t = tcp_at(layout);
    h[t + 4..t + 8].copy_from_slice(&f.seq.to_be_bytes());
    h[t + 8..t + 12].copy_from_slice(&f.ack.to_be_bytes());
    h[t + 14..t + 16].copy_from_slice(&f.window.to_be_bytes());
    h[t + 18..t + 20].copy_from_slice(&f.urgent.to_be_bytes());
    if let Some(at) = layout.ipv4_id {
        h[at..at + 2].copy_from_slice(&f.ip_id.to_be_bytes());
    }
}

/// The TCP flags octet of header `h`.
pub fn tcp_flags(h: &[u8], layout: &Layout) -> u8 {
    h[tcp_at(layout) + 13]
}

/// The R-octet of header `h`: Reserved bits (six) above the ECN field of the closest IP header.
pub fn r_octet(h: &[u8], layout: &Layout) -> u8 {
    let t = tcp_at(layout);
    let reserved = ((h[t + 12] & 0x0F) << 2) | (h[t + 13] >> 6);
    let ecn = match layout.ecn {
        Some((at, 0x03)) => h[at] & 0x03,
        Some((at, _)) => (h[at] >> 4) & 0x03,
        None => 0,
    };
    (reserved << 2) | ecn
}

/// Writes an R-octet's values into header `h`.
pub fn apply_r_octet(h: &mut [u8], layout: &Layout, r: u8) {
    let t = tcp_at(layout);
    let reserved = r >> 2;
    h[t + 12] = (h[t + 12] & 0xF0) | (reserved >> 2);
    h[t + 13] = (h[t + 13] & 0x3F) | ((reserved & 0x03) << 6);
    match layout.ecn {
        Some((at, 0x03)) => h[at] = (h[at] & !0x03) | (r & 0x03),
        Some((at, mask)) => h[at] = (h[at] & !mask) | ((r & 0x03) << 4),
        None => {}
    }
}

/// The TCP options of header `h`.
pub fn options<'a>(h: &'a [u8], layout: &Layout) -> &'a [u8] {
    match layout.tcp {
        Some(t) => &h[t.start + 20..t.start + t.header_len],
        None => &[],
    }
}

/// A COMPRESSED_TCP header, read against a context's layout (everything after the CID octet).
#[derive(Debug, Clone, Copy)]
pub struct Compressed<'a> {
    /// The change-mask octet.
    pub mask: u8,
    /// The TCP checksum.
    pub checksum: [u8; 2],
    /// The RANDOM fields, concatenated.
    pub random: &'a [u8],
    /// The R-octet, if R.
    pub r_octet: Option<u8>,
    /// The urgent pointer, if U (and not a special encoding).
    pub urgent: Option<u16>,
    /// The window delta (0 if absent).
    pub window: u16,
    /// The acknowledgment number delta (0 if absent).
    pub ack: u32,
    /// The sequence number delta (0 if absent).
    pub seq: u32,
    /// The IPv4 Identification delta (1 if absent).
    pub ip_id: u16,
    /// The options, if O.
    pub options: Option<&'a [u8]>,
    /// The payload.
    pub payload: &'a [u8],
}

impl Compressed<'_> {
    /// Whether the change mask is one of RFC 1144's special encodings.
    pub fn special(&self) -> Option<u8> {
        match self.mask & flag::SPECIALS_MASK {
            m @ (flag::SPECIAL_I | flag::SPECIAL_D) => Some(m),
            _ => None,
        }
    }
}

/// Takes `n` octets from the front of `rest`.
fn take<'a>(rest: &mut &'a [u8], n: usize) -> Result<&'a [u8], DropReason> {
    if rest.len() < n {
        return Err(DropReason::Malformed);
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Ok(head)
}

/// Takes one RFC 1144 delta from the front of `rest`.
fn take_delta(rest: &mut &[u8]) -> Result<u32, DropReason> {
    let (value, used) = delta::get(rest).ok_or(DropReason::Malformed)?;
    *rest = &rest[used..];
    Ok(value)
}

/// Reads a COMPRESSED_TCP header (after its CID octet) against the context's `layout`.
pub fn parse_compressed<'a>(
    frame: &'a [u8],
    layout: &Layout,
) -> Result<Compressed<'a>, DropReason> {
    let mut rest = frame;
    let head = take(&mut rest, 3)?;
    let mask = head[0];
    let mut c = Compressed {
        mask,
        checksum: [head[1], head[2]],
        random: take(&mut rest, layout.random_len())?,
        r_octet: None,
        urgent: None,
        window: 0,
        ack: 0,
        seq: 0,
        ip_id: 1,
        options: None,
        payload: &[],
    };
    if mask & flag::R != 0 {
        c.r_octet = Some(take(&mut rest, 1)?[0]);
    }
    if c.special().is_none() {
        if mask & flag::U != 0 {
            c.urgent = Some(take_delta(&mut rest)? as u16);
        }
        if mask & flag::W != 0 {
            c.window = take_delta(&mut rest)? as u16;
        }
        if mask & flag::A != 0 {
            c.ack = take_delta(&mut rest)?;
        }
        if mask & flag::S != 0 {
            c.seq = take_delta(&mut rest)?;
        }
    }
    if mask & flag::I != 0 {
        if layout.ipv4_id.is_none() {
            return Err(DropReason::Malformed);
        }
        c.ip_id = take_delta(&mut rest)? as u16;
    }
    if mask & flag::O != 0 {
        let len = layout.tcp.map_or(0, |t| t.header_len - 20);
        c.options = Some(take(&mut rest, len)?);
    }
    c.payload = rest;
    Ok(c)
}

/// Appends the RANDOM fields of `packet` (per `layout`) to `out`.
pub fn put_random(out: &mut Vec<u8>, packet: &[u8], layout: &Layout) {
    for span in &layout.random {
        out.extend_from_slice(&packet[span.start..span.end]);
    }
}

/// Writes concatenated RANDOM field values `values` into header `h` (per `layout`).
pub fn write_random(h: &mut [u8], layout: &Layout, values: &[u8]) {
    let mut at = 0;
    for span in &layout.random {
        h[span.start..span.end].copy_from_slice(&values[at..at + span.len()]);
        at += span.len();
    }
}

/// What the compressor found changed in a TCP header that COMPRESSED_TCP can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Changes {
    /// The change mask.
    pub mask: u8,
    /// Urgent pointer (sent if U and not special).
    pub urgent: u16,
    /// Window delta.
    pub window: u16,
    /// Acknowledgment delta.
    pub ack: u32,
    /// Sequence delta.
    pub seq: u32,
    /// IPv4 Identification delta (sent if I).
    pub ip_id: u16,
    /// The R-octet (sent if R).
    pub r_octet: u8,
}

/// Why a TCP header cannot go as COMPRESSED_TCP against its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotCompressible {
    /// Send a FULL_HEADER.
    Full,
    /// Send a COMPRESSED_TCP_NODELTA.
    NoDelta,
}

/// Whether `packet` carries no data and repeats its context `ctx` in sequence number,
/// acknowledgment number and window: RFC 1144's "retransmitted ack or window probe" (section
/// 3.2.3 of its appendix), which VJ sends uncompressed in case the other side missed the
/// compressed version.
pub fn repeats(packet: &[u8], ctx: &[u8], layout: &Layout) -> bool {
    let now = read_fields(packet, layout);
    let before = read_fields(ctx, layout);
    packet.len() == layout.len
        && now.seq == before.seq
        && now.ack == before.ack
        && now.window == before.window
}

/// Works out the COMPRESSED_TCP change mask of `packet` against context `ctx` (same layout and
/// NOCHANGE fields, checked by the caller). `last_payload` is the payload length of the
/// context's packet, `high_seq` the highest sequence number the stream has sent (one past its
/// last octet).
pub fn changes(
    packet: &[u8],
    ctx: &[u8],
    layout: &Layout,
    last_payload: usize,
    high_seq: u32,
) -> Result<Changes, NotCompressible> {
    let flags = tcp_flags(packet, layout);
    if flags & tcp_flag::SYN != 0 {
        return Err(NotCompressible::Full);
    }
    let now = read_fields(packet, layout);
    let before = read_fields(ctx, layout);
    let payload = packet.len() - layout.len;
    let seg_len = payload + usize::from(flags & tcp_flag::FIN != 0);
    if seg_len > 0 && (now.seq.wrapping_sub(high_seq) as i32) < 0 {
        // A retransmission (section 3.2).
        return Err(NotCompressible::Full);
    }
    if flags & (tcp_flag::FIN | tcp_flag::RST | tcp_flag::ACK) != tcp_flag::ACK {
        return Err(NotCompressible::NoDelta);
    }
    let seq = now.seq.wrapping_sub(before.seq);
    let ack = now.ack.wrapping_sub(before.ack);
    if seq > 0xFFFF || ack > 0xFFFF {
        return Err(NotCompressible::NoDelta);
    }
    let urg = flags & tcp_flag::URG != 0;
    if !urg && now.urgent != before.urgent {
        return Err(NotCompressible::NoDelta);
    }
    let window = now.window.wrapping_sub(before.window);
    let mut mask = 0;
    if urg {
        mask |= flag::U;
    }
    if window != 0 {
        mask |= flag::W;
    }
    if ack != 0 {
        mask |= flag::A;
    }
    if seq != 0 {
        mask |= flag::S;
    }
    match mask {
        flag::SPECIAL_I | flag::SPECIAL_D => return Err(NotCompressible::NoDelta),
        m if m == flag::S | flag::A && seq == ack && seq as usize == last_payload => {
            mask = flag::SPECIAL_I;
        }
        flag::S if seq as usize == last_payload => mask = flag::SPECIAL_D,
        _ => {}
    }
    if flags & tcp_flag::PSH != 0 {
        mask |= flag::P;
    }
    let r = r_octet(packet, layout);
    if r != r_octet(ctx, layout) {
        mask |= flag::R;
    }
    let ip_id = now.ip_id.wrapping_sub(before.ip_id);
    if layout.ipv4_id.is_some() && ip_id != 1 {
        mask |= flag::I;
    }
    if options(packet, layout) != options(ctx, layout) {
        mask |= flag::O;
    }
    Ok(Changes {
        mask,
        urgent: now.urgent,
        window,
        ack,
        seq,
        ip_id,
        r_octet: r,
    })
}

/// Appends a COMPRESSED_TCP frame for `packet` with CID `cid` and changes `c` to `out`.
pub fn emit_compressed(out: &mut Vec<u8>, cid: u8, c: &Changes, packet: &[u8], layout: &Layout) {
    let t = tcp_at(layout);
    out.push(cid);
    out.push(c.mask);
    out.extend_from_slice(&packet[t + 16..t + 18]);
    put_random(out, packet, layout);
    if c.mask & flag::R != 0 {
        out.push(c.r_octet);
    }
    let special = matches!(
        c.mask & flag::SPECIALS_MASK,
        flag::SPECIAL_I | flag::SPECIAL_D
    );
    if !special {
        // Every value fits: the caller checked the deltas are below 2^16.
        if c.mask & flag::U != 0 {
            delta::put(out, u32::from(c.urgent));
        }
        if c.mask & flag::W != 0 {
            delta::put(out, u32::from(c.window));
        }
        if c.mask & flag::A != 0 {
            delta::put(out, c.ack);
        }
        if c.mask & flag::S != 0 {
            delta::put(out, c.seq);
        }
    }
    if c.mask & flag::I != 0 {
        delta::put(out, u32::from(c.ip_id));
    }
    if c.mask & flag::O != 0 {
        out.extend_from_slice(options(packet, layout));
    }
    out.extend_from_slice(&packet[layout.len..]);
}

/// Appends a COMPRESSED_TCP_NODELTA frame for `packet` with CID `cid` to `out`.
pub fn emit_nodelta(out: &mut Vec<u8>, cid: u8, packet: &[u8], layout: &Layout) {
    out.push(cid);
    put_random(out, packet, layout);
    if let Some(at) = layout.ipv4_id {
        out.extend_from_slice(&packet[at..at + 2]);
    }
    out.extend_from_slice(&packet[tcp_at(layout) + 4..]);
}
