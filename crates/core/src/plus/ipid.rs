//! The IPv4 Identification's behaviour per flow, and the value W-LSB codes for it.
//!
//! A sequential IP-ID (one counter per socket, as Linux sends with DF set) moves by one per
//! packet, as does the scaled sequence number of a bulk sender: their difference, the
//! *offset*, stays put, and costs no bits. (A receiver's ACKs keep their sequence number: the
//! offset is then the counter itself, which W-LSB codes in a few bits.) A
//! byte-swapped counter (little-endian hosts that forget `htons`) is swapped back first; an
//! IP-ID that is always zero (and IPv6's absent one) costs nothing; a random one travels whole.

use crate::tcp::packet::Fields;
use crate::tcp::vsw::{is_older, Vsw};

use super::compressor::MIN_WINDOW_PACKETS;
use super::window::{Derived, DerivedColumns};

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

    /// Whether IP-IDs of this behaviour are a counter, coded as an [`offset`] (the others code
    /// none: zero sends nothing, random all 16 bits).
    pub fn is_counter(self) -> bool {
        matches!(self, Behaviour::Sequential | Behaviour::Swapped)
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

/// The derived values `derived` of a packet `f` just sent, as its window entry keeps them: with
/// the IP-ID offset of the newest entry instead of its own if the packet went CO and is older
/// ([`is_older`]) than every entry of `vsw`, or than [`MIN_WINDOW_PACKETS`] of them.
///
/// The decompressor takes a packet as its reference only if it is not older than its reference.
/// Its reference is one of the window's entries, and it loses none of the newest
/// [`MIN_WINDOW_PACKETS`] unless it misses that many packets in a row (which the window, pruned
/// down to that many entries, does not survive either): such a packet (a retransmission of a
/// segment sent a window ago) does not become its reference, so later packets need not code
/// their IP-ID against its offset. A retransmission's offset is far from the flow's (its counter
/// moved on while its sequence number went back): against it, the next window's worth of
/// segments would need the 16-bit code. The entry keeps the newest entry's offset rather than
/// none, which the window's columns cannot express: a value already in the window widens no
/// span. (An IR always becomes the reference; extras derived anew, after a change of strides or
/// behaviour, have every entry's own offset again, which costs bits but never a wrong decode.)
pub fn window_offset(
    vsw: &Vsw<DerivedColumns>,
    f: &Fields,
    derived: Derived,
    compressed: bool,
) -> Derived {
    // Nothing is newer than the frontier: a packet not older than it (new data, an ACK) is
    // older than no entry.
    let (seq, ack) = vsw.frontier();
    if !compressed || vsw.is_empty() || !is_older(f.seq, f.ack, seq, ack) {
        return derived;
    }
    let newer = vsw.newer_than(f);
    let never_reference = newer > 0 && newer >= MIN_WINDOW_PACKETS.min(vsw.len());
    match vsw.extras().offsets().last() {
        Some(&newest) if never_reference => derived.with_offset(newest),
        _ => derived,
    }
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
    use crate::plus::scaled::Strides;
    use crate::plus::window::{Scaler, Scaling};
    use crate::tcp::vsw::{Entry, Progress};

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

    /// A bulk sender's window of segments `from..to` of 1000 bytes (stride 1000, segment `i` at
    /// sequence number `1000 * i`, IP-ID `100 + i`): every offset is 100.
    fn window(from: u32, to: u32) -> (Vsw<DerivedColumns>, Scaler) {
        let scaler = Scaler::new(Scaling {
            strides: Strides { seq: 1000, ack: 0 },
            behaviour: Behaviour::Sequential,
        });
        let mut vsw = Vsw::with_extras(16, Progress::SincePush);
        for i in from..to {
            let f = segment(i, 100 + i as u16);
            vsw.push_with(entry(f), scaler.derive(&f));
        }
        (vsw, scaler)
    }

    fn segment(i: u32, ip_id: u16) -> Fields {
        Fields {
            seq: 1000 * i,
            ack: 7,
            ip_id,
            ..Fields::default()
        }
    }

    fn entry(fields: Fields) -> Entry {
        Entry {
            fields,
            has_payload: true,
            uncompressed: false,
        }
    }

    #[test]
    fn a_retransmission_no_reference_can_take_keeps_the_newest_offset() {
        let (vsw, scaler) = window(0, 12);
        let offset =
            |f: &Fields, compressed| window_offset(&vsw, f, scaler.derive(f), compressed).offset();
        // Segment 2 again, after the 12 segments (counter 112): older than 9 entries.
        let again = segment(2, 112);
        assert_eq!(scaler.derive(&again).offset(), 110);
        assert_eq!(offset(&again, true), 100);
        // Sent as IR, it becomes the reference: its own offset.
        assert_eq!(offset(&again, false), 110);
        // Segment 5 again: older than only 6 entries, which the decompressor may all lose.
        let recent = segment(5, 112);
        assert_eq!(offset(&recent, true), 107);
        // The next new segment keeps its own offset, one above the flow's.
        let next = segment(12, 113);
        assert_eq!(offset(&next, true), 101);
        // In a window of fewer entries, older than all of them.
        let (small, scaler) = window(1, 5);
        let old = segment(0, 105);
        assert_eq!(
            window_offset(&small, &old, scaler.derive(&old), true).offset(),
            100
        );
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
