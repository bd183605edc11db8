//! The `taroc-plus` packet formats (`docs/taroc-plus-format.md` is the specification).
//!
//! ```text
//! IR (kind byte 0x08): the packet whole, its first length field (IPv4 Total Length, IPv6
//!   Payload Length) replaced by | context flags | CID |, and, if flag T, its TCP urgent
//!   pointer (then 0) by the context's stride.
//!   context flags: | 0 | 0 | K | T | E E | B B |  T a stride, K it is the acknowledgment
//!   stride, E usual ECN, B IP-ID behaviour (0 sequential, 1 byte-swapped, 2 zero, 3 random).
//!
//! IR-R (kind byte 0x09): a new context from another context of the same hosts (RFC 4164's
//!   context replication): | context flags (IR's, plus 0x20: timestamps) | CID | base CID |
//!   strides (4, if flagged) | six IP header bytes ([`IR_R_IP_BYTES`]) | ports (4) | a CO kind
//!   byte | a CO body without CID, its numbers whole, the rest coded against the base's
//!   reference |. The addresses come from the base context (the TCP checksum covers them).
//!
//! CO (kind byte 0x40 + |X|P|S S|A A|): X extension follows, P the TCP PSH flag, S and A
//!   the size classes of the sequence and acknowledgment numbers. CIDs 1 to 32 name
//!   themselves and the CO kind byte in the kind bytes 0x21-0x3F instead ([`super::cids`]).
//!   | extension | (if X) short |0|W|K|v v v v v| or long |1|C|W|R|U|K|F|M| (+ |Q|Z|000000|
//!   |           | if M), [`super::ack`]: C CID octet, W window, R R-octet, U urgent pointer,
//!   |           | K SACK, Q sequence unscaled, Z ack unscaled, F FIN; v the window's code
//!   |           | if W (|L| 4 LSBs|, L: 6 LSBs, the top 2 in the bits), else the SACK header
//!   | CID       | (if C)
//!   (a number with a stride and no Q / Z: classes 1, 2 scaled, class 3 16 bits unscaled)
//!   | checksum  | TCP checksum (+ IPv4 Identification, mod 2^16), 2 octets
//!   | bits      | sequence LSBs, ack LSBs, IP-ID code + offset LSBs (or 16 bits if random),
//!   |           | TS value code + LSBs, TS echo code + LSBs (if the context has timestamps),
//!   |           | the SACK header (5 bits, if K and not in a short extension), window code +
//!   |           | LSBs (if W and not in a short extension: `0` + 8 or `1` + 16; the short
//!   |           | code's top 2 LSBs if it has L), SACK blocks
//!   |           | (if K: exp-Golomb codes, [`super::ack`]); zero bits to the octet boundary
//!   | R-octet   | (if R) | urgent pointer (2, if U)
//!   | TCP data  |
//! ```

use super::scaled::Strides;
use crate::codec::FrameKind;
use crate::encoding::bits::{BitReader, BitWriter};
use crate::encoding::lsb;

/// The kind byte of an IR frame.
pub const IR: u8 = FrameKind::PROFILE_FIRST;

/// The type octet of a loss note, a feedback frame of that octet alone: the decompressor saw
/// packets of a flow go missing (a sequential IP-ID that skipped), so the link loses frames
/// (context requests have types `0x01` and `0x02`).
pub const LOSS_NOTE: u8 = 0x03;

/// The kind byte of an IR-R frame: a new context replicated from another of the same hosts.
pub const IR_R: u8 = FrameKind::PROFILE_FIRST + 1;

/// The kind byte of an IR-S frame: a TCP SYN, SYN-ACK or RST segment coded against another
/// context of the same hosts ([`super::handshake`]).
pub const IR_S: u8 = FrameKind::PROFILE_FIRST + 3;

