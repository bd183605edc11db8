//! The forwarding benchmark: 1500-byte packets of a TCP transfer through the gateway with the
//! link emulation off, against a plain TUN-to-TUN copy measured in the same run, in
//! alternating rounds; over the emulated link (one gateway), the UDP link (two gateways over
//! loopback, with authenticated and with bare frames in the same round, so their ratio is the
//! cost of authentication), raw Ethernet (two gateways over a veth pair, authenticated) or an
//! emulated serial line at its top rate (HDLC at 4,000,000 baud, as a serial line runs by
//! default: not authenticated). Each transport's speed is also given over UDP's in the same
//! rounds.

use std::fmt::Write as _;

use serde::Serialize;
use taroc_core::variant::Variant;

use crate::harness::{self, IpVersion, Mode, Scenario};
use crate::transfer::TransferConfig;
use taroc_gateway::link::LinkConfig;
use taroc_gateway::Error;

/// A link the forwarding benchmark carries each scheme over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardingLink {
    /// One gateway, the emulated link with its impairments off ([`Mode::Emulated`]).
    Emulated,
    /// Two UDP gateways over this host's loopback, through the harness's relay ([`Mode::Udp`]):
    /// each scheme with authenticated frames and with bare ones (`--insecure-no-auth`), in the
    /// same round.
    Udp,
    /// Two gateways sending raw Ethernet frames over a veth pair ([`Mode::Ethernet`]),
    /// authenticated.
    Ethernet,
    /// Two gateways on an emulated serial line ([`Mode::Serial`]) at [`SERIAL_BAUD`], HDLC
    /// framing, not authenticated (a serial line's default).
    Serial,
}

/// The rate of the emulated serial line the forwarding benchmark runs over: the highest a
/// serial line can be set to, so the gateways' own speed shows as far as a line lets it.
pub const SERIAL_BAUD: u32 = 4_000_000;

impl ForwardingLink {
    /// Parses `emulated`, `udp`, `ethernet` or `serial`.
    pub fn parse(name: &str) -> Result<ForwardingLink, String> {
        match name {
            "emulated" => Ok(ForwardingLink::Emulated),
            "udp" => Ok(ForwardingLink::Udp),
            "ethernet" => Ok(ForwardingLink::Ethernet),
            "serial" => Ok(ForwardingLink::Serial),
            _ => Err(format!(
                "unknown link `{name}` (expected emulated, udp, ethernet or serial)"
            )),
        }
    }
}

/// The way one forwarding measurement's packets went between the two TUN devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    /// The plain TUN-to-TUN copy (the baseline).
    Copy,
    /// [`ForwardingLink::Emulated`].
    Emulated,
    /// [`ForwardingLink::Udp`], every frame authenticated (the default tag length).
    Udp,
    /// [`ForwardingLink::Udp`] with bare frames (`--insecure-no-auth`).
    UdpNoAuth,
    /// [`ForwardingLink::Ethernet`].
    Ethernet,
    /// [`ForwardingLink::Serial`].
    Serial,
}

impl Route {
    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Route::Copy => "copy",
            Route::Emulated => "emulated",
            Route::Udp => "udp",
            Route::UdpNoAuth => "udp-no-auth",
            Route::Ethernet => "ethernet",
            Route::Serial => "serial",
        }
    }
}

/// The settings of the forwarding benchmark.
#[derive(Debug, Clone)]
pub struct ForwardingConfig {
    /// Schemes to measure (each against the plain copy).
    pub variants: Vec<Variant>,
    /// The links to carry each scheme over (each once per round).
    pub links: Vec<ForwardingLink>,
    /// Length of each measurement.
    pub seconds: f64,
    /// Rounds (copy, then each scheme, per round).
    pub rounds: usize,
    /// TUN MTU (1500: packets of 1500 bytes).
    pub mtu: u32,
    /// IP version.
    pub ip_version: IpVersion,
}

