//! The decompressor's side of `taroc-plus` for packets that are not compressible TCP: contexts
//! set up by IR-N frames, CO-S and CO-N headers rebuilt against them and delivered only with
//! the check of the original header.

use alloc::vec::Vec;
use core::time::Duration;

use super::fields::{Dynamic, State};
use super::head::{Form, Head};
use super::pace::{guided, Guided, Pace};
use super::pair::{key_of, Pairs};
use super::replica::{is_replica, Replica};
use super::widths::Widths;
use super::{
    checksum_of, header_crc, shape, template_in, Shape, ECHO_MODE, FRAME, MAX_HEADER, PAIR,
    PAIR_NOTE, PAIR_NOTE_COPIES, PAIR_NOTE_EVERY, RTP_MODE, STEP, UDP_MODE,
};
use crate::codec::DropReason;
use crate::plus::late::LatePackets;
use crate::tcp::packet::length_field_offset;

#[derive(Debug, Clone)]
struct DecompContext {
    template: Vec<u8>,
    shape: Shape,
    state: State,
    trust: Trust,
    /// When the reference arrived and how the flow paces (RTP contexts, [`super::pace`]).
    pace: Pace,
}

/// How far a context's reference is trusted. After a refused frame, or a frame that decoded
/// only by trial, a decoded frame is not delivered but held as the reference until the next
/// frame decodes against it at the first try: a wrong reference that passed one check by
/// chance must pass a second one too (odds 2^-32, not 2^-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trust {
    /// The reference came from an IR-N or a frame delivered in sequence.
    Sure,
    /// A frame was refused since.
    Suspect,
    /// The reference is a frame held for confirmation; the state before it.
    Held(State),
}

/// The decompressor's side: one context per CID.
#[derive(Debug, Clone)]
pub struct OtherDecompressor {
    contexts: Vec<Option<DecompContext>>,
    /// Whether the last frame rebuilt was held for confirmation (refused, but no sign that the
    /// context is damaged).
    held: bool,
    /// Each context's held packet as it would be delivered, if a confirmation may deliver it
    /// late ([`OtherDecompressor::take_late`]), with its frame's widths.
    late: LatePackets<Option<Widths>>,
    /// The last IP-ID of each pair ([`super::pair`]).
    pairs: Pairs,
    /// The sequence advance of the last CO-S, CO-I or CO-N frame delivered, in an RTP context.
    advance: Option<u16>,
    /// Whether pair notes ([`PAIR_NOTE`]) are sent (where feedback is), the copies of one still
    /// due, and the frames rebuilt since the last.
    notes: bool,
    notes_due: u8,
    since_note: u32,
    /// The time now ([`OtherDecompressor::set_time`]).
    now: Duration,
}

impl Default for OtherDecompressor {
    /// A decompressor that sends no pair notes (no feedback).
    fn default() -> OtherDecompressor {
        OtherDecompressor::new(false)
    }
}

impl OtherDecompressor {
    /// A decompressor that sends pair notes ([`PAIR_NOTE`]) if `notes`.
    pub fn new(notes: bool) -> OtherDecompressor {
        OtherDecompressor {
            contexts: (0..256).map(|_| None).collect(),
            held: false,
            late: LatePackets::default(),
            pairs: Pairs::default(),
            advance: None,
            notes,
            notes_due: 0,
            since_note: PAIR_NOTE_EVERY,
            now: Duration::ZERO,
        }
    }

    /// The time now (of the frame about to be decompressed), which RTP contexts pace their
    /// flows by (spec section 8, *guided trials*).
    pub fn set_time(&mut self, now: Duration) {
        self.now = self.now.max(now);
    }

    /// Moves the held packet the last frame confirmed into `out` and returns true, or returns
    /// false if there is none: a held packet (but a CO-S frame's in pair mode) that a frame
    /// whose codes reach no further, field by field, confirmed.
    pub fn take_late(&mut self, out: &mut Vec<u8>) -> bool {
        self.late.take(out)
    }

    /// Forgets a late packet not taken: a new frame arrives.
    pub fn forget_late(&mut self) {
        self.late.forget();
    }

    /// Writes the due pair note, if any, into `out`.
    pub fn take_pair_note(&mut self, out: &mut Vec<u8>) -> bool {
        if self.notes_due == 0 {
            return false;
        }
        self.notes_due -= 1;
        out.clear();
        out.push(PAIR_NOTE);
        true
    }

