//! Golden tests of the RFC 1144 formats on hand-built packets, with the expected bytes worked
//! out from the RFC's text: masks, specials, deltas, the urgent pointer.

use super::*;

#[test]
fn masks_and_specials_are_the_rfc_values() {
    // Appendix A.1.
    assert_eq!(
        (NEW_C, NEW_I, TCP_PUSH_BIT, NEW_S, NEW_A, NEW_W, NEW_U),
        (0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01)
    );
    assert_eq!((SPECIAL_I, SPECIAL_D, SPECIALS_MASK), (0x0B, 0x0F, 0x0F));
    assert_eq!(
        (ppp::IP, ppp::VJ_COMPRESSED_TCP, ppp::VJ_UNCOMPRESSED_TCP),
        (0x21, 0x2d, 0x2f)
    );
    for kind in [
        FrameKind::Ip,
        FrameKind::UncompressedTcp,
        FrameKind::CompressedTcp,
    ] {
        assert_eq!(
            kind_of_ppp_protocol(ppp_protocol(kind).unwrap()),
            Some(kind)
        );
    }
    assert_eq!(ppp_protocol(FrameKind::FullHeader), None);
}

#[test]
fn first_packet_is_uncompressed_with_connection_number_in_protocol_field() {
    let mut link = Link::new(VjConfig::default());
    let p = Pkt {
        data: data(10),
        ..Pkt::default()
    };
    // Section 3.2.3: byte 9 (protocol) becomes the connection number; nothing else changes,
    // not even the IP header checksum.
    link.uncompressed(&p, 0);
    // A second connection takes the next slot (Appendix A.4 links them so that 0, 1, 2, … are
    // used first).
    link.uncompressed(
        &Pkt {
            sport: 1025,
            ..p.clone()
        },
        1,
    );
    link.uncompressed(
        &Pkt {
            dst: [10, 0, 0, 3],
            ..p.clone()
        },
        2,
    );
}

#[test]
fn unidirectional_data_is_special_d() {
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt {
        data: data(100),
        ..Pkt::default()
    };
    link.uncompressed(&p1, 0);
    // Sequence number up by the previous data length, IP ID up by one, nothing else: `0F c c`,
    // no deltas; C clear because connection 0 was the last one sent.
    let p2 = Pkt {
        seq: 1100,
        id: 101,
        ..p1.clone()
    };
    link.compressed(&p2, &header(0x0F, None, &p2, &[]));
    // With PSH: `1F c c` (the P bit).
    let p3 = Pkt {
        seq: 1200,
        id: 102,
        flags: flags::ACK | flags::PSH,
        ..p1.clone()
    };
    link.compressed(&p3, &header(0x1F, None, &p3, &[]));
    // PSH clear again: the decompressor clears it.
    let p4 = Pkt {
        seq: 1300,
        id: 103,
        ..p1.clone()
    };
    link.compressed(&p4, &header(0x0F, None, &p4, &[]));
}

#[test]
fn echoed_interactive_traffic_is_special_i() {
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt {
        data: data(1),
        ..Pkt::default()
    };
    link.uncompressed(&p1, 0);
    // Sequence and ack both up by the previous data length (1): `0B c c d` (section 3.2.2).
    let p2 = Pkt {
        seq: 1001,
        ack: 5001,
        id: 101,
        ..p1.clone()
    };
    link.compressed(&p2, &header(0x0B, None, &p2, &[]));
    // Both up by 1, the previous packet's data length, again: SPECIAL_I, whatever this
    // packet's own length (3).
    let p3 = Pkt {
        seq: 1002,
        ack: 5002,
        id: 102,
        data: data(3),
        ..p1.clone()
    };
    link.compressed(&p3, &header(0x0B, None, &p3, &[]));
    let p4 = Pkt {
        seq: 1005,
        ack: 5004,
        id: 103,
        data: data(1),
        ..p1.clone()
    };
    // S and A differ: the general encoding, A then S.
    link.compressed(&p4, &header(0x0C, None, &p4, &[2, 3]));
}

