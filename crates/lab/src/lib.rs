//! The lab of the taroc gateway: everything that measures and disturbs it, apart from the data
//! path it measures (the `taroc-gateway` crate, which knows nothing of this one).
//!
//! - [`harness`] builds two network namespaces around the gateway (one gateway on the emulated
//!   link, or two over UDP, an emulated serial line or a veth pair) and runs real kernel TCP
//!   transfers ([`transfer`]) and one-byte request/echo exchanges ([`echo`]) through it;
//! - [`line_emulator`] is a serial line between two ptys at a baud rate (8N1), with seeded bit
//!   errors, garbage and outages;
//! - [`mod@bench`] measures goodput over a grid of link settings, forwarding speed, serial
//!   lines and the transports side by side (cells run a few at a time by [`jobs`]);
//! - [`relay`] stands between two UDP gateways to [`disturb`] a transfer (gateway restarts,
//!   loss bursts, frames [`forge`]d), and [`resume`] measures how each scheme recovers;
//! - [`args`] and [`commands`] are the command lines of `taroc gateway bench`, `transfer` and
//!   `resume`.
//!
//! ## Dependencies, and why
//! Those of the gateway (`clap`, `serde`, `rand_chacha`, `nix` for the ptys' raw mode, `libc`
//! for a TCP socket's unsent bytes (`SIOCOUTQNSD`) and a pty's non-blocking mode), and
//! `indicatif` for the progress bars of long benchmarks.
#![warn(missing_docs)]

pub mod about;
pub mod args;
pub mod bench;
pub mod commands;
pub mod disturb;
pub mod echo;
pub mod forge;
pub mod harness;
pub mod jobs;
pub mod line_emulator;
pub mod relay;
pub mod resume;
pub mod transfer;
