//! The compressor's side of `taroc-plus` for packets that are not compressible TCP: a context
//! per flow of the same template, IR-N frames to start and refresh it, CO-S and CO-N frames
//! against the decompressor's possible references.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::fields::{Dynamic, State};
use super::head::{Form, Head, ID_M, ID_O, ID_T};
use super::pair::{key_of, Pairs, PAIR_RUN};
use super::replica::{changes, Replica, MAX_CHANGES};
use super::{
    header_crc, shape, template_in, transport_checksum, Shape, FRAME, IR_N, MAX_CONTEXTS,
    MAX_HEADER, MAX_REFRESH, MAX_REFRESH_ALONE, PAIR, REFRESH, REFRESH_ASKING, SHORT_CIDS,
    START_IRS, START_IRS_ASKING, STEP,
};
use crate::codec::FrameKind;
use crate::plus::compressor::LOSSY_MEMORY;
use crate::tcp::packet::length_field_offset;

mod context;

use context::CompContext;

/// Without context requests, every this many frames of a context one is a CO-N *anchor*: its
/// sequence number, IP-ID and timestamp as LSBs, which decode against references far older
/// than the window, so that a decompressor whose reference a long loss left behind (CO-S frames
/// decode by trial up to 63 packets on) is back within this many frames, not at the next
/// refresh.
pub const ANCHOR: u16 = 16;

/// A context above the CO-S CIDs moves to one of them after this many packets ...
pub const MOVE_AFTER: u32 = 16;

/// ... if that CID's context has not sent for this many of the compressor's packets.
pub const MOVE_IDLE: u64 = 64;

/// Packets of the compressor within which a frame from the far end must have arrived for its
/// contexts to count on context requests ([`OtherCompressor::heard`]).
pub const HEARD_MEMORY: u64 = 256;

/// The compressor's first packets, in which its contexts count on context requests before any
/// frame from the far end arrived (the opposite direction's first packet may come after a few).
pub const HEARD_FIRST: u64 = 32;

/// IR-N frames a context starts with (or answers a context request with) beyond its usual ones
/// where feedback said lately that the link loses frames: a start all lost costs a context
/// request's round trip, and for a flow that sends seldom, its next packets after that.
pub const LOSSY_START_EXTRA: u8 = 1;

/// A context that has sent fewer than this many packets when feedback first says that the link
/// loses frames gets [`LOSSY_START_EXTRA`] more IR-Ns then ([`OtherCompressor::lossy`]): its
/// start went out before the link was known to lose frames, and a flow whose first packets a
/// burst took may have no later frame refused to ask for it. On the mixed capture (loss
/// 10-50%, random and in bursts of 4 and 50, seeds 1-3) QUIC's damage went from 11.5 to 7.2 per
/// 1000, DNS's from 12.2 to 6.1 and fragments' from 13.4 to 7.0; a link that loses nothing pays
/// nothing.
pub const YOUNG: u32 = 64;

/// On a link that feedback said lately loses frames, a context (not in RTP mode: a call's
/// silences would pay for it) whose last packet came more than this many of the compressor's
/// packets ago sends its next one as a whole IR-N: the
/// context's start, or the answer to its request, may have been lost meanwhile with no refused
/// frame to ask for it, and a flow that sends seldom (fragmented datagrams every two seconds, a
/// stub resolver's queries) would lose its next packets too. On the mixed capture (loss
/// 10-50%, random and in bursts of 4 and 50, seeds 1-3) fragments' damage went from 37.5 to
/// 13.4 per 1000 and DNS's from 17.4 to 13.3, for 0.1 octets per packet more under loss (at
/// 32: damage a little lower, 0.5 octets more).
pub const IDLE_WHOLE: u64 = 128;

/// The compressor's side: contexts keyed by their template.
#[derive(Debug)]
pub struct OtherCompressor {
    contexts: Vec<CompContext>,
    by_template: BTreeMap<Vec<u8>, u8>,
    clock: u64,
    /// Whether the decompressor sends context requests.
    requests: bool,
    /// The last IP-ID of each pair ([`super::pair`]).
    pairs: Pairs,
    /// `clock` when feedback last said that the link loses frames.
    lossy_at: Option<u64>,
    /// The compressor's packet count when a frame from the far end last arrived.
    heard_at: Option<u64>,
    /// The link is declared to lose frames: as if feedback said so at every packet.
    declared_lossy: bool,
}

