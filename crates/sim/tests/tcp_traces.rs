//! The TCP senders against hand-worked traces: the ACKs are built by hand as real packets, the
//! sender's output packets are parsed back, and cwnd/ssthresh are checked step by step.
//! Segment size 100 bytes; offsets are stream offsets (wire sequence numbers are ISS + 1 + offset).

mod common;

use common::{Harness, MSS};
use taroc_sim::event::SECOND;
use taroc_sim::tcp::timeout::ResponseKind;
use taroc_sim::tcp::variant::TcpVariant;

/// A started sender of `variant` with the standard timeout response and an initial window of
/// `window` segments, without timestamps.
fn sender(variant: TcpVariant, window: u32) -> Harness {
    Harness::new(variant, ResponseKind::Standard, window, None, false)
}

#[test]
fn slow_start_doubles_per_round_trip() {
    let mut h = sender(TcpVariant::Reno, 1);
    assert_eq!(h.sent(), vec![0]);
    assert_eq!(h.ack(100, &[]), vec![100, 200]);
    assert_eq!(h.cwnd(), 200);
    assert_eq!(h.ack(200, &[]), vec![300, 400]);
    assert_eq!(h.ack(300, &[]), vec![500, 600]);
    assert_eq!(h.cwnd(), 400);
    // The maximum window (20 segments) caps what is outstanding.
    for a in (400..=2000).step_by(100) {
        h.ack(a, &[]);
    }
    let s = &h.sender.state;
    assert_eq!(s.snd_max - s.snd_una, 20 * MSS);
}

#[test]
fn reno_fast_retransmit_and_fast_recovery() {
    let mut h = sender(TcpVariant::Reno, 10);
    assert_eq!(h.sent(), (0..10).map(|i| i * MSS).collect::<Vec<_>>());
    // Segment 0 is lost; segments 1..9 produce nine duplicate ACKs of offset 0.
    assert!(h.ack(0, &[]).is_empty());
    assert!(h.ack(0, &[]).is_empty());
    assert_eq!(h.ack(0, &[]), vec![0], "third dupack: fast retransmit");
    assert_eq!(h.ssthresh(), 500, "max(FlightSize/2, 2 SMSS)");
    assert_eq!(h.cwnd(), 800, "ssthresh + 3 SMSS");
    assert!(h.ack(0, &[]).is_empty()); // cwnd 900
    assert!(h.ack(0, &[]).is_empty()); // cwnd 1000
    assert_eq!(
        h.ack(0, &[]),
        vec![1000],
        "inflated window lets new data out"
    );
    assert_eq!(h.ack(0, &[]), vec![1100]);
    // The retransmission fills the hole: the new ACK deflates the window to ssthresh.
    h.ack(1000, &[]);
    assert_eq!(h.cwnd(), 500);
    assert_eq!(h.sender.stats().timeouts, 0);
}

#[test]
fn tahoe_fast_retransmit_then_slow_start_go_back_n() {
    let mut h = sender(TcpVariant::Tahoe, 10);
    h.sent();
    h.ack(0, &[]);
    h.ack(0, &[]);
    assert_eq!(h.ack(0, &[]), vec![0]);
    assert_eq!(h.cwnd(), MSS, "Tahoe restarts from one segment");
    assert_eq!(h.ssthresh(), 500);
    // Further duplicate ACKs do not inflate anything.
    for _ in 0..6 {
        assert!(h.ack(0, &[]).is_empty());
    }
    // The retransmission is acknowledged together with everything received: slow start
    // resumes from offset 1000.
    assert_eq!(h.ack(1000, &[]), vec![1000, 1100]);
    assert_eq!(h.cwnd(), 2 * MSS);
}

