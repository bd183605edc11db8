//! `taroc reproduce dclor`: the DCLOR draft's evaluation over the STIS model, every timeout
//! response, ours beside the draft's Tables 3–6, its claims checked, CSV/JSON/CDF plots.

use std::io::Write;

use clap::Args;
use taroc_core::variant::Variant;

use super::output::{scheme_names, Exit};
use super::study::{self, Command, StudyOutput};
use crate::studies::dclor::{Dclor, StudyConfig, StudyOptions};
use crate::tcp::timeout::ResponseKind;

/// The help of `taroc reproduce dclor --schemes`, listing every scheme from the code.
fn schemes_help() -> String {
    format!(
        "Header-compression schemes on the radio link, comma-separated, each run over the whole \
         study [default: no codec at all]; any of {}",
        scheme_names()
    )
}
const ABOUT: &str = "\
Reproduce the DCLOR draft's Appendix 2 (draft-swami-tsvwg-tcp-dclor-00): the Table 2 traffic \
mix (5 KB x 6 connections x 2000 downloads, 10 KB x 5 x 1000, 100 KB x 5 x 100, and 1000 KB x 3 \
x 10 and 10000 KB x 1 x 1 as background load) through the STIS box of Table 1 (shared 74 KB \
buffer, 50 kbit/s, 200 ms, stalls of 5 s / 8 s entered with probability 0.05 / 0.005 per \
second, 12% of packets reordered by 20 ms), once per timeout response (standard, dclor, eifel, \
eifel-4015, frto; all with SACK loss recovery). Prints each response's download-time mean and \
variance, spectral efficiency and timeouts (all, spurious by the simulator's ground truth, and \
declared spurious by the response) beside the draft's Tables 3-6, and checks the draft's claims \
(--check: a failed claim makes the exit status 1). Writes dclor.csv, dclor.json and \
dclor-cdf.svg (+ .png unless --no-png) into --out. --quick: a tenth of Table 2's iterations. \
The run ends when the measured sizes (5, 10, 100 KB) have finished; readings of what the draft \
leaves open are in docs/dclor-interpretations.md and settable below. A second table scores \
detection per timeout: each timeout's ground-truth label against the response's decision (true \
and false detections), and why spurious ones went undetected (the download ended before an ACK \
of everything sent came back, the first ACK acknowledged everything sent, other). --schemes runs the whole study once per \
header-compression scheme, with one compressor/decompressor pair per direction of the radio \
link (shared by every connection), compressing as each packet starts serialisation; it adds a \
table of context damage (intact frames refused) and incorrect deliveries (rebuilt packets that \
differ from the original) per scheme and response, and the draft's claims are checked on the \
first scheme.";

/// The arguments of `taroc reproduce dclor`.
#[derive(Debug, Clone, Args)]
#[command(long_about = ABOUT)]
pub struct DclorArgs {
    /// A tenth of Table 2's iterations (about 10 s on 2 cores).
    #[arg(long)]
    pub quick: bool,
    /// Divide Table 2's iterations by N (at least one download per connection; --quick is 10).
    #[arg(long, value_name = "N")]
    pub scale_down: Option<u32>,
    /// Responses to run, comma-separated [default: standard,dclor,eifel,eifel-4015,frto].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub responses: Option<Vec<String>>,
    /// Header-compression schemes on the radio link (see `--help` for the list).
    #[arg(long, value_name = "LIST", value_delimiter = ',', help = schemes_help())]
    pub schemes: Option<Vec<String>>,
    /// Seeds per response (each a whole run of the mix).
    #[arg(long, default_value_t = 1)]
    pub seeds: u32,
    /// Threads, output form, claims check and output directory.
    #[command(flatten)]
    pub output: StudyOutput,
    /// A kilobyte is 1024 bytes (file sizes and the buffer) instead of 1000.
    #[arg(long)]
    pub kib: bool,
    /// All connections share one 50 kbit/s link per direction (default: each connection's
    /// logical queue drains at 50 kbit/s).
    #[arg(long)]
    pub shared_rate: bool,
    /// Stalls hold only the data direction (default: both directions).
    #[arg(long)]
    pub downlink_stalls_only: bool,
    /// Probability that a packet is reordered [default: 0.12].
    #[arg(long)]
    pub reorder: Option<f64>,
    /// Initial window, segments (RFC 2414/3390 for MSS 1460).
    #[arg(long, default_value_t = 3)]
    pub iw: u32,
    /// Receiver window, bytes.
    #[arg(long, default_value_t = 65535)]
    pub rwnd: u64,
    /// Minimum RTO, ms.
    #[arg(long, default_value_t = 200)]
    pub min_rto_ms: u64,
    /// Longest random wait before each download, seconds (uniform from 0).
    #[arg(long, default_value_t = 2.0)]
    pub max_wait_s: f64,
}

impl DclorArgs {
    /// The study these arguments ask for, checked (an error is a usage error).
    pub fn options(&self) -> Result<StudyOptions, String> {
        let responses = match &self.responses {
            None => ResponseKind::ALL.to_vec(),
            Some(list) => list
                .iter()
                .map(|s| s.trim().parse())
                .collect::<Result<Vec<_>, _>>()?,
        };
        if responses.is_empty() {
            return Err("--responses: give at least one response".into());
        }
        let schemes = match &self.schemes {
            None => vec![None],
            Some(list) => list
                .iter()
                .map(|s| Variant::parse(s.trim()).map(Some))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("--schemes: {e}"))?,
        };
        if schemes.is_empty() {
            return Err("--schemes: give at least one scheme".into());
        }
        if self.seeds == 0 {
            return Err("--seeds must be at least 1".into());
        }
        if self.iw == 0 || self.rwnd < 1500 {
            return Err("--iw must be at least 1 and --rwnd at least 1500 bytes".into());
        }
        if !(self.max_wait_s >= 0.0 && self.max_wait_s <= 3600.0) {
            return Err(format!(
                "--max-wait-s must be between 0 and 3600, got {}",
                self.max_wait_s
            ));
        }
        let divisor = match self.scale_down {
            Some(0) => return Err("--scale-down must be at least 1".into()),
            Some(n) => n,
            None if self.quick => 10,
            None => 1,
        };
        let mut base = StudyConfig::draft(ResponseKind::Standard, divisor, 1);
        if self.kib {
            base.kb = 1024;
            base.stis.buffer_bytes = 74 * 1024;
        }
        base.stis.shared_rate = self.shared_rate;
        base.stis.stall_uplink = !self.downlink_stalls_only;
        if let Some(p) = self.reorder {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("--reorder must be between 0 and 1, got {p}"));
            }
            base.stis.reorder_p = p;
        }
        base.initial_window = self.iw;
        base.rwnd_bytes = self.rwnd;
        base.min_rto_ms = self.min_rto_ms;
        base.max_wait_s = self.max_wait_s;
        Ok(StudyOptions {
            responses,
            schemes,
            seeds: self.seeds,
            threads: self.output.threads,
            base,
        })
    }
}

impl Command for Dclor {
    const NAME: &'static str = "taroc reproduce dclor";
}

/// Runs `taroc reproduce dclor`.
pub fn run_dclor(
    args: &DclorArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> Exit {
    let to = args.output.destination();
    study::run::<Dclor>(args.options(), &to, out, err, progress)
}
