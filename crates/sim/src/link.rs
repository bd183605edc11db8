//! The link model: bandwidth, propagation delay, a DropTail queue counted in packets, and bit
//! errors (independent at a BER, or a Gilbert–Elliott two-state burst model). A frame with any
//! bit error is discarded by the receiving link layer (as if by a link CRC), so the model only
//! has to decide *whether* a frame is hit, with the exact probability `1 - (1 - BER)^bits`.

use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use crate::event::{Time, SECOND};

/// How bit errors happen on one direction of a link. As a table (a scenario file's
/// `[errors]`), `kind` names the model and the other keys are its fields: a key the model does
/// not have is refused.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ErrorModel {
    /// No bit errors.
    #[serde(deserialize_with = "no_fields")]
    None,
    /// Independent bit errors with probability `ber` per bit.
    Ber {
        /// Bit error rate, 0..1.
        ber: f64,
    },
    /// Gilbert–Elliott: a good and a bad state with their own BERs. The state may change before
    /// each frame (transition probabilities per frame), and a frame sees one state throughout.
    GilbertElliott {
        /// BER in the good state.
        good_ber: f64,
        /// BER in the bad state.
        bad_ber: f64,
        /// Probability of moving good -> bad before a frame.
        p_good_to_bad: f64,
        /// Probability of moving bad -> good before a frame.
        p_bad_to_good: f64,
    },
    /// Gilbert–Elliott in time: the link stays in each state for an exponentially distributed
    /// time of the state's mean (starting in the good state), and a frame sees the state of the
    /// moment its transmission starts. Bursts then last as long on an idle link (a TCP sender
    /// backing off) as on a busy one, unlike the per-frame chain, whose bad state would outlast
    /// every timeout of a sender that stops sending.
    GilbertElliottTime {
        /// BER in the good state.
        good_ber: f64,
        /// BER in the bad state (1 loses every frame).
        bad_ber: f64,
        /// Mean time in the good state, seconds.
        mean_good_s: f64,
        /// Mean time in the bad state, seconds.
        mean_bad_s: f64,
    },
}

/// A model with no field, as a table: `kind` alone (serde would ignore any other key of a
/// unit variant).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoFields {}

/// Reads the fields of [`ErrorModel::None`]: none, so any key is refused.
fn no_fields<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    NoFields::deserialize(deserializer).map(|NoFields {}| ())
}

impl ErrorModel {
    /// Checks the probabilities, with a message naming the bad one.
    pub fn validate(&self) -> Result<(), String> {
        let check = |name: &str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(format!("{name} must be between 0 and 1, got {p}"))
            }
        };
        match *self {
            ErrorModel::None => Ok(()),
            ErrorModel::Ber { ber } => check("ber", ber),
            ErrorModel::GilbertElliott {
                good_ber,
                bad_ber,
                p_good_to_bad,
                p_bad_to_good,
            } => {
                check("good_ber", good_ber)?;
                check("bad_ber", bad_ber)?;
                check("p_good_to_bad", p_good_to_bad)?;
                check("p_bad_to_good", p_bad_to_good)
            }
            ErrorModel::GilbertElliottTime {
                good_ber,
                bad_ber,
                mean_good_s,
                mean_bad_s,
            } => {
                check("good_ber", good_ber)?;
                check("bad_ber", bad_ber)?;
                for (name, mean) in [("mean_good_s", mean_good_s), ("mean_bad_s", mean_bad_s)] {
                    if !(mean > 0.0 && mean <= 1e9) {
                        return Err(format!(
                            "{name} must be positive (at most 1e9 s), got {mean}"
                        ));
                    }
                }
                Ok(())
            }
        }
    }
}

/// The probability that a frame of `bits` bits has at least one bit error at `ber`:
/// `1 - (1 - ber)^bits`, computed without cancellation for tiny BERs.
pub fn frame_error_probability(ber: f64, bits: u64) -> f64 {
    if ber <= 0.0 {
        return 0.0;
    }
    if ber >= 1.0 {
        return if bits > 0 { 1.0 } else { 0.0 };
    }
    -((bits as f64) * (-ber).ln_1p()).exp_m1()
}

