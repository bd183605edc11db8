//! The compressor's side of tunnelled TCP (spec section 8.1): an IP-in-IP packet whose inner
//! packet is compressible TCP. Under an IPv6 outer header, or an IPv4 one without options, the
//! inner flow's context keeps the outer header ([`Outer`]; an IPv4 header's Identification
//! goes in each CO frame); under any other, the outer header goes as CO-N in front of every
//! frame.

use alloc::vec::Vec;

use super::PlusCompressor;
use crate::codec::FrameKind;
use crate::plus::format;
use crate::plus::other;
use crate::plus::outer::Outer;
use crate::tcp::packet::TcpIpPacket;
use crate::tcp::stats::Why;

impl PlusCompressor {
    /// An IP-in-IP packet with an inner TCP/IP packet: the packet as IR-N while the outer
    /// context's IR-Ns are due; else, under an outer header that [`Outer`] takes, the inner
    /// packet compressed in a context that keeps the outer header: a plain CO frame, or an IR
    /// frame in a tunnel frame (the outer header as CO-N); under another outer header, a
    /// tunnel frame (the outer header as CO-N, the inner packet compressed in its flow's
    /// context). `None` if the packet is not such a packet.
    pub(super) fn compress_tunnel(
        &mut self,
        packet: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<FrameKind> {
        let inner = other::tunnelled(packet)?;
        let Some(inner) = TcpIpPacket::parse(inner) else {
            return self.compress_tunnelled_other(packet, inner, out);
        };
        let mut frame = core::mem::take(&mut self.tunnel);
        frame.clear();
        let ready = |o: &Outer| {
            let (template, len) = o.template();
            self.other.ready(&template[..len])
        };
        let result = match Outer::of(packet).filter(ready) {
            Some(outer) => Some(
                match self.compress_tcp(&inner, Some(&outer), Outer::ip_id_of(packet), &mut frame) {
                    // An IR frame goes in a tunnel frame, which sets the outer header up.
                    FrameKind::Profile(k) if format::is_ir(k) => {
                        match self.other.compress(packet, out, false) {
                            Some(FrameKind::Profile(head)) if head != other::IR_N => {
                                tunnel_frame(out, head, k, &frame)
                            }
                            // Not after `ready`: the packet went whole.
                            Some(kind) => kind,
                            None => whole(out, packet),
                        }
                    }
                    kind => {
                        core::mem::swap(out, &mut frame);
                        kind
                    }
                },
            ),
            None => match self.other.compress(packet, out, false) {
                Some(FrameKind::Profile(other::IR_N)) => {
                    self.stats.count(Why::NoReference);
                    Some(FrameKind::Profile(other::IR_N))
                }
                Some(FrameKind::Profile(head)) => {
                    let kind = self.compress_tcp(&inner, None, 0, &mut frame);
                    Some(tunnel_frame(out, head, kind.to_byte(), &frame))
                }
                _ => None,
            },
        };
        self.tunnel = frame;
        result
    }
}

impl PlusCompressor {
    /// An IP-in-IP packet whose inner packet `inner` is not TCP but one section 8 compresses
    /// (UDP, ICMP, another IP packet): the packet as IR-N while the outer context's IR-Ns are
    /// due, else a tunnel frame, the outer header as CO-N and the inner packet as IR-N or CO-N
    /// of its own context. `None` if the inner packet is not one section 8 compresses (the
    /// packet then goes as any other).
    fn compress_tunnelled_other(
        &mut self,
        packet: &[u8],
        inner: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<FrameKind> {
        if !other::compressible(inner) {
            return None;
        }
        let mut frame = core::mem::take(&mut self.tunnel);
        frame.clear();
        let result = match self.other.compress(packet, out, false)? {
            FrameKind::Profile(head) if head != other::IR_N => {
                match self.other.compress(inner, &mut frame, true) {
                    Some(FrameKind::Profile(k)) => {
                        self.stats.count(if k == other::IR_N {
                            Why::NoReference
                        } else {
                            Why::Compressed
                        });
                        tunnel_frame(out, head, k, &frame)
                    }
                    // Not after `compressible`.
                    _ => whole(out, packet),
                }
            }
            kind => {
                self.stats.count(Why::NoReference);
                kind
            }
        };
        self.tunnel = frame;
        Some(result)
    }
}

/// Makes `out` the packet whole (TYPE_IP).
fn whole(out: &mut Vec<u8>, packet: &[u8]) -> FrameKind {
    out.clear();
    out.extend_from_slice(packet);
    FrameKind::Ip
}

/// Makes `out`, which holds a CO-N header part of kind byte `head`, a tunnel frame around the
/// inner frame `inner` of kind byte `kind`.
fn tunnel_frame(out: &mut Vec<u8>, head: u8, kind: u8, inner: &[u8]) -> FrameKind {
    out.insert(0, head);
    out.push(kind);
    out.extend_from_slice(inner);
    FrameKind::Profile(other::TUNNEL)
}
