//! The TAROC decompressor (draft section 7.2): rebuild against the context's reference, verify
//! with the TCP checksum, deliver, and only then take the packet as the new reference.

use alloc::vec::Vec;
use core::time::Duration;

use taroc_wire::tcp::{flags, SackBlocks};

use super::format::{self, flag, uncompressed};
use super::TarocConfig;
use crate::codec::{Decompressor, DropReason, FrameKind};
use crate::encoding::wlsb;
use crate::tcp::context::{Identity, ALL_CIDS};
use crate::tcp::packet::{self, FlowKey, TcpIpPacket};
use crate::tcp::repair::Requests;
use crate::tcp::vsw::is_older;

/// One context: its identity and the reference packet's fields.
#[derive(Debug, Clone)]
struct Context {
    identity: Identity,
    key: FlowKey,
    v4: bool,
    reference: packet::Fields,
}

/// The TAROC decompressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct TarocDecompressor {
    contexts: Vec<Option<Context>>,
    checksum_covers_ip_id: bool,
    requests: Requests,
}

impl TarocDecompressor {
    /// A decompressor with no contexts. It accepts every 8-bit CID, whatever the compressor's
    /// limit; of the configuration it uses only
    /// [`Improvements::checksum_covers_ip_id`](super::Improvements::checksum_covers_ip_id) and
    /// [`Repair::context_requests`](super::Repair::context_requests).
    pub fn new(config: TarocConfig) -> TarocDecompressor {
        TarocDecompressor {
            contexts: (0..ALL_CIDS).map(|_| None).collect(),
            checksum_covers_ip_id: config.improvements.checksum_covers_ip_id,
            requests: Requests::new(config.repair.context_requests),
        }
    }

    /// The reference fields of context `cid`, if it exists.
    pub fn reference_of(&self, cid: u8) -> Option<packet::Fields> {
        self.contexts[usize::from(cid)]
            .as_ref()
            .map(|c| c.reference)
    }

    /// Number of contexts held.
    pub fn context_count(&self) -> usize {
        self.contexts.iter().filter(|c| c.is_some()).count()
    }

    fn uncompressed(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let (at, len) = match frame.first().map(|b| b >> 4) {
            Some(4) => (taroc_wire::ipv4::TOTAL_LEN_OFFSET, frame.len()),
            Some(6) => (
                taroc_wire::ipv6::PAYLOAD_LEN_OFFSET,
                frame.len().wrapping_sub(taroc_wire::ipv6::HEADER_LEN),
            ),
            _ => return Err(DropReason::Malformed),
        };
        if frame.len() < at + 2 || len > usize::from(u16::MAX) {
            return Err(DropReason::Malformed);
        }
        let (ctx_flags, cid) = (frame[at], frame[at + 1]);
        if ctx_flags & !(uncompressed::ALL_FLAGS | 0x06) != 0 {
            return Err(DropReason::Malformed);
        }
        out.clear();
        out.extend_from_slice(frame);
        out[at..at + 2].copy_from_slice(&(len as u16).to_be_bytes());
        let p = TcpIpPacket::parse(out).ok_or(DropReason::ChecksumMismatch)?;
        let random_ip_id = ctx_flags & uncompressed::RANDOM_IP_ID != 0;
        if random_ip_id && !p.v4 {
            return Err(DropReason::Malformed);
        }
        let usual_ecn = (ctx_flags >> 1) & 0x03;
        match &mut self.contexts[usize::from(cid)] {
            Some(ctx) => {
                ctx.identity.assign(&p, random_ip_id);
                ctx.identity.usual_ecn = usual_ecn;
                (ctx.key, ctx.v4, ctx.reference) = (p.key, p.v4, p.fields);
            }
            slot @ None => {
                let mut identity = Identity::of(&p, random_ip_id);
                identity.usual_ecn = usual_ecn;
                *slot = Some(Context {
                    identity,
                    key: p.key,
                    v4: p.v4,
                    reference: p.fields,
                });
            }
        }
        Ok(())
    }

