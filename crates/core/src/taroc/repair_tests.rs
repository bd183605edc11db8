//! Bounded repair ([`super::repair`]) end to end on hand-built packets: a restarted
//! decompressor, a poisoned context and a lost reference all come back within the stated bound,
//! and the draft's profile keeps its behaviour.

use alloc::vec::Vec;
use core::time::Duration;

use super::tests::Spec;
use super::*;
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};

const U: FrameKind = FrameKind::UncompressedTcp;
const C: FrameKind = FrameKind::CompressedTcp;

/// A data segment of a bulk flow: the `i`-th of 500 bytes.
fn data(i: u32) -> Vec<u8> {
    Spec {
        seq: 1000 + 500 * i,
        ip_id: i as u16,
        payload: 500,
        ..Spec::default()
    }
    .build()
}

/// A pure ACK of the reverse flow acknowledging `i` segments.
fn ack(i: u32, ip_id: u16) -> Vec<u8> {
    Spec {
        seq: 77,
        ack: 1000 + 500 * i,
        ip_id,
        payload: 0,
        ..Spec::default()
    }
    .build()
}

struct Link {
    c: TarocCompressor,
    d: TarocDecompressor,
    frame: Vec<u8>,
    out: Vec<u8>,
    feedback: Vec<u8>,
    /// Carry the decompressor's requests back to the compressor.
    reverse_channel: bool,
}

impl Link {
    fn new(config: TarocConfig, reverse_channel: bool) -> Link {
        Link {
            c: TarocCompressor::new(config.clone()),
            d: TarocDecompressor::new(config),
            frame: Vec::new(),
            out: Vec::new(),
            feedback: Vec::new(),
            reverse_channel,
        }
    }

    /// Sends `packet` at `ms`: the frame kind, and whether the decompressor delivered it (which,
    /// when it does, must be the packet itself).
    fn send(&mut self, packet: &[u8], ms: u64) -> (FrameKind, bool) {
        let now = Duration::from_millis(ms);
        self.c.set_time(now);
        self.d.set_time(now);
        let kind = self.c.compress(packet, &mut self.frame);
        let delivered = match self.d.decompress(kind, &self.frame, &mut self.out) {
            Ok(()) => {
                assert_eq!(
                    self.out, packet,
                    "a delivery is the original, byte for byte"
                );
                true
            }
            Err(reason) => {
                assert_ne!(reason, DropReason::UnknownKind);
                false
            }
        };
        while self.d.take_feedback(&mut self.feedback) {
            if self.reverse_channel {
                self.c.handle_feedback(&self.feedback);
            }
        }
        (kind, delivered)
    }

    /// The decompressor restarts with empty state.
    fn restart_decompressor(&mut self, config: TarocConfig) {
        self.d = TarocDecompressor::new(config);
    }
}

/// Plus without the time-based and feedback repairs: only the packet-count refresh is left.
fn packets_only(refresh_packets: u32) -> TarocConfig {
    let mut config = TarocConfig::plus();
    config.repair = Repair {
        refresh_packets,
        ..Repair::default()
    };
    config
}

#[test]
fn a_restarted_decompressor_is_repaired_by_the_periodic_refresh_within_its_bound() {
    let config = packets_only(64);
    let mut link = Link::new(config.clone(), false);
    for i in 0..200 {
        assert!(link.send(&data(i), 0).1);
    }
    link.restart_decompressor(config);
    let first_delivered = (200..400).find(|&i| link.send(&data(i), 0).1).unwrap();
    assert!(first_delivered - 200 <= 64, "{first_delivered}");
    for i in first_delivered + 1..first_delivered + 100 {
        assert!(link.send(&data(i), 0).1, "delivered after the refresh");
    }
    assert!(link.c.stats().frames(Why::Refresh) >= 1);
}

#[test]
fn the_draft_profile_never_repairs_a_restarted_decompressor() {
    let config = TarocConfig::default();
    let mut link = Link::new(config.clone(), true);
    for i in 0..200 {
        assert!(link.send(&data(i), 10 * u64::from(i)).1);
    }
    link.restart_decompressor(config);
    // New data, retransmissions after silences: the draft sends all of it COMPRESSED_TCP.
    for i in 200..300 {
        assert_eq!(link.send(&data(i), 10 * u64::from(i)), (C, false));
    }
    assert_eq!(link.send(&data(290), 10_000), (C, false));
    assert_eq!(link.send(&data(290), 20_000), (C, false));
    assert!(!link.d.take_feedback(&mut Vec::new()), "no requests");
}

#[test]
fn a_retransmission_after_a_silence_goes_uncompressed() {
    let mut link = Link::new(TarocConfig::plus(), false);
    for i in 0..100 {
        assert!(link.send(&data(i), u64::from(i)).1);
    }
    link.restart_decompressor(TarocConfig::plus());
    // The receiver gets nothing, the sender times out: its retransmission repairs the context.
    assert_eq!(link.send(&data(100), 100), (C, false));
    assert_eq!(
        link.send(&data(90), 100 + 149),
        (C, false),
        "not silent long enough"
    );
    assert_eq!(link.send(&data(90), 100 + 149 + 150), (U, true));
    for i in 101..150 {
        assert_eq!(link.send(&data(i), 400 + u64::from(i)), (C, true));
    }
    assert_eq!(link.c.stats().frames(Why::Timeout), 1);
    // New data after a silence is not distress: it goes compressed.
    assert_eq!(link.send(&data(150), 5_000), (C, true));
}

