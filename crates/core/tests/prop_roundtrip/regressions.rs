//! Regression cases the property test found, and known weaknesses of the draft's TAROC and of
//! every checksum-verified scheme, each pinned down.

use super::*;

/// A packet of a hand-made IPv4 flow 10.0.0.1:40000 -> 10.1.0.2:80 without options.
fn simple_packet(seq: u32, ack: u32, ip_id: u16, payload_len: usize) -> Vec<u8> {
    simple_packet_ts(seq, ack, ip_id, None, payload_len)
}

/// [`simple_packet`], with a Timestamps option if `ts` is given.
fn simple_packet_ts(
    seq: u32,
    ack: u32,
    ip_id: u16,
    ts: Option<(u32, u32)>,
    payload_len: usize,
) -> Vec<u8> {
    let ip = IpFields {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 1, 0, 2)),
        dscp: 0,
        ecn: 0,
        ttl: 64,
        ip_id,
        flow_label: 0,
    };
    let h = TcpHeader {
        src_port: 40000,
        dst_port: 80,
        seq,
        ack,
        flags: tcpf::ACK,
        window: 500,
        urgent: 0,
        options: options(ts, &[]),
    };
    let payload: Vec<u8> = (0..payload_len as u32)
        .map(|i| payload_byte(0, seq.wrapping_add(i)))
        .collect();
    tcp_packet(&ip, &h, &payload)
}

/// Compresses `packets` with one TAROC compressor, then hands the frames listed in `order` to
/// one decompressor; returns, per delivery, the packet index and what came out.
fn taroc_link(
    config: TarocConfig,
    packets: &[Vec<u8>],
    order: &[usize],
) -> Vec<(usize, Result<Vec<u8>, taroc_core::DropReason>)> {
    let config = SchemeConfig {
        taroc: config,
        ..SchemeConfig::default()
    };
    let mut c = AnyCompressor::new(Scheme::Taroc, &config);
    let mut d = AnyDecompressor::new(Scheme::Taroc, &config);
    let frames: Vec<(FrameKind, Vec<u8>)> = packets
        .iter()
        .map(|p| {
            let mut f = Vec::new();
            (c.compress(p, &mut f), f)
        })
        .collect();
    let mut out = Vec::new();
    order
        .iter()
        .map(|&i| {
            let (kind, frame) = &frames[i];
            (
                i,
                d.decompress(*kind, frame, &mut out).map(|()| out.clone()),
            )
        })
        .collect()
}

/// KNOWN BUG (found by `intact_frames_round_trip`; not fixed here): the IPv4 Identification is
/// covered by no checksum the TAROC decompressor can verify, so when the link reorders (or
/// duplicates) a COMPRESSED_TCP frame whose TCP fields equal the reference's (duplicate ACKs), the
/// IP-ID LSBs are decoded against a newer reference, come out wrong, and the packet is still
/// delivered: here packet 1 of eight identical pure ACKs with sequential IP-IDs, delivered after
/// packet 6, comes out with IP-ID 0x1009 instead of 0x1001. With a small VSW
/// (`max_vsw_entries: 2`) the wrong IP-ID also becomes the reference and every later packet of
/// the context is delivered with a wrong IP-ID.
#[test]
#[ignore = "known bug: reordered COMPRESSED_TCP frame delivered with a wrong IPv4 IP-ID"]
fn known_bug_reordered_duplicate_ack_gets_wrong_ip_id() {
    // Eight identical pure ACKs but for their sequential IP-IDs.
    let packets: Vec<Vec<u8>> = (0..8)
        .map(|i| simple_packet(1000, 5000, 0x1000 + i, 0))
        .collect();
    for (i, delivered) in taroc_link(TarocConfig::default(), &packets, &[0, 2, 3, 4, 5, 6, 1, 7]) {
        if let Ok(out) = delivered {
            assert_eq!(hex(&out), hex(&packets[i]), "packet {i} delivered wrong");
        }
    }
}

/// FIXED BUG (found by `intact_frames_round_trip` and the `taroc_roundtrip` fuzz target; the
/// VSW now measures progress from the decompressor's frontier and never evicts it):
/// context-damage loss on a clean link. The decompressor keeps the highest-sequence verified
/// packet as its reference (draft 7.2 a: a packet with a lower sequence number, e.g. a
/// retransmission, does not replace it), but the compressor could drop exactly that packet from
/// its VSW: by the entry cap (`max_vsw_entries`, which evicts the oldest *pushed* entry), or by
/// pruning on acknowledgment progress when a later packet has a lower sequence number but a
/// higher ACK (a retransmission of a host that also receives data carries its newest ACK). The
/// next COMPRESSED_TCP is then coded for a window without the decompressor's reference: fields
/// equal in every VSW entry are left out and filled from the wrong reference, W-LSB fields decode
/// against it, the checksum fails and the packet is lost although the link lost nothing.
///
/// This test shows the cap variant, with `max_vsw_entries: 1`: segments 13, 14, 15 (TS values
/// 0x6d, 0x6d, 0x6e), a retransmission of segment 0 (TS 0x6f) and segment 16 (TS 0x6f). Segment
/// 16 goes without its TS value (equal to the retransmission's, the only VSW entry); the
/// decompressor's reference is still segment 15 (TS 0x6e), so the rebuilt packet fails its
/// checksum. The pruning variant, with the default configuration, is the fuzz input
/// `fuzz/regressions/taroc_roundtrip/clean_link_drop_lower_seq_higher_ack` (five pure ACKs of
/// one stream; the fourth has a sequence number 34560 lower and an ACK 23168 higher than the
/// others; the fifth was dropped), replayed by `fuzz_regressions::seeds_and_regressions_pass`.
/// A further variant (an older packet sent as UNCOMPRESSED_TCP resets the decompressor's
/// reference, so it must become the VSW frontier too) is the fixed regression
/// `fuzz/regressions/taroc_roundtrip/clean_link_drop_uncompressed_older_packet_resets_reference`.
#[test]
fn vsw_cap_keeps_reference_after_retransmission() {
    let config = TarocConfig {
        max_vsw_entries: 1,
        ..TarocConfig::default()
    };
    let segment = |i: u32, ip_id: u16, ts: u32| {
        simple_packet_ts(0xB146_C3AC + i, 7, ip_id, Some((ts, 0x99)), 1)
    };
    let packets = [
        segment(13, 1, 0x6d),
        segment(14, 2, 0x6d),
        segment(15, 3, 0x6e),
        segment(0, 4, 0x6f),
        segment(16, 5, 0x6f),
    ];
    for (i, delivered) in taroc_link(config, &packets, &[0, 1, 2, 3, 4]) {
        match delivered {
            Ok(out) => assert_eq!(hex(&out), hex(&packets[i]), "packet {i} delivered wrong"),
            Err(reason) => panic!("clean link: packet {i} dropped: {reason:?}"),
        }
    }
}

