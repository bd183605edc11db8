//! The compressor's side of `taroc-plus` for packets that are not compressible TCP: a context
//! per flow of the same shape, IR-N frames to start and refresh it, CO-N frames against it.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::{
    crc16, kind, shape, template_in, Shape, CO_N, FRAG_HISTORY, IP_ID_BELOW, IP_ID_HISTORY, IR_N,
    MAX_CONTEXTS, MAX_HEADER, MAX_REFRESH, REFRESH, START_IRS,
};
use crate::codec::FrameKind;
use crate::tcp::packet::length_field_offset;

#[derive(Debug, Clone)]
struct CompContext {
    template: Vec<u8>,
    /// Packets since the last IR-N.
    since_ir: u16,
    /// Packets between refresh IR-Ns now ([`REFRESH`] doubling up to [`MAX_REFRESH`]).
    period: u16,
    irs_due: u8,
    /// The IP-IDs of the last packets, newest at `next - 1` (a ring).
    ip_ids: [u16; IP_ID_HISTORY],
    next: usize,
    /// The fragment fields of the last IR-Ns, newest first.
    frags: [u16; FRAG_HISTORY],
    last_used: u64,
}

impl CompContext {
    /// Whether `ip_id`'s 8 LSBs decode against every IP-ID of the history.
    fn fits(&self, ip_id: u16) -> bool {
        self.ip_ids
            .iter()
            .all(|&r| ip_id.wrapping_sub(r).wrapping_add(IP_ID_BELOW) < 256)
    }

    fn push(&mut self, ip_id: u16) {
        self.ip_ids[self.next] = ip_id;
        self.next = (self.next + 1) % IP_ID_HISTORY;
    }

    /// An IR-N of `ip_id` and `frag` was sent (it may be lost: the histories keep the older).
    fn sent_ir_n(&mut self, ip_id: u16, frag: u16) {
        self.push(ip_id);
        self.frags.rotate_right(1);
        self.frags[0] = frag;
    }
}

/// The compressor's side: contexts keyed by their template.
#[derive(Debug, Default)]
pub struct OtherCompressor {
    contexts: Vec<CompContext>,
    by_template: BTreeMap<Vec<u8>, u8>,
    clock: u64,
}

impl OtherCompressor {
    /// Compresses `packet` into `out` (IR-N or CO-N), or returns `None` (send it whole).
    /// Without `payload` a CO-N frame stops before the payload (a tunnel carries it
    /// compressed); an IR-N frame is always whole.
    pub fn compress(
        &mut self,
        packet: &[u8],
        out: &mut Vec<u8>,
        payload: bool,
    ) -> Option<FrameKind> {
        let s = shape(packet)?;
        self.clock += 1;
        // The template on the stack: a Vec is made only for a new context.
        let mut buf = [0; MAX_HEADER];
        let t = template_in(packet, s, &mut buf);
        let ip_id = if s.v4 {
            u16::from_be_bytes([packet[4], packet[5]])
        } else {
            0
        };
        let frag = if s.v4 {
            u16::from_be_bytes([packet[6], packet[7]])
        } else {
            0
        };
        out.clear();
        let known = self.by_template.get(t).copied();
        if let Some(ctx) = known.map(|cid| &mut self.contexts[usize::from(cid)]) {
            ctx.last_used = self.clock;
            ctx.since_ir += 1;
            if ctx.irs_due > 0 || ctx.since_ir >= ctx.period {
                if ctx.irs_due == 0 {
                    ctx.period = (ctx.period * 2).min(MAX_REFRESH);
                }
                ctx.irs_due = ctx.irs_due.saturating_sub(1);
                ctx.since_ir = 0;
                ctx.sent_ir_n(ip_id, frag);
            }
        }
        if let Some(cid) = known.filter(|&cid| self.contexts[usize::from(cid)].since_ir > 0) {
            let ctx = &mut self.contexts[usize::from(cid)];
            let code: u8 = if ip_id == 0 {
                0
            } else if ctx.fits(ip_id) {
                1
            } else {
                2
            };
            ctx.push(ip_id);
            let mut k = CO_N | code << kind::I_SHIFT;
            if cid != 0 {
                k |= kind::C;
                out.push(cid);
            }
            match code {
                1 => out.push(ip_id as u8),
                2 => out.extend_from_slice(&ip_id.to_be_bytes()),
                _ => {}
            }
            if ctx.frags.iter().any(|&f| f != frag) {
                k |= kind::F;
                out.extend_from_slice(&frag.to_be_bytes());
            }
            out.extend_from_slice(&crc16(&packet[..s.header]).to_be_bytes());
            if s.udp || s.echo {
                // The UDP checksum, or the ICMP echo sequence number.
                out.extend_from_slice(&packet[s.header - 2..s.header]);
            }
            if payload {
                out.extend_from_slice(&packet[s.header..]);
            }
            return Some(FrameKind::Profile(k));
        }
        if let Some(cid) = known {
            return Some(ir_n(packet, s, cid, out));
        }
        let cid = if self.contexts.len() < MAX_CONTEXTS {
            self.contexts.push(CompContext {
                template: Vec::new(),
                since_ir: 0,
                period: REFRESH,
                irs_due: 0,
                ip_ids: [ip_id; IP_ID_HISTORY],
                frags: [frag; FRAG_HISTORY],
                next: 0,
                last_used: 0,
            });
            self.contexts.len() - 1
        } else {
            let lru = (0..self.contexts.len())
                .min_by_key(|&i| self.contexts[i].last_used)
                .unwrap_or(0);
            self.by_template.remove(&self.contexts[lru].template);
            lru
        };
        self.contexts[cid] = CompContext {
            template: t.to_vec(),
            since_ir: 0,
            period: REFRESH,
            irs_due: START_IRS - 1,
            ip_ids: [ip_id; IP_ID_HISTORY],
            frags: [frag; FRAG_HISTORY],
            next: 0,
            last_used: self.clock,
        };
        self.by_template.insert(t.to_vec(), cid as u8);
        Some(ir_n(packet, s, cid as u8, out))
    }

    /// Whether [`OtherCompressor::compress`] would code a packet of header template `template`
    /// (its header with the per-packet fields zeroed) as CO-N: its context exists and owes no
    /// IR-N, neither a start's nor a refresh.
    pub fn ready(&self, template: &[u8]) -> bool {
        self.by_template
            .get(template)
            .map(|&cid| &self.contexts[usize::from(cid)])
            .is_some_and(|ctx| ctx.irs_due == 0 && ctx.since_ir + 1 < ctx.period)
    }

    /// The decompressor asked for context `cid`: its next packets go IR-N (as at its start).
    /// Returns whether the context exists.
    pub fn request(&mut self, cid: u8) -> bool {
        let Some(ctx) = self.contexts.get_mut(usize::from(cid)) else {
            return false;
        };
        ctx.irs_due = START_IRS;
        ctx.period = REFRESH;
        true
    }
}

/// Writes `packet` (of shape `s`) as an IR-N frame of `cid`.
fn ir_n(packet: &[u8], s: Shape, cid: u8, out: &mut Vec<u8>) -> FrameKind {
    out.clear();
    out.extend_from_slice(packet);
    let at = length_field_offset(s.v4);
    out[at] = s.flags();
    out[at + 1] = cid;
    FrameKind::Profile(IR_N)
}
