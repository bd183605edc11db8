//! Tunnelled TCP (spec section 8.1): a context that keeps its outer header (an IPv4 one's
//! Identification coded in each CO frame), and what keeps it exact.

use alloc::vec;
use alloc::vec::Vec;

use super::{dns, pair, pure_ack, segment, segment_v6};
use crate::codec::{Compressor, Decompressor, DropReason};
use crate::plus::{PlusCompressor, PlusDecompressor};

/// `inner` in an IPv6 tunnel between 2001:db8::a and 2001:db8::b.
pub(super) fn tunnel_v6(inner: &[u8]) -> Vec<u8> {
    tunnel_v6_hops(inner, 64)
}

/// [`tunnel_v6`] with outer hop limit `hops`.
fn tunnel_v6_hops(inner: &[u8], hops: u8) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0, 0, 0, taroc_wire::protocol::IPV6, hops];
    p[4..6].copy_from_slice(&(inner.len() as u16).to_be_bytes());
    for last in [0x0a, 0x0b] {
        p.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        p.extend_from_slice(&[0; 11]);
        p.push(last);
    }
    p.extend_from_slice(inner);
    p
}

/// `inner` in an IPv4 tunnel between 192.0.2.1 and 192.0.2.2, IP-ID `id`, DF set.
pub(super) fn tunnel_v4(inner: &[u8], id: u16) -> Vec<u8> {
    let total = (20 + inner.len()) as u16;
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    let next = if inner[0] >> 4 == 4 {
        taroc_wire::protocol::IPV4
    } else {
        taroc_wire::protocol::IPV6
    };
    p.extend_from_slice(&[0x40, 0, 64, next, 0, 0]);
    p.extend_from_slice(&[192, 0, 2, 1, 192, 0, 2, 2]);
    let sum = taroc_wire::checksum::checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(inner);
    p
}

/// Compresses and decompresses `packets`, each delivered as it was; the kind byte and length of
/// each frame.
fn round_trip(
    c: &mut PlusCompressor,
    d: &mut PlusDecompressor,
    packets: impl IntoIterator<Item = Vec<u8>>,
) -> Vec<(u8, usize)> {
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut sizes = Vec::new();
    for (i, p) in packets.into_iter().enumerate() {
        let kind = c.compress(&p, &mut frame);
        let r = d.decompress(kind, &frame, &mut out);
        assert_eq!(r, Ok(()), "packet {i}: {kind:?} {frame:02x?}");
        assert_eq!(out, p, "packet {i}");
        sizes.push((kind.to_byte(), frame.len()));
    }
    sizes
}

#[test]
fn tunnelled_tcp_under_ipv6_goes_as_plain_co_frames() {
    let (mut c, mut d) = pair();
    let packets = (0..12).map(|i| tunnel_v6(&segment_v6(7000, 1 + 4 * i, 1, 4)));
    let sizes = round_trip(&mut c, &mut d, packets);
    // The outer context's three IR-N, the inner flow's three IRs in tunnel frames, then CO
    // frames as any flow's: the outer header costs nothing.
    assert!(
        sizes[..3]
            .iter()
            .all(|&(k, _)| k == crate::plus::other::IR_N),
        "{sizes:?}"
    );
    assert!(
        sizes[3..6]
            .iter()
            .all(|&(k, _)| k == crate::plus::other::TUNNEL),
        "{sizes:?}"
    );
    let (k, len) = *sizes.last().unwrap();
    assert!(k >= crate::plus::format::CO && len <= 4 + 4, "{sizes:?}");
    // A CO frame that fails its checksum, or a tunnel frame whose inner packet fails its TCP
    // checksum, delivers nothing.
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let p = tunnel_v6(&segment_v6(7000, 1 + 4 * 12, 1, 4));
    let kind = c.compress(&p, &mut frame);
    frame[1] ^= 0x01;
    assert!(d.decompress(kind, &frame, &mut out).is_err());
    assert!(out.is_empty());
}

