//! Scaled sequence and acknowledgment numbers: a number `v` with a context stride `s` is coded
//! as the LSBs of `v / s`, its residue `v % s` taken from the decompressor's reference.
//!
//! That decodes correctly whatever reference the decompressor holds as long as every reference
//! in the compressor's window has the residue of `v` (the compressor checks, [`super::window`])
//! and the decompressor knows `s`. A stride changes only with an IR frame, which carries it.

use crate::encoding::lsb;

/// A context's strides (0: none, the number travels unscaled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Strides {
    /// The sequence stride: the segment size of a bulk sender.
    pub seq: u16,
    /// The acknowledgment stride: the usual step of a receiver's ACKs.
    pub ack: u16,
}

/// `v / stride`, or 0 without a stride: what the IP-ID offset subtracts ([`super::ipid`]).
pub fn quotient(v: u32, stride: u16) -> u32 {
    if stride == 0 {
        0
    } else {
        v / u32::from(stride)
    }
}

/// Decodes `k` LSBs ([`lsb`]) of a scaled number against `reference` with `stride` (nonzero):
/// the number, or `None` if none exists (a wrong reference can point past the number space).
pub fn decode(reference: u32, lsbs: u32, k: u8, stride: u16) -> Option<u32> {
    decode_divided(reference, reference / u32::from(stride), lsbs, k, stride).map(|(v, _)| v)
}

/// [`decode`] given the reference's quotient `reference_q` (`reference / stride`, which the
/// caller may have at hand): the number and its quotient.
#[inline(always)]
pub fn decode_divided(
    reference: u32,
    reference_q: u32,
    lsbs: u32,
    k: u8,
    stride: u16,
) -> Option<(u32, u32)> {
    let q = lsb::decode(reference_q, lsbs, k, 32);
    Some((from_quotient(reference, reference_q, q, stride)?, q))
}

/// The number of quotient `q` by `stride` whose residue is that of `reference` (of quotient
/// `reference_q`), if it is below 2^32.
pub fn from_quotient(reference: u32, reference_q: u32, q: u32, stride: u16) -> Option<u32> {
    let s = u32::from(stride);
    q.checked_mul(s)?.checked_add(reference - reference_q * s)
}

/// Segments and ACK steps smaller than this never become strides (interactive traffic).
pub const MIN_STRIDE: u32 = 256;

/// Consecutive equal candidates that make a stride when there is none.
const ADOPT_RUN: u8 = 2;

/// Consecutive equal candidates that replace a stride they do not divide.
const REPLACE_RUN: u8 = 8;

/// The compressor's watch over one flow's segment sizes and ACK steps: which strides to use.
///
/// A candidate stride is the greatest common divisor of the last two steps (segment sizes, ACK
/// steps), once it is at least [`MIN_STRIDE`]: a receiver that acknowledges every second
/// segment and sometimes every one gets the segment size. A candidate is adopted after two in
/// a row, replaces a stride it divides at once, and any other (but a multiple) after eight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Learner {
    last_ack: u32,
    seq: Steps,
    ack: Steps,
}

/// The recent steps of one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Steps {
    last: u32,
    candidate: u32,
    run: u8,
}

