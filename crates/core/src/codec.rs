//! The interface every header-compression scheme implements (the schemes import it; the enum
//! over them is [`crate::scheme`], above them).
//!
//! A *frame* is what crosses the link: a [`FrameKind`] (which the link layer carries, e.g. as a
//! PPP protocol number; our byte-oriented links spend one byte on it, see [`FrameKind::to_byte`])
//! and the frame's bytes. A compressor turns every IP packet into exactly one frame; a
//! decompressor turns a frame back into the original packet, byte for byte, or refuses it with a
//! [`DropReason`]. It never delivers a packet that differs from the original it cannot verify.

use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

/// The kind of a link frame. One number space for all schemes, so one link framing serves them all.
///
/// Bytes 0 to 6 are the named kinds of the specifications; bytes [`FrameKind::PROFILE_FIRST`]
/// to [`FrameKind::PROFILE_LAST`] belong to a profile that folds its own packet type into the
/// kind byte ([`FrameKind::Profile`]; `taroc-plus`, see `docs/taroc-plus-format.md`). The top
/// bit stays free for link framings that use it (the gateway's authentication).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A regular IP packet, sent unchanged (RFC 1144 / RFC 2507 / TAROC `TYPE_IP`).
    Ip,
    /// `UNCOMPRESSED_TCP` of RFC 1144 (connection number in the IP protocol field) and of TAROC
    /// (context flags and CID in the IP length field).
    UncompressedTcp,
    /// `COMPRESSED_TCP` of RFC 1144, RFC 2507 and TAROC.
    CompressedTcp,
    /// RFC 2507 `FULL_HEADER`: the full header with the CID (and generation) in the length fields.
    FullHeader,
    /// RFC 2507 `COMPRESSED_TCP_NODELTA`: changing fields sent whole, not as deltas.
    CompressedTcpNoDelta,
    /// RFC 2507 `COMPRESSED_NON_TCP`: a compressed header of a non-TCP packet stream.
    CompressedNonTcp,
    /// RFC 2507 `CONTEXT_STATE`: feedback from a decompressor to the compressor at the other end
    /// of the link (header requests). Travels on the reverse direction.
    ContextState,
    /// A profile's own packet type: the kind byte (in
    /// [`FrameKind::PROFILE_FIRST`]`..=`[`FrameKind::PROFILE_LAST`]) is part of the profile's
    /// header. Its [`FrameKind::family`] says which named kind it stands in for.
    Profile(u8),
}

impl FrameKind {
    /// Every frame kind, in byte order.
    pub const ALL: [FrameKind; 7] = [
        FrameKind::Ip,
        FrameKind::UncompressedTcp,
        FrameKind::CompressedTcp,
        FrameKind::FullHeader,
        FrameKind::CompressedTcpNoDelta,
        FrameKind::CompressedNonTcp,
        FrameKind::ContextState,
    ];

    /// The first byte of the profile range ([`FrameKind::Profile`]).
    pub const PROFILE_FIRST: u8 = 0x08;
    /// The last byte of the profile range.
    pub const PROFILE_LAST: u8 = 0x7F;
    /// Profile bytes from here on stand in for [`FrameKind::CompressedNonTcp`]
    /// (below: [`FrameKind::UncompressedTcp`], full headers).
    pub const PROFILE_NON_TCP: u8 = 0x10;
    /// The one profile byte among the [`FrameKind::PROFILE_NON_TCP`] ones that stands in for
    /// [`FrameKind::UncompressedTcp`] (`taroc-plus`'s packed IR, in a byte its CO-N frames never
    /// use).
    pub const PROFILE_NON_TCP_FULL: u8 = 0x16;
    /// Profile bytes from here on stand in for [`FrameKind::CompressedTcp`].
    pub const PROFILE_TCP: u8 = 0x40;

    /// The one byte our links spend on the frame kind.
    pub fn to_byte(self) -> u8 {
        match self {
            FrameKind::Ip => 0,
            FrameKind::UncompressedTcp => 1,
            FrameKind::CompressedTcp => 2,
            FrameKind::FullHeader => 3,
            FrameKind::CompressedTcpNoDelta => 4,
            FrameKind::CompressedNonTcp => 5,
            FrameKind::ContextState => 6,
            FrameKind::Profile(byte) => byte,
        }
    }

