//! F-RTO (RFC 5682): the basic algorithm (section 2.1) with a variant that does not use SACK,
//! the SACK-enhanced one (section 3.1) with one that does, and the DCLOR draft's response to a
//! detected spurious timeout: the window halved (cwnd = ssthresh = max(FlightSize / 2, 2 SMSS)
//! as set at the timeout) and sending resumed with new data.
//!
//! Step 1 is the conventional response (one retransmission of the first unacknowledged
//! segment, cwnd = 1); when a conventional RTO recovery is still under way ("recover" >=
//! SND.UNA) the algorithm stops there. Step 2b sends up to two new segments by opening cwnd to
//! FlightSize + 2 SMSS for that ACK. Falling back to conventional recovery (2a) leaves the
//! conventional state as it is; step 3a sets cwnd = 3 SMSS and retransmits from SND.UNA.

use super::{conventional, AckInfo, AckVerdict, TimeoutEvent, TimeoutResponse};
use crate::tcp::rto::RtoEstimator;
use crate::tcp::state::SenderState;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Step {
    #[default]
    Idle,
    /// Waiting for the first (basic) or first new (SACK) ACK after the retransmission of the
    /// segment at `una` (of `len` bytes).
    Two { una: u64, len: u64 },
    /// Waiting for the next ACK after the new segments; `recover` as stored in step 2.
    Three { recover: u64 },
}

/// The F-RTO response.
#[derive(Debug, Default, Clone)]
pub struct Frto {
    step: Step,
    sack: bool,
    /// The highest offset sent when the last conventional RTO recovery began.
    recover: Option<u64>,
}

impl Frto {
    fn fall_back(&mut self, s: &SenderState) -> AckVerdict {
        self.step = Step::Idle;
        self.recover = Some(s.snd_max);
        AckVerdict::CONTINUE
    }

    fn send_two_new(&mut self, s: &mut SenderState, a: &AckInfo) -> AckVerdict {
        if !s.has_new_data() {
            return self.fall_back(s);
        }
        self.step = Step::Three { recover: s.snd_max };
        s.snd_nxt = s.snd_max;
        s.cwnd = (s.snd_max - a.ack) + 2 * s.mss;
        AckVerdict::HANDLED
    }

    fn spurious(&mut self, s: &mut SenderState) -> AckVerdict {
        s.detected_spurious += 1;
        s.cwnd = s.ssthresh;
        s.snd_nxt = s.snd_max;
        self.step = Step::Idle;
        self.recover = None;
        AckVerdict::HANDLED
    }

    fn genuine_after_new_data(&mut self, s: &mut SenderState) -> AckVerdict {
        s.cwnd = 3 * s.mss;
        s.snd_nxt = s.snd_una;
        s.scoreboard.clear_marks();
        self.step = Step::Idle;
        self.recover = Some(s.snd_max);
        AckVerdict::STALE
    }
}

impl TimeoutResponse for Frto {
    fn name(&self) -> &'static str {
        "frto"
    }

    fn on_timeout(&mut self, mut t: TimeoutEvent<'_>) {
        self.sack = t.recovery.uses_sack();
        let s = &*t.state;
        let in_rto_recovery =
            self.step == Step::Idle && self.recover.is_some_and(|r| r >= s.snd_una);
        let (una, len) = (s.snd_una, s.segment_len(s.snd_una));
        conventional(&mut t);
        if in_rto_recovery {
            self.recover = Some(t.state.snd_max);
            self.step = Step::Idle;
        } else {
            self.step = Step::Two { una, len };
        }
    }

    fn on_ack(&mut self, s: &mut SenderState, _rto: &mut RtoEstimator, a: &AckInfo) -> AckVerdict {
        match self.step {
            Step::Idle => AckVerdict::CONTINUE,
            Step::Two { una, len } => {
                let recover = s.snd_max;
                if self.sack {
                    if !a.new {
                        return AckVerdict::STALE; // step 2: wait for a new ACK
                    }
                    if a.ack >= recover {
                        s.cwnd = s.cwnd.min(2 * s.mss);
                        return self.fall_back(s); // 2a
                    }
                    self.send_two_new(s, a) // 2b
                } else if a.duplicate || a.ack == recover || (a.new && a.ack < una + len) {
                    self.fall_back(s) // 2a
                } else if a.new {
                    self.send_two_new(s, a) // 2b
                } else {
                    AckVerdict::STALE
                }
            }
            Step::Three { recover } => {
                if self.sack {
                    let covers_more =
                        a.ack > recover || a.highest_sack.is_some_and(|r| r > recover);
                    if covers_more || (a.duplicate && a.newly_sacked == 0) {
                        self.genuine_after_new_data(s) // 3a
                    } else if a.new || a.newly_sacked > 0 {
                        self.spurious(s) // 3b
                    } else {
                        AckVerdict::STALE
                    }
                } else if a.duplicate {
                    self.genuine_after_new_data(s) // 3a
                } else if a.new {
                    self.spurious(s) // 3b
                } else {
                    AckVerdict::STALE
                }
            }
        }
    }
}
