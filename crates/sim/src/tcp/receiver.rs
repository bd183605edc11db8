//! The TCP receiver: cumulative ACKs, out-of-order reassembly bookkeeping, SACK blocks
//! (RFC 2018 section 4: the first block holds the most recently received segment, then the
//! most recently reported others), optional delayed ACKs (RFC 5681 section 4.2: an ACK for at
//! least every second full segment and within the delay timeout; out-of-order segments and
//! segments filling a hole are acknowledged at once), and timestamp echo (RFC 7323 section
//! 4.3). Every packet's checksums are verified; a bad one is dropped and counted.

use serde::{Deserialize, Serialize};
use taroc_wire::tcp::flags;

use super::segment::{self, Endpoints, Parsed, SegmentSpec};
use super::{ts_clock, Outbox};
use crate::event::{Time, MILLISECOND};

/// Settings of a receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiverConfig {
    /// Delay ACKs (NS-2's `DelAck` sink) or acknowledge every segment (NS-2's `TCPSink`).
    pub delayed_ack: bool,
    /// The delayed-ACK timeout (NS-2: 100 ms).
    pub delayed_ack_timeout_ns: Time,
    /// Send SACK blocks.
    pub sack: bool,
    /// Echo timestamps (when the sender sends them).
    pub timestamps: bool,
    /// Report duplicate segments in a first D-SACK block (RFC 2883; needs `sack`).
    pub dsack: bool,
}

impl Default for ReceiverConfig {
    fn default() -> ReceiverConfig {
        ReceiverConfig {
            delayed_ack: false,
            delayed_ack_timeout_ns: 100 * MILLISECOND,
            sack: false,
            timestamps: false,
            dsack: false,
        }
    }
}

/// Counters of a receiver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReceiverStats {
    /// Payload bytes delivered in order to the application.
    pub delivered_bytes: u64,
    /// Data segments accepted (verified).
    pub segments_received: u64,
    /// Segments that were entirely old data (below the cumulative ACK or already held).
    pub duplicate_segments: u64,
    /// Payload bytes of those segments (redundant data received).
    pub duplicate_bytes: u64,
    /// Segments that arrived above a hole.
    pub out_of_order_segments: u64,
    /// Packets refused by the IPv4 header or TCP checksum (e.g. wrongly rebuilt by VJ).
    pub bad_checksums: u64,
    /// ACKs sent.
    pub acks_sent: u64,
}

/// The receiver of a bulk TCP transfer.
#[derive(Debug)]
pub struct TcpReceiver {
    config: ReceiverConfig,
    ep: Endpoints,
    irs: u32,
    rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    recent: Vec<u64>,
    unacked_segments: u32,
    delack: Option<Time>,
    ts_recent: u32,
    last_ack_sent: u64,
    ip_id: u16,
    stats: ReceiverStats,
    blocks: Vec<(u32, u32)>,
    dsack: Option<(u64, u64)>,
}

impl TcpReceiver {
    /// A receiver sending ACKs from `ep.src` to `ep.dst`, expecting the sender's first data byte
    /// at wire number `sender_iss + 1`.
    pub fn new(config: ReceiverConfig, ep: Endpoints, sender_iss: u32) -> TcpReceiver {
        TcpReceiver {
            config,
            ep,
            irs: sender_iss,
            rcv_nxt: 0,
            ooo: Vec::new(),
            recent: Vec::new(),
            unacked_segments: 0,
            delack: None,
            ts_recent: 0,
            last_ack_sent: 0,
            ip_id: 0,
            stats: ReceiverStats::default(),
            blocks: Vec::with_capacity(4),
            dsack: None,
        }
    }

    /// Counters.
    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    /// When the delayed-ACK timer expires, if it runs.
    pub fn deadline(&self) -> Option<Time> {
        self.delack
    }

