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

/// How a context scales its numbers: what every [`Derived`] value depends on besides the
/// packet's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scaling {
    /// The strides.
    pub strides: Strides,
    /// The IP-ID behaviour.
    pub behaviour: Behaviour,
}

/// What the scan needs of one packet beyond its fields: its numbers scaled, its IP-ID offset
/// and its timestamp gap. A window entry's are computed once, when it enters the window
/// ([`Scaler::derive`], kept as the entry's extra in the [`Vsw`]), not at every scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Derived {
    seq_q: u32,
    seq_r: u32,
    ack_q: u32,
    ack_r: u32,
    gap: u32,
    offset: u16,
}

/// A [`Scaling`] with its divisions prepared.
#[derive(Debug, Clone, Copy)]
pub struct Scaler {
    scaling: Scaling,
    ds: Divider,
    da: Divider,
}

impl Default for Scaler {
    fn default() -> Scaler {
        Scaler::new(Scaling::default())
    }
}

impl Scaler {
    /// The scaler of `scaling`.
    pub fn new(scaling: Scaling) -> Scaler {
        Scaler {
            scaling,
            ds: Divider::new(scaling.strides.seq),
            da: Divider::new(scaling.strides.ack),
        }
    }

    /// Its scaling.
    pub fn scaling(&self) -> Scaling {
        self.scaling
    }

    /// The derived values of `f`.
    pub fn derive(&self, f: &Fields) -> Derived {
        let (seq_q, seq_r) = self.ds.div_rem(f.seq);
        let (ack_q, ack_r) = self.da.div_rem(f.ack);
        let b = self.scaling.behaviour;
        let qs = if self.scaling.strides.seq != 0 {
            seq_q
        } else {
            0
        };
        Derived {
            seq_q,
            seq_r,
            ack_q,
            ack_r,
            gap: f.ts_val.wrapping_sub(f.ts_ecr),
            offset: ipid::offset(b.counter(f.ip_id), qs),
        }
    }
}

/// The needs of `f` against `vsw`, whose extras were derived under `derived_by`, for a context
/// scaled by `scaler` (when that is another scaling, the window's extras are derived anew).
pub fn needs(vsw: &Vsw<Derived>, derived_by: Scaling, f: &Fields, scaler: &Scaler) -> Needs {
    if derived_by == scaler.scaling {
        scan(vsw, vsw.extras().iter().copied(), f, scaler)
    } else {
        scan(vsw, vsw.entries().map(|e| scaler.derive(&e.fields)), f, scaler)
    }
}

/// [`needs`], given the entries' derived values.
fn scan(
    vsw: &Vsw<Derived>,
    derived: impl Iterator<Item = Derived>,
    f: &Fields,
    scaler: &Scaler,
) -> Needs {
    let c = vsw.columns();
    let me = scaler.derive(f);
    // Smallest and largest quotients (this packet's among them), residues that differ from
    // this packet's (any bit), smallest and largest gap and offset distances.
    let (mut seq_q, mut ack_q) = ((me.seq_q, me.seq_q), (me.ack_q, me.ack_q));
    let (mut seq_r, mut ack_r) = (0u32, 0u32);
    let (mut gap, mut offset) = ((0i32, 0i32), (0i16, 0i16));
    for g in derived {
        seq_q = (seq_q.0.min(g.seq_q), seq_q.1.max(g.seq_q));
        ack_q = (ack_q.0.min(g.ack_q), ack_q.1.max(g.ack_q));
        seq_r |= g.seq_r ^ me.seq_r;
        ack_r |= g.ack_r ^ me.ack_r;
        let d = me.gap.wrapping_sub(g.gap) as i32;
        gap = (gap.0.min(d), gap.1.max(d));
        let d = me.offset.wrapping_sub(g.offset) as i16;
        offset = (offset.0.min(d), offset.1.max(d));
    }
    let scaled = |(lo, hi): (u32, u32), q: u32, residues: u32, stride: u16| {
        (residues == 0 && stride != 0)
            .then(|| span(i64::from(q) - i64::from(hi), i64::from(q) - i64::from(lo)))
    };
    let strides = scaler.scaling.strides;
    Needs {
        seq: span_32(c.seq, f.seq),
        seq_scaled: scaled(seq_q, me.seq_q, seq_r, strides.seq),
        ack: span_32(c.ack, f.ack),
        ack_scaled: scaled(ack_q, me.ack_q, ack_r, strides.ack),
        ip_id: span(offset.0.into(), offset.1.into()),
        ts_val: span_32(c.ts_val, f.ts_val),
        ts_ecr: span_32(c.ts_ecr, f.ts_ecr),
        ts_gap: span(gap.0.into(), gap.1.into()),
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
    fn needs_entry_by_entry(vsw: &Vsw<Derived>, f: &Fields, strides: Strides, b: Behaviour) -> Needs {
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
            let strides = Strides {
                seq: stride,
                ack: [0u16, 1, 1448][round as usize % 3],
            };
            let b = behaviours[round as usize % 4];
            let scaling = Scaling {
                strides,
                behaviour: b,
            };
            // The window's extras derived under the context's scaling, under another one (a
            // replicated context codes against another's window), or under another and then
            // derived anew (the context's strides or behaviour changed).
            let other = Scaling {
                strides: Strides { seq: 0, ack: 536 },
                behaviour: behaviours[(round as usize + 1) % 4],
            };
            let mode = (round as usize / 5) % 3;
            let pushed_by = [scaling, other, other][mode];
            let mut vsw = Vsw::with_extras(32, Progress::SincePush);
            for _ in 0..round % 33 {
                let fields = fields();
                let extra = Scaler::new(pushed_by).derive(&fields);
                vsw.push_with(
                    Entry {
                        fields,
                        has_payload: true,
                        uncompressed: false,
                    },
                    extra,
                );
            }
            let mut derived_by = pushed_by;
            if mode == 2 {
                vsw.refresh_extras(|f| Scaler::new(scaling).derive(f));
                derived_by = scaling;
            }
            let f = fields();
            assert_eq!(
                needs(&vsw, derived_by, &f, &Scaler::new(scaling)),
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
