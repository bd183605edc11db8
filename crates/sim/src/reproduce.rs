//! The Appendix B grid: every (bandwidth, TCP, BER, MTU) row of the draft, every scheme, several
//! seeds, run in parallel on all cores; tables beside the draft's numbers, CSV and JSON.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use crate::link::ErrorModel;
use crate::reference::{self, Row, DRAFT_SCHEMES};
use crate::scenario::Scenario;

/// How to run the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct GridOptions {
    /// Seeds per cell.
    pub seeds: u32,
    /// Simulated seconds per run.
    pub duration_s: f64,
    /// Worker threads (0 = all cores).
    pub threads: usize,
    /// Schemes to run (our names).
    pub schemes: Vec<String>,
}

impl GridOptions {
    /// The full reproduction: 5 seeds of 1000 s, all schemes.
    pub fn full() -> GridOptions {
        GridOptions {
            seeds: 5,
            duration_s: 1000.0,
            threads: 0,
            schemes: DRAFT_SCHEMES.iter().map(|(_, s)| s.to_string()).collect(),
        }
    }

    /// The quick run: 3 seeds of 1000 s.
    pub fn quick() -> GridOptions {
        GridOptions {
            seeds: 3,
            duration_s: 1000.0,
            ..GridOptions::full()
        }
    }
}

/// One cell of our grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// Wireless bandwidth, kbit/s.
    pub bandwidth_kbps: f64,
    /// TCP variant.
    pub tcp: String,
    /// BER.
    pub ber: f64,
    /// MTU, bytes.
    pub mtu: usize,
    /// Scheme (our name).
    pub scheme: String,
    /// Goodput, bytes/s, mean over seeds.
    pub goodput_bytes_per_s: f64,
    /// Seeds run.
    pub seeds: u32,
    /// Goodput of each seed.
    pub per_seed: Vec<f64>,
    /// The draft's goodput for this cell.
    pub draft_bytes_per_s: f64,
    /// Events processed, summed over seeds.
    pub events: u64,
    /// Wall seconds, summed over seeds.
    pub wall_s: f64,
}

/// The result of a grid run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// Cells, in the draft's row order and our scheme order.
    pub cells: Vec<Cell>,
    /// Wall seconds for the whole grid.
    pub wall_s: f64,
    /// Threads used.
    pub threads: usize,
    /// Simulated seconds per run.
    pub duration_s: f64,
}

/// The scenario of one row, scheme and seed.
pub fn scenario(row: &Row, scheme: &str, seed: u64, duration_s: f64) -> Scenario {
    Scenario {
        wireless_bps: (row.bandwidth_kbps * 1000.0).round() as u64,
        errors: ErrorModel::Ber { ber: row.ber },
        mtu: row.mtu,
        tcp: row.tcp,
        scheme: scheme.to_string(),
        seed,
        duration_s,
        ..Scenario::default()
    }
}

/// Runs the grid; `progress(done, total)` is called after each run (from worker threads).
pub fn run(
    options: &GridOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Grid, String> {
    let rows = reference::rows()?;
    for s in &options.schemes {
        if !crate::scenario::SCHEMES.contains(&s.as_str())
            && crate::scenario::ideal_header(s).is_none()
        {
            return Err(format!("unknown scheme {s:?}"));
        }
    }
    if options.seeds == 0 {
        return Err("at least one seed is needed".into());
    }
    let start = Instant::now();
    let mut jobs = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for (s, scheme) in options.schemes.iter().enumerate() {
            for seed in 1..=u64::from(options.seeds) {
                jobs.push((r, s, seed, scenario(row, scheme, seed, options.duration_s)));
            }
        }
    }
    // Expensive (fast-link, low-BER) runs first, for load balance.
    jobs.sort_by(|a, b| {
        let cost = |j: &(usize, usize, u64, Scenario)| {
            j.3.wireless_bps as f64 / (1.0 + rows[j.0].ber * 1e5)
        };
        cost(b).total_cmp(&cost(a)).then(a.0.cmp(&b.0))
    });
    let threads = if options.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        options.threads
    };
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results = Mutex::new(vec![None; jobs.len()]);
    let error = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                match job.3.run() {
                    Ok(o) => {
                        if let Ok(mut r) = results.lock() {
                            r[i] = Some((o.goodput_bytes_per_s, o.events, o.wall_s));
                        }
                    }
                    Err(e) => {
                        if let Ok(mut slot) = error.lock() {
                            *slot = Some(e);
                        }
                    }
                }
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            });
        }
    });
    if let Some(e) = error.into_inner().ok().flatten() {
        return Err(e);
    }
    let results = results
        .into_inner()
        .map_err(|_| "worker panicked".to_string())?;
    let mut cells: Vec<Cell> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for (s, scheme) in options.schemes.iter().enumerate() {
            let mut per_seed = vec![0.0; options.seeds as usize];
            let (mut events, mut wall) = (0, 0.0);
            for (j, job) in jobs.iter().enumerate() {
                if job.0 == r && job.1 == s {
                    if let Some((g, e, w)) = results[j] {
                        per_seed[(job.2 - 1) as usize] = g;
                        events += e;
                        wall += w;
                    }
                }
            }
            cells.push(Cell {
                bandwidth_kbps: row.bandwidth_kbps,
                tcp: row.tcp.name().to_string(),
                ber: row.ber,
                mtu: row.mtu,
                scheme: scheme.clone(),
                goodput_bytes_per_s: per_seed.iter().sum::<f64>() / per_seed.len() as f64,
                seeds: options.seeds,
                per_seed,
                draft_bytes_per_s: row.draft(scheme).unwrap_or(f64::NAN),
                events,
                wall_s: wall,
            });
        }
    }
    Ok(Grid {
        cells,
        wall_s: start.elapsed().as_secs_f64(),
        threads,
        duration_s: options.duration_s,
    })
}

