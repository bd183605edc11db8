//! Receipts ([`crate::plus::receipt`]): a start ends once a frame from the far end codes its
//! numbers against one of the start's IR frames' packets (a reference receipt), and only then;
//! an IR frame that sets a held flow up again ends at an IR receipt (feedback).

use alloc::vec::Vec;

use super::mirrors::{reply, send, End};
use super::segment;
use crate::codec::{Compressor, Decompressor};
use crate::plus::format;

/// A's data segment `i` (100 octets from sequence number 1000, acknowledging 77; IP-IDs from
/// 100, so that the IP-ID behaviour is sequential from the first).
fn data(i: u32) -> Vec<u8> {
    segment(1000 + 100 * i, 77, 100 + i as u16, 500 + i, 100)
}

/// B's pure ACK of A's data up to `ack`, its `n`-th.
fn ack_of(ack: u32, n: u32) -> Vec<u8> {
    reply(77, ack, 40 + n as u16, 900 + n, 0)
}

/// A sends its data segments 0 to 5, B acknowledging each right after it if `acks`: A's kind
/// bytes.
fn exchange(a: &mut End, b: &mut End, acks: bool) -> Vec<u8> {
    (0..6)
        .map(|i| {
            let (kind, _, result) = send(a, b, &data(i));
            assert_eq!(result, Ok(()));
            if acks {
                let (_, _, result) = send(b, a, &ack_of(1100 + 100 * i, i));
                assert_eq!(result, Ok(()));
            }
            kind
        })
        .collect()
}

#[test]
fn a_far_end_frame_naming_a_start_s_ir_frame_ends_the_start() {
    let (mut a, mut b) = (End::new(), End::new());
    let kinds = exchange(&mut a, &mut b, true);
    // B's first ACK starts B's flow with a mirrored IR frame whose numbers are coded against
    // A's first segment, an IR frame of A's start, named by its checksum: A's start ends there,
    // and its second segment goes CO.
    assert_eq!(kinds[0], format::COMPACT_IR, "{kinds:02x?}");
    assert!(kinds[1..].iter().all(|&k| k >= format::CO), "{kinds:02x?}");
    assert_eq!(a.c.stats().reference_receipts, 1);
    // Nothing crosses the link for it: no feedback frame at all.
    let mut feedback = Vec::new();
    assert!(!b.d.take_feedback(&mut feedback));
    // Without B's frames the start sends its three IR frames.
    let (mut a, mut b) = (End::new(), End::new());
    let kinds = exchange(&mut a, &mut b, false);
    assert_eq!(kinds[..3], [format::COMPACT_IR; 3], "{kinds:02x?}");
    assert!(kinds[3..].iter().all(|&k| k >= format::CO), "{kinds:02x?}");
    assert_eq!(a.c.stats().reference_receipts, 0);
}

#[test]
fn a_reference_to_a_packet_of_no_current_start_ends_nothing() {
    let (mut a, mut b) = (End::new(), End::new());
    exchange(&mut a, &mut b, false);
    // A context request restarts A's context: the answer's IR frames are another start, which
    // B's first frame (naming A's last segment before the request, a CO frame's) does not end;
    // on a clean link one naming an answer's IR frame would.
    a.c.handle_feedback(&[crate::tcp::repair::REQUEST, 0]);
    let kinds: Vec<u8> = (6..11).map(|i| send(&mut a, &mut b, &data(i)).0).collect();
    assert!(kinds.iter().all(|&k| k < format::CO), "{kinds:02x?}");
    assert_eq!(a.c.stats().reference_receipts, 0);
}

#[test]
fn no_reference_receipt_on_a_link_that_loses_frames() {
    let (mut a, mut b) = (End::new(), End::new());
    // A loss note makes the link one that loses frames: the start sends every IR frame due
    // (seven on such a link), named by the far end or not.
    a.c.handle_feedback(&[format::LOSS_NOTE]);
    let kinds = exchange(&mut a, &mut b, true);
    assert!(kinds.iter().all(|&k| k < format::CO), "{kinds:02x?}");
    assert_eq!(a.c.stats().reference_receipts, 0);
}

