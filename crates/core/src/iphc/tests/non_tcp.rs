//! Non-TCP behaviour: slow-start, refreshes, generations.

use super::*;

/// The 1-based numbers of the packets of one UDP stream sent as full headers, one packet per
/// second of `step`.
fn full_header_numbers(config: IphcConfig, packets: usize, step: Duration) -> Vec<usize> {
    let mut pair = Pair::new(config);
    let mut fulls = Vec::new();
    for i in 0..packets {
        pair.c.set_time(step * i as u32);
        let p = v4_udp(V4::new(i as u16), 7000, &[i as u8; 20], true);
        let (kind, _) = pair.pass(&p);
        match kind {
            FrameKind::FullHeader => fulls.push(i + 1),
            FrameKind::CompressedNonTcp => {}
            other => panic!("packet {i}: {other:?}"),
        }
    }
    fulls
}

#[test]
fn compression_slow_start_timing() {
    // Section 3.3.1's picture |.|..|....|........| and 3.3.4: F_MAX_PERIOD (256) is reached
    // after nine full headers and 255 compressed ones; then a full header every 257 packets.
    assert_eq!(
        full_header_numbers(IphcConfig::default(), 800, Duration::ZERO),
        [1, 3, 6, 11, 20, 37, 70, 135, 264, 521, 778]
    );
}

#[test]
fn refresh_every_f_max_period_packets() {
    let config = IphcConfig {
        f_max_period: 4,
        ..IphcConfig::default()
    };
    assert_eq!(
        full_header_numbers(config, 28, Duration::ZERO),
        [1, 3, 6, 11, 16, 21, 26]
    );
}

#[test]
fn refresh_after_f_max_time() {
    // One packet a second: slow-start refreshes at 0, 2, 5 and 10 s; then F_PERIOD is 8
    // packets, longer than F_MAX_TIME (5 s): a refresh as soon as more than 5 s have passed.
    let fulls = full_header_numbers(IphcConfig::default(), 30, Duration::from_secs(1));
    let seconds: Vec<usize> = fulls.iter().map(|n| n - 1).collect();
    assert_eq!(seconds, [0, 2, 5, 10, 16, 22, 28]);
    // F_MAX_TIME zero: no limit.
    let config = IphcConfig {
        f_max_time: Duration::ZERO,
        ..IphcConfig::default()
    };
    assert_eq!(
        full_header_numbers(config, 30, Duration::from_secs(1)),
        [1, 3, 6, 11, 20]
    );
}

#[test]
fn a_compressed_header_of_another_generation_is_dropped() {
    let mut pair = Pair::new(IphcConfig::default());
    let packet = |id: u16, ttl: u8| v4_udp(V4 { ttl, ..V4::new(id) }, 7000, b"voice", true);
    for id in 0..40 {
        pair.pass(&packet(id, 64));
    }
    // The TTL changes; the full header of generation 1 is lost.
    let (kind, frame) = pair.send(&packet(40, 63));
    assert_eq!((kind, frame[2]), (FrameKind::FullHeader, 1));
    // The next compressed header carries generation 1: the context (generation 0) is not used.
    let (kind, frame) = pair.send(&packet(41, 63));
    assert_eq!((kind, frame[1]), (FrameKind::CompressedNonTcp, 1));
    assert_eq!(pair.recv(kind, &frame), Err(DropReason::NoContext));
    // Slow-start: the third packet after the change is a full header again, and repairs.
    assert_eq!(pair.pass(&packet(42, 63)).0, FrameKind::FullHeader);
    assert_eq!(pair.pass(&packet(43, 63)).0, FrameKind::CompressedNonTcp);
    // A late compressed header of generation 0 (a reordering link) is dropped too.
    let mut old = v4_udp(V4::new(7), 7000, b"voice", true);
    let mut scratch = Pair::new(IphcConfig::default());
    scratch.send(&old);
    let (_, stale) = scratch.send(&{
        old[4] = 0;
        old.clone()
    });
    assert_eq!(stale[1], 0);
    assert_eq!(
        pair.recv(FrameKind::CompressedNonTcp, &stale),
        Err(DropReason::NoContext)
    );
}

#[test]
fn a_generation_is_not_reused_within_min_wrap() {
    let mut pair = Pair::new(IphcConfig::default());
    let packet = |ttl: u8| v4_udp(V4 { ttl, ..V4::new(1) }, 7000, b"x", true);
    // 64 context changes at time 0 use generations 0..=63.
    for g in 0..64u8 {
        let (kind, frame) = pair.pass(&packet(200 - g));
        assert_eq!((kind, frame[2]), (FrameKind::FullHeader, g));
    }
    // The 65th would reuse generation 0, last used less than MIN_WRAP (3 s) ago.
    assert_eq!(pair.pass(&packet(100)).0, FrameKind::Ip);
    pair.c.set_time(Duration::from_millis(2999));
    assert_eq!(pair.pass(&packet(101)).0, FrameKind::Ip);
    pair.c.set_time(Duration::from_secs(3));
    let (kind, frame) = pair.pass(&packet(102));
    assert_eq!((kind, frame[2]), (FrameKind::FullHeader, 0));
}
