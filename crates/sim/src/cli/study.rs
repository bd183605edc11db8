//! `taroc reproduce [STUDY]`: which published evaluation to reproduce. Each study is a
//! subcommand with its own options; without one, `taroc reproduce` runs the TAROC draft's
//! Appendix B with the options given (`taroc reproduce --quick` = `taroc reproduce appendix-b
//! --quick`).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::dclor::{run_dclor, DclorArgs};
use super::decoupling::{run_decoupling, DecouplingArgs};
use super::lowloss::{run_low_loss, LowLossArgs};
use super::reproduce::{run_reproduce, ReproduceArgs};
use super::Exit;

/// The arguments of `taroc reproduce`: a study, or Appendix B's options.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ReproduceCommand {
    /// The study to reproduce (default: appendix-b).
    #[command(subcommand)]
    pub study: Option<Study>,
    /// Appendix B's options, when no study is named.
    #[command(flatten)]
    pub appendix_b: ReproduceArgs,
}

/// A published evaluation `taroc reproduce` can run.
#[derive(Debug, Clone, Subcommand)]
pub enum Study {
    /// The TAROC draft's Appendix B tables (the default study).
    AppendixB(ReproduceArgs),
    /// The DCLOR draft's Appendix 2: spurious-timeout responses over the STIS stall model.
    Dclor(DclorArgs),
    /// Degermark et al.'s low-loss header compression: Figures 4-6, 10-14, 18, 19.
    LowLoss(LowLossArgs),
    /// Wang & Kung's TCP decoupling: suites 1 and 2, fairness, codecs on the lossy hop.
    Decoupling(DecouplingArgs),
}

/// Runs the study `command` names (Appendix B if none): results to `out`, errors to `err`, a
/// progress bar on standard error if `progress`.
pub fn run_study(
    command: &ReproduceCommand,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> Exit {
    match &command.study {
        None => run_reproduce(&command.appendix_b, out, err, progress),
        Some(Study::AppendixB(args)) => run_reproduce(args, out, err, progress),
        Some(Study::Dclor(args)) => run_dclor(args, out, err, progress),
        Some(Study::LowLoss(args)) => run_low_loss(args, out, err, progress),
        Some(Study::Decoupling(args)) => run_decoupling(args, out, err, progress),
    }
}

/// The options the simulated studies share: worker threads, the output's form, the claims
/// check and where the files go (flattened into each study's arguments).
#[derive(Debug, Clone, Args)]
pub struct StudyOutput {
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print JSON Lines (one record per line, see above) instead of the table or report.
    #[arg(long)]
    pub json: bool,
    /// Exit with status 1 if any of the study's claims fails (a claim whose schemes did not
    /// run is reported "not checked" and does not fail).
    #[arg(long)]
    pub check: bool,
    /// Directory for the study's CSV, JSON and plots (created if needed; checked writable
    /// before the run).
    #[arg(long, default_value = "sim-results")]
    pub out: PathBuf,
    /// Write the plots as SVG only. By default each plot is also rendered to a PNG beside
    /// its SVG (1800 pixels wide), with a font installed on the system (e.g. Debian's
    /// fonts-dejavu-core).
    #[arg(long)]
    pub no_png: bool,
}

/// Writes `records` as JSON Lines: one object per line, as every study's `--json` prints them.
pub fn write_json_lines<T: serde::Serialize>(
    out: &mut dyn Write,
    records: &[T],
) -> std::io::Result<()> {
    records.iter().try_for_each(|r| {
        let line = serde_json::to_string(r).map_err(std::io::Error::other)?;
        writeln!(out, "{line}")
    })
}
