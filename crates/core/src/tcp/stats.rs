//! What the TAROC profiles' statistics count: why each packet went the way it did, and which
//! part of the frames its header bytes went to. Each profile's statistics
//! ([`crate::taroc::TarocStats`], [`crate::plus::PlusStats`]) count frames per [`Why`] and bytes
//! per [`Part`].

/// Why a packet went the way it did.
///
/// The reasons name TAROC's frames; `taroc-plus` counts its CO frames as COMPRESSED_TCP and its
/// IR frames as UNCOMPRESSED_TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Sent as COMPRESSED_TCP.
    Compressed,
    /// Not a packet TAROC carries (non-TCP, fragment, SYN, RST, bad checksum, …): TYPE_IP.
    NotCompressible,
    /// UNCOMPRESSED_TCP: the context had no reference yet (new stream or cleared window).
    NoReference,
    /// UNCOMPRESSED_TCP: compression slow-start's turn in the IR state.
    SlowStart,
    /// UNCOMPRESSED_TCP: the packet fell behind the VSW in the CO state.
    BehindWindow,
    /// UNCOMPRESSED_TCP: retransmission of a segment sent as UNCOMPRESSED_TCP.
    Retransmission,
    /// UNCOMPRESSED_TCP: FIN, urgent data without URG, options the format cannot express.
    Unfit,
    /// UNCOMPRESSED_TCP: a field needs more W-LSB bits than the largest PT class carries.
    FieldTooFar,
    /// UNCOMPRESSED_TCP, a repair: the decompressor asked for the context
    /// ([`super::repair`]).
    Requested,
    /// UNCOMPRESSED_TCP, a repair: a retransmission or duplicate ACK after a silence of the
    /// stream (a TCP retransmission timeout).
    Timeout,
    /// UNCOMPRESSED_TCP, a repair: the same segment retransmitted a second time.
    RepeatedRetransmission,
    /// UNCOMPRESSED_TCP, a repair: the periodic refresh (packets or time since the last one).
    Refresh,
}

impl Why {
    /// Every reason, in report order.
    pub const ALL: [Why; 12] = [
        Why::Compressed,
        Why::NotCompressible,
        Why::NoReference,
        Why::SlowStart,
        Why::BehindWindow,
        Why::Retransmission,
        Why::Unfit,
        Why::FieldTooFar,
        Why::Requested,
        Why::Timeout,
        Why::RepeatedRetransmission,
        Why::Refresh,
    ];

    /// A snake_case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Why::Compressed => "compressed",
            Why::NotCompressible => "type_ip",
            Why::NoReference => "uncompressed_no_reference",
            Why::SlowStart => "uncompressed_slow_start",
            Why::BehindWindow => "uncompressed_behind_window",
            Why::Retransmission => "uncompressed_retransmission",
            Why::Unfit => "uncompressed_unfit",
            Why::FieldTooFar => "uncompressed_field_too_far",
            Why::Requested => "uncompressed_requested",
            Why::Timeout => "uncompressed_timeout",
            Why::RepeatedRetransmission => "uncompressed_repeated_retransmission",
            Why::Refresh => "uncompressed_refresh",
        }
    }
}

/// Parts of the TCP frames' header bytes on the link (each includes its share of nothing else;
/// together they add up to the header bytes of all UNCOMPRESSED_TCP and COMPRESSED_TCP frames).
///
/// The parts name TAROC's fields; `taroc-plus` counts a CO frame's octets before its bit field
/// as [`Part::Base`], its bit field as [`Part::Wasi`], its R-octet and urgent pointer as
/// [`Part::RandomFields`], and its IR frames as [`Part::FullHeader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// COMPRESSED_TCP: frame-kind byte, CID, flag octet, TCP checksum (5 bytes a packet).
    Base,
    /// COMPRESSED_TCP: RANDOM IP-ID, R-octet and urgent pointer.
    RandomFields,
    /// COMPRESSED_TCP: the WASI field.
    Wasi,
    /// COMPRESSED_TCP: options octet, TS value, TS echo, SACK blocks.
    Options,
    /// UNCOMPRESSED_TCP: frame-kind byte and the full IP and TCP headers.
    FullHeader,
}

impl Part {
    /// Every part, in report order.
    pub const ALL: [Part; 5] = [
        Part::Base,
        Part::RandomFields,
        Part::Wasi,
        Part::Options,
        Part::FullHeader,
    ];

    /// A snake_case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Part::Base => "base",
            Part::RandomFields => "random_fields",
            Part::Wasi => "wasi",
            Part::Options => "options",
            Part::FullHeader => "full_header",
        }
    }
}
