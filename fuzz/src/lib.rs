//! The logic of the fuzz targets, as plain functions of the input bytes that panic on a
//! violated property. The cargo-fuzz targets in `fuzz_targets/` call them under libFuzzer;
//! `crates/core/tests/fuzz_regressions.rs` includes this file as a module and replays the saved
//! inputs of `fuzz/seeds/` and `fuzz/regressions/` on stable Rust.
//!
//! Input formats:
//! - [`taroc_decompress`]: records, each either `kind len_lo len_hi frame[len]` (kind byte below
//!   0x80: frame kind = kind % 3, length modulo 2048) or `0x80|i offset n xor[n]` (primed frame
//!   `i`, with `xor` applied from `offset`, kind kept).
//! - [`taroc_roundtrip`]: a configuration byte, then records `hdr_hi hdr_lo packet[len]` with
//!   `len = hdr & 0x3FFF`; bit 15 of `hdr` asks for the lengths and checksums of the packet to be
//!   fixed up first (so mutated headers still reach the compressor's deep paths); with the
//!   bounded repairs on, bit 14 sends the compressor a context request for CID 0 first.
//! - [`taroc_plus_decompress`]: as [`taroc_decompress`], with `taroc-plus` primed frames, into a
//!   `taroc-plus` decompressor and a `taroc-plus-u` one.
//! - [`wire_parse`]: any bytes.
//! - [`vj_decompress`], [`iphc_decompress`]: as [`taroc_decompress`], with the frame kind
//!   `kind % 7` (every kind of [`FrameKind::ALL`]) and the scheme's own primed frames.
//! - [`vj_roundtrip`], [`iphc_roundtrip`]: as [`taroc_roundtrip`] (the configuration byte picks
//!   the scheme's settings; for IPHC, bit 7 advances the compressor's clock by a second before
//!   each packet).
//! - [`hdlc_deframe`], [`kiss_deframe`]: a configuration byte, a chunking seed, then line bytes
//!   or records of frames to encode and noise (see the `framing` module).

mod framing;
pub use framing::{hdlc_deframe, kiss_deframe};

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;
use std::time::Duration;

use taroc_core::plus::mirror::{self, Note};
use taroc_core::plus::numbers::Numbers;
use taroc_core::plus::receipt::ReceiptFrame;
use taroc_core::plus::{format, handshake, other, PlusConfig};
use taroc_core::taroc::{Improvements, TarocConfig, TarocDecompressor};
use taroc_core::tcp::packet::TcpIpPacket;
use taroc_core::tcp::repair::{parse_request, Repair};
use taroc_core::variant::Variant;
use taroc_core::SchemeConfig;
use taroc_core::{AnyCompressor, AnyDecompressor, Compressor, Decompressor, FrameKind, Scheme};
use taroc_wire::checksum::{checksum, Sum};
use taroc_wire::ip::IpInfo;
use taroc_wire::ipv4::Ipv4Packet;
use taroc_wire::ipv6::Ipv6Packet;
use taroc_wire::tcp::{OptionIter, TcpOption, TcpSegment};
use taroc_wire::udp::UdpDatagram;

// ---------------------------------------------------------------------------------------------
// Building valid packets.

/// Sets the IP length fields of `packet` to its length and recomputes the IPv4 header checksum
/// and the TCP or UDP checksum, where the headers allow it. Leaves anything it cannot parse.
pub fn fix_up(packet: &mut [u8]) {
    let len = packet.len();
    match packet.first().map(|b| b >> 4) {
        Some(4) if len >= 20 && len <= usize::from(u16::MAX) => {
            packet[2..4].copy_from_slice(&(len as u16).to_be_bytes());
            if let Ok(mut ip) = Ipv4Packet::new_checked(&mut packet[..]) {
                ip.fill_header_checksum();
            }
        }
        Some(6) if len >= 40 && len - 40 <= usize::from(u16::MAX) => {
            packet[4..6].copy_from_slice(&((len - 40) as u16).to_be_bytes());
        }
        _ => return,
    }
    let Ok(ip) = IpInfo::parse(packet) else {
        return;
    };
    let at = match ip.protocol {
        taroc_wire::protocol::TCP => 16,
        taroc_wire::protocol::UDP => 6,
        _ => return,
    };
    let Some(segment) = packet.get_mut(ip.transport_offset..) else {
        return;
    };
    if ip.fragment || segment.len() < at + 2 {
        return;
    }
    segment[at..at + 2].fill(0);
    let sum = Sum::new()
        .add_pseudo_header(ip.src, ip.dst, ip.protocol, segment.len() as u32)
        .add_bytes(segment)
        .checksum();
    segment[at..at + 2].copy_from_slice(&sum.to_be_bytes());
}

