use super::co::Decoded;
use super::held::takes_over;
use super::reach::Codes;
use super::*;

/// A decoded packet at sequence number `seq` with `payload` octets, acknowledging `ack`.
fn decoded(seq: u32, payload: usize, ack: u32) -> Decoded {
    Decoded {
        fields: packet::Fields {
            seq,
            ack,
            ..packet::Fields::default()
        },
        quotients: Quotients::default(),
        payload,
        next: seq + payload as u32,
        outer_id: 0,
        codes: Codes::default(),
        trial: false,
    }
}

#[test]
fn references_go_by_next_sequence_number_then_acknowledgment_number() {
    // The reference: a 100-octet segment at 1000, acknowledging 77.
    let reference = (1100, 77);
    // A pure ACK with the segment's numbers, arriving after it, is older: the segment
    // stays (by sequence number alone the two would tie, and the ACK would take over).
    assert!(!takes_over(&decoded(1000, 0, 77), reference));
    // The segment again, the ACK after it, a later acknowledgment: each takes over.
    assert!(takes_over(&decoded(1000, 100, 77), reference));
    assert!(takes_over(&decoded(1100, 0, 77), reference));
    assert!(takes_over(&decoded(1100, 0, 78), reference));
    assert!(!takes_over(&decoded(1100, 0, 76), reference));
}
