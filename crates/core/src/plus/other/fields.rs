//! The per-packet fields of a non-TCP header, the state a decompressor keeps of them (its
//! reference), and how a CO-S frame's fields follow from it.

use super::{Shape, LSB_BELOW, TS_BELOW};

/// The per-packet fields of a header the template leaves out (lengths and checksums aside).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dynamic {
    /// The IPv4 Identification (0 with IPv6).
    pub ip_id: u16,
    /// The IPv4 flags and fragment offset (0 with IPv6).
    pub frag: u16,
    /// The sequence number: RTP's, the echo's, or else the IPv4 Identification (0 without).
    pub seq: u16,
    /// The RTP timestamp (0 without RTP).
    pub ts: u32,
    /// The RTP marker bit (false without RTP).
    pub marker: bool,
}

impl Dynamic {
    /// The fields of `packet`, of shape `s`.
    pub fn of(packet: &[u8], s: Shape) -> Dynamic {
        let word = |at: usize| u16::from_be_bytes([packet[at], packet[at + 1]]);
        let (ip_id, frag) = if s.v4 { (word(4), word(6)) } else { (0, 0) };
        let r = s.ip + 8;
        let seq = if s.rtp {
            word(r + 2)
        } else if s.echo {
            word(s.ip + 6)
        } else {
            ip_id
        };
        let (ts, marker) = if s.rtp {
            let ts = u32::from_be_bytes(packet[r + 4..r + 8].try_into().expect("four bytes"));
            (ts, packet[r + 1] & 0x80 != 0)
        } else {
            (0, false)
        };
        Dynamic {
            ip_id,
            frag,
            seq,
            ts,
            marker,
        }
    }

    /// Writes the fields into `header` (of shape `s`, its template's per-packet fields zero);
    /// lengths and checksums are the caller's.
    pub fn write(&self, header: &mut [u8], s: Shape) {
        if s.v4 {
            header[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
            header[6..8].copy_from_slice(&self.frag.to_be_bytes());
        }
        if s.rtp {
            let r = s.ip + 8;
            header[r + 1] = header[r + 1] & 0x7F | u8::from(self.marker) << 7;
            header[r + 2..r + 4].copy_from_slice(&self.seq.to_be_bytes());
            header[r + 4..r + 8].copy_from_slice(&self.ts.to_be_bytes());
        } else if s.echo {
            header[s.ip + 6..s.ip + 8].copy_from_slice(&self.seq.to_be_bytes());
        }
    }
}

/// What a decompressor holds of a context besides its template: the last delivered packet's
/// fields, whether its IP-ID steps with the sequence number, and its RTP timestamp stride.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State {
    /// The reference: the last delivered packet's fields.
    pub fields: Dynamic,
    /// Whether the IPv4 Identification steps with the sequence number (RTP and echo
    /// contexts; with others the sequence number is the Identification).
    pub step: bool,
    /// The RTP timestamp's advance per sequence number (0: none known); in frame mode, per
    /// frame.
    pub stride: u16,
    /// Frame mode (RTP contexts): the timestamp follows the reference's unchanged, not by one
    /// stride per sequence number ([`super::FRAME`]).
    pub frame: bool,
    /// Pair mode (IPv4 RTP contexts, [`super::PAIR`]): a CO-S frame's IP-ID is one above the
    /// last one of the same hosts and protocol ([`super::pair`]), not the reference's.
    pub pair: bool,
}

impl State {
    /// The sequence advance a CO-S frame of sequence LSBs `lsb` means at trial `trial`
    /// (`0..`[`super::SHORT_TRIALS`]): the `trial`-th value with those LSBs from the
    /// reference's on (in RTP and echo mode, whose sequence numbers only grow, from the one
    /// after the reference's on); 0 in a context without a sequence number.
    pub fn short_advance(&self, s: Shape, lsb: u8, trial: u16) -> u16 {
        if !s.has_seq() {
            return 0;
        }
        let first = u16::from(s.rtp || s.echo);
        (u16::from(lsb).wrapping_sub(self.fields.seq.wrapping_add(first)) & 3) + first + 4 * trial
    }

