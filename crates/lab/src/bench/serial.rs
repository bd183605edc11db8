//! The serial bench (`taroc gateway bench --serial`): for every baud rate, framing, MTU and
//! scheme, two gateways on an emulated serial line ([`crate::line_emulator`]) carry a bulk
//! kernel TCP transfer of about eight seconds of line time, then 40 one-byte request/echo
//! exchanges with TCP_NODELAY ([`crate::echo`]), the way a remote shell's user feels the line.
//! Reported: the bytes on the line per packet (framing, escapes and check included), the bulk
//! goodput, the time of the exchanges, and each against `none` on the same line.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;
use taroc_core::variant::Variant;

use crate::harness::{self, IpVersion, Mode, Scenario};
use crate::jobs;
use crate::transfer::TransferConfig;
use taroc_gateway::link::LinkConfig;
use taroc_gateway::Error;

/// One line setting of the serial bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Line {
    /// Bits per second.
    pub baud: u32,
    /// KISS framing (HDLC otherwise).
    pub kiss: bool,
    /// The TUN and link MTU.
    pub mtu: u32,
}

/// The settings of the serial bench.
#[derive(Debug, Clone)]
pub struct SerialBenchConfig {
    /// Schemes to compare (`none` should be among them, for the ratios).
    pub variants: Vec<Variant>,
    /// Line settings.
    pub lines: Vec<Line>,
    /// Seconds of line time the bulk transfer is sized to.
    pub seconds: f64,
    /// Request/echo exchanges.
    pub exchanges: u32,
    /// Whether frames are authenticated (4-byte tags).
    pub authenticated: bool,
    /// Cells run at once.
    pub jobs: usize,
    /// Seed.
    pub seed: u64,
}

/// One cell's figures.
#[derive(Debug, Clone, Serialize)]
pub struct SerialRecord {
    /// The scheme.
    pub scheme: String,
    /// The line.
    pub line: Line,
    /// Bytes of the bulk transfer.
    pub bytes: u64,
    /// Whether the bulk transfer and every exchange arrived intact.
    pub intact: bool,
    /// Bulk goodput, bytes a second.
    pub goodput: f64,
    /// Seconds the exchanges took.
    pub echo_s: f64,
    /// Seconds the slowest exchange took.
    pub echo_slowest_s: f64,
    /// Bytes on the line per packet, both directions (framing, escapes, checks, tags).
    pub line_bytes_per_packet: f64,
    /// Frames that failed their check.
    pub bad_checks: u64,
}

/// Runs the bench, calling `progress` after each cell.
pub fn run_serial_bench(
    config: &SerialBenchConfig,
    mut progress: impl FnMut(&SerialRecord),
) -> Result<Vec<SerialRecord>, Error> {
    let mut cells = Vec::new();
    for line in &config.lines {
        for variant in &config.variants {
            cells.push((*line, variant.clone()));
        }
    }
    let run_cell =
        |index: usize, (line, variant): &(Line, Variant)| -> Result<SerialRecord, Error> {
            let bytes = (f64::from(line.baud) / 10.0 * config.seconds) as u64;
            let scenario = Scenario {
                variants: [variant.clone(), variant.clone()],
                link: LinkConfig {
                    mtu: line.mtu as usize,
                    ..LinkConfig::default()
                },
                tun_mtu: line.mtu,
                ip_version: IpVersion::V4,
                timestamps: true,
                congestion_control: None,
                transfer: TransferConfig {
                    bytes,
                    seed: config.seed + index as u64,
                    time_limit: Duration::from_secs_f64(config.seconds * 10.0 + 60.0),
                },
                seed: config.seed + index as u64,
                mode: Mode::Serial {
                    kiss: line.kiss,
                    baud: line.baud,
                },
                authenticated: config.authenticated,
            };
            let cell = harness::run_serial_cell(&scenario, config.exchanges)?;
            let [a, b] = &cell.report.counters;
            let packets = (a.packets_in + b.packets_in).max(1);
            Ok(SerialRecord {
                scheme: variant.name.to_string(),
                line: *line,
                bytes,
                intact: cell.bulk.is_intact() && cell.echo.is_complete(),
                goodput: cell.bulk.goodput(),
                echo_s: cell.echo.elapsed_ns as f64 / 1e9,
                echo_slowest_s: cell.echo.slowest_ns as f64 / 1e9,
                line_bytes_per_packet: (a.medium_bytes + b.medium_bytes) as f64 / packets as f64,
                bad_checks: a.rejected.bad_check + b.rejected.bad_check,
            })
        };
    jobs::run_cells(&cells, config.jobs, run_cell, |record| progress(record))
}

/// The bench as a table, each scheme against `none` on the same line.
pub fn serial_table(records: &[SerialRecord]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>7} {:>5} {:>5} {:>13} {:>9} {:>10} {:>8} {:>8} {:>7} {:>6}",
        "baud",
        "frame",
        "MTU",
        "scheme",
        "B/packet",
        "bulk B/s",
        "÷ none",
        "echo s",
        "none ÷",
        "intact"
    );
    for r in records {
        let none = records
            .iter()
            .find(|n| n.line == r.line && n.scheme == "none");
        let ratio = |f: &dyn Fn(&SerialRecord) -> f64| {
            none.map_or_else(|| "-".to_string(), |n| format!("{:.2}", f(n)))
        };
        let _ = writeln!(
            out,
            "{:>7} {:>5} {:>5} {:>13} {:>9.1} {:>10.0} {:>8} {:>8.2} {:>7} {:>6}",
            r.line.baud,
            if r.line.kiss { "kiss" } else { "hdlc" },
            r.line.mtu,
            r.scheme,
            r.line_bytes_per_packet,
            r.goodput,
            ratio(&|n| r.goodput / n.goodput),
            r.echo_s,
            ratio(&|n| n.echo_s / r.echo_s),
            if r.intact { "yes" } else { "NO" },
        );
    }
    out
}
