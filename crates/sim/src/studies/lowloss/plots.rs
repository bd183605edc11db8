//! The study's plots: delivered segments against time (Figures 10, 11, 12, 14, 18), against the
//! bit-error rate (Figure 19), and the analytic Figures 4, 5 and 6; the paper's quoted numbers
//! drawn as dashed lines.

use super::analytic;
use super::runs::{Results, FIGURES};
use super::topology::SEGMENT_BYTES;
use crate::plot::{svg, Axis, Marker, Panel, Series};

/// A scheme's color in every plot.
pub fn color(scheme: &str) -> &'static str {
    match scheme {
        "none" => "#000000",
        "iphc-plain" => "#d62728",
        "iphc-twice" => "#1f77b4",
        "iphc" => "#17becf",
        "taroc" => "#ff7f0e",
        "taroc-plus" => "#9467bd",
        "ideal-5" => "#2ca02c",
        _ => "#7f7f7f",
    }
}

/// The legend label: ours, with the paper's name where it has one.
pub fn label(scheme: &str) -> String {
    match scheme {
        "none" => "none".into(),
        "iphc-plain" => "iphc-plain (paper: VJ)".into(),
        "iphc-twice" => "iphc-twice (paper: twice)".into(),
        "iphc" => "iphc (paper: twice + req)".into(),
        "ideal-5" => "ideal-5 (paper: lossless)".into(),
        other => other.into(),
    }
}

/// Schemes drawn dashed, so that a curve on top of another (iphc on iphc-twice, TAROC on none
/// when it cannot compress) stays visible.
fn dashed(scheme: &str) -> bool {
    matches!(scheme, "iphc" | "taroc" | "taroc-plus")
}

/// Segments after `t` seconds at `kbps`.
fn segments_at(kbps: f64, t: f64) -> f64 {
    kbps * 1000.0 / 8.0 / SEGMENT_BYTES as f64 * t
}

/// Every plot: (file name, SVG).
pub fn plots(r: &Results) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let duration = r.options.duration_s;
    for figure in FIGURES {
        if figure.number == 19 {
            continue;
        }
        let ber = figure.bers[0];
        let mut series = Vec::new();
        let mut top: f64 = 1.0;
        for scheme in &r.options.schemes {
            if let Some(cell) = r.cell(figure.topology, ber, scheme) {
                let points = cell.series();
                top = top.max(points.last().map_or(0.0, |p| p.1));
                let mut s = Series::line(&label(scheme), color(scheme), points);
                s.dashed = dashed(scheme);
                series.push(s);
            }
        }
        let mut quote = |name: &str, kbps: f64| {
            let mut s = Series::line(
                name,
                "#7f7f7f",
                vec![(0.0, 0.0), (duration, segments_at(kbps, duration))],
            );
            s.dashed = true;
            s.width = 1.0;
            series.push(s);
        };
        let none = r
            .cell(figure.topology, ber, "none")
            .map(|c| c.kbps())
            .unwrap_or(f64::NAN);
        match figure.number {
            10 => quote("paper: none x 1.16", none * 1.16),
            12 => {
                quote("paper: none 620 kbit/s", 620.0);
                quote("paper: VJ 470 kbit/s", 470.0);
            }
            14 => quote("paper: none x 1.28", none * 1.28),
            _ => {}
        }
        let panel = Panel {
            title: format!(
                "Figure {}: {} topology, BER {ber:e}, mean of {} seeds",
                figure.number,
                figure.topology.name(),
                r.options.seeds
            ),
            x: Axis::linear("time (s)", 0.0, duration),
            y: Axis::linear("512-byte segments delivered", 0.0, top * 1.1),
            series,
            notes: vec![format!("Paper: {}.", figure.paper)],
        };
        out.push((
            format!("low-loss-figure-{}.svg", figure.number),
            svg("Low-loss header compression (Degermark et al.)", &[panel]),
        ));
    }
    out.push(("low-loss-figure-19.svg".into(), figure_19(r)));
    out.push(("low-loss-analytic.svg".into(), analytic_plots()));
    out
}

