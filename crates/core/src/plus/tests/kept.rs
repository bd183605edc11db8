//! CO frames refused for want of a context or on their checksum, kept and decoded late once a
//! frame of the context is delivered (format section 5.9).

use alloc::vec::Vec;

use super::{fill_checksums, one_way, pure_ack, segment};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::{PlusCompressor, PlusDecompressor};

/// What became of each packet sent after the lost ones: refused (and why), delivered, or
/// delivered late after a later frame.
#[derive(Debug, Default)]
struct Fates {
    /// The packets (by index) refused for want of a context.
    no_context: Vec<usize>,
    /// The packets (by index) delivered late, in the order they went; `None` for a late
    /// packet that is none of those sent.
    late: Vec<Option<usize>>,
    /// The packets (by index) delivered in time.
    delivered: Vec<usize>,
    /// The packets (by index) refused on their checksum (against another flow's context, or
    /// a reference a burst took).
    damaged: Vec<usize>,
    /// The packets (by index) held for confirmation.
    held: Vec<usize>,
}

/// Sends `count` packets of `flow` through a `taroc-plus-u` compressor and loses the start's
/// back-to-back IR frames (every frame before the first of another kind) and the frames of
/// `burst`. With `before`, the decompressor meets that flow's first packet, from another
/// compressor under the same CID, once ten frames were refused.
fn run(
    flow: impl Fn(u32) -> Vec<u8>,
    count: u32,
    burst: core::ops::Range<usize>,
    before: Option<&dyn Fn(u32) -> Vec<u8>>,
) -> Fates {
    let mut c = PlusCompressor::new(one_way());
    let mut d = PlusDecompressor::new(one_way());
    let (mut frame, mut out, mut late) = (Vec::new(), Vec::new(), Vec::new());
    let packets: Vec<Vec<u8>> = (0..count).map(&flow).collect();
    let frames: Vec<(FrameKind, Vec<u8>)> = packets
        .iter()
        .map(|p| (c.compress(p, &mut frame), frame.clone()))
        .collect();
    let lost = frames.iter().take_while(|(k, _)| *k == frames[0].0).count();
    // Another flow whose context the decompressor sets up, under the same CID (both
    // compressors' first), after this flow's frames were kept.
    let mut other = PlusCompressor::new(one_way());
    let mut fates = Fates::default();
    for (i, (kind, f)) in frames.iter().enumerate().skip(lost) {
        if burst.contains(&i) {
            continue;
        }
        if let (Some(before), true) = (before, fates.no_context.len() == 10) {
            let p = before(0);
            let kind = other.compress(&p, &mut frame);
            assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
            while d.take_late(&mut late).is_some() {
                fates.late.push(packets.iter().position(|p| *p == late));
            }
        }
        match d.decompress(*kind, f, &mut out) {
            Ok(()) => {
                assert_eq!(out, packets[i], "packet {i}");
                fates.delivered.push(i);
            }
            Err(DropReason::NoContext) => fates.no_context.push(i),
            Err(DropReason::ChecksumMismatch) => fates.damaged.push(i),
            Err(DropReason::Held) => fates.held.push(i),
            Err(other) => panic!("packet {i} refused as {other:?}"),
        }
        while d.take_late(&mut late).is_some() {
            fates.late.push(packets.iter().position(|p| *p == late));
        }
    }
    fates
}

/// A bulk flow's 1448-byte segments, the timestamp ticking every fourth.
fn bulk(i: u32) -> Vec<u8> {
    segment(1000 + 1448 * i, 77, 500 + i as u16, 10_000 + i / 4, 1448)
}

/// Pure ACKs of such a flow, the timestamp ticking every third.
fn acks(i: u32) -> Vec<u8> {
    pure_ack(5000 + 1448 * i, 300 + i as u16, 20_000 + i / 3, 500, &[])
}

#[test]
fn frames_refused_for_want_of_a_context_go_late_once_an_ir_frame_sets_it_up() {
    for (name, flow) in [("bulk", &bulk as &dyn Fn(u32) -> Vec<u8>), ("acks", &acks)] {
        // The start's IR frames lost: the CO frames after them are refused until the spread
        // IR frame (15 CO frames later) sets the context up.
        let fates = run(flow, 40, 0..0, None);
        let refused = &fates.no_context;
        assert!(refused.len() >= 10, "{name}: {fates:?}");
        // Every refused packet but the oldest (which no older frame confirms) goes late, the
        // oldest first, and nothing else does.
        let expected: Vec<Option<usize>> = refused[1..].iter().map(|&i| Some(i)).collect();
        assert_eq!(fates.late, expected, "{name}");
        // The flow goes on: every packet after the IR frame is delivered in time.
        let resumed = refused.last().map_or(0, |&i| i + 1);
        assert_eq!(fates.delivered, (resumed..40).collect::<Vec<_>>(), "{name}");
    }
}

