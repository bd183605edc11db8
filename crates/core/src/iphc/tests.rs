//! Tests of the IPHC codec: golden bytes of every format worked from RFC 2507's text, the twice
//! algorithm and header requests, non-TCP slow-start and refreshes, nested and extension
//! headers, and a random-flow property test.

use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;

use taroc_wire::checksum::Sum;

use super::chain::{self, Layout};
use super::full_header::{self, FullId};
use super::{feedback, IphcCompressor, IphcConfig, IphcDecompressor};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};

// ---------------------------------------------------------------------------------------------
// Packet builders (independent of the codec: they compute every checksum themselves).

const A4: [u8; 4] = [10, 0, 0, 1];
const B4: [u8; 4] = [10, 0, 0, 2];
const C4: [u8; 4] = [192, 0, 2, 7];
const D4: [u8; 4] = [192, 0, 2, 9];
const A6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
const C6: [u8; 16] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0c];
const D6: [u8; 16] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0d];

const TCP: u8 = 6;
const UDP: u8 = 17;
const ACK: u8 = 0x10;
const PSH: u8 = 0x08;
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const URG: u8 = 0x20;
const ECE: u8 = 0x40;

/// A TCP header and its payload.
#[derive(Debug, Clone)]
struct Tcp {
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    window: u16,
    urgent: u16,
    options: Vec<u8>,
    payload: Vec<u8>,
}

impl Tcp {
    fn new(seq: u32, ack: u32) -> Tcp {
        Tcp {
            sport: 40000,
            dport: 80,
            seq,
            ack,
            flags: ACK,
            window: 1000,
            urgent: 0,
            options: Vec::new(),
            payload: Vec::new(),
        }
    }

    fn payload(mut self, len: usize) -> Tcp {
        self.payload = (0..len).map(|i| (i as u32 ^ self.seq) as u8).collect();
        self
    }

    fn timestamps(mut self, val: u32, ecr: u32) -> Tcp {
        self.options = vec![1, 1, 8, 10];
        self.options.extend_from_slice(&val.to_be_bytes());
        self.options.extend_from_slice(&ecr.to_be_bytes());
        self
    }

    /// The segment, with its checksum under the pseudo-header of `src` and `dst`.
    fn segment(&self, src: &[u8], dst: &[u8]) -> Vec<u8> {
        assert_eq!(self.options.len() % 4, 0);
        let hl = 20 + self.options.len();
        let mut s = Vec::new();
        s.extend_from_slice(&self.sport.to_be_bytes());
        s.extend_from_slice(&self.dport.to_be_bytes());
        s.extend_from_slice(&self.seq.to_be_bytes());
        s.extend_from_slice(&self.ack.to_be_bytes());
        s.push(((hl / 4) as u8) << 4);
        s.push(self.flags);
        s.extend_from_slice(&self.window.to_be_bytes());
        s.extend_from_slice(&[0, 0]);
        s.extend_from_slice(&self.urgent.to_be_bytes());
        s.extend_from_slice(&self.options);
        s.extend_from_slice(&self.payload);
        transport_checksum(&mut s, src, dst, TCP, 16);
        s
    }
}

fn transport_checksum(s: &mut [u8], src: &[u8], dst: &[u8], proto: u8, at: usize) {
    s[at..at + 2].copy_from_slice(&[0, 0]);
    let sum = Sum::new()
        .add_bytes(src)
        .add_bytes(dst)
        .add_u32(s.len() as u32)
        .add_u16(u16::from(proto))
        .add_bytes(s)
        .checksum();
    // A computed zero goes as 0xFFFF in UDP (zero means "no checksum").
    let sum = if sum == 0 && proto == UDP {
        0xFFFF
    } else {
        sum
    };
    s[at..at + 2].copy_from_slice(&sum.to_be_bytes());
}

fn udp(src: &[u8], dst: &[u8], sport: u16, dport: u16, payload: &[u8], checksum: bool) -> Vec<u8> {
    let mut s = Vec::new();
    s.extend_from_slice(&sport.to_be_bytes());
    s.extend_from_slice(&dport.to_be_bytes());
    s.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    s.extend_from_slice(&[0, 0]);
    s.extend_from_slice(payload);
    if checksum {
        transport_checksum(&mut s, src, dst, UDP, 6);
    }
    s
}

/// IPv4 header fields.
#[derive(Debug, Clone, Copy)]
struct V4 {
    src: [u8; 4],
    dst: [u8; 4],
    id: u16,
    tos: u8,
    ttl: u8,
}

impl V4 {
    fn new(id: u16) -> V4 {
        V4 {
            src: A4,
            dst: B4,
            id,
            tos: 0,
            ttl: 64,
        }
    }

    fn wrap(&self, proto: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = vec![0x45, self.tos];
        p.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
        p.extend_from_slice(&self.id.to_be_bytes());
        p.extend_from_slice(&[0x40, 0, self.ttl, proto, 0, 0]);
        p.extend_from_slice(&self.src);
        p.extend_from_slice(&self.dst);
        let sum = Sum::new().add_bytes(&p).checksum();
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p.extend_from_slice(payload);
        p
    }
}

/// IPv6 header fields.
#[derive(Debug, Clone, Copy)]
struct V6 {
    src: [u8; 16],
    dst: [u8; 16],
    tc: u8,
    flow: u32,
    hop: u8,
}

impl V6 {
    fn new() -> V6 {
        V6 {
            src: A6,
            dst: B6,
            tc: 0,
            flow: 0x12345,
            hop: 64,
        }
    }

    fn wrap(&self, next: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = vec![
            0x60 | (self.tc >> 4),
            (self.tc << 4) | ((self.flow >> 16) as u8 & 0x0F),
        ];
        p.extend_from_slice(&(self.flow as u16).to_be_bytes());
        p.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        p.extend_from_slice(&[next, self.hop]);
        p.extend_from_slice(&self.src);
        p.extend_from_slice(&self.dst);
        p.extend_from_slice(payload);
        p
    }
}

fn v4_tcp(ip: V4, t: &Tcp) -> Vec<u8> {
    ip.wrap(TCP, &t.segment(&ip.src, &ip.dst))
}

fn v6_tcp(ip: V6, t: &Tcp) -> Vec<u8> {
    ip.wrap(TCP, &t.segment(&ip.src, &ip.dst))
}

fn v4_udp(ip: V4, sport: u16, payload: &[u8], checksum: bool) -> Vec<u8> {
    ip.wrap(UDP, &udp(&ip.src, &ip.dst, sport, 53, payload, checksum))
}

fn v6_udp(ip: V6, sport: u16, payload: &[u8]) -> Vec<u8> {
    ip.wrap(UDP, &udp(&ip.src, &ip.dst, sport, 53, payload, true))
}

/// A compressor and a decompressor joined by a link the test drives.
struct Pair {
    c: IphcCompressor,
    d: IphcDecompressor,
}

