//! Flow starts: a new flow replicated from a base context of its hosts, which bases qualify,
//! and how many IR frames a start sends on a lossy link (and the loss note that tells the
//! compressor so).

use alloc::vec;
use alloc::vec::Vec;

use super::{all_co, base_of_a_new_flow, config, pair, receipt_naming, segment_from, send, sends};
use crate::codec::{Compressor, Decompressor};
use crate::plus::{PlusCompressor, PlusDecompressor};

#[test]
fn a_new_flow_replicates_the_oldest_of_its_hosts_surest_contexts() {
    // A starts from full IRs, B from copies of A, then a context request for both makes each
    // start again from full IRs; each then sends eight CO frames. The decompressor is as
    // likely to hold either, and a new flow C takes the older, A (taking the newest, one lost
    // start broke each later one).
    let (mut c, mut d) = pair();
    let a: Vec<u8> = sends(&mut c, &mut d, 5001, 0..12);
    let b: Vec<u8> = sends(&mut c, &mut d, 5002, 0..12);
    assert_eq!(b[0], crate::plus::format::IR_R_DEST_KEPT, "{b:02x?}");
    c.handle_feedback(&[crate::tcp::repair::REQUEST, 0, 1]);
    let a2: Vec<u8> = sends(&mut c, &mut d, 5001, 12..25);
    let b2: Vec<u8> = sends(&mut c, &mut d, 5002, 12..25);
    for kinds in [&a2, &b2] {
        assert_eq!(
            kinds[..5],
            [crate::plus::format::COMPACT_IR; 5],
            "{kinds:02x?}"
        );
        assert!(all_co(&kinds[5..]), "{kinds:02x?}");
    }
    assert!(all_co(&a[4..]) && all_co(&b[4..]), "{a:02x?} {b:02x?}");
    assert_eq!(base_of_a_new_flow(&mut c, &mut d), 0, "A");
}

#[test]
fn a_new_flow_replicates_a_root_before_a_copy() {
    // B is a copy of A (old enough to be copied in every IR frame), which may have been lost
    // with it; though B has sent more CO frames since, C takes A, whose context rests on no
    // other.
    let (mut c, mut d) = pair();
    let a: Vec<u8> = sends(&mut c, &mut d, 5001, 0..12);
    let b: Vec<u8> = sends(&mut c, &mut d, 5002, 0..16);
    assert!(all_co(&a[4..]) && all_co(&b[4..]), "{a:02x?} {b:02x?}");
    assert_eq!(b[0], crate::plus::format::IR_R_DEST_KEPT, "{b:02x?}");
    assert_eq!(base_of_a_new_flow(&mut c, &mut d), 0, "A");
}

#[test]
fn a_start_from_a_young_base_is_all_full_irs() {
    // A has sent `co` CO frames since its IRs: with 7 it is young, and a new flow's start goes
    // as full IRs; with 8, as copies of A.
    for co in [7u32, 8] {
        let (mut c, mut d) = pair();
        let mut frame = Vec::new();
        let mut a = Vec::new();
        while a.iter().filter(|&&k| all_co(&[k])).count() < co as usize {
            a.push(send(&mut c, &mut d, 5001, a.len() as u32, &mut frame));
        }
        let b: Vec<u8> = sends(&mut c, &mut d, 5002, 0..8);
        let starts = b.iter().take_while(|&&k| !all_co(&[k])).count();
        assert!(starts >= 3 && all_co(&b[starts..]), "{b:02x?}");
        let expected = if co < 8 {
            crate::plus::format::COMPACT_IR
        } else {
            crate::plus::format::IR_R_DEST_KEPT
        };
        assert!(b[..starts].iter().all(|&k| k == expected), "{co}: {b:02x?}");
    }
}

#[test]
fn on_a_lossy_link_a_start_has_four_more_ir_frames() {
    // After a context request (for A: answered by five IRs), the link is lossy: a new flow's
    // start has four more IR frames.
    let mut clean_starts = 0;
    for lossy in [false, true] {
        let (mut c, mut d) = pair();
        let mut frame = Vec::new();
        for i in 0..12 {
            if lossy && i == 6 {
                c.handle_feedback(&[crate::tcp::repair::REQUEST, 0]);
            }
            let kind = send(&mut c, &mut d, 5001, i, &mut frame);
            if i >= 6 {
                assert_eq!(lossy && i < 11, !all_co(&[kind]), "A, packet {i}");
            }
        }
        let b: Vec<u8> = sends(&mut c, &mut d, 5002, 0..9);
        let starts = b.iter().take_while(|&&k| !all_co(&[k])).count();
        if lossy {
            assert_eq!(starts, clean_starts + 4, "{b:02x?}");
        }
        clean_starts = starts;
        assert!(all_co(&b[starts..]), "{b:02x?}");
    }
}

