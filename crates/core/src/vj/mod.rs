//! Van Jacobson TCP/IP header compression (RFC 1144), IPv4 only.
//!
//! Every packet becomes one of three frames (RFC 1144 section 3.2.1):
//! - `TYPE_IP` ([`FrameKind::Ip`]): the packet unchanged. Non-TCP packets, IP fragments, and TCP
//!   segments with SYN, FIN or RST set or ACK clear (section 3.2.3), and anything that is not a
//!   whole IPv4/TCP packet;
//! - `UNCOMPRESSED_TCP` ([`FrameKind::UncompressedTcp`]): the packet with its connection number
//!   in the IP protocol field (byte 9; the IP header checksum is left as it was). Sent for a new
//!   connection, when a field VJ does not carry changed (IP version, header length, TOS, DF,
//!   TTL, TCP data offset, IP or TCP options), when a delta does not fit in 16 bits or is
//!   negative, when the changes look like a special case, and for apparent retransmissions;
//! - `COMPRESSED_TCP` ([`FrameKind::CompressedTcp`]): the compressed header of [`format`](mod@format)
//!   followed by the TCP data.
//!
//! [`VjCompressor`] follows RFC 1144's decision procedure (section 3.2.3 and `sl_compress_tcp` of
//! Appendix A.2) step by step, including its least-recently-used reuse of connection slots and
//! the C bit; [`VjDecompressor`] follows section 3.2.4 and `sl_uncompress_tcp` of Appendix A.3,
//! including the `toss` flag: after an error (a frame it refuses, or a link error reported with
//! [`Decompressor::link_error`](crate::codec::Decompressor::link_error)) it discards `COMPRESSED_TCP` frames until one with an
//! explicit connection number or an `UNCOMPRESSED_TCP` frame arrives (section 4.1).
//!
//! As RFC 1144 specifies, the decompressor does not verify the TCP checksum: after a lost frame
//! it can deliver a packet with wrong sequence or acknowledgment numbers, which the receiving
//! TCP's checksum rejects (section 4.1). That is the behaviour of the VJ baseline the
//! evaluation measures. It never panics, whatever bytes arrive, and it recomputes the IP header
//! checksum of every packet it rebuilds from a `COMPRESSED_TCP` frame.
//!
//! # Where this differs from the code of RFC 1144
//!
//! The wire format and every decision on a packet the RFC's code handles correctly are the
//! RFC's: on the reference captures our frames equal, byte for byte, those of Linux `slhc` and
//! of ppp's `vjcompress` (`tests/vj_reference.rs`). The compressor departs from the RFC's code
//! only where that code would make the decompressor deliver a packet different from the
//! original on a clean link; there it sends `TYPE_IP`, `UNCOMPRESSED_TCP` or the general
//! encoding instead, all of which any RFC 1144 decompressor decodes:
//! 1. a packet whose buffer is not exactly its IP Total Length long (cut by a snaplen, or with
//!    link padding) is sent as `TYPE_IP`: the decompressor takes the IP length from the frame
//!    length, so a `COMPRESSED_TCP` frame could not give it back;
//! 2. the TCP flag bits of the reserved field that RFC 1144 (1990) does not know, and that later
//!    became the AE, CWR and ECE flags (RFC 3168, RFC 9768), are treated as fields that must not
//!    change: if they differ from the saved header the packet goes `UNCOMPRESSED_TCP`. The RFC's
//!    code compares only the data offset and would silently keep the old bits;
//! 3. a packet whose IP header checksum does not verify goes `TYPE_IP`: the decompressor
//!    recomputes the checksum of a `COMPRESSED_TCP` packet, and checks that of an
//!    `UNCOMPRESSED_TCP` one (below);
//! 4. the special cases `SPECIAL_I` and `SPECIAL_D` are not used when the saved header has URG
//!    set: their decoding (RFC 1144 section 3.2.4, and Appendix A.3) leaves the URG flag of the
//!    saved header as it is, while the packet has URG clear. The general encoding (U clear) makes
//!    the decompressor clear it.
//!
//! None of these cases occurs in the reference captures. The decompressor departs from the RFC's
//! code where that code reads out of bounds or uses a slot that was never filled: it refuses
//! such frames (and sets `toss`), and a refused frame leaves every slot as it was. Like Linux
//! `slhc` (and as section 3.1 suggests: "the receiver can check the header checksum when the
//! header is actually sent"), it refuses an `UNCOMPRESSED_TCP` frame whose IP header checksum,
//! with TCP in the protocol field, does not verify; Appendix A.3 does not check it. A
//! `COMPRESSED_TCP` frame without a connection number before any frame named one is refused
//! (Appendix A.4 would index slot 255; `slhc` starts with `toss` set for that reason).
//! [`VjConfig::slots`] is clamped to 1..=256.
//!
//! # Linux `slhc` and the code of RFC 1144
//!
//! On the reference captures `slhc` (and ppp's `vjcompress`) produce exactly the frames of the
//! RFC's procedure. Reading `slhc` shows where it departs from Appendix A on other traffic:
//! - of the IP flags and fragment offset word it compares only DF, where Appendix A.2 compares
//!   the whole word; since fragments go `TYPE_IP`, that leaves the reserved flag bit (0x8000),
//!   whose change `slhc` would lose and the RFC (and we) send `UNCOMPRESSED_TCP`; it does not
//!   compare the protocol (always TCP there);
//! - it encodes every number with the zero test of `ENCODEZ`, where Appendix A.2 uses `ENCODE`
//!   for the window, ack and sequence changes; those are never zero there, so the bytes agree;
//! - its decompressor checks the IP header checksum of `UNCOMPRESSED_TCP` frames, refuses a
//!   connection number whose slot was never filled, starts with `toss` set, and adds the
//!   `SPECIAL_I` length as a 16-bit signed number (wrong above 32767 bytes of data; an MTU
//!   that large does not occur on its links).
//!
//! Both take the IP ID change before truncating it to 16 bits, so a wrap from 65535 to 0 is sent
//! with the I bit as a change of 1; so do we.

pub mod compressor;
pub mod decompressor;
pub mod format;
mod header;
#[cfg(test)]
mod tests;

pub use compressor::VjCompressor;
pub use decompressor::VjDecompressor;

#[cfg(doc)]
use crate::codec::FrameKind;

/// VJ's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VjConfig {
    /// Connection slots (RFC 1144 uses 16; at most 256). The connection numbers are
    /// `0..slots`; both ends of a link must use the same count (RFC 1144 section 5.1). Values
    /// outside 1..=256 are clamped.
    pub slots: usize,
    /// Whether the compressor omits the connection number when it repeats (the C bit clear).
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

impl VjConfig {
    /// The number of connection slots in use: [`VjConfig::slots`] clamped to 1..=256.
    pub fn slot_count(&self) -> usize {
        self.slots.clamp(1, 256)
    }
}
