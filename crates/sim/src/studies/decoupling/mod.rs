//! TCP decoupling (Wang & Kung, "Use of TCP decoupling in improving TCP performance over
//! wireless networks"): the analysis ([`mat`]); the TCP circuit — tunnel queue ([`tunnel`]),
//! control TCPs ([`control`]), GMB sender ([`circuit`]) —; the decoupling socket's data TCP
//! ([`socket`]); both hosts as network agents ([`hosts`]); the testbed they run on
//! ([`testbed`]); the suites run ([`runs`]) and shown ([`tables`], [`plots`]). The paper's
//! claims are checked by the crate's tests rather than by the study.

use std::convert::Infallible;

use crate::studies::{json_lines, Study};

pub mod circuit;
pub mod control;
pub mod hosts;
pub mod mat;
pub mod plots;
pub mod runs;
pub mod socket;
pub mod tables;
pub mod testbed;
pub mod tunnel;

pub use runs::{Effort, Options, Record};

/// The study ([`Study`]).
#[derive(Debug, Clone, Copy)]
pub struct Decoupling;

impl Study for Decoupling {
    type Options = Options;
    type Results = Vec<Record>;
    type Claim = Infallible;
    type Record = Record;

    fn runs(options: &Options) -> usize {
        runs::plan(options.effort).len()
    }

    fn run(options: &Options, progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Record>, String> {
        runs::run(options, progress)
    }

    fn claims(_: &Vec<Record>) -> Vec<Infallible> {
        Vec::new()
    }

    fn records(records: &Vec<Record>) -> Vec<Record> {
        records.clone()
    }

    fn report(records: &Vec<Record>, _: &[Infallible]) -> String {
        tables::table(records)
    }

    fn files(
        _: &Vec<Record>,
        _: &[Infallible],
        records: &[Record],
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let lines = json_lines(records).map_err(|e| format!("records.json: {e}"))?;
        Ok(vec![("records.json".into(), lines.into_bytes())])
    }

    fn plots(records: &Vec<Record>) -> Vec<(String, String)> {
        plots::plots(records)
    }
}