    /// Sets a context up from an IR-N frame and delivers its packet; the context's CID.
    pub fn ir_n(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<u8, DropReason> {
        if is_replica(frame) {
            return self.replica(frame, out);
        }
        let v4 = match frame.first().map(|b| b >> 4) {
            Some(4) => true,
            Some(6) => false,
            _ => return Err(DropReason::Malformed),
        };
        let at = length_field_offset(v4);
        let (flags, cid) = match frame.get(at..at + 2) {
            Some(&[f, c]) => (f, c),
            _ => return Err(DropReason::Malformed),
        };
        if flags & !(UDP_MODE | ECHO_MODE | RTP_MODE | STEP | FRAME | PAIR) != 0 {
            return Err(DropReason::Malformed);
        }
        let len = if v4 {
            frame.len()
        } else {
            frame.len().wrapping_sub(40)
        };
        if len > usize::from(u16::MAX) {
            return Err(DropReason::Malformed);
        }
        out.clear();
        out.extend_from_slice(frame);
        out[at..at + 2].copy_from_slice(&(len as u16).to_be_bytes());
        // In RTP mode the UDP Length carries the stride.
        let ip = if v4 { 20 } else { 40 };
        let mut stride = 0;
        if flags & RTP_MODE != 0 {
            let Some(field) = out.get_mut(ip + 4..ip + 6) else {
                out.clear();
                return Err(DropReason::Malformed);
            };
            stride = u16::from_be_bytes([field[0], field[1]]);
            field.copy_from_slice(&((frame.len() - ip) as u16).to_be_bytes());
        }
        let s = match shape(out) {
            Some(s)
                if s.flags() | flags & (STEP | FRAME | PAIR) == flags && extras_fit(s, flags) =>
            {
                s
            }
            _ => {
                out.clear();
                return Err(DropReason::Malformed);
            }
        };
        let state = State {
            fields: Dynamic::of(out, s),
            step: flags & STEP != 0,
            stride,
            frame: flags & FRAME != 0,
            pair: flags & PAIR != 0,
        };
        if s.v4 {
            self.pairs.set(&key_of(out), state.fields.ip_id);
        }
        // A refresh of a context reuses its template's buffer: no allocation per IR-N.
        let mut buf = [0; MAX_HEADER];
        let t = template_in(out, s, &mut buf);
        let slot = &mut self.contexts[usize::from(cid)];
        let (template, mut pace) = match slot.take() {
            Some(DecompContext {
                mut template, pace, ..
            }) => {
                template.clear();
                template.extend_from_slice(t);
                (template, pace)
            }
            None => (t.to_vec(), Pace::new(self.now)),
        };
        pace.moved(self.now);
        *slot = Some(DecompContext {
            template,
            shape: s,
            state,
            trust: Trust::Sure,
            pace,
        });
        Ok(cid)
    }

    /// Whether the last CO-S, CO-I or CO-N frame was refused only because it was held for
    /// confirmation (its context decoded it; the next frame confirms it).
    pub fn held(&self) -> bool {
        self.held
    }

    /// Sets a context up from a replicated IR-N frame (its base's template with the frame's
    /// changes) and delivers its packet if its header has the frame's check; the context's CID.
    fn replica(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<u8, DropReason> {
        out.clear();
        let (r, s, at) = Replica::parse(frame, |cid| {
            self.contexts[usize::from(cid)].as_ref().map(|c| c.shape)
        })?;
        let base = self.contexts[usize::from(r.base)]
            .as_ref()
            .ok_or(DropReason::NoContext)?;
        let mut buf = [0; MAX_HEADER];
        let t = &mut buf[..s.header];
        t.copy_from_slice(&base.template);
        r.apply(t);
        let mut fields = r.fields;
        if s.v4 && !r.frag_sent {
            fields.frag = base.state.fields.frag;
        }
        let zero_sum = s.udp && !s.echo && t[s.ip + 6..s.ip + 8] == [0, 0];
        let payload = &frame[at..];
        let total = u16::try_from(s.header + payload.len()).map_err(|_| DropReason::Malformed)?;
        out.extend_from_slice(t);
        fields.write(out, s);
        set_lengths(out, s, total);
        fill_checksum(out, s, r.checksum, zero_sum, &Payload::of(payload));
        if header_crc(out, s) != r.crc {
            out.clear();
            return Err(DropReason::ChecksumMismatch);
        }
        out.extend_from_slice(payload);
        // Only a packet this module would have sent so, of the base's shape and with these
        // changes as its template, is delivered.
        let mut check = [0; MAX_HEADER];
        if shape(out) != Some(s) || template_in(out, s, &mut check) != &buf[..s.header] {
            out.clear();
            return Err(DropReason::Malformed);
        }
        let state = State {
            fields: Dynamic::of(out, s),
            step: r.flags & STEP != 0,
            stride: if s.rtp { r.stride } else { 0 },
            frame: r.flags & FRAME != 0,
            pair: r.flags & PAIR != 0,
        };
        if s.v4 {
            self.pairs.set(&key_of(out), state.fields.ip_id);
        }
        let slot = &mut self.contexts[usize::from(r.cid)];
        let (mut template, mut pace) = slot.take().map_or_else(
            || (Vec::new(), Pace::new(self.now)),
            |c| (c.template, c.pace),
        );
        template.clear();
        template.extend_from_slice(&buf[..s.header]);
        pace.moved(self.now);
        *slot = Some(DecompContext {
            template,
            shape: s,
            state,
            trust: Trust::Sure,
            pace,
        });
        Ok(r.cid)
    }

    /// Rebuilds the packet of a CO-S or CO-N frame of kind byte `k`; delivers it only if its
    /// header has the frame's check.
    pub fn co_n(&mut self, k: u8, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        // Whatever the last frame was, this one is not held until its context holds it (a
        // frame refused before that, for a missing context, asks for it).
        self.held = false;
        let (head, at) = self.head(k, frame)?;
        self.rebuild(&head, &frame[at..], out)
    }

    /// The sequence advance of the last CO-S, CO-I or CO-N frame delivered, if it was in an
    /// RTP context (whose sequence number counts every packet: an advance of more than one is a
    /// loss, on the link or before it).
    pub fn rtp_advance(&self) -> Option<u16> {
        self.advance
    }

    /// The last IP-ID of the pair of context `ctx` ([`super::pair`]), if IPv4 and held.
    fn pair_of(&self, ctx: &DecompContext) -> Option<u16> {
        ctx.shape
            .v4
            .then(|| self.pairs.get(&key_of(&ctx.template)))
            .flatten()
    }

    /// Parses the header part of a CO-S or CO-N frame of kind byte `k` (all but its payload);
    /// the fields and the octets they took.
    pub fn head(&self, k: u8, frame: &[u8]) -> Result<(Head, usize), DropReason> {
        Head::parse(k, frame, |cid| {
            self.contexts[usize::from(cid)].as_ref().map(|c| c.shape)
        })
    }

    /// The template of the context a CO-N frame's head names (its header with the per-packet
    /// fields zeroed) with the IPv4 fragment field and Identification the head gives (both 0
    /// for IPv6), if the context exists and the head decodes.
    pub fn ip_fields(&self, head: &Head) -> Option<(&[u8], u16, u16)> {
        let ctx = self.contexts[usize::from(head.cid)].as_ref()?;
        let pair = self.pair_of(ctx);
        let (d, _) = head.decode(ctx.shape, &ctx.state, 0, pair)?;
        Some((&ctx.template, d.frag, d.ip_id))
    }

    /// Rebuilds the packet of `head` (from [`OtherDecompressor::head`]) around `payload`;
    /// delivers it only if its header has the frame's check (a CO-S frame: the first of its
    /// decodings that does).
    pub fn rebuild(
        &mut self,
        head: &Head,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        out.clear();
        self.held = false;
        self.late.forget();
        self.advance = None;
        self.since_note = self.since_note.saturating_add(1);
        let ctx = self.contexts[usize::from(head.cid)]
            .as_mut()
            .ok_or(DropReason::NoContext)?;
        let key = ctx.shape.v4.then(|| key_of(&ctx.template));
        let pair = key.and_then(|k| self.pairs.get(&k));
        let s = ctx.shape;
        let len = s.header + payload.len();
        let total = u16::try_from(len).map_err(|_| DropReason::Malformed)?;
        let zero_sum = s.udp && ctx.template[s.ip + 6..s.ip + 8] == [0, 0];
        let sum = Payload::of(payload);
        // A CO-S frame that counts on the pair's last IP-ID and does not decode at once (at
        // trial 0): a frame of the pair was lost, and the compressor had better not count on it.
        let paired = ctx.state.pair && matches!(head.form, Form::Short { .. });
        let watch = paired && self.notes && self.since_note >= PAIR_NOTE_EVERY;
        // The frame's own trials, then (RTP) those by the time since its reference.
        let own = head.trials(s, &ctx.state);
        let mut by_time: Option<Guided> = None;
        let mut next = 0;
        loop {
            let trial = next;
            next += 1;
            let decoded = if trial < own {
                head.decode(s, &ctx.state, trial, pair)
            } else {
                let g =
                    by_time.get_or_insert_with(|| guided(head, s, &ctx.state, &ctx.pace, self.now));
                match g.get(usize::from(trial - own), &ctx.state) {
                    Some(d) => Some(d),
                    None => break,
                }
            };
            let Some((fields, state)) = decoded else {
                continue;
            };
            out.clear();
            out.extend_from_slice(&ctx.template);
            fields.write(out, s);
            set_lengths(out, s, total);
            fill_checksum(out, s, head.checksum, zero_sum, &sum);
            if header_crc(out, s) != head.crc {
                continue;
            }
            if watch && trial != 0 {
                (self.notes_due, self.since_note) = (PAIR_NOTE_COPIES, 0);
            }
            // Held or delivered, its IP-ID is the pair's last: a frame of another flow of the
            // pair that counts on it confirms it (or fails its own check).
            if let Some(k) = key {
                self.pairs.set(&k, fields.ip_id);
            }
            let confirmed = trial == 0 && matches!(ctx.trust, Trust::Sure | Trust::Held(_));
            if !confirmed {
                // Held: the reference for the next frame, delivered late only if that one
                // proves it ([`Widths`]).
                if !matches!(ctx.trust, Trust::Held(_)) {
                    ctx.trust = Trust::Held(ctx.state);
                }
                let widths = Widths::of(head, s, &ctx.state);
                let packet = self.late.hold(head.cid, widths);
                if widths.is_some() {
                    packet.extend_from_slice(out);
                    packet.extend_from_slice(payload);
                }
                ctx.state = state;
                ctx.pace.moved(self.now);
                self.held = true;
                out.clear();
                return Err(DropReason::Held);
            }
            if matches!(ctx.trust, Trust::Held(_)) {
                let confirms = Widths::of(head, s, &ctx.state);
                self.late
                    .confirm(head.cid, |_, held| match (confirms, held) {
                        (Some(c), Some(h)) => c.within(h),
                        _ => false,
                    });
            }
            out.extend_from_slice(payload);
            if s.rtp {
                self.advance = Some(fields.seq.wrapping_sub(ctx.state.fields.seq));
                ctx.pace.learn(self.now, fields.seq, fields.ip_id);
            }
            ctx.state = state;
            ctx.trust = Trust::Sure;
            return Ok(());
        }
        if let Trust::Held(before) = ctx.trust {
            ctx.state = before;
        }
        ctx.trust = Trust::Suspect;
        out.clear();
        if watch {
            (self.notes_due, self.since_note) = (PAIR_NOTE_COPIES, 0);
        }
        Err(DropReason::ChecksumMismatch)
    }
}

/// Whether the IR-N flags `flags` set the step, frame and pair mode only where they have a
/// meaning: the step in RTP and echo mode over IPv4, frame mode in RTP mode, pair mode in RTP
/// mode over IPv4.
pub(super) fn extras_fit(s: Shape, flags: u8) -> bool {
    (s.own_ip_id() || flags & STEP == 0)
        && (s.rtp || flags & FRAME == 0)
        && ((s.rtp && s.own_ip_id()) || flags & PAIR == 0)
}

/// Sets the length fields of the header `out` of shape `s` for a packet of `total` octets, and
/// an IPv4 header's checksum.
fn set_lengths(out: &mut [u8], s: Shape, total: u16) {
    if s.v4 {
        out[2..4].copy_from_slice(&total.to_be_bytes());
        let sum = taroc_wire::checksum::checksum(&out[..20]);
        out[10..12].copy_from_slice(&sum.to_be_bytes());
    } else {
        out[4..6].copy_from_slice(&(total - 40).to_be_bytes());
    }
    if s.udp {
        out[s.ip + 4..s.ip + 6].copy_from_slice(&(total - s.ip as u16).to_be_bytes());
    }
}

/// A payload's one's-complement sum, computed once for all the trials of a frame.
struct Payload {
    sum: u16,
    len: usize,
}

impl Payload {
    fn of(payload: &[u8]) -> Payload {
        Payload {
            sum: taroc_wire::checksum::Sum::new().add_bytes(payload).fold(),
            len: payload.len(),
        }
    }
}

/// Fills the transport checksum field of the header `out` of shape `s` (its payload's sum
/// `payload`): `carried` if the frame carried it, else 0 in a context of zero UDP checksums,
/// else computed.
fn fill_checksum(
    out: &mut [u8],
    s: Shape,
    carried: Option<[u8; 2]>,
    zero_sum: bool,
    payload: &Payload,
) {
    if let Some(at) = s.checksum_at() {
        let sum = match carried {
            Some(sum) => sum,
            None if zero_sum => [0, 0],
            None => {
                out[at..at + 2].fill(0);
                checksum_of(out, s, payload.sum, payload.len)
                    .unwrap_or(0)
                    .to_be_bytes()
            }
        };
        out[at..at + 2].copy_from_slice(&sum);
    }
}
