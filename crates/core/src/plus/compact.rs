//! The compact IR (kind byte [`super::format::COMPACT_IR`]): an IR frame with the fields that
//! are nearly always the same coded as bits of a *shape* octet instead of octets; and the
//! compact SYN ([`super::format::COMPACT_SYN`]), a handshake segment coded the same way.
//!
//! ```text
//! | shape | context flags | CID | TOS (v4) or version/class/flow label (v6, 4) if S |
//! | TTL / hop limit if T | IPv4 Identification (2) unless Z (and not on IPv6) |
//! | addresses | ports, sequence, acknowledgment (12) | TCP flags octet | window (2) |
//! | TCP checksum (2) | urgent pointer field (2) if U | TS value, TS echo (8) if O = 1 |
//! | TCP data |
//! shape:  V T S D O O U Z
//!   V IPv6; T TTL or hop limit sent (else 64); S TOS (IPv4) or the first four octets (IPv6)
//!   sent (else 0, 0x60000000); D IPv4 DF clear (else set; fragment offset and MF 0);
//!   O O TCP options: 0 none, 1 NOP NOP Timestamps (2 and 3: Linux's SYN layouts, a compact
//!   SYN's; in a compact IR, 3 marks the short mirrored form, [`SHORT`]); U urgent pointer
//!   field sent (else 0); Z IPv4 Identification 0 and not sent. D and Z are 0 on IPv6.
//! ```
//!
//! The rest is derived: IPv4 version and IHL 0x45, protocol (next header) 6, the TCP data
//! offset from the options, the TCP reserved bits 0, and, as in an IR, the length field (which
//! an IR uses for the context flags and CID) from the frame's length; the IPv4 header checksum
//! is recomputed. Expanding yields the IR frame the compressor started from, which then goes
//! the IR's way (verified, installed as a context).
//!
//! Both ends code the frame here: the compressor writes it with [`encode`], the decompressor
//! reads it with [`expand()`]; [`CompactIr`] is a view of a compact IR's head (its shape, context
//! flags and CID), for what reads or moves the CID without expanding the frame.

use alloc::vec::Vec;

use core::net::IpAddr;

use taroc_wire::tcp::flags::ACK;
use taroc_wire::{checksum, protocol};

use super::format::{
    self,
    ir::{MIRRORED, NUMBERED},
};
use super::mirror;
use super::numbers::{self, Numbers};
use super::seal;
use crate::tcp::packet::{self, FlowKey};

/// The mirror a compact IR names instead of its addresses and ports ([`mirror`]).
#[derive(Debug, Clone, Copy)]
pub struct Mirror<'a> {
    /// The [`mirror::flow_hash`] of a flow of the sibling's, the reverse of the packet's.
    pub hash: u16,
    /// A packet of that flow the sibling delivered, to code the numbers against
    /// ([`numbers`]), if there is one.
    pub reference: Option<&'a Numbers>,
    /// Whether the reference's checksum alone names it (and so the mirror), as
    /// [`mirror::Mirrors::names`] tells: the short form ([`SHORT`]) sends no hash.
    pub named: bool,
}

/// Shape bit: IPv6.
pub const V: u8 = 0x80;
/// Shape bit: the TTL (hop limit) octet is sent (else 64).
pub const T: u8 = 0x40;
/// Shape bit: the IPv4 TOS octet, or IPv6's first four octets, are sent.
pub const S: u8 = 0x20;
/// Shape bit: IPv4 DF is clear.
pub const D: u8 = 0x10;
/// Shift of the two option-layout bits.
pub const O_SHIFT: u8 = 2;
/// Shape bit: the urgent pointer field is sent (else 0).
pub const U: u8 = 0x02;
/// Shape bit: the IPv4 Identification is 0 and not sent.
pub const Z: u8 = 0x01;

