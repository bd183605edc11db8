//! `taroc gateway bench`: the harness as a measurement.
//!
//! - **Goodput grid**: for every link rate, BER, TCP timestamps setting and scheme, a real kernel
//!   TCP transfer through the gateway over the emulated link, with the MTU the TAROC draft's
//!   Appendix B pairs with the BER (576 bytes up to 3e-6, 296 up to 3e-5, 168 at 1e-4, 96
//!   above), the draft's 100 ms delay and 6-packet router queue. Cells run in parallel (each in
//!   its own namespaces; the gateway needs little CPU at these rates).
//! - **Forwarding speed** (`forwarding`): 1500-byte packets of a TCP transfer through the
//!   gateway with the link emulation off, against a plain TUN-to-TUN copy measured in the same
//!   run, over the emulated link or the UDP link (with and without authentication).
//! - **Serial lines** (`serial`): bulk goodput and one-byte echoes per scheme on emulated
//!   serial lines, against `none` on the same line.
//! - **Transports** (`transports`): what UDP, raw Ethernet and a serial line each put on their
//!   medium per packet, per scheme.

use std::fmt::Write as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use taroc_core::variant::Variant;

use crate::harness::{self, IpVersion, Mode, Scenario};
use crate::transfer::TransferConfig;
use taroc_gateway::link::LinkConfig;
use taroc_gateway::Error;

mod forwarding;
mod serial;
mod transports;

pub use forwarding::{
    forwarding_table, run_forwarding, ForwardingConfig, ForwardingLink, ForwardingRecord, Route,
    SERIAL_BAUD,
};
pub use serial::{run_serial_bench, serial_table, Line, SerialBenchConfig, SerialRecord};
pub use transports::{run_transport_bench, transport_table, TransportRecord, TRANSPORTS};

/// The MTU the TAROC draft's simulations (Appendix B.3) use at bit error rate `ber`.
pub fn draft_mtu(ber: f64) -> u32 {
    if ber <= 3e-6 {
        576
    } else if ber <= 3e-5 {
        296
    } else if ber <= 1e-4 {
        168
    } else {
        96
    }
}

/// The settings of the goodput grid.
#[derive(Debug, Clone)]
pub struct GridConfig {
    /// Schemes to compare (both directions use the same).
    pub variants: Vec<Variant>,
    /// Link rates, kbit/s.
    pub rates_kbps: Vec<f64>,
    /// Bit error rates.
    pub bers: Vec<f64>,
    /// TCP timestamps settings to run (true: Linux default).
    pub timestamps: Vec<bool>,
    /// IP version.
    pub ip_version: IpVersion,
    /// The MTU of every cell, instead of the draft's per-BER MTU.
    pub mtu: Option<u32>,
    /// One-way link delay.
    pub delay: Duration,
    /// DropTail queue limit, packets.
    pub queue: usize,
    /// A clean link would carry the transfer in about this long (its size is rate x this).
    pub duration: Duration,
    /// A transfer stops after this long, finished or not.
    pub time_limit: Duration,
    /// Congestion control, if not the default.
    pub congestion_control: Option<String>,
    /// Cells run at once.
    pub jobs: usize,
    /// Seed of links and transfers.
    pub seed: u64,
}

