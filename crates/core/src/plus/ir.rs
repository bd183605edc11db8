//! The IR frame (spec section 3), read and written in one place: the packet whole, its first
//! length field (IPv4 Total Length, IPv6 Payload Length) carrying `| context flags | CID |`,
//! and, with flag T ([`format::ir::STRIDES`]), its TCP urgent pointer (then 0) carrying the
//! context's stride.
//!
//! [`IrFrame`] is a view of a frame's bytes, its fields read and written in place; [`IrRepr`]
//! is what those fields say, parsed from a frame (the packet restored beside it) or emitted
//! into one. The compressor writes its IR frames with [`IrRepr::emit`] and the decompressor
//! reads them with [`IrRepr::parse`].

use alloc::vec::Vec;

use super::format;
use super::ipid::Behaviour;
use super::scaled::Strides;
use crate::codec::DropReason;
use crate::tcp::packet::{length_field_offset, TcpIpPacket};

/// A view of an IR frame's bytes.
#[derive(Debug, Clone)]
pub struct IrFrame<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IrFrame<T> {
    /// A view of `buffer`, unchecked: the accessors panic if it is shorter than its length
    /// field's end or its first octet is not IPv4's or IPv6's.
    pub fn new_unchecked(buffer: T) -> IrFrame<T> {
        IrFrame { buffer }
    }

    /// A view of `buffer` if it holds what every IR frame has: an IP version of 4 or 6 and the
    /// length field that carries the context flags and the CID.
    pub fn new_checked(buffer: T) -> Result<IrFrame<T>, DropReason> {
        let bytes = buffer.as_ref();
        let v4 = match bytes.first().map(|b| b >> 4) {
            Some(4) => true,
            Some(6) => false,
            _ => return Err(DropReason::Malformed),
        };
        if bytes.len() < length_field_offset(v4) + 2 {
            return Err(DropReason::Malformed);
        }
        Ok(IrFrame { buffer })
    }

    /// Whether the packet is IPv4 (else IPv6).
    pub fn v4(&self) -> bool {
        self.buffer.as_ref()[0] >> 4 == 4
    }

    /// The context flags ([`format::ir`]).
    pub fn context_flags(&self) -> u8 {
        self.buffer.as_ref()[length_field_offset(self.v4())]
    }

    /// The CID.
    pub fn cid(&self) -> u8 {
        self.buffer.as_ref()[length_field_offset(self.v4()) + 1]
    }

    /// The frame's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// The buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IrFrame<T> {
    /// Sets the context flags.
    pub fn set_context_flags(&mut self, flags: u8) {
        let at = length_field_offset(self.v4());
        self.buffer.as_mut()[at] = flags;
    }

    /// Sets the CID.
    pub fn set_cid(&mut self, cid: u8) {
        let at = length_field_offset(self.v4()) + 1;
        self.buffer.as_mut()[at] = cid;
    }

    /// Sets the stride carried in the urgent pointer of the TCP header at `tcp_offset`.
    pub fn set_stride(&mut self, tcp_offset: usize, stride: u16) {
        let at = tcp_offset + format::URGENT_OFFSET;
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&stride.to_be_bytes());
    }
}

/// What an IR frame says besides its packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IrRepr {
    /// The context's CID.
    pub cid: u8,
    /// The IPv4 Identification's behaviour ([`Behaviour::Zero`] for IPv6).
    pub behaviour: Behaviour,
    /// The usual ECN bits of the context (its CO frames' R-octet stands for them when absent).
    pub usual_ecn: u8,
    /// The context's strides. A frame carries one: the acknowledgment stride if there is one,
    /// else the sequence stride; [`IrRepr::parse`] gives the other as 0.
    pub strides: Strides,
}

impl IrRepr {
    /// The context flags this representation sends.
    pub fn context_flags(&self) -> u8 {
        let mut flags = self.behaviour.code() | (self.usual_ecn & 0x03) << 2;
        if self.strides.ack != 0 {
            flags |= format::ir::STRIDES | format::ir::ACK_STRIDE;
        } else if self.strides.seq != 0 {
            flags |= format::ir::STRIDES;
        }
        flags
    }

    /// Writes the IR frame of `p` into `out`, replacing its contents. With a stride, `p`'s
    /// urgent pointer must be unused (URG clear, pointer 0): the stride takes its place.
    pub fn emit(&self, p: &TcpIpPacket<'_>, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(p.bytes);
        let mut frame = IrFrame::new_unchecked(&mut out[..]);
        let stride = if self.strides.ack != 0 {
            self.strides.ack
        } else {
            self.strides.seq
        };
        if stride != 0 {
            frame.set_stride(p.tcp_offset, stride);
        }
        frame.set_context_flags(self.context_flags());
        frame.set_cid(self.cid);
    }

