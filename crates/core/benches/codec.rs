//! Per-packet cost of compression and decompression on the Linux captures a–h.
//!
//! `cargo bench -p taroc-core --bench codec`. For each capture, every benchmark processes the
//! whole capture per iteration and reports time per packet (throughput in packets):
//! - `memcpy`: copy each packet into a reused buffer, the denominator of every ratio;
//! - `verified_copy`: each packet copied twice (into a frame, out of it) and its TCP or UDP
//!   checksum verified on the second copy, with no header coding at all: the byte work of a
//!   scheme whose decompressor verifies the checksum before it delivers (as taroc-plus's does,
//!   whose compressor also checks its input; VJ checks nothing), the floor
//!   under taroc-plus's compress + decompress;
//! - `<scheme>/compress`: fresh compressors of every scheme per iteration (one per link
//!   direction);
//! - `<scheme>/decompress` (vj, iphc, taroc, taroc-plus): fresh decompressors per iteration, on
//!   the frames fresh compressors made.
//!
//! The speed target for taroc-plus is compress + decompress at most 3× VJ's, both from one run.
//!
//! With `CODEC_CPU_TIME=1` in the environment the benchmarks measure the thread's time on the
//! CPU (Linux's `/proc/thread-self/schedstat`, advanced at scheduler ticks) instead of wall
//! time: on a machine shared with other work, wall time also counts the time other processes
//! held the core, which swings from run to run.
//!
//! The captures live beside the checkout in `shared/captures/linux`; without them this benches
//! nothing.

use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/common.rs"]
mod common;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{BenchmarkId, Criterion, Throughput};
use taroc_core::SchemeConfig;
use taroc_core::{AnyCompressor, AnyDecompressor, Compressor, Decompressor, FrameKind, Scheme};
use taroc_wire::ip::transport_checksum_ok;

const CAPTURES: [&str; 8] = [
    "a_bulk_v4_default.pcap",
    "b_bulk_v4_nots.pcap",
    "c_bulk_v4_nosack.pcap",
    "d_bulk_v6_default.pcap",
    "e_interactive_v4.pcap",
    "f_many_flows_v4.pcap",
    "g_reorder_v4.pcap",
    "h_mixed_v4.pcap",
];

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

/// The benchmark thread's time on the CPU.
struct CpuTime;

/// Nanoseconds the calling thread has run, as the scheduler counts them.
fn thread_cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat")
        .expect("CODEC_CPU_TIME needs Linux's /proc/thread-self/schedstat");
    stat.split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .expect("schedstat starts with the run time in ns")
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = Duration;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }

    fn end(&self, start: u64) -> Duration {
        Duration::from_nanos(thread_cpu_ns().saturating_sub(start))
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        static WALL: WallTime = WallTime;
        WALL.formatter()
    }
}

fn codec<M: Measurement>(crit: &mut Criterion<M>) {
    let Some(dir) = common::linux_captures() else {
        return;
    };
    let config = SchemeConfig::default();
    for name in CAPTURES {
        let packets: Vec<(usize, Vec<u8>)> = common::read_raw_ip_pcap(&dir.join(name))
            .into_iter()
            .map(|p| (usize::from(!common::forward(&p)), p))
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

        let verified = packets
            .iter()
            .filter(|(_, p)| transport_checksum_ok(p) == Some(true))
            .count();
        eprintln!("{label}: {verified} of {n} packets have a TCP or UDP checksum that verifies");
        group.bench_function("verified_copy", |b| {
            let (mut frame, mut out) = (Vec::with_capacity(2048), Vec::with_capacity(2048));
            b.iter(|| {
                for (_, p) in &packets {
                    frame.clear();
                    frame.extend_from_slice(p);
                    out.clear();
                    out.extend_from_slice(black_box(&frame));
                    black_box(transport_checksum_ok(&out));
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

        for scheme in [Scheme::Vj, Scheme::Iphc, Scheme::Taroc, Scheme::Plus] {
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

fn main() {
    if std::env::var_os("CODEC_CPU_TIME").is_some() {
        codec(
            &mut Criterion::default()
                .with_measurement(CpuTime)
                .configure_from_args(),
        );
    } else {
        codec(&mut Criterion::default().configure_from_args());
    }
    Criterion::default().configure_from_args().final_summary();
}
