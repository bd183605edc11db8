//! Tunnelled TCP contexts: the outer IPv6 header of an IP-in-IP flow kept in the inner flow's
//! context, so that its CO frames go as plain CO frames (spec section 8.1). The frames that set
//! such a context up (IR, compact IR, IR-R) travel in tunnel frames, whose CO-N outer header the
//! decompressor verifies with its CRC before it keeps the outer header; the context's identity
//! hash covers the outer header, so a CO frame rebuilt under another one fails its checksum.

use alloc::vec::Vec;

use taroc_wire::protocol;

/// Octets of an outer header: an IPv6 header without extension headers.
pub const LEN: usize = 40;

/// Where the IPv6 payload length sits.
const PAYLOAD_LENGTH: core::ops::Range<usize> = 4..6;

/// The outer header of a tunnelled flow, its payload length zeroed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outer([u8; LEN]);

impl Outer {
    /// The outer header of `packet` if it is an IPv6 header whose next header is IPv4 or
    /// IPv6 (IP-in-IP without extension headers); `None` otherwise.
    pub fn of(packet: &[u8]) -> Option<Outer> {
        let header: &[u8; LEN] = packet.get(..LEN)?.try_into().ok()?;
        Outer::from_template(header)
    }

    /// The outer header a CO-N context's template stands for, if it is one (see [`Outer::of`];
    /// the payload length is zeroed whatever it was).
    pub fn from_template(template: &[u8]) -> Option<Outer> {
        let header: [u8; LEN] = template.try_into().ok()?;
        let tunnel =
            header[0] >> 4 == 6 && (header[6] == protocol::IPV4 || header[6] == protocol::IPV6);
        tunnel.then(|| {
            let mut header = header;
            header[PAYLOAD_LENGTH].fill(0);
            Outer(header)
        })
    }

    /// The octets the identity hash goes on over (payload length zeroed).
    pub fn bytes(&self) -> &[u8; LEN] {
        &self.0
    }

    /// Puts the outer header in front of the `inner` packet that `out` holds, with its payload
    /// length set; `false` (and `out` unchanged) if the inner packet is too long for it.
    pub fn wrap(&self, out: &mut Vec<u8>) -> bool {
        let Ok(len) = u16::try_from(out.len()) else {
            return false;
        };
        let inner = out.len();
        out.resize(inner + LEN, 0);
        out.copy_within(..inner, LEN);
        out[..LEN].copy_from_slice(&self.0);
        out[PAYLOAD_LENGTH].copy_from_slice(&len.to_be_bytes());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn v6_in_v6(next: u8, payload_len: u16) -> Vec<u8> {
        let mut h = vec![0u8; LEN];
        h[0] = 0x60;
        h[4..6].copy_from_slice(&payload_len.to_be_bytes());
        h[6] = next;
        h[7] = 64;
        h[8] = 0x20;
        h[24] = 0x20;
        h[39] = 2;
        h
    }

    #[test]
    fn only_an_ipv6_header_right_before_ip_is_an_outer_header() {
        let tunnel = v6_in_v6(protocol::IPV6, 60);
        let outer = Outer::of(&tunnel).expect("IPv6 in IPv6");
        assert_eq!(outer.bytes()[4..6], [0, 0]);
        assert_eq!(
            Outer::of(&v6_in_v6(protocol::IPV4, 60)),
            Some(outer).map(|o| {
                let mut b = *o.bytes();
                b[6] = protocol::IPV4;
                Outer(b)
            })
        );
        assert_eq!(Outer::of(&v6_in_v6(protocol::TCP, 60)), None);
        assert_eq!(Outer::of(&tunnel[..39]), None);
        let mut v4 = tunnel.clone();
        v4[0] = 0x45;
        assert_eq!(Outer::of(&v4), None);
    }

    #[test]
    fn wrapping_puts_the_header_in_front_with_the_inner_length() {
        let outer = Outer::of(&v6_in_v6(protocol::IPV6, 999)).expect("outer");
        let mut out = vec![0xAB; 60];
        assert!(outer.wrap(&mut out));
        assert_eq!(out.len(), 100);
        assert_eq!(out[..LEN], v6_in_v6(protocol::IPV6, 60)[..]);
        assert!(out[LEN..].iter().all(|&b| b == 0xAB));
    }
}
