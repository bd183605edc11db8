//! What authentication costs the UDP gateway's data path: one packet through two UDP endpoints
//! (compress, frame, [seal, open,] decompress; no sockets, no TUN), with `--insecure-no-auth`
//! framing and with 8- and 16-byte tags, measured in the same run, so the ratio to the
//! unauthenticated path is the figure to read.
//!
//! `cargo bench -p taroc-gateway --bench udp_auth`. Two packet sizes: 1500-byte TCP data
//! segments (scheme `taroc`) and 52-byte ACKs. Throughput is in packets. Also the
//! authentication alone: sealing and opening one frame of 1500 and 52 bytes, beside its floor,
//! BLAKE3 alone hashing the same bytes twice.

use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use taroc_core::variant::Variant;
use taroc_core::FrameKind;
use taroc_gateway::auth::{AuthConfig, Key, Opener, Sealer};
use taroc_gateway::endpoint::{introduce, Endpoint, EndpointConfig};
use taroc_gateway::link::LinkConfig;

/// Two endpoints with the given tag length (`None`: no authentication).
fn endpoints(tag_len: Option<usize>) -> [Endpoint; 2] {
    let taroc = Variant::by_name("taroc").expect("taroc");
    let config = EndpointConfig {
        variants: [taroc.clone(), taroc.clone()],
        link: LinkConfig {
            mtu: 1500,
            ..LinkConfig::default()
        },
        tun_mtu: 1500,
        seed: 1,
        verify_checksums: true,
        auth: tag_len.map(|tag_len| AuthConfig {
            key: Key::from_bytes([1; 32]),
            tag_len,
        }),
        may_reorder: true,
    };
    let start = 1_700_000_000_000_000_000;
    let new = |id: u64| Endpoint::new(&config, id, start).expect("endpoint");
    let (mut a, mut b) = (new(1), new(2));
    introduce([&mut a, &mut b], 0);
    [a, b]
}

/// Data segments of `payload` bytes (and their ACKs) of one TCP flow.
fn flow(payload: usize, forward: bool) -> Vec<Vec<u8>> {
    (0..4096u32)
        .map(|i| {
            let seq = 1_000 + i * 1448;
            if forward {
                common::segment(true, seq, 77, 100_000 + i / 100, i as u16, payload)
            } else {
                common::segment(false, 77, seq, 100_000 + i / 100, i as u16, 0)
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let from = true;
    for (label, packets) in [
        ("1500-byte data", flow(1448, true)),
        ("52-byte ACKs", flow(0, false)),
    ] {
        let mut group = c.benchmark_group(format!("udp path, {label}"));
        group.throughput(Throughput::Elements(1));
        group.measurement_time(Duration::from_secs(3));
        group.warm_up_time(Duration::from_secs(1));
        for (name, tag_len) in [
            ("no-auth", None),
            ("auth tag 8", Some(8)),
            ("auth tag 16", Some(16)),
        ] {
            let [mut a, mut b] = endpoints(tag_len);
            let mut datagram = Vec::with_capacity(2048);
            let mut i = 0usize;
            let mut now = 0u64;
            group.bench_function(BenchmarkId::from_parameter(name), |bencher| {
                bencher.iter(|| {
                    i = (i + 1) % packets.len();
                    now += 100_000;
                    a.packet(now, &packets[i], &mut |d: &[u8]| {
                        datagram.clear();
                        datagram.extend_from_slice(d);
                        true
                    });
                    b.datagram(
                        now,
                        from,
                        &datagram,
                        &mut |_: &[u8]| true,
                        &mut |p: &[u8]| {
                            black_box(p);
                            true
                        },
                    );
                })
            });
            // (Nothing ran if a filter left this benchmark out.)
            let received = &b.counters()[1];
            assert_eq!(received.rejected.total(), 0, "{name}: {received:?}");
            assert_eq!(received.delivered, a.counters()[0].packets_in, "{name}");
        }
        group.finish();
    }
}

fn seal_and_open(c: &mut Criterion) {
    let mut group = c.benchmark_group("seal and open");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    let config = AuthConfig {
        key: Key::from_bytes([1; 32]),
        tag_len: 8,
    };
    for len in [1500usize, 52] {
        let frame = vec![0x5au8; len];
        let mut sealer = Sealer::new(&config, 1, 1 << 60);
        sealer.set_echo(2);
        let mut opener = Opener::new(&config, 2, 1500);
        let mut datagram = Vec::with_capacity(2048);
        let mut now = 0u64;
        group.bench_function(
            BenchmarkId::from_parameter(format!("{len} bytes")),
            |bencher| {
                bencher.iter(|| {
                    now += 100_000;
                    sealer.seal(now, FrameKind::Ip, &frame, &mut datagram);
                    black_box(opener.open(&datagram).is_ok())
                })
            },
        );
        // The floor: BLAKE3 alone over the bytes a tag covers (18 before the frame), twice.
        let message = vec![0x5au8; 18 + len];
        group.bench_function(
            BenchmarkId::from_parameter(format!("{len} bytes, 2 x blake3::keyed_hash alone")),
            |bencher| {
                bencher.iter(|| {
                    let key = [1u8; 32];
                    black_box(blake3::keyed_hash(&key, black_box(&message)));
                    black_box(blake3::keyed_hash(&key, black_box(&message)))
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench, seal_and_open);
criterion_main!(benches);