#[test]
fn a_tunnelled_context_whose_outer_header_fails_its_crc_is_not_kept() {
    let (mut c, mut d) = pair();
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let packets: Vec<_> = (0..12)
        .map(|i| tunnel_v6(&segment_v6(7000, 1 + 4 * i, 1, 4)))
        .collect();
    round_trip(&mut c, &mut d, packets[..3].iter().cloned());
    // The first tunnel frame (an inner IR) with its outer CRC broken: refused, and its
    // context not kept, so that the CO frames after the remaining IRs are lost (if those
    // are lost too) rather than rebuilt under an outer header nobody verified.
    let kind = c.compress(&packets[3], &mut frame);
    assert_eq!(kind.to_byte(), crate::plus::other::TUNNEL);
    frame[1] ^= 0x01;
    assert!(d.decompress(kind, &frame, &mut out).is_err());
    for p in &packets[4..6] {
        c.compress(p, &mut frame);
    }
    let kind = c.compress(&packets[6], &mut frame);
    assert!(kind.to_byte() >= crate::plus::format::CO);
    assert_eq!(
        d.decompress(kind, &frame, &mut out),
        Err(DropReason::NoContext)
    );
}

#[test]
fn a_tunnel_frame_whose_outer_header_fails_its_crc_asks_for_the_outer_context() {
    // The outer context is consulted only by the IR frames of its inner flows, so a stale one
    // (its last frames lost) would fail every tunnel frame until its refresh: a failed CRC
    // asks for it, as a refused CO-N frame does.
    let (mut c, mut d) = pair();
    let (mut frame, mut out, mut feedback) = (Vec::new(), Vec::new(), Vec::new());
    let packets: Vec<_> = bulk_v4(6)
        .enumerate()
        .map(|(i, p)| tunnel_v4(&p, 4000 + 9 * i as u16))
        .collect();
    round_trip(&mut c, &mut d, packets[..3].iter().cloned());
    assert!(
        !d.take_feedback(&mut feedback),
        "no request on a clean start"
    );
    let kind = c.compress(&packets[3], &mut frame);
    assert_eq!(kind.to_byte(), crate::plus::other::TUNNEL);
    frame[3] ^= 0x01; // the CO-N part's CRC (kind byte, IP-ID octet, CRC)
    assert!(d.decompress(kind, &frame, &mut out).is_err());
    assert!(d.take_feedback(&mut feedback));
    assert_eq!(
        feedback[0],
        crate::plus::other::REQUEST_N,
        "{feedback:02x?}"
    );
}

#[test]
fn a_co_frame_of_one_outer_header_fails_under_another() {
    // Two links carry the same inner flow, under outer hop limits 64 and 63: each sets up CID
    // 0. A CO frame of the first, given to the second's decompressor, must fail its checksum
    // (the outer header is in the seal's identity hash), not deliver the packet under the
    // other outer header.
    let frames: Vec<_> = [64, 63]
        .map(|hops| {
            let (mut c, mut d) = pair();
            let packets = (0..12).map(|i| tunnel_v6_hops(&segment_v6(7000, 1 + 4 * i, 1, 4), hops));
            round_trip(&mut c, &mut d, packets);
            let mut frame = Vec::new();
            let p = tunnel_v6_hops(&segment_v6(7000, 1 + 4 * 12, 1, 4), hops);
            let kind = c.compress(&p, &mut frame);
            (kind, frame, d)
        })
        .into_iter()
        .collect();
    let (kind, frame, _) = &frames[0];
    let mut other = frames[1].2.clone();
    let mut out = Vec::new();
    assert_eq!(
        other.decompress(*kind, frame, &mut out),
        Err(DropReason::ChecksumMismatch)
    );
    // The second's own frame passes (given to a copy that refused nothing: a context that
    // refused a frame holds the next one, spec section 5.8).
    let (kind, frame, own) = &frames[1];
    assert_eq!(own.clone().decompress(*kind, frame, &mut out), Ok(()));
}

#[test]
fn a_flow_that_leaves_its_tunnel_or_changes_it_stays_exact() {
    let (mut c, mut d) = pair();
    let packets = (0..40).map(|i| {
        let inner = segment_v6(7000, 1 + 4 * i, 1, 4);
        match i / 10 {
            0 => tunnel_v6(&inner),
            1 => inner,
            2 => tunnel_v6_hops(&inner, 63),
            _ => tunnel_v6(&inner),
        }
    });
    round_trip(&mut c, &mut d, packets);
}

