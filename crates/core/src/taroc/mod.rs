//! TAROC (placeholder while the codec is written).
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use alloc::vec::Vec;
/// TAROC settings.
#[derive(Debug, Clone, Default)]
pub struct TarocConfig;
/// TAROC compressor.
#[derive(Debug)]
pub struct TarocCompressor;
/// TAROC decompressor.
#[derive(Debug)]
pub struct TarocDecompressor;
impl TarocCompressor {
    /// New.
    pub fn new(_c: TarocConfig) -> Self {
        TarocCompressor
    }
}
impl TarocDecompressor {
    /// New.
    pub fn new(_c: TarocConfig) -> Self {
        TarocDecompressor
    }
}
impl Compressor for TarocCompressor {
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        out.clear();
        out.extend_from_slice(packet);
        FrameKind::Ip
    }
}
impl Decompressor for TarocDecompressor {
    fn decompress(
        &mut self,
        _k: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        out.clear();
        out.extend_from_slice(frame);
        Ok(())
    }
}
