//! IR-S: a TCP handshake or reset segment (SYN, SYN-ACK, RST), which CO cannot carry, between
//! hosts that already have a context, coded against that base context's IP header
//! (specification section 4.1). The frame sets up no context: the flow's context starts with
//! its next segment, as before (IR-R from a base).
//!
//! ```text
//! | base CID | shape | extension (if X) | hash low octet (if M) |
//! | reference's checksum (2, if N; with R its high octet first, its low octet after the
//!   extension, in the base CID's and the hash's places) |
//! | IP bytes (6, unless I) | IP-ID (2, IPv4 unless Z) | ports | sequence (4) |
//! | TCP octets 12-13 | acknowledgment (4, if ACK; a difference if N) | window (2) |
//! | checksum XOR the seal (2) | urgent pointer (2, if URG) |
//! | options (a layout's values, or raw if code 0; the TS echo a difference if N) | payload |
//!   shape: | I | P | Q | M | X | code (3 bits) |  I the six IP bytes are the base context's,
//!   P / Q the source / destination port is the base's and the other is coded against the
//!   base's ([`ports`]; neither: both whole, 4 octets), X an extension octet follows, code the
//!   options' layout (LAYOUTS[code - 1]; 0 the options follow raw).
//!   extension: | Z | N | S | R | 0 0 0 0 |  Z the IPv4 Identification is 0 (not sent), N the
//!   acknowledgment number and TS echo are coded against a reference (mirror numbers), S the
//!   MSS is the usual one (1460 on IPv4, 1440 on IPv6; not sent), R (with M and N) the
//!   reference names the mirror: no hash.
//! ```
//!
//! With M the base is a *mirror* ([`super::mirror`]): no context of this direction, but the
//! reverse of a flow the sibling codec holds or told of lately, named by the 16-bit hash of
//! its flow (the first octet and one after the shape). The base template is then
//! [`mirror_template`]: the usual IP header between the mirror's addresses, reversed, and its
//! ports, reversed.
//!
//! With N (only with M and ACK) the frame names a *reference*, a packet of the mirror's flow by
//! its TCP checksum field, as a mirrored compact IR with numbers does
//! ([`super::numbers`]): its acknowledgment number goes as a signed variable-length difference
//! from the reference's next sequence number, and its TS echo (with a layout that has it) as
//! one from the reference's TS value. A SYN-ACK then codes both against its SYN: two octets
//! where there were eight, less the reference's two.
//!
//! Both ends code the frame here: the compressor writes it with [`write()`], the decompressor
//! reads it through [`IrS`], a view of its bytes that names its base and reference and rebuilds
//! its packet.

use alloc::vec::Vec;

use taroc_wire::checksum::transport_verifies;
use taroc_wire::ip::IpInfo;
use taroc_wire::tcp::{flags, SackBlocks, TcpOption, TcpSegment};
use taroc_wire::{ipv4, protocol};

use core::net::IpAddr;

use super::format::IR_R_IP_BYTES;
use super::mirror;
use super::numbers::{put_signed, signed_len, Numbers};
use super::ports;
use super::seal;
use crate::tcp::packet::{FlowKey, TcpIpPacket};

/// Shape bit: the six IP bytes are the base context's (none follow).
pub const BASE_IP: u8 = 0x80;

/// Shape bit: the source port is the base's ([`ports::Mode::SourceKept`]).
pub const SOURCE_KEPT: u8 = 0x40;

/// Shape bit: the destination port is the base's ([`ports::Mode::DestKept`]).
pub const DEST_KEPT: u8 = 0x20;

/// Shape bit: the base is a mirror ([`mirror_template`]), named by the hash of its flow: high
/// octet first, low octet after the shape.
pub const MIRROR: u8 = 0x10;

/// Shape bit: an extension octet follows the shape (and the mirror hash's low octet).
pub const EXTENDED: u8 = 0x08;

/// Extension bit: the IPv4 Identification is 0 and not sent (Linux's SYN-ACK and RST).
pub const ZERO_ID: u8 = 0x80;

/// Extension bit: the acknowledgment number and TS echo are coded against a reference.
pub const NUMBERED: u8 = 0x40;

/// Extension bit: the MSS option's value is the usual one (1500 octets less the IP header and
/// a bare TCP header: 1460 on IPv4, 1440 on IPv6) and not sent (only
/// with an option layout, codes 1 and 2, both of which start with the MSS option).
pub const USUAL_MSS: u8 = 0x20;

