//! The decompressor's CO frame for a TCP flow: each field decoded from its LSBs against the
//! context's reference (scaled by the flow's strides where the frame says so), the packet
//! rebuilt and verified before anything is delivered.

use alloc::vec::Vec;

use taroc_wire::tcp::{flags, SackBlocks};

use crate::codec::DropReason;
use crate::encoding::bits::BitReader;
use crate::encoding::lsb;
use crate::plus::ack::{self, Extension};
use crate::plus::format::{self, ext, kind};
use crate::plus::ipid::{self, Behaviour};
use crate::plus::note;
use crate::plus::numbers;
use crate::plus::outer::{Layout, NEAR_BITS};
use crate::plus::scaled::{self, quotient, Strides};
use crate::plus::seal;
use crate::plus::stale::Trace;
use crate::plus::window::Scaling;
use crate::tcp::packet::{self};

use super::quotients::{Quotient, Quotients};
use super::Context;

/// A CO body decoded and verified.
#[derive(Debug, Clone, Copy)]
pub(super) struct Decoded {
    /// The packet's fields.
    pub(super) fields: packet::Fields,
    /// The quotients its decoding found (the new reference's, if it becomes the reference).
    pub(super) quotients: Quotients,
    /// Its payload's length.
    pub(super) payload: usize,
    /// Its next sequence number (the sequence number plus the payload's length, plus one for
    /// FIN).
    pub(super) next: u32,
    /// The IPv4 Identification of a tunnelled context's outer header (0 for others).
    pub(super) outer_id: u16,
}

impl Decoded {
    /// What the packet leaves to compare the next one with ([`crate::plus::stale`]).
    pub(super) fn trace(&self) -> Trace {
        Trace {
            ip_id: self.fields.ip_id,
            next: self.next,
            ack: self.fields.ack,
        }
    }
}

