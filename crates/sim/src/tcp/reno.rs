//! Reno (RFC 5681 section 3.2): fast retransmit on the third duplicate ACK, ssthresh =
//! max(FlightSize/2, 2 SMSS), cwnd = ssthresh + 3 SMSS, inflated by one SMSS per further
//! duplicate ACK, deflated to ssthresh by the next new ACK (which ends fast recovery).

use super::recovery::Recovery;
use super::state::SenderState;

/// The Reno variant.
#[derive(Debug, Default, Clone)]
pub struct Reno {
    in_recovery: bool,
}

impl Recovery for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_new_ack(&mut self, s: &mut SenderState, acked: u64) {
        if self.in_recovery {
            s.cwnd = s.ssthresh;
            self.in_recovery = false;
        } else {
            s.grow(acked);
        }
    }

    fn on_dup_ack(&mut self, s: &mut SenderState) {
        if self.in_recovery {
            s.cwnd += s.mss;
        } else if s.dupacks == 3 {
            s.ssthresh = s.halved_flight();
            s.retransmit_now = Some(s.snd_una);
            s.cwnd = s.ssthresh + 3 * s.mss;
            s.fast_retransmits += 1;
            self.in_recovery = true;
        }
    }

    fn on_timeout(&mut self, _s: &mut SenderState) {
        self.in_recovery = false;
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
}