/// One line of the forwarding benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct ForwardingRecord {
    /// `copy` (plain TUN-to-TUN copy) or a scheme's name.
    pub path: String,
    /// How the packets went.
    pub link: Route,
    /// Round number (from 0).
    pub round: usize,
    /// IP bytes forwarded in the data direction per second, in Mbit/s.
    pub mbit_per_s: f64,
    /// Packets forwarded in the data direction per second.
    pub packets_per_s: f64,
    /// Mean length of those packets, bytes.
    pub mean_packet_bytes: f64,
    /// Gateway CPU time per packet read (both directions), ns; on the UDP link, both
    /// gateways' (the relay's not counted).
    pub cpu_ns_per_packet: f64,
    /// The gateway threads' CPU time over the wall time (two gateways on the UDP link: up to 2).
    pub cpu_share: f64,
    /// Incorrect deliveries (must be 0; counted by the emulated link's oracle only).
    pub incorrect_delivered: u64,
    /// Datagrams the UDP gateways refused before decompression (must be 0 here).
    pub rejected: u64,
    /// Packets read in the data direction but not delivered (lost between the gateways, e.g.
    /// to a full socket buffer, or in flight at the end).
    pub lost: u64,
    /// Whether the received bytes matched the bytes sent, as far as they went.
    pub intact: bool,
}

fn forward_once(
    config: &ForwardingConfig,
    variant: Option<&Variant>,
    route: Route,
    round: usize,
) -> Result<ForwardingRecord, Error> {
    let none = Variant::by_name("none").ok_or_else(|| Error::new("no `none` scheme"))?;
    let v = variant.unwrap_or(&none).clone();
    let scenario = Scenario {
        variants: [v.clone(), v],
        link: LinkConfig {
            mtu: config.mtu as usize,
            ..LinkConfig::default()
        },
        tun_mtu: config.mtu,
        ip_version: config.ip_version,
        timestamps: true,
        congestion_control: None,
        transfer: TransferConfig {
            bytes: u64::MAX / 4,
            seed: round as u64,
            time_limit: taroc_gateway::args::clamped_duration(config.seconds),
        },
        seed: 1,
        mode: match route {
            Route::Copy => Mode::PlainCopy,
            Route::Emulated => Mode::Emulated,
            Route::Udp | Route::UdpNoAuth => Mode::Udp,
            Route::Ethernet => Mode::Ethernet,
            Route::Serial => Mode::Serial {
                kiss: false,
                baud: SERIAL_BAUD,
            },
        },
        authenticated: !matches!(route, Route::UdpNoAuth | Route::Serial),
    };
    let outcome = harness::run(&scenario)?;
    let [c, reverse] = &outcome.report.counters;
    let seconds = outcome.transfer.elapsed_ns.max(1) as f64 / 1e9;
    let wall = outcome.report.wall.as_secs_f64().max(1e-9);
    Ok(ForwardingRecord {
        path: variant.map_or("copy", |v| v.name).to_owned(),
        link: route,
        round,
        mbit_per_s: c.delivered_bytes as f64 * 8.0 / seconds / 1e6,
        packets_per_s: c.delivered as f64 / seconds,
        mean_packet_bytes: c.delivered_bytes as f64 / c.delivered.max(1) as f64,
        cpu_ns_per_packet: outcome.report.cpu_ns_per_packet(),
        cpu_share: outcome.report.cpu.as_secs_f64() / wall,
        incorrect_delivered: c.incorrect_delivered + reverse.incorrect_delivered,
        rejected: c.rejected.total() + reverse.rejected.total(),
        lost: c.packets_in.saturating_sub(c.delivered),
        intact: outcome.transfer.first_mismatch.is_none(),
    })
}

