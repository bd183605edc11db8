//! How far one packet's fields are from every reference in the compressor's window (VSW):
//! the largest step up and down of each coded value, raw, scaled ([`super::scaled`]) and as an
//! IP-ID offset ([`super::ipid`]). The format picks the LSB counts from them
//! ([`super::format::class`], [`super::format::code`]).

use crate::tcp::packet::Fields;

use crate::tcp::vsw::{ordered, Block, ColumnOrder, Extras, Space, Vsw};

use super::ipid::{self, Behaviour};
use super::scaled::Strides;

mod divider;
use divider::Divider;

/// The largest steps up and down from the references to a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// Largest `value - reference` (0 if none is positive).
    pub up: u32,
    /// Largest `reference - value` (0 if none is positive).
    pub down: u32,
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
    /// The IP-ID offset (sequential and byte-swapped behaviours; zero for the others).
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

impl Span {
    /// The larger steps of `self` and `other`: what decodes against the references of both.
    pub fn max(self, other: Span) -> Span {
        Span {
            up: self.up.max(other.up),
            down: self.down.max(other.down),
        }
    }
}

impl Needs {
    /// What a packet needs against the references of two windows: each span the larger, a
    /// number scaled only if it scales against both.
    pub fn max(self, other: &Needs) -> Needs {
        let both = |a: Option<Span>, b: Option<Span>| Some(a?.max(b?));
        Needs {
            seq: self.seq.max(other.seq),
            seq_scaled: both(self.seq_scaled, other.seq_scaled),
            ack: self.ack.max(other.ack),
            ack_scaled: both(self.ack_scaled, other.ack_scaled),
            ip_id: self.ip_id.max(other.ip_id),
            ts_val: self.ts_val.max(other.ts_val),
            ts_ecr: self.ts_ecr.max(other.ts_ecr),
            ts_gap: self.ts_gap.max(other.ts_gap),
            win: self.win.max(other.win),
        }
    }
}

/// The span of the distances `d` of one field, from their smallest and largest (each a
/// difference of two `u32`s, so its magnitude fits a `u32`).
#[inline(always)]
fn span(lo: i64, hi: i64) -> Span {
    Span {
        up: hi.max(0).unsigned_abs() as u32,
        down: lo.min(0).unsigned_abs() as u32,
    }
}

/// The span from `v` to every value of `column`, in 32-bit sequence space.
fn span_32(column: &[u32], v: u32) -> Span {
    let (lo, hi) = distances_32(column, v);
    span(lo.into(), hi.into())
}

/// The smallest and largest distance `(v - g) as i32` from the values `g` of `column` to `v`,
/// and 0. First as distances saturated to 16 bits, exact if none saturated: baseline x86-64 has
/// minimum and maximum instructions for 16-bit lanes (eight a vector step) but none for 32-bit
/// ones. Else a 32-bit scan. Both vectorize.
fn distances_32(column: &[u32], v: u32) -> (i32, i32) {
    let (lo, hi) = column.iter().fold((0i16, 0i16), |(lo, hi), &g| {
        let d = (v.wrapping_sub(g) as i32).clamp(i16::MIN.into(), i16::MAX.into()) as i16;
        (lo.min(d), hi.max(d))
    });
    if lo > i16::MIN && hi < i16::MAX {
        return (lo.into(), hi.into());
    }
    column.iter().fold((0i32, 0i32), |(lo, hi), &g| {
        let d = v.wrapping_sub(g) as i32;
        (lo.min(d), hi.max(d))
    })
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
    /// A tunnelled context's `outer IP-ID - inner IP-ID` (section 8.1; 0 for others). No
    /// scaling derives it: [`rescale`] keeps it.
    outer: u16,
    /// The sequence space the packet took (its payload, plus one for FIN): a window entry's
    /// sequence number is its *next* sequence number, what a later packet's is coded against
    /// (section 5.2), and its IP-ID offset is of the number less this.
    len: u32,
}

