//! The header part of CO-S and CO-N frames (spec section 8), read and written in one place:
//! [`Head::parse`] reads it from a frame, [`Head::emit`] writes it, and [`Head::decode`] gives
//! the fields it says against a decompressor's [`State`].

use alloc::vec::Vec;

use super::fields::{decode_lsb6, decode_lsb8, decode_offset, Dynamic, State};
use super::{
    flag, short_kind, short_of, Shape, CO_I, CO_I_CID, CO_N_LONG, ID_TRIALS, PAIR_TRIALS,
    SHORT_TRIALS,
};
use crate::codec::DropReason;

/// The header part of a CO-S or CO-N frame: its CID, its fields, its check and the transport
/// checksum when carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The CID of the context it names.
    pub cid: u8,
    /// The fields as coded.
    pub form: Form,
    /// The check of the original header ([`super::header_crc`]).
    pub crc: u16,
    /// The transport checksum, when carried (else computed, or 0).
    pub checksum: Option<[u8; 2]>,
}

/// The fields of a CO-S or CO-N frame as coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// CO-S: the two sequence LSBs; every field follows from the reference.
    Short {
        /// The sequence number's two LSBs.
        lsb: u8,
    },
    /// CO-I: the two sequence LSBs and six LSBs of the IPv4 Identification (in a context whose
    /// sequence number is the Identification, its 8 LSBs; in frame mode `| S S S M T O O O |`:
    /// three sequence LSBs, the marker, the scaled timestamp's LSB and three LSBs of the
    /// Identification's offset from the sequence number); the other fields follow from the
    /// reference.
    Id {
        /// The sequence number's two LSBs.
        lsb: u8,
        /// The octet's six other bits: the IP-ID's six LSBs, or in frame mode `| S M T O O O |`.
        ip_id: u8,
    },
    /// CO-N: the flags octet ([`flag`]) and the fields it says are there.
    Long {
        /// The flags octet (its C bit as the CID says).
        flags: u8,
        /// The sequence number's LSBs (as many as the S code says).
        seq: u16,
        /// The IP-ID's LSBs (as many as the I code says).
        ip_id: u16,
        /// The fragment field, when carried.
        frag: Option<u16>,
        /// The RTP octet `| T T | M | 0 0 0 0 0 |` (RTP contexts; else 0).
        rtp: u8,
        /// The timestamp field (T = 1: 8 LSBs of the scaled timestamp, 2: 16, 3: the
        /// timestamp).
        ts: u32,
        /// The new stride (T = 3).
        stride: u16,
    },
}

/// Shift of the timestamp code in the RTP octet.
pub const T_SHIFT: u8 = 6;

/// The marker bit of the RTP octet.
pub const RTP_M: u8 = 0x20;

/// The frame-mode bit of the RTP octet: the context is in frame mode from this frame on
/// ([`super::FRAME`]).
pub const RTP_V: u8 = 0x10;

/// The pair-mode bit of the RTP octet (IPv4): the context is in pair mode from this frame on
/// ([`super::PAIR`]).
pub const RTP_P: u8 = 0x08;

/// The marker bit of a CO-I octet's six low bits in frame mode (`| S S | S M T O O O |`).
pub const ID_M: u8 = 0x10;

/// The scaled timestamp's LSB in a CO-I octet's six low bits in frame mode.
pub const ID_T: u8 = 0x08;

/// The IP-ID offset's three LSBs in a CO-I octet's six low bits in frame mode.
pub const ID_O: u8 = 0x07;

/// Sequence advances a CO-I frame in frame mode tries: `n`, `n + 8`, ... `n + 56`, as far as a
/// CO-S frame's.
pub const FRAME_SEQ_TRIALS: u16 = 8;

/// Trials of a CO-I frame in frame mode: each sequence advance with the timestamp the one its
/// LSB says, two frames on and four frames on, each with the IP-ID offset its LSBs say, 8 and 16
/// on.
pub const FRAME_TRIALS: u16 = 9 * FRAME_SEQ_TRIALS;

