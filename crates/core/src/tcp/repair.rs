//! Bounded context repair: what makes a TAROC context come back, whatever happened to the
//! decompressor's state (a loss pattern, a restart with empty state, a context poisoned by a
//! forged or corrupted frame).
//!
//! The draft's W-LSB coding keeps a context decodable through losses as long as the
//! decompressor's reference stays in the compressor's window (VSW). Nothing in the draft repairs
//! a context whose reference is gone or wrong: the compressor keeps sending COMPRESSED_TCP, the
//! decompressor keeps refusing them, and a TCP connection can stall for good (every
//! retransmission refused too). Three repairs, all answered by an UNCOMPRESSED_TCP (which
//! installs the context afresh at the decompressor), each a setting of [`Repair`]:
//!
//! - **TCP distress** (compressor, no feedback needed): TCP itself says when its packets are not
//!   getting through. A segment at or below the highest sequence number already sent (a
//!   retransmission), or a segment without data whose ACK does not advance (a duplicate ACK),
//!   sent after a *silence* of the stream: that is a retransmission timeout at the sender, or the
//!   receiver answering one; and the same segment retransmitted a second time. The second signal
//!   of a run answers (a run ends with a packet that is not stale), so a healthy context in a
//!   timeout backoff at a high bit error rate pays half the full headers, and a broken one
//!   one more timeout.
//! - **Periodic refresh** (compressor, no feedback needed): an UNCOMPRESSED_TCP after a bound
//!   in packets and a bound in time since the context's last one, the backstop of links without
//!   feedback (the draft's U-mode lacks it).
//! - **Context requests** (decompressor → compressor, where a reverse channel exists): the
//!   decompressor names each context it refused a COMPRESSED_TCP for (no context, a rebuilt
//!   packet failing its checksum, or fields its context forbids) in a `CONTEXT_STATE` frame; the compressor sends that
//!   context's next packet as UNCOMPRESSED_TCP.
//!
//! Request frame (the body of a [`FrameKind::ContextState`](crate::FrameKind) frame):
//! `[REQUEST][CID]…`, one octet of type ([`REQUEST`]) and one octet per requested CID (at least
//! one). Anything else is ignored by the compressor.

use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;

use taroc_wire::seq::seq_lt;

use super::context::ALL_CIDS;
use super::packet::TcpIpPacket;
use super::stats::Why;
use crate::codec::DropReason;

/// The type octet of a TAROC context request.
pub const REQUEST: u8 = 0x01;

/// A decompressor repeats a request for a context it keeps refusing frames of once this long
/// has passed since its last request for it…
pub const REQUEST_INTERVAL: Duration = Duration::from_millis(100);

/// …or once it has refused this many more frames of it (for users that never set the time).
pub const REQUEST_EVERY_REFUSALS: u16 = 32;

/// The repair settings. All off ([`Repair::default`]) is the draft; [`Repair::live`] is the
/// `taroc-plus` profile's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Repair {
    /// Send a stream's retransmission or duplicate ACK as UNCOMPRESSED_TCP when the stream was
    /// silent at least this long before it (a TCP retransmission timeout, or the receiver's
    /// answer to one). `None`: off. Needs the compressor's time ([`crate::Compressor::set_time`]).
    pub distress_silence: Option<Duration>,
    /// Send a segment retransmitted for the second time (or more) in a row as UNCOMPRESSED_TCP.
    pub repeated_retransmission: bool,
    /// Refresh a context (UNCOMPRESSED_TCP) once this many packets went compressed since its
    /// last UNCOMPRESSED_TCP. 0: off.
    pub refresh_packets: u32,
    /// Refresh a context once this long passed since its last UNCOMPRESSED_TCP. `None`: off.
    pub refresh_interval: Option<Duration>,
    /// The decompressor sends context requests for the contexts it refuses frames of, and the
    /// compressor answers them. Needs a reverse channel for `CONTEXT_STATE` frames.
    pub context_requests: bool,
}