/// One TCP segment of the fixed priming flows (checksums filled).
#[allow(clippy::too_many_arguments)]
fn tcp_packet(
    v6: bool,
    seq: u32,
    ack: u32,
    ip_id: u16,
    window: u16,
    ts: Option<(u32, u32)>,
    sack: &[(u32, u32)],
    payload_len: usize,
) -> Vec<u8> {
    let mut p = Vec::new();
    if v6 {
        p.extend_from_slice(&[0x60, 0, 0, 0, 0, 0, 6, 64]);
        p.extend_from_slice(&Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1).octets());
        p.extend_from_slice(&Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2).octets());
    } else {
        p.extend_from_slice(&[0x45, 0, 0, 0]);
        p.extend_from_slice(&ip_id.to_be_bytes());
        p.extend_from_slice(&[0x40, 0, 64, 6, 0, 0]);
        p.extend_from_slice(&Ipv4Addr::new(198, 18, 0, 1).octets());
        p.extend_from_slice(&Ipv4Addr::new(198, 18, 0, 2).octets());
    }
    let mut options = Vec::new();
    if let Some((val, ecr)) = ts {
        options.extend_from_slice(&[1, 1, 8, 10]);
        options.extend_from_slice(&val.to_be_bytes());
        options.extend_from_slice(&ecr.to_be_bytes());
    }
    if !sack.is_empty() {
        options.extend_from_slice(&[1, 1, 5, 2 + 8 * sack.len() as u8]);
        for (l, r) in sack {
            options.extend_from_slice(&l.to_be_bytes());
            options.extend_from_slice(&r.to_be_bytes());
        }
    }
    p.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51]);
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ack.to_be_bytes());
    p.push((((20 + options.len()) / 4) as u8) << 4);
    p.push(0x10); // ACK
    p.extend_from_slice(&window.to_be_bytes());
    p.extend_from_slice(&[0, 0, 0, 0]);
    p.extend_from_slice(&options);
    p.extend((0..payload_len).map(|i| (i as u32).wrapping_mul(seq | 1) as u8));
    fix_up(&mut p);
    p
}

/// The packets of the priming flows: IPv4 with timestamps and SACK, IPv6 without options, and
/// (for schemes that compress it) a UDP flow, interleaved.
fn priming_packets() -> Vec<Vec<u8>> {
    let mut packets = Vec::new();
    for i in 0..12u32 {
        let sack = [(5000 + 1448 * i, 6448 + 1448 * i)];
        let v4 = v4_priming_packet(
            i,
            if i % 4 == 3 { &sack } else { &[] },
            if i % 5 == 4 { 0 } else { 64 + i as usize },
        );
        let v6 = tcp_packet(
            true,
            9_000 + 2 * i,
            3_000_000 + 1428 * i,
            0,
            8000 + 16 * i as u16,
            None,
            &[],
            usize::from(i % 3 == 0),
        );
        packets.push(v4);
        packets.push(v6);
        packets.push(udp_packet(i));
    }
    packets
}

/// One IPv4/UDP datagram of the priming flow (checksum filled).
fn udp_packet(i: u32) -> Vec<u8> {
    let mut p = vec![0x45, 0, 0, 0, 0, i as u8, 0, 0, 64, 17, 0, 0];
    p.extend_from_slice(&Ipv4Addr::new(198, 18, 0, 3).octets());
    p.extend_from_slice(&Ipv4Addr::new(198, 18, 0, 4).octets());
    p.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 0, 0, 0, 0]);
    p.extend((0..20 + i).map(|b| b as u8));
    let len = (p.len() - 20) as u16;
    p[24..26].copy_from_slice(&len.to_be_bytes());
    fix_up(&mut p);
    p
}

/// The priming packets as `scheme`'s compressor sends them (TCP/IP only for TAROC, whose
/// frames the TAROC harness checks against TCP/IP parsing).
fn frames_of(scheme: Scheme) -> Vec<(FrameKind, Vec<u8>)> {
    let mut c = AnyCompressor::new(scheme, &SchemeConfig::default());
    priming_packets()
        .into_iter()
        .filter(|p| {
            !matches!(scheme, Scheme::Taroc | Scheme::Plus) || TcpIpPacket::parse(p).is_some()
        })
        .map(|p| {
            let mut frame = Vec::new();
            let kind = c.compress(&p, &mut frame);
            (kind, frame)
        })
        .collect()
}

/// Frames of two fixed flows (IPv4 with timestamps and SACK, IPv6 without options), as one
/// TAROC compressor sends them: UNCOMPRESSED_TCP first, then mostly COMPRESSED_TCP.
pub fn primed_frames() -> &'static [(FrameKind, Vec<u8>)] {
    static FRAMES: OnceLock<Vec<(FrameKind, Vec<u8>)>> = OnceLock::new();
    FRAMES.get_or_init(|| frames_of(Scheme::Taroc))
}

// ---------------------------------------------------------------------------------------------
// taroc_decompress

/// Arbitrary frames into a primed TAROC decompressor: never a panic; what it delivers from a
/// TAROC frame is a valid TCP/IP packet (checksums verify) of bounded size; TYPE_IP passes
/// unchanged.
pub fn taroc_decompress(data: &[u8]) {
    let primed = primed_frames();
    let mut d = TarocDecompressor::new(TarocConfig::default());
    let mut out = Vec::new();
    for (kind, frame) in primed {
        d.decompress(*kind, frame, &mut out)
            .expect("the primed frames decompress");
    }
    let mut rest = data;
    let mut frame = Vec::new();
    while !rest.is_empty() {
        let kind = next_frame(&mut rest, primed, 3, &mut frame);
        if d.decompress(kind, &frame, &mut out).is_ok() {
            check_delivered(kind, &frame, &out);
        }
        assert!(d.context_count() <= 256);
    }
}

