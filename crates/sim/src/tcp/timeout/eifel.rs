//! Eifel: RFC 3522 detection of a spurious timeout and the DCLOR draft's response to it (the
//! window restored: cwnd and ssthresh as they were before the timeout, sending resumed with new
//! data). [`Detector`] is the detection alone, shared with [`super::eifel4015`].

use super::{conventional, AckInfo, AckVerdict, TimeoutEvent, TimeoutResponse};
use crate::tcp::rto::RtoEstimator;
use crate::tcp::state::SenderState;

/// RFC 3522 section 3.2, for timeout-based retransmits.
#[derive(Debug, Default, Clone, Copy)]
pub struct Detector {
    /// RetransmitTS while waiting for the acceptable ACK.
    retransmit_ts: Option<u32>,
    /// An ACK with a D-SACK option was seen during the connection.
    seen_dsack: bool,
}

impl Detector {
    /// Steps (1)–(2) at a timeout: returns true if detection starts now (not on a repeated
    /// timeout of the same loss recovery, which keeps RetransmitTS).
    pub fn on_timeout(&mut self, now_ts: u32) -> bool {
        if self.retransmit_ts.is_some() {
            return false;
        }
        self.retransmit_ts = Some(now_ts);
        true
    }

    /// Steps (3)–(6) on an ACK: `Some(true)` if this acceptable ACK shows the timeout spurious,
    /// `Some(false)` if it ends detection otherwise, `None` if detection is not running or the
    /// ACK is not acceptable. `snd_max` is the highest offset sent.
    pub fn on_ack(&mut self, a: &AckInfo, snd_max: u64) -> Option<bool> {
        let seen_dsack = self.seen_dsack;
        self.seen_dsack |= a.dsack;
        let retransmit_ts = self.retransmit_ts?;
        if !a.new {
            return None;
        }
        self.retransmit_ts = None;
        // (4): TSecr < RetransmitTS (in timestamp arithmetic).
        let older = a
            .ts_ecr
            .is_some_and(|ecr| (ecr.wrapping_sub(retransmit_ts) as i32) < 0);
        // (5)
        Some(older && !a.dsack && (seen_dsack || a.ack < snd_max))
    }
}

/// The Eifel response of the DCLOR draft.
#[derive(Debug, Default, Clone)]
pub struct Eifel {
    detector: Detector,
    saved: (u64, u64),
}

impl TimeoutResponse for Eifel {
    fn name(&self) -> &'static str {
        "eifel"
    }

    fn on_timeout(&mut self, mut t: TimeoutEvent<'_>) {
        if self.detector.on_timeout(t.now_ts) {
            self.saved = (t.state.cwnd, t.state.ssthresh);
        }
        conventional(&mut t);
    }

    fn on_ack(&mut self, s: &mut SenderState, _rto: &mut RtoEstimator, a: &AckInfo) -> AckVerdict {
        if self.detector.on_ack(a, s.snd_max) == Some(true) {
            s.detected_spurious += 1;
            (s.cwnd, s.ssthresh) = self.saved;
            s.snd_nxt = s.snd_max;
            return AckVerdict::HANDLED;
        }
        AckVerdict::CONTINUE
    }
}