/// Two losses in one window (offsets 0 and 500): NewReno repairs the second on the partial ACK
/// without a timeout; Reno leaves recovery on the partial ACK and does not.
#[test]
fn newreno_partial_ack_retransmits_next_hole() {
    let mut h = sender(TcpVariant::NewReno, 10);
    h.sent();
    h.ack(0, &[]);
    h.ack(0, &[]);
    assert_eq!(h.ack(0, &[]), vec![0]);
    assert_eq!(h.cwnd(), 800);
    // Five more dupacks (segments 4, 6, 7, 8, 9): cwnd 900..1300, new data 1000, 1100, 1200.
    let mut new = Vec::new();
    for _ in 0..5 {
        new.extend(h.ack(0, &[]));
    }
    assert_eq!(new, vec![1000, 1100, 1200]);
    assert_eq!(h.cwnd(), 1300);
    // Partial ACK up to the second hole.
    let sent = h.ack(500, &[]);
    assert_eq!(
        sent.first(),
        Some(&500),
        "partial ACK retransmits the next hole"
    );
    assert_eq!(
        h.cwnd(),
        1300 - 500 + MSS,
        "deflate by the amount acked, add back one SMSS"
    );
    // Full ACK: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
    let flight_after = h.sender.state.snd_max - 1300;
    h.ack(1300, &[]);
    assert_eq!(h.cwnd(), 500.min(flight_after.max(MSS) + MSS));
    assert_eq!(h.sender.stats().timeouts, 0);

    let mut r = sender(TcpVariant::Reno, 10);
    r.sent();
    for _ in 0..8 {
        r.ack(0, &[]);
    }
    let sent = r.ack(500, &[]);
    assert!(
        !sent.contains(&500),
        "Reno does not retransmit on a partial ACK"
    );
    assert_eq!(r.cwnd(), 500);
}

/// Three losses in one window (offsets 0, 300, 600): SACK recovery retransmits all three
/// within one recovery, driven by the scoreboard (RFC 6675 IsLost, pipe, NextSeg).
#[test]
fn sack_recovers_several_losses_in_one_window() {
    let mut h = sender(TcpVariant::Sack, 10);
    h.sent();
    let mut retransmitted: Vec<u64> = Vec::new();
    let note = |r: &mut Vec<u64>, sent: Vec<u64>| r.extend(sent.into_iter().filter(|&s| s < 1000));
    note(&mut retransmitted, h.ack(0, &[(100, 200)]));
    note(&mut retransmitted, h.ack(0, &[(100, 300)]));
    note(&mut retransmitted, h.ack(0, &[(400, 500), (100, 300)]));
    assert_eq!(
        retransmitted,
        vec![0],
        "third dupack: enter recovery, retransmit HighACK"
    );
    assert_eq!((h.cwnd(), h.ssthresh()), (500, 500));
    note(&mut retransmitted, h.ack(0, &[(400, 600), (100, 300)]));
    note(
        &mut retransmitted,
        h.ack(0, &[(700, 800), (400, 600), (100, 300)]),
    );
    assert_eq!(
        retransmitted,
        vec![0, 300],
        "three SACKed segments above 300: lost"
    );
    note(
        &mut retransmitted,
        h.ack(0, &[(700, 900), (400, 600), (100, 300)]),
    );
    note(
        &mut retransmitted,
        h.ack(0, &[(700, 1000), (400, 600), (100, 300)]),
    );
    assert_eq!(retransmitted, vec![0, 300, 600]);
    // The retransmissions arrive: the cumulative ACK reaches RecoveryPoint, recovery ends.
    h.ack(1000, &[]);
    assert_eq!(h.cwnd(), 500);
    assert_eq!(h.sender.stats().timeouts, 0);
}

#[test]
fn rto_expiry_backs_off_exponentially() {
    let mut h = sender(TcpVariant::Reno, 1);
    assert_eq!(h.sent(), vec![0]);
    assert_eq!(h.sender.deadline(), Some(SECOND), "initial RTO 1 s");
    h.sender.on_timer(SECOND, &mut h.out);
    assert_eq!(
        h.sent(),
        vec![0],
        "retransmit the first unacknowledged segment"
    );
    assert_eq!(h.sender.deadline(), Some(3 * SECOND), "RTO doubled to 2 s");
    assert_eq!((h.cwnd(), h.ssthresh()), (MSS, 2 * MSS));
    h.sender.on_timer(3 * SECOND, &mut h.out);
    assert_eq!(h.sent(), vec![0]);
    assert_eq!(h.sender.deadline(), Some(7 * SECOND), "RTO doubled to 4 s");
    assert_eq!(h.sender.stats().timeouts, 2);
    // An early call does nothing.
    h.sender.on_timer(5 * SECOND, &mut h.out);
    assert!(h.sent().is_empty());
}