/// Takes one record of the decompress targets' input format off `rest` (which must not be
/// empty) into `frame` and returns its kind: `kind len_lo len_hi frame[len]` (kind byte below
/// 0x80: the first `kinds` of [`FrameKind::ALL`], by the byte modulo `kinds`, or with `kinds`
/// 0 the kind of the byte itself ([`FrameKind::from_byte`], `TYPE_IP` for none); length modulo
/// 2048), or `0x80|i offset n xor[n]` (primed frame `i`, with `xor` applied from `offset`).
fn next_frame(
    rest: &mut &[u8],
    primed: &[(FrameKind, Vec<u8>)],
    kinds: usize,
    frame: &mut Vec<u8>,
) -> FrameKind {
    let (&first, tail) = rest.split_first().expect("a record");
    frame.clear();
    let body = tail.get(2..).unwrap_or(&[]);
    if first & 0x80 == 0 {
        let len = match tail {
            [lo, hi, ..] => usize::from(u16::from_le_bytes([*lo, *hi])) % 2048,
            _ => 0,
        };
        let len = len.min(body.len());
        frame.extend_from_slice(&body[..len]);
        *rest = &body[len..];
        if kinds == 0 {
            FrameKind::from_byte(first).unwrap_or(FrameKind::Ip)
        } else {
            FrameKind::ALL[usize::from(first) % kinds]
        }
    } else {
        let (kind, base) = &primed[usize::from(first & 0x7F) % primed.len()];
        frame.extend_from_slice(base);
        let (offset, n) = match tail {
            [o, n, ..] => (usize::from(*o), usize::from(*n)),
            _ => (0, 0),
        };
        let n = n.min(body.len());
        for (i, x) in body[..n].iter().enumerate() {
            if let Some(b) = frame.get_mut(offset + i) {
                *b ^= x;
            }
        }
        *rest = &body[n..];
        *kind
    }
}

/// What any decompressor output must satisfy.
fn check_delivered(kind: FrameKind, frame: &[u8], out: &[u8]) {
    match kind {
        FrameKind::Ip => assert_eq!(out, frame, "TYPE_IP must pass unchanged"),
        FrameKind::Profile(k)
            if k == other::IR_N || (other::CO_N..=other::CO_N_LAST).contains(&k) =>
        {
            assert!(
                IpInfo::parse(out).is_ok(),
                "delivered an invalid IP packet from {kind:?} frame {frame:02x?}: {out:02x?}"
            );
            // At most an IPv6 and a UDP header rebuilt, for at least the check's two octets (and
            // in a tunnel an inner TCP/IP header, see below).
            assert!(
                out.len() <= frame.len() + 48 + 188,
                "output grew: {}",
                out.len()
            );
        }
        FrameKind::Profile(other::TUNNEL)
            if other::tunnelled(out).is_some_and(|inner| {
                TcpIpPacket::parse(inner).is_none() && IpInfo::parse(inner).is_ok()
            }) =>
        {
            // A tunnelled packet that is not TCP: the outer header and the inner one (IPv6 and
            // UDP at most) rebuilt, for at least the two checks.
            assert!(
                out.len() <= frame.len() + 2 * (48 + 188),
                "output grew: {}",
                out.len()
            );
        }
        FrameKind::Profile(format::IR_S | format::COMPACT_SYN) => {
            // A SYN, SYN-ACK or RST, which `TcpIpPacket::parse` refuses by design.
            assert!(
                handshake::parse(out).is_some(),
                "delivered an invalid handshake segment from IR-S frame {frame:02x?}: {out:02x?}"
            );
            assert!(out.len() <= frame.len() + 188, "output grew: {}", out.len());
        }
        FrameKind::UncompressedTcp | FrameKind::CompressedTcp | FrameKind::Profile(_) => {
            // A TCP/IP packet, or (a tunnel frame, a tunnelled context's CO frame) one in an
            // IP-in-IP tunnel, whose outer header adds at most 40 bytes.
            let plain = TcpIpPacket::parse(out).is_some();
            let tunnelled = !plain
                && other::tunnelled(out).is_some_and(|inner| TcpIpPacket::parse(inner).is_some());
            assert!(
                plain || tunnelled,
                "delivered an invalid TCP/IP packet from {kind:?} frame {frame:02x?}: {out:02x?}"
            );
            // Template (at most 128 bytes), 20-byte TCP header, 40 bytes of options at most.
            let outer = if tunnelled { 40 } else { 0 };
            assert!(
                out.len() <= frame.len() + 188 + outer,
                "output grew: {}",
                out.len()
            );
        }
        other => panic!("TAROC delivered a {other:?} frame"),
    }
}

// ---------------------------------------------------------------------------------------------
// taroc_plus_decompress

/// Frames of the same priming flows as [`primed_frames`], as the `taroc-plus` compressor
/// sends them.
pub fn primed_plus_frames() -> &'static [(FrameKind, Vec<u8>)] {
    static FRAMES: OnceLock<Vec<(FrameKind, Vec<u8>)>> = OnceLock::new();
    FRAMES.get_or_init(|| {
        let mut c = taroc_plus().compressor();
        for note in plus_sibling_notes() {
            c.sibling_note(&note);
        }
        priming_packets()
            .into_iter()
            .filter(|p| TcpIpPacket::parse(p).is_some())
            .chain(mirrored_priming_packets())
            .chain(note_priming_packets())
            .chain(handshake_priming_packets())
            .chain(non_tcp_priming_packets())
            .chain(tunnelled_priming_packets())
            .chain(tunnelled_v4_priming_packets())
            .chain(tunnelled_non_tcp_priming_packets())
            .map(|p| {
                let mut frame = Vec::new();
                let kind = c.compress(&p, &mut frame);
                (kind, frame)
            })
            .collect()
    })
}

