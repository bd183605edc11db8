//! Window-based LSB encoding (W-LSB), as in the TAROC draft's Appendix A.
//!
//! The compressor keeps a sliding window (VSW) of values the decompressor may hold as its
//! reference. To send a value `v` it computes `r = max(|v - v_max|, |v - v_min|)` over the
//! window, and sends the `k = ceiling(log2(2 * r + 1))` least significant bits of `v`. The
//! decompressor picks the value closest to its reference whose `k` LSBs equal what it received.
//! Whatever window value the decompressor holds, `|v - v_ref| <= r < 2^(k-1)`, so the closest
//! value is unique and is `v`.
//!
//! Values live in a wrapping space of `width` bits (16 for IP-ID and window, 32 for sequence,
//! acknowledgment and timestamps), and distances are taken the short way round.

/// Signed distance `a - b` in a wrapping space of `width` bits (1..=32).
pub fn signed_distance(a: u32, b: u32, width: u8) -> i64 {
    let diff = a.wrapping_sub(b) & mask(width);
    let half = 1u64 << (width - 1);
    if u64::from(diff) >= half {
        i64::from(diff) - (1i64 << width)
    } else {
        i64::from(diff)
    }
}

/// The mask of the `k` low bits (`k` up to 32).
pub fn mask(k: u8) -> u32 {
    if k >= 32 {
        u32::MAX
    } else {
        (1u32 << k) - 1
    }
}

/// The interpretation range `r` of `v` against window values `window`: the largest distance
/// from `v` to any of them (0 for an empty window).
pub fn range(v: u32, window: impl IntoIterator<Item = u32>, width: u8) -> u64 {
    window
        .into_iter()
        .map(|w| signed_distance(v, w, width).unsigned_abs())
        .max()
        .unwrap_or(0)
}

/// `k = ceiling(log2(2r + 1))`: the number of LSBs that decode `v` from any reference within
/// distance `r`. Zero when `r` is zero (every window value equals `v`).
pub fn bits_needed(r: u64) -> u8 {
    if r == 0 {
        0
    } else {
        // 2r + 1 <= 2^k  <=>  r < 2^(k-1)  <=>  k = bit length of r, plus one.
        (64 - r.leading_zeros()) as u8 + 1
    }
}

/// The `k` least significant bits of `v`.
pub fn encode(v: u32, k: u8) -> u32 {
    v & mask(k)
}

/// Decodes `k` received LSBs against `reference`: the value of the `width`-bit space closest to
/// `reference` whose `k` LSBs equal `lsbs`. With `k >= width` the value is `lsbs` itself; with
/// `k == 0` it is the reference. A value exactly `2^(k-1)` away on both sides resolves below
/// the reference (the encoder never produces that case).
pub fn decode(reference: u32, lsbs: u32, k: u8, width: u8) -> u32 {
    if k >= width {
        return lsbs & mask(width);
    }
    if k == 0 {
        return reference & mask(width);
    }
    let span = 1u32 << k;
    let offset = lsbs.wrapping_sub(reference) & (span - 1);
    // Offsets in [0, 2^(k-1)) go up from the reference; [2^(k-1), 2^k) go down.
    let value = if offset < span / 2 {
        reference.wrapping_add(offset)
    } else {
        reference.wrapping_sub(span - offset)
    };
    value & mask(width)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The draft's Appendix A examples, with the figures the draft prints.
    #[test]
    fn appendix_a_example_1_normal_operation() {
        let r = range(284, [279, 283], 32);
        assert_eq!(r, 5);
        assert_eq!(bits_needed(r), 4);
        assert_eq!(encode(284, 4), 0b1100);
    }

    #[test]
    fn appendix_a_example_2_loss_before_compressor() {
        let r = range(290, [279, 283], 32);
        assert_eq!(r, 11);
        assert_eq!(bits_needed(r), 5);
        assert_eq!(encode(290, 5), 0b00010);
    }

    #[test]
    fn appendix_a_example_3_misordering_before_compressor() {
        let r = range(278, [279, 283], 32);
        assert_eq!(r, 5);
        assert_eq!(bits_needed(r), 4);
        assert_eq!(encode(278, 4), 0b0110);
    }

    #[test]
    fn appendix_a_decompressor_example() {
        // Reference 291, five LSBs 01111 received: candidates 271 and 303; 303 is closest.
        assert_eq!(decode(291, 0b01111, 5, 32), 303);
    }

    #[test]
    fn every_window_value_decodes() {
        let window = [279u32, 283, 290, 278];
        for v in 250..320u32 {
            let k = bits_needed(range(v, window, 32));
            for w in window {
                assert_eq!(decode(w, encode(v, k), k, 32), v, "v={v} ref={w} k={k}");
            }
        }
    }

    #[test]
    fn wraps_in_16_and_32_bits() {
        assert_eq!(signed_distance(2, 0xFFFE, 16), 4);
        assert_eq!(signed_distance(0xFFFE, 2, 16), -4);
        assert_eq!(bits_needed(range(3, [0xFFFF], 16)), 4);
        assert_eq!(decode(0xFFFF, encode(3, 4), 4, 16), 3);
        assert_eq!(decode(0xFFFF_FFF0, encode(0x10, 7), 7, 32), 0x10);
        assert_eq!(decode(5, 0xABCD, 16, 16), 0xABCD);
        assert_eq!(decode(5, 0, 0, 16), 5);
    }

    #[test]
    fn bits_needed_matches_the_formula() {
        for r in 0..5000u64 {
            let k = (((2 * r + 1) as f64).log2()).ceil() as u8;
            assert_eq!(bits_needed(r), k, "r={r}");
        }
    }
}
