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

use alloc::collections::VecDeque;

use taroc_wire::seq::{seq_diff, seq_lt};

use super::packet::Fields;
use crate::encoding::wlsb::{bits_needed, signed_distance};

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
pub fn is_older(seq: u32, ack: u32, ref_seq: u32, ref_ack: u32) -> bool {
    seq_lt(seq, ref_seq) || (seq == ref_seq && seq_lt(ack, ref_ack))
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
    SincePush,
}

/// An entry with the point in sequence and acknowledgment space its progress is measured from.
#[derive(Debug, Clone, Copy)]
struct Slot {
    entry: Entry,
    mark_seq: u32,
    mark_ack: u32,
}

/// The sliding window.
#[derive(Debug, Clone)]
pub struct Vsw {
    entries: VecDeque<Slot>,
    cap: usize,
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
        Vsw {
            entries: VecDeque::new(),
            cap: cap.max(2),
            progress,
            max_seq: 0,
            max_ack: 0,
            high_seq: 0,
            high_ack: 0,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().map(|s| &s.entry)
    }

    /// Adds a packet just sent.
    pub fn push(&mut self, entry: Entry) {
        let (seq, ack) = (entry.fields.seq, entry.fields.ack);
        // An UNCOMPRESSED_TCP always becomes the decompressor's reference (draft 7.2 b), even when
        // it is older: it becomes the frontier.
        if self.entries.is_empty()
            || entry.uncompressed
            || !is_older(seq, ack, self.max_seq, self.max_ack)
        {
            self.max_seq = seq;
            self.max_ack = ack;
        }
        if self.entries.is_empty() {
            (self.high_seq, self.high_ack) = (seq, ack);
        } else {
            if seq_lt(self.high_seq, seq) {
                self.high_seq = seq;
            }
            if seq_lt(self.high_ack, ack) {
                self.high_ack = ack;
            }
        }
        if self.entries.len() == self.cap {
            let frontier =
                |s: &Slot| s.entry.fields.seq == self.max_seq && s.entry.fields.ack == self.max_ack;
            let victim =
                usize::from(self.entries.front().is_some_and(frontier) && self.entries.len() > 1);
            self.entries.remove(victim);
        }
        let (mark_seq, mark_ack) = match self.progress {
            Progress::OfFields => (seq, ack),
            Progress::SincePush => (self.high_seq, self.high_ack),
        };
        self.entries.push_back(Slot {
            entry,
            mark_seq,
            mark_ack,
        });
    }

    /// Removes every entry the stream has left more than `w` bytes behind, in sequence or in
    /// acknowledgment numbers, as [`Progress`] measures it. The newest entry always stays.
    pub fn prune(&mut self, w: u32) {
        let (to_seq, to_ack) = match self.progress {
            Progress::OfFields => (self.max_seq, self.max_ack),
            Progress::SincePush => (self.high_seq, self.high_ack),
        };
        let w = i64::from(w);
        let newest = self.entries.len().saturating_sub(1);
        let mut index = 0;
        self.entries.retain(|s| {
            let keep = index == newest
                || (i64::from(seq_diff(to_seq, s.mark_seq)) <= w
                    && i64::from(seq_diff(to_ack, s.mark_ack)) <= w);
            index += 1;
            keep
        });
    }

    /// Whether a packet falls behind the window: older than every entry, in sequence number or
    /// in acknowledgment number (draft section 7.1.2 a).
    pub fn is_behind(&self, fields: &Fields) -> bool {
        !self.entries.is_empty()
            && (self
                .entries
                .iter()
                .all(|s| seq_lt(fields.seq, s.entry.fields.seq))
                || self
                    .entries
                    .iter()
                    .all(|s| seq_lt(fields.ack, s.entry.fields.ack)))
    }

    /// Whether a segment with payload at `seq` retransmits one the window holds as sent
    /// UNCOMPRESSED_TCP (draft section 7.1.1 a 2).
    pub fn retransmits_uncompressed(&self, seq: u32) -> bool {
        self.entries()
            .any(|e| e.uncompressed && e.has_payload && e.fields.seq == seq)
    }

