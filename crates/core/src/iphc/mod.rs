//! IP Header Compression (RFC 2507), with the *twice* algorithm and header requests of its
//! section 10 and of Degermark et al., "Low-loss TCP/IP header compression for wireless
//! networks".
//!
//! What is compressed is the *compressible chain of subheaders* (RFC 2507 section 7, see
//! [`chain`]): IPv4 headers without options that are not fragments, IPv6 base headers and their
//! Hop-by-Hop, Routing, Destination Options, Fragment and Authentication headers, the SPI of ESP,
//! and one TCP or UDP header, nested in any order IP allows (IPv4 or IPv6 inside IPv4 or IPv6),
//! up to [`IphcConfig::max_header`] octets. A chain that ends in a TCP header is a *TCP packet
//! stream*, compressed with deltas ([`tcp`]); every other chain is a *non-TCP packet stream*,
//! compressed with generations and compression slow-start ([`non_tcp`]). A packet that cannot be
//! compressed exactly goes as `TYPE_IP`, unchanged: an IPv4 first header with options or for a
//! fragment, length fields that do not match the packet's length (truncated captures, padding,
//! jumbograms), a wrong IPv4 header checksum (it is inferred), a TCP checksum or a non-zero UDP
//! checksum that does not verify (the decompressor verifies them), a packet that does not parse
//! as IP down to its upper-layer header (an IPv6 extension header past the chain that runs past
//! the packet's end: [`chain::well_formed`]). The decompressor refuses a full header of such a
//! packet, and a rebuilt packet that is not well formed.
//!
//! Formats: [`FrameKind::FullHeader`](crate::codec::FrameKind::FullHeader) is the packet itself
//! with the CID (and for non-TCP the generation) in its length fields (RFC 2507 section 5.3);
//! `COMPRESSED_TCP`, `COMPRESSED_TCP_NODELTA` and `COMPRESSED_NON_TCP` are those of section 6,
//! starting at their first octet (the link carries the kind, as RFC 2509's PPP protocol numbers
//! do); `CONTEXT_STATE` is the TCP header request of section 10.2 ([`feedback`]).
//!
//! # Readings of the RFC where it is open
//!
//! - **CID allocation.** A packet stream keeps its CID while it lasts; a new stream takes the
//!   lowest CID never used yet, then the least recently used one (LRU). TCP and non-TCP have
//!   separate CID spaces (section 5.1). Non-TCP CIDs below 256 use the 8-bit format, larger ones
//!   the 16-bit format (section 6 c, d); a chain with a single length field cannot carry a
//!   16-bit CID in its full header (section 5.3), so such streams only get CIDs below 256.
//! - **Grouping** (section 4.1, optional): a stream is identified by the kinds of its
//!   subheaders, the addresses of every IP header, the ports, the SPIs and, for non-TCP, the
//!   first next-header value past the chain. Every other NOCHANGE field (TTL, traffic class, flow
//!   label, …) belongs to the context: a change sends a full header.
//! - **TCP formats** (section 7.12, [`tcp`]): the change-mask octet is RFC 1144's, with R and O
//!   in the bits RFC 1144 leaves free, *including RFC 1144's two special encodings* (S W U: the
//!   sequence number advanced by the previous segment's payload; S A W U: both sequence and
//!   acknowledgment numbers did), since section 6 a) gives the flags "the same meaning as in
//!   RFC 1144". The R-octet's six Reserved bits are today's three reserved bits, AE, CWR and
//!   ECE; its two low bits are the ECN field of the IP header closest to the TCP header (for
//!   IPv6 with extension headers in between, the IPv6 header). The I flag (and the IPv4
//!   Identification delta) exists only when an IPv4 header immediately precedes the TCP header;
//!   any other IPv4 Identification is a RANDOM field.
//! - **When the compressor sends what** ([`compressor`]): a FULL_HEADER for a new stream, a SYN,
//!   a header request, a change of the TCP header length, and a *retransmission* (a segment
//!   carrying data or FIN that starts below the highest sequence number sent, section 3.2).
//!   COMPRESSED_TCP_NODELTA, as section 7.12.2 allows, for the other changes a compressed header
//!   cannot carry: FIN, RST or no ACK, a sequence or acknowledgment change outside 0..=65535, an
//!   urgent pointer change without URG, and a change mask that collides with a special
//!   encoding. Two rules go beyond the RFC's text, because the TCP checksum does not cover the
//!   IP header: a full header that changes an IP-level NOCHANGE field or the ECN field moves the
//!   stream to another CID (section 8 lets the compressor change CIDs at will), so that losing
//!   it leaves the decompressor without a context instead of with a wrong one; and the
//!   compressor keeps a *shadow* of the decompressor (its context after each of the last
//!   [`HAZARD_DEPTH`] packets of the CID, by the decompressor's own code) and sends a header
//!   whole (NODELTA, or a full header) when a decompressor that lost up to that many packets
//!   before it would rebuild it into a packet that verifies but is not the original. The
//!   checksum is a one's-complement sum, so a loss can hide: a lost duplicate ACK changes only
//!   the IPv4 Identification, a lost retransmission that moves the sequence number back by `x`
//!   and the acknowledgment number forward by `x` changes no sum. A stream taking a CID inherits
//!   the shadow of the CID's last stream, whose context the decompressor may still hold.
//! - **Twice** (section 10.1, [`IphcConfig::twice`]): when the rebuilt segment fails its
//!   checksum, the decompressor assumes lost packets and tries guesses, the first that verifies
//!   being delivered and taken as the context. Guesses are tried only on *pure* streams
//!   ([`purity`]): a data stream (this segment carries data and the acknowledgment number stood
//!   still for the last [`PURE_STREAM_PACKETS`] data segments) or an ACK stream (no data, the
//!   sequence number stood still for as many packets), since a guess that puts too little on one
//!   number and as much too much on the other verifies. On a data stream: twice (the current
//!   deltas once more), when TCP's sequence space allows it (the lost segment starts where the
//!   context's ended, so this delta must equal the context's payload length, or come from a
//!   special encoding); with [`IphcConfig::twice_segment_multiples`], `m` lost contiguous
//!   segments for `m` in 1..=[`TWICE_MAX_MULTIPLE`], full-sized (the largest payload seen) but
//!   for the last, whose length is this packet's delta. On an ACK stream: twice, and with the
//!   extension one lost ACK of `k` segments (the smallest of the last four ACK deltas) for `k`
//!   in 1..=[`TWICE_MAX_MULTIPLE`], the paper's multiples of the segment size. If none verifies,
//!   the context is *damaged*: every COMPRESSED_TCP for it is dropped (`ChecksumMismatch`)
//!   without further guesses until a FULL_HEADER repairs it. A damaged context is not repaired
//!   by NODELTA either (a deviation from section 7.12.2): NODELTA takes the IP-level fields from
//!   the context, which may be what is wrong.
//! - **The IPv4 Identification after a loss.** No checksum covers it, so a guess must *know*
//!   it. Guesses are tried on IPv6, on an IPv4 Identification that stays constant, and on one
//!   that increases by one per packet when the guess fixes the number of lost packets: the
//!   data-stream guesses (the segments assumed lost) and twice on an ACK stream (one lost ACK),
//!   not the ACK multiples (how many ACKs a stretch of k segments took is unknown). Where a
//!   loss of several packets would make such a guess verify with a wrong Identification, the
//!   compressor's shadow sees it and sends the header whole. Streams whose Identification jumps
//!   irregularly get no guesses: they wait for a FULL_HEADER (header requests bring one after a
//!   round trip).
//! - **Header requests** (section 10.2, [`IphcConfig::header_requests`]): a TCP CID is requested
//!   when its context becomes damaged, or when a compressed packet names a TCP CID without a
//!   context. To limit the rate (section 10.2 "SHOULD NOT transmit … every time"), a CID is
//!   requested again only after [`REQUEST_REPEAT_FIRST`] more of its packets were dropped, then
//!   after twice as many each time, up to [`REQUEST_REPEAT_MAX`], or on the first drop once
//!   [`REQUEST_REPEAT_TIME`] has passed since the last request (a decompressor told the time,
//!   `Decompressor::set_time`: a sender in timeout backoff sends a packet per timeout, so counting
//!   drops alone would leave its damaged ACK context unrepaired for minutes); a lost request is
//!   thus repeated, but never more than once per that many packets or that long. All pending CIDs leave in one
//!   CONTEXT_STATE. The compressor answers with a FULL_HEADER on the next packet of each CID.
//! - **Non-TCP** ([`non_tcp`]): section 3.3.3's pseudo-code as written (F_PERIOD doubles from 1
//!   at every slow-start refresh, capped at F_MAX_PERIOD; a refresh also after F_MAX_TIME).
//!   F_MAX_PERIOD or F_MAX_TIME of zero mean no limit (RFC 2509). The generation of a CID is never
//!   reset and advances by one per context change and per new stream on the CID (section 8). A
//!   generation value is not reused within [`MIN_WRAP`] of its last use: the compressor sends the
//!   packet as `TYPE_IP` instead. The D bit is never set (no hooked scheme); a frame with D set
//!   is refused as `Unsupported`.
//! - **What is verified** before delivery: for TCP the TCP checksum (every format); for UDP a
//!   non-zero checksum; for every full header the IPv4 header checksums too (the full header
//!   keeps the original checksum, which verifies once the length fields are restored).
//!
//! # Residual cases (a FIFO link that drops damaged frames, as RFC 2507 assumes)
//!
//! - TCP: a decompressor holding a context older than the compressor's shadow — more than
//!   [`HAZARD_DEPTH`] consecutive packets of one CID lost — may rebuild a packet that verifies
//!   but differs in a field no checksum covers (the IPv4 Identification, after a loss that
//!   changed only it), or, by a one's-complement coincidence, in a covered one. A guess on a
//!   wrong premise (the segment size learnt on a path that lost packets differs from the
//!   compressor's view) is a second-order case of the same kind. A lost ACK that moves the
//!   acknowledgment number by `x` and the window by `-x` (a receiver whose window shrinks by what
//!   it acknowledges, without window scaling) hides from the checksum too; the shadow covers it
//!   as well, within its depth.
//! - Non-TCP: only the generation protects the context, so a decompressor that misses every full
//!   header of 64 successive generations of one CID (an outage of at least MIN_WRAP, sections
//!   3.3 and 9 a) could accept a compressed header against a stale context of the same
//!   generation; the decompressor has no clock to apply section 9 a's rule. Likewise the
//!   compressor does not wait MIN_WRAP after booting: a fresh compressor is assumed to face a
//!   fresh decompressor.
//! - A link that reorders or duplicates frames is outside RFC 2507's assumptions (section 11 is
//!   not implemented): a duplicated header whose deltas change nothing the checksum covers is
//!   delivered with a wrong IPv4 Identification.
//!
//! # Not implemented
//!
//! The packet sequence numbers for reordering links (section 11, EXPECT_REORDERING is "no"; the
//! packet-number octets of TCP full headers are sent as zero and ignored on receipt), the D-bit
//! hook of section 12, IPv4 headers with options or for fragments (section 7.13 b) and the
//! Minimal Encapsulation header (7.14), which end the chain before them (or make the packet
//! `TYPE_IP` when first).

