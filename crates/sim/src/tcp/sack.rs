//! SACK-based loss recovery (RFC 6675), with per-segment scoreboard. Recovery starts on the
//! third duplicate ACK or when IsLost(HighACK + 1) holds (section 5 step 4): RecoveryPoint =
//! HighData, ssthresh = cwnd = max(FlightSize/2, 2 SMSS), the first unacknowledged segment is
//! retransmitted; then, while `cwnd - pipe >= SMSS`, NextSeg sends (rule 1) the lowest lost,
//! not yet retransmitted segment, else (rule 2) new data. Rules 3 and 4 (optional
//! retransmission of segments not deemed lost) are not used, as in NS-2's Sack1. Recovery ends
//! when the cumulative ACK reaches RecoveryPoint. Like NewReno, it is entered only when the ACK
//! covers more than the previous RecoveryPoint.

use super::recovery::Recovery;
use super::state::SenderState;

/// The SACK variant.
#[derive(Debug, Default, Clone)]
pub struct Sack {
    in_recovery: bool,
    recovery_point: Option<u64>,
}

impl Recovery for Sack {
    fn name(&self) -> &'static str {
        "sack"
    }

    fn uses_sack(&self) -> bool {
        true
    }

    fn on_new_ack(&mut self, s: &mut SenderState, acked: u64) {
        if !self.in_recovery {
            s.grow(acked);
        } else if s.snd_una >= self.recovery_point.unwrap_or(0) {
            self.in_recovery = false;
            s.cwnd = s.ssthresh;
        }
    }

    fn on_dup_ack(&mut self, s: &mut SenderState) {
        if self.in_recovery || self.recovery_point.is_some_and(|r| s.snd_una <= r) {
            return;
        }
        let lost = s.scoreboard.is_lost(s, s.snd_una);
        if s.dupacks >= 3 || lost {
            self.in_recovery = true;
            self.recovery_point = Some(s.snd_max);
            s.ssthresh = s.halved_flight();
            s.cwnd = s.ssthresh;
            s.scoreboard.clear_retransmitted();
            s.retransmit_now = Some(s.snd_una);
            s.fast_retransmits += 1;
        }
    }

    fn on_timeout(&mut self, s: &mut SenderState) {
        self.in_recovery = false;
        self.recovery_point = Some(s.snd_max);
    }

    fn next_segment(&mut self, s: &mut SenderState) -> Option<u64> {
        if !self.in_recovery {
            return s.next_in_window();
        }
        if s.cwnd < s.pipe() + s.mss {
            return None;
        }
        // Rule 1: the lowest lost segment not yet retransmitted.
        let mut seq = s.snd_una;
        while seq < s.snd_max {
            let sb = &s.scoreboard;
            if !sb.is_sacked(s, seq) && !sb.is_retransmitted(s, seq) && sb.is_lost(s, seq) {
                return Some(seq);
            }
            seq += s.mss;
        }
        // Rule 2: new data, within the receiver's and the maximum window.
        s.next_new_segment()
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
}
