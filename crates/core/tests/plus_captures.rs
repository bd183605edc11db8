//! `taroc-plus` over the real Linux captures: byte-exact round trips on a clean link within the
//! header-byte targets (0.8 × ROHC-TCP U-mode), and no incorrect delivery when frames are lost.

mod common;

use common::Outcome;
use taroc_core::plus::{PlusCompressor, PlusConfig, PlusDecompressor, PlusStats};
use taroc_core::tcp::repair::Repair;
use taroc_core::tcp::stats::{Part, Why};

fn config() -> PlusConfig {
    PlusConfig {
        repair: Repair::live(),
        ..PlusConfig::default()
    }
}

/// Runs `packets` through a compressor/decompressor pair per direction; `lose(i)` drops frame
/// i. Every delivered packet must be the original, byte for byte.
fn run(packets: &[Vec<u8>], lose: impl FnMut(usize) -> bool) -> Outcome<PlusStats> {
    common::round_trip(
        packets,
        [PlusCompressor::new(config()), PlusCompressor::new(config())],
        [
            PlusDecompressor::new(config()),
            PlusDecompressor::new(config()),
        ],
        |c| c.stats().clone(),
        lose,
    )
}

fn captures() -> Option<Vec<std::path::PathBuf>> {
    let dir = common::linux_captures()?;
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 8);
    Some(names)
}

/// The targets (0.8 × ROHC-TCP U-mode), header bytes per packet with the kind byte,
/// captures a to h in order.
const TARGETS: [f64; 8] = [8.63, 5.92, 8.30, 7.54, 11.55, 13.29, 8.38, 10.44];

/// What the test holds each capture to: a little above what `taroc-plus` measures (a 7.05, b 4.96,
/// c 6.92, d 6.70, e 10.70, f 12.32, g 6.90, h 9.16 with the cheaper ACKs, the codes per kind of
/// context refitted with octet padding counted, compact IR frames, CIDs 1 and 2 named in the
/// kind byte, the short extension's 6-bit window code, the pure ACKs' 5-bit IP-ID code first,
/// the bulk senders' IP-ID codes `0, 2, 6, 16`, retransmissions no reference can become kept
/// out of the IP-ID's references, and no IR-R from a young base), so that a regression fails,
/// within the targets.
const BOUNDS: [f64; 8] = [7.13, 5.05, 7.00, 6.80, 10.78, 12.43, 7.00, 9.24];

#[test]
fn clean_link_round_trips_every_capture_within_the_targets() {
    let Some(names) = captures() else {
        return;
    };
    let mut missed = Vec::new();
    for ((path, target), bound) in names.iter().zip(TARGETS).zip(BOUNDS) {
        let packets = common::read_raw_ip_pcap(path);
        let o = run(&packets, |_| false);
        let name = path.file_name().unwrap().to_string_lossy();
        let per_packet = o.link_header_bytes as f64 / o.packets as f64;
        eprint!("{name}: {per_packet:.2} header bytes/packet (target {target}):");
        for why in Why::ALL {
            let n: u64 = o.stats.iter().map(|s| s.frames(why)).sum();
            if n > 0 {
                eprint!(" {}={n}", why.name());
            }
        }
        for part in Part::ALL {
            let n: u64 = o.stats.iter().map(|s| s.bytes(part)).sum();
            eprint!(" {}={:.2}/pkt", part.name(), n as f64 / o.packets as f64);
        }
        eprintln!();
        assert_eq!((o.delivered, o.damaged), (o.packets, 0), "{name}");
        if per_packet > bound {
            missed.push(format!("{name}: {per_packet:.2} > {bound}"));
        }
    }
    assert!(missed.is_empty(), "{missed:?}");
}

/// A small deterministic generator (xorshift), for loss patterns.
struct Rng(u64);

