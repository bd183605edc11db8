//! temporary: frames of a capture in hex
use std::process::ExitCode;
mod common;
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let packets = match common::packets(&args[0]) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let mut d = common::Directions::new();
    for (i, p) in packets.iter().enumerate() {
        let plen = p.len();
        let before: Vec<u64> = taroc_core::taroc::stats::Why::ALL
            .iter()
            .map(|w| d.compressors.iter().map(|c| c.stats().frames(*w)).sum())
            .collect();
        let notes0: u64 = d.compressors.iter().map(|c| c.stats().scaling_notes).sum();
        let (kind, frame) = d.compress(p);
        let frame = frame.to_vec();
        let notes1: u64 = d.compressors.iter().map(|c| c.stats().scaling_notes).sum();
        let why: Vec<&str> = taroc_core::taroc::stats::Why::ALL
            .iter()
            .enumerate()
            .filter(|(j, w)| {
                d.compressors
                    .iter()
                    .map(|c| c.stats().frames(**w))
                    .sum::<u64>()
                    > before[*j]
            })
            .map(|(_, w)| w.name())
            .collect();
        let why = format!(
            "{}{}",
            why.join(","),
            if notes1 > notes0 { "+note" } else { "" }
        );
        let ihl = if p[0] >> 4 == 4 {
            usize::from(p[0] & 15) * 4
        } else {
            40
        };
        let th = if p.len() > ihl + 12 && (p[0] >> 4 == 6 || p[9] == 6) {
            usize::from(p[ihl + 12] >> 4) * 4
        } else {
            0
        };
        let pay = plen - ihl - th;
        let show = (frame.len() - pay.min(frame.len())).min(48);
        let hex: Vec<String> = frame[..show].iter().map(|b| format!("{b:02x}")).collect();
        println!("{i:4} {:?} {} {} {}", kind, frame.len(), why, hex.join(" "));
    }
    ExitCode::SUCCESS
}
