//! What TAROC reads from a TCP/IP packet, and the parts both sides rebuild it from.
//!
//! A packet is split into a *template* (every header byte that must not change within a
//! context: IP addresses, TTL / hop limit, DSCP, DF, IP options, IPv6 flow label and extension
//! headers, TCP ports) and the per-packet fields that the COMPRESSED_TCP format carries.

use alloc::vec::Vec;
use core::net::IpAddr;

use taroc_wire::checksum::{transport_verifies, Sum};
use taroc_wire::ip::IpInfo;
use taroc_wire::tcp::{flags, SackBlocks, TcpSegment};
use taroc_wire::{ipv4, protocol};

mod options;
mod rebuild;
pub use options::{canonical_options, MAX_OPTIONS};
use options::{parse_options, usual_options};
pub use rebuild::{rebuild, tcp_checksum_ok};

/// The fields W-LSB encodes (draft section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fields {
    /// TCP sequence number.
    pub seq: u32,
    /// TCP acknowledgment number.
    pub ack: u32,
    /// TCP window.
    pub win: u16,
    /// IPv4 Identification (0 for IPv6).
    pub ip_id: u16,
    /// Timestamp value (0 without the option).
    pub ts_val: u32,
    /// Timestamp echo reply (0 without the option).
    pub ts_ecr: u32,
}

/// Longest template (IP headers plus TCP ports) a context keeps; longer headers pass as TYPE_IP.
pub const MAX_TEMPLATE_LEN: usize = 128;

/// The identity of a TCP stream in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
}

/// A TCP/IP packet TAROC can carry as UNCOMPRESSED_TCP (and perhaps as COMPRESSED_TCP).
#[derive(Debug, Clone)]
pub struct TcpIpPacket<'a> {
    /// The whole packet.
    pub bytes: &'a [u8],
    /// IPv4 (true) or IPv6.
    pub v4: bool,
    /// Offset of the TCP header.
    pub tcp_offset: usize,
    /// TCP header length, options included.
    pub tcp_header_len: usize,
    /// The stream.
    pub key: FlowKey,
    /// The W-LSB fields.
    pub fields: Fields,
    /// Whether a Timestamps option is present.
    pub ts: bool,
    /// SACK blocks, if a SACK option is present.
    pub sack: SackBlocks,
    /// Whether the options are exactly the canonical layout of `ts` and `sack`
    /// (see [`canonical_options`]).
    pub canonical_options: bool,
    /// TCP flags octet.
    pub flags: u8,
    /// Urgent pointer.
    pub urgent: u16,
    /// The R-octet value of this packet (RFC 2507 section 6 a).
    pub r_octet: u8,
    /// TCP checksum field.
    pub checksum: u16,
}

