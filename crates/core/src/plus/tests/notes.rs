//! Scaling notes ([`crate::plus::note`]): a stride or IP-ID behaviour the compressor adopts
//! after a flow's start goes in the next CO frames, not in a restart of IR frames.

use alloc::vec::Vec;

use super::strides::carries_note;
use super::{all_co, config, receipt_naming, segment};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::PlusConfig;
use crate::plus::{PlusCompressor, PlusDecompressor};

/// A bulk sender's segments as a receiver's socket starts them: a pure ACK, a 61-byte
/// segment, then 1448-byte ones, or 724-byte ones from packet `halved_from` on; the IP-ID
/// counts from 500, or from packet `random_from` on jumps at random.
fn bulk(i: u32, halved_from: u32, random_from: u32) -> Vec<u8> {
    let len = |i: u32| match i {
        0 | 1 => [0, 61][i as usize],
        _ if i >= halved_from => 724,
        _ => 1448,
    };
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
    frames_with(config(), packets)
}

/// [`frames`], by a compressor of configuration `config`.
fn frames_with(config: PlusConfig, packets: &[Vec<u8>]) -> Vec<(FrameKind, Vec<u8>)> {
    let mut c = PlusCompressor::new(config);
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
fn a_stride_learnt_as_the_start_ends_goes_in_an_ir_then_in_two_notes() {
    let packets: Vec<_> = (0..40).map(|i| bulk(i, u32::MAX, u32::MAX)).collect();
    let frames = frames(&packets);
    let (notes, irs) = notes_and_irs(&frames);
    // The start's three IRs and a CO frame; the stride, learnt from the first two 1448-byte
    // segments (packet 4, the start only just over), in an IR, then in two CO frames with a
    // note.
    assert_eq!((&irs[..], &notes[..]), (&[0, 1, 2, 4][..], &[5, 6][..]));
    assert!(deliver(&packets, &frames).iter().all(Result::is_ok));
    // After the notes the numbers go scaled: a frame is cheaper than a note's.
    let last = frames.last().unwrap().1.len() - 1448;
    let note = frames[notes[0]].1.len() - 1448;
    assert!(last + 3 <= note, "{last} against {note}");
}

#[test]
fn a_later_stride_goes_in_three_notes_not_in_irs() {
    let packets: Vec<_> = (0..60).map(|i| bulk(i, 30, u32::MAX)).collect();
    let frames = frames(&packets);
    let (notes, irs) = notes_and_irs(&frames);
    // 724 divides the stride of 1448: adopted at once, at packet 30, in three notes.
    assert_eq!(irs, [0, 1, 2, 4]);
    assert_eq!(notes, [5, 6, 30, 31, 32]);
    assert!(deliver(&packets, &frames).iter().all(Result::is_ok));
}

#[test]
fn an_ip_id_behaviour_change_goes_in_notes() {
    let packets: Vec<_> = (0..60).map(|i| bulk(i, u32::MAX, 30)).collect();
    let frames = frames(&packets);
    let (notes, irs) = notes_and_irs(&frames);
    assert_eq!(irs, [0, 1, 2, 4]);
    let later: Vec<_> = notes.iter().filter(|&&i| i >= 30).collect();
    assert_eq!(later.len(), 3, "notes at {notes:?}");
    assert!(deliver(&packets, &frames).iter().all(Result::is_ok));
}

#[test]
fn a_note_that_does_not_verify_leaves_the_context_as_it_was() {
    let packets: Vec<_> = (0..40).map(|i| bulk(i, u32::MAX, u32::MAX)).collect();
    let frames = frames(&packets);
    let (notes, _) = notes_and_irs(&frames);
    let mut d = PlusDecompressor::new(config());
    let mut out = Vec::new();
    let mut forged_at = None;
    for (i, (kind, frame)) in frames.iter().enumerate() {
        let result = d.decompress(*kind, frame, &mut out);
        if forged_at.is_some_and(|f| f + 1 == i) {
            // The context refused a frame: the next one is held, and delivered late with the
            // one after it (spec section 5.8).
            assert_eq!(result, Err(DropReason::Held), "frame {i}");
            continue;
        }
        assert_eq!(result, Ok(()), "frame {i}");
        assert_eq!(out, packets[i]);
        let mut late = Vec::new();
        if forged_at.is_some_and(|f| f + 2 == i) {
            assert!(
                d.take_late(&mut late).is_some() && late == packets[i - 1],
                "frame {i}"
            );
        } else {
            assert!(d.take_late(&mut late).is_none(), "frame {i}");
        }
        if i == *notes.last().unwrap() {
            forged_at = Some(i);
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

#[test]
fn without_context_requests_a_later_stride_restarts_with_irs() {
    // No reverse channel: a flow whose start was lost could wait for the periodic refresh, so
    // the change goes in three IR frames, which set such a flow up; the start's spread IR
    // frame follows 15 CO frames later, and its first late one 31 CO frames after the change's.
    let mut config = config();
    config.repair.context_requests = false;
    let packets: Vec<_> = (0..70).map(|i| bulk(i, 30, u32::MAX)).collect();
    let (notes, irs) = notes_and_irs(&frames_with(config, &packets));
    assert_eq!(irs, [0, 1, 2, 4, 5, 6, 22, 30, 31, 32, 64]);
    // Only wide frames carry a note (spec section 7), for a flow whose restart was lost.
    assert_eq!(notes, [61], "notes at {notes:?}");
}

#[test]
fn without_context_requests_the_first_refresh_comes_early() {
    // A flow whose start (a restart at 4 for its stride; without requests, the spread IR frame
    // at 22 and the late ones at 54 and 86) a burst took all of waits 64 packets for its first
    // refresh, not 512; later refreshes every 512.
    let packets: Vec<_> = (0..700).map(|i| bulk(i, u32::MAX, u32::MAX)).collect();
    let mut config = config();
    let (_, asking) = notes_and_irs(&frames_with(config.clone(), &packets));
    config.repair.context_requests = false;
    let (_, alone) = notes_and_irs(&frames_with(config, &packets));
    assert_eq!(asking, [0, 1, 2, 4, 517], "with requests");
    assert_eq!(alone, [0, 1, 2, 4, 5, 6, 22, 54, 86, 151, 664], "without");
}

#[test]
fn without_context_requests_a_receipt_for_a_packet_under_the_new_stride_drops_the_wide_notes() {
    // As above: the stride changes at packet 30, and the first wide frame after it (61)
    // carries a note, for a flow whose restart was lost. A reference receipt (passed on by the
    // sibling decompressor before packet 40 goes) that names packet 35, coded under the new
    // stride, shows that the far end holds it: no note. One that names packet 29, coded under
    // the old one, shows nothing of the new stride: the note still goes.
    let mut config = config();
    config.repair.context_requests = false;
    let packets: Vec<_> = (0..70).map(|i| bulk(i, 30, u32::MAX)).collect();
    for (named, notes) in [(35, [].as_slice()), (29, [61].as_slice())] {
        let note = receipt_naming(&packets[named], 0);
        let mut c = PlusCompressor::new(config.clone());
        let mut frame = Vec::new();
        let frames: Vec<_> = packets
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i == 40 {
                    c.sibling_note(&note);
                }
                let kind = c.compress(p, &mut frame);
                (kind, frame.clone())
            })
            .collect();
        let (found, _) = notes_and_irs(&frames);
        assert_eq!(found, notes, "a receipt for packet {named}");
    }
}
