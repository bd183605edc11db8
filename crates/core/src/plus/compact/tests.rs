//! Tests of the compact IR and compact SYN: round trips, the layouts and shapes each can and
//! cannot express, refusals of malformed frames, arbitrary bytes, and mirrored frames.

use super::*;
use crate::codec::DropReason;
use crate::plus::mirror::{Mirrors, Note};

/// A TCP/IPv4 packet with the given TCP options and payload, as an IR frame (context
/// flags 0x02, CID 5).
fn v4_ir(options: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut p = vec![
        0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    p.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51, 0, 0, 0, 1, 0, 0, 0, 2]);
    p.push(((TCP_LEN + options.len()) as u8 / 4) << 4);
    p.extend_from_slice(&[0x18, 0x01, 0xf5, 0xab, 0xcd, 0, 0]);
    p.extend_from_slice(options);
    p.extend_from_slice(payload);
    let len = p.len() as u16;
    p[2..4].copy_from_slice(&len.to_be_bytes());
    let sum = checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p[2..4].copy_from_slice(&[0x02, 5]);
    p
}

fn ts_options() -> Vec<u8> {
    let mut o = vec![1, 1, 8, 10];
    o.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    o
}

fn round_trip(ir: &[u8]) -> usize {
    let mut frame = Vec::new();
    assert!(encode(ir, Framing::Ir, None, &mut frame), "{ir:02x?}");
    let mut back = Vec::new();
    expand(&frame, Framing::Ir, &Mirrors::default(), &mut back).expect("expands");
    assert_eq!(back, ir);
    frame.len()
}

#[test]
fn ipv4_round_trips_with_and_without_timestamps() {
    let ts = v4_ir(&ts_options(), b"data");
    assert_eq!(round_trip(&ts), ts.len() - 14);
    let plain = v4_ir(&[], &[]);
    assert_eq!(round_trip(&plain), plain.len() - 10);
}

/// The view reads the long form's context flags and CID, and moves the frame to another CID.
#[test]
fn the_view_reads_and_moves_the_cid() {
    let mut frame = Vec::new();
    assert!(encode(
        &v4_ir(&ts_options(), &[]),
        Framing::Ir,
        None,
        &mut frame
    ));
    let view = CompactIr::new_checked(&frame[..]).expect("a whole head");
    assert!(!view.is_short());
    assert_eq!(
        (view.cid(), view.mirror_flags(), view.mirrored_cid()),
        (5, 0, None)
    );
    CompactIr::new_checked(&mut frame[..])
        .expect("a whole head")
        .set_cid(9);
    let mut back = Vec::new();
    expand(&frame, Framing::Ir, &Mirrors::default(), &mut back).expect("expands");
    assert_eq!(back[2..4], [0x02, 9]);
    // Too short for the CID: no view.
    assert!(CompactIr::new_checked(&frame[..2]).is_none());
    assert!(CompactIr::new_checked(&[SHORT][..]).is_none());
    assert!(CompactIr::new_checked(&[][..]).is_none());
}

#[test]
fn ipv4_unusual_fields_round_trip() {
    let mut ir = v4_ir(&ts_options(), &[]);
    ir[1] = 0x02;
    ir[4..6].fill(0);
    ir[6] = 0;
    ir[8] = 63;
    ir[38..40].copy_from_slice(&[0x05, 0xa8]);
    let len = ir.len() as u16;
    let mut header = [0u8; 20];
    header.copy_from_slice(&ir[..20]);
    header[2..4].copy_from_slice(&len.to_be_bytes());
    header[10..12].fill(0);
    let sum = checksum::checksum(&header);
    ir[10..12].copy_from_slice(&sum.to_be_bytes());
    round_trip(&ir);
}

fn v6_ir(options: &[u8], first: [u8; 4], hop: u8) -> Vec<u8> {
    let mut p = first.to_vec();
    p.extend_from_slice(&[0x00, 3, 6, hop]);
    p.extend((0..32).map(|i| i as u8));
    p.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51, 0, 0, 0, 1, 0, 0, 0, 2]);
    p.push(((TCP_LEN + options.len()) as u8 / 4) << 4);
    p.extend_from_slice(&[0x10, 0x01, 0xf5, 0xab, 0xcd, 0, 0]);
    p.extend_from_slice(options);
    p
}

