//! The Appendix B grid: every (bandwidth, TCP, BER, MTU) row of the draft, every scheme, several
//! seeds, run in parallel on all cores; tables beside the draft's numbers, CSV and JSON.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

mod claims;
mod plots;
pub use claims::{any_fails, check, report, Claim, Verdict, CLAIMS};
pub use plots::{plots, ERROR_BARS};

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

    /// Checks the options: known schemes, each once, at least one seed, a positive duration.
    pub fn check(&self) -> Result<(), String> {
        crate::scenario::check_schemes(&self.schemes)?;
        if self.seeds == 0 {
            return Err("at least one seed is needed".into());
        }
        if !(self.duration_s > 0.0 && self.duration_s <= 1e7) {
            return Err("the duration must be positive (and at most 1e7 s)".into());
        }
        Ok(())
    }

    /// The number of simulation runs: rows x schemes x seeds.
    pub fn runs(&self) -> usize {
        reference::rows().map_or(0, |r| r.len()) * self.schemes.len() * self.seeds as usize
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
    options.check()?;
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

/// The cell of `scheme` on `row`, if it ran.
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A grid of every row for `schemes`, goodput `goodput(row, scheme)` as the mean of three
    /// seeds spread 5% either side.
    pub(crate) fn grid_of(schemes: &[&str], goodput: impl Fn(&Row, &str) -> f64) -> Grid {
        let rows = reference::rows().unwrap();
        let mut cells = Vec::new();
        for r in &rows {
            for s in schemes {
                let g = goodput(r, s);
                cells.push(Cell {
                    bandwidth_kbps: r.bandwidth_kbps,
                    tcp: r.tcp.name().into(),
                    ber: r.ber,
                    mtu: r.mtu,
                    scheme: s.to_string(),
                    goodput_bytes_per_s: g,
                    seeds: 3,
                    per_seed: vec![g * 0.95, g, g * 1.05],
                    draft_bytes_per_s: r.draft(s).unwrap_or(f64::NAN),
                    events: 0,
                    wall_s: 0.0,
                });
            }
        }
        Grid {
            cells,
            wall_s: 0.0,
            threads: 1,
            duration_s: 1000.0,
        }
    }

    #[test]
    fn every_cell_goes_in_the_csv() {
        let grid = grid_of(&["none", "taroc", "taroc-plus"], |_, _| 100.0);
        let csv = csv(&grid);
        assert_eq!(csv.lines().count(), 1 + 36 * 3);
        assert!(csv.contains(",taroc-plus,100.0,3,"), "{csv}");
    }
}