/// The kind byte of an IR-R frame whose source port is the base context's and whose
/// destination port is coded against the base's ([`super::ports`]; kind [`IR_R`] carries both
/// ports whole).
pub const IR_R_SOURCE_KEPT: u8 = FrameKind::PROFILE_FIRST + 4;

/// The kind byte of an IR-R frame whose destination port is the base context's and whose
/// source port is coded against the base's ([`super::ports`]).
pub const IR_R_DEST_KEPT: u8 = FrameKind::PROFILE_FIRST + 5;

/// The kind byte of a compact IR: an IR with its usual fields coded as bits
/// ([`super::compact`]).
pub const COMPACT_IR: u8 = FrameKind::PROFILE_FIRST + 6;

/// The kind byte of a compact SYN: a TCP SYN, SYN-ACK or RST segment with no base context for
/// an IR-S, coded as a compact IR codes a packet ([`super::compact`]); it sets up no context.
pub const COMPACT_SYN: u8 = FrameKind::PROFILE_FIRST + 7;

/// The kind byte of a packed IR: a short mirrored compact IR in two octets fewer
/// ([`super::packed`]). It lies among the non-TCP compressed kind bytes, which skip it
/// (section 8).
pub const PACKED_IR: u8 = FrameKind::PROFILE_NON_TCP_FULL;

/// The packed IR's byte is among the non-TCP compressed kind bytes, none of which is it.
const _: () = assert!(PACKED_IR == FrameKind::PROFILE_NON_TCP | 0x06);

/// Whether `kind` is the kind byte of a frame that sets a TCP context up (IR, compact IR,
/// packed IR or an IR-R): the frames a tunnel frame may carry besides CO frames.
pub fn is_ir(kind: u8) -> bool {
    matches!(
        kind,
        IR | COMPACT_IR | PACKED_IR | IR_R | IR_R_SOURCE_KEPT | IR_R_DEST_KEPT
    )
}

/// The named kind a `taroc-plus` kind byte stands in for ([`FrameKind::family`]): the CO
/// frames' (from [`super::cids::PREFIX`]: the kind bytes that name a CID and a CO frame's kind,
/// then [`CO`]'s) for [`FrameKind::CompressedTcp`]; the non-TCP compressed frames' (CO-S,
/// CO-N, CO-I, from [`super::other::CO_N`]) and the tunnel frame's for
/// [`FrameKind::CompressedNonTcp`]; the full headers' (IR, IR-R, IR-N, IR-S, compact IR and
/// SYN, and the packed IR among the non-TCP compressed frames' bytes) for
/// [`FrameKind::UncompressedTcp`].
pub fn family(kind: u8) -> FrameKind {
    match kind {
        PACKED_IR => FrameKind::UncompressedTcp,
        k if k >= super::cids::PREFIX => FrameKind::CompressedTcp,
        k if k >= super::other::CO_N => FrameKind::CompressedNonTcp,
        _ => FrameKind::UncompressedTcp,
    }
}

/// The kind byte of a CO frame without any of its bits set.
pub const CO: u8 = FrameKind::PROFILE_TCP;

/// Bits of a CO kind byte.
pub mod kind {
    /// An extension octet follows.
    pub const X: u8 = 0x20;
    /// The TCP PSH flag.
    pub const P: u8 = 0x10;
    /// Shift of the sequence size class.
    pub const S_SHIFT: u8 = 2;
    /// Shift of the acknowledgment size class.
    pub const A_SHIFT: u8 = 0;
}

/// The flags of a CO extension (their places on the wire: [`super::ack`]).
pub mod ext {
    /// A CID octet follows (else CID 0).
    pub const C: u8 = 0x80;
    /// The TCP window follows.
    pub const W: u8 = 0x40;
    /// The R-octet follows (reserved bits, CWR, ECE and ECN differ from the context's).
    pub const R: u8 = 0x20;
    /// The TCP URG flag; the urgent pointer follows.
    pub const U: u8 = 0x10;
    /// SACK blocks follow.
    pub const K: u8 = 0x08;
    /// The sequence number is coded unscaled although the context has a stride.
    pub const Q: u8 = 0x04;
    /// The acknowledgment number is coded unscaled although the context has a stride.
    pub const Z: u8 = 0x02;
    /// The TCP FIN flag.
    pub const F: u8 = 0x01;
}

