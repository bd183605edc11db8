//! NewReno (RFC 6582): fast recovery lasts until the ACK covers `recover` (the highest offset
//! sent when it began). A partial ACK retransmits the next unacknowledged segment and deflates
//! cwnd by the amount acknowledged (adding back one SMSS if at least one SMSS was acknowledged).
//! A full ACK sets cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS). Fast retransmit is only
//! entered when the ACK covers more than `recover` (section 3.2 step 2, the careful variant).
//! The timer is restarted by every new ACK (the "Slow-but-Steady" variant of section 4).

use super::recovery::Recovery;
use super::state::SenderState;

/// The NewReno variant.
#[derive(Debug, Default, Clone)]
pub struct NewReno {
    in_recovery: bool,
    recover: Option<u64>,
}

impl Recovery for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_new_ack(&mut self, s: &mut SenderState, acked: u64) {
        if !self.in_recovery {
            s.grow(acked);
            return;
        }
        let recover = self.recover.unwrap_or(0);
        if s.snd_una >= recover {
            // Full acknowledgment (step 3).
            s.cwnd = s.ssthresh.min(s.flight_size().max(s.mss) + s.mss);
            self.in_recovery = false;
        } else {
            // Partial acknowledgment (step 4).
            s.retransmit_now = Some(s.snd_una);
            s.cwnd = s.cwnd.saturating_sub(acked);
            if acked >= s.mss {
                s.cwnd += s.mss;
            }
            s.cwnd = s.cwnd.max(s.mss);
        }
    }

    fn on_dup_ack(&mut self, s: &mut SenderState) {
        if self.in_recovery {
            s.cwnd += s.mss;
        } else if s.dupacks == 3 && self.recover.is_none_or(|r| s.snd_una > r) {
            self.recover = Some(s.snd_max);
            s.ssthresh = s.halved_flight();
            s.retransmit_now = Some(s.snd_una);
            s.cwnd = s.ssthresh + 3 * s.mss;
            s.fast_retransmits += 1;
            self.in_recovery = true;
        }
    }

    fn on_timeout(&mut self, s: &mut SenderState) {
        self.in_recovery = false;
        self.recover = Some(s.snd_max);
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
}
