//! The compressor's CO frame for a TCP flow: each changing field as the fewest LSBs that
//! decode against every reference in the window (scaled by the flow's strides where that is
//! cheaper), behind a kind byte, the CID, the sealed checksum and the extension flags.

use alloc::vec::Vec;

use taroc_wire::tcp::flags;

use crate::encoding::bits::BitWriter;
use crate::encoding::wlsb;
use crate::plus::ack;
use crate::plus::breakdown::{Field, Tally};
use crate::plus::cids;
use crate::plus::format::{self, ext, kind};
use crate::plus::ipid::Behaviour;
use crate::plus::note;
use crate::plus::outer::{Code, Layout, NEAR_BITS};
use crate::plus::scaled::Strides;
use crate::plus::seal;
use crate::plus::window::{self, DerivedColumns, Needs, Scaler, Scaling, Span};
use crate::plus::PlusStats;
use crate::tcp::packet::TcpIpPacket;
use crate::tcp::stats::{Part, Why};
use crate::tcp::vsw::Vsw;

use super::Context;

/// How one number (sequence or acknowledgment) goes.
struct NumberCode {
    /// The LSBs are of the number divided by its stride.
    scaled: bool,
    /// The extension's Q (Z) flag: unscaled, although the context has a stride.
    unscaled_flag: bool,
    /// The size class (the kind byte's S or A).
    class: u8,
    /// The LSB count.
    bits: u8,
}

/// How a number goes: scaled if it can ([`format::SCALED_BITS`] classes 1 and 2), else, with a
/// stride, as 16 unscaled LSBs if they fit (class 3, no flag), else unscaled with the Q (Z) flag
/// if it has a stride.
fn number_code(raw: Span, scaled: Option<Span>, stride: bool) -> NumberCode {
    let strided = format::STRIDED_UNSCALED_CLASS;
    if let Some(c) = scaled
        .and_then(|span| format::class(&format::SCALED_BITS, span.up, span.down, false))
        .filter(|&c| c < strided)
    {
        return NumberCode {
            scaled: true,
            unscaled_flag: false,
            class: c,
            bits: format::SCALED_BITS[usize::from(c)],
        };
    }
    let c = format::class(&format::UNSCALED_BITS, raw.up, raw.down, true).unwrap_or(3);
    let k = format::SCALED_BITS[usize::from(strided)];
    if stride && c > 0 && crate::encoding::lsb::fits(k, raw.up, raw.down) {
        return NumberCode {
            scaled: false,
            unscaled_flag: false,
            class: strided,
            bits: k,
        };
    }
    NumberCode {
        scaled: false,
        unscaled_flag: stride && c > 0,
        class: c,
        bits: format::UNSCALED_BITS[usize::from(c)],
    }
}

/// What a CO body is coded against and with.
pub(super) struct Coder<'a> {
    /// The references (a context's window).
    pub(super) vsw: &'a Vsw<DerivedColumns>,
    /// The scaling the window's extras were derived under.
    pub(super) derived_by: Scaling,
    /// The scaler of the context the frame is for.
    pub(super) scaler: &'a Scaler,
    /// The identity hash of the context the frame is for (its seal's key).
    pub(super) identity_hash: u32,
    /// The strides.
    pub(super) strides: Strides,
    /// The IP-ID behaviour.
    pub(super) behaviour: Behaviour,
    /// Whether the context has timestamps.
    pub(super) ts: bool,
    /// The context's usual R-octet.
    pub(super) usual_ecn: u8,
    /// Sequence and acknowledgment numbers go whole (IR-R: another flow's references).
    pub(super) full_numbers: bool,
    /// An IPv4 outer header's Identification, with its code and layout, in a tunnelled
    /// context's CO frames (section 8.1).
    pub(super) outer_id: Option<(u16, Code, Layout)>,
    /// The frame carries a scaling note ([`note`]): the context's strides and behaviour
    /// changed, and the decompressor may not know it yet.
    pub(super) note: bool,
    /// A *wide* frame's second window: its fields are coded to decode against these
    /// references too, the packets sampled over a longer past (spec section 7).
    pub(super) horizon: Option<&'a Vsw<DerivedColumns>>,
    /// The frame carries the 16-bit check (V): its packet jumped from the context's previous
    /// one (a decompressor that missed that many packets holds it back without the check,
    /// [`crate::plus::stale`]).
    pub(super) check: bool,
}

