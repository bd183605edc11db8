//! What goes uncompressed or as TYPE_IP, connection numbers and LRU slots, and the decoder
//! against the encoder.

use super::*;

#[test]
fn unchanging_fields_that_change_send_uncompressed() {
    let base = Pkt {
        data: data(20),
        ..Pkt::default()
    };
    let next = |p: &Pkt| Pkt {
        seq: 1020,
        id: 101,
        ..p.clone()
    };
    let changed: [(&str, Pkt); 10] = [
        (
            "TTL",
            Pkt {
                ttl: 63,
                ..next(&base)
            },
        ),
        (
            "TOS",
            Pkt {
                tos: 0x10,
                ..next(&base)
            },
        ),
        (
            "ECN",
            Pkt {
                tos: 0x01,
                ..next(&base)
            },
        ),
        (
            "DF",
            Pkt {
                frag: 0,
                ..next(&base)
            },
        ),
        // Appendix A.2 compares the whole flags word (Linux slhc only DF).
        (
            "reserved IP flag",
            Pkt {
                frag: 0xC000,
                ..next(&base)
            },
        ),
        (
            "IP options",
            Pkt {
                ip_options: vec![1, 1, 1, 0],
                ..next(&base)
            },
        ),
        (
            "TCP options",
            Pkt {
                tcp_options: vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2],
                ..next(&base)
            },
        ),
        // Difference 2: bits RFC 1144 does not know.
        (
            "CWR",
            Pkt {
                flags: flags::ACK | flags::CWR,
                ..next(&base)
            },
        ),
        (
            "ECE",
            Pkt {
                flags: flags::ACK | flags::ECE,
                ..next(&base)
            },
        ),
        (
            "AE",
            Pkt {
                reserved: 1,
                ..next(&base)
            },
        ),
    ];
    for (what, p) in changed {
        let mut link = Link::new(VjConfig::default());
        link.uncompressed(&base, 0);
        let frame = link.send(&p, FrameKind::UncompressedTcp);
        assert_eq!(frame[9], 0, "{what}");
        // Unchanged from then on: compressed again.
        let p3 = Pkt {
            seq: p.seq + 20,
            id: 102,
            ..p.clone()
        };
        link.compressed(&p3, &header(0x0F, None, &p3, &[]));
    }
    // The same options in both packets compress (only the fields compared must be equal).
    let with_options = Pkt {
        ip_options: vec![1, 1, 1, 0],
        tcp_options: vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2],
        ..base.clone()
    };
    let mut link = Link::new(VjConfig::default());
    link.uncompressed(&with_options, 0);
    let p2 = next(&with_options);
    link.compressed(&p2, &header(0x0F, None, &p2, &[]));
}

#[test]
fn bad_ip_header_checksum_goes_as_type_ip() {
    // Difference 3: the decompressor would compute a correct checksum for COMPRESSED_TCP, and
    // refuse the UNCOMPRESSED_TCP frame.
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt {
        data: data(20),
        ..Pkt::default()
    };
    link.uncompressed(&p1, 0);
    let mut packet = Pkt {
        seq: 1020,
        id: 101,
        ..p1.clone()
    }
    .build();
    packet[10] ^= 0x55;
    link.send_bytes(&packet, FrameKind::Ip);
    // The state did not change: the next packet is compressed against p1.
    let p3 = Pkt {
        seq: 1020,
        id: 102,
        ..p1.clone()
    };
    link.compressed(&p3, &header(0x0F | NEW_I, None, &p3, &[2]));
}

#[test]
fn what_goes_as_type_ip() {
    let mut link = Link::new(VjConfig::default());
    let base = Pkt {
        data: data(20),
        ..Pkt::default()
    };
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    for (what, f) in [
        ("SYN", flags::SYN),
        ("SYN-ACK", flags::SYN | flags::ACK),
        ("FIN", flags::FIN | flags::ACK),
        ("RST", flags::RST | flags::ACK),
        ("no ACK", flags::PSH),
    ] {
        cases.push((
            what,
            Pkt {
                flags: f,
                ..base.clone()
            }
            .build(),
        ));
    }
    cases.push((
        "MF",
        Pkt {
            frag: 0x2000,
            ..base.clone()
        }
        .build(),
    ));
    cases.push((
        "offset",
        Pkt {
            frag: 0x0001,
            ..base.clone()
        }
        .build(),
    ));
    let mut udp = base.build();
    udp[9] = 17;
    cases.push(("UDP", udp));
    let packet = base.build();
    cases.push(("cut short", packet[..packet.len() - 1].to_vec()));
    let mut padded = packet.clone();
    padded.push(0);
    cases.push(("padded", padded));
    cases.push(("headers only in part", packet[..30].to_vec()));
    let mut v6 = vec![0x60; 60];
    v6[4..6].copy_from_slice(&[0, 20]);
    v6[6] = 6;
    cases.push(("IPv6", v6));
    cases.push(("empty", vec![]));
    cases.push(("garbage", vec![0x45, 0xff, 0x00]));
    for (what, packet) in cases {
        let frame = link.send_bytes(&packet, FrameKind::Ip);
        assert_eq!(frame, packet, "{what}");
    }
    // None of them touched the state: the first compressible packet is the first
    // UNCOMPRESSED_TCP, on slot 0.
    link.uncompressed(&base, 0);
}

