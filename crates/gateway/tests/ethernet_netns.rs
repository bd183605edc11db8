//! Real Linux TCP over raw Ethernet: two gateways, one per network namespace's TUN device,
//! sending their link frames in Ethernet frames of their own EtherType over a veth pair
//! ([`taroc_gateway::ethernet`]). For every scheme, with authentication and without, a kernel
//! TCP transfer must deliver exactly the bytes sent.
//!
//! Needs root, /dev/net/tun and iproute2. Without them the tests print why and pass, unless the
//! environment variable `CI` is set: then they fail (CI runs as root and must run them).

use std::time::Duration;

use taroc_core::variant::{self, Variant};
use taroc_gateway::harness::{self, IpVersion, Mode, Outcome, Scenario};
use taroc_gateway::link::LinkConfig;
use taroc_gateway::transfer::TransferConfig;

fn scenario(variant: &Variant, authenticated: bool, seed: u64) -> Scenario {
    Scenario {
        variants: [variant.clone(), variant.clone()],
        link: LinkConfig {
            mtu: 1500,
            ..LinkConfig::default()
        },
        tun_mtu: 1500,
        ip_version: IpVersion::V4,
        timestamps: true,
        congestion_control: None,
        transfer: TransferConfig {
            bytes: 2 * 1024 * 1024,
            seed,
            time_limit: Duration::from_secs(60),
        },
        seed,
        mode: Mode::Ethernet,
        authenticated,
    }
}

#[test]
fn every_scheme_over_raw_ethernet_with_and_without_authentication() {
    if !harness::environment_or_skip("ethernet netns") {
        return;
    }
    let variants: Vec<Variant> = variant::NAMES
        .iter()
        .chain(&variant::EXTRA_NAMES)
        .map(|name| Variant::by_name(name).unwrap())
        .collect();
    let mut cases = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        for auth in [true, false] {
            cases.push((v.clone(), auth, 31 + 2 * i as u64 + u64::from(auth)));
        }
    }
    let outcomes: Vec<(String, Result<Outcome, taroc_gateway::Error>)> =
        std::thread::scope(|scope| {
            let handles: Vec<_> = cases
                .iter()
                .map(|(v, auth, seed)| {
                    let s = scenario(v, *auth, *seed);
                    let label = format!("{} auth {auth}", v.name);
                    (label, scope.spawn(move || harness::run(&s)))
                })
                .collect();
            handles
                .into_iter()
                .map(|(label, h)| {
                    let result = h
                        .join()
                        .unwrap_or_else(|_| Err(taroc_gateway::Error::new("run panicked")));
                    (label, result)
                })
                .collect()
        });
    let mut failures = Vec::new();
    for (label, outcome) in &outcomes {
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
            "ethernet {label}: {} B in {:.2} s, packets {}, medium bytes {} + {}, refused {} + {}",
            t.bytes_received,
            t.elapsed_ns as f64 / 1e9,
            outcome.report.packets(),
            a.medium_bytes,
            b.medium_bytes,
            a.rejected.total(),
            b.rejected.total(),
        );
        if !t.is_intact() {
            failures.push(format!(
                "{label}: bytes sent {} received {} completed {} first mismatch {:?}",
                t.bytes_sent, t.bytes_received, t.completed, t.first_mismatch
            ));
        }
        if a.checksum_dropped + b.checksum_dropped > 0 {
            failures.push(format!("{label}: rebuilt packets failed their checksum"));
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
