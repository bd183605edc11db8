//! TCP header view (RFC 9293) and options (RFC 9293 MSS, RFC 7323 window scale and timestamps,
//! RFC 2018 SACK-permitted and SACK).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          Source Port          |       Destination Port        |
//! |                        Sequence Number                        |
//! |                    Acknowledgment Number                      |
//! |  Data |       |C|E|U|A|P|R|S|F|                               |
//! | Offset| Rsrvd |W|C|R|C|S|S|Y|I|            Window             |
//! |       |       |R|E|G|K|H|T|N|N|                               |
//! |           Checksum            |         Urgent Pointer        |
//! |                    Options                    |    Padding    |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use crate::{be16, be32, WireError};

/// Length of a TCP header without options.
pub const MIN_HEADER_LEN: usize = 20;

/// Byte offset of the Checksum field.
pub const CHECKSUM_OFFSET: usize = 16;

/// Flag bits of header byte 13.
pub mod flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
    /// URG.
    pub const URG: u8 = 0x20;
    /// ECE (RFC 3168).
    pub const ECE: u8 = 0x40;
    /// CWR (RFC 3168).
    pub const CWR: u8 = 0x80;
}

/// A validated view of a TCP segment: the buffer holds the whole header, options included.
#[derive(Debug, Clone, Copy)]
pub struct TcpSegment<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TcpSegment<T> {
    /// Checks that the header, options included, is present.
    pub fn new_checked(buffer: T) -> Result<TcpSegment<T>, WireError> {
        let b = buffer.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let header_len = usize::from(b[12] >> 4) * 4;
        if header_len < MIN_HEADER_LEN {
            return Err(WireError::Malformed);
        }
        if b.len() < header_len {
            return Err(WireError::Truncated);
        }
        Ok(TcpSegment { buffer })
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        be16(self.b(), 0)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// Sequence number.
    pub fn seq(&self) -> u32 {
        be32(self.b(), 4)
    }

    /// Acknowledgment number.
    pub fn ack(&self) -> u32 {
        be32(self.b(), 8)
    }

    /// Header length in bytes (Data Offset * 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[12] >> 4) * 4
    }

    /// The four reserved bits after Data Offset (the last one is AE, RFC 9768).
    pub fn reserved(&self) -> u8 {
        self.b()[12] & 0x0F
    }

    /// The flags octet (CWR ECE URG ACK PSH RST SYN FIN).
    pub fn flags(&self) -> u8 {
        self.b()[13]
    }

    /// Window.
    pub fn window(&self) -> u16 {
        be16(self.b(), 14)
    }

    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.b(), CHECKSUM_OFFSET)
    }

    /// Urgent pointer.
    pub fn urgent(&self) -> u16 {
        be16(self.b(), 18)
    }

    /// The options bytes.
    pub fn options(&self) -> &[u8] {
        &self.b()[MIN_HEADER_LEN..self.header_len()]
    }

    /// The options, parsed one by one.
    pub fn option_iter(&self) -> OptionIter<'_> {
        OptionIter::new(self.options())
    }

    /// The payload.
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..]
    }
}

/// Option kinds.
pub mod kind {
    /// End of option list.
    pub const EOL: u8 = 0;
    /// No-operation.
    pub const NOP: u8 = 1;
    /// Maximum segment size.
    pub const MSS: u8 = 2;
    /// Window scale.
    pub const WINDOW_SCALE: u8 = 3;
    /// SACK permitted.
    pub const SACK_PERMITTED: u8 = 4;
    /// SACK.
    pub const SACK: u8 = 5;
    /// Timestamps.
    pub const TIMESTAMPS: u8 = 8;
}

/// At most this many SACK blocks fit in the 40 bytes of TCP options.
pub const MAX_SACK_BLOCKS: usize = 4;

/// SACK blocks (left edge, right edge), at most [`MAX_SACK_BLOCKS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlocks {
    blocks: [(u32, u32); MAX_SACK_BLOCKS],
    len: u8,
}

impl SackBlocks {
    /// The blocks, in option order.
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.blocks[..usize::from(self.len)]
    }

    /// Appends a block; returns false (and changes nothing) when full.
    pub fn push(&mut self, left: u32, right: u32) -> bool {
        if usize::from(self.len) == MAX_SACK_BLOCKS {
            return false;
        }
        self.blocks[usize::from(self.len)] = (left, right);
        self.len += 1;
        true
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether there is no block.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One TCP option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption<'a> {
    /// End of option list (the rest of the options area is padding).
    Eol,
    /// No-operation.
    Nop,
    /// Maximum segment size.
    Mss(u16),
    /// Window scale shift count.
    WindowScale(u8),
    /// SACK permitted.
    SackPermitted,
    /// SACK blocks.
    Sack(SackBlocks),
    /// Timestamps: TSval, TSecr.
    Timestamps {
        /// TS value.
        val: u32,
        /// TS echo reply.
        ecr: u32,
    },
    /// Any other kind, with its data (length octet excluded).
    Unknown {
        /// Option kind.
        kind: u8,
        /// Option data.
        data: &'a [u8],
    },
}

