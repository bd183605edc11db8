//! Link layers: where the IP packet sits inside a captured frame, per LINKTYPE.

use pcap_file::DataLink;

/// How the IP packet is found inside a link-layer frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkType {
    /// No link header: the frame starts with the IPv4 or IPv6 header (LINKTYPE 101, 12, 14, 228,
    /// 229).
    Raw,
    /// Ethernet II with any number of 802.1Q / 802.1ad VLAN tags (LINKTYPE 1).
    Ethernet,
    /// Linux "cooked" capture v1 (LINKTYPE 113): 16-byte header, protocol in its last 2 bytes.
    LinuxSll,
    /// Linux "cooked" capture v2 (LINKTYPE 276): 20-byte header, protocol in its first 2 bytes.
    LinuxSll2,
    /// BSD/macOS loopback (LINKTYPE_NULL 0, LINKTYPE_LOOP 108): a 4-byte address family, in the
    /// capturing host's byte order for NULL and in network order for LOOP (either order is
    /// accepted for both): `AF_INET` 2, `AF_INET6` 24 (NetBSD, OpenBSD), 28 (FreeBSD) or 30
    /// (macOS).
    Loopback,
    /// PPP (LINKTYPE 9, RFC 1661): the PPP protocol field (2 bytes, or 1 when compressed per RFC
    /// 1661 section 6.5), optionally after the RFC 1662 address and control bytes `ff 03`.
    Ppp,
    /// PPP in HDLC-like framing (LINKTYPE_PPP_HDLC 50, RFC 1662: `ff 03` then the protocol), or
    /// Cisco HDLC (address `0f` or `8f`, control `00`, then an EtherType).
    PppHdlc,
}

/// EtherTypes used here.
mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86DD;
    pub const VLAN: u16 = 0x8100;
    pub const QINQ: u16 = 0x88A8;
    pub const QINQ_OLD: u16 = 0x9100;
}

/// PPP protocol numbers (RFC 1332, RFC 5072) of IP datagrams.
mod ppp_protocol {
    pub const IPV4: u16 = 0x0021;
    pub const IPV6: u16 = 0x0057;
}

/// The address families BSD-derived systems put in front of a loopback packet.
const LOOPBACK_FAMILIES: [u32; 4] = [2, 24, 28, 30];

impl LinkType {
    /// The link type of a LINKTYPE number, or `None` if we cannot take IP packets out of it.
    pub fn from_number(number: u32) -> Option<LinkType> {
        match number {
            101 | 12 | 14 | 228 | 229 => Some(LinkType::Raw),
            1 => Some(LinkType::Ethernet),
            113 => Some(LinkType::LinuxSll),
            276 => Some(LinkType::LinuxSll2),
            0 | 108 => Some(LinkType::Loopback),
            9 => Some(LinkType::Ppp),
            50 => Some(LinkType::PppHdlc),
            _ => None,
        }
    }

    /// The IP packet inside `frame`, or `None` if the frame does not carry IPv4 or IPv6.
    ///
    /// The packet is trimmed to the length its IP header announces when that is shorter than
    /// what is left of the frame (link padding); a frame shorter than the announced length is
    /// returned whole (a snaplen-truncated record).
    pub fn ip_packet(self, frame: &[u8]) -> Option<&[u8]> {
        let packet = match self {
            LinkType::Raw => frame,
            LinkType::Ethernet => {
                let mut offset = 12;
                let mut ethertype = read_u16(frame, offset)?;
                while matches!(
                    ethertype,
                    ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_OLD
                ) {
                    offset += 4;
                    ethertype = read_u16(frame, offset)?;
                }
                if !is_ip_ethertype(ethertype) {
                    return None;
                }
                frame.get(offset + 2..)?
            }
            LinkType::LinuxSll => {
                if !is_ip_ethertype(read_u16(frame, 14)?) {
                    return None;
                }
                frame.get(16..)?
            }
            LinkType::LinuxSll2 => {
                if !is_ip_ethertype(read_u16(frame, 0)?) {
                    return None;
                }
                frame.get(20..)?
            }
            LinkType::Loopback => {
                let family: [u8; 4] = frame.get(..4)?.try_into().ok()?;
                let known = |f: u32| LOOPBACK_FAMILIES.contains(&f);
                if !known(u32::from_le_bytes(family)) && !known(u32::from_be_bytes(family)) {
                    return None;
                }
                &frame[4..]
            }
            LinkType::Ppp => ppp_payload(frame.strip_prefix(&[0xFF, 0x03]).unwrap_or(frame))?,
            LinkType::PppHdlc => match frame.get(..2)? {
                [0xFF, 0x03] => ppp_payload(&frame[2..])?,
                [0x0F | 0x8F, 0x00] => {
                    if !is_ip_ethertype(read_u16(frame, 2)?) {
                        return None;
                    }
                    &frame[4..]
                }
                _ => return None,
            },
        };
        let announced = match packet.first()? >> 4 {
            // A total length below the minimum header (0 in some TSO captures) is no length:
            // keep the frame.
            4 => match usize::from(read_u16(packet, 2)?) {
                total if total < 20 => packet.len(),
                total => total,
            },
            6 => match read_u16(packet, 4)? {
                0 => packet.len(), // a jumbogram: the length is in an option; keep the frame
                payload => 40 + usize::from(payload),
            },
            _ => return None,
        };
        Some(&packet[..announced.min(packet.len())])
    }
}