impl Derived {
    /// The sequence number over the sequence stride (the number itself without a stride).
    pub fn seq_q(&self) -> u32 {
        self.seq_q
    }

    /// The acknowledgment number over the acknowledgment stride (the number itself without a
    /// stride).
    pub fn ack_q(&self) -> u32 {
        self.ack_q
    }

    /// The IP-ID offset ([`ipid::offset`]; meaningful for the counter behaviours only).
    pub fn offset(&self) -> u16 {
        self.offset
    }

    /// The same values with the IP-ID offset `offset` instead ([`ipid::window_offset`]).
    pub fn with_offset(self, offset: u16) -> Derived {
        Derived { offset, ..self }
    }

    /// The same values with the outer offset `outer` (`outer IP-ID - inner IP-ID` of a
    /// context tunnelled under an IPv4 outer header).
    pub fn with_outer(self, outer: u16) -> Derived {
        Derived { outer, ..self }
    }
}

/// Every window entry's [`Derived`] values, one column per value (the window's [`Extras`]),
/// so that the scan's loops run over contiguous memory: the 32-bit ones in one [`Block`]
/// (numbered by the `WORD_*` constants), the 16-bit ones in another.
#[derive(Debug, Clone, Default)]
pub struct DerivedColumns {
    words: Block<u32, 6>,
    /// The IP-ID offsets, then the outer offsets.
    halves: Block<u16, 2>,
    /// Which columns are in order (the `DERIVED_*` bits; all but the gaps and outer offsets).
    order: ColumnOrder,
}

/// [`DerivedColumns::words`]' columns.
const WORD_SEQ_Q: usize = 0;
const WORD_SEQ_R: usize = 1;
const WORD_ACK_Q: usize = 2;
const WORD_ACK_R: usize = 3;
const WORD_GAP: usize = 4;
const WORD_LEN: usize = 5;

/// [`DerivedColumns::order`]'s bits.
const DERIVED_SEQ_Q: u16 = 1;
const DERIVED_SEQ_R: u16 = 2;
const DERIVED_ACK_Q: u16 = 4;
const DERIVED_ACK_R: u16 = 8;
const DERIVED_OFFSET: u16 = 16;

/// The live part of [`DerivedColumns`].
#[derive(Debug, Clone, Copy)]
pub struct DerivedSlices<'a> {
    seq_q: &'a [u32],
    seq_r: &'a [u32],
    ack_q: &'a [u32],
    ack_r: &'a [u32],
    gap: &'a [u32],
    offset: &'a [u16],
    outer: &'a [u16],
    len: &'a [u32],
    order: &'a ColumnOrder,
}

/// Writes `item`'s values at entry `i` of the columns of [`DerivedColumns::words`] and
/// [`DerivedColumns::halves`].
#[inline(always)]
fn write_derived(words: [&mut [u32]; 6], halves: [&mut [u16]; 2], i: usize, item: &Derived) {
    let [seq_q, seq_r, ack_q, ack_r, gap, len] = words;
    let [offset, outer] = halves;
    seq_q[i] = item.seq_q;
    seq_r[i] = item.seq_r;
    ack_q[i] = item.ack_q;
    ack_r[i] = item.ack_r;
    gap[i] = item.gap;
    len[i] = item.len;
    offset[i] = item.offset;
    outer[i] = item.outer;
}

impl Extras for DerivedColumns {
    type Item = Derived;
    type Live<'a> = DerivedSlices<'a>;

    #[inline]
    fn push(&mut self, item: Derived, from: usize, at: usize) {
        let words = self.words.columns_mut();
        let halves = self.halves.columns_mut();
        if at == from {
            self.order.reset();
        } else {
            let last = at - 1;
            let plain = |bit, k: usize, value| {
                let column: &[u32] = words[k];
                Space::Plain.breaks(bit, column[from], column[last], value)
            };
            let offset: &[u16] = halves[0];
            self.order.pushed(
                plain(DERIVED_SEQ_Q, WORD_SEQ_Q, item.seq_q)
                    | plain(DERIVED_SEQ_R, WORD_SEQ_R, item.seq_r)
                    | plain(DERIVED_ACK_Q, WORD_ACK_Q, item.ack_q)
                    | plain(DERIVED_ACK_R, WORD_ACK_R, item.ack_r)
                    | Space::Wrap16.breaks(
                        DERIVED_OFFSET,
                        offset[from].into(),
                        offset[last].into(),
                        item.offset.into(),
                    ),
            );
        }
        write_derived(words, halves, at, &item);
    }

