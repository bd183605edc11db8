//! Tests of IR-S: round trips of SYN, SYN-ACK and RST segments against a base or a mirror,
//! the frame's sizes, refusals of wrong bases and damage, arbitrary bytes.

use super::*;
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::format::IR_S;
use crate::plus::PlusConfig;
use crate::plus::{PlusCompressor, PlusDecompressor};
use crate::tcp::repair::Repair;
use alloc::vec;

/// The base an IR-S `frame` names, if its view holds the octets that name it.
fn base(frame: &[u8]) -> Option<Base> {
    IrS::new_checked(frame).map(|f| f.base())
}

/// [`IrS::rebuild`] of `frame`'s view; a frame too short for one is malformed.
fn rebuild(
    frame: &[u8],
    base_template: &[u8],
    reference: impl Fn(u16) -> Option<Numbers>,
    out: &mut Vec<u8>,
) -> Result<(), DropReason> {
    IrS::new_checked(frame)
        .ok_or(DropReason::Malformed)?
        .rebuild(base_template, reference, out)
}

/// An IPv4 SYN (or SYN-ACK if `ack` is not 0) from port `port` to 80 with `options`,
/// TTL `ttl`.
fn syn(port: u16, ack: u32, ttl: u8, options: &[u8]) -> Vec<u8> {
    let syn_flags = if ack == 0 {
        flags::SYN
    } else {
        flags::SYN | flags::ACK
    };
    segment(port, ack, ttl, options, syn_flags)
}

/// An IPv4 TCP segment with flags `tcp_flags` (see [`syn`]).
fn segment(port: u16, ack: u32, ttl: u8, options: &[u8], tcp_flags: u8) -> Vec<u8> {
    let len = 40 + options.len();
    let mut p = vec![0x45, 0, 0, len as u8, 0x12, 0x34, 0x40, 0, ttl, 6, 0, 0];
    p.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2]);
    p.extend_from_slice(&port.to_be_bytes());
    p.extend_from_slice(&[0, 80, 0x0A, 0xBC, 0xDE, 0xF0]);
    p.extend_from_slice(&ack.to_be_bytes());
    p.extend_from_slice(&[(((20 + options.len()) / 4) << 4) as u8, tcp_flags]);
    p.extend_from_slice(&[0xFA, 0xF0, 0, 0, 0, 0]);
    p.extend_from_slice(options);
    crate::plus::tests::fill_checksums(&mut p);
    p
}

/// Linux's SYN options with timestamps (TS echo `ecr`).
fn linux_options(ecr: u32) -> Vec<u8> {
    let mut o = vec![2, 4, 5, 0xB4, 4, 2, 8, 10, 0, 1, 2, 3];
    o.extend_from_slice(&ecr.to_be_bytes());
    o.extend_from_slice(&[1, 3, 3, 7]);
    o
}

/// The template of a context of the same hosts (another port).
fn base_template() -> Vec<u8> {
    let p = syn(999, 0, 64, &[]);
    let mut t = Vec::new();
    read(&p, true).unwrap().template_into(&mut t);
    t
}

/// [`write`] against [`base_template`] as CID 3, without numbers.
fn on_base(p: &TcpIpPacket<'_>, frame: &mut Vec<u8>) -> bool {
    write(p, &base_template(), Base::Context(3), None, frame)
}

/// The IR-S frame of `p` against `base` of template `template`, with numbers against
/// `reference` if given (asserting that IR-S carries `p`).
fn written(
    p: &TcpIpPacket<'_>,
    template: &[u8],
    base: Base,
    reference: Option<(&Numbers, bool)>,
) -> Vec<u8> {
    let mut frame = Vec::new();
    assert!(write(p, template, base, reference, &mut frame));
    frame
}

fn round_trip(packet: &[u8]) -> Vec<u8> {
    let p = parse(packet).expect("a handshake segment");
    let mut frame = Vec::new();
    assert!(on_base(&p, &mut frame));
    let mut out = Vec::new();
    assert_eq!(
        rebuild(&frame, &base_template(), |_| None, &mut out),
        Ok(())
    );
    assert_eq!(out, packet);
    frame
}