/// What follows the PPP protocol field of `frame` if it announces IPv4 or IPv6. An odd first
/// byte is a protocol field compressed to one byte (RFC 1661 section 6.5).
fn ppp_payload(frame: &[u8]) -> Option<&[u8]> {
    let first = *frame.first()?;
    let (protocol, rest) = if first & 1 == 1 {
        (u16::from(first), &frame[1..])
    } else {
        (read_u16(frame, 0)?, &frame[2..])
    };
    matches!(protocol, ppp_protocol::IPV4 | ppp_protocol::IPV6).then_some(rest)
}

fn is_ip_ethertype(ethertype: u16) -> bool {
    ethertype == ethertype::IPV4 || ethertype == ethertype::IPV6
}

fn read_u16(bytes: &[u8], offset: usize) -> Option<u16> {
    let pair = bytes.get(offset..offset + 2)?;
    Some(u16::from_be_bytes([pair[0], pair[1]]))
}

/// The name libpcap gives a LINKTYPE number, for error messages (`LINKTYPE_204` if unknown).
pub fn link_type_name(number: u32) -> String {
    match DataLink::from(number) {
        DataLink::Unknown(n) => format!("LINKTYPE_{n}"),
        known => format!("{known:?}"),
    }
}

/// The link types we read, for the error naming an unsupported one.
pub const SUPPORTED: &str = "raw IP (101, 12, 14), IPv4 (228), IPv6 (229), Ethernet (1), \
                             Linux SLL (113), SLL2 (276), BSD loopback NULL (0) and LOOP (108), \
                             PPP (9), PPP_HDLC (50)";

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal IPv4/TCP packet (20 + 20 bytes, 4 bytes of payload).
    pub(crate) fn ipv4_packet() -> Vec<u8> {
        let mut p = vec![0u8; 44];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&44u16.to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        p[32] = 0x50;
        p
    }

    pub(crate) fn ipv6_packet() -> Vec<u8> {
        let mut p = vec![0u8; 40 + 20];
        p[0] = 0x60;
        p[4..6].copy_from_slice(&20u16.to_be_bytes());
        p[6] = 6;
        p[7] = 64;
        p[23] = 1;
        p[39] = 2;
        p[40 + 12] = 0x50;
        p
    }

    fn with_header(header: &[u8], packet: &[u8]) -> Vec<u8> {
        let mut frame = header.to_vec();
        frame.extend_from_slice(packet);
        frame
    }

    #[test]
    fn raw_link_types_take_the_frame_as_it_is() {
        for number in [101, 12, 14, 228, 229] {
            let link = LinkType::from_number(number).unwrap();
            assert_eq!(link.ip_packet(&ipv4_packet()), Some(&ipv4_packet()[..]));
            assert_eq!(link.ip_packet(&ipv6_packet()), Some(&ipv6_packet()[..]));
            assert_eq!(link.ip_packet(&[0x20, 0, 0, 0]), None);
            assert_eq!(link.ip_packet(&[]), None);
        }
    }

    #[test]
    fn ethernet_with_and_without_vlan_tags_and_padding() {
        let ip = ipv4_packet();
        let mut frame = vec![0xAA; 12];
        frame.extend_from_slice(&[0x08, 0x00]);
        frame.extend_from_slice(&ip);
        frame.extend_from_slice(&[0; 6]); // padding to 60 bytes
        let link = LinkType::from_number(1).unwrap();
        assert_eq!(link.ip_packet(&frame), Some(&ip[..]));

        let ip6 = ipv6_packet();
        let mut tagged = vec![0xAA; 12];
        tagged.extend_from_slice(&[0x88, 0xA8, 0x00, 0x05, 0x81, 0x00, 0x00, 0x07, 0x86, 0xDD]);
        tagged.extend_from_slice(&ip6);
        assert_eq!(link.ip_packet(&tagged), Some(&ip6[..]));

        let mut arp = vec![0xFF; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0; 28]);
        assert_eq!(link.ip_packet(&arp), None);
        assert_eq!(link.ip_packet(&frame[..13]), None);
        assert_eq!(link.ip_packet(&tagged[..17]), None);
    }

    #[test]
    fn linux_cooked_v1_and_v2() {
        let ip = ipv4_packet();
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x08, 0x00]);
        sll.extend_from_slice(&ip);
        let v1 = LinkType::from_number(113).unwrap();
        assert_eq!(v1.ip_packet(&sll), Some(&ip[..]));
        sll[14..16].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(v1.ip_packet(&sll), None);

        let ip6 = ipv6_packet();
        let mut sll2 = vec![0x86, 0xDD];
        sll2.extend_from_slice(&[0u8; 18]);
        sll2.extend_from_slice(&ip6);
        let v2 = LinkType::from_number(276).unwrap();
        assert_eq!(v2.ip_packet(&sll2), Some(&ip6[..]));
        assert_eq!(v2.ip_packet(&sll2[..19]), None);
    }

    #[test]
    fn truncated_ip_packets_are_kept_whole() {
        let ip = ipv4_packet();
        let link = LinkType::from_number(101).unwrap();
        assert_eq!(link.ip_packet(&ip[..30]), Some(&ip[..30]));
        let mut no_length = ip.clone();
        no_length[2..4].copy_from_slice(&[0, 0]);
        assert_eq!(link.ip_packet(&no_length), Some(&no_length[..]));
    }

    #[test]
    fn unsupported_link_types_are_named() {
        assert_eq!(LinkType::from_number(204), None);
        assert_eq!(link_type_name(204), "PPP_WITH_DIR");
        assert_eq!(link_type_name(60000), "LINKTYPE_60000");
    }

    #[test]
    fn bsd_loopback_in_either_byte_order() {
        let (ip, ip6) = (ipv4_packet(), ipv6_packet());
        for number in [0, 108] {
            let link = LinkType::from_number(number).unwrap();
            assert_eq!(
                link.ip_packet(&with_header(&[2, 0, 0, 0], &ip)),
                Some(&ip[..])
            );
            assert_eq!(
                link.ip_packet(&with_header(&[0, 0, 0, 2], &ip)),
                Some(&ip[..])
            );
            for family in [24u32, 28, 30] {
                let le = with_header(&family.to_le_bytes(), &ip6);
                let be = with_header(&family.to_be_bytes(), &ip6);
                assert_eq!(link.ip_packet(&le), Some(&ip6[..]));
                assert_eq!(link.ip_packet(&be), Some(&ip6[..]));
            }
            // AF_APPLETALK (16) and a frame too short for its family field.
            assert_eq!(link.ip_packet(&with_header(&[16, 0, 0, 0], &ip)), None);
            assert_eq!(link.ip_packet(&[2, 0, 0]), None);
        }
    }

    #[test]
    fn ppp_with_and_without_address_control_and_compressed_protocol() {
        let (ip, ip6) = (ipv4_packet(), ipv6_packet());
        let ppp = LinkType::from_number(9).unwrap();
        assert_eq!(
            ppp.ip_packet(&with_header(&[0x00, 0x21], &ip)),
            Some(&ip[..])
        );
        assert_eq!(ppp.ip_packet(&with_header(&[0x21], &ip)), Some(&ip[..]));
        let framed = with_header(&[0xFF, 0x03, 0x00, 0x57], &ip6);
        assert_eq!(ppp.ip_packet(&framed), Some(&ip6[..]));
        // LCP (0xc021) and VJ compressed TCP (0x002d) are not IP packets.
        assert_eq!(ppp.ip_packet(&with_header(&[0xC0, 0x21], &ip)), None);
        assert_eq!(ppp.ip_packet(&with_header(&[0x00, 0x2D], &ip)), None);
        assert_eq!(ppp.ip_packet(&[0x00]), None);

        let hdlc = LinkType::from_number(50).unwrap();
        assert_eq!(hdlc.ip_packet(&framed), Some(&ip6[..]));
        let cisco = with_header(&[0x0F, 0x00, 0x08, 0x00], &ip);
        assert_eq!(hdlc.ip_packet(&cisco), Some(&ip[..]));
        assert_eq!(hdlc.ip_packet(&with_header(&[0x00, 0x21], &ip)), None);
        assert_eq!(hdlc.ip_packet(&[0x8F, 0x00, 0x80, 0x35]), None);
    }
}
