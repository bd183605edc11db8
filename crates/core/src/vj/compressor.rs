//! The RFC 1144 compressor: section 3.2.3 and `sl_compress_tcp` of Appendix A.2.

use alloc::vec;
use alloc::vec::Vec;

use taroc_wire::ipv4::Ipv4Packet;
use taroc_wire::protocol;
use taroc_wire::tcp::{flags, TcpSegment};

use super::format::{Changes, CompressedHeader, MAX_HEADER, NEW_A, NEW_S, SPECIAL_D, SPECIAL_I};
use super::header::{self, get16, get32, tcp, IP_ADDRESSES, IP_ID, IP_PROTOCOL, IP_TOTAL_LEN};
use super::VjConfig;
use crate::codec::{Compressor, FrameKind};

/// The VJ compressor for one direction of a link.
///
/// It keeps, per connection slot, the TCP/IP header of the last packet it sent on that
/// connection, and the slots in least-recently-used order: a packet of a connection it has no
/// slot for takes the least recently used one (RFC 1144 Appendix A.2 keeps them in a circular
/// list; the order, and so every connection number, is the same). The first connections get the
/// numbers 0, 1, 2, … as in `sl_compress_init` (Appendix A.4).
#[derive(Debug, Clone)]
pub struct VjCompressor {
    config: VjConfig,
    /// The saved header of each slot, by connection number; all zero until first used.
    slots: Vec<[u8; MAX_HEADER]>,
    /// Connection numbers, most recently used first.
    lru: Vec<u8>,
    /// The connection number of the last `COMPRESSED_TCP` or `UNCOMPRESSED_TCP` frame sent.
    last_sent: Option<u8>,
}

/// Where the headers of a packet the compressor may compress end.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// IP header length (the TCP header starts here).
    ip: usize,
    /// IP and TCP header length (the data starts here).
    headers: usize,
}

impl VjCompressor {
    /// A compressor with no connection state.
    pub fn new(config: VjConfig) -> VjCompressor {
        let slots = config.slot_count();
        VjCompressor {
            slots: vec![[0; MAX_HEADER]; slots],
            // The slot numbers fit in a u8: there are at most 256.
            lru: (0..slots).rev().map(|cid| cid as u8).collect(),
            last_sent: None,
            config,
        }
    }

    /// The slot of the connection `packet` belongs to, moved to the front of the LRU order, and
    /// whether it was found; if not, the least recently used slot is taken over.
    fn find_slot(&mut self, packet: &[u8], layout: Layout) -> (u8, bool) {
        let addresses = &packet[IP_ADDRESSES..IP_ADDRESSES + 8];
        let ports = &packet[layout.ip..layout.ip + 4];
        let slots = &self.slots;
        // Like Appendix A.2, this compares the ports at the saved header's own IP header length,
        // so a slot never used (all zero) matches only 0.0.0.0 port 0 to 0.0.0.0 port 0; its
        // header then differs in the version and the packet goes UNCOMPRESSED_TCP, as in the RFC.
        let found = self.lru.iter().position(|&cid| {
            let saved = &slots[usize::from(cid)];
            let at = header::ip_header_len(saved);
            saved[IP_ADDRESSES..IP_ADDRESSES + 8] == *addresses && saved[at..at + 4] == *ports
        });
        let position = found.unwrap_or(self.lru.len() - 1);
        self.lru[..=position].rotate_right(1);
        (self.lru[0], found.is_some())
    }
}

/// The layout of `packet` if it is a TCP/IP packet VJ may compress, or `None` if it goes as
/// `TYPE_IP`: not IPv4, not TCP, a fragment, SYN, FIN or RST set, ACK clear (RFC 1144 section
/// 3.2.3), not a whole packet (shorter than its headers, or not exactly its Total Length long:
/// difference 1 in the [module documentation](super)), or with an IP header checksum that does
/// not verify (difference 3).
fn compressible(packet: &[u8]) -> Option<Layout> {
    let ip = Ipv4Packet::new_checked(packet).ok()?;
    if ip.protocol() != protocol::TCP || ip.is_fragment() || !ip.is_exact() {
        return None;
    }
    // Difference 3: the decompressor computes the IP header checksum of a COMPRESSED_TCP packet
    // and checks that of an UNCOMPRESSED_TCP one.
    if !ip.header_checksum_ok() {
        return None;
    }
    let ip_len = ip.header_len();
    let tcp = TcpSegment::new_checked(&packet[ip_len..]).ok()?;
    let control = flags::SYN | flags::FIN | flags::RST | flags::ACK;
    if tcp.flags() & control != flags::ACK {
        return None;
    }
    Some(Layout {
        ip: ip_len,
        headers: ip_len + tcp.header_len(),
    })
}

