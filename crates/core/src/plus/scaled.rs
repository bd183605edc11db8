//! Scaled sequence and acknowledgment numbers: a number `v` with a context stride `s` is coded
//! as the W-LSBs of `v / s`, its residue `v % s` taken from the decompressor's reference.
//!
//! That decodes correctly whatever reference the decompressor holds as long as every reference
//! in the compressor's window has the residue of `v` (the compressor checks, [`super::window`])
//! and the decompressor knows `s`. A stride changes only with an IR frame, which carries it.

use crate::encoding::wlsb;

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

/// Decodes `k` LSBs of a scaled number against `reference` with `stride` (nonzero): the
/// number, or `None` if none exists (a wrong reference can point past the number space).
pub fn decode(reference: u32, lsbs: u32, k: u8, stride: u16) -> Option<u32> {
    let s = u32::from(stride);
    let q = wlsb::decode(reference / s, lsbs, k, 32);
    q.checked_mul(s)?.checked_add(reference % s)
}

/// Segments and ACK steps smaller than this never become strides (interactive traffic).
pub const MIN_STRIDE: u32 = 256;

/// Consecutive equal steps that make a stride when there is none.
const ADOPT_RUN: u8 = 2;

/// Consecutive equal steps that replace a stride.
const REPLACE_RUN: u8 = 8;

/// The compressor's watch over one flow's segment sizes and ACK steps: which strides to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Learner {
    last_ack: u32,
    seq_step: (u32, u8),
    ack_step: (u32, u8),
}

impl Learner {
    /// A watch whose first packet acknowledges `ack`.
    pub fn new(ack: u32) -> Learner {
        Learner {
            last_ack: ack,
            seq_step: (0, 0),
            ack_step: (0, 0),
        }
    }

    /// Sees a packet with `payload` bytes acknowledging `ack`; returns the strides the flow
    /// should now use, if they differ from `current`.
    pub fn observe(&mut self, payload: usize, ack: u32, current: Strides) -> Option<Strides> {
        let mut next = current;
        if payload > 0 {
            next.seq = Self::step(&mut self.seq_step, payload as u32, current.seq);
        }
        let delta = ack.wrapping_sub(self.last_ack);
        self.last_ack = ack;
        if delta != 0 && delta < 1 << 31 {
            next.ack = Self::step(&mut self.ack_step, delta, current.ack);
        }
        (next != current).then_some(next)
    }

    /// Counts a step of `len`; the stride to use after it.
    fn step(run: &mut (u32, u8), len: u32, current: u16) -> u16 {
        if run.0 == len {
            run.1 = run.1.saturating_add(1);
        } else {
            *run = (len, 1);
        }
        let wanted = if current == 0 { ADOPT_RUN } else { REPLACE_RUN };
        match u16::try_from(len) {
            Ok(stride) if len >= MIN_STRIDE && run.1 >= wanted && stride != current => stride,
            _ => current,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_numbers_decode_with_the_reference_residue() {
        let reference = 1_000_000 + 7 * 1448;
        let v = reference + 5 * 1448;
        let k = 4;
        let lsbs = wlsb::encode(v / 1448, k);
        assert_eq!(decode(reference, lsbs, k, 1448), Some(v));
        // Behind the reference too.
        let back = reference - 3 * 1448;
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
        // ACK steps: adopted after two, replaced after eight.
        let mut l = Learner::new(0);
        let mut ack = 0;
        let mut current = none;
        for _ in 0..2 {
            ack += 1448;
            if let Some(s) = l.observe(0, ack, current) {
                current = s;
            }
        }
        assert_eq!(current.ack, 1448);
        let mut changes = 0;
        for _ in 0..8 {
            ack += 2896;
            if let Some(s) = l.observe(0, ack, current) {
                current = s;
                changes += 1;
            }
        }
        assert_eq!((current.ack, changes), (2896, 1));
    }
}