/// Reads a frame's octets in order.
struct Reader<'a> {
    frame: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// The next `n` octets.
    fn take(&mut self, n: usize) -> Result<&'a [u8], DropReason> {
        let bytes = self.frame.get(self.at..self.at + n);
        self.at += n;
        bytes.ok_or(DropReason::Malformed)
    }

    /// The next `n` octets as a big-endian number.
    fn number(&mut self, n: usize) -> Result<u32, DropReason> {
        Ok(self.take(n)?.iter().fold(0, |v, &b| v << 8 | u32::from(b)))
    }
}

/// The field widths (octets) of the codes 0, 1, 2 (the S and I codes).
fn width(code: u8) -> Result<usize, DropReason> {
    match code {
        0..=2 => Ok(usize::from(code)),
        _ => Err(DropReason::Malformed),
    }
}

impl Head {
    /// Parses the header part of a CO-S or CO-N frame of kind byte `k` (all but its payload),
    /// `shape_of` giving the shape of the context a CID names (`None`: no context); the head
    /// and the octets it took.
    pub fn parse(
        k: u8,
        frame: &[u8],
        shape_of: impl Fn(u8) -> Option<Shape>,
    ) -> Result<(Head, usize), DropReason> {
        let mut r = Reader { frame, at: 0 };
        if let Some((cid, lsb)) = short_of(k) {
            let crc = r.number(2)? as u16;
            let s = shape_of(cid).ok_or(DropReason::NoContext)?;
            if !s.has_seq() && lsb != 0 {
                return Err(DropReason::Malformed);
            }
            let form = Form::Short { lsb };
            let head = Head {
                cid,
                form,
                crc,
                checksum: None,
            };
            return Ok((head, r.at));
        }
        match k {
            CO_I | CO_I_CID => Head::parse_id(k == CO_I_CID, r, shape_of),
            CO_N_LONG => Head::parse_long(r, shape_of),
            _ => Err(DropReason::Malformed),
        }
    }

    /// [`Head::parse`] of a CO-I frame (with a CID octet if `named`), from its second octet on.
    fn parse_id(
        named: bool,
        mut r: Reader<'_>,
        shape_of: impl Fn(u8) -> Option<Shape>,
    ) -> Result<(Head, usize), DropReason> {
        let cid = if named {
            match r.number(1)? as u8 {
                0 => return Err(DropReason::Malformed),
                c => c,
            }
        } else {
            0
        };
        let octet = r.number(1)? as u8;
        let crc = r.number(2)? as u16;
        let s = shape_of(cid).ok_or(DropReason::NoContext)?;
        if !s.v4 {
            return Err(DropReason::Malformed);
        }
        let form = Form::Id {
            lsb: octet >> 6,
            ip_id: octet & 0x3F,
        };
        let head = Head {
            cid,
            form,
            crc,
            checksum: None,
        };
        Ok((head, r.at))
    }