#[test]
fn a_decompressor_that_sees_ip_ids_skip_sends_a_loss_note() {
    // A bulk flow with a sequential IP-ID over a link that loses every `every`-th frame: with
    // one loss in 8 frames the decompressor sees 8 gaps within 128 frames and sends a loss
    // note (three copies, back to back), which turns the compressor's starts to seven IR frames; with one in 40, none; with
    // context requests off, none either.
    for (every, requests, noted) in [(8u32, true, true), (40, true, false), (8, false, false)] {
        let mut config = config();
        config.repair.context_requests = requests;
        let mut c = PlusCompressor::new(config.clone());
        let mut d = PlusDecompressor::new(config);
        let (mut frame, mut out, mut feedback) = (Vec::new(), Vec::new(), Vec::new());
        let mut notes = Vec::new();
        for i in 0..300u32 {
            let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
            let kind = c.compress(&p, &mut frame);
            if i < 20 || i % every != 0 {
                assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "packet {i}");
                assert_eq!(out, p);
            }
            while d.take_feedback(&mut feedback) {
                if feedback[0] != crate::plus::receipt::RECEIPT {
                    notes.push(feedback.clone());
                }
                c.handle_feedback(&feedback);
            }
        }
        let expected: Vec<Vec<u8>> = if noted {
            vec![vec![crate::plus::format::LOSS_NOTE]; 3]
        } else {
            Vec::new()
        };
        assert_eq!(notes, expected, "one in {every}, requests {requests}");
        let b = sends(&mut c, &mut d, 5002, 0..9);
        let starts = b.iter().take_while(|&&k| !all_co(&[k])).count();
        assert_eq!(starts >= 7, noted, "{b:02x?}");
    }
}

#[test]
fn without_requests_the_loss_note_goes_to_the_sibling_compressor() {
    // The same lossy link without context requests: nothing goes back, but the decompressor
    // tells its sibling compressor (the other direction's, at the same end), whose next start
    // then has at least seven IR frames; on a link that loses one frame in 40, no note and
    // fewer.
    for (every, noted) in [(8u32, true), (40, false)] {
        let mut config = config();
        config.repair.context_requests = false;
        let mut c = PlusCompressor::new(config.clone());
        let mut d = PlusDecompressor::new(config.clone());
        let mut sibling = PlusCompressor::new(config.clone());
        let mut far = PlusDecompressor::new(config);
        let (mut frame, mut out, mut note) = (Vec::new(), Vec::new(), Vec::new());
        let mut lossy_notes = 0;
        for i in 0..300u32 {
            let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
            let kind = c.compress(&p, &mut frame);
            if i < 20 || i % every != 0 {
                assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "packet {i}");
            }
            assert!(!d.take_feedback(&mut note), "feedback without requests");
            while d.take_sibling_note(&mut note) {
                let lossy = crate::plus::mirror::parse_note(&note);
                lossy_notes += usize::from(lossy == Some(crate::plus::mirror::Note::Lossy));
                sibling.sibling_note(&note);
            }
        }
        assert_eq!(lossy_notes > 0, noted, "one in {every}");
        let b = sends(&mut sibling, &mut far, 6001, 0..10);
        let starts = b.iter().take_while(|&&k| !all_co(&[k])).count();
        assert_eq!(starts >= 7, noted, "one in {every}: {b:02x?}");
        assert!(starts >= 3, "one in {every}: {b:02x?}");
    }
}

/// A one-way configuration: no context requests.
fn one_way() -> crate::plus::PlusConfig {
    crate::plus::PlusConfig {
        repair: crate::tcp::repair::Repair {
            context_requests: false,
            ..crate::tcp::repair::Repair::live()
        },
        ..crate::plus::PlusConfig::default()
    }
}

/// Frames with their kinds.
type Frames = Vec<(crate::codec::FrameKind, Vec<u8>)>;

/// The packets of a bulk flow, `n` of them, and the frames a one-way compressor `c` makes of
/// them (after `before` has seen each packet's index, before it is compressed).
fn one_way_frames(
    c: &mut PlusCompressor,
    n: u32,
    mut before: impl FnMut(&mut PlusCompressor, u32),
) -> (Vec<Vec<u8>>, Frames) {
    let packets: Vec<Vec<u8>> = (0..n)
        .map(|i| segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i))
        .collect();
    let frames = packets
        .iter()
        .zip(0..)
        .map(|(p, i)| {
            before(c, i);
            let mut frame = Vec::new();
            let kind = c.compress(p, &mut frame);
            (kind, frame)
        })
        .collect();
    (packets, frames)
}

/// The indexes of the frames that are not CO frames.
fn ir_indexes(frames: &Frames) -> Vec<usize> {
    let kinds: Vec<u8> = frames.iter().map(|(k, _)| k.to_byte()).collect();
    (0..kinds.len())
        .filter(|&i| !all_co(&kinds[i..=i]))
        .collect()
}

