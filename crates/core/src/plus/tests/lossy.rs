//! Without context requests, on a link known to lose frames: how the link becomes known as one
//! (frames refused, packets late rather than lost), and what a context then sends (early
//! refreshes, wide frames more often, and after a burst numbers that reach further).

use alloc::vec::Vec;
use core::time::Duration;

use super::{all_co, one_way, pure_ack, segment_from, Receiver, HELD_THEN_LATE};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::format::{self, kind};
use crate::plus::mirror::{self, Note};
use crate::plus::{cids, PlusCompressor, PlusDecompressor};

/// The loss notes a decompressor gives its sibling compressor.
fn lossy_notes(d: &mut PlusDecompressor) -> usize {
    let mut note = Vec::new();
    let mut notes = 0;
    while d.take_sibling_note(&mut note) {
        notes += usize::from(mirror::parse_note(&note) == Some(Note::Lossy));
    }
    notes
}

/// A compressor whose sibling decompressor gave it `note`.
fn told(note: Note) -> PlusCompressor {
    let mut c = PlusCompressor::new(one_way());
    let mut bytes = Vec::new();
    mirror::put_note(&note, &mut bytes);
    c.sibling_note(&bytes);
    c
}

/// A compressor that its sibling decompressor told the link loses frames.
fn lossy_compressor() -> PlusCompressor {
    told(Note::Lossy)
}

#[test]
fn refused_frames_tell_the_sibling_compressor_the_link_loses_frames() {
    // A burst took a flow's start (its IR frames and the spread one): the decompressor refuses
    // the CO frames after it for want of a context. Long bursts skip IP-IDs by too much to
    // count as gaps, but eight refusals make the note.
    let mut c = PlusCompressor::new(one_way());
    let mut d = PlusDecompressor::new(one_way());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let (mut refused, mut notes) = (0, 0);
    for i in 0..40u32 {
        let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
        let kind = c.compress(&p, &mut frame);
        if all_co(&[kind.to_byte()]) {
            let r = d.decompress(kind, &frame, &mut out);
            if r.is_err() {
                assert_eq!(r, Err(DropReason::NoContext), "packet {i}");
                refused += 1;
            }
            notes += lossy_notes(&mut d);
            assert_eq!(notes > 0, refused >= 8, "packet {i}: {refused} refused");
        }
    }
    assert!(refused >= 8, "{refused} refused");
}

#[test]
fn ir_frames_that_skip_ip_ids_tell_of_loss_too() {
    // Short flows of three packets, each sent as an IR frame (a start on a clean link), the
    // second of each lost: a flow's third frame skips an IP-ID. No CO frame ever arrives to
    // show the gap; the IR frames show it, and eight gaps make the note (given with the ninth
    // flow's frames). Nothing lost: no note.
    for lose in [true, false] {
        let mut c = PlusCompressor::new(one_way());
        let mut d = PlusDecompressor::new(one_way());
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let mut notes = 0;
        for flow in 0..12u16 {
            for i in 0..3u32 {
                let id = 100 * flow + i as u16;
                let p = segment_from(6000 + flow, 1000 + 256 * i, id, 10_000 + i);
                let kind = c.compress(&p, &mut frame);
                assert!(
                    !all_co(&[kind.to_byte()]),
                    "flow {flow}, packet {i}: {kind:?}"
                );
                if lose && i == 1 {
                    continue;
                }
                assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
                assert_eq!(out, p);
                notes += lossy_notes(&mut d);
            }
            assert_eq!(notes > 0, lose && flow >= 8, "flow {flow}, lost: {lose}");
        }
    }
}

#[test]
fn packets_that_come_late_are_no_loss() {
    // A flow whose packets come out of order (every fourth pair swapped) skips an IP-ID at
    // each swap, and goes back for the packet it skipped: no loss note. Dropping the packet
    // instead of delivering it late is a loss, and makes the note.
    for late in [true, false] {
        let mut c = PlusCompressor::new(one_way());
        let mut d = PlusDecompressor::new(one_way());
        let (mut out, mut notes) = (Vec::new(), 0);
        let frames: Vec<_> = (0..120u32)
            .map(|i| {
                let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
                let mut frame = Vec::new();
                (c.compress(&p, &mut frame), frame)
            })
            .collect();
        let mut order: Vec<usize> = (0..frames.len()).collect();
        for at in (10..order.len() - 1).step_by(4) {
            order.swap(at, at + 1);
        }
        for (n, &i) in order.iter().enumerate() {
            let swapped_back = n > 10 && i + 1 == order[n - 1];
            if !late && swapped_back {
                continue;
            }
            let (kind, frame) = &frames[i];
            let r = d.decompress(*kind, frame, &mut out);
            assert!(r.is_ok() || r == Err(DropReason::Held), "packet {i}: {r:?}");
            notes += lossy_notes(&mut d);
        }
        assert_eq!(notes > 0, !late, "late: {late}");
    }
}