/// One cell of the grid: the fields of `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    /// Scheme (variant) name.
    pub scheme: String,
    /// Link rate, kbit/s.
    pub rate_kbps: f64,
    /// Bit error rate.
    pub ber: f64,
    /// TUN and link MTU, bytes.
    pub mtu: u32,
    /// Whether TCP timestamps were on.
    pub timestamps: bool,
    /// 4 or 6.
    pub ip_version: u8,
    /// Application bytes received per second, from accept to end of stream (or time limit).
    pub goodput_bytes_per_s: f64,
    /// Bytes the sender's application wrote.
    pub bytes_sent: u64,
    /// Bytes the receiver's application read.
    pub bytes_received: u64,
    /// Deliveries of the gateway that differ from the original packet (both directions).
    pub incorrect_delivered: u64,
    /// Of those, the ones whose TCP checksum verifies.
    pub incorrect_undetected: u64,
    /// Rebuilt packets the gateway dropped because their TCP checksum failed.
    pub checksum_dropped: u64,
    /// Gateway CPU time per packet read from the TUN devices, ns.
    pub cpu_ns_per_packet: f64,
    /// Whether the transfer finished within the time limit.
    pub completed: bool,
    /// Whether every byte arrived unchanged.
    pub intact: bool,
    /// Seconds from accept to end of stream (or the time limit).
    pub elapsed_s: f64,
    /// Intact frames refused for context damage (both directions).
    pub context_damage: u64,
    /// Frames lost on the link (loss and bit errors, both directions).
    pub link_lost: u64,
    /// Frames dropped by the DropTail queue (both directions).
    pub queue_drops: u64,
    /// Packets the gateway read (both directions).
    pub packets: u64,
    /// Link bytes saved by compression (both directions).
    pub bytes_saved: i64,
    /// One-way delay, ms.
    pub delay_ms: f64,
    /// Queue limit, packets.
    pub queue: usize,
    /// Congestion control.
    pub congestion_control: String,
}

#[derive(Debug, Clone)]
struct Cell {
    variant: Variant,
    rate_kbps: f64,
    ber: f64,
    mtu: u32,
    timestamps: bool,
}

fn cells(config: &GridConfig) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &rate_kbps in &config.rates_kbps {
        for &ber in &config.bers {
            for &timestamps in &config.timestamps {
                for variant in &config.variants {
                    let mut mtu = config.mtu.unwrap_or_else(|| draft_mtu(ber));
                    if config.ip_version == IpVersion::V6 {
                        mtu = mtu.max(1280);
                    }
                    cells.push(Cell {
                        variant: variant.clone(),
                        rate_kbps,
                        ber,
                        mtu,
                        timestamps,
                    });
                }
            }
        }
    }
    cells
}

fn run_cell(config: &GridConfig, cell: &Cell, index: usize) -> Result<Record, Error> {
    let rate_bps = (cell.rate_kbps * 1000.0) as u64;
    let bytes = (rate_bps as f64 / 8.0 * config.duration.as_secs_f64()) as u64;
    let scenario = Scenario {
        variants: [cell.variant.clone(), cell.variant.clone()],
        link: LinkConfig {
            rate_bps,
            delay: config.delay,
            queue: config.queue,
            ber: cell.ber,
            mtu: cell.mtu as usize,
            slots: 4096,
            ..LinkConfig::default()
        },
        tun_mtu: cell.mtu,
        ip_version: config.ip_version,
        timestamps: cell.timestamps,
        congestion_control: config.congestion_control.clone(),
        transfer: TransferConfig {
            bytes: bytes.max(1),
            seed: config.seed ^ index as u64,
            time_limit: config.time_limit,
        },
        seed: config.seed.wrapping_add(index as u64),
        mode: Mode::Emulated,
        authenticated: true,
    };
    let outcome = harness::run(&scenario)?;
    let [a, b] = &outcome.report.counters;
    let t = &outcome.transfer;
    Ok(Record {
        scheme: cell.variant.name.to_owned(),
        rate_kbps: cell.rate_kbps,
        ber: cell.ber,
        mtu: cell.mtu,
        timestamps: cell.timestamps,
        ip_version: config.ip_version.number(),
        goodput_bytes_per_s: t.goodput(),
        bytes_sent: t.bytes_sent,
        bytes_received: t.bytes_received,
        incorrect_delivered: a.incorrect_delivered + b.incorrect_delivered,
        incorrect_undetected: a.incorrect_undetected + b.incorrect_undetected,
        checksum_dropped: a.checksum_dropped + b.checksum_dropped,
        cpu_ns_per_packet: outcome.report.cpu_ns_per_packet(),
        completed: t.completed,
        intact: t.is_intact(),
        elapsed_s: t.elapsed_ns as f64 / 1e9,
        context_damage: a.context_damage + b.context_damage,
        link_lost: a.link_lost + a.link_bit_errors + b.link_lost + b.link_bit_errors,
        queue_drops: a.queue_drops + b.queue_drops,
        packets: outcome.report.packets(),
        bytes_saved: a.bytes_saved + b.bytes_saved,
        delay_ms: config.delay.as_secs_f64() * 1e3,
        queue: config.queue,
        congestion_control: outcome.congestion_control,
    })
}

