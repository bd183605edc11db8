//! Mirrored compact IRs (spec section 3.3): a flow's IR frames name the opposite direction's
//! flow, which the codecs at each end tell each other of.

use alloc::vec::Vec;

use super::{config, fill_checksums, fix_tcp_checksum, linux_syn, one_way, segment};
use crate::codec::{pass_sibling_notes, Compressor, Decompressor, DropReason};
use crate::plus::compact::CompactIr;
use crate::plus::format::{self, ir::MIRRORED, ir::NUMBERED};
use crate::plus::handshake::MIRROR;
use crate::plus::mirror::{self, Note};
use crate::plus::packed;
use crate::plus::{PlusCompressor, PlusConfig, PlusDecompressor};
use crate::tcp::packet::TcpIpPacket;
use crate::test_rng::Rng;

/// The context flags' bits M and N of a compact IR `frame` ([`CompactIr::mirror_flags`]).
fn mirror_flags(frame: &[u8]) -> u8 {
    CompactIr::new_checked(frame).map_or(0, |f| f.mirror_flags())
}

/// The codecs at one end of the link: the compressor of the direction it sends, the
/// decompressor of the one it receives.
pub(super) struct End {
    pub(super) c: PlusCompressor,
    pub(super) d: PlusDecompressor,
}

impl End {
    pub(super) fn new() -> End {
        End::with(config())
    }

    fn with(config: PlusConfig) -> End {
        End {
            c: PlusCompressor::new(config.clone()),
            d: PlusDecompressor::new(config),
        }
    }

    fn share(&mut self) {
        pass_sibling_notes(&mut self.c, &mut self.d, &mut Vec::new());
    }
}

/// Sends `packet` from `from` to `to` as the harnesses do (notes passed at both ends); returns
/// the frame's kind byte and bytes and the decompressor's verdict.
pub(super) fn send(
    from: &mut End,
    to: &mut End,
    packet: &[u8],
) -> (u8, Vec<u8>, Result<(), DropReason>) {
    let mut frame = Vec::new();
    let kind = from.c.compress(packet, &mut frame);
    from.share();
    let mut out = Vec::new();
    let result = to.d.decompress(kind, &frame, &mut out);
    to.share();
    if result.is_ok() {
        assert_eq!(out, packet, "delivered exactly");
    }
    (kind.to_byte(), frame, result)
}

/// A frame as the compact IR it stands for: a packed IR unpacked to its short mirrored form
/// ([`packed::PackedIr::unpack`]), any other frame as it is.
fn unpacked(
    (kind, frame, result): (u8, Vec<u8>, Result<(), DropReason>),
) -> (u8, Vec<u8>, Result<(), DropReason>) {
    if kind != format::PACKED_IR {
        return (kind, frame, result);
    }
    let mut short = Vec::new();
    packed::PackedIr::new_checked(&frame[..])
        .and_then(|p| p.unpack(&mut short))
        .expect("a packed IR the compressor wrote");
    (format::COMPACT_IR, short, result)
}

/// [`segment`] of the opposite direction: addresses and ports swapped.
pub(super) fn reply(seq: u32, ack: u32, id: u16, ts: u32, payload: usize) -> Vec<u8> {
    let mut p = segment(seq, ack, id, ts, payload);
    let (src, dst) = (p[12..16].to_vec(), p[16..20].to_vec());
    p[12..16].copy_from_slice(&dst);
    p[16..20].copy_from_slice(&src);
    let (sport, dport) = (p[20..22].to_vec(), p[22..24].to_vec());
    p[20..22].copy_from_slice(&dport);
    p[22..24].copy_from_slice(&sport);
    p[10..12].fill(0);
    p[36..38].fill(0);
    fill_checksums(&mut p);
    p
}

/// Sets up the forward flow (A to B) with its start frames and a few CO frames.
fn forward_flow(a: &mut End, b: &mut End) {
    for i in 0..6 {
        let (_, _, result) = send(a, b, &segment(1000 + 100 * i, 77, i as u16, 500 + i, 100));
        assert_eq!(result, Ok(()));
    }
}

