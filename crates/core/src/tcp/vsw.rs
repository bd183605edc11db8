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

use taroc_wire::seq::{seq_diff, seq_lt};

use super::packet::Fields;
use crate::encoding::wlsb::bits_needed;

mod block;
mod columns;
mod order;
pub use block::Block;
pub use columns::Extras;
use columns::{half, newer_entries, word, Columns, HAS_PAYLOAD, PREALLOCATED, UNCOMPRESSED};
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
        let (seq, ack) = c.live_seq_ack();
        newer_entries(seq, ack, fields.seq, fields.ack)
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
        let [seq, ack, ts_val, ts_ecr, _, _] = c.words.parts(c.start, c.end);
        let [win, ip_id] = c.halves.parts(c.start, c.end);
        FieldColumns {
            seq,
            ack,
            win,
            ip_id,
            ts_val,
            ts_ecr,
        }
    }

    /// Which of the columns numbered by [`ordered`] are in order, for the live entries of
    /// [`Vsw::columns`].
    #[inline]
    pub fn order(&self) -> &ColumnOrder {
        &self.columns.order
    }

    /// The live entries' extras, oldest first (as [`Vsw::columns`]).
    #[inline(always)]
    pub fn extras(&self) -> X::Live<'_> {
        self.columns
            .extra
            .live(self.columns.start, self.columns.end)
    }

    /// Replaces every live entry's extras by `f` of its fields and its extras so far.
    pub fn refresh_extras(&mut self, mut f: impl FnMut(&Fields, X::Item) -> X::Item) {
        for i in 0..self.len() {
            let fields = self.columns.get(i).fields;
            let at = self.columns.start + i;
            let old = self.columns.extra.get(at);
            self.columns.extra.set(at, f(&fields, old));
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
                let front = |k| c.words.column(k)[c.start];
                let front_is_frontier =
                    front(word::SEQ) == self.max_seq && front(word::ACK) == self.max_ack;
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
        let [seq, ack, _, _, marks_seq, marks_ack] = c.words.parts(c.start, c.end);
        // When entries leave by progress since their push, the frontier stays: it is the
        // decompressor's reference until a newer packet arrives, however far the other number
        // has moved since (an ACK jump must not prune it). By the draft's rule it is at no
        // distance from itself, so it stays anyway.
        let frontier = if self.progress == Progress::SincePush {
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
        // A loop that vectorizes first; the frontier's exception only if it may matter. The
        // newest entry (which stays anyway) is usually within W too: the loop first takes it
        // along, which leaves no odd entries after the vector steps of a window of 8 or 16.
        let within = |from: usize, to: usize| {
            marks_seq[from..to]
                .iter()
                .zip(&marks_ack[from..to])
                .fold(true, |all, (&s, &a)| {
                    all & (seq_diff(to_seq, s) <= w) & (seq_diff(to_ack, a) <= w)
                })
        };
        let rest_kept = within(first_kept, n)
            || within(first_kept, n - 1)
            || (frontier.is_some() && (first_kept..n - 1).all(keep));
        if rest_kept {
            self.columns.start += first_kept;
            if first_kept > 0 {
                self.columns.removed();
            }
        } else {
            self.columns.retain_within(to_seq, to_ack, w, frontier);
        }
    }

    /// Drops the oldest entries while they are older than `(seq, ack)` ([`is_older`]): the
    /// decompressor is known to hold that packet or a newer one as its reference (`taroc-plus`:
    /// a reference receipt naming an entry, [`Vsw::holds`], of this window or of another that
    /// this one samples), so it can no longer hold them. Entries after the first that is not
    /// older stay, older or not. The number of entries dropped.
    pub fn drop_older_than(&mut self, seq: u32, ack: u32) -> usize {
        let (seqs, acks) = self.columns.live_seq_ack();
        let older = seqs
            .iter()
            .zip(acks)
            .take_while(|&(&s, &a)| is_older(s, a, seq, ack))
            .count();
        if older > 0 {
            self.columns.start += older;
            self.columns.removed();
        }
        older
    }

    /// Whether an entry is `(seq, ack)`.
    pub fn holds(&self, seq: u32, ack: u32) -> bool {
        let (seqs, acks) = self.columns.live_seq_ack();
        seqs.iter().zip(acks).any(|(&s, &a)| (s, a) == (seq, ack))
    }

    /// Whether a packet falls behind the window: older than every entry, in sequence number or
    /// in acknowledgment number (draft section 7.1.2 a).
    pub fn is_behind(&self, fields: &Fields) -> bool {
        let c = &self.columns;
        !self.is_empty()
            && (c
                .live_word(word::SEQ)
                .iter()
                .all(|&g| seq_lt(fields.seq, g))
                || c.live_word(word::ACK)
                    .iter()
                    .all(|&g| seq_lt(fields.ack, g)))
    }

    /// Whether a segment with payload at `seq` retransmits one the window holds as sent
    /// UNCOMPRESSED_TCP (draft section 7.1.1 a 2). It looks at every entry rather than
    /// stopping at the first match: a loop that vectorizes.
    pub fn retransmits_uncompressed(&self, seq: u32) -> bool {
        let c = &self.columns;
        c.live_kind()
            .iter()
            .zip(c.live_word(word::SEQ))
            .fold(false, |any, (&k, &g)| {
                any | ((k == HAS_PAYLOAD | UNCOMPRESSED) & (g == seq))
            })
    }

    /// The W-LSB bit count of each field of `f` against every entry.
    pub fn needs(&self, f: &Fields) -> Needs {
        let c = &self.columns;
        // bits_needed depends on the bit length of the largest distance only.
        let r32 = |k, v: u32| bits_needed(distance_bits_32(c.live_word(k), v).into());
        let r16 = |k, v: u16| bits_needed(distance_bits_16(c.live_half(k), v).into());
        Needs {
            win: r16(half::WIN, f.win).min(16),
            ack: r32(word::ACK, f.ack).min(32),
            seq: r32(word::SEQ, f.seq).min(32),
            ip_id: r16(half::IP_ID, f.ip_id).min(16),
            ts_val: r32(word::TS_VAL, f.ts_val).min(32),
            ts_ecr: r32(word::TS_ECR, f.ts_ecr).min(32),
        }
    }
}

#[cfg(test)]
mod tests;