/// Offset of the urgent pointer in a TCP header (where an IR frame carries a stride).
pub const URGENT_OFFSET: usize = 18;

/// Bits of an IR or IR-R frame's context flags.
pub mod ir {
    /// IR: a stride is in the TCP urgent pointer (which is 0); IR-R: the strides (4 octets)
    /// follow the base CID.
    pub const STRIDES: u8 = 0x10;
    /// IR: the stride is the acknowledgment stride (else the sequence stride).
    pub const ACK_STRIDE: u8 = 0x20;
    /// Every bit an IR defines.
    pub const ALL: u8 = 0x3F;
    /// Compact IR: the addresses and ports are the reverse of a mirror's, named after the CID by
    /// the 16-bit hash of its flow ([`crate::plus::mirror`]); cleared in the IR frame it stands
    /// for.
    pub const MIRRORED: u8 = 0x80;
    /// Compact IR (with [`MIRRORED`] only): the numbers are coded against a packet of the
    /// mirror's flow, named after the hash by its TCP checksum ([`crate::plus::numbers`]);
    /// cleared in the IR frame it stands for.
    pub const NUMBERED: u8 = 0x40;
    /// IR-R: the context has timestamps.
    pub const TS: u8 = 0x20;
    /// IR-R: the six IP bytes are the base context's (they are not sent).
    pub const BASE_IP: u8 = 0x40;
    /// IR-R: the strides are the base context's (they are not sent; never with
    /// [`STRIDES`]).
    pub const BASE_STRIDES: u8 = 0x80;
}

/// The bytes of an IP header an IR-R frame carries (the rest come from the base context, the
/// packet's length and checksums, or are zero): IPv4 (no options) version and IHL, TOS,
/// flags and fragment offset, TTL, protocol; IPv6 (no extension headers) version, traffic
/// class and flow label, next header, hop limit. ECN bits are sent as zero.
pub const IR_R_IP_BYTES: [[usize; 6]; 2] = [[0, 1, 6, 7, 8, 9], [0, 1, 2, 3, 6, 7]];

/// LSB counts of the four sequence / acknowledgment size classes (the kind byte's S and A) of
/// a number that has a stride (and no Q or Z flag): classes 1 and 2 are LSBs of the scaled
/// number, class 3 ([`STRIDED_UNSCALED_CLASS`]) LSBs of the number itself, so that a number
/// whose residue changed needs no extension octet for its Q or Z flag.
pub const SCALED_BITS: [u8; 4] = [0, 6, 8, 16];

/// The size class of [`SCALED_BITS`] whose LSBs are of the number unscaled.
pub const STRIDED_UNSCALED_CLASS: u8 = 3;

/// LSB counts of the four sequence / acknowledgment size classes, coded unscaled.
pub const UNSCALED_BITS: [u8; 4] = [0, 10, 16, 32];

/// LSB counts of the IP-ID offset codes, prefixed `0`, `10`, `110`, `111` (a context with a
/// stride; [`Codes`]). A bulk sender's offset holds still (0 bits) until it retransmits; each
/// retransmission moves it up by one for every later segment, so for a window's worth of
/// segments after one it is 1 to 3 above the references' (2 bits, which take no step down:
/// `[ref, ref + 3]`); a retransmission's own offset is up by the number of packets sent since
/// its original (6 bits reach 55 up and 8 down).
pub const IP_ID_CODES: [u8; 4] = [0, 2, 6, 16];