use core::time::Duration;

pub mod chain;
mod cid;
pub mod compressor;
pub mod decompressor;
pub mod feedback;
pub mod full_header;
pub mod non_tcp;
pub mod purity;
pub mod tcp;
mod tcp_context;
#[cfg(test)]
mod tests;

pub use compressor::IphcCompressor;
pub use decompressor::IphcDecompressor;

/// MIN_WRAP of RFC 2507 section 14: the shortest time before a generation value may be reused.
pub const MIN_WRAP: Duration = Duration::from_secs(3);

/// The largest multiple of the segment size the twice extension tries (the paper's "small
/// multiples").
pub const TWICE_MAX_MULTIPLE: u32 = 4;

/// Packets in a row with the acknowledgment number standing still (a *data stream*) or without
/// data and with the sequence number standing still (an *ACK stream*) before the decompressor
/// counts a TCP stream as pure and tries guesses on it.
pub const PURE_STREAM_PACKETS: u32 = 3;

/// How many consecutive lost packets of a TCP stream the compressor protects against: it sends a
/// COMPRESSED_TCP header only if a decompressor that lost up to this many packets before it
/// would deliver it exactly or refuse it ([`compressor`]).
pub const HAZARD_DEPTH: usize = 8;

/// Dropped packets of a damaged TCP context after which its header request is repeated the first
/// time.
pub const REQUEST_REPEAT_FIRST: u32 = 16;

