//! Tests of the data path: framing, authentication and the endpoint's send and receive paths.

use super::*;
use crate::auth::{Key, DEFAULT_TAG_LEN, SHORT_HEADER};
use taroc_core::Scheme;

#[test]
fn frames_carry_their_kind_byte() {
    let mut out = Vec::new();
    for kind in FrameKind::ALL {
        encode_frame(kind, &[1, 2, 3], &mut out);
        assert_eq!(decode_frame(&out), Some((kind, &[1u8, 2, 3][..])));
    }
    assert_eq!(decode_frame(&[]), None);
    assert_eq!(decode_frame(&[200, 1]), None);
}

/// A gateway's data path with a 1500-byte link, `taroc` both ways, authenticated or not.
fn config(auth: bool) -> EndpointConfig {
    EndpointConfig {
        variants: [Variant::of(Scheme::Taroc), Variant::of(Scheme::Taroc)],
        link: LinkConfig {
            mtu: 1500,
            ..LinkConfig::default()
        },
        tun_mtu: 1500,
        seed: 1,
        verify_checksums: true,
        auth: auth.then(|| AuthConfig {
            key: Key::from_bytes([3; 32]),
            tag_len: DEFAULT_TAG_LEN,
        }),
        may_reorder: true,
    }
}

/// An IPv4 UDP packet of `len` bytes (checksum 0: none).
fn udp_packet(len: usize, id: u16) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[8] = 64;
    p[9] = 17;
    p[12..16].copy_from_slice(&[10, 0, 0, 1]);
    p[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let c = taroc_wire::checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p[24..26].copy_from_slice(&((len - 20) as u16).to_be_bytes());
    p
}

#[test]
fn endpoints_talk_and_refuse_what_is_not_a_fresh_frame_of_the_peer() {
    for auth in [true, false] {
        // Whether a link frame came from the configured peer, as the transport tells.
        let (a_addr, b_addr) = (true, false);
        let mut a = Endpoint::new(&config(auth), 1, 1000).unwrap();
        let mut b = Endpoint::new(&config(auth), 2, 5000).unwrap();
        introduce([&mut a, &mut b], 0);
        let hellos = a.counters()[0].hellos_sent;
        // Its start's, and its answer to the peer's (which echoes the peer).
        assert_eq!(hellos, 2 * u64::from(auth));
        let mut wire = Vec::new();
        let mut delivered = Vec::new();
        for i in 0..10 {
            let packet = udp_packet(100 + i, i as u16);
            a.packet(i as u64, &packet, &mut |d: &[u8]| {
                wire.push(d.to_vec());
                true
            });
        }
        assert_eq!(wire.len(), 10);
        let mut none = |_: &[u8]| true;
        for d in &wire {
            b.datagram(0, a_addr, d, &mut none, &mut |p: &[u8]| {
                delivered.push(p.to_vec());
                true
            });
        }
        assert_eq!(delivered.len(), 10);
        let overhead = a.counters()[0].auth_bytes;
        // Ten long frames (the first 16 are long) and the hellos: 24 header bytes beyond the
        // kind byte and an 8-byte tag each.
        assert_eq!(overhead, if auth { (10 + hellos) * 32 } else { 0 });
        let mut flipped = wire[4].clone();
        flipped[10] ^= 4;
        let mut oversize = wire[5].clone();
        oversize.resize(1500 + 1 + LONG_HEADER + DEFAULT_TAG_LEN, 0);
        if auth {
            refuse(&mut b, &wire[3], a_addr);
            refuse(&mut b, &flipped, a_addr);
            refuse(&mut b, &wire[6][..SHORT_HEADER], a_addr);
            refuse(&mut b, &oversize, a_addr);
            refuse(&mut b, &[], a_addr);
            let r = &b.counters()[1].rejected;
            assert_eq!(
                (
                    r.replayed,
                    r.forged,
                    r.malformed,
                    r.oversize,
                    r.stale,
                    r.total()
                ),
                (1, 1, 2, 1, 0, 5),
                "{r:?}"
            );
            // An authentic frame from another address is taken, and counted.
            let mut more = Vec::new();
            a.packet(100, &udp_packet(60, 99), &mut |d: &[u8]| {
                more.push(d.to_vec());
                true
            });
            let elsewhere = false;
            let mut got = 0;
            b.datagram(0, elsewhere, &more[0], &mut none, &mut |_: &[u8]| {
                got += 1;
                true
            });
            assert_eq!((got, b.counters()[1].other_source), (1, 1));
            // Our own frame, sent back to us.
            let mut own = Vec::new();
            b.packet(100, &udp_packet(60, 1), &mut |d: &[u8]| {
                own.push(d.to_vec());
                true
            });
            refuse(&mut b, &own[0], a_addr);
            assert_eq!(b.counters()[1].rejected.reflected, 1);
        } else {
            // Without authentication only the address and the shape are checked.
            refuse(&mut b, &wire[3], b_addr);
            refuse(&mut b, &oversize, a_addr);
            refuse(&mut b, &[7, 1, 2], a_addr);
            let r = &b.counters()[1].rejected;
            assert_eq!(
                (r.foreign, r.oversize, r.malformed, r.total()),
                (1, 1, 1, 3),
                "{r:?}"
            );
        }
    }
}

