//! Tests of the emulated link: its queue, delay, loss, reordering and seeded streams.

use super::*;

const MS: u64 = 1_000_000;

/// Starts every queued packet that may start by `now`, its frame being the packet itself.
fn pump(link: &mut Link, now: u64) -> Vec<LinkDrop> {
    let mut drops = Vec::new();
    while let Some(start) = link.ready(now) {
        let packet = link.head().unwrap().0.to_vec();
        if let Err(e) = link.transmit(start, FrameKind::Ip, Some(&packet)) {
            drops.push(e);
        }
    }
    drops
}

fn pass(link: &mut Link, now: u64, packet: &[u8]) {
    link.offer(now, packet, false).unwrap();
    assert!(pump(link, now).is_empty());
}

fn drain(link: &mut Link, now: u64) -> Vec<(Vec<u8>, Fate)> {
    pump(link, now);
    let mut out = Vec::new();
    while let Some(a) = link.receive(now) {
        out.push((a.frame.to_vec(), a.fate));
    }
    out
}

#[test]
fn serialization_queue_and_delay() {
    let config = LinkConfig {
        rate_bps: 8_000, // one byte per ms
        delay: Duration::from_millis(100),
        queue: 2,
        ..LinkConfig::default()
    };
    let mut link = Link::new(config, 1, 0, 100);
    let packet = [0u8; 99]; // 100 bytes with the kind byte: 100 ms on the wire
    for _ in 0..3 {
        pass(&mut link, 0, &packet);
    }
    // One on the wire, two waiting: the queue is full.
    assert_eq!(link.offer(0, &packet, false), Err(LinkDrop::QueueFull));
    assert_eq!(link.next_event(), Some(100 * MS));
    assert!(drain(&mut link, 199 * MS).is_empty());
    assert_eq!(drain(&mut link, 200 * MS).len(), 1);
    // The second packet is on the wire, the third waits: room for one more.
    pass(&mut link, 250 * MS, &packet);
    assert_eq!(drain(&mut link, 400 * MS).len(), 2);
    assert_eq!(drain(&mut link, 500 * MS).len(), 1);
    assert!(link.is_empty());
}

#[test]
fn an_idle_link_takes_a_packet_even_without_a_queue() {
    let config = LinkConfig {
        rate_bps: 8_000,
        queue: 0,
        ..LinkConfig::default()
    };
    let mut link = Link::new(config, 1, 0, 100);
    pass(&mut link, 0, &[0; 9]);
    assert_eq!(link.offer(0, &[0; 9], false), Err(LinkDrop::QueueFull));
    assert_eq!(drain(&mut link, 10 * MS).len(), 1);
    pass(&mut link, 10 * MS, &[0; 9]);
}

#[test]
fn oversize_and_full_slots_are_refused() {
    let config = LinkConfig {
        mtu: 10,
        slots: 2,
        delay: Duration::from_millis(1),
        ..LinkConfig::default()
    };
    let mut link = Link::new(config, 1, 0, 100);
    assert_eq!(link.offer(0, &[0; 101], false), Err(LinkDrop::Oversize));
    link.offer(0, &[0; 11], false).unwrap();
    assert_eq!(pump(&mut link, 0), vec![LinkDrop::Oversize]);
    pass(&mut link, 0, &[0; 10]);
    pass(&mut link, 0, &[0; 10]);
    link.offer(0, &[0; 10], false).unwrap();
    assert_eq!(pump(&mut link, 0), vec![LinkDrop::SlotsFull]);
}

#[test]
fn feedback_frames_travel_as_they_are_and_the_oracle_rides_along() {
    let config = LinkConfig {
        delay: Duration::from_millis(1),
        ..LinkConfig::default()
    };
    let mut link = Link::new(config, 1, 0, 100);
    link.offer(0, &[1, 2, 3], false).unwrap();
    let start = link.ready(0).unwrap();
    link.transmit(start, FrameKind::CompressedTcp, Some(&[9]))
        .unwrap();
    link.offer(0, &[7, 7], true).unwrap();
    let start = link.ready(0).unwrap();
    assert_eq!(link.head(), Some((&[7u8, 7][..], true)));
    link.transmit(start, FrameKind::ContextState, None).unwrap();
    let a = link.receive(MS).unwrap();
    assert_eq!(
        (a.kind, a.frame, a.original),
        (FrameKind::CompressedTcp, &[9u8][..], Some(&[1u8, 2, 3][..]))
    );
    let a = link.receive(MS).unwrap();
    assert_eq!(
        (a.kind, a.frame, a.original),
        (FrameKind::ContextState, &[7u8, 7][..], None)
    );
}

