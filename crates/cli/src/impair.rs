//! Impairment models: what happens to packets before the compressor and to frames on the link.
//!
//! All randomness comes from ChaCha8 streams derived from one seed ([`stream`]): each link
//! direction and each impairment has its own stream, so changing one impairment does not shift
//! the random numbers of another, and the same seed gives the same result bit for bit on every
//! machine. Each model draws a fixed number of random numbers per packet or frame, whatever the
//! scheme, so every scheme meets the same losses at the same positions (common random numbers:
//! with bit errors, a shorter frame is lost only where a longer one would have been too).

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a random stream is used for; part of the stream's identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Purpose {
    /// Packets removed before the compressor (`--loss-before`).
    LossBefore = 0,
    /// Packets held back before the compressor (`--reorder-before`).
    ReorderBefore = 1,
    /// Frame loss on the link (`--loss`, `--burst`).
    LinkLoss = 2,
    /// Bit errors on the link (`--ber`).
    LinkBitErrors = 3,
    /// Frames held back on the link (`--reorder`).
    LinkReorder = 4,
}

/// A seeded source of uniform random numbers.
#[derive(Debug, Clone)]
pub struct Random(ChaCha8Rng);

impl Random {
    /// A uniform number in [0, 1), with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// A uniform integer in `low..=high`.
    pub fn between(&mut self, low: u32, high: u32) -> u32 {
        let span = u64::from(high - low) + 1;
        low + (self.0.next_u64() % span) as u32
    }
}

/// The random stream for `purpose` in link direction `direction` (0 forward, 1 reverse).
pub fn stream(seed: u64, direction: usize, purpose: Purpose) -> Random {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(direction as u64 * 16 + purpose as u64);
    Random(rng)
}

/// Frame loss on the link, independent of the frame's content.
#[derive(Debug, Clone)]
pub enum LossModel {
    /// No frame is lost.
    None,
    /// Each frame is lost with probability `p`, independently.
    Bernoulli {
        /// The loss probability.
        p: f64,
    },
    /// A two-state Gilbert–Elliott chain: every frame is lost in the bad state and none in the
    /// good state. The state moves once per frame, before the frame is sent.
    GilbertElliott {
        /// Probability of moving from good to bad.
        good_to_bad: f64,
        /// Probability of moving from bad to good (1 / mean burst length).
        bad_to_good: f64,
        /// Whether the chain is in the bad state.
        bad: bool,
    },
}

impl LossModel {
    /// The model for loss rate `loss` with losses in bursts of mean length `burst` frames (if
    /// given). Errors if the combination is impossible for a two-state chain.
    pub fn new(loss: f64, burst: Option<f64>) -> Result<LossModel, String> {
        if !(0.0..=1.0).contains(&loss) {
            return Err(format!("loss rate {loss} is not in [0, 1]"));
        }
        match burst {
            _ if loss == 0.0 => Ok(LossModel::None),
            None => Ok(LossModel::Bernoulli { p: loss }),
            Some(length) => {
                if !(length >= 1.0 && length.is_finite()) {
                    return Err(format!("mean burst length {length} is not at least 1"));
                }
                if loss >= 1.0 {
                    return Err("a bursty loss rate must be below 1".to_string());
                }
                let bad_to_good = 1.0 / length;
                // The stationary share of the bad state is good_to_bad / (good_to_bad +
                // bad_to_good) = loss.
                let good_to_bad = loss * bad_to_good / (1.0 - loss);
                if good_to_bad > 1.0 {
                    return Err(format!(
                        "loss rate {loss} with bursts of mean length {length} needs longer \
                         bursts (at least {:.3})",
                        loss / (1.0 - loss)
                    ));
                }
                Ok(LossModel::GilbertElliott {
                    good_to_bad,
                    bad_to_good,
                    bad: false,
                })
            }
        }
    }

    /// Starts the chain in its stationary distribution (no-op for the other models).
    fn start(&mut self, rng: &mut Random) {
        if let LossModel::GilbertElliott {
            good_to_bad,
            bad_to_good,
            bad,
        } = self
        {
            *bad = rng.chance(*good_to_bad / (*good_to_bad + *bad_to_good));
        }
    }

    /// Whether the next frame is lost. Draws exactly one random number.
    fn next_lost(&mut self, rng: &mut Random) -> bool {
        let u = rng.uniform();
        match self {
            LossModel::None => false,
            LossModel::Bernoulli { p } => u < *p,
            LossModel::GilbertElliott {
                good_to_bad,
                bad_to_good,
                bad,
            } => {
                *bad = if *bad {
                    u >= *bad_to_good
                } else {
                    u < *good_to_bad
                };
                *bad
            }
        }
    }
}

/// What the link did to one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// The frame arrived intact.
    Delivered,
    /// The loss model dropped the frame.
    Lost,
    /// A bit error hit the frame and the link CRC discarded it.
    BitError,
}

/// One direction of the link: random frame loss and independent bit errors.
#[derive(Debug, Clone)]
pub struct Link {
    loss: LossModel,
    ber: f64,
    loss_rng: Random,
    ber_rng: Random,
}

