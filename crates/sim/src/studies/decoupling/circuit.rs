//! A TCP circuit's sending node (section 4.5, figure 3): the tunnel queue, one or more control
//! TCPs dequeuing from it with their credit, and the optional guaranteed-minimum-bandwidth
//! (GMB) sender, which forwards data unconditionally at its rate (leaky bucket on a 1 ms timer,
//! no header packets).

use super::control::ControlSender;
use super::tunnel::Tunnel;
use crate::event::{Time, MILLISECOND, SECOND};
use crate::tcp::segment::Parsed;
use crate::tcp::Outbox;

/// The GMB sender's timer period (the paper's 1 ms).
pub const GMB_TICK: Time = MILLISECOND;

/// The guaranteed-minimum-bandwidth sender: a leaky bucket of `rate` bytes per second.
#[derive(Debug, Clone)]
pub struct GmbSender {
    bytes_per_s: u64,
    tokens: i64,
    last: Option<Time>,
    next: Time,
    /// Bytes the GMB sender forwarded.
    pub forwarded_bytes: u64,
}

impl GmbSender {
    /// A GMB sender of `bytes_per_s`.
    pub fn new(bytes_per_s: u64) -> GmbSender {
        GmbSender {
            bytes_per_s,
            tokens: 0,
            last: None,
            next: 0,
            forwarded_bytes: 0,
        }
    }

    /// On its 1 ms tick: adds the bytes due since the last tick and forwards whole packets they
    /// cover (the bucket holds at most one tick's bytes plus one packet when the tunnel is empty).
    pub fn tick(&mut self, now: Time, tunnel: &mut Tunnel, out: &mut Outbox) {
        if now < self.next {
            return;
        }
        let elapsed = now - self.last.unwrap_or(now);
        self.last = Some(now);
        self.next = now + GMB_TICK;
        let due = (u128::from(self.bytes_per_s) * u128::from(elapsed) / u128::from(SECOND)) as i64;
        self.tokens += due;
        while let Some(len) = tunnel.head_len() {
            if self.tokens < len as i64 {
                break;
            }
            self.tokens -= len as i64;
            self.forwarded_bytes += len as u64;
            tunnel.forward(&mut out.packets);
        }
        if tunnel.is_empty() {
            self.tokens = self.tokens.min(due + 1500);
        }
    }

    /// When the next tick is due.
    pub fn deadline(&self) -> Time {
        self.next
    }
}

/// A TCP circuit's sending node.
#[derive(Debug, Clone)]
pub struct Circuit {
    /// The tunnel queue.
    pub tunnel: Tunnel,
    /// The control TCPs (each with its own VMSS and port).
    pub controls: Vec<ControlSender>,
    /// The GMB sender, if the circuit has a guaranteed bandwidth.
    pub gmb: Option<GmbSender>,
}

impl Circuit {
    /// Lets the GMB sender and then every control TCP forward what they may; returns whether
    /// any control TCP sent.
    pub fn pump(&mut self, now: Time, out: &mut Outbox) -> bool {
        if let Some(g) = &mut self.gmb {
            g.tick(now, &mut self.tunnel, out);
        }
        let mut sent = false;
        for c in &mut self.controls {
            sent |= c.pump(now, &mut self.tunnel, out);
        }
        sent
    }

    /// The control TCPs' windows in packets, summed (the data TCP's X of feature F2).
    pub fn window_packets(&self) -> u64 {
        self.controls
            .iter()
            .map(ControlSender::window_packets)
            .sum()
    }

    /// Hands an ACK to the control TCP it is for; false if none is.
    pub fn on_ack(&mut self, now: Time, p: &Parsed, out: &mut Outbox) -> bool {
        let Some(c) = self
            .controls
            .iter_mut()
            .find(|c| c.endpoints().src_port == p.dst_port)
        else {
            return false;
        };
        c.on_ack(now, p, &mut self.tunnel, out);
        true
    }

    /// Runs the timers that are due.
    pub fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        for c in &mut self.controls {
            c.on_timer(now, &mut self.tunnel, out);
        }
    }

    /// The earliest timer.
    pub fn deadline(&self) -> Option<Time> {
        let controls = self.controls.iter().filter_map(ControlSender::deadline);
        let gmb = self.gmb.as_ref().map(GmbSender::deadline);
        controls.chain(gmb).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gmb_sender_forwards_whole_packets_at_its_rate() {
        let mut gmb = GmbSender::new(150_000);
        let mut tunnel = Tunnel::new(1000);
        for _ in 0..100 {
            tunnel.push(vec![0; 1500]);
        }
        let mut out = Outbox::default();
        let mut now = 0;
        while now <= 100 * MILLISECOND {
            gmb.tick(now, &mut tunnel, &mut out);
            now = gmb.deadline();
        }
        // 150 bytes per 1 ms tick: 15,000 bytes in 100 ms, ten whole packets.
        assert_eq!(out.packets.len(), 10);
        assert_eq!(gmb.forwarded_bytes, 15_000);
        // Early calls do nothing.
        gmb.tick(now - 1, &mut tunnel, &mut out);
        assert_eq!(out.packets.len(), 10);
    }
}
