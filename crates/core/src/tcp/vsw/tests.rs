//! The window's tests: pruning, eviction, protection, needs.

use super::*;

fn entry(seq: u32, ack: u32) -> Entry {
    Entry {
        fields: Fields {
            seq,
            ack,
            ..Fields::default()
        },
        has_payload: true,
        uncompressed: false,
    }
}

#[test]
fn needs_follow_appendix_a() {
    let mut v = Vsw::new(16, Progress::OfFields);
    v.push(entry(279, 7));
    v.push(entry(283, 7));
    let n = v.needs(&Fields {
        seq: 284,
        ack: 7,
        ..Fields::default()
    });
    assert_eq!((n.seq, n.ack, n.win), (4, 0, 0));
    let n = v.needs(&Fields {
        seq: 290,
        ack: 7,
        ..Fields::default()
    });
    assert_eq!(n.seq, 5);
}

#[test]
fn prune_by_progress_in_either_number_space() {
    let mut v = Vsw::new(16, Progress::OfFields);
    for i in 0..10 {
        v.push(entry(i * 1000, 0));
    }
    v.prune(4000);
    let seqs: alloc::vec::Vec<u32> = v.entries().map(|e| e.fields.seq).collect();
    assert_eq!(seqs, [5000, 6000, 7000, 8000, 9000]);
    let mut a = Vsw::new(16, Progress::OfFields);
    for i in 0..10 {
        a.push(entry(0, i * 1000));
    }
    a.prune(0);
    assert_eq!(a.len(), 1);
}

#[test]
fn cap_bounds_memory() {
    let mut v = Vsw::new(4, Progress::OfFields);
    for i in 0..100 {
        v.push(entry(i, 0));
    }
    assert_eq!(v.len(), 4);
    assert_eq!(v.entries().next().unwrap().fields.seq, 96);
    assert_eq!(Vsw::new(0, Progress::OfFields).cap, 2);
}

#[test]
fn a_retransmission_with_a_newer_ack_does_not_prune_the_frontier() {
    let mut v = Vsw::new(16, Progress::OfFields);
    v.push(entry(50_000, 1000)); // the frontier: the decompressor's likely reference
    v.push(entry(10_000, 90_000)); // retransmission of a host that also receives data
    v.prune(20_000);
    assert_eq!(
        v.len(),
        2,
        "the ACK jump of a packet behind the frontier moves nothing"
    );
    // The cap never evicts the frontier entry either.
    let mut c = Vsw::new(2, Progress::OfFields);
    c.push(entry(50_000, 1000));
    c.push(entry(10_000, 2000));
    c.push(entry(10_100, 2000));
    let seqs: alloc::vec::Vec<u32> = c.entries().map(|e| e.fields.seq).collect();
    assert_eq!(seqs, [50_000, 10_100]);
}

#[test]
fn a_run_of_retransmissions_keeps_the_newest_entries_in_sequence_order() {
    let seqs = |v: &Vsw| -> alloc::vec::Vec<u32> { v.entries().map(|e| e.fields.seq).collect() };
    let mut v = Vsw::new(6, Progress::SincePush).with_protected(3);
    for i in 0..6 {
        v.push(entry(100 + i, 0)); // new data: 105 is the frontier
    }
    for i in 0..10 {
        v.push(entry(10 + i, 0)); // then retransmissions, all older
    }
    // 103, 104 and 105 stay whatever came after them; the retransmissions fill the rest,
    // oldest leaving first.
    assert_eq!(seqs(&v), [103, 104, 105, 17, 18, 19]);
    // Without protection (the draft's rule) only the frontier stays.
    let mut d = Vsw::new(6, Progress::SincePush);
    for i in (0..6).map(|i| 100 + i).chain(10..20) {
        d.push(entry(i, 0));
    }
    assert_eq!(seqs(&d), [105, 15, 16, 17, 18, 19]);
    // New data after the run pushes the protected entries out in turn.
    for i in 0..6 {
        v.push(entry(200 + i, 0));
    }
    assert_eq!(seqs(&v), [200, 201, 202, 203, 204, 205]);
}

#[test]
fn an_ack_jump_does_not_prune_the_frontier() {
    let seqs = |v: &Vsw| -> alloc::vec::Vec<u32> { v.entries().map(|e| e.fields.seq).collect() };
    let run = |v: &mut Vsw| {
        v.push(entry(90_000, 1000)); // the frontier: ahead of everything after it
        v.push(entry(10_000, 1000));
        v.push(entry(11_000, 80_000)); // an ACK jump (progress of 79,000 in ACK space)
        v.prune(20_000);
    };
    for mut v in [
        Vsw::new(16, Progress::SincePush).with_protected(4),
        Vsw::new(16, Progress::SincePush),
        Vsw::new(16, Progress::OfFields),
    ] {
        run(&mut v);
        assert_eq!(seqs(&v), [90_000, 11_000], "the frontier stays");
    }
}

#[test]
fn an_older_uncompressed_packet_becomes_the_frontier() {
    let mut v = Vsw::new(16, Progress::OfFields);
    v.push(entry(90_000, 1000));
    v.push(Entry {
        uncompressed: true,
        ..entry(10_000, 1000)
    });
    v.prune(20_000);
    assert_eq!(
        v.len(),
        2,
        "both stay: the old frontier is ahead, the new one is the reference"
    );
}

