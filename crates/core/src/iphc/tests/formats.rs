//! Golden formats.

use super::*;

#[test]
fn full_header_tcp_has_the_cid_in_the_ipv4_total_length() {
    let mut pair = Pair::new(IphcConfig::default());
    let p = v4_tcp(V4::new(7), &Tcp::new(1000, 5000).payload(10));
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    // Section 5.3.1: first length field = | pkt nr LSB (0) | CID (0) |.
    let mut expected = p.clone();
    expected[2..4].copy_from_slice(&[0x00, 0x00]);
    assert_eq!(frame, expected);

    // A second connection takes the next CID.
    let mut other = Tcp::new(1, 2).payload(3);
    other.sport = 40001;
    let q = v4_tcp(V4::new(9), &other);
    let (kind, frame) = pair.pass(&q);
    assert_eq!(kind, FrameKind::FullHeader);
    let mut expected = q.clone();
    expected[2..4].copy_from_slice(&[0x00, 0x01]);
    assert_eq!(frame, expected);
}

#[test]
fn full_header_tcp_with_two_length_fields() {
    // IPv4/TCP tunnelled in IPv6: the IPv6 Payload Length is the first length field, the inner
    // IPv4 Total Length the second, | pkt nr MSB (0) | 0 |.
    let mut pair = Pair::new(IphcConfig::default());
    let inner = v4_tcp(V4::new(3), &Tcp::new(10, 20).payload(5));
    let p = V6::new().wrap(4, &inner);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    let mut expected = p.clone();
    expected[4..6].copy_from_slice(&[0x00, 0x00]);
    expected[42..44].copy_from_slice(&[0x00, 0x00]);
    assert_eq!(frame, expected);
}