#[test]
fn acks_window_and_ip_id_deltas() {
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt::default();
    link.uncompressed(&p1, 0);
    // An ack of 1460 bytes: `04 c c 00 05 b4` (1460 needs the 0 + 2 octet form).
    let p2 = Pkt {
        ack: 5000 + 1460,
        id: 101,
        ..p1.clone()
    };
    link.compressed(&p2, &header(0x04, None, &p2, &[0x00, 0x05, 0xb4]));
    // An ack of 200 and a window 1 smaller: W is two's complement, 0xffff: `06 c c 00 ff ff c8`
    // (window before ack).
    let p3 = Pkt {
        ack: 5000 + 1460 + 200,
        win: 8191,
        id: 102,
        ..p1.clone()
    };
    link.compressed(&p3, &header(0x06, None, &p3, &[0x00, 0xff, 0xff, 200]));
    // IP ID up by 5: I bit and the delta after the others: `24 c c 0a 05` (ack 10).
    let p4 = Pkt {
        ack: 5000 + 1660 + 10,
        win: 8191,
        id: 107,
        ..p1.clone()
    };
    link.compressed(&p4, &header(0x24, None, &p4, &[10, 5]));
    // IP ID unchanged: a delta of zero is sent as `00 00 00` (ENCODEZ), ack of 255 in one octet.
    let p5 = Pkt {
        ack: 5000 + 1670 + 255,
        win: 8191,
        id: 107,
        ..p1.clone()
    };
    link.compressed(&p5, &header(0x24, None, &p5, &[255, 0, 0, 0]));
    // IP ID down by 2: 0xfffe.
    let p6 = Pkt {
        ack: 5000 + 1925 + 256,
        win: 8191,
        id: 105,
        ..p1.clone()
    };
    link.compressed(
        &p6,
        &header(0x24, None, &p6, &[0x00, 0x01, 0x00, 0x00, 0xff, 0xfe]),
    );
}

#[test]
fn ip_id_wrap_is_sent_as_a_delta_of_one() {
    // Appendix A.2 takes `ntohs(ip_id) - ntohs(saved ip_id)` in int: from 65535 to 0 that is
    // -65535, not 1, so the I bit is set and (u_short)-65535 = 1 is sent. Linux slhc does the
    // same.
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt {
        id: 0xFFFF,
        data: data(10),
        ..Pkt::default()
    };
    link.uncompressed(&p1, 0);
    let p2 = Pkt {
        id: 0,
        seq: 1010,
        ..p1.clone()
    };
    link.compressed(&p2, &header(0x2F, None, &p2, &[0x01]));
}

#[test]
fn special_case_patterns_in_real_changes_go_uncompressed() {
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt {
        data: data(10),
        ..Pkt::default()
    };
    link.uncompressed(&p1, 0);
    // URG with window and sequence changes reads as S W U = SPECIAL_I: uncompressed.
    let p2 = Pkt {
        seq: 1010,
        win: 9000,
        flags: flags::ACK | flags::URG,
        urg: 5,
        id: 101,
        ..p1.clone()
    };
    link.uncompressed(&p2, 0);
    // And S A W U: uncompressed too.
    let p3 = Pkt {
        seq: 1020,
        ack: 5010,
        win: 9100,
        flags: flags::ACK | flags::URG,
        urg: 5,
        id: 102,
        ..p1.clone()
    };
    link.uncompressed(&p3, 0);
}

