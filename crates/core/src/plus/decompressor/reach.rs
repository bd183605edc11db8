//! How far each field of a CO frame reached from its reference ([`Reach`]), from the LSBs each
//! took ([`Codes`]): what decides whether one frame vouches for the packet of another (spec
//! sections 5.8 and 5.9).

use crate::plus::scaled::Strides;

/// How many LSBs each field of a CO frame took (0: not coded, the reference's value), and
/// whether the numbers went scaled: recorded as the frame is read, turned into a [`Reach`] only
/// for a frame held or confirming one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Codes {
    pub(super) seq: (u8, bool),
    pub(super) ack: (u8, bool),
    pub(super) ip_id: u8,
    pub(super) ts_val: u8,
    pub(super) ts_ecr: u8,
    pub(super) win: u8,
    pub(super) outer_id: u8,
}

impl Codes {
    /// How far the codes reach, the numbers scaled by `strides` where they went scaled.
    pub(super) fn reach(&self, strides: Strides) -> Reach {
        let number =
            |(bits, scaled): (u8, bool), stride: u16| reach(bits, if scaled { stride } else { 1 });
        Reach {
            seq: number(self.seq, strides.seq),
            ack: number(self.ack, strides.ack),
            ip_id: reach(self.ip_id, 1),
            ts_val: reach(self.ts_val, 1),
            ts_ecr: reach(self.ts_ecr, 1),
            win: reach(self.win, 1),
            outer_id: reach(self.outer_id, 1),
        }
    }
}

/// How far each field of a CO frame reached from its reference: the width of the interval its
/// LSBs decode in, in the field's own units (a scaled number's stride counted), 0 for a field
/// the frame does not code (the reference's value). A packet decoded wrong against a stale
/// reference is off by a multiple of its code's reach in some field; a later frame confirms
/// it as a whole only if no field of the later frame reaches further ([`Reach::within`]), so
/// that no such error can fall inside the later frame's interval unnoticed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Reach {
    seq: u64,
    ack: u64,
    ip_id: u64,
    ts_val: u64,
    ts_ecr: u64,
    win: u64,
    outer_id: u64,
}

impl Reach {
    /// Whether no field of `self` reaches further than in `other`.
    pub(super) fn within(&self, other: &Reach) -> bool {
        self.seq <= other.seq
            && self.ack <= other.ack
            && self.ip_id <= other.ip_id
            && self.ts_val <= other.ts_val
            && self.ts_ecr <= other.ts_ecr
            && self.win <= other.win
            && self.outer_id <= other.outer_id
    }

    /// Whether the fields of `self` that reach further than in `held` are only numbers that
    /// never go down from a packet to the next (the sequence and acknowledgment numbers and
    /// the timestamp) and that `held` coded: a held packet decoded wrong in such a field is
    /// below its true value (its frame decoded against a stale, older reference), and the
    /// held frame decoded in the mirrored interval of the frame after it then rebuilds the
    /// true value, not the held one ([`decode_before`](super::co::decode_before)).
    pub(super) fn back_checked(&self, held: &Reach) -> bool {
        let ok =
            |mine: u64, theirs: u64, monotonic: bool| mine <= theirs || (monotonic && theirs > 0);
        ok(self.seq, held.seq, true)
            && ok(self.ack, held.ack, true)
            && ok(self.ts_val, held.ts_val, true)
            && ok(self.ip_id, held.ip_id, false)
            && ok(self.ts_ecr, held.ts_ecr, false)
            && ok(self.win, held.win, false)
            && ok(self.outer_id, held.outer_id, false)
    }
}

/// The reach of `bits` LSBs of a value in units of `unit`.
fn reach(bits: u8, unit: u16) -> u64 {
    match bits {
        0 => 0,
        b => (1u64 << b.min(32)) * u64::from(unit.max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_frame_vouches_for_a_held_packet_only_if_its_codes_reach_no_further() {
        let strides = Strides { seq: 1448, ack: 0 };
        // The held frame: its sequence number scaled, 4 bits of 1448, and 3 IP-ID bits.
        let held = Codes {
            seq: (4, true),
            ip_id: 3,
            ..Codes::default()
        }
        .reach(strides);
        assert_eq!(held.seq, 16 * 1448);
        let narrower = Codes {
            seq: (2, true),
            ip_id: 3,
            ..Codes::default()
        };
        assert!(narrower.reach(strides).within(&held));
        // 16 LSBs of the unscaled number reach across an alias of the held one's 4 scaled bits.
        let wider = Codes {
            seq: (16, false),
            ..narrower
        };
        assert!(!wider.reach(strides).within(&held));
        // A field the held frame did not code (its value the stale reference's).
        let ts = Codes {
            ts_val: 1,
            ..narrower
        };
        assert!(!ts.reach(strides).within(&held));
        assert!(Reach::default().within(&Reach::default()));
    }
}
