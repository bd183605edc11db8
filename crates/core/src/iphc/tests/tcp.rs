//! TCP behaviour: twice, its extension, header requests.

use super::*;

/// A bulk data stream: `n` segments of `size` octets (IPv4, Identification +1 per packet, or
/// IPv6), with timestamps that change every segment.
fn bulk(n: usize, size: usize, v6: bool) -> Vec<Vec<u8>> {
    bulk_ts(n, size, v6, 1)
}

/// [`bulk`] with timestamps that change every `ts_every` segments.
fn bulk_ts(n: usize, size: usize, v6: bool, ts_every: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let t = Tcp::new(1_000_000 + (i * size) as u32, 7000)
                .timestamps(100 + (i / ts_every) as u32, 55)
                .payload(size);
            if v6 {
                v6_tcp(V6::new(), &t)
            } else {
                v4_tcp(V4::new(500 + i as u16), &t)
            }
        })
        .collect()
}

#[test]
fn twice_repairs_a_single_lost_segment_of_a_bulk_stream() {
    for v6 in [false, true] {
        let packets = bulk(20, 1000, v6);
        let mut pair = Pair::new(IphcConfig::default());
        let results = run_lossy(&mut pair, &packets, &[10]);
        for (i, r) in results.iter().enumerate() {
            if i != 10 {
                assert_eq!(*r, Some(Ok(())), "v6 {v6} packet {i}");
            }
        }
        // Without twice, the context stays wrong until a full header.
        let config = IphcConfig {
            twice: false,
            header_requests: false,
            ..IphcConfig::default()
        };
        let results = run_lossy(&mut Pair::new(config), &packets, &[10]);
        assert_eq!(results[11], Some(Err(DropReason::ChecksumMismatch)));
        assert_eq!(results[19], Some(Err(DropReason::ChecksumMismatch)));
    }
}

#[test]
fn twice_cannot_restore_options_the_next_packet_does_not_resend() {
    // Timestamps change every other segment. Segment 10 changes them and is lost; segment 11
    // has the same timestamps, so it carries no options (O is set only on a change from the
    // previous header): no guess of the deltas restores them.
    let packets = bulk_ts(20, 1000, true, 2);
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[10]);
    assert_eq!(results[11], Some(Err(DropReason::ChecksumMismatch)));
    // Losing segment 11 instead (no options change) is repaired.
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[11]);
    assert_eq!(results[12], Some(Ok(())));
}

#[test]
fn segment_multiples_repair_a_burst_of_lost_data_segments() {
    // Two segments lost in a row: twice (one more delta) is short by a segment, k = 2 segment
    // sizes is right, and with IPv4 it also fixes the Identification (two lost packets).
    let packets = bulk(20, 1000, false);
    let no_multiples = IphcConfig {
        twice_segment_multiples: false,
        header_requests: false,
        ..IphcConfig::default()
    };
    let results = run_lossy(&mut Pair::new(no_multiples.clone()), &packets, &[8, 9]);
    assert_eq!(results[10], Some(Err(DropReason::ChecksumMismatch)));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[8, 9]);
    for (i, r) in results.iter().enumerate() {
        if i != 8 && i != 9 {
            assert_eq!(*r, Some(Ok(())), "packet {i}");
        }
    }
    // A short segment (300 octets, the end of an application write) then a full one that is
    // lost: the next header says "sequence advanced by the previous payload" (SPECIAL_D), which
    // the decompressor reads as 300. Twice (600) fails; 300 + one segment size repairs it.
    let mut packets = Vec::new();
    let mut seq = 1_000_000u32;
    for i in 0..14u16 {
        let size = if i == 8 { 300 } else { 1000 };
        let t = Tcp::new(seq, 7000).payload(size);
        packets.push(v4_tcp(V4::new(i), &t));
        seq += size as u32;
    }
    let results = run_lossy(&mut Pair::new(no_multiples.clone()), &packets, &[9]);
    assert_eq!(results[10], Some(Err(DropReason::ChecksumMismatch)));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[9]);
    assert!(results.iter().flatten().all(|r| r.is_ok()), "{results:?}");
}

