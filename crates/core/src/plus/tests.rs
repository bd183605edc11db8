//! Unit tests of the `taroc-plus` codec: round trips of the formats, and the decompressor's
//! refusals.

use alloc::vec;
use alloc::vec::Vec;

use taroc_wire::checksum::Sum;

use super::{PlusCompressor, PlusDecompressor};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::plus::PlusConfig;
use crate::tcp::repair::Repair;

mod bursts;
mod jumps;
mod kept;
mod lossy;
mod mirrors;
mod notes;
mod receipts;
mod restarts;
mod soak;
mod starts;
mod strides;
mod tunnel;
mod vectors;

fn config() -> PlusConfig {
    PlusConfig {
        repair: Repair::live(),
        ..PlusConfig::default()
    }
}

/// `taroc-plus-u`'s settings: every repair but context requests.
pub(super) fn one_way() -> PlusConfig {
    PlusConfig {
        repair: Repair {
            context_requests: false,
            ..Repair::live()
        },
        ..PlusConfig::default()
    }
}

/// A decompressor over a link that loses frames, watching its held packets: what came of each
/// frame that arrived, and whether a held packet went out late with it (checked to be the
/// packet held, as it was).
pub(super) struct Receiver {
    d: PlusDecompressor,
    out: Vec<u8>,
    late: Vec<u8>,
    held: Option<Vec<u8>>,
}

/// A frame held after a burst, then delivered with the held packet going out late, then one
/// more delivered: what a [`Receiver`] records of three frames after a burst decoded across.
pub(super) const HELD_THEN_LATE: [(Result<(), DropReason>, bool); 3] = [
    (Err(DropReason::Held), false),
    (Ok(()), true),
    (Ok(()), false),
];

impl Receiver {
    /// A receiver of a decompressor of `config`.
    pub(super) fn new(config: PlusConfig) -> Receiver {
        Receiver {
            d: PlusDecompressor::new(config),
            out: Vec::new(),
            late: Vec::new(),
            held: None,
        }
    }

    /// Decompresses `frame` (of `kind`), sent for packet `p`: its outcome (a delivered packet
    /// checked to be `p`), and whether a held packet went out late with it.
    pub(super) fn receive(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        p: &[u8],
    ) -> (Result<(), DropReason>, bool) {
        let r = self.d.decompress(kind, frame, &mut self.out);
        let went_late = self.d.take_late(&mut self.late).is_some();
        if went_late {
            assert_eq!(
                Some(&self.late),
                self.held.as_ref(),
                "a held packet goes out as it was"
            );
        }
        match r {
            Ok(()) => assert_eq!(self.out, p),
            Err(DropReason::Held) => self.held = Some(p.to_vec()),
            Err(_) => {}
        }
        (r, went_late)
    }
}

/// An IPv4/TCP segment with timestamps: `seq`, `ack`, IP-ID `id`, TS `ts`, `payload` bytes.
pub(super) fn segment(seq: u32, ack: u32, id: u16, ts: u32, payload: usize) -> Vec<u8> {
    let len = 52 + payload;
    let mut p = vec![0x45, 0, (len >> 8) as u8, len as u8];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x40, 0, 64, 6, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2]);
    p.extend_from_slice(&[0x13, 0x89, 0, 80]);
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ack.to_be_bytes());
    p.extend_from_slice(&[0x80, 0x10, 0x01, 0xf5, 0, 0, 0, 0]);
    p.extend_from_slice(&[1, 1, 8, 10]);
    p.extend_from_slice(&ts.to_be_bytes());
    p.extend_from_slice(&(ts / 2).to_be_bytes());
    p.extend((0..payload).map(|i| (i * 7 + seq as usize) as u8));
    fill_checksums(&mut p);
    p
}

/// A reference receipt (the sibling note a decompressor passes on) naming `packet` as the far
/// end's reference, its acknowledgment number moved by `ack_moved` (0: the packet itself;
/// else a packet no window holds).
pub(super) fn receipt_naming(packet: &[u8], ack_moved: u32) -> Vec<u8> {
    let p = crate::tcp::packet::TcpIpPacket::parse(packet).expect("a valid packet");
    let n = crate::plus::numbers::Numbers::of(&p);
    let hash = crate::plus::mirror::flow_hash(&p.key);
    let ack = n.ack.wrapping_add(ack_moved);
    let receipt = crate::plus::mirror::Note::Referenced(hash, n.checksum, n.next_seq, ack);
    let mut note = Vec::new();
    crate::plus::mirror::put_note(&receipt, &mut note);
    note
}

