//! `taroc-plus` for packets that are not compressible TCP: UDP (its header too, and an RTP
//! header at the start of its payload), ICMP and ICMPv6 echoes, IP fragments and any other
//! IP-only packet (IPv4 without options, IPv6 without extension headers). Their contexts live
//! in a CID space of their own, set up by IR-N frames (the packet whole) and used by CO-S
//! frames (the kind byte alone) and CO-N frames (fields as needed).
//!
//! Nothing end to end covers all of a rebuilt header (an IP fragment has no transport
//! checksum; ICMP's does not cover the IP header; UDP's leaves out the IP-ID, TTL and TOS), so
//! every CO-S and CO-N frame carries a CRC-16 of the original header as the compressor saw it
//! (its transport checksum field taken as 0), and the decompressor delivers only a rebuilt
//! header with that CRC. The payload is carried verbatim, so the header is all that can be
//! wrong. A transport checksum is computed by the decompressor when the compressor found it
//! valid, else carried. See `docs/taroc-plus-format.md`, section 8.
//!
//! ```text
//! IR-N (kind byte 0x0A): the packet whole, its first length field replaced by
//!   | flags (UDP, echo, RTP, IP-ID step) | CID |, in RTP mode its UDP Length by the stride.
//! CO-S (kind bytes 0x10-0x15, 0x17-0x1C): CID 0-2 and two LSBs of the sequence in the kind
//!   byte; | CRC-16 (2) | payload |: every field follows from the reference.
//! CO-N (kind byte 0x1D): | flags | CID | sequence | IP-ID | fragment field | RTP octet |
//!   timestamp | CRC-16 (2) | transport checksum | payload |, each field as its flags say.
//! ```

use taroc_wire::protocol;

use crate::codec::FrameKind;

mod compressor;
mod decompressor;
mod fields;
mod head;
mod replica;

pub use compressor::{OtherCompressor, ANCHOR, MOVE_AFTER, MOVE_IDLE};
pub use decompressor::OtherDecompressor;
pub use fields::{Dynamic, State};
pub use head::{Form, Head};
pub use replica::{is_replica, Replica};

/// The kind byte of an IR-N frame.
pub const IR_N: u8 = FrameKind::PROFILE_FIRST + 2;

/// The first kind byte of the non-TCP compressed frames (CO-S and CO-N).
pub const CO_N: u8 = FrameKind::PROFILE_NON_TCP;

/// Kind bytes from [`CO_N`] up to this one are non-TCP compressed frames (CO-S, CO-N), but
/// [`FrameKind::PROFILE_NON_TCP_FULL`] (the packed IR).
pub const CO_N_LAST: u8 = CO_N | 0x0F;

/// The kind byte of a CO-N frame (its flags octet follows).
pub const CO_N_LONG: u8 = CO_N + 0x0D;

/// The kind byte of a CO-I frame of CID 0 (`| S S | I I I I I I |` and the CRC-16 follow).
pub const CO_I: u8 = CO_N + 0x0E;

/// The kind byte of a CO-I frame whose CID octet follows.
pub const CO_I_CID: u8 = CO_N + 0x0F;

/// The number of CO-S kind bytes: CIDs 0 to [`SHORT_CIDS`] `- 1`, four sequence LSB values
/// each.
pub const SHORT_KINDS: u8 = 12;

/// CIDs that CO-S frames name.
pub const SHORT_CIDS: u8 = SHORT_KINDS / 4;

/// The kind byte of a tunnel frame: an IP-in-IP packet whose outer header goes as CO-N and
/// whose inner packet goes compressed (TCP in its flow's context, anything else this module
/// compresses as IR-N, CO-S or CO-N), `| CO-N kind byte | CO-N header part | inner kind byte
/// | inner frame |`.
pub const TUNNEL: u8 = 0x20;

/// The kind byte of the CO-S frame of CID `cid` (below [`SHORT_CIDS`]) and sequence LSBs `lsb`
/// (below 4): the CO-S bytes skip the packed IR's.
pub fn short_kind(cid: u8, lsb: u8) -> u8 {
    let i = cid * 4 + lsb;
    let k = CO_N + i;
    if k >= FrameKind::PROFILE_NON_TCP_FULL {
        k + 1
    } else {
        k
    }
}