impl Link {
    /// The link of direction `direction` with loss model `loss` and bit-error rate `ber`.
    pub fn new(seed: u64, direction: usize, mut loss: LossModel, ber: f64) -> Link {
        let mut loss_rng = stream(seed, direction, Purpose::LinkLoss);
        loss.start(&mut loss_rng);
        Link {
            loss,
            ber,
            loss_rng,
            ber_rng: stream(seed, direction, Purpose::LinkBitErrors),
        }
    }

    /// Sends a frame of `bits` bits (packet-kind byte included) and tells what became of it.
    pub fn send(&mut self, bits: u64) -> Fate {
        let lost = self.loss.next_lost(&mut self.loss_rng);
        let u = self.ber_rng.uniform();
        if lost {
            Fate::Lost
        } else if u < frame_error_probability(self.ber, bits) {
            Fate::BitError
        } else {
            Fate::Delivered
        }
    }
}

/// The probability that at least one of `bits` bits is hit, with independent bit errors of
/// probability `ber`: 1 - (1 - ber)^bits.
pub fn frame_error_probability(ber: f64, bits: u64) -> f64 {
    if ber <= 0.0 {
        0.0
    } else if ber >= 1.0 {
        1.0
    } else {
        -f64::exp_m1(bits as f64 * f64::ln_1p(-ber))
    }
}

/// Reordering of one direction's packets or frames: each is, with probability `p`, held back
/// and released right after the next k of its direction, k uniform in 1..=3 (every later one
/// counts, held or not); those still held at the end come out last, in order. At most a few are
/// held at a time. Two random draws per item whenever reordering is on, held or not.
#[derive(Debug, Clone)]
pub struct Reorder<T> {
    p: f64,
    rng: Random,
    /// Held items with the number of later items still to wait for.
    held: Vec<(T, u32)>,
    /// How many items were held back and released later.
    pub reordered: u64,
}

impl<T> Reorder<T> {
    /// Reordering with probability `p`, drawing from `rng`.
    pub fn new(p: f64, rng: Random) -> Reorder<T> {
        Reorder {
            p,
            rng,
            held: Vec::new(),
            reordered: 0,
        }
    }

    /// `item` arrives: appends to `out`, in the order they come out, the items its arrival
    /// releases (itself unless held, then the held items it frees).
    pub fn arrive(&mut self, item: T, out: &mut Vec<T>) {
        let wait = if self.p > 0.0 {
            let u = self.rng.uniform();
            let k = self.rng.between(1, 3);
            (u < self.p).then_some(k)
        } else {
            None
        };
        let item = match wait {
            None => {
                out.push(item);
                None
            }
            Some(wait) => Some((item, wait)),
        };
        let mut index = 0;
        while index < self.held.len() {
            self.held[index].1 -= 1;
            if self.held[index].1 == 0 {
                out.push(self.held.remove(index).0);
            } else {
                index += 1;
            }
        }
        if let Some(held) = item {
            self.reordered += 1;
            self.held.push(held);
        }
    }

    /// The end: appends the items still held to `out`, in order.
    pub fn finish(&mut self, out: &mut Vec<T>) {
        out.extend(self.held.drain(..).map(|(item, _)| item));
    }
}

/// Loss and reordering before the compressor of one direction, applied to its packets as they
/// arrive: first `--loss-before` (each packet removed with probability `loss`), then
/// `--reorder-before` ([`Reorder`]).
#[derive(Debug, Clone)]
pub struct BeforeCompressor<T> {
    loss: f64,
    loss_rng: Random,
    reorder: Reorder<T>,
    /// How many packets were removed (`--loss-before`).
    pub removed: u64,
}

impl<T> BeforeCompressor<T> {
    /// The impairments of direction `direction`, with the random streams of `seed`.
    pub fn new(seed: u64, direction: usize, loss: f64, reorder: f64) -> BeforeCompressor<T> {
        BeforeCompressor {
            loss,
            loss_rng: stream(seed, direction, Purpose::LossBefore),
            reorder: Reorder::new(reorder, stream(seed, direction, Purpose::ReorderBefore)),
            removed: 0,
        }
    }

    /// How many packets were held back and released later (`--reorder-before`).
    pub fn reordered(&self) -> u64 {
        self.reorder.reordered
    }

    /// `packet` arrives: appends to `out`, in the order the compressor sees them, the packets
    /// its arrival releases (itself unless removed or held, then the held packets it frees).
    pub fn arrive(&mut self, packet: T, out: &mut Vec<T>) {
        if self.loss > 0.0 && self.loss_rng.chance(self.loss) {
            self.removed += 1;
            return;
        }
        self.reorder.arrive(packet, out);
    }