/// A bulk IPv4 flow's `n` segments of 100 octets from `seq` 1, IP-IDs from 500.
fn bulk_v4(n: u32) -> impl Iterator<Item = Vec<u8>> {
    (0..n).map(|i| segment(1 + 100 * i, 1, 500 + i as u16, 1000 + i, 100))
}

#[test]
fn tunnelled_tcp_under_ipv4_goes_as_plain_co_frames() {
    // Whatever the outer header's Identification does, the CO frames go plain: no octet above
    // the same flow's untunnelled frames while it is the predicted one, a few otherwise.
    let untunnelled = {
        let (mut c, mut d) = pair();
        round_trip(&mut c, &mut d, bulk_v4(40))
    };
    // A name, the outer IP-ID of an inner one, the most octets it may add to a CO frame.
    type Case = (&'static str, fn(u16) -> u16, usize);
    let outer_ids: [Case; 4] = [
        // A counter that steps with the inner one (one flow in the tunnel): no bits.
        ("joined", |inner| inner.wrapping_add(7000), 0),
        // An Identification that stays 0: no bits.
        ("zero", |_| 0, 0),
        // A counter of the tunnel shared with other flows: a spare bit and 9 bits (or the O
        // flag, in a long extension of one or two octets, and 9 bits).
        ("near", |inner| inner.wrapping_mul(3), 4),
        // Anything else: a spare bit (or the O flag) and 17 bits.
        (
            "whole",
            |inner| inner.wrapping_mul(40_503).rotate_left(5) | 1,
            5,
        ),
    ];
    for (name, outer_id, most) in outer_ids {
        let (mut c, mut d) = pair();
        let packets = bulk_v4(40).map(|p| {
            let inner_id = u16::from_be_bytes([p[4], p[5]]);
            tunnel_v4(&p, outer_id(inner_id))
        });
        let sizes = round_trip(&mut c, &mut d, packets);
        // Three IR-N for the outer context, then the inner flow's IR frames in tunnel frames.
        assert!(
            sizes[..3]
                .iter()
                .all(|&(k, _)| k == crate::plus::other::IR_N),
            "{name}: {sizes:?}"
        );
        assert_eq!(sizes[3].0, crate::plus::other::TUNNEL, "{name}: {sizes:?}");
        for (i, (&(k, len), &(_, plain))) in sizes.iter().zip(&untunnelled).enumerate().skip(20) {
            assert!(k >= crate::plus::format::CO, "{name} {i}: {sizes:?}");
            assert!(len <= plain + most, "{name} {i}: {len} against {plain}");
        }
    }
}

#[test]
fn an_outer_identification_decodes_against_any_ir_frame_the_decompressor_got() {
    // The outer counter jumps between the inner flow's IR frames, so each sets another offset;
    // a decompressor that got only the first of them still rebuilds every CO frame exactly.
    let (mut c, mut d) = pair();
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut irs = 0;
    for (i, p) in bulk_v4(30).enumerate() {
        let outer_id = 9000 + 40 * i as u16;
        let kind = c.compress(&tunnel_v4(&p, outer_id), &mut frame);
        if kind.to_byte() == crate::plus::other::TUNNEL {
            irs += 1;
            if irs > 1 {
                continue;
            }
        }
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "packet {i}");
        assert_eq!(out, tunnel_v4(&p, outer_id), "packet {i}");
    }
    assert!(irs >= 3, "{irs} tunnel frames");
}

#[test]
fn a_co_frame_whose_outer_identification_is_wrong_delivers_nothing() {
    // Under DF-less counting the outer Identification is 8 LSBs: every single-bit change of a
    // CO frame's body is refused or rebuilds the original packet, never another one.
    let (mut c, mut d) = pair();
    let packets: Vec<_> = bulk_v4(30)
        .map(|p| {
            let inner_id = u16::from_be_bytes([p[4], p[5]]);
            tunnel_v4(&p, inner_id.wrapping_mul(3))
        })
        .collect();
    round_trip(&mut c, &mut d, packets[..29].iter().cloned());
    let mut frame = Vec::new();
    let kind = c.compress(&packets[29], &mut frame);
    assert!(kind.to_byte() >= crate::plus::format::CO);
    for bit in 0..8 * frame.len().min(12) {
        let mut bad = frame.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let mut out = Vec::new();
        if d.clone().decompress(kind, &bad, &mut out).is_ok() {
            assert_eq!(out, packets[29], "bit {bit}");
        }
    }
}

