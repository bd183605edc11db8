//! The whole study: every response over the traffic mix (in parallel), our figures beside the
//! draft's Tables 3–6, the draft's claims checked, CSV/JSON Lines, and the download-time CDF
//! plots (one panel per file size, one line per response).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;
use taroc_core::variant::Variant;

use super::engine::{self, RunOutput};
use super::radio::CodecStats;
use super::stats::Summary;
use super::{Download, StudyConfig};
use crate::plot::{self, Axis, Panel, Series};
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

fn fmt_draft(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// The table: ours beside the draft's, per file size and response.
pub fn table(result: &StudyResult) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:>6} {:<10} {:<11} {:>7} {:>9} {:>8} {:>10} {:>8} {:>9} {:>8} {:>8} {:>9} {:>9}",
        "file",
        "scheme",
        "response",
        "n",
        "mean s",
        "draft",
        "var s²",
        "draft",
        "SE",
        "draft",
        "RTOs",
        "spurious",
        "detected"
    );
    for r in &result.rows {
        let d = draft_figures(r.file_kb, r.response);
        let s = &r.summary;
        let _ = writeln!(
            t,
            "{:>4}KB {:<10} {:<11} {:>7} {:>9.4} {:>8} {:>10.4} {:>8} {:>9.5} {:>8} {:>8} {:>9} {:>9}",
            r.file_kb,
            r.scheme.unwrap_or("-"),
            r.response.name(),
            s.downloads,
            s.mean_s,
            fmt_draft(d.map(|x| x.0), 4),
            s.variance_s2,
            fmt_draft(d.map(|x| x.1), 4),
            s.spectral_efficiency,
            fmt_draft(d.map(|x| x.2), 5),
            s.timeouts,
            s.spurious,
            s.detected
        );
    }
    t
}

/// The detection table: per file size, scheme and response, every timeout's label matched
/// with the response's decision, and why undetected spurious timeouts went undetected.
pub fn detection_table(result: &StudyResult) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:>6} {:<10} {:<11} {:>8} {:>9} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8}",
        "file",
        "scheme",
        "response",
        "RTOs",
        "spurious",
        "true det",
        "false det",
        "unresolved",
        "all ACKed",
        "other",
        "repeats"
    );
    for r in &result.rows {
        let (s, c) = (&r.summary, &r.summary.scoring);
        let _ = writeln!(
            t,
            "{:>4}KB {:<10} {:<11} {:>8} {:>9} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8}",
            r.file_kb,
            r.scheme.unwrap_or("-"),
            r.response.name(),
            s.timeouts,
            s.spurious,
            c.true_detections,
            c.false_detections,
            c.missed_unresolved,
            c.missed_all_acked,
            c.missed_other,
            c.spurious_repeats
        );
    }
    t
}

/// The header-compression table: per scheme and response, the codecs' counters and the mean
/// download time per file size (empty without header compression).
pub fn codec_table(result: &StudyResult) -> String {
    let mut t = String::new();
    if result.codec_rows.is_empty() {
        return t;
    }
    let sizes = result.sizes();
    let _ = write!(
        t,
        "{:<10} {:<11} {:>9} {:>7} {:>7} {:>8} {:>6} {:>9} {:>7} {:>8} {:>8}",
        "scheme",
        "response",
        "frames",
        "full %",
        "wire %",
        "damage",
        "data",
        "incorrect",
        "caught",
        "refused",
        "feedback"
    );
    for kb in &sizes {
        let _ = write!(t, " {:>9}", format!("{kb}KB s"));
    }
    t.push('\n');
    for c in &result.codec_rows {
        let st = &c.stats;
        let _ = write!(
            t,
            "{:<10} {:<11} {:>9} {:>7.1} {:>7.1} {:>8} {:>6} {:>9} {:>7} {:>8} {:>8}",
            c.scheme,
            c.response.name(),
            st.frames,
            100.0 * st.full_headers as f64 / st.frames.max(1) as f64,
            100.0 * st.wire_bytes as f64 / st.packet_bytes.max(1) as f64,
            st.context_damage,
            st.context_damage_data,
            st.incorrect,
            st.caught_by_tcp,
            st.other_refusals,
            st.feedback_frames
        );
        for &kb in &sizes {
            let mean = result
                .row_of(kb, c.scheme, c.response)
                .map_or(f64::NAN, |r| r.summary.mean_s);
            let _ = write!(t, " {mean:>9.4}");
        }
        t.push('\n');
    }
    t
}

/// One JSON record per row.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    /// Always "dclor".
    pub study: &'static str,
    /// File size, KB.
    pub file_kb: u64,
    /// The header-compression scheme, if any.
    pub scheme: Option<&'static str>,
    /// The response's name.
    pub response: &'static str,
    /// Downloads.
    pub downloads: usize,
    /// Mean download time, s.
    pub download_time_mean_s: f64,
    /// Its sample variance, s².
    pub download_time_variance_s2: f64,
    /// Spectral efficiency.
    pub spectral_efficiency: f64,
    /// Timeouts.
    pub timeouts: u64,
    /// Spurious timeouts (ground truth).
    pub spurious_timeouts: u64,
    /// Timeouts declared spurious by the response.
    pub detected_spurious: u64,
    /// The response's decisions matched to the timeouts' labels.
    #[serde(flatten)]
    pub scoring: super::Scoring,
    /// The header codecs' counters of this scheme and response over the whole runs (every
    /// file size), if the link compressed.
    pub codec: Option<CodecStats>,
    /// Seeds.
    pub seeds: u32,
    /// The draft's mean, if it has one.
    pub draft_mean_s: Option<f64>,
    /// The draft's variance.
    pub draft_variance_s2: Option<f64>,
    /// The draft's spectral efficiency.
    pub draft_spectral_efficiency: Option<f64>,
}

