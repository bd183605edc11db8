//! The unit tests of the non-TCP frames (section 8).

use super::*;
use crate::codec::DropReason;

mod held;

fn v4_checksum(p: &mut [u8]) {
    p[10..12].fill(0);
    let sum = taroc_wire::checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// A UDP datagram with a valid checksum (or 0), to port 53 (or RTP's 40000 with `rtp`).
fn udp_with(id: u16, payload: &[u8], zero_sum: bool) -> Vec<u8> {
    let total = 28 + payload.len();
    let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, protocol::UDP, 0, 0];
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    p.extend_from_slice(&[0x9c, 0x41, 0, 53]);
    p.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(payload);
    v4_checksum(&mut p);
    if !zero_sum {
        let s = shape(&p).unwrap();
        let sum = transport_checksum(&p, s).unwrap();
        p[26..28].copy_from_slice(&sum.to_be_bytes());
    }
    p
}

fn udp(id: u16, payload: usize) -> Vec<u8> {
    udp_with(
        id,
        &(0..payload).map(|i| i as u8).collect::<Vec<_>>(),
        false,
    )
}

/// An RTP packet (PCMU) of sequence number `seq`, timestamp `ts`, IP-ID `id`.
fn rtp(id: u16, seq: u16, ts: u32, marker: bool) -> Vec<u8> {
    let mut payload = vec![0x80, u8::from(marker) << 7];
    payload.extend_from_slice(&seq.to_be_bytes());
    payload.extend_from_slice(&ts.to_be_bytes());
    payload.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    payload.extend((0..160).map(|i| (i * 7) as u8));
    let mut p = udp_with(id, &payload, true);
    p[20..24].copy_from_slice(&[0x9c, 0x40, 0x9c, 0x40]);
    let s = shape(&p).unwrap();
    assert!(s.rtp);
    let sum = transport_checksum(&p, s).unwrap();
    p[26..28].copy_from_slice(&sum.to_be_bytes());
    p
}

fn decompress(d: &mut OtherDecompressor, k: u8, frame: &[u8]) -> Result<Vec<u8>, DropReason> {
    let mut out = Vec::new();
    if k == IR_N {
        d.ir_n(frame, &mut out).map(|_| ())?;
    } else {
        d.co_n(k, frame, &mut out)?;
    }
    Ok(out)
}

/// Compresses `p` on a link whose far end is heard from (a frame came back after it).
fn compress(c: &mut OtherCompressor, p: &[u8]) -> (u8, Vec<u8>) {
    let frame = compress_unheard(c, p);
    c.heard();
    frame
}

/// Compresses `p`, nothing heard from the far end since.
fn compress_unheard(c: &mut OtherCompressor, p: &[u8]) -> (u8, Vec<u8>) {
    let mut frame = Vec::new();
    let FrameKind::Profile(k) = c.compress(p, &mut frame, true).unwrap() else {
        panic!("not a profile kind");
    };
    (k, frame)
}

fn round(c: &mut OtherCompressor, d: &mut OtherDecompressor, p: &[u8]) -> (u8, usize) {
    let (k, frame) = compress(c, p);
    assert_eq!(decompress(d, k, &frame).unwrap(), p);
    (k, frame.len())
}

fn echo(id: u16, sequence: u16, checksum_ok: bool) -> Vec<u8> {
    let mut p = vec![0x45, 0, 0, 48, 0, 0, 0x40, 0, 64, protocol::ICMP, 0, 0];
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 8, 0, 0, 0, 0x12, 0x34]);
    p.extend_from_slice(&sequence.to_be_bytes());
    p.extend(0..20u8);
    let s = Shape {
        ip: 20,
        header: 28,
        udp: false,
        rtp: false,
        echo: true,
        v4: true,
    };
    let sum = transport_checksum(&p, s).unwrap() ^ u16::from(!checksum_ok);
    p[22..24].copy_from_slice(&sum.to_be_bytes());
    v4_checksum(&mut p);
    p
}

#[test]
fn short_kinds_skip_the_packed_ir() {
    let kinds: Vec<u8> = (0..SHORT_CIDS)
        .flat_map(|cid| (0..4).map(move |lsb| short_kind(cid, lsb)))
        .collect();
    assert!(!kinds.contains(&FrameKind::PROFILE_NON_TCP_FULL));
    assert!(!kinds.contains(&CO_N_LONG));
    assert!(kinds.iter().all(|&k| (CO_N..=CO_N_LAST).contains(&k)));
    for (i, &k) in kinds.iter().enumerate() {
        assert_eq!(short_of(k), Some((i as u8 / 4, i as u8 % 4)));
    }
    assert_eq!(short_of(CO_N_LONG), None);
    assert_eq!(short_of(FrameKind::PROFILE_NON_TCP_FULL), None);
}

