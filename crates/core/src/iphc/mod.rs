//! IP Header Compression (RFC 2507). Placeholder: sends every packet as
//! `TYPE_IP` until the codec lands.

use alloc::vec::Vec;

use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};

/// IPHC's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IphcConfig {
    /// Whether the decompressor asks for a full header (CONTEXT_STATE) when it cannot repair a
    /// TCP context.
    pub header_requests: bool,
}

impl Default for IphcConfig {
    fn default() -> IphcConfig {
        IphcConfig {
            header_requests: true,
        }
    }
}

/// The IPHC compressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct IphcCompressor {
    config: IphcConfig,
}

impl IphcCompressor {
    /// A compressor with no connection state.
    pub fn new(config: IphcConfig) -> IphcCompressor {
        IphcCompressor { config }
    }
}

/// The IPHC decompressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct IphcDecompressor {
    config: IphcConfig,
}

impl IphcDecompressor {
    /// A decompressor with no connection state.
    pub fn new(config: IphcConfig) -> IphcDecompressor {
        IphcDecompressor { config }
    }
}

impl Compressor for IphcCompressor {
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        let _ = &self.config;
        out.clear();
        out.extend_from_slice(packet);
        FrameKind::Ip
    }
}

impl Decompressor for IphcDecompressor {
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        let _ = &self.config;
        match kind {
            FrameKind::Ip => crate::codec::deliver_unchanged(frame, out),
            _ => Err(DropReason::UnknownKind),
        }
    }
}
