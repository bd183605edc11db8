//! The TCP sender. The common machinery (window, ACK processing, RTT measurement, RFC 6298
//! timer, SACK scoreboard, packet emission) lives here; what a loss-recovery variant does about
//! duplicate and new ACKs lives behind the [`Recovery`] trait, and what the sender does when its
//! retransmission timer expires (and about the ACKs that follow) lives behind the
//! [`TimeoutResponse`] trait (standard, DCLOR, Eifel, F-RTO: [`super::timeout`]), so the two
//! choices are orthogonal and this file names neither.
//!
//! Sequence numbers are kept as 64-bit stream offsets (0 = first data byte) and only turned into
//! 32-bit wire numbers (ISS + 1 + offset) on the wire, so wrap-around needs no care here.
//! The sender sends full segments of `mss` bytes, from unlimited data or from a file of
//! [`SenderConfig::file_bytes`] bytes (whose last segment may be short); segments start at
//! multiples of `mss` and the receiver acknowledges segment boundaries, so the scoreboard works
//! per segment.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use taroc_wire::tcp::flags;

use super::recovery::Recovery;
use super::rto::{RtoConfig, RtoEstimator};
use super::segment::{self, Endpoints, Parsed, SegmentSpec};
use super::timeout::{AckInfo, Standard, TimeoutEvent, TimeoutResponse};
use super::{ts_clock, Outbox};
use crate::event::{Time, MILLISECOND};
use crate::thin::{Thinned, TRACE_POINTS};

/// Settings of a sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SenderConfig {
    /// Payload bytes per segment.
    pub mss: u32,
    /// Largest window in segments (NS-2's `window_`, default 20).
    pub max_window_segments: u32,
    /// Initial congestion window in segments (NS-2's `windowInit_`, default 1).
    pub initial_window_segments: u32,
    /// Initial slow-start threshold in segments (default: effectively unlimited).
    pub initial_ssthresh_segments: u32,
    /// Send the timestamps option (RFC 7323) and measure RTT with it.
    pub timestamps: bool,
    /// The retransmission timer.
    pub rto: RtoConfig,
    /// Bytes of the file to send (`None`: unlimited data).
    pub file_bytes: Option<u64>,
}

impl Default for SenderConfig {
    fn default() -> SenderConfig {
        SenderConfig {
            mss: 536,
            max_window_segments: 20,
            initial_window_segments: 1,
            initial_ssthresh_segments: 1 << 20,
            timestamps: false,
            rto: RtoConfig::default(),
            file_bytes: None,
        }
    }
}

/// Per-segment scoreboard flag: the receiver SACKed it.
const SACKED: u8 = 1;
/// Per-segment scoreboard flag: retransmitted during the current loss recovery.
const RETRANSMITTED: u8 = 2;
/// Per-segment scoreboard flag: declared lost by a timeout response (DCLOR step 8).
const LOST: u8 = 4;

/// The SACK scoreboard (RFC 6675 section 3), one entry per outstanding segment from `snd_una`.
#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    flags: VecDeque<u8>,
}

impl Scoreboard {
    fn index(&self, s: &SenderState, seq: u64) -> Option<usize> {
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

    fn mark_retransmitted(&mut self, seq: u64) {
        if let Some(i) = self.scoreboard.index(self, seq) {
            self.scoreboard.flags[i] |= RETRANSMITTED;
        }
    }
}

/// Counters of a sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SenderStats {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmissions: u64,
    /// Timer expiries.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// ACKs received (verified).
    pub acks_received: u64,
    /// Packets refused for a bad checksum (e.g. wrongly rebuilt by VJ).
    pub bad_checksums: u64,
    /// Timeouts the timeout response declared spurious.
    pub detected_spurious: u64,
}

/// A point of the congestion-window trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CwndPoint {
    /// Time, ns.
    pub time_ns: Time,
    /// cwnd, bytes.
    pub cwnd: u64,
    /// ssthresh, bytes.
    pub ssthresh: u64,
}

