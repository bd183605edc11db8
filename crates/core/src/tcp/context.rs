//! What both sides of a TAROC context must agree on for as long as it lives.

use alloc::vec::Vec;

use super::packet::TcpIpPacket;

/// The number of CIDs on a link direction (8-bit CIDs).
pub const ALL_CIDS: usize = 256;

/// A context's identity: everything a COMPRESSED_TCP header does not carry and the TCP checksum
/// may not cover. Every UNCOMPRESSED_TCP of a CID carries the same identity, so losing some of
/// them on the link can never leave the decompressor with a different one; a stream whose
/// identity changes moves to a fresh CID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// IP headers and TCP ports, per-packet IP fields zeroed ([`TcpIpPacket::template_into`]).
    pub template: Vec<u8>,
    /// Whether every packet carries a Timestamps option.
    pub ts: bool,
    /// Whether the IPv4 Identification travels whole (RANDOM) instead of W-LSB coded.
    pub random_ip_id: bool,
    /// The R-octet value COMPRESSED_TCP headers without an R-octet stand for: the ECN bits of
    /// the packet that created the context, reserved bits, CWR and ECE clear.
    pub usual_ecn: u8,
}

impl Identity {
    /// The identity a context created for `p` gets.
    pub fn of(p: &TcpIpPacket<'_>, random_ip_id: bool) -> Identity {
        // Room for the longest template, so that a context refreshed with another never grows.
        let mut template = Vec::with_capacity(super::packet::MAX_TEMPLATE_LEN);
        p.template_into(&mut template);
        Identity {
            template,
            ts: p.ts,
            random_ip_id,
            usual_ecn: p.r_octet & 0x03,
        }
    }

    /// Makes this identity the one a context created for `p` gets, reusing its storage (a
    /// decompressor refreshed by UNCOMPRESSED_TCP does not allocate).
    pub fn assign(&mut self, p: &TcpIpPacket<'_>, random_ip_id: bool) {
        p.template_into(&mut self.template);
        self.ts = p.ts;
        self.random_ip_id = random_ip_id;
        self.usual_ecn = p.r_octet & 0x03;
    }

    /// Whether `p` belongs to a context of this identity (the usual ECN value is not checked:
    /// other values travel in the R-octet).
    pub fn matches(&self, p: &TcpIpPacket<'_>, random_ip_id: bool) -> bool {
        self.ts == p.ts && self.random_ip_id == random_ip_id && p.matches_template(&self.template)
    }
}