/// An ACK stream: acknowledgments advancing by `deltas` (IPv6, or IPv4 with the given
/// Identification step).
fn acks(deltas: &[u32], ip: Option<u16>) -> Vec<Vec<u8>> {
    let mut ack = 50_000u32;
    deltas
        .iter()
        .enumerate()
        .map(|(i, d)| {
            ack += d;
            let t = Tcp::new(9000, ack);
            match ip {
                None => v6_tcp(V6::new(), &t),
                Some(step) => v4_tcp(V4::new(300u16.wrapping_add(step * i as u16)), &t),
            }
        })
        .collect()
}

#[test]
fn segment_multiples_repair_a_lost_stretch_ack() {
    // ACKs of 2 and 1 segments (1000 octets each); the lost one acknowledges 3 segments.
    let deltas = [2000, 2000, 1000, 2000, 2000, 3000, 2000, 2000];
    let packets = acks(&deltas, None);
    let no_multiples = IphcConfig {
        twice_segment_multiples: false,
        header_requests: false,
        ..IphcConfig::default()
    };
    let results = run_lossy(&mut Pair::new(no_multiples), &packets, &[5]);
    assert_eq!(results[6], Some(Err(DropReason::ChecksumMismatch)));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[5]);
    assert_eq!(results[6], Some(Ok(())));
    assert_eq!(results[7], Some(Ok(())));

    // IPv4 with a constant Identification: the same repair.
    let results = run_lossy(
        &mut Pair::new(IphcConfig::default()),
        &acks(&deltas, Some(0)),
        &[5],
    );
    assert_eq!(results[6], Some(Ok(())));

    // IPv4 with an Identification that counts packets: how many ACKs a stretch of segments
    // took is unknown, so the multiples are not tried and the context waits for a full header.
    let counting = acks(&deltas, Some(1));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &counting, &[5]);
    assert_eq!(results[6], Some(Err(DropReason::ChecksumMismatch)));
    // Twice is (one lost ACK: the Identification advanced by one more).
    let even = acks(&[2000; 12], Some(1));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &even, &[6]);
    assert!(results.iter().flatten().all(|r| r.is_ok()), "{results:?}");
}

#[test]
fn twice_fails_where_it_must_and_a_header_request_repairs_the_context() {
    // Segments of 1000 octets, but the lost one holds 700: neither twice nor multiples of 1000
    // give the right sequence number.
    let mut packets = Vec::new();
    let mut seq = 1_000_000u32;
    for i in 0..60u16 {
        let size = if i == 5 { 700 } else { 1000 };
        let t = Tcp::new(seq, 7000).payload(size);
        packets.push(v4_tcp(V4::new(40 + i), &t));
        seq += size as u32;
    }
    let mut pair = Pair::new(IphcConfig::default());
    for p in &packets[..5] {
        pair.pass(p);
    }
    let _ = pair.send(&packets[5]); // lost
    let (kind, frame) = pair.send(&packets[6]);
    assert_eq!(kind, FrameKind::CompressedTcp);
    assert_eq!(pair.recv(kind, &frame), Err(DropReason::ChecksumMismatch));
    // One CONTEXT_STATE for CID 0; the compressor is not told yet (the reverse link is slow).
    let mut fb = Vec::new();
    assert!(pair.d.take_feedback(&mut fb));
    assert_eq!(fb, [3, 1, 0]);
    assert!(!pair.d.take_feedback(&mut fb));
    // The context stays damaged: dropped without guesses, and not requested again for the next
    // 15 drops; the 16th repeats the request (the first was maybe lost).
    for (n, p) in packets[7..23].iter().enumerate() {
        let (kind, frame) = pair.send(p);
        assert_eq!(pair.recv(kind, &frame), Err(DropReason::ChecksumMismatch));
        let requested = pair.d.take_feedback(&mut fb);
        assert_eq!(requested, n == 15, "drop {n}");
    }
    // The request reaches the compressor: the next packet is a FULL_HEADER, which repairs.
    pair.c.handle_feedback(&fb);
    let (kind, _) = pair.pass(&packets[23]);
    assert_eq!(kind, FrameKind::FullHeader);
    for p in &packets[24..] {
        assert_eq!(pair.pass(p).0, FrameKind::CompressedTcp);
    }
    assert!(!pair.d.take_feedback(&mut fb));

    // Without header requests, nothing is ever asked.
    let config = IphcConfig {
        header_requests: false,
        ..IphcConfig::default()
    };
    let results = run_lossy(&mut Pair::new(config.clone()), &packets, &[5]);
    assert_eq!(results[6], Some(Err(DropReason::ChecksumMismatch)));
    let mut pair = Pair::new(config);
    run_lossy(&mut pair, &packets, &[5]);
    assert_eq!(pair.feedback(), None);
}

