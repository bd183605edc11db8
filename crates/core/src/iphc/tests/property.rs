//! Property test: random flows through a clean link, a lossy link with feedback, and garbage.

use super::*;

/// xorshift64: a tiny deterministic generator for test traffic.
#[derive(Debug, Clone)]
struct Xs(u64);

impl Xs {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// Fewer than `max` random octets.
    fn some_bytes(&mut self, max: u64) -> Vec<u8> {
        let n = self.below(max) as usize;
        self.bytes(n)
    }
}

/// How a flow's packets are wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    V4,
    V6,
    V4InV6,
    V6InV4,
}

#[derive(Debug, Clone)]
struct TcpFlow {
    shape: Shape,
    sport: u16,
    seq: u32,
    ack: u32,
    window: u16,
    id: u16,
    /// 0: constant, 1: one per packet, 2: random.
    id_mode: u8,
    ttl: u8,
    ts: Option<u32>,
    sack: Option<u32>,
    mss: usize,
    outer_id: u16,
}

#[derive(Debug, Clone)]
struct UdpFlow {
    shape: Shape,
    sport: u16,
    id: u16,
    ttl: u8,
    checksum: bool,
}

fn wrap(
    shape: Shape,
    proto: u8,
    (id, ttl, tos): (u16, u8, u8),
    outer_id: u16,
    seg: impl Fn(&[u8], &[u8]) -> Vec<u8>,
) -> Vec<u8> {
    let v4 = V4 {
        ttl,
        tos,
        ..V4::new(id)
    };
    let v6 = V6 {
        hop: ttl,
        tc: tos,
        ..V6::new()
    };
    match shape {
        Shape::V4 => v4.wrap(proto, &seg(&v4.src, &v4.dst)),
        Shape::V6 => v6.wrap(proto, &seg(&v6.src, &v6.dst)),
        Shape::V4InV6 => V6 {
            src: C6,
            dst: D6,
            ..V6::new()
        }
        .wrap(4, &v4.wrap(proto, &seg(&v4.src, &v4.dst))),
        Shape::V6InV4 => V4 {
            src: C4,
            dst: D4,
            ..V4::new(outer_id)
        }
        .wrap(41, &v6.wrap(proto, &seg(&v6.src, &v6.dst))),
    }
}

impl TcpFlow {
    fn new(rng: &mut Xs, sport: u16) -> TcpFlow {
        TcpFlow {
            shape: [Shape::V4, Shape::V6, Shape::V4InV6, Shape::V6InV4][rng.below(4) as usize],
            sport,
            seq: rng.next() as u32,
            ack: rng.next() as u32,
            window: 1000 + rng.below(5000) as u16,
            id: rng.next() as u16,
            id_mode: [0, 1, 1, 1, 2][rng.below(5) as usize],
            ttl: 64,
            ts: rng.chance(60).then(|| rng.next() as u32),
            sack: None,
            mss: [536, 1000, 1448][rng.below(3) as usize],
            outer_id: rng.next() as u16,
        }
    }

