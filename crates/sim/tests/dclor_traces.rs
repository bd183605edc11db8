//! The timeout responses against hand-worked traces: the DCLOR draft's three examples of
//! section 7, every branch of RFC 3522's detection (Eifel, with the draft's restore and with
//! RFC 4015's response) and RFC 5682's steps 2a/2b/3a/3b (basic and SACK-enhanced). ACKs are
//! built by hand as real packets; the sender's packets are parsed back. Segment size 100 bytes;
//! packet P(i) of the draft is the segment at offset 100 (i - 1), ACK A(i) acknowledges offset
//! 100 i.

mod common;

use common::{Harness, MSS};
use taroc_sim::event::{MILLISECOND, SECOND};
use taroc_sim::tcp::sender::SenderConfig;
use taroc_sim::tcp::timeout::ResponseKind;
use taroc_sim::tcp::variant::TcpVariant;

/// A started sender of `variant` with the timeout `response`, an initial window of `window`
/// segments (at most 40) and timestamps on or off.
fn sender(variant: TcpVariant, response: ResponseKind, window: u32, timestamps: bool) -> Harness {
    Harness::new(variant, response, window, Some(40), timestamps)
}

/// Spurious timeouts the sender detected.
fn detected(h: &Harness) -> u64 {
    h.sender.stats().detected_spurious
}

fn offsets(packets: std::ops::RangeInclusive<u64>) -> Vec<u64> {
    packets.map(|i| (i - 1) * MSS).collect()
}

const HUGE_SSTHRESH: u64 = MSS << 20;

/// Twenty segments P(1)..P(20) in flight, then the timeout: DCLOR sends the new P(21) only.
fn dclor_after_timeout() -> Harness {
    let mut h = sender(TcpVariant::Sack, ResponseKind::Dclor, 20, false);
    assert_eq!(h.sent(), offsets(1..=20));
    assert_eq!(
        h.timeout(),
        offsets(21..=21),
        "one NEW segment: SS_PTR = P(21)"
    );
    assert_eq!(h.cwnd(), 0);
    assert_eq!(h.ssthresh(), HUGE_SSTHRESH, "ssthresh left unchanged");
    h
}

#[test]
fn dclor_section_7_1_all_twenty_lost() {
    let mut h = dclor_after_timeout();
    // rcv A(0)[21,21]: the SACK holds SS_PTR, so P(1)..P(20) are lost.
    let sent = h.ack(0, &[(2000, 2100)]);
    assert_eq!(h.ssthresh(), 1000, "old pipe 20 / 2 = 10 segments");
    assert_eq!(h.cwnd(), 2 * MSS);
    assert_eq!(sent, offsets(1..=2), "Send P(1), P(2)");
    assert_eq!(
        h.sender.state.pipe(),
        2 * MSS,
        "pipe 0 before the two retransmissions"
    );
}

#[test]
fn dclor_section_7_2_pure_stall() {
    let mut h = dclor_after_timeout();
    let backed_off = h.sender.rto();
    for i in 1..=20 {
        assert!(h.ack(i * MSS, &[]).is_empty(), "stale A({i}) sends nothing");
        assert_eq!(h.cwnd(), 0);
        assert_eq!(h.sender.rto(), backed_off, "no RTT sample from stale ACKs");
    }
    // rcv A(21): a pure ACK of SS_PTR.
    let sent = h.ack(21 * MSS, &[]);
    assert_eq!(h.ssthresh(), HUGE_SSTHRESH, "no loss: ssthresh unchanged");
    assert_eq!(h.cwnd(), 2 * MSS);
    assert_eq!(sent, offsets(22..=23), "Send P(22), P(23)");
    assert_eq!(h.sender.stats().retransmissions, 0);
}

#[test]
fn dclor_section_7_3_stall_and_loss_of_p10() {
    let mut h = dclor_after_timeout();
    for i in 1..=9 {
        assert!(h.ack(i * MSS, &[]).is_empty());
    }
    // A(9)[11,j] for j = 11..20: duplicates of stale ACKs trigger no fast retransmit.
    for j in 11..=20 {
        assert!(h.ack(9 * MSS, &[(10 * MSS, j * MSS)]).is_empty(), "j = {j}");
        assert_eq!(h.cwnd(), 0);
    }
    assert_eq!(h.sender.stats().fast_retransmits, 0);
    // A(9)[11,21]: SS_PTR SACKed, P(10) lost.
    let sent = h.ack(9 * MSS, &[(10 * MSS, 21 * MSS)]);
    assert_eq!(h.ssthresh(), 1000, "20 / 2");
    assert_eq!(h.cwnd(), 2 * MSS);
    assert_eq!(sent, vec![9 * MSS, 21 * MSS], "P(10) first, then P(22)");
}

