//! The window's entries as a structure of arrays: one column per field, live entries at the
//! back of each, and the moves that keep the columns in step.

use taroc_wire::seq::seq_diff;

use super::block::Block;
use super::{is_older, ordered, ColumnOrder, Entry, Space};
use crate::tcp::packet::Fields;

/// The entries, one column per field (a structure of arrays, so that the scans every packet
/// makes are simple loops over contiguous memory), the columns of one type in one [`Block`].
/// Every column has the same fixed length, its *room*, and the live entries, oldest first, are
/// `start..end` of every column: a push writes at `end` (no column keeps a length of its own),
/// entries leave the front by moving `start`, and when a push finds no room the live entries
/// move to the front (if the dead prefix is at least as long as they are) or the room doubles,
/// so each push costs O(1) amortized.
#[derive(Debug, Clone, Default)]
pub(super) struct Columns<X> {
    pub(super) start: usize,
    pub(super) end: usize,
    /// The 32-bit columns, numbered by [`word`].
    pub(super) words: Block<u32, 6>,
    /// The 16-bit columns, numbered by [`half`].
    pub(super) halves: Block<u16, 2>,
    /// `HAS_PAYLOAD | UNCOMPRESSED` bits.
    pub(super) kind: Block<u8, 1>,
    /// What the window's user keeps per entry ([`Vsw::push_with`](super::Vsw::push_with)).
    pub(super) extra: X,
    /// Which of the W-LSB columns are in order ([`ordered`]).
    pub(super) order: ColumnOrder,
}

/// The columns of [`Columns::words`].
pub(super) mod word {
    /// Sequence numbers.
    pub const SEQ: usize = 0;
    /// Acknowledgment numbers.
    pub const ACK: usize = 1;
    /// Timestamp values.
    pub const TS_VAL: usize = 2;
    /// Timestamp echo replies.
    pub const TS_ECR: usize = 3;
    /// Where each entry's progress is measured from ([`Progress`](super::super::Progress)),
    /// in sequence numbers.
    pub const MARK_SEQ: usize = 4;
    /// The same, in acknowledgment numbers.
    pub const MARK_ACK: usize = 5;
}

/// The columns of [`Columns::halves`].
pub(super) mod half {
    /// Windows.
    pub const WIN: usize = 0;
    /// IP-IDs.
    pub const IP_ID: usize = 1;
}

/// Values a window's user keeps beside each entry ([`Vsw::push_with`](super::Vsw::push_with)), as more columns of
/// the window's structure of arrays: the window moves, drops and truncates them with its own.
pub trait Extras: Clone + Default + core::fmt::Debug {
    /// One entry's values.
    type Item: Copy;
    /// The live entries' values, oldest first ([`Vsw::extras`](super::Vsw::extras)).
    type Live<'a>
    where
        Self: 'a;
    /// Writes an entry's values at `at`, after the live entries `from..at` (no column grows:
    /// [`Extras::resize`] made the room).
    fn push(&mut self, item: Self::Item, from: usize, at: usize);
    /// Live entries left (from the front or the middle).
    fn removed(&mut self) {}
    /// Entry `i`'s values.
    fn get(&self, i: usize) -> Self::Item;
    /// Sets entry `i`'s values.
    fn set(&mut self, i: usize, item: Self::Item);
    /// Copies entry `from`'s values over entry `to`'s.
    fn copy(&mut self, from: usize, to: usize);
    /// Moves entries `from..to` to the front of every column.
    fn compact(&mut self, from: usize, to: usize);
    /// Makes every column `n` entries long (never shorter than it is).
    fn resize(&mut self, n: usize);
    /// The values of entries `from..to`.
    fn live(&self, from: usize, to: usize) -> Self::Live<'_>;
}

/// No extras (the faithful `taroc`).
impl Extras for () {
    type Item = ();
    type Live<'a> = ();
    fn push(&mut self, _: (), _: usize, _: usize) {}
    fn get(&self, _: usize) {}
    fn set(&mut self, _: usize, _: ()) {}
    fn copy(&mut self, _: usize, _: usize) {}
    fn compact(&mut self, _: usize, _: usize) {}
    fn resize(&mut self, _: usize) {}
    fn live(&self, _: usize, _: usize) {}
}

