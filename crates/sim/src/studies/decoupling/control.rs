//! The control TCP (section 4.5.1): a Reno sender over a *virtual* byte stream whose packets are
//! header packets (TCP/IP header and timestamps, no payload, the CONTROL bit in the IPv4 TOS),
//! each standing for VMSS bytes, and its receiver, which acknowledges them as if each carried
//! VMSS bytes (cumulative ACKs, one per two header packets, at once for out-of-order ones).
//!
//! Every header packet the sender sends, new or retransmitted, earns VMSS bytes of credit; the
//! credit buys whole data packets from the tunnel queue, which leave *before* the header packet;
//! what is left (or a packet too large for it) waits for the next credit. A lost header packet is
//! retransmitted as TCP would, and its retransmission earns new credit (no data is resent).

use std::collections::BTreeSet;

use taroc_wire::checksum;
use taroc_wire::tcp::flags;

use super::tunnel::Tunnel;
use crate::event::{Time, MILLISECOND};
use crate::queue::CONTROL_TOS;
use crate::tcp::rto::{RtoConfig, RtoEstimator};
use crate::tcp::segment::{self, Endpoints, Parsed, SegmentSpec};
use crate::tcp::{ts_clock, Outbox};

/// Bytes of a header packet: 20 IPv4 + 20 TCP + 12 timestamps (the paper's HP_Sz).
pub const HEADER_PACKET_BYTES: usize = 52;

/// Counters of a control TCP sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ControlStats {
    /// Header packets sent (retransmissions included).
    pub header_packets: u64,
    /// Header packets retransmitted (fast retransmit or timeout).
    pub retransmissions: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// ACKs received.
    pub acks: u64,
}

/// A Reno control TCP sender.
#[derive(Debug, Clone)]
pub struct ControlSender {
    ep: Endpoints,
    iss: u32,
    vmss: u64,
    max_window: u64,
    una: u64,
    nxt: u64,
    max: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    recovering: bool,
    credit: i64,
    rto: RtoEstimator,
    timer: Option<Time>,
    timed: Option<(u64, Time)>,
    ts_recent: u32,
    ip_id: u16,
    stats: ControlStats,
    window_area: u128,
    window_since: Time,
    started: Option<Time>,
}

impl ControlSender {
    /// A control TCP from `ep.src` to `ep.dst` (first virtual byte `iss + 1`), VMSS `vmss`
    /// bytes, its window at most `max_window_packets` header packets.
    pub fn new(ep: Endpoints, iss: u32, vmss: u32, max_window_packets: u32) -> ControlSender {
        let vmss = u64::from(vmss.max(1));
        ControlSender {
            ep,
            iss,
            vmss,
            max_window: vmss * u64::from(max_window_packets.max(1)),
            una: 0,
            nxt: 0,
            max: 0,
            cwnd: vmss,
            ssthresh: u64::MAX / 4,
            dupacks: 0,
            recovering: false,
            credit: 0,
            rto: RtoEstimator::new(RtoConfig::coarse()),
            timer: None,
            timed: None,
            ts_recent: 0,
            ip_id: 0,
            stats: ControlStats::default(),
            window_area: 0,
            window_since: 0,
            started: None,
        }
    }

    /// Counters.
    pub fn stats(&self) -> ControlStats {
        self.stats
    }

    /// The connection's endpoints.
    pub fn endpoints(&self) -> Endpoints {
        self.ep
    }

    /// Header packets sent and not yet acknowledged (in flight or lost).
    pub fn outstanding(&self) -> u64 {
        (self.max - self.una) / self.vmss
    }

    /// VMSS, bytes.
    pub fn vmss(&self) -> u64 {
        self.vmss
    }

    /// Credit left over (bytes; may be carried to the next header packet).
    pub fn credit(&self) -> i64 {
        self.credit
    }

    /// The congestion window in header packets (the X of the data TCP's feature F2).
    pub fn window_packets(&self) -> u64 {
        self.cwnd.min(self.max_window) / self.vmss
    }

    /// The time-averaged congestion window in header packets from the start until `now`.
    pub fn mean_window(&self, now: Time) -> f64 {
        let Some(start) = self.started else {
            return 0.0;
        };
        let area = self.window_area + u128::from(self.cwnd) * u128::from(now - self.window_since);
        area as f64 / (now - start).max(1) as f64 / self.vmss as f64
    }

    /// When the retransmission timer expires, if it runs.
    pub fn deadline(&self) -> Option<Time> {
        self.timer
    }

    fn set_cwnd(&mut self, now: Time, cwnd: u64) {
        self.started.get_or_insert(now);
        self.window_area += u128::from(self.cwnd) * u128::from(now - self.window_since);
        self.window_since = now;
        self.cwnd = cwnd;
    }