/// Option-layout bits of a compact IR (never a compact SYN) that mark the *short mirrored
/// form*: an IPv4 mirrored IR with numbers (context flags M and N), TTL 64, TOS 0, DF set, a
/// nonzero IP-ID and Linux's NOP NOP Timestamps, whose stride (if it has one) is the usual one
/// (1500 octets less the IR's IP and TCP headers) and whose reference the checksum alone names ([`Mirror::named`]). Its
/// shape octet then carries the context flags' other six bits, `K T E E 1 1 B B`, and no
/// context-flags octet, mirror hash or stride difference follows: `| shape | CID |
/// reference's checksum (2) | the rest as a numbered compact IR without the stride |`, the
/// mirror the reference's flow. (An IR carries no SYN layout, so the code is free there.)
pub const SHORT: u8 = 3 << O_SHIFT;

/// The context flags' bits the short form's shape carries where the long form has its own.
const SHORT_FLAGS_HIGH: u8 = 0x3C;

/// The TTL or hop limit a compact IR assumes unless bit [`T`].
pub const USUAL_TTL: u8 = 64;

/// A hole of [`LAYOUTS`]: the octet is sent.
const HOLE: u16 = 0x100;

/// The TCP option layouts the option-layout bits name, holes sent in order.
const LAYOUTS: [&[u16]; 4] = [
    // No options.
    &[],
    // NOP, NOP, Timestamps: Linux's on every segment but the SYN.
    &[1, 1, 8, 10, HOLE, HOLE, HOLE, HOLE, HOLE, HOLE, HOLE, HOLE],
    // MSS, SACK permitted, Timestamps, NOP, window scale: Linux's SYN and SYN-ACK.
    &[
        2, 4, HOLE, HOLE, 4, 2, 8, 10, HOLE, HOLE, HOLE, HOLE, HOLE, HOLE, HOLE, HOLE, 1, 3, 3,
        HOLE,
    ],
    // MSS, NOP, NOP, SACK permitted, NOP, window scale: Linux's SYN without timestamps.
    &[2, 4, HOLE, HOLE, 1, 1, 4, 2, 1, 3, 3, HOLE],
];

/// Offset of the TCP data offset octet in a TCP header.
const DATA_OFFSET: usize = 12;

/// Length of a TCP header without options.
const TCP_LEN: usize = 20;

/// The IPv4 header a compact IR codes: version 4, IHL 5.
const V4_FIRST: u8 = 0x45;

/// IPv6's first four octets unless bit [`S`]: version 6, traffic class and flow label 0.
const V6_FIRST: [u8; 4] = [0x60, 0, 0, 0];

/// IPv4 flags and fragment offset with DF set.
const DF: [u8; 2] = [0x40, 0];

/// What a compact frame stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// An IR frame: the length field holds the context flags and the CID, which are sent.
    Ir,
    /// A packet (a compact SYN): the length field is derived from the frame's length.
    Packet,
}

/// Writes the compact form of `ir` (an IR frame or a packet, as `framing` says) to `out` if it
/// can express it and it is shorter; returns whether it did (`out` is cleared either way).
/// With `mirror` (an IR frame's only), the frame names that flow instead of sending the
/// addresses and ports, and codes its numbers against the mirror's reference if it has one
/// and that is shorter.
pub fn encode(ir: &[u8], framing: Framing, mirror: Option<Mirror<'_>>, out: &mut Vec<u8>) -> bool {
    out.clear();
    let done = try_encode(ir, framing, mirror, out).is_some() && out.len() < ir.len();
    if !done {
        out.clear();
    }
    done
}

