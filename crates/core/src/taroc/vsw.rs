//! The compressor's sliding window of potential references (VSW), and the W-LSB bit counts it
//! implies for each field.
//!
//! The draft measures the window in sequence space: an entry leaves once the stream has
//! progressed more than W bytes beyond it, in sequence numbers or in acknowledgment numbers
//! (MISSION.md's reading of "the size of VSW"). Progress is measured from the *frontier*: the
//! newest packet in the decompressor's order (highest sequence number, then highest ACK; draft
//! 7.2 a), because only such packets can become the decompressor's reference. A retransmission
//! carrying a newer ACK is behind the frontier and moves nothing. A hard cap on the number of
//! entries keeps memory bounded whatever the traffic; when the cap forces an entry out early, the
//! oldest goes, except the frontier entry itself.

use alloc::vec::Vec;

use taroc_wire::seq::{seq_diff, seq_lt};

use super::packet::Fields;
use crate::encoding::wlsb::bits_needed;

mod order;
pub use order::{ColumnOrder, Space};

/// The bits that number [`Vsw::order`]'s columns.
pub mod ordered {
    /// Sequence numbers.
    pub const SEQ: u16 = 1;
    /// Acknowledgment numbers.
    pub const ACK: u16 = 2;
    /// Windows.
    pub const WIN: u16 = 4;
    /// Timestamp values.
    pub const TS_VAL: u16 = 8;
    /// Timestamp echo replies.
    pub const TS_ECR: u16 = 16;
}

/// One packet sent, as a potential reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Its W-LSB fields.
    pub fields: Fields,
    /// Whether it carried payload.
    pub has_payload: bool,
    /// Whether it was sent as UNCOMPRESSED_TCP.
    pub uncompressed: bool,
}

/// Whether a packet `(seq, ack)` is older than `(ref_seq, ref_ack)` in the decompressor's order:
/// a lower sequence number, or the same one and a lower ACK (draft section 7.2 a).
#[inline]
pub fn is_older(seq: u32, ack: u32, ref_seq: u32, ref_ack: u32) -> bool {
    seq_lt(seq, ref_seq) | ((seq == ref_seq) & seq_lt(ack, ref_ack))
}

/// W-LSB bit counts for one packet against the window, per field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    /// Window.
    pub win: u8,
    /// Acknowledgment number.
    pub ack: u8,
    /// Sequence number.
    pub seq: u8,
    /// IP-ID.
    pub ip_id: u8,
    /// TS value.
    pub ts_val: u8,
    /// TS echo reply.
    pub ts_ecr: u8,
}

/// How entries leave the window ([`Vsw::prune`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Progress {
    /// The draft's reading: an entry leaves once the frontier is more than W beyond the entry's
    /// own sequence (or acknowledgment) number.
    #[default]
    OfFields,
    /// An entry leaves once the stream has sent more than W of *new* sequence (or
    /// acknowledgment) space since the entry was pushed: a retransmission or an older packet
    /// stays as long as a packet sent with the newest data would (the `taroc-plus` profile).
    /// The frontier never leaves this way: while it is the decompressor's reference, the
    /// stream's high-water marks may have moved far beyond it (an ACK jump after a
    /// retransmission sent whole).
    SincePush,
}

/// The entries, one column per field (a structure of arrays, so that the scans every packet
/// makes are simple loops over contiguous memory). The live entries, oldest first, are
/// `start..` of every column; entries leave the front by moving `start`, and the dead prefix is
/// dropped once it outgrows the live part, so each push costs O(1) amortized.
#[derive(Debug, Clone, Default)]
struct Columns<X> {
    start: usize,
    seq: Vec<u32>,
    ack: Vec<u32>,
    win: Vec<u16>,
    ip_id: Vec<u16>,
    ts_val: Vec<u32>,
    ts_ecr: Vec<u32>,
    /// Where each entry's progress is measured from ([`Progress`]).
    mark_seq: Vec<u32>,
    mark_ack: Vec<u32>,
    /// `HAS_PAYLOAD | UNCOMPRESSED` bits.
    kind: Vec<u8>,
    /// What the window's user keeps per entry ([`Vsw::push_with`]).
    extra: X,
    /// Which of the W-LSB columns are in order ([`ordered`]).
    order: ColumnOrder,
}

