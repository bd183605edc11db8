//! The sweep's table and plot.

use std::path::Path;

use taroc_sim::plot::{self, Axis, Marker, Panel, Series};

use super::reference::{GOAL_SHARE, ROHC_TCP_U_MODE};
use super::Row;

/// The report as a table.
pub(super) fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<12} {:>6} {:>5} {:>10} {:>8} {:>9} {:>9} {:>9} {:>7} {:>11} {:>11} {:>8} {:>13}\n",
        "scheme",
        "loss%",
        "burst",
        "intact",
        "damage",
        "per1000",
        "f per1000",
        "incorrect",
        "undet.",
        "outage/open",
        "refused run",
        "ROHC-TCP",
        "goal(1%)",
    );
    for r in rows {
        let burst = r.burst.map_or("-".to_string(), |b| format!("{b}"));
        let f = r
            .many_flows
            .as_ref()
            .map_or("-".to_string(), |f| format!("{:.3}", f.damage_per_1000));
        let outage = format!(
            "{}/{}",
            r.pooled.longest_outage_packets, r.pooled.unended_outages
        );
        let run = format!(
            "{}/{:.1}s",
            r.pooled.longest_refused_run, r.pooled.longest_refused_run_s
        );
        let (rohc, goal) = match r.rohc_tcp_u_mode_per_1000 {
            Some(v) if r.loss_percent >= 10.0 => {
                let goal = v * GOAL_SHARE;
                let met = if r.pooled.damage_per_1000 <= goal {
                    "met"
                } else {
                    "missed"
                };
                (rohc_figure(v, r.rohc_measured), format!("{goal:.4} {met}"))
            }
            Some(v) => (rohc_figure(v, r.rohc_measured), "-".to_string()),
            None => ("-".to_string(), "-".to_string()),
        };
        out += &format!(
            "{:<12} {:>6} {:>5} {:>10} {:>8} {:>9.3} {:>9} {:>9} {:>7} {:>11} {:>11} {:>8} {:>13}\n",
            r.scheme,
            r.loss_percent,
            burst,
            r.pooled.intact,
            r.pooled.damage,
            r.pooled.damage_per_1000,
            f,
            r.pooled.incorrect,
            r.pooled.undetected,
            outage,
            run,
            rohc,
            goal,
        );
    }
    if rows.iter().any(|r| r.rohc_measured) {
        out += "* ROHC-TCP U-mode measured in this run with the peer kit's harness (refused plus \
                wrong per 1000 frames it received)\n";
    }
    out
}

/// A ROHC-TCP figure as the table shows it: measured ones to one decimal, marked `*`.
fn rohc_figure(v: f64, measured: bool) -> String {
    if measured {
        format!("{v:.1}*")
    } else {
        format!("{v}")
    }
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

/// Damage per 1000 intact frames against loss, log scale: pooled and many-flows panels.
pub(super) fn plot_svg(rows: &[Row], captures: usize) -> String {
    let mut panels = Vec::new();
    for (title, alone) in [
        (format!("pooled over {captures} captures"), false),
        ("many-flows capture alone".to_string(), true),
    ] {
        // One series per scheme and loss model, in the rows' order; one colour per scheme,
        // dashed for bursty loss.
        let mut series: Vec<Series> = Vec::new();
        let mut schemes: Vec<&str> = Vec::new();
        for r in rows {
            let counts = if alone {
                r.many_flows.as_ref()
            } else {
                Some(&r.pooled)
            };
            let Some(counts) = counts else { continue };
            let model = r
                .burst
                .map_or("random".to_string(), |b| format!("burst {b}"));
            let label = format!("{}, {model}", r.scheme);
            let point = (r.loss_percent, counts.damage_per_1000);
            if let Some(s) = series.iter_mut().find(|s| s.label == label) {
                s.points.push(point);
                continue;
            }
            let colour = match schemes.iter().position(|s| *s == r.scheme) {
                Some(i) => i,
                None => {
                    schemes.push(&r.scheme);
                    schemes.len() - 1
                }
            };
            let mut s = Series::line(&label, COLORS[colour % COLORS.len()], vec![point]);
            s.marker = Marker::Dot;
            s.dashed = r.burst.is_some();
            series.push(s);
        }
        if !alone {
            let mut rohc = Series::line(
                "ROHC-TCP U (published)",
                "#555555",
                ROHC_TCP_U_MODE.to_vec(),
            );
            rohc.marker = Marker::Square;
            rohc.dashed = true;
            series.push(rohc);
        }
        let positive = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|v| *v > 0.0);
        let (lo, hi) = positive.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (lo, hi) = if hi > 0.0 {
            (lo / 2.0, hi * 2.0)
        } else {
            (0.001, 1.0)
        };
        panels.push(Panel {
            title,
            x: Axis::log("link loss (%)", 1.0, 50.0),
            y: Axis::log("context-damage losses per 1000 intact frames", lo, hi),
            series,
            notes: vec![
                "Zero damage cannot be drawn on a log scale: such points are left out.".into(),
                "VJ mostly delivers wrong packets rather than refusing them: see the table's \
                 incorrect column."
                    .into(),
            ],
        });
    }
    plot::svg("Context damage under link loss", &panels)
}

pub(super) fn write_plot(path: &Path, svg: &str) -> Result<(), String> {
    let bytes = if path.extension().is_some_and(|e| e == "png") {
        plot::PngRenderer::new()?.render(svg, 2.0)?
    } else {
        svg.as_bytes().to_vec()
    };
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}