#[test]
fn kept_frames_of_another_flow_never_go_late() {
    // The kept frames are the bulk flow's; the IR frame that sets their CID up is another
    // flow's (its first packet, from another compressor): none verifies against it.
    let other = |_| {
        let mut p = segment(90_000, 5, 9, 777, 100);
        p[20..22].copy_from_slice(&6000u16.to_be_bytes());
        p[10..12].fill(0);
        p[36..38].fill(0);
        fill_checksums(&mut p);
        p
    };
    let fates = run(bulk, 40, 0..0, Some(&other));
    assert_eq!(fates.no_context.len(), 10, "{fates:?}");
    // The bulk flow's frames after it fail against the other flow's context until its own
    // IR frame, which finds nothing kept: no packet goes late.
    assert!(!fates.damaged.is_empty(), "{fates:?}");
    assert!(fates.late.is_empty(), "{fates:?}");
}

#[test]
fn frames_refused_on_their_checksum_go_late_once_a_frame_verifies_again() {
    // 70 frames lost in a row, far more than the window holds: the frames after the burst
    // fail against the stale reference until one decodes (by trial, held) and the next
    // confirms it. The refused ones go late with them, in the original order, but for the
    // oldest.
    let fates = run(bulk, 160, 20..90, None);
    let (refused, held) = (&fates.damaged, &fates.held);
    assert!(refused.len() >= 10 && held.len() == 1, "{fates:?}");
    let expected: Vec<Option<usize>> = fates.no_context[1..]
        .iter()
        .chain(&refused[1..])
        .chain(held)
        .map(|&i| Some(i))
        .collect();
    assert_eq!(fates.late, expected, "{fates:?}");
    assert_eq!(fates.delivered.last(), Some(&159));
}

#[test]
fn a_held_packet_goes_late_when_the_frame_after_it_codes_a_number_wider() {
    // 12 frames lost: the first after them decodes (the window still holds its reference)
    // but jumped more than 8 packets, so it is held; the timestamp (and its echo) jumps by
    // 222 at the frame after it. That frame codes the timestamp in 9 LSBs (the compressor's
    // window still holds packets from before the burst, 224 ticks back: more than 8 LSBs
    // reach up), the held frame in 8, so it cannot vouch for the held packet's timestamp by
    // itself. The held frame, decoded in the mirrored interval of the frame after it (its 8
    // LSBs reach 223 below), rebuilds the held packet: it goes late all the same.
    let jump = |i: u32| {
        let ts = 10_000 + i / 4 + if i > 32 { 222 } else { 0 };
        let mut p = segment(1000 + 1448 * i, 77, 500 + i as u16, ts, 1448);
        p[48..52].copy_from_slice(&(ts - 5000).to_be_bytes());
        p[10..12].fill(0);
        p[36..38].fill(0);
        fill_checksums(&mut p);
        p
    };
    let fates = run(jump, 160, 20..32, None);
    assert_eq!(fates.held, [32], "{fates:?}");
    assert_eq!(fates.late.last(), Some(&Some(32)), "{fates:?}");
    assert!(!fates.late.contains(&None), "{fates:?}");
    assert_eq!(fates.delivered.last(), Some(&159));
}

#[test]
fn kept_frames_decode_past_a_retransmission_that_took_an_ip_id() {
    // 70 frames lost, as above, and a retransmission (17 segments back) among the frames
    // refused after the burst: it fails against the packet after it, whose IP-ID is one more
    // past its sequence number than the ones before it. The frames before it are decoded
    // against that packet with the IP-ID the retransmission took counted, so they go late
    // too.
    let resent = |i: u32| {
        let seq = match i {
            100 => 83,
            101.. => i - 1,
            _ => i,
        };
        segment(1000 + 1448 * seq, 77, 500 + i as u16, 10_000 + i / 4, 1448)
    };
    let fates = run(resent, 160, 20..90, None);
    let refused = &fates.damaged;
    assert!(refused.contains(&100) && refused.contains(&99), "{fates:?}");
    for i in 91..100 {
        assert!(fates.late.contains(&Some(i)), "{i}: {fates:?}");
    }
    // Nothing late that was not sent.
    assert!(!fates.late.contains(&None), "{fates:?}");
}