/// Values a window's user keeps beside each entry ([`Vsw::push_with`]), as more columns of
/// the window's structure of arrays: the window moves, drops and truncates them with its own.
pub trait Extras: Clone + Default + core::fmt::Debug {
    /// One entry's values.
    type Item: Copy;
    /// The live entries' values, oldest first ([`Vsw::extras`]).
    type Live<'a>
    where
        Self: 'a;
    /// Appends an entry's values; the live entries start at `from`.
    fn push(&mut self, item: Self::Item, from: usize);
    /// Live entries left (from the front or the middle).
    fn removed(&mut self) {}
    /// Sets entry `i`'s values.
    fn set(&mut self, i: usize, item: Self::Item);
    /// Copies entry `from`'s values over entry `to`'s.
    fn copy(&mut self, from: usize, to: usize);
    /// Drops the first `n` entries.
    fn drain_front(&mut self, n: usize);
    /// Keeps the first `n` entries.
    fn truncate(&mut self, n: usize);
    /// Makes room for `n` more entries.
    fn reserve(&mut self, n: usize);
    /// The values of entries `from..`.
    fn live(&self, from: usize) -> Self::Live<'_>;
}

/// No extras (the faithful `taroc`).
impl Extras for () {
    type Item = ();
    type Live<'a> = ();
    fn push(&mut self, _: (), _: usize) {}
    fn set(&mut self, _: usize, _: ()) {}
    fn copy(&mut self, _: usize, _: usize) {}
    fn drain_front(&mut self, _: usize) {}
    fn truncate(&mut self, _: usize) {}
    fn reserve(&mut self, _: usize) {}
    fn live(&self, _: usize) {}
}

const HAS_PAYLOAD: u8 = 1;
const UNCOMPRESSED: u8 = 2;

/// Runs `$body` with `$v` bound to each column in turn (`&mut Vec<_>` of its own type).
macro_rules! each_column {
    ($c:expr, $v:ident => $body:expr) => {{
        {
            let $v = &mut $c.seq;
            $body;
        }
        {
            let $v = &mut $c.ack;
            $body;
        }
        {
            let $v = &mut $c.win;
            $body;
        }
        {
            let $v = &mut $c.ip_id;
            $body;
        }
        {
            let $v = &mut $c.ts_val;
            $body;
        }
        {
            let $v = &mut $c.ts_ecr;
            $body;
        }
        {
            let $v = &mut $c.mark_seq;
            $body;
        }
        {
            let $v = &mut $c.mark_ack;
            $body;
        }
        {
            let $v = &mut $c.kind;
            $body;
        }
    }};
}

/// Entries a new window has room for (twice this, with the dead prefix) before a column
/// reallocates: a window of up to this many entries allocates once per column.
const PREALLOCATED: usize = 32;

impl<X: Extras> Columns<X> {
    /// Empty columns with room for `n` entries.
    fn with_capacity(n: usize) -> Columns<X> {
        let mut c = Columns::<X>::default();
        each_column!(c, v => v.reserve_exact(n));
        c.extra.reserve(n);
        c.order.reset();
        c
    }

    fn len(&self) -> usize {
        self.seq.len() - self.start
    }

    fn clear(&mut self) {
        each_column!(self, v => v.clear());
        self.extra.truncate(0);
        self.extra.removed();
        self.order.reset();
        self.start = 0;
    }

    /// Live entries left.
    fn removed(&mut self) {
        self.order.removed();
        self.extra.removed();
    }