/// The CID and sequence LSBs of a CO-S kind byte, if `k` is one.
pub fn short_of(k: u8) -> Option<(u8, u8)> {
    let i = match k {
        _ if k < CO_N || k == FrameKind::PROFILE_NON_TCP_FULL => return None,
        _ if k < FrameKind::PROFILE_NON_TCP_FULL => k - CO_N,
        _ => k - CO_N - 1,
    };
    (i < SHORT_KINDS).then_some((i / 4, i % 4))
}

/// Whether this module compresses `packet` (IR-N, CO-S or CO-N, section 8).
pub fn compressible(packet: &[u8]) -> bool {
    shape(packet).is_some()
}

/// The inner packet of an IP-in-IP (IPv4 or IPv6 in either) packet this module compresses.
pub fn tunnelled(packet: &[u8]) -> Option<&[u8]> {
    let s = shape(packet)?;
    let fragment = s.v4 && u16::from_be_bytes([packet[6], packet[7]]) & 0x3FFF != 0;
    let next = if s.v4 { packet[9] } else { packet[6] };
    (!fragment && (next == protocol::IPV4 || next == protocol::IPV6)).then(|| &packet[s.ip..])
}

/// Bits of a CO-N frame's flags octet.
pub mod flag {
    /// A CID octet follows (else CID 0).
    pub const C: u8 = 0x80;
    /// Shift of the sequence code (0: unchanged, 1: 8 LSBs, 2: 16 bits).
    pub const S_SHIFT: u8 = 5;
    /// Shift of the IP-ID code (0: from the sequence, 1: 8 LSBs, 2: 16 bits).
    pub const I_SHIFT: u8 = 3;
    /// The IPv4 flags and fragment offset follow.
    pub const F: u8 = 0x04;
    /// The transport checksum follows (else the decompressor computes it, or it is 0).
    pub const K: u8 = 0x02;
    /// The IP-ID steps with the sequence number (kept as the context's step).
    pub const D: u8 = 0x01;
}

/// The CID a CO-S or CO-N frame of kind byte `k` names (before anything else of it is
/// parsed), if it has one.
pub fn cid_of(k: u8, frame: &[u8]) -> Option<u8> {
    if let Some((cid, _)) = short_of(k) {
        return Some(cid);
    }
    match (k, frame) {
        (CO_I, _) => return Some(0),
        (CO_I_CID, [cid, ..]) => return Some(*cid),
        (CO_I_CID, _) => return None,
        _ => {}
    }
    match frame {
        [f, cid, ..] if f & flag::C != 0 => Some(*cid),
        [f, ..] if f & flag::C == 0 => Some(0),
        _ => None,
    }
}

/// IR-N frames a context starts with, and answers a context request with.
pub const START_IRS: u8 = 3;

/// A context sends its first refresh IR-N this many packets after its start IR-Ns, so that a
/// decompressor that lost them recovers without context requests (links without feedback).
/// Each refresh doubles the period, up to [`MAX_REFRESH`] (compression slow-start in reverse,
/// as RFC 2507 section 3.3 spaces full headers); a context request starts it over.
pub const REFRESH: u16 = 16;

/// The longest refresh period of an established context where the decompressor asks for
/// contexts it lacks (context requests, section 7).
pub const MAX_REFRESH: u16 = 256;

/// The longest refresh period of an established context where the decompressor sends no
/// context requests: the refresh is its only repair.
pub const MAX_REFRESH_ALONE: u16 = 64;

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

/// IR-N flag: the context compresses the UDP header as well.
pub const UDP_MODE: u8 = 0x01;

/// IR-N flag: the context compresses an ICMP or ICMPv6 echo header as well.
pub const ECHO_MODE: u8 = 0x02;

/// IR-N flag (with [`UDP_MODE`]): the context compresses an RTP header as well; the IR-N's UDP
/// Length carries the context's timestamp stride.
pub const RTP_MODE: u8 = 0x04;

/// IR-N flag: the IPv4 Identification steps with the sequence number ([`flag::D`]).
pub const STEP: u8 = 0x08;

/// The ICMP echo request and echo reply types.
const ECHO_TYPES: [u8; 2] = [8, 0];

/// The ICMPv6 echo request and echo reply types.
const ECHO6_TYPES: [u8; 2] = [128, 129];

