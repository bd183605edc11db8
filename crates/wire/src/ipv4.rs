//! IPv4 header view (RFC 791).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |Version|  IHL  |    DSCP   |ECN|          Total Length         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |         Identification        |Flags|      Fragment Offset    |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  Time to Live |    Protocol   |         Header Checksum       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                       Source Address                          |
//! |                    Destination Address                        |
//! |                    Options                    |    Padding    |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use core::net::Ipv4Addr;

use crate::checksum;
use crate::{be16, WireError};

/// Length of an IPv4 header without options.
pub const MIN_HEADER_LEN: usize = 20;

/// Byte offset of the Total Length field.
pub const TOTAL_LEN_OFFSET: usize = 2;

/// Byte offset of the Identification field.
pub const IDENT_OFFSET: usize = 4;

/// Byte offset of the Header Checksum field.
pub const CHECKSUM_OFFSET: usize = 10;

/// A validated view of an IPv4 packet: the buffer holds at least the whole header and the
/// Total Length field is at least the header length. The buffer may be shorter than Total
/// Length (a capture cut by its snaplen) or longer (link padding); see [`Ipv4Packet::is_exact`].
#[derive(Debug, Clone, Copy)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Checks version, header length and Total Length against the buffer.
    pub fn new_checked(buffer: T) -> Result<Ipv4Packet<T>, WireError> {
        let b = buffer.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if b[0] >> 4 != 4 {
            return Err(WireError::Malformed);
        }
        let header_len = usize::from(b[0] & 0x0F) * 4;
        if header_len < MIN_HEADER_LEN || usize::from(be16(b, TOTAL_LEN_OFFSET)) < header_len {
            return Err(WireError::Malformed);
        }
        if b.len() < header_len {
            return Err(WireError::Truncated);
        }
        Ok(Ipv4Packet { buffer })
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// Header length in bytes (IHL * 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[0] & 0x0F) * 4
    }

    /// The Type of Service octet (DSCP and ECN).
    pub fn tos(&self) -> u8 {
        self.b()[1]
    }

    /// The Total Length field.
    pub fn total_len(&self) -> u16 {
        be16(self.b(), TOTAL_LEN_OFFSET)
    }

    /// The Identification field.
    pub fn ident(&self) -> u16 {
        be16(self.b(), IDENT_OFFSET)
    }

    /// The flags and fragment offset word.
    pub fn flags_frag(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// Don't Fragment.
    pub fn dont_frag(&self) -> bool {
        self.flags_frag() & 0x4000 != 0
    }

    /// Whether this packet is a fragment (More Fragments set or a non-zero offset).
    pub fn is_fragment(&self) -> bool {
        self.flags_frag() & 0x3FFF != 0
    }

    /// Time to Live.
    pub fn ttl(&self) -> u8 {
        self.b()[8]
    }

    /// The Protocol field.
    pub fn protocol(&self) -> u8 {
        self.b()[9]
    }

    /// The Header Checksum field.
    pub fn header_checksum(&self) -> u16 {
        be16(self.b(), CHECKSUM_OFFSET)
    }

    /// Source address.
    pub fn src(&self) -> Ipv4Addr {
        let b = self.b();
        Ipv4Addr::new(b[12], b[13], b[14], b[15])
    }

    /// Destination address.
    pub fn dst(&self) -> Ipv4Addr {
        let b = self.b();
        Ipv4Addr::new(b[16], b[17], b[18], b[19])
    }

    /// The header bytes, options included.
    pub fn header(&self) -> &[u8] {
        &self.b()[..self.header_len()]
    }

    /// The options bytes (empty without options).
    pub fn options(&self) -> &[u8] {
        &self.b()[MIN_HEADER_LEN..self.header_len()]
    }

    /// Whether the buffer holds exactly Total Length bytes (no truncation, no padding).
    pub fn is_exact(&self) -> bool {
        self.b().len() == usize::from(self.total_len())
    }

    /// The payload as far as both Total Length and the buffer reach.
    pub fn payload(&self) -> &[u8] {
        let end = usize::from(self.total_len()).min(self.b().len());
        &self.b()[self.header_len()..end]
    }

    /// Whether the header checksum verifies.
    pub fn header_checksum_ok(&self) -> bool {
        checksum::Sum::new().add_bytes(self.header()).verifies()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    /// Sets the Total Length field.
    pub fn set_total_len(&mut self, len: u16) {
        self.bm()[TOTAL_LEN_OFFSET..TOTAL_LEN_OFFSET + 2].copy_from_slice(&len.to_be_bytes());
    }

    /// Sets the Identification field.
    pub fn set_ident(&mut self, ident: u16) {
        self.bm()[IDENT_OFFSET..IDENT_OFFSET + 2].copy_from_slice(&ident.to_be_bytes());
    }

    /// Sets the TOS octet.
    pub fn set_tos(&mut self, tos: u8) {
        self.bm()[1] = tos;
    }

    /// Recomputes and stores the header checksum.
    pub fn fill_header_checksum(&mut self) {
        let len = self.header_len();
        let b = self.bm();
        b[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&[0, 0]);
        let sum = checksum::checksum(&b[..len]);
        b[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&sum.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 198.18.0.1 -> 198.18.0.2, TCP, DF, id 0x67f6, total length 52: the first data packet
    // header of captures/linux/a_bulk_v4_default.pcap.
    const HEADER: [u8; 20] = [
        0x45, 0x00, 0x00, 0x34, 0x67, 0xf6, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00, 198, 18, 0, 1, 198,
        18, 0, 2,
    ];

    fn packet() -> [u8; 52] {
        let mut p = [0u8; 52];
        p[..20].copy_from_slice(&HEADER);
        let mut v = Ipv4Packet::new_checked(&mut p[..]).unwrap();
        v.fill_header_checksum();
        p
    }

    #[test]
    fn fields() {
        let p = packet();
        let v = Ipv4Packet::new_checked(&p[..]).unwrap();
        assert_eq!(v.header_len(), 20);
        assert_eq!(v.total_len(), 52);
        assert_eq!(v.ident(), 0x67f6);
        assert!(v.dont_frag() && !v.is_fragment());
        assert_eq!(v.ttl(), 64);
        assert_eq!(v.protocol(), 6);
        assert_eq!(v.src(), Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(v.dst(), Ipv4Addr::new(198, 18, 0, 2));
        assert!(v.header_checksum_ok() && v.is_exact());
        assert_eq!(v.payload().len(), 32);
    }

    #[test]
    fn rejects_bad_input() {
        let p = packet();
        assert_eq!(
            Ipv4Packet::new_checked(&p[..19]).unwrap_err(),
            WireError::Truncated
        );
        let mut bad = p;
        bad[0] = 0x65;
        assert_eq!(
            Ipv4Packet::new_checked(&bad[..]).unwrap_err(),
            WireError::Malformed
        );
        bad[0] = 0x44;
        assert_eq!(
            Ipv4Packet::new_checked(&bad[..]).unwrap_err(),
            WireError::Malformed
        );
        bad[0] = 0x4F; // 60-byte header in a 52-byte buffer whose total length is 52
        assert_eq!(
            Ipv4Packet::new_checked(&bad[..]).unwrap_err(),
            WireError::Malformed
        );
    }

    #[test]
    fn truncated_capture_is_viewable_but_not_exact() {
        let p = packet();
        let v = Ipv4Packet::new_checked(&p[..40]).unwrap();
        assert!(!v.is_exact());
        assert_eq!(v.payload().len(), 20);
    }
}