#[test]
fn syn_and_syn_ack_round_trip_compactly() {
    // Linux's layout: TS value, window scale (and TS echo with ACK) go, and the MSS unless it
    // is the usual one (1460 here: S in the extension octet instead); 20 octets of options
    // become 5 (9). The destination port is the base's, the source port 39,001 above the
    // base's (3 octets of difference). The flags (SYN) and the data offset (the layout's) go
    // as a flags code, and the window, 64240, is the usual one for a SYN (W).
    let syn_code = 1 << 1;
    let frame = round_trip(&syn(40_000, 0, 64, &linux_options(0)));
    assert_eq!(frame.len(), 2 + 1 + 2 + 3 + 4 + 2 + 5);
    assert_eq!(frame[1] & (SOURCE_KEPT | DEST_KEPT), DEST_KEPT);
    assert_eq!(frame[2], USUAL_MSS | USUAL_WINDOW | syn_code);
    // A SYN-ACK's usual window is 65160 (the segment size less the timestamps): 64240 is sent.
    let frame = round_trip(&syn(40_000, 0x1111_2222, 64, &linux_options(9)));
    assert_eq!(frame.len(), 2 + 1 + 2 + 3 + 4 + 4 + 2 + 2 + 9);
    assert_eq!(frame[2], USUAL_MSS | 2 << 1);
    // Another MSS is sent.
    let mut other_mss = linux_options(0);
    other_mss[2..4].copy_from_slice(&1400u16.to_be_bytes());
    let frame = round_trip(&syn(40_000, 0, 64, &other_mss));
    assert_eq!(frame.len(), 2 + 1 + 2 + 3 + 4 + 2 + 7);
    assert_eq!(frame[2], USUAL_WINDOW | syn_code);
    // Flags no code stands for (SYN with ECE and CWR, as an ECN-capable SYN has them) go in
    // TCP octets 12 and 13.
    let ecn_syn = segment(40_000, 0, 64, &linux_options(0), flags::SYN | 0xC0);
    let frame = round_trip(&ecn_syn);
    assert_eq!(frame.len(), 2 + 1 + 2 + 3 + 4 + 2 + 2 + 5);
    assert_eq!(frame[2] & FLAGS_CODE, 0);
    // A port near the base's: one octet.
    let frame = round_trip(&syn(1_030, 0, 64, &other_mss));
    assert_eq!(frame.len(), 2 + 1 + 2 + 1 + 4 + 2 + 7);
    // Both ports kept: malformed.
    let mut bad = frame.clone();
    bad[1] |= SOURCE_KEPT | DEST_KEPT;
    let mut out = Vec::new();
    assert_eq!(
        rebuild(&bad, &base_template(), |_| None, &mut out),
        Err(DropReason::Malformed)
    );
    // Other options go raw; other IP bytes (TTL) are sent.
    let frame = round_trip(&syn(40_000, 0, 63, &[2, 4, 5, 0xB4]));
    // (No flags code: a data offset no layout gives. The usual window: an extension with W.)
    assert_eq!(frame.len(), 2 + 1 + 6 + 2 + 3 + 4 + 2 + 2 + 4);
    assert_eq!(frame[2], USUAL_WINDOW);
    // A SYN whose layout has a non-zero echo without ACK goes raw.
    round_trip(&syn(40_000, 0, 64, &linux_options(5)));
    // A reset, with and without ACK: no options.
    let frame = round_trip(&segment(40_000, 7, 64, &[], flags::RST | flags::ACK));
    assert_eq!(frame.len(), 2 + 2 + 3 + 4 + 2 + 4 + 2 + 2);
    round_trip(&segment(40_000, 0, 64, &[], flags::RST));
    // SYN with RST or FIN is not a segment IR-S carries.
    let both = segment(40_000, 0, 64, &[], flags::RST | flags::SYN);
    assert!(parse(&both).is_none());
    assert!(parse(&segment(40_000, 7, 64, &[], flags::FIN | flags::ACK)).is_none());
}