    fn compressed(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let [cid, f, c0, c1, rest @ ..] = frame else {
            return Err(DropReason::Malformed);
        };
        let ctx = self.contexts[usize::from(*cid)]
            .as_mut()
            .ok_or(DropReason::NoContext)?;
        let mut checksum = u16::from_be_bytes([*c0, *c1]);
        let mut at = 0;
        let mut take = |n: usize| -> Result<&[u8], DropReason> {
            let bytes = rest.get(at..at + n).ok_or(DropReason::Malformed)?;
            at += n;
            Ok(bytes)
        };
        let r = &ctx.reference;
        let mut fields = *r;
        if ctx.identity.random_ip_id {
            let b = take(2)?;
            fields.ip_id = u16::from_be_bytes([b[0], b[1]]);
        }
        let r_octet = if f & flag::R != 0 {
            take(1)?[0]
        } else {
            ctx.identity.usual_ecn
        };
        let urgent = if f & flag::U != 0 {
            let b = take(2)?;
            u16::from_be_bytes([b[0], b[1]])
        } else {
            0
        };
        let present = [
            f & flag::W != 0,
            f & flag::A != 0,
            f & flag::S != 0,
            f & flag::I != 0,
        ];
        if present[3] && (!ctx.v4 || ctx.identity.random_ip_id) {
            return Err(DropReason::Malformed);
        }
        if present.iter().any(|&p| p) {
            let (lsbs, used) = format::get_wasi(rest.get(at..).unwrap_or(&[]), present)
                .ok_or(DropReason::Malformed)?;
            at += used;
            if let Some((v, k)) = lsbs[0] {
                fields.win = wlsb::decode(r.win.into(), v, k, 16) as u16;
            }
            if let Some((v, k)) = lsbs[1] {
                fields.ack = wlsb::decode(r.ack, v, k, 32);
            }
            if let Some((v, k)) = lsbs[2] {
                fields.seq = wlsb::decode(r.seq, v, k, 32);
            }
            if let Some((v, k)) = lsbs[3] {
                fields.ip_id = wlsb::decode(r.ip_id.into(), v, k, 16) as u16;
            }
        }
        if self.checksum_covers_ip_id && ctx.v4 {
            // The field carries checksum + IP-ID: a wrongly decoded IP-ID leaves a wrong TCP
            // checksum, which the verification below refuses (0xFFFF is never computed, and is
            // what an IP-ID one too high against a checksum of 0 would leave).
            checksum = checksum.wrapping_sub(fields.ip_id);
            if checksum == 0xFFFF {
                return Err(DropReason::ChecksumMismatch);
            }
        }
        let mut sack = SackBlocks::default();
        if f & flag::O != 0 {
            let octet = *rest.get(at).ok_or(DropReason::Malformed)?;
            at += 1;
            let (ts_val, ts_ecr) = (octet & 0x08 != 0, octet & 0x04 != 0);
            if octet & 0xF0 != 0 || ((ts_val || ts_ecr) && !ctx.identity.ts) {
                return Err(DropReason::Malformed);
            }
            for (on, reference, field) in [
                (ts_val, r.ts_val, &mut fields.ts_val),
                (ts_ecr, r.ts_ecr, &mut fields.ts_ecr),
            ] {
                if on {
                    let (v, k, used) = format::get_ts(rest.get(at..).unwrap_or(&[]))
                        .ok_or(DropReason::Malformed)?;
                    at += used;
                    *field = wlsb::decode(reference, v, k, 32);
                }
            }
            let (blocks, used) = format::get_sack(
                rest.get(at..).unwrap_or(&[]),
                fields.ack,
                usize::from(octet & 0x03),
            )
            .ok_or(DropReason::Malformed)?;
            at += used;
            sack = blocks;
        }
        let payload = rest.get(at..).ok_or(DropReason::Malformed)?;
        let mut tcp_flags = flags::ACK;
        if f & flag::P != 0 {
            tcp_flags |= flags::PSH;
        }
        if f & flag::U != 0 {
            tcp_flags |= flags::URG;
        }
        let payload_sum = packet::rebuild(
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
        if !packet::tcp_checksum_ok(out, ctx.identity.template.len() - 4, &ctx.key, payload_sum) {
            out.clear();
            return Err(DropReason::ChecksumMismatch);
        }
        // Draft 7.2 a: a verified packet becomes the reference unless it is older than the
        // current one (a retransmission or a packet reordered before the compressor).
        if !is_older(fields.seq, fields.ack, r.seq, r.ack) {
            ctx.reference = fields;
        }
        Ok(())
    }
}

impl Decompressor for TarocDecompressor {
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        match kind {
            FrameKind::Ip => crate::codec::deliver_unchanged(frame, out),
            FrameKind::UncompressedTcp => self.uncompressed(frame, out),
            FrameKind::CompressedTcp => {
                let result = self.compressed(frame, out);
                if let Some(&cid) = frame.first() {
                    self.requests.record(cid, &result);
                }
                result
            }
            _ => Err(DropReason::UnknownKind),
        }
    }

    fn set_time(&mut self, now: Duration) {
        self.requests.set_time(now);
    }

    /// Context requests ([`super::repair`]), when they are on.
    fn take_feedback(&mut self, out: &mut Vec<u8>) -> bool {
        self.requests.take(out)
    }
}
