//! Loss notes ([`format::LOSS_NOTE`]): a decompressor that sees the sequential IP-IDs of its
//! flows skip often tells the compressor that the link loses frames, so that it starts new
//! contexts with more IR frames before a start is lost whole, not only after a context request
//! (which comes after a refusal). Without context requests the note goes to the sibling
//! compressor instead ([`crate::plus::mirror::Note::Lossy`]): the link that loses frames coming
//! in likely loses them going out.

use super::format;

/// A sequential IP-ID that moved on by 2 to this many between two delivered packets of a flow
/// says packets of the flow went missing. Over seeds 1-60, damage on the many-flows capture at
/// 10 / 20 / 30 / 50% random loss went 0.036 / 0.308 / 0.945 / 3.036 -> 0.005 / 0.097 / 0.495 /
/// 2.644 per 1000 with the notes.
const LOSS_GAP_MAX: u16 = 32;

/// Frames delivered between two loss notes, at least: the compressor remembers a note for 4096
/// of its TCP packets.
const NOTE_EVERY: u32 = 1024;

/// A loss note needs this many gaps ([`LOSS_GAP_MAX`]) among [`GAP_WINDOW`] delivered CO frames:
/// a sender's own losses before the link (a queue's drops) skip IP-IDs too, but rarely. With
/// one gap, the shared many-flows capture (its sender's queue dropped some) got a note on a
/// clean link and cost 0.29 octets per packet more; with 4, 0.14; with 8, none.
const NOTE_GAPS: u8 = 8;

/// The delivered CO frames [`NOTE_GAPS`] counts over.
const GAP_WINDOW: u32 = 128;

/// Copies of each loss note, sent back to back: a note crosses the same lossy link, and one
/// lost note left the compressor's starts short for another [`NOTE_EVERY`] frames.
const NOTE_COPIES: u8 = 3;

/// The watch over delivered frames' IP-IDs that decides when a loss note is due.
#[derive(Debug, Clone)]
pub(super) struct LossWatch {
    /// Copies of a loss note still due.
    due: u8,
    /// CO frames delivered since the last loss note.
    since_note: u32,
    /// Gaps seen in the current window of [`GAP_WINDOW`] frames.
    gaps: u8,
    /// Frames the current window has had.
    frames: u32,
    /// A burst note is due ([`LossWatch::burst`]).
    burst_due: bool,
    /// CO frames delivered since the last burst note.
    since_burst: u32,
}

impl LossWatch {
    /// A watch whose first note may come at once.
    pub(super) fn new() -> LossWatch {
        LossWatch {
            due: 0,
            since_note: NOTE_EVERY,
            gaps: 0,
            frames: 0,
            burst_due: false,
            since_burst: NOTE_EVERY,
        }
    }

    /// A CO frame delivered whose IP-ID is `gap` above the highest delivered of its flow, in a
    /// flow whose IP-ID is a sequential counter if `sequential` (or an IR frame of the flow a
    /// context holds: a start or a refresh after a lost one). A packet that came late (below
    /// that highest IP-ID) takes back a gap.
    #[inline]
    pub(super) fn delivered(&mut self, sequential: bool, gap: u16) {
        let lost = sequential && (2..=LOSS_GAP_MAX).contains(&gap);
        let late = sequential && (1..=LOSS_GAP_MAX).contains(&gap.wrapping_neg());
        self.since_note = self.since_note.saturating_add(1);
        self.since_burst = self.since_burst.saturating_add(1);
        self.gaps = self
            .gaps
            .saturating_add(u8::from(lost))
            .saturating_sub(u8::from(late));
        self.frames += 1;
        if self.frames == GAP_WINDOW {
            (self.gaps, self.frames) = (0, 0);
        } else {
            self.check();
        }
    }

    /// A CO frame refused for context damage (not held) without context requests: frames of
    /// its flow went missing, which counts as a gap. (With requests, the refusal's request
    /// tells the compressor as much.) Long bursts skip IP-IDs by more than [`LOSS_GAP_MAX`],
    /// and too seldom to make [`NOTE_GAPS`] gaps, but they leave refused frames behind.
    pub(super) fn refused(&mut self) {
        self.gaps = self.gaps.saturating_add(1);
        self.check();
    }