/// Extension bit (with [`MIRROR`] and [`NUMBERED`] only): the reference's checksum alone names
/// it, and its flow is the mirror: no hash is sent, the frame's first octet is the checksum's
/// high octet and its low octet follows the extension.
pub const NAMED: u8 = 0x10;

/// Extension bit: the window is the usual one for the segment and not sent: 0 in a RST, else
/// 65535 rounded down to a multiple of the usual MSS, less 12 in a SYN-ACK with timestamps
/// (64240 in a SYN, 65160 in a SYN-ACK on IPv4).
pub const USUAL_WINDOW: u8 = 0x08;

/// Extension bits: the TCP flags' code (1 SYN, 2 SYN and ACK, 3 RST); nonzero, TCP octets
/// 12 and 13 (data offset and flags) are not sent: the flags are the code's, the data offset
/// that of the option layout (5 without one).
pub const FLAGS_CODE: u8 = 0x06;

/// The TCP flags a nonzero [`FLAGS_CODE`] stands for (codes 1, 2, 3).
const FLAGS: [u8; 3] = [flags::SYN, flags::SYN | flags::ACK, flags::RST];

/// The extension's reserved bits: set (or no bit set at all), the frame is malformed.
const EXTENSION_RESERVED: u8 = 0x01;

/// The window Linux announces in a segment of IP version `v4` or 6 with TCP flags `tcp_flags`
/// and option layout `code` on an Ethernet path: 0 in a RST; else 65535 rounded down to a
/// multiple of the segment size, the usual MSS ([`usual_mss`]) less the 12 octets of the
/// Timestamps option in a SYN-ACK that has it (layout 1): 64240 and 65160 on IPv4, 64800 and
/// 64260 on IPv6.
fn usual_window(v4: bool, tcp_flags: u8, code: u8) -> [u8; 2] {
    if tcp_flags & flags::RST != 0 {
        return [0, 0];
    }
    let timestamps = tcp_flags & flags::ACK != 0 && code == 1;
    let size = u16::from_be_bytes(usual_mss(v4)) - if timestamps { 12 } else { 0 };
    (u16::MAX - u16::MAX % size).to_be_bytes()
}

/// The TCP data offset octet of a segment with option layout `code` (0: no options) and no
/// other options: what a nonzero [`FLAGS_CODE`] leaves out.
fn layout_data_offset(code: u8) -> Option<u8> {
    let options = match code {
        0 => 0,
        c => LAYOUTS.get(usize::from(c) - 1)?.len(),
    };
    Some(((20 + options) / 4) as u8 * 16)
}

/// The MSS a segment of IP version `v4` or 6 announces on an Ethernet path: 1500 octets less
/// the IP header (20 or 40) and the TCP header without options (20): 1460 or 1440.
fn usual_mss(v4: bool) -> [u8; 2] {
    (if v4 { 1460u16 } else { 1440 }).to_be_bytes()
}

/// The shape's options code bits.
const CODE: u8 = 0x07;

/// The option layouts an options code names (code 1, 2, ...; code 0: the options follow raw).
/// A value above 0xFF is a *hole*, whose octet is sent: `VALUE` a plain one, `ECHO` one of the
/// timestamp echo, sent only with ACK (else it must be 0).
const LAYOUTS: [&[u16]; 2] = [
    // MSS, SACK permitted, timestamps, NOP, window scale: Linux's SYN and SYN-ACK.
    &[
        2, 4, MSS, MSS, 4, 2, 8, 10, VALUE, VALUE, VALUE, VALUE, ECHO, ECHO, ECHO, ECHO, 1, 3, 3,
        VALUE,
    ],
    // MSS, NOP, NOP, SACK permitted, NOP, window scale: Linux's without timestamps.
    &[2, 4, MSS, MSS, 1, 1, 4, 2, 1, 3, 3, VALUE],
];

/// A hole of [`LAYOUTS`]: the octet is sent.
const VALUE: u16 = 0x100;

/// A hole of [`LAYOUTS`] in the MSS option's value: sent unless the extension has
/// [`USUAL_MSS`].
const MSS: u16 = 0x400;

/// A hole of [`LAYOUTS`] in the timestamp echo: sent only with ACK, else 0.
const ECHO: u16 = 0x200;

