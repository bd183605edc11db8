//! The whole study: every response over the traffic mix (in parallel), our figures beside the
//! draft's Tables 3–6 and the draft's claims checked; its `render` module writes the tables,
//! CSV/JSON Lines and the download-time CDF plots.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;
use taroc_core::variant::Variant;

use super::engine::{self, RunOutput};
use super::radio::CodecStats;
use super::stats::Summary;
use super::{Download, StudyConfig};
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

/// Runs every (scheme, response, seed) on `threads` workers; `progress(done, total)` after
/// each run.
pub fn run(options: &StudyOptions, progress: &(dyn Fn(usize, usize) + Sync)) -> StudyResult {
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
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, ResponseKind, RunOutput)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(k, response, seed)) = jobs.get(i) else {
                    break;
                };
                let config = StudyConfig {
                    response,
                    seed,
                    scheme: schemes[k].clone(),
                    ..options.base.clone()
                };
                let output = engine::run(&config);
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((k, response, output));
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
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

/// One of the draft's claims and whether our run bears it out (`None`: its responses did not
/// run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// The claim.
    pub claim: String,
    /// Whether it holds.
    pub holds: Option<bool>,
    /// Our numbers behind the verdict.
    pub detail: String,
}

/// Checks the draft's claims on `result`.
pub fn check(result: &StudyResult) -> Vec<Claim> {
    use ResponseKind::{Dclor, Eifel, Frto, Standard};
    let mut claims = Vec::new();
    for kb in [10, 100] {
        let (d, s) = (result.row(kb, Dclor), result.row(kb, Standard));
        let (holds, detail) = match (d, s) {
            (Some(d), Some(s)) => {
                let (lo, hi) = d.summary.difference_ci95(&s.summary);
                (
                    Some(hi < 0.0),
                    format!(
                        "DCLOR {:.3} s, standard {:.3} s, difference 95% CI [{lo:.3}, {hi:.3}] s",
                        d.summary.mean_s, s.summary.mean_s
                    ),
                )
            }
            _ => (None, "not run".into()),
        };
        claims.push(Claim {
            claim: format!("{kb} KB: DCLOR's mean download time is below standard TCP's"),
            holds,
            detail,
        });
    }
    for kb in [5, 10, 100] {
        let order = [Dclor, Eifel, Frto, Standard];
        let se: Option<Vec<f64>> = order
            .iter()
            .map(|&r| result.row(kb, r).map(|x| x.summary.spectral_efficiency))
            .collect();
        claims.push(Claim {
            claim: format!("{kb} KB: spectral efficiency ordered DCLOR < Eifel < F-RTO < standard"),
            holds: se.as_ref().map(|v| v.windows(2).all(|w| w[0] < w[1])),
            detail: se.map_or("not run".into(), |v| {
                format!(
                    "dclor {:.4}, eifel {:.4}, frto {:.4}, standard {:.4}",
                    v[0], v[1], v[2], v[3]
                )
            }),
        });
    }
    for kb in [5, 10] {
        let v: Option<Vec<(ResponseKind, f64)>> = [Dclor, Eifel, Frto, Standard]
            .iter()
            .map(|&r| result.row(kb, r).map(|x| (r, x.summary.variance_s2)))
            .collect();
        claims.push(Claim {
            claim: format!("{kb} KB: Eifel's download-time variance is the largest"),
            holds: v.as_ref().map(|v| {
                let eifel = v[1].1;
                v.iter().all(|&(r, x)| r == Eifel || x < eifel)
            }),
            detail: v.map_or("not run".into(), |v| {
                v.iter()
                    .map(|(r, x)| format!("{r} {x:.3}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
        });
    }
    for kb in [5, 10, 100] {
        let row = result.row(kb, Standard);
        let (holds, detail) = match (row, draft_figures(kb, Standard)) {
            (Some(r), Some((mean, variance, _))) => {
                let dm = r.summary.mean_s / mean - 1.0;
                let dv = r.summary.variance_s2 / variance - 1.0;
                (
                    Some(dm.abs() <= 0.15 && dv.abs() <= 0.35),
                    format!(
                        "mean {:.3} s vs {mean} ({:+.1}%), variance {:.3} s² vs {variance} ({:+.1}%)",
                        r.summary.mean_s,
                        100.0 * dm,
                        r.summary.variance_s2,
                        100.0 * dv
                    ),
                )
            }
            _ => (None, "not run".into()),
        };
        claims.push(Claim {
            claim: format!(
                "{kb} KB: standard TCP's mean within 15% of the draft's, variance within 35%"
            ),
            holds,
            detail,
        });
    }
    claims
}

mod render;

pub use render::{cdf_svg, codec_table, csv, detection_table, records, table, Record};
