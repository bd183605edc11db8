//! The interface every header-compression scheme implements, and the enum over schemes.
//!
//! A *frame* is what crosses the link: a [`FrameKind`] (which the link layer carries, e.g. as a
//! PPP protocol number; our byte-oriented links spend one byte on it, see [`FrameKind::to_byte`])
//! and the frame's bytes. A compressor turns every IP packet into exactly one frame; a
//! decompressor turns a frame back into the original packet, byte for byte, or refuses it with a
//! [`DropReason`]. It never delivers a packet that differs from the original it cannot verify.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use crate::none::{NoneCompressor, NoneDecompressor};
use crate::taroc::{TarocCompressor, TarocConfig, TarocDecompressor};

/// The kind of a link frame. One number space for all schemes, so one link framing serves them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FrameKind {
    /// A regular IP packet, sent unchanged (RFC 1144 / RFC 2507 / TAROC `TYPE_IP`).
    Ip = 0,
    /// TAROC `UNCOMPRESSED_TCP`: the full header with the CID in the IP length field.
    UncompressedTcp = 1,
    /// TAROC `COMPRESSED_TCP`.
    CompressedTcp = 2,
}

impl FrameKind {
    /// Every frame kind, in byte order.
    pub const ALL: [FrameKind; 3] = [
        FrameKind::Ip,
        FrameKind::UncompressedTcp,
        FrameKind::CompressedTcp,
    ];

    /// The one byte our links spend on the frame kind.
    pub fn to_byte(self) -> u8 {
        self as u8
    }

    /// The frame kind carried by `byte`, if any.
    pub fn from_byte(byte: u8) -> Option<FrameKind> {
        FrameKind::ALL.get(usize::from(byte)).copied()
    }

    /// The name of this kind as the specifications write it.
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Ip => "TYPE_IP",
            FrameKind::UncompressedTcp => "UNCOMPRESSED_TCP",
            FrameKind::CompressedTcp => "COMPRESSED_TCP",
        }
    }
}

/// Why a decompressor refused a frame. Small and `Copy`: counted on the per-packet path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The frame is too short or its fields are inconsistent.
    Malformed,
    /// The frame kind is not one this scheme sends.
    UnknownKind,
    /// The frame names a context the decompressor does not have.
    NoContext,
    /// The rebuilt packet failed its TCP (or IPv4 header) checksum: the context is damaged.
    ChecksumMismatch,
    /// The frame uses a feature this implementation does not support.
    Unsupported,
}

impl DropReason {
    /// Every reason, for tables of counters.
    pub const ALL: [DropReason; 5] = [
        DropReason::Malformed,
        DropReason::UnknownKind,
        DropReason::NoContext,
        DropReason::ChecksumMismatch,
        DropReason::Unsupported,
    ];

    /// A short snake_case name, for reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Malformed => "malformed",
            DropReason::UnknownKind => "unknown_kind",
            DropReason::NoContext => "no_context",
            DropReason::ChecksumMismatch => "checksum_mismatch",
            DropReason::Unsupported => "unsupported",
        }
    }

    /// Whether a drop for this reason, of a frame the link delivered intact, is a loss caused by
    /// the decompressor's context (the *context-damage loss* of MISSION.md).
    pub fn is_context_damage(self) -> bool {
        matches!(self, DropReason::NoContext | DropReason::ChecksumMismatch)
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A header compressor for one direction of one link.
pub trait Compressor {
    /// Compresses one IP packet (starting with its IPv4 or IPv6 header) into `out`, which is
    /// cleared first, and returns the frame's kind. Never fails: a packet the scheme cannot
    /// compress is sent unchanged as [`FrameKind::Ip`].
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind;
}

/// A header decompressor for one direction of one link.
pub trait Decompressor {
    /// Rebuilds the original packet of one frame into `out` (cleared first), or refuses it.
    /// Whatever the bytes, this never panics and never delivers a packet it could not verify.
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason>;
}

/// Delivers a `TYPE_IP` frame: the packet itself, unchanged.
pub fn deliver_unchanged(frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
    out.clear();
    out.extend_from_slice(frame);
    Ok(())
}

/// A scheme, selectable by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// No compression: every packet passes as `TYPE_IP`.
    None,
    /// TAROC as drafted (draft-ietf-rohc-tcp-taroc-00).
    Taroc,
}

impl Scheme {
    /// Every scheme, in the order reports list them.
    pub const ALL: [Scheme; 2] = [Scheme::None, Scheme::Taroc];

    /// The scheme's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::None => "none",
            Scheme::Taroc => "taroc",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown scheme name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownScheme;

impl fmt::Display for UnknownScheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown scheme (expected one of: none, taroc)")
    }
}

impl FromStr for Scheme {
    type Err = UnknownScheme;
    fn from_str(s: &str) -> Result<Scheme, UnknownScheme> {
        Scheme::ALL
            .into_iter()
            .find(|scheme| scheme.name() == s)
            .ok_or(UnknownScheme)
    }
}

/// Per-scheme settings, for the schemes that have any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemeConfig {
    /// TAROC's settings.
    pub taroc: TarocConfig,
}

/// A compressor of any scheme (static dispatch).
#[derive(Debug)]
pub enum AnyCompressor {
    /// See [`Scheme::None`].
    None(NoneCompressor),
    /// See [`Scheme::Taroc`] (boxed: its context table is large, `none` is empty).
    Taroc(Box<TarocCompressor>),
}

/// A decompressor of any scheme (static dispatch).
#[derive(Debug)]
pub enum AnyDecompressor {
    /// See [`Scheme::None`].
    None(NoneDecompressor),
    /// See [`Scheme::Taroc`].
    Taroc(TarocDecompressor),
}

impl AnyCompressor {
    /// A fresh compressor of `scheme`.
    pub fn new(scheme: Scheme, config: &SchemeConfig) -> AnyCompressor {
        match scheme {
            Scheme::None => AnyCompressor::None(NoneCompressor),
            Scheme::Taroc => {
                AnyCompressor::Taroc(Box::new(TarocCompressor::new(config.taroc.clone())))
            }
        }
    }
}

impl AnyDecompressor {
    /// A fresh decompressor of `scheme`.
    pub fn new(scheme: Scheme, config: &SchemeConfig) -> AnyDecompressor {
        match scheme {
            Scheme::None => AnyDecompressor::None(NoneDecompressor),
            Scheme::Taroc => AnyDecompressor::Taroc(TarocDecompressor::new(config.taroc.clone())),
        }
    }
}

impl Compressor for AnyCompressor {
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        match self {
            AnyCompressor::None(c) => c.compress(packet, out),
            AnyCompressor::Taroc(c) => c.compress(packet, out),
        }
    }
}

impl Decompressor for AnyDecompressor {
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        match self {
            AnyDecompressor::None(d) => d.decompress(kind, frame, out),
            AnyDecompressor::Taroc(d) => d.decompress(kind, frame, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_kind_bytes_round_trip() {
        for kind in FrameKind::ALL {
            assert_eq!(FrameKind::from_byte(kind.to_byte()), Some(kind));
        }
        assert_eq!(FrameKind::from_byte(200), None);
    }

    #[test]
    fn schemes_parse_by_name() {
        for scheme in Scheme::ALL {
            assert_eq!(scheme.name().parse::<Scheme>(), Ok(scheme));
        }
        assert!("vjx".parse::<Scheme>().is_err());
    }
}
