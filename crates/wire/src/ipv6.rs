//! IPv6 header view (RFC 8200) and its extension-header chain.
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |Version| Traffic Class |           Flow Label                  |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |         Payload Length        |  Next Header  |   Hop Limit   |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                 Source Address (128 bits)                     |
//! |              Destination Address (128 bits)                   |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use core::net::Ipv6Addr;

use crate::{be16, protocol, WireError};

/// Length of the fixed IPv6 header.
pub const HEADER_LEN: usize = 40;

/// Byte offset of the Payload Length field.
pub const PAYLOAD_LEN_OFFSET: usize = 4;

/// At most this many extension headers are walked; a longer chain is treated as malformed, so
/// the work per packet is bounded whatever the input.
pub const MAX_EXTENSION_HEADERS: usize = 8;

/// A validated view of an IPv6 packet: the buffer holds at least the fixed header.
#[derive(Debug, Clone, Copy)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

/// Where the extension-header chain ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpperLayer {
    /// The upper-layer protocol number (TCP, UDP, ICMPv6, …, or one not walked through).
    pub protocol: u8,
    /// Offset of the upper-layer header from the start of the IPv6 header.
    pub offset: usize,
    /// Whether a Fragment header was met.
    pub fragment: bool,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    /// Checks the version and that the fixed header is present.
    pub fn new_checked(buffer: T) -> Result<Ipv6Packet<T>, WireError> {
        let b = buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if b[0] >> 4 != 6 {
            return Err(WireError::Malformed);
        }
        Ok(Ipv6Packet { buffer })
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// The Traffic Class octet.
    pub fn traffic_class(&self) -> u8 {
        let b = self.b();
        (b[0] << 4) | (b[1] >> 4)
    }

    /// The 20-bit Flow Label.
    pub fn flow_label(&self) -> u32 {
        let b = self.b();
        (u32::from(b[1] & 0x0F) << 16) | u32::from(be16(b, 2))
    }

    /// The Payload Length field.
    pub fn payload_len(&self) -> u16 {
        be16(self.b(), PAYLOAD_LEN_OFFSET)
    }

    /// The Next Header field of the fixed header.
    pub fn next_header(&self) -> u8 {
        self.b()[6]
    }

    /// The Hop Limit.
    pub fn hop_limit(&self) -> u8 {
        self.b()[7]
    }

    /// Source address.
    pub fn src(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.b()[8..24]);
        Ipv6Addr::from(a)
    }

    /// Destination address.
    pub fn dst(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.b()[24..40]);
        Ipv6Addr::from(a)
    }

    /// Whether the buffer holds exactly the fixed header plus Payload Length bytes.
    pub fn is_exact(&self) -> bool {
        self.b().len() == HEADER_LEN + usize::from(self.payload_len())
    }

    /// Walks the extension headers (Hop-by-Hop, Routing, Destination Options, Fragment, AH) to the
    /// upper-layer header. Fails if the chain runs past the buffer or is longer than
    /// [`MAX_EXTENSION_HEADERS`].
    pub fn upper_layer(&self) -> Result<UpperLayer, WireError> {
        let b = self.b();
        let mut next = self.next_header();
        let mut offset = HEADER_LEN;
        let mut fragment = false;
        for _ in 0..=MAX_EXTENSION_HEADERS {
            let len = match next {
                protocol::HOP_BY_HOP | protocol::ROUTING | protocol::DEST_OPTS => {
                    let l = *b.get(offset + 1).ok_or(WireError::Truncated)?;
                    (usize::from(l) + 1) * 8
                }
                protocol::FRAGMENT => {
                    fragment = true;
                    8
                }
                protocol::AH => {
                    let l = *b.get(offset + 1).ok_or(WireError::Truncated)?;
                    (usize::from(l) + 2) * 4
                }
                _ => {
                    return Ok(UpperLayer {
                        protocol: next,
                        offset,
                        fragment,
                    });
                }
            };
            next = *b.get(offset).ok_or(WireError::Truncated)?;
            offset += len;
            if offset > b.len() {
                return Err(WireError::Truncated);
            }
        }
        Err(WireError::Malformed)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    /// Sets the Payload Length field.
    pub fn set_payload_len(&mut self, len: u16) {
        self.buffer.as_mut()[PAYLOAD_LEN_OFFSET..PAYLOAD_LEN_OFFSET + 2]
            .copy_from_slice(&len.to_be_bytes());
    }

    /// Sets the Traffic Class octet.
    pub fn set_traffic_class(&mut self, tc: u8) {
        let b = self.buffer.as_mut();
        b[0] = 0x60 | (tc >> 4);
        b[1] = (tc << 4) | (b[1] & 0x0F);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(next: u8, payload_len: u16) -> [u8; 40] {
        let mut h = [0u8; 40];
        h[0] = 0x6A; // version 6, traffic class 0xA5
        h[1] = 0x5B; // flow label 0xB1234
        h[2] = 0x12;
        h[3] = 0x34;
        h[4..6].copy_from_slice(&payload_len.to_be_bytes());
        h[6] = next;
        h[7] = 64;
        h[8] = 0x20;
        h[23] = 1;
        h[24] = 0x20;
        h[39] = 2;
        h
    }

    #[test]
    fn fields() {
        let h = header(protocol::TCP, 0);
        let v = Ipv6Packet::new_checked(&h[..]).unwrap();
        assert_eq!(v.traffic_class(), 0xA5);
        assert_eq!(v.flow_label(), 0xB1234);
        assert_eq!(v.hop_limit(), 64);
        assert!(v.is_exact());
        assert_eq!(
            v.upper_layer().unwrap(),
            UpperLayer {
                protocol: 6,
                offset: 40,
                fragment: false
            }
        );
        let mut m = h;
        Ipv6Packet::new_checked(&mut m[..])
            .unwrap()
            .set_traffic_class(0x3C);
        assert_eq!(
            Ipv6Packet::new_checked(&m[..]).unwrap().traffic_class(),
            0x3C
        );
        assert_eq!(
            Ipv6Packet::new_checked(&m[..]).unwrap().flow_label(),
            0xB1234
        );
    }

    #[test]
    fn walks_extension_headers() {
        let mut p = [0u8; 40 + 8 + 16 + 8];
        p[..40].copy_from_slice(&header(protocol::HOP_BY_HOP, 32));
        p[40] = protocol::DEST_OPTS; // hop-by-hop, 8 bytes
        p[48] = protocol::FRAGMENT; // destination options, 16 bytes
        p[49] = 1;
        p[64] = protocol::UDP; // fragment header
        let v = Ipv6Packet::new_checked(&p[..]).unwrap();
        assert_eq!(
            v.upper_layer().unwrap(),
            UpperLayer {
                protocol: 17,
                offset: 72,
                fragment: true
            }
        );
        assert_eq!(
            Ipv6Packet::new_checked(&p[..60]).unwrap().upper_layer(),
            Err(WireError::Truncated)
        );
    }

    #[test]
    fn bounds_long_chains() {
        let mut p = [0u8; 40 + 8 * 12];
        p[..40].copy_from_slice(&header(protocol::DEST_OPTS, 96));
        for i in 0..12 {
            p[40 + 8 * i] = protocol::DEST_OPTS;
        }
        assert_eq!(
            Ipv6Packet::new_checked(&p[..]).unwrap().upper_layer(),
            Err(WireError::Malformed)
        );
    }
}
