//! How often each CO kind byte occurs on the frames of CIDs 1 to 32 (those whose kind byte
//! names the CID, `taroc_core::plus::cids`), pooled over the captures given, most frequent
//! first, and per CID for CIDs 1 and 2: the count that `cids::SHORT_KINDS` was fitted to on the
//! shared captures a–h.
//!
//! Each direction of a capture (forward: source address below destination address, as
//! `taroc eval` splits them) goes through its own `taroc-plus` compressor.
//!
//! ```sh
//! cargo run --release -p taroc-cli --example cid_kinds -- ../shared/captures/linux/*.pcap
//! ```

use std::collections::BTreeMap;
use std::process::ExitCode;

use taroc_core::codec::FrameKind;
use taroc_core::plus::cids;

mod common;

fn main() -> ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: cid_kinds CAPTURE...");
        return ExitCode::from(2);
    }
    // Frames per (CID, CO kind byte).
    let mut counts: BTreeMap<(u8, u8), u64> = BTreeMap::new();
    for path in &paths {
        let packets = match common::packets(path) {
            Ok(p) => p,
            Err(code) => return code,
        };
        let mut directions = common::Directions::new();
        for packet in &packets {
            if let (FrameKind::Profile(byte), frame) = directions.compress(packet) {
                if let Some((cid, co_kind, _)) = cids::read(byte, frame) {
                    *counts.entry((cid, co_kind)).or_default() += 1;
                }
            }
        }
    }
    let ranked = |keep: &dyn Fn(u8) -> bool| -> String {
        let mut by_kind: BTreeMap<u8, u64> = BTreeMap::new();
        for (&(cid, kind), &n) in &counts {
            if keep(cid) {
                *by_kind.entry(kind).or_default() += n;
            }
        }
        let mut ranked: Vec<(u8, u64)> = by_kind.into_iter().collect();
        // Most frequent first, the lower kind byte first of equals.
        ranked.sort_by_key(|&(kind, n)| (std::cmp::Reverse(n), kind));
        ranked
            .iter()
            .map(|(kind, n)| format!("{kind:02X}:{n}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("CIDs 1-{}: {}", cids::PREFIX_CIDS, ranked(&|_| true));
    println!("CID 1:     {}", ranked(&|cid| cid == 1));
    println!("CID 2:     {}", ranked(&|cid| cid == 2));
    ExitCode::SUCCESS
}
