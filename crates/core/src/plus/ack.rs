//! What pure ACKs need of a CO frame, coded small: the extension in two forms (a short octet
//! for the window and SACK flags alone, which carries the window's code or the SACK header in
//! its low five bits), and SACK blocks as exp-Golomb codes in the bit stream, each against the
//! packet's own acknowledgment number (so they depend on no earlier frame).
//!
//! ```text
//! short extension: | 0 | W | K | v v v v v |  v: the window's code if W, else the SACK header
//! window code:     | L | 4 LSBs |, then, if L, the 2 next LSBs in the bit field (6 in all)
//! long extension:  | 1 | C | W | R | U | K | F | M |, then | Q | Z | O | N | 0 0 0 0 | if M
//! SACK header:     | blocks - 1 (2) | scaled (1) | order (2) |   (5 bits)
//! SACK blocks:     each block's (left edge - ACK, right edge - left edge), divided by the
//!                  acknowledgment stride if scaled, as exp-Golomb codes of the order's
//!                  [`SACK_ORDERS`] entry
//! ```

use alloc::vec::Vec;

use taroc_wire::tcp::SackBlocks;

use crate::encoding::bits::{BitReader, BitWriter};
use crate::plus::format::ext;

/// The LSB counts of the window a short extension codes: its five low bits are a selector bit
/// and the window's 4 LSBs (selector 0: one-sided LSBs, [`crate::encoding::lsb`], which decode
/// a window in `[reference - 2, reference + 13]`), or the low 4 of its 6 LSBs, whose top 2 bits
/// follow in the bit field (selector 1: `[reference - 8, reference + 55]`). A receiver's window
/// mostly holds still or moves by a few units, but while its buffer grows (after a loss, say)
/// it rises by a few units per ACK, some 45 across a window of references.
pub const SHORT_WINDOW_BITS: [u8; 2] = [4, 6];

/// The short extension's selector bit for the window's longer code.
const SHORT_WINDOW_LONG: u8 = 0x10;

/// The short extension's five low bits for `window` under selector `long` (the second entry
/// of [`SHORT_WINDOW_BITS`] if set), and the bits that follow in the bit field (their count
/// and value: none for the short code).
pub fn short_window(window: u16, long: bool) -> (u8, (u8, u32)) {
    let low = (window & 0x0F) as u8;
    if long {
        let more = SHORT_WINDOW_BITS[1] - SHORT_WINDOW_BITS[0];
        (
            SHORT_WINDOW_LONG | low,
            (more, u32::from(window >> 4) & 0x03),
        )
    } else {
        (low, (0, 0))
    }
}

/// Reads a short extension's window code: the LSB count its five low bits `v` select, and how
/// many more bits of it the bit field holds.
pub fn short_window_bits(v: u8) -> (u8, u8) {
    if v & SHORT_WINDOW_LONG != 0 {
        let k = SHORT_WINDOW_BITS[1];
        (k, k - SHORT_WINDOW_BITS[0])
    } else {
        (SHORT_WINDOW_BITS[0], 0)
    }
}

/// The exp-Golomb orders a SACK header's order field selects (the compressor takes the one
/// that codes the frame's blocks in the fewest bits).
pub const SACK_ORDERS: [u8; 4] = [0, 1, 3, 10];

/// The long extension's first-octet marker.
const LONG: u8 = 0x80;
/// Long extension bits, in wire order after the marker: C W R U K F M.
const LONG_BITS: [u8; 6] = [ext::C, ext::W, ext::R, ext::U, ext::K, ext::F];
/// Long extension: a second octet (Q, Z, O, N, V) follows.
const MORE: u8 = 0x01;
/// The second octet's O bit: the outer IPv4 Identification's code is in the bit field.
const OUTER: u8 = 0x20;
/// The second octet's N bit: a scaling note follows the CID ([`crate::plus::note`]).
const NOTE: u8 = 0x10;
/// The second octet's V bit: a 16-bit check follows the checksum (spec section 5.8).
const CHECK: u8 = 0x08;
/// The second octet's reserved bits.
const RESERVED: u8 = 0x07;

/// A CO frame's extension, read: its flags (the [`ext`] bits) and, if it came short, the
/// value in its low five bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extension {
    /// The flags, as the [`ext`] bits.
    pub flags: u8,
    /// The short form's five low bits (the window's LSBs if [`ext::W`], else the SACK
    /// header), or `None` for the long form or no extension.
    pub short: Option<u8>,
    /// The long form's O flag: the bit field codes the IPv4 Identification of a tunnelled
    /// context's outer header, which is not the predicted one (spec section 8.1).
    pub outer: bool,
    /// The long form's N flag: a scaling note (the context's strides and IP-ID behaviour)
    /// follows the CID (spec section 5.3).
    pub note: bool,
    /// The long form's V flag: a 16-bit check follows the checksum field (spec section 5.8).
    pub check: bool,
}

