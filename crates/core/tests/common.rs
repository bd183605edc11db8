//! Test helpers: a minimal reader for the raw-IP classic pcap files of `shared/captures/linux/`.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared captures' directory: `$TAROC_SHARED_CAPTURES` if set (the skip tests point it
/// at a missing directory), else `shared/captures` beside the checkout.
pub fn shared_captures_root() -> PathBuf {
    std::env::var_os("TAROC_SHARED_CAPTURES").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/captures"
            ))
        },
        PathBuf::from,
    )
}

/// Says that the running test skips for lack of `what`, on standard output past the test
/// harness's capture (written to the stream itself, not with `print!`), so the line shows in
/// `cargo test`'s output beside the test's `ok` without `--nocapture`.
pub fn skip_notice(what: &std::path::Path) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a capture test");
    let _ = writeln!(
        std::io::stdout(),
        "SKIPPED {test}: needs {} (absent), so it checked nothing",
        what.display()
    );
}

/// `shared/captures/NAME`, if present (else a skip notice, see [`skip_notice`]).
fn shared_captures(name: &str) -> Option<PathBuf> {
    let dir = shared_captures_root().join(name);
    if dir.is_dir() {
        Some(dir)
    } else {
        skip_notice(&dir);
        None
    }
}

/// `shared/captures/linux`, if present beside the checkout.
pub fn linux_captures() -> Option<PathBuf> {
    shared_captures("linux")
}

/// The packets of a classic little-endian pcap with link type 101 (raw IP).
pub fn read_raw_ip_pcap(path: &std::path::Path) -> Vec<Vec<u8>> {
    let data = std::fs::read(path).unwrap();
    assert_eq!(
        &data[..4],
        &[0xd4, 0xc3, 0xb2, 0xa1],
        "little-endian microsecond pcap"
    );
    assert_eq!(
        u32::from_le_bytes(data[20..24].try_into().unwrap()),
        101,
        "raw IP"
    );
    let mut at = 24;
    let mut packets = Vec::new();
    while at + 16 <= data.len() {
        let caplen = u32::from_le_bytes(data[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16;
        packets.push(data[at..at + caplen].to_vec());
        at += caplen;
    }
    packets
}

/// The link direction of a packet: lower source address to higher destination is forward.
pub fn forward(packet: &[u8]) -> bool {
    let s = taroc_wire::summary::summarize(packet).unwrap();
    s.src < s.dst
}

/// `shared/captures/local` (the VJ reference captures), if present beside the checkout.
pub fn local_captures() -> Option<PathBuf> {
    shared_captures("local")
}

/// One record of a classic pcap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcapRecord {
    /// The captured bytes.
    pub data: Vec<u8>,
    /// The length of the packet on the wire (more than `data.len()` when the snaplen cut it).
    pub original_len: usize,
}

/// A classic pcap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcap {
    /// The LINKTYPE of every record.
    pub link_type: u32,
    /// The records, in file order.
    pub records: Vec<PcapRecord>,
}

/// Reads a classic pcap file of either byte order, with micro- or nanosecond timestamps.
pub fn read_pcap(path: &std::path::Path) -> Pcap {
    let data = std::fs::read(path).unwrap();
    let what = path.display();
    assert!(data.len() >= 24, "{what}: shorter than a pcap header");
    let big_endian = match data[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => false,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => true,
        _ => panic!("{what}: not a classic pcap file"),
    };
    let u32_at = |at: usize| {
        let b: [u8; 4] = data[at..at + 4].try_into().unwrap();
        if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let link_type = u32_at(20) & 0x0FFF_FFFF;
    let mut records = Vec::new();
    let mut at = 24;
    while at < data.len() {
        assert!(at + 16 <= data.len(), "{what}: record header cut at {at}");
        let captured = u32_at(at + 8) as usize;
        let original_len = u32_at(at + 12) as usize;
        at += 16;
        assert!(
            at + captured <= data.len(),
            "{what}: record data cut at {at}"
        );
        records.push(PcapRecord {
            data: data[at..at + captured].to_vec(),
            original_len,
        });
        at += captured;
    }
    Pcap { link_type, records }
}

/// Writes a classic little-endian microsecond pcap of `link_type`; record `i` gets the
/// timestamp `i` ms.
pub fn write_pcap(path: &std::path::Path, link_type: u32, records: &[PcapRecord]) {
    let mut out = Vec::new();
    out.extend_from_slice(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0]);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&link_type.to_le_bytes());
    for (i, record) in records.iter().enumerate() {
        out.extend_from_slice(&((i / 1000) as u32).to_le_bytes());
        out.extend_from_slice(&((i % 1000 * 1000) as u32).to_le_bytes());
        out.extend_from_slice(&(record.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(record.original_len as u32).to_le_bytes());
        out.extend_from_slice(&record.data);
    }
    std::fs::write(path, out).unwrap();
}

