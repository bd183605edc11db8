//! Forged frames: what an attacker (or a confused peer) on the link between two UDP gateways
//! could send to poison a decompressor's contexts.
//!
//! Where each scheme carries the context identifier (CID) of a TCP context:
//!
//! | scheme | frame kind | CID |
//! |---|---|---|
//! | TAROC | `UNCOMPRESSED_TCP` | the IP packet, its first length field holding [flags, CID] |
//! | TAROC, IPHC | `COMPRESSED_TCP` (IPHC also `COMPRESSED_TCP_NODELTA`) | the first octet |
//! | IPHC | `FULL_HEADER` of TCP | the IP packet, its first length field holding [0, CID] |
//! | VJ | `UNCOMPRESSED_TCP` | the IPv4 protocol field (octet 9) |
//! | VJ | `COMPRESSED_TCP` | the octet after the change mask, when its C bit is set |
//!
//! The first length field is the IPv4 Total Length (octets 2-3) or the IPv6 Payload Length
//! (octets 4-5). NONE has no contexts: every frame is `TYPE_IP`. `taroc-plus`'s IR, compact IR
//! and packed IR frames are read and moved through their frames' views
//! (`taroc_core::plus::{ir, compact, packed}`); its IR-R frames carry the CID in their second
//! octet.
//!
//! The frames are made by a fresh compressor of the victim's scheme from the packets of a
//! *foreign* TCP flow (another host of the victim's subnet to the victim), so they are what
//! that scheme really sends, then moved to the CID under attack. A forged `TYPE_IP` frame is a
//! UDP datagram from that host to [`PROBE_PORT`] of the victim, to see whether it gets in.

use std::net::IpAddr;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use taroc_core::plus::compact::CompactIr;
use taroc_core::plus::format;
use taroc_core::plus::ir::IrFrame;
use taroc_core::plus::ir_r::{self, IrR};
use taroc_core::plus::packed::PackedIr;
use taroc_core::variant::Variant;
use taroc_core::vj::format::NEW_C;
use taroc_core::{Compressor, FrameKind, Scheme};
use taroc_wire::checksum::Sum;
use taroc_wire::protocol;
use taroc_wire::tcp::flags;

/// The UDP port of the victim that forged `TYPE_IP` probes are sent to.
pub const PROBE_PORT: u16 = 5300;

/// The payload of a forged `TYPE_IP` probe.
pub const PROBE_PAYLOAD: &[u8] = b"taroc forged TYPE_IP probe";

/// The TCP source port of the foreign flow.
const FOREIGN_PORT: u16 = 40_000;

/// The TCP destination port of the foreign flow (the transfer's, to look plausible).
const VICTIM_PORT: u16 = 5201;

/// Packets of the foreign flow fed to the compressor that makes the templates.
const FOREIGN_PACKETS: u32 = 8;

/// Where the CID octet of a frame is, if the frame names a TCP context.
fn cid_offset(scheme: Scheme, kind: FrameKind, frame: &[u8]) -> Option<usize> {
    let ip_length_field = || match frame.first()? >> 4 {
        4 if frame.len() >= 20 => Some(3),
        6 if frame.len() >= 40 => Some(5),
        _ => None,
    };
    let is_tcp = || match frame.first()? >> 4 {
        4 => frame.get(9).map(|&p| p == protocol::TCP),
        6 => frame.get(6).map(|&p| p == protocol::TCP),
        _ => None,
    };
    let offset = match (scheme, kind) {
        (Scheme::Taroc, FrameKind::UncompressedTcp) => ip_length_field()?,
        (Scheme::Iphc, FrameKind::FullHeader) if is_tcp()? => ip_length_field()?,
        (Scheme::Taroc, FrameKind::CompressedTcp)
        | (Scheme::Iphc, FrameKind::CompressedTcp | FrameKind::CompressedTcpNoDelta) => 0,
        (Scheme::Vj, FrameKind::UncompressedTcp) if frame.len() >= 20 => 9,
        (Scheme::Vj, FrameKind::CompressedTcp) if frame.first()? & NEW_C != 0 => 1,
        _ => return None,
    };
    (offset < frame.len()).then_some(offset)
}

/// The CID of a `taroc-plus` IR, IR-R, compact IR or packed IR, read through its frame's view.
fn plus_cid(kind: FrameKind, frame: &[u8]) -> Option<u8> {
    match kind {
        FrameKind::Profile(k) if ir_r::mode(k).is_some() => {
            let mode = ir_r::mode(k)?;
            IrR::parse(mode, frame).ok().map(|f| f.cid)
        }
        FrameKind::Profile(format::IR) => IrFrame::new_checked(frame).ok().map(|f| f.cid()),
        FrameKind::Profile(format::COMPACT_IR) => CompactIr::new_checked(frame).map(|f| f.cid()),
        FrameKind::Profile(format::PACKED_IR) => PackedIr::new_checked(frame).ok().map(|f| f.cid()),
        _ => None,
    }
}

