//! The W-LSB bit counts of one packet against the compressor's window (VSW): raw, scaled
//! ([`super::scaled`]) and as an IP-ID offset ([`super::ipid`]).

use crate::encoding::wlsb::{bits_needed, signed_distance};
use crate::taroc::packet::Fields;
use crate::taroc::vsw::Vsw;

use super::ipid::{self, Behaviour};
use super::scaled::{quotient, Strides};

/// What one packet needs against the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    /// Sequence number, unscaled.
    pub seq: u8,
    /// Sequence number scaled, if every window entry shares its residue (and there is a stride).
    pub seq_scaled: Option<u8>,
    /// Acknowledgment number, unscaled.
    pub ack: u8,
    /// Acknowledgment number scaled, as for the sequence number.
    pub ack_scaled: Option<u8>,
    /// The IP-ID offset (sequential and byte-swapped behaviours).
    pub ip_id: u8,
    /// Timestamp value.
    pub ts_val: u8,
    /// Timestamp echo reply.
    pub ts_ecr: u8,
    /// Whether the window differs from some entry's (then it is sent whole).
    pub win: bool,
}

/// The needs of `f` against `vsw`, for a context with `strides` and IP-ID `behaviour`.
pub fn needs(vsw: &Vsw, f: &Fields, strides: Strides, behaviour: Behaviour) -> Needs {
    let raw = vsw.needs(f);
    let mut needs = Needs {
        seq: raw.seq,
        seq_scaled: None,
        ack: raw.ack,
        ack_scaled: None,
        ip_id: raw.ip_id,
        ts_val: raw.ts_val,
        ts_ecr: raw.ts_ecr,
        win: raw.win > 0,
    };
    let plain_ip_id = strides == Strides::default() && behaviour == Behaviour::Sequential;
    if plain_ip_id {
        return needs;
    }
    let offset_of = |g: &Fields| {
        let counter = behaviour.counter(g.ip_id);
        ipid::offset(
            counter,
            quotient(g.seq, strides.seq),
            quotient(g.ack, strides.ack),
        )
    };
    let offset = offset_of(f);
    let (mut seq_q, mut ack_q, mut off) = (0u64, 0u64, 0u64);
    let (mut seq_aligned, mut ack_aligned) = (strides.seq != 0, strides.ack != 0);
    for entry in vsw.entries() {
        let g = &entry.fields;
        if seq_aligned {
            let s = u32::from(strides.seq);
            seq_aligned = g.seq % s == f.seq % s;
            seq_q = seq_q.max((i64::from(f.seq / s) - i64::from(g.seq / s)).unsigned_abs());
        }
        if ack_aligned {
            let s = u32::from(strides.ack);
            ack_aligned = g.ack % s == f.ack % s;
            ack_q = ack_q.max((i64::from(f.ack / s) - i64::from(g.ack / s)).unsigned_abs());
        }
        let d = signed_distance(offset.into(), offset_of(g).into(), 16).unsigned_abs();
        off = off.max(d);
    }
    needs.seq_scaled = seq_aligned.then(|| bits_needed(seq_q));
    needs.ack_scaled = ack_aligned.then(|| bits_needed(ack_q));
    needs.ip_id = bits_needed(off).min(16);
    needs
}