#[test]
fn a_segment_goes_against_a_mirror_named_by_its_hash() {
    // The mirror is the flow opposite to `syn`'s: its template is `base_template`'s
    // addresses and ports swapped back.
    let packet = syn(40_000, 0, 64, &linux_options(0));
    let p = parse(&packet).unwrap();
    let mirror = mirror::reversed(&p.key);
    let mut template = Vec::new();
    mirror_template(&mirror, &mut template);
    let mut own = Vec::new();
    p.template_into(&mut own);
    assert_eq!(template, own, "the usual IP header");
    let mut out = Vec::new();
    let frame = written(&p, &template, Base::Mirror(0xBEEF), None);
    assert_eq!(base(&frame), Some(Base::Mirror(0xBEEF)));
    // The extension (S: the MSS is 1460; W; the SYN's flags code) follows the shape, then the
    // hash's low octet.
    assert_eq!(
        [frame[0], frame[2], frame[3]],
        [0xBE, USUAL_MSS | USUAL_WINDOW | 1 << 1, 0xEF]
    );
    assert_eq!(rebuild(&frame, &template, |_| None, &mut out), Ok(()));
    assert_eq!(out, packet);
    let on_context = written(&p, &template, Base::Context(7), None);
    assert_eq!(frame.len(), on_context.len() + 1, "the hash's second octet");
    assert_eq!(base(&[7, MIRROR]), None);
    assert_eq!(base(&[7, 0]), Some(Base::Context(7)));
    // A mirror resolved to the reverse flow rebuilds the segment with both ends swapped,
    // whose checksums are the same: the seal (of the identity, in order) refuses it.
    let mut swapped = Vec::new();
    mirror_template(&p.key, &mut swapped);
    assert_eq!(
        rebuild(&frame, &swapped, |_| None, &mut out),
        Err(DropReason::ChecksumMismatch)
    );
}

#[test]
fn a_wrong_base_or_damage_is_refused() {
    let packet = syn(40_000, 0, 64, &linux_options(0));
    let p = parse(&packet).unwrap();
    let mut frame = Vec::new();
    assert!(on_base(&p, &mut frame));
    let mut out = Vec::new();
    // A base whose TTL differs rebuilds another IP header: the seal catches it.
    let mut other = base_template();
    other[8] = 63;
    assert_eq!(
        rebuild(&frame, &other, |_| None, &mut out),
        Err(DropReason::ChecksumMismatch)
    );
    for cut in 0..frame.len() {
        assert!(rebuild(&frame[..cut], &base_template(), |_| None, &mut out).is_err());
    }
    // Octet 0 and the mirror bit, which name the base, are the caller's to resolve
    // ([`base`]); any other flipped bit is refused.
    for at in 1..frame.len() {
        for bit in 0..8 {
            if at == 1 && 1 << bit == MIRROR {
                continue;
            }
            let mut bad = frame.clone();
            bad[at] ^= 1 << bit;
            let r = rebuild(&bad, &base_template(), |_| None, &mut out);
            assert!(r.is_err(), "octet {at} bit {bit} rebuilt {out:02x?}");
        }
    }
}

#[test]
fn random_and_mutated_frames_never_panic() {
    let template = base_template();
    let valid = {
        let p = syn(40_000, 0x1111_2222, 64, &linux_options(9));
        let mut frame = Vec::new();
        assert!(write(
            &parse(&p).unwrap(),
            &template,
            Base::Context(0),
            None,
            &mut frame
        ));
        frame
    };
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut out = Vec::new();
    for i in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Half mutate a valid frame (a few octets), half are random octets.
        let frame: Vec<u8> = if i % 2 == 0 {
            let mut f = valid.clone();
            for k in 0..(x % 3 + 1) {
                let at = (x >> (8 + 8 * k)) as usize % f.len();
                f[at] ^= (x >> (40 + k)) as u8 | 1;
            }
            f.truncate(f.len() - (x >> 60) as usize % 3);
            f
        } else {
            (0..(x % 64) as usize)
                .map(|k| (x >> (k % 56)) as u8)
                .collect()
        };
        // Refused or rebuilt and verified: either way, no panic (a frame with N finds
        // numbers, with and without timestamps, or none).
        let numbers = Numbers {
            checksum: x as u16,
            next_seq: (x >> 16) as u32,
            ack: (x >> 24) as u32,
            window: (x >> 32) as u16,
            ts: (x & 4 != 0).then_some(((x >> 8) as u32, (x >> 40) as u32)),
        };
        let found = |_| (x & 8 != 0).then_some(numbers);
        let _ = rebuild(&frame, &template, found, &mut out);
    }
}