pub(super) const HAS_PAYLOAD: u8 = 1;
pub(super) const UNCOMPRESSED: u8 = 2;

/// Entries a new window has room for (twice this, with the dead prefix) before its columns
/// grow: a window of up to this many entries allocates once per column.
pub(super) const PREALLOCATED: usize = 32;

impl<X: Extras> Columns<X> {
    /// Empty columns with room for `n` entries.
    pub(super) fn with_capacity(n: usize) -> Columns<X> {
        let mut c = Columns::<X>::default();
        c.resize(n.max(1));
        c.order.reset();
        c
    }

    /// Makes every column `n` entries long.
    fn resize(&mut self, n: usize) {
        self.words.grow(n);
        self.halves.grow(n);
        self.kind.grow(n);
        self.extra.resize(n);
    }

    /// The live part of 32-bit column `k` ([`word`]).
    #[inline(always)]
    pub(super) fn live_word(&self, k: usize) -> &[u32] {
        self.words.part(k, self.start, self.end)
    }

    /// The live sequence and acknowledgment numbers.
    #[inline(always)]
    pub(super) fn live_seq_ack(&self) -> (&[u32], &[u32]) {
        let [seq, ack, ..] = self.words.parts(self.start, self.end);
        (seq, ack)
    }

    /// The live part of 16-bit column `k` ([`half`]).
    #[inline(always)]
    pub(super) fn live_half(&self, k: usize) -> &[u16] {
        self.halves.part(k, self.start, self.end)
    }

    /// The live part of the kinds.
    #[inline(always)]
    pub(super) fn live_kind(&self) -> &[u8] {
        self.kind.part(0, self.start, self.end)
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }

    pub(super) fn clear(&mut self) {
        self.extra.removed();
        self.order.reset();
        (self.start, self.end) = (0, 0);
    }

    /// Room for one more entry at `end`: the live entries moved to the front if the dead prefix
    /// is at least as long, else every column twice as long.
    #[cold]
    fn make_room(&mut self) {
        let (start, end) = (self.start, self.end);
        if start >= end - start {
            self.words.copy_within(start, end, 0);
            self.halves.copy_within(start, end, 0);
            self.kind.copy_within(start, end, 0);
            self.extra.compact(start, end);
            (self.start, self.end) = (0, end - start);
        } else {
            self.resize(2 * self.words.room());
        }
    }

    /// Live entries left.
    pub(super) fn removed(&mut self) {
        self.order.removed();
        self.extra.removed();
    }

    pub(super) fn push(&mut self, e: &Entry, mark_seq: u32, mark_ack: u32, extra: X::Item) {
        if self.end == self.words.room() {
            self.make_room();
        }
        let (at, i) = (self.start, self.end);
        let f = &e.fields;
        let [seq, ack, ts_val, ts_ecr, marks_seq, marks_ack] = self.words.columns_mut();
        let [win, ip_id] = self.halves.columns_mut();
        if at == i {
            self.order.reset();
        } else {
            let last = i - 1;
            let w32 = |bit, column: &[u32], value| {
                Space::Wrap32.breaks(bit, column[at], column[last], value)
            };
            self.order.pushed(
                w32(ordered::SEQ, seq, f.seq)
                    | w32(ordered::ACK, ack, f.ack)
                    | w32(ordered::TS_VAL, ts_val, f.ts_val)
                    | w32(ordered::TS_ECR, ts_ecr, f.ts_ecr)
                    | Space::Wrap16.breaks(
                        ordered::WIN,
                        win[at].into(),
                        win[last].into(),
                        f.win.into(),
                    ),
            );
        }
        seq[i] = f.seq;
        ack[i] = f.ack;
        ts_val[i] = f.ts_val;
        ts_ecr[i] = f.ts_ecr;
        marks_seq[i] = mark_seq;
        marks_ack[i] = mark_ack;
        win[i] = f.win;
        ip_id[i] = f.ip_id;
        let [kind] = self.kind.columns_mut();
        kind[i] = if e.has_payload { HAS_PAYLOAD } else { 0 }
            | if e.uncompressed { UNCOMPRESSED } else { 0 };
        self.extra.push(extra, at, i);
        self.end = i + 1;
    }

