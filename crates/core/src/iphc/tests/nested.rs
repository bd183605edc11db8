//! Nested IP headers and IPv6 extension headers.

use super::*;

#[test]
fn ipv4_in_ipv6_and_ipv6_in_ipv4_round_trip() {
    let mut pair = Pair::new(IphcConfig::default());
    let outer6 = V6 {
        src: C6,
        dst: D6,
        ..V6::new()
    };
    let outer4 = V4 {
        src: C4,
        dst: D4,
        ..V4::new(0)
    };
    let mut seq = 1000;
    for i in 0..12u16 {
        let t = Tcp::new(seq, 88).timestamps(u32::from(i), 3).payload(512);
        seq += 512;
        // IPv4/TCP in IPv6: the inner Identification is DELTA (it precedes TCP at once).
        let p = outer6.wrap(4, &v4_tcp(V4::new(i), &t));
        let (kind, frame) = pair.pass(&p);
        if i > 0 {
            assert_eq!(kind, FrameKind::CompressedTcp);
            // CID, mask (SPECIAL_D | O), checksum, options.
            assert_eq!(frame.len(), 4 + 12 + 512, "{frame:02x?}");
        }
        // IPv6/TCP in IPv4: the outer Identification is RANDOM (2 octets every time).
        let mut t6 = t.clone();
        t6.sport = 5555;
        let p = V4 {
            id: 900 + i,
            ..outer4
        }
        .wrap(41, &v6_tcp(V6::new(), &t6));
        let (kind, frame) = pair.pass(&p);
        if i > 0 {
            assert_eq!(kind, FrameKind::CompressedTcp);
            assert_eq!(&frame[4..6], &(900 + i).to_be_bytes());
            assert_eq!(frame.len(), 6 + 12 + 512);
        }
        // UDP in both.
        let p = outer4.wrap(41, &v6_udp(V6::new(), 53, &[i as u8; 30]));
        pair.pass(&p);
        let p = outer6.wrap(4, &v4_udp(V4::new(i * 3), 53, &[i as u8; 30], true));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i.into()) {
            // Inner IPv4 Identification and UDP checksum are RANDOM.
            assert_eq!(
                (kind, frame.len()),
                (FrameKind::CompressedNonTcp, 2 + 4 + 30)
            );
        }
        // IPv4 in IPv4 too.
        let p = outer4.wrap(4, &v4_udp(V4::new(i), 54, &[1; 10], false));
        pair.pass(&p);
    }
    // A lost segment of the tunnelled stream is repaired like any other.
    let packets: Vec<Vec<u8>> = (0..10u16)
        .map(|i| {
            let t = Tcp::new(7000 + 512 * u32::from(i), 88).payload(512);
            outer6.wrap(4, &v4_tcp(V4::new(i), &t))
        })
        .collect();
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[4]);
    assert!(results.iter().flatten().all(|r| r.is_ok()), "{results:?}");
}

/// An IPv6 extension header of `body` (which must make it a multiple of 8 octets long).
fn ext(next: u8, len_field: u8, body: &[u8]) -> Vec<u8> {
    let mut h = vec![next, len_field];
    h.extend_from_slice(body);
    h
}