#[test]
fn ipv6_round_trips_with_and_without_timestamps() {
    let ts = v6_ir(&ts_options(), V6_FIRST, 64);
    assert_eq!(round_trip(&ts), ts.len() - 12);
    round_trip(&v6_ir(&[], V6_FIRST, 64));
    round_trip(&v6_ir(&[], [0x61, 0x23, 0x45, 0x67], 1));
}

/// `ir` with its length field (the context flags and CID) set to its length, a packet.
fn as_packet(mut ir: Vec<u8>) -> Vec<u8> {
    let v4 = ir[0] >> 4 == 4;
    let at = packet::length_field_offset(v4);
    let len = (ir.len() - if v4 { 0 } else { 40 }) as u16;
    ir[at..at + 2].copy_from_slice(&len.to_be_bytes());
    ir
}

#[test]
fn syn_packets_round_trip_with_linux_options() {
    let linux = [
        2, 4, 5, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7,
    ];
    let no_ts = [2, 4, 5, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7];
    for (packet, saved) in [
        (as_packet(v4_ir(&linux, &[])), 21),
        (as_packet(v4_ir(&no_ts, &[])), 21),
        (as_packet(v6_ir(&linux, V6_FIRST, 64)), 19),
    ] {
        let mut frame = Vec::new();
        assert!(encode(&packet, Framing::Packet, None, &mut frame));
        assert_eq!(frame.len(), packet.len() - saved, "{packet:02x?}");
        let mut back = Vec::new();
        expand(&frame, Framing::Packet, &Mirrors::default(), &mut back).unwrap();
        assert_eq!(back, packet);
    }
    let mut wrong_length = as_packet(v4_ir(&linux, &[]));
    wrong_length[3] += 1;
    assert!(!encode(
        &wrong_length,
        Framing::Packet,
        None,
        &mut Vec::new()
    ));
}

/// `packet` (an IPv4 one of [`v4_ir`]'s) with TCP flags `tcp_flags` and acknowledgment
/// number `ack` (the compact form is a transform of the octets: no checksum is checked).
fn with_flags(mut packet: Vec<u8>, tcp_flags: u8, ack: u32) -> Vec<u8> {
    packet[33] = tcp_flags;
    packet[28..32].copy_from_slice(&ack.to_be_bytes());
    packet
}

#[test]
fn a_syn_without_ack_leaves_out_its_ack_and_echo() {
    let linux = [
        2, 4, 5, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7,
    ];
    let with_ack = as_packet(v4_ir(&linux, &[]));
    let syn = with_flags(with_ack.clone(), 0x02, 0);
    let (mut long, mut short, mut back) = (Vec::new(), Vec::new(), Vec::new());
    assert!(encode(&with_ack, Framing::Packet, None, &mut long));
    assert!(encode(&syn, Framing::Packet, None, &mut short));
    // The acknowledgment number (4) and the TS echo (4) are 0 and not sent.
    assert_eq!(short.len() + 8, long.len());
    for (frame, packet) in [(&short, &syn), (&long, &with_ack)] {
        expand(frame, Framing::Packet, &Mirrors::default(), &mut back).unwrap();
        assert_eq!(&back, packet);
    }
    // Without timestamps only the acknowledgment number goes.
    let no_ts = [2, 4, 5, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7];
    let bare = with_flags(as_packet(v4_ir(&no_ts, &[])), 0x02, 0);
    assert!(encode(&bare, Framing::Packet, None, &mut short));
    expand(&short, Framing::Packet, &Mirrors::default(), &mut back).unwrap();
    assert_eq!(back, bare);
    // A SYN without ACK whose acknowledgment number or echo is not 0 has no compact form.
    let odd_ack = with_flags(with_ack.clone(), 0x02, 7);
    assert!(!encode(&odd_ack, Framing::Packet, None, &mut short));
    let mut odd_echo = syn.clone();
    odd_echo[40 + 15] = 1;
    assert!(!encode(&odd_echo, Framing::Packet, None, &mut short));
    // Cut short, a compact SYN is refused.
    assert!(encode(&syn, Framing::Packet, None, &mut short));
    for cut in 0..short.len() {
        assert!(expand(
            &short[..cut],
            Framing::Packet,
            &Mirrors::default(),
            &mut back
        )
        .is_err());
    }
}

