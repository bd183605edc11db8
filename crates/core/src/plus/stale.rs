//! What shows that a decompressor may have lost its reference (specification section 5.8): a
//! packet further than the compressor's window reaches, in packets, from what the flow's
//! previous packet left: its own IP-ID (a counter counts every packet sent, retransmissions
//! too) and the numbers of the reference a CO frame is decoded against (the newest packet by
//! sequence and then acknowledgment number, which a retransmission does not move). Both ends
//! follow each packet the same way (the compressor: sent; the decompressor: delivered), so on
//! a link that loses nothing they agree, and the compressor sends the check on exactly the
//! frames the decompressor would otherwise hold back.

use super::window::Scaling;
use crate::tcp::vsw::is_older;

/// What a packet leaves to compare the next one with: its own IP-ID, and the numbers of the
/// reference after it ([`Trace::after`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trace {
    /// Its IPv4 Identification.
    pub ip_id: u16,
    /// Its next sequence number (its sequence number plus its payload's length, plus one for
    /// FIN).
    pub next: u32,
    /// Its acknowledgment number.
    pub ack: u32,
}

impl Trace {
    /// What a packet of trace `now` leaves after the one that left `self`: its own IP-ID, and
    /// its numbers unless it is older than `self`'s (it does not become the reference, spec
    /// section 5.7 step 6; a retransmission, say) and went as a CO frame (`full`: an IR frame
    /// sets the reference, older or not).
    pub fn after(self, now: Trace, full: bool) -> Trace {
        if full || !is_older(now.next, now.ack, self.next, self.ack) {
            now
        } else {
            Trace {
                ip_id: now.ip_id,
                ..self
            }
        }
    }
}

/// Whether `now` is more than `limit` packets from `last` either way, as far as the flow's
/// `scaling` shows it: its counter IP-ID (sequential or byte-swapped behaviour); else its next
/// sequence number over the sequence stride, or its acknowledgment number over the
/// acknowledgment stride. Never for a flow with neither a counter nor a stride.
pub fn jumped(scaling: Scaling, last: &Trace, now: &Trace, limit: u16) -> bool {
    let b = scaling.behaviour;
    if b.is_counter() {
        let step = b.counter(now.ip_id).wrapping_sub(b.counter(last.ip_id)) as i16;
        return step.unsigned_abs() > limit;
    }
    let far = |step: u32, stride: u16| {
        stride != 0 && (step as i32).unsigned_abs() / u32::from(stride) > u32::from(limit)
    };
    let s = scaling.strides;
    far(now.next.wrapping_sub(last.next), s.seq) || far(now.ack.wrapping_sub(last.ack), s.ack)
}

/// How many of a flow's last packets the compressor compares each packet with: a decompressor
/// that lost the flow's last packet compares the next one with the packet before it, and
/// holds it if it jumped from there. Pooled over the shared, unseen and twin captures (seeds
/// 1-5, 10% random loss), 51 frames held for a jump with one, 5 with two, 3 with three, for
/// 0.03-0.05 / 0.07-0.11 more octets per packet on a clean link with two / three (the IPv6
/// bulk captures, whose jumps then carry the check), nothing elsewhere over 0.02.
pub const RECENT: usize = 2;

/// The traces of a flow's last [`RECENT`] packets (the compressor's side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recent {
    traces: [Trace; RECENT],
}

impl Recent {
    /// A flow whose only packet so far left `first`.
    pub fn new(first: Trace) -> Recent {
        Recent {
            traces: [first; RECENT],
        }
    }

    /// Whether `now` jumped ([`jumped`]) from any of the last packets.
    pub fn jumped(&self, scaling: Scaling, now: &Trace, limit: u16) -> bool {
        self.traces
            .iter()
            .any(|last| jumped(scaling, last, now, limit))
    }

