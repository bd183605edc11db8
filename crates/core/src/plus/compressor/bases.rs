//! Which context a new one is replicated from (IR-R, spec section 4) and which an IR-S frame
//! takes its IP header from (section 4.1): contexts of the same hosts the decompressor most
//! surely holds.

use super::starts::LATE_SPREADS;
use super::{Context, PlusCompressor};
use crate::tcp::packet::TcpIpPacket;

impl PlusCompressor {
    /// A context of the packet's hosts to replicate a new context from: same addresses,
    /// the same IP header but for the per-packet fields, the same use of timestamps, a window
    /// to code against, its own IRs all sent (so that the decompressor most likely holds it:
    /// no chain of replications from contexts still starting). Of those, the one resting on
    /// the fewest replications (`depth`: a copy is lost with its base), then the one that has
    /// sent the most CO frames since its last IR frame or context request, then the first
    /// made (a newer one may be a copy of a base the decompressor lacks: taking the newest,
    /// one lost start broke every flow started after it until a request came back). IPv4
    /// options and IPv6 extension headers rule replication out.
    pub(super) fn find_base(&self, p: &TcpIpPacket<'_>) -> Option<(u8, &Context)> {
        self.same_hosts(p)?
            .filter(|(_, c)| c.identity.ts == p.ts)
            .max_by_key(|(_, c)| {
                (
                    core::cmp::Reverse(c.depth),
                    c.co_run,
                    core::cmp::Reverse(c.created),
                )
            })
    }

    /// The base of an IR-S frame ([`handshake`](crate::plus::handshake)), which takes only the IP header from it: of
    /// the contexts of the packet's hosts whose own start is over, the one that has sent the
    /// most CO frames since its last IR frame or context request (the one the decompressor most
    /// surely holds), the first made of those.
    pub(super) fn handshake_base(&self, p: &TcpIpPacket<'_>) -> Option<(u8, &Context)> {
        self.same_hosts(p)?
            .max_by_key(|(_, c)| (c.co_run, core::cmp::Reverse(c.created)))
    }

    /// The contexts whose IP header is the packet's but for the per-packet fields, which have
    /// a window and whose own IRs are all sent (see [`PlusCompressor::find_base`]); without
    /// context requests, on a link known to lose frames, the first of their spread IR frames too
    /// ([`starts`](super::starts)): a burst can take a start's back-to-back IR frames whole,
    /// and every start resting on that context would fail with it (a link used one way only
    /// lost 4-8 times more frames of many-flows captures at 10-30% in bursts of mean 4 for
    /// it). `None` if the packet has IPv4 options or IPv6 extension headers.
    pub(super) fn same_hosts<'a>(
        &'a self,
        p: &TcpIpPacket<'_>,
    ) -> Option<impl Iterator<Item = (u8, &'a Context)> + 'a> {
        let header = if p.v4 { 20 } else { 40 };
        if p.tcp_offset != header {
            return None;
        }
        let mut template = [0u8; 44];
        let t = &mut template[..header + 4];
        t.copy_from_slice(&p.bytes[..header + 4]);
        if p.v4 {
            t[1] &= 0xFC;
            t[2..6].fill(0);
            t[10..12].fill(0);
        } else {
            t[1] &= !0x30;
            t[4..6].fill(0);
        }
        let lossy = self.lossy_alone();
        // The mapped CIDs, not every slot: the table is mostly empty. (No two contexts share a
        // `last_used`, so the order does not matter.)
        Some(
            self.by_flow
                .values()
                .filter_map(|&cid| Some((cid, self.contexts[usize::from(cid)].as_deref()?)))
                .filter(move |(_, c)| {
                    c.irs_due == 0
                        && (c.spread_due <= LATE_SPREADS || !lossy)
                        && c.notes_due == 0
                        && !c.vsw.is_empty()
                        && c.identity.template.len() == header + 4
                        && c.identity.template[..header] == template[..header]
                }),
        )
    }
}
