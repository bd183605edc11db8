//! IP-in-IP tunnelling between the two TCP hosts, as Mobile IP's home agent does to reach a
//! mobile host (Degermark et al. section 4.4): every packet a host's agent sends is wrapped in an
//! outer IP header of its own version (IPv6-in-IPv6, RFC 2473; IPv4-in-IPv4, RFC 2003) from the
//! host to the packet's destination, and unwrapped by the destination host before its agent sees
//! it. The links and their codecs carry the outer header for real: with IPv6, the 40 bytes of
//! the outer header make the paper's 100 bytes of TCP/IPv6 headers.

use std::net::IpAddr;

use taroc_wire::checksum;
use taroc_wire::ipv4::Ipv4Packet;
use taroc_wire::ipv6::Ipv6Packet;

use crate::tcp::segment;

/// The Next Header / Protocol value of an IPv6 payload (RFC 2473).
const IPV6_IN_IP: u8 = 41;
/// The Protocol value of an IPv4 payload (RFC 2003).
const IPV4_IN_IP: u8 = 4;
/// The outer header's hop limit / TTL.
const HOP_LIMIT: u8 = 64;

/// Bytes of the outer header a tunnel adds to a packet of this IP version.
pub fn header_len(ipv6: bool) -> usize {
    if ipv6 {
        40
    } else {
        20
    }
}

/// Wraps `packet` in an outer header of its own IP version from `src` to the packet's
/// destination, into `out` (cleared first). Returns false, leaving `out` empty, if the packet
/// has no destination of `src`'s version or would exceed an IP length field.
pub fn encapsulate(src: IpAddr, packet: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let Some(dst) = segment::destination(packet) else {
        return false;
    };
    match (src, dst) {
        (IpAddr::V6(src), IpAddr::V6(dst)) => {
            let Ok(payload_len) = u16::try_from(packet.len()) else {
                return false;
            };
            out.extend_from_slice(&[0x60, 0, 0, 0]);
            out.extend_from_slice(&payload_len.to_be_bytes());
            out.extend_from_slice(&[IPV6_IN_IP, HOP_LIMIT]);
            out.extend_from_slice(&src.octets());
            out.extend_from_slice(&dst.octets());
        }
        (IpAddr::V4(src), IpAddr::V4(dst)) => {
            let Ok(total_len) = u16::try_from(packet.len() + 20) else {
                return false;
            };
            // Identification 0 with DF set: an atomic datagram (RFC 6864).
            out.extend_from_slice(&[0x45, 0]);
            out.extend_from_slice(&total_len.to_be_bytes());
            out.extend_from_slice(&[0, 0, 0x40, 0, HOP_LIMIT, IPV4_IN_IP, 0, 0]);
            out.extend_from_slice(&src.octets());
            out.extend_from_slice(&dst.octets());
            let sum = checksum::checksum(out);
            out[10..12].copy_from_slice(&sum.to_be_bytes());
        }
        _ => return false,
    }
    out.extend_from_slice(packet);
    true
}

/// The inner packet of a tunnelled `packet` addressed to `me` (its outer header removed), or
/// `None` if `packet` is not an exact IP-in-IP packet to `me` with a valid outer header.
pub fn decapsulate(packet: &[u8], me: IpAddr) -> Option<&[u8]> {
    let (dst, inner) = outer(packet)?;
    (dst == me).then_some(inner)
}

/// The outer destination and the inner packet of an exact IP-in-IP packet.
fn outer(packet: &[u8]) -> Option<(IpAddr, &[u8])> {
    match packet.first()? >> 4 {
        4 => {
            let ip = Ipv4Packet::new_checked(packet).ok()?;
            let ok = ip.is_exact()
                && !ip.is_fragment()
                && ip.header_checksum_ok()
                && ip.protocol() == IPV4_IN_IP;
            ok.then(|| (ip.dst().into(), &packet[ip.header_len()..]))
        }
        6 => {
            let ip = Ipv6Packet::new_checked(packet).ok()?;
            let ok = ip.is_exact() && ip.next_header() == IPV6_IN_IP;
            ok.then(|| (ip.dst().into(), &packet[40..]))
        }
        _ => None,
    }
}

/// Bytes of IP and TCP headers of a packet, tunnelled or not (its length minus its TCP
/// payload), if it is TCP.
pub fn header_bytes(packet: &[u8]) -> Option<usize> {
    match outer(packet) {
        Some((_, inner)) => Some(packet.len() - inner.len() + header_bytes(inner)?),
        None => segment::header_bytes(packet),
    }
}