/// The IR frames a compressor `c` sends after a context's start, of `packets` of a bulk flow,
/// by packet and time: one packet every `step` (or no time set, so no refresh by time).
fn irs_after_start(mut c: PlusCompressor, packets: u32, step: Option<Duration>) -> Vec<(u32, f64)> {
    let mut frame = Vec::new();
    let mut irs = Vec::new();
    let mut co = 0;
    for i in 0..packets {
        let now = step.map(|step| step * i);
        if let Some(now) = now {
            c.set_time(now);
        }
        let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
        let kind = c.compress(&p, &mut frame);
        if all_co(&[kind.to_byte()]) {
            co += 1;
        } else if co > 0 {
            irs.push((i, now.unwrap_or_default().as_secs_f64()));
        }
    }
    irs
}

/// The times (s) of the IR frames a context sends after its start, one packet every 50 ms for
/// 12 s, by a compressor `c`.
fn refresh_times(c: PlusCompressor) -> Vec<f64> {
    let irs = irs_after_start(c, 240, Some(Duration::from_millis(50)));
    irs.into_iter().map(|(_, t)| t).collect()
}

#[test]
fn on_a_link_known_to_lose_frames_a_context_sends_early_refreshes_besides_the_periodic_ones() {
    // On a clean link: the spread IR frame (after 15 CO frames), the two late spread ones (31
    // CO frames after the one before each; no receipt stops them here) and the first refresh
    // (after 64 compressed packets). On a lossy one, after a longer start (to 0.35 s): besides
    // the spread one, IR frames 0.5, 1, 2 and 4 s after the IR frame before (0.85, 2.65, 4.65,
    // 11.9), the spread one 15 CO frames after the first of them (1.65), no late ones, and the
    // first refresh still 64 packets after the last IR frame (7.9). After a burst note the same
    // early refreshes, and the start's first spread IR frame 4 CO frames after its back-to-back
    // ones (0.4), and refreshes every 64 packets (7.95, 11.2).
    let clean = refresh_times(PlusCompressor::new(one_way()));
    assert_eq!(clean, [0.95, 2.55, 4.15, 7.4], "clean");
    let lossy = refresh_times(lossy_compressor());
    assert_eq!(lossy, [0.85, 1.65, 2.65, 4.65, 7.9, 11.9], "lossy");
    let bursty = refresh_times(told(Note::Bursty));
    assert_eq!(bursty, [0.4, 0.9, 1.7, 2.7, 4.7, 7.95, 11.2], "bursty");
}

/// The packets (by index) a context sends as IR frames after its start, of 1500 with no time
/// set (so no refresh by time), by a compressor `c`.
fn refresh_packets(c: PlusCompressor) -> Vec<u32> {
    let irs = irs_after_start(c, 1500, None);
    irs.into_iter().map(|(i, _)| i).collect()
}

#[test]
fn on_a_link_known_to_lose_frames_refresh_periods_double_and_after_a_burst_stay_short() {
    // On a clean link the spread IR frame, the late spread ones 32 packets apart, the first
    // refresh 64 compressed packets later and then one every 512. On a link known to lose frames the periods double from 64 to 512;
    // on one known to lose bursts of them, they stay 64.
    assert_eq!(
        refresh_packets(PlusCompressor::new(one_way())),
        [19, 51, 83, 148, 661, 1174],
        "clean"
    );
    for (note, last) in [
        (Note::Lossy, [64, 128, 256, 512]),
        (Note::Bursty, [64, 64, 64, 64]),
    ] {
        let irs = refresh_packets(told(note));
        let periods: Vec<u32> = irs.windows(2).map(|w| w[1] - w[0] - 1).collect();
        assert!(periods.ends_with(&last), "{note:?}: {irs:?}");
    }
}

