//! The command line of `taroc gateway`: a running gateway's options (from `taroc-gateway`) and
//! the subcommands that measure one (from `taroc-lab`), joined here so neither crate knows the
//! other's half.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use taroc_gateway::args::{RunArgs, GATEWAY_ABOUT, GENKEY_ABOUT};
use taroc_gateway::commands::{exit_status, genkey, run_gateway};
use taroc_lab::about::{BENCH_ABOUT, TRANSFER_ABOUT};
use taroc_lab::args::{BenchArgs, TransferArgs};
use taroc_lab::commands::{run_bench, run_transfer};
use taroc_lab::resume::{self, ResumeArgs, RESUME_ABOUT};

/// The arguments of `taroc gateway`.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true, long_about = GATEWAY_ABOUT)]
pub struct GatewayArgs {
    /// Measure instead of running a gateway.
    #[command(subcommand)]
    pub command: Option<GatewayCommand>,

    /// The gateway's settings.
    #[command(flatten)]
    pub run: RunArgs,
}

/// The subcommands of `taroc gateway`.
#[derive(Debug, Clone, Subcommand)]
pub enum GatewayCommand {
    /// Measure goodput per scheme over a grid of link settings, or forwarding speed.
    #[command(long_about = BENCH_ABOUT)]
    Bench(BenchArgs),
    /// Send or receive a checked TCP byte stream (to test a link through gateways).
    #[command(long_about = TRANSFER_ABOUT)]
    Transfer(TransferArgs),
    /// Print a new key for the authenticated link (--key FILE).
    #[command(long_about = GENKEY_ABOUT)]
    Genkey,
    /// Disturb transfers through two UDP gateways (restarts, loss bursts, forged frames) and
    /// measure how long each scheme takes to resume.
    #[command(long_about = RESUME_ABOUT)]
    Resume(ResumeArgs),
}

/// Runs `taroc gateway`: a gateway, or one of its subcommands; the exit status says how it
/// ended (see [`exit_status`]).
pub fn run(args: GatewayArgs) -> ExitCode {
    exit_status(match args.command {
        Some(GatewayCommand::Bench(bench)) => run_bench(&bench),
        Some(GatewayCommand::Transfer(transfer)) => run_transfer(&transfer),
        Some(GatewayCommand::Genkey) => genkey(),
        Some(GatewayCommand::Resume(args)) => resume::run(&args),
        None => run_gateway(&args.run),
    })
}

#[cfg(test)]
mod tests;
