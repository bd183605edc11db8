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

use serde::{Deserialize, Serialize};
use taroc_wire::tcp::flags;

use super::recovery::Recovery;
use super::rto::{RtoConfig, RtoEstimator};
use super::segment::{self, Endpoints, Parsed, SegmentSpec};
use super::state::SACKED;
pub use super::state::{Scoreboard, SenderState};
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
