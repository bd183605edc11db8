//! The decompressor's full headers: IR frames (spec section 3; compact and packed IRs expanded
//! into one) and IR-R frames (section 4) set a context up once their packet verified; IR-S
//! frames (section 4.1) rebuild a handshake segment against a base context or a mirror, and
//! compact SYNs expand into one, and set up nothing.

use alloc::vec::Vec;

use super::co::decode_body;
use super::{Context, PlusDecompressor, Quotients, CO_KINDS};
use crate::codec::DropReason;
use crate::plus::co::Head;
use crate::plus::compact::{self, CompactIr, Framing};
use crate::plus::format;
use crate::plus::handshake::{self, Base, IrS};
use crate::plus::ipid::Behaviour;
use crate::plus::ir::{IrFrame, IrRepr};
use crate::plus::ir_r::IrR;
use crate::plus::numbers;
use crate::plus::outer::{Outer, Predictor};
use crate::plus::packed::PackedIr;
use crate::plus::ports;
use crate::plus::scaled::{Learner, Strides};
use crate::plus::seal;
use crate::plus::stale::Trace;
use crate::tcp::context::Identity;
use crate::tcp::packet::{self, FlowKey, TcpIpPacket};

impl PlusDecompressor {
    /// Sets up a context from an IR frame (spec section 3; a compact IR's, expanded) and
    /// delivers its packet, once it verified.
    pub(super) fn ir(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let IrRepr {
            cid,
            behaviour,
            usual_ecn,
            strides,
        } = IrRepr::parse(&IrFrame::new_checked(frame)?, out)?;
        let p = TcpIpPacket::parse(out).ok_or(DropReason::ChecksumMismatch)?;
        if !p.v4 && behaviour != Behaviour::Zero
            || behaviour == Behaviour::Zero && p.fields.ip_id != 0
        {
            out.clear();
            return Err(DropReason::Malformed);
        }
        let tunnel = self.tunnel_outer.flatten();
        let outer = tunnel.map(|(o, _)| o);
        let outer_predictor = outer_predictor(tunnel, p.fields.ip_id);
        let outer_ref = outer_offset(tunnel, p.fields.ip_id);
        self.requests.delivered(cid);
        self.installed = Some(cid);
        let fresh = self.changes(cid, &p.key, strides, behaviour);
        let again = self.holds(cid, &p.key);
        self.receipts.installed(cid, fresh, p.checksum, again);
        self.outbox.changed(cid);
        let mut heard = None;
        match &mut self.contexts[usize::from(cid)] {
            Some(ctx) => {
                let same_flow = ctx.key == p.key;
                // An IR frame of the flow the context holds shows a loss as a CO frame does (a
                // start's frame after a lost one): short flows that end before their first CO
                // frame show their losses this way alone.
                if same_flow {
                    let sequential =
                        behaviour == Behaviour::Sequential && ctx.behaviour == behaviour;
                    heard = Some((sequential, p.fields.ip_id.wrapping_sub(ctx.high_ip_id)));
                }
                ctx.identity.assign(&p, false);
                ctx.identity.usual_ecn = usual_ecn;
                (ctx.outer, ctx.outer_predictor) = (outer, outer_predictor);
                ctx.outer_ref = outer_ref;
                ctx.identity_hash = seal::identity_hash(&ctx.identity, outer.as_ref());
                (ctx.key, ctx.v4, ctx.reference) = (p.key, p.v4, p.fields);
                ctx.next = numbers::next_seq(p.fields.seq, p.payload_len(), p.flags);
                ctx.last = trace(&p);
                ctx.high_ip_id = p.fields.ip_id;
                (ctx.behaviour, ctx.strides) = (behaviour, strides);
                ctx.trust();
                if same_flow {
                    ctx.learner.observe(p.payload_len(), p.fields.ack, strides);
                } else {
                    ctx.learner = Learner::after(p.payload_len(), p.fields.ack);
                    ctx.delivered = 0;
                }
            }
            slot @ None => {
                let mut identity = Identity::of(&p, false);
                identity.usual_ecn = usual_ecn;
                *slot = Some(Context {
                    identity_hash: seal::identity_hash(&identity, outer.as_ref()),
                    identity,
                    outer,
                    outer_predictor,
                    outer_ref,
                    key: p.key,
                    v4: p.v4,
                    behaviour,
                    strides,
                    reference: p.fields,
                    next: numbers::next_seq(p.fields.seq, p.payload_len(), p.flags),
                    last: trace(&p),
                    high_ip_id: p.fields.ip_id,
                    quotients: Quotients::default(),
                    learner: Learner::after(p.payload_len(), p.fields.ack),
                    delivered: 0,
                    suspect: false,
                    held: None,
                });
            }
        }
        if let Some((sequential, gap)) = heard {
            self.loss.delivered(sequential, gap);
        }
        self.count_delivered(cid);
        Ok(())
    }