/// KNOWN WEAKNESS (found by `corrupted_frames`; a link CRC, which MISSION.md assumes, hides
/// it): the context-flags octet that UNCOMPRESSED_TCP carries in the IP length field (usual ECN
/// bits, RANDOM IP-ID) is covered by no checksum, and neither are the IP ECN bits of the packets
/// rebuilt from it. A bit error there is accepted: the UNCOMPRESSED_TCP packet itself comes out
/// right (its length field is restored), but the next COMPRESSED_TCP of the context is delivered
/// with ECN bits 01 instead of 00.
#[test]
#[ignore = "known weakness: corrupted UNCOMPRESSED_TCP context flags damage the context undetected"]
fn known_weakness_ecn_flag_of_uncompressed_tcp_is_unverified() {
    let packets: Vec<Vec<u8>> = (0..4)
        .map(|i| simple_packet(1000 + 100 * i, 7, 50 + i as u16, 100))
        .collect();
    let config = SchemeConfig::default();
    let mut c = AnyCompressor::new(Scheme::Taroc, &config);
    let mut d = AnyDecompressor::new(Scheme::Taroc, &config);
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    for (i, packet) in packets.iter().enumerate() {
        let kind = c.compress(packet, &mut frame);
        if i == 0 {
            assert_eq!(kind, FrameKind::UncompressedTcp);
            frame[2] ^= 0x02; // one bit error in the context flags
        }
        if d.decompress(kind, &frame, &mut out).is_ok() {
            assert_eq!(
                hex(&out),
                hex(packet),
                "packet {i} ({kind:?}) delivered wrong"
            );
        }
    }
}

/// KNOWN WEAKNESS (found by `corrupted_frames`; a link CRC, which MISSION.md assumes, hides
/// it): TAROC's only check is the TCP checksum, a one's-complement sum in which bit 16 of the
/// ACK number weighs the same as bit 0 of the window. In a WASI field with PT 2 or 3 the window's
/// last bit and the ACK's bit 16 lie 3 bits apart, so a single byte error that sets one and
/// clears the other changes the decoded header without changing the checksum, and the packet is
/// delivered wrong. This test tries every single-byte error of one such frame.
#[test]
#[ignore = "known weakness: single-byte errors in WASI can pass the TCP checksum"]
fn known_weakness_compensating_bit_errors_pass_the_tcp_checksum() {
    let ack = |i: u32| {
        let ip = IpFields {
            src: IpAddr::V4(Ipv4Addr::new(10, 1, 0, 2)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dscp: 0,
            ecn: 0,
            ttl: 64,
            ip_id: 9 + i as u16,
            flow_label: 0,
        };
        let h = TcpHeader {
            src_port: 80,
            dst_port: 40000,
            seq: 1000,
            ack: 0x0300_0000 + 40_000 * i,
            flags: tcpf::ACK,
            window: 0x4000 + 0x3001 * i as u16,
            urgent: 0,
            options: vec![],
        };
        tcp_packet(&ip, &h, &[])
    };
    let packets = [ack(0), ack(1)];
    let config = SchemeConfig::default();
    let mut c = AnyCompressor::new(Scheme::Taroc, &config);
    let frames: Vec<(FrameKind, Vec<u8>)> = packets
        .iter()
        .map(|p| {
            let mut f = Vec::new();
            (c.compress(p, &mut f), f)
        })
        .collect();
    assert_eq!(frames[1].0, FrameKind::CompressedTcp);
    let mut wrong = Vec::new();
    for at in 0..frames[1].1.len() {
        for x in 1..=255u8 {
            let mut d = AnyDecompressor::new(Scheme::Taroc, &config);
            let mut out = Vec::new();
            d.decompress(frames[0].0, &frames[0].1, &mut out).unwrap();
            let mut bad = frames[1].1.clone();
            bad[at] ^= x;
            if d.decompress(frames[1].0, &bad, &mut out).is_ok() && out != packets[1] {
                wrong.push(format!("byte {at} ^ {x:#04x}: {}", hex(&out)));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "frame {} (packet {}):\n{}",
        hex(&frames[1].1),
        hex(&packets[1]),
        wrong.join("\n")
    );
}