/// The JSON records.
pub fn records(result: &StudyResult) -> Vec<Record> {
    result
        .rows
        .iter()
        .map(|r| {
            let d = draft_figures(r.file_kb, r.response);
            let s = &r.summary;
            Record {
                study: "dclor",
                file_kb: r.file_kb,
                scheme: r.scheme,
                response: r.response.name(),
                downloads: s.downloads,
                download_time_mean_s: s.mean_s,
                download_time_variance_s2: s.variance_s2,
                spectral_efficiency: s.spectral_efficiency,
                timeouts: s.timeouts,
                spurious_timeouts: s.spurious,
                detected_spurious: s.detected,
                scoring: s.scoring,
                codec: result
                    .codec_rows
                    .iter()
                    .find(|c| Some(c.scheme) == r.scheme && c.response == r.response)
                    .map(|c| c.stats),
                seeds: r.seeds,
                draft_mean_s: d.map(|x| x.0),
                draft_variance_s2: d.map(|x| x.1),
                draft_spectral_efficiency: d.map(|x| x.2),
            }
        })
        .collect()
}

/// The CSV of the records.
pub fn csv(result: &StudyResult) -> String {
    let mut t = String::from(
        "file_kb,scheme,response,downloads,download_time_mean_s,download_time_variance_s2,\
         spectral_efficiency,timeouts,spurious_timeouts,detected_spurious,true_detections,\
         false_detections,missed_unresolved,missed_all_acked,missed_other,spurious_repeats,\
         context_damage,incorrect_deliveries,caught_by_tcp,seeds,draft_mean_s,draft_variance_s2,\
         draft_spectral_efficiency\n",
    );
    let opt = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
    for r in records(result) {
        let c = &r.scoring;
        let codec = |f: fn(&CodecStats) -> u64| {
            r.codec.as_ref().map_or(String::new(), |s| f(s).to_string())
        };
        let _ = writeln!(
            t,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.file_kb,
            r.scheme.unwrap_or(""),
            r.response,
            r.downloads,
            r.download_time_mean_s,
            r.download_time_variance_s2,
            r.spectral_efficiency,
            r.timeouts,
            r.spurious_timeouts,
            r.detected_spurious,
            c.true_detections,
            c.false_detections,
            c.missed_unresolved,
            c.missed_all_acked,
            c.missed_other,
            c.spurious_repeats,
            codec(|s| s.context_damage),
            codec(|s| s.incorrect),
            codec(|s| s.caught_by_tcp),
            r.seeds,
            opt(r.draft_mean_s),
            opt(r.draft_variance_s2),
            opt(r.draft_spectral_efficiency)
        );
    }
    t
}

const COLORS: [&str; 5] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];

/// The download-time CDFs: one panel per file size, one line per response.
pub fn cdf_svg(result: &StudyResult) -> String {
    let panels: Vec<Panel> = result
        .sizes()
        .into_iter()
        .map(|kb| {
            let rows: Vec<&Row> = result.rows.iter().filter(|r| r.file_kb == kb).collect();
            // Up to the 99th percentile of the slowest response, so the body of the CDF shows.
            let max = rows
                .iter()
                .filter_map(|r| {
                    let s = &r.summary.sorted_s;
                    s.get((s.len() * 99 / 100).min(s.len().saturating_sub(1)))
                        .copied()
                })
                .fold(1.0, f64::max);
            let series = rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let s = &r.summary.sorted_s;
                    let n = s.len().max(1) as f64;
                    // At most about 400 points per line.
                    let step = (s.len() / 400).max(1);
                    let mut points: Vec<(f64, f64)> = s
                        .iter()
                        .enumerate()
                        .step_by(step)
                        .map(|(k, &t)| (t, (k + 1) as f64 / n))
                        .collect();
                    if let Some(&last) = s.last() {
                        points.push((last, 1.0));
                    }
                    let name = match r.scheme {
                        Some(scheme) => format!("{scheme} {}", r.response),
                        None => r.response.name().to_string(),
                    };
                    let mut line = Series::line(&name, COLORS[i % COLORS.len()], points);
                    line.step = true;
                    line
                })
                .collect();
            Panel {
                title: format!("{kb} KB downloads"),
                x: Axis::linear("download time (s)", 0.0, max),
                y: Axis::linear("fraction of downloads", 0.0, 1.0),
                series,
                notes: vec![format!(
                    "Empirical CDF over {} downloads per response; x axis to the 99th percentile.",
                    rows.first().map_or(0, |r| r.summary.downloads)
                )],
            }
        })
        .collect();
    plot::svg(
        "DCLOR draft, Appendix 2: download-time CDFs over the STIS model",
        &panels,
    )
}