/// Without context requests, a context's first refresh comes after this many compressed
/// packets, the next ones every [`Repair::refresh_packets`]: a burst that took every IR frame of
/// a start (and the spread one after it) leaves the context unset for about this many packets
/// of the flow, not a whole period. Pooled over the shared, unseen and twin captures (seeds
/// 1-5), damage per 1000 intact frames at 50% random loss went 37.6 -> 24.3, at 20 / 50% in
/// bursts of mean 4 16.4 / 128.7 -> 8.6 / 78.6 and at 10 / 30% in bursts of mean 50 52.3 /
/// 300.3 -> 40.0 / 251.1, for at most 0.20 octets per packet on a clean link (the unseen IPv6
/// bulk capture, 620 packets). Doubling periods from here (64, 128, 256, then 512) on every
/// link took the bursts of 50 to 27.1 / 187.1 but cost up to 0.39 octets; they double on a
/// link known to lose frames ([`LOSSY_DOUBLINGS`]). On a link not known to lose frames, a
/// context whose far end showed that it holds it (a reference receipt: its start was not lost)
/// waits the whole period for its first refresh: on a clean link 0.01 to 0.11 octets per
/// packet less on the shared, unseen and twin captures, and damage about as before in loss
/// (the refresh also set up again contexts whose reference a burst took, which wide frames
/// do as well).
pub const FIRST_REFRESH_ALONE: u32 = 64;

/// Without context requests, on a link known to lose frames ([`LinkLoss::Frames`]), the
/// periods between a context's refreshes double from [`FIRST_REFRESH_ALONE`] this many times
/// (64, 128, 256, then 512 packets): a flow whose start and first refresh a burst took waits
/// 128 packets more, not 512. Pooled over the shared, unseen and twin captures, seeds 1-25,
/// with the early refreshes on a link known to lose bursts as well (a burst note, whose links
/// doubled then too, before [`LinkLoss::Bursts`]), damage per 1000 intact frames fell 13% at
/// 50% random loss, 36 / 22% at 20 / 50% in bursts of mean 4 and 11 / 21 / 20 / 9% at 10 /
/// 20 / 30 / 50% in bursts of mean 50 (the burst note's early refreshes alone: 9%, 36 / 17%,
/// 13 / 14 / 19 / 2%). Nothing on a clean link; on every link, the same doubling cost the
/// unseen IPv6 bulk capture 0.18 octets per packet.
pub const LOSSY_DOUBLINGS: u8 = 3;

/// Without context requests, on a link known to lose frames, a context sends this many *early
/// refreshes* besides the periodic ones: an IR frame once [`EARLY_REFRESH_FIRST`] passed since
/// its last IR frame, then twice, four and eight times that (0.5, 1, 2 and 4 s). A burst that
/// took every IR frame of a start leaves the context unset for about as long, not until the
/// first refresh (64 packets, seconds for a flow that sends seldom).
pub const EARLY_REFRESHES: u8 = 4;

/// The interval before the first early refresh ([`EARLY_REFRESHES`]).
pub const EARLY_REFRESH_FIRST: Duration = Duration::from_millis(500);

/// What a compressor without context requests knows of its link's losses: its refreshes
/// follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkLoss {
    /// None seen lately (or context requests tell of each lost context).
    Unseen,
    /// The link loses frames: early refreshes, and periods that double ([`LOSSY_DOUBLINGS`]).
    Frames,
    /// The link loses frames in bursts that outlast a window (a burst note): early refreshes,
    /// and a refresh every [`FIRST_REFRESH_ALONE`] packets. Pooled over the shared, unseen and
    /// twin captures, seeds 1-25, against periods that double: damage per 1000 intact frames
    /// at 50% in bursts of mean 4 and at 10 / 20 / 30 / 50% in bursts of mean 50 fell 14% and
    /// 4 / 8 / 14 / 23%, the longest outage at 50% in bursts of mean 50 from 3353 packets to
    /// 507; no row rose by more than 4% (30% random loss: 0.420 -> 0.437). Nothing on a clean
    /// link; on links that lose bursts +0.09 to +0.14 octets per packet on average, at most
    /// +0.42 (the shared IPv6 bulk capture at 30% in bursts of mean 4).
    Bursts,
}

impl Repair {
    /// The `taroc-plus` settings: every repair on. A silence of 150 ms is below the smallest
    /// retransmission timeout of Linux (200 ms) and of RFC 6298 (1 s); a refresh every 512
    /// packets or 30 s costs well under a byte per packet.
    pub const fn live() -> Repair {
        Repair {
            distress_silence: Some(Duration::from_millis(150)),
            repeated_retransmission: true,
            refresh_packets: 512,
            refresh_interval: Some(Duration::from_secs(30)),
            context_requests: true,
        }
    }
}