impl Default for OtherCompressor {
    /// A compressor for a decompressor without context requests.
    fn default() -> OtherCompressor {
        OtherCompressor::new(false, false)
    }
}

impl OtherCompressor {
    /// A compressor for a decompressor that sends context requests (`requests`) or not. With
    /// them the refresh period doubles up to [`MAX_REFRESH`] packets; without, up to
    /// [`MAX_REFRESH_ALONE`], and every [`ANCHOR`]th frame of a context is a CO-N anchor. On a
    /// link declared to lose frames (`lossy`), every packet is as after a loss note
    /// ([`OtherCompressor::lossy`]).
    pub fn new(requests: bool, lossy: bool) -> OtherCompressor {
        OtherCompressor {
            contexts: Vec::new(),
            by_template: BTreeMap::new(),
            clock: 0,
            requests,
            pairs: Pairs::default(),
            lossy_at: None,
            heard_at: None,
            declared_lossy: lossy,
        }
    }

    /// Feedback said that the link loses frames (a loss note, a context request): for the next
    /// 4096 packets no CO-S frame counts on the pair's last IP-ID, and contexts
    /// start with [`LOSSY_START_EXTRA`] more IR-Ns.
    ///
    /// The first such note in 4096 packets also gives each context that has sent
    /// fewer than [`YOUNG`] packets [`LOSSY_START_EXTRA`] more IR-Ns.
    pub fn lossy(&mut self) {
        if self.calm() {
            for ctx in self.contexts.iter_mut().filter(|c| c.packets < YOUNG) {
                ctx.irs_due += LOSSY_START_EXTRA;
            }
        }
        self.lossy_at = Some(self.clock);
    }

    /// A frame from the far end arrived: the opposite direction carries frames, so context
    /// requests can reach this compressor.
    pub fn heard(&mut self) {
        self.heard_at = Some(self.clock);
    }

    /// Whether the contexts count on context requests: the decompressor sends them and, after
    /// the compressor's first [`HEARD_FIRST`] packets, a frame from the far end arrived in its
    /// last [`HEARD_MEMORY`]. Else they refresh as without requests, so that a context whose
    /// start was lost comes back within [`MAX_REFRESH_ALONE`] packets where no request can
    /// come back (a link used one way only, where feedback goes with the opposite
    /// direction's frames).
    fn asking(&self) -> bool {
        self.requests
            && (self.clock < HEARD_FIRST
                || self.heard_at.is_some_and(|t| self.clock - t < HEARD_MEMORY))
    }

    /// Whether no feedback said lately that the link loses frames, nor was it declared to.
    fn calm(&self) -> bool {
        !self.declared_lossy && self.lossy_at.is_none_or(|t| self.clock - t >= LOSSY_MEMORY)
    }

    /// IR-N frames a context starts with beyond its usual ones: [`LOSSY_START_EXTRA`] on a link
    /// that feedback said lately loses frames.
    fn lossy_extra(&self) -> u8 {
        if self.calm() {
            0
        } else {
            LOSSY_START_EXTRA
        }
    }

    /// Whether CO-S frames in pair mode count on the decompressor holding the pair's last
    /// IP-ID: only where the decompressor sends feedback (so that a link that loses frames is
    /// known) and none said lately that the link loses frames.
    fn pairing(&self) -> bool {
        self.asking() && self.calm()
    }

    /// Compresses `packet` into `out` (IR-N, CO-S or CO-N), or returns `None` (send it whole).
    /// Without `payload` the frame is a CO-N head that stops before the payload (a tunnel
    /// carries it compressed); an IR-N frame is always whole.
    pub fn compress(
        &mut self,
        packet: &[u8],
        out: &mut Vec<u8>,
        payload: bool,
    ) -> Option<FrameKind> {
        let s = shape(packet)?;
        let key = s.v4.then(|| key_of(packet));
        let pair = key.and_then(|k| self.pairs.get(&k));
        // After PAIR_RUN frames that counted on the pair's last IP-ID, one that carries bits.
        let counted = pair.filter(|_| key.is_some_and(|k| self.pairs.run(&k) < PAIR_RUN));
        let (kind, implicit) = self.compress_shaped(packet, s, pair, counted, out, payload);
        if let Some(k) = key {
            let ip_id = u16::from_be_bytes([packet[4], packet[5]]);
            self.pairs.set_run(&k, ip_id, implicit);
        }
        Some(kind)
    }

