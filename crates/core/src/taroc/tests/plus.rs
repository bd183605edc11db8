//! Where `taroc-plus` parts from the draft, and why: what the live gateway found with Linux TCP.

use super::*;

/// What the live gateway found with Linux TCP: SACK recovery retransmits a segment far behind
/// the newest, beyond the tracked window. The draft clears the VSW and sends it UNCOMPRESSED_TCP,
/// so when that one frame is lost the next packet is coded against a reference the decompressor
/// never got (context damage). `taroc-plus` codes it against the window instead.
#[test]
fn plus_survives_the_loss_of_a_retransmission_behind_the_window() {
    let small_window = |config: TarocConfig| TarocConfig {
        issthresh: 3000,
        mss: 1000,
        ..config
    };
    // The window (like a timestamp) changed by the time of the retransmission: the next packet
    // carries the same value, so against a VSW holding only the retransmission it needs 0 bits,
    // and a decompressor that missed the retransmission rebuilds the old value.
    let seg = |i: u32, ip_id: u32| {
        Spec {
            seq: 1000 + 244 * i,
            ip_id: ip_id as u16,
            win: if ip_id < 200 { 500 } else { 600 },
            payload: 244,
            ..Spec::default()
        }
        .build()
    };
    for (config, damaged) in [
        (small_window(TarocConfig::default()), true),
        (small_window(TarocConfig::plus()), false),
    ] {
        let mut c = TarocCompressor::new(config.clone());
        let mut d = TarocDecompressor::new(config);
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        for i in 0..200 {
            let kind = c.compress(&seg(i, i), &mut frame);
            assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
        }
        let retransmission = seg(10, 200);
        let key = packet::TcpIpPacket::parse(&retransmission).unwrap().key;
        assert!(
            c.vsw_len(&key).unwrap() < 190,
            "the retransmission is behind the VSW"
        );
        c.compress(&retransmission, &mut frame); // lost on the link
        let next = seg(200, 201);
        let kind = c.compress(&next, &mut frame);
        let result = d.decompress(kind, &frame, &mut out);
        if damaged {
            assert_eq!(result, Err(DropReason::ChecksumMismatch));
        } else {
            assert_eq!((result, &out), (Ok(()), &next));
        }
    }
}

/// An older packet sent as UNCOMPRESSED_TCP becomes the decompressor's reference (draft 7.2 b).
/// `taroc-plus` keeps it in the VSW while the stream sends new data, so losing the packets after
/// it costs nothing.
#[test]
fn plus_keeps_an_older_uncompressed_reference_while_new_data_flows() {
    let config = TarocConfig {
        issthresh: 3000,
        mss: 1000,
        ..TarocConfig::plus()
    };
    // The retransmission carries another window than every packet around it: a decompressor
    // holding it as the reference rebuilds that window wherever a header codes 0 bits of it.
    let seg = |i: u32, ip_id: u32, flags: u8| {
        Spec {
            seq: 1000 + 244 * i,
            ip_id: ip_id as u16,
            win: if flags & flags::FIN != 0 { 600 } else { 500 },
            payload: 244,
            flags,
            ..Spec::default()
        }
        .build()
    };
    let mut c = TarocCompressor::new(config.clone());
    let mut d = TarocDecompressor::new(config);
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    for i in 0..200 {
        let kind = c.compress(&seg(i, i, flags::ACK), &mut frame);
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
    }
    // A FIN cannot go compressed: the old segment travels whole and becomes the reference.
    let kind = c.compress(&seg(10, 200, flags::ACK | flags::FIN), &mut frame);
    assert_eq!(kind, FrameKind::UncompressedTcp);
    assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
    c.compress(&seg(200, 201, flags::ACK), &mut frame); // lost
    for i in 201..210 {
        let packet = seg(i, i + 1, flags::ACK);
        let kind = c.compress(&packet, &mut frame);
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "segment {i}");
        assert_eq!(out, packet);
    }
}

/// The draft's one way to deliver a wrong packet: the decompressor's reference has left the VSW
/// (here by the entry cap), the TCP fields still decode right, but the IP-ID, which the TCP
/// checksum does not cover, decodes against the stale reference. `taroc-plus` folds the IP-ID
/// into the checksum field, and the verification refuses the packet.
#[test]
fn plus_refuses_a_wrongly_decoded_ip_id_the_draft_delivers() {
    let seg = |seq: u32, ip_id: u16| {
        Spec {
            seq,
            ip_id,
            ..Spec::default()
        }
        .build()
    };
    for (improvements, delivers_wrong) in [
        (Improvements::default(), true),
        (
            Improvements {
                start_repeats: 0, // the same slow-start pattern as the draft's
                ..TarocConfig::plus().improvements
            },
            false,
        ),
    ] {
        let config = TarocConfig {
            max_vsw_entries: 2,
            improvements,
            ..TarocConfig::default()
        };
        let mut c = TarocCompressor::new(config.clone());
        let mut d = TarocDecompressor::new(config);
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let kind = c.compress(&seg(10_000, 100), &mut frame);
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
        // Both lost; the cap pushes the decompressor's reference out of the VSW.
        c.compress(&seg(11_000, 600), &mut frame);
        c.compress(&seg(10_010, 601), &mut frame);
        let next = seg(10_020, 602);
        let kind = c.compress(&next, &mut frame);
        assert_eq!(kind, FrameKind::CompressedTcp);
        let result = d.decompress(kind, &frame, &mut out);
        if delivers_wrong {
            assert_eq!(result, Ok(()));
            assert_ne!(out, next, "a wrong IP-ID");
            // Only the IP-ID and the header checksum recomputed over it differ.
            assert_eq!(
                (&out[..4], &out[6..10], &out[12..]),
                (&next[..4], &next[6..10], &next[12..])
            );
        } else {
            assert_eq!(result, Err(DropReason::ChecksumMismatch));
        }
    }
}

/// The draft starts a context with one UNCOMPRESSED_TCP and then a COMPRESSED_TCP coded against
/// it alone: losing the first frame costs the second packet too (the one context-damage drop
/// `taroc-plus` still showed per live grid at BER 1e-4). With `start_repeats` the first two
/// go whole, and losing the first costs nothing.
#[test]
fn plus_repeats_the_first_uncompressed_packet() {
    let seg = |i: u32| {
        Spec {
            seq: 1000 + 100 * i,
            ip_id: i as u16,
            ..Spec::default()
        }
        .build()
    };
    for (config, pattern) in [
        (TarocConfig::default(), [U, C, U, C, C]),
        (TarocConfig::plus(), [U, U, C, U, C]),
    ] {
        let damaged = pattern[1] == C;
        let mut c = TarocCompressor::new(config.clone());
        let mut d = TarocDecompressor::new(config);
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let mut kinds = Vec::new();
        for i in 0..5 {
            let packet = seg(i);
            let kind = c.compress(&packet, &mut frame);
            kinds.push(kind);
            if i == 0 {
                continue; // lost
            }
            let result = d.decompress(kind, &frame, &mut out);
            if i == 1 && damaged {
                assert_eq!(result, Err(DropReason::NoContext));
            } else {
                assert_eq!((result, &out), (Ok(()), &packet), "packet {i}");
            }
        }
        assert_eq!(kinds, pattern);
    }
}
