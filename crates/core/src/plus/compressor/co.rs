//! The compressor's CO frame for a TCP flow: each changing field as the fewest LSBs that
//! decode against every reference in the window (scaled by the flow's strides where that is
//! cheaper), behind a kind byte, the CID, the sealed checksum and the extension flags.

use alloc::vec::Vec;

use taroc_wire::tcp::flags;

use crate::encoding::bits::BitWriter;
use crate::encoding::wlsb;
use crate::plus::ack::{self, Extension};
use crate::plus::breakdown::{Field, Tally};
use crate::plus::cids;
use crate::plus::co::{layout, BitField, Checks, Head, Number, NumberBits, Shape, Tail};
use crate::plus::format::{self, ext, kind, EcrCodes, FieldCodes};
use crate::plus::ipid::Behaviour;
use crate::plus::note;
use crate::plus::outer::{self, Code, Layout, NEAR_BITS};
use crate::plus::scaled::Strides;
use crate::plus::seal;
use crate::plus::window::{self, Derived, DerivedColumns, Needs, Scaler, Scaling, Span};
use crate::plus::PlusStats;
use crate::tcp::packet::TcpIpPacket;
use crate::tcp::stats::{Part, Why};
use crate::tcp::vsw::Vsw;

use super::Context;

pub(super) mod burst;

use burst::reach;
pub(super) use burst::{Floor, Spans};

/// How one number (sequence or acknowledgment) goes: its size class and flag, from which
/// [`number_bits`](crate::plus::co::number_bits) gives its LSBs.
struct NumberCode {
    /// The extension's Q (Z) flag: unscaled, although the context has a stride.
    unscaled_flag: bool,
    /// The size class (the kind byte's S or A).
    class: u8,
}

/// How a number goes: scaled if it can ([`format::SCALED_BITS`] classes 1 and 2), else, with a
/// stride, as 16 unscaled LSBs if they fit (class 3, no flag), else unscaled with the Q (Z) flag
/// if it has a stride.
fn number_code(raw: Span, scaled: Option<Span>, stride: bool) -> NumberCode {
    let strided = format::STRIDED_UNSCALED_CLASS;
    if let Some(c) = scaled
        .and_then(|span| {
            format::class(
                &format::SCALED_BITS,
                span.up.into(),
                span.down.into(),
                false,
            )
        })
        .filter(|&c| c < strided)
    {
        return NumberCode {
            unscaled_flag: false,
            class: c,
        };
    }
    let c =
        format::class(&format::UNSCALED_BITS, raw.up.into(), raw.down.into(), true).unwrap_or(3);
    let k = format::SCALED_BITS[usize::from(strided)];
    if stride && c > 0 && crate::encoding::lsb::fits(k, raw.up.into(), raw.down.into()) {
        return NumberCode {
            unscaled_flag: false,
            class: strided,
        };
    }
    NumberCode {
        unscaled_flag: stride && c > 0,
        class: c,
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
    /// The numbers that show a jump are coded to decode across [`LOSSY_REACH`](burst::LOSSY_REACH)
    /// packets (a link known to lose frames, without a reverse channel).
    pub(super) reach: bool,
    /// What the context's last frames needed ([`Floor`]), the least this one codes for.
    pub(super) floor: Option<&'a Floor>,
}

impl Coder<'_> {
    /// The coder of a context's own CO frames, for `p` whose outer header (if the context
    /// keeps an IPv4 one) has the Identification `outer_id`.
    #[inline]
    pub(super) fn of<'a>(
        ctx: &'a Context,
        outer_id: u16,
        p: &TcpIpPacket<'_>,
        wide: bool,
        check: bool,
        reach: bool,
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
            reach,
            floor: reach.then_some(&ctx.floor),
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
    let code = if crate::encoding::lsb::fits(NEAR_BITS, span.up.into(), span.down.into()) {
        Code::Near(offset & wlsb::mask(NEAR_BITS) as u16)
    } else {
        Code::Whole
    };
    (outer, code, layout)
}