#[test]
fn connection_number_is_sent_when_it_changes() {
    for compress_cid in [true, false] {
        let mut link = Link::new(VjConfig {
            compress_cid,
            ..VjConfig::default()
        });
        let a1 = Pkt {
            data: data(10),
            ..Pkt::default()
        };
        let b1 = Pkt {
            sport: 2000,
            ..a1.clone()
        };
        link.uncompressed(&a1, 0);
        link.uncompressed(&b1, 1);
        let next = |p: &Pkt, n: u32| Pkt {
            seq: p.seq + 10 * n,
            id: p.id + n as u16,
            ..p.clone()
        };
        // Connection 0 after 1: C set, `4F 00 c c`.
        let a2 = next(&a1, 1);
        link.compressed(&a2, &header(0x4F, Some(0), &a2, &[]));
        // Connection 0 again: C clear if connection numbers are compressed.
        let a3 = next(&a1, 2);
        if compress_cid {
            link.compressed(&a3, &header(0x0F, None, &a3, &[]));
        } else {
            link.compressed(&a3, &header(0x4F, Some(0), &a3, &[]));
        }
        // Connection 1: C set.
        let b2 = next(&b1, 1);
        link.compressed(&b2, &header(0x4F, Some(1), &b2, &[]));
    }
}

#[test]
fn least_recently_used_slot_is_reused() {
    let mut link = Link::new(VjConfig {
        slots: 3,
        ..VjConfig::default()
    });
    let conn = |port: u16, n: u32| Pkt {
        sport: port,
        seq: 1000 + 10 * n,
        id: 100 + n as u16,
        data: data(10),
        ..Pkt::default()
    };
    link.uncompressed(&conn(1, 0), 0);
    link.uncompressed(&conn(2, 0), 1);
    link.uncompressed(&conn(3, 0), 2);
    // Connection 1 used again: most recently used; 2 is now the least recently used.
    let p = conn(1, 1);
    link.compressed(&p, &header(0x4F, Some(0), &p, &[]));
    // A fourth connection takes slot 1 (connection 2's).
    link.uncompressed(&conn(4, 0), 1);
    // Connection 2 comes back: slot 2 (connection 3's) is the oldest now.
    link.uncompressed(&conn(2, 1), 2);
    // Connection 1 still has slot 0.
    let p = conn(1, 2);
    link.compressed(&p, &header(0x4F, Some(0), &p, &[]));
    // One slot: every change of connection is a new UNCOMPRESSED_TCP on slot 0.
    let mut link = Link::new(VjConfig {
        slots: 0,
        ..VjConfig::default()
    });
    link.uncompressed(&conn(1, 0), 0);
    link.uncompressed(&conn(2, 0), 0);
    link.uncompressed(&conn(1, 1), 0);
    let p = conn(1, 2);
    link.compressed(&p, &header(0x0F, None, &p, &[]));
}

#[test]
fn decoder_reads_what_the_encoder_writes() {
    let headers = [
        CompressedHeader {
            connection: Some(7),
            push: true,
            checksum: 0xBEEF,
            changes: Changes::Fields {
                urgent: Some(0),
                window: Some(0xFFFF),
                ack: Some(256),
                seq: None,
            },
            ip_id: Some(0),
        },
        CompressedHeader {
            connection: None,
            push: false,
            checksum: 1,
            changes: Changes::EchoedInteractive,
            ip_id: Some(3),
        },
        CompressedHeader {
            connection: None,
            push: false,
            checksum: 1,
            changes: Changes::NONE,
            ip_id: None,
        },
    ];
    let expected: [&[u8]; 3] = [
        &[
            0x77, 7, 0xBE, 0xEF, 0, 0, 0, 0, 0xff, 0xff, 0, 1, 0, 0, 0, 0,
        ],
        &[0x2B, 0, 1, 3],
        &[0x00, 0, 1],
    ];
    for (h, bytes) in headers.iter().zip(expected) {
        let mut out = Vec::new();
        assert!(h.encode(&mut out));
        assert_eq!(out, bytes);
        out.extend_from_slice(b"data");
        assert_eq!(CompressedHeader::decode(&out), Some((*h, bytes.len())));
        for cut in 0..bytes.len() {
            assert_eq!(CompressedHeader::decode(&bytes[..cut]), None);
        }
    }
    // The general case cannot say S W U or S A W U.
    let ambiguous = CompressedHeader {
        changes: Changes::Fields {
            urgent: Some(1),
            window: Some(1),
            ack: None,
            seq: Some(1),
        },
        ..headers[2]
    };
    let mut out = Vec::new();
    assert!(!ambiguous.encode(&mut out));
    assert!(out.is_empty());
    // The SLIP type bit (0x80) is ignored.
    assert_eq!(
        CompressedHeader::decode(&[0x8F, 0, 1]),
        CompressedHeader::decode(&[0x0F, 0, 1])
    );
}

#[test]
fn debug_and_clone() {
    let c = VjCompressor::new(VjConfig::default());
    let d = VjDecompressor::new(VjConfig::default());
    let (c2, d2) = (c.clone(), d.clone());
    assert!(format!("{c2:?}").starts_with("VjCompressor"));
    assert!(format!("{d2:?}").starts_with("VjDecompressor"));
    assert_eq!(VjConfig::default().slot_count(), 16);
    assert_eq!(
        VjConfig {
            slots: 1000,
            ..VjConfig::default()
        }
        .slot_count(),
        256
    );
}