#[test]
fn on_a_link_known_to_lose_frames_wide_frames_come_more_often() {
    // IR frames (the start's, the spread one, refreshes) start the count again too.
    let quiet = |mut c: PlusCompressor| {
        let mut frame = Vec::new();
        for i in 0..300u32 {
            let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
            c.compress(&p, &mut frame);
        }
        c.stats().wide_frames
    };
    let (clean, lossy) = (
        quiet(PlusCompressor::new(one_way())),
        quiet(lossy_compressor()),
    );
    let expected = |every: u32, co: u64| co / u64::from(every + 1);
    assert!(clean.abs_diff(expected(28, 280)) <= 1, "clean: {clean}");
    assert!(lossy.abs_diff(expected(12, 280)) <= 2, "lossy: {lossy}");
    // After a burst note a refresh every 64 packets starts the count again: 4 wide frames in
    // each 65 packets.
    let bursty = quiet(told(Note::Bursty));
    assert!(bursty.abs_diff(280 / 65 * 4) <= 2, "bursty: {bursty}");
}

#[test]
fn frames_that_do_not_parse_are_no_loss() {
    // A set-up context, then CO frames of its CID whose scaling note is malformed (K without
    // T, format 5.3: garbage, not a lost reference): refused as malformed, and no loss note
    // however many. (A frame cut short is context damage: it may have been coded against
    // another context, format 5.8.)
    let mut c = PlusCompressor::new(one_way());
    let mut d = PlusDecompressor::new(one_way());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    for i in 0..20u32 {
        let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
        let kind = c.compress(&p, &mut frame);
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "packet {i}");
    }
    let extended = FrameKind::Profile(crate::plus::format::CO | 0x20);
    for _ in 0..40 {
        // A long extension with M alone, its second octet with N alone, then the note.
        let r = d.decompress(extended, &[0x81, 0x10, 0x20, 0, 0, 0], &mut out);
        assert_eq!(r, Err(DropReason::Malformed));
    }
    assert_eq!(lossy_notes(&mut d), 0);
}

/// The size class of the sequence number in a CO frame (the kind byte's S), if it is one.
fn seq_class(kind: FrameKind, frame: &[u8]) -> Option<u8> {
    let k = kind.to_byte();
    let co = if k >= format::CO {
        k
    } else {
        cids::read(k, frame)?.1
    };
    (co >= format::CO).then_some(co >> kind::S_SHIFT & 0x03)
}

#[test]
fn after_a_burst_longer_than_the_window_the_scaled_sequence_number_reaches_further() {
    // A bulk flow (a sequence stride of 256, a counter IP-ID) loses 20 frames in a row: the
    // frame after them jumped, and the decompressor holds it and tells its sibling compressor
    // of the burst, once. Passed to the compressor (the link loses such bursts going out too),
    // the note takes its CO frames from 6 LSBs of the scaled sequence number (class 1, 55
    // packets ahead) to 8 (class 2, 223): a burst of up to 128 packets then decodes right and
    // shows as a jump, where it could otherwise decode near the last packet delivered.
    let mut c = PlusCompressor::new(one_way());
    let mut d = PlusDecompressor::new(one_way());
    let (mut frame, mut out, mut note) = (Vec::new(), Vec::new(), Vec::new());
    let mut classes = Vec::new();
    let mut bursts = 0;
    for i in 0..400u32 {
        let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i / 8);
        let kind = c.compress(&p, &mut frame);
        if (100..120).contains(&i) {
            continue;
        }
        let r = d.decompress(kind, &frame, &mut out);
        assert_eq!(r.is_err(), i == 120, "packet {i}: {r:?}");
        while d.take_sibling_note(&mut note) {
            if mirror::parse_note(&note) == Some(Note::Bursty) {
                bursts += 1;
                c.sibling_note(&note);
            }
        }
        assert_eq!(bursts, usize::from(i >= 120), "packet {i}");
        classes.push((i, seq_class(kind, &frame)));
    }
    let of = |from: u32, to: u32| {
        classes
            .iter()
            .filter(move |&&(i, _)| (from..to).contains(&i))
            .filter_map(|&(_, class)| class)
    };
    // Before the burst, 6 LSBs but in the wide frames; after it, never fewer than 8.
    let six = of(40, 100).filter(|&class| class == 1).count();
    assert!(six >= 55, "{six} of 60: {classes:?}");
    assert!(of(121, 400).all(|class| class >= 2), "{classes:?}");
}