#[test]
fn dclor_repeated_timeout_resends_the_probe_and_keeps_the_old_pipe() {
    let mut h = dclor_after_timeout();
    assert_eq!(h.timeout(), offsets(21..=21), "step 5: probe again");
    assert_eq!(h.cwnd(), 0);
    h.ack(0, &[(2000, 2100)]);
    assert_eq!(h.ssthresh(), 1000, "N from the first timeout");
}

#[test]
fn dclor_without_new_data_probes_with_the_last_queued_segment() {
    let config = SenderConfig {
        mss: MSS as u32,
        initial_window_segments: 4,
        file_bytes: Some(350),
        ..SenderConfig::default()
    };
    let mut h = Harness::with_config(config, TcpVariant::Sack, ResponseKind::Dclor);
    assert_eq!(
        h.sent(),
        vec![0, 100, 200, 300],
        "a short last segment of 50 bytes"
    );
    assert_eq!(h.timeout(), vec![300], "the last segment of the queue");
    assert!(h.ack(350, &[]).len() <= 1);
    assert!(h.sender.is_complete());
}

#[test]
fn dclor_needs_sack_and_is_conventional_without() {
    let mut h = sender(TcpVariant::NewReno, ResponseKind::Dclor, 4, false);
    h.sent();
    assert_eq!(h.timeout(), vec![0], "conventional: retransmit P(1)");
    assert_eq!(h.cwnd(), MSS);
}

/// Four segments sent at time 0 (TSval 0), the timeout at 1 s (the retransmission's TSval is
/// 1000, RetransmitTS).
fn eifel_after_timeout(response: ResponseKind, window: u32) -> Harness {
    let mut h = sender(TcpVariant::Sack, response, window, true);
    assert_eq!(h.sent().len(), window as usize);
    assert_eq!(h.timeout(), vec![0]);
    assert_eq!(h.now, SECOND);
    assert_eq!(h.cwnd(), MSS);
    h
}

#[test]
fn eifel_spurious_when_the_echo_predates_the_retransmit_and_data_remains() {
    let mut h = eifel_after_timeout(ResponseKind::Eifel, 4);
    h.ecr = Some(0); // (4): TSecr 0 < RetransmitTS 1000; (5): not all acknowledged
    let sent = h.ack(MSS, &[]);
    assert_eq!(detected(&h), 1);
    assert_eq!(
        (h.cwnd(), h.ssthresh()),
        (400, HUGE_SSTHRESH),
        "window restored"
    );
    assert_eq!(sent, vec![400], "new data, no go-back-N");
}

#[test]
fn eifel_genuine_when_the_echo_is_the_retransmits() {
    let mut h = eifel_after_timeout(ResponseKind::Eifel, 4);
    h.ecr = Some(1000); // (4): not smaller: DONE
    let sent = h.ack(MSS, &[]);
    assert_eq!(detected(&h), 0);
    assert_eq!(h.ssthresh(), 200, "conventional: max(400/2, 2 SMSS)");
    assert_eq!(sent, vec![100, 200], "slow start, go-back-N");
}

#[test]
fn eifel_done_when_the_acceptable_ack_carries_a_dsack() {
    let mut h = eifel_after_timeout(ResponseKind::Eifel, 4);
    h.ecr = Some(0);
    h.ack(MSS, &[(0, MSS)]); // (5): D-SACK of the first segment
    assert_eq!(detected(&h), 0);
}

#[test]
fn eifel_done_when_everything_is_acknowledged_and_no_dsack_was_seen() {
    let mut h = eifel_after_timeout(ResponseKind::Eifel, 1);
    h.ecr = Some(0);
    h.ack(MSS, &[]);
    assert_eq!(
        detected(&h),
        0,
        "(5): the ACK acknowledges all outstanding data"
    );
}

#[test]
fn eifel_spurious_when_everything_is_acknowledged_after_an_earlier_dsack() {
    let mut h = sender(TcpVariant::Sack, ResponseKind::Eifel, 1, true);
    h.sent();
    h.ack(MSS, &[]);
    h.ack(MSS, &[(0, MSS)]); // a D-SACK during the connection (a duplicate ACK)
    let outstanding = h.sender.state.snd_max;
    h.timeout();
    h.ecr = Some(0);
    h.ack(outstanding, &[]);
    assert_eq!(detected(&h), 1);
}

#[test]
fn eifel_nothing_without_timestamps_on_the_ack() {
    let mut h = eifel_after_timeout(ResponseKind::Eifel, 4);
    h.ecr = None;
    h.ack(MSS, &[]);
    assert_eq!(detected(&h), 0);
}

