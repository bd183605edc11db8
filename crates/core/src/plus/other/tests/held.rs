//! Held packets delivered late (section 5.8) over links that lose frames in runs: every
//! packet delivered, late or not, is one that was sent.

use super::*;
use crate::test_rng::Rng;

/// Runs `packets` through a compressor (`requests`: where the decompressor sends context
/// requests, which this link never carries back) and a decompressor over a link losing
/// `loss` percent of the frames in runs of mean `run` (Gilbert-Elliott, the first 10 frames
/// kept), asserting that every packet delivered is the one sent and every late one is one sent
/// before; the packets held and those of them delivered late.
fn over_lossy_link(
    packets: &[Vec<u8>],
    requests: bool,
    loss: u64,
    run: u64,
    seed: u64,
) -> (u32, u32) {
    let mut rng = Rng(seed);
    let (mut c, mut d) = (OtherCompressor::new(requests), OtherDecompressor::default());
    let (mut bad, mut late_count, mut held) = (false, 0, 0);
    let mut late = Vec::new();
    // A run starts with this chance in 100,000, and ends with 1 / run.
    let start = 100_000 * loss / (run * (100 - loss));
    for (i, p) in packets.iter().enumerate() {
        let (k, frame) = compress(&mut c, p);
        bad = if bad {
            !rng.chance(100 / run)
        } else {
            rng.below(100_000) < start
        };
        if bad && i > 10 {
            continue;
        }
        match decompress(&mut d, k, &frame) {
            Ok(out) => assert_eq!(out, *p, "packet {i}, requests {requests}"),
            Err(DropReason::Held) => held += 1,
            Err(_) => {}
        }
        if d.take_late(&mut late) {
            assert!(
                packets[..i].contains(&late),
                "packet {i}: a wrong late packet"
            );
            late_count += 1;
        }
    }
    assert!(late_count <= held, "{late_count} late of {held} held");
    (held, late_count)
}

#[test]
fn held_rtp_packets_delivered_late_are_never_wrong() {
    // One call losing about 30% of its frames in runs of mean 6.
    let packets: Vec<Vec<u8>> = (0..60_000u32)
        .map(|i| rtp((7 + 3 * i) as u16, i as u16, 160 * i, i % 50 == 0))
        .collect();
    let (held, late) = over_lossy_link(&packets, false, 30, 6, 0x1a7e);
    assert!(late > 0, "{late} late of {held} held");
}

/// An echo request of ICMP identifier `ident` and sequence number `seq`, IP-ID `id`.
fn echo_of(ident: u16, id: u16, seq: u16) -> Vec<u8> {
    let mut p = echo(id, seq, true);
    let s = shape(&p).unwrap();
    p[24..26].copy_from_slice(&ident.to_be_bytes());
    p[22..24].fill(0);
    let sum = transport_checksum(&p, s).unwrap();
    p[22..24].copy_from_slice(&sum.to_be_bytes());
    assert_eq!(shape(&p), Some(s));
    p
}

/// A fragment of a datagram of IP-ID `id`: the first (`first`) or the second.
fn fragment(id: u16, first: bool) -> Vec<u8> {
    let mut p = udp(id, 60);
    let field: u16 = if first { 0x2000 } else { 0x00B9 };
    p[6..8].copy_from_slice(&field.to_be_bytes());
    v4_checksum(&mut p);
    p
}

#[test]
fn held_echoes_and_fragments_on_a_shared_counter_delivered_late_are_never_wrong() {
    // One host's pings (two flows) and fragmented datagrams to one destination, their IP-IDs
    // from one counter that moves by a random amount between packets (as Linux's does), so
    // that frames after a run of losses decode by IP-ID trials and are held.
    let mut rng = Rng(0xec40);
    let (mut id, mut seqs) = (rng.next() as u16, [0u16; 2]);
    let mut packets = Vec::new();
    for _ in 0..40_000 {
        id = id.wrapping_add(1 + rng.below(40) as u16);
        match rng.below(10) {
            0 => {
                packets.push(fragment(id, true));
                packets.push(fragment(id, false));
            }
            n => {
                let flow = usize::from(n > 6);
                seqs[flow] = seqs[flow].wrapping_add(1);
                packets.push(echo_of(0x1234 + flow as u16, id, seqs[flow]));
            }
        }
    }
    for requests in [false, true] {
        let (held, late) = over_lossy_link(&packets, requests, 60, 25, 0x51de);
        assert!(late * 2 > held, "{late} late of {held} held");
    }
}

#[test]
fn held_video_packets_delivered_late_are_never_wrong() {
    // Frames of 1 to 6 packets, one timestamp each (+3600 per frame), the marker on the last;
    // the IP-ID +1 within a frame and +1 to +3 between frames (a counter other flows share).
    let mut rng = Rng(0x71de0);
    let (mut seq, mut ts, mut id) = (500u16, 90_000u32, 1000u16);
    let mut packets = Vec::new();
    while packets.len() < 60_000 {
        let n = 1 + rng.below(6);
        for i in 0..n {
            packets.push(video(id, seq, ts, i + 1 == n));
            seq = seq.wrapping_add(1);
            id = id.wrapping_add(1);
        }
        ts = ts.wrapping_add(3600);
        id = id.wrapping_add(rng.below(3) as u16);
    }
    for requests in [false, true] {
        let (held, late) = over_lossy_link(&packets, requests, 60, 25, 0xf4a3);
        assert!(late * 4 > held, "{late} late of {held} held");
    }
}
