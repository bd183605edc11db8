//! The `taroc` program; everything lives in the `taroc_cli` library. Exit status: 0 done, 1 a
//! failure, 2 a bad command line (see [`taroc_cli::cli::Exit`]).

use std::io::{stderr, stdout, IsTerminal};
use std::process::ExitCode;

use clap::Parser;
use taroc_cli::cli::{run_eval, run_twice, Cli, Command, Exit};
use taroc_cli::completions;
use taroc_sim::cli::{run_mat, run_sim, run_study};

fn main() -> ExitCode {
    let progress = stderr().is_terminal();
    let (out, err) = (&mut stdout(), &mut stderr());
    let exit = match Cli::parse().command {
        Command::Eval(args) => run_eval(&args, &mut out.lock(), &mut err.lock(), progress),
        Command::Twice(args) => run_twice(&args, &mut out.lock(), &mut err.lock()),
        // The gateway prints from several threads: it locks nothing here.
        Command::Gateway(args) => return taroc_gateway::commands::run(*args),
        Command::Sim(args) => run_sim(&args, &mut out.lock(), &mut err.lock(), progress),
        Command::Reproduce(args) => run_study(&args, &mut out.lock(), &mut err.lock(), progress),
        Command::Mat(args) => run_mat(&args, &mut out.lock(), &mut err.lock()),
        Command::Completions(args) => Exit::of(completions::run_completions(
            &args,
            &mut out.lock(),
            &mut err.lock(),
        )),
        Command::Man(args) => Exit::of(completions::run_man(
            &args,
            &mut out.lock(),
            &mut err.lock(),
        )),
    };
    ExitCode::from(exit.code())
}
