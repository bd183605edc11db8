//! The tunnel queue of a TCP circuit (section 4.5): a FIFO of whole data packets that the
//! circuit's senders (control TCPs spending credit, the GMB sender) forward in arrival order.

use std::collections::VecDeque;

/// The tunnel queue: data packets waiting for credit.
#[derive(Debug, Clone)]
pub struct Tunnel {
    packets: VecDeque<Vec<u8>>,
    limit: usize,
    /// Bytes forwarded out of the tunnel so far.
    pub forwarded_bytes: u64,
    /// Packets forwarded out of the tunnel so far.
    pub forwarded_packets: u64,
}

impl Tunnel {
    /// An empty tunnel that takes new packets while it holds fewer than `limit`.
    pub fn new(limit: usize) -> Tunnel {
        Tunnel {
            packets: VecDeque::new(),
            limit: limit.max(1),
            forwarded_bytes: 0,
            forwarded_packets: 0,
        }
    }

    /// Whether a new packet would be taken ([`Tunnel::push`] takes it anyway: retransmissions
    /// are never refused).
    pub fn has_room(&self) -> bool {
        self.packets.len() < self.limit
    }

    /// Queues a data packet at the back.
    pub fn push(&mut self, packet: Vec<u8>) {
        self.packets.push_back(packet);
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Bytes of the packet at the head, if any.
    pub fn head_len(&self) -> Option<usize> {
        self.packets.front().map(Vec::len)
    }

    /// Forwards the head packet (to `out`, in order).
    pub fn forward(&mut self, out: &mut Vec<Vec<u8>>) {
        if let Some(p) = self.packets.pop_front() {
            self.forwarded_bytes += p.len() as u64;
            self.forwarded_packets += 1;
            out.push(p);
        }
    }

    /// Spends `credit` on whole packets from the head while it covers the head packet; returns
    /// what is left (carried over to the next header packet).
    pub fn spend(&mut self, mut credit: i64, out: &mut Vec<Vec<u8>>) -> i64 {
        while let Some(len) = self.head_len() {
            if credit < len as i64 {
                break;
            }
            credit -= len as i64;
            self.forward(out);
        }
        credit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credit_buys_whole_packets_and_carries_over() {
        let mut t = Tunnel::new(10);
        for len in [1000, 1000, 400] {
            t.push(vec![0; len]);
        }
        let mut out = Vec::new();
        let left = t.spend(1500, &mut out);
        assert_eq!((out.len(), left), (1, 500));
        let left = t.spend(left + 1500, &mut out);
        assert_eq!((out.len(), left), (3, 600));
        assert_eq!(t.forwarded_bytes, 2400);
    }
}