impl Pair {
    fn new(config: IphcConfig) -> Pair {
        Pair {
            c: IphcCompressor::new(config.clone()),
            d: IphcDecompressor::new(config),
        }
    }

    fn send(&mut self, packet: &[u8]) -> (FrameKind, Vec<u8>) {
        let mut frame = Vec::new();
        let kind = self.c.compress(packet, &mut frame);
        if kind == FrameKind::Ip {
            assert_eq!(frame, packet);
        }
        (kind, frame)
    }

    fn recv(&mut self, kind: FrameKind, frame: &[u8]) -> Result<Vec<u8>, DropReason> {
        let mut out = vec![0xEE; 3];
        let r = self.d.decompress(kind, frame, &mut out);
        r.map(|()| out)
    }

    /// Sends `packet` over a clean link and checks it arrives whole; returns the frame.
    fn pass(&mut self, packet: &[u8]) -> (FrameKind, Vec<u8>) {
        let (kind, frame) = self.send(packet);
        assert_eq!(
            self.recv(kind, &frame).as_deref(),
            Ok(packet),
            "{kind:?} frame {frame:02x?}"
        );
        (kind, frame)
    }

    /// Moves the decompressor's feedback to the compressor; returns it.
    fn feedback(&mut self) -> Option<Vec<u8>> {
        let mut fb = Vec::new();
        if self.d.take_feedback(&mut fb) {
            self.c.handle_feedback(&fb);
            Some(fb)
        } else {
            None
        }
    }
}

/// Whether packet `i` (from 0) of a non-TCP stream is a slow-start full header (default
/// F_MAX_PERIOD, no time limit reached).
fn slow_start_full(i: usize) -> bool {
    [0, 2, 5, 10, 19, 36, 69, 134, 263].contains(&i)
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

// ---------------------------------------------------------------------------------------------
// Golden formats.

#[test]
fn full_header_tcp_has_the_cid_in_the_ipv4_total_length() {
    let mut pair = Pair::new(IphcConfig::default());
    let p = v4_tcp(V4::new(7), &Tcp::new(1000, 5000).payload(10));
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    // Section 5.3.1: first length field = | pkt nr LSB (0) | CID (0) |.
    let mut expected = p.clone();
    expected[2..4].copy_from_slice(&[0x00, 0x00]);
    assert_eq!(frame, expected);

    // A second connection takes the next CID.
    let mut other = Tcp::new(1, 2).payload(3);
    other.sport = 40001;
    let q = v4_tcp(V4::new(9), &other);
    let (kind, frame) = pair.pass(&q);
    assert_eq!(kind, FrameKind::FullHeader);
    let mut expected = q.clone();
    expected[2..4].copy_from_slice(&[0x00, 0x01]);
    assert_eq!(frame, expected);
}

#[test]
fn full_header_tcp_with_two_length_fields() {
    // IPv4/TCP tunnelled in IPv6: the IPv6 Payload Length is the first length field, the inner
    // IPv4 Total Length the second, | pkt nr MSB (0) | 0 |.
    let mut pair = Pair::new(IphcConfig::default());
    let inner = v4_tcp(V4::new(3), &Tcp::new(10, 20).payload(5));
    let p = V6::new().wrap(4, &inner);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    let mut expected = p.clone();
    expected[4..6].copy_from_slice(&[0x00, 0x00]);
    expected[42..44].copy_from_slice(&[0x00, 0x00]);
    assert_eq!(frame, expected);
}

#[test]
fn full_header_non_tcp_8_bit_cid_and_generation() {
    let mut pair = Pair::new(IphcConfig::default());
    // Stream 0, then stream 1 (another source port).
    pair.pass(&v4_udp(V4::new(1), 1000, b"first", true));
    let p = v4_udp(V4::new(2), 1001, b"second", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    // Section 5.3.2: | 0 | D=0 | generation 0 | CID 1 |, second length field (UDP) 0.
    let mut expected = p.clone();
    expected[2..4].copy_from_slice(&[0x00, 0x01]);
    expected[24..26].copy_from_slice(&[0x00, 0x00]);
    assert_eq!(frame, expected);

    // A TTL change is a new context version: generation 1.
    let mut ip = V4::new(3);
    ip.ttl = 63;
    let p = v4_udp(ip, 1001, b"third", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    let mut expected = p.clone();
    expected[2..4].copy_from_slice(&[0x01, 0x01]);
    expected[24..26].copy_from_slice(&[0x00, 0x00]);
    assert_eq!(frame, expected);

    // The frame reads back as what it says.
    let mut layout = Layout::default();
    assert!(chain::parse(&frame, 168, &mut layout));
    assert_eq!(
        full_header::read(&frame, &layout),
        Ok(FullId::NonTcp {
            cid: 1,
            generation: 1
        })
    );
}

#[test]
fn full_header_non_tcp_16_bit_cid() {
    let config = IphcConfig {
        non_tcp_space: 300,
        ..IphcConfig::default()
    };
    let mut pair = Pair::new(config);
    for port in 0..256u16 {
        pair.pass(&v4_udp(V4::new(port), 2000 + port, b"x", true));
    }
    // The 257th stream gets CID 256: | 1 | D=0 | generation 0 | 0 |, then the CID.
    let p = v4_udp(V4::new(0x4242), 5000, b"sixteen", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::FullHeader);
    let mut expected = p.clone();
    expected[2..4].copy_from_slice(&[0x80, 0x00]);
    expected[24..26].copy_from_slice(&[0x01, 0x00]);
    assert_eq!(frame, expected);

    // Its compressed header: | msb of CID | 1 | D | generation | lsb of CID |, then the RANDOM
    // fields: IPv4 Identification and UDP checksum.
    let p = v4_udp(V4::new(0x4243), 5000, b"sixteen", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedNonTcp);
    assert_eq!(
        frame,
        cat(&[&[0x01, 0x80, 0x00, 0x42, 0x43], &p[26..28], b"sixteen"])
    );

    // A stream with a single length field (IPv4/ICMP) cannot carry a 16-bit CID: it gets one
    // below 256 (the least recently used).
    let icmp = V4::new(1).wrap(1, &[8, 0, 0xf7, 0xff, 0, 0, 0, 0]);
    let (kind, frame) = pair.pass(&icmp);
    assert_eq!(kind, FrameKind::FullHeader);
    assert_eq!(frame[2], 0x01, "generation 1 of a reused CID, 8-bit format");
    assert_eq!(frame[3], 0x00, "CID 0, the least recently used");
}

/// A pure-ACK stream with timestamps, to which each test step applies one change.
fn flag_stream() -> (Tcp, V4) {
    (Tcp::new(1000, 5000).timestamps(7, 9), V4::new(100))
}

/// Without guesses: what is sent depends on the packets only (with them, the compressor also
/// sends a header whole when a decompressor that lost packets would guess it wrongly).
fn no_guesses() -> IphcConfig {
    IphcConfig {
        twice: false,
        ..IphcConfig::default()
    }
}

#[test]
fn compressed_tcp_each_change_mask_bit() {
    let mut pair = Pair::new(no_guesses());
    let (mut t, mut ip) = flag_stream();
    assert_eq!(pair.pass(&v4_tcp(ip, &t)).0, FrameKind::FullHeader);
    let cid = 0u8;
    // Each step: a change, and the frame section 6 a) prescribes. The TCP checksum is the
    // packet's own (octets 36..38 of an IPv4/TCP packet); the IPv4 Identification advances by
    // one unless the I step says otherwise.
    let mut step = |t: &Tcp, ip: &mut V4, id_step: u16, expected_tail: &[u8], mask: u8| {
        ip.id = ip.id.wrapping_add(id_step);
        let p = v4_tcp(*ip, t);
        let (kind, frame) = pair.pass(&p);
        assert_eq!(kind, FrameKind::CompressedTcp, "mask {mask:#04x}");
        assert_eq!(
            frame,
            cat(&[&[cid, mask], &p[36..38], expected_tail]),
            "mask {mask:#04x}"
        );
    };
    // S: sequence delta 1000, three octets (0, then 16 bits).
    t.seq += 1000;
    step(&t, &mut ip, 1, &[0x00, 0x03, 0xE8], 0x08);
    // A: acknowledgment delta 5.
    t.ack += 5;
    step(&t, &mut ip, 1, &[5], 0x04);
    // W: window delta 256.
    t.window += 256;
    step(&t, &mut ip, 1, &[0x00, 0x01, 0x00], 0x02);
    // U: URG with urgent pointer 7 (an absolute value).
    t.flags = ACK | URG;
    t.urgent = 7;
    step(&t, &mut ip, 1, &[7], 0x01);
    // P (with A, so the packet changes a field the TCP checksum covers).
    t.flags = ACK | PSH;
    t.ack += 1;
    step(&t, &mut ip, 1, &[1], 0x14);
    // I: the Identification advanced by 3; its delta comes after the ACK delta.
    t.flags = ACK;
    t.ack += 1;
    step(&t, &mut ip, 3, &[1, 3], 0x24);
    // O: new timestamps; the whole options field comes last.
    t.ack += 1;
    t = Tcp {
        options: Tcp::new(0, 0).timestamps(8, 10).options,
        ..t
    };
    let mut tail = vec![1];
    tail.extend_from_slice(&t.options);
    step(&t, &mut ip, 1, &tail, 0x44);
    // R: ECE set and ECN CE in the TOS octet. R-octet = Reserved (000001: ECE is the last of the
    // six bits) << 2 | ECN (11) = 0x07, right after the RANDOM fields (none here).
    t.flags = ACK | ECE;
    ip.tos = 0x03;
    t.ack += 1;
    step(&t, &mut ip, 1, &[0x07, 1], 0x84);
    // The R-octet did not update the context: back to ECE clear and Not-ECT, no R.
    t.flags = ACK;
    ip.tos = 0;
    t.ack += 1;
    step(&t, &mut ip, 1, &[1], 0x04);
    // Once more with CE: R again, since the context still holds Not-ECT.
    ip.tos = 0x03;
    t.ack += 1;
    step(&t, &mut ip, 1, &[0x03, 1], 0x84);
}

#[test]
fn compressed_tcp_special_encodings_of_rfc_1144() {
    let mut pair = Pair::new(IphcConfig::default());
    let mut t = Tcp::new(1000, 5000).payload(100);
    let mut ip = V4::new(1);
    assert_eq!(pair.pass(&v4_tcp(ip, &t)).0, FrameKind::FullHeader);
    // Sequence number advanced by the previous payload: S W U, nothing else.
    t.seq += 100;
    t = t.payload(100);
    ip.id += 1;
    let p = v4_tcp(ip, &t);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedTcp);
    assert_eq!(frame, cat(&[&[0, 0x0B], &p[36..38], &t.payload]));
    // Sequence and acknowledgment numbers both advanced by it: S A W U.
    t.seq += 100;
    t.ack += 100;
    t = t.payload(100);
    ip.id += 1;
    let p = v4_tcp(ip, &t);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedTcp);
    assert_eq!(frame, cat(&[&[0, 0x0F], &p[36..38], &t.payload]));
    // Real changes S W U would read as SPECIAL_D: COMPRESSED_TCP_NODELTA instead, which is
    // CID, the IPv4 Identification (RANDOM in this format) and the TCP header from the sequence
    // number on.
    t.seq += 100;
    t.window += 1;
    t.flags = ACK | URG;
    t.urgent = 1;
    t = t.payload(100);
    ip.id += 1;
    let p = v4_tcp(ip, &t);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedTcpNoDelta);
    assert_eq!(frame, cat(&[&[0], &p[4..6], &p[24..]]));
}

