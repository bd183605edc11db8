//! How a CO frame's first octets name its CID (`docs/taroc-plus-format.md`, section 5).
//!
//! ```text
//! CO kind byte 0x40-0x7F                  CID 0 (or a CID octet behind extension flag C)
//! short code   0x29-0x37                  CID 1, CO kind byte SHORT_KINDS[b - 0x29]
//!              0x38-0x3F                  CID 2, CO kind byte SHORT_KINDS[b - 0x38]
//! CID prefix   0x21-0x28, | L L X P S S A A |
//!                                          CID 4 * (b - 0x21) + L + 1 (1 to 32), CO kind
//!                                          byte 0x40 | X P S S A A
//! ```
//!
//! A CO kind byte has six bits of its own (its top bits are `01`), so the octet after a CID
//! prefix carries two bits of the CID as well: eight prefixes name 32 CIDs, and the 23 kind
//! bytes this frees name CIDs 1 and 2 together with their most frequent CO kind bytes.

/// The first CID prefix: kind bytes `PREFIX..PREFIX + PREFIXES`.
pub const PREFIX: u8 = 0x21;

/// The number of CID prefixes.
pub const PREFIXES: u8 = 8;

/// The largest CID a CID prefix names (CIDs 1 to this one).
pub const PREFIX_CIDS: u8 = 4 * PREFIXES;

/// The first short code: kind bytes from here to the first CO kind byte name CID 1 or 2 and a
/// CO kind byte of [`SHORT_KINDS`].
pub const SHORT: u8 = PREFIX + PREFIXES;

/// The CO kind bytes the short codes name, most frequent first: those of the frames of CIDs
/// other than 0 on the shared captures (a–h), counted with CID prefixes: a bulk receiver's ACKs
/// (`0x4C`, `0x63`, `0x5C`, `0x43`), a bulk sender's segments (`0x61`, `0x44`, `0x54`), an
/// interactive flow's (`0x55`, `0x45`), and the flags of a short flow's last packets (`0x67`,
/// `0x6B`, `0x6E`, `0x4D`, `0x5D`, `0x62`), as `cargo run -p taroc-cli --example cid_kinds`
/// counts them. CID 1 taking the first 15 and CID 2 the first 8 saved the most octets over the
/// 24 captures (shared, twins, unseen) of the splits of 23 codes measured (CID 1 alone, CIDs 1
/// to 4 alike, tables per CID).
pub const SHORT_KINDS: [u8; 15] = [
    0x4C, 0x61, 0x44, 0x67, 0x54, 0x63, 0x55, 0x5C, 0x6B, 0x45, 0x6E, 0x43, 0x4D, 0x5D, 0x62,
];

/// How many of [`SHORT_KINDS`] (its first ones) have a short code, for CID 1 and CID 2.
pub const SHORT_COUNTS: [u8; 2] = [15, 8];

// The prefixes and short codes fill the kind bytes between the tunnel frame (0x20) and the
// first CO kind byte.
const _: () = assert!(SHORT as usize + SHORT_COUNTS[0] as usize + SHORT_COUNTS[1] as usize == 0x40);

/// The short code of each CO kind byte (its low six bits), for CIDs 1 and 2; 0 for none.
const SHORT_OF: [[u8; 64]; 2] = {
    let mut table = [[0u8; 64]; 2];
    let mut first = SHORT;
    let mut c = 0;
    while c < 2 {
        let mut i = 0;
        while i < SHORT_COUNTS[c] as usize {
            table[c][(SHORT_KINDS[i] & 0x3F) as usize] = first + i as u8;
            i += 1;
        }
        first += SHORT_COUNTS[c];
        c += 1;
    }
    table
};

/// The link's kind byte, and the octet that follows it if any, of a CO frame of CID `cid`
/// (1 to [`PREFIX_CIDS`]) with CO kind byte `kind` (`0x40` to `0x7F`).
#[inline]
pub fn name(cid: u8, kind: u8) -> (u8, Option<u8>) {
    debug_assert!((1..=PREFIX_CIDS).contains(&cid) && kind & 0xC0 == 0x40);
    if cid <= 2 {
        let short = SHORT_OF[usize::from(cid - 1)][usize::from(kind & 0x3F)];
        if short != 0 {
            return (short, None);
        }
    }
    let c = cid - 1;
    (PREFIX + (c >> 2), Some((c & 0x03) << 6 | (kind & 0x3F)))
}

