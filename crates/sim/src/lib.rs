//! A deterministic packet-level discrete-event simulator that runs the real taroc codecs
//! (actual header bytes, actual checksum verification) under real TCP congestion control, and
//! reproduces the seeds' evaluations: Appendix B of the TAROC draft, the DCLOR draft's
//! spurious-timeout study, Wang & Kung's TCP decoupling and Degermark et al.'s low-loss
//! header compression.
//!
//! The kernel knows no study: [`event`] (the event queue), [`link`] (bandwidth, delay, bit
//! errors), [`queue`] (DropTail, RED, header-first), [`tcp`] (senders, receiver, packets),
//! [`net`] (nodes, links whose codecs are `taroc_core::LinkEnd`s, the event loop, and the
//! [`net::Observer`] hooks a study watches a run through), [`tunnel`] (IP-in-IP), [`outage`]
//! (how long a flow stays broken), [`thin`] (bounded traces), and the topologies: [`scenario`]
//! (the draft's fixed host, router and mobile host, every knob a field) and [`topology`]
//! (multi-flow dumbbells, whose hosts the caller makes).
//!
//! Above it, [`studies`]: each published evaluation in one shape ([`studies::Study`]: its runs,
//! claims, tables and plots), and the accuracy of TAROC's window tracking; beside them the tools
//! they draw with, [`plot`] (SVG charts) and [`progress`] (a progress bar). On top,
//! [`builtins`] (the scenarios by name) and [`cli`] (the commands).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod builtins;
pub mod cli;
pub mod event;
pub mod link;
pub mod net;
pub mod outage;
pub mod plot;
pub mod progress;
pub mod queue;
pub mod scenario;
pub mod studies;
pub mod tcp;
pub mod thin;
pub mod topology;
pub mod tunnel;