/// LSB counts of the timestamp value codes, prefixed `0`, `10`, `110`, `111` (a context with a
/// sequence stride; [`Codes`]). These tables, and [`ACK_CODES`]', are the ones that give the
/// fewest octets on the shared captures' CO frames, the bit field's padding to an octet
/// counted: a bulk sender's window of up to 16 segments spans 8 to 9 bits of its clock, and its
/// gap to the echo stays within 7 bits of every reference's.
pub const TS_CODES: [u8; 4] = [8, 9, 11, 32];

/// The timestamp echo reply codes, prefixed `0`, `10`, `110`, `111`: whether the LSBs are of
/// the *gap* `TS value - TS echo reply` (which a bulk sender keeps nearly constant) rather
/// than of the echo itself, and how many (a context with a sequence stride; [`Codes`]).
pub const TS_ECR_CODES: [(bool, u8); 4] = [(true, 7), (true, 10), (true, 2), (false, 32)];

/// The prefix codes of a context's IP-ID offset and timestamps. Which apply follows from the
/// context's strides, which both ends hold (an IR frame carries them): a flow with a sequence
/// stride (a bulk sender) has [`STRIDED_CODES`], one with only an acknowledgment stride (a bulk
/// receiver's pure ACKs) [`ACK_CODES`], one without (interactive, request/response)
/// [`UNSTRIDED_CODES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codes {
    /// The IP-ID offset codes.
    pub ip_id: FieldCodes,
    /// The timestamp value codes.
    pub ts: FieldCodes,
    /// The timestamp echo reply codes.
    pub ecr: EcrCodes,
}

/// The prefix codes of one field ([`IP_ID_CODES`], [`TS_CODES`] and the like): their LSB
/// counts, with their order by cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldCodes {
    /// The LSB counts of the codes prefixed `0`, `10`, `110`, `111`.
    pub bits: [u8; 4],
    /// The codes by cost (prefix plus LSBs), cheapest first, of equal costs the first: the
    /// first of them that fits is the cheapest that fits.
    pub by_cost: [u8; 4],
}

impl FieldCodes {
    /// The codes of LSB counts `bits`, with their order by cost.
    pub const fn new(bits: [u8; 4]) -> FieldCodes {
        let mut costs = bits;
        let mut c = 0;
        while c < 4 {
            costs[c] += prefix_cost(c);
            c += 1;
        }
        FieldCodes {
            bits,
            by_cost: by_cost(costs),
        }
    }
}

/// [`prefix_len`] of code `c`, for the constant tables.
const fn prefix_cost(c: usize) -> u8 {
    if c < 2 {
        c as u8 + 1
    } else {
        3
    }
}

/// Codes 0 to 3 of `costs` by cost, cheapest first, of equal costs the first (an insertion sort
/// that moves a code only past a dearer one).
const fn by_cost(costs: [u8; 4]) -> [u8; 4] {
    let mut order = [0u8, 1, 2, 3];
    let mut i = 1;
    while i < 4 {
        let mut j = i;
        while j > 0 && costs[order[j - 1] as usize] > costs[order[j] as usize] {
            (order[j - 1], order[j]) = (order[j], order[j - 1]);
            j -= 1;
        }
        i += 1;
    }
    order
}

/// A context's timestamp echo reply codes ([`TS_ECR_CODES`] and the like), with their order
/// by cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EcrCodes {
    /// The codes, prefixed `0`, `10`, `110`, `111`: whether their LSBs are of the gap, and how
    /// many.
    pub codes: [(bool, u8); 4],
    /// The codes by cost (prefix plus LSBs), cheapest first, of equal costs the first: the
    /// first of them that fits is the cheapest that fits.
    pub by_cost: [u8; 4],
}

impl EcrCodes {
    /// `codes` with their order by cost.
    pub const fn new(codes: [(bool, u8); 4]) -> EcrCodes {
        let mut costs = [0; 4];
        let mut c = 0;
        while c < 4 {
            costs[c] = prefix_cost(c) + codes[c].1;
            c += 1;
        }
        let by_cost = by_cost(costs);
        EcrCodes { codes, by_cost }
    }
}

