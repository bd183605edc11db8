//! Van Jacobson TCP/IP header compression (RFC 1144). Placeholder: sends every packet as
//! `TYPE_IP` until the codec lands.

use alloc::vec::Vec;

use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};

/// VJ's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VjConfig {
    /// Connection slots (RFC 1144 uses 16; at most 256).
    pub slots: usize,
    /// Whether the compressor omits the connection number when it repeats (the C bit).
    pub compress_cid: bool,
}

impl Default for VjConfig {
    fn default() -> VjConfig {
        VjConfig {
            slots: 16,
            compress_cid: true,
        }
    }
}

/// The VJ compressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct VjCompressor {
    config: VjConfig,
}

impl VjCompressor {
    /// A compressor with no connection state.
    pub fn new(config: VjConfig) -> VjCompressor {
        VjCompressor { config }
    }
}

/// The VJ decompressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct VjDecompressor {
    config: VjConfig,
}

impl VjDecompressor {
    /// A decompressor with no connection state.
    pub fn new(config: VjConfig) -> VjDecompressor {
        VjDecompressor { config }
    }
}

impl Compressor for VjCompressor {
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        let _ = &self.config;
        out.clear();
        out.extend_from_slice(packet);
        FrameKind::Ip
    }
}

impl Decompressor for VjDecompressor {
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