/// Decodes a CO body (what follows the extension `x` and CID) against `ctx` into `out` and
/// verifies it.
pub(super) fn decode_body(
    ctx: &Context,
    k: u8,
    x: Extension,
    rest: &[u8],
    out: &mut Vec<u8>,
) -> Result<Decoded, DropReason> {
    {
        let e = x.flags;
        let [c0, c1, rest @ ..] = rest else {
            return Err(DropReason::Malformed);
        };
        // With V, the 16-bit check follows the checksum (section 5.8).
        let (check, rest) = match (x.check, rest) {
            (true, [v0, v1, rest @ ..]) => (Some(u16::from_be_bytes([*v0, *v1])), rest),
            (true, _) => return Err(DropReason::Malformed),
            (false, rest) => (None, rest),
        };
        let r = ctx.reference;
        let mut fields = r;
        let mut bits = BitReader::new(rest);
        let s_class = usize::from((k >> kind::S_SHIFT) & 0x03);
        let a_class = usize::from((k >> kind::A_SHIFT) & 0x03);
        let seq_scaled = ctx.strides.seq != 0 && e & ext::Q == 0;
        let ack_scaled = ctx.strides.ack != 0 && e & ext::Z == 0;
        if (ctx.strides.seq == 0 && e & ext::Q != 0) || (ctx.strides.ack == 0 && e & ext::Z != 0) {
            // The compressor has a stride this context lacks: an IR was lost (context damage).
            return Err(DropReason::ChecksumMismatch);
        }
        let seq_rq = ctx.quotients.seq.of(r.seq, ctx.strides.seq);
        let next_q = ctx.quotients.next.of(ctx.next, ctx.strides.seq);
        let seq_q;
        (fields.seq, seq_q) = number(
            &mut bits,
            (ctx.next, next_q),
            s_class,
            seq_scaled,
            ctx.strides.seq,
        )?;
        let ack_rq = if ack_scaled {
            ctx.quotients.ack.of(r.ack, ctx.strides.ack)
        } else {
            0
        };
        let ack_q;
        (fields.ack, ack_q) = number(
            &mut bits,
            (r.ack, ack_rq),
            a_class,
            ack_scaled,
            ctx.strides.ack,
        )?;
        let codes = format::Codes::of(ctx.strides);
        fields.ip_id = match ctx.behaviour {
            Behaviour::Sequential | Behaviour::Swapped => {
                let (lsbs, n) =
                    format::get_code(&mut bits, &codes.ip_id).ok_or(DropReason::Malformed)?;
                let s = ctx.strides.seq;
                let reference = ipid::offset(ctx.behaviour.counter(r.ip_id), seq_rq);
                let offset = lsb::decode(reference.into(), lsbs, n, 16) as u16;
                let q = seq_q.unwrap_or_else(|| quotient(fields.seq, s));
                let counter = ipid::counter(offset, q);
                ctx.behaviour.ip_id(counter)
            }
            Behaviour::Zero => 0,
            Behaviour::Random => bits.get(16).ok_or(DropReason::Malformed)? as u16,
        };

        if ctx.identity.ts {
            let (lsbs, n) = format::get_code(&mut bits, &codes.ts).ok_or(DropReason::Malformed)?;
            fields.ts_val = lsb::decode(r.ts_val, lsbs, n, 32);
            let c = format::get_prefix(&mut bits).ok_or(DropReason::Malformed)?;
            let (is_gap, n) = codes.ecr[c];
            let lsbs = bits.get(n).ok_or(DropReason::Malformed)?;
            fields.ts_ecr = if is_gap {
                let gap = lsb::decode(r.ts_val.wrapping_sub(r.ts_ecr), lsbs, n, 32);
                fields.ts_val.wrapping_sub(gap)
            } else {
                lsb::decode(r.ts_ecr, lsbs, n, 32)
            };
        }
        // A short extension carries the window's LSBs (if W) or else the SACK header.
        let short = x.short;
        let sack_header = match short {
            Some(v) if e & ext::W == 0 => Some(v),
            _ if e & ext::K != 0 => Some(bits.get(5).ok_or(DropReason::Malformed)? as u8),
            _ => None,
        };
        if e & ext::W != 0 {
            fields.win = match short {
                Some(v) => {
                    let (k, more) = ack::short_window_bits(v);
                    let high = bits.get(more).ok_or(DropReason::Malformed)?;
                    let lsbs = u32::from(v & 0x0F) | high << 4;
                    lsb::decode(r.win.into(), lsbs, k, 16) as u16
                }
                None => {
                    let c = bits.get(1).ok_or(DropReason::Malformed)?;
                    let k = format::WINDOW_BITS[c as usize];
                    let lsbs = bits.get(k).ok_or(DropReason::Malformed)?;
                    lsb::decode(r.win.into(), lsbs, k, 16) as u16
                }
            };
        }
        let mut sack = SackBlocks::default();
        if let Some(header) = sack_header {
            let (count, scaled, order) = ack::sack_header_fields(header);
            if scaled && ctx.strides.ack == 0 {
                return Err(DropReason::Malformed);
            }
            let stride = if scaled { ctx.strides.ack.into() } else { 1 };
            sack = ack::get_sack(&mut bits, fields.ack, count, stride, order)
                .ok_or(DropReason::Malformed)?;
        }
        // Last in the bit field (section 8.1): with O, the outer Identification's code; else
        // a spare bit before the padding says whether one follows; no spare bit, none does.
        let outer_id = match ctx.outer_predictor {
            Some(predictor) => {
                let marked = predictor.layout() == Layout::Marked || !bits.at_boundary();
                let coded = x.outer || (marked && bits.get(1).ok_or(DropReason::Malformed)? == 1);
                if coded {
                    match bits.get(1).ok_or(DropReason::Malformed)? {
                        0 => {
                            let k = NEAR_BITS;
                            let lsbs = bits.get(k).ok_or(DropReason::Malformed)?;
                            let offset = lsb::decode(ctx.outer_ref.into(), lsbs, k, 16) as u16;
                            fields.ip_id.wrapping_add(offset)
                        }
                        _ => bits.get(16).ok_or(DropReason::Malformed)? as u16,
                    }
                } else {
                    predictor.predict(fields.ip_id)
                }
            }
            // Only a context under an IPv4 outer header codes one.
            None if x.outer => return Err(DropReason::Malformed),
            None => 0,
        };
        let mut at = bits.bytes_consumed();
        let mut take = |n: usize| -> Result<&[u8], DropReason> {
            let bytes = rest.get(at..at + n).ok_or(DropReason::Malformed)?;
            at += n;
            Ok(bytes)
        };
        let r_octet = if e & ext::R != 0 {
            take(1)?[0]
        } else {
            ctx.identity.usual_ecn
        };
        let urgent = if e & ext::U != 0 {
            let b = take(2)?;
            u16::from_be_bytes([b[0], b[1]])
        } else {
            0
        };
        let payload = rest.get(at..).ok_or(DropReason::Malformed)?;
        // A note's frame is sealed under the note too (decoded here under its scaling).
        let identity = if x.note {
            ctx.identity_hash
                ^ note::seal_key(Scaling {
                    strides: ctx.strides,
                    behaviour: ctx.behaviour,
                })
        } else {
            ctx.identity_hash
        };
        let sealed = seal::long_seal(identity, &fields, outer_id);
        if check.is_some_and(|v| v != sealed as u16) {
            return Err(DropReason::ChecksumMismatch);
        }
        let mut checksum = u16::from_be_bytes([*c0, *c1]) ^ (sealed >> 16) as u16;
        if ctx.v4 {
            // The field carries checksum + IP-ID: a wrongly decoded IP-ID leaves a wrong TCP
            // checksum (0xFFFF is never sent, and is what an IP-ID one too high against a
            // checksum of 0 would leave).
            checksum = checksum.wrapping_sub(fields.ip_id);
            if checksum == 0xFFFF {
                return Err(DropReason::ChecksumMismatch);
            }
        }
        let mut tcp_flags = flags::ACK;
        for (bit, flag) in [(kind::P, flags::PSH)] {
            if k & bit != 0 {
                tcp_flags |= flag;
            }
        }
        for (bit, flag) in [(ext::U, flags::URG), (ext::F, flags::FIN)] {
            if e & bit != 0 {
                tcp_flags |= flag;
            }
        }
        packet::rebuild(
            out,
            &ctx.identity.template,
            ctx.v4,
            &fields,
            ctx.identity.ts,
            &sack,
            tcp_flags,
            r_octet,
            urgent,
            checksum,
            payload,
        )
        .ok_or(DropReason::Malformed)?;
        if !packet::tcp_checksum_ok(out, ctx.identity.template.len() - 4, &ctx.key) {
            return Err(DropReason::ChecksumMismatch);
        }
        let mut found = ctx.quotients;
        let next = numbers::next_seq(fields.seq, payload.len(), tcp_flags);
        if let Some(q) = seq_q {
            found.seq = Quotient::known(fields.seq, ctx.strides.seq, q);
            if next == fields.seq {
                found.next = found.seq;
            }
        }
        if let Some(q) = ack_q.filter(|_| ack_scaled) {
            found.ack = Quotient::known(fields.ack, ctx.strides.ack, q);
        }
        Ok(Decoded {
            fields,
            quotients: found,
            payload: payload.len(),
            next,
            outer_id,
        })
    }
}

