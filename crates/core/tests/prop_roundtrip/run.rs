//! Running a case.

use super::*;

/// A frame on the link: what the compressor made of packet `origin`, perhaps damaged on purpose.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub(crate) kind: FrameKind,
    pub(crate) bytes: Vec<u8>,
    pub(crate) origin: usize,
    pub(crate) corrupted: bool,
}

/// Damages a frame: flips 1 to 3 bytes, truncates it, or changes its kind (never to TYPE_IP).
pub(crate) fn corrupt(frame: &mut Frame, rng: &mut Rng) {
    frame.corrupted = true;
    match rng.below(8) {
        0 if frame.bytes.len() > 1 => {
            let at = rng.below(frame.bytes.len() as u64) as usize;
            frame.bytes.truncate(at);
        }
        1 => {
            frame.kind = match frame.kind {
                FrameKind::CompressedTcp => FrameKind::UncompressedTcp,
                _ => FrameKind::CompressedTcp,
            }
        }
        _ => {
            for _ in 0..=rng.below(3) {
                if frame.bytes.is_empty() {
                    break;
                }
                // Headers are where the damage matters: aim there most of the time.
                let span = if rng.chance(700) {
                    frame.bytes.len().min(64)
                } else {
                    frame.bytes.len()
                };
                let at = rng.below(span as u64) as usize;
                frame.bytes[at] ^= 1 + rng.below(255) as u8;
            }
        }
    }
}

/// What one link did.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally {
    pub(crate) frames: usize,
    pub(crate) delivered: usize,
    pub(crate) compressed: usize,
    /// Corrupted frames delivered equal to the original (the damage hit nothing or was undone).
    pub(crate) corrupted_ok: usize,
    /// Corrupted frames delivered differing only in header bits no checksum covers
    /// ([`known_weakness_ecn_flag_of_uncompressed_tcp_is_unverified`]).
    pub(crate) corrupted_uncovered: usize,
    /// Corrupted frames delivered differing in bits the TCP checksum covers: compensating errors
    /// ([`known_weakness_compensating_bit_errors_pass_the_tcp_checksum`]).
    pub(crate) corrupted_covered: usize,
    /// Intact frames delivered differing only in unverifiable bits, after a corrupted frame was
    /// accepted (and may have damaged the context).
    pub(crate) propagated_uncovered: usize,
    /// Intact frames delivered differing in covered bits after a corrupted frame was accepted.
    pub(crate) propagated_covered: usize,
    /// Frames delivered differing only in the IPv4 IP-ID on an impaired link:
    /// the known bug of [`known_bug_reordered_duplicate_ack_gets_wrong_ip_id`], tolerated unless
    /// `TAROC_PROP_STRICT` is set.
    pub(crate) known_ip_id: usize,
    /// Frames dropped on a clean link after impairments before the compressor.
    pub(crate) clean_drops: usize,
    /// VJ only (RFC 1144 does not verify what it rebuilds): packets delivered wrong after the
    /// link lost, reordered, duplicated or corrupted frames.
    pub(crate) unverified_wrong: usize,
    /// Of those, the ones that differ from the original only in the IPv4 Identification.
    pub(crate) unverified_wrong_ip_id: usize,
    /// Of those, the ones delivered after an accepted corrupted frame.
    pub(crate) unverified_wrong_after_corruption: usize,
    /// Of the rest, the ones whose TCP/UDP checksum still verifies (the receiver would accept
    /// them).
    pub(crate) unverified_wrong_undetected: usize,
}

/// Whether `packet` parses as IP and its TCP/UDP checksum verifies.
pub(crate) fn transport_verifies(packet: &[u8]) -> bool {
    let Ok(ip) = taroc_wire::ip::IpInfo::parse(packet) else {
        return false;
    };
    let end = ip.declared_len.min(packet.len());
    !ip.fragment
        && (ip.protocol == TCP || ip.protocol == UDP)
        && packet.get(ip.transport_offset..end).is_some_and(|segment| {
            taroc_wire::checksum::transport_verifies(ip.src, ip.dst, ip.protocol, segment)
        })
}