/// What the compressor watches of one stream to decide on a repair.
#[derive(Debug, Clone)]
pub(crate) struct Watch {
    /// Time of the stream's previous packet, once one was sent with the time known.
    last_seen: Option<Duration>,
    /// Time of the context's last UNCOMPRESSED_TCP.
    refreshed_at: Duration,
    /// Packets sent compressed since the last UNCOMPRESSED_TCP.
    since_refresh: u32,
    /// Periodic refreshes the context had (saturating).
    refreshes: u8,
    /// Early refreshes sent ([`EARLY_REFRESHES`]).
    early_refreshes: u8,
    /// One past the highest sequence number sent with data.
    sent_end: u32,
    /// The highest acknowledgment number sent.
    high_ack: u32,
    /// The last retransmitted sequence number, and how many times in a row it went.
    retransmitted: (u32, u8),
    /// Distress signals since the stream last sent a packet that was not stale (mod 256).
    distress: u8,
    /// The decompressor asked for this context.
    requested: bool,
}

impl Watch {
    /// A stream whose first packet is `p`, sent at `now`.
    pub(crate) fn new(p: &TcpIpPacket<'_>, now: Duration) -> Watch {
        Watch {
            last_seen: None,
            refreshed_at: now,
            since_refresh: 0,
            refreshes: 0,
            early_refreshes: 0,
            sent_end: p.fields.seq,
            high_ack: p.fields.ack,
            retransmitted: (p.fields.seq, 0),
            distress: 0,
            requested: false,
        }
    }

    /// The decompressor asked for this context.
    pub(crate) fn request(&mut self) {
        self.requested = true;
    }

    /// Why `p`, about to be sent at `now`, must go UNCOMPRESSED_TCP to repair the context, if
    /// it must, with `loss` what the compressor knows of the link's losses ([`LinkLoss`]) and
    /// `held` whether the far end showed that it holds the context (its start was not lost:
    /// the first refresh need not come early, [`FIRST_REFRESH_ALONE`]). Call once per packet,
    /// before [`Watch::sent`].
    #[inline(always)]
    pub(crate) fn due(
        &mut self,
        repair: &Repair,
        p: &TcpIpPacket<'_>,
        now: Duration,
        loss: LinkLoss,
        held: bool,
    ) -> Option<Why> {
        let (seq, ack) = (p.fields.seq, p.fields.ack);
        let data = p.payload_len() > 0;
        let stale = if data {
            seq_lt(seq, self.sent_end)
        } else {
            !seq_lt(self.high_ack, ack)
        };
        if data && stale {
            self.retransmitted = match self.retransmitted {
                (at, n) if at == seq => (at, n.saturating_add(1)),
                _ => (seq, 1),
            };
        }
        if !stale {
            self.distress = 0;
        }
        if repair.context_requests && self.requested {
            return Some(Why::Requested);
        }
        if stale {
            let silent = match (repair.distress_silence, self.last_seen) {
                (Some(silence), Some(last)) => now.saturating_sub(last) >= silence,
                _ => false,
            };
            let repeated = repair.repeated_retransmission && data && self.retransmitted.1 >= 2;
            if silent || repeated {
                // Every second signal of a run answers: a retransmission timeout at a high bit
                // error rate is often followed by another, and a full header is more likely to
                // be hit than a compressed one, which lengthens the sender's backoff. A broken
                // context costs one more timeout; a healthy one half the full headers.
                self.distress = self.distress.wrapping_add(1);
                if self.distress & 1 == 0 {
                    return Some(if silent {
                        Why::Timeout
                    } else {
                        Why::RepeatedRetransmission
                    });
                }
            }
            // A refresh rides on a packet of new data (or a new ACK), never on a
            // retransmission: a timeout's retransmission lost to a full header's extra bits
            // doubles the backoff.
            return None;
        }
        let period = if repair.context_requests {
            repair.refresh_packets
        } else if loss == LinkLoss::Bursts {
            repair.refresh_packets.min(FIRST_REFRESH_ALONE)
        } else if loss == LinkLoss::Frames {
            let doubled = FIRST_REFRESH_ALONE << self.refreshes.min(LOSSY_DOUBLINGS);
            repair.refresh_packets.min(doubled)
        } else if self.refreshes > 0 || held {
            repair.refresh_packets
        } else {
            repair.refresh_packets.min(FIRST_REFRESH_ALONE)
        };
        let by_packets = repair.refresh_packets > 0 && self.since_refresh >= period;
        let since = now.saturating_sub(self.refreshed_at);
        let by_time = repair
            .refresh_interval
            .is_some_and(|interval| since >= interval);
        // Without context requests, on a link that loses frames: the early refreshes, apart
        // from the periodic ones (which they do not stand in for).
        let early = loss != LinkLoss::Unseen
            && !repair.context_requests
            && repair.refresh_interval.is_some()
            && self.early_refreshes < EARLY_REFRESHES
            && since >= EARLY_REFRESH_FIRST * (1 << self.early_refreshes);
        self.early_refreshes += u8::from(early);
        self.refreshes = self
            .refreshes
            .saturating_add(u8::from(by_packets || by_time));
        (by_packets || by_time || early).then_some(Why::Refresh)
    }

