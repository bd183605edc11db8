//! Property tests: random flows over a clean link, after losses, and garbage.

use super::*;

use crate::test_rng::Rng;

/// One direction of a TCP connection in the random traffic.
struct Flow {
    p: Pkt,
    /// Data length of the last packet.
    last_len: u32,
}

/// A random packet stream over a few flows: mostly what TCP does (data, acks, window updates,
/// IP ID steps), sometimes what it rarely does (retransmissions, URG, big jumps, option, TTL or
/// TOS changes, SYN/FIN/RST), and some non-TCP and broken packets.
fn random_traffic(rng: &mut Rng, count: usize) -> Vec<Vec<u8>> {
    let flows = 1 + rng.below(6) as usize;
    let mut flows: Vec<Flow> = (0..flows)
        .map(|i| Flow {
            p: Pkt {
                src: [10, 0, 0, 1 + rng.below(3) as u8],
                sport: 1000 + i as u16,
                dport: 80 + rng.below(2) as u16,
                seq: rng.next() as u32,
                ack: rng.next() as u32,
                win: rng.next() as u16,
                id: rng.next() as u16,
                ..Pkt::default()
            },
            last_len: 0,
        })
        .collect();
    let mut packets = Vec::with_capacity(count);
    for _ in 0..count {
        let which = rng.below(flows.len() as u64) as usize;
        let f = &mut flows[which];
        let p = &mut f.p;
        // Sequence: usually on from the last data, sometimes back or far ahead.
        match rng.below(20) {
            0 => p.seq = p.seq.wrapping_sub(rng.below(3000) as u32),
            1 => p.seq = p.seq.wrapping_add(rng.next() as u32),
            2 => {}
            _ => p.seq = p.seq.wrapping_add(f.last_len),
        }
        match rng.below(10) {
            0..=3 => {}
            4 => p.ack = p.ack.wrapping_add(f.last_len),
            5 => p.ack = p.ack.wrapping_add(rng.next() as u32),
            6 => p.ack = p.ack.wrapping_sub(rng.below(100) as u32),
            _ => p.ack = p.ack.wrapping_add(rng.below(3000) as u32),
        }
        if rng.chance(20) {
            p.win = p.win.wrapping_add(rng.below(600) as u16).wrapping_sub(300);
        }
        p.id = match rng.below(10) {
            0 => rng.next() as u16,
            1 => p.id,
            2 => p.id.wrapping_add(rng.below(300) as u16),
            _ => p.id.wrapping_add(1),
        };
        p.flags = flags::ACK;
        if rng.chance(30) {
            p.flags |= flags::PSH;
        }
        if rng.chance(3) {
            p.flags |= flags::URG;
            p.urg = rng.below(4) as u16;
        } else if rng.chance(1) {
            p.urg = rng.below(4) as u16;
        }
        if rng.chance(2) {
            p.flags = [flags::SYN, flags::FIN | flags::ACK, flags::RST, 0][rng.below(4) as usize];
        }
        if rng.chance(2) {
            p.flags |= flags::ECE;
        }
        if rng.chance(2) {
            p.ttl = p.ttl.wrapping_sub(1);
        }
        if rng.chance(2) {
            p.tos ^= 1;
        }
        if rng.chance(5) {
            p.tcp_options = match rng.below(3) {
                0 => vec![],
                1 => vec![1, 1, 8, 10, 0, 0, 0, rng.below(3) as u8, 0, 0, 0, 9],
                _ => vec![1, 1, 5, 10, 0, 0, 1, 0, 0, 0, 2, rng.below(2) as u8],
            };
        }
        if rng.chance(1) {
            p.ip_options = if p.ip_options.is_empty() {
                vec![1, 1, 1, 0]
            } else {
                vec![]
            };
        }
        let len = match rng.below(4) {
            0 => 0,
            1 => rng.below(5) as usize,
            _ => rng.below(600) as usize,
        };
        p.data = rng.bytes(len);
        f.last_len = len as u32;
        let mut packet = p.build();
        match rng.below(100) {
            0 => packet[9] = 17,
            1 => packet.truncate(rng.below(packet.len() as u64 + 1) as usize),
            2 => {
                let at = rng.below(packet.len() as u64) as usize;
                packet[at] ^= 1 << rng.below(8);
            }
            3 => {
                let n = rng.below(80) as usize;
                packet = rng.bytes(n);
            }
            _ => {}
        }
        packets.push(packet);
    }
    packets
}

fn random_config(rng: &mut Rng) -> VjConfig {
    VjConfig {
        slots: [1, 2, 3, 16, 256][rng.below(5) as usize],
        compress_cid: rng.chance(70),
    }
}