impl<'a> TcpIpPacket<'a> {
    /// Parses `bytes` as a TCP/IP packet TAROC can carry: IPv4 or IPv6, not a fragment, exactly as
    /// long as the IP header says, valid IPv4 header checksum and valid TCP checksum, ACK set,
    /// SYN and RST clear, well-formed options, a template of at most [`MAX_TEMPLATE_LEN`]
    /// bytes. Anything else travels as TYPE_IP.
    pub fn parse(bytes: &'a [u8]) -> Option<TcpIpPacket<'a>> {
        match plain_layout(bytes) {
            Some(v4) => TcpIpPacket::parse_plain(bytes, v4),
            None => TcpIpPacket::parse_general(bytes),
        }
    }

    /// [`TcpIpPacket::parse`] for the layouts nearly every packet has ([`plain_layout`]; IPv4
    /// if `v4`), read in place; for these layouts, the same answer as
    /// [`TcpIpPacket::parse_general`] (`plain_parse_agrees_with_the_general_parse` checks it).
    fn parse_plain(bytes: &'a [u8], v4: bool) -> Option<TcpIpPacket<'a>> {
        let ip_len = if v4 {
            ipv4::MIN_HEADER_LEN
        } else {
            taroc_wire::ipv6::HEADER_LEN
        };
        let be16 = |at: usize| u16::from_be_bytes([bytes[at], bytes[at + 1]]);
        let (src, dst) = if v4 {
            let declared = usize::from(be16(2));
            let fragment = be16(6) & 0x3FFF != 0;
            if declared != bytes.len() || bytes[9] != protocol::TCP || fragment {
                return None;
            }
            // Valid, and not the 0xFFFF spelling of zero (see `parse_general`).
            let header = &bytes[..ip_len];
            if !Sum::new().add_bytes(header).verifies() || be16(10) == 0xFFFF {
                return None;
            }
            let addr = |at: usize| -> IpAddr {
                let octets: [u8; 4] = bytes[at..at + 4].try_into().expect("4 octets");
                core::net::Ipv4Addr::from(octets).into()
            };
            (addr(12), addr(16))
        } else {
            if ip_len + usize::from(be16(4)) != bytes.len() {
                return None;
            }
            let addr = |at: usize| -> IpAddr {
                let octets: [u8; 16] = bytes[at..at + 16].try_into().expect("16 octets");
                core::net::Ipv6Addr::from(octets).into()
            };
            (addr(8), addr(24))
        };
        let segment = &bytes[ip_len..];
        let tcp_header_len = usize::from(segment[12] >> 4) * 4;
        let f = segment[13];
        if tcp_header_len < 20
            || segment.len() < tcp_header_len
            || f & (flags::SYN | flags::RST) != 0
            || f & flags::ACK == 0
        {
            return None;
        }
        // The pseudo-header's addresses are the octets just before the segment: one sum over
        // both.
        let addresses = if v4 { 12 } else { 8 };
        let verifies = Sum::new()
            .add_u32(segment.len() as u32)
            .add_u16(protocol::TCP.into())
            .add_bytes(&bytes[addresses..])
            .verifies();
        if !verifies {
            return None;
        }
        let options = &segment[20..tcp_header_len];
        let (ts, sack, canonical_options) = match usual_options(options) {
            Some(ts) => (ts, SackBlocks::default(), true),
            None => parse_options(options)?,
        };
        Some(TcpIpPacket::assemble(
            bytes,
            (v4, ip_len, src, dst),
            tcp_header_len,
            ts,
            sack,
            canonical_options,
        ))
    }

    /// [`TcpIpPacket::parse`] for any layout.
    fn parse_general(bytes: &'a [u8]) -> Option<TcpIpPacket<'a>> {
        let ip = IpInfo::parse(bytes).ok()?;
        if ip.protocol != protocol::TCP || ip.fragment || ip.declared_len != bytes.len() {
            return None;
        }
        if ip.transport_offset + 4 > MAX_TEMPLATE_LEN {
            return None;
        }
        let v4 = ip.version == 4;
        if v4 {
            // The decompressor recomputes the header checksum, so it must be the one value a
            // recomputation gives: valid, and not the 0xFFFF spelling of zero.
            let header = ipv4::Ipv4Packet::new_checked(bytes).ok()?;
            if !header.header_checksum_ok() || header.header_checksum() == 0xFFFF {
                return None;
            }
        }
        let segment = &bytes[ip.transport_offset..];
        let tcp = TcpSegment::new_checked(segment).ok()?;
        let f = tcp.flags();
        if f & (flags::SYN | flags::RST) != 0 || f & flags::ACK == 0 {
            return None;
        }
        if !transport_verifies(ip.src, ip.dst, protocol::TCP, segment) {
            return None;
        }
        let (ts, sack, canonical_options) = match usual_options(tcp.options()) {
            Some(ts) => (ts, SackBlocks::default(), true),
            None => parse_options(tcp.options())?,
        };
        Some(TcpIpPacket::from_parts(
            bytes,
            &ip,
            &tcp,
            ts,
            sack,
            canonical_options,
        ))
    }

    /// The packet of `bytes` from its parsed IP header, TCP header and timestamp and SACK
    /// options; what the packet must satisfy is the caller's to check.
    pub(crate) fn from_parts(
        bytes: &'a [u8],
        ip: &IpInfo,
        tcp: &TcpSegment<&[u8]>,
        ts: Option<(u32, u32)>,
        sack: SackBlocks,
        canonical_options: bool,
    ) -> TcpIpPacket<'a> {
        let at = (ip.version == 4, ip.transport_offset, ip.src, ip.dst);
        TcpIpPacket::assemble(bytes, at, tcp.header_len(), ts, sack, canonical_options)
    }

    /// The packet of `bytes`, IPv4 (or IPv6) with addresses `src` and `dst` and its TCP header
    /// of `tcp_header_len` octets at `tcp_offset`, with its timestamp and SACK options: the
    /// fields read in place. What the packet must satisfy is the caller's to check. Inlined,
    /// so that the packet is written where the parse returns it.
    #[inline(always)]
    fn assemble(
        bytes: &'a [u8],
        (v4, tcp_offset, src, dst): (bool, usize, IpAddr, IpAddr),
        tcp_header_len: usize,
        ts: Option<(u32, u32)>,
        sack: SackBlocks,
        canonical_options: bool,
    ) -> TcpIpPacket<'a> {
        let tcp = &bytes[tcp_offset..];
        let be16 = |b: &[u8], at: usize| u16::from_be_bytes([b[at], b[at + 1]]);
        let be32 = |at: usize| u32::from_be_bytes([tcp[at], tcp[at + 1], tcp[at + 2], tcp[at + 3]]);
        let f = tcp[13];
        let ecn = if v4 {
            bytes[1] & 0x03
        } else {
            (bytes[1] >> 4) & 0x03
        };
        let (ts_val, ts_ecr) = ts.unwrap_or((0, 0));
        TcpIpPacket {
            bytes,
            v4,
            tcp_offset,
            tcp_header_len,
            key: FlowKey {
                src,
                dst,
                src_port: be16(tcp, 0),
                dst_port: be16(tcp, 2),
            },
            fields: Fields {
                seq: be32(4),
                ack: be32(8),
                win: be16(tcp, 14),
                ip_id: if v4 { be16(bytes, 4) } else { 0 },
                ts_val,
                ts_ecr,
            },
            ts: ts.is_some(),
            sack,
            canonical_options,
            flags: f,
            urgent: be16(tcp, 18),
            r_octet: r_octet(tcp[12] & 0x0F, f, ecn),
            checksum: be16(tcp, 16),
        }
    }

    /// Payload length in bytes.
    pub fn payload_len(&self) -> usize {
        self.bytes.len() - self.tcp_offset - self.tcp_header_len
    }

    /// The payload.
    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[self.tcp_offset + self.tcp_header_len..]
    }