/// `frame`, a `taroc-plus` IR, IR-R, compact IR or packed IR (whose CIDs
/// go up to 31), moved to context `cid` through its frame's view; `None` for a frame of another
/// kind or a CID its kind cannot name.
fn plus_with_cid(kind: FrameKind, frame: &[u8], cid: u8) -> Option<Vec<u8>> {
    if let FrameKind::Profile(k) = kind {
        if let Some(mode) = ir_r::mode(k) {
            let moved = IrR {
                cid,
                ..IrR::parse(mode, frame).ok()?
            };
            let mut out = Vec::with_capacity(frame.len());
            moved.emit(&mut out);
            return Some(out);
        }
    }
    let mut out = frame.to_vec();
    match kind {
        FrameKind::Profile(format::IR) => IrFrame::new_checked(&mut out[..]).ok()?.set_cid(cid),
        FrameKind::Profile(format::COMPACT_IR) => {
            CompactIr::new_checked(&mut out[..])?.set_cid(cid)
        }
        FrameKind::Profile(format::PACKED_IR) if cid < 32 => {
            PackedIr::new_checked(&mut out[..]).ok()?.set_cid(cid)
        }
        _ => return None,
    }
    Some(out)
}

/// The TCP context a frame of `scheme` names, if it names one explicitly.
pub fn cid_of(scheme: Scheme, kind: FrameKind, frame: &[u8]) -> Option<u8> {
    if scheme == Scheme::Plus {
        if let Some(cid) = plus_cid(kind, frame) {
            return Some(cid);
        }
    }
    cid_offset(scheme, kind, frame).map(|at| frame[at])
}

/// `frame` moved to context `cid`, if frames of this kind name a TCP context in `scheme` (a VJ
/// `COMPRESSED_TCP` without a connection number gets one).
pub fn with_cid(scheme: Scheme, kind: FrameKind, frame: &[u8], cid: u8) -> Option<Vec<u8>> {
    if scheme == Scheme::Plus {
        if let Some(moved) = plus_with_cid(kind, frame, cid) {
            return Some(moved);
        }
    }
    let mut out = frame.to_vec();
    if scheme == Scheme::Vj
        && kind == FrameKind::CompressedTcp
        && cid_offset(scheme, kind, frame).is_none()
    {
        *out.first_mut()? |= NEW_C;
        out.insert(1, cid);
        return Some(out);
    }
    out[cid_offset(scheme, kind, frame)?] = cid;
    Some(out)
}

/// Another host of `victim`'s subnet (the last octet 77).
pub fn foreign_host(victim: IpAddr) -> IpAddr {
    match victim {
        IpAddr::V4(v4) => {
            let mut octets = v4.octets();
            octets[3] = 77;
            IpAddr::from(octets)
        }
        IpAddr::V6(v6) => {
            let mut octets = v6.octets();
            octets[15] = 0x77;
            IpAddr::from(octets)
        }
    }
}

/// An IP packet from `src` to `dst` carrying `transport` of `protocol`, whose checksum (at
/// `checksum_at` in `transport`) is filled in; IPv4 with DF, TTL 64, identification `id`.
fn ip_packet(
    src: IpAddr,
    dst: IpAddr,
    protocol: u8,
    id: u16,
    transport: &mut [u8],
    checksum_at: usize,
) -> Vec<u8> {
    let sum = Sum::new()
        .add_pseudo_header(src, dst, protocol, transport.len() as u32)
        .add_bytes(transport)
        .checksum();
    transport[checksum_at..checksum_at + 2].copy_from_slice(&sum.to_be_bytes());
    let mut packet = Vec::with_capacity(40 + transport.len());
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = (20 + transport.len()) as u16;
            packet.extend_from_slice(&[0x45, 0]);
            packet.extend_from_slice(&total.to_be_bytes());
            packet.extend_from_slice(&id.to_be_bytes());
            packet.extend_from_slice(&[0x40, 0, 64, protocol, 0, 0]);
            packet.extend_from_slice(&s.octets());
            packet.extend_from_slice(&d.octets());
            let header = Sum::new().add_bytes(&packet).checksum();
            packet[10..12].copy_from_slice(&header.to_be_bytes());
        }
        (src, dst) => {
            let octets = |a: IpAddr| match a {
                IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
                IpAddr::V6(v6) => v6.octets(),
            };
            packet.extend_from_slice(&[0x60, 0, 0, 0]);
            packet.extend_from_slice(&(transport.len() as u16).to_be_bytes());
            packet.extend_from_slice(&[protocol, 64]);
            packet.extend_from_slice(&octets(src));
            packet.extend_from_slice(&octets(dst));
        }
    }
    packet.extend_from_slice(transport);
    packet
}