#[test]
fn what_it_cannot_express_stays_an_ir() {
    let mut out = Vec::new();
    let sack = [1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2];
    assert!(!encode(&v4_ir(&sack, &[]), Framing::Ir, None, &mut out));
    let mut options = v4_ir(&[], &[]);
    options[0] = 0x46;
    assert!(!encode(&options, Framing::Ir, None, &mut out));
    let mut reserved = v4_ir(&[], &[]);
    reserved[32] |= 0x01;
    assert!(!encode(&reserved, Framing::Ir, None, &mut out));
    let mut fragment = v4_ir(&[], &[]);
    fragment[7] = 1;
    assert!(!encode(&fragment, Framing::Ir, None, &mut out));
    let mut bad_sum = v4_ir(&[], &[]);
    bad_sum[11] ^= 1;
    assert!(!encode(&bad_sum, Framing::Ir, None, &mut out));
    assert!(out.is_empty());
}

#[test]
fn malformed_frames_are_refused() {
    let mut frame = Vec::new();
    assert!(encode(
        &v4_ir(&ts_options(), &[]),
        Framing::Ir,
        None,
        &mut frame
    ));
    let mut ir = Vec::new();
    for len in 0..frame.len() {
        assert!(
            expand(&frame[..len], Framing::Ir, &Mirrors::default(), &mut ir).is_err(),
            "{len}"
        );
    }
    for bad in [V | D, V | Z] {
        let mut f = frame.clone();
        f[0] = bad;
        assert!(
            expand(&f, Framing::Ir, &Mirrors::default(), &mut ir).is_err(),
            "{bad:02x}"
        );
    }
    let mut v6 = Vec::new();
    assert!(encode(
        &v6_ir(&[], [0x61, 0, 0, 0], 64),
        Framing::Ir,
        None,
        &mut v6
    ));
    v6[3] = 0x50;
    assert!(expand(&v6, Framing::Ir, &Mirrors::default(), &mut ir).is_err());
}

/// Mirrors holding, under CID 9, the flow opposite to [`v4_ir`]'s.
fn mirrors_of_v4_ir() -> Mirrors {
    let mut note = Vec::new();
    mirror::put_note(&Note::Context(9, Some(v4_ir_reverse())), &mut note);
    let mut mirrors = Mirrors::default();
    mirrors.hear(&note);
    mirrors
}

/// The flow opposite to [`v4_ir`]'s.
fn v4_ir_reverse() -> FlowKey {
    FlowKey {
        src: IpAddr::V4([10, 0, 0, 2].into()),
        dst: IpAddr::V4([10, 0, 0, 1].into()),
        src_port: 0x1451,
        dst_port: 0x9c40,
    }
}

#[test]
fn a_mirrored_ir_drops_the_addresses_and_ports() {
    let ir = v4_ir(&ts_options(), b"data");
    let plain = round_trip(&ir);
    let mut back = Vec::new();
    let hash = mirror::flow_hash(&v4_ir_reverse());
    let mut frame = Vec::new();
    let m = Some(Mirror {
        hash,
        reference: None,
        named: false,
    });
    assert!(encode(&ir, Framing::Ir, m, &mut frame));
    assert_eq!(frame.len(), plain - 8 - 4 + 2);
    assert_eq!(frame[1] & 0xC0, MIRRORED);
    assert_eq!(frame[3..5], hash.to_be_bytes());
    expand(&frame, Framing::Ir, &mirrors_of_v4_ir(), &mut back).expect("expands");
    assert_eq!(back, ir);
    // Numbers without a mirror: malformed.
    let mut unmirrored = Vec::new();
    assert!(encode(&ir, Framing::Ir, None, &mut unmirrored));
    unmirrored[1] |= NUMBERED;
    assert_eq!(
        expand(&unmirrored, Framing::Ir, &mirrors_of_v4_ir(), &mut back),
        Err(DropReason::Malformed)
    );
    // Without the mirror it is not this IR.
    assert_eq!(
        expand(&frame, Framing::Ir, &Mirrors::default(), &mut back),
        Err(DropReason::NoContext)
    );
    // A mirror of the other IP version: malformed.
    let v6 = FlowKey {
        src: IpAddr::V6([1; 16].into()),
        dst: IpAddr::V6([2; 16].into()),
        src_port: 1,
        dst_port: 2,
    };
    let mut note = Vec::new();
    mirror::put_note(&Note::Context(9, Some(v6)), &mut note);
    let mut other = Mirrors::default();
    other.hear(&note);
    let m6 = Some(Mirror {
        hash: mirror::flow_hash(&v6),
        reference: None,
        named: false,
    });
    assert!(encode(&ir, Framing::Ir, m6, &mut frame));
    assert_eq!(
        expand(&frame, Framing::Ir, &other, &mut back),
        Err(DropReason::Malformed)
    );
    // A compact SYN names no mirror.
    assert!(!encode(&ir, Framing::Packet, m, &mut frame));
}

