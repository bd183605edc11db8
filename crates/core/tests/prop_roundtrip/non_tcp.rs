//! Property test of `taroc-plus`'s frames for packets other than TCP: random flows of UDP (right,
//! zero and wrong checksums), RTP-shaped UDP, ICMP and ICMPv6 echo, IPv4 and IPv6 fragments and
//! IP-only packets ([`super::non_tcp_traffic`]), on two links at once, through the compressor
//! and decompressor pairs of `taroc-plus` and `taroc-plus-u` (the public variants), with:
//! - frames lost at random, and in bursts;
//! - frames damaged (bytes flipped, cut short, or given another kind byte);
//! - frames delivered to the other link's decompressor too (the other direction, whose flows
//!   are this link's with their addresses swapped, or another set of flows);
//! - flows next to their twins that differ only in swapped addresses;
//! - context requests and other feedback passed back (some of it lost).
//!
//! What must hold: nothing panics; a decompressor delivers, from every frame, the exact packet
//! that frame was made from or refuses it; on a link with none of the above, every frame is
//! delivered. Black box: only frames, kinds and delivered packets are looked at, so the test
//! holds whatever the frames' format.
//!
//! A damaged frame whose packet's transport checksum the decompressor computes (UDP with
//! checksums, ICMP and ICMPv6 echo: the frame leaves the checksum out) is delivered exactly or
//! refused: the check covers the checksum computed over the payload received, so damage to the
//! payload fails it as it would fail the end-to-end checksum.
//!
//! Four exceptions are not failures but counted and printed, as the format's design allows
//! them: a damaged frame whose damage lies in the payload of a packet whose transport checksum
//! is not computed by the decompressor (IP-only packets and fragments, whose payload travels
//! verbatim under its own end-to-end checksum if any; UDP without checksums; a checksum the frame
//! carries because it was wrong already); damage to the payload that the transport checksum
//! itself cannot see (the payload's one's-complement sum unchanged), within a bound; a damaged
//! frame of the full-header family (the packet whole, as a plain IR-N carries it: no check but
//! the packet's own checksums; a replicated IR-N carries a check and is a checked frame) and
//! what follows from the context it set up; and a delivered header that differs from the
//! original but has its check (the 1 in 65,536 the check cannot tell), within a bound.

use super::*;
use crate::non_tcp_traffic::*;
use taroc_core::plus::other;
use taroc_core::variant::Variant;

/// The variants under test.
const VARIANTS: [&str; 2] = ["taroc-plus", "taroc-plus-u"];

/// The flows of the second link.
#[derive(Debug, Clone)]
enum OtherLink {
    /// The first link's flows with their addresses swapped: the other direction.
    Swapped,
    /// Flows of their own.
    Own(Vec<NonTcpFlow>),
}

/// A case: the flows of two links, which of them sends when, and the impairments.
#[derive(Debug, Clone)]
struct NonTcpCase {
    flows: Vec<NonTcpFlow>,
    other: OtherLink,
    /// (flow index, link) per step; the index is taken modulo the link's flow count.
    events: Vec<(usize, usize)>,
    seed: u64,
    /// Frames lost, permille.
    loss: u32,
    /// Chance, permille, that a loss is a burst of 4 to 20 frames.
    burst: u32,
    /// Frames damaged, permille (never `TYPE_IP` frames: no decompressor checks those).
    corrupt: u32,
    /// Frames also delivered to the other link's decompressor, permille.
    misdirect: u32,
    /// Feedback frames lost, permille.
    feedback_loss: u32,
}

impl NonTcpCase {
    fn is_clean(&self) -> bool {
        self.loss == 0 && self.corrupt == 0 && self.misdirect == 0
    }

    fn link_flows(&self, link: usize) -> Vec<NonTcpFlow> {
        match (link, &self.other) {
            (0, _) => self.flows.clone(),
            (_, OtherLink::Swapped) => self.flows.iter().map(NonTcpFlow::swapped).collect(),
            (_, OtherLink::Own(flows)) => flows.clone(),
        }
    }
}

