//! The decompressor's side of a compact IR or SYN: the frame expanded into the full IR it
//! stands for (or the SYN itself), with a mirrored frame's flow from the sibling's mirrors.

use alloc::vec::Vec;

use core::net::IpAddr;

use taroc_wire::tcp::flags::ACK;
use taroc_wire::{checksum, protocol};

use super::{
    add16, be32, is_syn_echo, usual_stride, Framing, D, DF, HOLE, LAYOUTS, O_SHIFT, S, SHORT,
    SHORT_FLAGS_HIGH, T, TCP_LEN, U, USUAL_TTL, V, V4_FIRST, V6_FIRST, Z,
};
use crate::codec::DropReason;
use crate::plus::format::{
    self,
    ir::{MIRRORED, NUMBERED},
};
use crate::plus::mirror::{self, Mirrors};
use crate::plus::numbers::{self, Numbers};
use crate::plus::seal;
use crate::tcp::packet::{self, FlowKey};

/// Rebuilds the IR frame (or packet, as `framing` says) a compact `frame` stands for into
/// `ir`, a mirrored one's addresses and ports from `mirrors`. Refuses a malformed frame
/// (truncated, an IPv4-only bit on IPv6, an IPv6 version other than 6, too long, a mirror of the
/// other IP version) and one naming a mirror the sibling does not hold ([`DropReason::NoContext`]).
/// Returns the reference a frame with numbers names, as (the mirror's flow hash, the reference's
/// TCP checksum field): once the IR verifies, the far end delivered that packet
/// ([`crate::plus::receipt`]).
pub fn expand(
    frame: &[u8],
    framing: Framing,
    mirrors: &Mirrors,
    ir: &mut Vec<u8>,
) -> Result<Option<(u16, u16)>, DropReason> {
    ir.clear();
    let mut r = Reader { rest: frame };
    let head = Head::read(&mut r, framing, mirrors)?;
    let shape = head.shape;
    let v4 = shape & V == 0;
    let mirror = match head.mirror {
        Some(hash) => {
            let flow = mirrors.resolve(hash).ok_or(DropReason::NoContext)?;
            if flow.src.is_ipv4() != v4 {
                return Err(DropReason::Malformed);
            }
            Some(mirror::reversed(flow))
        }
        None => None,
    };
    let layout_bits = usize::from((shape >> O_SHIFT) & 0x03);
    let named = head.mirror.zip(head.reference);
    let reference = reference(named, layout_bits, mirrors)?;
    put_ip(&mut r, shape, head.context, mirror.as_ref(), ir)?;
    let tcp_len = TCP_LEN + LAYOUTS[layout_bits].len();
    let bare_syn = put_tcp(&mut r, framing, reference.as_ref(), tcp_len, ir)?;
    if let Some(flow) = &mirror {
        let at = ir.len() - 2;
        let sealed = u16::from_be_bytes([ir[at], ir[at + 1]]) ^ mirror::flow_hash(flow);
        ir[at..].copy_from_slice(&sealed.to_be_bytes());
    }
    let ip_len = if v4 { 20 } else { 40 };
    match (&reference, shape & U != 0) {
        (Some(_), true) => {
            let usual = usual_stride(ip_len + tcp_len);
            let difference = if head.short { 0 } else { r.signed()? };
            ir.extend_from_slice(&add16(usual, difference).to_be_bytes());
        }
        (None, true) => ir.extend_from_slice(r.take(2)?),
        (_, false) => ir.extend_from_slice(&[0, 0]),
    }
    put_options(&mut r, layout_bits, reference.as_ref(), bare_syn, ir)?;
    if let Some(n) = &reference {
        // Numbers against a reference: their seal off the checksum field too.
        let tcp = &ir[ip_len..ip_len + tcp_len];
        let window = u16::from_be_bytes([tcp[14], tcp[15]]);
        let ts =
            n.ts.map(|_| (be32(&tcp[tcp_len - 8..]), be32(&tcp[tcp_len - 4..])));
        let seal = seal::numbers_seal(be32(&tcp[4..]), be32(&tcp[8..]), window, ts);
        let at = ip_len + 16;
        let sealed = u16::from_be_bytes([ir[at], ir[at + 1]]) ^ seal;
        ir[at..at + 2].copy_from_slice(&sealed.to_be_bytes());
    }
    ir.extend_from_slice(r.rest);
    fill_lengths(framing, v4, ir)?;
    Ok(named)
}

/// A compact frame's head: what its shape, context flags and the octets after them say.
struct Head {
    /// The shape (the short form's turned into the long form's).
    shape: u8,
    /// Whether the frame is the short mirrored form ([`SHORT`]).
    short: bool,
    /// The IR frame's context flags (without M and N) and CID; 0 and 0 for a packet.
    context: [u8; 2],
    /// The hash of the mirror's flow, if it names one.
    mirror: Option<u16>,
    /// The TCP checksum field of the reference its numbers are coded against, if any.
    reference: Option<u16>,
}

