//! How long does a flow stay broken? The longest outage of every scheme after a decompressor
//! reset and in Gilbert–Elliott loss bursts of mean length 50 and 500 frames, measured twice:
//!
//! - **eval** (`taroc eval`: a capture replayed, no TCP reacts): the four Linux bulk captures of
//!   `../shared/captures/linux/` (the built-in capture if they are absent); reset: both
//!   decompressors replaced halfway through each capture (`--reset-at`); bursts: 5% frame loss
//!   in bursts of mean 50 or 500 frames (`--loss 0.05 --burst L`), seeds 1 to 5.
//! - **sim** (`taroc sim`: real TCP, which times out and retransmits): the Appendix B topology at
//!   384 kbit/s (Tahoe, MTU 576), 300 simulated seconds, seeds 1 to 3; reset: both wireless
//!   decompressors replaced at 30 s (`decompressor_reset_s`, BER 1e-7); bursts: both wireless
//!   directions lose every frame for an exponentially distributed time of mean 50 or 500
//!   full-size frame times (0.6 s or 6.0 s), 5% of the time (`gilbert_elliott_time`).
//!
//! Each cell is the worst over captures and seeds: the most packets one outage cost, and the
//! longest outage in seconds (capture time for eval, simulated time for sim); `+` marks an
//! outage still open at the end of the run, measured to the end. See `taroc_sim::outage` for
//! what an outage is.
//!
//! ```sh
//! cargo run --release -p taroc-cli --example outage
//! ```

use std::path::Path;
use std::process::ExitCode;

use taroc_cli::capture::{self, CaptureReader};
use taroc_cli::eval::{evaluate, Options};
use taroc_core::Variant;
use taroc_sim::link::ErrorModel;
use taroc_sim::outage::OutageStats;
use taroc_sim::scenario::{default_sim, Scenario};

/// The conditions, in column order.
const CONDITIONS: [&str; 3] = ["reset", "GE mean 50", "GE mean 500"];
/// Loss share of the burst conditions.
const BURST_LOSS: f64 = 0.05;
/// Mean burst lengths, frames.
const BURSTS: [f64; 2] = [50.0, 500.0];

fn main() -> ExitCode {
    let mut variants = Variant::all();
    variants.extend(
        taroc_core::variant::EXTRA_NAMES
            .iter()
            .filter_map(|name| Variant::by_name(name)),
    );
    let captures = match captures() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("outage: {e}");
            return ExitCode::FAILURE;
        }
    };
    let names: Vec<&str> = captures
        .iter()
        .map(|(name, _)| name.rsplit('/').next().unwrap_or(name))
        .collect();
    println!("eval (capture replay): {}", names.join(", "));
    let mut rows = vec![[OutageStats::default(); 3]; variants.len()];
    for (name, bytes) in &captures {
        let half = match capture::parse(name, bytes) {
            Ok(capture) => capture.packets.len() as u64 / 2,
            Err(e) => {
                eprintln!("outage: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut runs = vec![(
            0,
            Options {
                reset_at: Some(half),
                ..Options::default()
            },
        )];
        for (column, burst) in BURSTS.iter().enumerate() {
            for seed in 1..=5 {
                let options = Options {
                    loss: BURST_LOSS,
                    burst: Some(*burst),
                    seed,
                    ..Options::default()
                };
                runs.push((column + 1, options));
            }
        }
        for (column, options) in runs {
            let results = CaptureReader::new(name.as_str(), &bytes[..])
                .map_err(|e| e.to_string())
                .and_then(|mut reader| evaluate(&mut reader, &variants, &options, |_| {}));
            let results = match results {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("outage: {e}");
                    return ExitCode::FAILURE;
                }
            };
            for (row, result) in rows.iter_mut().zip(results) {
                row[column] = row[column].merge(result.outage);
            }
        }
    }
    print!("{}", table(&variants, &rows));

    println!(
        "\nsim (real TCP): 384 kbit/s, Tahoe, MTU 576, 300 s, seeds 1-3; reset at 30 s; \
         bursts 5% of the time on both directions"
    );
    let base = Scenario {
        duration_s: 300.0,
        ..default_sim()
    };
    // One full-size frame (MTU + the kind byte) on the wireless link, seconds.
    let frame_s = (base.mtu + 1) as f64 * 8.0 / base.wireless_bps as f64;
    let mut rows = vec![[OutageStats::default(); 3]; variants.len()];
    for (row, variant) in rows.iter_mut().zip(&variants) {
        for seed in 1..=3 {
            let mut scenarios = vec![Scenario {
                scheme: variant.name.into(),
                seed,
                decompressor_reset_s: Some(30.0),
                ..base.clone()
            }];
            for burst in BURSTS {
                let mean_bad_s = burst * frame_s;
                scenarios.push(Scenario {
                    scheme: variant.name.into(),
                    seed,
                    errors: ErrorModel::GilbertElliottTime {
                        good_ber: 0.0,
                        bad_ber: 1.0,
                        mean_good_s: mean_bad_s * (1.0 - BURST_LOSS) / BURST_LOSS,
                        mean_bad_s,
                    },
                    ..base.clone()
                });
            }
            for (column, scenario) in scenarios.iter().enumerate() {
                match scenario.run() {
                    Ok(o) => {
                        row[column] = row[column].merge(o.data_outages.merge(o.ack_outages));
                    }
                    Err(e) => {
                        eprintln!("outage: {}: {e}", variant.name);
                        return ExitCode::FAILURE;
                    }
                }
            }
        }
    }
    print!("{}", table(&variants, &rows));
    ExitCode::SUCCESS
}

/// The names and bytes of the four Linux bulk captures beside the checkout, or of the built-in
/// capture.
fn captures() -> Result<Vec<(String, Vec<u8>)>, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/linux");
    let names = [
        "a_bulk_v4_default.pcap",
        "b_bulk_v4_nots.pcap",
        "c_bulk_v4_nosack.pcap",
        "d_bulk_v6_default.pcap",
    ];
    if !dir.join(names[0]).exists() {
        eprintln!("note: {} absent; using the built-in capture", dir.display());
        let name = taroc_cli::BUILTIN_CAPTURE_NAME.to_string();
        return Ok(vec![(name, taroc_cli::BUILTIN_CAPTURE.to_vec())]);
    }
    names
        .iter()
        .map(|name| {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok((path.display().to_string(), bytes))
        })
        .collect()
}

/// A Markdown table: one row per scheme, per condition the longest outage in packets and in
/// seconds (`+`: still open at the end of a run).
fn table(variants: &[Variant], rows: &[[OutageStats; 3]]) -> String {
    let mut out = String::from("| scheme |");
    for c in CONDITIONS {
        out.push_str(&format!(" {c}: packets | {c}: s |"));
    }
    out.push_str("\n|---|");
    out.push_str(&"--:|".repeat(2 * CONDITIONS.len()));
    out.push('\n');
    for (variant, row) in variants.iter().zip(rows) {
        out.push_str(&format!("| {} |", variant.name));
        for o in row {
            let open = if o.longest_outage_unended { "+" } else { "" };
            out.push_str(&format!(
                " {} | {:.3}{open} |",
                o.longest_outage_packets, o.longest_outage_s
            ));
        }
        out.push('\n');
    }
    out
}