/// Contexts the compressor keeps for these packets (least recently used replaced).
pub const MAX_CONTEXTS: usize = 16;

/// The references a compressor keeps per context: the decompressor's state after each of the
/// context's last frames (IR-Ns included). A CO-S or CO-N frame decodes correctly against each
/// of them, so a decompressor that missed up to this many frames minus one still decodes it;
/// after longer losses a CO-S frame decodes by trial ([`SHORT_TRIALS`]). (Three: a CO-S
/// frame's two sequence LSBs reach three packets on.)
pub const WINDOW: usize = 3;

/// Sequence advances a decompressor tries for a CO-S frame: `n`, `n + 4`, ... (each checked
/// by the CRC), so that it decodes after up to `4 * SHORT_TRIALS - 1` lost packets of the flow.
pub const SHORT_TRIALS: u16 = 16;

/// An 8-LSB field decodes into `[reference - LSB_BELOW, reference + 255 - LSB_BELOW]`.
pub const LSB_BELOW: u16 = 64;

/// A 16-LSB scaled timestamp decodes into `[reference - TS_BELOW, reference + 65535 -
/// TS_BELOW]`.
pub const TS_BELOW: u32 = 16384;

/// The CRC-16 table of polynomial 0x1021, one entry per octet value.
const CRC_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                crc << 1 ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// Continues a CRC-16/CCITT-FALSE computation over `data`.
pub fn crc16_update(crc: u16, data: &[u8]) -> u16 {
    data.iter().fold(crc, |crc, &byte| {
        crc << 8 ^ CRC_TABLE[usize::from((crc >> 8) as u8 ^ byte)]
    })
}

/// The CRC-16 of CO-S and CO-N frames: CRC-16/CCITT-FALSE (polynomial 0x1021, initial value
/// 0xFFFF, no reflection, no final XOR).
pub fn crc16(data: &[u8]) -> u16 {
    crc16_update(0xFFFF, data)
}

/// The CRC-16 a CO-S, CO-I, CO-N or replicated IR-N frame carries for `header` of shape `s`:
/// over the header as it is, its transport checksum field included. A decompressor that
/// computes that field computes it over the payload it received, so a damaged payload fails the
/// CRC as the end-to-end checksum would have failed.
pub fn header_crc(header: &[u8], s: Shape) -> u16 {
    crc16(&header[..s.header])
}

/// A packet this module compresses: where its transport header starts (`ip`), its header
/// length (the IP header, plus the UDP header in UDP mode, the RTP header in RTP mode, the
/// ICMP echo header in echo mode), its mode, and whether IPv4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    ip: usize,
    header: usize,
    udp: bool,
    rtp: bool,
    echo: bool,
    v4: bool,
}

impl Shape {
    /// The IR-N flags of this shape's mode.
    fn flags(self) -> u8 {
        if self.rtp {
            UDP_MODE | RTP_MODE
        } else if self.udp {
            UDP_MODE
        } else if self.echo {
            ECHO_MODE
        } else {
            0
        }
    }

    /// Whether its packets carry a sequence number: the RTP sequence number, the echo
    /// sequence number, or else an IPv4 Identification.
    fn has_seq(self) -> bool {
        self.rtp || self.echo || self.v4
    }

    /// Whether its IPv4 Identification is a field of its own, apart from the sequence number.
    fn own_ip_id(self) -> bool {
        self.v4 && (self.rtp || self.echo)
    }

    /// Where its transport checksum field is (UDP, echo), if it has one.
    fn checksum_at(self) -> Option<usize> {
        if self.udp {
            Some(self.ip + 6)
        } else if self.echo {
            Some(self.ip + 2)
        } else {
            None
        }
    }
}

/// The transport checksum of `packet` (of shape `s`, its checksum field taken as 0) as its
/// sender computes it: UDP's over the pseudo-header (0 sent as 0xFFFF), ICMPv6's over the
/// pseudo-header, ICMP's over the message alone. `None` for a shape without one.
pub fn transport_checksum(packet: &[u8], s: Shape) -> Option<u16> {
    let payload = &packet[s.header..];
    let sum = taroc_wire::checksum::Sum::new().add_bytes(payload);
    checksum_of(&packet[..s.header], s, sum.fold(), payload.len())
}