#[test]
fn icmp_echo_headers_go_in_the_kind_byte() {
    let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
    for i in 0..u16::from(START_IRS) {
        assert_eq!(round(&mut c, &mut d, &echo(50 + i, i, true)).0, IR_N);
    }
    // The sequence number and IP-ID step together: the kind byte and the check.
    for i in 3..10 {
        let (k, len) = round(&mut c, &mut d, &echo(50 + i, i, true));
        assert_eq!((k, len), (short_kind(0, i as u8 & 3), 2 + 20));
    }
    // An echo whose checksum field is not the computed one keeps its ICMP header: another
    // context (IP-only), whose packets still round-trip.
    for i in 0..=u16::from(START_IRS) {
        round(&mut c, &mut d, &echo(61 + i, 3 + i, false));
    }
    // Its IP-ID (its sequence number) jumps: 8 LSBs in a CO-I frame with its CID octet.
    let (k, len) = round(&mut c, &mut d, &echo(70, 9, false));
    assert_eq!((k, len), (CO_I_CID, 1 + 1 + 2 + 28));
}

#[test]
fn the_check_is_fnv1a_through_murmur3s_finaliser() {
    // FNV-1a's published values, and the finaliser's fixed point and one value.
    assert_eq!(fnv1a(b""), 0x811C_9DC5);
    assert_eq!(fnv1a(b"a"), 0xE40C_292C);
    assert_eq!(fnv1a(b"foobar"), 0xBF9C_F968);
    assert_eq!(fmix32(0), 0);
    assert_eq!(header_check(b"123456789"), CHECK_VECTOR);
    // A header wrong by the same offset as its predecessor changes its check by another
    // amount: of 65,535 pairs of consecutive sequence numbers whose high octets are both off
    // by one, a handful change it alike, where under a CRC (linear) every pair that keeps its
    // high octet does, and the second header passes whenever the first did.
    let header = |seq: u16| [0x45, 0x00, (seq >> 8) as u8, seq as u8, 0x12, 0x34];
    let change = |seq: u16| header_check(&header(seq)) ^ header_check(&header(seq ^ 0x0100));
    let alike = (0..u16::MAX)
        .filter(|&q| change(q) == change(q + 1))
        .count();
    assert!(alike <= 8, "{alike}");
}

/// The check of `"123456789"` (section 8).
const CHECK_VECTOR: u16 = 0x44AE;

#[test]
fn udp_round_trips_in_three_bytes() {
    let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
    for id in (8 - u16::from(START_IRS))..8 {
        assert_eq!(round(&mut c, &mut d, &udp(id, 30)).0, IR_N);
    }
    // The IP-ID is the sequence: its LSBs in the kind byte, the checksum computed.
    assert_eq!(
        round(&mut c, &mut d, &udp(8, 30)),
        (short_kind(0, 0), 2 + 30)
    );
    // A jump goes CO-N with 16 bits.
    assert_eq!(
        round(&mut c, &mut d, &udp(9000, 5)),
        (CO_N_LONG, 1 + 2 + 2 + 5)
    );
    // A checksum that is not the computed one travels.
    let mut bad = udp(9001, 5);
    bad[27] ^= 1;
    assert_eq!(round(&mut c, &mut d, &bad), (CO_N_LONG, 1 + 2 + 2 + 2 + 5));
    // A zero checksum: another context.
    let zero = udp_with(9002, &[1, 2, 3], true);
    assert_eq!(round(&mut c, &mut d, &zero).0, IR_N);
}

/// A DNS-like flow of 10 packets delivered, 9 lost (beyond the window and the first trial),
/// and the next one, which the third trial decodes and holds as the reference.
fn held_after_nine_lost() -> (OtherCompressor, OtherDecompressor) {
    let (mut c, mut d) = (
        OtherCompressor::new(true, false),
        OtherDecompressor::default(),
    );
    for id in 0..10 {
        round(&mut c, &mut d, &udp(id, 30));
    }
    for id in 10..19 {
        compress(&mut c, &udp(id, 30));
    }
    let (k, frame) = compress(&mut c, &udp(19, 30));
    assert_eq!(short_of(k), Some((0, 3)));
    assert_eq!(decompress(&mut d, k, &frame), Err(DropReason::Held));
    assert!(d.held());
    (c, d)
}

#[test]
fn lost_packets_decode_by_trial_and_a_second_frame_confirms() {
    // The held frame's reference; the next frame, decoded at once, is delivered.
    let (mut c, mut d) = held_after_nine_lost();
    assert_eq!(round(&mut c, &mut d, &udp(20, 30)).0, short_kind(0, 0));
    // Two CO-S frames: the held packet comes late with the one that confirmed it, once.
    let mut late = Vec::new();
    assert!(d.take_late(&mut late));
    assert_eq!(late, udp(19, 30));
    assert!(!d.take_late(&mut late));
    // More than the trials reach (255 on, where the sequence number is the IP-ID): refused,
    // not delivered, and the next one too (held).
    for id in 21..300 {
        compress(&mut c, &udp(id, 30));
    }
    for id in 300..302 {
        let (k, frame) = compress(&mut c, &udp(id, 30));
        assert!(short_of(k).is_some());
        assert_eq!(
            decompress(&mut d, k, &frame),
            Err(DropReason::ChecksumMismatch)
        );
    }
}