/// A packet of [`v4_ir_reverse`]'s flow that [`v4_ir`]'s packet follows: it acknowledges up to
/// 5 octets before the IR's sequence number, the IR acknowledges all it sent, echoes its TS
/// value and sends a TS value 10 above its echo.
fn reference_of(ir: &[u8], ts: bool) -> Numbers {
    let be32 = |at: usize| u32::from_be_bytes(ir[at..at + 4].try_into().unwrap());
    Numbers {
        checksum: 0xC0DE,
        next_seq: be32(28),
        ack: be32(24).wrapping_sub(5),
        window: u16::from_be_bytes([ir[34], ir[35]]).wrapping_add(3),
        ts: ts.then(|| (be32(48), be32(44).wrapping_sub(10))),
    }
}

#[test]
fn a_mirrored_ir_codes_its_numbers_against_the_reference_it_names() {
    let ir = v4_ir(&ts_options(), b"data");
    let hash = mirror::flow_hash(&v4_ir_reverse());
    let reference = reference_of(&ir, true);
    let (mut plain, mut frame, mut back) = (Vec::new(), Vec::new(), Vec::new());
    let m = |reference| {
        Some(Mirror {
            hash,
            reference,
            named: true,
        })
    };
    assert!(encode(&ir, Framing::Ir, m(None), &mut plain));
    assert!(encode(&ir, Framing::Ir, m(Some(&reference)), &mut frame));
    // The checksum naming the reference, then four one-octet differences instead of 16 octets,
    // and the window as one octet of difference from the reference's (3 below it).
    // It goes in the short form: no context-flags octet (the shape carries them) and no
    // mirror hash (the reference names the mirror).
    assert_eq!(frame.len(), plain.len() + 2 + 4 - 16 - 1 - 1 - 2);
    assert_eq!(frame[0] & SHORT, SHORT);
    let view = CompactIr::new_checked(&frame[..]).expect("a whole head");
    assert_eq!(view.mirror_flags(), MIRRORED | NUMBERED);
    assert_eq!(view.mirrored_cid(), Some(5));
    assert_eq!(frame[2..4], [0xC0, 0xDE]);
    // The far end holds the mirror and was told of the reference (it sent that packet).
    let mut mirrors = mirrors_of_v4_ir();
    let mut note = Vec::new();
    mirror::put_note(&Note::Numbers(hash, reference), &mut note);
    mirrors.hear(&note);
    expand(&frame, Framing::Ir, &mirrors, &mut back).expect("expands");
    assert_eq!(back, ir);
    // Without the reference (never told of it, or another packet's checksum): no context.
    assert_eq!(
        expand(&frame, Framing::Ir, &mirrors_of_v4_ir(), &mut back),
        Err(DropReason::NoContext)
    );
    let mut other = frame.clone();
    other[3] ^= 1;
    assert_eq!(
        expand(&other, Framing::Ir, &mirrors, &mut back),
        Err(DropReason::NoContext)
    );
    // A reference whose checksum alone does not name it (a newer one of another flow has
    // it): the long form, with the mirror's hash.
    let m_unnamed = Some(Mirror {
        hash,
        reference: Some(&reference),
        named: false,
    });
    let mut long = Vec::new();
    assert!(encode(&ir, Framing::Ir, m_unnamed, &mut long));
    assert_eq!(long.len(), frame.len() + 1 + 2);
    assert_eq!(long[1] & (MIRRORED | NUMBERED), MIRRORED | NUMBERED);
    expand(&long, Framing::Ir, &mirrors, &mut back).expect("expands");
    assert_eq!(back, ir);
    // A reference without timestamps codes none for a packet with them: no numbers.
    let bare = reference_of(&ir, false);
    assert!(encode(&ir, Framing::Ir, m(Some(&bare)), &mut frame));
    assert_eq!(frame, plain);
    // Differences too large to save anything: no numbers either.
    let far = Numbers {
        next_seq: reference.next_seq.wrapping_add(1 << 30),
        ack: reference.ack.wrapping_add(1 << 30),
        ts: Some((0, 0)),
        ..reference
    };
    assert!(encode(&ir, Framing::Ir, m(Some(&far)), &mut frame));
    assert_eq!(frame, plain);
}

