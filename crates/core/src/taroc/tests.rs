//! Golden tests of the TAROC formats and of the behaviour the draft (and our reading of it)
//! prescribes, on hand-built packets.

use alloc::vec;
use alloc::vec::Vec;

use taroc_wire::checksum::{self, Sum};
use taroc_wire::tcp::flags;

use super::format::flag;
use super::*;
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};

/// A TCP/IP packet with valid checksums. `ts` adds NOP NOP TS; `sack` adds NOP NOP SACK.
#[derive(Clone)]
pub(crate) struct Spec {
    pub v4: bool,
    pub seq: u32,
    pub ack: u32,
    pub win: u16,
    pub ip_id: u16,
    pub ttl: u8,
    pub tos: u8,
    pub ts: Option<(u32, u32)>,
    pub sack: Vec<(u32, u32)>,
    pub flags: u8,
    pub payload: usize,
}

impl Default for Spec {
    fn default() -> Spec {
        Spec {
            v4: true,
            seq: 1000,
            ack: 5000,
            win: 500,
            ip_id: 0x1234,
            ttl: 64,
            tos: 0,
            ts: None,
            sack: vec![],
            flags: flags::ACK,
            payload: 100,
        }
    }
}

impl Spec {
    pub fn build(&self) -> Vec<u8> {
        let mut opts = Vec::new();
        if let Some((v, e)) = self.ts {
            opts.extend_from_slice(&[1, 1, 8, 10]);
            opts.extend_from_slice(&v.to_be_bytes());
            opts.extend_from_slice(&e.to_be_bytes());
        }
        if !self.sack.is_empty() {
            opts.extend_from_slice(&[1, 1, 5, 2 + 8 * self.sack.len() as u8]);
            for (l, r) in &self.sack {
                opts.extend_from_slice(&l.to_be_bytes());
                opts.extend_from_slice(&r.to_be_bytes());
            }
        }
        let mut tcp = Vec::new();
        tcp.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51]);
        tcp.extend_from_slice(&self.seq.to_be_bytes());
        tcp.extend_from_slice(&self.ack.to_be_bytes());
        tcp.push(((20 + opts.len()) / 4) as u8 * 16);
        tcp.push(self.flags);
        tcp.extend_from_slice(&self.win.to_be_bytes());
        tcp.extend_from_slice(&[0, 0, 0, 0]);
        tcp.extend_from_slice(&opts);
        tcp.extend((0..self.payload).map(|i| (i * 7 + 3) as u8));
        let (src, dst, mut ip) = if self.v4 {
            let mut ip = vec![
                0x45, self.tos, 0, 0, 0, 0, 0x40, 0, self.ttl, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
            ];
            ip[2..4].copy_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
            ip[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
            let c = checksum::checksum(&ip);
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            (
                core::net::IpAddr::from([10, 0, 0, 1]),
                core::net::IpAddr::from([10, 0, 0, 2]),
                ip,
            )
        } else {
            let mut ip = vec![
                0x60 | (self.tos >> 4),
                self.tos << 4,
                0,
                0,
                0,
                0,
                6,
                self.ttl,
            ];
            ip[4..6].copy_from_slice(&(tcp.len() as u16).to_be_bytes());
            let (mut s, mut d) = ([0u8; 16], [0u8; 16]);
            s[0] = 0x20;
            s[15] = 1;
            d[0] = 0x20;
            d[15] = 2;
            ip.extend_from_slice(&s);
            ip.extend_from_slice(&d);
            (core::net::IpAddr::from(s), core::net::IpAddr::from(d), ip)
        };
        let c = Sum::new()
            .add_pseudo_header(src, dst, 6, tcp.len() as u32)
            .add_bytes(&tcp)
            .checksum();
        tcp[16..18].copy_from_slice(&c.to_be_bytes());
        ip.extend_from_slice(&tcp);
        ip
    }
}

struct Pair {
    c: TarocCompressor,
    d: TarocDecompressor,
    frame: Vec<u8>,
    out: Vec<u8>,
}

impl Pair {
    fn new() -> Pair {
        Pair {
            c: TarocCompressor::new(TarocConfig::default()),
            d: TarocDecompressor::new(TarocConfig::default()),
            frame: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Compresses and decompresses `packet`, asserting a byte-exact delivery; returns the kind.
    fn send(&mut self, packet: &[u8]) -> FrameKind {
        let kind = self.c.compress(packet, &mut self.frame);
        self.d
            .decompress(kind, &self.frame, &mut self.out)
            .expect("delivered");
        assert_eq!(self.out, packet);
        kind
    }
}

const U: FrameKind = FrameKind::UncompressedTcp;
const C: FrameKind = FrameKind::CompressedTcp;

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