fn kind() -> impl Strategy<Value = NonTcpKind> {
    prop_oneof![
        3 => prop_oneof![
            4 => Just(UdpChecksum::Valid),
            2 => Just(UdpChecksum::Zero),
            1 => Just(UdpChecksum::Wrong),
        ]
        .prop_map(NonTcpKind::Udp),
        3 => prop_oneof![4 => Just(0u8), 1 => Just(96u8), 1 => 0u8..128]
            .prop_map(|payload_type| NonTcpKind::Rtp { payload_type }),
        2 => any::<bool>().prop_map(|reply| NonTcpKind::Echo { reply }),
        1 => Just(NonTcpKind::Fragments),
        1 => prop_oneof![Just(47u8), Just(50u8), Just(253u8), Just(4u8), Just(41u8), Just(6u8), Just(17u8), Just(1u8), Just(58u8)]
            .prop_map(|protocol| NonTcpKind::IpOnly { protocol }),
    ]
}

fn ip_id() -> impl Strategy<Value = IpId> {
    prop_oneof![
        5 => Just(IpId::Sequential),
        2 => Just(IpId::Shared),
        2 => Just(IpId::Zero),
        1 => Just(IpId::Random),
    ]
}

fn flow() -> impl Strategy<Value = NonTcpFlow> {
    (
        prop::bool::weighted(0.4),
        kind(),
        ip_id(),
        (1u8..4, 1u8..4),
        // Few ports, so that flows collide in all but one field now and then.
        (
            prop_oneof![Just(53u16), Just(5004u16), Just(40_000u16), any::<u16>()],
            prop_oneof![Just(53u16), Just(5006u16), Just(40_002u16), any::<u16>()],
        ),
        prop_oneof![4 => Just(0u8), 1 => any::<u8>()],
        prop_oneof![4 => Just(64u8), 1 => 1u8..=255],
        prop_oneof![2 => 0u16..40, 2 => 40u16..200, 1 => 200u16..1400],
        prop_oneof![2 => Just(0u16), 1 => 1u16..64],
    )
        .prop_map(
            |(v6, kind, ip_id, (a, b), (p, q), tos, ttl, size, size_spread)| NonTcpFlow {
                v6,
                kind,
                ip_id,
                hosts: [a, if a == b { b + 10 } else { b }],
                ports: [p, q],
                tos,
                ttl,
                size,
                size_spread,
            },
        )
}

/// A set of flows, some of them with their twin of swapped addresses next to them.
fn flows() -> impl Strategy<Value = Vec<NonTcpFlow>> {
    prop::collection::vec((flow(), prop::bool::weighted(0.3)), 1..5).prop_map(|flows| {
        flows
            .into_iter()
            .flat_map(|(f, twin)| {
                let mut set = vec![f];
                if twin {
                    set.push(f.swapped());
                }
                set
            })
            .collect()
    })
}

fn rate(high: u32) -> impl Strategy<Value = u32> {
    prop_oneof![2 => Just(0u32), 1 => 5u32..high]
}

fn non_tcp_case() -> impl Strategy<Value = NonTcpCase> {
    (
        flows(),
        prop_oneof![1 => Just(OtherLink::Swapped), 1 => flows().prop_map(OtherLink::Own)],
        prop::collection::vec(
            (
                0usize..64,
                prop_oneof![3 => Just(0usize), 2 => Just(1usize)],
            ),
            20..300,
        ),
        any::<u64>(),
        (rate(200), rate(100), rate(80), rate(100), rate(300)),
    )
        .prop_map(
            |(flows, other, events, seed, (loss, burst, corrupt, misdirect, feedback_loss))| {
                NonTcpCase {
                    flows,
                    other,
                    events,
                    seed,
                    loss,
                    burst,
                    corrupt,
                    misdirect,
                    feedback_loss,
                }
            },
        )
}

/// How a frame reached a decompressor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trial {
    /// As it was made, to its own link's decompressor.
    Intact,
    /// Damaged on the way.
    Damaged,
    /// As it was made, to the other link's decompressor.
    Misdirected,
}

