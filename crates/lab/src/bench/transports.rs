//! The transport comparison (`taroc gateway bench --transports`): one checked TCP transfer per
//! transport and scheme, two gateways each time (UDP over loopback, raw Ethernet over a veth
//! pair, HDLC on an emulated 115,200-baud serial line), with what each transport put on its
//! medium per packet: a UDP datagram's outer IPv4 and UDP headers, an Ethernet frame's header,
//! padding and FCS, a serial frame's flags, escapes and FCS, and the authentication's bytes.
//! It shows what compression saves on each, and where the transport eats the saving.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;
use taroc_core::variant::Variant;

use crate::harness::{self, IpVersion, Mode, Scenario};
use crate::jobs;
use crate::transfer::TransferConfig;
use taroc_gateway::link::LinkConfig;
use taroc_gateway::Error;

/// The transports compared, by name.
pub const TRANSPORTS: [&str; 3] = ["udp", "ethernet", "serial"];

/// One cell's figures.
#[derive(Debug, Clone, Serialize)]
pub struct TransportRecord {
    /// `udp`, `ethernet` or `serial`.
    pub transport: &'static str,
    /// The scheme.
    pub scheme: String,
    /// Whether the transfer arrived intact.
    pub intact: bool,
    /// Packets the gateways read from their TUN devices, both directions.
    pub packets: u64,
    /// Bytes of those packets.
    pub packet_bytes: u64,
    /// Bytes the transports put on their medium for them, both directions.
    pub medium_bytes: u64,
}

impl TransportRecord {
    /// Medium bytes per packet beyond the packet's own bytes (negative: compression saved more
    /// than the transport costs).
    pub fn overhead_per_packet(&self) -> f64 {
        (self.medium_bytes as f64 - self.packet_bytes as f64) / self.packets.max(1) as f64
    }
}

/// Runs one transfer of `bytes` per transport and scheme, authenticated, `jobs` at a time.
pub fn run_transport_bench(
    variants: &[Variant],
    bytes: u64,
    jobs: usize,
    seed: u64,
    mut progress: impl FnMut(&TransportRecord),
) -> Result<Vec<TransportRecord>, Error> {
    let mut cells = Vec::new();
    for transport in TRANSPORTS {
        for variant in variants {
            cells.push((transport, variant.clone()));
        }
    }
    let run = |index: usize, (transport, variant): &(&'static str, Variant)| {
        let mode = match *transport {
            "udp" => Mode::Udp,
            "ethernet" => Mode::Ethernet,
            _ => Mode::Serial {
                kiss: false,
                baud: 115_200,
            },
        };
        let scenario = Scenario {
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
                bytes,
                seed: seed + index as u64,
                time_limit: Duration::from_secs(300),
            },
            seed: seed + index as u64,
            mode,
            authenticated: true,
        };
        let outcome = harness::run(&scenario)?;
        let [a, b] = &outcome.report.counters;
        Ok(TransportRecord {
            transport,
            scheme: variant.name.to_string(),
            intact: outcome.transfer.is_intact(),
            packets: a.packets_in + b.packets_in,
            packet_bytes: a.bytes_in + b.bytes_in,
            medium_bytes: a.medium_bytes + b.medium_bytes,
        })
    };
    jobs::run_cells(&cells, jobs, run, |r| progress(r))
}

/// The comparison as a table: per transport and scheme, the medium's bytes per packet beyond
/// the packets' own (negative: compression saved more than the transport costs), and how many
/// fewer than `none`'s on the same transport.
pub fn transport_table(records: &[TransportRecord]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>9} {:>13} {:>8} {:>14} {:>15} {:>6}",
        "transport", "scheme", "packets", "extra B/packet", "saved vs none", "intact"
    );
    for r in records {
        let none = records
            .iter()
            .find(|n| n.transport == r.transport && n.scheme == "none");
        let saved = none.map_or_else(
            || "-".to_string(),
            |n| format!("{:.1}", n.overhead_per_packet() - r.overhead_per_packet()),
        );
        let _ = writeln!(
            out,
            "{:>9} {:>13} {:>8} {:>14.1} {:>15} {:>6}",
            r.transport,
            r.scheme,
            r.packets,
            r.overhead_per_packet(),
            saved,
            if r.intact { "yes" } else { "NO" }
        );
    }
    out
}