#[test]
fn nodelta_for_fin_and_full_header_for_retransmissions() {
    let mut pair = Pair::new(IphcConfig::default());
    let mut t = Tcp::new(1000, 5000).payload(100);
    let mut ip = V4::new(1);
    pair.pass(&v4_tcp(ip, &t));
    t.seq += 100;
    ip.id += 1;
    assert_eq!(pair.pass(&v4_tcp(ip, &t)).0, FrameKind::CompressedTcp);
    // A retransmission of the first segment: FULL_HEADER (section 3.2), never NODELTA.
    let mut again = Tcp::new(1000, 5000).payload(100);
    again.window = t.window;
    ip.id += 1;
    assert_eq!(pair.pass(&v4_tcp(ip, &again)).0, FrameKind::FullHeader);
    // FIN: not inferable in COMPRESSED_TCP; NODELTA carries it.
    t.seq += 100;
    t.flags = ACK | FIN;
    t = t.payload(0);
    ip.id += 1;
    let p = v4_tcp(ip, &t);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedTcpNoDelta);
    assert_eq!(frame, cat(&[&[0], &p[4..6], &p[24..]]));
    // SYN: always a full header (a new connection).
    let mut syn = Tcp::new(77, 0);
    syn.flags = SYN;
    ip.id += 1;
    assert_eq!(pair.pass(&v4_tcp(ip, &syn)).0, FrameKind::FullHeader);
}

