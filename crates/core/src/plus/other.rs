//! `taroc-plus` for packets that are not compressible TCP: UDP (its header too, and an RTP
//! header at the start of its payload), ICMP and ICMPv6 echoes, IP fragments and any other
//! IP-only packet (IPv4 without options, IPv6 without extension headers). Their contexts live
//! in a CID space of their own, set up by IR-N frames (the packet whole, or replicated from
//! another context) and used by CO-S frames (the kind byte alone), CO-I frames (an octet of
//! IP-ID LSBs, or in frame mode of RTP's marker and timestamp too) and CO-N frames (fields as
//! needed).
//!
//! Nothing end to end covers all of a rebuilt header (an IP fragment has no transport
//! checksum; ICMP's does not cover the IP header; UDP's leaves out the IP-ID, TTL and TOS), so
//! every CO-S, CO-I and CO-N frame carries a 16-bit check of the original header as the compressor
//! saw it (its transport checksum field included), and the decompressor delivers only a rebuilt
//! header with that check. The payload is carried verbatim, so the header is all that can be
//! wrong. A transport checksum is computed by the decompressor when the compressor found it
//! valid, else carried. See `docs/taroc-plus-format.md`, section 8.
//!
//! ```text
//! IR-N (kind byte 0x0A): the packet whole, its first length field replaced by
//!   | flags (UDP, echo, RTP, IP-ID step, frame mode, pair mode) | CID |, in RTP mode its UDP
//!   Length by the stride.
//! CO-S (kind bytes 0x10-0x15, 0x17-0x1C): CID 0-2 and two LSBs of the sequence in the kind
//!   byte; | check (2) | payload |: every field follows from the reference.
//! CO-I (kind bytes 0x1E, 0x1F and a CID octet): | S S I I I I I I | check (2) | payload |;
//!   in frame mode | S S S M T O O O |.
//! CO-N (kind byte 0x1D): | flags | CID | sequence | IP-ID | fragment field | RTP octet |
//!   timestamp | check (2) | transport checksum | payload |, each field as its flags say.
//! ```

use taroc_wire::protocol;

use crate::codec::FrameKind;

mod compressor;
mod decompressor;
mod fields;
mod head;
mod pace;
pub mod pair;
mod replica;
mod widths;

pub use compressor::{
    OtherCompressor, ANCHOR, HEARD_FIRST, HEARD_MEMORY, IDLE_WHOLE, LOSSY_START_EXTRA, MOVE_AFTER,
    MOVE_IDLE, YOUNG,
};
pub use decompressor::OtherDecompressor;
pub use fields::{Dynamic, State};
pub use head::{Form, Head};
pub use replica::{is_replica, replica_cid, Replica};

/// The kind byte of an IR-N frame.
pub const IR_N: u8 = FrameKind::PROFILE_FIRST + 2;

/// The first kind byte of the non-TCP compressed frames (CO-S and CO-N).
pub const CO_N: u8 = FrameKind::PROFILE_NON_TCP;

/// Kind bytes from [`CO_N`] up to this one are non-TCP compressed frames (CO-S, CO-N), but
/// [`FrameKind::PROFILE_NON_TCP_FULL`] (the packed IR).
pub const CO_N_LAST: u8 = CO_N | 0x0F;

/// The kind byte of a CO-N frame (its flags octet follows).
pub const CO_N_LONG: u8 = CO_N + 0x0D;

/// The kind byte of a CO-I frame of CID 0 (`| S S | I I I I I I |` and the check follow).
pub const CO_I: u8 = CO_N + 0x0E;

/// The kind byte of a CO-I frame whose CID octet follows.
pub const CO_I_CID: u8 = CO_N + 0x0F;

/// The number of CO-S kind bytes: CIDs 0 to [`SHORT_CIDS`] `- 1`, four sequence LSB values
/// each.
pub const SHORT_KINDS: u8 = 12;

/// CIDs that CO-S frames name.
pub const SHORT_CIDS: u8 = SHORT_KINDS / 4;

/// The kind byte of a tunnel frame: an IP-in-IP packet whose outer header goes as CO-N and
/// whose inner packet goes compressed (TCP in its flow's context, anything else this module
/// compresses as IR-N, CO-S or CO-N), `| CO-N kind byte | CO-N header part | inner kind byte
/// | inner frame |`.
pub const TUNNEL: u8 = 0x20;

/// The kind byte of the CO-S frame of CID `cid` (below [`SHORT_CIDS`]) and sequence LSBs `lsb`
/// (below 4): the CO-S bytes skip the packed IR's.
pub fn short_kind(cid: u8, lsb: u8) -> u8 {
    let i = cid * 4 + lsb;
    let k = CO_N + i;
    if k >= FrameKind::PROFILE_NON_TCP_FULL {
        k + 1
    } else {
        k
    }
}