    /// Reads `frame`, writing its packet (the length field and the urgent pointer restored)
    /// into `out`, replacing its contents; [`DropReason::Malformed`] for context flags no frame
    /// sends, a packet longer than its length field can say, or a stride with no TCP header to
    /// carry it. Whether the packet is one the profile carries is the caller's to check.
    pub fn parse(frame: &IrFrame<&[u8]>, out: &mut Vec<u8>) -> Result<IrRepr, DropReason> {
        let (ctx_flags, cid, v4) = (frame.context_flags(), frame.cid(), frame.v4());
        if ctx_flags & !format::ir::ALL != 0 {
            return Err(DropReason::Malformed);
        }
        let bytes = frame.as_bytes();
        let len = if v4 {
            bytes.len()
        } else {
            bytes
                .len()
                .checked_sub(taroc_wire::ipv6::HEADER_LEN)
                .ok_or(DropReason::Malformed)?
        };
        let len = u16::try_from(len).map_err(|_| DropReason::Malformed)?;
        out.clear();
        out.extend_from_slice(bytes);
        let at = length_field_offset(v4);
        out[at..at + 2].copy_from_slice(&len.to_be_bytes());
        let mut strides = Strides::default();
        if ctx_flags & format::ir::STRIDES != 0 {
            let tcp = taroc_wire::ip::IpInfo::parse(out)
                .map_err(|_| DropReason::Malformed)?
                .transport_offset;
            let urgent = tcp + format::URGENT_OFFSET;
            let field = out
                .get_mut(urgent..urgent + 2)
                .ok_or(DropReason::Malformed)?;
            let stride = u16::from_be_bytes([field[0], field[1]]);
            field.fill(0);
            if ctx_flags & format::ir::ACK_STRIDE != 0 {
                strides.ack = stride;
            } else {
                strides.seq = stride;
            }
        } else if ctx_flags & format::ir::ACK_STRIDE != 0 {
            return Err(DropReason::Malformed);
        }
        Ok(IrRepr {
            cid,
            behaviour: Behaviour::of_code(ctx_flags),
            usual_ecn: (ctx_flags >> 2) & 0x03,
            strides,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plus::tests::{segment, segment_v6};

    /// Every representation a frame can carry comes back from the frame it emits, with the
    /// packet restored byte for byte; the frame is the packet with its length field (and, with
    /// a stride, its urgent pointer) replaced.
    #[test]
    fn parse_gives_back_what_emit_wrote() {
        let strides = [
            Strides::default(),
            Strides { seq: 1448, ack: 0 },
            Strides { seq: 0, ack: 2896 },
        ];
        for bytes in [
            segment(1000, 77, 9, 5, 100),
            segment_v6(5001, 1000, 77, 100),
        ] {
            let p = TcpIpPacket::parse(&bytes).expect("a valid packet");
            for (behaviour, strides) in [Behaviour::Sequential, Behaviour::Random]
                .into_iter()
                .flat_map(|b| strides.map(|s| (b, s)))
            {
                let repr = IrRepr {
                    cid: 7,
                    behaviour,
                    usual_ecn: 2,
                    strides,
                };
                let (mut frame, mut packet) = (Vec::new(), Vec::new());
                repr.emit(&p, &mut frame);
                assert_eq!(frame.len(), bytes.len());
                let at = length_field_offset(p.v4);
                assert_eq!(frame[at..at + 2], [repr.context_flags(), 7]);
                let view = IrFrame::new_checked(&frame[..]).expect("a whole frame");
                assert_eq!(IrRepr::parse(&view, &mut packet), Ok(repr));
                assert_eq!(packet, bytes);
            }
        }
    }

    /// Frames too short for their fields, with context flags no frame sends, or an
    /// acknowledgment stride flag without a stride are malformed.
    #[test]
    fn malformed_frames_are_refused() {
        assert!(IrFrame::new_checked(&[0x45u8, 0, 0][..]).is_err());
        assert!(IrFrame::new_checked(&[0x55u8; 40][..]).is_err());
        let bytes = segment(1000, 77, 9, 5, 0);
        let p = TcpIpPacket::parse(&bytes).expect("a valid packet");
        let repr = IrRepr {
            cid: 0,
            behaviour: Behaviour::Sequential,
            usual_ecn: 0,
            strides: Strides::default(),
        };
        let (mut frame, mut packet) = (Vec::new(), Vec::new());
        repr.emit(&p, &mut frame);
        for flags in [0x40, 0x80, format::ir::ACK_STRIDE] {
            let mut bad = frame.clone();
            IrFrame::new_unchecked(&mut bad[..]).set_context_flags(flags);
            let view = IrFrame::new_checked(&bad[..]).expect("a whole frame");
            assert_eq!(
                IrRepr::parse(&view, &mut packet),
                Err(DropReason::Malformed)
            );
        }
    }
}