#[test]
fn urgent_pointer() {
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt {
        data: data(10),
        ..Pkt::default()
    };
    link.uncompressed(&p1, 0);
    // URG set: U and the pointer itself, a pointer of 0 as `00 00 00`: `21 c c 00 00 00 09`
    // (window? no; ack? no; seq? unchanged; IP ID +9).
    let p2 = Pkt {
        flags: flags::ACK | flags::URG,
        urg: 0,
        id: 109,
        ..p1.clone()
    };
    link.compressed(&p2, &header(0x21, None, &p2, &[0, 0, 0, 9]));
    // URG set, pointer 7, ack up 3: `05 c c 07 03`.
    let p3 = Pkt {
        flags: flags::ACK | flags::URG,
        urg: 7,
        ack: 5003,
        id: 110,
        ..p1.clone()
    };
    link.compressed(&p3, &header(0x05, None, &p3, &[7, 3]));
    // URG clear with the same pointer: U clear, the decompressor clears URG: `04 c c 01`.
    let p4 = Pkt {
        urg: 7,
        ack: 5004,
        id: 111,
        ..p1.clone()
    };
    link.compressed(&p4, &header(0x04, None, &p4, &[1]));
    // URG clear but the pointer changed: uncompressed (section 3.2.3).
    let p5 = Pkt {
        urg: 8,
        ack: 5005,
        id: 112,
        ..p1.clone()
    };
    link.uncompressed(&p5, 0);
}

#[test]
fn special_cases_are_not_used_after_a_packet_with_urg() {
    // Difference 4: SPECIAL_D would leave the saved URG flag set; the general encoding clears it.
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt {
        data: data(10),
        flags: flags::ACK | flags::URG,
        urg: 3,
        ..Pkt::default()
    };
    link.uncompressed(&p1, 0);
    let p2 = Pkt {
        seq: 1010,
        id: 101,
        urg: 3,
        flags: flags::ACK,
        ..p1.clone()
    };
    link.compressed(&p2, &header(0x08, None, &p2, &[10]));
    // URG clear in the saved header again: SPECIAL_D.
    let p3 = Pkt {
        seq: 1020,
        id: 102,
        ..p2.clone()
    };
    link.compressed(&p3, &header(0x0F, None, &p3, &[]));
}

#[test]
fn retransmissions_and_large_jumps_go_uncompressed() {
    let mut link = Link::new(VjConfig::default());
    let p1 = Pkt {
        data: data(100),
        ..Pkt::default()
    };
    link.uncompressed(&p1, 0);
    // Sequence number back (a retransmission): negative delta.
    let p2 = Pkt {
        seq: 900,
        id: 101,
        ..p1.clone()
    };
    link.uncompressed(&p2, 0);
    // Sequence number 65536 ahead: more than 16 bits.
    let p3 = Pkt {
        seq: 900 + 65536,
        id: 102,
        ..p1.clone()
    };
    link.uncompressed(&p3, 0);
    // 65535 ahead fits: `08 c c 00 ff ff`.
    let p4 = Pkt {
        seq: 900 + 65536 + 65535,
        id: 103,
        ..p1.clone()
    };
    link.compressed(&p4, &header(0x08, None, &p4, &[0, 0xff, 0xff]));
    // Ack back.
    let p5 = Pkt {
        seq: 900 + 65536 + 65535,
        ack: 4999,
        id: 104,
        ..p1.clone()
    };
    link.uncompressed(&p5, 0);
    // Same packet again (nothing changed, the previous one had data): a retransmission.
    let p6 = Pkt { id: 105, ..p5 };
    link.uncompressed(&p6, 0);
}

#[test]
fn nothing_changed() {
    let mut link = Link::new(VjConfig::default());
    let ack = Pkt::default();
    link.uncompressed(&ack, 0);
    // A duplicate ack (no data, nothing changed): uncompressed, in case the other side missed
    // the compressed version (section 4.2).
    let dup = Pkt {
        id: 101,
        ..ack.clone()
    };
    link.uncompressed(&dup, 0);
    // Data after a dataless ack with the same numbers: compressed, nothing but P: `10 c c`.
    let data_packet = Pkt {
        id: 102,
        flags: flags::ACK | flags::PSH,
        data: data(37),
        ..ack.clone()
    };
    link.compressed(&data_packet, &header(0x10, None, &data_packet, &[]));
    // The same again (the previous packet had data): a retransmission, uncompressed.
    let again = Pkt {
        id: 103,
        ..data_packet.clone()
    };
    link.uncompressed(&again, 0);
}
