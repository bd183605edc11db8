//! The study's plot: the download-time CDFs, one panel per file size, one line per response.

use super::runs::{Row, StudyResult};
use crate::plot::{self, Axis, Panel, Series};

const COLORS: [&str; 5] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];

/// The download-time CDFs: one panel per file size, one line per response.
pub fn cdf_svg(result: &StudyResult) -> String {
    let panels: Vec<Panel> = result
        .sizes()
        .into_iter()
        .map(|kb| {
            let rows: Vec<&Row> = result.rows.iter().filter(|r| r.file_kb == kb).collect();
            // Up to the 99th percentile of the slowest response, so the body of the CDF shows.
            let max = rows
                .iter()
                .filter_map(|r| {
                    let s = &r.summary.sorted_s;
                    s.get((s.len() * 99 / 100).min(s.len().saturating_sub(1)))
                        .copied()
                })
                .fold(1.0, f64::max);
            let series = rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let s = &r.summary.sorted_s;
                    let n = s.len().max(1) as f64;
                    // At most about 400 points per line.
                    let step = (s.len() / 400).max(1);
                    let mut points: Vec<(f64, f64)> = s
                        .iter()
                        .enumerate()
                        .step_by(step)
                        .map(|(k, &t)| (t, (k + 1) as f64 / n))
                        .collect();
                    if let Some(&last) = s.last() {
                        points.push((last, 1.0));
                    }
                    let name = match r.scheme {
                        Some(scheme) => format!("{scheme} {}", r.response),
                        None => r.response.name().to_string(),
                    };
                    let mut line = Series::line(&name, COLORS[i % COLORS.len()], points);
                    line.step = true;
                    line
                })
                .collect();
            Panel {
                title: format!("{kb} KB downloads"),
                x: Axis::linear("download time (s)", 0.0, max),
                y: Axis::linear("fraction of downloads", 0.0, 1.0),
                series,
                notes: vec![format!(
                    "Empirical CDF over {} downloads per response; x axis to the 99th percentile.",
                    rows.first().map_or(0, |r| r.summary.downloads)
                )],
            }
        })
        .collect();
    plot::svg(
        "DCLOR draft, Appendix 2: download-time CDFs over the STIS model",
        &panels,
    )
}
