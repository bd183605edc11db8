use super::*;

fn v4_flow() -> FlowKey {
    FlowKey {
        src: IpAddr::V4([10, 0, 0, 1].into()),
        dst: IpAddr::V4([10, 0, 0, 2].into()),
        src_port: 40000,
        dst_port: 80,
    }
}

fn v6_flow() -> FlowKey {
    let mut a = [0u8; 16];
    a[0] = 0xfd;
    a[15] = 1;
    let mut b = a;
    b[15] = 2;
    FlowKey {
        src: IpAddr::V6(a.into()),
        dst: IpAddr::V6(b.into()),
        src_port: 443,
        dst_port: 51000,
    }
}

#[test]
fn notes_round_trip() {
    let mut note = Vec::new();
    for flow in [v4_flow(), v6_flow()] {
        for n in [Note::Context(7, Some(flow)), Note::Handshake(flow)] {
            put_note(&n, &mut note);
            assert_eq!(parse_note(&note), Some(n));
        }
    }
    put_note(&Note::Context(9, None), &mut note);
    assert_eq!(note, [0, 9]);
    assert_eq!(parse_note(&note), Some(Note::Context(9, None)));
    for bad in [
        &[][..],
        &[0],
        &[0, 1, 5],
        &[0, 1, 4, 0, 0],
        &[1],
        &[1, 4],
        &[2, 1],
    ] {
        assert_eq!(parse_note(bad), None, "{bad:?}");
    }
}

#[test]
fn mirrors_find_the_reverse_flow_by_its_hash() {
    let mut mirrors = Mirrors::default();
    let mut note = Vec::new();
    let hash = flow_hash(&v4_flow());
    assert_ne!(hash, flow_hash(&reversed(&v4_flow())));
    put_note(&Note::Context(3, Some(v4_flow())), &mut note);
    mirrors.hear(&note);
    assert_eq!(mirrors.find(&reversed(&v4_flow())), Some(hash));
    assert_eq!(mirrors.find(&v4_flow()), None);
    assert_eq!(mirrors.resolve(hash), Some(&v4_flow()));
    assert_eq!(mirrors.resolve(hash ^ 1), None);
    // The CID given to another flow: the flow is still known, from the recent ones.
    put_note(&Note::Context(3, Some(v6_flow())), &mut note);
    mirrors.hear(&note);
    assert_eq!(mirrors.find(&reversed(&v4_flow())), Some(hash));
    assert_eq!(mirrors.resolve(hash), Some(&v4_flow()));
    assert_eq!(mirrors.resolve(flow_hash(&v6_flow())), Some(&v6_flow()));
}

#[test]
fn recent_flows_are_forgotten_in_turn_but_held_ones_are_not() {
    let mut mirrors = Mirrors::default();
    let mut note = Vec::new();
    let mut hear = |mirrors: &mut Mirrors, n: Note| {
        put_note(&n, &mut note);
        mirrors.hear(&note);
    };
    hear(&mut mirrors, Note::Handshake(v6_flow()));
    hear(&mut mirrors, Note::Context(7, Some(v4_flow())));
    let (h6, h4) = (flow_hash(&v6_flow()), flow_hash(&v4_flow()));
    assert_eq!(mirrors.find(&reversed(&v6_flow())), Some(h6));
    for port in 0..RECENT as u16 {
        let mut other = v4_flow();
        other.src_port = port;
        hear(&mut mirrors, Note::Handshake(other));
    }
    assert_eq!(mirrors.find(&reversed(&v6_flow())), None, "forgotten");
    assert_eq!(mirrors.resolve(h6), None);
    assert_eq!(
        mirrors.find(&reversed(&v4_flow())),
        Some(h4),
        "held under CID 7"
    );
    assert_eq!(mirrors.resolve(h4), Some(&v4_flow()));
}

#[test]
fn an_outbox_tells_each_cid_once_as_it_is_then_the_handshakes_it_kept() {
    let mut outbox = Outbox::default();
    for port in 0..PENDING_HANDSHAKES as u16 + 2 {
        let mut flow = v4_flow();
        flow.src_port = port;
        outbox.handshake(flow);
    }
    outbox.changed(5);
    outbox.changed(5);
    let mut notes = Vec::new();
    let mut note = Vec::new();
    while outbox.take(|cid| (cid == 5).then(v6_flow), &mut note) {
        notes.push(parse_note(&note).expect("well-formed"));
    }
    assert_eq!(notes.len(), 1 + PENDING_HANDSHAKES);
    assert_eq!(notes[0], Note::Context(5, Some(v6_flow())));
    let Note::Handshake(oldest) = notes[1] else {
        panic!("{:?}", notes[1]);
    };
    assert_eq!(oldest.src_port, 2, "the oldest two were dropped");
}