    /// Sets up a context from an IR-R frame whose ports are coded in `mode`; returns its CID
    /// (once known) with the outcome.
    pub(super) fn ir_r(
        &mut self,
        frame: &[u8],
        mode: ports::Mode,
        out: &mut Vec<u8>,
    ) -> (Option<u8>, Result<(), DropReason>) {
        match IrR::parse(mode, frame) {
            Ok(frame) => (Some(frame.cid), self.ir_r_body(&frame, out)),
            Err((cid, reason)) => (cid, Err(reason)),
        }
    }

    fn ir_r_body(&mut self, frame: &IrR<'_>, out: &mut Vec<u8>) -> Result<(), DropReason> {
        let IrR {
            flags,
            cid,
            base_cid,
            co_kind: k,
            body,
            ..
        } = *frame;
        let base = self.contexts[usize::from(base_cid)]
            .as_ref()
            .ok_or(DropReason::NoContext)?;
        let strides = if flags & format::ir::BASE_STRIDES != 0 {
            base.strides
        } else {
            frame.strides.unwrap_or_default()
        };
        let (identity, key, v4, header_len) = replica_identity(frame, base)?;
        let behaviour = Behaviour::of_code(flags);
        if !v4 && behaviour != Behaviour::Zero || !(CO_KINDS).contains(&k) {
            return Err(DropReason::Malformed);
        }
        let tunnel = self.tunnel_outer.flatten();
        let outer = tunnel.map(|(o, _)| o);
        // The body's outer Identification is the tunnel frame's, not in the body.
        let ctx = Context {
            identity_hash: seal::identity_hash(&identity, outer.as_ref()),
            identity,
            outer,
            outer_predictor: None,
            outer_ref: 0,
            key,
            v4,
            behaviour,
            strides,
            reference: base.reference,
            next: base.next,
            last: Trace::default(),
            high_ip_id: 0,
            quotients: Quotients::default(),
            learner: Learner::new(base.reference.ack),
            delivered: 0,
            suspect: false,
            held: None,
        };
        // The body has no CID (its context's is the frame's) and no note.
        let (head, at) = Head::parse(k, Some(cid), body).map_err(|(_, reason)| reason)?;
        if head.note.is_some() {
            return Err(DropReason::Malformed);
        }
        let (e, body) = (head.x, &body[at..]);
        let d = decode_body(&ctx, k, e, body, out).map_err(|_| DropReason::ChecksumMismatch)?;
        self.outbox.changed(cid);
        let fresh = self.changes(cid, &ctx.key, ctx.strides, ctx.behaviour);
        let again = self.holds(cid, &ctx.key);
        // The rebuilt packet's TCP checksum field: its TCP header follows the plain IP header.
        let at = header_len + 16;
        let checksum = out
            .get(at..at + 2)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
        self.receipts.installed(cid, fresh, checksum, again);
        self.contexts[usize::from(cid)] = Some(Context {
            reference: d.fields,
            next: d.next,
            last: d.trace(),
            high_ip_id: d.fields.ip_id,
            quotients: d.quotients,
            learner: Learner::after(d.payload, d.fields.ack),
            outer_predictor: outer_predictor(tunnel, d.fields.ip_id),
            outer_ref: outer_offset(tunnel, d.fields.ip_id),
            ..ctx
        });
        self.installed = Some(cid);
        self.count_delivered(cid);
        Ok(())
    }

    /// Whether context `cid` holds flow `key`.
    fn holds(&self, cid: u8, key: &FlowKey) -> bool {
        self.contexts[usize::from(cid)]
            .as_ref()
            .is_some_and(|c| c.key == *key)
    }