/// Packet `n` of the foreign TCP flow: 100 bytes of data, sequence numbers in order.
fn foreign_tcp(src: IpAddr, dst: IpAddr, n: u32) -> Vec<u8> {
    let mut segment = Vec::with_capacity(120);
    segment.extend_from_slice(&FOREIGN_PORT.to_be_bytes());
    segment.extend_from_slice(&VICTIM_PORT.to_be_bytes());
    segment.extend_from_slice(&(0x1000_0000u32 + 100 * n).to_be_bytes());
    segment.extend_from_slice(&0x2000_0000u32.to_be_bytes());
    segment.extend_from_slice(&[5 << 4, flags::ACK | flags::PSH]);
    segment.extend_from_slice(&[0x10, 0, 0, 0, 0, 0]); // window 4096, checksum, urgent
    segment.extend((0..100u8).map(|i| i.wrapping_add(n as u8)));
    ip_packet(src, dst, protocol::TCP, 0x4000 + n as u16, &mut segment, 16)
}

/// The forged `TYPE_IP` probe: a UDP datagram from `src` to `dst`'s [`PROBE_PORT`].
pub fn probe(src: IpAddr, dst: IpAddr) -> Vec<u8> {
    let mut datagram = Vec::with_capacity(8 + PROBE_PAYLOAD.len());
    datagram.extend_from_slice(&(FOREIGN_PORT + 1).to_be_bytes());
    datagram.extend_from_slice(&PROBE_PORT.to_be_bytes());
    datagram.extend_from_slice(&((8 + PROBE_PAYLOAD.len()) as u16).to_be_bytes());
    datagram.extend_from_slice(&[0, 0]);
    datagram.extend_from_slice(PROBE_PAYLOAD);
    ip_packet(src, dst, protocol::UDP, 0x7777, &mut datagram, 6)
}

/// A datagram as the gateways exchange them: the kind byte, then the frame.
fn datagram(kind: FrameKind, frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    taroc_gateway::endpoint::encode_frame(kind, frame, &mut out);
    out
}

/// The frames a fresh compressor of `variant` makes of the foreign flow to `victim`, in order.
pub fn templates(variant: &Variant, victim: IpAddr) -> Vec<(FrameKind, Vec<u8>)> {
    let mut compressor = variant.compressor();
    let foreign = foreign_host(victim);
    let mut frame = Vec::new();
    (0..FOREIGN_PACKETS)
        .map(|n| {
            let kind = compressor.compress(&foreign_tcp(foreign, victim, n), &mut frame);
            (kind, frame.clone())
        })
        .collect()
}

/// One forged datagram per CID in `cids` for a gateway that decompresses `variant` and serves
/// `victim`: the foreign flow's first frame (its context-setting `UNCOMPRESSED_TCP` or
/// `FULL_HEADER`) moved to that CID; then one `TYPE_IP` [`probe`].
pub fn one_per_context(variant: &Variant, victim: IpAddr, cids: &[u8]) -> Vec<Vec<u8>> {
    let templates = templates(variant, victim);
    let mut out: Vec<Vec<u8>> = templates
        .first()
        .into_iter()
        .flat_map(|(kind, frame)| {
            cids.iter()
                .filter_map(|&cid| with_cid(variant.scheme, *kind, frame, cid))
                .map(|frame| datagram(*kind, &frame))
        })
        .collect();
    out.push(datagram(
        FrameKind::Ip,
        &probe(foreign_host(victim), victim),
    ));
    out
}