    fn removed(&mut self) {
        self.order.removed();
    }

    fn get(&self, i: usize) -> Derived {
        let w = |k| self.words.column(k)[i];
        Derived {
            seq_q: w(WORD_SEQ_Q),
            seq_r: w(WORD_SEQ_R),
            ack_q: w(WORD_ACK_Q),
            ack_r: w(WORD_ACK_R),
            gap: w(WORD_GAP),
            offset: self.halves.column(0)[i],
            outer: self.halves.column(1)[i],
            len: w(WORD_LEN),
        }
    }

    fn set(&mut self, i: usize, item: Derived) {
        self.order.forget();
        write_derived(
            self.words.columns_mut(),
            self.halves.columns_mut(),
            i,
            &item,
        );
    }

    fn copy(&mut self, from: usize, to: usize) {
        self.words.copy(from, to);
        self.halves.copy(from, to);
    }

    fn compact(&mut self, from: usize, to: usize) {
        self.words.copy_within(from, to, 0);
        self.halves.copy_within(from, to, 0);
    }

    fn resize(&mut self, n: usize) {
        self.words.grow(n);
        self.halves.grow(n);
    }

    // Inlined where it is read, so that the slices not read are not made.
    #[inline(always)]
    fn live(&self, from: usize, to: usize) -> DerivedSlices<'_> {
        let [seq_q, seq_r, ack_q, ack_r, gap, len] = self.words.parts(from, to);
        let [offset, outer] = self.halves.parts(from, to);
        DerivedSlices {
            seq_q,
            seq_r,
            ack_q,
            ack_r,
            gap,
            offset,
            outer,
            len,
            order: &self.order,
        }
    }
}

impl DerivedSlices<'_> {
    /// The IP-ID offsets of the live entries, oldest first.
    pub fn offsets(&self) -> &[u16] {
        self.offset
    }
}

/// Derives every window entry's extras anew under `scaler` (a context's strides or IP-ID
/// behaviour changed), keeping their outer offsets, which no scaling derives.
pub fn rescale(vsw: &mut Vsw<DerivedColumns>, scaler: &Scaler) {
    vsw.refresh_extras(|f, old| scaler.derive_entry(f, old.len).with_outer(old.outer));
}

/// The span from every window entry's outer offset ([`Derived::with_outer`]) to `outer`.
pub fn outer_span(vsw: &Vsw<DerivedColumns>, outer: u16) -> Span {
    span_16(vsw.extras().outer, outer)
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

    /// The derived values of a packet to be coded, of fields `f`.
    pub fn derive(&self, f: &Fields) -> Derived {
        let (seq_q, seq_r) = self.ds.div_rem(f.seq);
        self.derive_with(f, (seq_q, seq_r), seq_q, 0)
    }

    /// The derived values of a window entry, whose fields `f` hold its next sequence number,
    /// `len` above its own (its payload, plus one for FIN): the quotient and residue of the next
    /// sequence number, the IP-ID offset of the packet's own.
    pub fn derive_entry(&self, f: &Fields, len: u32) -> Derived {
        let (seq_q, seq_r) = self.ds.div_rem(f.seq);
        let own_q = if len == 0 {
            seq_q
        } else {
            self.ds.div_rem(f.seq.wrapping_sub(len)).0
        };
        self.derive_with(f, (seq_q, seq_r), own_q, len)
    }

    fn derive_with(&self, f: &Fields, (seq_q, seq_r): (u32, u32), own_q: u32, len: u32) -> Derived {
        let (ack_q, ack_r) = self.da.div_rem(f.ack);
        let b = self.scaling.behaviour;
        let qs = if self.scaling.strides.seq != 0 {
            own_q
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
            outer: 0,
            len,
        }
    }
}

