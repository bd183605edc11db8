//! The state a TCP sender shares with its loss-recovery variant and its timeout response:
//! sequence and window variables, the window arithmetic of RFC 5681 and the SACK scoreboard of
//! RFC 6675 (per segment, from `snd_una`).

use std::collections::VecDeque;

/// Per-segment scoreboard flag: the receiver SACKed it.
pub(super) const SACKED: u8 = 1;
/// Per-segment scoreboard flag: retransmitted during the current loss recovery.
const RETRANSMITTED: u8 = 2;
/// Per-segment scoreboard flag: declared lost by a timeout response (DCLOR step 8).
const LOST: u8 = 4;

/// The SACK scoreboard (RFC 6675 section 3), one entry per outstanding segment from `snd_una`.
#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    pub(super) flags: VecDeque<u8>,
}

impl Scoreboard {
    pub(super) fn index(&self, s: &SenderState, seq: u64) -> Option<usize> {
        let i = (seq.checked_sub(s.snd_una)? / s.mss) as usize;
        (i < self.flags.len()).then_some(i)
    }

    /// Whether the segment at `seq` was SACKed.
    pub fn is_sacked(&self, s: &SenderState, seq: u64) -> bool {
        self.index(s, seq)
            .is_some_and(|i| self.flags[i] & SACKED != 0)
    }

    /// Whether the segment at `seq` was retransmitted in this recovery.
    pub fn is_retransmitted(&self, s: &SenderState, seq: u64) -> bool {
        self.index(s, seq)
            .is_some_and(|i| self.flags[i] & RETRANSMITTED != 0)
    }

    /// RFC 6675 IsLost: at least DupThresh (3) SACKed segments lie above `seq`, or a timeout
    /// response declared it lost ([`SenderState::mark_unsacked_lost`]).
    pub fn is_lost(&self, s: &SenderState, seq: u64) -> bool {
        let Some(i) = self.index(s, seq) else {
            return false;
        };
        if self.flags[i] & LOST != 0 {
            return true;
        }
        self.flags
            .iter()
            .skip(i + 1)
            .filter(|f| **f & SACKED != 0)
            .count()
            >= 3
    }

    /// Segments SACKed so far.
    pub fn sacked_count(&self) -> usize {
        self.flags.iter().filter(|f| **f & SACKED != 0).count()
    }

    /// Forgets SACK and retransmission marks (after a timeout, RFC 6675 section 5.1).
    pub fn clear_marks(&mut self) {
        self.flags.iter_mut().for_each(|f| *f = 0);
    }

    /// Clears the retransmission marks (at the start of a recovery).
    pub fn clear_retransmitted(&mut self) {
        self.flags.iter_mut().for_each(|f| *f &= !RETRANSMITTED);
    }
}

/// The sender's state that variants read and change.
#[derive(Debug, Clone)]
pub struct SenderState {
    /// Segment size in bytes.
    pub mss: u64,
    /// Oldest unacknowledged offset (HighACK).
    pub snd_una: u64,
    /// Next offset to send in window-driven sending.
    pub snd_nxt: u64,
    /// One past the highest offset ever sent (HighData).
    pub snd_max: u64,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes.
    pub ssthresh: u64,
    /// The maximum window, bytes.
    pub max_window: u64,
    /// The receiver's advertised window, bytes.
    pub rwnd: u64,
    /// Consecutive duplicate ACKs.
    pub dupacks: u32,
    /// A segment to retransmit at once, regardless of the window (fast retransmit).
    pub retransmit_now: Option<u64>,
    /// The SACK scoreboard (kept only when the variant uses SACK).
    pub scoreboard: Scoreboard,
    /// Fast retransmits so far.
    pub fast_retransmits: u64,
    /// One past the last byte of the file (`u64::MAX`: unlimited data).
    pub end: u64,
    /// Timeouts the timeout response declared spurious.
    pub detected_spurious: u64,
    /// The initial window IW, bytes.
    pub initial_window: u64,
}

impl SenderState {
    /// FlightSize of RFC 5681: data sent but not yet acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// RFC 5681 equation (4): `max(FlightSize / 2, 2 * SMSS)`.
    pub fn halved_flight(&self) -> u64 {
        (self.flight_size() / 2).max(2 * self.mss)
    }

    /// Slow start or congestion avoidance growth for `acked` newly acknowledged bytes
    /// (RFC 5681 section 3.1: at most one SMSS per ACK in slow start, about one SMSS per RTT
    /// in congestion avoidance).
    pub fn grow(&mut self, acked: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(self.mss);
        } else {
            self.cwnd += (self.mss * self.mss / self.cwnd).max(1);
        }
        // The window never usefully exceeds the maximum window; cap so it does not grow
        // without bound while window-limited.
        self.cwnd = self.cwnd.min(self.max_window + 3 * self.mss);
    }

    /// The usable window: `min(cwnd, max window, receiver window)`.
    pub fn window(&self) -> u64 {
        self.cwnd.min(self.max_window).min(self.rwnd)
    }

    /// Payload bytes of the segment starting at `seq` (short at the end of a file).
    pub fn segment_len(&self, seq: u64) -> u64 {
        self.mss.min(self.end.saturating_sub(seq))
    }

    /// Whether data never sent remains.
    pub fn has_new_data(&self) -> bool {
        self.snd_max < self.end
    }

    /// The next new segment the window allows (advancing `snd_nxt`), if any.
    pub fn next_in_window(&mut self) -> Option<u64> {
        if self.snd_nxt < self.end
            && self.snd_nxt + self.segment_len(self.snd_nxt) <= self.snd_una + self.window()
        {
            let seq = self.snd_nxt;
            self.snd_nxt += self.segment_len(seq);
            Some(seq)
        } else {
            None
        }
    }

    /// The first segment never sent, if the file has one and the receiver's and the maximum
    /// window allow it (advancing `snd_nxt` past it).
    pub fn next_new_segment(&mut self) -> Option<u64> {
        let seq = self.snd_nxt.max(self.snd_max);
        let limit = self.snd_una + self.max_window.min(self.rwnd);
        (seq < self.end && seq + self.segment_len(seq) <= limit).then(|| {
            self.snd_nxt = seq + self.segment_len(seq);
            seq
        })
    }

    /// RFC 6675 SetPipe: segments believed in the network, in bytes.
    pub fn pipe(&self) -> u64 {
        let sb = &self.scoreboard;
        let mut pipe = 0;
        let mut seq = self.snd_una;
        while seq < self.snd_max {
            if !sb.is_sacked(self, seq) {
                if !sb.is_lost(self, seq) {
                    pipe += self.mss;
                }
                if sb.is_retransmitted(self, seq) {
                    pipe += self.mss;
                }
            }
            seq += self.mss;
        }
        pipe
    }

    /// Declares every outstanding segment below `below` that is not SACKed lost (DCLOR step 8).
    pub fn mark_unsacked_lost(&mut self, below: u64) {
        let sb = &self.scoreboard;
        let n = sb.index(self, below).unwrap_or(sb.flags.len());
        for f in self.scoreboard.flags.iter_mut().take(n) {
            if *f & SACKED == 0 {
                *f |= LOST;
            }
        }
    }

    pub(super) fn mark_retransmitted(&mut self, seq: u64) {
        if let Some(i) = self.scoreboard.index(self, seq) {
            self.scoreboard.flags[i] |= RETRANSMITTED;
        }
    }
}