/// The measurements of one round, in order: the copy, then per scheme its routes. The UDP
/// link's two routes swap places every other round, so neither always runs first.
fn round_plan(config: &ForwardingConfig, round: usize) -> Vec<(Option<&Variant>, Route)> {
    let mut plan = vec![(None, Route::Copy)];
    for variant in &config.variants {
        let mut seen = Vec::new();
        for &link in &config.links {
            if seen.contains(&link) {
                continue;
            }
            seen.push(link);
            match link {
                ForwardingLink::Emulated => plan.push((Some(variant), Route::Emulated)),
                ForwardingLink::Ethernet => plan.push((Some(variant), Route::Ethernet)),
                ForwardingLink::Serial => plan.push((Some(variant), Route::Serial)),
                ForwardingLink::Udp => {
                    let mut pair = [Route::UdpNoAuth, Route::Udp];
                    if round % 2 == 1 {
                        pair.reverse();
                    }
                    plan.extend(pair.map(|route| (Some(variant), route)));
                }
            }
        }
    }
    plan
}

/// Runs the forwarding benchmark: per round, the plain copy, then each scheme over each link.
pub fn run_forwarding(
    config: &ForwardingConfig,
    mut on_record: impl FnMut(&ForwardingRecord),
) -> Result<Vec<ForwardingRecord>, Error> {
    let mut records = Vec::new();
    for round in 0..config.rounds {
        for (variant, route) in round_plan(config, round) {
            if taroc_gateway::signal::STOP.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(Error::new("interrupted"));
            }
            let record = forward_once(config, variant, route, round)?;
            on_record(&record);
            records.push(record);
        }
    }
    Ok(records)
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(sum, n), v| (sum + v, n + 1));
    sum / n.max(1) as f64
}

/// The forwarding benchmark as a table: mean over rounds per path (and link, if any is not
/// the emulated one), the ratio to the copy and, if the UDP link was measured, to the same
/// scheme's speed over UDP; then, for the UDP link, the speed with authentication over the
/// speed without, per scheme.
pub fn forwarding_table(records: &[ForwardingRecord]) -> String {
    let mut rows: Vec<(&str, Route)> = Vec::new();
    for r in records {
        if !rows.contains(&(r.path.as_str(), r.link)) {
            rows.push((&r.path, r.link));
        }
    }
    let show_link = rows
        .iter()
        .any(|&(_, link)| !matches!(link, Route::Copy | Route::Emulated));
    let row_mean = |row: (&str, Route), f: fn(&ForwardingRecord) -> f64| {
        mean(
            records
                .iter()
                .filter(|r| (r.path.as_str(), r.link) == row)
                .map(f),
        )
    };
    let copy = row_mean(("copy", Route::Copy), |r| r.mbit_per_s);
    let mut out = String::new();
    let link_header = if show_link {
        format!(" {:>11}", "link")
    } else {
        String::new()
    };
    // Each transport's speed over UDP's (authenticated), per scheme, when UDP was measured.
    let has_udp = rows.iter().any(|&(_, link)| link == Route::Udp);
    let vs_udp_header = if has_udp {
        format!(" {:>7}", "vs udp")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{:>10}{link_header} {:>10} {:>10} {:>9} {:>12} {:>8} {:>9}{vs_udp_header}",
        "path", "Mbit/s", "packets/s", "pkt bytes", "CPU ns/pkt", "CPU use", "vs copy"
    );
    for row in &rows {
        let mbit = row_mean(*row, |r| r.mbit_per_s);
        let link = if show_link {
            format!(" {:>11}", row.1.name())
        } else {
            String::new()
        };
        let udp = row_mean((row.0, Route::Udp), |r| r.mbit_per_s);
        let vs_udp = match (has_udp, row.1) {
            (false, _) => String::new(),
            (true, Route::Copy) => format!(" {:>7}", "-"),
            (true, _) if udp > 0.0 => format!(" {:>7.2}", mbit / udp),
            (true, _) => format!(" {:>7}", "-"),
        };
        let _ = writeln!(
            out,
            "{:>10}{link} {:>10.1} {:>10.0} {:>9.0} {:>12.0} {:>7.0}% {:>9.2}{vs_udp}",
            row.0,
            mbit,
            row_mean(*row, |r| r.packets_per_s),
            row_mean(*row, |r| r.mean_packet_bytes),
            row_mean(*row, |r| r.cpu_ns_per_packet),
            row_mean(*row, |r| r.cpu_share) * 100.0,
            if copy > 0.0 { mbit / copy } else { 0.0 }
        );
    }
    let incorrect: u64 = records.iter().map(|r| r.incorrect_delivered).sum();
    let _ = writeln!(out, "incorrect deliveries: {incorrect}");
    if has_udp {
        out.push_str(&udp_auth_table(records));
    }
    out
}