    /// Records the packet of trace `now`, sent as a full header if `full` ([`Trace::after`]).
    pub fn push(&mut self, now: Trace, full: bool) {
        let after = self.traces[0].after(now, full);
        self.traces.copy_within(..RECENT - 1, 1);
        self.traces[0] = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plus::ipid::Behaviour;
    use crate::plus::scaled::Strides;

    fn scaling(behaviour: Behaviour, seq: u16, ack: u16) -> Scaling {
        Scaling {
            strides: Strides { seq, ack },
            behaviour,
        }
    }

    #[test]
    fn a_counter_jumps_by_its_packets_and_a_stride_by_its_segments() {
        let last = Trace {
            ip_id: 0xFFF0,
            next: 1000,
            ack: 5000,
        };
        let at = |ip_id: u16, next: u32, ack: u32| Trace { ip_id, next, ack };
        let seq = scaling(Behaviour::Sequential, 1000, 0);
        // 16 packets on (wrapping) is within the limit, 17 not; backwards the same.
        assert!(!jumped(seq, &last, &at(0x0000, 90_000, 5000), 16));
        assert!(jumped(seq, &last, &at(0x0001, 1000, 5000), 16));
        assert!(jumped(seq, &last, &at(0xFFDF, 1000, 5000), 16));
        // Byte-swapped counts in the swapped value.
        let swapped = scaling(Behaviour::Swapped, 0, 0);
        let last_swapped = Trace {
            ip_id: 0x0100,
            ..last
        };
        assert!(!jumped(swapped, &last_swapped, &at(0x1000, 0, 0), 16));
        assert!(jumped(swapped, &last_swapped, &at(0x1200, 0, 0), 16));
        // No counter: the strides' segments, either number.
        let zero = scaling(Behaviour::Zero, 1000, 0);
        assert!(!jumped(zero, &last, &at(0, 17_999, 5000), 16));
        assert!(jumped(zero, &last, &at(0, 18_000, 5000), 16));
        assert!(jumped(
            zero,
            &last,
            &at(0, 1000u32.wrapping_sub(17_000), 5000),
            16
        ));
        let acks = scaling(Behaviour::Zero, 0, 100);
        assert!(jumped(acks, &last, &at(0, 1000, 6800), 16));
        assert!(!jumped(acks, &last, &at(0, 900_000, 6600), 16));
        // Neither: nothing shows.
        let none = scaling(Behaviour::Random, 0, 0);
        assert!(!jumped(none, &last, &at(1, 1 << 30, 1 << 30), 16));
    }

    #[test]
    fn an_older_packet_keeps_the_reference_unless_it_went_whole() {
        let reference = Trace {
            ip_id: 7,
            next: 50_000,
            ack: 900,
        };
        let older = Trace {
            ip_id: 8,
            next: 20_000,
            ack: 900,
        };
        // A retransmission as a CO frame: its own IP-ID, the reference's numbers.
        let kept = Trace {
            ip_id: 8,
            ..reference
        };
        assert_eq!(reference.after(older, false), kept);
        // As an IR frame it becomes the reference; a newer packet always does.
        assert_eq!(reference.after(older, true), older);
        let newer = Trace {
            next: 51_000,
            ..older
        };
        assert_eq!(reference.after(newer, false), newer);
        // The same next sequence number and a higher acknowledgment number is newer too.
        let acked = Trace {
            ack: 901,
            ..reference
        };
        assert_eq!(reference.after(acked, false), acked);
    }

    #[test]
    fn recent_jumps_from_any_of_the_last_packets() {
        let at = |ip_id: u16| Trace {
            ip_id,
            next: 0,
            ack: 0,
        };
        let seq = scaling(Behaviour::Sequential, 0, 0);
        let mut recent = Recent::new(at(100));
        recent.push(at(120), false);
        // 8 on from the last packet but 28 from the one before: a decompressor that lost the
        // last would hold it.
        assert!(recent.jumped(seq, &at(128), 16));
        recent.push(at(128), false);
        // Within reach of both 120 and 128; the first packet is no longer compared.
        assert!(!recent.jumped(seq, &at(130), 16));
        assert!(jumped(seq, &at(100), &at(130), 16));
    }
}