/// `iphc-plain`'s rule (RFC 1144's retransmitted ACK): a duplicate ACK goes as a full header,
/// which repairs an ACK stream that lost a packet when neither twice nor requests run; with the
/// default configuration it goes compressed. Tunnelled (IPv6 in IPv6) as Degermark et al. run.
#[test]
fn full_on_repeat_sends_a_duplicate_ack_whole_and_repairs_the_stream() {
    let tunnel = |t: &Tcp| {
        let outer = V6 {
            src: C6,
            dst: D6,
            ..V6::new()
        };
        outer.wrap(41, &v6_tcp(V6::new(), t))
    };
    let plain = IphcConfig {
        twice: false,
        header_requests: false,
        full_on_repeat: true,
        ..IphcConfig::default()
    };
    for (config, dup_kind) in [
        (plain, FrameKind::FullHeader),
        (IphcConfig::default(), FrameKind::CompressedTcp),
    ] {
        let mut pair = Pair::new(config);
        let mut t = Tcp::new(9000, 50_000);
        pair.pass(&tunnel(&t));
        t.ack += 1000;
        assert_eq!(pair.pass(&tunnel(&t)).0, FrameKind::CompressedTcp);
        t.ack += 1000;
        // This ACK is lost: the next new ACK cannot be rebuilt without twice.
        pair.send(&tunnel(&t));
        let (kind, dup) = pair.send(&tunnel(&t));
        assert_eq!(kind, dup_kind);
        if dup_kind == FrameKind::FullHeader {
            assert_eq!(pair.recv(kind, &dup).as_deref(), Ok(&tunnel(&t)[..]));
            t.ack += 1000;
            assert_eq!(pair.pass(&tunnel(&t)).0, FrameKind::CompressedTcp);
        }
    }
}

#[test]
fn compressed_non_tcp_formats() {
    let mut pair = Pair::new(IphcConfig::default());
    // IPv4/UDP with a checksum: CID, | 0 | D | generation |, then the RANDOM fields in header
    // order: IPv4 Identification, UDP checksum.
    pair.pass(&v4_udp(V4::new(0x1234), 1000, b"hello", true));
    let p = v4_udp(V4::new(0x1235), 1000, b"hello", true);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedNonTcp);
    assert_eq!(frame, cat(&[&[0, 0, 0x12, 0x35], &p[26..28], b"hello"]));

    // Without a UDP checksum (zero): it is NOCHANGE, not sent.
    pair.pass(&v4_udp(V4::new(1), 1001, b"abc", false));
    let p = v4_udp(V4::new(2), 1001, b"abc", false);
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedNonTcp);
    assert_eq!(frame, cat(&[&[1, 0, 0, 2], b"abc"]));

    // IPv6/UDP: only the UDP checksum.
    pair.pass(&v6_udp(V6::new(), 1002, b"v6!"));
    let p = v6_udp(V6::new(), 1002, b"v6!!");
    let (kind, frame) = pair.pass(&p);
    assert_eq!(kind, FrameKind::CompressedNonTcp);
    assert_eq!(frame, cat(&[&[2, 0], &p[46..48], b"v6!!"]));
}

#[test]
fn context_state_format() {
    let mut out = Vec::new();
    assert_eq!(feedback::emit(&mut out, &[5, 9]), 2);
    assert_eq!(out, [3, 2, 5, 9]);
    assert_eq!(feedback::parse(&out), Some(&[5u8, 9][..]));
    // RFC 2508's RTP types and malformed counts are not TCP header requests.
    assert_eq!(feedback::parse(&[1, 1, 7, 0x80, 3]), None);
    assert_eq!(feedback::parse(&[3, 2, 5]), None);
    assert_eq!(feedback::parse(&[3]), None);
}

// ---------------------------------------------------------------------------------------------
// TCP behaviour: twice, its extension, header requests.

/// A bulk data stream: `n` segments of `size` octets (IPv4, Identification +1 per packet, or
/// IPv6), with timestamps that change every segment.
fn bulk(n: usize, size: usize, v6: bool) -> Vec<Vec<u8>> {
    bulk_ts(n, size, v6, 1)
}

/// [`bulk`] with timestamps that change every `ts_every` segments.
fn bulk_ts(n: usize, size: usize, v6: bool, ts_every: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let t = Tcp::new(1_000_000 + (i * size) as u32, 7000)
                .timestamps(100 + (i / ts_every) as u32, 55)
                .payload(size);
            if v6 {
                v6_tcp(V6::new(), &t)
            } else {
                v4_tcp(V4::new(500 + i as u16), &t)
            }
        })
        .collect()
}

/// Compresses every packet, drops the frames at `lost`, decompresses the rest; returns the
/// decompressor's result per packet (`None` for a lost frame).
fn run_lossy(
    pair: &mut Pair,
    packets: &[Vec<u8>],
    lost: &[usize],
) -> Vec<Option<Result<(), DropReason>>> {
    packets
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (kind, frame) = pair.send(p);
            if lost.contains(&i) {
                return None;
            }
            Some(pair.recv(kind, &frame).map(|out| {
                assert_eq!(&out, p, "packet {i} delivered wrong");
            }))
        })
        .collect()
}

#[test]
fn twice_repairs_a_single_lost_segment_of_a_bulk_stream() {
    for v6 in [false, true] {
        let packets = bulk(20, 1000, v6);
        let mut pair = Pair::new(IphcConfig::default());
        let results = run_lossy(&mut pair, &packets, &[10]);
        for (i, r) in results.iter().enumerate() {
            if i != 10 {
                assert_eq!(*r, Some(Ok(())), "v6 {v6} packet {i}");
            }
        }
        // Without twice, the context stays wrong until a full header.
        let config = IphcConfig {
            twice: false,
            header_requests: false,
            ..IphcConfig::default()
        };
        let results = run_lossy(&mut Pair::new(config), &packets, &[10]);
        assert_eq!(results[11], Some(Err(DropReason::ChecksumMismatch)));
        assert_eq!(results[19], Some(Err(DropReason::ChecksumMismatch)));
    }
}

#[test]
fn twice_cannot_restore_options_the_next_packet_does_not_resend() {
    // Timestamps change every other segment. Segment 10 changes them and is lost; segment 11
    // has the same timestamps, so it carries no options (O is set only on a change from the
    // previous header): no guess of the deltas restores them.
    let packets = bulk_ts(20, 1000, true, 2);
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[10]);
    assert_eq!(results[11], Some(Err(DropReason::ChecksumMismatch)));
    // Losing segment 11 instead (no options change) is repaired.
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[11]);
    assert_eq!(results[12], Some(Ok(())));
}