    fn push(&mut self, e: &Entry, mark_seq: u32, mark_ack: u32, extra: X::Item) {
        if self.start > 0 && self.start >= self.len() {
            let dead = self.start;
            each_column!(self, v => v.drain(..dead));
            self.extra.drain_front(dead);
            self.start = 0;
        }
        let f = &e.fields;
        if self.len() == 0 {
            self.order.reset();
        } else {
            let (at, last) = (self.start, self.seq.len() - 1);
            let w32 = |bit, column: &[u32], value| {
                Space::Wrap32.breaks(bit, column[at], column[last], value)
            };
            let win = &self.win;
            self.order.pushed(
                w32(ordered::SEQ, &self.seq, f.seq)
                    | w32(ordered::ACK, &self.ack, f.ack)
                    | w32(ordered::TS_VAL, &self.ts_val, f.ts_val)
                    | w32(ordered::TS_ECR, &self.ts_ecr, f.ts_ecr)
                    | Space::Wrap16.breaks(
                        ordered::WIN,
                        win[at].into(),
                        win[last].into(),
                        f.win.into(),
                    ),
            );
        }
        self.seq.push(f.seq);
        self.ack.push(f.ack);
        self.win.push(f.win);
        self.ip_id.push(f.ip_id);
        self.ts_val.push(f.ts_val);
        self.ts_ecr.push(f.ts_ecr);
        self.mark_seq.push(mark_seq);
        self.mark_ack.push(mark_ack);
        self.kind.push(
            if e.has_payload { HAS_PAYLOAD } else { 0 }
                | if e.uncompressed { UNCOMPRESSED } else { 0 },
        );
        self.extra.push(extra, self.start);
    }

    /// The entry at live index `i`.
    fn get(&self, i: usize) -> Entry {
        let j = self.start + i;
        Entry {
            fields: Fields {
                seq: self.seq[j],
                ack: self.ack[j],
                win: self.win[j],
                ip_id: self.ip_id[j],
                ts_val: self.ts_val[j],
                ts_ecr: self.ts_ecr[j],
            },
            has_payload: self.kind[j] & HAS_PAYLOAD != 0,
            uncompressed: self.kind[j] & UNCOMPRESSED != 0,
        }
    }

    /// Removes live entry `i`: the entries before it move up one place.
    fn remove_at(&mut self, i: usize) {
        for j in (self.start..self.start + i).rev() {
            each_column!(self, v => v[j + 1] = v[j]);
            self.extra.copy(j, j + 1);
        }
        self.start += 1;
        self.removed();
    }

    /// The oldest live entry that is neither the frontier `(max_seq, max_ack)` nor among the
    /// `protect` newest entries in sequence order ([`is_older`]); entry 0 if there is none.
    fn first_unprotected(&self, protect: usize, max_seq: u32, max_ack: u32) -> usize {
        let (seq, ack) = (&self.seq[self.start..], &self.ack[self.start..]);
        // Sequence numbers in order: the oldest entry has the `protect` newest after it in
        // sequence order if the protect-th from the end has a higher sequence number; or, all
        // sequence numbers equal (a flow of pure ACKs), if it has a higher acknowledgment
        // number and those are in order.
        let n = seq.len();
        let sorted = |bit| self.order.known_sorted(bit);
        let rises = |column: &[u32]| column[n - protect] != column[0];
        if sorted(ordered::SEQ)
            && n > protect
            && (rises(seq) || (seq[n - 1] == seq[0] && sorted(ordered::ACK) && rises(ack)))
            && (seq[0], ack[0]) != (max_seq, max_ack)
        {
            debug_assert_eq!(self.first_unprotected_scan(protect, max_seq, max_ack), 0);
            return 0;
        }
        self.first_unprotected_scan(protect, max_seq, max_ack)
    }

    /// [`Columns::first_unprotected`] by counting, for each entry in turn, the newer ones. If
    /// every entry is protected (a window of fewer entries than `protect`), the oldest goes
    /// unless it is the only entry at the frontier, whose successor then goes: the frontier
    /// is what the decompressor holds if it missed nothing.
    fn first_unprotected_scan(&self, protect: usize, max_seq: u32, max_ack: u32) -> usize {
        let (seq, ack) = (&self.seq[self.start..], &self.ack[self.start..]);
        let at_frontier = |i: usize| (seq[i], ack[i]) == (max_seq, max_ack);
        (0..seq.len())
            .find(|&i| !at_frontier(i) && newer_entries(seq, ack, seq[i], ack[i]) >= protect)
            .unwrap_or_else(|| {
                let only_front =
                    seq.len() > 1 && at_frontier(0) && !(1..seq.len()).any(at_frontier);
                usize::from(only_front)
            })
    }