impl TcpOption<'_> {
    /// Bytes this option takes on the wire.
    pub fn wire_len(&self) -> usize {
        match self {
            TcpOption::Eol | TcpOption::Nop => 1,
            TcpOption::Mss(_) => 4,
            TcpOption::WindowScale(_) => 3,
            TcpOption::SackPermitted => 2,
            TcpOption::Sack(blocks) => 2 + 8 * blocks.len(),
            TcpOption::Timestamps { .. } => 10,
            TcpOption::Unknown { data, .. } => 2 + data.len(),
        }
    }

    /// Writes the option at the start of `out`, returning its length, or `None` if `out` is too
    /// short or the option cannot be encoded (data longer than 253 bytes).
    pub fn emit(&self, out: &mut [u8]) -> Option<usize> {
        let len = self.wire_len();
        let out = out.get_mut(..len)?;
        match *self {
            TcpOption::Eol => out[0] = kind::EOL,
            TcpOption::Nop => out[0] = kind::NOP,
            TcpOption::Mss(mss) => {
                out[..2].copy_from_slice(&[kind::MSS, 4]);
                out[2..].copy_from_slice(&mss.to_be_bytes());
            }
            TcpOption::WindowScale(shift) => out.copy_from_slice(&[kind::WINDOW_SCALE, 3, shift]),
            TcpOption::SackPermitted => out.copy_from_slice(&[kind::SACK_PERMITTED, 2]),
            TcpOption::Sack(blocks) => {
                out[..2].copy_from_slice(&[kind::SACK, len as u8]);
                for (i, (l, r)) in blocks.as_slice().iter().enumerate() {
                    out[2 + 8 * i..6 + 8 * i].copy_from_slice(&l.to_be_bytes());
                    out[6 + 8 * i..10 + 8 * i].copy_from_slice(&r.to_be_bytes());
                }
            }
            TcpOption::Timestamps { val, ecr } => {
                out[..2].copy_from_slice(&[kind::TIMESTAMPS, 10]);
                out[2..6].copy_from_slice(&val.to_be_bytes());
                out[6..10].copy_from_slice(&ecr.to_be_bytes());
            }
            TcpOption::Unknown { kind, data } => {
                let l = u8::try_from(len).ok()?;
                out[..2].copy_from_slice(&[kind, l]);
                out[2..].copy_from_slice(data);
            }
        }
        Some(len)
    }
}

/// Iterates over the options of a header. Yields `Err(Malformed)` once (and then stops) on an
/// option whose length is impossible; after `Eol` it stops.
#[derive(Debug, Clone)]
pub struct OptionIter<'a> {
    rest: &'a [u8],
}