#[test]
fn segment_multiples_repair_a_burst_of_lost_data_segments() {
    // Two segments lost in a row: twice (one more delta) is short by a segment, k = 2 segment
    // sizes is right, and with IPv4 it also fixes the Identification (two lost packets).
    let packets = bulk(20, 1000, false);
    let no_multiples = IphcConfig {
        twice_segment_multiples: false,
        header_requests: false,
        ..IphcConfig::default()
    };
    let results = run_lossy(&mut Pair::new(no_multiples.clone()), &packets, &[8, 9]);
    assert_eq!(results[10], Some(Err(DropReason::ChecksumMismatch)));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[8, 9]);
    for (i, r) in results.iter().enumerate() {
        if i != 8 && i != 9 {
            assert_eq!(*r, Some(Ok(())), "packet {i}");
        }
    }
    // A short segment (300 octets, the end of an application write) then a full one that is
    // lost: the next header says "sequence advanced by the previous payload" (SPECIAL_D), which
    // the decompressor reads as 300. Twice (600) fails; 300 + one segment size repairs it.
    let mut packets = Vec::new();
    let mut seq = 1_000_000u32;
    for i in 0..14u16 {
        let size = if i == 8 { 300 } else { 1000 };
        let t = Tcp::new(seq, 7000).payload(size);
        packets.push(v4_tcp(V4::new(i), &t));
        seq += size as u32;
    }
    let results = run_lossy(&mut Pair::new(no_multiples.clone()), &packets, &[9]);
    assert_eq!(results[10], Some(Err(DropReason::ChecksumMismatch)));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[9]);
    assert!(results.iter().flatten().all(|r| r.is_ok()), "{results:?}");
}

/// An ACK stream: acknowledgments advancing by `deltas` (IPv6, or IPv4 with the given
/// Identification step).
fn acks(deltas: &[u32], ip: Option<u16>) -> Vec<Vec<u8>> {
    let mut ack = 50_000u32;
    deltas
        .iter()
        .enumerate()
        .map(|(i, d)| {
            ack += d;
            let t = Tcp::new(9000, ack);
            match ip {
                None => v6_tcp(V6::new(), &t),
                Some(step) => v4_tcp(V4::new(300u16.wrapping_add(step * i as u16)), &t),
            }
        })
        .collect()
}

#[test]
fn segment_multiples_repair_a_lost_stretch_ack() {
    // ACKs of 2 and 1 segments (1000 octets each); the lost one acknowledges 3 segments.
    let deltas = [2000, 2000, 1000, 2000, 2000, 3000, 2000, 2000];
    let packets = acks(&deltas, None);
    let no_multiples = IphcConfig {
        twice_segment_multiples: false,
        header_requests: false,
        ..IphcConfig::default()
    };
    let results = run_lossy(&mut Pair::new(no_multiples), &packets, &[5]);
    assert_eq!(results[6], Some(Err(DropReason::ChecksumMismatch)));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[5]);
    assert_eq!(results[6], Some(Ok(())));
    assert_eq!(results[7], Some(Ok(())));

    // IPv4 with a constant Identification: the same repair.
    let results = run_lossy(
        &mut Pair::new(IphcConfig::default()),
        &acks(&deltas, Some(0)),
        &[5],
    );
    assert_eq!(results[6], Some(Ok(())));

    // IPv4 with an Identification that counts packets: how many ACKs a stretch of segments
    // took is unknown, so the multiples are not tried and the context waits for a full header.
    let counting = acks(&deltas, Some(1));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &counting, &[5]);
    assert_eq!(results[6], Some(Err(DropReason::ChecksumMismatch)));
    // Twice is (one lost ACK: the Identification advanced by one more).
    let even = acks(&[2000; 12], Some(1));
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &even, &[6]);
    assert!(results.iter().flatten().all(|r| r.is_ok()), "{results:?}");
}

#[test]
fn twice_fails_where_it_must_and_a_header_request_repairs_the_context() {
    // Segments of 1000 octets, but the lost one holds 700: neither twice nor multiples of 1000
    // give the right sequence number.
    let mut packets = Vec::new();
    let mut seq = 1_000_000u32;
    for i in 0..60u16 {
        let size = if i == 5 { 700 } else { 1000 };
        let t = Tcp::new(seq, 7000).payload(size);
        packets.push(v4_tcp(V4::new(40 + i), &t));
        seq += size as u32;
    }
    let mut pair = Pair::new(IphcConfig::default());
    for p in &packets[..5] {
        pair.pass(p);
    }
    let _ = pair.send(&packets[5]); // lost
    let (kind, frame) = pair.send(&packets[6]);
    assert_eq!(kind, FrameKind::CompressedTcp);
    assert_eq!(pair.recv(kind, &frame), Err(DropReason::ChecksumMismatch));
    // One CONTEXT_STATE for CID 0; the compressor is not told yet (the reverse link is slow).
    let mut fb = Vec::new();
    assert!(pair.d.take_feedback(&mut fb));
    assert_eq!(fb, [3, 1, 0]);
    assert!(!pair.d.take_feedback(&mut fb));
    // The context stays damaged: dropped without guesses, and not requested again for the next
    // 15 drops; the 16th repeats the request (the first was maybe lost).
    for (n, p) in packets[7..23].iter().enumerate() {
        let (kind, frame) = pair.send(p);
        assert_eq!(pair.recv(kind, &frame), Err(DropReason::ChecksumMismatch));
        let requested = pair.d.take_feedback(&mut fb);
        assert_eq!(requested, n == 15, "drop {n}");
    }
    // The request reaches the compressor: the next packet is a FULL_HEADER, which repairs.
    pair.c.handle_feedback(&fb);
    let (kind, _) = pair.pass(&packets[23]);
    assert_eq!(kind, FrameKind::FullHeader);
    for p in &packets[24..] {
        assert_eq!(pair.pass(p).0, FrameKind::CompressedTcp);
    }
    assert!(!pair.d.take_feedback(&mut fb));

    // Without header requests, nothing is ever asked.
    let config = IphcConfig {
        header_requests: false,
        ..IphcConfig::default()
    };
    let results = run_lossy(&mut Pair::new(config.clone()), &packets, &[5]);
    assert_eq!(results[6], Some(Err(DropReason::ChecksumMismatch)));
    let mut pair = Pair::new(config);
    run_lossy(&mut pair, &packets, &[5]);
    assert_eq!(pair.feedback(), None);
}

/// A sender in timeout backoff sends a packet per timeout: with a clock, a damaged context is
/// requested again on the first drop half a second after the last request.
#[test]
fn an_unanswered_header_request_is_repeated_after_a_while() {
    let packets = bulk(20, 500, true);
    let mut pair = Pair::new(IphcConfig::default());
    let _ = pair.send(&packets[0]); // lost: NoContext from here on
    let mut asked = Vec::new();
    for (i, p) in packets[1..].iter().enumerate() {
        // Packets 200 ms apart.
        pair.d
            .set_time(core::time::Duration::from_millis(200 * i as u64));
        let (kind, frame) = pair.send(p);
        assert_eq!(pair.recv(kind, &frame), Err(DropReason::NoContext));
        let mut fb = Vec::new();
        if pair.d.take_feedback(&mut fb) {
            asked.push(i);
        }
    }
    // The first drop, then every third (600 ms >= 500 ms), long before 16 drops.
    assert_eq!(asked, [0, 3, 6, 9, 12, 15, 18]);
}

