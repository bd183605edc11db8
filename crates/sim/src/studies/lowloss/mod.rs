//! The evaluation of Degermark, Engan, Nordgren and Pink, "Low-loss TCP/IP header compression
//! for wireless networks": the analytic Figures 4, 5, 6 and 13 ([`analytic`]), Figure 9's Modem
//! and WLAN topologies as scenarios ([`topology`]), the simulated Figures 10–12, 14, 18 and 19
//! with the real codecs ([`runs`]), the paper's claims checked ([`claims`]), a report and the
//! records ([`tables`]) and plots ([`plots`]).

use crate::studies::Study;

pub mod analytic;
pub mod claims;
pub mod plots;
pub mod runs;
pub mod tables;
pub mod topology;

pub use claims::Claim;
pub use runs::{Options, Results};
pub use tables::Record;

/// The study ([`Study`]).
#[derive(Debug, Clone, Copy)]
pub struct LowLoss;

impl Study for LowLoss {
    type Options = Options;
    type Results = Results;
    type Claim = Claim;
    type Record = Record;

    fn runs(options: &Options) -> usize {
        options.runs()
    }

    fn run(options: &Options, progress: &(dyn Fn(usize) + Sync)) -> Result<Results, String> {
        Ok(runs::run(options, progress))
    }

    fn claims(results: &Results) -> Vec<Claim> {
        claims::check_all(results)
    }

    fn records(results: &Results) -> Vec<Record> {
        tables::records(results)
    }

    fn report(results: &Results, claims: &[Claim]) -> String {
        tables::report(results, claims)
    }

    fn files(
        _: &Results,
        _: &[Claim],
        records: &[Record],
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let json = serde_json::to_string_pretty(records).map_err(|e| format!("JSON: {e}"))?;
        Ok(vec![("low-loss.json".into(), json.into_bytes())])
    }

    fn plots(results: &Results) -> Vec<(String, String)> {
        plots::plots(results)
    }
}
