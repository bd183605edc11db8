//! The `none` scheme: every packet crosses the link unchanged, as `TYPE_IP`.

use alloc::vec::Vec;

use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};

/// Sends every packet unchanged.
#[derive(Debug, Default, Clone)]
pub struct NoneCompressor;

/// Delivers every `TYPE_IP` frame unchanged.
#[derive(Debug, Default, Clone)]
pub struct NoneDecompressor;

impl Compressor for NoneCompressor {
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        out.clear();
        out.extend_from_slice(packet);
        FrameKind::Ip
    }
}

impl Decompressor for NoneDecompressor {
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        if kind != FrameKind::Ip {
            return Err(DropReason::UnknownKind);
        }
        crate::codec::deliver_unchanged(frame, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_packets_unchanged() {
        let packet = [
            0x45u8, 0, 0, 20, 1, 2, 3, 4, 64, 17, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
        ];
        let (mut c, mut d) = (NoneCompressor, NoneDecompressor);
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let kind = c.compress(&packet, &mut frame);
        assert_eq!(kind, FrameKind::Ip);
        d.decompress(kind, &frame, &mut out).unwrap();
        assert_eq!(out, packet);
        assert_eq!(
            d.decompress(FrameKind::CompressedTcp, &frame, &mut out),
            Err(DropReason::UnknownKind)
        );
    }
}