#[test]
fn without_requests_a_start_ends_with_spread_irs_that_set_up_a_context_whose_start_was_lost() {
    // One-way: the start's IR frames go back to back, then CO frames, then one more IR frame
    // after SPREAD_AFTER_CO of them, and two late ones LATE_SPREAD_AFTER_CO CO frames apart.
    // A decompressor that lost every IR frame before one of them refuses the CO frames (no
    // context) and delivers from that one on.
    let spread = crate::plus::compressor::starts::SPREAD_AFTER_CO as usize;
    let late = crate::plus::compressor::starts::LATE_SPREAD_AFTER_CO as usize;
    let (packets, frames) = one_way_frames(&mut PlusCompressor::new(one_way()), 130, |_, _| {});
    let irs = ir_indexes(&frames);
    let run = irs.iter().zip(0..).take_while(|&(&i, n)| i == n).count();
    let before = irs[run - 1];
    let spreads = [
        before + spread + 1,
        before + spread + late + 2,
        before + spread + 2 * late + 3,
    ];
    assert_eq!(irs[run..run + 3], spreads, "{irs:?}");
    for from in spreads {
        let mut d = PlusDecompressor::new(one_way());
        let mut out = Vec::new();
        for (i, (kind, frame)) in frames.iter().enumerate() {
            if irs.contains(&i) && i < from {
                continue;
            }
            let r = d.decompress(*kind, frame, &mut out);
            if i < from {
                assert!(r.is_err(), "packet {i} delivered without a context");
            } else {
                assert_eq!(r, Ok(()), "packet {i}, from {from}: {irs:?}");
                assert_eq!(&out, &packets[i], "packet {i}");
            }
        }
    }
    // With requests, no spread IR frame: the decompressor asks instead.
    let (mut c, mut d) = pair();
    let kinds: Vec<u8> = sends(&mut c, &mut d, 5001, 0..130);
    assert!(all_co(&kinds[before + 1..]), "{kinds:02x?}");
}

#[test]
fn a_receipt_that_shows_the_far_end_holding_the_context_stops_the_late_spread_irs_and_the_early_refresh(
) {
    // The far end's decompressor delivered packet 10 of the flow (a CO frame); an IR frame of
    // its compressor named it as its reference, and the sibling decompressor passes that on
    // (a reference receipt, before packet 12 goes). The far end holds the context: the late
    // spread IR frames do not go, nor the first refresh after 64 packets (the periodic one
    // comes 512 packets after the spread IR frame, which still goes). A receipt naming a packet
    // the window does not hold (another acknowledgment number) stops nothing.
    let spread = crate::plus::compressor::starts::SPREAD_AFTER_CO as usize;
    let named = segment_from(5001, 1000 + 256 * 10, 10, 10_010);
    for (ack_moved, stops) in [(0, true), (1, false)] {
        let note = receipt_naming(&named, ack_moved);
        let mut c = PlusCompressor::new(one_way());
        let (_, frames) = one_way_frames(&mut c, 560, |c, i| {
            if i == 12 {
                c.sibling_note(&note);
            }
        });
        let irs = ir_indexes(&frames);
        let run = irs.iter().zip(0..).take_while(|&(&i, n)| i == n).count();
        let after: Vec<usize> = irs[run..].iter().map(|i| i - irs[run - 1]).collect();
        if stops {
            // The spread IR frame, then the periodic refresh.
            let period = one_way().repair.refresh_packets as usize;
            assert_eq!(after, [spread + 1, spread + period + 2], "{irs:?}");
        } else {
            // The spread and late spread IR frames, then the first refresh.
            let late = crate::plus::compressor::starts::LATE_SPREAD_AFTER_CO as usize;
            let refresh = crate::tcp::repair::FIRST_REFRESH_ALONE as usize;
            let last = spread + 2 * late + 3;
            let irs_after = [spread + 1, spread + late + 2, last, last + refresh + 1];
            assert_eq!(after, irs_after, "{irs:?}");
        }
    }
}

