//! A context of the compressor for packets that are not compressible TCP: its template, the
//! decompressor's possible references (the last frames' states), what the packets so far say
//! of its IP-ID step, RTP stride and modes, and its CO-N heads coded against those references.

use alloc::vec::Vec;

use crate::plus::other::fields::{fits_lsb8, Dynamic, State};
use crate::plus::other::head::{Form, Head, RTP_M, RTP_P, RTP_V, T_SHIFT};
use crate::plus::other::{flag, Shape, REFRESH, START_IRS, WINDOW};

/// A context goes into pair mode after this many more packets on the pair's line than on its
/// own, and out of it after as many more on its own line.
const PAIR_SCORE: i8 = 2;

/// One flow's context at the compressor (see the module).
#[derive(Debug, Clone)]
pub(super) struct CompContext {
    /// The flow's header with the per-packet fields zeroed.
    pub(super) template: Vec<u8>,
    /// What the header holds (IPv4 or IPv6, UDP, RTP, ...).
    pub(super) shape: Shape,
    /// Packets since the last IR-N.
    pub(super) since_ir: u16,
    /// Packets between refresh IR-Ns now ([`REFRESH`] doubling up to the compressor's most).
    pub(super) period: u16,
    /// IR-N frames still to send (a start's, an answer's, a refresh's).
    pub(super) irs_due: u8,
    /// The decompressor's state after each of the last frames, newest first.
    pub(super) refs: [State; WINDOW],
    /// The last packet's fields.
    pub(super) last: Dynamic,
    /// Whether the IP-ID steps with the sequence number, as the packets so far say.
    pub(super) step: bool,
    /// The RTP timestamp stride, as the packets so far say, and the last advance seen.
    pub(super) stride: u16,
    pub(super) last_delta: u32,
    /// Frame mode ([`FRAME`](crate::plus::other::FRAME)), as the packets so far say: two packets in
    /// a row with one timestamp set it, a timestamp that moves after a packet without the marker
    /// clears it.
    pub(super) frame: bool,
    /// Pair mode ([`PAIR`](crate::plus::other::PAIR)), as the packets so far say, and the score
    /// that sets it: up for a packet whose IP-ID is one above the pair's last and not on the flow's
    /// own line, down for one on its own line (unchanged, or stepping with the sequence number) and
    /// not the pair's.
    pub(super) pair: bool,
    pub(super) pair_score: i8,
    pub(super) last_used: u64,
    /// When it was set up (the compressor's clock): a base is named with it, so that a base
    /// whose CID went to another flow is not taken for it.
    pub(super) birth: u64,
    /// The context its start IR-Ns replicate ([`replica`](crate::plus::other::replica)): CID and
    /// birth.
    pub(super) base: Option<(u8, u64)>,
    /// The CID it had before it moved to a CO-S CID, which its start IR-Ns replicate.
    pub(super) moved_from: Option<u8>,
    /// Packets since it was set up.
    pub(super) packets: u32,
    /// Frames since its last CO-N or IR-N.
    pub(super) since_long: u16,
}

impl CompContext {
    /// A context for `template` (of shape `s`) whose first packet has the fields `d`, set up
    /// at the compressor's `clock`.
    pub(super) fn new(template: Vec<u8>, s: Shape, d: Dynamic, clock: u64) -> CompContext {
        let step = s.own_ip_id() && d.ip_id != 0;
        let state = State {
            fields: d,
            step,
            stride: 0,
            frame: false,
            pair: false,
        };
        CompContext {
            template,
            shape: s,
            since_ir: 0,
            period: REFRESH,
            irs_due: START_IRS - 1,
            refs: [state; WINDOW],
            last: d,
            step,
            stride: 0,
            last_delta: 0,
            frame: false,
            pair: false,
            pair_score: 0,
            last_used: clock,
            birth: clock,
            base: None,
            moved_from: None,
            packets: 0,
            since_long: 0,
        }
    }

    /// Starts the context over on another CID: start IR-Ns (whole, or replicating
    /// `moved_from`), the refresh period from its start.
    pub(super) fn restart(&mut self, clock: u64, moved_from: Option<u8>, period: u16) {
        self.irs_due = START_IRS;
        self.since_ir = 0;
        self.period = period;
        self.birth = clock;
        self.base = None;
        self.moved_from = moved_from;
        self.packets = 0;
    }