#[test]
fn a_syn_between_known_hosts_goes_ir_s() {
    let config = PlusConfig {
        repair: Repair::live(),
        ..PlusConfig::default()
    };
    let mut c = PlusCompressor::new(config.clone());
    let mut d = PlusDecompressor::new(config);
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut kinds = Vec::new();
    let mut packets: Vec<Vec<u8>> = (0..4)
        .map(|i| crate::plus::tests::segment(1000 + 100 * i, 77, 500 + i as u16, 9, 100))
        .collect();
    packets.push(syn(40_000, 0, 64, &linux_options(0)));
    for p in &packets {
        let kind = c.compress(p, &mut frame);
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
        assert_eq!(&out, p);
        kinds.push(kind);
    }
    assert_eq!(kinds[4], FrameKind::Profile(IR_S));
    // Without the base, the decompressor refuses it.
    let mut fresh = PlusDecompressor::new(PlusConfig::default());
    assert_eq!(
        fresh.decompress(kinds[4], &frame, &mut out),
        Err(DropReason::NoContext)
    );
}

/// A SYN-ACK from the mirror's template's far end, answering `syn` (its sequence number plus
/// one, its TS value echoed), with IP-ID `ip_id`.
fn syn_ack_to(syn: &TcpIpPacket<'_>, ip_id: u16) -> Vec<u8> {
    let mut options = linux_options(0);
    options[12..16].copy_from_slice(&syn.fields.ts_val.to_be_bytes());
    let mut p = syn_ack_template(syn, &options);
    p[4..6].copy_from_slice(&ip_id.to_be_bytes());
    crate::plus::tests::fill_checksums(&mut p);
    p
}

/// The SYN-ACK's bytes before its IP-ID and checksums are set.
fn syn_ack_template(syn: &TcpIpPacket<'_>, options: &[u8]) -> Vec<u8> {
    let len = 40 + options.len();
    let mut p = vec![0x45, 0, 0, len as u8, 0, 0, 0x40, 0, 64, 6, 0, 0];
    p.extend_from_slice(&syn.bytes[16..20]);
    p.extend_from_slice(&syn.bytes[12..16]);
    p.extend_from_slice(&syn.key.dst_port.to_be_bytes());
    p.extend_from_slice(&syn.key.src_port.to_be_bytes());
    p.extend_from_slice(&0x5555_0000u32.to_be_bytes());
    p.extend_from_slice(&syn.fields.seq.wrapping_add(1).to_be_bytes());
    p.extend_from_slice(&[
        (((20 + options.len()) / 4) << 4) as u8,
        flags::SYN | flags::ACK,
    ]);
    p.extend_from_slice(&[0xFE, 0x88, 0, 0, 0, 0]);
    p.extend_from_slice(options);
    p
}