/// A frame held for confirmation asks for nothing, but the next frame is judged on its own: one
/// that names a context the decompressor lacks is a refusal (which asks for the context), not a
/// held frame, whatever the frame before it was.
#[test]
fn a_frame_after_a_held_one_is_not_held_for_it() {
    let (_, mut d) = held_after_nine_lost();
    // A CO-I frame of CID 5, which the decompressor never set up.
    let frame = [5, 0x40, 0x12, 0x34];
    assert_eq!(
        decompress(&mut d, CO_I_CID, &frame),
        Err(DropReason::NoContext)
    );
    assert!(!d.held());
}

#[test]
fn without_requests_an_anchor_comes_every_sixteen_frames() {
    let (mut c, mut d) = (
        OtherCompressor::new(false, false),
        OtherDecompressor::default(),
    );
    let kinds: Vec<u8> = (0..60)
        .map(|id| round(&mut c, &mut d, &udp(id, 30)).0)
        .collect();
    let at = |kind| (0..60).filter(|&i| kinds[i] == kind).collect::<Vec<_>>();
    // IR-Ns: the start's, then refreshes after 16 and 32 packets; an anchor 16 frames
    // after the last IR-N.
    assert_eq!(at(IR_N), [0, 1, 2, 18, 50]);
    assert_eq!(at(CO_N_LONG), [34]);
}

#[test]
fn rtp_voice_goes_in_the_kind_byte() {
    let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
    let (mut seq, mut ts, mut id) = (1000u16, 5000u32, 77u16);
    let mut sizes = Vec::new();
    for i in 0..200 {
        if i == 100 {
            ts += 160 * 40; // a pause; the next packet has the marker
        }
        let p = rtp(id, seq, ts, i == 0 || i == 100);
        let (k, len) = round(&mut c, &mut d, &p);
        sizes.push((k, len - 160));
        seq = seq.wrapping_add(1);
        ts += 160;
        id += 1;
    }
    // Three IR-Ns, then CO-N until the stride is known everywhere, then CO-S.
    assert!(sizes[..3].iter().all(|&(k, _)| k == IR_N));
    assert!(sizes[10..16]
        .iter()
        .all(|&(k, len)| short_of(k).is_some() && len == 2));
    // The talkspurt's first packet and the window after it go CO-N (marker, timestamp).
    assert_eq!(sizes[100].0, CO_N_LONG);
    assert!(sizes[100 + WINDOW..100 + WINDOW + 8]
        .iter()
        .all(|&(k, len)| short_of(k).is_some() && len == 2));
}

/// What a frame decompressed into.
type Decoded = Result<Vec<u8>, DropReason>;

/// A call packet `i` whose IP-ID moves by `id_step` per packet, and by `id_extra` more from
/// packet 40 on.
fn voice(i: u16, id_step: u16, id_extra: u16) -> Vec<u8> {
    let extra = if i >= 40 { id_extra } else { 0 };
    rtp(
        500 + i * id_step + extra,
        1000 + i,
        5000 + 160 * u32::from(i),
        false,
    )
}

/// A call whose IP-ID moves by `id_step` per packet, 20 ms a packet: 40 packets delivered, then
/// `lost` lost; the frame after them and the next one, with the decompressor told the time or
/// not. The sender stalls `stall` ms before the packets after the loss, sending them late and
/// at once, and other flows move the IP-ID by `id_extra` meanwhile. Returns what became of
/// those two and the packet delivered late, if any.
fn after_long_loss(
    timed: bool,
    lost: u16,
    id_step: u16,
    (stall, id_extra): (u64, u16),
) -> (Decoded, Decoded, Option<Vec<u8>>) {
    // Where the decompressor asks for contexts: no anchors, no refresh in the way.
    let (mut c, mut d) = (
        OtherCompressor::new(true, false),
        OtherDecompressor::default(),
    );
    let packet = |i: u16| voice(i, id_step, id_extra);
    let at = |i: u16| {
        let late = if i >= 40 { stall } else { 0 };
        core::time::Duration::from_millis(20 * u64::from(i) + late)
    };
    for i in 0..40 {
        if timed {
            d.set_time(at(i));
        }
        round(&mut c, &mut d, &packet(i));
    }
    for i in 40..40 + lost {
        compress(&mut c, &packet(i));
    }
    let mut next = |i: u16| {
        if timed {
            d.set_time(at(i));
        }
        let (k, frame) = compress(&mut c, &packet(i));
        decompress(&mut d, k, &frame)
    };
    let first = next(40 + lost);
    let second = next(41 + lost);
    let mut late = Vec::new();
    let late = d.take_late(&mut late).then_some(late);
    (first, second, late)
}