#[test]
fn full_header_non_tcp_8_bit_cid_and_generation() {
    let mut pair = Pair::new(IphcConfig::default());
    // Stream 0, then stream 1 (another source port).
    pair.pass(&v4_udp(V4::new(1), 1000, b"first", true));
    let p = v4_udp(V4::new(2), 1001, b"second", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    // Section 5.3.2: | 0 | D=0 | generation 0 | CID 1 |, second length field (UDP) 0.
    let mut expected = p.clone();
    expected[2..4].copy_from_slice(&[0x00, 0x01]);
    expected[24..26].copy_from_slice(&[0x00, 0x00]);
    assert_eq!(frame, expected);

    // A TTL change is a new context version: generation 1.
    let mut ip = V4::new(3);
    ip.ttl = 63;
    let p = v4_udp(ip, 1001, b"third", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    let mut expected = p.clone();
    expected[2..4].copy_from_slice(&[0x01, 0x01]);
    expected[24..26].copy_from_slice(&[0x00, 0x00]);
    assert_eq!(frame, expected);

    // The frame reads back as what it says.
    let mut layout = Layout::default();
    assert!(chain::parse(&frame, 168, &mut layout));
    assert_eq!(
        full_header::read(&frame, &layout),
        Ok(FullId::NonTcp {
            cid: 1,
            generation: 1
        })
    );
}

#[test]
fn full_header_non_tcp_16_bit_cid() {
    let config = IphcConfig {
        non_tcp_space: 300,
        ..IphcConfig::default()
    };
    let mut pair = Pair::new(config);
    for port in 0..256u16 {
        pair.pass(&v4_udp(V4::new(port), 2000 + port, b"x", true));
    }
    // The 257th stream gets CID 256: | 1 | D=0 | generation 0 | 0 |, then the CID.
    let p = v4_udp(V4::new(0x4242), 5000, b"sixteen", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    let mut expected = p.clone();
    expected[2..4].copy_from_slice(&[0x80, 0x00]);
    expected[24..26].copy_from_slice(&[0x01, 0x00]);
    assert_eq!(frame, expected);

    // Its compressed header: | msb of CID | 1 | D | generation | lsb of CID |, then the RANDOM
    // fields: IPv4 Identification and UDP checksum.
    let p = v4_udp(V4::new(0x4243), 5000, b"sixteen", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedNonTcp);
    assert_eq!(
        frame,
        cat(&[&[0x01, 0x80, 0x00, 0x42, 0x43], &p[26..28], b"sixteen"])
    );

    // A stream with a single length field (IPv4/ICMP) cannot carry a 16-bit CID: it gets one
    // below 256 (the least recently used).
    let icmp = V4::new(1).wrap(1, &[8, 0, 0xf7, 0xff, 0, 0, 0, 0]);
    let (kind, frame) = pair.pass(&icmp);
    assert_eq!(kind, FrameKind::FullHeader);
    assert_eq!(frame[2], 0x01, "generation 1 of a reused CID, 8-bit format");
    assert_eq!(frame[3], 0x00, "CID 0, the least recently used");
}

/// A pure-ACK stream with timestamps, to which each test step applies one change.
fn flag_stream() -> (Tcp, V4) {
    (Tcp::new(1000, 5000).timestamps(7, 9), V4::new(100))
}

#[test]
fn compressed_tcp_each_change_mask_bit() {
    let mut pair = Pair::new(no_guesses());
    let (mut t, mut ip) = flag_stream();
    assert_eq!(pair.pass(&v4_tcp(ip, &t)).0, FrameKind::FullHeader);
    let cid = 0u8;
    // Each step: a change, and the frame section 6 a) prescribes. The TCP checksum is the
    // packet's own (octets 36..38 of an IPv4/TCP packet); the IPv4 Identification advances by
    // one unless the I step says otherwise.
    let mut step = |t: &Tcp, ip: &mut V4, id_step: u16, expected_tail: &[u8], mask: u8| {
        ip.id = ip.id.wrapping_add(id_step);
        let p = v4_tcp(*ip, t);
        let (kind, frame) = pair.pass(&p);
        assert_eq!(kind, FrameKind::CompressedTcp, "mask {mask:#04x}");
        assert_eq!(
            frame,
            cat(&[&[cid, mask], &p[36..38], expected_tail]),
            "mask {mask:#04x}"
        );
    };
    // S: sequence delta 1000, three octets (0, then 16 bits).
    t.seq += 1000;
    step(&t, &mut ip, 1, &[0x00, 0x03, 0xE8], 0x08);
    // A: acknowledgment delta 5.
    t.ack += 5;
    step(&t, &mut ip, 1, &[5], 0x04);
    // W: window delta 256.
    t.window += 256;
    step(&t, &mut ip, 1, &[0x00, 0x01, 0x00], 0x02);
    // U: URG with urgent pointer 7 (an absolute value).
    t.flags = ACK | URG;
    t.urgent = 7;
    step(&t, &mut ip, 1, &[7], 0x01);
    // P (with A, so the packet changes a field the TCP checksum covers).
    t.flags = ACK | PSH;
    t.ack += 1;
    step(&t, &mut ip, 1, &[1], 0x14);
    // I: the Identification advanced by 3; its delta comes after the ACK delta.
    t.flags = ACK;
    t.ack += 1;
    step(&t, &mut ip, 3, &[1, 3], 0x24);
    // O: new timestamps; the whole options field comes last.
    t.ack += 1;
    t = Tcp {
        options: Tcp::new(0, 0).timestamps(8, 10).options,
        ..t
    };
    let mut tail = vec![1];
    tail.extend_from_slice(&t.options);
    step(&t, &mut ip, 1, &tail, 0x44);
    // R: ECE set and ECN CE in the TOS octet. R-octet = Reserved (000001: ECE is the last of the
    // six bits) << 2 | ECN (11) = 0x07, right after the RANDOM fields (none here).
    t.flags = ACK | ECE;
    ip.tos = 0x03;
    t.ack += 1;
    step(&t, &mut ip, 1, &[0x07, 1], 0x84);
    // The R-octet did not update the context: back to ECE clear and Not-ECT, no R.
    t.flags = ACK;
    ip.tos = 0;
    t.ack += 1;
    step(&t, &mut ip, 1, &[1], 0x04);
    // Once more with CE: R again, since the context still holds Not-ECT.
    ip.tos = 0x03;
    t.ack += 1;
    step(&t, &mut ip, 1, &[0x03, 1], 0x84);
}

#[test]
fn compressed_tcp_special_encodings_of_rfc_1144() {
    let mut pair = Pair::new(IphcConfig::default());
    let mut t = Tcp::new(1000, 5000).payload(100);
    let mut ip = V4::new(1);
    assert_eq!(pair.pass(&v4_tcp(ip, &t)).0, FrameKind::FullHeader);
    // Sequence number advanced by the previous payload: S W U, nothing else.
    t.seq += 100;
    t = t.payload(100);
    ip.id += 1;
    let p = v4_tcp(ip, &t);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedTcp);
    assert_eq!(frame, cat(&[&[0, 0x0B], &p[36..38], &t.payload]));
    // Sequence and acknowledgment numbers both advanced by it: S A W U.
    t.seq += 100;
    t.ack += 100;
    t = t.payload(100);
    ip.id += 1;
    let p = v4_tcp(ip, &t);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedTcp);
    assert_eq!(frame, cat(&[&[0, 0x0F], &p[36..38], &t.payload]));
    // Real changes S W U would read as SPECIAL_D: COMPRESSED_TCP_NODELTA instead, which is
    // CID, the IPv4 Identification (RANDOM in this format) and the TCP header from the sequence
    // number on.
    t.seq += 100;
    t.window += 1;
    t.flags = ACK | URG;
    t.urgent = 1;
    t = t.payload(100);
    ip.id += 1;
    let p = v4_tcp(ip, &t);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedTcpNoDelta);
    assert_eq!(frame, cat(&[&[0], &p[4..6], &p[24..]]));
}