/// The sibling notes ([`taroc_core::plus::mirror`]) the primed `taroc-plus` codecs hear first:
/// the same notes tell the compressor what its sibling decompressor holds and the decompressor
/// what its sibling compressor holds, as if each end's codecs had seen the flows of
/// [`mirrored_priming_packets`] go the other way: one under CID 200, two handshakes, and a
/// packet of each of the two segments' flows' opposites, which their mirrored compact IRs code
/// their numbers against ([`taroc_core::plus::numbers`]), and the SYN the SYN-ACK answers,
/// which its IR-S codes its acknowledgment number and TS echo against.
pub fn plus_sibling_notes() -> Vec<Vec<u8>> {
    let flows = mirrored_priming_packets();
    let reverse = |p: &[u8]| mirror::reversed(&TcpIpPacket::parse(p).expect("TCP").key);
    let handshake = handshake::parse(&flows[3]).expect("a SYN-ACK").key;
    // The segments acknowledge 5 and start at 9,000 with TS value 7 and echo 8.
    let reference = |checksum| Numbers {
        checksum,
        next_seq: 5,
        ack: 8_990,
        window: 500,
        ts: Some((8, 6)),
    };
    // The SYN the SYN-ACK answers: its ack and TS echo go as differences from these.
    let syn = Numbers {
        checksum: 0x9ABC,
        next_seq: 0x0102_0304,
        ack: 0,
        window: 64_240,
        ts: Some((3, 0)),
    };
    let hash = |p: &[u8]| mirror::flow_hash(&reverse(p));
    [
        Note::Context(200, Some(reverse(&flows[0]))),
        Note::Handshake(mirror::reversed(&handshake)),
        Note::Handshake(reverse(&flows[4])),
        Note::Numbers(hash(&flows[0]), reference(0x1234)),
        Note::Numbers(hash(&flows[4]), reference(0x5678)),
        Note::Numbers(mirror::flow_hash(&mirror::reversed(&handshake)), syn),
    ]
    .iter()
    .map(|note| {
        let mut bytes = Vec::new();
        mirror::put_note(note, &mut bytes);
        bytes
    })
    .collect()
}

/// Flows whose opposite the sibling codecs know ([`plus_sibling_notes`]): three segments of one
/// (mirrored compact IRs naming CID 200), a SYN-ACK (an IR-S against a handshake mirror) and
/// three segments of a third (mirrored compact IRs naming a handshake by its hash), each
/// between hosts of their own.
fn mirrored_priming_packets() -> Vec<Vec<u8>> {
    let between = |mut p: Vec<u8>, hosts: [u8; 2]| {
        p[12..20].copy_from_slice(&[203, 0, 113, hosts[0], 203, 0, 113, hosts[1]]);
        fix_up(&mut p);
        p
    };
    let segment = |i: u32| {
        tcp_packet(
            false,
            9_000 + 100 * i,
            5,
            i as u16,
            501,
            Some((7, 8)),
            &[],
            100,
        )
    };
    let mut syn_ack = tcp_packet(false, 0x5eed_0201, 0x0102_0304, 0, 64240, None, &[], 0);
    let options = [
        2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 3, 1, 3, 3, 7,
    ];
    syn_ack[32] = (((20 + options.len()) / 4) as u8) << 4;
    syn_ack[33] = 0x12;
    syn_ack.extend_from_slice(&options);
    (0..3)
        .map(|i| between(segment(i), [1, 2]))
        .chain(core::iter::once(between(syn_ack, [3, 4])))
        .chain((0..3).map(|i| between(segment(i), [5, 6])))
        .collect()
}

/// The priming IPv4 flow going on with full-sized segments: the compressor learns their size
/// as the flow's stride and sends it in scaling notes (CO frames with the extension's N flag),
/// so that the fuzzer mutates those too.
fn note_priming_packets() -> Vec<Vec<u8>> {
    (12..20u32)
        .map(|i| v4_priming_packet(i, &[], 1448))
        .collect()
}

/// Packet `i` of the priming IPv4 flow (timestamps; `sack` blocks; `payload_len` octets).
fn v4_priming_packet(i: u32, sack: &[(u32, u32)], payload_len: usize) -> Vec<u8> {
    tcp_packet(
        false,
        1_000_000 + 1448 * i,
        2_000 + 7 * (i / 3),
        100 + i as u16,
        501 + (i / 4) as u16,
        Some((77_000 + i / 2, 55_000 + i / 3)),
        sack,
        payload_len,
    )
}

/// The priming IPv6 TCP flow on another port, in an IPv6 tunnel: IR-N frames of the outer
/// header's context, the inner flow's IR frames in tunnel frames, then CO frames of a context
/// that keeps the outer header, so that the fuzzer mutates those too.
fn tunnelled_priming_packets() -> Vec<Vec<u8>> {
    priming_packets()
        .into_iter()
        .filter(|p| p[0] >> 4 == 6 && TcpIpPacket::parse(p).is_some())
        .map(|mut inner| {
            inner[40..42].copy_from_slice(&4242u16.to_be_bytes());
            fix_up(&mut inner);
            let mut p = vec![0x60, 0, 0, 0, 0, 0, taroc_wire::protocol::IPV6, 64];
            p.extend_from_slice(&Ipv6Addr::new(0x2001, 0xdb8, 7, 0, 0, 0, 0, 1).octets());
            p.extend_from_slice(&Ipv6Addr::new(0x2001, 0xdb8, 7, 0, 0, 0, 0, 2).octets());
            p.extend_from_slice(&inner);
            fix_up(&mut p);
            p
        })
        .collect()
}