/// What happened over the cases, per variant.
#[derive(Debug, Default, Clone, Copy)]
struct NonTcpTally {
    cases: usize,
    packets: usize,
    /// Frames made, by kind family ([`FrameKind::to_byte`] of [`FrameKind::family`]).
    frames_by_family: [usize; 7],
    lost: usize,
    /// Frames delivered exactly as sent, refused: intact, damaged, misdirected.
    exact: [usize; 3],
    refused: [usize; 3],
    /// Damaged frames delivered with their header right but their payload damaged, of packets
    /// whose transport checksum the decompressor does not compute.
    payload_damage: usize,
    /// Of those, the ones whose transport checksum (UDP, ICMP) verifies: the receiver cannot
    /// tell.
    payload_damage_unnoticed: usize,
    /// Damaged frames of packets whose transport checksum the decompressor computes, delivered
    /// with a damaged payload of the same one's-complement sum (the transport checksum cannot
    /// tell either).
    checksum_collisions: usize,
    /// Damaged frames that reached the decompressor as replicated IR-Ns (checked frames).
    damaged_replicas: usize,
    /// Damaged frames of the full-header family (or made so by the damage) delivered wrong.
    full_header_damage: usize,
    /// Frames delivered wrong after the decompressor accepted a damaged full-header frame.
    after_full_header_damage: usize,
    /// Frames delivered wrong with the check of the original header.
    check_collisions: usize,
}

impl NonTcpTally {
    fn damaged_trials(&self) -> usize {
        self.exact[1] + self.refused[1] + self.wrong_damaged() + self.exact[2] + self.refused[2]
    }

    fn wrong_damaged(&self) -> usize {
        self.payload_damage + self.checksum_collisions + self.full_header_damage
    }

    fn add(&mut self, t: &NonTcpTally) {
        self.cases += t.cases;
        self.packets += t.packets;
        for (a, b) in self.frames_by_family.iter_mut().zip(t.frames_by_family) {
            *a += b;
        }
        self.lost += t.lost;
        for i in 0..3 {
            self.exact[i] += t.exact[i];
            self.refused[i] += t.refused[i];
        }
        self.payload_damage += t.payload_damage;
        self.payload_damage_unnoticed += t.payload_damage_unnoticed;
        self.checksum_collisions += t.checksum_collisions;
        self.damaged_replicas += t.damaged_replicas;
        self.full_header_damage += t.full_header_damage;
        self.after_full_header_damage += t.after_full_header_damage;
        self.check_collisions += t.check_collisions;
    }
}

/// Damages a frame: flips 1 to 3 bytes (mostly in the first 16), cuts it short, or gives it
/// another kind byte (never `TYPE_IP`).
fn damage(kind: &mut FrameKind, bytes: &mut Vec<u8>, rng: &mut Rng) {
    match rng.below(8) {
        0 if !bytes.is_empty() => bytes.truncate(rng.below(bytes.len() as u64) as usize),
        1 => {
            let byte = kind.to_byte();
            let other = match rng.below(3) {
                0 => byte.wrapping_add(1),
                1 => byte.wrapping_sub(1),
                _ => {
                    FrameKind::PROFILE_FIRST
                        + rng.below(
                            u64::from(FrameKind::PROFILE_LAST - FrameKind::PROFILE_FIRST) + 1,
                        ) as u8
                }
            };
            if let Some(k) = FrameKind::from_byte(other).filter(|k| *k != FrameKind::Ip) {
                *kind = k;
            }
        }
        _ => {
            for _ in 0..=rng.below(3) {
                if bytes.is_empty() {
                    break;
                }
                let span = if rng.chance(700) {
                    bytes.len().min(16)
                } else {
                    bytes.len()
                };
                let at = rng.below(span as u64) as usize;
                bytes[at] ^= 1 + rng.below(255) as u8;
            }
        }
    }
}