/// The CID and sequence LSBs of a CO-S kind byte, if `k` is one.
pub fn short_of(k: u8) -> Option<(u8, u8)> {
    let i = match k {
        _ if k < CO_N || k == FrameKind::PROFILE_NON_TCP_FULL => return None,
        _ if k < FrameKind::PROFILE_NON_TCP_FULL => k - CO_N,
        _ => k - CO_N - 1,
    };
    (i < SHORT_KINDS).then_some((i / 4, i % 4))
}

/// Whether this module compresses `packet` (IR-N, CO-S or CO-N, section 8).
pub fn compressible(packet: &[u8]) -> bool {
    shape(packet).is_some()
}

/// The inner packet of an IP-in-IP (IPv4 or IPv6 in either) packet this module compresses.
pub fn tunnelled(packet: &[u8]) -> Option<&[u8]> {
    let s = shape(packet)?;
    let fragment = s.v4 && u16::from_be_bytes([packet[6], packet[7]]) & 0x3FFF != 0;
    let next = if s.v4 { packet[9] } else { packet[6] };
    (!fragment && (next == protocol::IPV4 || next == protocol::IPV6)).then(|| &packet[s.ip..])
}

/// Bits of a CO-N frame's flags octet.
pub mod flag {
    /// A CID octet follows (else CID 0).
    pub const C: u8 = 0x80;
    /// Shift of the sequence code (0: unchanged, 1: 8 LSBs, 2: 16 bits).
    pub const S_SHIFT: u8 = 5;
    /// Shift of the IP-ID code (0: from the sequence, 1: 8 LSBs, 2: 16 bits).
    pub const I_SHIFT: u8 = 3;
    /// The IPv4 flags and fragment offset follow.
    pub const F: u8 = 0x04;
    /// The transport checksum follows (else the decompressor computes it, or it is 0).
    pub const K: u8 = 0x02;
    /// The IP-ID steps with the sequence number (kept as the context's step).
    pub const D: u8 = 0x01;
}

/// The CID a CO-S or CO-N frame of kind byte `k` names (before anything else of it is
/// parsed), if it has one.
pub fn cid_of(k: u8, frame: &[u8]) -> Option<u8> {
    if let Some((cid, _)) = short_of(k) {
        return Some(cid);
    }
    match (k, frame) {
        (CO_I, _) => return Some(0),
        (CO_I_CID, [cid, ..]) => return Some(*cid),
        (CO_I_CID, _) => return None,
        _ => {}
    }
    match frame {
        [f, cid, ..] if f & flag::C != 0 => Some(*cid),
        [f, ..] if f & flag::C == 0 => Some(0),
        _ => None,
    }
}

/// IR-N frames a context starts with where the decompressor sends no context requests, and
/// answers a context request with.
pub const START_IRS: u8 = 3;

/// IR-N frames a context in UDP mode (RTP included) starts with where the decompressor sends
/// context requests (a decompressor that lost both asks for the context): its short flows (RTCP,
/// DNS) are mostly their start, its long ones (RTP, QUIC) send 3-octet frames after it. (In echo
/// and IP-only mode a third costs less than the frames a lost start would cost there.)
pub const START_IRS_ASKING: u8 = 2;

/// A context sends its first refresh IR-N this many packets after its start IR-Ns, so that a
/// decompressor that lost them recovers without context requests (links without feedback).
/// Each refresh doubles the period, up to [`MAX_REFRESH_ALONE`] (compression slow-start in
/// reverse, as RFC 2507 section 3.3 spaces full headers); a context request starts it over.
pub const REFRESH: u16 = 16;

/// The first refresh period where the decompressor sends context requests: a decompressor that
/// lacks the context asks for it, so the refresh (replicated from the context itself) only
/// re-sends the per-packet fields. It doubles up to [`MAX_REFRESH`].
pub const REFRESH_ASKING: u16 = 512;

/// The longest refresh period of an established context where the decompressor asks for
/// contexts it lacks (context requests, section 7).
pub const MAX_REFRESH: u16 = 1024;

/// The longest refresh period of an established context where the decompressor sends no
/// context requests: the refresh is its only repair.
pub const MAX_REFRESH_ALONE: u16 = 64;

/// The type octet of a context request for non-TCP contexts: `| 0x02 | CID | CID ... |`, each
/// CID once (the TCP contexts' requests, [`crate::tcp::repair`], have type `0x01`).
pub const REQUEST_N: u8 = 0x02;