#[test]
fn the_reverse_flow_starts_from_its_mirror() {
    let (mut a, mut b) = (End::new(), End::new());
    forward_flow(&mut a, &mut b);
    let mut unmirrored = End::new();
    for i in 0..3 {
        let p = reply(77 + i, 1600, 40 + i as u16, 900 + i, 0);
        let (kind, packed_frame, result) = send(&mut b, &mut a, &p);
        assert_eq!(result, Ok(()));
        assert_eq!(kind, format::PACKED_IR, "start IR {i}");
        let (_, frame, _) = unpacked((kind, packed_frame.clone(), result));
        assert_eq!(
            packed_frame.len() + 2,
            frame.len(),
            "two octets fewer packed"
        );
        let flags = mirror_flags(&frame);
        assert_eq!(
            flags,
            MIRRORED | NUMBERED,
            "start IR {i} is mirrored, with numbers"
        );
        // The same IR without a sibling's notes: 8 address and 4 port octets more, less the
        // mirror's hash; and 16 octets of numbers more, less the reference's checksum and the
        // differences from the forward flow's last packet: the sequence number from its
        // acknowledgment number (i, one octet), the acknowledgment number from its next
        // sequence number (0, one), the TS value from its TS echo (648 + i, two) and the TS
        // echo from its TS value (-55, one); the window as its difference from that
        // packet's (one octet for two); and in the short form, whose shape carries the
        // context flags (one octet) and whose reference names the mirror (the hash's two).
        let mut plain = Vec::new();
        unmirrored.c.compress(&p, &mut plain);
        assert_eq!(
            plain.len(),
            frame.len() + 8 + 4 - 2 + 16 - 2 - 5 + 1 + 1 + 2
        );
    }
    let (kind, _, result) = send(&mut b, &mut a, &reply(80, 1600, 43, 903, 0));
    assert_eq!(result, Ok(()));
    assert!(kind >= format::CO, "then CO frames");
}

#[test]
fn a_mirror_the_far_end_does_not_know_is_refused_then_repaired() {
    let forward = TcpIpPacket::parse(&segment(1, 2, 3, 4, 0))
        .expect("TCP")
        .key;
    // A's decompressor is replaced by one that heard of no flow (as after a restart of A's
    // codecs while B's go on), or only of the reverse of the mirror (which has another hash).
    for heard in [None, Some(mirror::reversed(&forward))] {
        let (mut a, mut b) = (End::new(), End::new());
        forward_flow(&mut a, &mut b);
        a.d = PlusDecompressor::new(config());
        if let Some(flow) = heard {
            let mut note = Vec::new();
            mirror::put_note(&Note::Context(0, Some(flow)), &mut note);
            a.d.sibling_note(&note);
        }
        let (kind, frame, result) = unpacked(send(&mut b, &mut a, &reply(77, 1600, 40, 900, 0)));
        assert_eq!(kind, format::COMPACT_IR);
        assert_eq!(mirror_flags(&frame) & MIRRORED, MIRRORED);
        assert_eq!(result, Err(DropReason::NoContext), "{heard:?}");
        // The refusal asks for the context; the IR frames that answer are not mirrored.
        let mut request = Vec::new();
        assert!(a.d.take_feedback(&mut request), "a context request");
        b.c.handle_feedback(&request);
        let (kind, frame, result) = send(&mut b, &mut a, &reply(78, 1600, 41, 901, 0));
        assert_eq!(result, Ok(()), "{heard:?}");
        assert_eq!(kind, format::COMPACT_IR);
        assert_eq!(mirror_flags(&frame) & MIRRORED, 0);
    }
}

