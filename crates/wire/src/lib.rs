//! Zero-copy wire views and small owned representations for IPv4, IPv6, TCP and UDP, with
//! Internet checksums.
//!
//! Every view (`Ipv4Packet`, `Ipv6Packet`, `TcpSegment`, …) is validated once by its
//! `new_checked` constructor; after that no accessor panics, whatever the bytes. Nothing here
//! reads a clock or does I/O, so the crate is `no_std`.
//!
//! For serial lines it also frames taroc frames, as sans-IO codecs: [`hdlc`] (RFC 1662
//! HDLC-like framing, octet-stuffed, with FCS-16 or FCS-32) and [`kiss`] (the KISS protocol of
//! packet-radio TNCs, with an FCS of ours), sharing [`fcs`] and [`framing`]. Their encoders
//! write to a slice, or, with the `std` feature, append to a caller's `Vec<u8>`; their
//! deframers receive into one buffer given at construction (or, with `std`, allocated then).
//! Nothing else allocates.
//!
//! No `unsafe` code but the Internet checksum's AVX2 loop ([`checksum`]), run only on a CPU
//! found to have AVX2 (with the `std` feature).
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod checksum;
pub mod fcs;
pub mod framing;
pub mod hdlc;
pub mod ip;
pub mod ipv4;
pub mod ipv6;
pub mod kiss;
pub mod seq;
pub mod summary;
pub mod tcp;
pub mod udp;

/// Why bytes could not be viewed as a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the header (or a length field) needs.
    Truncated,
    /// A field holds a value the format does not allow (wrong version, bad header length, …).
    Malformed,
}

impl core::fmt::Display for WireError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            WireError::Truncated => "truncated header",
            WireError::Malformed => "malformed header",
        })
    }
}

impl core::error::Error for WireError {}

/// IP protocol numbers used here.
pub mod protocol {
    /// IPv6 Hop-by-Hop Options.
    pub const HOP_BY_HOP: u8 = 0;
    /// ICMP.
    pub const ICMP: u8 = 1;
    /// IPv4 encapsulation (IP in IP).
    pub const IPV4: u8 = 4;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// IPv6 encapsulation.
    pub const IPV6: u8 = 41;
    /// IPv6 Routing header.
    pub const ROUTING: u8 = 43;
    /// IPv6 Fragment header.
    pub const FRAGMENT: u8 = 44;
    /// Encapsulating Security Payload.
    pub const ESP: u8 = 50;
    /// Authentication Header.
    pub const AH: u8 = 51;
    /// ICMPv6.
    pub const ICMPV6: u8 = 58;
    /// IPv6 No Next Header.
    pub const NO_NEXT: u8 = 59;
    /// IPv6 Destination Options.
    pub const DEST_OPTS: u8 = 60;
}

pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
