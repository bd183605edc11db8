//! The `taroc` program; everything lives in the `taroc_cli` library.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use taroc_cli::cli::{run_eval, run_twice, Cli, Command};
use taroc_cli::completions;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Eval(args) => {
            let progress = std::io::stderr().is_terminal();
            let stdout = std::io::stdout();
            let stderr = std::io::stderr();
            if run_eval(&args, &mut stdout.lock(), &mut stderr.lock(), progress) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Twice(args) => {
            let stdout = std::io::stdout();
            let stderr = std::io::stderr();
            if run_twice(&args, &mut stdout.lock(), &mut stderr.lock()) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Gateway(args) => taroc_gateway::args::run(*args),
        Command::Sim(args) => {
            let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
            if taroc_sim::cli::run_sim(&args, &mut stdout.lock(), &mut stderr.lock()) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Reproduce(args) => {
            let progress = std::io::stderr().is_terminal();
            let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
            if taroc_sim::cli::run_reproduce(
                &args,
                &mut stdout.lock(),
                &mut stderr.lock(),
                progress,
            ) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Completions(args) => {
            let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
            let written =
                completions::run_completions(&args, &mut stdout.lock(), &mut stderr.lock());
            if written {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Man(args) => {
            let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
            let written = completions::run_man(&args, &mut stdout.lock(), &mut stderr.lock());
            if written {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