/// CO: the packet coded against the window (its kind byte and body; for CIDs 1 to
/// [`cids::PREFIX_CIDS`] the kind byte that names the CID and the CO kind byte, then the
/// octet after a CID prefix if it needs one, and the body), with the bits per field and what
/// the packet needed of the window ([`Floor`]), or the reason it must go IR.
#[inline]
pub(super) fn write_co(
    ctx: &Coder<'_>,
    p: &TcpIpPacket<'_>,
    cid: u8,
    out: &mut Vec<u8>,
    stats: &mut PlusStats,
) -> Result<(u8, Tally, Option<Spans>), Why> {
    let start = out.len();
    let mut tally: Tally = [0; 13];
    let flagged = matches!(ctx.outer_id, Some((.., Layout::Flagged)));
    if let Some((lead, needs)) = write_co_as(ctx, p, cid, out, stats, flagged, &mut tally)? {
        return Ok((lead, tally, needs));
    }
    // An outer Identification that is not the predicted one, and no spare bit at the end of
    // the bit field to say so: again, with the extension's O flag.
    out.truncate(start);
    tally = [0; 13];
    let (lead, needs) = write_co_as(ctx, p, cid, out, stats, true, &mut tally)?
        .expect("with the O flag the outer Identification always goes");
    Ok((lead, tally, needs))
}

/// Whether a packet can go in a CO frame at all: canonical options, at most 4 SACK blocks, an
/// urgent pointer only with URG, and no IPv4 TCP checksum of 0xFFFF (the checksum field
/// carries it plus the IP-ID, and the decompressor refuses that value).
#[inline(always)]
fn fits_co(p: &TcpIpPacket<'_>) -> bool {
    let urgent = p.flags & flags::URG != 0;
    p.canonical_options
        && p.sack.len() <= 4
        && (urgent || p.urgent == 0)
        && !(p.v4 && p.checksum == 0xFFFF)
}

/// Widens `needs` (how far `p`'s fields are from the window's references) to what the frame
/// must decode against: a wide frame's horizon too, and whole numbers for a frame coded against
/// another flow's references; or says why the packet cannot go CO: a sequence or acknowledgment
/// number 2^30 or more away from a reference (no TCP moves so far between two packets: a mangled
/// or forged one) goes IR. Sequence arithmetic cannot order such a packet, so the decompressor
/// may keep its older reference while the window's pruning counts the jump as progress and drops
/// that reference.
#[inline(always)]
fn widen(needs: &mut Needs, ctx: &Coder<'_>, p: &TcpIpPacket<'_>, me: &Derived) -> Result<(), Why> {
    if let Some(horizon) = ctx.horizon {
        let more = window::needs(horizon, ctx.derived_by, &p.fields, me, ctx.scaler, ctx.ts);
        *needs = needs.max(&more);
    }
    if ctx.reach {
        reach(needs, ctx.strides, ctx.behaviour.is_counter());
    }
    if ctx.full_numbers {
        let whole = Span {
            up: u32::MAX,
            down: u32::MAX,
        };
        (needs.seq, needs.ack) = (whole, whole);
        (needs.seq_scaled, needs.ack_scaled) = (None, None);
        return Ok(());
    }
    let far = |s: Span| s.up.max(s.down) >= 1 << 30;
    if far(needs.seq) || far(needs.ack) {
        return Err(Why::Unfit);
    }
    Ok(())
}

/// What a frame's kind byte, extension and SACK header say, chosen from what `p` needs.
struct Plan {
    /// The CO kind byte.
    k: u8,
    /// The extension.
    x: Extension,
    /// The SACK header, if the packet has SACK blocks.
    sack_header: Option<u8>,
    /// Whether the SACK blocks go scaled.
    sack_scaled: bool,
    /// The window's short code (the extension's five low bits, and the bits that follow in
    /// the bit field), when the short extension carries it.
    short_window: Option<(u8, (u8, u32))>,
}