/// The bulk-data TCP sender.
#[derive(Debug)]
pub struct TcpSender {
    config: SenderConfig,
    ep: Endpoints,
    iss: u32,
    /// The state variants work on.
    pub state: SenderState,
    recovery: Box<dyn Recovery>,
    response: Box<dyn TimeoutResponse>,
    rto: RtoEstimator,
    timer: Option<Time>,
    timed: Option<(u64, Time)>,
    ip_id: u16,
    ts_recent: u32,
    stats: SenderStats,
    trace: Option<(Thinned<CwndPoint>, Time)>,
}

impl TcpSender {
    /// A sender from `ep.src` to `ep.dst` whose first data byte has wire number `iss + 1`,
    /// recovering from losses with `recovery` (a variant, e.g. [`super::variant::TcpVariant::recovery`])
    /// and answering timeouts the standard way (see [`TcpSender::with_response`]).
    pub fn new(
        config: SenderConfig,
        recovery: Box<dyn Recovery>,
        ep: Endpoints,
        iss: u32,
    ) -> TcpSender {
        let mss = u64::from(config.mss.max(1));
        let state = SenderState {
            mss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: mss * u64::from(config.initial_window_segments.max(1)),
            ssthresh: mss * u64::from(config.initial_ssthresh_segments.max(2)),
            max_window: mss * u64::from(config.max_window_segments.max(1)),
            rwnd: u64::MAX,
            dupacks: 0,
            retransmit_now: None,
            scoreboard: Scoreboard::default(),
            fast_retransmits: 0,
            end: config.file_bytes.unwrap_or(u64::MAX),
            detected_spurious: 0,
            initial_window: mss * u64::from(config.initial_window_segments.max(1)),
        };
        TcpSender {
            recovery,
            response: Box::new(Standard),
            rto: RtoEstimator::new(config.rto),
            config,
            ep,
            iss,
            state,
            timer: None,
            timed: None,
            ip_id: 0,
            ts_recent: 0,
            stats: SenderStats::default(),
            trace: None,
        }
    }

    /// The same sender answering timeouts with `response` (e.g.
    /// [`super::timeout::ResponseKind::response`]).
    pub fn with_response(mut self, response: Box<dyn TimeoutResponse>) -> TcpSender {
        self.response = response;
        self
    }