impl Coder<'_> {
    /// The coder of a context's own CO frames, for `p` whose outer header (if the context
    /// keeps an IPv4 one) has the Identification `outer_id`.
    pub(super) fn of<'a>(
        ctx: &'a Context,
        outer_id: u16,
        p: &TcpIpPacket<'_>,
        wide: bool,
        check: bool,
    ) -> Coder<'a> {
        Coder {
            vsw: &ctx.vsw,
            derived_by: ctx.scaler.scaling(),
            scaler: &ctx.scaler,
            identity_hash: ctx.identity_hash,
            strides: ctx.strides,
            behaviour: ctx.behaviour,
            ts: ctx.identity.ts,
            usual_ecn: ctx.identity.usual_ecn,
            full_numbers: false,
            outer_id: ctx
                .outer
                .as_ref()
                .filter(|o| o.is_v4())
                .map(|_| outer_code(ctx, outer_id, p.fields.ip_id))
                .map(|(id, code, layout)| match code {
                    // Near LSBs rest on the window's offsets only.
                    Code::Near(_) if wide => (id, Code::Whole, layout),
                    _ => (id, code, layout),
                }),
            note: ctx.notes_due > 0 || (wide && ctx.wide_notes > 0),
            horizon: wide.then_some(&ctx.horizon),
            check,
        }
    }
}

/// The outer IP-ID `outer` of a packet of inner IP-ID `inner` in `ctx`, with its code and
/// layout: nothing if every predictor the decompressor may hold gives it, else 8 one-sided LSBs
/// of its offset `outer - inner` if they decode against every reference's offset in the
/// window, else the 16 bits.
fn outer_code(ctx: &Context, outer: u16, inner: u16) -> (u16, Code, Layout) {
    let layout = ctx.predictors.layout();
    if layout != Layout::Flagged && ctx.predictors.predict(outer, inner) {
        return (outer, Code::Predicted, layout);
    }
    let offset = outer.wrapping_sub(inner);
    let span = window::outer_span(&ctx.vsw, offset);
    let code = if crate::encoding::lsb::fits(NEAR_BITS, span.up, span.down) {
        Code::Near(offset & wlsb::mask(NEAR_BITS) as u16)
    } else {
        Code::Whole
    };
    (outer, code, layout)
}

/// CO: the packet coded against the window (its kind byte and body; for CIDs 1 to
/// [`cids::PREFIX_CIDS`] the kind byte that names the CID and the CO kind byte, then the
/// octet after a CID prefix if it needs one, and the body), or the reason it must go IR.
#[inline]
pub(super) fn write_co(
    ctx: &Coder<'_>,
    p: &TcpIpPacket<'_>,
    cid: u8,
    out: &mut Vec<u8>,
    stats: &mut PlusStats,
) -> Result<(u8, Tally), Why> {
    let start = out.len();
    let mut tally: Tally = [0; 13];
    let flagged = matches!(ctx.outer_id, Some((.., Layout::Flagged)));
    if let Some(lead) = write_co_as(ctx, p, cid, out, stats, flagged, &mut tally)? {
        return Ok((lead, tally));
    }
    // An outer Identification that is not the predicted one, and no spare bit at the end of
    // the bit field to say so: again, with the extension's O flag.
    out.truncate(start);
    tally = [0; 13];
    let lead = write_co_as(ctx, p, cid, out, stats, true, &mut tally)?;
    Ok((
        lead.expect("with the O flag the outer Identification always goes"),
        tally,
    ))
}

