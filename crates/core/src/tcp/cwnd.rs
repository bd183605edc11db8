//! TCP congestion-window tracking: Algorithm SEQ (draft section 6.2) and Algorithm ACK
//! (section 6.3).
//!
//! The compressor imitates the sender's congestion control from what it sees of one one-way
//! stream: its sequence numbers (Algorithm SEQ) or its acknowledgment numbers (Algorithm ACK).
//! All quantities (cwnd, ssthresh, MSS) are bytes of sequence space. Readings of the draft made
//! here (see `docs/taroc-interpretations.md`):
//! - 6.2 `CMINSN = cwnd - CMAXSN` is read as `CMINSN = CMAXSN - cwnd`;
//! - 6.2 the two distance rules apply to a segment whose sequence number is not above CMAXSN:
//!   at most 3*MSS behind is reordering (ignored), more is a retransmission (fast recovery);
//! - 6.3 fast recovery starts on the third duplicate ACK (`NDUPACKS >= 3`), as TCP does;
//! - on leaving FAST-RECOVERY, CMAXSN / CMAXACK move to the segment that ended it.

use taroc_wire::seq::{seq_diff, seq_lt};

/// The state of a tracker, mirroring TCP's congestion-control states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Slow start.
    SlowStart,
    /// Congestion avoidance.
    CongestionAvoidance,
    /// Fast recovery.
    FastRecovery,
}

/// The settings both algorithms share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackerParams {
    /// Estimated maximum segment size, bytes (the draft: the link MTU may stand in for it).
    pub mss: u32,
    /// Initial ssthresh, bytes (the draft: about 2 * bandwidth * delay of the link).
    pub issthresh: u32,
    /// Initial window, bytes (the draft: 4 * MSS).
    pub iw: u32,
}

impl TrackerParams {
    /// Parameters with the draft's initial window of 4 * MSS.
    pub fn new(mss: u32, issthresh: u32) -> TrackerParams {
        TrackerParams {
            mss,
            issthresh,
            iw: mss.saturating_mul(4),
        }
    }
}

/// The draft's suggested ISSTHRESH, 2 * bandwidth * delay, in bytes, for a link of `rate_bps` bits
/// per second and a one-way delay of `delay_us` microseconds.
pub fn issthresh_for_link(rate_bps: u64, delay_us: u64) -> u32 {
    let bytes = 2 * rate_bps / 8 * delay_us / 1_000_000;
    bytes.clamp(1, u64::from(u32::MAX)) as u32
}

/// The estimate both algorithms produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// Estimated congestion window, bytes.
    pub cwnd: u32,
    /// Estimated slow-start threshold, bytes.
    pub ssthresh: u32,
    /// Current phase.
    pub phase: Phase,
}

impl Estimate {
    fn initial(p: &TrackerParams) -> Estimate {
        Estimate {
            cwnd: p.iw.max(1),
            ssthresh: p.issthresh,
            phase: Phase::SlowStart,
        }
    }

    /// `MAX(cwnd, 2 * ssthresh)`: this stream's share of the window W of draft section 7.1.
    pub fn window_share(&self) -> u32 {
        self.cwnd.max(self.ssthresh.saturating_mul(2))
    }

    fn grow(&mut self, distance: u32, mss: u32) {
        match self.phase {
            Phase::SlowStart => self.cwnd = self.cwnd.saturating_add(distance),
            Phase::CongestionAvoidance => {
                let inc = u64::from(distance) * u64::from(mss) / u64::from(self.cwnd.max(1));
                self.cwnd = self
                    .cwnd
                    .saturating_add(inc.min(u64::from(u32::MAX)) as u32);
            }
            Phase::FastRecovery => {}
        }
        if self.phase == Phase::SlowStart && self.cwnd > self.ssthresh {
            self.phase = Phase::CongestionAvoidance;
        }
    }

    fn enter_fast_recovery(&mut self, mss: u32) {
        self.cwnd = (self.cwnd / 2).max(1);
        self.ssthresh = self.cwnd.max(mss.saturating_mul(2));
        self.phase = Phase::FastRecovery;
    }
}

/// Algorithm SEQ: tracks the sender's window from the sequence numbers of its segments.
#[derive(Debug, Clone)]
pub struct SeqTracker {
    params: TrackerParams,
    est: Estimate,
    cmaxsn: u32,
    cminsn: u32,
}