impl Head {
    /// Reads the head of a frame of `framing`; the short form's mirror is the flow of the
    /// reference it names (in `mirrors`).
    fn read(r: &mut Reader<'_>, framing: Framing, mirrors: &Mirrors) -> Result<Head, DropReason> {
        let shape = r.take(1)?[0];
        if framing == Framing::Packet {
            return Ok(Head {
                shape,
                short: false,
                context: [0, 0],
                mirror: None,
                reference: None,
            });
        }
        if shape & SHORT == SHORT {
            // The short mirrored form: back to the long form's shape and context flags.
            let flags = (shape >> 2) & SHORT_FLAGS_HIGH | shape & 0x03;
            let mut shape = 1 << O_SHIFT;
            if flags & format::ir::STRIDES != 0 {
                shape |= U;
            }
            let cid = r.take(1)?[0];
            let reference = r.u16()?;
            let (mirror, _) = mirrors
                .numbers_by_checksum(reference)
                .ok_or(DropReason::NoContext)?;
            return Ok(Head {
                shape,
                short: true,
                context: [flags, cid],
                mirror: Some(mirror),
                reference: Some(reference),
            });
        }
        let context = r.take(2)?;
        let (mirrored, numbered) = (context[0] & MIRRORED != 0, context[0] & NUMBERED != 0);
        if numbered && !mirrored {
            return Err(DropReason::Malformed);
        }
        let mirror = match mirrored {
            false => None,
            true => Some(r.u16()?),
        };
        let reference = match numbered {
            false => None,
            true => Some(r.u16()?),
        };
        Ok(Head {
            shape,
            short: false,
            context: [context[0] & !(MIRRORED | NUMBERED), context[1]],
            mirror,
            reference,
        })
    }
}

/// The numbers of the reference a mirrored IR with numbers names (`named`: the mirror's flow
/// hash and the reference's TCP checksum field), which the sibling told of; timestamps on both
/// or neither (option layout `layout_bits` 1 or 0).
fn reference(
    named: Option<(u16, u16)>,
    layout_bits: usize,
    mirrors: &Mirrors,
) -> Result<Option<Numbers>, DropReason> {
    let Some((hash, checksum)) = named else {
        return Ok(None);
    };
    if layout_bits > 1 {
        return Err(DropReason::Malformed);
    }
    let numbers = mirrors
        .numbers(hash, checksum)
        .ok_or(DropReason::NoContext)?;
    if numbers.ts.is_some() != (layout_bits == 1) {
        return Err(DropReason::NoContext);
    }
    Ok(Some(*numbers))
}

/// Appends the IP header of a frame of `shape` and `context` (the length field's octets; the
/// IPv4 header checksum 0, filled in later), then the addresses and ports: the reverse of
/// `mirror`'s, or as the frame sends them.
fn put_ip(
    r: &mut Reader<'_>,
    shape: u8,
    context: [u8; 2],
    mirror: Option<&FlowKey>,
    ir: &mut Vec<u8>,
) -> Result<(), DropReason> {
    let v4 = shape & V == 0;
    if !v4 && shape & (D | Z) != 0 {
        return Err(DropReason::Malformed);
    }
    let first: &[u8] = if shape & S != 0 {
        r.take(if v4 { 1 } else { 4 })?
    } else if v4 {
        &[0]
    } else {
        &V6_FIRST
    };
    if !v4 && first[0] >> 4 != 6 {
        return Err(DropReason::Malformed);
    }
    let ttl = if shape & T != 0 {
        r.take(1)?[0]
    } else {
        USUAL_TTL
    };
    if v4 {
        ir.extend_from_slice(&[V4_FIRST, first[0]]);
        ir.extend_from_slice(&context);
        ir.extend_from_slice(if shape & Z != 0 {
            &[0, 0][..]
        } else {
            r.take(2)?
        });
        ir.extend_from_slice(if shape & D != 0 { &[0, 0] } else { &DF });
        ir.extend_from_slice(&[ttl, protocol::TCP, 0, 0]);
    } else {
        ir.extend_from_slice(first);
        ir.extend_from_slice(&context);
        ir.extend_from_slice(&[protocol::TCP, ttl]);
    }
    match mirror {
        Some(flow) => put_flow(flow, ir),
        None => {
            ir.extend_from_slice(r.take(if v4 { 8 } else { 32 })?);
            ir.extend_from_slice(r.take(4)?);
        }
    }
    Ok(())
}

