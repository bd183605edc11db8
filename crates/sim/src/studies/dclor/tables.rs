//! The study's tables: our figures beside the draft's Tables 3–6, the detection and codec
//! tables, the report printed, and the records (JSON Lines, CSV).

use std::fmt::Write as _;

use serde::Serialize;

use super::claims::Claim;
use super::radio::CodecStats;
use super::runs::{draft_figures, StudyResult};

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

/// The report: the tables, what the runs simulated, and the draft's claims.
pub fn report(result: &StudyResult, claims: &[Claim]) -> String {
    let mut out = table(result);
    let _ = writeln!(
        out,
        "\nDetection per timeout (label vs decision; spurious timeouts missed because: \
         the download ended before the ACK of all sent, the first ACK acknowledged all sent, other):"
    );
    out += &detection_table(result);
    let codec = codec_table(result);
    if !codec.is_empty() {
        let _ = writeln!(
            out,
            "\nHeader compression on the radio link (full %: frames with a whole \
             header; wire %: frame bytes over packet bytes; damage: intact frames refused, data: of those on the data direction; incorrect: delivered packets that \
             differ from the original; mean download times):"
        );
        out += &codec;
    }
    let _ = writeln!(
        out,
        "\nSimulated {:.0} s per response; {} packets dropped by the shared buffer; {} events.",
        result.sim_seconds, result.stis_drops, result.events
    );
    let _ = writeln!(out, "\nThe draft's claims:");
    for c in claims {
        let verdict = match c.holds {
            Some(true) => "holds",
            Some(false) => "FAILS",
            None => "not checked",
        };
        let _ = writeln!(out, "  [{verdict}] {}: {}", c.claim, c.detail);
    }
    out
}