/// A call that lost more packets than a frame's trials reach decodes by the time since its
/// reference, held until the next frame confirms it; without the time it is refused.
#[test]
fn an_rtp_frame_after_a_long_loss_decodes_by_the_time_since_its_reference() {
    for step in [1, 3] {
        let (first, second, late) = after_long_loss(true, 90, step, (0, 0));
        assert_eq!(first, Err(DropReason::Held), "IP-ID step {step}");
        assert_eq!(second, Ok(voice(131, step, 0)));
        assert_eq!(late, Some(voice(130, step, 0)));
        let (first, _, late) = after_long_loss(false, 90, step, (0, 0));
        assert_eq!(first, Err(DropReason::ChecksumMismatch));
        assert_eq!(late, None);
    }
}

/// A sender that stalled sends late: the time says more packets than it sent, and the
/// decodings below what the time says find it; the IP-ID, moved by other flows meanwhile far
/// from where the call's own pace puts it, within what the frame's own trials reach.
#[test]
fn an_rtp_frame_after_a_long_loss_and_a_stall_decodes_too() {
    let (first, second, late) = after_long_loss(true, 75, 3, (600, 200));
    assert_eq!(first, Err(DropReason::Held));
    assert_eq!(second, Ok(voice(116, 3, 200)));
    assert_eq!(late, Some(voice(115, 3, 200)));
}

/// `udp(id, 30)` from source port `port`.
fn udp_from(port: u16, id: u16) -> Vec<u8> {
    let mut p = udp(id, 30);
    p[20..22].copy_from_slice(&port.to_be_bytes());
    let sum = transport_checksum(&p, shape(&p).unwrap()).unwrap();
    p[26..28].copy_from_slice(&sum.to_be_bytes());
    p
}

/// The IR-N frames a new flow of `port` starts with, the compressor lossy or not.
fn start_irs(lossy: bool, port: u16) -> usize {
    let mut c = OtherCompressor::new(true, false);
    if lossy {
        c.lossy();
    }
    (0..8)
        .filter(|&id| compress(&mut c, &udp_from(port, id)).0 == IR_N)
        .count()
}

#[test]
fn on_a_lossy_link_a_start_has_one_more_ir_n() {
    assert_eq!(start_irs(false, 5000), usize::from(START_IRS_ASKING));
    assert_eq!(
        start_irs(true, 5000),
        usize::from(START_IRS_ASKING + LOSSY_START_EXTRA)
    );
}

/// The kinds of a flow's frames after `sent` of its packets, feedback saying then (and again
/// after one more) that the link loses frames, or not.
fn after_first_note(sent: u16, notes: bool) -> [u8; 3] {
    let mut c = OtherCompressor::new(true, false);
    for id in 0..sent {
        compress(&mut c, &udp_from(5000, id));
    }
    let mut kinds = [0; 3];
    for (i, k) in kinds.iter_mut().enumerate() {
        if notes && i != 1 {
            c.lossy();
        }
        *k = compress(&mut c, &udp_from(5000, sent + i as u16)).0;
    }
    kinds
}

/// A context whose start went out before the link was known to lose frames sends one more
/// IR-N at the first note that it does, a context past its first packets does not, and a
/// second note adds nothing.
#[test]
fn a_young_context_sends_one_more_ir_n_at_the_first_loss_note() {
    let (calm, noted) = (after_first_note(8, false), after_first_note(8, true));
    assert!(!calm.contains(&IR_N), "{calm:?}");
    assert_eq!(noted[0], IR_N);
    assert!(!noted[1..].contains(&IR_N), "{noted:?}");
    let old = YOUNG as u16 + 3;
    assert_eq!(after_first_note(old, true), after_first_note(old, false));
}

/// The kind of the frame of a flow's packet after `idle` packets of another flow, the
/// compressor lossy or not.
fn after_idle(lossy: bool, idle: u64) -> u8 {
    let mut c = OtherCompressor::new(true, false);
    for id in 0..YOUNG as u16 + 3 {
        compress(&mut c, &udp_from(5000, id));
    }
    if lossy {
        c.lossy();
    }
    for id in 0..idle {
        compress(&mut c, &udp_from(6000, 100 + id as u16));
    }
    compress(&mut c, &udp_from(5000, 8)).0
}

/// A flow that sends seldom goes whole after a long idle time, but only on a lossy link.
#[test]
fn on_a_lossy_link_a_context_idle_for_long_goes_whole() {
    assert_eq!(after_idle(true, IDLE_WHOLE + 1), IR_N);
    assert_ne!(after_idle(true, IDLE_WHOLE - 1), IR_N);
    assert_ne!(after_idle(false, IDLE_WHOLE + 1), IR_N);
}

