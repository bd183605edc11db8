//! The Internet checksum of one full-sized TCP payload (1448 bytes) against a copy of the same
//! bytes, its baseline: `cargo bench -p taroc-wire --bench checksum`. Throughput is in bytes,
//! so criterion reports each as bytes per second.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use taroc_wire::checksum::Sum;

/// An Ethernet MSS with TCP timestamps.
const PAYLOAD: usize = 1448;

fn checksum(crit: &mut Criterion) {
    let data: Vec<u8> = (0..PAYLOAD as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut group = crit.benchmark_group("checksum");
    group.throughput(Throughput::Bytes(PAYLOAD as u64));
    group.bench_function("memcpy_1448", |b| {
        let mut buf = vec![0u8; PAYLOAD];
        b.iter(|| {
            buf.copy_from_slice(black_box(&data));
            black_box(&buf);
        })
    });
    group.bench_function("add_bytes_1448", |b| {
        b.iter(|| black_box(Sum::new().add_bytes(black_box(&data))))
    });
    group.finish();
}

fn main() {
    let mut crit = Criterion::default().configure_from_args();
    checksum(&mut crit);
    crit.final_summary();
}