/// The CIDs a non-TCP context request names, or `None` if `frame` is not one.
pub fn parse_request(frame: &[u8]) -> Option<&[u8]> {
    match frame {
        [REQUEST_N, cids @ ..] if !cids.is_empty() && cids.len() <= 256 => Some(cids),
        _ => None,
    }
}

/// The type octet of a pair note, a feedback frame of that octet alone: a CO-S frame in pair
/// mode did not decode at once (a frame of its pair was lost on the link), so the compressor
/// stops counting on the pair's last IP-ID for a while ([`pair`]).
pub const PAIR_NOTE: u8 = 0x05;

/// Copies of a pair note, sent back to back (the note crosses the lossy link too).
pub const PAIR_NOTE_COPIES: u8 = 3;

/// CO-S, CO-I and CO-N frames between two pair notes, at least.
pub const PAIR_NOTE_EVERY: u32 = 64;

/// IR-N flag: the context compresses the UDP header as well.
pub const UDP_MODE: u8 = 0x01;

/// IR-N flag: the context compresses an ICMP or ICMPv6 echo header as well.
pub const ECHO_MODE: u8 = 0x02;

/// IR-N flag (with [`UDP_MODE`]): the context compresses an RTP header as well; the IR-N's UDP
/// Length carries the context's timestamp stride.
pub const RTP_MODE: u8 = 0x04;

/// IR-N flag: the IPv4 Identification steps with the sequence number ([`flag::D`]).
pub const STEP: u8 = 0x08;

/// IR-N flag (with [`RTP_MODE`]): *frame mode*, the RTP timestamp stays the reference's
/// within a frame (several packets of one timestamp, video) and a CO-I frame gives the marker
/// and one LSB of the scaled timestamp (the V bit of a CO-N frame's RTP octet sets it).
pub const FRAME: u8 = 0x10;

/// IR-N flag (with [`RTP_MODE`], IPv4): *pair mode*, a CO-S frame's IPv4 Identification is one
/// above the last one sent between the same hosts with the same protocol ([`pair`]; the P bit of
/// a CO-N frame's RTP octet sets it).
pub const PAIR: u8 = 0x20;

/// IP-IDs a decompressor tries for a CO-S frame in pair mode, for each sequence advance: one
/// to this many above the pair's last (frames of the pair's other flows lost).
pub const PAIR_TRIALS: u16 = 8;

/// The ICMP echo request and echo reply types.
const ECHO_TYPES: [u8; 2] = [8, 0];

/// The ICMPv6 echo request and echo reply types.
const ECHO6_TYPES: [u8; 2] = [128, 129];

/// Contexts the compressor keeps for these packets (least recently used replaced).
pub const MAX_CONTEXTS: usize = 16;

/// The references a compressor keeps per context: the decompressor's state after each of the
/// context's last frames (IR-Ns included). A CO-S or CO-N frame decodes correctly against each
/// of them, so a decompressor that missed up to this many frames minus one still decodes it;
/// after longer losses a CO-S frame decodes by trial ([`SHORT_TRIALS`]). (Three: a CO-S
/// frame's two sequence LSBs reach three packets on. In RTP and echo mode, whose sequence
/// numbers only grow, they reach one to four packets on: a decompressor that missed three
/// frames in a row decodes it at once too, where nothing else changed, the check checking it.)
pub const WINDOW: usize = 3;

/// Sequence advances a decompressor tries for a CO-S frame: `n`, `n + 4`, ... (each checked
/// by the check), so that it decodes after up to `4 * SHORT_TRIALS - 1` lost packets of the flow.
pub const SHORT_TRIALS: u16 = 16;

/// Windows of its LSBs' span a decompressor tries for an IPv4 Identification coded by LSBs (a
/// CO-I frame's six, a CO-N frame's eight, or a CO-I frame's eight where the Identification is
/// the sequence number): the window around the reference first, then each one 2^bits further
/// on. A host that draws the Identification from a counter it shares with other flows, and
/// moves by a random amount as time passes (Linux does), advances it by tens per packet of a
/// flow, so a run of a few lost packets takes it past the first window.
pub const ID_TRIALS: u16 = 8;

/// An 8-LSB field decodes into `[reference - LSB_BELOW, reference + 255 - LSB_BELOW]`.
pub const LSB_BELOW: u16 = 64;

/// A 16-LSB scaled timestamp decodes into `[reference - TS_BELOW, reference + 65535 -
/// TS_BELOW]`.
pub const TS_BELOW: u32 = 16384;

/// FNV-1a's 32-bit offset basis and prime.
const FNV_BASIS: u32 = 0x811C_9DC5;
const FNV_PRIME: u32 = 0x0100_0193;

