//! The studies: published evaluations the simulator reproduces, built on the kernel (events,
//! links, queues, TCP, the network and its topologies), which knows none of them.
//!
//! Every study has the same shape. Its module declares a marker type implementing [`Study`]:
//! its options, its runs ([`run_all`] spreads them over threads), the claims of its paper
//! checked on the results ([`Verdict`]), its records (JSON Lines), its report (tables beside the
//! paper's figures), its data files and its plots. The module's files follow the same plan:
//! `runs.rs` (what is run, and its results), `claims.rs`, `tables.rs` (report, records, CSV),
//! `plots.rs`, beside the study's own models.
//!
//! - [`appendix_b`]: the TAROC draft's Appendix B grid.
//! - [`dclor`]: the DCLOR draft's spurious-timeout study over the STIS stall model.
//! - [`lowloss`]: Degermark et al.'s low-loss header compression.
//! - [`decoupling`]: Wang & Kung's TCP decoupling.
//! - [`tracking`]: the accuracy of TAROC's congestion-window tracking: one run watched through
//!   an observer, no grid and no claims (`taroc sim --cwnd-plot` and Appendix B's cwnd-tracking
//!   plot), laid out the same way (`runs.rs`, `plots.rs`, beside `trace.rs` and
//!   `accuracy.rs`).

use serde::Serialize;

pub mod appendix_b;
pub mod dclor;
pub mod decoupling;
pub mod lowloss;
mod runner;
pub mod tracking;

pub use runner::{run_all, threads};

/// What our results say of one of a paper's claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It holds on our results.
    Holds,
    /// It does not.
    Fails,
    /// It could not be checked: what it needs did not run.
    NotChecked,
}

impl Verdict {
    /// The word in reports.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Fails => "FAILS",
            Verdict::NotChecked => "not checked",
        }
    }
}

/// A paper's claim, checked on a study's results.
pub trait Checked {
    /// Its verdict.
    fn verdict(&self) -> Verdict;
}

/// A study that has no claims to check (its claims are the tests').
impl Checked for std::convert::Infallible {
    fn verdict(&self) -> Verdict {
        match *self {}
    }
}

/// A published evaluation reproduced on the simulator: its runs, the claims checked on their
/// results, and its tables, records, files and plots.
pub trait Study {
    /// What a reproduction is asked to run (checked before it runs).
    type Options: Sync;
    /// What its runs produced.
    type Results;
    /// One of the paper's claims, checked.
    type Claim: Checked;
    /// One JSON Lines record.
    type Record: Serialize;

    /// The number of runs `options` asks for (a progress bar's total).
    fn runs(options: &Self::Options) -> usize;
    /// Runs the study; `progress(done)` is called after each run (from worker threads).
    fn run(
        options: &Self::Options,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Self::Results, String>;
    /// The paper's claims checked on `results`.
    fn claims(results: &Self::Results) -> Vec<Self::Claim>;
    /// The records of `results`, one JSON object each.
    fn records(results: &Self::Results) -> Vec<Self::Record>;
    /// The report: our figures beside the paper's, and the claims.
    fn report(results: &Self::Results, claims: &[Self::Claim]) -> String;
    /// The data files (CSV, JSON): (file name, bytes), in the order written.
    fn files(
        results: &Self::Results,
        claims: &[Self::Claim],
        records: &[Self::Record],
    ) -> Result<Vec<(String, Vec<u8>)>, String>;
    /// The plots: (file name, SVG).
    fn plots(results: &Self::Results) -> Vec<(String, String)>;
}

/// `records` as JSON Lines: one object per line.
pub fn json_lines<T: Serialize>(records: &[T]) -> Result<String, serde_json::Error> {
    let mut text = String::new();
    for r in records {
        text += &serde_json::to_string(r)?;
        text.push('\n');
    }
    Ok(text)
}

/// Whether any of `claims` fails.
pub fn any_fails<C: Checked>(claims: &[C]) -> bool {
    claims.iter().any(|c| c.verdict() == Verdict::Fails)
}
