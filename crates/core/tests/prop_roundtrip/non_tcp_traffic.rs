//! Non-TCP traffic for [`super::non_tcp`]: flows of UDP (checksums valid, zero or wrong),
//! RTP-shaped UDP, ICMP and ICMPv6 echo, IPv4 and IPv6 fragments and other IP-only packets,
//! built as real packets, and the header extent a compressor of section 8 checks.
//!
//! Self-contained (std, `taroc_wire`'s checksums and [`crate::rng::Rng`]), so that a seed
//! generator for the fuzz targets can include it too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use taroc_wire::checksum::{checksum, Sum};

use crate::rng::Rng;

/// The UDP checksum a flow sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UdpChecksum {
    /// The right one.
    Valid,
    /// None (0, IPv4 only; an IPv6 flow sends the right one instead).
    Zero,
    /// A wrong one (the right one with bits flipped).
    Wrong,
}

/// What a flow sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NonTcpKind {
    /// UDP datagrams between two ports.
    Udp(UdpChecksum),
    /// RTP-shaped UDP between even ports: version 2, the payload type, sequence +1 and
    /// timestamp +160 a packet (sometimes a jump), the marker on the first.
    Rtp { payload_type: u8 },
    /// ICMP (ICMPv6) echo requests, or (`reply`) replies.
    Echo { reply: bool },
    /// UDP datagrams sent as fragments (IPv4: 2 or 3 fragments; IPv6: with a fragment header).
    Fragments,
    /// Another protocol: only the IP header compresses.
    IpOnly { protocol: u8 },
}

/// How an IPv4 flow's Identification goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IpId {
    /// +1 a packet.
    Sequential,
    /// Small random steps (a counter other flows share).
    Shared,
    /// Always 0.
    Zero,
    /// Random.
    Random,
}

/// What stays fixed for one flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NonTcpFlow {
    pub(crate) v6: bool,
    pub(crate) kind: NonTcpKind,
    pub(crate) ip_id: IpId,
    /// Hosts (last address octets) of the two ends; flows of the same hosts share addresses.
    pub(crate) hosts: [u8; 2],
    /// Ports (RTP: made even), or the echo identifier (first).
    pub(crate) ports: [u16; 2],
    pub(crate) tos: u8,
    pub(crate) ttl: u8,
    /// Payload sizes: this plus a random part below `size_spread + 1`.
    pub(crate) size: u16,
    pub(crate) size_spread: u16,
}

impl NonTcpFlow {
    /// The same flow with its addresses swapped (ports and everything else the same).
    pub(crate) fn swapped(&self) -> NonTcpFlow {
        NonTcpFlow {
            hosts: [self.hosts[1], self.hosts[0]],
            ..*self
        }
    }

    fn address(&self, end: usize) -> IpAddr {
        if self.v6 {
            IpAddr::V6(Ipv6Addr::new(
                0x2001,
                0xdb8,
                0,
                0,
                0,
                0,
                0,
                self.hosts[end].into(),
            ))
        } else {
            IpAddr::V4(Ipv4Addr::new(192, 0, 2, self.hosts[end]))
        }
    }
}

/// The per-packet state of a flow.
#[derive(Debug, Clone)]
pub(crate) struct FlowState {
    pub(crate) flow: NonTcpFlow,
    sent: u32,
    ip_id: u16,
    seq: u16,
    timestamp: u32,
}

impl FlowState {
    pub(crate) fn new(flow: NonTcpFlow, rng: &mut Rng) -> FlowState {
        FlowState {
            flow,
            sent: 0,
            ip_id: rng.next() as u16,
            seq: rng.next() as u16,
            timestamp: rng.next() as u32,
        }
    }

    fn next_ip_id(&mut self, rng: &mut Rng) -> u16 {
        self.ip_id = match self.flow.ip_id {
            IpId::Sequential => self.ip_id.wrapping_add(1),
            IpId::Shared => self.ip_id.wrapping_add(1 + rng.below(5) as u16),
            IpId::Zero => 0,
            IpId::Random => rng.next() as u16,
        };
        self.ip_id
    }