/// The IPv4 packet of an untagged Ethernet II frame, zero-filled up to its IP Total Length when
/// the capture cut it short, and how many of its bytes were captured; `None` for other frames.
pub fn ethernet_ipv4_zero_filled(frame: &[u8]) -> Option<(Vec<u8>, usize)> {
    if frame.len() < 14 + 20 || frame[12..14] != [0x08, 0x00] || frame[14] >> 4 != 4 {
        return None;
    }
    let ip = &frame[14..];
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let captured = ip.len().min(total);
    let mut packet = ip[..captured].to_vec();
    packet.resize(total.max(captured), 0);
    Some((packet, captured))
}

/// What a capture's round trip through a compressor/decompressor pair per direction gave, with
/// the compressors' statistics (of type `S`).
pub struct Outcome<S = taroc_core::taroc::TarocStats> {
    /// Packets in the capture.
    pub packets: usize,
    /// Packets delivered (each equal to its original).
    pub delivered: usize,
    /// Intact frames refused for context damage.
    pub damaged: usize,
    /// Header bytes on the link: frames with their kind byte, less the payloads.
    pub link_header_bytes: usize,
    /// Each direction's compressor statistics.
    pub stats: [S; 2],
}

/// Runs `packets` through `comp` and `decomp` (index 0 for packets [`forward`], 1 for the
/// others); `lose(i)` drops frame i. Every delivered packet must be the original byte for
/// byte, every refusal context damage, every TYPE_IP frame the packet itself; `stats` reads a
/// compressor's statistics at the end.
pub fn round_trip<C, D, S>(
    packets: &[Vec<u8>],
    mut comp: [C; 2],
    mut decomp: [D; 2],
    stats: impl Fn(&C) -> S,
    mut lose: impl FnMut(usize) -> bool,
) -> Outcome<S>
where
    C: taroc_core::Compressor,
    D: taroc_core::Decompressor,
{
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let (mut delivered, mut damaged, mut link_bytes, mut payload_bytes) = (0, 0, 0, 0);
    for (i, packet) in packets.iter().enumerate() {
        let dir = usize::from(!forward(packet));
        let kind = comp[dir].compress(packet, &mut frame);
        // Summed apart: a frame can be shorter than what `summarize` calls payload (an ICMP
        // echo's header is compressed too).
        payload_bytes += taroc_wire::summary::summarize(packet).map_or(0, |s| s.payload_len);
        link_bytes += frame.len() + 1;
        if kind == taroc_core::FrameKind::Ip {
            assert_eq!(frame, *packet);
        }
        if lose(i) {
            continue;
        }
        match decomp[dir].decompress(kind, &frame, &mut out) {
            Ok(()) => {
                assert_eq!(out, *packet, "packet {i} ({kind:?}) delivered wrong");
                delivered += 1;
            }
            Err(reason) => {
                assert!(reason.is_context_damage(), "packet {i}: {reason:?}");
                damaged += 1;
            }
        }
    }
    Outcome {
        packets: packets.len(),
        delivered,
        damaged,
        link_header_bytes: link_bytes - payload_bytes,
        stats: [stats(&comp[0]), stats(&comp[1])],
    }
}
