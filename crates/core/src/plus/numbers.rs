//! Mirror numbers (spec section 3.4): a mirrored compact IR may code its sequence and
//! acknowledgment numbers and its timestamps against a packet of its mirror flow that its end
//! received, which the far end sent.
//!
//! A TCP connection's two directions track each other: a segment's acknowledgment number is
//! the next sequence number of the last segment its sender received the other way, its
//! sequence number at or just above the acknowledgment number that segment carried, its TS echo
//! that segment's TS value and its TS value a little above that segment's TS echo. So a new
//! flow's first IR frames, whose numbers otherwise go whole (16 octets with timestamps), code
//! them as small differences from such a *reference* packet. The reference is one that this
//! end's decompressor delivered; the far end's compressor sent it. Each codec tells its sibling
//! of the packets of its young flows ([`Numbers`] in a sibling note), and the frame names its
//! reference by the packet's TCP checksum field.

use alloc::vec::Vec;

use taroc_wire::ip::IpInfo;
use taroc_wire::tcp::{flags, TcpOption, TcpSegment};

use crate::tcp::packet::{FlowKey, TcpIpPacket};

/// What a mirrored IR's numbers are coded against: a TCP packet's checksum field (which names
/// it), its next sequence number, its acknowledgment number, its window and its timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Numbers {
    /// The TCP checksum field.
    pub checksum: u16,
    /// The sequence number after the segment: sequence number plus payload length, plus one
    /// for SYN and one for FIN.
    pub next_seq: u32,
    /// The acknowledgment number.
    pub ack: u32,
    /// The window field.
    pub window: u16,
    /// TS value and TS echo, if the packet has the Timestamps option.
    pub ts: Option<(u32, u32)>,
}

impl Numbers {
    /// The numbers of a parsed packet.
    pub fn of(p: &TcpIpPacket<'_>) -> Numbers {
        Numbers {
            checksum: p.checksum,
            next_seq: next_seq(p.fields.seq, p.payload_len(), p.flags),
            ack: p.fields.ack,
            window: p.fields.win,
            ts: p.ts.then_some((p.fields.ts_val, p.fields.ts_ecr)),
        }
    }

    /// The flow and numbers of a TCP/IP packet (not a fragment); `None` for any other packet.
    /// Nothing is verified: the packet is one a decompressor delivered.
    pub fn of_packet(packet: &[u8]) -> Option<(FlowKey, Numbers)> {
        Numbers::of_plain_packet(packet).or_else(|| Numbers::of_any_packet(packet))
    }

    /// [`Numbers::of_packet`] for the usual packet, read at fixed places: IPv4 without options
    /// and not a fragment, or IPv6 without extension headers, TCP within the IP length.
    fn of_plain_packet(packet: &[u8]) -> Option<(FlowKey, Numbers)> {
        let be16 = |at: usize| Some(u16::from_be_bytes([*packet.get(at)?, *packet.get(at + 1)?]));
        let (src, dst, tcp, end) = match *packet.first()? {
            0x45 if packet.get(9) == Some(&taroc_wire::protocol::TCP) && be16(6)? & 0x3FFF == 0 => {
                let a = |at: usize| -> Option<core::net::IpAddr> {
                    let b: [u8; 4] = packet.get(at..at + 4)?.try_into().ok()?;
                    Some(b.into())
                };
                (a(12)?, a(16)?, 20, usize::from(be16(2)?))
            }
            b if b >> 4 == 6 && packet.get(6) == Some(&taroc_wire::protocol::TCP) => {
                let a = |at: usize| -> Option<core::net::IpAddr> {
                    let b: [u8; 16] = packet.get(at..at + 16)?.try_into().ok()?;
                    Some(b.into())
                };
                (a(8)?, a(24)?, 40, 40 + usize::from(be16(4)?))
            }
            _ => return None,
        };
        let be32 = |at: usize| -> Option<u32> {
            Some(u32::from_be_bytes(packet.get(at..at + 4)?.try_into().ok()?))
        };
        let header = usize::from(packet.get(tcp + 12)? >> 4) * 4;
        if header < 20 || end > packet.len() || tcp + header > end {
            return None;
        }
        let options = &packet[tcp + 20..tcp + header];
        let ts = match options {
            // Linux's layout: NOP, NOP, Timestamps first.
            [1, 1, 8, 10, ..] => Some((be32(tcp + 24)?, be32(tcp + 28)?)),
            _ => taroc_wire::tcp::OptionIter::new(options).find_map(|o| match o {
                Ok(TcpOption::Timestamps { val, ecr }) => Some((val, ecr)),
                _ => None,
            }),
        };
        let key = FlowKey {
            src,
            dst,
            src_port: be16(tcp)?,
            dst_port: be16(tcp + 2)?,
        };
        let numbers = Numbers {
            checksum: be16(tcp + 16)?,
            next_seq: next_seq(be32(tcp + 4)?, end - tcp - header, packet[tcp + 13]),
            ack: be32(tcp + 8)?,
            window: be16(tcp + 14)?,
            ts,
        };
        Some((key, numbers))
    }

