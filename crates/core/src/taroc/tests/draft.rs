//! Golden tests of the TAROC formats and of the behaviour the draft (and our reading of it)
//! prescribes.

use super::*;

#[test]
fn uncompressed_tcp_carries_the_cid_in_the_length_field() {
    for v4 in [true, false] {
        let packet = Spec {
            v4,
            ..Spec::default()
        }
        .build();
        let mut pair = Pair::new();
        assert_eq!(pair.send(&packet), U);
        let at = if v4 { 2 } else { 4 };
        let mut expected = packet.clone();
        expected[at..at + 2].copy_from_slice(&[0x00, 0x00]); // context flags 0, CID 0
        assert_eq!(pair.frame, expected);
    }
}

#[test]
fn compressed_tcp_golden_bytes() {
    let mut pair = Pair::new();
    let ts = |v| Some((v, 77));
    let first = Spec {
        ts: ts(100),
        ..Spec::default()
    };
    assert_eq!(pair.send(&first.build()), U);
    let second = Spec {
        seq: 1100,
        ip_id: 0x1235,
        ts: ts(103),
        flags: flags::ACK | flags::PSH,
        ..first.clone()
    };
    let packet = second.build();
    assert_eq!(pair.send(&packet), C);
    let csum = [packet[36], packet[37]];
    // VSW = {first}: seq needs r = 100 -> k = 8, IP-ID r = 1 -> k = 2: PT 00 (11, 3 bits).
    // WASI = 00 | seq LSBs 11 bits (1100 = 0b100_0100_1100) | IP-ID 3 bits (0b101) + 0 pad.
    // TS value r = 3 -> k = 3: the 7-bit code 0b0000011; TS echo unchanged (E = 0).
    let wasi = [0b0010_0010, 0b0110_0101];
    let mut expected = vec![
        0x00,
        flag::O | flag::I | flag::P | flag::S,
        csum[0],
        csum[1],
    ];
    expected.extend_from_slice(&wasi);
    expected.extend_from_slice(&[0b0000_1000, 103 & 0x7F]);
    expected.extend_from_slice(&packet[packet.len() - 100..]);
    assert_eq!(pair.frame, expected);
}

#[test]
fn compressed_tcp_with_sack_window_urgent_and_ecn() {
    let mut pair = Pair::new();
    let base = Spec {
        ts: Some((1, 2)),
        ..Spec::default()
    };
    pair.send(&base.build());
    let sack = vec![(5000 + 1448, 5000 + 2896), (5000 + 4344, 5000 + 5792)];
    let p = Spec {
        seq: 1100,
        win: 700,
        ip_id: 0x1235,
        tos: 0x03,
        sack,
        flags: flags::ACK | flags::URG | flags::ECE,
        payload: 0,
        ..base.clone()
    };
    let bytes = {
        let mut b = p.build();
        // Give the urgent pointer a value, and fix the TCP checksum.
        b[38..40].copy_from_slice(&7u16.to_be_bytes());
        b[36..38].fill(0);
        let c = Sum::new()
            .add_pseudo_header(
                [10, 0, 0, 1].into(),
                [10, 0, 0, 2].into(),
                6,
                (b.len() - 20) as u32,
            )
            .add_bytes(&b[20..])
            .checksum();
        b[36..38].copy_from_slice(&c.to_be_bytes());
        b
    };
    assert_eq!(pair.send(&bytes), C);
    let f = pair.frame[1];
    assert_eq!(f, flag::R | flag::O | flag::I | flag::S | flag::W | flag::U);
    // R-octet: reserved 0, CWR 0, ECE 1, ECN 11.
    assert_eq!(pair.frame[4], 0b0000_0111);
    assert_eq!(&pair.frame[5..7], &[0, 7]);
}

#[test]
fn compression_slow_start_doubles_f_period() {
    let mut pair = Pair::new();
    let mut kinds = Vec::new();
    for i in 0..40u32 {
        let p = Spec {
            seq: 1000 + 100 * i,
            ip_id: i as u16,
            ..Spec::default()
        };
        kinds.push(pair.send(&p.build()));
    }
    // U, then F_PERIOD = 1, 2, 4, 8, 16 compressed packets between full headers: the slides'
    // 1 + 2^0 + 1 + 2^1 + ... pattern.
    let pattern: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == U)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(pattern, [0, 2, 5, 10, 19, 36]);
}

