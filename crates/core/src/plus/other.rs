//! `taroc-plus` for packets that are not compressible TCP: UDP (its header too), ICMP, IP
//! fragments and any other IP-only packet (IPv4 without options, IPv6 without extension
//! headers). Their contexts live in a CID space of their own, set up by IR-N frames (the packet
//! whole) and used by CO-N frames.
//!
//! Nothing end to end covers all of a rebuilt header (an IP fragment has no transport
//! checksum; ICMP's does not cover the IP header; UDP's leaves out the IP-ID, TTL and TOS), so
//! every CO-N frame carries a CRC-16 of the original header as the compressor saw it, and the
//! decompressor delivers only a rebuilt header with that CRC. The payload is carried
//! verbatim, so the header is all that can be wrong. See `docs/taroc-plus-format.md`, section 8.
//!
//! ```text
//! IR-N (kind byte 0x0A): the packet whole, its first length field replaced by
//!   | flags (0x01: UDP mode, 0x02: ICMP echo mode) | CID |.
//! CO-N (kind byte 0x10 + |0|C|I I|F|): C a CID octet follows, I the IP-ID code (0: the IP-ID
//!   is 0 (always with IPv6), 1: 8 LSBs, 2: 16 bits), F the IPv4 flags and fragment offset
//!   follow (else the IR-N's).
//!   | CID (if C) | IP-ID (0, 1 or 2) | flags + fragment offset (2, if F) | CRC-16 (2) |
//!   | UDP checksum (2, UDP mode) or ICMP sequence number (2, echo mode) | payload |
//! In echo mode the decompressor computes the ICMP checksum (the compressor uses the mode only
//! for echoes whose checksum field is that value).
//! ```

use taroc_wire::protocol;

use crate::codec::FrameKind;

mod compressor;
mod decompressor;

pub use compressor::OtherCompressor;
pub use decompressor::{Head, OtherDecompressor};

/// The kind byte of an IR-N frame.
pub const IR_N: u8 = FrameKind::PROFILE_FIRST + 2;

/// The kind byte of a CO-N frame without any of its bits set.
pub const CO_N: u8 = FrameKind::PROFILE_NON_TCP;

/// Kind bytes from [`CO_N`] up to this one are CO-N frames.
pub const CO_N_LAST: u8 = CO_N | 0x0F;

/// The kind byte of a tunnel frame: an IP-in-IP packet whose outer header goes as CO-N and
/// whose inner packet goes compressed (TCP in its flow's context, anything else this module
/// compresses as IR-N or CO-N), `| CO-N kind byte | CO-N header part | inner kind byte |
/// inner frame |`.
pub const TUNNEL: u8 = 0x20;

/// Whether this module compresses `packet` (IR-N or CO-N, section 8).
pub fn compressible(packet: &[u8]) -> bool {
    shape(packet).is_some()
}

/// The inner packet of an IP-in-IP (IPv4 or IPv6 in either) packet this module compresses.
pub fn tunnelled(packet: &[u8]) -> Option<&[u8]> {
    let s = shape(packet)?;
    let fragment = s.v4 && u16::from_be_bytes([packet[6], packet[7]]) & 0x3FFF != 0;
    let next = if s.v4 { packet[9] } else { packet[6] };
    (!fragment && (next == protocol::IPV4 || next == protocol::IPV6)).then(|| &packet[s.header..])
}

/// Bits of a CO-N kind byte.
pub mod kind {
    /// A CID octet follows (else CID 0).
    pub const C: u8 = 0x08;
    /// Shift of the IP-ID code.
    pub const I_SHIFT: u8 = 1;
    /// The IPv4 flags and fragment offset follow.
    pub const F: u8 = 0x01;
}

/// IR-N frames a context starts with, and answers a context request with.
pub const START_IRS: u8 = 3;

/// A context sends its first refresh IR-N this many packets after its start IR-Ns, so that a
/// decompressor that lost them recovers without context requests (links without feedback).
/// Each refresh doubles the period, up to [`MAX_REFRESH`] (compression slow-start in reverse,
/// as RFC 2507 section 3.3 spaces full headers); a context request starts it over.
pub const REFRESH: u16 = 16;

/// The longest refresh period of an established context.
pub const MAX_REFRESH: u16 = 64;

