//! Tests of TAROC on hand-built packets: the draft's formats and behaviour, and where
//! `taroc-plus` parts from it.

use alloc::vec;
use alloc::vec::Vec;

use taroc_wire::checksum::Sum;
use taroc_wire::tcp::flags;

use super::format::flag;
use super::*;
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
pub(crate) use crate::tcp::spec::Spec;

struct Pair {
    c: TarocCompressor,
    d: TarocDecompressor,
    frame: Vec<u8>,
    out: Vec<u8>,
}

impl Pair {
    fn new() -> Pair {
        Pair {
            c: TarocCompressor::new(TarocConfig::default()),
            d: TarocDecompressor::new(TarocConfig::default()),
            frame: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Compresses and decompresses `packet`, asserting a byte-exact delivery; returns the kind.
    fn send(&mut self, packet: &[u8]) -> FrameKind {
        let kind = self.c.compress(packet, &mut self.frame);
        self.d
            .decompress(kind, &self.frame, &mut self.out)
            .expect("delivered");
        assert_eq!(self.out, packet);
        kind
    }
}

const U: FrameKind = FrameKind::UncompressedTcp;
const C: FrameKind = FrameKind::CompressedTcp;

mod draft;
mod plus;