#[test]
fn ir_state_ends_once_f_period_exceeds_the_window() {
    let config = TarocConfig {
        issthresh: 3000,
        mss: 1000,
        ..TarocConfig::default()
    };
    let mut c = TarocCompressor::new(config);
    let mut frame = Vec::new();
    let mut key = None;
    for i in 0..30u32 {
        let p = Spec {
            seq: 1000 + 100 * i,
            ip_id: i as u16,
            ..Spec::default()
        }
        .build();
        c.compress(&p, &mut frame);
        key = Some(packet::TcpIpPacket::parse(&p).unwrap().key);
    }
    // W = 2 * max(IW = 4000, 2 * 3000 = 6000, ...) = 12000 bytes = 12 MSS; F_PERIOD 16 > 12.
    assert_eq!(c.state_of(&key.unwrap()), Some(State::Co));
}

#[test]
fn not_compressible_packets_pass_as_type_ip() {
    let mut pair = Pair::new();
    for flags in [
        flags::SYN,
        flags::SYN | flags::ACK,
        flags::RST | flags::ACK,
        0,
    ] {
        assert_eq!(
            pair.send(
                &Spec {
                    flags,
                    ..Spec::default()
                }
                .build()
            ),
            FrameKind::Ip
        );
    }
    let mut bad = Spec::default().build();
    let last = bad.len() - 1;
    bad[last] ^= 0xFF; // breaks the TCP checksum
    assert_eq!(pair.send(&bad), FrameKind::Ip);
    let mut udp = Spec::default().build();
    udp[9] = 17;
    assert_eq!(pair.send(&udp), FrameKind::Ip);
}

#[test]
fn fin_goes_uncompressed() {
    let mut pair = Pair::new();
    pair.send(&Spec::default().build());
    pair.send(
        &Spec {
            seq: 1100,
            ..Spec::default()
        }
        .build(),
    );
    let fin = Spec {
        seq: 1200,
        flags: flags::ACK | flags::FIN,
        ..Spec::default()
    };
    assert_eq!(pair.send(&fin.build()), U);
}

#[test]
fn constant_ip_id_leaves_i_clear_and_ipv6_never_sets_it() {
    for v4 in [true, false] {
        let mut pair = Pair::new();
        pair.send(
            &Spec {
                v4,
                ip_id: 0,
                ..Spec::default()
            }
            .build(),
        );
        assert_eq!(
            pair.send(
                &Spec {
                    v4,
                    ip_id: 0,
                    seq: 1100,
                    ..Spec::default()
                }
                .build()
            ),
            C
        );
        assert_eq!(pair.frame[1] & flag::I, 0);
    }
}

#[test]
fn random_ip_ids_travel_whole() {
    let mut pair = Pair::new();
    let ids = [
        0x1234u16, 0x9F00, 0x0321, 0xC0DE, 0x4242, 0xBEEF, 0x0102, 0x7777, 0xE001, 0x3003,
    ];
    let mut kinds = Vec::new();
    for (i, &ip_id) in ids.iter().enumerate() {
        kinds.push(
            pair.send(
                &Spec {
                    ip_id,
                    seq: 1000 + 100 * i as u32,
                    ..Spec::default()
                }
                .build(),
            ),
        );
    }
    // Once two jumps are seen the stream moves to a random-IP-ID context (a fresh CID).
    assert_eq!(pair.c.stats().identity_changes, 1);
    let last = pair.frame.clone();
    assert_eq!(kinds.last(), Some(&C));
    assert_eq!(last[0], 1, "fresh CID");
    assert_eq!(last[1] & flag::I, 0);
    assert_eq!(&last[4..6], &0x3003u16.to_be_bytes());
}

#[test]
fn a_changed_ttl_moves_the_stream_to_a_fresh_cid() {
    let mut pair = Pair::new();
    pair.send(&Spec::default().build());
    pair.send(
        &Spec {
            seq: 1100,
            ..Spec::default()
        }
        .build(),
    );
    let moved = Spec {
        seq: 1200,
        ttl: 63,
        ..Spec::default()
    };
    assert_eq!(pair.send(&moved.build()), U);
    assert_eq!(pair.frame[3], 1, "CID 1 in the IPv4 length field");
    // A COMPRESSED_TCP for the old CID can no longer be produced; the old context stays stale.
    assert_eq!(pair.c.stats().identity_changes, 1);
}

#[test]
fn retransmission_of_an_uncompressed_segment_goes_uncompressed() {
    let mut pair = Pair::new();
    pair.send(&Spec::default().build()); // U at seq 1000
    pair.send(
        &Spec {
            seq: 1100,
            ip_id: 0x1235,
            ..Spec::default()
        }
        .build(),
    ); // C
    let rtx = Spec {
        seq: 1000,
        ip_id: 0x1236,
        ..Spec::default()
    };
    assert_eq!(pair.send(&rtx.build()), U);
}