/// What [`parse`] reads; with `verify: false` the TCP checksum is not checked (the decompressor
/// reads the fields before it unseals the checksum).
fn read(bytes: &[u8], verify: bool) -> Option<TcpIpPacket<'_>> {
    let ip = IpInfo::parse(bytes).ok()?;
    let v4 = ip.version == 4;
    let header = if v4 { ipv4::MIN_HEADER_LEN } else { 40 };
    if ip.protocol != protocol::TCP
        || ip.fragment
        || ip.declared_len != bytes.len()
        || ip.transport_offset != header
    {
        return None;
    }
    if v4 {
        let h = ipv4::Ipv4Packet::new_checked(bytes).ok()?;
        if !h.header_checksum_ok() || h.header_checksum() == 0xFFFF {
            return None;
        }
    }
    let segment = &bytes[header..];
    let tcp = TcpSegment::new_checked(segment).ok()?;
    let f = tcp.flags();
    let kind = f & (flags::SYN | flags::RST | flags::FIN);
    if kind != flags::SYN && kind != flags::RST {
        return None;
    }
    if verify && !transport_verifies(ip.src, ip.dst, protocol::TCP, segment) {
        return None;
    }
    let mut ts = None;
    for option in tcp.option_iter() {
        if let TcpOption::Timestamps { val, ecr } = option.ok()? {
            ts.get_or_insert((val, ecr));
        }
    }
    Some(TcpIpPacket::from_parts(
        bytes,
        &ip,
        &tcp,
        ts,
        SackBlocks::default(),
        false,
    ))
}

/// The packet as a segment IR-S codes: SYN or RST set (not both), FIN clear; IPv4 without
/// options or IPv6 without extension headers, not a fragment; its IPv4 header checksum (not the
/// 0xFFFF spelling of zero) and its TCP checksum valid.
pub fn parse(bytes: &[u8]) -> Option<TcpIpPacket<'_>> {
    read(bytes, true)
}

/// The seal of a handshake segment: [`seal::seal`] under the identity a context made for it
/// would have.
fn seal_of(p: &TcpIpPacket<'_>) -> u16 {
    seal::seal(seal::packet_identity_hash(p), &p.fields, 0)
}

/// How an IR-S frame names its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// A context of this direction, by CID.
    Context(u8),
    /// A mirror ([`MIRROR`]), by the hash of its flow ([`mirror::flow_hash`]).
    Mirror(u16),
    /// A mirror named by the reference the frame's numbers are coded against ([`NAMED`]), by
    /// that reference's TCP checksum field: the newest numbers of any flow with it
    /// ([`super::mirror::Mirrors::numbers_by_checksum`]).
    Reference(u16),
}

/// The template an IR-S against a mirror of flow `mirror` (the sibling's) is coded against: the
/// usual IP header (IPv4: version 4, IHL 5, DF, TTL 64; IPv6: traffic class and flow label 0,
/// hop limit 64; TCP) from the mirror's destination to its source, then its ports, swapped.
pub fn mirror_template(mirror: &FlowKey, out: &mut Vec<u8>) {
    out.clear();
    let flow = mirror::reversed(mirror);
    match (flow.src, flow.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            out.extend_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, protocol::TCP, 0, 0]);
            out.extend_from_slice(&s.octets());
            out.extend_from_slice(&d.octets());
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            out.extend_from_slice(&[0x60, 0, 0, 0, 0, 0, protocol::TCP, 64]);
            out.extend_from_slice(&s.octets());
            out.extend_from_slice(&d.octets());
        }
        _ => return,
    }
    out.extend_from_slice(&flow.src_port.to_be_bytes());
    out.extend_from_slice(&flow.dst_port.to_be_bytes());
}

/// Writes the IR-S frame of `p` (see [`parse`]) against `base` (a context or a mirror by its
/// hash), of template `base_template`, coding its acknowledgment number and TS echo against
/// `reference` (a mirror's numbers, see [`super::numbers`], and whether its checksum alone
/// names it, [`NAMED`]) where that is shorter. `false` (and `out` unspecified) if the segment is
/// one IR-S cannot carry: its template is not the base's but for the six IP bytes and the
/// ports, or a field that must be 0 is not; and for a [`Base::Reference`] (what a decompressor
/// reads, never a base to write against).
pub fn write(
    p: &TcpIpPacket<'_>,
    base_template: &[u8],
    base: Base,
    reference: Option<(&Numbers, bool)>,
    out: &mut Vec<u8>,
) -> bool {
    out.clear();
    try_write(p, base_template, base, reference, out).is_some()
}