impl Plan {
    #[inline(always)]
    fn of(ctx: &Coder<'_>, p: &TcpIpPacket<'_>, needs: &Needs, cid: u8, o_flag: bool) -> Plan {
        let seq = number_code(needs.seq, needs.seq_scaled, ctx.strides.seq != 0);
        let ack = number_code(needs.ack, needs.ack_scaled, ctx.strides.ack != 0);
        let prefixed = (1..=cids::PREFIX_CIDS).contains(&cid);
        let win = needs.win != Span::default();
        let mut e = 0u8;
        for (on, bit) in [
            (cid != 0 && !prefixed, ext::C),
            (win, ext::W),
            (p.r_octet != ctx.usual_ecn, ext::R),
            (p.flags & flags::URG != 0, ext::U),
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
            .position(|&k| {
                crate::encoding::lsb::fits(k, needs.win.up.into(), needs.win.down.into())
            })
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
        let x = Extension {
            flags: e,
            short,
            outer: o_flag,
            note: ctx.note,
            check: ctx.check,
        };
        if x.present() {
            k |= kind::X;
        }
        Plan {
            k,
            x,
            sack_header,
            sack_scaled,
            short_window: short_window.filter(|_| short.is_some()),
        }
    }
}

/// [`write_co`], with the extension's O flag if `o_flag`: the link's kind byte (the bits per
/// field in `tally`) and what the packet needed of the window, or `None` (and `out` to be cut
/// back) if the frame needs the O flag and has not got it.
fn write_co_as(
    ctx: &Coder<'_>,
    p: &TcpIpPacket<'_>,
    cid: u8,
    out: &mut Vec<u8>,
    stats: &mut PlusStats,
    o_flag: bool,
    tally: &mut Tally,
) -> Result<Option<(u8, Option<Spans>)>, Why> {
    if !fits_co(p) {
        return Err(Why::Unfit);
    }
    // The quotients and the IP-ID offset by the scaler's multiplications, once per packet.
    let me = ctx.scaler.derive(&p.fields);
    let mut needs = window::needs(ctx.vsw, ctx.derived_by, &p.fields, &me, ctx.scaler, ctx.ts);
    // What the window needs, where a floor is kept: a wide frame's horizon raises no floor.
    let window_needs = ctx.floor.map(|_| Spans::of(&needs));
    widen(&mut needs, ctx, p, &me)?;
    if let Some(f) = ctx.floor {
        f.raise(&mut needs);
    }
    let plan = Plan::of(ctx, p, &needs, cid, o_flag);
    let (lead, extension_bits, hash) = write_head(ctx, p, cid, &plan, out, tally);
    let base = out.len() + 1;
    debug_assert_eq!(
        ctx.scaler.scaling(),
        Scaling {
            strides: ctx.strides,
            behaviour: ctx.behaviour
        }
    );
    let shape = Shape {
        strides: ctx.strides,
        behaviour: ctx.behaviour,
        ts: ctx.ts,
        outer: ctx.outer_id.map(|(.., layout)| layout),
    };
    let mut writer = Writer {
        w: BitWriter::new(out),
        tally,
        p,
        me: &me,
        needs: &needs,
        plan: &plan,
        ack_stride: ctx.strides.ack.into(),
        outer: ctx.outer_id,
    };
    if layout(&mut writer, &shape, plan.k, &plan.x).is_err() {
        return Ok(None);
    }
    writer.finish(hash);
    let after_bits = out.len() + 1;
    let used: u32 = tally[Field::Seq as usize..].iter().sum();
    tally[Field::Padding as usize] = 8 * (after_bits - base) as u32 - used;
    // A short extension's five low bits are the window's or the SACK header's.
    let short_bits = if plan.x.short.is_some() { 5 } else { 0 };
    tally[Field::Extension as usize] = extension_bits as u32 - short_bits;
    let short_field = if plan.x.flags & ext::W != 0 {
        Field::Window
    } else {
        Field::Sack
    };
    tally[short_field as usize] += short_bits;
    let e = plan.x.flags;
    Tail {
        r_octet: (e & ext::R != 0).then_some(p.r_octet),
        urgent: (e & ext::U != 0).then_some(p.urgent),
    }
    .emit(out);
    let after_fixed = out.len() + 1;
    tally[Field::Other as usize] = 8 * (after_fixed - after_bits) as u32;
    out.extend_from_slice(p.payload());
    stats.count(Why::Compressed);
    stats.add_part(Part::Base, base as u64);
    stats.add_part(Part::Wasi, (after_bits - base) as u64);
    stats.add_part(Part::RandomFields, (after_fixed - after_bits) as u64);
    Ok(Some((lead, window_needs)))
}

/// Writes what precedes a CO frame's bit field: the octet after a CID prefix if the link's kind
/// byte needs one ([`cids`]), the head ([`Head`]) and the checks ([`Checks`]). Returns the link's
/// kind byte, the bits of the extension and note, and the field hash the padding comes from
/// ([`seal::padding`]); counts the kind byte's, the CID's and the checks' bits in `tally`.
#[inline(always)]
fn write_head(
    ctx: &Coder<'_>,
    p: &TcpIpPacket<'_>,
    cid: u8,
    plan: &Plan,
    out: &mut Vec<u8>,
    tally: &mut Tally,
) -> (u8, usize, u64) {
    // The link's kind byte: the CO kind byte, or one that names the CID too (and then maybe
    // the octet after a CID prefix).
    let (lead, named) = if (1..=cids::PREFIX_CIDS).contains(&cid) {
        let (lead, second) = cids::name(cid, plan.k);
        out.extend(second);
        (lead, second.is_some())
    } else {
        (plan.k, cid != 0)
    };
    let before_head = out.len();
    let scaling = ctx.scaler.scaling();
    Head {
        x: plan.x,
        cid,
        note: ctx.note.then_some(scaling),
    }
    .emit(out);
    let extension_bits = 8 * (out.len() - before_head - usize::from(plan.x.flags & ext::C != 0));
    let hash = seal::field_hash(
        if ctx.note {
            ctx.identity_hash ^ note::seal_key(scaling)
        } else {
            ctx.identity_hash
        },
        &p.fields,
        ctx.outer_id.map_or(0, |(id, ..)| id),
    );
    let sealed = (hash >> 32) as u32;
    let checksum = if p.v4 {
        p.checksum.wrapping_add(p.fields.ip_id)
    } else {
        p.checksum
    };
    Checks {
        checksum: checksum ^ (sealed >> 16) as u16,
        check: ctx.check.then_some(sealed as u16),
    }
    .emit(out);
    tally[Field::Kind as usize] = 8;
    tally[Field::Cid as usize] = 8 * u32::from(named);
    tally[Field::Checksum as usize] = if ctx.check { 32 } else { 16 };
    (lead, extension_bits, hash)
}

/// The frame needs the extension's O flag: the outer Identification is not the predicted one
/// and the bit field leaves no spare bit to say so.
struct NeedsOuterFlag;

/// The compressor's [`BitField`]: each field's code chosen from how far the packet is from the
/// references, written, and its bits counted.
struct Writer<'a, 'p, 'd> {
    w: BitWriter<'a>,
    tally: &'p mut Tally,
    p: &'p TcpIpPacket<'d>,
    me: &'p Derived,
    needs: &'p Needs,
    plan: &'p Plan,
    ack_stride: u32,
    outer: Option<(u16, Code, Layout)>,
}