#[test]
fn retransmissions_and_reordered_packets_do_not_become_references() {
    let mut pair = Pair::new();
    for i in 0..12u32 {
        pair.send(
            &Spec {
                seq: 1000 + 100 * i,
                ip_id: i as u16,
                ..Spec::default()
            }
            .build(),
        );
    }
    let reference = |d: &TarocDecompressor| d.reference_of(0).unwrap().seq;
    assert_eq!(reference(&pair.d), 2100);
    // 1600 went compressed (1000, 1200, 1500 and 2000 went as UNCOMPRESSED_TCP, whose
    // retransmissions go uncompressed and, as draft 7.2 b says, always become the reference).
    assert_eq!(
        pair.send(
            &Spec {
                seq: 1600,
                ip_id: 12,
                ..Spec::default()
            }
            .build()
        ),
        C
    );
    assert_eq!(
        reference(&pair.d),
        2100,
        "older packet delivered, reference kept"
    );
    pair.send(
        &Spec {
            seq: 2200,
            ip_id: 13,
            ..Spec::default()
        }
        .build(),
    );
    assert_eq!(reference(&pair.d), 2200);
}

#[test]
fn decompressor_refuses_what_it_cannot_verify() {
    let mut d = TarocDecompressor::new(TarocConfig::default());
    let mut out = Vec::new();
    assert_eq!(
        d.decompress(C, &[0, 0, 0, 0], &mut out),
        Err(DropReason::NoContext)
    );
    assert_eq!(
        d.decompress(C, &[0, 0], &mut out),
        Err(DropReason::Malformed)
    );
    assert_eq!(
        d.decompress(U, &[0x45, 0, 0], &mut out),
        Err(DropReason::Malformed)
    );
    assert_eq!(d.decompress(U, &[], &mut out), Err(DropReason::Malformed));
    let mut pair = Pair::new();
    pair.send(&Spec::default().build());
    let frame = {
        pair.c.compress(
            &Spec {
                seq: 1100,
                ..Spec::default()
            }
            .build(),
            &mut pair.frame,
        );
        pair.frame.clone()
    };
    // Corrupt the TCP checksum bytes: the rebuilt packet cannot verify.
    let mut bad = frame.clone();
    bad[2] ^= 0x55;
    assert_eq!(
        pair.d.decompress(C, &bad, &mut out),
        Err(DropReason::ChecksumMismatch)
    );
    // Unknown context flags in an UNCOMPRESSED_TCP.
    let mut u = Spec::default().build();
    u[2] = 0x80;
    assert_eq!(
        pair.d.decompress(U, &u, &mut out),
        Err(DropReason::Malformed)
    );
    // The good frame still decodes: a refused frame never changes the context.
    assert_eq!(pair.d.decompress(C, &frame, &mut out), Ok(()));
}

#[test]
fn least_recently_used_context_is_reused_when_cids_run_out() {
    let config = TarocConfig {
        max_contexts: 2,
        ..TarocConfig::default()
    };
    let mut pair = Pair {
        c: TarocCompressor::new(config.clone()),
        d: TarocDecompressor::new(config),
        frame: Vec::new(),
        out: Vec::new(),
    };
    let flow = |port: u8, seq: u32| {
        let mut p = Spec {
            seq,
            ..Spec::default()
        }
        .build();
        p[21] = port; // source port low byte: a different stream; fix the checksum
        p[36..38].fill(0);
        let c = Sum::new()
            .add_pseudo_header(
                [10, 0, 0, 1].into(),
                [10, 0, 0, 2].into(),
                6,
                (p.len() - 20) as u32,
            )
            .add_bytes(&p[20..])
            .checksum();
        p[36..38].copy_from_slice(&c.to_be_bytes());
        p
    };
    pair.send(&flow(1, 1000));
    pair.send(&flow(2, 1000));
    pair.send(&flow(1, 1100));
    assert_eq!(pair.send(&flow(3, 1000)), U); // evicts stream 2 (least recently used)
    assert_eq!(pair.frame[3], 1);
    assert_eq!(pair.c.stats().evictions, 1);
    pair.send(&flow(1, 1200));
    assert_eq!(pair.frame[3], 0, "stream 1 kept CID 0");
    assert_eq!(pair.send(&flow(2, 1100)), U);
    assert_eq!(
        pair.frame[3], 1,
        "stream 2 took the least recently used CID (stream 3's)"
    );
    assert_eq!(pair.c.stats().evictions, 2);
}