fn try_write(
    p: &TcpIpPacket<'_>,
    base_template: &[u8],
    base: Base,
    reference: Option<(&Numbers, bool)>,
    out: &mut Vec<u8>,
) -> Option<()> {
    if !fits_template(p, base_template) {
        return None;
    }
    let header = p.tcp_offset;
    let tcp = &p.bytes[header..];
    let options = &tcp[20..p.tcp_header_len];
    let ack = p.flags & flags::ACK != 0;
    let code = LAYOUTS
        .iter()
        .position(|l| fits(l, options, ack))
        .map_or(0, |c| c as u8 + 1);
    let ip_bytes = &IR_R_IP_BYTES[usize::from(!p.v4)];
    let base_ip = ip_bytes.iter().all(|&at| p.bytes[at] == base_template[at]);
    let own_ports: &[u8; 4] = tcp[..4].try_into().expect("a TCP header");
    let base_ports: &[u8; 4] = base_template[header..]
        .try_into()
        .expect("the length fits_template checked");
    let mode = ports::mode(own_ports, base_ports);
    let numbered = match (base, reference) {
        (Base::Mirror(_), Some((r, _))) => numbered(p, r, code),
        _ => None,
    };
    let named = reference.is_some_and(|(_, named)| named);
    let extension = extension_of(p, options, code, numbered.is_some(), named);
    let (first, second) = names(base, numbered, extension)?;
    let mut shape = code;
    for (on, bit) in [
        (base_ip, BASE_IP),
        (mode == ports::Mode::SourceKept, SOURCE_KEPT),
        (mode == ports::Mode::DestKept, DEST_KEPT),
        (second.is_some(), MIRROR),
        (extension != 0, EXTENDED),
    ] {
        if on {
            shape |= bit;
        }
    }
    out.extend_from_slice(&[first, shape]);
    if extension != 0 {
        out.push(extension);
    }
    // The hash's low octet, or with NAMED the checksum's.
    out.extend(second);
    if extension & NAMED == 0 {
        if let Some((checksum, _)) = numbered {
            out.extend_from_slice(&checksum.to_be_bytes());
        }
    }
    if !base_ip {
        out.extend(ip_bytes.iter().map(|&at| p.bytes[at]));
    }
    if p.v4 && extension & ZERO_ID == 0 {
        out.extend_from_slice(&p.bytes[ipv4::IDENT_OFFSET..ipv4::IDENT_OFFSET + 2]);
    }
    ports::put(out, mode, own_ports, base_ports);
    put_tcp(p, extension, numbered, out);
    put_options(options, code, ack, extension, numbered, out);
    out.extend_from_slice(p.payload());
    Some(())
}

/// The reference's TCP checksum field and the differences ([`number_differences`]) an IR-S
/// with N sends.
type Numbered = (u16, [Option<u32>; 2]);

/// Whether `p`'s template is `base_template` but for the six IP bytes and the ports, and the
/// fields that must be 0 without their flag (the acknowledgment number without ACK, the urgent
/// pointer without URG) are.
fn fits_template(p: &TcpIpPacket<'_>, base_template: &[u8]) -> bool {
    let header = p.tcp_offset;
    if base_template.len() != header + 4 {
        return false;
    }
    let ip_bytes = &IR_R_IP_BYTES[usize::from(!p.v4)];
    let same = |at: usize| ip_bytes.contains(&at) || p.template_byte(at) == base_template[at];
    let ack = p.flags & flags::ACK != 0;
    let urg = p.flags & flags::URG != 0;
    (0..header).all(same) && (ack || p.fields.ack == 0) && (urg || p.urgent == 0)
}

/// The numbers of `p`, with option layout `code`, coded against a mirror's `reference`, if
/// that is shorter: only with ACK, and with the TS echo only if the reference has timestamps.
fn numbered(p: &TcpIpPacket<'_>, reference: &Numbers, code: u8) -> Option<Numbered> {
    let ack = p.flags & flags::ACK != 0;
    let echo = ack && code == 1;
    if !ack || echo && reference.ts.is_none() {
        return None;
    }
    let diffs = number_differences(p, reference, echo);
    let cost = 2 + diffs
        .iter()
        .flatten()
        .map(|&d| signed_len(d))
        .sum::<usize>();
    (cost < if echo { 8 } else { 4 }).then_some((reference.checksum, diffs))
}

/// The extension octet of `p`, with TCP `options` of layout `code`, its numbers coded against
/// a reference if `numbered` (one that names its mirror if `named`).
fn extension_of(p: &TcpIpPacket<'_>, options: &[u8], code: u8, numbered: bool, named: bool) -> u8 {
    let tcp = &p.bytes[p.tcp_offset..];
    let mut extension = 0;
    if p.v4 && p.fields.ip_id == 0 {
        extension |= ZERO_ID;
    }
    if numbered {
        extension |= NUMBERED;
        if named {
            extension |= NAMED;
        }
    }
    if code != 0 && options[2..4] == usual_mss(p.v4) {
        extension |= USUAL_MSS;
    }
    if [tcp[14], tcp[15]] == usual_window(p.v4, tcp[13], code) {
        extension |= USUAL_WINDOW;
    }
    // Octets 12 and 13 left out: no options but the layout's (without a layout, none at all:
    // a data offset of 5).
    let flags_code = FLAGS
        .iter()
        .position(|&f| f == tcp[13])
        .filter(|_| Some(tcp[12]) == layout_data_offset(code))
        .map_or(0, |i| i as u8 + 1);
    extension | flags_code << 1
}

