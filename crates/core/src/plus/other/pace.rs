//! An RTP context's pace at the decompressor: when its reference arrived, how much time one
//! sequence number takes, and how far the IPv4 Identification moves per sequence number, as the
//! frames decoded at once showed over spans of [`SPAN`] sequence numbers (a sender that stalls
//! and then sends what it held back keeps its pace over a span, not between two packets). After
//! a loss longer than a CO-S or CO-I frame's trials reach (`4 * SHORT_TRIALS` packets), the
//! time since the reference says how many packets the flow sent meanwhile at most: a voice call
//! sends one every 20 ms whatever the link did, later only if it stalled. The decompressor then
//! tries the sequence advances near that count whose LSBs are the frame's, then the lower ones
//! (and, for a CO-I frame, the IP-IDs its own trials reach and those near where the pace puts
//! it), each held for confirmation as any decoding by trial (spec section 8, *guided trials*).
//! Nothing goes on the wire for it.

use core::time::Duration;

use super::fields::{decode_lsb6, Dynamic, State};
use super::head::{Form, Head};
use super::{Shape, ID_TRIALS, SHORT_TRIALS};

/// Sequence advances a guided trial reaches on each side of the one the time says.
pub const SEQ_SLACK: u16 = 6;

/// IP-IDs a guided trial of a CO-I frame reaches on each side of the one the pace says.
pub const ID_SLACK: u16 = 96;

/// The weight of a new sample in the learnt pace (1/4).
const NEW_SHARE: u32 = 4;

/// The fewest sequence numbers a sample of the pace spans: a sender that stalls and then sends
/// what it held back at once keeps its pace over such a span, not between two packets.
const SPAN: u16 = 64;

/// The most sequence numbers a sample of the pace spans (beyond, the IP-ID's advance may have
/// wrapped): a longer step starts a new span.
const MAX_SPAN: u16 = 1024;

/// A context's pace: see the module.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pace {
    /// When the reference arrived (the decompressor's time then).
    at: Duration,
    /// Where the current sample began: the time, the sequence number and the IP-ID of a frame
    /// decoded at once.
    from: Option<(Duration, u16, u16)>,
    /// Microseconds per sequence number (0: not known yet).
    gap: u32,
    /// IP-ID advance per sequence number, in sixteenths (0: not known yet).
    ids: u32,
    /// Whether a sample of [`SPAN`] sequence numbers or more was learnt.
    spanned: bool,
}

impl Pace {
    /// A pace whose reference arrived at `at`, nothing learnt yet.
    pub fn new(at: Duration) -> Pace {
        Pace {
            at,
            ..Pace::default()
        }
    }

    /// A frame decoded at once at `now` made the packet of sequence number `seq` and IP-ID
    /// `ip_id` the reference: once [`SPAN`] sequence numbers have passed since the sample
    /// began (the first time, one), the pace learns the time and the IP-IDs they took, and a
    /// new sample begins.
    pub fn learn(&mut self, now: Duration, seq: u16, ip_id: u16) {
        self.at = now;
        let Some((t, s, i)) = self.from else {
            self.from = Some((now, seq, ip_id));
            return;
        };
        let span = seq.wrapping_sub(s);
        if span == 0 || (span < SPAN && self.gap != 0) {
            return;
        }
        if span <= MAX_SPAN && now > t {
            let micros = u32::try_from((now - t).as_micros()).unwrap_or(u32::MAX);
            let n = u32::from(span);
            let (gap, ids) = (micros / n, u32::from(ip_id.wrapping_sub(i)) * 16 / n);
            // The first full span's sample replaces the first step's.
            (self.gap, self.ids) = if self.spanned {
                (mix(self.gap, gap), mix(self.ids, ids))
            } else {
                (gap, ids)
            };
            self.spanned = span >= SPAN;
        }
        self.from = Some((now, seq, ip_id));
    }

    /// The reference moved on at `now`, decoded by trial or set up: nothing learnt.
    pub fn moved(&mut self, now: Duration) {
        self.at = now;
    }

    /// The sequence advances whose two LSBs, added to the reference's sequence number `seq`,
    /// are `lsb`, from `reach` on (what the frame's own trials tried) up to [`SEQ_SLACK`] beyond
    /// the advance the time since the reference says: those within [`SEQ_SLACK`] of it first,
    /// in increasing order, then the lower ones, nearest first (a sender that stalled sends
    /// late, never early); none if the pace is not known.
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
        let (near, hi) = match said {
            Some(said) => (
                said.saturating_sub(SEQ_SLACK).max(reach),
                said.saturating_add(SEQ_SLACK),
            ),
            None => (reach, 0),
        };
        let below = (reach..near.min(hi.saturating_add(1))).rev();
        (near..=hi)
            .chain(below)
            .filter(move |&n| seq.wrapping_add(n) & 3 == u16::from(lsb))
    }

    /// The IP-ID the pace puts `n` sequence numbers after the reference's `ip_id`.
    pub fn ip_id(&self, ip_id: u16, n: u16) -> u16 {
        let moved = u32::from(n) * self.ids / 16;
        ip_id.wrapping_add(moved as u16)
    }
}

/// The most decodings a frame is tried with by the time since its reference.
pub const MAX_DECODINGS: usize = 96;

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
            // The IP-IDs the frame's own trials reach, then those near where the pace puts it
            // beyond them.
            let first = decode_lsb6(r.ip_id, ip_id);
            let reached = 64 * ID_TRIALS;
            for n in pace.advances(now, r.seq, lsb, reach) {
                let fields = state.advanced(s, n);
                let own = (0..ID_TRIALS).map(|k| first.wrapping_add(64 * k));
                let paced = ip_ids_near(pace.ip_id(r.ip_id, n), ip_id)
                    .filter(|id| id.wrapping_sub(first) >= reached);
                for id in own.chain(paced) {
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
    fn the_pace_is_learnt_over_spans_and_says_how_far_a_long_loss_went() {
        let mut p = Pace::new(ms(0));
        assert_eq!(p.advances(ms(2000), 0, 0, 64).count(), 0);
        p.learn(ms(0), 100, 1000);
        assert_eq!(p.advances(ms(2000), 0, 0, 64).count(), 0);
        // The first step gives a pace at once.
        p.learn(ms(20), 101, 1003);
        assert_eq!((p.gap, p.ids), (20_000, 48));
        // The sender stalls 600 ms and sends what it held back at once: over the 64 sequence
        // numbers that follow the pace is the same.
        p.learn(ms(620), 102, 1006);
        p.learn(ms(621), 131, 1093);
        p.learn(ms(1300), 165, 1195);
        assert_eq!((p.gap, p.ids), (20_000, 48));
        // The first full span replaces the first step.
        let mut q = Pace::new(ms(0));
        q.learn(ms(0), 0, 0);
        q.learn(ms(1), 1, 1);
        q.learn(ms(1281), 65, 193);
        assert_eq!((q.gap, q.ids), (20_000, 48));
        // A step that wraps the IP-ID's count is not learnt.
        p.learn(ms(30_000), 1500, 0);
        p.moved(ms(31_200));
        // 1.8 s later: 90 packets on; the advances with LSBs 2 from seq 0, those within 6 of it
        // first, then the lower ones down to what the frame's own trials reached.
        let a: alloc::vec::Vec<u16> = p.advances(ms(33_000), 0, 2, 64).collect();
        assert_eq!(a, [86, 90, 94, 82, 78, 74, 70, 66]);
        assert_eq!(p.ip_id(1000, 90), 1270);
        // Not below what the frame's own trials reached.
        assert_eq!(p.advances(ms(31_300), 0, 1, 64).count(), 0);
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