impl Extension {
    /// Whether the frame has an extension at all (a flag set; the kind byte's X).
    #[inline(always)]
    pub fn present(&self) -> bool {
        self.flags != 0 || self.outer || self.note || self.check
    }
}

/// Whether flags `e` can go as a short extension (only W and K, at least one).
pub fn short_fits(e: u8) -> bool {
    e != 0 && e & !(ext::W | ext::K) == 0
}

/// Writes the extension `x` of flags `x.flags` (and O, N and V as `x` says): short with the
/// value `x.short` (5 bits) if given, else long.
pub fn put_extension(out: &mut Vec<u8>, x: &Extension) {
    let (e, outer, note) = (x.flags, x.outer, x.note);
    if let Some(v) = x.short {
        debug_assert!(short_fits(e) && !outer && !note && !x.check);
        let w = if e & ext::W != 0 { 0x40 } else { 0 };
        let k = if e & ext::K != 0 { 0x20 } else { 0 };
        out.push(w | k | (v & 0x1F));
        return;
    }
    let mut first = LONG;
    for (i, bit) in LONG_BITS.into_iter().enumerate() {
        if e & bit != 0 {
            first |= 0x40 >> i;
        }
    }
    let second = (if e & ext::Q != 0 { 0x80 } else { 0 })
        | (if e & ext::Z != 0 { 0x40 } else { 0 })
        | (if outer { OUTER } else { 0 })
        | (if note { NOTE } else { 0 })
        | (if x.check { CHECK } else { 0 });
    if second != 0 {
        out.push(first | MORE);
        out.push(second);
    } else {
        out.push(first);
    }
}

/// Reads an extension from the start of `data`: it and the octets it took. `None` if the data
/// ends within it or it sets no flag.
pub fn get_extension(data: &[u8]) -> Option<(Extension, usize)> {
    let first = *data.first()?;
    if first & LONG == 0 {
        let mut flags = 0;
        if first & 0x40 != 0 {
            flags |= ext::W;
        }
        if first & 0x20 != 0 {
            flags |= ext::K;
        }
        let short = Some(first & 0x1F);
        let x = Extension {
            flags,
            short,
            ..Extension::default()
        };
        return (flags != 0).then_some((x, 1));
    }
    let mut flags = 0;
    for (i, bit) in LONG_BITS.into_iter().enumerate() {
        if first & (0x40 >> i) != 0 {
            flags |= bit;
        }
    }
    let mut used = 1;
    let (mut outer, mut note, mut check) = (false, false, false);
    if first & MORE != 0 {
        let second = *data.get(1)?;
        if second == 0 || second & RESERVED != 0 {
            return None;
        }
        outer = second & OUTER != 0;
        note = second & NOTE != 0;
        check = second & CHECK != 0;
        if second & 0x80 != 0 {
            flags |= ext::Q;
        }
        if second & 0x40 != 0 {
            flags |= ext::Z;
        }
        used = 2;
    }
    let x = Extension {
        flags,
        short: None,
        outer,
        note,
        check,
    };
    (flags != 0 || outer || note || check).then_some((x, used))
}

/// The values a SACK codes: each block's distances from the ACK, divided by `s`.
fn sack_values(ack: u32, blocks: &[(u32, u32)], s: u32) -> impl Iterator<Item = u32> + '_ {
    blocks
        .iter()
        .flat_map(move |&(left, right)| [left.wrapping_sub(ack) / s, right.wrapping_sub(left) / s])
}

/// The bits of `v`'s exp-Golomb code of order `k`.
fn eg_len(v: u32, k: u8) -> u32 {
    let n = (u64::from(v) >> k) + 1;
    2 * (63 - n.leading_zeros()) + 1 + u32::from(k)
}

/// The SACK header (5 bits) of `blocks` (1 to 4) against `ack`, divided by `stride` if
/// `scaled`: the count, the scaled bit and the cheapest order.
pub fn sack_header(ack: u32, blocks: &[(u32, u32)], stride: u32, scaled: bool) -> u8 {
    let s = if scaled { stride } else { 1 };
    let order = (0..4u8)
        .min_by_key(|&o| {
            let k = SACK_ORDERS[usize::from(o)];
            sack_values(ack, blocks, s)
                .map(|v| eg_len(v, k))
                .sum::<u32>()
        })
        .unwrap_or(0);
    ((blocks.len() as u8 - 1) << 3) | (u8::from(scaled) << 2) | order
}