/// The IR-N frames among a flow's 300 packets, the far end heard from after each of them or
/// never.
fn ir_ns_when(heard: bool) -> Vec<usize> {
    let mut c = OtherCompressor::new(true, false);
    (0..300)
        .filter(|&id| {
            let k = compress_unheard(&mut c, &udp(id as u16, 30)).0;
            if heard {
                c.heard();
            }
            k == IR_N
        })
        .collect()
}

/// Where context requests are on but nothing comes back from the far end (a link used one way,
/// where feedback goes with the opposite direction's frames), a context refreshes as without
/// requests, so that a lost start comes back within `MAX_REFRESH_ALONE` packets.
#[test]
fn a_compressor_that_hears_nothing_from_the_far_end_refreshes_as_without_requests() {
    assert_eq!(ir_ns_when(true), [0, 1]);
    let quiet = ir_ns_when(false);
    assert!(quiet.len() > 4, "{quiet:?}");
    assert!(quiet
        .windows(2)
        .all(|w| w[1] - w[0] <= usize::from(MAX_REFRESH_ALONE) + 1));
}

/// The CIDs of the frames of a busy flow that starts after three others (so above the CO-S
/// CIDs) and sends while they are idle, the compressor lossy or not.
fn busy_flow_cids(lossy: bool) -> Vec<u8> {
    let mut c = OtherCompressor::new(true, false);
    let mut id = 0;
    for port in 5000..5003 {
        for _ in 0..3 {
            compress(&mut c, &udp_from(port, id));
            id += 1;
        }
    }
    if lossy {
        c.lossy();
    }
    let mut cids = Vec::new();
    for _ in 0..MOVE_IDLE + u64::from(MOVE_AFTER) + 8 {
        let (k, frame) = compress(&mut c, &udp_from(6000, id));
        id += 1;
        if let Some(cid) = cid_of(k, &frame).filter(|_| k != IR_N) {
            cids.push(cid);
        }
    }
    cids
}

/// A busy context moves to an idle CO-S CID (its next frames are CO-S), but not on a link
/// that feedback said loses frames: a move restarts it, and a lost restart costs frames.
#[test]
fn a_busy_context_moves_to_a_short_cid_only_on_a_calm_link() {
    let calm = busy_flow_cids(false);
    assert!(calm.iter().any(|&cid| cid < SHORT_CIDS), "{calm:?}");
    let lossy = busy_flow_cids(true);
    assert!(lossy.iter().all(|&cid| cid >= SHORT_CIDS), "{lossy:?}");
}

#[test]
fn a_new_flow_of_the_same_hosts_starts_from_a_base() {
    let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
    for id in 0..5 {
        round(&mut c, &mut d, &udp_from(5000, id));
    }
    // Another source port: its start IR-Ns name CID 0 and the one word that differs.
    let mut lost = OtherDecompressor::default();
    for id in 5..5 + u16::from(START_IRS) {
        let p = udp_from(5002, id);
        let (k, frame) = compress(&mut c, &p);
        assert_eq!(k, IR_N);
        assert!(is_replica(&frame));
        // form, flags, CID, base, one change, IP-ID, check, payload
        assert_eq!(frame.len(), 5 + 3 + 2 + 2 + 30);
        assert_eq!(decompress(&mut d, k, &frame).unwrap(), p);
        // A decompressor without the base refuses it.
        assert_eq!(decompress(&mut lost, k, &frame), Err(DropReason::NoContext));
    }
    assert_eq!(
        round(&mut c, &mut d, &udp_from(5002, 8)).0,
        short_kind(1, 0)
    );
    // A base of another flow under the same CID (another TTL): the check refuses it.
    let mut other = OtherDecompressor::default();
    let mut ttl = udp_from(5000, 1);
    ttl[8] = 63;
    v4_checksum(&mut ttl);
    let (k, frame) = compress(&mut OtherCompressor::default(), &ttl);
    decompress(&mut other, k, &frame).unwrap();
    let mut c2 = OtherCompressor::default();
    for id in 0..3 {
        compress(&mut c2, &udp_from(5000, id));
    }
    let (k, frame) = compress(&mut c2, &udp_from(5002, 3));
    assert!(is_replica(&frame));
    assert_eq!(
        decompress(&mut other, k, &frame),
        Err(DropReason::ChecksumMismatch)
    );
}

