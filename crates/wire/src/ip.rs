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
