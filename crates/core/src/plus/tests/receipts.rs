//! IR receipts ([`crate::plus::receipt`]): a start ends at the IR frame a receipt names, and
//! only a receipt for an IR frame of the context's current start counts.

use alloc::vec::Vec;

use super::{all_co, pair, segment_from, send};
use crate::codec::{Compressor, Decompressor};
use crate::plus::receipt::RECEIPT;
use crate::plus::{format, PlusCompressor, PlusDecompressor};

/// Sends packets `range` of the flow from port 5001, passing the decompressor's feedback back
/// if `feedback`: their kind bytes.
fn start(
    c: &mut PlusCompressor,
    d: &mut PlusDecompressor,
    range: core::ops::Range<u32>,
    feedback: bool,
) -> Vec<u8> {
    let (mut frame, mut message) = (Vec::new(), Vec::new());
    range
        .map(|i| {
            let kind = send(c, d, 5001, i, &mut frame);
            while d.take_feedback(&mut message) {
                if feedback {
                    c.handle_feedback(&message);
                }
            }
            kind
        })
        .collect()
}

#[test]
fn a_receipt_ends_a_start_at_the_ir_frame_it_names() {
    // The second packet teaches the sequence stride, which goes in an IR frame (the start had
    // only just ended); its receipt ends that too.
    let (mut c, mut d) = pair();
    let kinds = start(&mut c, &mut d, 0..6, true);
    assert_eq!(kinds[..2], [format::COMPACT_IR; 2], "{kinds:02x?}");
    assert!(all_co(&kinds[2..]), "{kinds:02x?}");
    assert_eq!(c.stats().receipts_taken, 2);
    // Without the receipts back, the start sends its three IR frames.
    let (mut c, mut d) = pair();
    let kinds = start(&mut c, &mut d, 0..6, false);
    assert_eq!(kinds[..3], [format::COMPACT_IR; 3], "{kinds:02x?}");
    assert!(all_co(&kinds[3..]), "{kinds:02x?}");
}

#[test]
fn a_start_s_repeats_get_no_receipt_of_their_own() {
    let (mut c, mut d) = pair();
    let mut frame = Vec::new();
    for i in 0..3 {
        send(&mut c, &mut d, 5001, i, &mut frame);
    }
    let mut receipts = Vec::new();
    let mut message = Vec::new();
    while d.take_feedback(&mut message) {
        receipts.push(message.clone());
    }
    // One receipt: CID 0 and the TCP checksum of the second packet, whose IR frame brought
    // the stride (a change: a receipt again, which replaced the first one's while it waited),
    // none for the third.
    let second = segment_from(5001, 1000 + 256, 1, 10_001);
    assert_eq!(receipts, [[RECEIPT, 0, second[36], second[37]]]);
}

#[test]
fn a_receipt_for_an_ir_frame_before_a_restart_counts_for_nothing() {
    let (mut c, mut d) = pair();
    let mut frame = Vec::new();
    send(&mut c, &mut d, 5001, 0, &mut frame);
    let mut stale = Vec::new();
    assert!(d.take_feedback(&mut stale));
    // A context request restarts the context (five IR frames) before the receipt arrives,
    // and after the answer's first IR frame.
    c.handle_feedback(&[crate::taroc::repair::REQUEST, 0]);
    let mut kinds = start(&mut c, &mut d, 1..2, false);
    c.handle_feedback(&stale);
    kinds.extend(start(&mut c, &mut d, 2..8, false));
    assert_eq!(kinds[..5], [format::COMPACT_IR; 5], "{kinds:02x?}");
    assert!(all_co(&kinds[5..]), "{kinds:02x?}");
    assert_eq!(c.stats().receipts_taken, 0);
}

#[test]
fn a_receipt_naming_another_cid_or_packet_counts_for_nothing() {
    let (mut c, mut d) = pair();
    let mut frame = Vec::new();
    send(&mut c, &mut d, 5001, 0, &mut frame);
    let mut receipt = Vec::new();
    assert!(d.take_feedback(&mut receipt));
    let mut other_cid = receipt.clone();
    other_cid[1] = 1;
    let mut other_packet = receipt.clone();
    other_packet[3] ^= 1;
    for wrong in [other_cid, other_packet, receipt[..3].to_vec()] {
        c.handle_feedback(&wrong);
    }
    let kinds = start(&mut c, &mut d, 1..3, false);
    assert_eq!(kinds, [format::COMPACT_IR; 2], "{kinds:02x?}");
    assert_eq!(c.stats().receipts_taken, 0);
}

#[test]
fn a_tunnelled_ir_frame_s_receipt_names_its_inner_packet() {
    // The tunnel's outer header gets its IR-N frames first; the first tunnel frame with an
    // inner IR frame gets the receipt, naming the inner packet's TCP checksum.
    let (mut c, mut d) = pair();
    let (mut frame, mut out, mut receipt) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..6 {
        let inner = segment_from(5001, 1000 + 256 * i, i as u16, 10_000 + i);
        let packet = super::tunnel::tunnel_v6(&inner);
        let kind = c.compress(&packet, &mut frame);
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
        assert_eq!(out, packet);
        if d.take_feedback(&mut receipt) {
            assert_eq!(receipt[..2], [RECEIPT, 0]);
            assert_eq!(receipt[2..], inner[36..38], "packet {i}");
            c.handle_feedback(&receipt);
            assert_eq!(c.stats().receipts_taken, 1);
            return;
        }
    }
    panic!("no receipt");
}

#[test]
fn on_a_link_that_loses_frames_a_receipt_ends_no_start() {
    // After a loss note the link loses frames: a start is seven IR frames, receipts or not.
    let (mut c, mut d) = pair();
    c.handle_feedback(&[format::LOSS_NOTE]);
    let kinds = start(&mut c, &mut d, 0..9, true);
    assert_eq!(kinds[..7], [format::COMPACT_IR; 7], "{kinds:02x?}");
    assert!(all_co(&kinds[7..]), "{kinds:02x?}");
    assert_eq!(c.stats().receipts_taken, 0);
}

#[test]
fn an_ir_r_frame_s_receipt_names_its_packet() {
    // A second flow of the same hosts starts with an IR-R against the first; its receipt
    // names the IR-R's packet, and ends its start.
    let (mut c, mut d) = pair();
    start(&mut c, &mut d, 0..12, true);
    let p = segment_from(5002, 1000, 0, 10_000);
    let (mut frame, mut out, mut receipt) = (Vec::new(), Vec::new(), Vec::new());
    let kind = c.compress(&p, &mut frame);
    assert_eq!(kind.to_byte(), format::IR_R_DEST_KEPT);
    assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
    assert!(d.take_feedback(&mut receipt));
    assert_eq!(receipt, [RECEIPT, 1, p[36], p[37]]);
    let taken = c.stats().receipts_taken;
    c.handle_feedback(&receipt);
    assert_eq!(c.stats().receipts_taken, taken + 1);
}