/// Per scheme on the UDP link: Mbit/s without and with authentication (means over rounds),
/// their ratio, the range of the ratio over the rounds (each round measured both), packets
/// lost per run and datagrams refused.
fn udp_auth_table(records: &[ForwardingRecord]) -> String {
    let mut schemes: Vec<&str> = Vec::new();
    for r in records {
        if r.link == Route::Udp && !schemes.contains(&r.path.as_str()) {
            schemes.push(&r.path);
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nUDP link, authenticated (tag {} bytes) vs --insecure-no-auth, measured in the same \
         rounds:",
        taroc_gateway::auth::DEFAULT_TAG_LEN
    );
    let _ = writeln!(
        out,
        "{:>10} {:>14} {:>11} {:>12} {:>18} {:>9} {:>8}",
        "path",
        "no-auth Mbit/s",
        "auth Mbit/s",
        "auth/no-auth",
        "per round min-max",
        "lost/run",
        "refused"
    );
    for scheme in schemes {
        let of = |route: Route| {
            records
                .iter()
                .filter(move |r| r.path == scheme && r.link == route)
        };
        let bare = mean(of(Route::UdpNoAuth).map(|r| r.mbit_per_s));
        let auth = mean(of(Route::Udp).map(|r| r.mbit_per_s));
        let ratios: Vec<f64> = of(Route::Udp)
            .filter_map(|a| {
                of(Route::UdpNoAuth)
                    .find(|b| b.round == a.round && b.mbit_per_s > 0.0)
                    .map(|b| a.mbit_per_s / b.mbit_per_s)
            })
            .collect();
        let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range = if ratios.is_empty() {
            "-".to_owned()
        } else {
            format!("{low:.2}-{high:.2}")
        };
        let both = || of(Route::Udp).chain(of(Route::UdpNoAuth));
        let _ = writeln!(
            out,
            "{:>10} {:>14.1} {:>11.1} {:>12.2} {:>18} {:>9.0} {:>8}",
            scheme,
            bare,
            auth,
            if bare > 0.0 { auth / bare } else { 0.0 },
            range,
            mean(both().map(|r| r.lost as f64)),
            both().map(|r| r.rejected).sum::<u64>()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(links: &[ForwardingLink]) -> ForwardingConfig {
        ForwardingConfig {
            variants: vec![
                Variant::by_name("taroc").expect("taroc"),
                Variant::by_name("vj").expect("vj"),
            ],
            links: links.to_vec(),
            seconds: 1.0,
            rounds: 2,
            mtu: 1500,
            ip_version: IpVersion::V4,
        }
    }

    fn names(plan: &[(Option<&Variant>, Route)]) -> Vec<String> {
        plan.iter()
            .map(|(v, route)| format!("{} {}", v.map_or("-", |v| v.name), route.name()))
            .collect()
    }

    #[test]
    fn rounds_measure_the_copy_then_each_scheme_over_each_link() {
        let emulated = config(&[ForwardingLink::Emulated]);
        assert_eq!(
            names(&round_plan(&emulated, 0)),
            ["- copy", "taroc emulated", "vj emulated"]
        );
        let both = config(&[
            ForwardingLink::Udp,
            ForwardingLink::Emulated,
            ForwardingLink::Udp,
        ]);
        assert_eq!(
            names(&round_plan(&both, 0)),
            [
                "- copy",
                "taroc udp-no-auth",
                "taroc udp",
                "taroc emulated",
                "vj udp-no-auth",
                "vj udp",
                "vj emulated"
            ]
        );
        // Odd rounds swap the UDP pair.
        assert_eq!(
            names(&round_plan(&both, 1))[1..3],
            ["taroc udp", "taroc udp-no-auth"]
        );
        assert_eq!(ForwardingLink::parse("udp"), Ok(ForwardingLink::Udp));
        assert_eq!(
            ForwardingLink::parse("emulated"),
            Ok(ForwardingLink::Emulated)
        );
        assert_eq!(
            ForwardingLink::parse("ethernet"),
            Ok(ForwardingLink::Ethernet)
        );
        assert_eq!(ForwardingLink::parse("serial"), Ok(ForwardingLink::Serial));
        assert!(ForwardingLink::parse("tcp").unwrap_err().contains("`tcp`"));
        let transports = config(&[ForwardingLink::Ethernet, ForwardingLink::Serial]);
        assert_eq!(
            names(&round_plan(&transports, 0)),
            [
                "- copy",
                "taroc ethernet",
                "taroc serial",
                "vj ethernet",
                "vj serial"
            ]
        );
    }

    fn record(path: &str, link: Route, round: usize, mbit_per_s: f64) -> ForwardingRecord {
        ForwardingRecord {
            path: path.to_owned(),
            link,
            round,
            mbit_per_s,
            packets_per_s: mbit_per_s * 1e6 / 8.0 / 1500.0,
            mean_packet_bytes: 1500.0,
            cpu_ns_per_packet: 1000.0,
            cpu_share: 0.5,
            incorrect_delivered: 0,
            rejected: 0,
            lost: 0,
            intact: true,
        }
    }

    #[test]
    fn the_table_gives_ratios_to_the_copy_and_auth_over_no_auth() {
        let emulated = [
            record("copy", Route::Copy, 0, 1000.0),
            record("taroc", Route::Emulated, 0, 500.0),
        ];
        let table = forwarding_table(&emulated);
        assert!(!table.contains("link") && !table.contains("UDP"), "{table}");
        assert!(table.contains("0.50"), "{table}");
        let udp = [
            record("copy", Route::Copy, 0, 1000.0),
            record("taroc", Route::UdpNoAuth, 0, 400.0),
            record("taroc", Route::Udp, 0, 300.0),
            record("copy", Route::Copy, 1, 1000.0),
            record("taroc", Route::Udp, 1, 360.0),
            record("taroc", Route::UdpNoAuth, 1, 400.0),
        ];
        let table = forwarding_table(&udp);
        let line = |start: &str| {
            table
                .lines()
                .find(|l| {
                    l.split_whitespace()
                        .collect::<Vec<_>>()
                        .starts_with(&[start])
                })
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .unwrap_or_default()
        };
        // Per route: the mean over rounds and the ratio to the copy.
        let auth_row = table
            .lines()
            .find(|l| l.contains(" udp ") && l.contains("taroc"))
            .expect("udp row");
        assert!(
            auth_row.contains("330.0") && auth_row.contains("0.33"),
            "{table}"
        );
        // Per scheme: no-auth mean, auth mean, ratio of means, range of per-round ratios.
        let summary = table.lines().last().expect("summary");
        let fields: Vec<&str> = summary.split_whitespace().collect();
        assert_eq!(
            fields,
            ["taroc", "400.0", "330.0", "0.82", "0.75-0.90", "0", "0"],
            "{table}"
        );
        assert_eq!(line("copy")[1], "copy");
        // Every transport over UDP's speed for the same scheme.
        let mut all = udp.to_vec();
        all.push(record("taroc", Route::Ethernet, 0, 660.0));
        let table = forwarding_table(&all);
        let ethernet = table
            .lines()
            .find(|l| l.contains(" ethernet "))
            .expect("ethernet row");
        assert!(ethernet.trim_end().ends_with("2.00"), "{table}");
    }
}
