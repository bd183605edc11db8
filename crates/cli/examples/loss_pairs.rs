//! Which runs of lost frames would cost TAROC an intact packet, on a real capture?
//!
//! Takes the TCP packets one IPv4 address sent in a capture (say, the data side of a transfer
//! through `taroc gateway`, captured on its TUN device by `scripts/gateway-capture.sh`) and
//! compresses them with `taroc` (or, with `--plus`, the previous `taroc-plus` profile,
//! `TarocConfig::plus()`: the draft's format with its improvements and repairs, kept for
//! comparison; the redesigned `taroc-plus` of `taroc_core::plus` has its own format). Then, for
//! every packet *i* and every earlier packet *j* at most DEPTH back that left the decompressor
//! with a context, it gives a decompressor the state it had right after *j* (every frame up to
//! *j* delivered) and hands it the frame of *i*, as if every frame in between had been lost.
//! Prints how many such (*j*, *i*) pairs fail, by the number of frames lost in between (the last
//! bucket counts 7 or more).
//!
//! ```sh
//! cargo run --release -p taroc-cli --example loss_pairs -- CAPTURE 10.9.0.1 [DEPTH] [--plus]
//! ```

use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::ExitCode;

use taroc_core::codec::{Compressor, Decompressor, FrameKind};
use taroc_core::taroc::{TarocCompressor, TarocConfig, TarocDecompressor};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let plus = args.iter().any(|a| a == "--plus");
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let (Some(capture), Some(source)) = (positional.first(), positional.get(1)) else {
        eprintln!("usage: loss_pairs CAPTURE SOURCE_IPV4 [DEPTH] [--plus]");
        return ExitCode::FAILURE;
    };
    let Ok(source) = source.parse::<Ipv4Addr>() else {
        eprintln!("not an IPv4 address: {source}");
        return ExitCode::FAILURE;
    };
    let depth: usize = match positional.get(2).map(|d| d.parse()) {
        None => 40,
        Some(Ok(d)) => d,
        Some(Err(_)) => {
            eprintln!("DEPTH must be a number");
            return ExitCode::FAILURE;
        }
    };
    let capture = match taroc_cli::capture::read_file(Path::new(capture.as_str())) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let packets: Vec<&Vec<u8>> = capture
        .packets
        .iter()
        .filter(|p| p.len() >= 20 && p[0] >> 4 == 4 && p[9] == 6 && p[12..16] == source.octets())
        .collect();
    let config = if plus {
        TarocConfig::plus()
    } else {
        TarocConfig::default()
    };
    let mut c = TarocCompressor::new(config.clone());
    let mut d = TarocDecompressor::new(config);
    // The decompressor after each of the last DEPTH packets, all frames up to it delivered:
    // `after[k]` is the state after packet `i - after.len() + k`.
    let mut after: VecDeque<TarocDecompressor> = VecDeque::with_capacity(depth + 1);
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut failing = [0u64; 8];
    for (i, packet) in packets.iter().enumerate() {
        let kind = c.compress(packet, &mut frame);
        if kind == FrameKind::CompressedTcp {
            let cid = frame[0];
            let first = i - after.len();
            for (k, state) in after.iter().enumerate() {
                let j = first + k;
                if j + 1 == i || state.reference_of(cid).is_none() {
                    continue;
                }
                let mut state = state.clone();
                if state.decompress(kind, &frame, &mut out).is_err() || out != **packet {
                    failing[(i - j - 1).min(7)] += 1;
                }
            }
        }
        if d.decompress(kind, &frame, &mut out).is_err() {
            eprintln!("packet {i} did not survive a clean link");
            return ExitCode::FAILURE;
        }
        if after.len() == depth {
            after.pop_front();
        }
        after.push_back(d.clone());
    }
    println!(
        "{} packets from {source}, {}: failing pairs by frames lost in between (1..=6, 7+): {:?}",
        packets.len(),
        if plus { "previous taroc-plus" } else { "taroc" },
        &failing[1..]
    );
    ExitCode::SUCCESS
}