fn try_encode(
    ir: &[u8],
    framing: Framing,
    mirror: Option<Mirror<'_>>,
    out: &mut Vec<u8>,
) -> Option<()> {
    if mirror.is_some() && framing != Framing::Ir {
        return None;
    }
    let h = Headers::read(ir, framing)?;
    let numbered = mirror.and_then(|m| m.reference).and_then(|r| h.numbered(r));
    let short = framing == Framing::Ir
        && numbered.is_some()
        && h.fits_short()
        && mirror.is_some_and(|m| m.named);
    h.put_head(framing, mirror, numbered, short, out);
    h.put_ip(mirror.is_none(), out);
    // A compact SYN sends the flags first: without ACK, the acknowledgment number and the
    // TS echo are 0 and not sent.
    let bare_syn = framing == Framing::Packet && h.tcp[13] & ACK == 0;
    if bare_syn && (h.tcp[8..12] != [0; 4] || h.layout == 2 && h.options[12..16] != [0; 4]) {
        return None;
    }
    h.put_tcp(framing, numbered, bare_syn, out);
    if mirror.is_some() {
        // The checksum XOR the flow's hash: swapping both ends leaves the checksums as they were;
        // with numbers, XOR their seal too (a reference of the same checksum field rebuilds
        // numbers whose sums cancel).
        let at = out.len() - 2;
        let numbers_seal = match numbered {
            Some(_) => h.numbers_seal(),
            None => 0,
        };
        let sealed = u16::from_be_bytes([out[at], out[at + 1]])
            ^ mirror::flow_hash(&flow_of(ir, h.v4))
            ^ numbers_seal;
        out[at..].copy_from_slice(&sealed.to_be_bytes());
    }
    h.put_tail(numbered, short, bare_syn, out);
    Some(())
}

/// A mirrored IR's numbers coded against the mirror's reference: the reference's TCP checksum
/// field, the differences of [`numbers::differences`], the window's difference and (with
/// [`U`]) the urgent pointer field's from the usual stride.
type Numbered = (u16, [Option<u32>; 4], u32, Option<u32>);

/// The big-endian 32-bit number in the first four octets of `b`.
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// What the encoder reads of the IR frame (or packet) it codes.
struct Headers<'a> {
    /// The IR frame or packet.
    ir: &'a [u8],
    /// Whether it is IPv4 (else IPv6).
    v4: bool,
    /// The TCP header without options.
    tcp: &'a [u8],
    /// Where the TCP header ends.
    tcp_end: usize,
    /// The TCP options.
    options: &'a [u8],
    /// The option layout ([`LAYOUTS`]).
    layout: usize,
    /// The shape octet.
    shape: u8,
    /// The length field: an IR frame's context flags and CID.
    context: [u8; 2],
    /// The IPv4 TOS octet, or IPv6's first four octets.
    first: &'a [u8],
    /// The TTL or hop limit.
    ttl: u8,
}