#[test]
fn header_requests_back_off_and_cover_missing_contexts() {
    let packets = bulk(200, 500, true);
    let mut pair = Pair::new(IphcConfig::default());
    // The FULL_HEADER that sets the context is lost: NoContext, and a request.
    let _ = pair.send(&packets[0]);
    let mut asked = Vec::new();
    for (i, p) in packets[1..].iter().enumerate() {
        let (kind, frame) = pair.send(p);
        assert_eq!(pair.recv(kind, &frame), Err(DropReason::NoContext));
        let mut fb = Vec::new();
        if pair.d.take_feedback(&mut fb) {
            assert_eq!(fb, [3, 1, 0]);
            asked.push(i);
        }
    }
    // Requests after drops 0, 16, 16+32, 16+32+64, …
    assert_eq!(asked, [0, 16, 48, 112]);
    // A request for a CID the compressor does not use, or a malformed one, changes nothing.
    pair.c.handle_feedback(&[3, 1, 9]);
    pair.c.handle_feedback(&[3, 5, 0]);
    pair.c.handle_feedback(&[1, 1, 0, 0x80, 0]);
    assert_eq!(
        pair.send(&bulk(201, 500, true)[200]).0,
        FrameKind::CompressedTcp
    );
    pair.c.handle_feedback(&[3, 1, 0]);
    assert_eq!(
        pair.pass(&bulk(202, 500, true)[201]).0,
        FrameKind::FullHeader
    );
}

#[test]
fn a_lost_change_of_an_ip_field_never_leaves_a_wrong_context() {
    // The TTL is not covered by the TCP checksum: a FULL_HEADER changing it moves the stream to
    // another CID, so losing it cannot make the decompressor rebuild the old TTL.
    let mut pair = Pair::new(IphcConfig::default());
    let packets = bulk(6, 1000, false);
    for p in &packets[..3] {
        pair.pass(p);
    }
    let with_ttl = |p: &[u8], ttl: u8| {
        let mut p = p.to_vec();
        p[8] = ttl;
        p[10..12].copy_from_slice(&[0, 0]);
        let sum = Sum::new().add_bytes(&p[..20]).checksum();
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p
    };
    let (kind, frame) = pair.send(&with_ttl(&packets[3], 50));
    assert_eq!(kind, FrameKind::FullHeader);
    assert_eq!(frame[3], 1, "moved to CID 1");
    // Lost. The next packet names CID 1, which has no context.
    let (kind, frame) = pair.send(&with_ttl(&packets[4], 50));
    assert_eq!((kind, frame[0]), (FrameKind::CompressedTcp, 1));
    assert_eq!(pair.recv(kind, &frame), Err(DropReason::NoContext));
    // ECN changes go in R-octets; a full header that would change the context's ECN moves too.
    let mut pair = Pair::new(IphcConfig::default());
    pair.pass(&packets[0]);
    let mut ce = v4_tcp(
        V4 {
            tos: 3,
            ..V4::new(501)
        },
        &Tcp::new(1_000_000, 7000).timestamps(100, 55).payload(1000),
    );
    let _ = &mut ce;
    let (kind, frame) = pair.pass(&ce);
    assert_eq!(
        (kind, frame[3]),
        (FrameKind::FullHeader, 1),
        "retransmission with CE"
    );
}

#[test]
fn a_lost_packet_that_changes_only_the_ip_id_is_never_invisible() {
    // Duplicate ACKs change nothing the TCP checksum covers, only the IPv4 Identification. The
    // packet after one goes as NODELTA (the Identification whole), so losing a duplicate ACK
    // cannot shift the Identification of what follows.
    let deltas = [1000, 1000, 0, 0, 0, 1000, 1000];
    let packets = acks(&deltas, Some(1));
    let mut pair = Pair::new(no_guesses());
    let kinds: Vec<FrameKind> = packets.iter().map(|p| pair.pass(p).0).collect();
    use FrameKind::*;
    assert_eq!(
        kinds,
        [
            FullHeader,
            CompressedTcp,
            CompressedTcp,
            CompressedTcpNoDelta,
            CompressedTcpNoDelta,
            CompressedTcpNoDelta,
            CompressedTcp
        ]
    );
    for lost in 2..5 {
        let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[lost]);
        assert!(
            results.iter().flatten().all(|r| r.is_ok()),
            "lost {lost}: {results:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Non-TCP behaviour: slow-start, refreshes, generations.

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

// ---------------------------------------------------------------------------------------------
// Nested IP headers and IPv6 extension headers.

#[test]
fn ipv4_in_ipv6_and_ipv6_in_ipv4_round_trip() {
    let mut pair = Pair::new(IphcConfig::default());
    let outer6 = V6 {
        src: C6,
        dst: D6,
        ..V6::new()
    };
    let outer4 = V4 {
        src: C4,
        dst: D4,
        ..V4::new(0)
    };
    let mut seq = 1000;
    for i in 0..12u16 {
        let t = Tcp::new(seq, 88).timestamps(u32::from(i), 3).payload(512);
        seq += 512;
        // IPv4/TCP in IPv6: the inner Identification is DELTA (it precedes TCP at once).
        let p = outer6.wrap(4, &v4_tcp(V4::new(i), &t));
        let (kind, frame) = pair.pass(&p);
        if i > 0 {
            assert_eq!(kind, FrameKind::CompressedTcp);
            // CID, mask (SPECIAL_D | O), checksum, options.
            assert_eq!(frame.len(), 4 + 12 + 512, "{frame:02x?}");
        }
        // IPv6/TCP in IPv4: the outer Identification is RANDOM (2 octets every time).
        let mut t6 = t.clone();
        t6.sport = 5555;
        let p = V4 {
            id: 900 + i,
            ..outer4
        }
        .wrap(41, &v6_tcp(V6::new(), &t6));
        let (kind, frame) = pair.pass(&p);
        if i > 0 {
            assert_eq!(kind, FrameKind::CompressedTcp);
            assert_eq!(&frame[4..6], &(900 + i).to_be_bytes());
            assert_eq!(frame.len(), 6 + 12 + 512);
        }
        // UDP in both.
        let p = outer4.wrap(41, &v6_udp(V6::new(), 53, &[i as u8; 30]));
        pair.pass(&p);
        let p = outer6.wrap(4, &v4_udp(V4::new(i * 3), 53, &[i as u8; 30], true));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i.into()) {
            // Inner IPv4 Identification and UDP checksum are RANDOM.
            assert_eq!(
                (kind, frame.len()),
                (FrameKind::CompressedNonTcp, 2 + 4 + 30)
            );
        }
        // IPv4 in IPv4 too.
        let p = outer4.wrap(4, &v4_udp(V4::new(i), 54, &[1; 10], false));
        pair.pass(&p);
    }
    // A lost segment of the tunnelled stream is repaired like any other.
    let packets: Vec<Vec<u8>> = (0..10u16)
        .map(|i| {
            let t = Tcp::new(7000 + 512 * u32::from(i), 88).payload(512);
            outer6.wrap(4, &v4_tcp(V4::new(i), &t))
        })
        .collect();
    let results = run_lossy(&mut Pair::new(IphcConfig::default()), &packets, &[4]);
    assert!(results.iter().flatten().all(|r| r.is_ok()), "{results:?}");
}

/// An IPv6 extension header of `body` (which must make it a multiple of 8 octets long).
fn ext(next: u8, len_field: u8, body: &[u8]) -> Vec<u8> {
    let mut h = vec![next, len_field];
    h.extend_from_slice(body);
    h
}

#[test]
fn ipv6_extension_headers_round_trip() {
    let mut pair = Pair::new(IphcConfig::default());
    let ip = V6::new();
    for i in 0..6u8 {
        // Hop-by-Hop: Router Alert (data RANDOM) and PadN; Routing type 2 (all NOCHANGE);
        // Destination Options: PadN; AH: SPI then 16 octets of authentication data (RANDOM).
        let payload = [i; 25];
        let u = udp(&ip.src, &ip.dst, 4000, 4001, &payload, true);
        let mut ah = ext(UDP, 4, &[0, 0, 0, 0, 1, 0]);
        ah.extend_from_slice(&u32::from(i).to_be_bytes());
        ah.extend_from_slice(&[i; 12]);
        let dest = ext(51, 0, &[1, 4, 0, 0, 0, 0]);
        let mut routing = ext(60, 2, &[2, 1, 0, 0, 0, 0]);
        routing.extend_from_slice(&C6);
        let hbh = ext(43, 0, &[5, 2, 0, i, 1, 0]);
        let p = ip.wrap(0, &cat(&[&hbh, &routing, &dest, &ah, &u]));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i.into()) {
            assert_eq!(kind, FrameKind::CompressedNonTcp);
            // CID, generation; Router Alert value; AH data (16); UDP checksum; payload.
            assert_eq!(frame.len(), 2 + 2 + 16 + 2 + 25, "{frame:02x?}");
            assert_eq!(&frame[2..4], &[0, i]);
        }
        // TCP behind Hop-by-Hop and Destination Options.
        let t = Tcp::new(100 + 10 * u32::from(i), 7).payload(10);
        let dest = ext(TCP, 0, &[1, 4, 0, 0, 0, 0]);
        let hbh = ext(60, 0, &[5, 2, 0, i, 1, 0]);
        let p = ip.wrap(0, &cat(&[&hbh, &dest, &t.segment(&ip.src, &ip.dst)]));
        let (kind, frame) = pair.pass(&p);
        if i > 0 {
            assert_eq!(kind, FrameKind::CompressedTcp);
            assert_eq!(frame.len(), 4 + 2 + 10);
        }
        // Fragments: the chain ends at the Fragment header, whose offset, M and Identification
        // are RANDOM (6 octets).
        let frag = [UDP, 0, 0, 8 * i, 0, 0, 0, 42];
        let p = ip.wrap(44, &cat(&[&frag, &[i; 40]]));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i.into()) {
            assert_eq!(
                (kind, frame.len()),
                (FrameKind::CompressedNonTcp, 2 + 6 + 40)
            );
        }
        // ESP: only the SPI is compressed.
        let p = ip.wrap(50, &cat(&[&[0, 0, 1, 0], &[i; 30]]));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i.into()) {
            assert_eq!((kind, frame.len()), (FrameKind::CompressedNonTcp, 2 + 30));
        }
    }
}