#[test]
fn a_refresh_is_mirrored_and_the_next_repair_is_not() {
    // Without context requests, B's reverse flow refreshes its context in a mirrored IR
    // (without numbers), which A resolves among the flows its compressor sends, and the next
    // unmirrored (its start's late spread IR frames, then its first refresh, alternate). A's
    // codecs then restart: its compressor no longer knows the forward flow, and A, the
    // receiver, sends nothing on it. B's next refresh goes unmirrored, and A's new
    // decompressor takes it.
    let (mut a, mut b) = (End::with(one_way()), End::with(one_way()));
    forward_flow(&mut a, &mut b);
    // The IR frames of the reverse flow after its start (the first 30 packets), by packet.
    let mut repairs = Vec::new();
    for i in 0..700u32 {
        if i == 200 {
            a = End::with(one_way());
        }
        let p = reply(77 + 10 * i, 1600, 40 + i as u16, 900 + i, 10);
        let (kind, frame, result) = unpacked(send(&mut b, &mut a, &p));
        if kind < format::CO && i >= 30 {
            repairs.push((i, mirror_flags(&frame), result));
        }
    }
    let mirrored = (MIRRORED, Ok(()));
    let full = (0, Ok(()));
    let [before @ .., (at, flags, result)] = &repairs[..] else {
        panic!("refreshes: {repairs:?}");
    };
    assert!(
        before.len() >= 2,
        "refreshes before the restart: {repairs:?}"
    );
    for (n, &(i, flags, result)) in before.iter().enumerate() {
        let expected = if n % 2 == 0 { mirrored } else { full };
        assert!(i < 200, "{repairs:?}");
        assert_eq!((flags, result), expected, "refresh {n}: {repairs:?}");
    }
    assert!(*at > 200, "the refresh after the restart, at {at}");
    assert_eq!(
        before.len() % 2,
        1,
        "the last before it mirrored: {repairs:?}"
    );
    assert_eq!((*flags, *result), full, "the refresh after the restart");
}

#[test]
fn a_mirror_whose_cid_went_to_another_flow_is_still_found() {
    // A's compressor gives the forward flow's CID to another flow before B's decompressor
    // hears of it (a link that stalls): B's start frames of the reverse flow name the forward
    // flow by its hash, which A's decompressor still finds among the flows it heard of lately.
    let (mut a, mut b) = (End::new(), End::new());
    forward_flow(&mut a, &mut b);
    let other = TcpIpPacket::parse(&segment(1, 2, 3, 4, 0)).map(|p| {
        let mut key = p.key;
        key.src_port = 9;
        key
    });
    let mut note = Vec::new();
    mirror::put_note(&Note::Context(0, other), &mut note);
    a.d.sibling_note(&note);
    let (kind, frame, result) = unpacked(send(&mut b, &mut a, &reply(77, 1600, 40, 900, 0)));
    assert_eq!(
        (kind, mirror_flags(&frame) & MIRRORED),
        (format::COMPACT_IR, MIRRORED)
    );
    assert_eq!(result, Ok(()));
}

#[test]
fn without_notes_nothing_is_mirrored() {
    let (mut a, mut b) = (End::new(), End::new());
    let mut frame = Vec::new();
    let mut out = Vec::new();
    for i in 0..4 {
        let p = segment(1000 + 100 * i, 77, i as u16, 500 + i, 100);
        let kind = a.c.compress(&p, &mut frame);
        assert_eq!(b.d.decompress(kind, &frame, &mut out), Ok(()));
    }
    let p = reply(77, 1600, 40, 900, 0);
    let kind = b.c.compress(&p, &mut frame);
    assert_eq!(kind.to_byte(), format::COMPACT_IR);
    assert_eq!(mirror_flags(&frame) & MIRRORED, 0);
}