    /// Whether setting context `cid` up for flow `key` with `strides` and `behaviour` changes
    /// what it holds (no context, another flow's, or other scaling): such an IR frame gets a
    /// receipt even right after another ([`crate::plus::receipt`]).
    fn changes(&self, cid: u8, key: &FlowKey, strides: Strides, behaviour: Behaviour) -> bool {
        self.contexts[usize::from(cid)]
            .as_ref()
            .is_none_or(|c| c.key != *key || c.strides != strides || c.behaviour != behaviour)
    }

    /// Sets up a context from a packed IR ([`crate::plus::packed`]): the short mirrored
    /// compact IR it stands for.
    pub(super) fn packed_ir(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let mut short = core::mem::take(&mut self.packed);
        let unpacked = PackedIr::new_checked(frame).and_then(|p| p.unpack(&mut short));
        let result = unpacked.and_then(|()| self.compact_ir(&short, out));
        self.packed = short;
        result
    }

    /// Sets up a context from a compact IR ([`compact`]): the IR frame it stands for.
    pub(super) fn compact_ir(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let mut ir = core::mem::take(&mut self.compact);
        let expanded = compact::expand(frame, Framing::Ir, &self.mirrors, &mut ir);
        let result = expanded.and_then(|named| self.ir(&ir, out).map(|()| named));
        self.compact = ir;
        // The far end delivered the packet its numbers name: the sibling compressor hears of it
        // (a reference receipt, `crate::plus::receipt`).
        if let Ok(Some((hash, checksum))) = result {
            if let Some(numbers) = self.mirrors.numbers(hash, checksum) {
                self.outbox.referenced(hash, numbers);
            }
        }
        let result = result.map(drop);
        // A mirrored IR refused for its mirror (missing, or another flow's now) asks for the
        // context: the IR frames that answer go unmirrored.
        let refused = CompactIr::new_checked(frame).filter(|_| result.is_err());
        if let Some(cid) = refused.and_then(|f| f.mirrored_cid()) {
            self.requests.record(cid, &result);
        }
        result
    }

    /// Delivers the handshake segment of a compact SYN ([`compact`]), once it verified; the
    /// sibling compressor hears of it: the flow's data may go the other way next.
    pub(super) fn compact_syn(
        &mut self,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        compact::expand(frame, Framing::Packet, &self.mirrors, out)?;
        let p = handshake::parse(out).ok_or(DropReason::ChecksumMismatch)?;
        self.outbox.handshake(p.key);
        self.numbers_due = true;
        Ok(())
    }

    /// Delivers the handshake segment of an IR-S frame ([`handshake`]), once it verified; the
    /// sibling compressor hears of it. One refused against a base context (lost, or never had
    /// after a restart) asks for that context: the segment's retransmission goes without a base
    /// anyway.
    pub(super) fn ir_s(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let result = self.ir_s_against_base(frame, out);
        if result.is_err() {
            if let Some(Base::Context(cid)) = IrS::new_checked(frame).map(|f| f.base()) {
                self.requests.record(cid, &result);
            }
        }
        if let (Ok(()), Some(p)) = (&result, handshake::parse(out)) {
            self.outbox.handshake(p.key);
            self.numbers_due = true;
        }
        result
    }

    /// Rebuilds an IR-S frame ([`handshake`]) against the base context or the mirror it names;
    /// the reference a frame with numbers names goes to the sibling compressor once it verified
    /// (a reference receipt, [`crate::plus::receipt`]).
    fn ir_s_against_base(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let frame = IrS::new_checked(frame).ok_or(DropReason::Malformed)?;
        match frame.base() {
            Base::Context(cid) => {
                let base = self.contexts[usize::from(cid)]
                    .as_ref()
                    .ok_or(DropReason::NoContext)?;
                frame.rebuild(&base.identity.template, |_| None, out)
            }
            Base::Reference(checksum) => {
                let (hash, numbers) = self
                    .mirrors
                    .numbers_by_checksum(checksum)
                    .map(|(h, n)| (h, *n))
                    .ok_or(DropReason::NoContext)?;
                let flow = self.mirrors.resolve(hash).ok_or(DropReason::NoContext)?;
                handshake::mirror_template(flow, &mut self.compact);
                let reference = |c: u16| (c == checksum).then_some(numbers);
                frame.rebuild(&self.compact, reference, out)?;
                self.outbox.referenced(hash, &numbers);
                Ok(())
            }
            Base::Mirror(m) => {
                let flow = self.mirrors.resolve(m).ok_or(DropReason::NoContext)?;
                // The compact IR's buffer, free meanwhile, holds the template.
                handshake::mirror_template(flow, &mut self.compact);
                let mirrors = &self.mirrors;
                let reference = |checksum| mirrors.numbers(m, checksum).copied();
                frame.rebuild(&self.compact, reference, out)?;
                let numbers = frame
                    .reference_checksum()
                    .and_then(|checksum| self.mirrors.numbers(m, checksum));
                if let Some(numbers) = numbers {
                    self.outbox.referenced(m, numbers);
                }
                Ok(())
            }
        }
    }
}