    /// [`Head::parse`] of a CO-N frame, from its flags octet on.
    fn parse_long(
        mut r: Reader<'_>,
        shape_of: impl Fn(u8) -> Option<Shape>,
    ) -> Result<(Head, usize), DropReason> {
        let flags = r.number(1)? as u8;
        let cid = if flags & flag::C != 0 {
            match r.number(1)? as u8 {
                0 => return Err(DropReason::Malformed),
                c => c,
            }
        } else {
            0
        };
        let s = shape_of(cid).ok_or(DropReason::NoContext)?;
        let (s_code, i_code) = ((flags >> flag::S_SHIFT) & 3, (flags >> flag::I_SHIFT) & 3);
        let bad = (s_code != 0 && !s.has_seq())
            || ((i_code != 0 || flags & flag::D != 0) && !s.own_ip_id())
            || (flags & flag::F != 0 && !s.v4)
            || (flags & flag::K != 0 && s.checksum_at().is_none());
        if bad {
            return Err(DropReason::Malformed);
        }
        let seq = r.number(width(s_code)?)? as u16;
        let ip_id = r.number(width(i_code)?)? as u16;
        let frag = if flags & flag::F != 0 {
            Some(r.number(2)? as u16)
        } else {
            None
        };
        let (mut rtp, mut ts, mut stride) = (0, 0, 0);
        if s.rtp {
            rtp = r.number(1)? as u8;
            if rtp & !(3 << T_SHIFT | RTP_M | RTP_V | RTP_P) != 0
                || (rtp & RTP_P != 0 && !s.own_ip_id())
            {
                return Err(DropReason::Malformed);
            }
            match rtp >> T_SHIFT {
                0 => {}
                1 => ts = r.number(1)?,
                2 => ts = r.number(2)?,
                _ => {
                    ts = r.number(4)?;
                    stride = r.number(2)? as u16;
                }
            }
        }
        let crc = r.number(2)? as u16;
        let checksum = if flags & flag::K != 0 {
            Some(r.take(2)?.try_into().expect("two bytes"))
        } else {
            None
        };
        let form = Form::Long {
            flags,
            seq,
            ip_id,
            frag,
            rtp,
            ts,
            stride,
        };
        let head = Head {
            cid,
            form,
            crc,
            checksum,
        };
        Ok((head, r.at))
    }

    /// Writes the header part into `out` (after what it holds) for a context of shape `s`;
    /// the frame's kind byte. A CO-S head must name a CID below [`super::SHORT_CIDS`].
    pub fn emit(&self, s: Shape, out: &mut Vec<u8>) -> u8 {
        let mut put = |value: u32, n: usize| {
            out.extend_from_slice(&value.to_be_bytes()[4 - n..]);
        };
        let kind = match self.form {
            Form::Short { lsb } => {
                put(u32::from(self.crc), 2);
                return short_kind(self.cid, lsb);
            }
            Form::Id { lsb, ip_id } => {
                if self.cid != 0 {
                    put(u32::from(self.cid), 1);
                }
                put(u32::from(lsb << 6 | ip_id & 0x3F), 1);
                put(u32::from(self.crc), 2);
                return if self.cid != 0 { CO_I_CID } else { CO_I };
            }
            Form::Long {
                flags,
                seq,
                ip_id,
                frag,
                rtp,
                ts,
                stride,
            } => {
                let c = if self.cid != 0 { flag::C } else { 0 };
                put(u32::from(flags & !flag::C | c), 1);
                if self.cid != 0 {
                    put(u32::from(self.cid), 1);
                }
                put(u32::from(seq), usize::from((flags >> flag::S_SHIFT) & 3));
                put(u32::from(ip_id), usize::from((flags >> flag::I_SHIFT) & 3));
                if let Some(frag) = frag {
                    put(u32::from(frag), 2);
                }
                if s.rtp {
                    put(u32::from(rtp), 1);
                    match rtp >> T_SHIFT {
                        0 => {}
                        1 => put(ts, 1),
                        2 => put(ts, 2),
                        _ => {
                            put(ts, 4);
                            put(u32::from(stride), 2);
                        }
                    }
                }
                CO_N_LONG
            }
        };
        put(u32::from(self.crc), 2);
        if let Some(sum) = self.checksum {
            out.extend_from_slice(&sum);
        }
        kind
    }