#[test]
fn nodelta_for_fin_and_full_header_for_retransmissions() {
    let mut pair = Pair::new(IphcConfig::default());
    let mut t = Tcp::new(1000, 5000).payload(100);
    let mut ip = V4::new(1);
    pair.pass(&v4_tcp(ip, &t));
    t.seq += 100;
    ip.id += 1;
    assert_eq!(pair.pass(&v4_tcp(ip, &t)).0, FrameKind::CompressedTcp);
    // A retransmission of the first segment: FULL_HEADER (section 3.2), never NODELTA.
    let mut again = Tcp::new(1000, 5000).payload(100);
    again.window = t.window;
    ip.id += 1;
    assert_eq!(pair.pass(&v4_tcp(ip, &again)).0, FrameKind::FullHeader);
    // FIN: not inferable in COMPRESSED_TCP; NODELTA carries it.
    t.seq += 100;
    t.flags = ACK | FIN;
    t = t.payload(0);
    ip.id += 1;
    let p = v4_tcp(ip, &t);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedTcpNoDelta);
    assert_eq!(frame, cat(&[&[0], &p[4..6], &p[24..]]));
    // SYN: always a full header (a new connection).
    let mut syn = Tcp::new(77, 0);
    syn.flags = SYN;
    ip.id += 1;
    assert_eq!(pair.pass(&v4_tcp(ip, &syn)).0, FrameKind::FullHeader);
}

/// `iphc-plain`'s rule (RFC 1144's retransmitted ACK): a duplicate ACK goes as a full header,
/// which repairs an ACK stream that lost a packet when neither twice nor requests run; with the
/// default configuration it goes compressed. Tunnelled (IPv6 in IPv6) as Degermark et al. run.
#[test]
fn full_on_repeat_sends_a_duplicate_ack_whole_and_repairs_the_stream() {
    let tunnel = |t: &Tcp| {
        let outer = V6 {
            src: C6,
            dst: D6,
            ..V6::new()
        };
        outer.wrap(41, &v6_tcp(V6::new(), t))
    };
    let plain = IphcConfig {
        twice: false,
        header_requests: false,
        full_on_repeat: true,
        ..IphcConfig::default()
    };
    for (config, dup_kind) in [
        (plain, FrameKind::FullHeader),
        (IphcConfig::default(), FrameKind::CompressedTcp),
    ] {
        let mut pair = Pair::new(config);
        let mut t = Tcp::new(9000, 50_000);
        pair.pass(&tunnel(&t));
        t.ack += 1000;
        assert_eq!(pair.pass(&tunnel(&t)).0, FrameKind::CompressedTcp);
        t.ack += 1000;
        // This ACK is lost: the next new ACK cannot be rebuilt without twice.
        pair.send(&tunnel(&t));
        let (kind, dup) = pair.send(&tunnel(&t));
        assert_eq!(kind, dup_kind);
        if dup_kind == FrameKind::FullHeader {
            assert_eq!(pair.recv(kind, &dup).as_deref(), Ok(&tunnel(&t)[..]));
            t.ack += 1000;
            assert_eq!(pair.pass(&tunnel(&t)).0, FrameKind::CompressedTcp);
        }
    }
}

#[test]
fn compressed_non_tcp_formats() {
    let mut pair = Pair::new(IphcConfig::default());
    // IPv4/UDP with a checksum: CID, | 0 | D | generation |, then the RANDOM fields in header
    // order: IPv4 Identification, UDP checksum.
    pair.pass(&v4_udp(V4::new(0x1234), 1000, b"hello", true));
    let p = v4_udp(V4::new(0x1235), 1000, b"hello", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedNonTcp);
    assert_eq!(frame, cat(&[&[0, 0, 0x12, 0x35], &p[26..28], b"hello"]));

    // Without a UDP checksum (zero): it is NOCHANGE, not sent.
    pair.pass(&v4_udp(V4::new(1), 1001, b"abc", false));
    let p = v4_udp(V4::new(2), 1001, b"abc", false);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedNonTcp);
    assert_eq!(frame, cat(&[&[1, 0, 0, 2], b"abc"]));

    // IPv6/UDP: only the UDP checksum.
    pair.pass(&v6_udp(V6::new(), 1002, b"v6!"));
    let p = v6_udp(V6::new(), 1002, b"v6!!");
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedNonTcp);
    assert_eq!(frame, cat(&[&[2, 0], &p[46..48], b"v6!!"]));
}

#[test]
fn context_state_format() {
    let mut out = Vec::new();
    assert_eq!(feedback::emit(&mut out, &[5, 9]), 2);
    assert_eq!(out, [3, 2, 5, 9]);
    assert_eq!(feedback::parse(&out), Some(&[5u8, 9][..]));
    // RFC 2508's RTP types and malformed counts are not TCP header requests.
    assert_eq!(feedback::parse(&[1, 1, 7, 0x80, 3]), None);
    assert_eq!(feedback::parse(&[3, 2, 5]), None);
    assert_eq!(feedback::parse(&[3]), None);
}