    /// Learns the IP-ID's step (and, where `pair` is the last IP-ID of the context's pair,
    /// pair mode) and the timestamp's stride from the packet of fields `d`.
    pub(super) fn learn(&mut self, d: &Dynamic, pair: Option<u16>) {
        let s = self.shape;
        let last = self.last;
        let n = d.seq.wrapping_sub(last.seq);
        if s.own_ip_id() {
            let stepped = n != 0 && d.ip_id == last.ip_id.wrapping_add(n);
            if stepped {
                self.step = true;
            } else if d.ip_id == last.ip_id {
                self.step = false;
            }
            if s.rtp {
                let paired = pair.is_some_and(|p| d.ip_id == p.wrapping_add(1));
                let own = stepped || d.ip_id == last.ip_id;
                if paired && !own {
                    self.pair_score = (self.pair_score + 1).min(PAIR_SCORE);
                } else if own && !paired {
                    self.pair_score = (self.pair_score - 1).max(-PAIR_SCORE);
                }
                if self.pair_score == PAIR_SCORE {
                    self.pair = true;
                } else if self.pair_score == -PAIR_SCORE {
                    self.pair = false;
                }
            }
        }
        if s.rtp && n == 1 {
            let delta = d.ts.wrapping_sub(last.ts);
            if delta == 0 {
                self.frame = true;
            } else if !last.marker {
                self.frame = false;
            }
            if delta != 0 && delta <= u32::from(u16::MAX) {
                if self.stride == 0 || delta == self.last_delta {
                    self.stride = delta as u16;
                }
                self.last_delta = delta;
            }
        }
        self.last = *d;
    }

    /// The state a decompressor holds after a frame of this packet, `d`, that sets the
    /// context's step and stride.
    pub(super) fn state(&self, d: Dynamic) -> State {
        State {
            fields: d,
            step: self.step && self.shape.own_ip_id(),
            stride: if self.shape.rtp { self.stride } else { 0 },
            frame: self.shape.rtp && self.frame,
            pair: self.pair && !self.frame,
        }
    }

    /// Records the decompressor's state after the frame just sent, the newest reference.
    pub(super) fn push(&mut self, state: State) {
        self.refs.copy_within(..WINDOW - 1, 1);
        self.refs[0] = state;
    }

    /// The references the decompressor may hold: the last [`WINDOW`] frames' states.
    pub(super) fn refs(&self) -> &[State] {
        &self.refs
    }

    /// Whether `head` decodes into `want` against every reference (a CO-S frame in pair mode:
    /// with `pair` the decompressor's last IP-ID of the pair).
    pub(super) fn decodes(&self, head: &Head, want: &State, pair: Option<u16>) -> bool {
        let s = self.shape;
        self.refs().iter().all(|r| {
            head.decode(s, r, 0, pair)
                .is_some_and(|(_, got)| got == *want)
        })
    }

    /// The CO-N head of the packet of fields `want.fields`: each field in as few octets as
    /// decode against every reference.
    ///
    /// An `anchor` codes the sequence number, IP-ID and timestamp by their LSBs at least (never
    /// as following the reference), so that it decodes against references far older than the
    /// window.
    pub(super) fn long_head(
        &self,
        want: &State,
        crc: u16,
        checksum: Option<[u8; 2]>,
        cid: u8,
        anchor: bool,
    ) -> Head {
        let s = self.shape;
        let d = &want.fields;
        let refs = self.refs();
        let s_code: u8 = if !s.has_seq() || (!anchor && refs.iter().all(|r| r.fields.seq == d.seq))
        {
            0
        } else if refs.iter().all(|r| fits_lsb8(r.fields.seq, d.seq)) {
            1
        } else {
            2
        };
        let i_code: u8 = if !s.own_ip_id()
            || (!anchor
                && refs
                    .iter()
                    .all(|r| r.ip_id_with(d.seq, want.step) == d.ip_id))
        {
            0
        } else if refs.iter().all(|r| fits_lsb8(r.fields.ip_id, d.ip_id)) {
            1
        } else {
            2
        };
        let frag = refs
            .iter()
            .any(|r| r.fields.frag != d.frag)
            .then_some(d.frag);
        let mut flags = s_code << flag::S_SHIFT | i_code << flag::I_SHIFT;
        if frag.is_some() {
            flags |= flag::F;
        }
        if checksum.is_some() {
            flags |= flag::K;
        }
        if want.step {
            flags |= flag::D;
        }
        let marker = if d.marker { RTP_M } else { 0 }
            | if want.frame { RTP_V } else { 0 }
            | if want.pair { RTP_P } else { 0 };
        let mut head = Head {
            cid,
            form: Form::Long {
                flags,
                seq: d.seq,
                ip_id: d.ip_id,
                frag,
                rtp: 3 << T_SHIFT | marker,
                ts: d.ts,
                stride: want.stride,
            },
            crc,
            checksum,
        };
        if s.rtp {
            // The timestamp in as few octets as decode everywhere: on the line, then 8 and 16
            // LSBs of the scaled timestamp, else whole with the stride.
            let same_stride = refs.iter().all(|r| r.stride == want.stride);
            let stride = u32::from(want.stride).max(1);
            for code in u8::from(anchor)..3 {
                let ts = match code {
                    0 => 0,
                    1 => (d.ts / stride) & 0xFF,
                    _ => (d.ts / stride) & 0xFFFF,
                };
                let mut trial = head;
                if let Form::Long { rtp, ts: t, .. } = &mut trial.form {
                    *rtp = code << T_SHIFT | marker;
                    *t = ts;
                }
                if same_stride && self.decodes(&trial, want, None) {
                    head = trial;
                    break;
                }
            }
        }
        head
    }
}
