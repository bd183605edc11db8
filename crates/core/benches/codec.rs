//! Per-packet cost of compression and decompression on the bulk Linux captures.
//!
//! `cargo bench -p taroc-core --bench codec`. For each capture, every benchmark processes the
//! whole capture per iteration and reports time per packet (throughput in packets):
//! - `memcpy`: copy each packet into a reused buffer, the denominator of every ratio;
//! - `<scheme>/compress`: fresh compressors of every scheme per iteration (one per link
//!   direction);
//! - `<scheme>/decompress` (vj, iphc, taroc): fresh decompressors per iteration, on the frames
//!   fresh compressors made.
//!
//! The captures live beside the checkout in `shared/captures/linux`; without them this benches
//! nothing.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use taroc_core::codec::SchemeConfig;
use taroc_core::{AnyCompressor, AnyDecompressor, Compressor, Decompressor, FrameKind, Scheme};

const CAPTURES: [&str; 3] = [
    "a_bulk_v4_default.pcap",
    "b_bulk_v4_nots.pcap",
    "d_bulk_v6_default.pcap",
];

fn captures_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/linux");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("notice: {} is absent; no codec benchmarks", dir.display());
        None
    }
}

/// The packets of a classic little-endian microsecond pcap with link type 101 (raw IP).
fn read_raw_ip_pcap(path: &Path) -> Vec<Vec<u8>> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let le32 = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(data[..4], [0xd4, 0xc3, 0xb2, 0xa1], "little-endian pcap");
    assert_eq!(le32(20), 101, "raw IP link type");
    let mut packets = Vec::new();
    let mut at = 24;
    while at + 16 <= data.len() {
        let caplen = le32(at + 8);
        at += 16;
        packets.push(data[at..at + caplen].to_vec());
        at += caplen;
    }
    packets
}

/// 0 for packets from the lower address to the higher, else 1: one codec pair per direction.
fn direction(packet: &[u8]) -> usize {
    let s = taroc_wire::summary::summarize(packet).expect("capture packets parse");
    usize::from(s.src > s.dst)
}

/// Compresses every packet with a fresh compressor per direction.
fn compress_all(scheme: Scheme, packets: &[(usize, Vec<u8>)]) -> Vec<(usize, FrameKind, Vec<u8>)> {
    let config = SchemeConfig::default();
    let mut c = [
        AnyCompressor::new(scheme, &config),
        AnyCompressor::new(scheme, &config),
    ];
    packets
        .iter()
        .map(|(dir, p)| {
            let mut frame = Vec::new();
            let kind = c[*dir].compress(p, &mut frame);
            (*dir, kind, frame)
        })
        .collect()
}

fn codec(crit: &mut Criterion) {
    let Some(dir) = captures_dir() else {
        return;
    };
    let config = SchemeConfig::default();
    for name in CAPTURES {
        let packets: Vec<(usize, Vec<u8>)> = read_raw_ip_pcap(&dir.join(name))
            .into_iter()
            .map(|p| (direction(&p), p))
            .collect();
        let n = packets.len();
        let label = name.trim_end_matches(".pcap");
        let mut group = crit.benchmark_group(format!("codec/{label}"));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(20);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(3));

        group.bench_function("memcpy", |b| {
            let mut buf = Vec::with_capacity(2048);
            b.iter(|| {
                for (_, p) in &packets {
                    buf.clear();
                    buf.extend_from_slice(p);
                    black_box(&buf);
                }
            })
        });

        for scheme in Scheme::ALL {
            group.bench_function(BenchmarkId::new(scheme.name(), "compress"), |b| {
                let mut frame = Vec::with_capacity(2048);
                b.iter(|| {
                    let mut c = [
                        AnyCompressor::new(scheme, &config),
                        AnyCompressor::new(scheme, &config),
                    ];
                    for (dir, p) in &packets {
                        black_box(c[*dir].compress(p, &mut frame));
                        black_box(&frame);
                    }
                })
            });
        }

        for scheme in [Scheme::Vj, Scheme::Iphc, Scheme::Taroc] {
            let frames = compress_all(scheme, &packets);
            group.bench_function(BenchmarkId::new(scheme.name(), "decompress"), |b| {
                let mut out = Vec::with_capacity(2048);
                b.iter(|| {
                    let mut d = [
                        AnyDecompressor::new(scheme, &config),
                        AnyDecompressor::new(scheme, &config),
                    ];
                    for (dir, kind, frame) in &frames {
                        let r = d[*dir].decompress(*kind, frame, &mut out);
                        debug_assert!(r.is_ok());
                        black_box(r.is_ok());
                        black_box(&out);
                    }
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, codec);
criterion_main!(benches);