/// The needs of `f`, whose derived values under `scaler` are `me` ([`Scaler::derive`]), against
/// `vsw`, whose extras were derived under `derived_by`, for a context scaled by `scaler` (when
/// that is another scaling, the window's extras are derived anew). The timestamps' spans (and
/// their gaps') are scanned only for a context with timestamps (`ts`; else they are left
/// empty).
pub fn needs(
    vsw: &Vsw<DerivedColumns>,
    derived_by: Scaling,
    f: &Fields,
    me: &Derived,
    scaler: &Scaler,
    ts: bool,
) -> Needs {
    let mut spans = if derived_by == scaler.scaling {
        DerivedSpans::of_columns(vsw.extras(), me, scaler.scaling, ts)
    } else {
        let lens = vsw.extras().len;
        let derived = vsw
            .entries()
            .zip(lens)
            .map(|(e, &len)| scaler.derive_entry(&e.fields, len));
        DerivedSpans::of_each(derived, me)
    };
    let strides = scaler.scaling.strides;
    if strides.seq == 0 {
        spans.seq_residues = 1;
    }
    if strides.ack == 0 {
        spans.ack_residues = 1;
    }
    if !scaler.scaling.behaviour.is_counter() {
        spans.offset = (0, 0);
    }
    let c = vsw.columns();
    let o = vsw.order();
    let span_32 = |bit: u16, column: &[u32], v: u32| match o.distances_32(bit, column, v) {
        Some((lo, hi)) => span(lo.into(), hi.into()),
        None => span_32(column, v),
    };
    let seq_scaled = scaled(spans.seq_q, me.seq_q, spans.seq_residues);
    let ack_scaled = scaled(spans.ack_q, me.ack_q, spans.ack_residues);
    Needs {
        seq: unscaled(seq_scaled, strides.seq)
            .unwrap_or_else(|| span_32(ordered::SEQ, c.seq, f.seq)),
        seq_scaled,
        ack: unscaled(ack_scaled, strides.ack)
            .unwrap_or_else(|| span_32(ordered::ACK, c.ack, f.ack)),
        ack_scaled,
        ip_id: span(spans.offset.0.into(), spans.offset.1.into()),
        ts_val: if ts {
            span_32(ordered::TS_VAL, c.ts_val, f.ts_val)
        } else {
            Span::default()
        },
        ts_ecr: if ts {
            span_32(ordered::TS_ECR, c.ts_ecr, f.ts_ecr)
        } else {
            Span::default()
        },
        ts_gap: span(spans.gap.0.into(), spans.gap.1.into()),
        win: match o.distances_16(ordered::WIN, c.win, f.win) {
            Some((lo, hi)) => span(lo.into(), hi.into()),
            None => span_16(c.win, f.win),
        },
    }
}

/// The span of the numbers themselves from their scaled span (`scaled`, all residues equal)
/// without a scan: with equal residues every distance is the quotients' times the stride,
/// which is the 32-bit sequence-space distance as long as it stays below 2^31. `None` if
/// there is no scaled span or a distance may not.
fn unscaled(scaled: Option<Span>, stride: u16) -> Option<Span> {
    let s = scaled?;
    let times = |q: u32| {
        let d = u64::from(q) * u64::from(stride);
        (d < 1 << 31).then_some(d as u32)
    };
    Some(Span {
        up: times(s.up)?,
        down: times(s.down)?,
    })
}

/// The span of the quotients from `q` to those between `lo` and `hi` (`q` among them), if no
/// residue differs from `q`'s.
fn scaled((lo, hi): (u32, u32), q: u32, residues: u32) -> Option<Span> {
    (residues == 0).then(|| span(i64::from(q) - i64::from(hi), i64::from(q) - i64::from(lo)))
}

