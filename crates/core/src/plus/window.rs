//! How far one packet's fields are from every reference in the compressor's window (VSW):
//! the largest step up and down of each coded value, raw, scaled ([`super::scaled`]) and as an
//! IP-ID offset ([`super::ipid`]). The format picks the LSB counts from them
//! ([`super::format::class`], [`super::format::code`]).

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

/// Division of any `u32` by a fixed divisor with one 64-bit multiplication (D. Lemire's direct
/// computation, `M = ceil(2^64 / d)`), exact for every `u32`: the window scan divides every
/// entry by the strides. A divisor of 1 (no stride) needs no multiplication.
#[derive(Debug, Clone, Copy)]
struct Divider {
    d: u32,
    /// `ceil(2^64 / d)`, or 0 for `d == 1`.
    m: u64,
}

impl Divider {
    fn new(d: u16) -> Divider {
        let d = u32::from(d.max(1));
        let m = if d == 1 {
            0
        } else {
            u64::MAX / u64::from(d) + 1
        };
        Divider { d, m }
    }

    /// `(n / d, n % d)`.
    fn div_rem(self, n: u32) -> (u32, u32) {
        if self.m == 0 {
            return (n, 0);
        }
        let q = ((u128::from(self.m) * u128::from(n)) >> 64) as u32;
        (q, n - q * self.d)
    }
}

/// The span of the distances `d` of one field, from their smallest and largest.
fn span(lo: i64, hi: i64) -> Span {
    Span {
        up: hi.max(0).unsigned_abs(),
        down: lo.min(0).unsigned_abs(),
    }
}

/// The span from `v` to every value of `column`, in 32-bit sequence space (a smallest and a
/// largest distance, which vectorizes).
fn span_32(column: &[u32], v: u32) -> Span {
    let (lo, hi) = column.iter().fold((0i32, 0i32), |(lo, hi), &g| {
        let d = v.wrapping_sub(g) as i32;
        (lo.min(d), hi.max(d))
    });
    span(lo.into(), hi.into())
}

/// [`span_32`] in 16-bit space.
fn span_16(column: &[u16], v: u16) -> Span {
    let (lo, hi) = column.iter().fold((0i16, 0i16), |(lo, hi), &g| {
        let d = v.wrapping_sub(g) as i16;
        (lo.min(d), hi.max(d))
    });
    span(lo.into(), hi.into())
}

/// The span of the quotients by `div` from `v` to every value of `column`, if every value shares
/// `v`'s residue; with `each` given every value's quotient.
fn span_scaled(
    column: &[u32],
    v: u32,
    div: Divider,
    mut each: impl FnMut(usize, u32),
) -> Option<Span> {
    let (fq, fr) = div.div_rem(v);
    let (mut lo, mut hi, mut aligned) = (0i64, 0i64, true);
    for (i, &g) in column.iter().enumerate() {
        let (gq, gr) = div.div_rem(g);
        each(i, gq);
        aligned &= gr == fr;
        let d = i64::from(fq) - i64::from(gq);
        (lo, hi) = (lo.min(d), hi.max(d));
    }
    aligned.then(|| span(lo, hi))
}

