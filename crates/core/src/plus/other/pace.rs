//! An RTP context's pace at the decompressor: when its reference arrived, how much time one
//! sequence number takes, and how far the IPv4 Identification moves per sequence number, as the
//! frames decoded at once showed. After a loss longer than a CO-S or CO-I frame's trials reach
//! (`4 * SHORT_TRIALS` packets), the time since the reference says how many packets the flow
//! sent meanwhile: a voice call sends one every 20 ms whatever the link did. The decompressor
//! then tries the few sequence advances near that count whose LSBs are the frame's (and, for a
//! CO-I frame, the IP-IDs near where the pace puts it), each held for confirmation as any
//! decoding by trial (spec section 8, *guided trials*). Nothing goes on the wire for it.

use core::time::Duration;

use super::fields::{Dynamic, State};
use super::head::{Form, Head};
use super::{Shape, SHORT_TRIALS};

/// Sequence advances a guided trial reaches on each side of the one the time says.
pub const SEQ_SLACK: u16 = 6;

/// IP-IDs a guided trial of a CO-I frame reaches on each side of the one the pace says.
pub const ID_SLACK: u16 = 96;

/// The weight of a new sample in the learnt pace (1/4).
const NEW_SHARE: u32 = 4;

/// A context's pace: see the module.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pace {
    /// When the reference arrived (the decompressor's time then).
    at: Duration,
    /// Microseconds per sequence number (0: not known yet).
    gap: u32,
    /// IP-ID advance per sequence number, in sixteenths (0: not known yet).
    ids: u32,
}

impl Pace {
    /// A pace whose reference arrived at `at`, nothing learnt yet.
    pub fn new(at: Duration) -> Pace {
        Pace {
            at,
            ..Pace::default()
        }
    }

    /// The reference moved on at `now` by `n` sequence numbers and `ip_ids` IP-IDs, decoded at
    /// once: the pace learns from it if `n` is small (a short loss, no pause of the sender
    /// mistaken for a pace).
    pub fn learn(&mut self, now: Duration, n: u16, ip_ids: u16) {
        if (1..=4).contains(&n) && now >= self.at {
            let micros = u32::try_from((now - self.at).as_micros()).unwrap_or(u32::MAX);
            let gap = micros / u32::from(n);
            let ids = u32::from(ip_ids) * 16 / u32::from(n);
            self.gap = mix(self.gap, gap);
            self.ids = mix(self.ids, ids);
        }
        self.at = now;
    }

    /// The reference moved on at `now`, decoded by trial or set up: nothing learnt.
    pub fn moved(&mut self, now: Duration) {
        self.at = now;
    }

    /// The sequence advances whose two LSBs, added to the reference's sequence number `seq`,
    /// are `lsb`, within [`SEQ_SLACK`] of the advance the time since the reference says, from
    /// `reach` on (what the frame's own trials tried), in increasing order; none if the pace is
    /// not known.
    pub fn advances(
        &self,
        now: Duration,
        seq: u16,
        lsb: u8,
        reach: u16,
    ) -> impl Iterator<Item = u16> {
        let said = (self.gap != 0 && now > self.at)
            .then(|| u16::try_from((now - self.at).as_micros() / u128::from(self.gap)).ok())
            .flatten();
        let (lo, hi) = match said {
            Some(said) => (
                said.saturating_sub(SEQ_SLACK).max(reach),
                said.saturating_add(SEQ_SLACK),
            ),
            None => (1, 0),
        };
        (lo..=hi).filter(move |&n| seq.wrapping_add(n) & 3 == u16::from(lsb))
    }

    /// The IP-ID the pace puts `n` sequence numbers after the reference's `ip_id`.
    pub fn ip_id(&self, ip_id: u16, n: u16) -> u16 {
        let moved = u32::from(n) * self.ids / 16;
        ip_id.wrapping_add(moved as u16)
    }
}

/// The most decodings a frame is tried with by the time since its reference.
pub const MAX_DECODINGS: usize = 32;

/// The decodings of a frame by the time since its reference ([`guided`]).
#[derive(Debug, Clone, Copy)]
pub struct Guided {
    decodings: [Dynamic; MAX_DECODINGS],
    len: usize,
}