/// A sender in timeout backoff sends a packet per timeout: with a clock, a damaged context is
/// requested again on the first drop half a second after the last request.
#[test]
fn an_unanswered_header_request_is_repeated_after_a_while() {
    let packets = bulk(20, 500, true);
    let mut pair = Pair::new(IphcConfig::default());
    let _ = pair.send(&packets[0]); // lost: NoContext from here on
    let mut asked = Vec::new();
    for (i, p) in packets[1..].iter().enumerate() {
        // Packets 200 ms apart.
        pair.d
            .set_time(core::time::Duration::from_millis(200 * i as u64));
        let (kind, frame) = pair.send(p);
        assert_eq!(pair.recv(kind, &frame), Err(DropReason::NoContext));
        let mut fb = Vec::new();
        if pair.d.take_feedback(&mut fb) {
            asked.push(i);
        }
    }
    // The first drop, then every third (600 ms >= 500 ms), long before 16 drops.
    assert_eq!(asked, [0, 3, 6, 9, 12, 15, 18]);
}

#[test]
fn header_requests_back_off_and_cover_missing_contexts() {
    let packets = bulk(200, 500, true);
    let mut pair = Pair::new(IphcConfig::default());
    // The FULL_HEADER that sets the context is lost: NoContext, and a request.
    let _ = pair.send(&packets[0]);
    let mut asked = Vec::new();
    for (i, p) in packets[1..].iter().enumerate() {
        let (kind, frame) = pair.send(p);
        assert_eq!(pair.recv(kind, &frame), Err(DropReason::NoContext));
        let mut fb = Vec::new();
        if pair.d.take_feedback(&mut fb) {
            assert_eq!(fb, [3, 1, 0]);
            asked.push(i);
        }
    }
    // Requests after drops 0, 16, 16+32, 16+32+64, …
    assert_eq!(asked, [0, 16, 48, 112]);
    // A request for a CID the compressor does not use, or a malformed one, changes nothing.
    pair.c.handle_feedback(&[3, 1, 9]);
    pair.c.handle_feedback(&[3, 5, 0]);
    pair.c.handle_feedback(&[1, 1, 0, 0x80, 0]);
    assert_eq!(
        pair.send(&bulk(201, 500, true)[200]).0,
        FrameKind::CompressedTcp
    );
    pair.c.handle_feedback(&[3, 1, 0]);
    assert_eq!(
        pair.pass(&bulk(202, 500, true)[201]).0,
        FrameKind::FullHeader
    );
}