/// Fills in the IPv4 header checksum and the TCP checksum of `p` (IPv4 without options, TCP,
/// both checksum fields zero).
pub(super) fn fill_checksums(p: &mut [u8]) {
    let ip = Sum::new().add_bytes(&p[..20]).checksum();
    p[10..12].copy_from_slice(&ip.to_be_bytes());
    let tcp = Sum::new()
        .add_bytes(&p[12..20])
        .add_u16(6)
        .add_u16((p.len() - 20) as u16)
        .add_bytes(&p[20..])
        .checksum();
    p[36..38].copy_from_slice(&tcp.to_be_bytes());
}

#[test]
fn bulk_round_trips_and_shrinks() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut sizes = Vec::new();
    for i in 0..200u32 {
        let p = segment(1000 + 1448 * i, 77, 500 + i as u16, 10_000 + i / 4, 1448);
        let kind = c.compress(&p, &mut frame);
        let r = d.decompress(kind, &frame, &mut out);
        assert_eq!(r, Ok(()), "packet {i}: {kind:?} {frame:02x?}");
        assert_eq!(out, p, "packet {i}");
        sizes.push(frame.len() + 1 - 1448);
    }
    // Scaled sequence, IP-ID offset unchanged, timestamps: a few bytes.
    assert!(sizes[150..].iter().all(|&n| n <= 7), "{:?}", &sizes[150..]);
}

/// The bits that pad a CO frame's bit field to its octet are bits of the field hash
/// (specification section 5.8): a frame whose padding differs is refused, as one whose checksum
/// fails, so that a header rebuilt wrong whose seal matches still fails but for a 2^-p chance.
/// Flipping the last bit of each CO frame's bit field (a padding bit, or a field's LSB) never
/// gets a packet delivered; without the padding's check, the frames with padding would be.
#[test]
fn a_co_frame_whose_padding_differs_is_refused() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut probed = 0;
    for i in 0..200u32 {
        let p = segment(1000 + 1448 * i, 77, 500 + i as u16, 10_000 + i / 4, 1448);
        let kind = c.compress(&p, &mut frame);
        if matches!(kind, FrameKind::Profile(k) if k >= super::format::CO) {
            // No R-octet or urgent pointer: the bit field ends where the payload begins.
            let mut flipped = frame.clone();
            flipped[frame.len() - 1448 - 1] ^= 1;
            let refused = d.clone().decompress(kind, &flipped, &mut out);
            assert_eq!(refused, Err(DropReason::ChecksumMismatch), "packet {i}");
            probed += 1;
        }
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "packet {i}");
        assert_eq!(out, p, "packet {i}");
    }
    assert!(probed > 150, "{probed}");
}

/// A segment whose TCP checksum is wrong (a corrupt one, or one a capture cut short and
/// zero-filled) is not compressed in its flow's TCP context, whose CO frames the decompressor
/// checks with that checksum and would refuse: it is carried whole and delivered as it came,
/// and the flow's intact segments around it still round-trip. The compressor's check of its
/// input's checksum (a pass over the payload) is what keeps such packets deliverable.
#[test]
fn a_segment_with_a_wrong_checksum_is_delivered_as_it_came() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut corrupt_sent = 0;
    for i in 0..200u32 {
        let mut p = segment(1000 + 1448 * i, 77, 500 + i as u16, 10_000 + i / 4, 1448);
        let corrupt = i > 20 && i % 7 == 0;
        if corrupt {
            p[100 + i as usize] ^= 0x10;
        }
        let kind = c.compress(&p, &mut frame);
        let r = d.decompress(kind, &frame, &mut out);
        assert_eq!(r, Ok(()), "packet {i}: {kind:?}");
        assert_eq!(out, p, "packet {i}");
        if corrupt {
            assert!(
                !matches!(kind, FrameKind::Profile(k) if k >= super::format::CO),
                "packet {i}: {kind:?}"
            );
            corrupt_sent += 1;
        }
    }
    assert_eq!(corrupt_sent, 26);
}