    /// The W-LSB bit count of each field of `f` against every entry.
    pub fn needs(&self, f: &Fields) -> Needs {
        let mut r = [0u64; 6];
        for e in self.entries() {
            let g = &e.fields;
            let d = [
                signed_distance(f.win.into(), g.win.into(), 16),
                signed_distance(f.ack, g.ack, 32),
                signed_distance(f.seq, g.seq, 32),
                signed_distance(f.ip_id.into(), g.ip_id.into(), 16),
                signed_distance(f.ts_val, g.ts_val, 32),
                signed_distance(f.ts_ecr, g.ts_ecr, 32),
            ];
            for (ri, di) in r.iter_mut().zip(d) {
                *ri = (*ri).max(di.unsigned_abs());
            }
        }
        let k = r.map(bits_needed);
        Needs {
            win: k[0].min(16),
            ack: k[1].min(32),
            seq: k[2].min(32),
            ip_id: k[3].min(16),
            ts_val: k[4].min(32),
            ts_ecr: k[5].min(32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seq: u32, ack: u32) -> Entry {
        Entry {
            fields: Fields {
                seq,
                ack,
                ..Fields::default()
            },
            has_payload: true,
            uncompressed: false,
        }
    }

    #[test]
    fn needs_follow_appendix_a() {
        let mut v = Vsw::new(16, Progress::OfFields);
        v.push(entry(279, 7));
        v.push(entry(283, 7));
        let n = v.needs(&Fields {
            seq: 284,
            ack: 7,
            ..Fields::default()
        });
        assert_eq!((n.seq, n.ack, n.win), (4, 0, 0));
        let n = v.needs(&Fields {
            seq: 290,
            ack: 7,
            ..Fields::default()
        });
        assert_eq!(n.seq, 5);
    }

    #[test]
    fn prune_by_progress_in_either_number_space() {
        let mut v = Vsw::new(16, Progress::OfFields);
        for i in 0..10 {
            v.push(entry(i * 1000, 0));
        }
        v.prune(4000);
        let seqs: alloc::vec::Vec<u32> = v.entries().map(|e| e.fields.seq).collect();
        assert_eq!(seqs, [5000, 6000, 7000, 8000, 9000]);
        let mut a = Vsw::new(16, Progress::OfFields);
        for i in 0..10 {
            a.push(entry(0, i * 1000));
        }
        a.prune(0);
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn cap_bounds_memory() {
        let mut v = Vsw::new(4, Progress::OfFields);
        for i in 0..100 {
            v.push(entry(i, 0));
        }
        assert_eq!(v.len(), 4);
        assert_eq!(v.entries().next().unwrap().fields.seq, 96);
        assert_eq!(Vsw::new(0, Progress::OfFields).cap, 2);
    }

    #[test]
    fn a_retransmission_with_a_newer_ack_does_not_prune_the_frontier() {
        let mut v = Vsw::new(16, Progress::OfFields);
        v.push(entry(50_000, 1000)); // the frontier: the decompressor's likely reference
        v.push(entry(10_000, 90_000)); // retransmission of a host that also receives data
        v.prune(20_000);
        assert_eq!(
            v.len(),
            2,
            "the ACK jump of a packet behind the frontier moves nothing"
        );
        // The cap never evicts the frontier entry either.
        let mut c = Vsw::new(2, Progress::OfFields);
        c.push(entry(50_000, 1000));
        c.push(entry(10_000, 2000));
        c.push(entry(10_100, 2000));
        let seqs: alloc::vec::Vec<u32> = c.entries().map(|e| e.fields.seq).collect();
        assert_eq!(seqs, [50_000, 10_100]);
    }

    #[test]
    fn an_older_uncompressed_packet_becomes_the_frontier() {
        let mut v = Vsw::new(16, Progress::OfFields);
        v.push(entry(90_000, 1000));
        v.push(Entry {
            uncompressed: true,
            ..entry(10_000, 1000)
        });
        v.prune(20_000);
        assert_eq!(
            v.len(),
            2,
            "both stay: the old frontier is ahead, the new one is the reference"
        );
    }

    #[test]
    fn behind_and_retransmission() {
        let mut v = Vsw::new(16, Progress::OfFields);
        v.push(Entry {
            uncompressed: true,
            ..entry(1000, 50)
        });
        v.push(entry(2000, 50));
        assert!(v.is_behind(&Fields {
            seq: 999,
            ack: 50,
            ..Fields::default()
        }));
        assert!(v.is_behind(&Fields {
            seq: 3000,
            ack: 49,
            ..Fields::default()
        }));
        assert!(!v.is_behind(&Fields {
            seq: 1500,
            ack: 50,
            ..Fields::default()
        }));
        assert!(v.retransmits_uncompressed(1000));
        assert!(!v.retransmits_uncompressed(2000));
    }

    #[test]
    fn progress_since_push_keeps_an_old_packet_for_a_window_of_new_data() {
        for (progress, kept) in [(Progress::OfFields, 2), (Progress::SincePush, 3)] {
            let mut v = Vsw::new(16, progress);
            v.push(entry(50_000, 1000));
            v.push(entry(10_000, 1000)); // a retransmission, 40 000 behind
            v.push(entry(50_500, 1000));
            v.prune(20_000);
            assert_eq!(v.len(), kept, "{progress:?}");
        }
        // Once the stream has sent more than W of new data since, the retransmission leaves.
        let mut v = Vsw::new(16, Progress::SincePush);
        v.push(entry(50_000, 1000));
        v.push(entry(10_000, 1000));
        v.push(entry(70_001, 1000));
        v.prune(20_000);
        let seqs: alloc::vec::Vec<u32> = v.entries().map(|e| e.fields.seq).collect();
        assert_eq!(seqs, [70_001]);
    }
}
