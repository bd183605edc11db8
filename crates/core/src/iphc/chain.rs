//! The compressible chain of subheaders (RFC 2507 section 7) and the classification of its
//! fields.
//!
//! [`parse`] walks a packet from its first IP header and returns its [`Layout`]: which
//! subheaders the chain holds, and which of their octets are not NOCHANGE (the *dynamic* spans:
//! RANDOM, INFERRED and the TCP fields handled by [`super::tcp`]). The walk never reads a length
//! field, so it gives the same layout for a packet and for its FULL_HEADER, whose length fields
//! carry the CID. The chain runs
//!
//! - up to but not including the first header that is not an IPv4 header without options that is
//!   not a fragment, an IPv6 base or extension header, a TCP header or a UDP header, or
//! - up to and including the first TCP header, UDP header, IPv6 Fragment header or ESP header
//!   (of which only the SPI is part of the chain: the rest is encrypted),
//!
//! whichever is shorter, and it holds only whole subheaders within MAX_HEADER octets
//! (section 5.2). Field classes, per section 7:
//!
//! | subheader | RANDOM | INFERRED | other |
//! |---|---|---|---|
//! | IPv4 | Identification (unless TCP follows at once: DELTA) | Total Length, Header Checksum | ECN bits closest to TCP: R-octet |
//! | IPv6 | — | Payload Length | ECN bits closest to TCP: R-octet |
//! | Hop-by-Hop, Destination Options | option data (not of Pad1/PadN) | — | Jumbo Payload: not compressed |
//! | Routing | — | — | |
//! | Fragment | offset, M, Identification (6 octets) | — | ends the chain |
//! | AH | authentication data (after the SPI) | — | |
//! | ESP | — | — | SPI only, ends the chain |
//! | UDP | checksum, unless zero in the context (then NOCHANGE) | Length | |
//! | TCP | see [`super::tcp`] | — | ports NOCHANGE |

use alloc::vec::Vec;

use taroc_wire::checksum::Sum;
use taroc_wire::protocol;

mod inferred;

pub use inferred::{
    compressible, fill_ipv4_checksums, fill_lengths, fill_lengths_for, transport_verifies,
    verifies, well_formed,
};

/// A range of octets of a header, `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First octet.
    pub start: usize,
    /// One past the last octet.
    pub end: usize,
}

impl Span {
    /// The number of octets.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the span is empty.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// The kinds of subheader a chain can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum SubKind {
    /// IPv4 header without options, not a fragment.
    Ipv4 = 1,
    /// IPv6 base header.
    Ipv6,
    /// IPv6 Hop-by-Hop Options header.
    HopByHop,
    /// IPv6 Routing header.
    Routing,
    /// IPv6 Fragment header (ends the chain).
    Fragment,
    /// IPv6 Destination Options header.
    DestOpts,
    /// Authentication Header.
    Ah,
    /// The SPI of an Encapsulating Security Payload header (ends the chain).
    Esp,
    /// UDP header (ends the chain).
    Udp,
    /// TCP header, options included (ends the chain).
    Tcp,
}

/// One subheader of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sub {
    /// Its kind.
    pub kind: SubKind,
    /// Its offset in the packet.
    pub start: usize,
    /// Its length in octets.
    pub len: usize,
}

/// A length field of the chain (RFC 2507 section 5.3 calls them the first, second, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthField {
    /// Offset of the field in the packet.
    pub at: usize,
    /// The value that makes the field consistent with a packet of this many octets is
    /// `total - base`.
    pub base: usize,
}

impl LengthField {
    /// The field's value in a packet of `total` octets, if it fits in 16 bits.
    pub fn value(&self, total: usize) -> Option<u16> {
        total
            .checked_sub(self.base)
            .and_then(|v| u16::try_from(v).ok())
    }
}

/// The transport header that ends a chain, and the IP header whose addresses make its
/// pseudo-header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transport {
    /// Offset of the TCP or UDP header.
    pub start: usize,
    /// Its length, options included.
    pub header_len: usize,
    /// Offset of the closest IP header before it.
    pub ip: usize,
    /// That header's version, 4 or 6.
    pub ip_version: u8,
}

