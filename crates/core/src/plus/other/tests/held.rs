//! Held packets delivered late (section 5.8) over links that lose frames in runs: every
//! packet delivered, late or not, is one that was sent (the long soak: within the odds of the
//! 16-bit check).

use super::*;
use crate::test_rng::Rng;

/// What a run over a lossy link counted.
#[derive(Debug, Default)]
struct Tally {
    /// Frames refused as held for confirmation.
    held: u32,
    /// Held packets delivered late.
    late: u32,
    /// Packets delivered (late or not) that were not the one sent (a late one: not one sent
    /// before).
    wrong: u32,
    /// Frames that arrived after a lost one: each decoded against a reference the loss may
    /// have left behind, and checked on 16 bits.
    after_loss: u32,
}

/// Runs `packets` through a compressor (`requests`: where the decompressor sends context
/// requests, which this link never carries back) and a decompressor over a link losing
/// `loss` percent of the frames in runs of mean `run` (Gilbert-Elliott, the first 10 frames
/// kept), a packet every 20 ms.
fn over_lossy_link(packets: &[Vec<u8>], requests: bool, loss: u64, run: u64, seed: u64) -> Tally {
    let mut rng = Rng(seed);
    let (mut c, mut d) = (
        OtherCompressor::new(requests, false),
        OtherDecompressor::default(),
    );
    let (mut bad, mut lost) = (false, false);
    let mut t = Tally::default();
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
            lost = true;
            continue;
        }
        t.after_loss += u32::from(core::mem::take(&mut lost));
        // A packet every 20 ms: RTP contexts pace by it (guided trials, section 8).
        d.set_time(core::time::Duration::from_millis(20 * i as u64));
        match decompress(&mut d, k, &frame) {
            Ok(out) => t.wrong += u32::from(out != *p),
            Err(DropReason::Held) => t.held += 1,
            Err(_) => {}
        }
        if d.take_late(&mut late) {
            t.wrong += u32::from(!packets[..i].contains(&late));
            t.late += 1;
        }
    }
    assert!(t.late <= t.held, "{t:?}");
    t
}

/// One call of `n` packets (PCMU, 20 ms).
fn call(n: u32) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| rtp((7 + 3 * i) as u16, i as u16, 160 * i, i % 50 == 0))
        .collect()
}

#[test]
fn held_rtp_packets_delivered_late_are_never_wrong() {
    // One call losing about 30% of its frames in runs of mean 6.
    let t = over_lossy_link(&call(60_000), false, 30, 6, 0x1a7e);
    assert!(t.wrong == 0 && t.late > 0, "{t:?}");
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

/// About `1.1 * n` packets of one host to one destination: pings (two flows) and fragmented
/// datagrams, their IP-IDs from one counter that moves by a random amount between packets (as
/// Linux's does), so that frames after a run of losses decode by IP-ID trials and are held.
fn pings_and_fragments(n: u32) -> Vec<Vec<u8>> {
    let mut rng = Rng(0xec40);
    let (mut id, mut seqs) = (rng.next() as u16, [0u16; 2]);
    let mut packets = Vec::new();
    for _ in 0..n {
        id = id.wrapping_add(1 + rng.below(40) as u16);
        match rng.below(10) {
            0 => {
                packets.push(fragment(id, true));
                packets.push(fragment(id, false));
            }
            k => {
                let flow = usize::from(k > 6);
                seqs[flow] = seqs[flow].wrapping_add(1);
                packets.push(echo_of(0x1234 + flow as u16, id, seqs[flow]));
            }
        }
    }
    packets
}

#[test]
fn held_echoes_and_fragments_on_a_shared_counter_delivered_late_are_never_wrong() {
    // 60% lost in runs of mean 25. (A CRC-16 as the check delivered 3 packets wrong here with
    // requests: a held reference off by an alias, and the frames after it off by the same.)
    let packets = pings_and_fragments(40_000);
    for requests in [false, true] {
        let t = over_lossy_link(&packets, requests, 60, 25, 0x51e0);
        assert!(t.wrong == 0 && t.late * 2 > t.held, "{t:?}");
    }
}

/// At least `n` packets of a video stream: frames of 1 to 6 packets, one timestamp each (+3600
/// per frame), the marker on the last; the IP-ID +1 within a frame and +1 to +3 between frames
/// (a counter other flows share).
fn video_stream(n: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(0x71de0);
    let (mut seq, mut ts, mut id) = (500u16, 90_000u32, 1000u16);
    let mut packets = Vec::new();
    while packets.len() < n {
        let frame = 1 + rng.below(6);
        for i in 0..frame {
            packets.push(video(id, seq, ts, i + 1 == frame));
            seq = seq.wrapping_add(1);
            id = id.wrapping_add(1);
        }
        ts = ts.wrapping_add(3600);
        id = id.wrapping_add(rng.below(3) as u16);
    }
    packets
}

#[test]
fn held_video_packets_delivered_late_are_never_wrong() {
    // 60% lost in runs of mean 25. (A CRC-16 as the check delivered 4 packets wrong here.)
    let packets = video_stream(60_000);
    for requests in [false, true] {
        let t = over_lossy_link(&packets, requests, 60, 25, 0xf4a5);
        assert!(t.wrong == 0 && t.late * 4 > t.held, "{t:?}");
    }
}

#[test]
fn held_calls_on_one_counter_delivered_late_are_never_wrong() {
    // Three calls whose IP-IDs come from one counter, in pair mode (where requests are sent):
    // a held CO-I or CO-N frame goes late, a held CO-S frame (its IP-ID from the pair) never.
    let packets = three_calls(60_000, 0, false);
    for (loss, run) in [(60, 25), (30, 6)] {
        let t = over_lossy_link(&packets, true, loss, run, 0xca11);
        assert!(t.wrong == 0 && t.late > 0, "{t:?}");
    }
}

/// The long soak: ten times the packets of each test above, three seeds, both settings, 60%
/// lost in runs of mean 25 (about 10 minutes):
/// `cargo test --release -p taroc-core held_packet_soak -- --ignored --nocapture`.
///
/// A frame after a loss that decodes at once against a reference the loss left behind is
/// checked on 16 bits (odds 2^-16); a held reference must pass two independent checks. So the
/// wrong packets stay within about one per 2^16 frames after a loss: the bound here is four
/// times that. (A CRC-16 as the check, linear, delivered a wrong packet after a held one off by
/// an alias whenever the held one passed: 6 to 20 per run of video.)
#[test]
#[ignore]
fn held_packet_soak() {
    let kinds = [
        ("voice", call(600_000)),
        ("pings and fragments", pings_and_fragments(400_000)),
        ("video", video_stream(600_000)),
        ("three calls on one counter", three_calls(600_000, 3, false)),
    ];
    let (mut wrong, mut after_loss) = (0, 0);
    for (name, packets) in &kinds {
        for requests in [false, true] {
            for seed in 1..=3 {
                let t = over_lossy_link(packets, requests, 60, 25, 0x5eed + seed);
                std::println!("{name}, requests {requests}, seed {seed}: {t:?}");
                (wrong, after_loss) = (wrong + t.wrong, after_loss + t.after_loss);
            }
        }
    }
    std::println!("{wrong} wrong after {after_loss} frames after a loss");
    assert!(
        wrong <= 1 + after_loss / (1 << 14),
        "{wrong} wrong after {after_loss}"
    );
}