    /// Writes the template (IP headers and TCP ports, with the per-packet IP fields zeroed) into
    /// `out`, replacing its contents.
    pub fn template_into(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.bytes[..self.tcp_offset + 4]);
        if self.v4 {
            out[1] &= 0xFC; // ECN travels in the R-octet
            out[2..6].fill(0); // Total Length, Identification
            out[ipv4::CHECKSUM_OFFSET..ipv4::CHECKSUM_OFFSET + 2].fill(0);
        } else {
            out[1] &= !0x30; // ECN
            out[4..6].fill(0); // Payload Length
        }
    }

    /// The octet at `at` (below `tcp_offset + 4`) of the template
    /// [`TcpIpPacket::template_into`] writes, read in place.
    pub fn template_byte(&self, at: usize) -> u8 {
        let b = self.bytes[at];
        let c = ipv4::CHECKSUM_OFFSET;
        match (self.v4, at) {
            (true, 1) => b & 0xFC,
            (true, 2..6) => 0,
            (true, _) if (c..c + 2).contains(&at) => 0,
            (false, 1) => b & !0x30,
            (false, 4..6) => 0,
            _ => b,
        }
    }

    /// Whether this packet's template equals `template` (what [`TcpIpPacket::template_into`]
    /// would write, compared in place).
    pub fn matches_template(&self, template: &[u8]) -> bool {
        let n = self.tcp_offset + 4;
        if template.len() != n {
            return false;
        }
        // The usual layouts: the packet's bytes masked as the template zeroes them, in one
        // comparison without branches.
        if let (true, Ok(t)) = (self.v4, template.try_into()) {
            return masked_equal(&self.bytes[..n], t, &PLAIN_V4_MASK);
        }
        if let (false, Ok(t)) = (self.v4, template.try_into()) {
            return masked_equal(&self.bytes[..n], t, &PLAIN_V6_MASK);
        }
        let (b, t) = (&self.bytes[..n], template);
        let zeroed = |range: core::ops::Range<usize>| t[range].iter().all(|&x| x == 0);
        if self.v4 {
            let c = ipv4::CHECKSUM_OFFSET;
            t[0] == b[0]
                && t[1] == b[1] & 0xFC
                && zeroed(2..6)
                && t[6..c] == b[6..c]
                && zeroed(c..c + 2)
                && t[c + 2..] == b[c + 2..]
        } else {
            t[..1] == b[..1]
                && t[1] == b[1] & !0x30
                && t[2..4] == b[2..4]
                && zeroed(4..6)
                && t[6..] == b[6..]
        }
    }
}