#[test]
fn after_a_burst_a_retransmission_the_decompressor_took_as_its_reference_is_in_the_horizon() {
    // Bursts take packets 100-104 and 106-111 of a bulk flow. Between them two retransmissions
    // arrive, each within 8 IP-IDs of the packet delivered before, so no jump shows: the second
    // (of the segment of packet 99, the decompressor's reference) ties with the reference and
    // becomes it, with its own IP-ID offset, 13 above the flow's. The compressor, which sent 8
    // newer packets, keeps that retransmission in its window with the flow's offset, so that the
    // frames after it fail against the decompressor's reference. The horizon keeps the
    // retransmission's own offset, and the next wide frame (28 CO frames on) sets the
    // reference again, with or without a burst note (the first burst of a link comes before
    // any); without it, nothing did before the periodic refresh.
    for c in [told(Note::Bursty), PlusCompressor::new(one_way())] {
        let refused = refused_after_a_retransmission_took_the_reference(c);
        assert!(refused <= 30, "{refused} refused");
    }
}

/// How many frames of a bulk flow `c` compresses a decompressor refuses in a row after bursts
/// that leave it a retransmission as its reference (see the test above).
fn refused_after_a_retransmission_took_the_reference(mut c: PlusCompressor) -> usize {
    let mut d = PlusDecompressor::new(one_way());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let seq = |segment: u32| 1000 + 256 * segment;
    let mut id = 0u16;
    let mut send = |c: &mut PlusCompressor, d: &mut PlusDecompressor, segment: u32, lost: bool| {
        let p = segment_from(5001, seq(segment), id, 10_000 + u32::from(id) / 8);
        id += 1;
        let kind = c.compress(&p, &mut frame);
        if lost {
            return None;
        }
        let r = d.decompress(kind, &frame, &mut out);
        Some(r.is_ok() || d.take_late(&mut out).is_some())
    };
    // (segment, lost): the flow, the bursts, and the two retransmissions between them.
    let steps = (0..100)
        .map(|segment| (segment, false))
        .chain((100..105).map(|segment| (segment, true)))
        .chain([(90, false)])
        .chain((105..111).map(|segment| (segment, true)))
        .chain([(99, false)]);
    for (i, (segment, lost)) in steps.enumerate() {
        let delivered = send(&mut c, &mut d, segment, lost);
        assert!(
            lost || delivered == Some(true),
            "step {i}, segment {segment}"
        );
    }
    (111..300)
        .map(|segment| send(&mut c, &mut d, segment, false))
        .take_while(|&delivered| delivered == Some(false))
        .count()
}

#[test]
fn after_a_burst_note_a_start_spreads_two_ir_frames() {
    // The start's IR frames go back to back; a burst takes them all as easily as one. After a
    // burst note, one more IR frame follows 4 CO frames after them, before the spread one
    // (SPREAD_AFTER_CO CO frames on), so that a context whose start a burst took is set up
    // within a few packets of its flow. Without a burst note, the late spread IR frames follow,
    // LATE_SPREAD_AFTER_CO CO frames after the one before each (the first within these 60
    // packets); after one, none (the link is known to lose frames).
    let irs = |mut c: PlusCompressor| {
        let mut frame = Vec::new();
        let kinds: Vec<u8> = (0..60u32)
            .map(|i| {
                let p = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
                c.compress(&p, &mut frame).to_byte()
            })
            .collect();
        let at: Vec<usize> = (0..kinds.len())
            .filter(|&i| !all_co(&kinds[i..=i]))
            .collect();
        // The positions after the last of the back-to-back ones.
        let run = at.iter().zip(1..).take_while(|&(&i, n)| i + 1 == n).count();
        at[run..]
            .iter()
            .map(|i| i - at[run - 1])
            .collect::<Vec<_>>()
    };
    let spread = crate::plus::compressor::starts::SPREAD_AFTER_CO as usize;
    let late = crate::plus::compressor::starts::LATE_SPREAD_AFTER_CO as usize;
    assert_eq!(
        irs(PlusCompressor::new(one_way())),
        [spread + 1, spread + 1 + late + 1]
    );
    assert_eq!(irs(told(Note::Bursty)), [5, 5 + spread + 1]);
}