/// The octets that name the base: the first, and for a mirror the one after the shape (and
/// the extension): its hash, or with [`NAMED`] the reference's checksum (the compressor names a
/// mirror by hash: R is its own choice, never the caller's). `None` for a [`Base::Reference`]
/// (what a decompressor reads, never a base to write against).
fn names(base: Base, numbered: Option<Numbered>, extension: u8) -> Option<(u8, Option<u8>)> {
    match base {
        Base::Context(cid) => Some((cid, None)),
        Base::Mirror(hash) => {
            let named = match numbered {
                Some((checksum, _)) if extension & NAMED != 0 => checksum,
                _ => hash,
            };
            let [high, low] = named.to_be_bytes();
            Some((high, Some(low)))
        }
        Base::Reference(_) => None,
    }
}

/// Writes `p`'s TCP fields from the sequence number to the urgent pointer, as `extension` says
/// (the acknowledgment number against a reference if `numbered`), the checksum sealed.
fn put_tcp(p: &TcpIpPacket<'_>, extension: u8, numbered: Option<Numbered>, out: &mut Vec<u8>) {
    let tcp = &p.bytes[p.tcp_offset..];
    out.extend_from_slice(&tcp[4..8]);
    if extension & FLAGS_CODE == 0 {
        out.extend_from_slice(&tcp[12..14]);
    }
    match numbered {
        Some((_, [Some(d), _])) => put_signed(d, out),
        _ if p.flags & flags::ACK != 0 => out.extend_from_slice(&tcp[8..12]),
        _ => {}
    }
    if extension & USUAL_WINDOW == 0 {
        out.extend_from_slice(&tcp[14..16]);
    }
    let sealed = p.checksum ^ seal_of(p);
    out.extend_from_slice(&sealed.to_be_bytes());
    if p.flags & flags::URG != 0 {
        out.extend_from_slice(&tcp[18..20]);
    }
}

/// Writes TCP `options` of layout `code` (0: raw): the layout's holes, the MSS unless usual
/// ([`USUAL_MSS`]), the TS echo only with `ack` (a difference if `numbered` has one).
fn put_options(
    options: &[u8],
    code: u8,
    ack: bool,
    extension: u8,
    numbered: Option<Numbered>,
    out: &mut Vec<u8>,
) {
    let echo_difference = numbered.and_then(|(_, [_, d])| d);
    let usual = extension & USUAL_MSS != 0;
    match code {
        0 => out.extend_from_slice(options),
        c => {
            let mut echo_sent = false;
            for (&l, &o) in LAYOUTS[usize::from(c) - 1].iter().zip(options) {
                match (l, echo_difference) {
                    (VALUE, _) => out.push(o),
                    (MSS, _) if !usual => out.push(o),
                    (ECHO, Some(d)) if !echo_sent => {
                        put_signed(d, out);
                        echo_sent = true;
                    }
                    (ECHO, None) if ack => out.push(o),
                    _ => {}
                }
            }
        }
    }
}

/// The differences an IR-S with N sends for `p` against `reference`: its acknowledgment number
/// from the reference's next sequence number, and (if `echo`, the layout having the TS echo)
/// its TS echo from the reference's TS value.
fn number_differences(p: &TcpIpPacket<'_>, reference: &Numbers, echo: bool) -> [Option<u32>; 2] {
    let ack = p.fields.ack.wrapping_sub(reference.next_seq);
    let ecr = reference
        .ts
        .filter(|_| echo)
        .map(|(val, _)| p.fields.ts_ecr.wrapping_sub(val));
    [Some(ack), ecr]
}

/// Whether `options` follow `layout` (with a zero echo unless `ack`).
fn fits(layout: &[u16], options: &[u8], ack: bool) -> bool {
    layout.len() == options.len()
        && layout.iter().zip(options).all(|(&l, &o)| match l {
            VALUE | MSS => true,
            ECHO => ack || o == 0,
            fixed => u16::from(o) == fixed,
        })
}

mod decode;

pub use decode::IrS;

#[cfg(test)]
mod tests;