impl SeqTracker {
    /// A tracker whose first segment had sequence number `first_seq`.
    pub fn new(params: TrackerParams, first_seq: u32) -> SeqTracker {
        SeqTracker {
            params,
            est: Estimate::initial(&params),
            cmaxsn: first_seq,
            cminsn: first_seq,
        }
    }

    /// Feeds the sequence number `nsn` of the next segment.
    pub fn on_segment(&mut self, nsn: u32) {
        let mss = self.params.mss;
        if self.est.phase == Phase::FastRecovery {
            // Leave once the sender has sent a full window beyond the highest sequence number
            // seen before the loss.
            if seq_diff(nsn, self.cmaxsn) >= 0 && seq_diff(nsn, self.cmaxsn) as u32 >= self.est.cwnd
            {
                self.est.phase = Phase::CongestionAvoidance;
                self.advance(nsn);
            }
            return;
        }
        if seq_lt(self.cmaxsn, nsn) {
            let distance = seq_diff(nsn, self.cmaxsn) as u32;
            self.est.grow(distance, mss);
            self.advance(nsn);
        } else if seq_diff(self.cmaxsn, nsn) as u32 > mss.saturating_mul(3) {
            self.est.enter_fast_recovery(mss);
        }
    }

    fn advance(&mut self, nsn: u32) {
        self.cmaxsn = nsn;
        if seq_diff(self.cmaxsn, self.cminsn) as u32 > self.est.cwnd {
            self.cminsn = self.cmaxsn.wrapping_sub(self.est.cwnd);
        }
    }

    /// The current estimate.
    pub fn estimate(&self) -> Estimate {
        self.est
    }

    /// CMAXSN: the highest sequence number taken into account.
    pub fn cmaxsn(&self) -> u32 {
        self.cmaxsn
    }

    /// CMINSN: `CMAXSN - cwnd` once the stream has covered a window.
    pub fn cminsn(&self) -> u32 {
        self.cminsn
    }
}

/// Algorithm ACK: tracks the window of the opposite sender from the acknowledgment numbers.
#[derive(Debug, Clone)]
pub struct AckTracker {
    params: TrackerParams,
    est: Estimate,
    cmaxack: u32,
    ndupacks: u32,
}

impl AckTracker {
    /// A tracker whose first segment had acknowledgment number `first_ack`.
    pub fn new(params: TrackerParams, first_ack: u32) -> AckTracker {
        AckTracker {
            params,
            est: Estimate::initial(&params),
            cmaxack: first_ack,
            ndupacks: 0,
        }
    }

    /// Feeds the acknowledgment number of the next segment. As the draft writes it, any segment
    /// whose acknowledgment number equals CMAXACK counts as a duplicate.
    pub fn on_segment(&mut self, newack: u32) {
        let mss = self.params.mss;
        if self.est.phase == Phase::FastRecovery {
            if seq_lt(self.cmaxack, newack) {
                self.ndupacks = 0;
                self.est.phase = Phase::CongestionAvoidance;
                self.cmaxack = newack;
            }
            return;
        }
        if seq_lt(self.cmaxack, newack) {
            let distance = seq_diff(newack, self.cmaxack) as u32;
            self.est.grow(distance, mss);
            self.ndupacks = 0;
            self.cmaxack = newack;
        } else if newack == self.cmaxack {
            self.ndupacks += 1;
            if self.ndupacks >= 3 {
                self.est.enter_fast_recovery(mss);
            }
        } else {
            self.ndupacks = 0;
        }
    }

    /// The current estimate.
    pub fn estimate(&self) -> Estimate {
        self.est
    }

    /// CMAXACK: the highest acknowledgment number taken into account.
    pub fn cmaxack(&self) -> u32 {
        self.cmaxack
    }

