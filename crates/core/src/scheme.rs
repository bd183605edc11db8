//! The schemes, selectable by name, and one compressor and decompressor type over all of them
//! (static dispatch). This module sits above the schemes: they import [`crate::codec`]'s
//! traits, and this module imports them.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;
use core::time::Duration;

use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::iphc::{IphcCompressor, IphcConfig, IphcDecompressor};
use crate::none::{NoneCompressor, NoneDecompressor};
use crate::plus::{PlusCompressor, PlusConfig, PlusDecompressor};
use crate::taroc::{TarocCompressor, TarocConfig, TarocDecompressor};
use crate::vj::{VjCompressor, VjConfig, VjDecompressor};

/// A scheme, selectable by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// No compression: every packet passes as `TYPE_IP`.
    None,
    /// Van Jacobson's TCP/IP header compression (RFC 1144).
    Vj,
    /// IP Header Compression (RFC 2507): TCP with the twice algorithm and header requests,
    /// non-TCP with generations.
    Iphc,
    /// TAROC as drafted (draft-ietf-rohc-tcp-taroc-00).
    Taroc,
    /// `taroc-plus`, the redesigned TAROC profile ([`crate::plus`]), with the settings of
    /// [`SchemeConfig::plus`].
    Plus,
}

impl Scheme {
    /// Every scheme, in the order reports list them.
    pub const ALL: [Scheme; 5] = [
        Scheme::None,
        Scheme::Vj,
        Scheme::Iphc,
        Scheme::Taroc,
        Scheme::Plus,
    ];

    /// The scheme's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::None => "none",
            Scheme::Vj => "vj",
            Scheme::Iphc => "iphc",
            Scheme::Taroc => "taroc",
            Scheme::Plus => "taroc-plus",
        }
    }

    /// Whether the scheme's decompressor delivers packets late, after it refused their frames
    /// ([`Decompressor::take_late`]).
    pub fn delivers_late(self) -> bool {
        self == Scheme::Plus
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
        f.write_str("unknown scheme (expected one of: none, vj, iphc, taroc, taroc-plus)")
    }
}

impl core::error::Error for UnknownScheme {}

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
    /// VJ's settings.
    pub vj: VjConfig,
    /// IPHC's settings.
    pub iphc: IphcConfig,
    /// TAROC's settings.
    pub taroc: TarocConfig,
    /// `taroc-plus`'s settings.
    pub plus: PlusConfig,
}

/// A compressor of any scheme (static dispatch).
#[derive(Debug)]
pub enum AnyCompressor {
    /// See [`Scheme::None`].
    None(NoneCompressor),
    /// See [`Scheme::Vj`].
    Vj(Box<VjCompressor>),
    /// See [`Scheme::Iphc`].
    Iphc(Box<IphcCompressor>),
    /// See [`Scheme::Taroc`] (boxed: its context table is large, `none` is empty).
    Taroc(Box<TarocCompressor>),
    /// See [`Scheme::Plus`].
    Plus(Box<PlusCompressor>),
}

/// A decompressor of any scheme (static dispatch). `Clone`, so an analysis can try a loss on a
/// copy (see `taroc twice`).
#[derive(Debug, Clone)]
pub enum AnyDecompressor {
    /// See [`Scheme::None`].
    None(NoneDecompressor),
    /// See [`Scheme::Vj`].
    Vj(Box<VjDecompressor>),
    /// See [`Scheme::Iphc`].
    Iphc(Box<IphcDecompressor>),
    /// See [`Scheme::Taroc`].
    Taroc(TarocDecompressor),
    /// See [`Scheme::Plus`] (boxed: its context table is large, `none` is empty).
    Plus(Box<PlusDecompressor>),
}

impl AnyCompressor {
    /// A fresh compressor of `scheme`.
    pub fn new(scheme: Scheme, config: &SchemeConfig) -> AnyCompressor {
        match scheme {
            Scheme::None => AnyCompressor::None(NoneCompressor),
            Scheme::Vj => AnyCompressor::Vj(Box::new(VjCompressor::new(config.vj.clone()))),
            Scheme::Iphc => AnyCompressor::Iphc(Box::new(IphcCompressor::new(config.iphc.clone()))),
            Scheme::Taroc => {
                AnyCompressor::Taroc(Box::new(TarocCompressor::new(config.taroc.clone())))
            }
            Scheme::Plus => AnyCompressor::Plus(Box::new(PlusCompressor::new(config.plus.clone()))),
        }
    }
}

