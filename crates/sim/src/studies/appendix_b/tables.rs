//! Appendix B's tables: ours beside the draft's, the grid as CSV, and the report printed.

use std::fmt::Write as _;

use super::claims::{self, Claim, Finding};
use super::reference::{self, DRAFT_SCHEMES};
use super::runs::{cell, Grid};

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

/// The report: the table, what the runs cost, and the claims.
pub fn report(grid: &Grid, checks: &[(Claim, Finding)]) -> String {
    let events: u64 = grid.cells.iter().map(|c| c.events).sum();
    let cpu: f64 = grid.cells.iter().map(|c| c.wall_s).sum();
    let runs: usize = grid.cells.iter().map(|c| c.seeds as usize).sum();
    format!(
        "{}\n{runs} runs, {events} events in {:.1} s wall on {} threads ({:.2} M events/s per \
         core, {:.3} s per run on average)\n{}",
        table(grid),
        grid.wall_s,
        grid.threads,
        events as f64 / cpu.max(1e-9) / 1e6,
        cpu / runs.max(1) as f64,
        claims::report(checks)
    )
}

#[cfg(test)]
mod tests {
    use super::super::runs::tests::grid_of;
    use super::*;

    #[test]
    fn every_cell_goes_in_the_csv() {
        let grid = grid_of(&["none", "taroc", "taroc-plus"], |_, _| 100.0);
        let csv = csv(&grid);
        assert_eq!(csv.lines().count(), 1 + 36 * 3);
        assert!(csv.contains(",taroc-plus,100.0,3,"), "{csv}");
    }
}