    /// [`OtherCompressor::compress`] of a packet of shape `s` whose pair's last IP-ID is `pair`
    /// (`counted`: if a CO-S frame may count on it); the frame's kind and whether it counted
    /// on it.
    fn compress_shaped(
        &mut self,
        packet: &[u8],
        s: Shape,
        pair: Option<u16>,
        counted: Option<u16>,
        out: &mut Vec<u8>,
        payload: bool,
    ) -> (FrameKind, bool) {
        self.clock += 1;
        let pairing = self.pairing();
        // The template on the stack: a Vec is made only for a new context.
        let mut buf = [0; MAX_HEADER];
        let t = template_in(packet, s, &mut buf);
        let d = Dynamic::of(packet, s);
        out.clear();
        let Some(cid) = self.by_template.get(t).copied() else {
            let cid = self.new_context(t, s, d);
            return (self.start_frame(packet, cid, out, false), false);
        };
        let cid = if payload { self.moved(cid) } else { cid };
        let calm = self.calm();
        let asking = self.asking();
        let ctx = &mut self.contexts[usize::from(cid)];
        if !asking {
            // Where no request can come back, no period longer than without requests.
            ctx.period = ctx.period.min(MAX_REFRESH_ALONE);
        }
        if !calm && !s.rtp && self.clock - ctx.last_used > IDLE_WHOLE && ctx.irs_due == 0 {
            // A context that sends seldom, on a link that loses frames, goes whole again.
            ctx.irs_due = 1;
            ctx.base = None;
            ctx.moved_from = None;
        }
        ctx.last_used = self.clock;
        ctx.since_ir += 1;
        ctx.packets = ctx.packets.saturating_add(1);
        ctx.learn(&d, pair.filter(|_| asking));
        if ctx.irs_due > 0 || ctx.since_ir >= ctx.period {
            let start = ctx.irs_due > 0;
            if !start {
                let most = if asking {
                    MAX_REFRESH
                } else {
                    MAX_REFRESH_ALONE
                };
                ctx.period = (ctx.period * 2).min(most);
                // Without requests a refresh goes whole: it repairs whatever the decompressor
                // lacks. With them, a decompressor that lacks the context asks for it, and the
                // refresh replicates the context from itself: the per-packet fields and the check.
                ctx.base = None;
                ctx.moved_from = None;
            }
            ctx.irs_due = ctx.irs_due.saturating_sub(1);
            ctx.since_ir = 0;
            ctx.since_long = 0;
            let state = ctx.state(d);
            ctx.push(state);
            let own = !start && asking;
            return (self.start_frame(packet, cid, out, own), false);
        }
        let want = ctx.state(d);
        let checksum = carried_checksum(packet, s, &ctx.template);
        let crc = header_crc(packet, s);
        let short = Head {
            cid,
            form: Form::Short {
                lsb: if s.has_seq() { d.seq as u8 & 3 } else { 0 },
            },
            crc,
            checksum: None,
        };
        let id = Head {
            form: id_form(&want, s),
            ..short
        };
        let anchor = !asking && ctx.since_long + 1 >= ANCHOR;
        let head = if !payload || checksum.is_some() || anchor {
            ctx.long_head(&want, crc, checksum, cid, anchor)
        } else if cid < SHORT_CIDS && ctx.decodes(&short, &want, counted.filter(|_| pairing)) {
            short
        } else if s.v4 && ctx.decodes(&id, &want, None) {
            id
        } else {
            ctx.long_head(&want, crc, checksum, cid, false)
        };
        ctx.since_long = match head.form {
            Form::Long { .. } => 0,
            _ => ctx.since_long.saturating_add(1),
        };
        ctx.push(want);
        let kind = head.emit(s, out);
        if payload {
            out.extend_from_slice(&packet[s.header..]);
        }
        let implicit = want.pair && matches!(head.form, Form::Short { .. });
        (FrameKind::Profile(kind), implicit)
    }

