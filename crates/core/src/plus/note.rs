//! The scaling note: what a CO frame carries, after its CID, when the compressor has changed its
//! context's strides or IP-ID behaviour (spec section 5.3), for as many frames as a start has IR
//! frames. The frame is coded and decoded under the scaling it carries, and the decompressor
//! takes that scaling for the context once the frame verifies. Without notes each change cost a
//! restart of IR frames (full headers).
//!
//! ```text
//! | 0 0 K T 0 0 B B | stride (2, if T) |
//!   T    a stride follows (else both strides are 0)
//!   K    it is the acknowledgment stride (else the sequence stride; the other is 0)
//!   B B  the IP-ID behaviour (the code of an IR's context flags)
//! ```

use alloc::vec::Vec;

use crate::plus::format;
use crate::plus::ipid::Behaviour;
use crate::plus::scaled::Strides;
use crate::plus::window::Scaling;

/// The bits a note's first octet may set.
const DEFINED: u8 = format::ir::ACK_STRIDE | format::ir::STRIDES | 0x03;

/// Whether `scaling` can go as a note: at most one stride, and not a stride of 0 named.
pub fn fits(scaling: Scaling) -> bool {
    scaling.strides.seq == 0 || scaling.strides.ack == 0
}

/// What a note's frame XORs into the identity hash its seal is keyed with
/// ([`crate::plus::seal`]): the note's octets, above a set top bit. A note altered on the way
/// (or forged) thus fails verification even where its frame's fields decode the same under
/// the other scaling (a frame whose numbers are its reference's, say), instead of leaving the
/// context with a scaling the compressor never had.
pub fn seal_key(scaling: Scaling) -> u32 {
    let ([a, b, c], _) = octets(scaling);
    1 << 31 | u32::from(a) << 16 | u32::from(b) << 8 | u32::from(c)
}

/// The note of `scaling` (which [`fits`]): its octets (zero past the end) and their count.
fn octets(scaling: Scaling) -> ([u8; 3], usize) {
    debug_assert!(fits(scaling));
    let Strides { seq, ack } = scaling.strides;
    let mut first = scaling.behaviour.code();
    let stride = if ack != 0 {
        first |= format::ir::STRIDES | format::ir::ACK_STRIDE;
        ack
    } else if seq != 0 {
        first |= format::ir::STRIDES;
        seq
    } else {
        0
    };
    let [high, low] = stride.to_be_bytes();
    ([first, high, low], if stride != 0 { 3 } else { 1 })
}

/// Appends the note of `scaling` (which [`fits`]).
pub fn put(out: &mut Vec<u8>, scaling: Scaling) {
    let (octets, len) = octets(scaling);
    out.extend_from_slice(&octets[..len]);
}

/// The note at the start of `data` and the octets it took; `None` if it is cut short, sets a
/// reserved bit, names the acknowledgment stride without a stride, or a stride of 0.
pub fn get(data: &[u8]) -> Option<(Scaling, usize)> {
    let first = *data.first()?;
    if first & !DEFINED != 0 {
        return None;
    }
    let behaviour = Behaviour::of_code(first);
    let mut strides = Strides::default();
    if first & format::ir::STRIDES == 0 {
        return (first & format::ir::ACK_STRIDE == 0)
            .then_some((Scaling { strides, behaviour }, 1));
    }
    let stride = u16::from_be_bytes([*data.get(1)?, *data.get(2)?]);
    if stride == 0 {
        return None;
    }
    if first & format::ir::ACK_STRIDE != 0 {
        strides.ack = stride;
    } else {
        strides.seq = stride;
    }
    Some((Scaling { strides, behaviour }, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaling(seq: u16, ack: u16, behaviour: Behaviour) -> Scaling {
        Scaling {
            strides: Strides { seq, ack },
            behaviour,
        }
    }

    #[test]
    fn every_scaling_a_flow_can_have_round_trips() {
        let behaviours = [
            Behaviour::Sequential,
            Behaviour::Swapped,
            Behaviour::Zero,
            Behaviour::Random,
        ];
        for b in behaviours {
            for (seq, ack, len) in [(0, 0, 1), (1448, 0, 3), (0, 2896, 3), (0xFFFF, 0, 3)] {
                let s = scaling(seq, ack, b);
                let mut out = vec![0xEE];
                put(&mut out, s);
                assert_eq!(out.len(), 1 + len);
                assert_eq!(get(&out[1..]), Some((s, len)));
                // Cut short, it is malformed.
                assert_eq!(get(&out[1..len]), None);
            }
        }
        assert!(!fits(scaling(1448, 1448, Behaviour::Zero)));
    }

    #[test]
    fn every_note_keys_the_seal_its_own_way() {
        let keys = [
            seal_key(scaling(0, 0, Behaviour::Sequential)),
            seal_key(scaling(0, 0, Behaviour::Zero)),
            seal_key(scaling(1448, 0, Behaviour::Sequential)),
            seal_key(scaling(1449, 0, Behaviour::Sequential)),
            seal_key(scaling(0, 1448, Behaviour::Sequential)),
        ];
        for (i, a) in keys.iter().enumerate() {
            assert_ne!(*a, 0);
            assert!(keys[i + 1..].iter().all(|b| b != a));
        }
    }

    #[test]
    fn reserved_bits_a_bare_ack_flag_and_a_stride_of_0_are_malformed() {
        assert_eq!(get(&[0x40]), None);
        assert_eq!(get(&[0x80, 0x05, 0xA8]), None);
        assert_eq!(get(&[0x04]), None);
        assert_eq!(get(&[0x08]), None);
        assert_eq!(get(&[0x20]), None);
        assert_eq!(get(&[0x10, 0x00, 0x00]), None);
        assert_eq!(
            get(&[0x32, 0x0B, 0x50]),
            Some((scaling(0, 2896, Behaviour::Zero), 3))
        );
    }
}