#[test]
fn a_wrong_context_is_refused_not_delivered() {
    let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
    for id in (8 - u16::from(START_IRS))..8 {
        round(&mut c, &mut d, &udp(id, 30));
    }
    let mut other = udp(8, 30);
    other[8] = 63; // another TTL: another context, CID 1, whose IR-N is lost
    v4_checksum(&mut other);
    let mut frame = Vec::new();
    for _ in 0..START_IRS {
        c.compress(&other, &mut frame, true);
    }
    // Its CO-S names CID 1, which the decompressor lacks.
    let (k, frame) = compress(&mut c, &other);
    assert_eq!(short_of(k).map(|(cid, _)| cid), Some(1));
    assert_eq!(decompress(&mut d, k, &frame), Err(DropReason::NoContext));
    // Forced onto CID 0: the check refuses it.
    let forged = short_kind(0, short_of(k).unwrap().1);
    assert_eq!(
        decompress(&mut d, forged, &frame),
        Err(DropReason::ChecksumMismatch)
    );
    assert_eq!(
        decompress(&mut d, forged, &frame[..1]),
        Err(DropReason::Malformed)
    );
}

#[test]
fn fragments_and_ipv6_round_trip() {
    let (mut c, mut d) = (
        OtherCompressor::new(true, false),
        OtherDecompressor::default(),
    );
    for (i, frag) in [0x2000u16, 0x00B9, 0x2000, 0x00B9, 0x2000, 0x00B9]
        .into_iter()
        .enumerate()
    {
        let mut p = udp(100 + i as u16 / 2, 60);
        p[6..8].copy_from_slice(&frag.to_be_bytes());
        v4_checksum(&mut p);
        round(&mut c, &mut d, &p);
    }
    let mut v6 = vec![0x60, 0, 0, 0, 0, 8, protocol::ICMPV6, 64];
    v6.extend_from_slice(&[0x20; 32]);
    v6.extend_from_slice(&[1, 0, 1, 2, 3, 4, 5, 6]);
    for _ in 0..START_IRS {
        assert_eq!(round(&mut c, &mut d, &v6).0, IR_N);
    }
    assert_eq!(round(&mut c, &mut d, &v6), (short_kind(1, 0), 2 + 8));
    // With context requests: refreshes after 512, then every 1024 packets, each replicated
    // from the context itself (without requests: whole, every 64 at most).
    let mut refreshes = Vec::new();
    for i in 1..=800 {
        let (k, frame) = compress(&mut c, &v6);
        assert_eq!(decompress(&mut d, k, &frame).unwrap(), v6);
        if k == IR_N {
            assert!(is_replica(&frame));
            // form, flags, CID, base CID (its own), no change, check, payload
            assert_eq!((frame[2], frame[3], frame[4]), (1, 1, 0));
            assert_eq!(frame.len(), 5 + 2 + 8);
            refreshes.push(i);
        }
    }
    assert_eq!(refreshes, [511]);
    // A context request starts the refreshes over, its answer whole.
    assert!(c.request(1));
    for _ in 0..START_IRS {
        let (k, frame) = compress(&mut c, &v6);
        assert!(k == IR_N && !is_replica(&frame));
        assert_eq!(decompress(&mut d, k, &frame).unwrap(), v6);
    }
    let next = (1..=REFRESH_ASKING).find(|_| round(&mut c, &mut d, &v6).0 == IR_N);
    assert_eq!(next, Some(REFRESH_ASKING));
}

#[test]
fn icmpv6_echoes_have_their_checksum_computed() {
    let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
    for i in 0..10u16 {
        let mut p = vec![0x60, 0, 0, 0, 0, 16, protocol::ICMPV6, 64];
        p.extend_from_slice(&[0x20; 32]);
        p.extend_from_slice(&[128, 0, 0, 0, 0x12, 0x34]);
        p.extend_from_slice(&i.to_be_bytes());
        p.extend_from_slice(&[9; 8]);
        let s = Shape {
            ip: 40,
            header: 48,
            udp: false,
            rtp: false,
            echo: true,
            v4: false,
        };
        let sum = transport_checksum(&p, s).unwrap();
        p[42..44].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(shape(&p), Some(s));
        let (k, len) = round(&mut c, &mut d, &p);
        if i >= 3 {
            assert_eq!((k, len), (short_kind(0, i as u8 & 3), 2 + 8));
        }
    }
}

/// An RTP video packet: `udp_with` to port 40100 (even), PT 96, the marker as given.
fn video(id: u16, seq: u16, ts: u32, marker: bool) -> Vec<u8> {
    let mut p = rtp(id, seq, ts, marker);
    p[29] = p[29] & 0x80 | 96;
    p[26..28].fill(0);
    let sum = transport_checksum(&p, shape(&p).unwrap()).unwrap();
    p[26..28].copy_from_slice(&sum.to_be_bytes());
    p
}