/// The priming IPv4 TCP flow on another port, in an IPv4 tunnel whose Identification counts
/// by 3 per packet (a tunnel shared with other flows): the inner flow's CO frames carry the
/// outer Identification (8 LSBs against the inner one's), so that the fuzzer mutates those too.
fn tunnelled_v4_priming_packets() -> Vec<Vec<u8>> {
    priming_packets()
        .into_iter()
        .filter(|p| p[0] == 0x45 && TcpIpPacket::parse(p).is_some())
        .enumerate()
        .map(|(i, mut inner)| {
            inner[20..22].copy_from_slice(&4343u16.to_be_bytes());
            fix_up(&mut inner);
            in_v4_tunnel(&inner, 300 + 3 * i as u16, [1, 2])
        })
        .collect()
}

/// `inner` (IPv4) in an IPv4 tunnel from 192.0.2.`ends[0]` to 192.0.2.`ends[1]`, outer
/// Identification `id`, its lengths and checksums filled in.
fn in_v4_tunnel(inner: &[u8], id: u16, ends: [u8; 2]) -> Vec<u8> {
    let [hi, lo] = id.to_be_bytes();
    let mut p = vec![
        0x45,
        0,
        0,
        0,
        hi,
        lo,
        0,
        0,
        64,
        taroc_wire::protocol::IPV4,
        0,
        0,
    ];
    p.extend_from_slice(&[192, 0, 2, ends[0], 192, 0, 2, ends[1]]);
    p.extend_from_slice(inner);
    fix_up(&mut p);
    p
}

/// The UDP and ICMP priming packets, thrice each, in an IPv4 tunnel: tunnel frames whose inner
/// frames are IR-N and then CO-N frames of the inner packets' contexts, so that the fuzzer
/// mutates those too.
fn tunnelled_non_tcp_priming_packets() -> Vec<Vec<u8>> {
    let inner = non_tcp_priming_packets();
    (0..3)
        .flat_map(|_| inner.iter().cloned())
        .enumerate()
        .map(|(i, p)| in_v4_tunnel(&p, 700 + 5 * i as u16, [7, 8]))
        .collect()
}

/// A SYN and a SYN-ACK with Linux's option layouts, and a RST, on new ports between hosts whose
/// context has finished its start: `taroc-plus` sends them as IR-S frames, so that the fuzzer
/// mutates those too; and a SYN between hosts with no context (a compact SYN).
fn handshake_priming_packets() -> Vec<Vec<u8>> {
    // MSS 1460, SACK permitted, timestamps, NOP, window scale 7.
    let linux = |ecr: u32| {
        let mut o = vec![2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 1, 0x2c, 0x11];
        o.extend_from_slice(&ecr.to_be_bytes());
        o.extend_from_slice(&[1, 3, 3, 7]);
        o
    };
    [
        (0x02, 0, linux(0)),
        (0x12, 0x0a0b_0c0d, linux(0x0007_a120)),
        (0x04, 0, Vec::new()),
    ]
    .into_iter()
    .map(|(tcp_flags, ack, options)| {
        let mut p = tcp_packet(false, 0x5eed_0001, ack, 300, 64240, None, &[], 0);
        p[20..22].copy_from_slice(&[0xa4, 0x10]);
        p[32] = (((20 + options.len()) / 4) as u8) << 4;
        p[33] = tcp_flags;
        p.extend_from_slice(&options);
        fix_up(&mut p);
        p
    })
    .chain(core::iter::once(baseless_syn(linux(0))))
    .collect()
}

/// A SYN between hosts with no context: `taroc-plus` sends it as a compact SYN.
fn baseless_syn(options: Vec<u8>) -> Vec<u8> {
    let mut p = tcp_packet(false, 0x5eed_0101, 0, 301, 64240, None, &[], 0);
    p[12..20].copy_from_slice(&[198, 51, 100, 1, 198, 51, 100, 2]);
    p[32] = (((20 + options.len()) / 4) as u8) << 4;
    p[33] = 0x02;
    p.extend_from_slice(&options);
    fix_up(&mut p);
    p
}

/// A DNS-like UDP datagram and an ICMP echo request, twice each (IR-N, then CO-N), so that the
/// fuzzer mutates `taroc-plus`'s non-TCP frames too.
fn non_tcp_priming_packets() -> Vec<Vec<u8>> {
    let mut packets = Vec::new();
    for id in [7u16, 9] {
        for (protocol, transport) in [
            (
                17u8,
                &[0x9c, 0x40, 0, 53, 0, 12, 0x12, 0x34, 1, 2, 3, 4][..],
            ),
            (1u8, &[8, 0, 0xf7, 0xfd, 0, 1, 0, 1, 5, 6, 7, 8][..]),
        ] {
            let mut p = vec![0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, protocol, 0, 0];
            p[4..6].copy_from_slice(&id.to_be_bytes());
            p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
            p.extend_from_slice(transport);
            let sum = checksum(&p[..20]);
            p[10..12].copy_from_slice(&sum.to_be_bytes());
            packets.push(p);
        }
    }
    packets
}

fn taroc_plus() -> Variant {
    Variant::by_name("taroc-plus").expect("the taroc-plus variant exists")
}

/// As [`taroc_decompress`], into a primed `taroc-plus` decompressor (with its repairs: context
/// requests over the reverse channel) and then a primed `taroc-plus-u` one (none: it counts
/// refused frames as loss instead), each with its clock advancing 30 ms per record so that
/// requests come due: never a panic; what it delivers is a valid TCP/IP packet of bounded size;
/// at most 256 contexts; every feedback frame is a loss note, IR receipts or a well-formed
/// context request naming each CID once, and `taroc-plus-u` requests no context.
pub fn taroc_plus_decompress(data: &[u8]) {
    plus_decompress(&taroc_plus(), data);
    let one_way = Variant::by_name("taroc-plus-u").expect("the taroc-plus-u variant exists");
    plus_decompress(&one_way, data);
}