#[test]
fn max_header_keeps_whole_subheaders_only() {
    // IPv6/IPv6/IPv6/TCP with 40 octets of options: 180 octets > MAX_HEADER (168). The chain
    // is the three IPv6 headers; TCP travels as payload of a non-TCP stream.
    let mut pair = Pair::new(IphcConfig::default());
    for i in 0..4u32 {
        let mut t = Tcp::new(i * 100, 5).payload(100);
        t.options = vec![1; 40];
        let inner = v6_tcp(V6::new(), &t);
        let p = V6::new().wrap(41, &V6::new().wrap(41, &inner));
        let (kind, frame) = pair.pass(&p);
        if !slow_start_full(i as usize) {
            assert_eq!(
                (kind, frame.len()),
                (FrameKind::CompressedNonTcp, 2 + 60 + 100)
            );
        }
    }
    // With MAX_HEADER 180 it is a TCP stream.
    let mut pair = Pair::new(IphcConfig {
        max_header: 180,
        ..IphcConfig::default()
    });
    for i in 0..4u32 {
        let mut t = Tcp::new(i * 100, 5).payload(100);
        t.options = vec![1; 40];
        let p = V6::new().wrap(41, &V6::new().wrap(41, &v6_tcp(V6::new(), &t)));
        let (kind, _) = pair.pass(&p);
        if i > 0 {
            assert_eq!(kind, FrameKind::CompressedTcp);
        }
    }
}

#[test]
fn what_cannot_be_compressed_exactly_goes_as_type_ip() {
    let mut pair = Pair::new(IphcConfig::default());
    let good = v4_tcp(V4::new(1), &Tcp::new(1, 2).payload(30));
    pair.pass(&good);
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    // IPv4 with options (section 7.13 b).
    let mut opts = good.clone();
    opts.splice(20..20, [1, 1, 1, 0]);
    opts[0] = 0x46;
    let len = opts.len() as u16;
    opts[2..4].copy_from_slice(&len.to_be_bytes());
    opts[10..12].copy_from_slice(&[0, 0]);
    let sum = Sum::new().add_bytes(&opts[..24]).checksum();
    opts[10..12].copy_from_slice(&sum.to_be_bytes());
    cases.push(("options", opts));
    // A fragment.
    let mut frag = v4_udp(V4::new(2), 9, &[0; 16], true);
    frag[6] = 0x20;
    frag[10..12].copy_from_slice(&[0, 0]);
    let sum = Sum::new().add_bytes(&frag[..20]).checksum();
    frag[10..12].copy_from_slice(&sum.to_be_bytes());
    cases.push(("fragment", frag));
    // Truncated by a snaplen, or padded.
    cases.push(("truncated", good[..good.len() - 5].to_vec()));
    cases.push(("padded", cat(&[&good, &[0, 0]])));
    // Wrong checksums: IPv4 header, TCP, UDP.
    let mut bad = good.clone();
    bad[8] ^= 1;
    cases.push(("ipv4 checksum", bad));
    let mut bad = good.clone();
    bad[50] ^= 1;
    cases.push(("tcp checksum", bad));
    let mut bad = v4_udp(V4::new(3), 9, &[7; 16], true);
    bad[30] ^= 1;
    cases.push(("udp checksum", bad));
    // A Jumbo Payload option, and things that are not IP at all.
    // (A jumbogram's Payload Length is 0; its length is in the option.)
    let mut jumbo = V6::new().wrap(0, &[UDP, 0, 0xC2, 4, 0, 0, 0, 48]);
    jumbo[4..6].copy_from_slice(&[0, 0]);
    cases.push(("jumbo", jumbo));
    cases.push(("empty", Vec::new()));
    cases.push(("garbage", vec![0x99; 50]));
    cases.push(("short v6", vec![0x60; 20]));
    for (what, p) in cases {
        assert_eq!(pair.pass(&p).0, FrameKind::Ip, "{what}");
    }
    // The stream is still compressed afterwards.
    let next = v4_tcp(V4::new(2), &Tcp::new(31, 2).payload(30));
    assert_eq!(pair.pass(&next).0, FrameKind::CompressedTcp);
}