#[test]
fn video_frames_keep_their_timestamp_in_frame_mode() {
    let (mut c, mut d) = (OtherCompressor::default(), OtherDecompressor::default());
    let (mut seq, mut ts, mut id) = (500u16, 90_000u32, 1000u16);
    let mut kinds = Vec::new();
    // Frames of 3 to 5 packets, one timestamp each (+3600 per frame), the marker on the last;
    // the IP-ID +1 within a frame and +3 between frames (a counter other flows share). (After
    // a frame of one or two packets, the next frame's first packet is two frames on from the
    // oldest reference: CO-N.)
    for frame in 0..60 {
        let n = 3 + frame % 3;
        for i in 0..n {
            let p = video(id, seq, ts, i + 1 == n);
            kinds.push(round(&mut c, &mut d, &p));
            seq = seq.wrapping_add(1);
            id = id.wrapping_add(1);
        }
        ts += 3600;
        id = id.wrapping_add(2);
    }
    // Past the start, nearly everything goes CO-S or CO-I (3 or 4 octets and the payload).
    let late = &kinds[40..];
    let small = late
        .iter()
        .filter(|&&(k, len)| (short_of(k).is_some() || k == CO_I) && len <= 3 + 160)
        .count();
    assert!(small * 10 >= late.len() * 8, "{kinds:?}");
    // A decompressor that lost five packets in a row decodes the next CO-I at once.
    let mut lost = d.clone();
    let mut frames = Vec::new();
    for i in 0..7u16 {
        let p = video(id + i, seq + i, ts, i == 6);
        frames.push((compress(&mut c, &p), p));
    }
    let ((k, frame), p) = &frames[6];
    assert_eq!(*k, CO_I);
    assert_eq!(decompress(&mut lost, *k, frame).unwrap(), *p);
}

/// An RTP packet of `rtp(id, seq, ts, false)`'s shape on port `port` (both ends), from
/// 10.0.0.2 to 10.0.0.1 if `swapped`.
fn call(port: u16, id: u16, seq: u16, ts: u32, swapped: bool) -> Vec<u8> {
    let mut p = rtp(id, seq, ts, false);
    p[20..22].copy_from_slice(&port.to_be_bytes());
    p[22..24].copy_from_slice(&port.to_be_bytes());
    if swapped {
        p[12..20].copy_from_slice(&[10, 0, 0, 2, 10, 0, 0, 1]);
        v4_checksum(&mut p);
    }
    p[26..28].fill(0);
    let sum = transport_checksum(&p, shape(&p).unwrap()).unwrap();
    p[26..28].copy_from_slice(&sum.to_be_bytes());
    p
}

/// Three calls between the same two hosts whose IP-IDs come from one counter, as Linux draws
/// them for unconnected UDP sockets: `n` packets in turn, the counter one up per packet and
/// `jump` more every fifth.
fn three_calls(n: usize, jump: u16, swapped: bool) -> Vec<Vec<u8>> {
    let mut id = 500u16;
    (0..n)
        .map(|i| {
            let flow = (i % 3) as u16;
            let k = (i / 3) as u32;
            id = id.wrapping_add(1 + if i % 5 == 4 { jump } else { 0 });
            let seq = (1000 * (flow + 1)).wrapping_add(k as u16);
            call(
                40000 + 4 * flow,
                id,
                seq,
                160 * k + 7 * u32::from(flow),
                swapped,
            )
        })
        .collect()
}

#[test]
fn calls_on_one_ip_id_counter_go_in_the_kind_byte_where_feedback_comes() {
    let packets = three_calls(600, 3, false);
    // Where the decompressor sends feedback: pair mode, CO-S for the packets one above the
    // pair's last IP-ID (four in five), CO-I for the others.
    let (mut c, mut d) = (
        OtherCompressor::new(true, false),
        OtherDecompressor::default(),
    );
    let kinds: Vec<u8> = packets.iter().map(|p| round(&mut c, &mut d, p).0).collect();
    let tail = &kinds[300..];
    let short = tail.iter().filter(|&&k| short_of(k).is_some()).count();
    assert!(short >= 235, "{short} CO-S of 300");
    assert!(tail
        .iter()
        .all(|&k| short_of(k).is_some() || k == CO_I || k == CO_I_CID));
    // Without feedback (and after a loss note): no CO-S counts on the pair's last IP-ID.
    let (mut c, mut d) = (
        OtherCompressor::new(false, false),
        OtherDecompressor::default(),
    );
    let mut lossy = OtherCompressor::new(true, false);
    let mut d2 = OtherDecompressor::default();
    lossy.lossy();
    for p in &packets {
        for (c, d) in [(&mut c, &mut d), (&mut lossy, &mut d2)] {
            let k = round(c, d, p).0;
            assert!(short_of(k).is_none());
        }
    }
}