#[test]
fn behind_and_retransmission() {
    let mut v = Vsw::new(16, Progress::OfFields);
    v.push(Entry {
        uncompressed: true,
        ..entry(1000, 50)
    });
    v.push(entry(2000, 50));
    assert!(v.is_behind(&Fields {
        seq: 999,
        ack: 50,
        ..Fields::default()
    }));
    assert!(v.is_behind(&Fields {
        seq: 3000,
        ack: 49,
        ..Fields::default()
    }));
    assert!(!v.is_behind(&Fields {
        seq: 1500,
        ack: 50,
        ..Fields::default()
    }));
    assert!(v.retransmits_uncompressed(1000));
    assert!(!v.retransmits_uncompressed(2000));
}

#[test]
fn progress_since_push_keeps_an_old_packet_for_a_window_of_new_data() {
    for (progress, kept) in [(Progress::OfFields, 2), (Progress::SincePush, 3)] {
        let mut v = Vsw::new(16, progress);
        v.push(entry(50_000, 1000));
        v.push(entry(10_000, 1000)); // a retransmission, 40 000 behind
        v.push(entry(50_500, 1000));
        v.prune(20_000);
        assert_eq!(v.len(), kept, "{progress:?}");
    }
    // Once the stream has sent more than W of new data since, the retransmission leaves.
    let mut v = Vsw::new(16, Progress::SincePush);
    v.push(entry(50_000, 1000));
    v.push(entry(10_000, 1000));
    v.push(entry(70_001, 1000));
    v.prune(20_000);
    let seqs: alloc::vec::Vec<u32> = v.entries().map(|e| e.fields.seq).collect();
    assert_eq!(seqs, [70_001]);
}

proptest::proptest! {
    /// The full window's eviction without counting ([`Columns::first_unprotected`]) names the
    /// entry the count names, for flows of pure ACKs (one sequence number, acknowledgment
    /// numbers mostly rising, sometimes repeated or stepping back) and of data.
    #[test]
    fn eviction_without_counting_names_the_counted_entry(
        steps in proptest::collection::vec((0u8..8, 0u32..3000), 1..80),
        pure_acks in proptest::bool::ANY,
        start in proptest::prelude::any::<u32>(),
    ) {
        let mut v = Vsw::new(16, Progress::SincePush).with_protected(4);
        let (mut seq, mut ack) = (start, start.wrapping_mul(7));
        for (kind, len) in steps {
            match kind {
                0 => ack = ack.wrapping_sub(len), // steps back
                1 => {}                           // repeated
                _ => ack = ack.wrapping_add(len),
            }
            if !pure_acks {
                seq = seq.wrapping_add(len / 2);
            }
            let c = &v.columns;
            if c.len() > v.protect {
                proptest::prop_assert_eq!(
                    c.first_unprotected(v.protect, v.max_seq, v.max_ack),
                    c.first_unprotected_scan(v.protect, v.max_seq, v.max_ack)
                );
            }
            v.push(entry(seq, ack));
        }
    }
}

/// A window smaller than its protected count (a configuration with two entries) protects every
/// entry: the frontier still stays when retransmissions (older than it) come, and its
/// successor goes instead. (Before, the frontier went, and a CO frame coded against the
/// retransmissions alone was refused by a decompressor that had missed nothing.)
#[test]
fn a_window_smaller_than_its_protection_keeps_the_frontier() {
    let mut v = Vsw::new(2, Progress::SincePush).with_protected(4);
    v.push(entry(7874, 9));
    for _ in 0..3 {
        v.push(entry(7872, 9));
        let seqs: Vec<u32> = v.entries().map(|e| e.fields.seq).collect();
        assert_eq!(seqs, [7874, 7872]);
    }
}

#[test]
fn a_held_entry_drops_the_older_ones_before_it_and_only_those() {
    let mut v = Vsw::new(16, Progress::SincePush);
    // An ACK and a segment with the same numbers as it (their next sequence numbers stand in
    // the window: 1000 and 1100), then a retransmission below both, then a newer ACK.
    for (seq, ack) in [(1000, 77), (1100, 77), (900, 77), (1100, 78)] {
        v.push(entry(seq, ack));
    }
    assert!(!v.holds(1100, 76));
    assert!(v.holds(1100, 77));
    // Held (1100, 77): the entry before it goes; the entries after it stay, older or not.
    assert_eq!(v.drop_older_than(1100, 77), 1);
    let left: Vec<_> = v.entries().map(|e| (e.fields.seq, e.fields.ack)).collect();
    assert_eq!(left, [(1100, 77), (900, 77), (1100, 78)]);
    // The newest held: every entry before it is older, the retransmission too.
    assert_eq!(v.drop_older_than(1100, 78), 2);
    assert_eq!(v.len(), 1);
}

#[test]
fn a_sampled_window_drops_its_entries_older_than_a_packet_it_need_not_hold() {
    let mut v = Vsw::new(8, Progress::SincePush);
    for (seq, ack) in [(1000, 77), (1200, 77), (1400, 77)] {
        v.push(entry(seq, ack));
    }
    // (1300, 77) is no entry: the entries older than it go all the same.
    assert_eq!(v.drop_older_than(1300, 77), 2);
    let left: Vec<_> = v.entries().map(|e| (e.fields.seq, e.fields.ack)).collect();
    assert_eq!(left, [(1400, 77)]);
    assert_eq!(v.drop_older_than(1300, 77), 0);
}
