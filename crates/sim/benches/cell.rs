//! Speed of one Appendix B cell: a 1000-second run at 384 kbit/s, BER 1e-7, MTU 576, Tahoe (the
//! busiest row of the draft's tables: about 350 000 events), for every scheme. The `none` and
//! `ideal` runs are the baseline measured in the same run: the simulator's own cost (event
//! queue, links, TCP) without a codec; the difference to `vj`, `iphc` and `taroc` is the time
//! spent in the real codecs. Criterion's throughput line is events per second.
//!
//! Run: `cargo bench -p taroc-sim --bench cell`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use taroc_sim::link::ErrorModel;
use taroc_sim::scenario::Scenario;

fn busiest_cell(scheme: &str) -> Scenario {
    Scenario {
        scheme: scheme.into(),
        wireless_bps: 384_000,
        errors: ErrorModel::Ber { ber: 1e-7 },
        mtu: 576,
        duration_s: 1000.0,
        ..Scenario::default()
    }
}

fn cells(c: &mut Criterion) {
    let mut group = c.benchmark_group("cell-384k-1e-7-1000s");
    group.sample_size(10);
    for scheme in ["none", "ideal", "vj", "iphc", "taroc"] {
        let scenario = busiest_cell(scheme);
        let events = scenario.run().map(|o| o.events).unwrap_or(1);
        group.throughput(Throughput::Elements(events));
        group.bench_function(scheme, |b| {
            b.iter(|| scenario.run().map(|o| o.goodput_bytes_per_s))
        });
    }
    group.finish();
}

criterion_group!(benches, cells);
criterion_main!(benches);
