//! UDP header view (RFC 768).

use crate::{be16, WireError};

/// Length of the UDP header.
pub const HEADER_LEN: usize = 8;

/// A validated view of a UDP datagram: the buffer holds the header.
#[derive(Debug, Clone, Copy)]
pub struct UdpDatagram<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpDatagram<T> {
    /// Checks that the header is present.
    pub fn new_checked(buffer: T) -> Result<UdpDatagram<T>, WireError> {
        if buffer.as_ref().len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        Ok(UdpDatagram { buffer })
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), 0)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }

    /// Length field.
    pub fn length(&self) -> u16 {
        be16(self.buffer.as_ref(), 4)
    }

    /// Checksum field (0 means none, over IPv4).
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), 6)
    }

    /// The payload.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let d = [0x00, 0x35, 0xc3, 0x50, 0x00, 0x0a, 0xab, 0xcd, 1, 2];
        let u = UdpDatagram::new_checked(&d[..]).unwrap();
        assert_eq!(
            (u.src_port(), u.dst_port(), u.length(), u.checksum()),
            (53, 50000, 10, 0xabcd)
        );
        assert_eq!(u.payload(), [1, 2]);
        assert_eq!(
            UdpDatagram::new_checked(&d[..7]).unwrap_err(),
            WireError::Truncated
        );
    }
}