fn cell<'a>(grid: &'a Grid, row: &Row, scheme: &str) -> Option<&'a Cell> {
    grid.cells.iter().find(|c| {
        c.bandwidth_kbps == row.bandwidth_kbps
            && c.tcp == row.tcp.name()
            && c.ber == row.ber
            && c.scheme == scheme
    })
}

/// The table: per row, for every scheme, ours and the draft's goodput (bytes/s) and both ratios
/// to IDEAL.
pub fn table(grid: &Grid) -> String {
    let rows = reference::rows().unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Goodput, bytes/s: ours / draft (ours÷IDEAL / draft÷IDEAL). {} seed(s) × {} s per cell.",
        grid.cells.first().map_or(0, |c| c.seeds),
        grid.duration_s
    );
    let mut header = format!("{:>5} {:>5} {:>5} {:>4}", "kbps", "TCP", "BER", "MTU");
    for (name, _) in DRAFT_SCHEMES {
        let _ = write!(header, " | {name:^25}");
    }
    // Schemes the draft has no column for (e.g. iphc-twice, ideal-7): ours (ours÷IDEAL).
    let extra: Vec<&String> = grid
        .cells
        .iter()
        .map(|c| &c.scheme)
        .filter(|s| !DRAFT_SCHEMES.iter().any(|(_, d)| d == s))
        .fold(Vec::new(), |mut v, s| {
            if !v.contains(&s) {
                v.push(s);
            }
            v
        });
    for name in &extra {
        let _ = write!(header, " | {name:^13}");
    }
    let _ = writeln!(out, "{header}");
    for row in &rows {
        let ideal = cell(grid, row, "ideal").map(|c| c.goodput_bytes_per_s);
        let draft_ideal = row.draft("ideal").unwrap_or(f64::NAN);
        let _ = write!(
            out,
            "{:>5} {:>5} {:>5} {:>4}",
            row.bandwidth_kbps,
            row.tcp.name(),
            row.ber_text,
            row.mtu
        );
        for (_, scheme) in DRAFT_SCHEMES {
            let draft = row.draft(scheme).unwrap_or(f64::NAN);
            match cell(grid, row, scheme) {
                Some(c) => {
                    let ours = c.goodput_bytes_per_s;
                    let ratio = ideal.map_or(f64::NAN, |i| ours / i);
                    let _ = write!(
                        out,
                        " | {:>6.0}/{:<6.0}({:.2}/{:.2})",
                        ours,
                        draft,
                        ratio,
                        draft / draft_ideal
                    );
                }
                None => {
                    let _ = write!(out, " | {:>6}/{:<6.0}{:11}", "-", draft, "");
                }
            }
        }
        for scheme in &extra {
            match cell(grid, row, scheme) {
                Some(c) => {
                    let ours = c.goodput_bytes_per_s;
                    let ratio = ideal.map_or(f64::NAN, |i| ours / i);
                    let _ = write!(out, " | {ours:>6.0} ({ratio:.3})");
                }
                None => {
                    let _ = write!(out, " | {:^13}", "-");
                }
            }
        }
        let _ = writeln!(out);
    }
    out
}

