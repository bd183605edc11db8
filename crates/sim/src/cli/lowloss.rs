//! `taroc reproduce low-loss`: Degermark et al.'s evaluation — the analytic figures computed,
//! the Modem and WLAN figures simulated with the real codecs, the paper's claims checked, the
//! JSON and plots written to `--out`.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::output::{scheme_names, Exit};
use super::study::{self, Command, StudyOutput};
use crate::studies::lowloss::{runs, Claim, LowLoss};

const ABOUT: &str = "\
Reproduce the evaluation of Degermark et al., \"Low-loss TCP/IP header compression for wireless \
networks\". Prints the analytic results (Figure 4's 1.4 bits, Figure 5, section 3.5's loss \
reductions of 52/30/68/45%, Figure 13's table) beside the paper's, then simulates Figure 9's \
Modem (14.4 kbit/s) and WLAN (2 Mbit/s, RTT 220 ms) topologies with 512-byte segments in \
tunnelled IPv6 (100 bytes of headers) through the real codecs: Figures 10 and 11 (Modem, BER 2e-7 \
and 2e-6), 12, 14 and 18 (WLAN, 2e-7) and 19 (WLAN, BER 1e-9 to 1e-4), every scheme of \
--schemes, several seeds each on all cores. The paper's \"VJ header compression\" is our \
iphc-plain, twice is iphc-twice, twice + header request is iphc, ideal lossless compression is \
ideal-5. Checks the paper's claims (--check: a failed claim exits 1). Writes low-loss.json and \
plots (delivered segments against time and BER, the analytic figures; SVG and PNG) into --out, \
checked writable first. Default: 3 seeds of 500 s; --quick: 2 seeds of 200 s and three BERs of \
Figure 19. --json prints JSON Lines, one record per figure, scheme and BER (study, figure, \
topology, scheme, ber, goodput_bytes_per_s, delivered_segments, seeds, ...).";

/// The help of `--schemes`, listing every scheme from the code.
fn schemes_help() -> String {
    format!(
        "Schemes to run, comma-separated, each once [default: {}]; any of {}, ideal and ideal-N \
         (an ideal lossless header of N bytes)",
        runs::DEFAULT_SCHEMES.join(","),
        scheme_names()
    )
}

/// The arguments of `taroc reproduce low-loss`.
#[derive(Debug, Clone, Args)]
#[command(long_about = ABOUT)]
pub struct LowLossArgs {
    /// 2 seeds of 200 s and Figure 19 at three BERs (1e-8, 2e-7, 1e-5).
    #[arg(long)]
    pub quick: bool,
    /// Seeds per cell (overrides the mode's).
    #[arg(long)]
    pub seeds: Option<u32>,
    /// Simulated seconds per run (overrides the mode's; the paper's: 500).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Schemes to run (see `--help` for the list).
    #[arg(long, value_name = "LIST", value_delimiter = ',', help = schemes_help())]
    pub schemes: Option<Vec<String>>,
    /// Threads, output form, claims check and output directory.
    #[command(flatten)]
    pub output: StudyOutput,
}

impl LowLossArgs {
    /// The study these arguments ask for, checked (an error is a usage error).
    pub fn options(&self) -> Result<runs::Options, String> {
        let mut o = if self.quick {
            runs::Options::quick()
        } else {
            runs::Options::full()
        };
        if let Some(s) = self.seeds {
            o.seeds = s;
        }
        if let Some(d) = self.duration {
            o.duration_s = d;
        }
        if let Some(s) = &self.schemes {
            o.schemes = s.iter().map(|s| s.trim().to_string()).collect();
        }
        o.threads = self.output.threads;
        o.check()?;
        Ok(o)
    }
}

impl Command for LowLoss {
    const NAME: &'static str = "taroc reproduce low-loss";

    fn written(dir: &Path, _png: bool) -> Option<String> {
        Some(format!("JSON and plots in {}", dir.display()))
    }

    fn png_failed(error: String) -> String {
        format!("PNG plots: {error} (--no-png skips them)")
    }

    fn check_failed(failed: usize, _claims: &[Claim], _json: bool) -> String {
        format!(
            "taroc reproduce low-loss: --check: {failed} of the paper's claims fail on our results\n"
        )
    }
}

/// Runs `taroc reproduce low-loss`: the report (or JSON Lines) to `out`, errors to `err`, a
/// progress bar on standard error if `progress`.
pub fn run_low_loss(
    args: &LowLossArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> Exit {
    let to = args.output.destination();
    study::run::<LowLoss>(args.options(), &to, out, err, progress)
}
