//! Counters of what a TAROC compressor sent and why, and where its header bytes went.

/// Why a packet went the way it did.
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

/// The counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TarocStats {
    frames: [u64; Why::ALL.len()],
    bytes: [u64; Part::ALL.len()],
    /// Contexts created.
    pub contexts_created: u64,
    /// Streams moved to a fresh CID because their identity changed.
    pub identity_changes: u64,
    /// Contexts evicted (least recently used) to make room.
    pub evictions: u64,
    /// CO -> IR transitions because the VSW held a single packet.
    pub long_jumps: u64,
    /// Context requests received for contexts the compressor holds.
    pub requests_received: u64,
    /// CO frames that carried a scaling note (`taroc-plus`: a new stride or IP-ID behaviour,
    /// [`crate::plus::note`]).
    pub scaling_notes: u64,
    /// IR frames sent as mirrored compact IRs (`taroc-plus`: the addresses and ports named by
    /// the opposite direction's flow, [`crate::plus::mirror`]).
    pub mirrored_irs: u64,
    /// Reference receipts that ended a context's start early: a frame from the far end named
    /// one of its IR frames' packets as its reference (`taroc-plus` only).
    pub reference_receipts: u64,
    /// IR receipts (feedback) that ended a context's restart or answer early (`taroc-plus`
    /// only).
    pub receipts_taken: u64,
    /// Window entries dropped because a reference receipt showed the decompressor holds a
    /// newer reference (`taroc-plus` only).
    pub window_receipts: u64,
}

impl TarocStats {
    pub(crate) fn count(&mut self, why: Why) {
        self.frames[why as usize] += 1;
    }

    pub(crate) fn add_part(&mut self, part: Part, bytes: u64) {
        self.bytes[part as usize] += bytes;
    }

    /// Frames sent for `why`.
    pub fn frames(&self, why: Why) -> u64 {
        self.frames[why as usize]
    }

    /// Header bytes spent on `part`.
    pub fn bytes(&self, part: Part) -> u64 {
        self.bytes[part as usize]
    }
}