/// The longest interval, in dropped packets of one damaged TCP context, between two header
/// requests for it.
pub const REQUEST_REPEAT_MAX: u32 = 1024;

/// Time after which a header request of a still damaged TCP context is repeated on its next
/// dropped packet, however few were dropped (when the decompressor is told the time): a TCP
/// sender in timeout backoff sends too few packets for the drop count to get there.
pub const REQUEST_REPEAT_TIME: core::time::Duration = core::time::Duration::from_millis(500);

/// IPHC's settings: the parameters of RFC 2507 section 14 (their defaults are the RFC's) and
/// which of the optional TCP repair mechanisms of section 10 are used. Compressor and
/// decompressor must use the same values of the negotiated parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IphcConfig {
    /// Whether the decompressor asks for a full header (CONTEXT_STATE) when it cannot repair a
    /// TCP context (section 10.2). Default true.
    pub header_requests: bool,
    /// Whether the decompressor tries the twice algorithm on a TCP checksum failure
    /// (section 10.1). Default true.
    pub twice: bool,
    /// Whether twice also tries multiples of the segment size (the paper's extension). Default
    /// true; only used with [`IphcConfig::twice`].
    pub twice_segment_multiples: bool,
    /// Whether the compressor sends a full header for a segment without data that repeats its
    /// context's sequence, acknowledgment and window (a duplicate ACK: RFC 1144's rule for a
    /// "retransmitted ack", which repairs an ACK stream when nothing else does). Default false;
    /// `iphc-plain` and `iphc-twice` set it.
    pub full_on_repeat: bool,
    /// TCP_SPACE: the largest TCP CID (3..=255 in RFC 2507, 0..=255 in RFC 2509). Default 15.
    pub tcp_space: u8,
    /// NON_TCP_SPACE: the largest non-TCP CID (3..=65535 in RFC 2507, 0..=65535 in RFC 2509).
    /// Default 15. CIDs above 255 use the 16-bit format.
    pub non_tcp_space: u16,
    /// F_MAX_PERIOD: most COMPRESSED_NON_TCP headers between two full headers of a stream
    /// (1..=65535; 0 means no limit, as in RFC 2509). Default 256.
    pub f_max_period: u16,
    /// F_MAX_TIME: longest time between two full headers of a non-TCP stream (1..=255 s; zero
    /// means no limit, as in RFC 2509). Default 5 s. Read against the time given to
    /// [`crate::codec::Compressor::set_time`].
    pub f_max_time: Duration,
    /// MAX_HEADER: the longest chain of subheaders compressed, in octets (60..=65535).
    /// Default 168.
    pub max_header: u16,
    /// EXPECT_REORDERING: the link may reorder frames (section 11). The compressor then sends
    /// COMPRESSED_TCP_NODELTA where it would send COMPRESSED_TCP (section 11.2's first method):
    /// a delta applied out of order rebuilds a wrong header, and a wrong IPv4 Identification
    /// passes the TCP checksum. Default false.
    pub expect_reordering: bool,
}

impl Default for IphcConfig {
    fn default() -> IphcConfig {
        IphcConfig {
            header_requests: true,
            twice: true,
            twice_segment_multiples: true,
            full_on_repeat: false,
            tcp_space: 15,
            non_tcp_space: 15,
            f_max_period: 256,
            f_max_time: Duration::from_secs(5),
            max_header: 168,
            expect_reordering: false,
        }
    }
}

impl IphcConfig {
    /// MAX_HEADER in octets, raised to the RFC's minimum of 60 if set lower.
    pub(crate) fn max_header_len(&self) -> usize {
        usize::from(self.max_header.max(60))
    }
}