    /// [`Numbers::of_packet`] for any packet the IP parser reads (options, extension headers).
    fn of_any_packet(packet: &[u8]) -> Option<(FlowKey, Numbers)> {
        let ip = IpInfo::parse(packet).ok()?;
        if ip.protocol != taroc_wire::protocol::TCP || ip.fragment {
            return None;
        }
        let tcp =
            TcpSegment::new_checked(packet.get(ip.transport_offset..ip.declared_len)?).ok()?;
        let ts = tcp.option_iter().find_map(|o| match o {
            Ok(TcpOption::Timestamps { val, ecr }) => Some((val, ecr)),
            _ => None,
        });
        let key = FlowKey {
            src: ip.src,
            dst: ip.dst,
            src_port: tcp.src_port(),
            dst_port: tcp.dst_port(),
        };
        let numbers = Numbers {
            checksum: tcp.checksum(),
            next_seq: next_seq(tcp.seq(), tcp.payload().len(), tcp.flags()),
            ack: tcp.ack(),
            window: tcp.window(),
            ts,
        };
        Some((key, numbers))
    }

    /// Appends the numbers as a sibling note carries them: checksum (2), next sequence number
    /// (4), acknowledgment number (4), window (2), then TS value and TS echo (4 each) if there
    /// are timestamps.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.checksum.to_be_bytes());
        out.extend_from_slice(&self.next_seq.to_be_bytes());
        out.extend_from_slice(&self.ack.to_be_bytes());
        out.extend_from_slice(&self.window.to_be_bytes());
        if let Some((val, ecr)) = self.ts {
            out.extend_from_slice(&val.to_be_bytes());
            out.extend_from_slice(&ecr.to_be_bytes());
        }
    }

    /// The numbers [`Numbers::put`] wrote, which must be all of `body`.
    pub fn parse(body: &[u8]) -> Option<Numbers> {
        let u32_at = |at: usize| Some(u32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?));
        let ts = match body.len() {
            12 => None,
            20 => Some((u32_at(12)?, u32_at(16)?)),
            _ => return None,
        };
        Some(Numbers {
            checksum: u16::from_be_bytes([body[0], body[1]]),
            next_seq: u32_at(2)?,
            ack: u32_at(6)?,
            window: u16::from_be_bytes([body[10], body[11]]),
            ts,
        })
    }
}

/// The sequence number after a segment of `payload` octets at `seq` with TCP flags `tcp_flags`.
pub fn next_seq(seq: u32, payload: usize, tcp_flags: u8) -> u32 {
    let control = u32::from(tcp_flags & flags::SYN != 0) + u32::from(tcp_flags & flags::FIN != 0);
    seq.wrapping_add(payload as u32).wrapping_add(control)
}

/// The differences a mirrored IR with numbers sends, in order: its sequence number from the
/// reference's acknowledgment number, its acknowledgment number from the reference's next
/// sequence number, and, with timestamps, its TS value from the reference's TS echo and its TS
/// echo from the reference's TS value (each wrapping, as a signed 32-bit number).
pub fn differences(
    reference: &Numbers,
    seq: u32,
    ack: u32,
    ts: Option<(u32, u32)>,
) -> [Option<u32>; 4] {
    let (seq, ack) = (
        seq.wrapping_sub(reference.ack),
        ack.wrapping_sub(reference.next_seq),
    );
    match (ts, reference.ts) {
        (Some((val, ecr)), Some((r_val, r_ecr))) => [
            Some(seq),
            Some(ack),
            Some(val.wrapping_sub(r_ecr)),
            Some(ecr.wrapping_sub(r_val)),
        ],
        _ => [Some(seq), Some(ack), None, None],
    }
}

