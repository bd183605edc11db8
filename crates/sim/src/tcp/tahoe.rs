//! Tahoe: on the third duplicate ACK, fast retransmit and then slow start from one segment,
//! resending everything from the first unacknowledged segment (go-back-N), as NS-2's `TCP`
//! agent does. Like NS-2 (`bugFix_`), a new fast retransmit only happens once the ACKs have
//! passed the highest segment sent when the last one started.

use super::recovery::Recovery;
use super::state::SenderState;

/// The Tahoe variant.
#[derive(Debug, Default, Clone)]
pub struct Tahoe {
    recover: Option<u64>,
}

impl Recovery for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }

    fn on_new_ack(&mut self, s: &mut SenderState, acked: u64) {
        s.grow(acked);
    }

    fn on_dup_ack(&mut self, s: &mut SenderState) {
        if s.dupacks == 3 && self.recover.is_none_or(|r| s.snd_una >= r) {
            s.ssthresh = s.halved_flight();
            s.cwnd = s.mss;
            s.snd_nxt = s.snd_una;
            s.retransmit_now = Some(s.snd_una);
            s.snd_nxt = s.snd_una + s.mss;
            s.fast_retransmits += 1;
            self.recover = Some(s.snd_max);
        }
    }

    fn on_timeout(&mut self, s: &mut SenderState) {
        self.recover = Some(s.snd_max);
    }
}