    /// The next packets of the flow (fragments: two or three; else one).
    pub(crate) fn next_packets(&mut self, rng: &mut Rng) -> Vec<Vec<u8>> {
        let f = self.flow;
        let first = self.sent == 0;
        self.sent += 1;
        let size = usize::from(f.size) + rng.below(u64::from(f.size_spread) + 1) as usize;
        let payload: Vec<u8> = (0..size).map(|_| rng.next() as u8).collect();
        // IPv6: the flow label, fixed for the flow.
        let ip_id = if f.v6 {
            f.ports[0] ^ f.ports[1].rotate_left(3)
        } else {
            self.next_ip_id(rng)
        };
        let (src, dst) = (f.address(0), f.address(1));
        let header = IpHeader {
            src,
            dst,
            tos: f.tos,
            ttl: f.ttl,
            ip_id,
            fragment: 0x4000,
        };
        match f.kind {
            NonTcpKind::Udp(sum) => {
                let segment = udp_segment(src, dst, f.ports, &payload, sum);
                vec![header.packet(17, &segment)]
            }
            NonTcpKind::Rtp { payload_type } => {
                // Mostly +1 and +160; now and then a jump (a talk spurt, a sender's skip).
                let jump = rng.chance(30);
                self.seq = self
                    .seq
                    .wrapping_add(if jump { 1 + rng.below(40) as u16 } else { 1 });
                self.timestamp = self.timestamp.wrapping_add(if jump && rng.chance(500) {
                    rng.next() as u32
                } else {
                    160
                });
                let mut rtp = vec![0x80, payload_type & 0x7F | if first { 0x80 } else { 0 }];
                rtp.extend_from_slice(&self.seq.to_be_bytes());
                rtp.extend_from_slice(&self.timestamp.to_be_bytes());
                rtp.extend_from_slice(
                    &0x5EED_0000u32.wrapping_add(f.ports[0].into()).to_be_bytes(),
                );
                rtp.extend_from_slice(&payload);
                let ports = [f.ports[0] & !1, f.ports[1] & !1];
                let segment = udp_segment(src, dst, ports, &rtp, UdpChecksum::Valid);
                vec![header.packet(17, &segment)]
            }
            NonTcpKind::Echo { reply } => {
                self.seq = self.seq.wrapping_add(1);
                let kind = match (f.v6, reply) {
                    (false, false) => 8,
                    (false, true) => 0,
                    (true, false) => 128,
                    (true, true) => 129,
                };
                let mut m = vec![kind, 0, 0, 0];
                m.extend_from_slice(&f.ports[0].to_be_bytes());
                m.extend_from_slice(&self.seq.to_be_bytes());
                m.extend_from_slice(&payload);
                let sum = if f.v6 {
                    Sum::new()
                        .add_pseudo_header(src, dst, 58, m.len() as u32)
                        .add_bytes(&m)
                        .checksum()
                } else {
                    checksum(&m)
                };
                m[2..4].copy_from_slice(&sum.to_be_bytes());
                vec![header.packet(if f.v6 { 58 } else { 1 }, &m)]
            }
            NonTcpKind::Fragments => {
                let segment = udp_segment(src, dst, f.ports, &payload, UdpChecksum::Valid);
                let pieces = if segment.len() > 48 && rng.chance(500) {
                    3
                } else {
                    2
                };
                // Fragment boundaries on 8-octet units.
                let unit = (segment.len() / pieces / 8).max(1) * 8;
                let mut out = Vec::new();
                let mut at = 0;
                let frag_id = rng.next() as u32;
                while at < segment.len() {
                    let end = if out.len() + 1 == pieces {
                        segment.len()
                    } else {
                        (at + unit).min(segment.len())
                    };
                    let more = end < segment.len();
                    let piece = &segment[at..end];
                    out.push(if f.v6 {
                        let mut ext = vec![17, 0];
                        let field = (at as u16) | u16::from(more);
                        ext.extend_from_slice(&field.to_be_bytes());
                        ext.extend_from_slice(&frag_id.to_be_bytes());
                        ext.extend_from_slice(piece);
                        header.packet(44, &ext)
                    } else {
                        let field = (at / 8) as u16 | if more { 0x2000 } else { 0 };
                        IpHeader {
                            fragment: field,
                            ..header
                        }
                        .packet(17, piece)
                    });
                    at = end;
                }
                out
            }
            NonTcpKind::IpOnly { protocol } => vec![header.packet(protocol, &payload)],
        }
    }
}