/// An interactive flow (small writes, no stride): the echo follows the peer's think time, and
/// its window spans seconds of timestamps, which the codes of a context without a stride
/// ([`super::format::UNSTRIDED_CODES`]) carry in fewer bytes than a bulk flow's would.
#[test]
fn interactive_round_trips_with_the_unstrided_codes() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let (mut seq, mut ack) = (1000u32, 5000u32);
    let mut sizes = Vec::new();
    for i in 0..80u32 {
        let payload = 1 + (i * 37 % 80) as usize;
        let ts = 10_000 + 150 * i + i * i % 97;
        let mut p = segment(seq, ack, 300 + i as u16, ts, payload);
        let ecr = 4_000 + 150 * i - i * 53 % 700;
        p[48..52].copy_from_slice(&ecr.to_be_bytes());
        p[10..12].fill(0);
        p[36..38].fill(0);
        fill_checksums(&mut p);
        let kind = c.compress(&p, &mut frame);
        let r = d.decompress(kind, &frame, &mut out);
        assert_eq!(r, Ok(()), "packet {i}: {kind:?} {frame:02x?}");
        assert_eq!(out, p, "packet {i}");
        sizes.push(frame.len() + 1 - payload);
        seq += payload as u32;
        ack += i % 3;
    }
    // Kind, checksum, then 10 bits of sequence, 10 of ack, 8 of IP-ID, 14 of TS value and 10 or
    // 14 of echo in six octets (a bulk flow's codes need seven for most of these).
    assert!(sizes[40..].iter().all(|&n| n <= 10), "{:?}", &sizes[40..]);
}

#[test]
fn refusals_never_panic_or_deliver() {
    let mut d = PlusDecompressor::new(config());
    let mut out = Vec::new();
    assert_eq!(
        d.decompress(FrameKind::Profile(0x40), &[0, 0, 0], &mut out),
        Err(DropReason::NoContext)
    );
    assert_eq!(
        d.decompress(FrameKind::Profile(0x08), &[0x45, 0], &mut out),
        Err(DropReason::Malformed)
    );
    assert_eq!(
        d.decompress(FrameKind::Profile(0x0E), &[], &mut out),
        Err(DropReason::Malformed)
    );
    assert_eq!(
        d.decompress(FrameKind::Profile(0x0F), &[], &mut out),
        Err(DropReason::Malformed)
    );
    assert_eq!(
        d.decompress(FrameKind::Profile(0x07), &[], &mut out),
        Err(DropReason::UnknownKind)
    );
    assert_eq!(
        d.decompress(FrameKind::Profile(0x20), &[0x10, 0, 0], &mut out),
        Err(DropReason::NoContext)
    );
    assert!(out.is_empty());
}

/// An IPv6/TCP segment without options from 2001:db8::1 port `port`.
pub(super) fn segment_v6(port: u16, seq: u32, ack: u32, payload: usize) -> Vec<u8> {
    let len = 20 + payload;
    let mut p = vec![0x60, 0, 0, 0, (len >> 8) as u8, len as u8, 6, 64];
    p.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    p.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    p.extend_from_slice(&port.to_be_bytes());
    p.extend_from_slice(&[0x01, 0xbb]);
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ack.to_be_bytes());
    p.extend_from_slice(&[0x50, 0x18, 0x04, 0x00, 0, 0, 0, 0]);
    p.extend((0..payload).map(|i| (i as u8).wrapping_mul(3)));
    let tcp = Sum::new()
        .add_bytes(&p[8..40])
        .add_u16(6)
        .add_u16(len as u16)
        .add_bytes(&p[40..])
        .checksum();
    p[56..58].copy_from_slice(&tcp.to_be_bytes());
    p
}

/// A TCP SYN over IPv4 with Linux's options (MSS 1460, SACK permitted, timestamps with echo 0,
/// window scale 7), IP-ID `id`, ports `ports` (source then destination), initial sequence
/// number `isn` and timestamp `ts`, both checksums filled in.
pub(super) fn linux_syn(
    id: u16,
    src: [u8; 4],
    dst: [u8; 4],
    ports: [u8; 4],
    isn: u32,
    ts: u32,
) -> Vec<u8> {
    let mut syn = vec![0x45, 0, 0, 60];
    syn.extend_from_slice(&id.to_be_bytes());
    syn.extend_from_slice(&[0x40, 0, 64, 6, 0, 0]);
    syn.extend_from_slice(&src);
    syn.extend_from_slice(&dst);
    syn.extend_from_slice(&ports);
    syn.extend_from_slice(&isn.to_be_bytes());
    syn.extend_from_slice(&[0, 0, 0, 0, 0xa0, 0x02, 0xfa, 0xf0, 0, 0, 0, 0]);
    syn.extend_from_slice(&[2, 4, 5, 0xb4, 4, 2, 8, 10]);
    syn.extend_from_slice(&ts.to_be_bytes());
    syn.extend_from_slice(&[0, 0, 0, 0, 1, 3, 3, 7]);
    let sum = taroc_wire::checksum::checksum(&syn[..20]);
    syn[10..12].copy_from_slice(&sum.to_be_bytes());
    fix_tcp_checksum(&mut syn);
    syn
}