impl<'a> OptionIter<'a> {
    /// Iterates over the options area `bytes`.
    pub fn new(bytes: &'a [u8]) -> OptionIter<'a> {
        OptionIter { rest: bytes }
    }

    /// The bytes not yet parsed (after an `Eol`: the padding that follows it).
    pub fn remainder(&self) -> &'a [u8] {
        self.rest
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = Result<TcpOption<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (&kind, after_kind) = self.rest.split_first()?;
        match kind {
            kind::EOL => {
                self.rest = after_kind;
                return Some(Ok(TcpOption::Eol));
            }
            kind::NOP => {
                self.rest = after_kind;
                return Some(Ok(TcpOption::Nop));
            }
            _ => {}
        }
        let len = match after_kind.first() {
            Some(&l) if l >= 2 && usize::from(l) <= self.rest.len() => usize::from(l),
            _ => {
                self.rest = &[];
                return Some(Err(WireError::Malformed));
            }
        };
        let data = &self.rest[2..len];
        self.rest = &self.rest[len..];
        let malformed = || Some(Err(WireError::Malformed));
        let option = match kind {
            kind::MSS if data.len() == 2 => TcpOption::Mss(be16(data, 0)),
            kind::WINDOW_SCALE if data.len() == 1 => TcpOption::WindowScale(data[0]),
            kind::SACK_PERMITTED if data.is_empty() => TcpOption::SackPermitted,
            kind::SACK if !data.is_empty() && data.len().is_multiple_of(8) && data.len() <= 32 => {
                let mut blocks = SackBlocks::default();
                for b in data.chunks_exact(8) {
                    blocks.push(be32(b, 0), be32(b, 4));
                }
                TcpOption::Sack(blocks)
            }
            kind::TIMESTAMPS if data.len() == 8 => TcpOption::Timestamps {
                val: be32(data, 0),
                ecr: be32(data, 4),
            },
            kind::MSS
            | kind::WINDOW_SCALE
            | kind::SACK_PERMITTED
            | kind::SACK
            | kind::TIMESTAMPS => {
                self.rest = &[];
                return malformed();
            }
            _ => TcpOption::Unknown { kind, data },
        };
        Some(Ok(option))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A Linux data segment header with NOP NOP TS NOP NOP SACK(1).
    fn segment() -> [u8; 52] {
        let mut s = [0u8; 52];
        s[..20].copy_from_slice(&[
            0x9c, 0x40, 0x14, 0x51, 0x01, 0x02, 0x03, 0x04, 0xa0, 0xb0, 0xc0, 0xd0, 0x80, 0x18,
            0x01, 0xf5, 0x12, 0x34, 0x00, 0x00,
        ]);
        s[20..32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9]);
        s[32..44].copy_from_slice(&[1, 1, 5, 10, 0, 0, 1, 0, 0, 0, 2, 0]);
        s[44..52].copy_from_slice(b"payload!");
        s[12] = 0xb0; // 44-byte header
        s
    }

    #[test]
    fn fields_and_options() {
        let s = segment();
        let t = TcpSegment::new_checked(&s[..]).unwrap();
        assert_eq!((t.src_port(), t.dst_port()), (40000, 5201));
        assert_eq!((t.seq(), t.ack()), (0x01020304, 0xa0b0c0d0));
        assert_eq!(t.header_len(), 44);
        assert_eq!(t.flags(), flags::ACK | flags::PSH);
        assert_eq!(t.window(), 501);
        assert_eq!(t.checksum(), 0x1234);
        assert_eq!(t.payload(), b"payload!");
        let opts: Vec<_> = t.option_iter().map(|o| o.unwrap()).collect();
        let mut sack = SackBlocks::default();
        sack.push(256, 512);
        assert_eq!(
            opts,
            [
                TcpOption::Nop,
                TcpOption::Nop,
                TcpOption::Timestamps { val: 7, ecr: 9 },
                TcpOption::Nop,
                TcpOption::Nop,
                TcpOption::Sack(sack)
            ]
        );
    }

    #[test]
    fn options_emit_what_they_parse() {
        let mut sack = SackBlocks::default();
        sack.push(1, 2);
        sack.push(3, 4);
        let all = [
            TcpOption::Mss(1460),
            TcpOption::WindowScale(7),
            TcpOption::SackPermitted,
            TcpOption::Sack(sack),
            TcpOption::Timestamps {
                val: 0xdeadbeef,
                ecr: 1,
            },
            TcpOption::Unknown {
                kind: 30,
                data: &[1, 2, 3],
            },
            TcpOption::Nop,
            TcpOption::Eol,
        ];
        let mut buf = [0u8; 64];
        let mut at = 0;
        for o in &all {
            at += o.emit(&mut buf[at..]).unwrap();
        }
        let parsed: Vec<_> = OptionIter::new(&buf[..at]).map(|o| o.unwrap()).collect();
        assert_eq!(parsed, all);
        assert_eq!(TcpOption::Mss(1).emit(&mut buf[..3]), None);
    }

    #[test]
    fn malformed_options_stop_the_walk() {
        for bad in [
            &[2u8, 4, 0][..],
            &[8, 1],
            &[5, 6, 0, 0, 0, 0],
            &[30, 0],
            &[2, 3, 0],
        ] {
            let mut it = OptionIter::new(bad);
            assert_eq!(it.next(), Some(Err(WireError::Malformed)), "{bad:?}");
            assert_eq!(it.next(), None);
        }
    }

    #[test]
    fn rejects_short_headers() {
        let s = segment();
        assert_eq!(
            TcpSegment::new_checked(&s[..19]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            TcpSegment::new_checked(&s[..40]).unwrap_err(),
            WireError::Truncated
        );
        let mut bad = s;
        bad[12] = 0x40;
        assert_eq!(
            TcpSegment::new_checked(&bad[..]).unwrap_err(),
            WireError::Malformed
        );
    }
}