/// The type octet of a context request for non-TCP contexts: `| 0x02 | CID | CID ... |`, each
/// CID once (the TCP contexts' requests, [`crate::tcp::repair`], have type `0x01`).
pub const REQUEST_N: u8 = 0x02;

/// The CIDs a non-TCP context request names, or `None` if `frame` is not one.
pub fn parse_request(frame: &[u8]) -> Option<&[u8]> {
    match frame {
        [REQUEST_N, cids @ ..] if !cids.is_empty() && cids.len() <= 256 => Some(cids),
        _ => None,
    }
}

/// The CID a CO-N frame of kind byte `k` names (before anything else of it is parsed), if
/// it has one.
pub fn cid_of(k: u8, frame: &[u8]) -> Option<u8> {
    if k & kind::C != 0 {
        frame.first().copied()
    } else {
        Some(0)
    }
}

/// IR-N flag: the context compresses the UDP header as well.
pub const UDP_MODE: u8 = 0x01;

/// IR-N flag: the context compresses an ICMP echo header as well (IPv4 only).
pub const ECHO_MODE: u8 = 0x02;

/// The ICMP echo request and echo reply types.
const ECHO_TYPES: [u8; 2] = [8, 0];

/// Contexts the compressor keeps for these packets (least recently used replaced).
pub const MAX_CONTEXTS: usize = 16;

/// IP-IDs of a context's last packets the compressor keeps, IR-Ns included: it sends 8 LSBs
/// only if they decode against each of them, so that a decompressor that missed up to this many
/// packets minus one (IR-Ns among them) still decodes them.
pub const IP_ID_HISTORY: usize = 8;

/// Fragment fields of a context's last IR-Ns the compressor keeps: a CO-N leaves its fragment
/// field out only if it equals each of them, so that a decompressor that missed up to this many
/// IR-Ns minus one (refreshes, [`REFRESH`]) still rebuilds it.
pub const FRAG_HISTORY: usize = 3;

/// An IP-ID sent as 8 LSBs decodes into `[reference - IP_ID_BELOW, reference + 255 -
/// IP_ID_BELOW]`.
pub const IP_ID_BELOW: u16 = 64;

/// The CRC-16 of CO-N frames: CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no
/// reflection, no final XOR).
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0xFFFFu16;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                crc << 1 ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// A packet this module compresses: its header length (the IP header, plus the UDP header in
/// UDP mode or the ICMP echo header in echo mode), its mode, and whether IPv4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    header: usize,
    udp: bool,
    echo: bool,
    v4: bool,
}

impl Shape {
    /// The IR-N flags of this shape's mode.
    fn flags(self) -> u8 {
        if self.udp {
            UDP_MODE
        } else if self.echo {
            ECHO_MODE
        } else {
            0
        }
    }
}

/// The ICMP checksum of an ICMP message whose checksum field is taken as 0.
fn icmp_checksum(message: &[u8]) -> u16 {
    taroc_wire::checksum::Sum::new()
        .add_bytes(&message[..2])
        .add_bytes(&message[4..])
        .checksum()
}

/// The shape of `packet`, if this module compresses it: IPv4 with a 20-byte header and a
/// valid header checksum, or a fixed IPv6 header, its length fields exact, the whole parsing
/// as IP ([`taroc_wire::ip::IpInfo::parse`]).
fn shape(packet: &[u8]) -> Option<Shape> {
    // Only what parses as IP (extension header chains included) goes in these frames, so a
    // decompressor delivers nothing else whatever frame arrives.
    taroc_wire::ip::IpInfo::parse(packet).ok()?;
    let (v4, ip_len, proto) = match packet.first()? >> 4 {
        4 if packet[0] == 0x45 && packet.len() >= 20 => {
            let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
            let valid = taroc_wire::checksum::checksum(&packet[..20]) == 0;
            (total == packet.len() && valid).then_some((true, 20, packet[9]))?
        }
        6 if packet.len() >= 40 => {
            let payload = usize::from(u16::from_be_bytes([packet[4], packet[5]]));
            (payload + 40 == packet.len() && payload != 0).then_some((false, 40, packet[6]))?
        }
        _ => return None,
    };
    let fragment = v4 && u16::from_be_bytes([packet[6], packet[7]]) & 0x3FFF != 0;
    let udp = proto == protocol::UDP
        && !fragment
        && packet.len() >= ip_len + 8
        && usize::from(u16::from_be_bytes([packet[ip_len + 4], packet[ip_len + 5]]))
            == packet.len() - ip_len;
    // An unfragmented IPv4 ICMP echo whose checksum field is the one the decompressor computes.
    let echo = v4
        && proto == protocol::ICMP
        && !fragment
        && packet.len() >= ip_len + 8
        && ECHO_TYPES.contains(&packet[ip_len])
        && packet[ip_len + 1] == 0
        && icmp_checksum(&packet[ip_len..])
            == u16::from_be_bytes([packet[ip_len + 2], packet[ip_len + 3]]);
    Some(Shape {
        header: ip_len + if udp || echo { 8 } else { 0 },
        udp,
        echo,
        v4,
    })
}