pub(super) fn fix_tcp_checksum(p: &mut [u8]) {
    p[36..38].fill(0);
    let tcp = Sum::new()
        .add_bytes(&p[12..20])
        .add_u16(6)
        .add_u16((p.len() - 20) as u16)
        .add_bytes(&p[20..])
        .checksum();
    p[36..38].copy_from_slice(&tcp.to_be_bytes());
}

pub(super) fn hex(bytes: &[u8]) -> alloc::string::String {
    bytes.iter().map(|b| alloc::format!("{b:02x}")).collect()
}

pub(super) fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// `segment` from source port `port`.
fn segment_from(port: u16, seq: u32, id: u16, ts: u32) -> Vec<u8> {
    let mut p = segment(seq, 77, id, ts, 256);
    p[20..22].copy_from_slice(&port.to_be_bytes());
    p[10..12].fill(0);
    p[36..38].fill(0);
    fill_checksums(&mut p);
    p
}

/// Compresses and decompresses packet `i` of the bulk flow from source port `port` (see
/// [`segment_from`]), checks the round trip and returns the frame's kind byte.
fn send(
    c: &mut PlusCompressor,
    d: &mut PlusDecompressor,
    port: u16,
    i: u32,
    frame: &mut Vec<u8>,
) -> u8 {
    let p = segment_from(port, 1000 + 256 * i, i as u16, 10_000 + i);
    let kind = c.compress(&p, frame);
    let mut out = Vec::new();
    assert_eq!(
        d.decompress(kind, frame, &mut out),
        Ok(()),
        "port {port}, packet {i}"
    );
    assert_eq!(out, p);
    kind.to_byte()
}

/// A fresh compressor and decompressor with the tests' settings.
fn pair() -> (PlusCompressor, PlusDecompressor) {
    (
        PlusCompressor::new(config()),
        PlusDecompressor::new(config()),
    )
}

/// [`send`] for packets `range` of the flow from `port`: their frames' kind bytes.
fn sends(
    c: &mut PlusCompressor,
    d: &mut PlusDecompressor,
    port: u16,
    range: core::ops::Range<u32>,
) -> Vec<u8> {
    let mut frame = Vec::new();
    range.map(|i| send(c, d, port, i, &mut frame)).collect()
}

/// The base CID of a new flow's first frame (an IR-R of kind `0x0D`; CID 2).
fn base_of_a_new_flow(c: &mut PlusCompressor, d: &mut PlusDecompressor) -> u8 {
    let mut frame = Vec::new();
    assert_eq!(
        send(c, d, 5003, 0, &mut frame),
        super::format::IR_R_DEST_KEPT
    );
    assert_eq!(frame[1], 2);
    frame[2]
}

/// Whether every kind byte of `kinds` is a CO frame's.
fn all_co(kinds: &[u8]) -> bool {
    let full = super::format::IR..=super::format::COMPACT_SYN;
    kinds.iter().all(|k| !full.contains(k))
}

/// The DNS-like UDP datagram of the test vectors, IP-ID `id`.
pub(super) fn dns(id: u16) -> Vec<u8> {
    let mut p = vec![0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 17, 0, 0];
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2, 0x9c, 0x40, 0, 53, 0, 20, 0, 0]);
    p.extend_from_slice(&[0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    let sum = taroc_wire::checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p
}

/// A replicated IR-N refused for a base the decompressor lacks asks for the context it sets up:
/// the answer goes whole.
#[test]
fn a_refused_replica_asks_for_its_context() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out, mut feedback) = (Vec::new(), Vec::new(), Vec::new());
    // Flow A's start is lost whole; its CO-N frames come after.
    for id in 0..4 {
        c.compress(&dns(id), &mut frame);
    }
    // Flow B (another source port) starts as a replica of A, which the decompressor lacks.
    let b = |id: u16| {
        let mut p = dns(id);
        p[21] = 0x41;
        p
    };
    let kind = c.compress(&b(4), &mut frame);
    assert_eq!(kind, FrameKind::Profile(super::other::IR_N));
    assert!(super::other::is_replica(&frame));
    let cid = frame[2];
    assert_eq!(
        d.decompress(kind, &frame, &mut out),
        Err(DropReason::NoContext)
    );
    assert!(d.take_feedback(&mut feedback));
    assert_eq!(feedback, [super::other::REQUEST_N, cid]);
    // The answer: B's next packet is a whole IR-N, which sets B up.
    c.handle_feedback(&feedback);
    let kind = c.compress(&b(5), &mut frame);
    assert_eq!(kind, FrameKind::Profile(super::other::IR_N));
    assert!(!super::other::is_replica(&frame));
    assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
    assert_eq!(out, b(5));
}