    /// Records that `p` was sent at `now`, UNCOMPRESSED_TCP or not.
    pub(crate) fn sent(&mut self, p: &TcpIpPacket<'_>, now: Duration, uncompressed: bool) {
        let end = p.fields.seq.wrapping_add(p.payload_len() as u32);
        if seq_lt(self.sent_end, end) {
            self.sent_end = end;
        }
        if seq_lt(self.high_ack, p.fields.ack) {
            self.high_ack = p.fields.ack;
        }
        self.last_seen = Some(now);
        if uncompressed {
            self.since_refresh = 0;
            self.refreshed_at = now;
            self.requested = false;
        } else {
            self.since_refresh = self.since_refresh.saturating_add(1);
        }
    }
}

/// Parses a context request: the CIDs it names, or `None` if it is not one.
pub fn parse_request(frame: &[u8]) -> Option<&[u8]> {
    match frame {
        [REQUEST, cids @ ..] if !cids.is_empty() && cids.len() <= ALL_CIDS => Some(cids),
        _ => None,
    }
}

/// The decompressor's side of context requests: which contexts to ask for, rate-limited.
#[derive(Debug, Clone)]
pub(crate) struct Requests {
    now: Duration,
    /// CIDs to ask for in the next request frame.
    pending: [u64; ALL_CIDS / 64],
    /// Per CID: when it was last asked for, and frames refused since. Empty when off.
    asked: Vec<(Option<Duration>, u16)>,
    /// Refusals after which a context is asked for again whatever the time.
    every: u16,
    /// Request frames after the first that name a context again, unless a frame of it is
    /// delivered first ([`Requests::repeat`]; 0 by default).
    repeat: u8,
    /// CIDs still to be named again, and how many more times.
    again: [u64; ALL_CIDS / 64],
    again_left: Vec<u8>,
    /// Times a context is asked for again later unless a frame of it is delivered first
    /// ([`Requests::reask`]; 0 by default), and per CID when next and how many times more.
    reasks: u8,
    reask_at: Vec<(Option<Duration>, u8)>,
    /// The earliest of `reask_at`'s times (or earlier), if any is set.
    next_reask: Option<Duration>,
}

impl Requests {
    /// Requests on (`enabled`) or off.
    pub(crate) fn new(enabled: bool) -> Requests {
        Requests {
            now: Duration::ZERO,
            pending: [0; ALL_CIDS / 64],
            asked: if enabled {
                vec![(None, 0); ALL_CIDS]
            } else {
                Vec::new()
            },
            every: REQUEST_EVERY_REFUSALS,
            repeat: 0,
            again: [0; ALL_CIDS / 64],
            again_left: Vec::new(),
            reasks: 0,
            reask_at: Vec::new(),
            next_reask: None,
        }
    }

    /// Asks for a requested context again `times` more times, [`REQUEST_INTERVAL`] after the
    /// request and then after intervals that double, unless a frame of it is delivered first: a
    /// request and its copies travel back to back, so a loss burst on the reverse link can take
    /// them all, and a flow that sends seldom would otherwise wait for its next refused frame.
    pub(crate) fn reask(self, times: u8) -> Requests {
        Requests {
            reasks: times,
            reask_at: vec![(None, 0); if self.asked.is_empty() { 0 } else { ALL_CIDS }],
            ..self
        }
    }