impl<'a> Headers<'a> {
    /// The headers of `ir` and the shape that codes them, if a compact frame can.
    fn read(ir: &'a [u8], framing: Framing) -> Option<Headers<'a>> {
        let v4 = match ir.first()? >> 4 {
            4 => true,
            6 => false,
            _ => return None,
        };
        let ip_len = if v4 { 20 } else { 40 };
        let tcp = ir.get(ip_len..ip_len + TCP_LEN)?;
        if tcp[DATA_OFFSET] & 0x0F != 0 {
            return None;
        }
        let tcp_end = ip_len + usize::from(tcp[DATA_OFFSET] >> 4) * 4;
        let options = ir.get(ip_len + TCP_LEN..tcp_end)?;
        let layout = LAYOUTS.iter().position(|l| fits(l, options))?;
        let at = packet::length_field_offset(v4);
        let context = [ir[at], ir[at + 1]];
        if framing == Framing::Packet && !length_is_derived(ir, v4) {
            return None;
        }
        let (ip_shape, ttl, first) = if v4 {
            ipv4_shape(ir)?
        } else {
            if ir[6] != protocol::TCP {
                return None;
            }
            (V, ir[7], &ir[0..4])
        };
        let mut shape = (layout as u8) << O_SHIFT | ip_shape;
        if ttl != USUAL_TTL {
            shape |= T;
        }
        let usual: &[u8] = if v4 { &[0] } else { &V6_FIRST };
        if first != usual {
            shape |= S;
        }
        if tcp[18..20] != [0, 0] {
            shape |= U;
        }
        Some(Headers {
            ir,
            v4,
            tcp,
            tcp_end,
            options,
            layout,
            shape,
            context,
            first,
            ttl,
        })
    }

    /// The TCP window.
    fn window(&self) -> u16 {
        u16::from_be_bytes([self.tcp[14], self.tcp[15]])
    }

    /// The TCP urgent pointer field.
    fn urgent(&self) -> u16 {
        u16::from_be_bytes([self.tcp[18], self.tcp[19]])
    }

    /// The Timestamps option's value and echo, with option layout 1.
    fn timestamps(&self) -> Option<(u32, u32)> {
        (self.layout == 1).then(|| (be32(&self.options[4..8]), be32(&self.options[8..12])))
    }

    /// The seal of the numbers a mirrored IR codes against a reference
    /// ([`seal::numbers_seal`]).
    fn numbers_seal(&self) -> u16 {
        let tcp = self.tcp;
        seal::numbers_seal(
            be32(&tcp[4..8]),
            be32(&tcp[8..12]),
            self.window(),
            self.timestamps(),
        )
    }

    /// The numbers coded against `reference`, if the layout allows and that is shorter.
    fn numbered(&self, reference: &Numbers) -> Option<Numbered> {
        let ts = self.timestamps();
        if self.layout > 1 || ts.is_some() != reference.ts.is_some() {
            return None;
        }
        let tcp = self.tcp;
        let d = numbers::differences(reference, be32(&tcp[4..8]), be32(&tcp[8..12]), ts);
        let window = difference16(self.window(), reference.window);
        let urgent =
            (self.shape & U != 0).then(|| difference16(self.urgent(), usual_stride(self.tcp_end)));
        let coded: usize = d
            .iter()
            .flatten()
            .chain([Some(window), urgent].iter().flatten())
            .map(|&d| numbers::signed_len(d))
            .sum();
        let whole = 10 + if ts.is_some() { 8 } else { 0 } + if urgent.is_some() { 2 } else { 0 };
        (2 + coded < whole).then_some((reference.checksum, d, window, urgent))
    }

    /// Whether the short mirrored form ([`SHORT`]) can carry these headers (given numbers and a
    /// mirror named by its reference): a common mirrored IR, its stride the usual one.
    fn fits_short(&self) -> bool {
        let strided = self.context[0] & format::ir::STRIDES != 0;
        self.shape & !U == 1 << O_SHIFT
            && self.context[0] & (MIRRORED | NUMBERED) == 0
            && (self.shape & U != 0) == strided
            && (!strided || self.urgent() == usual_stride(self.tcp_end))
    }

    /// Writes the shape, and an IR's context flags and CID with what names its mirror and
    /// reference (the short form's own head if `short`).
    fn put_head(
        &self,
        framing: Framing,
        mirror: Option<Mirror<'_>>,
        numbered: Option<Numbered>,
        short: bool,
        out: &mut Vec<u8>,
    ) {
        let context = self.context;
        match numbered {
            Some((checksum, ..)) if short => {
                let flags = context[0];
                out.push((flags & SHORT_FLAGS_HIGH) << 2 | SHORT | flags & 0x03);
                out.push(context[1]);
                out.extend_from_slice(&checksum.to_be_bytes());
                return;
            }
            _ => out.push(self.shape),
        }
        if framing != Framing::Ir {
            return;
        }
        match mirror {
            Some(m) => {
                let flag = if numbered.is_some() { NUMBERED } else { 0 };
                out.extend_from_slice(&[context[0] | MIRRORED | flag, context[1]]);
                out.extend_from_slice(&m.hash.to_be_bytes());
                if let Some((checksum, ..)) = numbered {
                    out.extend_from_slice(&checksum.to_be_bytes());
                }
            }
            None => out.extend_from_slice(&context),
        }
    }

    /// Writes the IP fields the shape does not stand for, then (unless a mirror stands for
    /// them, `!flow`) the addresses and ports.
    fn put_ip(&self, flow: bool, out: &mut Vec<u8>) {
        let ir = self.ir;
        if self.shape & S != 0 {
            out.extend_from_slice(self.first);
        }
        if self.shape & T != 0 {
            out.push(self.ttl);
        }
        if self.v4 && self.shape & Z == 0 {
            out.extend_from_slice(&ir[4..6]);
        }
        if flow {
            out.extend_from_slice(if self.v4 { &ir[12..20] } else { &ir[8..40] });
            out.extend_from_slice(&self.tcp[..4]);
        }
    }

    /// Writes the TCP numbers, flags, window and checksum field (a compact SYN's flags first,
    /// without the acknowledgment number if `bare_syn`).
    fn put_tcp(
        &self,
        framing: Framing,
        numbered: Option<Numbered>,
        bare_syn: bool,
        out: &mut Vec<u8>,
    ) {
        let tcp = self.tcp;
        match numbered {
            Some((_, [Some(seq), Some(ack), ..], window, _)) => {
                numbers::put_signed(seq, out);
                numbers::put_signed(ack, out);
                out.push(tcp[13]);
                numbers::put_signed(window, out);
                out.extend_from_slice(&tcp[16..18]);
            }
            _ if framing == Framing::Packet => {
                out.push(tcp[13]);
                out.extend_from_slice(&tcp[4..8]);
                if !bare_syn {
                    out.extend_from_slice(&tcp[8..12]);
                }
                out.extend_from_slice(&tcp[14..18]);
            }
            _ => {
                out.extend_from_slice(&tcp[4..12]);
                out.extend_from_slice(&tcp[13..18]);
            }
        }
    }

    /// Writes the urgent pointer field (unless the shape or the short form stands for it), the
    /// option holes (or the timestamps' differences) and the TCP data.
    fn put_tail(&self, numbered: Option<Numbered>, short: bool, bare_syn: bool, out: &mut Vec<u8>) {
        match numbered {
            _ if short => {}
            Some((_, _, _, Some(urgent))) => numbers::put_signed(urgent, out),
            _ if self.shape & U != 0 => out.extend_from_slice(&self.tcp[18..20]),
            _ => {}
        }
        match numbered {
            Some((_, [_, _, Some(val), Some(ecr)], ..)) => {
                numbers::put_signed(val, out);
                numbers::put_signed(ecr, out);
            }
            _ => out.extend(
                LAYOUTS[self.layout]
                    .iter()
                    .zip(self.options)
                    .enumerate()
                    .filter(|&(at, (&l, _))| {
                        l == HOLE && !(bare_syn && is_syn_echo(self.layout, at))
                    })
                    .map(|(_, (_, &b))| b),
            ),
        }
        out.extend_from_slice(&self.ir[self.tcp_end..]);
    }
}

/// The shape bits ([`D`], [`Z`]), TTL and TOS octet of an IPv4 IR frame `ir`, if a compact
/// frame can code its header: version 4 and IHL 5, TCP, a header checksum its header computes
/// to, DF set or clear and no fragment.
fn ipv4_shape(ir: &[u8]) -> Option<(u8, u8, &[u8])> {
    if ir[0] != V4_FIRST || ir[9] != protocol::TCP || !header_checksum_is_derived(ir) {
        return None;
    }
    let mut shape = match [ir[6], ir[7]] {
        DF => 0,
        [0, 0] => D,
        _ => return None,
    };
    if ir[4..6] == [0, 0] {
        shape |= Z;
    }
    Some((shape, ir[8], &ir[1..2]))
}

/// The urgent pointer field (an IR's stride) a mirrored IR with numbers codes its own against,
/// for a packet whose TCP header ends at `tcp_end`: the payload a 1500-octet packet with its
/// headers carries (1448 for IPv4 with timestamps), the segment size of a bulk flow on an
/// Ethernet path.
fn usual_stride(tcp_end: usize) -> u16 {
    1500u16.saturating_sub(tcp_end as u16)
}

/// `value - base` as a signed 16-bit difference, for [`numbers::put_signed`].
fn difference16(value: u16, base: u16) -> u32 {
    i32::from(value.wrapping_sub(base) as i16) as u32
}

/// `base` plus a difference [`difference16`] made.
fn add16(base: u16, difference: u32) -> u16 {
    base.wrapping_add(difference as u16)
}

/// A view of a compact IR's head (the frame after its kind byte): its shape, and its context
/// flags and CID (the short form's [`SHORT`] shape standing for most context flags).
#[derive(Debug, Clone)]
pub struct CompactIr<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CompactIr<T> {
    /// A view of `buffer` if it holds the frame's head up to its CID: the shape and CID of the
    /// short form, the shape, context flags and CID of the long one.
    pub fn new_checked(buffer: T) -> Option<CompactIr<T>> {
        let bytes = buffer.as_ref();
        let head = match bytes.first()? & SHORT == SHORT {
            true => 2,
            false => 3,
        };
        (bytes.len() >= head).then_some(CompactIr { buffer })
    }