#[test]
fn a_receipt_lets_the_wide_frames_leave_the_horizon_s_older_samples() {
    // A bulk flow whose timestamp moves 40 ticks a packet: the horizon's oldest samples (about
    // 128 packets back) lie over 5000 ticks behind, and a wide frame codes the timestamp whole.
    // A reference receipt before packet 200 names packet 195: the far end's reference is never
    // older again, so the horizon drops its samples before it (and the window its entries)
    // and the next wide frame is as short as the frames around it. A receipt whose numbers
    // are no packet of the window (its acknowledgment number one on) drops nothing. Every
    // frame still decodes at a decompressor that lost nothing.
    let packet = |i: u32| segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + 40 * i);
    // The longest CO frame after packet 200, a CO frame before it, and the window entries the
    // receipt dropped.
    let longest = |receipt: Option<u32>| {
        let note = receipt.map(|ack_moved| receipt_naming(&packet(195), ack_moved));
        let mut c = PlusCompressor::new(super::one_way());
        let mut d = PlusDecompressor::new(super::one_way());
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let mut lengths = Vec::new();
        for i in 0..260 {
            if let Some(note) = note.as_ref().filter(|_| i == 200) {
                c.sibling_note(note);
            }
            let p = packet(i);
            let kind = c.compress(&p, &mut frame);
            assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "packet {i}");
            assert_eq!(out, p);
            lengths.push((frame.len(), all_co(&[kind.to_byte()])));
        }
        let co = lengths[200..].iter().filter(|(_, co)| *co).map(|(l, _)| *l);
        let dropped = c.stats().window_receipts;
        (co.max().unwrap_or(0), lengths[199].0, dropped)
    };
    let (without, before, _) = longest(None);
    assert!(
        without >= before + 4,
        "a wide frame: {without}, before: {before}"
    );
    let (with, before, dropped) = longest(Some(0));
    assert!(with <= before, "no wider frame: {with}, before: {before}");
    assert!(dropped > 0);
    let (foreign, _, dropped) = longest(Some(1));
    assert_eq!((foreign, dropped), (without, 0));
}

/// A one-way compressor whose sibling decompressor sent `notes` (sibling notes).
fn noted(notes: &[crate::plus::mirror::Note]) -> PlusCompressor {
    let mut c = PlusCompressor::new(one_way());
    for note in notes {
        let mut bytes = Vec::new();
        crate::plus::mirror::put_note(note, &mut bytes);
        c.sibling_note(&bytes);
    }
    c
}

#[test]
fn a_link_declared_to_lose_bursts_starts_as_after_a_loss_note_and_a_burst_note() {
    // A link used one way only carries no frame back, so no note ever comes: declared to
    // lose bursts, a compressor sends a flow's IR frames where one told both notes does, and
    // the late spread IR frames too (no receipt or refusal will ever tell it anything, and a
    // long burst may take every IR frame before them); one told nothing sends fewer.
    use crate::plus::mirror::Note;
    use crate::tcp::repair::LinkLoss;
    let declared = PlusCompressor::new(crate::plus::PlusConfig {
        link_loss: LinkLoss::Bursts,
        ..one_way()
    });
    let irs = |mut c: PlusCompressor| ir_indexes(&one_way_frames(&mut c, 200, |_, _| {}).1);
    let told = irs(noted(&[Note::Lossy, Note::Bursty]));
    let declared = irs(declared);
    // The start and its spread IR frames as told; then the late ones, each LATE_SPREAD_AFTER_CO
    // CO frames after the IR frame before it, which the told compressor drops.
    let start = told
        .iter()
        .position(|&i| i > 20)
        .expect("a spread IR frame")
        + 1;
    assert_eq!(declared[..start], told[..start], "{declared:?} {told:?}");
    let after = crate::plus::compressor::starts::LATE_SPREAD_AFTER_CO as usize + 1;
    let first_late = told[start - 1] + after;
    for late in [first_late, first_late + after] {
        assert!(declared.contains(&late), "{late}: {declared:?}");
        assert!(!told.contains(&late), "{late}: {told:?}");
    }
    assert!(irs(noted(&[])).len() < told.len());
}

#[test]
fn on_a_link_known_to_lose_frames_a_base_must_have_sent_its_spread_ir_frame() {
    // A's start (IR frames back to back) may have been lost whole: on a link known to lose
    // frames, a new flow B replicates A only once A's spread IR frame, SPREAD_AFTER_CO CO
    // frames after its start, has gone too (and 8 CO frames since): else every frame of B's
    // start rests on a context the decompressor may lack. On a link not known to, 8 CO frames
    // are enough.
    use crate::plus::format::{COMPACT_IR, IR_R_DEST_KEPT};
    use crate::plus::mirror::Note;
    let spread = crate::plus::compressor::starts::SPREAD_AFTER_CO;
    let b_start = |mut c: PlusCompressor, a_co: u32| {
        let mut frame = Vec::new();
        let mut co = 0;
        let mut i = 0;
        while co < a_co {
            let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
            co += u32::from(all_co(&[c.compress(&p, &mut frame).to_byte()]));
            i += 1;
        }
        let p = segment_from(5002, 9000, 0, 10_000);
        c.compress(&p, &mut frame).to_byte()
    };
    assert_eq!(b_start(noted(&[]), 10), IR_R_DEST_KEPT);
    assert_eq!(b_start(noted(&[Note::Lossy]), 10), COMPACT_IR);
    assert_eq!(b_start(noted(&[Note::Lossy]), spread + 8), IR_R_DEST_KEPT);
}