    fn packet(&mut self, rng: &mut Xs) -> Vec<u8> {
        let mut t = Tcp::new(self.seq, self.ack);
        t.sport = self.sport;
        let mut tos = 0;
        let mut payload = 0;
        match rng.below(100) {
            0..=54 => {
                payload = if rng.chance(75) {
                    self.mss
                } else {
                    1 + rng.below(self.mss as u64) as usize
                }
            }
            55..=74 => {
                self.ack = self.ack.wrapping_add(
                    [self.mss as u32, 2 * self.mss as u32, rng.below(3000) as u32]
                        [rng.below(3) as usize],
                )
            }
            75..=79 => {} // a duplicate ACK
            80..=84 => {
                self.window = self.window.wrapping_add(rng.below(600) as u16);
                self.ack = self.ack.wrapping_add(rng.below(2000) as u32);
            }
            85..=87 => {
                // A retransmission.
                t.seq = self
                    .seq
                    .wrapping_sub(self.mss as u32 * (1 + rng.below(4) as u32));
                payload = self.mss;
            }
            88..=90 => {
                tos = 3;
                t.flags |= ECE;
            }
            91 => self.ttl -= 1,
            92 => {
                t.flags |= URG;
                t.urgent = rng.below(100) as u16;
            }
            93 => t.flags |= FIN,
            94 => {
                t.flags = SYN;
                self.seq = rng.next() as u32;
                t.seq = self.seq;
            }
            95..=97 => {
                self.sack = if self.sack.is_some() {
                    None
                } else {
                    Some(rng.next() as u32)
                }
            }
            _ => payload = rng.below(40) as usize,
        }
        if let Some(ts) = self.ts.as_mut() {
            if rng.chance(70) {
                *ts = ts.wrapping_add(1 + rng.below(3) as u32);
            }
        }
        t.window = self.window;
        t = t.payload(payload);
        let mut options = Vec::new();
        if let Some(ts) = self.ts {
            options.extend_from_slice(&Tcp::new(0, 0).timestamps(ts, 77).options);
        }
        if let Some(s) = self.sack {
            options.extend_from_slice(&[1, 1, 5, 10]);
            options.extend_from_slice(&s.to_be_bytes());
            options.extend_from_slice(&s.wrapping_add(1000).to_be_bytes());
        }
        t.options = options;
        if t.seq == self.seq {
            self.seq = self
                .seq
                .wrapping_add(payload as u32 + u32::from(t.flags & (SYN | FIN) != 0));
        }
        self.id = match self.id_mode {
            0 => self.id,
            1 => self.id.wrapping_add(1),
            _ => rng.next() as u16,
        };
        self.outer_id = rng.next() as u16;
        wrap(
            self.shape,
            TCP,
            (self.id, self.ttl, tos),
            self.outer_id,
            |s, d| t.segment(s, d),
        )
    }
}

impl UdpFlow {
    fn new(rng: &mut Xs, sport: u16) -> UdpFlow {
        UdpFlow {
            shape: [Shape::V4, Shape::V6, Shape::V4InV6, Shape::V6InV4][rng.below(4) as usize],
            sport,
            id: rng.next() as u16,
            ttl: 64,
            checksum: rng.chance(70),
        }
    }

    fn packet(&mut self, rng: &mut Xs) -> Vec<u8> {
        if rng.chance(2) {
            self.ttl -= 1;
        }
        self.id = self.id.wrapping_add(1);
        let payload = rng.some_bytes(200);
        let checksum = self.checksum || matches!(self.shape, Shape::V6 | Shape::V4InV6);
        let sport = self.sport;
        wrap(
            self.shape,
            UDP,
            (self.id, self.ttl, 0),
            rng.next() as u16,
            |s, d| udp(s, d, sport, 5004, &payload, checksum),
        )
    }
}

/// Random traffic: TCP and UDP flows interleaved with ICMP, IPv6 fragments, ESP, and packets
/// that are not compressible (truncated, garbage).
fn traffic(seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut rng = Xs(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut tcp: Vec<TcpFlow> = (0..1 + rng.below(6))
        .map(|i| TcpFlow::new(&mut rng, 10_000 + i as u16))
        .collect();
    let mut udp: Vec<UdpFlow> = (0..rng.below(4))
        .map(|i| UdpFlow::new(&mut rng, 20_000 + i as u16))
        .collect();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let p = match rng.below(100) {
            0..=69 => {
                let i = rng.below(tcp.len() as u64) as usize;
                // Runs of the same flow, as bulk transfers make.
                let run = 1 + rng.below(8);
                for _ in 0..run {
                    out.push(tcp[i].packet(&mut rng));
                }
                continue;
            }
            70..=89 if !udp.is_empty() => {
                let i = rng.below(udp.len() as u64) as usize;
                udp[i].packet(&mut rng)
            }
            90..=92 => V4::new(rng.next() as u16).wrap(1, &{
                let n = 8 + rng.below(50) as usize;
                rng.bytes(n)
            }),
            93..=94 => {
                let frag = [
                    UDP,
                    0,
                    rng.next() as u8,
                    rng.next() as u8,
                    0,
                    0,
                    1,
                    rng.below(3) as u8,
                ];
                V6::new().wrap(44, &cat(&[&frag, &rng.some_bytes(100)]))
            }
            95 => V6::new().wrap(50, &cat(&[&[0, 0, 0, 9], &rng.bytes(40)])),
            96 => {
                let mut p = tcp[0].packet(&mut rng);
                p.truncate(p.len().saturating_sub(1 + rng.below(10) as usize));
                p
            }
            97 => rng.some_bytes(80),
            _ => {
                let mut p = tcp[0].packet(&mut rng);
                let at = rng.below(p.len() as u64) as usize;
                p[at] ^= 1 + rng.below(255) as u8;
                p
            }
        };
        out.push(p);
    }
    out.truncate(n);
    out
}