/// Sends packets `range` of the flow from port 5001 (256-octet segments: the second teaches
/// the sequence stride), passing the decompressor's feedback back if `feedback`: their kind
/// bytes.
fn start(
    c: &mut crate::plus::PlusCompressor,
    d: &mut crate::plus::PlusDecompressor,
    range: core::ops::Range<u32>,
    feedback: bool,
) -> Vec<u8> {
    let (mut frame, mut message) = (Vec::new(), Vec::new());
    range
        .map(|i| {
            let kind = super::send(c, d, 5001, i, &mut frame);
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
fn an_ir_frame_that_sets_a_held_flow_up_again_gets_an_ir_receipt() {
    // The second packet teaches the sequence stride, which goes in an IR frame (the start had
    // only just ended): that frame sets up again the flow the decompressor holds, with other
    // strides, and gets an IR receipt (a feedback frame), which ends the change's IR frames and
    // notes.
    let (mut c, mut d) = super::pair();
    let kinds = start(&mut c, &mut d, 0..6, true);
    assert_eq!(kinds[..2], [format::COMPACT_IR; 2], "{kinds:02x?}");
    assert!(kinds[2..].iter().all(|&k| k >= format::CO), "{kinds:02x?}");
    assert_eq!(c.stats().receipts_taken, 1);
    // The new flow's own start got none: without feedback, the start's three IR frames.
    let (mut c, mut d) = super::pair();
    let kinds = start(&mut c, &mut d, 0..6, false);
    assert_eq!(kinds[..3], [format::COMPACT_IR; 3], "{kinds:02x?}");
    let (mut c, mut d) = super::pair();
    let mut frame = Vec::new();
    super::send(&mut c, &mut d, 5001, 0, &mut frame);
    let mut message = Vec::new();
    assert!(
        !d.take_feedback(&mut message),
        "no receipt for a new flow's start"
    );
}

/// A's pure ACK and its 100-octet request (both at sequence number 1000), then B's reply,
/// which codes its numbers against the request (a reference receipt) if `replies`, then A's
/// pure ACKs at 1100: the CO kind bytes of A's first three CO frames, and how many window
/// entries A's compressor dropped for reference receipts.
fn request_then_acks(replies: bool) -> (Vec<u8>, u64) {
    let (mut a, mut b) = (End::new(), End::new());
    let (_, _, result) = send(&mut a, &mut b, &segment(1000, 77, 100, 500, 0));
    assert_eq!(result, Ok(()));
    let (_, _, result) = send(&mut a, &mut b, &segment(1000, 77, 101, 501, 100));
    assert_eq!(result, Ok(()));
    if replies {
        let (kind, _, result) = send(&mut b, &mut a, &reply(77, 1100, 40, 900, 0));
        assert_eq!((kind, result), (format::PACKED_IR, Ok(())));
    }
    let kinds = (0..6)
        .map(|n| {
            let (kind, _, result) = send(
                &mut a,
                &mut b,
                &segment(1100, 77 + n, 102 + n as u16, 502 + n, 0),
            );
            assert_eq!(result, Ok(()));
            kind
        })
        .filter(|&k| k >= format::CO)
        .take(3)
        .collect();
    (kinds, a.c.stats().window_receipts)
}

#[test]
fn a_reference_receipt_drops_the_window_entries_the_far_end_cannot_hold() {
    let sequence_class = |k: u8| (k >> format::kind::S_SHIFT) & 0x03;
    // B's reply names A's request: A's pure ACK before it leaves the window, and the ACKs
    // after it, whose sequence number is the request's next one, send none.
    let (kinds, dropped) = request_then_acks(true);
    assert_eq!(dropped, 1);
    assert!(
        kinds.iter().all(|&k| sequence_class(k) == 0),
        "{kinds:02x?}"
    );
    // Without the receipt the pure ACK stays, 100 below: 10 bits of sequence number.
    let (kinds, dropped) = request_then_acks(false);
    assert_eq!(dropped, 0);
    assert!(
        kinds.iter().all(|&k| sequence_class(k) == 1),
        "{kinds:02x?}"
    );
}
