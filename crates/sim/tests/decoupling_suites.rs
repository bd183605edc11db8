//! Section 8's suite 1 claims end to end on the testbed (two connections, RTT 10 ms), shortened:
//! at BER 2e-6 decoupling delivers at least 2.5 times Reno's goodput; near 1e-7 it stays below
//! Reno (its header packets cost bandwidth) but within 7%.

use taroc_sim::studies::decoupling::runs::{measure, testbed, Effort};
use taroc_sim::studies::decoupling::testbed::{FlowKind, FlowSpec};

const EFFORT: Effort = Effort {
    seeds: 1,
    seconds: 6.0,
    quick: true,
};

fn goodput(kind: FlowKind, ber: f64) -> f64 {
    let d = testbed(ber, 10.0, vec![FlowSpec::of(kind); 2]);
    measure(&d, EFFORT, "1", kind.name())
        .unwrap()
        .goodput_bytes_per_s
}

#[test]
fn decoupling_beats_reno_two_and_a_half_times_at_2e_6() {
    let (reno, decoupling) = (
        goodput(FlowKind::Reno, 2e-6),
        goodput(FlowKind::Decoupling, 2e-6),
    );
    assert!(decoupling >= 2.5 * reno, "{decoupling} vs {reno}");
}

#[test]
fn decoupling_pays_its_header_overhead_on_a_clean_link() {
    let (reno, decoupling) = (
        goodput(FlowKind::Reno, 1e-7),
        goodput(FlowKind::Decoupling, 1e-7),
    );
    assert!(decoupling < reno, "{decoupling} vs {reno}");
    assert!(decoupling >= 0.93 * reno, "{decoupling} vs {reno}");
}
