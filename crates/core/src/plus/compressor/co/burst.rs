//! What a CO frame reaches across on a link known to lose bursts (without a reverse channel,
//! after a burst note, spec section 5.8): the numbers that show a jump, the timestamp and the
//! echo reply's gap reach further, and the codes of fields that move unevenly do not narrow
//! for a while ([`Floor`]).

use crate::plus::scaled::Strides;
use crate::plus::window::{Needs, Span};

/// How many packets of its flow a burst may take on a link known to lose frames (without a
/// reverse channel) before the first frame after it may decode near the last packet delivered,
/// with no jump to show the loss (spec section 5.8): the numbers that show jumps reach this
/// far in the frames of such a link.
pub(in crate::plus::compressor) const LOSSY_REACH: u32 = 128;

/// How many ticks the timestamp value of such a link's frames reaches: a burst of
/// [`LOSSY_REACH`] packets may last a second or more. The first frame after a burst whose
/// timestamp a burst took beyond its code, pooled over the shared, unseen and twin captures
/// (30% loss in bursts of mean 50, seeds 1-5), was 485 to 541 ticks past its reference where
/// the 9-bit code reaches 512.
const TS_REACH: u32 = 1024;

/// How far the echo reply's gap from the timestamp reaches in such a link's frames: past the
/// shortest gap code (2 bits of a bulk sender's), which reaches too little for a frame after a
/// burst to confirm or be confirmed by one next to it. Pooled over the shared, unseen and twin
/// captures (seeds 1-5), damage per 1000 intact frames at 30% loss in bursts of mean 50 went
/// 7.838 -> 7.441, for 0.005 octets per packet there.
const ECHO_GAP_REACH: u32 = 64;

/// Widens `needs` so that the numbers [`crate::plus::stale::jumped`] reads decode across
/// [`LOSSY_REACH`] packets (the IP-ID's counter, through the scaled sequence number it is
/// coded against or its own offset without a sequence stride), and the acknowledgment number
/// with a stride and the timestamp as far: the first frame after a burst decodes only if every
/// field does. Pooled over the shared, unseen and twin captures (seeds 1-5), damage per 1000
/// intact frames at 30% loss in bursts of mean 50 went 9.993 -> 9.438 with the acknowledgment
/// number, 8.628 with the timestamp too, for 0.11 and 0.39 octets per packet there
/// (8.91 -> 9.30); a clean link never pays.
#[inline]
pub(super) fn reach(needs: &mut Needs, strides: Strides, counter: bool) {
    let far = |span: Span, by: u32| Span {
        up: span.up.max(by),
        ..span
    };
    let packets = |stride: u16| LOSSY_REACH * u32::from(stride);
    if strides.seq != 0 {
        needs.seq_scaled = needs.seq_scaled.map(|s| far(s, LOSSY_REACH));
        needs.seq = far(needs.seq, packets(strides.seq));
    } else if counter {
        needs.ip_id = far(needs.ip_id, LOSSY_REACH);
    }
    needs.ts_val = far(needs.ts_val, TS_REACH);
    // The echo reply's gap in codes of at least 7 bits: the 2-bit code reaches too little for
    // a frame after a burst to confirm or be confirmed by one next to it ([`Floor`]).
    needs.ts_gap = far(needs.ts_gap, ECHO_GAP_REACH);
    if strides.ack != 0 {
        needs.ack_scaled = needs.ack_scaled.map(|s| far(s, LOSSY_REACH));
        needs.ack = far(needs.ack, packets(strides.ack));
    }
}

/// How many frames after one that needed them a context's echo reply, IP-ID and window codes
/// do not narrow, on a link known to lose bursts ([`Floor`]).
const FLOOR_FRAMES: u8 = 32;

/// What a context's frames needed lately, on a link known to lose bursts: the codes of the
/// echo reply (and its gap), of the IP-ID offset and of the window do not narrow until
/// [`FLOOR_FRAMES`] frames after the last frame that needed them wider (the window goes in
/// every frame till then). A packet late from a kept or held frame is confirmed by a frame
/// next to it only if no field of the confirming frame reaches further (spec section 5.8):
/// codes that narrowed and widened between two frames refused most such packets, the echo
/// reply's most of all (it follows the peer's timing, not the flow's).
/// Pooled over the shared, unseen and twin captures (seeds 1-5), damage per 1000 intact frames
/// at 30% loss in bursts of mean 50 went 7.441 -> 6.756 and in bursts of mean 4 3.174 ->
/// 2.854, for 0.36 and 0.38 octets per packet there (9.42 -> 9.77, 9.53 -> 9.91); without the
/// window 6.986 and 2.954, for 0.20; a floor of 64 frames (without the window) 6.929, for 0.29.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::plus::compressor) struct Floor {
    spans: Spans,
    frames: u8,
}

/// The spans a [`Floor`] holds: the echo reply's, its gap's, the IP-ID offset's and the
/// window's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::plus::compressor) struct Spans([Span; 4]);

impl Spans {
    /// The spans of `needs` a floor holds.
    #[inline]
    pub(super) fn of(needs: &Needs) -> Spans {
        Spans([needs.ts_ecr, needs.ts_gap, needs.ip_id, needs.win])
    }

    /// Each the larger of `self`'s and `other`'s.
    #[inline]
    fn max(self, other: Spans) -> Spans {
        let [a, b, c, d] = self.0;
        let [x, y, z, w] = other.0;
        Spans([a.max(x), b.max(y), c.max(z), d.max(w)])
    }
}

impl Floor {
    /// Raises `needs` to the floor.
    #[inline]
    pub(super) fn raise(&self, needs: &mut Needs) {
        let Spans([ecr, gap, ip_id, win]) = Spans::of(needs).max(self.spans);
        (needs.ts_ecr, needs.ts_gap, needs.ip_id, needs.win) = (ecr, gap, ip_id, win);
    }

    /// A frame went whose packet needed `spans` of the window (a wide frame's horizon left
    /// out).
    #[inline]
    pub(in crate::plus::compressor) fn sent(&mut self, spans: Spans) {
        let grown = self.spans.max(spans);
        if grown != self.spans {
            (self.spans, self.frames) = (grown, 0);
        } else if grown != spans {
            // Narrower than the floor: it holds, for a while.
            self.frames += 1;
            if self.frames >= FLOOR_FRAMES {
                (self.spans, self.frames) = (spans, 0);
            }
        }
    }
}
