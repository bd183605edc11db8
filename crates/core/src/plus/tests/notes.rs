//! Scaling notes ([`crate::plus::note`]): a stride or IP-ID behaviour the compressor adopts
//! after a flow's start goes in the next CO frames, not in a restart of IR frames.

use alloc::vec::Vec;

use super::strides::carries_note;
use super::{all_co, config, segment};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::{PlusCompressor, PlusDecompressor};

/// A bulk sender's segments as a receiver's socket starts them: a pure ACK, a 61-byte
/// segment, then 1448-byte ones; the IP-ID counts from 500, or from packet `random_from` on
/// jumps at random.
fn bulk(i: u32, random_from: u32) -> Vec<u8> {
    let len = |i: u32| [0, 61].get(i as usize).copied().unwrap_or(1448);
    let seq = 1000 + (0..i).map(|j| len(j) as u32).sum::<u32>();
    let id = if i < random_from {
        500 + i as u16
    } else {
        (i.wrapping_mul(0x9E37_79B9) >> 16) as u16
    };
    segment(seq, 77, id, 10_000 + i / 4, len(i))
}

/// The frames of `packets` (kind byte, frame), compressed in turn.
fn frames(packets: &[Vec<u8>]) -> Vec<(FrameKind, Vec<u8>)> {
    let mut c = PlusCompressor::new(config());
    let mut frame = Vec::new();
    packets
        .iter()
        .map(|p| {
            let kind = c.compress(p, &mut frame);
            (kind, frame.clone())
        })
        .collect()
}

fn kind_byte(kind: FrameKind) -> u8 {
    match kind {
        FrameKind::Profile(k) => k,
        other => panic!("{other:?}"),
    }
}

/// Indices of the frames that carry a scaling note, and of the full headers.
fn notes_and_irs(frames: &[(FrameKind, Vec<u8>)]) -> (Vec<usize>, Vec<usize>) {
    let (mut notes, mut irs) = (Vec::new(), Vec::new());
    for (i, (kind, frame)) in frames.iter().enumerate() {
        let k = kind_byte(*kind);
        if carries_note(k, frame) {
            notes.push(i);
        } else if !all_co(&[k]) {
            irs.push(i);
        }
    }
    (notes, irs)
}

/// Every frame through a fresh decompressor: each delivered packet must be exactly its own.
fn deliver(packets: &[Vec<u8>], frames: &[(FrameKind, Vec<u8>)]) -> Vec<Result<(), DropReason>> {
    let mut d = PlusDecompressor::new(config());
    let mut out = Vec::new();
    packets
        .iter()
        .zip(frames)
        .map(|(p, (kind, frame))| {
            let r = d.decompress(*kind, frame, &mut out);
            if r.is_ok() {
                assert_eq!(&out, p);
            }
            r
        })
        .collect()
}

#[test]
fn a_stride_learnt_after_the_start_goes_in_three_co_frames_not_in_irs() {
    let packets: Vec<_> = (0..40).map(|i| bulk(i, u32::MAX)).collect();
    let frames = frames(&packets);
    let (notes, irs) = notes_and_irs(&frames);
    // The start's three IRs, then the stride (learnt from the 1448-byte segments) in the
    // next three frames: as CO frames with a note, not as three more IRs.
    assert_eq!(irs, [0, 1, 2], "notes at {notes:?}");
    assert_eq!(notes.len(), 3, "notes at {notes:?}");
    assert!(notes.windows(2).all(|w| w[1] == w[0] + 1));
    assert!(deliver(&packets, &frames).iter().all(Result::is_ok));
    // After the notes the numbers go scaled: a frame is cheaper than a note's.
    let last = frames.last().unwrap().1.len() - 1448;
    let note = frames[notes[0]].1.len() - 1448;
    assert!(last + 3 <= note, "{last} against {note}");
}

#[test]
fn an_ip_id_behaviour_change_goes_in_notes() {
    let packets: Vec<_> = (0..60).map(|i| bulk(i, 30)).collect();
    let frames = frames(&packets);
    let (notes, irs) = notes_and_irs(&frames);
    assert!(irs.iter().all(|&i| i < 3), "IRs at {irs:?}");
    assert!(
        notes.iter().filter(|&&i| i > 30).count() >= 3,
        "notes at {notes:?}"
    );
    assert!(deliver(&packets, &frames).iter().all(Result::is_ok));
}

#[test]
fn a_note_that_does_not_verify_leaves_the_context_as_it_was() {
    let packets: Vec<_> = (0..40).map(|i| bulk(i, u32::MAX)).collect();
    let frames = frames(&packets);
    let (notes, _) = notes_and_irs(&frames);
    let mut d = PlusDecompressor::new(config());
    let mut out = Vec::new();
    for (i, (kind, frame)) in frames.iter().enumerate() {
        assert_eq!(d.decompress(*kind, frame, &mut out), Ok(()), "frame {i}");
        assert_eq!(out, packets[i]);
        if i == *notes.last().unwrap() {
            // A copy of the note with another stride (a forged or corrupted frame): it is
            // refused, and the context keeps the stride the good notes gave it.
            let mut forged = frame.clone();
            let at = 2;
            assert_eq!(forged[at] & 0x30, 0x10, "a sequence stride's note");
            forged[at + 2] ^= 0x01;
            assert!(d.decompress(*kind, &forged, &mut out).is_err());
        }
    }
}