    /// A CO frame held, or refused on its checksum, without context requests: a burst took a
    /// reference with it. A burst note ([`crate::plus::mirror::Note::Bursty`]) is due, unless
    /// one went within the last [`NOTE_EVERY`] frames delivered.
    pub(super) fn burst(&mut self) {
        if self.since_burst >= NOTE_EVERY {
            (self.burst_due, self.since_burst) = (true, 0);
        }
    }

    /// Whether a burst note is due, taking it.
    pub(super) fn take_burst(&mut self) -> bool {
        core::mem::take(&mut self.burst_due)
    }

    /// A note is due if enough gaps were seen, and none went lately.
    fn check(&mut self) {
        if self.gaps >= NOTE_GAPS && self.since_note >= NOTE_EVERY {
            (self.due, self.since_note) = (NOTE_COPIES, 0);
            (self.gaps, self.frames) = (0, 0);
        }
    }

    /// Writes the due loss note, if any, into `out`.
    pub(super) fn take(&mut self, out: &mut alloc::vec::Vec<u8>) -> bool {
        if self.due == 0 {
            return false;
        }
        self.due -= 1;
        out.clear();
        out.push(format::LOSS_NOTE);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn a_note_needs_eight_gaps_in_a_window_and_comes_thrice_once_per_1024_frames() {
        let mut out = Vec::new();
        // Seven gaps in a window, then the window ends: no note; the eighth in the next: a note.
        let mut w = LossWatch::new();
        for i in 0..GAP_WINDOW {
            w.delivered(true, if i < 7 { 2 } else { 1 });
        }
        assert!(!w.take(&mut out));
        for _ in 0..7 {
            w.delivered(true, 2);
        }
        assert!(!w.take(&mut out));
        w.delivered(true, LOSS_GAP_MAX);
        for _ in 0..NOTE_COPIES {
            assert!(w.take(&mut out) && out == [format::LOSS_NOTE]);
        }
        assert!(!w.take(&mut out));
        // The next one only after 1024 more frames, however many gaps.
        for _ in 0..NOTE_EVERY - 1 {
            w.delivered(true, 2);
        }
        assert!(!w.take(&mut out));
        // (The 1024th frame ends a window of 128; 8 gaps in the next.)
        for _ in 0..9 {
            w.delivered(true, 2);
        }
        assert!(w.take(&mut out));
        // Gaps past the bound, or of other behaviours: none. (Where a note goes, to the far
        // end or to the sibling compressor, is the decompressor's: `tests/starts.rs`.)
        for (sequential, gap) in [(true, LOSS_GAP_MAX + 1), (false, 2)] {
            let mut w = LossWatch::new();
            for _ in 0..100 {
                w.delivered(sequential, gap);
            }
            assert!(!w.take(&mut out));
        }
    }

    #[test]
    fn refusals_past_any_count_of_gaps_overflow_nothing() {
        // Right after a note (none due for 1024 frames), a long outage refuses more frames than
        // a count of gaps holds; then a frame with a gap, and one that came late.
        let mut out = Vec::new();
        let mut w = LossWatch::new();
        for _ in 0..NOTE_GAPS {
            w.refused();
        }
        while w.take(&mut out) {}
        for _ in 0..1000 {
            w.refused();
        }
        w.delivered(true, 2);
        w.delivered(true, 1u16.wrapping_neg());
        assert!(!w.take(&mut out));
    }

    #[test]
    fn a_burst_note_comes_once_per_1024_frames() {
        let mut w = LossWatch::new();
        w.burst();
        assert!(w.take_burst());
        assert!(!w.take_burst());
        for _ in 0..NOTE_EVERY - 1 {
            w.delivered(true, 1);
        }
        w.burst();
        assert!(!w.take_burst());
        w.delivered(true, 1);
        w.burst();
        assert!(w.take_burst());
    }
}