#[test]
fn a_lost_change_of_an_ip_field_never_leaves_a_wrong_context() {
    // The TTL is not covered by the TCP checksum: a FULL_HEADER changing it moves the stream to
    // another CID, so losing it cannot make the decompressor rebuild the old TTL.
    let mut pair = Pair::new(IphcConfig::default());
    let packets = bulk(6, 1000, false);
    for p in &packets[..3] {
        pair.pass(p);
    }
    let with_ttl = |p: &[u8], ttl: u8| {
        let mut p = p.to_vec();
        p[8] = ttl;
        p[10..12].copy_from_slice(&[0, 0]);
        let sum = Sum::new().add_bytes(&p[..20]).checksum();
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p
    };
    let (kind, frame) = pair.send(&with_ttl(&packets[3], 50));
    assert_eq!(kind, FrameKind::FullHeader);
    assert_eq!(frame[3], 1, "moved to CID 1");
    // Lost. The next packet names CID 1, which has no context.
    let (kind, frame) = pair.send(&with_ttl(&packets[4], 50));
    assert_eq!((kind, frame[0]), (FrameKind::CompressedTcp, 1));
    assert_eq!(pair.recv(kind, &frame), Err(DropReason::NoContext));
    // ECN changes go in R-octets; a full header that would change the context's ECN moves too.
    let mut pair = Pair::new(IphcConfig::default());
    pair.pass(&packets[0]);
    let mut ce = v4_tcp(
        V4 {
            tos: 3,
            ..V4::new(501)
        },
        &Tcp::new(1_000_000, 7000).timestamps(100, 55).payload(1000),
    );
    let _ = &mut ce;
    let (kind, frame) = pair.pass(&ce);
    assert_eq!(
        (kind, frame[3]),
        (FrameKind::FullHeader, 1),
        "retransmission with CE"
    );
}

#[test]
fn a_lost_packet_that_changes_only_the_ip_id_is_never_invisible() {
    // Duplicate ACKs change nothing the TCP checksum covers, only the IPv4 Identification. The
    // packet after one goes as NODELTA (the Identification whole), so losing a duplicate ACK
    // cannot shift the Identification of what follows.
    let deltas = [1000, 1000, 0, 0, 0, 1000, 1000];
    let packets = acks(&deltas, Some(1));
    let mut pair = Pair::new(no_guesses());
    let kinds: Vec<FrameKind> = packets.iter().map(|p| pair.pass(p).0).collect();
    use FrameKind::*;
    assert_eq!(
        kinds,
        [
            FullHeader,
            CompressedTcp,
            CompressedTcp,
            CompressedTcpNoDelta,
            CompressedTcpNoDelta,
            CompressedTcpNoDelta,
            CompressedTcp
        ]
    );
    for lost in 2..5 {
        let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[lost]);
        assert!(
            results.iter().flatten().all(|r| r.is_ok()),
            "lost {lost}: {results:?}"
        );
    }
}

/// Without header requests, a decompressor that restarts (every context lost) while an ACK
/// stream runs refuses each compressed ACK for good unless something sends a full header: the
/// sender's retransmission draws a duplicate ACK, which `full_on_repeat` sends whole, and the
/// stream is back from there. Without the rule the duplicate goes compressed and is refused too.
#[test]
fn a_duplicate_ack_repairs_the_ack_stream_of_a_restarted_decompressor() {
    let packets = acks(&[2000; 6], None);
    for full_on_repeat in [true, false] {
        let config = IphcConfig {
            header_requests: false,
            full_on_repeat,
            ..IphcConfig::default()
        };
        let mut pair = Pair::new(config.clone());
        for p in &packets[..4] {
            pair.pass(p);
        }
        pair.d = IphcDecompressor::new(config);
        let (kind, frame) = pair.send(&packets[4]);
        assert_eq!(kind, FrameKind::CompressedTcp);
        assert!(pair.recv(kind, &frame).is_err());
        // The retransmission's duplicate ACK.
        let (kind, frame) = pair.send(&packets[4]);
        if full_on_repeat {
            assert_eq!(kind, FrameKind::FullHeader);
            assert_eq!(pair.recv(kind, &frame).as_deref(), Ok(&packets[4][..]));
            pair.pass(&packets[5]);
        } else {
            assert_eq!(kind, FrameKind::CompressedTcp);
            assert!(pair.recv(kind, &frame).is_err());
            let (kind, frame) = pair.send(&packets[5]);
            assert!(pair.recv(kind, &frame).is_err());
        }
    }
}