/// The bench's progress bar of `total` runs on standard error: drawn only where standard error
/// is a terminal (indicatif hides it otherwise); print log lines through
/// [`ProgressBar::suspend`] so they go above it (and still go to a pipe).
pub fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{wide_bar}] {pos}/{len} runs (eta {eta})")
    {
        bar.set_style(style.progress_chars("#>-"));
    }
    bar
}

/// Runs every cell of the grid, `config.jobs` at a time, calling `on_record` as each finishes
/// (in completion order); returns the records in grid order, or the first error.
pub fn run_grid(
    config: &GridConfig,
    mut on_record: impl FnMut(&Record),
) -> Result<Vec<Record>, Error> {
    let cells = cells(config);
    crate::jobs::run_cells(
        &cells,
        config.jobs,
        |i, cell| run_cell(config, cell, i),
        |r| on_record(r),
    )
}

/// The grid as tables: goodput (bytes/s) per scheme, then gateway CPU per packet.
pub fn grid_table(records: &[Record]) -> String {
    let mut schemes: Vec<&str> = Vec::new();
    let mut rows: Vec<(f64, f64, u32, bool)> = Vec::new();
    for r in records {
        if !schemes.contains(&r.scheme.as_str()) {
            schemes.push(&r.scheme);
        }
        let key = (r.rate_kbps, r.ber, r.mtu, r.timestamps);
        if !rows.contains(&key) {
            rows.push(key);
        }
    }
    let find = |key: &(f64, f64, u32, bool), scheme: &str| {
        records
            .iter()
            .find(|r| (r.rate_kbps, r.ber, r.mtu, r.timestamps) == *key && r.scheme == scheme)
    };
    let mut out = String::new();
    for (title, value) in [
        (
            "goodput, bytes/s (* = not finished in the time limit)",
            (|r: &Record| {
                format!(
                    "{:.0}{}",
                    r.goodput_bytes_per_s,
                    if r.completed { "" } else { "*" }
                )
            }) as fn(&Record) -> String,
        ),
        ("gateway CPU, ns per packet", |r: &Record| {
            format!("{:.0}", r.cpu_ns_per_packet)
        }),
    ] {
        let _ = writeln!(out, "{title}");
        let _ = write!(out, "{:>9} {:>7} {:>5} {:>4}", "kbit/s", "BER", "MTU", "TS");
        for s in &schemes {
            let _ = write!(out, " {s:>10}");
        }
        out.push('\n');
        for key in &rows {
            let _ = write!(
                out,
                "{:>9} {:>7.0e} {:>5} {:>4}",
                key.0,
                key.1,
                key.2,
                if key.3 { "on" } else { "off" }
            );
            for s in &schemes {
                let cell = find(key, s).map_or_else(|| "-".to_owned(), value);
                let _ = write!(out, " {cell:>10}");
            }
            out.push('\n');
        }
        out.push('\n');
    }
    let incorrect: u64 = records.iter().map(|r| r.incorrect_delivered).sum();
    let broken = records.iter().filter(|r| r.completed && !r.intact).count();
    let _ = writeln!(
        out,
        "incorrect deliveries (gateway oracle), all runs: {incorrect}; finished transfers with \
         wrong bytes: {broken}"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draft_mtus() {
        assert_eq!(draft_mtu(1e-7), 576);
        assert_eq!(draft_mtu(3e-6), 576);
        assert_eq!(draft_mtu(1e-5), 296);
        assert_eq!(draft_mtu(3e-5), 296);
        assert_eq!(draft_mtu(1e-4), 168);
        assert_eq!(draft_mtu(3e-4), 96);
    }
}
