//! How far one packet's fields are from every reference in the compressor's window (VSW):
//! the largest step up and down of each coded value, raw, scaled ([`super::scaled`]) and as an
//! IP-ID offset ([`super::ipid`]). The format picks the LSB counts from them
//! ([`super::format::class`], [`super::format::code`]).

use crate::encoding::wlsb::signed_distance;
use crate::taroc::packet::Fields;
use crate::taroc::vsw::Vsw;

use super::ipid::{self, Behaviour};
use super::scaled::Strides;

/// The largest steps up and down from the references to a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// Largest `value - reference` (0 if none is positive).
    pub up: u64,
    /// Largest `reference - value` (0 if none is positive).
    pub down: u64,
}

impl Span {
    fn add(&mut self, distance: i64) {
        if distance >= 0 {
            self.up = self.up.max(distance.unsigned_abs());
        } else {
            self.down = self.down.max(distance.unsigned_abs());
        }
    }
}

/// What one packet needs against the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    /// Sequence number, unscaled.
    pub seq: Span,
    /// Sequence number scaled, if every window entry shares its residue (and there is a stride).
    pub seq_scaled: Option<Span>,
    /// Acknowledgment number, unscaled.
    pub ack: Span,
    /// Acknowledgment number scaled, as for the sequence number.
    pub ack_scaled: Option<Span>,
    /// The IP-ID offset (sequential and byte-swapped behaviours).
    pub ip_id: Span,
    /// Timestamp value.
    pub ts_val: Span,
    /// Timestamp echo reply.
    pub ts_ecr: Span,
    /// The gap `ts_val - ts_ecr`.
    pub ts_gap: Span,
    /// TCP window (it is sent only if this is not zero).
    pub win: Span,
}

/// Division of any `u32` by a fixed divisor with one multiplication (D. Lemire's direct
/// computation, `M = floor(2^64 / d) + 1`), exact for every `u32`: the window scan divides
/// every entry by the strides.
#[derive(Debug, Clone, Copy)]
struct Divider {
    d: u32,
    m: u128,
}

impl Divider {
    fn new(d: u16) -> Divider {
        let d = u32::from(d.max(1));
        Divider {
            d,
            m: (1u128 << 64) / u128::from(d) + 1,
        }
    }

    /// `(n / d, n % d)`.
    fn div_rem(self, n: u32) -> (u32, u32) {
        let q = ((self.m * u128::from(n)) >> 64) as u32;
        (q, n - q * self.d)
    }
}

/// The needs of `f` against `vsw`, for a context with `strides` and IP-ID `behaviour`.
pub fn needs(vsw: &Vsw, f: &Fields, strides: Strides, behaviour: Behaviour) -> Needs {
    let (ds, da) = (Divider::new(strides.seq), Divider::new(strides.ack));
    let with_seq_stride = strides.seq != 0;
    let offset_of = |g: &Fields, qs: u32| {
        ipid::offset(
            behaviour.counter(g.ip_id),
            if with_seq_stride { qs } else { 0 },
        )
    };
    let gap = |g: &Fields| g.ts_val.wrapping_sub(g.ts_ecr);
    let (fqs, frs) = ds.div_rem(f.seq);
    let (fqa, fra) = da.div_rem(f.ack);
    let offset = offset_of(f, fqs);
    let mut n = Needs::default();
    let (mut seq_q, mut ack_q) = (Span::default(), Span::default());
    let (mut seq_aligned, mut ack_aligned) = (with_seq_stride, strides.ack != 0);
    for entry in vsw.entries() {
        let g = &entry.fields;
        let (gqs, grs) = ds.div_rem(g.seq);
        let (gqa, gra) = da.div_rem(g.ack);
        n.seq.add(signed_distance(f.seq, g.seq, 32));
        n.ack.add(signed_distance(f.ack, g.ack, 32));
        n.ts_val.add(signed_distance(f.ts_val, g.ts_val, 32));
        n.ts_ecr.add(signed_distance(f.ts_ecr, g.ts_ecr, 32));
        n.ts_gap.add(signed_distance(gap(f), gap(g), 32));
        n.ip_id
            .add(signed_distance(offset.into(), offset_of(g, gqs).into(), 16));
        n.win.add(signed_distance(f.win.into(), g.win.into(), 16));
        seq_aligned &= grs == frs;
        seq_q.add(i64::from(fqs) - i64::from(gqs));
        ack_aligned &= gra == fra;
        ack_q.add(i64::from(fqa) - i64::from(gqa));
    }
    n.seq_scaled = seq_aligned.then_some(seq_q);
    n.ack_scaled = ack_aligned.then_some(ack_q);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_divider_is_exact() {
        for d in [1u16, 2, 3, 256, 1448, 2896, 1460, 65535] {
            let div = Divider::new(d);
            for n in [0u32, 1, 1447, 1448, 123_456_789, u32::MAX - 1, u32::MAX] {
                let d = u32::from(d);
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
