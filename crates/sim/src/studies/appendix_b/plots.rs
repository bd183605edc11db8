//! The draft-style plots of `taroc reproduce`: for each of the draft's four tables, goodput
//! against BER for every scheme that ran (ours, with the per-seed spread as error bars) beside
//! the draft's numbers.

use std::fmt::Write as _;

use super::reference::{self, Row, DRAFT_SCHEMES};
use super::runs::{cell, Grid};
use crate::plot::{self, Axis, Marker, Panel, Series};
use crate::tcp::variant::TcpVariant;

/// The colors of the draft's schemes.
const COLORS: [(&str, &str); 5] = [
    ("none", "#555555"),
    ("vj", "#d62728"),
    ("iphc", "#ff7f0e"),
    ("taroc", "#1f77b4"),
    ("ideal", "#2ca02c"),
];

/// The colors of the schemes the draft has no column for (taroc-plus, ideal-7, ...), in turn.
const EXTRA_COLORS: [&str; 6] = [
    "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f",
];

/// Which seeds' spread the error bars show, in words (the plots' notes say it).
pub const ERROR_BARS: &str = "error bars: lowest to highest of the per-seed goodputs";

/// One scheme on the plots: its label, color and whether the draft has numbers for it.
struct Line {
    scheme: String,
    label: String,
    color: &'static str,
    draft: bool,
}

/// The lines of the plots: the draft's five schemes (IDEAL first, so that the schemes close to
/// it stay visible on top), then every other scheme that ran, in the grid's order.
fn lines(grid: &Grid) -> Vec<Line> {
    let mut lines: Vec<Line> = [4, 0, 1, 2, 3]
        .into_iter()
        .map(|i| Line {
            scheme: DRAFT_SCHEMES[i].1.to_string(),
            label: DRAFT_SCHEMES[i].0.to_string(),
            color: COLORS[i].1,
            draft: true,
        })
        .collect();
    for c in &grid.cells {
        if !lines.iter().any(|l| l.scheme == c.scheme) {
            let color = EXTRA_COLORS[(lines.len() - 5) % EXTRA_COLORS.len()];
            lines.push(Line {
                scheme: c.scheme.clone(),
                label: c.scheme.clone(),
                color,
                draft: false,
            });
        }
    }
    lines
}

/// Points (x, y) and error bars (x, low, high) of one series.
type PointsAndBars = (Vec<(f64, f64)>, Vec<(f64, f64, f64)>);

/// Our points of `scheme` over `table`, each divided by `scale(row)` (None: not shown), with
/// the per-seed spread as error bars.
fn ours(
    grid: &Grid,
    table: &[&Row],
    scheme: &str,
    scale: impl Fn(&Row) -> Option<f64>,
) -> PointsAndBars {
    let (mut points, mut bars) = (Vec::new(), Vec::new());
    for row in table {
        let (Some(c), Some(scale)) = (cell(grid, row, scheme), scale(row)) else {
            continue;
        };
        let low = c.per_seed.iter().copied().fold(f64::INFINITY, f64::min);
        let high = c.per_seed.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        points.push((row.ber, c.goodput_bytes_per_s / scale));
        if c.per_seed.len() > 1 {
            bars.push((row.ber, low / scale, high / scale));
        }
    }
    (points, bars)
}

/// The plots: for each of the draft's four tables (bandwidth and TCP), goodput against BER
/// (log scale) for every scheme that ran, ours (solid, dots, error bars) beside the draft's
/// (dashed, squares); panels with a linear goodput axis, a logarithmic one, and goodput relative
/// to IDEAL. Returns (file name, SVG).
pub fn plots(grid: &Grid) -> Vec<(String, String)> {
    let rows = reference::rows().unwrap_or_default();
    let mut tables: Vec<(f64, TcpVariant)> = Vec::new();
    for r in &rows {
        if !tables.contains(&(r.bandwidth_kbps, r.tcp)) {
            tables.push((r.bandwidth_kbps, r.tcp));
        }
    }
    let lines = lines(grid);
    let mut files = Vec::new();
    for (kbps, tcp) in tables {
        let table: Vec<&Row> = rows
            .iter()
            .filter(|r| r.bandwidth_kbps == kbps && r.tcp == tcp)
            .collect();
        let name = format!("appendix-b-{kbps}k-{}.svg", tcp.name());
        let title = format!(
            "TAROC draft Appendix B: {kbps} kbit/s wireless link, TCP {}, goodput vs BER",
            tcp.name()
        );
        files.push((name, plot::svg(&title, &panels(grid, &lines, &table))));
    }
    files
}

/// The series of one table: goodput (ours and the draft's, every line) and goodput relative to
/// IDEAL, with the highest and the lowest positive goodput drawn.
struct TableSeries {
    goodput: Vec<Series>,
    ratios: Vec<Series>,
    top: f64,
    bottom: f64,
}