    /// The CID context `cid` goes on: a busy context above the CO-S CIDs moves to one whose
    /// context has been idle for [`MOVE_IDLE`] packets (which starts over on `cid`).
    fn moved(&mut self, cid: u8) -> u8 {
        let c = &self.contexts[usize::from(cid)];
        if cid < SHORT_CIDS || c.irs_due > 0 || c.packets < MOVE_AFTER || !self.calm() {
            return cid;
        }
        let clock = self.clock;
        let Some(low) = (0..usize::from(SHORT_CIDS).min(self.contexts.len()))
            .filter(|&i| clock - self.contexts[i].last_used > MOVE_IDLE)
            .min_by_key(|&i| self.contexts[i].last_used)
        else {
            return cid;
        };
        self.contexts.swap(low, usize::from(cid));
        let first = self.first_period();
        self.contexts[low].restart(clock, Some(cid), first);
        self.contexts[usize::from(cid)].restart(clock, None, first);
        // The idle context starts over as a new one would, from a base if it has one.
        let idle = &self.contexts[usize::from(cid)];
        let base = self.base_for(&idle.template.clone(), idle.shape, Some(usize::from(cid)));
        self.contexts[usize::from(cid)].base = base;
        for i in [low, usize::from(cid)] {
            let t = &self.contexts[i].template;
            if let Some(entry) = self.by_template.get_mut(t.as_slice()) {
                *entry = i as u8;
            }
        }
        low as u8
    }

    /// The IR-N frame of `packet` in context `cid`: replicated from the context's base while it
    /// has one that is still the same flow (or from its own former CID after a move), else
    /// whole.
    fn start_frame(&self, packet: &[u8], cid: u8, out: &mut Vec<u8>, own: bool) -> FrameKind {
        let ctx = &self.contexts[usize::from(cid)];
        out.clear();
        let base = match ctx.moved_from {
            _ if own => Some((cid, ctx.refs(), &ctx.template)),
            Some(b) => Some((b, ctx.refs(), &ctx.template)),
            None => ctx.base.and_then(|(b, birth)| {
                let base = self.contexts.get(usize::from(b))?;
                (base.birth == birth).then_some((b, base.refs(), &base.template))
            }),
        };
        let mut buf = [0; 3 * MAX_CHANGES];
        let changed = base.and_then(|(b, refs, template)| {
            Some((b, refs, changes(template, &ctx.template, &mut buf)?))
        });
        let Some((b, base_refs, n)) = changed else {
            return ir_n(packet, ctx, cid, out);
        };
        let s = ctx.shape;
        let d = ctx.last;
        let state = ctx.state(d);
        let replica = Replica {
            cid,
            base: b,
            flags: s.flags() | ir_flags(&state),
            changes: &buf[..n],
            fields: d,
            frag_sent: s.v4 && base_refs.iter().any(|r| r.fields.frag != d.frag),
            stride: state.stride,
            crc: header_crc(packet, s),
            checksum: carried_checksum(packet, s, &ctx.template),
        };
        replica.emit(s, out);
        out.extend_from_slice(&packet[s.header..]);
        FrameKind::Profile(IR_N)
    }

    /// The base for a new context of template `t` and shape `s`: the context of that shape,
    /// past its start, whose template differs in fewest words (at most
    /// [`MAX_CHANGES`]), the most recently used of those; not `exclude` (the CID being
    /// replaced).
    fn base_for(&self, t: &[u8], s: Shape, exclude: Option<usize>) -> Option<(u8, u64)> {
        let mut buf = [0; 3 * MAX_CHANGES];
        self.contexts
            .iter()
            .enumerate()
            .filter(|&(i, c)| Some(i) != exclude && c.shape == s && c.irs_due == 0)
            .filter_map(|(i, c)| {
                let n = changes(&c.template, t, &mut buf)?;
                Some((n, core::cmp::Reverse(c.last_used), i))
            })
            .min()
            .map(|(_, _, i)| (i as u8, self.contexts[i].birth))
    }

    /// The first refresh period of a context: [`REFRESH`], or [`REFRESH_ASKING`] where the
    /// decompressor sends context requests.
    fn first_period(&self) -> u16 {
        if self.asking() {
            REFRESH_ASKING
        } else {
            REFRESH
        }
    }

    /// Sets a context up for the template `t` (least recently used replaced); its CID.
    fn new_context(&mut self, t: &[u8], s: Shape, d: Dynamic) -> u8 {
        let mut ctx = CompContext::new(t.to_vec(), s, d, self.clock);
        ctx.period = self.first_period();
        if self.asking() && s.udp {
            ctx.irs_due = START_IRS_ASKING - 1;
        }
        ctx.irs_due += self.lossy_extra();
        let lru = (self.contexts.len() >= MAX_CONTEXTS).then(|| {
            (0..self.contexts.len())
                .min_by_key(|&i| self.contexts[i].last_used)
                .unwrap_or(0)
        });
        ctx.base = self.base_for(t, s, lru);
        let cid = if self.contexts.len() < MAX_CONTEXTS {
            self.contexts.push(ctx);
            self.contexts.len() - 1
        } else {
            let lru = lru.unwrap_or(0);
            self.by_template.remove(&self.contexts[lru].template);
            self.contexts[lru] = ctx;
            lru
        };
        self.by_template.insert(t.to_vec(), cid as u8);
        cid as u8
    }

