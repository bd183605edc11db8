//! The `taroc sim`, `taroc reproduce` and `taroc mat` subcommands: clap arguments and runners,
//! so the CLI crate only adds an enum variant and a dispatch arm.
//!
//! Every command ends by [`Exit`]'s rule; `taroc sim` runs one scenario ([`run_sim`]);
//! `taroc reproduce` picks a study ([`run_study`]), whose subcommand turns its options into a
//! run of the one driver every study shares (the `study` module: options and output directory
//! checked, runs, report or JSON Lines, files and plots, claims); `taroc mat` prints Wang &
//! Kung's analysis ([`run_mat`]).

mod appendix_b;
mod dclor;
mod decoupling;
mod lowloss;
mod mat;
mod output;
mod reproduce;
mod sim;
mod study;

pub use appendix_b::{run_reproduce, ReproduceArgs};
pub use dclor::{run_dclor, DclorArgs};
pub use decoupling::{run_decoupling, DecouplingArgs};
pub use lowloss::{run_low_loss, LowLossArgs};
pub use mat::{run_mat, MatArgs, MAT_ABOUT};
pub use output::{output_failed, scheme_names, CheckedOutput, Exit};
pub use reproduce::{run_study, ReproduceCommand, StudyCommand};
pub use sim::{run_sim, sim_scenario, SimArgs, MAX_SCENARIO_BYTES};
pub use study::StudyOutput;
