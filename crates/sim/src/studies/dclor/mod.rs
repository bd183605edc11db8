//! The DCLOR draft's evaluation (Appendix 1–2): the Table 2 traffic mix of repeated downloads
//! through the STIS box ([`stis`]), for every timeout response, with the draft's metrics
//! (download time mean, variance and CDF per file size; spectral efficiency; timeouts, spurious
//! by the simulator's ground truth and as detected). [`mix`] is what runs, [`engine`] runs one
//! configuration over the box's [`radio`] link, [`stats`] summarises the [`download`]s,
//! [`runs`] runs every response beside the draft's figures, [`claims`] checks the draft's
//! claims, [`tables`] and [`plots`] show the results.

use crate::studies::Study;

pub mod claims;
pub mod download;
pub mod engine;
pub mod mix;
pub mod plots;
pub mod radio;
pub mod runs;
pub mod stats;
pub mod stis;
pub mod tables;

pub use claims::Claim;
pub use download::{Download, Scoring, TimeoutRecord};
pub use mix::{scaled_mix, FileClass, StudyConfig, TABLE2};
pub use runs::{StudyOptions, StudyResult};
pub use tables::Record;

/// The study ([`Study`]).
#[derive(Debug, Clone, Copy)]
pub struct Dclor;

impl Study for Dclor {
    type Options = StudyOptions;
    type Results = StudyResult;
    type Claim = Claim;
    type Record = Record;

    fn runs(options: &StudyOptions) -> usize {
        options.schemes.len().max(1) * options.responses.len() * options.seeds.max(1) as usize
    }

    fn run(
        options: &StudyOptions,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<StudyResult, String> {
        Ok(runs::run(options, progress))
    }

    fn claims(result: &StudyResult) -> Vec<Claim> {
        claims::check(result)
    }

    fn records(result: &StudyResult) -> Vec<Record> {
        tables::records(result)
    }

    fn report(result: &StudyResult, claims: &[Claim]) -> String {
        tables::report(result, claims)
    }

    fn files(
        result: &StudyResult,
        claims: &[Claim],
        records: &[Record],
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let json = serde_json::to_string_pretty(&serde_json::json!({
            "records": records,
            "claims": claims,
        }))
        .map_err(|e| format!("JSON: {e}"))?;
        Ok(vec![
            ("dclor.json".into(), json.into_bytes()),
            ("dclor.csv".into(), tables::csv(result).into_bytes()),
        ])
    }

    fn plots(result: &StudyResult) -> Vec<(String, String)> {
        vec![("dclor-cdf.svg".into(), plots::cdf_svg(result))]
    }
}