    /// The duplicate-ACK counter.
    pub fn ndupacks(&self) -> u32 {
        self.ndupacks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn params() -> TrackerParams {
        TrackerParams::new(MSS, 8000)
    }

    #[test]
    fn seq_slow_start_then_congestion_avoidance() {
        let mut t = SeqTracker::new(params(), 0);
        assert_eq!(
            t.estimate(),
            Estimate {
                cwnd: 4000,
                ssthresh: 8000,
                phase: Phase::SlowStart
            }
        );
        for i in 1..=4 {
            t.on_segment(i * MSS);
        }
        // cwnd grows by each distance: 4000 + 4 * 1000 = 8000, not yet above ssthresh.
        assert_eq!(t.estimate().cwnd, 8000);
        assert_eq!(t.estimate().phase, Phase::SlowStart);
        assert_eq!(t.cminsn(), 0);
        t.on_segment(5 * MSS);
        assert_eq!(
            t.estimate(),
            Estimate {
                cwnd: 9000,
                ssthresh: 8000,
                phase: Phase::CongestionAvoidance
            }
        );
        // CMINSN = CMAXSN - cwnd once the stream spans more than cwnd (erratum of 6.2).
        t.on_segment(10 * MSS);
        // 5000 * 1000 / 9000 = 555 in congestion avoidance.
        assert_eq!(t.estimate().cwnd, 9555);
        assert_eq!(t.cmaxsn(), 10_000);
        assert_eq!(t.cminsn(), 10_000 - 9555);
    }

    #[test]
    fn seq_reordering_is_ignored_and_retransmission_enters_fast_recovery() {
        let mut t = SeqTracker::new(params(), 0);
        for i in 1..=10 {
            t.on_segment(i * MSS);
        }
        let before = t.estimate();
        t.on_segment(7 * MSS); // 3 * MSS behind: reordering
        assert_eq!(t.estimate(), before);
        t.on_segment(6 * MSS); // 4 * MSS behind: retransmission
        let fr = t.estimate();
        assert_eq!(fr.phase, Phase::FastRecovery);
        assert_eq!(fr.cwnd, before.cwnd / 2);
        assert_eq!(fr.ssthresh, (before.cwnd / 2).max(2 * MSS));
        // Fast recovery ends once a segment reaches CMAXSN + cwnd.
        t.on_segment(10 * MSS + fr.cwnd - 1);
        assert_eq!(t.estimate().phase, Phase::FastRecovery);
        t.on_segment(10 * MSS + fr.cwnd);
        assert_eq!(t.estimate().phase, Phase::CongestionAvoidance);
        assert_eq!(t.cmaxsn(), 10 * MSS + fr.cwnd);
    }

    #[test]
    fn seq_wraps_around() {
        let start = u32::MAX - 2500;
        let mut t = SeqTracker::new(params(), start);
        t.on_segment(start.wrapping_add(MSS));
        t.on_segment(start.wrapping_add(2 * MSS));
        t.on_segment(start.wrapping_add(3 * MSS));
        assert_eq!(t.estimate().cwnd, 7000);
        assert_eq!(t.cmaxsn(), start.wrapping_add(3 * MSS));
    }

    #[test]
    fn ack_slow_start_dupacks_and_recovery() {
        let mut t = AckTracker::new(params(), 0);
        for i in 1..=5 {
            t.on_segment(i * MSS);
        }
        assert_eq!(t.estimate().phase, Phase::CongestionAvoidance);
        let cwnd = t.estimate().cwnd;
        assert_eq!(cwnd, 9000);
        t.on_segment(5 * MSS);
        t.on_segment(5 * MSS);
        assert_eq!(t.ndupacks(), 2);
        assert_eq!(t.estimate().phase, Phase::CongestionAvoidance);
        t.on_segment(5 * MSS); // third duplicate: fast retransmit fires
        let fr = t.estimate();
        assert_eq!(
            fr,
            Estimate {
                cwnd: 4500,
                ssthresh: 4500,
                phase: Phase::FastRecovery
            }
        );
        t.on_segment(5 * MSS);
        t.on_segment(4 * MSS);
        assert_eq!(t.estimate(), fr);
        t.on_segment(6 * MSS); // new data acknowledged: recovery is over
        assert_eq!(t.estimate().phase, Phase::CongestionAvoidance);
        assert_eq!(t.ndupacks(), 0);
        assert_eq!(t.cmaxack(), 6 * MSS);
    }

    #[test]
    fn ack_older_acks_reset_the_duplicate_count() {
        let mut t = AckTracker::new(params(), 10 * MSS);
        t.on_segment(10 * MSS);
        t.on_segment(10 * MSS);
        t.on_segment(9 * MSS); // reordered older ACK
        assert_eq!(t.ndupacks(), 0);
        t.on_segment(10 * MSS);
        t.on_segment(10 * MSS);
        assert_eq!(t.estimate().phase, Phase::SlowStart);
    }

    #[test]
    fn ssthresh_never_falls_below_two_segments() {
        let mut t = AckTracker::new(TrackerParams::new(MSS, 1000), 0);
        for _ in 0..3 {
            t.on_segment(0);
        }
        assert_eq!(t.estimate().cwnd, 2000);
        assert_eq!(t.estimate().ssthresh, 2000);
        assert_eq!(t.estimate().window_share(), 4000);
    }
}