fn udp_segment(
    src: IpAddr,
    dst: IpAddr,
    ports: [u16; 2],
    payload: &[u8],
    sum: UdpChecksum,
) -> Vec<u8> {
    let mut s = Vec::with_capacity(8 + payload.len());
    s.extend_from_slice(&ports[0].to_be_bytes());
    s.extend_from_slice(&ports[1].to_be_bytes());
    s.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    s.extend_from_slice(&[0, 0]);
    s.extend_from_slice(payload);
    let valid = match Sum::new()
        .add_pseudo_header(src, dst, 17, s.len() as u32)
        .add_bytes(&s)
        .checksum()
    {
        0 => 0xFFFF,
        c => c,
    };
    let value = match sum {
        UdpChecksum::Valid => valid,
        UdpChecksum::Zero if src.is_ipv4() => 0,
        UdpChecksum::Zero => valid,
        UdpChecksum::Wrong => match valid ^ 0x0101 {
            0 => 0x1234,
            w => w,
        },
    };
    s[6..8].copy_from_slice(&value.to_be_bytes());
    s
}

/// The IP header fields of one packet.
#[derive(Debug, Clone, Copy)]
struct IpHeader {
    src: IpAddr,
    dst: IpAddr,
    tos: u8,
    ttl: u8,
    ip_id: u16,
    /// IPv4 flags and fragment offset.
    fragment: u16,
}

impl IpHeader {
    fn packet(&self, protocol: u8, body: &[u8]) -> Vec<u8> {
        let mut p = Vec::with_capacity(40 + body.len());
        match (self.src, self.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                p.extend_from_slice(&[0x45, self.tos]);
                p.extend_from_slice(&((20 + body.len()) as u16).to_be_bytes());
                p.extend_from_slice(&self.ip_id.to_be_bytes());
                p.extend_from_slice(&self.fragment.to_be_bytes());
                p.extend_from_slice(&[self.ttl, protocol, 0, 0]);
                p.extend_from_slice(&s.octets());
                p.extend_from_slice(&d.octets());
                let c = checksum(&p);
                p[10..12].copy_from_slice(&c.to_be_bytes());
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let first = 0x6000_0000u32 | u32::from(self.tos) << 20 | u32::from(self.ip_id);
                p.extend_from_slice(&first.to_be_bytes());
                p.extend_from_slice(&(body.len() as u16).to_be_bytes());
                p.extend_from_slice(&[protocol, self.ttl]);
                p.extend_from_slice(&s.octets());
                p.extend_from_slice(&d.octets());
            }
            _ => unreachable!("one address family per packet"),
        }
        p.extend_from_slice(body);
        p
    }
}

/// The header a compressor of section 8 rebuilds and checks (IP, then UDP or ICMP, then RTP,
/// as the packet's mode is), as (its length, the offset of the transport checksum field).
/// Everything after it travels verbatim.
pub(crate) fn checked_header(p: &[u8]) -> (usize, Option<usize>) {
    let (ip_len, protocol, unfragmented) = match p.first().map(|b| b >> 4) {
        Some(4) if p.len() >= 20 => {
            let fragment = u16::from_be_bytes([p[6], p[7]]) & 0x3FFF;
            (usize::from(p[0] & 0x0F) * 4, p[9], fragment == 0)
        }
        Some(6) if p.len() >= 40 => (40, p[6], true),
        _ => return (p.len(), None),
    };
    let body = p.get(ip_len..).unwrap_or(&[]);
    match protocol {
        17 if unfragmented
            && body.len() >= 8
            && usize::from(u16::from_be_bytes([body[4], body[5]])) == body.len() =>
        {
            let ports = [
                u16::from_be_bytes([body[0], body[1]]),
                u16::from_be_bytes([body[2], body[3]]),
            ];
            let rtp = &body[8..];
            let rtp_shaped = ports.iter().all(|p| p % 2 == 0)
                && rtp.len() >= 12
                && matches!(rtp[0], 0x80 | 0xA0)
                && !(72..=76).contains(&(rtp[1] & 0x7F));
            let len = ip_len + 8 + if rtp_shaped { 12 } else { 0 };
            (len, Some(ip_len + 6))
        }
        1 | 58 if unfragmented && body.len() >= 8 && body[1] == 0 => {
            let echo = if protocol == 1 {
                matches!(body[0], 0 | 8) && checksum(body) == 0
            } else {
                let (src, dst) = (&p[8..24], &p[24..40]);
                let mut sum = Sum::new();
                for half in [src, dst] {
                    let octets: [u8; 16] = half.try_into().expect("16 octets");
                    sum = sum.add_bytes(&octets);
                }
                matches!(body[0], 128 | 129)
                    && sum
                        .add_bytes(&(body.len() as u32).to_be_bytes())
                        .add_bytes(&[0, 0, 0, 58])
                        .add_bytes(body)
                        .checksum()
                        == 0
            };
            if echo {
                (ip_len + 8, Some(ip_len + 2))
            } else {
                (ip_len, None)
            }
        }
        _ => (ip_len, None),
    }
}