impl Writer<'_, '_, '_> {
    /// Pads the bit field to an octet with the padding of the field hash `hash`.
    fn finish(self, hash: u64) {
        let spare = self.w.spare();
        self.w.finish_with(seal::padding(hash, spare));
    }

    #[inline(always)]
    fn count(&mut self, field: Field, bits: u8) {
        self.tally[field as usize] += u32::from(bits);
    }
}

impl BitField for Writer<'_, '_, '_> {
    type Error = NeedsOuterFlag;

    fn invalid(&self) -> NeedsOuterFlag {
        // Not reached: the compressor sets O only for a context with an outer Identification.
        NeedsOuterFlag
    }

    #[inline(always)]
    fn at_boundary(&self) -> bool {
        self.w.at_boundary()
    }

    #[inline(always)]
    fn number(&mut self, which: Number, bits: NumberBits) -> Result<(), NeedsOuterFlag> {
        let (field, value, scaled) = match which {
            Number::Seq => (Field::Seq, self.p.fields.seq, self.me.seq_q()),
            Number::Ack => (Field::Ack, self.p.fields.ack, self.me.ack_q()),
        };
        let v = if bits.scaled { scaled } else { value };
        self.w.put(v & wlsb::mask(bits.bits), bits.bits);
        self.count(field, bits.bits);
        Ok(())
    }

    #[inline(always)]
    fn ip_id(&mut self, codes: &FieldCodes) -> Result<(), NeedsOuterFlag> {
        let c = format::code(
            codes,
            self.needs.ip_id.up.into(),
            self.needs.ip_id.down.into(),
        );
        let bits = format::put_code(&mut self.w, codes, c, self.me.offset().into());
        self.count(Field::IpId, bits);
        Ok(())
    }

    #[inline(always)]
    fn random_ip_id(&mut self) -> Result<(), NeedsOuterFlag> {
        self.w.put(self.p.fields.ip_id.into(), 16);
        self.count(Field::IpId, 16);
        Ok(())
    }

    #[inline(always)]
    fn ts_val(&mut self, codes: &FieldCodes) -> Result<(), NeedsOuterFlag> {
        let val = self.needs.ts_val;
        let c = format::code(codes, val.up.into(), val.down.into());
        let bits = format::put_code(&mut self.w, codes, c, self.p.fields.ts_val);
        self.count(Field::TsVal, bits);
        Ok(())
    }

    #[inline(always)]
    fn ts_ecr(&mut self, codes: &EcrCodes) -> Result<(), NeedsOuterFlag> {
        let (ecr, gap, f) = (self.needs.ts_ecr, self.needs.ts_gap, &self.p.fields);
        let c = format::ecr_code(
            codes,
            (ecr.up.into(), ecr.down.into()),
            (gap.up.into(), gap.down.into()),
        );
        let (is_gap, k) = codes.codes[usize::from(c)];
        let v = if is_gap {
            f.ts_val.wrapping_sub(f.ts_ecr)
        } else {
            f.ts_ecr
        };
        format::put_prefixed(&mut self.w, c, k, v);
        self.count(Field::TsEcr, format::prefix_len(c) + k);
        Ok(())
    }

    #[inline(always)]
    fn sack_header(&mut self) -> Result<u8, NeedsOuterFlag> {
        let header = self.plan.sack_header.unwrap_or_default();
        self.w.put(header.into(), 5);
        self.count(Field::Sack, 5);
        Ok(header)
    }

    #[inline(always)]
    fn short_window(&mut self, _short: u8) -> Result<(), NeedsOuterFlag> {
        let (_, (more, bits)) = self.plan.short_window.unwrap_or_default();
        self.w.put(bits, more);
        self.count(Field::Window, more);
        Ok(())
    }

    #[inline(always)]
    fn window(&mut self) -> Result<(), NeedsOuterFlag> {
        let win = self.needs.win;
        let bits = format::put_window(
            &mut self.w,
            self.p.fields.win,
            win.up.into(),
            win.down.into(),
        );
        self.count(Field::Window, bits);
        Ok(())
    }

    #[inline(always)]
    fn sack(&mut self, header: u8) -> Result<(), NeedsOuterFlag> {
        let (_, _, order) = ack::sack_header_fields(header);
        let bits = ack::put_sack(
            &mut self.w,
            self.p.fields.ack,
            self.p.sack.as_slice(),
            self.ack_stride,
            self.plan.sack_scaled,
            order,
        );
        self.tally[Field::Sack as usize] += bits;
        Ok(())
    }

    #[inline(always)]
    fn outer_marker(&mut self) -> Result<bool, NeedsOuterFlag> {
        let coded = !matches!(self.outer, Some((_, Code::Predicted, _)));
        self.w.put(coded.into(), 1);
        self.count(Field::IpId, 1);
        Ok(coded)
    }

    #[inline(always)]
    fn outer_predicted(&mut self) -> Result<(), NeedsOuterFlag> {
        match self.outer {
            Some((_, Code::Predicted, _)) => Ok(()),
            _ => Err(NeedsOuterFlag),
        }
    }

    #[inline(always)]
    fn outer_code(&mut self) -> Result<(), NeedsOuterFlag> {
        let (id, code, _) = self.outer.ok_or(NeedsOuterFlag)?;
        let bits = outer::put_code(&mut self.w, code, id);
        self.count(Field::IpId, bits);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plus::co::number_bits;

    fn code(raw: (u32, u32), scaled: Option<(u32, u32)>, stride: bool) -> (bool, bool, u8, u8) {
        let span = |(up, down)| Span { up, down };
        let c = number_code(span(raw), scaled.map(span), stride);
        let b = number_bits(c.class, stride, c.unscaled_flag);
        (b.scaled, c.unscaled_flag, c.class, b.bits)
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
        // Nothing changed: class 0 (no LSBs, scaled or not).
        assert_eq!(code((0, 0), None, true), (true, false, 0, 0));
        // Beyond 16 bits: unscaled with the flag.
        assert_eq!(code((1 << 20, 0), None, true), (false, true, 3, 32));
        // Without a stride, the unscaled classes and never a flag.
        assert_eq!(code((300, 0), None, false), (false, false, 1, 10));
        assert_eq!(code((3000, 0), None, false), (false, false, 2, 16));
    }
}