    /// The number of decodings to try in a context of shape `s` and state `state`:
    /// [`SHORT_TRIALS`] for a CO-S frame in a context with a sequence number (three times as
    /// many in frame mode, [`PAIR_TRIALS`] times as many in pair mode, four times as many where
    /// the sequence number is the IPv4 Identification), [`ID_TRIALS`] times as
    /// many for a CO-I frame in RTP and echo mode, `FRAME_TRIALS` (72) for a CO-I frame in frame
    /// mode, [`ID_TRIALS`] for a frame that gives the IPv4 Identification by 8 LSBs (CO-I where
    /// it is the sequence number, CO-N with I = 1, or S = 1 where it is the sequence number),
    /// else 1.
    pub fn trials(&self, s: Shape, state: &State) -> u16 {
        match self.form {
            Form::Id { .. } if s.rtp && state.frame => FRAME_TRIALS,
            Form::Short { .. } if s.rtp && state.frame => 3 * SHORT_TRIALS,
            Form::Short { .. } if state.pair => PAIR_TRIALS * SHORT_TRIALS,
            Form::Short { .. } if s.v4 && !s.own_ip_id() => 4 * SHORT_TRIALS,
            Form::Short { .. } if s.has_seq() => SHORT_TRIALS,
            Form::Id { .. } if s.own_ip_id() => SHORT_TRIALS * ID_TRIALS,
            Form::Id { .. } => ID_TRIALS,
            Form::Long { flags, .. } if self.lsb8_ip_id(s, flags) => ID_TRIALS,
            _ => 1,
        }
    }

    /// The fields the head says at trial `trial` (below [`Head::trials`]) against the
    /// decompressor's `state` of a context of shape `s`, and its state after it; `None` if they
    /// do not decode (a scaled timestamp without a stride or out of range, a CO-S frame in pair
    /// mode without `pair`, the last IP-ID of the context's pair, [`super::pair`]).
    pub fn decode(
        &self,
        s: Shape,
        state: &State,
        trial: u16,
        pair: Option<u16>,
    ) -> Option<(Dynamic, State)> {
        let (fields, step, stride) = match self.form {
            Form::Short { lsb } if s.rtp && state.frame => {
                // In frame mode each sequence advance with the timestamp the reference's, and
                // one and two frames on (a loss run over a frame's end).
                let n = state.short_advance(s, lsb, trial % SHORT_TRIALS);
                let mut fields = state.advanced(s, n);
                let frames = u32::from(trial / SHORT_TRIALS);
                fields.ts = fields.ts.wrapping_add(frames * u32::from(state.stride));
                (fields, state.step, state.stride)
            }
            Form::Short { lsb } if state.pair => {
                // The IP-ID one above the pair's last at the first try; then 2, 3, ... above it
                // (frames of the pair's other flows lost), each sequence advance in turn.
                let n = state.short_advance(s, lsb, trial / PAIR_TRIALS);
                let mut fields = state.advanced(s, n);
                fields.ip_id = pair?.wrapping_add(1 + trial % PAIR_TRIALS);
                (fields, state.step, state.stride)
            }
            Form::Short { lsb } => {
                let n = state.short_advance(s, lsb, trial);
                (state.advanced(s, n), state.step, state.stride)
            }
            Form::Id { lsb, ip_id } if s.rtp && state.frame => {
                // Three sequence LSBs: the packet up to 7 on at the first try; then 8, 16 ... on,
                // each with the timestamp 2 and 4 frames further on and the IP-ID offset 8 and
                // 16 further on (a loss run over several short frames).
                let r = &state.fields;
                let lsbs = u16::from(lsb << 1 | ip_id >> 5);
                let n = (lsbs.wrapping_sub(r.seq) & 0x07) + 8 * (trial % FRAME_SEQ_TRIALS);
                let frames = u32::from(trial / FRAME_SEQ_TRIALS % 3) * 2;
                let more = 8 * (trial / (3 * FRAME_SEQ_TRIALS));
                let mut fields = state.advanced(s, n);
                // The IP-ID's offset from the sequence number, which packets sent back to back
                // keep: a run of them lost leaves it.
                let offset = decode_offset(r.ip_id.wrapping_sub(r.seq), ip_id & ID_O) + more;
                fields.ip_id = fields.seq.wrapping_add(offset);
                let ts = state.frame_ts(u8::from(ip_id & ID_T != 0))?;
                fields.ts = ts.wrapping_add(frames * u32::from(state.stride));
                fields.marker = ip_id & ID_M != 0;
                (fields, state.step, state.stride)
            }
            Form::Id { lsb, ip_id } if s.own_ip_id() => {
                // Each sequence advance in turn, then each with the IP-ID 64 further on.
                let n = state.short_advance(s, lsb, trial % SHORT_TRIALS);
                let mut fields = state.advanced(s, n);
                fields.ip_id = decode_lsb6(state.fields.ip_id, ip_id)
                    .wrapping_add(64 * (trial / SHORT_TRIALS));
                (fields, state.step, state.stride)
            }
            Form::Id { lsb, ip_id } => {
                // IPv4 IP-only or UDP: the octet is the IP-ID's (the sequence number's) 8 LSBs.
                let seq = decode_lsb8(state.fields.seq, lsb << 6 | ip_id).wrapping_add(256 * trial);
                let n = seq.wrapping_sub(state.fields.seq);
                (state.advanced(s, n), state.step, state.stride)
            }
            Form::Long { .. } => return self.decode_long(s, state, trial),
        };
        Some((
            fields,
            State {
                fields,
                step,
                stride,
                frame: state.frame,
                pair: state.pair,
            },
        ))
    }