#[test]
fn a_syn_ack_and_the_data_after_it_start_from_the_handshake() {
    let (mut a, mut b) = (End::new(), End::new());
    let (host_a, host_b) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let syn = linux_syn(1, host_a, host_b, [0x13, 0x89, 0, 80], 999, 500);
    let (kind, _, result) = send(&mut a, &mut b, &syn);
    assert_eq!((kind, result), (format::COMPACT_SYN, Ok(())));
    // The SYN-ACK: an IR-S against the SYN, named by its hash.
    let mut syn_ack = linux_syn(0, host_b, host_a, [0, 80, 0x13, 0x89], 76, 7000);
    syn_ack[28..32].copy_from_slice(&1000u32.to_be_bytes());
    syn_ack[33] = 0x12;
    syn_ack[52..56].copy_from_slice(&500u32.to_be_bytes());
    fix_tcp_checksum(&mut syn_ack);
    let (kind, frame, result) = send(&mut b, &mut a, &syn_ack);
    assert_eq!((kind, result), (format::IR_S, Ok(())));
    assert_eq!(frame[1] & MIRROR, MIRROR);
    // The client's data: mirrored IRs, against the SYN-ACK.
    for i in 0..3 {
        let (kind, frame, result) = unpacked(send(&mut a, &mut b, &segment(1000, 77, i, 501, 100)));
        assert_eq!((kind, result), (format::COMPACT_IR, Ok(())), "{i}");
        assert_eq!(mirror_flags(&frame) & MIRRORED, MIRRORED, "{i}");
    }
    // The SYN-ACK sent again (a retransmission) goes without a base, so a far end that never
    // heard of the handshake (restarted meanwhile) rebuilds it.
    let mut restarted = End::new();
    let (kind, _, result) = send(&mut b, &mut restarted, &syn_ack);
    assert_eq!((kind, result), (format::COMPACT_SYN, Ok(())));
    // A first copy against the handshake reaches such an end as a refusal; nothing wrong is
    // delivered.
    syn_ack[24..28].copy_from_slice(&7100u32.to_be_bytes());
    fix_tcp_checksum(&mut syn_ack);
    let mut deaf = End::new();
    let (kind, _, result) = send(&mut b, &mut deaf, &syn_ack);
    assert_eq!((kind, result), (format::IR_S, Err(DropReason::NoContext)));
}

/// The packets of `docs/taroc-plus-format.md`'s mirror vectors, each with the end that sends
/// it (0: A, 1: B): a SYN from A, B's SYN-ACK, three data segments from A and a fourth, then
/// three pure ACKs from B and a fourth.
fn mirror_vector_packets() -> Vec<(usize, Vec<u8>)> {
    let (host_a, host_b) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let mut packets = vec![(
        0,
        linux_syn(1, host_a, host_b, [0x13, 0x89, 0, 80], 999, 500),
    )];
    let mut syn_ack = linux_syn(0, host_b, host_a, [0, 80, 0x13, 0x89], 76, 7000);
    syn_ack[28..32].copy_from_slice(&1000u32.to_be_bytes());
    syn_ack[33] = 0x12;
    syn_ack[52..56].copy_from_slice(&500u32.to_be_bytes());
    fix_tcp_checksum(&mut syn_ack);
    packets.push((1, syn_ack));
    for i in 0..4 {
        packets.push((0, segment(1000 + 8 * i, 77, 2 + i as u16, 501, 8)));
    }
    for i in 0..4 {
        packets.push((1, reply(77, 1008 + 8 * i, 1 + i as u16, 7001 + i, 0)));
    }
    packets
}

/// The mirror vectors of `docs/taroc-plus-format.md` (section 9.1, lines `a->b packet`,
/// `a->b frame`, `b->a ...`): each packet, sent from its end with the sibling notes passed at
/// both ends, becomes the frame the document gives, which the other end decompresses to it.
#[test]
fn specification_mirror_vectors() {
    let doc = include_str!("../../../../../docs/taroc-plus-format.md");
    let field = |line: &str, what: &str| -> Option<(usize, Vec<u8>)> {
        let (end, rest) = if let Some(r) = line.strip_prefix("    a->b ") {
            (0, r)
        } else {
            (1, line.strip_prefix("    b->a ")?)
        };
        Some((end, super::unhex(rest.strip_prefix(what)?.trim())))
    };
    let packets: Vec<_> = doc.lines().filter_map(|l| field(l, "packet")).collect();
    let frames: Vec<_> = doc.lines().filter_map(|l| field(l, "frame ")).collect();
    let mut ends = [End::new(), End::new()];
    let mut listing = alloc::string::String::new();
    let mut sent = Vec::new();
    for (end, p) in mirror_vector_packets() {
        let [a, b] = &mut ends;
        let (from, to) = if end == 0 { (a, b) } else { (b, a) };
        let (kind, frame, result) = send(from, to, &p);
        assert_eq!(result, Ok(()));
        let mut on_link = vec![kind];
        on_link.extend_from_slice(&frame);
        let dir = ["a->b", "b->a"][end];
        listing += &alloc::format!(
            "    {dir} packet {}\n    {dir} frame  {}\n",
            super::hex(&p),
            super::hex(&on_link)
        );
        sent.push(((end, p), (end, on_link)));
    }
    let (expected_packets, expected_frames): (Vec<_>, Vec<_>) = sent.into_iter().unzip();
    assert_eq!(
        packets, expected_packets,
        "the document's vectors:\n{listing}"
    );
    assert_eq!(
        frames, expected_frames,
        "the document's vectors:\n{listing}"
    );
}