#[test]
fn ipv6_extension_headers_round_trip() {
    let mut pair = Pair::new(IphcConfig::default());
    let ip = V6::new();
    for i in 0..6u8 {
        // Hop-by-Hop: Router Alert (data RANDOM) and PadN; Routing type 2 (all NOCHANGE);
        // Destination Options: PadN; AH: SPI then 16 octets of authentication data (RANDOM).
        let payload = [i; 25];
        let u = udp(&ip.src, &ip.dst, 4000, 4001, &payload, true);
        let mut ah = ext(UDP, 4, &[0, 0, 0, 0, 1, 0]);
        ah.extend_from_slice(&u32::from(i).to_be_bytes());
        ah.extend_from_slice(&[i; 12]);
        let dest = ext(51, 0, &[1, 4, 0, 0, 0, 0]);
        let mut routing = ext(60, 2, &[2, 1, 0, 0, 0, 0]);
        routing.extend_from_slice(&C6);
        let hbh = ext(43, 0, &[5, 2, 0, i, 1, 0]);
        let p = ip.wrap(0, &cat(&[&hbh, &routing, &dest, &ah, &u]));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i.into()) {
            assert_eq!(kind, FrameKind::CompressedNonTcp);
            // CID, generation; Router Alert value; AH data (16); UDP checksum; payload.
            assert_eq!(frame.len(), 2 + 2 + 16 + 2 + 25, "{frame:02x?}");
            assert_eq!(&frame[2..4], &[0, i]);
        }
        // TCP behind Hop-by-Hop and Destination Options.
        let t = Tcp::new(100 + 10 * u32::from(i), 7).payload(10);
        let dest = ext(TCP, 0, &[1, 4, 0, 0, 0, 0]);
        let hbh = ext(60, 0, &[5, 2, 0, i, 1, 0]);
        let p = ip.wrap(0, &cat(&[&hbh, &dest, &t.segment(&ip.src, &ip.dst)]));
        let (kind, frame) = pair.pass(&p);
        if i > 0 {
            assert_eq!(kind, FrameKind::CompressedTcp);
            assert_eq!(frame.len(), 4 + 2 + 10);
        }
        // Fragments: the chain ends at the Fragment header, whose offset, M and Identification
        // are RANDOM (6 octets).
        let frag = [UDP, 0, 0, 8 * i, 0, 0, 0, 42];
        let p = ip.wrap(44, &cat(&[&frag, &[i; 40]]));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i.into()) {
            assert_eq!(
                (kind, frame.len()),
                (FrameKind::CompressedNonTcp, 2 + 6 + 40)
            );
        }
        // ESP: only the SPI is compressed.
        let p = ip.wrap(50, &cat(&[&[0, 0, 1, 0], &[i; 30]]));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i.into()) {
            assert_eq!((kind, frame.len()), (FrameKind::CompressedNonTcp, 2 + 30));
        }
    }
}

#[test]
fn max_header_keeps_whole_subheaders_only() {
    // IPv6/IPv6/IPv6/TCP with 40 octets of options: 180 octets > MAX_HEADER (168). The chain
    // is the three IPv6 headers; TCP travels as payload of a non-TCP stream.
    let mut pair = Pair::new(IphcConfig::default());
    for i in 0..4u32 {
        let mut t = Tcp::new(i * 100, 5).payload(100);
        t.options = vec![1; 40];
        let inner = v6_tcp(V6::new(), &t);
        let p = V6::new().wrap(41, &V6::new().wrap(41, &inner));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i as usize) {
            assert_eq!(
                (kind, frame.len()),
                (FrameKind::CompressedNonTcp, 2 + 60 + 100)
            );
        }
    }
    // With MAX_HEADER 180 it is a TCP stream.
    let mut pair = Pair::new(IphcConfig {
        max_header: 180,
        ..IphcConfig::default()
    });
    for i in 0..4u32 {
        let mut t = Tcp::new(i * 100, 5).payload(100);
        t.options = vec![1; 40];
        let p = V6::new().wrap(41, &V6::new().wrap(41, &v6_tcp(V6::new(), &t)));
        let (kind, _) = pair.pass(&p);
        if i > 0 {
            assert_eq!(kind, FrameKind::CompressedTcp);
        }
    }
}