#[test]
fn a_lost_frame_of_another_call_holds_the_next_frame_and_nothing_goes_wrong() {
    let packets = three_calls(300, 0, false);
    let (mut c, mut d) = (
        OtherCompressor::new(true, false),
        OtherDecompressor::new(true),
    );
    for p in &packets[..240] {
        round(&mut c, &mut d, p);
    }
    let mut note = Vec::new();
    assert!(!d.take_pair_note(&mut note));
    // The frame of packet 240 (call 0) is lost; packet 241 (call 1) counts on its IP-ID.
    compress(&mut c, &packets[240]);
    let (k, frame) = compress(&mut c, &packets[241]);
    assert!(short_of(k).is_some());
    assert_eq!(decompress(&mut d, k, &frame), Err(DropReason::Held));
    assert!(d.held());
    // The decompressor tells the compressor (thrice) that the link lost a frame of the pair.
    for _ in 0..PAIR_NOTE_COPIES {
        assert!(d.take_pair_note(&mut note) && note == [PAIR_NOTE]);
    }
    assert!(!d.take_pair_note(&mut note));
    // Held with the right IP-ID: call 2's next frame decodes against it, and call 1's next
    // frame confirms its reference. (One frame in nine carries IP-ID bits.)
    // Held in pair mode, whose trials move the IP-ID alone: confirmed, not delivered late.
    let kinds: Vec<u8> = packets[242..260]
        .iter()
        .map(|p| {
            let k = round(&mut c, &mut d, p).0;
            assert!(!d.take_late(&mut note));
            k
        })
        .collect();
    assert_eq!(kinds.iter().filter(|&&k| short_of(k).is_some()).count(), 16);
}

#[test]
fn pair_mode_frames_damaged_or_misdirected_never_deliver_a_wrong_packet() {
    let mut rng = crate::test_rng::Rng(0x005e_ed40);
    for run in 0..40 {
        let jump = (run % 4) as u16;
        let packets = three_calls(450, jump, false);
        // A decompressor of the other direction: the same ports, the addresses swapped.
        let reverse = three_calls(60, jump, true);
        let (mut c, mut d) = (
            OtherCompressor::new(true, false),
            OtherDecompressor::default(),
        );
        let mut swapped = OtherDecompressor::default();
        let mut rc = OtherCompressor::new(true, false);
        for p in &reverse {
            round(&mut rc, &mut swapped, p);
        }
        let (mut delivered, mut refused) = (0, 0);
        for (i, p) in packets.iter().enumerate() {
            let (mut k, mut frame) = compress(&mut c, p);
            if i > 30 && rng.chance(25) {
                continue; // lost on the link
            }
            if i > 30 && rng.chance(20) {
                match rng.below(4) {
                    // Another CID's kind byte (a frame in the wrong context).
                    0 => {
                        if let Some((cid, lsb)) = short_of(k) {
                            k = short_kind((cid + 1 + rng.below(2) as u8) % SHORT_CIDS, lsb);
                        }
                    }
                    // A damaged octet of the header part.
                    1 => {
                        let at = rng.below(3.min(frame.len() as u64)) as usize;
                        frame[at] ^= 1 << rng.below(8);
                    }
                    // Other sequence LSBs.
                    2 => {
                        if let Some((cid, lsb)) = short_of(k) {
                            k = short_kind(cid, (lsb + 1 + rng.below(3) as u8) % 4);
                        }
                    }
                    // Zeros where the check is.
                    _ => {
                        let at = if short_of(k).is_some() {
                            0
                        } else {
                            frame.len().min(3) - 2
                        };
                        frame[at..at + 2].fill(0);
                    }
                }
                // The same frame to the decompressor of the other direction.
                if let Ok(out) = decompress(&mut swapped, k, &frame) {
                    assert!(reverse.contains(&out) || packets.contains(&out), "{out:?}");
                    assert_ne!(out[12..20], p[12..20], "run {run} packet {i}");
                }
            }
            match decompress(&mut d, k, &frame) {
                Ok(out) => {
                    assert_eq!(out, *p, "run {run} packet {i}: a wrong delivery");
                    delivered += 1;
                }
                Err(_) => refused += 1,
            }
            // A packet delivered late is one sent before.
            let mut late = Vec::new();
            if d.take_late(&mut late) {
                assert!(
                    packets[..i].contains(&late),
                    "run {run} packet {i}: wrong late"
                );
            }
        }
        assert!(
            delivered > 120,
            "run {run}: {delivered} delivered, {refused} refused"
        );
    }
}

#[test]
fn an_rtp_frame_after_three_lost_decodes_at_once() {
    let (mut c, mut d) = (
        OtherCompressor::new(true, false),
        OtherDecompressor::default(),
    );
    let mut id = 900u16;
    let mut packet = |seq: u16| {
        id = id.wrapping_add(3);
        rtp(id, seq, 160 * u32::from(seq), false)
    };
    for seq in 0..40 {
        round(&mut c, &mut d, &packet(seq));
    }
    // Three frames lost: the fourth's two sequence LSBs are those of the reference's, which in
    // RTP mode (the sequence number only grows) mean four on, not none.
    for seq in 40..43 {
        compress(&mut c, &packet(seq));
    }
    let p = packet(43);
    let (k, frame) = compress(&mut c, &p);
    assert!(k == CO_I || short_of(k).is_some());
    assert_eq!(decompress(&mut d, k, &frame).unwrap(), p);
    assert!(!d.held());
}
