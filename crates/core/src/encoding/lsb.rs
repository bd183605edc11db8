//! LSB coding with a one-sided interpretation interval (RFC 3095 section 4.5.1's offset `p`),
//! for fields that mostly grow: `k` LSBs decode any value in
//! `[reference - p(k), reference + 2^k - 1 - p(k)]`, where `p(k)` ([`below`]) is an eighth of
//! the interval. A field that only grows spends about one bit less than with the symmetric
//! interval of [`super::wlsb`]; one that steps back a little (a retransmission, a reordered
//! packet) still decodes.
//!
//! Against a window of references the compressor needs the largest step up (`up`) and down
//! (`down`) from any of them to the value: `k` LSBs serve if `up <= 2^k - 1 - p(k)` and
//! `down <= p(k)` ([`fits`]).

use super::wlsb::mask;

/// `p(k)`: how far below the reference `k` LSBs reach (`2^(k-3)`, 0 below 4 bits).
#[inline]
pub fn below(k: u8) -> u32 {
    match REACH.get(usize::from(k)) {
        Some(&(p, _)) => p as u32,
        None => 1 << (k - 3).min(31),
    }
}

/// Whether `k` LSBs decode a value `up` above and `down` below every reference (a value equal
/// to every reference needs no bits: `k = 0` fits `up = down = 0`).
#[inline]
pub fn fits(k: u8, up: u64, down: u64) -> bool {
    match REACH.get(usize::from(k)) {
        Some(&(below, beyond)) => down <= below && up < beyond,
        None => true,
    }
}

/// For each `k` below 32, how far `k` LSBs reach: `p(k)` below the reference ([`below`]), and
/// `2^k - p(k)`, the first step up they do not reach (32 LSBs reach every value).
const REACH: [(u64, u64); 32] = {
    let mut reach = [(0, 0); 32];
    let mut k = 0;
    while k < 32 {
        let p = if k >= 4 { 1 << (k - 3) } else { 0 };
        reach[k] = (p, (1 << k) - p);
        k += 1;
    }
    reach
};

/// Decodes `k` LSBs against `reference` in a space of `width` bits (16 or 32): the value of
/// `[reference - p(k), reference + 2^k - 1 - p(k)]` whose `k` LSBs are `lsbs`.
#[inline]
pub fn decode(reference: u32, lsbs: u32, k: u8, width: u8) -> u32 {
    if k >= width {
        return lsbs & mask(width);
    }
    if k == 0 {
        return reference & mask(width);
    }
    let low = reference.wrapping_sub(below(k));
    let offset = lsbs.wrapping_sub(low) & mask(k);
    low.wrapping_add(offset) & mask(width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::wlsb::encode;

    #[test]
    fn every_value_in_the_interval_decodes() {
        for k in [1u8, 3, 4, 7, 10] {
            let p = below(k);
            let reference = 1000u32;
            let span = 1u32 << k;
            for v in reference - p..reference - p + span {
                assert_eq!(decode(reference, encode(v, k), k, 32), v, "k={k} v={v}");
                let (up, down) = (v.saturating_sub(reference), reference.saturating_sub(v));
                assert!(fits(k, up.into(), down.into()));
            }
            assert!(!fits(k, u64::from(span - p), 0));
            assert!(!fits(k, 0, u64::from(p) + 1));
        }
        assert!(fits(0, 0, 0) && !fits(0, 1, 0));
        assert!(fits(32, u64::MAX, u64::MAX));
    }

    #[test]
    fn the_reach_table_gives_the_formula() {
        for k in 0..=40u8 {
            let p = if k >= 4 { 1u64 << (k - 3).min(31) } else { 0 };
            assert_eq!(u64::from(below(k)), p, "k={k}");
            let edge = (1u64 << k.min(63)).saturating_sub(p);
            for up in [0, 1, edge.saturating_sub(1), edge, edge + 1, u64::MAX] {
                for down in [0, p.saturating_sub(1), p, p + 1, u64::MAX] {
                    let formula = k >= 32 || (down <= p && up.saturating_add(p) < 1u64 << k);
                    assert_eq!(fits(k, up, down), formula, "k={k} up={up} down={down}");
                }
            }
        }
    }

    #[test]
    fn wraps_in_16_and_32_bits() {
        assert_eq!(decode(0xFFFE, encode(3, 5), 5, 16), 3);
        assert_eq!(decode(2, encode(0xFFFF, 5), 5, 16), 0xFFFF);
        assert_eq!(decode(0xFFFF_FFF0, encode(0x10, 7), 7, 32), 0x10);
        assert_eq!(decode(7, 0xABCD, 16, 16), 0xABCD);
        assert_eq!(decode(7, 0x1_0000, 0, 16), 7);
    }
}