#[test]
fn arbitrary_bytes_never_panic() {
    let mut ir = Vec::new();
    let mut x = 0x1234_5678u32;
    for len in 0..80 {
        for _ in 0..50 {
            let frame: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            if expand(&frame, Framing::Ir, &Mirrors::default(), &mut ir).is_ok() {
                let mut again = Vec::new();
                if encode(&ir, Framing::Ir, None, &mut again) {
                    let mut back = Vec::new();
                    expand(&again, Framing::Ir, &Mirrors::default(), &mut back).unwrap();
                    assert_eq!(back, ir);
                }
            }
        }
    }
}

/// [`v4_ir`] with a stride of `stride` (context flag T, the urgent pointer field) and TTL `ttl`.
fn strided_v4_ir(stride: u16, ttl: u8) -> Vec<u8> {
    let mut ir = v4_ir(&ts_options(), b"data");
    ir[2] |= crate::plus::format::ir::STRIDES;
    ir[38..40].copy_from_slice(&stride.to_be_bytes());
    ir[8] = ttl;
    ir[10..12].fill(0);
    let mut header = [0u8; 20];
    header.copy_from_slice(&ir[..20]);
    header[2..4].copy_from_slice(&(ir.len() as u16).to_be_bytes());
    ir[10..12].copy_from_slice(&checksum::checksum(&header).to_be_bytes());
    ir
}

#[test]
fn a_common_mirrored_ir_goes_in_the_short_form() {
    let hash = mirror::flow_hash(&v4_ir_reverse());
    let mut mirrors = mirrors_of_v4_ir();
    let (mut frame, mut back) = (Vec::new(), Vec::new());
    // 1448: the usual stride of IPv4 with timestamps (1500 - 20 - 32).
    let ir = strided_v4_ir(1448, 64);
    let reference = reference_of(&ir, true);
    let mut note = Vec::new();
    mirror::put_note(&Note::Numbers(hash, reference), &mut note);
    mirrors.hear(&note);
    let m = Some(Mirror {
        hash,
        reference: Some(&reference),
        named: true,
    });
    assert!(encode(&ir, Framing::Ir, m, &mut frame));
    // The shape carries K T E E and B B of the context flags (T and behaviour 2 here).
    assert_eq!(frame[0], 0x40 | SHORT | 0x02);
    assert_eq!(frame[1], 5, "the CID");
    expand(&frame, Framing::Ir, &mirrors, &mut back).expect("expands");
    assert_eq!(back, ir);
    // Another stride: the long form, with the context flags and the stride's difference
    // (12 above the usual one: one octet).
    let named = |ir: &[u8]| {
        let reference = reference_of(ir, true);
        let m = Some(Mirror {
            hash,
            reference: Some(&reference),
            named: true,
        });
        let mut out = Vec::new();
        assert!(encode(ir, Framing::Ir, m, &mut out));
        out
    };
    let long = named(&strided_v4_ir(1460, 64));
    assert_eq!(long[0] & SHORT, 1 << O_SHIFT);
    assert_eq!(long[1] & (MIRRORED | NUMBERED), MIRRORED | NUMBERED);
    assert_eq!(
        long.len(),
        frame.len() + 2 + 2,
        "flags, stride difference, hash"
    );
    // Another TTL: the long form too.
    assert_ne!(named(&strided_v4_ir(1448, 63))[0] & SHORT, SHORT);
    // Cut short, the short form is refused, never read past its end.
    for cut in 0..frame.len() - 4 {
        assert!(expand(&frame[..cut], Framing::Ir, &mirrors, &mut back).is_err());
    }
}