/// Whether `p`'s transport checksum is there (not an IPv4 UDP 0) and verifies.
fn transport_checksum_verifies(p: &[u8]) -> bool {
    let (_, Some(at)) = checked_header(p) else {
        return false;
    };
    if p.get(at..at + 2) == Some(&[0, 0]) && p[0] >> 4 == 4 && p[9] == UDP {
        return false;
    }
    let Ok(ip) = taroc_wire::ip::IpInfo::parse(p) else {
        return false;
    };
    let segment = &p[ip.transport_offset..];
    match ip.protocol {
        1 => checksum(segment) == 0,
        _ => taroc_wire::checksum::transport_verifies(ip.src, ip.dst, ip.protocol, segment),
    }
}

/// Whether a decompressor computes `p`'s transport checksum (the frame leaves it out): the
/// packet's mode has one (UDP, echo), it is not an IPv4 UDP 0 (a context of its own, whose
/// checksum is 0), and it verifies (a wrong one travels in the frame).
fn checksum_computed(p: &[u8]) -> bool {
    checked_header(p).1.is_some() && transport_checksum_verifies(p)
}

/// Whether a frame of kind `kind` is of the full-header family and unchecked: the packet whole,
/// as an IR frame or a plain IR-N carries it (a replicated IR-N, an IR-N frame whose first octet
/// is below 0x10, carries a 16-bit check of the header it stands for).
fn unchecked(kind: FrameKind, frame: &[u8]) -> bool {
    let full = matches!(
        kind.family(),
        FrameKind::UncompressedTcp | FrameKind::FullHeader
    );
    full && !(kind.to_byte() == other::IR_N && other::is_replica(frame))
}

/// The two links' compressors and decompressors of one variant, and what they did.
struct Links {
    compressors: [AnyCompressor; 2],
    decompressors: [AnyDecompressor; 2],
    /// Whether each decompressor accepted a damaged frame of the full-header family.
    full_header_damaged: [bool; 2],
    tally: NonTcpTally,
    out: Vec<u8>,
}

impl Links {
    /// Hands `frame` (made from `origin` as `sent`) to decompressor `to`; `Err` describes a
    /// violation.
    #[allow(clippy::too_many_arguments)]
    fn deliver(
        &mut self,
        to: usize,
        kind: FrameKind,
        frame: &[u8],
        origin: &[u8],
        trial: Trial,
        (sent_kind, sent): (FrameKind, &[u8]),
    ) -> Result<(), String> {
        let t = &mut self.tally;
        let slot = trial as usize;
        if trial == Trial::Damaged && kind.to_byte() == other::IR_N && other::is_replica(frame) {
            t.damaged_replicas += 1;
        }
        let Ok(()) = self.decompressors[to].decompress(kind, frame, &mut self.out) else {
            t.refused[slot] += 1;
            return Ok(());
        };
        let out = &self.out;
        if out == origin {
            t.exact[slot] += 1;
            return Ok(());
        }
        if trial == Trial::Damaged && (unchecked(kind, frame) || unchecked(sent_kind, sent)) {
            t.full_header_damage += 1;
            self.full_header_damaged[to] = true;
            return Ok(());
        }
        // The header the check covers (its transport checksum field included), and the rest.
        let (len, _) = checked_header(origin);
        let header = |p: &[u8]| -> Option<Vec<u8>> { p.get(..len).map(<[u8]>::to_vec) };
        let (ours, theirs) = (header(out), header(origin));
        if ours == theirs && out.len() == origin.len() && trial == Trial::Damaged {
            // The header right, the payload damaged.
            if !checksum_computed(origin) {
                t.payload_damage += 1;
                t.payload_damage_unnoticed += usize::from(transport_checksum_verifies(out));
                return Ok(());
            }
            // A transport checksum the decompressor computed over the damaged payload is in
            // the check: only a damage that leaves it as it was passes, and the packet's own
            // checksum verifies as the original's did.
            if transport_checksum_verifies(out) {
                t.checksum_collisions += 1;
                return Ok(());
            }
        }
        if ours != theirs
            && ours.as_deref().map(other::header_check)
                == theirs.as_deref().map(other::header_check)
        {
            t.check_collisions += 1;
            return Ok(());
        }
        if self.full_header_damaged[to] {
            t.after_full_header_damage += 1;
            return Ok(());
        }
        Err(format!(
            "{trial:?} {kind:?} frame (sent as {sent_kind:?}) delivered wrong by decompressor \
             {to}\n  frame:     {}\n  original:  {}\n  delivered: {}",
            short_hex(frame),
            short_hex(origin),
            short_hex(out)
        ))
    }
}