/// A CO frame that failed against a context without strides, decoded again with the strides
/// the context's delivered packets suggest ([`scaled::Learner::guess`]), which are adopted if
/// the packet verifies, as any other is verified (the TCP checksum and the seal). The
/// compressor learns a stride from the same packets and sends it in IR frames; when all of
/// those are lost, its scaled CO frames fail against the context without it until a context
/// request is answered. `None` (the context unchanged) if there is no guess or the packet does
/// not verify.
pub(super) fn guess_stride(
    ctx: &mut Context,
    k: u8,
    x: Extension,
    rest: &[u8],
    out: &mut Vec<u8>,
) -> Option<Decoded> {
    if ctx.strides != Strides::default() {
        return None;
    }
    ctx.strides = ctx.learner.guess()?;
    let decoded = decode_body(ctx, k, x, rest, out).ok();
    if decoded.is_none() {
        ctx.strides = Strides::default();
    }
    decoded
}

/// Reads a sequence or acknowledgment number of size class `class`, scaled by `stride` or not,
/// against `reference` and its quotient by `stride` (0 without a stride; only a scaled number
/// needs it): the number, and its quotient at no division's cost if there is one (a number
/// decoded scaled; the reference's own, as given, if the number is the reference).
#[inline(always)]
fn number(
    bits: &mut BitReader<'_>,
    (reference, reference_q): (u32, u32),
    class: usize,
    scaled: bool,
    stride: u16,
) -> Result<(u32, Option<u32>), DropReason> {
    let table = if scaled {
        &format::SCALED_BITS
    } else {
        &format::UNSCALED_BITS
    };
    let n = table[class];
    let lsbs = bits.get(n).ok_or(DropReason::Malformed)?;
    let scaled = scaled && class != usize::from(format::STRIDED_UNSCALED_CLASS);
    if n == 0 {
        Ok((reference, Some(reference_q)))
    } else if scaled {
        // No such number: the reference is not the compressor's (context damage).
        scaled::decode_divided(reference, reference_q, lsbs, n, stride)
            .map(|(v, q)| (v, Some(q)))
            .ok_or(DropReason::ChecksumMismatch)
    } else {
        Ok((lsb::decode(reference, lsbs, n, 32), None))
    }
}