    /// The shape octet.
    pub fn shape(&self) -> u8 {
        self.buffer.as_ref()[0]
    }

    /// Whether it is the short mirrored form ([`SHORT`]).
    pub fn is_short(&self) -> bool {
        self.shape() & SHORT == SHORT
    }

    /// Where the CID octet is.
    fn cid_at(&self) -> usize {
        if self.is_short() {
            1
        } else {
            2
        }
    }

    /// The CID.
    pub fn cid(&self) -> u8 {
        self.buffer.as_ref()[self.cid_at()]
    }

    /// The context flags' bits M and N ([`MIRRORED`], [`NUMBERED`]): both in the short form,
    /// else as its context flags have them.
    pub fn mirror_flags(&self) -> u8 {
        match self.is_short() {
            true => MIRRORED | NUMBERED,
            false => self.buffer.as_ref()[1] & (MIRRORED | NUMBERED),
        }
    }

    /// The CID, if the frame names a mirror.
    pub fn mirrored_cid(&self) -> Option<u8> {
        (self.mirror_flags() & MIRRORED != 0).then(|| self.cid())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> CompactIr<T> {
    /// Sets the CID.
    pub fn set_cid(&mut self, cid: u8) {
        let at = self.cid_at();
        self.buffer.as_mut()[at] = cid;
    }
}

/// Whether option octet `at` of layout `layout` is the TS echo of Linux's SYN layout (layout 2,
/// octets 12 to 15), which a compact SYN without ACK does not send (it is 0).
fn is_syn_echo(layout: usize, at: usize) -> bool {
    layout == 2 && (12..16).contains(&at)
}

/// Whether `options` are `layout`'s, its holes any octet.
fn fits(layout: &[u16], options: &[u8]) -> bool {
    layout.len() == options.len()
        && layout
            .iter()
            .zip(options)
            .all(|(&l, &b)| l == HOLE || l == u16::from(b))
}

/// Whether a packet's length field is the one its length gives.
fn length_is_derived(packet: &[u8], v4: bool) -> bool {
    let at = packet::length_field_offset(v4);
    let len = packet.len() - if v4 { 0 } else { 40 };
    u16::try_from(len).is_ok_and(|len| packet[at..at + 2] == len.to_be_bytes())
}

/// Whether an IPv4 IR frame's header checksum is the one its packet's header computes to (the
/// compact IR does not send it).
fn header_checksum_is_derived(ir: &[u8]) -> bool {
    let Ok(len) = u16::try_from(ir.len()) else {
        return false;
    };
    let mut header = [0u8; 20];
    header.copy_from_slice(&ir[..20]);
    header[2..4].copy_from_slice(&len.to_be_bytes());
    header[10..12].fill(0);
    checksum::checksum(&header).to_be_bytes() == [ir[10], ir[11]]
}

/// The flow of a compact IR's packet `ir` (IPv4 without options or IPv6 without extension
/// headers): its addresses and ports.
fn flow_of(ir: &[u8], v4: bool) -> FlowKey {
    let (src, dst, tcp) = if v4 {
        let a = |at: usize| IpAddr::V4(<[u8; 4]>::try_from(&ir[at..at + 4]).expect("4").into());
        (a(12), a(16), 20)
    } else {
        let a = |at: usize| IpAddr::V6(<[u8; 16]>::try_from(&ir[at..at + 16]).expect("16").into());
        (a(8), a(24), 40)
    };
    let port = |at: usize| u16::from_be_bytes([ir[tcp + at], ir[tcp + at + 1]]);
    FlowKey {
        src,
        dst,
        src_port: port(0),
        dst_port: port(2),
    }
}

mod expand;

pub use expand::expand;

#[cfg(test)]
mod tests;