/// The grid as CSV (one line per cell).
pub fn csv(grid: &Grid) -> String {
    let mut out = String::from(
        "bandwidth_kbps,tcp,ber,mtu,scheme,goodput_bytes_per_s,seeds,draft_bytes_per_s,deviation\n",
    );
    for c in &grid.cells {
        let _ = writeln!(
            out,
            "{},{},{:e},{},{},{:.1},{},{},{:.4}",
            c.bandwidth_kbps,
            c.tcp,
            c.ber,
            c.mtu,
            c.scheme,
            c.goodput_bytes_per_s,
            c.seeds,
            c.draft_bytes_per_s,
            c.goodput_bytes_per_s / c.draft_bytes_per_s - 1.0
        );
    }
    out
}

/// Checks the draft's qualitative claims on our grid; returns one line per violation.
/// VJ and IPHC below NONE for BER 3e-6..=1e-4; TAROC above NONE from 1e-6 up; TAROC within 5%
/// of IDEAL up to 1e-5 and within 10% at 3e-5 and 1e-4.
pub fn shape_violations(grid: &Grid) -> Vec<String> {
    let rows = reference::rows().unwrap_or_default();
    let mut v = Vec::new();
    for row in &rows {
        let g = |s| cell(grid, row, s).map(|c| c.goodput_bytes_per_s);
        let name = format!(
            "{} kbit/s {} BER {}",
            row.bandwidth_kbps, row.tcp, row.ber_text
        );
        let (Some(none), Some(taroc), Some(ideal)) = (g("none"), g("taroc"), g("ideal")) else {
            continue;
        };
        if (3e-6..=1e-4).contains(&row.ber) {
            for s in ["vj", "iphc"] {
                if let Some(x) = g(s) {
                    if x >= none {
                        v.push(format!("{name}: {s} {x:.0} is not below NONE {none:.0}"));
                    }
                }
            }
        }
        if row.ber >= 1e-6 && taroc <= none {
            v.push(format!(
                "{name}: TAROC {taroc:.0} is not above NONE {none:.0}"
            ));
        }
        let limit = if row.ber <= 1e-5 {
            0.05
        } else if row.ber <= 1e-4 {
            0.10
        } else {
            f64::INFINITY
        };
        if taroc < (1.0 - limit) * ideal {
            v.push(format!(
                "{name}: TAROC {taroc:.0} more than {:.0}% below IDEAL {ideal:.0}",
                limit * 100.0
            ));
        }
    }
    v
}

/// The colors of the draft's schemes in the plots.
const COLORS: [(&str, &str); 5] = [
    ("none", "#555555"),
    ("vj", "#d62728"),
    ("iphc", "#ff7f0e"),
    ("taroc", "#1f77b4"),
    ("ideal", "#2ca02c"),
];