    /// Whether a CO-N frame of `flags` in a context of shape `s` gives the IPv4 Identification
    /// by its 8 LSBs (I = 1, or S = 1 where it is the sequence number), which trials move
    /// ([`ID_TRIALS`]).
    fn lsb8_ip_id(&self, s: Shape, flags: u8) -> bool {
        let code = if s.own_ip_id() {
            flags >> flag::I_SHIFT
        } else {
            flags >> flag::S_SHIFT
        };
        s.v4 && code & 3 == 1
    }

    /// [`Head::decode`] of a CO-N frame: its fields as coded against the reference `state`, an
    /// IP-ID coded by 8 LSBs `256 * trial` further on.
    fn decode_long(&self, s: Shape, state: &State, trial: u16) -> Option<(Dynamic, State)> {
        let Form::Long {
            flags,
            seq,
            ip_id,
            frag,
            rtp,
            ts,
            stride,
        } = self.form
        else {
            return None;
        };
        let r = &state.fields;
        let further = 256 * trial;
        let seq = match (flags >> flag::S_SHIFT) & 3 {
            0 => r.seq,
            1 if s.own_ip_id() => decode_lsb8(r.seq, seq as u8),
            1 => decode_lsb8(r.seq, seq as u8).wrapping_add(further),
            _ => seq,
        };
        let step = flags & flag::D != 0;
        let frame = s.rtp && rtp & RTP_V != 0;
        let ip_id = if !s.v4 {
            0
        } else if !s.own_ip_id() {
            seq
        } else {
            match (flags >> flag::I_SHIFT) & 3 {
                0 => state.ip_id_with(seq, step),
                1 => decode_lsb8(r.ip_id, ip_id as u8).wrapping_add(further),
                _ => ip_id,
            }
        };
        let (ts, stride) = match rtp >> T_SHIFT {
            _ if !s.rtp => (0, 0),
            0 => (state.ts_with(seq, frame), state.stride),
            1 => (state.scaled_ts(ts, 8)?, state.stride),
            2 => (state.scaled_ts(ts, 16)?, state.stride),
            _ => (ts, stride),
        };
        let fields = Dynamic {
            ip_id,
            frag: frag.unwrap_or(r.frag),
            seq,
            ts,
            marker: rtp & RTP_M != 0,
        };
        let state = State {
            fields,
            step: step && s.own_ip_id(),
            stride,
            frame,
            pair: s.rtp && s.own_ip_id() && rtp & RTP_P != 0,
        };
        Some((fields, state))
    }
}