/// Runs one case through one variant.
fn run_non_tcp(variant: &Variant, case: &NonTcpCase) -> Result<NonTcpTally, String> {
    let mut traffic_rng = Rng(case.seed);
    let mut rng = Rng(case.seed.rotate_left(23) ^ 0x00C0_FFEE);
    let mut flows: [Vec<FlowState>; 2] = [0, 1].map(|link| {
        case.link_flows(link)
            .into_iter()
            .map(|f| FlowState::new(f, &mut traffic_rng))
            .collect()
    });
    let mut links = Links {
        compressors: [variant.compressor(), variant.compressor()],
        decompressors: [variant.decompressor(), variant.decompressor()],
        full_header_damaged: [false; 2],
        tally: NonTcpTally {
            cases: 1,
            ..NonTcpTally::default()
        },
        out: Vec::new(),
    };
    let (mut frame, mut feedback) = (Vec::new(), Vec::new());
    let mut burst_left = 0u32;
    for (step, &(flow, link)) in case.events.iter().enumerate() {
        let now = std::time::Duration::from_millis(20 * step as u64);
        for c in &mut links.compressors {
            c.set_time(now);
        }
        for d in &mut links.decompressors {
            d.set_time(now);
        }
        let n = flows[link].len();
        let packets = flows[link][flow % n].next_packets(&mut traffic_rng);
        for packet in &packets {
            links.tally.packets += 1;
            let kind = links.compressors[link].compress(packet, &mut frame);
            links.tally.frames_by_family[usize::from(kind.family().to_byte())] += 1;
            if kind == FrameKind::Ip && frame != *packet {
                return Err(format!(
                    "{}: TYPE_IP frame differs from its packet {}",
                    variant.name,
                    short_hex(packet)
                ));
            }
            let context = |e: String| {
                format!(
                    "{}: step {step}, link {link}, flow {:?}: {e}",
                    variant.name,
                    flows[link][flow % n].flow
                )
            };
            if rng.chance(case.misdirect) {
                links
                    .deliver(
                        1 - link,
                        kind,
                        &frame,
                        packet,
                        Trial::Misdirected,
                        (kind, &frame),
                    )
                    .map_err(context)?;
            }
            let lost = if burst_left > 0 {
                burst_left -= 1;
                true
            } else if rng.chance(case.loss) {
                if rng.chance(case.burst) {
                    burst_left = 3 + rng.below(17) as u32;
                }
                true
            } else {
                false
            };
            if lost {
                links.tally.lost += 1;
            } else if kind != FrameKind::Ip && rng.chance(case.corrupt) {
                let (mut damaged_kind, mut damaged) = (kind, frame.clone());
                damage(&mut damaged_kind, &mut damaged, &mut rng);
                links
                    .deliver(
                        link,
                        damaged_kind,
                        &damaged,
                        packet,
                        Trial::Damaged,
                        (kind, &frame),
                    )
                    .map_err(context)?;
            } else {
                let before = links.tally.refused[Trial::Intact as usize];
                links
                    .deliver(link, kind, &frame, packet, Trial::Intact, (kind, &frame))
                    .map_err(context)?;
                if case.is_clean() && links.tally.refused[Trial::Intact as usize] > before {
                    return Err(context(format!(
                        "a clean link refused a {kind:?} frame\n  frame:  {}\n  packet: {}",
                        short_hex(&frame),
                        short_hex(packet)
                    )));
                }
            }
            for l in 0..2 {
                while links.decompressors[l].take_feedback(&mut feedback) {
                    if !rng.chance(case.feedback_loss) {
                        links.compressors[l].handle_feedback(&feedback);
                    }
                }
            }
        }
    }
    Ok(links.tally)
}