#[test]
fn after_a_burst_note_an_ack_flows_numbers_and_timestamp_reach_across_a_long_burst() {
    // A bulk receiver's ACKs (an acknowledgment stride, a counter IP-ID) lose 120 in a row,
    // over which the timestamp moves 3,000 ticks. After a burst note, the compressor codes the
    // acknowledgment number to reach 128 ACKs ahead and the timestamp at least 1,024 ticks
    // (here its 12-bit code), not only the IP-ID: the first ACK after the burst decodes
    // against the last one delivered (and is held, as it jumped), and goes out late with the
    // next. Without either reach, that number is periods short, which no trial makes up, and
    // every frame after the burst is refused.
    let mut c = told(Note::Bursty);
    let mut d = Receiver::new(one_way());
    let mut frame = Vec::new();
    let mut ts = 10_000u32;
    let mut seen = Vec::new();
    for i in 0..323u32 {
        ts += if (200..320).contains(&i) { 25 } else { 1 };
        let p = pure_ack(1_000 + 2896 * i, i as u16, ts, 500, &[]);
        let kind = c.compress(&p, &mut frame);
        if (200..320).contains(&i) {
            continue;
        }
        let r = d.receive(kind, &frame, &p);
        if i < 200 {
            assert_eq!(r, (Ok(()), false), "packet {i}");
        } else {
            seen.push(r);
        }
    }
    assert_eq!(seen, HELD_THEN_LATE, "{seen:?}");
}

#[test]
fn a_burst_note_gives_a_non_tcp_start_one_more_ir_n() {
    // A link that loses frames in bursts seldom skips enough IP-IDs for a loss note: the
    // burst note alone tells the non-TCP contexts that their starts may be lost.
    let irs = |note: Option<Note>| {
        let mut c = note.map_or_else(|| PlusCompressor::new(one_way()), told);
        let mut frame = Vec::new();
        (0..8u16)
            .filter(|&id| {
                c.compress(&super::dns(id), &mut frame)
                    == FrameKind::Profile(crate::plus::other::IR_N)
            })
            .count()
    };
    assert_eq!(irs(Some(Note::Bursty)), irs(None) + 1);
    assert_eq!(irs(Some(Note::Bursty)), irs(Some(Note::Lossy)));
}

/// Whether `kind` is a CO frame's (no IR frame's).
fn is_co(kind: FrameKind) -> bool {
    matches!(kind, FrameKind::Profile(k) if all_co(&[k]))
}

#[test]
fn after_a_burst_note_a_start_whose_ir_frames_a_burst_took_goes_late_from_its_first_co_frame() {
    // A burst takes every IR frame of a start up to its last spread one: the CO frames between
    // them are refused for want of a context, and kept. Once that IR frame arrives they are
    // decoded, the newest first, each against the packet after it; each goes late once the
    // frame before it verifies against it, and the oldest, which none confirms, only because
    // after a burst note the start's CO frames carry the 16-bit check.
    let packet = |i: u32| segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i / 8);
    let mut frame = Vec::new();
    // The start's IR frames: its back-to-back ones and its spread ones.
    let mut dry = told(Note::Bursty);
    let irs = (0..40)
        .filter(|&i| !is_co(dry.compress(&packet(i), &mut frame)))
        .count();
    assert_eq!(irs, 6, "four back to back, two spread");
    let mut c = told(Note::Bursty);
    let mut d = PlusDecompressor::new(one_way());
    let (mut out, mut late) = (Vec::new(), Vec::new());
    let (mut sent, mut got, mut seen) = (Vec::new(), Vec::new(), 0);
    for i in 0..40u32 {
        let p = packet(i);
        let kind = c.compress(&p, &mut frame);
        if is_co(kind) {
            sent.push(p);
        } else {
            seen += 1;
            if seen < irs {
                continue;
            }
        }
        if d.decompress(kind, &frame, &mut out).is_ok() {
            while d.take_late(&mut late).is_some() {
                got.push(late.clone());
            }
            got.push(out.clone());
        }
    }
    got.retain(|p| sent.contains(p));
    assert!(sent.len() > 10, "{} CO frames", sent.len());
    let index = |p: &Vec<u8>| sent.iter().position(|s| s == p);
    assert_eq!(
        got.iter().map(index).collect::<Vec<_>>(),
        (0..sent.len()).map(Some).collect::<Vec<_>>(),
        "every CO packet once, in order"
    );
}

