//! A stride whose frames that carry it (IRs, CO frames with a scaling note) are all lost: the
//! decompressor guesses it from the packets it delivered
//! ([`crate::plus::scaled::Learner::guess`]) and keeps decoding.

use alloc::vec::Vec;

use super::{all_co, config, pure_ack, segment};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::format::kind;
use crate::plus::{ack, PlusCompressor, PlusDecompressor};

/// Whether the frame of kind byte `k` (CID 0) is a CO frame that carries a scaling note.
pub(super) fn carries_note(k: u8, frame: &[u8]) -> bool {
    all_co(&[k]) && k & kind::X != 0 && ack::get_extension(frame).is_some_and(|(x, _)| x.note)
}

/// The packets `make(0..40)` through a link that loses the packets `lost` and every IR frame
/// or CO frame with a scaling note sent after the flow's first CO frame without one (the
/// frames that carry the stride the compressor learns): what the decompressor made of each
/// frame after that CO frame, the kind bytes of those delivered to it, and how many frames
/// carrying the stride were lost.
fn stride_irs_lost(
    make: impl Fn(u32) -> Vec<u8>,
    lost: &[u32],
) -> (Vec<Result<(), DropReason>>, Vec<u8>, usize) {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let (mut results, mut kinds, mut lost_irs) = (Vec::new(), Vec::new(), 0);
    let mut seen_co = false;
    for i in 0..40u32 {
        let p = make(i);
        let kind = c.compress(&p, &mut frame);
        let FrameKind::Profile(k) = kind else {
            panic!("packet {i}: {kind:?}");
        };
        let co = all_co(&[k]) && !carries_note(k, &frame);
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

/// Every frame after the stride's lost IRs is delivered, exactly.
fn assert_guessed(
    case: &str,
    (results, kinds, lost_irs): (Vec<Result<(), DropReason>>, Vec<u8>, usize),
) {
    assert!(
        lost_irs >= 3 && kinds.len() > 25 && all_co(&kinds),
        "{case}: the stride's frames went and were lost: {lost_irs}, {kinds:02x?}"
    );
    assert!(results.iter().all(Result::is_ok), "{case}: {results:?}");
}

#[test]
fn a_stride_whose_irs_were_all_lost_is_guessed_from_the_delivered_segments() {
    // A bulk flow as a receiver's socket starts one: a pure ACK, a 61-byte segment, then
    // 1448-byte ones.
    let bulk = |i: u32| {
        let len = |i: u32| [0, 61].get(i as usize).copied().unwrap_or(1448);
        let seq = 1000 + (0..i).map(|j| len(j) as u32).sum::<u32>();
        segment(seq, 77, 500 + i as u16, 10_000 + i / 4, len(i))
    };
    // Every segment delivered before the IRs: the last steps' candidate (61, 1448, 1448) is
    // the stride. The first 1448-byte segment lost too: the candidate of 61 and 1448 is 1, the
    // last step is the stride.
    assert_guessed("bulk", stride_irs_lost(bulk, &[]));
    assert_guessed("bulk, packet 2 lost", stride_irs_lost(bulk, &[2]));
}

#[test]
fn an_ack_stride_whose_irs_were_all_lost_is_guessed_from_the_delivered_acks() {
    // ACK steps of 100 and 50 octets (no stride), then of two 1448-byte segments: the
    // compressor adopts 2896 after the start's IRs and a CO frame.
    let acks = |i: u32| {
        let step = |i: u32| [0, 100, 50].get(i as usize).copied().unwrap_or(2896);
        let ack = 5000 + (0..=i).map(step).sum::<u32>();
        pure_ack(ack, 300 + i as u16, 20_000 + i, 500, &[])
    };
    assert_guessed("acks", stride_irs_lost(acks, &[]));
}