/// Runs the property over `cases` cases from a fixed seed (`TAROC_PROP_CASES` and
/// `TAROC_PROP_SEED` override them), then prints the tallies.
fn check_non_tcp(name: &str, cases: u32, seed: u64) {
    let env = |var: &str| std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok());
    let cases = env("TAROC_PROP_CASES").map_or(cases, |c| c as u32);
    let seed = env("TAROC_PROP_SEED").map_or(seed, |s| s ^ seed);
    let variants: Vec<Variant> = VARIANTS
        .iter()
        .map(|n| Variant::by_name(n).expect("the variant exists"))
        .collect();
    let totals = std::cell::RefCell::new(vec![NonTcpTally::default(); variants.len()]);
    let mut runner = TestRunner::new(config(cases, seed));
    let result = runner.run(&non_tcp_case(), |case| {
        for (variant, total) in variants.iter().zip(totals.borrow_mut().iter_mut()) {
            let t = run_non_tcp(variant, &case).map_err(TestCaseError::fail)?;
            total.add(&t);
        }
        Ok(())
    });
    let families = ["TYPE_IP", "full", "", "", "", "compressed", ""];
    for (variant, t) in variants.iter().zip(totals.borrow().iter()) {
        let frames: Vec<String> = t
            .frames_by_family
            .iter()
            .zip(families)
            .filter(|(n, _)| **n > 0)
            .map(|(n, f)| format!("{f} {n}"))
            .collect();
        eprintln!(
            "{name} [{}]: {} cases, {} packets, frames {}, lost {}; intact frames: {} exact, {} \
             refused; damaged-frame trials {} (damaged {}: {} exact, {} refused, {} wrong \
             payload where the transport checksum is not computed ({} with a transport checksum \
             that verifies), {} wrong payload the transport checksum cannot tell, {} wrong \
             full-header frames, {} arrived as replicated IR-Ns; misdirected {}: {} delivered \
             as sent, {} refused); wrong after a damaged full-header frame {}; check collisions {}",
            variant.name,
            t.cases,
            t.packets,
            frames.join(", "),
            t.lost,
            t.exact[0],
            t.refused[0],
            t.damaged_trials(),
            t.exact[1] + t.refused[1] + t.wrong_damaged(),
            t.exact[1],
            t.refused[1],
            t.payload_damage,
            t.payload_damage_unnoticed,
            t.checksum_collisions,
            t.full_header_damage,
            t.damaged_replicas,
            t.exact[2] + t.refused[2],
            t.exact[2],
            t.refused[2],
            t.after_full_header_damage,
            t.check_collisions,
        );
    }
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    for (variant, t) in variants.iter().zip(totals.borrow().iter()) {
        // A 16-bit check lets about 1 in 65,536 wrong headers through: a bound far above that.
        assert!(
            t.check_collisions <= 1 + t.damaged_trials() / 1000,
            "{name} [{}]: {} wrong headers passed the check in {} damaged-frame trials",
            variant.name,
            t.check_collisions,
            t.damaged_trials()
        );
        // Damage the one's-complement sum cannot see (two flips that cancel) is rarer still.
        assert!(
            t.checksum_collisions <= 1 + t.damaged_trials() / 1000,
            "{name} [{}]: {} damaged payloads kept their transport checksum in {} damaged-frame \
             trials",
            variant.name,
            t.checksum_collisions,
            t.damaged_trials()
        );
        // The flows compress: most frames are compressed ones.
        let compressed = t.frames_by_family[usize::from(FrameKind::CompressedNonTcp.to_byte())];
        assert!(
            compressed * 2 >= t.frames_by_family.iter().sum::<usize>(),
            "{name} [{}]: few frames compressed: {:?}",
            variant.name,
            t.frames_by_family
        );
    }
}

/// Non-TCP flows, lost, damaged and misdirected frames: the exact packet or a refusal.
#[test]
fn non_tcp_frames_exact_or_refused() {
    check_non_tcp("non_tcp_frames_exact_or_refused", 160, 0x0DD_F1E5);
}