impl Rng {
    fn chance(&mut self, p: f64) -> bool {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

#[test]
fn lossy_link_never_delivers_a_wrong_packet() {
    let Some(names) = captures() else {
        return;
    };
    for path in &names {
        let packets = common::read_raw_ip_pcap(path);
        for (p, burst) in [(0.1, 1), (0.3, 1), (0.5, 1), (0.2, 8)] {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
            let mut left = 0;
            let o = run(&packets, |_| {
                if left == 0 && rng.chance(p / burst as f64) {
                    left = burst;
                }
                if left > 0 {
                    left -= 1;
                    true
                } else {
                    false
                }
            });
            let intact = o.delivered + o.damaged;
            eprintln!(
                "{}: loss {p} burst {burst}: {intact} intact, {} damaged",
                path.file_name().unwrap().to_string_lossy(),
                o.damaged
            );
        }
    }
}

/// `packet` in an IPv6 tunnel between 2001:db8:7::1 and 2001:db8:7::2, in the packet's own
/// direction (the lower address sends the packets [`common::forward`] calls forward).
fn in_v6_tunnel(packet: &[u8]) -> Vec<u8> {
    let next = if packet[0] >> 4 == 6 { 41 } else { 4 };
    let mut p = vec![0x60, 0, 0, 0, 0, 0, next, 64];
    p[4..6].copy_from_slice(&(packet.len() as u16).to_be_bytes());
    let (a, b) = ([0x20, 0x01, 0x0d, 0xb8, 0, 7], 1u8);
    let ends = if common::forward(packet) {
        [b, b + 1]
    } else {
        [b + 1, b]
    };
    for end in ends {
        p.extend_from_slice(&a);
        p.extend_from_slice(&[0; 9]);
        p.push(end);
    }
    p.extend_from_slice(packet);
    p
}

#[test]
fn a_capture_in_an_ipv6_tunnel_costs_about_what_it_costs_plain() {
    let Some(names) = captures() else {
        return;
    };
    // a (IPv4 inside) and d (IPv6 inside): the outer header costs only the start (three IR-N
    // frames and three tunnel frames per direction), then nothing per packet.
    for path in [&names[0], &names[3]] {
        let packets = common::read_raw_ip_pcap(path);
        let plain = run(&packets, |_| false);
        let tunnelled: Vec<_> = packets.iter().map(|p| in_v6_tunnel(p)).collect();
        let t = run(&tunnelled, |_| false);
        assert_eq!((t.delivered, t.damaged), (t.packets, 0));
        let n = packets.len() as f64;
        let (plain, tunnelled) = (
            plain.link_header_bytes as f64 / n,
            t.link_header_bytes as f64 / n,
        );
        let name = path.file_name().unwrap().to_string_lossy();
        eprintln!("{name}: {plain:.2} plain, {tunnelled:.2} in an IPv6 tunnel");
        assert!(
            tunnelled - plain < 0.3,
            "{name}: {plain:.2} -> {tunnelled:.2}"
        );
    }
}

/// `packet` in an IPv4 tunnel between 192.0.2.1 and 192.0.2.2, in the packet's own direction,
/// with the outer Identification `id` (and DF set if `id` is 0, as Linux sends them).
fn in_v4_tunnel(packet: &[u8], id: u16) -> Vec<u8> {
    let next = if packet[0] >> 4 == 6 { 41 } else { 4 };
    let total = (20 + packet.len()) as u16;
    let df = if id == 0 { 0x40 } else { 0 };
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[df, 0, 64, next, 0, 0]);
    let ends = if common::forward(packet) {
        [1, 2]
    } else {
        [2, 1]
    };
    for end in ends {
        p.extend_from_slice(&[192, 0, 2, end]);
    }
    let sum = taroc_wire::checksum::checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(packet);
    p
}

#[test]
fn a_capture_in_an_ipv4_tunnel_costs_little_more_than_plain() {
    let Some(names) = captures() else {
        return;
    };
    // a (IPv4 inside) and d (IPv6 inside), under an outer header whose Identification is 0
    // (DF set), counts the tunnel's packets in each direction, or jumps as Linux's tunnels'
    // do (a per-destination counter that also jumps by up to the clock ticks since its last
    // packet: here 1 and 0 to 3 more per packet). The outer header costs the start, then per
    // CO frame: nothing for 0 (a spare bit at most); a marker bit for a counter that steps with
    // the inner IP-ID (a); the marker and 9 bits, 8 LSBs of `outer - inner` against the
    // references', for the others (13.09 octets per packet on d when the outer header went as
    // CO-N in every frame).
    for (path, most) in [(&names[0], [0.3, 0.6, 1.8]), (&names[3], [0.3, 1.9, 1.9])] {
        let packets = common::read_raw_ip_pcap(path);
        let plain = run(&packets, |_| false);
        let n = packets.len() as f64;
        let plain = plain.link_header_bytes as f64 / n;
        let name = path.file_name().unwrap().to_string_lossy();
        for (mode, most) in ["zero", "counting", "jumping"].into_iter().zip(most) {
            let mut ids = [7000u16, 20_000];
            let mut rng = Rng(0x2545_F491_4F6C_DD1D);
            let tunnels: Vec<_> = packets
                .iter()
                .map(|p| {
                    let id = &mut ids[usize::from(!common::forward(p))];
                    let jump = if mode == "jumping" {
                        (0..3).filter(|_| rng.chance(0.5)).count() as u16
                    } else {
                        0
                    };
                    *id = id.wrapping_add(1 + jump);
                    in_v4_tunnel(p, if mode == "zero" { 0 } else { *id })
                })
                .collect();
            let t = run(&tunnels, |_| false);
            assert_eq!((t.delivered, t.damaged), (t.packets, 0));
            let tunnelled = t.link_header_bytes as f64 / n;
            eprintln!("{name}: {plain:.2} plain, {tunnelled:.2} in an IPv4 tunnel ({mode})");
            assert!(
                tunnelled - plain < most,
                "{name}, {mode}: {plain:.2} -> {tunnelled:.2}"
            );
            // Lossy: every delivered packet is the original (`run` checks), outer header too.
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
            let lossy = run(&tunnels, |_| rng.chance(0.2));
            eprintln!(
                "{name}: 20% loss: {} intact, {} damaged",
                lossy.delivered + lossy.damaged,
                lossy.damaged
            );
        }
    }
}
