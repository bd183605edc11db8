//! Test helpers: a minimal reader for the raw-IP classic pcap files of `shared/captures/linux/`.
#![allow(dead_code)]

use std::path::PathBuf;

/// `shared/captures/linux`, if present beside the checkout.
pub fn linux_captures() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/captures/linux"
    ));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "notice: {} is absent; skipping capture tests",
            dir.display()
        );
        None
    }
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
