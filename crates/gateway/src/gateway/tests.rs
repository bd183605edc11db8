use super::*;
use taroc_core::{Compressor, Scheme};

/// An IPv4 TCP packet with valid checksums.
fn tcp_packet(seq: u32, payload: usize) -> Vec<u8> {
    let total = 40 + payload;
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&[10, 0, 0, 1]);
    p[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let c = taroc_wire::checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p[20..22].copy_from_slice(&1234u16.to_be_bytes());
    p[22..24].copy_from_slice(&80u16.to_be_bytes());
    p[24..28].copy_from_slice(&seq.to_be_bytes());
    p[32] = 0x50;
    p[33] = 0x10;
    p[34..36].copy_from_slice(&1000u16.to_be_bytes());
    let sum = taroc_wire::checksum::Sum::new()
        .add_pseudo_header(
            [10, 0, 0, 1].into(),
            [10, 0, 0, 2].into(),
            6,
            (total - 20) as u32,
        )
        .add_bytes(&p[20..])
        .checksum();
    p[36..38].copy_from_slice(&sum.to_be_bytes());
    p
}

fn config(link: LinkConfig) -> PipelineConfig {
    PipelineConfig {
        variants: [Variant::of(Scheme::None), Variant::of(Scheme::None)],
        links: [link.clone(), link],
        tun_mtu: 1500,
        seed: 1,
        verify_checksums: true,
    }
}

#[test]
fn fields_are_named() {
    let p = tcp_packet(1, 10);
    assert_eq!(field_name(&p, 4), "IPv4 identification");
    assert_eq!(field_name(&p, 25), "TCP sequence number");
    assert_eq!(field_name(&p, 45), "payload");
    assert_eq!(field_name(&[0x60], 0), "an unparsable header");
}

#[test]
fn checksums_are_judged() {
    let mut p = tcp_packet(1, 10);
    assert_eq!(transport_checksum_ok(&p), Some(true));
    p[45] ^= 1;
    assert_eq!(transport_checksum_ok(&p), Some(false));
    assert_eq!(transport_checksum_ok(&[0x45, 0]), None);
}

#[test]
fn packets_rebuilt_wrong_are_dropped_unless_asked_for() {
    // VJ rebuilds wrong packets after a loss (RFC 1144 does not verify); the gateway checks
    // each one's TCP checksum before writing it.
    for verify in [true, false] {
        let link = LinkConfig {
            loss: 0.2,
            ..LinkConfig::default()
        };
        let mut pipeline = Pipeline::new(&PipelineConfig {
            variants: [Variant::of(Scheme::Vj), Variant::of(Scheme::Vj)],
            verify_checksums: verify,
            ..config(link)
        })
        .unwrap();
        let mut wrong = 0;
        let mut sink = |_: usize, p: &[u8]| {
            wrong += usize::from(transport_checksum_ok(p) == Some(false));
            true
        };
        for i in 0..300u32 {
            let now = u64::from(i) * 1_000_000;
            pipeline.input(0, now, &tcp_packet(i * 100, 100), &mut sink);
            pipeline.poll(now, &mut sink);
        }
        pipeline.poll(1_000_000_000_000, &mut sink);
        let c = pipeline.counters(0);
        if verify {
            assert_eq!((wrong, c.incorrect_delivered, c.checksum_failed), (0, 0, 0));
            assert!(c.checksum_dropped > 0, "{c:?}");
        } else {
            assert!(
                wrong > 0 && c.incorrect_delivered as usize == wrong,
                "{c:?}"
            );
            assert_eq!((c.checksum_failed as usize, c.checksum_dropped), (wrong, 0));
        }
    }
}

/// `tcp_packet` of the opposite direction (addresses and ports swapped), an ACK of `ack`.
fn reply(ack: u32) -> Vec<u8> {
    let mut p = tcp_packet(7, 0);
    p.copy_within(12..16, 16);
    p[12..16].copy_from_slice(&[10, 0, 0, 2]);
    p[20..24].copy_from_slice(&[0, 80, 0x04, 0xd2]);
    p[28..32].copy_from_slice(&ack.to_be_bytes());
    p[10..12].fill(0);
    let c = taroc_wire::checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p[36..38].fill(0);
    let sum = taroc_wire::checksum::Sum::new()
        .add_pseudo_header([10, 0, 0, 2].into(), [10, 0, 0, 1].into(), 6, 20)
        .add_bytes(&p[20..])
        .checksum();
    p[36..38].copy_from_slice(&sum.to_be_bytes());
    p
}