#[test]
fn a_non_tcp_context_whose_ir_ns_were_lost_is_requested_and_repaired() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out, mut feedback) = (Vec::new(), Vec::new(), Vec::new());
    // Both IR-Ns are lost: the CO-N after them is refused, and the refusal asks for CID 0.
    for id in 0..super::other::START_IRS_ASKING {
        assert_eq!(
            c.compress(&dns(u16::from(id)), &mut frame),
            FrameKind::Profile(super::other::IR_N)
        );
    }
    let kind = c.compress(&dns(10), &mut frame);
    assert_eq!(
        d.decompress(kind, &frame, &mut out),
        Err(DropReason::NoContext)
    );
    assert!(d.take_feedback(&mut feedback));
    assert_eq!(feedback, [super::other::REQUEST_N, 0]);
    // Its copies, then nothing.
    for _ in 0..super::decompressor::REQUEST_REPEATS {
        assert!(d.take_feedback(&mut feedback));
        assert_eq!(feedback, [super::other::REQUEST_N, 0]);
    }
    assert!(!d.take_feedback(&mut feedback));
    // The answer: the context's next packets go IR-N again, then CO-N decodes.
    c.handle_feedback(&feedback);
    for id in 11..14 {
        let p = dns(id);
        let kind = c.compress(&p, &mut frame);
        assert_eq!(
            kind == FrameKind::Profile(super::other::IR_N),
            id < 11 + u16::from(super::other::START_IRS),
            "IP-ID {id}"
        );
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()));
        assert_eq!(out, p);
    }
    // Without the reverse channel's repairs, nothing asks.
    let plain = PlusConfig::default();
    let (mut c, mut d) = (
        PlusCompressor::new(plain.clone()),
        PlusDecompressor::new(plain),
    );
    for id in 0..3 {
        c.compress(&dns(id), &mut frame);
    }
    let kind = c.compress(&dns(3), &mut frame);
    assert!(d.decompress(kind, &frame, &mut out).is_err());
    assert!(!d.take_feedback(&mut feedback));
}

/// A context request is answered with five full IRs ([`super::compressor`]'s `ANSWER_IRS`),
/// then CO frames again.
#[test]
fn a_context_request_is_answered_by_five_full_irs() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut kinds = Vec::new();
    for i in 0..14u32 {
        if i == 6 {
            c.handle_feedback(&[crate::tcp::repair::REQUEST, 0]);
        }
        let p = segment(1000 + 256 * i, 77, 500 + i as u16, 10_000 + i, 256);
        let kind = c.compress(&p, &mut frame);
        assert_eq!(d.decompress(kind, &frame, &mut out), Ok(()), "packet {i}");
        assert_eq!(out, p);
        kinds.push(kind.to_byte());
    }
    assert!(
        kinds[4..6].iter().all(|&k| k >= super::format::CO),
        "{kinds:02x?}"
    );
    assert_eq!(kinds[6..11], [super::format::COMPACT_IR; 5], "{kinds:02x?}");
    assert!(
        kinds[11..].iter().all(|&k| k >= super::format::CO),
        "{kinds:02x?}"
    );
}

#[test]
fn ir_r_refuses_both_stride_flags_and_a_missing_base() {
    let mut d = PlusDecompressor::new(config());
    let mut out = Vec::new();
    let flags = super::format::ir::BASE_STRIDES | super::format::ir::STRIDES;
    assert_eq!(
        d.decompress(
            FrameKind::Profile(super::format::IR_R),
            &[flags, 1, 0, 0],
            &mut out
        ),
        Err(DropReason::Malformed)
    );
    assert_eq!(
        d.decompress(
            FrameKind::Profile(super::format::IR_R),
            &[
                super::format::ir::BASE_IP,
                1,
                0,
                0x13,
                0x88,
                0,
                80,
                0x40,
                0,
                0
            ],
            &mut out
        ),
        Err(DropReason::NoContext)
    );
    // Cut short, it is malformed whatever the base.
    assert_eq!(
        d.decompress(
            FrameKind::Profile(super::format::IR_R),
            &[super::format::ir::BASE_IP, 1, 0, 0],
            &mut out
        ),
        Err(DropReason::Malformed)
    );
    assert!(out.is_empty());
}

