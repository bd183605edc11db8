//! The study's plots: the aggregate goodput of suites 1 (against BER) and 2 (against RTT) for
//! each sender, beside the paper's bound and its quoted points.

use super::runs::Record;
use crate::plot::{self, Axis, Marker, Panel, Series};

const COLORS: [(&str, &str); 3] = [
    ("reno", "#d62728"),
    ("sack", "#2ca02c"),
    ("decoupling", "#1f77b4"),
];

fn panel(records: &[Record], suite: &str) -> Panel {
    let x_of = |r: &Record| if suite == "1" { r.ber } else { r.rtt_ms };
    let points: Vec<&Record> = records.iter().filter(|r| r.suite == suite).collect();
    let mut series = Vec::new();
    for (sender, color) in COLORS {
        let pts = points
            .iter()
            .filter(|r| r.sender == sender)
            .map(|r| (x_of(r), r.goodput_bytes_per_s / 1e3))
            .collect();
        let mut s = Series::line(sender, color, pts);
        s.marker = Marker::Dot;
        series.push(s);
    }
    let bound = points
        .iter()
        .filter(|r| r.sender == "decoupling")
        .filter_map(|r| r.bound_bytes_per_s.map(|b| (x_of(r), b / 1e3)))
        .collect();
    let mut b = Series::line(
        if suite == "1" {
            "link x (1 - PER)"
        } else {
            "8.3 bound, 1 conn."
        },
        "#555555",
        bound,
    );
    b.dashed = true;
    series.push(b);
    let paper: Vec<(f64, f64)> = if suite == "1" {
        vec![(2e-6, 250.0), (2e-6, 875.0)]
    } else {
        vec![(100.0, 560.0), (100.0, 615.0)]
    };
    let mut p = Series::line("paper's quoted points", "#000000", paper);
    p.marker = Marker::Square;
    p.width = 0.0;
    series.push(p);
    let (title, x) = if suite == "1" {
        (
            "Suite 1: aggregate goodput of two connections vs BER (RTT 10 ms)",
            Axis::log("BER on C-D", 5e-8, 2e-5),
        )
    } else {
        (
            "Suite 2: aggregate goodput of two connections vs RTT (BER 2e-6)",
            Axis::linear("RTT, ms", 0.0, 210.0),
        )
    };
    Panel {
        title: title.into(),
        x,
        y: Axis::linear("goodput, KB/s", 0.0, 1300.0),
        series,
        notes: vec![
            "paper's points: suite 1 Reno 250 KB/s and decoupling 3.5x at 2e-6; suite 2 decoupling 560 and bound 615 KB/s at 100 ms".into(),
        ],
    }
}

/// The plots of suites 1 and 2: (file name, SVG).
pub fn plots(records: &[Record]) -> Vec<(String, String)> {
    ["1", "2"]
        .into_iter()
        .map(|suite| {
            let svg = plot::svg(
                "TCP decoupling (Wang & Kung) on the simulator",
                &[panel(records, suite)],
            );
            (format!("decoupling-suite{suite}.svg"), svg)
        })
        .collect()
}
