//! Real Linux TCP over a serial line: two gateways, one per network namespace's TUN device, on
//! the two ends of an emulated line ([`taroc_lab::line_emulator`]: two pseudo-terminals
//! bridged at a baud rate). For every scheme, HDLC at 115,200 baud and KISS at 9,600 baud, a
//! kernel TCP transfer must deliver exactly the bytes sent, and no rebuilt packet may fail its
//! checksum; so too over a line with bit errors.
//!
//! Needs root, /dev/net/tun and iproute2. Without them the tests print why and pass, unless the
//! environment variable `CI` is set: then they fail (CI runs as root and must run them).

use std::time::Duration;

use taroc_core::variant::Variant;
use taroc_gateway::link::LinkConfig;
use taroc_lab::harness::{self, IpVersion, Mode, Scenario};
use taroc_lab::transfer::TransferConfig;

/// A line of `mode` with MTU `mtu` and bit error rate `ber`, carrying `bytes` with `variant`.
fn scenario(variant: &Variant, mode: Mode, mtu: u32, ber: f64, bytes: u64, seed: u64) -> Scenario {
    Scenario {
        variants: [variant.clone(), variant.clone()],
        link: LinkConfig {
            ber,
            mtu: mtu as usize,
            ..LinkConfig::default()
        },
        tun_mtu: mtu,
        ip_version: IpVersion::V4,
        timestamps: true,
        congestion_control: None,
        transfer: TransferConfig {
            bytes,
            seed,
            time_limit: Duration::from_secs(120),
        },
        seed,
        mode,
        authenticated: seed.is_multiple_of(2),
    }
}

/// Runs every scheme over lines of `mode` (in parallel, each on its own line and namespaces)
/// and checks them all.
fn run_all(mode: Mode, mtu: u32, ber: f64, bytes: u64) {
    if !harness::environment_or_skip("serial netns") {
        return;
    }
    let outcomes = harness::run_each(
        harness::every_variant()
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), scenario(v, mode, mtu, ber, bytes, 21 + i as u64)))
            .collect(),
        harness::run,
    );
    let mut failures = Vec::new();
    for (variant, outcome) in &outcomes {
        let label = format!("{mode:?} BER {ber:e} {}", variant.name);
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        let t = &outcome.transfer;
        let [a, b] = &outcome.report.counters;
        println!(
            "{label}: {} B in {:.2} s ({:.0} B/s), packets {}, medium bytes {} + {}, bad check {}, \
             ctx damage {}, checksum dropped {}",
            t.bytes_received,
            t.elapsed_ns as f64 / 1e9,
            t.goodput(),
            outcome.report.packets(),
            a.medium_bytes,
            b.medium_bytes,
            a.rejected.bad_check + b.rejected.bad_check,
            a.context_damage + b.context_damage,
            a.checksum_dropped + b.checksum_dropped,
        );
        if !t.is_intact() {
            failures.push(format!(
                "{label}: bytes sent {} received {} completed {} first mismatch {:?}",
                t.bytes_sent, t.bytes_received, t.completed, t.first_mismatch
            ));
        }
        if a.medium_bytes == 0 || b.medium_bytes == 0 {
            failures.push(format!("{label}: no bytes counted on the line"));
        }
        if ber > 0.0 && a.rejected.bad_check + b.rejected.bad_check == 0 {
            failures.push(format!("{label}: the noisy line damaged no frame"));
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

#[test]
fn hdlc_at_115200_baud_every_scheme() {
    let mode = Mode::Serial {
        kiss: false,
        baud: 115_200,
    };
    run_all(mode, 1500, 0.0, 96 * 1024);
}

#[test]
fn kiss_at_9600_baud_every_scheme() {
    let mode = Mode::Serial {
        kiss: true,
        baud: 9600,
    };
    run_all(mode, 296, 0.0, 12 * 1024);
}

#[test]
fn hdlc_with_bit_errors_every_scheme() {
    let mode = Mode::Serial {
        kiss: false,
        baud: 115_200,
    };
    run_all(mode, 576, 1e-5, 48 * 1024);
}

/// A 10 s outage of the line, then a restart of each gateway in turn, during one transfer: the
/// transfer resumes after each and arrives intact, for every scheme.
#[test]
fn a_line_outage_and_restarts_of_either_gateway_every_scheme() {
    use taroc_lab::harness::SerialEvent;
    if !harness::environment_or_skip("serial netns") {
        return;
    }
    let mode = Mode::Serial {
        kiss: false,
        baud: 115_200,
    };
    let events = [
        (
            Duration::from_secs(2),
            SerialEvent::Outage(Duration::from_secs(10)),
        ),
        (
            Duration::from_secs(16),
            SerialEvent::Restart(1, Duration::from_millis(500)),
        ),
        (
            Duration::from_secs(19),
            SerialEvent::Restart(0, Duration::from_millis(500)),
        ),
    ];
    let outcomes = harness::run_each(
        harness::every_variant()
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let s = scenario(v, mode, 576, 0.0, 256 * 1024, 41 + i as u64);
                (v.name.to_string(), s)
            })
            .collect(),
        |s| harness::run_serial_disturbed(s, &events),
    );
    let mut failures = Vec::new();
    for (label, outcome) in &outcomes {
        match outcome {
            Ok(o) => {
                let t = &o.transfer;
                let [a, b] = &o.report.counters;
                println!(
                    "disturbed {label}: {} B in {:.2} s, peer runs {} + {}, ctx damage {}, \
                     refused {} + {}",
                    t.bytes_received,
                    t.elapsed_ns as f64 / 1e9,
                    a.peer_runs,
                    b.peer_runs,
                    a.context_damage + b.context_damage,
                    a.rejected.total(),
                    b.rejected.total()
                );
                if !t.is_intact() {
                    failures.push(format!(
                        "{label}: sent {} received {} completed {} mismatch {:?}",
                        t.bytes_sent, t.bytes_received, t.completed, t.first_mismatch
                    ));
                }
            }
            Err(e) => failures.push(format!("{label}: {e}")),
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