/// [`taroc_plus_decompress`] into one primed decompressor of `variant`.
fn plus_decompress(variant: &Variant, data: &[u8]) {
    let requests = variant.config.plus.repair.context_requests;
    let primed = primed_plus_frames();
    let mut d = variant.decompressor();
    for note in plus_sibling_notes() {
        d.sibling_note(&note);
    }
    let mut out = Vec::new();
    let mut feedback = Vec::new();
    let mut now = Duration::ZERO;
    for (kind, frame) in primed {
        d.decompress(*kind, frame, &mut out)
            .expect("the primed frames decompress");
    }
    let mut rest = data;
    let mut frame = Vec::new();
    while !rest.is_empty() {
        let kind = next_frame(&mut rest, primed, 0, &mut frame);
        now += Duration::from_millis(30);
        d.set_time(now);
        if d.decompress(kind, &frame, &mut out).is_ok() {
            check_delivered(kind, &frame, &out);
        }
        while d.take_feedback(&mut feedback) {
            // A loss note is the one octet; else TCP contexts' requests, or non-TCP contexts'
            // (type octet `other::REQUEST_N`).
            if feedback == [taroc_core::plus::format::LOSS_NOTE] {
                continue;
            }
            // IR receipts: (CID, checksum) triples, each CID once.
            if let Some(receipts) = ReceiptFrame::new_checked(&feedback) {
                let mut seen = [false; 256];
                for (cid, _) in receipts.receipts() {
                    assert!(!seen[usize::from(cid)], "CID {cid} receipted twice");
                    seen[usize::from(cid)] = true;
                }
                continue;
            }
            assert!(
                requests,
                "{} requested contexts: {feedback:02x?}",
                variant.name
            );
            let cids = match feedback.split_first() {
                Some((&other::REQUEST_N, cids)) if !cids.is_empty() && cids.len() <= 256 => cids,
                _ => parse_request(&feedback)
                    .unwrap_or_else(|| panic!("malformed context request {feedback:02x?}")),
            };
            let mut seen = [false; 256];
            for &cid in cids {
                assert!(
                    !seen[usize::from(cid)],
                    "CID {cid} requested twice: {cids:?}"
                );
                seen[usize::from(cid)] = true;
            }
        }
        let AnyDecompressor::Plus(plus) = &d else {
            panic!("{} is the taroc-plus decompressor", variant.name)
        };
        assert!(plus.context_count() <= 256);
    }
}

// ---------------------------------------------------------------------------------------------
// vj_decompress, iphc_decompress

/// Arbitrary frames into a primed VJ decompressor: never a panic; TYPE_IP passes unchanged;
/// what it rebuilds is an IPv4/TCP packet whose IP header checksum verifies (RFC 1144
/// recomputes it; it does not verify the TCP checksum, so neither do we).
pub fn vj_decompress(data: &[u8]) {
    baseline_decompress(Scheme::Vj, data, |kind, frame, out| match kind {
        FrameKind::Ip => assert_eq!(out, frame, "TYPE_IP must pass unchanged"),
        _ => {
            let ip = Ipv4Packet::new_checked(out).expect("VJ delivers IPv4");
            assert!(ip.header_checksum_ok(), "IP header checksum: {out:02x?}");
            assert_eq!(ip.protocol(), taroc_wire::protocol::TCP);
            // A 16-byte compressed header at most stands for 40 bytes plus the context's
            // options (up to 80 more).
            assert!(out.len() <= frame.len() + 120, "output grew: {}", out.len());
        }
    });
}

/// Arbitrary frames into a primed IPHC decompressor: never a panic; TYPE_IP passes unchanged;
/// a FULL_HEADER delivers a packet of the frame's length; a packet rebuilt from a compressed
/// header parses as IP, and if it is TCP (or UDP with a checksum) its checksum verifies.
pub fn iphc_decompress(data: &[u8]) {
    baseline_decompress(Scheme::Iphc, data, |kind, frame, out| match kind {
        FrameKind::Ip => assert_eq!(out, frame, "TYPE_IP must pass unchanged"),
        FrameKind::FullHeader => assert_eq!(out.len(), frame.len(), "FULL_HEADER length"),
        _ => {
            let ip = IpInfo::parse(out).unwrap_or_else(|e| {
                panic!("{kind:?} frame {frame:02x?} delivered an unparsable packet ({e:?}): {out:02x?}")
            });
            let segment = &out[ip.transport_offset.min(out.len())..];
            let carried = match ip.protocol {
                taroc_wire::protocol::TCP => true,
                taroc_wire::protocol::UDP => segment.get(6..8).is_some_and(|c| c != [0, 0]),
                _ => false,
            };
            if carried && !ip.fragment {
                assert!(
                    taroc_wire::checksum::transport_verifies(ip.src, ip.dst, ip.protocol, segment),
                    "delivered a packet whose checksum fails from {kind:?} frame {frame:02x?}: \
                     {out:02x?}"
                );
            }
        }
    });
}

/// Frames with their kinds, in link order.
type Frames = Vec<(FrameKind, Vec<u8>)>;

