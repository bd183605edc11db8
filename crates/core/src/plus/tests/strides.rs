//! A stride whose IR frames are all lost: the decompressor guesses it from the packets it
//! delivered ([`crate::plus::scaled::Learner::guesses`]) and keeps decoding.

use alloc::vec::Vec;

use super::{all_co, config, segment};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::{PlusCompressor, PlusDecompressor};

/// A bulk flow as a receiver's socket starts one (a pure ACK, a 61-byte segment, then
/// 1448-byte ones) through a link that loses the packets `lost` and every IR frame sent after
/// the flow's first CO frame (the IRs that carry the stride the compressor learns): what the
/// decompressor made of each frame after that CO frame, the kind bytes of those delivered to
/// it, and how many IR frames were lost.
fn stride_irs_lost(lost: &[u32]) -> (Vec<Result<(), DropReason>>, Vec<u8>, usize) {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let (mut results, mut kinds, mut lost_irs) = (Vec::new(), Vec::new(), 0);
    let mut seq = 1000;
    let mut seen_co = false;
    for i in 0..40u32 {
        let len = [0, 61].get(i as usize).copied().unwrap_or(1448);
        let p = segment(seq, 77, 500 + i as u16, 10_000 + i / 4, len);
        seq += len as u32;
        let kind = c.compress(&p, &mut frame);
        let FrameKind::Profile(k) = kind else {
            panic!("packet {i}: {kind:?}");
        };
        let co = all_co(&[k]);
        if seen_co && !co {
            lost_irs += 1;
            continue;
        }
        if lost.contains(&i) {
            continue;
        }
        let r = d.decompress(kind, &frame, &mut out);
        if r.is_ok() {
            assert_eq!(out, p, "packet {i}: delivered wrong");
        }
        if seen_co {
            results.push(r);
            kinds.push(k);
        }
        seen_co |= co;
    }
    (results, kinds, lost_irs)
}

#[test]
fn a_stride_whose_irs_were_all_lost_is_guessed_from_the_delivered_segments() {
    // Every segment delivered before the IRs: the last steps' candidate (61, 1448, 1448) is
    // the stride. The first 1448-byte segment lost too: the candidate of 61 and 1448 is 1, the
    // last step is the stride.
    for lost in [&[][..], &[2]] {
        let (results, kinds, lost_irs) = stride_irs_lost(lost);
        assert!(
            lost_irs >= 3 && kinds.len() > 30 && all_co(&kinds),
            "lost {lost:?}: the stride's IRs went and were lost: {lost_irs}, {kinds:02x?}"
        );
        assert!(
            results.iter().all(Result::is_ok),
            "lost {lost:?}: {results:?}"
        );
    }
}
