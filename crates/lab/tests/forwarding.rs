//! The forwarding benchmark over the UDP link (`taroc gateway bench --forwarding --link udp`),
//! briefly: the plain copy, then a scheme through two UDP gateways with authenticated and with
//! bare frames, each a real kernel TCP transfer between two namespaces that must arrive
//! unchanged, with no datagram refused.
//!
//! Needs root, /dev/net/tun and iproute2. Without them the test prints why and passes, unless
//! the environment variable `CI` is set: then it fails (CI runs as root and must run it).

use taroc_core::variant::Variant;
use taroc_lab::bench::{self, ForwardingConfig, ForwardingLink, Route};
use taroc_lab::harness::{self, IpVersion};

#[test]
fn the_udp_link_is_measured_with_and_without_authentication() {
    if let Err(e) = harness::check_environment() {
        if std::env::var_os("CI").is_some() {
            panic!("CI is set, so the gateway netns tests must run, but: {e}");
        }
        eprintln!("SKIPPED forwarding test: {e} (set CI=1 to make this a failure)");
        return;
    }
    let config = ForwardingConfig {
        variants: vec![Variant::by_name("taroc-plus").expect("taroc-plus")],
        links: vec![ForwardingLink::Udp],
        seconds: 0.5,
        rounds: 1,
        mtu: 1500,
        ip_version: IpVersion::V4,
    };
    let records = bench::run_forwarding(&config, |_| {}).expect("forwarding benchmark");
    let routes: Vec<(&str, Route)> = records.iter().map(|r| (r.path.as_str(), r.link)).collect();
    assert_eq!(
        routes,
        [
            ("copy", Route::Copy),
            ("taroc-plus", Route::UdpNoAuth),
            ("taroc-plus", Route::Udp)
        ]
    );
    for r in &records {
        assert!(r.intact, "{r:?}");
        assert!(r.mbit_per_s > 0.0 && r.packets_per_s > 0.0, "{r:?}");
        // Full-size packets: the transfer ran at 1500 bytes a packet (a few shorter ones).
        assert!(r.mean_packet_bytes > 1400.0, "{r:?}");
        assert_eq!((r.rejected, r.incorrect_delivered), (0, 0), "{r:?}");
    }
    let table = bench::forwarding_table(&records);
    let summary = table
        .lines()
        .skip_while(|l| !l.starts_with("UDP link"))
        .nth(2)
        .expect("the UDP summary");
    let fields: Vec<&str> = summary.split_whitespace().collect();
    assert_eq!(fields[0], "taroc-plus", "{table}");
    let ratio: f64 = fields[3].parse().expect("a ratio");
    let expected = records[2].mbit_per_s / records[1].mbit_per_s;
    assert!(
        (ratio - expected).abs() < 0.006,
        "{ratio} vs {expected}: {table}"
    );
}