/// Hands `datagram` to `b`, which must refuse it.
fn refuse(b: &mut Endpoint, datagram: &[u8], from: bool) {
    let before = b.counters()[1].rejected.total();
    b.datagram(
        0,
        from,
        datagram,
        &mut |_: &[u8]| true,
        &mut |_: &[u8]| panic!("a refused datagram reached the TUN"),
    );
    assert_eq!(b.counters()[1].rejected.total(), before + 1);
}

#[test]
fn rebuilt_packets_longer_than_the_tun_mtu_are_not_written() {
    let mut big = config(true);
    big.tun_mtu = 1500;
    let mut small = config(true);
    small.tun_mtu = 1000;
    small.link.mtu = 1500;
    let mut a = Endpoint::new(&big, 1, 1000).unwrap();
    let mut b = Endpoint::new(&small, 2, 1000).unwrap();
    introduce([&mut a, &mut b], 0);
    let mut wire = Vec::new();
    for (i, len) in [1200, 900].into_iter().enumerate() {
        a.packet(i as u64, &udp_packet(len, 1), &mut |d: &[u8]| {
            wire.push(d.to_vec());
            true
        });
    }
    let mut written = Vec::new();
    for d in &wire {
        b.datagram(0, true, d, &mut |_: &[u8]| true, &mut |p: &[u8]| {
            written.push(p.len());
            true
        });
    }
    assert_eq!(written, vec![900]);
    assert_eq!(b.counters()[1].oversize_rebuilt, 1);
}

/// Sends `packets` from `a` and hands the datagrams to `b`; returns how many `b` delivered.
fn carry(a: &mut Endpoint, b: &mut Endpoint, packets: &[Vec<u8>], from: bool) -> usize {
    let mut wire = Vec::new();
    for (i, p) in packets.iter().enumerate() {
        a.packet(i as u64, p, &mut |d: &[u8]| {
            wire.push(d.to_vec());
            true
        });
    }
    let mut delivered = 0;
    for d in &wire {
        b.datagram(0, from, d, &mut |_: &[u8]| true, &mut |_: &[u8]| {
            delivered += 1;
            true
        });
    }
    delivered
}

#[test]
fn a_restarted_peer_gets_context_set_ups_not_frames_against_contexts_it_lost() {
    let a_addr = true;
    let plus = || {
        let mut c = config(true);
        c.variants = [Variant::of(Scheme::Plus), Variant::of(Scheme::Plus)];
        c
    };
    let mut a = Endpoint::new(&plus(), 1, 1000).unwrap();
    let mut b = Endpoint::new(&plus(), 2, 5000).unwrap();
    introduce([&mut a, &mut b], 0);
    let packets: Vec<Vec<u8>> = (0..8).map(|i| udp_packet(100, i)).collect();
    assert_eq!(carry(&mut a, &mut b, &packets, a_addr), 8);
    // The flow's next packet would go compressed against its context.
    let next: Vec<Vec<u8>> = (8..10).map(|i| udp_packet(100, i)).collect();
    let compressed = a.counters()[0].frames_by_kind;
    // B restarts: a new run, fresh codecs, a later counter.
    let mut b = Endpoint::new(&plus(), 3, 9000).unwrap();
    introduce([&mut a, &mut b], 0);
    assert_eq!(carry(&mut a, &mut b, &next, a_addr), 2);
    assert_eq!(b.counters()[1].context_damage, 0);
    assert_eq!(a.counters()[1].peer_runs, 2);
    assert_ne!(a.counters()[0].frames_by_kind, compressed);
}