    /// The frame kind carried by `byte`, if any.
    pub fn from_byte(byte: u8) -> Option<FrameKind> {
        match byte {
            FrameKind::PROFILE_FIRST..=FrameKind::PROFILE_LAST => Some(FrameKind::Profile(byte)),
            _ => FrameKind::ALL.get(usize::from(byte)).copied(),
        }
    }

    /// The named kind this kind stands in for (itself, for a named kind): what counters that
    /// keep one slot per named kind count it as.
    pub fn family(self) -> FrameKind {
        match self {
            // The profile's own kinds: `taroc-plus`'s, as its format says.
            FrameKind::Profile(byte) => crate::plus::format::family(byte),
            named => named,
        }
    }

    /// The name of this kind as the specifications write it.
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Ip => "TYPE_IP",
            FrameKind::UncompressedTcp => "UNCOMPRESSED_TCP",
            FrameKind::CompressedTcp => "COMPRESSED_TCP",
            FrameKind::FullHeader => "FULL_HEADER",
            FrameKind::CompressedTcpNoDelta => "COMPRESSED_TCP_NODELTA",
            FrameKind::CompressedNonTcp => "COMPRESSED_NON_TCP",
            FrameKind::ContextState => "CONTEXT_STATE",
            FrameKind::Profile(_) => match self.family() {
                FrameKind::CompressedTcp => "PROFILE_TCP",
                FrameKind::CompressedNonTcp => "PROFILE_NON_TCP",
                _ => "PROFILE_FULL",
            },
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
    /// The rebuilt packet verified on its own checksum alone where the context may have lost
    /// its reference: it is held, and delivered late ([`Decompressor::take_late`]) only if the
    /// context's next frame verifies against it.
    Held,
}

impl DropReason {
    /// Every reason, for tables of counters.
    pub const ALL: [DropReason; 6] = [
        DropReason::Malformed,
        DropReason::UnknownKind,
        DropReason::NoContext,
        DropReason::ChecksumMismatch,
        DropReason::Unsupported,
        DropReason::Held,
    ];

