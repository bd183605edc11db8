//! The hand-built probe frames of shared/captures/local (tshark probes, not all RFC-exact).

use super::*;

/// The PPP frames (direction, protocol, payload) of a LINKTYPE_PPP_WITH_DIR pcap.
fn ppp_frames(data: &[u8]) -> Vec<(u8, u16, Vec<u8>)> {
    let le32 = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(le32(20), 204, "LINKTYPE_PPP_WITH_DIR");
    let mut at = 24;
    let mut frames = Vec::new();
    while at + 16 <= data.len() {
        let caplen = le32(at + 8);
        let r = &data[at + 16..at + 16 + caplen];
        assert_eq!(&r[1..3], &[0xff, 0x03]);
        frames.push((r[0], u16::from_be_bytes([r[3], r[4]]), r[5..].to_vec()));
        at += 16 + caplen;
    }
    frames
}

#[test]
fn probe_capture_full_header_cids_and_generations() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/captures/local/iphc_probe_ppp_withdir.pcap"
    );
    let Ok(data) = std::fs::read(path) else {
        std::eprintln!("notice: {path} absent; skipping");
        return;
    };
    let frames = ppp_frames(&data);
    assert_eq!(frames.len(), 7);
    // RFC 2509 protocol numbers: FULL_HEADER 0x0061, COMPRESSED_NON_TCP 0x0065,
    // CONTEXT_STATE 0x2065.
    let (tcp_full, udp_full, non_tcp) = (&frames[0].2, &frames[1].2, &frames[4].2);
    assert_eq!((frames[0].1, frames[1].1, frames[4].1), (0x61, 0x61, 0x65));
    let mut layout = Layout::default();
    assert!(chain::parse(tcp_full, 168, &mut layout));
    assert_eq!(
        full_header::read(tcp_full, &layout),
        Ok(FullId::Tcp { cid: 5 })
    );
    assert!(chain::parse(udp_full, 168, &mut layout));
    assert_eq!(
        full_header::read(udp_full, &layout),
        Ok(FullId::NonTcp {
            cid: 7,
            generation: 3
        })
    );
    // The probe's transport checksums are placeholders, which our decompressor refuses.
    let mut d = IphcDecompressor::new(IphcConfig::default());
    let mut out = Vec::new();
    for full in [tcp_full, udp_full] {
        assert_eq!(
            d.decompress(FrameKind::FullHeader, full, &mut out),
            Err(DropReason::Malformed)
        );
    }
    // With a real UDP checksum the two non-TCP frames are RFC 2507 exact: the full header sets
    // CID 7 generation 3, and the compressed one (CID 7, generation 3, then the RANDOM IPv4
    // Identification 0x1235 and UDP checksum) decompresses against it.
    assert_eq!(&non_tcp[..4], &[7, 3, 0x12, 0x35]);
    let mut packet = udp_full.clone();
    assert!(chain::fill_lengths(&mut packet, &layout));
    transport_checksum(&mut packet[20..], &A4, &B4, UDP, 6);
    let mut full = udp_full.clone();
    full[26..28].copy_from_slice(&packet[26..28]);
    assert_eq!(d.decompress(FrameKind::FullHeader, &full, &mut out), Ok(()));
    assert_eq!(out, packet);
    let mut second = packet.clone();
    second[4..6].copy_from_slice(&[0x12, 0x35]);
    second[10..12].copy_from_slice(&[0, 0]);
    let sum = Sum::new().add_bytes(&second[..20]).checksum();
    second[10..12].copy_from_slice(&sum.to_be_bytes());
    let mut compressed = non_tcp.clone();
    compressed[4..6].copy_from_slice(&packet[26..28]);
    assert_eq!(
        d.decompress(FrameKind::CompressedNonTcp, &compressed, &mut out),
        Ok(())
    );
    assert_eq!(out, second);
    // Its CONTEXT_STATE is RFC 2508's (type 1, RTP): not a TCP header request.
    assert_eq!(frames[5].1, 0x2065);
    assert_eq!(feedback::parse(&frames[5].2), None);
}