    /// The fields of the packet `n` sequence numbers on: the IP-ID with it (its own, by the
    /// step), the RTP timestamp by the stride, the marker clear, the fragment field kept.
    pub fn advanced(&self, s: Shape, n: u16) -> Dynamic {
        let r = &self.fields;
        let seq = r.seq.wrapping_add(n);
        let ip_id = if !s.v4 {
            0
        } else if !s.own_ip_id() {
            seq
        } else {
            self.ip_id_with(seq, self.step)
        };
        Dynamic {
            ip_id,
            frag: r.frag,
            seq,
            ts: self.ts_with(seq, self.frame),
            marker: false,
        }
    }

    /// The IP-ID of a packet of sequence number `seq` whose IP-ID is coded as following it
    /// (`step`) or as unchanged.
    pub fn ip_id_with(&self, seq: u16, step: bool) -> u16 {
        let r = &self.fields;
        if step {
            r.ip_id.wrapping_add(seq.wrapping_sub(r.seq))
        } else {
            r.ip_id
        }
    }

    /// The RTP timestamp of a packet of sequence number `seq` on the reference's line: its
    /// timestamp plus one stride per sequence number, or in `frame` mode its timestamp.
    pub fn ts_with(&self, seq: u16, frame: bool) -> u32 {
        if frame {
            return self.fields.ts;
        }
        let n = u32::from(seq.wrapping_sub(self.fields.seq));
        self.fields
            .ts
            .wrapping_add(n.wrapping_mul(u32::from(self.stride)))
    }

    /// In frame mode, the RTP timestamp of a CO-I frame whose scaled timestamp (the timestamp
    /// over the stride) has the LSB `lsb`: the reference's, or one stride on (the next frame);
    /// `None` without a stride.
    pub fn frame_ts(&self, lsb: u8) -> Option<u32> {
        let stride = u32::from(self.stride);
        if stride == 0 {
            return None;
        }
        let k = (u32::from(lsb) ^ (self.fields.ts / stride)) & 1;
        Some(self.fields.ts.wrapping_add(k * stride))
    }

    /// The RTP timestamp whose scaled value (timestamp over stride, the remainder the
    /// reference's) has the `bits` (8 or 16) LSBs `lsbs`, in the interval below the reference's
    /// scaled value; `None` without a stride, or outside the timestamp's range.
    pub fn scaled_ts(&self, lsbs: u32, bits: u32) -> Option<u32> {
        let stride = u32::from(self.stride);
        if stride == 0 {
            return None;
        }
        let (scaled, rest) = (self.fields.ts / stride, self.fields.ts % stride);
        let below = if bits == 8 {
            u32::from(LSB_BELOW)
        } else {
            TS_BELOW
        };
        let low = scaled.wrapping_sub(below);
        let mask = (1u32 << bits) - 1;
        let value = low.wrapping_add(lsbs.wrapping_sub(low) & mask);
        let ts = u64::from(value) * u64::from(stride) + u64::from(rest);
        u32::try_from(ts).ok()
    }
}

/// The value with the 8 LSBs `lsbs` in `[reference - LSB_BELOW, reference + 255 - LSB_BELOW]`
/// (mod 2^16).
pub fn decode_lsb8(reference: u16, lsbs: u8) -> u16 {
    let low = reference.wrapping_sub(LSB_BELOW);
    low.wrapping_add(u16::from(lsbs).wrapping_sub(low) & 0xFF)
}

/// A CO-I frame's IP-ID decodes into `[reference - ID_BELOW, reference + 63 - ID_BELOW]`.
pub const ID_BELOW: u16 = 4;

/// The value with the 6 LSBs `lsbs` in `[reference - ID_BELOW, reference + 63 - ID_BELOW]`
/// (mod 2^16).
pub fn decode_lsb6(reference: u16, lsbs: u8) -> u16 {
    let low = reference.wrapping_sub(ID_BELOW);
    low.wrapping_add(u16::from(lsbs).wrapping_sub(low) & 0x3F)
}

/// The IP-ID offset (the IP-ID minus the sequence number, which only grows while the flow's
/// packets draw their IP-IDs from a counter) with the 3 LSBs `lsbs` in `[reference, reference +
/// 7]` (mod 2^16): a CO-I frame's in frame mode.
pub fn decode_offset(reference: u16, lsbs: u8) -> u16 {
    reference.wrapping_add(u16::from(lsbs).wrapping_sub(reference) & 0x07)
}

/// Whether `value` decodes from its 8 LSBs against `reference` ([`decode_lsb8`]).
pub fn fits_lsb8(reference: u16, value: u16) -> bool {
    value.wrapping_sub(reference).wrapping_add(LSB_BELOW) < 256
}