impl Transport {
    /// The one's-complement sum of the pseudo-header (with `protocol` and the segment length of
    /// a packet of `total` octets).
    pub fn pseudo_header(&self, packet: &[u8], protocol: u8, total: usize) -> Sum {
        let (src, dst) = if self.ip_version == 4 {
            (
                &packet[self.ip + 12..self.ip + 16],
                &packet[self.ip + 16..self.ip + 20],
            )
        } else {
            (
                &packet[self.ip + 8..self.ip + 24],
                &packet[self.ip + 24..self.ip + 40],
            )
        };
        Sum::new()
            .add_bytes(src)
            .add_bytes(dst)
            .add_u32((total - self.start) as u32)
            .add_u16(u16::from(protocol))
    }

    /// Whether the segment of `packet` (to its end) verifies under its pseudo-header.
    pub fn verifies(&self, packet: &[u8], protocol: u8) -> bool {
        self.pseudo_header(packet, protocol, packet.len())
            .add_bytes(&packet[self.start..])
            .verifies()
    }
}

/// Where the fields of a chain are. Two packets of one stream have equal layouts.
///
/// Its `clone_from` reuses the target's buffers: copying a layout into one that held a chain as
/// long does not allocate.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Length of the chain in octets; the rest of the packet is payload.
    pub len: usize,
    /// The subheaders, in order.
    pub subs: Vec<Sub>,
    /// The next-header value past the chain when the chain ends before a header it does not
    /// hold (the upper protocol of a non-TCP stream).
    pub upper: Option<u8>,
    /// Octets that are not NOCHANGE, sorted.
    pub dynamic: Vec<Span>,
    /// RANDOM fields sent in compressed headers, in header order (not the DELTA IPv4
    /// Identification of [`Layout::ipv4_id`]).
    pub random: Vec<Span>,
    /// The length fields, in header order.
    pub lengths: Vec<LengthField>,
    /// Offsets of the IPv4 headers (their checksums are inferred).
    pub ipv4: Vec<usize>,
    /// The TCP header ending the chain.
    pub tcp: Option<Transport>,
    /// The UDP header ending the chain.
    pub udp: Option<Transport>,
    /// Offset of the IPv4 Identification that is DELTA (an IPv4 header immediately before TCP).
    pub ipv4_id: Option<usize>,
    /// The octet holding the ECN field of the IP header closest to TCP, and the field's mask.
    pub ecn: Option<(usize, u8)>,
}

impl Clone for Layout {
    fn clone(&self) -> Layout {
        let mut layout = Layout::default();
        layout.clone_from(self);
        layout
    }

    fn clone_from(&mut self, source: &Layout) {
        // Destructured, so that a new field cannot be forgotten here.
        let Layout {
            len,
            subs,
            upper,
            dynamic,
            random,
            lengths,
            ipv4,
            tcp,
            udp,
            ipv4_id,
            ecn,
        } = source;
        self.len = *len;
        self.subs.clone_from(subs);
        self.upper = *upper;
        self.dynamic.clone_from(dynamic);
        self.random.clone_from(random);
        self.lengths.clone_from(lengths);
        self.ipv4.clone_from(ipv4);
        self.tcp = *tcp;
        self.udp = *udp;
        self.ipv4_id = *ipv4_id;
        self.ecn = *ecn;
    }
}

impl Layout {
    /// The number of octets of RANDOM fields.
    pub fn random_len(&self) -> usize {
        self.random.iter().map(Span::len).sum()
    }

    fn clear(&mut self) {
        self.len = 0;
        self.subs.clear();
        self.upper = None;
        self.dynamic.clear();
        self.random.clear();
        self.lengths.clear();
        self.ipv4.clear();
        self.tcp = None;
        self.udp = None;
        self.ipv4_id = None;
        self.ecn = None;
    }
}

/// Option type of the Jumbo Payload option (its length is INFERRED from a frame length we do not
/// compress).
const JUMBO: u8 = 0xC2;

/// Walks the TLV options of a Hop-by-Hop or Destination Options header `h`; calls `data` with
/// the span (relative to `h`) of every option's data that is RANDOM. Returns false if the
/// options are malformed or hold a Jumbo Payload option.
fn walk_options(h: &[u8], mut data: impl FnMut(Span)) -> bool {
    let mut i = 2;
    while i < h.len() {
        let kind = h[i];
        if kind == 0 {
            i += 1;
            continue;
        }
        let Some(&len) = h.get(i + 1) else {
            return false;
        };
        let end = i + 2 + usize::from(len);
        if end > h.len() || kind == JUMBO {
            return false;
        }
        if kind != 1 && len > 0 {
            data(Span { start: i + 2, end });
        }
        i = end;
    }
    true
}

