//! The `taroc` command-line program, as a library so tests can drive it.
//!
//! `taroc eval` runs packet captures through every header-compression scheme over a simulated
//! link and reports header bytes, losses and correctness (see [`cli::EvalArgs`]).
//!
//! Modules: [`capture`] reads pcap/pcapng files and takes IP packets out of link frames;
//! [`impair`] holds the impairment models; [`eval`] is the harness and its oracle; [`report`]
//! prints tables and JSON; [`twice`] is the loss-repair analysis of the twice algorithm; [`cli`] is
//! the command line; [`completions`] generates its shell completions and manual pages.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod capture;
pub mod cli;
pub mod completions;
pub mod eval;
pub mod gateway;
pub mod impair;
pub mod report;
pub mod timing;
pub mod twice;

/// The capture `taroc eval` runs on when given no file: the first 250 records of a real IPv4 bulk
/// transfer (see `data/README.md`).
pub const BUILTIN_CAPTURE: &[u8] = include_bytes!("../data/default_bulk_v4.pcap");

/// The name reports give [`BUILTIN_CAPTURE`].
pub const BUILTIN_CAPTURE_NAME: &str = "built-in:default_bulk_v4";