    /// The timeout response's name.
    pub fn response_name(&self) -> &'static str {
        self.response.name()
    }

    /// Whether every byte of the file has been acknowledged (never, with unlimited data).
    pub fn is_complete(&self) -> bool {
        self.state.snd_una >= self.state.end
    }

    /// Records (time, cwnd, ssthresh) at every change from now on until `until`, in at most
    /// [`TRACE_POINTS`] points (thinned evenly on long runs, see [`Thinned`]).
    pub fn enable_trace(&mut self, until: Time) {
        self.trace = Some((Thinned::new(TRACE_POINTS), until));
    }

    /// The recorded trace.
    pub fn trace(&self) -> &[CwndPoint] {
        self.trace.as_ref().map_or(&[], |(t, _)| t.points())
    }

    /// Counters.
    pub fn stats(&self) -> SenderStats {
        let mut s = self.stats;
        s.fast_retransmits = self.state.fast_retransmits;
        s.detected_spurious = self.state.detected_spurious;
        s
    }

    /// The connection's endpoints (as this sender sends).
    pub fn endpoints(&self) -> Endpoints {
        self.ep
    }

    /// The variant's name.
    pub fn variant_name(&self) -> &'static str {
        self.recovery.name()
    }

    /// The current RTO.
    pub fn rto(&self) -> Time {
        self.rto.rto()
    }

    /// When the retransmission timer expires, if it runs.
    pub fn deadline(&self) -> Option<Time> {
        self.timer
    }

    /// Starts sending.
    pub fn start(&mut self, now: Time, out: &mut Outbox) {
        self.record(now);
        self.pump(now, out);
    }

    fn record(&mut self, now: Time) {
        let (cwnd, ssthresh) = (self.state.cwnd, self.state.ssthresh);
        if let Some((trace, until)) = &mut self.trace {
            if now <= *until
                && trace
                    .last()
                    .is_none_or(|p| p.cwnd != cwnd || p.ssthresh != ssthresh)
            {
                trace.push(CwndPoint {
                    time_ns: now,
                    cwnd,
                    ssthresh,
                });
            }
        }
    }

    fn wire_seq(&self, offset: u64) -> u32 {
        self.iss.wrapping_add(1).wrapping_add(offset as u32)
    }

    fn unwrap_ack(&self, ack: u32) -> Option<u64> {
        let delta = ack.wrapping_sub(self.wire_seq(self.state.snd_una)) as i32;
        let abs = self.state.snd_una as i64 + i64::from(delta);
        u64::try_from(abs).ok()
    }

    fn transmit(&mut self, seq: u64, now: Time, out: &mut Outbox) {
        let s = &mut self.state;
        let len = s.segment_len(seq);
        let retransmission = seq < s.snd_max;
        if retransmission {
            self.stats.retransmissions += 1;
            if self.recovery.uses_sack() {
                s.mark_retransmitted(seq);
            }
            if self.timed.is_some_and(|(end, _)| seq < end) {
                self.timed = None; // Karn: never time a retransmitted segment
            }
        } else {
            while s.snd_max < seq + len {
                s.snd_max = (s.snd_max + s.mss).min(s.end);
                s.scoreboard.flags.push_back(0);
            }
            if self.timed.is_none() && !self.config.timestamps {
                self.timed = Some((seq + len, now));
            }
        }
        self.stats.segments_sent += 1;
        let mut buf = out.buffer();
        let spec = SegmentSpec {
            seq: self.wire_seq(seq),
            ack: 1,
            flags: flags::ACK,
            window: 65535,
            timestamps: self
                .config
                .timestamps
                .then(|| (ts_clock(now), self.ts_recent)),
            sack: &[],
            payload_len: len as usize,
            payload_offset: seq,
        };
        segment::build(&self.ep, self.ip_id, &spec, &mut buf);
        self.ip_id = self.ip_id.wrapping_add(1);
        out.packets.push(buf);
        // RFC 6298 (5.1): start the timer when sending data if it is not running.
        if self.timer.is_none() {
            self.timer = Some(now + self.rto.rto());
        }
    }

    fn pump(&mut self, now: Time, out: &mut Outbox) {
        if let Some(seq) = self.state.retransmit_now.take() {
            self.transmit(seq, now, out);
        }
        // Bounded, so that no variant can loop forever.
        for _ in 0..4096 {
            let next = match self.response.next_segment(&mut self.state) {
                Some(choice) => choice,
                None => self.recovery.next_segment(&mut self.state),
            };
            match next {
                Some(seq) => self.transmit(seq, now, out),
                None => break,
            }
        }
        self.record(now);
    }

    /// Handles a packet addressed to this sender (an ACK). Packets that fail verification are
    /// counted and dropped.
    pub fn on_packet(&mut self, now: Time, packet: &[u8], out: &mut Outbox) {
        let p = match segment::parse(packet) {
            Ok(p) => p,
            Err(_) => {
                self.stats.bad_checksums += 1;
                return;
            }
        };
        self.on_segment(now, &p, out);
    }

    /// Handles a verified segment.
    pub fn on_segment(&mut self, now: Time, p: &Parsed, out: &mut Outbox) {
        if p.flags & flags::ACK == 0 {
            return;
        }
        let Some(ack) = self.unwrap_ack(p.ack) else {
            return;
        };
        if ack > self.state.snd_max {
            return; // acknowledges data never sent
        }
        self.stats.acks_received += 1;
        if let Some((val, _)) = p.timestamps {
            self.ts_recent = val;
        }
        let (newly_sacked, highest_sack) = if self.recovery.uses_sack() {
            self.apply_sack(p, ack)
        } else {
            (0, None)
        };
        let s = &mut self.state;
        s.rwnd = u64::from(p.window).max(s.mss);
        let info = AckInfo {
            ack,
            prior_una: s.snd_una,
            new: ack > s.snd_una,
            duplicate: ack == s.snd_una && s.snd_max > s.snd_una && p.payload_len == 0,
            ts_ecr: p.timestamps.map(|(_, ecr)| ecr),
            now_ts: ts_clock(now),
            dsack: self.has_dsack(p, ack),
            newly_sacked,
            highest_sack,
        };
        let verdict = self.response.on_ack(&mut self.state, &mut self.rto, &info);
        let s = &mut self.state;
        if info.new {
            let acked = ack - s.snd_una;
            let segments = (ack.div_ceil(s.mss) - s.snd_una.div_ceil(s.mss)) as usize;
            for _ in 0..segments.min(s.scoreboard.flags.len()) {
                s.scoreboard.flags.pop_front();
            }
            s.snd_una = ack;
            if s.snd_nxt < s.snd_una {
                s.snd_nxt = s.snd_una;
            }
            s.dupacks = 0;
            // RTT sample: timestamps echo, or the one timed segment (Karn).
            if !verdict.sample_rtt {
                self.timed = self.timed.filter(|&(end, _)| ack < end);
            } else if self.config.timestamps {
                if let Some((_, ecr)) = p.timestamps {
                    let rtt = ts_clock(now).wrapping_sub(ecr);
                    self.rto.sample(u64::from(rtt) * MILLISECOND);
                }
            } else if let Some((end, sent)) = self.timed {
                if ack >= end {
                    self.rto.sample(now - sent);
                    self.timed = None;
                }
            }
            if verdict.to_recovery {
                self.recovery.on_new_ack(&mut self.state, acked);
            }
            // RFC 6298 (5.2), (5.3).
            self.timer = if self.state.snd_una >= self.state.snd_max {
                None
            } else {
                Some(now + self.rto.rto())
            };
        } else if info.duplicate && verdict.to_recovery {
            s.dupacks += 1;
            self.recovery.on_dup_ack(&mut self.state);
        }
        if self.state.retransmit_now.is_some() {
            // A fast retransmit restarts the timer, so the retransmission gets a full RTO.
            self.timer = Some(now + self.rto.rto());
        }
        self.pump(now, out);
    }

    /// Whether the ACK carries a D-SACK block (RFC 2883 section 4: the first block lies below
    /// the cumulative ACK, or within the second block).
    fn has_dsack(&self, p: &Parsed, ack: u64) -> bool {
        let blocks = p.sack.as_slice();
        let Some(&(l, r)) = blocks.first() else {
            return false;
        };
        let (Some(l), Some(r)) = (self.unwrap_ack(l), self.unwrap_ack(r)) else {
            return false;
        };
        if r <= ack {
            return true;
        }
        blocks.get(1).is_some_and(|&(l2, r2)| {
            matches!((self.unwrap_ack(l2), self.unwrap_ack(r2)), (Some(l2), Some(r2)) if l2 <= l && r <= r2)
        })
    }

    /// Marks the SACKed segments; returns how many were newly SACKed and the highest right edge
    /// of a block above the cumulative ACK.
    fn apply_sack(&mut self, p: &Parsed, ack: u64) -> (u32, Option<u64>) {
        let mut newly = 0;
        let mut highest = None;
        for &(l, r) in p.sack.as_slice() {
            let (Some(l), Some(r)) = (self.unwrap_ack(l), self.unwrap_ack(r)) else {
                continue;
            };
            let s = &mut self.state;
            if r <= l || r > s.snd_max || l < ack {
                continue;
            }
            highest = highest.max(Some(r));
            let mut seq = l.max(s.snd_una);
            while seq + s.segment_len(seq) <= r && seq < r {
                if let Some(i) = s.scoreboard.index(s, seq) {
                    if s.scoreboard.flags[i] & SACKED == 0 {
                        newly += 1;
                    }
                    s.scoreboard.flags[i] |= SACKED;
                }
                seq += s.mss;
            }
        }
        (newly, highest)
    }

    /// Handles the expiry of the retransmission timer at `now` (if it is due).
    pub fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if self.timer.is_none_or(|t| t > now) {
            return;
        }
        self.stats.timeouts += 1;
        self.timed = None;
        let first = self.rto.backoff_count() == 0;
        self.rto.back_off();
        self.response.on_timeout(TimeoutEvent {
            state: &mut self.state,
            recovery: &mut *self.recovery,
            rto: &mut self.rto,
            now_ts: ts_clock(now),
            first,
        });
        self.timer = Some(now + self.rto.rto());
        self.pump(now, out);
    }

    /// The offset of the segment the timer guards (the oldest unacknowledged one).
    pub fn snd_una(&self) -> u64 {
        self.state.snd_una
    }
}