    /// Names a requested context in this many more request frames ([`Requests::take`]) unless a
    /// frame of it is delivered first: a lost request is then made good before the context's
    /// next frame is refused.
    pub(crate) fn repeat(self, frames: u8) -> Requests {
        Requests {
            repeat: frames,
            again_left: vec![0; if self.asked.is_empty() { 0 } else { ALL_CIDS }],
            ..self
        }
    }

    /// Asks again after `refusals` more refusals of a context (instead of
    /// [`REQUEST_EVERY_REFUSALS`]), whatever the time.
    pub(crate) fn every(self, refusals: u16) -> Requests {
        Requests {
            every: refusals,
            ..self
        }
    }

    /// The time now: the contexts whose re-ask is due are asked for again.
    pub(crate) fn set_time(&mut self, now: Duration) {
        self.now = self.now.max(now);
        if self.next_reask.is_some_and(|at| at <= self.now) {
            self.reask_due();
        }
    }

    /// Names every context whose re-ask is due in the next request, and schedules its next.
    fn reask_due(&mut self) {
        let now = self.now;
        let mut next: Option<Duration> = None;
        for (cid, (at, left)) in self.reask_at.iter_mut().enumerate() {
            let Some(when) = *at else { continue };
            if when <= now {
                self.pending[cid / 64] |= 1 << (cid % 64);
                *left = left.saturating_sub(1);
                let done = u32::from(self.reasks - *left);
                *at = (*left > 0).then(|| now + REQUEST_INTERVAL * (1 << done.min(16)));
            }
            if let Some(when) = *at {
                next = Some(next.map_or(when, |n| n.min(when)));
            }
        }
        self.next_reask = next;
    }

    /// A COMPRESSED_TCP of `cid` was refused.
    pub(crate) fn refused(&mut self, cid: u8) {
        let now = self.now;
        let Some((last, refused)) = self.asked.get_mut(usize::from(cid)) else {
            return;
        };
        *refused = refused.saturating_add(1);
        let due = match *last {
            None => true,
            Some(at) => now.saturating_sub(at) >= REQUEST_INTERVAL || *refused > self.every,
        };
        if due {
            *last = Some(now);
            *refused = 0;
            self.pending[usize::from(cid) / 64] |= 1 << (cid % 64);
            if let Some(left) = self.again_left.get_mut(usize::from(cid)) {
                *left = self.repeat;
            }
            if let Some(slot) = self.reask_at.get_mut(usize::from(cid)) {
                let at = now + REQUEST_INTERVAL;
                *slot = (Some(at), self.reasks);
                self.next_reask = Some(self.next_reask.map_or(at, |n| n.min(at)));
            }
        }
    }

    /// Notes what became of a compressed frame of `cid`. A frame rebuilt against a wrong
    /// context can also look malformed (fields its context forbids): every refusal counts.
    #[inline(always)]
    pub(crate) fn record(&mut self, cid: u8, result: &Result<(), DropReason>) {
        match result {
            Ok(()) => self.delivered(cid),
            Err(_) => self.refused(cid),
        }
    }

    /// A frame of `cid` was delivered: its next refusal asks at once.
    pub(crate) fn delivered(&mut self, cid: u8) {
        if let Some(slot) = self.asked.get_mut(usize::from(cid)) {
            *slot = (None, 0);
        }
        if let Some(left) = self.again_left.get_mut(usize::from(cid)) {
            *left = 0;
            self.again[usize::from(cid) / 64] &= !(1 << (cid % 64));
        }
        if let Some(slot) = self.reask_at.get_mut(usize::from(cid)) {
            *slot = (None, 0);
        }
    }