#[test]
fn a_full_header_whose_packet_is_not_ip_makes_and_changes_no_context() {
    // The fuzzer's case: an IPv4/UDP full header whose first octet became 0x6d reads as an IPv6
    // header whose Next Header (the IPv4 flags octet, 0) names a Hop-by-Hop header longer than
    // the packet. The chain stops before it, so its length fields and checksums check out, but
    // the packet does not parse as IP (the extension header runs past its end), and compressed
    // headers against such a context rebuild packets that do not either.
    let mut pair = Pair::new(IphcConfig::default());
    let ip = V6::new();
    let good = |payload: &[u8]| v6_udp(ip, 1000, payload);
    pair.pass(&good(b"good"));
    // Hop-by-Hop: 14 * 8 = 112 octets announced, 32 present.
    let bad = ip.wrap(0, &cat(&[&[UDP, 13], &[0; 30]]));
    let mut layout = Layout::default();
    assert!(chain::parse(&bad, 168, &mut layout));
    assert_eq!((layout.len, layout.upper), (40, Some(0)));
    // The compressor sends such a packet as it is.
    assert_eq!(pair.send(&bad).0, FrameKind::Ip);
    // A full header of it is refused, whether its CID is free or holds a context.
    for cid in [0, 5] {
        let mut full = bad.clone();
        let id = FullId::NonTcp { cid, generation: 0 };
        assert!(full_header::write(&mut full, &layout, id));
        assert_eq!(
            pair.recv(FrameKind::FullHeader, &full),
            Err(DropReason::Malformed)
        );
    }
    assert_eq!(
        pair.recv(FrameKind::CompressedNonTcp, &[5, 0, 0, 8, 1, 2]),
        Err(DropReason::NoContext)
    );
    // CID 0 still holds the good stream.
    let (kind, _) = pair.pass(&good(b"next"));
    assert_eq!(kind, FrameKind::CompressedNonTcp);
}

// ---------------------------------------------------------------------------------------------
// The hand-built probe frames of shared/captures/local (tshark probes, not all RFC-exact).

/// The PPP frames (direction, protocol, payload) of a LINKTYPE_PPP_WITH_DIR pcap.
fn ppp_frames(data: &[u8]) -> Vec<(u8, u16, Vec<u8>)> {
    let le32 = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(le32(20), 204, "LINKTYPE_PPP_WITH_DIR");
    let mut at = 24;
    let mut frames = Vec::new();
    while at + 16 <= data.len() {
        let caplen = le32(at + 8);
        let r = &data[at + 16..at + 16 + caplen];
        assert_eq!(&r[1..3], &[0xff, 0x03]);
        frames.push((r[0], u16::from_be_bytes([r[3], r[4]]), r[5..].to_vec()));
        at += 16 + caplen;
    }
    frames
}

#[test]
fn probe_capture_full_header_cids_and_generations() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/captures/local/iphc_probe_ppp_withdir.pcap"
    );
    let Ok(data) = std::fs::read(path) else {
        std::eprintln!("notice: {path} absent; skipping");
        return;
    };
    let frames = ppp_frames(&data);
    assert_eq!(frames.len(), 7);
    // RFC 2509 protocol numbers: FULL_HEADER 0x0061, COMPRESSED_NON_TCP 0x0065,
    // CONTEXT_STATE 0x2065.
    let (tcp_full, udp_full, non_tcp) = (&frames[0].2, &frames[1].2, &frames[4].2);
    assert_eq!((frames[0].1, frames[1].1, frames[4].1), (0x61, 0x61, 0x65));
    let mut layout = Layout::default();
    assert!(chain::parse(tcp_full, 168, &mut layout));
    assert_eq!(
        full_header::read(tcp_full, &layout),
        Ok(FullId::Tcp { cid: 5 })
    );
    assert!(chain::parse(udp_full, 168, &mut layout));
    assert_eq!(
        full_header::read(udp_full, &layout),
        Ok(FullId::NonTcp {
            cid: 7,
            generation: 3
        })
    );
    // The probe's transport checksums are placeholders, which our decompressor refuses.
    let mut d = IphcDecompressor::new(IphcConfig::default());
    let mut out = Vec::new();
    for full in [tcp_full, udp_full] {
        assert_eq!(
            d.decompress(FrameKind::FullHeader, full, &mut out),
            Err(DropReason::Malformed)
        );
    }
    // With a real UDP checksum the two non-TCP frames are RFC 2507 exact: the full header sets
    // CID 7 generation 3, and the compressed one (CID 7, generation 3, then the RANDOM IPv4
    // Identification 0x1235 and UDP checksum) decompresses against it.
    assert_eq!(&non_tcp[..4], &[7, 3, 0x12, 0x35]);
    let mut packet = udp_full.clone();
    assert!(chain::fill_lengths(&mut packet, &layout));
    transport_checksum(&mut packet[20..], &A4, &B4, UDP, 6);
    let mut full = udp_full.clone();
    full[26..28].copy_from_slice(&packet[26..28]);
    assert_eq!(d.decompress(FrameKind::FullHeader, &full, &mut out), Ok(()));
    assert_eq!(out, packet);
    let mut second = packet.clone();
    second[4..6].copy_from_slice(&[0x12, 0x35]);
    second[10..12].copy_from_slice(&[0, 0]);
    let sum = Sum::new().add_bytes(&second[..20]).checksum();
    second[10..12].copy_from_slice(&sum.to_be_bytes());
    let mut compressed = non_tcp.clone();
    compressed[4..6].copy_from_slice(&packet[26..28]);
    assert_eq!(
        d.decompress(FrameKind::CompressedNonTcp, &compressed, &mut out),
        Ok(())
    );
    assert_eq!(out, second);
    // Its CONTEXT_STATE is RFC 2508's (type 1, RTP): not a TCP header request.
    assert_eq!(frames[5].1, 0x2065);
    assert_eq!(feedback::parse(&frames[5].2), None);
}

// ---------------------------------------------------------------------------------------------
// Property test: random flows through a clean link, a lossy link with feedback, and garbage.

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