    /// Keeps the newest entry, live entry `also` if any, and every other one whose progress
    /// marks are within `w` of `(to_seq, to_ack)`, in order.
    fn retain_within(&mut self, to_seq: u32, to_ack: u32, w: i32, also: Option<usize>) {
        let (n, mut to) = (self.len(), self.start);
        for i in 0..n {
            let from = self.start + i;
            let keep = i == n - 1
                || Some(i) == also
                || (seq_diff(to_seq, self.mark_seq[from]) <= w
                    && seq_diff(to_ack, self.mark_ack[from]) <= w);
            if keep {
                if from != to {
                    each_column!(self, v => v[to] = v[from]);
                    self.extra.copy(from, to);
                }
                to += 1;
            }
        }
        each_column!(self, v => v.truncate(to));
        self.extra.truncate(to);
        self.removed();
    }
}

/// How many of the entries `(seq, ack)` are newer than `(s, a)` in the decompressor's order
/// ([`is_older`]), counted without branches (a loop that vectorizes).
fn newer_entries(seq: &[u32], ack: &[u32], s: u32, a: u32) -> usize {
    seq.iter()
        .zip(ack)
        .map(|(&s2, &a2)| usize::from(is_older(s, a, s2, a2)))
        .sum()
}

/// The bitwise OR of the distances from `v` to every value of `column`, in 32-bit sequence
/// space. It has the bit length of the largest distance, which is all W-LSB needs, and unlike a
/// maximum it vectorizes on every x86-64.
fn distance_bits_32(column: &[u32], v: u32) -> u32 {
    column.iter().fold(0, |bits, &g| {
        bits | (v.wrapping_sub(g) as i32).unsigned_abs()
    })
}

/// [`distance_bits_32`] in 16-bit space.
fn distance_bits_16(column: &[u16], v: u16) -> u16 {
    column.iter().fold(0, |bits, &g| {
        bits | (v.wrapping_sub(g) as i16).unsigned_abs()
    })
}

/// The live entries' W-LSB fields, one slice per field, oldest first (all of one length): what
/// a scan over the window reads without assembling an [`Entry`] per packet.
#[derive(Debug, Clone, Copy)]
pub struct FieldColumns<'a> {
    /// Sequence numbers.
    pub seq: &'a [u32],
    /// Acknowledgment numbers.
    pub ack: &'a [u32],
    /// Windows.
    pub win: &'a [u16],
    /// IP-IDs.
    pub ip_id: &'a [u16],
    /// Timestamp values.
    pub ts_val: &'a [u32],
    /// Timestamp echo replies.
    pub ts_ecr: &'a [u32],
}

/// The sliding window; each entry may carry extras of its user's ([`Extras`],
/// [`Vsw::push_with`]).
#[derive(Debug, Clone)]
pub struct Vsw<X = ()> {
    columns: Columns<X>,
    cap: usize,
    /// Entries [`Vsw::prune`] keeps from the front's trimming whatever W says.
    min_len: usize,
    /// The newest entries in sequence order that a full window keeps besides the frontier, which
    /// pruning keeps too ([`Vsw::with_protected`]); 0: the draft's rules (a full window keeps
    /// only the frontier, pruning may drop it).
    protect: usize,
    progress: Progress,
    max_seq: u32,
    max_ack: u32,
    high_seq: u32,
    high_ack: u32,
}

impl Vsw {
    /// An empty window holding at most `cap` entries (at least two: the frontier and the newest),
    /// whose entries leave by `progress`.
    pub fn new(cap: usize, progress: Progress) -> Vsw {
        Vsw::with_extras(cap, progress)
    }

    /// Adds a packet just sent.
    pub fn push(&mut self, entry: Entry) {
        self.push_with(entry, ());
    }
}

