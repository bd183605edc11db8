//! Tests of the prefix codes: the cheapest that fits, as a search by cost says, and their
//! round trips.

use super::*;

/// The cheapest code is the first of the shortest that fit, as a search by cost says.
#[test]
fn codes_are_the_first_of_the_cheapest_that_fit() {
    let by_cost = |fits: &dyn Fn(u8) -> bool, cost: &dyn Fn(u8) -> u8| {
        (0..4u8)
            .filter(|&c| c == 3 || fits(c))
            .min_by_key(|&c| cost(c))
            .unwrap_or(3)
    };
    let spans = [
        0u64,
        1,
        3,
        15,
        16,
        17,
        100,
        511,
        512,
        1023,
        4096,
        1 << 14,
        1 << 20,
        1 << 31,
    ];
    for &up in &spans {
        for &down in &spans {
            // Every table, and tables whose counts do not rise (the general search).
            let tables = [UNSTRIDED_CODES, STRIDED_CODES, ACK_CODES]
                .iter()
                .flat_map(|c| [c.ip_id.bits, c.ts.bits])
                .chain([IP_ID_CODES, TS_CODES, [8, 5, 16, 9], [0, 9, 9, 16]]);
            for codes in &tables.collect::<Vec<_>>() {
                let k = |c: u8| codes[usize::from(c)];
                let want = by_cost(&|c| lsb::fits(k(c), up, down), &|c| prefix_len(c) + k(c));
                assert_eq!(
                    code(&FieldCodes::new(*codes), up, down),
                    want,
                    "{codes:?} {up} {down}"
                );
            }
            let ecr_tables = [UNSTRIDED_CODES, STRIDED_CODES, ACK_CODES].map(|c| c.ecr);
            for ((ecr, gap), codes) in [
                ((up, down), (down, up)),
                ((up, down), (0, 0)),
                ((0, 0), (up, down)),
            ]
            .into_iter()
            .flat_map(|spans| ecr_tables.map(|codes| (spans, codes)))
            {
                let e = |c: u8| codes.codes[usize::from(c)];
                let fits = |c: u8| {
                    let (up, down) = if e(c).0 { gap } else { ecr };
                    lsb::fits(e(c).1, up, down)
                };
                let want = by_cost(&fits, &|c| prefix_len(c) + e(c).1);
                assert_eq!(
                    ecr_code(&codes, ecr, gap),
                    want,
                    "{codes:?} {ecr:?} {gap:?}"
                );
            }
        }
    }
}

#[test]
fn the_codes_follow_the_strides() {
    let of = |seq, ack| *Codes::of(Strides { seq, ack });
    assert_eq!(of(0, 0), UNSTRIDED_CODES);
    assert_eq!(of(1448, 0), STRIDED_CODES);
    assert_eq!(of(1448, 2896), STRIDED_CODES);
    assert_eq!(of(0, 2896), ACK_CODES);
    assert_ne!(UNSTRIDED_CODES, STRIDED_CODES);
    assert_ne!(ACK_CODES, STRIDED_CODES);
    assert_ne!(ACK_CODES, UNSTRIDED_CODES);
}

#[test]
fn classes_are_the_smallest_that_fit() {
    assert_eq!(class(&SCALED_BITS, 0, 0, false), Some(0));
    assert_eq!(class(&SCALED_BITS, 1, 0, false), Some(1));
    assert_eq!(class(&SCALED_BITS, 60, 0, false), Some(2));
    assert_eq!(class(&SCALED_BITS, 0, 20, false), Some(2));
    assert_eq!(class(&SCALED_BITS, 0, 40, false), Some(3));
    assert_eq!(class(&SCALED_BITS, 1 << 17, 0, false), None);
    assert_eq!(class(&UNSCALED_BITS, u64::MAX, 5, true), Some(3));
}

