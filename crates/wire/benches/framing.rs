//! Serial-line framing of one 1500-byte frame: encoding, decoding, and both, for HDLC-like
//! framing (FCS-16 and FCS-32, default ACCM) and KISS (FCS-32): `cargo bench -p taroc-wire
//! --bench framing`. Throughput is in frame bytes, so criterion reports each as bytes per
//! second. The frame's bytes are random, so about 1 in 8 is escaped by HDLC (flag, escape and
//! the 32 control characters), 1 in 128 by KISS.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use taroc_wire::fcs::Fcs;
use taroc_wire::framing::Event;
use taroc_wire::{hdlc, kiss};

/// A full-sized IP packet sent whole.
const FRAME: usize = 1500;

fn framing(crit: &mut Criterion) {
    let frame: Vec<u8> = (0..FRAME as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut group = crit.benchmark_group("framing");
    group.throughput(Throughput::Bytes(FRAME as u64));
    for (name, fcs) in [("hdlc_fcs16", Fcs::Fcs16), ("hdlc_fcs32", Fcs::Fcs32)] {
        let config = hdlc::Config {
            fcs,
            ..hdlc::Config::default()
        };
        let mut line = Vec::new();
        let mut deframer = hdlc::Deframer::new(&config);
        group.bench_function(format!("{name}_encode_1500"), |b| {
            b.iter(|| {
                line.clear();
                hdlc::encode(0x45, black_box(&frame), &config, &mut line);
                black_box(&line);
            })
        });
        group.bench_function(format!("{name}_decode_1500"), |b| {
            b.iter(|| deframer.push(black_box(&line), |e| assert_frame(e, FRAME)))
        });
        group.bench_function(format!("{name}_encode_decode_1500"), |b| {
            b.iter(|| {
                line.clear();
                hdlc::encode(0x45, black_box(&frame), &config, &mut line);
                deframer.push(&line, |e| assert_frame(e, FRAME));
            })
        });
    }
    let config = kiss::Config::default();
    let mut line = Vec::new();
    let mut deframer = kiss::Deframer::new(&config);
    group.bench_function("kiss_fcs32_encode_1500", |b| {
        b.iter(|| {
            line.clear();
            kiss::encode(0x45, black_box(&frame), &config, &mut line);
            black_box(&line);
        })
    });
    group.bench_function("kiss_fcs32_decode_1500", |b| {
        b.iter(|| deframer.push(black_box(&line), |e| assert_frame(e, FRAME)))
    });
    group.bench_function("kiss_fcs32_encode_decode_1500", |b| {
        b.iter(|| {
            line.clear();
            kiss::encode(0x45, black_box(&frame), &config, &mut line);
            deframer.push(&line, |e| assert_frame(e, FRAME));
        })
    });
    group.finish();
}

/// Every event of the benchmark is the frame, whole.
fn assert_frame(event: Event<'_>, len: usize) {
    match event {
        Event::Frame { frame, .. } => assert_eq!(frame.len(), len),
        other => panic!("unexpected {other:?}"),
    }
}

fn main() {
    let mut crit = Criterion::default().configure_from_args();
    framing(&mut crit);
    crit.final_summary();
}
