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

/// The innermost packet of `packet`: itself if it is not IP-in-IP, else the innermost of its
/// inner packet.
pub fn innermost(packet: &[u8]) -> &[u8] {
    match outer(packet) {
        Some((_, inner)) => innermost(inner),
        None => packet,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::segment as seg;
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// An IP packet of `src`'s version from `src` to `dst` with a 20-byte TCP header (only
    /// the headers matter here).
    fn inner(src: IpAddr, dst: IpAddr) -> Vec<u8> {
        let mut p = Vec::new();
        match (src, dst) {
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                p.extend_from_slice(&[0x60, 0, 0, 0, 0, 20, 6, 64]);
                p.extend_from_slice(&s.octets());
                p.extend_from_slice(&d.octets());
            }
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                p.extend_from_slice(&[0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0]);
                p.extend_from_slice(&s.octets());
                p.extend_from_slice(&d.octets());
                let sum = checksum::checksum(&p);
                p[10..12].copy_from_slice(&sum.to_be_bytes());
            }
            _ => unreachable!(),
        }
        p.extend_from_slice(&[
            0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 1, 0, 0, 0, 0, 0,
        ]);
        p
    }

    #[test]
    fn wraps_and_unwraps_both_versions() {
        let v6 = |i| IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, i));
        let v4 = |i| IpAddr::V4(Ipv4Addr::new(10, 0, 0, i as u8));
        for (a, b, extra) in [(v6(1), v6(3), 40), (v4(1), v4(3), 20)] {
            let packet = inner(a, b);
            let mut out = Vec::new();
            assert!(encapsulate(a, &packet, &mut out));
            assert_eq!(out.len(), packet.len() + extra);
            assert_eq!(header_len(a.is_ipv6()), extra);
            assert_eq!(seg::destination(&out), Some(b));
            assert_eq!(decapsulate(&out, b), Some(&packet[..]));
            assert_eq!(decapsulate(&out, a), None, "not to me");
            assert_eq!(decapsulate(&packet, b), None, "not tunnelled");
            assert_eq!(header_bytes(&out), Some(out.len()));
            assert_eq!(innermost(&out), &packet[..]);
            assert_eq!(innermost(&packet), &packet[..]);
            // A damaged outer length is not unwrapped.
            let mut bad = out.clone();
            bad[5] ^= 1;
            assert_eq!(decapsulate(&bad, b), None);
        }
        let mut out = Vec::new();
        assert!(!encapsulate(v4(1), &inner(v6(1), v6(3)), &mut out));
        assert!(out.is_empty());
        assert!(!encapsulate(v6(1), &[0x99], &mut out));
    }
}