/// Appends the TCP header from the sequence number to the checksum field, of a TCP header of
/// `tcp_len` octets: the numbers against `reference`, a compact SYN's flags first, or as sent.
/// Returns whether the segment is a SYN without ACK (which sends no acknowledgment number nor
/// TS echo: they are 0).
fn put_tcp(
    r: &mut Reader<'_>,
    framing: Framing,
    reference: Option<&Numbers>,
    tcp_len: usize,
    ir: &mut Vec<u8>,
) -> Result<bool, DropReason> {
    let data_offset = ((tcp_len / 4) as u8) << 4;
    match reference {
        Some(n) => {
            let seq = n.ack.wrapping_add(r.signed()?);
            let ack = n.next_seq.wrapping_add(r.signed()?);
            ir.extend_from_slice(&seq.to_be_bytes());
            ir.extend_from_slice(&ack.to_be_bytes());
            ir.push(data_offset);
            ir.push(r.take(1)?[0]);
            ir.extend_from_slice(&add16(n.window, r.signed()?).to_be_bytes());
            ir.extend_from_slice(r.take(2)?);
            Ok(false)
        }
        None if framing == Framing::Packet => {
            // The flags first; without ACK, no acknowledgment number (0).
            let tcp_flags = r.take(1)?[0];
            let bare_syn = tcp_flags & ACK == 0;
            ir.extend_from_slice(r.take(4)?);
            ir.extend_from_slice(if bare_syn { &[0; 4][..] } else { r.take(4)? });
            ir.extend_from_slice(&[data_offset, tcp_flags]);
            ir.extend_from_slice(r.take(4)?);
            Ok(bare_syn)
        }
        None => {
            ir.extend_from_slice(r.take(8)?);
            ir.push(data_offset);
            ir.extend_from_slice(r.take(5)?);
            Ok(false)
        }
    }
}

/// Appends the TCP options of layout `layout_bits`: with a reference, the Timestamps option's
/// fixed octets and its value and echo from their differences; else the layout's octets, its
/// holes as sent (a bare SYN's TS echo 0).
fn put_options(
    r: &mut Reader<'_>,
    layout_bits: usize,
    reference: Option<&Numbers>,
    bare_syn: bool,
    ir: &mut Vec<u8>,
) -> Result<(), DropReason> {
    let layout = LAYOUTS[layout_bits];
    match reference.and_then(|n| n.ts) {
        Some((val, ecr)) => {
            // Layout 1: the Timestamps option's fixed octets, then its value and echo.
            let ts_val = ecr.wrapping_add(r.signed()?);
            let ts_ecr = val.wrapping_add(r.signed()?);
            ir.extend(layout.iter().filter(|&&l| l != HOLE).map(|&l| l as u8));
            ir.extend_from_slice(&ts_val.to_be_bytes());
            ir.extend_from_slice(&ts_ecr.to_be_bytes());
        }
        None => {
            for (at, &l) in layout.iter().enumerate() {
                ir.push(match l {
                    HOLE if bare_syn && is_syn_echo(layout_bits, at) => 0,
                    HOLE => r.take(1)?[0],
                    fixed => fixed as u8,
                });
            }
        }
    }
    Ok(())
}

/// Fills in the rebuilt frame's derived fields: a packet's length field (an IR frame's holds
/// its context flags and CID) and the IPv4 header checksum (of the header with its length).
fn fill_lengths(framing: Framing, v4: bool, ir: &mut [u8]) -> Result<(), DropReason> {
    let len =
        u16::try_from(ir.len() - if v4 { 0 } else { 40 }).map_err(|_| DropReason::Malformed)?;
    let at = packet::length_field_offset(v4);
    if framing == Framing::Packet {
        ir[at..at + 2].copy_from_slice(&len.to_be_bytes());
    }
    if v4 {
        let mut header = [0u8; 20];
        header.copy_from_slice(&ir[..20]);
        header[at..at + 2].copy_from_slice(&len.to_be_bytes());
        ir[10..12].copy_from_slice(&checksum::checksum(&header).to_be_bytes());
    }
    Ok(())
}

/// Reads a compact frame's fields in order.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// The next `n` octets.
    fn take(&mut self, n: usize) -> Result<&'a [u8], DropReason> {
        let (head, tail) = self.rest.split_at_checked(n).ok_or(DropReason::Malformed)?;
        self.rest = tail;
        Ok(head)
    }

    /// The next two octets, big-endian.
    fn u16(&mut self) -> Result<u16, DropReason> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    /// The next signed number ([`numbers::put_signed`]).
    fn signed(&mut self) -> Result<u32, DropReason> {
        let (d, used) = numbers::get_signed(self.rest).ok_or(DropReason::Malformed)?;
        self.rest = &self.rest[used..];
        Ok(d)
    }
}

/// Appends a flow's addresses and then its ports (an IR frame's octets from the IP addresses to
/// the TCP ports).
fn put_flow(flow: &FlowKey, ir: &mut Vec<u8>) {
    for a in [flow.src, flow.dst] {
        match a {
            IpAddr::V4(a) => ir.extend_from_slice(&a.octets()),
            IpAddr::V6(a) => ir.extend_from_slice(&a.octets()),
        }
    }
    ir.extend_from_slice(&flow.src_port.to_be_bytes());
    ir.extend_from_slice(&flow.dst_port.to_be_bytes());
}