/// Connection `c`'s packets (client `10.9.c.1` port `40000 + c`, server `10.9.c.2` port 80;
/// connections 0 and 1 share their hosts): the SYN, the SYN-ACK, then `n` client segments, each
/// answered by a server ACK. Each packet with the end that sends it (0: the client's).
fn connection(c: u8, n: u32) -> Vec<(usize, Vec<u8>)> {
    let host = c / 2;
    let (client, server) = ([10, 9, host, 1], [10, 9, host, 2]);
    let port = (40_000 + u16::from(c)).to_be_bytes();
    let isn = 1_000 * u32::from(c);
    let mut packets = vec![(
        0,
        linux_syn(1, client, server, [port[0], port[1], 0, 80], isn, 500),
    )];
    let mut syn_ack = linux_syn(0, server, client, [0, 80, port[0], port[1]], 76, 7_000);
    syn_ack[28..32].copy_from_slice(&(isn + 1).to_be_bytes());
    syn_ack[33] = 0x12;
    syn_ack[52..56].copy_from_slice(&500u32.to_be_bytes());
    fix_tcp_checksum(&mut syn_ack);
    packets.push((1, syn_ack));
    let retarget = |mut p: Vec<u8>, from_client: bool| {
        let (src, dst) = if from_client {
            (client, server)
        } else {
            (server, client)
        };
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        let ports = if from_client {
            [port[0], port[1], 0, 80]
        } else {
            [0, 80, port[0], port[1]]
        };
        p[20..24].copy_from_slice(&ports);
        p[10..12].fill(0);
        p[36..38].fill(0);
        fill_checksums(&mut p);
        p
    };
    for i in 0..n {
        let seq = isn + 1 + 100 * i;
        packets.push((
            0,
            retarget(segment(seq, 77, 2 + i as u16, 501 + i, 100), true),
        ));
        let ack = segment(77, seq + 100, 1 + i as u16, 7_001 + i, 0);
        packets.push((1, retarget(ack, false)));
    }
    packets
}