    /// Sends what the window allows: first the carried-over credit, then, while the tunnel
    /// holds data (or a header packet must be resent), one header packet per VMSS of credit,
    /// each after the data it paid for. Returns whether anything was sent.
    pub fn pump(&mut self, now: Time, tunnel: &mut Tunnel, out: &mut Outbox) -> bool {
        if self.started.is_none() {
            self.set_cwnd(now, self.cwnd);
        }
        let mut sent = false;
        self.credit = self.spend(self.credit, tunnel, out, &mut sent);
        let window = self.cwnd.min(self.max_window);
        while self.nxt < self.una + window && (self.nxt < self.max || !tunnel.is_empty()) {
            let seq = self.nxt;
            self.send_header(now, seq, tunnel, out);
            self.nxt += self.vmss;
            self.max = self.max.max(self.nxt);
            sent = true;
        }
        sent
    }

    fn spend(
        &mut self,
        credit: i64,
        tunnel: &mut Tunnel,
        out: &mut Outbox,
        sent: &mut bool,
    ) -> i64 {
        let before = out.packets.len();
        let left = tunnel.spend(credit, &mut out.packets);
        *sent |= out.packets.len() > before;
        left
    }

    /// Earns VMSS of credit, forwards the data it buys, then sends the header packet `seq`.
    fn send_header(&mut self, now: Time, seq: u64, tunnel: &mut Tunnel, out: &mut Outbox) {
        let mut sent = false;
        self.credit = self.spend(self.credit + self.vmss as i64, tunnel, out, &mut sent);
        if seq < self.max {
            self.stats.retransmissions += 1;
            if self.timed.is_some_and(|(s, _)| s >= seq) {
                self.timed = None;
            }
        } else if self.timed.is_none() {
            self.timed = Some((seq, now));
        }
        let mut packet = out.buffer();
        let spec = SegmentSpec {
            seq: self.iss.wrapping_add(1).wrapping_add(seq as u32),
            ack: 1,
            flags: flags::ACK,
            window: u16::MAX,
            timestamps: Some((ts_clock(now), self.ts_recent)),
            sack: &[],
            payload_len: 0,
            payload_offset: 0,
        };
        segment::build(&self.ep, self.ip_id, &spec, &mut packet);
        self.ip_id = self.ip_id.wrapping_add(1);
        mark_control(&mut packet);
        out.packets.push(packet);
        self.stats.header_packets += 1;
        if self.timer.is_none() {
            self.timer = Some(now + self.rto.rto());
        }
    }

    /// Handles an ACK of the control TCP; returns whether the window moved.
    pub fn on_ack(&mut self, now: Time, p: &Parsed, tunnel: &mut Tunnel, out: &mut Outbox) {
        self.stats.acks += 1;
        if let Some((val, _)) = p.timestamps {
            self.ts_recent = val;
        }
        let wire_una = self.iss.wrapping_add(1).wrapping_add(self.una as u32);
        let delta = i64::from(p.ack.wrapping_sub(wire_una) as i32);
        let ack = self.una as i64 + delta;
        if ack > self.max as i64 || ack < self.una as i64 {
            return;
        }
        let ack = ack as u64;
        if ack > self.una {
            if let Some((seq, at)) = self.timed {
                if ack > seq {
                    self.rto.sample(now - at);
                    self.timed = None;
                }
            }
            self.una = ack;
            self.nxt = self.nxt.max(ack);
            self.dupacks = 0;
            let cwnd = if self.recovering {
                self.recovering = false;
                self.ssthresh
            } else if self.cwnd < self.ssthresh {
                self.cwnd + self.vmss
            } else {
                self.cwnd + (self.vmss * self.vmss / self.cwnd).max(1)
            };
            self.set_cwnd(now, cwnd.min(self.max_window));
            self.timer = (self.una < self.max).then(|| now + self.rto.rto());
        } else if self.una < self.max {
            self.dupacks += 1;
            if self.dupacks == 3 && !self.recovering {
                self.ssthresh = self.halved();
                self.recovering = true;
                self.stats.fast_retransmits += 1;
                let una = self.una;
                self.send_header(now, una, tunnel, out);
                self.set_cwnd(now, self.ssthresh + 3 * self.vmss);
            } else if self.recovering {
                self.set_cwnd(now, self.cwnd + self.vmss);
            }
        }
    }

    fn halved(&self) -> u64 {
        ((self.max.min(self.nxt) - self.una) / 2).max(2 * self.vmss)
    }