impl AnyDecompressor {
    /// A fresh decompressor of `scheme`.
    pub fn new(scheme: Scheme, config: &SchemeConfig) -> AnyDecompressor {
        match scheme {
            Scheme::None => AnyDecompressor::None(NoneDecompressor),
            Scheme::Vj => AnyDecompressor::Vj(Box::new(VjDecompressor::new(config.vj.clone()))),
            Scheme::Iphc => {
                AnyDecompressor::Iphc(Box::new(IphcDecompressor::new(config.iphc.clone())))
            }
            Scheme::Taroc => AnyDecompressor::Taroc(TarocDecompressor::new(config.taroc.clone())),
            Scheme::Plus => {
                AnyDecompressor::Plus(Box::new(PlusDecompressor::new(config.plus.clone())))
            }
        }
    }
}

impl Compressor for AnyCompressor {
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        match self {
            AnyCompressor::None(c) => c.compress(packet, out),
            AnyCompressor::Vj(c) => c.compress(packet, out),
            AnyCompressor::Iphc(c) => c.compress(packet, out),
            AnyCompressor::Taroc(c) => c.compress(packet, out),
            AnyCompressor::Plus(c) => c.compress(packet, out),
        }
    }

    fn set_time(&mut self, now: Duration) {
        match self {
            AnyCompressor::None(c) => c.set_time(now),
            AnyCompressor::Vj(c) => c.set_time(now),
            AnyCompressor::Iphc(c) => c.set_time(now),
            AnyCompressor::Taroc(c) => c.set_time(now),
            AnyCompressor::Plus(c) => c.set_time(now),
        }
    }

    fn handle_feedback(&mut self, frame: &[u8]) {
        match self {
            AnyCompressor::None(c) => c.handle_feedback(frame),
            AnyCompressor::Vj(c) => c.handle_feedback(frame),
            AnyCompressor::Iphc(c) => c.handle_feedback(frame),
            AnyCompressor::Taroc(c) => c.handle_feedback(frame),
            AnyCompressor::Plus(c) => c.handle_feedback(frame),
        }
    }

    fn take_sibling_note(&mut self, out: &mut Vec<u8>) -> bool {
        match self {
            AnyCompressor::Plus(c) => c.take_sibling_note(out),
            _ => false,
        }
    }

    fn sibling_note(&mut self, note: &[u8]) {
        if let AnyCompressor::Plus(c) = self {
            c.sibling_note(note);
        }
    }

    fn heard_far_end(&mut self) {
        if let AnyCompressor::Plus(c) = self {
            c.heard_far_end();
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
            AnyDecompressor::Vj(d) => d.decompress(kind, frame, out),
            AnyDecompressor::Iphc(d) => d.decompress(kind, frame, out),
            AnyDecompressor::Taroc(d) => d.decompress(kind, frame, out),
            AnyDecompressor::Plus(d) => d.decompress(kind, frame, out),
        }
    }

    fn link_error(&mut self) {
        match self {
            AnyDecompressor::None(d) => d.link_error(),
            AnyDecompressor::Vj(d) => d.link_error(),
            AnyDecompressor::Iphc(d) => d.link_error(),
            AnyDecompressor::Taroc(d) => d.link_error(),
            AnyDecompressor::Plus(d) => d.link_error(),
        }
    }

    fn set_time(&mut self, now: Duration) {
        match self {
            AnyDecompressor::None(d) => d.set_time(now),
            AnyDecompressor::Vj(d) => d.set_time(now),
            AnyDecompressor::Iphc(d) => d.set_time(now),
            AnyDecompressor::Taroc(d) => d.set_time(now),
            AnyDecompressor::Plus(d) => d.set_time(now),
        }
    }

    fn take_late(&mut self, out: &mut Vec<u8>) -> Option<DropReason> {
        match self {
            AnyDecompressor::Plus(d) => d.take_late(out),
            _ => None,
        }
    }

    fn take_feedback(&mut self, out: &mut Vec<u8>) -> bool {
        match self {
            AnyDecompressor::None(d) => d.take_feedback(out),
            AnyDecompressor::Vj(d) => d.take_feedback(out),
            AnyDecompressor::Iphc(d) => d.take_feedback(out),
            AnyDecompressor::Taroc(d) => d.take_feedback(out),
            AnyDecompressor::Plus(d) => d.take_feedback(out),
        }
    }

    fn take_sibling_note(&mut self, out: &mut Vec<u8>) -> bool {
        match self {
            AnyDecompressor::Plus(d) => d.take_sibling_note(out),
            _ => false,
        }
    }

    fn sibling_note(&mut self, note: &[u8]) {
        if let AnyDecompressor::Plus(d) = self {
            d.sibling_note(note);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_parse_by_name() {
        for scheme in Scheme::ALL {
            assert_eq!(scheme.name().parse::<Scheme>(), Ok(scheme));
        }
        assert!("vjx".parse::<Scheme>().is_err());
    }
}