/// Whether the two IPv4 packets differ at most in Identification (and so header checksum).
pub(crate) fn differ_only_in_ip_id(a: &[u8], b: &[u8]) -> bool {
    // The Identification and header checksum of every IPv4 header, the inner ones of an
    // IP-in-IP packet included (no checksum the decompressors verify covers them).
    let mask = |p: &[u8]| {
        let mut p = p.to_vec();
        let mut at = 0;
        loop {
            let next = match p.get(at).map(|b| b >> 4) {
                Some(4) if p.len() >= at + 20 => {
                    p[at + 4..at + 6].fill(0);
                    p[at + 10..at + 12].fill(0);
                    let next = p[at + 9];
                    at += usize::from(p[at] & 0x0F) * 4;
                    next
                }
                Some(6) if p.len() >= at + 40 => {
                    let next = p[at + 6];
                    at += 40;
                    next
                }
                _ => break,
            };
            if next != 4 && next != 41 {
                break;
            }
        }
        p
    };
    mask(a) == mask(b)
}

pub(crate) fn strict() -> bool {
    std::env::var_os("TAROC_PROP_STRICT").is_some()
}

/// The header bits a receiver cannot check: IPv4 TOS, Identification and header checksum (the
/// decompressor computes the latter itself), IPv6 traffic class, flow label and hop limit.
pub(crate) fn mask_unverifiable(packet: &[u8]) -> Vec<u8> {
    let mut p = packet.to_vec();
    match p.first().map(|b| b >> 4) {
        Some(4) if p.len() >= 20 => {
            p[1] = 0;
            p[4..6].fill(0);
            p[10..12].fill(0);
        }
        Some(6) if p.len() >= 40 => {
            p[0] &= 0xF0;
            p[1..4].fill(0);
            p[7] = 0;
        }
        _ => {}
    }
    p
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// [`hex`], cut to the first 96 bytes (failure messages of long packets stay readable).
pub(crate) fn short_hex(bytes: &[u8]) -> String {
    let mut s = hex(&bytes[..bytes.len().min(96)]);
    if bytes.len() > 96 {
        s.push_str("...");
    }
    s
}

/// Runs one scheme over one link's packets; `Err` describes the first violation.
pub(crate) fn run_link(
    scheme: Scheme,
    config: &SchemeConfig,
    packets: &[Vec<u8>],
    link: Impairment,
    corrupt_frames: u8,
    must_deliver_all: bool,
    rng: &mut Rng,
) -> Result<Tally, String> {
    let r = run_link_inner(
        scheme,
        config,
        packets,
        link,
        corrupt_frames,
        must_deliver_all,
        rng,
    );
    if let (Err(_), Some(path)) = (&r, std::env::var_os("TAROC_PROP_DUMP")) {
        let text: String = packets.iter().map(|p| hex(p) + "\n").collect();
        std::fs::write(path, format!("{:?} {link:?}\n{text}", config.taroc)).unwrap();
    }
    r
}

pub(crate) fn run_link_inner(
    scheme: Scheme,
    config: &SchemeConfig,
    packets: &[Vec<u8>],
    link: Impairment,
    corrupt_frames: u8,
    must_deliver_all: bool,
    rng: &mut Rng,
) -> Result<Tally, String> {
    let mut c = AnyCompressor::new(scheme, config);
    let mut d = AnyDecompressor::new(scheme, config);
    let mut frames = Vec::with_capacity(packets.len());
    for (origin, packet) in packets.iter().enumerate() {
        let mut bytes = Vec::new();
        let kind = c.compress(packet, &mut bytes);
        if kind == FrameKind::Ip && bytes != *packet {
            return Err(format!(
                "{scheme}: TYPE_IP frame {origin} differs from its packet"
            ));
        }
        frames.push(Frame {
            kind,
            bytes,
            origin,
            corrupted: false,
        });
    }
    let mut tally = Tally {
        compressed: frames
            .iter()
            .filter(|f| f.kind == FrameKind::CompressedTcp)
            .count(),
        ..Tally::default()
    };
    let mut frames = link.apply(frames, rng);
    let corruptible: Vec<usize> = (0..frames.len())
        .filter(|&i| frames[i].kind != FrameKind::Ip)
        .collect();
    for _ in 0..corrupt_frames {
        if corruptible.is_empty() {
            break;
        }
        let i = corruptible[rng.below(corruptible.len() as u64) as usize];
        corrupt(&mut frames[i], rng);
    }
    let clean = link.is_clean() && corrupt_frames == 0;
    let mut damaged_context = false;
    let mut out = Vec::new();
    tally.frames = frames.len();
    for (at, f) in frames.iter().enumerate() {
        let original = &packets[f.origin];
        match d.decompress(f.kind, &f.bytes, &mut out) {
            Ok(()) => {
                tally.delivered += 1;
                // A corrupted frame the decompressor accepted may have changed its context.
                damaged_context |= f.corrupted;
                if out == *original {
                    tally.corrupted_ok += usize::from(f.corrupted);
                    continue;
                }
                if scheme == Scheme::Vj && !clean {
                    tally.unverified_wrong += 1;
                    if differ_only_in_ip_id(&out, original) {
                        // RFC 1144 infers an unsent IP-ID delta as +1, which a lost or
                        // duplicated frame makes wrong; no checksum covers the IP-ID.
                        tally.unverified_wrong_ip_id += 1;
                    } else if damaged_context {
                        // After an accepted corrupted frame, anything goes.
                        tally.unverified_wrong_after_corruption += 1;
                    } else {
                        tally.unverified_wrong_undetected += usize::from(transport_verifies(&out));
                    }
                    continue;
                }
                if !strict() && damaged_context {
                    let uncovered = mask_unverifiable(&out) == mask_unverifiable(original);
                    *match (f.corrupted, uncovered) {
                        (true, true) => &mut tally.corrupted_uncovered,
                        (true, false) => &mut tally.corrupted_covered,
                        (false, true) => &mut tally.propagated_uncovered,
                        (false, false) => &mut tally.propagated_covered,
                    } += 1;
                    continue;
                }
                if !strict() && !link.is_clean() && differ_only_in_ip_id(&out, original) {
                    tally.known_ip_id += 1;
                    continue;
                }
                return Err(format!(
                    "{scheme}: link frame {at} (packet {}, {:?}{}) delivered wrong\n  frame:     {}\n  original:  {}\n  delivered: {}",
                    f.origin,
                    f.kind,
                    if f.corrupted { ", corrupted" } else { "" },
                    short_hex(&f.bytes),
                    short_hex(original),
                    short_hex(&out)
                ));
            }
            Err(_) if clean && !must_deliver_all => tally.clean_drops += 1,
            Err(reason) if clean => {
                return Err(format!(
                    "{scheme}: clean link, frame {at} (packet {}, {:?}) dropped: {reason:?}\n  frame: {}",
                    f.origin,
                    f.kind,
                    short_hex(&f.bytes)
                ));
            }
            // A refused frame leaves the decompressor as it was.
            Err(_) => {}
        }
    }
    Ok(tally)
}

/// Runs a case through every scheme; returns the tallies of every link.
pub(crate) fn run_case(case: &Case) -> Result<Vec<(Scheme, Tally)>, String> {
    let packets = traffic(&case.specs, &case.events, case.seed);
    // Every TCP packet the model builds (but SYNs) must be one TAROC can carry.
    for (i, p) in packets.iter().enumerate() {
        let ip = taroc_wire::ip::IpInfo::parse(&p.bytes)
            .map_err(|e| format!("model packet {i} does not parse: {e}"))?;
        if ip.protocol == TCP && p.bytes[ip.transport_offset + 13] & tcpf::SYN == 0 {
            TcpIpPacket::parse(&p.bytes).ok_or_else(|| {
                format!(
                    "model packet {i} is not a valid TCP/IP packet: {}",
                    hex(&p.bytes)
                )
            })?;
        }
    }
    let mut rng = Rng(case.seed ^ 0xA5A5_5A5A_1234_8765);
    let offered = case.before.apply(packets, &mut rng);
    let links: Vec<Vec<Vec<u8>>> = match case.layout {
        Layout::Shared => vec![offered.into_iter().map(|p| p.bytes).collect()],
        Layout::PerDirection => (0..2)
            .map(|dir| {
                offered
                    .iter()
                    .filter(|p| p.dir == dir)
                    .map(|p| p.bytes.clone())
                    .collect()
            })
            .collect(),
    };
    let config = SchemeConfig {
        taroc: case.taroc.clone(),
        plus: plus_config(&case.taroc, case.seed),
        ..SchemeConfig::default()
    };
    let mut tallies = Vec::new();
    for scheme in Scheme::ALL {
        for (l, packets) in links.iter().enumerate() {
            // The same link impairments for every scheme.
            let mut link_rng = Rng(case.seed.rotate_left(17) ^ l as u64);
            let t = run_link(
                scheme,
                &config,
                packets,
                case.link,
                case.corrupt,
                // A clean link delivers every frame, whatever happened before the compressor.
                true,
                &mut link_rng,
            )?;
            tallies.push((scheme, t));
        }
    }
    Ok(tallies)
}
