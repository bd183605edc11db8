//! The decompressor's side of a compact IR or SYN: the frame expanded into the full IR it
//! stands for (or the SYN itself), with a mirrored frame's flow from the sibling's mirrors.

use alloc::vec::Vec;

use core::net::IpAddr;

use taroc_wire::tcp::flags::ACK;
use taroc_wire::{checksum, protocol};

use super::{
    add16, is_syn_echo, usual_stride, Framing, D, DF, HOLE, LAYOUTS, O_SHIFT, S, SHORT,
    SHORT_FLAGS_HIGH, T, TCP_LEN, U, USUAL_TTL, V, V4_FIRST, V6_FIRST, Z,
};
use crate::codec::DropReason;
use crate::plus::format::{
    self,
    ir::{MIRRORED, NUMBERED},
};
use crate::plus::mirror::{self, Mirrors};
use crate::plus::numbers;
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
    let mut shape = r.take(1)?[0];
    let short = framing == Framing::Ir && shape & SHORT == SHORT;
    let (context, mirror, reference) = match framing {
        Framing::Ir if short => {
            // The short mirrored form: back to the long form's shape and context flags.
            let flags = (shape >> 2) & SHORT_FLAGS_HIGH | shape & 0x03;
            shape = 1 << O_SHIFT;
            if flags & format::ir::STRIDES != 0 {
                shape |= U;
            }
            let cid = r.take(1)?[0];
            let reference = r.u16()?;
            let (mirror, _) = mirrors
                .numbers_by_checksum(reference)
                .ok_or(DropReason::NoContext)?;
            ([flags, cid], Some(mirror), Some(reference))
        }
        Framing::Ir => {
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
            let flags = context[0] & !(MIRRORED | NUMBERED);
            ([flags, context[1]], mirror, reference)
        }
        Framing::Packet => ([0, 0], None, None),
    };
    let v4 = shape & V == 0;
    let mirror_hash = mirror;
    let mirror = match mirror {
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
    let layout = LAYOUTS[layout_bits];
    // The reference of a mirrored IR with numbers: the packet of the mirror's flow with that
    // checksum that the sibling told of. Timestamps on both or neither.
    let named = mirror_hash.zip(reference);
    let reference = match (reference, mirror_hash) {
        (Some(checksum), Some(hash)) => {
            if layout_bits > 1 {
                return Err(DropReason::Malformed);
            }
            let numbers = mirrors
                .numbers(hash, checksum)
                .ok_or(DropReason::NoContext)?;
            if numbers.ts.is_some() != (layout_bits == 1) {
                return Err(DropReason::NoContext);
            }
            Some(*numbers)
        }
        _ => None,
    };
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
    match &mirror {
        Some(flow) => put_flow(flow, ir),
        None => {
            ir.extend_from_slice(r.take(if v4 { 8 } else { 32 })?);
            ir.extend_from_slice(r.take(4)?);
        }
    }
    let tcp_len = TCP_LEN + layout.len();
    let data_offset = ((tcp_len / 4) as u8) << 4;
    let mut bare_syn = false;
    match &reference {
        Some(n) => {
            let seq = n.ack.wrapping_add(r.signed()?);
            let ack = n.next_seq.wrapping_add(r.signed()?);
            ir.extend_from_slice(&seq.to_be_bytes());
            ir.extend_from_slice(&ack.to_be_bytes());
            ir.push(data_offset);
            ir.push(r.take(1)?[0]);
            ir.extend_from_slice(&add16(n.window, r.signed()?).to_be_bytes());
            ir.extend_from_slice(r.take(2)?);
        }
        None if framing == Framing::Packet => {
            // The flags first; without ACK, no acknowledgment number (0).
            let tcp_flags = r.take(1)?[0];
            bare_syn = tcp_flags & ACK == 0;
            ir.extend_from_slice(r.take(4)?);
            ir.extend_from_slice(if bare_syn { &[0; 4][..] } else { r.take(4)? });
            ir.extend_from_slice(&[data_offset, tcp_flags]);
            ir.extend_from_slice(r.take(4)?);
        }
        None => {
            ir.extend_from_slice(r.take(8)?);
            ir.push(data_offset);
            ir.extend_from_slice(r.take(5)?);
        }
    }
    if let Some(flow) = &mirror {
        let at = ir.len() - 2;
        let sealed = u16::from_be_bytes([ir[at], ir[at + 1]]) ^ mirror::flow_hash(flow);
        ir[at..].copy_from_slice(&sealed.to_be_bytes());
    }
    let ip_len = if v4 { 20 } else { 40 };
    match (&reference, shape & U != 0) {
        (Some(_), true) => {
            let usual = usual_stride(ip_len + tcp_len);
            let difference = if short { 0 } else { r.signed()? };
            ir.extend_from_slice(&add16(usual, difference).to_be_bytes());
        }
        (None, true) => ir.extend_from_slice(r.take(2)?),
        (_, false) => ir.extend_from_slice(&[0, 0]),
    }
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
    ir.extend_from_slice(r.rest);
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
    Ok(named)
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