/// The codes of a context with a stride.
pub const STRIDED_CODES: Codes = Codes {
    ip_id: FieldCodes::new(IP_ID_CODES),
    ts: FieldCodes::new(TS_CODES),
    ecr: EcrCodes::new(TS_ECR_CODES),
};

/// The codes of a context without a stride. Its window of up to 16 packets spans seconds, so
/// its timestamps move by 12 to 14 bits; the gap to the echo follows the peer's think time, so
/// it is no steadier than the echo, which goes as 13 LSBs unless the gap is within 4 bits of
/// every reference's (a request answered at once); its IP-ID counter steps by one per packet
/// of the flow (no sequence stride to offset it), so a window of 16 spans 4 to 5 bits of it,
/// and the IP-ID has no code of 0 bits.
pub const UNSTRIDED_CODES: Codes = Codes {
    ip_id: FieldCodes::new([5, 7, 10, 16]),
    ts: FieldCodes::new([13, 14, 15, 32]),
    ecr: EcrCodes::new([(false, 13), (true, 4), (false, 15), (false, 32)]),
};

/// The codes of a context with an acknowledgment stride only (a bulk receiver's pure ACKs). Its
/// IP-ID counter steps by one per ACK (no sequence stride to offset it), so a full window of 16
/// spans 4–5 bits of it: nearly every ACK's IP-ID takes 5 bits, which get the one-bit prefix
/// (an IP-ID equal to every reference's, the 0-bit code, is rare); an ACK every second segment
/// puts a window's timestamps within 9 bits, and the gap to the echo (the queue's delay) within
/// 6 to 8.
pub const ACK_CODES: Codes = Codes {
    ip_id: FieldCodes::new([5, 0, 8, 16]),
    ts: FieldCodes::new([9, 10, 12, 32]),
    ecr: EcrCodes::new([(true, 8), (true, 6), (false, 11), (false, 32)]),
};

impl Codes {
    /// The codes of a context with `strides`.
    #[inline]
    pub fn of(strides: Strides) -> &'static Codes {
        if strides == Strides::default() {
            &UNSTRIDED_CODES
        } else if strides.seq == 0 {
            &ACK_CODES
        } else {
            &STRIDED_CODES
        }
    }
}

/// The cheapest echo code of `codes` ([`Codes::ecr`]) for an echo `ecr` and a gap `gap` away
/// from the references (each as `(up, down)`), of equal costs the first: the first that fits in
/// their order by cost (the last code always fits).
#[inline]
pub fn ecr_code(codes: &EcrCodes, ecr: (u64, u64), gap: (u64, u64)) -> u8 {
    let fits = |c: u8| {
        let (is_gap, k) = codes.codes[usize::from(c)];
        let (up, down) = if is_gap { gap } else { ecr };
        c == 3 || lsb::fits(k, up, down)
    };
    codes.by_cost.into_iter().find(|&c| fits(c)).unwrap_or(3)
}

/// Writes prefix code `c` and `k` LSBs of `value`.
#[inline]
pub fn put_prefixed(w: &mut BitWriter<'_>, c: u8, k: u8, value: u32) {
    let len = prefix_len(c);
    let prefix = if c == 3 { 0b111 } else { (1u64 << len) - 2 };
    let lsbs = u64::from(value & crate::encoding::wlsb::mask(k));
    // At most 3 + 32 bits, in one write.
    w.put_long((prefix << k) | lsbs, len + k);
}

/// Reads a prefix code's number (0 to 3).
#[inline(always)]
pub fn get_prefix(r: &mut BitReader<'_>) -> Option<usize> {
    let c = prefix_of(r.window());
    r.skip(prefix_len(c))?;
    Some(usize::from(c))
}

