//! Eifel detection (RFC 3522) with the Eifel response of RFC 4015, in this summary of it (the
//! RFC's own text is not among the references this simulator follows): at the timeout, pipe_prev = max(FlightSize,
//! ssthresh), SRTT_prev = SRTT + 2G, RTTVAR_prev = RTTVAR; on a detected spurious timeout,
//! sending resumes from SND.MAX with cwnd = FlightSize + min(bytes acked, IW) and ssthresh =
//! pipe_prev; the first RTT sample m of new data sets SRTT = max(SRTT_prev, m), RTTVAR =
//! max(RTTVAR_prev, m / 2) and the RTO from them.

use super::eifel::Detector;
use super::{conventional, AckInfo, AckVerdict, TimeoutEvent, TimeoutResponse};
use crate::event::{Time, MILLISECOND};
use crate::tcp::rto::RtoEstimator;
use crate::tcp::state::SenderState;

/// The RFC 4015 response.
#[derive(Debug, Default, Clone)]
pub struct Eifel4015 {
    detector: Detector,
    pipe_prev: u64,
    rtt_prev: Option<(Time, Time)>,
    /// After a detection: the first ACK beyond this offset gives the RTT sample of new data.
    new_data_from: Option<u64>,
}

impl TimeoutResponse for Eifel4015 {
    fn name(&self) -> &'static str {
        "eifel-4015"
    }

    fn on_timeout(&mut self, mut t: TimeoutEvent<'_>) {
        if self.detector.on_timeout(t.now_ts) {
            let s = &*t.state;
            self.pipe_prev = s.flight_size().max(s.ssthresh);
            self.rtt_prev = t
                .rto
                .srtt()
                .map(|srtt| (srtt + 2 * t.rto.granularity(), t.rto.rttvar()));
            self.new_data_from = None;
        }
        conventional(&mut t);
    }

    fn on_ack(&mut self, s: &mut SenderState, rto: &mut RtoEstimator, a: &AckInfo) -> AckVerdict {
        if self.detector.on_ack(a, s.snd_max) == Some(true) {
            s.detected_spurious += 1;
            let acked = a.ack - a.prior_una;
            s.snd_nxt = s.snd_max;
            s.cwnd = (s.snd_max - a.ack) + acked.min(s.initial_window);
            s.ssthresh = self.pipe_prev;
            self.new_data_from = Some(s.snd_max);
            return AckVerdict {
                sample_rtt: false,
                to_recovery: false,
            };
        }
        if let (Some(from), true) = (self.new_data_from, a.new) {
            if a.ack > from {
                self.new_data_from = None;
                if let (Some((srtt_prev, rttvar_prev)), Some(ecr)) = (self.rtt_prev, a.ts_ecr) {
                    let m = u64::from(a.now_ts.wrapping_sub(ecr)) * MILLISECOND;
                    rto.set(srtt_prev.max(m), rttvar_prev.max(m / 2));
                    return AckVerdict {
                        sample_rtt: false,
                        to_recovery: true,
                    };
                }
            } else {
                // An ACK of data sent before the timeout: no sample of new data yet.
                return AckVerdict {
                    sample_rtt: false,
                    to_recovery: true,
                };
            }
        }
        AckVerdict::CONTINUE
    }
}