#[test]
fn property_clean_link_round_trips_exactly() {
    let mut rng = Rng(0x5EED_1144);
    let mut kinds = [0usize; 3];
    for case in 0..300 {
        let config = random_config(&mut rng);
        let count = 1 + rng.below(150) as usize;
        let packets = random_traffic(&mut rng, count);
        let mut c = VjCompressor::new(config.clone());
        let mut d = VjDecompressor::new(config.clone());
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        for (i, packet) in packets.iter().enumerate() {
            let kind = c.compress(packet, &mut frame);
            kinds[usize::from(kind.to_byte())] += 1;
            if kind == FrameKind::Ip {
                assert_eq!(frame, *packet);
            }
            assert!(frame.len() <= packet.len(), "VJ never grows a packet");
            let result = d.decompress(kind, &frame, &mut out);
            assert_eq!(
                (result, &out),
                (Ok(()), packet),
                "case {case} ({config:?}) packet {i}: {kind:?} {frame:02x?}"
            );
        }
    }
    // The traffic exercises every kind (many flows on few slots thrash: many UNCOMPRESSED_TCP).
    assert!(kinds.iter().all(|&n| n > 1000), "{kinds:?}");
}

#[test]
fn property_after_a_loss_frames_are_tossed_until_uncompressed_or_explicit() {
    let mut rng = Rng(0x70_55);
    let (mut tossed, mut lost) = (0, 0);
    for _ in 0..300 {
        let config = random_config(&mut rng);
        let count = 1 + rng.below(150) as usize;
        let packets = random_traffic(&mut rng, count);
        let mut c = VjCompressor::new(config.clone());
        let mut d = VjDecompressor::new(config);
        let (mut frame, mut out) = (Vec::new(), Vec::new());
        let mut tossing = false;
        let mut started = false;
        for packet in &packets {
            let kind = c.compress(packet, &mut frame);
            if rng.chance(10) {
                d.link_error();
                tossing = true;
                lost += 1;
                continue;
            }
            let explicit = kind == FrameKind::CompressedTcp && frame[0] & NEW_C != 0;
            let result = d.decompress(kind, &frame, &mut out);
            match kind {
                FrameKind::Ip => assert_eq!((result, &out), (Ok(()), packet)),
                FrameKind::UncompressedTcp => {
                    // Always the packet itself, and the end of tossing.
                    assert_eq!((result, &out), (Ok(()), packet));
                    tossing = false;
                    started = true;
                }
                // Accepted if the slot was ever filled (it may be out of date: VJ then
                // delivers a wrong packet, which the receiving TCP's checksum rejects).
                _ if explicit => tossing = result.is_err(),
                _ if tossing || !started => {
                    assert_eq!(result, Err(DropReason::NoContext));
                    assert!(out.is_empty());
                    tossing = true;
                    tossed += 1;
                }
                _ => assert_eq!(result, Ok(())),
            }
            assert_eq!(d.is_tossing(), tossing);
        }
    }
    assert!(tossed > 100 && lost > 100, "{tossed} tossed, {lost} lost");
}

#[test]
fn property_garbage_never_panics() {
    let mut rng = Rng(0x06A7_BA6E);
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        let config = random_config(&mut rng);
        let mut c = VjCompressor::new(config.clone());
        let mut d = VjDecompressor::new(config);
        // Some real state first.
        let count = rng.below(40) as usize;
        for packet in random_traffic(&mut rng, count) {
            let kind = c.compress(&packet, &mut frame);
            let _ = d.decompress(kind, &frame, &mut out);
        }
        for _ in 0..200 {
            let kind = FrameKind::ALL[rng.below(FrameKind::ALL.len() as u64) as usize];
            let garbage = match rng.below(3) {
                0 => {
                    let n = rng.below(8) as usize;
                    rng.bytes(n)
                }
                1 => {
                    let n = rng.below(200) as usize;
                    rng.bytes(n)
                }
                _ => {
                    // A real frame with a few bytes changed.
                    let packet = random_traffic(&mut rng, 1).remove(0);
                    c.compress(&packet, &mut frame);
                    let mut f = frame.clone();
                    for _ in 0..1 + rng.below(3) {
                        if !f.is_empty() {
                            let at = rng.below(f.len() as u64) as usize;
                            f[at] = rng.next() as u8;
                        }
                    }
                    f
                }
            };
            match d.decompress(kind, &garbage, &mut out) {
                Ok(()) => assert!(kind != FrameKind::Ip || out == garbage),
                Err(_) => assert!(out.is_empty()),
            }
            // The compressor takes anything too.
            c.compress(&garbage, &mut frame);
        }
    }
}