/// The transport checksum of a packet of shape `s` whose header is `header` (its checksum field
/// taken as 0) and whose payload of `payload_len` octets has the one's-complement sum `payload`
/// (its octets as big-endian words; a header's length is even, so the words line up).
pub fn checksum_of(header: &[u8], s: Shape, payload: u16, payload_len: usize) -> Option<u16> {
    let at = s.checksum_at()?;
    let length = (s.header - s.ip + payload_len) as u16;
    let mut sum = taroc_wire::checksum::Sum::new();
    if s.udp || !s.v4 {
        let (addresses, proto) = if s.v4 {
            (&header[12..20], protocol::UDP)
        } else {
            (
                &header[8..40],
                if s.udp {
                    protocol::UDP
                } else {
                    protocol::ICMPV6
                },
            )
        };
        sum = sum
            .add_bytes(addresses)
            .add_u16(u16::from(proto))
            .add_u16(length);
    }
    let sum = sum
        .add_bytes(&header[s.ip..at])
        .add_bytes(&header[at + 2..s.header])
        .add_u16(payload)
        .checksum();
    Some(if s.udp && sum == 0 { 0xFFFF } else { sum })
}

/// The shape of `packet`, if this module compresses it: IPv4 with a 20-byte header and a
/// valid header checksum, or a fixed IPv6 header, its length fields exact, the whole parsing
/// as IP ([`taroc_wire::ip::IpInfo::parse`]).
fn shape(packet: &[u8]) -> Option<Shape> {
    // Only what parses as IP (extension header chains included) goes in these frames, so a
    // decompressor delivers nothing else whatever frame arrives.
    taroc_wire::ip::IpInfo::parse(packet).ok()?;
    let (v4, ip, proto) = match packet.first()? >> 4 {
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
        && packet.len() >= ip + 8
        && usize::from(u16::from_be_bytes([packet[ip + 4], packet[ip + 5]])) == packet.len() - ip;
    let rtp = udp && looks_like_rtp(packet, ip);
    let echo_types = if v4 { ECHO_TYPES } else { ECHO6_TYPES };
    let mut s = Shape {
        ip,
        header: ip,
        udp,
        rtp,
        echo: false,
        v4,
    };
    // An unfragmented echo whose checksum field is the one the decompressor computes.
    s.echo = proto == if v4 { protocol::ICMP } else { protocol::ICMPV6 }
        && !fragment
        && packet.len() >= ip + 8
        && echo_types.contains(&packet[ip])
        && packet[ip + 1] == 0
        && {
            let echo = Shape {
                echo: true,
                header: ip + 8,
                ..s
            };
            transport_checksum(packet, echo)
                == Some(u16::from_be_bytes([packet[ip + 2], packet[ip + 3]]))
        };
    s.header = ip
        + if rtp {
            20
        } else if udp || s.echo {
            8
        } else {
            0
        };
    Some(s)
}

/// Whether the UDP datagram of `packet` (its UDP header at `u`) starts like an RTP header
/// (RFC 3550 section 5.1) this module compresses: both ports even (RTP's; RTCP's are odd),
/// version 2, no CSRC and no extension, a payload type outside RTCP's 72-76 (marker clear), and
/// at least the 12-octet header.
fn looks_like_rtp(packet: &[u8], u: usize) -> bool {
    let r = u + 8;
    packet.len() >= r + 12
        && packet[u + 1] & 1 == 0
        && packet[u + 3] & 1 == 0
        && packet[r] & 0xDF == 0x80
        && !(72..=76).contains(&(packet[r + 1] & 0x7F))
}

/// The longest header a [`Shape`] has: IPv6, UDP and RTP.
const MAX_HEADER: usize = 60;

/// The static part of a header (its template), written into `buf` without allocating: the
/// per-packet fields zeroed ([`zero_per_packet`]).
fn template_in<'a>(packet: &[u8], s: Shape, buf: &'a mut [u8; MAX_HEADER]) -> &'a [u8] {
    let t = &mut buf[..s.header];
    t.copy_from_slice(&packet[..s.header]);
    zero_per_packet(t, s);
    t
}

