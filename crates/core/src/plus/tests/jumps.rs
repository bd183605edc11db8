//! Jumps (spec section 5.8): where the compressor without context requests sends the check,
//! and where the decompressor holds a frame.

use alloc::vec::Vec;

use super::{one_way, segment_v6};
use crate::codec::{Compressor, Decompressor};
use crate::plus::{PlusCompressor, PlusDecompressor};

#[test]
fn a_retransmission_jumps_and_the_new_data_after_it_does_not() {
    // An IPv6 bulk flow (no IP-ID: its jumps are counted in segments of its sequence stride)
    // retransmits segment 20 after segment 59. The retransmission jumped 40 segments back from
    // the reference and carries the check; the new data after it is one segment on from the
    // reference (a retransmission does not move it), so it goes as the segments before the
    // retransmission did. On a clean link every frame is delivered at once: the decompressor
    // holds none.
    let (mut c, mut d) = (
        PlusCompressor::new(one_way()),
        PlusDecompressor::new(one_way()),
    );
    let seq = |i: u32| 1000 + 1000 * i;
    let order: Vec<u32> = (0..60).chain([20]).chain(60..64).collect();
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut lengths = Vec::new();
    for &i in &order {
        let p = segment_v6(5001, seq(i), 77, 1000);
        let kind = c.compress(&p, &mut frame);
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "segment {i}");
        assert_eq!(out, p);
        lengths.push(frame.len());
    }
    let before = lengths[59];
    assert_eq!(lengths[58], before, "{lengths:?}");
    assert!(lengths[60] > before + 2, "the retransmission: {lengths:?}");
    assert_eq!(
        lengths[61..],
        [before; 4],
        "the new data after it: {lengths:?}"
    );
}