#[test]
fn the_o_flag_goes_only_where_the_layout_has_no_room() {
    // An outer Identification that is 0 while the context is set up (the zero predictor: a
    // spare bit before the padding) and never after: most CO frames say so in a spare bit;
    // those whose bit field ends on an octet boundary need the extension's O flag (CID 0: the
    // long extension right after the kind byte, M set and the second octet's O bit). Under a
    // joined predictor (nonzero from the start) a marker bit is always there: never O.
    for zero_first in [true, false] {
        let (mut c, mut d) = pair();
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let (mut co, mut flagged) = (0, 0);
        // Pure ACKs with SACK blocks of lengths that vary, so that the bit fields take every
        // length.
        let packets = (0..300u32).map(|i| {
            let ack = 1000 + 1448 * i;
            let right = ack + 1448 * (2 + i % 5 + i % 7 * 9);
            pure_ack(
                ack,
                500 + i as u16,
                1000 + 10 * i,
                500,
                &[(ack + 2896, right)],
            )
        });
        for (i, p) in packets.enumerate() {
            let inner_id = u16::from_be_bytes([p[4], p[5]]);
            let outer_id = if zero_first && i < 8 {
                0
            } else {
                inner_id.wrapping_mul(40_503).rotate_left(5) | 1
            };
            let packet = tunnel_v4(&p, outer_id);
            let kind = c.compress(&packet, &mut frame);
            assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "packet {i}");
            assert_eq!(out, packet, "packet {i}");
            let k = kind.to_byte();
            if k >= crate::plus::format::CO {
                co += 1;
                let long = k & crate::plus::format::kind::X != 0 && frame[0] & 0x81 == 0x81;
                flagged += usize::from(long && frame[1] & 0x20 != 0);
            }
        }
        assert!(co > 250, "{co} CO frames");
        if zero_first {
            assert!(
                flagged > 0 && flagged * 2 < co,
                "{flagged} of {co} with the O flag"
            );
        } else {
            assert_eq!(flagged, 0, "{co} CO frames");
        }
    }
}

#[test]
fn tunnelled_udp_goes_as_a_co_n_frame_inside_a_tunnel_frame() {
    // A DNS-like flow in an IPv4 tunnel whose Identification counts, and in an IPv6 one: three
    // IR-N of the outer header's context, then tunnel frames around the inner packet's IR-N
    // (three) and CO-N frames; the inner header costs what it costs untunnelled.
    let plain = {
        let (mut c, mut d) = pair();
        round_trip(&mut c, &mut d, (0..12).map(|i| dns(300 + i)))
    };
    let (_, plain_co) = *plain.last().unwrap();
    for v6 in [false, true] {
        let (mut c, mut d) = pair();
        let packets = (0..12u16).map(|i| {
            let inner = dns(300 + i);
            if v6 {
                tunnel_v6(&inner)
            } else {
                tunnel_v4(&inner, 9000 + 7 * i)
            }
        });
        let sizes = round_trip(&mut c, &mut d, packets);
        let kinds: Vec<u8> = sizes.iter().map(|&(k, _)| k).collect();
        assert!(
            kinds[..3].iter().all(|&k| k == crate::plus::other::IR_N)
                && kinds[3..].iter().all(|&k| k == crate::plus::other::TUNNEL),
            "{sizes:?}"
        );
        // The outer header's CO-N part: its kind byte, the CID (1), the IP-ID (an octet, IPv4
        // only) and the CRC; then the inner kind byte.
        let outer = if v6 { 4 } else { 5 };
        let (_, last) = *sizes.last().unwrap();
        assert_eq!(last, 1 + outer + plain_co, "{sizes:?} against {plain:?}");
    }
}