/// The block count, the scaled bit and the exp-Golomb order of a SACK header.
pub fn sack_header_fields(header: u8) -> (usize, bool, u8) {
    (
        usize::from((header >> 3) & 0x03) + 1,
        header & 0x04 != 0,
        SACK_ORDERS[usize::from(header & 0x03)],
    )
}

/// Writes `v`'s exp-Golomb code of order `k`.
fn put_eg(w: &mut BitWriter<'_>, v: u32, k: u8) {
    let n = (u64::from(v) >> k) + 1;
    let z = (63 - n.leading_zeros()) as u8;
    if z > 16 {
        w.put(0, z - 16);
        w.put(0, 16);
    } else {
        w.put(0, z);
    }
    // n has z + 1 bits (up to 33): its top bit (a one) first, then the rest.
    w.put(1, 1);
    w.put(n as u32, z);
    w.put(v, k);
}

/// Reads an exp-Golomb code of order `k` (`None` past the data's end or past 32 bits).
fn get_eg(r: &mut BitReader<'_>, k: u8) -> Option<u32> {
    let mut z = 0u8;
    while r.get(1)? == 0 {
        z += 1;
        if z > 32 {
            return None;
        }
    }
    let n = (1u64 << z) | u64::from(r.get(z)?);
    let v = ((n - 1) << k) | u64::from(r.get(k)?);
    u32::try_from(v).ok()
}

/// Writes SACK `blocks` against `ack` (divided by `stride` if `scaled`) as exp-Golomb codes of
/// order `k`.
pub fn put_sack(
    w: &mut BitWriter<'_>,
    ack: u32,
    blocks: &[(u32, u32)],
    stride: u32,
    scaled: bool,
    k: u8,
) -> u32 {
    let s = if scaled { stride } else { 1 };
    let mut bits = 0;
    for v in sack_values(ack, blocks, s) {
        put_eg(w, v, k);
        bits += eg_len(v, k);
    }
    bits
}