/// The series of `table`'s rows for every line.
fn table_series(grid: &Grid, lines: &[Line], table: &[&Row]) -> TableSeries {
    let (mut series, mut ratios) = (Vec::new(), Vec::new());
    let (mut top, mut bottom) = (1.0f64, f64::INFINITY);
    for line in lines {
        let (points, bars) = ours(grid, table, &line.scheme, |_| Some(1.0));
        let draft: Vec<(f64, f64)> = if line.draft {
            table
                .iter()
                .filter_map(|r| r.draft(&line.scheme).map(|g| (r.ber, g)))
                .collect()
        } else {
            Vec::new()
        };
        for &(_, g) in points.iter().chain(&draft) {
            top = top.max(g);
            if g > 0.0 {
                bottom = bottom.min(g);
            }
        }
        for &(_, low, high) in &bars {
            top = top.max(high);
            if low > 0.0 {
                bottom = bottom.min(low);
            }
        }
        let ideal = |r: &Row| cell(grid, r, "ideal").map(|c| c.goodput_bytes_per_s);
        let (ratio_points, ratio_bars) = ours(grid, table, &line.scheme, ideal);
        let solid = |points, bars| Series {
            marker: Marker::Dot,
            bars,
            ..Series::line(&format!("{} (ours)", line.label), line.color, points)
        };
        let dashed = |points| Series {
            marker: Marker::Square,
            dashed: true,
            width: 1.2,
            ..Series::line(&format!("{} (draft)", line.label), line.color, points)
        };
        if !ratio_points.is_empty() {
            ratios.push(solid(ratio_points, ratio_bars));
        }
        if !points.is_empty() {
            series.push(solid(points, bars));
        }
        if line.draft {
            let ratio_draft: Vec<(f64, f64)> = table
                .iter()
                .filter_map(|r| Some((r.ber, r.draft(&line.scheme)? / r.draft("ideal")?)))
                .collect();
            ratios.push(dashed(ratio_draft));
            series.push(dashed(draft));
        }
    }
    TableSeries {
        goodput: series,
        ratios,
        top,
        bottom,
    }
}

/// The notes under every panel of `table`: its MTUs, and what our points are.
fn notes(grid: &Grid, table: &[&Row]) -> Vec<String> {
    let mut mtus = String::from("MTU (bytes) by BER:");
    let mut last = None;
    for r in table {
        if last != Some(r.mtu) {
            let _ = write!(mtus, " {} from {},", r.mtu, r.ber_text);
            last = Some(r.mtu);
        }
    }
    mtus.pop();
    let seeds = grid.cells.first().map_or(0, |c| c.seeds);
    vec![
        mtus,
        format!(
            "Ours: mean of {seeds} seed(s) x {} s per point, {ERROR_BARS}; the draft's from \
             its Appendix B table.",
            grid.duration_s
        ),
    ]
}

/// The three panels of one table: goodput on a linear scale, on a logarithmic one, and
/// relative to IDEAL.
fn panels(grid: &Grid, lines: &[Line], table: &[&Row]) -> [Panel; 3] {
    let TableSeries {
        goodput,
        ratios,
        top,
        bottom,
    } = table_series(grid, lines, table);
    let notes = notes(grid, table);
    let (bmin, bmax) = table.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
        (lo.min(r.ber), hi.max(r.ber))
    });
    let x = Axis::log("bit error rate", bmin / 1.3, bmax * 1.3);
    let top_ratio = ratios
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.bars.iter().map(|b| b.2))
        })
        .filter(|v| v.is_finite())
        .fold(1.0f64, f64::max);
    let linear = Panel {
        title: "goodput, linear scale".into(),
        x: x.clone(),
        y: Axis::linear("goodput (bytes/s)", 0.0, top * 1.05),
        series: goodput.clone(),
        notes: notes.clone(),
    };
    let log = Panel {
        title: "goodput, logarithmic scale".into(),
        x: x.clone(),
        y: Axis::log("goodput (bytes/s)", (bottom / 1.5).max(0.1), top * 1.5),
        series: goodput,
        notes: notes.clone(),
    };
    let relative = Panel {
        title: "goodput relative to IDEAL (ours to our IDEAL's mean, the draft's to its IDEAL)"
            .into(),
        x,
        y: Axis::linear("goodput / IDEAL", 0.0, top_ratio * 1.1),
        series: ratios,
        notes,
    };
    [linear, log, relative]
}

#[cfg(test)]
mod tests {
    use super::super::runs::tests::grid_of;
    use super::*;

    #[test]
    fn one_plot_per_draft_table_with_every_scheme_that_ran_and_error_bars() {
        let schemes = [
            "none",
            "vj",
            "iphc",
            "taroc",
            "ideal",
            "taroc-plus",
            "ideal-7",
        ];
        let grid = grid_of(&schemes, |r, s| r.draft(s).unwrap_or(1000.0) * 0.9);
        let files = plots(&grid);
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "appendix-b-384k-tahoe.svg",
                "appendix-b-114k-sack.svg",
                "appendix-b-64k-reno.svg",
                "appendix-b-9.6k-sack.svg"
            ]
        );
        for (name, svg) in &files {
            for s in ["NONE", "VJHC", "IPHC", "TAROC", "IDEAL"] {
                assert!(svg.contains(&format!("{s} (ours)")), "{name}: {s}");
                assert!(svg.contains(&format!("{s} (draft)")), "{name}: {s}");
            }
            for s in ["taroc-plus", "ideal-7"] {
                // In each of the three panels' legends.
                assert_eq!(
                    svg.matches(&format!("{s} (ours)")).count(),
                    3,
                    "{name}: {s}"
                );
                assert!(!svg.contains(&format!("{s} (draft)")), "{name}: {s}");
            }
            // Every scheme's every point has its error bar, in all three panels.
            let points = 9;
            assert_eq!(
                svg.matches("class=\"error-bar\"").count(),
                3 * schemes.len() * points,
                "{name}"
            );
            assert!(svg.contains(ERROR_BARS), "{name}");
            assert!(svg.contains("1e-7") && svg.contains("1e-3"));
        }
        // A scheme run alone (no IDEAL) still gets its goodput plotted.
        let alone = plots(&grid_of(&["taroc-plus"], |_, _| 500.0));
        assert!(alone
            .iter()
            .all(|(_, svg)| svg.contains("taroc-plus (ours)")));
    }
}