/// The `COMPRESSED_TCP` header (without its connection number) of `packet` against the saved
/// header of its connection, or `None` if the packet must go `UNCOMPRESSED_TCP`.
fn compressed_header(
    saved: &[u8; MAX_HEADER],
    packet: &[u8],
    layout: Layout,
) -> Option<CompressedHeader> {
    let Layout { ip: th, headers } = layout;
    // The fields that must not change: version, IHL and TOS; DF (with the rest of the flags and
    // fragment offset word); TTL and protocol; the TCP data offset; IP and TCP options. Once
    // byte 0 matches, both headers have the same IP header length.
    if saved[..2] != packet[..2] || saved[6..10] != packet[6..10] {
        return None;
    }
    // The data offset, with (difference 2) the reserved bits beside it and CWR and ECE.
    if saved[th + tcp::OFFSET] != packet[th + tcp::OFFSET]
        || (saved[th + tcp::FLAGS] ^ packet[th + tcp::FLAGS]) & (flags::CWR | flags::ECE) != 0
    {
        return None;
    }
    let options = taroc_wire::ipv4::MIN_HEADER_LEN..th;
    let tcp_options = th + taroc_wire::tcp::MIN_HEADER_LEN..headers;
    if saved[options.clone()] != packet[options]
        || saved[tcp_options.clone()] != packet[tcp_options]
    {
        return None;
    }

    // The changing fields, in the order the decompressor reads them: urgent, window, ack, seq.
    let tcp_flags = packet[th + tcp::FLAGS];
    let urgent_pointer = get16(packet, th + tcp::URGENT);
    let urgent = if tcp_flags & flags::URG != 0 {
        Some(urgent_pointer)
    } else if urgent_pointer != get16(saved, th + tcp::URGENT) {
        return None;
    } else {
        None
    };
    let window = get16(packet, th + tcp::WINDOW).wrapping_sub(get16(saved, th + tcp::WINDOW));
    let delta_ack = get32(packet, th + tcp::ACK).wrapping_sub(get32(saved, th + tcp::ACK));
    let delta_seq = get32(packet, th + tcp::SEQ).wrapping_sub(get32(saved, th + tcp::SEQ));
    // Negative or above 16 bits (one test on the unsigned difference, RFC 1144 note 19).
    if delta_ack > 0xFFFF || delta_seq > 0xFFFF {
        return None;
    }
    let mut changes = Changes::Fields {
        urgent,
        window: (window != 0).then_some(window),
        ack: (delta_ack != 0).then_some(delta_ack as u16),
        seq: (delta_seq != 0).then_some(delta_seq as u16),
    };

    // The special cases. The previous packet's data length is computed with this packet's
    // header length, as in Appendix A.2 (the two are equal: the offsets were compared).
    let saved_len = get16(saved, IP_TOTAL_LEN);
    let previous_data = u32::from(saved_len).wrapping_sub(headers as u32);
    // Difference 4: the special cases cannot clear a URG flag the saved header has.
    let specials_allowed = saved[th + tcp::FLAGS] & flags::URG == 0;
    const SEQ_ACK: u8 = NEW_S | NEW_A;
    match changes.bits() {
        0 => {
            // Nothing changed: compress only a data packet that follows a packet without data
            // (an ack, then data on an interactive connection). Otherwise it is likely a
            // retransmission, duplicate ack or window probe: resynchronize.
            let data_after_ack =
                get16(packet, IP_TOTAL_LEN) != saved_len && usize::from(saved_len) == headers;
            if !data_after_ack {
                return None;
            }
        }
        SPECIAL_I | SPECIAL_D => return None,
        // S and A both by the previous packet's data length: echoed interactive traffic.
        SEQ_ACK if delta_seq == delta_ack && delta_seq == previous_data && specials_allowed => {
            changes = Changes::EchoedInteractive;
        }
        // S alone by the previous packet's data length: unidirectional data.
        NEW_S if delta_seq == previous_data && specials_allowed => {
            changes = Changes::UnidirectionalData;
        }
        _ => {}
    }

    // The IP ID change, sent unless it is one. Like Appendix A.2, the difference is taken
    // before truncation to 16 bits, so a wrap from 65535 to 0 is sent (as 1).
    let id_change = i32::from(get16(packet, IP_ID)) - i32::from(get16(saved, IP_ID));
    Some(CompressedHeader {
        connection: None,
        push: tcp_flags & flags::PSH != 0,
        checksum: get16(packet, th + tcp::CHECKSUM),
        changes,
        ip_id: (id_change != 1).then_some(id_change as u16),
    })
}

impl Compressor for VjCompressor {
    fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        out.clear();
        let Some(layout) = compressible(packet) else {
            out.extend_from_slice(packet);
            return FrameKind::Ip;
        };
        let (cid, found) = self.find_slot(packet, layout);
        let slot = &mut self.slots[usize::from(cid)];
        let compressed = if found {
            compressed_header(slot, packet, layout)
        } else {
            None
        };
        // Either way the slot now holds this packet's header, and this is the last connection
        // sent.
        slot[..layout.headers].copy_from_slice(&packet[..layout.headers]);
        let repeated = self.last_sent == Some(cid);
        self.last_sent = Some(cid);
        if let Some(mut header) = compressed {
            if !(self.config.compress_cid && repeated) {
                header.connection = Some(cid);
            }
            // compressed_header never leaves S W U or S A W U in the general case, so this
            // encodes; if it ever did not, the packet would go uncompressed.
            if header.encode(out) {
                out.extend_from_slice(&packet[layout.headers..]);
                return FrameKind::CompressedTcp;
            }
        }
        out.extend_from_slice(packet);
        out[IP_PROTOCOL] = cid;
        FrameKind::UncompressedTcp
    }
}