/// The needs of `f` against `vsw`, for a context with `strides` and IP-ID `behaviour`.
pub fn needs(vsw: &Vsw, f: &Fields, strides: Strides, behaviour: Behaviour) -> Needs {
    let c = vsw.columns();
    let (ds, da) = (Divider::new(strides.seq), Divider::new(strides.ack));
    let with_seq_stride = strides.seq != 0;
    let offset_of = |ip_id: u16, qs: u32| {
        ipid::offset(
            behaviour.counter(ip_id),
            if with_seq_stride { qs } else { 0 },
        )
    };
    let offset = offset_of(f.ip_id, ds.div_rem(f.seq).0);
    let (mut ip_lo, mut ip_hi) = (0i16, 0i16);
    let seq_scaled = span_scaled(c.seq, f.seq, ds, |i, gqs| {
        let d = offset.wrapping_sub(offset_of(c.ip_id[i], gqs)) as i16;
        (ip_lo, ip_hi) = (ip_lo.min(d), ip_hi.max(d));
    });
    let ack_scaled = span_scaled(c.ack, f.ack, da, |_, _| {});
    let gap = f.ts_val.wrapping_sub(f.ts_ecr);
    let (gap_lo, gap_hi) =
        c.ts_val
            .iter()
            .zip(c.ts_ecr)
            .fold((0i32, 0i32), |(lo, hi), (&v, &e)| {
                let d = gap.wrapping_sub(v.wrapping_sub(e)) as i32;
                (lo.min(d), hi.max(d))
            });
    Needs {
        seq: span_32(c.seq, f.seq),
        seq_scaled: seq_scaled.filter(|_| with_seq_stride),
        ack: span_32(c.ack, f.ack),
        ack_scaled: ack_scaled.filter(|_| strides.ack != 0),
        ip_id: span(ip_lo.into(), ip_hi.into()),
        ts_val: span_32(c.ts_val, f.ts_val),
        ts_ecr: span_32(c.ts_ecr, f.ts_ecr),
        ts_gap: span(gap_lo.into(), gap_hi.into()),
        win: span_16(c.win, f.win),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::wlsb::signed_distance;
    use crate::taroc::vsw::{Entry, Progress};

    /// [`needs`] computed the plain way: every entry in turn, every distance by
    /// [`signed_distance`].
    fn needs_entry_by_entry(vsw: &Vsw, f: &Fields, strides: Strides, b: Behaviour) -> Needs {
        let add = |s: &mut Span, d: i64| {
            if d >= 0 {
                s.up = s.up.max(d.unsigned_abs());
            } else {
                s.down = s.down.max(d.unsigned_abs());
            }
        };
        let (sd, ad) = (u32::from(strides.seq.max(1)), u32::from(strides.ack.max(1)));
        let offset = |g: &Fields| {
            let qs = if strides.seq != 0 { g.seq / sd } else { 0 };
            ipid::offset(b.counter(g.ip_id), qs)
        };
        let gap = |g: &Fields| g.ts_val.wrapping_sub(g.ts_ecr);
        let mut n = Needs::default();
        let (mut sq, mut aq) = (Span::default(), Span::default());
        let (mut s_al, mut a_al) = (strides.seq != 0, strides.ack != 0);
        for e in vsw.entries() {
            let g = &e.fields;
            add(&mut n.seq, signed_distance(f.seq, g.seq, 32));
            add(&mut n.ack, signed_distance(f.ack, g.ack, 32));
            add(&mut n.ts_val, signed_distance(f.ts_val, g.ts_val, 32));
            add(&mut n.ts_ecr, signed_distance(f.ts_ecr, g.ts_ecr, 32));
            add(&mut n.ts_gap, signed_distance(gap(f), gap(g), 32));
            add(
                &mut n.ip_id,
                signed_distance(offset(f).into(), offset(g).into(), 16),
            );
            add(&mut n.win, signed_distance(f.win.into(), g.win.into(), 16));
            s_al &= g.seq % sd == f.seq % sd;
            add(&mut sq, i64::from(f.seq / sd) - i64::from(g.seq / sd));
            a_al &= g.ack % ad == f.ack % ad;
            add(&mut aq, i64::from(f.ack / ad) - i64::from(g.ack / ad));
        }
        n.seq_scaled = s_al.then_some(sq);
        n.ack_scaled = a_al.then_some(aq);
        n
    }

    #[test]
    fn needs_match_the_entry_by_entry_scan() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let behaviours = [
            Behaviour::Sequential,
            Behaviour::Swapped,
            Behaviour::Zero,
            Behaviour::Random,
        ];
        for round in 0..400u32 {
            // Small spreads (aligned, near) and wild ones (wrapping, misaligned) alike.
            let spread = [1u64 << 8, 1 << 20, 1 << 32][round as usize % 3];
            let stride = [0u16, 1, 1448, 2896, 536][round as usize % 5];
            let base = next() as u32;
            let field = |r: u64| base.wrapping_add((r % spread) as u32);
            let mut fields = || Fields {
                seq: match field(next()) {
                    s if round % 2 == 0 => s / u32::from(stride.max(1)) * u32::from(stride.max(1)),
                    s => s,
                },
                ack: field(next()),
                win: next() as u16 % 8,
                ip_id: next() as u16,
                ts_val: field(next()),
                ts_ecr: field(next()),
            };
            let mut vsw = Vsw::new(32, Progress::SincePush);
            for _ in 0..round % 33 {
                vsw.push(Entry {
                    fields: fields(),
                    has_payload: true,
                    uncompressed: false,
                });
            }
            let f = fields();
            let strides = Strides {
                seq: stride,
                ack: [0u16, 1, 1448][round as usize % 3],
            };
            let b = behaviours[round as usize % 4];
            assert_eq!(
                needs(&vsw, &f, strides, b),
                needs_entry_by_entry(&vsw, &f, strides, b),
                "round {round}"
            );
        }
    }

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