    /// Writes the pending request into `out` (cleared first), if there is one.
    pub(crate) fn take(&mut self, out: &mut Vec<u8>) -> bool {
        if self
            .pending
            .iter()
            .chain(&self.again)
            .all(|&word| word == 0)
        {
            return false;
        }
        out.clear();
        out.push(REQUEST);
        for i in 0..self.pending.len() {
            let mut word = self.pending[i] | self.again[i];
            self.pending[i] = 0;
            while word != 0 {
                let bit = word.trailing_zeros();
                word &= word - 1;
                let cid = (i * 64) as u8 + bit as u8;
                out.push(cid);
                // A CID just asked for is named again in the next frames; one named again
                // counts down.
                let named_again = self.again[i] & 1 << bit != 0;
                let left = self.again_left.get_mut(usize::from(cid)).map_or(0, |left| {
                    if named_again {
                        *left = left.saturating_sub(1);
                    }
                    *left
                });
                if left > 0 {
                    self.again[i] |= 1 << bit;
                } else {
                    self.again[i] &= !(1 << bit);
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_rate_limited_and_name_each_cid_once() {
        let mut r = Requests::new(true);
        let mut out = Vec::new();
        assert!(!r.take(&mut out));
        r.set_time(Duration::from_secs(1));
        r.refused(7);
        r.refused(7);
        r.refused(200);
        assert!(r.take(&mut out));
        assert_eq!(out, [REQUEST, 7, 200]);
        assert_eq!(parse_request(&out), Some(&[7u8, 200][..]));
        assert!(!r.take(&mut out));
        // Within the interval, refusals of 7 do not ask again…
        r.set_time(Duration::from_millis(1050));
        r.refused(7);
        assert!(!r.take(&mut out));
        // …after it they do; and so does the count alone, for a decompressor without time.
        r.set_time(Duration::from_millis(1101));
        r.refused(7);
        assert!(r.take(&mut out));
        assert_eq!(out, [REQUEST, 7]);
        for _ in 0..=REQUEST_EVERY_REFUSALS {
            r.refused(7);
        }
        assert!(r.take(&mut out));
        // A delivery re-arms at once.
        r.delivered(200);
        r.refused(200);
        assert!(r.take(&mut out));
        assert_eq!(out, [REQUEST, 200]);
    }

    #[test]
    fn a_context_is_asked_for_again_later_until_it_is_delivered() {
        let mut r = Requests::new(true).every(0).reask(3);
        let mut out = Vec::new();
        let ms = Duration::from_millis;
        r.set_time(ms(1000));
        r.refused(4);
        assert!(r.take(&mut out));
        assert_eq!(out, [REQUEST, 4]);
        assert!(!r.take(&mut out));
        // 100 ms later, then 200 and 400 ms after that: asked again, three times.
        for (at, asks) in [(1099, false), (1100, true), (1299, false), (1300, true)] {
            r.set_time(ms(at));
            assert_eq!(r.take(&mut out), asks, "at {at} ms");
        }
        r.set_time(ms(1700));
        assert!(r.take(&mut out));
        assert_eq!(out, [REQUEST, 4]);
        r.set_time(ms(10_000));
        assert!(!r.take(&mut out));
        // A delivery ends them.
        r.refused(4);
        assert!(r.take(&mut out));
        r.delivered(4);
        r.set_time(ms(10_100));
        assert!(!r.take(&mut out));
        // Off without `reask`.
        let mut once = Requests::new(true);
        once.refused(4);
        assert!(once.take(&mut out));
        once.set_time(ms(5000));
        assert!(!once.take(&mut out));
    }

    #[test]
    fn repeated_requests_name_a_context_again_until_it_is_delivered() {
        let mut r = Requests::new(true).every(0).repeat(2);
        let mut out = Vec::new();
        r.refused(9);
        assert!(r.take(&mut out));
        assert_eq!(out, [REQUEST, 9]);
        // Named twice more, then no more.
        for _ in 0..2 {
            assert!(r.take(&mut out));
            assert_eq!(out, [REQUEST, 9]);
        }
        assert!(!r.take(&mut out));
        // A delivery ends the repeats at once.
        r.refused(9);
        r.refused(3);
        assert!(r.take(&mut out));
        assert_eq!(out, [REQUEST, 3, 9]);
        r.delivered(9);
        assert!(r.take(&mut out));
        assert_eq!(out, [REQUEST, 3]);
        // Without `repeat`, a request goes once.
        let mut once = Requests::new(true);
        once.refused(4);
        assert!(once.take(&mut out));
        assert!(!once.take(&mut out));
    }

    #[test]
    fn requests_off_never_ask() {
        let mut r = Requests::new(false);
        r.refused(1);
        assert!(!r.take(&mut Vec::new()));
    }

    #[test]
    fn only_well_formed_requests_parse() {
        assert_eq!(parse_request(&[]), None);
        assert_eq!(parse_request(&[REQUEST]), None);
        assert_eq!(parse_request(&[0x02, 1]), None);
        assert_eq!(parse_request(&[REQUEST, 0, 255]), Some(&[0u8, 255][..]));
        assert_eq!(parse_request(&vec![REQUEST; ALL_CIDS + 2]), None);
    }
}
