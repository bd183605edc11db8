//! The whole study: every scheme and response over the traffic mix, each seed a run (in
//! parallel), summarised per file size beside the draft's Tables 3–6.

use serde::Serialize;
use taroc_core::variant::Variant;

use super::engine;
use super::radio::CodecStats;
use super::stats::Summary;
use super::{Download, StudyConfig};
use crate::studies::run_all;
use crate::tcp::timeout::ResponseKind;

/// The draft's figures (Tables 3–6) for a file size and response: (mean s, variance s²,
/// spectral efficiency). Eifel-4015 and the background sizes have none.
pub fn draft_figures(file_kb: u64, response: ResponseKind) -> Option<(f64, f64, f64)> {
    let column = match response {
        ResponseKind::Dclor => 0,
        ResponseKind::Eifel => 1,
        ResponseKind::Standard => 2,
        ResponseKind::Frto => 3,
        ResponseKind::Eifel4015 => return None,
    };
    let (mean, variance, se): ([f64; 4], [f64; 4], [f64; 4]) = match file_kb {
        5 => (
            [2.3869, 2.4162, 2.3962, 2.4049],
            [3.2473, 10.2579, 3.2164, 4.0466],
            [0.004042, 0.004454, 0.092714, 0.071336],
        ),
        10 => (
            [3.4547, 4.0560, 3.7314, 3.7317],
            [4.7452, 19.7828, 7.6378, 8.4576],
            [0.005249, 0.012293, 0.078977, 0.052581],
        ),
        100 => (
            [24.6297, 26.1017, 26.7425, 25.5325],
            [66.0804, 98.4933, 98.9363, 78.1667],
            [0.017124, 0.036748, 0.624361, 0.079285],
        ),
        _ => return None,
    };
    Some((mean[column], variance[column], se[column]))
}

/// What the study runs.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyOptions {
    /// The responses, in report order.
    pub responses: Vec<ResponseKind>,
    /// The header-compression schemes on the radio link, in report order (`None`: no codec,
    /// the plain study). The draft's claims are checked on the first.
    pub schemes: Vec<Option<Variant>>,
    /// Seeds per response (each a whole run of the mix).
    pub seeds: u32,
    /// Worker threads (0: all cores).
    pub threads: usize,
    /// A template for every run's configuration, its mix already scaled (response and seed
    /// are set per run).
    pub base: StudyConfig,
}

/// One line of results: a file size and a response.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// File size, KB.
    pub file_kb: u64,
    /// The header-compression scheme, if any.
    pub scheme: Option<&'static str>,
    /// The response.
    pub response: ResponseKind,
    /// The summary over every seed's downloads.
    pub summary: Summary,
    /// Seeds.
    pub seeds: u32,
}

/// The study's results.
#[derive(Debug, Clone)]
pub struct StudyResult {
    /// Rows, by file size, then scheme, then response.
    pub rows: Vec<Row>,
    /// The header codecs' counters per scheme and response, over every seed (only with
    /// header compression).
    pub codec_rows: Vec<CodecRow>,
    /// Simulated seconds of the longest run.
    pub sim_seconds: f64,
    /// Packets the box dropped for a full buffer, over every run.
    pub stis_drops: u64,
    /// Events processed, over every run.
    pub events: u64,
}

/// The header codecs' counters of one scheme and response, over every seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodecRow {
    /// The scheme.
    pub scheme: &'static str,
    /// The response.
    pub response: ResponseKind,
    /// The counters, summed.
    pub stats: CodecStats,
}

/// The name of a scheme choice (`-` for none).
fn scheme_name(scheme: &Option<Variant>) -> Option<&'static str> {
    scheme.as_ref().map(|v| v.name)
}

/// Runs every (scheme, response, seed) on `threads` workers; `progress(done)` after each run.
pub fn run(options: &StudyOptions, progress: &(dyn Fn(usize) + Sync)) -> StudyResult {
    let schemes: &[Option<Variant>] = if options.schemes.is_empty() {
        &[None]
    } else {
        &options.schemes
    };
    let jobs: Vec<(usize, ResponseKind, u64)> = (0..schemes.len())
        .flat_map(|k| {
            options
                .responses
                .iter()
                .flat_map(move |&r| (1..=u64::from(options.seeds.max(1))).map(move |s| (k, r, s)))
        })
        .collect();
    let outputs = run_all(&jobs, options.threads, progress, |&(k, response, seed)| {
        let config = StudyConfig {
            response,
            seed,
            scheme: schemes[k].clone(),
            ..options.base.clone()
        };
        engine::run(&config)
    });
    let results: Vec<_> = (jobs.iter().zip(outputs))
        .map(|(&(k, response, _), output)| (k, response, output))
        .collect();
    let mut rows = Vec::new();
    for (class, c) in options.base.mix.iter().enumerate() {
        if !c.measured {
            continue;
        }
        for (k, scheme) in schemes.iter().enumerate() {
            for &response in &options.responses {
                let downloads: Vec<&Download> = results
                    .iter()
                    .filter(|(j, r, _)| *j == k && *r == response)
                    .flat_map(|(_, _, o)| o.downloads.iter().filter(|d| d.class == class))
                    .collect();
                rows.push(Row {
                    file_kb: c.kb,
                    scheme: scheme_name(scheme),
                    response,
                    summary: Summary::of(downloads),
                    seeds: options.seeds.max(1),
                });
            }
        }
    }
    let mut codec_rows = Vec::new();
    for (k, scheme) in schemes.iter().enumerate() {
        let Some(name) = scheme_name(scheme) else {
            continue;
        };
        for &response in &options.responses {
            let mut stats = CodecStats::default();
            for (_, _, o) in results.iter().filter(|(j, r, _)| *j == k && *r == response) {
                stats.add(&o.codec);
            }
            codec_rows.push(CodecRow {
                scheme: name,
                response,
                stats,
            });
        }
    }
    StudyResult {
        rows,
        codec_rows,
        sim_seconds: results
            .iter()
            .map(|(_, _, o)| o.sim_seconds)
            .fold(0.0, f64::max),
        stis_drops: results.iter().map(|(_, _, o)| o.stis.dropped).sum(),
        events: results.iter().map(|(_, _, o)| o.events).sum(),
    }
}

impl StudyResult {
    /// The row of a file size and response (of the first scheme).
    pub fn row(&self, file_kb: u64, response: ResponseKind) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.file_kb == file_kb && r.response == response)
    }

    /// The row of a file size, scheme and response.
    pub fn row_of(
        &self,
        file_kb: u64,
        scheme: &'static str,
        response: ResponseKind,
    ) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.file_kb == file_kb && r.scheme == Some(scheme) && r.response == response)
    }

    /// The file sizes measured.
    pub fn sizes(&self) -> Vec<u64> {
        let mut sizes: Vec<u64> = self.rows.iter().map(|r| r.file_kb).collect();
        sizes.dedup();
        sizes
    }
}