/// Parses the compressible chain of `packet` into `layout`, holding at most `max_header` octets.
/// Returns false when not even the first header can be compressed.
pub fn parse(packet: &[u8], max_header: usize, layout: &mut Layout) -> bool {
    layout.clear();
    let mut next = match packet.first().map(|b| b >> 4) {
        Some(4) => protocol::IPV4,
        Some(6) => protocol::IPV6,
        _ => return false,
    };
    let mut at = 0;
    loop {
        let rest = &packet[at..];
        let (kind, len, following) = match next {
            protocol::IPV4 => {
                if rest.len() < 20
                    || rest[0] != 0x45
                    || u16::from_be_bytes([rest[6], rest[7]]) & 0x3FFF != 0
                {
                    break;
                }
                (SubKind::Ipv4, 20, Some(rest[9]))
            }
            protocol::IPV6 => {
                if rest.len() < 40 || rest[0] >> 4 != 6 {
                    break;
                }
                (SubKind::Ipv6, 40, Some(rest[6]))
            }
            protocol::HOP_BY_HOP | protocol::DEST_OPTS | protocol::ROUTING => {
                let Some(&l) = rest.get(1) else { break };
                let len = (usize::from(l) + 1) * 8;
                if rest.len() < len {
                    break;
                }
                let kind = match next {
                    protocol::HOP_BY_HOP => SubKind::HopByHop,
                    protocol::DEST_OPTS => SubKind::DestOpts,
                    _ => SubKind::Routing,
                };
                if kind != SubKind::Routing && !walk_options(&rest[..len], |_| {}) {
                    break;
                }
                (kind, len, Some(rest[0]))
            }
            protocol::FRAGMENT => (SubKind::Fragment, 8, None),
            protocol::AH => {
                let Some(&l) = rest.get(1) else { break };
                let len = (usize::from(l) + 2) * 4;
                (SubKind::Ah, len, rest.first().copied())
            }
            protocol::ESP => (SubKind::Esp, 4, None),
            protocol::UDP => (SubKind::Udp, 8, None),
            protocol::TCP => {
                if rest.len() < 20 || rest[12] >> 4 < 5 {
                    break;
                }
                (SubKind::Tcp, usize::from(rest[12] >> 4) * 4, None)
            }
            _ => break,
        };
        if at + len > max_header || len > rest.len() {
            break;
        }
        layout.subs.push(Sub {
            kind,
            start: at,
            len,
        });
        at += len;
        match following {
            Some(n) => next = n,
            None => break,
        }
    }
    let Some(last) = layout.subs.last().copied() else {
        return false;
    };
    layout.len = last.start + last.len;
    if !matches!(
        last.kind,
        SubKind::Fragment | SubKind::Esp | SubKind::Udp | SubKind::Tcp
    ) {
        layout.upper = Some(next);
    }
    classify(packet, layout);
    true
}

/// Fills the field lists of a layout whose subheaders are known.
fn classify(packet: &[u8], layout: &mut Layout) {
    let Layout {
        subs,
        dynamic,
        random,
        lengths,
        ipv4,
        tcp,
        udp,
        ipv4_id,
        ecn,
        ..
    } = layout;
    let count = subs.len();
    // The IP header closest to the transport header.
    let closest_ip = subs
        .iter()
        .rev()
        .find(|s| matches!(s.kind, SubKind::Ipv4 | SubKind::Ipv6))
        .copied();
    let ends_in_tcp = subs.last().is_some_and(|s| s.kind == SubKind::Tcp);
    let mut both = |span: Span, dynamic: &mut Vec<Span>| {
        dynamic.push(span);
        random.push(span);
    };
    for (i, s) in subs.iter().enumerate() {
        let at = s.start;
        let span = |a: usize, b: usize| Span {
            start: at + a,
            end: at + b,
        };
        match s.kind {
            SubKind::Ipv4 => {
                if ends_in_tcp && closest_ip == Some(*s) {
                    dynamic.push(span(1, 2));
                    *ecn = Some((at + 1, 0x03));
                }
                dynamic.push(span(2, 4));
                lengths.push(LengthField {
                    at: at + 2,
                    base: at,
                });
                if i + 2 == count && ends_in_tcp {
                    dynamic.push(span(4, 6));
                    *ipv4_id = Some(at + 4);
                } else {
                    both(span(4, 6), dynamic);
                }
                dynamic.push(span(10, 12));
                ipv4.push(at);
            }
            SubKind::Ipv6 => {
                if ends_in_tcp && closest_ip == Some(*s) {
                    dynamic.push(span(1, 2));
                    *ecn = Some((at + 1, 0x30));
                }
                dynamic.push(span(4, 6));
                lengths.push(LengthField {
                    at: at + 4,
                    base: at + 40,
                });
            }
            SubKind::HopByHop | SubKind::DestOpts => {
                let h = &packet[at..at + s.len];
                walk_options(h, |d| both(span(d.start, d.end), dynamic));
            }
            SubKind::Routing | SubKind::Esp => {}
            SubKind::Fragment => both(span(2, 8), dynamic),
            SubKind::Ah => {
                // Section 7.9: everything after the SPI is Authentication Data (RFC 2402's
                // Sequence Number field included).
                if s.len > 8 {
                    both(span(8, s.len), dynamic);
                }
            }
            SubKind::Udp => {
                dynamic.push(span(4, 6));
                lengths.push(LengthField {
                    at: at + 4,
                    base: at,
                });
                if packet[at + 6..at + 8] != [0, 0] {
                    both(span(6, 8), dynamic);
                }
                *udp = closest_ip.map(|ip| Transport {
                    start: at,
                    header_len: 8,
                    ip: ip.start,
                    ip_version: if ip.kind == SubKind::Ipv4 { 4 } else { 6 },
                });
            }
            SubKind::Tcp => {
                dynamic.push(span(4, s.len));
                *tcp = closest_ip.map(|ip| Transport {
                    start: at,
                    header_len: s.len,
                    ip: ip.start,
                    ip_version: if ip.kind == SubKind::Ipv4 { 4 } else { 6 },
                });
            }
        }
    }
}

