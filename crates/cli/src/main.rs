//! The `taroc` program; everything lives in the `taroc_cli` library. Exit status: 0 done, 1 a
//! failure, 2 a bad command line (see [`taroc_cli::cli::Exit`]). Results that cannot be written
//! to standard output are a failure, whatever the command (quietly for a broken pipe).

use std::io::{stderr, stdout, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use taroc_cli::cli::{run_eval, run_twice, Cli, Command, Exit};
use taroc_cli::completions;
use taroc_sim::cli::{output_failed, run_mat, run_sim, run_study, CheckedOutput};

fn main() -> ExitCode {
    // `taroc gateway --config FILE`: the file's options, put on the command line.
    let args = match taroc_gateway::config_file::expand(std::env::args_os().collect()) {
        Ok(args) => args,
        Err(e) => {
            let _ = writeln!(stderr(), "taroc gateway: {e}");
            return ExitCode::from(2);
        }
    };
    let command = match Cli::try_parse_from(args) {
        Ok(cli) => cli.command,
        Err(error) => return ExitCode::from(clap_exit(&error)),
    };
    let progress = stderr().is_terminal();
    let exit = match command {
        Command::Eval(args) => {
            checked("taroc eval", |out, err| run_eval(&args, out, err, progress))
        }
        Command::Twice(args) => checked("taroc twice", |out, err| run_twice(&args, out, err)),
        // The gateway prints from several threads: it locks nothing here, and checks its own
        // writes.
        Command::Gateway(args) => return taroc_cli::gateway::run(*args),
        Command::Sim(args) => checked("taroc sim", |out, err| run_sim(&args, out, err, progress)),
        Command::Reproduce(args) => checked("taroc reproduce", |out, err| {
            run_study(&args, out, err, progress)
        }),
        Command::Mat(args) => checked("taroc mat", |out, err| run_mat(&args, out, err)),
        Command::Completions(args) => checked("taroc completions", |out, err| {
            Exit::of(completions::run_completions(&args, out, err))
        }),
        Command::Man(args) => checked("taroc man", |out, err| {
            Exit::of(completions::run_man(&args, out, err))
        }),
    };
    ExitCode::from(exit.code())
}

/// Runs the command `name` with standard output (checked: see [`CheckedOutput`]) and standard
/// error locked.
fn checked(name: &str, run: impl FnOnce(&mut dyn Write, &mut dyn Write) -> Exit) -> Exit {
    let mut out = CheckedOutput::new(stdout().lock());
    let err = &mut stderr().lock();
    let exit = run(&mut out, err);
    out.finish(name, exit, err)
}

/// What clap's error `error` ends with: its message, or the help or version it carries, printed
/// (help and version on standard output); 1 if they could not be written, else clap's status.
fn clap_exit(error: &clap::Error) -> u8 {
    let printed = error.print().and_then(|()| stdout().flush());
    match printed {
        Err(e) if !error.use_stderr() => output_failed("taroc", &e, &mut stderr()).code(),
        _ => u8::try_from(error.exit_code()).unwrap_or(2),
    }
}
