//! The specification's test vectors (`docs/taroc-plus-format.md`, section 9): the packets
//! they are made of, and the check that each packet compresses to the frame the document gives
//! and each frame decompresses to its packet.

use alloc::vec;
use alloc::vec::Vec;

use super::tunnel::{tunnel_v4, tunnel_v6};
use super::{config, fill_checksums, fix_tcp_checksum, hex, linux_syn, segment, segment_v6, unhex};
use crate::codec::{Compressor, Decompressor, FrameKind};
use crate::plus::{PlusCompressor, PlusDecompressor};

/// The packets of the specification's test vectors, in order, through one compressor.
fn vector_packets() -> Vec<Vec<u8>> {
    let mut packets = Vec::new();
    // Twelve segments: the flow's IRs, then eight CO frames, so that it is old enough to be a
    // base.
    for i in 0..12u32 {
        packets.push(segment(1000 + 256 * i, 77, 500 + i as u16, 10_000 + i, 256));
    }
    // A new flow of the same hosts (another source port): IR-R; then a retransmission.
    let mut other = segment(90_000, 5_000, 40, 10_012, 8);
    other[20..22].copy_from_slice(&5002u16.to_be_bytes());
    fix_tcp_checksum(&mut other);
    packets.push(other);
    packets.push(segment(1000 + 256, 77, 512, 10_013, 256));
    // Eleven segments: three IRs, then eight CO frames (a base for the tunnelled flow below).
    for i in 0..11 {
        packets.push(segment_v6(7000, 1 + 4 * i, 1, 4));
    }
    // A DNS-like UDP flow: three IR-N, then CO-N with the IP-ID's 8 LSBs and the UDP checksum.
    for id in [300u16, 301, 302, 303] {
        let mut p = vec![0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 17, 0, 0];
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&[
            198, 18, 0, 1, 198, 18, 0, 2, 0x9c, 0x40, 0, 53, 0, 20, 0xab, 0xcd,
        ]);
        p.extend_from_slice(&[0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
        let sum = taroc_wire::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        packets.push(p);
    }
    // A SYN of a third flow of the first flow's hosts, Linux's options: IR-S against CID 0.
    packets.push(linux_syn(
        0x0201,
        [198, 18, 0, 1],
        [198, 18, 0, 2],
        [0x13, 0x8b, 0, 80],
        0x000a_bcde,
        0x2720,
    ));
    // An interactive flow of other hosts (small writes, no stride): three IR, then CO in the
    // codes of a context without a stride.
    for i in 0..5u32 {
        let mut p = segment(
            40_000 + 30 * i,
            9_000 + 2 * i,
            70 + i as u16,
            20_000 + 400 * i,
            20,
        );
        p[48..52].copy_from_slice(&(3_000 + 350 * i).to_be_bytes());
        (p[15], p[19]) = (3, 4);
        p[10..12].fill(0);
        p[36..38].fill(0);
        fill_checksums(&mut p);
        packets.push(p);
    }
    // A SYN between hosts with no context, Linux's options: a compact SYN.
    packets.push(linux_syn(
        0x4a11,
        [198, 18, 0, 7],
        [198, 18, 0, 8],
        [0xa1, 0x30, 0x14, 0x51],
        0x7e21_0005,
        0x1122_3344,
    ));
    // The first flow's next new segment: its IP-ID offset two above its first segments' (the
    // retransmission and the SYN took two counter values) and nine below the retransmission's
    // (sent as IR, a reference).
    packets.push(segment(1000 + 256 * 12, 77, 514, 10_014, 256));
    // The IPv6 flow's segments on port 7001 in an IPv6 tunnel: three IR-N (the outer header's
    // context), three tunnel frames (CO-N outer header, the inner flow's IR), then a plain CO
    // frame of the context that keeps the outer header.
    for i in 0..7 {
        packets.push(tunnel_v6(&segment_v6(7001, 1 + 4 * i, 1, 4)));
    }
    // Two flows of the first flow's hosts in an IPv4 tunnel (DF set): its outer header's
    // context starts (three IR-N), each inner flow's IR frames go in tunnel frames, then plain
    // CO frames: the first's outer Identification counts by three per inner one (O flag, 8
    // LSBs), the second's is 0 (predicted: nothing sent).
    for (port, outer_id) in [(5003u16, 3u16), (5004, 0)] {
        for i in 0..7u16 {
            let mut inner = segment(60_000 + 256 * u32::from(i), 77, 900 + i, 10_100, 256);
            inner[20..22].copy_from_slice(&port.to_be_bytes());
            fix_tcp_checksum(&mut inner);
            packets.push(tunnel_v4(&inner, outer_id * (900 + i)));
        }
    }
    packets
}

/// `docs/taroc-plus-format.md`'s test vectors: each packet compresses to the frame the
/// document gives (kind byte first), and each frame decompresses to its packet.
#[test]
fn specification_test_vectors() {
    let doc = include_str!("../../../../../docs/taroc-plus-format.md");
    let vectors: Vec<(Vec<u8>, Vec<u8>)> = doc
        .lines()
        .filter_map(|line| line.strip_prefix("    packet "))
        .zip(
            doc.lines()
                .filter_map(|line| line.strip_prefix("    frame  ")),
        )
        .map(|(p, f)| (unhex(p.trim()), unhex(f.trim())))
        .collect();
    let packets = vector_packets();
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut listing = alloc::string::String::new();
    for p in &packets {
        let kind = c.compress(p, &mut frame);
        let mut on_link = vec![kind.to_byte()];
        on_link.extend_from_slice(&frame);
        listing += &alloc::format!("    packet {}\n    frame  {}\n", hex(p), hex(&on_link));
    }
    assert_eq!(
        vectors.len(),
        packets.len(),
        "the document's vectors:\n{listing}"
    );
    for (i, ((packet, on_link), expected)) in vectors.iter().zip(&packets).enumerate() {
        assert_eq!(packet, expected, "vector {i}: packet\n{listing}");
        let kind = FrameKind::from_byte(on_link[0]).unwrap();
        d.decompress(kind, &on_link[1..], &mut out).unwrap();
        assert_eq!(&out, packet, "vector {i}");
    }
    let mut c = PlusCompressor::new(config());
    for (i, (packet, on_link)) in vectors.iter().enumerate() {
        let kind = c.compress(packet, &mut frame);
        assert_eq!(
            (kind.to_byte(), &frame[..]),
            (on_link[0], &on_link[1..]),
            "vector {i}:\n{listing}"
        );
    }
}