/// What [`TcpIpPacket::template_into`] keeps of each byte of an IPv4 header without options
/// and the TCP ports: the ECN bits, Total Length, Identification and the checksum zeroed.
const PLAIN_V4_MASK: [u8; ipv4::MIN_HEADER_LEN + 4] = {
    let mut mask = [0xFF; ipv4::MIN_HEADER_LEN + 4];
    mask[1] = 0xFC;
    (mask[2], mask[3], mask[4], mask[5]) = (0, 0, 0, 0);
    (mask[ipv4::CHECKSUM_OFFSET], mask[ipv4::CHECKSUM_OFFSET + 1]) = (0, 0);
    mask
};

/// The same for an IPv6 header and the TCP ports: the ECN bits and Payload Length zeroed.
const PLAIN_V6_MASK: [u8; taroc_wire::ipv6::HEADER_LEN + 4] = {
    let mut mask = [0xFF; taroc_wire::ipv6::HEADER_LEN + 4];
    mask[1] = !0x30;
    (mask[4], mask[5]) = (0, 0);
    mask
};

/// Whether `bytes` (`N` long) masked by `mask` are `template`.
fn masked_equal<const N: usize>(bytes: &[u8], template: &[u8; N], mask: &[u8; N]) -> bool {
    let Ok(bytes) = <&[u8; N]>::try_from(bytes) else {
        return false;
    };
    let differ = bytes
        .iter()
        .zip(template)
        .zip(mask)
        .fold(0, |differ, ((&b, &t), &m)| differ | ((b & m) ^ t));
    differ == 0
}

/// Whether `bytes` starts with a layout [`TcpIpPacket::parse_plain`] reads, and if so whether
/// it is IPv4: an IPv4 header without options, or an IPv6 header whose next header is TCP, each
/// followed by at least a TCP header's fixed part.
fn plain_layout(bytes: &[u8]) -> Option<bool> {
    let (v4, ip_len) = match bytes.first()? {
        0x45 => (true, ipv4::MIN_HEADER_LEN),
        b if b >> 4 == 6 && bytes.get(6) == Some(&protocol::TCP) => {
            (false, taroc_wire::ipv6::HEADER_LEN)
        }
        _ => return None,
    };
    (bytes.len() >= ip_len + 20).then_some(v4)
}

/// The offset of an IP header's first length field (IPv4 Total Length, IPv6 Payload Length),
/// where full-header frames (UNCOMPRESSED_TCP, IR, IR-N) carry their context flags and CID.
pub fn length_field_offset(v4: bool) -> usize {
    if v4 {
        ipv4::TOTAL_LEN_OFFSET
    } else {
        taroc_wire::ipv6::PAYLOAD_LEN_OFFSET
    }
}