/// The draft-style plots: for each of the draft's four tables (bandwidth and TCP), goodput
/// against BER (log scale) for every scheme, ours (solid, dots) beside the draft's (dashed,
/// squares); panels with a linear goodput axis, a logarithmic one, and goodput relative to
/// IDEAL. Returns (file name, SVG).
pub fn plots(grid: &Grid) -> Vec<(String, String)> {
    use crate::plot::{self, Axis, Marker, Panel, Series};
    let rows = reference::rows().unwrap_or_default();
    let mut tables: Vec<(f64, crate::tcp::sender::TcpVariant)> = Vec::new();
    for r in &rows {
        if !tables.contains(&(r.bandwidth_kbps, r.tcp)) {
            tables.push((r.bandwidth_kbps, r.tcp));
        }
    }
    let mut files = Vec::new();
    for (kbps, tcp) in tables {
        let table: Vec<&Row> = rows
            .iter()
            .filter(|r| r.bandwidth_kbps == kbps && r.tcp == tcp)
            .collect();
        let mut series = Vec::new();
        let mut ratios = Vec::new();
        let mut top: f64 = 1.0;
        let mut bottom = f64::INFINITY;
        // IDEAL first, so that the schemes close to it stay visible on top of it.
        for i in [4, 0, 1, 2, 3] {
            let ((draft_name, scheme), (_, color)) = (DRAFT_SCHEMES[i], COLORS[i]);
            let ours: Vec<(f64, f64)> = table
                .iter()
                .filter_map(|r| cell(grid, r, scheme).map(|c| (r.ber, c.goodput_bytes_per_s)))
                .collect();
            let draft: Vec<(f64, f64)> = table
                .iter()
                .filter_map(|r| r.draft(scheme).map(|g| (r.ber, g)))
                .collect();
            for &(_, g) in ours.iter().chain(&draft) {
                top = top.max(g);
                if g > 0.0 {
                    bottom = bottom.min(g);
                }
            }
            let ideal_ours = |r: &Row| cell(grid, r, "ideal").map(|c| c.goodput_bytes_per_s);
            let ratio_ours: Vec<(f64, f64)> = table
                .iter()
                .filter_map(|r| {
                    let c = cell(grid, r, scheme)?;
                    Some((r.ber, c.goodput_bytes_per_s / ideal_ours(r)?))
                })
                .collect();
            let ratio_draft: Vec<(f64, f64)> = table
                .iter()
                .filter_map(|r| Some((r.ber, r.draft(scheme)? / r.draft("ideal")?)))
                .collect();
            if !ratio_ours.is_empty() {
                ratios.push(Series {
                    marker: Marker::Dot,
                    ..Series::line(&format!("{draft_name} (ours)"), color, ratio_ours)
                });
            }
            ratios.push(Series {
                marker: Marker::Square,
                dashed: true,
                width: 1.2,
                ..Series::line(&format!("{draft_name} (draft)"), color, ratio_draft)
            });
            if !ours.is_empty() {
                series.push(Series {
                    marker: Marker::Dot,
                    ..Series::line(&format!("{draft_name} (ours)"), color, ours)
                });
            }
            series.push(Series {
                marker: Marker::Square,
                dashed: true,
                width: 1.2,
                ..Series::line(&format!("{draft_name} (draft)"), color, draft)
            });
        }
        let (bmin, bmax) = table.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
            (lo.min(r.ber), hi.max(r.ber))
        });
        let mut mtus = String::from("MTU (bytes) by BER:");
        let mut last = None;
        for r in &table {
            if last != Some(r.mtu) {
                let _ = write!(mtus, " {} from {},", r.mtu, r.ber_text);
                last = Some(r.mtu);
            }
        }
        mtus.pop();
        let seeds = grid.cells.first().map_or(0, |c| c.seeds);
        let notes = vec![
            mtus,
            format!(
                "Ours: mean of {seeds} seed(s) x {} s per point; the draft's from its Appendix B table.",
                grid.duration_s
            ),
        ];
        let x = Axis::log("bit error rate", bmin / 1.3, bmax * 1.3);
        let linear = Panel {
            title: "goodput, linear scale".into(),
            x: x.clone(),
            y: Axis::linear("goodput (bytes/s)", 0.0, top * 1.05),
            series: series.clone(),
            notes: notes.clone(),
        };
        let log = Panel {
            title: "goodput, logarithmic scale".into(),
            x: x.clone(),
            y: Axis::log("goodput (bytes/s)", (bottom / 1.5).max(0.1), top * 1.5),
            series,
            notes: notes.clone(),
        };
        let relative = Panel {
            title: "goodput relative to IDEAL (ours to our IDEAL, the draft's to its IDEAL)".into(),
            x,
            y: Axis::linear("goodput / IDEAL", 0.0, 1.1),
            series: ratios,
            notes,
        };
        let name = format!("appendix-b-{kbps}k-{}.svg", tcp.name());
        let title = format!(
            "TAROC draft Appendix B: {kbps} kbit/s wireless link, TCP {}, goodput vs BER",
            tcp.name()
        );
        files.push((name, plot::svg(&title, &[linear, log, relative])));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_plot_per_draft_table_with_every_scheme() {
        let rows = reference::rows().unwrap();
        let mut cells = Vec::new();
        for r in &rows {
            for (_, s) in DRAFT_SCHEMES {
                let g = r.draft(s).unwrap() * 0.9;
                cells.push(Cell {
                    bandwidth_kbps: r.bandwidth_kbps,
                    tcp: r.tcp.name().into(),
                    ber: r.ber,
                    mtu: r.mtu,
                    scheme: s.into(),
                    goodput_bytes_per_s: g,
                    seeds: 1,
                    per_seed: vec![g],
                    draft_bytes_per_s: r.draft(s).unwrap(),
                    events: 0,
                    wall_s: 0.0,
                });
            }
        }
        let grid = Grid {
            cells,
            wall_s: 0.0,
            threads: 1,
            duration_s: 1000.0,
        };
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
        for (_, svg) in &files {
            for s in ["NONE", "VJHC", "IPHC", "TAROC", "IDEAL"] {
                assert!(svg.contains(&format!("{s} (ours)")));
                assert!(svg.contains(&format!("{s} (draft)")));
            }
            assert!(svg.contains("1e-7") && svg.contains("1e-3"));
        }
        // Every cell goes in the CSV.
        assert_eq!(csv(&grid).lines().count(), 1 + 36 * 5);
    }
}