#[test]
fn eifel_keeps_retransmit_ts_across_a_second_timeout() {
    let mut h = eifel_after_timeout(ResponseKind::Eifel, 4);
    h.timeout(); // second retransmit, TSval 3000
    h.ecr = Some(1000); // the first retransmit's echo: not smaller than RetransmitTS 1000
    h.ack(MSS, &[]);
    assert_eq!(detected(&h), 0, "RetransmitTS was not overwritten by 3000");
}

#[test]
fn eifel_4015_response_sets_cwnd_ssthresh_and_the_rtt_from_new_data() {
    let mut h = sender(TcpVariant::Sack, ResponseKind::Eifel4015, 4, true);
    h.sent();
    h.ack(MSS, &[]); // RTT sample 10 ms: SRTT 10, RTTVAR 5 (cwnd 500, 4 outstanding)
    let flight = h.sender.state.snd_max - h.sender.state.snd_una;
    assert_eq!(flight, 500);
    h.timeout();
    h.ecr = Some(10);
    let sent = h.ack(2 * MSS, &[]);
    assert_eq!(detected(&h), 1);
    // cwnd = FlightSize (600 - 200) + min(acked 100, IW 400); ssthresh = max(500, ssthresh).
    assert_eq!(h.cwnd(), 500);
    assert_eq!(
        h.ssthresh(),
        HUGE_SSTHRESH,
        "pipe_prev = max(FlightSize, ssthresh)"
    );
    assert_eq!(sent, vec![600], "resume from SND.MAX");
    // The first ACK of new data: m = now - TSecr.
    h.ecr = Some((h.now / MILLISECOND) as u32);
    h.ack(7 * MSS, &[]);
    // m = 10 ms; SRTT = max(10 + 2 G (20), 10) = 30 ms, RTTVAR = max(5, 5): RTO floor 1 s.
    assert_eq!(h.sender.rto(), SECOND);
}

/// Basic F-RTO (a variant without SACK): four segments, the timeout retransmits P(1).
fn frto_after_timeout(variant: TcpVariant) -> Harness {
    let mut h = sender(variant, ResponseKind::Frto, 4, false);
    assert_eq!(h.sent(), offsets(1..=4));
    assert_eq!(h.timeout(), vec![0], "step 1");
    h
}

#[test]
fn frto_2a_duplicate_ack_reverts_to_conventional_recovery() {
    let mut h = frto_after_timeout(TcpVariant::NewReno);
    assert!(h.ack(0, &[]).is_empty());
    assert_eq!(
        h.ack(MSS, &[]),
        vec![100, 200],
        "slow-start retransmissions"
    );
    assert_eq!(detected(&h), 0);
}

#[test]
fn frto_2a_ack_covering_recover_reverts() {
    let mut h = frto_after_timeout(TcpVariant::NewReno);
    h.ack(4 * MSS, &[]);
    assert_eq!(detected(&h), 0);
    assert_eq!(h.cwnd(), 2 * MSS, "conventional slow start");
}

#[test]
fn frto_2b_then_3b_declares_the_timeout_spurious_and_halves() {
    let mut h = frto_after_timeout(TcpVariant::NewReno);
    assert_eq!(h.ack(MSS, &[]), offsets(5..=6), "2b: two new segments");
    assert!(h.ack(2 * MSS, &[]).is_empty(), "3b");
    assert_eq!(detected(&h), 1);
    assert_eq!(
        (h.cwnd(), h.ssthresh()),
        (200, 200),
        "halved: max(400/2, 2 SMSS)"
    );
}

#[test]
fn frto_2b_then_3a_retransmits_in_slow_start() {
    let mut h = frto_after_timeout(TcpVariant::NewReno);
    h.ack(MSS, &[]);
    let sent = h.ack(MSS, &[]);
    assert_eq!(h.cwnd(), 3 * MSS, "3a: cwnd = 3 SMSS");
    assert_eq!(sent, offsets(2..=4), "unacknowledged segments again");
    assert_eq!(detected(&h), 0);
}

#[test]
fn frto_sack_2b_then_3b_on_a_sack_of_old_data() {
    let mut h = frto_after_timeout(TcpVariant::Sack);
    assert!(
        h.ack(0, &[(200, 300)]).is_empty(),
        "step 2: wait for a new ACK"
    );
    assert_eq!(h.ack(MSS, &[(200, 300)]), offsets(5..=6));
    h.ack(MSS, &[(200, 400)]); // newly SACKs P(4), below RecoveryPoint
    assert_eq!(detected(&h), 1);
}

#[test]
fn frto_sack_3a_on_a_sack_of_the_new_segments() {
    let mut h = frto_after_timeout(TcpVariant::Sack);
    h.ack(MSS, &[]);
    h.ack(MSS, &[(400, 500)]); // SACK above RecoveryPoint (400)
    assert_eq!(detected(&h), 0);
    assert_eq!(h.cwnd(), 3 * MSS);
}