impl Steps {
    /// Counts a step of `len`; the stride to use after it.
    fn step(&mut self, len: u32, current: u16) -> u16 {
        // A step as long as the last (a flow's usual case) is its own divisor: no division.
        let candidate = if self.last == 0 || self.last == len {
            len
        } else {
            gcd(len, self.last)
        };
        self.last = len;
        if candidate == self.candidate {
            self.run = self.run.saturating_add(1);
        } else {
            (self.candidate, self.run) = (candidate, 1);
        }
        let Ok(stride) = u16::try_from(candidate) else {
            return current;
        };
        // The usual case, the current stride seen again, needs no division.
        let same = current == stride;
        let divides = current != 0 && (same || current.is_multiple_of(stride));
        // A multiple of the current stride keeps every number aligned: no change.
        let multiple = current != 0 && (same || stride.is_multiple_of(current));
        let wanted = if current == 0 { ADOPT_RUN } else { REPLACE_RUN };
        if candidate >= MIN_STRIDE && !multiple && (divides || self.run >= wanted) {
            stride
        } else {
            current
        }
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Learner {
    /// A watch whose first packet acknowledges `ack`.
    pub fn new(ack: u32) -> Learner {
        Learner {
            last_ack: ack,
            seq: Steps::default(),
            ack: Steps::default(),
        }
    }

    /// A watch whose first packet, already seen, carries `payload` bytes and acknowledges
    /// `ack`.
    pub fn after(payload: usize, ack: u32) -> Learner {
        let mut learner = Learner::new(ack);
        learner.observe(payload, ack, Strides::default());
        learner
    }

    /// Sees a packet with `payload` bytes acknowledging `ack`; returns the strides the flow
    /// should now use, if they differ from `current`. A flow has one stride at most (an IR
    /// frame carries one): the first learnt, sequence or acknowledgment, keeps the other out.
    #[inline(always)]
    pub fn observe(&mut self, payload: usize, ack: u32, current: Strides) -> Option<Strides> {
        let mut next = current;
        if payload > 0 {
            let seq = self.seq.step(payload as u32, current.seq);
            if current.ack == 0 {
                next.seq = seq;
            }
        }
        let delta = ack.wrapping_sub(self.last_ack);
        self.last_ack = ack;
        if delta != 0 && delta < 1 << 31 {
            let stride = self.ack.step(delta, current.ack);
            if next.seq == 0 {
                next.ack = stride;
            }
        }
        (next != current).then_some(next)
    }

    /// For a flow without strides: the strides it most likely uses if the compressor learnt
    /// one from the same packets: its last steps' candidate, or else its last step itself (the
    /// sequence number's first, as [`Learner::observe`] takes it first; none under
    /// [`MIN_STRIDE`]). A decompressor that watches the packets it delivers guesses with it the
    /// stride whose IR frames were all lost. The last step is the guess when a lost segment
    /// hid a run from the candidate (61, then 1448 bytes: candidate 1).
    pub fn guess(&self) -> Option<Strides> {
        let valid = |v: u32| {
            u16::try_from(v)
                .ok()
                .filter(|&v| u32::from(v) >= MIN_STRIDE)
        };
        let of = |steps: &Steps| valid(steps.candidate).or_else(|| valid(steps.last));
        match (of(&self.seq), of(&self.ack)) {
            (Some(seq), _) => Some(Strides { seq, ack: 0 }),
            (None, Some(ack)) => Some(Strides { seq: 0, ack }),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::wlsb;
    use alloc::vec::Vec;
    use proptest::prelude::Just;

    #[test]
    fn scaled_numbers_decode_with_the_reference_residue() {
        let reference = 1_000_000 + 7 * 1448;
        let v = reference + 5 * 1448;
        let k = 4;
        let lsbs = wlsb::encode(v / 1448, k);
        assert_eq!(decode(reference, lsbs, k, 1448), Some(v));
        // Behind the reference too (p(4) = 2).
        let back = reference - 1448;
        assert_eq!(
            decode(reference, wlsb::encode(back / 1448, k), k, 1448),
            Some(back)
        );
        // Past the number space: refused.
        let top = u32::MAX - 10;
        assert_eq!(decode(top, wlsb::encode(top / 1448 + 3, k), k, 1448), None);
        assert_eq!(quotient(5000, 0), 0);
        assert_eq!(quotient(5000, 1000), 5);
    }

    #[test]
    fn learner_adopts_and_replaces_strides() {
        let mut l = Learner::new(0);
        let none = Strides::default();
        assert_eq!(l.observe(1448, 0, none), None);
        let s = l.observe(1448, 0, none).unwrap();
        assert_eq!(s.seq, 1448);
        // Small segments never make a stride.
        let mut l = Learner::new(0);
        assert_eq!(l.observe(100, 0, none), None);
        assert_eq!(l.observe(100, 0, none), None);
        // ACK steps: adopted after two; a divisor replaces at once; an odd step changes nothing.
        let mut l = Learner::new(0);
        let mut ack = 0;
        let mut current = none;
        let mut changes = Vec::new();
        for step in [2896, 2896, 2896, 1448, 2896, 2896, 4000, 2896, 2896] {
            ack += step;
            if let Some(s) = l.observe(0, ack, current) {
                current = s;
                changes.push(s.ack);
            }
        }
        assert_eq!(changes, [2896, 1448]);
    }

    #[test]
    fn a_guess_is_the_candidate_or_else_the_last_step() {
        let none = Strides::default();
        let seq = |seq| Some(Strides { seq, ack: 0 });
        let mut l = Learner::new(0);
        assert_eq!(l.guess(), None, "nothing seen");
        l.observe(61, 0, none);
        assert_eq!(l.guess(), None, "under MIN_STRIDE");
        l.observe(1448, 0, none);
        assert_eq!(l.guess(), seq(1448), "candidate 1: the last step");
        l.observe(1448, 0, none);
        assert_eq!(l.guess(), seq(1448), "the candidate, after one step");
        // ACK steps of two segments, then one: the candidate, their divisor.
        let mut l = Learner::new(0);
        for ack in [2896, 5792, 7240] {
            l.observe(0, ack, none);
        }
        assert_eq!(l.guess(), Some(Strides { seq: 0, ack: 1448 }));
    }

    /// [`Steps::step`] with every division made (its form before the usual case skipped them).
    fn step_dividing(steps: &mut Steps, len: u32, current: u16) -> u16 {
        let candidate = gcd(len, if steps.last == 0 { len } else { steps.last });
        steps.last = len;
        if candidate == steps.candidate {
            steps.run = steps.run.saturating_add(1);
        } else {
            (steps.candidate, steps.run) = (candidate, 1);
        }
        let Ok(stride) = u16::try_from(candidate) else {
            return current;
        };
        let divides = current != 0 && current.is_multiple_of(stride);
        let multiple = current != 0 && stride.is_multiple_of(current);
        let wanted = if current == 0 { ADOPT_RUN } else { REPLACE_RUN };
        if candidate >= MIN_STRIDE && !multiple && (divides || steps.run >= wanted) {
            stride
        } else {
            current
        }
    }

    proptest::proptest! {
        /// Skipping the divisions of a repeated step or stride changes no decision.
        #[test]
        fn steps_without_division_decide_as_with(
            lens in proptest::collection::vec(
                proptest::prop_oneof![
                    Just(1448u32), Just(2896), Just(724), Just(100), 1..70_000u32
                ],
                1..40,
            ),
            start in proptest::prop_oneof![Just(0u16), Just(1448), Just(724), 1..u16::MAX],
        ) {
            let (mut fast, mut plain) = (Steps::default(), Steps::default());
            let (mut current_fast, mut current_plain) = (start, start);
            for len in lens {
                current_fast = fast.step(len, current_fast);
                current_plain = step_dividing(&mut plain, len, current_plain);
                proptest::prop_assert_eq!(fast, plain);
                proptest::prop_assert_eq!(current_fast, current_plain);
            }
        }
    }
}
