//! The retransmission timer of RFC 6298: SRTT, RTTVAR, RTO with a lower and upper bound and
//! exponential backoff.

use serde::{Deserialize, Serialize};

use crate::event::{Time, MILLISECOND, SECOND};

/// In which order the RTO's lower bound and the exponential backoff apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backoff {
    /// RFC 6298: the RTO is bounded (2.4), then doubles on each expiry (5.5); a computed RTO of
    /// 0.4 s with a 1 s floor backs off to 2 s, 4 s, …
    #[default]
    Rfc6298,
    /// NS-2's TCP agents as they were before RFC 2988 (today's `rfc2988_ false`): the computed
    /// RTO doubles, then the floor applies, so the first backoffs of a short RTO stay at the
    /// floor (0.4 s backs off to 1 s, 1 s, 1.6 s, …). The simulator the TAROC draft used.
    Ns2Classic,
}

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
    /// Order of floor and backoff.
    pub backoff: Backoff,
}

impl Default for RtoConfig {
    fn default() -> RtoConfig {
        RtoConfig {
            initial_ns: SECOND,
            min_ns: SECOND,
            max_ns: 60 * SECOND,
            granularity_ns: 10 * MILLISECOND,
            backoff: Backoff::Rfc6298,
        }
    }
}

impl RtoConfig {
    /// BSD's coarse timer: a 500 ms clock, a 1 s floor, 3 s before any sample, exponential
    /// backoff to 64 s.
    pub fn coarse() -> RtoConfig {
        RtoConfig {
            initial_ns: 3 * SECOND,
            min_ns: SECOND,
            max_ns: 64 * SECOND,
            granularity_ns: 500 * MILLISECOND,
            ..RtoConfig::default()
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

    /// The current RTO, bounds and backoff applied in the order of [`RtoConfig::backoff`].
    pub fn rto(&self) -> Time {
        let (min, max) = (self.config.min_ns, self.config.max_ns);
        match self.config.backoff {
            Backoff::Rfc6298 => self
                .base
                .clamp(min, max)
                .saturating_mul(1 << self.backoff)
                .min(max),
            Backoff::Ns2Classic => self.base.saturating_mul(1 << self.backoff).clamp(min, max),
        }
    }

    /// Expiries since the last RTT sample (the backoff exponent).
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }

    /// The RTT variation.
    pub fn rttvar(&self) -> Time {
        self.rttvar
    }

    /// The clock granularity G.
    pub fn granularity(&self) -> Time {
        self.config.granularity_ns
    }

    /// Sets SRTT and RTTVAR (a timeout response's restore, e.g. RFC 4015) and recomputes the RTO
    /// as RFC 6298 (2.3) does, clearing the backoff.
    pub fn set(&mut self, srtt: Time, rttvar: Time) {
        self.srtt = Some(srtt);
        self.rttvar = rttvar;
        self.base = srtt + self.config.granularity_ns.max(4 * rttvar);
        self.backoff = 0;
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

    #[test]
    fn floor_then_backoff_per_rfc6298_or_backoff_then_floor_as_classic_ns2() {
        for (backoff, expected) in [
            (Backoff::Rfc6298, [1000, 2000, 4000, 8000]),
            (Backoff::Ns2Classic, [1000, 1000, 1200, 2400]),
        ] {
            let mut r = RtoEstimator::new(RtoConfig {
                backoff,
                ..RtoConfig::default()
            });
            r.sample(100 * MILLISECOND); // RTO = 100 + 4 * 50 = 300 ms, below the 1 s floor
            let mut seen = [0; 4];
            for slot in &mut seen {
                *slot = r.rto() / MILLISECOND;
                r.back_off();
            }
            assert_eq!(seen, expected, "{backoff:?}");
        }
    }
}