/// The CID and CO kind byte a kind byte from [`PREFIX`] to `0x3F` names, with the octets of
/// `frame` (what follows the kind byte) it took; `None` for another kind byte or a prefix
/// without the octet after it.
#[inline]
pub fn read(byte: u8, frame: &[u8]) -> Option<(u8, u8, usize)> {
    match byte {
        PREFIX..SHORT => {
            let second = *frame.first()?;
            let cid = ((byte - PREFIX) << 2 | second >> 6) + 1;
            Some((cid, 0x40 | (second & 0x3F), 1))
        }
        SHORT..0x40 => {
            let i = byte - SHORT;
            let (cid, i) = if i < SHORT_COUNTS[0] {
                (1, i)
            } else {
                (2, i - SHORT_COUNTS[0])
            };
            Some((cid, SHORT_KINDS[usize::from(i)], 0))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn every_cid_and_kind_round_trips_through_one_naming() {
        let mut seen = alloc::collections::BTreeSet::new();
        for cid in 1..=PREFIX_CIDS {
            for kind in 0x40..=0x7F {
                let (byte, second) = name(cid, kind);
                assert!((PREFIX..0x40).contains(&byte), "{cid} {kind:#x}: {byte:#x}");
                let frame: Vec<u8> = second.into_iter().chain([0xAB]).collect();
                assert_eq!(
                    read(byte, &frame),
                    Some((cid, kind, usize::from(second.is_some()))),
                    "{cid} {kind:#x}"
                );
                // No two (CID, kind) pairs share their leading octets.
                assert!(seen.insert((byte, second)), "{cid} {kind:#x}");
            }
        }
        // Short codes are exactly CID 1's and CID 2's kinds of the table.
        let shorts: Vec<(u8, u8)> = (1..=2)
            .flat_map(|cid| (0x40..=0x7F).map(move |kind| (cid, kind)))
            .filter(|&(cid, kind)| name(cid, kind).1.is_none())
            .collect();
        assert_eq!(shorts.len(), usize::from(SHORT_COUNTS[0] + SHORT_COUNTS[1]));
        assert!(shorts.iter().all(|&(cid, kind)| {
            SHORT_KINDS[..usize::from(SHORT_COUNTS[usize::from(cid - 1)])].contains(&kind)
        }));
    }

    #[test]
    fn every_kind_byte_from_the_first_prefix_reads_and_others_do_not() {
        for byte in 0..=0xFF {
            let read_one = read(byte, &[0x00]);
            let read_none = read(byte, &[]);
            if (PREFIX..SHORT).contains(&byte) {
                assert_eq!(read_one.map(|(_, k, n)| (k, n)), Some((0x40, 1)));
                assert_eq!(
                    read_none, None,
                    "{byte:#x}: a prefix needs its second octet"
                );
            } else if (SHORT..0x40).contains(&byte) {
                assert!(read_one
                    .is_some_and(|(c, k, n)| (1..=2).contains(&c) && k & 0xC0 == 0x40 && n == 0));
                assert_eq!(read_none, read_one);
            } else {
                assert_eq!((read_one, read_none), (None, None), "{byte:#x}");
            }
        }
        // The prefixes' second octet: all 256 values read, each to its own CID and kind.
        let all: alloc::collections::BTreeSet<_> = (PREFIX..SHORT)
            .flat_map(|b| (0..=0xFF).map(move |s| read(b, &[s])))
            .collect();
        assert_eq!(all.len(), usize::from(PREFIXES) * 256);
        assert!(all
            .iter()
            .all(|r| r.is_some_and(|(c, _, _)| (1..=PREFIX_CIDS).contains(&c))));
    }

    #[test]
    fn the_layout_the_specification_gives() {
        assert_eq!(name(1, 0x55), (0x2F, None));
        assert_eq!(name(1, 0x45), (0x32, None));
        assert_eq!(name(2, 0x4C), (0x38, None));
        assert_eq!(name(2, 0x45), (0x21, Some(0x45)));
        assert_eq!(name(1, 0x7F), (0x21, Some(0x3F)));
        assert_eq!(name(3, 0x44), (0x21, Some(0x84)));
        assert_eq!(name(5, 0x44), (0x22, Some(0x04)));
        assert_eq!(name(32, 0x7F), (0x28, Some(0xFF)));
    }
}
