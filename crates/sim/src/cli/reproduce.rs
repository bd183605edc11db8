//! `taroc reproduce [STUDY]`: which published evaluation to reproduce. Each study is a
//! subcommand with its own options; without one, `taroc reproduce` runs the TAROC draft's
//! Appendix B with the options given (`taroc reproduce --quick` = `taroc reproduce appendix-b
//! --quick`).

use std::io::Write;

use clap::{Args, Subcommand};

use super::appendix_b::{run_reproduce, ReproduceArgs};
use super::dclor::{run_dclor, DclorArgs};
use super::decoupling::{run_decoupling, DecouplingArgs};
use super::lowloss::{run_low_loss, LowLossArgs};
use super::output::Exit;

/// The arguments of `taroc reproduce`: a study, or Appendix B's options.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ReproduceCommand {
    /// The study to reproduce (default: appendix-b).
    #[command(subcommand)]
    pub study: Option<StudyCommand>,
    /// Appendix B's options, when no study is named.
    #[command(flatten)]
    pub appendix_b: ReproduceArgs,
}

/// A published evaluation `taroc reproduce` can run.
#[derive(Debug, Clone, Subcommand)]
pub enum StudyCommand {
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
        Some(StudyCommand::AppendixB(args)) => run_reproduce(args, out, err, progress),
        Some(StudyCommand::Dclor(args)) => run_dclor(args, out, err, progress),
        Some(StudyCommand::LowLoss(args)) => run_low_loss(args, out, err, progress),
        Some(StudyCommand::Decoupling(args)) => run_decoupling(args, out, err, progress),
    }
}
