//! The chain's INFERRED fields and what the decompressor may deliver: whether a packet can be
//! compressed and rebuilt exactly (its lengths and checksums verify, and it is an IP packet as
//! its receivers parse it), and the filling-in of lengths and IPv4 header checksums.

use taroc_wire::checksum::{self, Sum};
use taroc_wire::ip::IpInfo;
use taroc_wire::protocol;

use super::Layout;

/// Whether `packet` can be compressed with `layout` and decompressed exactly: every length field
/// matches the packet's length, every IPv4 header checksum verifies (both are inferred), the
/// transport checksum verifies (TCP always, UDP when not zero) since the decompressor checks it,
/// and the packet is [`well_formed`], as the decompressor requires of what it delivers.
pub fn compressible(packet: &[u8], layout: &Layout) -> bool {
    let total = packet.len();
    let lengths_ok = layout.lengths.iter().all(|f| {
        f.value(total)
            .is_some_and(|v| packet[f.at..f.at + 2] == v.to_be_bytes())
    });
    lengths_ok && verifies(packet, layout) && well_formed(packet, layout)
}

/// Whether `packet`, whose chain is `layout`, is an IP packet as its receivers parse it
/// ([`IpInfo`]): its first IP header (and IPv6 extension headers) lead to the upper-layer header
/// within the packet, the length it declares is its length, and a TCP segment, or a UDP datagram
/// with a non-zero checksum, found there past the chain (behind MAX_HEADER, or a transport
/// header the chain could not hold) verifies; one that ends the chain is checked by
/// [`transport_verifies`].
///
/// The chain alone does not tell: it stops before a header it cannot hold, a truncated one
/// included, and leaves the rest to the payload. The compressor compresses only well-formed
/// packets, so the decompressor refuses a full header of any other (it would make a context
/// that no packet of the compressor's made) and every rebuilt packet that is not.
pub fn well_formed(packet: &[u8], layout: &Layout) -> bool {
    let Ok(ip) = IpInfo::parse(packet) else {
        return false;
    };
    if ip.declared_len != packet.len() {
        return false;
    }
    let in_chain = layout
        .tcp
        .or(layout.udp)
        .is_some_and(|t| t.start == ip.transport_offset);
    if ip.fragment || in_chain {
        return true;
    }
    let Some(segment) = packet.get(ip.transport_offset..) else {
        return false;
    };
    let carried = match ip.protocol {
        protocol::TCP => true,
        protocol::UDP => segment.get(6..8).is_some_and(|c| c != [0, 0]),
        _ => false,
    };
    !carried || checksum::transport_verifies(ip.src, ip.dst, ip.protocol, segment)
}

/// Whether the checksums of a rebuilt packet verify: IPv4 headers, TCP, and UDP when not zero.
pub fn verifies(packet: &[u8], layout: &Layout) -> bool {
    let ipv4_ok = layout
        .ipv4
        .iter()
        .all(|&at| Sum::new().add_bytes(&packet[at..at + 20]).verifies());
    ipv4_ok && transport_verifies(packet, layout)
}

/// Whether the TCP checksum, or a non-zero UDP checksum, of a rebuilt packet verifies.
pub fn transport_verifies(packet: &[u8], layout: &Layout) -> bool {
    if let Some(t) = layout.tcp {
        return t.verifies(packet, protocol::TCP);
    }
    if let Some(u) = layout.udp {
        let field = &packet[u.start + 6..u.start + 8];
        return field == [0, 0] || u.verifies(packet, protocol::UDP);
    }
    true
}

/// Writes the INFERRED length fields of a packet of `packet.len()` octets. Fails if a field
/// cannot hold its value.
pub fn fill_lengths(packet: &mut [u8], layout: &Layout) -> bool {
    let total = packet.len();
    fill_lengths_for(packet, layout, total)
}

/// [`fill_lengths`] for a packet of `total` octets of which `packet` holds the chain.
pub fn fill_lengths_for(packet: &mut [u8], layout: &Layout, total: usize) -> bool {
    for f in &layout.lengths {
        let Some(v) = f.value(total) else {
            return false;
        };
        packet[f.at..f.at + 2].copy_from_slice(&v.to_be_bytes());
    }
    true
}

/// Writes the INFERRED IPv4 header checksums.
pub fn fill_ipv4_checksums(packet: &mut [u8], layout: &Layout) {
    for &at in &layout.ipv4 {
        packet[at + 10..at + 12].copy_from_slice(&[0, 0]);
        let sum = Sum::new().add_bytes(&packet[at..at + 20]).checksum();
        packet[at + 10..at + 12].copy_from_slice(&sum.to_be_bytes());
    }
}