/// FNV-1a (32 bits) of `data`: each octet XORed into the state, then the state multiplied by
/// the prime.
fn fnv1a(data: &[u8]) -> u32 {
    data.iter().fold(FNV_BASIS, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(FNV_PRIME)
    })
}

/// MurmurHash3's 32-bit finaliser: every bit of the result depends on every bit of `h`.
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ h >> 16
}

/// The check of CO-S, CO-I, CO-N and replicated IR-N frames over `data`: FNV-1a (32 bits) of
/// its octets through MurmurHash3's finaliser, the high 16 bits. It is not linear, in octets or
/// in sums: a header wrong by the same offsets as the previous one (a reference off by a whole
/// alias, which every frame decoded against it carries over) passes or fails it independently
/// of that one, where a CRC or a one's-complement sum would pass both or neither.
pub fn header_check(data: &[u8]) -> u16 {
    (fmix32(fnv1a(data)) >> 16) as u16
}

/// The check a CO-S, CO-I, CO-N or replicated IR-N frame carries for `header` of shape `s`
/// ([`header_check`]): over the header as it is, its transport checksum field included. A
/// decompressor that computes that field computes it over the payload it received, so a
/// damaged payload fails the check as the end-to-end checksum would have failed.
pub fn header_crc(header: &[u8], s: Shape) -> u16 {
    header_check(&header[..s.header])
}

/// A packet this module compresses: where its transport header starts (`ip`), its header
/// length (the IP header, plus the UDP header in UDP mode, the RTP header in RTP mode, the
/// ICMP echo header in echo mode), its mode, and whether IPv4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    ip: usize,
    header: usize,
    udp: bool,
    rtp: bool,
    echo: bool,
    v4: bool,
}

impl Shape {
    /// The IR-N flags of this shape's mode.
    fn flags(self) -> u8 {
        if self.rtp {
            UDP_MODE | RTP_MODE
        } else if self.udp {
            UDP_MODE
        } else if self.echo {
            ECHO_MODE
        } else {
            0
        }
    }

    /// Whether its packets carry a sequence number: the RTP sequence number, the echo
    /// sequence number, or else an IPv4 Identification.
    fn has_seq(self) -> bool {
        self.rtp || self.echo || self.v4
    }

    /// Whether its IPv4 Identification is a field of its own, apart from the sequence number.
    fn own_ip_id(self) -> bool {
        self.v4 && (self.rtp || self.echo)
    }

    /// Where its transport checksum field is (UDP, echo), if it has one.
    fn checksum_at(self) -> Option<usize> {
        if self.udp {
            Some(self.ip + 6)
        } else if self.echo {
            Some(self.ip + 2)
        } else {
            None
        }
    }
}

/// The transport checksum of `packet` (of shape `s`, its checksum field taken as 0) as its
/// sender computes it: UDP's over the pseudo-header (0 sent as 0xFFFF), ICMPv6's over the
/// pseudo-header, ICMP's over the message alone. `None` for a shape without one.
pub fn transport_checksum(packet: &[u8], s: Shape) -> Option<u16> {
    let payload = &packet[s.header..];
    let sum = taroc_wire::checksum::Sum::new().add_bytes(payload);
    checksum_of(&packet[..s.header], s, sum.fold(), payload.len())
}

/// The transport checksum of a packet of shape `s` whose header is `header` (its checksum field
/// taken as 0) and whose payload of `payload_len` octets has the one's-complement sum `payload`
/// (its octets as big-endian words; a header's length is even, so the words line up).
pub fn checksum_of(header: &[u8], s: Shape, payload: u16, payload_len: usize) -> Option<u16> {
    let at = s.checksum_at()?;
    let length = (s.header - s.ip + payload_len) as u16;
    let mut sum = taroc_wire::checksum::Sum::new();
    if s.udp || !s.v4 {
        let (addresses, proto) = if s.v4 {
            (&header[12..20], protocol::UDP)
        } else {
            (
                &header[8..40],
                if s.udp {
                    protocol::UDP
                } else {
                    protocol::ICMPV6
                },
            )
        };
        sum = sum
            .add_bytes(addresses)
            .add_u16(u16::from(proto))
            .add_u16(length);
    }
    let sum = sum
        .add_bytes(&header[s.ip..at])
        .add_bytes(&header[at + 2..s.header])
        .add_u16(payload)
        .checksum();
    Some(if s.udp && sum == 0 { 0xFFFF } else { sum })
}