/// Reads `count` SACK blocks written by [`put_sack`] against `ack`, multiplied by `stride`.
pub fn get_sack(
    r: &mut BitReader<'_>,
    ack: u32,
    count: usize,
    stride: u32,
    k: u8,
) -> Option<SackBlocks> {
    let mut blocks = SackBlocks::default();
    for _ in 0..count {
        let offset = get_eg(r, k)?;
        let size = get_eg(r, k)?;
        let left = ack.wrapping_add(offset.checked_mul(stride)?);
        blocks.push(left, left.wrapping_add(size.checked_mul(stride)?));
    }
    Some(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_round_trip_in_both_forms() {
        let all = [
            ext::C,
            ext::W,
            ext::R,
            ext::U,
            ext::K,
            ext::Q,
            ext::Z,
            ext::F,
        ];
        let seconds = (0..8u8).map(|b| (b & 1 != 0, b & 2 != 0, b & 4 != 0));
        for (e, (outer, note, check)) in
            (0..=255u8).flat_map(|e| seconds.clone().map(move |s| (e, s)))
        {
            if e == 0 && !outer && !note && !check {
                continue;
            }
            let x = Extension {
                flags: e,
                short: None,
                outer,
                note,
                check,
            };
            let mut out = Vec::new();
            put_extension(&mut out, &x);
            let want = if e & (ext::Q | ext::Z) != 0 || outer || note || check {
                2
            } else {
                1
            };
            assert_eq!(out.len(), want, "{e:#x}");
            assert_eq!(get_extension(&out), Some((x, want)));
            if short_fits(e) && !outer && !note && !check {
                out.clear();
                let x = Extension {
                    flags: e,
                    short: Some(0x15),
                    ..Extension::default()
                };
                put_extension(&mut out, &x);
                assert_eq!(get_extension(&out), Some((x, 1)));
            }
        }
        assert!(all
            .iter()
            .all(|&b| !short_fits(b) || b == ext::W || b == ext::K));
        // No flag, or a second octet without Q, Z, O, N and V or with its reserved bits:
        // malformed.
        assert_eq!(get_extension(&[0x1F]), None);
        assert_eq!(get_extension(&[0x80]), None);
        assert_eq!(get_extension(&[0x81, 0x00]), None);
        assert_eq!(get_extension(&[0xC1, 0x81]), None);
        assert_eq!(get_extension(&[0xC1, 0x24]), None);
        assert!(get_extension(&[0x81, 0x08]).is_some_and(|(x, _)| x.check && !x.note));
        assert!(get_extension(&[0x81, 0x20]).is_some_and(|(x, _)| x.outer && x.flags == 0));
        assert!(get_extension(&[0x81, 0x10]).is_some_and(|(x, _)| x.note && !x.outer));
        assert_eq!(get_extension(&[0xC1]), None);
        assert_eq!(get_extension(&[]), None);
    }

    #[test]
    fn sack_blocks_round_trip_at_every_order() {
        let ack = 0xFFFF_F000u32;
        let cases: [&[(u32, u32)]; 4] = [
            &[(ack.wrapping_add(1448), ack.wrapping_add(2 * 1448))],
            &[
                (ack.wrapping_add(17 * 1448), ack.wrapping_add(27 * 1448)),
                (ack.wrapping_add(13 * 1448), ack.wrapping_add(14 * 1448)),
                (ack.wrapping_add(9 * 1448), ack.wrapping_add(12 * 1448)),
            ],
            // A D-SACK block below the ACK, and the largest distances.
            &[(ack - 500, ack - 100), (ack.wrapping_add(1), ack)],
            &[(ack, ack), (ack.wrapping_add(7), ack.wrapping_add(7))],
        ];
        for blocks in cases {
            for scaled in [false, true] {
                if scaled && !crate::plus::format::sack_scales(ack, blocks, 1448) {
                    continue;
                }
                let header = sack_header(ack, blocks, 1448, scaled);
                let (count, s, best) = sack_header_fields(header);
                assert_eq!((count, s), (blocks.len(), scaled));
                for k in SACK_ORDERS {
                    let mut out = Vec::new();
                    let mut w = BitWriter::new(&mut out);
                    let bits = put_sack(&mut w, ack, blocks, 1448, scaled, k);
                    w.finish();
                    assert_eq!(out.len(), bits.div_ceil(8) as usize);
                    let stride = if scaled { 1448 } else { 1 };
                    let mut r = BitReader::new(&out);
                    let got = get_sack(&mut r, ack, count, stride, k).unwrap();
                    assert_eq!(got.as_slice(), blocks, "k {k}");
                    // The last octet holds code bits: without it the blocks do not read.
                    let mut r = BitReader::new(&out[..out.len() - 1]);
                    assert!(get_sack(&mut r, ack, count, stride, k).is_none());
                    if k == best {
                        let cheapest = SACK_ORDERS.map(|o| {
                            let mut out = Vec::new();
                            let mut w = BitWriter::new(&mut out);
                            put_sack(&mut w, ack, blocks, 1448, scaled, o)
                        });
                        assert_eq!(Some(&bits), cheapest.iter().min());
                    }
                }
            }
        }
    }

    #[test]
    fn short_window_codes_round_trip() {
        for window in [0u16, 1, 0x0F, 0x10, 0x3F, 0x40, 0x1234, u16::MAX] {
            for long in [false, true] {
                let (v, (more, extra)) = short_window(window, long);
                assert!(v < 0x20);
                let (k, n) = short_window_bits(v);
                assert_eq!(n, more);
                assert_eq!(k, SHORT_WINDOW_BITS[usize::from(long)]);
                let lsbs = u32::from(v & 0x0F) | extra << 4;
                assert_eq!(
                    lsbs,
                    u32::from(window) & ((1 << k) - 1),
                    "{window:#x} {long}"
                );
            }
        }
    }

    #[test]
    fn a_typical_reordering_block_costs_a_few_bits() {
        // One block one segment above the ACK, one segment long: 5 header bits, then 2 + 2
        // (order 1).
        let blocks = [(1000 + 1448, 1000 + 2 * 1448)];
        let header = sack_header(1000, &blocks, 1448, true);
        let (_, _, k) = sack_header_fields(header);
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        assert_eq!(put_sack(&mut w, 1000, &blocks, 1448, true, k), 4);
    }

    #[test]
    fn garbage_never_reads_as_an_overlong_code() {
        let mut r = BitReader::new(&[0u8; 8]);
        assert_eq!(get_eg(&mut r, 0), None);
        // 32 zeros, a one and 32 ones: 2^33 - 1, past 32 bits.
        let mut r = BitReader::new(&[0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x80]);
        assert_eq!(get_eg(&mut r, 0), None);
        let mut r = BitReader::new(&[0, 0, 0, 0, 0x80, 0, 0, 0, 0]);
        assert_eq!(get_eg(&mut r, 0), Some(u32::MAX));
    }
}