#[test]
fn prefixes_read_as_bit_by_bit() {
    // Every prefix at every bit offset of one or two bytes, including prefixes the data
    // cuts short.
    for len in [1usize, 2] {
        for byte in 0..=255u8 {
            let data = [byte, byte.rotate_left(3)];
            for skip in 0..8 * len as u8 {
                let mut fast = BitReader::new(&data[..len]);
                let mut slow = BitReader::new(&data[..len]);
                fast.get(skip);
                slow.get(skip);
                let mut c = 0;
                let expected = loop {
                    match slow.get(1) {
                        None => break None,
                        Some(1) if c < 3 => c += 1,
                        Some(_) => break Some(c),
                    }
                    if c == 3 {
                        break Some(3);
                    }
                };
                assert_eq!(get_prefix(&mut fast), expected, "{byte:#x} skip {skip}");
                assert_eq!(fast.get(1), slow.get(1), "{byte:#x} skip {skip}: position");
            }
        }
    }
}

#[test]
fn sack_blocks_scale_by_the_stride() {
    let blocks = [(1000 + 2 * 1448, 1000 + 5 * 1448)];
    assert!(sack_scales(1000, &blocks, 1448));
    assert!(!sack_scales(1000, &[(1001, 1100)], 1448));
    assert!(!sack_scales(1000, &blocks, 0));
}

#[test]
fn prefix_codes_round_trip_and_pick_the_cheapest() {
    assert_eq!(code(&STRIDED_CODES.ts, 0, 0), 0);
    assert_eq!(code(&STRIDED_CODES.ts, 200, 3), 0);
    assert_eq!(code(&STRIDED_CODES.ts, 400, 0), 1);
    assert_eq!(code(&STRIDED_CODES.ts, 1500, 0), 2);
    assert_eq!(code(&STRIDED_CODES.ts, 1 << 20, 0), 3);
    assert_eq!(code(&STRIDED_CODES.ip_id, 0, 0), 0);
    assert_eq!(code(&STRIDED_CODES.ip_id, 3, 0), 1);
    assert_eq!(code(&STRIDED_CODES.ip_id, 1, 1), 2);
    assert_eq!(code(&STRIDED_CODES.ip_id, 55, 8), 2);
    assert_eq!(code(&STRIDED_CODES.ip_id, 56, 0), 3);
    // Costs 8, 12, 5 and 35 bits; 14, 6, 18, 35; 9, 8, 14, 35.
    assert_eq!(STRIDED_CODES.ecr.by_cost, [2, 0, 1, 3]);
    assert_eq!(UNSTRIDED_CODES.ecr.by_cost, [1, 0, 2, 3]);
    assert_eq!(ACK_CODES.ecr.by_cost, [1, 0, 2, 3]);
    // Costs 6, 2, 11 and 19 bits; a rising table's in its own order.
    assert_eq!(ACK_CODES.ip_id.by_cost, [1, 0, 2, 3]);
    assert_eq!(STRIDED_CODES.ts.by_cost, [0, 1, 2, 3]);
    // A gap that stays within 3 of every reference's: 2 bits behind code 2.
    assert_eq!(ecr_code(&STRIDED_CODES.ecr, (500, 0), (3, 0)), 2);
    assert_eq!(ecr_code(&STRIDED_CODES.ecr, (500, 0), (50, 0)), 0);
    assert_eq!(ecr_code(&STRIDED_CODES.ecr, (500, 0), (500, 0)), 1);
    assert_eq!(ecr_code(&STRIDED_CODES.ecr, (1 << 20, 0), (3000, 0)), 3);
    let mut out = alloc::vec::Vec::new();
    let mut w = BitWriter::new(&mut out);
    for c in 0..4 {
        put_code(&mut w, &STRIDED_CODES.ts, c, 0xABCD_1234);
    }
    w.finish();
    // 1+8, 2+9, 3+11, 3+32 bits.
    assert_eq!(out.len(), 69usize.div_ceil(8));
    let mut r = BitReader::new(&out);
    for k in TS_CODES {
        assert_eq!(
            get_code(&mut r, &TS_CODES),
            Some((0xABCD_1234 & crate::encoding::wlsb::mask(k), k))
        );
    }
}