    /// A short snake_case name, for reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Malformed => "malformed",
            DropReason::UnknownKind => "unknown_kind",
            DropReason::NoContext => "no_context",
            DropReason::ChecksumMismatch => "checksum_mismatch",
            DropReason::Unsupported => "unsupported",
            DropReason::Held => "held",
        }
    }

    /// Whether a drop for this reason, of a frame the link delivered intact, is a loss caused by
    /// the decompressor's context (the *context-damage loss* of MISSION.md). A held packet
    /// counts as one until it is delivered late.
    pub fn is_context_damage(self) -> bool {
        matches!(
            self,
            DropReason::NoContext | DropReason::ChecksumMismatch | DropReason::Held
        )
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl core::error::Error for DropReason {}

/// A header compressor for one direction of one link.
pub trait Compressor {
    /// Compresses one IP packet (starting with its IPv4 or IPv6 header) into `out`, which is
    /// cleared first, and returns the frame's kind. Never fails: a packet the scheme cannot
    /// compress is sent unchanged as [`FrameKind::Ip`].
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind;

    /// Tells the compressor the time since an arbitrary origin; it never goes back. Schemes with
    /// timers (IPHC's refresh of non-TCP contexts every few seconds) read it; others ignore it.
    fn set_time(&mut self, now: Duration) {
        let _ = now;
    }

    /// Hands the compressor a [`FrameKind::ContextState`] frame that the decompressor at the
    /// other end of the link sent back (e.g. RFC 2507 header requests). Schemes without feedback
    /// ignore it; malformed feedback is ignored too.
    fn handle_feedback(&mut self, frame: &[u8]) {
        let _ = frame;
    }

    /// Moves the next note for this compressor's *sibling* (the decompressor at the same end of
    /// the link, which receives the opposite direction) into `out` (cleared first) and returns
    /// true, or returns false if there is none. Notes never cross the link; pass them with
    /// [`pass_sibling_notes`]. Schemes that code nothing against the opposite direction never
    /// have any.
    fn take_sibling_note(&mut self, out: &mut Vec<u8>) -> bool {
        let _ = out;
        false
    }

    /// Hands the compressor a note from its sibling decompressor
    /// ([`Decompressor::take_sibling_note`]). Schemes without such notes ignore it.
    fn sibling_note(&mut self, note: &[u8]) {
        let _ = note;
    }

    /// A frame from the far end (a packet's frame, or feedback) arrived intact at this end: the
    /// opposite direction carries frames, so feedback for this compressor can travel. Schemes
    /// that do not depend on it ignore it.
    fn heard_far_end(&mut self) {}
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

    /// Tells the decompressor that the link received a damaged frame (a CRC error) in place of
    /// the next one, as a framer does. RFC 1144's decompressor then tosses compressed frames
    /// until an uncompressed one re-establishes the context; schemes that verify what they
    /// rebuild ignore it. A frame lost without a trace cannot be signalled.
    fn link_error(&mut self) {}

    /// Tells the decompressor the time since an arbitrary origin; it never goes back. Schemes with
    /// timers (IPHC repeating a header request that went unanswered) read it; others ignore it.
    fn set_time(&mut self, now: Duration) {
        let _ = now;
    }

    /// Moves a packet delivered late into `out` (cleared first) and returns the reason its
    /// frame was refused, or returns `None` if there is none: a packet refused as
    /// [`DropReason::Held`] that the frame just decompressed confirmed (it verified against the
    /// held packet as its reference), or one refused as [`DropReason::NoContext`] or
    /// [`DropReason::ChecksumMismatch`] whose frame was kept and decoded once the frame just
    /// decompressed was delivered in the same context. They come before that frame's packet in
    /// the original order, the oldest first. Call after every [`Decompressor::decompress`]
    /// until it returns `None`; a late packet not taken then is dropped. Schemes that hold
    /// nothing never have any.
    fn take_late(&mut self, out: &mut Vec<u8>) -> Option<DropReason> {
        let _ = out;
        None
    }

    /// Moves feedback for the compressor at the other end of the link into `out` (cleared
    /// first) and returns true, or returns false if there is none. The link carries it as a
    /// [`FrameKind::ContextState`] frame on the reverse direction. Call after every
    /// [`Decompressor::decompress`]; schemes without feedback never have any.
    fn take_feedback(&mut self, out: &mut Vec<u8>) -> bool {
        let _ = out;
        false
    }

    /// Moves the next note for this decompressor's *sibling* (the compressor at the same end of
    /// the link, which sends the opposite direction) into `out` (cleared first) and returns
    /// true, or returns false if there is none. See [`Compressor::take_sibling_note`].
    fn take_sibling_note(&mut self, out: &mut Vec<u8>) -> bool {
        let _ = out;
        false
    }

    /// Hands the decompressor a note from its sibling compressor
    /// ([`Compressor::take_sibling_note`]). Schemes without such notes ignore it.
    fn sibling_note(&mut self, note: &[u8]) {
        let _ = note;
    }
}

/// Passes every pending note between the two codecs at one end of a link (the compressor of
/// the direction the end sends, the decompressor of the direction it receives), both ways, with
/// `scratch` as the buffer. Call it after every compress and decompress call at that end, before
/// the next frame goes or arrives: a scheme may code a new flow against the opposite direction's
/// flow, which only the notes tell it of.
pub fn pass_sibling_notes<C, D>(compressor: &mut C, decompressor: &mut D, scratch: &mut Vec<u8>)
where
    C: Compressor + ?Sized,
    D: Decompressor + ?Sized,
{
    while compressor.take_sibling_note(scratch) {
        decompressor.sibling_note(scratch);
    }
    while decompressor.take_sibling_note(scratch) {
        compressor.sibling_note(scratch);
    }
}

/// Delivers a `TYPE_IP` frame: the packet itself, unchanged.
pub fn deliver_unchanged(frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
    out.clear();
    out.extend_from_slice(frame);
    Ok(())
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
        assert_eq!(FrameKind::from_byte(7), None);
        for byte in FrameKind::PROFILE_FIRST..=FrameKind::PROFILE_LAST {
            let kind = FrameKind::from_byte(byte).unwrap();
            assert_eq!(kind.to_byte(), byte);
            assert!(FrameKind::ALL.contains(&kind.family()));
        }
        // 0x16, `taroc-plus`'s packed IR among the CO-N bytes, is a full header.
        for (byte, family) in [
            (0x08, FrameKind::UncompressedTcp),
            (0x10, FrameKind::CompressedNonTcp),
            (0x16, FrameKind::UncompressedTcp),
            (0x17, FrameKind::CompressedNonTcp),
            (0x0F, FrameKind::UncompressedTcp),
            (0x20, FrameKind::CompressedNonTcp),
            (0x21, FrameKind::CompressedTcp),
            (0x40, FrameKind::CompressedTcp),
        ] {
            assert_eq!(FrameKind::Profile(byte).family(), family, "{byte:#04x}");
        }
    }
}
