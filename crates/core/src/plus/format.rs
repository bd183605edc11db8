//! The `taroc-plus` packet formats (`docs/taroc-plus-format.md` is the specification).
//!
//! ```text
//! IR (kind byte 0x08): the packet whole, its first length field (IPv4 Total Length, IPv6
//!   Payload Length) replaced by | context flags | CID |, then, if the flags say so, a trailer
//!   of the strides: | sequence stride (2) | acknowledgment stride (2) |.
//!   context flags: | 0 | 0 | 0 | T | E E | B B |  T strides trailer, E usual ECN, B IP-ID
//!   behaviour (0 sequential, 1 byte-swapped, 2 zero, 3 random).
//!
//! CO (kind byte 0x40 + |X|P|S S|A A|): X extension octet follows, P the TCP PSH flag, S and A
//!   the size classes of the sequence and acknowledgment numbers.
//!   | extension |C|W|R|U|K|Q|Z|F| (if X)  C CID octet, W window, R R-octet, U urgent pointer,
//!   | CID       | (if C)                    K SACK, Q sequence unscaled, Z ack unscaled, F FIN
//!   | checksum  | TCP checksum (+ IPv4 Identification, mod 2^16), 2 octets
//!   | bits      | sequence LSBs, ack LSBs, IP-ID class + offset LSBs (or 16 bits if random),
//!   |           | TS value class + LSBs, TS echo class + LSBs (if the context has timestamps),
//!   |           | SACK blocks - 1 (2 bits, if K); zero bits to the octet boundary
//!   | window    | (2, if W) | R-octet (if R) | urgent pointer (2, if U)
//!   | SACK      | (if K) each block as (left edge - ACK, right edge - left edge) RFC 1144 deltas
//!   | TCP data  |
//! ```

use crate::codec::FrameKind;

/// The kind byte of an IR frame.
pub const IR: u8 = FrameKind::PROFILE_FIRST;

/// The kind byte of a CO frame without any of its bits set.
pub const CO: u8 = FrameKind::PROFILE_TCP;

/// Bits of a CO kind byte.
pub mod kind {
    /// An extension octet follows.
    pub const X: u8 = 0x20;
    /// The TCP PSH flag.
    pub const P: u8 = 0x10;
    /// Shift of the sequence size class.
    pub const S_SHIFT: u8 = 2;
    /// Shift of the acknowledgment size class.
    pub const A_SHIFT: u8 = 0;
}

/// Bits of a CO extension octet.
pub mod ext {
    /// A CID octet follows (else CID 0).
    pub const C: u8 = 0x80;
    /// The TCP window follows.
    pub const W: u8 = 0x40;
    /// The R-octet follows (reserved bits, CWR, ECE and ECN differ from the context's).
    pub const R: u8 = 0x20;
    /// The TCP URG flag; the urgent pointer follows.
    pub const U: u8 = 0x10;
    /// SACK blocks follow.
    pub const K: u8 = 0x08;
    /// The sequence number is coded unscaled although the context has a stride.
    pub const Q: u8 = 0x04;
    /// The acknowledgment number is coded unscaled although the context has a stride.
    pub const Z: u8 = 0x02;
    /// The TCP FIN flag.
    pub const F: u8 = 0x01;
}

/// Bits of an IR frame's context flags.
pub mod ir {
    /// The strides trailer follows the packet.
    pub const STRIDES: u8 = 0x10;
    /// Every defined bit.
    pub const ALL: u8 = 0x1F;
}

/// LSB counts of the four sequence / acknowledgment size classes, coded scaled.
pub const SCALED_BITS: [u8; 4] = [0, 5, 9, 16];

/// LSB counts of the four sequence / acknowledgment size classes, coded unscaled.
pub const UNSCALED_BITS: [u8; 4] = [0, 12, 20, 32];

/// LSB counts of the four IP-ID offset classes.
pub const IP_ID_BITS: [u8; 4] = [0, 4, 8, 16];

/// LSB counts of the four timestamp classes.
pub const TS_BITS: [u8; 4] = [0, 8, 12, 32];

/// The smallest class of `table` that carries `need` bits, if any.
pub fn class(table: &[u8; 4], need: u8) -> Option<u8> {
    table.iter().position(|&k| k >= need).map(|c| c as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_the_smallest_that_fit() {
        assert_eq!(class(&SCALED_BITS, 0), Some(0));
        assert_eq!(class(&SCALED_BITS, 1), Some(1));
        assert_eq!(class(&SCALED_BITS, 9), Some(2));
        assert_eq!(class(&SCALED_BITS, 17), None);
        assert_eq!(class(&UNSCALED_BITS, 32), Some(3));
        assert_eq!(class(&TS_BITS, 13), Some(3));
    }
}