#[test]
fn numbers_are_kept_newest_first_and_fresh_only_among_the_last_told_of() {
    let mut mirrors = Mirrors::default();
    let mut note = Vec::new();
    let mut hear = |m: &mut Mirrors, hash: u16, checksum: u16| {
        let numbers = Numbers {
            checksum,
            next_seq: u32::from(checksum),
            ack: 0,
            window: 0,
            ts: None,
        };
        put_note(&Note::Numbers(hash, numbers), &mut note);
        m.hear(&note);
    };
    for c in 0..NUMBERS_KEPT as u16 + 10 {
        hear(&mut mirrors, 7, c);
    }
    assert_eq!(mirrors.numbers(7, 9), None, "the oldest left the ring");
    assert_eq!(mirrors.numbers(7, 10).map(|n| n.next_seq), Some(10));
    assert_eq!(mirrors.numbers(8, 10), None, "another flow's hash");
    let newest = NUMBERS_KEPT as u16 + 9;
    assert_eq!(mirrors.fresh_numbers(7).map(|n| n.checksum), Some(newest));
    // Another flow's packets push the first flow's out of the fresh ones, not out of the ring.
    for c in 0..NUMBERS_FRESH as u16 {
        hear(&mut mirrors, 8, c);
    }
    assert_eq!(mirrors.fresh_numbers(7), None);
    assert!(mirrors.numbers(7, newest).is_some());
    // A checksum alone names the newest numbers that have it, of whatever flow: once flow 8
    // has a packet of checksum 100 too, that one, not flow 7's.
    assert_eq!(mirrors.numbers_by_checksum(100).map(|(h, _)| h), Some(7));
    let older = *mirrors.numbers(7, 100).unwrap();
    assert!(mirrors.names(7, &older));
    hear(&mut mirrors, 8, 100);
    assert_eq!(mirrors.numbers_by_checksum(100).map(|(h, _)| h), Some(8));
    assert!(!mirrors.names(7, &older));
    let newer = *mirrors.numbers(8, 100).unwrap();
    assert!(mirrors.names(8, &newer));
    assert_eq!(mirrors.numbers_by_checksum(60_000), None);
}

#[test]
fn changed_cids_come_out_once_lowest_first() {
    let mut changed = Changed::default();
    for cid in [200, 3, 64, 3] {
        changed.mark(cid);
    }
    let taken: Vec<u8> = core::iter::from_fn(|| changed.take()).collect();
    assert_eq!(taken, [3, 64, 200]);
}

/// FNV-1a byte by byte over the flow as notes carry it: what [`flow_hash`] computes from
/// registers.
fn flow_hash_bytewise(flow: &FlowKey) -> u16 {
    let mut hash = 0x811c_9dc5u32;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    };
    match (flow.src, flow.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            eat(&[4]);
            eat(&s.octets());
            eat(&d.octets());
        }
        (s, d) => {
            eat(&[6]);
            eat(&v6_octets(s));
            eat(&v6_octets(d));
        }
    }
    eat(&flow.src_port.to_be_bytes());
    eat(&flow.dst_port.to_be_bytes());
    (hash >> 16) as u16 ^ hash as u16
}

proptest::proptest! {
    /// The flow hash is FNV-1a over the flow's bytes, for IPv4, IPv6 and mixed flows.
    #[test]
    fn the_flow_hash_is_fnv_1a_of_the_flows_bytes(
        s in proptest::prelude::any::<[u8; 16]>(),
        d in proptest::prelude::any::<[u8; 16]>(),
        ports in proptest::prelude::any::<(u16, u16)>(),
        versions in 0u8..4,
    ) {
        let addr = |a: [u8; 16], v6: bool| -> IpAddr {
            if v6 {
                a.into()
            } else {
                <[u8; 4]>::try_from(&a[..4]).unwrap().into()
            }
        };
        let flow = FlowKey {
            src: addr(s, versions & 1 != 0),
            dst: addr(d, versions & 2 != 0),
            src_port: ports.0,
            dst_port: ports.1,
        };
        proptest::prop_assert_eq!(flow_hash(&flow), flow_hash_bytewise(&flow));
    }
}