    /// Whether [`OtherCompressor::compress`] would code a packet of header template `template`
    /// (its header with the per-packet fields zeroed) as CO-N: its context exists and owes no
    /// IR-N, neither a start's nor a refresh.
    pub fn ready(&self, template: &[u8]) -> bool {
        self.by_template
            .get(template)
            .map(|&cid| &self.contexts[usize::from(cid)])
            .is_some_and(|ctx| ctx.irs_due == 0 && ctx.since_ir + 1 < ctx.period)
    }

    /// The decompressor asked for context `cid`: its next packets go IR-N (as at its start).
    /// Returns whether the context exists.
    pub fn request(&mut self, cid: u8) -> bool {
        let extra = self.lossy_extra();
        let Some(ctx) = self.contexts.get_mut(usize::from(cid)) else {
            return false;
        };
        ctx.irs_due = START_IRS + extra;
        ctx.period = if self.requests {
            REFRESH_ASKING
        } else {
            REFRESH
        };
        // The answer goes whole: the base may be what the decompressor lacks.
        ctx.base = None;
        ctx.moved_from = None;
        true
    }
}

/// The CO-I form of the packet of state `want` in a context of shape `s`: the sequence LSBs and
/// six IP-ID LSBs; where the sequence number is the IP-ID, its 8 LSBs; in frame mode the
/// three sequence LSBs, the marker, the scaled timestamp's LSB and three LSBs of the IP-ID's
/// offset from the sequence number.
fn id_form(want: &State, s: Shape) -> Form {
    let d = &want.fields;
    let lsb = d.seq as u8 & 3;
    if !s.own_ip_id() {
        return Form::Id {
            lsb: (d.ip_id >> 6) as u8 & 3,
            ip_id: d.ip_id as u8 & 0x3F,
        };
    }
    if !(s.rtp && want.frame) {
        return Form::Id {
            lsb,
            ip_id: d.ip_id as u8 & 0x3F,
        };
    }
    let t = (d.ts / u32::from(want.stride.max(1))) & 1 != 0;
    let offset = d.ip_id.wrapping_sub(d.seq) as u8 & ID_O;
    Form::Id {
        lsb: (d.seq >> 1) as u8 & 3,
        ip_id: (d.seq as u8 & 1) << 5
            | if d.marker { ID_M } else { 0 }
            | if t { ID_T } else { 0 }
            | offset,
    }
}

/// The transport checksum of `packet` (of shape `s`, context template `template`) if a frame
/// must carry it: unless the decompressor computes it (the field is the computed value) or the
/// context's checksums are 0.
fn carried_checksum(packet: &[u8], s: Shape, template: &[u8]) -> Option<[u8; 2]> {
    let at = s.checksum_at()?;
    let field = [packet[at], packet[at + 1]];
    let expected = if s.udp && template[at..at + 2] == [0, 0] {
        0
    } else {
        transport_checksum(packet, s)?
    };
    (field != expected.to_be_bytes()).then_some(field)
}

/// The IR-N flags of a state besides the mode's: the step, frame mode and pair mode.
fn ir_flags(state: &State) -> u8 {
    (if state.step { STEP } else { 0 })
        | (if state.frame { FRAME } else { 0 })
        | if state.pair { PAIR } else { 0 }
}

/// Writes `packet` as an IR-N frame of context `ctx`, CID `cid`.
fn ir_n(packet: &[u8], ctx: &CompContext, cid: u8, out: &mut Vec<u8>) -> FrameKind {
    let s = ctx.shape;
    let state = ctx.state(ctx.last);
    out.clear();
    out.extend_from_slice(packet);
    let at = length_field_offset(s.v4);
    out[at] = s.flags() | ir_flags(&state);
    out[at + 1] = cid;
    if s.rtp {
        out[s.ip + 4..s.ip + 6].copy_from_slice(&state.stride.to_be_bytes());
    }
    FrameKind::Profile(IR_N)
}
