//! The decoupling socket's data TCP against hand-worked traces: F1 (holes reported by SACK are
//! resent once, when three SACKed segments lie above them), F2 (the first unacknowledged segment
//! again every X further duplicate ACKs, X the control TCP's window), F3 (a fixed 50 ms timer
//! without backoff). Segments of 100 bytes; offsets are stream offsets.

use std::net::Ipv4Addr;

use taroc_sim::studies::decoupling::socket::{DataSender, DATA_RTO};
use taroc_sim::studies::decoupling::tunnel::Tunnel;
use taroc_sim::tcp::segment::{self, Endpoints, Parsed, SegmentSpec};
use taroc_sim::tcp::Outbox;
use taroc_wire::tcp::flags;

const ISS: u32 = 5000;
const MSS: u32 = 100;

fn ep() -> Endpoints {
    Endpoints {
        src: Ipv4Addr::new(10, 0, 0, 1).into(),
        dst: Ipv4Addr::new(10, 0, 1, 1).into(),
        src_port: 5001,
        dst_port: 5001,
    }
}

fn wire(offset: u32) -> u32 {
    ISS + 1 + offset
}

fn ack(offset: u32, sack: &[(u32, u32)]) -> Parsed {
    let blocks: Vec<(u32, u32)> = sack.iter().map(|&(l, r)| (wire(l), wire(r))).collect();
    let spec = SegmentSpec {
        seq: 1,
        ack: wire(offset),
        flags: flags::ACK,
        window: u16::MAX,
        timestamps: Some((0, 0)),
        sack: &blocks,
        payload_len: 0,
        payload_offset: 0,
    };
    let mut p = Vec::new();
    segment::build(&ep().reversed(), 0, &spec, &mut p);
    segment::parse(&p).unwrap()
}

/// A sender with ten segments sent (the tunnel emptied into the network).
fn sent_ten() -> (DataSender, Tunnel, Outbox) {
    let mut s = DataSender::new(ep(), ISS, MSS);
    let mut tunnel = Tunnel::new(10);
    let mut out = Outbox::default();
    s.fill(0, &mut tunnel, &mut out);
    assert_eq!(s.stats().segments, 10);
    let mut gone = Vec::new();
    while !tunnel.is_empty() {
        tunnel.forward(&mut gone);
    }
    (s, Tunnel::new(0), out)
}

/// Offsets of the segments waiting in the tunnel, emptying it.
fn resent(tunnel: &mut Tunnel) -> Vec<u32> {
    let mut out = Vec::new();
    while !tunnel.is_empty() {
        tunnel.forward(&mut out);
    }
    out.iter()
        .map(|p| segment::parse(p).unwrap().seq - ISS - 1)
        .collect()
}

#[test]
fn f1_resends_each_reported_hole_once_when_three_segments_above_it_arrived() {
    let (mut s, mut tunnel, mut out) = sent_ten();
    s.on_ack(5, &ack(0, &[(100, 300)]), 100, &mut tunnel, &mut out);
    assert!(
        resent(&mut tunnel).is_empty(),
        "only two segments above the hole"
    );
    s.on_ack(
        6,
        &ack(0, &[(500, 700), (100, 400)]),
        100,
        &mut tunnel,
        &mut out,
    );
    // Hole 0 has five SACKed segments above it, hole 400 two: only 0 goes.
    assert_eq!(resent(&mut tunnel), [0]);
    s.on_ack(
        7,
        &ack(0, &[(500, 800), (100, 400)]),
        100,
        &mut tunnel,
        &mut out,
    );
    assert_eq!(resent(&mut tunnel), [400]);
    s.on_ack(
        8,
        &ack(0, &[(500, 900), (100, 400)]),
        100,
        &mut tunnel,
        &mut out,
    );
    assert!(resent(&mut tunnel).is_empty(), "each hole once");
    assert_eq!(s.stats().sack_retransmits, 2);
}

#[test]
fn f2_resends_the_first_segment_every_x_further_duplicate_acks() {
    let (mut s, mut tunnel, mut out) = sent_ten();
    let x = 4;
    let mut resends = Vec::new();
    for dup in 1..=12 {
        s.on_ack(dup, &ack(0, &[]), x, &mut tunnel, &mut out);
        if !resent(&mut tunnel).is_empty() {
            resends.push(dup);
        }
    }
    assert_eq!(resends, [7, 11]);
    assert_eq!(s.stats().dupack_retransmits, 2);
    // A new ACK restarts the count.
    s.on_ack(20, &ack(100, &[]), x, &mut tunnel, &mut out);
    for dup in 1..=6 {
        s.on_ack(20 + dup, &ack(100, &[]), x, &mut tunnel, &mut out);
    }
    assert!(resent(&mut tunnel).is_empty());
}

#[test]
fn f3_resends_the_first_segment_on_a_fixed_50_ms_timer() {
    let (mut s, mut tunnel, mut out) = sent_ten();
    assert_eq!(s.deadline(), Some(DATA_RTO));
    s.on_timer(DATA_RTO, &mut tunnel, &mut out);
    assert_eq!(resent(&mut tunnel), [0]);
    assert_eq!(s.deadline(), Some(2 * DATA_RTO), "no backoff");
    s.on_timer(2 * DATA_RTO, &mut tunnel, &mut out);
    assert_eq!(resent(&mut tunnel), [0]);
    assert_eq!(s.deadline(), Some(3 * DATA_RTO));
    assert_eq!(s.stats().timeouts, 2);
    // An ACK that advances restarts it from now; when all is acknowledged it stops.
    s.on_ack(110_000_000, &ack(500, &[]), 4, &mut tunnel, &mut out);
    assert_eq!(s.deadline(), Some(110_000_000 + DATA_RTO));
    s.on_ack(120_000_000, &ack(1000, &[]), 4, &mut tunnel, &mut out);
    assert_eq!(s.deadline(), None);
}