fn configs() -> Vec<IphcConfig> {
    vec![
        IphcConfig::default(),
        IphcConfig {
            tcp_space: 2,
            non_tcp_space: 1,
            f_max_period: 3,
            ..IphcConfig::default()
        },
        IphcConfig {
            twice_segment_multiples: false,
            max_header: 60,
            non_tcp_space: 400,
            ..IphcConfig::default()
        },
        IphcConfig {
            twice: false,
            header_requests: false,
            ..IphcConfig::default()
        },
    ]
}

#[derive(Debug, Default)]
struct Tally {
    packets: usize,
    lost: usize,
    delivered: usize,
    dropped: [usize; 5],
    requests: usize,
    full: usize,
}

#[test]
fn random_flows_clean_lossy_and_garbage() {
    let mut tally = Tally::default();
    let seeds: u64 = std::env::var("IPHC_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    for seed in 1..=seeds {
        let packets = traffic(seed, 400);
        for config in configs() {
            // Clean link: every packet arrives exactly, and no feedback is ever needed.
            let mut pair = Pair::new(config.clone());
            for (i, p) in packets.iter().enumerate() {
                pair.c.set_time(Duration::from_millis(i as u64 * 30));
                pair.pass(p);
                assert_eq!(pair.feedback(), None, "seed {seed} packet {i}");
            }

            // Lossy link, with header requests over a reverse link that loses some and delays
            // all. Whatever is delivered is the original.
            let mut rng = Xs(seed ^ 0xABCD_EF01_2345_6789);
            let mut pair = Pair::new(config.clone());
            let mut reverse: Vec<(usize, Vec<u8>)> = Vec::new();
            let mut burst = 0;
            for (i, p) in packets.iter().enumerate() {
                pair.c.set_time(Duration::from_millis(i as u64 * 30));
                while reverse.first().is_some_and(|(at, _)| *at <= i) {
                    let (_, fb) = reverse.remove(0);
                    pair.c.handle_feedback(&fb);
                }
                let (kind, frame) = pair.send(p);
                tally.packets += 1;
                tally.full += usize::from(kind == FrameKind::FullHeader);
                if burst == 0 && rng.chance(8) {
                    burst = 1 + rng.below(3);
                }
                if burst > 0 {
                    burst -= 1;
                    tally.lost += 1;
                    continue;
                }
                match pair.recv(kind, &frame) {
                    Ok(out) => {
                        assert_eq!(out, *p, "seed {seed} packet {i} {kind:?} {config:?}");
                        tally.delivered += 1;
                    }
                    Err(reason) => tally.dropped[reason as usize] += 1,
                }
                let mut fb = Vec::new();
                if pair.d.take_feedback(&mut fb) {
                    tally.requests += 1;
                    if rng.chance(80) {
                        reverse.push((i + 1 + rng.below(10) as usize, fb));
                    }
                }
            }

            // Garbage of every kind, and real frames damaged, into a decompressor with live
            // contexts: never a panic.
            let mut d = pair.d.clone();
            let mut out = Vec::new();
            for i in 0..300 {
                let kind = FrameKind::ALL[rng.below(7) as usize];
                let frame = if i % 2 == 0 {
                    let mut f = rng.some_bytes(120);
                    if let Some(b) = f.first_mut() {
                        *b %= 4;
                    }
                    f
                } else {
                    let (_, mut f) = pair.send(&packets[rng.below(packets.len() as u64) as usize]);
                    for _ in 0..=rng.below(3) {
                        if !f.is_empty() {
                            let at = rng.below(f.len().min(48) as u64) as usize;
                            f[at] ^= 1 + rng.below(255) as u8;
                        }
                    }
                    f.truncate(f.len() - rng.below(f.len() as u64 / 4 + 1) as usize);
                    f
                };
                let _ = d.decompress(kind, &frame, &mut out);
                let _ = d.take_feedback(&mut out);
                pair.c.handle_feedback(&frame);
            }
        }
    }
    std::eprintln!("random flows: {tally:?}");
    assert!(tally.delivered > tally.packets / 2);
    assert!(tally.requests > 0);
}
