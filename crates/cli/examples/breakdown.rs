//! Where `taroc-plus` spends its compressed-header bytes, per field, on data segments and on
//! pure ACKs apart, beside published totals of ROHC-TCP (RFC 6846, the C ROHC library in U-mode)
//! on capture a.
//!
//! Each direction of the capture (forward: source address below destination address, as
//! `taroc eval` splits them) goes through its own `taroc-plus` compressor; only CO frames are
//! counted in the field table (full headers are in `taroc eval`'s totals); a second table counts
//! every frame by the reason the compressor gave for its form, the CO frames among them that
//! carried a scaling note (a new stride or IP-ID behaviour) and the IR frames that were mirrored
//! (named the opposite direction's flow instead of sending the addresses and ports). It also
//! counts the CO frames by the bits of padding their bit field ends with, which verify a frame
//! beyond its 16-bit seal, and gives the odds a header rebuilt wrong passes both.
//!
//! ```sh
//! cargo run --release -p taroc-cli --example breakdown -- ../shared/captures/linux/a_bulk_v4_default.pcap
//! ```

use std::process::ExitCode;

use taroc_core::plus::breakdown::Field;
use taroc_core::tcp::stats::Why;

mod common;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [capture] = args.as_slice() else {
        eprintln!("usage: breakdown CAPTURE (one capture; got {})", args.len());
        return ExitCode::from(2);
    };
    let packets = match common::packets(capture) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut directions = common::Directions::new();
    for packet in &packets {
        directions.compress(packet);
    }
    let compressors = &directions.compressors;
    let bytes = |data: bool, field: Field| -> f64 {
        let n: u64 = compressors
            .iter()
            .map(|c| c.breakdown().packets(data))
            .sum();
        let sum: f64 = compressors
            .iter()
            .map(|c| c.breakdown().bytes(data, field) * c.breakdown().packets(data) as f64)
            .sum();
        sum / n.max(1) as f64
    };
    let packets = |data: bool| -> u64 {
        compressors
            .iter()
            .map(|c| c.breakdown().packets(data))
            .sum()
    };
    println!(
        "CO headers: {} data segments, {} pure ACKs (bytes per header, the kind byte included)",
        packets(true),
        packets(false)
    );
    println!("{:<16} {:>8} {:>8}", "field", "data", "ACK");
    let (mut data_total, mut ack_total) = (0.0, 0.0);
    for field in Field::ALL {
        let (d, a) = (bytes(true, field), bytes(false, field));
        data_total += d;
        ack_total += a;
        println!("{:<16} {d:>8.2} {a:>8.2}", field.name());
    }
    println!("{:<16} {data_total:>8.2} {ack_total:>8.2}", "total");
    println!(
        "{:<16} {:>8} {:>8}   (published, capture a; not measured here)",
        "ROHC-TCP U-mode", "9.3", "13.5"
    );
    // The padding bits verify a frame beyond its 16-bit seal: a header rebuilt wrong passes
    // both with odds of 2^-16 times the mean of 2^-p over the frames.
    let padded: Vec<u64> = (0..8u8)
        .map(|bits| compressors.iter().map(|c| c.breakdown().padded(bits)).sum())
        .collect();
    let frames: u64 = padded.iter().sum();
    let odds: f64 = padded
        .iter()
        .zip(0..)
        .map(|(&n, bits)| n as f64 * 0.5f64.powi(bits))
        .sum::<f64>()
        / frames.max(1) as f64;
    let counts: Vec<String> = padded.iter().map(u64::to_string).collect();
    println!(
        "CO headers by padding bits 0-7: {}; a wrong header passes seal and padding with odds 2^-16 x {odds:.3} (2^{:.2})",
        counts.join(" "),
        -16.0 + odds.log2()
    );
    println!();
    println!("{:<24} {:>8}", "frames by reason", "frames");
    for why in Why::ALL {
        let n: u64 = compressors.iter().map(|c| c.stats().frames(why)).sum();
        if n > 0 {
            println!("{:<24} {n:>8}", why.name());
        }
    }
    let notes: u64 = compressors.iter().map(|c| c.stats().scaling_notes).sum();
    println!("{:<24} {notes:>8}", "compressed with a note");
    let mirrored: u64 = compressors.iter().map(|c| c.stats().mirrored_irs).sum();
    println!("{:<24} {mirrored:>8}", "IRs that were mirrored");
    ExitCode::SUCCESS
}
