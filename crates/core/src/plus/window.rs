//! How far one packet's fields are from every reference in the compressor's window (VSW):
//! the largest step up and down of each coded value, raw, scaled ([`super::scaled`]) and as an
//! IP-ID offset ([`super::ipid`]). The format picks the LSB counts from them
//! ([`super::format::class`], [`super::format::code`]).

use crate::encoding::wlsb::signed_distance;
use crate::taroc::packet::Fields;
use crate::taroc::vsw::Vsw;

use super::ipid::{self, Behaviour};
use super::scaled::{quotient, Strides};

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

/// The needs of `f` against `vsw`, for a context with `strides` and IP-ID `behaviour`.
pub fn needs(vsw: &Vsw, f: &Fields, strides: Strides, behaviour: Behaviour) -> Needs {
    let offset_of =
        |g: &Fields| ipid::offset(behaviour.counter(g.ip_id), quotient(g.seq, strides.seq));
    let offset = offset_of(f);
    let gap = |g: &Fields| g.ts_val.wrapping_sub(g.ts_ecr);
    let mut n = Needs::default();
    let (mut seq_q, mut ack_q) = (Span::default(), Span::default());
    let (mut seq_aligned, mut ack_aligned) = (strides.seq != 0, strides.ack != 0);
    let (s, a) = (u32::from(strides.seq.max(1)), u32::from(strides.ack.max(1)));
    for entry in vsw.entries() {
        let g = &entry.fields;
        n.seq.add(signed_distance(f.seq, g.seq, 32));
        n.ack.add(signed_distance(f.ack, g.ack, 32));
        n.ts_val.add(signed_distance(f.ts_val, g.ts_val, 32));
        n.ts_ecr.add(signed_distance(f.ts_ecr, g.ts_ecr, 32));
        n.ts_gap.add(signed_distance(gap(f), gap(g), 32));
        n.ip_id
            .add(signed_distance(offset.into(), offset_of(g).into(), 16));
        n.win.add(signed_distance(f.win.into(), g.win.into(), 16));
        seq_aligned &= g.seq % s == f.seq % s;
        seq_q.add(i64::from(f.seq / s) - i64::from(g.seq / s));
        ack_aligned &= g.ack % a == f.ack % a;
        ack_q.add(i64::from(f.ack / a) - i64::from(g.ack / a));
    }
    n.seq_scaled = seq_aligned.then_some(seq_q);
    n.ack_scaled = ack_aligned.then_some(ack_q);
    n
}