#[test]
fn the_ends_codecs_share_their_flows_so_the_reverse_flow_starts_from_its_mirror() {
    // taroc-plus's IR frames of the ACKs name the data flow instead of sending the
    // addresses and ports (8 + 4 octets, less the mirror's hash), and code their numbers
    // against the data flow's packets (section 3.4): the pipeline passes the
    // sibling notes at each end, on a transparent link and on one with a delay. The
    // start's three IR frames all go, mirrored, with context requests or without: the data
    // flow, whose frames could name them (a reference receipt, `taroc_core::plus::receipt`),
    // sends no IR frame after its start.
    let delayed = LinkConfig {
        rate_bps: 1_000_000,
        delay: Duration::from_millis(5),
        ..LinkConfig::default()
    };
    let links = [LinkConfig::default(), delayed];
    for (link, name) in links
        .iter()
        .flat_map(|l| [(l, "taroc-plus-u"), (l, "taroc-plus")])
    {
        let link = link.clone();
        let plus = Variant::by_name(name).unwrap();
        let mut pipeline = Pipeline::new(&PipelineConfig {
            variants: [plus.clone(), plus.clone()],
            ..config(link)
        })
        .unwrap();
        let mut delivered = 0;
        let mut sink = |_: usize, _: &[u8]| {
            delivered += 1;
            true
        };
        let (mut alone, mut alone_data) = (plus.compressor(), plus.compressor());
        let (mut alone_bytes, mut alone_data_bytes, mut frame) = (0, 0, Vec::new());
        for i in 0..8u32 {
            let now = u64::from(i) * 20_000_000;
            let data = tcp_packet(i * 100, 100);
            alone_data.compress(&data, &mut frame);
            alone_data_bytes += frame.len() as u64 + 1;
            pipeline.input(0, now, &data, &mut sink);
            pipeline.poll(now + 10_000_000, &mut sink);
            let ack = reply(i * 100 + 100);
            pipeline.input(1, now + 10_000_000, &ack, &mut sink);
            pipeline.poll(now + 19_000_000, &mut sink);
            alone.compress(&ack, &mut frame);
            alone_bytes += frame.len() as u64 + 1;
        }
        assert_eq!(delivered, 16);
        let c = pipeline.counters(1);
        assert_eq!(c.incorrect_delivered, 0);
        let saved = alone_bytes - c.link_bytes;
        // Each also codes its sequence and acknowledgment numbers (8 octets) as one-octet
        // differences from the data segment it answers, which it names by its checksum (2
        // octets), and its window as one from that segment's (1 for 2).
        assert_eq!(
            saved,
            3 * (8 + 4 - 2 + 8 - 2 - 2 + 1),
            "{name}: three start IRs"
        );
        // The data flow's start does end at the first ACK, whose IR frame codes its numbers
        // against the data flow's first (no feedback frame needed): its other two IR frames
        // go CO.
        let data_bytes = pipeline.counters(0).link_bytes;
        assert!(
            data_bytes < alone_data_bytes,
            "{name}: {data_bytes} {alone_data_bytes}"
        );
    }
}

#[test]
fn transparent_link_delivers_at_once_and_oversize_is_refused() {
    let mut pipeline = Pipeline::new(&config(LinkConfig::default())).unwrap();
    let mut out = Vec::new();
    let mut sink = |d: usize, p: &[u8]| {
        out.push((d, p.to_vec()));
        true
    };
    let packet = tcp_packet(1, 100);
    pipeline.input(0, 0, &packet, &mut sink);
    pipeline.input(1, 0, &tcp_packet(7, 1500), &mut sink);
    assert_eq!(out, vec![(0, packet)]);
    assert_eq!(pipeline.counters(1).oversize_packets, 1);
    assert_eq!(pipeline.counters(0).incorrect_delivered, 0);
}

#[test]
fn delayed_link_delivers_when_due() {
    let link = LinkConfig {
        rate_bps: 1_000_000,
        delay: Duration::from_millis(10),
        ..LinkConfig::default()
    };
    let mut pipeline = Pipeline::new(&config(link)).unwrap();
    let mut out = 0;
    let mut sink = |_: usize, _: &[u8]| {
        out += 1;
        true
    };
    for i in 0..5 {
        pipeline.input(0, 0, &tcp_packet(i * 100, 100), &mut sink);
    }
    // The next packet may start when the first has left (141 bytes at 1 Mbit/s).
    assert_eq!(pipeline.next_event(), Some(1_128_000));
    pipeline.poll(10_000_000, &mut sink);
    pipeline.poll(100_000_000, &mut sink);
    assert_eq!(out, 5);
    assert_eq!(pipeline.counters(0).delivered, 5);
}

#[test]
fn link_mtu_below_tun_mtu_is_a_configuration_error() {
    let mut c = config(LinkConfig::default());
    c.links[1].mtu = 1000;
    assert!(Pipeline::new(&c)
        .unwrap_err()
        .to_string()
        .contains("below the TUN MTU"));
}