/// [`write_co`], with the extension's O flag if `o_flag`; `None` (and `out` to be cut back) if
/// the frame needs the O flag and has not got it.
fn write_co_as(
    ctx: &Coder<'_>,
    p: &TcpIpPacket<'_>,
    cid: u8,
    out: &mut Vec<u8>,
    stats: &mut PlusStats,
    o_flag: bool,
    tally: &mut Tally,
) -> Result<Option<u8>, Why> {
    let urgent = p.flags & flags::URG != 0;
    if !p.canonical_options
        || p.sack.len() > 4
        || (!urgent && p.urgent != 0)
        || (p.v4 && p.checksum == 0xFFFF)
    {
        return Err(Why::Unfit);
    }
    // The quotients and the IP-ID offset by the scaler's multiplications, once per packet.
    let me = ctx.scaler.derive(&p.fields);
    let mut needs: Needs = window::needs(ctx.vsw, ctx.derived_by, &p.fields, &me, ctx.scaler);
    // A wide frame decodes against its horizon too ([`Coder::horizon`]).
    if let Some(horizon) = ctx.horizon {
        let more = window::needs(horizon, ctx.derived_by, &p.fields, &me, ctx.scaler);
        needs = needs.max(&more);
    }
    // A sequence or acknowledgment number 2^30 or more away from a reference (no TCP moves so
    // far between two packets: a mangled or forged one) goes IR. Sequence arithmetic cannot
    // order such a packet, so the decompressor may keep its older reference while the window's
    // pruning counts the jump as progress and drops that reference.
    let far = |s: Span| s.up.max(s.down) >= 1 << 30;
    if !ctx.full_numbers && (far(needs.seq) || far(needs.ack)) {
        return Err(Why::Unfit);
    }
    let whole = Span {
        up: u64::MAX,
        down: u64::MAX,
    };
    if ctx.full_numbers {
        (needs.seq, needs.ack) = (whole, whole);
        (needs.seq_scaled, needs.ack_scaled) = (None, None);
    }
    let seq = number_code(needs.seq, needs.seq_scaled, ctx.strides.seq != 0);
    let ack = number_code(needs.ack, needs.ack_scaled, ctx.strides.ack != 0);
    let prefixed = (1..=cids::PREFIX_CIDS).contains(&cid);
    let r_octet = p.r_octet != ctx.usual_ecn;
    let win = needs.win != Span::default();
    let mut e = 0u8;
    for (on, bit) in [
        (cid != 0 && !prefixed, ext::C),
        (win, ext::W),
        (r_octet, ext::R),
        (urgent, ext::U),
        (!p.sack.is_empty(), ext::K),
        (seq.unscaled_flag, ext::Q),
        (ack.unscaled_flag, ext::Z),
        (p.flags & flags::FIN != 0, ext::F),
    ] {
        if on {
            e |= bit;
        }
    }
    let mut k = format::CO | seq.class << kind::S_SHIFT | ack.class << kind::A_SHIFT;
    if p.flags & flags::PSH != 0 {
        k |= kind::P;
    }
    let sack = p.sack.as_slice();
    let sack_scaled = format::sack_scales(p.fields.ack, sack, ctx.strides.ack.into());
    let sack_header = (!sack.is_empty())
        .then(|| ack::sack_header(p.fields.ack, sack, ctx.strides.ack.into(), sack_scaled));
    // The short extension's window code: the first of its LSB counts that fits.
    let short_window = ack::SHORT_WINDOW_BITS
        .iter()
        .position(|&k| crate::encoding::lsb::fits(k, needs.win.up, needs.win.down))
        .filter(|_| win)
        .map(|c| ack::short_window(p.fields.win, c == 1));
    // The short extension: the window's code in it if one fits, else the SACK header.
    // The O flag (section 8.1; `write_co` sets it only for a context that codes an outer
    // Identification).
    let short = if !ack::short_fits(e)
        || o_flag
        || ctx.note
        || ctx.check
        || (win && short_window.is_none())
    {
        None
    } else if let Some((v, _)) = short_window {
        Some(v)
    } else {
        sack_header
    };
    let extension = e != 0 || o_flag || ctx.note || ctx.check;
    if extension {
        k |= kind::X;
    }
    // The link's kind byte: the CO kind byte, or one that names the CID too (and then maybe
    // the octet after a CID prefix).
    let (lead, named) = if prefixed {
        let (lead, second) = cids::name(cid, k);
        out.extend(second);
        (lead, second.is_some())
    } else {
        (k, cid != 0)
    };
    let before_extension = out.len();
    if extension {
        let x = ack::Extension {
            flags: e,
            short,
            outer: o_flag,
            note: ctx.note,
            check: ctx.check,
        };
        ack::put_extension(out, &x);
    }
    let mut extension_bits = 8 * (out.len() - before_extension) as u32;
    if cid != 0 && !prefixed {
        out.push(cid);
    }
    if ctx.note {
        let before_note = out.len();
        note::put(out, ctx.scaler.scaling());
        extension_bits += 8 * (out.len() - before_note) as u32;
    }
    let sealed = seal::long_seal(
        if ctx.note {
            ctx.identity_hash ^ note::seal_key(ctx.scaler.scaling())
        } else {
            ctx.identity_hash
        },
        &p.fields,
        ctx.outer_id.map_or(0, |(id, ..)| id),
    );
    let checksum = if p.v4 {
        p.checksum.wrapping_add(p.fields.ip_id)
    } else {
        p.checksum
    } ^ (sealed >> 16) as u16;
    out.extend_from_slice(&checksum.to_be_bytes());
    if ctx.check {
        out.extend_from_slice(&(sealed as u16).to_be_bytes());
    }
    let base = out.len() + 1;
    let mut count = |field: Field, bits: u8| tally[field as usize] += u32::from(bits);
    count(Field::Kind, 8);
    count(Field::Cid, 8 * u8::from(named));
    count(Field::Checksum, if ctx.check { 32 } else { 16 });
    count(Field::Seq, seq.bits);
    count(Field::Ack, ack.bits);
    let mut w = BitWriter::new(out);
    let f = &p.fields;
    debug_assert_eq!(
        (ctx.scaler.scaling().strides, ctx.scaler.scaling().behaviour),
        (ctx.strides, ctx.behaviour)
    );
    for (code, value, scaled) in [(&seq, f.seq, me.seq_q()), (&ack, f.ack, me.ack_q())] {
        let v = if code.scaled { scaled } else { value };
        w.put(v & wlsb::mask(code.bits), code.bits);
    }
    let codes = format::Codes::of(ctx.strides);
    match ctx.behaviour {
        Behaviour::Sequential | Behaviour::Swapped => {
            let offset = me.offset();
            let c = format::code(&codes.ip_id, needs.ip_id.up, needs.ip_id.down);
            format::put_code(&mut w, &codes.ip_id, c, offset.into());
            count(
                Field::IpId,
                format::prefix_len(c) + codes.ip_id[usize::from(c)],
            );
        }
        Behaviour::Zero => {}
        Behaviour::Random => {
            w.put(f.ip_id.into(), 16);
            count(Field::IpId, 16);
        }
    }
    if ctx.ts {
        let (val, ecr, gap) = (needs.ts_val, needs.ts_ecr, needs.ts_gap);
        let c = format::code(&codes.ts, val.up, val.down);
        format::put_code(&mut w, &codes.ts, c, f.ts_val);
        count(
            Field::TsVal,
            format::prefix_len(c) + codes.ts[usize::from(c)],
        );
        let c = format::ecr_code(&codes.ecr, (ecr.up, ecr.down), (gap.up, gap.down));
        let (is_gap, k) = codes.ecr[usize::from(c)];
        let v = if is_gap {
            f.ts_val.wrapping_sub(f.ts_ecr)
        } else {
            f.ts_ecr
        };
        format::put_prefixed(&mut w, c, k, v);
        count(Field::TsEcr, format::prefix_len(c) + k);
    }
    if let Some(header) = sack_header.filter(|_| short.is_none() || win) {
        w.put(header.into(), 5);
        count(Field::Sack, 5);
    }
    if let Some((_, (more, bits))) = short_window.filter(|_| short.is_some()) {
        w.put(bits, more);
        count(Field::Window, more);
    }
    if win && short.is_none() {
        let c = usize::from(!crate::encoding::lsb::fits(
            format::WINDOW_BITS[0],
            needs.win.up,
            needs.win.down,
        ));
        w.put(c as u32, 1);
        let k = format::WINDOW_BITS[c];
        w.put(u32::from(f.win) & wlsb::mask(k), k);
        count(Field::Window, 1 + k);
    }
    if let Some(header) = sack_header {
        let (_, _, order) = ack::sack_header_fields(header);
        let bits = ack::put_sack(
            &mut w,
            f.ack,
            sack,
            ctx.strides.ack.into(),
            sack_scaled,
            order,
        );
        tally[Field::Sack as usize] += bits;
    }
    if let Some((id, code, layout)) = ctx.outer_id {
        // Last in the bit field: with O, the code; else as the layout says (a marker bit, or
        // a spare bit before the padding, 0 for the predicted value or 1 and the code).
        let predicted = code == Code::Predicted;
        let put_code = |w: &mut BitWriter<'_>, marker: u8| {
            let (whole, lsbs, k) = match code {
                Code::Near(lsbs) => (0, lsbs, NEAR_BITS),
                // (A predicted value goes as no code; were it asked for one, the 16 bits.)
                Code::Whole | Code::Predicted => (1, id, 16),
            };
            w.put(1, marker);
            w.put(whole, 1);
            w.put(lsbs.into(), k);
            u32::from(marker + 1 + k)
        };
        let bits = if o_flag {
            put_code(&mut w, 0)
        } else if layout == Layout::Marked || !w.at_boundary() {
            if predicted {
                w.put(0, 1);
                1
            } else {
                put_code(&mut w, 1)
            }
        } else if predicted {
            0
        } else {
            return Ok(None);
        };
        tally[Field::IpId as usize] += bits;
    }
    w.finish();
    let after_bits = out.len() + 1;
    let used: u32 = tally[Field::Seq as usize..].iter().sum();
    tally[Field::Padding as usize] = 8 * (after_bits - base) as u32 - used;
    // A short extension's five low bits are the window's or the SACK header's.
    let short_bits = if short.is_some() { 5 } else { 0 };
    tally[Field::Extension as usize] = extension_bits - short_bits;
    let short_field = if win { Field::Window } else { Field::Sack };
    tally[short_field as usize] += short_bits;
    if r_octet {
        out.push(p.r_octet);
    }
    if urgent {
        out.extend_from_slice(&p.urgent.to_be_bytes());
    }
    let after_fixed = out.len() + 1;
    tally[Field::Other as usize] = 8 * (after_fixed - after_bits) as u32;
    out.extend_from_slice(p.payload());
    stats.count(Why::Compressed);
    stats.add_part(Part::Base, base as u64);
    stats.add_part(Part::Wasi, (after_bits - base) as u64);
    stats.add_part(Part::RandomFields, (after_fixed - after_bits) as u64);
    Ok(Some(lead))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(raw: (u64, u64), scaled: Option<(u64, u64)>, stride: bool) -> (bool, bool, u8, u8) {
        let span = |(up, down)| Span { up, down };
        let c = number_code(span(raw), scaled.map(span), stride);
        (c.scaled, c.unscaled_flag, c.class, c.bits)
    }

    #[test]
    fn a_number_that_cannot_be_scaled_needs_no_flag_while_16_bits_fit() {
        // Scaled when the quotient fits 6 or 8 bits.
        assert_eq!(code((3000, 0), Some((2, 0)), true), (true, false, 1, 6));
        assert_eq!(code((90_000, 0), Some((60, 0)), true), (true, false, 2, 8));
        // The residue changed (no scaled span), or the quotient needs more than 8 bits: 16
        // unscaled bits in class 3, no Q / Z.
        assert_eq!(code((3000, 0), None, true), (false, false, 3, 16));
        assert_eq!(
            code((30_000, 0), Some((300, 0)), true),
            (false, false, 3, 16)
        );
        // Nothing changed: class 0, whether scaled or not.
        assert_eq!(code((0, 0), None, true), (false, false, 0, 0));
        // Beyond 16 bits: unscaled with the flag.
        assert_eq!(code((1 << 20, 0), None, true), (false, true, 3, 32));
        // Without a stride, the unscaled classes and never a flag.
        assert_eq!(code((300, 0), None, false), (false, false, 1, 10));
        assert_eq!(code((3000, 0), None, false), (false, false, 2, 16));
    }
}