/// The frame lengths of a bulk flow after a burst note, each packet from 100 on changed by
/// `change` (its checksum filled in again).
fn lengths_after_a_burst_note(change: impl Fn(&mut Vec<u8>, u32)) -> Vec<usize> {
    let mut c = told(Note::Bursty);
    let mut frame = Vec::new();
    (0..200u32)
        .map(|i| {
            let mut p = super::segment(1000 + 1448 * i, 77, i as u16, 10_000 + i, 1448);
            if i >= 100 {
                change(&mut p, i);
                super::fix_tcp_checksum(&mut p);
            }
            c.compress(&p, &mut frame);
            frame.len()
        })
        .collect()
}

/// Whether the frames of `moved` are longer than those of `plain` from 20 to 29 frames after
/// the change at 100 (while the window holds packets from before it, 8 to 16, and then 32
/// frames more), and as long from 60 on but for a few (wide frames, whose horizon holds the
/// packets from before the change longer).
fn wider_for_32_frames(plain: &[usize], moved: &[usize]) {
    assert_eq!(plain[..100], moved[..100]);
    assert!(
        (120..130).all(|i| moved[i] > plain[i]),
        "{:?}\n{:?}",
        &plain[100..200],
        &moved[100..200]
    );
    let same = (160..200).filter(|&i| moved[i] == plain[i]).count();
    assert!(same >= 30, "{same} of 40");
}

#[test]
fn after_a_burst_note_the_echo_replys_code_does_not_narrow_for_32_frames() {
    // The echo reply falls 300 ticks behind at packet 100 and keeps that gap: the frames code
    // the gap wider from there.
    let plain = lengths_after_a_burst_note(|_, _| {});
    let moved = lengths_after_a_burst_note(|p, i| {
        let ecr = (10_000 + i) / 2 - 300;
        p[48..52].copy_from_slice(&ecr.to_be_bytes());
    });
    wider_for_32_frames(&plain, &moved);
}

#[test]
fn after_a_burst_note_the_window_goes_for_32_frames_after_it_moved() {
    // The window moves at packet 100 and stays: the frames carry it while the window holds
    // packets of the old one, and then for 32 frames more.
    let plain = lengths_after_a_burst_note(|_, _| {});
    let moved =
        lengths_after_a_burst_note(|p, _| p[34..36].copy_from_slice(&0x0300u16.to_be_bytes()));
    wider_for_32_frames(&plain, &moved);
}

#[test]
fn on_a_link_known_to_lose_frames_a_flow_that_shows_no_jump_sends_the_check() {
    // An IPv6 flow (no IP-ID) whose segments are all of different sizes under 256 octets (no
    // stride): nothing shows that its decompressor missed packets, so a frame decoded against
    // a reference a burst left stale would pass on its 16-bit checksum alone. Once the link is
    // known to lose frames, each of its CO frames carries the check (4 octets more: the check
    // and the long extension that sets V); on a link not known to, none does. Both are
    // delivered whole.
    let frames = |mut c: PlusCompressor| {
        let mut d = PlusDecompressor::new(one_way());
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let mut seq = 1000u32;
        (0..40u32)
            .map(|i| {
                let payload = 20 + (i * 37 % 200) as usize;
                let p = super::segment_v6(5001, seq, 77, payload);
                seq += payload as u32;
                let kind = c.compress(&p, &mut frame);
                assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "segment {i}");
                assert_eq!(out, p);
                (kind, frame.len())
            })
            .collect::<Vec<_>>()
    };
    let (plain, lossy) = (
        frames(PlusCompressor::new(one_way())),
        frames(lossy_compressor()),
    );
    let co = |(kind, _): &(FrameKind, usize)| all_co(&[kind.to_byte()]);
    let both: Vec<(usize, usize)> = plain
        .iter()
        .zip(&lossy)
        .filter(|(a, b)| co(a) && co(b))
        .map(|(a, b)| (a.1, b.1))
        .collect();
    assert!(both.len() >= 20, "{plain:?} {lossy:?}");
    assert!(both.iter().all(|&(a, b)| b == a + 4), "{both:?}");
}