/// One packet's derived values against the window's: the smallest and largest quotients (the
/// packet's own among them), the residue bits that differ from the packet's (OR of all), and
/// the smallest and largest gap and offset distances (0 among them).
struct DerivedSpans {
    seq_q: (u32, u32),
    ack_q: (u32, u32),
    seq_residues: u32,
    ack_residues: u32,
    gap: (i32, i32),
    offset: (i16, i16),
}

impl DerivedSpans {
    /// From the window's columns: a loop per column, each of which vectorizes; only the
    /// columns `scaling` codes with ([`needs`] ignores the others), and the gaps only for a
    /// context with timestamps (`ts`).
    fn of_columns(c: DerivedSlices<'_>, me: &Derived, scaling: Scaling, ts: bool) -> DerivedSpans {
        let o = c.order;
        let range = |bit: u16, column: &[u32], v: u32| {
            o.range(bit, column, v).unwrap_or_else(|| {
                column
                    .iter()
                    .fold((v, v), |(lo, hi), &g| (lo.min(g), hi.max(g)))
            })
        };
        let differ = |bit: u16, column: &[u32], v: u32| match o.all_equal(bit, column, v) {
            Some(equal) => u32::from(!equal),
            None => column.iter().fold(0, |bits, &g| bits | (g ^ v)),
        };
        // Not kept in order: the gaps go up and down (a scan costs less than a check). Only a
        // context with timestamps codes them.
        let gap = if ts {
            distances_32(c.gap, me.gap)
        } else {
            (0, 0)
        };
        let offset = if scaling.behaviour.is_counter() {
            o.distances_16(DERIVED_OFFSET, c.offset, me.offset)
                .unwrap_or_else(|| {
                    c.offset.iter().fold((0i16, 0i16), |(lo, hi), &g| {
                        let d = me.offset.wrapping_sub(g) as i16;
                        (lo.min(d), hi.max(d))
                    })
                })
        } else {
            (0, 0)
        };
        let scaled = |stride: u16, (bq, br): (u16, u16), q: &[u32], r: &[u32], (mq, mr)| {
            if stride == 0 {
                ((mq, mq), 1)
            } else {
                (range(bq, q, mq), differ(br, r, mr))
            }
        };
        let strides = scaling.strides;
        let (seq_q, seq_residues) = scaled(
            strides.seq,
            (DERIVED_SEQ_Q, DERIVED_SEQ_R),
            c.seq_q,
            c.seq_r,
            (me.seq_q, me.seq_r),
        );
        let (ack_q, ack_residues) = scaled(
            strides.ack,
            (DERIVED_ACK_Q, DERIVED_ACK_R),
            c.ack_q,
            c.ack_r,
            (me.ack_q, me.ack_r),
        );
        DerivedSpans {
            seq_q,
            ack_q,
            seq_residues,
            ack_residues,
            gap,
            offset,
        }
    }

    /// From each entry's values in turn.
    fn of_each(derived: impl Iterator<Item = Derived>, me: &Derived) -> DerivedSpans {
        let mut s = DerivedSpans {
            seq_q: (me.seq_q, me.seq_q),
            ack_q: (me.ack_q, me.ack_q),
            seq_residues: 0,
            ack_residues: 0,
            gap: (0, 0),
            offset: (0, 0),
        };
        for g in derived {
            s.seq_q = (s.seq_q.0.min(g.seq_q), s.seq_q.1.max(g.seq_q));
            s.ack_q = (s.ack_q.0.min(g.ack_q), s.ack_q.1.max(g.ack_q));
            s.seq_residues |= g.seq_r ^ me.seq_r;
            s.ack_residues |= g.ack_r ^ me.ack_r;
            let d = me.gap.wrapping_sub(g.gap) as i32;
            s.gap = (s.gap.0.min(d), s.gap.1.max(d));
            let d = me.offset.wrapping_sub(g.offset) as i16;
            s.offset = (s.offset.0.min(d), s.offset.1.max(d));
        }
        s
    }
}

#[cfg(test)]
mod tests;