/// The predictor a context set up under the outer header `tunnel` (with its Identification)
/// keeps, for an inner packet of IP-ID `inner`: only an IPv4 outer header's CO frames code its
/// Identification against it (section 8.1).
fn outer_predictor(tunnel: Option<(Outer, u16)>, inner: u16) -> Option<Predictor> {
    tunnel
        .filter(|(o, _)| o.is_v4())
        .map(|(_, id)| Predictor::of(id, inner))
}

/// The offset `outer IP-ID - inner IP-ID` of a packet of inner IP-ID `inner` under the outer
/// header `tunnel` (with its Identification), 0 without one.
fn outer_offset(tunnel: Option<(Outer, u16)>, inner: u16) -> u16 {
    tunnel.map_or(0, |(_, id)| id.wrapping_sub(inner))
}

/// What packet `p` leaves to compare the next one with ([`crate::plus::stale`]).
fn trace(p: &TcpIpPacket<'_>) -> Trace {
    Trace {
        ip_id: p.fields.ip_id,
        next: numbers::next_seq(p.fields.seq, p.payload_len(), p.flags),
        ack: p.fields.ack,
    }
}

/// The identity of the context an IR-R frame sets up against `base`: the base's IP header with
/// the frame's six bytes (or the base's), its ports, the frame's timestamps flag and ECN; with
/// the flow's key, whether it is IPv4 and its IP header's length. The six bytes must keep the base's IP version and
/// header length (no options: the base's template has none).
fn replica_identity(
    frame: &IrR<'_>,
    base: &Context,
) -> Result<(Identity, FlowKey, bool, usize), DropReason> {
    let base_template = &base.identity.template;
    let ip_bytes = &format::IR_R_IP_BYTES[usize::from(!base.v4)];
    let ip = match frame.ip {
        Some(ip) => ip,
        None => {
            let mut ip = [0u8; 6];
            for (byte, &at) in ip.iter_mut().zip(ip_bytes) {
                *byte = *base_template.get(at).ok_or(DropReason::Malformed)?;
            }
            ip
        }
    };
    let (v4, header_len) = match (ip[0], base_template.len()) {
        (0x45, 24) if ip[5] == taroc_wire::protocol::TCP => (true, 20),
        (b, 44) if b >> 4 == 6 && ip[4] == taroc_wire::protocol::TCP => (false, 40),
        _ => return Err(DropReason::Malformed),
    };
    let base_ports: &[u8; 4] = base_template[header_len..]
        .try_into()
        .map_err(|_| DropReason::Malformed)?;
    let (ports, _) =
        ports::get(frame.ports, frame.mode, base_ports).ok_or(DropReason::Malformed)?;
    let mut template = Vec::with_capacity(packet::MAX_TEMPLATE_LEN);
    template.extend_from_slice(&base_template[..header_len]);
    for (&at, &byte) in format::IR_R_IP_BYTES[usize::from(!v4)].iter().zip(&ip) {
        template[at] = byte;
    }
    if (v4 && template[1] & 0x03 != 0) || (!v4 && template[1] & 0x30 != 0) {
        return Err(DropReason::Malformed);
    }
    template.extend_from_slice(&ports);
    let key = FlowKey {
        src_port: u16::from_be_bytes([ports[0], ports[1]]),
        dst_port: u16::from_be_bytes([ports[2], ports[3]]),
        ..base.key
    };
    let identity = Identity {
        template,
        ts: frame.flags & format::ir::TS != 0,
        random_ip_id: false,
        usual_ecn: (frame.flags >> 2) & 0x03,
    };
    Ok((identity, key, v4, header_len))
}
