//! Field access on a TCP/IP header held as bytes: the saved header of a connection slot, or the
//! head of a packet. Callers make sure the header is as long as the offsets they use.

/// IPv4 Total Length.
pub(crate) const IP_TOTAL_LEN: usize = 2;
/// IPv4 Identification.
pub(crate) const IP_ID: usize = 4;
/// IPv4 Protocol.
pub(crate) const IP_PROTOCOL: usize = 9;
/// IPv4 Header Checksum.
pub(crate) const IP_CHECKSUM: usize = 10;
/// IPv4 source and destination addresses (8 octets).
pub(crate) const IP_ADDRESSES: usize = 12;

/// TCP offsets, from the start of the TCP header.
pub(crate) mod tcp {
    /// Sequence number.
    pub(crate) const SEQ: usize = 4;
    /// Acknowledgment number.
    pub(crate) const ACK: usize = 8;
    /// Data offset and the reserved bits.
    pub(crate) const OFFSET: usize = 12;
    /// Flags.
    pub(crate) const FLAGS: usize = 13;
    /// Window.
    pub(crate) const WINDOW: usize = 14;
    /// Checksum.
    pub(crate) const CHECKSUM: usize = 16;
    /// Urgent pointer.
    pub(crate) const URGENT: usize = 18;
}

/// The IP header length (IHL * 4) of the header in `h`.
pub(crate) fn ip_header_len(h: &[u8]) -> usize {
    usize::from(h[0] & 0x0F) * 4
}

pub(crate) fn get16(h: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([h[at], h[at + 1]])
}

pub(crate) fn get32(h: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}

pub(crate) fn put16(h: &mut [u8], at: usize, value: u16) {
    h[at..at + 2].copy_from_slice(&value.to_be_bytes());
}

pub(crate) fn put32(h: &mut [u8], at: usize, value: u32) {
    h[at..at + 4].copy_from_slice(&value.to_be_bytes());
}
