//! Router queue disciplines of a link direction: DropTail (the default), RED (Floyd and
//! Jacobson, gentle off, the count-corrected drop probability), and the header-first drop of
//! Wang & Kung section 4.7.1, which drops arriving *header packets* (IPv4 TOS with
//! [`CONTROL_TOS`] set) once more than a threshold of them wait, so that data packets are
//! dropped only when the buffer itself is full.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::link::uniform;

/// The "CONTROL" bit a control TCP sets in the IPv4 TOS field of its header packets.
pub const CONTROL_TOS: u8 = 0x04;

/// Whether `packet` is a header packet: IPv4 with [`CONTROL_TOS`] in its TOS byte.
pub fn is_header_packet(packet: &[u8]) -> bool {
    packet.len() >= 20 && packet[0] >> 4 == 4 && packet[1] & CONTROL_TOS != 0
}

/// RED's parameters (queue lengths in packets).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RedParams {
    /// Below this average nothing is dropped.
    pub min_th: f64,
    /// At or above this average every arrival is dropped.
    pub max_th: f64,
    /// Drop probability as the average reaches `max_th`.
    pub max_p: f64,
    /// Weight of the newest sample in the average.
    pub weight: f64,
}

impl Default for RedParams {
    fn default() -> RedParams {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
        }
    }
}

/// Which packets a link direction's queue refuses (beyond its hard limit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Discipline {
    /// Drop arrivals when the queue is full.
    #[default]
    DropTail,
    /// Random early detection.
    Red(RedParams),
    /// Drop arriving header packets once `header_limit` of them wait; everything when full.
    HeaderFirst {
        /// Header packets allowed in the queue.
        header_limit: usize,
    },
}

/// A discipline with its running state.
#[derive(Debug, Clone)]
pub struct QueueState {
    discipline: Discipline,
    avg: f64,
    count: i64,
    headers: usize,
    rng: ChaCha8Rng,
}

impl QueueState {
    /// `discipline`, drawing RED's random drops from a stream of `seed`.
    pub fn new(discipline: Discipline, seed: u64) -> QueueState {
        QueueState {
            discipline,
            avg: 0.0,
            count: -1,
            headers: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The discipline.
    pub fn discipline(&self) -> Discipline {
        self.discipline
    }

    /// Whether to queue `packet` arriving to a queue holding `queued` of at most `limit`
    /// packets (counting the one in transmission).
    pub fn admit(&mut self, packet: &[u8], queued: usize, limit: usize) -> bool {
        if queued >= limit {
            return false;
        }
        match self.discipline {
            Discipline::DropTail => true,
            Discipline::Red(p) => self.red(p, queued),
            Discipline::HeaderFirst { header_limit } => {
                if !is_header_packet(packet) {
                    return true;
                }
                let admit = self.headers < header_limit;
                self.headers += usize::from(admit);
                admit
            }
        }
    }

    /// Tells the discipline that `packet` left the queue (started transmission).
    pub fn dequeued(&mut self, packet: &[u8]) {
        if matches!(self.discipline, Discipline::HeaderFirst { .. }) && is_header_packet(packet) {
            self.headers = self.headers.saturating_sub(1);
        }
    }

    fn red(&mut self, p: RedParams, queued: usize) -> bool {
        self.avg += p.weight * (queued as f64 - self.avg);
        if self.avg < p.min_th {
            self.count = -1;
            return true;
        }
        if self.avg >= p.max_th {
            self.count = 0;
            return false;
        }
        self.count += 1;
        let pb = p.max_p * (self.avg - p.min_th) / (p.max_th - p.min_th);
        let pa = pb / (1.0 - self.count as f64 * pb).max(1e-9);
        if uniform(&mut self.rng) < pa {
            self.count = 0;
            false
        } else {
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(tos: u8) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[1] = tos;
        p
    }

    #[test]
    fn droptail_refuses_only_when_full() {
        let mut q = QueueState::new(Discipline::DropTail, 1);
        assert!(q.admit(&packet(0), 4, 5));
        assert!(!q.admit(&packet(0), 5, 5));
    }

    #[test]
    fn header_first_drops_headers_above_their_limit_but_keeps_data() {
        let mut q = QueueState::new(Discipline::HeaderFirst { header_limit: 2 }, 1);
        let (header, data) = (packet(CONTROL_TOS), packet(0));
        assert!(q.admit(&header, 0, 50));
        assert!(q.admit(&header, 1, 50));
        assert!(!q.admit(&header, 2, 50));
        assert!(q.admit(&data, 2, 50));
        q.dequeued(&header);
        assert!(q.admit(&header, 2, 50));
        assert!(!q.admit(&data, 50, 50));
    }

    #[test]
    fn red_drops_early_and_more_as_the_average_grows() {
        let params = RedParams {
            weight: 1.0,
            ..RedParams::default()
        };
        let drops = |queued: usize| {
            let mut q = QueueState::new(Discipline::Red(params), 7);
            (0..10_000)
                .filter(|_| !q.admit(&packet(0), queued, 100))
                .count()
        };
        assert_eq!(drops(3), 0);
        let (low, high) = (drops(7), drops(13));
        assert!(0 < low && low < high && high < 10_000, "{low} {high}");
        assert_eq!(drops(15), 10_000);
    }
}