/// Whether the NOCHANGE octets of the chains `a` and `b` (both at least `layout.len` long, both
/// with this layout) are equal, the non-ECN bits of the ECN octet included.
pub fn nochange_eq(layout: &Layout, a: &[u8], b: &[u8]) -> bool {
    nochange_eq_upto(layout, a, b, layout.len)
}

/// [`nochange_eq`] for the octets before `end` only.
pub fn nochange_eq_upto(layout: &Layout, a: &[u8], b: &[u8], end: usize) -> bool {
    let mut at = 0;
    for span in &layout.dynamic {
        if span.start >= end {
            break;
        }
        if a[at..span.start] != b[at..span.start] {
            return false;
        }
        at = span.end;
    }
    if at < end && a[at..end] != b[at..end] {
        return false;
    }
    match layout.ecn {
        Some((i, mask)) if i < end => a[i] & !mask == b[i] & !mask,
        _ => true,
    }
}

/// Whether the TCP chains `a` (with layout `la`) and `b` (with `lb`) have the same subheaders
/// before the TCP header and the same NOCHANGE octets up to the TCP ports, ECN bits aside: one
/// stream, one IP-level context (the TCP header itself may differ, options length included).
pub fn same_ip_context(la: &Layout, a: &[u8], lb: &Layout, b: &[u8]) -> bool {
    let (Some(ta), Some(tb)) = (la.tcp, lb.tcp) else {
        return false;
    };
    ta.start == tb.start
        && la.subs[..la.subs.len() - 1] == lb.subs[..lb.subs.len() - 1]
        && nochange_eq_upto(lb, a, b, tb.start + 4)
}

/// Whether the ECN fields of the IP header closest to TCP are equal in `a` and `b`.
pub fn ecn_eq(layout: &Layout, a: &[u8], b: &[u8]) -> bool {
    match layout.ecn {
        Some((i, mask)) => a[i] & mask == b[i] & mask,
        None => true,
    }
}

/// Appends the key identifying the packet stream of `packet` (section 4.1's DEF fields): the
/// kinds of the subheaders, every IP address, the ports, the SPIs and the upper protocol.
pub fn stream_key(packet: &[u8], layout: &Layout, key: &mut Vec<u8>) {
    key.clear();
    for s in &layout.subs {
        key.push(s.kind as u8);
        let at = s.start;
        match s.kind {
            SubKind::Ipv4 => key.extend_from_slice(&packet[at + 12..at + 20]),
            SubKind::Ipv6 => key.extend_from_slice(&packet[at + 8..at + 40]),
            SubKind::Ah => key.extend_from_slice(&packet[at + 4..at + 8]),
            SubKind::Esp | SubKind::Udp | SubKind::Tcp => {
                key.extend_from_slice(&packet[at..at + 4])
            }
            SubKind::HopByHop | SubKind::Routing | SubKind::Fragment | SubKind::DestOpts => {}
        }
    }
    if let Some(upper) = layout.upper {
        key.extend_from_slice(&[0, upper]);
    }
}