#[test]
fn a_syn_ack_codes_its_ack_and_echo_against_its_syn_and_drops_a_zero_ip_id() {
    let syn_packet = syn(40_000, 0, 64, &linux_options(0));
    let syn_p = parse(&syn_packet).unwrap();
    let reference = Numbers::of(&syn_p);
    let packet = syn_ack_to(&syn_p, 0);
    let p = parse(&packet).expect("a valid SYN-ACK");
    let mut template = Vec::new();
    mirror_template(&syn_p.key, &mut template);
    let mut out = Vec::new();
    let plain = written(&p, &template, Base::Mirror(0xBEEF), None);
    let unnamed = Some((&reference, false));
    let numbered = written(&p, &template, Base::Mirror(0xBEEF), unnamed);
    // The extension follows the shape, then the hash's low octet.
    // The SYN-ACK's flags code (2); its window, 65160, is the usual one.
    let extra = USUAL_WINDOW | 2 << 1;
    assert_eq!(
        plain[2],
        ZERO_ID | USUAL_MSS | extra,
        "IP-ID 0, MSS 1460: Z and S"
    );
    assert_eq!(numbered[2], ZERO_ID | NUMBERED | USUAL_MSS | extra);
    assert_eq!(base(&numbered), Some(Base::Mirror(0xBEEF)));
    // The reference's checksum (2) and two one-octet differences for 8 octets.
    assert_eq!(numbered.len() + 4, plain.len());
    let found = |c: u16| (c == reference.checksum).then_some(reference);
    assert_eq!(rebuild(&numbered, &template, found, &mut out), Ok(()));
    assert_eq!(out, packet);
    // A reference its checksum alone names (R): no hash, the checksum in its place.
    let with_reference = Some((&reference, true));
    let named = written(&p, &template, Base::Mirror(0xBEEF), with_reference);
    assert_eq!(named[2] & NAMED, NAMED);
    assert_eq!(named.len() + 2, numbered.len());
    assert_eq!(base(&named), Some(Base::Reference(reference.checksum)));
    // Either way the view names the reference's checksum; a frame without numbers names none.
    for frame in [&numbered, &named] {
        let view = IrS::new_checked(&frame[..]).expect("a whole head");
        assert_eq!(view.reference_checksum(), Some(reference.checksum));
    }
    let view = IrS::new_checked(&plain[..]).expect("a whole head");
    assert_eq!(view.reference_checksum(), None);
    // A base named by its reference is what a decompressor reads, never one to write against.
    assert!(!write(&p, &template, Base::Reference(1), None, &mut out));
    assert_eq!(rebuild(&named, &template, found, &mut out), Ok(()));
    assert_eq!(out, packet);
    assert_eq!(rebuild(&plain, &template, |_| None, &mut out), Ok(()));
    assert_eq!(out, packet);
    // No such reference: no context. Another reference's numbers: the checksum fails.
    assert_eq!(
        rebuild(&numbered, &template, |_| None, &mut out),
        Err(DropReason::NoContext)
    );
    let other = Numbers {
        next_seq: reference.next_seq + 1,
        ..reference
    };
    assert_eq!(
        rebuild(&numbered, &template, |_| Some(other), &mut out),
        Err(DropReason::ChecksumMismatch)
    );
    // A nonzero IP-ID is sent; against a context (no mirror) there are no numbers.
    let with_id = syn_ack_to(&syn_p, 0x1234);
    let p = parse(&with_id).unwrap();
    let numbered = written(&p, &template, Base::Mirror(0xBEEF), unnamed);
    assert_eq!(numbered[2], NUMBERED | USUAL_MSS | USUAL_WINDOW | 2 << 1);
    assert_eq!(rebuild(&numbered, &template, found, &mut out), Ok(()));
    assert_eq!(out, with_id);
    let plain = written(&p, &template, Base::Context(3), with_reference);
    assert_eq!(
        plain[2],
        USUAL_MSS | USUAL_WINDOW | 2 << 1,
        "no numbers against a context"
    );
    // Malformed: an extension with no flag or a reserved one, R without N, N without a
    // mirror, S without an option layout.
    for (at, byte) in [(2, 0), (2, 0x01), (2, 0x10)] {
        let mut bad = numbered.clone();
        bad[at] = byte;
        assert_eq!(
            rebuild(&bad, &template, found, &mut out),
            Err(DropReason::Malformed),
            "extension {byte:#04x}"
        );
    }
    let mut bad = numbered.clone();
    bad[1] &= !MIRROR;
    bad.remove(3);
    assert_eq!(
        rebuild(&bad, &template, found, &mut out),
        Err(DropReason::Malformed)
    );
    let mut raw = numbered.clone();
    raw[1] &= !CODE;
    assert_eq!(
        rebuild(&raw, &template, found, &mut out),
        Err(DropReason::Malformed)
    );
}