impl Guided {
    /// The fields of the `i`th decoding against the reference `state`, and its state after
    /// it, if there is one.
    pub fn get(&self, i: usize, state: &State) -> Option<(Dynamic, State)> {
        let fields = *self.decodings[..self.len].get(i)?;
        Some((fields, State { fields, ..*state }))
    }

    fn push(&mut self, fields: Dynamic) {
        if self.len < MAX_DECODINGS {
            self.decodings[self.len] = fields;
            self.len += 1;
        }
    }
}

/// The decodings of the CO-S or CO-I frame `head` of an RTP context (of shape `s`, reference
/// `state`, pace `pace`) at `now` by the time since its reference: for each sequence advance
/// [`Pace::advances`] gives beyond the frame's own trials, the packet that far on (a CO-I
/// frame's IP-ID each value near where the pace puts it with the frame's six LSBs). None in
/// frame mode, for a CO-S frame in pair mode (its IP-ID is the pair's last's), or for a CO-N
/// frame (its fields are in it).
pub fn guided(head: &Head, s: Shape, state: &State, pace: &Pace, now: Duration) -> Guided {
    let mut out = Guided {
        decodings: [Dynamic::default(); MAX_DECODINGS],
        len: 0,
    };
    if !s.rtp || state.frame {
        return out;
    }
    // The frame's own trials reach 4 * SHORT_TRIALS sequence numbers on.
    let reach = 4 * SHORT_TRIALS + 1;
    let r = &state.fields;
    match head.form {
        Form::Short { lsb } if !state.pair => {
            for n in pace.advances(now, r.seq, lsb, reach) {
                out.push(state.advanced(s, n));
            }
        }
        Form::Id { lsb, ip_id } if s.own_ip_id() => {
            for n in pace.advances(now, r.seq, lsb, reach) {
                let fields = state.advanced(s, n);
                for id in ip_ids_near(pace.ip_id(r.ip_id, n), ip_id) {
                    out.push(Dynamic {
                        ip_id: id,
                        ..fields
                    });
                }
            }
        }
        _ => {}
    }
    out
}

/// `old` moved a quarter of the way to `new` (`new` if `old` is 0).
fn mix(old: u32, new: u32) -> u32 {
    if old == 0 {
        new
    } else {
        old - old / NEW_SHARE + new / NEW_SHARE
    }
}

/// The values within [`ID_SLACK`] of `around` whose six LSBs are `lsbs`, the lowest first (at
/// most four).
pub fn ip_ids_near(around: u16, lsbs: u8) -> impl Iterator<Item = u16> {
    let lo = around.wrapping_sub(ID_SLACK);
    let first = lo.wrapping_add(u16::from(lsbs).wrapping_sub(lo) & 0x3F);
    (0..4u16)
        .map(move |i| first.wrapping_add(64 * i))
        .filter(move |v| v.wrapping_sub(lo) <= 2 * ID_SLACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Duration {
        Duration::from_millis(m)
    }

    #[test]
    fn the_pace_is_learnt_from_short_steps_and_says_how_far_a_long_loss_went() {
        let mut p = Pace::new(ms(0));
        assert_eq!(p.advances(ms(2000), 0, 0, 64).count(), 0);
        for i in 1..=10 {
            p.learn(ms(20 * i), 1, 3);
        }
        // A pause is not learnt.
        p.learn(ms(20 * 10 + 1000), 50, 150);
        p.moved(ms(1200));
        // 1.8 s later: 90 packets on; the advances within 6 of it with LSBs 2 from seq 0.
        let a: alloc::vec::Vec<u16> = p.advances(ms(3000), 0, 2, 64).collect();
        assert_eq!(a, [86, 90, 94]);
        assert_eq!(p.ip_id(1000, 90), 1270);
        // Not below what the frame's own trials reached.
        assert_eq!(p.advances(ms(1300), 0, 1, 64).count(), 0);
    }

    #[test]
    fn ip_ids_near_a_value_have_its_lsbs() {
        let v: alloc::vec::Vec<u16> = ip_ids_near(1000, 0x2A).collect();
        assert!(v.iter().all(|x| x & 0x3F == 0x2A));
        assert!(v.iter().all(|&x| x.abs_diff(1000) <= ID_SLACK));
        assert_eq!(v.len(), 3);
        // Across the wrap.
        let w: alloc::vec::Vec<u16> = ip_ids_near(10, 0x3F).collect();
        assert!(w.contains(&0xFFFF) && w.contains(&63));
    }
}
