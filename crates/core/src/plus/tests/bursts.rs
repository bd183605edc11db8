//! Frames after a loss burst longer than the window: decoded by trial, held, and delivered once
//! the next frame verifies against them.

use alloc::vec::Vec;

use super::segment;
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::{PlusCompressor, PlusConfig, PlusDecompressor};
use crate::tcp::repair::Repair;

fn one_way() -> PlusConfig {
    PlusConfig {
        repair: Repair {
            context_requests: false,
            ..Repair::live()
        },
        ..PlusConfig::default()
    }
}

/// A bulk flow: 200 segments delivered, then `fast` lost with the timestamp moving `tick` per
/// segment and `slow` more lost moving 1, then three segments; what the decompressor made of
/// those three.
fn after_burst(fast: u32, tick: u32, slow: u32) -> Vec<Result<(), DropReason>> {
    let lost = fast + slow;
    let (mut c, mut d) = (
        PlusCompressor::new(one_way()),
        PlusDecompressor::new(one_way()),
    );
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut send = |i: u32, ts: u32| {
        let p = segment(1_000 + 1448 * i, 77, i as u16, ts, 1448);
        let kind: FrameKind = c.compress(&p, &mut frame);
        (p, kind, frame.clone())
    };
    let mut ts = 5_000;
    for i in 0..200 {
        ts += 1;
        let (p, kind, f) = send(i, ts);
        assert_eq!(d.decompress(kind, &f, &mut out), Ok(()));
        assert_eq!(out, p);
    }
    for i in 200..200 + lost {
        ts += if i < 200 + fast { tick } else { 1 };
        send(i, ts);
    }
    let mut late = Vec::new();
    let mut held = None;
    (0..3)
        .map(|j| {
            ts += 1;
            let (p, kind, f) = send(200 + lost + j, ts);
            let r = d.decompress(kind, &f, &mut out);
            match r {
                Ok(()) => assert_eq!(out, p),
                Err(DropReason::Held) => held = Some(p),
                Err(_) => {}
            }
            if d.take_late(&mut late) {
                assert_eq!(
                    Some(&late),
                    held.as_ref(),
                    "a held packet goes out as it was"
                );
            }
            r
        })
        .collect()
}

#[test]
fn time_past_the_timestamps_interval_is_decoded_by_trial_and_held() {
    // 60 segments lost, the first 40 three ticks apart: the timestamp is 141 ticks past the
    // last one delivered, beyond its LSBs' reach from there (the window spans 16 ticks), and
    // every frame after the burst failed before trials (a refused first frame makes the
    // context suspect, and each next frame fails against the same reference).
    let r = after_burst(40, 3, 20);
    assert_eq!(r, [Err(DropReason::Held), Ok(()), Ok(())], "{r:?}");
}
