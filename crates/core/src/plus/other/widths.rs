//! How far a CO-S, CO-I or CO-N frame's codes reach, field by field: what decides whether a
//! frame that confirms a held packet proves it too (spec section 5.8), so that the held packet
//! is delivered late.
//!
//! A held packet decoded wrong (a trial that passed the check, or a stale reference) has each
//! field that came by LSBs off by a multiple of 2^bits, and each field that followed from the
//! reference off as the reference was. A later frame decoded at once against it carries each
//! such error over into its own header, and fails its check, as long as none of its fields is
//! coded wider than the same field of the held frame: a wider code decodes right across the
//! error. So a confirming frame whose widths are [`Widths::within`] the held frame's proves the
//! held packet as a whole.

use super::head::{Form, Head, T_SHIFT};
use super::{flag, Shape, State};

/// The LSBs of each per-packet field a frame carried: 0 where the field followed from the
/// reference, [`Widths::FULL`] where it came whole. In a context whose sequence number is the
/// IPv4 Identification, the two are one field and have one width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Widths {
    seq: u8,
    ip_id: u8,
    frag: u8,
    ts: u8,
}

impl Widths {
    /// The width of a field carried whole.
    pub const FULL: u8 = u8::MAX;

    /// The widths of `head`'s fields in a context of shape `s` whose reference is `state`, or
    /// `None` for a CO-S frame in pair mode (and any frame in pair and frame mode at once): its
    /// trials move the IP-ID by one to eight, and a later CO-S frame takes its IP-ID from the
    /// pair's last, which another flow's lost packet may have set at the compressor, so nothing
    /// proves it. A CO-I or CO-N frame in pair mode gives its IP-ID against the reference, as
    /// outside it.
    ///
    /// In frame mode a CO-S frame's trials move the timestamp by one or two strides, so its
    /// timestamp has width 0 (only a frame that takes the timestamp from the reference proves
    /// it); a CO-I frame's move it by two and four frames (its scaled timestamp's one LSB) and
    /// the IP-ID's offset by 8 and 16 (its three LSBs).
    pub fn of(head: &Head, s: Shape, state: &State) -> Option<Widths> {
        if state.pair && (state.frame || matches!(head.form, Form::Short { .. })) {
            return None;
        }
        if s.rtp && state.frame && matches!(head.form, Form::Id { .. }) {
            return Some(Widths {
                seq: 3,
                ip_id: 3,
                frag: 0,
                ts: 1,
            });
        }
        let seq_bits = |code: u8| match code & 3 {
            0 => 0,
            1 => 8,
            _ => Widths::FULL,
        };
        // A CO-S frame's timestamp follows from the reference (in frame mode too: width 0).
        let (seq, own_id, frag, ts) = match head.form {
            Form::Short { .. } => (2, 0, 0, 0),
            Form::Id { .. } if s.own_ip_id() => (2, 6, 0, 0),
            Form::Id { .. } => (8, 0, 0, 0),
            Form::Long {
                flags, frag, rtp, ..
            } => {
                let ts = match rtp >> T_SHIFT {
                    _ if !s.rtp => 0,
                    0 => 0,
                    1 => 8,
                    2 => 16,
                    _ => Widths::FULL,
                };
                (
                    seq_bits(flags >> flag::S_SHIFT),
                    seq_bits(flags >> flag::I_SHIFT),
                    if frag.is_some() { Widths::FULL } else { 0 },
                    ts,
                )
            }
        };
        let ip_id = if s.own_ip_id() { own_id } else { seq };
        Some(Widths {
            seq,
            ip_id,
            frag,
            ts,
        })
    }

    /// Whether no field of these widths (a confirming frame's) reaches further than the same
    /// field of `held`'s.
    pub fn within(self, held: Widths) -> bool {
        self.seq <= held.seq
            && self.ip_id <= held.ip_id
            && self.frag <= held.frag
            && self.ts <= held.ts
    }
}
