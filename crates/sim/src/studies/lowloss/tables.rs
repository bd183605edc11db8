//! The study's report: the analytic results beside the paper's, a table per simulated figure,
//! Figure 19's grid, the claims, and the JSON Lines records.

use std::fmt::Write as _;

use serde::Serialize;

use super::analytic;
use super::claims::Claim;
use super::runs::{Results, FIGURES};
use super::topology::Topology;

/// The analytic results beside the paper's numbers.
pub fn analytic_text() -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Analytic results (H = 48, C = 4: UDP/IPv6)");
    let _ = writeln!(
        s,
        "  Figure 4: 256 compressed headers per full header: the average header is {:.2} bits above C (paper: 1.4 bits)",
        analytic::refresh_cost_bits()
    );
    let eff: Vec<String> = [1.0, 4.0, 16.0, 64.0, 257.0]
        .iter()
        .map(|&x| {
            format!(
                "x={x}: {:.1}%",
                100.0 * analytic::efficiency(48.0, 4.0, 36.0, x)
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "  Figure 5: efficiency with D = 36: {} (all compressed: 90.0%)",
        eff.join(", ")
    );
    let red: Vec<String> = analytic::section_3_5_reductions()
        .iter()
        .map(|(l, _, p)| format!("{l}: {p}%"))
        .collect();
    let _ = writeln!(
        s,
        "  Section 3.5: packet loss falls by {} (paper: 52%, 30%, 68%, 45%)",
        red.join(", ")
    );
    let _ = writeln!(
        s,
        "  Figure 13 (WLAN, 512-byte segments, window {} segments, headers 100 -> 5 bytes):",
        analytic::window_segments()
    );
    let _ = writeln!(
        s,
        "    {:<8} {:>16} {:>10} {:>18} {:>22}",
        "BER", "segs btw loss", "loss rate", "compressed segs", "loss rate (incl win)"
    );
    for ber in analytic::FIGURE_13_BERS {
        let c = analytic::figure_13(ber);
        let _ = writeln!(
            s,
            "    {:<8e} {:>16} {:>10} {:>18} {:>22}",
            ber,
            c.segments_between_losses,
            analytic::percent_2(c.loss_rate),
            c.compressed_segments_between_losses,
            analytic::percent_2(c.compressed_loss_rate)
        );
    }
    let _ = writeln!(
        s,
        "    (paper: 20400 0.0049% 24200 0.40% | 2040 0.049% 2420 4.0% | 204 0.49% 242 40%)"
    );
    s
}

/// The simulated figures' tables, Figure 19's grid and the claims.
pub fn simulated_text(r: &Results, claims: &[Claim]) -> String {
    let mut s = String::new();
    let o = &r.options;
    let _ = writeln!(
        s,
        "\nSimulated ({} seeds x {} s per cell; goodput = mean over seeds, [lowest, highest])",
        o.seeds, o.duration_s
    );
    let mut shown: Vec<(Topology, f64)> = Vec::new();
    for figure in FIGURES.iter().filter(|f| f.number != 19) {
        let key = (figure.topology, figure.bers[0]);
        if !shown.contains(&key) {
            shown.push(key);
            figure_table(&mut s, r, key);
        }
    }
    figure_19(&mut s, r);
    let _ = writeln!(s, "\nClaims");
    for c in claims {
        let _ = writeln!(
            s,
            "  [{:<11}] {} (measured: {})",
            c.verdict.word(),
            c.claim,
            c.measured
        );
    }
    s
}

/// The table of the figures over time of one (topology, BER): what the paper says of each,
/// then every scheme's goodput, segments, gain over none and losses.
fn figure_table(s: &mut String, r: &Results, (topology, ber): (Topology, f64)) {
    let numbers: Vec<String> = FIGURES
        .iter()
        .filter(|f| f.number != 19 && (f.topology, f.bers[0]) == (topology, ber))
        .map(|f| f.number.to_string())
        .collect();
    let _ = writeln!(
        s,
        "\nFigure {}: {} topology, BER {:e}",
        numbers.join(", "),
        topology.name(),
        ber
    );
    for f in FIGURES
        .iter()
        .filter(|f| numbers.contains(&f.number.to_string()))
    {
        let _ = writeln!(s, "  paper (Fig. {}): {}", f.number, f.paper);
    }
    let _ = writeln!(
        s,
        "  {:<12} {:>9} {:>19} {:>10} {:>8} {:>10} {:>11}",
        "scheme", "kbit/s", "[lowest, highest]", "segments", "vs none", "frame loss", "decomp drop"
    );
    let none = r.cell(topology, ber, "none").map(|c| c.goodput());
    for scheme in &r.options.schemes {
        let Some(c) = r.cell(topology, ber, scheme) else {
            continue;
        };
        let per: Vec<f64> = c
            .runs
            .iter()
            .map(|r| r.goodput_bytes_per_s * 0.008)
            .collect();
        let lo = per.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let vs = none.map_or("-".into(), |n| {
            format!("{:+.1}%", (c.goodput() / n - 1.0) * 100.0)
        });
        let _ = writeln!(
            s,
            "  {:<12} {:>9.1} {:>19} {:>10.0} {:>8} {:>9.3}% {:>11.0}",
            scheme,
            c.kbps(),
            format!("[{lo:.1}, {hi:.1}]"),
            c.delivered(),
            vs,
            100.0 * c.mean(|r| r.loss_rate()),
            c.mean(|r| r.decompressor_drops as f64)
        );
    }
}

/// Figure 19's grid: segments delivered per BER and scheme.
fn figure_19(s: &mut String, r: &Results) {
    let o = &r.options;
    let _ = writeln!(
        s,
        "\nFigure 19: WLAN, 512-byte segments delivered in {} s (mean over seeds)",
        o.duration_s
    );
    let _ = write!(s, "  {:<8}", "BER");
    for scheme in &o.schemes {
        let _ = write!(s, " {:>11}", scheme);
    }
    let _ = writeln!(s);
    for &ber in &o.bers {
        let _ = write!(s, "  {:<8e}", ber);
        for scheme in &o.schemes {
            match r.cell(Topology::Wlan, ber, scheme) {
                Some(c) => {
                    let _ = write!(s, " {:>11.0}", c.delivered());
                }
                None => {
                    let _ = write!(s, " {:>11}", "-");
                }
            }
        }
        let _ = writeln!(s);
    }
}

/// The report: the analytic results, the simulated figures and the claims, and what the runs
/// took.
pub fn report(r: &Results, claims: &[Claim]) -> String {
    format!(
        "{}{}\n{} runs in {:.1} s wall\n",
        analytic_text(),
        simulated_text(r, claims),
        r.options.runs(),
        r.wall_s
    )
}

/// One JSON Lines record: a scheme of a figure at one BER.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// Always "low-loss".
    pub study: &'static str,
    /// The paper's figure number.
    pub figure: u32,
    /// "modem" or "wlan".
    pub topology: &'static str,
    /// Our scheme name.
    pub scheme: String,
    /// The bit-error rate.
    pub ber: f64,
    /// Mean goodput over seeds, bytes per second.
    pub goodput_bytes_per_s: f64,
    /// Mean 512-byte segments delivered in the run.
    pub delivered_segments: f64,
    /// Seeds run.
    pub seeds: u32,
    /// Simulated seconds per run.
    pub duration_s: f64,
    /// Each seed's goodput, bytes per second.
    pub per_seed: Vec<f64>,
    /// Mean share of data frames hit by bit errors.
    pub frame_loss_rate: f64,
    /// Mean data frames the decompressor dropped.
    pub decompressor_drops: f64,
}

/// Every record: each figure's cells, every scheme run.
pub fn records(r: &Results) -> Vec<Record> {
    let mut out = Vec::new();
    for figure in FIGURES {
        let bers: &[f64] = if figure.number == 19 {
            &r.options.bers
        } else {
            figure.bers
        };
        for &ber in bers {
            for scheme in &r.options.schemes {
                let Some(c) = r.cell(figure.topology, ber, scheme) else {
                    continue;
                };
                out.push(Record {
                    study: "low-loss",
                    figure: figure.number,
                    topology: figure.topology.name(),
                    scheme: scheme.clone(),
                    ber,
                    goodput_bytes_per_s: c.goodput(),
                    delivered_segments: c.delivered(),
                    seeds: c.runs.len() as u32,
                    duration_s: r.options.duration_s,
                    per_seed: c.runs.iter().map(|r| r.goodput_bytes_per_s).collect(),
                    frame_loss_rate: c.mean(|r| r.loss_rate()),
                    decompressor_drops: c.mean(|r| r.decompressor_drops as f64),
                });
            }
        }
    }
    out
}