/// The prefix code at the top of `window` ([`BitReader::window`]): its leading ones among the
/// first three bits (zeros past the end of the data, so a code the data ends within fails
/// when it is read).
#[inline]
fn prefix_of(window: u64) -> u8 {
    (((window >> 61) as u8) << 5).leading_ones().min(3) as u8
}

/// The smallest size class of `table` whose LSBs decode a value `up` above and `down` below
/// every reference ([`lsb::fits`]), if any. With `full` the last class (the field's whole
/// width) always fits.
#[inline]
pub fn class(table: &[u8; 4], up: u64, down: u64, full: bool) -> Option<u8> {
    (0..4u8).find(|&c| {
        let k = table[usize::from(c)];
        lsb::fits(k, up, down) || (full && c == 3)
    })
}

/// The length in bits of prefix code `c` (`0`, `10`, `110`, `111`).
#[inline]
pub fn prefix_len(c: u8) -> u8 {
    (c + 1).min(3)
}

/// The cheapest code of `codes` (prefix plus LSBs) that fits `up` and `down`, of equal costs
/// the first: the first that fits in their order by cost (the last code, the field's whole
/// width, always fits).
#[inline]
pub fn code(codes: &FieldCodes, up: u64, down: u64) -> u8 {
    let fits = |c: u8| c == 3 || lsb::fits(codes.bits[usize::from(c)], up, down);
    codes.by_cost.into_iter().find(|&c| fits(c)).unwrap_or(3)
}

/// Writes prefix code `c` of `codes` and its LSBs of `value`; the bits written.
#[inline]
pub fn put_code(w: &mut BitWriter<'_>, codes: &FieldCodes, c: u8, value: u32) -> u8 {
    let k = codes.bits[usize::from(c)];
    put_prefixed(w, c, k, value);
    prefix_len(c) + k
}

/// Reads a prefix code: its LSBs and their number.
#[inline(always)]
pub fn get_code(r: &mut BitReader<'_>, codes: &[u8; 4]) -> Option<(u32, u8)> {
    // Prefix and LSBs (at most 3 + 32 bits) from one window of the data.
    let window = r.window();
    let c = prefix_of(window);
    let len = prefix_len(c);
    let k = codes[usize::from(c)];
    debug_assert!(len + k <= crate::encoding::bits::WINDOW_BITS);
    let lsbs = if k == 0 {
        0
    } else {
        ((window << len) >> (64 - u32::from(k))) as u32
    };
    r.skip(len + k)?;
    Some((lsbs, k))
}

/// LSB counts of the window codes, prefixed `0` and `1`.
pub const WINDOW_BITS: [u8; 2] = [8, 16];

/// Writes the window's code: the first of [`WINDOW_BITS`] whose LSBs decode `window`, which is
/// `up` above and `down` below every reference, behind its selector bit; the bits written.
#[inline]
pub fn put_window(w: &mut BitWriter<'_>, window: u16, up: u64, down: u64) -> u8 {
    let c = usize::from(!lsb::fits(WINDOW_BITS[0], up, down));
    let k = WINDOW_BITS[c];
    w.put(c as u32, 1);
    w.put(u32::from(window) & crate::encoding::wlsb::mask(k), k);
    1 + k
}

/// Reads a window code ([`put_window`]): its LSBs and their number.
#[inline]
pub fn get_window(r: &mut BitReader<'_>) -> Option<(u32, u8)> {
    let k = WINDOW_BITS[r.get(1)? as usize];
    Some((r.get(k)?, k))
}

/// Whether SACK `blocks` can go scaled by `stride` against `ack`.
pub fn sack_scales(ack: u32, blocks: &[(u32, u32)], stride: u32) -> bool {
    stride != 0
        && blocks.iter().all(|&(left, right)| {
            left.wrapping_sub(ack).is_multiple_of(stride)
                && right.wrapping_sub(left).is_multiple_of(stride)
        })
}

#[cfg(test)]
mod tests;