    /// The next in-order offset expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    fn wire(&self, offset: u64) -> u32 {
        self.irs.wrapping_add(1).wrapping_add(offset as u32)
    }

    /// Handles a packet addressed to this receiver.
    pub fn on_packet(&mut self, now: Time, packet: &[u8], out: &mut Outbox) {
        match segment::parse(packet) {
            Ok(p) => self.on_segment(now, &p, out),
            Err(_) => self.stats.bad_checksums += 1,
        }
    }

    /// Handles a verified segment.
    pub fn on_segment(&mut self, now: Time, p: &Parsed, out: &mut Outbox) {
        if p.payload_len == 0 {
            return;
        }
        self.stats.segments_received += 1;
        let delta = p.seq.wrapping_sub(self.wire(self.rcv_nxt)) as i32;
        let seq = self.rcv_nxt as i64 + i64::from(delta);
        let len = p.payload_len as u64;
        if self.config.timestamps {
            if let Some((val, _)) = p.timestamps {
                // RFC 7323 section 4.3 (2): SEG.SEQ <= Last.ACK.sent.
                if seq <= self.last_ack_sent as i64 && val.wrapping_sub(self.ts_recent) as i32 >= 0
                {
                    self.ts_recent = val;
                }
            }
        }
        if seq < 0 || seq as u64 + len <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            self.stats.duplicate_bytes += len;
            if seq >= 0 {
                self.dsack = Some((seq as u64, seq as u64 + len));
            }
            self.send_ack(now, out);
            return;
        }
        let seq = seq as u64;
        if self.config.dsack && self.ooo.iter().any(|&(l, r)| l <= seq && seq + len <= r) {
            self.stats.duplicate_segments += 1;
            self.stats.duplicate_bytes += len;
            self.dsack = Some((seq, seq + len));
            self.send_ack(now, out);
            return;
        }
        if seq <= self.rcv_nxt {
            let had_hole = !self.ooo.is_empty();
            let before = self.rcv_nxt;
            self.rcv_nxt = seq + len;
            // Pull in the out-of-order ranges the new data reaches.
            while let Some(&(l, r)) = self.ooo.first() {
                if l > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(r);
                self.ooo.remove(0);
            }
            self.stats.delivered_bytes += self.rcv_nxt - before;
            let rcv_nxt = self.rcv_nxt;
            self.recent.retain(|&s| s >= rcv_nxt);
            if had_hole || !self.config.delayed_ack {
                self.send_ack(now, out);
            } else {
                self.unacked_segments += 1;
                if self.unacked_segments >= 2 {
                    self.send_ack(now, out);
                } else if self.delack.is_none() {
                    self.delack = Some(now + self.config.delayed_ack_timeout_ns);
                }
            }
        } else {
            self.stats.out_of_order_segments += 1;
            self.insert_ooo(seq, seq + len);
            self.recent.retain(|&s| s != seq);
            self.recent.insert(0, seq);
            self.recent.truncate(8);
            self.send_ack(now, out);
        }
    }

    fn insert_ooo(&mut self, l: u64, r: u64) {
        let at = self.ooo.partition_point(|&(a, _)| a < l);
        self.ooo.insert(at, (l, r));
        // Merge overlapping or touching neighbours.
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.ooo.len());
        for &(a, b) in &self.ooo {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        self.ooo = merged;
    }

    /// Handles the delayed-ACK timer at `now` (if due).
    pub fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if self.delack.is_some_and(|t| t <= now) {
            self.send_ack(now, out);
        }
    }

    fn send_ack(&mut self, now: Time, out: &mut Outbox) {
        self.unacked_segments = 0;
        self.delack = None;
        self.last_ack_sent = self.rcv_nxt;
        self.blocks.clear();
        let dsack = self.dsack.take();
        if self.config.sack {
            let max = if self.config.timestamps { 3 } else { 4 };
            if let (Some((l, r)), true) = (dsack, self.config.dsack) {
                self.blocks.push((self.wire(l), self.wire(r)));
            }
            // RFC 2883 section 4: the D-SACK block may be followed by the SACK block holding it.
            let first = self.blocks.len();
            for &s in &self.recent {
                if let Some(&(l, r)) = self.ooo.iter().find(|&&(l, r)| l <= s && s < r) {
                    let block = (self.wire(l), self.wire(r));
                    if !self.blocks[first..].contains(&block) && self.blocks.len() < max {
                        self.blocks.push(block);
                    }
                }
            }
        }
        let spec = SegmentSpec {
            seq: 1,
            ack: self.wire(self.rcv_nxt),
            flags: flags::ACK,
            window: 65535,
            timestamps: self
                .config
                .timestamps
                .then(|| (ts_clock(now), self.ts_recent)),
            sack: &self.blocks,
            payload_len: 0,
            payload_offset: 0,
        };
        let mut buf = out.buffer();
        segment::build(&self.ep, self.ip_id, &spec, &mut buf);
        self.ip_id = self.ip_id.wrapping_add(1);
        out.packets.push(buf);
        self.stats.acks_sent += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ep() -> Endpoints {
        Endpoints {
            src: Ipv4Addr::new(10, 0, 0, 1).into(),
            dst: Ipv4Addr::new(10, 0, 0, 3).into(),
            src_port: 20,
            dst_port: 5001,
        }
    }

    fn data(seq: u32, ts: Option<(u32, u32)>) -> Vec<u8> {
        let spec = SegmentSpec {
            seq,
            ack: 1,
            flags: flags::ACK,
            window: 65535,
            timestamps: ts,
            sack: &[],
            payload_len: 100,
            payload_offset: u64::from(seq),
        };
        let mut p = Vec::new();
        segment::build(&ep(), 0, &spec, &mut p);
        p
    }

    #[test]
    fn duplicates_are_reported_in_a_first_dsack_block_and_counted() {
        let config = ReceiverConfig {
            sack: true,
            dsack: true,
            timestamps: true,
            ..ReceiverConfig::default()
        };
        let mut r = TcpReceiver::new(config, ep().reversed(), 0);
        let mut out = Outbox::default();
        r.on_packet(0, &data(1, Some((5, 0))), &mut out); // offset 0
        r.on_packet(0, &data(201, Some((6, 0))), &mut out); // offset 200, above a hole
        r.on_packet(0, &data(201, Some((7, 0))), &mut out); // held already
        r.on_packet(0, &data(1, Some((8, 0))), &mut out); // below the cumulative ACK
        let acks: Vec<Parsed> = out
            .packets
            .iter()
            .map(|p| segment::parse(p).unwrap())
            .collect();
        assert_eq!(acks[1].sack.as_slice(), &[(201, 301)]);
        assert_eq!(
            acks[2].sack.as_slice(),
            &[(201, 301), (201, 301)],
            "D-SACK, then SACK"
        );
        assert_eq!(acks[3].sack.as_slice()[0], (1, 101), "D-SACK below the ACK");
        assert_eq!(acks[3].ack, 101);
        assert_eq!(
            acks[3].timestamps,
            Some((0, 8)),
            "RFC 7323 4.3: SEG.SEQ <= Last.ACK.sent"
        );
        assert_eq!(r.stats().duplicate_bytes, 200);
    }
}