    /// The end of the packets: appends the packets still held to `out`, in order.
    pub fn finish(&mut self, out: &mut Vec<T>) {
        self.reorder.finish(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that `measured` is within 5 standard deviations of a proportion `p` over `n`.
    fn assert_close(measured: f64, p: f64, n: f64) {
        let sigma = (p * (1.0 - p) / n).sqrt();
        assert!(
            (measured - p).abs() <= 5.0 * sigma + 1e-12,
            "measured {measured}, expected {p} ± {}",
            5.0 * sigma
        );
    }

    #[test]
    fn bernoulli_loss_rate() {
        let n = 200_000;
        let mut link = Link::new(7, 0, LossModel::new(0.03, None).unwrap(), 0.0);
        let lost = (0..n).filter(|_| link.send(800) != Fate::Delivered).count();
        assert_close(lost as f64 / n as f64, 0.03, n as f64);
    }

    #[test]
    fn bit_error_frame_loss_rate() {
        let n = 200_000;
        let ber = 1e-4;
        for bits in [8u64, 320, 12_000] {
            let mut link = Link::new(3, 1, LossModel::None, ber);
            let lost = (0..n).filter(|_| link.send(bits) == Fate::BitError).count();
            let expected = 1.0 - (1.0 - ber).powi(bits as i32);
            assert!((frame_error_probability(ber, bits) - expected).abs() < 1e-12);
            assert_close(lost as f64 / n as f64, expected, n as f64);
        }
        assert_eq!(frame_error_probability(0.0, 100), 0.0);
        assert_eq!(frame_error_probability(1.0, 100), 1.0);
    }

    #[test]
    fn gilbert_elliott_rate_and_burst_length() {
        let n = 400_000;
        let (loss, burst) = (0.05, 4.0);
        let mut link = Link::new(11, 0, LossModel::new(loss, Some(burst)).unwrap(), 0.0);
        let fates: Vec<bool> = (0..n).map(|_| link.send(100) == Fate::Lost).collect();
        let lost = fates.iter().filter(|&&l| l).count() as f64;
        let bursts = fates.windows(2).filter(|w| w[1] && !w[0]).count() as f64;
        let rate = lost / n as f64;
        // Losses are correlated, so allow a wider band than for independent draws.
        assert!((rate - loss).abs() < 0.1 * loss, "loss rate {rate}");
        let mean_burst = lost / bursts;
        assert!(
            (mean_burst - burst).abs() < 0.1 * burst,
            "mean burst {mean_burst}"
        );
    }

    #[test]
    fn impossible_burst_settings_are_refused() {
        assert!(LossModel::new(0.5, Some(0.5)).is_err());
        assert!(LossModel::new(0.9, Some(2.0)).is_err());
        assert!(LossModel::new(1.0, Some(2.0)).is_err());
        assert!(LossModel::new(1.5, None).is_err());
        assert!(LossModel::new(0.9, Some(10.0)).is_ok());
        assert!(matches!(
            LossModel::new(0.0, Some(3.0)),
            Ok(LossModel::None)
        ));
    }

    /// Runs packets `0..n` through the impairments of direction `direction`: the order the
    /// compressor sees them in and, per packet, the packet whose arrival released it
    /// (`usize::MAX` at the end).
    fn before_compressor(
        n: usize,
        seed: u64,
        direction: usize,
        loss: f64,
        reorder: f64,
    ) -> (Vec<usize>, Vec<usize>, BeforeCompressor<usize>) {
        let mut stage = BeforeCompressor::new(seed, direction, loss, reorder);
        let (mut order, mut released_at) = (Vec::new(), Vec::new());
        for packet in 0..n {
            stage.arrive(packet, &mut order);
            released_at.resize(order.len(), packet);
        }
        stage.finish(&mut order);
        released_at.resize(order.len(), usize::MAX);
        (order, released_at, stage)
    }

    #[test]
    fn same_seed_same_result_other_seed_other_result() {
        let run = |seed| {
            let mut link = Link::new(seed, 0, LossModel::new(0.1, Some(3.0)).unwrap(), 1e-4);
            (0..10_000).map(|i| link.send(i % 3000)).collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
        let a = before_compressor(10_000, 9, 0, 0.1, 0.1).0;
        assert_eq!(a, before_compressor(10_000, 9, 0, 0.1, 0.1).0);
        assert_ne!(a, before_compressor(10_000, 9, 1, 0.1, 0.1).0);
    }

    #[test]
    fn loss_before_removes_the_configured_share() {
        let (order, _, stage) = before_compressor(100_000, 1, 0, 0.02, 0.0);
        assert_close(stage.removed as f64 / 100_000.0, 0.02, 100_000.0);
        assert_eq!(order.len() as u64 + stage.removed, 100_000);
        assert!(order.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn reordering_holds_packets_back_by_one_to_three() {
        let (order, released_at, stage) = before_compressor(100_000, 2, 0, 0.0, 0.05);
        assert_close(stage.reordered() as f64 / 100_000.0, 0.05, 100_000.0);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..100_000).collect::<Vec<_>>(),
            "every packet comes out once"
        );
        // A held packet comes out right after at most 3 later packets.
        for (position, &packet) in order.iter().enumerate() {
            assert!(position <= packet + 3, "packet {packet} at {position}");
        }
        assert!(order.windows(2).any(|w| w[0] > w[1]));
        // Release times never go back, and a packet is never released before it arrives.
        assert!(released_at.windows(2).all(|w| w[0] <= w[1]));
        for (&packet, &at) in order.iter().zip(&released_at) {
            assert!(at >= packet && (at == usize::MAX || at <= packet + 3));
        }
    }
}