#[test]
fn a_duplicate_ack_after_a_silence_goes_uncompressed() {
    let mut link = Link::new(TarocConfig::plus(), false);
    for i in 0..100 {
        assert!(link.send(&ack(i, i as u16), u64::from(i)).1);
    }
    link.restart_decompressor(TarocConfig::plus());
    assert_eq!(link.send(&ack(99, 100), 1_000), (U, true));
    assert_eq!(link.send(&ack(100, 101), 1_001), (C, true));
}

#[test]
fn the_second_retransmission_of_a_segment_goes_uncompressed_without_a_clock() {
    let mut config = TarocConfig::plus();
    config.repair = Repair {
        repeated_retransmission: true,
        ..Repair::default()
    };
    let mut link = Link::new(config.clone(), false);
    for i in 0..100 {
        assert!(link.send(&data(i), 0).1);
    }
    link.restart_decompressor(config);
    assert_eq!(link.send(&data(50), 0), (C, false));
    assert_eq!(link.send(&data(50), 0), (U, true));
    assert_eq!(link.c.stats().frames(Why::RepeatedRetransmission), 1);
}

#[test]
fn a_context_request_repairs_at_the_next_packet() {
    let mut config = TarocConfig::plus();
    config.repair = Repair {
        context_requests: true,
        ..Repair::default()
    };
    let mut link = Link::new(config.clone(), true);
    for i in 0..100 {
        assert!(link.send(&data(i), u64::from(i)).1);
    }
    link.restart_decompressor(config);
    assert_eq!(link.send(&data(100), 200), (C, false));
    assert_eq!(link.send(&data(101), 201), (U, true));
    assert_eq!(link.send(&data(102), 202), (C, true));
    assert_eq!(link.c.stats().frames(Why::Requested), 1);
    assert_eq!(link.c.stats().requests_received, 1);
}

#[test]
fn a_forged_uncompressed_tcp_poisons_nothing_for_longer_than_one_request() {
    let mut link = Link::new(TarocConfig::plus(), true);
    for i in 0..100 {
        assert!(link.send(&data(i), u64::from(i)).1);
    }
    // A stranger's UNCOMPRESSED_TCP for CID 0: another flow (IPv6, so other addresses).
    let mut stranger = TarocCompressor::new(TarocConfig::plus());
    let mut forged = Vec::new();
    let other = Spec {
        v4: false,
        ..Spec::default()
    }
    .build();
    assert_eq!(stranger.compress(&other, &mut forged), U);
    assert_eq!(forged[5], 0, "CID 0");
    link.d
        .decompress(U, &forged, &mut link.out)
        .expect("the forged frame installs its context");
    // The real flow's next frame is refused (never delivered wrongly), the request repairs it.
    assert_eq!(link.send(&data(100), 200), (C, false));
    assert_eq!(link.send(&data(101), 201), (U, true));
    assert_eq!(link.send(&data(102), 202), (C, true));
}

#[test]
fn requests_for_unknown_contexts_and_malformed_feedback_are_ignored() {
    let mut link = Link::new(TarocConfig::plus(), true);
    for i in 0..20 {
        link.send(&data(i), 0);
    }
    for junk in [&[][..], &[1], &[2, 0], &[1, 0, 9, 200], &[0xFF; 300]] {
        link.c.handle_feedback(junk);
    }
    assert_eq!(link.c.stats().requests_received, 1, "only CID 0 exists");
    assert_eq!(link.send(&data(20), 0), (U, true));
    // The draft's compressor ignores requests altogether.
    let mut draft = Link::new(TarocConfig::default(), true);
    for i in 0..20 {
        draft.send(&data(i), 0);
    }
    draft.c.handle_feedback(&[repair::REQUEST, 0]);
    assert_eq!(draft.send(&data(20), 0), (C, true));
}

#[test]
fn the_time_refresh_bounds_a_sparse_stream() {
    let mut config = TarocConfig::plus();
    config.repair = Repair {
        refresh_interval: Some(Duration::from_secs(30)),
        ..Repair::default()
    };
    let mut link = Link::new(config, false);
    let kinds: Vec<FrameKind> = (0..200)
        .map(|i| link.send(&data(i), 1000 * u64::from(i)).0)
        .collect();
    assert!(link.c.stats().frames(Why::Refresh) >= 3, "{kinds:?}");
    let full: Vec<usize> = (0..kinds.len()).filter(|&i| kinds[i] == U).collect();
    assert!(full.windows(2).all(|w| w[1] - w[0] <= 30), "{full:?}");
}

#[test]
fn a_lost_refresh_is_repaired_by_the_next_one_not_by_damage() {
    // Every kind of repair frame is an ordinary UNCOMPRESSED_TCP: losing one leaves the
    // decompressor on its old reference, which W-LSB still covers.
    let mut link = Link::new(packets_only(16), false);
    let mut refused = 0;
    for i in 0..200 {
        let packet = data(i);
        let now = Duration::ZERO;
        link.c.set_time(now);
        let kind = link.c.compress(&packet, &mut link.frame);
        if kind == U && i > 20 {
            continue; // lost on the link
        }
        match link.d.decompress(kind, &link.frame, &mut link.out) {
            Ok(()) => assert_eq!(link.out, packet),
            Err(DropReason::ChecksumMismatch | DropReason::NoContext) => refused += 1,
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(refused, 0);
}
