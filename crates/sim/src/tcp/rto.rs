//! The retransmission timer of RFC 6298: SRTT, RTTVAR, RTO with a lower and upper bound and
//! exponential backoff.

use serde::{Deserialize, Serialize};

use crate::event::{Time, MILLISECOND, SECOND};

/// Settings of the retransmission timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtoConfig {
    /// RTO before any RTT sample (RFC 6298 (2.1): 1 s).
    pub initial_ns: Time,
    /// Lower bound (RFC 6298 (2.4): 1 s).
    pub min_ns: Time,
    /// Upper bound (RFC 6298 (2.5): at least 60 s).
    pub max_ns: Time,
    /// Clock granularity G.
    pub granularity_ns: Time,
}

impl Default for RtoConfig {
    fn default() -> RtoConfig {
        RtoConfig {
            initial_ns: SECOND,
            min_ns: SECOND,
            max_ns: 60 * SECOND,
            granularity_ns: 10 * MILLISECOND,
        }
    }
}

/// The RTT estimator and current RTO.
#[derive(Debug, Clone)]
pub struct RtoEstimator {
    config: RtoConfig,
    srtt: Option<Time>,
    rttvar: Time,
    base: Time,
    backoff: u32,
}

impl RtoEstimator {
    /// A fresh estimator.
    pub fn new(config: RtoConfig) -> RtoEstimator {
        RtoEstimator {
            config,
            srtt: None,
            rttvar: 0,
            base: config.initial_ns,
            backoff: 0,
        }
    }

    /// Takes an RTT measurement (RFC 6298 (2.2), (2.3)) and clears the backoff.
    pub fn sample(&mut self, rtt: Time) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|; SRTT <- 7/8 SRTT + 1/8 R'.
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(rtt)) / 4;
                self.srtt = Some((7 * srtt + rtt) / 8);
            }
        }
        let srtt = self.srtt.unwrap_or(rtt);
        self.base = srtt + self.config.granularity_ns.max(4 * self.rttvar);
        self.backoff = 0;
    }

    /// Doubles the RTO after an expiry (RFC 6298 (5.5)).
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(16);
    }

    /// The current RTO, bounds and backoff applied.
    pub fn rto(&self) -> Time {
        let backed = self.base.saturating_mul(1 << self.backoff);
        backed.clamp(self.config.min_ns, self.config.max_ns)
    }

    /// Expiries since the last RTT sample (the backoff exponent).
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }

    /// The smoothed RTT, once measured.
    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_and_update_follow_rfc6298() {
        let cfg = RtoConfig {
            min_ns: 0,
            ..RtoConfig::default()
        };
        let mut r = RtoEstimator::new(cfg);
        assert_eq!(r.rto(), SECOND);
        r.sample(400 * MILLISECOND);
        // SRTT 400, RTTVAR 200 -> RTO = 400 + 800 = 1200 ms.
        assert_eq!(r.rto(), 1200 * MILLISECOND);
        r.sample(400 * MILLISECOND);
        // RTTVAR = 3/4 * 200 = 150, SRTT 400 -> 1000 ms.
        assert_eq!(r.rto(), 1000 * MILLISECOND);
    }

    #[test]
    fn backoff_doubles_and_is_bounded() {
        let mut r = RtoEstimator::new(RtoConfig::default());
        r.back_off();
        assert_eq!(r.rto(), 2 * SECOND);
        r.back_off();
        assert_eq!(r.rto(), 4 * SECOND);
        for _ in 0..20 {
            r.back_off();
        }
        assert_eq!(r.rto(), 60 * SECOND);
        r.sample(100 * MILLISECOND);
        assert_eq!(r.rto(), SECOND, "a sample clears the backoff; 1 s floor");
    }
}
