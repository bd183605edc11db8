//! The Appendix B grid: every (bandwidth, TCP, BER, MTU) row of the draft, every scheme, several
//! seeds, run in parallel on all cores.

use std::time::Instant;

use serde::Serialize;

use super::reference::{self, Row, DRAFT_SCHEMES};
use crate::link::ErrorModel;
use crate::scenario::Scenario;
use crate::studies::run_all;

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

/// Runs the grid; `progress(done)` is called after each run (from worker threads).
pub fn run(options: &GridOptions, progress: &(dyn Fn(usize) + Sync)) -> Result<Grid, String> {
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
    let threads = crate::studies::threads(options.threads);
    let results = run_all(&jobs, threads, progress, |job| {
        job.3
            .run()
            .map(|o| (o.goodput_bytes_per_s, o.events, o.wall_s))
    });
    let results = results.into_iter().collect::<Result<Vec<_>, String>>()?;
    let mut cells: Vec<Cell> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for (s, scheme) in options.schemes.iter().enumerate() {
            let mut per_seed = vec![0.0; options.seeds as usize];
            let (mut events, mut wall) = (0, 0.0);
            for (job, &(g, e, w)) in jobs.iter().zip(&results) {
                if job.0 == r && job.1 == s {
                    per_seed[(job.2 - 1) as usize] = g;
                    events += e;
                    wall += w;
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
pub(super) fn cell<'a>(grid: &'a Grid, row: &Row, scheme: &str) -> Option<&'a Cell> {
    grid.cells.iter().find(|c| {
        c.bandwidth_kbps == row.bandwidth_kbps
            && c.tcp == row.tcp.name()
            && c.ber == row.ber
            && c.scheme == scheme
    })
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
}
