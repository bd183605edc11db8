//! The IPv4 Identification's behaviour per flow, and the value W-LSB codes for it.
//!
//! A sequential IP-ID (one counter per socket, as Linux sends with DF set) moves by one per
//! packet, as does the scaled sequence number of a bulk sender: their difference, the
//! *offset*, stays put, and costs no bits. (A receiver's ACKs keep their sequence number: the
//! offset is then the counter itself, which W-LSB codes in a few bits.) A
//! byte-swapped counter (little-endian hosts that forget `htons`) is swapped back first; an
//! IP-ID that is always zero (and IPv6's absent one) costs nothing; a random one travels whole.

/// How a flow's IP-ID behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Behaviour {
    /// A counter: coded as an offset from the scaled sequence and acknowledgment numbers.
    #[default]
    Sequential,
    /// A counter in the wrong byte order: swapped, then coded as [`Behaviour::Sequential`].
    Swapped,
    /// Always zero (and IPv6, which has none): nothing is sent.
    Zero,
    /// Anything else: all 16 bits are sent.
    Random,
}

impl Behaviour {
    /// The two-bit code of this behaviour in an IR frame's context flags.
    pub fn code(self) -> u8 {
        match self {
            Behaviour::Sequential => 0,
            Behaviour::Swapped => 1,
            Behaviour::Zero => 2,
            Behaviour::Random => 3,
        }
    }

    /// The behaviour of a two-bit code.
    pub fn of_code(code: u8) -> Behaviour {
        match code & 0x03 {
            0 => Behaviour::Sequential,
            1 => Behaviour::Swapped,
            2 => Behaviour::Zero,
            _ => Behaviour::Random,
        }
    }

    /// The counter value of `ip_id` under this behaviour (byte-swapped for
    /// [`Behaviour::Swapped`]).
    pub fn counter(self, ip_id: u16) -> u16 {
        match self {
            Behaviour::Swapped => ip_id.swap_bytes(),
            _ => ip_id,
        }
    }

    /// The IP-ID whose counter value is `counter` (the inverse of [`Behaviour::counter`]).
    pub fn ip_id(self, counter: u16) -> u16 {
        self.counter(counter)
    }
}

/// The offset LSBs code for a sequential IP-ID: its counter minus the scaled sequence number
/// (`qs`; 0 without a sequence stride), mod 2^16.
pub fn offset(counter: u16, qs: u32) -> u16 {
    counter.wrapping_sub(qs as u16)
}

/// The counter value of an `offset` (the inverse of [`offset`]).
pub fn counter(offset: u16, qs: u32) -> u16 {
    offset.wrapping_add(qs as u16)
}

/// An IP-ID step at most this large (either way) between consecutive packets is a counter's.
const COUNTER_STEP: i16 = 255;

/// Consecutive packets a new behaviour must show before the flow is taken to have it.
const VOTES: u8 = 3;

/// The compressor's watch over a flow's IP-IDs: which behaviour they show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detector {
    last: u16,
    candidate: Behaviour,
    votes: u8,
}

impl Detector {
    /// A watch whose first IP-ID is `ip_id`.
    pub fn new(ip_id: u16) -> Detector {
        Detector {
            last: ip_id,
            candidate: Behaviour::Sequential,
            votes: 0,
        }
    }

    /// The behaviour a flow starts with: zero for IPv6 and a zero IP-ID, else sequential.
    pub fn initial(v4: bool, ip_id: u16) -> Behaviour {
        if !v4 || ip_id == 0 {
            Behaviour::Zero
        } else {
            Behaviour::Sequential
        }
    }

    /// Sees the next IP-ID of a flow now coded as `current`; returns the behaviour to switch to,
    /// if the flow no longer shows `current`. A nonzero IP-ID under [`Behaviour::Zero`] switches
    /// at once (zero cannot code it).
    pub fn observe(&mut self, ip_id: u16, current: Behaviour) -> Option<Behaviour> {
        let step = ip_id.wrapping_sub(self.last) as i16;
        let swapped = ip_id.swap_bytes().wrapping_sub(self.last.swap_bytes()) as i16;
        let seen = if ip_id == 0 && self.last == 0 {
            Behaviour::Zero
        } else if (-COUNTER_STEP..=COUNTER_STEP).contains(&step) {
            Behaviour::Sequential
        } else if (-COUNTER_STEP..=COUNTER_STEP).contains(&swapped) {
            Behaviour::Swapped
        } else {
            Behaviour::Random
        };
        self.last = ip_id;
        if current == Behaviour::Zero && ip_id != 0 {
            self.votes = 0;
            return Some(if seen == Behaviour::Zero {
                Behaviour::Sequential
            } else {
                seen
            });
        }
        if seen == current {
            self.votes = 0;
            return None;
        }
        if seen == self.candidate {
            self.votes = self.votes.saturating_add(1);
        } else {
            (self.candidate, self.votes) = (seen, 1);
        }
        (self.votes >= VOTES).then(|| {
            self.votes = 0;
            seen
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_invert_and_codes_round_trip() {
        for b in [
            Behaviour::Sequential,
            Behaviour::Swapped,
            Behaviour::Zero,
            Behaviour::Random,
        ] {
            assert_eq!(Behaviour::of_code(b.code()), b);
            assert_eq!(b.ip_id(b.counter(0x1234)), 0x1234);
        }
        let off = offset(7, 100_000);
        assert_eq!(counter(off, 100_000), 7);
    }

    #[test]
    fn detector_follows_the_flow() {
        let mut d = Detector::new(100);
        assert_eq!(d.observe(101, Behaviour::Sequential), None);
        // Swapped counters: three votes switch.
        let mut d = Detector::new(0x0100);
        assert_eq!(d.observe(0x0200, Behaviour::Sequential), None);
        assert_eq!(d.observe(0x0300, Behaviour::Sequential), None);
        assert_eq!(
            d.observe(0x0400, Behaviour::Sequential),
            Some(Behaviour::Swapped)
        );
        // A nonzero IP-ID under Zero switches at once.
        let mut d = Detector::new(0);
        assert_eq!(d.observe(5, Behaviour::Zero), Some(Behaviour::Sequential));
        assert_eq!(Detector::initial(false, 9), Behaviour::Zero);
        assert_eq!(Detector::initial(true, 9), Behaviour::Sequential);
    }
}
