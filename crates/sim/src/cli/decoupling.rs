//! `taroc reproduce decoupling`: Wang & Kung's suites 1 and 2, the fairness cases and the
//! decoupling socket with each header-compression codec, on the simulator; a table (or JSON
//! lines) on standard output, and with `--out` the records and plots beside the paper's points.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::output::Exit;
use super::study::{self, Command, Destination};
use crate::studies::decoupling::{Decoupling, Effort, Options};

/// The arguments of `taroc reproduce decoupling`.
#[derive(Debug, Clone, Args)]
pub struct DecouplingArgs {
    /// One seed, 10 simulated seconds per run, fewer BERs and RTTs (about a minute).
    #[arg(long)]
    pub quick: bool,
    /// One JSON record per line instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write records.json and the plots (SVG, PNG) of suites 1 and 2 into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl Command for Decoupling {
    const NAME: &'static str = "taroc reproduce decoupling";
    const PNG_SCALE: f32 = 1.5;
}

/// Runs the study.
pub fn run_decoupling(
    args: &DecouplingArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> Exit {
    let effort = if args.quick {
        Effort::QUICK
    } else {
        Effort::FULL
    };
    let to = Destination {
        json: args.json,
        check: false,
        out: args.out.clone(),
        png: true,
    };
    let options = Options { effort, threads: 0 };
    study::run::<Decoupling>(Ok(options), &to, out, err, progress)
}
