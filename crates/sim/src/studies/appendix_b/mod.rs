//! The TAROC draft's Appendix B: the 36 rows its tables give (bandwidth, TCP, BER, MTU), every
//! scheme, several seeds each, beside the draft's numbers ([`mod@reference`]); the draft's
//! qualitative claims checked; goodput-against-BER plots per table, and the slides'
//! congestion-window tracking plot ([`crate::studies::tracking`]).

use serde::Serialize;

use crate::scenario::Scenario;
use crate::studies::tracking::{self, Tracked};
use crate::studies::Study;

pub mod claims;
pub mod plots;
pub mod reference;
pub mod runs;
pub mod tables;

pub use claims::{check, Claim, Finding, CLAIMS};
pub use runs::{scenario, Cell, Grid, GridOptions};

/// The slides' tracking case is plotted over its first 300 simulated seconds.
const TRACKING_PLOT_S: f64 = 300.0;

/// The study ([`Study`]).
#[derive(Debug, Clone, Copy)]
pub struct AppendixB;

/// What Appendix B's runs produced: the grid, and the slides' tracking case.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// The grid.
    pub grid: Grid,
    /// The tracking case as it ran (the slides' case, of the grid's duration, seed 1).
    pub tracking: Scenario,
    /// Its run.
    pub tracked: Tracked,
}

impl Study for AppendixB {
    type Options = GridOptions;
    type Results = Results;
    type Claim = (Claim, Finding);
    type Record = Cell;

    /// The grid's runs, then the tracking case's.
    fn runs(options: &GridOptions) -> usize {
        options.runs() + 1
    }

    fn run(options: &GridOptions, progress: &(dyn Fn(usize) + Sync)) -> Result<Results, String> {
        let grid = runs::run(options, progress)?;
        let tracking = Scenario {
            duration_s: options.duration_s,
            ..tracking::slides_case()
        };
        let tracked = tracking::run(&tracking, TRACKING_PLOT_S, &mut |_| {})
            .map_err(|e| format!("cwnd-tracking run: {e}"))?;
        Ok(Results {
            grid,
            tracking,
            tracked,
        })
    }

    fn claims(results: &Results) -> Vec<(Claim, Finding)> {
        check(&results.grid)
    }

    fn records(results: &Results) -> Vec<Cell> {
        results.grid.cells.clone()
    }

    fn report(results: &Results, claims: &[(Claim, Finding)]) -> String {
        tables::report(&results.grid, claims)
    }

    fn files(
        results: &Results,
        _: &[(Claim, Finding)],
        _: &[Cell],
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let json = pretty(&results.grid)?;
        Ok(vec![
            (
                "appendix-b.csv".into(),
                tables::csv(&results.grid).into_bytes(),
            ),
            ("appendix-b.json".into(), json.into_bytes()),
        ])
    }

    fn plots(results: &Results) -> Vec<(String, String)> {
        let mut plots = plots::plots(&results.grid);
        let svg = tracking::svg(&results.tracking, &results.tracked, Some(TRACKING_PLOT_S));
        plots.push(("cwnd-tracking.svg".into(), svg));
        plots
    }
}

/// `value` as indented JSON.
fn pretty<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| format!("JSON: {e}"))
}