/// A pure IPv4 ACK with timestamps, window `win` and SACK `blocks` (NOP NOP SACK).
pub(super) fn pure_ack(ack: u32, id: u16, ts: u32, win: u16, blocks: &[(u32, u32)]) -> Vec<u8> {
    let tcp_len = 32
        + if blocks.is_empty() {
            0
        } else {
            4 + 8 * blocks.len()
        };
    let len = 20 + tcp_len;
    let mut p = vec![0x45, 0, 0, len as u8];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x40, 0, 64, 6, 0, 0, 198, 18, 0, 2, 198, 18, 0, 1]);
    p.extend_from_slice(&[0, 80, 0x13, 0x89, 0, 0, 0, 77]);
    p.extend_from_slice(&ack.to_be_bytes());
    p.extend_from_slice(&[((tcp_len / 4) << 4) as u8, 0x10]);
    p.extend_from_slice(&win.to_be_bytes());
    p.extend_from_slice(&[0, 0, 0, 0, 1, 1, 8, 10]);
    p.extend_from_slice(&ts.to_be_bytes());
    p.extend_from_slice(&(ts - 40).to_be_bytes());
    if !blocks.is_empty() {
        p.extend_from_slice(&[1, 1, 5, (2 + 8 * blocks.len()) as u8]);
        for (left, right) in blocks {
            p.extend_from_slice(&left.to_be_bytes());
            p.extend_from_slice(&right.to_be_bytes());
        }
    }
    fill_checksums(&mut p);
    p
}

/// Pure ACKs whose window grows by small steps and that carry SACK blocks of a segment or two
/// round trip, and cost few bytes: the window's LSBs ride in a short extension, a SACK block
/// of one segment one segment above the ACK costs a few bits.
#[test]
fn pure_acks_with_sack_and_a_growing_window_round_trip_cheaply() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let (mut plain, mut sacked) = (Vec::new(), Vec::new());
    let mut ack = 5000;
    for i in 0..300u32 {
        // Delayed ACKs of one and two segments: the acknowledgment stride is one segment.
        ack += 1448 * (1 + i % 2);
        let win = 60 + (i / 3) as u16;
        let blocks: &[(u32, u32)] = match i % 10 {
            4 => &[(ack + 1448, ack + 2 * 1448)],
            7 => &[
                (ack + 1448, ack + 3 * 1448),
                (ack + 5 * 1448, ack + 6 * 1448),
            ],
            _ => &[],
        };
        let p = pure_ack(ack, 900 + i as u16, 20_000 + i, win, blocks);
        let blocks = blocks.len();
        let kind = c.compress(&p, &mut frame);
        d.decompress(kind, &frame, &mut out).unwrap();
        assert_eq!(out, p, "ACK {i}");
        if i >= 100 {
            let bytes = 1 + frame.len();
            if blocks == 0 {
                plain.push(bytes);
            } else {
                sacked.push(bytes);
            }
        }
    }
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
    // Kind, short extension (the window's LSBs in it), checksum, then ACK, IP-ID and timestamp
    // codes: 8 octets; the SACK header and blocks (one or two, a segment or two) add 1 or 2.
    assert!(plain.iter().all(|&b| b <= 8), "{plain:?}");
    assert!(mean(&sacked) <= mean(&plain) + 1.5, "{sacked:?} {plain:?}");
}

#[test]
fn flow_starts_go_as_compact_irs_unless_the_options_are_unusual() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut unusual = segment(5000, 80, 9, 40_000, 100);
    unusual[15] = 9;
    let options: Vec<u8> = [&unusual[42..52], &[1, 1][..]].concat();
    unusual[40..52].copy_from_slice(&options);
    unusual[10..12].fill(0);
    unusual[36..38].fill(0);
    fill_checksums(&mut unusual);
    for (p, kind) in [
        (
            segment(1000, 77, 500, 10_000, 256),
            super::format::COMPACT_IR,
        ),
        (segment_v6(4000, 1, 2, 0), super::format::COMPACT_IR),
        (unusual, super::format::IR),
    ] {
        let k = c.compress(&p, &mut frame);
        assert_eq!(k, FrameKind::Profile(kind));
        assert!(frame.len() < p.len() || kind == super::format::IR);
        assert_eq!(d.decompress(k, &frame, &mut out), Ok(()));
        assert_eq!(out, p);
    }
}
