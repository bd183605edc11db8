//! After a link error: frames are tossed until an explicit connection number (RFC 1144 section
//! 4), and a lost frame without one gives a wrong packet, as the RFC says.

use super::*;

/// A link with connection 0 (data 100 bytes) set up, and the frames of the next three packets.
fn three_frames() -> (VjDecompressor, Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut c = VjCompressor::new(VjConfig::default());
    let mut d = VjDecompressor::new(VjConfig::default());
    let mut out = Vec::new();
    let p0 = Pkt {
        data: data(100),
        ..Pkt::default()
    };
    let mut frame = Vec::new();
    assert_eq!(
        c.compress(&p0.build(), &mut frame),
        FrameKind::UncompressedTcp
    );
    d.decompress(FrameKind::UncompressedTcp, &frame, &mut out)
        .unwrap();
    let (mut frames, mut packets) = (Vec::new(), Vec::new());
    for n in 1..=3u32 {
        let p = Pkt {
            seq: 1000 + 100 * n,
            id: 100 + n as u16,
            ..p0.clone()
        }
        .build();
        let mut frame = Vec::new();
        assert_eq!(c.compress(&p, &mut frame), FrameKind::CompressedTcp);
        frames.push(frame);
        packets.push(p);
    }
    (d, frames, packets)
}

#[test]
fn after_a_link_error_compressed_frames_are_tossed_until_an_explicit_connection() {
    let (mut d, frames, packets) = three_frames();
    let mut out = Vec::new();
    assert!(!d.is_tossing());
    // Frame 0 is lost; the framer reports it.
    d.link_error();
    assert!(d.is_tossing());
    for frame in &frames[1..] {
        assert_eq!(
            d.decompress(FrameKind::CompressedTcp, frame, &mut out),
            Err(DropReason::NoContext)
        );
        assert!(out.is_empty());
    }
    // TYPE_IP passes and changes nothing.
    let other = Pkt {
        flags: flags::SYN,
        ..Pkt::default()
    }
    .build();
    assert_eq!(d.decompress(FrameKind::Ip, &other, &mut out), Ok(()));
    assert_eq!(out, other);
    assert!(d.is_tossing());
    // An UNCOMPRESSED_TCP clears toss.
    let mut resync = packets[2].clone();
    resync[9] = 0;
    assert_eq!(
        d.decompress(FrameKind::UncompressedTcp, &resync, &mut out),
        Ok(())
    );
    assert_eq!(out, packets[2]);
    assert!(!d.is_tossing());
    // So does a COMPRESSED_TCP with the C bit, which is taken relative to the slot as it is.
    d.link_error();
    let mut explicit = vec![frames[0][0] | NEW_C, 0];
    explicit.extend_from_slice(&frames[0][1..]);
    assert_eq!(
        d.decompress(FrameKind::CompressedTcp, &explicit, &mut out),
        Ok(())
    );
    assert!(!d.is_tossing());
}

#[test]
fn a_lost_frame_without_link_error_gives_a_wrong_packet_as_rfc_1144_says() {
    // Section 4.1: the decompressor applies the next delta to the last packet it saw; the
    // sequence number is off by the lost data, and only the TCP checksum tells.
    let (mut d, frames, packets) = three_frames();
    let mut out = Vec::new();
    assert_eq!(
        d.decompress(FrameKind::CompressedTcp, &frames[1], &mut out),
        Ok(())
    );
    assert_ne!(out, packets[1]);
    let seq = |p: &[u8]| u32::from_be_bytes(p[24..28].try_into().unwrap());
    assert_eq!(seq(&out), seq(&packets[1]) - 100);
    assert_eq!(
        out[..20],
        packets[0][..20],
        "the IP header is the lost packet's"
    );
    assert!(Sum::new().add_bytes(&out[..20]).verifies());
}

#[test]
fn refused_frames_set_toss_and_change_no_slot() {
    let (d0, frames, packets) = three_frames();
    let mut out = Vec::new();
    let bad: [(FrameKind, Vec<u8>, DropReason); 10] = [
        (FrameKind::CompressedTcp, vec![], DropReason::Malformed),
        // Cut inside the checksum.
        (
            FrameKind::CompressedTcp,
            vec![0x0F, 1],
            DropReason::Malformed,
        ),
        // Cut inside a delta.
        (
            FrameKind::CompressedTcp,
            vec![0x08, 1, 2, 0, 1],
            DropReason::Malformed,
        ),
        // Connection 16 of 16 slots.
        (
            FrameKind::CompressedTcp,
            vec![0x4F, 16, 1, 2],
            DropReason::Malformed,
        ),
        // Connection 3 was never set up.
        (
            FrameKind::CompressedTcp,
            vec![0x4F, 3, 1, 2],
            DropReason::NoContext,
        ),
        (
            FrameKind::UncompressedTcp,
            {
                let mut f = packets[0].clone();
                f[9] = 16;
                f
            },
            DropReason::Malformed,
        ),
        (
            FrameKind::UncompressedTcp,
            packets[0][..39].to_vec(),
            DropReason::Malformed,
        ),
        // IP header checksum wrong (with TCP in the protocol field it verifies as sent).
        (
            FrameKind::UncompressedTcp,
            {
                let mut f = packets[0].clone();
                f[9] = 0;
                f[8] ^= 1;
                f
            },
            DropReason::Malformed,
        ),
        (
            FrameKind::FullHeader,
            frames[0].clone(),
            DropReason::UnknownKind,
        ),
        (FrameKind::ContextState, vec![], DropReason::UnknownKind),
    ];
    for (kind, frame, reason) in bad {
        let mut d = d0.clone();
        out.extend_from_slice(b"stale");
        assert_eq!(
            d.decompress(kind, &frame, &mut out),
            Err(reason),
            "{kind:?} {frame:02x?}"
        );
        assert!(out.is_empty());
        assert!(d.is_tossing(), "{kind:?} {frame:02x?}");
        // The slot is as it was: an explicit-connection frame 0 decodes to packet 1.
        let mut explicit = vec![frames[0][0] | NEW_C, 0];
        explicit.extend_from_slice(&frames[0][1..]);
        assert_eq!(
            d.decompress(FrameKind::CompressedTcp, &explicit, &mut out),
            Ok(())
        );
        assert_eq!(out, packets[0]);
    }
    // Before any connection number, an implicit one has nothing to refer to.
    let mut d = VjDecompressor::new(VjConfig::default());
    assert_eq!(
        d.decompress(FrameKind::CompressedTcp, &frames[0], &mut out),
        Err(DropReason::NoContext)
    );
}
