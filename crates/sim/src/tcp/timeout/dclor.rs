//! DCLOR (draft-swami-tsvwg-tcp-dclor-00 section 4): at a timeout, cwnd = 0 with ssthresh kept
//! and the flight size N remembered (step 2), SACK marks reneged (step 3), and ONE new segment
//! sent, its offset kept as SS_PTR (step 4; the last segment of the retransmission queue when
//! there is no new data or the receiver's window is closed). ACKs below SS_PTR are stale (steps
//! 6–7): they only advance `snd_una` and mark SACKs; no window growth, no RTT sample, no fast
//! retransmit from their duplicates. A SACK block holding SS_PTR ends the probe with loss (steps
//! 8–10: every un-SACKed segment below it is lost, ssthresh = N / 2, cwnd = 2, lost segments
//! first); an ACK covering SS_PTR ends it without (step 10: ssthresh kept, cwnd = 2, new data).
//! A repeated timeout in the probe repeats step 2 and resends the probe (step 5). The
//! timeout-recovery sends, while `cwnd - pipe >= SMSS`, the lowest lost segment, else new data,
//! growing cwnd by slow start, until the ACK passes the highest segment sent at the exit.
//!
//! DCLOR needs SACK: with a variant that does not use it, the response is the conventional one
//! (section 6: DCLOR SHOULD NOT be invoked without SACK information).

use super::{conventional, AckInfo, AckVerdict, TimeoutEvent, TimeoutResponse};
use crate::tcp::rto::RtoEstimator;
use crate::tcp::state::SenderState;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    #[default]
    Idle,
    /// Waiting for the ACK or SACK of the probe.
    Probe {
        ss_ptr: u64,
        flight: u64,
        probe_was_new: bool,
    },
    /// Recovering the segments found lost, until `point` is acknowledged.
    Recovery { point: u64 },
}

/// The DCLOR response.
#[derive(Debug, Default, Clone)]
pub struct Dclor {
    phase: Phase,
}

impl Dclor {
    /// SS_PTR while probing.
    pub fn ss_ptr(&self) -> Option<u64> {
        match self.phase {
            Phase::Probe { ss_ptr, .. } => Some(ss_ptr),
            _ => None,
        }
    }
}

impl TimeoutResponse for Dclor {
    fn name(&self) -> &'static str {
        "dclor"
    }

    fn on_timeout(&mut self, mut t: TimeoutEvent<'_>) {
        if !t.recovery.uses_sack() {
            conventional(&mut t);
            return;
        }
        let s = &mut *t.state;
        s.cwnd = 0;
        s.dupacks = 0;
        s.retransmit_now = None;
        s.scoreboard.clear_marks();
        t.recovery.on_timeout(s);
        if let Phase::Probe { ss_ptr, .. } = self.phase {
            // Step 5: still probing; send the probe again.
            s.retransmit_now = Some(ss_ptr);
            return;
        }
        let flight = s.flight_size();
        let window_open = s.snd_max + s.segment_len(s.snd_max) <= s.snd_una + s.rwnd;
        let (probe, new) = if s.has_new_data() && window_open {
            (s.snd_max, true)
        } else {
            ((s.snd_max - 1) / s.mss * s.mss, false)
        };
        s.retransmit_now = Some(probe);
        s.snd_nxt = s.snd_nxt.max(probe + s.segment_len(probe));
        self.phase = Phase::Probe {
            ss_ptr: probe,
            flight,
            probe_was_new: new,
        };
    }

    fn on_ack(&mut self, s: &mut SenderState, _rto: &mut RtoEstimator, a: &AckInfo) -> AckVerdict {
        match self.phase {
            Phase::Idle => AckVerdict::CONTINUE,
            Phase::Probe {
                ss_ptr,
                flight,
                probe_was_new,
            } => {
                if a.ack >= ss_ptr + s.segment_len(ss_ptr) {
                    // Step 10 from step 7: no loss (the timeout was spurious); ssthresh unchanged.
                    s.detected_spurious += 1;
                    s.cwnd = 2 * s.mss;
                    s.snd_nxt = s.snd_max;
                    self.phase = Phase::Idle;
                    AckVerdict {
                        sample_rtt: probe_was_new,
                        to_recovery: false,
                    }
                } else if s.scoreboard.is_sacked(s, ss_ptr) {
                    // Steps 8–10: everything un-SACKed below SS_PTR is lost.
                    s.mark_unsacked_lost(ss_ptr);
                    s.ssthresh = (flight / 2).max(2 * s.mss);
                    s.cwnd = 2 * s.mss;
                    s.snd_nxt = s.snd_max;
                    self.phase = Phase::Recovery { point: s.snd_max };
                    AckVerdict::STALE
                } else {
                    AckVerdict::STALE
                }
            }
            Phase::Recovery { point } => {
                if a.new {
                    if a.ack >= point {
                        self.phase = Phase::Idle;
                    }
                    s.grow(a.ack - a.prior_una);
                    AckVerdict::HANDLED
                } else {
                    AckVerdict::STALE
                }
            }
        }
    }

    fn next_segment(&mut self, s: &mut SenderState) -> Option<Option<u64>> {
        match self.phase {
            Phase::Idle => None,
            Phase::Probe { .. } => Some(None),
            Phase::Recovery { .. } => {
                if s.cwnd < s.pipe() + s.mss {
                    return Some(None);
                }
                let mut seq = s.snd_una;
                while seq < s.snd_max {
                    let sb = &s.scoreboard;
                    if !sb.is_sacked(s, seq) && !sb.is_retransmitted(s, seq) && sb.is_lost(s, seq) {
                        return Some(Some(seq));
                    }
                    seq += s.mss;
                }
                Some(s.next_new_segment())
            }
        }
    }
}
