//! The decompressor's side of `taroc-plus` for packets that are not compressible TCP: contexts
//! set up by IR-N frames, CO-N headers rebuilt against them and delivered only with the CRC of
//! the original header.

use alloc::vec::Vec;

use super::{
    crc16, icmp_checksum, kind, shape, template_in, Shape, ECHO_MODE, IP_ID_BELOW, MAX_HEADER,
    UDP_MODE,
};
use crate::codec::DropReason;
use crate::tcp::packet::length_field_offset;

#[derive(Debug, Clone)]
struct DecompContext {
    template: Vec<u8>,
    shape: Shape,
    frag: u16,
    ip_id: u16,
}

/// The decompressor's side: one context per CID.
#[derive(Debug, Clone)]
pub struct OtherDecompressor {
    contexts: Vec<Option<DecompContext>>,
}

impl Default for OtherDecompressor {
    fn default() -> OtherDecompressor {
        OtherDecompressor {
            contexts: (0..256).map(|_| None).collect(),
        }
    }
}

impl OtherDecompressor {
    /// Sets a context up from an IR-N frame and delivers its packet; the context's CID.
    pub fn ir_n(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<u8, DropReason> {
        let v4 = match frame.first().map(|b| b >> 4) {
            Some(4) => true,
            Some(6) => false,
            _ => return Err(DropReason::Malformed),
        };
        let at = length_field_offset(v4);
        let (flags, cid) = match frame.get(at..at + 2) {
            Some(&[f, c]) => (f, c),
            _ => return Err(DropReason::Malformed),
        };
        if flags & !(UDP_MODE | ECHO_MODE) != 0 {
            return Err(DropReason::Malformed);
        }
        let len = if v4 {
            frame.len()
        } else {
            frame.len().wrapping_sub(40)
        };
        if len > usize::from(u16::MAX) {
            return Err(DropReason::Malformed);
        }
        out.clear();
        out.extend_from_slice(frame);
        out[at..at + 2].copy_from_slice(&(len as u16).to_be_bytes());
        let s = shape(out).ok_or(DropReason::Malformed)?;
        if s.flags() != flags {
            out.clear();
            return Err(DropReason::Malformed);
        }
        let (ip_id, frag) = if v4 {
            (
                u16::from_be_bytes([out[4], out[5]]),
                u16::from_be_bytes([out[6], out[7]]),
            )
        } else {
            (0, 0)
        };
        // A refresh of a context reuses its template's buffer: no allocation per IR-N.
        let mut buf = [0; MAX_HEADER];
        let t = template_in(out, s, &mut buf);
        let slot = &mut self.contexts[usize::from(cid)];
        let template = match slot.take() {
            Some(DecompContext { mut template, .. }) => {
                template.clear();
                template.extend_from_slice(t);
                template
            }
            None => t.to_vec(),
        };
        *slot = Some(DecompContext {
            template,
            shape: s,
            frag,
            ip_id,
        });
        Ok(cid)
    }

    /// Rebuilds the packet of a CO-N frame of kind byte `k`; delivers it only if its header
    /// has the frame's CRC.
    pub fn co_n(&mut self, k: u8, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let (head, at) = self.head(k, frame)?;
        self.rebuild(&head, &frame[at..], out)
    }

    /// Parses the header part of a CO-N frame of kind byte `k` (all but its payload); the
    /// fields and the octets they took.
    pub fn head(&self, k: u8, frame: &[u8]) -> Result<(Head, usize), DropReason> {
        let mut at = 0;
        let mut take = |n: usize| {
            let bytes = frame.get(at..at + n).ok_or(DropReason::Malformed);
            at += n;
            bytes
        };
        let cid = if k & kind::C != 0 {
            match take(1)?[0] {
                0 => return Err(DropReason::Malformed),
                c => c,
            }
        } else {
            0
        };
        let code = (k >> kind::I_SHIFT) & 0x03;
        let ip_id = match code {
            0 => 0,
            1 => u16::from(take(1)?[0]),
            2 => u16::from_be_bytes(take(2)?.try_into().expect("two bytes")),
            _ => return Err(DropReason::Malformed),
        };
        let frag = if k & kind::F != 0 {
            Some(u16::from_be_bytes(take(2)?.try_into().expect("two bytes")))
        } else {
            None
        };
        let crc = u16::from_be_bytes(take(2)?.try_into().expect("two bytes"));
        let ctx = self.contexts[usize::from(cid)]
            .as_ref()
            .ok_or(DropReason::NoContext)?;
        let udp_checksum = if ctx.shape.udp || ctx.shape.echo {
            Some(take(2)?.try_into().expect("two bytes"))
        } else {
            None
        };
        if !ctx.shape.v4 && (code != 0 || frag.is_some()) {
            return Err(DropReason::Malformed);
        }
        let head = Head {
            cid,
            code,
            ip_id,
            frag,
            crc,
            udp_checksum,
        };
        Ok((head, at))
    }

    /// The template of the context a CO-N frame's head names (its header with the per-packet
    /// fields zeroed) with the IPv4 fragment field and Identification the head gives (both 0
    /// for IPv6), if the context exists.
    pub fn ip_fields(&self, head: &Head) -> Option<(&[u8], u16, u16)> {
        let ctx = self.contexts[usize::from(head.cid)].as_ref()?;
        Some((
            &ctx.template,
            head.frag.unwrap_or(ctx.frag),
            ip_id(head, ctx),
        ))
    }

    /// Rebuilds the packet of `head` (from [`OtherDecompressor::head`]) around `payload`;
    /// delivers it only if its header has the frame's CRC.
    pub fn rebuild(
        &mut self,
        head: &Head,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        out.clear();
        let ctx = self.contexts[usize::from(head.cid)]
            .as_mut()
            .ok_or(DropReason::NoContext)?;
        let s = ctx.shape;
        let ip_id = ip_id(head, ctx);
        let frag = head.frag.unwrap_or(ctx.frag);
        let len = s.header + payload.len();
        out.extend_from_slice(&ctx.template);
        if s.v4 {
            let total = u16::try_from(len).map_err(|_| DropReason::Malformed)?;
            out[2..4].copy_from_slice(&total.to_be_bytes());
            out[4..6].copy_from_slice(&ip_id.to_be_bytes());
            out[6..8].copy_from_slice(&frag.to_be_bytes());
            let sum = taroc_wire::checksum::checksum(&out[..20]);
            out[10..12].copy_from_slice(&sum.to_be_bytes());
        } else {
            let payload_len = u16::try_from(len - 40).map_err(|_| DropReason::Malformed)?;
            out[4..6].copy_from_slice(&payload_len.to_be_bytes());
        }
        if let (Some(sum), true) = (head.udp_checksum, s.udp) {
            let u = s.header - 8;
            let udp_len = u16::try_from(len - u).map_err(|_| DropReason::Malformed)?;
            out[u + 4..u + 6].copy_from_slice(&udp_len.to_be_bytes());
            out[u + 6..u + 8].copy_from_slice(&sum);
        }
        out.extend_from_slice(payload);
        if let (Some(sequence), true) = (head.udp_checksum, s.echo) {
            let i = s.header - 8;
            out[i + 6..i + 8].copy_from_slice(&sequence);
            let sum = icmp_checksum(&out[i..]);
            out[i + 2..i + 4].copy_from_slice(&sum.to_be_bytes());
        }
        if crc16(&out[..s.header]) != head.crc {
            out.clear();
            return Err(DropReason::ChecksumMismatch);
        }
        ctx.ip_id = ip_id;
        Ok(())
    }
}

impl Head {
    /// The CID of the context it names.
    pub fn cid(&self) -> u8 {
        self.cid
    }
}

/// The IP-ID of a CO-N frame's `head` in its context `ctx`.
fn ip_id(head: &Head, ctx: &DecompContext) -> u16 {
    match head.code {
        1 => {
            let low = ctx.ip_id.wrapping_sub(IP_ID_BELOW);
            low.wrapping_add(head.ip_id.wrapping_sub(low) & 0xFF)
        }
        _ => head.ip_id,
    }
}

/// The fields of a CO-N frame's header part.
#[derive(Debug, Clone, Copy)]
pub struct Head {
    cid: u8,
    code: u8,
    ip_id: u16,
    frag: Option<u16>,
    crc: u16,
    /// The UDP checksum (UDP mode) or the ICMP echo sequence number (echo mode).
    udp_checksum: Option<[u8; 2]>,
}
