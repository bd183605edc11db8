//! The decoupling socket's data TCP sender (sections 5 and 6): no congestion control of its own
//! (new data goes into the tunnel queue whenever it has room; the control TCP decides when it
//! leaves), and aggressive error control:
//!
//! - F1: the receiver reports up to three SACK blocks ([`crate::tcp::receiver::TcpReceiver`]
//!   with timestamps and SACK); a hole with at least three SACKed segments above it is resent
//!   once, one packet at a time (cwnd one MSS while retransmitting);
//! - F2: every X further duplicate ACKs after the third, the first unacknowledged packet is
//!   resent again, X being the control TCP's current window in packets;
//! - F3: a fixed 50 ms retransmission timer, restarted by every ACK that advances, never
//!   backed off; on expiry the first unacknowledged packet is resent.

use std::collections::VecDeque;

use taroc_wire::tcp::flags;

use super::tunnel::Tunnel;
use crate::event::{Time, MILLISECOND};
use crate::tcp::segment::{self, Endpoints, Parsed, SegmentSpec};
use crate::tcp::{ts_clock, Outbox};

/// F3's fixed retransmission timeout.
pub const DATA_RTO: Time = 50 * MILLISECOND;

/// Counters of the data TCP sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DataStats {
    /// New segments sent into the tunnel.
    pub segments: u64,
    /// Holes resent on SACK information (F1).
    pub sack_retransmits: u64,
    /// First unacknowledged segment resent after X further duplicate ACKs (F2).
    pub dupack_retransmits: u64,
    /// Resent on the 50 ms timer (F3).
    pub timeouts: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    sacked: bool,
    resent: bool,
}

/// The data TCP sender of a decoupling socket: a bulk transfer of `mss`-byte segments.
#[derive(Debug, Clone)]
pub struct DataSender {
    ep: Endpoints,
    iss: u32,
    mss: u64,
    una: u64,
    nxt: u64,
    slots: VecDeque<Slot>,
    dupacks: u64,
    timer: Option<Time>,
    ts_recent: u32,
    ip_id: u16,
    stats: DataStats,
}

impl DataSender {
    /// A data TCP from `ep.src` to `ep.dst` (first byte `iss + 1`) of `mss`-byte segments.
    pub fn new(ep: Endpoints, iss: u32, mss: u32) -> DataSender {
        DataSender {
            ep,
            iss,
            mss: u64::from(mss.max(1)),
            una: 0,
            nxt: 0,
            slots: VecDeque::new(),
            dupacks: 0,
            timer: None,
            ts_recent: 0,
            ip_id: 0,
            stats: DataStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> DataStats {
        self.stats
    }

    /// The first unacknowledged byte (offset).
    pub fn una(&self) -> u64 {
        self.una
    }

    /// When the 50 ms timer expires, if it runs.
    pub fn deadline(&self) -> Option<Time> {
        self.timer
    }

    fn wire(&self, offset: u64) -> u32 {
        self.iss.wrapping_add(1).wrapping_add(offset as u32)
    }

    fn segment(&mut self, now: Time, offset: u64, out: &mut Outbox, tunnel: &mut Tunnel) {
        let mut packet = out.buffer();
        let spec = SegmentSpec {
            seq: self.wire(offset),
            ack: 1,
            flags: flags::ACK,
            window: u16::MAX,
            timestamps: Some((ts_clock(now), self.ts_recent)),
            sack: &[],
            payload_len: self.mss as usize,
            payload_offset: offset,
        };
        segment::build(&self.ep, self.ip_id, &spec, &mut packet);
        self.ip_id = self.ip_id.wrapping_add(1);
        tunnel.push(packet);
        if self.timer.is_none() {
            self.timer = Some(now + DATA_RTO);
        }
    }

    /// Puts new segments into the tunnel while it has room (the data TCP's infinite cwnd).
    pub fn fill(&mut self, now: Time, tunnel: &mut Tunnel, out: &mut Outbox) {
        while tunnel.has_room() {
            let offset = self.nxt;
            self.segment(now, offset, out, tunnel);
            self.nxt += self.mss;
            self.slots.push_back(Slot::default());
            self.stats.segments += 1;
        }
    }

    fn resend_first(&mut self, now: Time, out: &mut Outbox, tunnel: &mut Tunnel) {
        if self.una < self.nxt {
            let una = self.una;
            self.segment(now, una, out, tunnel);
            if let Some(slot) = self.slots.front_mut() {
                slot.resent = true;
            }
        }
    }

    /// Handles an ACK of the data TCP; `x` is the control TCP's window in packets (F2).
    pub fn on_ack(&mut self, now: Time, p: &Parsed, x: u64, tunnel: &mut Tunnel, out: &mut Outbox) {
        if let Some((val, _)) = p.timestamps {
            self.ts_recent = val;
        }
        let rel = |wire: u32, this: &DataSender| {
            this.una as i64 + i64::from(wire.wrapping_sub(this.wire(this.una)) as i32)
        };
        let ack = rel(p.ack, self);
        if ack < self.una as i64 || ack > self.nxt as i64 {
            return;
        }
        let ack = ack as u64;
        if ack > self.una {
            let whole = (ack - self.una).div_ceil(self.mss) as usize;
            self.slots.drain(..whole.min(self.slots.len()));
            self.una = ack;
            self.dupacks = 0;
            self.timer = (self.una < self.nxt).then(|| now + DATA_RTO);
        } else if self.una < self.nxt {
            self.dupacks += 1;
            if self.dupacks > 3 && (self.dupacks - 3).is_multiple_of(x.max(1)) {
                self.stats.dupack_retransmits += 1;
                self.resend_first(now, out, tunnel);
            }
        }
        for &(left, right) in p.sack.as_slice() {
            let (l, r) = (rel(left, self), rel(right, self));
            if l < self.una as i64 || r > self.nxt as i64 || l >= r {
                continue;
            }
            let first = ((l as u64 - self.una) / self.mss) as usize;
            let last = ((r as u64 - self.una) / self.mss) as usize;
            for slot in self.slots.range_mut(first..last.min(self.slots.len())) {
                slot.sacked = true;
            }
        }
        self.resend_holes(now, tunnel, out);
    }

    /// F1: every hole with at least three SACKed segments above it, not yet resent, is resent.
    fn resend_holes(&mut self, now: Time, tunnel: &mut Tunnel, out: &mut Outbox) {
        let mut above = 0;
        let mut holes = Vec::new();
        for (i, slot) in self.slots.iter().enumerate().rev() {
            if slot.sacked {
                above += 1;
            } else if above >= 3 && !slot.resent {
                holes.push(i);
            }
        }
        for &i in holes.iter().rev() {
            self.slots[i].resent = true;
            self.stats.sack_retransmits += 1;
            let offset = self.una + i as u64 * self.mss;
            self.segment(now, offset, out, tunnel);
        }
    }

    /// Handles the 50 ms timer (if it is due): the first unacknowledged segment again, the
    /// timer restarted with the same 50 ms (F3: no backoff).
    pub fn on_timer(&mut self, now: Time, tunnel: &mut Tunnel, out: &mut Outbox) {
        if self.timer.is_none_or(|t| t > now) {
            return;
        }
        self.timer = None;
        if self.una < self.nxt {
            self.stats.timeouts += 1;
            self.resend_first(now, out, tunnel);
            self.timer = Some(now + DATA_RTO);
        }
    }
}
