//! The compressor's full headers for a TCP flow: IR (the packet whole, with the context's
//! flags, CID and stride) and IR-R (a new context replicated from another flow's between the
//! same hosts: what differs from the base, then the fields coded against the base's window).

use alloc::vec::Vec;

use taroc_wire::tcp::flags;

use super::co::{write_co, Coder};
use super::Context;
use crate::plus::compact;
use crate::plus::format;
use crate::plus::ir::IrRepr;
use crate::plus::ir_r::{self, IrR};
use crate::plus::packed;
use crate::plus::ports;
use crate::plus::scaled::Strides;
use crate::plus::PlusStats;
use crate::tcp::packet::TcpIpPacket;
use crate::tcp::stats::Why;

/// IR: the packet whole, its first length field carrying the context flags and the CID, and
/// the strides after it if the context has any; sent as a compact IR ([`compact`]) where that
/// is shorter (written to `scratch`, then swapped with `out`), naming `mirror` instead of its
/// addresses and ports if given ([`crate::plus::mirror`]), its numbers coded against the
/// mirror's reference where that is shorter ([`crate::plus::numbers`]). Returns the kind byte
/// ([`format::IR`], [`format::COMPACT_IR`] or [`format::PACKED_IR`]).
/// An IR frame is never longer than its packet: the context's stride (one at most, see
/// [`Learner`](crate::plus::scaled::Learner)) travels in the TCP urgent pointer, which must be unused (URG clear, pointer 0);
/// if it is not, the context drops its strides.
pub(super) fn write_ir(
    ctx: &mut Context,
    p: &TcpIpPacket<'_>,
    cid: u8,
    mirror: Option<compact::Mirror<'_>>,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> u8 {
    if ctx.strides != Strides::default() && (p.flags & flags::URG != 0 || p.urgent != 0) {
        ctx.strides = Strides::default();
    }
    let repr = IrRepr {
        cid,
        behaviour: ctx.behaviour,
        usual_ecn: ctx.identity.usual_ecn,
        strides: ctx.strides,
    };
    repr.emit(p, out);
    if !compact::encode(out, compact::Framing::Ir, mirror, scratch) {
        return format::IR;
    }
    if packed::pack(scratch, out) {
        return format::PACKED_IR;
    }
    core::mem::swap(out, scratch);
    format::COMPACT_IR
}

/// IR-R: a new context replicated from `base` (of `base_cid`); its kind byte ([`format::IR_R`]
/// [`format::IR_R_SOURCE_KEPT`], [`format::IR_R_DEST_KEPT`]), or the reason it cannot be.
pub(super) fn write_ir_r(
    ctx: &Context,
    base: &Context,
    base_cid: u8,
    p: &TcpIpPacket<'_>,
    cid: u8,
    out: &mut Vec<u8>,
    stats: &mut PlusStats,
) -> Result<u8, Why> {
    out.clear();
    let mut flags = ctx.behaviour.code() | (ctx.identity.usual_ecn & 0x03) << 2;
    if ctx.identity.ts {
        flags |= format::ir::TS;
    }
    let ip_bytes = &format::IR_R_IP_BYTES[usize::from(!p.v4)];
    let base_ip = ip_bytes
        .iter()
        .all(|&at| ctx.identity.template[at] == base.identity.template[at]);
    let send_strides = ctx.strides != base.strides && ctx.strides != Strides::default();
    if base_ip {
        flags |= format::ir::BASE_IP;
    }
    if ctx.strides == base.strides {
        flags |= format::ir::BASE_STRIDES;
    } else if send_strides {
        flags |= format::ir::STRIDES;
    }
    let header = p.tcp_offset;
    let (own, theirs) = (&ctx.identity.template, &base.identity.template);
    let four = |t: &[u8]| -> Option<[u8; 4]> { t.get(header..header + 4)?.try_into().ok() };
    let (Some(own_ports), Some(base_ports)) = (four(own), four(theirs)) else {
        return Err(Why::Unfit);
    };
    let mode = ports::mode(&own_ports, &base_ports);
    let coded_ports = ports::encode(mode, &own_ports, &base_ports);
    let at = IrR {
        mode,
        flags,
        cid,
        base_cid,
        strides: send_strides.then_some(ctx.strides),
        ip: (!base_ip).then(|| ip_bytes.map(|at| ctx.identity.template[at])),
        ports: coded_ports.as_bytes(),
        co_kind: 0,
        body: &[],
    }
    .emit(out);
    // The new context's own coding, against the base's window, numbers whole; an outer
    // header's Identification is in the tunnel frame around it (section 8.1).
    let coder = Coder {
        vsw: &base.vsw,
        derived_by: base.scaler.scaling(),
        full_numbers: true,
        outer_id: None,
        note: false,
        horizon: None,
        ..Coder::of(ctx, 0, p, false, false, false)
    };
    let (k, ..) = write_co(&coder, p, 0, out, stats)?;
    out[at] = k;
    Ok(ir_r::kind(mode))
}