/// A uniform number in [0, 1) from 53 random bits.
pub fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The running error process of one link direction.
#[derive(Debug, Clone)]
pub struct ErrorProcess {
    model: ErrorModel,
    bad: bool,
    /// When the time-based chain next changes state (drawn at the first frame).
    next_switch: Option<Time>,
}

/// An exponentially distributed duration of mean `mean_s` seconds, in ns (at least 1).
fn exponential_ns(mean_s: f64, rng: &mut ChaCha8Rng) -> Time {
    let seconds = -mean_s * (-uniform(rng)).ln_1p();
    ((seconds * SECOND as f64) as Time).max(1)
}

impl ErrorProcess {
    /// A process of `model`, starting in the good state.
    pub fn new(model: ErrorModel) -> ErrorProcess {
        ErrorProcess {
            model,
            bad: false,
            next_switch: None,
        }
    }

    /// Whether a frame of `bits` bits whose transmission starts at `now` is hit by at least
    /// one bit error. Draws from `rng` (for the per-frame models, the same number of draws per
    /// frame whatever the outcome).
    pub fn corrupts(&mut self, bits: u64, now: Time, rng: &mut ChaCha8Rng) -> bool {
        match self.model {
            ErrorModel::None => false,
            ErrorModel::Ber { ber } => uniform(rng) < frame_error_probability(ber, bits),
            ErrorModel::GilbertElliott {
                good_ber,
                bad_ber,
                p_good_to_bad,
                p_bad_to_good,
            } => {
                let u = uniform(rng);
                self.bad = if self.bad {
                    u >= p_bad_to_good
                } else {
                    u < p_good_to_bad
                };
                let ber = if self.bad { bad_ber } else { good_ber };
                uniform(rng) < frame_error_probability(ber, bits)
            }
            ErrorModel::GilbertElliottTime {
                good_ber,
                bad_ber,
                mean_good_s,
                mean_bad_s,
            } => {
                let mut switch = match self.next_switch {
                    Some(t) => t,
                    None => exponential_ns(mean_good_s, rng),
                };
                while switch <= now {
                    self.bad = !self.bad;
                    let mean = if self.bad { mean_bad_s } else { mean_good_s };
                    switch = switch.saturating_add(exponential_ns(mean, rng));
                }
                self.next_switch = Some(switch);
                let ber = if self.bad { bad_ber } else { good_ber };
                uniform(rng) < frame_error_probability(ber, bits)
            }
        }
    }
}

/// The parameters of one direction of a link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinkParams {
    /// Bandwidth, bits per second (> 0).
    pub rate_bps: u64,
    /// Propagation delay, nanoseconds.
    pub delay_ns: Time,
    /// DropTail limit in packets, counting the one being transmitted (>= 1).
    pub queue_limit: usize,
    /// Bit errors.
    pub errors: ErrorModel,
}

impl LinkParams {
    /// Nanoseconds to serialize `bytes` bytes (rounded up).
    pub fn tx_time(&self, bytes: usize) -> Time {
        let bits = bytes as u128 * 8 * u128::from(SECOND);
        let rate = u128::from(self.rate_bps.max(1));
        bits.div_ceil(rate) as Time
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err("link rate must be positive".into());
        }
        if self.queue_limit == 0 {
            return Err("queue limit must be at least 1 packet".into());
        }
        self.errors.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn tx_time_is_exact() {
        let p = LinkParams {
            rate_bps: 9600,
            delay_ns: 0,
            queue_limit: 1,
            errors: ErrorModel::None,
        };
        assert_eq!(p.tx_time(1200), SECOND);
        assert_eq!(p.tx_time(0), 0);
    }

    #[test]
    fn frame_error_probability_matches_formula() {
        let p = frame_error_probability(1e-5, 4608);
        let exact = 1.0 - (1.0f64 - 1e-5).powi(4608);
        assert!((p - exact).abs() < 1e-12);
        assert_eq!(frame_error_probability(0.0, 100), 0.0);
        assert_eq!(frame_error_probability(1.0, 1), 1.0);
    }