/// The R-octet: bits 0-5 the 6-bit Reserved field of RFC 793 (today's 4 reserved bits, CWR and
/// ECE), bits 6-7 the ECN bits of the IP header.
pub fn r_octet(reserved: u8, tcp_flags: u8, ecn: u8) -> u8 {
    ((reserved & 0x0F) << 4) | ((tcp_flags >> 6) << 2) | (ecn & 0x03)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::spec::Spec;

    /// Recomputes a mutated packet's IPv4 header checksum and TCP checksum where its headers
    /// still say where they are, so that mutations reach past the checksum checks.
    fn fix_checksums(bytes: &mut [u8]) {
        let Ok(ip) = IpInfo::parse(bytes) else {
            return;
        };
        if ip.version == 4 && bytes.len() >= ip.transport_offset {
            bytes[10..12].fill(0);
            let c = taroc_wire::checksum::checksum(&bytes[..ip.transport_offset]);
            bytes[10..12].copy_from_slice(&c.to_be_bytes());
        }
        let at = ip.transport_offset;
        if bytes.len() >= at + 20 {
            bytes[at + 16..at + 18].fill(0);
            let c = Sum::new()
                .add_pseudo_header(ip.src, ip.dst, protocol::TCP, (bytes.len() - at) as u32)
                .add_bytes(&bytes[at..])
                .checksum();
            bytes[at + 16..at + 18].copy_from_slice(&c.to_be_bytes());
        }
    }

    /// The in-place parse of the usual layouts says what the general parse says, whichever
    /// bit of a packet flips (checksums mended or not) and however it is cut short.
    #[test]
    fn plain_parse_agrees_with_the_general_parse() {
        let mut checked = 0;
        for (v4, ts, sack) in (0..8).map(|i| (i & 1 != 0, i & 2 != 0, i & 4 != 0)) {
            let spec = Spec {
                v4,
                ts: ts.then_some((7, 9)),
                sack: if sack {
                    alloc::vec![(100, 200)]
                } else {
                    alloc::vec![]
                },
                payload: 9,
                ..Spec::default()
            };
            let packet = spec.build();
            for at in 0..packet.len() {
                for flip in [0u8, 1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80, 0xFF] {
                    for mend in [false, true] {
                        let mut bytes = packet.clone();
                        bytes[at] ^= flip;
                        if mend {
                            fix_checksums(&mut bytes);
                        }
                        for cut in [0, 1, 2, 9, 10] {
                            let bytes = &bytes[..bytes.len().saturating_sub(cut)];
                            let general = TcpIpPacket::parse_general(bytes);
                            checked += usize::from(general.is_some());
                            let general = alloc::format!("{general:?}");
                            if let Some(v4) = plain_layout(bytes) {
                                let plain = TcpIpPacket::parse_plain(bytes, v4);
                                assert_eq!(alloc::format!("{plain:?}"), general, "{bytes:x?}");
                            }
                            let parsed = alloc::format!("{:?}", TcpIpPacket::parse(bytes));
                            assert_eq!(parsed, general, "{bytes:x?}");
                        }
                    }
                }
            }
        }
        // Mended mutations reach the packets the parse accepts, not only its refusals.
        assert!(checked > 1000, "{checked}");
    }

    /// The in-place comparison and the in-place template bytes agree with writing the
    /// template, whichever header byte (or template byte) differs, and however.
    #[test]
    fn matching_in_place_is_comparing_templates() {
        let plain = |v4| {
            Spec {
                v4,
                ..Spec::default()
            }
            .build()
        };
        for bytes in [plain(true), plain(false), with_ip_options(&plain(true))] {
            let p = TcpIpPacket::parse(&bytes).expect("a valid packet");
            let mut template = Vec::new();
            p.template_into(&mut template);
            assert!(p.matches_template(&template));
            assert!(!p.matches_template(&template[1..]));
            let mut written = Vec::new();
            for at in 0..template.len() {
                for flip in [0x01u8, 0x03, 0x30, 0x80, 0xFF] {
                    let mut other = template.clone();
                    other[at] ^= flip;
                    assert!(
                        !p.matches_template(&other),
                        "template byte {at} ^ {flip:#x}"
                    );
                    let mut changed = bytes.clone();
                    changed[at] ^= flip;
                    let q = TcpIpPacket {
                        bytes: &changed,
                        ..p.clone()
                    };
                    q.template_into(&mut written);
                    for (i, &byte) in written.iter().enumerate() {
                        assert_eq!(q.template_byte(i), byte, "template byte {i}");
                    }
                    assert_eq!(
                        q.matches_template(&template),
                        written == template,
                        "packet byte {at} ^ {flip:#x}"
                    );
                }
            }
        }
    }

    /// An IPv4 packet (without options) with four octets of IP options (NOPs and an end).
    fn with_ip_options(plain: &[u8]) -> Vec<u8> {
        let mut bytes = plain.to_vec();
        bytes.splice(20..20, [1, 1, 1, 0]);
        bytes[0] = 0x46;
        let total = u16::from_be_bytes([bytes[2], bytes[3]]) + 4;
        bytes[2..4].copy_from_slice(&total.to_be_bytes());
        bytes[10..12].fill(0);
        let sum = bytes[..24]
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum::<u32>();
        let folded = (sum & 0xFFFF) + (sum >> 16);
        let folded = (folded & 0xFFFF) + (folded >> 16);
        bytes[10..12].copy_from_slice(&(!(folded as u16)).to_be_bytes());
        bytes
    }
}