/// A flood of forged datagrams for a gateway that decompresses `variant` and serves `victim`:
/// for every CID 0..=255 and every frame kind, `per_cid` frames. A kind the scheme sends on the
/// foreign flow takes its frames from there (moved to the CID; `TYPE_IP` ones unchanged);
/// any other kind gets seeded random bytes after the CID octet.
pub fn flood(variant: &Variant, victim: IpAddr, per_cid: usize, seed: u64) -> Vec<Vec<u8>> {
    let templates = templates(variant, victim);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for cid in 0..=255u8 {
        for kind in FrameKind::ALL {
            let own: Vec<&[u8]> = templates
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, frame)| frame.as_slice())
                .collect();
            for copy in 0..per_cid {
                let frame = match own.get(copy % own.len().max(1)) {
                    Some(frame) if kind == FrameKind::Ip => frame.to_vec(),
                    Some(frame) => match with_cid(variant.scheme, kind, frame, cid) {
                        Some(frame) => frame,
                        None => continue,
                    },
                    None => {
                        let mut noise = vec![0u8; 8 + (rng.next_u32() % 56) as usize];
                        rng.fill_bytes(&mut noise);
                        noise[0] = cid;
                        noise
                    }
                };
                out.push(datagram(kind, &frame));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use taroc_core::Decompressor;

    const V4: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 201, 0, 2));
    const V6: IpAddr = IpAddr::V6(Ipv6Addr::new(0xfd00, 0x7a, 0, 0, 0, 0, 0, 2));

    #[test]
    fn foreign_packets_are_valid_ip() {
        for victim in [V4, V6] {
            let packet = foreign_tcp(foreign_host(victim), victim, 3);
            let summary = taroc_wire::summary::summarize(&packet);
            assert!(summary.is_some(), "{packet:02x?}");
            let offset = if victim.is_ipv4() { 20 } else { 40 };
            assert!(taroc_wire::checksum::transport_verifies(
                foreign_host(victim),
                victim,
                protocol::TCP,
                &packet[offset..]
            ));
            let probe = probe(foreign_host(victim), victim);
            assert!(taroc_wire::checksum::transport_verifies(
                foreign_host(victim),
                victim,
                protocol::UDP,
                &probe[offset..]
            ));
        }
        let v4 = foreign_tcp(foreign_host(V4), V4, 0);
        assert!(Sum::new().add_bytes(&v4[..20]).verifies());
    }

    /// Every scheme's forged first frame, moved to CID 9, sets up context 9 in a fresh
    /// decompressor of that scheme, which then rebuilds the foreign packet.
    #[test]
    fn forged_frames_name_the_cid_they_were_moved_to() {
        for variant in Variant::all() {
            for victim in [V4, V6] {
                let templates = templates(&variant, victim);
                let (kind, first) = &templates[0];
                let Some(moved) = with_cid(variant.scheme, *kind, first, 9) else {
                    let no_cids = variant.scheme == Scheme::None
                        || (variant.scheme == Scheme::Vj && victim.is_ipv6());
                    assert!(no_cids && *kind == FrameKind::Ip, "{variant} {kind:?}");
                    continue;
                };
                assert_eq!(cid_of(variant.scheme, *kind, &moved), Some(9), "{variant}");
                let mut d = variant.decompressor();
                let mut out = Vec::new();
                assert_eq!(d.decompress(*kind, &moved, &mut out), Ok(()), "{variant}");
                assert_eq!(
                    out,
                    foreign_tcp(foreign_host(victim), victim, 0),
                    "{variant}"
                );
                // The flow's compressed frames, moved to CID 9, decompress against it.
                for (kind, frame) in &templates[1..] {
                    if let Some(moved) = with_cid(variant.scheme, *kind, frame, 9) {
                        assert_eq!(cid_of(variant.scheme, *kind, &moved), Some(9));
                        out.clear();
                        let _ = d.decompress(*kind, &moved, &mut out);
                    }
                }
            }
        }
    }

    #[test]
    fn vj_compressed_frames_get_a_connection_number() {
        let frame = [NEW_C >> 1, 0x12, 0x34, 1];
        let moved = with_cid(Scheme::Vj, FrameKind::CompressedTcp, &frame, 5).unwrap();
        assert_eq!(moved, [NEW_C | (NEW_C >> 1), 5, 0x12, 0x34, 1]);
        assert_eq!(cid_of(Scheme::Vj, FrameKind::CompressedTcp, &frame), None);
        assert_eq!(
            cid_of(Scheme::Vj, FrameKind::CompressedTcp, &moved),
            Some(5)
        );
        assert_eq!(with_cid(Scheme::None, FrameKind::Ip, &frame, 5), None);
    }

    #[test]
    fn one_per_context_and_flood_sizes() {
        let taroc = Variant::by_name("taroc").unwrap();
        let forged = one_per_context(&taroc, V4, &[0, 3]);
        assert_eq!(forged.len(), 3);
        assert_eq!(forged[0][0], FrameKind::UncompressedTcp.to_byte());
        assert_eq!(
            cid_of(Scheme::Taroc, FrameKind::UncompressedTcp, &forged[1][1..]),
            Some(3)
        );
        assert_eq!(forged[2][0], FrameKind::Ip.to_byte());
        let none = Variant::by_name("none").unwrap();
        assert_eq!(one_per_context(&none, V4, &[]).len(), 1);
        let flood = flood(&taroc, V6, 2, 1);
        assert_eq!(flood.len(), 256 * FrameKind::ALL.len() * 2);
        let kinds: std::collections::BTreeSet<u8> = flood.iter().map(|d| d[0]).collect();
        assert_eq!(kinds.len(), FrameKind::ALL.len());
    }
}