impl<X: Extras> Vsw<X> {
    /// [`Vsw::new`] for entries that carry an `X` each ([`Vsw::push_with`]).
    pub fn with_extras(cap: usize, progress: Progress) -> Vsw<X> {
        Vsw {
            columns: Columns::with_capacity(2 * cap.clamp(2, PREALLOCATED)),
            cap: cap.max(2),
            min_len: 0,
            protect: 0,
            progress,
            max_seq: 0,
            max_ack: 0,
            high_seq: 0,
            high_ack: 0,
        }
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether the window is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frontier's sequence and acknowledgment numbers: the newest pushed in the
    /// decompressor's order ([`is_older`]), which no entry is newer than (meaningless while
    /// the window is empty).
    #[inline]
    pub fn frontier(&self) -> (u32, u32) {
        (self.max_seq, self.max_ack)
    }

    /// How many entries are newer than `fields` in the decompressor's order ([`is_older`]).
    pub fn newer_than(&self, fields: &Fields) -> usize {
        let c = &self.columns;
        newer_entries(&c.seq[c.start..], &c.ack[c.start..], fields.seq, fields.ack)
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.columns.clear();
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        (0..self.len()).map(|i| self.columns.get(i))
    }

    /// The entries' fields as columns, oldest first.
    #[inline]
    pub fn columns(&self) -> FieldColumns<'_> {
        let c = &self.columns;
        let at = c.start;
        FieldColumns {
            seq: &c.seq[at..],
            ack: &c.ack[at..],
            win: &c.win[at..],
            ip_id: &c.ip_id[at..],
            ts_val: &c.ts_val[at..],
            ts_ecr: &c.ts_ecr[at..],
        }
    }

    /// Which of the columns numbered by [`ordered`] are in order, for the live entries of
    /// [`Vsw::columns`].
    #[inline]
    pub fn order(&self) -> &ColumnOrder {
        &self.columns.order
    }

