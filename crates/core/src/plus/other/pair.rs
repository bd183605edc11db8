//! The IPv4 Identification a host last sent to another with a protocol, kept by both ends of
//! the link (spec section 8, *pair mode*): Linux draws the IP-ID of unconnected UDP sockets
//! (RTP voice among them) from a counter per source, destination and protocol, so that
//! concurrent flows between two hosts interleave on one counter. A flow's next IP-ID is then,
//! most often, one above the last one any of those flows sent.
//!
//! The compressor records every IPv4 packet this module compresses; the decompressor every
//! IPv4 packet it rebuilds with the frame's check (delivered, or held for confirmation). A frame
//! lost on the link leaves the decompressor's value behind the compressor's: a CO-S frame that
//! counts on it then fails its check and decodes by trial (held for confirmation), which is why
//! the compressor codes against it only on a link not known to lose frames. A decompressor's
//! value further behind than its trials reach is set right again by the next frame of the pair
//! that carries IP-ID bits (CO-I, CO-N, IR-N): the compressor sends at most [`PAIR_RUN`] CO-S
//! frames in a row that count on it.

/// CO-S frames of a pair in a row that count on the pair's last IP-ID, at most; the next frame
/// carries IP-ID bits (a CO-I frame at least).
pub const PAIR_RUN: u8 = 8;

/// Pairs kept by each end (least recently used replaced).
pub const PAIRS: usize = 8;

/// A pair's key: the IPv4 source and destination addresses and the protocol.
pub type PairKey = [u8; 9];

/// The key of the IPv4 header `header` (at least 20 octets).
pub fn key_of(header: &[u8]) -> PairKey {
    let mut key = [0; 9];
    key[..8].copy_from_slice(&header[12..20]);
    key[8] = header[9];
    key
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: PairKey,
    ip_id: u16,
    run: u8,
    used: u64,
    live: bool,
}

/// The last IP-ID of each of the last [`PAIRS`] pairs seen: a fixed table, no allocation.
#[derive(Debug, Clone, Default)]
pub struct Pairs {
    slots: [Slot; PAIRS],
    clock: u64,
}

impl Pairs {
    /// The last IP-ID recorded for `key`, if the table holds it.
    pub fn get(&self, key: &PairKey) -> Option<u16> {
        self.slot(key).map(|s| s.ip_id)
    }

    /// The frames in a row of `key` that counted on the pair's last IP-ID (the compressor's
    /// count, [`Pairs::set_run`]).
    pub fn run(&self, key: &PairKey) -> u8 {
        self.slot(key).map_or(0, |s| s.run)
    }

    fn slot(&self, key: &PairKey) -> Option<&Slot> {
        self.slots.iter().find(|s| s.live && s.key == *key)
    }

    /// Records `ip_id` as the last IP-ID of `key` and `implicit` whether its frame counted on
    /// the pair's last IP-ID (else it carried IP-ID bits).
    pub fn set_run(&mut self, key: &PairKey, ip_id: u16, implicit: bool) {
        let run = if implicit {
            self.run(key).saturating_add(1)
        } else {
            0
        };
        let i = self.put(key, ip_id);
        self.slots[i].run = run;
    }

    /// Records `ip_id` as the last IP-ID of `key`.
    pub fn set(&mut self, key: &PairKey, ip_id: u16) {
        self.put(key, ip_id);
    }

    /// Puts `ip_id` in `key`'s slot (its own, else a free one, else the least recently used
    /// one), with no run, and returns the slot's index.
    fn put(&mut self, key: &PairKey, ip_id: u16) -> usize {
        self.clock += 1;
        let i = self
            .slots
            .iter()
            .position(|s| s.live && s.key == *key)
            .or_else(|| self.slots.iter().position(|s| !s.live))
            .unwrap_or_else(|| (0..PAIRS).min_by_key(|&i| self.slots[i].used).unwrap_or(0));
        self.slots[i] = Slot {
            key: *key,
            ip_id,
            run: 0,
            used: self.clock,
            live: true,
        };
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_set_pair_goes() {
        let mut p = Pairs::default();
        let key = |i: u8| [10, 0, 0, i, 10, 0, 0, 2, 17];
        for i in 0..PAIRS as u8 {
            p.set(&key(i), u16::from(i));
        }
        p.set(&key(0), 100);
        p.set(&key(200), 7);
        assert_eq!(p.get(&key(0)), Some(100));
        assert_eq!(p.get(&key(1)), None);
        assert_eq!(p.get(&key(200)), Some(7));
        let mut h = [0u8; 20];
        h[9] = 17;
        h[12..20].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(key_of(&h), [1, 2, 3, 4, 5, 6, 7, 8, 17]);
    }
}
