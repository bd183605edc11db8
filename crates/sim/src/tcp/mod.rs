//! TCP over real packets: a sender with pluggable loss recovery (Tahoe, Reno, NewReno, SACK)
//! and, orthogonal to it, pluggable timeout responses (standard, DCLOR, Eifel, Eifel with
//! RFC 4015, F-RTO), a receiver with optional delayed ACKs, SACK, D-SACK and timestamps, the
//! RFC 6298 timer, and the packet builder/parser.

pub mod newreno;
pub mod receiver;
pub mod recovery;
pub mod reno;
pub mod rto;
pub mod sack;
pub mod segment;
pub mod sender;
pub mod state;
pub mod tahoe;
pub mod timeout;
pub mod variant;

/// Packets a TCP agent hands to the network, and a pool of spare buffers so that steady-state
/// operation allocates nothing.
#[derive(Debug, Default)]
pub struct Outbox {
    /// Packets to send, in order.
    pub packets: Vec<Vec<u8>>,
    /// Spare buffers.
    pub pool: Vec<Vec<u8>>,
}

impl Outbox {
    /// A spare buffer (empty).
    pub fn buffer(&mut self) -> Vec<u8> {
        let mut b = self.pool.pop().unwrap_or_else(|| Vec::with_capacity(1600));
        b.clear();
        b
    }

    /// Returns a buffer to the pool.
    pub fn recycle(&mut self, buffer: Vec<u8>) {
        if self.pool.len() < 4096 {
            self.pool.push(buffer);
        }
    }
}

/// Milliseconds of simulated time as a 32-bit timestamp clock (RFC 7323 TSval).
pub fn ts_clock(now: crate::event::Time) -> u32 {
    (now / crate::event::MILLISECOND) as u32
}