/// The shape of `packet`, if this module compresses it: IPv4 with a 20-byte header and a
/// valid header checksum, or a fixed IPv6 header, its length fields exact, the whole parsing
/// as IP ([`taroc_wire::ip::IpInfo::parse`]).
fn shape(packet: &[u8]) -> Option<Shape> {
    // Only what parses as IP (extension header chains included) goes in these frames, so a
    // decompressor delivers nothing else whatever frame arrives.
    taroc_wire::ip::IpInfo::parse(packet).ok()?;
    let (v4, ip, proto) = match packet.first()? >> 4 {
        4 if packet[0] == 0x45 && packet.len() >= 20 => {
            let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
            let valid = taroc_wire::checksum::checksum(&packet[..20]) == 0;
            (total == packet.len() && valid).then_some((true, 20, packet[9]))?
        }
        6 if packet.len() >= 40 => {
            let payload = usize::from(u16::from_be_bytes([packet[4], packet[5]]));
            (payload + 40 == packet.len() && payload != 0).then_some((false, 40, packet[6]))?
        }
        _ => return None,
    };
    let fragment = v4 && u16::from_be_bytes([packet[6], packet[7]]) & 0x3FFF != 0;
    let udp = proto == protocol::UDP
        && !fragment
        && packet.len() >= ip + 8
        && usize::from(u16::from_be_bytes([packet[ip + 4], packet[ip + 5]])) == packet.len() - ip;
    let rtp = udp && looks_like_rtp(packet, ip);
    let echo_types = if v4 { ECHO_TYPES } else { ECHO6_TYPES };
    let mut s = Shape {
        ip,
        header: ip,
        udp,
        rtp,
        echo: false,
        v4,
    };
    // An unfragmented echo whose checksum field is the one the decompressor computes.
    s.echo = proto == if v4 { protocol::ICMP } else { protocol::ICMPV6 }
        && !fragment
        && packet.len() >= ip + 8
        && echo_types.contains(&packet[ip])
        && packet[ip + 1] == 0
        && {
            let echo = Shape {
                echo: true,
                header: ip + 8,
                ..s
            };
            transport_checksum(packet, echo)
                == Some(u16::from_be_bytes([packet[ip + 2], packet[ip + 3]]))
        };
    s.header = ip
        + if rtp {
            20
        } else if udp || s.echo {
            8
        } else {
            0
        };
    Some(s)
}

/// Whether the UDP datagram of `packet` (its UDP header at `u`) starts like an RTP header
/// (RFC 3550 section 5.1) this module compresses: both ports even (RTP's; RTCP's are odd),
/// version 2, no CSRC and no extension, a payload type outside RTCP's 72-76 (marker clear), and
/// at least the 12-octet header.
fn looks_like_rtp(packet: &[u8], u: usize) -> bool {
    let r = u + 8;
    packet.len() >= r + 12
        && packet[u + 1] & 1 == 0
        && packet[u + 3] & 1 == 0
        && packet[r] & 0xDF == 0x80
        && !(72..=76).contains(&(packet[r + 1] & 0x7F))
}

/// The longest header a [`Shape`] has: IPv6, UDP and RTP.
const MAX_HEADER: usize = 60;

/// The static part of a header (its template), written into `buf` without allocating: the
/// per-packet fields zeroed ([`zero_per_packet`]).
fn template_in<'a>(packet: &[u8], s: Shape, buf: &'a mut [u8; MAX_HEADER]) -> &'a [u8] {
    let t = &mut buf[..s.header];
    t.copy_from_slice(&packet[..s.header]);
    zero_per_packet(t, s);
    t
}

/// Zeroes the per-packet fields of the header `t` of shape `s`: the lengths, the IPv4
/// Identification, header checksum and fragment field, the UDP length, the echo sequence
/// number and checksum, the RTP marker, sequence number and timestamp; a nonzero UDP checksum
/// becomes 0xFFFF (a context whose UDP checksums are 0 is another context).
fn zero_per_packet(t: &mut [u8], s: Shape) {
    if s.v4 {
        t[2..8].fill(0);
        t[10..12].fill(0);
    } else {
        t[4..6].fill(0);
    }
    if s.udp {
        let u = s.ip;
        t[u + 4..u + 6].fill(0);
        let zero = t[u + 6..u + 8] == [0, 0];
        t[u + 6..u + 8].fill(if zero { 0 } else { 0xFF });
    }
    if s.rtp {
        let r = s.ip + 8;
        t[r + 1] &= 0x7F;
        t[r + 2..r + 8].fill(0);
    }
    if s.echo {
        let i = s.ip;
        t[i + 2..i + 4].fill(0);
        t[i + 6..i + 8].fill(0);
    }
}

#[cfg(test)]
mod tests;