#[test]
fn bit_errors_match_the_rate_and_are_deterministic() {
    let config = LinkConfig {
        ber: 1e-4,
        slots: 100_000,
        ..LinkConfig::default()
    };
    let run = || {
        let mut link = Link::new(config.clone(), 7, 0, 1000);
        let packet = [0u8; 999]; // 8000 bits: P(error) = 1 - (1 - 1e-4)^8000 = 0.5507
        for _ in 0..20_000 {
            pass(&mut link, 0, &packet);
        }
        drain(&mut link, 0)
            .iter()
            .map(|(_, fate)| *fate == Fate::BitError)
            .collect::<Vec<_>>()
    };
    let errors = run();
    let rate = errors.iter().filter(|&&e| e).count() as f64 / errors.len() as f64;
    assert!((rate - 0.5507).abs() < 0.02, "{rate}");
    assert_eq!(errors, run());
}

#[test]
fn bursts_have_the_average_rate_and_length() {
    let config = LinkConfig {
        loss: 0.1,
        burst: Some(4.0),
        slots: 200_000,
        ..LinkConfig::default()
    };
    let mut link = Link::new(config, 3, 1, 10);
    for _ in 0..200_000 {
        pass(&mut link, 0, &[0; 10]);
    }
    let lost: Vec<bool> = drain(&mut link, 0)
        .iter()
        .map(|(_, f)| *f == Fate::Lost)
        .collect();
    let rate = lost.iter().filter(|&&l| l).count() as f64 / lost.len() as f64;
    let bursts = lost.windows(2).filter(|w| !w[0] && w[1]).count() as f64;
    let mean_burst = lost.iter().filter(|&&l| l).count() as f64 / bursts;
    assert!((rate - 0.1).abs() < 0.01, "{rate}");
    assert!((mean_burst - 4.0).abs() < 0.3, "{mean_burst}");
}

#[test]
fn reordered_frames_come_after_one_to_three_others() {
    let config = LinkConfig {
        reorder: 0.2,
        delay: Duration::from_millis(5),
        slots: 5000,
        ..LinkConfig::default()
    };
    let mut link = Link::new(config, 5, 0, 4);
    for i in 0..2000u32 {
        pass(&mut link, 0, &i.to_be_bytes());
    }
    let order: Vec<u32> = drain(&mut link, 5 * MS)
        .iter()
        .map(|(f, _)| u32::from_be_bytes([f[0], f[1], f[2], f[3]]))
        .collect();
    assert_eq!(order.len(), 2000);
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, (0..2000).collect::<Vec<_>>());
    let late: Vec<usize> = order
        .iter()
        .enumerate()
        .filter(|&(pos, &v)| (v as usize) < pos)
        .map(|(pos, &v)| pos - v as usize)
        .collect();
    assert!(!late.is_empty());
    assert!(late.iter().all(|&d| (1..=3).contains(&d)), "{late:?}");
}

#[test]
fn a_held_frame_leaves_after_its_deadline_without_followers() {
    let config = LinkConfig {
        reorder: 1.0,
        delay: Duration::from_millis(1),
        ..LinkConfig::default()
    };
    let mut link = Link::new(config, 5, 0, 8);
    link.offer(0, &[9, 9], false).unwrap();
    let start = link.ready(0).unwrap();
    link.transmit(start, FrameKind::Ip, Some(&[1])).unwrap();
    assert!(link.receive(MS).is_none());
    let deadline = link.next_event().unwrap();
    assert_eq!(deadline, 11 * MS);
    let arrival = link.receive(deadline).unwrap();
    assert_eq!(
        (arrival.frame, arrival.original),
        (&[1u8][..], Some(&[9u8, 9][..]))
    );
    assert!(link.is_empty());
}
