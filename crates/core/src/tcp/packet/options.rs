//! TCP option blocks: the timestamps and SACK blocks TAROC reads from them, and the canonical
//! layout it writes back.

use taroc_wire::tcp::{SackBlocks, TcpOption};

/// Options longer than this cannot be expressed by the canonical layout (40 bytes of options).
pub const MAX_OPTIONS: usize = 40;

/// The timestamps of the option blocks most segments carry, which [`canonical_options`] writes
/// back exactly: none, or NOP, NOP, Timestamps. `None` for any other block.
pub(super) fn usual_options(options: &[u8]) -> Option<Option<(u32, u32)>> {
    match options {
        [] => Some(None),
        [1, 1, 8, 10, ts @ ..] if ts.len() == 8 => {
            let word = |at: usize| u32::from_be_bytes([ts[at], ts[at + 1], ts[at + 2], ts[at + 3]]);
            Some(Some((word(0), word(4))))
        }
        _ => None,
    }
}

/// What a TCP option block says: its timestamps and SACK blocks (the first of each), and
/// whether [`canonical_options`] writes it back exactly.
pub(super) type Options = (Option<(u32, u32)>, SackBlocks, bool);

/// The [`Options`] of a TCP option block; `None` if an option is malformed.
pub(super) fn parse_options(options: &[u8]) -> Option<Options> {
    let mut ts = None;
    let mut sack = None;
    for option in taroc_wire::tcp::OptionIter::new(options) {
        match option.ok()? {
            TcpOption::Timestamps { val, ecr } if ts.is_none() => ts = Some((val, ecr)),
            TcpOption::Sack(blocks) if sack.is_none() => sack = Some(blocks),
            _ => {}
        }
    }
    let sack = sack.unwrap_or_default();
    let mut canonical = [0u8; MAX_OPTIONS];
    let exact =
        canonical_options(ts, &sack, &mut canonical).is_some_and(|n| canonical[..n] == *options);
    Some((ts, sack, exact))
}

/// The canonical option layout TAROC rebuilds: `NOP NOP Timestamps` if there are timestamps, then
/// `NOP NOP SACK` if there are SACK blocks (the layout Linux and most stacks send). Writes it to
/// `out` and returns its length, or `None` if it does not fit in 40 bytes.
pub fn canonical_options(
    ts: Option<(u32, u32)>,
    sack: &SackBlocks,
    out: &mut [u8; MAX_OPTIONS],
) -> Option<usize> {
    let mut at = 0;
    if let (Some((val, ecr)), true) = (ts, sack.is_empty()) {
        // The usual block, written directly.
        out[..4].copy_from_slice(&[1, 1, 8, 10]);
        out[4..8].copy_from_slice(&val.to_be_bytes());
        out[8..12].copy_from_slice(&ecr.to_be_bytes());
        return Some(12);
    }
    if let Some((val, ecr)) = ts {
        out[..2].fill(1);
        at = 2 + TcpOption::Timestamps { val, ecr }.emit(&mut out[2..])?;
    }
    if !sack.is_empty() {
        out.get_mut(at..at + 2)?.fill(1);
        at += 2;
        at += TcpOption::Sack(*sack).emit(&mut out[at..])?;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path for the usual option blocks says what the general parse says, and falls
    /// back to it for every other block.
    #[test]
    fn usual_options_agree_with_the_general_parse() {
        let ts = [
            1u8, 1, 8, 10, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0,
        ];
        let sack = [1u8, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 9];
        let blocks: [&[u8]; 8] = [
            &[],
            &ts,
            &[&ts[..], &sack[..]].concat(),
            &ts[2..],
            &[&ts[2..], &[1, 1][..]].concat(),
            &[1, 1, 1, 1],
            &[2, 4, 5, 0xB4],
            &ts[..11],
        ];
        for block in blocks {
            if let Some(ts) = usual_options(block) {
                let usual = Some((ts, SackBlocks::default(), true));
                assert_eq!(parse_options(block), usual, "{block:?}");
            }
        }
        assert_eq!(usual_options(&ts), Some(Some((0x1234_5678, 0x9ABC_DEF0))));
        let mut written = [0u8; MAX_OPTIONS];
        assert_eq!(
            canonical_options(
                Some((0x1234_5678, 0x9ABC_DEF0)),
                &SackBlocks::default(),
                &mut written
            ),
            Some(12)
        );
        let mut emitted = [0u8; 10];
        let ts_option = TcpOption::Timestamps {
            val: 0x1234_5678,
            ecr: 0x9ABC_DEF0,
        };
        assert_eq!(ts_option.emit(&mut emitted), Some(10));
        assert_eq!(written[..12], [&[1, 1][..], &emitted[..]].concat()[..]);
        assert_eq!(written[..12], ts);

        assert_eq!(usual_options(&[]), Some(None));
    }
}
