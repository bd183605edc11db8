//! Packet building.

use super::*;

pub(crate) const TCP: u8 = 6;
pub(crate) const UDP: u8 = 17;

/// The IP-level fields of one packet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IpFields {
    pub(crate) src: IpAddr,
    pub(crate) dst: IpAddr,
    /// DSCP (6 bits).
    pub(crate) dscp: u8,
    /// ECN (2 bits).
    pub(crate) ecn: u8,
    /// TTL / hop limit.
    pub(crate) ttl: u8,
    /// IPv4 Identification (ignored for IPv6).
    pub(crate) ip_id: u16,
    /// IPv6 flow label (ignored for IPv4).
    pub(crate) flow_label: u32,
}

/// The TCP header of one segment (options given as bytes, a multiple of 4 long).
#[derive(Debug, Clone)]
pub(crate) struct TcpHeader {
    pub(crate) src_port: u16,
    pub(crate) dst_port: u16,
    pub(crate) seq: u32,
    pub(crate) ack: u32,
    pub(crate) flags: u8,
    pub(crate) window: u16,
    pub(crate) urgent: u16,
    pub(crate) options: Vec<u8>,
}

/// Wraps an upper-layer segment (checksum already filled) in an IPv4 or IPv6 header.
pub(crate) fn ip_packet(ip: &IpFields, protocol: u8, segment: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(40 + segment.len());
    match (ip.src, ip.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = u16::try_from(20 + segment.len()).expect("short packets");
            p.push(0x45);
            p.push(ip.dscp << 2 | ip.ecn);
            p.extend_from_slice(&total.to_be_bytes());
            p.extend_from_slice(&ip.ip_id.to_be_bytes());
            p.extend_from_slice(&0x4000u16.to_be_bytes()); // DF
            p.push(ip.ttl);
            p.push(protocol);
            p.extend_from_slice(&[0, 0]);
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
            let c = checksum(&p[..20]);
            p[10..12].copy_from_slice(&c.to_be_bytes());
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            let tc = ip.dscp << 2 | ip.ecn;
            let first = 0x6000_0000u32 | u32::from(tc) << 20 | (ip.flow_label & 0xF_FFFF);
            p.extend_from_slice(&first.to_be_bytes());
            let len = u16::try_from(segment.len()).expect("short packets");
            p.extend_from_slice(&len.to_be_bytes());
            p.push(protocol);
            p.push(ip.ttl);
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
        }
        _ => unreachable!("one address family per packet"),
    }
    p.extend_from_slice(segment);
    p
}

/// The transport checksum of `segment` (checksum field zero) under the pseudo-header.
pub(crate) fn transport_checksum(ip: &IpFields, protocol: u8, segment: &[u8]) -> u16 {
    Sum::new()
        .add_pseudo_header(ip.src, ip.dst, protocol, segment.len() as u32)
        .add_bytes(segment)
        .checksum()
}

pub(crate) fn tcp_packet(ip: &IpFields, h: &TcpHeader, payload: &[u8]) -> Vec<u8> {
    assert!(h.options.len().is_multiple_of(4) && h.options.len() <= 40);
    let mut s = Vec::with_capacity(20 + h.options.len() + payload.len());
    s.extend_from_slice(&h.src_port.to_be_bytes());
    s.extend_from_slice(&h.dst_port.to_be_bytes());
    s.extend_from_slice(&h.seq.to_be_bytes());
    s.extend_from_slice(&h.ack.to_be_bytes());
    s.push((((20 + h.options.len()) / 4) as u8) << 4);
    s.push(h.flags);
    s.extend_from_slice(&h.window.to_be_bytes());
    s.extend_from_slice(&[0, 0]);
    s.extend_from_slice(&h.urgent.to_be_bytes());
    s.extend_from_slice(&h.options);
    s.extend_from_slice(payload);
    let c = transport_checksum(ip, TCP, &s);
    s[16..18].copy_from_slice(&c.to_be_bytes());
    ip_packet(ip, TCP, &s)
}

pub(crate) fn udp_packet(ip: &IpFields, src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
    let len = u16::try_from(8 + payload.len()).expect("short datagrams");
    let mut s = Vec::with_capacity(usize::from(len));
    s.extend_from_slice(&src_port.to_be_bytes());
    s.extend_from_slice(&dst_port.to_be_bytes());
    s.extend_from_slice(&len.to_be_bytes());
    s.extend_from_slice(&[0, 0]);
    s.extend_from_slice(payload);
    let c = match transport_checksum(ip, UDP, &s) {
        0 => 0xFFFF,
        c => c,
    };
    s[6..8].copy_from_slice(&c.to_be_bytes());
    ip_packet(ip, UDP, &s)
}

/// `NOP NOP Timestamps` then `NOP NOP SACK`, the layout Linux sends.
pub(crate) fn options(ts: Option<(u32, u32)>, sack: &[(u32, u32)]) -> Vec<u8> {
    let mut o = Vec::new();
    if let Some((val, ecr)) = ts {
        o.extend_from_slice(&[1, 1, 8, 10]);
        o.extend_from_slice(&val.to_be_bytes());
        o.extend_from_slice(&ecr.to_be_bytes());
    }
    if !sack.is_empty() {
        o.extend_from_slice(&[1, 1, 5, 2 + 8 * sack.len() as u8]);
        for (l, r) in sack {
            o.extend_from_slice(&l.to_be_bytes());
            o.extend_from_slice(&r.to_be_bytes());
        }
    }
    o
}

/// SYN options: MSS, SACK-permitted, Timestamps, NOP, window scale (Linux's order), or without
/// timestamps MSS, NOP, NOP, SACK-permitted, NOP, window scale.
pub(crate) fn syn_options(mss: u16, sack: bool, ts: Option<(u32, u32)>) -> Vec<u8> {
    let mut o = vec![2, 4];
    o.extend_from_slice(&mss.to_be_bytes());
    match ts {
        Some((val, ecr)) => {
            o.extend_from_slice(if sack { &[4, 2] } else { &[1, 1] });
            o.extend_from_slice(&[8, 10]);
            o.extend_from_slice(&val.to_be_bytes());
            o.extend_from_slice(&ecr.to_be_bytes());
        }
        None if sack => o.extend_from_slice(&[1, 1, 4, 2]),
        None => {}
    }
    o.extend_from_slice(&[1, 3, 3, 7]);
    o
}
