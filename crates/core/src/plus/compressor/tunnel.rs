//! The compressor's side of tunnelled TCP (spec section 8.1): an IP-in-IP packet whose inner
//! packet is compressible TCP. Under an IPv6 outer header the inner flow's context keeps the
//! outer header ([`Outer`]); under an IPv4 one, whose Identification changes per packet, the
//! outer header goes as CO-N in front of every frame.

use alloc::vec::Vec;

use super::PlusCompressor;
use crate::codec::FrameKind;
use crate::plus::format;
use crate::plus::other;
use crate::plus::outer::Outer;
use crate::taroc::packet::TcpIpPacket;
use crate::taroc::stats::Why;

impl PlusCompressor {
    /// An IP-in-IP packet with an inner TCP/IP packet: the packet as IR-N while the outer
    /// context's IR-Ns are due; else, under an IPv6 outer header, the inner packet compressed in
    /// a context that keeps the outer header ([`Outer`]): a plain CO frame, or an IR frame in a
    /// tunnel frame (the outer header as CO-N); under an IPv4 outer header, whose IP-ID
    /// changes, a tunnel frame (the outer header as CO-N, the inner packet compressed in its
    /// flow's context). `None` if the packet is not such a packet.
    pub(super) fn compress_tunnel(
        &mut self,
        packet: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<FrameKind> {
        let inner = TcpIpPacket::parse(other::tunnelled(packet)?)?;
        if let Some(outer) = Outer::of(packet).filter(|_| self.other.ready(packet)) {
            let mut frame = core::mem::take(&mut self.tunnel);
            frame.clear();
            let kind = self.compress_tcp(&inner, Some(outer), &mut frame);
            let result = match kind {
                FrameKind::Profile(k) if format::is_ir(k) => {
                    match self.other.compress(packet, out, false) {
                        Some(FrameKind::Profile(head)) if head != other::IR_N => {
                            out.insert(0, head);
                            out.push(k);
                            out.extend_from_slice(&frame);
                            FrameKind::Profile(other::TUNNEL)
                        }
                        // Not after `ready`: the packet went whole.
                        Some(kind) => kind,
                        None => {
                            out.clear();
                            out.extend_from_slice(packet);
                            FrameKind::Ip
                        }
                    }
                }
                _ => {
                    core::mem::swap(out, &mut frame);
                    kind
                }
            };
            self.tunnel = frame;
            return Some(result);
        }
        let FrameKind::Profile(outer) = self.other.compress(packet, out, false)? else {
            return None;
        };
        if outer == other::IR_N {
            self.stats.count(Why::NoReference);
            return Some(FrameKind::Profile(outer));
        }
        let mut frame = core::mem::take(&mut self.tunnel);
        frame.clear();
        let kind = self.compress_tcp(&inner, None, &mut frame);
        out.insert(0, outer);
        out.push(kind.to_byte());
        out.extend_from_slice(&frame);
        self.tunnel = frame;
        Some(FrameKind::Profile(other::TUNNEL))
    }
}