    /// The live entries' extras, oldest first (as [`Vsw::columns`]).
    #[inline]
    pub fn extras(&self) -> X::Live<'_> {
        self.columns.extra.live(self.columns.start)
    }

    /// Replaces every live entry's extras by `f` of its fields.
    pub fn refresh_extras(&mut self, mut f: impl FnMut(&Fields) -> X::Item) {
        for i in 0..self.len() {
            let fields = self.columns.get(i).fields;
            self.columns.extra.set(self.columns.start + i, f(&fields));
        }
    }

    /// Adds a packet just sent, with its extras.
    pub fn push_with(&mut self, entry: Entry, extra: X::Item) {
        let (seq, ack) = (entry.fields.seq, entry.fields.ack);
        // An UNCOMPRESSED_TCP always becomes the decompressor's reference (draft 7.2 b), even when
        // it is older: it becomes the frontier.
        if self.is_empty() || entry.uncompressed || !is_older(seq, ack, self.max_seq, self.max_ack)
        {
            self.max_seq = seq;
            self.max_ack = ack;
        }
        if self.is_empty() {
            (self.high_seq, self.high_ack) = (seq, ack);
        } else {
            if seq_lt(self.high_seq, seq) {
                self.high_seq = seq;
            }
            if seq_lt(self.high_ack, ack) {
                self.high_ack = ack;
            }
        }
        let c = &self.columns;
        if c.len() == self.cap {
            let evict = if self.protect > 0 {
                c.first_unprotected(self.protect, self.max_seq, self.max_ack)
            } else {
                let front_is_frontier =
                    c.seq[c.start] == self.max_seq && c.ack[c.start] == self.max_ack;
                usize::from(front_is_frontier && self.cap > 1)
            };
            self.columns.remove_at(evict);
        }
        let (mark_seq, mark_ack) = match self.progress {
            Progress::OfFields => (seq, ack),
            Progress::SincePush => (self.high_seq, self.high_ack),
        };
        self.columns.push(&entry, mark_seq, mark_ack, extra);
    }

    /// The same window, keeping at least its newest `n` entries (up to its cap) when
    /// [`Vsw::prune`] trims the oldest: a floor under a window that congestion-window tracking
    /// shrank to a few packets (`taroc-plus`; the draft has none).
    pub fn with_min_len(mut self, n: usize) -> Vsw<X> {
        self.min_len = n;
        self
    }

    /// The same window, keeping its `n` newest entries in sequence order ([`is_older`]) besides
    /// the frontier when a full window drops one: the oldest other entry goes instead. A run of
    /// retransmissions (all older than what the decompressor holds) then cannot push the
    /// decompressor's possible references out of the window, unless it lost the `n` newest
    /// (`taroc-plus`; the draft keeps only the frontier).
    pub fn with_protected(mut self, n: usize) -> Vsw<X> {
        self.protect = n;
        self
    }

    /// Removes every entry the stream has left more than `w` bytes behind, in sequence or in
    /// acknowledgment numbers, as [`Progress`] measures it. The newest entry and the frontier
    /// ([`Vsw::frontier`], the decompressor's reference on a clean link) always stay.
    pub fn prune(&mut self, w: u32) {
        let (to_seq, to_ack) = match self.progress {
            Progress::OfFields => (self.max_seq, self.max_ack),
            Progress::SincePush => (self.high_seq, self.high_ack),
        };
        // Every i32 distance is at most i32::MAX, so a larger W keeps everything.
        let w = w.min(i32::MAX as u32) as i32;
        let c = &self.columns;
        let n = c.len();
        if n == 0 {
            return;
        }
        let (marks_seq, marks_ack) = (&c.mark_seq[c.start..], &c.mark_ack[c.start..]);
        // When entries leave by progress since their push, the frontier stays: it is the
        // decompressor's reference until a newer packet arrives, however far the other number
        // has moved since (an ACK jump must not prune it). By the draft's rule it is at no
        // distance from itself, so it stays anyway.
        let frontier = if self.progress == Progress::SincePush {
            let (seq, ack) = (&c.seq[c.start..], &c.ack[c.start..]);
            (0..n).rfind(|&i| (seq[i], ack[i]) == (self.max_seq, self.max_ack))
        } else {
            None
        };
        let keep = |i: usize| {
            i == n - 1
                || Some(i) == frontier
                || (seq_diff(to_seq, marks_seq[i]) <= w && seq_diff(to_ack, marks_ack[i]) <= w)
        };
        // Entries usually leave from the front: drop the leading run, and only if some entry
        // after it must go too, filter the rest.
        let first_kept = (0..n)
            .find(|&i| keep(i))
            .unwrap_or(n - 1)
            .min(n.saturating_sub(self.min_len));
        // A loop that vectorizes first; the frontier's exception only if it may matter.
        let all_within = marks_seq[first_kept..n - 1]
            .iter()
            .zip(&marks_ack[first_kept..n - 1])
            .fold(true, |all, (&s, &a)| {
                all & (seq_diff(to_seq, s) <= w) & (seq_diff(to_ack, a) <= w)
            });
        let rest_kept = all_within || (frontier.is_some() && (first_kept..n - 1).all(keep));
        if rest_kept {
            self.columns.start += first_kept;
            if first_kept > 0 {
                self.columns.removed();
            }
        } else {
            self.columns.retain_within(to_seq, to_ack, w, frontier);
        }
    }

    /// Whether a packet falls behind the window: older than every entry, in sequence number or
    /// in acknowledgment number (draft section 7.1.2 a).
    pub fn is_behind(&self, fields: &Fields) -> bool {
        let c = &self.columns;
        !self.is_empty()
            && (c.seq[c.start..].iter().all(|&g| seq_lt(fields.seq, g))
                || c.ack[c.start..].iter().all(|&g| seq_lt(fields.ack, g)))
    }

    /// Whether a segment with payload at `seq` retransmits one the window holds as sent
    /// UNCOMPRESSED_TCP (draft section 7.1.1 a 2). It looks at every entry rather than
    /// stopping at the first match: a loop that vectorizes.
    pub fn retransmits_uncompressed(&self, seq: u32) -> bool {
        let c = &self.columns;
        c.kind[c.start..]
            .iter()
            .zip(&c.seq[c.start..])
            .fold(false, |any, (&k, &g)| {
                any | ((k == HAS_PAYLOAD | UNCOMPRESSED) & (g == seq))
            })
    }

    /// The W-LSB bit count of each field of `f` against every entry.
    pub fn needs(&self, f: &Fields) -> Needs {
        let c = &self.columns;
        let at = c.start;
        // bits_needed depends on the bit length of the largest distance only.
        let r32 = |column: &[u32], v: u32| bits_needed(distance_bits_32(&column[at..], v).into());
        let r16 = |column: &[u16], v: u16| bits_needed(distance_bits_16(&column[at..], v).into());
        Needs {
            win: r16(&c.win, f.win).min(16),
            ack: r32(&c.ack, f.ack).min(32),
            seq: r32(&c.seq, f.seq).min(32),
            ip_id: r16(&c.ip_id, f.ip_id).min(16),
            ts_val: r32(&c.ts_val, f.ts_val).min(32),
            ts_ecr: r32(&c.ts_ecr, f.ts_ecr).min(32),
        }
    }
}

#[cfg(test)]
mod tests;