#[test]
fn what_cannot_be_compressed_exactly_goes_as_type_ip() {
    let mut pair = Pair::new(IphcConfig::default());
    let good = v4_tcp(V4::new(1), &Tcp::new(1, 2).payload(30));
    pair.pass(&good);
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    // IPv4 with options (section 7.13 b).
    let mut opts = good.clone();
    opts.splice(20..20, [1, 1, 1, 0]);
    opts[0] = 0x46;
    let len = opts.len() as u16;
    opts[2..4].copy_from_slice(&len.to_be_bytes());
    opts[10..12].copy_from_slice(&[0, 0]);
    let sum = Sum::new().add_bytes(&opts[..24]).checksum();
    opts[10..12].copy_from_slice(&sum.to_be_bytes());
    cases.push(("options", opts));
    // A fragment.
    let mut frag = v4_udp(V4::new(2), 9, &[0; 16], true);
    frag[6] = 0x20;
    frag[10..12].copy_from_slice(&[0, 0]);
    let sum = Sum::new().add_bytes(&frag[..20]).checksum();
    frag[10..12].copy_from_slice(&sum.to_be_bytes());
    cases.push(("fragment", frag));
    // Truncated by a snaplen, or padded.
    cases.push(("truncated", good[..good.len() - 5].to_vec()));
    cases.push(("padded", cat(&[&good, &[0, 0]])));
    // Wrong checksums: IPv4 header, TCP, UDP.
    let mut bad = good.clone();
    bad[8] ^= 1;
    cases.push(("ipv4 checksum", bad));
    let mut bad = good.clone();
    bad[50] ^= 1;
    cases.push(("tcp checksum", bad));
    let mut bad = v4_udp(V4::new(3), 9, &[7; 16], true);
    bad[30] ^= 1;
    cases.push(("udp checksum", bad));
    // A Jumbo Payload option, and things that are not IP at all.
    // (A jumbogram's Payload Length is 0; its length is in the option.)
    let mut jumbo = V6::new().wrap(0, &[UDP, 0, 0xC2, 4, 0, 0, 0, 48]);
    jumbo[4..6].copy_from_slice(&[0, 0]);
    cases.push(("jumbo", jumbo));
    cases.push(("empty", Vec::new()));
    cases.push(("garbage", vec![0x99; 50]));
    cases.push(("short v6", vec![0x60; 20]));
    for (what, p) in cases {
        assert_eq!(pair.pass(&p).0, FrameKind::Ip, "{what}");
    }
    // The stream is still compressed afterwards.
    let next = v4_tcp(V4::new(2), &Tcp::new(31, 2).payload(30));
    assert_eq!(pair.pass(&next).0, FrameKind::CompressedTcp);
}

#[test]
fn a_full_header_whose_packet_is_not_ip_makes_and_changes_no_context() {
    // The fuzzer's case: an IPv4/UDP full header whose first octet became 0x6d reads as an IPv6
    // header whose Next Header (the IPv4 flags octet, 0) names a Hop-by-Hop header longer than
    // the packet. The chain stops before it, so its length fields and checksums check out, but
    // the packet does not parse as IP (the extension header runs past its end), and compressed
    // headers against such a context rebuild packets that do not either.
    let mut pair = Pair::new(IphcConfig::default());
    let ip = V6::new();
    let good = |payload: &[u8]| v6_udp(ip, 1000, payload);
    pair.pass(&good(b"good"));
    // Hop-by-Hop: 14 * 8 = 112 octets announced, 32 present.
    let bad = ip.wrap(0, &cat(&[&[UDP, 13], &[0; 30]]));
    let mut layout = Layout::default();
    assert!(chain::parse(&bad, 168, &mut layout));
    assert_eq!((layout.len, layout.upper), (40, Some(0)));
    // The compressor sends such a packet as it is.
    assert_eq!(pair.send(&bad).0, FrameKind::Ip);
    // A full header of it is refused, whether its CID is free or holds a context.
    for cid in [0, 5] {
        let mut full = bad.clone();
        let id = FullId::NonTcp { cid, generation: 0 };
        assert!(full_header::write(&mut full, &layout, id));
        assert_eq!(
            pair.recv(FrameKind::FullHeader, &full),
            Err(DropReason::Malformed)
        );
    }
    assert_eq!(
        pair.recv(FrameKind::CompressedNonTcp, &[5, 0, 0, 8, 1, 2]),
        Err(DropReason::NoContext)
    );
    // CID 0 still holds the good stream.
    let (kind, _) = pair.pass(&good(b"next"));
    assert_eq!(kind, FrameKind::CompressedNonTcp);
}