/// Appends `difference` as a signed variable-length number: zigzag coded (0, -1, 1, -2, ...
/// become 0, 1, 2, 3, ...), then seven bits per octet, least significant first, the top bit of
/// every octet but the last set. At most 5 octets.
pub fn put_signed(difference: u32, out: &mut Vec<u8>) {
    let signed = difference as i32;
    let mut z = ((signed << 1) ^ (signed >> 31)) as u32;
    while z >= 0x80 {
        out.push(z as u8 | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// The octets [`put_signed`] takes for `difference`.
pub fn signed_len(difference: u32) -> usize {
    let signed = difference as i32;
    let z = ((signed << 1) ^ (signed >> 31)) as u32;
    (32 - z.leading_zeros() as usize).div_ceil(7).max(1)
}

/// Reads a number [`put_signed`] wrote at the start of `bytes`: the difference and the octets
/// it took. `None` if it is truncated, longer than 5 octets or above 32 bits.
pub fn get_signed(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut z = 0u64;
    for (i, &b) in bytes.iter().take(5).enumerate() {
        z |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            let z = u32::try_from(z).ok()?;
            let signed = ((z >> 1) as i32) ^ -((z & 1) as i32);
            return Some((signed as u32, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_numbers_round_trip_in_as_few_octets_as_they_need() {
        for (d, len) in [
            (0u32, 1),
            (1, 1),
            (u32::MAX, 1),
            (63, 1),
            (64, 2),
            ((-64i32) as u32, 1),
            ((-65i32) as u32, 2),
            (1448, 2),
            (100_000, 3),
            (i32::MAX as u32, 5),
            (i32::MIN as u32, 5),
        ] {
            let mut out = Vec::new();
            put_signed(d, &mut out);
            assert_eq!((out.len(), signed_len(d)), (len, len), "{d}");
            out.push(0xAA);
            assert_eq!(get_signed(&out), Some((d, len)), "{d}");
        }
        assert_eq!(get_signed(&[0x80, 0x80]), None, "truncated");
        assert_eq!(get_signed(&[0x80; 6]), None, "too long");
        assert_eq!(
            get_signed(&[0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
            None,
            "above 32 bits"
        );
    }

    #[test]
    fn notes_round_trip_with_and_without_timestamps() {
        for ts in [None, Some((7, 9))] {
            let n = Numbers {
                checksum: 0xBEEF,
                next_seq: 1001,
                ack: 2002,
                window: 3003,
                ts,
            };
            let mut out = Vec::new();
            n.put(&mut out);
            assert_eq!(Numbers::parse(&out), Some(n));
            assert_eq!(Numbers::parse(&out[1..]), None);
        }
    }

    #[test]
    fn the_plain_and_the_general_reading_agree() {
        use crate::plus::tests::{segment, segment_v6};
        let mut packets = vec![segment(1000, 77, 5, 900, 100), segment_v6(7001, 5, 9, 0)];
        // Timestamps after other options: the option walk.
        let mut other_layout = segment(1, 2, 3, 4, 0);
        other_layout[40..44].copy_from_slice(&[8, 10, 0, 0]);
        other_layout[48..52].copy_from_slice(&[0, 0, 1, 1]);
        packets.push(other_layout);
        for p in &packets {
            let plain = Numbers::of_plain_packet(p).expect("plain");
            assert_eq!(Some(plain), Numbers::of_any_packet(p));
            let parsed = TcpIpPacket::parse(p).map(|t| (t.key, Numbers::of(&t)));
            if let Some(parsed) = parsed {
                assert_eq!(plain, parsed);
            }
        }
        // Truncated or not TCP: none.
        assert_eq!(Numbers::of_plain_packet(&packets[0][..30]), None);
        assert_eq!(Numbers::of_packet(&[0x45, 0, 0]), None);
    }

    #[test]
    fn a_syn_and_a_fin_take_a_sequence_number_each() {
        assert_eq!(next_seq(u32::MAX, 0, flags::SYN), 0);
        assert_eq!(next_seq(10, 5, flags::FIN | flags::ACK), 16);
        assert_eq!(next_seq(10, 5, flags::ACK), 15);
    }
}
