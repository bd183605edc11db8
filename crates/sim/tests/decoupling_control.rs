//! The control TCP against hand-worked traces: credit per header packet, whole data packets
//! only, carried-over credit, data before its header packet, and a lost header packet
//! "retransmitted" as new credit (fast retransmit and timeout).

use std::net::Ipv4Addr;

use taroc_sim::queue::is_header_packet;
use taroc_sim::studies::decoupling::control::ControlSender;
use taroc_sim::studies::decoupling::tunnel::Tunnel;
use taroc_sim::tcp::segment::{self, Endpoints, Parsed, SegmentSpec};
use taroc_sim::tcp::Outbox;
use taroc_wire::tcp::flags;

const ISS: u32 = 1000;
const VMSS: u32 = 1500;

fn ep() -> Endpoints {
    Endpoints {
        src: Ipv4Addr::new(10, 0, 0, 1).into(),
        dst: Ipv4Addr::new(10, 0, 1, 1).into(),
        src_port: 6001,
        dst_port: 6001,
    }
}

/// A data packet of `len` bytes (its first byte tells it from a header packet in the traces).
fn data(len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p
}

/// The ACK of virtual offset `offset`, parsed as the sender sees it.
fn ack(offset: u32) -> Parsed {
    let spec = SegmentSpec {
        seq: 1,
        ack: ISS + 1 + offset,
        flags: flags::ACK,
        window: u16::MAX,
        timestamps: Some((0, 0)),
        sack: &[],
        payload_len: 0,
        payload_offset: 0,
    };
    let mut p = Vec::new();
    segment::build(&ep().reversed(), 0, &spec, &mut p);
    segment::parse(&p).unwrap()
}

/// What went out, in order: `H<offset>` for a header packet, the length for a data packet.
fn trace(out: &mut Outbox) -> Vec<String> {
    out.packets
        .drain(..)
        .map(|p| {
            if is_header_packet(&p) {
                let h = segment::parse(&p).expect("header packets verify");
                assert_eq!(h.payload_len, 0);
                assert_eq!(p.len(), 52);
                format!("H{}", h.seq - ISS - 1)
            } else {
                p.len().to_string()
            }
        })
        .collect()
}

#[test]
fn credit_buys_whole_packets_before_their_header_and_carries_over() {
    let mut c = ControlSender::new(ep(), ISS, VMSS, 64);
    let mut tunnel = Tunnel::new(100);
    for len in [1000, 1000, 400, 1500, 1500, 1500] {
        tunnel.push(data(len));
    }
    let mut out = Outbox::default();
    c.pump(0, &mut tunnel, &mut out);
    assert_eq!(trace(&mut out), ["1000", "H0"]);
    assert_eq!(c.credit(), 500);
    c.on_ack(10, &ack(1500), &mut tunnel, &mut out);
    c.pump(10, &mut tunnel, &mut out);
    // Slow start: two header packets; 500 + 1500 buys 1000 and 400, 600 + 1500 buys 1500.
    assert_eq!(trace(&mut out), ["1000", "400", "H1500", "1500", "H3000"]);
    assert_eq!(c.credit(), 600);
}

#[test]
fn header_packets_wait_for_data_and_carried_credit_is_spent_first() {
    let mut c = ControlSender::new(ep(), ISS, VMSS, 64);
    let mut tunnel = Tunnel::new(100);
    let mut out = Outbox::default();
    assert!(!c.pump(0, &mut tunnel, &mut out));
    assert!(out.packets.is_empty());
    tunnel.push(data(600));
    c.pump(1, &mut tunnel, &mut out);
    assert_eq!(trace(&mut out), ["600", "H0"]);
    assert_eq!(c.credit(), 900);
    // The window is full (one packet): new data goes out on the credit left, with no header.
    tunnel.push(data(800));
    c.pump(2, &mut tunnel, &mut out);
    assert_eq!(trace(&mut out), ["800"]);
    assert_eq!(c.credit(), 100);
}

#[test]
fn a_lost_header_packet_is_resent_with_new_credit_on_three_duplicate_acks() {
    let mut c = ControlSender::new(ep(), ISS, VMSS, 64);
    let mut tunnel = Tunnel::new(100);
    for _ in 0..40 {
        tunnel.push(data(1500));
    }
    let mut out = Outbox::default();
    c.pump(0, &mut tunnel, &mut out);
    c.on_ack(10, &ack(1500), &mut tunnel, &mut out);
    c.pump(10, &mut tunnel, &mut out);
    c.on_ack(20, &ack(4500), &mut tunnel, &mut out);
    c.pump(20, &mut tunnel, &mut out);
    let sent = trace(&mut out);
    // One ACK for two header packets: slow start grows by one packet per ACK.
    assert_eq!(sent.iter().filter(|s| s.starts_with('H')).count(), 6);
    assert_eq!(c.window_packets(), 3);
    // H4500 is lost: three duplicate ACKs of 4500.
    for t in 30..33 {
        c.on_ack(t, &ack(4500), &mut tunnel, &mut out);
    }
    assert_eq!(trace(&mut out), ["1500", "H4500"]);
    assert_eq!(c.stats().fast_retransmits, 1);
    assert_eq!(c.stats().retransmissions, 1);
    assert_eq!(tunnel.forwarded_packets, 7);
}

#[test]
fn a_timeout_resends_the_first_header_packet_with_new_credit_and_one_packet_window() {
    let mut c = ControlSender::new(ep(), ISS, VMSS, 64);
    let mut tunnel = Tunnel::new(100);
    for _ in 0..10 {
        tunnel.push(data(1500));
    }
    let mut out = Outbox::default();
    c.pump(0, &mut tunnel, &mut out);
    c.on_ack(10, &ack(1500), &mut tunnel, &mut out);
    c.pump(10, &mut tunnel, &mut out);
    trace(&mut out);
    let deadline = c.deadline().expect("the timer runs");
    c.on_timer(deadline - 1, &mut tunnel, &mut out);
    assert!(out.packets.is_empty(), "not yet due");
    c.on_timer(deadline, &mut tunnel, &mut out);
    assert_eq!(trace(&mut out), ["1500", "H1500"]);
    assert_eq!(c.stats().timeouts, 1);
    assert_eq!(c.window_packets(), 1);
    // Backed off: the next timeout is later than the first RTO.
    assert!(c.deadline().unwrap() - deadline > deadline - 10);
}