    /// The entry at live index `i`.
    pub(super) fn get(&self, i: usize) -> Entry {
        let j = self.start + i;
        let (w, h) = (|k| self.words.column(k)[j], |k| self.halves.column(k)[j]);
        let kind = self.kind.column(0)[j];
        Entry {
            fields: Fields {
                seq: w(word::SEQ),
                ack: w(word::ACK),
                win: h(half::WIN),
                ip_id: h(half::IP_ID),
                ts_val: w(word::TS_VAL),
                ts_ecr: w(word::TS_ECR),
            },
            has_payload: kind & HAS_PAYLOAD != 0,
            uncompressed: kind & UNCOMPRESSED != 0,
        }
    }

    /// Removes live entry `i`: the entries before it move up one place.
    #[inline]
    pub(super) fn remove_at(&mut self, i: usize) {
        for j in (self.start..self.start + i).rev() {
            self.copy(j, j + 1);
        }
        self.start += 1;
        self.removed();
    }

    /// Copies entry `from` of every column, extras too, over entry `to`.
    fn copy(&mut self, from: usize, to: usize) {
        self.words.copy(from, to);
        self.halves.copy(from, to);
        self.kind.copy(from, to);
        self.extra.copy(from, to);
    }

    /// The oldest live entry that is neither the frontier `(max_seq, max_ack)` nor among the
    /// `protect` newest entries in sequence order ([`is_older`]); entry 0 if there is none.
    #[inline]
    pub(super) fn first_unprotected(&self, protect: usize, max_seq: u32, max_ack: u32) -> usize {
        let (seq, ack) = self.live_seq_ack();
        // Sequence numbers in order: the oldest entry has the `protect` newest after it in
        // sequence order if the protect-th from the end has a higher sequence number; or, all
        // sequence numbers equal (a flow of pure ACKs), if it has a higher acknowledgment
        // number and those are in order.
        let n = seq.len();
        let sorted = |bit, column: &[u32]| self.order.sorted_32(bit, column);
        let rises = |column: &[u32]| column[n - protect] != column[0];
        if n > protect
            && sorted(ordered::SEQ, seq)
            && (rises(seq) || (seq[n - 1] == seq[0] && sorted(ordered::ACK, ack) && rises(ack)))
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
    pub(super) fn first_unprotected_scan(
        &self,
        protect: usize,
        max_seq: u32,
        max_ack: u32,
    ) -> usize {
        let (seq, ack) = self.live_seq_ack();
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
    pub(super) fn retain_within(&mut self, to_seq: u32, to_ack: u32, w: i32, also: Option<usize>) {
        let (n, mut to) = (self.len(), self.start);
        for i in 0..n {
            let from = self.start + i;
            let mark = |k| self.words.column(k)[from];
            let keep = i == n - 1
                || Some(i) == also
                || (seq_diff(to_seq, mark(word::MARK_SEQ)) <= w
                    && seq_diff(to_ack, mark(word::MARK_ACK)) <= w);
            if keep {
                if from != to {
                    self.copy(from, to);
                }
                to += 1;
            }
        }
        self.end = to;
        self.removed();
    }
}

/// How many of the entries `(seq, ack)` are newer than `(s, a)` in the decompressor's order
/// ([`is_older`]), counted without branches (a loop that vectorizes).
pub(super) fn newer_entries(seq: &[u32], ack: &[u32], s: u32, a: u32) -> usize {
    seq.iter()
        .zip(ack)
        .map(|(&s2, &a2)| usize::from(is_older(s, a, s2, a2)))
        .sum()
}