/// Mirrors under loss, stale notes and interleaved connections: whatever is lost, and whatever
/// wrong flows the codecs are told of, no packet is delivered wrong, and once the link is clean
/// again every connection's packets get through within a few frames (context requests and the
/// unmirrored answers to them repair what a mirror could not).
#[test]
fn mirrors_never_deliver_wrong_and_every_connection_resumes() {
    let mut all_refused = 0;
    for seed in 0..40u64 {
        // Loss 0-50% of frames and of feedback; stale notes before 0-30% of the packets.
        let loss = [0, 10, 20, 30, 50][seed as usize % 5];
        let stale = [0, 3, 10, 30][seed as usize / 5 % 4];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        let mut ends = [End::new(), End::new()];
        let conns: Vec<_> = (0..6).map(|c| connection(c, 40)).collect();
        let mut next = vec![0usize; conns.len()];
        let (mut frame, mut out, mut feedback) = (Vec::new(), Vec::new(), Vec::new());
        let mut delivered_late = vec![0usize; conns.len()];
        let mut note = Vec::new();
        let (mut mirrored, mut refused) = (0, 0);
        loop {
            let open: Vec<usize> = (0..conns.len())
                .filter(|&c| next[c] < conns[c].len())
                .collect();
            if open.is_empty() {
                break;
            }
            let c = open[rng.below(open.len() as u64) as usize];
            let (end, ref packet) = conns[c][next[c]];
            next[c] += 1;
            // The last 10 packets of each connection cross a clean link.
            let late = next[c] > conns[c].len() - 10;
            if !late && rng.chance(stale) {
                // A codec hears that a CID holds some other flow: as after a restart, or a CID
                // given to a new flow that its sibling has not told of yet.
                let cid = rng.below(4) as u8;
                let other = connection(rng.below(6) as u8, 1)[2 + rng.below(2) as usize]
                    .1
                    .clone();
                let flow = TcpIpPacket::parse(&other).map(|p| p.key);
                mirror::put_note(&Note::Context(cid, flow), &mut note);
                let victim = &mut ends[rng.below(2) as usize];
                if rng.chance(50) {
                    victim.c.sibling_note(&note);
                } else {
                    victim.d.sibling_note(&note);
                }
            }
            let [a, b] = &mut ends;
            let (from, to) = if end == 0 { (a, b) } else { (b, a) };
            let kind = from.c.compress(packet, &mut frame);
            from.share();
            mirrored += usize::from(match kind.to_byte() {
                format::COMPACT_IR => mirror_flags(&frame) & MIRRORED != 0,
                format::PACKED_IR => true,
                format::IR_S => frame[1] & MIRROR != 0,
                _ => false,
            });
            if !late && rng.chance(loss) {
                continue;
            }
            match to.d.decompress(kind, &frame, &mut out) {
                Ok(()) => {
                    assert_eq!(
                        &out,
                        packet,
                        "seed {seed}: connection {c}, packet {}",
                        next[c] - 1
                    );
                    delivered_late[c] += usize::from(late);
                }
                Err(_) => refused += 1,
            }
            to.share();
            while to.d.take_feedback(&mut feedback) {
                if late || !rng.chance(loss) {
                    from.c.handle_feedback(&feedback);
                }
            }
        }
        all_refused += refused;
        // Every connection's server starts from its client's flow, and most clients from the
        // SYN-ACK (reference receipts end some starts after their first IR frame).
        assert!(mirrored >= 8, "seed {seed}: {mirrored} mirrored frames");
        for (c, &n) in delivered_late.iter().enumerate() {
            assert!(
                n >= 7,
                "seed {seed}: connection {c} delivered {n} of its last 10 packets"
            );
        }
    }
    // The runs did refuse frames (under loss), and repaired them.
    assert!(all_refused > 0, "{all_refused}");
}

#[test]
fn a_reference_named_by_a_checksum_another_packet_shares_is_not_delivered_wrong() {
    // A sends the forward flow; its last packet, lost on the way to B, has the same TCP
    // checksum field as the one before it, which B delivered: its sequence number is 0xFFFF
    // higher (the same one's-complement sum), its payload the same. B's reverse flow starts
    // with a mirrored IR whose numbers name the packet B delivered by its checksum; A's
    // decompressor must not take the lost packet A's compressor told it of instead.
    let (mut a, mut b) = (End::new(), End::new());
    forward_flow(&mut a, &mut b);
    let delivered = segment(1600, 77, 6, 506, 100);
    let (_, _, result) = send(&mut a, &mut b, &delivered);
    assert_eq!(result, Ok(()));
    let mut lost = delivered.clone();
    lost[4..6].copy_from_slice(&7u16.to_be_bytes());
    lost[10..12].fill(0);
    lost[36..38].fill(0);
    let seq = u32::from_be_bytes(lost[24..28].try_into().unwrap()).wrapping_add(0xFFFF);
    lost[24..28].copy_from_slice(&seq.to_be_bytes());
    fill_checksums(&mut lost);
    assert_eq!(
        lost[36..38],
        delivered[36..38],
        "the same TCP checksum field"
    );
    let mut frame = Vec::new();
    a.c.compress(&lost, &mut frame);
    a.share();
    let p = reply(77, 1700, 40, 900, 0);
    let mut frame = Vec::new();
    let kind = b.c.compress(&p, &mut frame);
    b.share();
    let mut out = Vec::new();
    let result = a.d.decompress(kind, &frame, &mut out);
    assert!(result.is_err() || out == p, "delivered wrong: {result:?}");
}