/// Zeroes the per-packet fields of the header `t` of shape `s`: the lengths, the IPv4
/// Identification, header checksum and fragment field, the UDP length, the echo sequence
/// number and checksum, the RTP marker, sequence number and timestamp; a nonzero UDP checksum
/// becomes 0xFFFF (a context whose UDP checksums are 0 is another context).
fn zero_per_packet(t: &mut [u8], s: Shape) {
    if s.v4 {
        t[2..8].fill(0);
        t[10..12].fill(0);
    } else {
        t[4..6].fill(0);
    }
    if s.udp {
        let u = s.ip;
        t[u + 4..u + 6].fill(0);
        let zero = t[u + 6..u + 8] == [0, 0];
        t[u + 6..u + 8].fill(if zero { 0 } else { 0xFF });
    }
    if s.rtp {
        let r = s.ip + 8;
        t[r + 1] &= 0x7F;
        t[r + 2..r + 8].fill(0);
    }
    if s.echo {
        let i = s.ip;
        t[i + 2..i + 4].fill(0);
        t[i + 6..i + 8].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::DropReason;

    fn v4_checksum(p: &mut [u8]) {
        p[10..12].fill(0);
        let sum = taroc_wire::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
    }

    /// A UDP datagram with a valid checksum (or 0), to port 53 (or RTP's 40000 with `rtp`).
    fn udp_with(id: u16, payload: &[u8], zero_sum: bool) -> Vec<u8> {
        let total = 28 + payload.len();
        let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, protocol::UDP, 0, 0];
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        p.extend_from_slice(&[0x9c, 0x41, 0, 53]);
        p.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        p.extend_from_slice(&[0, 0]);
        p.extend_from_slice(payload);
        v4_checksum(&mut p);
        if !zero_sum {
            let s = shape(&p).unwrap();
            let sum = transport_checksum(&p, s).unwrap();
            p[26..28].copy_from_slice(&sum.to_be_bytes());
        }
        p
    }

    fn udp(id: u16, payload: usize) -> Vec<u8> {
        udp_with(
            id,
            &(0..payload).map(|i| i as u8).collect::<Vec<_>>(),
            false,
        )
    }

    /// An RTP packet (PCMU) of sequence number `seq`, timestamp `ts`, IP-ID `id`.
    fn rtp(id: u16, seq: u16, ts: u32, marker: bool) -> Vec<u8> {
        let mut payload = vec![0x80, u8::from(marker) << 7];
        payload.extend_from_slice(&seq.to_be_bytes());
        payload.extend_from_slice(&ts.to_be_bytes());
        payload.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        payload.extend((0..160).map(|i| (i * 7) as u8));
        let mut p = udp_with(id, &payload, true);
        p[20..24].copy_from_slice(&[0x9c, 0x40, 0x9c, 0x40]);
        let s = shape(&p).unwrap();
        assert!(s.rtp);
        let sum = transport_checksum(&p, s).unwrap();
        p[26..28].copy_from_slice(&sum.to_be_bytes());
        p
    }

    fn decompress(d: &mut OtherDecompressor, k: u8, frame: &[u8]) -> Result<Vec<u8>, DropReason> {
        let mut out = Vec::new();
        if k == IR_N {
            d.ir_n(frame, &mut out).map(|_| ())?;
        } else {
            d.co_n(k, frame, &mut out)?;
        }
        Ok(out)
    }

    fn compress(c: &mut OtherCompressor, p: &[u8]) -> (u8, Vec<u8>) {
        let mut frame = Vec::new();
        let FrameKind::Profile(k) = c.compress(p, &mut frame, true).unwrap() else {
            panic!("not a profile kind");
        };
        (k, frame)
    }

    fn round(c: &mut OtherCompressor, d: &mut OtherDecompressor, p: &[u8]) -> (u8, usize) {
        let (k, frame) = compress(c, p);
        assert_eq!(decompress(d, k, &frame).unwrap(), p);
        (k, frame.len())
    }

    fn echo(id: u16, sequence: u16, checksum_ok: bool) -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 48, 0, 0, 0x40, 0, 64, protocol::ICMP, 0, 0];
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 8, 0, 0, 0, 0x12, 0x34]);
        p.extend_from_slice(&sequence.to_be_bytes());
        p.extend(0..20u8);
        let s = Shape {
            ip: 20,
            header: 28,
            udp: false,
            rtp: false,
            echo: true,
            v4: true,
        };
        let sum = transport_checksum(&p, s).unwrap() ^ u16::from(!checksum_ok);
        p[22..24].copy_from_slice(&sum.to_be_bytes());
        v4_checksum(&mut p);
        p
    }

    #[test]
    fn short_kinds_skip_the_packed_ir() {
        let kinds: Vec<u8> = (0..SHORT_CIDS)
            .flat_map(|cid| (0..4).map(move |lsb| short_kind(cid, lsb)))
            .collect();
        assert!(!kinds.contains(&FrameKind::PROFILE_NON_TCP_FULL));
        assert!(!kinds.contains(&CO_N_LONG));
        assert!(kinds.iter().all(|&k| (CO_N..=CO_N_LAST).contains(&k)));
        for (i, &k) in kinds.iter().enumerate() {
            assert_eq!(short_of(k), Some((i as u8 / 4, i as u8 % 4)));
        }
        assert_eq!(short_of(CO_N_LONG), None);
        assert_eq!(short_of(FrameKind::PROFILE_NON_TCP_FULL), None);
    }

    #[test]
    fn icmp_echo_headers_go_in_the_kind_byte() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for i in 0..u16::from(START_IRS) {
            assert_eq!(round(&mut c, &mut d, &echo(50 + i, i, true)).0, IR_N);
        }
        // The sequence number and IP-ID step together: the kind byte and the CRC-16.
        for i in 3..10 {
            let (k, len) = round(&mut c, &mut d, &echo(50 + i, i, true));
            assert_eq!((k, len), (short_kind(0, i as u8 & 3), 2 + 20));
        }
        // An echo whose checksum field is not the computed one keeps its ICMP header: another
        // context (IP-only), whose packets still round-trip.
        for i in 0..=u16::from(START_IRS) {
            round(&mut c, &mut d, &echo(61 + i, 3 + i, false));
        }
        // Its IP-ID (its sequence number) jumps: 8 LSBs in a CO-I frame with its CID octet.
        let (k, len) = round(&mut c, &mut d, &echo(70, 9, false));
        assert_eq!((k, len), (CO_I_CID, 1 + 1 + 2 + 28));
    }

    #[test]
    fn crc_is_ccitt_false() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
        assert_eq!(crc16_update(crc16(b"1234"), b"56789"), 0x29B1);
    }

    #[test]
    fn udp_round_trips_in_three_bytes() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for id in (8 - u16::from(START_IRS))..8 {
            assert_eq!(round(&mut c, &mut d, &udp(id, 30)).0, IR_N);
        }
        // The IP-ID is the sequence: its LSBs in the kind byte, the checksum computed.
        assert_eq!(
            round(&mut c, &mut d, &udp(8, 30)),
            (short_kind(0, 0), 2 + 30)
        );
        // A jump goes CO-N with 16 bits.
        assert_eq!(
            round(&mut c, &mut d, &udp(9000, 5)),
            (CO_N_LONG, 1 + 2 + 2 + 5)
        );
        // A checksum that is not the computed one travels.
        let mut bad = udp(9001, 5);
        bad[27] ^= 1;
        assert_eq!(round(&mut c, &mut d, &bad), (CO_N_LONG, 1 + 2 + 2 + 2 + 5));
        // A zero checksum: another context.
        let zero = udp_with(9002, &[1, 2, 3], true);
        assert_eq!(round(&mut c, &mut d, &zero).0, IR_N);
    }

    #[test]
    fn lost_packets_decode_by_trial_and_a_second_frame_confirms() {
        let (mut c, mut d) = (OtherCompressor::new(true), OtherDecompressor::default());
        for id in 0..10 {
            round(&mut c, &mut d, &udp(id, 30));
        }
        // 9 packets lost (beyond the window and the first trial): the third trial decodes it,
        // which holds it as the reference; the next frame, decoded at once, is delivered.
        for id in 10..19 {
            compress(&mut c, &udp(id, 30));
        }
        let (k, frame) = compress(&mut c, &udp(19, 30));
        assert_eq!(short_of(k), Some((0, 3)));
        assert_eq!(
            decompress(&mut d, k, &frame),
            Err(DropReason::ChecksumMismatch)
        );
        assert_eq!(round(&mut c, &mut d, &udp(20, 30)).0, short_kind(0, 0));
        // More than the trials reach: refused, not delivered, and the next one too (held).
        for id in 21..120 {
            compress(&mut c, &udp(id, 30));
        }
        for id in 120..122 {
            let (k, frame) = compress(&mut c, &udp(id, 30));
            assert!(short_of(k).is_some());
            assert_eq!(
                decompress(&mut d, k, &frame),
                Err(DropReason::ChecksumMismatch)
            );
        }
    }

    #[test]
    fn without_requests_an_anchor_comes_every_sixteen_frames() {
        let (mut c, mut d) = (OtherCompressor::new(false), OtherDecompressor::default());
        let kinds: Vec<u8> = (0..60)
            .map(|id| round(&mut c, &mut d, &udp(id, 30)).0)
            .collect();
        let at = |kind| (0..60).filter(|&i| kinds[i] == kind).collect::<Vec<_>>();
        // IR-Ns: the start's, then refreshes after 16 and 32 packets; an anchor 16 frames
        // after the last IR-N.
        assert_eq!(at(IR_N), [0, 1, 2, 18, 50]);
        assert_eq!(at(CO_N_LONG), [34]);
    }

    #[test]
    fn rtp_voice_goes_in_the_kind_byte() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        let (mut seq, mut ts, mut id) = (1000u16, 5000u32, 77u16);
        let mut sizes = Vec::new();
        for i in 0..200 {
            if i == 100 {
                ts += 160 * 40; // a pause; the next packet has the marker
            }
            let p = rtp(id, seq, ts, i == 0 || i == 100);
            let (k, len) = round(&mut c, &mut d, &p);
            sizes.push((k, len - 160));
            seq = seq.wrapping_add(1);
            ts += 160;
            id += 1;
        }
        // Three IR-Ns, then CO-N until the stride is known everywhere, then CO-S.
        assert!(sizes[..3].iter().all(|&(k, _)| k == IR_N));
        assert!(sizes[10..16]
            .iter()
            .all(|&(k, len)| short_of(k).is_some() && len == 2));
        // The talkspurt's first packet and the window after it go CO-N (marker, timestamp).
        assert_eq!(sizes[100].0, CO_N_LONG);
        assert!(sizes[100 + WINDOW..100 + WINDOW + 8]
            .iter()
            .all(|&(k, len)| short_of(k).is_some() && len == 2));
    }

    /// `udp(id, 30)` from source port `port`.
    fn udp_from(port: u16, id: u16) -> Vec<u8> {
        let mut p = udp(id, 30);
        p[20..22].copy_from_slice(&port.to_be_bytes());
        let sum = transport_checksum(&p, shape(&p).unwrap()).unwrap();
        p[26..28].copy_from_slice(&sum.to_be_bytes());
        p
    }

    #[test]
    fn a_new_flow_of_the_same_hosts_starts_from_a_base() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for id in 0..5 {
            round(&mut c, &mut d, &udp_from(5000, id));
        }
        // Another source port: its start IR-Ns name CID 0 and the one word that differs.
        let mut lost = OtherDecompressor::default();
        for id in 5..5 + u16::from(START_IRS) {
            let p = udp_from(5002, id);
            let (k, frame) = compress(&mut c, &p);
            assert_eq!(k, IR_N);
            assert!(is_replica(&frame));
            // form, flags, CID, base, one change, IP-ID, CRC-16, payload
            assert_eq!(frame.len(), 5 + 3 + 2 + 2 + 30);
            assert_eq!(decompress(&mut d, k, &frame).unwrap(), p);
            // A decompressor without the base refuses it.
            assert_eq!(decompress(&mut lost, k, &frame), Err(DropReason::NoContext));
        }
        assert_eq!(
            round(&mut c, &mut d, &udp_from(5002, 8)).0,
            short_kind(1, 0)
        );
        // A base of another flow under the same CID (another TTL): the CRC refuses it.
        let mut other = OtherDecompressor::default();
        let mut ttl = udp_from(5000, 1);
        ttl[8] = 63;
        v4_checksum(&mut ttl);
        let (k, frame) = compress(&mut OtherCompressor::default(), &ttl);
        decompress(&mut other, k, &frame).unwrap();
        let mut c2 = OtherCompressor::default();
        for id in 0..3 {
            compress(&mut c2, &udp_from(5000, id));
        }
        let (k, frame) = compress(&mut c2, &udp_from(5002, 3));
        assert!(is_replica(&frame));
        assert_eq!(
            decompress(&mut other, k, &frame),
            Err(DropReason::ChecksumMismatch)
        );
    }

    #[test]
    fn a_wrong_context_is_refused_not_delivered() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for id in (8 - u16::from(START_IRS))..8 {
            round(&mut c, &mut d, &udp(id, 30));
        }
        let mut other = udp(8, 30);
        other[8] = 63; // another TTL: another context, CID 1, whose IR-N is lost
        v4_checksum(&mut other);
        let mut frame = Vec::new();
        for _ in 0..START_IRS {
            c.compress(&other, &mut frame, true);
        }
        // Its CO-S names CID 1, which the decompressor lacks.
        let (k, frame) = compress(&mut c, &other);
        assert_eq!(short_of(k).map(|(cid, _)| cid), Some(1));
        assert_eq!(decompress(&mut d, k, &frame), Err(DropReason::NoContext));
        // Forced onto CID 0: the CRC refuses it.
        let forged = short_kind(0, short_of(k).unwrap().1);
        assert_eq!(
            decompress(&mut d, forged, &frame),
            Err(DropReason::ChecksumMismatch)
        );
        assert_eq!(
            decompress(&mut d, forged, &frame[..1]),
            Err(DropReason::Malformed)
        );
    }

    #[test]
    fn fragments_and_ipv6_round_trip() {
        let (mut c, mut d) = (OtherCompressor::new(true), OtherDecompressor::default());
        for (i, frag) in [0x2000u16, 0x00B9, 0x2000, 0x00B9, 0x2000, 0x00B9]
            .into_iter()
            .enumerate()
        {
            let mut p = udp(100 + i as u16 / 2, 60);
            p[6..8].copy_from_slice(&frag.to_be_bytes());
            v4_checksum(&mut p);
            round(&mut c, &mut d, &p);
        }
        let mut v6 = vec![0x60, 0, 0, 0, 0, 8, protocol::ICMPV6, 64];
        v6.extend_from_slice(&[0x20; 32]);
        v6.extend_from_slice(&[1, 0, 1, 2, 3, 4, 5, 6]);
        for _ in 0..START_IRS {
            assert_eq!(round(&mut c, &mut d, &v6).0, IR_N);
        }
        assert_eq!(round(&mut c, &mut d, &v6), (short_kind(1, 0), 2 + 8));
        // Refreshes after 16, then 32, 64, 128, then every 256 packets (with context
        // requests; else every 64).
        let mut refreshes = Vec::new();
        for i in 1..=800 {
            if round(&mut c, &mut d, &v6).0 == IR_N {
                refreshes.push(i);
            }
        }
        assert_eq!(refreshes, [15, 47, 111, 239, 495, 751]);
        // A context request starts the refreshes over.
        assert!(c.request(1));
        for _ in 0..START_IRS {
            assert_eq!(round(&mut c, &mut d, &v6).0, IR_N);
        }
        let next = (1..=REFRESH).find(|_| round(&mut c, &mut d, &v6).0 == IR_N);
        assert_eq!(next, Some(REFRESH));
    }

    #[test]
    fn icmpv6_echoes_have_their_checksum_computed() {
        let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
        for i in 0..10u16 {
            let mut p = vec![0x60, 0, 0, 0, 0, 16, protocol::ICMPV6, 64];
            p.extend_from_slice(&[0x20; 32]);
            p.extend_from_slice(&[128, 0, 0, 0, 0x12, 0x34]);
            p.extend_from_slice(&i.to_be_bytes());
            p.extend_from_slice(&[9; 8]);
            let s = Shape {
                ip: 40,
                header: 48,
                udp: false,
                rtp: false,
                echo: true,
                v4: false,
            };
            let sum = transport_checksum(&p, s).unwrap();
            p[42..44].copy_from_slice(&sum.to_be_bytes());
            assert_eq!(shape(&p), Some(s));
            let (k, len) = round(&mut c, &mut d, &p);
            if i >= 3 {
                assert_eq!((k, len), (short_kind(0, i as u8 & 3), 2 + 8));
            }
        }
    }
}
