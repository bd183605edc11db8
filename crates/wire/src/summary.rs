//! A one-call summary of a packet's headers, for tools that count header and payload bytes.

use core::net::IpAddr;

use crate::ip::IpInfo;
use crate::tcp::TcpSegment;
use crate::{protocol, udp};

/// What a packet's headers say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Upper-layer protocol (after IPv6 extension headers; of the innermost packet of an
    /// IP-in-IP packet).
    pub protocol: u8,
    /// Whether the packet is an IP fragment.
    pub fragment: bool,
    /// All IP headers (options and extension headers included, and the inner packet's headers
    /// of an unfragmented IP-in-IP packet) plus the TCP header with its options, or the 8-byte
    /// UDP header. For other protocols, and for fragments, only the IP headers (a non-first
    /// fragment carries no transport header).
    pub header_len: usize,
    /// The packet length the IP header declares, minus `header_len`.
    pub payload_len: usize,
}

/// At most this many IP-in-IP headers are looked through: any bytes may arrive, and each level
/// is a call.
pub const MAX_TUNNEL_DEPTH: usize = 4;

/// Summarizes `packet`, or `None` if its IP (or TCP/UDP) header cannot be parsed. An
/// unfragmented IP-in-IP packet is summarized down to its innermost packet (at most
/// [`MAX_TUNNEL_DEPTH`] headers in), whose headers count as header (the addresses stay the outer
/// header's); one whose inner packet does not parse, as an IP packet of another protocol.
pub fn summarize(packet: &[u8]) -> Option<Summary> {
    summarize_nested(packet, MAX_TUNNEL_DEPTH)
}

/// [`summarize`], looking through at most `depth` more IP-in-IP headers.
fn summarize_nested(packet: &[u8], depth: usize) -> Option<Summary> {
    let ip = IpInfo::parse(packet).ok()?;
    let transport = packet.get(ip.transport_offset..)?;
    let tunnel =
        depth > 0 && !ip.fragment && matches!(ip.protocol, protocol::IPV4 | protocol::IPV6);
    if let Some(inner) = tunnel
        .then(|| summarize_nested(transport, depth - 1))
        .flatten()
    {
        let header_len = ip.transport_offset + inner.header_len;
        return Some(Summary {
            src: ip.src,
            dst: ip.dst,
            protocol: inner.protocol,
            fragment: inner.fragment,
            header_len,
            payload_len: ip.declared_len.saturating_sub(header_len),
        });
    }
    let transport_header = match (ip.fragment, ip.protocol) {
        (false, protocol::TCP) => TcpSegment::new_checked(transport).ok()?.header_len(),
        (false, protocol::UDP) if transport.len() >= udp::HEADER_LEN => udp::HEADER_LEN,
        (false, protocol::UDP) => return None,
        _ => 0,
    };
    let header_len = ip.transport_offset + transport_header;
    Some(Summary {
        src: ip.src,
        dst: ip.dst,
        protocol: ip.protocol,
        fragment: ip.fragment,
        header_len,
        payload_len: ip.declared_len.saturating_sub(header_len),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_over_ipv4() {
        let mut p = [0u8; 60];
        p[0] = 0x45;
        p[3] = 60;
        p[9] = protocol::TCP;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        p[32] = 0x80; // 32-byte TCP header
        let s = summarize(&p).unwrap();
        assert_eq!(
            (s.header_len, s.payload_len, s.protocol, s.fragment),
            (52, 8, 6, false)
        );
        assert!(s.src < s.dst);
        assert_eq!(summarize(&p[..30]), None);
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn ip_in_ip_counts_the_inner_headers() {
        let mut inner = [0u8; 60];
        inner[0] = 0x45;
        inner[3] = 60;
        inner[9] = protocol::TCP;
        inner[32] = 0x80; // 32-byte TCP header
        let mut p = vec![0x60, 0, 0, 0, 0, 60, protocol::IPV4, 64];
        p.extend_from_slice(&[0x20; 16]);
        p.extend_from_slice(&[0x21; 16]);
        p.extend_from_slice(&inner);
        let s = summarize(&p).unwrap();
        assert_eq!(
            (s.header_len, s.payload_len, s.protocol),
            (92, 8, protocol::TCP)
        );
        assert!(s.src < s.dst);
        // An inner packet that does not parse: the outer header alone.
        let cut = summarize(&p[..40 + 10]).unwrap();
        assert_eq!((cut.header_len, cut.protocol), (40, protocol::IPV4));
        // 1500 IPv6 headers, each saying IPv6 follows: summarized without descending
        // past the bound (the rest counts as payload).
        let mut deep = Vec::new();
        for _ in 0..1500 {
            deep.extend_from_slice(&[0x60, 0, 0, 0, 0, 0, protocol::IPV6, 64]);
            deep.extend_from_slice(&[0x20; 32]);
        }
        let deep = &mut deep[..];
        let len = deep.len();
        for level in 0..1500 {
            let rest = (len - 40 * (level + 1)) as u16;
            deep[40 * level + 4..40 * level + 6].copy_from_slice(&rest.to_be_bytes());
        }
        let s = summarize(deep).expect("an IPv6 packet");
        assert_eq!(s.header_len, 40 * (MAX_TUNNEL_DEPTH + 1));
    }

    #[test]
    fn fragments_count_only_ip_headers() {
        let mut p = [0u8; 48];
        p[0] = 0x45;
        p[3] = 48;
        p[6] = 0x20; // MF
        p[9] = protocol::UDP;
        let s = summarize(&p).unwrap();
        assert_eq!((s.header_len, s.payload_len, s.fragment), (20, 28, true));
    }
}