    /// The measured frame error rate lies within 5 standard deviations of 1-(1-BER)^bits.
    #[test]
    fn measured_frame_error_rate_within_bounds() {
        for (ber, bits) in [(1e-5, 4608u64), (1e-4, 1344), (1e-3, 768), (3e-6, 4608)] {
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let mut process = ErrorProcess::new(ErrorModel::Ber { ber });
            let n = 200_000u32;
            let hits = (0..n)
                .filter(|_| process.corrupts(bits, 0, &mut rng))
                .count() as f64;
            let p = frame_error_probability(ber, bits);
            let sd = (p * (1.0 - p) / f64::from(n)).sqrt();
            let measured = hits / f64::from(n);
            assert!(
                (measured - p).abs() < 5.0 * sd,
                "ber {ber} bits {bits}: measured {measured}, expected {p} +- {sd}"
            );
        }
    }

    /// Bit by bit: a frame of 1000 bits each flipped independently at BER 1e-3 is hit at the
    /// same rate as the closed form says.
    #[test]
    fn per_bit_simulation_agrees_with_closed_form() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (ber, bits, n) = (1e-3, 1000u64, 20_000u32);
        let hits = (0..n)
            .filter(|_| (0..bits).any(|_| uniform(&mut rng) < ber))
            .count() as f64;
        let p = frame_error_probability(ber, bits);
        let sd = (p * (1.0 - p) / f64::from(n)).sqrt();
        assert!((hits / f64::from(n) - p).abs() < 5.0 * sd);
    }

    #[test]
    fn gilbert_elliott_long_run_rate() {
        // Stationary bad fraction = p_gb / (p_gb + p_bg) = 0.1 / 0.5 = 0.2.
        let model = ErrorModel::GilbertElliott {
            good_ber: 0.0,
            bad_ber: 1.0,
            p_good_to_bad: 0.1,
            p_bad_to_good: 0.4,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut process = ErrorProcess::new(model);
        let n = 200_000;
        let hits = (0..n).filter(|_| process.corrupts(8, 0, &mut rng)).count() as f64;
        assert!((hits / n as f64 - 0.2).abs() < 0.01);
    }

    #[test]
    fn gilbert_elliott_in_time_has_its_mean_burst_duration_and_loss_share() {
        // Mean 1 s bad, 9 s good: 10% of the time bad; frames every 10 ms for 20000 s.
        let model = ErrorModel::GilbertElliottTime {
            good_ber: 0.0,
            bad_ber: 1.0,
            mean_good_s: 9.0,
            mean_bad_s: 1.0,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut process = ErrorProcess::new(model);
        let step = 10 * crate::event::MILLISECOND;
        let lost: Vec<bool> = (0..2_000_000u64)
            .map(|i| process.corrupts(8, i * step, &mut rng))
            .collect();
        let share = lost.iter().filter(|&&l| l).count() as f64 / lost.len() as f64;
        let bursts = lost.windows(2).filter(|w| w[1] && !w[0]).count() as f64;
        let mean_burst_s = lost.iter().filter(|&&l| l).count() as f64 * 0.01 / bursts;
        // About 2000 bursts: the means are within a few percent.
        assert!((share - 0.1).abs() < 0.01, "bad share {share}");
        assert!(
            (mean_burst_s - 1.0).abs() < 0.1,
            "mean burst {mean_burst_s} s"
        );
        assert!(model.validate().is_ok());
        let bad_mean = ErrorModel::GilbertElliottTime {
            good_ber: 0.0,
            bad_ber: 1.0,
            mean_good_s: 1.0,
            mean_bad_s: f64::NAN,
        };
        assert!(bad_mean.validate().unwrap_err().contains("mean_bad_s"));
    }

    #[test]
    fn validation_rejects_bad_values() {
        assert!(ErrorModel::Ber { ber: 1.5 }.validate().is_err());
        let mut p = LinkParams {
            rate_bps: 0,
            delay_ns: 0,
            queue_limit: 1,
            errors: ErrorModel::None,
        };
        assert!(p.validate().is_err());
        p.rate_bps = 1;
        assert!(p.validate().is_ok());
    }
}