    /// Handles the retransmission timer (if it is due): Reno's timeout, one header packet again
    /// from the first unacknowledged one.
    pub fn on_timer(&mut self, now: Time, tunnel: &mut Tunnel, out: &mut Outbox) {
        if self.timer.is_none_or(|t| t > now) {
            return;
        }
        self.timer = None;
        if self.una >= self.max {
            return;
        }
        self.stats.timeouts += 1;
        self.ssthresh = self.halved();
        self.set_cwnd(now, self.vmss);
        self.recovering = false;
        self.dupacks = 0;
        self.nxt = self.una;
        self.timed = None;
        self.rto.back_off();
        self.pump(now, tunnel, out);
    }
}

/// Sets the CONTROL bit in an IPv4 packet's TOS and fixes its header checksum.
pub fn mark_control(packet: &mut [u8]) {
    if packet.len() >= 20 && packet[0] >> 4 == 4 {
        packet[1] |= CONTROL_TOS;
        packet[10..12].copy_from_slice(&[0, 0]);
        let c = checksum::checksum(&packet[..20]);
        packet[10..12].copy_from_slice(&c.to_be_bytes());
    }
}

/// The control TCP receiver: takes each header packet as VMSS bytes.
#[derive(Debug, Clone)]
pub struct ControlReceiver {
    ep: Endpoints,
    irs: u32,
    vmss: u64,
    rcv_nxt: u64,
    ooo: BTreeSet<u64>,
    unacked: u32,
    delack: Option<Time>,
    ts_recent: u32,
    ip_id: u16,
    /// Header packets received intact.
    pub header_packets: u64,
    /// ACKs sent.
    pub acks_sent: u64,
}

/// The delayed-ACK timeout of the control receiver.
const DELACK: Time = 100 * MILLISECOND;

impl ControlReceiver {
    /// A receiver sending ACKs from `ep.src` to `ep.dst` for a sender whose first virtual
    /// byte is `sender_iss + 1` and whose header packets each stand for `vmss` bytes.
    pub fn new(ep: Endpoints, sender_iss: u32, vmss: u32) -> ControlReceiver {
        ControlReceiver {
            ep,
            irs: sender_iss,
            vmss: u64::from(vmss.max(1)),
            rcv_nxt: 0,
            ooo: BTreeSet::new(),
            unacked: 0,
            delack: None,
            ts_recent: 0,
            ip_id: 0,
            header_packets: 0,
            acks_sent: 0,
        }
    }

    /// When the delayed-ACK timer expires, if it runs.
    pub fn deadline(&self) -> Option<Time> {
        self.delack
    }

    /// The next virtual byte expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Handles a header packet.
    pub fn on_header(&mut self, now: Time, p: &Parsed, out: &mut Outbox) {
        self.header_packets += 1;
        let wire_nxt = self.irs.wrapping_add(1).wrapping_add(self.rcv_nxt as u32);
        let seq = self.rcv_nxt as i64 + i64::from(p.seq.wrapping_sub(wire_nxt) as i32);
        let in_order = seq == self.rcv_nxt as i64;
        if in_order || seq > self.rcv_nxt as i64 {
            if let Some((val, _)) = p.timestamps {
                self.ts_recent = val;
            }
        }
        if !in_order {
            if seq > self.rcv_nxt as i64 {
                self.ooo.insert(seq as u64);
            }
            return self.ack(now, out);
        }
        let filled = !self.ooo.is_empty();
        self.rcv_nxt += self.vmss;
        while self.ooo.remove(&self.rcv_nxt) {
            self.rcv_nxt += self.vmss;
        }
        self.unacked += 1;
        if filled || self.unacked >= 2 {
            self.ack(now, out);
        } else if self.delack.is_none() {
            self.delack = Some(now + DELACK);
        }
    }

    /// Handles the delayed-ACK timer (if it is due).
    pub fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if self.delack.is_some_and(|t| t <= now) {
            self.ack(now, out);
        }
    }

    fn ack(&mut self, now: Time, out: &mut Outbox) {
        self.unacked = 0;
        self.delack = None;
        let mut packet = out.buffer();
        let spec = SegmentSpec {
            seq: 1,
            ack: self.irs.wrapping_add(1).wrapping_add(self.rcv_nxt as u32),
            flags: flags::ACK,
            window: u16::MAX,
            timestamps: Some((ts_clock(now), self.ts_recent)),
            sack: &[],
            payload_len: 0,
            payload_offset: 0,
        };
        segment::build(&self.ep, self.ip_id, &spec, &mut packet);
        self.ip_id = self.ip_id.wrapping_add(1);
        out.packets.push(packet);
        self.acks_sent += 1;
    }
}