/// The shared driver of [`vj_decompress`] and [`iphc_decompress`].
fn baseline_decompress(scheme: Scheme, data: &[u8], check: impl Fn(FrameKind, &[u8], &[u8])) {
    static PRIMED: OnceLock<[Frames; 2]> = OnceLock::new();
    let primed = PRIMED.get_or_init(|| [frames_of(Scheme::Vj), frames_of(Scheme::Iphc)]);
    let primed = &primed[usize::from(scheme == Scheme::Iphc)];
    let mut d = AnyDecompressor::new(scheme, &SchemeConfig::default());
    let mut out = Vec::new();
    let mut feedback = Vec::new();
    for (kind, frame) in primed {
        d.decompress(*kind, frame, &mut out)
            .expect("the primed frames decompress");
    }
    let mut rest = data;
    let mut frame = Vec::new();
    while !rest.is_empty() {
        let kind = next_frame(&mut rest, primed, FrameKind::ALL.len(), &mut frame);
        if d.decompress(kind, &frame, &mut out).is_ok() {
            check(kind, &frame, &out);
        }
        while d.take_feedback(&mut feedback) {
            assert!(
                feedback.len() <= 2048,
                "feedback of {} bytes",
                feedback.len()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// vj_roundtrip, iphc_roundtrip

/// Arbitrary "packets" through a VJ compressor and decompressor on a clean link: every frame
/// is delivered and equals its packet exactly. Selector bits 0-1: slots 16, 1, 2, 256; bit 2:
/// connection-number omission off.
pub fn vj_roundtrip(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let mut config = SchemeConfig::default();
    config.vj.slots = [16, 1, 2, 256][usize::from(selector & 3)];
    config.vj.compress_cid = selector & 4 == 0;
    roundtrip(Scheme::Vj, &config, false, false, rest);
}

/// Arbitrary "packets" through an IPHC compressor and decompressor on a clean link: every frame
/// is delivered and equals its packet exactly, and the decompressor never asks for a header.
/// Selector bit 7: the clock advances by one second before each packet (refreshes by time).
pub fn iphc_roundtrip(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    roundtrip(
        Scheme::Iphc,
        &SchemeConfig::default(),
        selector & 0x80 != 0,
        false,
        rest,
    );
}

/// The shared driver of [`taroc_roundtrip`], [`vj_roundtrip`] and [`iphc_roundtrip`]. With
/// `requests`, a packet whose length field has bit 14 set is preceded by a TAROC context request
/// for CID 0 reaching the compressor (as a lossy link's decompressor would send it).
fn roundtrip(scheme: Scheme, config: &SchemeConfig, tick: bool, requests: bool, mut rest: &[u8]) {
    let mut c = AnyCompressor::new(scheme, config);
    let mut d = AnyDecompressor::new(scheme, config);
    let (mut packet, mut frame, mut out, mut feedback) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut index = 0u32;
    while rest.len() >= 2 {
        let header = u16::from_be_bytes([rest[0], rest[1]]);
        let len = usize::from(header & 0x3FFF).min(rest.len() - 2);
        packet.clear();
        packet.extend_from_slice(&rest[2..2 + len]);
        rest = &rest[2 + len..];
        if header & 0x8000 != 0 {
            fix_up(&mut packet);
        }
        if tick {
            c.set_time(std::time::Duration::from_secs(u64::from(index)));
        }
        if requests && header & 0x4000 != 0 {
            c.handle_feedback(&[taroc_core::tcp::repair::REQUEST, 0]);
        }
        let kind = c.compress(&packet, &mut frame);
        if kind == FrameKind::Ip {
            assert_eq!(frame, packet, "packet {index}: TYPE_IP frame differs");
        }
        match d.decompress(kind, &frame, &mut out) {
            Ok(()) => assert!(
                out == packet,
                "packet {index} ({kind:?}) delivered wrong:\n  packet    {packet:02x?}\n  delivered {out:02x?}"
            ),
            Err(reason) => panic!(
                "packet {index} ({kind:?}) dropped on a clean link: {reason:?}\n  packet {packet:02x?}\n  frame  {frame:02x?}"
            ),
        }
        // On a clean link the only feedback is taroc-plus's: loss notes (the packets' own
        // IP-IDs may skip, as after a sender's queue drops) and IR receipts; the compressor
        // takes them.
        while d.take_feedback(&mut feedback) {
            let plus_feedback = feedback == [taroc_core::plus::format::LOSS_NOTE]
                || ReceiptFrame::new_checked(&feedback).is_some();
            assert!(
                scheme == Scheme::Plus && plus_feedback,
                "packet {index}: feedback on a clean link: {feedback:02x?}"
            );
            c.handle_feedback(&feedback);
        }
        index += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// taroc_roundtrip

/// Arbitrary "packets" through a TAROC compressor and decompressor on a clean link: every frame
/// is delivered and equals its packet exactly. Selector bits 2-3 pick K; their value 3 (K = 2,
/// as 0) also turns every bounded repair on ([`Repair::live`]) with the clock advancing one
/// second per packet, so refreshes by packets and by time, and distress answers, are drawn too,
/// and context requests for CID 0 before the packets marked so (`roundtrip`), so the answers and
/// a lossy link's longer starts too. Selector bits 4-7 all set select `taroc-plus`
/// ([`Scheme::Plus`]) with these settings.
pub fn taroc_roundtrip(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let repair = selector >> 2 & 3 == 3;
    let config = TarocConfig {
        k: [2, 1, 4, 2][usize::from(selector >> 2 & 3)],
        max_contexts: [256, 1, 2, 4][usize::from(selector & 3)],
        improvements: Improvements {
            code_behind_window: selector & 0x10 != 0,
            progress_since_push: selector & 0x20 != 0,
            checksum_covers_ip_id: selector & 0x40 != 0,
            start_repeats: selector >> 7,
        },
        repair: if repair {
            Repair::live()
        } else {
            Repair::default()
        },
        ..TarocConfig::default()
    };
    let plus = PlusConfig {
        k: config.k,
        max_contexts: config.max_contexts,
        repair: config.repair,
        ..PlusConfig::default()
    };
    let config = SchemeConfig {
        taroc: config,
        plus,
        ..SchemeConfig::default()
    };
    let scheme = if selector & 0xF0 == 0xF0 {
        Scheme::Plus
    } else {
        Scheme::Taroc
    };
    roundtrip(scheme, &config, repair, repair, rest);
}

/// Encodes packets in the [`taroc_roundtrip`] input format (with the fix-up bit clear).
pub fn roundtrip_input(selector: u8, packets: &[Vec<u8>]) -> Vec<u8> {
    let mut data = vec![selector];
    for p in packets {
        let len = p.len().min(0x3FFF);
        data.extend_from_slice(&(len as u16).to_be_bytes());
        data.extend_from_slice(&p[..len]);
    }
    data
}

// ---------------------------------------------------------------------------------------------
// wire_parse

/// Every taroc_wire view on arbitrary bytes, every accessor: never a panic, and the few
/// invariants the views promise.
pub fn wire_parse(data: &[u8]) {
    if let Ok(ip) = Ipv4Packet::new_checked(data) {
        let header_len = ip.header_len();
        assert!(header_len >= 20 && header_len <= data.len());
        let _ = (
            ip.tos(),
            ip.ident(),
            ip.flags_frag(),
            ip.dont_frag(),
            ip.is_fragment(),
        );
        let _ = (
            ip.ttl(),
            ip.protocol(),
            ip.header_checksum(),
            ip.src(),
            ip.dst(),
        );
        assert_eq!(ip.header().len(), header_len);
        assert_eq!(ip.options().len(), header_len - 20);
        let _ = ip.is_exact();
        assert!(usize::from(ip.total_len()) >= header_len);
        let payload = ip.payload();
        let _ = ip.header_checksum_ok();
        tcp(payload);
        udp(payload);
        let mut copy = data.to_vec();
        let mut m = Ipv4Packet::new_checked(&mut copy[..]).expect("same bytes");
        m.set_ident(0x1234);
        m.set_tos(0xB8);
        m.set_total_len(m.total_len());
        m.fill_header_checksum();
        assert!(m.header_checksum_ok());
        assert_eq!((m.ident(), m.tos()), (0x1234, 0xB8));
        // Independent recomputation: the header sums to 0xFFFF.
        assert_eq!(checksum(m.header()), 0);
    }
    if let Ok(ip) = Ipv6Packet::new_checked(data) {
        let _ = (
            ip.traffic_class(),
            ip.flow_label(),
            ip.payload_len(),
            ip.next_header(),
        );
        let _ = (ip.hop_limit(), ip.src(), ip.dst(), ip.is_exact());
        assert!(ip.flow_label() <= 0xF_FFFF);
        if let Ok(upper) = ip.upper_layer() {
            assert!(upper.offset >= 40 && upper.offset <= data.len());
            tcp(&data[upper.offset..]);
            udp(&data[upper.offset..]);
        }
        let mut copy = data.to_vec();
        let mut m = Ipv6Packet::new_checked(&mut copy[..]).expect("same bytes");
        m.set_payload_len(0x0102);
        m.set_traffic_class(0xA5);
        assert_eq!((m.payload_len(), m.traffic_class()), (0x0102, 0xA5));
        assert_eq!(m.flow_label(), ip.flow_label());
    }
    tcp(data);
    udp(data);
    if let Ok(info) = IpInfo::parse(data) {
        assert!(info.transport_offset <= data.len());
        assert!(info.version == 4 || info.version == 6);
    }
    if let Some(s) = taroc_wire::summary::summarize(data) {
        assert!(s.header_len <= data.len(), "{s:?}");
    }
    let _ = TcpIpPacket::parse(data).map(|p| (p.payload_len(), p.payload().len()));
}

fn tcp(data: &[u8]) {
    let Ok(t) = TcpSegment::new_checked(data) else {
        return;
    };
    let _ = (
        t.src_port(),
        t.dst_port(),
        t.seq(),
        t.ack(),
        t.reserved(),
        t.flags(),
    );
    let _ = (t.window(), t.checksum(), t.urgent());
    let header_len = t.header_len();
    assert!(header_len >= 20 && header_len <= data.len());
    assert_eq!(t.options().len(), header_len - 20);
    assert_eq!(t.payload().len(), data.len() - header_len);
    let mut parsed = 0;
    let mut iter = t.option_iter();
    for option in iter.by_ref() {
        parsed += 1;
        assert!(parsed <= 40, "more options than option bytes");
        let Ok(option) = option else {
            continue;
        };
        // Whatever parses re-emits to bytes that parse back to the same option.
        let mut buf = [0u8; 64];
        if let Some(n) = option.emit(&mut buf) {
            assert_eq!(n, option.wire_len());
            let again = OptionIter::new(&buf[..n]).next();
            assert_eq!(again, Some(Ok(option)), "option {option:?}");
        } else {
            assert!(
                option.wire_len() > buf.len(),
                "{option:?} did not emit into 64 bytes"
            );
        }
        if let TcpOption::Sack(blocks) = option {
            assert!(blocks.len() <= 4 && blocks.as_slice().len() == blocks.len());
        }
    }
    let _ = iter.remainder();
}

fn udp(data: &[u8]) {
    let Ok(u) = UdpDatagram::new_checked(data) else {
        return;
    };
    let _ = (u.src_port(), u.dst_port(), u.length(), u.checksum());
    assert_eq!(u.payload().len(), data.len() - 8);
}
