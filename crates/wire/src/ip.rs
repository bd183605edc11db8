//! Either IP version: where the transport header starts, and the addresses.

use core::net::IpAddr;

use crate::ipv4::Ipv4Packet;
use crate::ipv6::{self, Ipv6Packet};
use crate::WireError;

/// The IP layer of a packet, parsed down to its upper-layer (transport) header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpInfo {
    /// 4 or 6.
    pub version: u8,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Upper-layer protocol (after IPv6 extension headers).
    pub protocol: u8,
    /// Offset of the upper-layer header.
    pub transport_offset: usize,
    /// Whether the packet is a fragment (IPv4 MF/offset, or an IPv6 Fragment header).
    pub fragment: bool,
    /// The packet length the IP header declares.
    pub declared_len: usize,
}

impl IpInfo {
    /// Parses the IP header(s) at the start of `packet`.
    pub fn parse(packet: &[u8]) -> Result<IpInfo, WireError> {
        match packet.first().map(|b| b >> 4) {
            Some(4) => {
                let v4 = Ipv4Packet::new_checked(packet)?;
                Ok(IpInfo {
                    version: 4,
                    src: IpAddr::V4(v4.src()),
                    dst: IpAddr::V4(v4.dst()),
                    protocol: v4.protocol(),
                    transport_offset: v4.header_len(),
                    fragment: v4.is_fragment(),
                    declared_len: usize::from(v4.total_len()),
                })
            }
            Some(6) => {
                let v6 = Ipv6Packet::new_checked(packet)?;
                let upper = v6.upper_layer()?;
                Ok(IpInfo {
                    version: 6,
                    src: IpAddr::V6(v6.src()),
                    dst: IpAddr::V6(v6.dst()),
                    protocol: upper.protocol,
                    transport_offset: upper.offset,
                    fragment: upper.fragment,
                    declared_len: ipv6::HEADER_LEN + usize::from(v6.payload_len()),
                })
            }
            Some(_) => Err(WireError::Malformed),
            None => Err(WireError::Truncated),
        }
    }
}

/// Whether the TCP or UDP checksum of `packet` verifies; `None` when there is nothing to check
/// (another protocol, a fragment, an IPv4 UDP datagram without checksum, unparsable headers).
pub fn transport_checksum_ok(packet: &[u8]) -> Option<bool> {
    let ip = IpInfo::parse(packet).ok()?;
    if ip.fragment || (ip.protocol != crate::protocol::TCP && ip.protocol != crate::protocol::UDP) {
        return None;
    }
    let end = ip.declared_len.min(packet.len());
    let segment = packet.get(ip.transport_offset..end)?;
    if ip.protocol == crate::protocol::UDP && ip.version == 4 && segment.get(6..8) == Some(&[0, 0])
    {
        return None;
    }
    Some(crate::checksum::transport_verifies(
        ip.src,
        ip.dst,
        ip.protocol,
        segment,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::{checksum, Sum};

    /// An IPv4 packet of `protocol` with an 8-octet transport header and 4 octets of payload,
    /// its IPv4 header checksum filled in and, for UDP, its UDP checksum.
    fn v4(protocol: u8) -> [u8; 32] {
        let mut p = [0u8; 32];
        p[..12].copy_from_slice(&[0x45, 0, 0, 32, 0, 1, 0x40, 0, 64, protocol, 0, 0]);
        p[12..20].copy_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        p[20..32].copy_from_slice(&[0x13, 0x88, 0, 53, 0, 12, 0, 0, 1, 2, 3, 4]);
        let ip = checksum(&p[..20]);
        p[10..12].copy_from_slice(&ip.to_be_bytes());
        let sum = Sum::new()
            .add_bytes(&p[12..20])
            .add_u16(u16::from(protocol))
            .add_u16(12)
            .add_bytes(&p[20..])
            .checksum();
        p[26..28].copy_from_slice(&sum.to_be_bytes());
        p
    }

    #[test]
    fn a_transport_checksum_verifies_and_a_changed_octet_fails_it() {
        let udp = v4(crate::protocol::UDP);
        assert_eq!(transport_checksum_ok(&udp), Some(true));
        let mut changed = udp;
        changed[31] ^= 1;
        assert_eq!(transport_checksum_ok(&changed), Some(false));
        // Neither TCP nor UDP, an IPv4 UDP datagram without checksum, or no IP packet at all:
        // nothing to verify.
        assert_eq!(transport_checksum_ok(&v4(1)), None);
        let mut unchecked = udp;
        unchecked[26..28].fill(0);
        assert_eq!(transport_checksum_ok(&unchecked), None);
        assert_eq!(transport_checksum_ok(&udp[..10]), None);
    }
}
