//! Processing time per packet of each codec on the paper's traffic, beside Degermark et al.'s
//! Figure 20 (µs on a SPARCstation 5): a bulk TCP stream of 512-byte segments in IPv6, tunnelled
//! in IPv6 (100 bytes of headers) and not, with a retransmission every 50th segment (a full
//! header). Each packet is compressed and decompressed alone, timed with `Instant`; the time of
//! an empty measurement is subtracted. Run with
//! `cargo run --release -p taroc-sim --example lowloss_timing`.

use std::collections::BTreeMap;
use std::net::Ipv6Addr;
use std::time::Instant;

use taroc_core::{Compressor, Decompressor, FrameKind, Variant};
use taroc_wire::checksum::Sum;

const PACKETS: u32 = 20_000;

/// An IPv6 header of `payload` bytes with next header `next`.
fn ipv6(src: Ipv6Addr, dst: Ipv6Addr, next: u8, payload: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&[0x60, 0, 0, 0]);
    out.extend_from_slice(&(payload as u16).to_be_bytes());
    out.extend_from_slice(&[next, 64]);
    out.extend_from_slice(&src.octets());
    out.extend_from_slice(&dst.octets());
}

/// Segment `i` of the stream (a retransmission of segment `i - 10` every 50th), tunnelled or not.
fn packet(i: u32, tunnel: bool) -> Vec<u8> {
    let (a, b) = (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1),
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 3),
    );
    let n = if i % 50 == 49 { i - 10 } else { i };
    let mut tcp = Vec::with_capacity(532);
    tcp.extend_from_slice(&20u16.to_be_bytes());
    tcp.extend_from_slice(&5001u16.to_be_bytes());
    tcp.extend_from_slice(&(1000 + 512 * n).to_be_bytes());
    tcp.extend_from_slice(&77u32.to_be_bytes());
    tcp.extend_from_slice(&[0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
    tcp.extend((0..512u32).map(|k| (k ^ n) as u8));
    let sum = Sum::new()
        .add_pseudo_header(a.into(), b.into(), 6, tcp.len() as u32)
        .add_bytes(&tcp)
        .checksum();
    tcp[16..18].copy_from_slice(&sum.to_be_bytes());
    let mut p = Vec::with_capacity(620);
    if tunnel {
        ipv6(a, b, 41, 40 + tcp.len(), &mut p);
    }
    ipv6(a, b, 6, tcp.len(), &mut p);
    p.extend_from_slice(&tcp);
    p
}

fn main() {
    let overhead = {
        let mut best = u128::MAX;
        for _ in 0..1000 {
            let t = Instant::now();
            best = best.min(t.elapsed().as_nanos());
        }
        best as f64
    };
    println!("Figure 20 (paper, SPARCstation 5, µs, compressor / decompressor averages): regular 11 / 7, full 31 / 16, compressed 35 / 27");
    println!("ours, µs per packet (mean, compressor / decompressor), {PACKETS} packets:");
    for tunnel in [true, false] {
        let packets: Vec<Vec<u8>> = (0..PACKETS).map(|i| packet(i, tunnel)).collect();
        for name in [
            "none",
            "iphc-plain",
            "iphc-twice",
            "iphc",
            "taroc",
            "taroc-plus",
        ] {
            let v = Variant::by_name(name).expect("a variant");
            let (mut c, mut d) = (v.compressor(), v.decompressor());
            let mut times: BTreeMap<&str, (f64, f64, u32)> = BTreeMap::new();
            let (mut frame, mut out) = (Vec::new(), Vec::new());
            for p in &packets {
                frame.clear();
                let t = Instant::now();
                let kind = c.compress(p, &mut frame);
                let tc = t.elapsed().as_nanos() as f64 - overhead;
                out.clear();
                let t = Instant::now();
                let ok = d.decompress(kind, &frame, &mut out).is_ok();
                let td = t.elapsed().as_nanos() as f64 - overhead;
                assert!(ok && out == *p, "{name}: not delivered exactly");
                let label = match kind {
                    FrameKind::Ip => "regular",
                    FrameKind::FullHeader => "full",
                    _ => "compressed",
                };
                let e = times.entry(label).or_default();
                e.0 += tc;
                e.1 += td;
                e.2 += 1;
            }
            let cells: Vec<String> = times
                .iter()
                .map(|(k, (tc, td, n))| {
                    let n = f64::from(*n);
                    format!(
                        "{k} {:.3} / {:.3} (x{})",
                        tc / n / 1000.0,
                        td / n / 1000.0,
                        n
                    )
                })
                .collect();
            println!(
                "  {:<9} {:<11} {}",
                if tunnel { "tunnelled" } else { "IPv6" },
                name,
                cells.join(", ")
            );
        }
    }
}