/// The longest header a [`Shape`] has: IPv6 and UDP.
const MAX_HEADER: usize = 48;

/// The static part of a header (its template), written into `buf` without allocating: the
/// lengths, IP-ID, checksums and IPv4 fragment field zeroed (and the UDP checksum in UDP mode).
fn template_in<'a>(packet: &[u8], s: Shape, buf: &'a mut [u8; MAX_HEADER]) -> &'a [u8] {
    let t = &mut buf[..s.header];
    t.copy_from_slice(&packet[..s.header]);
    zero_per_packet(t, s);
    t
}

/// Zeroes the per-packet fields of the header `t` of shape `s`.
fn zero_per_packet(t: &mut [u8], s: Shape) {
    if s.v4 {
        t[2..8].fill(0);
        t[10..12].fill(0);
    } else {
        t[4..6].fill(0);
    }
    if s.udp {
        let u = s.header - 8;
        t[u + 4..u + 8].fill(0);
    }
    if s.echo {
        let i = s.header - 8;
        t[i + 2..i + 4].fill(0);
        t[i + 6..i + 8].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::DropReason;

    fn udp(id: u16, payload: usize) -> Vec<u8> {
        let total = 28 + payload;
        let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, protocol::UDP, 0, 0];
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        p.extend_from_slice(&[0x9c, 0x40, 0, 53]);
        p.extend_from_slice(&((8 + payload) as u16).to_be_bytes());
        p.extend_from_slice(&[0x12, 0x34]);
        p.extend((0..payload).map(|i| i as u8));
        let sum = taroc_wire::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p
    }

    fn round(c: &mut OtherCompressor, d: &mut OtherDecompressor, p: &[u8]) -> (u8, usize) {
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let FrameKind::Profile(k) = c.compress(p, &mut frame, true).unwrap() else {
            panic!("not a profile kind");
        };
        if k == IR_N {
            d.ir_n(&frame, &mut out).unwrap();
        } else {
            d.co_n(k, &frame, &mut out).unwrap();
        }
        assert_eq!(out, p);
        (k, frame.len())
    }

    fn echo(id: u16, sequence: u16, checksum_ok: bool) -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 48, 0, 0, 0x40, 0, 64, protocol::ICMP, 0, 0];
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 8, 0, 0, 0, 0x12, 0x34]);
        p.extend_from_slice(&sequence.to_be_bytes());
        p.extend(0..20u8);
        let sum = icmp_checksum(&p[20..]) ^ u16::from(!checksum_ok);
        p[22..24].copy_from_slice(&sum.to_be_bytes());
        let sum = taroc_wire::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p
    }

    #[test]
    fn icmp_echo_headers_go_as_their_sequence_number() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for i in 0..u16::from(START_IRS) {
            assert_eq!(round(&mut c, &mut d, &echo(50 + i, i, true)).0, IR_N);
        }
        // IP-ID LSBs, CRC-16, the sequence number: the checksum is computed.
        let (k, len) = round(&mut c, &mut d, &echo(60, 2, true));
        assert_eq!((k, len), (CO_N | 1 << kind::I_SHIFT, 1 + 2 + 2 + 20));
        // An echo whose checksum field is not the computed one keeps its ICMP header: another
        // context (IP-only), whose packets still round-trip.
        for i in 0..=u16::from(START_IRS) {
            round(&mut c, &mut d, &echo(61 + i, 3 + i, false));
        }
        let (k, len) = round(&mut c, &mut d, &echo(70, 9, false));
        assert_eq!((k, len), (CO_N | kind::C | 1 << kind::I_SHIFT, 2 + 2 + 28));
    }

    #[test]
    fn crc_is_ccitt_false() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    #[test]
    fn udp_round_trips_in_six_bytes() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for id in (8 - u16::from(START_IRS))..8 {
            assert_eq!(round(&mut c, &mut d, &udp(id, 30)).0, IR_N);
        }
        let (k, len) = round(&mut c, &mut d, &udp(9, 30));
        assert_eq!((k, len), (CO_N | 1 << kind::I_SHIFT, 1 + 2 + 2 + 30));
        // A jump past the 8-bit interval goes whole; a fragment field of its own.
        assert_eq!(round(&mut c, &mut d, &udp(9000, 5)).0, CO_N | 2 << 1);
        assert_eq!(round(&mut c, &mut d, &udp(0, 5)).0, CO_N);
    }

    #[test]
    fn a_wrong_context_is_refused_not_delivered() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for id in (8 - u16::from(START_IRS))..8 {
            round(&mut c, &mut d, &udp(id, 30));
        }
        let mut other = udp(8, 30);
        other[8] = 63; // another TTL: another context, CID 1, whose IR-N is lost
        other[10..12].fill(0);
        let sum = taroc_wire::checksum::checksum(&other[..20]);
        other[10..12].copy_from_slice(&sum.to_be_bytes());
        let mut frame = Vec::new();
        for _ in 0..START_IRS {
            c.compress(&other, &mut frame, true);
        }
        let mut out = Vec::new();
        // Its CO-N rides on CID 1, which the decompressor lacks.
        let FrameKind::Profile(k) = c.compress(&other, &mut frame, true).unwrap() else {
            panic!()
        };
        assert_eq!(d.co_n(k, &frame, &mut out), Err(DropReason::NoContext));
        // Forced onto CID 0: the CRC refuses it.
        let mut forged = frame[1..].to_vec();
        assert_eq!(
            d.co_n(k & !kind::C, &forged, &mut out),
            Err(DropReason::ChecksumMismatch)
        );
        assert!(out.is_empty());
        forged.truncate(1);
        assert_eq!(
            d.co_n(k & !kind::C, &forged, &mut out),
            Err(DropReason::Malformed)
        );
    }

    #[test]
    fn fragments_and_ipv6_round_trip() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for (i, frag) in [0x2000u16, 0x00B9, 0x2000, 0x00B9].into_iter().enumerate() {
            let mut p = udp(100 + i as u16 / 2, 60);
            p[6..8].copy_from_slice(&frag.to_be_bytes());
            p[10..12].fill(0);
            let sum = taroc_wire::checksum::checksum(&p[..20]);
            p[10..12].copy_from_slice(&sum.to_be_bytes());
            round(&mut c, &mut d, &p);
        }
        let mut v6 = vec![0x60, 0, 0, 0, 0, 8, protocol::ICMPV6, 64];
        v6.extend_from_slice(&[0x20; 32]);
        v6.extend_from_slice(&[128, 0, 1, 2, 3, 4, 5, 6]);
        for _ in 0..START_IRS {
            assert_eq!(round(&mut c, &mut d, &v6).0, IR_N);
        }
        assert_eq!(round(&mut c, &mut d, &v6), (CO_N | kind::C, 1 + 2 + 8));
        // Refreshes after 16, then 32, then every 64 packets.
        let mut refreshes = Vec::new();
        for i in 1..=200 {
            if round(&mut c, &mut d, &v6).0 == IR_N {
                refreshes.push(i);
            }
        }
        assert_eq!(refreshes, [15, 47, 111, 175]);
        // A context request starts the refreshes over.
        assert!(c.request(1));
        for _ in 0..START_IRS {
            assert_eq!(round(&mut c, &mut d, &v6).0, IR_N);
        }
        let next = (1..=REFRESH).find(|_| round(&mut c, &mut d, &v6).0 == IR_N);
        assert_eq!(next, Some(REFRESH));
    }
}