fn figure_19(r: &Results) -> String {
    let mut series = Vec::new();
    let mut top: f64 = 10.0;
    for scheme in &r.options.schemes {
        let points: Vec<(f64, f64)> = r
            .options
            .bers
            .iter()
            .filter_map(|&b| {
                let c = r.cell(super::topology::Topology::Wlan, b, scheme)?;
                Some((b, c.delivered()))
            })
            .collect();
        top = points.iter().map(|p| p.1).fold(top, f64::max);
        let mut s = Series::line(&label(scheme), color(scheme), points);
        s.marker = Marker::Dot;
        s.dashed = dashed(scheme);
        series.push(s);
    }
    let lo = r.options.bers.iter().copied().fold(1e-9, f64::min);
    let hi = r.options.bers.iter().copied().fold(1e-4, f64::max);
    let panel = Panel {
        title: format!(
            "Figure 19: WLAN, segments delivered in {} s, mean of {} seeds",
            r.options.duration_s, r.options.seeds
        ),
        x: Axis::log("bit-error rate", lo, hi),
        y: Axis::log("512-byte segments delivered", 10.0, top * 2.0),
        series,
        notes: vec![format!("Paper: {}.", FIGURES[5].paper)],
    };
    svg("Low-loss header compression (Degermark et al.)", &[panel])
}

fn analytic_plots() -> String {
    use analytic::{COMPRESSED_HEADER as C, FULL_HEADER as H, GSM_PAYLOAD as D};
    let xs: Vec<f64> = (0..=40)
        .map(|i| 10f64.powf(i as f64 * 3.0 / 40.0))
        .collect();
    let line = |name: &str, color: &str, f: &dyn Fn(f64) -> f64, xs: &[f64]| {
        Series::line(name, color, xs.iter().map(|&x| (x, f(x))).collect())
    };
    let fig4 = Panel {
        title: "Figure 4: average header size, H = 48, C = 4".into(),
        x: Axis::log("x (a full header every x-th packet)", 1.0, 1000.0),
        y: Axis::linear("bytes", 0.0, 50.0),
        series: vec![
            line(
                "average header",
                "#1f77b4",
                &|x| analytic::average_header(H, C, x),
                &xs,
            ),
            line("compressed header", "#7f7f7f", &|_| C, &xs),
        ],
        notes: vec![format!(
            "256 compressed headers per full header: {:.2} bits above C (paper: 1.4 bits).",
            analytic::refresh_cost_bits()
        )],
    };
    let fig5 = Panel {
        title: "Figure 5: bandwidth efficiency, H = 48, C = 4, D = 36".into(),
        x: Axis::log("x (a full header every x-th packet)", 1.0, 1000.0),
        y: Axis::linear("efficiency", 0.0, 1.0),
        series: vec![
            line(
                "with refreshes",
                "#1f77b4",
                &|x| analytic::efficiency(H, C, D, x),
                &xs,
            ),
            line("all compressed", "#7f7f7f", &|_| D / (D + C), &xs),
        ],
        notes: Vec::new(),
    };
    let bers: Vec<f64> = (0..=50)
        .map(|i| 10f64.powf(-7.0 + i as f64 * 5.0 / 50.0))
        .collect();
    let loss = |h: f64, d: f64| move |b: f64| analytic::packet_loss(b, h + d);
    let fig6 = Panel {
        title: "Figure 6: packet loss rate, H = 48 (88 tunnelled), C = 4".into(),
        x: Axis::log("bit-error rate", 1e-7, 1e-2),
        y: Axis::log("packet loss rate", 1e-5, 1.0),
        series: vec![
            line("D = 36, H", "#d62728", &loss(H, 36.0), &bers),
            line("D = 36, C", "#2ca02c", &loss(C, 36.0), &bers),
            line("D = 100, H", "#ff7f0e", &loss(H, 100.0), &bers),
            line("D = 100, C", "#1f77b4", &loss(C, 100.0), &bers),
            line(
                "D = 36, H tunnelled",
                "#9467bd",
                &loss(H + 40.0, 36.0),
                &bers,
            ),
        ],
        notes: vec![analytic::section_3_5_reductions()
            .iter()
            .map(|(l, _, p)| format!("{l}: -{p}%"))
            .collect::<Vec<_>>()
            .join(", ")],
    };
    svg(
        "Low-loss header compression: analytic figures",
        &[fig4, fig5, fig6],
    )
}
